/*
 * commit.c - a statement's commit (st->mu held): its blocks' versions and
 * flags, rows, index entries, positions and stash in one LMDB transaction,
 * through the statement journal; a failed statement's blocks put back
 * (engine_int.h).
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

/* About how many block, position and stash changes commit_stmt() stages. */
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

/* What every statement commits through the journal: its blocks' new
 * versions, seals and flags, the rows it wrote back and the rows it moved to
 * the stash (st->mu held, between jr_begin and jr_commit). */
static int stage_moves(struct px_state *st, const struct stmt *s)
{
	int rc = 0;

	for (size_t i = 0; i < s->gamma && rc == 0; i++)
		rc = jr_block(st, s->ids[i], s->vers[i] + 1, s->ntags + i * CRY_TAG_BYTES,
			      s->bits + i * st->g.words);
	/* blocks of an exact DELETE it did not read: same version and seal */
	for (size_t i = 0; i < s->ntids && rc == 0; i++)
		rc = jr_block(st, s->tids[i], st->version[s->tids[i]],
			      st->tag + s->tids[i] * CRY_TAG_BYTES, s->tbits + i * st->g.words);
	/* rows written back by this statement, rows it moved to the stash */
	for (size_t i = 0; i < s->nev && rc == 0; i++)
		if ((rc = jr_pos(st, s->ev[i].row,
				 PX_LOC(s->ids[s->ev[i].blk], s->ev[i].slot))) == 0)
			rc = jr_stash_del(st, s->ev[i].row);
	for (size_t i = 0; i < s->nmoved && rc == 0; i++)
		if (!s->mdel[i] && (rc = jr_pos(st, s->mrow[i], PX_LOC_STASH)) == 0)
			rc = jr_stash_put(st, s->mrow[i], s->t->id, s->mrec + i * st->g.S);
	return rc;
}

/* The new state is durable: its blocks mirrored in memory. */
static void mirror_blocks(struct px_state *st, const struct stmt *s)
{
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
}

int commit_stmt(struct px_worker *w, struct stmt *s)
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
	if ((rc = stage_moves(st, s)) != 0)
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
					rc = jr_stash_put(st, row, t->id | PX_STASH_FRESH,
							  r->record.data);
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
		for (size_t i = 0; i < s->nsrow && rc == 0; i++) {
			const struct px_stash_ent *e = stash_find(st, s->srow[i]);

			rc = jr_stash_put(st, s->srow[i],
					  t->id | (e && e->fresh ? PX_STASH_FRESH : 0),
					  s->srec + i * st->g.S);
		}
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
	mirror_blocks(st, s);
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

/* Several SELECTs committed as one transaction (st->mu held): one journal
 * record and one durable commit for all of them, where each would make its
 * own (engine.c, commit_selects).  They hold disjoint blocks and stash rows,
 * so their changes are what their commits one after the other would be.
 * Nonzero (nothing changed) on failure: each is then committed alone. */
int commit_group(struct px_state *st, struct stmt *const *v, size_t n)
{
	MDB_txn *txn;
	size_t entries = 0;
	int rc;

	for (size_t i = 0; i < n; i++)
		entries += journal_entries(v[i]);
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		return rc;
	rc = jr_begin(st, txn, entries);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = stage_moves(st, v[i]);
	if (rc != 0) {
		mdb_txn_abort(txn);
		jr_abort(st);
		return rc;
	}
	if ((rc = jr_commit(st, txn)) != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		mirror_blocks(st, v[i]);
		commit_stash(st, v[i]);
	}
	jr_fold_if_due(st);
	return 0;
}

/* After a failure (st->mu held): commit the new version of every block that
 * went back to the cloud with its committed content, so no version is ever
 * written twice.  Blocks written with the statement's changes stay at their
 * committed version; their newer copy is never accepted (tags differ). */
void commit_clean(struct px_state *st, struct stmt *s)
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
void commit_moves_only(struct px_worker *w, struct stmt *s)
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
	if (commit_stmt(w, s) != LWC_OK) {
		log_warn("statement failed, and committing the rows it moved failed too: %s", s->msg);
		commit_clean(w->st, s);
	}
	s->kind = kind;
	s->err = err;
	memcpy(s->msg, msg, sizeof(msg));
}
