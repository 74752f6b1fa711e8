/*
 * plan.c - a statement's plan (st->mu held): its table and predicate, the
 * rows it matches or the slots it fills, its real and padding blocks,
 * locked; the checks of its rows, and CREATE INDEX's catalog change
 * (engine_int.h).  engine.c runs the statement.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "engine_int.h"
#include "pbarena.h"
#include "wire.h"
#include "par.h"
#include "log.h"
#include "stash.h"
#include "toksort.h"

const Lwc__Row *insert_row(const struct stmt *s, size_t i)
{
	return s->req->insert->rows[i];
}

/* A row of t: its record, and ntok tokens (one per column, then the range
 * tokens); a client whose catalog predates a range index sends fewer and
 * is told so (it reloads the catalog and tries again). */
/* A row of an INSERT or an UPDATE's decision.  as_before: an empty token
 * stands for the row's token as it is (WIRE_FEATURE_TOKENS_AS_BEFORE). */
int check_row(struct stmt *s, const struct px_state *st, const Lwc__Row *r,
	      const struct px_table *t, size_t idx, int as_before)
{
	uint32_t ntok = t->ntok;

	if (r == NULL || r->record.len != st->g.S)
		return stmt_fail(s, LWC_ERR_SCHEMA,
				 "row %zu: record of %zu bytes (this database stores %u)",
				 idx + 1, r ? r->record.len : 0, st->g.S);
	if (r->n_tokens != ntok)
		return stmt_fail(s, LWC_ERR_SCHEMA, "row %zu: %zu tokens for %u columns "
				 "and %u range tokens (the table's indexes changed)",
				 idx + 1, r->n_tokens, t->ncols, ntok - t->ncols);
	for (size_t c = 0; c < ntok; c++) {
		if (as_before && r->tokens[c].len == 0)
			continue;
		if (r->tokens[c].len != CRY_TOKEN_BYTES)
			return stmt_fail(s, LWC_ERR_SCHEMA, "row %zu: token of %zu bytes",
					 idx + 1, r->tokens[c].len);
		/* a complete range index takes no row without its tokens */
		if (t->range_ready >> (t->tcol[c] & 63) & 1 &&
		    px_tok_none(t, (uint32_t)c, r->tokens[c].data))
			return stmt_fail(s, LWC_ERR_SCHEMA, "row %zu: no range token for column %u",
					 idx + 1, t->tcol[c] + 1u);
	}
	return LWC_OK;
}

/* An LMDB error of the unique check, as the statement's. */
static int probe_fail(struct px_state *st, struct stmt *s, int rc)
{
	const char *why;
	int code = px_mdb_err(st, rc, &why);

	return stmt_fail(s, code, "index lookup failed: %s", why);
}

/* INSERT: uniqueness and free slots.  The rows' tokens of a unique column
 * in token order, probed through one pair of cursors (idx_probe). */
static int plan_insert(struct px_worker *w, struct stmt *s, MDB_txn *txn)
{
	struct px_state *st = w->st;
	struct px_table *t = s->t;
	size_t nrows = s->req->insert->n_rows;
	struct idx_probe probe;
	struct tokrow *refs = NULL;
	uint64_t need, room = 0;
	uint32_t limit, min_room;
	int rc;

	if (nrows == 0)
		return LWC_OK;
	for (uint32_t c = 0; c < t->ncols && c < 64; c++) {
		if (!(t->unique >> c & 1))
			continue;
		if (refs == NULL && (refs = malloc(nrows * sizeof(*refs))) == NULL)
			return LWC_ERR_NOMEM;
		for (size_t i = 0; i < nrows; i++) {
			refs[i].tok = insert_row(s, i)->tokens[c].data;
			refs[i].row = i;
		}
		tokrow_sort(refs, nrows);
		if ((rc = idx_probe_open(&probe, txn, t, c)) != 0) {
			free(refs);
			return probe_fail(st, s, rc);
		}
		rc = LWC_OK;
		for (size_t i = 0; i < nrows && rc == LWC_OK; i++) {
			int found, mrc;

			if (is_null_tok(t, c, refs[i].tok))
				continue;
			if (i > 0 && memcmp(refs[i].tok, refs[i - 1].tok, CRY_TOKEN_BYTES) == 0) {
				size_t r1 = refs[i - 1].row, r2 = refs[i].row;

				rc = stmt_fail(s, LWC_ERR_UNIQUE,
					       "duplicate key value in rows %zu and %zu (column %u)",
					       (r1 < r2 ? r1 : r2) + 1, (r1 < r2 ? r2 : r1) + 1, c + 1);
			} else if ((mrc = idx_probe_has(&probe, refs[i].tok, &found)) != 0) {
				rc = probe_fail(st, s, mrc);
			} else if (found) {
				rc = stmt_fail(s, LWC_ERR_UNIQUE,
					       "duplicate key value (row %zu, column %u) already exists",
					       (size_t)refs[i].row + 1, c + 1);
			} else if (pending_find(st, t->id, c, refs[i].tok, 0)) {
				rc = PLAN_WAIT;
			}
		}
		/* one way out of the probe: its cursors are the read
		 * transaction's, which does not free them */
		idx_probe_close(&probe);
		if (rc != LWC_OK) {
			free(refs);
			return rc;
		}
	}
	limit = px_fill_limit(st);
	if (st->relocate && nrows <= st->relocate_max &&
	    st->nstash + st->stash_reserved + nrows <= st->stash_max / 2) {
		/* through the stash: later statements write the rows into random
		 * free slots of their own blocks, so no block is the INSERT's.  The
		 * database grows while the rows could not all find room below the
		 * fill limit (room above it is what evictions use). */
		uint64_t load = st->used_slots + st->nstash + st->stash_reserved + nrows;

		if (load > (uint64_t)limit * st->nblocks) {
			free(refs);
			if (st->growing) {
				atomic_store(&st->grow_wanted, 1);
				return PLAN_WAIT;
			}
			need = (load - (uint64_t)limit * st->nblocks + limit - 1) / limit;
			if (need < st->nblocks / 8)
				need = st->nblocks / 8;
			if (need < 16)
				need = 16;
			s->grow = need;
			return PLAN_GROW;
		}
		s->via_stash = 1;
		s->reserved = nrows;
		st->stash_reserved += nrows;
		goto claim;
	}
	/* a bulk load: fresh blocks, no READ (bulk.c) */
	if (nrows >= (size_t)limit * PX_BULK_BLOCKS) {
		s->bulk = 1;
		goto claim;
	}
	/* free slots: lowest blocks first, up to the fill limit per block (a
	 * bulk load larger than the stash may take): theta without relocation.
	 * With relocation, rows leaving their blocks leave a slot or two free
	 * in many blocks; those are for write-backs, and a bulk load takes only
	 * blocks with at least a quarter of the limit free, so its rows stay
	 * together instead of scattering over thousands of blocks. */
	min_room = st->relocate && limit >= 4 ? limit / 4 : 1;
	while (st->free_hint < st->nblocks && st->occ[st->free_hint] + min_room > limit)
		st->free_hint++;
	for (;;) {
		room = 0;
		for (uint64_t b = st->free_hint; b < st->nblocks && room < nrows; b++)
			if (!st->locked[b] && st->occ[b] + min_room <= limit)
				room += limit - st->occ[b];
		if (room >= nrows)
			break;
		if (st->growing) {
			atomic_store(&st->grow_wanted, 1);
			free(refs);
			return PLAN_WAIT;
		}
		need = (nrows - room + limit - 1) / limit;
		if (need < st->nblocks / 8)
			need = st->nblocks / 8;
		if (need < 16)
			need = 16;
		s->grow = need;
		log_debug("insert of %zu rows: room %llu in blocks %llu..%llu; growing by %llu",
			  nrows, (unsigned long long)room, (unsigned long long)st->free_hint,
			  (unsigned long long)st->nblocks, (unsigned long long)need);
		free(refs);
		return PLAN_GROW;
	}
	s->locs.n = 0;
	for (uint64_t b = st->free_hint; b < st->nblocks && s->locs.n < nrows; b++) {
		const uint64_t *bits = st->bits + b * st->g.words;
		uint32_t avail;

		if (st->locked[b] || st->occ[b] + min_room > limit)
			continue;
		avail = limit - st->occ[b];
		for (uint32_t slot = 0; slot < st->g.m && avail > 0 && s->locs.n < nrows; slot++)
			if (!px_bit(bits, slot)) {
				if (locset_push(&s->locs, PX_LOC(b, slot)) != LWC_OK) {
					free(refs);
					return LWC_ERR_NOMEM;
				}
				avail--;
			}
	}
claim:
	/* claim the unique values until commit */
	if (refs) {
		for (uint32_t c = 0; c < t->ncols && c < 64; c++) {
			if (!(t->unique >> c & 1))
				continue;
			for (size_t i = 0; i < nrows; i++)
				if (!is_null_tok(t, c, insert_row(s, i)->tokens[c].data) &&
				    pending_add(st, t->id, c, insert_row(s, i)->tokens[c].data,
						s->owner) != LWC_OK) {
					free(refs);
					return LWC_ERR_NOMEM;
				}
		}
		free(refs);
	}
	return LWC_OK;
}

/* CREATE UNIQUE INDEX: no value may appear twice already. */
static int cmp_tok16(const void *a, const void *b)
{
	return memcmp(a, b, CRY_TOKEN_BYTES);
}

/* Calls fn on every row entry of t in key order: its 8-byte key and its
 * t->ntok tokens.  A key or entry of another size is MDB_CORRUPTED; fn
 * returns 0 to go on, anything else ends the walk and is returned.  0 when
 * every row was seen, else the LMDB error that ended the walk. */
typedef int (*row_fn)(void *arg, const uint8_t *key, const uint8_t *tok);

static int rows_walk(MDB_txn *txn, const struct px_table *t, row_fn fn, void *arg)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = mdb_cursor_open(txn, t->rows, &cur)) != 0)
		return rc;
	while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
		if (k.mv_size != 8 || d.mv_size != (size_t)t->ntok * CRY_TOKEN_BYTES) {
			rc = MDB_CORRUPTED;
			break;
		}
		if ((rc = fn(arg, k.mv_data, d.mv_data)) != 0)
			break;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* A row walk of the planning phase that failed: the statement's error. */
static int rows_walk_fail(struct stmt *s, int rc)
{
	if (rc == RC_STMT_ERR)
		return s->err;
	if (rc == MDB_CORRUPTED)
		return stmt_fail(s, LWC_ERR_STORE, "malformed row entry");
	if (rc == ENOMEM)
		return stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
	return stmt_fail(s, LWC_ERR_STORE, "lmdb: %s", mdb_strerror(rc));
}

struct uniq_walk {
	const Lwc__CreateIndex *ci;
	uint32_t col;
	uint8_t *v;                 /* the tokens collected */
	size_t n, cap;
};

static int uniq_row(void *arg, const uint8_t *key, const uint8_t *tok)
{
	struct uniq_walk *u = arg;
	const uint8_t *ct = tok + (size_t)u->col * CRY_TOKEN_BYTES;

	(void)key;
	if (u->ci->null_token.len == CRY_TOKEN_BYTES &&
	    memcmp(ct, u->ci->null_token.data, CRY_TOKEN_BYTES) == 0)
		return 0;
	if (u->n == u->cap)
		return MDB_CORRUPTED;       /* more rows than the database counts */
	memcpy(u->v + u->n * CRY_TOKEN_BYTES, ct, CRY_TOKEN_BYTES);
	u->n++;
	return 0;
}

/* The column's equality tokens, from the rows (its index also holds range
 * tokens, which repeat by design): any value twice, NULL apart? */
static int check_unique_ranged(struct stmt *s, MDB_txn *txn, struct px_table *t, uint32_t col)
{
	struct uniq_walk u = { .ci = s->req->create_index, .col = col };
	MDB_stat ms;
	int rc;

	if ((rc = mdb_stat(txn, t->rows, &ms)) != 0)
		return rows_walk_fail(s, rc);
	u.cap = ms.ms_entries;
	if ((u.v = malloc((u.cap ? u.cap : 1) * CRY_TOKEN_BYTES)) == NULL)
		return stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
	if ((rc = rows_walk(txn, t, uniq_row, &u)) != 0) {
		free(u.v);
		return rows_walk_fail(s, rc);
	}
	qsort(u.v, u.n, CRY_TOKEN_BYTES, cmp_tok16);
	for (size_t i = 1; i < u.n; i++)
		if (memcmp(u.v + (i - 1) * CRY_TOKEN_BYTES, u.v + i * CRY_TOKEN_BYTES,
			   CRY_TOKEN_BYTES) == 0) {
			free(u.v);
			return stmt_fail(s, LWC_ERR_UNIQUE,
					 "cannot create a unique index: column %u has duplicate values",
					 col + 1);
		}
	free(u.v);
	return LWC_OK;
}

struct ready_walk {
	struct stmt *s;
	const struct px_table *t;
	uint32_t col;
};

static int ready_row(void *arg, const uint8_t *key, const uint8_t *tok)
{
	struct ready_walk *r = arg;

	(void)key;
	for (uint32_t j = r->t->ncols; j < r->t->ntok; j++)
		if (r->t->tcol[j] == r->col && px_tok_absent(tok + (size_t)j * CRY_TOKEN_BYTES)) {
			stmt_fail(r->s, LWC_ERR_SCHEMA, "rows without the range tokens "
				  "of column %u remain", r->col + 1);
			return RC_STMT_ERR;
		}
	return 0;
}

/* CREATE INDEX with range_ready: every row of t carries column col's range
 * tokens (none is 16 zero bytes).  The table is claimed: nothing changes
 * it before the commit. */
static int check_range_ready(struct stmt *s, MDB_txn *txn, struct px_table *t, uint32_t col)
{
	struct ready_walk r = { .s = s, .t = t, .col = col };
	int rc;

	if (t->rtok[col] == 0)
		return stmt_fail(s, LWC_ERR_SCHEMA, "column %u has no range index", col + 1);
	if ((rc = rows_walk(txn, t, ready_row, &r)) != 0)
		return rows_walk_fail(s, rc);
	return LWC_OK;
}

struct relayout_walk {
	uint8_t *keys, *vals;       /* every row, in the new layout */
	size_t n, cap, at, add, ob, nb;
};

static int relayout_row(void *arg, const uint8_t *key, const uint8_t *tok)
{
	struct relayout_walk *w = arg;
	uint8_t *v = w->vals + w->n * w->nb;

	if (w->n == w->cap)
		return MDB_CORRUPTED;       /* more rows than the database counts */
	memcpy(w->keys + w->n * 8, key, 8);
	memcpy(v, tok, w->at * CRY_TOKEN_BYTES);
	memset(v + w->at * CRY_TOKEN_BYTES, 0, w->add * CRY_TOKEN_BYTES);
	memcpy(v + (w->at + w->add) * CRY_TOKEN_BYTES, tok + w->at * CRY_TOKEN_BYTES,
	       w->ob - w->at * CRY_TOKEN_BYTES);
	w->n++;
	return 0;
}

/* A range index added to column col of a table that has rows: every row
 * gets rtok[col] tokens of 16 zero bytes (no token) where the new layout
 * nt puts them, until an UPDATE rewrites it with real ones. */
static int relayout_rows(MDB_txn *txn, const struct px_table *t, const struct px_table *nt,
			 uint32_t col)
{
	struct relayout_walk w = { .at = t->ncols, .add = nt->rtok[col],
				   .ob = (size_t)t->ntok * CRY_TOKEN_BYTES,
				   .nb = (size_t)nt->ntok * CRY_TOKEN_BYTES };
	MDB_stat ms;
	int rc;

	for (uint32_t c = 0; c < col; c++)
		w.at += t->rtok[c];
	if ((rc = mdb_stat(txn, t->rows, &ms)) != 0)
		return rc;
	w.cap = ms.ms_entries + 1;
	w.keys = malloc(w.cap * 8);
	w.vals = malloc(w.cap * w.nb);
	if (w.keys == NULL || w.vals == NULL) {
		rc = ENOMEM;
		goto out;
	}
	/* read every row first: values read are only valid until a write */
	if ((rc = rows_walk(txn, t, relayout_row, &w)) != 0)
		goto out;
	for (size_t i = 0; i < w.n && rc == 0; i++) {
		MDB_val wk = { 8, w.keys + i * 8 }, wd = { w.nb, w.vals + i * w.nb };
		rc = mdb_put(txn, t->rows, &wk, &wd, 0);
	}
out:
	free(w.keys);
	free(w.vals);
	return rc;
}

/* CREATE INDEX's commit: if the request changes t (the unique constraint,
 * the range index or its readiness), *ntp gets a copy of t with the change
 * and the catalog entry is rewritten (st->mu held, the table claimed);
 * otherwise *ntp stays NULL and nothing is written. */
int index_commit(MDB_txn *txn, struct px_state *st, const struct px_table *t,
		 const Lwc__CreateIndex *ci, struct px_table **ntp)
{
	uint64_t bit = (uint64_t)1 << (ci->col & 63);
	int add_range = ci->range_tokens && t->rtok[ci->col] == 0, rc = 0;
	struct px_table *nt;
	MDB_stat ms;

	*ntp = NULL;
	if (!(ci->unique && ci->col < 64) && !add_range &&
	    !(ci->range_ready && t->rtok[ci->col]))
		return 0;                   /* nothing changes: t stays untouched */
	if ((nt = malloc(sizeof(*nt))) == NULL)
		return ENOMEM;
	*nt = *t;
	if (ci->unique && ci->col < 64) {
		nt->unique |= bit;
		if (ci->null_token.len == CRY_TOKEN_BYTES) {
			nt->has_null |= bit;
			memcpy(nt->null_tok[ci->col], ci->null_token.data, CRY_TOKEN_BYTES);
		}
	}
	if (add_range) {
		nt->rtok[ci->col] = (uint8_t)ci->range_tokens;     /* <= 64: planned */
		if (px_table_layout(nt) != LWC_OK)
			rc = EINVAL;
		else if ((rc = mdb_stat(txn, t->rows, &ms)) == 0) {
			/* the rows database, not the mirror's count, says */
			if (ms.ms_entries == 0)
				nt->range_ready |= bit;            /* nothing to build */
			else
				rc = relayout_rows(txn, t, nt, ci->col);
		}
	}
	if (rc == 0 && ci->range_ready && nt->rtok[ci->col])
		nt->range_ready |= bit;
	if (rc == 0)
		rc = px_table_put(st, txn, nt);
	nt->schema = NULL;          /* t's, not nt's */
	if (rc != 0)
		free(nt);
	else
		*ntp = nt;
	return rc;
}

static int check_unique_column(struct stmt *s, MDB_txn *txn, struct px_table *t, uint32_t col)
{
	const Lwc__CreateIndex *ci = s->req->create_index;
	int rc, dup;

	if (t->rtok[col] != 0)
		return check_unique_ranged(s, txn, t, col);
	rc = idx_has_duplicates(txn, t, col,
				ci->null_token.len == CRY_TOKEN_BYTES ? ci->null_token.data : NULL,
				&dup);
	if (rc != 0)
		return stmt_fail(s, LWC_ERR_STORE, "lmdb: %s", mdb_strerror(rc));
	if (dup)
		return stmt_fail(s, LWC_ERR_UNIQUE,
				 "cannot create a unique index: column %u has duplicate values",
				 col + 1);
	return LWC_OK;
}

/* A table of ncols columns with rtok[c] range tokens for column c (and
 * col_tokens for column col, if col < ncols) lays out: at most
 * PX_MAX_RANGE_TOK per column, PX_MAX_TOKENS per row. */
static int validate_range_layout(struct stmt *s, uint32_t ncols, const uint8_t *rtok,
				 uint32_t col, uint32_t col_tokens)
{
	struct px_table tmp;

	if (ncols > PX_MAX_COLS)
		return stmt_fail(s, LWC_ERR_SCHEMA, "a table has 1 to %u columns, not %u",
				 PX_MAX_COLS, ncols);
	tmp.ncols = ncols;
	memcpy(tmp.rtok, rtok, ncols);
	if (col < ncols)
		tmp.rtok[col] = (uint8_t)(col_tokens > 255 ? 255 : col_tokens);
	if ((col < ncols && col_tokens > PX_MAX_RANGE_TOK) || px_table_layout(&tmp) != LWC_OK)
		return stmt_fail(s, LWC_ERR_SCHEMA, "more than %u range tokens per column "
				 "or %u per row", PX_MAX_RANGE_TOK, PX_MAX_TOKENS);
	return LWC_OK;
}

/* Let go of the table: the reference, and the exclusive claim if any. */
void stmt_release_table(struct px_state *st, struct stmt *s)
{
	if (s->t == NULL)
		return;
	if (s->claimed) {
		s->t->excl_owner = 0;
		if (s->kind == ST_DROP)
			s->t->dropped = 0;      /* a drop that did not happen */
		s->claimed = 0;
	} else {
		s->t->inflight--;
	}
	s->t = NULL;
	pthread_cond_broadcast(&st->cv);
}

void access_free(struct stmt *s)
{
	free(s->ids);
	free(s->vers);
	free(s->bits);
	free(s->obits);
	free(s->otags);
	free(s->ntags);
	free(s->written);
	s->ids = s->vers = s->bits = s->obits = NULL;
	s->otags = s->ntags = s->written = NULL;
}

/* Room for an access of gamma blocks. */
static int access_alloc(const struct px_state *st, struct stmt *s, uint64_t gamma)
{
	access_free(s);
	s->ids = malloc(gamma * sizeof(uint64_t) + 1);
	s->vers = malloc(gamma * sizeof(uint64_t) + 1);
	s->bits = malloc(gamma * st->g.words * sizeof(uint64_t) + 1);
	s->obits = malloc(gamma * st->g.words * sizeof(uint64_t) + 1);
	s->otags = malloc(gamma * CRY_TAG_BYTES + 1);
	s->ntags = malloc(gamma * CRY_TAG_BYTES + 1);
	s->written = calloc(gamma + 1, 1);
	if (!s->ids || !s->vers || !s->bits || !s->obits || !s->otags || !s->ntags || !s->written)
		return LWC_ERR_NOMEM;
	return LWC_OK;
}

/*
 * Padding: want blocks drawn without replacement among the avail blocks no
 * other statement holds (locked[b] != 1; 2 marks this statement's own
 * blocks that an exact DELETE lets the draw pick), locked and appended to
 * s->ids.  With age matching (padage.h) each block is the one at a rank
 * drawn from the ranks of the real blocks of statements of γ blocks;
 * otherwise, or while that class has too few, uniformly.  A drawn block
 * that is held is drawn again.  A statement with no real block (stand_in
 * 1) draws its first block as a real block's stand-in, at one of the last
 * real blocks' ranks (pa_draw_recent, padage.h).  LWC_ERR_NOMEM before
 * anything is drawn.
 */
static int draw_padding(struct px_state *st, const struct px_engine_cfg *cfg, struct stmt *s,
			uint64_t gamma, uint64_t want, uint64_t avail, int stand_in)
{
	uint64_t n = st->nblocks, misses = 0;

	if (want == 0)
		return LWC_OK;
	if (want * 4 <= avail) {
		/* few of many: draw and redraw on a held block */
		for (uint64_t got = 0; got < want;) {
			uint64_t b = UINT64_MAX, r;

			/* by age; uniform after many held ones (a busy proxy).
			 * A block another statement waits for as a real block
			 * is passed over while misses are few: taking it as
			 * padding would make that statement wait again (with
			 * padding by age, young real blocks and young padding
			 * meet, and 64 clients on 5,000 blocks halved) */
			int soft = misses < 64 + 8 * want;
			int drawn = !cfg->pad_age || !soft ? 0
				    : got == 0 && stand_in ? pa_draw_recent(&st->pa, gamma, &r)
				    : pa_draw(&st->pa, gamma, &r);

			if (drawn)
				b = pa_block_at(&st->pa, r);
			if (b < n) {
				if (st->locked[b] == 1 || st->wanted[b]) {
					misses++;
					continue;
				}
				st->pa.by_age++;
			} else {
				b = cry_uniform(n);
				if (st->locked[b] == 1)
					continue;
				if (st->wanted[b] && soft) {
					misses++;
					continue;
				}
				st->pa.uniform++;
			}
			st->locked[b] = 1;
			s->ids[s->gamma++] = b;
			got++;
		}
		return LWC_OK;
	}
	/* many of few: a partial shuffle of the candidates */
	{
		uint64_t *cand = malloc(avail * sizeof(uint64_t) + 1), nc = 0;

		if (cand == NULL)
			return LWC_ERR_NOMEM;
		for (uint64_t b = 0; b < n && nc < avail; b++)
			if (st->locked[b] != 1)
				cand[nc++] = b;
		for (uint64_t i = 0; i < want && i < nc; i++) {
			uint64_t j = i + cry_uniform(nc - i);
			uint64_t tmp = cand[i];

			cand[i] = cand[j];
			cand[j] = tmp;
			st->locked[cand[i]] = 1;
			s->ids[s->gamma++] = cand[i];
			st->pa.uniform++;
		}
		free(cand);
	}
	return LWC_OK;
}

/* DELETE with an exact predicate: it needs no record, so it reads none.
 * Its k blocks are locked (their flags change at commit) and its access is
 * that of a statement matching nothing: γ(0) blocks uniformly among those
 * no other statement holds, the DELETE's own included (one picked is read
 * and rewritten with its rows' slots emptied, as before). */
static int exact_delete(const struct stmt *s)
{
	return s->kind == ST_DELETE && !s->interactive;
}

static int lock_finish(struct px_state *st, struct stmt *s);

static int lock_blocks_delete(struct px_worker *w, struct stmt *s, size_t k)
{
	struct px_state *st = w->st;
	uint64_t n = st->nblocks, gamma, avail = n - st->nlocked, prev = UINT64_MAX;
	size_t nt = 0;

	gamma = px_gamma(w->cfg, 0);
	if (gamma > n)
		gamma = n;
	if (gamma > avail) {
		if (st->nlocked > 0)
			return PLAN_WAIT;
		gamma = avail;
	}
	free(s->tids);
	free(s->tbits);
	s->tids = malloc(k * sizeof(uint64_t) + 1);
	s->tbits = malloc(k * st->g.words * sizeof(uint64_t) + 1);
	if (s->tids == NULL || s->tbits == NULL || access_alloc(st, s, gamma) != LWC_OK)
		return LWC_ERR_NOMEM;
	/* 2: this statement's, not yet picked for the access */
	for (size_t i = 0; i < s->locs.n; i++) {
		uint64_t b = PX_LOC_BLOCK(s->locs.v[i]);
		if (b != prev)
			st->locked[b] = 2;
		prev = b;
	}
	s->gamma = 0;
	if (draw_padding(st, w->cfg, s, gamma, gamma, avail, 1) != LWC_OK) {
		for (size_t i = 0; i < s->locs.n; i++)
			st->locked[PX_LOC_BLOCK(s->locs.v[i])] = 0;
		return LWC_ERR_NOMEM;
	}
	/* the DELETE's blocks the access did not pick: locked, not read */
	prev = UINT64_MAX;
	for (size_t i = 0; i < s->locs.n; i++) {
		uint64_t b = PX_LOC_BLOCK(s->locs.v[i]);
		if (b == prev)
			continue;
		prev = b;
		if (st->locked[b] != 2)
			continue;
		st->locked[b] = 1;
		memcpy(s->tbits + nt * st->g.words, st->bits + b * st->g.words,
		       st->g.words * sizeof(uint64_t));
		s->tids[nt++] = b;
	}
	s->ntids = nt;
	s->nreal = k;
	st->nlocked += s->gamma + s->ntids;
	s->locked = 1;
	return lock_finish(st, s);
}

/* Choose the padding and lock everything; PLAN_WAIT if blocks are busy. */
static int lock_blocks(struct px_worker *w, struct stmt *s)
{
	struct px_state *st = w->st;
	uint64_t gamma, want, avail, n = st->nblocks;
	size_t k = 0;
	uint64_t prev = UINT64_MAX;

	/* the real blocks: distinct blocks of the locations (sorted) */
	for (size_t i = 0; i < s->locs.n; i++) {
		uint64_t b = PX_LOC_BLOCK(s->locs.v[i]);
		if (b == prev)
			continue;
		if (b >= n)
			return stmt_fail(s, LWC_ERR_STORE, "index names block %llu beyond the database",
					 (unsigned long long)b);
		if (st->locked[b]) {
			s->wait_block = b;
			return PLAN_WAIT;
		}
		prev = b;
		k++;
	}
	if (exact_delete(s))
		return lock_blocks_delete(w, s, k);
	gamma = px_gamma(w->cfg, k);
	if (gamma > n)
		gamma = n;
	if (gamma < k)
		gamma = k;
	want = gamma - k;
	avail = n - st->nlocked - k;
	if (want > avail) {
		if (st->nlocked > 0)
			return PLAN_WAIT;
		want = avail;
		gamma = k + want;
	}
	if (access_alloc(st, s, gamma) != LWC_OK)
		return LWC_ERR_NOMEM;
	s->gamma = 0;
	prev = UINT64_MAX;
	for (size_t i = 0; i < s->locs.n; i++) {
		uint64_t b = PX_LOC_BLOCK(s->locs.v[i]);
		if (b == prev)
			continue;
		s->ids[s->gamma++] = b;
		st->locked[b] = 1;
		prev = b;
	}
	s->nreal = k;
	/* the real blocks' ages, then the padding among the unlocked blocks */
	for (size_t i = 0; i < k && w->cfg->pad_age; i++)
		pa_observe(&st->pa, gamma, pa_rank(&st->pa, s->ids[i]));
	if (draw_padding(st, w->cfg, s, gamma, want, avail, k == 0) != LWC_OK) {
		for (size_t i = 0; i < s->gamma; i++)
			st->locked[s->ids[i]] = 0;
		return LWC_ERR_NOMEM;
	}
	st->nlocked += s->gamma;
	s->locked = 1;
	return lock_finish(st, s);
}

/* The γ blocks locked: sort them and take their committed state. */
static int lock_finish(struct px_state *st, struct stmt *s)
{
	/* sorted: the order says nothing about which blocks are real */
	{
		struct locset tmp = { s->ids, s->gamma, s->gamma };
		locset_normalize(&tmp);
	}
	for (size_t i = 0; i < s->gamma; i++) {
		s->vers[i] = st->version[s->ids[i]];
		memcpy(s->bits + i * st->g.words, st->bits + s->ids[i] * st->g.words,
		       st->g.words * sizeof(uint64_t));
		memcpy(s->obits + i * st->g.words, st->bits + s->ids[i] * st->g.words,
		       st->g.words * sizeof(uint64_t));
		memcpy(s->otags + i * CRY_TAG_BYTES, st->tag + s->ids[i] * CRY_TAG_BYTES,
		       CRY_TAG_BYTES);
	}
	return LWC_OK;
}

/* Block b freed: wake the plans asleep on its bucket, once (*woke). */
static void wake_block(struct px_state *st, uint64_t b, uint64_t *woke)
{
	unsigned h = PX_BLOCK_CV(b);

	if (st->bwait[h] > 0 && !(*woke & (1ull << h))) {
		*woke |= 1ull << h;
		pthread_cond_broadcast(&st->bcv[h]);
	}
}

void unlock_blocks(struct px_state *st, struct stmt *s)
{
	uint64_t woke = 0;

	if (!s->locked)
		return;
	for (size_t i = 0; i < s->gamma; i++) {
		st->locked[s->ids[i]] = 0;
		wake_block(st, s->ids[i], &woke);
	}
	for (size_t i = 0; i < s->ntids; i++) {
		st->locked[s->tids[i]] = 0;
		wake_block(st, s->tids[i], &woke);
	}
	st->nlocked -= s->gamma + s->ntids;
	s->ntids = 0;
	s->locked = 0;
	pthread_cond_broadcast(&st->cv);
}

/* One planning attempt. */
static int plan_once(struct px_worker *w, struct stmt *s)
{
	struct px_state *st = w->st;
	const Lwc__ProxyRequest *req = s->req;
	const ProtobufCBinaryData *handle = NULL;
	MDB_txn *txn = NULL;
	int rc;

	switch (s->kind) {
	case ST_SELECT: handle = &req->select->table; break;
	case ST_INSERT: handle = &req->insert->table; break;
	case ST_UPDATE: handle = &req->update->table; break;
	case ST_DELETE: handle = &req->delete_->table; break;
	case ST_DROP:   handle = &req->drop_table->table; break;
	case ST_INDEX:  handle = &req->create_index->table; break;
	case ST_CREATE: handle = &req->create_table->table; break;
	case ST_NOP: break;
	}
	if (handle && handle->len != PX_HANDLE_BYTES)
		return stmt_fail(s, LWC_ERR_PROTO, "table handle of %zu bytes (expected %u)",
				 handle->len, PX_HANDLE_BYTES);

	if (s->kind == ST_CREATE) {
		const Lwc__CreateTable *ct = req->create_table;
		/* a table being dropped still owns its handle until the drop commits */
		for (struct px_table *t = st->tables; t; t = t->next)
			if (sodium_memcmp(t->handle, handle->data, PX_HANDLE_BYTES) == 0) {
				if (t->dropped)
					return PLAN_WAIT;
				if (ct->if_not_exists) {
					s->kind = ST_NOP;
					return LWC_OK;
				}
				return stmt_fail(s, LWC_ERR_EXISTS, "table already exists");
			}
		if (ct->ncols == 0 || ct->ncols > PX_MAX_COLS)
			return stmt_fail(s, LWC_ERR_SCHEMA, "a table has 1 to %u columns, not %u",
					 PX_MAX_COLS, ct->ncols);
		if (ct->pk_col < -1 || ct->pk_col >= (int32_t)ct->ncols)
			return stmt_fail(s, LWC_ERR_SCHEMA, "primary key column %d out of range",
					 ct->pk_col);
		if (ct->schema.len > PX_SCHEMA_MAX)
			return stmt_fail(s, LWC_ERR_TOO_BIG, "table description over %u bytes",
					 PX_SCHEMA_MAX);
		if (ct->range_tokens.len != 0) {
			if (ct->range_tokens.len != ct->ncols)
				return stmt_fail(s, LWC_ERR_SCHEMA, "range tokens of %zu columns "
						 "for a table of %u", ct->range_tokens.len,
						 ct->ncols);
			if ((rc = validate_range_layout(s, ct->ncols, ct->range_tokens.data,
							ct->ncols, 0)) != LWC_OK)
				return rc;
		}
		return lock_blocks(w, s);
	}
	if (s->kind == ST_NOP)
		return lock_blocks(w, s);

	if (s->t == NULL) {
		struct px_table *t = px_table_find(st, handle->data, handle->len);
		int excl = s->kind == ST_DROP ||
			   (s->kind == ST_INDEX && (req->create_index->unique ||
						    req->create_index->range_tokens ||
						    req->create_index->range_ready));

		if (t == NULL) {
			if (s->kind == ST_DROP && req->drop_table->if_exists) {
				s->kind = ST_NOP;
				return lock_blocks(w, s);
			}
			return stmt_fail(s, LWC_ERR_NO_TABLE, "no such table");
		}
		if (t->excl_owner != 0)
			return PLAN_WAIT;       /* a DROP or UNIQUE INDEX has it */
		s->t = t;
		if (excl) {
			/* the table to itself: no new statements, wait for the running */
			t->excl_owner = s->owner;
			s->claimed = 1;
			if (s->kind == ST_DROP)
				t->dropped = 1;
		} else {
			t->inflight++;
		}
	}
	if (s->claimed && s->t->inflight > 0)
		return PLAN_WAIT;

	if ((rc = px_read_begin(w, &txn)) != 0)
		return stmt_fail(s, LWC_ERR_STORE, "lmdb: %s", mdb_strerror(rc));
	switch (s->kind) {
	case ST_SELECT:
	case ST_UPDATE:
	case ST_DELETE: {
		const Lwc__Pred *p = s->where;
		if ((rc = pred_validate(p, s->t->ncols, s->msg, sizeof(s->msg))) != LWC_OK) {
			s->err = rc;
			break;
		}
		if ((rc = pred_eval(txn, s->t, p, &s->locs, s->msg, sizeof(s->msg))) != LWC_OK) {
			s->err = rc;
			break;
		}
		if ((rc = map_rows(st, s, txn)) == LWC_OK &&
		    (rc = plan_relocation(st, s)) == LWC_OK)
			rc = plan_mates(st, s, txn);
		break;
	}
	case ST_DROP:
		rc = pred_eval(txn, s->t, NULL, &s->locs, s->msg, sizeof(s->msg));
		if (rc != LWC_OK)
			s->err = rc;
		else
			rc = map_rows(st, s, txn);
		break;
	case ST_INSERT:
		rc = LWC_OK;
		for (size_t i = 0; i < req->insert->n_rows && rc == LWC_OK; i++)
			rc = check_row(s, st, req->insert->rows[i], s->t, i, 0);
		if (rc == LWC_OK)
			rc = plan_insert(w, s, txn);
		break;
	case ST_INDEX:
		if (req->create_index->col >= s->t->ncols) {
			rc = stmt_fail(s, LWC_ERR_SCHEMA, "index on column %u of a table with %u columns",
				       req->create_index->col + 1, s->t->ncols);
			break;
		}
		if (req->create_index->null_token.len != 0 &&
		    req->create_index->null_token.len != CRY_TOKEN_BYTES) {
			rc = stmt_fail(s, LWC_ERR_PROTO, "NULL token of %zu bytes",
				       req->create_index->null_token.len);
			break;
		}
		rc = LWC_OK;
		if (req->create_index->unique)
			rc = check_unique_column(s, txn, s->t, req->create_index->col);
		if (rc == LWC_OK && req->create_index->range_tokens &&
		    s->t->rtok[req->create_index->col] == 0)
			rc = validate_range_layout(s, s->t->ncols, s->t->rtok,
						   req->create_index->col,
						   req->create_index->range_tokens);
		if (rc == LWC_OK && req->create_index->range_ready)
			rc = check_range_ready(s, txn, s->t, req->create_index->col);
		break;
	default:
		rc = LWC_OK;
	}
	px_read_end(w, txn);
	if (rc == PLAN_WAIT || rc == PLAN_GROW)
		return rc;
	if (s->err != LWC_OK)
		return s->err;
	if (rc != LWC_OK)
		return stmt_fail(s, rc, "%s", lwc_strerror(rc));
	if (s->bulk)
		return LWC_OK;          /* no access: it writes new blocks */
	return lock_blocks(w, s);
}

int plan_stmt(struct px_worker *w, struct stmt *s)
{
	struct px_state *st = w->st;
	uint64_t *want = NULL, t0;
	size_t nwant = 0;
	int rc;

	pthread_mutex_lock(&st->mu);
	s->owner = ++st->next_owner;
	s->seq = ++st->seq;
	for (;;) {
		rc = plan_once(w, s);
		if (rc != PLAN_WAIT && rc != PLAN_GROW)
			break;
		/* let go of what this attempt took (a claim on a table stays) */
		pending_drop(st, s->owner);
		plan_undo_stash(st, s);
		if (!s->claimed && s->t) {
			s->t->inflight--;
			s->t = NULL;
			pthread_cond_broadcast(&st->cv);
		}
		/* waiting for a real block: every real block of this attempt is
		 * wanted meanwhile (released below) */
		nwant = 0;
		if (rc == PLAN_WAIT && s->wait_block != UINT64_MAX) {
			uint64_t *nw = realloc(want, (s->locs.n + 1) * sizeof(*want));

			if (nw != NULL) {
				want = nw;
				for (size_t i = 0; i < s->locs.n; i++) {
					uint64_t b = PX_LOC_BLOCK(s->locs.v[i]);

					if ((nwant == 0 || want[nwant - 1] != b) && b < st->nblocks &&
					    st->wanted[b] < UINT8_MAX) {
						want[nwant++] = b;
						st->wanted[b]++;
					}
				}
			}
		}
		s->locs.n = 0;
		if (rc == PLAN_GROW) {
			char err[256] = "";
			uint64_t n = s->grow;

			if ((rc = px_grow(w, n, err, sizeof(err))) != LWC_OK) {
				stmt_fail(s, rc, "cannot grow the database: %s", err);
				break;
			}
			log_info("database grown by %llu blocks to %llu", (unsigned long long)n,
				 (unsigned long long)st->nblocks);
			continue;
		}
		/* a real block held by another statement: plan again when that
		 * block is free, not at every unlock (64 statements replanning at
		 * every commit kept the state mutex busy); anything else: at the
		 * next change */
		atomic_fetch_add(&st->plan_waits, 1);
		t0 = px_now_us();
		if (s->wait_block < st->nblocks) {
			unsigned h = PX_BLOCK_CV(s->wait_block);

			/* only unlock_blocks frees a block others can see held */
			st->bwait[h]++;
			while (st->locked[s->wait_block])
				pthread_cond_wait(&st->bcv[h], &st->mu);
			st->bwait[h]--;
		} else {
			pthread_cond_wait(&st->cv, &st->mu);
		}
		atomic_fetch_add(&st->plan_wait_us, px_now_us() - t0);
		s->wait_block = UINT64_MAX;
		for (size_t i = 0; i < nwant; i++)
			st->wanted[want[i]]--;
		nwant = 0;
	}
	if (rc != LWC_OK) {
		int keep = s->err;

		pending_drop(st, s->owner);
		plan_undo_stash(st, s);
		/* a failed statement still costs the cloud the usual access */
		s->locs.n = 0;
		while ((rc = lock_blocks(w, s)) == PLAN_WAIT)
			pthread_cond_wait(&st->cv, &st->mu);
		if (rc != LWC_OK)
			s->gamma = 0;
		s->err = keep != LWC_OK ? keep : rc;
		rc = s->err;
	} else if ((st->relocate || st->nstash > 0) && s->gamma > 0 &&
		   plan_evictions(w, s) != LWC_OK) {
		/* nothing is written back this time; the statement goes on (with
		 * relocation off, rows left in the stash still drain) */
		stash_release_evictions(st, s);
	}
	pthread_mutex_unlock(&st->mu);
	free(want);
	return rc;
}
