/* SPDX-License-Identifier: MIT */
/*
 * Types shared by the BPF program (gotrace.bpf.c) and gotrace-record: the
 * per-probe fetch plan and the raw event record sent through the ring
 * buffer. Kept free of libc and kernel headers so both sides include it.
 */
#ifndef GOTRACE_BPF_H
#define GOTRACE_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define GT_MAX_FETCH 16      /* fetches (captured values) per probe */
#define GT_STR_MAX 512       /* hard cap of captured bytes per string */
#define GT_DATA_MAX 2048     /* bytes of string data per event */
#define GT_MAX_STACK 127     /* user stack frames per event */
#define GT_TAIL_MAX 4096     /* stack + string data: a power of two */
#define GT_MAX_PROBES 65536  /* entries of the plan map */

/* Where a value lives. */
enum gt_loc {
	GT_LOC_NONE = 0,   /* not readable by a uprobe (e.g. XMM register) */
	GT_LOC_REG = 1,    /* pt_regs register */
	GT_LOC_STACK = 2,  /* user memory at SP + offset, read at probe time */
};

/* x86-64 pt_regs registers, in the order gotrace names them. */
enum gt_reg {
	GT_REG_RAX = 0, GT_REG_RBX, GT_REG_RCX, GT_REG_RDX, GT_REG_RSI,
	GT_REG_RDI, GT_REG_RBP, GT_REG_RSP, GT_REG_R8, GT_REG_R9, GT_REG_R10,
	GT_REG_R11, GT_REG_R12, GT_REG_R13, GT_REG_R14, GT_REG_R15,
	GT_REG_RIP, GT_REG_COUNT,
};

/* Operation of one fetch. */
enum gt_op {
	GT_OP_NONE = 0,    /* value unavailable: emits 0, flagged */
	GT_OP_WORD = 1,    /* a word: slot = value */
	GT_OP_STRING = 2,  /* (ptr, len): slot = len, min(len, str_max)
			      bytes appended to data; a slice of elements of
			      mem_size (> 1) bytes: min(len * mem_size,
			      str_max) rounded down to whole elements */
	GT_OP_MEM = 3,     /* `mem_size` bytes at an address ($ptr):
			      slot = mem_size, min(mem_size, str_max) bytes
			      appended to data */
};

/* Flags of a fetch. */
#define GT_F_SIGNED 1      /* sign-extend a value narrower than 8 bytes */
#define GT_F_INDIRECT 2    /* the value is in memory: after the deref
			      chain, read at address + mem_off (a string's
			      ptr at +mem_off and len at +mem_off+word, each
			      a word: the plan's word_size) */

#define GT_F_NIL_ZERO 4    /* a nil address on the way reads as 0, not
			      as unavailable (nil interfaces) */

#define GT_MAX_DEREF 4     /* pointers followed per fetch */

/* Source location of one word. */
struct gt_src {
	__u8 loc;          /* enum gt_loc */
	__u8 reg;          /* enum gt_reg, for GT_LOC_REG */
	__u8 size;         /* 1, 2, 4, 8 */
	__u8 pad;
	__s32 off;         /* GT_LOC_STACK: bytes from SP */
};

/*
 * One captured value. The root word comes from `src`; then, for each of
 * the `nderef` steps, addr = the word (the plan's word_size bytes) at
 * addr + deref[k] (a pointer field followed); then the op reads the value
 * (directly, or at addr + mem_off when GT_F_INDIRECT).
 */
struct gt_fetch {
	__u8 op;           /* enum gt_op */
	__u8 flags;        /* GT_F_* */
	__u8 nderef;       /* <= GT_MAX_DEREF */
	__u8 size;         /* bytes of an indirect word: 1, 2, 4, 8 */
	struct gt_src src;  /* the value, or a string's data pointer */
	struct gt_src src2; /* a string's length (register form) */
	__s32 deref[GT_MAX_DEREF];
	__s32 mem_off;
	__u32 mem_size;    /* GT_OP_MEM: bytes wanted */
};

/* Goroutine id lookup of a plan. */
enum gt_goid {
	GT_GOID_NONE = 0,
	GT_GOID_R14 = 1,   /* g in R14 (amd64 register ABI) */
	GT_GOID_TLS = 2,   /* g at fsbase - 8 (amd64 ABI0, cgo) */
	GT_GOID_GS32 = 3,  /* g at gs base - 4, 4 bytes (i386) */
};

/* A record-time predicate: slot OP value, all joined by &&. */
#define GT_MAX_PRED 4

enum gt_cmp { GT_EQ = 0, GT_NE, GT_LT, GT_LE, GT_GT, GT_GE };

struct gt_pred {
	__u8 slot;         /* fetch whose 64-bit slot is compared */
	__u8 op;           /* enum gt_cmp */
	__u8 is_signed;    /* compare as signed 64-bit */
	__u8 pad[5];
	__u64 value;
};

/* Whether predicate `c` holds for slot value `v`: the one comparison of
 * the BPF program (preds_hold()) and of gotrace-record, which decides
 * those on constants when it plans (record/values.c, fold_preds()). */
static inline int gt_pred_holds(const struct gt_pred *c, __u64 v)
{
	const __s64 sv = (__s64)v, sc = (__s64)c->value;

	switch (c->op) {
	case GT_EQ: return v == c->value;
	case GT_NE: return v != c->value;
	case GT_LT: return c->is_signed ? sv < sc : v < c->value;
	case GT_LE: return c->is_signed ? sv <= sc : v <= c->value;
	case GT_GT: return c->is_signed ? sv > sc : v > c->value;
	case GT_GE: return c->is_signed ? sv >= sc : v >= c->value;
	}
	return 0;
}

/* What to capture at one probe, selected by the uprobe's BPF cookie. */
struct gt_plan {
	__u32 probe_id;
	__u32 kind;        /* enum gtr_kind: 0 entry, 1 return */
	__u32 nfetch;
	__u32 str_max;     /* captured bytes per string, <= GT_STR_MAX */
	__u32 goid_mode;   /* enum gt_goid */
	__s32 goid_off;    /* offset of goid in runtime.g; -1: take g's address */
	__u32 flags;       /* GT_P_* */
	__u32 npred;       /* predicates, all must hold (<= GT_MAX_PRED) */
	__u32 ret_sp;      /* GT_P_STACK without GT_P_FRAME_BP: bytes from SP
			      to the return address at the probed
			      instruction (0 at an entry) */
	__u32 word_size;   /* bytes of a word in the traced program's memory
			      (a pointer followed, a string's ptr and len):
			      8, or 4 on i386 (record/arch.c ptrsize) */
	__u64 rate;        /* events per second kept, 0: no limit */
	/* the fetches first: those of a plan of a few arguments share the
	 * header's cache lines, a cold miss each fewer per hit */
	struct gt_fetch fetch[GT_MAX_FETCH];
	struct gt_pred pred[GT_MAX_PRED];
	__u64 then_cookie; /* GT_P_THEN: the cookie (plan slot, site << 32) of
			      a return probe's uprobe at this very address,
			      whose hit this one's is followed by */
};

/* Flags of a plan. */
#define GT_P_STACK 1       /* capture the user stack */
#define GT_P_AT_PUSH_BP 2  /* the probed instruction is push %rbp or endbr64 */
#define GT_P_FRAME_BP 4    /* the probed instruction is in the body of a
			      function that set its frame pointer: the
			      walk from BP is the stack, [BP+8] the caller */
#define GT_P_PTR32 8       /* a 32-bit program (Go keeps no frame pointers
			      on 386): the stack is the probed instruction
			      and its 4-byte return address at ret_sp */
#define GT_P_IP_ONLY 16    /* in a body whose frame is not known (gccgo
			      code without a frame pointer): the probed
			      instruction alone */
/* Set by gotrace-record as it loads a plan (capture_set_plan()), from
 * the rest of it: */
#define GT_P_WORDS 32      /* every fetch is a word as it is, in a register
			      or a stack slot (no pointer followed, no
			      bytes) and no stack is taken: the record's
			      size is known before the values are read */
#define GT_P_FAST 64       /* GT_P_WORDS, at most GT_FAST_WORDS fetches,
			      all in registers, no predicate, no rate
			      limit, and g in R14 if any (not
			      GT_GOID_TLS): the BPF program's fast path */
#define GT_FAST_WORDS 4
#define GT_P_THEN 128      /* after this hit, the hit of then_cookie's plan:
			      a function's entry and a return at one address
			      (a body of one RET), in that order; two
			      uprobes there would run in an order the kernel
			      does not keep */

#define GT_P_CALL_MARK 256    /* an entry probe of whole calls (bpf/calls.bpf.h):
				 notes each call it keeps */
#define GT_P_CALL_FOLLOW 512  /* a return probe of whole calls: keeps the
				 returns of noted calls only, its own rate
				 limit aside; those it leaves out are not
				 counted (their entries are) */
#define GT_P_G_STACK 1024     /* gc code whose g is known (goid_mode):
				 runtime.g starts with its stack bounds, so
				 a call's depth is stack.hi - SP */

/* Ring buffer record types. */
enum gt_rec { GT_REC_EVENT = 1, GT_REC_EXIT = 2, GT_REC_EXEC = 3 };

/*
 * A watched process ended (its last thread exited), from the
 * sched_process_exit tracepoint. `code` is the kernel's task exit_code:
 * exit status << 8, or the terminating signal in the low 7 bits.
 */
struct gt_exit {
	__u32 type;        /* GT_REC_EXIT */
	__u32 pid;         /* the process (thread group) id */
	__u64 ts_ns;       /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 code;
	__u32 pad;
	char comm[16];     /* of its last thread */
};

/*
 * An exec the recorder must act on, from the sched_process_exec
 * tracepoint: a process of the BPF program's `execs` map exec'd from a
 * thread other than its first (old_tid != pid: its uprobes must be
 * attached again for `pid`), or a process of the followed tree exec'd
 * probed binary `bin` that is not attached for it yet (its uprobes must
 * be attached for `pid`), or both. `stopped`: the BPF program stopped it
 * (SIGSTOP) before its new image's first instruction, and gotrace-record
 * lets it go on (SIGCONT) once they are.
 */
struct gt_exec {
	__u32 type;        /* GT_REC_EXEC */
	__u32 pid;         /* the process (thread group) id */
	__u64 ts_ns;       /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 old_tid;     /* the thread that exec'd, by its id before */
	__u32 stopped;     /* 1: stopped, waiting for SIGCONT */
	__u32 bin;         /* the probed binary to attach, GT_NO_BIN: none */
	__u32 pad;
};

/* The binaries a followed process tree can exec and have attached, in a
 * 64-bit mask per process (struct gt_bin_key -> index < GT_MAX_BINS). */
#define GT_MAX_BINS 64
#define GT_NO_BIN 0xffffffffu

/* A probed binary by its inode number (the number only: see the `bins`
 * map, bpf/process.bpf.h). */
struct gt_bin_key {
	__u64 ino;
};

/*
 * One probe hit as it leaves the kernel: header, GT_MAX_FETCH 64-bit
 * slots, then `data_len` bytes of tail: first `nstack` 64-bit user stack
 * addresses (innermost first), then, for each GT_OP_STRING / GT_OP_MEM
 * fetch in order, a __u16 byte count followed by that many bytes; a count
 * with GT_DATA_ADDR set is instead followed by the 8-byte address of the
 * bytes, which the BPF program could not read (a page not faulted in).
 */
#define GT_DATA_ADDR 0x8000
struct gt_event {
	__u32 type;        /* enum gt_rec */
	__u32 probe_id;
	__u64 ts_ns;       /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid, tid;
	__u64 goid;
	char comm[16];
	__u16 nslots;
	__u16 data_len;    /* bytes of tail after the slots */
	__u32 unavail;     /* bit i set: slot i could not be read */
	__u16 nstack;      /* stack addresses at the start of the tail */
	__u16 cpu;
	__u32 site;        /* which uprobe of the probe fired (cookie >> 32) */
	__u64 ip;          /* address of the probed instruction */
	__u64 slots[GT_MAX_FETCH];
	/* slack past GT_TAIL_MAX keeps the verifier's bounds simple */
	__u8 data[GT_TAIL_MAX + GT_STR_MAX + 2];
};

#define GT_EVENT_HDR_SIZE ((unsigned long)&((struct gt_event *)0)->slots)

#endif /* GOTRACE_BPF_H */
