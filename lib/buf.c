/* SPDX-License-Identifier: MIT */
#include "buf.h"
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

void buf_u64(struct buf *b, uint64_t v)
{
	char tmp[20];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	buf_add(b, tmp + i, sizeof(tmp) - (size_t)i);
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
