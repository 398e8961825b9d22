/* SPDX-License-Identifier: MIT */
#include "buf.h"
#include "utf8.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *buf_grow(struct buf *b, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap - b->len < n)
			cap *= 2;
		char *p = realloc(b->data, cap);
		if (!p)
			xalloc_die("output buffer of %zu bytes", cap);
		b->data = p;
		b->cap = cap;
	}
	return b->data + b->len;
}

void buf_add(struct buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	memcpy(buf_reserve(b, n), p, n);
	b->len += n;
}

void buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_pad(struct buf *b, char c, int n)
{
	if (n <= 0)
		return;
	memset(buf_reserve(b, (size_t)n), c, (size_t)n);
	b->len += (size_t)n;
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	size_t room = b->cap - b->len;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= room) {
		buf_reserve(b, (size_t)n + 1);
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* "00" to "99": two digits a step, half the divisions of one. */
static const char digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

size_t u64_to_dec(char out[20], uint64_t v)
{
	size_t n = 1;

	for (uint64_t p = 10; n < 20 && v >= p; p *= 10)
		n++;
	char *q = out + n;

	/* 32-bit steps once the value fits: cheaper division */
	while (v > UINT32_MAX) {
		const unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		memcpy(q, digits2 + 2 * r, 2);
	}
	uint32_t w = (uint32_t)v;
	while (w >= 100) {
		const uint32_t r = w % 100;
		w /= 100;
		q -= 2;
		memcpy(q, digits2 + 2 * r, 2);
	}
	if (w >= 10) {
		q -= 2;
		memcpy(q, digits2 + 2 * w, 2);
	} else {
		*--q = (char)('0' + w);
	}
	return n;
}

void buf_u64(struct buf *b, uint64_t v)
{
	b->len += u64_to_dec(buf_reserve(b, 20), v);
}

void buf_i64(struct buf *b, int64_t v)
{
	if (v < 0) {
		buf_putc(b, '-');
		buf_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		buf_u64(b, (uint64_t)v);
	}
}

void buf_hex(struct buf *b, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 1;

	while (n < 16 && v >> (4 * n))
		n++;
	char *o = buf_reserve(b, n + 2);
	o[0] = '0';
	o[1] = 'x';
	for (size_t i = n; i > 0; i--, v >>= 4)
		o[1 + i] = hex[v & 15];
	b->len += n + 2;
}

const char *buf_cstr(struct buf *b)
{
	buf_reserve(b, 1);
	b->data[b->len] = '\0';
	return b->data;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

const char *buf_shown(struct buf *b, const char *s)
{
	const uint8_t *p = (const uint8_t *)s;
	const size_t n = strlen(s);

	buf_reset(b);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		const int k = p[i] < 0x80 ? 1 : utf8_seq(p + i, n - i, &cp);

		if (k > 1 && cp >= 0xa0) {   /* not a C1 control */
			buf_add(b, p + i, (size_t)k);
			i += (size_t)k;
			continue;
		}
		if (p[i] >= 0x20 && p[i] < 0x7f)
			buf_putc(b, (char)p[i]);
		else
			buf_printf(b, "\\x%02x", p[i]);
		i++;
	}
	return buf_cstr(b);
}
