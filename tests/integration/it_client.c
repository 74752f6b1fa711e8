/*
 * it_client.c - liblwc's limits against a real deployment: an INSERT is one
 * request to the proxy (all or nothing), so one larger than a request
 * carries is refused with nothing written; and a statement whose range
 * covers would pass the proxy's predicate size falls back to the superset
 * for the rest, with the right answer; INSERTs prepared while another is
 * in flight (lwc_insert_prepare, the bulk loaders' overlap).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>
#include <sys/wait.h>
#include "harness.h"
#include "lwc.h"
#include "lwc_int.h"           /* the connection's socket and features */
#include "wire.h"

struct env {
	struct h_cs cs;
	struct h_px px;
	char key[512];
	lwc_conn *c;
};

static int setup_with(void **state, const char *const *init)
{
	struct env *e = calloc(1, sizeof(*e));
	uint8_t kdbu[32];
	char err[512] = "";

	if (e == NULL)
		return -1;
	h_cs_setup(&e->cs);
	h_cs_start(&e->cs, NULL);
	h_px_init(&e->px, &e->cs, init);
	h_px_start(&e->px, NULL);
	if (h_px_user_add(&e->px, "admin", kdbu) != 0)
		return -1;
	snprintf(e->key, sizeof(e->key), "%s/user-%d-admin.key", e->px.dir, e->px.nkeys);
	if (lwc_connect(&e->c, e->key, NULL, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "it_client: lwc_connect: %s\n", err);
		return -1;
	}
	*state = e;
	return 0;
}

static int setup(void **state)
{
	static const char *const init[] = { "--blocks", "16", NULL };

	return setup_with(state, init);
}

/* records of 16 KB: a chunk of 512 candidates is 8 MB */
static int setup_wide(void **state)
{
	static const char *const init[] = { "--blocks", "16", "--record-bytes", "16384", "--slots",
					     "4", "--theta", "3", NULL };

	return setup_with(state, init);
}

static int teardown(void **state)
{
	struct env *e = *state;

	if (e->c)
		lwc_close(e->c);
	if (e->px.pid > 0)
		h_px_stop(&e->px, SIGTERM);
	h_px_teardown(&e->px);
	h_cs_teardown(&e->cs);
	free(e);
	return 0;
}

static void exec_ok(struct env *e, const char *sql)
{
	lwc_result *r = lwc_exec(e->c, sql);

	if (lwc_result_status(r) == LWC_RESULT_ERROR)
		fail_msg("%s: %s", sql, lwc_result_error(r));
	lwc_result_free(r);
}

static long count_of(struct env *e, const char *sql)
{
	lwc_result *r = lwc_exec(e->c, sql);
	long n;

	if (lwc_result_status(r) == LWC_RESULT_ERROR)
		fail_msg("%s: %s", sql, lwc_result_error(r));
	if (lwc_result_next(r) != 1)
		fail_msg("%s: no row", sql);
	n = (long)lwc_value_int(r, 0);
	lwc_result_free(r);
	return n;
}

/* r is an error of code, its message holding part (NULL: any); frees r */
static void expect_error(lwc_result *r, int code, const char *part)
{
	assert_int_equal(lwc_result_status(r), LWC_RESULT_ERROR);
	assert_int_equal(lwc_result_error_code(r), code);
	if (part && strstr(lwc_result_error(r), part) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"", lwc_result_error(r), part);
	lwc_result_free(r);
}

/* INSERT INTO t VALUES (from, from), ... of n rows */
static char *insert_sql(const char *table, uint64_t from, uint64_t n)
{
	size_t cap = 64 + n * 28, o;
	char *p = malloc(cap);

	assert_non_null(p);
	o = (size_t)snprintf(p, cap, "INSERT INTO %s VALUES ", table);
	for (uint64_t i = 0; i < n; i++)
		o += (size_t)snprintf(p + o, cap - o, "%s(%llu, %llu)", i ? "," : "",
				      (unsigned long long)(from + i),
				      (unsigned long long)(from + i));
	return p;
}

/* Subqueries in FROM and WITH queries: run before the statement, their
 * rows joined like a table's (a table fetched by their keys); a failing
 * one fails the statement with its own error, the connection staying
 * usable; a WITH query's name hides a table's. */
static void test_subquery_in_from(void **state)
{
	struct env *e = *state;
	lwc_result *r;
	char *sql;

	exec_ok(e, "CREATE TABLE t (k INT PRIMARY KEY, g INT)");
	exec_ok(e, "CREATE TABLE u (g INT, name TEXT)");
	sql = insert_sql("t", 1, 300);
	exec_ok(e, sql);
	free(sql);
	exec_ok(e, "UPDATE t SET g = k % 7");
	exec_ok(e, "INSERT INTO u VALUES (0, 'zero'), (3, 'three'), (5, 'five'), (9, 'nine')");
	assert_int_equal(count_of(e, "SELECT max(c) FROM (SELECT g, count(*) AS c FROM t "
			 "GROUP BY g) d"), 43);
	assert_int_equal(count_of(e, "WITH d(grp, n) AS (SELECT g, count(*) FROM t GROUP BY g) "
			 "SELECT sum(d.n) FROM d JOIN u ON u.g = d.grp"), 42 + 43 + 43);
	assert_int_equal(count_of(e, "WITH a AS (SELECT k FROM t WHERE k <= 10), b AS (SELECT k "
			 "FROM a WHERE k > 4) SELECT count(*) FROM b JOIN a USING (k)"), 6);
	/* a table fetched by the keys of a subquery; LEFT JOIN of one */
	assert_int_equal(count_of(e, "SELECT count(*) FROM (SELECT g FROM u WHERE g > 2) s "
			 "JOIN t ON t.k = s.g"), 3);
	r = lwc_exec(e->c, "SELECT u.name, s.c FROM u LEFT JOIN (SELECT g, count(*) AS c FROM t "
		     "WHERE k < 8 GROUP BY g) s ON s.g = u.g ORDER BY u.g");
	assert_int_equal(lwc_result_status(r), LWC_RESULT_ROWS);
	assert_int_equal(lwc_result_ncols(r), 2);
	assert_string_equal(lwc_result_colname(r, 1), "c");
	for (int i = 0; i < 4; i++) {
		assert_int_equal(lwc_result_next(r), 1);
		if (i < 3)
			assert_int_equal(lwc_value_int(r, 1), 1);
		else
			assert_true(lwc_value_is_null(r, 1));
	}
	assert_int_equal(lwc_result_next(r), 0);
	lwc_result_free(r);
	/* a WITH query named like a table is read instead of it */
	assert_int_equal(count_of(e, "WITH t AS (SELECT 1 AS k) SELECT count(*) FROM t"), 1);
	assert_int_equal(count_of(e, "SELECT count(*) FROM t"), 300);
	/* errors: the subquery's own, column aliases beyond its columns */
	expect_error(lwc_exec(e->c, "SELECT * FROM (SELECT * FROM nosuch) s"), LWC_ERR_NO_TABLE,
		     "\"nosuch\" does not exist");
	expect_error(lwc_exec(e->c, "WITH c AS (SELECT nosuch FROM t) SELECT * FROM c"),
		     LWC_ERR_SCHEMA, "nosuch");
	expect_error(lwc_exec(e->c, "SELECT * FROM (SELECT k FROM t) s(a, b)"), LWC_ERR_SCHEMA,
		     "has 1 columns available but 2 columns specified");
	expect_error(lwc_exec(e->c, "SELECT a FROM (SELECT k AS a, g AS a FROM t) s"),
		     LWC_ERR_SCHEMA, "ambiguous");
	assert_int_equal(count_of(e, "SELECT count(*) FROM (SELECT k FROM t WHERE k > 290) s"), 10);
}

/* Aggregates with FILTER, and quoted numbers compared with numeric
 * columns in what the client evaluates (a FILTER, the select list, a
 * join's ON), read as numbers as in the WHERE. */
static void test_aggregate_filter(void **state)
{
	struct env *e = *state;
	lwc_result *r;
	char *sql;

	exec_ok(e, "CREATE TABLE t (k INT PRIMARY KEY, g INT)");
	sql = insert_sql("t", 1, 100);
	exec_ok(e, sql);
	free(sql);
	exec_ok(e, "UPDATE t SET g = NULL WHERE k > 90");
	r = lwc_exec(e->c, "SELECT count(*) FILTER (WHERE k <= '10'), count(g) FILTER (WHERE k > 80), "
		     "sum(k) FILTER (WHERE k % 2 = 0), count(DISTINCT g % 3) FILTER (WHERE g < 50), "
		     "max(k) FILTER (WHERE false), count(*) FROM t");
	assert_int_equal(lwc_result_status(r), LWC_RESULT_ROWS);
	assert_string_equal(lwc_result_colname(r, 0), "count");
	assert_int_equal(lwc_result_next(r), 1);
	assert_int_equal(lwc_value_int(r, 0), 10);
	assert_int_equal(lwc_value_int(r, 1), 10);
	assert_int_equal(lwc_value_int(r, 2), 2550);
	assert_int_equal(lwc_value_int(r, 3), 3);
	assert_true(lwc_value_is_null(r, 4));
	assert_int_equal(lwc_value_int(r, 5), 100);
	lwc_result_free(r);
	assert_int_equal(count_of(e, "SELECT count(*) FROM t p JOIN t q ON q.k = p.g AND q.k < '5'"), 4);
	assert_int_equal(count_of(e, "SELECT sum(CASE WHEN k > '95' THEN 1 ELSE 0 END) FROM t"), 5);
	expect_error(lwc_exec(e->c, "SELECT count(*) FILTER (WHERE k = 'x') FROM t"), LWC_ERR_SCHEMA,
		     "invalid input syntax for type integer");
}

static void test_insert_one_request(void **state)
{
	struct env *e = *state;
	uint64_t max = 0;
	char *sql;

	exec_ok(e, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
	assert_int_equal(lwc_insert_max_rows(e->c, "t", &max), LWC_OK);
	assert_true(max > 1000 && max < 10000000);
	assert_int_equal(lwc_insert_max_rows(e->c, "nosuch", &max), LWC_ERR_NO_TABLE);
	assert_int_equal(lwc_insert_max_rows(e->c, "t", &max), LWC_OK);

	/* one row more than a request carries: refused, nothing written */
	sql = insert_sql("t", 0, max + 1);
	expect_error(lwc_exec(e->c, sql), LWC_ERR_TOO_BIG, "split it into smaller statements");
	free(sql);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t"), 0);

	/* a duplicate key in the last row of a large INSERT: nothing written */
	sql = insert_sql("t", 0, 5000);
	exec_ok(e, sql);
	free(sql);
	sql = insert_sql("t", 10000, 20000);
	snprintf(strrchr(sql, '('), 32, "(4999, 0)");     /* the last row repeats 4999 */
	expect_error(lwc_exec(e->c, sql), LWC_ERR_UNIQUE, NULL);
	free(sql);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t"), 5000);
}

static lwc_insert *prepare_ok(struct env *e, const char *sql)
{
	lwc_result *err = NULL;
	lwc_insert *ins = lwc_insert_prepare(e->c, sql, &err);

	if (ins == NULL)
		fail_msg("prepare: %s", lwc_result_error(err));
	assert_null(err);
	return ins;
}

static void expect_prepare_fails(struct env *e, const char *sql, int code)
{
	lwc_result *err = NULL;

	assert_null(lwc_insert_prepare(e->c, sql, &err));
	assert_non_null(err);
	assert_int_equal(lwc_result_status(err), LWC_RESULT_ERROR);
	assert_int_equal(lwc_result_error_code(err), code);
	lwc_result_free(err);
}

/* A statement refused before it is sent: the error lwc_exec gives, with
 * its message and position (\copy names the line and column from it). */
static void prepare_fails_as_exec(struct env *e, const char *sql)
{
	lwc_result *err = NULL, *r = lwc_exec(e->c, sql);

	assert_int_equal(lwc_result_status(r), LWC_RESULT_ERROR);
	assert_null(lwc_insert_prepare(e->c, sql, &err));
	assert_non_null(err);
	assert_int_equal(lwc_result_error_code(err), lwc_result_error_code(r));
	assert_int_equal(lwc_result_error_pos(err), lwc_result_error_pos(r));
	assert_string_equal(lwc_result_error(err), lwc_result_error(r));
	lwc_result_free(err);
	lwc_result_free(r);
}

/* The answer to the oldest INSERT in flight: rows inserted. */
static void wait_rows(struct env *e, uint64_t rows)
{
	lwc_result *r = lwc_insert_wait(e->c);
	char tag[64];

	assert_non_null(r);
	if (lwc_result_status(r) == LWC_RESULT_ERROR)
		fail_msg("wait: %s", lwc_result_error(r));
	assert_int_equal(lwc_result_count(r), rows);
	snprintf(tag, sizeof(tag), "INSERT 0 %llu", (unsigned long long)rows);
	assert_string_equal(lwc_result_tag(r), tag);
	lwc_result_free(r);
}

/* The answer to the oldest INSERT in flight: not run, because the one it
 * follows failed. */
static void wait_not_run(struct env *e)
{
	expect_error(lwc_insert_wait(e->c), LWC_ERR_ABORTED, "not run");
}

/* lwc_insert_prepare/send/wait: the next statement made while one is in
 * flight and sent before its answer (pipelined: the proxy reads it while
 * the one before it runs, and runs it only if that one succeeded); the
 * connection refuses anything else meanwhile. */
static void test_insert_pipeline(void **state)
{
	struct env *e = *state;
	lwc_insert *a, *b, *x;
	struct lwc_column *cols = NULL;
	char **names = NULL;
	char *sql;
	int ncols = 0;
	uint64_t ra;

	exec_ok(e, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
	assert_null(lwc_insert_wait(e->c));               /* nothing in flight */
	assert_int_equal(lwc_insert_pending(e->c), 0);

	/* prepared before anything is in flight: reads the catalog; x follows
	 * nothing, so it may not be sent behind a */
	x = prepare_ok(e, "INSERT INTO t VALUES (99998, 1)");
	sql = insert_sql("t", 0, 1000);
	a = prepare_ok(e, sql);
	free(sql);
	assert_int_equal(lwc_insert_rows(a), 1000);
	assert_int_equal(lwc_insert_send(e->c, a), LWC_OK);
	assert_int_equal(lwc_insert_send(e->c, x), LWC_ERR_BUSY);    /* x freed */

	/* in flight: the next one is made from the catalog already read */
	sql = insert_sql("t", 1000, 1000);
	b = prepare_ok(e, sql);
	free(sql);
	/* ... and nothing else may use the connection */
	expect_error(lwc_exec(e->c, "SELECT COUNT(*) FROM t"), LWC_ERR_BUSY, "in flight");
	assert_int_equal(lwc_tables(e->c, &names), LWC_ERR_BUSY);
	/* what the catalog already holds needs no round trip */
	assert_int_equal(lwc_describe(e->c, "t", &cols, &ncols), LWC_OK);
	assert_int_equal(ncols, 2);
	free(cols);
	x = prepare_ok(e, "INSERT INTO t VALUES (99999, 1)");
	/* a table the catalog read so far does not have: busy, not unknown */
	expect_prepare_fails(e, "INSERT INTO nosuch VALUES (1)", LWC_ERR_BUSY);
	/* b follows a, sent before a's answer; two in flight, no third */
	assert_int_equal(lwc_insert_send(e->c, b), LWC_OK);
	assert_int_equal(lwc_insert_pending(e->c), 2);
	assert_int_equal(lwc_insert_send(e->c, x), LWC_ERR_BUSY);    /* x freed */
	wait_rows(e, 1000);
	assert_int_equal(lwc_insert_pending(e->c), 1);
	wait_rows(e, 1000);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t"), 2000);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t WHERE id = 1999"), 1);

	/* the first of two in flight fails (a duplicate key): the error names
	 * the column; the second, sent behind it, is not run; nor is a third
	 * that follows the second */
	sql = insert_sql("t", 5000, 1000);
	snprintf(strrchr(sql, '('), 32, "(17, 0)");
	a = prepare_ok(e, sql);
	free(sql);
	assert_int_equal(lwc_insert_send(e->c, a), LWC_OK);
	sql = insert_sql("t", 7000, 1000);
	b = prepare_ok(e, sql);
	free(sql);
	assert_int_equal(lwc_insert_send(e->c, b), LWC_OK);
	expect_error(lwc_insert_wait(e->c), LWC_ERR_UNIQUE, "column \"id\" of table \"t\"");
	sql = insert_sql("t", 8000, 1000);
	x = prepare_ok(e, sql);                            /* follows b */
	free(sql);
	wait_not_run(e);
	assert_int_equal(lwc_insert_send(e->c, x), LWC_OK);
	wait_not_run(e);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t"), 2000);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t WHERE id >= 5000"), 0);

	/* sent after the answer to the one it follows: run if that one
	 * succeeded, not run if it failed */
	sql = insert_sql("t", 3000, 1000);
	a = prepare_ok(e, sql);
	free(sql);
	assert_int_equal(lwc_insert_send(e->c, a), LWC_OK);
	b = prepare_ok(e, "INSERT INTO t VALUES (4000, 1)");
	wait_rows(e, 1000);
	assert_int_equal(lwc_insert_send(e->c, b), LWC_OK);
	wait_rows(e, 1);
	a = prepare_ok(e, "INSERT INTO t VALUES (3000, 1)");       /* a duplicate */
	assert_int_equal(lwc_insert_send(e->c, a), LWC_OK);
	b = prepare_ok(e, "INSERT INTO t VALUES (4001, 1)");
	expect_error(lwc_insert_wait(e->c), LWC_ERR_UNIQUE, NULL);
	assert_int_equal(lwc_insert_send(e->c, b), LWC_OK);
	wait_not_run(e);
	/* ... and a statement of its own after a failure runs */
	exec_ok(e, "INSERT INTO t VALUES (4002, 1)");
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t"), 3002);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t WHERE id = 4001"), 0);

	/* refused before anything is sent */
	expect_prepare_fails(e, "SELECT * FROM t", LWC_ERR_ARG);
	expect_prepare_fails(e, "INSERT INTO t SELECT * FROM t", LWC_ERR_ARG);
	prepare_fails_as_exec(e, "INSERT INTO t VALUES (1,");
	prepare_fails_as_exec(e, "INSERT INTO nosuch VALUES (1)");
	prepare_fails_as_exec(e, "INSERT INTO t VALUES (3, 1), ('x', 1)");
	prepare_fails_as_exec(e, "INSERT INTO t VALUES (NULL, 1)");
	prepare_fails_as_exec(e, "INSERT INTO t (v) VALUES (1)");
	prepare_fails_as_exec(e, "INSERT INTO t VALUES (1, 2, 3)");
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t"), 3002);
	/* three were not run: b and x behind the duplicate, b after it */
	assert_int_equal(h_px_status_u64(&e->px, "requests_not_run"), 3);

	/* one sent right behind a large one is read while that one runs (its
	 * first byte comes long before a 5,000-row statement ends) */
	ra = h_px_status_u64(&e->px, "requests_read_ahead");
	sql = insert_sql("t", 20000, 5000);
	a = prepare_ok(e, sql);
	free(sql);
	assert_int_equal(lwc_insert_send(e->c, a), LWC_OK);
	b = prepare_ok(e, "INSERT INTO t VALUES (25000, 1)");
	assert_int_equal(lwc_insert_send(e->c, b), LWC_OK);
	wait_rows(e, 5000);
	wait_rows(e, 1);
	assert_int_equal(h_px_status_u64(&e->px, "requests_read_ahead"), ra + 1);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t WHERE id >= 20000"), 5001);

	/* closing with two in flight: their answers are not waited for (the
	 * proxy still commits them); nothing leaks (make asan) */
	sql = insert_sql("t", 9000, 1000);
	a = prepare_ok(e, sql);
	free(sql);
	assert_int_equal(lwc_insert_send(e->c, a), LWC_OK);
	sql = insert_sql("t", 10000, 1000);
	b = prepare_ok(e, sql);
	free(sql);
	assert_int_equal(lwc_insert_send(e->c, b), LWC_OK);
	lwc_close(e->c);
	e->c = NULL;
}

/* Pipelined bulk INSERTs (more rows than a relocating proxy takes through
 * its stash, 1,024: fresh blocks): the blocks of the one behind are sealed
 * and written, and its entries sorted, while the one before it commits
 * (proxy/bulk.c, "ahead"); when it fails its own plan the ids it held are
 * let go (a later bulk INSERT, which must wait for them, runs), and the
 * offline check finds the state whole. */
static void test_insert_ahead(void **state)
{
	struct env *e = *state;
	const uint64_t n = 20000;
	lwc_insert *a;
	uint64_t ahead0;
	char *sql;

	exec_ok(e, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
	ahead0 = h_px_status_u64(&e->px, "inserts_made_ahead");
	assert_int_not_equal(ahead0, UINT64_MAX);
	/* four statements (4n rows), each made and sent while the one before
	 * it runs; the first four times the second, so that the second, made
	 * by the client in about a quarter of the time the proxy takes for
	 * the first (their costs a row are alike, sanitizers or not), comes
	 * while the first runs whatever the machine's speed */
	{
		static const uint64_t sz[4] = { 2 * n, n / 2, n / 2, n };
		uint64_t off = 0;
		size_t head = 0;

		for (size_t i = 0; i < 4; i++) {
			sql = insert_sql("t", off, sz[i]);
			off += sz[i];
			a = prepare_ok(e, sql);
			free(sql);
			assert_int_equal(lwc_insert_send(e->c, a), LWC_OK);
			if (lwc_insert_pending(e->c) == 2)
				wait_rows(e, sz[head++]);
		}
		wait_rows(e, sz[head++]);
		assert_int_equal(head, 4);
		assert_int_equal(off, 4 * n);
	}
	assert_true(h_px_status_u64(&e->px, "inserts_made_ahead") >= ahead0 + 1);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t"), 4 * n);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t WHERE v = 45678"), 1);
	assert_int_equal(count_of(e, "SELECT SUM(v) FROM t WHERE id >= 20000 AND id < 20100"),
			 (20000 + 20099) * 100 / 2);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t WHERE v >= 39990 AND v < 40010"), 20);

	/* the second, made ahead, repeats a key of the first: refused by its
	 * own plan once the first has committed */
	ahead0 = h_px_status_u64(&e->px, "inserts_made_ahead");
	sql = insert_sql("t", 100000, n);
	a = prepare_ok(e, sql);
	free(sql);
	assert_int_equal(lwc_insert_send(e->c, a), LWC_OK);
	sql = insert_sql("t", 120000, n);
	snprintf(strrchr(sql, '('), 32, "(100005, 0)");
	a = prepare_ok(e, sql);
	free(sql);
	assert_int_equal(lwc_insert_send(e->c, a), LWC_OK);
	wait_rows(e, n);
	expect_error(lwc_insert_wait(e->c), LWC_ERR_UNIQUE, NULL);
	assert_int_equal(h_px_status_u64(&e->px, "inserts_made_ahead"), ahead0);
	/* its blocks' ids were let go: a bulk INSERT of its own grows */
	sql = insert_sql("t", 140000, n);
	exec_ok(e, sql);
	free(sql);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t"), 6 * n);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t WHERE id >= 120000 AND id < 140000"),
			 0);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM t WHERE id >= 140000"), n);

	/* the state, offline: rows, positions, indexes and blocks agree */
	lwc_close(e->c);
	e->c = NULL;
	assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
	assert_int_equal(h_px_check(&e->px, NULL), 0);
}

/* INSERT w VALUES (i, 'x...') of n rows, row i's text len[i] long */
static char *text_rows_sql(uint64_t n, const size_t *len)
{
	size_t cap = 64, o;
	char *p;

	for (uint64_t i = 0; i < n; i++)
		cap += 32 + len[i];
	p = malloc(cap);
	assert_non_null(p);
	o = (size_t)snprintf(p, cap, "INSERT INTO w VALUES ");
	for (uint64_t i = 0; i < n; i++) {
		o += (size_t)snprintf(p + o, cap - o, "%s(%llu, '", i ? "," : "",
				      (unsigned long long)i);
		memset(p + o, 'x', len[i]);
		o += len[i];
		o += (size_t)snprintf(p + o, cap - o, "')");
	}
	return p;
}

/* The records and tokens of a large INSERT are made on two threads: a row
 * too large for a record fails the statement with that row's error, the
 * first such row's when there are two (one in each half), and nothing is
 * written; rows made on both threads read back whole. */
static void test_insert_rows_in_parts(void **state)
{
	struct env *e = *state;
	enum { N = 3000 };
	static size_t len[N];
	char *sql;

	exec_ok(e, "CREATE TABLE w (id INT, s TEXT)");
	for (size_t i = 0; i < N; i++)
		len[i] = 1 + i % 50;
	len[700] = 200;           /* first half */
	len[2600] = 300;          /* second half */
	sql = text_rows_sql(N, len);
	expect_error(lwc_exec(e->c, sql), LWC_ERR_TOO_BIG, "row of 2");   /* row 700's 2xx bytes */
	free(sql);
	len[700] = 5;
	sql = text_rows_sql(N, len);
	expect_error(lwc_exec(e->c, sql), LWC_ERR_TOO_BIG, "row of 3");   /* row 2600's */
	free(sql);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM w"), 0);
	len[2600] = 7;
	sql = text_rows_sql(N, len);
	exec_ok(e, sql);
	free(sql);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM w"), N);
	assert_int_equal(count_of(e, "SELECT SUM(LENGTH(s)) FROM w"),
			 (long)(N / 50 * (50 * 51 / 2) - 1 - 1 + 5 + 7));
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM w WHERE s = 'xxxxxxx'"), N / 50 + 1);
	{
		char q[128];

		snprintf(q, sizeof(q), "SELECT id FROM w WHERE id = 2999 AND s = '%.*s'", 50,
			 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		assert_int_equal(count_of(e, q), 2999);     /* 1 + 2999 % 50 */
	}
}

/* UPDATE and DELETE decide about a chunk of 1,024 candidates or more on two
 * threads (lwc_modify.c): each row's decision lands at its own place, and a
 * row that fails in either half fails the statement whole. */
static void test_update_rows_in_parts(void **state)
{
	struct env *e = *state;
	enum { N = 3000 };
	static const int poison[] = { 5, 1499, 1500, 2990 };
	size_t cap = (size_t)N * 40 + 64, o;
	char *sql = malloc(cap), q[160];
	long sum;
	lwc_result *r;

	assert_non_null(sql);
	exec_ok(e, "CREATE TABLE u (id INT PRIMARY KEY, n INT, s TEXT)");
	o = (size_t)snprintf(sql, cap, "INSERT INTO u VALUES ");
	for (int i = 0; i < N; i++)
		o += (size_t)snprintf(sql + o, cap - o, "%s(%d, %d, 'v%d')", i ? ", " : "", i, i, i);
	exec_ok(e, sql);
	free(sql);
	sum = (long)N * (N - 1) / 2;
	for (size_t k = 0; k < sizeof(poison) / sizeof(poison[0]); k++) {
		snprintf(q, sizeof(q), "UPDATE u SET n = n + 100 / (id - %d)", poison[k]);
		r = lwc_exec(e->c, q);
		assert_int_equal(lwc_result_status(r), LWC_RESULT_ERROR);
		assert_non_null(strstr(lwc_result_error(r), "division by zero"));
		lwc_result_free(r);
		assert_int_equal(count_of(e, "SELECT SUM(n) FROM u"), sum);
	}
	/* a residual WHERE with functions (its text in the thread's own arena)
	 * and SET values that differ per row */
	r = lwc_exec(e->c, "UPDATE u SET n = n * 2, s = UPPER(s) || '-' || id "
			   "WHERE n % 2 = 0 AND LENGTH(LOWER(s)) >= 2");
	assert_int_equal(lwc_result_status(r), LWC_RESULT_COMMAND);
	assert_int_equal(lwc_result_count(r), N / 2);
	lwc_result_free(r);
	assert_int_equal(count_of(e, "SELECT SUM(n) FROM u"), sum + (long)(N / 2) * (N / 2 - 1));
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM u WHERE s = 'V' || id || '-' || id"),
			 N / 2);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM u WHERE s = 'v' || id"), N / 2);
	assert_int_equal(count_of(e, "SELECT n FROM u WHERE s = 'V2998-2998'"), 2 * 2998);
	/* DELETE with a residual predicate: the same decisions, no new rows */
	r = lwc_exec(e->c, "DELETE FROM u WHERE id % 3 = 0");
	assert_int_equal(lwc_result_status(r), LWC_RESULT_COMMAND);
	assert_int_equal(lwc_result_count(r), N / 3);
	lwc_result_free(r);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM u"), N - N / 3);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM u WHERE id % 3 = 0"), 0);
}

/* The proxy keeps two chunks of candidates in flight (proxy/engine.c
 * get_decisions): while the client answers one, the next is on its way.
 * With records of 16 KB (8 MB a chunk) and the client's socket buffers held
 * at 64 KB, the proxy's write of
 * the next chunk waits on a client that is itself writing its decisions;
 * the proxy reads them meanwhile (proxy/server.c wio_write_all), where a
 * plain blocking write would deadlock until the I/O timeout.  Failures in
 * the first, a middle and the last chunk: the chunks already sent are
 * answered and read, and the connection stays in step. */
static void test_decisions_in_flight(void **state)
{
	struct env *e = *state;
	enum { N = 1600 };
	static const int poison[] = { 3, 700, 1599 };
	int small = 65536;
	size_t cap = (size_t)N * 120 + 64, o;
	char *sql = malloc(cap), q[200];
	long sum;
	lwc_result *r;

	assert_non_null(sql);
	exec_ok(e, "CREATE TABLE w (id INT PRIMARY KEY, n INT, a TEXT, b TEXT, c TEXT, d TEXT, "
		   "f TEXT, g TEXT)");
	o = (size_t)snprintf(sql, cap, "INSERT INTO w VALUES ");
	for (int i = 0; i < N; i++)
		o += (size_t)snprintf(sql + o, cap - o, "%s(%d, %d, 'a%d', 'b%d', 'c%d', 'd%d', "
				      "'f%d', 'g%d')", i ? ", " : "", i, i, i, i, i, i, i, i);
	exec_ok(e, sql);
	free(sql);
	assert_int_equal(setsockopt(e->c->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	assert_int_equal(setsockopt(e->c->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	sum = (long)N * (N - 1) / 2;
	for (size_t k = 0; k < sizeof(poison) / sizeof(poison[0]); k++) {
		snprintf(q, sizeof(q), "UPDATE w SET n = n + 100 / (id - %d), a = 'x' || id",
			 poison[k]);
		r = lwc_exec(e->c, q);
		assert_int_equal(lwc_result_status(r), LWC_RESULT_ERROR);
		assert_non_null(strstr(lwc_result_error(r), "division by zero"));
		lwc_result_free(r);
		assert_int_equal(count_of(e, "SELECT SUM(n) FROM w"), sum);
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM w WHERE a = 'a' || id"), N);
	}
	for (int round = 1; round <= 2; round++) {
		r = lwc_exec(e->c, "UPDATE w SET n = n + 1, b = b || '+', g = 'g' || (n + 1)");
		assert_int_equal(lwc_result_status(r), LWC_RESULT_COMMAND);
		assert_int_equal(lwc_result_count(r), N);
		lwc_result_free(r);
		assert_int_equal(count_of(e, "SELECT SUM(n) FROM w"), sum + (long)round * N);
	}
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM w WHERE b = 'b' || id || '++'"), N);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM w WHERE g = 'g' || n"), N);
	r = lwc_exec(e->c, "DELETE FROM w WHERE n % 2 = 0");
	assert_int_equal(lwc_result_status(r), LWC_RESULT_COMMAND);
	assert_int_equal(lwc_result_count(r), N / 2);
	lwc_result_free(r);
	assert_int_equal(count_of(e, "SELECT COUNT(*) FROM w"), N / 2);
}

/* INSERT rows carry their tokens as one token_block when the proxy lists
 * WIRE_FEATURE_TOKEN_BLOCK, one field a token otherwise (a proxy of an
 * earlier release): rows sent either way answer every index alike. */
static void test_insert_token_block(void **state)
{
	struct env *e = *state;
	enum { N = 600 };

	assert_true(e->c->features & WIRE_FEATURE_TOKEN_BLOCK);
	exec_ok(e, "CREATE TABLE tb (id INT PRIMARY KEY, g INT, s TEXT UNIQUE)");
	for (int pass = 0; pass < 2; pass++) {
		size_t cap = N * 40 + 64, o;
		char *sql = malloc(cap), q[128];

		assert_non_null(sql);
		/* pass 1: as a client of a proxy without the feature */
		if (pass)
			e->c->features &= ~WIRE_FEATURE_TOKEN_BLOCK;
		o = (size_t)snprintf(sql, cap, "INSERT INTO tb VALUES ");
		for (int j = pass * N; j < (pass + 1) * N; j++)
			o += (size_t)snprintf(sql + o, cap - o, "%s(%d, %d, 's%05d')",
					      j > pass * N ? ", " : "", j, j % 10, j);
		exec_ok(e, sql);                          /* a bulk INSERT */
		free(sql);
		snprintf(q, sizeof(q), "INSERT INTO tb VALUES (%d, 3, 'x%d')", 5000 + pass, pass);
		exec_ok(e, q);                            /* one row */
		expect_error(lwc_exec(e->c, "INSERT INTO tb VALUES (7, 0, 'new')"),
			     LWC_ERR_UNIQUE, "duplicate key");
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM tb"), (pass + 1) * (N + 1));
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM tb WHERE g = 3"),
				 (pass + 1) * (N / 10 + 1));
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM tb WHERE id >= 100 AND id < 200"),
				 100);
		snprintf(q, sizeof(q), "SELECT g FROM tb WHERE s = 's%05d'", pass * N + 42);
		assert_int_equal(count_of(e, q), 2);
		snprintf(q, sizeof(q), "SELECT COUNT(*) FROM tb WHERE id = %d", 5000 + pass);
		assert_int_equal(count_of(e, q), 1);
	}
	e->c->features |= WIRE_FEATURE_TOKEN_BLOCK;
}

/* An UPDATE leaves the tokens of the columns it does not SET empty and the
 * proxy takes the rows' own (WIRE_FEATURE_TOKENS_AS_BEFORE); with the
 * feature off (a proxy of the first release) every token is sent.  Either
 * way the indexes of every column, equality and range, the unique key and
 * the SET columns' new values must answer as before. */
static void test_update_keeps_tokens(void **state)
{
	struct env *e = *state;
	enum { N = 1500 };
	char q[256];

	assert_true(e->c->features & WIRE_FEATURE_TOKENS_AS_BEFORE);
	exec_ok(e, "CREATE TABLE k (id INT PRIMARY KEY, g INT, s TEXT UNIQUE, n INT, t TEXT)");
	for (int i = 0; i < N; i += 500) {
		size_t cap = 500 * 80 + 64, o;
		char *sql = malloc(cap);

		assert_non_null(sql);
		o = (size_t)snprintf(sql, cap, "INSERT INTO k VALUES ");
		for (int j = i; j < i + 500; j++)
			o += (size_t)snprintf(sql + o, cap - o, "%s(%d, %d, 's%05d', %d, 't%d')",
					      j > i ? ", " : "", j, j % 10, j, j, j % 7);
		exec_ok(e, sql);
		free(sql);
	}
	for (int pass = 0; pass < 2; pass++) {
		const long base = 1000;

		/* pass 1: as a client of a proxy without the feature */
		if (pass)
			e->c->features &= ~WIRE_FEATURE_TOKENS_AS_BEFORE;
		snprintf(q, sizeof(q), "UPDATE k SET n = n + %ld, t = 'u' || g WHERE g %% 2 = 0",
			 base);
		exec_ok(e, q);
		/* columns not SET: equality, range and unique lookups */
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE g = 4"), N / 10);
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE id >= 100 AND id < 200"),
				 100);
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE s > 's01000'"), N - 1001);
		assert_int_equal(count_of(e, "SELECT n FROM k WHERE s = 's00042'"), 42 + base);
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE id = 1234"), 1);
		/* the columns SET: their new values only */
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE t = 'u4'"), N / 10);
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE n >= 1000 AND g % 2 = 0"),
				 N / 2);
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE n = 42"), 0);
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE n = 43"), 1);
		/* the keys not SET still hold */
		expect_error(lwc_exec(e->c, "INSERT INTO k VALUES (7, 0, 'new', 0, 'x')"),
			     LWC_ERR_UNIQUE, "duplicate key");
		expect_error(lwc_exec(e->c, "INSERT INTO k VALUES (99999, 0, 's00007', 0, 'x')"),
			     LWC_ERR_UNIQUE, "duplicate key");
		expect_error(lwc_exec(e->c, "UPDATE k SET s = 's00008' WHERE id = 9"),
			     LWC_ERR_UNIQUE, "duplicate key");
		/* a unique column SET, the others kept */
		exec_ok(e, "UPDATE k SET s = s || 'x' WHERE id < 10");
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE s = 's00003x'"), 1);
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE g = 3 AND id < 10"), 1);
		exec_ok(e, "UPDATE k SET s = 's' || SUBSTR(s, 2, 5) WHERE id < 10");
		/* undo n and t for the next pass */
		snprintf(q, sizeof(q), "UPDATE k SET n = id, t = 't' || (id %% 7) WHERE g %% 2 = 0");
		exec_ok(e, q);
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE n = id"), N);
		assert_int_equal(count_of(e, "SELECT COUNT(*) FROM k WHERE t = 't3'"),
				 (N + 3) / 7);
	}
}

static void test_many_range_covers(void **state)
{
	struct env *e = *state;
	size_t cap = 1 << 16, o;
	char *sql = malloc(cap);
	char ins[128];

	assert_non_null(sql);
	/* s is range-indexed (UNIQUE), p is not: the same answers */
	exec_ok(e, "CREATE TABLE r (id INT PRIMARY KEY, s TEXT UNIQUE, p TEXT)");
	for (int i = 0; i < 60; i++) {
		snprintf(ins, sizeof(ins), "INSERT INTO r VALUES (%d, 'k%03d', 'k%03d')", i, i * 7,
			 i * 7);
		exec_ok(e, ins);
	}
	for (int col = 0; col < 2; col++) {
		/* 300 text comparisons: about 600 cover tokens each, more than
		 * the proxy's 100,000 predicate nodes if all were sent */
		o = (size_t)snprintf(sql, cap, "SELECT COUNT(*) FROM r WHERE ");
		for (int i = 0; i < 300; i++)
			o += (size_t)snprintf(sql + o, cap - o, "%s%s > 'k%03d'", i ? " OR " : "",
					      col ? "p" : "s", 100 + i);
		/* s > 'k100' is the widest: ids 15..59 */
		assert_int_equal(count_of(e, sql), 45);
		/* and with AND: the narrowest, s > 'k399' (ids 58..59) */
		o = (size_t)snprintf(sql, cap, "SELECT COUNT(*) FROM r WHERE ");
		for (int i = 0; i < 300; i++)
			o += (size_t)snprintf(sql + o, cap - o, "%s%s > 'k%03d'", i ? " AND " : "",
					      col ? "p" : "s", 100 + i);
		assert_int_equal(count_of(e, sql), 2);
	}
	free(sql);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_subquery_in_from, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aggregate_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insert_one_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insert_pipeline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insert_ahead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_range_covers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insert_rows_in_parts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_rows_in_parts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decisions_in_flight, setup_wide, teardown),
		cmocka_unit_test_setup_teardown(test_insert_token_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_keeps_tokens, setup, teardown),
	};

	return cmocka_run_group_tests_name(h_backend(), tests, NULL, NULL);
}
