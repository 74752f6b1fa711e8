/*
 * check.c - lwc-proxy check: every block opens at its committed version and
 * tag, and the rows, indexes, positions and stash agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine_int.h"
#include "log.h"
#include "stash.h"

/* Does the row (tokens rv) hold tok as its token of column c, the
 * equality token or one of the column's range tokens? */
static int row_has_token(const struct px_table *t, const uint8_t *rv, uint32_t c,
			 const uint8_t *tok)
{
	for (uint32_t j = 0; j < t->ntok; j++)
		if (t->tcol[j] == c && memcmp(rv + j * CRY_TOKEN_BYTES, tok, CRY_TOKEN_BYTES) == 0)
			return 1;
	return 0;
}

/* The index entry (tok, row) of column col: its row lives and has tok. */
static int check_entry(MDB_txn *txn, const struct px_table *t, uint32_t col,
		       const uint8_t *tok, uint64_t row)
{
	uint8_t rowid[8];
	MDB_val rk = { 8, rowid }, rv;

	cry_put_be64(rowid, row);

	if (mdb_get(txn, t->rows, &rk, &rv) != 0) {
		printf("table %u column %u: index entry points to row %llu, which the "
		       "table does not hold\n", t->id, col + 1, (unsigned long long)row);
		return 1;
	}
	if (rv.mv_size != t->ntok * CRY_TOKEN_BYTES || !row_has_token(t, rv.mv_data, col, tok)) {
		printf("table %u column %u: index entry for row %llu does not match the "
		       "row's value\n", t->id, col + 1, (unsigned long long)row);
		return 1;
	}
	return 0;
}

static int check_table(struct px_state *st, MDB_txn *txn, struct px_table *t,
		       uint32_t *per_block, uint64_t *nrows, uint64_t *nidx, uint64_t *nstash)
{
	MDB_cursor *cur;
	MDB_val k, d;
	uint64_t row;
	int bad = 0, rc;

	if (mdb_cursor_open(txn, t->rows, &cur) != 0)
		return 1;
	while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
		uint64_t loc, b;
		uint32_t slot;

		if (k.mv_size != 8 || d.mv_size != t->ntok * CRY_TOKEN_BYTES) {
			printf("table %u: malformed row entry\n", t->id);
			bad++;
			continue;
		}
		row = cry_get_be64(k.mv_data);
		(*nrows)++;
		if ((rc = jr_pos_get(st, txn, NULL, row, &loc)) != 0) {
			printf("table %u: row %llu has no position\n", t->id, (unsigned long long)row);
			bad++;
			continue;
		}
		if (loc == PX_LOC_STASH) {
			uint8_t *rec = malloc(st->g.S);
			uint32_t table = 0;
			struct px_stash_ent *e = stash_find(st, row);

			if (rec == NULL || jr_stash_get(st, txn, row, &table, rec) != 0 ||
			    table != t->id || e == NULL || e->table != t->id) {
				printf("table %u: row %llu is said to be in the stash but is not there\n",
				       t->id, (unsigned long long)row);
				bad++;
			}
			free(rec);
			(*nstash)++;
			goto tokens;
		}
		b = PX_LOC_BLOCK(loc);
		slot = PX_LOC_SLOT(loc);
		if (b >= st->nblocks || slot >= st->g.m) {
			printf("table %u: row at block %llu slot %u is outside the database\n", t->id,
			       (unsigned long long)b, slot);
			bad++;
			continue;
		}
		if (!px_bit(st->bits + b * st->g.words, slot)) {
			printf("table %u: row at block %llu slot %u but the slot is marked empty\n",
			       t->id, (unsigned long long)b, slot);
			bad++;
		}
		per_block[b]++;
tokens:
		for (uint32_t c = 0; c < t->ntok; c++) {
			const uint8_t *tok = (const uint8_t *)d.mv_data + c * CRY_TOKEN_BYTES;
			uint8_t rk[IDX_RUN_KEY];
			int in_tree, in_run;

			if (px_tok_none(t, c, tok))
				continue;        /* older than the column's range index */
			in_tree = idx_holds(txn, t->cols[t->tcol[c]], tok, CRY_TOKEN_BYTES, row);
			idx_run_key(rk, t->tcol[c], tok);
			in_run = idx_holds(txn, t->run, rk, IDX_RUN_KEY, row);
			if (in_tree < 0 || in_run < 0)
				return bad + 1;
			if (!in_tree && !in_run) {
				printf("table %u: row %llu missing from the index of column %u\n", t->id,
				       (unsigned long long)row, t->tcol[c] + 1u);
				bad++;
			} else if (in_tree && in_run) {
				printf("table %u: row %llu in both the tree and the run of column %u\n",
				       t->id, (unsigned long long)row, t->tcol[c] + 1u);
				bad++;
			}
		}
	}
	mdb_cursor_close(cur);
	/* every index entry, in the column trees and the run, points to a
	 * live row with that token */
	for (uint32_t c = 0; c <= t->ncols; c++) {
		int run = c == t->ncols;

		if (mdb_cursor_open(txn, run ? t->run : t->cols[c], &cur) != 0)
			return bad + 1;
		while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
			const uint8_t *tok = k.mv_data;
			uint32_t col = c, n;
			uint64_t first;

			if (k.mv_size != (run ? IDX_RUN_KEY : CRY_TOKEN_BYTES) || d.mv_size != 8 ||
			    (run && tok[0] >= t->ncols) ||
			    idx_span_first(d.mv_data) + idx_span_rows(d.mv_data) > IDX_ROW_LIMIT) {
				(*nidx)++;
				printf("table %u %s %u: malformed index entry\n", t->id,
				       run ? "run, column" : "column", run ? tok[0] + 1u : c + 1);
				bad++;
				continue;
			}
			if (run)
				col = *tok++;
			/* a span: each of its rows */
			first = idx_span_first(d.mv_data);
			n = idx_span_rows(d.mv_data);
			for (uint32_t i = 0; i < n; i++) {
				(*nidx)++;
				bad += check_entry(txn, t, col, tok, first + i);
			}
		}
		mdb_cursor_close(cur);
	}
	return bad;
}

/* Blocks ids[0..n) one READ each; returns how many do not open. */
static int check_one_by_one(struct px_worker *w, const uint64_t *ids, const uint64_t *vers,
			    size_t n, uint8_t *plain)
{
	struct px_state *st = w->st;
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		Lwc__CsResponse *resp = NULL;
		char err[256] = "";
		int rc = cloud_read(w, ids + i, vers + i, 1, &resp, err, sizeof(err));

		if (rc == LWC_OK && (resp->result_case != LWC__CS_RESPONSE__RESULT_READ ||
				     resp->read->n_blocks != 1 || resp->read->blocks[0]->id != ids[i]))
			rc = LWC_ERR_INTEGRITY;
		if (rc == LWC_OK)
			rc = open_block(st, w->scratch, ids[i], vers[i], st->tag + ids[i] * CRY_TAG_BYTES,
					resp->read->blocks[0]->data.data,
					resp->read->blocks[0]->data.len, plain);
		else if (err[0] == '\0')
			snprintf(err, sizeof(err), "%s", lwc_strerror(rc));
		if (rc != LWC_OK) {
			if (err[0])
				printf("block %llu (version %llu) cannot be read: %s\n",
				       (unsigned long long)ids[i], (unsigned long long)vers[i], err);
			else
				printf("block %llu (version %llu) does not open: %s\n",
				       (unsigned long long)ids[i], (unsigned long long)vers[i],
				       lwc_strerror(rc));
			bad++;
		}
		if (resp)
			cs_client_free_resp(resp);
	}
	return bad;
}

int px_check(struct px_worker *w, int verbose)
{
	struct px_state *st = w->st;
	size_t batch = w->cfg->batch_blocks ? w->cfg->batch_blocks : 1024;
	uint8_t *plain = malloc(st->g.block_bytes);
	uint32_t *per_block = calloc(st->nblocks + 1, sizeof(uint32_t));
	uint64_t *ids = malloc(batch * sizeof(uint64_t)), *vers = malloc(batch * sizeof(uint64_t));
	uint64_t nrows = 0, nidx = 0, ntables = 0, nstash = 0;
	MDB_txn *txn;
	int bad = 0;

	if (!plain || !per_block || !ids || !vers) {
		free(plain);
		free(per_block);
		free(ids);
		free(vers);
		return LWC_ERR_NOMEM;
	}
	/* every block opens at its committed version */
	for (uint64_t first = 0; first < st->nblocks; first += batch) {
		size_t n = st->nblocks - first < batch ? (size_t)(st->nblocks - first) : batch;
		Lwc__CsResponse *resp = NULL;
		char err[256] = "";
		int rc;

		for (size_t i = 0; i < n; i++) {
			ids[i] = first + i;
			vers[i] = st->version[first + i];
		}
		rc = cloud_read(w, ids, vers, n, &resp, err, sizeof(err));
		if (rc != LWC_OK || resp->result_case != LWC__CS_RESPONSE__RESULT_READ ||
		    resp->read->n_blocks != n) {
			if (resp)
				cs_client_free_resp(resp);
			/* one block the store lacks fails the whole READ: read this
			 * batch block by block, so every missing or stale block is
			 * named and counted once */
			bad += check_one_by_one(w, ids, vers, n, plain);
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			const Lwc__CsBlock *b = resp->read->blocks[i];
			rc = b->id != ids[i] ? LWC_ERR_INTEGRITY
			     : open_block(st, w->scratch, ids[i], vers[i], st->tag + ids[i] * CRY_TAG_BYTES,
					  b->data.data, b->data.len, plain);
			if (rc != LWC_OK) {
				printf("block %llu (version %llu) does not open: %s\n",
				       (unsigned long long)ids[i], (unsigned long long)vers[i],
				       lwc_strerror(rc));
				bad++;
			}
		}
		cs_client_free_resp(resp);
	}
	sodium_memzero(plain, st->g.block_bytes);
	free(plain);
	free(ids);
	free(vers);
	if (mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn) != 0) {
		free(per_block);
		return LWC_ERR_STORE;
	}
	for (struct px_table *t = st->tables; t; t = t->next) {
		ntables++;
		bad += check_table(st, txn, t, per_block, &nrows, &nidx, &nstash);
	}
	{
		MDB_stat ms;
		/* (px_state_open folded the journal: the database holds the stash) */
		if (mdb_stat(txn, st->stash_db, &ms) == 0 &&
		    (ms.ms_entries != nstash || st->nstash != nstash)) {
			printf("stash: %llu records stored, %zu listed in memory, %llu rows placed "
			       "there\n", (unsigned long long)ms.ms_entries, st->nstash,
			       (unsigned long long)nstash);
			bad++;
		}
	}
	mdb_txn_abort(txn);
	for (uint64_t b = 0; b < st->nblocks; b++) {
		if (per_block[b] != st->occ[b]) {
			printf("block %llu: %u slots marked full but %u rows live there\n",
			       (unsigned long long)b, st->occ[b], per_block[b]);
			bad++;
		}
		if (st->occ[b] > st->g.theta) {
			printf("block %llu: %u full slots exceed theta = %u\n", (unsigned long long)b,
			       st->occ[b], st->g.theta);
			bad++;
		}
	}
	free(per_block);
	if (bad)
		printf("PROBLEMS: %d found (above) in %llu blocks, %llu tables, %llu rows, %llu index "
		       "entries\n", bad, (unsigned long long)st->nblocks,
		       (unsigned long long)ntables, (unsigned long long)nrows,
		       (unsigned long long)nidx);
	else if (verbose)
		printf("ok: %llu blocks open at their committed versions and tags; %llu tables, "
		       "%llu rows (%llu in the stash), %llu index entries, all consistent\n",
		       (unsigned long long)st->nblocks, (unsigned long long)ntables,
		       (unsigned long long)nrows, (unsigned long long)nstash,
		       (unsigned long long)nidx);
	return bad;
}
