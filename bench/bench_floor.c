/*
 * bench_floor.c - the design's floor per block (issue 11): on one core, with
 * the project's own functions, the cryptography that DESIGN.md requires of
 * every block a statement reads and writes, and of every row it returns:
 *
 *   the cloud store seals its READ answer on the proxy-cloud channel, the
 *   proxy opens it (a skeleton frame, chan.h: everything but the blocks'
 *   data authenticated, the proxy opening every block itself); the proxy
 *   opens the block's seal (XChaCha20-Poly1305 under K_OPS), un-permutes
 *   its cells, refills the empty slots with fresh random bytes (one key per
 *   block, ChaCha20 over the empty slots, as
 *   proxy/cloud_io.c fill_empty does), permutes with the next version's seed
 *   and seals again; the WRITE crosses the channel the other way (a clear
 *   frame: the whole message authenticated, the store storing it); each
 *   returned record crosses the user-proxy channel (sealed by the proxy,
 *   opened by the client, the same secretstream per byte) and the client
 *   opens it (XChaCha20-Poly1305 under the record key).
 *
 * and, once per statement, what DESIGN.md section 7 requires before the
 * user gets an answer: the cloud store's WRITE durable, then the proxy's
 * commit durable.  Each is an LMDB commit: its pages synced (fdatasync),
 * then its meta page written synchronously (O_DSYNC), measured here as a
 * 4 KB write and fdatasync, then a 4 KB O_DSYNC write, in the deployment's
 * directory.
 *
 * Nothing else is counted: no LMDB work, no sockets, no copies, no index.
 * With libsodium's primitives on this machine's cores, a statement of gamma
 * blocks and k rows therefore cannot take less than 2 x commit + (gamma x
 * block + k x row) / cores, however the rest is implemented (the refill is
 * timed for one run of empty slots, its cheapest case; cores is what the
 * machine's vCPUs are worth at this work together, measure_share); a
 * SELECT, which changes nothing and answers before the proxy's commit (serve
 * --answer-early durable, the default), not less than one commit + the
 * rest: print_floor_targets sets that beside each SELECT line (a floor
 * with both commits, as before 3 December 2026, was up to one commit
 * higher).
 *
 * Beside the floor, not in it: what this machine's disk takes to make a
 * WRITE's blocks durable as the store's LMDB shards do (write_us below).
 * That cost belongs to the store engine, not to the design: LMDB's
 * copy-on-write puts each block's pages wherever its free list has room,
 * so a WRITE is hundreds of separate writes, where a store that appended
 * would write one run.  Both are timed, and print_targets sets the first
 * beside each line too.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "bench.h"
#include "chan.h"
#include "cs_wire.h"
#include "cry.h"

struct floor_res FLOOR;

struct floorarg {
	struct chan *cli, *srv;          /* a user channel (version 1)          */
	struct chan *ccli, *csrv;        /* a proxy-cloud channel (with modes)  */
	uint8_t *plain, *sealed, *msg, *ct, *rec;
	uint8_t *rmsg;                   /* a READ answer of msg_blocks blocks  */
	size_t rmsg_len;
	uint8_t key[CRY_KEY_BYTES], seed[CRY_SEED_BYTES];
	uint32_t *scratch;
	size_t block_bytes, sealed_bytes, empty_bytes, msg_blocks, S;
	unsigned cell;
	uint64_t ver;
};

/* One proxy-cloud message of msg_blocks sealed blocks in a clear frame,
 * sealed by one end and opened by the other (a READ answer or a WRITE). */
static int do_chan(void *p)
{
	struct floorarg *a = p;
	size_t len = a->msg_blocks * a->sealed_bytes, got = 0;
	unsigned mode = 0;
	int rc = chan_seal_mode_inplace(a->csrv, a->ct, len, CHAN_MODE_CLEAR);

	if (rc == LWC_OK)
		rc = chan_open_mode_inplace(a->ccli, a->ct, len + CHAN_ABYTES + CHAN_MODE_BYTES,
					    &got, &mode);
	return rc == LWC_OK && (got != len || mode != CHAN_MODE_CLEAR) ? LWC_ERR_INTEGRITY : rc;
}

/* A READ answer of msg_blocks blocks in a skeleton frame, sealed by the
 * store's end and opened by the proxy's. */
static int do_read_chan(void *p)
{
	struct floorarg *a = p;
	size_t got = 0;
	unsigned mode = 0;
	int rc = chan_seal_mode_inplace(a->csrv, a->rmsg, a->rmsg_len, CHAN_MODE_SKELETON);

	if (rc == LWC_OK)
		rc = chan_open_mode_inplace(a->ccli, a->rmsg,
					    a->rmsg_len + CHAN_ABYTES + CHAN_MODE_BYTES, &got, &mode);
	return rc == LWC_OK && (got != a->rmsg_len || mode != CHAN_MODE_SKELETON) ?
	       LWC_ERR_INTEGRITY : rc;
}

/* rmsg: CsResponse { seq = 1, read = 3 { blocks = 1 { id, version, data }
 * x msg_blocks } } at CHAN_PLAIN_OFF, as the store packs it. */
static void read_answer(struct floorarg *a)
{
	uint64_t *ids = xmalloc(a->msg_blocks * sizeof(*ids));
	uint64_t *vers = xmalloc(a->msg_blocks * sizeof(*vers));
	uint8_t **data = xmalloc(a->msg_blocks * sizeof(*data));
	size_t body;

	for (size_t i = 0; i < a->msg_blocks; i++) {
		ids[i] = 1000000 - i;
		vers[i] = a->ver;
	}
	a->rmsg_len = cs_wire_read_answer_len(12345, ids, vers, a->msg_blocks, a->sealed_bytes,
					      &body);
	a->rmsg = xmalloc(CHAN_PLAIN_OFF + a->rmsg_len + CHAN_ABYTES + CHAN_MODE_BYTES);
	cs_wire_read_answer(a->rmsg + CHAN_PLAIN_OFF, 12345, ids, vers, a->msg_blocks,
			    a->sealed_bytes, body, data);
	for (size_t i = 0; i < a->msg_blocks; i++)
		randombytes_buf(data[i], a->sealed_bytes);
	free(ids);
	free(vers);
	free(data);
}

/* The same bytes on the user channel (sealed frames): the rows' rate. */
static int do_user_chan(void *p)
{
	struct floorarg *a = p;
	size_t len = a->msg_blocks * a->sealed_bytes, got = 0;
	int rc = chan_seal(a->srv, a->msg, len, a->ct);

	if (rc == LWC_OK)
		rc = chan_open(a->cli, a->ct, len + CHAN_ABYTES, a->msg, &got);
	return rc == LWC_OK && got != len ? LWC_ERR_INTEGRITY : rc;
}

static int do_open(void *p)
{
	struct floorarg *a = p;
	return cry_block_open(a->plain, a->key, 7, a->ver, a->sealed, a->sealed_bytes);
}

static int do_unperm(void *p)
{
	struct floorarg *a = p;
	int rc = cry_perm_seed(a->seed, a->key, 7, a->ver);
	return rc ? rc : cry_unpermute(a->plain, a->block_bytes, a->cell, CRY_PERM_V2, a->seed,
				       a->scratch);
}

static int do_fill(void *p)
{
	struct floorarg *a = p;
	uint8_t k[crypto_stream_chacha20_ietf_KEYBYTES];
	uint8_t n[crypto_stream_chacha20_ietf_NONCEBYTES] = { 1 };

	randombytes_buf(k, sizeof(k));
	crypto_stream_chacha20_ietf(a->plain + a->block_bytes - a->empty_bytes, a->empty_bytes,
				    n, k);
	sodium_memzero(k, sizeof(k));
	return LWC_OK;
}

static int do_perm(void *p)
{
	struct floorarg *a = p;
	int rc = cry_perm_seed(a->seed, a->key, 7, a->ver + 1);
	return rc ? rc : cry_permute(a->plain, a->block_bytes, a->cell, CRY_PERM_V2, a->seed,
				     a->scratch);
}

static int do_seal(void *p)
{
	struct floorarg *a = p;
	/* sealed as the current version again, so do_open keeps opening it */
	return cry_block_seal(a->sealed, a->key, 7, a->ver, a->plain, a->block_bytes);
}

/* One block as the proxy handles it between its READ and its WRITE: open,
 * un-permute, refill, permute, seal. */
static int do_block(void *p)
{
	int rc;

	if ((rc = do_open(p)) != LWC_OK || (rc = do_unperm(p)) != LWC_OK ||
	    (rc = do_fill(p)) != LWC_OK || (rc = do_perm(p)) != LWC_OK)
		return rc;
	return do_seal(p);
}

static int do_record(void *p)
{
	struct floorarg *a = p;
	return cry_record_open(a->rec, a->key, a->plain, a->S, "scat");
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median microseconds of one LMDB-like durable commit in dir: 4 KB written
 * and fdatasync'ed, then 4 KB written to a file opened O_DSYNC. */
static double commit_us(const char *dir)
{
	enum { REPS = 41 };
	char data[PATH_MAX + 32], meta[PATH_MAX + 32];
	double t[REPS];
	uint8_t page[4096];
	int fd, mfd;

	snprintf(data, sizeof(data), "%s/floor-data", dir);
	snprintf(meta, sizeof(meta), "%s/floor-meta", dir);
	fd = open(data, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	mfd = open(meta, O_RDWR | O_CREAT | O_TRUNC | O_DSYNC | O_CLOEXEC, 0600);
	if (fd < 0 || mfd < 0)
		die("floor: %s: %s", fd < 0 ? data : meta, strerror(errno));
	randombytes_buf(page, sizeof(page));
	for (int i = 0; i < REPS; i++) {
		double t0 = now_s();

		if (pwrite(fd, page, sizeof(page), (off_t)(i % 16) * 4096) != (ssize_t)sizeof(page) ||
		    fdatasync(fd) != 0 ||
		    pwrite(mfd, page, sizeof(page), (off_t)(i % 2) * 4096) != (ssize_t)sizeof(page))
			die("floor: writing in %s: %s", dir, strerror(errno));
		t[i] = (now_s() - t0) * 1e6;
	}
	close(fd);
	close(mfd);
	unlink(data);
	unlink(meta);
	qsort(t, REPS, sizeof(t[0]), cmp_dbl);
	return t[REPS / 2];
}

/*
 * The store's durable writes, as its two LMDB shards make them for one
 * WRITE of 1,024 blocks: on two threads at once, each writes 512 blocks of
 * the pages an LMDB overflow value of a sealed block takes, then
 * fdatasync()s, into a file of its own (written through first, so no page
 * is new: the store's files are warm after a load).  Scattered: each block
 * at a random page-aligned offset, as copy-on-write reuses freed pages;
 * contiguous: the 512 one after the other.  Median of WR_ROUNDS rounds,
 * microseconds a block (both threads' blocks).
 */
#define WR_SHARDS 2
#define WR_BLOCKS 512
#define WR_ROUNDS 7
#define WR_FILE (128u << 20)

struct wr_part {
	int fd;
	size_t bytes;                  /* a block's pages                     */
	int scattered;
	const uint8_t *buf;
	int err;
};

static void *wr_main(void *p)
{
	struct wr_part *w = p;
	size_t slots = WR_FILE / w->bytes;
	size_t base = randombytes_uniform((uint32_t)(slots - WR_BLOCKS));

	for (size_t i = 0; i < WR_BLOCKS && !w->err; i++) {
		size_t at = w->scattered ? randombytes_uniform((uint32_t)slots) : base + i;
		ssize_t n = pwrite(w->fd, w->buf, w->bytes, (off_t)(at * w->bytes));

		if (n != (ssize_t)w->bytes)
			w->err = n < 0 ? errno : EIO;
	}
	if (!w->err && fdatasync(w->fd) != 0)
		w->err = errno;
	return NULL;
}

/* Median microseconds a block of WR_ROUNDS rounds over the prepared files. */
static double write_rounds(struct wr_part *part, char path[][PATH_MAX + 32], int scattered)
{
	double t[WR_ROUNDS];

	for (int r = 0; r < WR_ROUNDS; r++) {
		pthread_t th[WR_SHARDS];
		double t0 = now_s();

		for (int j = 0; j < WR_SHARDS; j++) {
			part[j].err = 0;
			part[j].scattered = scattered;
			if (pthread_create(&th[j], NULL, wr_main, &part[j]) != 0)
				die("floor: no thread");
		}
		for (int j = 0; j < WR_SHARDS; j++) {
			pthread_join(th[j], NULL);
			if (part[j].err)
				die("floor: writing %s: %s", path[j], strerror(part[j].err));
		}
		t[r] = (now_s() - t0) * 1e6 / (WR_SHARDS * WR_BLOCKS);
	}
	qsort(t, WR_ROUNDS, sizeof(t[0]), cmp_dbl);
	return t[WR_ROUNDS / 2];
}

/* The files written through once, then both patterns timed on them. */
static void write_us(const char *dir, size_t sealed_bytes, double *scattered_us, double *seq_us)
{
	char path[WR_SHARDS][PATH_MAX + 32];
	struct wr_part part[WR_SHARDS];
	size_t bytes = (sealed_bytes + 16 + 4095) / 4096 * 4096;   /* + LMDB's page header */
	uint8_t *buf = xmalloc(1u << 20);

	randombytes_buf(buf, 1u << 20);
	for (int j = 0; j < WR_SHARDS; j++) {
		snprintf(path[j], sizeof(path[j]), "%s/floor-shard-%d", dir, j);
		part[j].fd = open(path[j], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (part[j].fd < 0)
			die("floor: %s: %s", path[j], strerror(errno));
		for (size_t off = 0; off < WR_FILE; off += 1u << 20)
			if (pwrite(part[j].fd, buf, 1u << 20, (off_t)off) != (ssize_t)(1u << 20))
				die("floor: writing %s: %s", path[j], strerror(errno));
		if (fdatasync(part[j].fd) != 0)
			die("floor: fdatasync %s: %s", path[j], strerror(errno));
		part[j].bytes = bytes;
		part[j].buf = buf;
	}
	*scattered_us = write_rounds(part, path, 1);
	*seq_us = write_rounds(part, path, 0);
	for (int j = 0; j < WR_SHARDS; j++) {
		close(part[j].fd);
		unlink(path[j]);
	}
	free(buf);
}

/*
 * The cores as the floor counts them.  A vCPU is not always a core's worth of
 * this work: two vCPUs of a VM may be one physical core's two hardware
 * threads, or share its caches and memory, so that both sealing at once each
 * take longer than one alone.  do_block on one thread, then on ncpu threads
 * at once (each its own block, started together): each thread's time a
 * block against the one alone gives the cores' worth of ncpu vCPUs.
 */
struct share_thr {
	struct floorarg a;
	pthread_barrier_t *start;
	double us;
};

static void *share_main(void *p)
{
	struct share_thr *t = p;

	pthread_barrier_wait(t->start);
	t->us = time_loop(do_block, &t->a, 0.3) * 1e6;
	return NULL;
}

/* A block's buffers for the do_* steps (its sizes, cell and key set): a
 * random plain block, sealed as the current version. */
static void block_bufs(struct floorarg *t)
{
	t->plain = xmalloc(t->block_bytes);
	t->sealed = xmalloc(t->sealed_bytes);
	t->scratch = xmalloc(cry_perm_scratch_words(t->block_bytes, t->cell) * sizeof(uint32_t) + 64);
	randombytes_buf(t->plain, t->block_bytes);
	if (cry_block_seal(t->sealed, t->key, 7, t->ver, t->plain, t->block_bytes) != LWC_OK)
		die("floor: seal failed");
}

static void block_bufs_free(struct floorarg *t)
{
	free(t->plain);
	free(t->sealed);
	free(t->scratch);
}

/* a thread's own block, of a's sizes and under a's key */
static void share_arg(struct floorarg *t, const struct floorarg *a)
{
	memset(t, 0, sizeof(*t));
	t->S = a->S;
	t->cell = a->cell;
	t->ver = a->ver;
	t->block_bytes = a->block_bytes;
	t->sealed_bytes = a->sealed_bytes;
	t->empty_bytes = a->empty_bytes;
	memcpy(t->key, a->key, sizeof(t->key));
	block_bufs(t);
}

static void measure_share(const struct floorarg *a, struct floor_res *f)
{
	long n = ncpu > 1 ? ncpu : 1;
	struct share_thr *t = xmalloc((size_t)n * sizeof(*t));
	pthread_t *tid = xmalloc((size_t)n * sizeof(*tid));
	pthread_barrier_t start;
	double sum = 0;

	share_arg(&t[0].a, a);
	f->block_alone_us = time_loop(do_block, &t[0].a, 0.3) * 1e6;
	for (long i = 1; i < n; i++)
		share_arg(&t[i].a, a);
	pthread_barrier_init(&start, NULL, (unsigned)n);
	for (long i = 0; i < n; i++) {
		t[i].start = &start;
		if (pthread_create(&tid[i], NULL, share_main, &t[i]) != 0)
			die("floor: pthread_create failed");
	}
	for (long i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		sum += t[i].us;
	}
	pthread_barrier_destroy(&start);
	f->block_shared_us = sum / (double)n;
	f->cores = (double)n * f->block_alone_us / f->block_shared_us;
	if (f->cores > (double)n)
		f->cores = (double)n;
	for (long i = 0; i < n; i++)
		block_bufs_free(&t[i].a);
	free(t);
	free(tid);
}

/* A ready client/server channel pair, in memory (modes: the proxy-cloud
 * channel's version). */
static void chan_pair(struct chan **cli, struct chan **srv, int modes)
{
	uint8_t psk[32], *hello = NULL, *reply = NULL, *auth = NULL, *proof = NULL;
	size_t hl, rl, al, pl;
	char err[256] = "";

	randombytes_buf(psk, sizeof(psk));
	if (chan_new(cli, 0) != LWC_OK || chan_new(srv, 1) != LWC_OK)
		die("floor: out of memory");
	if (modes) {
		chan_use_skeleton(*cli, cs_wire_read_skeleton);
		chan_use_modes(*srv);
		chan_use_skeleton(*srv, cs_wire_read_skeleton);
	}
	if (chan_client_hello(*cli, "floor", &hello, &hl) != LWC_OK ||
	    chan_server_hello(*srv, hello, hl) != LWC_OK ||
	    chan_server_reply(*srv, psk, &reply, &rl) != LWC_OK ||
	    chan_client_auth(*cli, psk, reply, rl, &auth, &al, err, sizeof(err)) != LWC_OK ||
	    chan_server_auth(*srv, auth, al, &proof, &pl) != LWC_OK ||
	    chan_client_finish(*cli, proof, pl, err, sizeof(err)) != LWC_OK)
		die("floor: channel handshake failed %s", err);
	free(hello);
	free(reply);
	free(auth);
	free(proof);
	sodium_memzero(psk, sizeof(psk));
}

void measure_floor(unsigned m, unsigned S, unsigned full, unsigned cell, const char *dir)
{
	struct floorarg a;
	struct floor_res *f = &FLOOR;
	uint8_t rec_key[CRY_KEY_BYTES];

	memset(&a, 0, sizeof(a));
	memset(f, 0, sizeof(*f));
	f->m = m;
	f->S = S;
	f->full = full < m ? full : m;
	f->cell = cell;
	a.S = S;
	a.cell = cell;
	a.ver = 41;
	a.block_bytes = (size_t)m * S;
	a.sealed_bytes = a.block_bytes + CRY_SEAL_OVERHEAD;
	a.empty_bytes = (size_t)(m - f->full) * S;
	a.msg_blocks = 64;
	a.rec = xmalloc(S);
	a.msg = xmalloc(a.msg_blocks * a.sealed_bytes);
	a.ct = xmalloc(a.msg_blocks * a.sealed_bytes + CHAN_ABYTES + CHAN_MODE_BYTES);
	randombytes_buf(a.key, sizeof(a.key));
	block_bufs(&a);
	randombytes_buf(a.msg, a.msg_blocks * a.sealed_bytes);
	randombytes_buf(a.ct, a.msg_blocks * a.sealed_bytes + CHAN_ABYTES + CHAN_MODE_BYTES);
	chan_pair(&a.cli, &a.srv, 0);
	chan_pair(&a.ccli, &a.csrv, 1);
	/* one record under the same key, opened from the front of the block */
	memcpy(rec_key, a.key, sizeof(rec_key));
	randombytes_buf(a.rec, S - CRY_RECORD_OVERHEAD);
	if (cry_record_seal(a.plain, rec_key, a.rec, S - CRY_RECORD_OVERHEAD, "scat") != LWC_OK)
		die("floor: record seal failed");
	progress("floor: per-block cryptography, %u x %u B", m, S);
	f->record_us = time_loop(do_record, &a, 0.1) * 1e6;
	read_answer(&a);
	f->chan_us = time_loop(do_chan, &a, 0.2) * 1e6 / (double)a.msg_blocks;
	f->read_chan_us = time_loop(do_read_chan, &a, 0.2) * 1e6 / (double)a.msg_blocks;
	f->user_chan_us = time_loop(do_user_chan, &a, 0.2) * 1e6 / (double)a.msg_blocks;
	f->open_us = time_loop(do_open, &a, 0.1) * 1e6;
	f->unperm_us = time_loop(do_unperm, &a, 0.1) * 1e6;
	f->fill_us = time_loop(do_fill, &a, 0.1) * 1e6;
	f->perm_us = time_loop(do_perm, &a, 0.1) * 1e6;
	f->seal_us = time_loop(do_seal, &a, 0.1) * 1e6;
	/* a block crosses the channel twice (READ answer, WRITE): each end seals
	 * once and opens once, half of each crossing */
	f->proxy_us = (f->read_chan_us + f->chan_us) / 2 + f->open_us + f->unperm_us +
		      f->fill_us + f->perm_us + f->seal_us;
	f->store_us = (f->read_chan_us + f->chan_us) / 2;
	/* a returned record: S bytes over the user's channel, then opened */
	f->row_us = f->record_us + f->user_chan_us * (double)S / (double)a.sealed_bytes;
	f->block_us = f->proxy_us + f->store_us;
	progress("floor: a block on %ld vCPUs at once", ncpu);
	measure_share(&a, f);
	f->commit_us = commit_us(dir);
	progress("floor: the store's durable writes in %s", dir);
	write_us(dir, a.sealed_bytes, &f->write_us, &f->write_seq_us);
	f->done = 1;
	out("\n== The design's floor per block (one core; the cryptography DESIGN.md requires, "
	    "nothing else), %u slots of %u B, %u full, %u-byte cells, microseconds\n"
	    "proxy-cloud channel, seal + open: READ answer (skeleton frame) %.2f, WRITE (clear "
	    "frame) %.2f (sealed, as on the user channel: %.2f); block open %.2f, un-permute %.2f, refill "
	    "%.2f, permute %.2f, seal %.2f;\nper block: proxy %.2f + cloud store %.2f = %.2f; "
	    "per returned row (user channel and record open) %.2f;\n"
	    "a block's open, un-permute, refill, permute and seal %.2f alone, %.2f each on %ld vCPUs "
	    "at once: they are %.2f cores' worth of it, the floor's cores;\n"
	    "per statement: two durable commits (store, then proxy) of %.0f each (median; "
	    "fdatasync + O_DSYNC meta write in %s)\n"
	    "beside the floor, the store's durable writes (%d shards at once, %d blocks each, "
	    "then fdatasync; median) %.2f a block at scattered pages as LMDB's copy-on-write "
	    "puts them, %.2f one after the other\n",
	    m, S, f->full, cell, f->read_chan_us, f->chan_us, f->user_chan_us, f->open_us, f->unperm_us,
	    f->fill_us, f->perm_us, f->seal_us, f->proxy_us, f->store_us, f->block_us, f->row_us,
	    f->block_alone_us, f->block_shared_us, ncpu, f->cores, f->commit_us, dir, WR_SHARDS,
	    WR_BLOCKS, f->write_us, f->write_seq_us);
	chan_free(a.cli);
	chan_free(a.srv);
	chan_free(a.ccli);
	chan_free(a.csrv);
	sodium_memzero(rec_key, sizeof(rec_key));
	block_bufs_free(&a);
	free(a.rec);
	free(a.msg);
	free(a.ct);
	free(a.rmsg);
}
