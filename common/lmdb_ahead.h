/*
 * lmdb_ahead.h - an LMDB data file kept ahead of its growth in page-sized
 * page-cache folios.
 *
 * Why: on Linux 6.16 and later, ext4 gives a file's page cache large folios,
 * sized by the write that creates them.  LMDB writes a commit's contiguous
 * new pages with one writev, so a growing file gets folios of up to 2 MB,
 * and every later write of a few pages into one of them, and its writeback,
 * walks all of the folio's buffer heads: a quarter of the cloud store's CPU
 * on the large statements (docs/benchmarks.md, "28 November 2026, night").
 * A page first brought in by a read on a descriptor advised
 * POSIX_FADV_RANDOM gets a folio of its own, and a later write into a cached
 * page keeps its folio.
 *
 * So, before LMDB's commits grow the file into a region, the file is
 * extended (sparse: no disk space is taken) and a thread of our own reads
 * the region once, on a descriptor of its own advised random, while the
 * writer goes on.  Correctness does not depend on it: LMDB ignores a data
 * file longer than its last page, and a copy by mdb_copy stops at that page.
 * A commit that overtakes the reads only gets larger folios there; kernels
 * whose ext4 gives single pages anyway (before 6.16) merely cache zeroed
 * pages a little early.
 */
#ifndef LWC_LMDB_AHEAD_H
#define LWC_LMDB_AHEAD_H

#include <pthread.h>
#include <stdint.h>

#include <lmdb.h>

#define LMDB_AHEAD_LOW (16u << 20)    /* extend when less than this is ahead   */
#define LMDB_AHEAD_WINDOW (64u << 20) /* ... to this much beyond the last page */

struct lmdb_ahead {
	int fd;                       /* the data file, read-only, advised random; -1: off */
	unsigned psize;               /* the environment's page size                      */
	pthread_t th;                 /* the reader                                       */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t read_to;             /* the file extended to, the reader reads to ... */
	uint64_t done;                /* ... and has up to here (under mu)                */
	int stop;
};

/* Set up for env, an open environment, and start its reader (off,
 * silently, where the data file cannot be opened again or no thread can be
 * started).  Touches nothing yet. */
void lmdb_ahead_init(struct lmdb_ahead *a, MDB_env *env);

/* Keep the file ahead of env's last page.  Call it only while holding env's
 * writer lock (a write transaction begun and not yet ended): no commit can
 * then grow the file under it.  Errors are ignored (the pages are only
 * cached sooner or later). */
void lmdb_ahead_keep(struct lmdb_ahead *a, MDB_env *env);

/* Wait until the reader has read what lmdb_ahead_keep asked of it (tests). */
void lmdb_ahead_wait(struct lmdb_ahead *a);

/* Stop the reader; before env is closed. */
void lmdb_ahead_close(struct lmdb_ahead *a);

#endif
