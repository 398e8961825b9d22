// SPDX-License-Identifier: MIT
/*
 * The one lower bound over records sorted by an unsigned integer key.
 * See search.h.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

/* The key of `width` bytes at p, widened. */
static inline __attribute__((always_inline)) uint64_t
key_at(const unsigned char *p, size_t width)
{
	uint64_t k8;
	uint32_t k4;
	uint16_t k2;

	switch (width) {
	case 8:
		memcpy(&k8, p, 8);
		return k8;
	case 4:
		memcpy(&k4, p, 4);
		return k4;
	case 2:
		memcpy(&k2, p, 2);
		return k2;
	default:
		return *p;
	}
}

/* The first of n keys (`stride` apart from `keys`, `width` bytes each)
 * that is > x (`strict`) or >= x, n when none; inlined once per width, so
 * that the loop reads its keys as a hand-written one does. */
static inline __attribute__((always_inline)) size_t
bound_of(const unsigned char *keys, size_t n, size_t stride, size_t width,
	 uint64_t x, bool strict)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		const uint64_t k = key_at(keys + mid * stride, width);

		if (k < x || (strict && k == x))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* bound_of() on the records at base, key at `off`. */
static size_t bound(const void *base, size_t n, size_t stride, size_t off,
		    size_t width, uint64_t x, bool strict)
{
	const unsigned char *keys;

	if (!n)
		return 0;
	keys = (const unsigned char *)base + off;
	switch (width) {
	case 8: return bound_of(keys, n, stride, 8, x, strict);
	case 4: return bound_of(keys, n, stride, 4, x, strict);
	case 2: return bound_of(keys, n, stride, 2, x, strict);
	case 1: return bound_of(keys, n, stride, 1, x, strict);
	default: abort();   /* a caller's mistake: SEARCH_GE() passes sizeof */
	}
}

size_t search_ge(const void *base, size_t n, size_t stride, size_t off,
		 size_t width, uint64_t x)
{
	return bound(base, n, stride, off, width, x, false);
}

size_t search_gt(const void *base, size_t n, size_t stride, size_t off,
		 size_t width, uint64_t x)
{
	return bound(base, n, stride, off, width, x, true);
}
