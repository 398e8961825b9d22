/* SPDX-License-Identifier: MIT */
/*
 * Private to dwarf.c and rtypes.c: the DWARF handle of a gobin (libdw).
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

#endif /* GOTRACE_DWARF_INT_H */
