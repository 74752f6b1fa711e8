/*
 * server.h - the lwc-cloudstore network server (libevent + worker threads).
 *
 * The event loop thread accepts connections, splits frames, runs the channel
 * set-up and moves bytes.  Requests are decrypted, executed against the
 * backend and answered by a pool of worker threads, each with its own
 * backend session.  A connection has at most one request in flight, so its
 * pipelined requests are answered in order; different connections proceed
 * in parallel.
 */
#ifndef LWC_CS_SERVER_H
#define LWC_CS_SERVER_H

#include <stdint.h>

#include "lwc_err.h"
#include "store.h"

struct cs_server_config {
	const char *listen;              /* HOST:PORT                            */
	const char *store;               /* lmdb:DIR | postgres:CONNINFO          */
	const char *trace_path;          /* NULL: no trace                       */
	const uint8_t *key;              /* K_CS, 32 bytes (sodium_malloc'ed)    */
	uint32_t block_size;             /* 0: fixed by the first WRITE           */
	uint32_t max_frame;              /* cap on frames after authentication   */
	int workers;                     /* worker threads                       */
	int max_conns;                   /* 0: from the open-file limit (srvkit.h) */
	int handshake_s;                 /* 0: default; close unauthenticated     */
};

/* Runs until SIGTERM or SIGINT; returns LWC_OK after a clean shutdown. */
int cs_server_run(const struct cs_server_config *cfg) LWC_WUR;

#endif
