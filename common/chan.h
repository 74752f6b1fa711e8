/*
 * chan.h - the authenticated channel (DESIGN section 2), transport-agnostic.
 *
 *   client                                   server
 *   Hello{version, nonce_c, key_id}   --->   looks up the PSK of key_id
 *                                     <---   HelloReply{nonce_s, header_s}
 *   Auth{header_c, proof}             --->   opens proof: wrong key -> Error, close
 *                                     <---   first encrypted message (server proof)
 *   encrypted frames both ways ...
 *
 * Session keys: BLAKE2b-512(key = PSK, "LWC-CHAN-1" (version 1;
 * "LWC-CHAN-2" and "LWC-CHAN-3" for versions 2 and 3, below) ||
 * len(key_id) || key_id || nonce_c || nonce_s); the first 32 bytes key
 * client->server, the last 32 server->client.  Each direction is a
 * crypto_secretstream_xchacha20poly1305 stream: authenticated, ordered,
 * replay- and truncation-proof.  Fresh nonces from both ends make every
 * session's keys new, so frames captured from one session open in no
 * other.
 *
 * The functions work on frame bodies (no I/O), so tests and fuzzers drive the
 * handshake without sockets; chan_write_msg/chan_read_msg add blocking I/O.
 * One struct chan is used by one thread at a time.
 */
#ifndef LWC_CHAN_H
#define LWC_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "lwc_err.h"

#define CHAN_VERSION      1u
#define CHAN_VERSION_MODES 2u    /* the proxy-cloud channel: frames with a mode */
#define CHAN_VERSION_SKELETON 3u /* ... and READ answers in skeleton frames   */
#define CHAN_KEY_ID_MAX   128u
#define CHAN_ABYTES       17u    /* crypto_secretstream_xchacha20poly1305_ABYTES */

struct chan;

enum chan_state {
	CHAN_NEW = 0,        /* nothing exchanged yet                        */
	CHAN_HELLO_SENT,     /* client: waiting for HelloReply              */
	CHAN_HELLO_RCVD,     /* server: key_id known, waiting for the PSK    */
	CHAN_REPLY_SENT,     /* server: waiting for Auth                    */
	CHAN_AUTH_SENT,      /* client: waiting for the server's proof      */
	CHAN_READY,          /* encrypted frames flow both ways             */
	CHAN_FAILED          /* poisoned: every call returns an error        */
};

/* A new channel end.  Frees with chan_free (wipes every secret). */
int chan_new(struct chan **out, int is_server) LWC_WUR;
void chan_free(struct chan *c);
enum chan_state chan_get_state(const struct chan *c);
/* key_id announced by the client ("" for none); valid after the Hello. */
const char *chan_key_id(const struct chan *c);

/* Client: builds the Hello body (malloc'ed). */
int chan_client_hello(struct chan *c, const char *key_id,
		      uint8_t **out, size_t *out_len) LWC_WUR;
/* Client: takes the server's reply and builds the Auth body.  A plaintext
 * Error from the server returns its code, with its message in err. */
int chan_client_auth(struct chan *c, const uint8_t psk[32],
		     const uint8_t *reply, size_t reply_len,
		     uint8_t **out, size_t *out_len, char *err, size_t errlen) LWC_WUR;
/* Client: checks the server's first encrypted message (or a plaintext or
 * encrypted Error); LWC_OK when the channel is ready. */
int chan_client_finish(struct chan *c, const uint8_t *body, size_t len,
		       char *err, size_t errlen) LWC_WUR;

/* Server: parses the Hello; afterwards chan_key_id() names the PSK wanted. */
int chan_server_hello(struct chan *c, const uint8_t *body, size_t len) LWC_WUR;
/* Server: with the PSK of key_id, builds the HelloReply body. */
int chan_server_reply(struct chan *c, const uint8_t psk[32],
		      uint8_t **out, size_t *out_len) LWC_WUR;
/* Server: verifies Auth and builds the first encrypted message.
 * LWC_ERR_AUTH when the client does not hold the PSK. */
int chan_server_auth(struct chan *c, const uint8_t *body, size_t len,
		     uint8_t **out, size_t *out_len) LWC_WUR;

/* Encrypts plain into out (plain_len + CHAN_ABYTES bytes). */
int chan_seal(struct chan *c, const uint8_t *plain, size_t plain_len, uint8_t *out) LWC_WUR;
/* Decrypts in into out (in_len - CHAN_ABYTES bytes).  Any failure poisons
 * the channel (a forged, replayed, reordered or truncated frame). */
int chan_open(struct chan *c, const uint8_t *in, size_t in_len, uint8_t *out,
	      size_t *out_len) LWC_WUR;

/*
 * The same, in place, with no second buffer: a frame body is one byte of
 * stream tag, the ciphertext, then the 16-byte MAC, so a plaintext kept at
 * buf + CHAN_PLAIN_OFF is sealed over buf[0, plain_len + CHAN_ABYTES) and
 * a body opened in buf leaves its plaintext at buf + CHAN_PLAIN_OFF.
 */
#define CHAN_PLAIN_OFF    1u
int chan_seal_inplace(struct chan *c, uint8_t *buf, size_t plain_len) LWC_WUR;
int chan_open_inplace(struct chan *c, uint8_t *buf, size_t len, size_t *plain_len) LWC_WUR;

/*
 * Frames with a mode (the proxy-cloud channel, protocol version 2; both
 * ends call chan_use_modes before the Hello).  Every frame after the
 * handshake ends in one byte that says how its message travelled:
 *
 *   CHAN_MODE_SEALED  tag | ciphertext | MAC | 0   encrypted and authenticated
 *   CHAN_MODE_CLEAR   tag | message    | MAC | 1   authenticated, not encrypted
 *
 * A clear frame is one secretstream message with no ciphertext and the
 * whole message as its additional data, so it is ordered, replay- and
 * truncation-proof and authenticated like any other; only its bytes are in
 * the clear.  It is for the two messages that are almost all blocks already
 * sealed under K_OPS (a READ's answer, a WRITE request), whose other bytes
 * (block ids, versions, the request's sequence number) are what the cloud
 * sees and logs anyway: encrypting those blocks a second time for the link
 * cost two ChaCha20 passes of every block at each end.  The mode byte is
 * not itself authenticated, and need not be: the MAC covers the lengths of
 * the additional data and of the ciphertext, so a frame read in the other
 * mode fails, and poisons the channel, like any forgery (but for an empty
 * message, whose two frames differ only in that byte and mean the same;
 * likewise a READ answer with no block data, clear or in skeleton).
 * The version is in the Hello, its reply and the session keys' label
 * ("LWC-CHAN-2", "LWC-CHAN-3"): ends of different versions never share a
 * frame.
 */
#define CHAN_MODE_SEALED  0u
#define CHAN_MODE_CLEAR   1u
#define CHAN_MODE_SKELETON 2u
#define CHAN_MODE_BYTES   1u
/* Both ends, before the Hello: this channel speaks version 2, with modes. */
void chan_use_modes(struct chan *c);
/* Version 2 or 3 (both speak modes). */
int chan_has_modes(const struct chan *c);
unsigned chan_version(const struct chan *c);

/*
 * Version 3 adds one mode, for one message: a store's answer to a READ,
 * from the store (the server end) to the proxy (the client end) only.
 *
 *   CHAN_MODE_SKELETON  tag | message | MAC | 2
 *
 * Like a clear frame, but the MAC's additional data is the message's
 * skeleton: the message with the bytes of each block's data left out
 * (cs_wire_read_skeleton).  Every byte the proxy reads the message's
 * shape from (the sequence number, each block's id and version, every
 * length) is authenticated, ordered and replay-proof as before; a block's
 * data is not, because the proxy authenticates it itself, end to end and
 * more strictly: it opens each block under K_OPS with (id, version) as
 * additional data and compares its tag with the one it committed
 * (proxy/cloud_io.c, open_block), so a block changed on the link fails
 * exactly as a block changed in the store does (it_proxy test_tamper).
 * The link's MAC over the data was a second Poly1305 pass of every block
 * read, at each end.  WRITE requests stay clear frames: the store cannot
 * open a block, so the link's MAC is what keeps a changed block from
 * being stored as acknowledged.
 *
 * The shape is read before the MAC is checked (the skeleton function is
 * the same fuzzed reader the proxy uses afterwards), and the message is
 * determined by its skeleton up to the data's bytes: reading it from the
 * start, each length read is a byte of the skeleton, so two messages
 * with one skeleton differ only inside data of the same lengths.
 *
 * A server that calls chan_use_skeleton (after chan_use_modes) speaks
 * version 3 to a client of version 3 and version 2 to one of version 2; a
 * client of version 3 needs a server of version 3.
 */
typedef int (*chan_skeleton_fn)(const uint8_t *msg, size_t len, uint8_t **out,
				size_t *out_len);
/* Before the Hello: this end speaks version 3; fn gives a message's
 * skeleton (malloc'ed) or an error for a message not of the shape. */
void chan_use_skeleton(struct chan *c, chan_skeleton_fn fn);
/* Seal plain_len bytes at buf + CHAN_PLAIN_OFF in place, in mode, over
 * buf[0, plain_len + CHAN_ABYTES + CHAN_MODE_BYTES). */
int chan_seal_mode_inplace(struct chan *c, uint8_t *buf, size_t plain_len,
			   unsigned mode) LWC_WUR;
/* A clear frame around a message that stays where it is: head gets the
 * body's first byte, tail its last CHAN_ABYTES - 1 + CHAN_MODE_BYTES (the
 * message goes between them: the frame is sent from three places). */
#define CHAN_CLEAR_TAIL   (CHAN_ABYTES - CHAN_PLAIN_OFF + CHAN_MODE_BYTES)
int chan_seal_clear(struct chan *c, const uint8_t *plain, size_t plain_len,
		    uint8_t head[CHAN_PLAIN_OFF], uint8_t tail[CHAN_CLEAR_TAIL]) LWC_WUR;
/* The same in mode CHAN_MODE_SKELETON (the server end of version 3 only);
 * the skeleton function's error, with the channel unchanged, for a message
 * not of the shape. */
int chan_seal_skeleton(struct chan *c, const uint8_t *plain, size_t plain_len,
		       uint8_t head[CHAN_PLAIN_OFF], uint8_t tail[CHAN_CLEAR_TAIL]) LWC_WUR;
/* Open a frame body with a mode in place: its message is left at buf +
 * CHAN_PLAIN_OFF, *plain_len bytes; *mode says how it travelled.  Any
 * failure poisons the channel. */
int chan_open_mode_inplace(struct chan *c, uint8_t *buf, size_t len, size_t *plain_len,
			   unsigned *mode) LWC_WUR;

/* Plaintext Error body (for set-up failures). */
int chan_error_body(int code, const char *msg, uint8_t **out, size_t *out_len) LWC_WUR;

/* Encode msg, encrypt, send as one frame. */
int chan_write_msg(struct chan *c, int fd, const ProtobufCMessage *msg) LWC_WUR;
/* The same in two steps, so the encoding can be done ahead: chan_frame_new
 * packs msg into a new frame buffer (*len: its packed size) with room for
 * the frame header and the seal around it; chan_write_frame seals it in
 * place and sends it (the buffer stays the caller's). */
#define CHAN_FRAME_HEAD   (4u + CHAN_PLAIN_OFF)    /* WIRE_HDR_BYTES + tag byte */
#define CHAN_FRAME_TAIL   (CHAN_ABYTES - CHAN_PLAIN_OFF + CHAN_MODE_BYTES)
int chan_frame_new(const ProtobufCMessage *msg, uint8_t **frame, size_t *len) LWC_WUR;
int chan_write_frame(struct chan *c, int fd, uint8_t *frame, size_t len) LWC_WUR;
/* Free a frame of chan_frame_new, wiped first (it may not have been sealed). */
void chan_frame_free(uint8_t *frame, size_t len);
/* (On a channel with modes, chan_write_msg and chan_write_frame send
 * CHAN_MODE_SEALED frames, and the readers below take either mode.) */
/* Receive one frame (at most max bytes), decrypt, decode as desc.
 * Free *out with protobuf_c_message_free_unpacked(*out, NULL). */
int chan_read_msg(struct chan *c, int fd, const ProtobufCMessageDescriptor *desc,
		  uint32_t max, ProtobufCMessage **out, int timeout_ms) LWC_WUR;
/* Receive one frame and decrypt it in place: its message is
 * (*plain)[0..*plain_len), inside *body, which the caller frees. */
int chan_read_plain(struct chan *c, int fd, uint32_t max, uint8_t **body, uint8_t **plain,
		    size_t *plain_len, int timeout_ms) LWC_WUR;

/* Blocking client handshake over fd: Hello, reply, Auth, server proof. */
int chan_connect(struct chan *c, int fd, const char *key_id, const uint8_t psk[32],
		 int timeout_ms, char *err, size_t errlen) LWC_WUR;

#endif
