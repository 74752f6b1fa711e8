/*
 * chan.c - the authenticated channel; see chan.h for the protocol.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "chan.h"
#include "lwc.pb-c.h"
#include "wire.h"

#define CHAN_NONCE_BYTES 32u
#define CHAN_LABEL "LWC-CHAN-1"
#define CHAN_LABEL_MODES "LWC-CHAN-2"
#define CHAN_LABEL_SKELETON "LWC-CHAN-3"
static const uint8_t proof_client[] = "LWC-AUTH-CLIENT-1";
static const uint8_t proof_server[] = "LWC-AUTH-SERVER-1";

/* Allocated with sodium_malloc: it holds the PSK and both stream states. */
struct chan {
	int is_server;
	unsigned version;                /* CHAN_VERSION, _MODES or _SKELETON    */
	chan_skeleton_fn skel;           /* version 3: a READ answer's skeleton  */
	_Atomic enum chan_state state;   /* read by a worker while another thread opens */
	char key_id[CHAN_KEY_ID_MAX + 1];
	uint8_t nonce_c[CHAN_NONCE_BYTES];
	uint8_t nonce_s[CHAN_NONCE_BYTES];
	uint8_t k_c2s[crypto_secretstream_xchacha20poly1305_KEYBYTES];
	uint8_t k_s2c[crypto_secretstream_xchacha20poly1305_KEYBYTES];
	crypto_secretstream_xchacha20poly1305_state push;  /* our sending stream  */
	crypto_secretstream_xchacha20poly1305_state pull;  /* peer's stream       */
};

int chan_new(struct chan **out, int is_server)
{
	struct chan *c = sodium_malloc(sizeof(*c));

	*out = NULL;
	if (c == NULL)
		return LWC_ERR_NOMEM;
	memset(c, 0, sizeof(*c));
	c->is_server = is_server;
	c->version = CHAN_VERSION;
	c->state = CHAN_NEW;
	*out = c;
	return LWC_OK;
}

void chan_free(struct chan *c)
{
	if (c)
		sodium_free(c);   /* wipes the whole structure */
}

enum chan_state chan_get_state(const struct chan *c)
{
	return c->state;
}

const char *chan_key_id(const struct chan *c)
{
	return c->key_id;
}

static int fail(struct chan *c, int rc)
{
	c->state = CHAN_FAILED;
	sodium_memzero(c->k_c2s, sizeof(c->k_c2s));
	sodium_memzero(c->k_s2c, sizeof(c->k_s2c));
	return rc;
}

static int pack(const ProtobufCMessage *m, uint8_t **out, size_t *out_len)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(n ? n : 1);

	if (buf == NULL)
		return LWC_ERR_NOMEM;
	protobuf_c_message_pack(m, buf);
	*out = buf;
	*out_len = n;
	return LWC_OK;
}

/* Session keys from the PSK, the key id and both nonces. */
static int derive(struct chan *c, const uint8_t psk[32])
{
	crypto_generichash_state st;
	uint8_t k[64];
	uint8_t idlen = (uint8_t)strlen(c->key_id);
	/* the version in the keys too: ends of two versions derive different
	 * keys, so no frame crosses between them even past the Hello's check */
	const char *label = c->version == CHAN_VERSION_SKELETON ? CHAN_LABEL_SKELETON :
			    c->version == CHAN_VERSION_MODES ? CHAN_LABEL_MODES : CHAN_LABEL;

	if (crypto_generichash_init(&st, psk, 32, sizeof(k)) != 0)
		return LWC_ERR_CRYPTO;
	crypto_generichash_update(&st, (const uint8_t *)label, strlen(label));
	crypto_generichash_update(&st, &idlen, 1);
	crypto_generichash_update(&st, (const uint8_t *)c->key_id, idlen);
	crypto_generichash_update(&st, c->nonce_c, sizeof(c->nonce_c));
	crypto_generichash_update(&st, c->nonce_s, sizeof(c->nonce_s));
	crypto_generichash_final(&st, k, sizeof(k));
	memcpy(c->k_c2s, k, 32);
	memcpy(c->k_s2c, k + 32, 32);
	sodium_memzero(k, sizeof(k));
	sodium_memzero(&st, sizeof(st));
	return LWC_OK;
}

static int key_id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n > CHAN_KEY_ID_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)id[i] < 0x20 || id[i] == 0x7f)
			return 0;
	return 1;
}

int chan_client_hello(struct chan *c, const char *key_id, uint8_t **out, size_t *out_len)
{
	Lwc__Hello h = LWC__HELLO__INIT;

	if (c->is_server || c->state != CHAN_NEW || key_id == NULL || !key_id_ok(key_id))
		return LWC_ERR_ARG;
	strcpy(c->key_id, key_id);
	randombytes_buf(c->nonce_c, sizeof(c->nonce_c));
	h.version = c->version;
	h.nonce.data = c->nonce_c;
	h.nonce.len = sizeof(c->nonce_c);
	h.key_id = c->key_id;
	c->state = CHAN_HELLO_SENT;
	return pack(&h.base, out, out_len);
}

/* If body is a plaintext Error, copy it out and return its code. */
static int plain_error(const uint8_t *body, size_t len, char *err, size_t errlen)
{
	Lwc__Error *e = lwc__error__unpack(NULL, len, body);
	int code;

	if (e == NULL)
		return LWC_OK;
	code = e->code;
	if (code >= 0 || code < LWC_ERR_MIN_ || e->message == NULL || e->message[0] == '\0') {
		lwc__error__free_unpacked(e, NULL);
		return LWC_OK;
	}
	lwc_errf(err, errlen, "%s", e->message);
	lwc__error__free_unpacked(e, NULL);
	return code;
}

int chan_client_auth(struct chan *c, const uint8_t psk[32],
		     const uint8_t *reply, size_t reply_len,
		     uint8_t **out, size_t *out_len, char *err, size_t errlen)
{
	Lwc__HelloReply *r;
	Lwc__Auth a = LWC__AUTH__INIT;
	uint8_t header[crypto_secretstream_xchacha20poly1305_HEADERBYTES];
	uint8_t proof[sizeof(proof_client) + CHAN_ABYTES];
	int rc;

	if (c->is_server || c->state != CHAN_HELLO_SENT)
		return LWC_ERR_ARG;
	r = lwc__hello_reply__unpack(NULL, reply_len, reply);
	if (r == NULL || r->version != c->version || r->nonce.len != CHAN_NONCE_BYTES ||
	    r->header.len != crypto_secretstream_xchacha20poly1305_HEADERBYTES) {
		if (r)
			lwc__hello_reply__free_unpacked(r, NULL);
		rc = plain_error(reply, reply_len, err, errlen);
		if (rc == LWC_OK) {
			lwc_errf(err, errlen, "malformed reply from server during channel set-up");
			rc = LWC_ERR_PROTO;
		}
		return fail(c, rc);
	}
	memcpy(c->nonce_s, r->nonce.data, CHAN_NONCE_BYTES);
	if ((rc = derive(c, psk)) != LWC_OK ||
	    crypto_secretstream_xchacha20poly1305_init_pull(&c->pull, r->header.data,
							    c->k_s2c) != 0 ||
	    crypto_secretstream_xchacha20poly1305_init_push(&c->push, header, c->k_c2s) != 0) {
		lwc__hello_reply__free_unpacked(r, NULL);
		return fail(c, rc != LWC_OK ? rc : LWC_ERR_CRYPTO);
	}
	lwc__hello_reply__free_unpacked(r, NULL);
	crypto_secretstream_xchacha20poly1305_push(&c->push, proof, NULL, proof_client,
						   sizeof(proof_client), NULL, 0, 0);
	a.header.data = header;
	a.header.len = sizeof(header);
	a.proof.data = proof;
	a.proof.len = sizeof(proof);
	c->state = CHAN_AUTH_SENT;
	return pack(&a.base, out, out_len);
}

int chan_client_finish(struct chan *c, const uint8_t *body, size_t len,
		       char *err, size_t errlen)
{
	uint8_t plain[WIRE_PREAUTH_MAX];
	size_t plain_len;
	int rc;

	if (c->is_server || c->state != CHAN_AUTH_SENT)
		return LWC_ERR_ARG;
	if (len > CHAN_ABYTES && len - CHAN_ABYTES <= sizeof(plain)) {
		c->state = CHAN_READY;
		rc = chan_open(c, body, len, plain, &plain_len);
		if (rc == LWC_OK) {
			if (plain_len == sizeof(proof_server) &&
			    memcmp(plain, proof_server, plain_len) == 0)
				return LWC_OK;
			/* an encrypted Error (e.g. the key was revoked meanwhile) */
			rc = plain_error(plain, plain_len, err, errlen);
			return fail(c, rc != LWC_OK ? rc : LWC_ERR_PROTO);
		}
	}
	c->state = CHAN_AUTH_SENT;
	rc = plain_error(body, len, err, errlen);
	if (rc == LWC_OK) {
		lwc_errf(err, errlen, "the server did not prove it holds the key");
		rc = LWC_ERR_AUTH;
	}
	return fail(c, rc);
}

int chan_server_hello(struct chan *c, const uint8_t *body, size_t len)
{
	Lwc__Hello *h;

	if (!c->is_server || c->state != CHAN_NEW)
		return LWC_ERR_ARG;
	h = lwc__hello__unpack(NULL, len, body);
	if (h == NULL)
		return fail(c, LWC_ERR_PROTO);
	/* a server of version 3 also speaks version 2 (a proxy not yet
	 * upgraded): the client's version is the channel's */
	if ((h->version != c->version &&
	     !(c->version == CHAN_VERSION_SKELETON && h->version == CHAN_VERSION_MODES)) ||
	    h->nonce.len != CHAN_NONCE_BYTES || h->key_id == NULL || !key_id_ok(h->key_id)) {
		lwc__hello__free_unpacked(h, NULL);
		return fail(c, LWC_ERR_PROTO);
	}
	c->version = h->version;
	memcpy(c->nonce_c, h->nonce.data, CHAN_NONCE_BYTES);
	strcpy(c->key_id, h->key_id);
	lwc__hello__free_unpacked(h, NULL);
	c->state = CHAN_HELLO_RCVD;
	return LWC_OK;
}

int chan_server_reply(struct chan *c, const uint8_t psk[32], uint8_t **out, size_t *out_len)
{
	Lwc__HelloReply r = LWC__HELLO_REPLY__INIT;
	uint8_t header[crypto_secretstream_xchacha20poly1305_HEADERBYTES];
	int rc;

	if (!c->is_server || c->state != CHAN_HELLO_RCVD)
		return LWC_ERR_ARG;
	randombytes_buf(c->nonce_s, sizeof(c->nonce_s));
	if ((rc = derive(c, psk)) != LWC_OK)
		return fail(c, rc);
	if (crypto_secretstream_xchacha20poly1305_init_push(&c->push, header, c->k_s2c) != 0)
		return fail(c, LWC_ERR_CRYPTO);
	r.version = c->version;
	r.nonce.data = c->nonce_s;
	r.nonce.len = sizeof(c->nonce_s);
	r.header.data = header;
	r.header.len = sizeof(header);
	c->state = CHAN_REPLY_SENT;
	return pack(&r.base, out, out_len);
}

int chan_server_auth(struct chan *c, const uint8_t *body, size_t len,
		     uint8_t **out, size_t *out_len)
{
	Lwc__Auth *a;
	uint8_t plain[sizeof(proof_client)];
	unsigned long long plain_len;
	uint8_t tag;
	uint8_t *reply;
	int ok;

	if (!c->is_server || c->state != CHAN_REPLY_SENT)
		return LWC_ERR_ARG;
	a = lwc__auth__unpack(NULL, len, body);
	if (a == NULL)
		return fail(c, LWC_ERR_PROTO);
	/* a header or proof of the wrong size is a malformed message, not a key
	 * mismatch: LWC_ERR_AUTH is reserved for "does not hold the PSK" */
	if (a->header.len != crypto_secretstream_xchacha20poly1305_HEADERBYTES ||
	    a->proof.len != sizeof(proof_client) + CHAN_ABYTES) {
		lwc__auth__free_unpacked(a, NULL);
		return fail(c, LWC_ERR_PROTO);
	}
	ok = crypto_secretstream_xchacha20poly1305_init_pull(&c->pull, a->header.data,
							     c->k_c2s) == 0 &&
	     crypto_secretstream_xchacha20poly1305_pull(&c->pull, plain, &plain_len, &tag,
							a->proof.data, a->proof.len,
							NULL, 0) == 0 &&
	     plain_len == sizeof(proof_client) &&
	     memcmp(plain, proof_client, sizeof(plain)) == 0 &&
	     tag == crypto_secretstream_xchacha20poly1305_TAG_MESSAGE;
	lwc__auth__free_unpacked(a, NULL);
	if (!ok)
		return fail(c, LWC_ERR_AUTH);
	reply = malloc(sizeof(proof_server) + CHAN_ABYTES);
	if (reply == NULL)
		return fail(c, LWC_ERR_NOMEM);
	crypto_secretstream_xchacha20poly1305_push(&c->push, reply, NULL, proof_server,
						   sizeof(proof_server), NULL, 0, 0);
	c->state = CHAN_READY;
	*out = reply;
	*out_len = sizeof(proof_server) + CHAN_ABYTES;
	return LWC_OK;
}

int chan_seal(struct chan *c, const uint8_t *plain, size_t plain_len, uint8_t *out)
{
	if (c->state != CHAN_READY)
		return LWC_ERR_ARG;
	if (crypto_secretstream_xchacha20poly1305_push(&c->push, out, NULL, plain, plain_len,
						       NULL, 0, 0) != 0)
		return fail(c, LWC_ERR_CRYPTO);
	return LWC_OK;
}

int chan_open(struct chan *c, const uint8_t *in, size_t in_len, uint8_t *out, size_t *out_len)
{
	unsigned long long n;
	uint8_t tag;

	if (c->state != CHAN_READY)
		return LWC_ERR_ARG;
	if (in_len < CHAN_ABYTES ||
	    crypto_secretstream_xchacha20poly1305_pull(&c->pull, out, &n, &tag, in, in_len,
						       NULL, 0) != 0 ||
	    tag != crypto_secretstream_xchacha20poly1305_TAG_MESSAGE)
		return fail(c, LWC_ERR_INTEGRITY);
	*out_len = (size_t)n;
	return LWC_OK;
}

/* libsodium's secretstream writes the ciphertext from out + 1 and reads the
 * plaintext with one pass of ChaCha20 (xor, byte for byte in order), the
 * MAC over the ciphertext computed after it on push and before it on pull:
 * with the plaintext at exactly out + 1 the two coincide (test_chan checks
 * it against the two-buffer functions). */
int chan_seal_inplace(struct chan *c, uint8_t *buf, size_t plain_len)
{
	return chan_seal(c, buf + CHAN_PLAIN_OFF, plain_len, buf);
}

int chan_open_inplace(struct chan *c, uint8_t *buf, size_t len, size_t *plain_len)
{
	return chan_open(c, buf, len, buf + CHAN_PLAIN_OFF, plain_len);
}

void chan_use_modes(struct chan *c)
{
	if (c->state == CHAN_NEW)
		c->version = CHAN_VERSION_MODES;
}

void chan_use_skeleton(struct chan *c, chan_skeleton_fn fn)
{
	if (c->state == CHAN_NEW && fn != NULL) {
		c->version = CHAN_VERSION_SKELETON;
		c->skel = fn;
	}
}

int chan_has_modes(const struct chan *c)
{
	return c->version == CHAN_VERSION_MODES || c->version == CHAN_VERSION_SKELETON;
}

unsigned chan_version(const struct chan *c)
{
	return c->version;
}

/* A frame with no ciphertext whose additional data is ad: its tag byte to
 * head, the MAC and the mode byte to tail. */
static int seal_ad(struct chan *c, const uint8_t *ad, size_t ad_len, unsigned mode,
		   uint8_t head[CHAN_PLAIN_OFF], uint8_t tail[CHAN_CLEAR_TAIL])
{
	uint8_t out[CHAN_ABYTES], none = 0;

	if (crypto_secretstream_xchacha20poly1305_push(&c->push, out, NULL, &none, 0, ad,
						       ad_len, 0) != 0)
		return fail(c, LWC_ERR_CRYPTO);
	memcpy(head, out, CHAN_PLAIN_OFF);
	memcpy(tail, out + CHAN_PLAIN_OFF, CHAN_ABYTES - CHAN_PLAIN_OFF);
	tail[CHAN_ABYTES - CHAN_PLAIN_OFF] = (uint8_t)mode;
	return LWC_OK;
}

int chan_seal_clear(struct chan *c, const uint8_t *plain, size_t plain_len,
		    uint8_t head[CHAN_PLAIN_OFF], uint8_t tail[CHAN_CLEAR_TAIL])
{
	if (c->state != CHAN_READY || !chan_has_modes(c))
		return LWC_ERR_ARG;
	/* no ciphertext: the message is the additional data */
	return seal_ad(c, plain, plain_len, CHAN_MODE_CLEAR, head, tail);
}

int chan_seal_skeleton(struct chan *c, const uint8_t *plain, size_t plain_len,
		       uint8_t head[CHAN_PLAIN_OFF], uint8_t tail[CHAN_CLEAR_TAIL])
{
	uint8_t *skel;
	size_t skel_len;
	int rc;

	if (c->state != CHAN_READY || c->version != CHAN_VERSION_SKELETON || !c->is_server)
		return LWC_ERR_ARG;
	/* not of the shape: nothing sent, the channel as it was (the caller
	 * can send the message in another mode) */
	if ((rc = c->skel(plain, plain_len, &skel, &skel_len)) != LWC_OK)
		return rc;
	rc = seal_ad(c, skel, skel_len, CHAN_MODE_SKELETON, head, tail);
	free(skel);
	return rc;
}

int chan_seal_mode_inplace(struct chan *c, uint8_t *buf, size_t plain_len, unsigned mode)
{
	int rc;

	if (!chan_has_modes(c))
		return LWC_ERR_ARG;
	if (mode == CHAN_MODE_CLEAR)
		return chan_seal_clear(c, buf + CHAN_PLAIN_OFF, plain_len, buf,
				       buf + CHAN_PLAIN_OFF + plain_len);
	if (mode == CHAN_MODE_SKELETON)
		return chan_seal_skeleton(c, buf + CHAN_PLAIN_OFF, plain_len, buf,
					  buf + CHAN_PLAIN_OFF + plain_len);
	if (mode != CHAN_MODE_SEALED)
		return LWC_ERR_ARG;
	if ((rc = chan_seal_inplace(c, buf, plain_len)) == LWC_OK)
		buf[plain_len + CHAN_ABYTES] = CHAN_MODE_SEALED;
	return rc;
}

int chan_open_mode_inplace(struct chan *c, uint8_t *buf, size_t len, size_t *plain_len,
			   unsigned *mode)
{
	uint8_t in[CHAN_ABYTES], none, *skel = NULL;
	const uint8_t *ad;
	unsigned long long n;
	size_t body, ad_len;
	uint8_t tag;
	int ok;

	if (c->state != CHAN_READY || !chan_has_modes(c))
		return LWC_ERR_ARG;
	if (len < CHAN_ABYTES + CHAN_MODE_BYTES)
		return fail(c, LWC_ERR_INTEGRITY);
	body = len - CHAN_MODE_BYTES;
	*mode = buf[body];
	if (*mode == CHAN_MODE_SEALED)
		return chan_open_inplace(c, buf, body, plain_len);
	*plain_len = body - CHAN_ABYTES;
	ad = buf + CHAN_PLAIN_OFF;
	ad_len = *plain_len;
	if (*mode == CHAN_MODE_SKELETON) {
		/* only a store's READ answer, only to the proxy (chan.h): the
		 * shape is read before the MAC is checked, and the MAC covers
		 * everything that shape is read from */
		int rc = c->version != CHAN_VERSION_SKELETON || c->is_server ? LWC_ERR_INTEGRITY :
			 c->skel(buf + CHAN_PLAIN_OFF, *plain_len, &skel, &ad_len);

		if (rc != LWC_OK)
			return fail(c, rc == LWC_ERR_NOMEM ? rc : LWC_ERR_INTEGRITY);
		ad = skel;
	} else if (*mode != CHAN_MODE_CLEAR) {
		return fail(c, LWC_ERR_INTEGRITY);
	}
	memcpy(in, buf, CHAN_PLAIN_OFF);
	memcpy(in + CHAN_PLAIN_OFF, buf + CHAN_PLAIN_OFF + *plain_len, CHAN_ABYTES - CHAN_PLAIN_OFF);
	ok = crypto_secretstream_xchacha20poly1305_pull(&c->pull, &none, &n, &tag, in, sizeof(in),
							ad, ad_len) == 0 &&
	     n == 0 && tag == crypto_secretstream_xchacha20poly1305_TAG_MESSAGE;
	free(skel);
	return ok ? LWC_OK : fail(c, LWC_ERR_INTEGRITY);
}

int chan_error_body(int code, const char *msg, uint8_t **out, size_t *out_len)
{
	Lwc__Error e = LWC__ERROR__INIT;

	e.code = code;
	e.message = (char *)(uintptr_t)(msg ? msg : lwc_strerror(code));
	return pack(&e.base, out, out_len);
}

_Static_assert(CHAN_FRAME_HEAD == WIRE_HDR_BYTES + CHAN_PLAIN_OFF, "frame header room");

int chan_frame_new(const ProtobufCMessage *msg, uint8_t **frame, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(msg);

	*frame = NULL;
	*len = 0;
	if (n + CHAN_ABYTES + CHAN_MODE_BYTES > WIRE_FRAME_MAX)
		return LWC_ERR_TOO_BIG;
	if ((*frame = malloc(CHAN_FRAME_HEAD + n + CHAN_FRAME_TAIL)) == NULL)
		return LWC_ERR_NOMEM;
	protobuf_c_message_pack(msg, *frame + CHAN_FRAME_HEAD);
	*len = n;
	return LWC_OK;
}

int chan_write_frame(struct chan *c, int fd, uint8_t *frame, size_t len)
{
	/* the header, then the body sealed in place over the packed message */
	size_t body = len + CHAN_ABYTES + (chan_has_modes(c) ? CHAN_MODE_BYTES : 0);
	int rc = chan_has_modes(c) ?
		 chan_seal_mode_inplace(c, frame + WIRE_HDR_BYTES, len, CHAN_MODE_SEALED) :
		 chan_seal_inplace(c, frame + WIRE_HDR_BYTES, len);

	if (rc != LWC_OK)
		return rc;
	wire_put_u32(frame, (uint32_t)body);
	return wire_write_all(fd, frame, WIRE_HDR_BYTES + body);
}

void chan_frame_free(uint8_t *frame, size_t len)
{
	if (frame == NULL)
		return;
	sodium_memzero(frame, CHAN_FRAME_HEAD + len + CHAN_FRAME_TAIL);
	free(frame);
}

int chan_write_msg(struct chan *c, int fd, const ProtobufCMessage *msg)
{
	uint8_t *frame;
	size_t n;
	int rc;

	if ((rc = chan_frame_new(msg, &frame, &n)) != LWC_OK)
		return rc;
	rc = chan_write_frame(c, fd, frame, n);
	if (rc == LWC_OK)
		free(frame);              /* sealed in place: ciphertext */
	else
		chan_frame_free(frame, n);
	return rc;
}

int chan_read_plain(struct chan *c, int fd, uint32_t max, uint8_t **body, uint8_t **plain,
		    size_t *plain_len, int timeout_ms)
{
	size_t len;
	unsigned mode;
	int rc;

	*body = *plain = NULL;
	*plain_len = 0;
	if ((rc = wire_recv_frame(fd, max, body, &len, timeout_ms)) != LWC_OK)
		return rc;
	if (len < CHAN_ABYTES + (chan_has_modes(c) ? CHAN_MODE_BYTES : 0)) {
		/* too short to be encrypted: a plaintext Error from a failing server */
		rc = LWC_ERR_PROTO;
	} else if ((rc = chan_has_modes(c) ?
			  chan_open_mode_inplace(c, *body, len, plain_len, &mode) :
			  chan_open_inplace(c, *body, len, plain_len)) == LWC_OK) {
		*plain = *body + CHAN_PLAIN_OFF;
		return LWC_OK;
	}
	free(*body);
	*body = NULL;
	return rc;
}

int chan_read_msg(struct chan *c, int fd, const ProtobufCMessageDescriptor *desc,
		  uint32_t max, ProtobufCMessage **out, int timeout_ms)
{
	uint8_t *body, *plain;
	size_t plain_len;
	int rc;

	*out = NULL;
	if ((rc = chan_read_plain(c, fd, max, &body, &plain, &plain_len, timeout_ms)) != LWC_OK)
		return rc;
	*out = protobuf_c_message_unpack(desc, NULL, plain_len, plain);
	if (*out == NULL)
		rc = LWC_ERR_PROTO;
	sodium_memzero(plain, plain_len);
	free(body);
	return rc;
}

int chan_connect(struct chan *c, int fd, const char *key_id, const uint8_t psk[32],
		 int timeout_ms, char *err, size_t errlen)
{
	uint8_t *out = NULL, *in = NULL;
	size_t out_len, in_len;
	int rc;

	if ((rc = chan_client_hello(c, key_id, &out, &out_len)) != LWC_OK)
		goto fail;
	rc = wire_send_frame(fd, out, out_len);
	free(out);
	out = NULL;
	if (rc != LWC_OK)
		goto fail;
	if ((rc = wire_recv_frame(fd, WIRE_PREAUTH_MAX, &in, &in_len, timeout_ms)) != LWC_OK)
		goto fail;
	rc = chan_client_auth(c, psk, in, in_len, &out, &out_len, err, errlen);
	free(in);
	in = NULL;
	if (rc != LWC_OK)
		return rc;
	rc = wire_send_frame(fd, out, out_len);
	free(out);
	out = NULL;
	if (rc != LWC_OK)
		goto fail;
	if ((rc = wire_recv_frame(fd, WIRE_PREAUTH_MAX, &in, &in_len, timeout_ms)) != LWC_OK)
		goto fail;
	rc = chan_client_finish(c, in, in_len, err, errlen);
	free(in);
	return rc;
fail:
	lwc_errf(err, errlen, "channel set-up failed: %s", lwc_strerror(rc));
	return fail(c, rc);
}
