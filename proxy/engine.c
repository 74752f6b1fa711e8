/*
 * engine.c - see engine.h: planning (st->mu held), the access, the commit
 * and the statement itself.  The rest of the engine is in cloud_io.c,
 * pending.c, relocate.c and check.c (engine_int.h).
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

static const char *const kind_name[] = {
	"nop", "select", "insert", "update", "delete", "create table", "drop table",
	"create index"
};

/* ---- small helpers -------------------------------------------------------- */

int stmt_fail(struct stmt *s, int code, const char *fmt, ...)
{
	va_list ap;

	if (s->err == LWC_OK) {
		s->err = code;
		va_start(ap, fmt);
		vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

/* ---- planning (st->mu held) ----------------------------------------------- */

static const Lwc__Row *insert_row(const struct stmt *s, size_t i)
{
	return s->req->insert->rows[i];
}

/* A row of t: its record, and ntok tokens (one per column, then the range
 * tokens); a client whose catalog predates a range index sends fewer and
 * is told so (it reloads the catalog and tries again). */
/* A row of an INSERT or an UPDATE's decision.  as_before: an empty token
 * stands for the row's token as it is (WIRE_FEATURE_TOKENS_AS_BEFORE). */
static int check_row(struct stmt *s, const struct px_state *st, const Lwc__Row *r,
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

/* commit()'s and the row walks' rc hold LMDB codes (0, errno values,
 * MDB_* below -30000); this one, outside both and every LWC_ERR_*, says
 * s->err is set. */
#define RC_STMT_ERR INT_MIN

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
static int index_commit(MDB_txn *txn, struct px_state *st, const struct px_table *t,
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
static void stmt_release_table(struct px_state *st, struct stmt *s)
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

/* Room for an access of gamma blocks. */
static int access_alloc(const struct px_state *st, struct stmt *s, uint64_t gamma)
{
	free(s->ids);
	free(s->vers);
	free(s->bits);
	free(s->obits);
	free(s->otags);
	free(s->ntags);
	free(s->written);
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

static void unlock_blocks(struct px_state *st, struct stmt *s)
{
	if (!s->locked)
		return;
	for (size_t i = 0; i < s->gamma; i++)
		st->locked[s->ids[i]] = 0;
	for (size_t i = 0; i < s->ntids; i++)
		st->locked[s->tids[i]] = 0;
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
		if ((rc = map_rows(st, s, txn)) == LWC_OK)
			rc = plan_relocation(st, s);
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

static int plan(struct px_worker *w, struct stmt *s)
{
	struct px_state *st = w->st;
	uint64_t *want = NULL;
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
		do
			pthread_cond_wait(&st->cv, &st->mu);
		while (s->wait_block < st->nblocks && st->locked[s->wait_block]);
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

/* ---- the access ----------------------------------------------------------- */

int send_records(struct px_io *io, uint64_t seq, int candidates, uint8_t **recs,
			size_t n, size_t S)
{
	Lwc__ProxyResponse resp = LWC__PROXY_RESPONSE__INIT;
	Lwc__Rows rows = LWC__ROWS__INIT;
	Lwc__Candidates cand = LWC__CANDIDATES__INIT;
	ProtobufCBinaryData *bd = malloc(n * sizeof(*bd));
	int rc;

	if (bd == NULL)
		return LWC_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		bd[i].data = recs[i];
		bd[i].len = S;
	}
	resp.seq = seq;
	if (candidates) {
		cand.n_records = n;
		cand.records = bd;
		resp.result_case = LWC__PROXY_RESPONSE__RESULT_CANDIDATES;
		resp.candidates = &cand;
	} else {
		rows.n_records = n;
		rows.records = bd;
		resp.result_case = LWC__PROXY_RESPONSE__RESULT_ROWS;
		resp.rows = &rows;
	}
	rc = io->send(io->ctx, &resp);
	free(bd);
	return rc;
}

/* Apply one chunk of the user's decisions.  Candidates come from blocks
 * (bits_of_block[i] and slots[i] say where), from the stash (recs[i] in
 * s->srec) or were moved out of their blocks by this statement (recs[i] in
 * s->mrec); bits_of_block is NULL for the last two.  Returns an I/O error
 * (close the connection) or LWC_OK; statement errors go to s->err. */
/* The tokens the rows of an UPDATE's chunk have now, for the decisions
 * that leave some empty (as before): *olds gets ntok tokens per candidate
 * (only those rows filled), or stays NULL when no decision needs it.  The
 * statement holds these rows (their blocks are locked, stash rows owned),
 * and the rows database changes only at commit, so this is the row as the
 * statement found it. */
static int old_tokens(const struct px_state *st, struct stmt *s, const Lwc__Decisions *d,
		      const uint64_t *rows, size_t n, uint8_t **olds)
{
	const struct px_table *t = s->t;
	size_t ntok = t->ntok;
	MDB_txn *txn = NULL;
	int rc = LWC_OK;

	*olds = NULL;
	for (size_t i = 0; i < n && rc == LWC_OK; i++) {
		const Lwc__Row *r = d->d[i]->row;
		size_t c = 0;
		uint8_t key[8];
		MDB_val k = { 8, key }, v;
		int e;

		if (!d->d[i]->change)
			continue;
		while (c < ntok && r->tokens[c].len != 0)
			c++;
		if (c == ntok)
			continue;                       /* every token given */
		if (*olds == NULL && (*olds = malloc(n * ntok * CRY_TOKEN_BYTES)) == NULL)
			return stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
		if (txn == NULL && (e = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0)
			return stmt_fail(s, LWC_ERR_STORE, "cannot read the rows: %s",
					 mdb_strerror(e));
		cry_put_be64(key, rows[i]);
		if ((e = mdb_get(txn, t->rows, &k, &v)) != 0 || v.mv_size != ntok * CRY_TOKEN_BYTES)
			rc = stmt_fail(s, LWC_ERR_STORE, "row %llu has no tokens: %s",
				       (unsigned long long)rows[i],
				       e ? mdb_strerror(e) : "wrong size");
		else
			memcpy(*olds + i * ntok * CRY_TOKEN_BYTES, v.mv_data, v.mv_size);
	}
	if (txn)
		mdb_txn_abort(txn);
	return rc;
}

static int recv_decisions(struct px_worker *w, struct stmt *s, struct px_io *io,
			  uint8_t **recs, const uint64_t *rows, size_t n,
			  uint64_t *bits_of_block[], const uint32_t *slots)
{
	struct px_state *st = w->st;
	Lwc__ProxyRequest *req = NULL;
	const Lwc__Decisions *d;
	uint8_t *olds = NULL;
	int rc;

	if ((rc = io->recv(io->ctx, &req)) != LWC_OK)
		return rc;
	if (req->op_case != LWC__PROXY_REQUEST__OP_DECISIONS) {
		pb_arena_free(&req->base);
		stmt_fail(s, LWC_ERR_PROTO, "expected the decisions for %zu candidates", n);
		s->aborted = 1;
		return LWC_OK;
	}
	d = req->decisions;
	if (s->aborted)
		goto out;       /* an answer to a chunk sent before the statement failed */
	if (d->abort) {
		stmt_fail(s, LWC_ERR_ABORTED, "%s",
			  d->reason && d->reason[0] ? d->reason : "statement aborted by the client");
		s->aborted = 1;
		goto out;
	}
	if (d->n_d != n) {
		stmt_fail(s, LWC_ERR_PROTO, "%zu decisions for %zu candidates", d->n_d, n);
		s->aborted = 1;
		goto out;
	}
	/* validate all before applying any */
	if (s->kind == ST_UPDATE) {
		for (size_t i = 0; i < n; i++)
			if (d->d[i]->change &&
			    check_row(s, st, d->d[i]->row, s->t, i, 1) != LWC_OK) {
				s->aborted = 1;
				goto out;
			}
		if (old_tokens(st, s, d, rows, n, &olds) != LWC_OK) {
			s->aborted = 1;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t *bits = bits_of_block ? bits_of_block[i] : NULL;
		uint8_t *dst = recs[i];

		if (!d->d[i]->change)
			continue;
		s->count++;
		if (s->kind == ST_DELETE) {
			if (bits)
				px_bit_set(bits, slots[i], 0);
			else if (recs[i] >= s->srec && recs[i] < s->srec + s->nsrow * st->g.S)
				s->sdel[(size_t)(recs[i] - s->srec) / st->g.S] = 1;
			else
				s->mdel[(size_t)(recs[i] - s->mrec) / st->g.S] = 1;
			if (locset_push(&s->dels, rows[i]) != LWC_OK)
				goto nomem;
			continue;
		}
		if (s->nupds == s->capupds) {
			size_t cap = s->capupds ? s->capupds * 2 : 256;
			void *p = realloc(s->upds, cap * sizeof(*s->upds));
			if (p == NULL)
				goto nomem;
			s->upds = p;
			s->capupds = cap;
		}
		s->upds[s->nupds].row = rows[i];
		s->upds[s->nupds].tokens = malloc(s->t->ntok * CRY_TOKEN_BYTES);
		if (s->upds[s->nupds].tokens == NULL)
			goto nomem;
		for (size_t c = 0; c < s->t->ncols && c < 64; c++)
			if (d->d[i]->row->tokens[c].len != 0)
				s->utouched |= 1ull << c;
		for (size_t c = 0; c < s->t->ntok; c++)
			memcpy(s->upds[s->nupds].tokens + c * CRY_TOKEN_BYTES,
			       d->d[i]->row->tokens[c].len ? d->d[i]->row->tokens[c].data
			       : olds + (i * s->t->ntok + c) * CRY_TOKEN_BYTES, CRY_TOKEN_BYTES);
		s->nupds++;
		/* applied once the whole batch is decided and its keys are checked */
		if (s->npend == s->cappend) {
			size_t cap = s->cappend ? s->cappend * 2 : 256;
			void *p1 = realloc(s->pdst, cap * sizeof(*s->pdst));
			void *p2 = p1 ? realloc(s->prec, cap * st->g.S) : NULL;
			if (p1)
				s->pdst = p1;
			if (p2 == NULL)
				goto nomem;
			s->prec = p2;
			s->cappend = cap;
		}
		s->pdst[s->npend] = dst;
		memcpy(s->prec + s->npend * st->g.S, d->d[i]->row->record.data, st->g.S);
		s->npend++;
	}
out:
	free(olds);
	pb_arena_free(&req->base);
	return LWC_OK;
nomem:
	free(olds);
	pb_arena_free(&req->base);
	stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
	s->aborted = 1;
	return LWC_OK;
}

/* The user's decisions about n candidates, in chunks of CHUNK_ROWS with
 * DECIDE_AHEAD chunks in flight: the client decides chunk k + 1 while the
 * proxy checks and takes in chunk k.  The client answers every chunk in
 * order (an abort as well), so after a failure the chunks already sent are
 * still answered and read here, and the connection stays in step; the
 * proxy's writes read what the client sends meanwhile (server.c), so two
 * chunks in flight cannot deadlock on full socket buffers. */
int get_decisions(struct px_worker *w, struct stmt *s, struct px_io *io,
		  uint8_t **recs, const uint64_t *rows, size_t n,
		  uint64_t *bits_of_block[], const uint32_t *slots)
{
	size_t nch = (n + CHUNK_ROWS - 1) / CHUNK_ROWS, sent = 0, got = 0;
	int rc;

	while (got < nch) {
		while (sent < nch && sent < got + DECIDE_AHEAD && !s->aborted) {
			size_t off = sent * CHUNK_ROWS, cnt = n - off < CHUNK_ROWS ? n - off : CHUNK_ROWS;

			if ((rc = send_records(io, s->req->seq, 1, recs + off, cnt, w->st->g.S)) !=
			    LWC_OK)
				return rc;
			sent++;
		}
		if (got == sent)
			break;                  /* failed, every answer read */
		{
			size_t off = got * CHUNK_ROWS, cnt = n - off < CHUNK_ROWS ? n - off : CHUNK_ROWS;

			rc = recv_decisions(w, s, io, recs + off, rows + off, cnt,
					    bits_of_block ? bits_of_block + off : NULL,
					    slots ? slots + off : NULL);
			if (rc != LWC_OK)
				return rc;
		}
		got++;
		if (s->err == LWC_ERR_PROTO)
			break;          /* the client is out of step: nothing more to match */
	}
	return LWC_OK;
}

static int cmp_u64p(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Matched locations of block b: [*lo, *hi) in s->locs. */
void block_range(const struct locset *l, uint64_t b, size_t *lo, size_t *hi)
{
	size_t a = 0, z = l->n;
	uint64_t first = PX_LOC(b, 0);

	while (a < z) {
		size_t mid = a + (z - a) / 2;
		if (l->v[mid] < first)
			a = mid + 1;
		else
			z = mid;
	}
	*lo = a;
	while (a < l->n && PX_LOC_BLOCK(l->v[a]) == b)
		a++;
	*hi = a;
}

/* UPDATE, once a batch is decided (st->mu held): the new values of unique
 * columns must not exist in other rows, nor be claimed by statements in
 * flight; then they are claimed until commit.  A unique column no decision
 * of the statement has sent a token for keeps every updated row's own
 * value, which was unique and stays in the index: nothing to check or
 * claim (once one has, the column is checked over all the statement's
 * rows, those that keep their value included). */
static int update_unique_batch(struct px_state *st, struct stmt *s)
{
	struct px_table *t = s->t;
	struct tokrow *refs = NULL;
	uint64_t *ulocs = NULL;
	MDB_txn *txn = NULL;
	int rc = LWC_OK;

	if ((t->unique & s->utouched) == 0 || s->nupds == s->batch_upd)
		return LWC_OK;
	refs = malloc(s->nupds * sizeof(*refs));
	ulocs = malloc(s->nupds * sizeof(*ulocs));
	if (refs == NULL || ulocs == NULL) {
		rc = stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < s->nupds; i++)
		ulocs[i] = s->upds[i].row;
	qsort(ulocs, s->nupds, sizeof(*ulocs), cmp_u64p);
	if (mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn) != 0) {
		rc = stmt_fail(s, LWC_ERR_STORE, "cannot read the indexes");
		goto out;
	}
	for (uint32_t c = 0; c < t->ncols && c < 64 && rc == LWC_OK; c++) {
		if (!((t->unique & s->utouched) >> c & 1))
			continue;
		for (size_t i = 0; i < s->nupds; i++) {
			refs[i].tok = s->upds[i].tokens + c * CRY_TOKEN_BYTES;
			refs[i].row = i;
		}
		tokrow_sort(refs, s->nupds);
		for (size_t i = 1; i < s->nupds; i++)
			if (!is_null_tok(t, c, refs[i].tok) &&
			    memcmp(refs[i].tok, refs[i - 1].tok, CRY_TOKEN_BYTES) == 0) {
				rc = stmt_fail(s, LWC_ERR_UNIQUE, "duplicate key value: the update gives "
					       "two rows the same value in column %u", c + 1);
				goto out;
			}
		for (size_t i = s->batch_upd; i < s->nupds; i++) {
			const uint8_t *tok = s->upds[i].tokens + c * CRY_TOKEN_BYTES;
			struct locset l = { 0 };
			int clash = 0;

			if (is_null_tok(t, c, tok))
				continue;
			if (idx_lookup(txn, t, c, tok, &l) != LWC_OK) {
				rc = stmt_fail(s, LWC_ERR_STORE, "cannot read the index");
				goto out;
			}
			for (size_t j = 0; j < l.n && !clash; j++)
				if (bsearch(&l.v[j], ulocs, s->nupds, sizeof(*ulocs), cmp_u64p) == NULL)
					clash = 1;
			locset_free(&l);
			if (clash || pending_find(st, t->id, c, tok, s->owner)) {
				rc = stmt_fail(s, LWC_ERR_UNIQUE, "duplicate key value violates the "
					       "unique constraint on column %u", c + 1);
				goto out;
			}
		}
	}
	for (uint32_t c = 0; c < t->ncols && c < 64 && rc == LWC_OK; c++)
		if ((t->unique & s->utouched) >> c & 1)
			for (size_t i = s->batch_upd; i < s->nupds && rc == LWC_OK; i++)
				if (!is_null_tok(t, c, s->upds[i].tokens + c * CRY_TOKEN_BYTES) &&
				    pending_add(st, t->id, c, s->upds[i].tokens + c * CRY_TOKEN_BYTES,
						s->owner) != LWC_OK)
					rc = stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
out:
	if (txn)
		mdb_txn_abort(txn);
	free(refs);
	free(ulocs);
	return rc;
}

/* After a round of decisions: check the new unique values, then put the
 * new records in place (in a block, the stash list or a moving row). */
void apply_decided(struct px_worker *w, struct stmt *s)
{
	struct px_state *st = w->st;

	if (!s->aborted && s->kind == ST_UPDATE && s->npend > 0) {
		pthread_mutex_lock(&st->mu);
		if (update_unique_batch(st, s) != LWC_OK)
			s->aborted = 1;
		pthread_mutex_unlock(&st->mu);
	}
	if (!s->aborted)
		for (size_t i = 0; i < s->npend; i++)
			memcpy(s->pdst[i], s->prec + i * st->g.S, st->g.S);
	s->npend = 0;
	s->batch_upd = s->nupds;
}

/* One READ/WRITE pair over idx[0..n) (indexes into s->ids, sorted).
 * Statement errors go to s->err; a lost user connection to *io_err (the
 * blocks are still written back, unchanged). */
/* Open and un-permute block i of a batch (on the block pool). */
struct open_arg {
	const struct px_state *st;
	const struct stmt *s;
	const Lwc__CsResponse *resp;
	const uint64_t *ids, *vers;
	const size_t *idx;
	uint8_t *plain;
};

static int open_one(void *p, size_t i, uint32_t *scratch)
{
	const struct open_arg *a = p;
	const Lwc__CsBlock *b = a->resp->read->blocks[i];

	return open_block(a->st, scratch, a->ids[i], a->vers[i],
			  a->s->otags + a->idx[i] * CRY_TAG_BYTES, b->data.data, b->data.len,
			  a->plain + i * a->st->g.block_bytes);
}

/* Refill the empty slots of block i, permute and seal it as the next
 * version (on the block pool). */
struct seal_arg {
	const struct px_state *st;
	struct stmt *s;
	const uint64_t *ids, *vers;
	const size_t *idx;
	uint8_t *plain, *sealed;
	struct cs_wblock *wb;
};

static int seal_one(void *p, size_t i, uint32_t *scratch)
{
	const struct seal_arg *a = p;
	const struct px_geom *g = &a->st->g;
	uint8_t *blk = a->plain + i * g->block_bytes;
	uint8_t *out = a->sealed + i * g->sealed_bytes;
	int rc;

	fill_empty(a->st, blk, a->s->bits + a->idx[i] * g->words, scratch);
	if ((rc = seal_block(a->st, scratch, a->ids[i], a->vers[i] + 1, blk, out)) != LWC_OK)
		return rc;
	memcpy(a->s->ntags + a->idx[i] * CRY_TAG_BYTES, out + g->sealed_bytes - CRY_TAG_BYTES,
	       CRY_TAG_BYTES);
	a->wb[i].id = a->ids[i];
	a->wb[i].version = a->vers[i] + 1;
	a->wb[i].data = out;
	a->wb[i].len = g->sealed_bytes;
	return LWC_OK;
}

/*
 * READ ahead: while a statement works on batch b, a thread reads batch b+1
 * on a connection of its own (from the pool), so the cloud store's READ
 * and the transfer overlap the proxy's opening, acting and sealing.
 */
struct prefetch {
	struct px_worker w;            /* a copy: its own cloud connection  */
	const struct stmt *s;
	const size_t *idx;
	size_t n;
	uint64_t *ids, *vers;
	Lwc__CsResponse *resp;
	uint8_t *plain;                /* opened ahead (NULL: not opened)   */
	int *rcs;                      /* ... and how each block opened     */
	int rc;
	char err[512];
	pthread_t th;
	int running;
};

/* READ, and when the answer is the batch asked for, open its blocks too:
 * an UPDATE waiting for its user's decisions on batch b then finds b + 1
 * opened. */
static void *prefetch_main(void *p)
{
	struct prefetch *f = p;
	const struct px_state *st = f->w.st;
	uint32_t *scratch;

	f->rc = cloud_read(&f->w, f->ids, f->vers, f->n, &f->resp, f->err, sizeof(f->err));
	if (f->rc != LWC_OK || f->resp->result_case != LWC__CS_RESPONSE__RESULT_READ ||
	    f->resp->read->n_blocks != f->n)
		return NULL;
	for (size_t i = 0; i < f->n; i++)
		if (f->resp->read->blocks[i]->id != f->ids[i])
			return NULL;
	f->plain = malloc(f->n * st->g.block_bytes);
	f->rcs = malloc(f->n * sizeof(int));
	scratch = malloc(px_scratch_words(&st->g) * sizeof(uint32_t));
	if (f->plain && f->rcs && scratch) {
		struct open_arg oa = { st, f->s, f->resp, f->ids, f->vers, f->idx, f->plain };

		(void)par_for(f->n, open_one, &oa, scratch, f->rcs);
	} else {
		free(f->plain);
		free(f->rcs);
		f->plain = NULL;
		f->rcs = NULL;
	}
	free(scratch);
	return NULL;
}

static void prefetch_start(struct prefetch *f, struct px_worker *w, const struct stmt *s,
			   const size_t *idx, size_t n)
{
	memset(f, 0, sizeof(*f));
	f->w = *w;
	f->w.cloud = NULL;
	f->s = s;
	f->idx = idx;
	f->n = n;
	f->ids = malloc(n * sizeof(uint64_t));
	f->vers = malloc(n * sizeof(uint64_t));
	if (f->ids == NULL || f->vers == NULL) {
		free(f->ids);
		free(f->vers);
		f->ids = f->vers = NULL;
		f->rc = LWC_ERR_NOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		f->ids[i] = s->ids[idx[i]];
		f->vers[i] = s->vers[idx[i]];
	}
	if (pthread_create(&f->th, NULL, prefetch_main, f) != 0)
		prefetch_main(f);              /* no thread: read now */
	else
		f->running = 1;
}

/* Wait for the READ; the response (or NULL) is the caller's to free, and
 * so are *plain and *rcs when the blocks were opened ahead (NULL if not;
 * plain may be NULL: then they are dropped). */
static Lwc__CsResponse *prefetch_join(struct prefetch *f, int *rc, char *err, size_t errlen,
				      uint8_t **plain, int **rcs)
{
	Lwc__CsResponse *r;

	if (f->running)
		pthread_join(f->th, NULL);
	f->running = 0;
	cloud_release(&f->w);
	cs_client_close(f->w.cloud);       /* not taken back by a full pool */
	f->w.cloud = NULL;
	free(f->ids);
	free(f->vers);
	f->ids = f->vers = NULL;
	*rc = f->rc;
	snprintf(err, errlen, "%s", f->err);
	r = f->resp;
	f->resp = NULL;
	if (plain != NULL) {
		*plain = f->plain;
		*rcs = f->rcs;
	} else {
		if (f->plain)
			sodium_memzero(f->plain, f->n * f->w.st->g.block_bytes);
		free(f->plain);
		free(f->rcs);
	}
	f->plain = NULL;
	f->rcs = NULL;
	return r;
}

/*
 * WRITE behind: a batch's WRITE goes out in a thread of its own, on its own
 * connection, while the statement opens and works on the next batches; at
 * most WB_DEPTH are outstanding, and all are waited for before the
 * statement commits.  The batch's `written` marks are decided when it is
 * sealed and applied once its WRITE succeeded.
 *
 * Two, not one: the cloud store's WRITE of a batch (its channel, LMDB puts
 * and the commit's fdatasync, one writer at a time) takes longer than the
 * proxy's work on the next batch, and part of it is waiting for the disk.
 * With one outstanding the statement waited for WRITE b - 1 before it
 * could send WRITE b, and then for the READ of b + 1; with two, the store
 * receives and opens WRITE b while it commits b - 1, and the proxy works
 * on b + 1 meanwhile.  The batches are disjoint random subsets of the
 * statement's blocks, so their WRITEs commute.
 */
#define WB_DEPTH 2
struct writebehind {
	struct px_worker w;
	uint8_t *sealed;
	struct cs_wblock *wb;
	size_t n;
	const size_t *idx;
	uint8_t *marks;                /* s->written values of the batch    */
	int rc;
	char err[512];
	pthread_t th;
	int running, pending;
};

static void *writebehind_main(void *p)
{
	struct writebehind *b = p;

	b->rc = cloud_write(&b->w, b->wb, b->n, b->err, sizeof(b->err));
	return NULL;
}

/* The WRITEs in flight, oldest at next once all slots have been used. */
struct wbring {
	struct writebehind slot[WB_DEPTH];
	unsigned next;                 /* the slot the next WRITE goes to       */
};

/* Wait for the outstanding WRITE, if any; LWC_OK or the statement's error. */
static int writebehind_join(struct stmt *s, struct writebehind *b)
{
	int rc;

	if (!b->pending)
		return LWC_OK;
	if (b->running)
		pthread_join(b->th, NULL);
	b->running = 0;
	b->pending = 0;
	cloud_release(&b->w);
	cs_client_close(b->w.cloud);
	b->w.cloud = NULL;
	rc = b->rc;
	if (rc == LWC_OK)
		for (size_t i = 0; i < b->n; i++)
			s->written[b->idx[i]] = b->marks[i];
	else
		stmt_fail(s, rc, "cloud store WRITE failed: %s",
			  b->err[0] ? b->err : lwc_strerror(rc));
	free(b->sealed);
	free(b->wb);
	free(b->marks);
	b->sealed = NULL;
	b->wb = NULL;
	b->marks = NULL;
	return rc;
}

static int access_batch(struct px_worker *w, struct stmt *s, struct px_io *io,
			const size_t *idx, size_t n, struct prefetch *pre,
			struct wbring *ring, int *io_err)
{
	struct px_state *st = w->st;
	const struct px_geom *g = &st->g;
	uint64_t *ids = malloc(n * sizeof(uint64_t)), *vers = malloc(n * sizeof(uint64_t));
	uint8_t *plain = malloc(n * g->block_bytes);
	uint8_t *sealed = NULL;
	struct cs_wblock *wb = NULL;
	uint8_t **recs = NULL;
	uint64_t *rrows = NULL;
	uint64_t **rbits = NULL;
	uint32_t *rslots = NULL;
	int *rcs = NULL;
	uint8_t *marks = NULL;
	size_t nrec = 0, caprec = 0, ev = 0;
	Lwc__CsResponse *resp = NULL;
	int modifies = s->kind == ST_INSERT || s->kind == ST_UPDATE || s->kind == ST_DELETE ||
		       s->kind == ST_DROP;
	char err[512] = "";
	int rc = LWC_OK;

	if (!ids || !vers || !plain) {
		rc = stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		ids[i] = s->ids[idx[i]];
		vers[i] = s->vers[idx[i]];
	}
	if (pre != NULL) {
		uint8_t *pplain = NULL;
		int *prcs = NULL;

		resp = prefetch_join(pre, &rc, err, sizeof(err), &pplain, &prcs);
		if (pplain != NULL) {
			/* opened ahead */
			free(plain);
			plain = pplain;
			rcs = prcs;
		}
	} else
		rc = cloud_read(w, ids, vers, n, &resp, err, sizeof(err));
	if (rc != LWC_OK) {
		stmt_fail(s, rc, "cloud store READ failed: %s", err[0] ? err : lwc_strerror(rc));
		goto out;
	}
	if (resp->result_case != LWC__CS_RESPONSE__RESULT_READ || resp->read->n_blocks != n) {
		rc = stmt_fail(s, LWC_ERR_INTEGRITY, "cloud store answered READ with %zu blocks for %zu",
			       resp->result_case == LWC__CS_RESPONSE__RESULT_READ
			       ? resp->read->n_blocks : 0, n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const Lwc__CsBlock *b = resp->read->blocks[i];
		if (b->id != ids[i]) {
			rc = stmt_fail(s, LWC_ERR_INTEGRITY, "block %llu: the cloud store sent block %llu "
				       "instead", (unsigned long long)ids[i], (unsigned long long)b->id);
			goto out;
		}
	}
	if (rcs == NULL) {
		struct open_arg oa = { st, s, resp, ids, vers, idx, plain };

		if ((rcs = malloc(n * sizeof(int))) == NULL) {
			rc = stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
			goto out;
		}
		(void)par_for(n, open_one, &oa, w->scratch, rcs);
	}
	for (size_t i = 0; i < n; i++) {
		if ((rc = rcs[i]) != LWC_OK) {
			log_error("block %llu version %llu does not open: %s - the cloud store "
				  "tampered with, swapped or rolled back it", (unsigned long long)ids[i],
				  (unsigned long long)vers[i], lwc_strerror(rc));
			rc = stmt_fail(s, rc == LWC_ERR_VERSION ? LWC_ERR_VERSION : LWC_ERR_INTEGRITY,
				       "block %llu: %s (expected version %llu): the cloud store "
				       "tampered with, swapped or rolled back this block",
				       (unsigned long long)ids[i],
				       rc == LWC_ERR_VERSION ? "wrong version" : "integrity check failed",
				       (unsigned long long)vers[i]);
			goto out;
		}
	}
	cs_client_free_resp(resp);
	resp = NULL;

	/* act on the real blocks */
	s->batch_upd = s->nupds;
	s->npend = 0;
	for (size_t i = 0; i < n && !s->aborted; i++) {
		uint64_t *bits = s->bits + idx[i] * g->words;
		uint8_t *blk = plain + i * g->block_bytes;
		size_t lo, hi;

		block_range(&s->locs, ids[i], &lo, &hi);
		for (size_t j = lo; j < hi && !s->aborted; j++) {
			uint32_t slot = PX_LOC_SLOT(s->locs.v[j]);
			uint8_t *rec = blk + (size_t)slot * g->S;

			if (slot >= g->m) {
				stmt_fail(s, LWC_ERR_STORE, "index names slot %u of a %u-slot block",
					  slot, g->m);
				s->aborted = 1;
				break;
			}
			if (s->kind == ST_INSERT) {
				/* locations are in row order */
				memcpy(rec, insert_row(s, j)->record.data, g->S);
				px_bit_set(bits, slot, 1);
				continue;
			}
			if (!px_bit(bits, slot)) {
				stmt_fail(s, LWC_ERR_STORE, "index points to the empty slot %u of block "
					  "%llu", slot, (unsigned long long)ids[i]);
				s->aborted = 1;
				break;
			}
			if (s->relocating) {
				/* move on access: out of its block now; the user gets the row,
				 * or decides about it, once the blocks are written back */
				if (take_out(s, g->S, s->lrow[j], rec, bits, slot) == NULL) {
					stmt_fail(s, LWC_ERR_STORE, "more rows to move than planned");
					s->aborted = 1;
					break;
				}
				continue;
			}
			if ((s->kind == ST_DELETE && !s->interactive) || s->kind == ST_DROP) {
				px_bit_set(bits, slot, 0);
				if (locset_push(&s->dels, s->lrow[j]) != LWC_OK) {
					stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
					s->aborted = 1;
					break;
				}
				s->count++;
				continue;
			}
			/* SELECT rows, or candidates of an interactive statement */
			if (nrec == caprec) {
				size_t cap = caprec ? caprec * 2 : CHUNK_ROWS;
				void *p1 = realloc(recs, cap * sizeof(*recs));
				void *p2 = p1 ? realloc(rrows, cap * sizeof(*rrows)) : NULL;
				void *p3 = p2 ? realloc(rbits, cap * sizeof(*rbits)) : NULL;
				void *p4 = p3 ? realloc(rslots, cap * sizeof(*rslots)) : NULL;
				if (p1)
					recs = p1;
				if (p2)
					rrows = p2;
				if (p3)
					rbits = p3;
				if (p4)
					rslots = p4;
				if (!p1 || !p2 || !p3 || !p4) {
					stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
					s->aborted = 1;
					break;
				}
				caprec = cap;
			}
			recs[nrec] = rec;
			rrows[nrec] = s->lrow[j];
			rbits[nrec] = bits;
			rslots[nrec] = slot;
			nrec++;
			if (!s->interactive && (nrec >= CHUNK_ROWS || nrec * g->S >= CHUNK_BYTES)) {
				if ((*io_err = send_records(io, s->req->seq, 0, recs, nrec, g->S)) !=
				    LWC_OK) {
					s->aborted = 1;
					break;
				}
				s->count += nrec;
				nrec = 0;
			}
		}
	}
	if (!s->interactive && nrec > 0 && !s->aborted) {
		if ((*io_err = send_records(io, s->req->seq, 0, recs, nrec, g->S)) != LWC_OK)
			s->aborted = 1;
		else
			s->count += nrec;
		nrec = 0;
	}
	if (s->interactive) {
		if (nrec > 0 && !s->aborted &&
		    (*io_err = get_decisions(w, s, io, recs, rrows, nrec, rbits, rslots)) != LWC_OK)
			s->aborted = 1;
		apply_decided(w, s);
	}
	/* stash rows written back into this batch's blocks (ev[] is sorted by
	 * block index, and so is idx[]) */
	for (size_t i = 0; i < n && !s->aborted; i++) {
		uint64_t *bits = s->bits + idx[i] * g->words;
		uint8_t *blk = plain + i * g->block_bytes;

		while (ev < s->nev && s->ev[ev].blk < idx[i])
			ev++;
		for (; ev < s->nev && s->ev[ev].blk == idx[i]; ev++) {
			memcpy(blk + (size_t)s->ev[ev].slot * g->S, s->evrec + ev * g->S, g->S);
			px_bit_set(bits, s->ev[ev].slot, 1);
		}
	}
	if (s->aborted) {
		/* nothing of the statement survives in this batch: the committed
		 * occupancy, and records as they were (updates were not applied) */
		for (size_t i = 0; i < n; i++)
			memcpy(s->bits + idx[i] * g->words, s->obits + idx[i] * g->words,
			       g->words * sizeof(uint64_t));
	}

	/* refill, re-permute, re-seal: every block changes */
	sealed = malloc(n * g->sealed_bytes);
	wb = calloc(n, sizeof(*wb));
	if (!sealed || !wb) {
		rc = stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
		goto out;
	}
	{
		struct seal_arg sa = { st, s, ids, vers, idx, plain, sealed, wb };

		(void)par_for(n, seal_one, &sa, w->scratch, rcs);
	}
	for (size_t i = 0; i < n; i++) {
		if ((rc = rcs[i]) != LWC_OK) {
			stmt_fail(s, rc, "sealing block %llu failed", (unsigned long long)ids[i]);
			goto out;
		}
	}
	/* 1: written with the statement's changes (rows in or out, records
	 * replaced), 2: with the committed content; decided now, applied once
	 * the WRITE succeeded */
	if ((marks = malloc(n + 1)) == NULL) {
		rc = stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t lo, hi;
		int moved = memcmp(s->bits + idx[i] * g->words, s->obits + idx[i] * g->words,
				   g->words * sizeof(uint64_t)) != 0;
		block_range(&s->locs, ids[i], &lo, &hi);
		marks[i] = !s->aborted && (moved || (modifies && hi > lo)) ? 1 : 2;
	}
	if (ring != NULL) {
		/* the oldest WRITE's slot: wait for it first, so at most WB_DEPTH
		 * are outstanding */
		struct writebehind *wbh = &ring->slot[ring->next];

		if ((rc = writebehind_join(s, wbh)) != LWC_OK)
			goto out;
		ring->next = (ring->next + 1) % WB_DEPTH;
		wbh->w = *w;
		wbh->w.cloud = NULL;
		wbh->sealed = sealed;
		wbh->wb = wb;
		wbh->n = n;
		wbh->idx = idx;
		wbh->marks = marks;
		wbh->rc = LWC_OK;
		wbh->err[0] = '\0';
		wbh->pending = 1;
		sealed = NULL;
		wb = NULL;
		marks = NULL;
		if (pthread_create(&wbh->th, NULL, writebehind_main, wbh) != 0)
			writebehind_main(wbh);      /* no thread: write now */
		else
			wbh->running = 1;
	} else {
		if ((rc = cloud_write(w, wb, n, err, sizeof(err))) != LWC_OK) {
			stmt_fail(s, rc, "cloud store WRITE failed: %s",
				  err[0] ? err : lwc_strerror(rc));
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			s->written[idx[i]] = marks[i];
	}
	rc = s->aborted ? (s->err != LWC_OK ? s->err : LWC_ERR_ABORTED) : LWC_OK;
out:
	if (pre && (pre->running || pre->ids)) {
		/* failed before taking the READ ahead: wait for it all the same */
		int prc;
		Lwc__CsResponse *r = prefetch_join(pre, &prc, err, sizeof(err), NULL, NULL);

		if (r)
			cs_client_free_resp(r);
	}
	if (resp)
		cs_client_free_resp(resp);
	if (plain)
		sodium_memzero(plain, n * g->block_bytes);
	free(plain);
	free(sealed);
	free(wb);
	free(ids);
	free(vers);
	free(recs);
	free(rrows);
	free(rbits);
	free(rslots);
	free(rcs);
	free(marks);
	return rc;
}

static int run_access(struct px_worker *w, struct stmt *s, struct px_io *io, int *io_err)
{
	size_t batch = w->cfg->batch_blocks ? w->cfg->batch_blocks : 1024;
	size_t nb, *order;
	struct prefetch pre[2];
	struct wbring ring;
	int rc = LWC_OK, have_pre = 0, cur = 0, nxt = 0;

	memset(&ring, 0, sizeof(ring));

	*io_err = LWC_OK;
	if (s->gamma == 0)
		return deliver_rows(w, s, io, io_err);
	nb = (s->gamma + batch - 1) / batch;
	if ((order = malloc(s->gamma * sizeof(size_t))) == NULL)
		return stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < s->gamma; i++)
		order[i] = i;
	if (nb > 1) {
		/* a random split into equal batches, each sorted */
		for (size_t i = s->gamma - 1; i > 0; i--) {
			size_t j = randombytes_uniform((uint32_t)(i + 1));
			size_t t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
	}
	/* a statement that failed before its first batch still makes its access
	 * (every block written back unchanged): the cloud sees the usual shape */
	/* ids[] is sorted, so sorting indexes sorts the ids */
	for (size_t b = 0; b < nb; b++) {
		size_t lo = s->gamma * b / nb, hi = s->gamma * (b + 1) / nb;
		qsort(order + lo, hi - lo, sizeof(size_t), cmp_u64p);
	}
	for (size_t b = 0; b < nb && rc == LWC_OK && (b == 0 || !s->aborted); b++) {
		size_t lo = s->gamma * b / nb, hi = s->gamma * (b + 1) / nb;
		int ahead = have_pre;

		/* batch b was read ahead (b > 0); read b + 1 ahead now */
		if (ahead)
			cur = nxt, nxt ^= 1;
		if (b + 1 < nb && w->cfg->read_ahead) {
			size_t lo2 = s->gamma * (b + 1) / nb, hi2 = s->gamma * (b + 2) / nb;

			prefetch_start(&pre[nxt], w, s, order + lo2, hi2 - lo2);
			have_pre = 1;
		} else {
			have_pre = 0;
		}
		rc = access_batch(w, s, io, order + lo, hi - lo, ahead ? &pre[cur] : NULL,
				  nb > 1 && w->cfg->read_ahead ? &ring : NULL, io_err);
		if (*io_err != LWC_OK)
			break;
	}
	/* every WRITE behind is done before the statement commits */
	{
		int wrc = LWC_OK;

		for (unsigned i = 0; i < WB_DEPTH; i++) {
			int r = writebehind_join(s, &ring.slot[(ring.next + i) % WB_DEPTH]);

			if (wrc == LWC_OK)
				wrc = r;
		}

		if (rc == LWC_OK)
			rc = wrc;
	}
	if (have_pre) {
		/* the statement stopped early: the READ ahead is not used */
		int prc;
		char perr[512];
		Lwc__CsResponse *r = prefetch_join(&pre[nxt], &prc, perr, sizeof(perr), NULL, NULL);

		if (r)
			cs_client_free_resp(r);
	}
	free(order);
	if (rc == LWC_OK && !s->aborted && *io_err == LWC_OK) {
		s->blocks_done = 1;
		rc = deliver_rows(w, s, io, io_err);
	}
	return rc;
}

/* ---- commit (st->mu held) ------------------------------------------------- */

/* An exact DELETE's rows in the blocks it did not read: their slots are
 * freed in the flags committed for those blocks (st->mu held). */
static int delete_unread(struct stmt *s, const struct px_state *st)
{
	size_t t = 0;

	for (size_t i = 0; i < s->locs.n; i++) {
		uint64_t b = PX_LOC_BLOCK(s->locs.v[i]);
		uint32_t slot = PX_LOC_SLOT(s->locs.v[i]);

		while (t < s->ntids && s->tids[t] < b)
			t++;
		if (t == s->ntids || s->tids[t] != b)
			continue;           /* read by the access: done there */
		if (slot >= st->g.m || !px_bit(s->tbits + t * st->g.words, slot))
			return stmt_fail(s, LWC_ERR_STORE, "index points to the empty slot %u of "
					 "block %llu", slot, (unsigned long long)b);
		px_bit_set(s->tbits + t * st->g.words, slot, 0);
		if (locset_push(&s->dels, s->lrow[i]) != LWC_OK)
			return stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
		s->count++;
	}
	return LWC_OK;
}

/* About how many block, position and stash changes commit() stages. */
static size_t journal_entries(const struct stmt *s)
{
	size_t n = s->gamma + s->ntids + 2 * (s->nev + s->nmoved) + s->nsrow;

	if (s->kind == ST_INSERT)
		n += 2 * s->req->insert->n_rows;
	else if (s->kind == ST_DELETE)
		n += 2 * s->dels.n;
	else if (s->kind == ST_DROP)
		n += s->locs.n + s->nsrow;
	return n;
}

static int commit(struct px_worker *w, struct stmt *s)
{
	struct px_state *st = w->st;
	struct px_table *t = s->t;
	MDB_txn *txn;
	int rc;

	if (s->ntids > 0 && (rc = delete_unread(s, st)) != LWC_OK)
		return rc;
	if (s->kind == ST_INSERT && st->next_rowid + s->req->insert->n_rows >= IDX_ROW_LIMIT)
		return stmt_fail(s, LWC_ERR_NO_SPACE, "the database's row ids are used up (2^%d)",
				 IDX_ROW_BITS);
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		return stmt_fail(s, LWC_ERR_STORE, "lmdb: %s", mdb_strerror(rc));
	/* blocks, positions and the stash go to the journal (journal.h),
	 * or in place for a statement that changes very many */
	if ((rc = jr_begin(st, txn, journal_entries(s))) != 0)
		goto fail;
	for (size_t i = 0; i < s->gamma && rc == 0; i++)
		rc = jr_block(st, s->ids[i], s->vers[i] + 1, s->ntags + i * CRY_TAG_BYTES,
			      s->bits + i * st->g.words);
	/* blocks of an exact DELETE it did not read: same version and seal */
	for (size_t i = 0; i < s->ntids && rc == 0; i++)
		rc = jr_block(st, s->tids[i], st->version[s->tids[i]],
			      st->tag + s->tids[i] * CRY_TAG_BYTES, s->tbits + i * st->g.words);
	if (rc != 0)
		goto fail;
	/* rows written back by this statement, rows it moved to the stash */
	for (size_t i = 0; i < s->nev && rc == 0; i++)
		if ((rc = jr_pos(st, s->ev[i].row,
				 PX_LOC(s->ids[s->ev[i].blk], s->ev[i].slot))) == 0)
			rc = jr_stash_del(st, s->ev[i].row);
	for (size_t i = 0; i < s->nmoved && rc == 0; i++)
		if (!s->mdel[i] && (rc = jr_pos(st, s->mrow[i], PX_LOC_STASH)) == 0)
			rc = jr_stash_put(st, s->mrow[i], t->id, s->mrec + i * st->g.S);
	if (rc != 0)
		goto fail;
	switch (s->kind) {
	case ST_INSERT:
		for (size_t i = 0; i < s->req->insert->n_rows && rc == 0; i++) {
			const Lwc__Row *r = insert_row(s, i);
			uint64_t row = st->next_rowid + i;
			uint8_t key[8], buf[PX_MAX_TOKENS * CRY_TOKEN_BYTES];
			MDB_val k = { 8, key }, d = { t->ntok * CRY_TOKEN_BYTES, buf };

			cry_put_be64(key, row);
			for (uint32_t c = 0; c < t->ntok; c++)
				memcpy(buf + c * CRY_TOKEN_BYTES, r->tokens[c].data, CRY_TOKEN_BYTES);
			rc = mdb_put(txn, t->rows, &k, &d, 0);
			if (rc == 0 && s->via_stash) {
				if ((rc = jr_pos(st, row, PX_LOC_STASH)) == 0)
					rc = jr_stash_put(st, row, t->id, r->record.data);
			} else if (rc == 0) {
				rc = jr_pos(st, row, s->locs.v[i]);
			}
		}
		/* the index entries token by token; new row ids: each the last of
		 * its token's list */
		for (uint32_t c = 0; c < t->ntok && rc == 0; c++) {
			struct idx_cur ic;

			if ((rc = idx_open(&ic, txn, t, t->tcol[c], s->req->insert->n_rows)) != 0)
				break;
			for (size_t i = 0; i < s->req->insert->n_rows && rc == 0; i++) {
				const Lwc__Row *r = insert_row(s, i);

				if (!px_tok_none(t, c, r->tokens[c].data))
					rc = idx_add(&ic, r->tokens[c].data, st->next_rowid + i,
						     MDB_APPENDDUP);
			}
			idx_close(&ic);
		}
		if (rc == 0)
			rc = px_meta_put_u64(st, txn, "next_rowid",
					     st->next_rowid + s->req->insert->n_rows);
		if (rc == 0)
			rc = idx_settle(txn, t);
		break;
	case ST_DELETE:
		rc = delete_rows(st, txn, t, s->dels.v, s->dels.n);
		if (rc == 0)
			rc = idx_settle(txn, t);
		break;
	case ST_UPDATE:
		rc = update_rows(st, txn, t, s->upds, s->nupds);
		/* new records of rows served from the stash */
		for (size_t i = 0; i < s->nsrow && rc == 0; i++)
			rc = jr_stash_put(st, s->srow[i], t->id, s->srec + i * st->g.S);
		if (rc == 0)
			rc = idx_settle(txn, t);
		break;
	case ST_CREATE: {
		const Lwc__CreateTable *ct = s->req->create_table;
		struct px_table *nt;

		/* two CREATEs of one name planned side by side: the first wins */
		if (px_table_find(st, ct->table.data, ct->table.len) != NULL) {
			stmt_fail(s, LWC_ERR_EXISTS, "table already exists");
			rc = RC_STMT_ERR;
			break;
		}
		if ((nt = calloc(1, sizeof(*nt))) == NULL) {
			rc = ENOMEM;
			break;
		}
		memcpy(nt->handle, ct->table.data, PX_HANDLE_BYTES);
		nt->id = st->next_table;
		nt->ncols = ct->ncols;
		nt->pk_col = ct->pk_col;
		nt->unique = ct->pk_col >= 0 && ct->pk_col < 64 ? (uint64_t)1 << ct->pk_col : 0;
		if (ct->range_tokens.len == ct->ncols) {
			memcpy(nt->rtok, ct->range_tokens.data, ct->ncols);
			for (uint32_t c = 0; c < ct->ncols && c < 64; c++)
				if (nt->rtok[c])
					nt->range_ready |= (uint64_t)1 << c;
		}
		if (px_table_layout(nt) != LWC_OK) {     /* checked at plan */
			free(nt);
			rc = EINVAL;
			break;
		}
		if (ct->schema.len) {
			if ((nt->schema = malloc(ct->schema.len)) == NULL) {
				free(nt);
				rc = ENOMEM;
				break;
			}
			memcpy(nt->schema, ct->schema.data, ct->schema.len);
			nt->schema_len = ct->schema.len;
		}
		s->newt = nt;
		if ((rc = px_table_open_dbis(st, txn, nt, MDB_CREATE)) == 0 &&
		    (rc = px_table_put(st, txn, nt)) == 0)
			rc = px_meta_put_u64(st, txn, "next_table", st->next_table + 1);
		break;
	}
	case ST_DROP: {
		MDB_val k = { PX_HANDLE_BYTES, t->handle };
		for (size_t i = 0; i < s->locs.n && rc == 0; i++)
			rc = jr_pos_del(st, s->lrow[i]);
		for (size_t i = 0; i < s->nsrow && rc == 0; i++)
			if ((rc = jr_pos_del(st, s->srow[i])) == 0)
				rc = jr_stash_del(st, s->srow[i]);
		for (uint32_t c = 0; c < t->ncols && rc == 0; c++)
			rc = mdb_drop(txn, t->cols[c], 1);
		if (rc == 0)
			rc = mdb_drop(txn, t->run, 1);
		if (rc == 0)
			rc = mdb_drop(txn, t->rows, 1);
		if (rc == 0)
			rc = mdb_del(txn, st->catalog, &k, NULL);
		break;
	}
	case ST_INDEX:
		rc = index_commit(txn, st, t, s->req->create_index, &s->newt);
		break;
	default:
		break;
	}
	if (rc != 0)
		goto fail;
	rc = jr_commit(st, txn);
	txn = NULL;
	if (rc != 0)
		goto fail;
	/* the new state is durable: mirror it in memory */
	for (size_t i = 0; i < s->gamma + s->ntids; i++) {
		int read = i < s->gamma;
		uint64_t id = read ? s->ids[i] : s->tids[i - s->gamma];
		const uint64_t *nb = read ? s->bits + i * st->g.words
				     : s->tbits + (i - s->gamma) * st->g.words;
		uint16_t occ = 0;

		if (read) {
			st->version[id] = s->vers[i] + 1;
			memcpy(st->tag + id * CRY_TAG_BYTES, s->ntags + i * CRY_TAG_BYTES,
			       CRY_TAG_BYTES);
			pa_touch(&st->pa, id);
		}
		memcpy(st->bits + id * st->g.words, nb, st->g.words * sizeof(uint64_t));
		for (size_t x = 0; x < st->g.words; x++)
			occ = (uint16_t)(occ + __builtin_popcountll(nb[x]));
		st->used_slots = st->used_slots - st->occ[id] + occ;
		if (occ < st->occ[id] && id < st->free_hint)
			st->free_hint = id;
		st->occ[id] = occ;
	}
	commit_stash(st, s);
	switch (s->kind) {
	case ST_INSERT:
		t->nrows += s->req->insert->n_rows;
		s->count = s->req->insert->n_rows;
		st->next_rowid += s->req->insert->n_rows;
		atomic_fetch_add(s->via_stash ? &st->inserts_stashed : &st->inserts_placed,
				 s->req->insert->n_rows);
		break;
	case ST_DELETE:
		t->nrows -= s->dels.n;
		break;
	case ST_CREATE:
		s->newt->next = st->tables;
		st->tables = s->newt;
		s->newt = NULL;
		st->next_table++;
		break;
	case ST_DROP:
		for (struct px_table **pp = &st->tables; *pp; pp = &(*pp)->next)
			if (*pp == t) {
				*pp = t->next;
				break;
			}
		for (uint32_t c = 0; c < t->ncols; c++)
			mdb_dbi_close(st->env, t->cols[c]);
		mdb_dbi_close(st->env, t->run);
		mdb_dbi_close(st->env, t->rows);
		free(t->schema);
		free(t);
		s->t = NULL;
		s->claimed = 0;
		break;
	case ST_INDEX: {
		/* the catalog fields of the new definition (the rest of the
		 * mirror, next and counters, stays); an index that changed
		 * nothing leaves t alone: statements not claiming it read it */
		struct px_table *nt = s->newt;
		if (nt == NULL)
			break;
		t->unique = nt->unique;
		t->has_null = nt->has_null;
		memcpy(t->null_tok, nt->null_tok, sizeof(t->null_tok));
		memcpy(t->rtok, nt->rtok, sizeof(t->rtok));
		t->range_ready = nt->range_ready;
		t->ntok = nt->ntok;
		memcpy(t->tcol, nt->tcol, sizeof(t->tcol));
		free(nt);
		s->newt = NULL;
		break;
	}
	default:
		break;
	}
	jr_fold_if_due(st);
	return LWC_OK;
fail:
	if (txn)
		mdb_txn_abort(txn);
	jr_abort(st);
	if (s->newt) {
		free(s->newt->schema);
		free(s->newt);
		s->newt = NULL;
	}
	if (rc == RC_STMT_ERR)              /* a statement error already set */
		return s->err;
	{
		const char *why;
		int code = px_mdb_err(st, rc, &why);
		return stmt_fail(s, code, "proxy state: %s", why);
	}
}

/* After a failure (st->mu held): commit the new version of every block that
 * went back to the cloud with its committed content, so no version is ever
 * written twice.  Blocks written with the statement's changes stay at their
 * committed version; their newer copy is never accepted (tags differ). */
static void commit_clean(struct px_state *st, struct stmt *s)
{
	MDB_txn *txn;
	size_t cnt = 0;
	int rc;

	for (size_t i = 0; i < s->gamma; i++)
		if (s->written && s->written[i] == 2)
			cnt++;
	if (cnt == 0)
		return;
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		goto fail;
	if ((rc = jr_begin(st, txn, cnt)) != 0) {
		mdb_txn_abort(txn);
		jr_abort(st);
		goto fail;
	}
	for (size_t i = 0; i < s->gamma && rc == 0; i++)
		if (s->written[i] == 2)
			rc = jr_block(st, s->ids[i], s->vers[i] + 1,
				      s->ntags + i * CRY_TAG_BYTES, s->obits + i * st->g.words);
	if (rc != 0) {
		mdb_txn_abort(txn);
		jr_abort(st);
		goto fail;
	}
	if ((rc = jr_commit(st, txn)) != 0)
		goto fail;
	for (size_t i = 0; i < s->gamma; i++)
		if (s->written[i] == 2) {
			st->version[s->ids[i]] = s->vers[i] + 1;
			memcpy(st->tag + s->ids[i] * CRY_TAG_BYTES, s->ntags + i * CRY_TAG_BYTES,
			       CRY_TAG_BYTES);
			pa_touch(&st->pa, s->ids[i]);
		}
	return;
fail:
	log_warn("cannot record the new versions of a failed statement's blocks: %s",
		 mdb_strerror(rc));
}

/* A relocating statement that failed after its blocks went back (the user
 * aborted, a new value clashed, the user's connection broke): its blocks no
 * longer hold the rows it moved, so it commits as the SELECT it was until
 * then, the rows in the stash unchanged, and the user gets the error.  The
 * cloud sees a statement like any other. */
static void commit_moves_only(struct px_worker *w, struct stmt *s)
{
	enum stmt_kind kind = s->kind;
	int err = s->err;
	char msg[sizeof(s->msg)];

	memcpy(msg, s->msg, sizeof(msg));
	s->kind = ST_SELECT;
	s->err = LWC_OK;
	s->dels.n = 0;
	if (s->nmoved)
		memset(s->mdel, 0, s->nmoved);
	if (s->nsrow)
		memset(s->sdel, 0, s->nsrow);
	if (commit(w, s) != LWC_OK) {
		log_warn("statement failed, and committing the rows it moved failed too: %s", s->msg);
		commit_clean(w->st, s);
	}
	s->kind = kind;
	s->err = err;
	memcpy(s->msg, msg, sizeof(msg));
}

/* ---- the statement -------------------------------------------------------- */

static void stmt_free(struct stmt *s)
{
	locset_free(&s->locs);
	free(s->lrow);
	free(s->srow);
	free(s->srec);
	free(s->sdel);
	free(s->sshared);
	free(s->mrow);
	free(s->mrec);
	free(s->mdel);
	free(s->ev);
	free(s->evrec);
	locset_free(&s->dels);
	for (size_t i = 0; i < s->nupds; i++)
		free(s->upds[i].tokens);
	free(s->upds);
	free(s->tids);
	free(s->tbits);
	free(s->ids);
	free(s->vers);
	free(s->bits);
	free(s->obits);
	free(s->otags);
	free(s->ntags);
	free(s->written);
	free(s->pdst);
	free(s->prec);
}

int px_send_error(struct px_io *io, uint64_t seq, int code, const char *msg)
{
	Lwc__ProxyResponse resp = LWC__PROXY_RESPONSE__INIT;
	Lwc__Error e = LWC__ERROR__INIT;

	e.code = code;
	e.message = (char *)(uintptr_t)(msg && msg[0] ? msg : lwc_strerror(code));
	resp.seq = seq;
	resp.result_case = LWC__PROXY_RESPONSE__RESULT_ERROR;
	resp.error = &e;
	return io->send(io->ctx, &resp);
}

static int send_done(struct px_io *io, uint64_t seq, uint64_t count)
{
	Lwc__ProxyResponse resp = LWC__PROXY_RESPONSE__INIT;
	Lwc__Done d = LWC__DONE__INIT;

	d.count = count;
	resp.seq = seq;
	resp.result_case = LWC__PROXY_RESPONSE__RESULT_DONE;
	resp.done = &d;
	return io->send(io->ctx, &resp);
}

static int list_tables(struct px_worker *w, const Lwc__ProxyRequest *req, struct px_io *io)
{
	struct px_state *st = w->st;
	Lwc__ProxyResponse resp = LWC__PROXY_RESPONSE__INIT;
	Lwc__Catalog cat = LWC__CATALOG__INIT;
	Lwc__TableInfo *infos = NULL, **ptrs = NULL;
	size_t n = 0, i = 0;
	int rc;

	pthread_mutex_lock(&st->mu);
	for (struct px_table *t = st->tables; t; t = t->next)
		if (!t->dropped)
			n++;
	infos = calloc(n + 1, sizeof(*infos));
	ptrs = calloc(n + 1, sizeof(*ptrs));
	if (infos == NULL || ptrs == NULL) {
		pthread_mutex_unlock(&st->mu);
		free(infos);
		free(ptrs);
		return px_send_error(io, req->seq, LWC_ERR_NOMEM, NULL);
	}
	for (struct px_table *t = st->tables; t; t = t->next) {
		uint8_t *copy;
		if (t->dropped)
			continue;
		lwc__table_info__init(&infos[i]);
		infos[i].table.data = malloc(PX_HANDLE_BYTES + t->schema_len + t->ncols);
		copy = infos[i].table.data;
		if (copy == NULL)
			continue;
		memcpy(copy, t->handle, PX_HANDLE_BYTES);
		if (t->schema_len)
			memcpy(copy + PX_HANDLE_BYTES, t->schema, t->schema_len);
		infos[i].table.len = PX_HANDLE_BYTES;
		infos[i].schema.data = copy + PX_HANDLE_BYTES;
		infos[i].schema.len = t->schema_len;
		infos[i].ncols = t->ncols;
		infos[i].pk_col = t->pk_col;
		infos[i].unique_cols = t->unique;
		if (t->ntok > t->ncols || t->range_ready) {
			memcpy(copy + PX_HANDLE_BYTES + t->schema_len, t->rtok, t->ncols);
			infos[i].range_tokens.data = copy + PX_HANDLE_BYTES + t->schema_len;
			infos[i].range_tokens.len = t->ncols;
			infos[i].range_ready = t->range_ready;
		}
		ptrs[i] = &infos[i];
		i++;
	}
	pthread_mutex_unlock(&st->mu);
	cat.n_tables = i;
	cat.tables = ptrs;
	cat.record_bytes = st->g.R;
	cat.features = WIRE_FEATURE_TOKENS_AS_BEFORE | WIRE_FEATURE_TOKEN_BLOCK;
	resp.seq = req->seq;
	resp.result_case = LWC__PROXY_RESPONSE__RESULT_CATALOG;
	resp.catalog = &cat;
	rc = io->send(io->ctx, &resp);
	for (size_t j = 0; j < i; j++)
		free(infos[j].table.data);
	free(infos);
	free(ptrs);
	return rc;
}

int px_execute(struct px_worker *w, const Lwc__ProxyRequest *req, struct px_io *io)
{
	struct px_state *st = w->st;
	struct stmt s;
	int rc, io_err = LWC_OK;

	memset(&s, 0, sizeof(s));
	s.req = req;
	s.err = LWC_OK;
	switch (req->op_case) {
	case LWC__PROXY_REQUEST__OP_LIST_TABLES:
		return list_tables(w, req, io);
	case LWC__PROXY_REQUEST__OP_CREATE_TABLE:
		s.kind = ST_CREATE;
		break;
	case LWC__PROXY_REQUEST__OP_DROP_TABLE:
		s.kind = ST_DROP;
		break;
	case LWC__PROXY_REQUEST__OP_CREATE_INDEX:
		s.kind = ST_INDEX;
		break;
	case LWC__PROXY_REQUEST__OP_INSERT:
		s.kind = ST_INSERT;
		break;
	case LWC__PROXY_REQUEST__OP_SELECT:
		s.kind = ST_SELECT;
		s.where = req->select->where;
		s.candidates = req->select->candidates;
		break;
	case LWC__PROXY_REQUEST__OP_UPDATE:
		s.kind = ST_UPDATE;
		s.where = req->update->where;
		s.candidates = req->update->candidates;
		s.interactive = 1;
		break;
	case LWC__PROXY_REQUEST__OP_DELETE:
		s.kind = ST_DELETE;
		s.where = req->delete_->where;
		s.candidates = req->delete_->candidates;
		s.interactive = s.candidates;
		break;
	case LWC__PROXY_REQUEST__OP_DECISIONS:
		return px_send_error(io, req->seq, LWC_ERR_PROTO,
				  "decisions sent outside an UPDATE or DELETE");
	default:
		return px_send_error(io, req->seq, LWC_ERR_UNKNOWN_OP, "unknown request");
	}
	s.wait_block = UINT64_MAX;
	rc = plan(w, &s);
	if (rc == LWC_OK && s.bulk)
		rc = bulk_insert(w, &s);
	else
		bulk_drop(w, req);         /* made ahead for nothing (bulk.c) */
	if (s.gamma > 0) {
		int ioe = LWC_OK;
		int arc = run_access(w, &s, io, &ioe);
		if (rc == LWC_OK)
			rc = arc;
		io_err = ioe;
	}
	cloud_release(w);

	pthread_mutex_lock(&st->mu);
	if (rc == LWC_OK && io_err == LWC_OK && !s.aborted && s.err == LWC_OK) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (!s.bulk)
			rc = commit(w, &s);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		atomic_fetch_add(&st->commit_us, (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000 +
							    (t1.tv_nsec - t0.tv_nsec) / 1000));
		atomic_fetch_add(&st->commits, 1);
		s.blocks_done = 0;         /* (new records may be in place by now) */
	} else if (rc == LWC_OK) {
		rc = s.err != LWC_OK ? s.err : LWC_ERR_ABORTED;
	}
	if (rc != LWC_OK && s.blocks_done && s.relocating)
		commit_moves_only(w, &s);
	else if (rc != LWC_OK)
		commit_clean(st, &s);
	unlock_blocks(st, &s);
	pending_drop(st, s.owner);
	stash_release(st, s.owner);
	st->stash_reserved -= s.reserved;
	s.reserved = 0;
	if (rc == LWC_OK && st->relocate && !s.relocating && s.locs.n > 0 &&
	    (s.kind == ST_SELECT || s.kind == ST_UPDATE || (s.kind == ST_DELETE && s.interactive)))
		atomic_fetch_add(s.locs.n > st->relocate_max ? &st->over_relocate_max
				 : &st->stash_full, 1);
	stmt_release_table(st, &s);
	atomic_fetch_add(&st->stmts, 1);
	if (rc != LWC_OK)
		atomic_fetch_add(&st->stmt_errors, 1);
	pthread_mutex_unlock(&st->mu);

	if (io_err != LWC_OK) {
		stmt_free(&s);
		return io_err;
	}
	if (rc != LWC_OK || s.err != LWC_OK) {
		plog_debug(w->name, "%s failed: %s", kind_name[s.kind], s.msg);
		rc = px_send_error(io, req->seq, s.err != LWC_OK ? s.err : rc, s.msg);
	} else {
		plog_debug(w->name, "%s: k=%zu gamma=%zu count=%llu", kind_name[s.kind], s.nreal,
			   s.gamma, (unsigned long long)s.count);
		rc = send_done(io, req->seq, s.count);
	}
	stmt_free(&s);
	return rc;
}
