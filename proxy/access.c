/*
 * access.c - the oblivious access of a planned statement: the READ of its
 * blocks in batches (READ ahead, WRITE behind), each block opened, acted
 * on, refilled, re-permuted and sealed on the block pool, the WRITE; rows
 * and candidates to the user, decisions back (engine_int.h).
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
	uint8_t *plain;
	uint8_t **dst;                 /* where block i is sealed: its WRITE's frame */
	const uint8_t *rnd;            /* PX_BLOCK_RND bytes per block */
};

static int seal_one(void *p, size_t i, uint32_t *scratch)
{
	const struct seal_arg *a = p;
	const struct px_geom *g = &a->st->g;
	uint8_t *blk = a->plain + i * g->block_bytes;
	uint8_t *out = a->dst[i];
	int rc;

	fill_empty(a->st, blk, a->s->bits + a->idx[i] * g->words, scratch,
		   a->rnd + i * PX_BLOCK_RND);
	if ((rc = seal_block(a->st, scratch, a->ids[i], a->vers[i] + 1, blk, out,
			     a->rnd + i * PX_BLOCK_RND)) != LWC_OK)
		return rc;
	memcpy(a->s->ntags + a->idx[i] * CRY_TAG_BYTES, out + g->sealed_bytes - CRY_TAG_BYTES,
	       CRY_TAG_BYTES);
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
	struct cs_wframe *wf;
	size_t n;
	const size_t *idx;
	uint8_t *marks;                /* s->written values of the batch    */
	int rc;
	char err[512];
	pthread_t th;
	int running, pending;
	int sent;                      /* sent by the worker on its own
					  connection; the acknowledgement is
					  read at the join */
};

static void *writebehind_main(void *p)
{
	struct writebehind *b = p;

	b->rc = cloud_write(&b->w, b->wf, b->n, b->err, sizeof(b->err));
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
	if (b->sent && b->rc == LWC_OK)
		b->rc = cloud_write_finish(&b->w, b->wf, b->n, b->err, sizeof(b->err));
	b->sent = 0;
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
	cs_wframe_free(b->wf);
	free(b->marks);
	b->wf = NULL;
	b->marks = NULL;
	return rc;
}

/* One batch: READ (or take pre's), open, move, seal, WRITE.  With ring the
 * WRITE goes behind, in a slot of ring; with send_own too it is the one
 * that would go inline, sent at once by this thread on the READ's
 * connection, and only its acknowledgement waits for the slot's join. */
static int access_batch(struct px_worker *w, struct stmt *s, struct px_io *io,
			const size_t *idx, size_t n, struct prefetch *pre,
			struct wbring *ring, int send_own, int *io_err)
{
	struct px_state *st = w->st;
	const struct px_geom *g = &st->g;
	uint64_t *ids = malloc(n * sizeof(uint64_t)), *vers = malloc(n * sizeof(uint64_t));
	uint8_t *plain = malloc(n * g->block_bytes);
	struct cs_wframe *wf = NULL;
	uint8_t **dst = NULL;
	uint64_t *nvers = NULL;
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
				 * or decides about it, once the blocks are written back (a
				 * SELECT's: sent) */
				if (take_out(s, g->S, s->lrow[j], rec, bits, slot,
					     s->lmate != NULL && s->lmate[j]) == NULL) {
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
	dst = malloc(n * sizeof(*dst));
	nvers = malloc(n * sizeof(*nvers));
	for (size_t i = 0; nvers && i < n; i++)
		nvers[i] = vers[i] + 1;
	if (!dst || !nvers || (wf = cs_wframe_new(n, ids, nvers, g->sealed_bytes, dst)) == NULL) {
		rc = stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
		goto out;
	}
	{
		struct seal_arg sa = { st, s, ids, vers, idx, plain, dst, rnd_draw(n) };

		if (sa.rnd == NULL) {
			rc = stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
			goto out;
		}
		(void)par_for(n, seal_one, &sa, w->scratch, rcs);
		rnd_free((uint8_t *)sa.rnd, n);
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
		wbh->wf = wf;
		wbh->n = n;
		wbh->idx = idx;
		wbh->marks = marks;
		wbh->rc = LWC_OK;
		wbh->err[0] = '\0';
		wbh->pending = 1;
		wf = NULL;
		marks = NULL;
		if (send_own) {
			/* a WRITE that goes inline, sent as it would be (by this
			 * thread, on the READ's connection, at once); only its
			 * acknowledgement waits for the join */
			wbh->w.cloud = w->cloud;
			w->cloud = NULL;
			wbh->sent = 1;
			wbh->rc = cloud_write_send(&wbh->w, wbh->wf, wbh->err, sizeof(wbh->err));
		} else if (pthread_create(&wbh->th, NULL, writebehind_main, wbh) != 0) {
			writebehind_main(wbh);      /* no thread: write now */
		} else {
			wbh->running = 1;
		}
	} else {
		if ((rc = cloud_write(w, wf, n, err, sizeof(err))) != LWC_OK) {
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
	cs_wframe_free(wf);
	free(dst);
	free(nvers);
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

size_t access_batch_size(size_t gamma, size_t max, uint32_t rtt_us)
{
	size_t b = (gamma + PX_PIPE_BATCHES - 1) / PX_PIPE_BATCHES;

	if (rtt_us > PX_PIPE_RTT_US)
		return max;
	if (b < PX_PIPE_MIN_BLOCKS)
		b = PX_PIPE_MIN_BLOCKS;
	return b < max ? b : max;
}

int run_access(struct px_worker *w, struct stmt *s, struct px_io *io, int *io_err)
{
	size_t max = w->cfg->batch_blocks ? w->cfg->batch_blocks : 1024;
	size_t batch = access_batch_size(s->gamma, max, atomic_load_explicit(&w->st->cloud_rtt_us,
									    memory_order_relaxed));
	size_t nb, *order;
	struct prefetch pre[2];
	struct wbring ring;
	int rc = LWC_OK, wrc = LWC_OK, have_pre = 0, cur = 0, nxt = 0, accessed = 0;
	/* with serve --answer-early on, a SELECT's answer too goes out while
	 * its last WRITE is in flight (stmt_answer) */
	int overlap = s->kind == ST_SELECT && w->cfg->answer_early == PX_ANSWER_ON;
	/* a SELECT sends the rows it moved or found in the stash while its
	 * last WRITE is in flight, whatever the mode (the Done waits as the
	 * mode says): the cloud sees the WRITE go out at the same point, and
	 * the user's client opens the rows beside the store's durable write
	 * instead of after it (rows left in place went out with their batch) */
	int early_rows = overlap || (s->kind == ST_SELECT && !s->interactive);

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
		struct cry_draws d = CRY_DRAWS_INIT;

		for (size_t i = s->gamma - 1; i > 0; i--) {
			size_t j = cry_draw(&d, (uint32_t)(i + 1));
			size_t t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		cry_draws_wipe(&d);
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
		{
			int behind = nb > 1 && w->cfg->read_ahead;
			/* the WRITE it makes inline, left in flight */
			int own = early_rows && b + 1 == nb && !behind;

			rc = access_batch(w, s, io, order + lo, hi - lo, ahead ? &pre[cur] : NULL,
					  behind || own ? &ring : NULL, own, io_err);
		}
		if (*io_err != LWC_OK)
			break;
	}
	/* the rows of a SELECT (and with --answer-early on its answer), its
	 * last WRITE still in flight: the cloud has seen the WRITE go out, as
	 * it would have */
	if (early_rows && rc == LWC_OK && !s->aborted && *io_err == LWC_OK && s->err == LWC_OK) {
		accessed = 1;
		rc = deliver_rows(w, s, io, io_err);
		if (overlap && rc == LWC_OK && *io_err == LWC_OK)
			*io_err = stmt_answer(w, s, io);
	}
	/* every WRITE behind is done before the statement commits */
	{
		for (unsigned i = 0; i < WB_DEPTH; i++) {
			int r = writebehind_join(s, &ring.slot[(ring.next + i) % WB_DEPTH]);

			if (wrc == LWC_OK)
				wrc = r;
		}

		if (rc == LWC_OK)
			rc = wrc;
	}
	/* what follows (rows, decisions on moved rows) is the statement's own
	 * time, which the connection's pace covers */
	s->access_end_us = px_now_us();
	if (have_pre) {
		/* the statement stopped early: the READ ahead is not used */
		int prc;
		char perr[512];
		Lwc__CsResponse *r = prefetch_join(&pre[nxt], &prc, perr, sizeof(perr), NULL, NULL);

		if (r)
			cs_client_free_resp(r);
	}
	free(order);
	if (early_rows) {
		/* every block went back: what failed in the delivery (the user's
		 * connection) commits the moves, as below */
		if (accessed && wrc == LWC_OK)
			s->blocks_done = 1;
	} else if (rc == LWC_OK && !s->aborted && *io_err == LWC_OK) {
		s->blocks_done = 1;
		rc = deliver_rows(w, s, io, io_err);
	}
	return rc;
}
