/*
 * stash.c - see stash.h.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cry.h"
#include "stash.h"

struct px_stash_ent *stash_find(struct px_state *st, uint64_t rowid)
{
	uint64_t v = u64map_get(&st->stash_ix, rowid);

	return v ? &st->stash[v - 1] : NULL;
}

static int table_held(const struct px_state *st, uint32_t id)
{
	for (const struct px_table *t = st->tables; t; t = t->next)
		if (t->id == id)
			return t->excl_owner != 0 || t->dropped;
	return 1;                                /* no such table: leave it */
}

/* A group's candidates, chained (stash_pick). */
struct gslot {
	uint64_t grp;
	size_t first, last;           /* candidates, chained by next[]   */
	int used, taken;
};

static struct gslot *gslot_of(struct gslot *t, size_t mask, uint64_t grp)
{
	size_t i = (size_t)(grp * UINT64_C(0x9E3779B97F4A7C15) >> 32) & mask;

	while (t[i].used && t[i].grp != grp)
		i = (i + 1) & mask;
	return &t[i];
}

int stash_hold_reserve(struct stash_held *h, size_t more)
{
	if (h->n + more > h->cap) {
		size_t cap = h->cap ? h->cap : 64;
		uint64_t *v;

		while (cap < h->n + more)
			cap *= 2;
		if ((v = realloc(h->v, cap * sizeof(*v))) == NULL)
			return LWC_ERR_NOMEM;
		h->v = v;
		h->cap = cap;
	}
	return LWC_OK;
}

void stash_hold(struct stash_held *h, struct px_stash_ent *e, uint64_t owner)
{
	e->owner = owner;
	if (h->n < h->cap)                       /* (reserved: always) */
		h->v[h->n++] = e->rowid;
}

void stash_held_free(struct stash_held *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}

/* May e be picked by statement seq (any: whatever its delay)? */
static int may_pick(const struct px_state *st, const struct px_stash_ent *e, uint64_t seq,
		    int any)
{
	return e->owner == 0 && (any || e->eligible <= seq) && !table_held(st, e->table);
}

static void take(struct stash_held *h, struct px_stash_ent *e, uint64_t owner, size_t n,
		 uint64_t *rowids, uint32_t *tables, uint64_t *grps)
{
	stash_hold(h, e, owner);
	rowids[n] = e->rowid;
	tables[n] = e->table;
	grps[n] = e->grp;
}

size_t stash_pick(struct px_state *st, struct stash_held *h, uint64_t owner, uint64_t seq,
		  size_t max, uint64_t *rowids, uint32_t *tables, uint64_t *grps)
{
	size_t *cand, *next = NULL, *perm = NULL, nc = 0, n = 0, cap = 16, mask;
	struct gslot *gs = NULL;
	struct cry_draws d = CRY_DRAWS_INIT;
	int any = st->nstash * 2 > st->stash_max;

	if (max == 0 || st->nstash == 0 || stash_hold_reserve(h, max) != LWC_OK)
		return 0;
	if (st->evict_group <= 1 && st->nstash <= UINT32_MAX) {
		/* every row its own group: rows drawn uniformly from the whole
		 * stash, kept when they may go (a row kept is held, so it is not
		 * kept twice): a uniform choice among those that may, as long as
		 * the draws find them; what they did not, the pass below picks
		 * uniformly among the rest */
		for (size_t tries = 4 * max + 64; n < max && tries > 0; tries--) {
			struct px_stash_ent *e = &st->stash[cry_draw(&d, (uint32_t)st->nstash)];

			if (may_pick(st, e, seq, any))
				take(h, e, owner, n++, rowids, tables, grps);
		}
		if (n == max) {
			cry_draws_wipe(&d);
			return n;
		}
	}
	if ((cand = malloc(st->nstash * sizeof(*cand))) == NULL) {
		cry_draws_wipe(&d);
		return n;
	}
	for (size_t i = 0; i < st->nstash; i++)
		if (may_pick(st, &st->stash[i], seq, any))
			cand[nc++] = i;
	if (st->evict_group <= 1) {
		/* the rest uniformly (partial Fisher-Yates), no group bookkeeping */
		for (size_t c = 0; c < nc && n < max; c++) {
			size_t j = c + cry_draw(&d, (uint32_t)(nc - c)), tmp = cand[c];

			cand[c] = cand[j];
			cand[j] = tmp;
			take(h, &st->stash[cand[c]], owner, n++, rowids, tables, grps);
		}
		free(cand);
		cry_draws_wipe(&d);
		return n;
	}
	while (cap < 2 * nc)
		cap *= 2;
	mask = cap - 1;
	next = malloc((nc ? nc : 1) * sizeof(*next));
	perm = malloc((nc ? nc : 1) * sizeof(*perm));
	gs = calloc(cap, sizeof(*gs));
	if (next == NULL || perm == NULL || gs == NULL)
		goto out;
	/* each group's candidates in a chain, in the stash's order */
	for (size_t c = 0; c < nc; c++) {
		struct gslot *g = gslot_of(gs, mask, st->stash[cand[c]].grp);

		next[c] = SIZE_MAX;
		perm[c] = c;
		if (!g->used) {
			g->used = 1;
			g->grp = st->stash[cand[c]].grp;
			g->first = c;
		} else {
			next[g->last] = c;
		}
		g->last = c;
	}
	/* rows drawn uniformly; each brings its group (Fisher-Yates, on demand) */
	for (size_t i = 0; i < nc && n < max; i++) {
		size_t j = i + cry_draw(&d, (uint32_t)(nc - i)), c = perm[j];
		struct gslot *g;

		perm[j] = perm[i];
		perm[i] = c;
		g = gslot_of(gs, mask, st->stash[cand[c]].grp);
		if (g->taken)
			continue;
		g->taken = 1;
		for (size_t x = g->first; x != SIZE_MAX && n < max; x = next[x])
			take(h, &st->stash[cand[x]], owner, n++, rowids, tables, grps);
	}
out:
	cry_draws_wipe(&d);
	free(cand);
	free(next);
	free(perm);
	free(gs);
	return n;
}

void stash_defer(struct px_state *st, const uint64_t *rowids, size_t n, uint64_t seq)
{
	uint64_t grp = ++st->next_grp, at = seq + 1 + randombytes_uniform(PX_EVICT_DELAY);

	for (size_t i = 0; i < n; i++) {
		struct px_stash_ent *e = stash_find(st, rowids[i]);

		if (e != NULL) {
			e->grp = grp;
			e->eligible = at;
		}
	}
}

void stash_release(struct px_state *st, struct stash_held *h, uint64_t owner)
{
	for (size_t i = 0; i < h->n; i++) {
		struct px_stash_ent *e = stash_find(st, h->v[i]);

		if (e != NULL && e->owner == owner)
			e->owner = 0;
	}
	h->n = 0;
}

struct add {
	uint64_t rowid;
	uint32_t table;
	uint8_t fresh;
};

static int cmp_add(const void *a, const void *b)
{
	uint64_t x = ((const struct add *)a)->rowid, y = ((const struct add *)b)->rowid;
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
		const uint64_t *adds, const uint32_t *add_tables, size_t nadd, size_t nfresh,
		const uint64_t *from, size_t nfrom)
{
	struct add *a = NULL;
	size_t nnew = 0;
	uint32_t G = st->evict_group ? st->evict_group : 1;
	uint64_t grp = 0, at = 0;

	if (ndel == 0 && nadd == 0)
		return LWC_OK;
	/* all the memory first: nothing below can fail half-way */
	if (st->nstash + nadd > st->cap_stash) {
		size_t cap = st->cap_stash ? st->cap_stash : 256;
		struct px_stash_ent *p;

		while (cap < st->nstash + nadd)
			cap *= 2;
		if ((p = realloc(st->stash, cap * sizeof(*p))) == NULL)
			return LWC_ERR_NOMEM;
		st->stash = p;
		st->cap_stash = cap;
	}
	if (u64map_reserve(&st->stash_ix, st->nstash + nadd) != 0)
		return LWC_ERR_NOMEM;
	if (nadd && (a = malloc(nadd * sizeof(*a))) == NULL)
		return LWC_ERR_NOMEM;
	for (size_t x = 0; x < nadd; x++) {
		a[x].rowid = adds[x];
		a[x].table = add_tables[x];
		a[x].fresh = x + nfresh >= nadd;
	}
	if (nadd)
		qsort(a, nadd, sizeof(*a), cmp_add);
	/* deleted rows leave; the last entry takes a leaver's place */
	for (size_t k = 0; k < ndel; k++) {
		uint64_t v = u64map_get(&st->stash_ix, dels[k]);
		size_t i, last = st->nstash - 1;

		if (v == 0)
			continue;
		i = (size_t)(v - 1);
		if (i != last) {
			st->stash[i] = st->stash[last];
			(void)u64map_put(&st->stash_ix, st->stash[i].rowid, i + 1);   /* reserved */
		}
		u64map_del(&st->stash_ix, dels[k]);
		st->nstash--;
	}
	/* added rows come in (an add replaces a row held, also one deleted
	 * above), in row id order: every G of them a group with one delay */
	for (size_t j = 0; j < nadd; j++) {
		struct px_stash_ent e;
		uint64_t v;

		if (j > 0 && a[j].rowid == a[j - 1].rowid)
			continue;
		if (nnew++ % G == 0) {
			grp = ++st->next_grp;
			at = st->seq + 1 + randombytes_uniform(PX_EVICT_DELAY);
		}
		memset(&e, 0, sizeof(e));
		e.rowid = a[j].rowid;
		e.table = a[j].table;
		e.owner = 0;
		e.grp = grp;
		e.origin = st->seq;
		e.eligible = at;
		e.fresh = a[j].fresh;
		e.nfrom = nfrom <= PX_FROM_MAX ? (uint32_t)nfrom : 0;
		if (e.nfrom)
			memcpy(e.from, from, e.nfrom * sizeof(*from));
		if ((v = u64map_get(&st->stash_ix, e.rowid)) != 0) {
			e.fresh |= st->stash[v - 1].fresh;     /* still in no block */
			st->stash[v - 1] = e;
		} else {
			st->stash[st->nstash] = e;
			(void)u64map_put(&st->stash_ix, e.rowid, st->nstash + 1);     /* reserved */
			st->nstash++;
		}
	}
	free(a);
	return LWC_OK;
}
