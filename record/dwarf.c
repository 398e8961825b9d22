/* SPDX-License-Identifier: MIT */
/*
 * DWARF (libdw) of Go binaries: parameters of a function and the shapes of
 * their types, and runtime.g's goid.
 *
 * What Go's DWARF looks like (cmd/link/internal/ld/dwarf.go,
 * cmd/compile/internal/dwarfgen): one DW_TAG_subprogram per function named
 * by its full symbol ("main.(*T).M"), or, when the function is also inlined
 * somewhere, a concrete DIE with only DW_AT_abstract_origin and low_pc;
 * DW_TAG_formal_parameter children in order receiver, params, results,
 * with DW_AT_variable_parameter 1 on results. Types carry DW_AT_go_kind
 * (0x2900, a reflect.Kind); string, slice and interface are structures.
 * gccgo: C-like DWARF, results are DW_TAG_variable "$retN", the C return
 * type is the subprogram's DW_AT_type.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "dwarf_int.h"
#include "search.h"

/* reflect.Kind values DW_AT_go_kind uses. */
enum go_kind {
	GK_BOOL = 1, GK_INT = 2, GK_INT64 = 6, GK_UINT = 7, GK_UINTPTR = 12,
	GK_FLOAT32 = 13, GK_FLOAT64 = 14, GK_COMPLEX64 = 15, GK_COMPLEX128 = 16,
	GK_ARRAY = 17, GK_CHAN = 18, GK_FUNC = 19, GK_INTERFACE = 20,
	GK_MAP = 21, GK_PTR = 22, GK_SLICE = 23, GK_STRING = 24,
	GK_STRUCT = 25, GK_UNSAFEPTR = 26,
};

static int die_ix_cmp(const void *a, const void *b)
{
	return strcmp(((const struct gobin_die_ix *)a)->name,
		      ((const struct gobin_die_ix *)b)->name);
}

static int pc_ix_cmp(const void *a, const void *b)
{
	const struct gobin_pc_ix *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

int gobin_dwarf_each_top(Dwarf *dw, int (*fn)(Dwarf_Die *die, void *ctx),
			void *ctx)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;

		if (dwarf_offdie(dw, off + hsize, &cu) &&
		    dwarf_child(&cu, &child) == 0) {
			do {
				const int r = fn(&child, ctx);

				if (r)
					return r;
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
	return 0;
}

struct ix_build {
	struct gobin_die_ix *names;
	size_t nnames, cap;
	struct gobin_pc_ix *pcs;
	size_t npcs, pcap;
	bool oom;
};

static int ix_cb(Dwarf_Die *die, void *ctx)
{
	struct ix_build *ib = ctx;
	const char *name;
	Dwarf_Addr lo;

	if (dwarf_tag(die) != DW_TAG_subprogram)
		return 0;
	name = dwarf_diename(die);
	if (name) {
		if (ib->nnames == ib->cap) {
			const size_t cap = ib->cap ? ib->cap * 2 : 1024;
			void *v = realloc(ib->names, cap * sizeof(*ib->names));

			if (!v) {
				ib->oom = true;
				return 1;
			}
			ib->names = v;
			ib->cap = cap;
		}
		ib->names[ib->nnames++] = (struct gobin_die_ix){
			name, dwarf_dieoffset(die) };
	}
	if (dwarf_lowpc(die, &lo) == 0) {
		if (ib->npcs == ib->pcap) {
			const size_t cap = ib->pcap ? ib->pcap * 2 : 1024;
			void *v = realloc(ib->pcs, cap * sizeof(*ib->pcs));

			if (!v) {
				ib->oom = true;
				return 1;
			}
			ib->pcs = v;
			ib->pcap = cap;
		}
		ib->pcs[ib->npcs++] = (struct gobin_pc_ix){ lo, dwarf_dieoffset(die) };
	}
	return 0;
}

Dwarf *gobin_dwarf_open(struct gobin *b)
{
	struct ix_build ib = { 0 };
	Dwarf *dw;

	if (b->dwarf_tried)
		return b->dwarf;
	b->dwarf_tried = true;
	dw = dwarf_begin_elf(gobin_dwarf_elf(b), DWARF_C_READ, NULL);
	if (!dw)
		return NULL;
	gobin_dwarf_each_top(dw, ix_cb, &ib);
	if (ib.oom) {
		free(ib.names);
		free(ib.pcs);
		dwarf_end(dw);
		return NULL;
	}
	if (ib.nnames)
		qsort(ib.names, ib.nnames, sizeof(*ib.names), die_ix_cmp);
	if (ib.npcs)
		qsort(ib.pcs, ib.npcs, sizeof(*ib.pcs), pc_ix_cmp);
	b->dwpcs = ib.pcs;
	b->ndwpcs = ib.npcs;
	b->dies = ib.names;
	b->ndies = ib.nnames;
	b->dwarf = dw;
	return dw;
}

void gobin_dwarf_close(struct gobin *b)
{
	for (size_t i = 0; i < b->nrtypes; i++)
		free(b->rtypes[i].name);
	free(b->rtypes);
	b->rtypes = NULL;
	b->nrtypes = 0;
	b->rtypes_built = false;
	free(b->dwpcs);
	b->dwpcs = NULL;
	b->ndwpcs = 0;
	free(b->dies);
	b->dies = NULL;
	b->ndies = 0;
	if (b->dwarf)
		dwarf_end(b->dwarf);
	b->dwarf = NULL;
}

bool gobin_dwarf_subprogram(struct gobin *b, const char *name, uint64_t entry,
			    Dwarf_Die *out)
{
	Dwarf *dw = b->dwarf;
	size_t lo = SEARCH_GE(b->dwpcs, b->ndwpcs, pc, entry), hi;

	if (lo < b->ndwpcs && b->dwpcs[lo].pc == entry &&
	    dwarf_offdie(dw, b->dwpcs[lo].off, out))
		return true;
	lo = 0;
	hi = b->ndies;
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;

		if (strcmp(b->dies[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < b->ndies && strcmp(b->dies[lo].name, name) == 0; lo++) {
		Dwarf_Addr pc;

		if (!dwarf_offdie(dw, b->dies[lo].off, out))
			continue;
		/* skip abstract (inlined-only) DIEs when a concrete one exists */
		if (dwarf_lowpc(out, &pc) == 0 || lo + 1 >= b->ndies ||
		    strcmp(b->dies[lo + 1].name, name) != 0)
			return true;
	}
	return false;
}

/* ------------------------------------------------------------ types */

uint64_t gobin_die_udata(Dwarf_Die *die, unsigned at, uint64_t dflt)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;

	if (!dwarf_attr_integrate(die, at, &attr) || dwarf_formudata(&attr, &w) != 0)
		return dflt;
	return w;
}

bool gobin_die_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute attr;

	return dwarf_attr_integrate(die, DW_AT_type, &attr) &&
	       dwarf_formref_die(&attr, out) != NULL;
}

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

struct gobin_type *gobin_type_new(enum gobin_tk kind, uint32_t size,
				   const char *name)
{
	struct gobin_type *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->kind = kind;
	t->size = size;
	t->elem_kind = TK_OTHER;
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "");
	return t;
}

void gobin_type_free(struct gobin_type *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->nfields; i++) {
		gobin_type_free(t->fields[i].type);
		free(t->fields[i].name);
	}
	free(t->fields);
	gobin_type_free(t->elem);
	free(t);
}

void gobin_type_set_align(struct gobin_type *t, int ps)
{
	switch (t->kind) {
	case TK_PTR: case TK_STRING: case TK_SLICE: case TK_IFACE:
		t->align = (uint32_t)ps;
		break;
	case TK_COMPLEX:
		t->align = min_u32(t->size / 2, (uint32_t)ps);
		break;
	case TK_STRUCT:
		t->align = 1;
		for (uint32_t i = 0; i < t->nfields; i++)
			if (t->fields[i].type->align > t->align)
				t->align = t->fields[i].type->align;
		break;
	case TK_ARRAY:
		t->align = t->nfields ? t->fields[0].type->align : 1;
		break;
	default:
		t->align = min_u32(t->size ? t->size : 1, (uint32_t)ps);
		break;
	}
	if (!t->align)
		t->align = 1;
}

enum gobin_tk gobin_tk_of_kind(uint64_t gk)
{
	if (gk == GK_BOOL) return TK_BOOL;
	if (gk >= GK_INT && gk <= GK_INT64) return TK_INT;
	if (gk >= GK_UINT && gk <= GK_UINTPTR) return TK_UINT;
	if (gk == GK_FLOAT32 || gk == GK_FLOAT64) return TK_FLOAT;
	if (gk == GK_COMPLEX64 || gk == GK_COMPLEX128) return TK_COMPLEX;
	switch (gk) {
	case GK_ARRAY: return TK_ARRAY;
	case GK_CHAN: case GK_FUNC: case GK_MAP: case GK_PTR: case GK_UNSAFEPTR:
		return TK_PTR;
	case GK_INTERFACE: return TK_IFACE;
	case GK_SLICE: return TK_SLICE;
	case GK_STRING: return TK_STRING;
	case GK_STRUCT: return TK_STRUCT;
	default: return TK_OTHER;
	}
}

static enum gobin_tk kind_of_tag(Dwarf_Die *die, const char *name)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_base_type:
		switch (gobin_die_udata(die, DW_AT_encoding, 0)) {
		case DW_ATE_boolean: return TK_BOOL;
		case DW_ATE_signed: case DW_ATE_signed_char: return TK_INT;
		case DW_ATE_unsigned: case DW_ATE_unsigned_char: case DW_ATE_UTF:
			return TK_UINT;
		case DW_ATE_float: return TK_FLOAT;
		case DW_ATE_complex_float: return TK_COMPLEX;
		default: return TK_OTHER;
		}
	case DW_TAG_pointer_type: case DW_TAG_reference_type:
	case DW_TAG_subroutine_type: case DW_TAG_ptr_to_member_type:
		return TK_PTR;
	case DW_TAG_structure_type:
		if (name && strcmp(name, "string") == 0)
			return TK_STRING;
		if (name && strncmp(name, "[]", 2) == 0)
			return TK_SLICE;
		return TK_STRUCT;
	case DW_TAG_array_type:
		return TK_ARRAY;
	default:
		return TK_OTHER;
	}
}


int gobin_type_add_field(struct gobin_type *t, uint32_t off, struct gobin_type *ft)
{
	struct gobin_field *f = realloc(t->fields, (t->nfields + 1) * sizeof(*f));

	if (!f) {
		gobin_type_free(ft);
		return -ENOMEM;
	}
	t->fields = f;
	f[t->nfields++] = (struct gobin_field){ off, ft, NULL };
	return 0;
}

/* The fields of struct DIE `die` into t (t->kind TK_OTHER when one
 * cannot be typed). */
static void struct_fields(struct tbuild *tb, Dwarf_Die *die,
			  struct gobin_type *t, int depth)
{
	Dwarf_Die sub;

	if (dwarf_child(die, &sub) != 0)
		return;
	do {
		struct gobin_type *ft;
		Dwarf_Die mt;

		if (dwarf_tag(&sub) != DW_TAG_member || !gobin_die_type(&sub, &mt))
			continue;
		ft = gobin_dwarf_type(tb, &mt, depth + 1);
		if (!ft || gobin_type_add_field(t, (uint32_t)gobin_die_udata(
				&sub, DW_AT_data_member_location, 0), ft)) {
			t->kind = TK_OTHER;
			return;
		}
	} while (dwarf_siblingof(&sub, &sub) == 0);
}

#define ARRAY_DIMS 8

/* Element counts (DW_AT_count, else upper bound + 1) of array DIE `die`
 * into n[ARRAY_DIMS], one per subrange (gc writes one array DIE per
 * dimension, gccgo one DIE of several subranges for [2][3]T); returns how
 * many, 0 when none, -1 when more than ARRAY_DIMS. */
static int array_counts(Dwarf_Die *die, uint64_t n[ARRAY_DIMS])
{
	Dwarf_Die sub;
	int k = 0;

	if (dwarf_child(die, &sub) != 0)
		return 0;
	do {
		if (dwarf_tag(&sub) != DW_TAG_subrange_type)
			continue;
		if (k == ARRAY_DIMS)
			return -1;
		n[k] = gobin_die_udata(&sub, DW_AT_count, UINT64_MAX);
		if (n[k] == UINT64_MAX) {
			const uint64_t ub = gobin_die_udata(&sub, DW_AT_upper_bound,
						      UINT64_MAX);
			n[k] = ub == UINT64_MAX ? 0 : ub + 1;
		}
		k++;
	} while (dwarf_siblingof(&sub, &sub) == 0);
	return k;
}

/* Array type t of `count` elements `elem` (taken): its element, and its
 * size and (gccgo leaves arrays unnamed) name when DWARF gives none; t
 * becomes TK_OTHER when it cannot be. */
static void array_of(struct gobin_type *t, uint64_t count, struct gobin_type *elem,
		     int ps)
{
	t->count = count;
	if (!elem || gobin_type_add_field(t, 0, elem)) {
		gobin_type_free(elem);
		t->kind = TK_OTHER;
		return;
	}
	if (!t->size)
		t->size = (uint32_t)(elem->size * t->count);
	if (!t->name[0])
		snprintf(t->name, sizeof(t->name), "[%llu]%.200s",
			 (unsigned long long)t->count, elem->name);
	gobin_type_set_align(t, ps);
}

/* The element and count of array DIE `die` into t; a DIE of several
 * subranges (gccgo's [2][3]T) as arrays of arrays. */
static void array_elem(struct tbuild *tb, Dwarf_Die *die,
		       struct gobin_type *t, int depth)
{
	Dwarf_Die et;
	uint64_t n[ARRAY_DIMS];
	struct gobin_type *elem;
	const int dims = array_counts(die, n);

	elem = gobin_die_type(die, &et) ? gobin_dwarf_type(tb, &et, depth + 1) : NULL;
	if (dims < 1) {
		gobin_type_free(elem);
		t->kind = TK_OTHER;
		return;
	}
	for (int k = dims - 1; k > 0 && elem; k--) {
		struct gobin_type *in = gobin_type_new(TK_ARRAY, 0, "");

		if (in)
			array_of(in, n[k], elem, tb->ptrsize);
		else
			gobin_type_free(elem);
		elem = in;
	}
	array_of(t, n[0], elem, tb->ptrsize);
}

/*
 * Writes type name `n` into name[len] as a user reads it: gc's shapes of
 * a generic instance ("[]go.shape.int_0", Go 1.18-1.20; "go.shape.int",
 * Go 1.21+; cmd/compile/internal/typecheck/subr.go, Shapify) become the
 * underlying type they stand for ("[]int").
 */
static void type_name_clean(const char *n, char *name, size_t len)
{
	static const char shape[] = "go.shape.";
	size_t o = 0;
	bool in_shape = false;

	while (*n && o + 1 < len) {
		if (!strncmp(n, shape, sizeof(shape) - 1)) {
			n += sizeof(shape) - 1;
			in_shape = true;
			continue;
		}
		if (in_shape && *n == '_' && strspn(n + 1, "0123456789") &&
		    strchr("],; )", n[1 + strspn(n + 1, "0123456789")])) {
			n += 1 + strspn(n + 1, "0123456789");
			in_shape = false;
			continue;
		}
		if (strchr("],", *n))
			in_shape = false;
		name[o++] = *n++;
	}
	name[o] = '\0';
}

/*
 * Follows the typedef (const, volatile, restrict) chain from *die to the
 * type it stands for, into *die; Go's own typedefs (map, chan, error...)
 * have go_kind and end the chain. name[len] gets the first name on the
 * way, or "*T" for an unnamed pointer to T; a generic instance's local
 * typedefs of its shaped parameters (".param0", Go 1.18+) are passed
 * through to the type they stand for, named as type_name_clean() writes
 * it. False when the chain ends in no type.
 */
static bool resolve_type(Dwarf_Die *die, char *name, size_t len)
{
	const char *n = dwarf_diename(die);
	uint64_t gk = gobin_die_udata(die, DW_AT_go_kind, 0);
	int tag = dwarf_tag(die);
	Dwarf_Die sub;

	type_name_clean(n && n[0] != '.' ? n : "", name, len);
	while (!gk && (tag == DW_TAG_typedef || tag == DW_TAG_const_type ||
		       tag == DW_TAG_volatile_type || tag == DW_TAG_restrict_type)) {
		if (!gobin_die_type(die, &sub))
			return false;
		*die = sub;
		tag = dwarf_tag(die);
		gk = gobin_die_udata(die, DW_AT_go_kind, 0);
		if (!name[0] && (n = dwarf_diename(die)))
			type_name_clean(n, name, len);
	}
	if (!name[0] && tag == DW_TAG_pointer_type && gobin_die_type(die, &sub) &&
	    (n = dwarf_diename(&sub))) {
		char el[256];

		type_name_clean(n, el, sizeof(el));
		snprintf(name, len, "*%.200s", el);
	}
	return true;
}

/* The kind of the type DIE `die` (resolved) named `name`, and its size in
 * bytes into *size (words of the binary for pointers, strings, slices and
 * interfaces). */
static enum gobin_tk kind_size(const struct tbuild *tb, Dwarf_Die *die,
			       const char *name, uint32_t *size)
{
	const uint64_t gk = gobin_die_udata(die, DW_AT_go_kind, 0);
	const enum gobin_tk kind = gk ? gobin_tk_of_kind(gk) : kind_of_tag(die, name);
	Dwarf_Word bs;

	*size = dwarf_aggregate_size(die, &bs) == 0 ? (uint32_t)bs : 0;
	switch (kind) {
	case TK_PTR: *size = (uint32_t)tb->ptrsize; break;
	case TK_STRING: case TK_IFACE: *size = 2 * (uint32_t)tb->ptrsize; break;
	case TK_SLICE: *size = 3 * (uint32_t)tb->ptrsize; break;
	default: break;
	}
	return kind;
}

/*
 * The element of slice DIE `die` (its first member, gc's "array" or
 * gccgo's "__values", points to it) classified into t->elem_kind and
 * t->elem_size, without building the element's type.
 */
static void slice_elem(const struct tbuild *tb, Dwarf_Die *die,
		       struct gobin_type *t)
{
	Dwarf_Die m, ptr, el;
	char name[256];

	if (dwarf_child(die, &m) != 0 || !gobin_die_type(&m, &ptr) ||
	    !resolve_type(&ptr, name, sizeof(name)) ||
	    dwarf_tag(&ptr) != DW_TAG_pointer_type || !gobin_die_type(&ptr, &el) ||
	    !resolve_type(&el, name, sizeof(name)))
		return;
	t->elem_kind = kind_size(tb, &el, name, &t->elem_size);
}

/*
 * gccgo's interface value, which its DWARF gives as a struct of two
 * words (GCC 12, gcc/go/gofrontend/types.cc, Interface_type): with
 * methods { __methods, __object }, __methods pointing to a table whose
 * first word is the dynamic type's descriptor; empty
 * { __type_descriptor, __object }. Marks `t` (a struct whose first field
 * is named `first`) as one: it stays a struct, its two words its fields.
 */
static void gccgo_iface(struct gobin_type *t, const char *first)
{
	if (!strcmp(first, "__methods"))
		t->iface = GOBIN_GCCGO_METHODS;
	else if (!strcmp(first, "__type_descriptor"))
		t->iface = GOBIN_GCCGO_EMPTY;
	if (t->iface == GOBIN_GCCGO_EMPTY && !t->name[0])
		snprintf(t->name, sizeof(t->name), "interface {}");
}

struct gobin_type *gobin_dwarf_type(struct tbuild *tb, Dwarf_Die *in, int depth)
{
	Dwarf_Die die = *in, sub;
	const char *n;
	char name[256];
	struct gobin_type *t;
	enum gobin_tk kind;
	uint32_t size;

	if (!resolve_type(&die, name, sizeof(name)))
		return gobin_type_new(TK_OTHER, 0, name);
	kind = kind_size(tb, &die, name, &size);
	if (--tb->budget < 0 || depth > 24)
		kind = (kind == TK_STRUCT || kind == TK_ARRAY) ? TK_OTHER : kind;
	t = gobin_type_new(kind, size, name);
	if (!t)
		return NULL;
	if (kind == TK_STRUCT)
		struct_fields(tb, &die, t, depth);
	else if (kind == TK_ARRAY)
		array_elem(tb, &die, t, depth);
	if (t->kind == TK_STRUCT && t->nfields == 3 && !t->name[0] &&
		   dwarf_child(&die, &sub) == 0 && (n = dwarf_diename(&sub)) &&
		   strcmp(n, "__values") == 0) {
		/* gccgo slice: struct { T *__values; int __count, __capacity; } */
		const struct gobin_type *vt = t->fields[0].type;

		t->kind = TK_SLICE;
		if (vt->kind == TK_PTR && vt->name[0] == '*')
			snprintf(t->name, sizeof(t->name), "[]%.200s", vt->name + 1);
	}
	if (t->kind == TK_STRUCT && t->nfields == 2 && dwarf_child(&die, &sub) == 0 &&
	    (n = dwarf_diename(&sub)))
		gccgo_iface(t, n);
	if (t->kind == TK_SLICE)
		slice_elem(tb, &die, t);
	if (t->kind == TK_SLICE && !t->name[0])   /* gccgo: []struct{ a, b int } */
		snprintf(t->name, sizeof(t->name), "[]%s",
			 t->elem_kind == TK_STRUCT ? "struct {...}" : "?");
	gobin_type_set_align(t, tb->ptrsize);
	return t;
}

/* Whether v[0..n) has a result. */
static bool results_in(const struct gobin_param *v, int n)
{
	for (int i = 0; i < n; i++)
		if (v[i].result)
			return true;
	return false;
}

/*
 * Whether v[0..n) has a result named `name`. gc of Go 1.26 and 1.27 writes
 * a named result that a deferred closure captures (and recover() sets)
 * twice, as two identical DW_TAG_formal_parameter entries with
 * DW_AT_variable_parameter 1; Go 1.19 writes it once. A name is unique
 * among a Go function's results, so the second is the same result.
 */
static bool result_named(const struct gobin_param *v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (v[i].result && !strcmp(v[i].name, name))
			return true;
	return false;
}

/* ------------------------------------------------------------ params */

bool gobin_dwarf_func_typed(struct gobin *b, const char *name, uint64_t entry)
{
	Dwarf_Die fn, cu, c;

	if (!gobin_dwarf_open(b) || !gobin_dwarf_subprogram(b, name, entry, &fn) ||
	    !dwarf_diecu(&fn, &cu, NULL, NULL) || dwarf_child(&cu, &c) != 0)
		return false;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_base_type: case DW_TAG_structure_type:
		case DW_TAG_pointer_type: case DW_TAG_typedef:
		case DW_TAG_imported_unit:   /* dwz: types in a partial unit */
			return true;
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* Whether function DIE `fn` has a DW_TAG_variable named `name`. */
static bool has_variable(Dwarf_Die *fn, const char *name)
{
	Dwarf_Die c;
	Dwarf_Attribute a;

	if (!name || dwarf_child(fn, &c) != 0)
		return false;
	do {
		const char *n = dwarf_formstring(dwarf_attr_integrate(&c, DW_AT_name, &a));

		if (dwarf_tag(&c) == DW_TAG_variable && n && !strcmp(n, name))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/*
 * gccgo's named results, which have no $ret variables: the C return type
 * `td` of function `fn` is then an unnamed struct whose members are the
 * results ((n int, err error): members n and err, each also a variable of
 * the function). Appends one result per member to *v (n values) and
 * returns the new count; n unchanged when td is not such a struct (a
 * single result: the caller adds it whole), -ENOMEM.
 */
static int named_results(struct tbuild *tb, Dwarf_Die *fn, Dwarf_Die *td,
			 struct gobin_param **v, int n)
{
	Dwarf_Die m, mt;
	Dwarf_Attribute a;
	int k = 0, members = 0;

	if (dwarf_tag(td) != DW_TAG_structure_type || dwarf_attr(td, DW_AT_name, &a) ||
	    dwarf_child(td, &m) != 0)
		return n;
	do {   /* every member is a result: named as a variable of fn */
		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		if (!has_variable(fn, dwarf_formstring(dwarf_attr_integrate(&m, DW_AT_name, &a))))
			return n;
		members++;
	} while (dwarf_siblingof(&m, &m) == 0);
	if (members < 2)
		return n;
	struct gobin_param *nv = realloc(*v, (size_t)(n + members) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	dwarf_child(td, &m);
	do {
		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		struct gobin_param *r = &nv[n + k];

		memset(r, 0, sizeof(*r));
		snprintf(r->name, sizeof(r->name), "%s",
			 dwarf_formstring(dwarf_attr_integrate(&m, DW_AT_name, &a)));
		r->result = true;
		r->type = gobin_die_type(&m, &mt) ? gobin_dwarf_type(tb, &mt, 0)
						  : gobin_type_new(TK_OTHER, 0, "");
		if (!r->type) {
			while (k--)
				gobin_type_free(nv[n + k].type);
			return -ENOMEM;
		}
		k++;
	} while (dwarf_siblingof(&m, &m) == 0);
	return n + k;
}

void gobin_params_free(struct gobin_param *p, int n, struct gobin_type *ret)
{
	for (int i = 0; p && i < n; i++)
		gobin_type_free(p[i].type);
	free(p);
	gobin_type_free(ret);
}

int gobin_dwarf_params(struct gobin *b, const char *name, uint64_t entry,
		       struct gobin_param **out, struct gobin_type **ret)
{
	struct tbuild tb = { .budget = 4096, .ptrsize = b->ptrsize };
	struct gobin_param *v = NULL;
	struct gobin_param *nv;
	Dwarf_Die fn, child, td;
	int n = 0;

	*out = NULL;
	*ret = NULL;
	if (!gobin_dwarf_open(b))
		return -ENODATA;
	if (!gobin_dwarf_subprogram(b, name, entry, &fn))
		return -ENOENT;
	if (b->compiler == GOBIN_GCCGO && gobin_die_type(&fn, &td))
		*ret = gobin_dwarf_type(&tb, &td, 0);
	if (dwarf_child(&fn, &child) != 0)
		return 0;
	do {
		const int tag = dwarf_tag(&child);
		Dwarf_Attribute attr;
		const char *pname;
		bool result = false;

		pname = dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_name, &attr));
		if (tag == DW_TAG_formal_parameter) {
			bool flag = false;

			if (dwarf_attr_integrate(&child, DW_AT_variable_parameter, &attr))
				dwarf_formflag(&attr, &flag);
			result = flag && b->compiler == GOBIN_GC;
		} else if (tag == DW_TAG_variable && b->compiler == GOBIN_GCCGO &&
			   pname && strncmp(pname, "$ret", 4) == 0) {
			result = true;
		} else {
			continue;
		}
		if (result && pname && *pname && strcmp(pname, "_") &&
		    result_named(v, n, pname))
			continue;
		nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv)
			goto oom;
		v = nv;
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].name, sizeof(v[n].name), "%s", pname ? pname : "");
		v[n].result = result;
		v[n].type = gobin_die_type(&child, &td) ? gobin_dwarf_type(&tb, &td, 0) :
						    gobin_type_new(TK_OTHER, 0, "");
		if (!v[n].type)
			goto oom;
		n++;
	} while (dwarf_siblingof(&child, &child) == 0);
	if (*ret && !results_in(v, n) && gobin_die_type(&fn, &td)) {
		/* gccgo: named results have no $ret variables; several are
		 * the members of the C return struct */
		const int k = named_results(&tb, &fn, &td, &v, n);

		if (k < 0)
			goto oom;
		if (k > n) {
			*out = v;
			return k;
		}
		/* a single one (a closure may share it: a deferred
		 * recover() sets it) is the C return value */
		nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv)
			goto oom;
		v = nv;
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].name, sizeof(v[n].name), "~r0");
		v[n].result = true;
		v[n].type = gobin_dwarf_type(&tb, &td, 0);
		if (!v[n].type)
			goto oom;
		n++;
	}
	*out = v;
	return n;
oom:
	gobin_params_free(v, n, *ret);
	*ret = NULL;
	return -ENOMEM;
}

/*
 * The constant that parameter `die` of a clone is wherever its location
 * list places it, into *out: each expression of the list a DW_OP_litN or
 * DW_OP_const* and DW_OP_stack_value, all of one value. False when there
 * is none, or another expression.
 */
static bool const_value(Dwarf_Die *die, int64_t *out)
{
	Dwarf_Attribute attr;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	Dwarf_Op *e;
	size_t n;
	int k = 0;

	if (!dwarf_attr(die, DW_AT_location, &attr))
		return false;
	while ((off = dwarf_getlocations(&attr, off, &base, &start, &end, &e,
					 &n)) > 0) {
		const uint8_t op = n == 2 && e[1].atom == DW_OP_stack_value ?
				   e[0].atom : 0;
		int64_t v;

		if (op >= DW_OP_lit0 && op <= DW_OP_lit31)
			v = op - DW_OP_lit0;
		else if ((op >= DW_OP_const1u && op <= DW_OP_consts))
			v = (int64_t)e[0].number; /* libdw sign-extends *s */
		else
			return false;
		if (k++ && v != *out)
			return false;
		*out = v;
	}
	return k > 0;
}

/*
 * Constant v as a value of a's type: GCC writes the bits that matter
 * ("DW_OP_const1s -1" for a uint16 65535); its low a->size bytes,
 * sign-extended for a signed integer.
 */
static int64_t fit(int64_t v, const struct gobin_arg *a)
{
	const unsigned bits = a->size * 8;

	if (!bits || bits >= 64)
		return v;
	v = (int64_t)((uint64_t)v & ((1ull << bits) - 1));
	if (a->type == GTR_TYPE_INT && (v >> (bits - 1)) & 1)
		v = (int64_t)((uint64_t)v | ~((1ull << bits) - 1));
	return v;
}

int gobin_dwarf_clone_args(struct gobin *b, const struct gobin_func *f,
			   struct gobin_arg *out, int max)
{
	Dwarf_Die fn, dies[GTR_MAX_ARGS];
	Dwarf_Addr lo;
	const ssize_t fi = gobin_func_index_at(b, f->entry);
	int n;

	if (!gobin_dwarf_open(b))
		return -ENODATA;
	if (fi < 0 || !gobin_dwarf_subprogram(b, f->name, f->entry, &fn) ||
	    dwarf_lowpc(&fn, &lo) != 0 || lo != f->entry)
		return -ENOENT;
	/* GCC writes a clone as a concrete DIE of the function it copies
	 * (DW_AT_abstract_origin): its parameters are the declaration's, in
	 * an order of its own, and only those the clone receives have a
	 * location */
	n = gobin_die_params(&fn, dies, max < GTR_MAX_ARGS ? max : GTR_MAX_ARGS);
	/* at entry the CFA is SP + ptrsize */
	n = n ? gobin_dwarf_vars_at(b, (size_t)fi, f->entry, 0, false, dies,
				    NULL, NULL, n, out) : 0;
	for (int i = 0; i < n; i++) {
		bool none = out[i].npieces > 0;

		for (uint32_t k = 0; k < out[i].npieces; k++)
			none = none && out[i].pieces[k].kind == GOBIN_LOC_NONE;
		out[i].folded = none && const_value(&dies[i], &out[i].folded_value);
		if (out[i].folded)
			out[i].folded_value = fit(out[i].folded_value, &out[i]);
	}
	return n;
}

/* ------------------------------------------------------------ runtime.g */

static int goid_cb(Dwarf_Die *die, void *ctx)
{
	int *off = ctx;
	const char *name;
	Dwarf_Die m;

	if (dwarf_tag(die) != DW_TAG_structure_type)
		return 0;
	name = dwarf_diename(die);
	if (!name || strcmp(name, "runtime.g") != 0 || dwarf_child(die, &m) != 0)
		return 0;
	do {
		const char *mn = dwarf_diename(&m);

		if (dwarf_tag(&m) == DW_TAG_member && mn && strcmp(mn, "goid") == 0) {
			*off = (int)gobin_die_udata(&m, DW_AT_data_member_location, (uint64_t)-1);
			return 1;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return 0;
}

int gobin_dwarf_goid_offset(struct gobin *b)
{
	int off = -1;
	Dwarf *dw = gobin_dwarf_open(b);

	if (!dw)
		return -1;
	gobin_dwarf_each_top(dw, goid_cb, &off);
	return off;
}
