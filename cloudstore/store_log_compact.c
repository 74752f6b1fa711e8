/*
 * store_log_compact.c - the log store's compaction and its spare segments
 * (the store itself: store_log.c; what both files share: store_log_int.h).
 *
 * Compaction.  A segment whose live blocks (those the index points at) are
 * under half of what it holds is copied: its live blocks are appended as
 * COPY batches, made durable, the index moved to them, and the segment
 * deleted, or kept as a spare (below).  A COPY batch holds versions the
 * proxy has committed, so a copy cut short by a crash (its header on the
 * disk, not all its blocks) must never be read.  Each COPY batch names its
 * source segment (flag 2), and opening enters its blocks only if that
 * segment is gone: the source is renamed or deleted only after every copy
 * of it is durable (fdatasync), so a source gone means whole copies, and a
 * source still there (a crash before its rename or deletion reached the
 * disk) holds every block the copies hold.  A copy left by a compaction
 * that a crash cut short is superseded by the copies of the next attempt,
 * written later in the log (for one version, opening keeps the last place
 * it reads).  The logs of earlier builds have COPY batches of flag 1,
 * whose checksum covers their blocks: opening still reads their blocks
 * back and trusts one only whole.  Compaction runs on a thread of its own,
 * taking the writer's lock one COPY batch at a time.
 *
 * Spare segments.  Up to LOG_SPARES compacted segments of the standard size
 * are renamed spare-N.log instead of deleted, and the next new segment is
 * a spare renamed back (seg-M.log, M the new number) and written over from
 * its start.  A byte written into a page the page cache holds is far
 * cheaper than one written into a new page, which the kernel must first
 * get (on the benchmark VM, from the host: 0.43 against 15 GB/s,
 * docs/benchmarks.md).  What the spare held before is never read: its
 * batch headers carry its old segment number and lower sequence numbers,
 * and opening stops at the first header whose segment number is not the
 * file's.  Opening ignores spare files, so a crash anywhere in a rename
 * leaves either a segment read as before (its batches superseded) or a
 * spare; extra spares, or spares of another size, are deleted at opening.
 *
 * Spares made ahead.  A log that only grows (a load, or statements soon
 * after one) has no compacted segment to reuse, so every new segment is
 * written into pages the page cache has never held, and a byte written into
 * a new page costs far more than one written into a cached page (on the
 * benchmark VM, 15 against 1 ms for a batch of 11 MB, most of it the host's
 * first touch of the guest's memory; docs/benchmarks.md, "4 December 2026,
 * evening").  So a thread of the store's own, at the lowest priority
 * (SCHED_IDLE: it runs on a core nothing else wants), keeps one spare
 * (SPARE_AHEAD) ready once the last segment is a quarter full (compaction
 * may keep LOG_SPARES): it allocates a segment as spare.tmp (fallocate,
 * fsync), reads it through, which brings its pages into the cache as zeros
 * without a disk write, and renames it spare-N.log (N from SPARE_MADE on,
 * never a segment's number).  It makes none while the disk has room for
 * less than two segments (the room is the WRITEs'); a spare.tmp left by a
 * crash is deleted at opening; a failure is logged, and making one tried
 * again no sooner than SPARE_RETRY_S later.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cry.h"
#include "log.h"
#include "store_log_int.h"

/* ------------------------------------------------------- spare segments */

static void spare_path(const struct cs_store *st, uint64_t no, char *p, size_t plen)
{
	snprintf(p, plen, "%s/spare-%016" PRIx64 ".log", st->dir, no);
}

/* A spare renamed to path p (a new segment's), open; -1 if none would do
 * (each one tried and failed is deleted).  Caller holds wmu. */
int slog_spare_take(struct cs_store *st, const char *p)
{
	while (st->nspare > 0) {
		uint64_t no = st->spare[--st->nspare];
		char sp[4100];
		struct stat sb;
		int fd, e = 0;

		spare_path(st, no, sp, sizeof(sp));
		if (rename(sp, p) != 0) {
			log_warn("log store: cannot reuse %s: %s", sp, strerror(errno));
			unlink(sp);
			continue;
		}
		fd = open(p, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &sb) == 0 && (uint64_t)sb.st_size == st->seg_bytes &&
		    (e = slog_sync_dir(st->dir)) == 0) {
			if (no >= SPARE_MADE)
				log_info("log store: %s made from a spare made ahead", p);
			else
				log_info("log store: %s made from spare segment %llu", p,
					 (unsigned long long)no);
			return fd;
		}
		if (fd < 0 || e != 0)
			log_warn("log store: cannot reuse %s as %s: %s", sp, p,
				 strerror(fd < 0 ? errno : e));
		else
			log_warn("log store: cannot reuse %s: not a file of %llu bytes", sp,
				 (unsigned long long)st->seg_bytes);
		if (fd >= 0)
			close(fd);
		unlink(p);
	}
	return -1;
}

/* At opening: keep spare-N.log as a spare if it has the standard size and
 * there is room, else delete it. */
void slog_spare_keep(struct cs_store *st, uint64_t no)
{
	char sp[4100];
	struct stat sb;

	spare_path(st, no, sp, sizeof(sp));
	if (st->nspare < LOG_SPARES && stat(sp, &sb) == 0 &&
	    (uint64_t)sb.st_size == st->seg_bytes) {
		st->spare[st->nspare++] = no;
		return;
	}
	if (unlink(sp) != 0 && errno != ENOENT)
		log_warn("log store: cannot delete %s: %s", sp, strerror(errno));
}

/* ----------------------------------------------------------- compaction */

/* Copy the live blocks of segment no into COPY batches, then delete it. */
static int compact_seg(struct cs_store *st, uint64_t no, char *err, size_t errlen)
{
	uint64_t off = 0, seq, total, src, bs = atomic_load(&st->bs);
	uint8_t *hbuf = NULL, *data = NULL;
	size_t hcap = 0;
	uint32_t n, b;
	struct seg *g, copy;
	char p[4100];
	int ret = LWC_OK;

	uint64_t copied0 = atomic_load(&st->copied);

	pthread_rwlock_rdlock(&st->rw);
	g = slog_seg_by_no(st, no);
	if (g != NULL)
		copy = *g;
	pthread_rwlock_unlock(&st->rw);
	if (g == NULL || bs == 0)
		return LWC_OK;
	data = malloc(LOG_COPY_MAX * bs);
	if (data == NULL)
		return LWC_ERR_NOMEM;
	/* the batches opening read (or this store appended) up to copy.end */
	while (off < copy.end && ret == LWC_OK &&
	       slog_batch_read(&copy, off, 0, 0, &hbuf, &hcap, &seq, &n, &b, &total, &src)) {
		uint64_t hlen = hdr_bytes(n);

		for (uint32_t k0 = 0; k0 < n && ret == LWC_OK; k0 += LOG_COPY_MAX) {
			uint64_t ids[LOG_COPY_MAX], vers[LOG_COPY_MAX], ats[LOG_COPY_MAX], end = 0;
			const uint8_t *dp[LOG_COPY_MAX];
			size_t m = 0, kept = 0;

			/* the live blocks (the index points here), read without
			 * the writer's lock: the bytes at a place never change */
			pthread_rwlock_rdlock(&st->rw);
			for (uint32_t k = k0; k < n && k < k0 + LOG_COPY_MAX; k++) {
				const uint8_t *en = hbuf + LOG_HDR + 16 * (size_t)k;
				uint64_t id = cry_get_be64(en), v = cry_get_be64(en + 8);
				uint64_t at = pos_make(no, off + hlen + (uint64_t)k * bs);
				struct ent *e = slog_ix_find(st, id);

				if (e == NULL || !((e->v[0] == v && e->at[0] == at) ||
						   (e->v[1] == v && e->at[1] == at)))
					continue;
				ids[m] = id;
				vers[m] = v;
				ats[m] = at;
				m++;
			}
			pthread_rwlock_unlock(&st->rw);
			for (size_t i = 0; i < m && ret == LWC_OK; i++) {
				int x = slog_pread_all(copy.fd, data + i * bs, bs, pos_off(ats[i]));

				if (x != 0)
					ret = slog_sys_err("read", st->dir, x, err, errlen);
			}
			if (ret != LWC_OK || m == 0)
				continue;
			/* still live (the index changes only under wmu) */
			pthread_mutex_lock(&st->wmu);
			for (size_t i = 0; i < m; i++) {
				struct ent *e = slog_ix_find(st, ids[i]);

				if (e == NULL || !((e->v[0] == vers[i] && e->at[0] == ats[i]) ||
						   (e->v[1] == vers[i] && e->at[1] == ats[i])))
					continue;
				if (kept != i)
					memcpy(data + kept * bs, data + i * bs, bs);
				ids[kept] = ids[i];
				vers[kept] = vers[i];
				dp[kept] = data + kept * bs;
				kept++;
			}
			if (kept > 0)
				ret = slog_append(st, ids, vers, dp, kept, (uint32_t)bs, no, &end,
						   err, errlen);
			pthread_mutex_unlock(&st->wmu);
			if (ret == LWC_OK && kept > 0)
				ret = slog_sync(st, end, err, errlen);
			m = kept;
			atomic_fetch_add(&st->copied, m);
		}
		off += total;
	}
	free(hbuf);
	free(data);
	if (ret != LWC_OK)
		return ret;
	/* every live block has a durable copy: the segment goes (once the
	 * READs reading from it are done) */
	pthread_mutex_lock(&st->wmu);
	pthread_rwlock_wrlock(&st->gone);
	pthread_rwlock_wrlock(&st->rw);
	g = slog_seg_by_no(st, no);
	if (g != NULL && g->live == 0) {
		size_t i = (size_t)(g - st->segs);
		int keep = g->cap == st->seg_bytes && st->nspare < LOG_SPARES;

		log_info("log store: segment %llu compacted: %llu of its %llu blocks were live "
			 "and copied%s", (unsigned long long)no,
			 (unsigned long long)(atomic_load(&st->copied) - copied0),
			 (unsigned long long)g->held, keep ? ", kept as a spare" : "");

		close(g->fd);
		memmove(g, g + 1, (st->nseg - i - 1) * sizeof(*g));
		st->nseg--;
		slog_seg_path(st, no, p, sizeof(p));
		if (keep) {
			char sp[4100];

			/* kept for the next new segment (slog_spare_take) */
			spare_path(st, no, sp, sizeof(sp));
			if (rename(p, sp) == 0) {
				st->spare[st->nspare++] = no;
			} else {
				log_warn("log store: cannot keep %s as a spare: %s", p,
					 strerror(errno));
				keep = 0;
			}
		}
		if (!keep && unlink(p) != 0 && errno != ENOENT)
			log_warn("log store: cannot delete %s: %s", p, strerror(errno));
	} else if (g != NULL) {
		log_warn("log store: segment %llu still has %llu live blocks after compaction",
			 (unsigned long long)no, (unsigned long long)g->live);
	}
	pthread_rwlock_unlock(&st->rw);
	pthread_rwlock_unlock(&st->gone);
	pthread_mutex_unlock(&st->wmu);
	return LWC_OK;
}

/* The segment most worth compacting: not the last, durable, under half
 * live; 0 if none. */
static uint64_t compact_pick(struct cs_store *st)
{
	uint64_t best = 0, synced;
	double best_r = 0.5;

	pthread_mutex_lock(&st->smu);
	synced = st->synced;
	pthread_mutex_unlock(&st->smu);
	pthread_rwlock_rdlock(&st->rw);
	for (size_t i = 0; i + 1 < st->nseg; i++) {
		struct seg *g = &st->segs[i];
		double r = g->held ? (double)g->live / (double)g->held : 0;

		if (pos_make(g->no, g->end) > synced)
			continue;
		if (r < best_r) {
			best_r = r;
			best = g->no;
		}
	}
	pthread_rwlock_unlock(&st->rw);
	return best;
}

/* Is a spare to be made now?  Fewer than SPARE_AHEAD kept, the last
 * segment a quarter full, the log healthy, no recent failure. */
static int spare_wanted(struct cs_store *st)
{
	int want;

	pthread_mutex_lock(&st->wmu);
	want = st->nspare < SPARE_AHEAD && st->nseg > 0 && !atomic_load(&st->failed) &&
	       st->segs[st->nseg - 1].end >= st->seg_bytes / 4 &&
	       (st->made_failed == 0 || time(NULL) - st->made_failed >= SPARE_RETRY_S);
	pthread_mutex_unlock(&st->wmu);
	return want;
}

static int maker_stopping(struct cs_store *st)
{
	int stop;

	pthread_mutex_lock(&st->amu);
	stop = st->astop;
	pthread_mutex_unlock(&st->amu);
	return stop;
}

/* Is no a kept spare's number?  Caller holds wmu. */
static int spare_kept(const struct cs_store *st, uint64_t no)
{
	for (unsigned i = 0; i < st->nspare; i++)
		if (st->spare[i] == no)
			return 1;
	return 0;
}

/* Make a spare ahead (the comment at the top says why): a segment
 * allocated as spare.tmp, read through, renamed.  Holds the writer's lock
 * only to rename it. */
static void spare_make(struct cs_store *st)
{
	char tp[4100], sp[4100];
	uint8_t *buf = malloc(SPARE_CHUNK);
	struct statvfs vfs;
	int fd, e = 0;

	snprintf(tp, sizeof(tp), "%s/spare.tmp", st->dir);
	/* never the space a WRITE could need: room for it and one more */
	if (statvfs(st->dir, &vfs) == 0 &&
	    (uint64_t)vfs.f_bavail * vfs.f_frsize < 2 * st->seg_bytes) {
		pthread_mutex_lock(&st->wmu);
		st->made_failed = time(NULL);
		pthread_mutex_unlock(&st->wmu);
		free(buf);
		return;
	}
	fd = buf ? open(tp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
	if (fd < 0) {
		e = buf ? errno : ENOMEM;
		goto out;
	}
	if ((e = posix_fallocate(fd, 0, (off_t)st->seg_bytes)) == 0 && fsync(fd) != 0)
		e = errno;
	/* the pages come into the cache as zeros: no disk read, no write */
	for (uint64_t off = 0; off < st->seg_bytes && e == 0; off += SPARE_CHUNK) {
		if (off % (16u * SPARE_CHUNK) == 0 && maker_stopping(st)) {
			close(fd);
			goto out;
		}
		if (pread(fd, buf, SPARE_CHUNK, (off_t)off) < 0)
			e = errno;
	}
	close(fd);
	if (e == 0) {
		pthread_mutex_lock(&st->wmu);
		if (st->nspare < LOG_SPARES) {
			uint64_t no;

			do
				no = st->made_no++;
			while (spare_kept(st, no));
			spare_path(st, no, sp, sizeof(sp));
			if (rename(tp, sp) != 0 || (e = slog_sync_dir(st->dir)) != 0) {
				e = e ? e : errno;
				unlink(sp);
			} else {
				st->spare[st->nspare++] = no;
				st->made_failed = 0;
			}
		}
		pthread_mutex_unlock(&st->wmu);
	}
	if (e != 0) {
		log_warn("log store: cannot make a spare segment %s: %s (tried again in %d s)",
			 tp, strerror(e), SPARE_RETRY_S);
		pthread_mutex_lock(&st->wmu);
		st->made_failed = time(NULL);
		pthread_mutex_unlock(&st->wmu);
	}
out:
	unlink(tp);
	free(buf);
}

static void *spare_maker(void *arg)
{
	struct cs_store *st = arg;
	struct sched_param sp = { 0 };

	/* only on a core nothing else wants */
	if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) != 0)
		(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	pthread_mutex_lock(&st->amu);
	while (!st->astop) {
		if (!st->akick) {
			pthread_cond_wait(&st->acond, &st->amu);
			continue;
		}
		st->akick = 0;
		pthread_mutex_unlock(&st->amu);
		while (spare_wanted(st) && !maker_stopping(st))
			spare_make(st);
		pthread_mutex_lock(&st->amu);
	}
	pthread_mutex_unlock(&st->amu);
	return NULL;
}

void slog_maker_kick(struct cs_store *st)
{
	if (!st->maker_on)
		return;
	pthread_mutex_lock(&st->amu);
	st->akick = 1;
	pthread_cond_signal(&st->acond);
	pthread_mutex_unlock(&st->amu);
}

static void *compactor(void *arg)
{
	struct cs_store *st = arg;

	pthread_mutex_lock(&st->cmu);
	while (!st->stop) {
		uint64_t no;
		char err[512] = "";

		if (!st->kick) {
			pthread_cond_wait(&st->ccond, &st->cmu);
			continue;
		}
		st->kick = 0;
		pthread_mutex_unlock(&st->cmu);
		while (!atomic_load(&st->failed) && (no = compact_pick(st)) != 0) {
			int rc = compact_seg(st, no, err, sizeof(err));

			if (rc != LWC_OK) {
				log_error("log store: compacting segment %llu: %s",
					  (unsigned long long)no, err);
				break;
			}
			pthread_mutex_lock(&st->cmu);
			if (st->stop) {
				pthread_mutex_unlock(&st->cmu);
				break;
			}
			pthread_mutex_unlock(&st->cmu);
		}
		pthread_mutex_lock(&st->cmu);
	}
	pthread_mutex_unlock(&st->cmu);
	return NULL;
}

void slog_compact_kick(struct cs_store *st)
{
	pthread_mutex_lock(&st->cmu);
	st->kick = 1;
	pthread_cond_signal(&st->ccond);
	pthread_mutex_unlock(&st->cmu);
}

/* Start the compaction thread and the spare maker (whose failure to start
 * is logged: spares are then only those compaction keeps). */
int slog_threads_start(struct cs_store *st, char *err, size_t errlen)
{
	if (pthread_create(&st->compactor, NULL, compactor, st) != 0) {
		lwc_errf(err, errlen, "log store: cannot start the compaction thread");
		return LWC_ERR_STORE;
	}
	st->compactor_on = 1;
	if (pthread_create(&st->maker, NULL, spare_maker, st) == 0)
		st->maker_on = 1;
	else
		log_warn("log store: cannot start the thread that makes spare segments ahead");
	return LWC_OK;
}

/* Stop both (each finishes the step it is in: a COPY batch, a chunk of a
 * spare being read in). */
void slog_threads_stop(struct cs_store *st)
{
	if (st->maker_on) {
		pthread_mutex_lock(&st->amu);
		st->astop = 1;
		pthread_cond_signal(&st->acond);
		pthread_mutex_unlock(&st->amu);
		pthread_join(st->maker, NULL);
	}
	if (st->compactor_on) {
		pthread_mutex_lock(&st->cmu);
		st->stop = 1;
		pthread_cond_signal(&st->ccond);
		pthread_mutex_unlock(&st->cmu);
		pthread_join(st->compactor, NULL);
	}
}
