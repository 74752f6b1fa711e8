/*
 * store_log_int.h - what the log store's two files share (store_log.c: the
 * store, its batches, opening and the ops; store_log_compact.c: compaction
 * and spare segments).  Not for use outside cloudstore/store_log*.c.
 */
#ifndef LWC_STORE_LOG_INT_H
#define LWC_STORE_LOG_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "store.h"

#define LOG_MAGIC 0x4c57434cu          /* "LWCL" */
#define LOG_FORMAT 1u
#define LOG_ALIGN 4096u
#define LOG_HDR 64u
#define LOG_SEG_BYTES (256ull << 20)   /* a segment, unless one batch needs more */
#define LOG_SEQ_JUMP (1ull << 20)      /* > batches a segment can hold          */
#define LOG_FLAG_COPY 1u                /* a copy checked by its blocks (old)   */
#define LOG_FLAG_COPY_FROM 2u           /* a copy naming its source segment     */
#define LOG_COPY_MAX 256u              /* blocks a COPY batch                   */
#define LOG_OFF_BITS 40                /* place = segment index << 40 | offset  */
#define LOG_IOV 1024
#define LOG_READ_CHUNK 128             /* a READ's index lookups at a time      */
#define LOG_SPARES 2                   /* spare segments kept, at most          */
#define SPARE_AHEAD 1                  /* made ahead while fewer are kept       */
#define SPARE_MADE (1ull << 60)        /* the first number of a spare made ahead */
#define SPARE_CHUNK (1u << 20)         /* bytes a read of a spare being made     */
#define SPARE_RETRY_S 10               /* after a spare could not be made        */
#define LOG_META_VERSION 2u            /* log.meta's version (meta_read)        */

struct seg {
	uint64_t no;
	int fd;
	uint64_t cap;                  /* file size                               */
	uint64_t end;                  /* bytes of valid batches                  */
	uint64_t live;                 /* live blocks                             */
	uint64_t held;                 /* blocks written into it                  */
};

struct ent {
	uint64_t id;
	uint64_t v[2];                 /* newest, previous; v[0] = 0: empty slot  */
	uint64_t at[2];                /* segment number << 40 | offset of block  */
};

struct cs_store {
	char dir[4000];
	uint64_t seg_bytes;            /* a new segment's size                    */
	_Atomic uint64_t bs;
	/* the index and the segment table: read under rw shared; changed
	 * under rw exclusive by a holder of wmu */
	pthread_rwlock_t rw;
	/* held shared by a READ's block reads, exclusive to close a segment */
	pthread_rwlock_t gone;
	struct ent *tab;
	size_t cap, used;              /* hash slots, ids held                    */
	uint64_t versions;             /* (id, version) pairs held                */
	struct seg *segs;
	size_t nseg;
	/* the writer: appends, rotation, version checks */
	pthread_mutex_t wmu;
	uint64_t seq;                  /* next batch's                           */
	/* group commit */
	pthread_mutex_t smu;
	pthread_cond_t scond;
	uint64_t written;              /* logical end appended (seg no << 40 | off) */
	uint64_t synced;               /* logical end durable                     */
	int syncing;
	_Atomic int failed;
	/* compaction */
	pthread_t compactor;
	int compactor_on;
	pthread_mutex_t cmu;
	pthread_cond_t ccond;
	int stop, kick;
	_Atomic uint64_t copied;       /* blocks moved by compaction (log line)   */
	/* spare segments: numbers of DIR/spare-N.log (under wmu) */
	uint64_t spare[LOG_SPARES];
	unsigned nspare;
	/* spares made ahead (spare_maker) */
	pthread_t maker;
	int maker_on;
	pthread_mutex_t amu;
	pthread_cond_t acond;
	int astop, akick;              /* under amu                               */
	uint64_t made_no;              /* the next one's number (under wmu)       */
	time_t made_failed;            /* when making one last failed; 0: never   */
};

static inline uint64_t align_up(uint64_t x)
{
	return (x + LOG_ALIGN - 1) & ~(uint64_t)(LOG_ALIGN - 1);
}

static inline uint64_t hdr_bytes(uint64_t n)
{
	return align_up(LOG_HDR + 16 * n);
}

static inline uint64_t pos_make(uint64_t segno, uint64_t off)
{
	return segno << LOG_OFF_BITS | off;
}

static inline uint64_t pos_seg(uint64_t p)
{
	return p >> LOG_OFF_BITS;
}

static inline uint64_t pos_off(uint64_t p)
{
	return p & ((1ull << LOG_OFF_BITS) - 1);
}

/* store_log.c */
int slog_sys_err(const char *what, const char *path, int e, char *err, size_t errlen);
struct ent *slog_ix_find(struct cs_store *st, uint64_t id);
struct seg *slog_seg_by_no(struct cs_store *st, uint64_t no);
int slog_pread_all(int fd, void *buf, size_t len, uint64_t off);
void slog_seg_path(const struct cs_store *st, uint64_t no, char *p, size_t plen);
int slog_sync_dir(const char *dir);
int slog_append(struct cs_store *st, const uint64_t *ids, const uint64_t *vers,
		const uint8_t *const *data, size_t n, uint32_t bs, uint64_t src, uint64_t *end,
		char *err, size_t errlen);
int slog_sync(struct cs_store *st, uint64_t end, char *err, size_t errlen);
int slog_batch_read(struct seg *g, uint64_t off, uint64_t prev_seq, int check_copy,
		    uint8_t **hbuf, size_t *hcap, uint64_t *seq, uint32_t *n, uint32_t *bs,
		    uint64_t *total, uint64_t *src);

/* store_log_compact.c */
int slog_spare_take(struct cs_store *st, const char *p);
void slog_spare_keep(struct cs_store *st, uint64_t no);
void slog_compact_kick(struct cs_store *st);
void slog_maker_kick(struct cs_store *st);
int slog_threads_start(struct cs_store *st, char *err, size_t errlen);
void slog_threads_stop(struct cs_store *st);

#endif
