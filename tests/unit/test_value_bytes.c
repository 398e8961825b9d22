/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of how report/value.c shows a []byte (argument type bytes):
 * one of length 0, nil or empty (the recorder keeps no data pointer), as
 * Go's %v prints both, `[](len=0)`, in text; a string in JSON.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "buf.h"
#include "output.h"

static struct buf b;

static const char *text(const struct gtr_value *v, const struct gtr_arg *a)
{
	buf_reset(&b);
	output_text_value(&b, v, a);
	return buf_cstr(&b);
}

static const char *json(const struct gtr_value *v, const struct gtr_arg *a)
{
	buf_reset(&b);
	output_json_value(&b, v, a);
	return buf_cstr(&b);
}

static struct gtr_value bytes(const char *s, uint32_t len, uint32_t full)
{
	struct gtr_value v = { .kind = GTR_VAL_STR };

	v.v.s.data = (const uint8_t *)s;
	v.v.s.len = len;
	v.v.s.full_len = full;
	return v;
}

Test(value, a_nil_or_empty_byte_slice_is_shown_as_go_shows_it)
{
	const struct gtr_arg bs = { .name = "b", .type_name = "[]uint8", .type = GTR_TYPE_BYTES,
				    .size = 24, .redacted = "" };
	const struct gtr_arg str = { .name = "s", .type_name = "string", .type = GTR_TYPE_STRING,
				     .size = 16, .redacted = "" };
	struct gtr_value v = bytes("", 0, 0);

	cr_expect_str_eq(text(&v, &bs), "[](len=0)");
	cr_expect_str_eq(json(&v, &bs), "\"\"", "one JSON type per value: a string");
	cr_expect_str_eq(text(&v, &str), "\"\"(len=0)", "an empty string stays a string");
	v = bytes("hi", 2, 2);
	cr_expect_str_eq(text(&v, &bs), "\"hi\"(len=2)");
	cr_expect_str_eq(json(&v, &bs), "\"hi\"");
	v = bytes("", 0, 31);              /* not read: its length is known */
	cr_expect_str_eq(text(&v, &bs), "\"\"...(len=31)");
	buf_free(&b);
}
