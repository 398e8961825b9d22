/* SPDX-License-Identifier: MIT */
/*
 * arch: what gotrace knows of each processor architecture, one struct
 * gt_arch per architecture in arch.c: the machine registers and their
 * names, the argument registers of Go's register ABI and of the C ABI
 * (gccgo), the pointer size, where g lives, the instruction-decoder hooks
 * that place uprobes (insn.c), and what this gotrace's BPF program does
 * for such programs. Capturing on a new architecture means filling its
 * struct (and the BPF side: record/values.c maps its registers to the
 * plan's). Go-version facts stay in gofacts.c. The bottom of inspection:
 * includes nothing of gobin, plan or BPF.
 */
#ifndef GOTRACE_ARCH_H
#define GOTRACE_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gofacts.h"

struct go_flow;          /* insn.h */

/* Architectures of Go programs gotrace knows (ELF e_machine). */
enum gobin_arch { GOBIN_AMD64 = 0, GOBIN_ARM64 = 1, GOBIN_386 = 2, GOBIN_ARCH_OTHER = 3 };

/*
 * A machine register of any architecture, where a piece of a value lives
 * (struct gobin_piece.mreg). Each architecture's registers are a range:
 * its integer registers, then its float registers.
 */
enum gobin_mreg {
	GOBIN_MREG_NONE = 0,
	/* x86-64 integer registers, in instruction-encoding order */
	GOBIN_MREG_RAX = 1, GOBIN_MREG_RCX, GOBIN_MREG_RDX, GOBIN_MREG_RBX,
	GOBIN_MREG_RSP, GOBIN_MREG_RBP, GOBIN_MREG_RSI, GOBIN_MREG_RDI,
	GOBIN_MREG_R8, GOBIN_MREG_R9, GOBIN_MREG_R10, GOBIN_MREG_R11,
	GOBIN_MREG_R12, GOBIN_MREG_R13, GOBIN_MREG_R14, GOBIN_MREG_R15,
	GOBIN_MREG_XMM0 = 17,     /* XMM0 .. XMM15: 17 .. 32 */
	GOBIN_MREG_ARM64_R0 = 33, /* R0 .. R30: 33 .. 63 */
	GOBIN_MREG_ARM64_F0 = 64, /* F0 .. F31: 64 .. 95 */
	GOBIN_MREG_COUNT = 96,
};

/* One architecture. Register lists hold enum gobin_mreg values. */
struct gt_arch {
	enum gobin_arch id;
	uint16_t elf_machine;   /* EM_* of its ELF files; 0: any other */
	const char *name;       /* "x86-64", "aarch64", "i386" (gtr_binary.arch) */
	const char *goarch;     /* "amd64", "arm64", "386" (GOARCH) */
	enum gofact_arch fact;  /* how gofacts.c keys its rows */
	int ptrsize;            /* bytes of a pointer; 0: as the ELF class says.
				 * Also the word of a probe's plan (struct
				 * gt_plan word_size): pointers followed,
				 * string and slice headers, interface words */

	/* Registers: integer ireg0 .. ireg0 + nireg - 1 named inames[],
	 * float freg0 .. freg0 + nfreg - 1 named fnames[] (which uprobes
	 * cannot read: pt_regs carries no FP state). */
	uint8_t ireg0, nireg, freg0, nfreg;
	const char *const *inames, *const *fnames;

	/* Go's register ABI (ABIInternal, src/cmd/compile/abi-internal.md):
	 * integer argument and result registers in assignment order, and
	 * float registers go_freg0 .. + go_nfreg - 1; go_nireg 0: none known. */
	const uint8_t *go_iregs;
	uint8_t go_nireg, go_freg0, go_nfreg;
	/* The register holding g in ABIInternal code (NONE: none). */
	uint8_t g_reg;
	/* Bytes a CALL leaves on the stack above the callee's SP at entry
	 * (the return address; 0 where it goes to a link register): the
	 * CFA, Go's DWARF frame base, is SP + the frame size at a pc
	 * (pclntab's pcsp) + ra_size (cmd/link/internal/ld/dwarf.go,
	 * writeframes, Go 1.19-1.27). */
	uint8_t ra_size;

	/* The platform C ABI (gccgo): integer argument registers in order
	 * (c_nireg 0: every argument on the stack in ptrsize slots), float
	 * registers c_freg0 .. + c_nfreg - 1, integer result registers. */
	const uint8_t *c_iregs;
	uint8_t c_nireg, c_freg0, c_nfreg;
	uint8_t c_ret[2];

	/* Instruction-decoder hooks (insn.c); NULL: this gotrace does not
	 * decode the architecture's code for that.
	 * prologue_skip: byte offset after gc's stack check (go_prologue_skip).
	 * ret_offsets: every RET of a function (go_ret_offsets).
	 * uprobe_ok: whether a uprobe may replace the first instruction.
	 * tls_unsafe: whether the first instruction must not carry a uprobe
	 *   for its thread-local storage access.
	 * at_push_bp: whether the kernel's user stack walk adds the caller
	 *   at a uprobe on the first instruction (GT_P_AT_PUSH_BP).
	 * sets_fp: whether a function's prologue sets a frame pointer
	 *   (go_insn_sets_fp; GT_P_FRAME_BP in its body).
	 * goid_from_code: goid's offset as runtime.goroutineheader reads it
	 *   (go_goid_offset_from_code).
	 * flow: a function's instructions, their branch targets and which
	 *   fall through (go_insn_flow). */
	uint32_t (*prologue_skip)(const uint8_t *code, size_t len, int regabi);
	int (*ret_offsets)(const uint8_t *code, size_t len, uint32_t *offs,
			   int max);
	bool (*uprobe_ok)(const uint8_t *code, size_t len);
	bool (*tls_unsafe)(const uint8_t *code, size_t len);
	bool (*at_push_bp)(const uint8_t *code, size_t len);
	bool (*sets_fp)(const uint8_t *code, size_t len);
	int (*goid_from_code)(const uint8_t *code, size_t len, uint64_t entry,
			      const uint64_t *print, int nprint, int regabi);
	int (*flow)(const uint8_t *code, size_t len, struct go_flow *out, int max);

	/* What this gotrace does for its programs: capture (its uprobes'
	 * registers are the BPF program's x86-64 pt_regs, which i386
	 * processes share) and goid (the BPF program finds g: in g_reg in
	 * ABIInternal code, in thread-local storage otherwise). */
	bool capture, goid;
};

/* The struct of architecture `a` (GOBIN_ARCH_OTHER's for unknown ones). */
const struct gt_arch *gt_arch_of(enum gobin_arch a);

/* The architecture of ELF e_machine `em` (EM_X86_64...), GOBIN_ARCH_OTHER
 * for one gotrace does not know. */
enum gobin_arch gt_arch_by_machine(uint16_t em);

/* "RAX", "X3", "R0", "F1" for an enum gobin_mreg; "" for none. */
const char *gt_arch_reg_name(unsigned mreg);

/* Whether `mreg` is an integer register (a uprobe can read it), not a
 * float register nor GOBIN_MREG_NONE. */
bool gt_arch_reg_is_int(unsigned mreg);

#endif /* GOTRACE_ARCH_H */
