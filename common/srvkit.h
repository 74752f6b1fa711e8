/*
 * srvkit.h - the accept loop both servers share (lwc-proxy, lwc-cloudstore).
 *
 * One place for what an outsider who can reach a port can do to a server:
 *
 *   connection limit   at most max_conns accepted connections live at once;
 *                      one beyond it is closed at once, and a rate-limited
 *                      warning counts them;
 *   fd exhaustion      accept() failing with EMFILE/ENFILE (or no memory)
 *                      pauses the listener (100 ms, doubling to 1 s while it
 *                      keeps failing) instead of spinning on a readable
 *                      listening socket, and logs once per interval with a
 *                      count;
 *   handshake timeout  the servers close a connection that has not
 *                      authenticated within handshake_s seconds (they own
 *                      the connections; the kit holds the setting);
 *   logs               every line an outsider can repeat goes through a
 *                      log_limit (log.h).
 *
 * The kit never frees a connection: the server calls srvkit_conn_closed()
 * once for every fd the accept callback was given, when it closes it.
 */
#ifndef LWC_SRVKIT_H
#define LWC_SRVKIT_H

#include <event2/event.h>
#include <event2/util.h>

#include "log.h"
#include "lwc_err.h"

#define SRVKIT_HANDSHAKE_DEFAULT_S 5

struct srvkit_cfg {
	const char *listen;            /* HOST:PORT                              */
	int max_conns;                 /* 0: srvkit_default_max_conns()          */
	int reserve_fds;               /* fds the server needs besides its
					  connections (backend, workers, logs)  */
	int handshake_s;               /* 0: SRVKIT_HANDSHAKE_DEFAULT_S           */
};

struct srvkit;

/* A new connection: fd is non-blocking, TCP_NODELAY, close-on-exec; peer is
 * "HOST:PORT" for logs. */
typedef void (*srvkit_accept_fn)(void *arg, evutil_socket_t fd, const char *peer);

/* Bind and listen; LWC_ERR_IO with err set when the address cannot be used. */
int srvkit_listen(struct srvkit **out, struct event_base *base, const struct srvkit_cfg *cfg,
		  srvkit_accept_fn fn, void *arg, char *err, size_t errlen) LWC_WUR;
/* A connection handed to fn is gone (closed by the server). */
void srvkit_conn_closed(struct srvkit *k);
/* Stop accepting (shutdown); live connections are the server's, and may
 * still call srvkit_conn_closed. */
void srvkit_stop(struct srvkit *k);
/* Free the kit, once no connection is left (NULL: no-op). */
void srvkit_free(struct srvkit *k);

int srvkit_max_conns(const struct srvkit *k);
int srvkit_live_conns(const struct srvkit *k);
int srvkit_handshake_s(const struct srvkit *k);

/* The default limit: three quarters of what RLIMIT_NOFILE leaves after
 * reserve_fds, at least 4, at most 4096. */
int srvkit_default_max_conns(int reserve_fds);


/* Rate-limited lines about connections that never authenticated (shared by
 * the servers' handshake code). */
extern struct log_limit srvkit_preauth_limit;

#endif
