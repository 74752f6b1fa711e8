/*
 * index.c - a column's index: its B+ tree and the table's run of recent
 * entries.
 *
 * An index entry is (token, row id); column c of table t keeps its entries
 * in the tree t<ID>.c<C>, the token the key, the row ids its duplicates.
 * Tokens are keyed hashes, so the entries of one statement land on random
 * pages of a large tree: 5,000 new rows of a unique column dirty about
 * 4,000 of the 12,500 leaf pages of a million-entry tree, and the commit
 * writes every one of them (most of a 5,000-row INSERT's commit at N = 1M,
 * docs/benchmarks.md).
 *
 * The table's run (t<ID>.x: keys [column][token], duplicates row ids)
 * takes the entries of small statements instead.  It stays small, so a
 * statement's entries share its few pages; when it holds more than its
 * limit, the commit that pushed it over moves it into the trees in key
 * order, each tree's pages written once for the entries of many
 * statements.  For a tree of N entries, E a page, and statements of s
 * entries, a run of at most R dirties about R/E pages a statement and
 * the move (N/E) every R/s statements: R = sqrt(N s) is the least total,
 * 2 sqrt(N s)/E against s for random puts into the tree (s << N/E).  The
 * limit, 128 sqrt(rows x tokens per row) = sqrt(16384 entries), is that
 * for statements of a few thousand rows.
 *
 * Every entry is in exactly one of the two.  Lookups read both.  A
 * statement with entries for a column of at least a sixteenth of its tree
 * dirties most of the tree's pages anyway, a small tree is cheap, and
 * entries that would take the run past its limit would be moved again at
 * once: those write the tree directly, after the run has moved in if it
 * holds anything, so that what they remove is where the old code looked
 * for it.
 *
 * A value is a span of consecutive row ids (pred.h): a statement's rows
 * of one token go in as few values as their ids allow, one for a token
 * every row of a bulk INSERT carries.  Removing a row from a span puts
 * back what is left of it on either side.
 *
 * Everything here runs inside the caller's LMDB transaction: the run, its
 * moves and the trees commit (or abort) together.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"

#define IDX_TREE_MIN_DEFAULT  65536u
#define IDX_RUN_MAX_FLOOR     8192u

static uint64_t cfg_tree_min = IDX_TREE_MIN_DEFAULT;
static uint64_t cfg_run_max;

void idx_configure(uint64_t tree_min, uint64_t run_max)
{
	cfg_tree_min = tree_min;
	cfg_run_max = run_max;
}

static uint64_t isqrt64(uint64_t x)
{
	uint64_t r = 0;

	for (uint64_t bit = (uint64_t)1 << 62; bit; bit >>= 2) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
	}
	return r;
}

static uint64_t run_limit(const struct px_table *t)
{
	uint64_t lim;

	if (cfg_run_max)
		return cfg_run_max;
	lim = 128 * isqrt64(t->nrows * (uint64_t)t->ntok);
	return lim < IDX_RUN_MAX_FLOOR ? IDX_RUN_MAX_FLOOR : lim;
}

void idx_run_key(uint8_t key[IDX_RUN_KEY], uint32_t col, const uint8_t *tok)
{
	key[0] = (uint8_t)col;
	memcpy(key + 1, tok, CRY_TOKEN_BYTES);
}

/* The entries (rows, not values: a span is many) of column col's index:
 * one for each of the column's tokens in each row of the table. */
static uint64_t col_entries(const struct px_table *t, uint32_t col)
{
	uint64_t per_row = 0;

	for (uint32_t c = 0; c < t->ntok; c++)
		per_row += t->tcol[c] == col;
	return t->nrows * per_row;
}

int idx_open(struct idx_cur *ic, MDB_txn *txn, struct px_table *t, uint32_t col, size_t m)
{
	MDB_stat run;
	uint64_t tree = col_entries(t, col);
	int rc;

	memset(ic, 0, sizeof(*ic));
	ic->txn = txn;
	ic->t = t;
	ic->col = col;
	if ((rc = mdb_stat(txn, t->run, &run)) != 0)
		return rc;
	/* not the run when the statement (about m entries for each of a row's
	 * tokens) would fill it past its limit, or is more than a quarter of
	 * it: its entries would be moved again at once, or the run would hold
	 * too few statements for a move to pay (a 10M-row load's 50,000-row
	 * statements, 1.1M entries each against a limit of 1.2-1.8M, were 24 %
	 * slower through the run: each put twice, and every other commit
	 * dirtying twice the pages) */
	ic->run = cfg_tree_min > 0 && tree >= cfg_tree_min &&
		  (uint64_t)m * 16 < tree &&
		  (uint64_t)m * t->ntok * 4 <= run_limit(t) &&
		  run.ms_entries + (uint64_t)m * t->ntok <= run_limit(t);
	if (!ic->run && run.ms_entries > 0 && (rc = idx_flush(txn, t)) != 0)
		return rc;
	if ((rc = mdb_cursor_open(txn, t->cols[col], &ic->tree)) != 0)
		return rc;
	if (ic->run && (rc = mdb_cursor_open(txn, t->run, &ic->rcur)) != 0) {
		idx_close(ic);
		return rc;
	}
	return 0;
}

/* A column's tree cursor and the run's, closed (either may be NULL). */
static void cursors_close(MDB_cursor **tree, MDB_cursor **run)
{
	if (*tree)
		mdb_cursor_close(*tree);
	if (*run)
		mdb_cursor_close(*run);
	*tree = *run = NULL;
}

void idx_close(struct idx_cur *ic)
{
	cursors_close(&ic->tree, &ic->rcur);
}

/* Puts the value v (a span) under tok; flags as for idx_add. */
static int idx_add_span(struct idx_cur *ic, const uint8_t *tok, const uint8_t v[8],
			unsigned flags)
{
	MDB_val k = { CRY_TOKEN_BYTES, (void *)(uintptr_t)tok }, d = { 8, (void *)(uintptr_t)v };
	MDB_cursor *cur = ic->tree;
	int rc;

	if (ic->run) {
		idx_run_key(ic->key, ic->col, tok);
		k.mv_size = IDX_RUN_KEY;
		k.mv_data = ic->key;
		cur = ic->rcur;
		flags &= MDB_APPENDDUP;
	}
	rc = mdb_cursor_put(cur, &k, &d, flags);
	if (rc == MDB_KEYEXIST && flags != 0)
		rc = mdb_cursor_put(cur, &k, &d, 0);
	return rc;
}

int idx_add(struct idx_cur *ic, const uint8_t *tok, uint64_t row, unsigned flags)
{
	uint8_t v[8];

	idx_span_put(v, row, 1);
	return idx_add_span(ic, tok, v, flags);
}

int idx_add_rows(struct idx_cur *ic, const uint8_t *tok, const uint64_t *rows, size_t n,
		 unsigned flags, uint8_t *scratch)
{
	MDB_val k = { CRY_TOKEN_BYTES, (void *)(uintptr_t)tok }, d[2];
	MDB_cursor *cur = ic->tree;
	size_t done = 0, m = 0;
	int rc;

	if (n < 2)
		return n ? idx_add(ic, tok, rows[0], flags) : 0;
	/* consecutive ids as one span */
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && rows[j] == rows[j - 1] + 1 && j - i < IDX_SPAN_ROWS)
			j++;
		idx_span_put(scratch + m++ * 8, rows[i], (uint32_t)(j - i));
		i = j;
	}
	if (m == 1)
		return idx_add_span(ic, tok, scratch, flags);
	n = m;
	if (ic->run) {
		idx_run_key(ic->key, ic->col, tok);
		k.mv_size = IDX_RUN_KEY;
		k.mv_data = ic->key;
		cur = ic->rcur;
		flags &= MDB_APPENDDUP;
	}
	d[0].mv_size = 8;
	d[0].mv_data = scratch;
	d[1].mv_size = n;
	rc = mdb_cursor_put(cur, &k, d, flags | MDB_MULTIPLE);
	if (rc == MDB_KEYEXIST && flags != 0) {
		/* LMDB refused the hint at element d[1].mv_size: the rest plainly */
		done = d[1].mv_size;
		d[0].mv_data = scratch + done * 8;
		d[1].mv_size = n - done;
		rc = mdb_cursor_put(cur, &k, d, MDB_MULTIPLE);
	}
	return rc;
}

/* Positions cur on the span of key that holds row, its value copied to
 * v: 0, MDB_NOTFOUND when no span of key holds row. */
static int span_find(MDB_cursor *cur, const void *key, size_t klen, uint64_t row, uint8_t v[8])
{
	MDB_val k = { klen, (void *)(uintptr_t)key }, d = { 8, v };
	int rc;

	if (row >= IDX_ROW_LIMIT - 1)
		return MDB_NOTFOUND;
	/* the first span that starts after row, then the one before it; or
	 * the key's last span when none starts after row */
	idx_span_put(v, row + 1, 1);
	rc = mdb_cursor_get(cur, &k, &d, MDB_GET_BOTH_RANGE);
	if (rc == 0) {
		rc = mdb_cursor_get(cur, &k, &d, MDB_PREV_DUP);
	} else if (rc == MDB_NOTFOUND) {
		k.mv_size = klen;
		k.mv_data = (void *)(uintptr_t)key;
		if ((rc = mdb_cursor_get(cur, &k, &d, MDB_SET_KEY)) == 0)
			rc = mdb_cursor_get(cur, &k, &d, MDB_LAST_DUP);
	}
	if (rc != 0)
		return rc;
	if (d.mv_size != 8)
		return MDB_CORRUPTED;
	if (row < idx_span_first(d.mv_data) ||
	    row - idx_span_first(d.mv_data) >= idx_span_rows(d.mv_data))
		return MDB_NOTFOUND;
	memcpy(v, d.mv_data, 8);
	return 0;
}

/* (key, row) removed from cur's database: the span that holds it deleted,
 * what is left of it on either side put back.  0, MDB_NOTFOUND when no
 * span holds row. */
static int span_remove(MDB_cursor *cur, const void *key, size_t klen, uint64_t row)
{
	MDB_val k = { klen, (void *)(uintptr_t)key }, d;
	uint8_t v[8], part[8];
	uint64_t first;
	uint32_t n;
	int rc;

	if ((rc = span_find(cur, key, klen, row, v)) != 0)
		return rc;
	first = idx_span_first(v);
	n = idx_span_rows(v);
	if ((rc = mdb_cursor_del(cur, 0)) != 0)
		return rc;
	d.mv_size = 8;
	d.mv_data = part;
	if (row > first) {
		idx_span_put(part, first, (uint32_t)(row - first));
		if ((rc = mdb_cursor_put(cur, &k, &d, 0)) != 0)
			return rc;
	}
	if (row + 1 < first + n) {
		idx_span_put(part, row + 1, (uint32_t)(first + n - row - 1));
		rc = mdb_cursor_put(cur, &k, &d, 0);
	}
	return rc;
}

/* (tok, row) removed from the run: 0, MDB_NOTFOUND when it is not there. */
static int run_remove(struct idx_cur *ic, const uint8_t *tok, uint64_t row)
{
	idx_run_key(ic->key, ic->col, tok);
	return span_remove(ic->rcur, ic->key, IDX_RUN_KEY, row);
}

/* (tok, row) removed from the tree: 0, MDB_NOTFOUND when it is not there. */
static int tree_remove(struct idx_cur *ic, const uint8_t *tok, uint64_t row)
{
	return span_remove(ic->tree, tok, CRY_TOKEN_BYTES, row);
}

int idx_holds(MDB_txn *txn, MDB_dbi dbi, const void *key, size_t klen, uint64_t row)
{
	MDB_cursor *cur;
	uint8_t v[8];
	int rc;

	if (mdb_cursor_open(txn, dbi, &cur) != 0)
		return -1;
	rc = span_find(cur, key, klen, row, v);
	mdb_cursor_close(cur);
	return rc == 0 ? 1 : rc == MDB_NOTFOUND ? 0 : -1;
}

/* The rows of the key cur is on (its spans' counts summed); cur ends
 * on the key's last value. */
static int key_rows(MDB_cursor *cur, uint64_t *rows)
{
	MDB_val k, d;
	int rc;

	*rows = 0;
	/* GET_MULTIPLE leaves d as it is when the key has one value */
	if ((rc = mdb_cursor_get(cur, &k, &d, MDB_GET_CURRENT)) == 0)
		rc = mdb_cursor_get(cur, &k, &d, MDB_GET_MULTIPLE);
	while (rc == 0) {
		for (size_t i = 0; i + 8 <= d.mv_size; i += 8)
			*rows += idx_span_rows((const uint8_t *)d.mv_data + i);
		rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT_MULTIPLE);
	}
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int idx_remove(struct idx_cur *ic, const uint8_t *tok, uint64_t row)
{
	int rc;

	if (ic->run && (rc = run_remove(ic, tok, row)) != MDB_NOTFOUND)
		return rc;
	return tree_remove(ic, tok, row);
}

int idx_remove_group(struct idx_cur *ic, const struct tokrow *tr, size_t n)
{
	MDB_val k = { CRY_TOKEN_BYTES, (void *)(uintptr_t)tr[0].tok }, d;
	uint64_t rows = 0;
	size_t vals = 0;
	int rc;

	if (ic->run) {
		MDB_val rk = { IDX_RUN_KEY, ic->key };

		idx_run_key(ic->key, ic->col, tr[0].tok);
		rc = mdb_cursor_get(ic->rcur, &rk, &d, MDB_SET);
		if (rc == 0) {              /* some in the run: one by one */
			for (size_t i = 0; i < n && rc == 0; i++)
				rc = idx_remove(ic, tr[i].tok, tr[i].row);
			return rc;
		}
		if (rc != MDB_NOTFOUND)
			return rc;
	}
	/* the whole list (rows counted only when it has no more values than
	 * rows to remove: a span holds at least one) */
	if ((rc = mdb_cursor_get(ic->tree, &k, &d, MDB_SET_KEY)) != 0 ||
	    (rc = mdb_cursor_count(ic->tree, &vals)) != 0 ||
	    (vals <= n && (rc = key_rows(ic->tree, &rows)) != 0))
		return rc;
	if (vals <= n && rows == n) {
		k.mv_size = CRY_TOKEN_BYTES;
		k.mv_data = (void *)(uintptr_t)tr[0].tok;
		if ((rc = mdb_cursor_get(ic->tree, &k, &d, MDB_SET_KEY)) != 0)
			return rc;
		return mdb_cursor_del(ic->tree, MDB_NODUPDATA);
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = tree_remove(ic, tr[i].tok, tr[i].row);
	return rc;
}

struct run_ent {
	uint8_t key[IDX_RUN_KEY];
	uint64_t span;           /* the value as it is (pred.h) */
};

int idx_flush(MDB_txn *txn, struct px_table *t)
{
	MDB_stat ms;
	MDB_cursor *cur = NULL;
	MDB_val k, d;
	struct run_ent *e = NULL;
	size_t n = 0;
	int rc;

	if ((rc = mdb_stat(txn, t->run, &ms)) != 0 || ms.ms_entries == 0)
		return rc;
	if ((e = malloc(ms.ms_entries * sizeof(*e))) == NULL)
		return ENOMEM;
	/* copied out first: what LMDB returns is only valid until a write */
	if ((rc = mdb_cursor_open(txn, t->run, &cur)) != 0)
		goto out;
	while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
		if (k.mv_size != IDX_RUN_KEY || d.mv_size != 8 || n == ms.ms_entries ||
		    ((const uint8_t *)k.mv_data)[0] >= t->ncols) {
			rc = MDB_CORRUPTED;
			break;
		}
		memcpy(e[n].key, k.mv_data, IDX_RUN_KEY);
		e[n].span = cry_get_be64(d.mv_data);
		n++;
	}
	mdb_cursor_close(cur);
	cur = NULL;
	if (rc != MDB_NOTFOUND)
		goto out;
	rc = 0;
	/* key order: column by column, each tree's entries in token order */
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint8_t v[8];

		if (i == 0 || e[i].key[0] != e[i - 1].key[0]) {
			if (cur)
				mdb_cursor_close(cur);
			cur = NULL;
			if ((rc = mdb_cursor_open(txn, t->cols[e[i].key[0]], &cur)) != 0)
				break;
		}
		k.mv_size = CRY_TOKEN_BYTES;
		k.mv_data = e[i].key + 1;
		d.mv_size = 8;
		d.mv_data = v;
		cry_put_be64(v, e[i].span);
		rc = mdb_cursor_put(cur, &k, &d, 0);
	}
	if (cur)
		mdb_cursor_close(cur);
	if (rc == 0)
		rc = mdb_drop(txn, t->run, 0);
out:
	free(e);
	return rc;
}

int idx_settle(MDB_txn *txn, struct px_table *t)
{
	MDB_stat ms;
	int rc;

	if ((rc = mdb_stat(txn, t->run, &ms)) != 0)
		return rc;
	return ms.ms_entries > run_limit(t) ? idx_flush(txn, t) : 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

int idx_probe_open(struct idx_probe *p, MDB_txn *txn, const struct px_table *t, uint32_t col)
{
	int rc;

	p->tree = p->run = NULL;
	p->col = col;
	if ((rc = mdb_cursor_open(txn, t->cols[col], &p->tree)) != 0 ||
	    (rc = mdb_cursor_open(txn, t->run, &p->run)) != 0) {
		idx_probe_close(p);
		return rc;
	}
	return 0;
}

int idx_probe_has(struct idx_probe *p, const uint8_t tok[CRY_TOKEN_BYTES], int *found)
{
	uint8_t key[IDX_RUN_KEY];
	MDB_val k = { CRY_TOKEN_BYTES, (void *)(uintptr_t)tok }, d;
	int rc;

	*found = 0;
	if ((rc = mdb_cursor_get(p->tree, &k, &d, MDB_SET)) == 0) {
		*found = 1;
		return 0;
	}
	if (rc != MDB_NOTFOUND)
		return rc;
	idx_run_key(key, p->col, tok);
	k.mv_size = IDX_RUN_KEY;
	k.mv_data = key;
	if ((rc = mdb_cursor_get(p->run, &k, &d, MDB_SET)) == 0) {
		*found = 1;
		return 0;
	}
	return rc == MDB_NOTFOUND ? 0 : rc;
}

void idx_probe_close(struct idx_probe *p)
{
	cursors_close(&p->tree, &p->run);
}

int idx_lookup(MDB_txn *txn, const struct px_table *t, uint32_t col,
	       const uint8_t token[CRY_TOKEN_BYTES], struct locset *out)
{
	uint8_t key[IDX_RUN_KEY];
	size_t n0 = out->n, n1;
	int rc;

	if ((rc = pred_lookup(txn, t->cols[col], token, CRY_TOKEN_BYTES, out)) != LWC_OK)
		return rc;
	n1 = out->n;
	idx_run_key(key, col, token);
	if ((rc = pred_lookup(txn, t->run, key, IDX_RUN_KEY, out)) != LWC_OK)
		return rc;
	if (n1 > n0 && out->n > n1)
		qsort(out->v + n0, out->n - n0, sizeof(*out->v), cmp_u64);
	return LWC_OK;
}

int idx_has_duplicates(MDB_txn *txn, const struct px_table *t, uint32_t col,
		       const uint8_t *null, int *dup)
{
	uint8_t key[IDX_RUN_KEY] = { (uint8_t)col };
	MDB_cursor *cur;
	MDB_val k, d;
	size_t cnt;
	int rc;

	*dup = 0;
	if ((rc = mdb_cursor_open(txn, t->cols[col], &cur)) != 0)
		return rc;
	while (!*dup && (rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT_NODUP)) == 0) {
		if (null && k.mv_size == CRY_TOKEN_BYTES &&
		    memcmp(k.mv_data, null, CRY_TOKEN_BYTES) == 0)
			continue;
		if ((rc = mdb_cursor_count(cur, &cnt)) != 0)
			break;
		*dup = cnt > 1 || idx_span_rows(d.mv_data) > 1;
	}
	mdb_cursor_close(cur);
	if (*dup)
		return 0;
	if (rc != MDB_NOTFOUND)
		return rc;
	/* the run's keys of the column: twice there, or also in the tree */
	if ((rc = mdb_cursor_open(txn, t->run, &cur)) != 0)
		return rc;
	k.mv_size = 1;
	k.mv_data = key;
	rc = mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE);
	while (!*dup && rc == 0 && k.mv_size == IDX_RUN_KEY &&
	       ((const uint8_t *)k.mv_data)[0] == col) {
		const uint8_t *tok = (const uint8_t *)k.mv_data + 1;
		MDB_val tk = { CRY_TOKEN_BYTES, (void *)(uintptr_t)tok }, td;

		if (!(null && memcmp(tok, null, CRY_TOKEN_BYTES) == 0)) {
			if ((rc = mdb_cursor_count(cur, &cnt)) != 0)
				break;
			if (cnt > 1 || idx_span_rows(d.mv_data) > 1)
				*dup = 1;
			else if ((rc = mdb_get(txn, t->cols[col], &tk, &td)) == 0)
				*dup = 1;
			else if (rc != MDB_NOTFOUND)
				break;
		}
		rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT_NODUP);
	}
	mdb_cursor_close(cur);
	return *dup || rc == 0 || rc == MDB_NOTFOUND ? 0 : rc;
}
