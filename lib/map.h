/* SPDX-License-Identifier: MIT */
/*
 * The one hash map of gotrace: open addressing (linear probing) from a
 * 64-bit key to a 32-bit value (an index, an id), growing by doubling up
 * to a given number of entries. A slot holds its key and value together,
 * so a lookup touches one cache line.
 *
 * Keys that are strings or wider than 64 bits are hashed to 64 bits
 * (u64map_hash_str(), u64map_hash2()) and the user keeps what was hashed:
 * such entries go in with u64map_add(), which keeps entries of one key
 * apart, and a lookup walks them with u64map_find() and checks each.
 */
#ifndef LIB_MAP_H
#define LIB_MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map_slot {
	uint64_t key;
	uint32_t val;
	uint32_t used;   /* 1: holds an entry */
};

struct u64map {
	struct u64map_slot *slots;
	uint32_t cap;    /* slots, power of two (0 before the first entry) */
	uint32_t n;      /* entries */
};

/* Frees the slots; the map is empty and reusable after. */
void u64map_free(struct u64map *m);

/* Forgets every entry, keeping the slots. */
void u64map_clear(struct u64map *m);

/* Pointer to the value of `key` (the first of them, for a key added more
 * than once), or NULL. Valid until the next put, add or del. */
uint32_t *u64map_get(const struct u64map *m, uint64_t key);

/*
 * The entries of `key` one after the other: start with *pos = 0; each call
 * returns the next value of `key` (a pointer, valid until the next put, add
 * or del) and moves *pos on, NULL after the last.
 */
uint32_t *u64map_find(const struct u64map *m, uint64_t key, uint32_t *pos);

/* Inserts or replaces; 0, or -1 when out of memory or at `max` entries. */
int u64map_put(struct u64map *m, uint64_t key, uint32_t val, uint32_t max);

/* Inserts a new entry even when `key` has some already (u64map_find() walks
 * them); 0, or -1 when out of memory or at `max` entries. */
int u64map_add(struct u64map *m, uint64_t key, uint32_t val, uint32_t max);

/* Removes the entry (key, val); 0, or -1 when there is none. */
int u64map_del(struct u64map *m, uint64_t key, uint32_t val);

/* FNV-1a hash of the NUL-terminated string `s`, mixed with `seed`. */
uint64_t u64map_hash_str(const char *s, uint64_t seed);

/* FNV-1a hash of the `n` bytes at `p`, mixed with `seed`. */
uint64_t u64map_hash_mem(const void *p, size_t n, uint64_t seed);

/* A 64-bit hash of the pair (a, b), for keys of two words (a process and a
 * goroutine, ...); distinct pairs may collide. */
static inline uint64_t u64map_hash2(uint64_t a, uint64_t b)
{
	return a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full ^ b >> 29;
}

#endif /* LIB_MAP_H */
