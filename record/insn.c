// SPDX-License-Identifier: MIT
/* Entry probe placement after Go's stack check; see insn.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "insn.h"

/* Register-ABI integer argument registers (Go abi-internal.md, amd64). */
static int is_arg_reg(ZydisRegister r)
{
	switch (ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r)) {
	case ZYDIS_REGISTER_RAX: case ZYDIS_REGISTER_RBX:
	case ZYDIS_REGISTER_RCX: case ZYDIS_REGISTER_RDI:
	case ZYDIS_REGISTER_RSI: case ZYDIS_REGISTER_R8:
	case ZYDIS_REGISTER_R9: case ZYDIS_REGISTER_R10:
	case ZYDIS_REGISTER_R11:
		return 1;
	default:
		return 0;
	}
}

uint32_t go_prologue_skip(const uint8_t *code, size_t len, int regabi)
{
	return go_prologue_skip_mode(code, len, regabi, 64);
}

/* Whether instruction `in` (ops[]) reads memory at displacement `disp`
 * from a register: g.stackguard0 at [g+disp]. */
static bool reads_guard(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
			int64_t disp)
{
	for (int i = 0; i < in->operand_count_visible; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[i].mem.disp.value == disp &&
		    ops[i].mem.base != ZYDIS_REGISTER_NONE && (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_READ))
			return true;
	return false;
}

/*
 * The stack checks of Go's prologue (cmd/internal/obj/x86/obj6.go,
 * stacksplit(), go1.16 to go1.27) all branch to the one call of
 * runtime.morestack: a small frame `CMP SP, [g+16]; JBE`; a larger one
 * computes SP - frame first (`LEA -N(SP), R; CMP R, [g+16]; JBE`); a
 * frame over StackBig (4 KiB) first checks that subtraction for
 * wraparound (go1.17 on: `MOV SP, R; SUB $N, R; JB; CMP R, [g+16];
 * JBE`; before: `MOV [g+16], SI; CMP SI, $StackPreempt; JEQ; LEA; SUB;
 * CMP AX, $N; JLS`). Branches before the last go where it goes, or the
 * prologue is not one of these. After morestack the function starts over
 * from its entry, so a probe after the last branch fires once a call.
 */
uint32_t go_prologue_skip_mode(const uint8_t *code, size_t len, int regabi,
			       int bits)
{
	/* g.stackguard0 is g's second word: 16 on 64-bit, 8 on 32-bit. */
	const int64_t guard = bits == 32 ? 8 : 16;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	ZydisDecoder dec;
	ZyanU64 to, early = 0;
	size_t off = 0;
	bool guarded = false, cmp = false, branched = false;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec,
			bits == 32 ? ZYDIS_MACHINE_MODE_LEGACY_32
				   : ZYDIS_MACHINE_MODE_LONG_64,
			bits == 32 ? ZYDIS_STACK_WIDTH_32 : ZYDIS_STACK_WIDTH_64)))
		return 0;
	for (int n = 0; n < 10 && off < len; n++, off += in.length) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off,
							 len - off, &in, ops)))
			return 0;
		if (in.meta.category == ZYDIS_CATEGORY_COND_BR) {
			if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], off, &to)) ||
			    (branched && to != early))
				return 0;
			/* the last check: a compare with the guard, or of
			 * what was computed from it */
			if (cmp && (in.mnemonic == ZYDIS_MNEMONIC_JBE ||
				    in.mnemonic == ZYDIS_MNEMONIC_JB))
				return (uint32_t)(off + in.length);
			early = to;
			branched = true;
			cmp = false;
			continue;
		}
		if (in.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
		    in.meta.category == ZYDIS_CATEGORY_CALL ||
		    in.meta.category == ZYDIS_CATEGORY_RET)
			return 0;   /* control flow before any stack check */
		if (reads_guard(&in, ops, guard))
			guarded = true;
		if (in.mnemonic == ZYDIS_MNEMONIC_CMP)
			cmp = guarded;
		for (int i = 0; regabi && i < in.operand_count; i++)
			if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			    (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
			    is_arg_reg(ops[i].reg.value))
				return 0;
	}
	return 0;
}

/* Called per instruction by sweep(): at byte `off`, decoded into *in
 * and ops[] (in NULL: a padding byte, INT3 or 0x00, that does not
 * decode). Non-zero stops the sweep. */
typedef int sweep_fn(size_t off, const ZydisDecodedInstruction *in,
		     const ZydisDecodedOperand *ops, void *ctx);

/* Decodes code[len] (`bits`: 64 or 32) from its start, an instruction
 * at a time, into fn. Returns 0, fn's non-zero value, or -EINVAL when
 * something other than padding does not decode. */
static int sweep(const uint8_t *code, size_t len, int bits, sweep_fn *fn, void *ctx)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	ZydisDecoder dec;
	int rc;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec,
			bits == 32 ? ZYDIS_MACHINE_MODE_LEGACY_32
				   : ZYDIS_MACHINE_MODE_LONG_64,
			bits == 32 ? ZYDIS_STACK_WIDTH_32 : ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	for (size_t off = 0; off < len; off += in.length) {
		const bool ok = ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off,
								    len - off, &in, ops));

		/* padding at the end of a function may be cut */
		if (!ok && code[off] != 0xcc && code[off] != 0x00)
			return -EINVAL;
		if (!ok)
			in.length = 1;
		rc = fn(off, ok ? &in : NULL, ops, ctx);
		if (rc)
			return rc;
	}
	return 0;
}

/* Where go_ret_offsets() and go_insn_flow() write. */
struct sweep_out {
	void *v;
	int n, max;
};

static int ret_one(size_t off, const ZydisDecodedInstruction *in,
		   const ZydisDecodedOperand *ops, void *ctx)
{
	struct sweep_out *o = ctx;

	if (in && in->mnemonic == ZYDIS_MNEMONIC_RET) {
		if (o->n < o->max)
			((uint32_t *)o->v)[o->n] = (uint32_t)off;
		o->n++;
	}
	return 0;
}

int go_ret_offsets_mode(const uint8_t *code, size_t len, int bits, uint32_t *offs,
			int max)
{
	struct sweep_out o = { .v = offs, .max = max };
	const int rc = sweep(code, len, bits, ret_one, &o);

	return rc ? rc : o.n;
}

int go_ret_offsets(const uint8_t *code, size_t len, uint32_t *offs, int max)
{
	return go_ret_offsets_mode(code, len, 64, offs, max);
}

static int flow_one(size_t off, const ZydisDecodedInstruction *in,
		    const ZydisDecodedOperand *ops, void *ctx)
{
	struct sweep_out *o = ctx;
	struct go_flow f = { .off = (uint32_t)off, .target = UINT32_MAX,
			     .falls = in != NULL };

	if (in && (in->meta.category == ZYDIS_CATEGORY_COND_BR ||
		   in->meta.category == ZYDIS_CATEGORY_UNCOND_BR)) {
		f.falls = in->meta.category == ZYDIS_CATEGORY_COND_BR;
		if (ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[0].imm.is_relative) {
			const int64_t t = (int64_t)(off + in->length) + ops[0].imm.value.s;

			if (t >= 0 && t <= UINT32_MAX - 1)
				f.target = (uint32_t)t;
		} else {
			f.indirect = !f.falls;
		}
	} else if (in && (in->mnemonic == ZYDIS_MNEMONIC_RET ||
			  in->mnemonic == ZYDIS_MNEMONIC_UD2 ||
			  in->mnemonic == ZYDIS_MNEMONIC_INT3)) {
		f.falls = false;
	}
	if (o->n < o->max)
		((struct go_flow *)o->v)[o->n] = f;
	o->n++;
	return 0;
}

int go_insn_flow(const uint8_t *code, size_t len, struct go_flow *out, int max)
{
	struct sweep_out o = { .v = out, .max = max };
	const int rc = sweep(code, len, 64, flow_one, &o);

	return rc ? rc : o.n;
}

bool go_insn_segment_prefixed(const uint8_t *code, size_t len, int bits)
{
	ZydisDecodedInstruction in;
	ZydisDecoder dec;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec,
			bits == 32 ? ZYDIS_MACHINE_MODE_LEGACY_32
				   : ZYDIS_MACHINE_MODE_LONG_64,
			bits == 32 ? ZYDIS_STACK_WIDTH_32 : ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, code, len,
							  &in)))
		return true;   /* undecodable: as unsafe */
	return (in.attributes & (ZYDIS_ATTRIB_HAS_SEGMENT_FS |
				 ZYDIS_ATTRIB_HAS_SEGMENT_GS)) != 0;
}

bool go_insn_uprobe_ok(const uint8_t *code, size_t len, int bits)
{
	ZydisDecodedInstruction in;
	ZydisDecoder dec;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec,
			bits == 32 ? ZYDIS_MACHINE_MODE_LEGACY_32
				   : ZYDIS_MACHINE_MODE_LONG_64,
			bits == 32 ? ZYDIS_STACK_WIDTH_32 : ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, code, len,
							  &in)))
		return false;
	switch (in.mnemonic) {
	case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3: case ZYDIS_MNEMONIC_INTO:
	case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ: case ZYDIS_MNEMONIC_HLT:
	case ZYDIS_MNEMONIC_UD0: case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2: case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSENTER: case ZYDIS_MNEMONIC_SYSEXIT:
	case ZYDIS_MNEMONIC_SYSRET:
		return false;
	default:
		return in.meta.branch_type != ZYDIS_BRANCH_TYPE_FAR;
	}
}

bool go_insn_push_bp(const uint8_t *code, size_t len)
{
	return len >= 1 && (code[0] == 0x55 ||
			    (len >= 4 && !memcmp(code, "\xf3\x0f\x1e\xfa", 4)));
}

bool go_insn_sets_fp(const uint8_t *code, size_t len)
{
	ZydisDecodedInstruction in;
	ZydisDecoder dec;
	size_t off = 0;
	bool pushed = false;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)))
		return false;
	for (int i = 0; i < 16 && off < len; i++, off += in.length) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, code + off,
								len - off, &in)))
			return false;
		if (pushed)
			/* mov %rsp,%rbp: 48 89 e5 or 48 8b ec */
			return in.length == 3 &&
			       (!memcmp(code + off, "\x48\x89\xe5", 3) ||
				!memcmp(code + off, "\x48\x8b\xec", 3));
		pushed = in.length == 1 && code[off] == 0x55;
		if (in.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE &&
		    in.mnemonic != ZYDIS_MNEMONIC_JB)
			return false;
	}
	return false;
}

int go_goid_offset_from_code(const uint8_t *code, size_t len, uint64_t entry,
			     const uint64_t *print, int nprint, int regabi)
{
	enum { MAXI = 2048 };
	static ZydisDecodedInstruction ins[MAXI];
	static ZydisDecodedOperand ops[MAXI][2];
	ZydisDecodedOperand all[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecoder dec;
	size_t off = 0;
	int n = 0, call = -1;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	/* up to the first call of runtime.printint or printuint */
	while (off < len && n < MAXI && call < 0) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off,
				len - off, &ins[n], all)))
			return -EINVAL;
		ops[n][0] = all[0];
		ops[n][1] = all[1];
		if (ins[n].mnemonic == ZYDIS_MNEMONIC_CALL &&
		    all[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		    all[0].imm.is_relative) {
			const uint64_t to = entry + off + ins[n].length +
					    (uint64_t)all[0].imm.value.s;

			for (int k = 0; k < nprint; k++)
				if (print[k] && to == print[k])
					call = n;
		}
		off += ins[n].length;
		n++;
	}
	if (call < 0)
		return -ENOENT;
	{
		/* What flows into the argument: RAX (register ABI) or the
		 * stack slot [RSP+0] (ABI0), traced back through moves
		 * between registers and RSP-relative spill slots. */
		ZydisRegister reg = regabi ? ZYDIS_REGISTER_RAX : ZYDIS_REGISTER_NONE;
		int64_t slot = 0;

		for (int i = call - 1; i >= 0 && i >= call - 48; i--) {
			const ZydisDecodedOperand *d = &ops[i][0], *s = &ops[i][1];

			if (ins[i].mnemonic != ZYDIS_MNEMONIC_MOV ||
			    ins[i].operand_width != 64)
				continue;
			if (reg != ZYDIS_REGISTER_NONE &&
			    d->type == ZYDIS_OPERAND_TYPE_REGISTER && d->reg.value == reg) {
				if (s->type == ZYDIS_OPERAND_TYPE_REGISTER) {
					reg = s->reg.value;
					continue;
				}
				if (s->type != ZYDIS_OPERAND_TYPE_MEMORY ||
				    s->mem.index != ZYDIS_REGISTER_NONE)
					return -ENOENT;
				if (s->mem.base == ZYDIS_REGISTER_RSP) {
					reg = ZYDIS_REGISTER_NONE;
					slot = s->mem.disp.value;
					continue;
				}
				if (s->mem.base == ZYDIS_REGISTER_RBP ||
				    s->mem.base == ZYDIS_REGISTER_RIP ||
				    s->mem.disp.value < 64 || s->mem.disp.value >= 512)
					return -ENOENT;
				return (int)s->mem.disp.value;
			}
			if (reg == ZYDIS_REGISTER_NONE &&
			    d->type == ZYDIS_OPERAND_TYPE_MEMORY &&
			    d->mem.base == ZYDIS_REGISTER_RSP &&
			    d->mem.index == ZYDIS_REGISTER_NONE &&
			    d->mem.disp.value == slot &&
			    s->type == ZYDIS_OPERAND_TYPE_REGISTER)
				reg = s->reg.value;
		}
	}
	return -ENOENT;
}
