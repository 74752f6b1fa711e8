/*
 * pending.c - unique values claimed by INSERTs and UPDATEs in flight, behind
 * an open-addressing hash index (st->mu held).
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine_int.h"
#include "log.h"

/* NULLs never violate a unique constraint (SQL): the column's NULL token,
 * when the client told it, is exempt. */
int is_null_tok(const struct px_table *t, uint32_t c, const uint8_t *tok)
{
	return c < 64 && (t->has_null >> c & 1) &&
	       memcmp(t->null_tok[c], tok, CRY_TOKEN_BYTES) == 0;
}

/* The pending values live in an array (st->pending) with an open-addressing
 * hash index over it (st->phash, slots hold index + 1), so a statement that
 * checks a million values does not scan a million claims each time. */
static size_t pending_hash(uint32_t table, uint32_t col, const uint8_t *tok)
{
	uint64_t h;

	memcpy(&h, tok, sizeof(h));              /* tokens are pseudorandom */
	h ^= ((uint64_t)table << 32 | col) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h ^ (h >> 29));
}

static int pending_index(struct px_state *st, size_t i)
{
	const struct px_pending *e = &st->pending[i];
	size_t mask = st->phash_cap - 1, h = pending_hash(e->table, e->col, e->token) & mask;

	while (st->phash[h] != 0)
		h = (h + 1) & mask;
	st->phash[h] = (uint32_t)(i + 1);
	return LWC_OK;
}

static int pending_rehash(struct px_state *st, size_t want)
{
	size_t cap = 64;
	uint32_t *t;

	while (cap < 2 * want)
		cap *= 2;
	if (cap != st->phash_cap) {
		if ((t = calloc(cap, sizeof(*t))) == NULL)
			return LWC_ERR_NOMEM;
		free(st->phash);
		st->phash = t;
		st->phash_cap = cap;
	} else {
		memset(st->phash, 0, cap * sizeof(*st->phash));
	}
	for (size_t i = 0; i < st->npending; i++)
		pending_index(st, i);
	return LWC_OK;
}

int pending_find(struct px_state *st, uint32_t table, uint32_t col,
			const uint8_t *tok, uint64_t not_owner)
{
	size_t mask, h;

	if (st->npending == 0)
		return 0;
	mask = st->phash_cap - 1;
	for (h = pending_hash(table, col, tok) & mask; st->phash[h] != 0; h = (h + 1) & mask) {
		const struct px_pending *p = &st->pending[st->phash[h] - 1];
		if (p->owner != not_owner && p->table == table && p->col == col &&
		    memcmp(p->token, tok, CRY_TOKEN_BYTES) == 0)
			return 1;
	}
	return 0;
}

int pending_add(struct px_state *st, uint32_t table, uint32_t col,
		       const uint8_t *tok, uint64_t owner)
{
	if (st->npending == st->cap_pending) {
		size_t cap = st->cap_pending ? st->cap_pending * 2 : 64;
		void *p = realloc(st->pending, cap * sizeof(*st->pending));
		if (p == NULL)
			return LWC_ERR_NOMEM;
		st->pending = p;
		st->cap_pending = cap;
	}
	if (st->phash_cap < 2 * (st->npending + 1) &&
	    pending_rehash(st, st->npending + 1) != LWC_OK)
		return LWC_ERR_NOMEM;
	st->pending[st->npending].table = table;
	st->pending[st->npending].col = col;
	memcpy(st->pending[st->npending].token, tok, CRY_TOKEN_BYTES);
	st->pending[st->npending].owner = owner;
	pending_index(st, st->npending);
	st->npending++;
	return LWC_OK;
}

void pending_drop(struct px_state *st, uint64_t owner)
{
	size_t w = 0;

	for (size_t r = 0; r < st->npending; r++)
		if (st->pending[r].owner != owner)
			st->pending[w++] = st->pending[r];
	if (w == st->npending)
		return;
	st->npending = w;
	/* indexes moved: rebuild (a smaller table once the claims are gone) */
	if (pending_rehash(st, w) != LWC_OK) {
		/* keep the old table size: rebuild in place */
		memset(st->phash, 0, st->phash_cap * sizeof(*st->phash));
		for (size_t i = 0; i < st->npending; i++)
			pending_index(st, i);
	}
}
