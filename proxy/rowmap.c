/*
 * rowmap.c - see rowmap.h.
 */
#include <stdlib.h>
#include <string.h>

#include "rowmap.h"

static size_t slot_of(const struct rowmap *m, uint64_t row)
{
	uint64_t h = row * UINT64_C(0x9E3779B97F4A7C15);
	size_t i = (size_t)(h >> 17) & (m->cap - 1);

	while (m->e[i].used && m->e[i].row != row)
		i = (i + 1) & (m->cap - 1);
	return i;
}

struct rowent *rowmap_find(const struct rowmap *m, uint64_t row)
{
	size_t i;

	if (m->n == 0)
		return NULL;
	i = slot_of(m, row);
	return m->e[i].used ? &m->e[i] : NULL;
}

static int grow(struct rowmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024, ocap = m->cap;
	struct rowent *old = m->e, *e = calloc(cap, sizeof(*e));

	if (e == NULL)
		return -1;
	m->e = e;
	m->cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used)
			m->e[slot_of(m, old[i].row)] = old[i];
	free(old);
	return 0;
}

struct rowent *rowmap_get(struct rowmap *m, uint64_t row)
{
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3 && grow(m) != 0)
		return NULL;
	i = slot_of(m, row);
	if (!m->e[i].used) {
		memset(&m->e[i], 0, sizeof(m->e[i]));
		m->e[i].used = 1;
		m->e[i].row = row;
		m->n++;
	}
	return &m->e[i];
}

int rowmap_merge(struct rowmap *to, struct rowmap *from)
{
	for (size_t i = 0; i < from->cap; i++) {
		struct rowent *s = &from->e[i], *d;

		if (!s->used)
			continue;
		if ((d = rowmap_get(to, s->row)) == NULL)
			return -1;
		free(d->rec);
		d->loc = s->loc;
		d->rec = s->rec;
		d->del = s->del;
		s->rec = NULL;
	}
	rowmap_clear(from);
	return 0;
}

void rowmap_clear(struct rowmap *m)
{
	if (m->n == 0)
		return;
	for (size_t i = 0; i < m->cap; i++)
		if (m->e[i].used) {
			free(m->e[i].rec);
			m->e[i].rec = NULL;
			m->e[i].used = 0;
		}
	m->n = 0;
}

void rowmap_free(struct rowmap *m)
{
	rowmap_clear(m);
	free(m->e);
	m->e = NULL;
	m->cap = 0;
}
