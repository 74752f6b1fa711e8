/*
 * bulk.c - large INSERTs into fresh blocks.
 *
 * An INSERT of many rows (a bulk load, \copy) that does not go through the
 * stash fills blocks appended to the database: the rows are placed in
 * random slots of new blocks, up to the fill limit each, the rest of every
 * block random bytes, each block sealed as version 1 and written to the
 * cloud store with no READ.  The cloud sees the database grow, which it
 * sees for any INSERT that needs room; what it learns beyond that is that
 * the new blocks hold this statement's rows (until they move: relocation
 * moves each row out of its block the first time a statement touches it).
 *
 * delete_rows() and update_rows() are the other bulk jobs of a commit: the
 * index entries, rows and positions of many deleted or updated rows, column
 * by column in token order (a whole duplicate list at once where every row
 * of a value goes).
 *
 * The new blocks are sealed and written on a thread of their own (with the
 * block pool) while the statement's worker gathers and sorts the index
 * entries, column by column; then the proxy's commit, under the state lock
 * but with no cloud I/O under it, is one LMDB transaction: blocks,
 * nblocks, rows, the index entries (appended when a column's index is
 * empty), positions and next_rowid.  Until it commits, the new blocks are beyond
 * nblocks: no statement reads them, and a failed load leaves them to the
 * next growth, which writes version 1 over them.
 *
 * Ahead (pipelined INSERTs, server.c): a loader sends statement i + 1
 * before i's answer, to run only if i succeeds.  While i holds its new
 * blocks (from its reservation to the end of its commit), i + 1 read by the
 * read-ahead thread takes the ids after them, and that thread seals and
 * writes its blocks and sorts its entries while i commits (bulk_ahead):
 * the growth passes from i to i + 1 without being let go (st->growing
 * stays set), so no one else takes those ids; i + 1's bulk_insert then
 * finds its blocks written and goes to its commit.  If i + 1 does not get
 * there (i failed, so it is not run; its plan fails), bulk_drop lets the
 * growth go and its blocks are beyond nblocks, as a failed load's.  The
 * growth is not passed on when another statement waits for one
 * (st->grow_wanted).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine_int.h"
#include "log.h"
#include "par.h"
#include "stash.h"
#include "toksort.h"

struct bulk_arg {
	const struct px_state *st;
	const Lwc__Insert *ins;
	uint64_t first;                /* id of block 0                      */
	uint32_t per;                  /* rows per block                     */
	uint8_t *plain, *tags;
	uint64_t *bits;                /* occupancy per block                */
	uint64_t *locs;                /* location per row                   */
	uint8_t **dst;                 /* where block b0 + i is sealed: its frame */
	size_t b0;                     /* first block of this batch          */
	const uint8_t *rnd;            /* PX_BLOCK_RND bytes per block of it */
};

/* Block b0 + i: its rows in random slots, random bytes in the others, sealed. */
static int bulk_block(void *p, size_t i, uint32_t *scratch)
{
	struct bulk_arg *a = p;
	const struct px_geom *g = &a->st->g;
	size_t b = a->b0 + i, r0 = b * a->per, nr = a->ins->n_rows - r0;
	uint8_t *plain = a->plain + i * g->block_bytes;
	uint8_t *out = a->dst[i];
	uint64_t *bits = a->bits + b * g->words;
	uint32_t slots[PX_MAX_SLOTS];
	struct cry_draws d = CRY_DRAWS_INIT;
	int rc;

	if (nr > a->per)
		nr = a->per;
	for (uint32_t s = 0; s < g->m; s++)
		slots[s] = s;
	for (size_t k = 0; k < nr; k++) {
		uint32_t j = (uint32_t)k + cry_draw(&d, g->m - (uint32_t)k);
		uint32_t t = slots[k];

		slots[k] = slots[j];
		slots[j] = t;
		memcpy(plain + (size_t)slots[k] * g->S, a->ins->rows[r0 + k]->record.data, g->S);
		px_bit_set(bits, slots[k], 1);
		a->locs[r0 + k] = PX_LOC(a->first + b, slots[k]);
	}
	cry_draws_wipe(&d);
	/* the other slots: random */
	fill_empty(a->st, plain, bits, scratch, a->rnd + i * PX_BLOCK_RND);
	rc = seal_block(a->st, scratch, a->first + b, 1, plain, out, a->rnd + i * PX_BLOCK_RND);
	memcpy(a->tags + b * CRY_TAG_BYTES, out + g->sealed_bytes - CRY_TAG_BYTES, CRY_TAG_BYTES);
	return rc;
}

/* A bulk INSERT's index entries, column by column in index order: token c
 * of row i as (token, i), the row ids added by the commit (next_rowid is
 * read under the state lock).  Gathered and sorted while the statement's
 * new blocks are sealed and written (bulk_insert), not in the commit. */
struct bulk_toks {
	struct tokrow *tr;             /* every column's, one after another  */
	size_t *off;                   /* column c: tr[off[c] .. off[c + 1]) */
};

static int bulk_sort(struct bulk_toks *bt, const Lwc__Insert *ins, uint32_t ntok)
{
	bt->tr = malloc(ins->n_rows * ntok * sizeof(*bt->tr) + 1);
	bt->off = malloc((ntok + 1) * sizeof(*bt->off));
	if (bt->tr == NULL || bt->off == NULL)
		return LWC_ERR_NOMEM;
	for (uint32_t c = 0; c <= ntok; c++)
		bt->off[c] = (size_t)c * ins->n_rows;
	/* token c of row i at tr[off[c] + i], row by row: each row's tokens
	 * are read once, together (column by column, a 50,000-row statement
	 * read each cache line of its 17 MB of tokens four times).  A range
	 * token's absent ones are one group after the sort, which bulk_index
	 * skips: the table is not known here when the statement is made
	 * ahead. */
	for (size_t i = 0; i < ins->n_rows; i++) {
		const ProtobufCBinaryData *toks = ins->rows[i]->tokens;

		for (uint32_t c = 0; c < ntok; c++)
			tokrow_set(&bt->tr[bt->off[c] + i], toks[c].data, i);
	}
	for (uint32_t c = 0; c < ntok; c++)
		tokrow_sort_set(bt->tr + bt->off[c], ins->n_rows);
	return LWC_OK;
}

static void bulk_toks_free(struct bulk_toks *bt)
{
	free(bt->tr);
	free(bt->off);
}

/* The index entries of token c (bulk_sort's, rows from row0); appended when
 * the column's tree is empty (so LMDB fills pages in order instead of
 * splitting them at random), else put into the tree or the table's run as
 * idx_open decides.  The puts go through one cursor: LMDB looks for a key
 * on the cursor's page before it descends from the root, and sorted
 * entries are mostly there.  The new rows' ids are above every id in the
 * indexes (ids only grow), so each entry is the last of its key's
 * duplicates: MDB_APPENDDUP puts it there without searching the key's
 * duplicate list (a million long for a range token's top levels); should
 * LMDB refuse that, a plain put.  The rows of one token go in one put
 * (idx_add_rows, LMDB's MDB_MULTIPLE): the key is looked for once, not once
 * a row (a range token's top levels are one token for every row of the
 * statement: 11 of the 22 tokens a row of the benchmark's table). */
static int bulk_index(MDB_txn *txn, struct px_table *t, uint32_t c, uint64_t row0,
		      const struct tokrow *tr, size_t m, uint64_t *rows, uint8_t *scratch)
{
	struct idx_cur ic;
	MDB_stat ms;
	int append, rc = 0;

	if ((rc = mdb_stat(txn, t->cols[t->tcol[c]], &ms)) != 0 ||
	    (rc = idx_open(&ic, txn, t, t->tcol[c], m)) != 0)
		return rc;
	append = ms.ms_entries == 0 && !ic.run;
	for (size_t i = 0; i < m && rc == 0;) {
		size_t j = i + 1;

		while (j < m && tokrow_same(&tr[j], &tr[i]))
			j++;
		if (px_tok_none(t, c, tr[i].tok)) {
			/* a range token's "absent": no entry */
		} else if (j - i == 1) {
			rc = idx_add(&ic, tr[i].tok, row0 + tr[i].row,
				     append ? MDB_APPEND : MDB_APPENDDUP);
		} else {
			for (size_t x = i; x < j; x++)
				rows[x - i] = row0 + tr[x].row;
			rc = idx_add_rows(&ic, tr[i].tok, rows, j - i,
					  append ? MDB_APPEND | MDB_APPENDDUP : MDB_APPENDDUP,
					  scratch);
		}
		i = j;
	}
	idx_close(&ic);
	return rc;
}

/* The proxy's commit of a bulk INSERT (st->mu held). */
static int bulk_commit(struct px_worker *w, struct stmt *s, const struct bulk_arg *a,
		       uint64_t nb, const struct bulk_toks *bt)
{
	struct px_state *st = w->st;
	struct px_table *t = s->t;
	const Lwc__Insert *ins = a->ins;
	uint64_t row0 = st->next_rowid;
	uint64_t *rows = malloc(ins->n_rows * sizeof(*rows) + 1);
	uint8_t *scratch = malloc(ins->n_rows * 8 + 1);
	MDB_txn *txn = NULL;
	int rc;

	if (rows == NULL || scratch == NULL) {
		free(rows);
		free(scratch);
		return stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
	}
	if (row0 + ins->n_rows >= IDX_ROW_LIMIT) {
		free(rows);
		free(scratch);
		return stmt_fail(s, LWC_ERR_NO_SPACE, "the database's row ids are used up (2^%d)",
				 IDX_ROW_BITS);
	}
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		goto fail;
	for (uint64_t b = 0; b < nb && rc == 0; b++)
		rc = px_block_put(st, txn, a->first + b, 1, a->tags + b * CRY_TAG_BYTES,
				  a->bits + b * st->g.words);
	if (rc == 0)
		rc = px_meta_put_u64(st, txn, "nblocks", a->first + nb);
	/* row ids are above every one committed: the rows and positions append */
	for (size_t i = 0; i < ins->n_rows && rc == 0; i++) {
		uint8_t key[8], buf[PX_MAX_TOKENS * CRY_TOKEN_BYTES], val[8];
		MDB_val k = { 8, key }, d = { t->ntok * CRY_TOKEN_BYTES, buf };

		cry_put_be64(key, row0 + i);
		for (uint32_t c = 0; c < t->ntok; c++)
			memcpy(buf + c * CRY_TOKEN_BYTES, ins->rows[i]->tokens[c].data,
			       CRY_TOKEN_BYTES);
		if ((rc = mdb_put(txn, t->rows, &k, &d, MDB_APPEND)) != 0)
			break;
		d.mv_size = 8;
		d.mv_data = val;
		cry_put_be64(val, a->locs[i]);
		rc = mdb_put(txn, st->pos_db, &k, &d, MDB_APPEND);
	}
	/* a range token after the column's equality token: the index is not
	 * empty then, and the entries go in by plain puts */
	for (uint32_t c = 0; c < t->ntok && rc == 0; c++)
		rc = bulk_index(txn, t, c, row0, bt->tr + bt->off[c], bt->off[c + 1] - bt->off[c],
				rows, scratch);
	if (rc == 0)
		rc = idx_settle(txn, t);
	if (rc == 0)
		rc = px_meta_put_u64(st, txn, "next_rowid", row0 + ins->n_rows);
	if (rc == 0) {
		rc = mdb_txn_commit(txn);
		txn = NULL;
	}
	if (rc != 0)
		goto fail;
	free(rows);
	free(scratch);
	/* durable: mirror it in memory */
	for (uint64_t b = 0; b < nb; b++) {
		uint64_t id = a->first + b;
		const uint64_t *bits = a->bits + b * st->g.words;
		uint16_t occ = 0;

		st->version[id] = 1;
		memcpy(st->tag + id * CRY_TAG_BYTES, a->tags + b * CRY_TAG_BYTES, CRY_TAG_BYTES);
		pa_touch(&st->pa, id);
		memcpy(st->bits + id * st->g.words, bits, st->g.words * sizeof(uint64_t));
		for (size_t x = 0; x < st->g.words; x++)
			occ = (uint16_t)(occ + __builtin_popcountll(bits[x]));
		st->occ[id] = occ;
		st->locked[id] = 0;
		st->used_slots += occ;
	}
	st->nblocks = a->first + nb;
	st->next_rowid = row0 + ins->n_rows;
	t->nrows += ins->n_rows;
	s->count = ins->n_rows;
	atomic_fetch_add(&st->inserts_placed, ins->n_rows);
	atomic_fetch_add(&st->inserts_bulk, ins->n_rows);
	return LWC_OK;
fail:
	if (txn)
		mdb_txn_abort(txn);
	free(rows);
	free(scratch);
	{
		const char *why;
		int code = px_mdb_err(st, rc, &why);
		return stmt_fail(s, code, "proxy state: %s", why);
	}
}

/* The sealing and WRITEs of a bulk INSERT's new blocks, on a thread of
 * their own while the statement's worker sorts its index entries. */
struct bulk_writer {
	struct px_worker *w;
	struct bulk_arg *a;
	uint64_t nb;
	size_t batch;
	int rc;
	int sealing;                   /* the failure was sealing, not the WRITE */
	char err[512];
};

static void *bulk_write(void *p)
{
	struct bulk_writer *bw = p;

	for (uint64_t done = 0; done < bw->nb && bw->rc == LWC_OK; done += bw->batch) {
		size_t cnt = bw->nb - done < bw->batch ? (size_t)(bw->nb - done) : bw->batch;

		struct bulk_arg *a = bw->a;
		struct cs_wframe *wf;

		a->b0 = (size_t)done;
		a->rnd = rnd_draw(cnt);
		wf = cs_wframe_new_run(cnt, a->first + done, 1, a->st->g.sealed_bytes, a->dst);
		if (wf == NULL || a->rnd == NULL) {
			rnd_free((uint8_t *)a->rnd, cnt);
			a->rnd = NULL;
			cs_wframe_free(wf);
			bw->rc = LWC_ERR_NOMEM;
			break;
		}
		bw->rc = par_for(cnt, bulk_block, a, bw->w->scratch, NULL);
		rnd_free((uint8_t *)a->rnd, cnt);
		a->rnd = NULL;
		if (bw->rc != LWC_OK) {
			bw->sealing = 1;
			cs_wframe_free(wf);
			break;
		}
		bw->rc = cloud_write(bw->w, wf, cnt, bw->err, sizeof(bw->err));
		cs_wframe_free(wf);
	}
	return NULL;
}

/* A bulk INSERT's work before its commit: its blocks, sealed and written,
 * and its index entries, sorted. */
struct bulk_job {
	struct bulk_arg a;
	uint64_t nb;
	size_t batch;
	struct bulk_toks bt;
	int rc;                        /* LWC_OK, or the error ... */
	char msg[600];                 /* ... and the statement's message */
};

static size_t bulk_batch(const struct px_worker *w, uint64_t nb)
{
	size_t batch = w->cfg->batch_blocks ? w->cfg->batch_blocks : 1024;

	return batch > nb ? (size_t)nb : batch;
}

static int bulk_job_init(struct bulk_job *j, const struct px_worker *w, const Lwc__Insert *ins)
{
	const struct px_geom *g = &w->st->g;

	memset(j, 0, sizeof(*j));
	j->a.st = w->st;
	j->a.ins = ins;
	j->a.per = px_fill_limit(w->st);
	j->nb = (ins->n_rows + j->a.per - 1) / j->a.per;
	j->batch = bulk_batch(w, j->nb);
	j->a.plain = malloc(j->batch * g->block_bytes);
	j->a.dst = malloc(j->batch * sizeof(*j->a.dst));
	j->a.tags = malloc(j->nb * CRY_TAG_BYTES);
	j->a.bits = calloc(j->nb * g->words, sizeof(uint64_t));
	j->a.locs = malloc(ins->n_rows * sizeof(uint64_t));
	if (!j->a.plain || !j->a.dst || !j->a.tags || !j->a.bits || !j->a.locs) {
		j->rc = LWC_ERR_NOMEM;
		snprintf(j->msg, sizeof(j->msg), "out of memory");
		return LWC_ERR_NOMEM;
	}
	return LWC_OK;
}

/* The buffers a commit does not need. */
static void bulk_job_trim(struct bulk_job *j)
{
	if (j->a.plain)
		sodium_memzero(j->a.plain, j->batch * j->a.st->g.block_bytes);
	free(j->a.plain);
	free(j->a.dst);
	j->a.plain = NULL;
	j->a.dst = NULL;
}

static void bulk_job_free(struct bulk_job *j)
{
	bulk_job_trim(j);
	bulk_toks_free(&j->bt);
	free(j->a.tags);
	free(j->a.bits);
	free(j->a.locs);
	j->a.tags = NULL;
	j->a.bits = NULL;
	j->a.locs = NULL;
}

/* Blocks first .. first + nb of j: sealed and written on a thread (and the
 * block pool) while this one sorts the index entries (w: the cloud
 * connection and scratch to use). */
static void bulk_job_run(struct bulk_job *j, struct px_worker *w, uint64_t first)
{
	struct bulk_writer bw;
	pthread_t th;
	int sorted, threaded;

	memset(&bw, 0, sizeof(bw));
	j->a.first = first;
	bw.w = w;
	bw.a = &j->a;
	bw.nb = j->nb;
	bw.batch = j->batch;
	threaded = pthread_create(&th, NULL, bulk_write, &bw) == 0;
	if (!threaded)
		bulk_write(&bw);
	sorted = bulk_sort(&j->bt, j->a.ins, (uint32_t)j->a.ins->rows[0]->n_tokens);
	if (threaded)
		pthread_join(th, NULL);
	if ((j->rc = bw.rc) != LWC_OK) {
		if (bw.sealing)
			snprintf(j->msg, sizeof(j->msg), "sealing a new block failed");
		else if (j->rc == LWC_ERR_NOMEM && bw.err[0] == '\0')
			snprintf(j->msg, sizeof(j->msg), "out of memory");
		else
			snprintf(j->msg, sizeof(j->msg), "cloud store WRITE failed: %s",
				 bw.err[0] ? bw.err : lwc_strerror(j->rc));
	} else if (sorted != LWC_OK) {
		j->rc = LWC_ERR_NOMEM;
		snprintf(j->msg, sizeof(j->msg), "out of memory");
	}
	bulk_job_trim(j);
}

/* What bulk_ahead made for a request. */
struct bulk_pre {
	const Lwc__ProxyRequest *req;
	struct bulk_job j;
};

static void bulk_pre_free(struct bulk_pre *pre)
{
	if (pre == NULL)
		return;
	bulk_job_free(&pre->j);
	free(pre);
}

/* The statement's new blocks are held up to end: the connection's next
 * request may take the ids after them (bulk_ahead). */
static void pipe_open(struct px_worker *w, uint64_t end)
{
	pthread_mutex_lock(&w->pipe_mu);
	w->grow_state = 1;
	w->grow_end = end;
	pthread_cond_broadcast(&w->pipe_cv);
	pthread_mutex_unlock(&w->pipe_mu);
}

/* No more: whether the next request took the ids after them (then the
 * growth passes to it, st->growing stays set). */
static int pipe_close(struct px_worker *w)
{
	int handed;

	pthread_mutex_lock(&w->pipe_mu);
	w->grow_state = 2;
	handed = w->grow_handed;
	pthread_cond_broadcast(&w->pipe_cv);
	pthread_mutex_unlock(&w->pipe_mu);
	return handed;
}

void px_pipe_begin(struct px_worker *w)
{
	pthread_mutex_lock(&w->pipe_mu);
	w->grow_state = 0;
	w->grow_handed = 0;
	w->stmt_over = 0;
	pthread_mutex_unlock(&w->pipe_mu);
}

void px_pipe_end(struct px_worker *w)
{
	pthread_mutex_lock(&w->pipe_mu);
	w->stmt_over = 1;
	pthread_cond_broadcast(&w->pipe_cv);
	pthread_mutex_unlock(&w->pipe_mu);
}

int bulk_insert(struct px_worker *w, struct stmt *s)
{
	struct px_state *st = w->st;
	const Lwc__Insert *ins = s->req->insert;
	struct bulk_pre *pre = NULL;
	struct bulk_job own, *j = &own;
	int rc = LWC_OK, handed;

	pthread_mutex_lock(&w->pipe_mu);
	if (w->pre != NULL && w->pre->req == s->req) {
		pre = w->pre;
		w->pre = NULL;
	}
	pthread_mutex_unlock(&w->pipe_mu);

	if (pre != NULL) {
		/* made ahead: the growth was passed on by the statement before,
		 * which committed, so its ids start at nblocks */
		j = &pre->j;
		pthread_mutex_lock(&st->mu);
		if (!st->growing || j->a.first != st->nblocks) {
			log_error("a pipelined INSERT's blocks (from %llu) do not follow the "
				  "database (%llu blocks)", (unsigned long long)j->a.first,
				  (unsigned long long)st->nblocks);
			st->growing = 0;
			pthread_cond_broadcast(&st->cv);
			pthread_mutex_unlock(&st->mu);
			pipe_close(w);
			rc = stmt_fail(s, LWC_ERR_ABORTED, "blocks made ahead do not follow the "
				       "database; run the statement again");
			goto out;
		}
		if (px_blocks_reserve(st, j->a.first + j->nb) != LWC_OK && j->rc == LWC_OK) {
			j->rc = LWC_ERR_NOMEM;
			snprintf(j->msg, sizeof(j->msg), "out of memory");
		}
		pthread_mutex_unlock(&st->mu);
	} else {
		uint64_t first;

		if (bulk_job_init(j, w, ins) != LWC_OK) {
			rc = stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
			goto out;
		}
		/* the new ids, beyond nblocks, are this statement's until it
		 * commits: growth is one at a time (st->growing), as for px_grow */
		pthread_mutex_lock(&st->mu);
		while (st->growing) {
			atomic_store(&st->grow_wanted, 1);
			pthread_cond_wait(&st->cv, &st->mu);
		}
		atomic_store(&st->grow_wanted, 0);
		first = st->nblocks;
		if ((rc = px_blocks_reserve(st, first + j->nb)) != LWC_OK) {
			pthread_mutex_unlock(&st->mu);
			stmt_fail(s, rc, "out of memory");
			goto out;
		}
		st->growing = 1;
		pthread_mutex_unlock(&st->mu);
		j->a.first = first;
	}
	/* from here the next request may take the ids after these */
	pipe_open(w, j->a.first + j->nb);
	if (pre == NULL)
		bulk_job_run(j, w, j->a.first);
	if (j->rc != LWC_OK)
		rc = stmt_fail(s, j->rc, "%s", j->msg);

	pthread_mutex_lock(&st->mu);
	if (rc == LWC_OK)
		rc = bulk_commit(w, s, &j->a, j->nb, &j->bt);
	handed = pipe_close(w);
	if (!handed)
		st->growing = 0;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
	if (rc == LWC_OK && pre != NULL)
		atomic_fetch_add(&st->made_ahead, 1);
	if (rc == LWC_OK)
		log_debug("bulk INSERT of %zu rows into %llu new blocks from %llu%s", ins->n_rows,
			  (unsigned long long)j->nb, (unsigned long long)j->a.first,
			  pre ? " (made ahead)" : "");
out:
	if (pre != NULL)
		bulk_pre_free(pre);
	else
		bulk_job_free(j);
	return rc;
}

/* Whether req is an INSERT that goes to fresh blocks (plan_insert's
 * choice, from what the request alone says) with well-formed rows. */
static int ahead_eligible(const struct px_state *st, const Lwc__ProxyRequest *req, uint64_t seq)
{
	const Lwc__Insert *ins = req->insert;
	size_t ntok;

	if (req->op_case != LWC__PROXY_REQUEST__OP_INSERT || ins == NULL || seq == 0 ||
	    req->after_seq != seq)
		return 0;
	if (ins->n_rows < (size_t)px_fill_limit(st) * PX_BULK_BLOCKS ||
	    (st->relocate && ins->n_rows <= st->relocate_max))
		return 0;
	if (ins->rows[0] == NULL || (ntok = ins->rows[0]->n_tokens) == 0 || ntok > PX_MAX_TOKENS)
		return 0;
	for (size_t i = 0; i < ins->n_rows; i++) {
		const Lwc__Row *r = ins->rows[i];

		if (r == NULL || r->record.len != st->g.S || r->n_tokens != ntok)
			return 0;
		for (size_t c = 0; c < ntok; c++)
			if (r->tokens[c].len != CRY_TOKEN_BYTES)
				return 0;
	}
	return 1;
}

void bulk_ahead(struct px_worker *w, const Lwc__ProxyRequest *req, uint64_t seq)
{
	struct px_state *st = w->st;
	struct bulk_pre *pre;
	struct px_worker pw;
	uint64_t first;
	char name[80];

	if (!ahead_eligible(st, req, seq) || atomic_load(&st->grow_wanted) ||
	    (pre = calloc(1, sizeof(*pre))) == NULL)
		return;
	/* the statement running now: once it holds its new blocks, the ids
	 * after them (while it has not ended) */
	pthread_mutex_lock(&w->pipe_mu);
	while (w->grow_state == 0 && !w->stmt_over)
		pthread_cond_wait(&w->pipe_cv, &w->pipe_mu);
	if (w->grow_state != 1 || w->pre != NULL || atomic_load(&st->grow_wanted)) {
		pthread_mutex_unlock(&w->pipe_mu);
		free(pre);
		return;
	}
	first = w->grow_end;
	w->grow_handed = 1;
	pthread_mutex_unlock(&w->pipe_mu);

	/* from here the growth is req's: made (or failed) and kept in
	 * w->pre, which bulk_insert takes or bulk_drop lets go */
	pre->req = req;
	snprintf(name, sizeof(name), "%s ahead", w->name);
	memset(&pw, 0, sizeof(pw));
	if (bulk_job_init(&pre->j, w, req->insert) == LWC_OK &&
	    px_worker_init(&pw, st, w->cfg, name) == LWC_OK) {
		bulk_job_run(&pre->j, &pw, first);
	} else {
		pre->j.a.first = first;
		pre->j.rc = LWC_ERR_NOMEM;
		snprintf(pre->j.msg, sizeof(pre->j.msg), "out of memory");
		bulk_job_trim(&pre->j);
	}
	if (pw.st != NULL)
		px_worker_drop(&pw);
	pthread_mutex_lock(&w->pipe_mu);
	w->pre = pre;
	pthread_mutex_unlock(&w->pipe_mu);
}

void bulk_drop(struct px_worker *w, const Lwc__ProxyRequest *req)
{
	struct px_state *st = w->st;
	struct bulk_pre *pre = NULL;

	pthread_mutex_lock(&w->pipe_mu);
	if (w->pre != NULL && (req == NULL || w->pre->req == req)) {
		pre = w->pre;
		w->pre = NULL;
	}
	pthread_mutex_unlock(&w->pipe_mu);
	if (pre == NULL)
		return;
	/* its blocks stay beyond nblocks, as a failed load's */
	pthread_mutex_lock(&st->mu);
	st->growing = 0;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
	log_debug("a pipelined INSERT made ahead (blocks from %llu) was not run",
		  (unsigned long long)pre->j.a.first);
	bulk_pre_free(pre);
}

static int cmp_u64v(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The rows dels[0..n) of t (row ids, sorted here) leave the indexes, the
 * rows and positions databases, and the stash database (st->mu held). */
int delete_rows(struct px_state *st, MDB_txn *txn, struct px_table *t, uint64_t *dels,
		size_t n)
{
	size_t nc = t->ntok;
	uint8_t *toks = NULL;
	struct tokrow *tr = NULL;
	MDB_cursor *cur = NULL;
	int rc = 0;

	if (n == 0)
		return 0;
	qsort(dels, n, sizeof(*dels), cmp_u64v);
	toks = malloc(n * nc * CRY_TOKEN_BYTES);
	tr = malloc(n * sizeof(*tr));
	if (toks == NULL || tr == NULL) {
		rc = ENOMEM;
		goto out;
	}
	/* the old tokens, then the rows (in key order: row ids), each found
	 * once by a cursor and deleted there; positions and stash entries go
	 * to the journal */
	if ((rc = mdb_cursor_open(txn, t->rows, &cur)) != 0)
		goto out;
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint8_t key[8];
		MDB_val k = { 8, key }, d;

		cry_put_be64(key, dels[i]);
		if ((rc = mdb_cursor_get(cur, &k, &d, MDB_SET_KEY)) != 0)
			break;
		if (d.mv_size != nc * CRY_TOKEN_BYTES) {
			rc = MDB_CORRUPTED;
			break;
		}
		memcpy(toks + i * nc * CRY_TOKEN_BYTES, d.mv_data, nc * CRY_TOKEN_BYTES);
		if ((rc = mdb_cursor_del(cur, 0)) != 0 || (rc = jr_pos_del(st, dels[i])) != 0)
			break;
		if (stash_find(st, dels[i]) != NULL)
			rc = jr_stash_del(st, dels[i]);
	}
	mdb_cursor_close(cur);
	cur = NULL;
	/* each column's entries in token order; a value all of whose rows go
	 * loses its whole duplicate list in one delete */
	for (size_t c = 0; c < nc && rc == 0; c++) {
		struct idx_cur ic;
		size_t m = 0;

		for (size_t i = 0; i < n; i++) {
			if (px_tok_none(t, (uint32_t)c, toks + (i * nc + c) * CRY_TOKEN_BYTES))
				continue;
			tr[m].tok = toks + (i * nc + c) * CRY_TOKEN_BYTES;
			tr[m].row = dels[i];
			m++;
		}
		tokrow_sort(tr, m);
		if ((rc = idx_open(&ic, txn, t, t->tcol[c], m)) != 0)
			break;
		for (size_t i = 0; i < m && rc == 0;) {
			size_t j = i + 1;

			while (j < m && tokrow_same(&tr[j], &tr[i]))
				j++;
			rc = idx_remove_group(&ic, tr + i, j - i);
			i = j;
		}
		idx_close(&ic);
	}
out:
	if (cur)
		mdb_cursor_close(cur);
	free(toks);
	free(tr);
	return rc;
}

static int cmp_upd_row(const void *x, const void *y)
{
	const struct upd *a = x, *b = y;

	return a->row < b->row ? -1 : a->row > b->row;
}

/* Token c of the rows of upds[0..n) that changed (changed[i * ntok + c])
 * and are a token (not NULL's 'no token'), with their rows, into tr in
 * token order: the old tokens from olds (ntok per row, in upds' order), or
 * the new ones of upds when olds is NULL.  Returns how many. */
static size_t changed_tokens(const struct px_table *t, const struct upd *upds, size_t n,
			     const uint8_t *olds, const uint8_t *changed, size_t c,
			     struct tokrow *tr)
{
	size_t nc = t->ntok, m = 0;

	for (size_t i = 0; i < n; i++) {
		const uint8_t *tok = olds ? olds + (i * nc + c) * CRY_TOKEN_BYTES
				     : upds[i].tokens + c * CRY_TOKEN_BYTES;

		if (changed[i * nc + c] && !px_tok_none(t, (uint32_t)c, tok)) {
			tr[m].tok = tok;
			tr[m].row = upds[i].row;
			m++;
		}
	}
	tokrow_sort(tr, m);
	return m;
}

/* An UPDATE's commit of the index entries and rows of upds[0..n): the rows
 * in row-id order, then column by column the old entries deleted and the
 * new ones put, each in token order (st->mu held; upds sorted here). */
int update_rows(struct px_state *st, MDB_txn *txn, struct px_table *t, struct upd *upds,
		size_t n)
{
	size_t nc = t->ntok;
	uint8_t *olds = NULL;
	uint8_t *changed = NULL;           /* [n * nc]: token c of row i changed */
	struct tokrow *tr = NULL;
	int rc = 0;

	(void)st;
	if (n == 0)
		return 0;
	qsort(upds, n, sizeof(*upds), cmp_upd_row);
	olds = malloc(n * nc * CRY_TOKEN_BYTES);
	changed = calloc(n, nc);
	tr = malloc(n * sizeof(*tr));
	if (olds == NULL || changed == NULL || tr == NULL) {
		rc = ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint8_t key[8];
		MDB_val k = { 8, key }, d;

		cry_put_be64(key, upds[i].row);
		if ((rc = mdb_get(txn, t->rows, &k, &d)) != 0)
			break;
		if (d.mv_size != nc * CRY_TOKEN_BYTES) {
			rc = MDB_CORRUPTED;
			break;
		}
		memcpy(olds + i * nc * CRY_TOKEN_BYTES, d.mv_data, nc * CRY_TOKEN_BYTES);
		for (size_t c = 0; c < nc; c++)
			if (memcmp(olds + (i * nc + c) * CRY_TOKEN_BYTES,
				   upds[i].tokens + c * CRY_TOKEN_BYTES, CRY_TOKEN_BYTES) != 0)
				changed[i * nc + c] = 1;
		d.mv_size = nc * CRY_TOKEN_BYTES;
		d.mv_data = upds[i].tokens;
		rc = mdb_put(txn, t->rows, &k, &d, 0);
	}
	for (size_t c = 0; c < nc && rc == 0; c++) {
		struct idx_cur ic;
		size_t m, any = 0;

		for (size_t i = 0; i < n; i++)
			any += changed[i * nc + c];
		if (any == 0)
			continue;
		m = changed_tokens(t, upds, n, olds, changed, c, tr);
		if ((rc = idx_open(&ic, txn, t, t->tcol[c], m)) != 0)
			break;
		for (size_t i = 0; i < m && rc == 0; i++)
			rc = idx_remove(&ic, tr[i].tok, tr[i].row);
		m = rc == 0 ? changed_tokens(t, upds, n, NULL, changed, c, tr) : 0;
		for (size_t i = 0; i < m && rc == 0; i++)
			rc = idx_add(&ic, tr[i].tok, tr[i].row, 0);
		idx_close(&ic);
	}
out:
	free(olds);
	free(changed);
	free(tr);
	return rc;
}
