/*
 * fuzz_chan.c - libFuzzer target: every decoder of the channel (common/chan.c)
 * and the frame header (common/wire.c).
 *
 * Input layout: 2 bytes big-endian L, then part A (L bytes, clamped), then
 * part B (the rest).  Each input drives:
 *
 *   server  chan_server_hello(A), chan_server_reply(fixed PSK),
 *           chan_server_auth(B)                      (a hostile client)
 *   client  chan_client_hello, chan_client_auth(reply = A),
 *           chan_client_finish(B)                    (a hostile server)
 *   ready   on an authenticated pair: chan_open(A) and chan_open(B) as
 *           forged frames, and chan_open_mode_inplace of each on a pair
 *           with modes; then B sealed by a genuine (but malicious) cloud
 *           store (version 1, both modes of version 2, and version 3's
 *           skeleton frames around what has a READ answer's shape), sent over a
 *           socketpair and received with chan_read_msg as a CsResponse
 *           (the proxy's decoder of what the cloud says)
 *   wire    wire_frame_len on the first 4 bytes, against both maxima
 *
 * Oracles beyond the sanitizers: forged material never authenticates,
 * failures leave the channel poisoned, error messages are terminated, and
 * frame lengths stay within their bounds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "chan.h"
#include "cs_wire.h"
#include "lwc.pb-c.h"
#include "wire.h"

static uint8_t psk[32];
static int sv[2] = { -1, -1 };       /* the proxy-cloud "connection" */

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz_chan: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                  \
			abort();                                             \
		}                                                            \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	memset(psk, 0x42, sizeof(psk));
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		perror("socketpair");
		abort();
	}
	return 0;
}

static void check_err(const char *err, size_t errlen)
{
	CHECK(memchr(err, '\0', errlen) != NULL);
}

static void server_side(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	struct chan *s;
	uint8_t *out = NULL;
	size_t out_len = 0;
	int rc;

	CHECK(chan_new(&s, 1) == LWC_OK);
	rc = chan_server_hello(s, a, alen);
	if (rc != LWC_OK) {
		CHECK(rc == LWC_ERR_PROTO);
		CHECK(chan_get_state(s) == CHAN_FAILED);
		chan_free(s);
		return;
	}
	CHECK(strlen(chan_key_id(s)) <= CHAN_KEY_ID_MAX);
	for (const char *p = chan_key_id(s); *p; p++)
		CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
	CHECK(chan_server_reply(s, psk, &out, &out_len) == LWC_OK);
	CHECK(out_len > 0 && out_len <= WIRE_PREAUTH_MAX);
	free(out);
	out = NULL;
	rc = chan_server_auth(s, b, blen, &out, &out_len);
	/* the server's nonce is fresh: no input can hold a valid proof */
	CHECK(rc == LWC_ERR_PROTO || rc == LWC_ERR_AUTH);
	CHECK(out == NULL);
	CHECK(chan_get_state(s) == CHAN_FAILED);
	chan_free(s);
}

static void client_side(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	struct chan *c;
	uint8_t *out = NULL;
	size_t out_len = 0;
	char err[128];
	int rc;

	CHECK(chan_new(&c, 0) == LWC_OK);
	CHECK(chan_client_hello(c, "fuzz", &out, &out_len) == LWC_OK);
	free(out);
	out = NULL;
	memset(err, 'x', sizeof(err));
	err[sizeof(err) - 1] = '\0';
	rc = chan_client_auth(c, psk, a, alen, &out, &out_len, err, sizeof(err));
	check_err(err, sizeof(err));
	if (rc != LWC_OK) {
		CHECK(rc < 0 && rc >= LWC_ERR_MIN_);
		CHECK(out == NULL);
		CHECK(chan_get_state(c) == CHAN_FAILED);
		chan_free(c);
		return;
	}
	CHECK(out_len > 0 && out_len <= WIRE_PREAUTH_MAX);
	free(out);
	rc = chan_client_finish(c, b, blen, err, sizeof(err));
	check_err(err, sizeof(err));
	/* the client's nonce is fresh: no input holds the server's proof */
	CHECK(rc < 0 && rc >= LWC_ERR_MIN_);
	CHECK(chan_get_state(c) == CHAN_FAILED);
	chan_free(c);
}

static void make_pair_v(struct chan **c, struct chan **s, int modes)
{
	uint8_t *hello, *reply, *auth, *proof;
	size_t hl, rl, al, pl;

	CHECK(chan_new(c, 0) == LWC_OK && chan_new(s, 1) == LWC_OK);
	if (modes) {                     /* 1: version 2; 2: version 3 */
		chan_use_modes(*c);
		chan_use_modes(*s);
	}
	if (modes == 2) {
		chan_use_skeleton(*c, cs_wire_read_skeleton);
		chan_use_skeleton(*s, cs_wire_read_skeleton);
	}
	CHECK(chan_client_hello(*c, "", &hello, &hl) == LWC_OK);
	CHECK(chan_server_hello(*s, hello, hl) == LWC_OK);
	CHECK(chan_server_reply(*s, psk, &reply, &rl) == LWC_OK);
	CHECK(chan_client_auth(*c, psk, reply, rl, &auth, &al, NULL, 0) == LWC_OK);
	CHECK(chan_server_auth(*s, auth, al, &proof, &pl) == LWC_OK);
	CHECK(chan_client_finish(*c, proof, pl, NULL, 0) == LWC_OK);
	free(hello);
	free(reply);
	free(auth);
	free(proof);
}

static void make_pair(struct chan **c, struct chan **s)
{
	make_pair_v(c, s, 0);
}

static void forged_frame(const uint8_t *x, size_t len)
{
	struct chan *c, *s;
	uint8_t *out = malloc(len + 1);
	size_t out_len;

	CHECK(out != NULL);
	make_pair(&c, &s);
	CHECK(chan_open(c, x, len, out, &out_len) == LWC_ERR_INTEGRITY);
	CHECK(chan_get_state(c) == CHAN_FAILED);
	CHECK(chan_open(s, x, len, out, &out_len) == LWC_ERR_INTEGRITY);
	free(out);
	chan_free(c);
	chan_free(s);
}

/* x as a frame body with a mode (the proxy-cloud channel, version 2 or
 * 3), in place, at the client end and at the server end. */
static void forged_mode_frame(const uint8_t *x, size_t len, int modes)
{
	struct chan *c, *s;
	uint8_t *buf = malloc(len + 1);
	size_t plain_len;
	unsigned mode;

	CHECK(buf != NULL);
	make_pair_v(&c, &s, modes);
	memcpy(buf, x, len);
	CHECK(chan_open_mode_inplace(c, buf, len, &plain_len, &mode) == LWC_ERR_INTEGRITY);
	CHECK(chan_get_state(c) == CHAN_FAILED);
	memcpy(buf, x, len);
	CHECK(chan_open_mode_inplace(s, buf, len, &plain_len, &mode) == LWC_ERR_INTEGRITY);
	CHECK(chan_get_state(s) == CHAN_FAILED);
	free(buf);
	chan_free(c);
	chan_free(s);
}

/* A cloud store that holds K_CS sends x as the plaintext of a response:
 * on a channel of version 1 (mode < 0) or in a frame of that mode. */
static void malicious_response(const uint8_t *x, size_t len, int mode)
{
	struct chan *c, *s;
	size_t body = len + CHAN_ABYTES + (mode >= 0 ? CHAN_MODE_BYTES : 0);
	uint8_t *ct = malloc(body);
	ProtobufCMessage *m = NULL;
	int rc;

	CHECK(ct != NULL);
	make_pair_v(&c, &s, mode == CHAN_MODE_SKELETON ? 2 : mode >= 0);
	if (mode >= 0) {
		memcpy(ct + CHAN_PLAIN_OFF, x, len);
		rc = chan_seal_mode_inplace(s, ct, len, (unsigned)mode);
		/* a skeleton frame only around a READ answer's shape */
		if (mode == CHAN_MODE_SKELETON && rc == LWC_ERR_PROTO) {
			CHECK(chan_get_state(s) == CHAN_READY);
			free(ct);
			chan_free(c);
			chan_free(s);
			return;
		}
		CHECK(rc == LWC_OK);
	} else {
		CHECK(chan_seal(s, x, len, ct) == LWC_OK);
	}
	CHECK(wire_send_frame(sv[0], ct, body) == LWC_OK);
	rc = chan_read_msg(c, sv[1], &lwc__cs_response__descriptor, WIRE_FRAME_MAX, &m, 1000);
	if (rc == LWC_OK) {
		Lwc__CsResponse *r = (Lwc__CsResponse *)m;
		CHECK(m != NULL);
		/* walk what a caller would touch */
		if (r->result_case == LWC__CS_RESPONSE__RESULT_READ)
			for (size_t i = 0; i < r->read->n_blocks; i++)
				CHECK(r->read->blocks[i] != NULL);
		if (r->result_case == LWC__CS_RESPONSE__RESULT_ERROR)
			CHECK(r->error->message != NULL);
		protobuf_c_message_free_unpacked(m, NULL);
	} else {
		CHECK(rc == LWC_ERR_PROTO && m == NULL);
	}
	/* the stream stays in step after a bad message */
	if (mode < 0) {
		uint8_t plain[8];
		size_t pl;
		CHECK(chan_seal(s, (const uint8_t *)"ok", 2, ct) == LWC_OK);
		CHECK(chan_open(c, ct, 2 + CHAN_ABYTES, plain, &pl) == LWC_OK && pl == 2);
	} else {
		uint8_t b[2 + CHAN_ABYTES + CHAN_MODE_BYTES];
		size_t pl;
		unsigned got;
		unsigned next = mode == CHAN_MODE_SKELETON ? CHAN_MODE_CLEAR : (unsigned)mode;
		memcpy(b + CHAN_PLAIN_OFF, "ok", 2);
		CHECK(chan_seal_mode_inplace(s, b, 2, next) == LWC_OK);
		CHECK(chan_open_mode_inplace(c, b, sizeof(b), &pl, &got) == LWC_OK && pl == 2 &&
		      got == next && memcmp(b + CHAN_PLAIN_OFF, "ok", 2) == 0);
	}
	free(ct);
	chan_free(c);
	chan_free(s);
}

static void wire_side(const uint8_t *data, size_t size)
{
	const uint32_t maxes[] = { WIRE_PREAUTH_MAX, WIRE_FRAME_MAX };
	uint32_t n;
	int rc;

	if (size < WIRE_HDR_BYTES)
		return;
	for (size_t i = 0; i < 2; i++) {
		n = 0;
		rc = wire_frame_len(data, maxes[i], &n);
		if (rc == LWC_OK)
			CHECK(n >= 1 && n <= maxes[i] && n == wire_get_u32(data));
		else
			CHECK((rc == LWC_ERR_PROTO && wire_get_u32(data) == 0) ||
			      (rc == LWC_ERR_TOO_BIG && wire_get_u32(data) > maxes[i]));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *a = data, *b = data;
	size_t alen = 0, blen = 0;

	if (size >= 2) {
		alen = (size_t)data[0] << 8 | data[1];
		if (alen > size - 2)
			alen = size - 2;
		a = data + 2;
		b = a + alen;
		blen = size - 2 - alen;
	}
	server_side(a, alen, b, blen);
	client_side(a, alen, b, blen);
	forged_frame(a, alen);
	forged_frame(b, blen);
	forged_mode_frame(a, alen, 1);
	forged_mode_frame(b, blen, 1);
	forged_mode_frame(a, alen, 2);
	forged_mode_frame(b, blen, 2);
	if (blen <= 60000) {
		/* version 1, then both modes of version 2 (the store's READ
		 * answers come clear) */
		malicious_response(b, blen, -1);
		malicious_response(b, blen, CHAN_MODE_SEALED);
		malicious_response(b, blen, CHAN_MODE_CLEAR);
		malicious_response(b, blen, CHAN_MODE_SKELETON);
	}
	wire_side(data, size);
	return 0;
}
