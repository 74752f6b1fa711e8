/*
 * state.h - the proxy's state: one LMDB environment in the state directory,
 * mirrored in memory where every statement needs it (block versions and
 * occupancy, the catalog, the users).
 *
 * LMDB named databases (DESIGN section 4):
 *   meta      "geometry" -> R, m, theta, cell, block format (5 x u32 BE;
 *                                 4 in databases made before block formats); "nblocks" -> u64
 *             (informational: the blocks database is authoritative);
 *             "next_table" -> u64; "cloudstore" -> HOST:PORT;
 *             "cs_key_file" -> path of K_CS
 *   users     name -> status(1) created(8) revoked(8) K_DBU(32; zero when revoked)
 *   catalog   table handle(16) -> id(4) ncols(4) pk(4) unique(8) has_null(8)
 *             null tokens (ncols x 16) [range tokens per column (ncols x 1)
 *             range_ready(8), when bit 31 of ncols is set] schema...
 *   blocks    block id(8 BE) -> committed version(8 BE) || AEAD tag of that
 *             version(16) || occupancy bitmap
 *             "format" -> u64 (2; a state without it is format 1 and is
 *             converted when opened); "next_rowid" -> u64; "relocate",
 *             "stash_max", "relocate_max" -> u64 (lwc-proxy init);
             "epoch" -> u64: advanced at every serve start, and sealed into
             the cloud store's header record (epoch.h), so a restored state
             that is older than its store is refused
 *   t<ID>.r   row id(8 BE) -> the row's tokens (ntok x 16: one per column,
 *             then the range tokens of each range-indexed column): the
 *             slot-to-token map of the paper, per table, by stable row id;
 *             16 zero bytes: no token (a row older than its column's range
 *             index, until rewritten)
 *   t<ID>.c<C> token(16) -> row ids(8 BE), MDB_DUPSORT|MDB_DUPFIXED: the
 *             per-field B+ tree; it holds the column's equality tokens and
 *             its range tokens (prefixes of an order-preserving key, keyed
 *             per level: client/range.h), which never collide
 *   pos       row id(8 BE) -> location(8 BE), or PX_LOC_STASH: the position
 *             map, so moving a row costs one write whatever its columns
 *   stash     row id(8 BE) -> table id(4 BE) || record(S): rows taken out of
 *             their blocks and not yet written back (see stash.h)
 * Location = block << 16 | slot.  Format 1 keyed t<ID>.r and the indexes
 * by location; converting it gives every row the row id = its location.
 *
 * Locking: st->mu guards everything in memory and every LMDB transaction
 * (planning reads, commits), so LMDB always sees one thread at a time.
 * Statements hold it only to plan and to commit, never across a cloud
 * round trip.  Users have their own lock (st->users_mu) so a handshake
 * never waits for a commit.
 */
#ifndef LWC_PX_STATE_H
#define LWC_PX_STATE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <lmdb.h>

#include "cry.h"
#include "groups.h"
#include "lwc_err.h"
#include "padage.h"

/* Microseconds of CLOCK_MONOTONIC: for durations. */
static inline uint64_t px_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

#define PX_HANDLE_BYTES   16u
#define PX_MAX_COLS       64u
#define PX_MAX_SLOTS      4096u
#define PX_MAX_RANGE_TOK  64u      /* range tokens a column's rows may carry */
#define PX_MAX_TOKENS     1024u    /* tokens per row, range tokens included */
#define PX_NAME_MAX       64u
#define PX_SCHEMA_MAX     65536u
#define PX_OPS_KEY_KIND   "LWC-OPS-KEY"
#define PX_CS_KEY_KIND    "LWC-CS-KEY"

#define PX_LOC(block, slot) (((uint64_t)(block) << 16) | (uint64_t)(slot))
#define PX_LOC_BLOCK(loc)   ((loc) >> 16)
#define PX_LOC_SLOT(loc)    ((uint32_t)((loc) & 0xffffu))
#define PX_LOC_STASH        UINT64_MAX      /* pos: the row is in the stash */

struct px_geom {
	uint32_t R;           /* record bytes (plaintext)                      */
	uint32_t S;           /* slot bytes = R + 40                           */
	uint32_t m;           /* slots per block                               */
	uint32_t theta;       /* at most theta full slots per block            */
	uint32_t cell;        /* permutation cell bytes: 1, 2, 4 or 8          */
	uint32_t perm;        /* block format: the permutation's draws
				 (enum cry_perm_fmt); V1 in databases made
				 before formats, V2 in new ones             */
	size_t block_bytes;   /* m * S                                         */
	size_t sealed_bytes;  /* block_bytes + CRY_SEAL_OVERHEAD               */
	size_t words;         /* uint64 words of an occupancy bitmap           */
};

/* A block thread's scratch, in 32-bit words: the permutation's
 * (cry_perm_scratch_words), then one block of keystream (fill_empty). */
size_t px_scratch_words(const struct px_geom *g);

struct px_table {
	uint8_t handle[PX_HANDLE_BYTES];
	uint32_t id;
	uint32_t ncols;
	int32_t pk_col;                  /* -1: none                       */
	uint64_t unique;                 /* bit c: column c is unique      */
	uint64_t has_null;               /* bit c: null_tok[c] is known    */
	uint8_t null_tok[PX_MAX_COLS][CRY_TOKEN_BYTES];  /* NULLs never clash */
	uint8_t rtok[PX_MAX_COLS];       /* range tokens per row of column c */
	uint64_t range_ready;            /* bit c: every row has c's range tokens */
	uint32_t ntok;                   /* tokens per row: ncols + sum(rtok) */
	uint8_t tcol[PX_MAX_TOKENS];     /* column (index) of the row's token j */
	uint8_t *schema;
	size_t schema_len;
	MDB_dbi rows;
	MDB_dbi cols[PX_MAX_COLS];
	MDB_dbi run;                     /* recent index entries (index.c) */
	uint64_t nrows;
	int inflight;                    /* statements using it            */
	int dropped;                     /* gone for new statements        */
	uint64_t excl_owner;             /* a DROP or CREATE UNIQUE INDEX that
					    needs the table to itself      */
	struct px_table *next;
};

/* A unique value an in-flight INSERT is about to add. */
struct px_pending {
	uint32_t table;
	uint32_t col;
	uint8_t token[CRY_TOKEN_BYTES];
	uint64_t owner;
};

struct px_user {
	char name[PX_NAME_MAX + 1];
	uint8_t *key;                    /* sodium_malloc'ed K_DBU, NULL when revoked */
	int active;
	uint64_t created, revoked;
	uint64_t gen;                    /* changes on revoke or replace   */
	uint32_t sessions;
	struct px_user *next;
};

/* Plans waiting for a block sleep on one of PX_BLOCK_CVS conditions, by
 * block id (px_state bcv). */
#define PX_BLOCK_CVS 64u
#define PX_BLOCK_CV(b) ((unsigned)((b) % PX_BLOCK_CVS))
_Static_assert(PX_BLOCK_CVS <= 64, "unlock_blocks marks the buckets it woke in a word");

/* A row in the stash (the record itself is in the stash database). */
#define PX_FROM_MAX 8u

struct px_stash_ent {
	uint64_t rowid;
	uint64_t eligible;               /* may be evicted from this statement on */
	uint64_t owner;                  /* statement using it, 0: free     */
	uint64_t grp;                    /* its group: rows that entered together,
					    written back together (stash.h); not
					    persisted */
	uint64_t origin;                 /* the statement that put it here: its
					    groups go to one block of a statement
					    at most (stash.h); not persisted */
	uint32_t table;
	uint8_t fresh;                   /* an INSERT's row, in no block yet: it
					    is written back only below the fill
					    limit, as INSERTs place rows, so the
					    room kept for write-back stays for
					    rows that move (stash.h); kept in
					    the stash record (PX_STASH_FRESH) */
	uint32_t nfrom;                  /* blocks it may not be written back to: */
	uint64_t from[PX_FROM_MAX];      /* the READ set of the statement that
					    last touched it, when that many or
					    fewer (stash.h); not persisted */
};

#define PX_STASH_MAX_DEFAULT     65536u
#define PX_STASH_FRESH           0x80000000u  /* in a stash record's table word:
						 the row is fresh (stash.h) */
#define PX_EVICT_GROUP_DEFAULT   1u      /* serve --evict-group (stash.h) */
#define PX_RELOCATE_MAX_DEFAULT  1024u

struct px_journal;

struct px_state {
	char dir[512];
	MDB_env *env;
	MDB_dbi meta, users_db, catalog, blocks_db, pos_db, stash_db;
	MDB_dbi journal_db;              /* journal.h: staged blocks, pos, stash */
	struct px_journal *jr;
	uint64_t jr_fold_bytes;          /* fold the journal beyond this     */
	struct px_geom g;
	uint8_t *seal_key;               /* sodium_malloc'ed subkeys of K_OPS */
	uint8_t *perm_key;
	char cs_addr[256];
	char cs_key_file[512];

	pthread_mutex_t mu;              /* see above                      */
	pthread_cond_t cv;               /* block locks / pending released */
	/* a plan waiting for one block (plan_stmt) sleeps on the condition
	 * of that block's bucket, woken only when unlock_blocks frees a
	 * block of the bucket while someone waits there (bwait): 64 clients
	 * kept about 27 plans waiting, and each statement's end woke them all */
	pthread_cond_t bcv[PX_BLOCK_CVS];
	uint32_t bwait[PX_BLOCK_CVS];    /* plans asleep on each, under mu  */
	/* group commit (engine.c): SELECTs waiting for their commit, one of
	 * them the leader that commits them together under mu */
	pthread_mutex_t gc_mu;           /* the queue, gc_leader, each one's done */
	pthread_cond_t gc_cv;
	struct gc_member *gc_head, *gc_tail;
	int gc_leader;
	uint64_t nblocks;
	uint64_t cap_blocks;
	uint64_t *version;               /* [nblocks] committed versions   */
	uint8_t *tag;                    /* [nblocks * 16] AEAD tag of the committed
					    version: any other content, even a sealed
					    one (an uncommitted write), is refused */
	uint64_t *bits;                  /* [nblocks * g.words] occupancy  */
	uint16_t *occ;                   /* [nblocks] full slots           */
	uint8_t *locked;                 /* [nblocks] held by a statement  */
	uint8_t *wanted;                 /* [nblocks] statements waiting for it as
					    a real block (at most 255): padding
					    avoids it while it can (engine.c) */
	uint64_t nlocked;
	uint64_t free_hint;              /* no block below has room        */
	int growing;                     /* a statement is adding blocks   */
	_Atomic int grow_wanted;         /* another waits to grow (bulk.c: not passed on) */
	uint64_t used_slots;
	uint32_t next_table;
	struct px_table *tables;
	struct px_pending *pending;
	size_t npending, cap_pending;
	uint32_t *phash;                 /* hash index over pending        */
	size_t phash_cap;
	uint64_t next_owner;

	/* cross-statement obliviousness (stash.h) */
	int relocate;                    /* move on access, evict, INSERT via the stash */
	uint32_t stash_max;              /* rows the stash may hold         */
	uint32_t relocate_max;           /* a statement touching more moves none */
	uint32_t evict_group;            /* rows a group at most (serve --evict-group) */
	uint32_t evict_room;             /* slots INSERT leaves free a block for
					  * write-back (serve --evict-room; 0:
					  * theta / 6, at least 1) */
	uint64_t next_grp;               /* the last group handed out           */
	struct px_groups grps;           /* groups in blocks (groups.h)         */
	uint64_t next_rowid;
	uint64_t epoch;                  /* meta "epoch" (epoch.h)          */
	uint64_t seq;                    /* statements planned so far       */
	struct px_stash_ent *stash;      /* in no order (stash.h)           */
	size_t nstash, cap_stash;
	struct u64map stash_ix;          /* row id -> its index in stash + 1 */
	size_t stash_reserved;           /* rows in-flight statements will add */
	struct px_padage pa;             /* write order, real blocks' ranks (padage.h) */

	pthread_mutex_t users_mu;
	struct px_user *users;

	/* counters for status */
	_Atomic uint64_t stmts, stmt_errors, reads, writes, blocks_moved, blocks_read;
	_Atomic uint64_t rows_relocated, rows_evicted, inserts_stashed, inserts_placed;
	_Atomic uint64_t group_mates_moved;   /* of rows_relocated: a read row's group */
	_Atomic uint64_t inserts_bulk;        /* of inserts_placed: into fresh blocks */
	_Atomic uint64_t read_ahead;          /* requests read while the one before ran */
	_Atomic uint64_t made_ahead;          /* bulk INSERTs whose blocks were made then */
	_Atomic uint64_t not_run;             /* requests following a failed one */
	_Atomic uint64_t over_relocate_max, stash_full;
	_Atomic uint64_t plan_waits;             /* plans retried after a wait */
	_Atomic uint64_t plan_wait_us;           /* ... the time they waited   */
	_Atomic uint64_t commits, commit_us;     /* statement commits, time in them
						    (under st->mu) */
	_Atomic uint64_t group_commits, grouped; /* commits of two or more SELECTs,
						    and the SELECTs in them */
	/* the cloud's round trip as the proxy sees it: a moving average of the
	 * time small READs took, microseconds (0: none measured yet) */
	_Atomic uint32_t cloud_rtt_us;
};

/* Relocation settings of lwc-proxy init. */
struct px_reloc_cfg {
	int relocate;
	uint32_t stash_max;
	uint32_t relocate_max;
};

/* Create a new state in dir (must not exist or be empty). */
int px_state_create(const char *dir, const struct px_geom *g, const char *cs_addr,
		    const char *cs_key_file, const struct px_reloc_cfg *rc,
		    char *err, size_t errlen) LWC_WUR;
/* Open an existing state and load the in-memory mirror. */
int px_state_open(struct px_state **out, const char *dir, char *err, size_t errlen) LWC_WUR;
void px_state_close(struct px_state *st);
/* The blocks' write order (padage.h) into the state, at a clean stop; and
 * back at serve's start (*restored 1 when there was a valid one), dropping
 * it so that a crash later does not leave a stale one. */
int px_order_save(struct px_state *st) LWC_WUR;
int px_order_restore(struct px_state *st, int *restored) LWC_WUR;
/* The groups of rows in blocks (groups.h) the same way: saved by a clean
 * stop, taken back (*restored: how many rows) and dropped at serve's start. */
int px_groups_save(struct px_state *st) LWC_WUR;
int px_groups_restore(struct px_state *st, size_t *restored) LWC_WUR;

/* An LMDB failure writing the state: LWC_ERR_NO_SPACE and "no space left on
 * device" when the disk holding it is full (ENOSPC, or the EIO LMDB gives
 * for a short write), else LWC_ERR_STORE and mdb_strerror(rc). */
int px_mdb_err(const struct px_state *st, int rc, const char **text);

/* Geometry from R, m, theta, cell; checks the bounds. */
int px_geom_init(struct px_geom *g, uint32_t R, uint32_t m, uint32_t theta, uint32_t cell,
		 char *err, size_t errlen) LWC_WUR;

/* Catalog (st->mu held). */
struct px_table *px_table_find(struct px_state *st, const uint8_t *handle, size_t len);
/* ntok and tcol from ncols and rtok; LWC_ERR_SCHEMA when over PX_MAX_TOKENS. */
int px_table_layout(struct px_table *t) LWC_WUR;
/* 16 zero bytes (inline: 15 of a bulk load's 22 tokens a row are tested,
 * twice). */
_Static_assert(CRY_TOKEN_BYTES == 16, "px_tok_absent reads two words");
static inline int px_tok_absent(const uint8_t *tok)
{
	uint64_t a, b;

	memcpy(&a, tok, 8);
	memcpy(&b, tok + 8, 8);
	return (a | b) == 0;
}
/* Row token j of t is no token: a range token (j >= ncols) of 16 zero
 * bytes, which no index holds (a row older than its column's range index). */
static inline int px_tok_none(const struct px_table *t, uint32_t j, const uint8_t *tok)
{
	return j >= t->ncols && px_tok_absent(tok);
}

/* LMDB helpers (st->mu held). */
#define PX_DB_RUN  (-2)
int px_db_name(char *buf, size_t len, uint32_t table, int col);  /* col -1: rows, PX_DB_RUN */
int px_table_open_dbis(struct px_state *st, MDB_txn *txn, struct px_table *t,
		       unsigned flags) LWC_WUR;
int px_meta_put_u64(struct px_state *st, MDB_txn *txn, const char *name, uint64_t v) LWC_WUR;
int px_table_put(struct px_state *st, MDB_txn *txn, const struct px_table *t) LWC_WUR;
int px_block_put(struct px_state *st, MDB_txn *txn, uint64_t id, uint64_t version,
		 const uint8_t tag[CRY_TAG_BYTES], const uint64_t *bits) LWC_WUR;
/* pos: row id -> location (PX_LOC_STASH: in the stash); LMDB codes. */
int px_pos_put(struct px_state *st, MDB_txn *txn, uint64_t rowid, uint64_t loc) LWC_WUR;
int px_pos_get(struct px_state *st, MDB_txn *txn, uint64_t rowid, uint64_t *loc) LWC_WUR;
/* The same through a cursor on pos, for many rows in ascending id order:
 * the entry after the cursor's is tried first (a range's neighbours), then
 * a search (LMDB tries the cursor's page first). */
int px_pos_at(MDB_cursor *cur, uint64_t rowid, uint64_t *loc) LWC_WUR;
/* Fill limit of a block for INSERT placement: theta, less the room kept
 * for evictions when relocation is on. */
uint32_t px_fill_limit(const struct px_state *st);

/* Grow the in-memory block arrays to hold n blocks (st->mu held). */
int px_blocks_reserve(struct px_state *st, uint64_t n) LWC_WUR;

static inline int px_bit(const uint64_t *bits, uint32_t slot)
{
	return (int)((bits[slot >> 6] >> (slot & 63)) & 1u);
}

static inline void px_bit_set(uint64_t *bits, uint32_t slot, int on)
{
	if (on)
		bits[slot >> 6] |= (uint64_t)1 << (slot & 63);
	else
		bits[slot >> 6] &= ~((uint64_t)1 << (slot & 63));
}

/* Users (take users_mu themselves). */
int px_user_add(struct px_state *st, const char *name, const uint8_t key[32], int replace,
		char *msg, size_t msglen) LWC_WUR;
int px_user_revoke(struct px_state *st, const char *name, int *existed) LWC_WUR;
/* Copies K_DBU of an active user; LWC_ERR_NO_USER, LWC_ERR_REVOKED. */
int px_user_key(struct px_state *st, const char *name, uint8_t key[32], uint64_t *gen) LWC_WUR;
/* LWC_OK while the session's user is active with the same generation;
 * LWC_ERR_REVOKED otherwise, *replaced set when the user is active with a
 * new key (re-registered). */
int px_user_check(struct px_state *st, const char *name, uint64_t gen, int *replaced) LWC_WUR;
void px_user_session(struct px_state *st, const char *name, int delta);

#endif
