/*
 * it_cloudstore.c - the block-store suite, run against the real
 * lwc-cloudstore on the backend named by LWC_TEST_BACKEND (tests/run.sh runs
 * it once for LMDB and once for a private PostgreSQL cluster).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sodium.h>

#include "chan.h"
#include "cs_client.h"
#include "cs_wire.h"
#include "harness.h"
#include "keyfile.h"
#include "lwc.pb-c.h"
#include "net.h"
#include "../../cloudstore/store.h"
#include "wire.h"

#define BS 10800u                /* default geometry: 64 slots of 168 B, sealed */
#define TIMEOUT 20000

/* Deterministic content of block id at version v (so reads can be checked). */
static void fill(uint8_t *buf, size_t len, uint64_t id, uint64_t v)
{
	uint8_t seed[32] = { 0 };

	memcpy(seed, &id, 8);
	memcpy(seed + 8, &v, 8);
	randombytes_buf_deterministic(buf, len, seed);
}

static struct cs_client *connect_cs(struct h_cs *cs)
{
	struct cs_client *cl = NULL;
	char err[256] = "";
	int rc = cs_client_connect(&cl, cs->addr, cs->key, TIMEOUT, err, sizeof(err));

	if (rc != LWC_OK)
		fprintf(stderr, "connect: %s (%s)\n", lwc_strerror(rc), err);
	assert_int_equal(rc, LWC_OK);
	return cl;
}

/* Write blocks ids[0..n) at versions vs[0..n) with fill() content. */
static int write_blocks(struct cs_client *cl, const uint64_t *ids, const uint64_t *vs,
			size_t n, size_t bs, char *err, size_t errlen)
{
	struct cs_wblock *wb = calloc(n, sizeof(*wb));
	uint8_t *data = malloc(n * bs);
	int rc;

	assert_non_null(wb);
	assert_non_null(data);
	for (size_t i = 0; i < n; i++) {
		fill(data + i * bs, bs, ids[i], vs[i]);
		wb[i].id = ids[i];
		wb[i].version = vs[i];
		wb[i].data = data + i * bs;
		wb[i].len = bs;
	}
	rc = cs_client_write(cl, wb, n, err, errlen);
	free(wb);
	free(data);
	return rc;
}

static int write_range(struct cs_client *cl, uint64_t first, size_t n, uint64_t v)
{
	uint64_t *ids = malloc(n * sizeof(*ids)), *vs = malloc(n * sizeof(*vs));
	char err[256] = "";
	int rc;

	for (size_t i = 0; i < n; i++) {
		ids[i] = first + i;
		vs[i] = v;
	}
	rc = write_blocks(cl, ids, vs, n, BS, err, sizeof(err));
	if (rc != LWC_OK)
		fprintf(stderr, "write: %s\n", err);
	free(ids);
	free(vs);
	return rc;
}

/* Read (id, v) pairs and check their content. */
static void check_read(struct cs_client *cl, const uint64_t *ids, const uint64_t *vs, size_t n)
{
	Lwc__CsResponse *r = NULL;
	char err[256] = "";
	uint8_t *want = malloc(BS);
	int rc = cs_client_read(cl, ids, vs, n, &r, err, sizeof(err));

	if (rc != LWC_OK)
		fprintf(stderr, "read: %s\n", err);
	assert_int_equal(rc, LWC_OK);
	assert_int_equal(r->read->n_blocks, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(r->read->blocks[i]->id, ids[i]);
		assert_int_equal(r->read->blocks[i]->version, vs[i]);
		assert_int_equal(r->read->blocks[i]->data.len, BS);
		fill(want, BS, ids[i], vs[i]);
		assert_memory_equal(r->read->blocks[i]->data.data, want, BS);
	}
	free(want);
	cs_client_free_resp(r);
}

static void check_read_range(struct cs_client *cl, uint64_t first, size_t n, uint64_t v)
{
	uint64_t *ids = malloc(n * sizeof(*ids)), *vs = malloc(n * sizeof(*vs));

	for (size_t i = 0; i < n; i++) {
		ids[i] = first + i;
		vs[i] = v;
	}
	check_read(cl, ids, vs, n);
	free(ids);
	free(vs);
}

/* Versions held of one id, as "v1,v2". */
static void held(struct cs_client *cl, uint64_t id, char *out, size_t len)
{
	Lwc__CsResponse *r = NULL;
	char err[256];
	size_t o = 0;

	assert_int_equal(cs_client_stat(cl, &id, 1, &r, err, sizeof(err)), LWC_OK);
	assert_int_equal(r->stat->n_held, 1);
	out[0] = '\0';
	for (size_t i = 0; i < r->stat->held[0]->n_versions; i++)
		o += (size_t)snprintf(out + o, len - o, i ? ",%llu" : "%llu",
				      (unsigned long long)r->stat->held[0]->versions[i]);
	cs_client_free_resp(r);
}

struct totals {
	uint64_t blocks, versions;
	uint32_t block_size;
};

static struct totals totals(struct cs_client *cl)
{
	Lwc__CsResponse *r = NULL;
	char err[256];
	struct totals t;

	assert_int_equal(cs_client_stat(cl, NULL, 0, &r, err, sizeof(err)), LWC_OK);
	t.blocks = r->stat->block_count;
	t.versions = r->stat->versions_held;
	t.block_size = r->stat->block_size;
	cs_client_free_resp(r);
	return t;
}

/* ---- fixtures ---------------------------------------------------------- */

static int setup(void **state)
{
	struct h_cs *cs = calloc(1, sizeof(*cs));

	h_cs_setup(cs);
	h_cs_start(cs, NULL);
	*state = cs;
	return 0;
}

static int teardown(void **state)
{
	struct h_cs *cs = *state;

	h_cs_teardown(cs);
	free(cs);
	return 0;
}

/* ---- functional -------------------------------------------------------- */

static void test_write_read_versions(void **state)
{
	struct h_cs *cs = *state;
	struct cs_client *cl = connect_cs(cs);
	struct totals t;
	char h[64], err[256];
	uint64_t id = 7, v;
	Lwc__CsResponse *r = NULL;

	t = totals(cl);
	assert_int_equal(t.blocks, 0);
	assert_int_equal(t.block_size, 0);
	assert_int_equal(write_range(cl, 0, 100, 1), LWC_OK);
	t = totals(cl);
	assert_int_equal(t.blocks, 100);
	assert_int_equal(t.versions, 100);
	assert_int_equal(t.block_size, BS);
	check_read_range(cl, 0, 100, 1);

	assert_int_equal(write_range(cl, 0, 100, 2), LWC_OK);
	held(cl, 7, h, sizeof(h));
	assert_string_equal(h, "1,2");
	assert_int_equal(write_range(cl, 0, 100, 3), LWC_OK);
	held(cl, 7, h, sizeof(h));
	assert_string_equal(h, "2,3");      /* committed + one newer, v1 dropped */
	t = totals(cl);
	assert_int_equal(t.blocks, 100);
	assert_int_equal(t.versions, 200);
	check_read_range(cl, 0, 100, 2);
	check_read_range(cl, 0, 100, 3);

	/* v1 is gone: a READ of it names the block */
	v = 1;
	assert_int_equal(cs_client_read(cl, &id, &v, 1, &r, err, sizeof(err)), LWC_ERR_NOT_FOUND);
	assert_non_null(strstr(err, "block 7"));
	/* unknown block */
	id = 5000;
	assert_int_equal(cs_client_read(cl, &id, &v, 1, &r, err, sizeof(err)), LWC_ERR_NOT_FOUND);

	/* overwrite of the newest version (a proxy repeating after a crash) */
	assert_int_equal(write_range(cl, 0, 10, 3), LWC_OK);
	check_read_range(cl, 0, 10, 3);
	held(cl, 3, h, sizeof(h));
	assert_string_equal(h, "2,3");
	cs_client_close(cl);
}

static void test_version_rules(void **state)
{
	struct h_cs *cs = *state;
	struct cs_client *cl = connect_cs(cs);
	uint64_t ids[3] = { 1, 2, 3 }, vs[3];
	char err[256], h[64];
	struct totals before, after;

	assert_int_equal(write_range(cl, 1, 3, 1), LWC_OK);
	assert_int_equal(write_range(cl, 1, 3, 2), LWC_OK);
	before = totals(cl);

	/* skipping ahead */
	vs[0] = 3; vs[1] = 3; vs[2] = 4;
	assert_int_equal(write_blocks(cl, ids, vs, 3, BS, err, sizeof(err)), LWC_ERR_VERSION);
	assert_non_null(strstr(err, "skips ahead"));
	/* stale */
	vs[0] = 1; vs[1] = 3; vs[2] = 3;
	assert_int_equal(write_blocks(cl, ids, vs, 3, BS, err, sizeof(err)), LWC_ERR_VERSION);
	/* a new block must start at version 1 */
	ids[0] = 99; vs[0] = 2;
	assert_int_equal(write_blocks(cl, ids, vs, 1, BS, err, sizeof(err)), LWC_ERR_VERSION);
	/* version 0 */
	vs[0] = 0;
	assert_int_equal(write_blocks(cl, ids, vs, 1, BS, err, sizeof(err)), LWC_ERR_VERSION);

	after = totals(cl);
	assert_int_equal(before.blocks, after.blocks);
	assert_int_equal(before.versions, after.versions);
	held(cl, 1, h, sizeof(h));
	assert_string_equal(h, "1,2");
	held(cl, 3, h, sizeof(h));
	assert_string_equal(h, "1,2");
	check_read_range(cl, 1, 3, 2);
	cs_client_close(cl);
}

static void test_block_size(void **state)
{
	struct h_cs *cs = *state;
	struct cs_client *cl = connect_cs(cs);
	uint64_t ids[2] = { 10, 11 }, vs[2] = { 1, 1 };
	struct cs_wblock wb[2];
	uint8_t *a = calloc(1, BS + 1);
	char err[256];
	struct totals t;

	assert_int_equal(write_range(cl, 0, 4, 1), LWC_OK);
	/* wrong size for this store */
	assert_int_equal(write_blocks(cl, ids, vs, 2, BS - 1, err, sizeof(err)), LWC_ERR_BLOCK_SIZE);
	assert_non_null(strstr(err, "10800"));
	/* mixed sizes in one WRITE */
	wb[0] = (struct cs_wblock){ 10, 1, a, BS };
	wb[1] = (struct cs_wblock){ 11, 1, a, BS + 1 };
	assert_int_equal(cs_client_write(cl, wb, 2, err, sizeof(err)), LWC_ERR_BLOCK_SIZE);
	/* empty block */
	wb[0].len = 0;
	assert_int_equal(cs_client_write(cl, wb, 1, err, sizeof(err)), LWC_ERR_BLOCK_SIZE);
	/* duplicate id in one WRITE */
	wb[0] = (struct cs_wblock){ 10, 1, a, BS };
	wb[1] = (struct cs_wblock){ 10, 1, a, BS };
	assert_int_equal(cs_client_write(cl, wb, 2, err, sizeof(err)), LWC_ERR_DUPLICATE);
	/* empty WRITE */
	assert_int_equal(cs_client_write(cl, wb, 0, err, sizeof(err)), LWC_ERR_PROTO);
	t = totals(cl);
	assert_int_equal(t.blocks, 4);
	assert_int_equal(t.versions, 4);
	free(a);
	cs_client_close(cl);
}

static void test_atomic_write(void **state)
{
	struct h_cs *cs = *state;
	struct cs_client *cl = connect_cs(cs);
	size_t n = 2000;   /* 21.6 MB: several PostgreSQL statements */
	uint64_t *ids = malloc(n * sizeof(*ids)), *vs = malloc(n * sizeof(*vs));
	char err[256], h[64];

	assert_int_equal(write_range(cl, 0, n, 1), LWC_OK);
	for (size_t i = 0; i < n; i++) {
		ids[i] = i;
		vs[i] = 2;
	}
	vs[n - 1] = 5;     /* the last block is invalid: nothing may change */
	assert_int_equal(write_blocks(cl, ids, vs, n, BS, err, sizeof(err)), LWC_ERR_VERSION);
	held(cl, 0, h, sizeof(h));
	assert_string_equal(h, "1");
	held(cl, 1500, h, sizeof(h));
	assert_string_equal(h, "1");
	vs[n - 1] = 2;
	assert_int_equal(write_blocks(cl, ids, vs, n, BS, err, sizeof(err)), LWC_OK);
	check_read(cl, ids, vs, n);
	free(ids);
	free(vs);
	cs_client_close(cl);
}

static void test_pipelined(void **state)
{
	struct h_cs *cs = *state;
	struct cs_client *cl = connect_cs(cs);
	Lwc__CsRequest req = LWC__CS_REQUEST__INIT;
	Lwc__CsReadReq rd = LWC__CS_READ_REQ__INIT;
	uint64_t ids[4] = { 0, 1, 2, 3 }, vs[4] = { 1, 1, 1, 1 };
	const int depth = 64;

	assert_int_equal(write_range(cl, 0, 4, 1), LWC_OK);
	rd.n_ids = rd.n_versions = 4;
	rd.ids = ids;
	rd.versions = vs;
	req.op_case = LWC__CS_REQUEST__OP_READ;
	req.read = &rd;
	for (int i = 0; i < depth; i++)
		assert_int_equal(cs_client_send(cl, &req), LWC_OK);
	for (int i = 0; i < depth; i++) {
		Lwc__CsResponse *r = NULL;
		assert_int_equal(cs_client_recv(cl, &r), LWC_OK);   /* checks seq order */
		assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_READ);
		assert_int_equal(r->read->n_blocks, 4);
		cs_client_free_resp(r);
	}
	cs_client_close(cl);
}

struct conc_arg {
	struct h_cs *cs;
	uint64_t first;
	int ok;
};

static void *conc_worker(void *p)
{
	struct conc_arg *a = p;
	struct cs_client *cl = NULL;
	char err[256];

	a->ok = 0;
	if (cs_client_connect(&cl, a->cs->addr, a->cs->key, TIMEOUT, err, sizeof(err)) != LWC_OK)
		return NULL;
	for (uint64_t v = 1; v <= 5; v++) {
		Lwc__CsResponse *r = NULL;
		uint64_t ids[8], vs[8];
		for (int i = 0; i < 8; i++) {
			ids[i] = a->first + (uint64_t)i;
			vs[i] = v;
		}
		if (write_blocks(cl, ids, vs, 8, BS, err, sizeof(err)) != LWC_OK)
			goto out;
		if (cs_client_read(cl, ids, vs, 8, &r, err, sizeof(err)) != LWC_OK)
			goto out;
		cs_client_free_resp(r);
	}
	a->ok = 1;
out:
	cs_client_close(cl);
	return NULL;
}

static void test_concurrent_clients(void **state)
{
	struct h_cs *cs = *state;
	enum { N = 16 };
	pthread_t th[N];
	struct conc_arg args[N];
	struct cs_client *cl;

	for (int i = 0; i < N; i++) {
		args[i] = (struct conc_arg){ cs, (uint64_t)i * 100, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, conc_worker, &args[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		assert_true(args[i].ok);
	}
	cl = connect_cs(cs);
	for (int i = 0; i < N; i++)
		check_read_range(cl, (uint64_t)i * 100, 8, 5);
	assert_int_equal(totals(cl).blocks, N * 8);
	cs_client_close(cl);
}

static void test_trace(void **state)
{
	struct h_cs *cs = *state;
	struct cs_client *cl = connect_cs(cs);
	uint64_t ids[3] = { 40, 41, 42 }, vs[3] = { 1, 1, 1 };
	char err[256];
	Lwc__CsResponse *r = NULL;
	FILE *f;
	char line[4096];
	int reads = 0, writes = 0;

	assert_int_equal(write_blocks(cl, ids, vs, 3, BS, err, sizeof(err)), LWC_OK);
	assert_int_equal(cs_client_read(cl, ids, vs, 3, &r, err, sizeof(err)), LWC_OK);
	cs_client_free_resp(r);
	cs_client_close(cl);
	f = fopen(cs->trace, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		assert_non_null(strstr(line, "conn="));
		if (strstr(line, "op=WRITE n=3 ids=40,41,42 in=")) {
			writes++;
			assert_non_null(strstr(line, "out="));
		}
		if (strstr(line, "op=READ n=3 ids=40,41,42 in="))
			reads++;
	}
	fclose(f);
	assert_int_equal(writes, 1);
	assert_int_equal(reads, 1);
	assert_int_equal(h_count_lines(cs->trace, "op=HELLO"), 1);
}

/* ---- bad input ---------------------------------------------------------- */

static int raw_connect(struct h_cs *cs)
{
	int fd;
	char err[128];

	assert_int_equal(net_connect(cs->addr, TIMEOUT, &fd, err, sizeof(err)), LWC_OK);
	return fd;
}

/* Expect a plaintext Error frame (or nothing) followed by the server closing. */
static int expect_error_and_close(int fd)
{
	uint8_t *body = NULL, b;
	size_t len;
	int code = 0;

	if (wire_recv_frame(fd, WIRE_PREAUTH_MAX, &body, &len, TIMEOUT) == LWC_OK) {
		Lwc__Error *e = lwc__error__unpack(NULL, len, body);
		if (e) {
			code = e->code;
			assert_true(e->message != NULL && e->message[0] != '\0');
			lwc__error__free_unpacked(e, NULL);
		}
		free(body);
	}
	assert_int_equal(wire_read_full(fd, &b, 1, TIMEOUT), LWC_ERR_CLOSED);
	close(fd);
	return code;
}

/* The store and the service are intact: totals unchanged, blocks readable. */
static void still_serving(struct h_cs *cs, uint64_t nblocks)
{
	struct cs_client *cl = connect_cs(cs);
	struct totals t = totals(cl);

	assert_int_equal(t.blocks, nblocks);
	check_read_range(cl, 0, nblocks, 1);
	cs_client_close(cl);
}

static void test_bad_preauth(void **state)
{
	struct h_cs *cs = *state;
	struct cs_client *cl = connect_cs(cs);
	uint8_t hdr[4], junk[64];
	int fd;

	assert_int_equal(write_range(cl, 0, 4, 1), LWC_OK);
	cs_client_close(cl);

	/* truncated frame: header promises 100 bytes, 10 arrive, then EOF */
	fd = raw_connect(cs);
	wire_put_u32(hdr, 100);
	assert_int_equal(wire_write_all(fd, hdr, 4), LWC_OK);
	assert_int_equal(wire_write_all(fd, "0123456789", 10), LWC_OK);
	close(fd);
	still_serving(cs, 4);

	/* truncated header */
	fd = raw_connect(cs);
	assert_int_equal(wire_write_all(fd, hdr, 2), LWC_OK);
	close(fd);

	/* a length over the maximum */
	fd = raw_connect(cs);
	wire_put_u32(hdr, 0xffffffffu);
	assert_int_equal(wire_write_all(fd, hdr, 4), LWC_OK);
	assert_int_equal(expect_error_and_close(fd), LWC_ERR_TOO_BIG);

	/* an empty frame */
	fd = raw_connect(cs);
	wire_put_u32(hdr, 0);
	assert_int_equal(wire_write_all(fd, hdr, 4), LWC_OK);
	assert_int_equal(expect_error_and_close(fd), LWC_ERR_PROTO);

	/* garbage protobuf instead of a Hello */
	fd = raw_connect(cs);
	memset(junk, 0xff, sizeof(junk));
	assert_int_equal(wire_send_frame(fd, junk, sizeof(junk)), LWC_OK);
	assert_int_equal(expect_error_and_close(fd), LWC_ERR_PROTO);

	/* missing key: a request sent without any channel set-up */
	{
		Lwc__CsRequest req = LWC__CS_REQUEST__INIT;
		Lwc__CsStatReq st = LWC__CS_STAT_REQ__INIT;
		uint8_t buf[64];
		size_t n;
		req.op_case = LWC__CS_REQUEST__OP_STAT;
		req.stat = &st;
		n = lwc__cs_request__pack(&req, buf);
		fd = raw_connect(cs);
		assert_int_equal(wire_send_frame(fd, buf, n), LWC_OK);
		assert_int_equal(expect_error_and_close(fd), LWC_ERR_PROTO);
	}
	still_serving(cs, 4);
}

static void test_wrong_key(void **state)
{
	struct h_cs *cs = *state;
	struct cs_client *cl = NULL;
	uint8_t bad[32];
	char err[256] = "";
	struct chan *ch;
	int fd, rc;

	cl = connect_cs(cs);
	assert_int_equal(write_range(cl, 0, 2, 1), LWC_OK);
	cs_client_close(cl);
	cl = NULL;

	memcpy(bad, cs->key, 32);
	bad[0] ^= 1;
	rc = cs_client_connect(&cl, cs->addr, bad, TIMEOUT, err, sizeof(err));
	assert_int_equal(rc, LWC_ERR_AUTH);
	assert_null(cl);
	assert_non_null(strstr(err, "authentication failed"));

	/* a key id the cloud store does not know */
	assert_int_equal(chan_new(&ch, 0), LWC_OK);
	chan_use_modes(ch);
	fd = raw_connect(cs);
	rc = chan_connect(ch, fd, "mallory", cs->key, TIMEOUT, err, sizeof(err));
	assert_int_equal(rc, LWC_ERR_AUTH);
	chan_free(ch);
	close(fd);
	/* a channel of version 1 (frames without a mode): refused at its Hello */
	assert_int_equal(chan_new(&ch, 0), LWC_OK);
	fd = raw_connect(cs);
	rc = chan_connect(ch, fd, "", cs->key, TIMEOUT, err, sizeof(err));
	assert_int_equal(rc, LWC_ERR_PROTO);
	assert_non_null(strstr(err, "channel version other than 2 or 3"));
	chan_free(ch);
	close(fd);
	still_serving(cs, 2);
}

/* An authenticated raw channel for post-auth attacks: version 2 (a proxy
 * of the release before skeleton frames), or 3 as the proxy speaks. */
static int raw_session_v(struct h_cs *cs, struct chan **ch, unsigned version)
{
	char err[256];
	int fd = raw_connect(cs);

	assert_int_equal(chan_new(ch, 0), LWC_OK);
	if (version == CHAN_VERSION_SKELETON)
		chan_use_skeleton(*ch, cs_wire_read_skeleton);
	else
		chan_use_modes(*ch);
	assert_int_equal(chan_connect(*ch, fd, "", cs->key, TIMEOUT, err, sizeof(err)), LWC_OK);
	assert_int_equal(chan_version(*ch), version);
	return fd;
}

static int raw_session(struct h_cs *cs, struct chan **ch)
{
	return raw_session_v(cs, ch, CHAN_VERSION_MODES);
}

/* A frame body of plain in mode (chan.h), sealed; *len its size. */
static uint8_t *mode_body(struct chan *ch, const uint8_t *plain, size_t n, unsigned mode,
			  size_t *len)
{
	uint8_t *body = malloc(n + CHAN_ABYTES + CHAN_MODE_BYTES);

	assert_non_null(body);
	memcpy(body + CHAN_PLAIN_OFF, plain, n);
	assert_int_equal(chan_seal_mode_inplace(ch, body, n, mode), LWC_OK);
	*len = n + CHAN_ABYTES + CHAN_MODE_BYTES;
	return body;
}

/* plain sent in a frame of mode; *out, if asked for, keeps the body */
static int send_mode(struct chan *ch, int fd, const uint8_t *plain, size_t n, unsigned mode,
		     uint8_t **out, size_t *out_len)
{
	size_t len;
	uint8_t *body = mode_body(ch, plain, n, mode, &len);
	int rc = wire_send_frame(fd, body, len);

	if (out) {
		*out = body;
		*out_len = len;
	} else {
		free(body);
	}
	return rc;
}

/* A READ of blocks 1 and 2 at version 1, sequence number 1, packed into
 * plain (128 bytes); returns its size. */
static size_t pack_read_1_2(uint8_t *plain)
{
	Lwc__CsRequest req = LWC__CS_REQUEST__INIT;
	Lwc__CsReadReq rd = LWC__CS_READ_REQ__INIT;
	uint64_t ids[2] = { 1, 2 }, vs[2] = { 1, 1 };

	rd.n_ids = rd.n_versions = 2;
	rd.ids = ids;
	rd.versions = vs;
	req.seq = 1;
	req.op_case = LWC__CS_REQUEST__OP_READ;
	req.read = &rd;
	assert_true(lwc__cs_request__get_packed_size(&req) <= 128);
	return lwc__cs_request__pack(&req, plain);
}

/* Whether buf[0..len) holds the n bytes of x somewhere. */
static int holds(const uint8_t *buf, size_t len, const uint8_t *x, size_t n)
{
	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(buf + i, x, n) == 0)
			return 1;
	return 0;
}

static int send_sealed(struct chan *ch, int fd, const uint8_t *plain, size_t n)
{
	return send_mode(ch, fd, plain, n, CHAN_MODE_SEALED, NULL, NULL);
}

/* A response of recv_resp (protobuf-c's, not cs_client's). */
static void free_raw_resp(Lwc__CsResponse *r)
{
	lwc__cs_response__free_unpacked(r, NULL);
}

static Lwc__CsResponse *recv_resp(struct chan *ch, int fd)
{
	ProtobufCMessage *m = NULL;

	assert_int_equal(chan_read_msg(ch, fd, &lwc__cs_response__descriptor, WIRE_FRAME_MAX,
				       &m, TIMEOUT), LWC_OK);
	return (Lwc__CsResponse *)m;
}

static void test_bad_postauth(void **state)
{
	struct h_cs *cs = *state;
	struct cs_client *cl = connect_cs(cs);
	struct chan *ch;
	Lwc__CsResponse *r;
	uint8_t junk[200], hdr[4], *saved;
	size_t saved_len;
	int fd;

	assert_int_equal(write_range(cl, 0, 3, 1), LWC_OK);
	cs_client_close(cl);

	/* garbage protobuf inside a valid encrypted frame: error reply, channel lives */
	fd = raw_session(cs, &ch);
	memset(junk, 0xff, sizeof(junk));
	assert_int_equal(send_sealed(ch, fd, junk, sizeof(junk)), LWC_OK);
	r = recv_resp(ch, fd);
	assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_ERROR);
	assert_int_equal(r->error->code, LWC_ERR_PROTO);
	free_raw_resp(r);
	/* unknown op: a request that names no operation */
	{
		Lwc__CsRequest req = LWC__CS_REQUEST__INIT;
		req.seq = 9;
		assert_int_equal(chan_write_msg(ch, fd, &req.base), LWC_OK);
		r = recv_resp(ch, fd);
		assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_ERROR);
		assert_int_equal(r->error->code, LWC_ERR_UNKNOWN_OP);
		assert_int_equal(r->seq, 9);
		free_raw_resp(r);
	}
	/* READ with mismatched ids/versions, duplicate ids */
	{
		Lwc__CsRequest req = LWC__CS_REQUEST__INIT;
		Lwc__CsReadReq rd = LWC__CS_READ_REQ__INIT;
		uint64_t ids[2] = { 0, 0 }, vs[2] = { 1, 1 };
		rd.n_ids = 2;
		rd.ids = ids;
		rd.n_versions = 1;
		rd.versions = vs;
		req.op_case = LWC__CS_REQUEST__OP_READ;
		req.read = &rd;
		assert_int_equal(chan_write_msg(ch, fd, &req.base), LWC_OK);
		r = recv_resp(ch, fd);
		assert_int_equal(r->error->code, LWC_ERR_PROTO);
		free_raw_resp(r);
		rd.n_versions = 2;
		assert_int_equal(chan_write_msg(ch, fd, &req.base), LWC_OK);
		r = recv_resp(ch, fd);
		assert_int_equal(r->error->code, LWC_ERR_DUPLICATE);
		free_raw_resp(r);
	}
	/* a forged (random) frame: integrity error, connection closed */
	randombytes_buf(junk, sizeof(junk));
	assert_int_equal(wire_send_frame(fd, junk, sizeof(junk)), LWC_OK);
	assert_int_equal(expect_error_and_close(fd), LWC_ERR_INTEGRITY);
	chan_free(ch);

	/* a replayed frame: the second copy of the same ciphertext is refused */
	fd = raw_session(cs, &ch);
	{
		Lwc__CsRequest req = LWC__CS_REQUEST__INIT;
		Lwc__CsStatReq st = LWC__CS_STAT_REQ__INIT;
		uint8_t plain[64];
		size_t n;
		req.op_case = LWC__CS_REQUEST__OP_STAT;
		req.stat = &st;
		n = lwc__cs_request__pack(&req, plain);
		assert_int_equal(send_mode(ch, fd, plain, n, CHAN_MODE_SEALED, &saved,
					   &saved_len), LWC_OK);
		r = recv_resp(ch, fd);
		assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_STAT);
		free_raw_resp(r);
		assert_int_equal(wire_send_frame(fd, saved, saved_len), LWC_OK);
		assert_int_equal(expect_error_and_close(fd), LWC_ERR_INTEGRITY);
		free(saved);
	}
	chan_free(ch);

	/* frames with a mode (chan.h): a READ's answer comes in a clear frame,
	 * its blocks readable as written, every other answer sealed; a request
	 * may come in either mode; a clear frame altered anywhere, or read in
	 * the other mode, fails and closes the channel */
	fd = raw_session(cs, &ch);
	{
		Lwc__CsRequest req = LWC__CS_REQUEST__INIT;
		Lwc__CsStatReq st = LWC__CS_STAT_REQ__INIT;
		uint8_t plain[128], want[BS], *body, *copy;
		size_t n = pack_read_1_2(plain), len, plen;
		unsigned mode;

		assert_int_equal(send_sealed(ch, fd, plain, n), LWC_OK);
		assert_int_equal(wire_recv_frame(fd, WIRE_FRAME_MAX, &body, &len, TIMEOUT), LWC_OK);
		assert_int_equal(body[len - 1], CHAN_MODE_CLEAR);
		fill(want, BS, 2, 1);
		assert_true(holds(body, len, want, BS));        /* in the clear, as written */
		assert_int_equal(chan_open_mode_inplace(ch, body, len, &plen, &mode), LWC_OK);
		assert_int_equal(mode, CHAN_MODE_CLEAR);
		r = lwc__cs_response__unpack(NULL, plen, body + CHAN_PLAIN_OFF);
		assert_non_null(r);
		assert_int_equal(r->read->n_blocks, 2);
		assert_memory_equal(r->read->blocks[1]->data.data, want, BS);
		free_raw_resp(r);
		free(body);
		/* a STAT in a clear frame is served; its answer is sealed */
		req.seq = 2;
		req.op_case = LWC__CS_REQUEST__OP_STAT;
		req.stat = &st;
		n = lwc__cs_request__pack(&req, plain);
		assert_int_equal(send_mode(ch, fd, plain, n, CHAN_MODE_CLEAR, NULL, NULL), LWC_OK);
		assert_int_equal(wire_recv_frame(fd, WIRE_FRAME_MAX, &body, &len, TIMEOUT), LWC_OK);
		assert_int_equal(body[len - 1], CHAN_MODE_SEALED);
		assert_int_equal(chan_open_mode_inplace(ch, body, len, &plen, &mode), LWC_OK);
		r = lwc__cs_response__unpack(NULL, plen, body + CHAN_PLAIN_OFF);
		assert_non_null(r);
		assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_STAT);
		free_raw_resp(r);
		free(body);
		/* the next clear frame read as a sealed one: refused */
		req.seq = 3;
		n = lwc__cs_request__pack(&req, plain);
		copy = mode_body(ch, plain, n, CHAN_MODE_CLEAR, &len);
		copy[len - 1] = CHAN_MODE_SEALED;
		assert_int_equal(wire_send_frame(fd, copy, len), LWC_OK);
		assert_int_equal(expect_error_and_close(fd), LWC_ERR_INTEGRITY);
		free(copy);
		chan_free(ch);
		/* a clear frame with one byte of its message changed: refused */
		fd = raw_session(cs, &ch);
		copy = mode_body(ch, plain, n, CHAN_MODE_CLEAR, &len);
		copy[CHAN_PLAIN_OFF + n / 2] ^= 0x01;
		assert_int_equal(wire_send_frame(fd, copy, len), LWC_OK);
		assert_int_equal(expect_error_and_close(fd), LWC_ERR_INTEGRITY);
		free(copy);
	}
	chan_free(ch);

	/* version 3, as the proxy speaks it: a READ's answer comes in a
	 * skeleton frame (chan.h), its blocks as written; its MAC covers the
	 * ids, versions and lengths (one changed: refused) but not the blocks'
	 * data (changed, the frame opens: the proxy's own open of each block
	 * is what refuses it, it_proxy test_tamper); and the store takes no
	 * skeleton frame, even one whose MAC is genuine */
	for (int round = 0; round < 3; round++) {
		uint8_t plain[128], want[BS], *body, *skel;
		uint8_t head[CHAN_PLAIN_OFF], tail[CHAN_CLEAR_TAIL];
		size_t n = pack_read_1_2(plain), len, plen, skel_len;
		unsigned mode;

		fd = raw_session_v(cs, &ch, CHAN_VERSION_SKELETON);
		if (round == 2) {
			/* a WRITE of one block (the shape a skeleton is made of)
			 * in a skeleton frame: refused, closed */
			uint8_t w[BS + 64], *q = w;
			size_t bl = cs_wire_block_len(9, 1, BS);

			*q++ = 1 << 3 | 0;
			*q++ = 1;
			*q++ = 3 << 3 | 2;
			q = cs_wire_varint(q, 1 + cs_wire_varint_len(bl) + bl);
			q = cs_wire_block_head(q, 9, 1, BS);
			fill(q, BS, 9, 1);
			n = (size_t)(q + BS - w);
			assert_int_equal(cs_wire_scan(w, n, CS_WIRE_WRITE_REQ, &(uint64_t){ 0 },
						      &(size_t){ 0 }), CS_WIRE_WRITE_REQ);
			assert_int_equal(cs_wire_read_skeleton(w, n, &skel, &skel_len), LWC_OK);
			assert_int_equal(chan_seal_clear(ch, skel, skel_len, head, tail), LWC_OK);
			tail[CHAN_CLEAR_TAIL - 1] = CHAN_MODE_SKELETON;
			body = malloc(n + CHAN_ABYTES + CHAN_MODE_BYTES);
			assert_non_null(body);
			memcpy(body, head, sizeof(head));
			memcpy(body + CHAN_PLAIN_OFF, w, n);
			memcpy(body + CHAN_PLAIN_OFF + n, tail, sizeof(tail));
			assert_int_equal(wire_send_frame(fd, body, n + CHAN_ABYTES + CHAN_MODE_BYTES),
					 LWC_OK);
			assert_int_equal(expect_error_and_close(fd), LWC_ERR_INTEGRITY);
			free(body);
			free(skel);
			chan_free(ch);
			continue;
		}
		assert_int_equal(send_sealed(ch, fd, plain, n), LWC_OK);
		assert_int_equal(wire_recv_frame(fd, WIRE_FRAME_MAX, &body, &len, TIMEOUT), LWC_OK);
		assert_int_equal(body[len - 1], CHAN_MODE_SKELETON);
		fill(want, BS, 2, 1);
		assert_true(holds(body, len, want, BS));        /* in the clear, as written */
		if (round == 0) {
			/* a byte of block 2's data changed on the way: the channel
			 * lets it through, as the store could have stored it */
			uint8_t *at = body + CHAN_PLAIN_OFF;

			while (memcmp(at, want, BS) != 0)
				at++;
			at[BS / 2] ^= 0x01;
			want[BS / 2] ^= 0x01;
			assert_int_equal(chan_open_mode_inplace(ch, body, len, &plen, &mode), LWC_OK);
			assert_int_equal(mode, CHAN_MODE_SKELETON);
			r = lwc__cs_response__unpack(NULL, plen, body + CHAN_PLAIN_OFF);
			assert_non_null(r);
			assert_int_equal(r->read->n_blocks, 2);
			assert_int_equal(r->read->blocks[1]->id, 2);
			assert_memory_equal(r->read->blocks[1]->data.data, want, BS);
			free_raw_resp(r);
		} else {
			/* block 1's version made 2: its field (key 2, varint 1),
			 * just before its data's key (3, bytes) */
			uint8_t *p = body + CHAN_PLAIN_OFF;
			int found = 0;

			for (size_t i = 0; i + 2 < len && !found; i++)
				if (p[i] == (2 << 3 | 0) && p[i + 1] == 1 && p[i + 2] == (3 << 3 | 2)) {
					p[i + 1] = 2;
					found = 1;
				}
			assert_true(found);
			assert_int_equal(chan_open_mode_inplace(ch, body, len, &plen, &mode),
					 LWC_ERR_INTEGRITY);
		}
		free(body);
		chan_free(ch);
		close(fd);
	}

	/* a length over the post-auth maximum */
	fd = raw_session(cs, &ch);
	wire_put_u32(hdr, WIRE_FRAME_MAX + 1);
	assert_int_equal(wire_write_all(fd, hdr, 4), LWC_OK);
	assert_int_equal(expect_error_and_close(fd), LWC_ERR_TOO_BIG);
	chan_free(ch);

	/* truncated encrypted frame, then EOF */
	fd = raw_session(cs, &ch);
	wire_put_u32(hdr, 5000);
	assert_int_equal(wire_write_all(fd, hdr, 4), LWC_OK);
	assert_int_equal(wire_write_all(fd, junk, 100), LWC_OK);
	close(fd);
	chan_free(ch);

	/* client disconnecting while its WRITE is in flight */
	fd = raw_session(cs, &ch);
	{
		uint64_t ids[1] = { 100 }, vs[1] = { 1 };
		Lwc__CsRequest req = LWC__CS_REQUEST__INIT;
		Lwc__CsWriteReq wr = LWC__CS_WRITE_REQ__INIT;
		Lwc__CsBlock b = LWC__CS_BLOCK__INIT, *bp = &b;
		uint8_t *d = malloc(BS);
		fill(d, BS, ids[0], vs[0]);
		b.id = 100;
		b.version = 1;
		b.data.data = d;
		b.data.len = BS;
		wr.n_blocks = 1;
		wr.blocks = &bp;
		req.op_case = LWC__CS_REQUEST__OP_WRITE;
		req.write = &wr;
		assert_int_equal(chan_write_msg(ch, fd, &req.base), LWC_OK);
		close(fd);
		free(d);
	}
	chan_free(ch);
	usleep(200000);
	{
		/* the store holds 3 blocks, or 4 if that WRITE completed: both fine */
		struct cs_client *c2 = connect_cs(cs);
		struct totals t = totals(c2);
		assert_true(t.blocks == 3 || t.blocks == 4);
		check_read_range(c2, 0, 3, 1);
		cs_client_close(c2);
	}
	assert_int_equal(kill(cs->pid, 0), 0);    /* the server survived it all */
}

/* A request's frame: header and sealed body, appended to buf at *off. */
static void seal_frame(struct chan *ch, const Lwc__CsRequest *req, uint8_t *buf, size_t *off)
{
	size_t n = lwc__cs_request__get_packed_size(req);
	uint8_t *body = buf + *off + WIRE_HDR_BYTES;

	assert_int_equal(lwc__cs_request__pack(req, body + CHAN_PLAIN_OFF), n);
	wire_put_u32(buf + *off, (uint32_t)(n + CHAN_ABYTES + CHAN_MODE_BYTES));
	assert_int_equal(chan_seal_mode_inplace(ch, body, n, CHAN_MODE_SEALED), LWC_OK);
	*off += WIRE_HDR_BYTES + n + CHAN_ABYTES + CHAN_MODE_BYTES;
}

/* Frames past SRVKIT_FRAME_DIRECT are read straight from the socket: a
 * WRITE of 40 blocks (432 KB) and a STAT behind it in the same bytes,
 * written in pieces of every size with pauses, are answered in order with
 * nothing of the STAT taken into the WRITE; a large frame cut off by the
 * client's close leaves the server serving. */
static void test_large_frames(void **state)
{
	struct h_cs *cs = *state;
	enum { NB = 40 };
	Lwc__CsRequest wreq = LWC__CS_REQUEST__INIT, sreq = LWC__CS_REQUEST__INIT;
	Lwc__CsWriteReq wr = LWC__CS_WRITE_REQ__INIT;
	Lwc__CsStatReq stat = LWC__CS_STAT_REQ__INIT;
	Lwc__CsBlock blk[NB], *bp[NB];
	uint8_t *data = malloc((size_t)NB * BS), *buf = malloc((size_t)NB * BS + 4096), hdr[4];
	size_t len = 0, sent = 0, piece = 1;
	struct chan *ch;
	Lwc__CsResponse *r;
	int fd;

	assert_non_null(data);
	assert_non_null(buf);
	for (int i = 0; i < NB; i++) {
		lwc__cs_block__init(&blk[i]);
		blk[i].id = 200 + (uint64_t)i;
		blk[i].version = 1;
		blk[i].data.data = data + (size_t)i * BS;
		blk[i].data.len = BS;
		fill(blk[i].data.data, BS, blk[i].id, 1);
		bp[i] = &blk[i];
	}
	wr.n_blocks = NB;
	wr.blocks = bp;
	wreq.op_case = LWC__CS_REQUEST__OP_WRITE;
	wreq.write = &wr;
	wreq.seq = 1;
	sreq.op_case = LWC__CS_REQUEST__OP_STAT;
	sreq.stat = &stat;
	sreq.seq = 2;
	fd = raw_session(cs, &ch);
	seal_frame(ch, &wreq, buf, &len);
	assert_true(len > (256u << 10));
	seal_frame(ch, &sreq, buf, &len);
	while (sent < len) {
		size_t n = len - sent < piece ? len - sent : piece;

		assert_int_equal(wire_write_all(fd, buf + sent, n), LWC_OK);
		sent += n;
		piece = piece * 3 + 1;          /* 1, 4, 13, ... bytes, then most of it */
		usleep(2000);
	}
	r = recv_resp(ch, fd);
	assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_WRITE);
	assert_int_equal(r->seq, 1);
	free_raw_resp(r);
	r = recv_resp(ch, fd);
	assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_STAT);
	assert_int_equal(r->seq, 2);
	free_raw_resp(r);
	close(fd);
	chan_free(ch);
	{
		struct cs_client *cl = connect_cs(cs);

		check_read_range(cl, 200, NB, 1);
		cs_client_close(cl);
	}

	/* a 1 MB frame of which 300 KB come, then the client closes */
	fd = raw_session(cs, &ch);
	wire_put_u32(hdr, 1u << 20);
	assert_int_equal(wire_write_all(fd, hdr, 4), LWC_OK);
	assert_int_equal(wire_write_all(fd, buf, 300u << 10), LWC_OK);
	usleep(100000);
	close(fd);
	chan_free(ch);
	usleep(100000);
	assert_int_equal(kill(cs->pid, 0), 0);
	{
		struct cs_client *cl = connect_cs(cs);

		check_read_range(cl, 200, NB, 1);
		cs_client_close(cl);
	}
	free(data);
	free(buf);
}

/* An answer larger than the socket takes at once (11 MB to a client that
 * reads nothing for a while): the worker sends what the socket takes, the
 * event loop the rest, and a request queued behind it is answered after
 * it, whole and in order. */
static void test_answer_in_parts(void **state)
{
	struct h_cs *cs = *state;
	enum { NB = 1024 };
	struct cs_client *cl = connect_cs(cs);
	Lwc__CsRequest rreq = LWC__CS_REQUEST__INIT, sreq = LWC__CS_REQUEST__INIT;
	Lwc__CsReadReq rd = LWC__CS_READ_REQ__INIT;
	Lwc__CsStatReq stat = LWC__CS_STAT_REQ__INIT;
	uint64_t *ids = malloc(NB * sizeof(*ids)), *vs = malloc(NB * sizeof(*vs));
	uint8_t *buf = malloc(64u << 10), *want = malloc(BS);
	size_t len = 0;
	struct chan *ch;
	Lwc__CsResponse *r;
	int fd;

	assert_non_null(ids);
	assert_non_null(vs);
	assert_non_null(buf);
	assert_non_null(want);
	assert_int_equal(write_range(cl, 5000, NB, 1), LWC_OK);
	cs_client_close(cl);
	for (size_t i = 0; i < NB; i++) {
		ids[i] = 5000 + i;
		vs[i] = 1;
	}
	rd.n_ids = rd.n_versions = NB;
	rd.ids = ids;
	rd.versions = vs;
	rreq.op_case = LWC__CS_REQUEST__OP_READ;
	rreq.read = &rd;
	rreq.seq = 1;
	sreq.op_case = LWC__CS_REQUEST__OP_STAT;
	sreq.stat = &stat;
	sreq.seq = 2;
	fd = raw_session(cs, &ch);
	seal_frame(ch, &rreq, buf, &len);
	seal_frame(ch, &sreq, buf, &len);
	assert_int_equal(wire_write_all(fd, buf, len), LWC_OK);
	usleep(300000);                  /* the socket fills; the loop holds the rest */
	r = recv_resp(ch, fd);
	assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_READ);
	assert_int_equal(r->seq, 1);
	assert_int_equal(r->read->n_blocks, NB);
	for (size_t i = 0; i < NB; i++) {
		assert_int_equal(r->read->blocks[i]->id, 5000 + i);
		assert_int_equal(r->read->blocks[i]->data.len, BS);
		fill(want, BS, 5000 + i, 1);
		assert_memory_equal(r->read->blocks[i]->data.data, want, BS);
	}
	free_raw_resp(r);
	r = recv_resp(ch, fd);
	assert_int_equal(r->result_case, LWC__CS_RESPONSE__RESULT_STAT);
	assert_int_equal(r->seq, 2);
	free_raw_resp(r);
	close(fd);
	chan_free(ch);
	free(ids);
	free(vs);
	free(buf);
	free(want);
}

static void test_sigterm(void **state)
{
	struct h_cs *cs = *state;
	struct cs_client *cl = connect_cs(cs);
	int st;

	assert_int_equal(write_range(cl, 0, 8, 1), LWC_OK);
	st = h_cs_stop(cs, SIGTERM);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	cs_client_close(cl);
	h_cs_start(cs, NULL);
	cl = connect_cs(cs);
	check_read_range(cl, 0, 8, 1);
	cs_client_close(cl);
	st = h_cs_stop(cs, SIGINT);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_keyfiles(void **state)
{
	struct h_cs *cs = *state;
	char bin[256], path[400], log[400];
	const char *argv[8];
	struct stat sb;
	FILE *f;

	/* keygen refuses to overwrite */
	argv[0] = h_bin("lwc-cloudstore", bin, sizeof(bin));
	argv[1] = "keygen";
	argv[2] = cs->key_file;
	argv[3] = NULL;
	assert_int_not_equal(h_run(argv, "/dev/null"), 0);
	assert_int_equal(stat(cs->key_file, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);

	/* a key file readable by others is refused */
	snprintf(path, sizeof(path), "%s/open.key", cs->dir);
	snprintf(log, sizeof(log), "%s/open.log", cs->dir);
	argv[2] = path;
	assert_int_equal(h_run(argv, "/dev/null"), 0);
	chmod(path, 0644);
	argv[1] = "--listen";
	argv[2] = "127.0.0.1:1";
	argv[3] = "--store";
	argv[4] = cs->store;
	argv[5] = "--key-file";
	argv[6] = path;
	argv[7] = NULL;
	assert_int_equal(h_run(argv, log), 1);
	assert_int_equal(h_count_lines(log, "by group or others"), 1);
	/* a damaged key file is refused */
	chmod(path, 0600);
	f = fopen(path, "r+");
	fseek(f, -5, SEEK_END);
	fputc('0' + (fgetc(f) == '0'), f);
	fclose(f);
	f = fopen(path, "r+");
	fseek(f, -3, SEEK_END);
	fputc('a', f);
	fputc('b', f);
	fclose(f);
	assert_int_equal(h_run(argv, log), 1);
	assert_int_equal(h_count_lines(log, "checksum"), 1);
}

/* ---- crash consistency --------------------------------------------------- */

/* PostgreSQL: a session of a store that ended, committing a WRITE it never
 * acknowledged, outlives the store's lock session; a store started then
 * must not serve until that session is gone (store_pg.c store_orphans),
 * or the WRITE lands after it has answered a STAT.  Here the leftover is a
 * session with the store's application_name that adds version 2 of block 5
 * and commits 1.5 s later, then closes. */
static void *orphan_finish(void *p)
{
	PGconn *c = p;
	PGresult *r;

	while ((r = PQgetResult(c)) != NULL)
		PQclear(r);
	PQfinish(c);
	return NULL;
}

static void test_pg_orphan_write(void **state)
{
	struct h_cs *cs = *state;
	struct cs_client *cl;
	Lwc__CsResponse *r = NULL;
	uint64_t id = 5, v = 1;
	char err[256], conninfo[1200];
	const char *keys[] = { "dbname", "application_name", NULL };
	const char *vals[] = { conninfo, "lwc-cloudstore", NULL };
	PGconn *c;
	pthread_t th;

	if (strcmp(h_backend(), "pg") != 0)
		skip();
	cl = connect_cs(cs);
	assert_int_equal(write_blocks(cl, &id, &v, 1, BS, err, sizeof(err)), LWC_OK);
	cs_client_close(cl);
	h_cs_stop(cs, SIGKILL);
	snprintf(conninfo, sizeof(conninfo), "%s", cs->store + strlen("postgres:"));
	c = PQconnectdbParams(keys, vals, 1);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	assert_int_equal(PQsendQuery(c, "BEGIN; INSERT INTO lwc_blocks (id, version, data) "
				     "SELECT id, 2, data FROM lwc_blocks WHERE id = 5 AND version = 1; "
				     "SELECT pg_sleep(1.5); COMMIT"), 1);
	assert_int_equal(pthread_create(&th, NULL, orphan_finish, c), 0);
	h_cs_start(cs, NULL);
	cl = connect_cs(cs);
	assert_int_equal(cs_client_stat(cl, &id, 1, &r, err, sizeof(err)), LWC_OK);
	assert_int_equal(r->stat->n_held, 1);
	assert_true(r->stat->held[0]->n_versions >= 1);
	assert_int_equal(r->stat->held[0]->versions[r->stat->held[0]->n_versions - 1], 2);
	cs_client_free_resp(r);
	cs_client_close(cl);
	pthread_join(th, NULL);
}

#define CRASH_BLOCKS 48
#define CRASH_ROUNDS 6

struct crash_ctx {
	pid_t pid;
	int delay_us;
};

static void *killer(void *p)
{
	struct crash_ctx *k = p;

	usleep((useconds_t)k->delay_us);
	kill(k->pid, SIGKILL);
	return NULL;
}

static void test_crash_kill9(void **state)
{
	struct h_cs *cs = *state;
	uint64_t acked[CRASH_BLOCKS] = { 0 };
	uint32_t seed = (uint32_t)getpid();

	for (int round = 0; round < CRASH_ROUNDS; round++) {
		struct cs_client *cl = connect_cs(cs);
		struct crash_ctx k = { cs->pid, 20000 + (int)(rand_r(&seed) % 300000) };
		pthread_t th;
		uint64_t ids[16], vs[16];
		size_t n = 0;
		int writes = 0, inflight = 0;

		assert_int_equal(pthread_create(&th, NULL, killer, &k), 0);
		for (;;) {
			char err[256];
			/* a random batch of distinct blocks, each advanced one version */
			n = 1 + rand_r(&seed) % 16;
			for (size_t i = 0; i < n; i++) {
				uint64_t id;
				int dup;
				do {
					id = rand_r(&seed) % CRASH_BLOCKS;
					dup = 0;
					for (size_t j = 0; j < i; j++)
						dup |= ids[j] == id;
				} while (dup);
				ids[i] = id;
				vs[i] = acked[id] + 1;
			}
			inflight = 1;
			if (write_blocks(cl, ids, vs, n, BS, err, sizeof(err)) != LWC_OK)
				break;
			inflight = 0;
			for (size_t i = 0; i < n; i++)
				acked[ids[i]] = vs[i];
			writes++;
		}
		pthread_join(th, NULL);
		cs_client_close(cl);
		waitpid(cs->pid, NULL, 0);
		cs->pid = 0;
		h_cs_start(cs, NULL);

		/* every acknowledged WRITE reads back; the one in flight is all or nothing
		 * (per shard, per block: below) */
		cl = connect_cs(cs);
		{
			uint64_t all[CRASH_BLOCKS];
			Lwc__CsResponse *r = NULL;
			char err[256];
			/* all or nothing in a PostgreSQL store; in an LMDB store per
			 * shard (a crash between the shards' commits); in a Redis
			 * Cluster per block (store.h): each group old or new */
			int per_block = strcmp(h_backend(), "redis") == 0;
			unsigned groups = per_block ? CRASH_BLOCKS :
					  strcmp(h_backend(), "lmdb") == 0 ? CS_LMDB_SHARDS : 1;
			int applied[CRASH_BLOCKS];
			size_t part = 0;
			uint64_t now[CRASH_BLOCKS];
			for (int i = 0; i < CRASH_BLOCKS; i++) {
				all[i] = (uint64_t)i;
				applied[i] = -1;
			}
			assert_int_equal(cs_client_stat(cl, all, CRASH_BLOCKS, &r, err, sizeof(err)), LWC_OK);
			for (int i = 0; i < CRASH_BLOCKS; i++) {
				Lwc__CsHeld *h = r->stat->held[i];
				uint64_t newest = h->n_versions ? h->versions[h->n_versions - 1] : 0;
				int in_batch = 0;
				now[i] = newest;
				for (size_t j = 0; inflight && j < n; j++)
					in_batch |= ids[j] == (uint64_t)i;
				if (!in_batch) {
					assert_int_equal(newest, acked[i]);
				} else {
					int this_applied = newest == acked[i] + 1;
					unsigned g = (unsigned)i % groups;
					assert_true(newest == acked[i] || this_applied);
					if (this_applied)
						part++;
					if (applied[g] < 0)
						applied[g] = this_applied;
					assert_int_equal(applied[g], this_applied);
				}
			}
			cs_client_free_resp(r);
			for (int i = 0; i < CRASH_BLOCKS; i++) {
				if (now[i] != acked[i] + 1)
					continue;
				/* the in-flight WRITE's: the version before it still reads */
				if (acked[i])
					check_read(cl, &all[i], &acked[i], 1);
				acked[i] = now[i];
			}
			for (int i = 0; i < CRASH_BLOCKS; i++)
				if (acked[i])
					check_read(cl, &all[i], &acked[i], 1);
			fprintf(stderr, "    round %d: %d writes acknowledged before kill at %d ms, "
				"in-flight write %s\n", round, writes, k.delay_us / 1000,
				!inflight ? "none" : part > 0 && part < n ? "partly applied" :
				part == n ? "fully applied" : "absent");
		}
		cs_client_close(cl);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_read_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_block_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_clients, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_preauth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_postauth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answer_in_parts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigterm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keyfiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_kill9, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pg_orphan_write, setup, teardown),
	};
	signal(SIGPIPE, SIG_IGN);
	if (sodium_init() < 0)
		return 1;
	fprintf(stderr, "block-store suite on backend: %s\n", h_backend());
	return cmocka_run_group_tests_name(h_backend(), tests, NULL, NULL);
}
