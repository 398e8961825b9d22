/* SPDX-License-Identifier: MIT */
/*
 * search: binary search over an array of records sorted by an unsigned
 * integer field (an address, an offset, a time). The one lower bound:
 * "the first record whose key is >= x" and "the first whose key is > x"
 * (one before it, the last whose key is <= x), in O(log n) comparisons,
 * allocating nothing.
 */
#ifndef LIB_SEARCH_H
#define LIB_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * The index of the first of the `n` records at `base` (`stride` bytes
 * each) whose key is >= x, or n when none is. A record's key is the
 * unsigned integer of `width` bytes (1, 2, 4 or 8; native byte order) at
 * byte `off` of it; keys ascend, equal keys allowed (the first of them is
 * found). `base` is not read when n is 0 (NULL is fine then).
 */
size_t search_ge(const void *base, size_t n, size_t stride, size_t off,
		 size_t width, uint64_t x);

/*
 * As search_ge(), the first record whose key is > x (n when none is):
 * the index before it is the last record whose key is <= x, none when
 * it is 0.
 */
size_t search_gt(const void *base, size_t n, size_t stride, size_t off,
		 size_t width, uint64_t x);

/*
 * search_ge() and search_gt() over array `v` of n structs keyed by their
 * member `field`: SEARCH_GE(b->funcs, b->nfuncs, entry, pc). An array of
 * plain integers is search_ge(v, n, sizeof(*v), 0, sizeof(*v), x).
 */
#define SEARCH_GE(v, n, field, x)                                            \
	search_ge((v), (n), sizeof(*(v)), offsetof(__typeof__(*(v)), field), \
		  sizeof((v)->field), (x))
#define SEARCH_GT(v, n, field, x)                                            \
	search_gt((v), (n), sizeof(*(v)), offsetof(__typeof__(*(v)), field), \
		  sizeof((v)->field), (x))

#endif /* LIB_SEARCH_H */
