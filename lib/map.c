// SPDX-License-Identifier: MIT
/* The one hash map of gotrace: 64-bit keys to 32-bit values; see map.h. */
#include <stdlib.h>
#include <string.h>

#include "map.h"

/* The home slot of `k` (MurmurHash3's finaliser, first half). */
static inline uint32_t map_home(const struct u64map *m, uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k & (m->cap - 1);
}

void u64map_free(struct u64map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

void u64map_clear(struct u64map *m)
{
	if (m->slots)
		memset(m->slots, 0, (size_t)m->cap * sizeof(*m->slots));
	m->n = 0;
}

uint32_t *u64map_find(const struct u64map *m, uint64_t key, uint32_t *pos)
{
	if (!m->n)
		return NULL;
	const uint32_t mask = m->cap - 1;
	/* the load stays under 3/4: an empty slot ends every walk */
	for (uint32_t i = (map_home(m, key) + *pos) & mask;; i = (i + 1) & mask) {
		struct u64map_slot *s = &m->slots[i];
		++*pos;
		if (!s->used)
			return NULL;
		if (s->key == key)
			return &s->val;
	}
}

uint32_t *u64map_get(const struct u64map *m, uint64_t key)
{
	uint32_t pos = 0;

	return u64map_find(m, key, &pos);
}

/* Puts (key, val) in the first free slot of its walk (room is there). */
static void map_place(struct u64map *m, uint64_t key, uint32_t val)
{
	const uint32_t mask = m->cap - 1;
	uint32_t i = map_home(m, key);

	while (m->slots[i].used)
		i = (i + 1) & mask;
	m->slots[i] = (struct u64map_slot){ .key = key, .val = val, .used = 1 };
}

static int map_grow(struct u64map *m)
{
	struct u64map nm = { 0 };

	nm.cap = m->cap ? m->cap * 2 : 64;
	if (!nm.cap)
		return -1;
	nm.slots = calloc(nm.cap, sizeof(*nm.slots));
	if (!nm.slots)
		return -1;
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->slots[i].used)
			map_place(&nm, m->slots[i].key, m->slots[i].val);
	nm.n = m->n;
	free(m->slots);
	*m = nm;
	return 0;
}

int u64map_add(struct u64map *m, uint64_t key, uint32_t val, uint32_t max)
{
	if (m->n >= max)
		return -1;
	if ((uint64_t)(m->n + 1) * 4 > (uint64_t)m->cap * 3 && map_grow(m))
		return -1;
	map_place(m, key, val);
	m->n++;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint32_t val, uint32_t max)
{
	uint32_t *v = u64map_get(m, key);

	if (v) {
		*v = val;
		return 0;
	}
	return u64map_add(m, key, val, max);
}

int u64map_del(struct u64map *m, uint64_t key, uint32_t val)
{
	uint32_t pos = 0;
	const uint32_t *v;

	while ((v = u64map_find(m, key, &pos)) && *v != val)
		;
	if (!v)
		return -1;
	/* backward shift: entries after the hole that may live in it move
	 * up, so that every walk still meets its entries before a free slot */
	const uint32_t mask = m->cap - 1;
	uint32_t hole = (map_home(m, key) + pos - 1) & mask;
	for (uint32_t j = (hole + 1) & mask; m->slots[j].used; j = (j + 1) & mask) {
		const uint32_t home = map_home(m, m->slots[j].key);
		/* j stays when its home lies cyclically in (hole, j] */
		if (((j - home) & mask) < ((j - hole) & mask))
			continue;
		m->slots[hole] = m->slots[j];
		hole = j;
	}
	m->slots[hole].used = 0;
	m->n--;
	return 0;
}

uint64_t u64map_hash_mem(const void *p, size_t n, uint64_t seed)
{
	const uint8_t *s = p;
	uint64_t h = 0xcbf29ce484222325ull ^ seed;   /* FNV-1a, 64-bit */

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint64_t u64map_hash_str(const char *s, uint64_t seed)
{
	return u64map_hash_mem(s, strlen(s), seed);
}
