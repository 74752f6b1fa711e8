/*
 * cloud_io.c - the cloud store and its blocks for the engine: the pool of cloud
 * connections, READ and WRITE with one retry on a broken connection,
 * sealing and opening a block, growth of the database.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "engine_int.h"
#include "log.h"
#include "par.h"

/* Idle cloud connections shared by the workers: a statement takes one and
 * gives it back, so connections (and their handshakes) are reused. */
#define CLOUD_POOL_MAX 256
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static struct cs_client *pool[CLOUD_POOL_MAX];
static size_t pool_n;

uint64_t px_gamma(const struct px_engine_cfg *cfg, uint64_t k)
{
	uint64_t g;

	switch (cfg->pad) {
	case PX_PAD_FIXED:
		g = cfg->pad_arg > k ? cfg->pad_arg : k;
		break;
	case PX_PAD_POW2:
		g = 1;
		while (g < 2 * k)
			g <<= 1;
		break;
	case PX_PAD_RATIO:
	default:
		g = k * cfg->pad_arg;
		break;
	}
	if (g < cfg->pad_min)
		g = cfg->pad_min;
	return g;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int px_worker_init(struct px_worker *w, struct px_state *st, const struct px_engine_cfg *cfg,
		   const char *name)
{
	memset(w, 0, sizeof(*w));
	w->st = st;
	w->cfg = cfg;
	snprintf(w->name, sizeof(w->name), "%s", name);
	pthread_mutex_init(&w->pipe_mu, NULL);
	pthread_cond_init(&w->pipe_cv, NULL);
	w->scratch = malloc(px_scratch_words(&st->g) * sizeof(uint32_t));
	return w->scratch ? LWC_OK : LWC_ERR_NOMEM;
}

void px_worker_drop(struct px_worker *w)
{
	cloud_release(w);
	cs_client_close(w->cloud);         /* (the pool was full) */
	w->cloud = NULL;
	free(w->scratch);
	w->scratch = NULL;
	pthread_mutex_destroy(&w->pipe_mu);
	pthread_cond_destroy(&w->pipe_cv);
}

void px_worker_fini(struct px_worker *w)
{
	if (w->pre)
		bulk_drop(w, NULL);
	px_worker_drop(w);                 /* its connection into the pool ... */
	pthread_mutex_lock(&pool_mu);      /* ... which closes */
	while (pool_n > 0)
		cs_client_close(pool[--pool_n]);
	pthread_mutex_unlock(&pool_mu);
	if (w->rtxn)
		mdb_txn_abort(w->rtxn);
	w->rtxn = NULL;
}

int px_read_begin(struct px_worker *w, MDB_txn **txn)
{
	int rc;

	if (w->rtxn_busy)
		return mdb_txn_begin(w->st->env, NULL, MDB_RDONLY, txn);
	if (w->rtxn != NULL) {
		if ((rc = mdb_txn_renew(w->rtxn)) != 0) {
			mdb_txn_abort(w->rtxn);
			w->rtxn = NULL;
			return rc;
		}
	} else if ((rc = mdb_txn_begin(w->st->env, NULL, MDB_RDONLY, &w->rtxn)) != 0) {
		w->rtxn = NULL;
		return rc;
	}
	w->rtxn_busy = 1;
	*txn = w->rtxn;
	return 0;
}

int px_worker_warm(struct px_worker *w)
{
	MDB_txn *txn;
	int rc = px_read_begin(w, &txn);

	if (rc == 0)
		px_read_end(w, txn);
	return rc;
}

void px_read_end(struct px_worker *w, MDB_txn *txn)
{
	if (txn == NULL)
		return;
	if (txn == w->rtxn) {
		mdb_txn_reset(txn);
		w->rtxn_busy = 0;
	} else {
		mdb_txn_abort(txn);
	}
}

/* A connection for w: its own, an idle one of the pool, or (fresh, or the
 * pool empty) a new one. */
static int cloud_conn(struct px_worker *w, int fresh, char *err, size_t errlen)
{
	if (w->cloud)
		return LWC_OK;
	pthread_mutex_lock(&pool_mu);
	if (pool_n > 0 && !fresh)
		w->cloud = pool[--pool_n];
	pthread_mutex_unlock(&pool_mu);
	if (w->cloud)
		return LWC_OK;
	return cs_client_connect(&w->cloud, w->cfg->cs_addr, w->cfg->cs_key,
				 w->cfg->cloud_timeout_ms, err, errlen);
}

void cloud_release(struct px_worker *w)
{
	if (w->cloud == NULL)
		return;
	pthread_mutex_lock(&pool_mu);
	if (pool_n < CLOUD_POOL_MAX) {
		pool[pool_n++] = w->cloud;
		w->cloud = NULL;
	}
	pthread_mutex_unlock(&pool_mu);
}

/*
 * Closes every idle connection of the pool.  Called when one turned out
 * broken: the others went to the same cloud store, which most likely
 * restarted or dropped them all, and retrying on each in turn would fail
 * a statement per stale connection (as many as the pool held).
 */
static void pool_flush(void)
{
	struct cs_client *stale[CLOUD_POOL_MAX];
	size_t n;

	pthread_mutex_lock(&pool_mu);
	n = pool_n;
	memcpy(stale, pool, n * sizeof(*stale));
	pool_n = 0;
	pthread_mutex_unlock(&pool_mu);
	while (n > 0)
		cs_client_close(stale[--n]);
}

static int conn_broken(int rc)
{
	return rc == LWC_ERR_CLOSED || rc == LWC_ERR_IO || rc == LWC_ERR_TIMEOUT ||
	       rc == LWC_ERR_PROTO || rc == LWC_ERR_TOO_BIG || rc == LWC_ERR_INTEGRITY;
}

/* A small READ's time, into the moving average of the cloud's round trip
 * (1/8 of each new sample; concurrent updates may lose one, which is only
 * an average's sample). */
static void rtt_sample(struct px_state *st, uint64_t us)
{
	uint32_t old = atomic_load_explicit(&st->cloud_rtt_us, memory_order_relaxed);
	int64_t s = us > UINT32_MAX / 2 ? UINT32_MAX / 2 : (int64_t)us;
	int64_t avg = old == 0 ? s : (int64_t)old + (s - (int64_t)old) / 8;

	atomic_store_explicit(&st->cloud_rtt_us, (uint32_t)(avg > 0 ? avg : 1),
			      memory_order_relaxed);
}

int cloud_read(struct px_worker *w, const uint64_t *ids, const uint64_t *vers, size_t n,
		      Lwc__CsResponse **resp, char *err, size_t errlen)
{
	int rc = LWC_OK;
	uint64_t t0 = 0;

	for (int attempt = 0; attempt < 2; attempt++) {
		/* the retry on a new connection, not on another idle one */
		if ((rc = cloud_conn(w, attempt > 0, err, errlen)) != LWC_OK)
			continue;
		t0 = px_now_us();         /* the round trip, not a new connection's set-up */
		if (w->cfg->rtt_ms > 0)
			sleep_ms(w->cfg->rtt_ms);
		rc = cs_client_read(w->cloud, ids, vers, n, resp, err, errlen);
		if (rc == LWC_OK || !conn_broken(rc))
			break;
		cs_client_close(w->cloud);
		w->cloud = NULL;
		pool_flush();
	}
	if (rc == LWC_OK) {
		atomic_fetch_add(&w->st->reads, 1);
		atomic_fetch_add(&w->st->blocks_moved, n);
		atomic_fetch_add(&w->st->blocks_read, n);
		if (n <= PX_RTT_SAMPLE_BLOCKS)
			rtt_sample(w->st, px_now_us() - t0);
	}
	return rc;
}

/* The WRITE sent on w's connection, its acknowledgement awaited too when
 * wait; a broken connection (or none to be had) has it again on a new one,
 * not on another idle one.  A WRITE may be repeated: the same version
 * again replaces the newer copy. */
static int write_req(struct px_worker *w, struct cs_wframe *f, int wait, int fresh, char *err,
		     size_t errlen)
{
	int rc = LWC_OK;

	for (int attempt = 0; attempt < 2; attempt++) {
		if ((rc = cloud_conn(w, fresh || attempt > 0, err, errlen)) != LWC_OK)
			continue;
		if (w->cfg->rtt_ms > 0)
			sleep_ms(w->cfg->rtt_ms);
		rc = cs_client_write_send(w->cloud, f, err, errlen);
		if (rc == LWC_OK && wait)
			rc = cs_client_write_wait(w->cloud, err, errlen);
		if (rc == LWC_OK || !conn_broken(rc))
			break;
		cs_client_close(w->cloud);
		w->cloud = NULL;
		pool_flush();
	}
	return rc;
}

static int write_counted(struct px_worker *w, size_t n, int rc)
{
	if (rc == LWC_OK) {
		atomic_fetch_add(&w->st->writes, 1);
		atomic_fetch_add(&w->st->blocks_moved, n);
	}
	return rc;
}

int cloud_write(struct px_worker *w, struct cs_wframe *f, size_t n, char *err, size_t errlen)
{
	return write_counted(w, n, write_req(w, f, 1, 0, err, errlen));
}

int cloud_write_send(struct px_worker *w, struct cs_wframe *f, char *err, size_t errlen)
{
	return write_req(w, f, 0, 0, err, errlen);
}

int cloud_write_finish(struct px_worker *w, struct cs_wframe *f, size_t n, char *err,
		       size_t errlen)
{
	int rc = cs_client_write_wait(w->cloud, err, errlen);

	if (rc != LWC_OK && conn_broken(rc)) {
		/* the whole WRITE again, on a new connection */
		cs_client_close(w->cloud);
		w->cloud = NULL;
		pool_flush();
		rc = write_req(w, f, 1, 1, err, errlen);
	}
	return write_counted(w, n, rc);
}

uint8_t *rnd_draw(size_t n)
{
	uint8_t *rnd = malloc(n * PX_BLOCK_RND + 1);

	if (rnd != NULL)
		randombytes_buf(rnd, n * PX_BLOCK_RND);
	return rnd;
}

void rnd_free(uint8_t *rnd, size_t n)
{
	if (rnd == NULL)
		return;
	sodium_memzero(rnd, n * PX_BLOCK_RND);
	free(rnd);
}

/* Permute with the seed of (id, version) and seal under the nonce after
 * rnd's key: plain is destroyed. */
int seal_block(const struct px_state *st, uint32_t *scratch, uint64_t id, uint64_t version,
	       uint8_t *plain, uint8_t *out, const uint8_t *rnd)
{
	uint8_t seed[CRY_SEED_BYTES];
	int rc;

	if ((rc = cry_perm_seed(seed, st->perm_key, id, version)) != LWC_OK)
		return rc;
	rc = cry_permute(plain, st->g.block_bytes, st->g.cell, st->g.perm, seed, scratch);
	sodium_memzero(seed, sizeof(seed));
	if (rc != LWC_OK)
		return rc;
	return cry_block_seal_nonce(out, st->seal_key, id, version, plain, st->g.block_bytes,
				    rnd + PX_RND_KEY);
}

int open_block(const struct px_state *st, uint32_t *scratch, uint64_t id, uint64_t version,
	       const uint8_t *tag, const uint8_t *sealed, size_t len, uint8_t *plain)
{
	uint8_t seed[CRY_SEED_BYTES];
	int rc;

	if (len != st->g.sealed_bytes)
		return LWC_ERR_INTEGRITY;
	if ((rc = cry_block_open(plain, st->seal_key, id, version, sealed, len)) != LWC_OK)
		return rc;
	/* a genuine seal of this id and version that the proxy never committed
	 * (a write of a failed statement, or one cut short by a crash) */
	if (sodium_memcmp(sealed + len - CRY_TAG_BYTES, tag, CRY_TAG_BYTES) != 0)
		return LWC_ERR_INTEGRITY;
	if ((rc = cry_perm_seed(seed, st->perm_key, id, version)) != LWC_OK)
		return rc;
	rc = cry_unpermute(plain, st->g.block_bytes, st->g.cell, st->g.perm, seed, scratch);
	sodium_memzero(seed, sizeof(seed));
	return rc;
}

/*
 * Fresh random bytes in every empty slot of a block (bits: its occupancy;
 * NULL: the whole block): the ChaCha20 keystream under the block's random
 * key (the first PX_RND_KEY bytes of rnd).  The keystream of all the empty
 * slots is made in one call, in the scratch after the permutation's words,
 * and copied run by run: one short call per run (a block of 40 rows in 64
 * slots has a dozen runs) spent most of its time outside the cipher's wide
 * path, 5.5 us a block against 2.5.
 */
void fill_empty(const struct px_state *st, uint8_t *blk, const uint64_t *bits,
		uint32_t *scratch, const uint8_t *rnd)
{
	const struct px_geom *g = &st->g;
	const uint8_t *key = rnd;
	uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES] = { 0 };
	uint8_t *ks;
	size_t empty = 0, off = 0;

	_Static_assert(PX_RND_KEY == crypto_stream_chacha20_ietf_KEYBYTES, "PX_RND_KEY");
	if (bits == NULL) {
		crypto_stream_chacha20_ietf(blk, g->block_bytes, nonce, key);
		return;
	}
	for (uint32_t slot = 0; slot < g->m; slot++)
		empty += !px_bit(bits, slot);
	ks = (uint8_t *)(scratch + cry_perm_scratch_words(g->block_bytes, g->cell));
	crypto_stream_chacha20_ietf(ks, empty * g->S, nonce, key);
	for (uint32_t slot = 0; slot < g->m;) {
		uint32_t end = slot;

		if (px_bit(bits, slot)) {
			slot++;
			continue;
		}
		while (end < g->m && !px_bit(bits, end))
			end++;
		memcpy(blk + (size_t)slot * g->S, ks + off, (size_t)(end - slot) * g->S);
		off += (size_t)(end - slot) * g->S;
		slot = end;
	}
}

struct grow_arg {
	const struct px_state *st;
	uint64_t first;
	uint8_t *plain, *tags;
	uint8_t **dst;                 /* where block i is sealed (its frame) */
	const uint8_t *rnd;            /* PX_BLOCK_RND bytes per block */
};

static int grow_one(void *p, size_t i, uint32_t *scratch)
{
	struct grow_arg *a = p;
	const struct px_state *st = a->st;
	uint64_t id = a->first + i;
	uint8_t *plain = a->plain + i * st->g.block_bytes;
	uint8_t *out = a->dst[i];
	int rc;

	fill_empty(st, plain, NULL, NULL, a->rnd + i * PX_BLOCK_RND);
	rc = seal_block(st, scratch, id, 1, plain, out, a->rnd + i * PX_BLOCK_RND);
	memcpy(a->tags + i * CRY_TAG_BYTES, out + st->g.sealed_bytes - CRY_TAG_BYTES,
	       CRY_TAG_BYTES);
	return rc;
}

int px_grow(struct px_worker *w, uint64_t n, char *err, size_t errlen)
{
	struct px_state *st = w->st;
	uint64_t first = st->nblocks, done = 0;
	size_t batch = w->cfg->batch_blocks ? w->cfg->batch_blocks : 1024;
	uint8_t *plain = NULL, **dst = NULL;
	uint8_t *tags = malloc(n * CRY_TAG_BYTES);
	uint64_t *zero = calloc(st->g.words, sizeof(uint64_t));
	MDB_txn *txn = NULL;
	int rc = LWC_OK;

	if (batch > n)
		batch = (size_t)n;
	plain = malloc(batch * st->g.block_bytes);
	dst = malloc(batch * sizeof(*dst));
	if (!plain || !dst || zero == NULL || tags == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	if ((rc = px_blocks_reserve(st, first + n)) != LWC_OK)
		goto out;
	/* the new ids are beyond nblocks: nobody else touches them, so the
	 * state lock is not held across the cloud round trips */
	st->growing = 1;
	atomic_store(&st->grow_wanted, 0);
	pthread_mutex_unlock(&st->mu);
	while (done < n && rc == LWC_OK) {
		size_t cnt = n - done < batch ? (size_t)(n - done) : batch;
		struct grow_arg ga = { st, first + done, plain, tags + done * CRY_TAG_BYTES, dst,
				       rnd_draw(cnt) };
		struct cs_wframe *wf;

		if (ga.rnd == NULL ||
		    (wf = cs_wframe_new_run(cnt, first + done, 1, st->g.sealed_bytes, dst)) == NULL) {
			rnd_free((uint8_t *)ga.rnd, cnt);
			rc = LWC_ERR_NOMEM;
			break;
		}
		rc = par_for(cnt, grow_one, &ga, w->scratch, NULL);
		rnd_free((uint8_t *)ga.rnd, cnt);
		if (rc == LWC_OK)
			rc = cloud_write(w, wf, cnt, err, errlen);
		cs_wframe_free(wf);
		done += cnt;
	}
	pthread_mutex_lock(&st->mu);
	st->growing = 0;
	pthread_cond_broadcast(&st->cv);
	if (rc != LWC_OK)
		goto out;
	/* durable in the cloud: now the proxy's own commit */
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) == 0) {
		for (uint64_t i = 0; i < n && rc == 0; i++)
			rc = px_block_put(st, txn, first + i, 1, tags + i * CRY_TAG_BYTES, zero);
		if (rc == 0)
			rc = px_meta_put_u64(st, txn, "nblocks", first + n);
		if (rc == 0)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
	}
	if (rc != 0) {
		const char *why;
		int code = px_mdb_err(st, rc, &why);
		lwc_errf(err, errlen, "proxy state: %s", why);
		rc = code;
		goto out;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t id = first + i;
		st->version[id] = 1;
		memcpy(st->tag + id * CRY_TAG_BYTES, tags + i * CRY_TAG_BYTES, CRY_TAG_BYTES);
		pa_touch(&st->pa, id);
		memset(st->bits + id * st->g.words, 0, st->g.words * sizeof(uint64_t));
		st->occ[id] = 0;
		st->locked[id] = 0;
	}
	st->nblocks = first + n;
out:
	if (plain)
		sodium_memzero(plain, batch * st->g.block_bytes);
	free(plain);
	free(dst);
	free(tags);
	free(zero);
	return rc;
}
