/*
 * cs_client.h - blocking client of lwc-cloudstore (used by the proxy, the
 * tests and the benchmark).
 *
 * One connection, one thread at a time.  cs_client_read/write/stat send one
 * request and wait for its answer; cs_client_send/cs_client_recv pipeline
 * several requests (answers come back in order, matched by seq).
 */
#ifndef LWC_CS_CLIENT_H
#define LWC_CS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "lwc.pb-c.h"
#include "lwc_err.h"

struct cs_client;

/* A block to write; data is not copied beyond the call. */
struct cs_wblock {
	uint64_t id;
	uint64_t version;
	const uint8_t *data;
	size_t len;
};

/* Connect and authenticate with K_CS.  timeout_ms bounds every wait. */
int cs_client_connect(struct cs_client **out, const char *addr, const uint8_t key[32],
		      int timeout_ms, char *err, size_t errlen) LWC_WUR;
void cs_client_close(struct cs_client *cl);

/* READ: on success *resp holds the blocks in request order; free it with
 * cs_client_free_resp.  A server error returns its code, message in err. */
int cs_client_read(struct cs_client *cl, const uint64_t *ids, const uint64_t *versions,
		   size_t n, Lwc__CsResponse **resp, char *err, size_t errlen) LWC_WUR;
/* WRITE of n blocks, atomic; returns once the server acknowledged it durable. */
int cs_client_write(struct cs_client *cl, const struct cs_wblock *blocks, size_t n,
		    char *err, size_t errlen) LWC_WUR;
/*
 * A WRITE built around its blocks, so that they need no copy: cs_wframe_new
 * lays out n blocks of len bytes each (ids and versions as given) and sets
 * data[i] to where block i's bytes go; the caller writes them there (all
 * of them) and sends the frame with cs_client_write_frame, which waits for
 * the acknowledgement like cs_client_write.  The frame is left as it was,
 * so it can be sent again (a retry on a new connection).  NULL: no memory.
 */
struct cs_wframe;
struct cs_wframe *cs_wframe_new(size_t n, const uint64_t *ids, const uint64_t *versions,
				size_t len, uint8_t **data);
/* The same for blocks first .. first + n - 1, all of one version (new blocks). */
struct cs_wframe *cs_wframe_new_run(size_t n, uint64_t first, uint64_t version, size_t len,
				    uint8_t **data);
int cs_client_write_frame(struct cs_client *cl, struct cs_wframe *f, char *err,
			  size_t errlen) LWC_WUR;
/* cs_client_write_frame in two: the request sent, then its acknowledgement
 * awaited (nothing else may be sent or read on cl in between). */
int cs_client_write_send(struct cs_client *cl, struct cs_wframe *f, char *err,
			 size_t errlen) LWC_WUR;
int cs_client_write_wait(struct cs_client *cl, char *err, size_t errlen) LWC_WUR;
void cs_wframe_free(struct cs_wframe *f);
/* The request's bytes with seq (what cs_client_write_frame seals and sends):
 * *body, of the length returned, valid until the next call or the free. */
size_t cs_wframe_body(struct cs_wframe *f, uint64_t seq, const uint8_t **body);
/* STAT, with the versions held of ids[0..n). */
int cs_client_stat(struct cs_client *cl, const uint64_t *ids, size_t n,
		   Lwc__CsResponse **resp, char *err, size_t errlen) LWC_WUR;

/* Pipelining: send a request (its seq is assigned here) ... */
int cs_client_send(struct cs_client *cl, Lwc__CsRequest *req) LWC_WUR;
/* ... and receive the next answer.  Error answers are returned as responses
 * (result_case == LWC__CS_RESPONSE__RESULT_ERROR), not as failures. */
int cs_client_recv(struct cs_client *cl, Lwc__CsResponse **resp) LWC_WUR;
/* Free an answer of this client (only: not a message of chan_read_msg).  A
 * READ's answer is read in place (cs_wire.h): its blocks' bytes live in the
 * received frame, which this frees. */
void cs_client_free_resp(Lwc__CsResponse *resp);

/* The socket, e.g. for tests that inject raw bytes. */
int cs_client_fd(const struct cs_client *cl);

#endif
