/* SPDX-License-Identifier: MIT */
/*
 * Private to inltree.c, inline.c and dwinline.c: the per-pc tables of a
 * pclntab (inltree.c) and the list of inlined copies built from them or
 * from DWARF (inline.c, dwinline.c).
 */
#ifndef GOTRACE_INL_INT_H
#define GOTRACE_INL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "gobin_int.h"
#include "gofacts.h"

/* One run of a pc-value table: val holds for pcs in [lo, hi). */
struct inl_run {
	uint64_t lo, hi;
	int32_t val;
};

/* Reads a LEB128 number (signed or not) at p[*i], before p[n], into
 * *out; false when it runs past p[n] or 64 bits. */
bool inl_leb128(const uint8_t *p, size_t n, size_t *i, bool sign, uint64_t *out);

/* Tables inl_tab() reads besides pcdata[k]: _func.pcfile, pcln, pcsp. */
#define INL_TAB_FILE (-1)
#define INL_TAB_LINE (-2)
#define INL_TAB_SP (-3)    /* _func.pcsp: bytes of frame at pc */

/* pctab offset of table k (a PCDATA index or INL_TAB_*)
 * of funcs[fi]; 0 when it has none. */
uint32_t inl_tab(const struct gobin *b, size_t fi, int k);

/*
 * Decodes the pc-value table at pctab offset `tab` for a function at
 * [entry, end) into *out (malloc'd, pcs ascending; the value starts at
 * -1 as the runtime's pcvalue does). Returns the number of runs, 0 for
 * none, -ENOMEM.
 */
int inl_pcruns(const struct gobin *b, uint32_t tab, uint64_t entry,
	       uint64_t end, struct inl_run **out);

/* The value of runs r[n] at pc, -1 outside them. */
int32_t inl_run_at(const struct inl_run *r, int n, uint64_t pc);

/* Value of table k of funcs[fi] at pc (a line, a file number), or -1. */
int32_t inl_pcvalue(const struct gobin *b, size_t fi, int k, uint64_t pc);

/* File name of file number `fileno` of funcs[fi]'s compilation unit. */
const char *inl_file(const struct gobin *b, size_t fi, int32_t fileno);

/* The inline tree of one function. */
struct inl_tree {
	const struct gofact_inltree *t;
	uint64_t va;              /* link-time address of node 0 */
	uint64_t entry;           /* the function's entry */
	struct inl_run *runs;     /* PCDATA_InlTreeIndex */
	int nruns;
	bool unreloc;             /* inl_tree() false: code is marked inlined
				     but the tree's address (Go 1.16-1.17,
				     a PIE) is a relocation gotrace cannot
				     apply */
};

/* Reads the inline tree of funcs[fi]: false when it has none (or the
 * binary's layout is unknown, or out->unreloc); free with
 * inl_tree_free(). */
bool inl_tree(const struct gobin *b, size_t fi, struct inl_tree *out);
void inl_tree_free(struct inl_tree *t);

/* The called function's name of node i, NULL when malformed. */
const char *inl_node_name(const struct gobin *b, const struct inl_tree *t,
			  int32_t i);

/* The address of an instruction at the call site of node i (parentPc),
 * 0 when malformed. */
uint64_t inl_node_callpc(const struct gobin *b, const struct inl_tree *t,
			 int32_t i);

/* The node node i was inlined into, -1 for the function itself: its
 * parent field up to Go 1.19, else the node holding its parentPc. */
int32_t inl_node_parent(const struct gobin *b, const struct inl_tree *t,
			int32_t i);

/* An inlined copy: function `name` inlined into funcs[outer]. */
struct inl_copy {
	const char *name;         /* owned by the gobin */
	size_t outer;             /* index in b->funcs */
	uint64_t lo, hi;          /* lowest address, end of the highest range */
	uint64_t callpc;          /* an instruction of the call site, 0 unknown */
	const char *call_file;    /* "" unknown */
	int call_line;            /* 0 unknown */
	int nparams;              /* DWARF: parameters located at lo */
	struct gobin_arg *params; /* malloc'd, NULL */
};

/* All inlined copies of a binary, sorted by name then address. */
struct gobin_inl {
	struct inl_copy *v;
	size_t n, cap;
	const char *source;       /* "DWARF" or "pclntab" */
	size_t unreloc;           /* pclntab: functions whose tree is a
				     relocation gotrace cannot apply */
	char gap[128];            /* gobin_inline_gap()'s text */
};

/* Appends a copy to l; false when out of memory. */
bool inl_add(struct gobin_inl *l, const struct inl_copy *c);

/* dwinline.c: the addresses of funcs[fi] where a statement begins
 * (is_stmt rows of its compilation unit's DWARF line table), ascending,
 * into *out (malloc'd). Returns the count, 0 without DWARF for it. */
int inl_dwarf_stmts(struct gobin *b, size_t fi, uint64_t **out);

/* dwinline.c: the inlined copies DWARF describes, with their parameters
 * where location lists place them at the copy's first address. 0, or
 * -ENODATA without DWARF, -ENOMEM. */
int inl_from_dwarf(struct gobin *b, struct gobin_inl *l);

#endif
