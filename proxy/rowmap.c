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

/* A table of cap slots holding n entries is at most 3/4 full. */
static int fits(size_t cap, size_t n)
{
	return n * 4 <= cap * 3;
}

static int grow_to(struct rowmap *m, size_t cap)
{
	size_t ocap = m->cap;
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

int rowmap_reserve(struct rowmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 1024;

	while (!fits(cap, m->n + n))
		cap *= 2;
	return cap == m->cap ? 0 : grow_to(m, cap);
}

struct rowent *rowmap_get(struct rowmap *m, uint64_t row)
{
	size_t i;

	if (!fits(m->cap, m->n + 1) && rowmap_reserve(m, 1) != 0)
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

void rowmap_merge(struct rowmap *to, struct rowmap *from)
{
	for (size_t i = 0; i < from->cap && from->n > 0; i++) {
		struct rowent *s = &from->e[i], *d;

		if (!s->used)
			continue;
		d = rowmap_get(to, s->row);      /* room reserved: never NULL */
		free(d->rec);
		d->loc = s->loc;
		d->rec = s->rec;
		d->del = s->del;
		s->rec = NULL;
		s->used = 0;
		from->n--;
	}
	rowmap_clear(from);
}

void rowmap_clear(struct rowmap *m)
{
	for (size_t i = 0; i < m->cap && m->n > 0; i++)
		if (m->e[i].used) {
			free(m->e[i].rec);
			m->e[i].rec = NULL;
			m->e[i].used = 0;
			m->n--;
		}
	/* a table grown for one large statement is not kept: the next ones,
	 * mostly small, would pass over all of it at each merge and clear */
	if (m->cap > ROWMAP_KEEP_CAP) {
		free(m->e);
		m->e = NULL;
		m->cap = 0;
	}
}

void rowmap_free(struct rowmap *m)
{
	rowmap_clear(m);
	free(m->e);
	m->e = NULL;
	m->cap = 0;
}
