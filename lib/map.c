// SPDX-License-Identifier: MIT
/* The one hash map of gotrace: 64-bit keys to 32-bit values; see map.h. */
#include <stdlib.h>
#include <string.h>

#include "map.h"

static uint32_t map_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

void u64map_clear(struct u64map *m)
{
	if (m->used)
		memset(m->used, 0, m->cap);
	m->n = 0;
}

uint32_t *u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->n)
		return NULL;
	const uint32_t mask = m->cap - 1;
	for (uint32_t i = map_hash(key) & mask;; i = (i + 1) & mask) {
		if (!m->used[i])
			return NULL;
		if (m->keys[i] == key)
			return &m->vals[i];
	}
}

static int map_grow(struct u64map *m)
{
	struct u64map nm = { 0 };

	nm.cap = m->cap ? m->cap * 2 : 64;
	nm.keys = malloc(nm.cap * sizeof(*nm.keys));
	nm.vals = malloc(nm.cap * sizeof(*nm.vals));
	nm.used = calloc(nm.cap, 1);
	if (!nm.keys || !nm.vals || !nm.used) {
		u64map_free(&nm);
		return -1;
	}
	for (uint32_t i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		uint32_t j = map_hash(m->keys[i]) & (nm.cap - 1);
		while (nm.used[j])
			j = (j + 1) & (nm.cap - 1);
		nm.used[j] = 1;
		nm.keys[j] = m->keys[i];
		nm.vals[j] = m->vals[i];
	}
	nm.n = m->n;
	u64map_free(m);
	*m = nm;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint32_t val, uint32_t max)
{
	uint32_t *v = u64map_get(m, key);

	if (v) {
		*v = val;
		return 0;
	}
	if (m->n >= max)
		return -1;
	if ((m->n + 1) * 4 > m->cap * 3 && map_grow(m))
		return -1;
	uint32_t i = map_hash(key) & (m->cap - 1);
	while (m->used[i])
		i = (i + 1) & (m->cap - 1);
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

uint64_t u64map_hash_str(const char *s, uint64_t seed)
{
	uint64_t h = 0xcbf29ce484222325ull ^ seed;   /* FNV-1a, 64-bit */

	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}
