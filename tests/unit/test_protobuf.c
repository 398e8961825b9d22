/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the protobuf encoder (report/protobuf.h): varints at their
 * byte boundaries, each wire type, and nested messages whose length needs
 * one, two or three bytes, checked byte for byte against the encoding
 * https://protobuf.dev/programming-guides/encoding/ gives.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "protobuf.h"

static struct buf b = BUF_INIT;

static void reset(void)
{
	buf_reset(&b);
}

static void fini(void)
{
	buf_free(&b);
}

TestSuite(protobuf, .init = reset, .fini = fini);

static void expect_bytes(const char *want, size_t n)
{
	cr_assert_eq(b.len, n, "length %zu, want %zu", b.len, n);
	cr_expect(!memcmp(b.data, want, n));
}

Test(protobuf, varint_boundaries)
{
	pb_varint(&b, 0);
	pb_varint(&b, 127);
	pb_varint(&b, 128);
	pb_varint(&b, 300);
	expect_bytes("\x00\x7f\x80\x01\xac\x02", 6);
	reset();
	pb_varint(&b, UINT64_MAX);
	expect_bytes("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
}

Test(protobuf, fields_of_each_wire_type)
{
	pb_uint(&b, 1, 150);             /* the guide's example: 08 96 01 */
	pb_string(&b, 2, "testing");     /* 12 07 74 65 73 74 69 6e 67 */
	pb_int(&b, 3, -2);               /* ten bytes of two's complement */
	pb_double(&b, 4, 1.0);           /* 21 then 3ff0000000000000 little-endian */
	pb_uint(&b, 60, 1);              /* a two-byte tag: e0 03 01 */
	expect_bytes("\x08\x96\x01"
		     "\x12\x07testing"
		     "\x18\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01"
		     "\x21\x00\x00\x00\x00\x00\x00\xf0\x3f"
		     "\xe0\x03\x01", 3 + 9 + 11 + 9 + 3);
}

Test(protobuf, nested_lengths_grow_as_needed)
{
	static char big[20000];
	const size_t sizes[] = { 0, 1, 127, 128, 16383, 16384, 20000 };
	const size_t lenbytes[] = { 1, 1, 1, 2, 2, 3, 3 };

	memset(big, 'x', sizeof(big));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		reset();
		buf_putc(&b, '#');
		const size_t m = pb_open(&b, 5);
		buf_add(&b, big, sizes[i]);
		pb_close(&b, m);
		cr_assert_eq(b.len, 2 + lenbytes[i] + sizes[i], "size %zu", sizes[i]);
		cr_expect_eq((uint8_t)b.data[1], 5 << 3 | 2);
		size_t n = 0, k = 0;
		uint8_t c;
		do {
			c = (uint8_t)b.data[2 + k];
			n |= (size_t)(c & 0x7f) << (7 * k);
			k++;
		} while (c & 0x80);
		cr_expect_eq(k, lenbytes[i]);
		cr_expect_eq(n, sizes[i]);
		cr_expect(!memcmp(b.data + 2 + k, big, sizes[i]));
	}
}

Test(protobuf, messages_nest)
{
	/* outer { inner { 1: 1 } 2: "ab" }, the inner closed first */
	const size_t outer = pb_open(&b, 1);
	const size_t inner = pb_open(&b, 3);
	pb_uint(&b, 1, 1);
	pb_close(&b, inner);
	pb_string(&b, 2, "ab");
	pb_close(&b, outer);
	expect_bytes("\x0a\x08\x1a\x02\x08\x01\x12\x02" "ab", 10);
}
