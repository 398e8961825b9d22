/* SPDX-License-Identifier: MIT */
/*
 * A small CBOR (RFC 8949) cursor for the reader: decodes item heads from a
 * bounded buffer without allocating, and skips items to a bounded depth.
 * Every length is checked against the bytes left before it is used.
 * Indefinite lengths and reserved additional-information values are
 * rejected (spec/FORMAT.md: ".gtr uses definite lengths only").
 */
#ifndef GTR_CBOR_INTERNAL_H
#define GTR_CBOR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
	GCR_UINT = 0, GCR_NEGINT = 1, GCR_BYTES = 2, GCR_TEXT = 3,
	GCR_ARRAY = 4, GCR_MAP = 5, GCR_TAG = 6, GCR_SIMPLE = 7,
};

/* Simple values (major type 7), as additional information. */
enum { GCR_FALSE = 20, GCR_TRUE = 21, GCR_NULL = 22, GCR_UNDEF = 23 };

struct gcr {
	const uint8_t *p, *end;
};

/*
 * Reads one item head. *major gets the major type, *ai the additional
 * information (0..27), *val the argument (the count, length or value; for
 * major 7 the float bits or simple value). Byte and text string heads are
 * checked to fit the bytes left. Returns 0, or -1 on malformed input.
 */
static inline int gcr_head(struct gcr *c, unsigned *major, unsigned *ai,
			   uint64_t *val)
{
	*major = *ai = 0;
	*val = 0;
	if (c->p >= c->end)
		return -1;
	const uint8_t b = *c->p++;
	const unsigned a = b & 31;
	uint64_t v;

	*major = b >> 5;
	*ai = a;
	if (a < 24) {
		v = a;
	} else if (a <= 27) {
		const unsigned n = 1u << (a - 24);
		if ((size_t)(c->end - c->p) < n)
			return -1;
		v = 0;
		for (unsigned i = 0; i < n; i++)
			v = (v << 8) | c->p[i];
		c->p += n;
	} else {
		return -1; /* reserved or indefinite length */
	}
	*val = v;
	if ((*major == GCR_BYTES || *major == GCR_TEXT) &&
	    v > (uint64_t)(c->end - c->p))
		return -1;
	return 0;
}

/* Skips one whole item, nested at most `depth` levels. 0 or -1. */
static inline int gcr_skip(struct gcr *c, int depth)
{
	unsigned major, ai;
	uint64_t v;

	if (depth <= 0 || gcr_head(c, &major, &ai, &v))
		return -1;
	switch (major) {
	case GCR_BYTES:
	case GCR_TEXT:
		c->p += v;
		return 0;
	case GCR_MAP:
		if (v > (uint64_t)(c->end - c->p))
			return -1;
		v *= 2;
		/* fall through */
	case GCR_ARRAY:
		if (v > (uint64_t)(c->end - c->p))
			return -1; /* every item takes at least one byte */
		for (uint64_t i = 0; i < v; i++)
			if (gcr_skip(c, depth - 1))
				return -1;
		return 0;
	case GCR_TAG:
		return gcr_skip(c, depth - 1);
	default:
		return 0;
	}
}

/* Reads a head that must be of `major`; its argument to *val. 0 or -1. */
static inline int gcr_expect(struct gcr *c, unsigned major, uint64_t *val)
{
	unsigned m, ai;

	if (gcr_head(c, &m, &ai, val) || m != major)
		return -1;
	if (major == GCR_SIMPLE)
		*val = ai;
	return 0;
}

static inline int gcr_uint(struct gcr *c, uint64_t *v)
{
	return gcr_expect(c, GCR_UINT, v);
}

/* A uint that fits 32 bits. */
static inline int gcr_u32(struct gcr *c, uint32_t *v)
{
	uint64_t u;

	if (gcr_uint(c, &u) || u > UINT32_MAX)
		return -1;
	*v = (uint32_t)u;
	return 0;
}

static inline int gcr_bool(struct gcr *c, bool *b)
{
	uint64_t v;

	if (gcr_expect(c, GCR_SIMPLE, &v) || (v != GCR_FALSE && v != GCR_TRUE))
		return -1;
	*b = v == GCR_TRUE;
	return 0;
}

/* A text string of at most `max` bytes: pointer into the buffer. */
static inline int gcr_text(struct gcr *c, const uint8_t **s, size_t *len,
			   size_t max)
{
	uint64_t v;

	if (gcr_expect(c, GCR_TEXT, &v) || v > max)
		return -1;
	*s = c->p;
	*len = (size_t)v;
	c->p += v;
	return 0;
}

/* Key of a map with text keys: compares without copying. */
static inline bool gcr_key_is(const uint8_t *k, size_t klen, const char *name)
{
	const size_t n = strlen(name);
	return n == klen && !memcmp(k, name, n);
}

#endif /* GTR_CBOR_INTERNAL_H */
