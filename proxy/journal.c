/*
 * journal.c - see journal.h.
 *
 * A journal record is a run of entries, each a kind byte then its fields:
 *   'B' block id(8) version(8) tag(16) bits(8 x words)
 *   'P' row(8) location(8)          'p' row(8)           (pos, and its delete)
 *   'S' row(8) table(4) record(S)   's' row(8)           (stash, and its delete)
 * all integers big-endian, as in the databases they go to.  A record's key
 * is its LMDB transaction's id (8 bytes, big-endian), which grows across
 * runs; records are applied in key order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "locsort.h"
#include "log.h"
#include "rowmap.h"

/* ---- the journal ------------------------------------------------------------------- */

struct px_journal {
	uint8_t *buf;            /* the staged record                     */
	size_t len, cap;
	struct rowmap spos, sstash;      /* staged, for lookups           */
	struct rowmap opos, ostash;      /* committed, not yet folded     */
	uint64_t bytes;          /* in the journal now                    */
	uint64_t folds;
	uint64_t due_folds, due_us;      /* jr_fold_if_due's, and their time */
	int broken;              /* ENOMEM while staging: commit refuses  */
	int direct;              /* applied in place at commit (jr_begin) */
};

int jr_init(struct px_state *st)
{
	if ((st->jr = calloc(1, sizeof(*st->jr))) == NULL)
		return LWC_ERR_NOMEM;
	if (st->jr_fold_bytes == 0)
		st->jr_fold_bytes = PX_JOURNAL_FOLD_DEFAULT;
	return LWC_OK;
}

void jr_free(struct px_state *st)
{
	struct px_journal *j = st->jr;

	if (j == NULL)
		return;
	free(j->buf);
	rowmap_free(&j->spos);
	rowmap_free(&j->sstash);
	rowmap_free(&j->opos);
	rowmap_free(&j->ostash);
	free(j);
	st->jr = NULL;
}

int jr_begin(struct px_state *st, MDB_txn *txn, size_t entries)
{
	st->jr->direct = entries > PX_JOURNAL_DIRECT_MIN;
	/* the journal's older changes first, so this statement's come after */
	return st->jr->direct ? jr_fold(st, txn) : 0;
}

/* n more bytes of the staged record; NULL (and the record broken) when out
 * of memory. */
static uint8_t *stage(struct px_journal *j, size_t n)
{
	uint8_t *p;

	if (j->len + n > j->cap) {
		size_t cap = j->cap ? j->cap : 4096;

		while (cap < j->len + n)
			cap *= 2;
		if ((p = realloc(j->buf, cap)) == NULL) {
			j->broken = 1;
			return NULL;
		}
		j->buf = p;
		j->cap = cap;
	}
	p = j->buf + j->len;
	j->len += n;
	return p;
}

/* The staged lookup entry of row in m (none in direct mode: nothing reads
 * a statement's own changes before its commit, which clears them). */
static int stage_lookup(struct px_journal *j, struct rowmap *m, uint64_t row,
			struct rowent **e)
{
	*e = NULL;
	if (j->direct)
		return 0;
	if ((*e = rowmap_get(m, row)) == NULL) {
		j->broken = 1;
		return ENOMEM;
	}
	return 0;
}

int jr_block(struct px_state *st, uint64_t id, uint64_t version,
	     const uint8_t tag[CRY_TAG_BYTES], const uint64_t *bits)
{
	uint8_t *p = stage(st->jr, 1 + 16 + CRY_TAG_BYTES + 8 * st->g.words);

	if (p == NULL)
		return ENOMEM;
	p[0] = 'B';
	cry_put_be64(p + 1, id);
	cry_put_be64(p + 9, version);
	memcpy(p + 17, tag, CRY_TAG_BYTES);
	for (size_t w = 0; w < st->g.words; w++)
		cry_put_be64(p + 17 + CRY_TAG_BYTES + 8 * w, bits[w]);
	return 0;
}

static int stage_pos(struct px_state *st, uint64_t row, uint64_t loc, int del)
{
	struct px_journal *j = st->jr;
	struct rowent *e;
	uint8_t *p;

	if (stage_lookup(j, &j->spos, row, &e) != 0 || (p = stage(j, del ? 9 : 17)) == NULL)
		return ENOMEM;
	p[0] = del ? 'p' : 'P';
	cry_put_be64(p + 1, row);
	if (!del)
		cry_put_be64(p + 9, loc);
	if (e) {
		e->loc = loc;
		e->del = (uint8_t)del;
	}
	return 0;
}

int jr_pos(struct px_state *st, uint64_t row, uint64_t loc)
{
	return stage_pos(st, row, loc, 0);
}

int jr_pos_del(struct px_state *st, uint64_t row)
{
	return stage_pos(st, row, 0, 1);
}

int jr_stash_put(struct px_state *st, uint64_t row, uint32_t table, const uint8_t *rec)
{
	struct px_journal *j = st->jr;
	struct rowent *e;
	uint8_t *p;

	if (stage_lookup(j, &j->sstash, row, &e) != 0 || (p = stage(j, 13 + st->g.S)) == NULL)
		return ENOMEM;
	p[0] = 'S';
	cry_put_be64(p + 1, row);
	cry_put_be32(p + 9, table);
	memcpy(p + 13, rec, st->g.S);
	if (e) {
		if (e->rec == NULL && (e->rec = malloc(4 + st->g.S)) == NULL) {
			j->broken = 1;
			return ENOMEM;
		}
		memcpy(e->rec, p + 9, 4 + st->g.S);
		e->del = 0;
	}
	return 0;
}

int jr_stash_del(struct px_state *st, uint64_t row)
{
	struct px_journal *j = st->jr;
	struct rowent *e;
	uint8_t *p;

	if (stage_lookup(j, &j->sstash, row, &e) != 0 || (p = stage(j, 9)) == NULL)
		return ENOMEM;
	p[0] = 's';
	cry_put_be64(p + 1, row);
	if (e) {
		free(e->rec);
		e->rec = NULL;
		e->del = 1;
	}
	return 0;
}

void jr_abort(struct px_state *st)
{
	struct px_journal *j = st->jr;

	j->len = 0;
	j->broken = 0;
	j->direct = 0;
	rowmap_clear(&j->spos);
	rowmap_clear(&j->sstash);
}

static int apply_record(struct px_state *st, MDB_txn *txn, const uint8_t *p, size_t n);

/* The size of the entry that starts with kind; 0 for an unknown kind. */
static size_t entry_size(uint8_t kind, size_t S, size_t words)
{
	switch (kind) {
	case 'B': return 17 + CRY_TAG_BYTES + 8 * words;
	case 'P': return 17;
	case 'p':
	case 's': return 9;
	case 'S': return 13 + S;
	default: return 0;
	}
}

/*
 * The largest journal value that LMDB keeps on a B-tree page.  A larger
 * one goes to overflow pages, a run of free pages side by side, and to find
 * such a run LMDB merges the free list's records one after the other into
 * one sorted list (mdb_page_alloc, mdb_midl_xmerge) until the run turns up
 * or the list ends: a cost in the free list's size at every commit that
 * writes one.  After a 10M load the proxy's free list held 458,000 pages,
 * and LMDB's merging took 83 % of the proxy's CPU in a 1,000-row SELECT
 * (docs/benchmarks.md, "2 December 2026, later").  A leaf node moves to
 * overflow pages above about half a page less its header and key; this
 * keeps 64 bytes below that.
 */
static size_t value_max(struct px_state *st)
{
	MDB_stat ms;
	size_t psize = mdb_env_stat(st->env, &ms) == 0 ? ms.ms_psize : 4096;

	return psize / 2 - 64;
}

/* A record as values of whole entries, each at most value_max bytes (an
 * entry larger than that alone), under the keys (transaction id, value's
 * number), 16 bytes big-endian: after every key of an earlier transaction,
 * the 8-byte keys of states journaled before the split included. */
static int put_record(struct px_state *st, MDB_txn *txn, const uint8_t *p, size_t n)
{
	size_t max = value_max(st);
	uint64_t id = (uint64_t)mdb_txn_id(txn), no = 0;
	uint8_t key[16];
	int rc = 0;

	cry_put_be64(key, id);
	while (n > 0 && rc == 0) {
		size_t len = 0, sz;
		MDB_val k = { sizeof(key), key }, d;

		while (len < n) {
			if ((sz = entry_size(p[len], st->g.S, st->g.words)) == 0 || sz > n - len)
				return MDB_CORRUPTED;
			if (len > 0 && len + sz > max)
				break;
			len += sz;
		}
		cry_put_be64(key + 8, no++);
		d.mv_size = len;
		d.mv_data = (void *)(uintptr_t)p;
		rc = mdb_put(txn, st->journal_db, &k, &d, MDB_APPEND);
		p += len;
		n -= len;
	}
	return rc;
}

int jr_commit(struct px_state *st, MDB_txn *txn)
{
	struct px_journal *j = st->jr;
	size_t len = j->len;
	int direct = j->direct, rc = 0;

	/* room in the overlay first, so that nothing can fail after the commit */
	if (j->broken || rowmap_reserve(&j->opos, j->spos.n) != 0 ||
	    rowmap_reserve(&j->ostash, j->sstash.n) != 0)
		rc = ENOMEM;
	else if (len > 0 && direct)   /* folded in this transaction: in place */
		rc = apply_record(st, txn, j->buf, len);
	else if (len > 0)      /* keyed by the transaction's id: increasing across runs */
		rc = put_record(st, txn, j->buf, len);
	if (rc != 0)
		mdb_txn_abort(txn);
	else
		rc = mdb_txn_commit(txn);
	if (rc == 0 && direct) {
		jr_folded(st);
	} else if (rc == 0) {
		j->bytes += len;
		/* committed: what was staged is now what readers see */
		rowmap_merge(&j->opos, &j->spos);
		rowmap_merge(&j->ostash, &j->sstash);
	}
	jr_abort(st);
	return rc;
}

/* ---- folding ----------------------------------------------------------------------- */

int jr_entries(const uint8_t *p, size_t n, size_t S, size_t words,
	       int (*fn)(void *arg, int kind, const uint8_t *entry), void *arg)
{
	while (n > 0) {
		size_t sz = entry_size(p[0], S, words);
		int rc;

		if (sz == 0 || n < sz)
			return MDB_CORRUPTED;
		if ((rc = fn(arg, p[0], p)) != 0)
			return rc;
		p += sz;
		n -= sz;
	}
	return 0;
}

static int del_ok(int rc)
{
	return rc == MDB_NOTFOUND ? 0 : rc;
}

struct apply {
	struct px_state *st;
	MDB_txn *txn;
};

/* One entry to its database. */
static int apply_entry(void *arg, int kind, const uint8_t *p)
{
	struct apply *a = arg;
	struct px_state *st = a->st;
	uint64_t bits[PX_MAX_SLOTS / 64];
	uint8_t key[8];
	MDB_val k = { 8, key }, d;

	memcpy(key, p + 1, 8);
	switch (kind) {
	case 'B':
		for (size_t w = 0; w < st->g.words; w++)
			bits[w] = cry_get_be64(p + 17 + CRY_TAG_BYTES + 8 * w);
		return px_block_put(st, a->txn, cry_get_be64(p + 1), cry_get_be64(p + 9), p + 17,
				    bits);
	case 'P':
		return px_pos_put(st, a->txn, cry_get_be64(p + 1), cry_get_be64(p + 9));
	case 'p':
		return del_ok(mdb_del(a->txn, st->pos_db, &k, NULL));
	case 's':
		return del_ok(mdb_del(a->txn, st->stash_db, &k, NULL));
	default:               /* 'S' */
		d.mv_size = 4 + st->g.S;
		d.mv_data = (void *)(uintptr_t)(p + 9);
		return mdb_put(a->txn, st->stash_db, &k, &d, 0);
	}
}

/* One record's entries to their databases. */
static int apply_record(struct px_state *st, MDB_txn *txn, const uint8_t *p, size_t n)
{
	struct apply a = { st, txn };

	return jr_entries(p, n, st->g.S, st->g.words, apply_entry, &a);
}

/* Only a record's block entries (the rows' come from the overlay). */
static int apply_block_entry(void *arg, int kind, const uint8_t *p)
{
	return kind == 'B' ? apply_entry(arg, kind, p) : 0;
}

/* The used entries of m in row order, as (row id, index in m->e) pairs
 * (malloc'ed, m->n of them; row ids are dense, so the radix sort of
 * locsort.h does it); NULL when out of memory. */
static struct locrow *in_row_order(const struct rowmap *m)
{
	struct locrow *v = malloc(m->n * sizeof(*v));     /* m->n > 0 (fold_rows) */
	size_t n = 0;

	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < m->cap && n < m->n; i++)
		if (m->e[i].used) {
			v[n].loc = m->e[i].row;
			v[n++].row = i;
		}
	locrow_sort(v, n);
	return v;
}

/* One overlay's last word on each of its rows, written to dbi in key
 * order through one cursor: LMDB looks for the next key on the page the
 * cursor is on before it descends from the root.  A deleted row's key is
 * removed if the database has it (a row that entered and left the stash
 * between two folds never reached it).  rec_len 0: the values are the
 * entries' locations (pos), else their records (stash). */
static int fold_rows(MDB_txn *txn, MDB_dbi dbi, const struct rowmap *m, size_t rec_len)
{
	struct locrow *v;
	MDB_cursor *cur;
	size_t n = m->n;
	int rc;

	if (n == 0)
		return 0;
	if ((v = in_row_order(m)) == NULL)
		return ENOMEM;
	if ((rc = mdb_cursor_open(txn, dbi, &cur)) != 0) {
		free(v);
		return rc;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct rowent *e = &m->e[v[i].row];
		uint8_t key[8], val[8];
		MDB_val k = { 8, key }, d = { 8, val };

		cry_put_be64(key, e->row);
		if (e->del) {
			rc = mdb_cursor_get(cur, &k, &d, MDB_SET);
			rc = rc == 0 ? mdb_cursor_del(cur, 0) : del_ok(rc);
			continue;
		}
		if (rec_len == 0) {
			cry_put_be64(val, e->loc);
		} else if (e->rec == NULL) {
			rc = MDB_CORRUPTED;            /* committed without its record */
			break;
		} else {
			d.mv_size = rec_len;
			d.mv_data = e->rec;
		}
		rc = mdb_cursor_put(cur, &k, &d, 0);
	}
	mdb_cursor_close(cur);
	free(v);
	return rc;
}

/*
 * Two ways to the same databases.  Replay: every entry of every record,
 * oldest first, as the last run left them (the state's open, when the
 * overlay is empty).  While the proxy runs, the overlay holds the last
 * word on every row the journal names (each commit merges its staged
 * changes into it, and only a fold empties it), so a fold applies the
 * records' block entries and then each row once, in key order: a row moved
 * into the stash and out again between two folds costs one position put
 * and one lookup, not two puts, a stash record and its delete (measured in
 * docs/benchmarks.md, "29 November 2026, night: a fold writes each row
 * once").  An empty overlay with records in the journal (the open; or
 * statements that moved no row) replays them, which is right in both cases.
 */
int jr_fold(struct px_state *st, MDB_txn *txn)
{
	const struct px_journal *j = st->jr;
	int overlay = j->opos.n > 0 || j->ostash.n > 0;
	struct apply a = { st, txn };
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = mdb_cursor_open(txn, st->journal_db, &cur)) != 0)
		return rc;
	while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
		if (k.mv_size != 8 && k.mv_size != 16)
			rc = MDB_CORRUPTED;
		else if (overlay)
			rc = jr_entries(d.mv_data, d.mv_size, st->g.S, st->g.words,
					apply_block_entry, &a);
		else
			rc = apply_record(st, txn, d.mv_data, d.mv_size);
		if (rc != 0)
			break;
	}
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND)
		return rc;
	if (overlay && ((rc = fold_rows(txn, st->pos_db, &j->opos, 0)) != 0 ||
			(rc = fold_rows(txn, st->stash_db, &j->ostash, 4 + st->g.S)) != 0))
		return rc;
	return mdb_drop(txn, st->journal_db, 0);
}

void jr_folded(struct px_state *st)
{
	struct px_journal *j = st->jr;

	rowmap_clear(&j->opos);
	rowmap_clear(&j->ostash);
	j->bytes = 0;
	j->folds++;
}

void jr_fold_if_due(struct px_state *st)
{
	MDB_txn *txn;
	uint64_t t0;
	int rc;

	if (st->jr->bytes <= st->jr_fold_bytes)
		return;
	t0 = px_now_us();
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0) {
		log_warn("journal fold: %s (retried after the next statement)", mdb_strerror(rc));
		return;
	}
	if ((rc = jr_fold(st, txn)) != 0) {
		mdb_txn_abort(txn);
		log_warn("journal fold: %s (retried after the next statement)", mdb_strerror(rc));
		return;
	}
	if ((rc = mdb_txn_commit(txn)) != 0) {
		log_warn("journal fold: %s (retried after the next statement)", mdb_strerror(rc));
		return;
	}
	jr_folded(st);
	st->jr->due_folds++;
	st->jr->due_us += px_now_us() - t0;
}

/* ---- reads ------------------------------------------------------------------------- */

int jr_pos_get(struct px_state *st, MDB_txn *txn, MDB_cursor *cur, uint64_t row,
	       uint64_t *loc)
{
	const struct px_journal *j = st->jr;
	const struct rowent *e = rowmap_find(&j->spos, row);

	if (e == NULL)
		e = rowmap_find(&j->opos, row);
	if (e != NULL) {
		if (e->del)
			return MDB_NOTFOUND;
		*loc = e->loc;
		return 0;
	}
	return cur ? px_pos_at(cur, row, loc) : px_pos_get(st, txn, row, loc);
}

int jr_stash_get(struct px_state *st, MDB_txn *txn, uint64_t row, uint32_t *table,
		 uint8_t *rec)
{
	const struct px_journal *j = st->jr;
	const struct rowent *e = rowmap_find(&j->sstash, row);
	uint8_t key[8];
	MDB_val k = { 8, key }, d;
	int rc;

	if (e == NULL)
		e = rowmap_find(&j->ostash, row);
	if (e != NULL) {
		if (e->del)
			return MDB_NOTFOUND;
		if (table)
			*table = cry_get_be32(e->rec) & ~PX_STASH_FRESH;
		memcpy(rec, e->rec + 4, st->g.S);
		return 0;
	}
	cry_put_be64(key, row);
	if ((rc = mdb_get(txn, st->stash_db, &k, &d)) != 0)
		return rc;
	if (d.mv_size != 4 + st->g.S)
		return MDB_CORRUPTED;
	if (table)
		*table = cry_get_be32(d.mv_data) & ~PX_STASH_FRESH;
	memcpy(rec, (const uint8_t *)d.mv_data + 4, st->g.S);
	return 0;
}

uint64_t jr_bytes(const struct px_state *st)
{
	return st->jr ? st->jr->bytes : 0;
}

uint64_t jr_folds(const struct px_state *st)
{
	return st->jr ? st->jr->folds : 0;
}

double jr_fold_ms_avg(const struct px_state *st)
{
	const struct px_journal *j = st->jr;

	return j && j->due_folds ? (double)j->due_us / 1000.0 / (double)j->due_folds : 0.0;
}
