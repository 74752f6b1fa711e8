/*
 * store.h - block-store backends of lwc-cloudstore.
 *
 * A backend keeps, per block id, the proxy's committed version and at most
 * one newer one (DESIGN section 7).  The rules every backend applies inside
 * its write transaction, through cs_version_check():
 *
 *   no version held        the block is new: only version 1 is accepted
 *   newest held h, v = h+1 advance: v is stored, versions below h are dropped
 *   newest held h, v = h   overwrite of the newest (a proxy that crashed
 *                          before committing writes the same version again)
 *   anything else          LWC_ERR_VERSION (stale, or skipping ahead)
 *
 * A WRITE is durable before write() returns and all-or-nothing (PostgreSQL,
 * an LMDB store of one shard; a log store, except that a WRITE never
 * acknowledged may come back after a crash with some blocks unwritten, at
 * versions the proxy never committed: store_log.c), atomic per shard (LMDB: a WRITE that fails a
 * check changes nothing, one cut short by a crash between two shards'
 * commits may leave one shard's blocks at the new version; store_lmdb.c) or
 * atomic per block (Redis Cluster: a WRITE that fails a check changes
 * nothing, one cut short may leave some blocks at the new version); DESIGN
 * section 7 makes both harmless (store_redis.c).  The block
 * size is a property of the store, fixed by the first WRITE into an empty
 * store (or by --block-size) and enforced afterwards.
 *
 * A store is opened once; each worker thread opens its own session (PostgreSQL:
 * its own connection) and uses it from that thread only.
 */
#ifndef LWC_CS_STORE_H
#define LWC_CS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "lwc_err.h"

#define CS_BLOCK_SIZE_MAX (1u << 20)   /* 1 MiB: keeps PG statements < 16 MiB */
#define CS_HELD_MAX 4                  /* versions reported per id by STAT   */
#define CS_LMDB_SHARDS 2               /* environments of a new LMDB store   */
#define CS_LMDB_SHARDS_MAX 16

struct cs_store;
struct cs_session;

/* One block of a WRITE; data points into the request. */
struct cs_block {
	uint64_t id;
	uint64_t version;
	const uint8_t *data;
	size_t len;
};

/* Versions held for one id (STAT). */
struct cs_held {
	uint64_t id;
	uint32_t n;                     /* number of versions held, 0 = absent */
	uint64_t v[CS_HELD_MAX];        /* ascending                            */
};

struct cs_stat {
	uint64_t block_count;           /* distinct block ids                   */
	uint64_t versions_held;         /* (id, version) pairs stored           */
	uint32_t block_size;            /* 0 while the store is empty           */
};

struct cs_store_ops {
	const char *name;               /* "lmdb", "log", "postgres", "redis-cluster" */
	/* spec is what follows "name:" in --store.  block_size 0 = not pinned. */
	int (*open)(struct cs_store **out, const char *spec, uint32_t block_size,
		    char *err, size_t errlen);
	void (*close)(struct cs_store *st);
	int (*session_open)(struct cs_store *st, struct cs_session **out,
			    char *err, size_t errlen);
	void (*session_close)(struct cs_session *s);
	/* The store's block size (0 while empty). */
	int (*block_size)(struct cs_session *s, uint32_t *out, char *err, size_t errlen);
	/* Copy block ids[i] at versions[i] into dst[i] (block_size bytes each:
	 * the places of the blocks in the answer's frame).  Any (id, version)
	 * not held: LWC_ERR_NOT_FOUND naming it in err. */
	int (*read)(struct cs_session *s, const uint64_t *ids, const uint64_t *versions,
		    size_t n, uint8_t *const *dst, size_t block_size, char *err, size_t errlen);
	/* Atomic, durable write of n blocks of equal length with distinct ids. */
	int (*write)(struct cs_session *s, const struct cs_block *blocks, size_t n,
		     char *err, size_t errlen);
	/* Totals and, for each of ids[0..n), the versions held. */
	int (*stat)(struct cs_session *s, const uint64_t *ids, size_t n,
		    struct cs_stat *out, struct cs_held *held, char *err, size_t errlen);
};

extern const struct cs_store_ops cs_store_lmdb;
extern const struct cs_store_ops cs_store_pg;
extern const struct cs_store_ops cs_store_redis;   /* store_redis.c */
extern const struct cs_store_ops cs_store_log;     /* store_log.c   */

/* The directory of an LMDB store's spec ("DIR[,shards=N]"). */
int cs_lmdb_dir(const char *spec, char *dir, size_t dirlen, char *err, size_t errlen) LWC_WUR;

/* The directory of a log store's spec ("DIR"). */
int cs_log_dir(const char *spec, char *dir, size_t dirlen, char *err, size_t errlen) LWC_WUR;

/* A directory store's spec, "DIR[,NAME=N]" (NAME is the one option the
 * backend takes, N in [1, max]): the directory into dir, N into *val (0 when
 * not given).  kind names the backend in errors ("lmdb", "log"). */
int cs_dir_spec(const char *spec, const char *kind, const char *name, unsigned long max,
		char *dir, size_t dirlen, unsigned long *val, char *err, size_t errlen) LWC_WUR;

/* Pick the backend for a --store argument ("lmdb:DIR", "log:DIR",
 * "postgres:CONNINFO" or "redis-cluster:HOST:PORT,...")
 * and return the part after the colon in *spec. */
int cs_store_lookup(const char *arg, const struct cs_store_ops **ops,
		    const char **spec, char *err, size_t errlen) LWC_WUR;

/* The version rule above.  held_max = 0 when no version is held. */
int cs_version_check(uint64_t id, uint64_t held_max, uint64_t version,
		     char *err, size_t errlen) LWC_WUR;

/* Why READ found no (id, version): the versions held, ascending (nheld of
 * them, 0 when the block is absent), into err. */
void cs_missing_text(uint64_t id, uint64_t version, const uint64_t *held, size_t nheld,
		     char *err, size_t errlen);

/* Request-level checks shared by all backends: n > 0, equal lengths within
 * (0, CS_BLOCK_SIZE_MAX], distinct ids, version > 0. */
int cs_write_validate(const struct cs_block *blocks, size_t n,
		      char *err, size_t errlen) LWC_WUR;

/* Distinct ids and matching counts for a READ. */
int cs_read_validate(const uint64_t *ids, size_t n, char *err, size_t errlen) LWC_WUR;

#endif
