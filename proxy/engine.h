/*
 * engine.h - statements: planning on the indexes, the oblivious access to
 * the cloud store (DESIGN section 5), commit (section 7), block locks
 * (section 8).
 *
 * A statement runs in one worker thread:
 *   plan     (st->mu)  evaluate the predicate or pick free slots, check
 *                      uniqueness, lock the k real blocks and γ-k padding
 *                      blocks drawn uniformly from the unlocked rest; if a
 *                      real block is locked, wait and plan again
 *   access   (no lock) READ the γ blocks (sorted ids: which are real is not
 *                      in the order), open, inverse-permute, act, refill
 *                      every empty slot with fresh random bytes, permute
 *                      with the next version's seed, seal, WRITE them all
 *   commit   (st->mu)  one LMDB transaction: versions, occupancy, indexes,
 *                      catalog; then unlock and answer
 * Accesses larger than the batch size run as several READ/WRITE pairs of
 * equal size over a random split of the γ blocks, all committed at once.
 */
#ifndef LWC_PX_ENGINE_H
#define LWC_PX_ENGINE_H

#include <pthread.h>
#include <stdint.h>

#include "cs_client.h"
#include "pace.h"
#include "lwc.pb-c.h"
#include "state.h"

enum px_pad { PX_PAD_RATIO, PX_PAD_POW2, PX_PAD_FIXED };

/* When a SELECT answers (serve --answer-early): after the proxy's commit,
 * like every statement; once its WRITEs are acknowledged, before the
 * commit; or with its last WRITE still in flight. */
enum px_answer { PX_ANSWER_OFF, PX_ANSWER_DURABLE, PX_ANSWER_ON, PX_ANSWER_N };

/* "off", "durable", "on": the option's values and the status line's. */
extern const char *const px_answer_names[PX_ANSWER_N];

struct px_engine_cfg {
	enum px_pad pad;
	uint32_t pad_arg;           /* ratio R or fixed G                   */
	uint32_t pad_min;           /* γ_min                                */
	uint32_t batch_blocks;      /* largest READ/WRITE                   */
	int rtt_ms;                 /* simulated proxy-cloud round trip     */
	int cloud_timeout_ms;
	int read_ahead;             /* READ the next batch during this one  */
	int pad_age;                /* padding as old as the real blocks    */
	enum px_answer answer_early; /* when a SELECT answers (serve
					--answer-early; threat-model.md,
					"Timing")                          */
	enum px_pace_mode pace;     /* serve --pace (pace.h)                */
	uint32_t pace_us;           /* D of --pace N                        */
	const uint8_t *cs_key;      /* K_CS                                 */
	const char *cs_addr;
};

/* One per worker thread: its cloud connection and scratch space. */
struct bulk_pre;

struct px_worker {
	struct px_state *st;
	const struct px_engine_cfg *cfg;
	struct cs_client *cloud;
	uint32_t *scratch;
	MDB_txn *rtxn;                 /* its read transaction, reset between uses */
	int rtxn_busy;
	char name[64];
	/* Pipelined INSERTs (bulk.c, "ahead"): the new blocks a bulk INSERT
	 * holds, which the connection's next request may take the ids after
	 * (pipe_mu; the read-ahead thread of server.c and the worker) */
	pthread_mutex_t pipe_mu;
	pthread_cond_t pipe_cv;
	int grow_state;                /* 0: not yet, 1: held up to grow_end, 2: over */
	uint64_t grow_end;
	int grow_handed;               /* the next request took ids from grow_end */
	int stmt_over;                 /* the statement has ended */
	struct bulk_pre *pre;          /* the next request's blocks, made ahead */
};

/* How a statement talks to its user. */
struct px_io {
	void *ctx;
	int (*send)(void *ctx, const Lwc__ProxyResponse *resp);
	/* Next request of the user (for Decisions); LWC_ERR_TIMEOUT etc. */
	int (*recv)(void *ctx, Lwc__ProxyRequest **req);
	/* The connection's pacing (pace.h); NULL: none. */
	struct px_pace *pace;
};

int px_worker_init(struct px_worker *w, struct px_state *st, const struct px_engine_cfg *cfg,
		   const char *name) LWC_WUR;
void px_worker_fini(struct px_worker *w);
/* A worker of one job's (px_worker_init): its cloud connection back to the
 * pool, its scratch freed; the pool is left open (px_worker_fini closes it). */
void px_worker_drop(struct px_worker *w);

/* A read transaction for the worker (px_read_end ends it).  LMDB sizes a
 * new read transaction by the environment's maxdbs (PX_MAX_DBS slots, about
 * 3 MB allocated and zeroed per begin), so each worker keeps one and renews
 * it; a second one while the first is open is a fresh transaction. */
int px_read_begin(struct px_worker *w, MDB_txn **txn) LWC_WUR;
void px_read_end(struct px_worker *w, MDB_txn *txn);
/* Make the worker's read transaction now rather than in its first
 * statement (serve does it for every worker at start-up): a new one took
 * about 0.3 ms of that statement, and a lone client's statements go to
 * every worker in turn.  Left reset, as px_read_end leaves it.  0 or an
 * LMDB error. */
int px_worker_warm(struct px_worker *w) LWC_WUR;

/* γ for k real blocks under the configured policy (before capping at n). */
uint64_t px_gamma(const struct px_engine_cfg *cfg, uint64_t k);

/* Send an Error answer (code, message) to the user. */
int px_send_error(struct px_io *io, uint64_t seq, int code, const char *msg) LWC_WUR;

/* Pipelined INSERTs (bulk.c).  px_pipe_begin before a request runs,
 * px_pipe_end once it has ended (before the read-ahead thread is joined).
 * bulk_ahead, on the read-ahead thread, with the next request req read
 * while the one numbered seq runs: when req is a bulk INSERT that follows
 * it and that one holds new blocks still, req's own blocks are sealed and
 * written (the ids after those) and its index entries sorted, ahead of
 * its turn; its own bulk_insert then starts at its commit.  bulk_drop:
 * req has run (or never will): what was made ahead for it and not used is
 * freed, and the ids it held are let go. */
void px_pipe_begin(struct px_worker *w);
void px_pipe_end(struct px_worker *w);
void bulk_ahead(struct px_worker *w, const Lwc__ProxyRequest *req, uint64_t seq);
void bulk_drop(struct px_worker *w, const Lwc__ProxyRequest *req);

/* Run one request and send its whole answer.  Returns LWC_OK when the
 * connection may go on (the statement succeeded or its error was sent),
 * or an error when the connection must be closed. */
int px_execute(struct px_worker *w, const Lwc__ProxyRequest *req, struct px_io *io) LWC_WUR;

/* Append n new blocks (sealed random content, version 1) to the cloud and
 * the state.  Used by init and when free slots run low. */
int px_grow(struct px_worker *w, uint64_t n, char *err, size_t errlen) LWC_WUR;

/* Offline consistency check (lwc-proxy check): prints problems to stdout,
 * returns the number found (or a negative error). */
int px_check(struct px_worker *w, int verbose);

#endif
