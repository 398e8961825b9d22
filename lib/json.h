/* SPDX-License-Identifier: MIT */
/*
 * json: JSON strings and a streaming JSON writer in the style of bpftool's
 * jsonw_*: values are appended to a struct buf (lib/buf.h) as they come,
 * the writer puts the commas and colons and tracks nesting (up to 63
 * levels), and nothing is held back. Values at the top level get no
 * separator, so one writer can write JSON Lines (a '\n' after each value,
 * written by the caller) as well as a single document.
 */
#ifndef LIB_JSON_H
#define LIB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* How strings are escaped, beyond '"', '\\' and C0 controls (always). */
enum json_esc {
	/* a byte that is not part of well-formed UTF-8 becomes \ufffd;
	 * without it, \u00XX of the byte (lossless for bytes, as Go's %q) */
	JSON_ESC_FFFD = 1u << 0,
	/* \b \f \n \r \t short, DEL, U+2028 and U+2029 escaped as well: the
	 * text is valid JavaScript too (RFC 8259 needs neither) */
	JSON_ESC_JS = 1u << 1,
};

/*
 * Appends p[0, n) as the contents of a JSON string (no quotes), escaped
 * as `esc` (enum json_esc flags) says: valid UTF-8 is copied as is, other
 * controls are \u00XX (lower-case hex).
 */
void json_escape(struct buf *b, const uint8_t *p, size_t n, unsigned esc);

struct jsonw {
	struct buf *b;
	unsigned esc;       /* enum json_esc of every string written */
	unsigned depth;     /* open objects and arrays */
	uint64_t more;      /* bit d: level d has a value already */
	bool named;         /* a name was written: its value comes next */
};

/* Starts a writer appending to `b`, escaping strings as `esc` says. */
void jsonw_init(struct jsonw *w, struct buf *b, unsigned esc);

/* Opens / closes an object or an array (as a value: after a name, in an
 * array, or at the top level). */
void jsonw_start_object(struct jsonw *w);
void jsonw_end_object(struct jsonw *w);
void jsonw_start_array(struct jsonw *w);
void jsonw_end_array(struct jsonw *w);

/* Writes the name of the next member of an object ("name":). */
void jsonw_name(struct jsonw *w, const char *name);

/* Values: a NUL-terminated string (NULL: ""), n bytes as a string, a
 * number, true/false, null. */
void jsonw_string(struct jsonw *w, const char *s);
void jsonw_string_n(struct jsonw *w, const void *p, size_t n);
void jsonw_uint(struct jsonw *w, uint64_t v);
void jsonw_int(struct jsonw *w, int64_t v);
void jsonw_bool(struct jsonw *w, bool v);
void jsonw_null(struct jsonw *w);

/*
 * Puts the separator a value needs and returns the buffer, to which the
 * caller appends exactly one JSON value of its own making (a number in a
 * form of its own, a string built in pieces with json_escape()).
 */
struct buf *jsonw_raw(struct jsonw *w);

/* A member: name, then value. */
void jsonw_string_field(struct jsonw *w, const char *name, const char *s);
void jsonw_uint_field(struct jsonw *w, const char *name, uint64_t v);
void jsonw_int_field(struct jsonw *w, const char *name, int64_t v);
void jsonw_bool_field(struct jsonw *w, const char *name, bool v);
void jsonw_null_field(struct jsonw *w, const char *name);

#endif /* LIB_JSON_H */
