/* SPDX-License-Identifier: MIT */
/*
 * The one hash map of gotrace: open addressing from a 64-bit key to a
 * 32-bit value (an index, an id), growing by doubling up to a given
 * number of entries. Keys that are strings are hashed to 64 bits with
 * u64map_hash_str(); the user keeps the strings and checks a hit.
 */
#ifndef LIB_MAP_H
#define LIB_MAP_H

#include <stdint.h>

struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	uint8_t *used;
	uint32_t cap;    /* slots, power of two */
	uint32_t n;
};

/* Frees the slots; the map is empty and reusable after. */
void u64map_free(struct u64map *m);

/* Forgets every entry, keeping the slots. */
void u64map_clear(struct u64map *m);

/* Pointer to the value of `key`, or NULL. */
uint32_t *u64map_get(const struct u64map *m, uint64_t key);

/* Inserts or replaces; 0, or -1 when out of memory or at `max` entries. */
int u64map_put(struct u64map *m, uint64_t key, uint32_t val, uint32_t max);

/* FNV-1a hash of the NUL-terminated string `s`, mixed with `seed`. */
uint64_t u64map_hash_str(const char *s, uint64_t seed);

#endif /* LIB_MAP_H */
