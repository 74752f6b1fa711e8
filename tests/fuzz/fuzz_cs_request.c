/*
 * fuzz_cs_request.c - libFuzzer target: the cloud store's request handler.
 *
 * Each input is one decrypted request body, exactly what an authenticated
 * (but possibly malicious or buggy) proxy can make the server decode.  It
 * runs through cs_proto_handle() against a real LMDB store opened once in a
 * private temporary directory (on /dev/shm when available, so durable
 * commits stay cheap).
 *
 * So that an input always meets the same store (reproducible crashes, and
 * coverage the fuzzer can keep), every input starts from a known state:
 *
 *   EMPTY    no block, block size not yet fixed   (inputs with size % 16 == 15)
 *   PRELUDE  blocks of 16 bytes: 0..3 at v1, 1 at v1+v2, 3 at v2+v3,
 *            UINT64_MAX at v1                     (every other input)
 *
 * The store is only rebuilt when the previous input changed it (a WRITE that
 * succeeded) or needs the other state, so it stays tiny and fast.
 *
 * Oracles beyond the sanitizers: the handler always produces a response
 * that decodes as a CsResponse, echoes the request's seq, carries a valid
 * lwc error code with a message or a result of the requested kind; a READ
 * answer fits the frame limit and holds the blocks asked for, in order; a
 * failed WRITE leaves the store exactly as it was (all-or-nothing); a WRITE
 * that succeeded reads back byte for byte; at most two versions are held.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <sodium.h>

#include "lwc.pb-c.h"
#include "../../cloudstore/proto.h"
#include "../../cloudstore/store.h"
#include "../testdir.h"

#define MAX_FRAME   (64u * 1024u)
#define PRE_BS      16u

enum state { ST_NONE, ST_EMPTY, ST_PRELUDE };

static char dir[256];
static struct cs_store *st;
static struct cs_session *ss;
static enum state cur = ST_NONE;
static FILE *devnull;
static unsigned long runs;
static int debug;                      /* LWC_FUZZ_DEBUG=1: print each answer */

/* ids whose versions the atomicity oracle compares */
static const uint64_t watch[] = { 0, 1, 2, 3, 4, 5, 100, UINT64_MAX - 1, UINT64_MAX };
#define NWATCH (sizeof(watch) / sizeof(watch[0]))

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz_cs_request: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                  \
			abort();                                             \
		}                                                            \
	} while (0)

static void store_close(void)
{
	if (ss)
		cs_store_lmdb.session_close(ss);
	if (st)
		cs_store_lmdb.close(st);
	ss = NULL;
	st = NULL;
}

static void pre_write(uint64_t id, uint64_t version)
{
	uint8_t data[PRE_BS];
	struct cs_block b = { .id = id, .version = version, .data = data, .len = sizeof(data) };
	char err[256] = "";

	memset(data, (int)(id * 16 + version), sizeof(data));
	if (cs_store_lmdb.write(ss, &b, 1, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "fuzz_cs_request: prelude write failed: %s\n", err);
		abort();
	}
}

/* Rebuild the store in the wanted state. */
static void reset(enum state want)
{
	char err[256] = "";

	store_close();
	testdir_empty(dir);
	if (cs_store_lmdb.open(&st, dir, 0, err, sizeof(err)) != LWC_OK ||
	    cs_store_lmdb.session_open(st, &ss, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "fuzz_cs_request: cannot open the store in %s: %s\n", dir, err);
		abort();
	}
	if (want == ST_PRELUDE) {
		for (uint64_t id = 0; id < 4; id++)
			pre_write(id, 1);
		pre_write(1, 2);
		pre_write(3, 2);
		pre_write(3, 3);
		pre_write(UINT64_MAX, 1);
	}
	cur = want;
}

/* What the atomicity oracle compares: totals and versions of watched ids. */
struct snap {
	struct cs_stat s;
	struct cs_held h[NWATCH];
};

static void take(struct snap *sn)
{
	char err[256] = "";

	memset(sn, 0, sizeof(*sn));
	CHECK(cs_store_lmdb.stat(ss, watch, NWATCH, &sn->s, sn->h, err, sizeof(err)) == LWC_OK);
}

static int same(const struct snap *a, const struct snap *b)
{
	if (a->s.block_count != b->s.block_count || a->s.versions_held != b->s.versions_held ||
	    a->s.block_size != b->s.block_size)
		return 0;
	for (size_t i = 0; i < NWATCH; i++) {
		if (a->h[i].id != b->h[i].id || a->h[i].n != b->h[i].n)
			return 0;
		for (uint32_t j = 0; j < a->h[i].n; j++)
			if (a->h[i].v[j] != b->h[i].v[j])
				return 0;
	}
	return 1;
}

static void cleanup(void)
{
	store_close();
	testdir_rm(dir);
	if (devnull)
		fclose(devnull);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	testdir_make(dir, sizeof(dir), "fuzz-cs");
	devnull = fopen("/dev/null", "w");
	debug = getenv("LWC_FUZZ_DEBUG") != NULL;
	atexit(cleanup);
	return 0;
}

/* Returns 1 when the store may have changed (a WRITE succeeded). */
static int check_response(const uint8_t *req, size_t req_len, const uint8_t *resp,
			  size_t resp_len, const struct snap *before)
{
	Lwc__CsRequest *rq = lwc__cs_request__unpack(NULL, req_len, req);
	Lwc__CsResponse *r = lwc__cs_response__unpack(NULL, resp_len, resp);
	int changed = 0;

	CHECK(r != NULL);
	if (debug)
		fprintf(stderr, "request op %d -> result %d%s%s\n", rq ? (int)rq->op_case : -1,
			(int)r->result_case, r->result_case == LWC__CS_RESPONSE__RESULT_ERROR ?
			": " : "", r->result_case == LWC__CS_RESPONSE__RESULT_ERROR ?
			r->error->message : "");
	CHECK(r->seq == (rq ? rq->seq : 0));
	switch (r->result_case) {
	case LWC__CS_RESPONSE__RESULT_ERROR:
		CHECK(r->error->code < 0 && r->error->code >= LWC_ERR_MIN_);
		CHECK(r->error->message != NULL && r->error->message[0] != '\0');
		if (rq && rq->op_case == LWC__CS_REQUEST__OP_WRITE) {
			/* all or nothing: a refused WRITE changed nothing */
			struct snap after;
			take(&after);
			CHECK(same(&after, before));
		}
		break;
	case LWC__CS_RESPONSE__RESULT_READ:
		CHECK(rq != NULL && rq->op_case == LWC__CS_REQUEST__OP_READ);
		CHECK(resp_len <= MAX_FRAME);
		CHECK(r->read->n_blocks == rq->read->n_ids);
		for (size_t i = 0; i < r->read->n_blocks; i++) {
			CHECK(r->read->blocks[i]->id == rq->read->ids[i]);
			CHECK(r->read->blocks[i]->version == rq->read->versions[i]);
			CHECK(r->read->blocks[i]->data.len == r->read->blocks[0]->data.len);
			CHECK(r->read->blocks[i]->data.len > 0);
		}
		break;
	case LWC__CS_RESPONSE__RESULT_WRITE: {
		size_t n;
		CHECK(rq != NULL && rq->op_case == LWC__CS_REQUEST__OP_WRITE);
		n = rq->write->n_blocks;
		CHECK(r->write->count == n && n > 0);
		changed = 1;
		/* what was acknowledged reads back */
		for (size_t i = 0; i < n; i++) {
			const Lwc__CsBlock *b = rq->write->blocks[i];
			uint8_t *got = malloc(b->data.len);
			char err[256] = "";
			CHECK(got != NULL);
			CHECK(cs_store_lmdb.read(ss, &b->id, &b->version, 1, &got, b->data.len,
						 err, sizeof(err)) == LWC_OK);
			CHECK(memcmp(got, b->data.data, b->data.len) == 0);
			free(got);
		}
		break;
	}
	case LWC__CS_RESPONSE__RESULT_STAT:
		CHECK(rq != NULL && rq->op_case == LWC__CS_REQUEST__OP_STAT);
		CHECK(r->stat->n_held == rq->stat->n_ids);
		CHECK(r->stat->versions_held >= r->stat->block_count);
		CHECK(r->stat->versions_held <= 2 * r->stat->block_count);
		for (size_t i = 0; i < r->stat->n_held; i++) {
			CHECK(r->stat->held[i]->id == rq->stat->ids[i]);
			CHECK(r->stat->held[i]->n_versions <= 2);
			if (r->stat->held[i]->n_versions == 2)
				CHECK(r->stat->held[i]->versions[0] + 1 ==
				      r->stat->held[i]->versions[1]);
		}
		break;
	default:
		CHECK(!"response without a result");
	}
	if (rq)
		lwc__cs_request__free_unpacked(rq, NULL);
	lwc__cs_response__free_unpacked(r, NULL);
	return changed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum state want = size % 16 == 15 ? ST_EMPTY : ST_PRELUDE;
	struct cs_trace_info ti;
	struct snap before;
	uint8_t *resp = NULL;
	size_t resp_len = 0;
	int rc;

	runs++;
	if (cur != want)
		reset(want);
	take(&before);
	rc = cs_proto_handle(&cs_store_lmdb, ss, MAX_FRAME, data, size, &resp, &resp_len, &ti);
	CHECK(rc == LWC_OK || rc == LWC_ERR_NOMEM);
	if (rc == LWC_OK) {
		CHECK(resp != NULL);
		if (check_response(data, size, resp, resp_len, &before))
			cur = ST_NONE;            /* dirty: rebuild before the next input */
		cs_trace_write(devnull, runs, &ti, size, resp_len);
	} else {
		cur = ST_NONE;                    /* unknown: rebuild */
	}
	cs_trace_info_clear(&ti);
	free(resp);
	return 0;
}
