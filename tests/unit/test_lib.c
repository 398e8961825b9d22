/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of lib/: the one hash map (lib/map.h: replace, many entries
 * of one key, removal against a model, limits) and the one UTF-8 decoder
 * (lib/utf8.h, Unicode 15 table 3-7), and the output buffer's integers
 * (lib/buf.h), and the one lower bound (lib/search.h) against a linear
 * scan.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "map.h"
#include "search.h"
#include "utf8.h"

/* ------------------------------------------------------------ u64map */

Test(u64map, empty_map_finds_nothing)
{
	struct u64map m = { 0 };
	uint32_t pos = 0;

	cr_expect_null(u64map_get(&m, 0));
	cr_expect_null(u64map_find(&m, 7, &pos));
	cr_expect_eq(u64map_del(&m, 7, 0), -1);
	u64map_clear(&m);
	u64map_free(&m);
}

Test(u64map, put_replaces_and_get_finds)
{
	struct u64map m = { 0 };

	for (uint32_t i = 0; i < 10000; i++)
		cr_assert_eq(u64map_put(&m, (uint64_t)i << 40 | i, i, UINT32_MAX), 0);
	cr_expect_eq(m.n, 10000);
	cr_expect_eq(u64map_put(&m, (uint64_t)5 << 40 | 5, 77, UINT32_MAX), 0);
	cr_expect_eq(m.n, 10000, "a put of a key present replaces its value");
	for (uint32_t i = 0; i < 10000; i++) {
		const uint32_t *v = u64map_get(&m, (uint64_t)i << 40 | i);
		cr_assert_not_null(v, "key %u", i);
		cr_expect_eq(*v, i == 5 ? 77 : i);
	}
	cr_expect_null(u64map_get(&m, 10000));
	u64map_clear(&m);
	cr_expect_eq(m.n, 0);
	cr_expect_null(u64map_get(&m, 1));
	cr_expect_eq(u64map_put(&m, 1, 2, UINT32_MAX), 0);
	cr_expect_eq(*u64map_get(&m, 1), 2);
	u64map_free(&m);
	cr_expect_null(m.slots);
}

Test(u64map, max_entries_refused)
{
	struct u64map m = { 0 };

	for (uint64_t k = 0; k < 3; k++)
		cr_expect_eq(u64map_put(&m, k, 0, 3), 0);
	cr_expect_eq(u64map_put(&m, 3, 0, 3), -1);
	cr_expect_eq(u64map_add(&m, 0, 1, 3), -1);
	cr_expect_eq(u64map_put(&m, 2, 9, 3), 0, "replacing needs no room");
	cr_expect_eq(m.n, 3);
	u64map_free(&m);
}

/* Values of `key` as u64map_find() walks them, as a bit set of values < 64. */
static uint64_t values_of(const struct u64map *m, uint64_t key)
{
	uint64_t set = 0;
	uint32_t pos = 0;

	for (const uint32_t *v; (v = u64map_find(m, key, &pos));) {
		cr_assert_lt(*v, 64);
		cr_assert_eq(set >> *v & 1, 0, "value %u met twice", *v);
		set |= UINT64_C(1) << *v;
	}
	return set;
}

Test(u64map, add_keeps_entries_of_one_key_apart)
{
	struct u64map m = { 0 };

	/* one key many times, among others that share its walk */
	for (uint32_t i = 0; i < 40; i++) {
		cr_assert_eq(u64map_add(&m, 42, i, UINT32_MAX), 0);
		cr_assert_eq(u64map_add(&m, 1000 + i, i, UINT32_MAX), 0);
	}
	cr_expect_eq(values_of(&m, 42), (UINT64_C(1) << 40) - 1);
	cr_expect_eq(*u64map_get(&m, 42), 0, "get: the first added");
	cr_expect_eq(u64map_del(&m, 42, 7), 0);
	cr_expect_eq(u64map_del(&m, 42, 7), -1, "removed once only");
	cr_expect_eq(values_of(&m, 42), ((UINT64_C(1) << 40) - 1) & ~(UINT64_C(1) << 7));
	for (uint32_t i = 0; i < 40; i++)
		cr_expect_eq(*u64map_get(&m, 1000 + i), i);
	cr_expect_eq(m.n, 79);
	u64map_free(&m);
}

/* A tiny deterministic generator (xorshift64). */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

Test(u64map, random_adds_and_removals_match_a_model)
{
	enum { NKEYS = 512, ROUNDS = 200000 };
	static uint32_t model[NKEYS];   /* value + 1 of key k, 0 absent */
	struct u64map m = { 0 };
	uint64_t s = 88172645463325252ull;
	uint32_t n = 0;

	for (int r = 0; r < ROUNDS; r++) {
		const uint32_t k = (uint32_t)(rnd(&s) % NKEYS);
		/* keys that collide in the low bits, and spread over 64 */
		const uint64_t key = (uint64_t)k << 52 | (k & 3);
		if (model[k]) {
			cr_assert_eq(u64map_del(&m, key, model[k] - 1), 0, "round %d", r);
			model[k] = 0;
			n--;
		} else {
			const uint32_t v = (uint32_t)(rnd(&s) & 0xffff);
			cr_assert_eq(u64map_add(&m, key, v, UINT32_MAX), 0);
			model[k] = v + 1;
			n++;
		}
		cr_assert_eq(m.n, n);
		if (r % 997 == 0) {
			for (uint32_t j = 0; j < NKEYS; j++) {
				const uint32_t *v = u64map_get(&m, (uint64_t)j << 52 | (j & 3));
				if (model[j])
					cr_assert(v && *v == model[j] - 1, "round %d key %u", r, j);
				else
					cr_assert_null(v, "round %d key %u", r, j);
			}
		}
	}
	u64map_free(&m);
}

Test(u64map, hashes)
{
	cr_expect_eq(u64map_hash_str("", 0), 0xcbf29ce484222325ull, "FNV-1a offset basis");
	cr_expect_eq(u64map_hash_str("a", 0), 0xaf63dc4c8601ec8cull, "FNV-1a of \"a\"");
	cr_expect_eq(u64map_hash_str("main.f", 3), u64map_hash_mem("main.f", 6, 3));
	cr_expect_neq(u64map_hash_str("main.f", 0), u64map_hash_str("main.f", 1));
	cr_expect_neq(u64map_hash2(1, 2), u64map_hash2(2, 1));
	cr_expect_neq(u64map_hash2(1, 0), u64map_hash2(1, 1ull << 63));
}

/* ------------------------------------------------------------ utf8 */

static int seq(const char *s, uint32_t *cp)
{
	return utf8_seq((const uint8_t *)s, strlen(s), cp);
}

Test(utf8, well_formed_sequences)
{
	uint32_t cp = 0;

	cr_expect_eq(seq("\xc3\xa9", &cp), 2);
	cr_expect_eq(cp, 0xe9);
	cr_expect_eq(seq("\xe2\x82\xac", &cp), 3);
	cr_expect_eq(cp, 0x20ac);
	cr_expect_eq(seq("\xf0\x9f\x98\x80", &cp), 4);
	cr_expect_eq(cp, 0x1f600);
	cr_expect_eq(seq("\xf4\x8f\xbf\xbf", &cp), 4);
	cr_expect_eq(cp, 0x10ffff);
}

Test(utf8, ill_formed_sequences)
{
	uint32_t cp;

	cr_expect_eq(seq("\x80", &cp), 0, "stray continuation byte");
	cr_expect_eq(seq("\xc0\xaf", &cp), 0, "overlong");
	cr_expect_eq(seq("\xe0\x80\xaf", &cp), 0, "overlong");
	cr_expect_eq(seq("\xed\xa0\x80", &cp), 0, "surrogate");
	cr_expect_eq(seq("\xf4\x90\x80\x80", &cp), 0, "above U+10FFFF");
	cr_expect_eq(seq("\xf5\x80\x80\x80", &cp), 0, "no such lead byte");
	cr_expect_eq(utf8_seq((const uint8_t *)"\xe2\x82\xac", 2, &cp), 0, "cut short");
	cr_expect_eq(seq("\xc3(", &cp), 0, "not a continuation byte");
}

Test(utf8, encode_round_trips)
{
	static const uint32_t cps[] = { 0, 0x7f, 0x80, 0x7ff, 0x800, 0xffff, 0x10000, 0x10ffff };
	uint8_t out[4];
	uint32_t cp;

	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++) {
		const size_t n = utf8_encode(cps[i], out);
		cr_assert(n >= 1 && n <= 4);
		if (n == 1) {
			cr_expect_eq(out[0], cps[i]);
			continue;
		}
		cr_expect_eq(utf8_seq(out, n, &cp), (int)n);
		cr_expect_eq(cp, cps[i]);
	}
	cr_expect_eq(utf8_encode(0xd800, out), 0, "surrogate");
	cr_expect_eq(utf8_encode(0x110000, out), 0, "above U+10FFFF");
}

/* buf_u64/buf_i64/buf_hex against printf at every digit count and the
 * edges of the 32-bit step; u64_to_dec into an array. */
Test(buf, integers_as_printf_writes_them)
{
	uint64_t v[64];
	int n = 0;
	char want[32];

	v[n++] = 0;
	for (uint64_t p = 1; p <= UINT64_MAX / 10; p *= 10) {
		v[n++] = p - 1;
		v[n++] = p;
		v[n++] = p * 10 - 1;
	}
	v[n++] = UINT32_MAX;
	v[n++] = (uint64_t)UINT32_MAX + 1;
	v[n++] = UINT64_MAX;
	for (int i = 0; i < n; i++) {
		struct buf b = BUF_INIT;

		buf_putc(&b, 'x');
		buf_u64(&b, v[i]);
		snprintf(want, sizeof(want), "x%" PRIu64, v[i]);
		cr_assert_str_eq(buf_cstr(&b), want);
		buf_reset(&b);
		buf_i64(&b, -(int64_t)(v[i] >> 1));
		snprintf(want, sizeof(want), "%" PRId64, -(int64_t)(v[i] >> 1));
		cr_assert_str_eq(buf_cstr(&b), want);
		buf_free(&b);
	}
	struct buf b = BUF_INIT;
	buf_i64(&b, INT64_MIN);
	cr_assert_str_eq(buf_cstr(&b), "-9223372036854775808");
	for (int s = 0; s < 64; s++) {
		const uint64_t h = (0x9e3779b97f4a7c15ull >> s) | (s == 0);
		buf_reset(&b);
		buf_hex(&b, h >> 1 << 1);
		snprintf(want, sizeof(want), "0x%" PRIx64, h >> 1 << 1);
		cr_assert_str_eq(buf_cstr(&b), want);
	}
	buf_reset(&b);
	buf_hex(&b, 0);
	cr_assert_str_eq(buf_cstr(&b), "0x0");
	buf_reset(&b);
	buf_hex(&b, UINT64_MAX);
	cr_assert_str_eq(buf_cstr(&b), "0xffffffffffffffff");
	char d[20];
	cr_assert_eq(u64_to_dec(d, 1234567), 7);
	cr_assert(!memcmp(d, "1234567", 7));
	buf_free(&b);
}

/* ------------------------------------------------------------ search */

struct keyed {
	uint32_t tag;
	uint64_t key;
	uint32_t small;   /* a 4-byte key after the 8-byte one */
};

/* The answers of a linear scan: the first of v[n] with key >= x, > x. */
static size_t scan_ge(const struct keyed *v, size_t n, uint64_t x, bool gt)
{
	size_t i = 0;

	while (i < n && (v[i].key < x || (gt && v[i].key == x)))
		i++;
	return i;
}

Test(search, empty_array_is_never_read)
{
	cr_expect_eq(search_ge(NULL, 0, 16, 8, 8, 5), 0);
	cr_expect_eq(search_gt(NULL, 0, 16, 8, 8, 5), 0);
	cr_expect_eq(SEARCH_GE((struct keyed *)NULL, 0, key, UINT64_MAX), 0);
}

Test(search, below_above_and_between_every_key)
{
	struct keyed v[5];

	for (size_t i = 0; i < 5; i++)
		v[i] = (struct keyed){ .tag = 0xdeadbeef, .key = 10 * (i + 1),
				       .small = (uint32_t)(10 * (i + 1)) };
	/* all keys above x */
	cr_expect_eq(SEARCH_GE(v, 5, key, 0), 0);
	cr_expect_eq(SEARCH_GT(v, 5, key, 9), 0);
	/* all keys below x */
	cr_expect_eq(SEARCH_GE(v, 5, key, 51), 5);
	cr_expect_eq(SEARCH_GT(v, 5, key, 50), 5);
	cr_expect_eq(SEARCH_GT(v, 5, key, UINT64_MAX), 5);
	/* on a key and between two */
	cr_expect_eq(SEARCH_GE(v, 5, key, 30), 2);
	cr_expect_eq(SEARCH_GT(v, 5, key, 30), 3);
	cr_expect_eq(SEARCH_GE(v, 5, key, 31), 3);
	cr_expect_eq(SEARCH_GT(v, 5, key, 29), 2);
	/* a 4-byte key gives the same answers */
	for (uint64_t x = 0; x <= 60; x++) {
		cr_expect_eq(SEARCH_GE(v, 5, small, x), scan_ge(v, 5, x, false),
			     "x=%" PRIu64, x);
		cr_expect_eq(SEARCH_GT(v, 5, small, x), scan_ge(v, 5, x, true),
			     "x=%" PRIu64, x);
	}
	/* a 4-byte key is below every x past 32 bits */
	cr_expect_eq(SEARCH_GE(v, 5, small, (uint64_t)UINT32_MAX + 1), 5);
}

Test(search, duplicates_give_the_first_and_the_one_past_the_last)
{
	const uint64_t keys[] = { 1, 3, 3, 3, 7, 7, 9 };
	const size_t n = sizeof(keys) / sizeof(keys[0]);

	cr_expect_eq(search_ge(keys, n, 8, 0, 8, 3), 1);
	cr_expect_eq(search_gt(keys, n, 8, 0, 8, 3), 4);
	cr_expect_eq(search_ge(keys, n, 8, 0, 8, 7), 4);
	cr_expect_eq(search_gt(keys, n, 8, 0, 8, 7), 6);
	/* one element, every key equal */
	cr_expect_eq(search_ge(keys + 1, 3, 8, 0, 8, 3), 0);
	cr_expect_eq(search_gt(keys + 1, 3, 8, 0, 8, 3), 3);
	cr_expect_eq(search_ge(keys, 1, 8, 0, 8, 1), 0);
	cr_expect_eq(search_gt(keys, 1, 8, 0, 8, 1), 1);
}

Test(search, random_sorted_arrays_match_a_linear_scan)
{
	struct keyed v[40];
	uint64_t seed = 42;

	for (int round = 0; round < 200; round++) {
		const size_t n = (size_t)round % 40;
		uint64_t k = 0;

		for (size_t i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			k += (seed >> 60) % 3;   /* steps of 0, 1 or 2: duplicates */
			v[i] = (struct keyed){ .key = k, .small = (uint32_t)k };
		}
		for (uint64_t x = 0; x <= k + 1; x++) {
			cr_assert_eq(SEARCH_GE(v, n, key, x), scan_ge(v, n, x, false),
				     "n=%zu x=%" PRIu64, n, x);
			cr_assert_eq(SEARCH_GT(v, n, key, x), scan_ge(v, n, x, true),
				     "n=%zu x=%" PRIu64, n, x);
			cr_assert_eq(SEARCH_GE(v, n, small, x), scan_ge(v, n, x, false));
		}
	}
}

/* Text as a message shows it: controls (C0, DEL, C1) and bytes that are not
 * UTF-8 escaped; other characters kept. */
Test(buf, shown_escapes_controls)
{
	struct buf b = BUF_INIT;

	cr_expect_str_eq(buf_shown(&b, "main.add"), "main.add");
	cr_expect_str_eq(buf_shown(&b, "main.add\x01"), "main.add\\x01");
	cr_expect_str_eq(buf_shown(&b, "a\x1b[2Jb\x7f"), "a\\x1b[2Jb\\x7f");
	cr_expect_str_eq(buf_shown(&b, "\xc2\x9b" "c"), "\\xc2\\x9bc");      /* U+009B CSI */
	cr_expect_str_eq(buf_shown(&b, "h\xc3\xa9\xe6\x97\xa5"), "h\xc3\xa9\xe6\x97\xa5");
	cr_expect_str_eq(buf_shown(&b, "\xff\\n"), "\\xff\\n");   /* a backslash as it is */
	cr_expect_str_eq(buf_shown(&b, ""), "");
	buf_free(&b);
}
