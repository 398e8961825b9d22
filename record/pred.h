/* SPDX-License-Identifier: MIT */
/*
 * Record-time predicates: the part of a probe's "(PREDICATE)" that the BPF
 * program can evaluate itself, so that hot functions spare the disk. A
 * predicate is written in the filter language of gotrace-report -f
 * (spec/FILTER.md) and parsed by its parser (lang/); what BPF runs is
 * comparisons of captured values (goargN, goretN, retval, parameter names,
 * len() of a string, []byte or slice) with integer constants, either side
 * first, joined by && (parentheses allowed), at most GT_MAX_PRED:
 *   goarg1 == 42 && len(goarg2) > 100 && -1 != n && d < 10ms
 * Constants read exactly as the filter reads them (decimal without leading
 * zeros, 0x hex, -2^63 to 2^64 - 1, durations in ns, true/false).
 * Anything else is refused with a pointer to report-time filtering.
 */
#ifndef GOTRACE_PRED_H
#define GOTRACE_PRED_H

#include <stddef.h>

#include "gotrace.h"
#include "gtr.h"

/*
 * Finds the value an operand names ("goargN", "goretN" or a name);
 * returns its index, or a negative errno: -ENOENT when the probe has no
 * such name (goargN at a return probe, goretN at an entry), -ERANGE when
 * N is past its values.
 */
typedef int (*pred_resolve_fn)(void *ctx, const char *name);

/*
 * Compiles `text` into out[max] (at most GT_MAX_PRED), resolving each
 * value by the name a recorder knows it by ("goargN", "goretN" -- retval
 * is goret1 -- or the parameter's name) through `resolve`, once per
 * comparison. `types[i]` is the gtr_type of value i: signed for
 * GTR_TYPE_INT; len() for strings, []byte and slices; integers, bools,
 * pointers and words as they are. Returns the number of comparisons, or
 * -EINVAL with a message in err[errlen] that names the column and either
 * says the text is not a filter (spec/FILTER.md) or, for a filter BPF
 * cannot run (||, !, strings, floats, a constant outside the value's
 * range...), says to filter at report time instead.
 */
int pred_compile(const char *text, pred_resolve_fn resolve, void *ctx,
		 const enum gtr_type *types, int ntypes, struct gt_pred *out,
		 int max, char *err, size_t errlen);

#endif /* GOTRACE_PRED_H */
