/* SPDX-License-Identifier: MIT */
/*
 * Values of a function as gobin hands them out (gobin.h): parameters and
 * results with names and types (from DWARF, dwarf.c) and locations (by
 * the calling convention, abi.c), the hidden dictionary of generic
 * instances, raw argument words without type information, and how pieces
 * are named ("RAX", "SP+8", "X0").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gobin_int.h"
#include "gofacts.h"

const char *gobin_mreg_name(unsigned mreg)
{
	static const char *const x86[] = {
		"RAX", "RBX", "RCX", "RDX", "RSI", "RDI", "RBP", "RSP", "R8", "R9",
		"R10", "R11", "R12", "R13", "R14", "R15", "RIP",
	};
	static const char *const xmm[16] = {
		"X0", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10",
		"X11", "X12", "X13", "X14", "X15"
	};
	static const char *const ar[31] = {
		"R0", "R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10",
		"R11", "R12", "R13", "R14", "R15", "R16", "R17", "R18", "R19", "R20",
		"R21", "R22", "R23", "R24", "R25", "R26", "R27", "R28", "R29", "R30"
	};
	static const char *const af[32] = {
		"F0", "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10",
		"F11", "F12", "F13", "F14", "F15", "F16", "F17", "F18", "F19", "F20",
		"F21", "F22", "F23", "F24", "F25", "F26", "F27", "F28", "F29", "F30",
		"F31"
	};

	if (mreg >= GOBIN_MREG_X86 && mreg < GOBIN_MREG_X86 + GT_REG_COUNT)
		return x86[mreg - GOBIN_MREG_X86];
	if (mreg >= GOBIN_MREG_XMM0 && mreg < GOBIN_MREG_XMM0 + 16)
		return xmm[mreg - GOBIN_MREG_XMM0];
	if (mreg >= GOBIN_MREG_ARM64_R0 && mreg < GOBIN_MREG_ARM64_R0 + 31)
		return ar[mreg - GOBIN_MREG_ARM64_R0];
	if (mreg >= GOBIN_MREG_ARM64_F0 && mreg < GOBIN_MREG_ARM64_F0 + 32)
		return af[mreg - GOBIN_MREG_ARM64_F0];
	return "";
}

bool gobin_piece_readable(const struct gobin_piece *p)
{
	if (p->kind == GT_LOC_REG || p->kind == GT_LOC_STACK)
		return true;
	return p->mreg >= GOBIN_MREG_ARM64_R0 && p->mreg < GOBIN_MREG_ARM64_F0;
}

char *gobin_piece_str(const struct gobin_piece *p, char *out, size_t outlen)
{
	if (p->kind == GT_LOC_STACK)
		snprintf(out, outlen, "SP%+d", p->offset);
	else if (p->kind == GT_LOC_REG && p->reg < GT_REG_COUNT)
		snprintf(out, outlen, "%s", gobin_mreg_name(GOBIN_MREG_X86 + p->reg));
	else if (p->mreg)
		snprintf(out, outlen, "%s", gobin_mreg_name(p->mreg));
	else
		snprintf(out, outlen, "?");
	return out;
}

static enum gtr_type gtr_type_of(const struct gobin_type *t)
{
	switch (t->kind) {
	case TK_INT: return GTR_TYPE_INT;
	case TK_UINT: return GTR_TYPE_UINT;
	case TK_BOOL: return GTR_TYPE_BOOL;
	case TK_PTR: return GTR_TYPE_PTR;
	case TK_STRING: return GTR_TYPE_STRING;
	case TK_FLOAT: return GTR_TYPE_FLOAT;
	default: return GTR_TYPE_OTHER;
	}
}

/*
 * Whether the generic instance `f` is a method of a generic type (its
 * receiver a parameter of the instance): "pkg.(*T[...]).M" or
 * "pkg.T[...].M", not a function "pkg.F[...]" nor a closure, go/defer
 * wrapper or method value inside one ("pkg.F[...].func1", "...-fm").
 */
static bool generic_method(const struct gobin_func *f)
{
	const char *open, *end = gobin_type_args_end(f->name, &open);
	const char *m;
	size_t ln;

	if (!end)
		return false;
	if (end[0] == ')' && end[1] == '.' && open - f->name >= 2 &&
	    memchr(f->name, '(', (size_t)(open - f->name)))
		m = end + 2;            /* pkg.(*T[...]).M */
	else if (end[0] == '.')
		m = end + 1;            /* pkg.T[...].M */
	else
		return false;
	ln = strlen(m);
	if (!ln || strpbrk(m, ".-"))
		return false;
	for (const char *pre = "func\0gowrap\0deferwrap\0"; *pre;
	     pre += strlen(pre) + 1) {
		const size_t pl = strlen(pre);

		if (ln > pl && !strncmp(m, pre, pl) &&
		    strspn(m + pl, "0123456789") == ln - pl)
			return false;   /* a closure of a generic function */
	}
	return true;
}

/*
 * Index where gc passes the dictionary of the generic instance `f` among
 * its parameters: after the receiver for a method of a Go version whose
 * gc puts it there (gofacts.c), else first.
 */
static int dict_index(const struct gobin *b, const struct gobin_func *f)
{
	const int minor = b->go_minor ? b->go_minor : b->pcln_minor;

	return generic_method(f) &&
	       gofact_dict_position(minor) == GOFACT_DICT_AFTER_RECEIVER;
}

int gobin_params_to_args(const struct gobin *b, const struct gobin_func *f,
			 const struct gobin_param *p, int np,
			 const struct gobin_type *cret, bool results,
			 struct gobin_arg *args, int max)
{
	struct gobin_param *moved = NULL;
	int n, d = -1, want;

	/* The dictionary where this Go passes it, however the caller (DWARF,
	 * add_dict, a user's signature) ordered the parameters. */
	for (int i = 0; i < np && !results && b->compiler == GOBIN_GC; i++)
		if (!p[i].result && !strcmp(p[i].name, ".dict"))
			d = i;
	want = d >= 0 ? dict_index(b, f) : -1;
	if (d >= 0 && want != d && want < np && !p[want].result) {
		moved = malloc((size_t)np * sizeof(*moved));
		if (!moved)
			return -ENOMEM;
		memcpy(moved, p, (size_t)np * sizeof(*moved));
		if (want < d)
			memmove(moved + want + 1, moved + want,
				(size_t)(d - want) * sizeof(*moved));
		else
			memmove(moved + d, moved + d + 1,
				(size_t)(want - d) * sizeof(*moved));
		moved[want] = p[d];
		p = moved;
	}
	n = gobin_abi_assign(b, gobin_func_abi(b, f), p, np, cret, results,
			     args, max);

	/* names and types, in the same order abi.c wrote them */
	for (int i = 0, k = 0; i < np && k < n; i++) {
		if (p[i].result != results)
			continue;
		snprintf(args[k].name, sizeof(args[k].name), "%s", p[i].name);
		snprintf(args[k].type_name, sizeof(args[k].type_name), "%s",
			 p[i].type->name);
		args[k].type = gtr_type_of(p[i].type);
		args[k].size = p[i].type->size;
		args[k].iface = p[i].type->kind != TK_IFACE ? 0 :
				!strcmp(p[i].type->name, "interface {}") ||
				!strcmp(p[i].type->name, "any") ? 2 : 1;
		k++;
	}
	free(moved);
	return n;
}

bool gobin_func_generic(const struct gobin_func *f)
{
	return strstr(f->name, "[...]") || strstr(f->name, "[go.shape.");
}

/*
 * A generic function's instance takes its dictionary as a hidden argument:
 * first, or after the receiver of a method (gofacts.c, where
 * gobin_params_to_args puts it). DWARF of Go 1.18-1.26 lists it only
 * when the optimiser tracked it (cmd/compile/internal/dwarfgen/dwarf.go,
 * createDwarfVars, skips other names starting with '.'); Go 1.27 lists
 * every parameter. Prepends it to p[np] when missing; returns the new
 * count or -ENOMEM.
 */
static int add_dict(const struct gobin *b, const struct gobin_func *f,
		    struct gobin_param **p, int np)
{
	struct gobin_param *v;

	if (b->compiler != GOBIN_GC || !gobin_func_generic(f))
		return np;
	for (int i = 0; i < np; i++)
		if (!strcmp((*p)[i].name, ".dict"))
			return np;
	v = realloc(*p, (size_t)(np + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	*p = v;
	memmove(v + 1, v, (size_t)np * sizeof(*v));
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), ".dict");
	v->type = gobin_type_new(TK_PTR, (uint32_t)b->ptrsize, "unsafe.Pointer");
	if (!v->type) {
		memmove(v, v + 1, (size_t)np * sizeof(*v));
		return -ENOMEM;
	}
	gobin_type_set_align(v->type, b->ptrsize);
	return np + 1;
}

static int func_params(const struct gobin *b, const struct gobin_func *f,
		       struct gobin_arg *args, int max, bool results)
{
	struct gobin *mb = (struct gobin *)b; /* DWARF is opened lazily */
	struct gobin_param *p = NULL;
	struct gobin_type *cret = NULL;
	int np, n;

	if (!b->has_dwarf)
		return -ENODATA;
	np = gobin_dwarf_params(mb, f->name, f->entry, &p, &cret);
	if (np < 0)
		return np;
	n = add_dict(b, f, &p, np);
	if (n < 0) {
		gobin_params_free(p, np, cret);
		return n;
	}
	np = n;
	n = gobin_params_to_args(b, f, p, np, cret, results, args, max);
	gobin_params_free(p, np, cret);
	return n;
}

int gobin_func_args(const struct gobin *b, const struct gobin_func *f,
		    struct gobin_arg *args, int max)
{
	return func_params(b, f, args, max, false);
}

int gobin_func_results(const struct gobin *b, const struct gobin_func *f,
		       struct gobin_arg *args, int max)
{
	return func_params(b, f, args, max, true);
}

static int raw_args(const struct gobin *b, enum gobin_abi abi,
		    struct gobin_arg *args, int n)
{
	static const enum gt_reg go_regs[] = {
		GT_REG_RAX, GT_REG_RBX, GT_REG_RCX, GT_REG_RDI, GT_REG_RSI,
		GT_REG_R8, GT_REG_R9, GT_REG_R10, GT_REG_R11,
	};
	static const enum gt_reg c_regs[] = {
		GT_REG_RDI, GT_REG_RSI, GT_REG_RDX, GT_REG_RCX, GT_REG_R8, GT_REG_R9,
	};
	const enum gt_reg *regs = NULL;
	int nregs = 0;

	if (b->arch == GOBIN_ARM64 && abi == GOBIN_ABI_INTERNAL) {
		/* R0-R15, listed but not readable through x86-64 pt_regs */
		for (int i = 0; i < n && i < 16; i++) {
			memset(&args[i], 0, sizeof(args[i]));
			args[i].type = GTR_TYPE_WORD;
			args[i].size = 8;
			args[i].npieces = 1;
			args[i].pieces[0] = (struct gobin_piece){
				.kind = GT_LOC_NONE, .size = 8,
				.mreg = (uint8_t)(GOBIN_MREG_ARM64_R0 + i),
			};
		}
		return n < 16 ? n : 16;
	}
	if (b->arch == GOBIN_AMD64 && abi == GOBIN_ABI_INTERNAL) {
		regs = go_regs;
		nregs = 9;
	} else if (b->arch == GOBIN_AMD64 && abi == GOBIN_ABI_C) {
		regs = c_regs;
		nregs = 6;
	} else if (b->arch != GOBIN_AMD64 && b->arch != GOBIN_386 &&
		   b->arch != GOBIN_ARM64) {
		return 0; /* a convention this file does not know */
	}
	for (int i = 0; i < n; i++) {
		struct gobin_arg *a = &args[i];

		memset(a, 0, sizeof(*a));
		a->type = GTR_TYPE_WORD;
		a->size = (uint32_t)b->ptrsize;
		a->npieces = 1;
		a->pieces[0].size = (uint8_t)b->ptrsize;
		if (regs) {
			if (i >= nregs)
				return i;
			a->pieces[0].kind = GT_LOC_REG;
			a->pieces[0].reg = regs[i];
			a->pieces[0].mreg = (uint8_t)(GOBIN_MREG_X86 + regs[i]);
		} else {
			a->pieces[0].kind = GT_LOC_STACK;
			a->pieces[0].offset = b->ptrsize * (i + 1);
		}
	}
	return n;
}

int gobin_raw_args(const struct gobin *b, struct gobin_arg *args, int n)
{
	return raw_args(b, gobin_binary_abi(b), args, n);
}

int gobin_func_raw_args(const struct gobin *b, const struct gobin_func *f,
			struct gobin_arg *args, int n)
{
	return raw_args(b, gobin_func_abi(b, f), args, n);
}

