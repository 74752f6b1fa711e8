/*
 * proto.h - the cloud store's request handler, without sockets.
 *
 * cs_proto_handle() takes one decrypted request body, runs it against a
 * backend session and produces the response body to encrypt.  The server
 * calls it from its worker threads; unit tests and the fuzz target call it
 * directly.
 */
#ifndef LWC_CS_PROTO_H
#define LWC_CS_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"

/* What the trace records of a request (the cloud's own view). */
struct cs_trace_info {
	const char *op;        /* "READ", "WRITE", "STAT", "BAD"             */
	size_t n;              /* blocks named                               */
	uint64_t *ids;         /* malloc'ed copy of the ids (may be NULL)    */
	int status;            /* LWC_OK or the error returned               */
	char err[256];         /* its message, for the server's log          */
};

/* Handle one request; *resp is malloc'ed (free it).  Returns LWC_OK when a
 * response (possibly an Error message) was produced, an error only when
 * none could be (out of memory). */
int cs_proto_handle(const struct cs_store_ops *ops, struct cs_session *s,
		    uint32_t max_frame, const uint8_t *req, size_t req_len,
		    uint8_t **resp, size_t *resp_len, struct cs_trace_info *ti) LWC_WUR;
/* The same, the body at *resp + head with tail spare bytes after it: the
 * server packs where the frame header and the channel's seal go around it
 * (*resp_len is the body's length). */
int cs_proto_handle_room(const struct cs_store_ops *ops, struct cs_session *s,
			 uint32_t max_frame, const uint8_t *req, size_t req_len,
			 size_t head, size_t tail, uint8_t **resp, size_t *resp_len,
			 struct cs_trace_info *ti) LWC_WUR;

void cs_trace_info_clear(struct cs_trace_info *ti);

/* Append one trace line (time conn op n ids in out status). */
void cs_trace_write(FILE *f, uint64_t conn, const struct cs_trace_info *ti,
		    size_t bytes_in, size_t bytes_out);

#endif
