/* SPDX-License-Identifier: MIT */
/*
 * stats: per-function summaries for `gotrace-report stats` (spec/OUTPUT.md,
 * "Statistics"): calls, rate, latency percentiles from paired returns, and
 * log2 histograms in bcc's style. Memory is fixed per group (a function, or
 * a function and a --by value), and groups are capped.
 */
#ifndef REPORT_STATS_H
#define REPORT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "event.h"
#include "filter.h"

struct stats;

/*
 * Creates a summary grouped by function and, when `by` is not NULL (a
 * field compiled with filter_compile_field(), named `by_name` in the
 * output), by that field's value; at most `max_groups` groups (0: 10000).
 */
struct stats *stats_new(struct filter *by, const char *by_name, uint32_t max_groups);

/* Frees `s` (NULL is fine); does not free `by`. */
void stats_free(struct stats *s);

/* Counts one event (after pairing and filtering). */
void stats_event(struct stats *s, const struct report_event *e);

/* Events not counted because the group limit was reached. */
uint64_t stats_dropped(const struct stats *s);

/*
 * The time window the events were selected from, for the rates: `first_ns`
 * and `last_ns` the file's first and last event times, `since_ns` and
 * `until_ns` the bounds of --since / --until (same clock; INT64_MIN and
 * INT64_MAX when not given). Rates are then computed over
 * stats_window_span() of these, and stats_write()'s `span_ns` is ignored.
 */
void stats_set_window(struct stats *s, uint64_t first_ns, uint64_t last_ns,
		      int64_t since_ns, int64_t until_ns);

/* The span of [since_ns, until_ns] clamped to [first_ns, last_ns]; 0 when
 * empty. */
uint64_t stats_window_span(uint64_t first_ns, uint64_t last_ns, int64_t since_ns,
			   int64_t until_ns);

/*
 * Appends the table and, when `hist`, a log2 latency histogram per group.
 * When some group has returns shown as `lost` (e->lost: not paired because
 * events of the function were lost around them), a LOST column after
 * CALLS counts them; they have no latency.
 * `span_ns` is the time the rates are computed over (first to last event)
 * unless stats_set_window() was called. Columns are padded by display width
 * (text_width(), report/width.h); a --by value wider than STATS_KEY_COLS columns is cut
 * with an ellipsis in the table, a function wider than STATS_FUNC_COLS keeps
 * its end after "..." (text_keep_tail()); the histogram titles show both whole.
 */
void stats_write(struct stats *s, struct buf *b, uint64_t span_ns, bool hist);

#define STATS_KEY_COLS 40
#define STATS_FUNC_COLS 48

/*
 * Appends a bcc-style log2 histogram (`unit : count distribution`, star
 * bars, under 80 columns) of vals[0..n): bucket i counts values v with
 * 2^i <= v < 2^(i+1) (bucket 0 also v = 0). Nothing when all are zero.
 */
void stats_print_log2(struct buf *b, const uint64_t *vals, int n, const char *unit);

/*
 * Log-linear bucket of `v` (16 sub-buckets per power of two, exact below
 * 16) and the midpoint of bucket `i`: percentiles are within 1/32 of the
 * true value. Exposed for tests.
 */
uint32_t stats_bucket(uint64_t v);
uint64_t stats_bucket_mid(uint32_t i);

#endif /* REPORT_STATS_H */
