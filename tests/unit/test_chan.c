/*
 * test_chan.c - the authenticated channel (common/chan.c) driven entirely in
 * memory: a client and a server struct chan exchange frame bodies directly.
 *
 * Covers a good set-up and traffic both ways, wrong keys on either side (a
 * hand-built imposter server that follows the documented key schedule with
 * the wrong PSK), replayed, reordered, reflected, bit-flipped, truncated and
 * cross-session frames, malformed Hello/HelloReply/Auth bodies, calls in the
 * wrong state, the plaintext Error body and wire_frame_len's bounds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "chan.h"
#include "cry.h"
#include "cs_wire.h"
#include "lwc.pb-c.h"
#include "wire.h"

#define NONCE_BYTES 32u
#define HDR_BYTES   crypto_secretstream_xchacha20poly1305_HEADERBYTES
/* sizeof("LWC-AUTH-SERVER-1") with its NUL, as chan.c sends it */
static const uint8_t proof_server[] = "LWC-AUTH-SERVER-1";

static uint8_t psk_a[32], psk_b[32];

/* ---------------------------------------------------------------- helpers */

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	assert_non_null(p);
	return p;
}

static struct chan *new_end(int is_server)
{
	struct chan *c = NULL;

	assert_int_equal(chan_new(&c, is_server), LWC_OK);
	assert_non_null(c);
	assert_int_equal(chan_get_state(c), CHAN_NEW);
	return c;
}

struct pair {
	struct chan *c, *s;
	uint8_t *hello, *reply, *auth, *proof;
	size_t hello_len, reply_len, auth_len, proof_len;
};

static void pair_free(struct pair *p)
{
	chan_free(p->c);
	chan_free(p->s);
	free(p->hello);
	free(p->reply);
	free(p->auth);
	free(p->proof);
	memset(p, 0, sizeof(*p));
}

/* A complete, successful handshake; keeps every set-up body. */
static void pair_setup_v(struct pair *p, const char *key_id, const uint8_t psk[32],
			 int modes)
{
	char err[256] = "";

	memset(p, 0, sizeof(*p));
	p->c = new_end(0);
	p->s = new_end(1);
	if (modes) {                     /* 1: version 2; 2: version 3 */
		chan_use_modes(p->c);
		chan_use_modes(p->s);
	}
	if (modes == 2) {
		chan_use_skeleton(p->c, cs_wire_read_skeleton);
		chan_use_skeleton(p->s, cs_wire_read_skeleton);
	}
	assert_int_equal(chan_client_hello(p->c, key_id, &p->hello, &p->hello_len), LWC_OK);
	assert_int_equal(chan_get_state(p->c), CHAN_HELLO_SENT);
	assert_int_equal(chan_server_hello(p->s, p->hello, p->hello_len), LWC_OK);
	assert_int_equal(chan_get_state(p->s), CHAN_HELLO_RCVD);
	assert_string_equal(chan_key_id(p->s), key_id);
	assert_int_equal(chan_server_reply(p->s, psk, &p->reply, &p->reply_len), LWC_OK);
	assert_int_equal(chan_get_state(p->s), CHAN_REPLY_SENT);
	assert_int_equal(chan_client_auth(p->c, psk, p->reply, p->reply_len,
					  &p->auth, &p->auth_len, err, sizeof(err)), LWC_OK);
	assert_int_equal(chan_get_state(p->c), CHAN_AUTH_SENT);
	assert_int_equal(chan_server_auth(p->s, p->auth, p->auth_len,
					  &p->proof, &p->proof_len), LWC_OK);
	assert_int_equal(chan_get_state(p->s), CHAN_READY);
	assert_int_equal(chan_client_finish(p->c, p->proof, p->proof_len, err, sizeof(err)),
			 LWC_OK);
	assert_int_equal(chan_get_state(p->c), CHAN_READY);
}

static void pair_setup(struct pair *p, const char *key_id, const uint8_t psk[32])
{
	pair_setup_v(p, key_id, psk, 0);
}

/* Seal plain on from; returns the malloc'ed frame body. */
static uint8_t *seal(struct chan *from, const void *plain, size_t len, size_t *ct_len)
{
	uint8_t *ct = xmalloc(len + CHAN_ABYTES);

	assert_int_equal(chan_seal(from, plain, len, ct), LWC_OK);
	*ct_len = len + CHAN_ABYTES;
	return ct;
}

/* Open ct on to and compare with the expected plaintext. */
static void open_ok(struct chan *to, const uint8_t *ct, size_t ct_len,
		    const void *want, size_t want_len)
{
	uint8_t *out = xmalloc(ct_len);
	size_t out_len = 12345;

	assert_int_equal(chan_open(to, ct, ct_len, out, &out_len), LWC_OK);
	assert_int_equal(out_len, want_len);
	if (want_len)
		assert_memory_equal(out, want, want_len);
	free(out);
}

/* Open ct on to and expect a failure that poisons the channel. */
static void open_fails(struct chan *to, const uint8_t *ct, size_t ct_len)
{
	uint8_t *out = xmalloc(ct_len + 1);
	size_t out_len = 0;

	assert_int_equal(chan_open(to, ct, ct_len, out, &out_len), LWC_ERR_INTEGRITY);
	assert_int_equal(chan_get_state(to), CHAN_FAILED);
	free(out);
}

static uint8_t *pack_msg(const ProtobufCMessage *m, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = xmalloc(n);

	assert_int_equal(protobuf_c_message_pack(m, buf), n);
	*len = n;
	return buf;
}

static uint8_t *hello_body(uint32_t version, size_t nonce_len, const char *key_id,
			   size_t *len)
{
	Lwc__Hello h = LWC__HELLO__INIT;
	uint8_t nonce[64];
	uint8_t *out;

	memset(nonce, 0x5a, sizeof(nonce));
	h.version = version;
	h.nonce.data = nonce;
	h.nonce.len = nonce_len;
	h.key_id = (char *)(uintptr_t)key_id;
	out = pack_msg(&h.base, len);
	return out;
}

static uint8_t *reply_body(uint32_t version, size_t nonce_len, size_t header_len, size_t *len)
{
	Lwc__HelloReply r = LWC__HELLO_REPLY__INIT;
	uint8_t buf[64];

	memset(buf, 0xa5, sizeof(buf));
	r.version = version;
	r.nonce.data = buf;
	r.nonce.len = nonce_len;
	r.header.data = buf;
	r.header.len = header_len;
	return pack_msg(&r.base, len);
}

static uint8_t *auth_body(const uint8_t *header, size_t header_len,
			  const uint8_t *proof, size_t proof_len, size_t *len)
{
	Lwc__Auth a = LWC__AUTH__INIT;

	a.header.data = (uint8_t *)(uintptr_t)header;
	a.header.len = header_len;
	a.proof.data = (uint8_t *)(uintptr_t)proof;
	a.proof.len = proof_len;
	return pack_msg(&a.base, len);
}

/* Deterministic pseudo-random bytes: case i of a seeded stream. */
static void det_bytes(uint8_t *buf, size_t len, uint32_t i)
{
	uint8_t seed[randombytes_SEEDBYTES] = { 0 };

	memcpy(seed, &i, sizeof(i));
	seed[31] = 0xc4;
	randombytes_buf_deterministic(buf, len, seed);
}

/*
 * An imposter server written from chan.h's documented key schedule: it
 * derives the session keys from the PSK it is given, sends a well-formed
 * HelloReply and pushes what it likes on the server->client stream.  With
 * the right PSK it is indistinguishable from chan.c (the positive control);
 * with another PSK the client must refuse it.
 */
struct imposter {
	crypto_secretstream_xchacha20poly1305_state push;
};

static void imposter_reply(struct imposter *im, const uint8_t psk[32],
			   const uint8_t *hello, size_t hello_len,
			   uint8_t **reply, size_t *reply_len)
{
	Lwc__Hello *h = lwc__hello__unpack(NULL, hello_len, hello);
	Lwc__HelloReply r = LWC__HELLO_REPLY__INIT;
	crypto_generichash_state st;
	uint8_t nonce_s[NONCE_BYTES], header[HDR_BYTES], k[64], idlen;

	assert_non_null(h);
	assert_int_equal(h->nonce.len, NONCE_BYTES);
	randombytes_buf(nonce_s, sizeof(nonce_s));
	idlen = (uint8_t)strlen(h->key_id);
	assert_int_equal(crypto_generichash_init(&st, psk, 32, sizeof(k)), 0);
	crypto_generichash_update(&st, (const uint8_t *)"LWC-CHAN-1", 10);
	crypto_generichash_update(&st, &idlen, 1);
	crypto_generichash_update(&st, (const uint8_t *)h->key_id, idlen);
	crypto_generichash_update(&st, h->nonce.data, NONCE_BYTES);
	crypto_generichash_update(&st, nonce_s, NONCE_BYTES);
	crypto_generichash_final(&st, k, sizeof(k));
	lwc__hello__free_unpacked(h, NULL);
	/* server->client is the second half */
	assert_int_equal(crypto_secretstream_xchacha20poly1305_init_push(&im->push, header,
									 k + 32), 0);
	r.version = CHAN_VERSION;
	r.nonce.data = nonce_s;
	r.nonce.len = sizeof(nonce_s);
	r.header.data = header;
	r.header.len = sizeof(header);
	*reply = pack_msg(&r.base, reply_len);
}

static uint8_t *imposter_push(struct imposter *im, const void *plain, size_t len,
			      size_t *ct_len)
{
	uint8_t *ct = xmalloc(len + CHAN_ABYTES);

	assert_int_equal(crypto_secretstream_xchacha20poly1305_push(&im->push, ct, NULL, plain,
								    len, NULL, 0, 0), 0);
	*ct_len = len + CHAN_ABYTES;
	return ct;
}

/* A client that has sent its Hello and, given reply, its Auth. */
static struct chan *client_to_auth(const char *key_id, const uint8_t psk[32],
				   struct imposter *im, const uint8_t imposter_psk[32])
{
	struct chan *c = new_end(0);
	uint8_t *hello, *reply, *auth;
	size_t hello_len, reply_len, auth_len;
	char err[256] = "";

	assert_int_equal(chan_client_hello(c, key_id, &hello, &hello_len), LWC_OK);
	imposter_reply(im, imposter_psk, hello, hello_len, &reply, &reply_len);
	assert_int_equal(chan_client_auth(c, psk, reply, reply_len, &auth, &auth_len,
					  err, sizeof(err)), LWC_OK);
	free(hello);
	free(reply);
	free(auth);
	return c;
}

/* -------------------------------------------------------------- set-up OK */

static void test_handshake_and_traffic(void **state)
{
	struct pair p;
	static const char *const msgs[] = { "ping", "", "a somewhat longer message 0123456789" };
	uint8_t *big, *ct;
	size_t ct_len, big_len = 1u << 20;
	(void)state;

	pair_setup(&p, "alice", psk_a);
	/* several messages each way, interleaved, including an empty one */
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
			ct = seal(p.c, msgs[i], strlen(msgs[i]), &ct_len);
			open_ok(p.s, ct, ct_len, msgs[i], strlen(msgs[i]));
			free(ct);
			ct = seal(p.s, msgs[i], strlen(msgs[i]), &ct_len);
			open_ok(p.c, ct, ct_len, msgs[i], strlen(msgs[i]));
			free(ct);
		}
	}
	/* several frames in flight before the peer reads (pipelining) */
	{
		uint8_t *cts[4];
		size_t lens[4];
		char m[4][16];
		for (int i = 0; i < 4; i++) {
			snprintf(m[i], sizeof(m[i]), "msg %d", i);
			cts[i] = seal(p.s, m[i], strlen(m[i]), &lens[i]);
		}
		for (int i = 0; i < 4; i++) {
			open_ok(p.c, cts[i], lens[i], m[i], strlen(m[i]));
			free(cts[i]);
		}
	}
	/* a large message */
	big = xmalloc(big_len);
	det_bytes(big, big_len, 7);
	ct = seal(p.c, big, big_len, &ct_len);
	assert_int_equal(ct_len, big_len + CHAN_ABYTES);
	assert_memory_not_equal(ct, big, 64);   /* not sent in clear */
	open_ok(p.s, ct, ct_len, big, big_len);
	free(ct);
	free(big);
	assert_int_equal(chan_get_state(p.c), CHAN_READY);
	assert_int_equal(chan_get_state(p.s), CHAN_READY);
	pair_free(&p);

	/* the K_CS case: empty key id; and a key id of the maximum length */
	pair_setup(&p, "", psk_a);
	assert_string_equal(chan_key_id(p.s), "");
	pair_free(&p);
	{
		char id[CHAN_KEY_ID_MAX + 1];
		memset(id, 'k', CHAN_KEY_ID_MAX);
		id[CHAN_KEY_ID_MAX] = '\0';
		pair_setup(&p, id, psk_a);
		assert_string_equal(chan_key_id(p.s), id);
		pair_free(&p);
	}
}

/* --------------------------------------------------------------- bad keys */

static void test_wrong_psk_client(void **state)
{
	struct chan *c = new_end(0), *s = new_end(1);
	uint8_t *hello, *reply, *auth, *out = NULL;
	size_t hello_len, reply_len, auth_len, out_len = 0;
	char err[256] = "";
	(void)state;

	assert_int_equal(chan_client_hello(c, "alice", &hello, &hello_len), LWC_OK);
	assert_int_equal(chan_server_hello(s, hello, hello_len), LWC_OK);
	assert_int_equal(chan_server_reply(s, psk_a, &reply, &reply_len), LWC_OK);
	/* the client holds another key: it cannot tell yet */
	assert_int_equal(chan_client_auth(c, psk_b, reply, reply_len, &auth, &auth_len,
					  err, sizeof(err)), LWC_OK);
	assert_int_equal(chan_server_auth(s, auth, auth_len, &out, &out_len), LWC_ERR_AUTH);
	assert_null(out);
	assert_int_equal(chan_get_state(s), CHAN_FAILED);
	/* poisoned: nothing more goes through */
	{
		uint8_t ct[4 + CHAN_ABYTES];
		assert_int_not_equal(chan_seal(s, (const uint8_t *)"data", 4, ct), LWC_OK);
		assert_int_not_equal(chan_server_auth(s, auth, auth_len, &out, &out_len), LWC_OK);
		assert_null(out);
	}
	free(hello);
	free(reply);
	free(auth);
	chan_free(c);
	chan_free(s);
}

static void test_wrong_key_server(void **state)
{
	struct imposter im;
	struct chan *c;
	uint8_t *ct;
	size_t ct_len;
	char err[256] = "";
	(void)state;

	/* positive control: the imposter code with the right key is accepted,
	 * so the failure below is due to the key alone */
	c = client_to_auth("alice", psk_a, &im, psk_a);
	ct = imposter_push(&im, proof_server, sizeof(proof_server), &ct_len);
	assert_int_equal(chan_client_finish(c, ct, ct_len, err, sizeof(err)), LWC_OK);
	assert_int_equal(chan_get_state(c), CHAN_READY);
	free(ct);
	ct = imposter_push(&im, "hi", 2, &ct_len);
	open_ok(c, ct, ct_len, "hi", 2);
	free(ct);
	chan_free(c);

	/* a server holding another key, following the protocol otherwise */
	c = client_to_auth("alice", psk_a, &im, psk_b);
	ct = imposter_push(&im, proof_server, sizeof(proof_server), &ct_len);
	assert_int_equal(chan_client_finish(c, ct, ct_len, err, sizeof(err)), LWC_ERR_AUTH);
	assert_non_null(strstr(err, "did not prove"));
	assert_int_equal(chan_get_state(c), CHAN_FAILED);
	{
		uint8_t out[8 + CHAN_ABYTES];
		assert_int_equal(chan_seal(c, (const uint8_t *)"x", 1, out), LWC_ERR_ARG);
	}
	free(ct);
	chan_free(c);

	/* right key, wrong proof text */
	c = client_to_auth("alice", psk_a, &im, psk_a);
	ct = imposter_push(&im, "LWC-AUTH-CLIENT-1", sizeof("LWC-AUTH-CLIENT-1"), &ct_len);
	assert_int_not_equal(chan_client_finish(c, ct, ct_len, err, sizeof(err)), LWC_OK);
	assert_int_equal(chan_get_state(c), CHAN_FAILED);
	free(ct);
	chan_free(c);

	/* random bytes of the proof's size */
	c = client_to_auth("alice", psk_a, &im, psk_a);
	{
		uint8_t junk[sizeof(proof_server) + CHAN_ABYTES];
		det_bytes(junk, sizeof(junk), 1);
		assert_int_equal(chan_client_finish(c, junk, sizeof(junk), err, sizeof(err)),
				 LWC_ERR_AUTH);
	}
	chan_free(c);

	/* the server answers with an encrypted Error instead of its proof */
	c = client_to_auth("alice", psk_a, &im, psk_a);
	{
		uint8_t *eb;
		size_t eb_len;
		assert_int_equal(chan_error_body(LWC_ERR_REVOKED, "key alice was revoked",
						 &eb, &eb_len), LWC_OK);
		ct = imposter_push(&im, eb, eb_len, &ct_len);
		err[0] = '\0';
		assert_int_equal(chan_client_finish(c, ct, ct_len, err, sizeof(err)),
				 LWC_ERR_REVOKED);
		assert_string_equal(err, "key alice was revoked");
		assert_int_equal(chan_get_state(c), CHAN_FAILED);
		free(ct);
		/* and a plaintext Error at the same point */
		chan_free(c);
		c = client_to_auth("alice", psk_a, &im, psk_a);
		err[0] = '\0';
		assert_int_equal(chan_client_finish(c, eb, eb_len, err, sizeof(err)),
				 LWC_ERR_REVOKED);
		assert_string_equal(err, "key alice was revoked");
		free(eb);
	}
	chan_free(c);
}

/* ------------------------------------------------------- frame tampering */

static void test_replay(void **state)
{
	struct pair p;
	uint8_t *ct1, *ct2;
	size_t l1, l2;
	(void)state;

	pair_setup(&p, "alice", psk_a);
	ct1 = seal(p.s, "one", 3, &l1);
	ct2 = seal(p.s, "two", 3, &l2);
	open_ok(p.c, ct1, l1, "one", 3);
	open_fails(p.c, ct1, l1);                 /* the same frame again */
	{
		/* poisoned: even the genuine next frame is refused now */
		uint8_t out[16];
		size_t out_len;
		assert_int_equal(chan_open(p.c, ct2, l2, out, &out_len), LWC_ERR_ARG);
		assert_int_equal(chan_seal(p.c, (const uint8_t *)"x", 1, out), LWC_ERR_ARG);
	}
	free(ct1);
	free(ct2);
	pair_free(&p);

	/* the client->server direction too */
	pair_setup(&p, "alice", psk_a);
	ct1 = seal(p.c, "one", 3, &l1);
	open_ok(p.s, ct1, l1, "one", 3);
	open_fails(p.s, ct1, l1);
	free(ct1);
	pair_free(&p);
}

static void test_reorder(void **state)
{
	struct pair p;
	uint8_t *ct1, *ct2;
	size_t l1, l2;
	(void)state;

	pair_setup(&p, "alice", psk_a);
	ct1 = seal(p.c, "first", 5, &l1);
	ct2 = seal(p.c, "second", 6, &l2);
	open_fails(p.s, ct2, l2);                 /* 2 before 1 */
	{
		uint8_t out[16];
		size_t out_len;
		assert_int_equal(chan_open(p.s, ct1, l1, out, &out_len), LWC_ERR_ARG);
	}
	free(ct1);
	free(ct2);
	pair_free(&p);

	/* a dropped frame: 1 then 3 */
	pair_setup(&p, "alice", psk_a);
	{
		uint8_t *c1, *c2, *c3;
		size_t a, b, c;
		c1 = seal(p.s, "1", 1, &a);
		c2 = seal(p.s, "2", 1, &b);
		c3 = seal(p.s, "3", 1, &c);
		open_ok(p.c, c1, a, "1", 1);
		open_fails(p.c, c3, c);
		free(c1);
		free(c2);
		free(c3);
	}
	pair_free(&p);
}

static void test_reflection(void **state)
{
	struct pair p;
	uint8_t *ct;
	size_t l;
	(void)state;

	/* a frame sent back to its own sender: directions have distinct keys */
	pair_setup(&p, "alice", psk_a);
	ct = seal(p.c, "mirror", 6, &l);
	open_fails(p.c, ct, l);
	free(ct);
	pair_free(&p);

	pair_setup(&p, "alice", psk_a);
	ct = seal(p.s, "mirror", 6, &l);
	open_fails(p.s, ct, l);
	free(ct);
	pair_free(&p);
}

static void test_bit_flip(void **state)
{
	static const char msg[] = "attack at dawn";
	const size_t len = sizeof(msg) - 1, ct_len = len + CHAN_ABYTES;
	(void)state;

	for (size_t pos = 0; pos < ct_len; pos++) {
		for (int bit = 0; bit < 8; bit += 7) {
			struct pair p;
			uint8_t *ct;
			size_t l;

			pair_setup(&p, "alice", psk_a);
			ct = seal(p.s, msg, len, &l);
			assert_int_equal(l, ct_len);
			ct[pos] ^= (uint8_t)(1u << bit);
			open_fails(p.c, ct, l);
			free(ct);
			pair_free(&p);
		}
	}
}

/* In place: the same bodies as the two-buffer functions, so either end
 * may use either, for messages of every length the cipher's paths take
 * (one byte, a partial 64-byte block, 4 KB, a batch of blocks); a tampered
 * body opened in place fails and poisons the channel. */
static void test_inplace(void **state)
{
	static const size_t lens[] = { 0, 1, 63, 64, 65, 511, 4096, 10817, 1u << 20 };
	(void)state;

	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t len = lens[k], ct_len, got = 0;
		uint8_t *plain = xmalloc(len + 1), *buf = xmalloc(len + CHAN_ABYTES), *ct;
		struct pair p;

		det_bytes(plain, len, (uint32_t)k);
		pair_setup(&p, "alice", psk_a);
		/* sealed in place, opened from another buffer */
		memcpy(buf + CHAN_PLAIN_OFF, plain, len);
		assert_int_equal(chan_seal_inplace(p.s, buf, len), LWC_OK);
		open_ok(p.c, buf, len + CHAN_ABYTES, plain, len);
		/* sealed into another buffer, opened in place */
		ct = seal(p.c, plain, len, &ct_len);
		assert_int_equal(chan_open_inplace(p.s, ct, ct_len, &got), LWC_OK);
		assert_int_equal(got, len);
		if (len)
			assert_memory_equal(ct + CHAN_PLAIN_OFF, plain, len);
		free(ct);
		/* in place both ways */
		memcpy(buf + CHAN_PLAIN_OFF, plain, len);
		assert_int_equal(chan_seal_inplace(p.c, buf, len), LWC_OK);
		assert_int_equal(chan_open_inplace(p.s, buf, len + CHAN_ABYTES, &got), LWC_OK);
		assert_int_equal(got, len);
		if (len)
			assert_memory_equal(buf + CHAN_PLAIN_OFF, plain, len);
		/* tampered: refused, the channel poisoned */
		memcpy(buf + CHAN_PLAIN_OFF, plain, len);
		assert_int_equal(chan_seal_inplace(p.s, buf, len), LWC_OK);
		buf[len / 2] ^= 0x20;
		assert_int_equal(chan_open_inplace(p.c, buf, len + CHAN_ABYTES, &got),
				 LWC_ERR_INTEGRITY);
		assert_int_equal(chan_get_state(p.c), CHAN_FAILED);
		pair_free(&p);
		free(buf);
		free(plain);
	}
}

/* A body of msg in mode on from (plaintext at CHAN_PLAIN_OFF, sealed in place). */
static uint8_t *mode_body(struct chan *from, const void *msg, size_t n, unsigned mode,
			  size_t *len)
{
	uint8_t *b = xmalloc(n + CHAN_ABYTES + CHAN_MODE_BYTES);

	memcpy(b + CHAN_PLAIN_OFF, msg, n);
	assert_int_equal(chan_seal_mode_inplace(from, b, n, mode), LWC_OK);
	*len = n + CHAN_ABYTES + CHAN_MODE_BYTES;
	return b;
}

/* Frames with a mode (the proxy-cloud channel): both modes round trip in
 * order on one stream; a clear frame carries its message as it was and
 * three places build the same body as one; any change to a clear frame
 * (a message byte, its tag, its MAC, its mode byte), a replay or a clear
 * frame out of order fails and poisons the channel; versions 1 and 2 do
 * not shake hands. */
static void test_modes(void **state)
{
	static const uint8_t msg[] = "blocks sealed under K_OPS, ids and versions";
	size_t n = sizeof(msg), len, len2, plen;
	struct pair p;
	uint8_t *b, *b2, head[CHAN_PLAIN_OFF], tail[CHAN_CLEAR_TAIL];
	unsigned mode;

	(void)state;
	pair_setup_v(&p, "", psk_a, 1);
	assert_true(chan_has_modes(p.c) && chan_has_modes(p.s));
	for (int round = 0; round < 4; round++) {
		unsigned want = round % 2 ? CHAN_MODE_CLEAR : CHAN_MODE_SEALED;

		b = mode_body(p.c, msg, n, want, &len);
		assert_int_equal(b[len - 1], want);
		/* a clear frame holds its message as it was; a sealed one does not */
		assert_int_equal(memcmp(b + CHAN_PLAIN_OFF, msg, n) == 0, want == CHAN_MODE_CLEAR);
		assert_int_equal(chan_open_mode_inplace(p.s, b, len, &plen, &mode), LWC_OK);
		assert_int_equal(mode, want);
		assert_int_equal(plen, n);
		assert_memory_equal(b + CHAN_PLAIN_OFF, msg, n);
		free(b);
	}
	/* chan_seal_clear around a message elsewhere: the same body */
	assert_int_equal(chan_seal_clear(p.s, msg, n, head, tail), LWC_OK);
	b = xmalloc(n + CHAN_ABYTES + CHAN_MODE_BYTES);
	memcpy(b, head, sizeof(head));
	memcpy(b + CHAN_PLAIN_OFF, msg, n);
	memcpy(b + CHAN_PLAIN_OFF + n, tail, sizeof(tail));
	assert_int_equal(chan_open_mode_inplace(p.c, b, n + CHAN_ABYTES + CHAN_MODE_BYTES,
						&plen, &mode), LWC_OK);
	assert_int_equal(mode, CHAN_MODE_CLEAR);
	free(b);
	/* a mode of no kind is refused, the channel left as it was */
	assert_int_equal(chan_seal_mode_inplace(p.c, (uint8_t[64]){ 0 }, 8, 7), LWC_ERR_ARG);
	b = mode_body(p.c, msg, n, CHAN_MODE_CLEAR, &len);
	assert_int_equal(chan_open_mode_inplace(p.s, b, len, &plen, &mode), LWC_OK);
	free(b);
	pair_free(&p);

	/* every single change to a clear frame, at each place, fails */
	{
		size_t at[] = { 0, CHAN_PLAIN_OFF, CHAN_PLAIN_OFF + 10, CHAN_PLAIN_OFF + n,
				CHAN_PLAIN_OFF + n + CHAN_ABYTES - 2, (size_t)-1 };

		for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
			pair_setup_v(&p, "", psk_a, 1);
			b = mode_body(p.c, msg, n, CHAN_MODE_CLEAR, &len);
			if (at[i] == (size_t)-1)
				b[len - 1] = CHAN_MODE_SEALED;  /* read as the other mode */
			else
				b[at[i]] ^= 0x20;
			assert_int_equal(chan_open_mode_inplace(p.s, b, len, &plen, &mode),
					 LWC_ERR_INTEGRITY);
			assert_int_equal(chan_get_state(p.s), CHAN_FAILED);
			free(b);
			pair_free(&p);
		}
	}
	/* a sealed frame read as a clear one; a mode byte of no mode; too short */
	pair_setup_v(&p, "", psk_a, 1);
	b = mode_body(p.c, msg, n, CHAN_MODE_SEALED, &len);
	b[len - 1] = CHAN_MODE_CLEAR;
	assert_int_equal(chan_open_mode_inplace(p.s, b, len, &plen, &mode), LWC_ERR_INTEGRITY);
	free(b);
	pair_free(&p);
	pair_setup_v(&p, "", psk_a, 1);
	b = mode_body(p.c, msg, n, CHAN_MODE_CLEAR, &len);
	b[len - 1] = 2;
	assert_int_equal(chan_open_mode_inplace(p.s, b, len, &plen, &mode), LWC_ERR_INTEGRITY);
	free(b);
	pair_free(&p);
	pair_setup_v(&p, "", psk_a, 1);
	assert_int_equal(chan_open_mode_inplace(p.s, (uint8_t[CHAN_ABYTES]){ 0 }, CHAN_ABYTES,
						&plen, &mode), LWC_ERR_INTEGRITY);
	pair_free(&p);

	/* replayed and reordered clear frames */
	pair_setup_v(&p, "", psk_a, 1);
	b = mode_body(p.c, msg, n, CHAN_MODE_CLEAR, &len);
	b2 = mode_body(p.c, msg, n, CHAN_MODE_CLEAR, &len2);
	assert_int_equal(chan_open_mode_inplace(p.s, b2, len2, &plen, &mode), LWC_ERR_INTEGRITY);
	free(b);
	free(b2);
	pair_free(&p);
	pair_setup_v(&p, "", psk_a, 1);
	b = mode_body(p.c, msg, n, CHAN_MODE_CLEAR, &len);
	b2 = xmalloc(len);
	memcpy(b2, b, len);
	assert_int_equal(chan_open_mode_inplace(p.s, b, len, &plen, &mode), LWC_OK);
	assert_int_equal(chan_open_mode_inplace(p.s, b2, len, &plen, &mode), LWC_ERR_INTEGRITY);
	free(b);
	free(b2);
	pair_free(&p);

	/* a channel of version 1 and one of version 2 do not meet, either way */
	for (int server_v2 = 0; server_v2 < 2; server_v2++) {
		struct chan *c = new_end(0), *s = new_end(1);
		uint8_t *hello;
		size_t hl;

		chan_use_modes(server_v2 ? s : c);
		assert_int_equal(chan_client_hello(c, "", &hello, &hl), LWC_OK);
		assert_int_equal(chan_server_hello(s, hello, hl), LWC_ERR_PROTO);
		free(hello);
		chan_free(c);
		chan_free(s);
	}
	/* a client of version 2 takes a reply of version 2 only */
	for (uint32_t v = 1; v <= 2; v++) {
		struct chan *c = new_end(0);
		uint8_t *hello, *reply, *auth = NULL;
		size_t hl, rl, al;
		char err[256] = "";

		chan_use_modes(c);
		assert_int_equal(chan_client_hello(c, "", &hello, &hl), LWC_OK);
		reply = reply_body(v, 32, crypto_secretstream_xchacha20poly1305_HEADERBYTES, &rl);
		assert_int_equal(chan_client_auth(c, psk_a, reply, rl, &auth, &al, err, sizeof(err)),
				 v == 2 ? LWC_OK : LWC_ERR_PROTO);
		free(auth);
		free(reply);
		free(hello);
		chan_free(c);
	}
	/* modes are not for a channel of version 1 */
	pair_setup(&p, "", psk_a);
	assert_false(chan_has_modes(p.c));
	b = xmalloc(n + CHAN_ABYTES + CHAN_MODE_BYTES);
	memcpy(b + CHAN_PLAIN_OFF, msg, n);
	assert_int_equal(chan_seal_mode_inplace(p.c, b, n, CHAN_MODE_SEALED), LWC_ERR_ARG);
	assert_int_equal(chan_seal_clear(p.c, msg, n, head, tail), LWC_ERR_ARG);
	free(b);
	pair_free(&p);
}

/* A READ answer of nb blocks of bl bytes, as the store packs it, at
 * CHAN_PLAIN_OFF of a buffer with room for a frame around it; *n: its size. */
static uint8_t *read_answer(size_t nb, size_t bl, size_t *n)
{
	uint64_t ids[8], vers[8];
	uint8_t *data[8], *b;
	size_t body;

	assert_true(nb <= 8);
	for (size_t i = 0; i < nb; i++) {
		ids[i] = 70000 - i;
		vers[i] = 9;
	}
	*n = cs_wire_read_answer_len(300, ids, vers, nb, bl, &body);
	b = xmalloc(CHAN_PLAIN_OFF + *n + CHAN_ABYTES + CHAN_MODE_BYTES);
	cs_wire_read_answer(b + CHAN_PLAIN_OFF, 300, ids, vers, nb, bl, body, data);
	for (size_t i = 0; i < nb; i++)
		memset(data[i], (int)(0x40 + i), bl);
	return b;
}

/* Version 3's skeleton frames (chan.h): a store's READ answer reaches the
 * proxy with its blocks as they were; a change to any byte outside the
 * blocks' data (the sequence number, a length, an id, a version, the MAC,
 * the mode byte) fails and poisons the channel, a change inside a block's
 * data does not (the proxy opens every block itself); only the server end
 * seals them and only the client end opens them; a message of another
 * shape is refused with the channel left as it was; versions 2 and 3. */
static void test_skeleton(void **state)
{
	struct pair p;
	uint8_t *b, *skel, head[CHAN_PLAIN_OFF], tail[CHAN_CLEAR_TAIL];
	size_t n, plen, skel_len, bl = 300;
	unsigned mode;

	(void)state;
	pair_setup_v(&p, "", psk_a, 2);
	assert_int_equal(chan_version(p.c), CHAN_VERSION_SKELETON);
	assert_int_equal(chan_version(p.s), CHAN_VERSION_SKELETON);
	for (int round = 0; round < 3; round++) {
		uint8_t *want;

		b = read_answer(3, bl, &n);
		want = xmalloc(n);
		memcpy(want, b + CHAN_PLAIN_OFF, n);
		assert_int_equal(chan_seal_mode_inplace(p.s, b, n, CHAN_MODE_SKELETON), LWC_OK);
		assert_int_equal(b[n + CHAN_ABYTES], CHAN_MODE_SKELETON);
		assert_memory_equal(b + CHAN_PLAIN_OFF, want, n);        /* in the clear */
		if (round == 1) {
			/* the last block's data changed on the way: delivered */
			b[CHAN_PLAIN_OFF + n - 5] ^= 0x10;
			want[n - 5] ^= 0x10;
		}
		assert_int_equal(chan_open_mode_inplace(p.c, b, n + CHAN_ABYTES + CHAN_MODE_BYTES,
							&plen, &mode), LWC_OK);
		assert_int_equal(mode, CHAN_MODE_SKELETON);
		assert_int_equal(plen, n);
		assert_memory_equal(b + CHAN_PLAIN_OFF, want, n);
		free(want);
		free(b);
	}
	/* a message of another shape: refused, nothing sent, the channel
	 * usable (the store then sends it clear) */
	b = xmalloc(64);
	memcpy(b + CHAN_PLAIN_OFF, "not a READ answer", 17);
	assert_int_equal(chan_seal_mode_inplace(p.s, b, 17, CHAN_MODE_SKELETON), LWC_ERR_PROTO);
	assert_int_equal(chan_get_state(p.s), CHAN_READY);
	assert_int_equal(chan_seal_mode_inplace(p.s, b, 17, CHAN_MODE_CLEAR), LWC_OK);
	assert_int_equal(chan_open_mode_inplace(p.c, b, 17 + CHAN_ABYTES + CHAN_MODE_BYTES,
						&plen, &mode), LWC_OK);
	assert_int_equal(mode, CHAN_MODE_CLEAR);
	free(b);
	/* the client end seals none */
	b = read_answer(1, bl, &n);
	assert_int_equal(chan_seal_mode_inplace(p.c, b, n, CHAN_MODE_SKELETON), LWC_ERR_ARG);
	free(b);
	pair_free(&p);

	/* each byte outside the data, and the MAC and mode byte: refused */
	b = read_answer(2, bl, &n);
	assert_int_equal(cs_wire_read_skeleton(b + CHAN_PLAIN_OFF, n, &skel, &skel_len), LWC_OK);
	assert_int_equal(skel_len, n - 2 * bl);
	free(skel);
	free(b);
	for (size_t at = 0; at < n + CHAN_ABYTES + CHAN_MODE_BYTES; at++) {
		struct cs_wire_iter it;
		struct cs_wire_block blk;
		int in_data = 0, edge = 0;

		/* is byte at (of the frame body) inside a block's data? */
		b = read_answer(2, bl, &n);
		for (cs_wire_iter_init(&it, b + CHAN_PLAIN_OFF, n); cs_wire_next(&it, &blk);) {
			size_t from = (size_t)(blk.data - b);

			if (at >= from && at < from + blk.len) {
				in_data = 1;
				edge = at == from || at == from + blk.len - 1;
			}
		}
		if (in_data && !edge && at % 37 != 0) {
			free(b);
			continue;          /* (inside the data: its edges and a sample) */
		}
		pair_setup_v(&p, "", psk_a, 2);
		assert_int_equal(chan_seal_mode_inplace(p.s, b, n, CHAN_MODE_SKELETON), LWC_OK);
		if (at == n + CHAN_ABYTES)
			b[at] = CHAN_MODE_CLEAR;          /* read as a clear frame */
		else
			b[at] ^= 0x04;
		assert_int_equal(chan_open_mode_inplace(p.c, b, n + CHAN_ABYTES + CHAN_MODE_BYTES,
							&plen, &mode),
				 in_data ? LWC_OK : LWC_ERR_INTEGRITY);
		assert_int_equal(chan_get_state(p.c), in_data ? CHAN_READY : CHAN_FAILED);
		free(b);
		pair_free(&p);
	}

	/* the server end opens none, even with a genuine MAC over the
	 * skeleton (a WRITE has the shape) */
	pair_setup_v(&p, "", psk_a, 2);
	b = read_answer(1, bl, &n);
	assert_int_equal(cs_wire_read_skeleton(b + CHAN_PLAIN_OFF, n, &skel, &skel_len), LWC_OK);
	assert_int_equal(chan_seal_clear(p.c, skel, skel_len, head, tail), LWC_OK);
	memcpy(b, head, sizeof(head));
	tail[CHAN_CLEAR_TAIL - 1] = CHAN_MODE_SKELETON;
	memcpy(b + CHAN_PLAIN_OFF + n, tail, sizeof(tail));
	assert_int_equal(chan_open_mode_inplace(p.s, b, n + CHAN_ABYTES + CHAN_MODE_BYTES,
						&plen, &mode), LWC_ERR_INTEGRITY);
	assert_int_equal(chan_get_state(p.s), CHAN_FAILED);
	free(skel);
	free(b);
	pair_free(&p);

	/* a skeleton frame on a channel of version 2: refused both ways */
	pair_setup_v(&p, "", psk_a, 1);
	b = read_answer(1, bl, &n);
	assert_int_equal(chan_seal_mode_inplace(p.s, b, n, CHAN_MODE_SKELETON), LWC_ERR_ARG);
	assert_int_equal(chan_seal_mode_inplace(p.s, b, n, CHAN_MODE_CLEAR), LWC_OK);
	b[n + CHAN_ABYTES] = CHAN_MODE_SKELETON;
	assert_int_equal(chan_open_mode_inplace(p.c, b, n + CHAN_ABYTES + CHAN_MODE_BYTES,
						&plen, &mode), LWC_ERR_INTEGRITY);
	free(b);
	pair_free(&p);

	/* a server of version 3 speaks 2 to a client of version 2; a client
	 * of version 3 does not meet a server of version 2 */
	for (int c3 = 0; c3 < 2; c3++) {
		struct chan *c = new_end(0), *sv = new_end(1);
		uint8_t *hello;
		size_t hl;

		chan_use_modes(c);
		chan_use_modes(sv);
		chan_use_skeleton(c3 ? c : sv, cs_wire_read_skeleton);
		assert_int_equal(chan_client_hello(c, "", &hello, &hl), LWC_OK);
		assert_int_equal(chan_server_hello(sv, hello, hl), c3 ? LWC_ERR_PROTO : LWC_OK);
		if (!c3)
			assert_int_equal(chan_version(sv), CHAN_VERSION_MODES);
		free(hello);
		chan_free(c);
		chan_free(sv);
	}
}

static void test_truncated(void **state)
{
	static const char msg[] = "some frame";
	const size_t len = sizeof(msg) - 1;
	const size_t cuts[] = { len + CHAN_ABYTES - 1, len, CHAN_ABYTES, CHAN_ABYTES - 1, 1, 0 };
	(void)state;

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct pair p;
		uint8_t *ct;
		size_t l;

		pair_setup(&p, "alice", psk_a);
		ct = seal(p.c, msg, len, &l);
		open_fails(p.s, ct, cuts[i]);
		free(ct);
		pair_free(&p);
	}
	/* one extra byte appended */
	{
		struct pair p;
		uint8_t *ct, *longer;
		size_t l;

		pair_setup(&p, "alice", psk_a);
		ct = seal(p.c, msg, len, &l);
		longer = xmalloc(l + 1);
		memcpy(longer, ct, l);
		longer[l] = 0;
		open_fails(p.s, longer, l + 1);
		free(ct);
		free(longer);
		pair_free(&p);
	}
}

static void test_cross_session(void **state)
{
	struct pair p1, p2;
	uint8_t *ct;
	size_t l;
	(void)state;

	pair_setup(&p1, "alice", psk_a);
	pair_setup(&p2, "alice", psk_a);
	/* fresh nonces from both ends */
	{
		Lwc__Hello *h1 = lwc__hello__unpack(NULL, p1.hello_len, p1.hello);
		Lwc__Hello *h2 = lwc__hello__unpack(NULL, p2.hello_len, p2.hello);
		Lwc__HelloReply *r1 = lwc__hello_reply__unpack(NULL, p1.reply_len, p1.reply);
		Lwc__HelloReply *r2 = lwc__hello_reply__unpack(NULL, p2.reply_len, p2.reply);
		assert_non_null(h1);
		assert_non_null(h2);
		assert_non_null(r1);
		assert_non_null(r2);
		assert_memory_not_equal(h1->nonce.data, h2->nonce.data, NONCE_BYTES);
		assert_memory_not_equal(r1->nonce.data, r2->nonce.data, NONCE_BYTES);
		lwc__hello__free_unpacked(h1, NULL);
		lwc__hello__free_unpacked(h2, NULL);
		lwc__hello_reply__free_unpacked(r1, NULL);
		lwc__hello_reply__free_unpacked(r2, NULL);
	}
	/* the first frame of session 1 in session 2, both directions */
	ct = seal(p1.c, "hello", 5, &l);
	open_fails(p2.s, ct, l);
	open_ok(p1.s, ct, l, "hello", 5);
	free(ct);
	ct = seal(p1.s, "hello", 5, &l);
	open_fails(p2.c, ct, l);
	free(ct);
	pair_free(&p2);

	/* a recorded Auth replayed to a new server session */
	{
		struct chan *s = new_end(1), *c = new_end(0);
		uint8_t *hello, *reply, *out = NULL;
		size_t hello_len, reply_len, out_len;

		assert_int_equal(chan_client_hello(c, "alice", &hello, &hello_len), LWC_OK);
		assert_int_equal(chan_server_hello(s, hello, hello_len), LWC_OK);
		assert_int_equal(chan_server_reply(s, psk_a, &reply, &reply_len), LWC_OK);
		assert_int_equal(chan_server_auth(s, p1.auth, p1.auth_len, &out, &out_len),
				 LWC_ERR_AUTH);
		assert_null(out);
		free(hello);
		free(reply);
		chan_free(s);
		chan_free(c);
	}
	/* a recorded server proof replayed to a new client session */
	{
		struct chan *s = new_end(1), *c = new_end(0);
		uint8_t *hello, *reply, *auth;
		size_t hello_len, reply_len, auth_len;
		char err[256];

		assert_int_equal(chan_client_hello(c, "alice", &hello, &hello_len), LWC_OK);
		assert_int_equal(chan_server_hello(s, hello, hello_len), LWC_OK);
		assert_int_equal(chan_server_reply(s, psk_a, &reply, &reply_len), LWC_OK);
		assert_int_equal(chan_client_auth(c, psk_a, reply, reply_len, &auth, &auth_len,
						  err, sizeof(err)), LWC_OK);
		assert_int_equal(chan_client_finish(c, p1.proof, p1.proof_len, err, sizeof(err)),
				 LWC_ERR_AUTH);
		/* and a recorded HelloReply: the keys differ, the proof cannot match */
		free(hello);
		free(reply);
		free(auth);
		chan_free(s);
		chan_free(c);
	}
	{
		struct chan *c = new_end(0);
		uint8_t *hello, *auth;
		size_t hello_len, auth_len;
		char err[256];

		assert_int_equal(chan_client_hello(c, "alice", &hello, &hello_len), LWC_OK);
		assert_int_equal(chan_client_auth(c, psk_a, p1.reply, p1.reply_len, &auth,
						  &auth_len, err, sizeof(err)), LWC_OK);
		assert_int_equal(chan_client_finish(c, p1.proof, p1.proof_len, err, sizeof(err)),
				 LWC_ERR_AUTH);
		free(hello);
		free(auth);
		chan_free(c);
	}
	pair_free(&p1);
}

/* ------------------------------------------------------ malformed bodies */

static void expect_hello_rejected(const uint8_t *body, size_t len)
{
	struct chan *s = new_end(1);
	uint8_t *out = NULL;
	size_t out_len;

	assert_int_equal(chan_server_hello(s, body, len), LWC_ERR_PROTO);
	assert_int_equal(chan_get_state(s), CHAN_FAILED);
	assert_int_equal(chan_server_reply(s, psk_a, &out, &out_len), LWC_ERR_ARG);
	assert_null(out);
	chan_free(s);
}

static void test_bad_hello(void **state)
{
	uint8_t buf[256], *b;
	size_t len;
	char id[CHAN_KEY_ID_MAX + 2];
	static const char *const bad_ids[] = {
		"a\nb", "\x01", "tab\there", "del\x7f", "\x1b[31mred", "cr\r",
	};
	(void)state;

	/* random bytes of many lengths */
	for (uint32_t i = 0; i < 300; i++) {
		size_t n = 1 + i % 200;
		det_bytes(buf, n, i);
		expect_hello_rejected(buf, n);
	}
	/* empty: every field at its default (version 0) */
	expect_hello_rejected(buf, 0);
	/* all 0xff (an endless varint) */
	memset(buf, 0xff, 64);
	expect_hello_rejected(buf, 64);
	/* a good Hello cut short (fields are packed in order, so the cut that
	 * drops exactly the key id field leaves a valid Hello with key id "") */
	b = hello_body(1, 32, "alice", &len);
	for (size_t cut = 1; cut < len; cut++) {
		if (cut == len - (2 + strlen("alice"))) {
			struct chan *s = new_end(1);
			assert_int_equal(chan_server_hello(s, b, cut), LWC_OK);
			assert_string_equal(chan_key_id(s), "");
			chan_free(s);
			continue;
		}
		expect_hello_rejected(b, cut);
	}
	free(b);
	/* wrong nonce lengths */
	{
		const size_t lens[] = { 0, 1, 31, 33, 64 };
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			b = hello_body(1, lens[i], "alice", &len);
			expect_hello_rejected(b, len);
			free(b);
		}
	}
	/* other versions */
	{
		const uint32_t vs[] = { 0, 2, 0xffffffffu };
		for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
			b = hello_body(vs[i], 32, "alice", &len);
			expect_hello_rejected(b, len);
			free(b);
		}
	}
	/* key id one byte too long */
	memset(id, 'x', CHAN_KEY_ID_MAX + 1);
	id[CHAN_KEY_ID_MAX + 1] = '\0';
	b = hello_body(1, 32, id, &len);
	expect_hello_rejected(b, len);
	free(b);
	/* key ids with control characters */
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		b = hello_body(1, 32, bad_ids[i], &len);
		expect_hello_rejected(b, len);
		free(b);
	}
	/* control: the builder itself makes acceptable Hellos */
	{
		struct chan *s = new_end(1);
		b = hello_body(1, 32, "alice", &len);
		assert_int_equal(chan_server_hello(s, b, len), LWC_OK);
		assert_string_equal(chan_key_id(s), "alice");
		free(b);
		chan_free(s);
	}
}

static void expect_reply_rejected(const uint8_t *body, size_t len)
{
	struct chan *c = new_end(0);
	uint8_t *hello, *out = NULL;
	size_t hello_len, out_len;
	char err[256] = "";

	assert_int_equal(chan_client_hello(c, "alice", &hello, &hello_len), LWC_OK);
	assert_int_equal(chan_client_auth(c, psk_a, body, len, &out, &out_len, err, sizeof(err)),
			 LWC_ERR_PROTO);
	assert_null(out);
	assert_non_null(strstr(err, "malformed"));
	assert_int_equal(chan_get_state(c), CHAN_FAILED);
	assert_int_equal(chan_client_finish(c, body, len, err, sizeof(err)), LWC_ERR_ARG);
	free(hello);
	chan_free(c);
}

static void test_bad_reply(void **state)
{
	uint8_t buf[256], *b;
	size_t len;
	(void)state;

	for (uint32_t i = 0; i < 300; i++) {
		size_t n = 1 + i % 200;
		det_bytes(buf, n, 1000 + i);
		expect_reply_rejected(buf, n);
	}
	expect_reply_rejected(buf, 0);
	memset(buf, 0xff, 64);
	expect_reply_rejected(buf, 64);
	b = reply_body(2, 32, HDR_BYTES, &len);
	expect_reply_rejected(b, len);
	free(b);
	b = reply_body(0, 32, HDR_BYTES, &len);
	expect_reply_rejected(b, len);
	free(b);
	{
		const size_t nl[] = { 0, 31, 33 };
		for (size_t i = 0; i < 3; i++) {
			b = reply_body(1, nl[i], HDR_BYTES, &len);
			expect_reply_rejected(b, len);
			free(b);
		}
	}
	{
		const size_t hl[] = { 0, HDR_BYTES - 1, HDR_BYTES + 1 };
		for (size_t i = 0; i < 3; i++) {
			b = reply_body(1, 32, hl[i], &len);
			expect_reply_rejected(b, len);
			free(b);
		}
	}
	/* a good reply cut short */
	b = reply_body(1, 32, HDR_BYTES, &len);
	for (size_t cut = 1; cut < len; cut++)
		expect_reply_rejected(b, cut);
	free(b);
	/* an Error whose code is not an lwc code is still malformed */
	{
		uint8_t *eb;
		size_t el;
		assert_int_equal(chan_error_body(5, "positive", &eb, &el), LWC_OK);
		expect_reply_rejected(eb, el);
		free(eb);
		assert_int_equal(chan_error_body(-1000, "too small", &eb, &el), LWC_OK);
		expect_reply_rejected(eb, el);
		free(eb);
	}
}

static void expect_auth_result(const uint8_t *body, size_t len, int want)
{
	struct chan *c = new_end(0), *s = new_end(1);
	uint8_t *hello, *reply, *out = NULL;
	size_t hello_len, reply_len, out_len;

	assert_int_equal(chan_client_hello(c, "alice", &hello, &hello_len), LWC_OK);
	assert_int_equal(chan_server_hello(s, hello, hello_len), LWC_OK);
	assert_int_equal(chan_server_reply(s, psk_a, &reply, &reply_len), LWC_OK);
	assert_int_equal(chan_server_auth(s, body, len, &out, &out_len), want);
	assert_null(out);
	assert_int_equal(chan_get_state(s), CHAN_FAILED);
	free(hello);
	free(reply);
	chan_free(c);
	chan_free(s);
}

static void test_bad_auth(void **state)
{
	uint8_t buf[256], *b;
	uint8_t header[HDR_BYTES], proof[64];
	const size_t proof_len = sizeof("LWC-AUTH-CLIENT-1") + CHAN_ABYTES;
	size_t len;
	(void)state;

	memset(header, 0x11, sizeof(header));
	memset(proof, 0x22, sizeof(proof));
	for (uint32_t i = 0; i < 300; i++) {
		size_t n = 1 + i % 200;
		det_bytes(buf, n, 2000 + i);
		expect_auth_result(buf, n, LWC_ERR_PROTO);
	}
	expect_auth_result(buf, 0, LWC_ERR_PROTO);
	memset(buf, 0xff, 64);
	expect_auth_result(buf, 64, LWC_ERR_PROTO);
	/* wrong header and proof sizes */
	{
		const size_t hl[] = { 0, HDR_BYTES - 1, HDR_BYTES + 1 };
		for (size_t i = 0; i < 3; i++) {
			b = auth_body(proof, hl[i], proof, proof_len, &len);
			expect_auth_result(b, len, LWC_ERR_PROTO);
			free(b);
		}
	}
	{
		const size_t pl[] = { 0, CHAN_ABYTES, proof_len - 1, proof_len + 1 };
		for (size_t i = 0; i < 4; i++) {
			b = auth_body(header, HDR_BYTES, proof, pl[i], &len);
			expect_auth_result(b, len, LWC_ERR_PROTO);
			free(b);
		}
	}
	/* well-formed but forged: an authentication failure, not a format one */
	b = auth_body(header, HDR_BYTES, proof, proof_len, &len);
	expect_auth_result(b, len, LWC_ERR_AUTH);
	for (size_t cut = 1; cut < len; cut++)
		expect_auth_result(b, cut, LWC_ERR_PROTO);
	free(b);
}

/* ------------------------------------------------------------ wrong state */

static void test_wrong_state(void **state)
{
	struct chan *c = new_end(0), *s = new_end(1);
	uint8_t *hello, *reply, *auth, *proof, *out = NULL, buf[64];
	size_t hello_len, reply_len, auth_len, proof_len, out_len;
	char err[256];
	(void)state;

	memset(buf, 0, sizeof(buf));
	/* nothing sent yet */
	assert_int_equal(chan_seal(c, buf, 1, buf), LWC_ERR_ARG);
	assert_int_equal(chan_open(c, buf, sizeof(buf), buf, &out_len), LWC_ERR_ARG);
	assert_int_equal(chan_seal(s, buf, 1, buf), LWC_ERR_ARG);
	assert_int_equal(chan_client_auth(c, psk_a, buf, 8, &out, &out_len, err, sizeof(err)),
			 LWC_ERR_ARG);
	assert_int_equal(chan_client_finish(c, buf, sizeof(buf), err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(chan_server_reply(s, psk_a, &out, &out_len), LWC_ERR_ARG);
	assert_int_equal(chan_server_auth(s, buf, 8, &out, &out_len), LWC_ERR_ARG);
	assert_null(out);
	/* the wrong role */
	assert_int_equal(chan_client_hello(s, "alice", &out, &out_len), LWC_ERR_ARG);
	assert_int_equal(chan_server_hello(c, buf, 8), LWC_ERR_ARG);
	assert_null(out);
	/* bad key ids are refused before anything is sent */
	assert_int_equal(chan_client_hello(c, NULL, &out, &out_len), LWC_ERR_ARG);
	assert_int_equal(chan_client_hello(c, "a\nb", &out, &out_len), LWC_ERR_ARG);
	{
		char id[CHAN_KEY_ID_MAX + 2];
		memset(id, 'x', sizeof(id) - 1);
		id[sizeof(id) - 1] = '\0';
		assert_int_equal(chan_client_hello(c, id, &out, &out_len), LWC_ERR_ARG);
	}
	assert_null(out);
	/* none of this disturbed the ends */
	assert_int_equal(chan_get_state(c), CHAN_NEW);
	assert_int_equal(chan_get_state(s), CHAN_NEW);

	assert_int_equal(chan_client_hello(c, "alice", &hello, &hello_len), LWC_OK);
	assert_int_equal(chan_client_hello(c, "alice", &out, &out_len), LWC_ERR_ARG);
	assert_int_equal(chan_client_finish(c, buf, sizeof(buf), err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(chan_server_hello(s, hello, hello_len), LWC_OK);
	assert_int_equal(chan_server_hello(s, hello, hello_len), LWC_ERR_ARG);
	assert_int_equal(chan_server_auth(s, buf, 8, &out, &out_len), LWC_ERR_ARG);
	assert_int_equal(chan_server_reply(s, psk_a, &reply, &reply_len), LWC_OK);
	assert_int_equal(chan_server_reply(s, psk_a, &out, &out_len), LWC_ERR_ARG);
	assert_int_equal(chan_client_auth(c, psk_a, reply, reply_len, &auth, &auth_len,
					  err, sizeof(err)), LWC_OK);
	assert_int_equal(chan_client_auth(c, psk_a, reply, reply_len, &out, &out_len,
					  err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(chan_seal(c, buf, 1, buf), LWC_ERR_ARG);
	assert_int_equal(chan_server_auth(s, auth, auth_len, &proof, &proof_len), LWC_OK);
	assert_int_equal(chan_server_auth(s, auth, auth_len, &out, &out_len), LWC_ERR_ARG);
	assert_int_equal(chan_client_finish(c, proof, proof_len, err, sizeof(err)), LWC_OK);
	assert_int_equal(chan_client_finish(c, proof, proof_len, err, sizeof(err)), LWC_ERR_ARG);
	assert_null(out);
	/* the wrong-state calls did not break the channel */
	assert_int_equal(chan_get_state(c), CHAN_READY);
	assert_int_equal(chan_get_state(s), CHAN_READY);
	{
		uint8_t *ct;
		size_t l;
		ct = seal(c, "still fine", 10, &l);
		open_ok(s, ct, l, "still fine", 10);
		free(ct);
	}
	free(hello);
	free(reply);
	free(auth);
	free(proof);
	chan_free(c);
	chan_free(s);
	chan_free(NULL);
}

/* ------------------------------------------------------ Error and frames */

static void test_error_body(void **state)
{
	uint8_t *b;
	size_t len;
	Lwc__Error *e;
	(void)state;

	assert_int_equal(chan_error_body(LWC_ERR_AUTH, "no such key: mallory", &b, &len), LWC_OK);
	assert_true(len > 0 && len <= WIRE_PREAUTH_MAX);
	e = lwc__error__unpack(NULL, len, b);
	assert_non_null(e);
	assert_int_equal(e->code, LWC_ERR_AUTH);
	assert_string_equal(e->message, "no such key: mallory");
	lwc__error__free_unpacked(e, NULL);
	free(b);

	/* no message: the code's standard text */
	assert_int_equal(chan_error_body(LWC_ERR_BUSY, NULL, &b, &len), LWC_OK);
	e = lwc__error__unpack(NULL, len, b);
	assert_non_null(e);
	assert_int_equal(e->code, LWC_ERR_BUSY);
	assert_string_equal(e->message, lwc_strerror(LWC_ERR_BUSY));
	lwc__error__free_unpacked(e, NULL);

	/* a client waiting for the HelloReply gets the code and the text */
	{
		struct chan *c = new_end(0);
		uint8_t *hello, *out = NULL;
		size_t hello_len, out_len;
		char err[256] = "";

		assert_int_equal(chan_client_hello(c, "", &hello, &hello_len), LWC_OK);
		assert_int_equal(chan_client_auth(c, psk_a, b, len, &out, &out_len,
						  err, sizeof(err)), LWC_ERR_BUSY);
		assert_string_equal(err, lwc_strerror(LWC_ERR_BUSY));
		assert_null(out);
		assert_int_equal(chan_get_state(c), CHAN_FAILED);
		free(hello);
		chan_free(c);
	}
	free(b);
	/* every code survives the round trip */
	for (int code = LWC_ERR_MIN_; code < 0; code++) {
		assert_int_equal(chan_error_body(code, "m", &b, &len), LWC_OK);
		e = lwc__error__unpack(NULL, len, b);
		assert_non_null(e);
		assert_int_equal(e->code, code);
		assert_string_equal(e->message, "m");
		lwc__error__free_unpacked(e, NULL);
		free(b);
	}
}

static void test_wire_frame_len(void **state)
{
	uint8_t hdr[WIRE_HDR_BYTES];
	uint32_t len;
	const uint32_t maxes[] = { 1, WIRE_PREAUTH_MAX, WIRE_FRAME_MAX, 0xfffffffeu };
	(void)state;

	for (size_t i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		uint32_t max = maxes[i];

		wire_put_u32(hdr, 0);
		len = 777;
		assert_int_equal(wire_frame_len(hdr, max, &len), LWC_ERR_PROTO);
		assert_int_equal(len, 777);       /* untouched on error */
		wire_put_u32(hdr, max + 1);
		assert_int_equal(wire_frame_len(hdr, max, &len), LWC_ERR_TOO_BIG);
		assert_int_equal(len, 777);
		wire_put_u32(hdr, 0xffffffffu);
		assert_int_equal(wire_frame_len(hdr, max, &len), LWC_ERR_TOO_BIG);
		wire_put_u32(hdr, max);
		assert_int_equal(wire_frame_len(hdr, max, &len), LWC_OK);
		assert_int_equal(len, max);
		wire_put_u32(hdr, 1);
		assert_int_equal(wire_frame_len(hdr, max, &len), LWC_OK);
		assert_int_equal(len, 1);
	}
	/* big-endian on the wire */
	hdr[0] = 0x00;
	hdr[1] = 0x00;
	hdr[2] = 0x01;
	hdr[3] = 0x02;
	assert_int_equal(wire_frame_len(hdr, WIRE_PREAUTH_MAX, &len), LWC_OK);
	assert_int_equal(len, 0x102);
	hdr[0] = 0x01;
	assert_int_equal(wire_frame_len(hdr, WIRE_PREAUTH_MAX, &len), LWC_ERR_TOO_BIG);
	wire_put_u32(hdr, 0x01020304u);
	assert_int_equal(hdr[0], 1);
	assert_int_equal(hdr[3], 4);
	assert_int_equal(wire_get_u32(hdr), 0x01020304u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_and_traffic),
		cmocka_unit_test(test_wrong_psk_client),
		cmocka_unit_test(test_wrong_key_server),
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_inplace),
		cmocka_unit_test(test_reorder),
		cmocka_unit_test(test_reflection),
		cmocka_unit_test(test_bit_flip),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_cross_session),
		cmocka_unit_test(test_bad_hello),
		cmocka_unit_test(test_bad_reply),
		cmocka_unit_test(test_bad_auth),
		cmocka_unit_test(test_wrong_state),
		cmocka_unit_test(test_error_body),
		cmocka_unit_test(test_wire_frame_len),
		cmocka_unit_test(test_skeleton),
	};

	if (sodium_init() < 0 || cry_init() != LWC_OK) {
		fprintf(stderr, "libsodium failed to initialise\n");
		return 1;
	}
	randombytes_buf(psk_a, sizeof(psk_a));
	randombytes_buf(psk_b, sizeof(psk_b));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
