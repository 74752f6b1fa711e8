/*
 * store_lmdb.c - the embedded block store: one LMDB environment in a
 * directory.
 *
 * Named databases:
 *   blocks   key id(8 BE) || version(8 BE)  ->  the block's bytes
 *   meta     "block_size" -> uint32, "block_count" -> uint64,
 *            "versions_held" -> uint64  (kept in the write transaction)
 *
 * Big-endian keys sort by id then version, so the versions of one block are
 * adjacent and the newest is found with one cursor step.  Every WRITE is
 * one LMDB write transaction, synced to disk by mdb_txn_commit (the
 * environment is opened without MDB_NOSYNC): all-or-nothing, durable before
 * the server acknowledges it.
 *
 * The map grows on demand: MDB_MAP_FULL aborts the transaction, the map is
 * doubled while no transaction is active (a rwlock excludes them) and the
 * write is retried.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lmdb.h>

#include "cry.h"
#include "store.h"

#define LMDB_INITIAL_MAP (1ull << 30)

struct cs_store {
	MDB_env *env;
	MDB_dbi blocks;
	MDB_dbi meta;
	size_t mapsize;
	pthread_rwlock_t resize;      /* held shared by every txn, exclusive to grow */
};

struct cs_session {
	struct cs_store *st;
};

static void make_key(uint8_t k[16], uint64_t id, uint64_t version)
{
	cry_put_be64(k, id);
	cry_put_be64(k + 8, version);
}

static int lmdb_err(int rc, const char *what, char *err, size_t errlen)
{
	lwc_errf(err, errlen, "lmdb %s: %s", what, mdb_strerror(rc));
	return LWC_ERR_STORE;
}

/* A failed write: a full disk says so (LMDB reports a short write as EIO). */
static int lmdb_write_err(struct cs_store *st, int rc, const char *what, char *err,
			  size_t errlen)
{
	const char *path = NULL;

	if (mdb_env_get_path(st->env, &path) != 0)
		path = NULL;
	if (rc > 0 && lwc_disk_full(path, rc, LWC_ERR_STORE) == LWC_ERR_NO_SPACE) {
		lwc_errf(err, errlen, "lmdb %s: no space left on device (%s)", what,
			 mdb_strerror(rc));
		return LWC_ERR_NO_SPACE;
	}
	return lmdb_err(rc, what, err, errlen);
}

static int meta_get_u64(MDB_txn *txn, MDB_dbi dbi, const char *name, uint64_t *out)
{
	MDB_val k = { strlen(name), (void *)(uintptr_t)name }, v;
	int rc = mdb_get(txn, dbi, &k, &v);

	*out = 0;
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return rc;
	if (v.mv_size != 8)
		return MDB_CORRUPTED;
	*out = cry_get_be64(v.mv_data);
	return 0;
}

static int meta_put_u64(MDB_txn *txn, MDB_dbi dbi, const char *name, uint64_t val)
{
	MDB_val k = { strlen(name), (void *)(uintptr_t)name }, v;
	uint8_t buf[8];

	cry_put_be64(buf, val);
	v.mv_size = 8;
	v.mv_data = buf;
	return mdb_put(txn, dbi, &k, &v, 0);
}

static int lmdb_open(struct cs_store **out, const char *spec, uint32_t block_size,
		     char *err, size_t errlen)
{
	struct cs_store *st;
	MDB_txn *txn = NULL;
	struct stat sb;
	char path[4096];
	uint64_t have;
	int rc;

	*out = NULL;
	if (spec == NULL || spec[0] == '\0') {
		lwc_errf(err, errlen, "lmdb store needs a directory (lmdb:DIR)");
		return LWC_ERR_ARG;
	}
	if (mkdir(spec, 0700) != 0 && errno != EEXIST) {
		lwc_errf(err, errlen, "cannot create %s: %s", spec, strerror(errno));
		return LWC_ERR_IO;
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return LWC_ERR_NOMEM;
	pthread_rwlock_init(&st->resize, NULL);
	st->mapsize = LMDB_INITIAL_MAP;
	snprintf(path, sizeof(path), "%s/data.mdb", spec);
	if (stat(path, &sb) == 0 && (size_t)sb.st_size * 2 > st->mapsize)
		st->mapsize = (size_t)sb.st_size * 2;
	if ((rc = mdb_env_create(&st->env)) != 0 ||
	    (rc = mdb_env_set_maxdbs(st->env, 4)) != 0 ||
	    (rc = mdb_env_set_maxreaders(st->env, 256)) != 0 ||
	    (rc = mdb_env_set_mapsize(st->env, st->mapsize)) != 0 ||
	    (rc = mdb_env_open(st->env, spec, MDB_NOTLS | MDB_NORDAHEAD, 0600)) != 0) {
		lwc_errf(err, errlen, "lmdb open %s: %s", spec, mdb_strerror(rc));
		goto fail;
	}
	{
		int dead = 0;
		mdb_reader_check(st->env, &dead);   /* clear readers of a killed process */
	}
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0 ||
	    (rc = mdb_dbi_open(txn, "blocks", MDB_CREATE, &st->blocks)) != 0 ||
	    (rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &st->meta)) != 0 ||
	    (rc = meta_get_u64(txn, st->meta, "block_size", &have)) != 0) {
		lwc_errf(err, errlen, "lmdb init %s: %s", spec, mdb_strerror(rc));
		goto fail;
	}
	if (block_size != 0) {
		if (have != 0 && have != block_size) {
			lwc_errf(err, errlen, "store %s holds blocks of %llu bytes, not %u",
				 spec, (unsigned long long)have, block_size);
			mdb_txn_abort(txn);
			txn = NULL;
			rc = 0;
			goto fail_code;
		}
		if (have == 0 && (rc = meta_put_u64(txn, st->meta, "block_size", block_size)) != 0) {
			lwc_errf(err, errlen, "lmdb init %s: %s", spec, mdb_strerror(rc));
			goto fail;
		}
	}
	if ((rc = mdb_txn_commit(txn)) != 0) {
		txn = NULL;
		lwc_errf(err, errlen, "lmdb init %s: %s", spec, mdb_strerror(rc));
		goto fail;
	}
	*out = st;
	return LWC_OK;
fail:
	if (txn)
		mdb_txn_abort(txn);
	if (st->env)
		mdb_env_close(st->env);
	pthread_rwlock_destroy(&st->resize);
	free(st);
	return LWC_ERR_STORE;
fail_code:
	mdb_env_close(st->env);
	pthread_rwlock_destroy(&st->resize);
	free(st);
	return LWC_ERR_BLOCK_SIZE;
}

static void lmdb_close(struct cs_store *st)
{
	if (st == NULL)
		return;
	mdb_env_close(st->env);
	pthread_rwlock_destroy(&st->resize);
	free(st);
}

static int lmdb_session_open(struct cs_store *st, struct cs_session **out,
			     char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*out = calloc(1, sizeof(**out));
	if (*out == NULL)
		return LWC_ERR_NOMEM;
	(*out)->st = st;
	return LWC_OK;
}

static void lmdb_session_close(struct cs_session *s)
{
	free(s);
}

/* The versions held of id, ascending, at most CS_HELD_MAX (the newest). */
static int held_versions(MDB_cursor *cur, uint64_t id, struct cs_held *h)
{
	uint8_t k[16];
	MDB_val key, val;
	uint64_t tmp[CS_HELD_MAX];
	uint32_t n = 0;
	int rc;

	h->id = id;
	h->n = 0;
	if (id == UINT64_MAX) {
		rc = mdb_cursor_get(cur, &key, &val, MDB_LAST);
	} else {
		make_key(k, id + 1, 0);
		key.mv_size = sizeof(k);
		key.mv_data = k;
		rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
		if (rc == 0)
			rc = mdb_cursor_get(cur, &key, &val, MDB_PREV);
		else if (rc == MDB_NOTFOUND)
			rc = mdb_cursor_get(cur, &key, &val, MDB_LAST);
	}
	while (rc == 0 && n < CS_HELD_MAX) {
		if (key.mv_size != 16 || cry_get_be64(key.mv_data) != id)
			break;
		tmp[n++] = cry_get_be64((const uint8_t *)key.mv_data + 8);
		rc = mdb_cursor_get(cur, &key, &val, MDB_PREV);
	}
	if (rc != 0 && rc != MDB_NOTFOUND)
		return rc;
	for (uint32_t i = 0; i < n; i++)
		h->v[i] = tmp[n - 1 - i];
	h->n = n;
	return 0;
}

static int lmdb_block_size(struct cs_session *s, uint32_t *out, char *err, size_t errlen)
{
	struct cs_store *st = s->st;
	MDB_txn *txn;
	uint64_t bs;
	int rc;

	pthread_rwlock_rdlock(&st->resize);
	rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn);
	if (rc == 0) {
		rc = meta_get_u64(txn, st->meta, "block_size", &bs);
		mdb_txn_abort(txn);
	}
	pthread_rwlock_unlock(&st->resize);
	if (rc != 0)
		return lmdb_err(rc, "block size", err, errlen);
	*out = (uint32_t)bs;
	return LWC_OK;
}

static void describe_missing(MDB_txn *txn, MDB_dbi dbi, uint64_t id, uint64_t version,
			     char *err, size_t errlen)
{
	MDB_cursor *cur;
	struct cs_held h = { .n = 0 };

	if (mdb_cursor_open(txn, dbi, &cur) == 0) {
		held_versions(cur, id, &h);
		mdb_cursor_close(cur);
	}
	cs_missing_text(id, version, h.v, h.n, err, errlen);
}

/*
 * Asks the kernel to fetch a block's pages now: mdb_get only computes where
 * a large value lies (its overflow pages are not touched), so the copies
 * below would fault them in one page at a time, a synchronous disk read
 * each when the store does not fit in memory (MDB_NORDAHEAD: no read-ahead
 * around a fault).  Advised for the whole batch first, the reads queue up
 * together; pages already in memory cost one cheap system call.
 */
static void will_need(const void *p, size_t len, uintptr_t page)
{
	uintptr_t a = (uintptr_t)p;
	uintptr_t lo = a & ~(page - 1), hi = (a + len + page - 1) & ~(page - 1);

	(void)posix_madvise((void *)lo, hi - lo, POSIX_MADV_WILLNEED);
}

static int lmdb_read(struct cs_session *s, const uint64_t *ids, const uint64_t *versions,
		     size_t n, uint8_t *out, size_t block_size, char *err, size_t errlen)
{
	struct cs_store *st = s->st;
	MDB_txn *txn;
	const uint8_t **at = malloc((n ? n : 1) * sizeof(*at));
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	int rc, ret = LWC_OK;

	if (at == NULL) {
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	pthread_rwlock_rdlock(&st->resize);
	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0) {
		pthread_rwlock_unlock(&st->resize);
		free(at);
		return lmdb_err(rc, "read", err, errlen);
	}
	/* find every block (and advise its pages), then copy them */
	for (size_t i = 0; i < n; i++) {
		uint8_t k[16];
		MDB_val key = { sizeof(k), k }, val;

		make_key(k, ids[i], versions[i]);
		rc = mdb_get(txn, st->blocks, &key, &val);
		if (rc == MDB_NOTFOUND) {
			describe_missing(txn, st->blocks, ids[i], versions[i], err, errlen);
			ret = LWC_ERR_NOT_FOUND;
			break;
		}
		if (rc != 0) {
			ret = lmdb_err(rc, "read", err, errlen);
			break;
		}
		if (val.mv_size != block_size) {
			lwc_errf(err, errlen, "block %llu has %zu bytes, store block size is %zu",
				 (unsigned long long)ids[i], val.mv_size, block_size);
			ret = LWC_ERR_STORE;
			break;
		}
		at[i] = val.mv_data;
		will_need(val.mv_data, block_size, page);
	}
	for (size_t i = 0; i < n && ret == LWC_OK; i++)
		memcpy(out + i * block_size, at[i], block_size);
	mdb_txn_abort(txn);
	pthread_rwlock_unlock(&st->resize);
	free(at);
	return ret;
}

/* One attempt at a WRITE; returns an LMDB code (MDB_MAP_FULL means grow and
 * retry) or -1 with *lwc set to a validation failure. */
static int write_txn(struct cs_store *st, const struct cs_block *blocks, size_t n,
		     int *lwc, char *err, size_t errlen)
{
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	uint64_t bs, count, held_total;
	int rc;

	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		return rc;
	if ((rc = meta_get_u64(txn, st->meta, "block_size", &bs)) != 0 ||
	    (rc = meta_get_u64(txn, st->meta, "block_count", &count)) != 0 ||
	    (rc = meta_get_u64(txn, st->meta, "versions_held", &held_total)) != 0 ||
	    (rc = mdb_cursor_open(txn, st->blocks, &cur)) != 0)
		goto out;
	if (bs == 0) {
		bs = blocks[0].len;
		if ((rc = meta_put_u64(txn, st->meta, "block_size", bs)) != 0)
			goto out;
	} else if (bs != blocks[0].len) {
		lwc_errf(err, errlen, "block %llu has %zu bytes; this store's blocks have %llu",
			 (unsigned long long)blocks[0].id, blocks[0].len,
			 (unsigned long long)bs);
		*lwc = LWC_ERR_BLOCK_SIZE;
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct cs_block *b = &blocks[i];
		struct cs_held h;
		uint8_t k[16];
		MDB_val key = { sizeof(k), k }, val = { b->len, (void *)(uintptr_t)b->data };
		uint64_t newest;

		if ((rc = held_versions(cur, b->id, &h)) != 0)
			goto out;
		newest = h.n ? h.v[h.n - 1] : 0;
		if ((*lwc = cs_version_check(b->id, newest, b->version, err, errlen)) != LWC_OK) {
			rc = -1;
			goto out;
		}
		make_key(k, b->id, b->version);
		if ((rc = mdb_put(txn, st->blocks, &key, &val, 0)) != 0)
			goto out;
		if (h.n == 0)
			count++;
		if (b->version != newest)
			held_total++;
		/* keep only version - 1 and version */
		for (uint32_t j = 0; j < h.n; j++) {
			if (h.v[j] + 1 < b->version) {
				make_key(k, b->id, h.v[j]);
				key.mv_size = sizeof(k);
				key.mv_data = k;
				if ((rc = mdb_del(txn, st->blocks, &key, NULL)) != 0)
					goto out;
				held_total--;
			}
		}
	}
	if ((rc = meta_put_u64(txn, st->meta, "block_count", count)) != 0 ||
	    (rc = meta_put_u64(txn, st->meta, "versions_held", held_total)) != 0)
		goto out;
	mdb_cursor_close(cur);
	cur = NULL;
	rc = mdb_txn_commit(txn);
	txn = NULL;
out:
	if (cur)
		mdb_cursor_close(cur);
	if (txn)
		mdb_txn_abort(txn);
	return rc;
}

static int lmdb_write(struct cs_session *s, const struct cs_block *blocks, size_t n,
		      char *err, size_t errlen)
{
	struct cs_store *st = s->st;
	int rc, lwc = LWC_OK;

	for (;;) {
		pthread_rwlock_rdlock(&st->resize);
		rc = write_txn(st, blocks, n, &lwc, err, errlen);
		pthread_rwlock_unlock(&st->resize);
		if (rc != MDB_MAP_FULL)
			break;
		pthread_rwlock_wrlock(&st->resize);
		rc = mdb_env_set_mapsize(st->env, st->mapsize * 2);
		if (rc == 0)
			st->mapsize *= 2;
		pthread_rwlock_unlock(&st->resize);
		if (rc != 0)
			return lmdb_write_err(st, rc, "grow map", err, errlen);
	}
	if (rc == -1)
		return lwc;
	if (rc != 0)
		return lmdb_write_err(st, rc, "write", err, errlen);
	return LWC_OK;
}

static int lmdb_stat(struct cs_session *s, const uint64_t *ids, size_t n,
		     struct cs_stat *out, struct cs_held *held, char *err, size_t errlen)
{
	struct cs_store *st = s->st;
	MDB_txn *txn;
	MDB_cursor *cur = NULL;
	uint64_t bs = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	pthread_rwlock_rdlock(&st->resize);
	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0) {
		pthread_rwlock_unlock(&st->resize);
		return lmdb_err(rc, "stat", err, errlen);
	}
	if ((rc = meta_get_u64(txn, st->meta, "block_size", &bs)) != 0 ||
	    (rc = meta_get_u64(txn, st->meta, "block_count", &out->block_count)) != 0 ||
	    (rc = meta_get_u64(txn, st->meta, "versions_held", &out->versions_held)) != 0 ||
	    (rc = mdb_cursor_open(txn, st->blocks, &cur)) != 0)
		goto out;
	out->block_size = (uint32_t)bs;
	for (size_t i = 0; i < n; i++)
		if ((rc = held_versions(cur, ids[i], &held[i])) != 0)
			goto out;
out:
	if (cur)
		mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	pthread_rwlock_unlock(&st->resize);
	return rc ? lmdb_err(rc, "stat", err, errlen) : LWC_OK;
}

const struct cs_store_ops cs_store_lmdb = {
	.name = "lmdb",
	.open = lmdb_open,
	.close = lmdb_close,
	.session_open = lmdb_session_open,
	.session_close = lmdb_session_close,
	.block_size = lmdb_block_size,
	.read = lmdb_read,
	.write = lmdb_write,
	.stat = lmdb_stat,
};
