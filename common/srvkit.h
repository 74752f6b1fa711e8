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

#include <stddef.h>
#include <stdint.h>

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

/* A large frame read past the bufferevent.  libevent 2.1 reads at most
 * 4 KB a time (EVBUFFER_MAX_READ), each a trip through the event loop:
 * about 10,000 for the 42 MB frame of a 50,000-row INSERT, 2,700 for the
 * 11 MB WRITE of 1,024 blocks.  A frame of at least SRVKIT_FRAME_DIRECT
 * bytes whose header is in and whose body is not is read into its own
 * buffer instead, what the input holds and then straight from the socket,
 * a megabyte a call, as much as is there, never past the frame's end.
 * From 16 KB: the 65 KB WRITE of a small statement's six blocks took 16
 * reads, each with its epoll_wait and FIONREAD, at 256 KB. */
#define SRVKIT_FRAME_DIRECT (16u << 10)

/* Bytes a server's bufferevent writes a call (libevent's default: 16 KB). */
#define SRVKIT_WRITE_MAX (1u << 20)

struct srvkit_frame {
	uint8_t *body;                 /* NULL: no frame being read */
	size_t len, got;
};

struct bufferevent;
/* Starts reading a body of len bytes (the header already drained): 0, or
 * LWC_ERR_NOMEM. */
int srvkit_frame_begin(struct srvkit_frame *f, size_t len) LWC_WUR;
/* Reads on: 1 when the body is complete (f->body is the caller's then, f
 * empty), 0 to wait for the next read callback (end of file and errors are
 * left to the bufferevent, whose next read meets them). */
int srvkit_frame_fill(struct srvkit_frame *f, struct bufferevent *bev);
/* Frees a body being read (a connection closed meanwhile). */
void srvkit_frame_free(struct srvkit_frame *f);

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
