/*
 * u64map.c - see u64map.h.
 */
#include <stdlib.h>

#include "u64map.h"

static size_t home(const struct u64map *m, uint64_t key)
{
	return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 17) & (m->cap - 1);
}

static size_t find_slot(const struct u64map *m, uint64_t key)
{
	size_t i = home(m, key);

	while (m->e[i].val != 0 && m->e[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint64_t u64map_get(const struct u64map *m, uint64_t key)
{
	return m->n == 0 ? 0 : m->e[find_slot(m, key)].val;
}

/* Rehash into cap slots (a power of two holding n at 3/4 or less). */
static int rehash(struct u64map *m, size_t cap)
{
	size_t ocap = m->cap;
	struct u64ent *old = m->e, *e = calloc(cap, sizeof(*e));

	if (e == NULL)
		return -1;
	m->e = e;
	m->cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].val != 0)
			m->e[find_slot(m, old[i].key)] = old[i];
	free(old);
	return 0;
}

int u64map_reserve(struct u64map *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 1024;

	while (n * 4 > cap * 3)
		cap *= 2;
	return cap == m->cap ? 0 : rehash(m, cap);
}

int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	size_t i;

	if (m->n > 0 && m->e[i = find_slot(m, key)].val != 0) {
		m->e[i].val = val;              /* a key held: no room needed */
		return 0;
	}
	if (u64map_reserve(m, m->n + 1) != 0)
		return -1;
	i = find_slot(m, key);
	m->n++;
	m->e[i].key = key;
	m->e[i].val = val;
	return 0;
}

void u64map_del(struct u64map *m, uint64_t key)
{
	size_t i, j, mask = m->cap - 1;

	if (m->n == 0 || m->e[i = find_slot(m, key)].val == 0)
		return;
	/* shift back the entries after it that probed past it */
	for (j = i;;) {
		size_t k;

		m->e[i].val = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (m->e[j].val == 0) {
				m->n--;
				return;
			}
			k = home(m, m->e[j].key);
			/* k cyclically in (i, j]: the entry stays */
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		m->e[i] = m->e[j];
		i = j;
	}
}

void u64map_free(struct u64map *m)
{
	free(m->e);
	m->e = NULL;
	m->cap = m->n = 0;
}
