/*
 * test_worker.c - proxy/cloud_io.c: a worker's read transaction.
 *
 * serve makes each worker's read transaction at start-up (px_worker_warm)
 * instead of at the worker's first statement.  What must hold: the warmed
 * transaction is left reset, not open (an open one would pin the snapshot
 * of start-up: every statement would plan on the state of that moment, and
 * LMDB could never reuse the pages freed since), px_read_begin renews that
 * same transaction, and the renewed one sees what was committed after the
 * warm-up; a second read transaction while the first is in use is a new
 * one, and ending both leaves the worker's kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>
#include <sodium.h>

#include "../../proxy/engine.h"
#include "../../proxy/state.h"

enum { R = 16 };

static char base[64], dir[80];
static struct px_state *st;

static void setup_state(void)
{
	struct px_geom g;
	struct px_reloc_cfg rc = { 1, 8192, 1024 };
	char err[256] = "", key[128];
	FILE *f;

	snprintf(base, sizeof(base), "/tmp/lwc-test-worker-XXXXXX");
	assert_non_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/px", base);
	snprintf(key, sizeof(key), "%s/cs.key", base);
	f = fopen(key, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(px_geom_init(&g, R, 64, 48, 8, err, sizeof(err)), LWC_OK);
	if (px_state_create(dir, &g, "127.0.0.1:1", key, &rc, err, sizeof(err)) != LWC_OK)
		fail_msg("create: %s", err);
	if (px_state_open(&st, dir, err, sizeof(err)) != LWC_OK)
		fail_msg("open: %s", err);
}

static void teardown_state(void)
{
	char cmd[128];

	px_state_close(st);
	st = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		fail_msg("cannot remove %s", base);
}

/* Commit key -> value into the named database "t" (made if absent). */
static void put(MDB_dbi *dbi, const char *key, const char *val)
{
	MDB_txn *txn;
	MDB_val k = { strlen(key), (void *)key }, v = { strlen(val), (void *)val };

	assert_int_equal(mdb_txn_begin(st->env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "t", MDB_CREATE, dbi), 0);
	assert_int_equal(mdb_put(txn, *dbi, &k, &v, 0), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
}

static int has(MDB_txn *txn, MDB_dbi dbi, const char *key, const char *val)
{
	MDB_val k = { strlen(key), (void *)key }, v;

	return mdb_get(txn, dbi, &k, &v) == 0 && v.mv_size == strlen(val) &&
	       memcmp(v.mv_data, val, v.mv_size) == 0;
}

static void test_warm(void **state)
{
	struct px_engine_cfg cfg;
	struct px_worker w;
	MDB_txn *txn, *txn2, *kept;
	MDB_dbi dbi;

	(void)state;
	setup_state();
	memset(&cfg, 0, sizeof(cfg));
	put(&dbi, "a", "before");
	assert_int_equal(px_worker_init(&w, st, &cfg, "worker 0"), LWC_OK);
	assert_null(w.rtxn);
	assert_int_equal(px_worker_warm(&w), 0);
	kept = w.rtxn;
	assert_non_null(kept);
	assert_int_equal(w.rtxn_busy, 0);

	/* committed after the warm-up: the renewed transaction sees it */
	put(&dbi, "a", "after");
	put(&dbi, "b", "new");
	assert_int_equal(px_read_begin(&w, &txn), 0);
	assert_ptr_equal(txn, kept);
	assert_int_equal(w.rtxn_busy, 1);
	assert_true(has(txn, dbi, "a", "after"));
	assert_true(has(txn, dbi, "b", "new"));

	/* a second one while the first is in use: a new transaction */
	assert_int_equal(px_read_begin(&w, &txn2), 0);
	assert_ptr_not_equal(txn2, kept);
	assert_true(has(txn2, dbi, "b", "new"));
	px_read_end(&w, txn2);
	px_read_end(&w, txn);
	assert_int_equal(w.rtxn_busy, 0);
	assert_ptr_equal(w.rtxn, kept);

	/* and again, after one more commit */
	put(&dbi, "c", "later");
	assert_int_equal(px_read_begin(&w, &txn), 0);
	assert_ptr_equal(txn, kept);
	assert_true(has(txn, dbi, "c", "later"));
	px_read_end(&w, txn);

	px_worker_fini(&w);
	teardown_state();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_warm),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
