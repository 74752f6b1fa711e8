/*
 * stash.c - see stash.h.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "stash.h"

struct px_stash_ent *stash_find(struct px_state *st, uint64_t rowid)
{
	size_t lo = 0, hi = st->nstash;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->stash[mid].rowid < rowid)
			lo = mid + 1;
		else if (st->stash[mid].rowid > rowid)
			hi = mid;
		else
			return &st->stash[mid];
	}
	return NULL;
}

static int table_held(const struct px_state *st, uint32_t id)
{
	for (const struct px_table *t = st->tables; t; t = t->next)
		if (t->id == id)
			return t->excl_owner != 0 || t->dropped;
	return 1;                                /* no such table: leave it */
}

size_t stash_pick(struct px_state *st, uint64_t owner, uint64_t seq, size_t max,
		  uint64_t *rowids, uint32_t *tables)
{
	size_t *cand, nc = 0, n;
	int any = st->nstash * 2 > st->stash_max;

	if (max == 0 || st->nstash == 0)
		return 0;
	if ((cand = malloc(st->nstash * sizeof(*cand))) == NULL)
		return 0;
	for (size_t i = 0; i < st->nstash; i++) {
		const struct px_stash_ent *e = &st->stash[i];
		if (e->owner == 0 && (any || e->eligible <= seq) && !table_held(st, e->table))
			cand[nc++] = i;
	}
	n = nc < max ? nc : max;
	for (size_t i = 0; i < n; i++) {
		size_t j = i + randombytes_uniform((uint32_t)(nc - i));
		size_t tmp = cand[i];

		cand[i] = cand[j];
		cand[j] = tmp;
		st->stash[cand[i]].owner = owner;
		rowids[i] = st->stash[cand[i]].rowid;
		tables[i] = st->stash[cand[i]].table;
	}
	free(cand);
	return n;
}

void stash_release(struct px_state *st, uint64_t owner)
{
	for (size_t i = 0; i < st->nstash; i++)
		if (st->stash[i].owner == owner)
			st->stash[i].owner = 0;
}

struct add {
	uint64_t rowid;
	uint32_t table;
};

static int cmp_add(const void *a, const void *b)
{
	uint64_t x = ((const struct add *)a)->rowid, y = ((const struct add *)b)->rowid;
	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int stash_may_land(const struct px_stash_ent *e, uint64_t b)
{
	for (uint32_t i = 0; i < e->nfrom; i++)
		if (e->from[i] == b)
			return 0;
	return 1;
}

int stash_apply(struct px_state *st, const uint64_t *dels, size_t ndel,
		const uint64_t *adds, const uint32_t *add_tables, size_t nadd,
		const uint64_t *from, size_t nfrom)
{
	struct add *a = NULL;
	uint64_t *d = NULL;
	struct px_stash_ent *out;
	size_t i = 0, j = 0, k = 0, n = 0;

	if (ndel == 0 && nadd == 0)
		return LWC_OK;
	out = malloc((st->nstash + nadd + 1) * sizeof(*out));
	if (nadd)
		a = malloc(nadd * sizeof(*a));
	if (ndel)
		d = malloc(ndel * sizeof(*d));
	if (out == NULL || (nadd && a == NULL) || (ndel && d == NULL)) {
		free(out);
		free(a);
		free(d);
		return LWC_ERR_NOMEM;
	}
	for (size_t x = 0; x < nadd; x++) {
		a[x].rowid = adds[x];
		a[x].table = add_tables[x];
	}
	if (nadd)
		qsort(a, nadd, sizeof(*a), cmp_add);
	if (ndel) {
		memcpy(d, dels, ndel * sizeof(*d));
		qsort(d, ndel, sizeof(*d), cmp_u64);
	}
	/* merge: old rows not deleted, and the added ones (an add replaces) */
	while (i < st->nstash || j < nadd) {
		if (j < nadd && (i == st->nstash || a[j].rowid <= st->stash[i].rowid)) {
			if (i < st->nstash && a[j].rowid == st->stash[i].rowid)
				i++;
			if (n == 0 || out[n - 1].rowid != a[j].rowid) {
				out[n].rowid = a[j].rowid;
				out[n].table = a[j].table;
				out[n].owner = 0;
				out[n].eligible = st->seq + 1 + randombytes_uniform(PX_EVICT_DELAY);
				out[n].nfrom = nfrom <= PX_FROM_MAX ? (uint32_t)nfrom : 0;
				if (out[n].nfrom)
					memcpy(out[n].from, from, out[n].nfrom * sizeof(*from));
				n++;
			}
			j++;
			continue;
		}
		while (k < ndel && d[k] < st->stash[i].rowid)
			k++;
		if (!(k < ndel && d[k] == st->stash[i].rowid))
			out[n++] = st->stash[i];
		i++;
	}
	free(st->stash);
	st->cap_stash = st->nstash + nadd + 1;
	st->stash = out;
	st->nstash = n;
	free(a);
	free(d);
	return LWC_OK;
}
