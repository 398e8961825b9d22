/* SPDX-License-Identifier: MIT */
/*
 * pair: matches return events with their entries (spec/OUTPUT.md,
 * "Pairing"). Calls are kept on one stack per goroutine, keyed by
 * (pid, goid), or (pid, tid) when the goroutine id is unknown (0); a
 * return closes the innermost open call of its function, so recursion
 * works, and calls opened above it are unwound: a panic that a caller
 * recovered unwound them (or their return was lost).
 * Only functions for which the file has a return probe are tracked.
 *
 * Memory is bounded: at most `max_depth` open calls per goroutine,
 * `max_goroutines` goroutines and `max_bytes` of saved entries; what does
 * not fit is counted, never silently lost. Each open call keeps its entry's
 * values, strings cut to `keep_str` bytes (their true length is kept), and
 * its recorded stack.
 */
#ifndef REPORT_PAIR_H
#define REPORT_PAIR_H

#include <stdint.h>

#include "event.h"

struct pairer;

struct pair_limits {
	uint32_t max_depth;       /* open calls per goroutine (default 1024) */
	uint32_t max_goroutines;  /* goroutines with open calls (default 65536) */
	uint64_t max_bytes;       /* saved entries, all goroutines (default 256 MiB) */
	uint32_t keep_str;        /* bytes kept of each string value (default 256) */
};

/* What pairing counted so far. */
struct pair_counts {
	uint64_t paired;          /* returns matched with their entry */
	uint64_t unpaired_returns;/* returns with no open call of their function */
	uint64_t abandoned;       /* entries closed over by an outer return
				     (unwound by a recovered panic) */
	uint64_t dropped;         /* entries not tracked: a limit was reached */
	uint64_t open;            /* calls open now (at the end: never returned) */
};

/* Creates a pairer; `lim` NULL or zero fields mean the defaults. */
struct pairer *pair_new(const struct pair_limits *lim);

/* Frees `p` (NULL is fine). */
void pair_free(struct pairer *p);

/*
 * Tells the pairer every probe the file has described so far; call again
 * whenever the number grows. Probes are grouped into functions by
 * (binary id, symbol).
 */
void pair_probes(struct pairer *p, const struct gtr_probe *const *probes,
		 size_t n);

/*
 * Feeds one event, in file order. Sets e->depth and, for a return matched
 * with its entry, e->entry, e->entry_probe and e->latency_ns. e->entry
 * stays valid until the next call.
 */
void pair_event(struct pairer *p, struct report_event *e);

/*
 * After pair_event() on a paired return: the functions of the open calls
 * from the goroutine's outermost to this call (fids, see pair_func_name),
 * their number in *n, and the call's own time (its latency minus that of
 * its paired callees) in *self_ns. NULL when the last event was not a
 * paired return.
 */
const uint32_t *pair_last_stack(struct pairer *p, uint32_t *n, uint64_t *self_ns);

/* Symbol of function `fid` ("" when unknown). */
const char *pair_func_name(const struct pairer *p, uint32_t fid);

/* Number of functions known (fids run from 0 to this, exclusive). */
uint32_t pair_nfuncs(const struct pairer *p);

/* Function id of a probe; UINT32_MAX when the probe is unknown. */
uint32_t pair_fid(const struct pairer *p, uint32_t probe_id);

/*
 * After pair_event() on a paired return: calls `cb` for each call that
 * return closed over (unwound: a panic, recovered by a caller, left it),
 * innermost first, with a report_event for its entry (ev, probe, comm,
 * depth set; ev->stack is the entry's recorded stack) and end_ns the
 * return's ts_ns. The event is valid during the callback only. Returns
 * their number (0 after any other event).
 */
uint32_t pair_foreach_unwound(struct pairer *p,
			      void (*cb)(void *arg, const struct report_event *e,
					 uint64_t end_ns),
			      void *arg);

/*
 * Calls `cb` for each call still open, outermost first per goroutine, with
 * a report_event for its entry as above (end_ns 0). Used at the end of the
 * file to report calls that never returned.
 */
void pair_foreach_open(struct pairer *p,
		       void (*cb)(void *arg, const struct report_event *e, uint64_t end_ns),
		       void *arg);

/* Copies the counters into *c. */
void pair_counts(const struct pairer *p, struct pair_counts *c);

#endif /* REPORT_PAIR_H */
