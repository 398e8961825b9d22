/* SPDX-License-Identifier: MIT */
/*
 * Where arguments and results live at function entry (and at a RET), by
 * the calling convention of the binary; the registers of each
 * architecture are its struct gt_arch's (arch.c):
 *
 * - gc register ABI, amd64 Go >= 1.17 and arm64 Go >= 1.18 (Go
 *   src/cmd/compile/abi-internal.md): amd64 integer registers RAX RBX RCX
 *   RDI RSI R8 R9 R10 R11, floats X0-X14; arm64 R0-R15 and F0-F15, stack
 *   arguments also from SP + 8 (0(RSP) is the caller's saved-LR slot).
 *   Each value is register-assigned recursively (string/interface 2 words,
 *   slice 3, struct field by field, arrays of length 0/1 as their element,
 *   longer arrays fail); if it fails or does not fit the registers left, the
 *   whole value is stack-assigned (aligned) and later values may still use
 *   registers. Results start again from the first registers; stack results
 *   follow the stack arguments after pointer-size alignment. The stack area
 *   starts at SP + 8 at entry (return address at SP + 0).
 * - gc ABI0 (386, amd64 before Go 1.17, assembly): everything on the stack
 *   from SP + ptrsize, laid out as a struct; results after pointer alignment.
 * - gccgo amd64: the System V C ABI: RDI RSI RDX RCX R8 R9, XMM0-7,
 *   aggregates of up to 16 bytes by eightbyte classes, larger ones in
 *   memory; a memory-class return value takes a hidden pointer in RDI.
 */
#include <stdio.h>
#include <string.h>

#include "gobin_int.h"

#define MAX_LEAVES 64
#define LEAVES_FAIL (-1)  /* not register-assignable */
#define LEAVES_UNKNOWN (-2) /* shape unknown or too many parts */

struct leaf {
	uint32_t off;   /* bytes from the start of the value */
	uint8_t size;
	bool fp;
};

static int push(struct leaf *out, int n, uint32_t off, uint32_t size, bool fp)
{
	if (n >= MAX_LEAVES)
		return LEAVES_UNKNOWN;
	out[n] = (struct leaf){ off, (uint8_t)size, fp };
	return n + 1;
}

/*
 * Appends the scalar parts of a value of type t at `base` to out[n..].
 * With regs, follows the register-assignment rules (arrays of length > 1
 * fail). Returns the new count or LEAVES_FAIL / LEAVES_UNKNOWN.
 */
static int leaves(const struct gobin_type *t, uint32_t base, bool regs, int ps,
		  struct leaf *out, int n)
{
	const uint32_t w = (uint32_t)ps;

	switch (t->kind) {
	case TK_INT: case TK_UINT: case TK_BOOL: case TK_PTR:
		if (t->size == 0 || t->size > 8)
			return LEAVES_UNKNOWN;
		if (t->size > w && regs) { /* 64-bit integer, 32-bit registers */
			n = push(out, n, base, w, false);
			return n < 0 ? n : push(out, n, base + w, w, false);
		}
		return push(out, n, base, t->size, false);
	case TK_FLOAT:
		return push(out, n, base, t->size, true);
	case TK_COMPLEX:
		n = push(out, n, base, t->size / 2, true);
		return n < 0 ? n : push(out, n, base + t->size / 2, t->size / 2, true);
	case TK_STRING: case TK_IFACE: case TK_SLICE: {
		const int words = t->kind == TK_SLICE ? 3 : 2;

		for (int i = 0; i < words && n >= 0; i++)
			n = push(out, n, base + (uint32_t)i * w, w, false);
		return n;
	}
	case TK_STRUCT:
		for (uint32_t i = 0; i < t->nfields && n >= 0; i++)
			n = leaves(t->fields[i].type, base + t->fields[i].offset, regs,
				   ps, out, n);
		return n;
	case TK_ARRAY:
		if (!t->nfields)
			return LEAVES_UNKNOWN;
		if (t->count == 0)
			return n;
		if (t->count > 1 && regs)
			return LEAVES_FAIL;
		for (uint64_t i = 0; i < t->count && n >= 0; i++)
			n = leaves(t->fields[0].type,
				   base + (uint32_t)i * t->fields[0].type->size, regs,
				   ps, out, n);
		return n;
	default:
		if (t->size == 0)
			return n;
		return regs ? LEAVES_FAIL : LEAVES_UNKNOWN;
	}
}

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return a ? (v + a - 1) / a * a : v;
}

void gobin_abi_stack_pieces(const struct gobin_type *t, int32_t off, int ps,
			    struct gobin_arg *a)
{
	struct leaf lv[MAX_LEAVES];
	int n;

	a->npieces = 0;
	n = leaves(t, 0, false, ps, lv, 0);
	if ((t->kind == TK_ARRAY && t->count && t->nfields) ||
	    (t->kind == TK_STRUCT && t->size && (n < 0 || n > GOBIN_MAX_PIECES))) {
		/* one piece at its first byte: an array is read whole, as
		 * bytes (fetch_of_value(), record/fetch.c); a struct of more
		 * parts, by its fields (field paths from there) */
		a->pieces[0] = (struct gobin_piece){
			.kind = GOBIN_LOC_STACK, .offset = off,
			.size = (uint8_t)ps,
		};
		a->npieces = 1;
		return;
	}
	if (n < 0 || n > GOBIN_MAX_PIECES)
		return;
	for (int i = 0; i < n; i++)
		a->pieces[i] = (struct gobin_piece){
			.kind = GOBIN_LOC_STACK,
			.offset = off + (int32_t)lv[i].off,
			.size = lv[i].size,
		};
	a->npieces = (uint32_t)n;
}

/* ------------------------------------------------------------ gc */

struct regstate {
	int ni, nf;
	int max_i, max_f; /* registers of the architecture; 0: ABI0 */
	const struct gt_arch *ai;
	uint32_t stack; /* bytes of the stack sequence used */
};

/* The piece for integer (fp false) or float register number `i`. */
static struct gobin_piece go_reg_piece(const struct regstate *rs, bool fp,
				       int i, uint8_t size)
{
	return (struct gobin_piece){
		.kind = GOBIN_LOC_REG, .size = size,
		.mreg = fp ? (uint8_t)(rs->ai->go_freg0 + i) : rs->ai->go_iregs[i],
	};
}

static void go_assign_one(const struct gobin_type *t, int ps, int base,
			  struct regstate *rs, struct gobin_arg *a)
{
	const bool regabi = rs->max_i > 0;
	struct leaf lv[MAX_LEAVES];
	int n = regabi ? leaves(t, 0, true, ps, lv, 0) : LEAVES_FAIL;

	memset(a->pieces, 0, sizeof(a->pieces));
	if (n >= 0) {
		int ni = 0, nf = 0;

		for (int i = 0; i < n; i++) {
			if (lv[i].fp)
				nf++;
			else
				ni++;
		}
		if (rs->ni + ni > rs->max_i || rs->nf + nf > rs->max_f)
			n = LEAVES_FAIL;
	}
	if (n < 0) {
		const uint32_t off = align_up(rs->stack, t->align);

		gobin_abi_stack_pieces(t, base + (int32_t)off, ps, a);
		rs->stack = off + t->size;
		return;
	}
	a->npieces = n <= GOBIN_MAX_PIECES ? (uint32_t)n : 0;
	for (int i = 0; i < n; i++) {
		const struct gobin_piece pc = go_reg_piece(
			rs, lv[i].fp, lv[i].fp ? rs->nf++ : rs->ni++, lv[i].size);

		if (i < GOBIN_MAX_PIECES && a->npieces)
			a->pieces[i] = pc;
	}
}

static int go_assign(const struct gobin *b, bool internal,
		     const struct gobin_param *p, int np, bool results,
		     struct gobin_arg *out, int max)
{
	const int ps = b->ptrsize;
	struct regstate rs = { .ai = gt_arch_of(b->arch) };
	struct gobin_arg tmp;
	int k = 0;

	if (internal && rs.ai->go_nireg) {
		rs.max_i = rs.ai->go_nireg;
		rs.max_f = rs.ai->go_nfreg;
	} else if (internal) {
		/* a register ABI this file does not know: locations unknown */
		for (int i = 0; i < np && k < max; i++)
			if (p[i].result == results)
				memset(&out[k++], 0, sizeof(out[0]));
		return k;
	}

	for (int pass = 0; pass < 2; pass++) {
		const bool want_results = pass == 1;

		if (pass == 1) {
			rs.ni = rs.nf = 0;
			rs.stack = align_up(rs.stack, (uint32_t)ps);
		}
		for (int i = 0; i < np; i++) {
			struct gobin_arg *a;

			if (p[i].result != want_results)
				continue;
			a = (want_results == results && k < max) ? &out[k] : &tmp;
			memset(a, 0, sizeof(*a));
			go_assign_one(p[i].type, ps, ps, &rs, a);
			if (a != &tmp)
				k++;
		}
	}
	return k;
}

/* ------------------------------------------------------------ gccgo */

enum cclass { C_NONE, C_INT, C_SSE, C_MEM };

/* Classifies t (System V x86-64, simplified): eightbyte classes in cls[2]. */
static enum cclass c_classify(const struct gobin_type *t, struct leaf *lv,
			      int *nlv, enum cclass cls[2])
{
	*nlv = leaves(t, 0, false, 8, lv, 0);
	cls[0] = cls[1] = C_NONE;
	if (t->size > 16 || *nlv < 0)
		return C_MEM;
	for (int i = 0; i < *nlv; i++) {
		const uint32_t e = lv[i].off / 8;

		if (e > 1 || (lv[i].off + lv[i].size + 7) / 8 - 1 != e)
			return C_MEM; /* straddles an eightbyte */
		if (!lv[i].fp)
			cls[e] = C_INT;
		else if (cls[e] == C_NONE)
			cls[e] = C_SSE;
	}
	return C_INT;
}

/*
 * Pieces of the bytes [base, base + size) of a value held in registers
 * regs[eightbyte] (enum gobin_mreg): one piece per eightbyte.
 */
static void c_reg_pieces(uint32_t base, uint32_t size, const uint8_t regs[2],
			 struct gobin_arg *a)
{
	uint32_t n = 0;

	a->npieces = 0;
	if (base % 8 != 0 || size == 0 || base + size > 16)
		return;
	for (uint32_t o = 0; o < size; o += 8) {
		a->pieces[n++] = (struct gobin_piece){
			.kind = GOBIN_LOC_REG, .mreg = regs[(base + o) / 8],
			.size = (uint8_t)(size - o < 8 ? size - o : 8),
		};
	}
	a->npieces = n;
}

static int gccgo_assign(const struct gobin *b, const struct gobin_param *p,
			int np, const struct gobin_type *cret, bool results,
			struct gobin_arg *out, int max)
{
	const struct gt_arch *ai = gt_arch_of(b->arch);
	struct leaf lv[MAX_LEAVES];
	enum cclass cls[2];
	int nlv, ni = 0, nf = 0, k = 0;
	uint32_t stack = 0;

	if (!ai->c_nireg) {
		/* 386 cdecl: all on the stack, 4-byte slots */
		for (int i = 0; i < np && k < max; i++) {
			if (p[i].result)
				continue;
			stack = align_up(stack, 4);
			if (!results) {
				memset(&out[k], 0, sizeof(out[k]));
				gobin_abi_stack_pieces(p[i].type, 4 + (int32_t)stack, 4, &out[k]);
				k++;
			}
			stack += align_up(p[i].type->size, 4);
		}
		return k;
	}
	if (results) {
		/* RAX/RDX or XMM0/XMM1; a memory-class return where RAX
		 * points at its return (in_memory) */
		int nres = 0, r = 0;
		uint8_t regs[2] = { ai->c_freg0, ai->c_freg0 };
		int ni2 = 0, nf2 = 0;
		const bool mem = cret && c_classify(cret, lv, &nlv, cls) == C_MEM;

		for (int i = 0; i < np; i++)
			nres += p[i].result;
		for (int e = 0; e < 2 && cret && !mem; e++) {
			if (cls[e] == C_INT)
				regs[e] = ai->c_ret[ni2++];
			else if (cls[e] == C_SSE)
				regs[e] = (uint8_t)(ai->c_freg0 + nf2++);
		}
		for (int i = 0; i < np && k < max; i++) {
			const uint32_t base = nres == 1 ? 0 :
				(cret && cret->kind == TK_STRUCT &&
				 (uint32_t)r < cret->nfields) ?
				cret->fields[r].offset : UINT32_MAX;
			if (!p[i].result)
				continue;
			r++;
			memset(&out[k], 0, sizeof(out[k]));
			if (mem && base != UINT32_MAX) {
				out[k].pieces[0] = (struct gobin_piece){
					.kind = GOBIN_LOC_REG, .mreg = ai->c_ret[0],
					.size = 8,
				};
				out[k].npieces = 1;
				out[k].in_memory = true;
				out[k].mem_off = (int32_t)base;
			} else if (cret && base != UINT32_MAX) {
				c_reg_pieces(base, p[i].type->size, regs, &out[k]);
			}
			k++;
		}
		return k;
	}
	if (cret && c_classify(cret, lv, &nlv, cls) == C_MEM)
		ni = 1; /* hidden result pointer in RDI */
	for (int i = 0; i < np; i++) {
		const struct gobin_type *t = p[i].type;
		struct gobin_arg tmp, *a;
		enum cclass c;
		int need_i = 0, need_f = 0;

		if (p[i].result)
			continue;
		a = k < max ? &out[k] : &tmp;
		memset(a, 0, sizeof(*a));
		c = c_classify(t, lv, &nlv, cls);
		for (int e = 0; e < 2 && c != C_MEM; e++) {
			need_i += cls[e] == C_INT;
			need_f += cls[e] == C_SSE;
		}
		if (c != C_MEM && ni + need_i <= ai->c_nireg &&
		    nf + need_f <= ai->c_nfreg) {
			uint8_t regs[2] = { ai->c_freg0, ai->c_freg0 };

			for (int e = 0; e < 2; e++) {
				if (cls[e] == C_INT)
					regs[e] = ai->c_iregs[ni++];
				else if (cls[e] == C_SSE)
					regs[e] = (uint8_t)(ai->c_freg0 + nf++);
			}
			c_reg_pieces(0, t->size, regs, a);
		} else {
			stack = align_up(stack, t->align > 8 ? t->align : 8);
			gobin_abi_stack_pieces(t, 8 + (int32_t)stack, 8, a);
			stack += align_up(t->size, 8);
		}
		if (a != &tmp)
			k++;
	}
	return k;
}

const struct gobin_type *gobin_abi_c_results(const struct gobin_param *v, int np,
					     struct gobin_type *shell,
					     struct gobin_field *fields, int max)
{
	const struct gobin_type *one = NULL;
	uint32_t off = 0, align = 1;
	int n = 0;

	memset(shell, 0, sizeof(*shell));
	for (int i = 0; i < np; i++) {
		const struct gobin_type *t = v[i].type;
		const uint32_t a = t->align ? t->align : 1;

		if (!v[i].result)
			continue;
		if (n >= max)
			return NULL;
		one = t;
		off = (off + a - 1) / a * a;
		fields[n++] = (struct gobin_field){ off, (struct gobin_type *)t, NULL };
		off += t->size;
		align = a > align ? a : align;
	}
	if (n <= 1)
		return one;
	shell->kind = TK_STRUCT;
	shell->size = (off + align - 1) / align * align;
	shell->align = align;
	shell->fields = fields;
	shell->nfields = (uint32_t)n;
	return shell;
}

int gobin_abi_assign(const struct gobin *b, enum gobin_abi abi,
		     const struct gobin_param *p, int np,
		     const struct gobin_type *cret, bool results,
		     struct gobin_arg *out, int max)
{
	if (abi == GOBIN_ABI_C)
		return gccgo_assign(b, p, np, cret, results, out, max);
	return go_assign(b, abi == GOBIN_ABI_INTERNAL, p, np, results, out, max);
}

/*
 * Register words (leaves) a value of type t takes under Go's register ABI
 * (abi-internal.md), integer and float alike, in the order gobin_arg's
 * pieces list them: scalars 1, complex 2, strings and interfaces 2,
 * slices 3, structs the sum of their fields, arrays of 0 or 1 element as
 * the element; -1 when the value cannot be in registers (longer arrays).
 */
int gobin_abi_int_slots(const struct gobin_type *t)
{
	int n = 0;

	switch (t->kind) {
	case TK_INT: case TK_UINT: case TK_BOOL: case TK_PTR: return 1;
	case TK_STRING: case TK_IFACE: return 2;
	case TK_SLICE: return 3;
	case TK_FLOAT: return 1;
	case TK_COMPLEX: return 2;
	case TK_ARRAY:
		if (t->count == 0)
			return 0;
		return t->count == 1 && t->nfields ? gobin_abi_int_slots(t->fields[0].type) : -1;
	case TK_STRUCT:
		for (uint32_t i = 0; i < t->nfields; i++) {
			int k = gobin_abi_int_slots(t->fields[i].type);

			if (k < 0)
				return -1;
			n += k;
		}
		return n;
	default:
		return -1;
	}
}
