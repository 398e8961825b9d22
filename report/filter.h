/* SPDX-License-Identifier: MIT */
/*
 * filter: the predicate language of `gotrace-report -f` (spec/FILTER.md).
 * An expression is compiled once to a flat tree; fields that name probe
 * arguments are resolved once per probe and cached, regular expressions are
 * compiled once (PCRE2), so filter_match() allocates nothing per event
 * except when it first meets a probe.
 */
#ifndef REPORT_FILTER_H
#define REPORT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event.h"

struct filter;

/* Where and why an expression was rejected. */
struct filter_error {
	unsigned column;   /* 1-based byte offset in the expression, 0 if none */
	char msg[256];     /* lower case, no trailing period or newline */
};

/*
 * Compiles `expr` (spec/FILTER.md). Returns the filter, or NULL with
 * *err filled when the expression is malformed or compares a field of
 * known type with a literal of another type (e.g. comm == 1).
 */
struct filter *filter_compile(const char *expr, struct filter_error *err);

/*
 * Compiles a lone field (`goarg1`, `pid`, `name`, `len(s)`...) whose value
 * filter_field() returns; used by `stats --by`. NULL with *err on error.
 */
struct filter *filter_compile_field(const char *expr, struct filter_error *err);

/*
 * Checks the filter against the probes known before the first event
 * (gtr_reader_preload()). Returns 0, or -1 with *err filled when a
 * comparison can never be well typed: the field it uses exists in at least
 * one probe and has the wrong type in all of them (e.g. `name == 1` where
 * `name` is a string in every probe that has it). Fields that no probe
 * has are reported on `warn` (may be NULL), one line each, not as errors:
 * probes may be described later in the file.
 */
int filter_check(const struct filter *f,
		 const struct gtr_probe *const *probes, size_t nprobes,
		 FILE *warn, struct filter_error *err);

/*
 * Resolves the wall-clock time literals of the filter (RFC 3339, HH:MM:SS)
 * to the recording host's CLOCK_MONOTONIC with the file's clock anchor.
 * Returns 0, or -1 with *err filled when the filter has such a literal and
 * the host has no anchor (start_realtime_ns == 0). Until it is called,
 * comparisons with time literals are false.
 */
int filter_set_clock(struct filter *f, const struct gtr_host *h,
		     struct filter_error *err);

/*
 * True when event `e` satisfies the filter. `f` is not const: the per-probe
 * field cache is filled as probes are met (allocation happens then only).
 */
bool filter_match(struct filter *f, const struct report_event *e);

/*
 * ANDs the filter into *plan, the plan of a count pushed down into the
 * reader (gtr_reader_count_run()) for the events of probe `pr` and kind
 * `kind` read without pairing (no entry); `t0` is the start relative
 * times count from (ns). A plan starts as { 0 }: every event. Returns 0,
 * or -1 with *plan unchanged when the filter cannot be such a plan (it
 * reads strings of the event, floats, comm, latency, negates a part that
 * reads the event, or takes more than GTR_COUNT_TERMS terms or
 * GTR_COUNT_CONDS conditions), so that filter_match() must decide. The
 * plan counts exactly the events filter_match() keeps.
 */
int filter_count_plan(struct filter *f, const struct gtr_probe *pr, enum gtr_kind kind,
		      uint64_t t0, struct gtr_count_plan *plan);

/*
 * Events for which filter_match() had no answer and returned false: a
 * regular expression hit PCRE2's match or depth limit (spec/FILTER.md,
 * "Limits") or failed otherwise; `*why` (may be NULL) gets the first
 * one's reason. An error anywhere in an expression voids the whole event,
 * whatever the other operands say.
 */
uint64_t filter_eval_errors(const struct filter *f, const char **why);

/* Value of a field (filter_compile_field()) on one event. */
struct filter_value {
	enum { FV_MISSING, FV_INT, FV_UINT, FV_DBL, FV_STR } kind;
	int64_t i;            /* FV_INT */
	uint64_t u;           /* FV_UINT (values above INT64_MAX) */
	double d;             /* FV_DBL */
	const uint8_t *s;     /* FV_STR: captured bytes, valid until the next event */
	size_t len;           /* FV_STR: bytes at s */
	uint64_t full_len;    /* FV_STR: the string's true length */
};

/* Fills *v with the value of field filter `f` on `e`; false when missing. */
bool filter_field(struct filter *f, const struct report_event *e,
		  struct filter_value *v);

/*
 * The argument, as its probe describes it, of the captured value that
 * field filter `f` (goargN, goretN, a name; not len()) reads on `e`,
 * resolved as filter_field() resolves it; NULL when the field is not a
 * captured value or no probe of `e` describes it.
 */
const struct gtr_arg *filter_field_arg(const struct filter *f,
				       const struct report_event *e);

/* What a filter reads of an event beyond its own fields, so a reader
 * can skip work no one uses (filter_uses()). */
#define FILTER_USES_COMM 1      /* comm: the task name table */
#define FILTER_USES_LATENCY 2   /* latency: entry/return pairing */
#define FILTER_USES_BINARY 4    /* binary: the probe's binary path */
#define FILTER_USES_VALUES 8    /* goargN/goretN/names: return events read
				   their entry's arguments (pairing) */

/* FILTER_USES_* bits of `f` (0 for NULL). */
unsigned filter_uses(const struct filter *f);

/* The expression the filter was compiled from. */
const char *filter_expr(const struct filter *f);

/* Frees the filter (NULL is fine). */
void filter_free(struct filter *f);

/*
 * Writes the error in the user-facing form of spec/FILTER.md, "Errors":
 *   <prefix>bad filter: <msg> at column <n>
 *     <expr>
 *     <spaces>^
 * `prefix` is e.g. "gotrace-report: ". filter_error_print_as() names what
 * was bad instead of "filter" (e.g. "--by field").
 */
void filter_error_print(FILE *out, const char *prefix, const char *expr,
			const struct filter_error *err);
void filter_error_print_as(FILE *out, const char *prefix, const char *what,
			   const char *expr, const struct filter_error *err);

/*
 * Shell-style glob match of bytes s[0, n) against NUL-terminated `pat`:
 * `*` any bytes (also '/' and '.'), `?` one byte, `[abc]` `[a-z]` `[!a]`
 * `[^a]` classes, `\c` the byte c. Linear in practice (one backtrack point).
 */
bool filter_glob(const char *pat, const uint8_t *s, size_t n);

#endif /* REPORT_FILTER_H */
