/*
 * lwc_audit.c - lwc-audit: the cloud's attacks across statements, run as a
 * project tool against a live deployment (DESIGN.md section 6, "Across
 * statements").
 *
 *   lwc-audit run --key FILE --trace FILE --state DIR [--proxy HOST:PORT] [...]
 *
 * It drives a labelled workload through liblwc, one statement at a time from
 * one connection, cuts the cloud store's trace (lwc-cloudstore --trace) into
 * statements (audit_trace.c), and attacks the trace alone (audit_attacks.c):
 *
 *   1 intersection  --targets ids, each point-SELECTed --reps times among
 *                   --others point SELECTs of other ids, in random order;
 *                   the READ sets of a target's first r = 2, 3, 5
 *                   repetitions are intersected: one block left that is
 *                   the record's block identifies it
 *   2 linkage       P(READ sets overlap | same id) - P(overlap | other ids)
 *   3 frequency     --zipf-queries point SELECTs over --zipf-ids ids drawn
 *                   Zipf(--zipf-s): are the hottest ids' blocks the most
 *                   READ blocks, beyond the READ share of the top blocks?
 *   4 type          --per-type point SELECTs, one-row INSERTs, UPDATEs and
 *                   DELETEs in random order: a nearest-centroid classifier
 *                   of trace features, and block recurrence per type; then
 *                   as many again sent back to back, as a script sends
 *                   them (phase "pace"), and the classifier on the
 *                   intervals before and after each statement's accesses
 *   5 size          gamma observed for k = 1, 10, 100 rows matched
 *   6 recency       every point SELECT whose row is in a block: is it the
 *                   block of its READ set written last?  (chance: 1 / γ)
 *   7 range linkage --ranges ranges of --range-rows consecutive ids, each
 *                   read --range-reps times among point SELECTs of other
 *                   ids (--range-others each): P(READ sets overlap | same
 *                   range) - P(overlap | other ranges)
 *   8 shared writer the blocks of a range read whose last writer wrote the
 *                   most blocks of its READ set, guessed real
 *   9 co-read       once the ranges' reads are over, point SELECTs of
 *                   --coread-rows rows of each range: P(READ sets overlap |
 *                   rows of one range) - P(overlap | rows of two ranges)
 *
 * --storm N runs every attack in the state many clients leave (audit_storm.c):
 * before every --storm-every audited statements, N concurrent clients read
 * ranges of --storm-rows ids for --storm-ms; then the audit waits until the
 * proxy holds no block and the trace is quiet, and goes on alone.  With
 * --storm-writes P, P % of the storm's statements write: UPDATEs of a range,
 * INSERTs and DELETEs of rows of its own (ids the audit never uses).
 *
 * The labels (which statement targeted which id, of which kind) and the
 * ground truth (where the proxy keeps each row right before the statement,
 * read from its state directory with proxy/locate.h) only score the
 * attacks.  The table (--table, default audit_t) is dropped and recreated.
 *
 * Output (audit_report.c): a table on stdout, JSON with --json FILE.  Exit status 0; 1 when
 * --check is given and a figure misses its threshold (each one is named);
 * 2 for errors.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "admin_client.h"
#include "audit.h"
#include "cry.h"
#include "lwc.h"
#include "userkey.h"
#include "../proxy/locate.h"

#define LOAD_BATCH     200        /* rows per INSERT of the load            */
#define SIZE_REPS      3          /* statements per k of the size attack     */
#define TRACE_WAIT_MS  5000       /* the longest wait for a statement's WRITE */
#define MAX_STATUS     64

/* ---- settings -------------------------------------------------------------- */

struct opts {
	const char *key, *proxy, *trace, *state, *json;
	char table[64];
	uint64_t rows, targets, reps, others, zipf_ids, zipf_queries, zipf_rounds, per_type;
	uint64_t ranges, range_rows, range_reps, range_others, coread_rows;
	uint64_t storm, storm_rows, storm_every, storm_ms, storm_writes;
	double zipf_s;
	uint64_t seed;
	int seed_given, check;
};

static struct opts O = {
	.rows = 20000, .targets = 50, .reps = 5, .others = 500, .zipf_s = 1.0, .zipf_rounds = 1,
	.zipf_ids = 1000, .zipf_queries = 2000, .per_type = 60,
	.ranges = 100, .range_rows = 32, .range_reps = 5, .range_others = 1, .coread_rows = 5,
	.storm_rows = 100, .storm_every = 25, .storm_ms = 1000,
};

/* ---- everything the run owns (released by cleanup, also on errors) ----------- */

static struct {
	lwc_conn *conn;
	struct au_trace *trace;
	struct px_locator *loc;
	uint8_t *tokkey;                 /* sodium_malloc'ed token key of K_U     */
	uint8_t handle[CRY_TOKEN_BYTES]; /* the table's catalog handle           */
	struct au_stmt *st;              /* the audited statements, in run order */
	size_t nst, capst;
	int64_t *pool;                   /* ids 1..rows, reshuffled per phase    */
	double *zcdf;
	uint32_t zround;               /* the Zipf round being run               */
	struct au_kv status[MAX_STATUS];
	size_t nstatus;
	char status_err[256];
	char *sql;                       /* the statement text being built       */
	size_t sqllen, sqlcap;
	struct au_rng rng;
	uint64_t setup_stmts, foreign;
	double t_start, t_load, t_end;
	double phase_secs[AU_NPHASES];
	char started[32];
	struct au_storm *storm;          /* --storm: the concurrent clients       */
	uint64_t audited, storm_accesses;
	double *storm_stash;             /* stash_rows after each burst           */
	size_t nstorm_stash, capstorm_stash;
} C;

static void cleanup(void)
{
	au_storm_stop(C.storm);
	C.storm = NULL;
	free(C.storm_stash);
	C.storm_stash = NULL;
	lwc_close(C.conn);
	C.conn = NULL;
	au_trace_close(C.trace);
	C.trace = NULL;
	px_locator_close(C.loc);
	C.loc = NULL;
	if (C.tokkey)
		sodium_free(C.tokkey);
	C.tokkey = NULL;
	for (size_t i = 0; i < C.nst; i++) {
		au_obs_free(&C.st[i].o);
		free(C.st[i].real);
	}
	free(C.st);
	C.st = NULL;
	C.nst = C.capst = 0;
	free(C.pool);
	free(C.zcdf);
	C.pool = NULL;
	C.zcdf = NULL;
	for (size_t i = 0; i < C.nstatus; i++) {
		free(C.status[i].key);
		free(C.status[i].value);
	}
	C.nstatus = 0;
	free(C.sql);
	C.sql = NULL;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("lwc-audit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup();
	exit(2);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("lwc-audit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (p == NULL)
		die("out of memory");
	return p;
}

/* ---- SQL text -------------------------------------------------------------- */

static void sql_reset(void)
{
	C.sqllen = 0;
	if (C.sql)
		C.sql[0] = '\0';
}

static void sql_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sql_add(const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = C.sqlcap - C.sqllen;

		va_start(ap, fmt);
		n = vsnprintf(C.sql ? C.sql + C.sqllen : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			die("formatting a statement failed");
		if ((size_t)n < room) {
			C.sqllen += (size_t)n;
			return;
		}
		size_t nc = C.sqlcap ? C.sqlcap * 2 : 4096;
		while (nc < C.sqllen + (size_t)n + 1)
			nc *= 2;
		char *p = realloc(C.sql, nc);
		if (p == NULL)
			die("out of memory");
		C.sql = p;
		C.sqlcap = nc;
	}
}

/* ---- statements -------------------------------------------------------------- */

/* Run C.sql to its end; the rows returned or affected. */
static uint64_t exec_sql(void)
{
	lwc_result *r = lwc_exec(C.conn, C.sql);
	uint64_t n;
	int rc = 0;

	if (lwc_result_status(r) == LWC_RESULT_ROWS)
		while ((rc = lwc_result_next(r)) == 1)
			;
	if (lwc_result_status(r) == LWC_RESULT_ERROR || rc < 0) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s", lwc_result_error(r));
		lwc_result_free(r);
		die("statement failed: %s\n  statement: %.160s%s", msg, C.sql,
		    strlen(C.sql) > 160 ? "..." : "");
	}
	n = lwc_result_count(r);
	lwc_result_free(r);
	return n;
}

/* A statement outside the audit (DROP, CREATE, the load). */
static uint64_t setup_sql(void)
{
	C.setup_stmts++;
	return exec_sql();
}

/* Ground truth: the block holding row id right now; AU_NO_BLOCK when the
 * proxy serves it from its stash. */
static uint64_t locate(int64_t id)
{
	uint8_t be[8], tok[CRY_TOKEN_BYTES];
	uint64_t block;
	int rc;

	cry_put_be64(be, (uint64_t)id);
	if (cry_token(tok, C.tokkey, O.table, "id", CRY_TAG_INT, be, 8) != LWC_OK)
		die("computing a keyword token failed");
	rc = px_locate(C.loc, C.handle, 0, tok, &block);
	if (rc == LWC_ERR_NO_TABLE)
		die("ground truth: the proxy state %s has no table %s: is --state the state "
		    "directory of the proxy the key file connects to?", O.state, O.table);
	if (rc == LWC_ERR_NOT_FOUND)
		die("ground truth: the proxy state %s has no row id = %lld in %s: is --state the "
		    "state directory of the proxy the key file connects to?", O.state,
		    (long long)id, O.table);
	if (rc != LWC_OK)
		die("ground truth: reading the proxy state %s: %s", O.state, lwc_strerror(rc));
	return block == PX_LOCATE_STASH ? AU_NO_BLOCK : block;
}

/* A statement in C.st (pointers into C.st last until the next one). */
static struct au_stmt *stmt_add(enum au_phase ph, enum au_kind kind, int64_t id, int32_t target,
				uint32_t k)
{
	struct au_stmt *s;

	if (C.nst == C.capst) {
		size_t nc = C.capst ? C.capst * 2 : 1024;
		struct au_stmt *p = realloc(C.st, nc * sizeof(*p));

		if (p == NULL)
			die("out of memory");
		C.st = p;
		C.capst = nc;
	}
	s = &C.st[C.nst++];
	memset(s, 0, sizeof(*s));
	s->phase = ph;
	s->kind = kind;
	s->id = id;
	s->target = target;
	s->round = ph == AU_P_ZIPF ? C.zround : 0;
	s->k = k;
	s->truth = AU_NO_BLOCK;
	return s;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- the storm: concurrent clients between audited statements ---------------- */

/* A number from the proxy's status (admin socket); -1 when it has none, -2
 * (err filled) when the status is not available. */
static int status_u64(const char *key, uint64_t *v, char *err, size_t errlen)
{
	char path[600];
	int rc;

	snprintf(path, sizeof(path), "%s/admin.sock", O.state);
	rc = admin_status_u64(path, key, v, err, errlen);
	return rc == LWC_OK ? 0 : rc == LWC_ERR_NOT_FOUND ? -1 : -2;
}

/* A WRITE line of the storm's clients: an unlabelled statement that wrote
 * those blocks, so that the attacks which order the writes (recency, shared
 * writer) see every write the cloud sees. */
static int storm_write(void *ctx, const uint64_t *ids, size_t n)
{
	struct au_stmt *s = stmt_add(AU_P_STORM, AU_SELECT, -1, -1, 0);

	(void)ctx;
	if ((s->o.rset = malloc((n ? n : 1) * sizeof(*s->o.rset))) == NULL)
		return LWC_ERR_NOMEM;
	memcpy(s->o.rset, ids, n * sizeof(*ids));
	s->o.nrset = au_sort_unique(s->o.rset, n);
	s->o.write_ops = 1;
	s->o.write_blocks = n;
	return LWC_OK;
}

/* A burst of the storm, then quiet: no block held by a statement, no trace
 * line for 100 ms; the burst's accesses are counted apart from "foreign",
 * and its WRITE lines kept (storm_write). */
static void storm_burst(void)
{
	char err[512] = "";
	uint64_t locked = 1, lines, stash, quiet = 0;
	double deadline, t0 = now_s();

	if (au_storm_burst(C.storm, (double)O.storm_ms / 1000.0, err, sizeof(err)) != LWC_OK)
		die("%s", err);
	deadline = now_s() + 60;
	while (quiet < 2) {
		if (status_u64("blocks_locked", &locked, err, sizeof(err)) != 0)
			die("--storm reads blocks_locked from the proxy's status: %s",
			    err[0] ? err : "not there");
		if (au_trace_writes(C.trace, storm_write, NULL, &lines, err, sizeof(err)) != LWC_OK)
			die("%s", err[0] ? err : "out of memory");
		C.storm_accesses += lines;
		quiet = locked == 0 && lines == 0 ? quiet + 1 : 0;
		if (now_s() > deadline)
			die("--storm: the proxy still holds %llu blocks, or the trace still grows, "
			    "60 s after the storm's clients went idle", (unsigned long long)locked);
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	}
	if (status_u64("stash_rows", &stash, err, sizeof(err)) != 0)
		die("--storm reads stash_rows from the proxy's status: %s",
		    err[0] ? err : "not there");
	if (C.nstorm_stash == C.capstorm_stash) {
		size_t nc = C.capstorm_stash ? C.capstorm_stash * 2 : 256;
		double *p = realloc(C.storm_stash, nc * sizeof(*p));

		if (p == NULL)
			die("out of memory");
		C.storm_stash = p;
		C.capstorm_stash = nc;
	}
	C.storm_stash[C.nstorm_stash++] = (double)stash;
	C.phase_secs[AU_P_STORM] += now_s() - t0;
}

static void storm_start(void)
{
	struct au_storm_cfg cfg = {
		.key = O.key, .proxy = O.proxy, .table = O.table, .clients = (uint32_t)O.storm,
		.rows = O.storm_rows, .id_max = O.rows, .writes = (uint32_t)O.storm_writes,
		.seed = au_rng_next(&C.rng),
	};
	char err[512];

	say("storm: %llu clients, ranges of %llu ids for %llu ms before every %llu audited "
	    "statements, %llu %% of them writes", (unsigned long long)O.storm,
	    (unsigned long long)O.storm_rows, (unsigned long long)O.storm_ms,
	    (unsigned long long)O.storm_every, (unsigned long long)O.storm_writes);
	if (au_storm_start(&C.storm, &cfg, err, sizeof(err)) != LWC_OK)
		die("starting the storm's clients: %s", err);
}

/* Wait until the proxy holds no block: the statement before has committed
 * its state, which the ground truth reads.  (The client has its answer and
 * the trace the statement's WRITE before the proxy commits; a statement that
 * wrote back many stash rows commits for long enough that the next one's
 * ground truth could read the state before it.)  Without the proxy's status
 * the audit goes on unsettled, as before. */
static void settle(void)
{
	static int unavailable;
	char path[600], err[256] = "";
	uint64_t locked;
	int rc;

	if (unavailable)
		return;
	snprintf(path, sizeof(path), "%s/admin.sock", O.state);
	rc = admin_wait_zero(path, "blocks_locked", 30, &locked, err, sizeof(err));
	if (rc == LWC_ERR_TIMEOUT)
		die("the proxy still holds %llu blocks 30 s after the last statement: is "
		    "another client using it?", (unsigned long long)locked);
	if (rc != LWC_OK) {
		say("the proxy's status is not available (%s): ground truth is read without "
		    "waiting for the last statement's commit", err[0] ? err : lwc_strerror(rc));
		unavailable = 1;
	}
}

/* The next audited statement, before its ground truth is read: the storm's
 * burst when one is due, then the proxy settled. */
static struct au_stmt *new_stmt(enum au_phase ph, enum au_kind kind, int64_t id, int32_t target,
				uint32_t k)
{
	if (C.storm && C.audited++ % O.storm_every == 0)
		storm_burst();
	settle();
	return stmt_add(ph, kind, id, target, k);
}

/* Run C.sql as the audited statement s: ground truth before, its trace
 * lines after. */
static void run_stmt(struct au_stmt *s, int truth)
{
	char err[512];
	uint64_t foreign, got;
	double t0;

	if (au_trace_skip(C.trace, &foreign, err, sizeof(err)) != LWC_OK)
		die("%s", err);
	C.foreign += foreign;
	if (truth && s->id >= 0 && s->kind != AU_INSERT)
		s->truth = locate(s->id);
	t0 = now_s();
	got = exec_sql();
	s->secs = now_s() - t0;
	if (got != s->k)
		die("%s: %llu rows where the table lwc-audit loaded gives %u: was %s changed while "
		    "the audit ran?\n  statement: %.160s", au_kind_names[s->kind],
		    (unsigned long long)got, s->k, O.table, C.sql);
	if (au_trace_collect(C.trace, &s->o, TRACE_WAIT_MS, err, sizeof(err)) != LWC_OK)
		die("%s", err);
}

static void audited(struct au_stmt *s)
{
	run_stmt(s, 1);
}

/* The SQL of a point statement into C.sql. */
static void point_sql(enum au_kind kind, int64_t id)
{
	sql_reset();
	switch (kind) {
	case AU_SELECT:
		sql_add("SELECT * FROM %s WHERE id = %lld", O.table, (long long)id);
		break;
	case AU_INSERT:
		sql_add("INSERT INTO %s VALUES (%lld, %llu, 'n%08llx')", O.table, (long long)id,
			(unsigned long long)au_rng_below(&C.rng, 1000000),
			(unsigned long long)au_rng_below(&C.rng, 1ull << 32));
		break;
	case AU_UPDATE:
		sql_add("UPDATE %s SET v = v + 1 WHERE id = %lld", O.table, (long long)id);
		break;
	case AU_DELETE:
		sql_add("DELETE FROM %s WHERE id = %lld", O.table, (long long)id);
		break;
	default:
		abort();
	}
}

static void point(enum au_phase ph, enum au_kind kind, int64_t id, int32_t target)
{
	struct au_stmt *s = new_stmt(ph, kind, id, target, 1);

	point_sql(kind, id);
	audited(s);
}

/* Progress of a phase on stderr, at most every 5 s. */
static void progress(const char *what, size_t done, size_t total)
{
	static double last;
	double t = now_s();

	if (done != total && t - last < 5.0)
		return;
	last = t;
	say("%s: %zu of %zu statements", what, done, total);
}

static void shuffle_pool(void)
{
	for (uint64_t i = 0; i < O.rows; i++)
		C.pool[i] = (int64_t)i + 1;
	au_rng_shuffle(&C.rng, C.pool, O.rows, sizeof(*C.pool));
}

/* ---- the workload ------------------------------------------------------------- */

static void load(void)
{
	double t0 = now_s();
	uint64_t lines;
	char err[512];

	sql_reset();
	sql_add("DROP TABLE IF EXISTS %s", O.table);
	setup_sql();
	sql_reset();
	sql_add("CREATE TABLE %s (id INT PRIMARY KEY, v INT, s TEXT(16))", O.table);
	setup_sql();
	shuffle_pool();
	say("loading %llu rows into %s (%d per INSERT)", (unsigned long long)O.rows, O.table,
	    LOAD_BATCH);
	for (uint64_t i = 0, b = 0; i < O.rows; i += LOAD_BATCH) {
		uint64_t n = O.rows - i < LOAD_BATCH ? O.rows - i : LOAD_BATCH;

		sql_reset();
		sql_add("INSERT INTO %s VALUES ", O.table);
		for (uint64_t j = 0; j < n; j++)
			sql_add("%s(%lld, %llu, 's%08llx')", j ? ", " : "", (long long)C.pool[i + j],
				(unsigned long long)au_rng_below(&C.rng, 1000000),
				(unsigned long long)au_rng_below(&C.rng, 1ull << 32));
		if (setup_sql() != n)
			die("loading %s: an INSERT of %llu rows did not insert them all", O.table,
			    (unsigned long long)n);
		progress("load", (size_t)++b, (size_t)((O.rows + LOAD_BATCH - 1) / LOAD_BATCH));
	}
	/* the ground truth must see the table before anything is scored */
	(void)locate(C.pool[0]);
	if (au_trace_skip(C.trace, &lines, err, sizeof(err)) != LWC_OK)  /* the load's lines */
		die("%s", err);
	C.t_load = now_s() - t0;
}

/* Attacks 1 and 2: targets repeated among other ids, in random order. */
static void phase_repeat(void)
{
	size_t n = (size_t)(O.targets * O.reps + O.others), k = 0;
	int64_t *seq = xcalloc(n, sizeof(*seq));      /* target index, or -1 - other */
	double t0 = now_s();

	shuffle_pool();
	for (uint64_t t = 0; t < O.targets; t++)
		for (uint64_t r = 0; r < O.reps; r++)
			seq[k++] = (int64_t)t;
	for (uint64_t o = 0; o < O.others; o++)
		seq[k++] = -1 - (int64_t)o;
	au_rng_shuffle(&C.rng, seq, n, sizeof(*seq));
	say("repetition: %llu targets x %llu among %llu other point SELECTs",
	    (unsigned long long)O.targets, (unsigned long long)O.reps,
	    (unsigned long long)O.others);
	for (size_t i = 0; i < n; i++) {
		if (seq[i] >= 0)
			point(AU_P_REPEAT, AU_SELECT, C.pool[seq[i]], (int32_t)seq[i]);
		else
			point(AU_P_REPEAT, AU_SELECT, C.pool[O.targets + (uint64_t)(-1 - seq[i])], -1);
		progress("repetition", i + 1, n);
	}
	free(seq);
	C.phase_secs[AU_P_REPEAT] = now_s() - t0;
}

/* Attack 3: Zipf(s) over zipf_ids ids chosen at random; rank 1 the hottest. */
static void phase_zipf(void)
{
	double t0 = now_s(), total = 0;

	shuffle_pool();
	C.zcdf = xcalloc(O.zipf_ids, sizeof(*C.zcdf));
	for (uint64_t r = 0; r < O.zipf_ids; r++) {
		total += pow((double)(r + 1), -O.zipf_s);
		C.zcdf[r] = total;
	}
	for (C.zround = 0; C.zround < O.zipf_rounds; C.zround++) {
		if (C.zround > 0)
			shuffle_pool();                 /* each round its own ids */
		say("frequency: round %u of %llu: %llu point SELECTs over %llu ids, Zipf s = %.2f",
		    C.zround + 1, (unsigned long long)O.zipf_rounds,
		    (unsigned long long)O.zipf_queries, (unsigned long long)O.zipf_ids, O.zipf_s);
		for (uint64_t q = 0; q < O.zipf_queries; q++) {
			double u = au_rng_double(&C.rng) * total;
			size_t lo = 0, hi = (size_t)O.zipf_ids - 1;

			while (lo < hi) {             /* the first rank with cdf > u */
				size_t mid = lo + (hi - lo) / 2;

				if (C.zcdf[mid] > u)
					hi = mid;
				else
					lo = mid + 1;
			}
			point(AU_P_ZIPF, AU_SELECT, C.pool[lo], (int32_t)lo);
			progress("frequency", (size_t)q + 1, (size_t)O.zipf_queries);
		}
	}
	C.zround = 0;
	C.phase_secs[AU_P_ZIPF] = now_s() - t0;
}

/* Attack 4: the four statement types in random order, after AU_TYPE_WINDOW
 * point SELECTs so that every typed statement has as many predecessors. */
static void phase_types(void)
{
	size_t n = (size_t)(4 * O.per_type), ndel = 0, nins = 0;
	enum au_kind *seq = xcalloc(n, sizeof(*seq));
	uint64_t live = O.rows - O.per_type;          /* pool[per_type..] are kept */
	double t0 = now_s();

	shuffle_pool();                               /* DELETE takes pool[0..per_type) */
	for (size_t i = 0; i < n; i++)
		seq[i] = (enum au_kind)(i % 4);
	au_rng_shuffle(&C.rng, seq, n, sizeof(*seq));
	say("statement types: %llu each of SELECT, INSERT, UPDATE, DELETE",
	    (unsigned long long)O.per_type);
	for (int w = 0; w < AU_TYPE_WINDOW; w++)
		point(AU_P_WARM, AU_SELECT, C.pool[O.per_type + au_rng_below(&C.rng, live)], -1);
	for (size_t i = 0; i < n; i++) {
		int64_t id;

		switch (seq[i]) {
		case AU_INSERT:
			id = (int64_t)(O.rows + 1 + nins++);
			break;
		case AU_DELETE:
			id = C.pool[ndel++];
			break;
		default:
			id = C.pool[O.per_type + au_rng_below(&C.rng, live)];
		}
		point(AU_P_TYPES, seq[i], id, -1);
		progress("statement types", i + 1, n);
	}
	free(seq);
	C.phase_secs[AU_P_TYPES] = now_s() - t0;
}

/* Attack 4, timing: the four types again, back to back as a script sends
 * them: no wait for the proxy's commit, no ground truth, no storm between
 * two statements, so that the trace's intervals between statements are the
 * proxy's and the client's alone.  Its DELETEs take the rows the types
 * phase INSERTed; its INSERTs add rows after those. */
static void phase_pace(void)
{
	size_t n = (size_t)(4 * O.per_type), ndel = 0, nins = 0;
	enum au_kind *seq = xcalloc(n, sizeof(*seq));
	uint64_t live = O.rows - O.per_type;
	double t0 = now_s();

	for (size_t i = 0; i < n; i++)
		seq[i] = (enum au_kind)(i % 4);
	au_rng_shuffle(&C.rng, seq, n, sizeof(*seq));
	say("timing: %llu each of SELECT, INSERT, UPDATE, DELETE back to back",
	    (unsigned long long)O.per_type);
	settle();
	for (size_t i = 0; i < n; i++) {
		struct au_stmt *s;
		int64_t id;

		switch (seq[i]) {
		case AU_INSERT:
			id = (int64_t)(O.rows + O.per_type + 1 + nins++);
			break;
		case AU_DELETE:
			id = (int64_t)(O.rows + 1 + ndel++);
			break;
		default:
			id = C.pool[O.per_type + au_rng_below(&C.rng, live)];
		}
		s = stmt_add(AU_P_PACE, seq[i], id, -1, 1);
		point_sql(seq[i], id);
		run_stmt(s, 0);
		progress("timing", i + 1, n);
	}
	free(seq);
	C.phase_secs[AU_P_PACE] = now_s() - t0;
}

/* Ground truth: the distinct blocks holding rows ids[0..n) (the stash's
 * rows need none). */
static uint32_t blocks_of(const int64_t *ids, uint32_t n)
{
	uint64_t *b = xcalloc(n, sizeof(*b));
	uint32_t m = 0, d = 0;

	for (uint32_t i = 0; i < n; i++)
		if ((b[m] = locate(ids[i])) != AU_NO_BLOCK)
			m++;
	qsort(b, m, sizeof(*b), cmp_u64);
	for (uint32_t i = 0; i < m; i++)
		d += i == 0 || b[i] != b[i - 1];
	free(b);
	return d;
}

/* Attack 5: k rows matched by one IN list. */
static void phase_size(void)
{
	uint64_t live = O.rows - O.per_type;
	double t0 = now_s();

	say("size: SELECT ... WHERE id IN (k ids), k = 1, 10, 100");
	for (int i = 0; i < AU_NSIZE; i++)
		for (int r = 0; r < SIZE_REPS; r++) {
			struct au_stmt *s = new_stmt(AU_P_SIZE, AU_IN, -1, -1, au_size_k[i]);
			int64_t *ids = C.pool + O.per_type;  /* live: not DELETEd */

			/* a random k-subset of the live ids: a partial shuffle */
			for (uint32_t j = 0; j < au_size_k[i]; j++) {
				uint64_t x = j + au_rng_below(&C.rng, live - j);
				int64_t tmp = ids[j];

				ids[j] = ids[x];
				ids[x] = tmp;
			}
			s->kblocks = blocks_of(ids, au_size_k[i]);
			sql_reset();
			sql_add("SELECT * FROM %s WHERE id IN (", O.table);
			for (uint32_t j = 0; j < au_size_k[i]; j++)
				sql_add("%s%lld", j ? ", " : "", (long long)ids[j]);
			sql_add(")");
			audited(s);
		}
	C.phase_secs[AU_P_SIZE] = now_s() - t0;
}

/* Attacks 7 and 8: ranges of consecutive ids (the table's ids are 1..rows,
 * loaded in random order, so a range's first read finds its rows spread),
 * each read range_reps times in random order among range_others point
 * SELECTs of ids outside every range per range read.  Runs before the
 * types phase, whose DELETEs remove ids. */
static void phase_range(void)
{
	size_t nr = (size_t)(O.ranges * O.range_reps), no = (size_t)(nr * O.range_others);
	size_t n = nr + no, k = 0, nout = 0;
	int64_t *seq = xcalloc(n, sizeof(*seq));      /* range index, or -1 - other */
	int64_t *first = xcalloc(O.ranges, sizeof(*first)), *outside;
	uint32_t *reads = xcalloc(O.ranges, sizeof(*reads));
	uint64_t span = O.rows / O.ranges, K = O.range_rows;
	double t0 = now_s();

	/* range r: ids [first, first + K) inside the r-th slice of 1..rows */
	for (uint64_t r = 0; r < O.ranges; r++)
		first[r] = (int64_t)(r * span + 1 + au_rng_below(&C.rng, span - K + 1));
	outside = xcalloc(O.rows, sizeof(*outside));
	for (uint64_t r = 0, id = 1; id <= O.rows; id++) {
		while (r < O.ranges && (int64_t)id >= first[r] + (int64_t)K)
			r++;
		if (r < O.ranges && (int64_t)id >= first[r])
			continue;
		outside[nout++] = (int64_t)id;
	}
	for (uint64_t r = 0; r < O.ranges; r++)
		for (uint64_t x = 0; x < O.range_reps; x++)
			seq[k++] = (int64_t)r;
	for (size_t o = 0; o < no; o++)
		seq[k++] = -1;
	au_rng_shuffle(&C.rng, seq, n, sizeof(*seq));
	say("ranges: %llu ranges of %llu ids x %llu reads among %zu point SELECTs",
	    (unsigned long long)O.ranges, (unsigned long long)K,
	    (unsigned long long)O.range_reps, no);
	for (size_t i = 0; i < n; i++) {
		if (seq[i] < 0) {
			point(AU_P_RANGE, AU_SELECT, outside[au_rng_below(&C.rng, nout)], -1);
		} else {
			struct au_stmt *s = new_stmt(AU_P_RANGE, AU_RANGE, -1, (int32_t)seq[i],
						     (uint32_t)K);
			uint64_t *b = xcalloc(K, sizeof(*b));
			uint32_t m = 0, d = 0;

			s->rep = reads[seq[i]]++;
			for (uint64_t j = 0; j < K; j++)
				if ((b[m] = locate(first[seq[i]] + (int64_t)j)) != AU_NO_BLOCK)
					m++;
			qsort(b, m, sizeof(*b), cmp_u64);
			for (uint32_t j = 0; j < m; j++)
				if (j == 0 || b[j] != b[j - 1])
					b[d++] = b[j];
			s->real = b;
			s->kblocks = d;
			sql_reset();
			sql_add("SELECT * FROM %s WHERE id BETWEEN %lld AND %lld", O.table,
				(long long)first[seq[i]], (long long)(first[seq[i]] + (int64_t)K - 1));
			audited(s);
		}
		progress("ranges", i + 1, n);
	}
	C.phase_secs[AU_P_RANGE] = now_s() - t0;

	/* attack 9: once every range's rows are back in blocks (two eviction
	 * delays of point SELECTs of other ids), coread_rows rows of each
	 * range, one point SELECT each, all ranges shuffled together */
	if (O.coread_rows > 0) {
		size_t nc = (size_t)(O.ranges * O.coread_rows), fill = 2 * 64;
		int64_t *rows = xcalloc(nc, sizeof(*rows)), *tgt = xcalloc(nc, sizeof(*tgt));
		size_t *order = xcalloc(nc, sizeof(*order));
		int64_t *pick = xcalloc(K, sizeof(*pick));

		t0 = now_s();
		say("co-read: %zu point SELECTs of other ids, then %llu rows of each range",
		    fill, (unsigned long long)O.coread_rows);
		for (size_t i = 0; i < fill; i++)
			point(AU_P_COREAD, AU_SELECT, outside[au_rng_below(&C.rng, nout)], -1);
		for (uint64_t r = 0, c = 0; r < O.ranges; r++) {
			for (uint64_t j = 0; j < K; j++)
				pick[j] = first[r] + (int64_t)j;
			au_rng_shuffle(&C.rng, pick, K, sizeof(*pick));
			for (uint64_t j = 0; j < O.coread_rows; j++, c++) {
				rows[c] = pick[j];
				tgt[c] = (int64_t)r;
			}
		}
		for (size_t i = 0; i < nc; i++)
			order[i] = i;
		au_rng_shuffle(&C.rng, order, nc, sizeof(*order));
		for (size_t i = 0; i < nc; i++) {
			point(AU_P_COREAD, AU_SELECT, rows[order[i]], (int32_t)tgt[order[i]]);
			progress("co-read", i + 1, nc);
		}
		free(rows);
		free(tgt);
		free(order);
		free(pick);
		C.phase_secs[AU_P_COREAD] = now_s() - t0;
	}
	free(seq);
	free(first);
	free(reads);
	free(outside);
}

/* The proxy's status over its admin socket (padding, geometry, counters);
 * best effort: the attacks do not need it. */
static void proxy_status(void)
{
	Lwc__AdminRequest req = LWC__ADMIN_REQUEST__INIT;
	Lwc__AdminStatus sreq = LWC__ADMIN_STATUS__INIT;
	Lwc__AdminResponse *resp = NULL;
	char path[600];

	snprintf(path, sizeof(path), "%s/admin.sock", O.state);
	req.op_case = LWC__ADMIN_REQUEST__OP_STATUS;
	req.status = &sreq;
	if (admin_call(path, &req, &resp, C.status_err, sizeof(C.status_err)) != LWC_OK) {
		say("the proxy's status is not available (%s); the audit goes on without it",
		    C.status_err);
		return;
	}
	for (size_t i = 0; i < resp->n_status && C.nstatus < MAX_STATUS; i++) {
		struct au_kv *kv = &C.status[C.nstatus];

		kv->key = strdup(resp->status[i]->key ? resp->status[i]->key : "");
		kv->value = strdup(resp->status[i]->value ? resp->status[i]->value : "");
		if (kv->key == NULL || kv->value == NULL) {
			free(kv->key);
			free(kv->value);
			lwc__admin_response__free_unpacked(resp, NULL);
			die("out of memory");
		}
		C.nstatus++;
	}
	lwc__admin_response__free_unpacked(resp, NULL);
}

/* ---- options -------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lwc-audit run --key FILE --trace FILE --state DIR [--proxy HOST:PORT]\n"
		"                     [--rows 20000] [--targets 50] [--reps 5] [--others 500]\n"
		"                     [--zipf-s 1.0] [--zipf-ids 1000] [--zipf-queries 2000]\n"
		"                     [--zipf-rounds 1]\n"
		"                     [--per-type 60] [--ranges 100] [--range-rows 32]\n"
		"                     [--range-reps 5] [--range-others 1] [--coread-rows 5]\n"
		"                     [--storm 0] [--storm-rows 100] [--storm-every 25]\n"
		"                     [--storm-ms 1000] [--storm-writes 0]\n"
		"                     [--seed N] [--table audit_t]\n"
		"                     [--json FILE] [--check]\n"
		"\n"
		"Runs a labelled workload through liblwc against a running LWC deployment and\n"
		"attacks the cloud store's trace (--trace, as lwc-cloudstore --trace writes it)\n"
		"across statements: intersection of repeated accesses, linkage, frequency,\n"
		"statement type, size, recency, ranges read again (linkage, shared writer),\n"
		"rows read together (co-read).  --state is the proxy's state directory: the ground\n"
		"truth that scores the attacks.  The table is dropped and recreated.\n"
		"--storm N: before every --storm-every audited statements, N concurrent clients\n"
		"read ranges of --storm-rows ids for --storm-ms, so that the attacks see the\n"
		"state many clients leave (a full stash); the audited statements still run\n"
		"alone.  --storm-writes P: P %% of the storm's statements write (UPDATEs of a\n"
		"range; INSERTs and DELETEs of rows of its own).\n"
		"--check: exit 1 when a figure misses its threshold (identified <= %.2f for\n"
		"r = 2, 3, 5; linkage advantage <= %.2f; frequency <= %d of 20 beyond chance;\n"
		"type accuracy, from the features and from the intervals, <= %.2f;\n"
		"|rec(INSERT) - rec(SELECT)| <= %.2f; recency <= %.2f\n"
		"beyond chance, with --storm also in the order of the audited statements'\n"
		"writes alone; range linkage advantage <= %.2f; shared writer <= %.2f beyond\n"
		"the base rate, ranges read again; co-read advantage <= %.2f), or when a\n"
		"statement did not\n"
		"READ the block --state says its row was in (--state and --trace of different\n"
		"deployments).  Errors exit 2.\n",
		AU_LIM_ISECT, AU_LIM_LINK, AU_LIM_FREQ, AU_LIM_TYPE, AU_LIM_REC, AU_LIM_RECENCY,
		AU_LIM_RLINK, AU_LIM_SHARED, AU_LIM_COREAD);
}

static uint64_t opt_u64(const char *name, const char *s, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "lwc-audit: %s must be a whole number from %llu to %llu, not '%s'\n",
			name, (unsigned long long)min, (unsigned long long)max, s);
		exit(2);
	}
	return v;
}

static void parse_opts(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "proxy", required_argument, NULL, 'p' },
		{ "trace", required_argument, NULL, 't' },
		{ "state", required_argument, NULL, 's' },
		{ "rows", required_argument, NULL, 'n' },
		{ "targets", required_argument, NULL, 'T' },
		{ "reps", required_argument, NULL, 'r' },
		{ "others", required_argument, NULL, 'o' },
		{ "zipf-s", required_argument, NULL, 'z' },
		{ "zipf-ids", required_argument, NULL, 'Z' },
		{ "zipf-queries", required_argument, NULL, 'q' },
		{ "zipf-rounds", required_argument, NULL, 'R' },
		{ "per-type", required_argument, NULL, 'y' },
		{ "ranges", required_argument, NULL, 'g' },
		{ "range-rows", required_argument, NULL, 'G' },
		{ "range-reps", required_argument, NULL, 'P' },
		{ "range-others", required_argument, NULL, 'O' },
		{ "coread-rows", required_argument, NULL, 'C' },
		{ "seed", required_argument, NULL, 'S' },
		{ "storm", required_argument, NULL, 'w' },
		{ "storm-rows", required_argument, NULL, 'W' },
		{ "storm-every", required_argument, NULL, 'e' },
		{ "storm-ms", required_argument, NULL, 'm' },
		{ "storm-writes", required_argument, NULL, 'X' },
		{ "json", required_argument, NULL, 'j' },
		{ "check", no_argument, NULL, 'c' },
		{ "table", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *table = "audit_t";
	int o;

	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (o) {
		case 'k': O.key = optarg; break;
		case 'p': O.proxy = optarg; break;
		case 't': O.trace = optarg; break;
		case 's': O.state = optarg; break;
		case 'n': O.rows = opt_u64("--rows", optarg, 1, 1ull << 31); break;
		case 'T': O.targets = opt_u64("--targets", optarg, 1, 1u << 20); break;
		case 'r': O.reps = opt_u64("--reps", optarg, 2, 1000); break;
		case 'o': O.others = opt_u64("--others", optarg, 0, 1u << 24); break;
		case 'Z': O.zipf_ids = opt_u64("--zipf-ids", optarg, AU_FREQ_TOP, 1u << 24); break;
		case 'q': O.zipf_queries = opt_u64("--zipf-queries", optarg, 1, 1u << 24); break;
		case 'R': O.zipf_rounds = opt_u64("--zipf-rounds", optarg, 1, AU_FREQ_MAX_ROUNDS); break;
		case 'y': O.per_type = opt_u64("--per-type", optarg, 2, 1u << 20); break;
		case 'g': O.ranges = opt_u64("--ranges", optarg, 0, 1u << 16); break;
		case 'G': O.range_rows = opt_u64("--range-rows", optarg, 2, 1u << 16); break;
		case 'P': O.range_reps = opt_u64("--range-reps", optarg, 2, 100); break;
		case 'O': O.range_others = opt_u64("--range-others", optarg, 0, 1000); break;
		case 'C': O.coread_rows = opt_u64("--coread-rows", optarg, 0, 1u << 16); break;
		case 'S': O.seed = opt_u64("--seed", optarg, 0, UINT64_MAX); O.seed_given = 1; break;
		case 'w': O.storm = opt_u64("--storm", optarg, 0, 1024); break;
		case 'W': O.storm_rows = opt_u64("--storm-rows", optarg, 1, 1u << 20); break;
		case 'e': O.storm_every = opt_u64("--storm-every", optarg, 1, 1u << 24); break;
		case 'm': O.storm_ms = opt_u64("--storm-ms", optarg, 1, 600000); break;
		case 'X': O.storm_writes = opt_u64("--storm-writes", optarg, 0, 100); break;
		case 'j': O.json = optarg; break;
		case 'c': O.check = 1; break;
		case 'b': table = optarg; break;
		case 'z': {
			char *end;

			errno = 0;
			O.zipf_s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(O.zipf_s >= 0 && O.zipf_s <= 10)) {
				fprintf(stderr, "lwc-audit: --zipf-s must be a number from 0 to 10, "
					"not '%s'\n", optarg);
				exit(2);
			}
			break;
		}
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lwc-audit: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		exit(2);
	}
	if (!O.key || !O.trace || !O.state) {
		fprintf(stderr, "lwc-audit: run needs --key (a user key file), --trace (the cloud "
			"store's trace) and --state (the proxy's state directory)\n");
		exit(2);
	}
	/* names are folded to lower case by the client: the token of the handle
	 * must be computed on the folded name */
	if (strlen(table) >= sizeof(O.table) || !(table[0] == '_' ||
	    (table[0] >= 'a' && table[0] <= 'z') || (table[0] >= 'A' && table[0] <= 'Z'))) {
		fprintf(stderr, "lwc-audit: --table must be a plain SQL name of at most %zu "
			"characters\n", sizeof(O.table) - 1);
		exit(2);
	}
	for (size_t i = 0; table[i]; i++) {
		char c = table[i];

		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      (c >= 'A' && c <= 'Z'))) {
			fprintf(stderr, "lwc-audit: --table must be a plain SQL name (letters, "
				"digits, _), not '%s'\n", table);
			exit(2);
		}
		O.table[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	/* the phases take distinct ids from the table */
	if (O.targets + O.others > O.rows)
		fprintf(stderr, "lwc-audit: --targets + --others (%llu) exceed --rows (%llu)\n",
			(unsigned long long)(O.targets + O.others), (unsigned long long)O.rows);
	else if (O.zipf_ids > O.rows)
		fprintf(stderr, "lwc-audit: --zipf-ids (%llu) exceeds --rows (%llu)\n",
			(unsigned long long)O.zipf_ids, (unsigned long long)O.rows);
	else if (O.storm && O.storm_rows > O.rows)
		fprintf(stderr, "lwc-audit: --storm-rows (%llu) exceeds --rows (%llu)\n",
			(unsigned long long)O.storm_rows, (unsigned long long)O.rows);
	else if (O.coread_rows > O.range_rows)
		fprintf(stderr, "lwc-audit: --coread-rows (%llu) exceeds --range-rows (%llu)\n",
			(unsigned long long)O.coread_rows, (unsigned long long)O.range_rows);
	else if (O.ranges > 0 && O.rows / O.ranges < 2 * O.range_rows)
		fprintf(stderr, "lwc-audit: --ranges x 2 x --range-rows (%llu) exceeds --rows "
			"(%llu)\n", (unsigned long long)(O.ranges * 2 * O.range_rows),
			(unsigned long long)O.rows);
	else if (O.rows < O.per_type + au_size_k[AU_NSIZE - 1] || O.rows < O.per_type + AU_TYPE_WINDOW)
		fprintf(stderr, "lwc-audit: --rows must exceed --per-type by at least %u (the "
			"DELETEs take --per-type rows, the size attack reads %u others)\n",
			au_size_k[AU_NSIZE - 1], au_size_k[AU_NSIZE - 1]);
	else
		return;
	exit(2);
}

/* The token key of K_U (the client's derivation, client/lwc.c lwc_connect). */
static void token_key(void)
{
	struct userkey *uk = NULL;
	char err[512];

	if (userkey_read(O.key, &uk, err, sizeof(err)) != LWC_OK)
		die("the user key file (--key): %s", err);
	if ((C.tokkey = sodium_malloc(CRY_KEY_BYTES)) == NULL) {
		userkey_free(uk);
		die("out of memory");
	}
	if (cry_kdf(C.tokkey, uk->ku, CRY_SUB_TOKEN, CRY_CTX_USER) != LWC_OK) {
		userkey_free(uk);
		die("deriving the token key failed");
	}
	userkey_free(uk);
	if (cry_token(C.handle, C.tokkey, "", "", CRY_TAG_TEXT, O.table, strlen(O.table)) !=
	    LWC_OK)
		die("computing the table's handle failed");
}

int main(int argc, char **argv)
{
	struct au_results R;
	struct au_check ck[AU_MAX_CHECKS];
	struct au_run run;
	struct au_gstat stash = { 0 };
	struct au_storm_tally tally = { 0 };
	size_t nck;
	char err[512];
	int passed = 1;
	time_t wall = time(NULL);
	struct tm tm;

	if (argc < 2 || strcmp(argv[1], "run") != 0) {
		if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		return 2;
	}
	parse_opts(argc - 1, argv + 1);
	if (cry_init() != LWC_OK)
		die("libsodium failed to initialise");
	if (!O.seed_given)
		O.seed = ((uint64_t)randombytes_random() << 32) | randombytes_random();
	au_rng_seed(&C.rng, O.seed);
	gmtime_r(&wall, &tm);
	strftime(C.started, sizeof(C.started), "%Y-%m-%dT%H:%M:%SZ", &tm);
	C.t_start = now_s();

	token_key();
	if (au_trace_open(&C.trace, O.trace, err, sizeof(err)) != LWC_OK)
		die("%s", err);
	if (px_locator_open(&C.loc, O.state, err, sizeof(err)) != LWC_OK)
		die("cannot read the proxy's state directory (--state): %s", err);
	if (lwc_connect(&C.conn, O.key, O.proxy, err, sizeof(err)) != LWC_OK)
		die("cannot connect to the proxy: %s", err);
	C.pool = xcalloc(O.rows, sizeof(*C.pool));
	say("seed %llu (repeat the workload with --seed %llu)", (unsigned long long)O.seed,
	    (unsigned long long)O.seed);

	load();
	if (O.storm)
		storm_start();
	phase_repeat();
	phase_zipf();
	if (O.ranges > 0)
		phase_range();
	phase_types();
	phase_pace();
	phase_size();
	C.t_end = now_s();
	if (C.storm) {
		au_storm_counts(C.storm, &tally);
		au_storm_stop(C.storm);
		C.storm = NULL;
		if ((stash.n = C.nstorm_stash) > 0) {
			stash.median = au_median(C.storm_stash, stash.n);   /* sorts them */
			stash.min = C.storm_stash[0];
			stash.max = C.storm_stash[stash.n - 1];
		}
	}
	lwc_close(C.conn);
	C.conn = NULL;
	proxy_status();

	run = (struct au_run){
		.table = O.table, .trace = O.trace, .state = O.state, .started = C.started,
		.rows = O.rows, .targets = O.targets, .reps = O.reps, .others = O.others,
		.zipf_ids = O.zipf_ids, .zipf_queries = O.zipf_queries, .zipf_rounds = O.zipf_rounds,
		.per_type = O.per_type,
		.ranges = O.ranges, .range_rows = O.range_rows, .range_reps = O.range_reps,
		.coread_rows = O.coread_rows,
		.seed = O.seed, .zipf_s = O.zipf_s, .setup_stmts = C.setup_stmts,
		.foreign = C.foreign, .secs_total = C.t_end - C.t_start, .secs_load = C.t_load,
		.status = C.status, .nstatus = C.nstatus, .status_err = C.status_err,
		.storm_clients = (uint32_t)O.storm, .storm_rows = O.storm_rows,
		.storm_every = O.storm_every, .storm_bursts = tally.bursts,
		.storm_stmts = tally.stmts, .storm_rows_read = tally.rows,
		.storm_writes = (uint32_t)O.storm_writes, .storm_updates = tally.updates,
		.storm_inserts = tally.inserts, .storm_deletes = tally.deletes,
		.storm_accesses = C.storm_accesses,
		.storm_secs = (double)O.storm_ms / 1000.0, .storm_stash = stash,
	};
	memcpy(run.phase_secs, C.phase_secs, sizeof(run.phase_secs));
	if (au_analyse(C.st, C.nst, &run, &C.rng, &R) != LWC_OK)
		die("out of memory");
	nck = au_checks(&R, ck);
	for (size_t i = 0; i < nck; i++)
		passed &= ck[i].pass;
	au_report_print(&run, &R, ck);
	if (O.json && au_report_json(O.json, &run, &R, ck, nck, passed, err, sizeof(err)) != LWC_OK)
		die("%s", err);
	if (O.check) {
		printf("\n");
		for (size_t i = 0; i < nck; i++)
			if (!ck[i].pass)
				printf("check FAILED: %s = %.3f, limit %g\n", ck[i].name, ck[i].value,
				       ck[i].limit);
		printf("lwc-audit: %s\n", passed ? "every check passed" : "checks FAILED");
	}
	fflush(stdout);
	cleanup();
	return O.check && !passed ? 1 : 0;
}
