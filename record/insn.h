/* SPDX-License-Identifier: MIT */
/*
 * Instruction-level facts of gc-compiled amd64 functions, decoded with
 * Zydis: where an entry uprobe goes (after the stack-bound check of the
 * prologue, so that a call that grows the stack, prologue ->
 * runtime.morestack -> back to the entry, is seen once) and where the
 * function returns (every RET, for return probes without uretprobes).
 */
#ifndef GOTRACE_INSN_H
#define GOTRACE_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Decodes the first instructions of a function (code[len], the bytes from
 * its entry) with Zydis and returns the byte offset from
 * the entry of the instruction that follows the prologue's conditional
 * jump to runtime.morestack: `CMP reg, [g+16]; JBE` (g in R14 in
 * ABIInternal code, loaded from TLS in ABI0 code). Returns 0 (probe at the
 * entry) when there is no stack check (NOSPLIT functions) or when an
 * instruction before it writes one of the register ABI's argument
 * registers (RAX, RBX, RCX, RDI, RSI, R8-R11) and `regabi` is set.
 * Source: Go src/cmd/internal/obj/x86/obj6.go, stacksplit().
 */
uint32_t go_prologue_skip(const uint8_t *code, size_t len, int regabi);

/* As go_prologue_skip, for 32-bit (i386, g.stackguard0 at g+8) or 64-bit
 * code: `bits` is 32 or 64. */
uint32_t go_prologue_skip_mode(const uint8_t *code, size_t len, int regabi,
			       int bits);

/*
 * Whether the first instruction of code[len] uses an FS or GS segment
 * override (Go's TLS access to g). Single-stepping such an instruction out
 * of line has been seen to crash i386 programs, so gotrace never puts a
 * uprobe on one. Undecodable code counts as prefixed.
 */
bool go_insn_segment_prefixed(const uint8_t *code, size_t len, int bits);

/*
 * Finds every RET instruction of a function's code (code[len], linear
 * sweep from the entry; Go puts no data in text, only INT3 padding) and
 * writes their byte offsets from the entry to offs[max]. Returns the
 * number found (may exceed max: only max are written), or -EINVAL when the
 * code cannot be decoded up to `len` (the offsets found before are kept).
 */
int go_ret_offsets(const uint8_t *code, size_t len, uint32_t *offs, int max);

/* go_ret_offsets() for code of `bits` 64 (x86-64) or 32 (i386). */
int go_ret_offsets_mode(const uint8_t *code, size_t len, int bits, uint32_t *offs,
			int max);

/* One instruction of a function as go_insn_flow() sweeps it. */
struct go_flow {
	uint32_t off;        /* bytes from the entry */
	uint32_t target;     /* a direct jump's or branch's target, bytes
				from the entry (past the function for a tail
				call); UINT32_MAX: none, or before the entry */
	bool falls;          /* control may go on to the next instruction
				(not JMP, RET, UD2, INT3) */
	bool indirect;       /* a JMP through a register or memory (a jump
				table) */
};

/*
 * The control flow of a function's code (code[len], linear sweep from the
 * entry, 64-bit): each instruction's offset, whether it falls through,
 * the target of a direct JMP or Jcc (calls return, so they fall
 * through), and which JMPs are indirect. Writes up to `max` to out[] and returns how
 * many there are, or -EINVAL when the code cannot be decoded to `len`.
 */
int go_insn_flow(const uint8_t *code, size_t len, struct go_flow *out, int max);

/*
 * Whether a uprobe can replace the first instruction of code[len]: not a
 * trap, interrupt, halt, undefined-instruction, system call or far
 * branch, which the kernel refuses to single-step or emulate (its x86
 * uprobe instruction tables, arch/x86/kernel/uprobes.c). Undecodable
 * code is not.
 */
bool go_insn_uprobe_ok(const uint8_t *code, size_t len, int bits);

/*
 * Whether the first instruction of code[len] (64-bit) is push %rbp or
 * endbr64: at a uprobe on one the kernel's user stack walk itself adds
 * the caller (Linux 6.10, arch/x86/events/core.c
 * is_uprobe_at_func_entry()), which the BPF side must know.
 */
bool go_insn_push_bp(const uint8_t *code, size_t len);

/*
 * Whether the prologue of the function at code[len] (64-bit: its first
 * 16 instructions, up to a branch) sets a frame pointer, push %rbp then
 * mov %rsp,%rbp (gc's, and GCC's with -fno-omit-frame-pointer, after a
 * split-stack check), so that in its body [RBP+8] is its return address.
 */
bool go_insn_sets_fp(const uint8_t *code, size_t len);

/*
 * The offset of goid in runtime.g as the code of runtime.goroutineheader
 * reads it (code[len] from its entry at address `entry`, amd64): it
 * prints "goroutine ", gp.goid first of all (src/runtime/traceback.go,
 * Go 1.16 to 1.27), so the argument of its first call of one of
 * print[nprint] (the addresses of runtime.printint and printuint) is
 * traced back, through register moves and stack spills, to a load
 * [gp+offset]. The argument is RAX with `regabi`, else [RSP]. Returns the
 * offset (64 to 511 bytes), -ENOENT when the code does not show it, or
 * -EINVAL when it cannot be decoded. Not reentrant.
 */
int go_goid_offset_from_code(const uint8_t *code, size_t len, uint64_t entry,
			     const uint64_t *print, int nprint, int regabi);

#endif /* GOTRACE_INSN_H */
