/* SPDX-License-Identifier: MIT */
/*
 * folded: call stacks in Brendan Gregg's folded format for flame graphs
 * (`func;callee;callee2 VALUE` per line), VALUE being the self time in ns
 * summed over every call with that stack (spec/OUTPUT.md, "Folded
 * stacks"). folded_call() does it all for one paired return: its self
 * time and its path (the recorded stack of the call, or the entry/return
 * nesting per goroutine, report/pair.h); folded_intern() and folded_add()
 * are the building blocks.
 */
#ifndef REPORT_FOLDED_H
#define REPORT_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "event.h"

struct folded;
struct pairer;
struct output;

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

/*
 * The self time of the paired return `e` (after pair_event(); e->entry set,
 * e->depth its depth in its goroutine, e->latency_ns): its latency minus
 * that of its paired callees, a callee being a paired call made directly
 * by it or under calls it closed over (unwound by a recovered panic: they
 * do not count, so the calls they made are its own callees). Must see
 * every paired return, counted or not, in file order: it keeps per
 * goroutine the time of the calls returned below each open call. 0 and no
 * effect for an event that is not a paired return.
 */
uint64_t folded_self(struct folded *f, const struct report_event *e);

/*
 * Feeds event `e` right after pair_event(p, e) or pair_next(p, e),
 * whatever the filters say (only returns that closed a call matter; others
 * are ignored): a return shown as lost (e->lost) counts nothing, and the
 * time of the paired calls under the call it closed goes to its caller's
 * callees (as for a call it closed over). A paired return: accounts its time with
 * folded_self() and, when `count` (it passed the filters and the time
 * window), adds its self time to its stack: the recorded user stack, the
 * entry's else the return's, root first, each frame named by output_frame()
 * of `o` (NULL: addresses), else the functions of its open calls
 * (pair_last_stack()).
 */
void folded_call(struct folded *f, struct pairer *p, const struct output *o,
		 const struct report_event *e, bool count);

/* Appends all stacks, sorted, one line each (';' in a name written ','). With
 * none, but entries of functions without return probe counted, says on
 * stderr that folded stacks need return probes. */
void folded_write(const struct folded *f, struct buf *b);

#endif /* REPORT_FOLDED_H */
