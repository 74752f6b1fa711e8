/*
 * server.h - lwc-proxy serve: the user server (libevent + worker threads)
 * and the admin Unix socket.
 *
 * The event loop thread accepts connections, runs the channel set-up with
 * the user's K_DBU, splits frames and serves the admin socket.  A complete
 * request goes to a worker thread, which owns the connection's socket
 * until the statement is over: it streams results and, for UPDATE and
 * DELETE with residual predicates, reads the user's decisions while it
 * holds the block locks.  One statement at a time per connection.
 */
#ifndef LWC_PX_SERVER_H
#define LWC_PX_SERVER_H

#include "engine.h"
#include "state.h"

struct px_server_config {
	const char *listen;              /* HOST:PORT                        */
	const char *admin_path;          /* Unix socket path                 */
	struct px_engine_cfg engine;
	int workers;
	uint32_t max_frame;
	int io_timeout_ms;               /* user reads/writes inside a statement */
	const char *pad_text;            /* for status                       */
	int max_conns;                   /* user connections; 0: from the open-file
					    limit (common/srvkit.h)          */
	int handshake_s;                 /* 0: default; close unauthenticated */
};

/* Runs until SIGTERM or SIGINT. */
int px_server_run(struct px_state *st, const struct px_server_config *cfg) LWC_WUR;

#endif
