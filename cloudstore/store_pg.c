/*
 * store_pg.c - PostgreSQL block-store backend ("postgres:CONNINFO", libpq).
 *
 * Schema: lwc_blocks (id, version, data) keyed by (id, version), and
 * lwc_meta (k, v) holding the store's block size under k = 'block_size'.
 *
 * Portable recipe of DESIGN section 9, meant to let the same code run on
 * Citus, CockroachDB and YugabyteDB (none of them tried: only PostgreSQL is
 * tested; the tested distributed store is store_redis.c): every statement is prepared once per session
 * with binary parameters and binary results (int8[] and bytea[] sent in the
 * binary array format), upserts use INSERT ... ON CONFLICT, no statement
 * names an id twice, each statement carries well under 16 MiB of
 * parameters (a large WRITE is split into several INSERTs inside ONE
 * transaction), every transaction is explicit and retried on SQLSTATE
 * 40001 / 40P01, and COPY is never used.
 *
 * A session owns one PGconn and is used by one thread.  A lost connection is
 * reported; the next call on the session tries PQreset once and prepares
 * the statements again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "store.h"

#define OID_INT8        20
#define OID_BYTEA       17
#define OID_INT8_ARRAY  1016
#define OID_BYTEA_ARRAY 1001

#define PG_STMT_BYTES   (8u << 20)   /* parameter (or result) bytes per statement */
#define PG_ID_CHUNK     65536u       /* ids per statement                         */
#define PG_RETRIES      10           /* attempts on 40001 / 40P01                 */
#define ARR_HDR         20           /* header of a 1-D binary array              */

struct cs_store {
	char *conninfo;
	struct cs_session *lock;       /* holds the store's advisory lock     */
};


struct cs_session {
	PGconn *conn;
	unsigned prepared;      /* bit i set: stmts[i] prepared on this conn */
	int retry;              /* last failure was 40001 / 40P01            */
	char state[6];          /* SQLSTATE of the last failure, or ""       */
	uint32_t bs;            /* committed block size once known, else 0   */
	uint32_t rng;           /* backoff jitter                            */
};

enum {
	ST_LOCK, ST_META_GET, ST_META_SET, ST_UPSERT, ST_PRUNE, ST_READ,
	ST_HELD, ST_TOTALS, ST_COUNT
};

static const struct {
	const char *name;
	const char *sql;
	int nparams;
	Oid types[3];
} stmts[ST_COUNT] = {
	[ST_LOCK] = { "lwc_lock",
		"SELECT id, version FROM lwc_blocks WHERE id = ANY($1::int8[]) FOR UPDATE",
		1, { OID_INT8_ARRAY } },
	[ST_META_GET] = { "lwc_meta_get",
		"SELECT v FROM lwc_meta WHERE k = 'block_size'",
		0, { 0 } },
	[ST_META_SET] = { "lwc_meta_set",
		"INSERT INTO lwc_meta (k, v) VALUES ('block_size', $1::int8) "
		"ON CONFLICT (k) DO NOTHING",
		1, { OID_INT8 } },
	[ST_UPSERT] = { "lwc_upsert",
		"INSERT INTO lwc_blocks (id, version, data) "
		"SELECT * FROM unnest($1::int8[], $2::int8[], $3::bytea[]) "
		"ON CONFLICT (id, version) DO UPDATE SET data = EXCLUDED.data",
		3, { OID_INT8_ARRAY, OID_INT8_ARRAY, OID_BYTEA_ARRAY } },
	[ST_PRUNE] = { "lwc_prune",
		"DELETE FROM lwc_blocks AS b "
		"USING unnest($1::int8[], $2::int8[]) AS u(id, keep) "
		"WHERE b.id = u.id AND b.version < u.keep",
		2, { OID_INT8_ARRAY, OID_INT8_ARRAY } },
	[ST_READ] = { "lwc_read",
		"SELECT b.id, b.version, b.data FROM lwc_blocks AS b "
		"JOIN unnest($1::int8[], $2::int8[]) AS u(id, v) "
		"ON b.id = u.id AND b.version = u.v",
		2, { OID_INT8_ARRAY, OID_INT8_ARRAY } },
	[ST_HELD] = { "lwc_held",
		"SELECT id, version FROM lwc_blocks WHERE id = ANY($1::int8[])",
		1, { OID_INT8_ARRAY } },
	[ST_TOTALS] = { "lwc_totals",
		"SELECT count(DISTINCT id), count(*), "
		"(SELECT v FROM lwc_meta WHERE k = 'block_size') FROM lwc_blocks",
		0, { 0 } },
};

static const char *const schema_sql[] = {
	"CREATE TABLE IF NOT EXISTS lwc_blocks ("
	"id bigint NOT NULL, version bigint NOT NULL, data bytea NOT NULL, "
	"PRIMARY KEY (id, version))",
	"CREATE TABLE IF NOT EXISTS lwc_meta (k text PRIMARY KEY, v bigint NOT NULL)",
};

/* (id, request position) pairs sorted by id: maps result rows back. */
struct idx {
	uint64_t id;
	size_t pos;
};

/* Drops server notices (CREATE ... IF NOT EXISTS): the library never logs. */
static void quiet_notice(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* Copies a libpq message into out on one line, runs of blanks folded. */
static const char *clean_msg(const char *in, char *out, size_t outlen)
{
	size_t n = 0;

	if (in == NULL || *in == '\0')
		in = "(no message from libpq)";
	for (; *in != '\0' && n + 3 < outlen; in++) {
		if (*in == '\n') {
			while (n > 0 && out[n - 1] == ' ')
				n--;
			out[n++] = ';';
			out[n++] = ' ';
		} else if (*in == ' ' || *in == '\t' || *in == '\r') {
			if (n > 0 && out[n - 1] != ' ')
				out[n++] = ' ';
		} else {
			out[n++] = *in;
		}
	}
	while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == ';'))
		n--;
	out[n] = '\0';
	return out;
}

/* Records a failed libpq call (r may be NULL) in err; returns LWC_ERR_STORE. */
static int pg_fail(struct cs_session *s, const PGresult *r, const char *what,
		   char *err, size_t errlen)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *prim = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	char msg[512];

	s->state[0] = '\0';
	if (state != NULL) {
		strncpy(s->state, state, sizeof(s->state) - 1);
		s->state[sizeof(s->state) - 1] = '\0';
	}
	s->retry = strcmp(s->state, "40001") == 0 || strcmp(s->state, "40P01") == 0;
	if (PQstatus(s->conn) == CONNECTION_BAD) {
		lwc_errf(err, errlen, "postgres: %s: connection lost: %s", what,
			 clean_msg(PQerrorMessage(s->conn), msg, sizeof(msg)));
	} else if (prim != NULL) {
		lwc_errf(err, errlen, "postgres: %s: %s (SQLSTATE %s)", what,
			 clean_msg(prim, msg, sizeof(msg)), state ? state : "?");
	} else if (r != NULL && PQresultStatus(r) != PGRES_FATAL_ERROR &&
		   PQresultStatus(r) != PGRES_NONFATAL_ERROR) {
		lwc_errf(err, errlen, "postgres: %s: unexpected result status %s",
			 what, PQresStatus(PQresultStatus(r)));
	} else {
		lwc_errf(err, errlen, "postgres: %s: %s", what,
			 clean_msg(PQerrorMessage(s->conn), msg, sizeof(msg)));
	}
	return LWC_ERR_STORE;
}

/* Runs simple-protocol SQL that returns no rows (BEGIN, DDL, ...). */
static int exec_cmd(struct cs_session *s, const char *sql, const char *what,
		    char *err, size_t errlen)
{
	PGresult *r = PQexec(s->conn, sql);
	int rc = LWC_OK;

	if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK)
		rc = pg_fail(s, r, what, err, errlen);
	PQclear(r);
	return rc;
}

/* COMMIT, making sure the server did commit (not roll back). */
static int exec_commit(struct cs_session *s, char *err, size_t errlen)
{
	PGresult *r = PQexec(s->conn, "COMMIT");
	int rc = LWC_OK;

	if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
		rc = pg_fail(s, r, "COMMIT", err, errlen);
	} else if (strcmp(PQcmdStatus(r), "COMMIT") != 0) {
		s->retry = 0;
		lwc_errf(err, errlen, "postgres: COMMIT: server answered '%s'",
			 PQcmdStatus(r));
		rc = LWC_ERR_STORE;
	}
	PQclear(r);
	return rc;
}

/* Leaves any open transaction; errors are ignored (the conn may be gone). */
static void rollback(struct cs_session *s)
{
	PGTransactionStatusType ts;

	if (PQstatus(s->conn) != CONNECTION_OK)
		return;
	ts = PQtransactionStatus(s->conn);
	if (ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR)
		PQclear(PQexec(s->conn, "ROLLBACK"));
}

/* Runs prepared statement st with binary parameters and binary results.
 * Returns the result when its status is want, else NULL with err filled. */
static PGresult *run(struct cs_session *s, int st, const char *const *vals,
		     const int *lens, ExecStatusType want, char *err, size_t errlen)
{
	static const int fmts[3] = { 1, 1, 1 };
	PGresult *r;

	r = PQexecPrepared(s->conn, stmts[st].name, stmts[st].nparams, vals, lens,
			   fmts, 1);
	if (r != NULL && PQresultStatus(r) == want)
		return r;
	pg_fail(s, r, stmts[st].name, err, errlen);
	PQclear(r);
	return NULL;
}

/* Reconnects a lost session once and prepares whatever is not prepared. */
static int sess_ready(struct cs_session *s, char *err, size_t errlen)
{
	char msg[512];

	s->retry = 0;
	s->state[0] = '\0';
	if (PQstatus(s->conn) != CONNECTION_OK) {
		PQreset(s->conn);
		s->prepared = 0;
		if (PQstatus(s->conn) != CONNECTION_OK) {
			lwc_errf(err, errlen, "postgres: connection lost, reconnect failed: %s",
				 clean_msg(PQerrorMessage(s->conn), msg, sizeof(msg)));
			return LWC_ERR_STORE;
		}
	}
	rollback(s);
	for (int i = 0; i < ST_COUNT; i++) {
		PGresult *r;

		if (s->prepared & (1u << i))
			continue;
		r = PQprepare(s->conn, stmts[i].name, stmts[i].sql, stmts[i].nparams,
			      stmts[i].types);
		if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
			int rc = pg_fail(s, r, "prepare", err, errlen);
			PQclear(r);
			return rc;
		}
		PQclear(r);
		s->prepared |= 1u << i;
	}
	return LWC_OK;
}

/* Sleeps a little before retry number attempt + 1 (1, 2, 4 ... 100 ms, jittered). */
static void backoff(struct cs_session *s, int attempt)
{
	long ms = attempt < 7 ? 1L << attempt : 100;
	struct timespec ts;

	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 17;
	s->rng ^= s->rng << 5;
	if (ms > 100)
		ms = 100;
	ms = ms / 2 + (long)(s->rng % (uint32_t)ms) + 1;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

/* True when a failed attempt should be run again. */
static int again(struct cs_session *s, int rc, int attempt)
{
	return rc == LWC_ERR_STORE && s->retry && attempt + 1 < PG_RETRIES;
}

/* After the retry loop: drop a retried attempt's message on success, say
 * when the retries ran out. */
static void retry_done(struct cs_session *s, int rc, int attempt, char *err, size_t errlen)
{
	size_t used;

	if (err == NULL || errlen == 0)
		return;
	if (rc == LWC_OK && attempt > 0) {
		err[0] = '\0';
	} else if (rc == LWC_ERR_STORE && s->retry && attempt + 1 >= PG_RETRIES) {
		used = strnlen(err, errlen);
		if (used + 1 < errlen)
			snprintf(err + used, errlen - used, " (gave up after %d attempts)",
				 PG_RETRIES);
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

/* Header of a one-dimensional binary array without NULLs. */
static uint8_t *arr_header(uint8_t *p, Oid elem, size_t n)
{
	put32(p, 1);                    /* ndim           */
	put32(p + 4, 0);                /* has nulls      */
	put32(p + 8, elem);             /* element type   */
	put32(p + 12, (uint32_t)n);     /* dimension size */
	put32(p + 16, 1);               /* lower bound    */
	return p + ARR_HDR;
}

/* Binary int8[] of v[0..n); *len gets its size.  NULL when out of memory. */
static uint8_t *enc_int8(const uint64_t *v, size_t n, int *len)
{
	size_t sz = ARR_HDR + 12 * n;
	uint8_t *buf = malloc(sz), *p;

	if (buf == NULL)
		return NULL;
	p = arr_header(buf, OID_INT8, n);
	for (size_t i = 0; i < n; i++, p += 12) {
		put32(p, 8);
		put64(p + 4, v[i]);
	}
	*len = (int)sz;
	return buf;
}

/* Binary bytea[] of the data of b[0..n); *len gets its size. */
static uint8_t *enc_bytea(const struct cs_block *b, size_t n, int *len)
{
	size_t sz = ARR_HDR;
	uint8_t *buf, *p;

	for (size_t i = 0; i < n; i++)
		sz += 4 + b[i].len;
	buf = malloc(sz);
	if (buf == NULL)
		return NULL;
	p = arr_header(buf, OID_BYTEA, n);
	for (size_t i = 0; i < n; i++) {
		put32(p, (uint32_t)b[i].len);
		memcpy(p + 4, b[i].data, b[i].len);
		p += 4 + b[i].len;
	}
	*len = (int)sz;
	return buf;
}

/* Reads a binary int8 field; -1 when it is NULL or malformed. */
static int get_u64(const PGresult *r, int row, int col, uint64_t *out)
{
	const unsigned char *p;
	uint64_t v = 0;

	if (PQgetisnull(r, row, col) || PQgetlength(r, row, col) != 8 ||
	    PQfformat(r, col) != 1)
		return -1;
	p = (const unsigned char *)PQgetvalue(r, row, col);
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	*out = v;
	return 0;
}

static int bad_row(const char *what, char *err, size_t errlen)
{
	lwc_errf(err, errlen, "postgres: %s: malformed result row", what);
	return LWC_ERR_STORE;
}

static int cmp_idx(const void *a, const void *b)
{
	const struct idx *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Sorted index of ids[0..n); *dup = 1 (and *dupid) if an id repeats. */
static struct idx *idx_build(const uint64_t *ids, size_t n, int *dup, uint64_t *dupid)
{
	struct idx *ix = malloc((n ? n : 1) * sizeof(*ix));

	*dup = 0;
	if (ix == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		ix[i].id = ids[i];
		ix[i].pos = i;
	}
	qsort(ix, n, sizeof(*ix), cmp_idx);
	for (size_t i = 1; i < n; i++) {
		if (ix[i].id == ix[i - 1].id) {
			*dup = 1;
			*dupid = ix[i].id;
			break;
		}
	}
	return ix;
}

/* First index entry with this id, or NULL. */
static const struct idx *idx_find(const struct idx *ix, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ix[lo].id == id ? &ix[lo] : NULL;
}

/* Adds v to an ascending held list, keeping the newest CS_HELD_MAX. */
static void held_add(struct cs_held *h, uint64_t v)
{
	uint32_t i;

	for (i = 0; i < h->n; i++)
		if (h->v[i] == v)
			return;
	if (h->n == CS_HELD_MAX) {
		if (v < h->v[0])
			return;
		memmove(h->v, h->v + 1, (CS_HELD_MAX - 1) * sizeof(h->v[0]));
		h->n--;
	}
	for (i = h->n; i > 0 && h->v[i - 1] > v; i--)
		h->v[i] = h->v[i - 1];
	h->v[i] = v;
	h->n++;
}

/* The block size in lwc_meta (0 when unset), as seen by the current statement. */
static int meta_get(struct cs_session *s, uint64_t *bs, char *err, size_t errlen)
{
	PGresult *r = run(s, ST_META_GET, NULL, NULL, PGRES_TUPLES_OK, err, errlen);

	if (r == NULL)
		return LWC_ERR_STORE;
	*bs = 0;
	if (PQntuples(r) > 0 && get_u64(r, 0, 0, bs) != 0) {
		PQclear(r);
		return bad_row("lwc_meta_get", err, errlen);
	}
	PQclear(r);
	if (*bs > CS_BLOCK_SIZE_MAX) {
		lwc_errf(err, errlen, "postgres: lwc_meta holds an invalid block size %llu",
			 (unsigned long long)*bs);
		return LWC_ERR_STORE;
	}
	return LWC_OK;
}

/* Stores bs as the block size unless one is set; *cur gets the stored one. */
static int meta_pin(struct cs_session *s, uint64_t bs, uint64_t *cur,
		    char *err, size_t errlen)
{
	uint8_t be[8];
	const char *vals[1] = { (const char *)be };
	int lens[1] = { 8 };
	PGresult *r;

	put64(be, bs);
	r = run(s, ST_META_SET, vals, lens, PGRES_COMMAND_OK, err, errlen);
	if (r == NULL)
		return LWC_ERR_STORE;
	PQclear(r);
	return meta_get(s, cur, err, errlen);
}

/* Creates the tables unless both exist; concurrent creators race safely. */
static int schema_create(struct cs_session *s, char *err, size_t errlen)
{
	static const char probe[] =
		"SELECT count(*) FROM information_schema.tables "
		"WHERE table_schema = current_schema() "
		"AND table_name IN ('lwc_blocks', 'lwc_meta')";
	int rc = LWC_OK;

	for (int attempt = 0; attempt < PG_RETRIES; attempt++) {
		PGresult *r = PQexec(s->conn, probe);
		int have;

		if (r == NULL || PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
			rc = pg_fail(s, r, "schema probe", err, errlen);
			PQclear(r);
			return rc;
		}
		have = atoi(PQgetvalue(r, 0, 0));
		PQclear(r);
		if (have == 2)
			return LWC_OK;
		rc = LWC_OK;
		for (size_t i = 0; rc == LWC_OK && i < sizeof(schema_sql) / sizeof(schema_sql[0]); i++)
			rc = exec_cmd(s, schema_sql[i], "create schema", err, errlen);
		if (rc == LWC_OK)
			return LWC_OK;
		/* Another process creating the same table at the same moment. */
		if (strcmp(s->state, "23505") != 0 && strcmp(s->state, "42P07") != 0 &&
		    strcmp(s->state, "42710") != 0 && !s->retry)
			return rc;
		backoff(s, attempt);
	}
	return rc;
}

static int pg_session_open(struct cs_store *st, struct cs_session **out,
			   char *err, size_t errlen)
{
	static const char *const keys[] = { "dbname", "fallback_application_name", NULL };
	const char *vals[] = { st->conninfo, "lwc-cloudstore", NULL };
	struct cs_session *s;
	char msg[512];

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return LWC_ERR_NOMEM;
	/* expand_dbname: the spec may be a key=value string, a URI or a db name. */
	s->conn = PQconnectdbParams(keys, vals, 1);
	if (s->conn == NULL) {
		free(s);
		return LWC_ERR_NOMEM;
	}
	if (PQstatus(s->conn) != CONNECTION_OK) {
		lwc_errf(err, errlen, "postgres: cannot connect: %s",
			 clean_msg(PQerrorMessage(s->conn), msg, sizeof(msg)));
		PQfinish(s->conn);
		free(s);
		return LWC_ERR_STORE;
	}
	PQsetNoticeProcessor(s->conn, quiet_notice, NULL);
	s->rng = (uint32_t)time(NULL) ^ (uint32_t)(uintptr_t)s ^ 0x9e3779b9u;
	if (s->rng == 0)
		s->rng = 1;
	*out = s;
	return LWC_OK;
}

static void pg_session_close(struct cs_session *s)
{
	if (s == NULL)
		return;
	PQfinish(s->conn);
	free(s);
}

/* One lwc-cloudstore per database (the LMDB backend locks its directory):
 * a session-level advisory lock, held by a connection of its own for the
 * life of the store.  Engines without advisory locks (some PostgreSQL-
 * compatible ones) get no lock, and a warning.  A store restarted right
 * after a crash (kill -9) can find the lock still held by the dead
 * process's session, whose backend ends once it reads the closed socket:
 * the lock is tried for up to PG_STORE_LOCK_WAIT_MS before the store is
 * refused as in use (it_cloudstore test_crash_kill9 restarted into that
 * window once in a loaded run). */
#define PG_STORE_LOCK_KEY "7659471523846"   /* an arbitrary bigint */
#define PG_STORE_LOCK_WAIT_MS 3000
static int store_lock(struct cs_session *s, int *locked, char *err, size_t errlen)
{
	PGresult *r = NULL;
	int rc = LWC_OK;

	*locked = 0;
	for (int waited = 0;; waited += 100) {
		r = PQexec(s->conn, "SELECT pg_try_advisory_lock(" PG_STORE_LOCK_KEY ")");
		if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1 ||
		    strcmp(PQgetvalue(r, 0, 0), "t") == 0 || waited >= PG_STORE_LOCK_WAIT_MS)
			break;
		if (waited == 0)
			fprintf(stderr, "lwc-cloudstore: the PostgreSQL store's lock is held; waiting "
				"up to %d ms for it (the session of a store that just ended "
				"may still be open)\n", PG_STORE_LOCK_WAIT_MS);
		PQclear(r);
		nanosleep(&(struct timespec){ .tv_sec = 0, .tv_nsec = 100 * 1000000L }, NULL);
	}
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
		fprintf(stderr, "lwc-cloudstore: warning: no advisory lock on this database (%s): "
			"make sure no other lwc-cloudstore serves it\n",
			PQresultErrorMessage(r));
	} else if (strcmp(PQgetvalue(r, 0, 0), "t") != 0) {
		PGresult *w = PQexec(s->conn, "SELECT pid, coalesce(host(client_addr), 'local') "
				     "FROM pg_locks JOIN pg_stat_activity USING (pid) WHERE "
				     "locktype = 'advisory' AND pg_locks.database = (SELECT oid FROM "
				     "pg_database WHERE datname = current_database())");
		if (PQresultStatus(w) == PGRES_TUPLES_OK && PQntuples(w) > 0)
			lwc_errf(err, errlen, "the PostgreSQL store is in use by another "
				 "lwc-cloudstore (its database session: backend pid %s, from %s)",
				 PQgetvalue(w, 0, 0), PQgetvalue(w, 0, 1));
		else
			lwc_errf(err, errlen, "the PostgreSQL store is in use by another "
				 "lwc-cloudstore");
		PQclear(w);
		rc = LWC_ERR_BUSY;
	} else {
		*locked = 1;
	}
	PQclear(r);
	return rc;
}

/* The sessions of a store that ended (kill -9) outlive it until their
 * backends notice the closed socket, and one of them may be committing a
 * WRITE the dead store never acknowledged: the lock's session, idle, ends
 * first, so holding the lock does not mean they are gone (it_cloudstore
 * test_crash_kill9 read a block, then saw the dead store's WRITE land on
 * it).  Once the lock is held, every other session of this database with
 * the store's application_name is such a leftover: wait for them to end,
 * then end the ones left (pg_terminate_backend: a commit under way either
 * finishes or is rolled back, either is a WRITE not acknowledged), and
 * refuse to start while any is still there.  An engine without
 * pg_stat_activity gets a warning, as for the lock. */
#define PG_STORE_ORPHAN_WAIT_MS 5000
static int store_orphans(struct cs_session *s, char *err, size_t errlen)
{
	static const char *const q =
		"SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND "
		"pid <> pg_backend_pid() AND application_name = current_setting('application_name')";
	int rc = LWC_OK;

	for (int waited = 0, ended = 0;; waited += 100) {
		PGresult *r = PQexec(s->conn, q);
		int n;

		if (PQresultStatus(r) != PGRES_TUPLES_OK) {
			fprintf(stderr, "lwc-cloudstore: warning: cannot list this database's sessions "
				"(%s): a WRITE left under way by a store that ended may still land\n",
				PQresultErrorMessage(r));
			PQclear(r);
			return LWC_OK;
		}
		if ((n = PQntuples(r)) == 0) {
			PQclear(r);
			if (waited > 0)
				fprintf(stderr, "lwc-cloudstore: the sessions of the store that ended "
					"are gone after %d ms\n", waited);
			return LWC_OK;
		}
		if (waited == 0)
			fprintf(stderr, "lwc-cloudstore: %d session(s) of a store that ended are still "
				"open (backend pid %s%s); waiting up to %d ms for them to end\n", n,
				PQgetvalue(r, 0, 0), n > 1 ? ", ..." : "", PG_STORE_ORPHAN_WAIT_MS);
		if (waited >= PG_STORE_ORPHAN_WAIT_MS && !ended) {
			fprintf(stderr, "lwc-cloudstore: ending them (pg_terminate_backend)\n");
			for (int i = 0; i < n; i++) {
				const char *pv[1] = { PQgetvalue(r, i, 0) };
				PGresult *t = PQexecParams(s->conn, "SELECT pg_terminate_backend($1::int)",
							   1, NULL, pv, NULL, NULL, 0);
				PQclear(t);
			}
			ended = 1;
		} else if (waited >= 2 * PG_STORE_ORPHAN_WAIT_MS) {
			lwc_errf(err, errlen, "%d session(s) of a store that ended are still open on "
				 "this database (backend pid %s) %d ms after the start, and could not be "
				 "ended: a WRITE they hold could still land; stop them "
				 "(pg_terminate_backend) and start again", n, PQgetvalue(r, 0, 0),
				 waited);
			rc = LWC_ERR_BUSY;
			PQclear(r);
			return rc;
		}
		PQclear(r);
		nanosleep(&(struct timespec){ .tv_sec = 0, .tv_nsec = 100 * 1000000L }, NULL);
	}
}

static int pg_open(struct cs_store **out, const char *spec, uint32_t block_size,
		   char *err, size_t errlen)
{
	struct cs_store *st = NULL;
	struct cs_session *s = NULL;
	uint64_t cur = 0;
	int rc, locked;

	*out = NULL;
	if (spec == NULL || *spec == '\0') {
		lwc_errf(err, errlen, "postgres: empty connection string");
		return LWC_ERR_ARG;
	}
	if (block_size > CS_BLOCK_SIZE_MAX) {
		lwc_errf(err, errlen, "block size %u exceeds the maximum %u",
			 block_size, CS_BLOCK_SIZE_MAX);
		return LWC_ERR_BLOCK_SIZE;
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return LWC_ERR_NOMEM;
	st->conninfo = strdup(spec);
	rc = LWC_ERR_NOMEM;
	if (st->conninfo == NULL)
		goto fail;
	rc = pg_session_open(st, &s, err, errlen);
	if (rc != LWC_OK)
		goto fail;
	if ((rc = store_lock(s, &locked, err, errlen)) != LWC_OK ||
	    (locked && (rc = store_orphans(s, err, errlen)) != LWC_OK))
		goto fail;
	rc = schema_create(s, err, errlen);
	if (rc != LWC_OK)
		goto fail;
	if (block_size != 0) {
		for (int attempt = 0;; attempt++) {
			rc = sess_ready(s, err, errlen);
			if (rc == LWC_OK)
				rc = meta_pin(s, block_size, &cur, err, errlen);
			if (!again(s, rc, attempt)) {
				retry_done(s, rc, attempt, err, errlen);
				break;
			}
			backoff(s, attempt);
		}
		if (rc != LWC_OK)
			goto fail;
		if (cur != block_size) {
			lwc_errf(err, errlen, "the store holds %llu-byte blocks, "
				 "but a block size of %u was asked for",
				 (unsigned long long)cur, block_size);
			rc = LWC_ERR_BLOCK_SIZE;
			goto fail;
		}
	}
	st->lock = s;                   /* kept: it holds the lock */
	*out = st;
	return LWC_OK;
fail:
	pg_session_close(s);
	free(st->conninfo);
	free(st);
	return rc;
}

static void pg_close(struct cs_store *st)
{
	if (st == NULL)
		return;
	pg_session_close(st->lock);
	free(st->conninfo);
	free(st);
}

static int pg_block_size(struct cs_session *s, uint32_t *out, char *err, size_t errlen)
{
	uint64_t bs = 0;
	int rc;

	if (s->bs != 0) {
		*out = s->bs;
		return LWC_OK;
	}
	for (int attempt = 0;; attempt++) {
		rc = sess_ready(s, err, errlen);
		if (rc == LWC_OK)
			rc = meta_get(s, &bs, err, errlen);
		if (!again(s, rc, attempt)) {
			retry_done(s, rc, attempt, err, errlen);
			break;
		}
		backoff(s, attempt);
	}
	if (rc != LWC_OK)
		return rc;
	s->bs = (uint32_t)bs;
	*out = s->bs;
	return LWC_OK;
}

/* Working arrays of one WRITE, reused across retries. */
struct wstate {
	uint64_t *ids, *vers;           /* request order                     */
	uint64_t *max, *min;            /* newest / oldest held, 0 = none    */
	uint64_t *pid, *pkeep;          /* prune list: id, oldest to keep    */
	struct idx *ix;
};

static int bs_mismatch(uint64_t have, size_t len, char *err, size_t errlen)
{
	lwc_errf(err, errlen, "block size mismatch: the store holds %llu-byte blocks, "
		 "this WRITE carries %zu-byte blocks", (unsigned long long)have, len);
	return LWC_ERR_BLOCK_SIZE;
}

/* Runs statement st (one int8[] parameter) over ids[0..n) in chunks of
 * PG_ID_CHUNK ids and calls row(arg, id, version) for each (id, version) row
 * it returns.  Used by the WRITE's lock and by STAT. */
static int id_version_rows(struct cs_session *s, int st, const uint64_t *ids, size_t n,
			   void (*row)(void *arg, uint64_t id, uint64_t v), void *arg,
			   char *err, size_t errlen)
{
	for (size_t off = 0; off < n; off += PG_ID_CHUNK) {
		size_t c = n - off < PG_ID_CHUNK ? n - off : PG_ID_CHUNK;
		const char *vals[1];
		int lens[1];
		uint8_t *arr = enc_int8(ids + off, c, &lens[0]);
		PGresult *r;

		if (arr == NULL)
			return LWC_ERR_NOMEM;
		vals[0] = (const char *)arr;
		r = run(s, st, vals, lens, PGRES_TUPLES_OK, err, errlen);
		free(arr);
		if (r == NULL)
			return LWC_ERR_STORE;
		for (int i = 0; i < PQntuples(r); i++) {
			uint64_t id, v;

			if (get_u64(r, i, 0, &id) != 0 || get_u64(r, i, 1, &v) != 0) {
				PQclear(r);
				return bad_row(stmts[st].name, err, errlen);
			}
			row(arg, id, v);
		}
		PQclear(r);
	}
	return LWC_OK;
}

struct lock_rows {
	struct wstate *w;
	size_t n;
};

static void lock_row(void *arg, uint64_t id, uint64_t v)
{
	struct lock_rows *lr = arg;
	struct wstate *w = lr->w;
	const struct idx *e = idx_find(w->ix, lr->n, id);

	if (e == NULL)
		return;
	if (v > w->max[e->pos])
		w->max[e->pos] = v;
	if (w->min[e->pos] == 0 || v < w->min[e->pos])
		w->min[e->pos] = v;
}

/* Fetches (and row-locks) the versions held for every id of the WRITE. */
static int write_lock(struct cs_session *s, size_t n, struct wstate *w,
		      char *err, size_t errlen)
{
	struct lock_rows lr = { w, n };

	return id_version_rows(s, ST_LOCK, w->ids, n, lock_row, &lr, err, errlen);
}

/* Upserts blocks[0..n) in statements of at most PG_STMT_BYTES parameters. */
static int write_upsert(struct cs_session *s, const struct cs_block *blocks, size_t n,
			const struct wstate *w, char *err, size_t errlen)
{
	size_t off = 0;

	while (off < n) {
		size_t c = 0, bytes = 3 * ARR_HDR;
		const char *vals[3];
		int lens[3];
		uint8_t *a[3];
		PGresult *r;

		while (off + c < n && c < PG_ID_CHUNK &&
		       (c == 0 || bytes + 28 + blocks[off + c].len <= PG_STMT_BYTES)) {
			bytes += 28 + blocks[off + c].len;
			c++;
		}
		a[0] = enc_int8(w->ids + off, c, &lens[0]);
		a[1] = enc_int8(w->vers + off, c, &lens[1]);
		a[2] = enc_bytea(blocks + off, c, &lens[2]);
		r = NULL;
		if (a[0] && a[1] && a[2]) {
			for (int i = 0; i < 3; i++)
				vals[i] = (const char *)a[i];
			r = run(s, ST_UPSERT, vals, lens, PGRES_COMMAND_OK, err, errlen);
		}
		for (int i = 0; i < 3; i++)
			free(a[i]);
		if (r == NULL)
			return a[0] && a[1] && a[2] ? LWC_ERR_STORE : LWC_ERR_NOMEM;
		PQclear(r);
		off += c;
	}
	return LWC_OK;
}

/* Deletes, for ids holding them, versions older than the new version - 1. */
static int write_prune(struct cs_session *s, const struct cs_block *blocks, size_t n,
		       struct wstate *w, char *err, size_t errlen)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t keep = blocks[i].version - 1;
		if (w->min[i] != 0 && w->min[i] < keep) {
			w->pid[m] = blocks[i].id;
			w->pkeep[m] = keep;
			m++;
		}
	}
	for (size_t off = 0; off < m; off += PG_ID_CHUNK) {
		size_t c = m - off < PG_ID_CHUNK ? m - off : PG_ID_CHUNK;
		const char *vals[2];
		int lens[2];
		uint8_t *a0 = enc_int8(w->pid + off, c, &lens[0]);
		uint8_t *a1 = enc_int8(w->pkeep + off, c, &lens[1]);
		PGresult *r = NULL;

		if (a0 && a1) {
			vals[0] = (const char *)a0;
			vals[1] = (const char *)a1;
			r = run(s, ST_PRUNE, vals, lens, PGRES_COMMAND_OK, err, errlen);
		}
		free(a0);
		free(a1);
		if (r == NULL)
			return a0 && a1 ? LWC_ERR_STORE : LWC_ERR_NOMEM;
		PQclear(r);
	}
	return LWC_OK;
}

/* One attempt at a WRITE; the caller rolls back on failure. */
static int write_once(struct cs_session *s, const struct cs_block *blocks, size_t n,
		      struct wstate *w, uint32_t *newbs, char *err, size_t errlen)
{
	size_t len = blocks[0].len;
	int rc;

	*newbs = 0;
	rc = exec_cmd(s, "BEGIN", "BEGIN", err, errlen);
	if (rc != LWC_OK)
		return rc;
	memset(w->max, 0, n * sizeof(*w->max));
	memset(w->min, 0, n * sizeof(*w->min));
	rc = write_lock(s, n, w, err, errlen);
	if (rc != LWC_OK)
		return rc;
	if (s->bs == 0) {
		uint64_t cur;

		rc = meta_get(s, &cur, err, errlen);
		if (rc == LWC_OK && cur == 0)
			rc = meta_pin(s, len, &cur, err, errlen);
		if (rc != LWC_OK)
			return rc;
		if (cur != len)
			return bs_mismatch(cur, len, err, errlen);
		*newbs = (uint32_t)cur;
	}
	for (size_t i = 0; i < n; i++) {
		rc = cs_version_check(blocks[i].id, w->max[i], blocks[i].version, err, errlen);
		if (rc != LWC_OK)
			return rc;
	}
	rc = write_upsert(s, blocks, n, w, err, errlen);
	if (rc == LWC_OK)
		rc = write_prune(s, blocks, n, w, err, errlen);
	if (rc == LWC_OK)
		rc = exec_commit(s, err, errlen);
	return rc;
}

static int pg_write(struct cs_session *s, const struct cs_block *blocks, size_t n,
		    char *err, size_t errlen)
{
	struct wstate w = { 0 };
	uint64_t dupid = 0;
	uint32_t newbs = 0;
	int rc = LWC_ERR_NOMEM, dup, attempt;

	if (n == 0 || blocks == NULL) {
		lwc_errf(err, errlen, "WRITE carries no blocks");
		return LWC_ERR_PROTO;
	}
	if (s->bs != 0 && blocks[0].len != s->bs)
		return bs_mismatch(s->bs, blocks[0].len, err, errlen);
	w.ids = malloc(n * sizeof(*w.ids));
	w.vers = malloc(n * sizeof(*w.vers));
	w.max = malloc(n * sizeof(*w.max));
	w.min = malloc(n * sizeof(*w.min));
	w.pid = malloc(n * sizeof(*w.pid));
	w.pkeep = malloc(n * sizeof(*w.pkeep));
	if (!w.ids || !w.vers || !w.max || !w.min || !w.pid || !w.pkeep)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		w.ids[i] = blocks[i].id;
		w.vers[i] = blocks[i].version;
	}
	w.ix = idx_build(w.ids, n, &dup, &dupid);
	if (w.ix == NULL)
		goto fail;
	if (dup) {
		lwc_errf(err, errlen, "block %llu named twice in one WRITE",
			 (unsigned long long)dupid);
		rc = LWC_ERR_DUPLICATE;
		goto fail;
	}
	for (attempt = 0;; attempt++) {
		rc = sess_ready(s, err, errlen);
		if (rc == LWC_OK)
			rc = write_once(s, blocks, n, &w, &newbs, err, errlen);
		if (rc != LWC_OK)
			rollback(s);
		if (!again(s, rc, attempt)) {
			retry_done(s, rc, attempt, err, errlen);
			break;
		}
		backoff(s, attempt);
	}
	if (rc == LWC_OK && newbs != 0)
		s->bs = newbs;
fail:
	free(w.ids);
	free(w.vers);
	free(w.max);
	free(w.min);
	free(w.pid);
	free(w.pkeep);
	free(w.ix);
	return rc;
}

/* Versions held for one id, as "3, 4" (empty when none). */
static int held_text(struct cs_session *s, uint64_t id, char *out, size_t outlen)
{
	struct cs_held h = { .id = id };
	uint8_t *arr;
	const char *vals[1];
	int lens[1];
	PGresult *r;
	size_t used = 0;

	out[0] = '\0';
	arr = enc_int8(&id, 1, &lens[0]);
	if (arr == NULL)
		return -1;
	vals[0] = (const char *)arr;
	r = run(s, ST_HELD, vals, lens, PGRES_TUPLES_OK, NULL, 0);
	free(arr);
	if (r == NULL)
		return -1;
	for (int row = 0; row < PQntuples(r); row++) {
		uint64_t v;
		if (get_u64(r, row, 1, &v) == 0)
			held_add(&h, v);
	}
	PQclear(r);
	for (uint32_t i = 0; i < h.n && used < outlen; i++) {
		int k = snprintf(out + used, outlen - used, "%s%llu", i ? ", " : "",
				 (unsigned long long)h.v[i]);
		if (k < 0)
			break;
		used += (size_t)k;
	}
	return 0;
}

/* One attempt at a READ into dst; filled[i] marks positions copied. */
static int read_once(struct cs_session *s, const uint64_t *ids, const uint64_t *versions,
		     size_t n, uint8_t *const *dst, size_t block_size, const struct idx *ix,
		     uint8_t *filled, char *err, size_t errlen)
{
	size_t per = PG_STMT_BYTES / block_size, missing = 0, first = 0;
	char held[128];

	if (per == 0)
		per = 1;
	if (per > PG_ID_CHUNK)
		per = PG_ID_CHUNK;
	memset(filled, 0, n);
	for (size_t off = 0; off < n; off += per) {
		size_t c = n - off < per ? n - off : per;
		const char *vals[2];
		int lens[2];
		uint8_t *a0 = enc_int8(ids + off, c, &lens[0]);
		uint8_t *a1 = enc_int8(versions + off, c, &lens[1]);
		PGresult *r = NULL;

		if (a0 && a1) {
			vals[0] = (const char *)a0;
			vals[1] = (const char *)a1;
			r = run(s, ST_READ, vals, lens, PGRES_TUPLES_OK, err, errlen);
		}
		free(a0);
		free(a1);
		if (r == NULL)
			return a0 && a1 ? LWC_ERR_STORE : LWC_ERR_NOMEM;
		for (int row = 0; row < PQntuples(r); row++) {
			uint64_t id, v;
			const struct idx *e;
			int len;

			if (get_u64(r, row, 0, &id) != 0 || get_u64(r, row, 1, &v) != 0 ||
			    PQgetisnull(r, row, 2) ||
			    (e = idx_find(ix, n, id)) == NULL || versions[e->pos] != v) {
				PQclear(r);
				return bad_row("lwc_read", err, errlen);
			}
			len = PQgetlength(r, row, 2);
			if ((size_t)len != block_size) {
				lwc_errf(err, errlen, "postgres: block %llu version %llu holds "
					 "%d bytes, expected %zu", (unsigned long long)id,
					 (unsigned long long)v, len, block_size);
				PQclear(r);
				return LWC_ERR_STORE;
			}
			memcpy(dst[e->pos], PQgetvalue(r, row, 2), block_size);
			filled[e->pos] = 1;
		}
		PQclear(r);
	}
	for (size_t i = n; i-- > 0;) {
		if (!filled[i]) {
			missing++;
			first = i;
		}
	}
	if (missing == 0)
		return LWC_OK;
	if (held_text(s, ids[first], held, sizeof(held)) == 0 && held[0] == '\0')
		lwc_errf(err, errlen, "block %llu not held%s", (unsigned long long)ids[first],
			 missing > 1 ? " (and other blocks of this READ missing)" : "");
	else
		lwc_errf(err, errlen, "block %llu version %llu not held%s%s%s%s",
			 (unsigned long long)ids[first], (unsigned long long)versions[first],
			 held[0] ? " (held: " : "", held, held[0] ? ")" : "",
			 missing > 1 ? " (and other blocks of this READ missing)" : "");
	return LWC_ERR_NOT_FOUND;
}

static int pg_read(struct cs_session *s, const uint64_t *ids, const uint64_t *versions,
		   size_t n, uint8_t *const *dst, size_t block_size, char *err, size_t errlen)
{
	struct idx *ix;
	uint8_t *filled = NULL;
	uint64_t dupid = 0;
	int rc = LWC_ERR_NOMEM, dup;

	if (n == 0)
		return LWC_OK;
	if (block_size == 0 || block_size > CS_BLOCK_SIZE_MAX) {
		lwc_errf(err, errlen, "READ with block size %zu", block_size);
		return LWC_ERR_BLOCK_SIZE;
	}
	ix = idx_build(ids, n, &dup, &dupid);
	if (ix == NULL)
		return LWC_ERR_NOMEM;
	if (dup) {
		lwc_errf(err, errlen, "block %llu named twice in one READ",
			 (unsigned long long)dupid);
		rc = LWC_ERR_DUPLICATE;
		goto fail;
	}
	filled = malloc(n);
	if (filled == NULL)
		goto fail;
	for (int attempt = 0;; attempt++) {
		rc = sess_ready(s, err, errlen);
		if (rc == LWC_OK)
			rc = read_once(s, ids, versions, n, dst, block_size, ix, filled,
				       err, errlen);
		if (!again(s, rc, attempt)) {
			retry_done(s, rc, attempt, err, errlen);
			break;
		}
		backoff(s, attempt);
	}
fail:
	free(filled);
	free(ix);
	return rc;
}

struct held_rows {
	const struct idx *ix;
	size_t n;
	struct cs_held *held;
};

/* Every position of the STAT that asked for id gets version v. */
static void held_row(void *arg, uint64_t id, uint64_t v)
{
	struct held_rows *hr = arg;
	const struct idx *e = idx_find(hr->ix, hr->n, id);

	for (; e != NULL && e < hr->ix + hr->n && e->id == id; e++)
		held_add(&hr->held[e->pos], v);
}

/* One attempt at a STAT. */
static int stat_once(struct cs_session *s, const uint64_t *uniq, size_t nu, size_t n,
		     const struct idx *ix, struct cs_stat *out, struct cs_held *held,
		     char *err, size_t errlen)
{
	PGresult *r = run(s, ST_TOTALS, NULL, NULL, PGRES_TUPLES_OK, err, errlen);
	uint64_t blocks, pairs, bs = 0;

	if (r == NULL)
		return LWC_ERR_STORE;
	if (PQntuples(r) != 1 || get_u64(r, 0, 0, &blocks) != 0 ||
	    get_u64(r, 0, 1, &pairs) != 0 ||
	    (!PQgetisnull(r, 0, 2) && get_u64(r, 0, 2, &bs) != 0)) {
		PQclear(r);
		return bad_row("lwc_totals", err, errlen);
	}
	PQclear(r);
	if (bs > CS_BLOCK_SIZE_MAX) {
		lwc_errf(err, errlen, "postgres: lwc_meta holds an invalid block size %llu",
			 (unsigned long long)bs);
		return LWC_ERR_STORE;
	}
	if (out != NULL) {
		out->block_count = blocks;
		out->versions_held = pairs;
		out->block_size = (uint32_t)bs;
	}
	if (s->bs == 0)
		s->bs = (uint32_t)bs;
	for (size_t i = 0; i < n; i++)
		held[i].n = 0;
	{
		struct held_rows hr = { ix, n, held };
		return id_version_rows(s, ST_HELD, uniq, nu, held_row, &hr, err, errlen);
	}
}

static int pg_stat(struct cs_session *s, const uint64_t *ids, size_t n,
		   struct cs_stat *out, struct cs_held *held, char *err, size_t errlen)
{
	struct idx *ix = NULL;
	uint64_t *uniq = NULL, dupid;
	size_t nu = 0;
	int rc = LWC_ERR_NOMEM, dup;

	if (n > 0) {
		ix = idx_build(ids, n, &dup, &dupid);
		uniq = malloc(n * sizeof(*uniq));
		if (ix == NULL || uniq == NULL)
			goto fail;
		/* Each distinct id once per statement; duplicates share rows. */
		for (size_t i = 0; i < n; i++) {
			if (i == 0 || ix[i].id != ix[i - 1].id)
				uniq[nu++] = ix[i].id;
			held[i].id = ids[i];
			held[i].n = 0;
		}
	}
	for (int attempt = 0;; attempt++) {
		rc = sess_ready(s, err, errlen);
		if (rc == LWC_OK)
			rc = stat_once(s, uniq, nu, n, ix, out, held, err, errlen);
		if (!again(s, rc, attempt)) {
			retry_done(s, rc, attempt, err, errlen);
			break;
		}
		backoff(s, attempt);
	}
fail:
	free(uniq);
	free(ix);
	return rc;
}

const struct cs_store_ops cs_store_pg = {
	.name = "postgres",
	.open = pg_open,
	.close = pg_close,
	.session_open = pg_session_open,
	.session_close = pg_session_close,
	.block_size = pg_block_size,
	.read = pg_read,
	.write = pg_write,
	.stat = pg_stat,
};
