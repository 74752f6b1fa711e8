/*
 * store_lmdb.c - the embedded block store: LMDB environments in a directory
 * ("lmdb:DIR[,shards=N]").
 *
 * A store is split by block id into N shards (id mod N), each an LMDB
 * environment of its own: shard 0 is DIR itself, shard i DIR/shard-i.  A
 * new store gets N = 2 (or shards=N, 1..16); an existing one keeps the
 * number it was made with (meta "shards" of shard 0; a store made before
 * shards has none, and is one shard).  Named databases of each shard:
 *   blocks   key id(8 BE) || version(8 BE)  ->  the block's bytes
 *   meta     "block_size" -> uint64, "block_count" -> uint64,
 *            "versions_held" -> uint64 (this shard's, kept in its write
 *            transaction); shard 0 also "shards" -> uint64
 *
 * Big-endian keys sort by id then version, so the versions of one block are
 * adjacent and the newest is found with one cursor step.
 *
 * Why shards: one LMDB environment has one writer, and its commit (the dirty
 * pages copied into the page cache, then fdatasync) is the critical path of
 * a large statement; the shards' commits run on threads of their own, side by
 * side (docs/benchmarks.md, "28 November 2026, later").
 *
 * A WRITE runs in two phases, one thread per shard it touches (shard order
 * for taking the environments' writer locks, so two WRITEs cannot deadlock):
 * each thread begins its shard's write transaction, checks and puts its
 * blocks; once all have, either every transaction commits (durably:
 * environments are opened without MDB_NOSYNC) or, if any check or put
 * failed, every one aborts: a WRITE that fails a check changes nothing.
 * What a single environment cannot give is a commit that is atomic across
 * environments: a crash (or an I/O error) between two shards' commits
 * leaves one shard's blocks at the new version and the other's at the old
 * one, which DESIGN section 7 makes harmless, as for a Redis Cluster
 * (store.h): the proxy never references a version it did not commit, the
 * previous version stays until the block's next WRITE, and writing the same
 * version again is allowed, so such a WRITE is as harmless as a whole one
 * that was never acknowledged.
 *
 * Each map grows on demand: MDB_MAP_FULL aborts the WRITE, the full shard's
 * map is doubled while no transaction of it is active (a rwlock excludes
 * them) and the WRITE is retried (a shard that had committed is written
 * again at the same version).
 *
 * Each shard's data file is kept ahead of its growth (common/lmdb_ahead.h):
 * extended past the last page when a write transaction begins, the region
 * read in by a thread of the shard's, so that LMDB's commits write into
 * page-sized page-cache folios (on Linux 6.16 and later, ext4's large ones
 * cost a quarter of the store's CPU).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lmdb.h>

#include "cry.h"
#include "lmdb_ahead.h"
#include "store.h"

#define LMDB_INITIAL_MAP (1ull << 30)

struct shard {
	MDB_env *env;
	MDB_dbi blocks;
	MDB_dbi meta;
	size_t mapsize;
	pthread_rwlock_t resize;      /* held shared by every txn, exclusive to grow */
	struct lmdb_ahead ahead;      /* the file ahead of growth, in small folios   */
};

struct cs_store {
	struct shard sh[CS_LMDB_SHARDS_MAX];
	unsigned k;                   /* shards                                  */
	_Atomic uint64_t bs;          /* the block size once known (0: not yet)  */
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
static int lmdb_write_err(struct shard *sh, int rc, const char *what, char *err,
			  size_t errlen)
{
	const char *path = NULL;

	if (mdb_env_get_path(sh->env, &path) != 0)
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

/* Open (creating it if need be) one shard's LMDB environment in dir. */
static int shard_open(struct shard *sh, const char *dir, char *err, size_t errlen)
{
	MDB_txn *txn = NULL;
	struct stat sb;
	char path[4096];
	int rc;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		lwc_errf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return LWC_ERR_IO;
	}
	pthread_rwlock_init(&sh->resize, NULL);
	sh->mapsize = LMDB_INITIAL_MAP;
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	if (stat(path, &sb) == 0 && (size_t)sb.st_size * 2 > sh->mapsize)
		sh->mapsize = (size_t)sb.st_size * 2;
	if ((rc = mdb_env_create(&sh->env)) != 0 ||
	    (rc = mdb_env_set_maxdbs(sh->env, 4)) != 0 ||
	    (rc = mdb_env_set_maxreaders(sh->env, 256)) != 0 ||
	    (rc = mdb_env_set_mapsize(sh->env, sh->mapsize)) != 0 ||
	    (rc = mdb_env_open(sh->env, dir, MDB_NOTLS | MDB_NORDAHEAD, 0600)) != 0) {
		lwc_errf(err, errlen, "lmdb open %s: %s", dir, mdb_strerror(rc));
		goto fail;
	}
	{
		int dead = 0;
		mdb_reader_check(sh->env, &dead);   /* clear readers of a killed process */
	}
	if ((rc = mdb_txn_begin(sh->env, NULL, 0, &txn)) != 0 ||
	    (rc = mdb_dbi_open(txn, "blocks", MDB_CREATE, &sh->blocks)) != 0 ||
	    (rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &sh->meta)) != 0) {
		if (txn)
			mdb_txn_abort(txn);
		lwc_errf(err, errlen, "lmdb init %s: %s", dir, mdb_strerror(rc));
		goto fail;
	}
	if ((rc = mdb_txn_commit(txn)) != 0) {
		lwc_errf(err, errlen, "lmdb init %s: %s", dir, mdb_strerror(rc));
		goto fail;
	}
	lmdb_ahead_init(&sh->ahead, sh->env);
	return LWC_OK;
fail:
	if (sh->env)
		mdb_env_close(sh->env);
	sh->env = NULL;
	pthread_rwlock_destroy(&sh->resize);
	return LWC_ERR_STORE;
}

static void shard_close(struct shard *sh)
{
	if (sh->env == NULL)
		return;
	lmdb_ahead_close(&sh->ahead);
	mdb_env_close(sh->env);
	sh->env = NULL;
	pthread_rwlock_destroy(&sh->resize);
}

static void lmdb_close(struct cs_store *st)
{
	if (st == NULL)
		return;
	for (unsigned i = 0; i < st->k; i++)
		shard_close(&st->sh[i]);
	free(st);
}

/* "DIR[,shards=N]": the directory into dir, N into *shards (0: not given). */
static int parse_spec(const char *spec, char *dir, size_t dirlen, unsigned *shards,
		      char *err, size_t errlen)
{
	unsigned long v;
	int ret = cs_dir_spec(spec, "lmdb", "shards", CS_LMDB_SHARDS_MAX, dir, dirlen, &v, err,
			      errlen);

	*shards = (unsigned)v;
	return ret;
}

int cs_lmdb_dir(const char *spec, char *dir, size_t dirlen, char *err, size_t errlen)
{
	unsigned shards;

	return parse_spec(spec ? spec : "", dir, dirlen, &shards, err, errlen);
}

static int lmdb_open(struct cs_store **out, const char *spec, uint32_t block_size,
		     char *err, size_t errlen)
{
	struct cs_store *st;
	MDB_txn *txn = NULL;
	struct shard *s0;
	char dir[4000];
	uint64_t have, k, count;
	unsigned want;
	struct stat sb;
	int rc, ret, used, made;

	*out = NULL;
	if (spec == NULL)
		spec = "";
	if ((ret = parse_spec(spec, dir, sizeof(dir), &want, err, errlen)) != LWC_OK)
		return ret;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return LWC_ERR_NOMEM;
	s0 = &st->sh[0];
	if ((ret = shard_open(s0, dir, err, errlen)) != LWC_OK) {
		free(st);
		return ret;
	}
	st->k = 1;
	ret = LWC_ERR_STORE;
	if ((rc = mdb_txn_begin(s0->env, NULL, 0, &txn)) != 0 ||
	    (rc = meta_get_u64(txn, s0->meta, "block_size", &have)) != 0 ||
	    (rc = meta_get_u64(txn, s0->meta, "shards", &k)) != 0 ||
	    (rc = meta_get_u64(txn, s0->meta, "block_count", &count)) != 0) {
		lwc_errf(err, errlen, "lmdb init %s: %s", dir, mdb_strerror(rc));
		goto fail;
	}
	used = count > 0 || have != 0;
	if (block_size != 0) {
		if (have != 0 && have != block_size) {
			lwc_errf(err, errlen, "store %s holds blocks of %llu bytes, not %u",
				 dir, (unsigned long long)have, block_size);
			ret = LWC_ERR_BLOCK_SIZE;
			goto fail;
		}
		if (have == 0 && (rc = meta_put_u64(txn, s0->meta, "block_size", block_size)) != 0) {
			lwc_errf(err, errlen, "lmdb init %s: %s", dir, mdb_strerror(rc));
			goto fail;
		}
		have = block_size;
	}
	made = k == 0;
	if (k == 0) {
		/* a store made before shards holds its blocks in one environment */
		k = used ? 1 : want ? want : CS_LMDB_SHARDS;
		if ((rc = meta_put_u64(txn, s0->meta, "shards", k)) != 0) {
			lwc_errf(err, errlen, "lmdb init %s: %s", dir, mdb_strerror(rc));
			goto fail;
		}
	}
	if (k > CS_LMDB_SHARDS_MAX) {
		lwc_errf(err, errlen, "store %s has %llu shards (this lwc-cloudstore reads at "
			 "most %u)", dir, (unsigned long long)k, CS_LMDB_SHARDS_MAX);
		goto fail;
	}
	if (want != 0 && want != k) {
		lwc_errf(err, errlen, "store %s has %llu shard%s, not %u (the number is fixed "
			 "when a store is made)", dir, (unsigned long long)k, k == 1 ? "" : "s",
			 want);
		ret = LWC_ERR_ARG;
		goto fail;
	}
	/* the shards' environments before the number is committed: a store
	 * whose number is on disk has every shard's directory */
	for (unsigned i = 1; i < k; i++) {
		char sdir[4096];

		snprintf(sdir, sizeof(sdir), "%s/shard-%u", dir, i);
		if (!made && stat(sdir, &sb) != 0) {
			/* never an empty shard in place of a lost one: its blocks
			 * would be missing, not refused */
			lwc_errf(err, errlen, "store %s has %llu shards but %s is missing: restore "
				 "every shard of the store together (docs/operations.md, "
				 "section 6)", dir, (unsigned long long)k, sdir);
			ret = LWC_ERR_STORE;
			goto fail;
		}
		if ((ret = shard_open(&st->sh[i], sdir, err, errlen)) != LWC_OK)
			goto fail;
		st->k = i + 1;
	}
	rc = mdb_txn_commit(txn);
	txn = NULL;
	if (rc != 0) {
		lwc_errf(err, errlen, "lmdb init %s: %s", dir, mdb_strerror(rc));
		ret = LWC_ERR_STORE;
		goto fail;
	}
	atomic_store(&st->bs, have);
	*out = st;
	return LWC_OK;
fail:
	if (txn)
		mdb_txn_abort(txn);
	lmdb_close(st);
	return ret;
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

static unsigned shard_of(const struct cs_store *st, uint64_t id)
{
	return (unsigned)(id % st->k);
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
	struct shard *sh = &s->st->sh[0];
	MDB_txn *txn;
	uint64_t bs;
	int rc;

	pthread_rwlock_rdlock(&sh->resize);
	rc = mdb_txn_begin(sh->env, NULL, MDB_RDONLY, &txn);
	if (rc == 0) {
		rc = meta_get_u64(txn, sh->meta, "block_size", &bs);
		mdb_txn_abort(txn);
	}
	pthread_rwlock_unlock(&sh->resize);
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

/* A read transaction on every shard (each shard's map held against growth
 * meanwhile); an LMDB code.  read_end undoes it, whatever began. */
static int read_begin(struct cs_store *st, MDB_txn **txn)
{
	int rc = 0;

	for (unsigned j = 0; j < st->k; j++) {
		pthread_rwlock_rdlock(&st->sh[j].resize);
		txn[j] = NULL;
	}
	for (unsigned j = 0; j < st->k && rc == 0; j++)
		if ((rc = mdb_txn_begin(st->sh[j].env, NULL, MDB_RDONLY, &txn[j])) != 0)
			txn[j] = NULL;
	return rc;
}

static void read_end(struct cs_store *st, MDB_txn **txn)
{
	for (unsigned j = 0; j < st->k; j++) {
		if (txn[j])
			mdb_txn_abort(txn[j]);
		pthread_rwlock_unlock(&st->sh[j].resize);
	}
}

static int lmdb_read(struct cs_session *s, const uint64_t *ids, const uint64_t *versions,
		     size_t n, uint8_t *const *dst, size_t block_size, char *err, size_t errlen)
{
	struct cs_store *st = s->st;
	MDB_txn *txn[CS_LMDB_SHARDS_MAX] = { NULL };
	const uint8_t **at = malloc((n ? n : 1) * sizeof(*at));
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	int rc, ret = LWC_OK;

	if (at == NULL) {
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	if ((rc = read_begin(st, txn)) != 0)
		ret = lmdb_err(rc, "read", err, errlen);
	/* find every block (and advise its pages), then copy them */
	for (size_t i = 0; i < n && ret == LWC_OK; i++) {
		struct shard *sh = &st->sh[shard_of(st, ids[i])];
		MDB_txn *t = txn[shard_of(st, ids[i])];
		uint8_t kb[16];
		MDB_val key = { sizeof(kb), kb }, val;

		make_key(kb, ids[i], versions[i]);
		rc = mdb_get(t, sh->blocks, &key, &val);
		if (rc == MDB_NOTFOUND) {
			describe_missing(t, sh->blocks, ids[i], versions[i], err, errlen);
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
		memcpy(dst[i], at[i], block_size);
	read_end(st, txn);
	free(at);
	return ret;
}

/* A shard's blocks into its write transaction: the version rule for each,
 * the shard's block size (pinned by its first WRITE) and its counters.
 * Returns an LMDB code, or -1 with *lwc set to a validation failure. */
static int put_blocks(struct shard *sh, MDB_txn *txn, const struct cs_block *blocks,
		      size_t n, size_t len, int *lwc, char *err, size_t errlen)
{
	MDB_cursor *cur = NULL;
	uint64_t bs, count, held_total;
	int rc;

	if ((rc = meta_get_u64(txn, sh->meta, "block_size", &bs)) != 0 ||
	    (rc = meta_get_u64(txn, sh->meta, "block_count", &count)) != 0 ||
	    (rc = meta_get_u64(txn, sh->meta, "versions_held", &held_total)) != 0)
		return rc;
	if (bs == 0) {
		if ((rc = meta_put_u64(txn, sh->meta, "block_size", len)) != 0)
			return rc;
	} else if (bs != len) {
		lwc_errf(err, errlen, "blocks of %zu bytes; this store's blocks have %llu", len,
			 (unsigned long long)bs);
		*lwc = LWC_ERR_BLOCK_SIZE;
		return -1;
	}
	if (n == 0)
		return 0;
	if ((rc = mdb_cursor_open(txn, sh->blocks, &cur)) != 0)
		return rc;
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
		if ((rc = mdb_put(txn, sh->blocks, &key, &val, 0)) != 0)
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
				if ((rc = mdb_del(txn, sh->blocks, &key, NULL)) != 0)
					goto out;
				held_total--;
			}
		}
	}
	if ((rc = meta_put_u64(txn, sh->meta, "block_count", count)) == 0)
		rc = meta_put_u64(txn, sh->meta, "versions_held", held_total);
out:
	mdb_cursor_close(cur);
	return rc;
}

/* A WRITE's parts meet twice: to begin their transactions in shard order,
 * and once all have put their blocks, to commit or abort together. */
struct wmeet {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned begun;               /* parts past their turn to begin       */
	unsigned ready;               /* parts done putting                   */
	unsigned nparts;
	int failed;                   /* a part failed: every part aborts     */
};

struct wpart {
	struct shard *sh;
	struct wmeet *m;
	struct cs_block *blocks;
	size_t n, len;
	unsigned turn;
	int skip;                     /* no thread for it: fail the WRITE     */
	int rc;                       /* LMDB code; -1: lwc says why          */
	int lwc;
	char err[512];
	pthread_t th;
};

static void *part_main(void *arg)
{
	struct wpart *p = arg;
	struct wmeet *m = p->m;
	MDB_txn *txn = NULL;
	int failed;

	p->rc = 0;
	p->lwc = LWC_OK;
	if (p->skip) {
		/* no thread for it: take its turn and fail the WRITE */
		pthread_mutex_lock(&m->mu);
		while (m->begun != p->turn)
			pthread_cond_wait(&m->cv, &m->mu);
		m->begun++;
		m->failed = 1;
		m->ready++;
		pthread_cond_broadcast(&m->cv);
		pthread_mutex_unlock(&m->mu);
		p->rc = -1;
		p->lwc = LWC_ERR_NOMEM;
		lwc_errf(p->err, sizeof(p->err), "cannot start a thread for a shard's write");
		return NULL;
	}
	pthread_rwlock_rdlock(&p->sh->resize);
	pthread_mutex_lock(&m->mu);
	while (m->begun != p->turn)
		pthread_cond_wait(&m->cv, &m->mu);
	pthread_mutex_unlock(&m->mu);
	if ((p->rc = mdb_txn_begin(p->sh->env, NULL, 0, &txn)) != 0)
		txn = NULL;
	else
		lmdb_ahead_keep(&p->sh->ahead, p->sh->env);
	pthread_mutex_lock(&m->mu);
	m->begun++;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);

	if (p->rc == 0)
		p->rc = put_blocks(p->sh, txn, p->blocks, p->n, p->len, &p->lwc, p->err,
				   sizeof(p->err));
	pthread_mutex_lock(&m->mu);
	if (p->rc != 0)
		m->failed = 1;
	m->ready++;
	pthread_cond_broadcast(&m->cv);
	while (m->ready < m->nparts)
		pthread_cond_wait(&m->cv, &m->mu);
	failed = m->failed;
	pthread_mutex_unlock(&m->mu);

	if (txn != NULL) {
		if (failed) {
			mdb_txn_abort(txn);
		} else {
			p->rc = mdb_txn_commit(txn);
		}
	}
	pthread_rwlock_unlock(&p->sh->resize);
	return NULL;
}

/* One attempt: every part on a thread of its own (the last one on this
 * thread).  Returns the index of the part whose failure to report, or -1. */
static int write_parts(struct wpart *parts, unsigned np)
{
	struct wmeet m;
	unsigned started = 0;
	int bad = -1;

	memset(&m, 0, sizeof(m));
	pthread_mutex_init(&m.mu, NULL);
	pthread_cond_init(&m.cv, NULL);
	m.nparts = np;
	for (unsigned i = 0; i < np; i++) {
		parts[i].m = &m;
		parts[i].turn = i;
		parts[i].skip = 0;
	}
	while (started + 1 < np &&
	       pthread_create(&parts[started].th, NULL, part_main, &parts[started]) == 0)
		started++;
	if (started + 1 < np) {
		/* out of threads: the parts not started fail the WRITE, here, in
		 * turn, and the started ones abort */
		for (unsigned i = started; i < np; i++) {
			parts[i].skip = 1;
			part_main(&parts[i]);
		}
	} else {
		part_main(&parts[np - 1]);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(parts[i].th, NULL);
	/* a check that failed says more than the aborts it caused elsewhere */
	for (unsigned i = 0; i < np && bad < 0; i++)
		if (parts[i].rc == -1)
			bad = (int)i;
	for (unsigned i = 0; i < np && bad < 0; i++)
		if (parts[i].rc != 0)
			bad = (int)i;
	pthread_cond_destroy(&m.cv);
	pthread_mutex_destroy(&m.mu);
	return bad;
}

static int lmdb_write(struct cs_session *s, const struct cs_block *blocks, size_t n,
		      char *err, size_t errlen)
{
	struct cs_store *st = s->st;
	struct wpart parts[CS_LMDB_SHARDS_MAX];
	size_t cnt[CS_LMDB_SHARDS_MAX] = { 0 }, off = 0;
	unsigned part_of[CS_LMDB_SHARDS_MAX];
	struct cs_block *by;
	uint64_t bs = atomic_load(&st->bs);
	size_t len;
	unsigned np = 0;
	int ret = LWC_OK;

	if (n == 0)
		return LWC_OK;
	len = blocks[0].len;
	if (bs != 0 && bs != len) {
		lwc_errf(err, errlen, "block %llu has %zu bytes; this store's blocks have %llu",
			 (unsigned long long)blocks[0].id, len, (unsigned long long)bs);
		return LWC_ERR_BLOCK_SIZE;
	}
	if ((by = malloc(n * sizeof(*by))) == NULL) {
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++)
		cnt[shard_of(st, blocks[i].id)]++;
	memset(parts, 0, sizeof(parts));
	for (unsigned j = 0; j < st->k; j++) {
		/* shard 0 pins the store's block size: it takes part in the
		 * first WRITE whatever its blocks */
		if (cnt[j] == 0 && !(j == 0 && bs == 0))
			continue;
		parts[np].sh = &st->sh[j];
		parts[np].blocks = by + off;
		parts[np].len = len;
		off += cnt[j];
		part_of[j] = np++;
	}
	for (size_t i = 0; i < n; i++) {
		struct wpart *p = &parts[part_of[shard_of(st, blocks[i].id)]];
		p->blocks[p->n++] = blocks[i];
	}
	for (;;) {
		int bad = write_parts(parts, np), grown = 0;

		if (bad < 0) {
			atomic_store(&st->bs, len);
			break;
		}
		/* a full map: grow it (no transaction of it is active) and write
		 * the whole WRITE again */
		for (unsigned i = 0; i < np; i++) {
			struct shard *sh = parts[i].sh;
			int rc;

			if (parts[i].rc != MDB_MAP_FULL)
				continue;
			pthread_rwlock_wrlock(&sh->resize);
			rc = mdb_env_set_mapsize(sh->env, sh->mapsize * 2);
			if (rc == 0)
				sh->mapsize *= 2;
			pthread_rwlock_unlock(&sh->resize);
			if (rc != 0) {
				ret = lmdb_write_err(sh, rc, "grow map", err, errlen);
				goto out;
			}
			grown = 1;
		}
		if (grown && parts[bad].rc == MDB_MAP_FULL)
			continue;
		if (parts[bad].rc == -1) {
			lwc_errf(err, errlen, "%s", parts[bad].err);
			ret = parts[bad].lwc;
		} else {
			ret = lmdb_write_err(parts[bad].sh, parts[bad].rc, "write", err, errlen);
		}
		break;
	}
out:
	free(by);
	return ret;
}

static int lmdb_stat(struct cs_session *s, const uint64_t *ids, size_t n,
		     struct cs_stat *out, struct cs_held *held, char *err, size_t errlen)
{
	struct cs_store *st = s->st;
	MDB_txn *txn[CS_LMDB_SHARDS_MAX] = { NULL };
	MDB_cursor *cur[CS_LMDB_SHARDS_MAX] = { NULL };
	int rc;

	memset(out, 0, sizeof(*out));
	rc = read_begin(st, txn);
	for (unsigned j = 0; j < st->k && rc == 0; j++) {
		uint64_t bs = 0, c = 0, v = 0;

		if ((rc = meta_get_u64(txn[j], st->sh[j].meta, "block_size", &bs)) != 0 ||
		    (rc = meta_get_u64(txn[j], st->sh[j].meta, "block_count", &c)) != 0 ||
		    (rc = meta_get_u64(txn[j], st->sh[j].meta, "versions_held", &v)) != 0 ||
		    (rc = mdb_cursor_open(txn[j], st->sh[j].blocks, &cur[j])) != 0)
			break;
		if (j == 0)
			out->block_size = (uint32_t)bs;
		out->block_count += c;
		out->versions_held += v;
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = held_versions(cur[shard_of(st, ids[i])], ids[i], &held[i]);
	for (unsigned j = 0; j < st->k; j++)
		if (cur[j])
			mdb_cursor_close(cur[j]);
	read_end(st, txn);
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
