/* SPDX-License-Identifier: MIT */
/*
 * merge: `gotrace-report merge -w OUT IN...`, and the files of
 * `gotrace-report A.gtr B.gtr` merged before they are read (report/merge.c).
 */
#ifndef REPORT_MERGE_H
#define REPORT_MERGE_H

#include <stdbool.h>
#include <stddef.h>

#include "gtr.h"

struct merge_opts {
	const char *const *inputs;  /* the recordings, "-" for standard input */
	size_t ninputs;             /* at least 1 */
	const char *output;         /* OUT, "-" for standard output */
	unsigned flags;             /* GTR_W_* (--force) */
	bool quiet;                 /* no summary line on stderr */
	struct gtr_redactor *redact; /* rules every value and name goes
				      * through (gotrace-report redact); NULL: none */
};

/*
 * Merges the inputs into one trace, in time order on the first input's
 * clock, each host kept apart (spec/FORMAT.md, "PEER"). Returns 0, or
 * EXIT_READ after a message (an input unreadable, OUT unwritable), or
 * EXIT_USAGE when one file is given twice.
 */
int report_merge(const struct merge_opts *o);

/*
 * Whether two of the `n` readers r[] (opened and preloaded; NULL: not
 * read, skipped), named path[], hold one recording: a copy of it, a
 * selection of it (gotrace-report -w keeps its HOST block), or a merged
 * file that holds it as one of its hosts. Their events would be counted
 * twice (merge, one side of a diff), or a diff would compare a recording
 * with itself (r[side2..n) are its other side; merge: side2 = n). Says
 * which on stderr, naming both inputs; true then. Two selections of one
 * recording may hold different events: a warning only, false.
 */
bool report_same_recording(struct gtr_reader *const *r, const char *const *path, size_t n,
			   size_t side2);

/*
 * Warns on stderr of each rule of `red` (NULL: none) that covered nothing
 * written to `out`: a value name no probe has, so that a misspelt rule
 * does not pass for a redaction (merge, redact, -w --redact).
 */
void report_redact_unused(const struct gtr_redactor *red, const char *out);

#endif /* REPORT_MERGE_H */
