/* SPDX-License-Identifier: MIT */
/*
 * folded: call stacks in Brendan Gregg's folded format for flame graphs
 * (`func;callee;callee2 VALUE` per line), VALUE being the self time in ns
 * summed over every call with that stack (spec/OUTPUT.md, "Folded
 * stacks"). The caller builds each path from frame names: the recorded
 * stack of a call, or the entry/return nesting per goroutine
 * (report/pair.h).
 */
#ifndef REPORT_FOLDED_H
#define REPORT_FOLDED_H

#include <stdint.h>

#include <stddef.h>

#include "buf.h"

struct folded;

/* Creates an empty set of stacks holding at most `max_stacks` (0: 1M). */
struct folded *folded_new(uint32_t max_stacks);

/* Frees `f` (NULL is fine). */
void folded_free(struct folded *f);

/* The id of frame name name[0, len) (no NUL needed), interned on first use. */
uint32_t folded_intern(struct folded *f, const char *name, size_t len);

/* Adds `value` to the stack of name ids ids[0..n) (outermost first). */
void folded_add(struct folded *f, const uint32_t *ids, uint32_t n, uint64_t value);

/* Stacks not kept because max_stacks was reached. */
uint64_t folded_dropped(const struct folded *f);

/* Appends all stacks, sorted, one line each (';' in a name written ','). */
void folded_write(const struct folded *f, struct buf *b);

#endif /* REPORT_FOLDED_H */
