/* SPDX-License-Identifier: MIT */
/*
 * folded: call stacks in Brendan Gregg's folded format for flame graphs
 * (`func;callee;callee2 VALUE` per line), built from entry/return nesting
 * per goroutine (report/pair.h), VALUE being the self time in ns summed
 * over every call with that stack (spec/OUTPUT.md, "Folded stacks").
 */
#ifndef REPORT_FOLDED_H
#define REPORT_FOLDED_H

#include <stdint.h>

#include "buf.h"
#include "pair.h"

struct folded;

/* Creates an empty set of stacks holding at most `max_stacks` (0: 1M). */
struct folded *folded_new(uint32_t max_stacks);

/* Frees `f` (NULL is fine). */
void folded_free(struct folded *f);

/* Adds `value` to the stack fids[0..n) (outermost first). */
void folded_add(struct folded *f, const uint32_t *fids, uint32_t n, uint64_t value);

/* Stacks not kept because max_stacks was reached. */
uint64_t folded_dropped(const struct folded *f);

/* Appends all stacks, sorted, one line each, names from `p`. */
void folded_write(const struct folded *f, struct buf *b, const struct pairer *p);

#endif /* REPORT_FOLDED_H */
