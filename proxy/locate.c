/*
 * locate.c - see locate.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>

#include "cry.h"
#include "journal.h"
#include "locate.h"
#include "pred.h"
#include "rowmap.h"
#include "state.h"

/* The databases one read transaction of the locator opens: catalog, meta,
 * pos, journal, a column's index and its table's run.  LMDB allocates and
 * zeroes a read transaction's tables by the environment's maxdbs (the
 * proxy's own is 66k, about 3 MB a begin); the handles a read transaction
 * opens are closed when it is aborted, so every begin starts with the slots
 * free again and a handful is enough. */
#define LOC_MAX_DBS 16u

struct px_locator {
	MDB_env *env;
	int has_pos;                     /* format 2: index values are row ids */
	int spans;                       /* format 4: they are spans (pred.h) */
	size_t S, words;                 /* entry sizes of journal records   */
	struct rowmap jpos;              /* positions in the journal read so far */
	uint64_t jfirst, jlast;          /* its first and last record read   */
};

/* The slot bytes and bitmap words of the state's geometry. */
static int read_geometry(MDB_txn *txn, struct px_locator *l)
{
	MDB_dbi meta;
	MDB_val k = { 8, (void *)"geometry" }, d;
	const uint8_t *p;

	if (mdb_dbi_open(txn, "meta", 0, &meta) != 0 || mdb_get(txn, meta, &k, &d) != 0 ||
	    d.mv_size < 8)
		return -1;
	p = d.mv_data;
	l->S = ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]) +
	       CRY_RECORD_OVERHEAD;
	l->words = (((uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7]) +
		    63) / 64;
	return 0;
}

static int journal_pos(void *arg, int kind, const uint8_t *p)
{
	struct rowent *e;

	if (kind != 'P' && kind != 'p')
		return 0;
	if ((e = rowmap_get(arg, cry_get_be64(p + 1))) == NULL)
		return ENOMEM;
	e->del = kind == 'p';
	e->loc = kind == 'P' ? cry_get_be64(p + 9) : 0;
	return 0;
}

/* Bring jpos up to the journal of txn: the records after jlast, or all of
 * them when the proxy folded the journal since (its first key changed). */
static int journal_catch_up(struct px_locator *l, MDB_txn *txn)
{
	MDB_dbi jdb;
	MDB_cursor *cur;
	MDB_val k, d;
	uint8_t key[8];
	int rc;

	if (mdb_dbi_open(txn, "journal", 0, &jdb) != 0) {
		rowmap_clear(&l->jpos);          /* a state without a journal */
		return 0;
	}
	if ((rc = mdb_cursor_open(txn, jdb, &cur)) != 0)
		return rc;
	rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST);
	if (rc == MDB_NOTFOUND || (rc == 0 && cry_get_be64(k.mv_data) != l->jfirst)) {
		rowmap_clear(&l->jpos);
		l->jfirst = rc == 0 ? cry_get_be64(k.mv_data) : 0;
		l->jlast = 0;
	} else if (rc == 0) {
		cry_put_be64(key, l->jlast + 1);
		k.mv_size = 8;
		k.mv_data = key;
		rc = mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE);
	}
	for (; rc == 0; rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) {
		if ((k.mv_size != 8 && k.mv_size != 16) ||
		    (rc = jr_entries(d.mv_data, d.mv_size, l->S, l->words, journal_pos,
				     &l->jpos)) != 0)
			break;
		l->jlast = cry_get_be64(k.mv_data);
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int px_locator_open(struct px_locator **out, const char *state_dir, char *err, size_t errlen)
{
	struct px_locator *l = calloc(1, sizeof(*l));
	char path[600];
	MDB_txn *txn;
	MDB_dbi dbi;
	int rc;

	*out = NULL;
	if (l == NULL)
		return LWC_ERR_NOMEM;
	snprintf(path, sizeof(path), "%s/state", state_dir);
	if ((rc = mdb_env_create(&l->env)) != 0 ||
	    (rc = mdb_env_set_maxdbs(l->env, LOC_MAX_DBS)) != 0 ||
	    (rc = mdb_env_set_mapsize(l->env, 64ull << 30)) != 0 ||
	    (rc = mdb_env_open(l->env, path, MDB_RDONLY | MDB_NOTLS, 0600)) != 0) {
		lwc_errf(err, errlen, "%s: %s", path, mdb_strerror(rc));
		if (l->env)
			mdb_env_close(l->env);
		free(l);
		return LWC_ERR_STORE;
	}
	if (mdb_txn_begin(l->env, NULL, MDB_RDONLY, &txn) == 0) {
		MDB_val fk = { 6, (void *)"format" }, fv;

		l->has_pos = mdb_dbi_open(txn, "pos", 0, &dbi) == 0 && read_geometry(txn, l) == 0;
		l->spans = mdb_dbi_open(txn, "meta", 0, &dbi) == 0 &&
			   mdb_get(txn, dbi, &fk, &fv) == 0 && fv.mv_size == 8 &&
			   cry_get_be64(fv.mv_data) >= 4;
		mdb_txn_abort(txn);
	}
	*out = l;
	return LWC_OK;
}

void px_locator_close(struct px_locator *l)
{
	if (l == NULL)
		return;
	mdb_env_close(l->env);
	rowmap_free(&l->jpos);
	free(l);
}

int px_locate(struct px_locator *l, const uint8_t handle[16], uint32_t col,
	      const uint8_t tok[16], uint64_t *block)
{
	MDB_txn *txn;
	MDB_dbi cat, idx, pos;
	MDB_val k = { PX_HANDLE_BYTES, (void *)(uintptr_t)handle }, d;
	char name[32];
	uint8_t rk[1 + CRY_TOKEN_BYTES];
	uint32_t id;
	uint64_t v;
	int rc = LWC_OK;

	if (mdb_txn_begin(l->env, NULL, MDB_RDONLY, &txn) != 0)
		return LWC_ERR_STORE;
	if (mdb_dbi_open(txn, "catalog", 0, &cat) != 0) {
		rc = LWC_ERR_STORE;
		goto out;
	}
	if (mdb_get(txn, cat, &k, &d) != 0 || d.mv_size < 8) {
		rc = LWC_ERR_NO_TABLE;
		goto out;
	}
	id = (uint32_t)(cry_get_be64(d.mv_data) >> 32);
	if (px_db_name(name, sizeof(name), id, (int)col) != LWC_OK ||
	    mdb_dbi_open(txn, name, MDB_DUPSORT | MDB_DUPFIXED, &idx) != 0) {
		rc = LWC_ERR_NOT_FOUND;
		goto out;
	}
	k.mv_size = CRY_TOKEN_BYTES;
	k.mv_data = (void *)(uintptr_t)tok;
	if (mdb_get(txn, idx, &k, &d) != 0) {
		/* not in the column's tree: the table's run of recent entries */
		rk[0] = (uint8_t)col;
		memcpy(rk + 1, tok, CRY_TOKEN_BYTES);
		k.mv_size = sizeof(rk);
		k.mv_data = rk;
		if (px_db_name(name, sizeof(name), id, PX_DB_RUN) != LWC_OK ||
		    mdb_dbi_open(txn, name, MDB_DUPSORT | MDB_DUPFIXED, &idx) != 0 ||
		    mdb_get(txn, idx, &k, &d) != 0) {
			rc = LWC_ERR_NOT_FOUND;
			goto out;
		}
	}
	if (d.mv_size != 8) {
		rc = LWC_ERR_NOT_FOUND;
		goto out;
	}
	/* the token's first row (a unique column's only one) */
	v = l->spans ? idx_span_first(d.mv_data) : cry_get_be64(d.mv_data);
	if (l->has_pos) {
		uint8_t key[8];
		const struct rowent *e;

		cry_put_be64(key, v);
		k.mv_size = 8;
		k.mv_data = key;
		/* the newest position: the journal's, else the database's */
		if (journal_catch_up(l, txn) != 0) {
			rc = LWC_ERR_STORE;
			goto out;
		}
		if ((e = rowmap_find(&l->jpos, v)) != NULL) {
			if (e->del) {
				rc = LWC_ERR_NOT_FOUND;
				goto out;
			}
			v = e->loc;
		} else if (mdb_dbi_open(txn, "pos", 0, &pos) != 0 ||
			   mdb_get(txn, pos, &k, &d) != 0 || d.mv_size < 8) {
			rc = LWC_ERR_STORE;
			goto out;
		} else {
			v = cry_get_be64(d.mv_data);
		}
		if (v == PX_LOC_STASH) {
			*block = PX_LOCATE_STASH;
			goto out;
		}
	}
	*block = PX_LOC_BLOCK(v);
out:
	mdb_txn_abort(txn);
	return rc;
}
