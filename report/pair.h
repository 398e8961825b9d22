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
 * not fit is counted, never silently lost. Once a goroutine's stack is full,
 * its further entries are counted (the depth past the limit), none tracked,
 * and as many of its next returns are theirs: unpaired, never matched with
 * an outer call of their function. Each open call keeps its entry's
 * values, strings cut to `keep_str` bytes (their true length is kept), and
 * its recorded stack.
 *
 * Losses (spec/OUTPUT.md, "Losses"). When events were lost (or suppressed
 * by a rate limit), a return may close another call's entry: its own entry
 * was lost, or the return of the entry it closes was. Drop records say when
 * (pair_drop(): a span [since_ns, ts_ns] per probe), and they come after
 * the events they concern. So pair_push() holds each return (and, to keep
 * file order, every event after it) until `hold_ns` of trace time has
 * passed after it, then pair_next() releases it with its final status: a
 * pair whose entry-to-return interval meets a loss span of its function is
 * split, the return and the entry each shown alone as `lost`; so are calls
 * closed over (unwound) or left open across a loss of their function, and
 * returns without entry after one. Held events take at most `hold_bytes`;
 * beyond, the oldest are released early (counted). Loss spans are kept per
 * function as at most 32 disjoint intervals (the oldest merged: more calls
 * lost, never a wrong pair).
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
	uint64_t hold_ns;         /* trace time a return is held for the drop
				     records that may concern it (default 2 s;
				     more when drop records show longer spans) */
	uint64_t hold_bytes;      /* held events, all of them (default 128 MiB) */
	bool unordered;           /* entries of tracked functions need not wait
				     behind held returns (pair_push()): for
				     views that show nothing for them (the
				     call view, Chrome, folded) or do not
				     need file order (stats) */
	bool lossless;            /* the file is known to hold no drop record
				     (its summary says so): nothing waits */
};

/* What pairing counted so far; all but `dropped`, `open` and `held` as
 * events are released (pair_next(), pair_event()). Totals saturate at
 * UINT64_MAX (gtr_add_sat()); `open` and `held` are levels. */
struct pair_counts {
	uint64_t paired;          /* returns matched with their entry */
	uint64_t unpaired_returns;/* returns with no open call of their function
				     (and no loss of it before them) */
	uint64_t abandoned;       /* entries closed over by an outer return
				     (unwound by a recovered panic) */
	uint64_t dropped;         /* entries not tracked: a limit was reached */
	uint64_t over;            /* of dropped: entries past max_depth (or
				     max_bytes) on their goroutine's stack */
	uint64_t over_returns;    /* returns of those entries: counted in
				     unpaired_returns (or lost_returns), never
				     paired with an outer call */
	uint64_t open;            /* calls open now (at the end: never returned) */
	uint64_t lost_returns;    /* returns shown alone as `lost`: their pair met
				     a loss span, or no entry and a loss before */
	uint64_t lost_entries;    /* entries shown alone as `lost`: the other
				     half of such a pair, closed over or (after
				     pair_finish()) open across a loss */
	uint64_t lost_open;       /* of lost_entries: open at the end */
	uint64_t early;           /* returns released before their hold ended
				     (hold_bytes reached) */
	uint64_t late;            /* drop records whose span began before a
				     return of their function already released
				     as paired or unpaired: it may be wrong */
	uint64_t held;            /* events held now */
	uint64_t unpaired;        /* entries and returns shown alone: their
				     function had a probe with a record-time
				     predicate (pair_probes()) */
};

/* Creates a pairer; `lim` NULL or zero fields mean the defaults. */
struct pairer *pair_new(const struct pair_limits *lim);

/* Frees `p` (NULL is fine). */
void pair_free(struct pairer *p);

/*
 * Tells the pairer every probe the file has described so far; call again
 * whenever the number grows. Probes are grouped into functions by
 * (binary id, symbol). A function with entry and return probes, one of
 * which had a record-time predicate (gtr_probe.predicate), is not paired:
 * the kernel left out some of its calls' entries or returns, so a return
 * could close another call; its events are released alone
 * (report_event.unpaired), and a note on stderr says so once.
 */
void pair_probes(struct pairer *p, const struct gtr_probe *const *probes,
		 size_t n);

/*
 * Feeds one event, in file order, and releases it at once, whatever drop
 * records may follow: pair_push() and pair_next() in one, for callers that
 * do not hold events (tests, tools without drop records). Sets e->depth,
 * e->tracked and, for a return matched with its entry, e->entry,
 * e->entry_probe and e->latency_ns, or e->lost when a loss span already
 * fed (pair_drop()) makes the pair unsure. e->entry stays valid until the
 * next call. Not to be mixed with pair_push() on one pairer.
 */
void pair_event(struct pairer *p, struct report_event *e);

/*
 * Feeds one event, in file order (e->ev, e->probe and e->comm are read;
 * they need not outlive the call). Pairs it at once (the calls open per
 * goroutine change now). Returns true when `e` is final already and is not
 * held: an event with nothing to decide (an entry, an event of a function
 * without return probe) while nothing older is held, or with `unordered`
 * an entry of a tracked function, or a return that no drop record can
 * concern any more (`lossless`, or hold_ns of trace time read after it)
 * while nothing older is held; its fields are then set as pair_event() sets them,
 * and the caller uses `e` itself (after draining pair_next(), whose events
 * are older; a return is released at once only when nothing is held, and
 * then pair_next() releases nothing and leaves it current for
 * pair_foreach_unwound() and pair_last_stack()). Otherwise the event is
 * held and pair_next() releases it.
 */
bool pair_push(struct pairer *p, struct report_event *e);

/*
 * Feeds a drop record (any reason: lost or suppressed), in file order: the
 * events of its probe (all probes when UINT32_MAX or not described) may be
 * missing from [since_ns, ts_ns]; since_ns 0 (or after ts_ns): from the
 * previous drop record of the same (probe, cpu), else from the start.
 */
void pair_drop(struct pairer *p, const struct gtr_drop *d);

/*
 * The next event fed with pair_push(), in file order, once its status is
 * final: an entry at once (unless held behind a return), a return when an
 * event or drop record at least hold_ns later has been fed, or
 * pair_finish() was called, or hold_bytes are held. Fills *out as
 * pair_event() does (e->comm, e->probe, e->ev and its values from the held
 * copy; e->t0_ns, e->binary and e->real_ns zero). Valid until the next
 * call on `p`. false when nothing can be released yet.
 */
bool pair_next(struct pairer *p, struct report_event *out);

/*
 * The end of the file: every loss is known, every held event can be
 * released (pair_next()), and open calls get their loss status (counted
 * in lost_entries / lost_open, shown by pair_foreach_open()).
 */
void pair_finish(struct pairer *p);

/*
 * After pair_event() or pair_next() released a paired return: the
 * functions of the open calls from the goroutine's outermost to this call
 * (fids, see pair_func_name), their number in *n, and the call's own time
 * (its latency minus that of the callees paired when it returned) in
 * *self_ns. NULL when the last event released was not a paired return.
 */
const uint32_t *pair_last_stack(struct pairer *p, uint32_t *n, uint64_t *self_ns);

/*
 * After pair_next() or pair_event() released a return shown as lost that
 * closed open calls (its would-be entry, and those above it): true, and
 * the depth of that entry in *depth (calls open below it). false after any
 * other event.
 */
bool pair_last_closed(const struct pairer *p, uint32_t *depth);

/* Symbol of function `fid` ("" when unknown). */
const char *pair_func_name(const struct pairer *p, uint32_t fid);

/* Number of functions known (fids run from 0 to this, exclusive). */
uint32_t pair_nfuncs(const struct pairer *p);

/* Function id of a probe; UINT32_MAX when the probe is unknown. */
uint32_t pair_fid(const struct pairer *p, uint32_t probe_id);

/*
 * After pair_event() or pair_next() released a return that closed open
 * calls: calls `cb` for each call that return closed over (unwound: a
 * panic, recovered by a caller, left it), innermost first, with a
 * report_event for its entry (ev, probe, comm, depth set; ev->stack is the
 * entry's recorded stack) and end_ns the return's ts_ns; then, when the
 * return is `lost`, for the entry it would have been paired with. A call
 * with e->lost set (its function lost events between its entry and the
 * return) has end_ns its own entry's ts_ns. The event is valid during the
 * callback only. Returns their number (0 after any other event).
 */
uint32_t pair_foreach_unwound(struct pairer *p,
			      void (*cb)(void *arg, const struct report_event *e,
					 uint64_t end_ns),
			      void *arg);

/*
 * Calls `cb` for each call still open, outermost first per goroutine, with
 * a report_event for its entry as above (end_ns 0; e->lost set after
 * pair_finish() when its function lost events after its entry). Used at
 * the end of the file to report calls that never returned.
 */
void pair_foreach_open(struct pairer *p,
		       void (*cb)(void *arg, const struct report_event *e, uint64_t end_ns),
		       void *arg);

/* Copies the counters into *c. */
void pair_counts(const struct pairer *p, struct pair_counts *c);

#endif /* REPORT_PAIR_H */
