/*
 * locate.c - see locate.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>

#include "cry.h"
#include "locate.h"
#include "state.h"

struct px_locator {
	MDB_env *env;
	int has_pos;                     /* format 2: index values are row ids */
};

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
	    (rc = mdb_env_set_maxdbs(l->env, 4u + 66u * 1024u)) != 0 ||
	    (rc = mdb_env_set_mapsize(l->env, 64ull << 30)) != 0 ||
	    (rc = mdb_env_open(l->env, path, MDB_RDONLY | MDB_NOTLS, 0600)) != 0) {
		lwc_errf(err, errlen, "%s: %s", path, mdb_strerror(rc));
		if (l->env)
			mdb_env_close(l->env);
		free(l);
		return LWC_ERR_STORE;
	}
	if (mdb_txn_begin(l->env, NULL, MDB_RDONLY, &txn) == 0) {
		l->has_pos = mdb_dbi_open(txn, "pos", 0, &dbi) == 0;
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
	v = cry_get_be64(d.mv_data);
	if (l->has_pos) {
		uint8_t key[8];

		cry_put_be64(key, v);
		k.mv_size = 8;
		k.mv_data = key;
		if (mdb_dbi_open(txn, "pos", 0, &pos) != 0 || mdb_get(txn, pos, &k, &d) != 0 ||
		    d.mv_size < 8) {
			rc = LWC_ERR_STORE;
			goto out;
		}
		v = cry_get_be64(d.mv_data);
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
