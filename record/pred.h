/* SPDX-License-Identifier: MIT */
/*
 * Record-time predicates: the part of a probe's "(PREDICATE)" that the BPF
 * program can evaluate itself, so that hot functions spare the disk:
 * comparisons of captured values with integer constants, joined by &&.
 *   goarg1 == 42 && len(goarg2) > 100 && n != -1
 * Constants are written as spec/FILTER.md writes integers (decimal without
 * leading zeros, 0x hex, -2^63 to 2^64 - 1) or true/false.
 * Anything else is refused with a pointer to report-time filtering.
 */
#ifndef GOTRACE_PRED_H
#define GOTRACE_PRED_H

#include <stddef.h>

#include "gotrace.h"
#include "gtr.h"

/* Finds the value an operand names; returns its index or a negative errno. */
typedef int (*pred_resolve_fn)(void *ctx, const char *name);

/*
 * Compiles `text` into out[max] (at most GT_MAX_PRED). `types[i]` is the
 * gtr_type of value i (signedness, and whether len() applies). Returns the
 * number of predicates, or -EINVAL with a message in err[errlen] that
 * names the column and says to filter at report time instead.
 */
int pred_compile(const char *text, pred_resolve_fn resolve, void *ctx,
		 const enum gtr_type *types, int ntypes, struct gt_pred *out,
		 int max, char *err, size_t errlen);

#endif /* GOTRACE_PRED_H */
