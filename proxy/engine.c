/*
 * engine.c - see engine.h: a statement from its request to its answer
 * (px_execute): planned (plan.c), its access (access.c), committed
 * (commit.c).  The rest of the engine is in cloud_io.c, bulk.c,
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
	free(s->mmate);
	free(s->lmate);
	free(s->ev);
	free(s->evrec);
	stash_held_free(&s->held);
	locset_free(&s->dels);
	for (size_t i = 0; i < s->nupds; i++)
		free(s->upds[i].tokens);
	free(s->upds);
	free(s->tids);
	free(s->tbits);
	access_free(s);
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

/*
 * With serve --answer-early on, a SELECT is answered as soon as its last
 * row is out, before its WRITE is acknowledged and before the proxy's
 * commit: what it read was committed before it began, and what is left to
 * make durable (the blocks written back, the rows it moved) is the proxy's
 * bookkeeping, which a crash or a failed WRITE leaves as it was (the store
 * keeps the version the proxy committed).  What the cloud sees is
 * unchanged: the WRITE goes out, on the same connection, at the same point
 * of the statement.  The connection's next request is read once the
 * statement has committed, as before.  But the answer's work then runs
 * beside the store's WRITE, which sets SELECTs apart in the times the cloud
 * sees (threat-model.md, "Timing").
 * With durable, the answer waits for every WRITE's acknowledgement and goes
 * out before the proxy's own commit: nothing of the statement runs beside
 * the store's work that does not for every type.
 * With off, a SELECT answers after the commit, as every other statement.
 */
const char *const px_answer_names[PX_ANSWER_N] = { "off", "durable", "on" };

int stmt_answer(const struct px_worker *w, struct stmt *s, struct px_io *io)
{
	int rc;

	if (s->answered || s->kind != ST_SELECT || w->cfg->answer_early == PX_ANSWER_OFF)
		return LWC_OK;
	if ((rc = send_done(io, s->req->seq, s->count)) == LWC_OK)
		s->answered = 1;
	return rc;
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

/* ---- the end of a statement, under st->mu: its commit, what it held ---------- */

static int stmt_ok(const struct stmt *s, int rc, int io_err)
{
	return rc == LWC_OK && io_err == LWC_OK && !s->aborted && s->err == LWC_OK;
}

/* A statement's end (st->mu held): its commit, unless it was committed in a
 * group (committed), or what a failure leaves; its blocks, stash rows and
 * table let go; the counters.  Returns the statement's result. */
static int stmt_end(struct px_worker *w, struct stmt *s, int rc, int io_err, int committed)
{
	struct px_state *st = w->st;

	if (!committed && stmt_ok(s, rc, io_err)) {
		uint64_t t0 = px_now_us();

		if (!s->bulk)
			rc = commit_stmt(w, s);
		atomic_fetch_add(&st->commit_us, px_now_us() - t0);
		atomic_fetch_add(&st->commits, 1);
		s->blocks_done = 0;         /* (new records may be in place by now) */
	} else if (!committed && rc == LWC_OK) {
		rc = s->err != LWC_OK ? s->err : LWC_ERR_ABORTED;
	}
	if (rc != LWC_OK && s->blocks_done && s->relocating)
		commit_moves_only(w, s);
	else if (rc != LWC_OK)
		commit_clean(st, s);
	unlock_blocks(st, s);
	pending_drop(st, s->owner);
	stash_release(st, &s->held, s->owner);
	st->stash_reserved -= s->reserved;
	s->reserved = 0;
	if (rc == LWC_OK && st->relocate && !s->relocating && s->locs.n > 0 &&
	    (s->kind == ST_SELECT || s->kind == ST_UPDATE || (s->kind == ST_DELETE && s->interactive)))
		atomic_fetch_add(s->locs.n > st->relocate_max ? &st->over_relocate_max
				 : &st->stash_full, 1);
	stmt_release_table(st, s);
	atomic_fetch_add(&st->stmts, 1);
	if (rc != LWC_OK)
		atomic_fetch_add(&st->stmt_errors, 1);
	return rc;
}

/*
 * Group commit.  Each statement's commit is a durable LMDB transaction made
 * under st->mu; under 64 clients (groups of 8) those commits and the plans
 * queued behind them kept the state lock held 87-93 % of the time, and a
 * statement waited 20-55 ms for it before its plan and again before its
 * commit (docs/benchmarks.md, "Group commit, and what holds 64 clients").  So a SELECT that
 * ran without error joins a queue to commit, and the first to find no
 * leader leads: it takes st->mu and the queue as it stands then (the
 * SELECTs that arrived while it waited for the lock), commits them as one
 * transaction (commit.c commit_group), ends each and wakes them; a
 * statement whose leader's batch did not include it waits for the next.
 * A SELECT alone commits as before.  Nothing changes in what is durable
 * when: a SELECT's answer went out before its commit (answer-early) or
 * goes out after it (off), and its connection's next request is read after
 * it either way.  Other statements commit one by one: they can fail alone
 * (a unique value, a table that exists) and write beside the journal.
 */
#define GC_MAX 64

struct gc_member {
	struct px_worker *w;
	struct stmt *s;
	int rc, done;
	struct gc_member *next;
};

/* One batch of the queue committed and ended (st->mu held). */
static void commit_batch(struct px_state *st, struct gc_member *const *m,
			 struct stmt *const *v, size_t n)
{
	uint64_t t0 = px_now_us();
	int grouped = n > 1 && commit_group(st, v, n) == 0;

	if (grouped) {
		atomic_fetch_add(&st->commit_us, px_now_us() - t0);
		atomic_fetch_add(&st->commits, n);
		atomic_fetch_add(&st->group_commits, 1);
		atomic_fetch_add(&st->grouped, n);
	}
	/* not grouped (alone, or the group's transaction failed): one by one */
	for (size_t i = 0; i < n; i++) {
		if (grouped)
			v[i]->blocks_done = 0;
		m[i]->rc = stmt_end(m[i]->w, v[i], LWC_OK, LWC_OK, grouped);
	}
}

static int commit_selects(struct px_worker *w, struct stmt *s)
{
	struct px_state *st = w->st;
	struct gc_member me = { .w = w, .s = s, .rc = LWC_OK };

	pthread_mutex_lock(&st->gc_mu);
	if (st->gc_tail)
		st->gc_tail->next = &me;
	else
		st->gc_head = &me;
	st->gc_tail = &me;
	while (!me.done && st->gc_leader)
		pthread_cond_wait(&st->gc_cv, &st->gc_mu);
	if (me.done) {
		pthread_mutex_unlock(&st->gc_mu);
		return me.rc;
	}
	st->gc_leader = 1;
	pthread_mutex_unlock(&st->gc_mu);

	pthread_mutex_lock(&st->mu);
	while (!me.done) {              /* set by this thread only */
		struct gc_member *m[GC_MAX];
		struct stmt *v[GC_MAX];
		size_t n = 0;

		pthread_mutex_lock(&st->gc_mu);
		for (; st->gc_head != NULL && n < GC_MAX; n++) {
			m[n] = st->gc_head;
			v[n] = m[n]->s;
			st->gc_head = m[n]->next;
		}
		if (st->gc_head == NULL)
			st->gc_tail = NULL;
		pthread_mutex_unlock(&st->gc_mu);
		commit_batch(st, m, v, n);
		pthread_mutex_lock(&st->gc_mu);
		for (size_t i = 0; i < n; i++)
			m[i]->done = 1;         /* m[i] may be gone once gc_mu is let go */
		pthread_cond_broadcast(&st->gc_cv);
		pthread_mutex_unlock(&st->gc_mu);
	}
	pthread_mutex_unlock(&st->mu);
	pthread_mutex_lock(&st->gc_mu);
	st->gc_leader = 0;
	pthread_cond_broadcast(&st->gc_cv);
	pthread_mutex_unlock(&st->gc_mu);
	return me.rc;
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
	rc = plan_stmt(w, &s);
	if (rc == LWC_OK && s.bulk)
		rc = bulk_insert(w, &s);
	else
		bulk_drop(w, req);         /* made ahead for nothing (bulk.c) */
	if (s.gamma > 0) {
		int ioe = LWC_OK, arc;

		/* the first READ, no sooner than the connection's pace allows */
		px_pace_wait(io->pace);
		arc = run_access(w, &s, io, &ioe);
		px_pace_done(io->pace, (int)s.kind, s.gamma, s.access_end_us);
		if (rc == LWC_OK)
			rc = arc;
		io_err = ioe;
	}
	cloud_release(w);
	/* a SELECT whose rows are out does not wait for the commit (stmt_answer) */
	if (rc == LWC_OK && io_err == LWC_OK && !s.aborted && s.err == LWC_OK)
		io_err = stmt_answer(w, &s, io);

	if (s.kind == ST_SELECT && !s.bulk && s.ntids == 0 && stmt_ok(&s, rc, io_err)) {
		rc = commit_selects(w, &s);
	} else {
		pthread_mutex_lock(&st->mu);
		rc = stmt_end(w, &s, rc, io_err, 0);
		pthread_mutex_unlock(&st->mu);
	}

	if (io_err != LWC_OK) {
		stmt_free(&s);
		return io_err;
	}
	if (s.answered) {
		/* the user has the rows and the Done already */
		if (rc != LWC_OK || s.err != LWC_OK)
			plog_info(w->name, "a SELECT, answered already, failed afterwards: %s",
				  s.msg[0] ? s.msg : lwc_strerror(s.err != LWC_OK ? s.err : rc));
		else
			plog_debug(w->name, "%s: k=%zu gamma=%zu count=%llu", kind_name[s.kind],
				   s.nreal, s.gamma, (unsigned long long)s.count);
		rc = LWC_OK;
	} else if (rc != LWC_OK || s.err != LWC_OK) {
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
