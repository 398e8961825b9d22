/* SPDX-License-Identifier: MIT */
/*
 * filter: the predicate language of `gotrace-report -f` (spec/FILTER.md).
 * An expression is compiled once to a flat tree; fields that name probe
 * arguments are resolved once per probe id and cached, so filter_match()
 * allocates nothing per event except when it first meets a probe.
 */
#ifndef REPORT_FILTER_H
#define REPORT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
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
 * True when event `e` satisfies the filter. `f` is not const: the per-probe
 * field cache is filled as probes are met (allocation happens then only).
 */
bool filter_match(struct filter *f, const struct report_event *e);

/* The expression the filter was compiled from. */
const char *filter_expr(const struct filter *f);

/* Frees the filter (NULL is fine). */
void filter_free(struct filter *f);

/*
 * Writes the error in the user-facing form of spec/FILTER.md, "Errors":
 *   <prefix>bad filter: <msg> at column <n>
 *     <expr>
 *     <spaces>^
 * `prefix` is e.g. "gotrace-report: ".
 */
void filter_error_print(FILE *out, const char *prefix, const char *expr,
			const struct filter_error *err);

#endif /* REPORT_FILTER_H */
