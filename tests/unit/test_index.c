/*
 * test_index.c - proxy/index.c: a column's index as its tree plus the
 * table's run of recent entries.  Random statements (inserts of new rows,
 * deletes, updates of a column, of every size from one row to most of the
 * table) run against a model; after every commit each token's rows
 * (idx_lookup) equal the model's, every entry is in exactly one of tree and
 * run, and idx_has_duplicates and idx_probe agree with the model.  The thresholds are
 * small, so entries go to the run, the run moves into the trees, and large
 * statements write the trees directly, many times over.
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

#include "cry.h"
#include "../../proxy/index.h"

enum { NCOLS = 3, MAXROWS = 6000 };

/* model: row r (live[r]) has value val[r][c] in column c; the token of a
 * value is its 16 bytes, so many rows share a value in columns 1 and 2 */
static int live[MAXROWS];
static uint32_t val[MAXROWS][NCOLS];
static uint64_t nextrow;
static uint64_t rng_s = 88172645463325252ull;

static uint64_t rng(void)
{
	rng_s ^= rng_s << 13;
	rng_s ^= rng_s >> 7;
	rng_s ^= rng_s << 17;
	return rng_s;
}

static void tok_of(uint8_t tok[CRY_TOKEN_BYTES], uint32_t c, uint32_t v)
{
	memset(tok, 0, CRY_TOKEN_BYTES);
	tok[0] = (uint8_t)(v * 131u);      /* spread over the key space */
	tok[1] = (uint8_t)c;
	memcpy(tok + 2, &v, sizeof(v));
}

static uint32_t draw_val(uint32_t c)
{
	static const uint32_t dom[NCOLS] = { 1000000, 40, 3 };
	return (uint32_t)(rng() % dom[c]);
}

struct fx {
	char dir[64];
	MDB_env *env;
	struct px_table t;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	MDB_txn *txn;
	char name[32];

	snprintf(f->dir, sizeof(f->dir), "/tmp/lwc-test-index-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(mdb_env_create(&f->env), 0);
	assert_int_equal(mdb_env_set_maxdbs(f->env, 16), 0);
	assert_int_equal(mdb_env_set_mapsize(f->env, 1ull << 30), 0);
	assert_int_equal(mdb_env_open(f->env, f->dir, MDB_NOSYNC, 0600), 0);
	f->t.id = 7;
	f->t.ncols = NCOLS;
	f->t.ntok = NCOLS;
	for (uint32_t c = 0; c < NCOLS; c++)
		f->t.tcol[c] = (uint8_t)c;        /* one token a column */
	f->t.pk_col = -1;
	assert_int_equal(mdb_txn_begin(f->env, NULL, 0, &txn), 0);
	for (uint32_t c = 0; c < NCOLS; c++) {
		assert_int_equal(px_db_name(name, sizeof(name), f->t.id, (int)c), LWC_OK);
		assert_int_equal(mdb_dbi_open(txn, name, MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED,
					      &f->t.cols[c]), 0);
	}
	assert_int_equal(px_db_name(name, sizeof(name), f->t.id, PX_DB_RUN), LWC_OK);
	assert_int_equal(mdb_dbi_open(txn, name, MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED,
				      &f->t.run), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char path[128];

	mdb_env_close(f->env);
	snprintf(path, sizeof(path), "%s/data.mdb", f->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/lock.mdb", f->dir);
	unlink(path);
	rmdir(f->dir);
	free(f);
	idx_configure(65536, 0);
	return 0;
}

static uint8_t toks[MAXROWS][CRY_TOKEN_BYTES];
static struct tokrow tr[MAXROWS];

/* tr[0..m) for column c of rows[0..n) (values from val), sorted */
static size_t fill(uint32_t c, const uint64_t *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		tok_of(toks[i], c, val[rows[i]][c]);
		tr[i].tok = toks[i];
		tr[i].row = rows[i];
	}
	tokrow_sort(tr, n);
	return n;
}

static void do_insert(struct fx *f, MDB_txn *txn, size_t n)
{
	uint64_t rows[MAXROWS];

	if (nextrow + n > MAXROWS)
		n = MAXROWS - nextrow;
	for (size_t i = 0; i < n; i++) {
		rows[i] = nextrow++;
		live[rows[i]] = 1;
		for (uint32_t c = 0; c < NCOLS; c++)
			val[rows[i]][c] = draw_val(c);
	}
	f->t.nrows += n;
	for (uint32_t c = 0; c < NCOLS; c++) {
		struct idx_cur ic;
		size_t m = fill(c, rows, n);

		assert_int_equal(idx_open(&ic, txn, &f->t, c, m), 0);
		if (rng() % 2) {
			for (size_t i = 0; i < m; i++)
				assert_int_equal(idx_add(&ic, tr[i].tok, tr[i].row, MDB_APPENDDUP),
						 0);
		} else {
			/* each token's rows in one put, as a bulk INSERT does */
			for (size_t i = 0, j; i < m; i = j) {
				uint64_t grp[MAXROWS];
				uint8_t scratch[MAXROWS * 8];

				for (j = i; j < m && tokrow_same(&tr[j], &tr[i]); j++)
					grp[j - i] = tr[j].row;
				assert_int_equal(idx_add_rows(&ic, tr[i].tok, grp, j - i,
							      MDB_APPENDDUP, scratch), 0);
			}
		}
		idx_close(&ic);
	}
}

static size_t pick_live(uint64_t *rows, size_t want)
{
	size_t n = 0;

	for (uint64_t r = 0; r < nextrow && n < want; r++)
		if (live[r] && rng() % 3 == 0)
			rows[n++] = r;
	return n;
}

static void do_delete(struct fx *f, MDB_txn *txn, size_t want)
{
	uint64_t rows[MAXROWS];
	size_t n = pick_live(rows, want);

	for (uint32_t c = 0; c < NCOLS; c++) {
		struct idx_cur ic;
		size_t m = fill(c, rows, n);

		assert_int_equal(idx_open(&ic, txn, &f->t, c, m), 0);
		for (size_t i = 0; i < m;) {
			size_t j = i + 1;

			while (j < m && memcmp(tr[j].tok, tr[i].tok, CRY_TOKEN_BYTES) == 0)
				j++;
			assert_int_equal(idx_remove_group(&ic, tr + i, j - i), 0);
			i = j;
		}
		idx_close(&ic);
	}
	for (size_t i = 0; i < n; i++)
		live[rows[i]] = 0;
	f->t.nrows -= n;
}

static void do_update(struct fx *f, MDB_txn *txn, size_t want)
{
	uint64_t rows[MAXROWS];
	size_t n = pick_live(rows, want), m;
	uint32_t c = (uint32_t)(rng() % NCOLS);
	struct idx_cur ic;

	m = fill(c, rows, n);
	assert_int_equal(idx_open(&ic, txn, &f->t, c, m), 0);
	for (size_t i = 0; i < m; i++)
		assert_int_equal(idx_remove(&ic, tr[i].tok, tr[i].row), 0);
	/* gone: removing it again finds nothing */
	if (m > 0)
		assert_int_equal(idx_remove(&ic, tr[0].tok, tr[0].row), MDB_NOTFOUND);
	for (size_t i = 0; i < n; i++)
		val[rows[i]][c] = draw_val(c);
	m = fill(c, rows, n);
	for (size_t i = 0; i < m; i++)
		assert_int_equal(idx_add(&ic, tr[i].tok, tr[i].row, 0), 0);
	idx_close(&ic);
}

static size_t count(MDB_txn *txn, MDB_dbi dbi)
{
	MDB_stat ms;

	assert_int_equal(mdb_stat(txn, dbi, &ms), 0);
	return ms.ms_entries;
}

/* The rows dbi's values hold (each a span of row ids, pred.h). */
static size_t rows_in(MDB_txn *txn, MDB_dbi dbi)
{
	MDB_cursor *cur;
	MDB_val k, d;
	size_t n = 0;
	int rc;

	assert_int_equal(mdb_cursor_open(txn, dbi, &cur), 0);
	while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
		assert_int_equal(d.mv_size, 8);
		n += idx_span_rows(d.mv_data);
	}
	assert_int_equal(rc, MDB_NOTFOUND);
	mdb_cursor_close(cur);
	return n;
}

static void verify(struct fx *f)
{
	MDB_txn *txn;
	size_t entries = 0;

	assert_int_equal(mdb_txn_begin(f->env, NULL, MDB_RDONLY, &txn), 0);
	for (uint32_t c = 0; c < NCOLS; c++)
		entries += rows_in(txn, f->t.cols[c]);
	entries += rows_in(txn, f->t.run);
	/* every entry once: as many as the model's rows times columns */
	assert_int_equal(entries, f->t.nrows * NCOLS);
	for (uint32_t c = 0; c < NCOLS; c++) {
		/* the rows of a sample of values (all of the small columns) */
		uint32_t probes = c == 0 ? 60 : 40;

		for (uint32_t p = 0; p < probes; p++) {
			uint32_t v = c == 0 ? (p < 30 && nextrow ? val[rng() % nextrow][0]
						 : draw_val(0))
					    : p;
			uint8_t tok[CRY_TOKEN_BYTES];
			struct locset got = { 0 };
			size_t k = 0;

			tok_of(tok, c, v);
			assert_int_equal(idx_lookup(txn, &f->t, c, tok, &got), LWC_OK);
			for (uint64_t r = 0; r < nextrow; r++)
				if (live[r] && val[r][c] == v) {
					assert_true(k < got.n);
					assert_int_equal(got.v[k], r);
					k++;
				}
			assert_int_equal(got.n, k);
			locset_free(&got);
		}
		{
			int dup, want = 0;
			static uint8_t seen[1000000 / 8 + 1];

			memset(seen, 0, sizeof(seen));
			for (uint64_t r = 0; r < nextrow && !want; r++)
				if (live[r]) {
					uint32_t v = val[r][c];
					want = seen[v / 8] >> (v % 8) & 1;
					seen[v / 8] |= (uint8_t)(1u << (v % 8));
				}
			assert_int_equal(idx_has_duplicates(txn, &f->t, c, NULL, &dup), 0);
			assert_int_equal(dup, want);
		}
		{
			/* idx_probe over the same sample in token order: found
			 * exactly when some live row holds the value (tree or run) */
			enum { NP = 64 };
			static uint8_t ptok[NP][CRY_TOKEN_BYTES];
			struct tokrow pr[NP];
			struct idx_probe probe;
			uint32_t pv[NP];

			for (uint32_t p = 0; p < NP; p++) {
				pv[p] = c == 0 ? (p % 2 && nextrow ? val[rng() % nextrow][0] : draw_val(0))
					       : p % 50;
				tok_of(ptok[p], c, pv[p]);
				pr[p].tok = ptok[p];
				pr[p].row = p;
			}
			tokrow_sort(pr, NP);
			assert_int_equal(idx_probe_open(&probe, txn, &f->t, c), 0);
			for (uint32_t p = 0; p < NP; p++) {
				uint32_t v = pv[pr[p].row];
				int found, want = 0;

				for (uint64_t r = 0; r < nextrow && !want; r++)
					want = live[r] && val[r][c] == v;
				assert_int_equal(idx_probe_has(&probe, pr[p].tok, &found), 0);
				assert_int_equal(found, want);
			}
			idx_probe_close(&probe);
		}
	}
	mdb_txn_abort(txn);
}

static int live_keep[MAXROWS];
static uint32_t val_keep[MAXROWS][NCOLS];
static uint64_t next_keep, nrows_keep;

static void test_random_statements(void **state)
{
	struct fx *f = *state;
	int saw_run = 0, saw_flush = 0;

	/* the run from 64 entries a tree, moved in past 100 */
	idx_configure(64, 100);
	for (int round = 0; round < 400; round++) {
		MDB_txn *txn;
		uint64_t r = rng() % 100;
		size_t n = rng() % 4 == 0 ? 1 + rng() % 400 : 1 + rng() % 12;
		size_t before, r0;
		int abort_it = round % 50 == 49;

		if (abort_it) {
			memcpy(live_keep, live, sizeof(live));
			memcpy(val_keep, val, sizeof(val));
			next_keep = nextrow;
			nrows_keep = f->t.nrows;
		}
		assert_int_equal(mdb_txn_begin(f->env, NULL, 0, &txn), 0);
		r0 = count(txn, f->t.run);
		if (r < 45 || f->t.nrows < 50)
			do_insert(f, txn, n);
		else if (r < 75)
			do_delete(f, txn, n);
		else
			do_update(f, txn, n);
		before = count(txn, f->t.run);
		saw_run += before > 0;
		assert_int_equal(idx_settle(txn, &f->t), 0);
		/* the run never stays past its limit; past it, it moved in */
		assert_true(count(txn, f->t.run) <= 100);
		if (before > 100)
			assert_int_equal(count(txn, f->t.run), 0);
		else
			assert_int_equal(count(txn, f->t.run), before);
		saw_flush += r0 > 0 && count(txn, f->t.run) == 0;
		/* an aborted statement leaves nothing behind */
		if (abort_it) {
			mdb_txn_abort(txn);
			memcpy(live, live_keep, sizeof(live));
			memcpy(val, val_keep, sizeof(val));
			nextrow = next_keep;
			f->t.nrows = nrows_keep;
			verify(f);
			continue;
		}
		assert_int_equal(mdb_txn_commit(txn), 0);
		verify(f);
	}
	assert_true(saw_run > 50);
	assert_true(saw_flush > 5);
}

/* Where entries go, step by step: the tree while it is small, the run
 * for small statements, the tree again (the run moved in first) for a
 * statement of a sixteenth of the tree or of more than a quarter of the
 * run's limit; lookups sorted across both. */
static void test_placement(void **state)
{
	struct fx *f = *state;
	MDB_txn *txn;
	uint8_t tok[CRY_TOKEN_BYTES];
	struct locset got = { 0 };
	struct idx_cur ic;

	idx_configure(1, 0);
	assert_int_equal(mdb_txn_begin(f->env, NULL, 0, &txn), 0);
	tok_of(tok, 1, 5);
	/* an empty tree: entries go to the tree (a tree's size is the
	 * table's rows times the column's tokens a row: one here) */
	assert_int_equal(idx_open(&ic, txn, &f->t, 1, 1), 0);
	assert_false(ic.run);
	assert_int_equal(idx_add(&ic, tok, 10, MDB_APPENDDUP), 0);
	idx_close(&ic);
	f->t.nrows = 1;
	/* a one-entry statement is a sixteenth or more of a tree of up to 16
	 * entries: still the tree; with 17 it goes to the run */
	for (uint64_t r = 11; r < 27; r++) {
		assert_int_equal(idx_open(&ic, txn, &f->t, 1, 1), 0);
		assert_false(ic.run);
		assert_int_equal(idx_add(&ic, tok, r, MDB_APPENDDUP), 0);
		idx_close(&ic);
		f->t.nrows++;
	}
	assert_int_equal(idx_open(&ic, txn, &f->t, 1, 1), 0);
	assert_true(ic.run);
	/* an older row id than the list's last: the hint is refused, a plain put */
	assert_int_equal(idx_add(&ic, tok, 3, MDB_APPENDDUP), 0);
	assert_int_equal(idx_add(&ic, tok, 40, MDB_APPENDDUP), 0);
	idx_close(&ic);
	assert_int_equal(count(txn, f->t.run), 2);
	assert_int_equal(idx_lookup(txn, &f->t, 1, tok, &got), LWC_OK);
	assert_int_equal(got.n, 19);
	for (size_t i = 1; i < got.n; i++)
		assert_true(got.v[i - 1] < got.v[i]);
	assert_int_equal(got.v[0], 3);
	assert_int_equal(got.v[18], 40);
	/* a large statement moves the run into the trees first */
	assert_int_equal(idx_open(&ic, txn, &f->t, 1, 100), 0);
	assert_false(ic.run);
	idx_close(&ic);
	assert_int_equal(count(txn, f->t.run), 0);
	got.n = 0;
	assert_int_equal(idx_lookup(txn, &f->t, 1, tok, &got), LWC_OK);
	assert_int_equal(got.n, 19);
	locset_free(&got);

	/* a statement of more than a quarter of the run's limit (m entries
	 * for each of the row's 3 tokens) writes the tree: 200 entries in the
	 * tree of column 2, a limit of 60 */
	tok_of(tok, 2, 9);
	idx_configure(0, 0);
	assert_int_equal(idx_open(&ic, txn, &f->t, 2, 1), 0);
	for (uint64_t r = 100; r < 300; r++)
		assert_int_equal(idx_add(&ic, tok, r, MDB_APPENDDUP), 0);
	idx_close(&ic);
	f->t.nrows = 200;
	idx_configure(1, 60);
	assert_int_equal(idx_open(&ic, txn, &f->t, 2, 5), 0);
	assert_true(ic.run);                   /* 5 x 3 x 4 = 60 */
	idx_close(&ic);
	assert_int_equal(idx_open(&ic, txn, &f->t, 2, 6), 0);
	assert_false(ic.run);                  /* 72 */
	idx_close(&ic);
	mdb_txn_abort(txn);
}

/* idx_add_rows: one put for many rows of a token, into an empty tree
 * (MDB_APPEND), after the token's last row (MDB_APPENDDUP), before it (the
 * hint refused: a plain put of them all), and into the run. */
static void test_add_rows(void **state)
{
	struct fx *f = *state;
	MDB_txn *txn;
	uint8_t a[CRY_TOKEN_BYTES], b[CRY_TOKEN_BYTES], scratch[64 * 8];
	uint64_t rows[64];
	struct locset got = { 0 };
	struct idx_cur ic;

	idx_configure(0, 0);
	assert_int_equal(mdb_txn_begin(f->env, NULL, 0, &txn), 0);
	tok_of(a, 1, 6);
	tok_of(b, 1, 5);
	assert_true(memcmp(a, b, CRY_TOKEN_BYTES) < 0);
	assert_int_equal(idx_open(&ic, txn, &f->t, 1, 64), 0);
	for (uint64_t i = 0; i < 20; i++)
		rows[i] = 100 + 2 * i;            /* 100, 102, ..., 138 */
	assert_int_equal(idx_add_rows(&ic, a, rows, 20, MDB_APPEND | MDB_APPENDDUP, scratch),
			 0);
	assert_int_equal(idx_add_rows(&ic, b, rows, 3, MDB_APPEND | MDB_APPENDDUP, scratch), 0);
	/* token a again: MDB_APPEND refused (b is after it), then plainly */
	rows[0] = 140;
	rows[1] = 141;
	assert_int_equal(idx_add_rows(&ic, a, rows, 2, MDB_APPEND | MDB_APPENDDUP, scratch), 0);
	/* rows among a's: MDB_APPENDDUP refused, then plainly */
	rows[0] = 1;
	rows[1] = 101;
	rows[2] = 150;
	assert_int_equal(idx_add_rows(&ic, a, rows, 3, MDB_APPENDDUP, scratch), 0);
	/* one row: idx_add */
	rows[0] = 200;
	assert_int_equal(idx_add_rows(&ic, a, rows, 1, MDB_APPENDDUP, scratch), 0);
	idx_close(&ic);
	/* values: a's 20 single rows, 140-141 as one span, 1, 101, 150 and
	 * 200; b's three single rows */
	assert_int_equal(rows_in(txn, f->t.cols[1]), 26 + 3);
	assert_int_equal(count(txn, f->t.cols[1]), 20 + 1 + 3 + 1 + 3);
	assert_int_equal(idx_lookup(txn, &f->t, 1, a, &got), LWC_OK);
	assert_int_equal(got.n, 26);
	assert_int_equal(got.v[0], 1);
	assert_int_equal(got.v[1], 100);
	assert_int_equal(got.v[2], 101);
	assert_int_equal(got.v[3], 102);
	assert_int_equal(got.v[21], 138);
	assert_int_equal(got.v[22], 140);
	assert_int_equal(got.v[23], 141);
	assert_int_equal(got.v[24], 150);
	assert_int_equal(got.v[25], 200);
	for (size_t i = 1; i < got.n; i++)
		assert_true(got.v[i - 1] < got.v[i]);
	locset_free(&got);

	/* into the run: a tree of 29 entries takes a one-row statement there */
	f->t.nrows = 29;
	idx_configure(1, 0);
	assert_int_equal(idx_open(&ic, txn, &f->t, 1, 1), 0);
	assert_true(ic.run);
	rows[0] = 300;
	rows[1] = 301;
	assert_int_equal(idx_add_rows(&ic, b, rows, 2, MDB_APPENDDUP, scratch), 0);
	idx_close(&ic);
	assert_int_equal(count(txn, f->t.run), 1);       /* 300-301: one span */
	assert_int_equal(rows_in(txn, f->t.run), 2);
	memset(&got, 0, sizeof(got));
	assert_int_equal(idx_lookup(txn, &f->t, 1, b, &got), LWC_OK);
	assert_int_equal(got.n, 5);
	assert_int_equal(got.v[3], 300);
	assert_int_equal(got.v[4], 301);
	locset_free(&got);
	mdb_txn_abort(txn);
}

/* Values are spans of consecutive row ids (pred.h): found, split on
 * removal, capped at IDX_SPAN_ROWS rows, counted as rows. */
static void test_spans(void **state)
{
	struct fx *f = *state;
	enum { BIG = IDX_SPAN_ROWS + 4464 };
	uint64_t *rows = malloc(BIG * sizeof(*rows));
	uint8_t *scratch = malloc(BIG * 8), tok[CRY_TOKEN_BYTES], one[CRY_TOKEN_BYTES];
	static const uint64_t in[] = { 10, 15, 19, 30, 31, 40 }, out[] = { 9, 20, 29, 32, 41, 0 };
	static const uint64_t left[] = { 11, 12, 13, 14, 16, 17, 18, 30, 31 };
	struct locset got = { 0 };
	struct tokrow tr[9];
	struct idx_cur ic;
	MDB_txn *txn;
	int dup;

	assert_non_null(rows);
	assert_non_null(scratch);
	idx_configure(0, 0);
	tok_of(tok, 1, 7);
	tok_of(one, 1, 8);
	assert_int_equal(mdb_txn_begin(f->env, NULL, 0, &txn), 0);
	assert_int_equal(idx_open(&ic, txn, &f->t, 1, 16), 0);
	for (uint64_t i = 0; i < 10; i++)
		rows[i] = 10 + i;                 /* 10-19 */
	rows[10] = 30;
	rows[11] = 31;
	rows[12] = 40;
	assert_int_equal(idx_add_rows(&ic, tok, rows, 13, MDB_APPENDDUP, scratch), 0);
	assert_int_equal(count(txn, f->t.cols[1]), 3);
	assert_int_equal(rows_in(txn, f->t.cols[1]), 13);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(idx_holds(txn, f->t.cols[1], tok, CRY_TOKEN_BYTES, in[i]), 1);
		assert_int_equal(idx_holds(txn, f->t.cols[1], tok, CRY_TOKEN_BYTES, out[i]), 0);
	}
	assert_int_equal(idx_holds(txn, f->t.cols[1], one, CRY_TOKEN_BYTES, 10), 0);
	/* inside a span: split in two; its first and last rows: shortened */
	assert_int_equal(idx_remove(&ic, tok, 15), 0);
	assert_int_equal(count(txn, f->t.cols[1]), 4);
	assert_int_equal(idx_remove(&ic, tok, 10), 0);
	assert_int_equal(idx_remove(&ic, tok, 19), 0);
	assert_int_equal(idx_remove(&ic, tok, 40), 0);
	assert_int_equal(idx_remove(&ic, tok, 15), MDB_NOTFOUND);
	assert_int_equal(idx_remove(&ic, tok, 25), MDB_NOTFOUND);
	assert_int_equal(idx_remove(&ic, tok, 99), MDB_NOTFOUND);
	assert_int_equal(idx_remove(&ic, one, 11), MDB_NOTFOUND);
	assert_int_equal(idx_lookup(txn, &f->t, 1, tok, &got), LWC_OK);
	assert_int_equal(got.n, 9);
	assert_memory_equal(got.v, left, sizeof(left));
	assert_int_equal(count(txn, f->t.cols[1]), 3);     /* 11-14, 16-18, 30-31 */
	/* a span of two rows is a duplicate of the column */
	assert_int_equal(idx_has_duplicates(txn, &f->t, 1, NULL, &dup), 0);
	assert_int_equal(dup, 1);
	/* every row of the token: the whole list in one delete */
	for (size_t i = 0; i < 9; i++) {
		tr[i].tok = tok;
		tr[i].row = left[i];
	}
	assert_int_equal(idx_remove_group(&ic, tr, 9), 0);
	assert_int_equal(count(txn, f->t.cols[1]), 0);
	/* a long run of ids: spans of at most IDX_SPAN_ROWS rows */
	for (uint64_t i = 0; i < BIG; i++)
		rows[i] = 1000 + i;
	assert_int_equal(idx_add_rows(&ic, one, rows, BIG, MDB_APPENDDUP, scratch), 0);
	assert_int_equal(count(txn, f->t.cols[1]), 2);
	assert_int_equal(rows_in(txn, f->t.cols[1]), BIG);
	assert_int_equal(idx_holds(txn, f->t.cols[1], one, CRY_TOKEN_BYTES,
				   1000 + IDX_SPAN_ROWS), 1);
	assert_int_equal(idx_remove(&ic, one, 1000 + IDX_SPAN_ROWS - 1), 0);
	got.n = 0;
	assert_int_equal(idx_lookup(txn, &f->t, 1, one, &got), LWC_OK);
	assert_int_equal(got.n, BIG - 1);
	for (size_t i = 1; i < got.n; i++)
		assert_true(got.v[i - 1] < got.v[i]);
	assert_int_equal(idx_has_duplicates(txn, &f->t, 1, NULL, &dup), 0);
	assert_int_equal(dup, 1);
	idx_close(&ic);
	mdb_txn_abort(txn);
	locset_free(&got);
	free(rows);
	free(scratch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_placement, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spans, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_statements, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
