/*
 * it_proxy.c - the proxy suite: the real lwc-proxy in front of the real
 * lwc-cloudstore on the backend named by LWC_TEST_BACKEND (tests/run.sh runs
 * it once for LMDB and once for a private PostgreSQL cluster).  The client
 * side is tests/integration/pxc.c (tokens and records under K_U, the K_DBU
 * channel).
 *
 *   test_end_to_end      tables, INSERT, SELECT (=, IN, AND, OR, NOT, IS NULL,
 *                        ALL, NONE), interactive UPDATE and DELETE, unique
 *                        keys and indexes, DROP, catalog, restart
 *   test_relocation      rows move through the stash: taken out when read,
 *                        served from it, written back into a block of a later
 *                        statement; INSERTs through it; restart; --relocate-max
 *                        (rows alone: --evict-group 1)
 *   test_relocation_groups --evict-group 16: rows read together
 *                        go back in groups, one block a group and an origin
 *                        per statement, and leave their block together
 *                        (kept across a clean stop); --evict-group 1: a
 *                        block a row
 *   test_trace_padding   READs and WRITEs (one of each per batch) of the same
 *                        gamma ids per statement; gamma per --pad; fresh
 *                        blocks each time
 *   test_no_plaintext    the raw store holds no value, token, record, name
 *   test_tamper          flipped, swapped, rolled back, lost blocks are
 *                        reported by id, never returned as data
 *   test_crash_kill9     kill -9 of the proxy at random moments, 50 times
 *   test_concurrent      32 clients, no lost update, no deadlock
 *   test_group_commit    SELECTs committed together; a kill among them
 *   test_revoke          revoking a connected user
 *   test_bad_input       malformed frames and statements
 *   test_cloud_restart   the proxy survives a cloud store restart
 *   test_cli             init / user / status / check command lines
 *   test_cluster_failover  Redis Cluster only: kill -9 of a master under a
 *                        workload, LWC_FAILOVER_ROUNDS times (default 1)
 *   test_cluster_reshard Redis Cluster only: a master added and slots moved
 *                        to it under a workload
 *
 * LWC_PX_CRASH_ROUNDS overrides the number of kill -9 rounds (default 50);
 * LWC_TEST_FILTER runs only the tests matching a pattern (cmocka's filter).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <lmdb.h>
#include <sodium.h>

#include "chan.h"
#include "cry.h"
#include "cs_client.h"
#include "harness.h"
#include "lwc.pb-c.h"
#include "net.h"
#include "pxc.h"
#include "../../cloudstore/rc_cluster.h"
#include "../../cloudstore/store.h"
#include "../../proxy/locate.h"
#include "../../proxy/stash.h"
#include "wire.h"

#define TIMEOUT   20000
#define R_BYTES   128u
#define S_BYTES   (R_BYTES + CRY_RECORD_OVERHEAD)          /* 168   */
#define M_SLOTS   64u
#define THETA     48u
#define BLOCK_BYTES (M_SLOTS * S_BYTES + CRY_SEAL_OVERHEAD)  /* 10800 */

/* ---- environment ----------------------------------------------------------- */

struct env {
	struct h_cs cs;
	struct h_px px;
	uint8_t alice[32];            /* K_DBU of user alice */
	const char *serve[16];        /* arguments of the last serve */
	uint64_t nblocks;
	struct px_locator *loc;       /* where(): kept open on the state */
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	h_cs_setup(&e->cs);
	h_cs_start(&e->cs, NULL);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	if (e->px.pid > 0) {
		int st = h_px_stop(&e->px, SIGTERM);
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			fprintf(stderr, "note: proxy did not exit 0 on SIGTERM at teardown (%d)\n", st);
			h_tail(e->px.log, 10);
		}
	}
	px_locator_close(e->loc);
	h_px_teardown(&e->px);
	h_cs_teardown(&e->cs);
	free(e);
	return 0;
}

static void set_serve(struct env *e, const char *const *args)
{
	int i = 0;

	for (; args && args[i] && i < 15; i++)
		e->serve[i] = args[i];
	e->serve[i] = NULL;
}

static void px_start(struct env *e, const char *const *args)
{
	set_serve(e, args);
	h_px_start(&e->px, e->serve);
}

static void px_restart(struct env *e)
{
	int st = h_px_stop(&e->px, SIGTERM);

	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		h_tail(e->px.log, 20);
		fail_msg("lwc-proxy did not exit 0 on SIGTERM (status %d)", st);
	}
	h_px_start(&e->px, e->serve);
}

/* init with --blocks (and --relocate when relocate is not NULL), serve with
 * args, user alice. */
static void deploy_mode(struct env *e, unsigned blocks, const char *const *serve,
			const char *relocate)
{
	char nb[32];
	const char *init[] = { "--blocks", nb, relocate ? "--relocate" : NULL, relocate, NULL };

	snprintf(nb, sizeof(nb), "%u", blocks);
	e->nblocks = blocks;
	px_locator_close(e->loc);          /* a new state */
	e->loc = NULL;
	h_px_init(&e->px, &e->cs, init);
	px_start(e, serve);
	assert_int_equal(h_px_user_add(&e->px, "alice", e->alice), 0);
}

/* The default: relocation on. */
static void deploy(struct env *e, unsigned blocks, const char *const *serve)
{
	deploy_mode(e, blocks, serve, NULL);
}

static struct pxc *conn_as(struct env *e, const char *user, const uint8_t kdbu[32])
{
	struct pxc *c = NULL;
	char err[512] = "";
	int rc = pxc_connect(&c, e->px.addr, user, kdbu, e->px.ku, err, sizeof(err));

	if (rc != LWC_OK)
		fail_msg("connect as %s: %s (%s)", user, lwc_errname(rc), err);
	return c;
}

static struct pxc *conn(struct env *e)
{
	return conn_as(e, "alice", e->alice);
}

#define OK(c, expr)                                                              \
	do {                                                                     \
		int rc_ = (expr);                                                \
		if (rc_ != LWC_OK)                                               \
			fail_msg("line %d: %s: %s (%s)", __LINE__, #expr,        \
				 lwc_errname(rc_), pxc_errmsg(c));               \
	} while (0)

#define ERR(c, code, expr)                                                       \
	do {                                                                     \
		int rc_ = (expr);                                                \
		if (rc_ != (code))                                               \
			fail_msg("line %d: %s: got %s (%s), expected %s", __LINE__, \
				 #expr, lwc_errname(rc_), pxc_errmsg(c),         \
				 lwc_errname(code));                             \
	} while (0)

/* Any proxy error (negative code with a message), the code returned. */
static int any_err(struct pxc *c, int rc, const char *what)
{
	if (rc == LWC_OK)
		fail_msg("%s: accepted, expected an error", what);
	if (!pxc_error_from_proxy(c))
		fail_msg("%s: %s (%s) instead of an error answer", what, lwc_errname(rc),
			 pxc_errmsg(c));
	if (pxc_errmsg(c)[0] == '\0')
		fail_msg("%s: error %s without a message", what, lwc_errname(rc));
	return rc;
}

/* ---- model ------------------------------------------------------------------ */

struct model {
	struct pxc_row *rows;
	size_t n, cap;
};

static void model_add(struct model *m, const struct pxc_row *r)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->rows = realloc(m->rows, m->cap * sizeof(*m->rows));
		assert_non_null(m->rows);
	}
	m->rows[m->n++] = *r;
}

static void model_del(struct model *m, size_t i)
{
	m->rows[i] = m->rows[--m->n];
}

static void model_free(struct model *m)
{
	free(m->rows);
	memset(m, 0, sizeof(*m));
}

static void model_copy(struct model *dst, const struct model *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 0; i < src->n; i++)
		model_add(dst, &src->rows[i]);
}

/* Index of the row whose column col equals v, -1 if none. */
static long model_find(const struct model *m, int col, const struct pxc_val *v)
{
	for (size_t i = 0; i < m->n; i++)
		if (pxc_val_eq(&m->rows[i].v[col], v))
			return (long)i;
	return -1;
}

/* Does a plaintext row satisfy the predicate (set semantics, as the proxy)? */
static int pred_match(const struct pxc_keys *k, const struct pxc_table *t,
		      const Lwc__Pred *p, const struct pxc_row *r)
{
	uint8_t tok[16];

	switch (p->op) {
	case LWC__PRED__OP__ALL:
		return 1;
	case LWC__PRED__OP__NONE:
		return 0;
	case LWC__PRED__OP__EQ:
	case LWC__PRED__OP__IN:
		if ((int)p->col >= t->ncols)
			return 0;
		pxc_token(k, t, (int)p->col, &r->v[p->col], tok);
		for (size_t i = 0; i < p->n_tokens; i++)
			if (p->tokens[i].len == 16 && memcmp(p->tokens[i].data, tok, 16) == 0)
				return 1;
		return 0;
	case LWC__PRED__OP__AND:
		for (size_t i = 0; i < p->n_args; i++)
			if (!pred_match(k, t, p->args[i], r))
				return 0;
		return 1;
	case LWC__PRED__OP__OR:
		for (size_t i = 0; i < p->n_args; i++)
			if (pred_match(k, t, p->args[i], r))
				return 1;
		return 0;
	case LWC__PRED__OP__NOT:
		return !pred_match(k, t, p->args[0], r);
	default:
		return 0;
	}
}

static void print_rows(const char *title, const struct pxc_row *rows, size_t n)
{
	char buf[1024];

	fprintf(stderr, "  %s (%zu):\n", title, n);
	for (size_t i = 0; i < n && i < 40; i++) {
		pxc_row_str(&rows[i], buf, sizeof(buf));
		fprintf(stderr, "    %s\n", buf);
	}
	if (n > 40)
		fprintf(stderr, "    ...\n");
}

static int rows_equal(struct pxc_row *a, size_t na, struct pxc_row *b, size_t nb)
{
	if (na != nb)
		return 0;
	pxc_rows_sort(a, na);
	pxc_rows_sort(b, nb);
	for (size_t i = 0; i < na; i++)
		if (!pxc_row_eq(&a[i], &b[i]))
			return 0;
	return 1;
}

/* SELECT where, compared with the rows of the model that satisfy where.
 * Returns the number of rows.  Takes ownership of where. */
static size_t check_select_at(int line, struct pxc *c, const struct pxc_table *t,
			      const struct model *m, Lwc__Pred *where)
{
	struct pxc_result res;
	struct model want = { 0 };
	int rc;
	size_t n;

	for (size_t i = 0; i < m->n; i++)
		if (pred_match(pxc_keys(c), t, where, &m->rows[i]))
			model_add(&want, &m->rows[i]);
	rc = pxc_select(c, t, where, 0, &res);
	if (rc != LWC_OK)
		fail_msg("line %d: SELECT on %s: %s (%s)", line, t->name, lwc_errname(rc),
			 pxc_errmsg(c));
	if (!rows_equal(res.rows, res.n, want.rows, want.n)) {
		fprintf(stderr, "line %d: SELECT on %s returned the wrong rows\n", line, t->name);
		print_rows("expected", want.rows, want.n);
		print_rows("returned", res.rows, res.n);
		fail_msg("line %d: wrong SELECT result", line);
	}
	if (res.done_count != res.n)
		fail_msg("line %d: Done.count %" PRIu64 " for %zu rows", line, res.done_count, res.n);
	n = res.n;
	pxc_result_free(&res);
	model_free(&want);
	return n;
}
#define check_select(c, t, m, where) check_select_at(__LINE__, c, t, m, where)

/* The whole table equals the model. */
#define check_table(c, t, m) check_select_at(__LINE__, c, t, m, pxc_all())

/* ---- cloud store helpers: trace, versions, raw store --------------------------- */

#define MAX_IDS H_MAX_IDS

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct cs_client *cs_conn(struct env *e)
{
	struct cs_client *cl = NULL;
	char err[256] = "";
	int rc = cs_client_connect(&cl, e->cs.addr, e->cs.key, TIMEOUT, err, sizeof(err));

	if (rc != LWC_OK)
		fail_msg("cloud store connect: %s (%s)", lwc_errname(rc), err);
	return cl;
}

/* Newest version held of blocks 0..n-1. */
static void cs_versions(struct cs_client *cl, uint64_t n, uint64_t *newest)
{
	uint64_t *ids = calloc(n ? n : 1, sizeof(*ids));
	Lwc__CsResponse *r = NULL;
	char err[256];

	assert_non_null(ids);
	for (uint64_t i = 0; i < n; i++)
		ids[i] = i;
	if (cs_client_stat(cl, ids, n, &r, err, sizeof(err)) != LWC_OK)
		fail_msg("STAT: %s", err);
	assert_int_equal(r->stat->n_held, n);
	for (uint64_t i = 0; i < n; i++) {
		Lwc__CsHeld *h = r->stat->held[i];
		newest[i] = h->n_versions ? h->versions[h->n_versions - 1] : 0;
	}
	cs_client_free_resp(r);
	free(ids);
}

/* A statement observed by the cloud: before() then after(). */
struct stmt_obs {
	struct env *e;
	struct cs_client *cl;
	uint64_t *before, *after;
	long mark;
	struct h_access a;
	uint64_t ids[MAX_IDS];          /* the gamma ids, sorted */
	size_t n;
};

static void obs_init(struct stmt_obs *o, struct env *e)
{
	memset(o, 0, sizeof(*o));
	o->e = e;
	o->cl = cs_conn(e);
	o->before = calloc(e->nblocks, sizeof(uint64_t));
	o->after = calloc(e->nblocks, sizeof(uint64_t));
}

static void obs_free(struct stmt_obs *o)
{
	cs_client_close(o->cl);
	free(o->before);
	free(o->after);
}

static void obs_begin(struct stmt_obs *o)
{
	h_px_idle(&o->e->px);             /* after the last statement's commit */
	cs_versions(o->cl, o->e->nblocks, o->before);
	o->mark = h_trace_mark(&o->e->cs);
}

/* The statement since obs_begin made as many READs and WRITEs as an access
 * of gamma blocks is cut into (one below 65 blocks), of the same gamma
 * distinct ids, including must[0..nmust); every block in the set is now one
 * version newer and differs (bytes, nonce) from the block read; no other
 * block changed. */
static void obs_end_at(int line, struct stmt_obs *o, size_t gamma, const uint64_t *must,
		       size_t nmust, const char *what)
{
	uint64_t w[MAX_IDS];

	assert_int_equal(h_trace_since(&o->e->cs, o->mark, &o->a), 0);
	if (!h_batches_ok(o->a.nread, o->a.nr, 1024) || o->a.nwrite != o->a.nread ||
	    o->a.other != 0)
		fail_msg("line %d: %s: %d READ, %d WRITE, %d other requests in the trace "
			 "(expected as many READs and WRITEs as %zu blocks are cut into)", line,
			 what, o->a.nread, o->a.nwrite, o->a.other, o->a.nr);
	if (o->a.bad[0])
		fail_msg("line %d: %s: cloud request failed: %s", line, what, o->a.bad);
	o->n = o->a.nr;
	memcpy(o->ids, o->a.r, o->n * sizeof(uint64_t));
	memcpy(w, o->a.w, o->a.nw * sizeof(uint64_t));
	qsort(o->ids, o->n, sizeof(uint64_t), cmp_u64);
	qsort(w, o->a.nw, sizeof(uint64_t), cmp_u64);
	if (o->a.nw != o->n || memcmp(w, o->ids, o->n * sizeof(uint64_t)) != 0)
		fail_msg("line %d: %s: WRITE ids differ from READ ids", line, what);
	for (size_t i = 1; i < o->n; i++)
		if (o->ids[i] == o->ids[i - 1])
			fail_msg("line %d: %s: block %" PRIu64 " twice in the READ", line, what,
				 o->ids[i]);
	if (o->n != gamma) {
		fprintf(stderr, "  ids:");
		for (size_t i = 0; i < o->n; i++)
			fprintf(stderr, " %" PRIu64, o->ids[i]);
		fprintf(stderr, "\n");
		fail_msg("line %d: %s: gamma = %zu blocks, expected %zu", line, what, o->n, gamma);
	}
	for (size_t j = 0; j < nmust; j++)
		if (bsearch(&must[j], o->ids, o->n, sizeof(uint64_t), cmp_u64) == NULL)
			fail_msg("line %d: %s: block %" PRIu64 " (holds the rows) not accessed",
				 line, what, must[j]);
	/* versions: +1 on the set, unchanged elsewhere */
	cs_versions(o->cl, o->e->nblocks, o->after);
	for (uint64_t b = 0; b < o->e->nblocks; b++) {
		int in = bsearch(&b, o->ids, o->n, sizeof(uint64_t), cmp_u64) != NULL;
		uint64_t want = o->before[b] + (in ? 1 : 0);
		if (in && o->after[b] == o->before[b])
			fail_msg("line %d: %s: block %" PRIu64 " written again at version %" PRIu64
				 ", which the cloud already held: the cloud sees no new version "
				 "(an earlier WRITE of this block was not committed by the proxy?)",
				 line, what, b, o->after[b]);
		if (o->after[b] != want)
			fail_msg("line %d: %s: block %" PRIu64 " at version %" PRIu64 ", expected %"
				 PRIu64, line, what, b, o->after[b], want);
	}
	/* the blocks written differ from the blocks read */
	{
		uint64_t *vo = malloc(o->n * sizeof(uint64_t)), *vn = malloc(o->n * sizeof(uint64_t));
		Lwc__CsResponse *ro = NULL, *rn = NULL;
		char err[256];
		for (size_t i = 0; i < o->n; i++) {
			vo[i] = o->before[o->ids[i]];
			vn[i] = o->after[o->ids[i]];
		}
		if (cs_client_read(o->cl, o->ids, vo, o->n, &ro, err, sizeof(err)) != LWC_OK ||
		    cs_client_read(o->cl, o->ids, vn, o->n, &rn, err, sizeof(err)) != LWC_OK)
			fail_msg("line %d: %s: reading back: %s", line, what, err);
		for (size_t i = 0; i < o->n; i++) {
			const ProtobufCBinaryData *a = &ro->read->blocks[i]->data;
			const ProtobufCBinaryData *b = &rn->read->blocks[i]->data;
			size_t same = 0;
			assert_int_equal(a->len, BLOCK_BYTES);
			assert_int_equal(b->len, BLOCK_BYTES);
			assert_int_equal(cry_get_be64(b->data), vn[i]);
			if (memcmp(a->data + 8, b->data + 8, CRY_NONCE_BYTES) == 0)
				fail_msg("line %d: %s: block %" PRIu64 " rewritten with the same nonce",
					 line, what, o->ids[i]);
			for (size_t j = 8 + CRY_NONCE_BYTES; j < a->len; j++)
				same += a->data[j] == b->data[j];
			/* independent random bytes agree in about 1/256 of positions */
			if (same > a->len / 64)
				fail_msg("line %d: %s: block %" PRIu64 " rewritten with %zu of %zu "
					 "bytes unchanged", line, what, o->ids[i], same, a->len);
		}
		cs_client_free_resp(ro);
		cs_client_free_resp(rn);
		free(vo);
		free(vn);
	}
}
#define obs_end(o, gamma, must, nmust, what) obs_end_at(__LINE__, o, gamma, must, nmust, what)

/* Raw access to the store behind the cloud store (tampering, scanning).
 * LMDB: the proxy and the cloud store are stopped while it is open. */
struct raw {
	struct env *e;
	int pg;
	int px_was_running;
	MDB_env *menv[CS_LMDB_SHARDS_MAX];   /* an LMDB store's shards      */
	MDB_txn *txn[CS_LMDB_SHARDS_MAX];
	MDB_dbi dbi[CS_LMDB_SHARDS_MAX];
	unsigned k;
	PGconn *conn;
	struct rc_cluster *rc;        /* Redis Cluster (the cloud store's router) */
};

/* One Redis command on the key of block id (argv[1] is replaced by it);
 * the answer, to be freed with freeReplyObject. */
static redisReply *rc_one(struct raw *r, uint64_t id, int argc, const char **argv,
			  size_t *argvlen)
{
	struct rc_cmd c;
	char key[128], err[256];
	redisReply *rep;

	snprintf(key, sizeof(key), "%s:b{%" PRIu64 "}", r->e->cs.prefix, id);
	argv[1] = key;
	argvlen[1] = strlen(key);
	memset(&c, 0, sizeof(c));
	c.slot = rc_key_slot(key, argvlen[1]);
	c.argc = argc;
	c.argv = argv;
	c.argvlen = argvlen;
	if (rc_cluster_exec(r->rc, &c, 1, 0, err, sizeof(err)) != LWC_OK)
		fail_msg("redis: %s", err);
	if (c.reply->type == REDIS_REPLY_ERROR)
		fail_msg("redis %s: %s", argv[0], c.reply->str);
	rep = c.reply;
	c.reply = NULL;
	return rep;
}

static void raw_open(struct raw *r, struct env *e)
{
	/* the tampering tests reach into the store's own format; the proxy's
	 * checks they exercise do not depend on the backend, and run on
	 * LMDB, PostgreSQL and Redis Cluster */
	if (strcmp(h_backend(), "log") == 0)
		skip();
	/* a SELECT answered may still be writing its blocks back and
	 * committing them (proxy/engine.c, stmt_answer): what is read or
	 * changed below is the store after that */
	h_px_idle(&e->px);
	memset(r, 0, sizeof(*r));
	r->e = e;
	r->pg = e->cs.db[0] != '\0';
	if (e->cs.prefix[0]) {
		struct rc_spec spec;
		char err[256];
		if (rc_spec_parse(getenv("LWC_TEST_REDIS"), &spec, err, sizeof(err)) != LWC_OK ||
		    rc_cluster_open(&r->rc, &spec, err, sizeof(err)) != LWC_OK)
			fail_msg("redis: %s", err);
		return;
	}
	if (r->pg) {
		char ci[1200];
		snprintf(ci, sizeof(ci), "%s dbname=%s", getenv("LWC_TEST_PG"), e->cs.db);
		r->conn = PQconnectdb(ci);
		if (PQstatus(r->conn) != CONNECTION_OK)
			fail_msg("PostgreSQL: %s", PQerrorMessage(r->conn));
		return;
	}
	if (e->px.pid > 0) {
		r->px_was_running = 1;
		h_px_stop(&e->px, SIGTERM);
	}
	assert_true(WIFEXITED(h_cs_stop(&e->cs, SIGTERM)));
	/* every shard of the store: store/, store/shard-1/, ... */
	r->k = h_cs_shards(&e->cs);
	assert_true(r->k <= CS_LMDB_SHARDS_MAX);
	for (unsigned j = 0; j < r->k; j++) {
		char dir[400];
		int rc;

		h_cs_shard_dir(&e->cs, j, dir, sizeof(dir));
		if ((rc = mdb_env_create(&r->menv[j])) != 0 ||
		    (rc = mdb_env_set_maxdbs(r->menv[j], 4)) != 0 ||
		    (rc = mdb_env_set_mapsize(r->menv[j], 1ull << 30)) != 0 ||
		    (rc = mdb_env_open(r->menv[j], dir, 0, 0600)) != 0 ||
		    (rc = mdb_txn_begin(r->menv[j], NULL, 0, &r->txn[j])) != 0 ||
		    (rc = mdb_dbi_open(r->txn[j], "blocks", 0, &r->dbi[j])) != 0)
			fail_msg("lmdb %s: %s", dir, mdb_strerror(rc));
	}
}

/* The shard of an LMDB store that holds the block of key k (id || version). */
static unsigned raw_shard(const struct raw *r, const uint8_t *k)
{
	return (unsigned)(cry_get_be64(k) % r->k);
}

static void raw_close(struct raw *r)
{
	if (r->rc) {
		rc_cluster_close(r->rc);
		return;
	}
	if (r->pg) {
		PQfinish(r->conn);
		return;
	}
	for (unsigned j = 0; j < r->k; j++) {
		if (mdb_txn_commit(r->txn[j]) != 0)
			fail_msg("lmdb commit");
		mdb_env_close(r->menv[j]);
	}
	h_cs_start(&r->e->cs, NULL);
	if (r->px_was_running)
		h_px_start(&r->e->px, r->e->serve);
}

static PGresult *pg_q(struct raw *r, const char *sql, int n, const char *const *vals,
		      const int *lens, ExecStatusType expect)
{
	int fmts[4] = { 1, 1, 1, 1 };
	PGresult *res = PQexecParams(r->conn, sql, n, NULL, vals, lens, fmts, 1);

	if (PQresultStatus(res) != expect)
		fail_msg("%s: %s", sql, PQerrorMessage(r->conn));
	return res;
}

/* Bytes of (id, ver) into buf; 0 when absent. */
static size_t raw_get(struct raw *r, uint64_t id, uint64_t ver, uint8_t *buf, size_t cap)
{
	uint8_t k[16];

	cry_put_be64(k, id);
	cry_put_be64(k + 8, ver);
	if (r->rc) {
		char vs[24];
		const char *argv[3] = { "HGET", NULL, vs };
		size_t argvlen[3] = { 4, 0, 0 }, n = 0;
		redisReply *rep;
		argvlen[2] = (size_t)snprintf(vs, sizeof(vs), "%" PRIu64, ver);
		rep = rc_one(r, id, 3, argv, argvlen);
		if (rep->type == REDIS_REPLY_STRING) {
			n = rep->len;
			assert_true(n <= cap);
			memcpy(buf, rep->str, n);
		}
		freeReplyObject(rep);
		return n;
	}
	if (r->pg) {
		const char *v[2] = { (const char *)k, (const char *)k + 8 };
		int l[2] = { 8, 8 };
		PGresult *res = pg_q(r, "SELECT data FROM lwc_blocks WHERE id = $1::int8 AND "
				     "version = $2::int8", 2, v, l, PGRES_TUPLES_OK);
		size_t n = 0;
		if (PQntuples(res) == 1) {
			n = (size_t)PQgetlength(res, 0, 0);
			assert_true(n <= cap);
			memcpy(buf, PQgetvalue(res, 0, 0), n);
		}
		PQclear(res);
		return n;
	} else {
		MDB_val key = { 16, k }, val;
		int rc = mdb_get(r->txn[raw_shard(r, k)], r->dbi[raw_shard(r, k)], &key, &val);
		if (rc == MDB_NOTFOUND)
			return 0;
		if (rc != 0)
			fail_msg("mdb_get: %s", mdb_strerror(rc));
		assert_true(val.mv_size <= cap);
		memcpy(buf, val.mv_data, val.mv_size);
		return val.mv_size;
	}
}

static uint64_t raw_newest(struct raw *r, uint64_t id)
{
	uint8_t k[16];
	uint64_t best = 0;

	cry_put_be64(k, id);
	if (r->rc) {
		const char *argv[2] = { "HKEYS", NULL };
		size_t argvlen[2] = { 5, 0 };
		redisReply *rep = rc_one(r, id, 2, argv, argvlen);
		for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++) {
			uint64_t v = strtoull(rep->element[i]->str, NULL, 10);
			if (v > best)
				best = v;
		}
		freeReplyObject(rep);
		return best;
	}
	if (r->pg) {
		const char *v[1] = { (const char *)k };
		int l[1] = { 8 };
		PGresult *res = pg_q(r, "SELECT max(version) FROM lwc_blocks WHERE id = $1::int8",
				     1, v, l, PGRES_TUPLES_OK);
		if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
			best = cry_get_be64((const uint8_t *)PQgetvalue(res, 0, 0));
		PQclear(res);
	} else {
		MDB_cursor *cur;
		MDB_val key, val;
		int rc;
		cry_put_be64(k + 8, 0);
		key.mv_size = 16;
		key.mv_data = k;
		assert_int_equal(mdb_cursor_open(r->txn[raw_shard(r, k)], r->dbi[raw_shard(r, k)], &cur),
				 0);
		for (rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE); rc == 0;
		     rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
			if (key.mv_size != 16 || cry_get_be64(key.mv_data) != id)
				break;
			best = cry_get_be64((const uint8_t *)key.mv_data + 8);
		}
		mdb_cursor_close(cur);
	}
	return best;
}

static void raw_put(struct raw *r, uint64_t id, uint64_t ver, const uint8_t *buf, size_t len)
{
	uint8_t k[16];

	cry_put_be64(k, id);
	cry_put_be64(k + 8, ver);
	if (r->rc) {
		char vs[24];
		const char *argv[4] = { "HSET", NULL, vs, (const char *)buf };
		size_t argvlen[4] = { 4, 0, 0, len };
		redisReply *rep;
		argvlen[2] = (size_t)snprintf(vs, sizeof(vs), "%" PRIu64, ver);
		rep = rc_one(r, id, 4, argv, argvlen);
		assert_int_equal(rep->type, REDIS_REPLY_INTEGER);
		freeReplyObject(rep);
		return;
	}
	if (r->pg) {
		const char *v[3] = { (const char *)k, (const char *)k + 8, (const char *)buf };
		int l[3] = { 8, 8, (int)len };
		PGresult *res = pg_q(r, "UPDATE lwc_blocks SET data = $3::bytea WHERE id = $1::int8 "
				     "AND version = $2::int8", 3, v, l, PGRES_COMMAND_OK);
		assert_string_equal(PQcmdTuples(res), "1");
		PQclear(res);
	} else {
		MDB_val key = { 16, k }, val = { len, (void *)(uintptr_t)buf };
		int rc = mdb_put(r->txn[raw_shard(r, k)], r->dbi[raw_shard(r, k)], &key, &val, 0);
		if (rc != 0)
			fail_msg("mdb_put: %s", mdb_strerror(rc));
	}
}

/* A version the store did not hold before (raw_put replaces one it holds). */
static void raw_add(struct raw *r, uint64_t id, uint64_t ver, const uint8_t *buf, size_t len)
{
	uint8_t k[16];

	if (!r->pg) {
		raw_put(r, id, ver, buf, len);  /* HSET and mdb_put add as well */
		return;
	}
	cry_put_be64(k, id);
	cry_put_be64(k + 8, ver);
	{
		const char *v[3] = { (const char *)k, (const char *)k + 8, (const char *)buf };
		int l[3] = { 8, 8, (int)len };
		PQclear(pg_q(r, "INSERT INTO lwc_blocks (id, version, data) VALUES ($1::int8, "
			     "$2::int8, $3::bytea)", 3, v, l, PGRES_COMMAND_OK));
	}
}

static void raw_del(struct raw *r, uint64_t id, uint64_t ver)
{
	uint8_t k[16];

	cry_put_be64(k, id);
	cry_put_be64(k + 8, ver);
	if (r->rc) {
		char vs[24];
		const char *argv[3] = { "HDEL", NULL, vs };
		size_t argvlen[3] = { 4, 0, 0 };
		argvlen[2] = (size_t)snprintf(vs, sizeof(vs), "%" PRIu64, ver);
		freeReplyObject(rc_one(r, id, 3, argv, argvlen));
		return;
	}
	if (r->pg) {
		const char *v[2] = { (const char *)k, (const char *)k + 8 };
		int l[2] = { 8, 8 };
		PQclear(pg_q(r, "DELETE FROM lwc_blocks WHERE id = $1::int8 AND version = $2::int8",
			     2, v, l, PGRES_COMMAND_OK));
	} else {
		MDB_val key = { 16, k };
		int rc = mdb_del(r->txn[raw_shard(r, k)], r->dbi[raw_shard(r, k)], &key, NULL);
		if (rc != 0)
			fail_msg("mdb_del: %s", mdb_strerror(rc));
	}
}

/* ---- decision callbacks --------------------------------------------------------- */

/* UPDATE: column col += delta (INT). */
struct inc_arg {
	int col;
	int64_t delta;
	int only_even_col;          /* -1: all rows; else change only rows whose
				     * column only_even_col is even */
	int calls;
};

static int inc_fn(void *p, const struct pxc_row *old, struct pxc_row *nw)
{
	struct inc_arg *a = p;

	a->calls++;
	if (a->only_even_col >= 0 && (old->v[a->only_even_col].i & 1))
		return 0;
	nw->v[a->col].i = old->v[a->col].i + a->delta;
	return 1;
}

/* UPDATE: column col = val. */
struct set_arg {
	int col;
	struct pxc_val val;
	int calls;
};

static int set_fn(void *p, const struct pxc_row *old, struct pxc_row *nw)
{
	struct set_arg *a = p;

	(void)old;
	a->calls++;
	nw->v[a->col] = a->val;
	return 1;
}

static int abort_fn(void *p, const struct pxc_row *old, struct pxc_row *nw)
{
	(void)p;
	(void)old;
	nw->v[0] = pxc_int(-1);
	return -1;
}

/* DELETE interactive: delete rows whose INT column col is odd. */
static int odd_fn(void *p, const struct pxc_row *old, struct pxc_row *nw)
{
	int col = *(int *)p;

	(void)nw;
	return (int)(old->v[col].i & 1);
}

/* Apply a column update to the model rows matching where. */
static size_t model_update(struct model *m, const struct pxc_keys *k, const struct pxc_table *t,
			   const Lwc__Pred *where, pxc_decide_fn fn, void *arg)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++) {
		struct pxc_row nw = m->rows[i];
		if (pred_match(k, t, where, &m->rows[i]) && fn(arg, &m->rows[i], &nw) > 0) {
			m->rows[i] = nw;
			n++;
		}
	}
	return n;
}

static size_t model_delete(struct model *m, const struct pxc_keys *k, const struct pxc_table *t,
			   const Lwc__Pred *where, pxc_decide_fn fn, void *arg)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n;) {
		struct pxc_row nw = m->rows[i];
		if (pred_match(k, t, where, &m->rows[i]) && (fn == NULL || fn(arg, &m->rows[i], &nw) > 0)) {
			model_del(m, i);
			n++;
		} else {
			i++;
		}
	}
	return n;
}

/* A deep copy of a Pred (the model must see it after pxc_* took ownership). */
static Lwc__Pred *pred_dup(const Lwc__Pred *p)
{
	Lwc__Pred *q = pxc_raw_pred(p->op, p->col, NULL, p->n_tokens, 16);

	for (size_t i = 0; i < p->n_tokens; i++) {
		q->tokens[i].len = p->tokens[i].len;
		memcpy(q->tokens[i].data, p->tokens[i].data, p->tokens[i].len < 16 ?
		       p->tokens[i].len : 16);
	}
	if (p->n_args) {
		q->n_args = p->n_args;
		q->args = calloc(p->n_args, sizeof(*q->args));
		for (size_t i = 0; i < p->n_args; i++)
			q->args[i] = pred_dup(p->args[i]);
	}
	return q;
}

/* UPDATE through the proxy and on the model; counts must agree. */
static void do_update_at(int line, struct pxc *c, const struct pxc_table *t, struct model *m,
			 Lwc__Pred *where, pxc_decide_fn fn, void *arg, void *arg_model)
{
	uint64_t cnt = 0;
	size_t want = model_update(m, pxc_keys(c), t, where, fn, arg_model);
	int rc = pxc_update(c, t, where, fn, arg, &cnt);

	if (rc != LWC_OK)
		fail_msg("line %d: UPDATE %s: %s (%s)", line, t->name, lwc_errname(rc), pxc_errmsg(c));
	if (cnt != want)
		fail_msg("line %d: UPDATE %s: Done.count %" PRIu64 ", expected %zu", line, t->name,
			 cnt, want);
}
#define do_update(c, t, m, where, fn, arg, arg2) do_update_at(__LINE__, c, t, m, where, fn, arg, arg2)

static void do_delete_at(int line, struct pxc *c, const struct pxc_table *t, struct model *m,
			 Lwc__Pred *where, pxc_decide_fn fn, void *arg)
{
	uint64_t cnt = 0;
	size_t want = model_delete(m, pxc_keys(c), t, where, fn, arg);
	int rc = pxc_delete(c, t, where, fn, arg, &cnt);

	if (rc != LWC_OK)
		fail_msg("line %d: DELETE %s: %s (%s)", line, t->name, lwc_errname(rc), pxc_errmsg(c));
	if (cnt != want)
		fail_msg("line %d: DELETE %s: Done.count %" PRIu64 ", expected %zu", line, t->name,
			 cnt, want);
}
#define do_delete(c, t, m, where, fn, arg) do_delete_at(__LINE__, c, t, m, where, fn, arg)

static void do_insert_at(int line, struct pxc *c, const struct pxc_table *t, struct model *m,
			 const struct pxc_row *rows, size_t n)
{
	uint64_t cnt = 0;
	int rc = pxc_insert(c, t, rows, n, &cnt);

	if (rc != LWC_OK)
		fail_msg("line %d: INSERT %zu rows into %s: %s (%s)", line, n, t->name,
			 lwc_errname(rc), pxc_errmsg(c));
	if (cnt != n)
		fail_msg("line %d: INSERT: Done.count %" PRIu64 ", expected %zu", line, cnt, n);
	for (size_t i = 0; i < n; i++)
		model_add(m, &rows[i]);
}
#define do_insert(c, t, m, rows, n) do_insert_at(__LINE__, c, t, m, rows, n)

/* ---- 1. end to end ---------------------------------------------------------- */

static const char *const cities[4] = { "paris", "oslo", "lima", "kyiv" };

static struct pxc_row person(const struct pxc_table *t, int id)
{
	struct pxc_val v[4];
	char name[32];

	snprintf(name, sizeof(name), "n%d", id % 20);
	v[0] = pxc_int(id);
	v[1] = pxc_text(name);
	v[2] = pxc_int(20 + id % 7);
	v[3] = id % 5 == 0 ? pxc_null() : pxc_text(cities[id % 4]);
	return pxc_row_make(t, v);
}

static struct pxc_row order_row(const struct pxc_table *t, int oid, int pid, const char *item)
{
	struct pxc_val v[3] = { pxc_int(oid), pxc_int(pid), pxc_text(item) };

	return pxc_row_make(t, v);
}

static struct pxc_row tag_row(const struct pxc_table *t, const char *tag, int n)
{
	struct pxc_val v[2] = { pxc_text(tag), pxc_int(n) };

	return pxc_row_make(t, v);
}

/* Catalog entry of table t, NULL when absent. */
static const Lwc__TableInfo *catalog_find(const Lwc__ProxyResponse *r, const struct pxc_keys *k,
					  const struct pxc_table *t)
{
	uint8_t h[16];

	pxc_handle(k, t->name, h);
	for (size_t i = 0; i < r->catalog->n_tables; i++)
		if (r->catalog->tables[i]->table.len == 16 &&
		    memcmp(r->catalog->tables[i]->table.data, h, 16) == 0)
			return r->catalog->tables[i];
	return NULL;
}

static void check_catalog_entry(struct pxc *c, const Lwc__ProxyResponse *r,
				const struct pxc_table *t)
{
	const Lwc__TableInfo *ti = catalog_find(r, pxc_keys(c), t);
	char plain[1024];

	if (ti == NULL)
		fail_msg("table %s missing from the catalog", t->name);
	assert_int_equal(ti->ncols, t->ncols);
	assert_int_equal(ti->pk_col, t->pk);
	/* the schema round-trips: it opens under the record key */
	assert_true(ti->schema.len > CRY_RECORD_OVERHEAD);
	assert_true(ti->schema.len - CRY_RECORD_OVERHEAD < sizeof(plain));
	assert_int_equal(cry_record_open((uint8_t *)plain, pxc_keys(c)->rec, ti->schema.data,
					 ti->schema.len, t->name), LWC_OK);
	plain[ti->schema.len - CRY_RECORD_OVERHEAD] = '\0';
	assert_non_null(strstr(plain, t->col[0]));
	if (t->pk >= 0)
		assert_true((ti->unique_cols >> t->pk) & 1);
}

static void test_end_to_end(void **state)
{
	struct env *e = *state;
	struct pxc_table people, orders, tags;
	struct model mp = { 0 }, mo = { 0 }, mt = { 0 };
	struct pxc_row rows[64];
	const struct pxc_keys *k;
	struct pxc *c;

	deploy(e, 256, NULL);
	c = conn(e);
	k = pxc_keys(c);
	assert_int_equal(pxc_table_def(&people, "people", "id:int:pk,name:text,age:int,city:text"), 0);
	assert_int_equal(pxc_table_def(&orders, "orders", "oid:int:pk,pid:int,item:text"), 0);
	assert_int_equal(pxc_table_def(&tags, "tags", "tag:text,n:int"), 0);

	/* CREATE TABLE */
	OK(c, pxc_create_table(c, &people, 0));
	OK(c, pxc_create_table(c, &orders, 0));
	OK(c, pxc_create_table(c, &tags, 0));
	ERR(c, LWC_ERR_EXISTS, pxc_create_table(c, &people, 0));
	OK(c, pxc_create_table(c, &people, 1));
	check_table(c, &people, &mp);

	/* INSERT: 60 people in two statements, orders, tags */
	for (int i = 0; i < 40; i++)
		rows[i] = person(&people, i + 1);
	do_insert(c, &people, &mp, rows, 40);
	for (int i = 0; i < 20; i++)
		rows[i] = person(&people, i + 41);
	do_insert(c, &people, &mp, rows, 20);
	for (int i = 0; i < 30; i++) {
		char item[32];
		snprintf(item, sizeof(item), "item-%d", i % 6);
		rows[i] = order_row(&orders, 100 + i, 1 + (i * 7) % 60, item);
	}
	do_insert(c, &orders, &mo, rows, 30);
	rows[0] = tag_row(&tags, "red", 1);
	rows[1] = tag_row(&tags, "green", 2);
	rows[2] = tag_row(&tags, "blue", 2);
	do_insert(c, &tags, &mt, rows, 3);
	check_table(c, &people, &mp);
	check_table(c, &orders, &mo);
	check_table(c, &tags, &mt);

	/* duplicate primary keys: against the table, within the batch; nothing inserted */
	rows[0] = person(&people, 100);
	rows[1] = person(&people, 7);
	ERR(c, LWC_ERR_UNIQUE, pxc_insert(c, &people, rows, 2, NULL));
	rows[1] = person(&people, 100);
	ERR(c, LWC_ERR_UNIQUE, pxc_insert(c, &people, rows, 2, NULL));
	check_table(c, &people, &mp);
	/* a table without a primary key takes duplicates */
	rows[0] = tag_row(&tags, "red", 1);
	do_insert(c, &tags, &mt, rows, 1);
	/* unknown table */
	{
		struct pxc_table ghost;
		assert_int_equal(pxc_table_def(&ghost, "ghost", "a:int"), 0);
		rows[0] = pxc_row_make(&ghost, (struct pxc_val[]){ pxc_int(1) });
		ERR(c, LWC_ERR_NO_TABLE, pxc_insert(c, &ghost, rows, 1, NULL));
		{
			struct pxc_result res;
			ERR(c, LWC_ERR_NO_TABLE, pxc_select(c, &ghost, NULL, 0, &res));
		}
	}

	/* SELECT: =, IN, AND, OR, NOT, IS NULL, ALL, NONE, nothing */
	assert_int_equal(check_select(c, &people, &mp, pxc_eq_text(k, &people, "name", "n7")), 3);
	assert_int_equal(check_select(c, &people, &mp, pxc_eq_int(k, &people, "id", 13)), 1);
	{
		struct pxc_val ids[5] = { pxc_int(3), pxc_int(7), pxc_int(11), pxc_int(99),
					  pxc_int(60) };
		assert_int_equal(check_select(c, &people, &mp, pxc_in(k, &people, "id", ids, 5)), 4);
	}
	assert_true(check_select(c, &people, &mp,
				 pxc_and(pxc_eq_text(k, &people, "city", "oslo"),
					 pxc_eq_int(k, &people, "age", 22))) > 0);
	assert_true(check_select(c, &people, &mp,
				 pxc_or(pxc_eq_text(k, &people, "city", "lima"),
					pxc_eq_int(k, &people, "age", 25))) > 0);
	assert_int_equal(check_select(c, &people, &mp,
				      pxc_not(pxc_eq_text(k, &people, "city", "paris"))), 48);
	assert_int_equal(check_select(c, &people, &mp, pxc_is_null(k, &people, "city")), 12);
	assert_true(check_select(c, &people, &mp,
				 pxc_and(pxc_not(pxc_is_null(k, &people, "city")),
					 pxc_or(pxc_eq_int(k, &people, "age", 20),
						pxc_eq_int(k, &people, "age", 21)))) > 0);
	assert_int_equal(check_select(c, &people, &mp, pxc_all()), 60);
	assert_int_equal(check_select(c, &people, &mp, pxc_none()), 0);
	assert_int_equal(check_select(c, &people, &mp, pxc_eq_text(k, &people, "name", "nobody")), 0);
	assert_int_equal(check_select(c, &people, &mp, pxc_not(pxc_all())), 0);
	assert_int_equal(check_select(c, &orders, &mo, pxc_eq_int(k, &orders, "pid", 8)), 1);
	/* a value of one column is not a value of another (tokens are per column) */
	assert_int_equal(check_select(c, &people, &mp, pxc_eq_int(k, &people, "age", 13)), 0);
	/* candidates: a superset the client filters */
	{
		struct pxc_result res;
		Lwc__Pred *p = pxc_eq_text(k, &people, "city", "kyiv");
		Lwc__Pred *pm = pred_dup(p);
		size_t want = 0, found = 0;
		OK(c, pxc_select(c, &people, p, 1, &res));
		for (size_t i = 0; i < mp.n; i++)
			want += (size_t)pred_match(k, &people, pm, &mp.rows[i]);
		for (size_t i = 0; i < res.n; i++)
			found += (size_t)pred_match(k, &people, pm, &res.rows[i]);
		assert_int_equal(found, want);
		pxc_result_free(&res);
		pxc_pred_free(pm);
	}

	/* UPDATE (interactive) */
	{
		struct inc_arg a = { 2, 100, -1, 0 }, am = a;
		Lwc__Pred *p = pxc_eq_text(k, &people, "city", "oslo");
		Lwc__Pred *pm = pred_dup(p);
		size_t before = 0;
		for (size_t i = 0; i < mp.n; i++)
			before += (size_t)pred_match(k, &people, pm, &mp.rows[i]);
		do_update(c, &people, &mp, p, inc_fn, &a, &am);
		assert_int_equal(a.calls, before);       /* one decision per matched row */
		pxc_pred_free(pm);
	}
	check_table(c, &people, &mp);
	/* the index follows: the old ages are gone from oslo rows */
	assert_int_equal(check_select(c, &people, &mp,
				      pxc_and(pxc_eq_text(k, &people, "city", "oslo"),
					      pxc_eq_int(k, &people, "age", 22))), 0);
	/* change only some candidates: count = rows changed */
	{
		struct inc_arg a = { 2, 1, 0, 0 }, am = a;
		do_update(c, &people, &mp, pxc_eq_text(k, &people, "city", "lima"), inc_fn, &a, &am);
	}
	/* a text column: lima -> zebra */
	{
		struct set_arg a = { 3, pxc_text("zebra"), 0 }, am = a;
		do_update(c, &people, &mp, pxc_eq_text(k, &people, "city", "lima"), set_fn, &a, &am);
		assert_int_equal(check_select(c, &people, &mp, pxc_eq_text(k, &people, "city", "lima")), 0);
		assert_true(check_select(c, &people, &mp, pxc_eq_text(k, &people, "city", "zebra")) > 0);
	}
	/* NULL -> value and value -> NULL */
	{
		struct set_arg a = { 3, pxc_text("rome"), 0 }, am = a;
		do_update(c, &people, &mp, pxc_eq_int(k, &people, "id", 5), set_fn, &a, &am);
		a.val = am.val = pxc_null();
		do_update(c, &people, &mp, pxc_eq_int(k, &people, "id", 6), set_fn, &a, &am);
		assert_int_equal(check_select(c, &people, &mp, pxc_is_null(k, &people, "city")), 12);
		assert_int_equal(check_select(c, &people, &mp, pxc_eq_text(k, &people, "city", "rome")), 1);
	}
	/* the primary key itself: 9 -> 900 */
	{
		struct set_arg a = { 0, pxc_int(900), 0 }, am = a;
		do_update(c, &people, &mp, pxc_eq_int(k, &people, "id", 9), set_fn, &a, &am);
		assert_int_equal(check_select(c, &people, &mp, pxc_eq_int(k, &people, "id", 9)), 0);
		assert_int_equal(check_select(c, &people, &mp, pxc_eq_int(k, &people, "id", 900)), 1);
		/* re-using the freed key is fine */
		rows[0] = person(&people, 9);
		do_insert(c, &people, &mp, rows, 1);
	}
	/* an UPDATE that would duplicate the primary key changes nothing */
	{
		struct set_arg a = { 0, pxc_int(10), 0 };
		ERR(c, LWC_ERR_UNIQUE, pxc_update(c, &people, pxc_eq_int(k, &people, "id", 11),
						  set_fn, &a, NULL));
		check_table(c, &people, &mp);
		/* two rows set to the same new key in one statement */
		a.val = pxc_int(5000);
		ERR(c, LWC_ERR_UNIQUE, pxc_update(c, &people,
						  pxc_in(k, &people, "id", (struct pxc_val[]){
							  pxc_int(12), pxc_int(13) }, 2),
						  set_fn, &a, NULL));
		check_table(c, &people, &mp);
	}
	/* abort: nothing changes */
	ERR(c, LWC_ERR_ABORTED, pxc_update(c, &people, pxc_all(), abort_fn, NULL, NULL));
	check_table(c, &people, &mp);
	/* matching nothing */
	{
		struct inc_arg a = { 2, 1, -1, 0 }, am = a;
		do_update(c, &people, &mp, pxc_eq_text(k, &people, "name", "nobody"), inc_fn, &a, &am);
		assert_int_equal(a.calls, 0);
	}

	/* DELETE: plain and interactive */
	do_delete(c, &people, &mp, pxc_eq_int(k, &people, "age", 21), NULL, NULL);
	{
		int col = 0;
		do_delete(c, &people, &mp, pxc_eq_text(k, &people, "city", "kyiv"), odd_fn, &col);
	}
	ERR(c, LWC_ERR_ABORTED, pxc_delete(c, &people, pxc_all(), abort_fn, NULL, NULL));
	do_delete(c, &people, &mp, pxc_none(), NULL, NULL);
	check_table(c, &people, &mp);
	assert_int_equal(check_select(c, &people, &mp, pxc_eq_int(k, &people, "age", 21)), 0);
	/* deleted keys can be inserted again */
	{
		long i = model_find(&mo, 0, &(struct pxc_val){ .tag = CRY_TAG_INT, .i = 105 });
		assert_true(i >= 0);
		do_delete(c, &orders, &mo, pxc_eq_int(k, &orders, "oid", 105), NULL, NULL);
		rows[0] = order_row(&orders, 105, 1, "again");
		do_insert(c, &orders, &mo, rows, 1);
		check_table(c, &orders, &mo);
	}

	/* unique indexes: refused with duplicates, enforced once created */
	ERR(c, LWC_ERR_UNIQUE, pxc_create_index(c, &tags, "n", 1));
	ERR(c, LWC_ERR_UNIQUE, pxc_create_index(c, &tags, "tag", 1));
	do_delete(c, &tags, &mt, pxc_eq_text(k, &tags, "tag", "red"), NULL, NULL);
	rows[0] = tag_row(&tags, "red", 1);
	do_insert(c, &tags, &mt, rows, 1);
	OK(c, pxc_create_index(c, &tags, "tag", 1));
	OK(c, pxc_create_index(c, &tags, "n", 0));
	rows[0] = tag_row(&tags, "red", 9);
	ERR(c, LWC_ERR_UNIQUE, pxc_insert(c, &tags, rows, 1, NULL));
	{
		struct set_arg a = { 0, pxc_text("blue"), 0 };
		ERR(c, LWC_ERR_UNIQUE, pxc_update(c, &tags, pxc_eq_text(k, &tags, "tag", "green"),
						  set_fn, &a, NULL));
	}
	rows[0] = tag_row(&tags, "white", 2);
	do_insert(c, &tags, &mt, rows, 1);
	check_table(c, &tags, &mt);

	/* catalog */
	{
		Lwc__ProxyResponse *r = NULL;
		OK(c, pxc_list_tables(c, &r));
		assert_int_equal(r->catalog->n_tables, 3);
		check_catalog_entry(c, r, &people);
		check_catalog_entry(c, r, &orders);
		check_catalog_entry(c, r, &tags);
		assert_true((catalog_find(r, k, &tags)->unique_cols & 1) == 1);
		lwc__proxy_response__free_unpacked(r, NULL);
	}

	/* a graceful restart keeps everything */
	pxc_close(c);
	px_restart(e);
	c = conn(e);
	k = pxc_keys(c);
	check_table(c, &people, &mp);
	check_table(c, &orders, &mo);
	check_table(c, &tags, &mt);
	assert_true(check_select(c, &people, &mp, pxc_is_null(k, &people, "city")) > 0);
	rows[0] = tag_row(&tags, "white", 3);
	ERR(c, LWC_ERR_UNIQUE, pxc_insert(c, &tags, rows, 1, NULL));

	/* DROP TABLE */
	OK(c, pxc_drop_table(c, &orders, 0));
	ERR(c, LWC_ERR_NO_TABLE, pxc_drop_table(c, &orders, 0));
	OK(c, pxc_drop_table(c, &orders, 1));
	{
		struct pxc_result res;
		Lwc__ProxyResponse *r = NULL;
		ERR(c, LWC_ERR_NO_TABLE, pxc_select(c, &orders, NULL, 0, &res));
		OK(c, pxc_list_tables(c, &r));
		assert_int_equal(r->catalog->n_tables, 2);
		assert_null(catalog_find(r, k, &orders));
		lwc__proxy_response__free_unpacked(r, NULL);
	}
	/* re-created empty; old keys free */
	model_free(&mo);
	OK(c, pxc_create_table(c, &orders, 0));
	check_table(c, &orders, &mo);
	rows[0] = order_row(&orders, 100, 1, "fresh");
	do_insert(c, &orders, &mo, rows, 1);
	check_table(c, &orders, &mo);
	check_table(c, &people, &mp);
	check_table(c, &tags, &mt);
	pxc_close(c);
	model_free(&mp);
	model_free(&mo);
	model_free(&mt);
}

/* ---- 2. the cloud's view: one READ, one WRITE, gamma ---------------------------- */

static struct pxc_row kv_row(const struct pxc_table *t, int64_t key, const char *s)
{
	struct pxc_val v[2] = { pxc_int(key), pxc_text(s) };

	return pxc_row_make(t, v);
}

/* SELECT k = key: one row expected (or none). */
static void sel_key(struct pxc *c, const struct pxc_table *t, const struct model *m, int64_t key)
{
	check_select(c, t, m, pxc_eq_int(pxc_keys(c), t, "k", key));
}

static void test_trace_padding(void **state)
{
	struct env *e = *state;
	const char *ratio[] = { "--pad", "ratio:2", "--pad-min", "4", NULL };
	const char *pow2[] = { "--pad", "pow2", "--pad-min", "4", NULL };
	const char *fixed[] = { "--pad", "fixed:10", "--pad-min", "4", NULL };
	const char *capped[] = { "--pad", "ratio:2", "--pad-min", "300", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row *rows = calloc(400, sizeof(*rows));
	struct stmt_obs o;
	struct pxc *c;
	const uint64_t b0 = 0, b1 = 1, b2 = 2, b012[3] = { 0, 1, 2 };
	uint64_t (*seen)[8] = calloc(20, sizeof(*seen));

	/* where rows are is part of what this test checks: the paper's
	 * placement (test_relocation covers the default) */
	deploy_mode(e, 256, ratio, "off");
	obs_init(&o, e);
	c = conn(e);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);

	/* ratio:2, pad-min 4 */
	obs_begin(&o);
	OK(c, pxc_create_table(c, &kv, 0));
	obs_end(&o, 4, NULL, 0, "CREATE TABLE");

	for (int i = 0; i < 100; i++)
		rows[i] = kv_row(&kv, i, "v");
	obs_begin(&o);
	do_insert(c, &kv, &m, rows, 100);           /* blocks 0,1,2: k = 3 */
	obs_end(&o, 6, b012, 3, "INSERT of 100 rows");

	obs_begin(&o);
	sel_key(c, &kv, &m, 50);                    /* row 50 is in block 1 */
	obs_end(&o, 4, &b1, 1, "SELECT of one row");

	obs_begin(&o);
	sel_key(c, &kv, &m, 1000);
	obs_end(&o, 4, NULL, 0, "SELECT matching nothing");

	obs_begin(&o);
	{
		struct set_arg a = { 1, pxc_text("changed"), 0 }, am = a;
		do_update(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 10), set_fn, &a, &am);
	}
	obs_end(&o, 4, &b0, 1, "UPDATE of one row");

	obs_begin(&o);
	{
		struct set_arg a = { 1, pxc_text("nothing"), 0 }, am = a;
		do_update(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 5000), set_fn, &a, &am);
	}
	obs_end(&o, 4, NULL, 0, "UPDATE matching nothing");

	obs_begin(&o);
	do_delete(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 99), NULL, NULL);
	/* an exact DELETE reads no record: the access of a statement matching
	 * nothing (its block only by chance), the flags cleared at commit */
	obs_end(&o, 4, NULL, 0, "DELETE of one row (exact)");

	obs_begin(&o);
	{
		int col = 0;
		do_delete(c, &kv, &m, pxc_in(pxc_keys(c), &kv, "k", (struct pxc_val[]){
			pxc_int(97), pxc_int(98) }, 2), odd_fn, &col);
	}
	obs_end(&o, 4, &b2, 1, "interactive DELETE");

	obs_begin(&o);
	do_delete(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 7000), NULL, NULL);
	obs_end(&o, 4, NULL, 0, "DELETE matching nothing");


	rows[0] = kv_row(&kv, 1000, "one");
	obs_begin(&o);
	do_insert(c, &kv, &m, rows, 1);
	obs_end(&o, 4, NULL, 0, "INSERT of one row");

	obs_begin(&o);
	check_table(c, &kv, &m);
	obs_end(&o, 6, b012, 3, "SELECT of every row");

	/* failed statements look the same: an aborted UPDATE, a refused INSERT */
	obs_begin(&o);
	ERR(c, LWC_ERR_ABORTED, pxc_update(c, &kv, pxc_eq_int(pxc_keys(c), &kv, "k", 60),
					   abort_fn, NULL, NULL));
	obs_end(&o, 4, &b1, 1, "aborted UPDATE");
	rows[0] = kv_row(&kv, 1000, "dup");
	obs_begin(&o);
	ERR(c, LWC_ERR_UNIQUE, pxc_insert(c, &kv, rows, 1, NULL));
	assert_int_equal(h_trace_since(&e->cs, o.mark, &o.a), 0);
	if (o.a.nread + o.a.nwrite != 0 && !(o.a.nread == 1 && o.a.nwrite == 1))
		fail_msg("a refused INSERT made %d READ and %d WRITE", o.a.nread, o.a.nwrite);
	{
		/* the blocks they wrote hold new versions: the next access of those
		 * blocks must write newer ones still (an access of every block) */
		const char *all[] = { "--pad", "fixed:256", NULL };
		pxc_close(c);
		set_serve(e, all);
		px_restart(e);
		c = conn(e);
		obs_begin(&o);
		sel_key(c, &kv, &m, 50);
		obs_end(&o, 256, &b1, 1, "SELECT of every block after an aborted UPDATE and a "
			"refused INSERT");
		pxc_close(c);
		set_serve(e, ratio);
		px_restart(e);
		c = conn(e);
	}

	/* the same SELECT 20 times: never the same block set twice */
	for (int r = 0; r < 20; r++) {
		obs_begin(&o);
		sel_key(c, &kv, &m, 50);
		obs_end(&o, 4, &b1, 1, "repeated SELECT");
		memcpy(seen[r], o.ids, 4 * sizeof(uint64_t));
		for (int q = 0; q < r; q++)
			if (memcmp(seen[q], seen[r], 4 * sizeof(uint64_t)) == 0)
				fail_msg("SELECT %d read the same blocks as SELECT %d", r, q);
	}

	/* 300 more rows: the first fill block 2 (it holds 96, 98 and 1000), the
	 * rest blocks 3..8; k follows from the fill rule, gamma = 2k */
	{
		uint64_t before_rows[256] = { 0 };
		size_t k = 0;
		uint64_t must[16];
		/* rows per block: 0..47 in block 0, 48..95 in block 1, 96..99 in
		 * block 2, less 97 and 99, plus 1000 (the lowest block with room) */
		before_rows[0] = 48;
		before_rows[1] = 48;
		before_rows[2] = 3;
		for (int i = 0; i < 300; i++)
			rows[i] = kv_row(&kv, 2000 + i, "w");
		{
			int left = 300;
			for (uint64_t b = 0; left > 0; b++) {
				int room = THETA - (int)before_rows[b];
				if (room > 0) {
					must[k++] = b;
					left -= room;
				}
			}
		}
		obs_begin(&o);
		do_insert(c, &kv, &m, rows, 300);
		obs_end(&o, 2 * k, must, k, "INSERT of 300 rows");
		obs_begin(&o);
		check_table(c, &kv, &m);
		obs_end(&o, 2 * (k + 2), b012, 3, "SELECT of every row");
	}

	/* pow2: max(pad-min, smallest power of two >= 2k) */
	pxc_close(c);
	set_serve(e, pow2);
	px_restart(e);
	c = conn(e);
	obs_begin(&o);
	sel_key(c, &kv, &m, 50);
	obs_end(&o, 4, &b1, 1, "pow2: SELECT of one row");
	obs_begin(&o);
	check_select(c, &kv, &m, pxc_in(pxc_keys(c), &kv, "k", (struct pxc_val[]){
		pxc_int(1), pxc_int(50), pxc_int(96) }, 3));
	obs_end(&o, 8, b012, 3, "pow2: SELECT of rows in 3 blocks");
	obs_begin(&o);
	sel_key(c, &kv, &m, 1001);
	obs_end(&o, 4, NULL, 0, "pow2: SELECT matching nothing");
	obs_begin(&o);
	check_select(c, &kv, &m, pxc_in(pxc_keys(c), &kv, "k", (struct pxc_val[]){
		pxc_int(1), pxc_int(50), pxc_int(96), pxc_int(2100), pxc_int(2200) }, 5));
	obs_end(&o, 16, b012, 3, "pow2: SELECT of rows in 5 blocks");

	/* fixed:10 */
	pxc_close(c);
	set_serve(e, fixed);
	px_restart(e);
	c = conn(e);
	obs_begin(&o);
	sel_key(c, &kv, &m, 50);
	obs_end(&o, 10, &b1, 1, "fixed: SELECT of one row");
	obs_begin(&o);
	sel_key(c, &kv, &m, 1002);
	obs_end(&o, 10, NULL, 0, "fixed: SELECT matching nothing");
	obs_begin(&o);
	check_select(c, &kv, &m, pxc_in(pxc_keys(c), &kv, "k", (struct pxc_val[]){
		pxc_int(1), pxc_int(50), pxc_int(96) }, 3));
	obs_end(&o, 10, b012, 3, "fixed: SELECT of rows in 3 blocks");
	rows[0] = kv_row(&kv, 3000, "f");
	obs_begin(&o);
	do_insert(c, &kv, &m, rows, 1);
	obs_end(&o, 10, NULL, 0, "fixed: INSERT");

	/* gamma is capped at the number of blocks */
	pxc_close(c);
	set_serve(e, capped);
	px_restart(e);
	c = conn(e);
	obs_begin(&o);
	sel_key(c, &kv, &m, 50);
	obs_end(&o, 256, &b1, 1, "capped: SELECT of one row");

	/* an exact DELETE of 20 rows of blocks 0 and 1 (ratio:2 again): still
	 * the access of a statement matching nothing; what it deleted is gone,
	 * INSERTs reuse the freed slots, and lwc-proxy check agrees */
	pxc_close(c);
	set_serve(e, ratio);
	px_restart(e);
	c = conn(e);
	{
		struct pxc_val keys[20];
		char out[400];

		for (int i = 0; i < 20; i++)
			keys[i] = pxc_int(30 + i);
		obs_begin(&o);
		do_delete(c, &kv, &m, pxc_in(pxc_keys(c), &kv, "k", keys, 20), NULL, NULL);
		obs_end(&o, 4, NULL, 0, "exact DELETE of 20 rows in two blocks");
		check_select(c, &kv, &m, pxc_in(pxc_keys(c), &kv, "k", keys, 20));
		for (int i = 0; i < 20; i++)
			rows[i] = kv_row(&kv, 30 + i, "again");
		do_insert(c, &kv, &m, rows, 20);
		check_table(c, &kv, &m);
		pxc_close(c);
		c = NULL;
		snprintf(out, sizeof(out), "%s/check.out", e->px.dir);
		assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
		if (h_px_check(&e->px, out) != 0) {
			h_tail(out, 10);
			fail_msg("lwc-proxy check failed after exact DELETEs");
		}
	}

	obs_free(&o);
	model_free(&m);
	free(rows);
	free(seen);
}

/* ---- 2b. relocation: rows move through the proxy's stash ------------------------- */

/* Where the row with k = key is now (px_locate): its block, or
 * PX_LOCATE_STASH. */
static uint64_t where(struct env *e, struct pxc *c, const struct pxc_table *t, int64_t key)
{
	struct px_locator *l;
	uint8_t h[16], tok[16];
	struct pxc_val v = pxc_int(key);
	uint64_t b = 0;
	char err[256];
	int rc;

	/* a SELECT is answered before it commits (proxy/engine.c, stmt_answer);
	 * the connection's next request runs after that commit, so a round
	 * trip on c first makes the state read below the one after every
	 * statement c ran */
	{
		Lwc__ProxyResponse *r = NULL;

		OK(c, pxc_list_tables(c, &r));
		lwc__proxy_response__free_unpacked(r, NULL);
	}
	/* one locator for the state: each px_locate reads it in a new read
	 * transaction and catches up with the proxy's journal */
	if (e->loc == NULL && px_locator_open(&e->loc, e->px.state, err, sizeof(err)) != LWC_OK)
		fail_msg("locator: %s", err);
	l = e->loc;
	pxc_handle(pxc_keys(c), t->name, h);
	pxc_token(pxc_keys(c), t, 0, &v, tok);
	rc = px_locate(l, h, 0, tok, &b);
	if (rc != LWC_OK)
		fail_msg("locate k = %lld: %s", (long long)key, lwc_errname(rc));
	return b;
}

static int in_ids(const uint64_t *ids, size_t n, uint64_t b)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == b)
			return 1;
	return 0;
}

/* One round of test_relocation_groups: read the n rows k = first.. at once
 * (they go to the stash together), let point SELECTs write them back, and
 * return how many blocks they went to.  With groups (one_block_each), the
 * rows landing in one statement all go to one block: a statement places
 * at most one group of one origin. */
static uint64_t px_status_u64(struct env *e, const char *key);

static unsigned groups_round(struct env *e, struct pxc *c, const struct pxc_table *kv,
			     struct model *m, struct stmt_obs *o, int64_t first, int n,
			     int one_block_each, int64_t *miss, uint64_t *at)
{
	struct pxc_val *vals = calloc((size_t)n, sizeof(*vals));
	uint64_t blocks[64];
	int *back = calloc((size_t)n, sizeof(*back)), left = n;
	unsigned nb = 0;

	assert_non_null(vals);
	assert_non_null(back);
	for (int i = 0; i < n; i++)
		vals[i] = pxc_int(first + i);
	check_select(c, kv, m, pxc_in(pxc_keys(c), kv, "k", vals, (size_t)n));
	for (int i = 0; i < n; i++)
		if (where(e, c, kv, first + i) != PX_LOCATE_STASH)
			fail_msg("k = %lld is not in the stash after it was read",
				 (long long)(first + i));
	for (int s = 0; s < 4 * (int)PX_EVICT_DELAY && left > 0; s++) {
		uint64_t here = PX_LOCATE_STASH;

		obs_begin(o);
		sel_key(c, kv, m, (*miss)++);
		obs_end(o, 4, NULL, 0, "SELECT matching nothing");
		for (int i = 0; i < n; i++) {
			uint64_t b;

			if (back[i] || (b = where(e, c, kv, first + i)) == PX_LOCATE_STASH)
				continue;
			back[i] = 1;
			left--;
			at[i] = b;
			if (!in_ids(o->ids, o->n, b))
				fail_msg("k = %lld went back to block %" PRIu64 ", which the "
					 "statement did not access", (long long)(first + i), b);
			if (one_block_each && here != PX_LOCATE_STASH && b != here)
				fail_msg("rows of one statement's read went back into blocks %" PRIu64
					 " and %" PRIu64 " of one statement", here, b);
			here = b;
		}
	}
	if (left > 0)
		fail_msg("%d of %d rows still in the stash after %u statements", left, n,
			 4 * PX_EVICT_DELAY);
	for (int i = 0; i < n; i++) {
		unsigned j = 0;

		while (j < nb && blocks[j] != at[i])
			j++;
		if (j == nb && nb < 64)
			blocks[nb++] = at[i];
	}
	free(vals);
	free(back);
	return nb;
}

static void test_relocation_groups(void **state)
{
	struct env *e = *state;
	const char *groups[] = { "--pad", "ratio:2", "--pad-min", "4", "--evict-group", "16", NULL };
	const char *alone[] = { "--pad", "ratio:2", "--pad-min", "4", "--evict-group", "1", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row *rows = calloc(400, sizeof(*rows));
	struct stmt_obs o;
	struct pxc *c;
	int64_t miss = 100000;
	uint64_t at[32], mates, grouped, in_stash = 0;
	unsigned g, a;

	deploy(e, 128, groups);
	obs_init(&o, e);
	c = conn(e);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	OK(c, pxc_create_table(c, &kv, 0));
	for (int i = 0; i < 400; i++)
		rows[i] = kv_row(&kv, i, "v");
	do_insert(c, &kv, &m, rows, 400);
	/* the INSERT's rows drain to their blocks first */
	for (int s = 0; s < 4 * (int)PX_EVICT_DELAY; s++)
		sel_key(c, &kv, &m, miss++);
	/* 32 rows read together: two groups of 16, each into one block (or two
	 * or three blocks of different statements when a block had less room;
	 * both groups may meet in one block, written by two statements) */
	g = groups_round(e, c, &kv, &m, &o, 0, 32, 1, &miss, at);
	fprintf(stderr, "    groups of 16: 32 rows read together went back into %u blocks\n", g);
	assert_true(g >= 1 && g <= 8);

	/* the group moves on access: a point SELECT of k = 0 (one row to the
	 * user: check_select) takes the other rows of its group, in its block,
	 * to the stash; nothing else moves */
	mates = px_status_u64(e, "group_mates_moved");
	grouped = px_status_u64(e, "rows_in_groups");
	assert_true(grouped >= 2);
	sel_key(c, &kv, &m, 0);
	for (int i = 1; i < 32; i++) {
		if (where(e, c, &kv, i) != PX_LOCATE_STASH)
			continue;
		if (at[i] != at[0])
			fail_msg("k = %d left block %" PRIu64 " with k = 0, which was in block %"
				 PRIu64, i, at[i], at[0]);
		in_stash++;
	}
	fprintf(stderr, "    a point SELECT of k = 0 took %" PRIu64 " rows of its group with it\n",
		in_stash);
	assert_true(in_stash >= 1);
	assert_int_equal(px_status_u64(e, "group_mates_moved") - mates, in_stash);
	assert_int_equal(px_status_u64(e, "rows_in_groups"), grouped - in_stash - 1);
	grouped -= in_stash + 1;
	pxc_close(c);

	/* --evict-group 1: every row alone, a block of its own most of the time;
	 * the groups in blocks are kept across a clean stop */
	h_px_stop(&e->px, SIGTERM);
	px_start(e, alone);
	assert_int_equal(px_status_u64(e, "rows_in_groups"), grouped);
	c = conn(e);
	a = groups_round(e, c, &kv, &m, &o, 100, 32, 0, &miss, at);
	fprintf(stderr, "    groups of 1: 32 rows read together went back into %u blocks\n", a);
	assert_true(a >= 12);
	check_table(c, &kv, &m);
	pxc_close(c);
	obs_free(&o);
	model_free(&m);
	free(rows);
}

/* Rows an INSERT puts in the stash are written back below the fill limit,
 * as INSERTs that place their rows fill blocks: the room above it stays for
 * rows that move.  When they filled blocks up to theta, a row read later
 * could only go back where rows had just been taken out (the only room
 * left), and the hottest rows went round among the few blocks they had
 * left: lwc-audit's frequency check found those blocks.  2,000 rows in 64
 * blocks (fill limit 40 of 48) through the stash, written back by
 * statements that match nothing, with a restart half-way: no block above
 * the limit, every row in a block. */
static void test_insert_room(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--pad", "ratio:2", "--pad-min", "4", "--evict-group", "1", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row *rows = calloc(2000, sizeof(*rows));
	struct pxc *c;
	int n = 0;

	deploy(e, 64, serve);
	c = conn(e);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	OK(c, pxc_create_table(c, &kv, 0));
	for (int i = 0; i < 2000; i++)
		rows[i] = kv_row(&kv, i, "v");
	for (int b = 0; b < 20; b++)
		do_insert(c, &kv, &m, rows + 100 * b, 100);
	assert_int_equal(px_status_u64(e, "inserts_via_stash"), 2000);
	assert_int_equal(px_status_u64(e, "blocks"), 64);
	assert_int_equal(px_status_u64(e, "fill_limit"), 40);
	/* half of them written back, then a restart: the rows still in the
	 * stash are still an INSERT's (kept in their stash records) */
	for (; n < 2000 && px_status_u64(e, "stash_rows") > 1000; n++)
		sel_key(c, &kv, &m, 100000 + n);
	assert_int_equal(px_status_u64(e, "blocks_above_fill_limit"), 0);
	pxc_close(c);
	px_restart(e);
	c = conn(e);
	assert_true(px_status_u64(e, "stash_rows") > 0);
	for (; n < 2000 && px_status_u64(e, "stash_rows") > 0; n++)
		sel_key(c, &kv, &m, 100000 + n);
	fprintf(stderr, "    2000 rows written back by %d statements\n", n);
	assert_int_equal(px_status_u64(e, "stash_rows"), 0);
	assert_int_equal(px_status_u64(e, "slots_used"), 2000);
	assert_int_equal(px_status_u64(e, "blocks_above_fill_limit"), 0);
	check_table(c, &kv, &m);
	pxc_close(c);
	free(rows);
	model_free(&m);
}

static void test_relocation(void **state)
{
	struct env *e = *state;
	/* rows alone (--evict-group 1, the default, given so that the test
	 * does not depend on it): each read moves the one row it reads */
	const char *serve[] = { "--pad", "ratio:2", "--pad-min", "4", "--evict-group", "1", NULL };
	const char *capped[] = { "--pad", "ratio:2", "--pad-min", "4", "--relocate-max", "10",
				 "--evict-group", "1", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row *rows = calloc(300, sizeof(*rows));
	struct stmt_obs o;
	struct pxc *c;
	uint64_t before[40] = { 0 }, stashed_at[40] = { 0 }, back_in = 0, same_block = 0;
	int back[40] = { 0 };
	char out[400];
	int rc;

	deploy(e, 64, serve);
	obs_init(&o, e);
	snprintf(out, sizeof(out), "%s/check.out", e->px.dir);
	c = conn(e);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	OK(c, pxc_create_table(c, &kv, 0));

	/* INSERTs go to the stash: the cloud sees the access of a statement that
	 * matched nothing, and later statements write the rows to their blocks */
	for (int i = 0; i < 300; i++)
		rows[i] = kv_row(&kv, i, "v");
	for (int b = 0; b < 6; b++) {
		obs_begin(&o);
		do_insert(c, &kv, &m, rows + 50 * b, 50);
		obs_end(&o, 4, NULL, 0, "INSERT of 50 rows (through the stash)");
	}
	assert_int_equal(where(e, c, &kv, 299), PX_LOCATE_STASH);
	/* point SELECTs of other rows write the stash back (in random slots of
	 * their own blocks) */
	for (int i = 0; i < 200; i++) {
		obs_begin(&o);
		sel_key(c, &kv, &m, 1000 + i);
		obs_end(&o, 4, NULL, 0, "SELECT matching nothing");
	}
	for (int i = 0; i < 300; i++)
		if (where(e, c, &kv, i) == PX_LOCATE_STASH)
			fail_msg("row %d still in the stash after 200 statements", i);

	/* move on access: the row read leaves its block for the stash; read
	 * again at once, it is served from the stash (no block needed); later
	 * statements write it back into one of their own blocks, which the
	 * trace shows after every statement */
	for (int n = 0; n < 80 + 3 * (int)PX_EVICT_DELAY; n++) {
		int i = n / 2;

		if (n < 80 && n % 2 == 0) {
			before[i] = where(e, c, &kv, 7 * i);
			obs_begin(&o);
			sel_key(c, &kv, &m, 7 * i);
			obs_end(&o, 4, &before[i], 1, "SELECT of one row in a block");
			if (where(e, c, &kv, 7 * i) != PX_LOCATE_STASH)
				fail_msg("k = %d: still in block %" PRIu64 " after it was read", 7 * i,
					 before[i]);
		} else {
			obs_begin(&o);
			if (n < 80) {
				sel_key(c, &kv, &m, 7 * i);
				obs_end(&o, 4, NULL, 0, "SELECT of a row in the stash");
			} else {
				sel_key(c, &kv, &m, 5000 + n);
				obs_end(&o, 4, NULL, 0, "SELECT matching nothing");
			}
		}
		for (int r = 0; r < 40; r++) {
			uint64_t b;

			if (back[r] || !stashed_at[r])
				continue;
			if ((b = where(e, c, &kv, 7 * r)) == PX_LOCATE_STASH)
				continue;
			if (!in_ids(o.ids, o.n, b))
				fail_msg("k = %d went back to block %" PRIu64 ", which the statement "
					 "writing it back (n = %d: %" PRIu64 " %" PRIu64 " %" PRIu64 " %"
					 PRIu64 ") did not access", 7 * r, b, n, o.ids[0], o.ids[1],
					 o.ids[2], o.ids[3]);
			back[r] = 1;
			back_in++;
			same_block += b == before[r];
		}
		if (n < 80 && n % 2 == 0)
			stashed_at[i] = 1;
	}
	fprintf(stderr, "    %llu of 40 rows written back within %u statements, %llu into the "
		"block they came from\n", (unsigned long long)back_in, 3 * PX_EVICT_DELAY,
		(unsigned long long)same_block);
	assert_int_equal(back_in, 40);
	assert_true(same_block <= 8);        /* 1 in 16 expected from 64 blocks */

	/* modifications through the stash, checked against the model */
	for (int i = 0; i < 30; i++) {
		struct set_arg a = { 1, pxc_text("changed"), 0 }, am = a;
		do_update(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", i), set_fn, &a, &am);
		do_update(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", i), set_fn, &a, &am);
		do_delete(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 100 + i), NULL, NULL);
		sel_key(c, &kv, &m, i);
	}
	{
		int col = 0;
		do_delete(c, &kv, &m, pxc_in(pxc_keys(c), &kv, "k", (struct pxc_val[]){
			pxc_int(1), pxc_int(2), pxc_int(3) }, 3), odd_fn, &col);
	}
	/* an UPDATE the user aborts after its blocks went back fails, changes
	 * nothing, and looks like any statement: its row moved all the same */
	for (int64_t key = 150; key < 300; key++) {
		uint64_t b = where(e, c, &kv, key);

		if (b == PX_LOCATE_STASH)
			continue;
		obs_begin(&o);
		ERR(c, LWC_ERR_ABORTED, pxc_update(c, &kv, pxc_eq_int(pxc_keys(c), &kv, "k", key),
						   abort_fn, NULL, NULL));
		obs_end(&o, 4, &b, 1, "aborted UPDATE");
		assert_int_equal(where(e, c, &kv, key), PX_LOCATE_STASH);
		sel_key(c, &kv, &m, key);
		break;
	}
	check_table(c, &kv, &m);
	pxc_close(c);

	/* the stash is part of the committed state: a restart keeps it */
	c = conn(e);
	sel_key(c, &kv, &m, 200);
	assert_int_equal(where(e, c, &kv, 200), PX_LOCATE_STASH);
	pxc_close(c);
	{
		int kept = h_count_lines(e->px.log, "write order: restored from the last clean stop");
		int lost = h_count_lines(e->px.log, "write order: unknown");

		px_restart(e);
		/* the blocks' write order (padage.h) comes back after a clean
		 * stop, and not after a crash: serve drops it as it takes it */
		assert_int_equal(h_count_lines(e->px.log,
					       "write order: restored from the last clean stop"),
				 kept + 1);
		h_px_stop(&e->px, SIGKILL);
		h_px_start(&e->px, e->serve);
		assert_int_equal(h_count_lines(e->px.log, "write order: unknown"), lost + 1);
	}
	c = conn(e);
	sel_key(c, &kv, &m, 200);
	check_table(c, &kv, &m);
	pxc_close(c);
	h_px_stop(&e->px, SIGTERM);
	rc = h_px_check(&e->px, out);
	if (rc != 0) {
		h_tail(out, 20);
		fail_msg("lwc-proxy check after the relocation workload exited %d", rc);
	}

	/* a statement touching more rows than --relocate-max leaves them */
	px_start(e, capped);
	c = conn(e);
	{
		uint64_t b250;
		struct pxc_val keys[20];

		/* check_table moved every row to the stash: let the 20 rows drain
		 * (the cap counts rows in blocks; rows still in the stash would
		 * leave fewer than 10 there and the statement would relocate) */
		for (int n = 0; n < 600; n++) {
			int left = 0;

			for (int k = 240; k < 260; k++)
				left += where(e, c, &kv, k) == PX_LOCATE_STASH;
			if (left == 0)
				break;
			sel_key(c, &kv, &m, 9000 + n);
		}
		for (int k = 240; k < 260; k++)
			if (where(e, c, &kv, k) == PX_LOCATE_STASH)
				fail_msg("k = %d still in the stash after 600 statements", k);
		b250 = where(e, c, &kv, 250);
		assert_true(b250 != PX_LOCATE_STASH);
		for (int i = 0; i < 20; i++)
			keys[i] = pxc_int(240 + i);
		check_select(c, &kv, &m, pxc_in(pxc_keys(c), &kv, "k", keys, 20));
		assert_int_equal(where(e, c, &kv, 250), b250);
	}
	pxc_close(c);
	obs_free(&o);
	model_free(&m);
	free(rows);
}

/* ---- 3. nothing readable in the store ------------------------------------------- */

struct needles {
	uint8_t (*b)[24];
	size_t *len;
	char (*what)[80];
	size_t n, cap;
};

static void needle_add(struct needles *nd, const void *p, size_t len, const char *what)
{
	if (nd->n == nd->cap) {
		nd->cap = nd->cap ? nd->cap * 2 : 256;
		nd->b = realloc(nd->b, nd->cap * sizeof(*nd->b));
		nd->len = realloc(nd->len, nd->cap * sizeof(*nd->len));
		nd->what = realloc(nd->what, nd->cap * sizeof(*nd->what));
		assert_non_null(nd->b);
	}
	assert_true(len <= 24);
	memcpy(nd->b[nd->n], p, len);
	nd->len[nd->n] = len;
	snprintf(nd->what[nd->n], sizeof(nd->what[0]), "%s", what);
	nd->n++;
}

/* Value, its token, and for INT its 8-byte encoding. */
static void needle_val(struct needles *nd, const struct pxc_keys *k, const struct pxc_table *t,
		       int col, const struct pxc_val *v)
{
	uint8_t tok[16], be[8];
	char what[80];

	pxc_token(k, t, col, v, tok);
	snprintf(what, sizeof(what), "token of %s.%s", t->name, t->col[col]);
	needle_add(nd, tok, 16, what);
	if (v->tag == CRY_TAG_TEXT) {
		size_t n = strlen(v->s);
		snprintf(what, sizeof(what), "text \"%.40s\"", v->s);
		needle_add(nd, v->s, n > 24 ? 24 : n, what);
	} else if (v->tag == CRY_TAG_INT) {
		cry_put_be64(be, (uint64_t)v->i);
		snprintf(what, sizeof(what), "int %lld", (long long)v->i);
		needle_add(nd, be, 8, what);
	}
}

/* Raw records of SELECT ALL (ciphertexts under K_U as the proxy stores them):
 * their nonces become needles. */
static void needle_records(struct needles *nd, struct pxc *c, const struct pxc_table *t)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Select sel = LWC__SELECT__INIT;
	uint8_t h[16];
	size_t got = 0;

	pxc_handle(pxc_keys(c), t->name, h);
	sel.table.data = h;
	sel.table.len = 16;
	sel.where = pxc_all();
	req.op_case = LWC__PROXY_REQUEST__OP_SELECT;
	req.select = &sel;
	OK(c, pxc_send(c, &req));
	pxc_pred_free(sel.where);
	for (;;) {
		Lwc__ProxyResponse *r = NULL;
		OK(c, pxc_recv(c, &r));
		if (r->result_case == LWC__PROXY_RESPONSE__RESULT_ROWS) {
			for (size_t i = 0; i < r->rows->n_records; i++) {
				assert_int_equal(r->rows->records[i].len, S_BYTES);
				needle_add(nd, r->rows->records[i].data, 24, "a record's nonce");
				needle_add(nd, r->rows->records[i].data + 60, 24, "a record's bytes");
				got++;
			}
			lwc__proxy_response__free_unpacked(r, NULL);
			continue;
		}
		assert_int_equal(r->result_case, LWC__PROXY_RESPONSE__RESULT_DONE);
		assert_int_equal(r->done->count, got);
		lwc__proxy_response__free_unpacked(r, NULL);
		break;
	}
}

/* memmem without _GNU_SOURCE. */
static const void *find_bytes(const uint8_t *hay, size_t len, const void *needle, size_t n)
{
	const uint8_t *p = hay, *end = hay + len;
	const uint8_t *nd = needle;

	if (n == 0 || n > len)
		return n == 0 ? hay : NULL;
	while ((p = memchr(p, nd[0], (size_t)(end - p) - n + 1)) != NULL) {
		if (memcmp(p, nd, n) == 0)
			return p;
		if (++p > end - n)
			break;
	}
	return NULL;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0, r;

	*len = 0;
	if (f == NULL)
		return NULL;
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	*len = n;
	return buf;
}

/* Fails naming the first needle found in hay: one pass over hay, the first
 * 8 bytes of every position looked up in a hash table of needle prefixes. */
static void scan(const char *where, const uint8_t *hay, size_t len, const struct needles *nd)
{
	size_t size = 1;
	long *slot;

	while (size < nd->n * 4)
		size <<= 1;
	slot = malloc(size * sizeof(*slot));
	assert_non_null(slot);
	for (size_t i = 0; i < size; i++)
		slot[i] = -1;
	for (size_t i = 0; i < nd->n; i++) {
		uint64_t pre;
		size_t h;
		assert_true(nd->len[i] >= 8);
		memcpy(&pre, nd->b[i], 8);
		h = (size_t)((pre * 0x9e3779b97f4a7c15ull) >> 20) & (size - 1);
		while (slot[h] >= 0)
			h = (h + 1) & (size - 1);
		slot[h] = (long)i;
	}
	for (size_t pos = 0; pos + 8 <= len; pos++) {
		uint64_t pre;
		size_t h;
		memcpy(&pre, hay + pos, 8);
		h = (size_t)((pre * 0x9e3779b97f4a7c15ull) >> 20) & (size - 1);
		for (; slot[h] >= 0; h = (h + 1) & (size - 1)) {
			size_t i = (size_t)slot[h];
			if (pos + nd->len[i] <= len && memcmp(hay + pos, nd->b[i], nd->len[i]) == 0) {
				free(slot);
				fail_msg("%s holds %s (at offset %zu)", where, nd->what[i], pos);
			}
		}
	}
	free(slot);
}

static void test_no_plaintext(void **state)
{
	struct env *e = *state;
	struct pxc_table t, gone;
	struct model m = { 0 };
	struct needles nd = { 0 };
	struct pxc_row rows[60];
	const struct pxc_keys *k;
	struct pxc *c;
	uint8_t probe[32];
	uint8_t *hay = NULL;
	size_t hay_len = 0;

	deploy(e, 64, NULL);
	c = conn(e);
	k = pxc_keys(c);
	assert_int_equal(pxc_table_def(&t, "zebratable_x9",
				       "colsecret_q1:int:pk,colsecret_name_q2:text,colsecret_q3:int"), 0);
	assert_int_equal(pxc_table_def(&gone, "droppedtable_secret", "colgone_q7:text"), 0);
	OK(c, pxc_create_table(c, &t, 0));
	OK(c, pxc_create_table(c, &gone, 0));
	for (int i = 0; i < 60; i++) {
		char s[64];
		struct pxc_val v[3];
		snprintf(s, sizeof(s), "zebra-secret-7731-%02d", i);
		v[0] = pxc_int(0x7a3b5c1d00000000ll + i * 0x10001ll);
		v[1] = pxc_text(s);
		v[2] = i % 6 == 0 ? pxc_null() : pxc_int(0x1122334455660000ll + i);
		rows[i] = pxc_row_make(&t, v);
		for (int col = 0; col < 3; col++)
			needle_val(&nd, k, &t, col, &v[col]);
	}
	do_insert(c, &t, &m, rows, 60);
	rows[0] = pxc_row_make(&gone, (struct pxc_val[]){ pxc_text("gone-secret-5521") });
	OK(c, pxc_insert(c, &gone, rows, 1, NULL));
	needle_val(&nd, k, &gone, 0, &rows[0].v[0]);
	needle_records(&nd, c, &t);
	/* a workload: selects, updates (new values), deletes, a dropped table */
	check_select(c, &t, &m, pxc_eq_text(k, &t, "colsecret_name_q2", "zebra-secret-7731-07"));
	{
		struct set_arg a = { 1, pxc_text("zebra-secret-7731-upd"), 0 }, am = a;
		do_update(c, &t, &m, pxc_in(k, &t, "colsecret_q1", (struct pxc_val[]){
			rows[0].v[0], pxc_int(0x7a3b5c1d00000000ll + 5 * 0x10001ll) }, 2),
			set_fn, &a, &am);
		needle_val(&nd, k, &t, 1, &a.val);
	}
	do_delete(c, &t, &m, pxc_is_null(k, &t, "colsecret_q3"), NULL, NULL);
	OK(c, pxc_drop_table(c, &gone, 0));
	needle_records(&nd, c, &t);
	check_table(c, &t, &m);
	/* names, table handles */
	{
		const char *names[] = { "zebratable_x9", "colsecret_q1", "colsecret_name_q2",
					"colsecret_q3", "droppedtable_secret", "colgone_q7" };
		uint8_t h[16];
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			char what[80];
			snprintf(what, sizeof(what), "the name %s", names[i]);
			needle_add(&nd, names[i], strlen(names[i]), what);
		}
		pxc_handle(k, t.name, h);
		needle_add(&nd, h, 16, "the table handle");
		pxc_handle(k, gone.name, h);
		needle_add(&nd, h, 16, "the dropped table's handle");
	}
	pxc_close(c);
	fprintf(stderr, "    %zu needles\n", nd.n);

	/* a positive control: a piece of a stored block must be found */
	{
		struct cs_client *cl = cs_conn(e);
		uint64_t *vers = calloc(e->nblocks, sizeof(uint64_t)), id = 0;
		Lwc__CsResponse *r = NULL;
		char err[256];
		cs_versions(cl, e->nblocks, vers);
		assert_int_equal(cs_client_read(cl, &id, &vers[0], 1, &r, err, sizeof(err)), LWC_OK);
		memcpy(probe, r->read->blocks[0]->data.data + 5000, sizeof(probe));
		cs_client_free_resp(r);
		cs_client_close(cl);
		free(vers);
	}

	if (e->cs.prefix[0]) {
		struct raw r;
		size_t cap = 0;
		uint64_t nb;
		{
			/* every block the store holds (the database may have grown) */
			struct cs_client *cl = cs_conn(e);
			Lwc__CsResponse *st = NULL;
			char err[256];
			assert_int_equal(cs_client_stat(cl, NULL, 0, &st, err, sizeof(err)), LWC_OK);
			nb = st->stat->block_count;
			cs_client_free_resp(st);
			cs_client_close(cl);
		}
		assert_true(nb >= e->nblocks);
		raw_open(&r, e);
		for (uint64_t id = 0; id < nb; id++) {
			const char *argv[2] = { "HVALS", NULL };
			size_t argvlen[2] = { 5, 0 };
			redisReply *rep = rc_one(&r, id, 2, argv, argvlen);
			for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++) {
				const redisReply *v = rep->element[i];
				if (hay_len + v->len > cap) {
					cap = (hay_len + v->len) * 2;
					hay = realloc(hay, cap);
					assert_non_null(hay);
				}
				memcpy(hay + hay_len, v->str, v->len);
				hay_len += v->len;
			}
			freeReplyObject(rep);
		}
		raw_close(&r);
		assert_true(hay_len >= e->nblocks * BLOCK_BYTES);
		assert_non_null(find_bytes(hay, hay_len, probe, sizeof(probe)));
		scan("the Redis Cluster hashes of the blocks", hay, hay_len, &nd);
	} else if (e->cs.db[0]) {
		struct raw r;
		PGresult *res;
		raw_open(&r, e);
		res = pg_q(&r, "SELECT data FROM lwc_blocks", 0, NULL, NULL, PGRES_TUPLES_OK);
		for (int i = 0; i < PQntuples(res); i++)
			hay_len += (size_t)PQgetlength(res, i, 0);
		hay = malloc(hay_len);
		hay_len = 0;
		for (int i = 0; i < PQntuples(res); i++) {
			memcpy(hay + hay_len, PQgetvalue(res, i, 0), (size_t)PQgetlength(res, i, 0));
			hay_len += (size_t)PQgetlength(res, i, 0);
		}
		PQclear(res);
		raw_close(&r);
		assert_true(hay_len >= e->nblocks * BLOCK_BYTES);
		assert_non_null(find_bytes(hay, hay_len, probe, sizeof(probe)));
		scan("the PostgreSQL table lwc_blocks", hay, hay_len, &nd);
	} else if (strcmp(h_backend(), "log") == 0) {
		char dir[420], path[700];
		DIR *d;
		struct dirent *de;

		h_px_stop(&e->px, SIGTERM);
		h_cs_stop(&e->cs, SIGTERM);
		/* every segment of the log (seg-N.log), without the zeros of
		 * its unwritten end */
		snprintf(dir, sizeof(dir), "%s/store", e->cs.dir);
		d = opendir(dir);
		assert_non_null(d);
		while ((de = readdir(d)) != NULL) {
			size_t more_len;
			uint8_t *more;

			if (strncmp(de->d_name, "seg-", 4) != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			more = read_file(path, &more_len);
			assert_non_null(more);
			while (more_len > 0 && more[more_len - 1] == 0)
				more_len--;
			hay = realloc(hay, hay_len + more_len + 1);
			assert_non_null(hay);
			memcpy(hay + hay_len, more, more_len);
			hay_len += more_len;
			free(more);
		}
		closedir(d);
		assert_true(hay_len >= e->nblocks * BLOCK_BYTES);
		assert_non_null(find_bytes(hay, hay_len, probe, sizeof(probe)));
		scan("the log store's segments", hay, hay_len, &nd);
	} else {
		char path[420];
		h_px_stop(&e->px, SIGTERM);
		h_cs_stop(&e->cs, SIGTERM);
		/* every shard's environment: store/ and store/shard-N/ */
		for (unsigned j = 0, k = h_cs_shards(&e->cs); j < k; j++) {
			char dir[400];
			size_t more_len;
			uint8_t *more;

			h_cs_shard_dir(&e->cs, j, dir, sizeof(dir));
			snprintf(path, sizeof(path), "%s/data.mdb", dir);
			more = read_file(path, &more_len);
			assert_non_null(more);
			hay = realloc(hay, hay_len + more_len);
			assert_non_null(hay);
			memcpy(hay + hay_len, more, more_len);
			hay_len += more_len;
			free(more);
		}
		assert_true(hay_len >= e->nblocks * BLOCK_BYTES);
		assert_non_null(find_bytes(hay, hay_len, probe, sizeof(probe)));
		scan("the LMDB store file", hay, hay_len, &nd);
	}
	free(hay);
	/* the cloud store's own trace and log */
	hay = read_file(e->cs.trace, &hay_len);
	if (hay) {
		scan("the cloud store trace", hay, hay_len, &nd);
		free(hay);
	}
	hay = read_file(e->cs.log, &hay_len);
	if (hay) {
		scan("the cloud store log", hay, hay_len, &nd);
		free(hay);
	}
	free(nd.b);
	free(nd.len);
	free(nd.what);
	model_free(&m);
}

/* ---- 4. tampering --------------------------------------------------------------- */

/* The statement failed with an integrity/version error naming one of the
 * blocks ids[0..n), and returned no data. */
static void expect_tamper_at(int line, struct pxc *c, int rc, const uint64_t *ids, size_t n,
			     const char *what)
{
	const char *msg = pxc_errmsg(c);
	int named = 0;

	if (rc != LWC_ERR_INTEGRITY && rc != LWC_ERR_VERSION && rc != LWC_ERR_NOT_FOUND)
		fail_msg("line %d: %s: got %s (%s), expected LWC_ERR_INTEGRITY or LWC_ERR_VERSION",
			 line, what, lwc_errname(rc), msg);
	for (size_t i = 0; i < n; i++) {
		char name[32];
		const char *p = msg;
		snprintf(name, sizeof(name), "block %" PRIu64, ids[i]);
		while ((p = strstr(p, name)) != NULL) {
			char nx = p[strlen(name)];
			if (nx < '0' || nx > '9') {
				named = 1;
				break;
			}
			p++;
		}
	}
	if (!named)
		fail_msg("line %d: %s: the message \"%s\" names none of the damaged blocks", line,
			 what, msg);
	if (pxc_last_records(c) != 0)
		fail_msg("line %d: %s: %zu records returned before the error", line, what,
			 pxc_last_records(c));
}
#define expect_tamper(c, rc, ids, n, what) expect_tamper_at(__LINE__, c, rc, ids, n, what)

struct saved {
	uint64_t id, ver;
	size_t len;
	uint8_t data[BLOCK_BYTES + 64];
};

static void save_block(struct raw *r, uint64_t id, struct saved *s)
{
	s->id = id;
	s->ver = raw_newest(r, id);
	assert_true(s->ver > 0);
	s->len = raw_get(r, id, s->ver, s->data, sizeof(s->data));
	assert_int_equal(s->len, BLOCK_BYTES);
}

static void restore_block(struct raw *r, const struct saved *s)
{
	raw_put(r, s->id, s->ver, s->data, s->len);
}

static void test_tamper_on_raw(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--pad", "ratio:2", "--pad-min", "4", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row row;
	struct saved *s0 = malloc(sizeof(*s0)), *s5 = malloc(sizeof(*s5));
	struct saved *sv = malloc(8 * sizeof(*sv));
	uint8_t *buf = malloc(BLOCK_BYTES + 64);
	const uint64_t b0 = 0, b05[2] = { 0, 5 }, b17[7] = { 1, 2, 3, 4, 5, 6, 7 };
	struct pxc_result res;
	struct raw r;
	struct pxc *c;
	char out[400];
	int rc;

	deploy_mode(e, 8, serve, "off");          /* rows stay where they are put */
	c = conn(e);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	OK(c, pxc_create_table(c, &kv, 0));
	row = kv_row(&kv, 1, "the-only-row");
	do_insert(c, &kv, &m, &row, 1);      /* a fresh deployment: block 0 */
	sel_key(c, &kv, &m, 1);
	pxc_close(c);
	snprintf(out, sizeof(out), "%s/check.out", e->px.dir);

	/* (a) one flipped byte inside the ciphertext of block 0 */
	raw_open(&r, e);
	save_block(&r, 0, s0);
	memcpy(buf, s0->data, s0->len);
	buf[1000] ^= 0x01;
	raw_put(&r, 0, s0->ver, buf, s0->len);
	raw_close(&r);
	c = conn(e);
	rc = pxc_select(c, &kv, pxc_eq_int(pxc_keys(c), &kv, "k", 1), 0, &res);
	expect_tamper(c, rc, &b0, 1, "SELECT over a flipped byte");
	rc = pxc_select(c, &kv, NULL, 0, &res);
	expect_tamper(c, rc, &b0, 1, "SELECT ALL over a flipped byte");
	row = kv_row(&kv, 2, "x");          /* goes to block 0, the lowest with room */
	expect_tamper(c, pxc_insert(c, &kv, &row, 1, NULL), &b0, 1, "INSERT into a flipped block");
	{
		struct set_arg a = { 1, pxc_text("y"), 0 };
		rc = pxc_update(c, &kv, pxc_eq_int(pxc_keys(c), &kv, "k", 1), set_fn, &a, NULL);
		expect_tamper(c, rc, &b0, 1, "UPDATE over a flipped byte");
		assert_int_equal(a.calls, 0);
	}
	pxc_close(c);
	/* the offline check finds it too */
	h_px_stop(&e->px, SIGTERM);
	rc = h_px_check(&e->px, out);
	if (rc != 1) {
		h_tail(out, 10);
		fail_msg("lwc-proxy check on a damaged store exited %d, expected 1", rc);
	}
	if (h_count_lines(out, "block 0") < 1) {
		h_tail(out, 10);
		fail_msg("lwc-proxy check does not name block 0");
	}
	raw_open(&r, e);
	restore_block(&r, s0);
	raw_close(&r);
	rc = h_px_check(&e->px, out);
	if (rc != 0) {
		h_tail(out, 10);
		fail_msg("lwc-proxy check after the repair exited %d", rc);
	}
	h_px_start(&e->px, e->serve);
	c = conn(e);
	sel_key(c, &kv, &m, 1);              /* intact again: nothing was written */
	pxc_close(c);

	/* (b) the clear version field */
	raw_open(&r, e);
	save_block(&r, 0, s0);
	memcpy(buf, s0->data, s0->len);
	buf[7] ^= 0x01;
	raw_put(&r, 0, s0->ver, buf, s0->len);
	raw_close(&r);
	c = conn(e);
	rc = pxc_select(c, &kv, pxc_eq_int(pxc_keys(c), &kv, "k", 1), 0, &res);
	expect_tamper(c, rc, &b0, 1, "SELECT over a changed version field");
	pxc_close(c);
	raw_open(&r, e);
	restore_block(&r, s0);
	raw_close(&r);

	/* (c) blocks 0 and 5 swapped */
	raw_open(&r, e);
	save_block(&r, 0, s0);
	save_block(&r, 5, s5);
	raw_put(&r, 0, s0->ver, s5->data, s5->len);
	raw_put(&r, 5, s5->ver, s0->data, s0->len);
	raw_close(&r);
	c = conn(e);
	rc = pxc_select(c, &kv, pxc_eq_int(pxc_keys(c), &kv, "k", 1), 0, &res);
	expect_tamper(c, rc, b05, 2, "SELECT over swapped blocks");
	pxc_close(c);
	raw_open(&r, e);
	restore_block(&r, s0);
	restore_block(&r, s5);
	raw_close(&r);

	/* (d) rollback: the previous version of block 0 put back as the current one */
	c = conn(e);
	sel_key(c, &kv, &m, 1);
	pxc_close(c);
	raw_open(&r, e);
	save_block(&r, 0, s0);
	assert_true(s0->ver >= 2);
	assert_int_equal(raw_get(&r, 0, s0->ver - 1, buf, BLOCK_BYTES + 64), BLOCK_BYTES);
	raw_put(&r, 0, s0->ver, buf, BLOCK_BYTES);
	raw_close(&r);
	c = conn(e);
	rc = pxc_select(c, &kv, pxc_eq_int(pxc_keys(c), &kv, "k", 1), 0, &res);
	expect_tamper(c, rc, &b0, 1, "SELECT over a rolled-back block");
	pxc_close(c);
	/* ... and with its clear version field forged to the current version */
	raw_open(&r, e);
	cry_put_be64(buf, s0->ver);
	raw_put(&r, 0, s0->ver, buf, BLOCK_BYTES);
	raw_close(&r);
	c = conn(e);
	rc = pxc_select(c, &kv, pxc_eq_int(pxc_keys(c), &kv, "k", 1), 0, &res);
	expect_tamper(c, rc, &b0, 1, "SELECT over a rolled-back block with a forged version");
	pxc_close(c);
	raw_open(&r, e);
	restore_block(&r, s0);
	raw_close(&r);

	/* (e) padding blocks are checked too: every block but 0 damaged */
	raw_open(&r, e);
	for (int i = 1; i < 8; i++) {
		save_block(&r, (uint64_t)i, &sv[i]);
		memcpy(buf, sv[i].data, sv[i].len);
		buf[3000 + i] ^= 0x80;
		raw_put(&r, (uint64_t)i, sv[i].ver, buf, sv[i].len);
	}
	raw_close(&r);
	c = conn(e);
	rc = pxc_select(c, &kv, pxc_eq_int(pxc_keys(c), &kv, "k", 1), 0, &res);
	expect_tamper(c, rc, b17, 7, "SELECT with damaged padding blocks");
	pxc_close(c);
	raw_open(&r, e);
	for (int i = 1; i < 8; i++)
		restore_block(&r, &sv[i]);
	raw_close(&r);

	/* (f) the current version of block 0 lost */
	raw_open(&r, e);
	save_block(&r, 0, s0);
	raw_del(&r, 0, s0->ver);
	raw_close(&r);
	c = conn(e);
	rc = pxc_select(c, &kv, pxc_eq_int(pxc_keys(c), &kv, "k", 1), 0, &res);
	expect_tamper(c, rc, &b0, 1, "SELECT over a lost block");
	pxc_close(c);
	raw_open(&r, e);
	if (r.pg) {
		uint8_t k8[16];
		const char *v[3] = { (const char *)k8, (const char *)k8 + 8, (const char *)s0->data };
		int l[3] = { 8, 8, (int)s0->len };
		cry_put_be64(k8, 0);
		cry_put_be64(k8 + 8, s0->ver);
		PQclear(pg_q(&r, "INSERT INTO lwc_blocks (id, version, data) VALUES "
			     "($1::int8, $2::int8, $3::bytea)", 3, v, l, PGRES_COMMAND_OK));
	} else {
		restore_block(&r, s0);
	}
	raw_close(&r);

	/* after all that, the data is intact and the store consistent */
	c = conn(e);
	sel_key(c, &kv, &m, 1);
	row = kv_row(&kv, 2, "second");
	do_insert(c, &kv, &m, &row, 1);
	check_table(c, &kv, &m);
	pxc_close(c);
	h_px_stop(&e->px, SIGTERM);
	rc = h_px_check(&e->px, out);
	if (rc != 0) {
		h_tail(out, 10);
		fail_msg("lwc-proxy check at the end exited %d", rc);
	}
	free(s0);
	free(s5);
	free(sv);
	free(buf);
	model_free(&m);
}

/* It reaches into the store's own format (raw_open): skipped on the log
 * store before it allocates anything. */
static void test_tamper(void **state)
{
	if (strcmp(h_backend(), "log") == 0)
		skip();
	test_tamper_on_raw(state);
}

/* ---- 5. kill -9 ------------------------------------------------------------------ */

enum { OP_INSERT, OP_UPDATE, OP_DELETE, OP_IDELETE };

struct crash_op {
	int kind;
	int n;
	int64_t keys[4];
	char s[32];
};

static long kv3_find(const struct model *m, int64_t key)
{
	struct pxc_val v = pxc_int(key);

	return model_find(m, 0, &v);
}

static struct pxc_row kv3_row(const struct pxc_table *t, int64_t key, int64_t v, const char *s)
{
	struct pxc_val vals[3] = { pxc_int(key), pxc_int(v), pxc_text(s) };

	return pxc_row_make(t, vals);
}

/* Apply op to the model; returns the count the proxy must report. */
static size_t crash_apply(struct model *m, const struct pxc_table *t, const struct crash_op *op)
{
	size_t n = 0;

	for (int i = 0; i < op->n; i++) {
		long j = kv3_find(m, op->keys[i]);
		if (op->kind == OP_INSERT) {
			char s[32];
			struct pxc_row r;
			snprintf(s, sizeof(s), "i%lld", (long long)op->keys[i]);
			r = kv3_row(t, op->keys[i], 0, s);
			model_add(m, &r);
			n++;
		} else if (j >= 0 && op->kind == OP_UPDATE) {
			m->rows[j].v[1].i++;
			m->rows[j].v[2] = pxc_text(op->s);
			n++;
		} else if (j >= 0) {       /* OP_DELETE, OP_IDELETE */
			model_del(m, (size_t)j);
			n++;
		}
	}
	return n;
}

struct crash_upd {
	const char *s;
};

static int crash_upd_fn(void *p, const struct pxc_row *old, struct pxc_row *nw)
{
	struct crash_upd *a = p;

	nw->v[1].i = old->v[1].i + 1;
	nw->v[2] = pxc_text(a->s);
	(void)old;
	return 1;
}

static int yes_fn(void *p, const struct pxc_row *old, struct pxc_row *nw)
{
	(void)p;
	(void)old;
	(void)nw;
	return 1;
}

static int crash_run(struct pxc *c, const struct pxc_table *t, const struct crash_op *op,
		     uint64_t *count)
{
	struct pxc_val keys[4];
	struct crash_upd a = { op->s };

	for (int i = 0; i < op->n; i++)
		keys[i] = pxc_int(op->keys[i]);
	switch (op->kind) {
	case OP_INSERT: {
		struct pxc_row rows[4];
		for (int i = 0; i < op->n; i++) {
			char s[32];
			snprintf(s, sizeof(s), "i%lld", (long long)op->keys[i]);
			rows[i] = kv3_row(t, op->keys[i], 0, s);
		}
		return pxc_insert(c, t, rows, (size_t)op->n, count);
	}
	case OP_UPDATE:
		return pxc_update(c, t, pxc_in(pxc_keys(c), t, "k", keys, (size_t)op->n),
				  crash_upd_fn, &a, count);
	case OP_DELETE:
		return pxc_delete(c, t, pxc_in(pxc_keys(c), t, "k", keys, (size_t)op->n),
				  NULL, NULL, count);
	default:
		return pxc_delete(c, t, pxc_in(pxc_keys(c), t, "k", keys, (size_t)op->n),
				  yes_fn, NULL, count);
	}
}

struct killer_arg {
	pid_t pid;
	int delay_us;
};

static void *killer(void *p)
{
	struct killer_arg *k = p;

	usleep((useconds_t)k->delay_us);
	kill(k->pid, SIGKILL);
	return NULL;
}

/* Values ever held (dead ones included) per column, for IN probes. */
struct seen_vals {
	struct pxc_val *v;
	size_t n, cap;
};

static void seen_add(struct seen_vals *s, const struct pxc_val *v)
{
	for (size_t i = 0; i < s->n; i++)
		if (pxc_val_eq(&s->v[i], v))
			return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 128;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		assert_non_null(s->v);
	}
	s->v[s->n++] = *v;
}

/* Every index entry points to a live matching record: IN over every value
 * ever used, column by column, in chunks; with per_row also EQ on every
 * column of every row. */
static void check_indexes(struct pxc *c, const struct pxc_table *t, const struct model *m,
			  struct seen_vals *seen, int per_row)
{
	for (int col = 0; col < t->ncols; col++) {
		for (size_t i = 0; i < m->n; i++)
			seen_add(&seen[col], &m->rows[i].v[col]);
		for (size_t off = 0; off < seen[col].n; off += 200) {
			size_t n = seen[col].n - off < 200 ? seen[col].n - off : 200;
			check_select(c, t, m, pxc_in(pxc_keys(c), t, t->col[col],
						     seen[col].v + off, n));
		}
	}
	if (!per_row)
		return;
	for (size_t i = 0; i < m->n; i++)
		for (int col = 0; col < t->ncols; col++)
			check_select(c, t, m, pxc_eq(pxc_keys(c), t, t->col[col], m->rows[i].v[col]));
}

static void test_crash_kill9(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--pad", "ratio:2", "--pad-min", "4", NULL };
	const char *env_rounds = getenv("LWC_PX_CRASH_ROUNDS");
	int rounds = env_rounds ? atoi(env_rounds) : 50;
	struct pxc_table t;
	struct model m = { 0 };
	struct seen_vals seen[3] = { { 0 } };
	uint32_t seed = (uint32_t)time(NULL) ^ (uint32_t)getpid();
	int64_t next_key = 1;
	int total_acked = 0, applied_n = 0, absent_n = 0, none_n = 0;
	char out[400];
	struct pxc *c;

	fprintf(stderr, "    seed %u, %d rounds\n", seed, rounds);
	deploy(e, 64, serve);
	snprintf(out, sizeof(out), "%s/check.out", e->px.dir);
	assert_int_equal(pxc_table_def(&t, "kv", "k:int:pk,v:int,s:text"), 0);
	c = conn(e);
	OK(c, pxc_create_table(c, &t, 0));
	pxc_close(c);

	for (int round = 0; round < rounds; round++) {
		struct killer_arg ka = { e->px.pid, 1000 + (int)(rand_r(&seed) % 60000) };
		struct crash_op op = { 0 };
		struct model alt;
		struct pxc_result res;
		pthread_t th;
		int inflight = 0, acked = 0, st;

		assert_int_equal(pthread_create(&th, NULL, killer, &ka), 0);
		{
			char err[256];
			if (pxc_connect(&c, e->px.addr, "alice", e->alice, e->px.ku, err,
					sizeof(err)) != LWC_OK)
				c = NULL;
		}
		while (c) {
			uint64_t cnt = 0;
			size_t want;
			int rc, dice = (int)(rand_r(&seed) % 100);
			memset(&op, 0, sizeof(op));
			if (m.n < 4 || dice < (m.n > 80 ? 25 : 45)) {
				op.kind = OP_INSERT;
				op.n = 1 + (int)(rand_r(&seed) % 4);
				for (int i = 0; i < op.n; i++)
					op.keys[i] = next_key++;
			} else {
				op.kind = dice < 75 ? OP_UPDATE : dice < 90 ? OP_DELETE : OP_IDELETE;
				op.n = 1 + (int)(rand_r(&seed) % 3);
				for (int i = 0; i < op.n; i++)
					op.keys[i] = rand_r(&seed) % 5 == 0 ? next_key + 1000 :
						m.rows[rand_r(&seed) % m.n].v[0].i;
				for (int i = 1; i < op.n; i++)       /* distinct keys */
					for (int j = 0; j < i; j++)
						if (op.keys[j] == op.keys[i]) {
							op.keys[i--] = op.keys[--op.n];
							break;
						}
				snprintf(op.s, sizeof(op.s), "u%d-%d", round, acked);
			}
			inflight = 1;
			rc = crash_run(c, &t, &op, &cnt);
			if (rc == LWC_ERR_CLOSED || rc == LWC_ERR_IO || rc == LWC_ERR_TIMEOUT)
				break;
			if (rc != LWC_OK)
				fail_msg("round %d: statement failed: %s (%s)", round, lwc_errname(rc),
					 pxc_errmsg(c));
			inflight = 0;
			want = crash_apply(&m, &t, &op);
			if (cnt != want)
				fail_msg("round %d: Done.count %" PRIu64 ", expected %zu", round, cnt, want);
			acked++;
		}
		pthread_join(th, NULL);
		pxc_close(c);
		while (waitpid(e->px.pid, &st, 0) < 0 && errno == EINTR)
			;
		e->px.pid = 0;
		total_acked += acked;

		/* offline check, restart */
		st = h_px_check(&e->px, out);
		if (st != 0) {
			h_tail(out, 20);
			fail_msg("round %d: lwc-proxy check exited %d after kill -9", round, st);
		}
		h_px_start(&e->px, e->serve);
		c = conn(e);

		/* every acknowledged statement is there; the one in flight is all or nothing */
		OK(c, pxc_select(c, &t, NULL, 0, &res));
		model_copy(&alt, &m);
		if (inflight)
			crash_apply(&alt, &t, &op);
		if (rows_equal(res.rows, res.n, m.rows, m.n)) {
			if (inflight)
				absent_n++;
			else
				none_n++;
		} else if (inflight && rows_equal(res.rows, res.n, alt.rows, alt.n)) {
			applied_n++;
			model_free(&m);
			model_copy(&m, &alt);
		} else {
			fprintf(stderr, "round %d: state after kill -9 matches neither the acknowledged "
				"statements nor them plus the one in flight (kind %d)\n", round, op.kind);
			print_rows("acknowledged", m.rows, m.n);
			if (inflight)
				print_rows("with the one in flight", alt.rows, alt.n);
			print_rows("found", res.rows, res.n);
			fail_msg("round %d: lost or half-applied statement", round);
		}
		model_free(&alt);
		pxc_result_free(&res);
		check_indexes(c, &t, &m, seen, round % 10 == 9 || round == rounds - 1);
		pxc_close(c);
	}
	fprintf(stderr, "    %d rounds, %d statements acknowledged; in flight at the kill: "
		"%d applied, %d absent, %d none\n", rounds, total_acked, applied_n, absent_n, none_n);
	for (int i = 0; i < 3; i++)
		free(seen[i].v);
	model_free(&m);
}

/* ---- 6. concurrent clients --------------------------------------------------------- */

#define NCLIENTS 32
#define NITER    6
#define NSHARED  4
#define NUSERS   4

struct worker {
	struct env *e;
	int id;
	const char *user;
	const uint8_t *key;
	const struct pxc_table *ctr, *log;
	int ok;
	char err[512];
};

static int incr_fn(void *p, const struct pxc_row *old, struct pxc_row *nw)
{
	int *calls = p;

	(*calls)++;
	nw->v[2].i = old->v[2].i + 1;
	return 1;
}

static int wfail(struct worker *w, const char *what, struct pxc *c, int rc)
{
	snprintf(w->err, sizeof(w->err), "client %d: %s: %s (%s)", w->id, what, lwc_errname(rc),
		 c ? pxc_errmsg(c) : "");
	pxc_close(c);
	return 0;
}

static int worker_run(struct worker *w)
{
	struct pxc *c = NULL;
	char err[256];
	int rc;
	int64_t mine[2] = { 0, 0 };

	rc = pxc_connect(&c, w->e->px.addr, w->user, w->key, w->e->px.ku, err, sizeof(err));
	if (rc != LWC_OK) {
		snprintf(w->err, sizeof(w->err), "client %d: connect: %s (%s)", w->id,
			 lwc_errname(rc), err);
		return 0;
	}
	for (int i = 0; i < NITER; i++) {
		const struct pxc_keys *k = pxc_keys(c);
		int64_t own = w->id * 10 + i % 2, shared = 1000 + (w->id + i) % NSHARED;
		uint64_t cnt = 0;
		int calls = 0;
		char note[32];
		struct pxc_row row;
		struct pxc_result res;

		/* own counter: interactive increment */
		rc = pxc_update(c, w->ctr, pxc_eq_int(k, w->ctr, "id", own), incr_fn, &calls, &cnt);
		if (rc != LWC_OK || cnt != 1 || calls != 1)
			return wfail(w, "UPDATE own counter", c, rc ? rc : LWC_ERR_PROTO);
		mine[i % 2]++;
		/* a shared counter */
		calls = 0;
		rc = pxc_update(c, w->ctr, pxc_eq_int(k, w->ctr, "id", shared), incr_fn, &calls, &cnt);
		if (rc != LWC_OK || cnt != 1 || calls != 1)
			return wfail(w, "UPDATE shared counter", c, rc ? rc : LWC_ERR_PROTO);
		/* a log row */
		snprintf(note, sizeof(note), "c%d-i%d", w->id, i);
		row = pxc_row_make(w->log, (struct pxc_val[]){ pxc_int(w->id * 1000 + i),
							       pxc_int(w->id), pxc_text(note) });
		rc = pxc_insert(c, w->log, &row, 1, &cnt);
		if (rc != LWC_OK || cnt != 1)
			return wfail(w, "INSERT log", c, rc ? rc : LWC_ERR_PROTO);
		/* delete an older log row now and then */
		if (i >= 2 && (i - 2) % 2 == 0) {
			rc = pxc_delete(c, w->log, pxc_eq_int(k, w->log, "id", w->id * 1000 + i - 2),
					NULL, NULL, &cnt);
			if (rc != LWC_OK || cnt != 1)
				return wfail(w, "DELETE log", c, rc ? rc : LWC_ERR_PROTO);
		}
		/* read your writes */
		rc = pxc_select(c, w->ctr, pxc_eq_int(k, w->ctr, "owner", w->id), 0, &res);
		if (rc != LWC_OK)
			return wfail(w, "SELECT own counters", c, rc);
		if (res.n != 2) {
			pxc_result_free(&res);
			return wfail(w, "SELECT own counters: not 2 rows", c, LWC_ERR_PROTO);
		}
		for (size_t j = 0; j < 2; j++) {
			int64_t id = res.rows[j].v[0].i, n = res.rows[j].v[2].i;
			if (n != mine[id % 10]) {
				snprintf(w->err, sizeof(w->err), "client %d: counter %lld is %lld, "
					 "expected %lld", w->id, (long long)id, (long long)n,
					 (long long)mine[id % 10]);
				pxc_result_free(&res);
				pxc_close(c);
				return 0;
			}
		}
		pxc_result_free(&res);
	}
	pxc_close(c);
	return 1;
}

static void *worker_main(void *p)
{
	struct worker *w = p;

	w->ok = worker_run(w);
	return NULL;
}

static void test_concurrent(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--pad", "ratio:2", "--pad-min", "4", NULL };
	struct pxc_table ctr, log;
	struct model mc = { 0 }, ml = { 0 };
	struct pxc_row rows[NCLIENTS * 2 + NSHARED];
	uint8_t keys[NUSERS][32];
	char names[NUSERS][16];
	struct worker w[NCLIENTS];
	pthread_t th[NCLIENTS];
	struct timespec t0, t1;
	struct pxc *c;
	size_t n = 0;
	double secs;

	deploy(e, 256, serve);
	for (int u = 0; u < NUSERS; u++) {
		snprintf(names[u], sizeof(names[u]), "user%d", u);
		assert_int_equal(h_px_user_add(&e->px, names[u], keys[u]), 0);
	}
	assert_int_equal(pxc_table_def(&ctr, "counters", "id:int:pk,owner:int,n:int"), 0);
	assert_int_equal(pxc_table_def(&log, "log", "id:int:pk,client:int,note:text"), 0);
	c = conn(e);
	OK(c, pxc_create_table(c, &ctr, 0));
	OK(c, pxc_create_table(c, &log, 0));
	for (int i = 0; i < NCLIENTS; i++)
		for (int j = 0; j < 2; j++)
			rows[n++] = pxc_row_make(&ctr, (struct pxc_val[]){ pxc_int(i * 10 + j),
									   pxc_int(i), pxc_int(0) });
	for (int j = 0; j < NSHARED; j++)
		rows[n++] = pxc_row_make(&ctr, (struct pxc_val[]){ pxc_int(1000 + j), pxc_int(-1),
								   pxc_int(0) });
	do_insert(c, &ctr, &mc, rows, n);
	pxc_close(c);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < NCLIENTS; i++) {
		w[i] = (struct worker){ e, i, names[i % NUSERS], keys[i % NUSERS], &ctr, &log, 0, "" };
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < NCLIENTS; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "    %d clients x %d iterations in %.2f s\n", NCLIENTS, NITER, secs);
	for (int i = 0; i < NCLIENTS; i++)
		if (!w[i].ok)
			fail_msg("%s", w[i].err);
	if (secs > 120)
		fail_msg("concurrent workload took %.0f s", secs);

	/* the serial reference */
	for (int i = 0; i < NCLIENTS; i++) {
		for (int it = 0; it < NITER; it++) {
			char note[32];
			struct pxc_row r;
			long j = model_find(&mc, 0, &(struct pxc_val){ .tag = CRY_TAG_INT,
								       .i = i * 10 + it % 2 });
			mc.rows[j].v[2].i++;
			j = model_find(&mc, 0, &(struct pxc_val){ .tag = CRY_TAG_INT,
								  .i = 1000 + (i + it) % NSHARED });
			mc.rows[j].v[2].i++;
			snprintf(note, sizeof(note), "c%d-i%d", i, it);
			r = pxc_row_make(&log, (struct pxc_val[]){ pxc_int(i * 1000 + it), pxc_int(i),
								   pxc_text(note) });
			model_add(&ml, &r);
			if (it >= 2 && (it - 2) % 2 == 0) {
				j = model_find(&ml, 0, &(struct pxc_val){ .tag = CRY_TAG_INT,
									  .i = i * 1000 + it - 2 });
				model_del(&ml, (size_t)j);
			}
		}
	}
	c = conn(e);
	check_table(c, &ctr, &mc);
	check_table(c, &log, &ml);
	check_select(c, &ctr, &mc, pxc_eq_int(pxc_keys(c), &ctr, "owner", -1));
	pxc_close(c);
	model_free(&mc);
	model_free(&ml);
}

/* ---- group commit -------------------------------------------------------------------- */

/* SELECTs that finish together commit as one transaction (engine.c,
 * commit_selects).  32 clients each read ranges of 16 rows of a relocating
 * table, with 5 ms to the cloud so that they overlap: every answer is the
 * range's rows, some commits were groups, and the state is whole (every row
 * where the state says, lwc-proxy check).  Then the proxy is killed while
 * the clients run and started again: every row is read back as it was
 * (a group commits whole or not at all). */
#define GC_CLIENTS 32
#define GC_GROUPS  100          /* ranges of 16 rows: 1,600 rows */

struct gc_client {
	struct env *e;
	const struct pxc_table *t;
	int id, stmts, until_error, ok;
	char err[400];
};

static void *gc_client_main(void *p)
{
	struct gc_client *g = p;
	struct pxc *c = NULL;
	char err[256];
	uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)(g->id + 1);

	if (pxc_connect(&c, g->e->px.addr, "alice", g->e->alice, g->e->px.ku, err,
			sizeof(err)) != LWC_OK) {
		if (!g->until_error)    /* (else: killed before it connected) */
			snprintf(g->err, sizeof(g->err), "client %d: connect: %s", g->id, err);
		return NULL;
	}
	for (int i = 0; g->until_error || i < g->stmts; i++) {
		struct pxc_result res;
		int64_t v;
		int rc;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = (int64_t)(x % GC_GROUPS);
		rc = pxc_select(c, g->t, pxc_eq_int(pxc_keys(c), g->t, "g", v), 0, &res);
		if (rc != LWC_OK) {
			if (g->until_error)
				break;          /* the proxy was killed */
			snprintf(g->err, sizeof(g->err), "client %d: SELECT g = %lld: %s (%s)",
				 g->id, (long long)v, lwc_errname(rc), pxc_errmsg(c));
			pxc_close(c);
			return NULL;
		}
		if (res.n != 16)
			snprintf(g->err, sizeof(g->err), "client %d: g = %lld gave %zu rows", g->id,
				 (long long)v, res.n);
		for (size_t j = 0; j < res.n && !g->err[0]; j++) {
			int64_t k = res.rows[j].v[0].i;
			char want[32];

			snprintf(want, sizeof(want), "v%lld", (long long)k);
			if (k / 16 != v || res.rows[j].v[1].i != v || strcmp(res.rows[j].v[2].s, want))
				snprintf(g->err, sizeof(g->err), "client %d: g = %lld gave the row "
					 "(%lld, %lld, %s)", g->id, (long long)v, (long long)k,
					 (long long)res.rows[j].v[1].i, res.rows[j].v[2].s);
		}
		pxc_result_free(&res);
		if (g->err[0]) {
			pxc_close(c);
			return NULL;
		}
	}
	pxc_close(c);
	g->ok = 1;
	return NULL;
}

static void gc_run(struct env *e, const struct pxc_table *t, struct gc_client *g, int stmts,
		   int kill_after_ms)
{
	pthread_t th[GC_CLIENTS];

	for (int i = 0; i < GC_CLIENTS; i++) {
		g[i] = (struct gc_client){ .e = e, .t = t, .id = i, .stmts = stmts,
					   .until_error = kill_after_ms > 0 };
		assert_int_equal(pthread_create(&th[i], NULL, gc_client_main, &g[i]), 0);
	}
	if (kill_after_ms > 0) {
		usleep((useconds_t)kill_after_ms * 1000);
		h_px_stop(&e->px, SIGKILL);
	}
	for (int i = 0; i < GC_CLIENTS; i++)
		pthread_join(th[i], NULL);
}

static void test_group_commit(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--pad", "ratio:2", "--pad-min", "4", "--rtt-ms", "5", NULL };
	struct pxc_table t;
	struct model m = { 0 };
	struct pxc_row *rows = calloc(GC_GROUPS * 16, sizeof(*rows));
	struct gc_client g[GC_CLIENTS];
	char out[PATH_MAX];
	uint64_t groups, grouped, moved, waits, wait_us;
	struct timespec t0, t1;
	double run_us;
	struct pxc *c;
	int rc;

	assert_non_null(rows);
	deploy(e, 256, serve);
	assert_int_equal(pxc_table_def(&t, "gr", "k:int:pk,g:int,s:text"), 0);
	c = conn(e);
	OK(c, pxc_create_table(c, &t, 0));
	for (int k = 0; k < GC_GROUPS * 16; k++) {
		char s[32];

		snprintf(s, sizeof(s), "v%d", k);
		rows[k] = pxc_row_make(&t, (struct pxc_val[]){ pxc_int(k), pxc_int(k / 16),
							       pxc_text(s) });
	}
	for (int b = 0; b < GC_GROUPS * 16; b += 400)
		do_insert(c, &t, &m, rows + b, 400);
	pxc_close(c);
	moved = px_status_u64(e, "rows_relocated");
	waits = px_status_u64(e, "plan_waits");
	wait_us = px_status_u64(e, "plan_wait_us");
	assert_true(waits != UINT64_MAX && wait_us != UINT64_MAX);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	gc_run(e, &t, g, 20, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	run_us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
	for (int i = 0; i < GC_CLIENTS; i++)
		if (!g[i].ok)
			fail_msg("%s", g[i].err);
	groups = px_status_u64(e, "group_commits");
	grouped = px_status_u64(e, "grouped_selects");
	waits = px_status_u64(e, "plan_waits") - waits;
	wait_us = px_status_u64(e, "plan_wait_us") - wait_us;
	fprintf(stderr, "    %d SELECTs: %llu in %llu group commits, %llu rows moved, "
		"%llu plans waited %.1f ms in all\n",
		GC_CLIENTS * 20, (unsigned long long)grouped, (unsigned long long)groups,
		(unsigned long long)(px_status_u64(e, "rows_relocated") - moved),
		(unsigned long long)waits, (double)wait_us / 1e3);
	/* the waits' time: some when plans waited, none when none did, and
	 * no more than every client waiting the whole run */
	assert_true(waits > 0 ? wait_us > 0 : wait_us == 0);
	assert_true((double)wait_us <= GC_CLIENTS * run_us);
	assert_true(groups > 0);
	assert_true(grouped >= 2 * groups && grouped <= GC_CLIENTS * 20);
	assert_true(px_status_u64(e, "rows_relocated") > moved);
	c = conn(e);
	check_table(c, &t, &m);
	pxc_close(c);
	h_px_stop(&e->px, SIGTERM);
	snprintf(out, sizeof(out), "%s/check-gc.out", e->px.dir);
	if ((rc = h_px_check(&e->px, out)) != 0) {
		h_tail(out, 20);
		fail_msg("lwc-proxy check after the group commits exited %d", rc);
	}

	/* killed while 32 clients read: every answer before the kill right,
	 * every row as it was */
	h_px_start(&e->px, e->serve);
	gc_run(e, &t, g, 0, 400);
	for (int i = 0; i < GC_CLIENTS; i++)
		if (g[i].err[0])
			fail_msg("before the kill: %s", g[i].err);
	h_px_start(&e->px, e->serve);
	c = conn(e);
	check_table(c, &t, &m);
	pxc_close(c);
	h_px_stop(&e->px, SIGTERM);
	if ((rc = h_px_check(&e->px, out)) != 0) {
		h_tail(out, 20);
		fail_msg("lwc-proxy check after a kill during group commits exited %d", rc);
	}
	model_free(&m);
	free(rows);
}

/* ---- 7. revocation ------------------------------------------------------------------ */

static void test_revoke(void **state)
{
	struct env *e = *state;
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row row;
	uint8_t bob[32], wrong[32];
	struct pxc *ca, *cb, *cx = NULL;
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__ListTables lt = LWC__LIST_TABLES__INIT;
	Lwc__ProxyResponse *r = NULL;
	char err[512], out[400];
	int rc;

	deploy(e, 64, NULL);
	assert_int_equal(h_px_user_add(&e->px, "bob", bob), 0);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	ca = conn(e);
	cb = conn_as(e, "bob", bob);
	OK(ca, pxc_create_table(ca, &kv, 0));
	row = kv_row(&kv, 1, "a");
	do_insert(ca, &kv, &m, &row, 1);
	check_table(cb, &kv, &m);

	/* user list shows both */
	snprintf(out, sizeof(out), "%s/list.out", e->px.dir);
	assert_int_equal(h_px_cli(&e->px, out, "user", "list", "--state", e->px.state,
				  (const char *)NULL), 0);
	assert_true(h_count_lines(out, "alice") >= 1);
	assert_true(h_count_lines(out, "bob") >= 1);

	/* revoke alice while connected */
	assert_int_equal(h_px_user_revoke(&e->px, "alice"), 0);
	req.op_case = LWC__PROXY_REQUEST__OP_LIST_TABLES;
	req.list_tables = &lt;
	rc = pxc_send(ca, &req);
	if (rc == LWC_OK)
		rc = pxc_recv(ca, &r);
	if (rc != LWC_OK)
		fail_msg("revoked user's request: %s (%s) instead of an LWC_ERR_REVOKED answer",
			 lwc_errname(rc), pxc_errmsg(ca));
	if (r->result_case != LWC__PROXY_RESPONSE__RESULT_ERROR)
		fail_msg("revoked user's request answered with result %d", (int)r->result_case);
	assert_int_equal(r->error->code, LWC_ERR_REVOKED);
	assert_non_null(strstr(r->error->message, "revoked"));
	lwc__proxy_response__free_unpacked(r, NULL);
	r = NULL;
	/* then the connection closes */
	rc = pxc_recv(ca, &r);
	if (rc != LWC_ERR_CLOSED && rc != LWC_ERR_IO)
		fail_msg("revoked user's connection still open (%s)", lwc_errname(rc));
	pxc_close(ca);

	/* bob carries on */
	row = kv_row(&kv, 2, "b");
	do_insert(cb, &kv, &m, &row, 1);
	check_table(cb, &kv, &m);

	/* alice cannot come back */
	rc = pxc_connect(&cx, e->px.addr, "alice", e->alice, e->px.ku, err, sizeof(err));
	assert_null(cx);
	if (rc != LWC_ERR_REVOKED || strstr(err, "revoked") == NULL)
		fail_msg("reconnecting a revoked user: %s (%s), expected LWC_ERR_REVOKED", lwc_errname(rc),
			 err);
	/* unknown user, wrong key */
	rc = pxc_connect(&cx, e->px.addr, "mallory", bob, e->px.ku, err, sizeof(err));
	if (rc != LWC_ERR_AUTH && rc != LWC_ERR_NO_USER)
		fail_msg("unknown user: %s (%s)", lwc_errname(rc), err);
	memcpy(wrong, bob, 32);
	wrong[31] ^= 1;
	rc = pxc_connect(&cx, e->px.addr, "bob", wrong, e->px.ku, err, sizeof(err));
	if (rc != LWC_ERR_AUTH)
		fail_msg("wrong key: %s (%s), expected LWC_ERR_AUTH", lwc_errname(rc), err);
	/* a second bob connection works alongside the first */
	cx = conn_as(e, "bob", bob);
	check_table(cx, &kv, &m);
	pxc_close(cx);

	/* user list marks alice revoked; status works; adding a taken name is refused */
	assert_int_equal(h_px_cli(&e->px, out, "user", "list", "--state", e->px.state,
				  (const char *)NULL), 0);
	assert_true(h_count_lines(out, "alice") >= 1);
	assert_true(h_count_lines(out, "revoked") >= 1);
	assert_int_equal(h_px_cli(&e->px, out, "status", "--state", e->px.state,
				  (const char *)NULL), 0);
	{
		uint8_t k2[32];
		char log[400];
		snprintf(log, sizeof(log), "%s/dup.out", e->px.dir);
		/* h_px_user_add logs through the harness; a refusal is expected here */
		rc = h_px_user_add(&e->px, "bob", k2);
		assert_int_not_equal(rc, 0);
		(void)log;
	}
	check_table(cb, &kv, &m);            /* bob's key unchanged */
	pxc_close(cb);
	model_free(&m);
}

/* ---- bad input ------------------------------------------------------------------------ */

static int raw_connect(struct env *e)
{
	int fd;
	char err[128];

	assert_int_equal(net_connect(e->px.addr, TIMEOUT, &fd, err, sizeof(err)), LWC_OK);
	return fd;
}

/* A plaintext Error frame (or nothing), then the server closes. */
static int expect_error_and_close(int fd)
{
	uint8_t *body = NULL, b;
	size_t len;
	int code = 0;

	if (wire_recv_frame(fd, WIRE_PREAUTH_MAX, &body, &len, TIMEOUT) == LWC_OK) {
		Lwc__Error *er = lwc__error__unpack(NULL, len, body);
		if (er) {
			code = er->code;
			assert_true(er->message != NULL && er->message[0] != '\0');
			lwc__error__free_unpacked(er, NULL);
		}
		free(body);
	}
	assert_int_equal(wire_read_full(fd, &b, 1, TIMEOUT), LWC_ERR_CLOSED);
	close(fd);
	return code;
}

/* After a bad frame from an authenticated client: at most an Error (sealed
 * or plaintext), then the server closes.  Returns the Error code or 0. */
static int expect_sealed_error_and_close(struct pxc *c)
{
	uint8_t *body = NULL, b;
	size_t len;
	int code = 0;

	if (wire_recv_frame(pxc_fd(c), WIRE_FRAME_MAX, &body, &len, TIMEOUT) == LWC_OK) {
		uint8_t *plain = malloc(len + 1);
		size_t plen = 0;
		if (len > CHAN_ABYTES && chan_open(pxc_chan(c), body, len, plain, &plen) == LWC_OK) {
			Lwc__ProxyResponse *r = lwc__proxy_response__unpack(NULL, plen, plain);
			assert_non_null(r);
			assert_int_equal(r->result_case, LWC__PROXY_RESPONSE__RESULT_ERROR);
			code = r->error->code;
			assert_true(r->error->message && r->error->message[0]);
			lwc__proxy_response__free_unpacked(r, NULL);
		} else {
			Lwc__Error *er = lwc__error__unpack(NULL, len, body);
			assert_non_null(er);
			code = er->code;
			assert_true(er->message && er->message[0]);
			lwc__error__free_unpacked(er, NULL);
		}
		free(plain);
		free(body);
	}
	assert_int_equal(wire_read_full(pxc_fd(c), &b, 1, TIMEOUT), LWC_ERR_CLOSED);
	return code;
}

static void still_serving(struct env *e, const struct pxc_table *t, const struct model *m)
{
	struct pxc *c;

	assert_int_equal(kill(e->px.pid, 0), 0);
	c = conn(e);
	check_table(c, t, m);
	pxc_close(c);
}

static void put_varint(uint8_t *buf, size_t *pos, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	*pos -= n;
	memcpy(buf + *pos, tmp, n);
}

static void prepend(uint8_t *buf, size_t *pos, const void *p, size_t n)
{
	*pos -= n;
	memcpy(buf + *pos, p, n);
}

/* A ProxyRequest{seq, select{table, where = NOT(NOT(...(EQ)))}} of the given
 * depth, encoded by hand (protobuf-c itself would recurse). */
static uint8_t *deep_select(const uint8_t handle[16], uint64_t seq, size_t depth, size_t *len)
{
	size_t cap = depth * 8 + 256, pos = cap, end = cap;
	uint8_t *buf = malloc(cap), tok[16] = { 0 };
	const uint8_t eq_head[] = { 0x08, 0x01, 0x1a, 0x10 }, not_head[] = { 0x08, 0x05, 0x22 };
	const uint8_t tbl[] = { 0x0a, 0x10 };

	prepend(buf, &pos, tok, 16);
	prepend(buf, &pos, eq_head, sizeof(eq_head));
	for (size_t i = 0; i < depth; i++) {
		put_varint(buf, &pos, end - pos);
		prepend(buf, &pos, not_head, sizeof(not_head));
	}
	put_varint(buf, &pos, end - pos);         /* Select.where */
	prepend(buf, &pos, (const uint8_t[]){ 0x12 }, 1);
	prepend(buf, &pos, handle, 16);           /* Select.table */
	prepend(buf, &pos, tbl, sizeof(tbl));
	put_varint(buf, &pos, end - pos);         /* ProxyRequest.select */
	prepend(buf, &pos, (const uint8_t[]){ 0x32 }, 1);
	put_varint(buf, &pos, seq);               /* ProxyRequest.seq */
	prepend(buf, &pos, (const uint8_t[]){ 0x08 }, 1);
	*len = end - pos;
	memmove(buf, buf + pos, *len);
	return buf;
}

static int send_plain(struct pxc *c, const uint8_t *plain, size_t n)
{
	uint8_t *ct = malloc(n + CHAN_ABYTES);
	int rc = chan_seal(pxc_chan(c), plain, n, ct);

	if (rc == LWC_OK)
		rc = wire_send_frame(pxc_fd(c), ct, n + CHAN_ABYTES);
	free(ct);
	return rc;
}

/* An Insert of one row of kv, with the record and tokens adjustable. */
static int insert_raw(struct pxc *c, const struct pxc_table *t, size_t rec_len, size_t ntok,
		      size_t tok_len)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Insert ins = LWC__INSERT__INIT;
	struct pxc_row row = kv_row(t, 77, "bad");
	Lwc__Row *pr = pxc_pbrow(pxc_keys(c), t, &row), *rp;
	ProtobufCBinaryData *saved_tok = pr->tokens;
	size_t saved_n = pr->n_tokens;
	uint8_t h[16], *rec = calloc(1, rec_len + 1), *toks = calloc(ntok + 1, tok_len + 1);
	ProtobufCBinaryData *tk = calloc(ntok + 1, sizeof(*tk));
	int rc;

	memcpy(rec, pr->record.data, rec_len < S_BYTES ? rec_len : S_BYTES);
	for (size_t i = 0; i < ntok; i++) {
		tk[i].data = toks + i * (tok_len + 1);
		tk[i].len = tok_len;
		if (i < saved_n)
			memcpy(tk[i].data, saved_tok[i].data, tok_len < 16 ? tok_len : 16);
	}
	free(pr->record.data);
	pr->record.data = rec;
	pr->record.len = rec_len;
	pr->tokens = tk;
	pr->n_tokens = ntok;
	pxc_handle(pxc_keys(c), t->name, h);
	ins.table.data = h;
	ins.table.len = 16;
	ins.n_rows = 1;
	rp = pr;
	ins.rows = &rp;
	req.op_case = LWC__PROXY_REQUEST__OP_INSERT;
	req.insert = &ins;
	rc = pxc_simple(c, &req, NULL);
	pr->tokens = saved_tok;
	pr->n_tokens = saved_n;
	pxc_pbrow_free(pr);
	free(toks);
	free(tk);
	return rc;
}

static int select_raw_pred(struct pxc *c, const struct pxc_table *t, Lwc__Pred *p)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Select sel = LWC__SELECT__INIT;
	uint8_t h[16];
	int rc;

	pxc_handle(pxc_keys(c), t->name, h);
	sel.table.data = h;
	sel.table.len = 16;
	sel.where = p;
	req.op_case = LWC__PROXY_REQUEST__OP_SELECT;
	req.select = &sel;
	rc = pxc_simple(c, &req, NULL);
	pxc_pred_free(p);
	return rc;
}

/* Start an UPDATE of key, wait for its Candidates; returns the number of
 * candidate records. */
static size_t start_update(struct pxc *c, const struct pxc_table *t, int64_t key)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Update up = LWC__UPDATE__INIT;
	Lwc__ProxyResponse *r = NULL;
	uint8_t h[16];
	size_t n;

	pxc_handle(pxc_keys(c), t->name, h);
	up.table.data = h;
	up.table.len = 16;
	up.where = pxc_eq_int(pxc_keys(c), t, "k", key);
	req.op_case = LWC__PROXY_REQUEST__OP_UPDATE;
	req.update = &up;
	OK(c, pxc_send(c, &req));
	pxc_pred_free(up.where);
	OK(c, pxc_recv(c, &r));
	if (r->result_case != LWC__PROXY_RESPONSE__RESULT_CANDIDATES)
		fail_msg("UPDATE answered with %d, expected Candidates", (int)r->result_case);
	n = r->candidates->n_records;
	lwc__proxy_response__free_unpacked(r, NULL);
	return n;
}

/* Send Decisions and read the final answer: its code (LWC_OK for Done). */
static int send_decisions(struct pxc *c, Lwc__Decision **d, size_t n)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Decisions ds = LWC__DECISIONS__INIT;
	Lwc__ProxyResponse *r = NULL;
	int rc;

	ds.n_d = n;
	ds.d = d;
	req.op_case = LWC__PROXY_REQUEST__OP_DECISIONS;
	req.decisions = &ds;
	if ((rc = pxc_send(c, &req)) != LWC_OK || (rc = pxc_recv(c, &r)) != LWC_OK)
		return rc;
	if (r->result_case == LWC__PROXY_RESPONSE__RESULT_DONE)
		rc = LWC_OK;
	else if (r->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR)
		rc = r->error->code < 0 ? r->error->code : -r->error->code;
	else
		rc = LWC_ERR_PROTO;
	if (rc != LWC_OK && r->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR &&
	    (r->error->message == NULL || r->error->message[0] == '\0'))
		fail_msg("error without a message");
	lwc__proxy_response__free_unpacked(r, NULL);
	return rc;
}

static void test_bad_input(void **state)
{
	struct env *e = *state;
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row rows[3];
	uint8_t hdr[4], junk[256];
	struct pxc *c, *c2;
	int fd, rc;

	deploy(e, 64, NULL);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	c = conn(e);
	OK(c, pxc_create_table(c, &kv, 0));
	for (int i = 0; i < 3; i++)
		rows[i] = kv_row(&kv, i + 1, "ok");
	do_insert(c, &kv, &m, rows, 3);

	/* ---- before authentication */
	fd = raw_connect(e);                     /* garbage instead of a Hello */
	memset(junk, 0xff, sizeof(junk));
	assert_int_equal(wire_send_frame(fd, junk, 64), LWC_OK);
	assert_int_not_equal(expect_error_and_close(fd), 0);
	fd = raw_connect(e);                     /* a length over the maximum */
	wire_put_u32(hdr, 0xffffffffu);
	assert_int_equal(wire_write_all(fd, hdr, 4), LWC_OK);
	assert_int_equal(expect_error_and_close(fd), LWC_ERR_TOO_BIG);
	fd = raw_connect(e);                     /* an empty frame */
	wire_put_u32(hdr, 0);
	assert_int_equal(wire_write_all(fd, hdr, 4), LWC_OK);
	expect_error_and_close(fd);
	fd = raw_connect(e);                     /* truncated, then EOF */
	wire_put_u32(hdr, 100);
	assert_int_equal(wire_write_all(fd, hdr, 4), LWC_OK);
	assert_int_equal(wire_write_all(fd, "0123456789", 10), LWC_OK);
	close(fd);
	{
		struct pxc *cx = NULL;
		uint8_t wrong[32];
		char err[256];
		memcpy(wrong, e->alice, 32);             /* wrong key */
		wrong[0] ^= 0x40;
		rc = pxc_connect(&cx, e->px.addr, "alice", wrong, e->px.ku, err, sizeof(err));
		if (rc != LWC_ERR_AUTH || err[0] == '\0')
			fail_msg("wrong key: %s (%s), expected LWC_ERR_AUTH", lwc_errname(rc), err);
		rc = pxc_connect(&cx, e->px.addr, "eve", e->alice, e->px.ku, err, sizeof(err));
		if ((rc != LWC_ERR_AUTH && rc != LWC_ERR_NO_USER) || err[0] == '\0')
			fail_msg("unknown user: %s (%s)", lwc_errname(rc), err);
		rc = pxc_connect(&cx, e->px.addr, "", e->alice, e->px.ku, err, sizeof(err));
		if (rc == LWC_OK)
			fail_msg("an empty user name was accepted");
		assert_null(cx);
	}
	still_serving(e, &kv, &m);

	/* ---- after authentication: frames */
	c2 = conn(e);                            /* garbage protobuf in a sealed frame */
	assert_int_equal(send_plain(c2, junk, 200), LWC_OK);
	{
		Lwc__ProxyResponse *r = NULL;
		rc = pxc_recv(c2, &r);
		if (rc == LWC_OK) {
			assert_int_equal(r->result_case, LWC__PROXY_RESPONSE__RESULT_ERROR);
			assert_int_equal(r->error->code, LWC_ERR_PROTO);
			lwc__proxy_response__free_unpacked(r, NULL);
		} else if (rc != LWC_ERR_CLOSED) {
			fail_msg("garbage request: %s", lwc_errname(rc));
		}
	}
	pxc_close(c2);
	c2 = conn(e);                            /* a forged frame */
	randombytes_buf(junk, sizeof(junk));
	assert_int_equal(wire_send_frame(pxc_fd(c2), junk, sizeof(junk)), LWC_OK);
	expect_sealed_error_and_close(c2);
	pxc_close(c2);
	c2 = conn(e);                            /* a length over the post-auth maximum */
	wire_put_u32(hdr, WIRE_FRAME_MAX + 1);
	assert_int_equal(wire_write_all(pxc_fd(c2), hdr, 4), LWC_OK);
	expect_sealed_error_and_close(c2);
	pxc_close(c2);
	still_serving(e, &kv, &m);

	/* ---- malformed statements: an error each, the connection goes on */
	{
		Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;   /* no operation */
		rc = pxc_simple(c, &req, NULL);
		any_err(c, rc, "request without an operation");
	}
	any_err(c, insert_raw(c, &kv, S_BYTES - 1, 2, 16), "record one byte short");
	any_err(c, insert_raw(c, &kv, S_BYTES + 1, 2, 16), "record one byte long");
	any_err(c, insert_raw(c, &kv, 0, 2, 16), "empty record");
	any_err(c, insert_raw(c, &kv, S_BYTES, 1, 16), "one token for two columns");
	any_err(c, insert_raw(c, &kv, S_BYTES, 3, 16), "three tokens for two columns");
	any_err(c, insert_raw(c, &kv, S_BYTES, 2, 15), "15-byte tokens");
	check_table(c, &kv, &m);
	{
		uint8_t tok[16] = { 0 };
		any_err(c, select_raw_pred(c, &kv, pxc_raw_pred(LWC__PRED__OP__EQ, 2, tok, 1, 16)),
			"column 2 of a 2-column table");
		any_err(c, select_raw_pred(c, &kv, pxc_raw_pred(LWC__PRED__OP__EQ, 0xffffffffu, tok,
								1, 16)), "column 2^32-1");
		any_err(c, select_raw_pred(c, &kv, pxc_raw_pred(LWC__PRED__OP__EQ, 0, tok, 0, 16)),
			"EQ without a token");
		any_err(c, select_raw_pred(c, &kv, pxc_raw_pred(LWC__PRED__OP__EQ, 0, tok, 1, 15)),
			"EQ with a 15-byte token");
		any_err(c, select_raw_pred(c, &kv, pxc_raw_pred(LWC__PRED__OP__NOT, 0, NULL, 0, 16)),
			"NOT without an argument");
		any_err(c, select_raw_pred(c, &kv, pxc_raw_pred((Lwc__Pred__Op)42, 0, NULL, 0, 16)),
			"unknown predicate op");
		any_err(c, select_raw_pred(c, &kv, pxc_and(pxc_all(),
				pxc_raw_pred(LWC__PRED__OP__IN, 7, tok, 1, 16))),
			"nested out-of-range column");
	}
	{
		Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;  /* short table handle */
		Lwc__Select sel = LWC__SELECT__INIT;
		uint8_t h[5] = { 1, 2, 3, 4, 5 };
		sel.table.data = h;
		sel.table.len = 5;
		sel.where = pxc_all();
		req.op_case = LWC__PROXY_REQUEST__OP_SELECT;
		req.select = &sel;
		any_err(c, pxc_simple(c, &req, NULL), "5-byte table handle");
		pxc_pred_free(sel.where);
	}
	{
		Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;  /* bad CREATE TABLEs */
		Lwc__CreateTable ct = LWC__CREATE_TABLE__INIT;
		uint8_t h[16], *big = calloc(1, 200000);
		pxc_handle(pxc_keys(c), "newtab", h);
		ct.table.data = h;
		ct.table.len = 16;
		ct.pk_col = -1;
		req.op_case = LWC__PROXY_REQUEST__OP_CREATE_TABLE;
		req.create_table = &ct;
		ct.ncols = 0;
		any_err(c, pxc_simple(c, &req, NULL), "CREATE TABLE of 0 columns");
		ct.ncols = 100000;
		any_err(c, pxc_simple(c, &req, NULL), "CREATE TABLE of 100000 columns");
		ct.ncols = 2;
		ct.pk_col = 2;
		any_err(c, pxc_simple(c, &req, NULL), "CREATE TABLE with primary key column 2 of 2");
		ct.pk_col = -1;
		ct.schema.data = big;
		ct.schema.len = 200000;
		any_err(c, pxc_simple(c, &req, NULL), "CREATE TABLE with a 200 kB schema");
		free(big);
	}
	{
		Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;  /* Decisions out of place */
		Lwc__Decisions ds = LWC__DECISIONS__INIT;
		req.op_case = LWC__PROXY_REQUEST__OP_DECISIONS;
		req.decisions = &ds;
		any_err(c, pxc_simple(c, &req, NULL), "Decisions when none are expected");
	}
	check_table(c, &kv, &m);

	/* ---- bad answers to Candidates: an error, nothing changed */
	{
		Lwc__Decision d1 = LWC__DECISION__INIT, d2 = LWC__DECISION__INIT, *dp[2] = { &d1, &d2 };
		struct pxc_row nr = kv_row(&kv, 1, "changed");
		Lwc__Row *pr = pxc_pbrow(pxc_keys(c), &kv, &nr);

		assert_int_equal(start_update(c, &kv, 1), 1);
		d1.change = 1;
		d1.row = pr;
		d2.change = 1;
		d2.row = pr;
		rc = send_decisions(c, dp, 2);                   /* two decisions for one row */
		if (rc == LWC_OK)
			fail_msg("two decisions for one candidate accepted");
		check_table(c, &kv, &m);

		assert_int_equal(start_update(c, &kv, 1), 1);
		rc = send_decisions(c, dp, 0);                   /* none */
		if (rc == LWC_OK)
			fail_msg("no decision for one candidate accepted");
		check_table(c, &kv, &m);

		assert_int_equal(start_update(c, &kv, 1), 1);
		d1.row = NULL;                                  /* change without a row */
		rc = send_decisions(c, dp, 1);
		if (rc == LWC_OK)
			fail_msg("an UPDATE decision without a row accepted");
		check_table(c, &kv, &m);

		assert_int_equal(start_update(c, &kv, 1), 1);
		pr->record.len = S_BYTES - 8;                  /* a short record */
		d1.row = pr;
		rc = send_decisions(c, dp, 1);
		pr->record.len = S_BYTES;
		if (rc == LWC_OK)
			fail_msg("an UPDATE with a short record accepted");
		check_table(c, &kv, &m);

		assert_int_equal(start_update(c, &kv, 1), 1);
		pr->n_tokens = 1;                               /* one token short */
		rc = send_decisions(c, dp, 1);
		pr->n_tokens = 2;
		if (rc == LWC_OK)
			fail_msg("an UPDATE with a missing token accepted");
		check_table(c, &kv, &m);

		assert_int_equal(start_update(c, &kv, 1), 1);    /* another statement instead */
		{
			Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
			Lwc__ListTables lt = LWC__LIST_TABLES__INIT;
			Lwc__ProxyResponse *r = NULL;
			req.op_case = LWC__PROXY_REQUEST__OP_LIST_TABLES;
			req.list_tables = &lt;
			OK(c, pxc_send(c, &req));
			rc = pxc_recv(c, &r);
			if (rc == LWC_OK) {
				if (r->result_case != LWC__PROXY_RESPONSE__RESULT_ERROR)
					fail_msg("a statement in place of Decisions answered %d",
						 (int)r->result_case);
				lwc__proxy_response__free_unpacked(r, NULL);
			}
		}
		pxc_pbrow_free(pr);
		pxc_close(c);
		c = conn(e);
		check_table(c, &kv, &m);
	}

	/* ---- a client that vanishes in the middle of an UPDATE releases its blocks */
	c2 = conn(e);
	assert_int_equal(start_update(c2, &kv, 2), 1);
	pxc_close(c2);
	pxc_set_timeout(c, 10000);
	{
		struct set_arg a = { 1, pxc_text("after"), 0 }, am = a;
		do_update(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 2), set_fn, &a, &am);
	}
	check_table(c, &kv, &m);

	/* ---- a predicate nested 200000 deep */
	c2 = conn(e);
	{
		uint8_t h[16];
		size_t len;
		uint8_t *msg;
		Lwc__ProxyResponse *r = NULL;
		pxc_handle(pxc_keys(c2), kv.name, h);
		msg = deep_select(h, 1, 200000, &len);
		assert_int_equal(send_plain(c2, msg, len), LWC_OK);
		free(msg);
		rc = pxc_recv(c2, &r);
		if (rc == LWC_OK) {
			if (r->result_case != LWC__PROXY_RESPONSE__RESULT_ERROR)
				fail_msg("a predicate 200000 deep answered %d", (int)r->result_case);
			lwc__proxy_response__free_unpacked(r, NULL);
		}
	}
	pxc_close(c2);
	usleep(100000);
	if (waitpid(e->px.pid, &rc, WNOHANG) == e->px.pid) {
		e->px.pid = 0;
		h_tail(e->px.log, 5);
		fail_msg("the proxy died on a predicate nested 200000 deep (a 1.2 MB request; "
			 "%s %d)", WIFSIGNALED(rc) ? "signal" : "exit status",
			 WIFSIGNALED(rc) ? WTERMSIG(rc) : WEXITSTATUS(rc));
	}
	still_serving(e, &kv, &m);
	check_table(c, &kv, &m);
	pxc_close(c);
	model_free(&m);
}

/* ---- the cloud store restarts under the proxy --------------------------------------- */

/*
 * The cloud store restarts under a running proxy: the statement that finds
 * it down fails with an error, and the first statement after it is back
 * succeeds, although the proxy's pool holds connections to the store's old
 * process (statements of several batches leave four there: their own, the
 * READ ahead and two WRITEs behind).  One broken connection empties the
 * pool; the retry goes out on a new connection, not on the next stale one.
 */
static void test_cloud_restart(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--batch-blocks", "4", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row *rows = calloc(600, sizeof(*rows));
	struct pxc_row row;
	struct pxc_result res;
	struct pxc *c;
	int rc;

	/* relocation off: the 600 rows stay in their 13 blocks, and every
	 * statement on the whole table reads 26 blocks in 7 batches */
	deploy_mode(e, 64, serve, "off");
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	c = conn(e);
	OK(c, pxc_create_table(c, &kv, 0));
	for (int i = 0; i < 600; i++)
		rows[i] = kv_row(&kv, i, "before");
	do_insert(c, &kv, &m, rows, 600);
	check_table(c, &kv, &m);      /* several batches: the pool fills */

	/* restarted between two statements */
	h_cs_stop(&e->cs, SIGTERM);
	h_cs_start(&e->cs, NULL);
	check_table(c, &kv, &m);
	{
		struct set_arg sa = { 1, pxc_text("after"), 0 }, am = sa;
		do_update(c, &kv, &m, pxc_all(), set_fn, &sa, &am);
	}
	check_table(c, &kv, &m);

	/* down for a statement, then back */
	h_cs_stop(&e->cs, SIGTERM);
	pxc_set_timeout(c, 15000);
	rc = pxc_select(c, &kv, NULL, 0, &res);
	if (rc == LWC_OK)
		fail_msg("a SELECT succeeded with the cloud store down");
	any_err(c, rc, "SELECT with the cloud store down");
	h_cs_start(&e->cs, NULL);
	rc = pxc_select(c, &kv, NULL, 0, &res);
	if (rc != LWC_OK)
		fail_msg("the first statement after the cloud store came back failed: %s (%s)",
			 lwc_errname(rc), pxc_errmsg(c));
	pxc_result_free(&res);
	row = kv_row(&kv, 1000, "b");
	do_insert(c, &kv, &m, &row, 1);
	check_table(c, &kv, &m);
	pxc_close(c);
	model_free(&m);
	free(rows);
}

/* A deployment of 16 blocks with these serve options, and a connection
 * (30 s timeout) holding a table kv (k int key, s text) of 20 rows
 * s = tag, in the model m. */
static struct pxc *kv20(struct env *e, const char *const *serve, const char *tag,
			struct pxc_table *kv, struct model *m)
{
	struct pxc_row rows[20];
	struct pxc *c;

	deploy(e, 16, serve);
	assert_int_equal(pxc_table_def(kv, "kv", "k:int:pk,s:text"), 0);
	c = conn(e);
	pxc_set_timeout(c, 30000);
	OK(c, pxc_create_table(c, kv, 0));
	for (int i = 0; i < 20; i++)
		rows[i] = kv_row(kv, i, tag);
	do_insert(c, kv, m, rows, 20);
	return c;
}

/* The proxy's log line for a SELECT that failed after its early answer. */
#define ANSWERED_FAILED "a SELECT, answered already, failed afterwards"

/* SELECT every row of kv20's table, the store killed as soon as the answer
 * comes; the answer must hold the 20 rows and a Done of 20. */
static void select20_kill_store(struct env *e, struct pxc *c, struct pxc_table *kv)
{
	struct pxc_result res;
	int rc = pxc_select(c, kv, NULL, 0, &res);

	h_cs_stop(&e->cs, SIGKILL);
	if (rc != LWC_OK)
		fail_msg("SELECT: %s (%s)", lwc_errname(rc), pxc_errmsg(c));
	if (res.n != 20 || res.done_count != 20)
		fail_msg("SELECT answered with %zu rows, Done %" PRIu64 " (expected 20)", res.n,
			 res.done_count);
	pxc_result_free(&res);
}

/* `lwc-proxy serve OPT VAL` on this state (the proxy stopped) refuses to
 * start: exit status 1 and msg in what it printed. */
static void serve_refused(struct env *e, const char *opt, const char *val, const char *msg)
{
	char bin[400], out[400];
	const char *argv[] = { "/usr/bin/timeout", "60", h_bin("lwc-proxy", bin, sizeof(bin)),
			       "serve", "--state", e->px.state, "--listen", "127.0.0.1:1",
			       opt, val, NULL };
	int rc;

	snprintf(out, sizeof(out), "%s/refused%s.out", e->px.dir, opt);
	rc = h_run(argv, out);
	if (rc != 1 || h_count_lines(out, msg) < 1) {
		h_tail(out, 5);
		fail_msg("serve %s %s: exit status %d, expected 1 and \"%s\"", opt, val, rc, msg);
	}
}

/* With serve --answer-early off a SELECT answers after its WRITE is
 * acknowledged and the proxy has committed, as every other statement (the
 * default, durable, answers before the commit; on, before the WRITE's
 * acknowledgement: threat-model.md, "Timing").  With a 1 s round trip to
 * the cloud, the moment the answer comes no block is held any more; with
 * --answer-early on (the test below) the SELECT's WRITE is still on its way
 * then, its blocks held for about a second. */
static void test_select_answers_after_commit(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--rtt-ms", "1000", "--answer-early", "off", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_result res;
	struct pxc *c = kv20(e, serve, "late", &kv, &m);
	int rc;

	rc = pxc_select(c, &kv, NULL, 0, &res);
	if (rc != LWC_OK)
		fail_msg("SELECT: %s (%s)", lwc_errname(rc), pxc_errmsg(c));
	assert_int_equal(h_px_status_u64(&e->px, "blocks_locked"), 0);
	if (res.n != 20 || res.done_count != 20)
		fail_msg("SELECT answered with %zu rows, Done %" PRIu64 " (expected 20)", res.n,
			 res.done_count);
	pxc_result_free(&res);
	check_table(c, &kv, &m);
	pxc_close(c);
	model_free(&m);
}

/* Three SELECTs back to back on one connection; the store's trace gives the
 * intervals from each one's WRITE to the next one's READ (2). */
static void paced_selects(struct env *e, const char *const *serve, double iv[2])
{
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_result res;
	struct pxc *c = kv20(e, serve, "paced", &kv, &m);
	struct h_access *a = calloc(1, sizeof(*a));
	long mark;

	mark = h_trace_mark_idle(&e->px);
	for (int i = 0; i < 3; i++) {
		OK(c, pxc_select(c, &kv, NULL, 0, &res));
		assert_int_equal(res.n, 20);
		pxc_result_free(&res);
	}
	h_px_idle(&e->px);
	assert_non_null(a);
	assert_int_equal(h_trace_since(&e->cs, mark, a), 0);
	if (a->nops != 6 || memcmp(a->op, "RWRWRW", 6) != 0)
		fail_msg("three SELECTs of 20 rows: %d trace lines (%.*s), expected RWRWRW", a->nops,
			 a->nops, a->op);
	iv[0] = a->t[2] - a->t[1];
	iv[1] = a->t[4] - a->t[3];
	free(a);
	check_table(c, &kv, &m);
	pxc_close(c);
	model_free(&m);
}

/* serve --pace N: a connection's next READ comes N microseconds or more
 * after its last WRITE, as the cloud store's own trace times it, whatever
 * the statement; the proxy's status counts the statements it held. */
static void test_pace_fixed(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--pace", "30000", NULL };
	double iv[2];

	paced_selects(e, serve, iv);
	for (int i = 0; i < 2; i++)
		if (iv[i] < 0.0295)
			fail_msg("--pace 30000: the READ came %.3f ms after the WRITE before it",
				 iv[i] * 1e3);
	assert_int_equal(h_px_status_u64(&e->px, "pace_us"), 30000);
	assert_true(h_px_status_u64(&e->px, "pace_held") >= 2);
	/* (a fixed D learns nothing: the cap stays at its floor) */
	assert_int_equal(h_px_status_u64(&e->px, "pace_cap_us"), 5000);
}

/* serve --pace off: no statement is held (the same statements as above
 * came 30 ms apart with --pace 30000). */
static void test_pace_off(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--pace", "off", NULL };
	double iv[2];

	paced_selects(e, serve, iv);
	assert_int_equal(h_px_status_u64(&e->px, "pace_held"), 0);
	assert_int_equal(h_px_status_u64(&e->px, "pace_us"), 0);
	if (iv[0] >= 0.025 && iv[1] >= 0.025)
		fail_msg("--pace off: READs %.3f and %.3f ms after the WRITE before", iv[0] * 1e3,
			 iv[1] * 1e3);
}

/* The cloud store stopped (SIGSTOP) 300 ms after its trace shows a READ
 * since mark: with serve --rtt-ms 1000 the proxy sends the statement's
 * WRITE a second after that READ's answer, so the store has the READ
 * answered and cannot take the WRITE in, however slow the machine. */
struct store_freezer {
	const struct h_cs *cs;
	long mark;
	int stopped;
};

static void *freeze_after_read(void *arg)
{
	struct store_freezer *fz = arg;
	char line[8192];

	for (int ms = 0; ms < 30000 && !fz->stopped; ms += 5) {
		FILE *f = fopen(fz->cs->trace, "r");

		if (f != NULL && fseek(f, fz->mark, SEEK_SET) == 0)
			while (!fz->stopped && fgets(line, sizeof(line), f) != NULL)
				if (strstr(line, " op=READ ") != NULL) {
					nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
					fz->stopped = kill(fz->cs->pid, SIGSTOP) == 0;
				}
		if (f != NULL)
			fclose(f);
		if (!fz->stopped)
			nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
	return NULL;
}

/* A thread that stops the store after the next READ (freeze_after_read). */
static void freezer_start(struct env *e, struct store_freezer *fz, pthread_t *th)
{
	fz->cs = &e->cs;
	fz->stopped = 0;
	fz->mark = h_trace_mark_idle(&e->px);
	assert_int_equal(pthread_create(th, NULL, freeze_after_read, fz), 0);
}

/* With serve --answer-early on, a SELECT is answered while its last WRITE
 * is on its way (proxy/engine.c, stmt_answer).  With a 1 s round trip to
 * the cloud (--rtt-ms, slept before each request is sent) and the store
 * stopped between the SELECT's READ and its WRITE (freeze_after_read), the
 * store killed as soon as the answer comes makes that WRITE fail: the user
 * has every row and a Done, the failure is in the proxy's log and in
 * statement_errors, not sent, and once the store is back the table reads
 * as before.  When the answer comes after the WRITE's acknowledgement
 * (durable, the default, below; off), nothing fails. */
static void test_select_answered_early(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--rtt-ms", "1000", "--answer-early", "on", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc *c = kv20(e, serve, "early", &kv, &m);
	struct store_freezer fz;
	pthread_t th;
	uint64_t errs;
	int n = 0;

	errs = h_px_status_u64(&e->px, "statement_errors");
	assert_int_equal(h_count_lines(e->px.log, ANSWERED_FAILED), 0);

	freezer_start(e, &fz, &th);
	select20_kill_store(e, c, &kv);       /* the WRITE sent to a stopped store */
	pthread_join(th, NULL);
	if (!fz.stopped)
		fail_msg("the store was not stopped between the SELECT's READ and its WRITE");
	for (int ms = 0; ms < 15000 && (n = h_count_lines(e->px.log, ANSWERED_FAILED)) == 0; ms += 50)
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	if (n != 1)
		fail_msg("the WRITE's failure after the answer is not in the proxy's log");
	assert_int_equal(h_px_status_u64(&e->px, "statement_errors"), errs + 1);

	h_cs_start(&e->cs, NULL);
	check_table(c, &kv, &m);
	pxc_close(c);
	model_free(&m);
}

/* A SELECT that moves its rows sends them while its last WRITE is on its
 * way, whatever --answer-early says (proxy/access.c, run_access); with
 * durable (the default) only the Done waits for the acknowledgement.  The
 * store stopped between the SELECT's READ and its WRITE (--rtt-ms 1000,
 * freeze_after_read): the 20 rows come while it is stopped, the Done once
 * it runs again, and the table reads as before. */
static void test_select_rows_before_ack(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--rtt-ms", "1000", "--answer-early", "durable", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc *c = kv20(e, serve, "rows", &kv, &m);
	struct store_freezer fz;
	Lwc__ProxyResponse *r = NULL;
	size_t rows = 0;
	int done = 0, rc;
	pthread_t th;

	freezer_start(e, &fz, &th);
	OK(c, pxc_select_send(c, &kv, NULL, 0));
	while (rows < 20 && (rc = pxc_recv(c, &r)) == LWC_OK) {
		if (r->result_case != LWC__PROXY_RESPONSE__RESULT_ROWS)
			fail_msg("a %d frame after %zu rows, before the store's acknowledgement",
				 (int)r->result_case, rows);
		rows += r->rows->n_records;
		lwc__proxy_response__free_unpacked(r, NULL);
	}
	if (rc != LWC_OK)
		fail_msg("the SELECT's rows did not come with its WRITE unacknowledged: %s (%s), %zu rows",
			 lwc_errname(rc), pxc_errmsg(c), rows);
	pthread_join(th, NULL);
	if (!fz.stopped)
		fail_msg("the store was not stopped between the SELECT's READ and its WRITE");
	assert_int_equal(rows, 20);
	/* the store stopped still: nothing more comes, the Done waits for it */
	{
		struct pollfd pfd = { .fd = pxc_fd(c), .events = POLLIN };

		if (poll(&pfd, 1, 500) != 0)
			fail_msg("the SELECT's connection readable before the store's "
				 "acknowledgement, besides its rows");
	}
	assert_int_equal(kill(e->cs.pid, SIGCONT), 0);
	while (!done && (rc = pxc_recv(c, &r)) == LWC_OK) {
		if (r->result_case != LWC__PROXY_RESPONSE__RESULT_DONE)
			fail_msg("a %d frame after the rows, not the Done", (int)r->result_case);
		assert_int_equal(r->done->count, 20);
		done = 1;
		lwc__proxy_response__free_unpacked(r, NULL);
	}
	if (!done)
		fail_msg("no Done once the store ran again: %s (%s)", lwc_errname(rc), pxc_errmsg(c));
	check_table(c, &kv, &m);
	pxc_close(c);
	model_free(&m);
}

/* With serve --answer-early durable (the default), a SELECT answers once
 * its WRITE is acknowledged, before the proxy's own commit (proxy/engine.c,
 * stmt_answer).  The store killed as soon as the answer comes has the WRITE
 * already, so nothing fails afterwards (with on, the test above, the WRITE
 * was sent just before the answer: with the store killed then, unstopped,
 * whether it had the WRITE is a race); and the proxy killed then too, its
 * commit perhaps not made, comes back with the table as it was. */
static void test_select_answered_durable(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--answer-early", "durable", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_result res;
	struct pxc *c = kv20(e, serve, "durable", &kv, &m);
	uint64_t errs;
	int rc;

	errs = h_px_status_u64(&e->px, "statement_errors");
	select20_kill_store(e, c, &kv);
	/* the answer's WRITE was acknowledged: nothing fails afterwards */
	nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
	assert_int_equal(h_count_lines(e->px.log, ANSWERED_FAILED), 0);
	assert_int_equal(h_px_status_u64(&e->px, "statement_errors"), errs);
	pxc_close(c);

	/* both killed once a SELECT has answered, whether or not the proxy
	 * had committed it: the table reads as before */
	h_cs_start(&e->cs, NULL);
	c = conn(e);
	pxc_set_timeout(c, 30000);
	rc = pxc_select(c, &kv, NULL, 0, &res);
	h_px_stop(&e->px, SIGKILL);
	h_cs_stop(&e->cs, SIGKILL);
	if (rc != LWC_OK || res.n != 20)
		fail_msg("SELECT: %s (%s), %zu rows", lwc_errname(rc), pxc_errmsg(c), res.n);
	pxc_result_free(&res);
	pxc_close(c);
	h_cs_start(&e->cs, NULL);
	h_px_start(&e->px, e->serve);
	c = conn(e);
	pxc_set_timeout(c, 30000);
	check_table(c, &kv, &m);
	pxc_close(c);
	model_free(&m);

	/* a value it does not know is refused at the start */
	assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
	serve_refused(e, "--answer-early", "sometimes", "--answer-early must be on, durable or off");
}

/* ---- command lines ---------------------------------------------------------------------- */

static void test_cli(void **state)
{
	struct env *e = *state;
	char out[400], dir[400];
	int rc;

	deploy(e, 16, NULL);
	snprintf(out, sizeof(out), "%s/cli.out", e->px.dir);
	/* init refuses an existing state */
	rc = h_px_cli(&e->px, out, "init", "--state", e->px.state, "--cloudstore", e->cs.addr,
		      "--cs-key-file", e->cs.key_file, "--blocks", "16", (const char *)NULL);
	assert_int_not_equal(rc, 0);
	/* and a bad geometry */
	snprintf(dir, sizeof(dir), "%s/other", e->px.dir);
	rc = h_px_cli(&e->px, out, "init", "--state", dir, "--cloudstore", e->cs.addr,
		      "--cs-key-file", e->cs.key_file, "--theta", "64", "--slots", "64",
		      (const char *)NULL);
	assert_int_not_equal(rc, 0);
	/* status, user list */
	assert_int_equal(h_px_cli(&e->px, out, "status", "--state", e->px.state,
				  (const char *)NULL), 0);
	assert_int_equal(h_px_cli(&e->px, out, "user", "list", "--socket", e->px.sock,
				  (const char *)NULL), 0);
	assert_true(h_count_lines(out, "alice") >= 1);
	/* user add with a missing key file */
	snprintf(dir, sizeof(dir), "%s/no-such.key", e->px.dir);
	assert_int_not_equal(h_px_cli(&e->px, out, "user", "add", "--state", e->px.state,
				      "--name", "carol", "--key-file", dir, (const char *)NULL), 0);
	/* revoking an unknown user says so (idempotent: exit 0 or not) */
	h_px_cli(&e->px, out, "user", "revoke", "--state", e->px.state, "nobody",
		 (const char *)NULL);
	assert_true(h_count_lines(out, "nobody") >= 1);
	/* the admin socket is private */
	{
		struct stat sb;
		assert_int_equal(stat(e->px.sock, &sb), 0);
		assert_int_equal(sb.st_mode & 077, 0);
	}
	/* check on a healthy deployment (proxy stopped) */
	assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
	rc = h_px_check(&e->px, out);
	if (rc != 0) {
		h_tail(out, 10);
		fail_msg("lwc-proxy check exited %d on a fresh deployment", rc);
	}
	/* the user CLI without a running proxy fails clearly */
	assert_int_not_equal(h_px_cli(&e->px, out, "user", "list", "--state", e->px.state,
				      (const char *)NULL), 0);
}

/* A bulk INSERT cut by kill -9 at a random moment is all there or not at
 * all; the blocks it wrote beyond the committed ones are taken over by the
 * next growth; lwc-proxy check agrees every round. */
static void test_bulk_crash(void **state)
{
	struct env *e = *state;
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row *rows = calloc(400, sizeof(*rows));
	unsigned seed = (unsigned)time(NULL);
	char out[400];
	int all = 0, none = 0;

	fprintf(stderr, "    seed %u\n", seed);
	deploy(e, 16, NULL);
	snprintf(out, sizeof(out), "%s/check.out", e->px.dir);
	{
		struct pxc *c = conn(e);
		assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
		OK(c, pxc_create_table(c, &kv, 0));
		pxc_close(c);
	}
	for (int round = 0; round < 8; round++) {
		struct killer_arg ka = { e->px.pid, (int)(rand_r(&seed) % 150000) };
		pthread_t th;
		struct pxc *c = conn(e);
		size_t before = m.n;
		uint64_t cnt = 0;
		int rc;

		for (int i = 0; i < 400; i++)
			rows[i] = kv_row(&kv, round * 1000 + i, "crash");
		assert_int_equal(pthread_create(&th, NULL, killer, &ka), 0);
		rc = pxc_insert(c, &kv, rows, 400, &cnt);
		pthread_join(th, NULL);
		pxc_close(c);
		h_px_stop(&e->px, SIGKILL);
		if (h_px_check(&e->px, out) != 0) {
			h_tail(out, 10);
			fail_msg("round %d: lwc-proxy check failed after kill -9", round);
		}
		px_start(e, NULL);
		c = conn(e);
		{
			struct pxc_result r;
			struct pxc_val lo = pxc_int(round * 1000);

			/* the first row tells which way the statement went */
			assert_int_equal(pxc_select(c, &kv, pxc_eq(pxc_keys(c), &kv, "k", lo), 0, &r), LWC_OK);
			if (r.n == 1) {
				for (int i = 0; i < 400; i++)
					model_add(&m, &rows[i]);
				all++;
			} else {
				if (rc == LWC_OK)
					fail_msg("round %d: an acknowledged bulk INSERT is lost", round);
				none++;
			}
			pxc_result_free(&r);
		}
		check_table(c, &kv, &m);
		assert_true(m.n == before || m.n == before + 400);
		pxc_close(c);
	}
	fprintf(stderr, "    8 rounds: %d loads there, %d not\n", all, none);
	/* and a load after them all */
	{
		struct pxc *c = conn(e);
		for (int i = 0; i < 400; i++)
			rows[i] = kv_row(&kv, 90000 + i, "after");
		do_insert(c, &kv, &m, rows, 400);
		check_table(c, &kv, &m);
		pxc_close(c);
	}
	assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
	if (h_px_check(&e->px, out) != 0) {
		h_tail(out, 10);
		fail_msg("lwc-proxy check failed at the end");
	}
	model_free(&m);
	free(rows);
}

/* ---- statements of many batches: the next batch is read ahead -------------------- */

static void test_batches_on_raw(void **state)
{
	struct env *e = *state;
	const char *serve[] = { "--pad", "ratio:2", "--pad-min", "4", "--batch-blocks", "4", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row *rows = calloc(600, sizeof(*rows));
	struct pxc *c;
	struct h_access a;
	long mark;

	/* relocation off: the 600 rows stay in their 13 blocks */
	deploy_mode(e, 64, serve, "off");
	c = conn(e);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	OK(c, pxc_create_table(c, &kv, 0));
	for (int i = 0; i < 600; i++)
		rows[i] = kv_row(&kv, i, "batch");
	do_insert(c, &kv, &m, rows, 600);

	/* every row: gamma = 2 x 13 = 26 blocks in 7 batches of 3 or 4 */
	mark = h_trace_mark_idle(&e->px);
	check_table(c, &kv, &m);
	assert_int_equal(h_trace_since(&e->cs, mark, &a), 0);
	if (a.nread != 7 || a.nwrite != 7 || a.other != 0 || a.bad[0])
		fail_msg("SELECT of 26 blocks in batches of 4: %d READ, %d WRITE, %d other (%s)",
			 a.nread, a.nwrite, a.other, a.bad);
	{
		struct set_arg sa = { 1, pxc_text("all"), 0 }, am = sa;
		do_update(c, &kv, &m, pxc_all(), set_fn, &sa, &am);
	}
	check_table(c, &kv, &m);
	/* the user aborts in the first batch: the READ ahead of the second is
	 * waited for and dropped; nothing changes */
	mark = h_trace_mark_idle(&e->px);
	ERR(c, LWC_ERR_ABORTED, pxc_update(c, &kv, pxc_all(), abort_fn, NULL, NULL));
	assert_int_equal(h_trace_since(&e->cs, mark, &a), 0);
	if (a.bad[0])
		fail_msg("aborted UPDATE: a cloud request failed: %s", a.bad);
	check_table(c, &kv, &m);
	{
		int col = 0;
		do_delete(c, &kv, &m, pxc_all(), odd_fn, &col);
	}
	check_table(c, &kv, &m);
	pxc_close(c);
	px_restart(e);
	c = conn(e);
	check_table(c, &kv, &m);
	/* a damaged block, most often in a batch opened ahead (6 in 7): the
	 * statement fails with an integrity error naming it, as in one batch */
	{
		struct saved *sv = malloc(sizeof(*sv));
		uint8_t *buf = malloc(BLOCK_BYTES + 64);
		uint64_t b = where(e, c, &kv, 2);
		struct pxc_result res;
		struct raw r;
		char name[40];
		int rc;

		pxc_close(c);
		raw_open(&r, e);
		save_block(&r, b, sv);
		memcpy(buf, sv->data, sv->len);
		buf[1000] ^= 0x01;
		raw_put(&r, b, sv->ver, buf, sv->len);
		raw_close(&r);
		c = conn(e);
		rc = pxc_select(c, &kv, NULL, 0, &res);
		if (rc != LWC_ERR_INTEGRITY)
			fail_msg("SELECT in batches over a damaged block: %s (%s)", lwc_errname(rc),
				 pxc_errmsg(c));
		snprintf(name, sizeof(name), "block %" PRIu64 ":", b);
		if (strstr(pxc_errmsg(c), name) == NULL)
			fail_msg("the error \"%s\" does not name block %" PRIu64, pxc_errmsg(c), b);
		pxc_close(c);
		raw_open(&r, e);
		raw_put(&r, b, sv->ver, sv->data, sv->len);
		raw_close(&r);
		c = conn(e);
		check_table(c, &kv, &m);
		free(sv);
		free(buf);
	}
	/* the cloud store refuses one batch's WRITE while other batches' WRITEs
	 * are outstanding (two go out behind the statement): a block it holds
	 * at a version ahead of the proxy's makes that WRITE stale.  Whichever
	 * of the 7 batches it is in, the UPDATE fails with the store's reason,
	 * every WRITE is waited for, nothing is committed; once the stray
	 * version is gone, every row reads as before and the next statements
	 * succeed.  Only where the store's rows can be changed while the
	 * servers run (PostgreSQL, Redis Cluster): on LMDB the raw access
	 * restarts the proxy, whose start-up check refuses the stray version
	 * (it_ops). */
	if (e->cs.db[0] == '\0' && e->cs.prefix[0] == '\0')
		fprintf(stderr, "    (a refused WRITE: on PostgreSQL and the Redis Cluster only)\n");
	for (int row = 0; row < 600 && (e->cs.db[0] || e->cs.prefix[0]); row += 150) {
		struct saved *sv = malloc(sizeof(*sv));
		struct set_arg sa = { 1, pxc_text("refused"), 0 };
		uint64_t cnt = 0, b = where(e, c, &kv, row);
		struct raw r;
		int rc;

		pxc_close(c);
		raw_open(&r, e);
		save_block(&r, b, sv);
		raw_add(&r, b, sv->ver + 2, sv->data, sv->len);
		raw_close(&r);
		c = conn(e);
		rc = pxc_update(c, &kv, pxc_all(), set_fn, &sa, &cnt);
		if (rc == LWC_OK || strstr(pxc_errmsg(c), "WRITE") == NULL)
			fail_msg("UPDATE over a block the store holds ahead (%" PRIu64 " v%" PRIu64
				 "): %s (%s), expected a failed WRITE", b, sv->ver + 2,
				 lwc_errname(rc), pxc_errmsg(c));
		pxc_close(c);
		raw_open(&r, e);
		raw_del(&r, b, sv->ver + 2);
		raw_close(&r);
		c = conn(e);
		check_table(c, &kv, &m);
		free(sv);
	}
	{
		struct set_arg sa = { 1, pxc_text("after"), 0 }, am = sa;
		do_update(c, &kv, &m, pxc_all(), set_fn, &sa, &am);
	}
	check_table(c, &kv, &m);
	pxc_close(c);
	model_free(&m);
	free(rows);
}

/* It reaches into the store's own format (raw_open): skipped on the log
 * store before it allocates anything. */
static void test_batches(void **state)
{
	if (strcmp(h_backend(), "log") == 0)
		skip();
	test_batches_on_raw(state);
}

/* ---- bulk INSERT: fresh blocks, no READ ---------------------------------------- */

/* A counter of `lwc-proxy status`. */
static uint64_t px_status_u64(struct env *e, const char *key)
{
	uint64_t v = h_px_status_u64(&e->px, key);

	if (v == UINT64_MAX)
		fail_msg("lwc-proxy status has no %s", key);
	return v;
}

/* One bulk INSERT of n rows from key k0: no READ, one WRITE of the
 * ceil(n / per) blocks after the nb0 there were, each at version 1. */
static void bulk_ok(struct env *e, struct pxc *c, struct pxc_table *kv, struct model *m,
		    struct pxc_row *rows, int k0, int n, unsigned per, uint64_t nb0)
{
	long mark = h_trace_mark_idle(&e->px);
	struct h_access a;
	size_t want = ((size_t)n + per - 1) / per;

	for (int i = 0; i < n; i++)
		rows[i] = kv_row(kv, k0 + i, "bulk");
	do_insert(c, kv, m, rows, (size_t)n);
	assert_int_equal(h_trace_since(&e->cs, mark, &a), 0);
	if (a.nread != 0 || a.nwrite != 1 || a.other != 0)
		fail_msg("bulk INSERT of %d rows: %d READ, %d WRITE, %d other (expected one WRITE "
			 "and no READ)", n, a.nread, a.nwrite, a.other);
	if (a.nw != want)
		fail_msg("bulk INSERT of %d rows: %zu blocks written, expected %zu", n, a.nw, want);
	qsort(a.w, a.nw, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < a.nw; i++)
		if (a.w[i] != nb0 + i)
			fail_msg("bulk INSERT: block %" PRIu64 " written, expected the new block %"
				 PRIu64, a.w[i], nb0 + i);
}

static void test_bulk_insert(void **state)
{
	struct env *e = *state;
	const char *off[] = { "--relocate", "off", NULL };
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row *rows = calloc(2000, sizeof(*rows));
	struct pxc *c;
	char out[400];
	int rc;

	deploy(e, 64, NULL);
	snprintf(out, sizeof(out), "%s/check.out", e->px.dir);
	c = conn(e);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	OK(c, pxc_create_table(c, &kv, 0));

	/* relocation on: 40 rows per new block (the fill limit) */
	bulk_ok(e, c, &kv, &m, rows, 0, 2000, 40, 64);
	assert_int_equal(px_status_u64(e, "inserts_bulk"), 2000);
	assert_int_equal(px_status_u64(e, "blocks"), 64 + 50);
	assert_int_equal(px_status_u64(e, "slots_used"), 2000);
	for (int k = 0; k < 2000; k += 199)
		sel_key(c, &kv, &m, k);
	{
		struct set_arg a = { 1, pxc_text("changed"), 0 }, am = a;
		do_update(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 77), set_fn, &a, &am);
	}
	{
		struct pxc_val keys[100];

		for (int i = 0; i < 100; i++)
			keys[i] = pxc_int(500 + 3 * i);
		do_delete(c, &kv, &m, pxc_in(pxc_keys(c), &kv, "k", keys, 100), NULL, NULL);
	}
	/* a duplicate key, inside the load or against a row there: refused,
	 * nothing written, nothing changed */
	for (int i = 0; i < 1000; i++)
		rows[i] = kv_row(&kv, 5000 + i, "dup");
	rows[999] = kv_row(&kv, 5000, "dup");
	ERR(c, LWC_ERR_UNIQUE, pxc_insert(c, &kv, rows, 1000, NULL));
	rows[999] = kv_row(&kv, 1999, "dup");
	ERR(c, LWC_ERR_UNIQUE, pxc_insert(c, &kv, rows, 1000, NULL));
	assert_int_equal(px_status_u64(e, "blocks"), 64 + 50);
	check_table(c, &kv, &m);
	/* the cloud store down during a bulk INSERT (its blocks are written on
	 * a thread of their own while the index entries are sorted): refused,
	 * nothing changed; with the store back, the next one takes the same
	 * new blocks */
	h_cs_stop(&e->cs, SIGTERM);
	pxc_set_timeout(c, 15000);
	for (int i = 0; i < 1200; i++)          /* over --relocate-max: bulk */
		rows[i] = kv_row(&kv, 20000 + i, "lost");
	rc = pxc_insert(c, &kv, rows, 1200, NULL);
	if (rc == LWC_OK)
		fail_msg("a bulk INSERT succeeded with the cloud store down");
	any_err(c, rc, "bulk INSERT with the cloud store down");
	h_cs_start(&e->cs, NULL);
	assert_int_equal(px_status_u64(e, "blocks"), 64 + 50);
	check_table(c, &kv, &m);
	bulk_ok(e, c, &kv, &m, rows, 20000, 1200, 40, 64 + 50);
	assert_int_equal(px_status_u64(e, "blocks"), 64 + 50 + 30);
	check_table(c, &kv, &m);
	pxc_close(c);

	/* relocation off: theta = 48 rows per block */
	set_serve(e, off);
	px_restart(e);
	c = conn(e);
	bulk_ok(e, c, &kv, &m, rows, 10000, 500, 48, 64 + 50 + 30);
	assert_int_equal(px_status_u64(e, "inserts_bulk"), 500);
	assert_int_equal(px_status_u64(e, "fill_limit"), 48);
	check_table(c, &kv, &m);
	pxc_close(c);
	/* relocation on, 20 slots a block kept for write-back: 28 rows per
	 * new block; a room of theta or more is refused at the start */
	{
		const char *room[] = { "--evict-room", "20", NULL };

		assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
		serve_refused(e, "--evict-room", "48", "--evict-room 48: must be below theta (48)");
		set_serve(e, room);
		h_px_start(&e->px, e->serve);
		c = conn(e);
		assert_int_equal(px_status_u64(e, "fill_limit"), 28);
		bulk_ok(e, c, &kv, &m, rows, 12000, 1120, 28, 64 + 50 + 30 + 11);
		check_table(c, &kv, &m);
		pxc_close(c);
	}
	/* durable, and consistent for lwc-proxy check */
	px_restart(e);
	c = conn(e);
	check_table(c, &kv, &m);
	pxc_close(c);
	assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
	if (h_px_check(&e->px, out) != 0) {
		h_tail(out, 10);
		fail_msg("lwc-proxy check failed after bulk INSERTs");
	}
	model_free(&m);
	free(rows);
}

/* ---- block formats: old databases open, every format and cell size works ---- */

/* The state of a stopped proxy (state_dir/state), opened for writing. */
static MDB_env *open_state_env(const char *state_dir)
{
	char path[600];
	MDB_env *env;

	snprintf(path, sizeof(path), "%s/state", state_dir);
	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 64), 0);
	assert_int_equal(mdb_env_open(env, path, MDB_NOTLS, 0600), 0);
	return env;
}

/* Make the state's geometry what releases before block formats wrote: four
 * words, no format (their blocks' permutation draws are format 1). */
static void geometry_drop_format(const char *state_dir)
{
	MDB_env *env = open_state_env(state_dir);
	MDB_txn *txn;
	MDB_dbi meta;
	MDB_val k = { 8, (void *)"geometry" }, v;
	uint8_t geo[16];

	assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "meta", 0, &meta), 0);
	assert_int_equal(mdb_get(txn, meta, &k, &v), 0);
	assert_int_equal(v.mv_size, 20);
	{
		const uint8_t *f = (const uint8_t *)v.mv_data + 16;
		assert_int_equal((uint32_t)f[0] << 24 | (uint32_t)f[1] << 16 |
				 (uint32_t)f[2] << 8 | f[3], CRY_PERM_V1);
	}
	memcpy(geo, v.mv_data, 16);
	v.mv_size = 16;
	v.mv_data = geo;
	assert_int_equal(mdb_put(txn, meta, &k, &v, 0), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
}

/* An INSERT of row key k whose tokens go as one token_block
 * (WIRE_FEATURE_TOKEN_BLOCK); how: 0 whole, 1 one byte short, 2 the block
 * and the tokens both, 3 one token short.  Returns pxc_simple's code. */
static int insert_token_block(struct pxc *c, const struct pxc_table *t, struct pxc_row *row,
			      int how)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Insert ins = LWC__INSERT__INIT;
	Lwc__Row *pr = pxc_pbrow(pxc_keys(c), t, row), *rows[1] = { pr };
	ProtobufCBinaryData *toks = pr->tokens;
	size_t nt = pr->n_tokens;
	uint8_t handle[16], *block = malloc(nt * CRY_TOKEN_BYTES);
	uint64_t cnt = 0;
	int rc;

	assert_non_null(block);
	for (size_t j = 0; j < nt; j++) {
		assert_int_equal(toks[j].len, CRY_TOKEN_BYTES);
		memcpy(block + j * CRY_TOKEN_BYTES, toks[j].data, CRY_TOKEN_BYTES);
	}
	pr->token_block.data = block;
	pr->token_block.len = nt * CRY_TOKEN_BYTES - (how == 1 ? 1 : how == 3 ? CRY_TOKEN_BYTES : 0);
	if (how != 2)
		pr->n_tokens = 0;
	pxc_handle(pxc_keys(c), t->name, handle);
	ins.table.data = handle;
	ins.table.len = 16;
	ins.n_rows = 1;
	ins.rows = rows;
	req.op_case = LWC__PROXY_REQUEST__OP_INSERT;
	req.insert = &ins;
	rc = pxc_simple(c, &req, &cnt);
	assert_true(rc != LWC_OK || cnt == 1);
	pr->n_tokens = nt;
	pr->token_block.data = NULL;
	pr->token_block.len = 0;
	pxc_pbrow_free(pr);
	free(block);
	return rc;
}

/* Rows whose tokens come as one token_block are inserted and found as the
 * ones with a field a token; a block that is not whole tokens, that comes
 * with tokens too or that holds one token too few is refused, and nothing
 * changes. */
static void test_token_block(void **state)
{
	struct env *e = *state;
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row rows[40];
	Lwc__ProxyResponse *cat = NULL;
	struct pxc *c;

	deploy(e, 16, NULL);
	c = conn(e);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	OK(c, pxc_create_table(c, &kv, 0));
	OK(c, pxc_list_tables(c, &cat));
	assert_int_equal(cat->result_case, LWC__PROXY_RESPONSE__RESULT_CATALOG);
	assert_true(cat->catalog->features & WIRE_FEATURE_TOKEN_BLOCK);
	lwc__proxy_response__free_unpacked(cat, NULL);
	for (int i = 0; i < 40; i++)
		rows[i] = kv_row(&kv, i, i % 2 ? "odd" : "even");
	do_insert(c, &kv, &m, rows, 20);          /* a token a field */
	for (int i = 20; i < 40; i++) {
		OK(c, insert_token_block(c, &kv, &rows[i], 0));
		model_add(&m, &rows[i]);
	}
	check_table(c, &kv, &m);
	for (int i = 0; i < 40; i += 3)
		sel_key(c, &kv, &m, i);
	{
		struct pxc_row r = kv_row(&kv, 100, "bad");

		assert_int_equal(insert_token_block(c, &kv, &r, 1), LWC_ERR_PROTO);
		assert_int_equal(insert_token_block(c, &kv, &r, 2), LWC_ERR_PROTO);
		assert_int_equal(insert_token_block(c, &kv, &r, 3), LWC_ERR_SCHEMA);
		/* a duplicate key through a block: the unique check sees it */
		assert_int_equal(insert_token_block(c, &kv, &rows[25], 0), LWC_ERR_UNIQUE);
	}
	check_table(c, &kv, &m);
	pxc_close(c);
	model_free(&m);
}

/* Make the state what a release before index spans wrote (state format
 * 3): each index value one row id.  Returns how many values were spans of
 * more than one row. */
static size_t state_to_format3(const char *state_dir)
{
	MDB_env *env = open_state_env(state_dir);
	MDB_txn *txn;
	MDB_dbi main_db, meta;
	MDB_cursor *names;
	MDB_val k, v;
	size_t multi = 0;
	uint8_t fmt[8];

	assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, NULL, 0, &main_db), 0);
	assert_int_equal(mdb_cursor_open(txn, main_db, &names), 0);
	while (mdb_cursor_get(names, &k, &v, MDB_NEXT) == 0) {
		char name[64];
		unsigned tid, col;
		char x;
		MDB_dbi dbi;
		MDB_cursor *cur;
		MDB_val ik, iv;
		struct { uint8_t key[32]; size_t klen; uint64_t first; uint32_t n; } *ent = NULL;
		size_t nent = 0, cap = 0;

		if (k.mv_size >= sizeof(name))
			continue;
		memcpy(name, k.mv_data, k.mv_size);
		name[k.mv_size] = '\0';
		if (!(sscanf(name, "t%u.c%u", &tid, &col) == 2 ||
		      (sscanf(name, "t%u.%c", &tid, &x) == 2 && x == 'x')))
			continue;
		assert_int_equal(mdb_dbi_open(txn, name, MDB_DUPSORT | MDB_DUPFIXED, &dbi), 0);
		assert_int_equal(mdb_cursor_open(txn, dbi, &cur), 0);
		while (mdb_cursor_get(cur, &ik, &iv, MDB_NEXT) == 0) {
			if (nent == cap) {
				cap = cap ? 2 * cap : 256;
				ent = realloc(ent, cap * sizeof(*ent));
				assert_non_null(ent);
			}
			assert_true(ik.mv_size <= sizeof(ent->key));
			assert_int_equal(iv.mv_size, 8);
			memcpy(ent[nent].key, ik.mv_data, ik.mv_size);
			ent[nent].klen = ik.mv_size;
			ent[nent].first = cry_get_be64(iv.mv_data) >> 16;
			ent[nent].n = (uint32_t)(cry_get_be64(iv.mv_data) & 0xffff) + 1;
			multi += ent[nent].n > 1;
			nent++;
		}
		mdb_cursor_close(cur);
		assert_int_equal(mdb_drop(txn, dbi, 0), 0);
		for (size_t i = 0; i < nent; i++)
			for (uint32_t j = 0; j < ent[i].n; j++) {
				uint8_t id[8];
				MDB_val kk = { ent[i].klen, ent[i].key }, vv = { 8, id };

				cry_put_be64(id, ent[i].first + j);
				assert_int_equal(mdb_put(txn, dbi, &kk, &vv, 0), 0);
			}
		free(ent);
	}
	mdb_cursor_close(names);
	assert_int_equal(mdb_dbi_open(txn, "meta", 0, &meta), 0);
	cry_put_be64(fmt, 3);
	k.mv_size = 6;
	k.mv_data = (void *)"format";
	v.mv_size = 8;
	v.mv_data = fmt;
	assert_int_equal(mdb_put(txn, meta, &k, &v, 0), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	return multi;
}

/* A state of format 3 (an index value one row id) opens: its values become
 * spans, and every row is found, kept and removed as before. */
static void test_state_format3(void **state)
{
	struct env *e = *state;
	struct pxc_table kv;
	struct model m = { 0 };
	struct pxc_row *rows = calloc(3000, sizeof(*rows));
	struct pxc *c;
	char out[400];

	assert_non_null(rows);
	snprintf(out, sizeof(out), "%s/fmt3.out", e->px.dir);
	deploy(e, 16, NULL);
	c = conn(e);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	OK(c, pxc_create_table(c, &kv, 0));
	/* one bulk statement (one text value for all: its rows one span) and a
	 * few small ones */
	for (int i = 0; i < 3000; i++)
		rows[i] = kv_row(&kv, i, i < 2990 ? "bulk" : "small");
	do_insert(c, &kv, &m, rows, 2990);
	for (int i = 2990; i < 3000; i++)
		do_insert(c, &kv, &m, rows + i, 1);
	check_table(c, &kv, &m);
	pxc_close(c);
	assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
	assert_true(state_to_format3(e->px.state) > 0);
	px_start(e, NULL);
	assert_int_equal(h_count_lines(e->px.log, "converted to format 4"), 1);
	c = conn(e);
	check_table(c, &kv, &m);
	for (int i = 0; i < 3000; i += 97)
		sel_key(c, &kv, &m, i);
	/* rows out of the middle and the ends of the span */
	do_delete(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 0), NULL, NULL);
	do_delete(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 1500), NULL, NULL);
	do_delete(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 2989), NULL, NULL);
	{
		struct set_arg a = { 1, pxc_text("changed"), 0 }, am = a;
		do_update(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 700), set_fn, &a, &am);
	}
	check_table(c, &kv, &m);
	pxc_close(c);
	assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
	if (h_px_check(&e->px, out) != 0) {
		h_tail(out, 10);
		fail_msg("lwc-proxy check failed after the conversion from format 3");
	}
	/* converted once: a second start does not convert again */
	px_start(e, NULL);
	assert_int_equal(h_count_lines(e->px.log, "converted to format 4"), 1);
	assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
	free(rows);
	model_free(&m);
}

static void test_block_formats(void **state)
{
	struct env *e = *state;
	static const struct {
		const char *fmt, *cell;
	} cases[] = { { "2", "8" }, { "2", "1" }, { "1", "1" } };
	char out[400], want[64];

	snprintf(out, sizeof(out), "%s/fmt.out", e->px.dir);
	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
		/* relocation off: the rows stay in their blocks (with it on,
		 * check_table would move them all to the stash) */
		const char *init[] = { "--blocks", "16", "--block-format", cases[ci].fmt,
				       "--cell-bytes", cases[ci].cell, "--relocate", "off", NULL };
		struct pxc_table kv;
		struct model m = { 0 };
		struct pxc_row rows[100];
		struct pxc *c;
		int legacy = strcmp(cases[ci].fmt, "1") == 0;

		if (ci > 0) {
			/* a fresh deployment per case */
			teardown(state);
			assert_int_equal(setup(state), 0);
			e = *state;
			snprintf(out, sizeof(out), "%s/fmt.out", e->px.dir);
		}
		e->nblocks = 16;
		h_px_init(&e->px, &e->cs, init);
		px_start(e, NULL);
		assert_int_equal(h_px_user_add(&e->px, "alice", e->alice), 0);
		c = conn(e);
		assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
		OK(c, pxc_create_table(c, &kv, 0));
		for (int i = 0; i < 100; i++)
			rows[i] = kv_row(&kv, i, "formats");
		do_insert(c, &kv, &m, rows, 100);
		for (int i = 0; i < 100; i += 7)
			sel_key(c, &kv, &m, i);
		{
			struct set_arg a = { 1, pxc_text("changed"), 0 }, am = a;
			do_update(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 3), set_fn, &a, &am);
		}
		do_delete(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 4), NULL, NULL);
		check_table(c, &kv, &m);
		pxc_close(c);
		assert_int_equal(h_px_cli(&e->px, out, "status", "--state", e->px.state,
					  (const char *)NULL), 0);
		snprintf(want, sizeof(want), "cell=%s", cases[ci].cell);
		assert_true(h_count_lines(out, want) == 1);
		assert_true(h_count_lines(out, "block_format") == 1);
		if (legacy) {
			/* the same blocks under the state of an older release: it
			 * opens (format 1 read from the missing word) and serves */
			assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
			geometry_drop_format(e->px.state);
			px_start(e, NULL);
			c = conn(e);
			check_table(c, &kv, &m);
			do_delete(c, &kv, &m, pxc_eq_int(pxc_keys(c), &kv, "k", 5), NULL, NULL);
			check_table(c, &kv, &m);
			pxc_close(c);
		}
		assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
		if (h_px_check(&e->px, out) != 0) {
			h_tail(out, 10);
			fail_msg("lwc-proxy check failed (block format %s, cells of %s)",
				 cases[ci].fmt, cases[ci].cell);
		}
		model_free(&m);
	}
}

/* ---- 8. on a Redis Cluster: failover and resharding under a workload -------------- */

/* A client issuing acknowledged statements (the kill -9 suite's operations)
 * against a model until told to stop; any statement that fails is an error
 * the client saw (the cloud store's retries are invisible to it). */
struct cl_load {
	struct env *e;
	const struct pxc_table *t;
	struct model m;
	atomic_int stop;
	atomic_int acked;
	int failed;
	char err[600];
	uint32_t seed;
};

static void *cl_load_run(void *p)
{
	struct cl_load *L = p;
	int64_t next_key = 1;
	struct pxc *c = NULL;
	char err[512];

	if (pxc_connect(&c, L->e->px.addr, "alice", L->e->alice, L->e->px.ku, err,
			sizeof(err)) != LWC_OK) {
		snprintf(L->err, sizeof(L->err), "connect: %s", err);
		L->failed = 1;
		return NULL;
	}
	pxc_set_timeout(c, 180000);
	while (!atomic_load(&L->stop)) {
		struct crash_op op = { 0 };
		uint64_t cnt = 0;
		size_t want;
		int rc, dice = (int)(rand_r(&L->seed) % 100);

		if (L->m.n < 4 || dice < (L->m.n > 80 ? 25 : 45)) {
			op.kind = OP_INSERT;
			op.n = 1 + (int)(rand_r(&L->seed) % 4);
			for (int i = 0; i < op.n; i++)
				op.keys[i] = next_key++;
		} else {
			op.kind = dice < 75 ? OP_UPDATE : dice < 90 ? OP_DELETE : OP_IDELETE;
			op.n = 1 + (int)(rand_r(&L->seed) % 3);
			for (int i = 0; i < op.n; i++)
				op.keys[i] = L->m.rows[rand_r(&L->seed) % L->m.n].v[0].i;
			for (int i = 1; i < op.n; i++)
				for (int j = 0; j < i; j++)
					if (op.keys[j] == op.keys[i]) {
						op.keys[i--] = op.keys[--op.n];
						break;
					}
			snprintf(op.s, sizeof(op.s), "u%d", atomic_load(&L->acked));
		}
		rc = crash_run(c, L->t, &op, &cnt);
		if (rc != LWC_OK) {
			snprintf(L->err, sizeof(L->err), "statement %d failed: %s (%s)",
				 atomic_load(&L->acked), lwc_errname(rc), pxc_errmsg(c));
			L->failed = 1;
			break;
		}
		want = crash_apply(&L->m, L->t, &op);
		if (cnt != want) {
			snprintf(L->err, sizeof(L->err), "Done.count %" PRIu64 ", expected %zu", cnt,
				 want);
			L->failed = 1;
			break;
		}
		atomic_fetch_add(&L->acked, 1);
	}
	pxc_close(c);
	return NULL;
}

/* Before failing a cluster test: kill -9 the proxy, so a statement of the
 * workload stuck behind a broken cluster ends and teardown does not wait. */
static void cl_abort(struct env *e)
{
	if (e->px.pid > 0)
		h_px_stop(&e->px, SIGKILL);
}

/* Runs tests/redis-cluster-tmp.sh CMD DIR [ARG...] (NULL-terminated);
 * its output into out (may be NULL).  Fails the test when it fails. */
static void rc_script(struct env *e, char *out, size_t outlen, const char *cmd, ...)
{
	const char *argv[12] = { "/bin/sh", "tests/redis-cluster-tmp.sh", cmd,
				 getenv("LWC_TEST_REDIS_DIR") };
	char path[400];
	va_list ap;
	int n = 4, st;

	va_start(ap, cmd);
	while (n < 11 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	snprintf(path, sizeof(path), "%s/rc-script.out", e->px.dir);
	st = h_run(argv, path);
	if (out) {
		size_t len = 0;
		uint8_t *b = read_file(path, &len);
		snprintf(out, outlen, "%.*s", (int)len, b ? (const char *)b : "");
		free(b);
		while (len > 0 && out[strlen(out) - 1] == '\n')
			out[strlen(out) - 1] = '\0', len--;
	}
	if (st != 0) {
		h_tail(path, 10);
		cl_abort(e);
		fail_msg("tests/redis-cluster-tmp.sh %s exited %d", cmd, st);
	}
}

/* Skips unless on the Redis Cluster of tests/run.sh; else a deployment whose
 * cloud store waits for one replica per WRITE (wait=1), table kv, and a
 * workload running. */
static int cl_begin(struct env *e, struct pxc_table *t, struct cl_load *L, pthread_t *th,
		    unsigned blocks)
{
	const char *serve[] = { "--pad", "ratio:2", "--pad-min", "4", NULL };
	struct pxc *c;

	if (strcmp(h_backend(), "redis") != 0 || getenv("LWC_TEST_REDIS_DIR") == NULL) {
		fprintf(stderr, "    (only on the Redis Cluster of tests/run.sh)\n");
		return 0;
	}
	h_cs_stop(&e->cs, SIGTERM);
	strncat(e->cs.store, ",wait=1", sizeof(e->cs.store) - strlen(e->cs.store) - 1);
	h_cs_start(&e->cs, NULL);
	deploy(e, blocks, serve);
	assert_int_equal(pxc_table_def(t, "kv", "k:int:pk,v:int,s:text"), 0);
	c = conn(e);
	OK(c, pxc_create_table(c, t, 0));
	pxc_close(c);
	memset(L, 0, sizeof(*L));
	L->e = e;
	L->t = t;
	L->seed = (uint32_t)time(NULL) ^ (uint32_t)getpid();
	fprintf(stderr, "    seed %u\n", L->seed);
	assert_int_equal(pthread_create(th, NULL, cl_load_run, L), 0);
	return 1;
}

/* Waits until the workload has n more statements acknowledged (bounded). */
static void cl_progress(struct cl_load *L, int n, const char *what)
{
	struct env *e = L->e;

	int from = atomic_load(&L->acked);

	for (int i = 0; i < 1800 && !L->failed; i++) {
		if (atomic_load(&L->acked) >= from + n)
			return;
		usleep(100000);
	}
	cl_abort(e);
	if (L->failed)
		fail_msg("%s: %s", what, L->err);
	fail_msg("%s: no %d statements acknowledged in 180 s", what, n);
}

/* Stops the workload; every acknowledged statement is there, nothing else. */
static void cl_end(struct env *e, struct pxc_table *t, struct cl_load *L, pthread_t th)
{
	struct seen_vals seen[3] = { { 0 } };
	struct pxc_result res;
	struct pxc *c;
	char out[400];
	int st;

	atomic_store(&L->stop, 1);
	pthread_join(th, NULL);
	if (L->failed)
		fail_msg("the client saw an error: %s", L->err);
	c = conn(e);
	OK(c, pxc_select(c, t, NULL, 0, &res));
	if (!rows_equal(res.rows, res.n, L->m.rows, L->m.n)) {
		print_rows("acknowledged", L->m.rows, L->m.n);
		print_rows("found", res.rows, res.n);
		fail_msg("lost or half-applied statements");
	}
	pxc_result_free(&res);
	check_indexes(c, t, &L->m, seen, 1);
	pxc_close(c);
	for (int i = 0; i < 3; i++)
		free(seen[i].v);
	st = h_px_stop(&e->px, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(out, sizeof(out), "%s/check.out", e->px.dir);
	if ((st = h_px_check(&e->px, out)) != 0) {
		h_tail(out, 20);
		fail_msg("lwc-proxy check exited %d", st);
	}
	fprintf(stderr, "    %d statements acknowledged, %zu rows, all present\n",
		atomic_load(&L->acked), L->m.n);
	model_free(&L->m);
}

/* kill -9 of a master in the middle of the workload, LWC_FAILOVER_ROUNDS
 * times (default 1; `make test-failover` runs 20): its replica takes over,
 * the cloud store retries (its WRITEs wait for a replica, so what it
 * acknowledged was on the replica), the killed node comes back as a
 * replica, and the client never sees an error. */
static void test_cluster_failover(void **state)
{
	struct env *e = *state;
	const char *env_rounds = getenv("LWC_FAILOVER_ROUNDS");
	int rounds = env_rounds ? atoi(env_rounds) : 1;
	struct pxc_table t;
	struct cl_load L;
	pthread_t th;

	if (!cl_begin(e, &t, &L, &th, 256))
		skip();
	for (int round = 0; round < rounds; round++) {
		char masters[1024], victim[64], pid[32];
		int nm = 0, pick, at_kill;
		char *line, *save = NULL;

		cl_progress(&L, 5 + (int)(rand_r(&L.seed) % 30), "before the kill");
		rc_script(e, masters, sizeof(masters), "masters", NULL);
		for (char *p = masters; *p; p++)
			nm += *p == '\n';
		nm++;
		pick = (int)(rand_r(&L.seed) % (unsigned)nm);
		line = strtok_r(masters, "\n", &save);
		for (int i = 0; i < pick && line; i++)
			line = strtok_r(NULL, "\n", &save);
		assert_non_null(line);
		snprintf(victim, sizeof(victim), "%s", line);
		rc_script(e, pid, sizeof(pid), "pid", victim, NULL);
		at_kill = atomic_load(&L.acked);
		assert_int_equal(kill((pid_t)atoi(pid), SIGKILL), 0);
		rc_script(e, NULL, 0, "wait-failover", victim, NULL);
		rc_script(e, NULL, 0, "restart", victim, NULL);
		cl_progress(&L, 10, "after the failover");
		fprintf(stderr, "    round %d: master %s killed after %d statements; %d "
			"acknowledged since\n", round, victim, at_kill,
			atomic_load(&L.acked) - at_kill);
	}
	cl_end(e, &t, &L, th);
}

/* A master added and 4096 slots moved to it (keys migrated one by one,
 * clients redirected with ASK and MOVED) while the workload runs. */
static void test_cluster_reshard(void **state)
{
	struct env *e = *state;
	struct pxc_table t;
	struct cl_load L;
	pthread_t th;
	char added[256], *id;
	long moved;

	if (!cl_begin(e, &t, &L, &th, 256))
		skip();
	cl_progress(&L, 10, "before adding a master");
	rc_script(e, added, sizeof(added), "add-master", NULL);
	id = strchr(added, ' ');
	assert_non_null(id);
	*id++ = '\0';
	rc_script(e, NULL, 0, "reshard", id, "4096", NULL);
	cl_progress(&L, 10, "after the resharding");
	{
		char host[64];
		int port;
		snprintf(host, sizeof(host), "%.*s", (int)(strrchr(added, ':') - added), added);
		port = atoi(strrchr(added, ':') + 1);
		moved = h_redis_count(host, port, e->cs.prefix);
	}
	fprintf(stderr, "    new master %s holds %ld keys of this deployment\n", added, moved);
	assert_true(moved > 0);
	cl_end(e, &t, &L, th);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_end_to_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace_padding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relocation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insert_room, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relocation_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_plaintext, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tamper, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_kill9, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revoke, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cloud_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_select_answers_after_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_select_answered_early, setup, teardown),
		cmocka_unit_test_setup_teardown(test_select_answered_durable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_select_rows_before_ack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pace_fixed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pace_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli, setup, teardown),
		cmocka_unit_test_setup_teardown(test_block_formats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_format3, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bulk_insert, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bulk_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cluster_failover, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cluster_reshard, setup, teardown),
	};
	signal(SIGPIPE, SIG_IGN);
	if (sodium_init() < 0)
		return 1;
	if (getenv("LWC_TEST_FILTER"))         /* e.g. LWC_TEST_FILTER=test_tamper */
		cmocka_set_test_filter(getenv("LWC_TEST_FILTER"));
	fprintf(stderr, "proxy suite on backend: %s\n", h_backend());
	if (getenv("LWC_TEST_ONLY")) {         /* a list: test_end_to_end,test_concurrent */
		static struct CMUnitTest sel[sizeof(tests) / sizeof(tests[0])];
		const char *only = getenv("LWC_TEST_ONLY");
		size_t k = 0;

		for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
			size_t len = strlen(tests[i].name);
			const char *p = only;

			while ((p = strstr(p, tests[i].name)) != NULL) {
				if ((p == only || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) {
					sel[k++] = tests[i];
					break;
				}
				p += len;
			}
		}
		if (k == 0) {
			fprintf(stderr, "LWC_TEST_ONLY names no test of this suite\n");
			return 1;
		}
		return _cmocka_run_group_tests(h_backend(), sel, k, NULL, NULL);
	}
	return cmocka_run_group_tests_name(h_backend(), tests, NULL, NULL);
}
