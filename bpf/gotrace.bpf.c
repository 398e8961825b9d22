// SPDX-License-Identifier: GPL-2.0
/*
 * The one BPF program of gotrace. Every uprobe runs it; the uprobe's BPF
 * cookie selects a fetch plan (struct gt_plan, written by gotrace-record)
 * that says which registers and stack slots to read. Nothing here knows Go
 * beyond what the plan says.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "gotrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Plans, indexed by the uprobe cookie (the probe's slot); gotrace-record
 * writes them through a mapping of the map, not a syscall each. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);   /* set to the number of probes at load */
	__type(key, __u32);
	__type(value, struct gt_plan);
} plans SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);  /* resized by gotrace-record */
} events SEC(".maps");

/* Events lost because the ring buffer was full, per probe slot and CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);   /* set to the number of probes at load */
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/* Events a rate limit suppressed, per probe slot and CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);   /* set to the number of probes at load */
	__type(key, __u32);
	__type(value, __u64);
} suppressed SEC(".maps");

/* Rate limit state per probe slot: one-second window and its count. */
struct rate_state {
	__u64 window;      /* start of the window, ns */
	__u64 count;       /* events kept in it */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);   /* set to the number of probes at load */
	__type(key, __u32);
	__type(value, struct rate_state);
} rates SEC(".maps");

/*
 * Processes whose exit gotrace-record wants to know of: tgid -> 1. A
 * process is put here by its first probe hit (and the targets named on
 * the command line by gotrace-record), and taken out by its exit; LRU, so
 * that it never fills up (a process pushed out is noticed by polling).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} watched SEC(".maps");

/*
 * Processes that gotrace-record attached uprobes for by their pid: tgid
 * -> 1, put here by gotrace-record as it attaches and taken out by their
 * exit. An exec from a thread other than the first in one of them stops
 * it until its probes are attached again (on_process_exec()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} execs SEC(".maps");

/*
 * Per-CPU scratch record of a hit with bytes (strings, memory, a stack):
 * assembled here, then copied out, as its size is known only at the end.
 * A hit of register and stack words only is written in place in the ring
 * buffer instead (send_words()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gt_event);
} scratch SEC(".maps");

/* What the probe program keeps per CPU between hits (never sent). */
struct cpu_state {
	__u32 since_wakeup;  /* records since the recorder was last woken */
	__u32 watched_tgid;  /* the process this CPU last put in `watched` */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} cpu_states SEC(".maps");

/*
 * Value of a pt_regs register. Each case loads at a constant offset and
 * the barrier keeps clang from merging the loads into one ctx+variable
 * load, which the verifier rejects ("dereference of modified ctx ptr").
 * The registers a plan names are x86-64's (enum gt_reg); those libbpf's
 * PT_REGS macros name go through them, the rest are x86 pt_regs fields.
 */
#define REG_CASE(id, expr) \
	case id: v = (expr); barrier_var(v); break

#if defined(__TARGET_ARCH_x86)
#define GO_G_REG(regs) ((regs)->r14)   /* g in ABIInternal code */

static __always_inline __u64 reg_value(struct pt_regs *regs, __u8 reg)
{
	__u64 v = 0;

	switch (reg) {
	REG_CASE(GT_REG_RAX, PT_REGS_RC(regs));
	REG_CASE(GT_REG_RBX, regs->bx);
	REG_CASE(GT_REG_RCX, PT_REGS_PARM4(regs));
	REG_CASE(GT_REG_RDX, PT_REGS_PARM3(regs));
	REG_CASE(GT_REG_RSI, PT_REGS_PARM2(regs));
	REG_CASE(GT_REG_RDI, PT_REGS_PARM1(regs));
	REG_CASE(GT_REG_RBP, PT_REGS_FP(regs));
	REG_CASE(GT_REG_RSP, PT_REGS_SP(regs));
	REG_CASE(GT_REG_R8, PT_REGS_PARM5(regs));
	REG_CASE(GT_REG_R9, regs->r9);
	REG_CASE(GT_REG_R10, regs->r10);
	REG_CASE(GT_REG_R11, regs->r11);
	REG_CASE(GT_REG_R12, regs->r12);
	REG_CASE(GT_REG_R13, regs->r13);
	REG_CASE(GT_REG_R14, regs->r14);
	REG_CASE(GT_REG_R15, regs->r15);
	REG_CASE(GT_REG_RIP, PT_REGS_IP(regs));
	}
	return v;
}
#else
#error "gotrace's fetch plans name x86-64 registers; build with __TARGET_ARCH_x86"
#endif

/* Reads the word described by src (register, or src->size bytes at
 * SP + off), zero-extended; returns 0 or a negative error. */
static __always_inline int read_src(struct pt_regs *regs,
				    const struct gt_src *src, __u8 flags,
				    __u64 *out)
{
	__u64 v = 0;

	if (src->loc == GT_LOC_REG) {
		v = reg_value(regs, src->reg);
	} else if (src->loc == GT_LOC_STACK) {
		__u64 n = src->size;

		barrier_var(n);
		if (n > 8 || !n)
			n = 8;
		if (bpf_probe_read_user(&v, n,
					(void *)(PT_REGS_SP(regs) + (long)src->off)))
			return -1;
	} else {
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * i386's g: the 4-byte word at -4(GS) (Go's src/runtime/sys_linux_386.s,
 * setldt(): the TLS descriptor's base is 4 past g's slot, since go1.0 and
 * in go1.27). GS selects a TLS entry of the thread's GDT, entry * 8 + 3,
 * whose descriptor the kernel keeps in thread.tls_array[entry -
 * GDT_ENTRY_TLS_MIN] (12 on x86-64 kernels, arch/x86/include/asm/
 * segment.h) and its selector in thread.gsindex (saved at each switch
 * away from the thread; a thread inherits its creator's). A thread that
 * loaded GS itself and has not been switched away since (the main
 * thread, early) has none saved yet: its entry is then the first TLS
 * one, which Go's set_thread_area(-1) gets (and glibc's, under cgo).
 * 0 when unknown.
 */
static __always_inline __u64 read_g32(struct task_struct *task)
{
	__u32 idx = (__u32)(task->thread.gsindex >> 3) - 12;
	__u8 d[8];
	__u32 g = 0, base;

	if (idx >= 3)
		idx = 0;
	if (bpf_probe_read_kernel(d, sizeof(d), &task->thread.tls_array[idx]))
		return 0;
	/* struct desc_struct: base0 in bytes 2-3, base1 in 4, base2 in 7 */
	base = d[2] | d[3] << 8 | d[4] << 16 | (__u32)d[7] << 24;
	if (!base || bpf_probe_read_user(&g, sizeof(g), (void *)(unsigned long)(base - 4)))
		return 0;
	return g;
}

/* The hit's g as plan->goid_mode says where it is (read_goid()); 0 when
 * unknown. */
static __always_inline __u64 read_g(struct pt_regs *regs, const struct gt_plan *plan,
				    struct task_struct *task)
{
	__u64 g = 0;

	if (plan->goid_mode == GT_GOID_R14)
		return GO_G_REG(regs);
	if (plan->goid_mode == GT_GOID_GS32)
		return read_g32(task);
	if (plan->goid_mode != GT_GOID_TLS ||
	    bpf_probe_read_user(&g, sizeof(g), (void *)(task->thread.fsbase - 8)))
		return 0;
	return g;
}

/*
 * The goroutine id of g (read_g(): from R14 in ABIInternal code, from
 * the word below the thread's fsbase in ABI0 code and cgo, or at -4(GS)
 * on i386), the goid at g + goid_off
 * (runtime.g.goid, record/gofacts.c). The one user memory read every hit
 * pays: a per-CPU (g -> goid) cache would be wrong, since a g freed by an
 * exited goroutine is handed to a new one with a new goid
 * (runtime/proc.go, newproc1() through gfget()), and nothing but reading
 * g tells that it happened.
 */
static __always_inline __u64 read_goid(__u64 g, const struct gt_plan *plan)
{
	__u64 goid = 0;

	/* goid's offset unknown: the g address stands for the goroutine
	 * (unique among live goroutines; stacks move, g does not) */
	if (plan->goid_off < 0)
		return g;
	if (!g || bpf_probe_read_user(&goid, sizeof(goid),
				      (void *)(g + plan->goid_off)))
		return 0;
	return goid;
}

/* Reads `size` (1..8) bytes of user memory at addr, zero-extended. */
static __always_inline int read_user_word(__u64 addr, __u8 size, __u64 *out)
{
	__u64 v = 0, n = size;

	barrier_var(n);
	if (n > 8 || !n)
		n = 8;
	if (bpf_probe_read_user(&v, n, (void *)addr))
		return -1;
	*out = v;
	return 0;
}

static __always_inline __u64 extend(__u64 v, __u8 size, __u8 flags)
{
	switch (size) {
	case 1:
		return (flags & GT_F_SIGNED) ? (__u64)(__s64)(__s8)v : (__u8)v;
	case 2:
		return (flags & GT_F_SIGNED) ? (__u64)(__s64)(__s16)v : (__u16)v;
	case 4:
		return (flags & GT_F_SIGNED) ? (__u64)(__s64)(__s32)v : (__u32)v;
	}
	return v;
}

/*
 * Appends up to `want` bytes at user address `src` to ev->data at dlen,
 * as a __u16 count and the bytes; returns the new dlen.
 */
static __always_inline __u32 append_bytes(struct gt_event *ev, __u32 dlen,
					  __u64 src, __u64 want, int *bad)
{
	__u64 n = want, off;

	/* No room left even for the count: no entry at all (the recorder
	 * reads a missing entry as no bytes). Writing one here would wrap
	 * to the start of the tail (off below) over the first entry. */
	if (dlen + 2 > GT_TAIL_MAX)
		return dlen;
	if (dlen + 2 + n > GT_TAIL_MAX)
		n = dlen + 2 < GT_TAIL_MAX ? GT_TAIL_MAX - dlen - 2 : 0;
	/* Re-check after the barrier: the verifier needs the bound on the
	 * very register passed to the helper. */
	barrier_var(n);
	if (n > GT_STR_MAX)
		n = GT_STR_MAX;
	off = dlen & (GT_TAIL_MAX - 1);
	if (n && bpf_probe_read_user(&ev->data[off + 2], n, (void *)src)) {
		/* A page not faulted in yet (a constant never touched): the
		 * length was read, the bytes were not. Leave their address
		 * (GT_DATA_ADDR) for the recorder to read from the file's
		 * mapping, where there is room for it; else nothing. */
		if (dlen + 2 + 8 > GT_TAIL_MAX) {
			n = 0;
			*bad = 1;
		} else {
			for (int k = 0; k < 8; k++)
				ev->data[off + 2 + k] = (src >> (8 * k)) & 0xff;
			n = 8;
			ev->data[off] = n;
			ev->data[off + 1] = GT_DATA_ADDR >> 8;
			return dlen + 2 + n;
		}
	}
	ev->data[off] = n & 0xff;
	ev->data[off + 1] = n >> 8;
	return dlen + 2 + n;
}

/*
 * Runs fetch `i` of `plan` into ev->slots[i] (and bytes at ev->data[dlen]);
 * returns the new dlen. Pointers followed and a string's or slice's
 * (ptr, len) in memory are words of the plan's word_size (8, or 4 for an
 * i386 program). A global (non-inlined) function is verified once,
 * not once per loop iteration and value range, which keeps the main
 * program far from the verifier's complexity limit.
 */
__noinline int fetch_one(struct pt_regs *regs, struct gt_event *ev,
			 const struct gt_plan *plan, __u32 i, __u32 dlen)
{
	const struct gt_fetch *f;
	__u64 v = 0, addr = 0, len = 0;
	int k, bad = 0;
	__u8 word;

	if (!regs || !ev || !plan)
		return dlen;
	word = plan->word_size == 4 ? 4 : 8;
	i &= GT_MAX_FETCH - 1;
	f = &plan->fetch[i];
	if (f->op == GT_OP_NONE) {
		ev->unavail |= 1u << i;
		ev->slots[i] = 0;
		return dlen;
	}
	/* Root word, then the pointer chain. */
	bad = read_src(regs, &f->src, 0, &addr);
	for (k = 0; k < GT_MAX_DEREF; k++) {
		if (bad || k >= f->nderef)
			break;
		bad = !addr || read_user_word(addr + f->deref[k], word, &addr);
	}
	if (f->op == GT_OP_WORD) {
		if (bad)
			;
		else if (!addr && (f->flags & GT_F_NIL_ZERO))
			v = 0;
		else if (f->flags & GT_F_INDIRECT)
			bad = !addr || read_user_word(addr + f->mem_off, f->size, &v);
		else
			v = addr;
		v = extend(v, (f->flags & GT_F_INDIRECT) ? f->size : f->src.size,
			   f->flags);
	} else if (f->op == GT_OP_STRING) {
		__u64 ptr = addr;

		if (!bad && (f->flags & GT_F_INDIRECT))
			bad = !addr || read_user_word(addr + f->mem_off, word, &ptr) ||
			      read_user_word(addr + f->mem_off + word, word, &len);
		else if (!bad)
			bad = read_src(regs, &f->src2, 0, &len);
		if (bad)
			len = 0;
		v = len;
		{
			__u64 want = len, es = f->mem_size;

			if (es > GT_STR_MAX) {
				want = 0;   /* elements of unknown size */
			} else if (es > 1) {
				/* elements of a slice: whole ones only */
				want = len < GT_STR_MAX ? len * es : GT_STR_MAX;
				if (want > plan->str_max)
					want = plan->str_max;
				want -= want % es;
			} else if (want > plan->str_max) {
				want = plan->str_max;
			}
			dlen = append_bytes(ev, dlen, ptr, want, &bad);
		}
	} else if (f->op == GT_OP_MEM) {
		if (!bad && (f->flags & GT_F_INDIRECT))
			addr += f->mem_off;
		v = f->mem_size;
		dlen = append_bytes(ev, dlen, addr, bad ? 0 :
				    (f->mem_size < plan->str_max ? f->mem_size
								 : plan->str_max), &bad);
	} else {
		bad = 1;
	}
	if (bad)
		ev->unavail |= 1u << i;
	ev->slots[i] = v;
	return dlen;
}

/*
 * Whether the kernel's user stack walk adds the caller's return address
 * ([SP]) at a uprobe on push %rbp or endbr64, as Linux 6.10 and later do
 * (arch/x86/events/core.c, is_uprobe_at_func_entry()): 0 not known yet,
 * 1 yes, 2 no. Set from userspace by the kernel version, and corrected by
 * the first hit that tells.
 */
__u32 kernel_adds_entry_caller = 0;

/*
 * The kernel's walk in frames[1..n/8] is the whole stack: moved down to
 * frames[0..], at most GT_MAX_STACK - 1 frames. Returns its bytes.
 */
static __always_inline __u32 stack_as_walked(__u64 *frames, long n,
					     struct gt_event *ev)
{
	n /= 8;
	if (n > GT_MAX_STACK - 1)
		n = GT_MAX_STACK - 1;
	for (int i = 0; i < GT_MAX_STACK - 1; i++) {
		if (i >= n)
			break;
		frames[i] = frames[i + 1];
	}
	ev->nstack = n;
	return n * 8;
}

/*
 * User stack by frame pointers into the start of ev->data; returns its
 * bytes. In a function's body after its prologue (GT_P_FRAME_BP) the
 * kernel's walk from RBP is the stack as it is. Elsewhere (after the
 * entry's stack check, at a RET, in code of a function that keeps no
 * frame) the caller's return address is at [SP + ret_sp], not behind a
 * frame pointer, so a walk from RBP skips the caller: put it back as the
 * second frame, unless the kernel put it there itself (a probe on push
 * %rbp, GT_P_AT_PUSH_BP). Which of the two happened shows when [SP] and
 * [RBP+8] differ: the kernel's second frame is one of them. A 32-bit
 * program (GT_P_PTR32) has no frame pointers to walk: the probed
 * instruction and its caller; a body of unknown frame (GT_P_IP_ONLY) the
 * probed instruction alone.
 */
static __always_inline __u32 read_stack(struct pt_regs *regs,
					const struct gt_plan *plan,
					struct gt_event *ev)
{
	__u64 *frames = (__u64 *)ev->data, ret = 0, up = 0;
	long n;

	n = bpf_get_stack(regs, &frames[1], (GT_MAX_STACK - 1) * 8,
			  BPF_F_USER_STACK);
	if (n < 8)
		return 0;
	if (plan->flags & (GT_P_FRAME_BP | GT_P_IP_ONLY))
		return stack_as_walked(frames, plan->flags & GT_P_IP_ONLY ? 8 : n, ev);
	if (bpf_probe_read_user(&ret, sizeof(ret),
				(void *)(PT_REGS_SP(regs) + plan->ret_sp)))
		ret = 0;
	if (plan->flags & GT_P_PTR32) {
		frames[0] = frames[1];
		frames[1] = ret & 0xffffffffu;
		ev->nstack = 2;
		return 16;
	}
	if (plan->flags & GT_P_AT_PUSH_BP) {
		if (n >= 16 && ret &&
		    !bpf_probe_read_user(&up, sizeof(up), (void *)(PT_REGS_FP(regs) + 8)) &&
		    up != ret)
			kernel_adds_entry_caller = frames[2] == ret ? 1 : 2;
		if (kernel_adds_entry_caller == 1)
			return stack_as_walked(frames, n, ev);
	}
	frames[0] = frames[1];   /* the probed instruction */
	frames[1] = ret;
	n = n / 8 + 1;
	if (n > GT_MAX_STACK)
		n = GT_MAX_STACK;
	ev->nstack = n;
	return n * 8;
}

/* Whether the predicates of `plan` hold for `slots` (GT_MAX_FETCH of
 * them), `unavail` flagging those not read. */
static __always_inline int preds_hold(const struct gt_plan *plan,
				      const __u64 *slots, __u32 unavail)
{
	int k;

	for (k = 0; k < GT_MAX_PRED; k++) {
		const struct gt_pred *p = &plan->pred[k];
		__u64 v;

		if (k >= plan->npred)
			break;
		v = slots[p->slot & (GT_MAX_FETCH - 1)];
		if (unavail & (1u << (p->slot & (GT_MAX_FETCH - 1))))
			return 0;   /* an unreadable value matches nothing */
		if (!gt_pred_holds(p, v))
			return 0;
	}
	return 1;
}

/* Counts an event of plan slot `slot` left out by its rate limit (or, an
 * entry of whole calls, because its call could not be noted:
 * calls.bpf.h). */
static __always_inline void count_suppressed(__u32 slot)
{
	__u64 *sup = bpf_map_lookup_elem(&suppressed, &slot);

	if (sup)
		*sup += 1;
}

/*
 * Per-probe rate limit: at most plan->rate events in each one-second
 * window; the rest are counted in `suppressed`. Windows are shared by all
 * CPUs, updated without locks (a few events of slack at a boundary).
 */
static __always_inline int rate_allows(const struct gt_plan *plan, __u32 slot,
				       __u64 now)
{
	struct rate_state *st;

	if (!plan->rate)
		return 1;
	st = bpf_map_lookup_elem(&rates, &slot);
	if (!st)
		return 1;
	if (now - st->window >= 1000000000ull) {
		st->window = now;
		st->count = 0;
	}
	if (__sync_fetch_and_add(&st->count, 1) < plan->rate)
		return 1;
	count_suppressed(slot);
	return 0;
}

/* Records a CPU sends before it wakes the recorder (a power of two). */
const volatile __u32 wakeup_every = 1024;
/* 1: the exit tracepoint is loaded; probe hits put their process in
 * `watched`. */
const volatile __u32 watch_exits = 0;

/* The recorder's pid namespace (the device and inode of its
 * /proc/self/ns/pid, the kernel's dev_t) when it is not the initial one;
 * 0: the initial one, whose ids are the kernel's own. */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

/*
 * The current thread's ids, tgid << 32 | thread id, as gotrace-record's
 * pid namespace numbers them (its getpid(), its /proc), the ids every
 * record and map carries; 0 for a thread outside that namespace (its
 * parent's, or one nested in it), which the recording leaves alone.
 */
static __always_inline __u64 ns_ids(void)
{
	struct bpf_pidns_info ns = {};

	if (!pidns_ino)
		return bpf_get_current_pid_tgid();
	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)))
		return 0;
	return (__u64)ns.tgid << 32 | ns.pid;
}

/* The process id of `task`, the current thread, as ns_ids() says. */
static __always_inline __u32 ns_tgid(const struct task_struct *task)
{
	return pidns_ino ? ns_ids() >> 32 : task->tgid;
}

/* One probe hit: what its record carries besides the values, taken once. */
struct hit {
	struct pt_regs *regs;
	const struct gt_plan *plan;
	struct task_struct *task;  /* the current thread */
	struct cpu_state *st;
	__u64 cookie;              /* plan slot, site << 32 */
	__u64 ts;                  /* bpf_ktime_get_ns() */
	__u64 g;                   /* read_g(), 0: none */
	__u64 goid;
	__u32 nslots;              /* slots read */
	__u32 unavail;             /* bit i: slot i could not be read */
};

#include "calls.bpf.h"

/*
 * Whether hit `h` is kept, its predicates having held (`held`; a plan
 * without any: 1): a return of whole calls when its call's entry was,
 * anything else when its predicates held and its rate limit lets it go.
 * An entry of whole calls notes a call it keeps, and forgets the note a
 * call before it at the same place may have left.
 */
static __always_inline int hit_kept(const struct hit *h, int held)
{
	const __u32 slot = (__u32)h->cookie;
	int kept;

	if (h->plan->flags & GT_P_CALL_FOLLOW)
		return call_taken(h);
	kept = held && rate_allows(h->plan, slot, h->ts);
	if (!(h->plan->flags & GT_P_CALL_MARK))
		return kept;
	if (!kept) {
		call_forget(h);
		return 0;
	}
	if (call_note(h))
		return 1;
	count_suppressed(slot);   /* unnoted, its return would be left out */
	return 0;
}

/*
 * Wakes the recorder once every wakeup_every records of this CPU: a
 * wakeup per record costs more than the record, and the recorder also
 * drains the buffer on a timer. A per-CPU counter costs less than asking
 * the ring buffer how full it is.
 */
static __always_inline __u64 wakeup_flags(struct cpu_state *st)
{
	return (++st->since_wakeup & (wakeup_every - 1)) == 0
		       ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* Counts a record of plan slot `slot` the full ring buffer refused. */
static __always_inline void count_drop(__u32 slot)
{
	__u64 *d = bpf_map_lookup_elem(&drops, &slot);

	if (d)
		*d += 1;
}

/*
 * Fills the header of record `ev`: all but nslots, data_len, unavail and
 * nstack, for a hit of `plan` at time `ts` (ns) by goroutine `goid` of
 * `task`, sent by the uprobe of `cookie` (its site in the high half).
 * The ids and the thread's name are read from the task itself, not
 * through helpers: the name is the kernel's 16 bytes, NUL-padded
 * (set_task_comm(), fs/exec.c), as bpf_get_current_comm() gives it, and
 * current on every hit. Both paths use it (put_header(), fast_hit()).
 */
static __always_inline void fill_header(struct gt_event *ev, const struct gt_plan *plan,
					__u64 ts, __u64 goid, const struct task_struct *task,
					__u64 cookie, const struct pt_regs *regs)
{
	ev->type = GT_REC_EVENT;
	ev->probe_id = plan->probe_id;
	ev->ts_ns = ts;
	if (pidns_ino) {
		__u64 ids = ns_ids();

		ev->pid = ids >> 32;
		ev->tid = (__u32)ids;
	} else {
		ev->pid = task->tgid;
		ev->tid = task->pid;
	}
	ev->goid = goid;
	*(__u64 *)&ev->comm[0] = *(__u64 *)&task->comm[0];
	*(__u64 *)&ev->comm[8] = *(__u64 *)&task->comm[8];
	ev->cpu = bpf_get_smp_processor_id();
	ev->site = cookie >> 32;
	ev->ip = PT_REGS_IP(regs);
}

/* Fills the header of record `ev` from hit `h` (fill_header()). */
static __always_inline void put_header(struct gt_event *ev, const struct hit *h)
{
	fill_header(ev, h->plan, h->ts, h->goid, h->task, h->cookie, h->regs);
}

/* Reads the words of a GT_P_WORDS plan into slots[] (GT_MAX_FETCH of
 * them), as fetch_one() would. */
static __always_inline void read_words(struct hit *h, __u64 *slots)
{
	const struct gt_plan *plan = h->plan;
	__u32 i;

	for (i = 0; i < GT_MAX_FETCH; i++) {
		const struct gt_fetch *f = &plan->fetch[i];
		__u64 v = 0;

		if (i >= plan->nfetch)
			break;
		if (f->op != GT_OP_WORD || read_src(h->regs, &f->src, 0, &v))
			h->unavail |= 1u << i;
		slots[i] = extend(v, f->src.size, f->flags);
	}
	h->nslots = i;
}

/*
 * Sends hit `h` and its slots as a record of the header and `cap` slots
 * (a constant: the verifier wants a reservation's size known), written in
 * place in the ring buffer: no scratch copy, no other CPU's or task's
 * hit in between.
 */
static __always_inline void send_words(const struct hit *h, const __u64 *slots,
				       const __u32 cap)
{
	struct gt_event *ev = bpf_ringbuf_reserve(&events,
						  GT_EVENT_HDR_SIZE + 8 * cap, 0);
	__u32 i;

	if (!ev) {
		count_drop((__u32)h->cookie);
		return;
	}
	put_header(ev, h);
	ev->nslots = h->nslots;
	ev->data_len = 0;
	ev->unavail = h->unavail;
	ev->nstack = 0;
	for (i = 0; i < cap; i++)
		ev->slots[i] = i < h->nslots ? slots[i] : 0;
	bpf_ringbuf_submit(ev, wakeup_flags(h->st));
}

/*
 * Sends hit `h` of a plan with bytes (strings, memory, a stack): its
 * record is assembled in the per-CPU scratch record, then the part in use
 * copied out.
 */
static __always_inline int send_bytes(struct hit *h)
{
	const struct gt_plan *plan = h->plan;
	__u32 zero = 0, dlen = 0, i;
	struct gt_event *ev;
	__u64 size;

	ev = bpf_map_lookup_elem(&scratch, &zero);
	if (!ev)
		return 0;
	put_header(ev, h);
	ev->unavail = 0;
	ev->nstack = 0;
	if (plan->flags & GT_P_STACK)
		dlen = read_stack(h->regs, plan, ev);
	for (i = 0; i < GT_MAX_FETCH; i++) {
		const struct gt_fetch *f;

		if (i >= plan->nfetch)
			break;
		/* a register as it is (most arguments of ABIInternal code):
		 * here, without a call to fetch_one() */
		f = &plan->fetch[i];
		if (f->op == GT_OP_WORD && f->src.loc == GT_LOC_REG && !f->nderef &&
		    !(f->flags & GT_F_INDIRECT)) {
			ev->slots[i] = extend(reg_value(h->regs, f->src.reg),
					      f->src.size, f->flags);
			continue;
		}
		dlen = fetch_one(h->regs, ev, plan, i, dlen);
	}
	ev->nslots = i;
	ev->data_len = dlen;
	if (!hit_kept(h, !plan->npred || preds_hold(plan, ev->slots, ev->unavail)))
		return 0;
	/* Without bytes, only the slots in use leave the kernel. */
	size = dlen ? GT_EVENT_HDR_SIZE + sizeof(ev->slots) + dlen
		    : GT_EVENT_HDR_SIZE + 8 * (i & (GT_MAX_FETCH * 2 - 1));
	if (size > sizeof(*ev))
		size = sizeof(*ev);
	if (bpf_ringbuf_output(&events, ev, size, wakeup_flags(h->st)))
		count_drop((__u32)h->cookie);
	return 0;
}

/* Puts process `tgid` in `watched`, once per process and CPU in a row
 * (st->watched_tgid): a hash update costs more than the check. */
static __noinline void watch(struct cpu_state *st, __u32 tgid)
{
	__u8 one = 1;

	if (!st)
		return;
	bpf_map_update_elem(&watched, &tgid, &one, BPF_NOEXIST);
	st->watched_tgid = tgid;
}

/* The body of gotrace_probe(): a hit of `plan`, in plan slot `slot`
 * (the cookie's low half). */
static __noinline int probe_hit(struct pt_regs *regs, const struct gt_plan *plan,
				__u64 cookie)
{
	__u64 slots[GT_MAX_FETCH] = {};
	struct hit h = {};
	__u32 zero = 0;

	if (!regs || !plan)
		return 0;
	h.regs = regs;
	h.cookie = cookie;
	h.plan = plan;
	h.st = bpf_map_lookup_elem(&cpu_states, &zero);
	if (!h.st)
		return 0;
	h.task = bpf_get_current_task_btf();
	if (watch_exits && h.st->watched_tgid != ns_tgid(h.task))
		watch(h.st, ns_tgid(h.task));
	h.ts = bpf_ktime_get_ns();
	h.g = read_g(regs, h.plan, h.task);
	h.goid = read_goid(h.g, h.plan);
	if (!(h.plan->flags & GT_P_WORDS))
		return send_bytes(&h);

	/* Words only: the size is known, the record is written in place,
	 * after the predicates and the rate limit let it go. */
	read_words(&h, slots);
	if (!hit_kept(&h, !h.plan->npred || preds_hold(h.plan, slots, h.unavail)))
		return 0;
	if (h.nslots == 0)
		send_words(&h, slots, 0);
	else if (h.nslots <= 2)
		send_words(&h, slots, 2);
	else if (h.nslots <= 4)
		send_words(&h, slots, 4);
	else if (h.nslots <= 8)
		send_words(&h, slots, 8);
	else
		send_words(&h, slots, GT_MAX_FETCH);
	return 0;
}

/*
 * A hit of a GT_P_FAST plan (at most GT_FAST_WORDS words in registers,
 * no predicate, no rate limit, g in R14 if any: most probes of Go
 * functions of the register ABI), sent by the uprobe of `cookie` as a
 * record of `cap` slots, taken at `ts` (ns) by goroutine `goid`: the same
 * record and the same side effects as probe_hit() (exit watch, drops,
 * batched wakeups) with a frame of a few bytes (48). The task and the
 * CPU state are asked for where they are used rather than kept, so that
 * few values live across the helper calls. The cookie is kept rather
 * than asked for again: 6 ns less a hit (Linux 6.18, 8 interleaved runs).
 */
static __always_inline int fast_hit(struct pt_regs *regs, const struct gt_plan *plan,
				    __u64 ts, __u64 goid, __u64 cookie, const __u32 cap)
{
	struct gt_event *ev = bpf_ringbuf_reserve(&events, GT_EVENT_HDR_SIZE + 8 * cap, 0);
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 zero = 0, i, unavail = 0;
	struct cpu_state *st;

	if (!ev) {
		count_drop((__u32)cookie);
		/* a process whose hits all meet a full buffer still has its
		 * exit watched */
		st = bpf_map_lookup_elem(&cpu_states, &zero);
		if (st && watch_exits && st->watched_tgid != ns_tgid(task))
			watch(st, ns_tgid(task));
		return 0;
	}
	fill_header(ev, plan, ts, goid, task, cookie, regs);
	for (i = 0; i < cap; i++) {
		const struct gt_fetch *f = &plan->fetch[i];

		ev->slots[i] = 0;
		if (i >= plan->nfetch)
			continue;
		if (f->op == GT_OP_WORD)
			ev->slots[i] = extend(reg_value(regs, f->src.reg), f->src.size,
					      f->flags);
		else
			unavail |= 1u << i;
	}
	ev->nslots = plan->nfetch;
	ev->data_len = 0;
	ev->unavail = unavail;
	ev->nstack = 0;
	st = bpf_map_lookup_elem(&cpu_states, &zero);
	if (!st) {
		bpf_ringbuf_submit(ev, BPF_RB_NO_WAKEUP);
		return 0;
	}
	if (watch_exits && st->watched_tgid != ev->pid)
		watch(st, ev->pid);
	bpf_ringbuf_submit(ev, wakeup_flags(st));
	return 0;
}

/*
 * Every uprobe's program: its cookie selects the plan. A GT_P_FAST plan
 * is recorded here (fast_hit()), any other in probe_hit(), a function of
 * its own: its frame (the slots, struct hit: about 200 bytes) kept out
 * of this one, whose stays a few bytes. Together they cost about 60 ns
 * less a hit than one function did (Linux 6.18,
 * tests/bench/capture_bench.py).
 */
SEC("uprobe")
int gotrace_probe(struct pt_regs *regs)
{
	__u64 cookie = bpf_get_attach_cookie(regs);
	__u32 slot = (__u32)cookie;
	const struct gt_plan *plan = bpf_map_lookup_elem(&plans, &slot);

	if (!plan)
		return 0;
	/* a process gotrace-record cannot see (nor tell from its own) */
	if (pidns_ino && !ns_ids())
		return 0;
	if (plan->flags & GT_P_THEN) {
		__u64 then = plan->then_cookie;

		probe_hit(regs, plan, cookie);
		slot = (__u32)then;
		plan = bpf_map_lookup_elem(&plans, &slot);
		return plan ? probe_hit(regs, plan, then) : 0;
	}
	if (plan->flags & GT_P_FAST) {
		__u64 goid = 0, ts = bpf_ktime_get_ns();

		/* read_goid() of GT_GOID_R14 (a GT_P_FAST plan's goid_mode
		 * is that or none), here where goid can live on the stack */
		if (plan->goid_mode == GT_GOID_R14) {
			if (plan->goid_off < 0)
				goid = GO_G_REG(regs);
			else if (GO_G_REG(regs) &&
				 bpf_probe_read_user(&goid, sizeof(goid),
						     (void *)(GO_G_REG(regs) + plan->goid_off)))
				goid = 0;
		}
		/* a record of 2 or 4 slots, as probe_hit() sends */
		if (plan->nfetch <= 2)
			return fast_hit(regs, plan, ts, goid, cookie, 2);
		return fast_hit(regs, plan, ts, goid, cookie, GT_FAST_WORDS);
	}
	return probe_hit(regs, plan, cookie);
}

#include "process.bpf.h"
