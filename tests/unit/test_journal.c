/*
 * test_journal.c - proxy/journal.c: the statement journal against a model.
 *
 * Random transactions stage block, position and stash changes (some are
 * aborted, some large enough to write in place after folding); after every commit each row's position and stash entry read
 * through the journal (jr_pos_get, jr_stash_get; the positions also through
 * one cursor, rows ascending, as the plan reads them) equal the model's, and so
 * does the read-only locator (lwc-audit's ground truth) beside the open
 * state.  Folds happen at random limits, and the state is closed and opened
 * again at random points, unfolded journal included: px_state_open folds it,
 * after which the databases themselves, and the blocks' versions, tags and
 * bitmaps in memory, equal the model.  The two ways of folding are both
 * checked: a running fold (jr_fold_if_due, and jr_begin's for a large
 * statement) writes each row of the overlay once, which check_rows then
 * reads from the databases, and the open replays the records.  A malformed
 * journal record makes the open fail, not load half a state.  Records of
 * hundreds of entries go as several values, none on overflow pages, and a
 * state journaled with the older one-value records opens as before.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lmdb.h>
#include <sodium.h>

#include "cry.h"
#include "../../proxy/journal.h"
#include "../../proxy/locate.h"
#include "../../proxy/pred.h"
#include "../../proxy/state.h"

enum { NROWS = 300, MAXBLK = 64, R = 16, S = R + CRY_RECORD_OVERHEAD };

struct row_model {
	int has_pos;
	uint64_t loc;
	int in_stash;
	uint32_t table;
	uint8_t rec[S];
};

struct blk_model {
	uint64_t version;
	uint8_t tag[CRY_TAG_BYTES];
	uint64_t bits;
};

static struct row_model row_m[NROWS];
static struct blk_model blk_m[MAXBLK];
static uint64_t nblk;

static uint64_t rng_s = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
	rng_s ^= rng_s << 13;
	rng_s ^= rng_s >> 7;
	rng_s ^= rng_s << 17;
	return rng_s;
}

static char base[64], dir[80];
static struct px_state *st;
static struct px_table *tab;             /* table 1: column 0 holds token(row) */

static void token(uint8_t tok[CRY_TOKEN_BYTES], uint64_t row)
{
	memset(tok, 0, CRY_TOKEN_BYTES);
	cry_put_be64(tok, row * 7919u + 1);
}

static void open_state(void)
{
	char err[256] = "";

	if (px_state_open(&st, dir, err, sizeof(err)) != LWC_OK)
		fail_msg("open: %s", err);
}

static void setup_state(void)
{
	struct px_geom g;
	struct px_reloc_cfg rc = { 1, 8192, 1024 };
	char err[256] = "", key[128];
	MDB_txn *txn;
	FILE *f;

	snprintf(base, sizeof(base), "/tmp/lwc-test-journal-XXXXXX");
	assert_non_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/px", base);
	snprintf(key, sizeof(key), "%s/cs.key", base);
	f = fopen(key, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(px_geom_init(&g, R, 64, 48, 8, err, sizeof(err)), LWC_OK);
	g.perm = CRY_PERM_V2;
	if (px_state_create(dir, &g, "127.0.0.1:1", key, &rc, err, sizeof(err)) != LWC_OK)
		fail_msg("create: %s", err);
	open_state();
	/* a table whose column 0 maps token(row) to row, for the locator */
	tab = calloc(1, sizeof(*tab));
	assert_non_null(tab);
	memset(tab->handle, 0x5a, PX_HANDLE_BYTES);
	tab->id = 1;
	tab->ncols = 1;
	tab->pk_col = -1;
	assert_int_equal(px_table_layout(tab), LWC_OK);
	assert_int_equal(mdb_txn_begin(st->env, NULL, 0, &txn), 0);
	assert_int_equal(px_table_open_dbis(st, txn, tab, MDB_CREATE), 0);
	assert_int_equal(px_table_put(st, txn, tab), 0);
	for (uint64_t r = 0; r < NROWS; r++) {
		uint8_t tok[CRY_TOKEN_BYTES], v[8];
		MDB_val k = { CRY_TOKEN_BYTES, tok }, d = { 8, v };

		token(tok, r);
		idx_span_put(v, r, 1);              /* an index value (pred.h) */
		assert_int_equal(mdb_put(txn, tab->cols[0], &k, &d, 0), 0);
	}
	assert_int_equal(mdb_txn_commit(txn), 0);
}

/* Every row read through the journal, and through the locator, as the model says. */
static void check_rows(struct px_locator *loc)
{
	uint8_t rec[S];
	MDB_txn *txn;

	assert_int_equal(mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn), 0);
	for (uint64_t r = 0; r < NROWS; r++) {
		uint64_t l = 0, b = 0;
		uint32_t table = 0;
		int rc = jr_pos_get(st, txn, NULL, r, &l);
		uint8_t tok[CRY_TOKEN_BYTES];

		if (row_m[r].has_pos) {
			assert_int_equal(rc, 0);
			assert_true(l == row_m[r].loc);
		} else {
			assert_int_equal(rc, MDB_NOTFOUND);
		}
		rc = jr_stash_get(st, txn, r, &table, rec);
		if (row_m[r].in_stash) {
			assert_int_equal(rc, 0);
			assert_int_equal(table, row_m[r].table);
			assert_memory_equal(rec, row_m[r].rec, S);
		} else {
			assert_int_equal(rc, MDB_NOTFOUND);
		}
		if (loc == NULL)
			continue;
		token(tok, r);
		rc = px_locate(loc, tab->handle, 0, tok, &b);
		if (row_m[r].has_pos) {
			assert_int_equal(rc, LWC_OK);
			assert_true(b == (row_m[r].loc == PX_LOC_STASH ? PX_LOCATE_STASH
					  : PX_LOC_BLOCK(row_m[r].loc)));
		} else {
			assert_int_not_equal(rc, LWC_OK);
		}
	}
	/* the positions again through one cursor, rows ascending as map_rows
	 * asks them (px_pos_at tries the entry after the cursor's first): every
	 * row, then subsets with gaps of 1 to 4 rows */
	for (unsigned pass = 0; pass < 4; pass++) {
		MDB_cursor *cur;

		assert_int_equal(mdb_cursor_open(txn, st->pos_db, &cur), 0);
		for (uint64_t r = 0; r < NROWS; r += 1 + (pass ? (r * 7 + pass) % (pass + 1) : 0)) {
			uint64_t l = 0;
			int rc = jr_pos_get(st, txn, cur, r, &l);

			if (row_m[r].has_pos) {
				assert_int_equal(rc, 0);
				assert_true(l == row_m[r].loc);
			} else {
				assert_int_equal(rc, MDB_NOTFOUND);
			}
		}
		mdb_cursor_close(cur);
	}
	mdb_txn_abort(txn);
}

/* After an open: the blocks in memory, and nothing left in the journal. */
static void check_blocks(void)
{
	MDB_txn *txn;
	MDB_stat ms;

	assert_true(st->nblocks == nblk);
	for (uint64_t i = 0; i < nblk; i++) {
		assert_true(st->version[i] == blk_m[i].version);
		assert_memory_equal(st->tag + i * CRY_TAG_BYTES, blk_m[i].tag, CRY_TAG_BYTES);
		assert_true(st->bits[i] == blk_m[i].bits);
	}
	assert_int_equal(mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn), 0);
	assert_int_equal(mdb_stat(txn, st->journal_db, &ms), 0);
	assert_int_equal(ms.ms_entries, 0);
	mdb_txn_abort(txn);
	assert_true(jr_bytes(st) == 0);
}

/* Every journal value fits on a B-tree page: none took overflow pages,
 * whose allocation walks LMDB's free list (journal.c value_max). */
static void no_overflow_pages(void)
{
	MDB_txn *txn;
	MDB_stat ms;

	assert_int_equal(mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn), 0);
	assert_int_equal(mdb_stat(txn, st->journal_db, &ms), 0);
	assert_int_equal(ms.ms_overflow_pages, 0);
	mdb_txn_abort(txn);
}

/* One transaction of random changes; committed unless abort_it. */
static void one_txn(int abort_it)
{
	static struct row_model rows[NROWS];
	static struct blk_model blks[MAXBLK];
	uint64_t nb = nblk;
	MDB_txn *txn;
	/* now and then a record of several journal values (journal.c put_record) */
	int n = rng() % 8 == 0 ? 100 + (int)(rng() % 400) : 1 + (int)(rng() % 40);

	memcpy(rows, row_m, sizeof(rows));
	memcpy(blks, blk_m, sizeof(blks));
	assert_int_equal(mdb_txn_begin(st->env, NULL, 0, &txn), 0);
	/* now and then as a statement too large for the journal: the journal
	 * folded in the same transaction, the changes written in place */
	assert_int_equal(jr_begin(st, txn, rng() % 8 == 0 ? PX_JOURNAL_DIRECT_MIN + 1 : (size_t)n),
			 0);
	for (int i = 0; i < n; i++) {
		uint64_t r = rng() % NROWS;
		uint64_t l, id;

		switch (rng() % 6) {
		case 0:                  /* a block: an existing one or the next */
			id = nb < MAXBLK && (nb == 0 || rng() % 4 == 0) ? nb++ : rng() % nb;
			blks[id].version++;
			randombytes_buf(blks[id].tag, CRY_TAG_BYTES);
			blks[id].bits = rng();
			assert_int_equal(jr_block(st, id, blks[id].version, blks[id].tag,
						  &blks[id].bits), 0);
			break;
		case 1:
		case 2:                  /* a position, sometimes "in the stash" */
			l = rng() % 3 == 0 ? PX_LOC_STASH : PX_LOC(rng() % 1000, rng() % 64);
			assert_int_equal(jr_pos(st, r, l), 0);
			rows[r].has_pos = 1;
			rows[r].loc = l;
			break;
		case 3:
			assert_int_equal(jr_pos_del(st, r), 0);
			rows[r].has_pos = 0;
			break;
		case 4:
			rows[r].in_stash = 1;
			rows[r].table = (uint32_t)(rng() % 5);
			randombytes_buf(rows[r].rec, S);
			assert_int_equal(jr_stash_put(st, r, rows[r].table, rows[r].rec), 0);
			break;
		default:
			assert_int_equal(jr_stash_del(st, r), 0);
			rows[r].in_stash = 0;
			break;
		}
	}
	if (abort_it) {
		mdb_txn_abort(txn);
		jr_abort(st);
		return;
	}
	assert_int_equal(jr_commit(st, txn), 0);
	no_overflow_pages();
	memcpy(row_m, rows, sizeof(rows));
	memcpy(blk_m, blks, sizeof(blks));
	nblk = nb;
}

static void test_model(void **state)
{
	struct px_locator *loc = NULL;
	char err[256];

	(void)state;
	setup_state();
	assert_int_equal(px_locator_open(&loc, dir, err, sizeof(err)), LWC_OK);
	for (int round = 0; round < 400; round++) {
		one_txn(rng() % 5 == 0);
		check_rows(loc);
		if (rng() % 10 == 0) {
			/* a fold at a random limit (never, at once, or later) */
			uint64_t before = jr_folds(st);
			uint64_t bytes = jr_bytes(st);

			st->jr_fold_bytes = rng() % 3 == 0 ? 1 : rng() % 20000 + 1;
			jr_fold_if_due(st);
			if (bytes > st->jr_fold_bytes) {
				assert_true(jr_folds(st) == before + 1);
				assert_true(jr_bytes(st) == 0);
				assert_true(jr_fold_ms_avg(st) > 0.0);   /* timed */
			} else {
				assert_true(jr_folds(st) == before);
			}
			check_rows(loc);
		}
		if (rng() % 25 == 0) {
			/* closed with the journal as it is: the open folds it */
			px_state_close(st);
			open_state();
			check_blocks();
			check_rows(loc);
			st->jr_fold_bytes = PX_JOURNAL_FOLD_DEFAULT;
		}
	}
	px_locator_close(loc);
	px_state_close(st);
	open_state();
	check_blocks();
	check_rows(NULL);
	px_state_close(st);
	st = NULL;
}

/* A state journaled before records were split (one value a record under
 * the 8-byte transaction id): its record sorts before the new keys, so the
 * open replays it first and a later statement's change to the same row wins. */
static void test_old_keys(void **state)
{
	uint8_t key[8], rec[17];
	MDB_val k = { 8, key }, d = { sizeof(rec), rec };
	uint64_t loc, a = PX_LOC(11, 3), b = PX_LOC(12, 4);
	MDB_txn *txn;
	MDB_stat ms;

	(void)state;
	open_state();
	assert_int_equal(mdb_txn_begin(st->env, NULL, 0, &txn), 0);
	cry_put_be64(key, (uint64_t)mdb_txn_id(txn));
	rec[0] = 'P';
	cry_put_be64(rec + 1, 5);
	cry_put_be64(rec + 9, a);
	assert_int_equal(mdb_put(txn, st->journal_db, &k, &d, 0), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	assert_int_equal(mdb_txn_begin(st->env, NULL, 0, &txn), 0);
	assert_int_equal(jr_begin(st, txn, 1), 0);
	assert_int_equal(jr_pos(st, 5, b), 0);
	assert_int_equal(jr_commit(st, txn), 0);
	assert_int_equal(mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn), 0);
	assert_int_equal(mdb_stat(txn, st->journal_db, &ms), 0);
	assert_int_equal(ms.ms_entries, 2);              /* the old key and a new one */
	mdb_txn_abort(txn);
	px_state_close(st);
	open_state();                                    /* the open folds both */
	assert_int_equal(mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn), 0);
	assert_int_equal(jr_pos_get(st, txn, NULL, 5, &loc), 0);
	mdb_txn_abort(txn);
	assert_true(loc == b);
	px_state_close(st);
	st = NULL;
}

/* A journal record the fold cannot read: the open fails and says so. */
static void test_corrupt(void **state)
{
	char err[256] = "";
	MDB_txn *txn;
	uint8_t key[8], bad[] = { 'P', 0, 0, 0 };        /* a cut entry */
	MDB_val k = { 8, key }, d = { sizeof(bad), bad };

	(void)state;
	open_state();
	assert_int_equal(mdb_txn_begin(st->env, NULL, 0, &txn), 0);
	cry_put_be64(key, UINT64_MAX);
	assert_int_equal(mdb_put(txn, st->journal_db, &k, &d, 0), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	px_state_close(st);
	st = NULL;
	assert_int_not_equal(px_state_open(&st, dir, err, sizeof(err)), LWC_OK);
	assert_non_null(strstr(err, "MDB_CORRUPTED"));
	assert_null(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_old_keys),
		cmocka_unit_test(test_corrupt),
	};
	int rc;

	if (sodium_init() < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (base[0]) {
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", base);
	}
	free(tab);
	return rc;
}
