/* SPDX-License-Identifier: MIT */
/*
 * Private to dwarf.c, dwinline.c, fieldpath.c and rtypes.c: the DWARF
 * handle of a gobin (libdw), the type reading fieldpath.c shares with
 * dwarf.c, and the locating of values dwarf.c shares with dwinline.c.
 */
#ifndef GOTRACE_DWARF_INT_H
#define GOTRACE_DWARF_INT_H

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "gobin_int.h"

/* The DWARF of `b` (its own, or its separate debug file's), opened and
 * indexed on first use; NULL when it has none. */
Dwarf *gobin_dwarf_open(struct gobin *b);

/* Calls fn for each top-level DIE of every CU of `dw`; stops when fn
 * returns non-zero and returns that value, else 0. */
int gobin_dwarf_each_top(Dwarf *dw, int (*fn)(Dwarf_Die *die, void *ctx),
			 void *ctx);

/* Go's DWARF attribute of a type's reflect.Kind (cmd/internal/dwarf). */
#define DW_AT_go_kind 0x2900

/* State of building gobin_types from DWARF. */
struct tbuild {
	int budget; /* DIEs left to expand; big types become TK_OTHER */
	int ptrsize;
};

/* The unsigned attribute `at` of `die`, or dflt when it has none. */
uint64_t gobin_die_udata(Dwarf_Die *die, unsigned at, uint64_t dflt);

/* The DIE DW_AT_type of `die` refers to, into *out; false when none. */
bool gobin_die_type(Dwarf_Die *die, Dwarf_Die *out);

/* The subprogram DIE of the function at `entry` (else named `name`) of
 * `b`, whose DWARF is open, into *out; false when DWARF has none. */
bool gobin_dwarf_subprogram(struct gobin *b, const char *name, uint64_t entry,
			    Dwarf_Die *out);

/* The gobin_type of type DIE `in` (typedefs followed, shapes named as
 * their types), nested `depth` deep; NULL when out of memory. */
struct gobin_type *gobin_dwarf_type(struct tbuild *tb, Dwarf_Die *in, int depth);

/*
 * dwinline.c: the parameters (results aside: DW_AT_variable_parameter)
 * of function DIE `fn`, in the order its declaration gives them, into
 * dies[max]. For a concrete DIE of a function declared elsewhere
 * (DW_AT_abstract_origin: an inlined copy, a GCC clone), each is the
 * concrete DIE's own child for it when there is one (its place), else
 * the declaration's (its name and type, no place: unavailable). Returns
 * the count.
 */
int gobin_die_params(Dwarf_Die *fn, Dwarf_Die *dies, int max);

/*
 * dwinline.c: values of the variables (or parameters) dies[n] of
 * funcs[fi] at pc, into out[n]: names and types from DWARF (but where
 * none[i]: no DIE, names[i] untyped and nowhere; names and none may be
 * NULL), the number of pieces as the calling convention of funcs[fi]
 * splits such a value, their places from the location lists at pc (amd64;
 * `sp`: bytes from SP at pc up to SP at entry, so the CFA is SP + sp +
 * the architecture's ra_size; negative when unknown, and then stack slots
 * are nowhere; a value placed whole in memory gets a piece per part of
 * its type, but for `inlined`, an inlined copy's values, only a value of
 * one piece does; pieces found nowhere are GOBIN_LOC_NONE, the others
 * kept). n <= GTR_MAX_ARGS. Returns the count written, or -ENOMEM.
 */
int gobin_dwarf_vars_at(struct gobin *b, size_t fi, uint64_t pc, int32_t sp,
			bool inlined, Dwarf_Die *dies, char *const *names,
			const bool *none, int n, struct gobin_arg *out);

#endif /* GOTRACE_DWARF_INT_H */
