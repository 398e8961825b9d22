/* SPDX-License-Identifier: MIT */
/*
 * output: renders events as text (bcc trace.py's layout) or JSON Lines, as
 * spec/OUTPUT.md describes, by appending to a struct buf. Works on
 * struct report_event alone (no libgtr calls), so it is unit-tested on
 * synthetic events.
 */
#ifndef REPORT_OUTPUT_H
#define REPORT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "event.h"

enum output_format {
	OUTPUT_TEXT = 0,
	OUTPUT_JSONL = 1,
};

/* Parses "text" / "jsonl" into *fmt. Returns 0, or -1 for an unknown name. */
int output_format_parse(const char *name, enum output_format *fmt);

/* Appends the text header line "PID     TID     COMM ...\n". */
void output_text_header(struct buf *b);

/* Appends one text line (with '\n') for `e`. */
void output_text_event(struct buf *b, const struct report_event *e);

/* Appends one JSON object and '\n' for `e`. */
void output_jsonl_event(struct buf *b, const struct report_event *e);

/* Appends whichever of the two `fmt` names. */
void output_event(struct buf *b, enum output_format fmt,
		  const struct report_event *e);

/*
 * Building blocks, exposed for tests and for later report commands.
 */

/*
 * Appends bytes p[0, n) escaped for a terminal (spec/OUTPUT.md, "Strings
 * in text"): printable ASCII and valid UTF-8 as is, except '\\' -> "\\\\",
 * '"' -> "\\\"" when `quoted`, \n \t \r as such, other bytes \xNN.
 */
void output_text_bytes(struct buf *b, const uint8_t *p, size_t n, bool quoted);

/* Appends p[0, n) as the contents of a JSON string (no quotes). */
void output_json_bytes(struct buf *b, const uint8_t *p, size_t n);

/*
 * Appends value `v` as text; `arg` (NULL when unknown) tells pointers
 * (0x hex) and floats (bits) apart from plain words.
 */
void output_text_value(struct buf *b, const struct gtr_value *v,
		       const struct gtr_arg *arg);

/* Appends value `v` as a JSON value. */
void output_json_value(struct buf *b, const struct gtr_value *v,
		       const struct gtr_arg *arg);

/*
 * Appends `fmt` (a trace.py-style format string) with the event's values:
 * the k-th conversion takes value e->probe->exprs[k]. Needs e->probe.
 */
void output_text_format(struct buf *b, const char *fmt,
			const struct report_event *e);

/*
 * Writes the shortest decimal form of `d` that reads back to the same
 * double into out[32] ("NaN", "+Inf", "-Inf" for non-finite values).
 * Returns out.
 */
char *output_double(char out[32], double d);

#endif /* REPORT_OUTPUT_H */
