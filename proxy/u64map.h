/*
 * u64map.h - an open-addressing map from a non-zero 64-bit key to a
 * non-zero 64-bit value (linear probing, deletion by shifting back), for
 * the proxy's in-memory indexes of rows: the groups (groups.h) and the
 * stash (stash.h).  Not thread-safe: its users hold st->mu.
 */
#ifndef LWC_PX_U64MAP_H
#define LWC_PX_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map {
	struct u64ent {
		uint64_t key, val;     /* val 0: an empty slot */
	} *e;
	size_t cap, n;                 /* cap a power of two (or 0), n in use */
};

/* key's value, 0 when absent. */
uint64_t u64map_get(const struct u64map *m, uint64_t key);

/* Set key's value (val != 0); -1 when out of memory (the map unchanged).
 * Over a key held it never fails, nor does a new key within what
 * u64map_reserve made room for. */
int u64map_put(struct u64map *m, uint64_t key, uint64_t val);

/* Room for n keys in all, so that puts up to that many cannot fail; -1 when
 * out of memory (the map unchanged). */
int u64map_reserve(struct u64map *m, size_t n);

/* Remove key (nothing when absent). */
void u64map_del(struct u64map *m, uint64_t key);

void u64map_free(struct u64map *m);

#endif
