/* SPDX-License-Identifier: MIT */
/*
 * The protobuf wire format (protobuf.h): varints, tags, and nested
 * messages whose length is written when they close.
 */
#include <string.h>

#include "protobuf.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

/* Writes `v` as a varint at p; returns the bytes written. */
static size_t varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

void pb_varint(struct buf *b, uint64_t v)
{
	uint8_t *p = (uint8_t *)buf_reserve(b, 10);

	b->len += varint_put(p, v);
}

static void pb_tag(struct buf *b, uint32_t field, unsigned wt)
{
	pb_varint(b, (uint64_t)field << 3 | wt);
}

void pb_uint(struct buf *b, uint32_t field, uint64_t v)
{
	uint8_t *p = (uint8_t *)buf_reserve(b, 15);
	size_t n = varint_put(p, (uint64_t)field << 3 | WT_VARINT);

	b->len += n + varint_put(p + n, v);
}

void pb_int(struct buf *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

void pb_fixed64(struct buf *b, uint32_t field, uint64_t bits)
{
	uint8_t le[8];

	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(bits >> (8 * i));
	pb_tag(b, field, WT_I64);
	buf_add(b, le, sizeof(le));
}

void pb_double(struct buf *b, uint32_t field, double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof(bits));
	pb_fixed64(b, field, bits);
}

void pb_bytes(struct buf *b, uint32_t field, const void *p, size_t n)
{
	pb_tag(b, field, WT_LEN);
	pb_varint(b, n);
	buf_add(b, p, n);
}

void pb_string(struct buf *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

size_t pb_open(struct buf *b, uint32_t field)
{
	pb_tag(b, field, WT_LEN);
	buf_putc(b, 0);
	return b->len;
}

void pb_close(struct buf *b, size_t mark)
{
	const size_t n = b->len - mark;
	uint8_t len[10];
	const size_t k = varint_put(len, n);

	if (k > 1) {
		buf_reserve(b, k - 1);
		memmove(b->data + mark + k - 1, b->data + mark, n);
		b->len += k - 1;
	}
	memcpy(b->data + mark - 1, len, k);
}
