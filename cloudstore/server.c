/*
 * server.c - see server.h.
 *
 * Connection life cycle (conn_set_state is the only place that changes it):
 *
 *   HELLO  -- Hello -->  AUTH  -- Auth -->  READY  <-- job done --  BUSY
 *     any error in set-up: plaintext Error frame, CLOSING (flush, then free)
 *
 * A connection with a job in flight is never freed by the event loop: a peer
 * that goes away meanwhile only marks it closed, and the job's completion
 * frees it.  Completions reach the loop through a mutex-protected list and
 * event_active() on a single "done" event.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <sodium.h>

#include "chan.h"
#include "cs_wire.h"
#include "log.h"
#include "net.h"
#include "pidlock.h"
#include "proto.h"
#include "server.h"
#include "srvkit.h"
#include "wire.h"

#define OUT_HIGH_WATER (64u << 20)   /* stop taking requests above this backlog */
#define SHUTDOWN_GRACE_SEC 30
#define CS_LOCK_FILE "lwc-cloudstore.pid"

enum conn_state {
	CONN_HELLO,       /* waiting for Hello                      */
	CONN_AUTH,        /* waiting for Auth                       */
	CONN_READY,       /* authenticated, idle                    */
	CONN_BUSY,        /* a request is with a worker             */
	CONN_CLOSING      /* flushing a last frame, then freed      */
};

struct cs_server;

struct conn {
	uint64_t id;
	char name[96];                /* "conn 12 127.0.0.1:5000" for logs   */
	struct cs_server *srv;
	struct bufferevent *bev;
	struct chan *chan;
	enum conn_state state;
	int peer_gone;                /* socket closed while BUSY             */
	size_t hs_in, hs_out;         /* handshake bytes, for the trace       */
	struct srvkit_frame big;      /* a large request being read           */
	struct conn *prev, *next;     /* server's list of live connections    */
};

struct job {
	struct conn *conn;
	uint8_t *req;                 /* encrypted request body               */
	size_t req_len;
	uint8_t *resp;                /* framed response (header + body)      */
	size_t resp_len;
	size_t sent;                  /* of it, sent by the worker itself     */
	evutil_socket_t fd;           /* the worker may send on it; -1: no    */
	int close_after;              /* channel broken: close after sending  */
	struct job *next;
};

struct worker {
	struct cs_server *srv;
	pthread_t thread;
	struct cs_session *session;
};

struct cs_server {
	const struct cs_server_config *cfg;
	struct event_base *base;
	struct srvkit *kit;           /* listener, limits, accept back-off   */
	struct event *done_ev, *sigterm_ev, *sigint_ev, *grace_ev;
	const struct cs_store_ops *ops;
	struct cs_store *store;
	FILE *trace;
	pthread_mutex_t trace_lock;

	pthread_mutex_t lock;         /* guards queue, done, stopping        */
	pthread_cond_t cond;
	struct job *queue_head, *queue_tail;
	struct job *done_head, *done_tail;
	int stopping_workers;

	struct worker *workers;
	int nworkers;
	struct conn *conns;
	uint64_t next_conn_id;
	int busy;                     /* jobs in flight                      */
	int shutting_down;
};

static void conn_read_cb(struct bufferevent *bev, void *arg);
static void conn_write_cb(struct bufferevent *bev, void *arg);
static void conn_event_cb(struct bufferevent *bev, short what, void *arg);
static void conn_process(struct conn *c);
static void maybe_finish_shutdown(struct cs_server *srv);

static const char *const conn_state_name[] = {
	[CONN_HELLO] = "hello", [CONN_AUTH] = "auth", [CONN_READY] = "ready",
	[CONN_BUSY] = "busy", [CONN_CLOSING] = "closing"
};

static void conn_set_state(struct conn *c, enum conn_state st)
{
	plog_debug(c->name, "state %s -> %s", conn_state_name[c->state], conn_state_name[st]);
	c->state = st;
}

static void conn_free(struct conn *c)
{
	struct cs_server *srv = c->srv;

	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->bev)
		bufferevent_free(c->bev);
	chan_free(c->chan);
	srvkit_frame_free(&c->big);
	plog_debug(c->name, "closed");
	free(c);
	srvkit_conn_closed(srv->kit);
	maybe_finish_shutdown(srv);
}

/* Queue a frame (header + body) for sending. */
static int conn_send_frame(struct conn *c, const uint8_t *body, size_t len)
{
	uint8_t hdr[WIRE_HDR_BYTES];
	struct evbuffer *out = bufferevent_get_output(c->bev);

	wire_put_u32(hdr, (uint32_t)len);
	if (evbuffer_add(out, hdr, sizeof(hdr)) != 0 || evbuffer_add(out, body, len) != 0)
		return LWC_ERR_NOMEM;
	return LWC_OK;
}

/* Send a plaintext Error and close once it is flushed. */
static void conn_fail(struct conn *c, int code, const char *msg)
{
	uint8_t *body;
	size_t len;

	/* before authentication anyone can make this happen at will */
	if (c->state == CONN_HELLO || c->state == CONN_AUTH)
		log_limited(&srvkit_preauth_limit, LOG_INFO, c->name, "closing: %s", msg);
	else
		plog_info(c->name, "closing: %s", msg);
	if (chan_error_body(code, msg, &body, &len) == LWC_OK) {
		conn_send_frame(c, body, len);
		free(body);
	}
	conn_set_state(c, CONN_CLOSING);
	bufferevent_disable(c->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		conn_free(c);
}

/* ---- worker side ------------------------------------------------------- */

/* The answer straight from the worker, as far as the socket takes it
 * without waiting: the event loop sends the rest, if any, and learns of
 * the job's end after the peer may already have its answer (one hand-off
 * less on every request's path).  Safe while the connection is BUSY: the
 * loop neither reads nor writes it then, and does not close it. */
static void job_send_direct(struct job *j)
{
	while (j->sent < j->resp_len) {
		ssize_t n = send(j->fd, j->resp + j->sent, j->resp_len - j->sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0)
			j->sent += (size_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else
			return;    /* full, or broken: the loop takes it from here */
	}
}

static void job_run(struct worker *w, struct job *j)
{
	struct cs_server *srv = w->srv;
	struct conn *c = j->conn;
	struct cs_trace_info ti;
	uint8_t *plain = NULL, *resp = NULL;
	size_t plain_len = 0, resp_len = 0, sealed;
	unsigned mode;
	int rc;

	memset(&ti, 0, sizeof(ti));
	/* opened in place; the response is packed where its frame's body goes
	 * and sealed in place (no second buffer either way) */
	if (chan_open_mode_inplace(c->chan, j->req, j->req_len, &plain_len, &mode) != LWC_OK) {
		/* forged, replayed, reordered or truncated: the stream is lost */
		ti.op = "BAD";
		ti.status = LWC_ERR_INTEGRITY;
		rc = chan_error_body(LWC_ERR_INTEGRITY,
				     "frame failed authentication (tampered, replayed or "
				     "reordered); closing the connection", &resp, &resp_len);
		j->close_after = 1;
		if (rc == LWC_OK) {
			j->resp = malloc(resp_len + WIRE_HDR_BYTES);
			if (j->resp) {
				wire_put_u32(j->resp, (uint32_t)resp_len);
				memcpy(j->resp + WIRE_HDR_BYTES, resp, resp_len);
				j->resp_len = resp_len + WIRE_HDR_BYTES;
			}
		}
		goto out;
	}
	plain = j->req + CHAN_PLAIN_OFF;
	rc = cs_proto_handle_room(srv->ops, w->session, srv->cfg->max_frame, plain, plain_len,
				  WIRE_HDR_BYTES + CHAN_PLAIN_OFF, CHAN_FRAME_TAIL,
				  &resp, &resp_len, &ti);
	/* a READ's answer is its blocks, sealed under K_OPS: a skeleton frame
	 * to a proxy of version 3, a clear one to one of version 2 (chan.h);
	 * everything else, errors too, goes encrypted */
	mode = rc == LWC_OK && ti.status == LWC_OK && strcmp(ti.op, "READ") == 0 ?
	       (chan_version(c->chan) == CHAN_VERSION_SKELETON ? CHAN_MODE_SKELETON :
		CHAN_MODE_CLEAR) : CHAN_MODE_SEALED;
	sealed = resp_len + CHAN_ABYTES + CHAN_MODE_BYTES;
	if (rc == LWC_OK && sealed <= WIRE_FRAME_MAX && mode == CHAN_MODE_SKELETON) {
		int src = chan_seal_mode_inplace(c->chan, resp + WIRE_HDR_BYTES, resp_len, mode);

		/* an answer of another shape (never packed here) goes clear */
		if (src == LWC_ERR_PROTO)
			mode = CHAN_MODE_CLEAR;
		else if (src != LWC_OK)
			rc = src;
	}
	if (rc != LWC_OK || sealed > WIRE_FRAME_MAX ||
	    (mode != CHAN_MODE_SKELETON &&
	     chan_seal_mode_inplace(c->chan, resp + WIRE_HDR_BYTES, resp_len, mode) != LWC_OK)) {
		j->close_after = 1;
		goto out;
	}
	wire_put_u32(resp, (uint32_t)sealed);
	j->resp = resp;
	j->resp_len = WIRE_HDR_BYTES + sealed;
	resp = NULL;
out:
	/* the backend failed (a full disk, a lost database): the operator must
	 * see it here, not only the proxy */
	if (ti.status == LWC_ERR_STORE || ti.status == LWC_ERR_NO_SPACE ||
	    ti.status == LWC_ERR_IO) {
		static struct log_limit store_lim = LOG_LIMIT_INIT;
		log_limited(&store_lim, LOG_ERROR, c->name, "%s failed: %s", ti.op,
			    ti.err[0] ? ti.err : lwc_strerror(ti.status));
	} else if (ti.status != LWC_OK && ti.status != LWC_ERR_INTEGRITY) {
		/* refused requests (a version not held, a bad block size): the
		 * proxy reports them to its user; here for the store's operator */
		static struct log_limit req_lim = LOG_LIMIT_INIT;
		log_limited(&req_lim, LOG_WARN, c->name, "%s refused: %s", ti.op,
			    ti.err[0] ? ti.err : lwc_strerror(ti.status));
	}
	if (srv->trace) {
		pthread_mutex_lock(&srv->trace_lock);
		cs_trace_write(srv->trace, c->id, &ti, j->req_len + WIRE_HDR_BYTES, j->resp_len);
		pthread_mutex_unlock(&srv->trace_lock);
	}
	/* after the trace line: the next request this answer lets the peer
	 * send is traced after it */
	if (j->fd >= 0 && j->resp != NULL && !j->close_after)
		job_send_direct(j);
	cs_trace_info_clear(&ti);
	/* the request is not wiped: ids, versions and blocks sealed under
	 * K_OPS, all of which this store keeps or traces anyway */
	free(resp);
	free(j->req);
	j->req = NULL;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct cs_server *srv = w->srv;

	pthread_mutex_lock(&srv->lock);
	for (;;) {
		struct job *j;

		while (srv->queue_head == NULL && !srv->stopping_workers)
			pthread_cond_wait(&srv->cond, &srv->lock);
		if (srv->queue_head == NULL)
			break;
		j = srv->queue_head;
		srv->queue_head = j->next;
		if (srv->queue_head == NULL)
			srv->queue_tail = NULL;
		pthread_mutex_unlock(&srv->lock);

		job_run(w, j);

		pthread_mutex_lock(&srv->lock);
		j->next = NULL;
		if (srv->done_tail)
			srv->done_tail->next = j;
		else
			srv->done_head = j;
		srv->done_tail = j;
		event_active(srv->done_ev, EV_READ, 0);
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/* ---- event loop side --------------------------------------------------- */

static void job_submit(struct conn *c, uint8_t *req, size_t len)
{
	struct cs_server *srv = c->srv;
	struct job *j = calloc(1, sizeof(*j));

	if (j == NULL) {
		free(req);
		conn_fail(c, LWC_ERR_NOMEM, "out of memory");
		return;
	}
	j->conn = c;
	j->req = req;
	j->req_len = len;
	/* nothing queued before it: the worker may send the answer itself */
	j->fd = evbuffer_get_length(bufferevent_get_output(c->bev)) == 0 ?
		bufferevent_getfd(c->bev) : -1;
	conn_set_state(c, CONN_BUSY);
	bufferevent_disable(c->bev, EV_READ);
	srv->busy++;
	pthread_mutex_lock(&srv->lock);
	if (srv->queue_tail)
		srv->queue_tail->next = j;
	else
		srv->queue_head = j;
	srv->queue_tail = j;
	pthread_cond_signal(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
}

static void free_ref(const void *data, size_t len, void *extra)
{
	(void)data;
	(void)len;
	free(extra);                  /* the whole response, data its unsent rest */
}

static void done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct cs_server *srv = arg;
	struct job *list;

	(void)fd;
	(void)what;
	pthread_mutex_lock(&srv->lock);
	list = srv->done_head;
	srv->done_head = srv->done_tail = NULL;
	pthread_mutex_unlock(&srv->lock);
	while (list) {
		struct job *j = list;
		struct conn *c = j->conn;

		list = j->next;
		srv->busy--;
		if (c->peer_gone) {
			conn_free(c);
		} else if (j->resp == NULL) {
			conn_fail(c, LWC_ERR_NOMEM, "cannot build the response");
		} else {
			struct evbuffer *out = bufferevent_get_output(c->bev);

			/* the output buffer owns what the worker did not send */
			if (j->sent < j->resp_len) {
				if (evbuffer_add_reference(out, j->resp + j->sent,
							   j->resp_len - j->sent, free_ref,
							   j->resp) == 0)
					j->resp = NULL;
				else
					j->close_after = 1;
			}
			if (j->close_after || srv->shutting_down) {
				conn_set_state(c, CONN_CLOSING);
				if (evbuffer_get_length(out) == 0)
					conn_free(c);   /* all sent: no write callback comes */
			} else {
				conn_set_state(c, CONN_READY);
				bufferevent_enable(c->bev, EV_READ);
				conn_process(c);
			}
		}
		free(j->resp);
		free(j);
	}
}

/* Handle every complete frame in the input buffer, as the state allows. */
static void conn_process(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	while (c->state == CONN_HELLO || c->state == CONN_AUTH || c->state == CONN_READY) {
		uint8_t hdr[WIRE_HDR_BYTES], *body, *out = NULL;
		uint32_t len, max = c->state == CONN_READY ? c->srv->cfg->max_frame : WIRE_PREAUTH_MAX;
		size_t out_len;
		int rc;

		if (evbuffer_get_length(bufferevent_get_output(c->bev)) > OUT_HIGH_WATER)
			return;   /* resumed by the write callback */
		if (c->big.body != NULL) {
			body = c->big.body;
			len = (uint32_t)c->big.len;
			if (!srvkit_frame_fill(&c->big, c->bev))
				return;
			job_submit(c, body, len);
			return;
		}
		if (evbuffer_copyout(in, hdr, sizeof(hdr)) < (ssize_t)sizeof(hdr))
			return;
		rc = wire_frame_len(hdr, max, &len);
		if (rc != LWC_OK) {
			char msg[128];
			if (rc == LWC_ERR_TOO_BIG)
				snprintf(msg, sizeof(msg), "frame of %u bytes exceeds the maximum "
					 "of %u bytes", wire_get_u32(hdr), max);
			else
				snprintf(msg, sizeof(msg), "empty frame");
			conn_fail(c, rc, msg);
			return;
		}
		if (evbuffer_get_length(in) < (size_t)len + sizeof(hdr)) {
			if (c->state == CONN_READY && len >= SRVKIT_FRAME_DIRECT) {
				/* a large request: read on past the bufferevent */
				if (srvkit_frame_begin(&c->big, len) != LWC_OK) {
					conn_fail(c, LWC_ERR_NOMEM, "out of memory");
					return;
				}
				evbuffer_drain(in, sizeof(hdr));
				continue;
			}
			/* let the read watermark wait for the whole frame */
			bufferevent_setwatermark(c->bev, EV_READ, (size_t)len + sizeof(hdr), 0);
			return;
		}
		bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
		body = malloc(len);
		if (body == NULL) {
			conn_fail(c, LWC_ERR_NOMEM, "out of memory");
			return;
		}
		evbuffer_drain(in, sizeof(hdr));
		evbuffer_remove(in, body, len);

		switch (c->state) {
		case CONN_HELLO:
			c->hs_in += len + sizeof(hdr);
			rc = chan_server_hello(c->chan, body, len);
			free(body);
			if (rc != LWC_OK) {
				conn_fail(c, LWC_ERR_PROTO, "malformed Hello, or a channel version "
					  "other than 2 or 3 (a proxy needs a cloud store of its "
					  "release or newer)");
				return;
			}
			if (chan_key_id(c->chan)[0] != '\0') {
				conn_fail(c, LWC_ERR_AUTH, "unknown key id: the cloud store has one key (K_CS)");
				return;
			}
			if (chan_server_reply(c->chan, c->srv->cfg->key, &out, &out_len) != LWC_OK) {
				conn_fail(c, LWC_ERR_CRYPTO, "channel set-up failed");
				return;
			}
			conn_send_frame(c, out, out_len);
			c->hs_out += out_len + sizeof(hdr);
			free(out);
			conn_set_state(c, CONN_AUTH);
			break;
		case CONN_AUTH:
			c->hs_in += len + sizeof(hdr);
			rc = chan_server_auth(c->chan, body, len, &out, &out_len);
			free(body);
			if (rc != LWC_OK) {
				conn_fail(c, rc == LWC_ERR_AUTH ? LWC_ERR_AUTH : LWC_ERR_PROTO,
					  rc == LWC_ERR_AUTH ?
					  "authentication failed: the client does not hold K_CS" :
					  "malformed Auth");
				return;
			}
			conn_send_frame(c, out, out_len);
			c->hs_out += out_len + sizeof(hdr);
			free(out);
			if (c->srv->trace) {
				struct cs_trace_info ti = { .op = "HELLO" };
				pthread_mutex_lock(&c->srv->trace_lock);
				cs_trace_write(c->srv->trace, c->id, &ti, c->hs_in, c->hs_out);
				pthread_mutex_unlock(&c->srv->trace_lock);
			}
			plog_debug(c->name, "authenticated");
			bufferevent_set_timeouts(c->bev, NULL, NULL);
			conn_set_state(c, CONN_READY);
			break;
		case CONN_READY:
			job_submit(c, body, len);
			return;
		default:
			free(body);
			return;
		}
	}
}

static void conn_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_process(arg);
}

static void conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	if (c->state == CONN_CLOSING) {
		if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
			conn_free(c);
		return;
	}
	if (c->state == CONN_READY)
		conn_process(c);   /* resume after output back-pressure */
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_TIMEOUT) {
		log_limited(&srvkit_preauth_limit, LOG_INFO, c->name,
			    "no authentication within %d s; closing", srvkit_handshake_s(c->srv->kit));
		conn_free(c);
		return;
	}
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		if (what & BEV_EVENT_ERROR)
			plog_debug(c->name, "socket error: %s", strerror(errno));
		if (c->state == CONN_BUSY) {
			c->peer_gone = 1;
			bufferevent_disable(c->bev, EV_READ | EV_WRITE);
			return;
		}
		conn_free(c);
	}
}

static void accept_cb(void *arg, evutil_socket_t fd, const char *peer)
{
	struct cs_server *srv = arg;
	struct conn *c;

	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		evutil_closesocket(fd);
		srvkit_conn_closed(srv->kit);
		return;
	}
	c->srv = srv;
	c->id = ++srv->next_conn_id;
	snprintf(c->name, sizeof(c->name), "conn %llu %s", (unsigned long long)c->id, peer);
	c->bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL || chan_new(&c->chan, 1) != LWC_OK) {
		if (c->bev)
			bufferevent_free(c->bev);
		else
			evutil_closesocket(fd);
		chan_free(c->chan);
		free(c);
		srvkit_conn_closed(srv->kit);
		return;
	}
	/* the proxy-cloud channel: version 3, or 2 for a proxy of version 2 */
	chan_use_modes(c->chan);
	chan_use_skeleton(c->chan, cs_wire_read_skeleton);
	/* a READ's answer (11 MB for 1,024 blocks) a megabyte a write, not
	 * libevent's 16 KB a trip through the event loop */
	bufferevent_set_max_single_write(c->bev, SRVKIT_WRITE_MAX);
	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
	c->state = CONN_HELLO;
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb, c);
	{
		struct timeval hs = { srvkit_handshake_s(srv->kit), 0 };
		bufferevent_set_timeouts(c->bev, &hs, NULL);
	}
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	plog_debug(c->name, "accepted");
}

static void maybe_finish_shutdown(struct cs_server *srv)
{
	if (srv->shutting_down && srv->conns == NULL && srv->busy == 0)
		event_base_loopexit(srv->base, NULL);
}

static void grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct cs_server *srv = arg;

	(void)fd;
	(void)what;
	log_warn("shutdown: %d request(s) still running after %d s; exiting anyway",
		 srv->busy, SHUTDOWN_GRACE_SEC);
	event_base_loopbreak(srv->base);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct cs_server *srv = arg;
	struct conn *c, *next;
	struct timeval tv = { SHUTDOWN_GRACE_SEC, 0 };

	(void)what;
	if (srv->shutting_down)
		return;
	log_info("received %s: finishing requests in flight, then exiting",
		 sig == SIGTERM ? "SIGTERM" : "SIGINT");
	srv->shutting_down = 1;
	srvkit_stop(srv->kit);
	for (c = srv->conns; c; c = next) {
		next = c->next;
		if (c->state == CONN_BUSY) {
			bufferevent_disable(c->bev, EV_READ);
			continue;  /* answered, then closed, by done_cb */
		}
		if (c->state != CONN_CLOSING)
			conn_free(c);
	}
	srv->grace_ev = evtimer_new(srv->base, grace_cb, srv);
	if (srv->grace_ev)
		evtimer_add(srv->grace_ev, &tv);
	maybe_finish_shutdown(srv);
}

int cs_server_run(const struct cs_server_config *cfg)
{
	struct cs_server srv;
	struct sockaddr_storage ss;
	socklen_t sl;
	struct pidlock lock = { -1, "" };
	const char *spec;
	char err[512] = "";
	int rc = LWC_ERR_IO, started = 0;

	memset(&srv, 0, sizeof(srv));
	srv.cfg = cfg;
	pthread_mutex_init(&srv.lock, NULL);
	pthread_mutex_init(&srv.trace_lock, NULL);
	pthread_cond_init(&srv.cond, NULL);
	signal(SIGPIPE, SIG_IGN);

	if ((rc = net_parse_addr(cfg->listen, &ss, &sl, err, sizeof(err))) != LWC_OK ||
	    (rc = cs_store_lookup(cfg->store, &srv.ops, &spec, err, sizeof(err))) != LWC_OK) {
		log_error("%s", err);
		goto out;
	}
	/* one server per store directory, before anything in it is touched
	 * (a PostgreSQL store is not a directory: see docs/operations.md) */
	if (srv.ops == &cs_store_lmdb || srv.ops == &cs_store_log) {
		char dir[4000];

		rc = srv.ops == &cs_store_lmdb ? cs_lmdb_dir(spec, dir, sizeof(dir), err, sizeof(err))
					       : cs_log_dir(spec, dir, sizeof(dir), err, sizeof(err));
		if (rc != LWC_OK) {
			log_error("%s", err);
			goto out;
		}
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			log_error("cannot create the store directory %s: %s", dir, strerror(errno));
			rc = LWC_ERR_IO;
			goto out;
		}
		if ((rc = pidlock_acquire(&lock, dir, CS_LOCK_FILE, err, sizeof(err))) != LWC_OK) {
			log_error("%s", err);
			goto out;
		}
	}
	if (cfg->trace_path) {
		srv.trace = fopen(cfg->trace_path, "a");
		if (srv.trace == NULL) {
			log_error("cannot open trace file %s: %s", cfg->trace_path, strerror(errno));
			rc = LWC_ERR_IO;
			goto out;
		}
	}
	if ((rc = srv.ops->open(&srv.store, spec, cfg->block_size, err, sizeof(err))) != LWC_OK) {
		log_error("cannot open the %s store: %s", srv.ops->name, err);
		goto out;
	}
	evthread_use_pthreads();
	srv.base = event_base_new();
	if (srv.base == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	srv.nworkers = cfg->workers > 0 ? cfg->workers : 1;
	srv.workers = calloc((size_t)srv.nworkers, sizeof(*srv.workers));
	if (srv.workers == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	for (int i = 0; i < srv.nworkers; i++) {
		srv.workers[i].srv = &srv;
		if ((rc = srv.ops->session_open(srv.store, &srv.workers[i].session,
						err, sizeof(err))) != LWC_OK) {
			log_error("cannot open a %s session: %s", srv.ops->name, err);
			goto out;
		}
	}
	srv.done_ev = event_new(srv.base, -1, 0, done_cb, &srv);
	srv.sigterm_ev = evsignal_new(srv.base, SIGTERM, signal_cb, &srv);
	srv.sigint_ev = evsignal_new(srv.base, SIGINT, signal_cb, &srv);
	if (srv.done_ev == NULL || srv.sigterm_ev == NULL || srv.sigint_ev == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	evsignal_add(srv.sigterm_ev, NULL);
	evsignal_add(srv.sigint_ev, NULL);
	{
		/* descriptors besides connections: a backend connection per
		 * worker, LMDB's files, the trace, the log, libevent's own */
		struct srvkit_cfg kc = { cfg->listen, cfg->max_conns, 32 + srv.nworkers,
					 cfg->handshake_s };
		if ((rc = srvkit_listen(&srv.kit, srv.base, &kc, accept_cb, &srv, err,
					sizeof(err))) != LWC_OK) {
			log_error("%s", err);
			goto out;
		}
	}
	for (int i = 0; i < srv.nworkers; i++) {
		if (pthread_create(&srv.workers[i].thread, NULL, worker_main, &srv.workers[i]) != 0) {
			log_error("cannot start worker threads");
			rc = LWC_ERR_NOMEM;
			goto stop;
		}
		started++;
	}
	log_info("listening on %s, store %s, %d workers, at most %d connections%s%s", cfg->listen,
		 srv.ops->name, srv.nworkers, srvkit_max_conns(srv.kit), srv.trace ? ", trace " : "",
		 srv.trace ? cfg->trace_path : "");
	event_base_dispatch(srv.base);
	rc = LWC_OK;
stop:
	pthread_mutex_lock(&srv.lock);
	srv.stopping_workers = 1;
	pthread_cond_broadcast(&srv.cond);
	pthread_mutex_unlock(&srv.lock);
	for (int i = 0; i < started; i++)
		pthread_join(srv.workers[i].thread, NULL);
	log_info("stopped");
out:
	while (srv.conns) {
		srv.conns->peer_gone = 0;
		srv.shutting_down = 0;
		conn_free(srv.conns);
	}
	srvkit_free(srv.kit);
	if (srv.done_ev)
		event_free(srv.done_ev);
	if (srv.sigterm_ev)
		event_free(srv.sigterm_ev);
	if (srv.sigint_ev)
		event_free(srv.sigint_ev);
	if (srv.grace_ev)
		event_free(srv.grace_ev);
	for (int i = 0; srv.workers && i < srv.nworkers; i++)
		if (srv.workers[i].session)
			srv.ops->session_close(srv.workers[i].session);
	free(srv.workers);
	if (srv.store)
		srv.ops->close(srv.store);
	if (srv.base)
		event_base_free(srv.base);
	if (srv.trace)
		fclose(srv.trace);
	pidlock_release(&lock);
	pthread_mutex_destroy(&srv.lock);
	pthread_mutex_destroy(&srv.trace_lock);
	pthread_cond_destroy(&srv.cond);
	return rc;
}
