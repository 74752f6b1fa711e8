/*
 * store_log.c - the appending block store ("log:DIR"): every WRITE is
 * appended to a log of segment files, found again through an index kept in
 * memory and rebuilt from the log when the store opens.
 *
 * Why: LMDB's copy-on-write puts a WRITE's pages at scattered places of its
 * file, and on a disk bound by separate writes that costs 47 us a block
 * against 18 written one after the other (docs/benchmarks.md, "30 November
 * 2026").  Here a WRITE of n blocks is one pwritev of consecutive bytes and
 * one fdatasync.
 *
 * Files of DIR:
 *   seg-NNNNNNNNNNNNNNNN.log  segments, numbered (hex) in the order written;
 *                             each made at its full size with fallocate, so
 *                             appending never allocates on the data path
 *   log.meta                  "lwc-log 2 block_size N": the log's version
 *                             (meta_read) and block size, pinned before any
 *                             WRITE for a store made with a block size
 *
 * Spec: "log:DIR[,segment-mb=N]" (segments of N MiB, default 256; one
 * batch larger than that gets a segment of its own size).
 *
 * A segment is a sequence of batches, each starting on a 4 KiB boundary:
 *   header   magic "LWCL" u32, format u32, seq u64, segment u64, n u32,
 *            block size u32, flags u32, 4 zero bytes, source u64 (a COPY
 *            batch's source segment, flag 2; else 0), checksum 16 bytes
 *            (BLAKE2b of the 64 header bytes with it zeroed and the entries,
 *            and for a COPY batch of flag 1 of the blocks too), then n
 *            entries (id u64, version u64); all big-endian; padded to 4 KiB
 *   blocks   n x block size bytes, padded to 4 KiB
 *
 * The index (id -> the newest version held and the one before it, each with
 * its place in the log) follows store.h's version rule.  Opening the store
 * reads every segment's batch headers in order and keeps, per id, the two
 * highest versions seen (for one version, its last place): exactly the
 * versions the rule holds, since a WRITE of h+1 drops what is below h.
 *
 * Durability and crash recovery.  A WRITE is checked against the index (a
 * WRITE that fails a check appends nothing), appended (its blocks, then its
 * header: a process that dies in between leaves no batch), entered into the
 * index, and acknowledged once an fdatasync that began after its append
 * has returned (group commit: one fdatasync covers every WRITE appended
 * before it).  Opening stops reading a segment at the first batch whose
 * header does not check, and writing goes on from the last valid batch of
 * the last segment.  A batch that was never acknowledged may be read back
 * with its header whole and some of its blocks not written: its versions
 * were never committed by the proxy, which never reads them, and the next
 * WRITE of those blocks overwrites them (v = h), the same argument that
 * makes a WRITE cut short between two LMDB shards harmless (store.h).
 * That takes a machine that lost power with the header on the disk and not
 * all the blocks; a process killed (kill -9) leaves the page cache whole.
 * Batches carry a sequence number, rising along the log (opening stops at
 * one that does not rise); after an open the next one jumps by 2^20, more
 * than the batches a segment can hold, so no batch left beyond the point
 * where writing resumed can ever pass for one written after it.
 *
 * Compaction (a segment under half live copied and dropped), spare
 * segments and the spares made ahead: store_log_compact.c.  The layout of
 * a store shared by both files: store_log_int.h.
 *
 * A failed fdatasync leaves what is on the disk unknown: every later WRITE
 * is refused until the store is restarted (and has read its log again).
 *
 * Blocks not in memory (read_cold).  A READ's blocks are scattered over
 * the log, and a store larger than its page cache (or one whose idle pages
 * the machine has reclaimed) finds some of them only on the disk; read one
 * after the other, each waits for the disk in turn.  So a READ first reads
 * each block with RWF_NOWAIT, which copies what is cached and leaves the
 * rest; the blocks left are then asked of the disk all at once
 * (POSIX_FADV_WILLNEED on each block's bytes, which starts their reads and
 * returns) and read when they have come in, the disk serving them side by
 * side.  A READ of cached blocks makes one system call a block, as a
 * plain pread would.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <sodium.h>

#include "cry.h"
#include "log.h"
#include "store.h"
#include "store_log_int.h"

struct cs_session {
	struct cs_store *st;
};
int slog_sys_err(const char *what, const char *path, int e, char *err, size_t errlen)
{
	if (e == ENOSPC || e == EDQUOT) {
		lwc_errf(err, errlen, "log store: %s %s: no space left on device", what, path);
		return LWC_ERR_NO_SPACE;
	}
	lwc_errf(err, errlen, "log store: %s %s: %s", what, path, strerror(e));
	return LWC_ERR_STORE;
}

/* ------------------------------------------------------------- the index */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct ent *slog_ix_find(struct cs_store *st, uint64_t id)
{
	size_t mask = st->cap - 1;

	if (st->cap == 0)
		return NULL;
	for (size_t i = mix(id) & mask;; i = (i + 1) & mask) {
		if (st->tab[i].v[0] == 0)
			return NULL;
		if (st->tab[i].id == id)
			return &st->tab[i];
	}
}

static int ix_grow(struct cs_store *st)
{
	size_t ncap = st->cap ? st->cap * 2 : 1024;
	struct ent *nt = calloc(ncap, sizeof(*nt));

	if (nt == NULL)
		return LWC_ERR_NOMEM;
	for (size_t j = 0; j < st->cap; j++) {
		struct ent *e = &st->tab[j];

		if (e->v[0] == 0)
			continue;
		for (size_t i = mix(e->id) & (ncap - 1);; i = (i + 1) & (ncap - 1)) {
			if (nt[i].v[0] == 0) {
				nt[i] = *e;
				break;
			}
		}
	}
	free(st->tab);
	st->tab = nt;
	st->cap = ncap;
	return LWC_OK;
}

/* The entry of id, made (empty: v[0] still 0 until the caller sets it). */
static struct ent *ix_slot(struct cs_store *st, uint64_t id)
{
	size_t mask;

	if ((st->used + 1) * 10 > st->cap * 7 && ix_grow(st) != LWC_OK)
		return NULL;
	mask = st->cap - 1;
	for (size_t i = mix(id) & mask;; i = (i + 1) & mask) {
		if (st->tab[i].v[0] == 0) {
			st->tab[i].id = id;
			return &st->tab[i];
		}
		if (st->tab[i].id == id)
			return &st->tab[i];
	}
}

struct seg *slog_seg_by_no(struct cs_store *st, uint64_t no)
{
	size_t lo = 0, hi = st->nseg;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (st->segs[mid].no == no)
			return &st->segs[mid];
		if (st->segs[mid].no < no)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void live_add(struct cs_store *st, uint64_t at, int d)
{
	struct seg *g = slog_seg_by_no(st, pos_seg(at));

	if (g != NULL)
		g->live += (uint64_t)(int64_t)d;
}

/* Enter (id, v) at place at, by the two-highest-versions rule (which is
 * the version rule of store.h for every WRITE that passed it). */
static int ix_put(struct cs_store *st, uint64_t id, uint64_t v, uint64_t at)
{
	struct ent *e = ix_slot(st, id);

	if (e == NULL)
		return LWC_ERR_NOMEM;
	if (e->v[0] == 0) {
		e->v[0] = v;
		e->at[0] = at;
		e->v[1] = 0;
		st->used++;
		st->versions++;
		live_add(st, at, 1);
		return LWC_OK;
	}
	for (int k = 0; k < 2; k++) {
		if (e->v[k] == v) {          /* the same version again: its last place */
			live_add(st, e->at[k], -1);
			e->at[k] = at;
			live_add(st, at, 1);
			return LWC_OK;
		}
	}
	if (v > e->v[0]) {
		if (e->v[1] != 0)
			live_add(st, e->at[1], -1);
		else
			st->versions++;
		e->v[1] = e->v[0];
		e->at[1] = e->at[0];
		e->v[0] = v;
		e->at[0] = at;
		live_add(st, at, 1);
	} else if (v > e->v[1]) {
		if (e->v[1] != 0)
			live_add(st, e->at[1], -1);
		else
			st->versions++;
		e->v[1] = v;
		e->at[1] = at;
		live_add(st, at, 1);
	}
	return LWC_OK;
}

/* ------------------------------------------------------------ batch I/O */

static void hdr_fill(uint8_t *h, uint64_t seq, uint64_t segno, uint32_t n, uint32_t bs,
		     uint32_t flags, uint64_t src)
{
	memset(h, 0, LOG_HDR);
	cry_put_be32(h, LOG_MAGIC);
	cry_put_be32(h + 4, LOG_FORMAT);
	cry_put_be64(h + 8, seq);
	cry_put_be64(h + 16, segno);
	cry_put_be32(h + 24, n);
	cry_put_be32(h + 28, bs);
	cry_put_be32(h + 32, flags);
	cry_put_be64(h + 40, src);
}

/* The header's checksum over hdr (64 bytes, checksum zeroed), the entries
 * and, for a COPY batch of flag 1 (opening only), the blocks. */
static void hdr_sum(uint8_t out[16], const uint8_t *hdr, size_t hlen,
		    const uint8_t *const *blocks, size_t n, size_t bs)
{
	crypto_generichash_state h;

	crypto_generichash_init(&h, NULL, 0, 16);
	crypto_generichash_update(&h, hdr, hlen);
	for (size_t i = 0; blocks != NULL && i < n; i++)
		crypto_generichash_update(&h, blocks[i], bs);
	crypto_generichash_final(&h, out, 16);
}

static int pwrite_all(int fd, struct iovec *iov, int cnt, uint64_t off)
{
	while (cnt > 0) {
		int k = cnt < LOG_IOV ? cnt : LOG_IOV;
		ssize_t w = pwritev(fd, iov, k, (off_t)off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (w == 0)
			return EIO;
		off += (uint64_t)w;
		while (cnt > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

int slog_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (r == 0)
			return EIO;      /* past the end: the index points nowhere */
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/*
 * Read what is cached of the m blocks at (fds[j], offs[j]) into dst[j]
 * without waiting for the disk; the rest are asked of the disk together
 * and then read (read_cold, above).  0, or an errno and in *bad the block
 * that failed.
 */
static int read_blocks(const int *fds, const uint64_t *offs, uint8_t *const *dst, size_t m,
		       size_t bs, size_t *bad)
{
	static _Atomic int nowait_off;  /* the kernel refused RWF_NOWAIT once */
	uint8_t miss[LOG_READ_CHUNK];
	size_t nmiss = 0;

	for (size_t j = 0; j < m; j++) {
		ssize_t r = -1;

		miss[j] = 1;
		if (!atomic_load_explicit(&nowait_off, memory_order_relaxed)) {
			struct iovec v = { dst[j], bs };

			do
				r = preadv2(fds[j], &v, 1, (off_t)offs[j], RWF_NOWAIT);
			while (r < 0 && errno == EINTR);
			if (r < 0 && (errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS))
				atomic_store(&nowait_off, 1);
		}
		if (r == (ssize_t)bs)
			miss[j] = 0;
		else
			nmiss++;
	}
	if (nmiss == 0)
		return 0;
	/* partly cached blocks are read whole: the hint costs a page-cache walk
	 * for the pages already in */
	for (size_t j = 0; j < m; j++)
		if (miss[j])
			(void)posix_fadvise(fds[j], (off_t)offs[j], (off_t)bs, POSIX_FADV_WILLNEED);
	for (size_t j = 0; j < m; j++) {
		int x;

		if (!miss[j])
			continue;
		if ((x = slog_pread_all(fds[j], dst[j], bs, offs[j])) != 0) {
			*bad = j;
			return x;
		}
	}
	return 0;
}

void slog_seg_path(const struct cs_store *st, uint64_t no, char *p, size_t plen)
{
	snprintf(p, plen, "%s/seg-%016" PRIx64 ".log", st->dir, no);
}

int slog_sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), e = 0;

	if (fd < 0)
		return errno;
	if (fsync(fd) != 0)
		e = errno;
	close(fd);
	return e;
}

/* A new segment of cap bytes, numbered after the last; caller holds wmu
 * (not rw).  The previous segment is made durable first, so that a batch in
 * a later segment always means the earlier ones are whole. */
static int seg_new(struct cs_store *st, uint64_t cap, char *err, size_t errlen)
{
	uint64_t no = st->nseg ? st->segs[st->nseg - 1].no + 1 : 1;
	struct seg *ns;
	char p[4100];
	int fd, e;

	if (no >= (1ull << (64 - LOG_OFF_BITS))) {
		lwc_errf(err, errlen, "log store %s: segment numbers exhausted", st->dir);
		return LWC_ERR_STORE;
	}

	if (st->nseg > 0) {
		struct seg *last = &st->segs[st->nseg - 1];

		if (fdatasync(last->fd) != 0) {
			atomic_store(&st->failed, 1);
			slog_seg_path(st, last->no, p, sizeof(p));
			return slog_sys_err("fdatasync", p, errno, err, errlen);
		}
		pthread_mutex_lock(&st->smu);
		if (st->synced < pos_make(last->no, last->end))
			st->synced = pos_make(last->no, last->end);
		pthread_mutex_unlock(&st->smu);
	}
	slog_seg_path(st, no, p, sizeof(p));
	fd = cap == st->seg_bytes ? slog_spare_take(st, p) : -1;
	if (fd < 0) {
		fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			return slog_sys_err("create", p, errno, err, errlen);
		if ((e = posix_fallocate(fd, 0, (off_t)cap)) != 0 ||
		    (fsync(fd) != 0 && (e = errno)) || (e = slog_sync_dir(st->dir)) != 0) {
			close(fd);
			unlink(p);
			return slog_sys_err("allocate", p, e, err, errlen);
		}
	}
	pthread_rwlock_wrlock(&st->rw);
	ns = realloc(st->segs, (st->nseg + 1) * sizeof(*ns));
	if (ns == NULL) {
		pthread_rwlock_unlock(&st->rw);
		close(fd);
		unlink(p);
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	st->segs = ns;
	ns[st->nseg++] = (struct seg){ .no = no, .fd = fd, .cap = cap };
	pthread_rwlock_unlock(&st->rw);
	return LWC_OK;
}

/*
 * Append one batch of n blocks (data[i] their bytes) with ids[i]/vers[i]:
 * a WRITE's (src 0) or a COPY of blocks of segment src; caller holds wmu.
 * On success the index points at the new places and *end is the logical
 * end to wait for (slog_sync).
 */
int slog_append(struct cs_store *st, const uint64_t *ids, const uint64_t *vers,
		const uint8_t *const *data, size_t n, uint32_t bs, uint64_t src, uint64_t *end,
		char *err, size_t errlen)
{
	uint64_t hlen = hdr_bytes(n), dlen = (uint64_t)n * bs;
	uint64_t total = hlen + align_up(dlen), off, segno;
	struct iovec *iov;
	uint8_t *hdr;
	struct seg *g;
	int cnt = 0, e, ret;
	static const uint8_t zeros[LOG_ALIGN];
	char p[4100];

	g = st->nseg ? &st->segs[st->nseg - 1] : NULL;
	if (g == NULL || g->end + total > g->cap) {
		if ((ret = seg_new(st, total > st->seg_bytes ? total : st->seg_bytes, err,
				   errlen)) != LWC_OK)
			return ret;
		g = &st->segs[st->nseg - 1];
	}
	segno = g->no;
	off = g->end;
	hdr = calloc(1, hlen);
	iov = malloc((n + 2) * sizeof(*iov));
	if (hdr == NULL || iov == NULL) {
		free(hdr);
		free(iov);
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	hdr_fill(hdr, st->seq, segno, (uint32_t)n, bs, src ? LOG_FLAG_COPY_FROM : 0, src);
	for (size_t i = 0; i < n; i++) {
		cry_put_be64(hdr + LOG_HDR + 16 * i, ids[i]);
		cry_put_be64(hdr + LOG_HDR + 16 * i + 8, vers[i]);
	}
	hdr_sum(hdr + 48, hdr, LOG_HDR + 16 * n, NULL, 0, 0);
	/* the blocks first, the header after them: a process killed in
	 * between (a write cut short by a signal) leaves no batch at all */
	for (size_t i = 0; i < n; i++)
		iov[cnt++] = (struct iovec){ (void *)(uintptr_t)data[i], bs };
	if (align_up(dlen) > dlen)
		iov[cnt++] = (struct iovec){ (void *)(uintptr_t)zeros, align_up(dlen) - dlen };
	e = pwrite_all(g->fd, iov, cnt, off + hlen);
	if (e == 0) {
		struct iovec h = { hdr, hlen };

		e = pwrite_all(g->fd, &h, 1, off);
	}
	free(iov);
	free(hdr);
	if (e != 0) {
		/* nothing was entered; the bytes written are overwritten by the
		 * next batch, and an I/O error leaves the file unknown */
		if (e != ENOSPC && e != EDQUOT)
			atomic_store(&st->failed, 1);
		slog_seg_path(st, segno, p, sizeof(p));
		return slog_sys_err("write", p, e, err, errlen);
	}
	st->seq++;
	pthread_rwlock_wrlock(&st->rw);
	ret = LWC_OK;
	for (size_t i = 0; i < n && ret == LWC_OK; i++)
		ret = ix_put(st, ids[i], vers[i], pos_make(segno, off + hlen + (uint64_t)i * bs));
	g = &st->segs[st->nseg - 1];
	g->end = off + total;
	g->held += n;
	pthread_rwlock_unlock(&st->rw);
	if (ret != LWC_OK) {
		/* the index could not grow: it no longer says what the log holds */
		atomic_store(&st->failed, 1);
		lwc_errf(err, errlen, "log store: out of memory for the index");
		return ret;
	}
	*end = pos_make(segno, off + total);
	pthread_mutex_lock(&st->smu);
	if (st->written < *end)
		st->written = *end;
	pthread_mutex_unlock(&st->smu);
	return LWC_OK;
}

/* Wait until the log is durable up to end: one fdatasync for every WRITE
 * appended while the previous one ran.  Caller holds no lock. */
int slog_sync(struct cs_store *st, uint64_t end, char *err, size_t errlen)
{
	int ret = LWC_OK;

	pthread_mutex_lock(&st->smu);
	while (st->synced < end && ret == LWC_OK) {
		uint64_t target;
		int fd = -1, e = 0;

		if (atomic_load(&st->failed)) {
			lwc_errf(err, errlen, "log store: an earlier write failed to reach the "
				 "disk; restart lwc-cloudstore");
			ret = LWC_ERR_STORE;
			break;
		}
		if (st->syncing) {
			pthread_cond_wait(&st->scond, &st->smu);
			continue;
		}
		st->syncing = 1;
		target = st->written;
		pthread_mutex_unlock(&st->smu);
		/* the segment of target: later segments were made after it
		 * was synced whole (seg_new), earlier ones are synced.  Its
		 * descriptor is duplicated so that no lock is held across the
		 * fdatasync (compaction may close the original meanwhile). */
		pthread_rwlock_rdlock(&st->rw);
		{
			struct seg *g = slog_seg_by_no(st, pos_seg(target));

			fd = g ? fcntl(g->fd, F_DUPFD_CLOEXEC, 0) : -1;
			if (g != NULL && fd < 0)
				e = errno;
		}
		pthread_rwlock_unlock(&st->rw);
		if (fd >= 0) {
			if (fdatasync(fd) != 0)
				e = errno;
			close(fd);
		} else if (e == 0) {
			/* gone: compacted, so made durable before (seg_new) */
			fd = 0;
		}
		pthread_mutex_lock(&st->smu);
		st->syncing = 0;
		if (fd >= 0 && e == 0) {
			if (st->synced < target)
				st->synced = target;
		} else {
			atomic_store(&st->failed, 1);
			ret = slog_sys_err("fdatasync in", st->dir, e ? e : EIO, err, errlen);
		}
		pthread_cond_broadcast(&st->scond);
	}
	pthread_mutex_unlock(&st->smu);
	return ret;
}

/* ------------------------------------------------------------- opening */

/*
 * DIR/log.meta, one line: "lwc-log 2 block_size N".  Version 2 is a log
 * that may hold COPY batches of flag 2, which the builds before it cannot
 * read (they would stop reading a segment there); their meta line was
 * "block_size N", and they refuse this one, so a store opened by this build
 * is never opened by an older one.  meta_read takes both (*ver 1 or 2;
 * *bs 0 and *ver 0 when there is no file).
 */
static int meta_read(struct cs_store *st, uint64_t *bs, unsigned *ver, char *err,
		     size_t errlen)
{
	char p[4100], buf[64], tail[2];
	FILE *f;
	unsigned long long v;
	unsigned fmt = 0;

	*bs = 0;
	*ver = 0;
	snprintf(p, sizeof(p), "%s/log.meta", st->dir);
	if ((f = fopen(p, "r")) == NULL)
		return errno == ENOENT ? LWC_OK : slog_sys_err("open", p, errno, err, errlen);
	if (fgets(buf, sizeof(buf), f) == NULL ||
	    (sscanf(buf, "lwc-log %u block_size %llu%1s", &fmt, &v, tail) != 2 &&
	     (fmt = 1, sscanf(buf, "block_size %llu%1s", &v, tail) != 1)) ||
	    v == 0 || v > CS_BLOCK_SIZE_MAX) {
		fclose(f);
		lwc_errf(err, errlen, "log store: %s is not a block-size line", p);
		return LWC_ERR_FORMAT;
	}
	fclose(f);
	if (fmt != 1 && fmt != LOG_META_VERSION) {
		lwc_errf(err, errlen, "log store: %s is of log version %u; this build reads "
			 "versions 1 and %u (a newer lwc-cloudstore wrote it)", p, fmt,
			 LOG_META_VERSION);
		return LWC_ERR_FORMAT;
	}
	*bs = v;
	*ver = fmt;
	return LWC_OK;
}

static int meta_write(struct cs_store *st, uint64_t bs, char *err, size_t errlen)
{
	char p[4100], t[4110];
	FILE *f;
	int e = 0;

	snprintf(p, sizeof(p), "%s/log.meta", st->dir);
	snprintf(t, sizeof(t), "%s.tmp", p);
	if ((f = fopen(t, "w")) == NULL)
		return slog_sys_err("create", t, errno, err, errlen);
	if (fprintf(f, "lwc-log %u block_size %llu\n", LOG_META_VERSION,
		    (unsigned long long)bs) < 0 || fflush(f) != 0 ||
	    fsync(fileno(f)) != 0)
		e = errno ? errno : EIO;
	if (fclose(f) != 0 && e == 0)
		e = errno;
	if (e == 0 && rename(t, p) != 0)
		e = errno;
	if (e == 0)
		e = slog_sync_dir(st->dir);
	if (e != 0) {
		unlink(t);
		return slog_sys_err("write", p, e, err, errlen);
	}
	return LWC_OK;
}

/* Read one batch header at off of segment g; 1 and its fields if it
 * checks, 0 if not (the segment's valid part ends there).  *src: a COPY
 * batch's source segment (flag 2), else 0.  check_copy: read a COPY batch
 * of flag 1 back and check its blocks too, as opening must; the compactor,
 * walking batches that opening checked or this store appended, passes 0
 * and reads only the blocks it copies. */
int slog_batch_read(struct seg *g, uint64_t off, uint64_t prev_seq, int check_copy,
		    uint8_t **hbuf, size_t *hcap, uint64_t *seq, uint32_t *n, uint32_t *bs,
		    uint64_t *total, uint64_t *src)
{
	uint8_t first[LOG_HDR], sum[16], *h;
	uint32_t flags;
	uint64_t hlen;

	if (off + LOG_ALIGN > g->cap || slog_pread_all(g->fd, first, LOG_HDR, off) != 0)
		return 0;
	if (cry_get_be32(first) != LOG_MAGIC || cry_get_be32(first + 4) != LOG_FORMAT ||
	    cry_get_be64(first + 16) != g->no)
		return 0;
	*seq = cry_get_be64(first + 8);
	*n = cry_get_be32(first + 24);
	*bs = cry_get_be32(first + 28);
	flags = cry_get_be32(first + 32);
	*src = cry_get_be64(first + 40);
	if (*seq <= prev_seq || *n == 0 || *bs == 0 || *bs > CS_BLOCK_SIZE_MAX ||
	    (flags != 0 && flags != LOG_FLAG_COPY && flags != LOG_FLAG_COPY_FROM) ||
	    (flags == LOG_FLAG_COPY_FROM) != (*src != 0) || *src == g->no)
		return 0;
	hlen = hdr_bytes(*n);
	*total = hlen + align_up((uint64_t)*n * *bs);
	if (*total > g->cap - off)
		return 0;
	if (hlen > *hcap) {
		uint8_t *nb = realloc(*hbuf, hlen);

		if (nb == NULL)
			return 0;
		*hbuf = nb;
		*hcap = hlen;
	}
	h = *hbuf;
	if (slog_pread_all(g->fd, h, LOG_HDR + 16 * (size_t)*n, off) != 0)
		return 0;
	memcpy(sum, h + 48, 16);
	memset(h + 48, 0, 16);
	if (flags == LOG_FLAG_COPY && check_copy) {
		/* a copy is trusted only whole: read its blocks back */
		size_t dl = (size_t)*n * *bs;
		uint8_t *d = malloc(dl);
		const uint8_t **bp = malloc(*n * sizeof(*bp));
		uint8_t got[16];
		int ok = d != NULL && bp != NULL && slog_pread_all(g->fd, d, dl, off + hlen) == 0;

		if (ok) {
			for (uint32_t i = 0; i < *n; i++)
				bp[i] = d + (size_t)i * *bs;
			hdr_sum(got, h, LOG_HDR + 16 * (size_t)*n, bp, *n, *bs);
			ok = sodium_memcmp(got, sum, 16) == 0;
		}
		free(d);
		free(bp);
		return ok;
	} else if (flags == LOG_FLAG_COPY) {
		/* checked whole before (its sum covers its blocks, which the
		 * compactor reads only where they are live) */
		return 1;
	} else {
		uint8_t got[16];

		hdr_sum(got, h, LOG_HDR + 16 * (size_t)*n, NULL, 0, 0);
		return sodium_memcmp(got, sum, 16) == 0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Open every segment and read its batches into the index (spare segments
 * are noted, not read). */
static int log_recover(struct cs_store *st, uint64_t *bs_seen, char *err, size_t errlen)
{
	DIR *d = opendir(st->dir);
	struct dirent *de;
	uint64_t *nos = NULL, last_seq = 0;
	size_t nn = 0, ncap = 0, hcap = 0;
	uint8_t *hbuf = NULL;
	int ret = LWC_OK;

	*bs_seen = 0;
	if (d == NULL)
		return slog_sys_err("open", st->dir, errno, err, errlen);
	while ((de = readdir(d)) != NULL) {
		unsigned long long no;
		char tail[8];

		if (strcmp(de->d_name, "spare.tmp") == 0) {
			/* a spare being made when the store stopped */
			char tp[4100];

			snprintf(tp, sizeof(tp), "%s/spare.tmp", st->dir);
			if (unlink(tp) != 0 && errno != ENOENT)
				log_warn("log store: cannot delete %s: %s", tp, strerror(errno));
			continue;
		}
		if (sscanf(de->d_name, "spare-%16llx.%7s", &no, tail) == 2 &&
		    strcmp(tail, "log") == 0 && strlen(de->d_name) == 26) {
			slog_spare_keep(st, no);
			continue;
		}
		if (sscanf(de->d_name, "seg-%16llx.%7s", &no, tail) != 2 ||
		    strcmp(tail, "log") != 0 || strlen(de->d_name) != 24 || no == 0 ||
		    no >= (1ull << (64 - LOG_OFF_BITS)))
			continue;
		if (nn == ncap) {
			uint64_t *nb = realloc(nos, (ncap = ncap ? ncap * 2 : 16) * sizeof(*nb));

			if (nb == NULL) {
				closedir(d);
				free(nos);
				return LWC_ERR_NOMEM;
			}
			nos = nb;
		}
		nos[nn++] = no;
	}
	closedir(d);
	if (nn > 1)
		qsort(nos, nn, sizeof(*nos), cmp_u64);
	st->segs = calloc(nn ? nn : 1, sizeof(*st->segs));
	if (st->segs == NULL) {
		free(nos);
		return LWC_ERR_NOMEM;
	}
	for (size_t i = 0; i < nn && ret == LWC_OK; i++) {
		struct seg *g = &st->segs[st->nseg];
		struct stat sb;
		char p[4100];
		uint64_t off = 0, seq, total, src;
		uint32_t n, bs;

		slog_seg_path(st, nos[i], p, sizeof(p));
		g->no = nos[i];
		g->fd = open(p, O_RDWR | O_CLOEXEC);
		if (g->fd < 0 || fstat(g->fd, &sb) != 0) {
			ret = slog_sys_err("open", p, errno, err, errlen);
			if (g->fd >= 0)
				close(g->fd);
			break;
		}
		g->cap = (uint64_t)sb.st_size;
		st->nseg++;
		while (slog_batch_read(g, off, last_seq, 1, &hbuf, &hcap, &seq, &n, &bs, &total,
				  &src)) {
			uint64_t hlen = hdr_bytes(n);
			/* a copy whose source is still here may be cut short:
			 * the source holds its blocks (compaction, above) */
			int skip = src != 0 &&
				   bsearch(&src, nos, nn, sizeof(*nos), cmp_u64) != NULL;

			if (*bs_seen != 0 && bs != *bs_seen) {
				lwc_errf(err, errlen, "log store: %s holds blocks of %u bytes after "
					 "blocks of %llu", p, bs, (unsigned long long)*bs_seen);
				ret = LWC_ERR_FORMAT;
				break;
			}
			/* ... and that source, an earlier segment read above, held
			 * every block of the copy at its version or a later one.  A
			 * copy naming a later segment, or holding a block its source
			 * did not, is not one this store wrote: the log is damaged,
			 * and entering that copy once its source is gone (compacted)
			 * would bring back a version over later, acknowledged ones */
			for (uint32_t k = 0; k < n && skip && ret == LWC_OK; k++) {
				const uint8_t *en = hbuf + LOG_HDR + 16 * (size_t)k;
				uint64_t id = cry_get_be64(en), v = cry_get_be64(en + 8);
				struct ent *e = src < g->no ? slog_ix_find(st, id) : NULL;

				if (e == NULL || e->v[0] < v) {
					lwc_errf(err, errlen, "log store: %s is damaged: its batch at "
						 "offset %llu copies block %llu version %llu from "
						 "segment %llu, which does not hold it", p,
						 (unsigned long long)off, (unsigned long long)id,
						 (unsigned long long)v, (unsigned long long)src);
					ret = LWC_ERR_FORMAT;
				}
			}
			if (ret != LWC_OK)
				break;
			*bs_seen = bs;
			for (uint32_t k = 0; k < n && ret == LWC_OK && !skip; k++) {
				const uint8_t *en = hbuf + LOG_HDR + 16 * (size_t)k;

				ret = ix_put(st, cry_get_be64(en), cry_get_be64(en + 8),
					     pos_make(g->no, off + hlen + (uint64_t)k * bs));
			}
			g->held += n;
			last_seq = seq;
			off += total;
		}
		g->end = off;
	}
	free(hbuf);
	free(nos);
	st->seq = last_seq + LOG_SEQ_JUMP + 1;
	if (st->nseg > 0) {
		struct seg *g = &st->segs[st->nseg - 1];

		st->written = st->synced = pos_make(g->no, g->end);
	}
	return ret;
}

/* ------------------------------------------------------------ the ops */

/* "DIR[,segment-mb=N]": the directory into dir, the segment size into *seg. */
static int parse_spec(const char *spec, char *dir, size_t dirlen, uint64_t *seg, char *err,
		      size_t errlen)
{
	unsigned long mb;
	int ret = cs_dir_spec(spec, "log", "segment-mb", 65536, dir, dirlen, &mb, err, errlen);

	*seg = mb != 0 ? (uint64_t)mb << 20 : LOG_SEG_BYTES;
	return ret;
}

int cs_log_dir(const char *spec, char *dir, size_t dirlen, char *err, size_t errlen)
{
	uint64_t seg;

	return parse_spec(spec, dir, dirlen, &seg, err, errlen);
}

static void log_close(struct cs_store *st)
{
	if (st == NULL)
		return;
	slog_threads_stop(st);
	for (size_t i = 0; i < st->nseg; i++)
		close(st->segs[i].fd);
	free(st->segs);
	free(st->tab);
	pthread_rwlock_destroy(&st->rw);
	pthread_rwlock_destroy(&st->gone);
	pthread_mutex_destroy(&st->wmu);
	pthread_mutex_destroy(&st->smu);
	pthread_cond_destroy(&st->scond);
	pthread_mutex_destroy(&st->cmu);
	pthread_cond_destroy(&st->ccond);
	pthread_mutex_destroy(&st->amu);
	pthread_cond_destroy(&st->acond);
	free(st);
}

static int log_open(struct cs_store **out, const char *spec, uint32_t block_size,
		    char *err, size_t errlen)
{
	struct cs_store *st;
	uint64_t meta_bs, seen_bs;
	unsigned meta_ver;
	int ret;

	*out = NULL;
	if (sodium_init() < 0) {           /* the checksums' BLAKE2b; idempotent */
		lwc_errf(err, errlen, "libsodium failed to initialise");
		return LWC_ERR_CRYPTO;
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return LWC_ERR_NOMEM;
	{
		/* a writer waits for the READs in progress, not for every
		 * READ that comes after it */
		pthread_rwlockattr_t a;

		pthread_rwlockattr_init(&a);
		pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&st->rw, &a);
		pthread_rwlock_init(&st->gone, &a);
		pthread_rwlockattr_destroy(&a);
	}
	pthread_mutex_init(&st->wmu, NULL);
	pthread_mutex_init(&st->smu, NULL);
	pthread_cond_init(&st->scond, NULL);
	pthread_mutex_init(&st->cmu, NULL);
	pthread_cond_init(&st->ccond, NULL);
	pthread_mutex_init(&st->amu, NULL);
	pthread_cond_init(&st->acond, NULL);
	st->made_no = SPARE_MADE;
	if ((ret = parse_spec(spec, st->dir, sizeof(st->dir), &st->seg_bytes, err,
			      errlen)) != LWC_OK)
		goto fail;
	if (mkdir(st->dir, 0700) != 0 && errno != EEXIST) {
		ret = slog_sys_err("create", st->dir, errno, err, errlen);
		goto fail;
	}
	if ((ret = meta_read(st, &meta_bs, &meta_ver, err, errlen)) != LWC_OK ||
	    (ret = log_recover(st, &seen_bs, err, errlen)) != LWC_OK)
		goto fail;
	if (meta_bs != 0 && seen_bs != 0 && meta_bs != seen_bs) {
		lwc_errf(err, errlen, "log store %s: log.meta says blocks of %llu bytes, the "
			 "log holds blocks of %llu", st->dir, (unsigned long long)meta_bs,
			 (unsigned long long)seen_bs);
		ret = LWC_ERR_FORMAT;
		goto fail;
	}
	st->bs = seen_bs ? seen_bs : meta_bs;
	if (block_size != 0) {
		if (st->bs != 0 && st->bs != block_size) {
			lwc_errf(err, errlen, "store %s holds blocks of %llu bytes, not %u",
				 st->dir, (unsigned long long)st->bs, block_size);
			ret = LWC_ERR_BLOCK_SIZE;
			goto fail;
		}
		if (st->bs == 0) {
			if ((ret = meta_write(st, block_size, err, errlen)) != LWC_OK)
				goto fail;
			meta_ver = LOG_META_VERSION;
		}
		st->bs = block_size;
	}
	/* a log of an earlier build (or one without log.meta): marked as this
	 * build's before compaction can write a COPY batch that build could
	 * not read */
	if (st->bs != 0 && meta_ver != LOG_META_VERSION &&
	    (ret = meta_write(st, st->bs, err, errlen)) != LWC_OK)
		goto fail;
	if ((ret = slog_threads_start(st, err, errlen)) != LWC_OK)
		goto fail;
	log_info("log store %s: %zu segment%s (%u spare), %zu blocks, %llu versions", st->dir,
		 st->nseg, st->nseg == 1 ? "" : "s", st->nspare, st->used,
		 (unsigned long long)st->versions);
	slog_compact_kick(st);
	slog_maker_kick(st);
	*out = st;
	return LWC_OK;
fail:
	log_close(st);
	return ret;
}

static int log_session_open(struct cs_store *st, struct cs_session **out, char *err,
			    size_t errlen)
{
	struct cs_session *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	s->st = st;
	*out = s;
	return LWC_OK;
}

static void log_session_close(struct cs_session *s)
{
	free(s);
}

static int log_block_size(struct cs_session *s, uint32_t *out, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*out = (uint32_t)atomic_load(&s->st->bs);
	return LWC_OK;
}

static int log_read(struct cs_session *s, const uint64_t *ids, const uint64_t *versions,
		    size_t n, uint8_t *const *dst, size_t block_size, char *err, size_t errlen)
{
	struct cs_store *st = s->st;
	int ret = LWC_OK;

	if ((ret = cs_read_validate(ids, n, err, errlen)) != LWC_OK)
		return ret;
	if (block_size != atomic_load(&st->bs)) {
		lwc_errf(err, errlen, "log store: blocks of %zu bytes asked, the store holds %llu",
			 block_size, (unsigned long long)atomic_load(&st->bs));
		return LWC_ERR_BLOCK_SIZE;
	}
	/* gone shared: no segment's descriptor is closed meanwhile; the index
	 * is looked up a chunk at a time, and the blocks read without its lock
	 * (the bytes at a place never change) */
	pthread_rwlock_rdlock(&st->gone);
	for (size_t i0 = 0; i0 < n && ret == LWC_OK; i0 += LOG_READ_CHUNK) {
		size_t m = n - i0 < LOG_READ_CHUNK ? n - i0 : LOG_READ_CHUNK;
		int fds[LOG_READ_CHUNK];
		uint64_t offs[LOG_READ_CHUNK];

		pthread_rwlock_rdlock(&st->rw);
		for (size_t j = 0; j < m; j++) {
			size_t i = i0 + j;
			struct ent *e = slog_ix_find(st, ids[i]);
			struct seg *g;
			int k;

			k = e == NULL ? -1 : e->v[0] == versions[i] ? 0 :
			    (e->v[1] == versions[i] && versions[i] != 0) ? 1 : -1;
			if (k < 0) {
				uint64_t held[2];
				size_t nh = 0;

				if (e != NULL && e->v[1] != 0)
					held[nh++] = e->v[1];
				if (e != NULL)
					held[nh++] = e->v[0];
				cs_missing_text(ids[i], versions[i], held, nh, err, errlen);
				ret = LWC_ERR_NOT_FOUND;
				break;
			}
			g = slog_seg_by_no(st, pos_seg(e->at[k]));
			if (g == NULL) {
				lwc_errf(err, errlen, "log store: block %llu version %llu: its "
					 "segment is missing", (unsigned long long)ids[i],
					 (unsigned long long)versions[i]);
				ret = LWC_ERR_STORE;
				break;
			}
			fds[j] = g->fd;
			offs[j] = pos_off(e->at[k]);
		}
		pthread_rwlock_unlock(&st->rw);
		if (ret == LWC_OK) {
			size_t bad = 0;
			int x = read_blocks(fds, offs, dst + i0, m, block_size, &bad);

			if (x != 0) {
				lwc_errf(err, errlen, "log store: reading block %llu version %llu: %s",
					 (unsigned long long)ids[i0 + bad],
					 (unsigned long long)versions[i0 + bad], strerror(x));
				ret = LWC_ERR_STORE;
			}
		}
	}
	pthread_rwlock_unlock(&st->gone);
	return ret;
}

static int log_write(struct cs_session *s, const struct cs_block *blocks, size_t n,
		     char *err, size_t errlen)
{
	struct cs_store *st = s->st;
	uint64_t *ids, *vers, end = 0, bs, last_no = 0, last_end = 0;
	const uint8_t **data;
	int ret, wake_maker = 0;

	if ((ret = cs_write_validate(blocks, n, err, errlen)) != LWC_OK)
		return ret;
	ids = malloc(n * sizeof(*ids));
	vers = malloc(n * sizeof(*vers));
	data = malloc(n * sizeof(*data));
	if (ids == NULL || vers == NULL || data == NULL) {
		ret = LWC_ERR_NOMEM;
		lwc_errf(err, errlen, "out of memory");
		goto out;
	}
	pthread_mutex_lock(&st->wmu);
	if (atomic_load(&st->failed)) {
		pthread_mutex_unlock(&st->wmu);
		lwc_errf(err, errlen, "log store: an earlier write failed to reach the disk; "
			 "restart lwc-cloudstore");
		ret = LWC_ERR_STORE;
		goto out;
	}
	bs = atomic_load(&st->bs);
	if (bs != 0 && bs != blocks[0].len) {
		pthread_mutex_unlock(&st->wmu);
		lwc_errf(err, errlen, "block %llu has %zu bytes; this store's blocks have %llu",
			 (unsigned long long)blocks[0].id, blocks[0].len,
			 (unsigned long long)bs);
		ret = LWC_ERR_BLOCK_SIZE;
		goto out;
	}
	/* the index changes only under wmu: read without rw */
	for (size_t i = 0; i < n; i++) {
		struct ent *e = slog_ix_find(st, blocks[i].id);

		if ((ret = cs_version_check(blocks[i].id, e ? e->v[0] : 0, blocks[i].version,
					    err, errlen)) != LWC_OK) {
			pthread_mutex_unlock(&st->wmu);
			goto out;
		}
		ids[i] = blocks[i].id;
		vers[i] = blocks[i].version;
		data[i] = blocks[i].data;
	}
	if (bs == 0 && (ret = meta_write(st, blocks[0].len, err, errlen)) != LWC_OK) {
		pthread_mutex_unlock(&st->wmu);
		goto out;
	}
	atomic_store(&st->bs, blocks[0].len);
	if (st->nseg > 0) {
		last_no = st->segs[st->nseg - 1].no;
		last_end = st->segs[st->nseg - 1].end;
	}
	ret = slog_append(st, ids, vers, data, n, (uint32_t)blocks[0].len, 0, &end, err,
			   errlen);
	/* the spare maker is woken when a spare may have become wanted: a new
	 * segment begun, or the last one past a quarter (spare_wanted) */
	if (ret == LWC_OK)
		wake_maker = st->segs[st->nseg - 1].no != last_no ||
			     (last_end < st->seg_bytes / 4 &&
			      st->segs[st->nseg - 1].end >= st->seg_bytes / 4);
	pthread_mutex_unlock(&st->wmu);
	if (ret == LWC_OK)
		ret = slog_sync(st, end, err, errlen);
	if (ret == LWC_OK)
		slog_compact_kick(st);
	if (wake_maker)
		slog_maker_kick(st);
out:
	free(ids);
	free(vers);
	free(data);
	return ret;
}

static int log_stat(struct cs_session *s, const uint64_t *ids, size_t n,
		    struct cs_stat *out, struct cs_held *held, char *err, size_t errlen)
{
	struct cs_store *st = s->st;

	(void)err;
	(void)errlen;
	memset(out, 0, sizeof(*out));
	pthread_rwlock_rdlock(&st->rw);
	out->block_count = st->used;
	out->versions_held = st->versions;
	out->block_size = (uint32_t)atomic_load(&st->bs);
	for (size_t i = 0; i < n; i++) {
		struct ent *e = slog_ix_find(st, ids[i]);

		memset(&held[i], 0, sizeof(held[i]));
		held[i].id = ids[i];
		if (e == NULL)
			continue;
		if (e->v[1] != 0)
			held[i].v[held[i].n++] = e->v[1];
		held[i].v[held[i].n++] = e->v[0];
	}
	pthread_rwlock_unlock(&st->rw);
	return LWC_OK;
}

const struct cs_store_ops cs_store_log = {
	.name = "log",
	.open = log_open,
	.close = log_close,
	.session_open = log_session_open,
	.session_close = log_session_close,
	.block_size = log_block_size,
	.read = log_read,
	.write = log_write,
	.stat = log_stat,
};
