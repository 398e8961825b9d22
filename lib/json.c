/* SPDX-License-Identifier: MIT */
#include "json.h"

#include <string.h>

#include "utf8.h"

static const char hexdig[] = "0123456789abcdef";

/* Whether byte c goes into a JSON string as is, whatever the escaping. */
static inline bool plain(uint8_t c)
{
	return c >= 0x20 && c < 0x7f && c != '\\' && c != '"';
}

/* \u00XX of byte c. */
static void put_u00(struct buf *b, uint8_t c)
{
	char *o = buf_reserve(b, 6);

	o[0] = '\\'; o[1] = 'u'; o[2] = '0'; o[3] = '0';
	o[4] = hexdig[c >> 4]; o[5] = hexdig[c & 15];
	b->len += 6;
}

/* The short escape of ASCII byte c under `esc`, NULL when it has none. */
static const char *short_escape(uint8_t c, unsigned esc)
{
	switch (c) {
	case '\\': return "\\\\";
	case '"': return "\\\"";
	}
	if (!(esc & JSON_ESC_JS))
		return NULL;
	switch (c) {
	case '\n': return "\\n";
	case '\t': return "\\t";
	case '\r': return "\\r";
	case '\b': return "\\b";
	case '\f': return "\\f";
	}
	return NULL;
}

/* Escapes the byte or sequence at p[0] (not plain ASCII); returns its length. */
static size_t escape_one(struct buf *b, const uint8_t *p, size_t n, unsigned esc)
{
	const uint8_t c = p[0];
	uint32_t cp = 0;

	if (c < 0x80) {
		const char *s = short_escape(c, esc);
		if (s)
			buf_add(b, s, 2);
		else if (c < 0x20 || (esc & JSON_ESC_JS))
			put_u00(b, c);   /* a control, or DEL */
		else
			buf_putc(b, (char)c);
		return 1;
	}
	const int k = utf8_seq(p, n, &cp);
	if (!k) {
		if (esc & JSON_ESC_FFFD)
			buf_add(b, "\\ufffd", 6);
		else
			put_u00(b, c);
		return 1;
	}
	if ((esc & JSON_ESC_JS) && (cp == 0x2028 || cp == 0x2029))
		buf_add(b, cp == 0x2028 ? "\\u2028" : "\\u2029", 6);
	else
		buf_add(b, p, (size_t)k);
	return (size_t)k;
}

void json_escape(struct buf *b, const uint8_t *p, size_t n, unsigned esc)
{
	size_t i = 0;

	while (i < n) {
		/* fast path: a run of printable ASCII that needs no escape */
		size_t j = i;
		while (j < n && plain(p[j]))
			j++;
		buf_add(b, p + i, j - i);
		if (j >= n)
			break;
		i = j + escape_one(b, p + j, n - j, esc);
	}
}

/* ------------------------------------------------------------ writer */

void jsonw_init(struct jsonw *w, struct buf *b, unsigned esc)
{
	memset(w, 0, sizeof(*w));
	w->b = b;
	w->esc = esc;
}

/* The comma before a value that is not the first of its object or array. */
static inline void sep(struct jsonw *w)
{
	if (w->named) {
		w->named = false;
		return;
	}
	if (!w->depth)
		return;
	const uint64_t bit = UINT64_C(1) << (w->depth & 63);
	if (w->more & bit)
		buf_putc(w->b, ',');
	w->more |= bit;
}

static void open_level(struct jsonw *w, char c)
{
	sep(w);
	buf_putc(w->b, c);
	if (w->depth < 63)
		w->depth++;
	w->more &= ~(UINT64_C(1) << w->depth);
}

static void close_level(struct jsonw *w, char c)
{
	buf_putc(w->b, c);
	if (w->depth)
		w->depth--;
}

void jsonw_start_object(struct jsonw *w) { open_level(w, '{'); }
void jsonw_end_object(struct jsonw *w) { close_level(w, '}'); }
void jsonw_start_array(struct jsonw *w) { open_level(w, '['); }
void jsonw_end_array(struct jsonw *w) { close_level(w, ']'); }

/*
 * Appends p[0, n) quoted (and `colon` after it). Fast path: a string of
 * plain ASCII (every name gotrace writes, most values) is copied in one
 * pass into reserved room; others go through json_escape().
 */
static void put_string(struct jsonw *w, const void *p, size_t n, bool colon)
{
	struct buf *b = w->b;
	const uint8_t *s = p;
	char *o = buf_reserve(b, n + 3);
	size_t i;

	o[0] = '"';
	for (i = 0; i < n && plain(s[i]); i++)
		o[i + 1] = (char)s[i];
	if (i == n) {
		o[n + 1] = '"';
		if (colon)
			o[n + 2] = ':';
		b->len += n + 2 + colon;
		return;
	}
	b->len += i + 1;
	json_escape(b, s + i, n - i, w->esc);
	buf_putc(b, '"');
	if (colon)
		buf_putc(b, ':');
}

void jsonw_name(struct jsonw *w, const char *name)
{
	sep(w);
	put_string(w, name, strlen(name), true);
	w->named = true;
}

void jsonw_string(struct jsonw *w, const char *s)
{
	sep(w);
	put_string(w, s ? s : "", s ? strlen(s) : 0, false);
}

void jsonw_string_n(struct jsonw *w, const void *p, size_t n)
{
	sep(w);
	put_string(w, p, n, false);
}

void jsonw_uint(struct jsonw *w, uint64_t v)
{
	sep(w);
	buf_u64(w->b, v);
}

void jsonw_int(struct jsonw *w, int64_t v)
{
	sep(w);
	buf_i64(w->b, v);
}

void jsonw_bool(struct jsonw *w, bool v)
{
	sep(w);
	buf_puts(w->b, v ? "true" : "false");
}

void jsonw_null(struct jsonw *w)
{
	sep(w);
	buf_add(w->b, "null", 4);
}

struct buf *jsonw_raw(struct jsonw *w)
{
	sep(w);
	return w->b;
}

void jsonw_string_field(struct jsonw *w, const char *name, const char *s)
{
	jsonw_name(w, name);
	jsonw_string(w, s);
}

void jsonw_uint_field(struct jsonw *w, const char *name, uint64_t v)
{
	jsonw_name(w, name);
	jsonw_uint(w, v);
}

void jsonw_int_field(struct jsonw *w, const char *name, int64_t v)
{
	jsonw_name(w, name);
	jsonw_int(w, v);
}

void jsonw_bool_field(struct jsonw *w, const char *name, bool v)
{
	jsonw_name(w, name);
	jsonw_bool(w, v);
}

void jsonw_null_field(struct jsonw *w, const char *name)
{
	jsonw_name(w, name);
	jsonw_null(w);
}
