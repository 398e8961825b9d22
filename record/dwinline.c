// SPDX-License-Identifier: MIT
/*
 * Inlined copies from DWARF (libdw): each DW_TAG_inlined_subroutine
 * under a concrete function, with its DW_AT_abstract_origin (the inlined
 * function), its address ranges (low_pc/high_pc or DW_AT_ranges; Go
 * writes ranges) and DW_AT_entry_pc (GCC writes one), DW_AT_call_file and
 * DW_AT_call_line, and its
 * parameters where their location lists place them at the copy's first
 * address (cmd/compile/internal/dwarfgen, putInlinedFunc of
 * cmd/internal/dwarf/dwarf.go).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_int.h"
#include "inl_int.h"

/* x86-64 psABI DWARF register numbers 0-15 as gobin_mreg. */
static const uint8_t amd64_dwreg[16] = {
	GOBIN_MREG_RAX, GOBIN_MREG_RDX, GOBIN_MREG_RCX, GOBIN_MREG_RBX,
	GOBIN_MREG_RSI, GOBIN_MREG_RDI, GOBIN_MREG_RBP, GOBIN_MREG_RSP,
	GOBIN_MREG_R8, GOBIN_MREG_R9, GOBIN_MREG_R10, GOBIN_MREG_R11,
	GOBIN_MREG_R12, GOBIN_MREG_R13, GOBIN_MREG_R14, GOBIN_MREG_R15,
};

/* The pieces of one location expression: at most GOBIN_MAX_PIECES. */
struct loc {
	struct gobin_piece p[GOBIN_MAX_PIECES];
	int n;
	bool whole;   /* one place without DW_OP_piece: its size is the value's */
};

/*
 * Parses a location expression at pc into l: DW_OP_regN / regx (amd64
 * integer registers), DW_OP_fbreg N or DW_OP_call_frame_cfa [+N] (the
 * frame base of Go's DWARF is the CFA, SP + cfa at pc), each optionally
 * ended by DW_OP_piece; a DW_OP_piece with no location before it is a
 * piece the compiler keeps nowhere (GOBIN_LOC_NONE: a slice's cap in an
 * optimized build). `cfa`: bytes from SP to the CFA at pc. False for
 * anything else (the value is then unavailable).
 */
static bool parse_loc(const Dwarf_Op *e, size_t n, int64_t cfa, struct loc *l)
{
	struct gobin_piece cur = { 0 };
	bool have = false;

	l->n = 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t op = e[i].atom;

		if (op >= DW_OP_reg0 && op <= DW_OP_reg15) {
			cur = (struct gobin_piece){ .kind = GOBIN_LOC_REG,
				.mreg = amd64_dwreg[op - DW_OP_reg0], .size = 8 };
			have = true;
		} else if (op == DW_OP_regx && e[i].number < 16) {
			cur = (struct gobin_piece){ .kind = GOBIN_LOC_REG,
				.mreg = amd64_dwreg[e[i].number], .size = 8 };
			have = true;
		} else if (op == DW_OP_fbreg) {
			cur = (struct gobin_piece){ .kind = GOBIN_LOC_STACK,
				.offset = (int32_t)(cfa + (int64_t)e[i].number), .size = 8 };
			have = true;
		} else if (op == DW_OP_call_frame_cfa) {
			cur = (struct gobin_piece){ .kind = GOBIN_LOC_STACK,
				.offset = (int32_t)cfa, .size = 8 };
			have = true;
		} else if (op == DW_OP_plus_uconst && have && cur.kind == GOBIN_LOC_STACK) {
			cur.offset += (int32_t)e[i].number;
		} else if (op == DW_OP_consts && i + 1 < n && e[i + 1].atom == DW_OP_plus &&
			   have && cur.kind == GOBIN_LOC_STACK) {
			cur.offset += (int32_t)(int64_t)e[i].number;
			i++;
		} else if (op == DW_OP_piece) {
			if (l->n == GOBIN_MAX_PIECES || e[i].number > 8)
				return false;
			if (!have)
				cur = (struct gobin_piece){ .kind = GOBIN_LOC_NONE };
			cur.size = (uint8_t)e[i].number;
			l->p[l->n++] = cur;
			have = false;
		} else {
			return false;
		}
	}
	l->whole = have && l->n == 0;
	if (l->whole)
		l->p[l->n++] = cur;
	return l->n > 0 && (l->whole || !have);
}

/*
 * The operations of location attribute `attr` when it is a block (not a
 * location list) into ops[max], as parse_loc() reads them: registers,
 * DW_OP_fbreg, DW_OP_call_frame_cfa, DW_OP_plus_uconst, DW_OP_consts,
 * DW_OP_plus, DW_OP_piece. Returns the count, 0 for anything else.
 */
static size_t block_ops(Dwarf_Attribute *attr, Dwarf_Op *ops, size_t max)
{
	Dwarf_Block bl;
	size_t i = 0, n = 0;

	if (dwarf_formblock(attr, &bl) != 0)
		return 0;
	while (i < bl.length && n < max) {
		const uint8_t op = bl.data[i++];

		ops[n] = (Dwarf_Op){ .atom = op };
		if (op == DW_OP_fbreg || op == DW_OP_consts || op == DW_OP_plus_uconst ||
		    op == DW_OP_piece || op == DW_OP_regx) {
			if (!inl_leb128(bl.data, bl.length, &i, op == DW_OP_fbreg ||
					op == DW_OP_consts, &ops[n].number))
				return 0;
		} else if (!(op >= DW_OP_reg0 && op <= DW_OP_reg31) &&
			 op != DW_OP_call_frame_cfa && op != DW_OP_plus)
			return 0;
		n++;
	}
	return i == bl.length ? n : 0;
}

/*
 * The location of `die` at pc into *expr, *len: from its location list,
 * or the one expression for all of its scope (a DW_FORM_block1, which
 * libdw refuses in a DWARF 5 unit: decoded into ops[8]).
 */
static bool loc_at(Dwarf_Die *die, uint64_t pc, Dwarf_Op *ops,
		   Dwarf_Op **expr, size_t *len)
{
	Dwarf_Attribute attr;

	if (!dwarf_attr(die, DW_AT_location, &attr))
		return false;
	if (dwarf_getlocation_addr(&attr, pc, expr, len, 1) == 1)
		return true;
	*expr = ops;
	*len = block_ops(&attr, ops, 8);
	return *len > 0;
}

/* State of one walk over the DWARF of a binary. */
struct walk {
	struct gobin *b;
	struct gobin_inl *l;
	int err;
};

/*
 * Points the pieces of `a` (as its ABI lays the value out) where location
 * l places them at a pc: piece by piece when l lists as many, of the
 * same sizes; a value l places whole in memory (at the CFA in a -N -l
 * build) by its type t's layout from there, unless `inlined` (the value
 * is an inlined copy's, where gc writes one place without DW_OP_piece
 * for a struct an optimized build keeps in parts: the place of one of
 * them); anything else, or l NULL, unavailable (GOBIN_LOC_NONE, each
 * piece's size kept).
 */
static void place(const struct gobin *b, struct gobin_arg *a, struct loc *l,
		  const struct gobin_type *t, bool inlined)
{
	const uint32_t n = a->npieces;
	bool same = l && l->n == (int)n;

	if (l && l->whole && l->p[0].kind == GOBIN_LOC_STACK && (!inlined || n == 1)) {
		gobin_abi_stack_pieces(t, l->p[0].offset, b->ptrsize, a);
		if (a->npieces)
			return;
		a->npieces = n;
		same = false;
	}
	if (same && l->whole)
		l->p[0].size = a->pieces[0].size;
	for (uint32_t k = 0; same && k < n; k++)
		same = l->p[k].size == a->pieces[k].size;
	for (uint32_t k = 0; k < n; k++)
		a->pieces[k] = same ? l->p[k] :
			(struct gobin_piece){ .kind = GOBIN_LOC_NONE,
					      .size = a->pieces[k].size };
}

int gobin_dwarf_vars_at(struct gobin *b, size_t fi, uint64_t pc, int32_t sp,
			bool inlined, Dwarf_Die *dies, char *const *names,
			const bool *none, int n, struct gobin_arg *out)
{
	struct tbuild tb = { .budget = 1024, .ptrsize = b->ptrsize };
	struct gobin_param p[GTR_MAX_ARGS] = { 0 };
	struct loc locs[GTR_MAX_ARGS];
	bool ok[GTR_MAX_ARGS] = { false };
	int np = 0, rc = 0;

	for (; np < n && np < GTR_MAX_ARGS; np++) {
		Dwarf_Op *expr = NULL, ops[8];
		Dwarf_Die td;
		size_t len = 0;

		const bool die = !none || !none[np];

		memset(&p[np], 0, sizeof(p[np]));
		snprintf(p[np].name, sizeof(p[np].name), "%s", !die ? names[np] :
			 dwarf_diename(&dies[np]) ? dwarf_diename(&dies[np]) : "");
		p[np].type = die && gobin_die_type(&dies[np], &td) ?
			     gobin_dwarf_type(&tb, &td, 0) : gobin_type_new(TK_OTHER, 0, "");
		if (!p[np].type) {
			rc = -ENOMEM;
			break;
		}
		ok[np] = die && b->machine == EM_X86_64 && sp >= 0 &&
			 loc_at(&dies[np], pc, ops, &expr, &len) &&
			 parse_loc(expr, len, sp + gt_arch_of(b->arch)->ra_size,
				   &locs[np]);
	}
	if (!rc)
		rc = gobin_params_to_args(b, &b->funcs[fi], p, np, NULL, false, out, np);
	for (int i = 0; i < rc; i++)
		place(b, &out[i], ok[i] ? &locs[i] : NULL, p[i].type, inlined);
	for (int i = 0; i < np; i++)
		gobin_type_free(p[i].type);
	return rc;
}

/*
 * The DW_TAG_formal_parameter child of `fn` whose DW_AT_abstract_origin
 * is the DIE at offset `origin`, into *out; false when none.
 */
static bool concrete_param(Dwarf_Die *fn, Dwarf_Off origin, Dwarf_Die *out)
{
	Dwarf_Attribute attr;
	Dwarf_Die c, o;

	if (dwarf_child(fn, &c) != 0)
		return false;
	do {
		if (dwarf_tag(&c) == DW_TAG_formal_parameter &&
		    dwarf_attr(&c, DW_AT_abstract_origin, &attr) &&
		    dwarf_formref_die(&attr, &o) && dwarf_dieoffset(&o) == origin) {
			*out = c;
			return true;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

int gobin_die_params(Dwarf_Die *fn, Dwarf_Die *dies, int max)
{
	Dwarf_Attribute attr;
	Dwarf_Die decl, child;
	int n = 0;

	if (!dwarf_attr(fn, DW_AT_abstract_origin, &attr) ||
	    !dwarf_formref_die(&attr, &decl))
		decl = *fn;
	if (dwarf_child(&decl, &child) != 0)
		return 0;
	do {
		bool res = false;

		if (dwarf_tag(&child) != DW_TAG_formal_parameter)
			continue;
		if (dwarf_attr_integrate(&child, DW_AT_variable_parameter, &attr))
			dwarf_formflag(&attr, &res);
		if (res)
			continue;
		if (n == max)
			break;
		dies[n] = child;   /* no place of its own: unavailable */
		if (dwarf_dieoffset(&decl) != dwarf_dieoffset(fn))
			concrete_param(fn, dwarf_dieoffset(&child), &dies[n]);
		n++;
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

/*
 * The parameters of inlined subroutine `die` into c: every one its
 * function declares, each where the copy's location list places it at
 * c->lo, else unavailable there (typed from the declaration).
 */
static void copy_params(struct walk *w, Dwarf_Die *die, struct inl_copy *c)
{
	Dwarf_Die v[GTR_MAX_ARGS];
	int n = gobin_die_params(die, v, GTR_MAX_ARGS);

	c->params = n ? calloc((size_t)n, sizeof(*c->params)) : NULL;
	if (c->params) {
		n = gobin_dwarf_vars_at(w->b, c->outer, c->lo,
					inl_pcvalue(w->b, c->outer, INL_TAB_SP, c->lo),
					true, v, NULL, NULL, n, c->params);
		c->nparams = n > 0 ? n : 0;
	}
}

/* A variable or parameter named `name` directly in scope `scope`. */
static bool var_in(Dwarf_Die *scope, const char *name, Dwarf_Die *out)
{
	Dwarf_Die child;

	if (dwarf_child(scope, &child) != 0)
		return false;
	do {
		const int tag = dwarf_tag(&child);
		const char *n;

		if ((tag == DW_TAG_variable || tag == DW_TAG_formal_parameter) &&
		    (n = dwarf_diename(&child)) && !strcmp(n, name)) {
			*out = child;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* Most scopes site_scopes() follows: the function and nested blocks. */
#define SITE_SCOPES 32

/*
 * The scopes of function `fn` that hold pc into sc[SITE_SCOPES],
 * innermost first and the function last: lexical blocks and inlined
 * subroutines, down from fn by DW_AT_ranges (Go writes no
 * .debug_aranges, and a pc of the function's own code is in no child).
 * The walk outwards stops at the innermost inlined subroutine: names
 * there are the inlined function's, not its caller's. Returns the count.
 */
static int site_scopes(Dwarf_Die *fn, uint64_t pc, Dwarf_Die *sc)
{
	Dwarf_Die chain[SITE_SCOPES], child;
	int n = 1, k = 0;

	chain[0] = *fn;
	while (n < SITE_SCOPES && dwarf_child(&chain[n - 1], &child) == 0) {
		bool in = false;

		do {
			const int tag = dwarf_tag(&child);

			in = (tag == DW_TAG_lexical_block ||
			      tag == DW_TAG_inlined_subroutine) &&
			     dwarf_haspc(&child, pc) == 1;
		} while (!in && dwarf_siblingof(&child, &child) == 0);
		if (!in)
			break;
		chain[n++] = child;
	}
	while (n > 0) {
		sc[k++] = chain[--n];
		if (dwarf_tag(&chain[n]) == DW_TAG_inlined_subroutine)
			break;
	}
	return k;
}

/*
 * The declaration of variable or parameter `name` in the function
 * inlined at `copy` (its DW_AT_abstract_origin), into *out: one the copy
 * kept no DIE of, as the compiler placed it nowhere. False when that
 * function declares no such name.
 */
static bool var_in_origin(Dwarf_Die *copy, const char *name, Dwarf_Die *out)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin;

	return dwarf_tag(copy) == DW_TAG_inlined_subroutine &&
	       dwarf_attr(copy, DW_AT_abstract_origin, &attr) &&
	       dwarf_formref_die(&attr, &origin) && var_in(&origin, name, out);
}

/* Whether `name` escaped to the heap in scopes sc[n]: Go's DWARF then
 * names only its address, "&name" (cmd/compile/internal/dwarfgen). */
static bool escaped(Dwarf_Die *sc, int n, const char *name)
{
	char amp[GOBIN_PATH_LEN];
	Dwarf_Die v;

	snprintf(amp, sizeof(amp), "&%s", name);
	for (int k = 0; k < n; k++)
		if (var_in(&sc[k], amp, &v))
			return true;
	return false;
}

int gobin_site_vars(const struct gobin *cb, const struct gobin_site *s,
		    char *const *names, int n, struct gobin_arg *out,
		    char *err, size_t errlen)
{
	struct gobin *b = (struct gobin *)cb;
	Dwarf_Die fn, scopes[SITE_SCOPES], v[GTR_MAX_ARGS];
	bool none[GTR_MAX_ARGS];
	const ssize_t fi = gobin_func_index_at(b, s->addr);
	Dwarf *dw = b->compiler == GOBIN_GC ? gobin_dwarf_open(b) : NULL;
	int ns, i;

	if (!dw || fi < 0) {
		snprintf(err, errlen, "%s has no DWARF for the code at %#llx: "
			 "no variable can be named there", gobin_path(b),
			 (unsigned long long)s->addr);
		return -ENODATA;
	}
	/* in a function the DWARF leaves out a name is nowhere, untyped; in
	 * an inlined copy that kept no DIE of a variable its function
	 * declares, nowhere, typed as the declaration says: unavailable */
	ns = gobin_dwarf_subprogram(b, b->funcs[fi].name, b->funcs[fi].entry, &fn) ?
	     site_scopes(&fn, s->addr, scopes) : 0;
	for (i = 0; i < n && i < GTR_MAX_ARGS; i++) {
		int k = 0;

		while (k < ns && !var_in(&scopes[k], names[i], &v[i]))
			k++;
		none[i] = !ns;
		if (!ns || k < ns || var_in_origin(&scopes[ns - 1], names[i], &v[i]))
			continue;
		snprintf(err, errlen, "no variable or parameter '%s' is in "
			 "scope at %#llx in %s (DWARF)%s", names[i],
			 (unsigned long long)s->addr, s->func,
			 escaped(scopes, ns, names[i]) ? "; it escaped to the heap "
			 "and DWARF holds only its address, which a line probe "
			 "does not follow" : "");
		return -ENOENT;
	}
	return gobin_dwarf_vars_at(b, (size_t)fi, s->addr,
				   inl_pcvalue(b, (size_t)fi, INL_TAB_SP, s->addr),
				   s->inlined, v, names, none, i, out);
}

/* The call file of `die` through the line table of its CU, "" unknown. */
static const char *call_file(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx;
	Dwarf_Die cu;
	size_t nfiles;
	const char *f;

	if (!dwarf_attr(die, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &idx) ||
	    !dwarf_diecu(die, &cu, NULL, NULL) ||
	    dwarf_getsrcfiles(&cu, &files, &nfiles) || idx >= nfiles)
		return "";
	f = dwarf_filesrc(files, idx, NULL, NULL);
	return f ? f : "";
}

/* Adds inlined subroutine `die` as a copy. */
static void add_copy(struct walk *w, Dwarf_Die *die)
{
	Dwarf_Addr base, start, end, lo = UINT64_MAX, hi = 0;
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	struct inl_copy c = { .call_file = "" };
	ptrdiff_t off = 0;
	ssize_t fi;

	if (!dwarf_attr(die, DW_AT_abstract_origin, &attr) ||
	    !dwarf_formref_die(&attr, &origin) || !(c.name = dwarf_diename(&origin)))
		return;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (start < lo)
			lo = start;
		if (end > hi)
			hi = end;
	}
	/* where the copy starts when the compiler says so (GCC), else its
	 * lowest address (gc writes no DW_AT_entry_pc) */
	if (dwarf_attr(die, DW_AT_entry_pc, &attr) &&
	    dwarf_formaddr(&attr, &start) == 0 && start >= lo && start < hi)
		lo = start;
	fi = lo < hi ? gobin_func_index_at(w->b, lo) : -1;
	if (fi < 0)
		return;
	c.outer = (size_t)fi;
	c.lo = lo;
	c.hi = hi;
	c.call_file = call_file(die);
	c.call_line = (int)gobin_die_udata(die, DW_AT_call_line, 0);
	copy_params(w, die, &c);
	if (!inl_add(w->l, &c)) {
		free(c.params);
		w->err = -ENOMEM;
	}
}

/* Adds the inlined subroutines under `die`, at any depth. */
static void walk_children(struct walk *w, Dwarf_Die *die, int depth)
{
	Dwarf_Die child;

	if (depth > 32 || dwarf_child(die, &child) != 0)
		return;
	do {
		const int tag = dwarf_tag(&child);

		if (tag == DW_TAG_inlined_subroutine)
			add_copy(w, &child);
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block)
			walk_children(w, &child, depth + 1);
	} while (!w->err && dwarf_siblingof(&child, &child) == 0);
}

static int top_cb(Dwarf_Die *die, void *ctx)
{
	struct walk *w = ctx;
	Dwarf_Addr lo;

	if (dwarf_tag(die) == DW_TAG_subprogram && dwarf_lowpc(die, &lo) == 0)
		walk_children(w, die, 0);
	return w->err;
}

int inl_from_dwarf(struct gobin *b, struct gobin_inl *l)
{
	struct walk w = { .b = b, .l = l };
	Dwarf *dw;

	if (!(dw = gobin_dwarf_open(b)))
		return -ENODATA;
	gobin_dwarf_each_top(dw, top_cb, &w);
	return w.err;
}

static int u64_cmp(const void *x, const void *y)
{
	const uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;

	return a < c ? -1 : a > c;
}

int inl_dwarf_stmts(struct gobin *b, size_t fi, uint64_t **out)
{
	const struct gobin_func *f = &b->funcs[fi];
	Dwarf_Die fn, cu;
	Dwarf_Lines *lines;
	uint64_t *v = NULL;
	size_t nl, n = 0, cap = 0;

	*out = NULL;
	if (!gobin_dwarf_open(b) || !gobin_dwarf_subprogram(b, f->name, f->entry, &fn) ||
	    !dwarf_diecu(&fn, &cu, NULL, NULL) || dwarf_getsrclines(&cu, &lines, &nl))
		return 0;
	for (size_t i = 0; i < nl; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		bool stmt = false;

		if (!l || dwarf_lineaddr(l, &a) || a < f->entry || a >= f->end ||
		    dwarf_linebeginstatement(l, &stmt) || !stmt)
			continue;
		if (n == cap) {
			uint64_t *nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));

			if (!nv) {
				free(v);
				return 0;
			}
			v = nv;
		}
		v[n++] = a;
	}
	if (n)
		qsort(v, n, sizeof(*v), u64_cmp);
	*out = v;
	return (int)n;
}
