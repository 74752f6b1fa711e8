/*
 * engine_int.h - what the parts of the statement engine share; engine.h is
 * the interface.  engine.c runs a statement: plan.c plans it, access.c
 * makes its access, commit.c commits it; cloud_io.c talks to the cloud
 * store and seals blocks; bulk.c is a large INSERT and the index work of
 * large DELETEs and UPDATEs; pending.c keeps the unique values of
 * statements in flight; relocate.c moves rows through the stash; check.c
 * is lwc-proxy check.
 */
#ifndef LWC_PX_ENGINE_INT_H
#define LWC_PX_ENGINE_INT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <lmdb.h>

#include "engine.h"
#include "index.h"
#include "journal.h"
#include "pred.h"
#include "stash.h"

#define CHUNK_ROWS   512u
#define CHUNK_BYTES  (1u << 20)
#define DECIDE_AHEAD 2u           /* chunks of candidates in flight */
#define PLAN_WAIT    1                  /* plan_stmt(): locked blocks, try again */
#define PLAN_GROW    2                  /* plan_stmt(): add s->grow blocks, try again */

enum stmt_kind {
	ST_NOP, ST_SELECT, ST_INSERT, ST_UPDATE, ST_DELETE, ST_CREATE, ST_DROP, ST_INDEX
};

struct upd {
	uint64_t row;                  /* row id                            */
	uint8_t *tokens;               /* ncols x 16                        */
};

/* A stash row written back into a free slot of the statement's blocks. */
struct evict {
	uint64_t row;
	uint32_t table;
	size_t blk;                    /* index into s->ids                 */
	uint32_t slot;
	uint64_t grp;                  /* its group (groups.h)              */
};

struct stmt {
	enum stmt_kind kind;
	const Lwc__ProxyRequest *req;
	const Lwc__Pred *where;
	int interactive;
	int candidates;
	struct px_table *t;            /* referenced (t->inflight)          */
	struct px_table *newt;         /* CREATE TABLE                      */
	int claimed;                   /* t->excl_owner is ours (DROP, UNIQUE INDEX) */
	uint64_t access_end_us;        /* its last WRITE acknowledged (pace.h) */

	struct locset locs;            /* matched, or allocated for INSERT: the
					  locations in blocks, sorted        */
	uint64_t *lrow;                /* the row id of each locs entry      */
	uint8_t *lmate;                /* [locs.n] or NULL: 1, not matched but
					  of a matched row's group (plan_mates) */
	struct locset dels;            /* row ids deleted                   */

	/* rows the statement finds in the stash (served from there) */
	uint64_t *srow;
	uint8_t *srec;                 /* their records, S bytes each       */
	uint8_t *sdel;                 /* deleted by the statement          */
	uint8_t *sshared;              /* SELECT: held by a statement writing it
					  back; read, not held, not refreshed */
	size_t nsrow;
	struct stash_held held;        /* the stash rows it holds (stash.h) */
	/* rows moving from their blocks to the stash (relocation) */
	int relocating;
	uint64_t *mrow;
	uint8_t *mrec;                 /* their records (new ones for UPDATE) */
	size_t nmoved, capmoved;
	/* stash rows written back by this statement */
	struct evict *ev;
	uint8_t *evrec;
	size_t nev;
	uint8_t *mdel;                 /* [capmoved] deleted by the statement */
	uint8_t *mmate;                /* [capmoved] a group mate, not for the user */
	size_t nmates;                 /* of nmoved                          */
	int blocks_done;               /* every block written back: what fails
					  later (the user's decisions) still
					  commits the moves, unchanged rows */
	int via_stash;                 /* INSERT: the new rows go to the stash */
	int bulk;                      /* INSERT: into fresh blocks (bulk.c)  */
	size_t reserved;               /* stash rows reserved for this statement */
	uint64_t seq;
	struct upd *upds;
	size_t nupds, capupds;
	uint64_t utouched;             /* UPDATE: bit c, some decision sent a
					  token for column c (not "as before") */

	/* DELETE with an exact predicate: the blocks of the rows it deletes
	 * that its access does not read (their flags are cleared at commit;
	 * the records stay sealed in them until the block's next write) */
	uint64_t *tids;                /* sorted, locked                    */
	uint64_t *tbits;               /* their occupancy after the statement */
	size_t ntids;

	uint64_t *ids;                 /* the γ blocks, sorted              */
	uint64_t *vers;                /* their committed versions          */
	uint64_t *bits;                /* their occupancy after the statement */
	uint64_t *obits;               /* their committed occupancy         */
	uint8_t *otags;                /* their committed AEAD tags         */
	uint8_t *ntags;                /* the tags of what was written      */
	uint8_t *written;              /* 0: not written, 1: with the statement's
					  changes, 2: with the committed content */
	size_t batch_upd;              /* UPDATE: first upd of this batch   */
	uint8_t **pdst;                /* UPDATE: where this batch's new records go */
	uint8_t *prec;                 /* ... and the records, S bytes each */
	size_t npend, cappend;
	size_t gamma, nreal;
	uint64_t owner;                /* of pending unique values          */
	int locked;

	uint64_t grow;                 /* blocks to add before planning again */
	uint64_t wait_block;           /* PLAN_WAIT for this block (UINT64_MAX:
					  for anything) */
	uint64_t count;
	int answered;                  /* a SELECT's Done sent before its WRITE's
					  acknowledgement and its commit: what
					  fails later is logged, not sent */
	int aborted;
	int err;                       /* statement error (sent to the user) */
	char msg[512];
};

/* commit_stmt()'s and the row walks' rc hold LMDB codes (0, errno values,
 * MDB_* below -30000); this one, outside both and every LWC_ERR_*, says
 * s->err is set. */
#define RC_STMT_ERR INT_MIN

/* engine.c */
int stmt_fail(struct stmt *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* plan.c (st->mu held) */
const Lwc__Row *insert_row(const struct stmt *s, size_t i);
/* A row of an INSERT or an UPDATE's decision, checked against t. */
int check_row(struct stmt *s, const struct px_state *st, const Lwc__Row *r,
	      const struct px_table *t, size_t idx, int as_before);
/* CREATE INDEX's catalog change (*ntp: the changed table, or NULL). */
int index_commit(MDB_txn *txn, struct px_state *st, const struct px_table *t,
		 const Lwc__CreateIndex *ci, struct px_table **ntp);
void stmt_release_table(struct px_state *st, struct stmt *s);
/* Frees the statement's access arrays (ids, versions, flags, tags). */
void access_free(struct stmt *s);
void unlock_blocks(struct px_state *st, struct stmt *s);
/* LWC_OK (planned, blocks locked), PLAN_WAIT, PLAN_GROW or an error. */
int plan_stmt(struct px_worker *w, struct stmt *s);

/* access.c */
/* The statement's READ, blocks and WRITE, then its rows to the user. */
int run_access(struct px_worker *w, struct stmt *s, struct px_io *io, int *io_err);
/* Blocks per READ/WRITE batch for an access of gamma blocks: at most max
 * (--batch-blocks); and while the cloud's round trip (rtt_us, the moving
 * average of READs of at most PX_RTT_SAMPLE_BLOCKS blocks) is at most
 * PX_PIPE_RTT_US, from 2 x PX_PIPE_MIN_BLOCKS blocks up, cut into at least
 * PX_PIPE_BATCHES batches (of PX_PIPE_MIN_BLOCKS or more), so that the READ
 * ahead and the WRITEs behind overlap the cloud store's work with the
 * proxy's; in one batch everything ran one after the other.  Over a slower
 * link each batch would add more round trip than it overlaps work (or when
 * the store is busy: queueing counts in the average), so accesses are cut
 * by max alone.  A function of gamma and of the cloud's own timing, which
 * the cloud sees anyway. */
#define PX_PIPE_BATCHES 4u
#define PX_PIPE_MIN_BLOCKS 64u
#define PX_PIPE_RTT_US 1000u
#define PX_RTT_SAMPLE_BLOCKS 8u
size_t access_batch_size(size_t gamma, size_t max, uint32_t rtt_us);
/* Matched locations of block b: [*lo, *hi) in l (sorted). */
void block_range(const struct locset *l, uint64_t b, size_t *lo, size_t *hi);
int send_records(struct px_io *io, uint64_t seq, int candidates, uint8_t **recs, size_t n,
		 size_t S);
/* A SELECT's Done, once every row is out (engine.c). */
int stmt_answer(const struct px_worker *w, struct stmt *s, struct px_io *io);
int get_decisions(struct px_worker *w, struct stmt *s, struct px_io *io, uint8_t **recs,
		  const uint64_t *rows, size_t n, uint64_t *bits_of_block[],
		  const uint32_t *slots);
void apply_decided(struct px_worker *w, struct stmt *s);

/* commit.c (st->mu held) */
int commit_stmt(struct px_worker *w, struct stmt *s);
/* SELECTs committed as one transaction; nonzero: nothing changed. */
int commit_group(struct px_state *st, struct stmt *const *v, size_t n);
/* A failed statement's blocks back at their committed state. */
void commit_clean(struct px_state *st, struct stmt *s);
/* A statement failed after its write-back: its moves, rows unchanged. */
void commit_moves_only(struct px_worker *w, struct stmt *s);

/* cloud_io.c */
void cloud_release(struct px_worker *w);
int cloud_read(struct px_worker *w, const uint64_t *ids, const uint64_t *vers, size_t n,
	       Lwc__CsResponse **resp, char *err, size_t errlen);
/* The WRITE of a frame of n blocks (cs_wframe_new, the blocks sealed in
 * it).  It may be repeated: the same version again replaces the newer copy. */
int cloud_write(struct px_worker *w, struct cs_wframe *f, size_t n, char *err, size_t errlen);
/* cloud_write in two: the request sent (on w's connection, retried on a new
 * one if that is broken), then its acknowledgement awaited; a connection
 * found broken then has the whole WRITE again on a new one.  Nothing else
 * goes on w's connection in between. */
int cloud_write_send(struct px_worker *w, struct cs_wframe *f, char *err, size_t errlen);
int cloud_write_finish(struct px_worker *w, struct cs_wframe *f, size_t n, char *err,
		       size_t errlen);
/* The random bytes a block's refill and seal take: the key of its empty
 * slots' keystream (fill_empty), then its seal's nonce (seal_block).  A
 * batch's are drawn in one call (rnd_draw: n blocks' worth, NULL when out
 * of memory; rnd_free wipes them): a call per block made two getpid()
 * system calls a block, libsodium's internal generator checking for a
 * fork at every call. */
#define PX_RND_KEY   32u
#define PX_BLOCK_RND (PX_RND_KEY + CRY_NONCE_BYTES)
uint8_t *rnd_draw(size_t n);
void rnd_free(uint8_t *rnd, size_t n);
/* Permute with the seed of (id, version) and seal under the nonce of rnd
 * (PX_BLOCK_RND bytes): plain is destroyed.
 * scratch: px_scratch_words of the geometry (the thread's own). */
int seal_block(const struct px_state *st, uint32_t *scratch, uint64_t id, uint64_t version,
	       uint8_t *plain, uint8_t *out, const uint8_t *rnd);
int open_block(const struct px_state *st, uint32_t *scratch, uint64_t id, uint64_t version,
	       const uint8_t *tag, const uint8_t *sealed, size_t len, uint8_t *plain);
/* Random bytes in the empty slots of blk (bits NULL: all of it), the
 * keystream under the key of rnd (PX_BLOCK_RND bytes);
 * scratch: px_scratch_words of the geometry (unused when bits is NULL). */
void fill_empty(const struct px_state *st, uint8_t *blk, const uint64_t *bits,
		uint32_t *scratch, const uint8_t *rnd);

/* bulk.c: a large INSERT into new blocks, committed (takes st->mu). */
#define PX_BULK_BLOCKS 8               /* at least this many blocks' worth */
int bulk_insert(struct px_worker *w, struct stmt *s);
/* Index entries, rows, positions and stash entries of deleted rows, in key
 * order (st->mu held; dels is sorted in place).  0 or an LMDB error. */
int delete_rows(struct px_state *st, MDB_txn *txn, struct px_table *t, uint64_t *dels,
		size_t n);
/* New tokens of updated rows: rows, then each changed column's old entries
 * out and new ones in, in token order (st->mu held; upds sorted by row in
 * place).  0 or an LMDB error. */
int update_rows(struct px_state *st, MDB_txn *txn, struct px_table *t, struct upd *upds,
		size_t n);

/* pending.c (st->mu held) */
int is_null_tok(const struct px_table *t, uint32_t c, const uint8_t *tok);
int pending_find(struct px_state *st, uint32_t table, uint32_t col, const uint8_t *tok,
		 uint64_t not_owner);
int pending_add(struct px_state *st, uint32_t table, uint32_t col, const uint8_t *tok,
		uint64_t owner);
void pending_drop(struct px_state *st, uint64_t owner);

/* relocate.c */
int map_rows(struct px_state *st, struct stmt *s, MDB_txn *txn);
int plan_relocation(struct px_state *st, struct stmt *s);
int plan_mates(struct px_state *st, struct stmt *s, MDB_txn *txn);
void plan_undo_stash(struct px_state *st, struct stmt *s);
void stash_release_evictions(struct px_state *st, struct stmt *s);
int plan_evictions(struct px_worker *w, struct stmt *s);
uint8_t *take_out(struct stmt *s, size_t S, uint64_t row, const uint8_t *rec, uint64_t *bits,
		  uint32_t slot, int mate);
int deliver_rows(struct px_worker *w, struct stmt *s, struct px_io *io, int *io_err);
void commit_stash(struct px_state *st, struct stmt *s);

#endif
