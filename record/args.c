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
	return gt_arch_reg_name(mreg);
}

bool gobin_piece_readable(const struct gobin_piece *p)
{
	return p->kind == GOBIN_LOC_STACK ||
	       (p->kind == GOBIN_LOC_REG && gt_arch_reg_is_int(p->mreg));
}

char *gobin_piece_str(const struct gobin_piece *p, char *out, size_t outlen)
{
	if (p->kind == GOBIN_LOC_STACK)
		snprintf(out, outlen, "SP%+d", p->offset);
	else if (p->kind == GOBIN_LOC_REG && gobin_mreg_name(p->mreg)[0])
		snprintf(out, outlen, "%s", gobin_mreg_name(p->mreg));
	else
		snprintf(out, outlen, "?");
	return out;
}

char *gobin_arg_locations(const struct gobin_arg *a, char *out, size_t outlen)
{
	size_t o = 0;
	char one[32];

	out[0] = '\0';
	if (a->in_memory && a->npieces == 1) {   /* "[RAX+8]" */
		snprintf(out, outlen, "[%s+%d]", gobin_piece_str(&a->pieces[0], one, sizeof(one)),
			 a->mem_off);
		return out;
	}
	for (uint32_t i = 0; i < a->npieces && o < outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%s%s", i ? "," : "",
				      gobin_piece_str(&a->pieces[i], one, sizeof(one)));
	if (!a->npieces)
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
 * Bytes of one element of slice or array type t when its elements are
 * single values (numbers, bools, pointers, strings), whose bytes a
 * reader of the trace can show; 0 for other elements (aggregates,
 * interfaces) and other types.
 */
uint32_t gobin_elem_of(const struct gobin_type *t, const char **name)
{
	static const char *const ints[] = { "int8", "int16", "int32", "int64" };
	static const char *const uints[] = { "uint8", "uint16", "uint32", "uint64" };
	enum gobin_tk k = t->elem_kind;
	uint32_t size = t->elem_size;
	int lg;

	*name = "";
	if (t->kind == TK_ARRAY && t->nfields) {
		k = t->fields[0].type->kind;
		size = t->fields[0].type->size;
	} else if (t->kind != TK_SLICE) {
		return 0;
	}
	lg = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
	switch (k) {
	case TK_INT: case TK_UINT: case TK_BOOL: case TK_FLOAT: case TK_PTR:
		if (lg < 0)
			return 0;
		*name = k == TK_INT ? ints[lg] : k == TK_UINT ? uints[lg] :
			k == TK_BOOL ? "bool" : k == TK_PTR ? "unsafe.Pointer" :
			size == 4 ? "float32" : "float64";
		return size;
	case TK_COMPLEX: case TK_STRING:
		return size;   /* their length alone */
	default:
		return 0;
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
		args[k].elem_size = gobin_elem_of(p[i].type, &args[k].elem);
		args[k].array_len = p[i].type->kind == TK_ARRAY ?
				    (uint32_t)p[i].type->count : 0;
		args[k].iface = p[i].type->kind != TK_IFACE ? 0 :
				!strcmp(p[i].type->name, "interface {}") ||
				!strcmp(p[i].type->name, "any") ? 2 : 1;
		args[k].gccgo_iface = p[i].type->kind == TK_STRUCT ?
				      p[i].type->iface : 0;
		if (args[k].iface == 1 && b->compiler == GOBIN_GCCGO)
			/* a signature's interface with methods: gccgo's first
			 * word is a methods table, whose first word is the
			 * type descriptor (no itab) */
			args[k].iface = GOBIN_GCCGO_METHODS;
		k++;
	}
	free(moved);
	return n;
}

/*
 * Arrays (gobin.h): on the stack, one the register ABI assigns there (any
 * array of more than one element, Go src/cmd/compile/abi-internal.md,
 * go1.17-go1.27), every one of ABI0 or 386 code, or one gccgo passes in
 * memory (over 16 bytes, System V x86-64 psABI 3.2.3); in one integer
 * register, gc's [1]T of a word or less and gccgo's of up to 8 bytes
 * (one INTEGER eightbyte).
 */
enum gobin_array gobin_arg_array(const struct gobin_arg *a)
{
	if (!a->array_len || !a->elem_size || a->in_memory || a->npieces != 1 ||
	    a->size != a->array_len * a->elem_size)
		return GOBIN_ARRAY_NONE;
	if (a->pieces[0].kind == GOBIN_LOC_STACK)
		return GOBIN_ARRAY_STACK;
	if (gobin_piece_readable(&a->pieces[0]) && a->size <= a->pieces[0].size)
		return GOBIN_ARRAY_REG;
	return GOBIN_ARRAY_NONE;
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
	if (!results && gobin_func_gcc_clone(b, f))
		return gobin_dwarf_clone_args(mb, f, args, max);
	np = gobin_dwarf_params(mb, f->name, f->entry, &p, &cret);
	if (np < 0)
		return np;
	if (!np && !cret && b->compiler == GOBIN_GCCGO &&
	    !gobin_dwarf_func_typed(mb, f->name, f->entry))
		return -ENODATA;   /* names and ranges only (no -g): values unknown */
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

/*
 * Raw words in convention `abi`: the architecture's integer argument
 * registers of the register ABI or the C ABI, in order (at most as many
 * as it has), else stack words from SP + ptrsize.
 */
static int raw_args(const struct gobin *b, enum gobin_abi abi,
		    struct gobin_arg *args, int n)
{
	const struct gt_arch *ai = gt_arch_of(b->arch);
	const uint8_t *regs = abi == GOBIN_ABI_INTERNAL ? ai->go_iregs :
			      abi == GOBIN_ABI_C ? ai->c_iregs : NULL;
	const int nregs = abi == GOBIN_ABI_INTERNAL ? ai->go_nireg :
			  abi == GOBIN_ABI_C ? ai->c_nireg : 0;

	if (b->arch == GOBIN_ARCH_OTHER)
		return 0; /* a convention gotrace does not know */
	for (int i = 0; i < n; i++) {
		struct gobin_arg *a = &args[i];

		memset(a, 0, sizeof(*a));
		a->type = GTR_TYPE_WORD;
		a->size = (uint32_t)b->ptrsize;
		a->npieces = 1;
		a->pieces[0].size = (uint8_t)b->ptrsize;
		if (nregs) {
			if (i >= nregs)
				return i;
			a->pieces[0].kind = GOBIN_LOC_REG;
			a->pieces[0].mreg = regs[i];
		} else {
			a->pieces[0].kind = GOBIN_LOC_STACK;
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

bool gobin_arg_folded_recorded(const struct gobin_arg *a)
{
	return a->folded && (a->type == GTR_TYPE_INT || a->type == GTR_TYPE_UINT ||
			     a->type == GTR_TYPE_BOOL);
}
