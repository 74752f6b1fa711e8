/*
 * state.c - see state.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "journal.h"
#include "keyfile.h"
#include "log.h"
#include "pred.h"
#include "state.h"

#define PX_MAP_SIZE   (64ull << 30)   /* sparse; the file grows as used */
#define PX_MAX_DBS    (8u + 66u * 1024u)
#define PX_MAX_READERS (1024u + 126u)
#define PX_STATE_FORMAT 5       /* 3: the journal (journal.h); 4: index values are spans (pred.h);
                                 * 5: journal records as page-sized values (journal.h) */

static int lmdb_fail(int rc, const char *what, char *err, size_t errlen)
{
	lwc_errf(err, errlen, "proxy state: %s: %s", what,
		 rc == ENOSPC ? "no space left on device" : mdb_strerror(rc));
	return rc == ENOSPC ? LWC_ERR_NO_SPACE : LWC_ERR_STORE;
}

int px_mdb_err(const struct px_state *st, int rc, const char **text)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/state", st->dir);
	if (rc > 0 && lwc_disk_full(path, rc, LWC_ERR_STORE) == LWC_ERR_NO_SPACE) {
		*text = "no space left on device";
		return LWC_ERR_NO_SPACE;
	}
	*text = mdb_strerror(rc);
	return LWC_ERR_STORE;
}

int px_geom_init(struct px_geom *g, uint32_t R, uint32_t m, uint32_t theta, uint32_t cell,
		 char *err, size_t errlen)
{
	memset(g, 0, sizeof(*g));
	if (R < 16 || R > 65536) {
		lwc_errf(err, errlen, "--record-bytes must be between 16 and 65536");
		return LWC_ERR_ARG;
	}
	if (m < 2 || m > PX_MAX_SLOTS) {
		lwc_errf(err, errlen, "--slots must be between 2 and %u", PX_MAX_SLOTS);
		return LWC_ERR_ARG;
	}
	if (theta < 1 || theta >= m) {
		lwc_errf(err, errlen, "--theta must be at least 1 and below --slots (%u)", m);
		return LWC_ERR_ARG;
	}
	if (cell != 1 && cell != 2 && cell != 4 && cell != 8) {
		lwc_errf(err, errlen, "--cell-bytes must be 1, 2, 4 or 8");
		return LWC_ERR_ARG;
	}
	g->R = R;
	g->S = R + CRY_RECORD_OVERHEAD;
	g->m = m;
	g->theta = theta;
	g->cell = cell;
	g->perm = CRY_PERM_V2;
	g->block_bytes = (size_t)m * g->S;
	if (g->block_bytes % cell != 0) {
		lwc_errf(err, errlen, "block size %zu is not a multiple of the cell size %u",
			 g->block_bytes, cell);
		return LWC_ERR_ARG;
	}
	if (g->block_bytes > (64u << 20)) {
		lwc_errf(err, errlen, "blocks of %zu bytes are too large (at most 64 MiB)",
			 g->block_bytes);
		return LWC_ERR_ARG;
	}
	g->sealed_bytes = g->block_bytes + CRY_SEAL_OVERHEAD;
	g->words = (m + 63) / 64;
	return LWC_OK;
}

size_t px_scratch_words(const struct px_geom *g)
{
	return cry_perm_scratch_words(g->block_bytes, g->cell) +
	       (g->block_bytes + sizeof(uint32_t) - 1) / sizeof(uint32_t);
}

int px_db_name(char *buf, size_t len, uint32_t table, int col)
{
	int n = col == PX_DB_RUN ? snprintf(buf, len, "t%u.x", table)
		: col < 0        ? snprintf(buf, len, "t%u.r", table)
				 : snprintf(buf, len, "t%u.c%d", table, col);
	return n > 0 && (size_t)n < len ? LWC_OK : LWC_ERR_ARG;
}

int px_table_open_dbis(struct px_state *st, MDB_txn *txn, struct px_table *t, unsigned flags)
{
	char name[32];
	int rc;

	(void)st;
	if (px_db_name(name, sizeof(name), t->id, -1) != LWC_OK)
		return LWC_ERR_ARG;
	if ((rc = mdb_dbi_open(txn, name, flags, &t->rows)) != 0)
		return rc;
	for (uint32_t c = 0; c < t->ncols; c++) {
		if (px_db_name(name, sizeof(name), t->id, (int)c) != LWC_OK)
			return LWC_ERR_ARG;
		rc = mdb_dbi_open(txn, name, flags | MDB_DUPSORT | MDB_DUPFIXED, &t->cols[c]);
		if (rc != 0)
			return rc;
	}
	/* made here for tables of databases from before the run */
	if (px_db_name(name, sizeof(name), t->id, PX_DB_RUN) != LWC_OK)
		return LWC_ERR_ARG;
	return mdb_dbi_open(txn, name, MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &t->run);
}

int px_meta_put_u64(struct px_state *st, MDB_txn *txn, const char *name, uint64_t v)
{
	uint8_t buf[8];
	MDB_val k = { strlen(name), (void *)(uintptr_t)name }, d = { 8, buf };

	cry_put_be64(buf, v);
	return mdb_put(txn, st->meta, &k, &d, 0);
}

static int meta_get(MDB_txn *txn, MDB_dbi dbi, const char *name, MDB_val *out)
{
	MDB_val k = { strlen(name), (void *)(uintptr_t)name };
	return mdb_get(txn, dbi, &k, out);
}

static int meta_put_str(MDB_txn *txn, MDB_dbi dbi, const char *name, const void *v, size_t len)
{
	MDB_val k = { strlen(name), (void *)(uintptr_t)name }, d = { len, (void *)(uintptr_t)v };
	return mdb_put(txn, dbi, &k, &d, 0);
}

static int meta_put_u64v(MDB_txn *txn, MDB_dbi dbi, const char *name, uint64_t v)
{
	uint8_t buf[8];

	cry_put_be64(buf, v);
	return meta_put_str(txn, dbi, name, buf, sizeof(buf));
}

/* A u64 setting of meta, or def when absent. */
static int meta_get_u64(MDB_txn *txn, MDB_dbi dbi, const char *name, uint64_t def, uint64_t *out)
{
	MDB_val v;
	int rc = meta_get(txn, dbi, name, &v);

	if (rc == MDB_NOTFOUND) {
		*out = def;
		return 0;
	}
	if (rc != 0)
		return rc;
	if (v.mv_size != 8)
		return MDB_CORRUPTED;
	*out = cry_get_be64(v.mv_data);
	return 0;
}

int px_pos_put(struct px_state *st, MDB_txn *txn, uint64_t rowid, uint64_t loc)
{
	uint8_t key[8], val[8];
	MDB_val k = { 8, key }, d = { 8, val };

	cry_put_be64(key, rowid);
	cry_put_be64(val, loc);
	return mdb_put(txn, st->pos_db, &k, &d, 0);
}

/* A position entry's value: the location, 8 bytes big-endian. */
static int pos_value(const MDB_val *d, uint64_t *loc)
{
	if (d->mv_size != 8)
		return MDB_CORRUPTED;
	*loc = cry_get_be64(d->mv_data);
	return 0;
}

int px_pos_get(struct px_state *st, MDB_txn *txn, uint64_t rowid, uint64_t *loc)
{
	uint8_t key[8];
	MDB_val k = { 8, key }, d;
	int rc;

	cry_put_be64(key, rowid);
	if ((rc = mdb_get(txn, st->pos_db, &k, &d)) != 0)
		return rc;
	return pos_value(&d, loc);
}

int px_pos_at(MDB_cursor *cur, uint64_t rowid, uint64_t *loc)
{
	uint8_t key[8];
	MDB_val k = { 8, key }, d;
	int rc;

	/* rows come in ascending order, and a range's are mostly neighbours:
	 * the entry after the cursor is then the one, found without a search
	 * (keys are unique, so a next entry of this key is this row's; any
	 * other case, a cursor not yet placed included, searches) */
	if (mdb_cursor_get(cur, &k, &d, MDB_NEXT) == 0 && k.mv_size == 8 &&
	    cry_get_be64(k.mv_data) == rowid)
		return pos_value(&d, loc);
	k.mv_size = 8;
	k.mv_data = key;
	cry_put_be64(key, rowid);
	if ((rc = mdb_cursor_get(cur, &k, &d, MDB_SET_KEY)) != 0)
		return rc;
	return pos_value(&d, loc);
}

uint32_t px_fill_limit(const struct px_state *st)
{
	uint32_t keep;

	if (!st->relocate)
		return st->g.theta;
	keep = st->evict_room ? st->evict_room : st->g.theta / 6;
	if (keep < 1)
		keep = 1;
	return st->g.theta > keep ? st->g.theta - keep : 1;
}

int px_table_layout(struct px_table *t)
{
	uint32_t n = t->ncols;

	for (uint32_t c = 0; c < t->ncols; c++)
		t->tcol[c] = (uint8_t)c;
	for (uint32_t c = 0; c < t->ncols; c++) {
		if (t->rtok[c] > PX_MAX_RANGE_TOK || n + t->rtok[c] > PX_MAX_TOKENS)
			return LWC_ERR_SCHEMA;
		for (uint32_t i = 0; i < t->rtok[c]; i++)
			t->tcol[n++] = (uint8_t)c;
	}
	t->ntok = n;
	return LWC_OK;
}

int px_table_put(struct px_state *st, MDB_txn *txn, const struct px_table *t)
{
	int ranged = t->ntok > t->ncols || t->range_ready != 0;
	size_t ext = ranged ? (size_t)t->ncols + 8 : 0;
	size_t len = 28 + (size_t)t->ncols * CRY_TOKEN_BYTES + ext + t->schema_len;
	uint8_t *buf = malloc(len);
	MDB_val k = { PX_HANDLE_BYTES, (void *)(uintptr_t)t->handle }, d = { len, buf };
	int rc;

	if (buf == NULL)
		return ENOMEM;
	/* bit 31 of ncols: the range extension follows the NULL tokens (tables
	 * without range indexes keep the layout of earlier versions) */
	cry_put_be64(buf, ((uint64_t)t->id << 32) | t->ncols | (ranged ? UINT32_C(0x80000000) : 0));
	buf[8] = (uint8_t)((uint32_t)t->pk_col >> 24);
	buf[9] = (uint8_t)((uint32_t)t->pk_col >> 16);
	buf[10] = (uint8_t)((uint32_t)t->pk_col >> 8);
	buf[11] = (uint8_t)t->pk_col;
	cry_put_be64(buf + 12, t->unique);
	cry_put_be64(buf + 20, t->has_null);
	memcpy(buf + 28, t->null_tok, (size_t)t->ncols * CRY_TOKEN_BYTES);
	if (ranged) {
		memcpy(buf + 28 + (size_t)t->ncols * CRY_TOKEN_BYTES, t->rtok, t->ncols);
		cry_put_be64(buf + 28 + (size_t)t->ncols * (CRY_TOKEN_BYTES + 1), t->range_ready);
	}
	if (t->schema_len)
		memcpy(buf + 28 + (size_t)t->ncols * CRY_TOKEN_BYTES + ext, t->schema,
		       t->schema_len);
	rc = mdb_put(txn, st->catalog, &k, &d, 0);
	free(buf);
	return rc;
}

int px_block_put(struct px_state *st, MDB_txn *txn, uint64_t id, uint64_t version,
		 const uint8_t tag[CRY_TAG_BYTES], const uint64_t *bits)
{
	uint8_t key[8], val[24 + 8 * (PX_MAX_SLOTS / 64)];
	MDB_val k = { 8, key }, d = { 24 + 8 * st->g.words, val };

	cry_put_be64(key, id);
	cry_put_be64(val, version);
	memcpy(val + 8, tag, CRY_TAG_BYTES);
	for (size_t w = 0; w < st->g.words; w++)
		cry_put_be64(val + 24 + 8 * w, bits[w]);
	return mdb_put(txn, st->blocks_db, &k, &d, 0);
}

int px_blocks_reserve(struct px_state *st, uint64_t n)
{
	uint64_t cap = st->cap_blocks ? st->cap_blocks : 1024;
	void *p;

	if (n <= st->cap_blocks)
		return LWC_OK;
	while (cap < n)
		cap *= 2;
	if ((p = realloc(st->version, cap * sizeof(uint64_t))) == NULL)
		return LWC_ERR_NOMEM;
	st->version = p;
	if ((p = realloc(st->tag, cap * CRY_TAG_BYTES)) == NULL)
		return LWC_ERR_NOMEM;
	st->tag = p;
	if ((p = realloc(st->bits, cap * st->g.words * sizeof(uint64_t))) == NULL)
		return LWC_ERR_NOMEM;
	st->bits = p;
	if ((p = realloc(st->occ, cap * sizeof(uint16_t))) == NULL)
		return LWC_ERR_NOMEM;
	st->occ = p;
	if ((p = realloc(st->locked, cap)) == NULL)
		return LWC_ERR_NOMEM;
	st->locked = p;
	memset(st->locked + st->cap_blocks, 0, cap - st->cap_blocks);
	if ((p = realloc(st->wanted, cap)) == NULL)
		return LWC_ERR_NOMEM;
	st->wanted = p;
	memset(st->wanted + st->cap_blocks, 0, cap - st->cap_blocks);
	st->cap_blocks = cap;
	return LWC_OK;
}

static int open_env(const char *dir, MDB_env **env, char *err, size_t errlen)
{
	char path[600];
	int rc;

	snprintf(path, sizeof(path), "%s/state", dir);
	if ((rc = mdb_env_create(env)) != 0)
		return lmdb_fail(rc, "mdb_env_create", err, errlen);
	mdb_env_set_maxdbs(*env, PX_MAX_DBS);
	mdb_env_set_mapsize(*env, PX_MAP_SIZE);
	/* each worker keeps a read transaction (px_read_begin): room for
	 * --workers' maximum, readers of lwc-proxy check and locate besides */
	mdb_env_set_maxreaders(*env, PX_MAX_READERS);
	if ((rc = mdb_env_open(*env, path, MDB_NOTLS | MDB_NORDAHEAD, 0600)) != 0) {
		mdb_env_close(*env);
		*env = NULL;
		return lmdb_fail(rc, path, err, errlen);
	}
	{
		int dead = 0;
		/* reader slots of a proxy killed with -9 would pin old pages */
		(void)mdb_reader_check(*env, &dead);
	}
	return LWC_OK;
}

int px_state_create(const char *dir, const struct px_geom *g, const char *cs_addr,
		    const char *cs_key_file, const struct px_reloc_cfg *rcfg,
		    char *err, size_t errlen)
{
	char path[600], abs_key[512];
	uint8_t *ops;
	MDB_env *env = NULL;
	MDB_txn *txn = NULL;
	MDB_dbi meta, users, catalog, blocks, pos, stash, journal;
	uint8_t geo[20];
	int rc;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		lwc_errf(err, errlen, "%s: %s", dir, strerror(errno));
		return LWC_ERR_IO;
	}
	snprintf(path, sizeof(path), "%s/state", dir);
	if (access(path, F_OK) == 0) {
		lwc_errf(err, errlen, "%s already holds a proxy state; refusing to touch it", dir);
		return LWC_ERR_EXISTS;
	}
	snprintf(path, sizeof(path), "%s/ops.key", dir);
	if (access(path, F_OK) == 0) {
		lwc_errf(err, errlen, "%s exists; refusing to overwrite it", path);
		return LWC_ERR_EXISTS;
	}
	if (chmod(dir, 0700) != 0) {
		lwc_errf(err, errlen, "%s: %s", dir, strerror(errno));
		return LWC_ERR_IO;
	}
	if (cs_key_file[0] != '/') {
		char cwd[256];
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			lwc_errf(err, errlen, "getcwd: %s", strerror(errno));
			return LWC_ERR_IO;
		}
		if ((size_t)snprintf(abs_key, sizeof(abs_key), "%s/%s", cwd, cs_key_file) >=
		    sizeof(abs_key)) {
			lwc_errf(err, errlen, "--cs-key-file path too long");
			return LWC_ERR_ARG;
		}
	} else {
		if (strlen(cs_key_file) >= sizeof(abs_key)) {
			lwc_errf(err, errlen, "--cs-key-file path too long");
			return LWC_ERR_ARG;
		}
		memcpy(abs_key, cs_key_file, strlen(cs_key_file) + 1);
	}
	ops = sodium_malloc(CRY_KEY_BYTES);
	if (ops == NULL)
		return LWC_ERR_NOMEM;
	randombytes_buf(ops, CRY_KEY_BYTES);
	rc = keyfile_write(path, PX_OPS_KEY_KIND, "LWC proxy key K_OPS - keep it secret",
			   ops, CRY_KEY_BYTES, err, errlen);
	sodium_free(ops);
	if (rc != LWC_OK)
		return rc;
	snprintf(path, sizeof(path), "%s/state", dir);
	if (mkdir(path, 0700) != 0) {
		lwc_errf(err, errlen, "%s: %s", path, strerror(errno));
		return LWC_ERR_IO;
	}
	if ((rc = open_env(dir, &env, err, errlen)) != LWC_OK)
		return rc;
	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0 ||
	    (rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &meta)) != 0 ||
	    (rc = mdb_dbi_open(txn, "users", MDB_CREATE, &users)) != 0 ||
	    (rc = mdb_dbi_open(txn, "catalog", MDB_CREATE, &catalog)) != 0 ||
	    (rc = mdb_dbi_open(txn, "blocks", MDB_CREATE, &blocks)) != 0 ||
	    (rc = mdb_dbi_open(txn, "pos", MDB_CREATE, &pos)) != 0 ||
	    (rc = mdb_dbi_open(txn, "stash", MDB_CREATE, &stash)) != 0 ||
	    (rc = mdb_dbi_open(txn, "journal", MDB_CREATE, &journal)) != 0)
		goto lmdb_error;
	for (int i = 0; i < 5; i++) {
		uint32_t v = i == 0 ? g->R : i == 1 ? g->m : i == 2 ? g->theta :
			     i == 3 ? g->cell : g->perm;
		geo[4 * i] = (uint8_t)(v >> 24);
		geo[4 * i + 1] = (uint8_t)(v >> 16);
		geo[4 * i + 2] = (uint8_t)(v >> 8);
		geo[4 * i + 3] = (uint8_t)v;
	}
	if ((rc = meta_put_str(txn, meta, "geometry", geo, sizeof(geo))) != 0 ||
	    (rc = meta_put_str(txn, meta, "cloudstore", cs_addr, strlen(cs_addr))) != 0 ||
	    (rc = meta_put_str(txn, meta, "cs_key_file", abs_key, strlen(abs_key))) != 0)
		goto lmdb_error;
	{
		uint8_t buf[8];
		MDB_val k = { 7, (void *)"nblocks" }, d = { 8, buf };
		cry_put_be64(buf, 0);   /* blocks are added once written to the cloud */
		if ((rc = mdb_put(txn, meta, &k, &d, 0)) != 0)
			goto lmdb_error;
		k.mv_size = 10;
		k.mv_data = (void *)"next_table";
		cry_put_be64(buf, 1);
		if ((rc = mdb_put(txn, meta, &k, &d, 0)) != 0)
			goto lmdb_error;
		if ((rc = meta_put_u64v(txn, meta, "format", PX_STATE_FORMAT)) != 0 ||
		    (rc = meta_put_u64v(txn, meta, "next_rowid", 1)) != 0 ||
		    (rc = meta_put_u64v(txn, meta, "relocate", rcfg->relocate ? 1 : 0)) != 0 ||
		    (rc = meta_put_u64v(txn, meta, "stash_max", rcfg->stash_max)) != 0 ||
		    (rc = meta_put_u64v(txn, meta, "relocate_max", rcfg->relocate_max)) != 0)
			goto lmdb_error;
	}
	if ((rc = mdb_txn_commit(txn)) != 0) {
		txn = NULL;
		goto lmdb_error;
	}
	mdb_env_close(env);
	return LWC_OK;
lmdb_error:
	if (txn)
		mdb_txn_abort(txn);
	mdb_env_close(env);
	return lmdb_fail(rc, "create", err, errlen);
}

static int load_users(struct px_state *st, MDB_txn *txn)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = mdb_cursor_open(txn, st->users_db, &cur)) != 0)
		return rc;
	while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
		struct px_user *u;
		const uint8_t *p = d.mv_data;

		if (k.mv_size == 0 || k.mv_size > PX_NAME_MAX || d.mv_size != 49) {
			rc = MDB_CORRUPTED;
			break;
		}
		if ((u = calloc(1, sizeof(*u))) == NULL) {
			rc = ENOMEM;
			break;
		}
		memcpy(u->name, k.mv_data, k.mv_size);
		u->active = p[0] == 1;
		u->created = cry_get_be64(p + 1);
		u->revoked = cry_get_be64(p + 9);
		u->gen = 1;
		if (u->active) {
			if ((u->key = sodium_malloc(32)) == NULL) {
				free(u);
				rc = ENOMEM;
				break;
			}
			memcpy(u->key, p + 17, 32);
		}
		u->next = st->users;
		st->users = u;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int load_catalog(struct px_state *st, MDB_txn *txn)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = mdb_cursor_open(txn, st->catalog, &cur)) != 0)
		return rc;
	while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
		const uint8_t *p = d.mv_data;
		struct px_table *t;
		uint64_t idn;
		MDB_stat ms;
		int ext;

		if (k.mv_size != PX_HANDLE_BYTES || d.mv_size < 28) {
			rc = MDB_CORRUPTED;
			break;
		}
		if ((t = calloc(1, sizeof(*t))) == NULL) {
			rc = ENOMEM;
			break;
		}
		memcpy(t->handle, k.mv_data, PX_HANDLE_BYTES);
		idn = cry_get_be64(p);
		t->id = (uint32_t)(idn >> 32);
		t->ncols = (uint32_t)idn;
		t->pk_col = (int32_t)((uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 |
				      (uint32_t)p[10] << 8 | p[11]);
		t->unique = cry_get_be64(p + 12);
		t->has_null = cry_get_be64(p + 20);
		ext = t->ncols & UINT32_C(0x80000000) ? 1 : 0;
		t->ncols &= UINT32_C(0x7fffffff);
		if (t->ncols == 0 || t->ncols > PX_MAX_COLS ||
		    d.mv_size < 28 + (size_t)t->ncols * CRY_TOKEN_BYTES +
				(ext ? (size_t)t->ncols + 8 : 0)) {
			free(t);
			rc = MDB_CORRUPTED;
			break;
		}
		memcpy(t->null_tok, p + 28, (size_t)t->ncols * CRY_TOKEN_BYTES);
		p += 28 + (size_t)t->ncols * CRY_TOKEN_BYTES;
		if (ext) {
			memcpy(t->rtok, p, t->ncols);
			t->range_ready = cry_get_be64(p + t->ncols);
			p += t->ncols + 8;
		}
		if (px_table_layout(t) != LWC_OK) {
			free(t);
			rc = MDB_CORRUPTED;
			break;
		}
		t->schema_len = d.mv_size - (size_t)(p - (const uint8_t *)d.mv_data);
		if (t->schema_len && (t->schema = malloc(t->schema_len)) == NULL) {
			free(t);
			rc = ENOMEM;
			break;
		}
		if (t->schema_len)
			memcpy(t->schema, p, t->schema_len);
		t->next = st->tables;
		st->tables = t;
		if ((rc = px_table_open_dbis(st, txn, t, 0)) != 0)
			break;
		if ((rc = mdb_stat(txn, t->rows, &ms)) != 0)
			break;
		t->nrows = ms.ms_entries;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int load_blocks(struct px_state *st, MDB_txn *txn)
{
	MDB_cursor *cur;
	MDB_val k, d;
	uint64_t expect = 0;
	int rc;

	if ((rc = mdb_cursor_open(txn, st->blocks_db, &cur)) != 0)
		return rc;
	while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
		const uint8_t *p = d.mv_data;
		uint64_t id;
		uint16_t occ = 0;

		if (k.mv_size != 8 || d.mv_size != 24 + 8 * st->g.words) {
			rc = MDB_CORRUPTED;
			break;
		}
		id = cry_get_be64(k.mv_data);
		if (id != expect || px_blocks_reserve(st, id + 1) != LWC_OK) {
			rc = id != expect ? MDB_CORRUPTED : ENOMEM;
			break;
		}
		st->version[id] = cry_get_be64(p);
		memcpy(st->tag + id * CRY_TAG_BYTES, p + 8, CRY_TAG_BYTES);
		for (size_t w = 0; w < st->g.words; w++) {
			uint64_t b = cry_get_be64(p + 24 + 8 * w);
			st->bits[id * st->g.words + w] = b;
			occ = (uint16_t)(occ + __builtin_popcountll(b));
		}
		st->occ[id] = occ;
		st->used_slots += occ;
		expect++;
	}
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND)
		return rc;
	st->nblocks = expect;
	st->free_hint = 0;
	return 0;
}

/* Format 1 -> 2: a row's id is its location (t<ID>.r and the indexes keep
 * their keys and values as they are), and the position map says so. */
static int convert_format1(struct px_state *st, MDB_txn *txn)
{
	uint64_t next = 1;
	int rc = 0;

	for (struct px_table *t = st->tables; t && rc == 0; t = t->next) {
		MDB_cursor *cur;
		MDB_val k, d;

		if ((rc = mdb_cursor_open(txn, t->rows, &cur)) != 0)
			return rc;
		while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
			uint64_t loc;

			if (k.mv_size != 8) {
				rc = MDB_CORRUPTED;
				break;
			}
			loc = cry_get_be64(k.mv_data);
			if ((rc = px_pos_put(st, txn, loc, loc)) != 0)
				break;
			if (loc + 1 > next)
				next = loc + 1;
		}
		mdb_cursor_close(cur);
		if (rc == MDB_NOTFOUND)
			rc = 0;
	}
	if (rc == 0)
		rc = meta_put_u64v(txn, st->meta, "next_rowid", next);
	if (rc == 0)
		log_info("proxy state converted from format 1 (row ids and a position map)");
	return rc;
}

/* The values of the key cur is on, read as row ids (formats 1 to 3), as
 * spans (pred.h) in vals; *n of them. */
static int old_ids_as_spans(MDB_cursor *cur, uint8_t **vals, size_t *cap, size_t *n)
{
	MDB_val k, d;
	uint64_t first = 0, last = 0;
	size_t rows = 0;
	int rc;

	*n = 0;
	/* GET_MULTIPLE leaves d as it is when the key has one value */
	if ((rc = mdb_cursor_get(cur, &k, &d, MDB_GET_CURRENT)) == 0)
		rc = mdb_cursor_get(cur, &k, &d, MDB_GET_MULTIPLE);
	while (rc == 0) {
		for (size_t i = 0; i + 8 <= d.mv_size; i += 8) {
			uint64_t id = cry_get_be64((const uint8_t *)d.mv_data + i);

			if (id >= IDX_ROW_LIMIT || (rows && id <= last))
				return MDB_CORRUPTED;
			if (rows && id == last + 1 && rows < IDX_SPAN_ROWS) {
				last = id;
				rows++;
				continue;
			}
			if (rows) {
				if (*n == *cap) {
					size_t nc = *cap ? *cap * 2 : 1024;
					uint8_t *p = realloc(*vals, nc * 8);

					if (p == NULL)
						return ENOMEM;
					*vals = p;
					*cap = nc;
				}
				idx_span_put(*vals + *n * 8, first, (uint32_t)rows);
				(*n)++;
			}
			first = last = id;
			rows = 1;
		}
		rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT_MULTIPLE);
	}
	if (rc != MDB_NOTFOUND)
		return rc;
	if (rows) {
		if (*n == *cap) {
			uint8_t *p = realloc(*vals, (*cap + 1) * 8);

			if (p == NULL)
				return ENOMEM;
			*vals = p;
			(*cap)++;
		}
		idx_span_put(*vals + *n * 8, first, (uint32_t)rows);
		(*n)++;
	}
	return 0;
}

/* Formats 1-3 -> 4 in one index database (a column's tree or a table's
 * run): each key's row ids rewritten as spans, consecutive ids as one. */
static int convert_spans_db(MDB_txn *txn, MDB_dbi dbi)
{
	uint8_t kb[1 + CRY_TOKEN_BYTES], *vals = NULL;   /* a run key at most */
	size_t cap = 0, n = 0, klen;
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = mdb_cursor_open(txn, dbi, &cur)) != 0)
		return rc;
	rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST);
	while (rc == 0) {
		MDB_val dv[2];

		if (k.mv_size > sizeof(kb) || d.mv_size != 8) {
			rc = MDB_CORRUPTED;
			break;
		}
		klen = k.mv_size;
		memcpy(kb, k.mv_data, klen);
		if ((rc = old_ids_as_spans(cur, &vals, &cap, &n)) != 0)
			break;
		k.mv_size = klen;
		k.mv_data = kb;
		if ((rc = mdb_cursor_get(cur, &k, &d, MDB_SET_KEY)) != 0 ||
		    (rc = mdb_cursor_del(cur, MDB_NODUPDATA)) != 0)
			break;
		k.mv_size = klen;
		k.mv_data = kb;
		dv[0].mv_size = 8;
		dv[0].mv_data = vals;
		dv[1].mv_size = n;
		if ((rc = mdb_cursor_put(cur, &k, dv, MDB_MULTIPLE)) != 0)
			break;
		k.mv_size = klen;
		k.mv_data = kb;
		if ((rc = mdb_cursor_get(cur, &k, &d, MDB_SET_KEY)) == 0)
			rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT_NODUP);
	}
	mdb_cursor_close(cur);
	free(vals);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Formats 1-3 -> 4: index values are spans of row ids (pred.h). */
static int convert_spans(struct px_state *st, MDB_txn *txn)
{
	int rc = 0;

	for (struct px_table *t = st->tables; t && rc == 0; t = t->next) {
		for (uint32_t c = 0; c < t->ncols && rc == 0; c++)
			rc = convert_spans_db(txn, t->cols[c]);
		if (rc == 0)
			rc = convert_spans_db(txn, t->run);
	}
	if (rc == 0)
		log_info("proxy state converted to format 4 (index values are spans of row ids)");
	return rc;
}

/* The stash's rows in memory; all may be evicted at once (they entered in
 * statements before this start). */
static int load_stash(struct px_state *st, MDB_txn *txn)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = mdb_cursor_open(txn, st->stash_db, &cur)) != 0)
		return rc;
	while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
		struct px_stash_ent *e;

		if (k.mv_size != 8 || d.mv_size != 4 + st->g.S) {
			rc = MDB_CORRUPTED;
			break;
		}
		if (st->nstash == st->cap_stash) {
			size_t cap = st->cap_stash ? st->cap_stash * 2 : 256;
			void *p = realloc(st->stash, cap * sizeof(*st->stash));
			if (p == NULL) {
				rc = ENOMEM;
				break;
			}
			st->stash = p;
			st->cap_stash = cap;
		}
		if (u64map_put(&st->stash_ix, cry_get_be64(k.mv_data), st->nstash + 1) != 0) {
			rc = ENOMEM;
			break;
		}
		e = &st->stash[st->nstash++];
		memset(e, 0, sizeof(*e));
		e->rowid = cry_get_be64(k.mv_data);
		e->grp = ++st->next_grp;         /* groups are not kept: each row alone */
		e->origin = UINT64_MAX - e->grp;
		e->table = (uint32_t)((const uint8_t *)d.mv_data)[0] << 24 |
			   (uint32_t)((const uint8_t *)d.mv_data)[1] << 16 |
			   (uint32_t)((const uint8_t *)d.mv_data)[2] << 8 |
			   ((const uint8_t *)d.mv_data)[3];
		e->fresh = (e->table & PX_STASH_FRESH) != 0;
		e->table &= ~PX_STASH_FRESH;
	}
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND)
		return rc;
	return 0;
}

/* Records a clean stop leaves in meta for the next start, which takes each
 * once: the blocks' write order and the groups of rows in blocks.  After a
 * crash they would be stale, so the start drops them. */
static int stop_record_put(struct px_state *st, const char *key, const uint8_t *buf, size_t len)
{
	MDB_txn *txn;
	int rc;

	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		return rc;
	if ((rc = meta_put_str(txn, st->meta, key, buf, len)) == 0)
		return mdb_txn_commit(txn);
	mdb_txn_abort(txn);
	return rc;
}

/* use(st, value, arg) on the record when there is one, then drop it. */
static int stop_record_take(struct px_state *st, const char *key,
			    void (*use)(struct px_state *st, const MDB_val *v, void *arg), void *arg)
{
	MDB_txn *txn;
	MDB_val v, k = { strlen(key), (void *)(uintptr_t)key };
	int rc;

	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		return rc;
	rc = meta_get(txn, st->meta, key, &v);
	if (rc == MDB_NOTFOUND) {
		mdb_txn_abort(txn);
		return 0;
	}
	if (rc == 0) {
		use(st, &v, arg);
		rc = mdb_del(txn, st->meta, &k, NULL);
	}
	if (rc == 0)
		rc = mdb_txn_commit(txn);
	else
		mdb_txn_abort(txn);
	return rc;
}

/* meta "block_order": the blocks' write order (padage.h), oldest first,
 * 8 bytes each. */
#define PX_ORDER_KEY "block_order"

int px_order_save(struct px_state *st)
{
	uint64_t n = 0, *order = pa_order(&st->pa, &n);
	uint8_t *buf;
	int rc;

	if (order == NULL)
		return ENOMEM;
	if (n != st->nblocks) {                 /* (never: every block is in it) */
		free(order);
		return EINVAL;
	}
	if ((buf = malloc(n * 8 + 1)) == NULL) {
		free(order);
		return ENOMEM;
	}
	for (uint64_t i = 0; i < n; i++)
		cry_put_be64(buf + 8 * i, order[i]);
	free(order);
	rc = stop_record_put(st, PX_ORDER_KEY, buf, n * 8);
	free(buf);
	return rc;
}

static void order_use(struct px_state *st, const MDB_val *v, void *arg)
{
	uint64_t n = st->nblocks, *order;
	int *restored = arg;

	if (v->mv_size != n * 8 || (order = malloc((n + 1) * sizeof(*order))) == NULL)
		return;
	for (uint64_t i = 0; i < n; i++)
		order[i] = cry_get_be64((const uint8_t *)v->mv_data + 8 * i);
	*restored = pa_init_order(&st->pa, order, n) == 0;
	free(order);
}

int px_order_restore(struct px_state *st, int *restored)
{
	*restored = 0;
	return stop_record_take(st, PX_ORDER_KEY, order_use, restored);
}

/* meta "row_groups": the groups of rows in blocks (groups.h). */
#define PX_GROUPS_KEY "row_groups"

int px_groups_save(struct px_state *st)
{
	uint8_t *buf;
	size_t len;
	int rc;

	if (grp_serialize(&st->grps, &buf, &len) != 0)
		return ENOMEM;
	rc = stop_record_put(st, PX_GROUPS_KEY, buf, len);
	free(buf);
	return rc;
}

static void groups_use(struct px_state *st, const MDB_val *v, void *arg)
{
	/* a malformed record keeps what it gave: each entry is a hint */
	if (grp_deserialize(&st->grps, v->mv_data, v->mv_size) != 0)
		log_warn("the saved groups of rows are malformed or too large; kept %zu rows",
			 grp_rows(&st->grps));
	*(size_t *)arg = grp_rows(&st->grps);
}

int px_groups_restore(struct px_state *st, size_t *restored)
{
	*restored = 0;
	return stop_record_take(st, PX_GROUPS_KEY, groups_use, restored);
}

int px_state_open(struct px_state **out, const char *dir, char *err, size_t errlen)
{
	struct px_state *st;
	char path[600];
	uint8_t *ops = NULL;
	MDB_txn *txn = NULL;
	MDB_val v;
	int rc;

	*out = NULL;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return LWC_ERR_NOMEM;
	if (strlen(dir) >= sizeof(st->dir)) {
		free(st);
		lwc_errf(err, errlen, "state directory path too long");
		return LWC_ERR_ARG;
	}
	memcpy(st->dir, dir, strlen(dir) + 1);
	pthread_mutex_init(&st->mu, NULL);
	pthread_mutex_init(&st->users_mu, NULL);
	pthread_cond_init(&st->cv, NULL);
	for (unsigned i = 0; i < PX_BLOCK_CVS; i++)
		pthread_cond_init(&st->bcv[i], NULL);
	pthread_mutex_init(&st->gc_mu, NULL);
	pthread_cond_init(&st->gc_cv, NULL);
	if (jr_init(st) != LWC_OK) {
		px_state_close(st);
		return LWC_ERR_NOMEM;
	}
	snprintf(path, sizeof(path), "%s/state/data.mdb", dir);
	if (access(path, F_OK) != 0) {
		lwc_errf(err, errlen, "%s holds no proxy state (run 'lwc-proxy init' first)", dir);
		px_state_close(st);
		return LWC_ERR_NOT_FOUND;
	}
	ops = sodium_malloc(CRY_KEY_BYTES);
	st->seal_key = sodium_malloc(CRY_KEY_BYTES);
	st->perm_key = sodium_malloc(CRY_KEY_BYTES);
	if (ops == NULL || st->seal_key == NULL || st->perm_key == NULL) {
		rc = LWC_ERR_NOMEM;
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/ops.key", dir);
	if ((rc = keyfile_read(path, PX_OPS_KEY_KIND, ops, CRY_KEY_BYTES, err, errlen)) != LWC_OK)
		goto fail;
	if ((rc = cry_kdf(st->seal_key, ops, CRY_SUB_SEAL, CRY_CTX_OPS)) != LWC_OK ||
	    (rc = cry_kdf(st->perm_key, ops, CRY_SUB_PERM, CRY_CTX_OPS)) != LWC_OK)
		goto fail;
	sodium_free(ops);
	ops = NULL;
	if ((rc = open_env(dir, &st->env, err, errlen)) != LWC_OK)
		goto fail;
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0 ||
	    (rc = mdb_dbi_open(txn, "meta", 0, &st->meta)) != 0 ||
	    (rc = mdb_dbi_open(txn, "users", 0, &st->users_db)) != 0 ||
	    (rc = mdb_dbi_open(txn, "catalog", 0, &st->catalog)) != 0 ||
	    (rc = mdb_dbi_open(txn, "blocks", 0, &st->blocks_db)) != 0 ||
	    (rc = mdb_dbi_open(txn, "pos", MDB_CREATE, &st->pos_db)) != 0 ||
	    (rc = mdb_dbi_open(txn, "stash", MDB_CREATE, &st->stash_db)) != 0 ||
	    (rc = mdb_dbi_open(txn, "journal", MDB_CREATE, &st->journal_db)) != 0)
		goto lmdb_error;
	if ((rc = meta_get(txn, st->meta, "geometry", &v)) != 0)
		goto lmdb_error;
	/* 16 bytes: a database made before block formats (its permutation
	 * draws are CRY_PERM_V1); 20: the format follows */
	if (v.mv_size != 16 && v.mv_size != 20) {
		rc = MDB_CORRUPTED;
		goto lmdb_error;
	}
	{
		const uint8_t *p = v.mv_data;
		uint32_t f[5] = { 0, 0, 0, 0, CRY_PERM_V1 };
		for (size_t i = 0; i < v.mv_size / 4; i++)
			f[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
			       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
		if ((rc = px_geom_init(&st->g, f[0], f[1], f[2], f[3], err, errlen)) != LWC_OK) {
			mdb_txn_abort(txn);
			goto fail;
		}
		if (f[4] != CRY_PERM_V1 && f[4] != CRY_PERM_V2) {
			lwc_errf(err, errlen, "the state's block format %u is unknown to this "
				 "lwc-proxy (it knows 1 and 2): a newer release made it", f[4]);
			mdb_txn_abort(txn);
			rc = LWC_ERR_STORE;
			goto fail;
		}
		st->g.perm = f[4];
	}
	if ((rc = meta_get(txn, st->meta, "cloudstore", &v)) != 0)
		goto lmdb_error;
	if (v.mv_size >= sizeof(st->cs_addr)) {
		rc = MDB_CORRUPTED;
		goto lmdb_error;
	}
	memcpy(st->cs_addr, v.mv_data, v.mv_size);
	if ((rc = meta_get(txn, st->meta, "cs_key_file", &v)) != 0)
		goto lmdb_error;
	if (v.mv_size >= sizeof(st->cs_key_file)) {
		rc = MDB_CORRUPTED;
		goto lmdb_error;
	}
	memcpy(st->cs_key_file, v.mv_data, v.mv_size);
	if ((rc = meta_get(txn, st->meta, "next_table", &v)) != 0)
		goto lmdb_error;
	if (v.mv_size != 8) {
		rc = MDB_CORRUPTED;
		goto lmdb_error;
	}
	st->next_table = (uint32_t)cry_get_be64(v.mv_data);
	if ((rc = load_users(st, txn)) != 0 || (rc = load_catalog(st, txn)) != 0)
		goto lmdb_error;
	{
		uint64_t fmt, reloc, smax, rmax;

		if ((rc = meta_get_u64(txn, st->meta, "format", 1, &fmt)) != 0 ||
		    (rc = meta_get_u64(txn, st->meta, "relocate", 1, &reloc)) != 0 ||
		    (rc = meta_get_u64(txn, st->meta, "stash_max", PX_STASH_MAX_DEFAULT,
				       &smax)) != 0 ||
		    (rc = meta_get_u64(txn, st->meta, "relocate_max", PX_RELOCATE_MAX_DEFAULT,
				       &rmax)) != 0)
			goto lmdb_error;
		if (fmt > PX_STATE_FORMAT) {
			mdb_txn_abort(txn);
			lwc_errf(err, errlen, "%s holds a proxy state of format %llu; this lwc-proxy "
				 "reads formats 1 to %d", dir, (unsigned long long)fmt,
				 PX_STATE_FORMAT);
			rc = LWC_ERR_FORMAT;
			goto fail;
		}
		st->relocate = reloc != 0;
		st->stash_max = smax > UINT32_MAX ? UINT32_MAX : (uint32_t)smax;
		st->relocate_max = rmax > UINT32_MAX ? UINT32_MAX : (uint32_t)rmax;
		st->evict_group = PX_EVICT_GROUP_DEFAULT;
		if (fmt == 1 && (rc = convert_format1(st, txn)) != 0)
			goto lmdb_error;
		/* 2 -> 3: the journal database, opened (created) above; 3 -> 4:
		 * index values become spans.  The format written is refused by
		 * older releases, which would not read it */
		if (fmt < 4 && (rc = convert_spans(st, txn)) != 0)
			goto lmdb_error;
		if (fmt < PX_STATE_FORMAT &&
		    (rc = meta_put_u64v(txn, st->meta, "format", PX_STATE_FORMAT)) != 0)
			goto lmdb_error;
		/* what the last run journaled goes to the databases before they load */
		if ((rc = jr_fold(st, txn)) != 0 || (rc = load_blocks(st, txn)) != 0)
			goto lmdb_error;
		if ((rc = meta_get_u64(txn, st->meta, "next_rowid", 1, &st->next_rowid)) != 0 ||
		    (rc = meta_get_u64(txn, st->meta, "epoch", 0, &st->epoch)) != 0 ||
		    (rc = load_stash(st, txn)) != 0)
			goto lmdb_error;
	}
	if ((rc = mdb_txn_commit(txn)) != 0) {
		txn = NULL;
		goto lmdb_error;
	}
	if (pa_init(&st->pa, st->nblocks) != 0) {
		rc = lmdb_fail(ENOMEM, "open", err, errlen);
		goto fail;
	}
	*out = st;
	return LWC_OK;
lmdb_error:
	if (txn)
		mdb_txn_abort(txn);
	rc = lmdb_fail(rc, "open", err, errlen);
fail:
	if (ops)
		sodium_free(ops);
	px_state_close(st);
	return rc;
}

void px_state_close(struct px_state *st)
{
	if (st == NULL)
		return;
	jr_free(st);
	pa_free(&st->pa);
	grp_free(&st->grps);
	while (st->tables) {
		struct px_table *t = st->tables;
		st->tables = t->next;
		free(t->schema);
		free(t);
	}
	while (st->users) {
		struct px_user *u = st->users;
		st->users = u->next;
		if (u->key)
			sodium_free(u->key);
		free(u);
	}
	if (st->env)
		mdb_env_close(st->env);
	if (st->seal_key)
		sodium_free(st->seal_key);
	if (st->perm_key)
		sodium_free(st->perm_key);
	free(st->version);
	free(st->tag);
	free(st->bits);
	free(st->occ);
	free(st->locked);
	free(st->wanted);
	free(st->pending);
	free(st->phash);
	free(st->stash);
	u64map_free(&st->stash_ix);
	pthread_mutex_destroy(&st->mu);
	pthread_mutex_destroy(&st->users_mu);
	pthread_cond_destroy(&st->cv);
	for (unsigned i = 0; i < PX_BLOCK_CVS; i++)
		pthread_cond_destroy(&st->bcv[i]);
	pthread_mutex_destroy(&st->gc_mu);
	pthread_cond_destroy(&st->gc_cv);
	free(st);
}

struct px_table *px_table_find(struct px_state *st, const uint8_t *handle, size_t len)
{
	if (len != PX_HANDLE_BYTES)
		return NULL;
	for (struct px_table *t = st->tables; t; t = t->next)
		if (!t->dropped && sodium_memcmp(t->handle, handle, PX_HANDLE_BYTES) == 0)
			return t;
	return NULL;
}

/* ---- users ---------------------------------------------------------------- */

static struct px_user *user_find(struct px_state *st, const char *name)
{
	for (struct px_user *u = st->users; u; u = u->next)
		if (strcmp(u->name, name) == 0)
			return u;
	return NULL;
}

static int user_store(struct px_state *st, const struct px_user *u)
{
	uint8_t val[49];
	MDB_val k = { strlen(u->name), (void *)(uintptr_t)u->name }, d = { sizeof(val), val };
	MDB_txn *txn;
	int rc;

	memset(val, 0, sizeof(val));
	val[0] = u->active ? 1 : 0;
	cry_put_be64(val + 1, u->created);
	cry_put_be64(val + 9, u->revoked);
	if (u->active && u->key)
		memcpy(val + 17, u->key, 32);
	pthread_mutex_lock(&st->mu);
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) == 0) {
		if ((rc = mdb_put(txn, st->users_db, &k, &d, 0)) == 0)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
	}
	pthread_mutex_unlock(&st->mu);
	sodium_memzero(val, sizeof(val));
	return rc == 0 ? LWC_OK : LWC_ERR_STORE;
}

int px_user_add(struct px_state *st, const char *name, const uint8_t key[32], int replace,
		char *msg, size_t msglen)
{
	struct px_user *u, saved;
	uint8_t *newkey;
	int rc, existed;

	if (name[0] == '\0' || strlen(name) > PX_NAME_MAX) {
		lwc_errf(msg, msglen, "invalid user name");
		return LWC_ERR_ARG;
	}
	if ((newkey = sodium_malloc(32)) == NULL)
		return LWC_ERR_NOMEM;
	memcpy(newkey, key, 32);
	pthread_mutex_lock(&st->users_mu);
	u = user_find(st, name);
	existed = u != NULL;
	if (u && !replace) {
		pthread_mutex_unlock(&st->users_mu);
		sodium_free(newkey);
		lwc_errf(msg, msglen, "user %s already exists%s (use --replace to re-register)",
			 name, u->active ? "" : " (revoked)");
		return LWC_ERR_EXISTS;
	}
	if (u == NULL) {
		if ((u = calloc(1, sizeof(*u))) == NULL) {
			pthread_mutex_unlock(&st->users_mu);
			sodium_free(newkey);
			return LWC_ERR_NOMEM;
		}
		memcpy(u->name, name, strlen(name) + 1);
		u->next = st->users;
		st->users = u;
	}
	saved = *u;
	u->key = newkey;
	u->active = 1;
	u->created = (uint64_t)time(NULL);
	u->revoked = 0;
	u->gen++;
	if ((rc = user_store(st, u)) != LWC_OK) {
		newkey = u->key;
		*u = saved;
		pthread_mutex_unlock(&st->users_mu);
		sodium_free(newkey);
		lwc_errf(msg, msglen, "cannot store user %s", name);
		return rc;
	}
	if (saved.key)
		sodium_free(saved.key);
	pthread_mutex_unlock(&st->users_mu);
	lwc_errf(msg, msglen, "user %s %s", name, existed ? "re-registered" : "added");
	return LWC_OK;
}

int px_user_revoke(struct px_state *st, const char *name, int *existed)
{
	struct px_user *u;
	int rc = LWC_OK;

	pthread_mutex_lock(&st->users_mu);
	u = user_find(st, name);
	*existed = u != NULL && u->active;
	if (u && u->active) {
		uint8_t *old = u->key;
		u->active = 0;
		u->revoked = (uint64_t)time(NULL);
		u->key = NULL;
		u->gen++;
		rc = user_store(st, u);
		if (rc != LWC_OK) {           /* keep memory and disk in agreement */
			u->active = 1;
			u->key = old;
			u->revoked = 0;
		} else {
			sodium_free(old);     /* the key is gone: nothing to re-encrypt */
		}
	}
	pthread_mutex_unlock(&st->users_mu);
	return rc;
}

int px_user_key(struct px_state *st, const char *name, uint8_t key[32], uint64_t *gen)
{
	struct px_user *u;
	int rc;

	pthread_mutex_lock(&st->users_mu);
	u = user_find(st, name);
	if (u == NULL) {
		rc = LWC_ERR_NO_USER;
	} else if (!u->active) {
		rc = LWC_ERR_REVOKED;
	} else {
		memcpy(key, u->key, 32);
		*gen = u->gen;
		rc = LWC_OK;
	}
	pthread_mutex_unlock(&st->users_mu);
	return rc;
}

int px_user_check(struct px_state *st, const char *name, uint64_t gen, int *replaced)
{
	struct px_user *u;
	int rc;

	pthread_mutex_lock(&st->users_mu);
	u = user_find(st, name);
	rc = u && u->active && u->gen == gen ? LWC_OK : LWC_ERR_REVOKED;
	if (replaced)
		*replaced = u && u->active && u->gen != gen;
	pthread_mutex_unlock(&st->users_mu);
	return rc;
}

void px_user_session(struct px_state *st, const char *name, int delta)
{
	struct px_user *u;

	pthread_mutex_lock(&st->users_mu);
	if ((u = user_find(st, name)) != NULL)
		u->sessions = (uint32_t)((int)u->sessions + delta);
	pthread_mutex_unlock(&st->users_mu);
}
