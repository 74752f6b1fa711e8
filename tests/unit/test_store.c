/*
 * test_store.c - the cloud store's shared rules (cloudstore/store.c) and its
 * request handler (cloudstore/proto.c) against a real LMDB store in a
 * private mkdtemp directory.
 *
 * Requests are encoded with protobuf-c exactly as the proxy sends them
 * (after the channel has decrypted them) and responses decoded as
 * Lwc__CsResponse.  Every failed WRITE is checked to leave the store
 * byte-for-byte as it was (STAT totals, versions held, block contents).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lmdb.h>
#include <sodium.h>

#include "cry.h"
#include "lwc.pb-c.h"
#include "../../cloudstore/proto.h"
#include "../../cloudstore/store.h"
#include "../testdir.h"

#define BIG_FRAME (16u * 1024u * 1024u)
#define BS 64u                          /* block size used by most tests */

/* ---------------------------------------------------------------- helpers */

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	assert_non_null(p);
	return p;
}

struct fx {
	char dir[64];
	struct cs_store *st;
	struct cs_session *s;
	uint64_t seq;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256] = "";

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/lwc-test-store-XXXXXX");
	if (mkdtemp(f->dir) == NULL ||
	    cs_store_lmdb.open(&f->st, f->dir, 0, err, sizeof(err)) != LWC_OK ||
	    cs_store_lmdb.session_open(f->st, &f->s, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "store set-up failed: %s\n", err);
		return -1;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	if (f->s)
		cs_store_lmdb.session_close(f->s);
	if (f->st)
		cs_store_lmdb.close(f->st);
	testdir_rm(f->dir);
	free(f);
	return 0;
}

/* Run one raw request body; returns the decoded response. */
static Lwc__CsResponse *call_raw(struct fx *f, uint32_t max_frame, const uint8_t *req,
				 size_t len, struct cs_trace_info *ti_out)
{
	struct cs_trace_info ti;
	uint8_t *resp = NULL;
	size_t resp_len = 0;
	Lwc__CsResponse *r;

	assert_int_equal(cs_proto_handle(&cs_store_lmdb, f->s, max_frame, req, len,
					 &resp, &resp_len, &ti), LWC_OK);
	assert_non_null(resp);
	r = lwc__cs_response__unpack(NULL, resp_len, resp);
	assert_non_null(r);
	{
		/* the bytes are protobuf-c's own (a READ's answer is packed by hand) */
		size_t n = lwc__cs_response__get_packed_size(r);
		uint8_t *again = xmalloc(n);

		assert_int_equal(lwc__cs_response__pack(r, again), n);
		assert_int_equal(n, resp_len);
		assert_memory_equal(again, resp, n);
		free(again);
	}
	if (r->result_case != LWC__CS_RESPONSE__RESULT_ERROR) {
		assert_true(resp_len <= max_frame);
		assert_int_equal(ti.status, LWC_OK);
	} else {
		assert_int_equal(ti.status, r->error->code);
	}
	free(resp);
	if (ti_out)
		*ti_out = ti;
	else
		cs_trace_info_clear(&ti);
	return r;
}

static Lwc__CsResponse *call(struct fx *f, uint32_t max_frame, Lwc__CsRequest *rq,
			     struct cs_trace_info *ti)
{
	size_t n;
	uint8_t *buf;
	Lwc__CsResponse *r;

	rq->seq = ++f->seq;
	n = lwc__cs_request__get_packed_size(rq);
	buf = xmalloc(n);
	assert_int_equal(lwc__cs_request__pack(rq, buf), n);
	r = call_raw(f, max_frame, buf, n, ti);
	free(buf);
	assert_int_equal(r->seq, f->seq);
	return r;
}

static void expect_error(Lwc__CsResponse *r, int code)
{
	assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_ERROR);
	if (r->error->code != code)
		fail_msg("expected %s, got %s: %s", lwc_errname(code), lwc_errname(r->error->code),
			 r->error->message);
	assert_non_null(r->error->message);
	assert_true(r->error->message[0] != '\0');
}

static uint8_t fill_of(uint64_t id, uint64_t version, uint8_t salt)
{
	return (uint8_t)(id * 7 + version * 13 + salt);
}

struct wb {
	uint64_t id, version;
	size_t len;
	uint8_t salt;
};

/* WRITE blocks; returns the response. */
static Lwc__CsResponse *write_blocks(struct fx *f, const struct wb *w, size_t n)
{
	Lwc__CsRequest rq = LWC__CS_REQUEST__INIT;
	Lwc__CsWriteReq wq = LWC__CS_WRITE_REQ__INIT;
	Lwc__CsBlock *bs = xmalloc(n * sizeof(*bs)), **ptrs = xmalloc(n * sizeof(*ptrs));
	uint8_t **data = xmalloc(n * sizeof(*data));
	Lwc__CsResponse *r;

	for (size_t i = 0; i < n; i++) {
		lwc__cs_block__init(&bs[i]);
		bs[i].id = w[i].id;
		bs[i].version = w[i].version;
		data[i] = xmalloc(w[i].len);
		memset(data[i], fill_of(w[i].id, w[i].version, w[i].salt), w[i].len);
		bs[i].data.data = data[i];
		bs[i].data.len = w[i].len;
		ptrs[i] = &bs[i];
	}
	wq.n_blocks = n;
	wq.blocks = ptrs;
	rq.op_case = LWC__CS_REQUEST__OP_WRITE;
	rq.write = &wq;
	r = call(f, BIG_FRAME, &rq, NULL);
	for (size_t i = 0; i < n; i++)
		free(data[i]);
	free(data);
	free(bs);
	free(ptrs);
	return r;
}

static void write_ok(struct fx *f, const struct wb *w, size_t n)
{
	Lwc__CsResponse *r = write_blocks(f, w, n);

	if (r->result_case == LWC__CS_RESPONSE__RESULT_ERROR)
		fail_msg("WRITE failed: %s", r->error->message);
	assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_WRITE);
	assert_int_equal(r->write->count, n);
	lwc__cs_response__free_unpacked(r, NULL);
}

static void write_err(struct fx *f, const struct wb *w, size_t n, int code)
{
	Lwc__CsResponse *r = write_blocks(f, w, n);

	expect_error(r, code);
	lwc__cs_response__free_unpacked(r, NULL);
}

static Lwc__CsResponse *read_blocks(struct fx *f, uint32_t max_frame, const uint64_t *ids,
				    const uint64_t *versions, size_t n, size_t nv)
{
	Lwc__CsRequest rq = LWC__CS_REQUEST__INIT;
	Lwc__CsReadReq rr = LWC__CS_READ_REQ__INIT;

	rr.n_ids = n;
	rr.ids = (uint64_t *)(uintptr_t)ids;
	rr.n_versions = nv;
	rr.versions = (uint64_t *)(uintptr_t)versions;
	rq.op_case = LWC__CS_REQUEST__OP_READ;
	rq.read = &rr;
	return call(f, max_frame, &rq, NULL);
}

/* READ and check each block's bytes against the fill pattern. */
static void read_check(struct fx *f, const uint64_t *ids, const uint64_t *versions, size_t n,
		       const uint8_t *salts)
{
	Lwc__CsResponse *r = read_blocks(f, BIG_FRAME, ids, versions, n, n);

	if (r->result_case == LWC__CS_RESPONSE__RESULT_ERROR)
		fail_msg("READ failed: %s", r->error->message);
	assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_READ);
	assert_int_equal(r->read->n_blocks, n);
	for (size_t i = 0; i < n; i++) {
		Lwc__CsBlock *b = r->read->blocks[i];
		uint8_t want = fill_of(ids[i], versions[i], salts ? salts[i] : 0);

		assert_int_equal(b->id, ids[i]);           /* request order */
		assert_int_equal(b->version, versions[i]);
		assert_int_equal(b->data.len, BS);
		for (size_t j = 0; j < b->data.len; j++)
			assert_int_equal(b->data.data[j], want);
	}
	lwc__cs_response__free_unpacked(r, NULL);
}

static Lwc__CsResponse *stat_ids(struct fx *f, const uint64_t *ids, size_t n)
{
	Lwc__CsRequest rq = LWC__CS_REQUEST__INIT;
	Lwc__CsStatReq sq = LWC__CS_STAT_REQ__INIT;
	Lwc__CsResponse *r;

	sq.n_ids = n;
	sq.ids = (uint64_t *)(uintptr_t)ids;
	rq.op_case = LWC__CS_REQUEST__OP_STAT;
	rq.stat = &sq;
	r = call(f, BIG_FRAME, &rq, NULL);
	if (r->result_case == LWC__CS_RESPONSE__RESULT_ERROR)
		fail_msg("STAT failed: %s", r->error->message);
	assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_STAT);
	assert_string_equal(r->stat->backend, "lmdb");
	assert_int_equal(r->stat->n_held, n);
	return r;
}

static void expect_totals(struct fx *f, uint64_t blocks, uint64_t held, uint32_t bs)
{
	Lwc__CsResponse *r = stat_ids(f, NULL, 0);

	assert_int_equal(r->stat->block_count, blocks);
	assert_int_equal(r->stat->versions_held, held);
	assert_int_equal(r->stat->block_size, bs);
	lwc__cs_response__free_unpacked(r, NULL);
}

/* Versions held of one id, as STAT reports them. */
static void expect_held(struct fx *f, uint64_t id, size_t n, const uint64_t *v)
{
	Lwc__CsResponse *r = stat_ids(f, &id, 1);
	Lwc__CsHeld *h = r->stat->held[0];

	assert_int_equal(h->id, id);
	assert_int_equal(h->n_versions, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(h->versions[i], v[i]);
	lwc__cs_response__free_unpacked(r, NULL);
}

/*
 * Everything the store holds for the given ids, serialised: the STAT answer
 * (totals and versions) and the bytes of every (id, version) held.
 */
static uint8_t *snapshot(struct fx *f, const uint64_t *ids, size_t n, size_t *len)
{
	Lwc__CsResponse *st = stat_ids(f, ids, n);
	size_t cap = 1 << 16, off = 0;
	uint8_t *buf = xmalloc(cap);

	st->seq = 0;
	off = lwc__cs_response__get_packed_size(st);
	assert_true(off < cap);
	lwc__cs_response__pack(st, buf);
	for (size_t i = 0; i < n; i++) {
		Lwc__CsHeld *h = st->stat->held[i];
		for (size_t j = 0; j < h->n_versions; j++) {
			Lwc__CsResponse *r = read_blocks(f, BIG_FRAME, &h->id, &h->versions[j], 1, 1);
			assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_READ);
			assert_true(off + r->read->blocks[0]->data.len <= cap);
			memcpy(buf + off, r->read->blocks[0]->data.data, r->read->blocks[0]->data.len);
			off += r->read->blocks[0]->data.len;
			lwc__cs_response__free_unpacked(r, NULL);
		}
	}
	lwc__cs_response__free_unpacked(st, NULL);
	*len = off;
	return buf;
}

/* ---------------------------------------------------- cs_version_check */

static void test_version_check(void **state)
{
	static const struct {
		uint64_t held, v;
		int want;
		const char *msg;
	} cases[] = {
		{ 0, 1, LWC_OK, NULL },
		{ 0, 2, LWC_ERR_VERSION, "is new" },
		{ 0, 0, LWC_ERR_VERSION, "is new" },
		{ 0, UINT64_MAX, LWC_ERR_VERSION, "is new" },
		{ 1, 1, LWC_OK, NULL },
		{ 1, 2, LWC_OK, NULL },
		{ 1, 3, LWC_ERR_VERSION, "skips ahead" },
		{ 1, 0, LWC_ERR_VERSION, "older" },
		{ 7, 7, LWC_OK, NULL },                /* h: overwrite after a crash */
		{ 7, 8, LWC_OK, NULL },                /* h+1: advance */
		{ 7, 9, LWC_ERR_VERSION, "skips ahead" },
		{ 7, 6, LWC_ERR_VERSION, "older" },
		{ 7, 1, LWC_ERR_VERSION, "older" },
		{ 7, UINT64_MAX, LWC_ERR_VERSION, "skips ahead" },
		{ UINT64_MAX - 1, UINT64_MAX, LWC_OK, NULL },
		{ UINT64_MAX, UINT64_MAX, LWC_OK, NULL },
		{ UINT64_MAX, 0, LWC_ERR_VERSION, "older" },   /* h+1 wraps to 0 */
		{ UINT64_MAX, UINT64_MAX - 1, LWC_ERR_VERSION, "older" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		int rc = cs_version_check(42, cases[i].held, cases[i].v, err, sizeof(err));

		if (rc != cases[i].want)
			fail_msg("case %zu (held %llu, v %llu): got %s", i,
				 (unsigned long long)cases[i].held, (unsigned long long)cases[i].v,
				 lwc_errname(rc));
		if (cases[i].msg) {
			assert_non_null(strstr(err, cases[i].msg));
			assert_non_null(strstr(err, "42"));
		}
	}
	/* a NULL message buffer is allowed */
	assert_int_equal(cs_version_check(1, 5, 9, NULL, 0), LWC_ERR_VERSION);
}

/* --------------------------------------------------- cs_write_validate */

static void test_write_validate(void **state)
{
	static uint8_t data[16];
	struct cs_block b[3];
	char err[256];
	(void)state;

	for (int i = 0; i < 3; i++)
		b[i] = (struct cs_block){ .id = (uint64_t)i, .version = 1, .data = data, .len = 16 };
	assert_int_equal(cs_write_validate(b, 3, err, sizeof(err)), LWC_OK);
	assert_int_equal(cs_write_validate(b, 1, err, sizeof(err)), LWC_OK);

	assert_int_equal(cs_write_validate(b, 0, err, sizeof(err)), LWC_ERR_PROTO);
	assert_non_null(strstr(err, "no blocks"));

	b[1].len = 0;
	assert_int_equal(cs_write_validate(b, 3, err, sizeof(err)), LWC_ERR_BLOCK_SIZE);
	b[0].len = b[1].len = b[2].len = 0;
	assert_int_equal(cs_write_validate(b, 3, err, sizeof(err)), LWC_ERR_BLOCK_SIZE);
	b[0].len = b[1].len = b[2].len = CS_BLOCK_SIZE_MAX + 1;
	assert_int_equal(cs_write_validate(b, 3, err, sizeof(err)), LWC_ERR_BLOCK_SIZE);
	b[0].len = b[1].len = b[2].len = CS_BLOCK_SIZE_MAX;
	assert_int_equal(cs_write_validate(b, 3, err, sizeof(err)), LWC_OK);   /* not read */
	b[0].len = b[1].len = b[2].len = 16;

	/* mixed sizes, wherever the odd one is */
	for (int i = 0; i < 3; i++) {
		b[i].len = 17;
		assert_int_equal(cs_write_validate(b, 3, err, sizeof(err)), LWC_ERR_BLOCK_SIZE);
		b[i].len = 15;
		assert_int_equal(cs_write_validate(b, 3, err, sizeof(err)), LWC_ERR_BLOCK_SIZE);
		b[i].len = 16;
	}

	/* duplicate ids, adjacent or not */
	b[2].id = 0;
	assert_int_equal(cs_write_validate(b, 3, err, sizeof(err)), LWC_ERR_DUPLICATE);
	assert_non_null(strstr(err, "block 0 named twice"));
	b[2].id = 1;
	assert_int_equal(cs_write_validate(b, 3, err, sizeof(err)), LWC_ERR_DUPLICATE);
	b[2].id = 2;

	/* version 0 */
	for (int i = 0; i < 3; i++) {
		b[i].version = 0;
		assert_int_equal(cs_write_validate(b, 3, err, sizeof(err)), LWC_ERR_VERSION);
		b[i].version = 1;
	}
	assert_int_equal(cs_write_validate(b, 3, NULL, 0), LWC_OK);
}

static void test_read_validate(void **state)
{
	uint64_t ids[5] = { 9, 3, UINT64_MAX, 0, 4 };
	char err[256];
	(void)state;

	assert_int_equal(cs_read_validate(ids, 5, err, sizeof(err)), LWC_OK);
	assert_int_equal(cs_read_validate(ids, 1, err, sizeof(err)), LWC_OK);
	assert_int_equal(cs_read_validate(ids, 0, err, sizeof(err)), LWC_ERR_PROTO);
	assert_non_null(strstr(err, "no blocks"));
	ids[4] = 9;
	assert_int_equal(cs_read_validate(ids, 5, err, sizeof(err)), LWC_ERR_DUPLICATE);
	assert_non_null(strstr(err, "block 9 named twice"));
	ids[4] = UINT64_MAX;
	assert_int_equal(cs_read_validate(ids, 5, err, sizeof(err)), LWC_ERR_DUPLICATE);
	ids[4] = 4;
	ids[1] = ids[0];
	assert_int_equal(cs_read_validate(ids, 2, err, sizeof(err)), LWC_ERR_DUPLICATE);
}

static void test_store_lookup(void **state)
{
	const struct cs_store_ops *ops;
	const char *spec;
	char err[256];
	static const char *const bad[] = {
		"foo:x", "lmdb", "lmdb:", "postgres", "postgres:", "", ":", ":x",
		"lmd:x", "lmdbx:/x", "LMDB:/x", "pg:host=a", "redis-cluster", "redis-cluster:",
		"redis:h:1",
	};
	(void)state;

	ops = NULL;
	assert_int_equal(cs_store_lookup("lmdb:/x", &ops, &spec, err, sizeof(err)), LWC_OK);
	assert_ptr_equal(ops, &cs_store_lmdb);
	assert_string_equal(spec, "/x");
	assert_int_equal(cs_store_lookup("postgres:host=a", &ops, &spec, err, sizeof(err)),
			 LWC_OK);
	assert_ptr_equal(ops, &cs_store_pg);
	assert_string_equal(spec, "host=a");
	assert_string_equal(ops->name, "postgres");
	/* only the first colon separates: conninfo URIs keep theirs */
	assert_int_equal(cs_store_lookup("postgres:postgresql://u@h:5432/db", &ops, &spec,
					 err, sizeof(err)), LWC_OK);
	assert_string_equal(spec, "postgresql://u@h:5432/db");
	assert_int_equal(cs_store_lookup("redis-cluster:127.0.0.1:7000,wait=1", &ops, &spec,
					 err, sizeof(err)), LWC_OK);
	assert_ptr_equal(ops, &cs_store_redis);
	assert_string_equal(spec, "127.0.0.1:7000,wait=1");
	assert_string_equal(ops->name, "redis-cluster");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ops = NULL;
		spec = NULL;
		err[0] = '\0';
		assert_int_equal(cs_store_lookup(bad[i], &ops, &spec, err, sizeof(err)),
				 LWC_ERR_ARG);
		assert_null(ops);
		assert_true(err[0] != '\0');
	}
	assert_int_equal(cs_store_lookup("foo:x", &ops, &spec, err, sizeof(err)), LWC_ERR_ARG);
	assert_non_null(strstr(err, "'foo'"));
	assert_int_equal(cs_store_lookup(NULL, &ops, &spec, err, sizeof(err)), LWC_ERR_ARG);
}

/* ------------------------------------------------------- cs_proto_handle */

static void test_proto_empty_store(void **state)
{
	struct fx *f = *state;
	uint64_t ids[2] = { 0, 5 }, vs[2] = { 1, 1 };
	Lwc__CsResponse *r;

	expect_totals(f, 0, 0, 0);
	r = stat_ids(f, ids, 2);
	assert_int_equal(r->stat->held[0]->id, 0);
	assert_int_equal(r->stat->held[0]->n_versions, 0);
	assert_int_equal(r->stat->held[1]->id, 5);
	assert_int_equal(r->stat->held[1]->n_versions, 0);
	lwc__cs_response__free_unpacked(r, NULL);
	r = read_blocks(f, BIG_FRAME, ids, vs, 2, 2);
	expect_error(r, LWC_ERR_NOT_FOUND);
	assert_non_null(strstr(r->error->message, "empty"));
	lwc__cs_response__free_unpacked(r, NULL);
}

static void test_proto_write_read_stat(void **state)
{
	struct fx *f = *state;
	struct wb w[4];
	Lwc__CsResponse *r;

	for (int i = 0; i < 4; i++)
		w[i] = (struct wb){ .id = (uint64_t)i, .version = 1, .len = BS };
	write_ok(f, w, 4);
	expect_totals(f, 4, 4, BS);
	{
		uint64_t ids[3] = { 2, 0, 3 }, vs[3] = { 1, 1, 1 };
		read_check(f, ids, vs, 3, NULL);          /* answered in request order */
	}
	/* advance block 0: v1 and v2 held */
	w[0].version = 2;
	write_ok(f, w, 1);
	expect_totals(f, 4, 5, BS);
	expect_held(f, 0, 2, (const uint64_t[]){ 1, 2 });
	{
		uint64_t ids[1] = { 0 }, v1[1] = { 1 }, v2[1] = { 2 };
		read_check(f, ids, v1, 1, NULL);          /* the committed version stays readable */
		read_check(f, ids, v2, 1, NULL);
	}
	/* v3 lets the store drop v1 */
	w[0].version = 3;
	write_ok(f, w, 1);
	expect_totals(f, 4, 5, BS);
	expect_held(f, 0, 2, (const uint64_t[]){ 2, 3 });
	{
		uint64_t ids[1] = { 0 }, vs[1] = { 1 };
		r = read_blocks(f, BIG_FRAME, ids, vs, 1, 1);
		expect_error(r, LWC_ERR_NOT_FOUND);
		assert_non_null(strstr(r->error->message, "block 0 version 1 not held"));
		assert_non_null(strstr(r->error->message, "2, 3"));
		lwc__cs_response__free_unpacked(r, NULL);
	}
	/* the newest version again (a proxy that crashed before committing):
	 * replaced in place, nothing more held */
	w[0] = (struct wb){ .id = 0, .version = 3, .len = BS, .salt = 99 };
	write_ok(f, w, 1);
	expect_totals(f, 4, 5, BS);
	{
		uint64_t ids[1] = { 0 }, vs[1] = { 3 };
		uint8_t salt[1] = { 99 };
		read_check(f, ids, vs, 1, salt);
	}
	/* several blocks advancing together, with a new one among them */
	{
		struct wb m[3] = {
			{ .id = 1, .version = 2, .len = BS },
			{ .id = 3, .version = 1, .len = BS, .salt = 5 },   /* overwrite of v1 */
			{ .id = 10, .version = 1, .len = BS },
		};
		uint64_t ids[3] = { 10, 3, 1 }, vs[3] = { 1, 1, 2 };
		uint8_t salts[3] = { 0, 5, 0 };
		write_ok(f, m, 3);
		expect_totals(f, 5, 7, BS);
		read_check(f, ids, vs, 3, salts);
	}
	/* the extreme ids */
	{
		struct wb e[2] = {
			{ .id = UINT64_MAX, .version = 1, .len = BS },
			{ .id = UINT64_MAX - 1, .version = 1, .len = BS },
		};
		write_ok(f, e, 2);
		e[0].version = 2;
		write_ok(f, e, 1);
		e[0].version = 3;
		write_ok(f, e, 1);
		expect_held(f, UINT64_MAX, 2, (const uint64_t[]){ 2, 3 });
		expect_held(f, UINT64_MAX - 1, 1, (const uint64_t[]){ 1 });
		expect_held(f, 4, 0, NULL);
		expect_held(f, 11, 0, NULL);
		expect_totals(f, 7, 10, BS);
	}
	/* unknown block and unknown version */
	{
		uint64_t ids[2] = { 1, 4 }, vs[2] = { 2, 1 };
		r = read_blocks(f, BIG_FRAME, ids, vs, 2, 2);
		expect_error(r, LWC_ERR_NOT_FOUND);
		assert_non_null(strstr(r->error->message, "block 4 not held"));
		lwc__cs_response__free_unpacked(r, NULL);
		ids[1] = 2;
		vs[1] = 7;
		r = read_blocks(f, BIG_FRAME, ids, vs, 2, 2);
		expect_error(r, LWC_ERR_NOT_FOUND);
		assert_non_null(strstr(r->error->message, "block 2 version 7"));
		lwc__cs_response__free_unpacked(r, NULL);
	}
}

/* A READ's answer, packed by hand, at the edges of its varints: sequence
 * numbers 0 (left out), 127, 128 and 2^64 - 1, ids 0, 300 and 2^64 - 1,
 * versions 1, 3 and 128, one block and many; call_raw compares every
 * answer's bytes with protobuf-c's packing of what it decodes to. */
static void test_proto_read_packing(void **state)
{
	struct fx *f = *state;
	static const uint64_t seqs[] = { 0, 1, 127, 128, 16383, 16384, UINT64_MAX };
	struct wb w[3] = {
		{ .id = 0, .version = 1, .len = BS },
		{ .id = UINT64_MAX, .version = 1, .len = BS, .salt = 3 },
		{ .id = 300, .version = 1, .len = BS, .salt = 4 },
	};
	uint64_t ids[3] = { UINT64_MAX, 0, 300 }, vs[3] = { 3, 1, 128 };

	write_ok(f, w, 3);
	for (uint64_t v = 2; v <= 128; v++) {
		w[2].version = v;
		write_ok(f, &w[2], 1);
		if (v <= 3) {
			w[1].version = v;
			write_ok(f, &w[1], 1);
		}
	}
	for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++) {
		Lwc__CsRequest rq = LWC__CS_REQUEST__INIT;
		Lwc__CsReadReq rr = LWC__CS_READ_REQ__INIT;
		Lwc__CsResponse *r;
		uint8_t *buf;
		size_t n;

		for (size_t m = 1; m <= 3; m++) {
			rr.n_ids = rr.n_versions = m;
			rr.ids = ids;
			rr.versions = vs;
			rq.op_case = LWC__CS_REQUEST__OP_READ;
			rq.read = &rr;
			rq.seq = seqs[k];
			n = lwc__cs_request__get_packed_size(&rq);
			buf = xmalloc(n);
			assert_int_equal(lwc__cs_request__pack(&rq, buf), n);
			r = call_raw(f, BIG_FRAME, buf, n, NULL);
			free(buf);
			assert_int_equal(r->seq, seqs[k]);
			assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_READ);
			assert_int_equal(r->read->n_blocks, m);
			for (size_t i = 0; i < m; i++) {
				assert_int_equal(r->read->blocks[i]->id, ids[i]);
				assert_int_equal(r->read->blocks[i]->version, vs[i]);
				assert_int_equal(r->read->blocks[i]->data.len, BS);
				assert_int_equal(r->read->blocks[i]->data.data[BS - 1],
						 fill_of(ids[i], vs[i], i == 0 ? 3 : i == 1 ? 0 : 4));
			}
			lwc__cs_response__free_unpacked(r, NULL);
		}
	}
	{
		struct wb many[200];
		uint64_t many_ids[200], many_vs[200];

		for (size_t i = 0; i < 200; i++)
			many[i] = (struct wb){ .id = 1000 + i * 997, .version = 1, .len = BS };
		for (size_t i = 0; i < 200; i++) {            /* read in reverse */
			many_ids[i] = many[199 - i].id;
			many_vs[i] = many[199 - i].version;
		}
		write_ok(f, many, 200);
		read_check(f, many_ids, many_vs, 200, NULL);
	}
}

static void test_proto_failed_writes(void **state)
{
	struct fx *f = *state;
	static const uint64_t ids[] = { 0, 1, 2, 3, 100, 101, UINT64_MAX };
	const size_t nids = sizeof(ids) / sizeof(ids[0]);
	uint8_t *before, *after;
	size_t lb, la;
	struct wb w[4];

	/* blocks 0..3 at v1; block 1 at v2 and v3 (held 2, 3) */
	for (int i = 0; i < 4; i++)
		w[i] = (struct wb){ .id = (uint64_t)i, .version = 1, .len = BS };
	write_ok(f, w, 4);
	w[1].version = 2;
	write_ok(f, &w[1], 1);
	w[1].version = 3;
	write_ok(f, &w[1], 1);
	before = snapshot(f, ids, nids, &lb);

#define UNCHANGED()                                                      \
	do {                                                             \
		after = snapshot(f, ids, nids, &la);                     \
		assert_int_equal(la, lb);                                \
		assert_memory_equal(after, before, lb);                  \
		free(after);                                             \
	} while (0)

	/* a valid new block, then one that skips ahead: all or nothing */
	{
		struct wb b[2] = { { 100, 1, BS, 0 }, { 0, 3, BS, 0 } };
		write_err(f, b, 2, LWC_ERR_VERSION);
		UNCHANGED();
	}
	/* valid advances, then a stale version */
	{
		struct wb b[3] = { { 0, 2, BS, 0 }, { 2, 2, BS, 0 }, { 1, 1, BS, 0 } };
		write_err(f, b, 3, LWC_ERR_VERSION);
		UNCHANGED();
	}
	/* a new block that does not start at 1 */
	{
		struct wb b[2] = { { 3, 2, BS, 0 }, { 101, 2, BS, 0 } };
		write_err(f, b, 2, LWC_ERR_VERSION);
		UNCHANGED();
	}
	/* the store's block size is fixed */
	{
		struct wb b[2] = { { 100, 1, BS + 1, 0 }, { 101, 1, BS + 1, 0 } };
		write_err(f, b, 2, LWC_ERR_BLOCK_SIZE);
		UNCHANGED();
		b[0].len = b[1].len = BS - 1;
		write_err(f, b, 2, LWC_ERR_BLOCK_SIZE);
		UNCHANGED();
	}
	/* mixed sizes within one request */
	{
		struct wb b[2] = { { 100, 1, BS, 0 }, { 101, 1, BS * 2, 0 } };
		write_err(f, b, 2, LWC_ERR_BLOCK_SIZE);
		UNCHANGED();
	}
	/* size 0 and above the maximum */
	{
		struct wb b[1] = { { 100, 1, 0, 0 } };
		write_err(f, b, 1, LWC_ERR_BLOCK_SIZE);
		UNCHANGED();
		b[0].len = CS_BLOCK_SIZE_MAX + 1;
		write_err(f, b, 1, LWC_ERR_BLOCK_SIZE);
		UNCHANGED();
	}
	/* duplicate ids (each alone would be valid) */
	{
		struct wb b[3] = { { 0, 2, BS, 0 }, { 100, 1, BS, 0 }, { 0, 2, BS, 1 } };
		write_err(f, b, 3, LWC_ERR_DUPLICATE);
		UNCHANGED();
	}
	/* version 0 */
	{
		struct wb b[2] = { { 100, 1, BS, 0 }, { 101, 0, BS, 0 } };
		write_err(f, b, 2, LWC_ERR_VERSION);
		UNCHANGED();
	}
	/* no blocks */
	write_err(f, NULL, 0, LWC_ERR_PROTO);
	UNCHANGED();
#undef UNCHANGED
	free(before);
	expect_totals(f, 4, 5, BS);
}

static void test_proto_bad_requests(void **state)
{
	struct fx *f = *state;
	struct cs_trace_info ti;
	Lwc__CsResponse *r;
	uint8_t junk[64];
	struct wb w[2] = { { 0, 1, BS, 0 }, { 1, 1, BS, 0 } };

	write_ok(f, w, 2);
	/* not a CsRequest at all */
	memset(junk, 0xff, sizeof(junk));
	r = call_raw(f, BIG_FRAME, junk, sizeof(junk), &ti);
	expect_error(r, LWC_ERR_PROTO);
	assert_int_equal(r->seq, 0);
	assert_string_equal(ti.op, "BAD");
	assert_int_equal(ti.status, LWC_ERR_PROTO);
	cs_trace_info_clear(&ti);
	lwc__cs_response__free_unpacked(r, NULL);
	{
		static const uint8_t bad[][4] = {
			{ 0x0a, 0x05, 0x00, 0x00 },   /* field 1 (a varint) as bytes, short */
			{ 0x12, 0x7f, 0x00, 0x00 },   /* READ whose length runs past the end */
			{ 0x08, 0x80, 0x80, 0x80 },   /* unterminated varint */
			{ 0x07, 0x00, 0x00, 0x00 },   /* wire type 7 */
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			r = call_raw(f, BIG_FRAME, bad[i], 4, NULL);
			expect_error(r, LWC_ERR_PROTO);
			lwc__cs_response__free_unpacked(r, NULL);
		}
	}
	/* random bytes: always some answer, never a crash */
	for (uint32_t i = 0; i < 200; i++) {
		uint8_t seed[randombytes_SEEDBYTES] = { 0 };
		memcpy(seed, &i, sizeof(i));
		randombytes_buf_deterministic(junk, sizeof(junk), seed);
		r = call_raw(f, BIG_FRAME, junk, 1 + i % sizeof(junk), NULL);
		lwc__cs_response__free_unpacked(r, NULL);
	}
	/* a valid request cut short */
	{
		Lwc__CsRequest rq = LWC__CS_REQUEST__INIT;
		Lwc__CsReadReq rr = LWC__CS_READ_REQ__INIT;
		uint64_t ids[2] = { 0, 1 }, vs[2] = { 1, 1 };
		uint8_t buf[64];
		size_t n;

		rr.n_ids = rr.n_versions = 2;
		rr.ids = ids;
		rr.versions = vs;
		rq.seq = 77;
		rq.op_case = LWC__CS_REQUEST__OP_READ;
		rq.read = &rr;
		n = lwc__cs_request__pack(&rq, buf);
		r = call_raw(f, BIG_FRAME, buf, n, NULL);
		assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_READ);
		lwc__cs_response__free_unpacked(r, NULL);
		r = call_raw(f, BIG_FRAME, buf, n - 1, NULL);
		expect_error(r, LWC_ERR_PROTO);
		lwc__cs_response__free_unpacked(r, NULL);
	}

	/* empty request: no operation named */
	r = call_raw(f, BIG_FRAME, junk, 0, &ti);
	expect_error(r, LWC_ERR_UNKNOWN_OP);
	assert_string_equal(ti.op, "BAD");
	cs_trace_info_clear(&ti);
	lwc__cs_response__free_unpacked(r, NULL);
	{
		/* only a sequence number: echoed with the error */
		Lwc__CsRequest rq = LWC__CS_REQUEST__INIT;
		r = call(f, BIG_FRAME, &rq, NULL);
		expect_error(r, LWC_ERR_UNKNOWN_OP);
		lwc__cs_response__free_unpacked(r, NULL);
	}
	{
		/* an op number this build does not know (field 9, empty message) */
		static const uint8_t unk[] = { 0x08, 0x05, 0x4a, 0x00 };
		r = call_raw(f, BIG_FRAME, unk, sizeof(unk), NULL);
		expect_error(r, LWC_ERR_UNKNOWN_OP);
		assert_int_equal(r->seq, 5);
		lwc__cs_response__free_unpacked(r, NULL);
	}

	/* READ: counts that disagree, nothing named, a block named twice */
	{
		uint64_t ids[3] = { 0, 1, 0 }, vs[3] = { 1, 1, 1 };
		r = read_blocks(f, BIG_FRAME, ids, vs, 2, 1);
		expect_error(r, LWC_ERR_PROTO);
		lwc__cs_response__free_unpacked(r, NULL);
		r = read_blocks(f, BIG_FRAME, ids, vs, 1, 2);
		expect_error(r, LWC_ERR_PROTO);
		lwc__cs_response__free_unpacked(r, NULL);
		r = read_blocks(f, BIG_FRAME, ids, vs, 0, 0);
		expect_error(r, LWC_ERR_PROTO);
		lwc__cs_response__free_unpacked(r, NULL);
		r = read_blocks(f, BIG_FRAME, ids, vs, 3, 3);
		expect_error(r, LWC_ERR_DUPLICATE);
		lwc__cs_response__free_unpacked(r, NULL);
	}
	/* STAT of too many ids */
	{
		size_t n = 65537;
		uint64_t *ids = xmalloc(n * sizeof(*ids));
		Lwc__CsRequest rq = LWC__CS_REQUEST__INIT;
		Lwc__CsStatReq sq = LWC__CS_STAT_REQ__INIT;

		for (size_t i = 0; i < n; i++)
			ids[i] = i;
		sq.n_ids = n;
		sq.ids = ids;
		rq.op_case = LWC__CS_REQUEST__OP_STAT;
		rq.stat = &sq;
		r = call(f, BIG_FRAME, &rq, NULL);
		expect_error(r, LWC_ERR_TOO_BIG);
		lwc__cs_response__free_unpacked(r, NULL);
		sq.n_ids = 65536;
		r = call(f, BIG_FRAME, &rq, NULL);
		assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_STAT);
		assert_int_equal(r->stat->n_held, 65536);
		assert_int_equal(r->stat->held[1]->n_versions, 1);
		assert_int_equal(r->stat->held[2]->n_versions, 0);
		lwc__cs_response__free_unpacked(r, NULL);
		free(ids);
	}
	expect_totals(f, 2, 2, BS);
}

static void test_proto_read_too_big(void **state)
{
	struct fx *f = *state;
	struct wb w[3] = {
		{ UINT64_MAX, 1, BS, 0 }, { UINT64_MAX - 1, 1, BS, 0 }, { 0, 1, BS, 0 },
	};
	uint64_t ids[3] = { UINT64_MAX, UINT64_MAX - 1, 0 }, vs[3] = { 1, 1, 1 };
	/* the handler's bound: per block data + 32, plus 64 */
	const uint32_t need = 3 * (BS + 32) + 64;
	Lwc__CsResponse *r;

	write_ok(f, w, 3);
	r = read_blocks(f, need - 1, ids, vs, 3, 3);
	expect_error(r, LWC_ERR_TOO_BIG);
	assert_non_null(strstr(r->error->message, "split"));
	lwc__cs_response__free_unpacked(r, NULL);
	r = read_blocks(f, 100, ids, vs, 3, 3);
	expect_error(r, LWC_ERR_TOO_BIG);
	lwc__cs_response__free_unpacked(r, NULL);
	/* at the bound it is answered, and the answer really fits (call_raw
	 * checks resp_len <= max_frame), even with 10-byte varint ids */
	r = read_blocks(f, need, ids, vs, 3, 3);
	assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_READ);
	assert_int_equal(r->read->n_blocks, 3);
	lwc__cs_response__free_unpacked(r, NULL);
	/* a single block under the same small frame */
	r = read_blocks(f, need, ids, vs, 1, 1);
	assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_READ);
	lwc__cs_response__free_unpacked(r, NULL);
}

static void test_proto_trace(void **state)
{
	struct fx *f = *state;
	struct wb w[2] = { { 7, 1, BS, 0 }, { 3, 1, BS, 0 } };
	struct cs_trace_info ti;
	Lwc__CsResponse *r;
	char *line = NULL;
	size_t line_len = 0;
	FILE *mem;

	write_ok(f, w, 2);
	{
		uint64_t ids[2] = { 3, 7 }, vs[2] = { 1, 1 };
		Lwc__CsRequest rq = LWC__CS_REQUEST__INIT;
		Lwc__CsReadReq rr = LWC__CS_READ_REQ__INIT;

		rr.n_ids = rr.n_versions = 2;
		rr.ids = ids;
		rr.versions = vs;
		rq.op_case = LWC__CS_REQUEST__OP_READ;
		rq.read = &rr;
		r = call(f, BIG_FRAME, &rq, &ti);
		assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_READ);
		lwc__cs_response__free_unpacked(r, NULL);
	}
	assert_string_equal(ti.op, "READ");
	assert_int_equal(ti.n, 2);
	assert_non_null(ti.ids);
	assert_int_equal(ti.ids[0], 3);
	assert_int_equal(ti.ids[1], 7);
	assert_int_equal(ti.status, LWC_OK);
	mem = open_memstream(&line, &line_len);
	assert_non_null(mem);
	cs_trace_write(mem, 12, &ti, 100, 200);
	fclose(mem);
	assert_non_null(strstr(line, " conn=12 op=READ n=2 ids=3,7 in=100 out=200 status=ok\n"));
	free(line);
	cs_trace_info_clear(&ti);
	assert_null(ti.ids);

	/* a failed WRITE is traced with its ids and its error */
	{
		Lwc__CsRequest rq = LWC__CS_REQUEST__INIT;
		Lwc__CsWriteReq wq = LWC__CS_WRITE_REQ__INIT;
		Lwc__CsBlock b = LWC__CS_BLOCK__INIT, *bp = &b;
		uint8_t data[BS] = { 0 };

		b.id = 9;
		b.version = 5;
		b.data.data = data;
		b.data.len = BS;
		wq.n_blocks = 1;
		wq.blocks = &bp;
		rq.op_case = LWC__CS_REQUEST__OP_WRITE;
		rq.write = &wq;
		r = call(f, BIG_FRAME, &rq, &ti);
		expect_error(r, LWC_ERR_VERSION);
		lwc__cs_response__free_unpacked(r, NULL);
	}
	assert_string_equal(ti.op, "WRITE");
	assert_int_equal(ti.n, 1);
	assert_int_equal(ti.ids[0], 9);
	assert_int_equal(ti.status, LWC_ERR_VERSION);
	line = NULL;
	mem = open_memstream(&line, &line_len);
	assert_non_null(mem);
	cs_trace_write(mem, 1, &ti, 1, 2);
	fclose(mem);
	assert_non_null(strstr(line, " op=WRITE n=1 ids=9 in=1 out=2 status=LWC_ERR_VERSION\n"));
	free(line);
	cs_trace_info_clear(&ti);

	/* garbage: op BAD, no ids */
	{
		uint8_t junk[8];
		memset(junk, 0xff, sizeof(junk));
		r = call_raw(f, BIG_FRAME, junk, sizeof(junk), &ti);
		lwc__cs_response__free_unpacked(r, NULL);
	}
	line = NULL;
	mem = open_memstream(&line, &line_len);
	assert_non_null(mem);
	cs_trace_write(mem, 2, &ti, 8, 9);
	fclose(mem);
	assert_non_null(strstr(line, " op=BAD n=0 ids=- in=8 out=9 status=LWC_ERR_PROTO\n"));
	free(line);
	cs_trace_info_clear(&ti);
	cs_trace_write(NULL, 0, &ti, 0, 0);       /* tracing off: a no-op */
}

/* A store whose block size is pinned at open; data survives close/open. */
static void test_pinned_block_size_and_reopen(void **state)
{
	struct fx *f = *state;
	struct cs_store *st2 = NULL;
	char err[256] = "";
	struct wb w[1] = { { 1, 1, BS, 0 } };

	/* re-open the fixture's directory with a pinned size */
	cs_store_lmdb.session_close(f->s);
	cs_store_lmdb.close(f->st);
	f->s = NULL;
	f->st = NULL;
	assert_int_equal(cs_store_lmdb.open(&f->st, f->dir, BS, err, sizeof(err)), LWC_OK);
	assert_int_equal(cs_store_lmdb.session_open(f->st, &f->s, err, sizeof(err)), LWC_OK);
	expect_totals(f, 0, 0, BS);                /* known before any WRITE */
	{
		struct wb small[1] = { { 1, 1, BS / 2, 0 } };
		write_err(f, small, 1, LWC_ERR_BLOCK_SIZE);
	}
	write_ok(f, w, 1);
	cs_store_lmdb.session_close(f->s);
	cs_store_lmdb.close(f->st);
	f->s = NULL;
	f->st = NULL;

	/* another size is refused; the same or none is fine, data intact */
	assert_int_equal(cs_store_lmdb.open(&st2, f->dir, BS * 2, err, sizeof(err)),
			 LWC_ERR_BLOCK_SIZE);
	assert_null(st2);
	assert_non_null(strstr(err, "holds blocks of"));
	assert_int_equal(cs_store_lmdb.open(&f->st, f->dir, 0, err, sizeof(err)), LWC_OK);
	assert_int_equal(cs_store_lmdb.session_open(f->st, &f->s, err, sizeof(err)), LWC_OK);
	expect_totals(f, 1, 1, BS);
	{
		uint64_t ids[1] = { 1 }, vs[1] = { 1 };
		read_check(f, ids, vs, 1, NULL);
	}
	/* a missing spec */
	assert_int_equal(cs_store_lmdb.open(&st2, "", 0, err, sizeof(err)), LWC_ERR_ARG);
	assert_null(st2);
}

/* ------------------------------------------------------------- shards */

/* Entries of the blocks database of the LMDB environment in dir. */
static size_t env_blocks(const char *dir)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_stat ms;

	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 4), 0);
	assert_int_equal(mdb_env_open(env, dir, MDB_RDONLY | MDB_NOTLS, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "blocks", 0, &dbi), 0);
	assert_int_equal(mdb_stat(txn, dbi, &ms), 0);
	mdb_txn_abort(txn);
	mdb_env_close(env);
	return ms.ms_entries;
}

static int is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Close the fixture's store (LMDB: never open one environment twice in a
 * process, so env_blocks() looks only at closed stores). */
static void close_fx(struct fx *f)
{
	if (f->s)
		cs_store_lmdb.session_close(f->s);
	if (f->st)
		cs_store_lmdb.close(f->st);
	f->s = NULL;
	f->st = NULL;
}

static void reopen(struct fx *f, const char *spec)
{
	char err[256] = "";

	close_fx(f);
	if (cs_store_lmdb.open(&f->st, spec, 0, err, sizeof(err)) != LWC_OK)
		fail_msg("open %s: %s", spec, err);
	assert_int_equal(cs_store_lmdb.session_open(f->st, &f->s, err, sizeof(err)), LWC_OK);
}

/* A new store is split by block id over CS_LMDB_SHARDS environments: each
 * holds its share, and READ, STAT and WRITE see one store. */
static void test_shards_default(void **state)
{
	struct fx *f = *state;
	struct wb w[20];
	uint64_t ids[20], v1[20], v2[20];
	char path[256];
	size_t total = 0;

	assert_true(CS_LMDB_SHARDS >= 2);
	for (size_t i = 0; i < 20; i++) {
		w[i] = (struct wb){ i, 1, BS, 0 };
		ids[i] = i;
		v1[i] = 1;
		v2[i] = 2;
	}
	write_ok(f, w, 20);
	close_fx(f);
	for (unsigned j = 1; j < CS_LMDB_SHARDS; j++) {
		snprintf(path, sizeof(path), "%s/shard-%u", f->dir, j);
		assert_true(is_dir(path));
	}
	snprintf(path, sizeof(path), "%s/shard-%u", f->dir, CS_LMDB_SHARDS);
	assert_false(is_dir(path));
	for (unsigned j = 0; j < CS_LMDB_SHARDS; j++) {
		size_t n;

		if (j == 0)
			snprintf(path, sizeof(path), "%s", f->dir);
		else
			snprintf(path, sizeof(path), "%s/shard-%u", f->dir, j);
		n = env_blocks(path);
		assert_int_equal(n, (20 + CS_LMDB_SHARDS - 1 - j) / CS_LMDB_SHARDS);
		total += n;
	}
	assert_int_equal(total, 20);
	reopen(f, f->dir);
	expect_totals(f, 20, 20, BS);
	read_check(f, ids, v1, 20, NULL);
	for (size_t i = 0; i < 20; i++)
		w[i].version = 2;
	write_ok(f, w, 20);
	read_check(f, ids, v1, 20, NULL);           /* the previous versions stay */
	read_check(f, ids, v2, 20, NULL);
	expect_totals(f, 20, 40, BS);
	/* the number is the store's: reopened without it, with it, or not */
	reopen(f, f->dir);
	read_check(f, ids, v2, 20, NULL);
	snprintf(path, sizeof(path), "%s,shards=%u", f->dir, CS_LMDB_SHARDS);
	reopen(f, path);
	read_check(f, ids, v2, 20, NULL);
	{
		struct cs_store *st2 = NULL;
		char err[256] = "";

		snprintf(path, sizeof(path), "%s,shards=%u", f->dir, CS_LMDB_SHARDS + 1);
		assert_int_equal(cs_store_lmdb.open(&st2, path, 0, err, sizeof(err)), LWC_ERR_ARG);
		assert_null(st2);
		assert_non_null(strstr(err, "fixed when a store is made"));
	}
}

/* A WRITE whose check fails in one shard changes no shard; one that passes
 * changes all of them. */
static void test_shards_all_or_nothing(void **state)
{
	struct fx *f = *state;
	struct wb w[16];
	uint64_t ids[16];
	size_t before_len, after_len;
	uint8_t *before, *after;

	for (size_t i = 0; i < 16; i++) {
		w[i] = (struct wb){ i, 1, BS, 0 };
		ids[i] = i;
	}
	write_ok(f, w, 16);
	before = snapshot(f, ids, 16, &before_len);
	for (size_t i = 0; i < 16; i++)
		w[i].version = 2;
	for (size_t bad = 0; bad < CS_LMDB_SHARDS; bad++) {
		w[bad + 8].version = 5;             /* skips ahead: refused */
		write_err(f, w, 16, LWC_ERR_VERSION);
		w[bad + 8].version = 2;
		after = snapshot(f, ids, 16, &after_len);
		assert_int_equal(after_len, before_len);
		assert_memory_equal(after, before, before_len);
		free(after);
	}
	{
		struct wb other[2] = { { 3, 2, BS / 2, 0 }, { 4, 2, BS / 2, 0 } };
		write_err(f, other, 2, LWC_ERR_BLOCK_SIZE);
	}
	after = snapshot(f, ids, 16, &after_len);
	assert_memory_equal(after, before, before_len);
	free(after);
	free(before);
	write_ok(f, w, 16);
	for (size_t i = 0; i < 16; i++) {
		uint64_t v[2] = { 1, 2 };
		expect_held(f, i, 2, v);
	}
}

/* A store made before shards (one environment, no "shards" entry) stays one
 * environment; shards=N picks the number for a new store only. */
static void test_shards_legacy_and_chosen(void **state)
{
	struct fx *f = *state;
	char legacy[64], path[256], err[256] = "";
	struct cs_store *st2 = NULL;
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi blocks, meta;
	uint8_t key[16], data[BS], u64[8];
	MDB_val k, v;
	uint64_t ids[6] = { 0, 1, 2, 3, 4, 5 }, vs[6] = { 1, 1, 1, 1, 1, 1 };
	struct wb w[6];

	/* a store written by the previous release: block 3 at version 1 */
	snprintf(legacy, sizeof(legacy), "/tmp/lwc-test-legacy-XXXXXX");
	assert_non_null(mkdtemp(legacy));
	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 4), 0);
	assert_int_equal(mdb_env_open(env, legacy, MDB_NOTLS, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "blocks", MDB_CREATE, &blocks), 0);
	assert_int_equal(mdb_dbi_open(txn, "meta", MDB_CREATE, &meta), 0);
	cry_put_be64(key, 3);
	cry_put_be64(key + 8, 1);
	memset(data, fill_of(3, 1, 0), sizeof(data));
	k = (MDB_val){ 16, key };
	v = (MDB_val){ sizeof(data), data };
	assert_int_equal(mdb_put(txn, blocks, &k, &v, 0), 0);
	for (int i = 0; i < 3; i++) {
		static const char *const names[3] = { "block_size", "block_count", "versions_held" };
		cry_put_be64(u64, i == 0 ? BS : 1);
		k = (MDB_val){ strlen(names[i]), (void *)(uintptr_t)names[i] };
		v = (MDB_val){ 8, u64 };
		assert_int_equal(mdb_put(txn, meta, &k, &v, 0), 0);
	}
	assert_int_equal(mdb_txn_commit(txn), 0);
	mdb_env_close(env);

	reopen(f, legacy);
	expect_totals(f, 1, 1, BS);
	read_check(f, &ids[3], &vs[3], 1, NULL);
	for (size_t i = 0; i < 6; i++)
		w[i] = (struct wb){ i, 1, BS, 0 };
	write_ok(f, w, 6);
	read_check(f, ids, vs, 6, NULL);
	close_fx(f);
	snprintf(path, sizeof(path), "%s/shard-1", legacy);
	assert_false(is_dir(path));
	assert_int_equal(env_blocks(legacy), 6);
	snprintf(path, sizeof(path), "%s,shards=2", legacy);
	assert_int_equal(cs_store_lmdb.open(&st2, path, 0, err, sizeof(err)), LWC_ERR_ARG);
	assert_non_null(strstr(err, "has 1 shard, not 2"));
	testdir_rm(legacy);

	/* a new store of three shards */
	testdir_rm(f->dir);
	snprintf(path, sizeof(path), "%s,shards=3", f->dir);
	reopen(f, path);
	write_ok(f, w, 6);
	close_fx(f);
	for (unsigned j = 0; j < 3; j++) {
		char d[256];

		if (j == 0)
			snprintf(d, sizeof(d), "%s", f->dir);
		else
			snprintf(d, sizeof(d), "%s/shard-%u", f->dir, j);
		assert_int_equal(env_blocks(d), 2);
	}
	reopen(f, f->dir);
	read_check(f, ids, vs, 6, NULL);
	expect_totals(f, 6, 6, BS);
	/* a lost shard is refused, not made again empty */
	close_fx(f);
	{
		char d[256], moved[256];

		snprintf(d, sizeof(d), "%s/shard-2", f->dir);
		snprintf(moved, sizeof(moved), "%s/away", f->dir);
		assert_int_equal(rename(d, moved), 0);
		assert_int_equal(cs_store_lmdb.open(&st2, f->dir, 0, err, sizeof(err)),
				 LWC_ERR_STORE);
		assert_null(st2);
		assert_non_null(strstr(err, "shard-2 is missing"));
		assert_false(is_dir(d));
		assert_int_equal(rename(moved, d), 0);
	}
	reopen(f, f->dir);
	read_check(f, ids, vs, 6, NULL);
	/* a new store whose block size is pinned at open is a new store all
	 * the same: the default number of shards */
	close_fx(f);
	testdir_rm(f->dir);
	{
		char err2[256] = "";
		assert_int_equal(cs_store_lmdb.open(&f->st, f->dir, BS, err2, sizeof(err2)), LWC_OK);
		assert_int_equal(cs_store_lmdb.session_open(f->st, &f->s, err2, sizeof(err2)),
				 LWC_OK);
		snprintf(path, sizeof(path), "%s/shard-%u", f->dir, CS_LMDB_SHARDS - 1);
		assert_true(is_dir(path));
		write_ok(f, w, 6);
		read_check(f, ids, vs, 6, NULL);
	}
	/* bad numbers */
	{
		static const char *const bad[] = { ",shards=0", ",shards=17", ",shards=x",
						   ",shards=", ",shards=-1", ",shards=2x" };
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(path, sizeof(path), "%s%s", f->dir, bad[i]);
			assert_int_equal(cs_store_lmdb.open(&st2, path, 0, err, sizeof(err)),
					 LWC_ERR_ARG);
			assert_null(st2);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_check),
		cmocka_unit_test(test_write_validate),
		cmocka_unit_test(test_read_validate),
		cmocka_unit_test(test_store_lookup),
		cmocka_unit_test_setup_teardown(test_proto_empty_store, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_proto_write_read_stat, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_proto_read_packing, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_proto_failed_writes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_proto_bad_requests, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_proto_read_too_big, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_proto_trace, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_shards_default, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_shards_all_or_nothing, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_shards_legacy_and_chosen, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_pinned_block_size_and_reopen, fx_setup,
						fx_teardown),
	};

	if (sodium_init() < 0 || cry_init() != LWC_OK) {
		fprintf(stderr, "libsodium failed to initialise\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
