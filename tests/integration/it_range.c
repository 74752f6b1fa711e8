/*
 * it_range.c - what the cloud sees of a range on a range-indexed column
 * (issue 13), read from lwc-cloudstore's --trace: READs and WRITEs (one of
 * each per batch) of gamma blocks, gamma being the padding of the blocks that hold the range's
 * rows, exactly as for an IN listing the same rows' values (same k, so the
 * same gamma), and far fewer blocks than the table's; a range on a column
 * without a range index still reads every block of the table (the
 * superset), as before.
 *
 * The deployment runs with relocation off, so that rows stay in the blocks
 * the bulk INSERT put them in and the two statements of a pair match the
 * same blocks.  Clustered: `id BETWEEN a AND b` against `id IN (a, ..., b)`
 * on the primary key (rows in id order in their blocks); scattered: `v
 * BETWEEN a AND b` against `v IN (...)` on an indexed column whose values
 * are a permutation of the ids; text: `s LIKE 'p%'` against the IN of the
 * matching strings; a FLOAT range against its IN; each at several K.  Every
 * statement's count is checked too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lwc.h"

#define NROWS 3000
#define PERM  1009      /* v = id * PERM mod NROWS: a permutation (gcd 1) */

struct env {
	struct h_cs cs;
	struct h_px px;
	char key[512];
	lwc_conn *c;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	const char *init[] = { "--blocks", "16", "--relocate", "off", NULL };
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
		fprintf(stderr, "it_range: lwc_connect: %s\n", err);
		return -1;
	}
	*state = e;
	return 0;
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

/* Run a count(*) query; its count and the gamma the cloud saw (one READ and
 * one WRITE of the same number of blocks). */
static size_t gamma_of(struct env *e, const char *sql, long want)
{
	long mark = h_trace_mark_idle(&e->px), got;
	struct h_access s;
	lwc_result *r = lwc_exec(e->c, sql);

	if (lwc_result_status(r) == LWC_RESULT_ERROR)
		fail_msg("%s: %s", sql, lwc_result_error(r));
	if (lwc_result_next(r) != 1)
		fail_msg("%s: no row: %s", sql, lwc_result_error(r) ? lwc_result_error(r) : "");
	got = (long)lwc_value_int(r, 0);
	lwc_result_free(r);
	if (got != want)
		fail_msg("%s: count %ld, expected %ld", sql, got, want);
	assert_int_equal(h_trace_since(&e->cs, mark, &s), 0);
	if (s.bad[0])
		fail_msg("%s: a cloud request failed: %s", sql, s.bad);
	if (!h_batches_ok(s.nread, s.nr, 1024) || s.nwrite != s.nread || s.other != 0 ||
	    s.nr != s.nw)
		fail_msg("%s: %d READ (%zu ids), %d WRITE (%zu ids), %d other", sql, s.nread, s.nr,
			 s.nwrite, s.nw, s.other);
	return s.nr;
}

/* "col IN (v...)" of the n values */
static char *in_list(const char *col, const long *v, size_t n)
{
	size_t cap = 64 + n * 24, o;
	char *p = malloc(cap);

	assert_non_null(p);
	o = (size_t)snprintf(p, cap, "SELECT count(*) FROM big WHERE %s IN (", col);
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(p + o, cap - o, "%s%ld", i ? ", " : "", v[i]);
	snprintf(p + o, cap - o, ")");
	return p;
}

static void test_range_gamma(void **state)
{
	struct env *e = *state;
	static const long ks[] = { 1, 10, 100, 500 };
	size_t cap = 80 + (size_t)NROWS * 64, o = 0, table_gamma;
	char *ins = malloc(cap), sql[512];
	long *vals = malloc(NROWS * sizeof(long));

	assert_non_null(ins);
	assert_non_null(vals);
	exec_ok(e, "CREATE TABLE big (id INT PRIMARY KEY, v INT, f FLOAT, s TEXT, u INT)");
	exec_ok(e, "CREATE INDEX big_v ON big (v)");
	exec_ok(e, "CREATE INDEX big_f ON big (f)");
	exec_ok(e, "CREATE INDEX big_s ON big (s)");
	/* one bulk INSERT: rows in id order in fresh blocks */
	o = (size_t)snprintf(ins, cap, "INSERT INTO big VALUES ");
	for (long i = 0; i < NROWS; i++)
		o += (size_t)snprintf(ins + o, cap - o, "%s(%ld, %ld, %ld.5, 'k%05ld', %ld)",
				      i ? ", " : "", i, i * PERM % NROWS, i, i, i);
	exec_ok(e, ins);

	/* the whole table: a range on the column without a range index */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM big WHERE u BETWEEN 10 AND 19");
	table_gamma = gamma_of(e, sql, 10);
	fprintf(stderr, "it_range: unindexed u BETWEEN 10 AND 19: gamma %zu (the table's "
		"blocks, padded)\n", table_gamma);

	for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
		long k = ks[ki], a = 1234;
		size_t gr, gi;
		char *q;

		/* clustered: the primary key */
		for (long i = 0; i < k; i++)
			vals[i] = a + i;
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM big WHERE id BETWEEN %ld AND %ld",
			 a, a + k - 1);
		gr = gamma_of(e, sql, k);
		q = in_list("id", vals, (size_t)k);
		gi = gamma_of(e, q, k);
		free(q);
		fprintf(stderr, "it_range: K=%ld clustered: range gamma %zu, IN gamma %zu\n", k, gr,
			gi);
		assert_int_equal(gr, gi);
		assert_true(gr < table_gamma);

		/* scattered: v is a permutation of the ids */
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM big WHERE v >= %ld AND v < %ld",
			 a, a + k);
		gr = gamma_of(e, sql, k);
		q = in_list("v", vals, (size_t)k);
		gi = gamma_of(e, q, k);
		free(q);
		fprintf(stderr, "it_range: K=%ld scattered: range gamma %zu, IN gamma %zu\n", k, gr,
			gi);
		assert_int_equal(gr, gi);

		/* FLOAT: f = id + 0.5 */
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM big WHERE f > %ld AND f <= %ld",
			 a, a + k);
		gr = gamma_of(e, sql, k);
		q = in_list("id", vals, (size_t)k);
		gi = gamma_of(e, q, k);
		free(q);
		assert_int_equal(gr, gi);
	}
	/* text: LIKE 'k012%' is k01200 .. k01299 */
	{
		size_t gr, gi;
		long n = 0;
		size_t qo;
		char *q = malloc(8192);

		assert_non_null(q);
		gr = gamma_of(e, "SELECT count(*) FROM big WHERE s LIKE 'k012%'", 100);
		qo = (size_t)snprintf(q, 8192, "SELECT count(*) FROM big WHERE s IN (");
		for (long i = 1200; i < 1300; i++, n++)
			qo += (size_t)snprintf(q + qo, 8192 - qo, "%s'k%05ld'", n ? ", " : "", i);
		snprintf(q + qo, 8192 - qo, ")");
		gi = gamma_of(e, q, 100);
		free(q);
		fprintf(stderr, "it_range: LIKE prefix: gamma %zu, IN gamma %zu\n", gr, gi);
		assert_int_equal(gr, gi);
		/* a text range */
		gr = gamma_of(e, "SELECT count(*) FROM big WHERE s >= 'k01200' AND s < 'k01300'",
			      100);
		assert_int_equal(gr, gi);
	}
	free(ins);
	free(vals);
}

/* A range index added to a table that holds rows: the ranges use it once
 * CREATE INDEX has rebuilt the tokens (before: the whole table). */
static void test_range_rebuild(void **state)
{
	struct env *e = *state;
	char ins[65536];
	size_t o = 0, before, after;

	exec_ok(e, "CREATE TABLE late (id INT, w INT)");
	o = (size_t)snprintf(ins, sizeof(ins), "INSERT INTO late VALUES ");
	for (long i = 0; i < 2000; i++)
		o += (size_t)snprintf(ins + o, sizeof(ins) - o, "%s(%ld, %ld)", i ? ", " : "", i, i);
	exec_ok(e, ins);
	before = gamma_of(e, "SELECT count(*) FROM late WHERE w BETWEEN 100 AND 109", 10);
	exec_ok(e, "CREATE INDEX late_w ON late (w)");
	after = gamma_of(e, "SELECT count(*) FROM late WHERE w BETWEEN 100 AND 109", 10);
	fprintf(stderr, "it_range: before CREATE INDEX gamma %zu, after %zu\n", before, after);
	assert_true(after < before);
	assert_true(after <= 4);        /* 10 clustered rows: one block, gamma_min */
	/* the rebuilt index is maintained by UPDATE and DELETE */
	exec_ok(e, "UPDATE late SET w = w + 5000 WHERE id < 100");
	assert_true(gamma_of(e, "SELECT count(*) FROM late WHERE w >= 5000", 100) <= 8);
	exec_ok(e, "DELETE FROM late WHERE w BETWEEN 5000 AND 5049");
	assert_true(gamma_of(e, "SELECT count(*) FROM late WHERE w >= 5000", 50) <= 8);
	/* LWC_RANGE_BITS other than 0, 1, 2, 4 or 8 is ignored: the default
	 * fan-out, not "abc" read as 0 (no range index) */
	setenv("LWC_RANGE_BITS", "abc", 1);
	exec_ok(e, "CREATE TABLE strict (id INT PRIMARY KEY)");
	unsetenv("LWC_RANGE_BITS");
	o = (size_t)snprintf(ins, sizeof(ins), "INSERT INTO strict VALUES ");
	for (long i = 0; i < 2000; i++)
		o += (size_t)snprintf(ins + o, sizeof(ins) - o, "%s(%ld)", i ? ", " : "", i);
	exec_ok(e, ins);
	assert_true(gamma_of(e, "SELECT count(*) FROM strict WHERE id BETWEEN 100 AND 109", 10) <= 4);
	{
		char out[400];
		lwc_close(e->c);
		e->c = NULL;
		assert_int_equal(h_px_stop(&e->px, SIGTERM) & 0x7f, 0);
		snprintf(out, sizeof(out), "%s/check.out", e->px.dir);
		if (h_px_check(&e->px, out) != 0) {
			h_tail(out, 20);
			fail_msg("lwc-proxy check found problems");
		}
	}
}

/* A table made without range indexes, as every table of a database made
 * before them (the same catalog entry and rows: LWC_RANGE_BITS=0 makes
 * them so): correct answers through the superset, then REINDEX TABLE gives
 * its primary key a range index; `lwc-proxy check` finds the state
 * consistent afterwards. */
static void test_range_reindex(void **state)
{
	struct env *e = *state;
	char ins[65536], err[512] = "", out[400];
	size_t o = 0, before, after;

	setenv("LWC_RANGE_BITS", "0", 1);
	exec_ok(e, "CREATE TABLE old (id BIGINT PRIMARY KEY, name TEXT UNIQUE, w INT)");
	o = (size_t)snprintf(ins, sizeof(ins), "INSERT INTO old VALUES ");
	for (long i = 0; i < 2000; i++)
		o += (size_t)snprintf(ins + o, sizeof(ins) - o, "%s(%ld, 'n%05ld', %ld)",
				      i ? ", " : "", i, i, i % 7);
	exec_ok(e, ins);
	unsetenv("LWC_RANGE_BITS");
	/* a client of this version on the old table */
	lwc_close(e->c);
	e->c = NULL;
	if (lwc_connect(&e->c, e->key, NULL, err, sizeof(err)) != LWC_OK)
		fail_msg("lwc_connect: %s", err);
	before = gamma_of(e, "SELECT count(*) FROM old WHERE id BETWEEN 500 AND 509", 10);
	exec_ok(e, "INSERT INTO old VALUES (5000, 'late', 1)");
	exec_ok(e, "REINDEX TABLE old");
	after = gamma_of(e, "SELECT count(*) FROM old WHERE id BETWEEN 500 AND 509", 10);
	fprintf(stderr, "it_range: old table gamma %zu, after REINDEX %zu\n", before, after);
	assert_true(after < before);
	assert_true(after <= 4);
	assert_true(gamma_of(e, "SELECT count(*) FROM old WHERE name LIKE 'n0123%'", 10) <= 4);
	assert_true(gamma_of(e, "SELECT count(*) FROM old WHERE id > 4000", 1) <= 4);
	/* REINDEX of a table whose indexes are complete changes nothing */
	exec_ok(e, "REINDEX TABLE old");
	/* uniqueness of a range-indexed column is of its values, not of its
	 * prefix tokens (which repeat by design) */
	exec_ok(e, "CREATE INDEX old_w ON old (w)");
	{
		lwc_result *r = lwc_exec(e->c, "CREATE UNIQUE INDEX old_wu ON old (w)");
		assert_int_equal(lwc_result_status(r), LWC_RESULT_ERROR);
		assert_int_equal(lwc_result_error_code(r), LWC_ERR_UNIQUE);
		lwc_result_free(r);
	}
	exec_ok(e, "CREATE UNIQUE INDEX old_idu ON old (id)");
	{
		lwc_result *r = lwc_exec(e->c, "INSERT INTO old VALUES (5000, 'again', 2)");
		assert_int_equal(lwc_result_error_code(r), LWC_ERR_UNIQUE);
		lwc_result_free(r);
	}
	lwc_close(e->c);
	e->c = NULL;
	assert_int_equal(h_px_stop(&e->px, SIGTERM) & 0x7f, 0);
	snprintf(out, sizeof(out), "%s/check.out", e->px.dir);
	if (h_px_check(&e->px, out) != 0) {
		h_tail(out, 20);
		fail_msg("lwc-proxy check found problems");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_range_gamma, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_rebuild, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_reindex, setup, teardown),
	};

	return cmocka_run_group_tests_name(h_backend(), tests, NULL, NULL);
}
