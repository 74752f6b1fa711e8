/*
 * server.c - see server.h.
 *
 * User connection life cycle:
 *
 *   HELLO -- Hello (user known, active) --> AUTH -- Auth (holds K_DBU) --> READY
 *   READY -- request frame --> BUSY (a worker owns the socket) -- done --> READY
 *   set-up failures: a plaintext Error frame, then CLOSING (flush, free)
 *
 * While BUSY, reading is disabled on the bufferevent and the bytes it had
 * already buffered move to the connection's stash; the worker reads the
 * stash, then the socket, and writes the socket directly (poll with a
 * timeout), so a slow user only slows its own statement.  Back in the loop
 * the stash returns to the input buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <sodium.h>

#include "chan.h"
#include "journal.h"
#include "log.h"
#include "lwc.pb-c.h"
#include "net.h"
#include "pbarena.h"
#include "pred.h"
#include "server.h"
#include "srvkit.h"
#include "userkey.h"
#include "wire.h"

#define SHUTDOWN_GRACE_SEC    30
#define ADMIN_FRAME_MAX       65536u

enum conn_state { CONN_HELLO, CONN_AUTH, CONN_READY, CONN_BUSY, CONN_CLOSING };

struct px_server;

struct conn {
	uint64_t id;
	char name[96];
	struct px_server *srv;
	struct bufferevent *bev;
	struct chan *chan;
	enum conn_state state;
	int is_admin;
	int peer_gone;
	int close_after;               /* set by the worker                 */
	char user[PX_NAME_MAX + 1];
	uint64_t gen;
	int counted;                   /* in the user's session count       */
	struct evbuffer *stash;        /* input owned by the worker         */
	uint8_t *req;                  /* the request (encrypted)           */
	size_t req_len;
	struct srvkit_frame big;       /* a large request being read        */
	uint64_t last_seq;             /* the last request answered ...      */
	int last_failed;               /* ... and whether its answer was an error */
	struct px_pace pace;           /* when its next access may start    */
	struct conn *prev, *next;
	struct conn *qnext;            /* job queue / done list             */
};

struct px_server {
	struct px_state *st;
	const struct px_server_config *cfg;
	struct px_pacer pacer;           /* serve --pace (pace.h)           */
	struct event_base *base;
	struct srvkit *kit;              /* user listener, limits, back-off */
	struct evconnlistener *admin;
	struct event *done_ev, *sigterm_ev, *sigint_ev, *grace_ev;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct conn *queue_head, *queue_tail, *done_head, *done_tail;
	int stopping_workers;
	struct px_worker *workers;
	pthread_t *threads;
	int nworkers;
	struct conn *conns;
	uint64_t next_conn_id;
	int busy;
	atomic_int shutting_down;        /* read by the workers too         */
	time_t started;
};

static void conn_process(struct conn *c);
static void maybe_finish_shutdown(struct px_server *srv);

static void conn_free(struct conn *c)
{
	struct px_server *srv = c->srv;

	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->counted)
		px_user_session(srv->st, c->user, -1);
	if (c->bev)
		bufferevent_free(c->bev);
	if (c->stash)
		evbuffer_free(c->stash);
	chan_free(c->chan);
	free(c->req);
	srvkit_frame_free(&c->big);
	plog_debug(c->name, "closed");
	if (!c->is_admin)
		srvkit_conn_closed(srv->kit);
	free(c);
	maybe_finish_shutdown(srv);
}

static int conn_send_frame(struct conn *c, const uint8_t *body, size_t len)
{
	uint8_t hdr[WIRE_HDR_BYTES];
	struct evbuffer *out = bufferevent_get_output(c->bev);

	wire_put_u32(hdr, (uint32_t)len);
	if (evbuffer_add(out, hdr, sizeof(hdr)) != 0 || evbuffer_add(out, body, len) != 0)
		return LWC_ERR_NOMEM;
	return LWC_OK;
}

/* Plaintext Error (set-up failures, admin answers are separate), then close. */
static void conn_fail(struct conn *c, int code, const char *msg)
{
	uint8_t *body;
	size_t len;

	/* before authentication anyone can make this happen at will */
	if (!c->is_admin && (c->state == CONN_HELLO || c->state == CONN_AUTH))
		log_limited(&srvkit_preauth_limit, LOG_INFO, c->name, "closing: %s", msg);
	else
		plog_info(c->name, "closing: %s", msg);
	if (chan_error_body(code, msg, &body, &len) == LWC_OK) {
		if (conn_send_frame(c, body, len) != LWC_OK)
			plog_debug(c->name, "cannot queue the error frame");
		free(body);
	}
	c->state = CONN_CLOSING;
	bufferevent_disable(c->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		conn_free(c);
}

/* ---- worker side: socket I/O of a statement ------------------------------ */

struct wio {
	struct conn *c;
	struct px_server *srv;
	int fd;
	int prefetching;               /* a prefetch thread reads the socket */
	int sent_error;                /* the last answer sent was an error  */
};

/* What the client may send ahead while a write of the worker waits: an
 * answer to candidates already sent (get_decisions keeps two chunks in
 * flight).  Past this much the worker stops reading and only waits. */
#define WIO_READ_AHEAD_MAX (64u << 20)

/* The worker's one way to write to its user.  Write all of p; while the
 * socket is full, read what the client sends
 * meanwhile into the connection's stash, so a client that is itself
 * writing (its decisions about the chunk before) never waits on us while
 * we wait on it. */
static int wio_write_all(struct wio *io, const uint8_t *p, size_t len, int timeout_ms)
{
	while (len > 0) {
		ssize_t n = send(io->fd, p, len, MSG_NOSIGNAL);
		struct pollfd pfd = { .fd = io->fd, .events = POLLOUT };
		int r;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return LWC_ERR_CLOSED;
		if (!io->prefetching && io->c->stash &&
		    evbuffer_get_length(io->c->stash) < WIO_READ_AHEAD_MAX)
			pfd.events |= POLLIN;
		r = poll(&pfd, 1, timeout_ms);
		if (r == 0)
			return LWC_ERR_TIMEOUT;
		if (r < 0 && errno != EINTR)
			return LWC_ERR_IO;
		if (r > 0 && (pfd.revents & POLLIN)) {
			int got = evbuffer_read(io->c->stash, io->fd, 256 * 1024);

			if (got == 0)
				return LWC_ERR_CLOSED;
			if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				return LWC_ERR_CLOSED;
		}
	}
	return LWC_OK;
}

/* Read exactly len bytes: the stash first, then the socket. */
static int conn_read_exact(struct wio *io, uint8_t *p, size_t len, int timeout_ms)
{
	size_t got = 0;

	if (io->c->stash && evbuffer_get_length(io->c->stash) > 0) {
		int n = evbuffer_remove(io->c->stash, p, len);
		if (n > 0)
			got = (size_t)n;
	}
	while (got < len) {
		ssize_t n = recv(io->fd, p + got, len - got, 0);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			return LWC_ERR_CLOSED;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd pfd = { .fd = io->fd, .events = POLLIN };
			int r = poll(&pfd, 1, timeout_ms);
			if (r == 0)
				return LWC_ERR_TIMEOUT;
			if (r < 0 && errno != EINTR)
				return LWC_ERR_IO;
			continue;
		}
		return LWC_ERR_CLOSED;
	}
	return LWC_OK;
}

/* Errors of the proxy or the cloud store, not of the user's statement: the
 * operator must find them in this log too, with the connection's id (a
 * full disk, a lost or unreachable store, a block that does not open). */
static int server_side_error(int code)
{
	switch (code) {
	case LWC_ERR_IO: case LWC_ERR_STORE: case LWC_ERR_NO_SPACE: case LWC_ERR_TIMEOUT:
	case LWC_ERR_CLOSED: case LWC_ERR_NOT_FOUND: case LWC_ERR_VERSION:
	case LWC_ERR_BLOCK_SIZE: case LWC_ERR_AUTH: case LWC_ERR_CRYPTO: case LWC_ERR_NOMEM:
	case LWC_ERR_INTEGRITY: case LWC_ERR_TOO_BIG:
		return 1;
	default:
		return 0;
	}
}

static int wio_send(void *ctx, const Lwc__ProxyResponse *resp)
{
	struct wio *io = ctx;
	size_t len = lwc__proxy_response__get_packed_size(resp);
	uint8_t *frame;
	int rc;

	io->sent_error = resp->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR;
	if (resp->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR && resp->error &&
	    server_side_error(resp->error->code)) {
		static struct log_limit lim = LOG_LIMIT_INIT;
		log_limited(&lim, LOG_ERROR, io->c->name, "statement failed: %s",
			    resp->error->message && resp->error->message[0] ? resp->error->message
			    : lwc_strerror(resp->error->code));
	}

	if (len + CHAN_ABYTES > WIRE_FRAME_MAX)
		return LWC_ERR_TOO_BIG;
	/* packed where its ciphertext goes, sealed in place */
	if ((frame = malloc(WIRE_HDR_BYTES + len + CHAN_ABYTES)) == NULL)
		return LWC_ERR_NOMEM;
	lwc__proxy_response__pack(resp, frame + WIRE_HDR_BYTES + CHAN_PLAIN_OFF);
	rc = chan_seal_inplace(io->c->chan, frame + WIRE_HDR_BYTES, len);
	if (rc == LWC_OK) {
		wire_put_u32(frame, (uint32_t)(len + CHAN_ABYTES));
		rc = wio_write_all(io, frame, WIRE_HDR_BYTES + len + CHAN_ABYTES,
				   io->srv->cfg->io_timeout_ms);
	}
	free(frame);
	return rc;
}

/* Decrypt (in place: body is the caller's to free) and decode one request
 * body. */
static int decode_request(struct conn *c, uint8_t *body, size_t len, Lwc__ProxyRequest **out)
{
	const uint8_t *plain = body + CHAN_PLAIN_OFF;
	size_t plain_len = 0;
	int rc;

	*out = NULL;
	if (len < CHAN_ABYTES || chan_open_inplace(c->chan, body, len, &plain_len) != LWC_OK)
		return LWC_ERR_INTEGRITY;
	/* bound the predicates' nesting first: protobuf-c recurses without limit */
	if (pred_wire_check(plain, plain_len) == LWC_OK)
		*out = (Lwc__ProxyRequest *)pb_arena_unpack(&lwc__proxy_request__descriptor,
							    plain_len, plain);
	if (*out == NULL)
		return LWC_ERR_PROTO;
	/* an INSERT's token blocks: the rows' tokens over them */
	if ((rc = px_request_tokens(*out)) != LWC_OK) {
		pb_arena_free(&(*out)->base);
		*out = NULL;
	}
	return rc;
}

/* One whole request frame from the stash and the socket, opened and
 * decoded (LWC_ERR_INTEGRITY: the stream is lost). */
static int read_request(struct wio *io, Lwc__ProxyRequest **req, int *framed)
{
	uint8_t hdr[WIRE_HDR_BYTES], *body;
	uint32_t len;
	int rc;

	*req = NULL;
	*framed = 0;
	if ((rc = conn_read_exact(io, hdr, sizeof(hdr), io->srv->cfg->io_timeout_ms)) != LWC_OK)
		return rc;
	if ((rc = wire_frame_len(hdr, io->srv->cfg->max_frame, &len)) != LWC_OK)
		return rc;
	if ((body = malloc(len)) == NULL)
		return LWC_ERR_NOMEM;
	rc = conn_read_exact(io, body, len, io->srv->cfg->io_timeout_ms);
	if (rc == LWC_OK) {
		*framed = 1;                   /* the stream is in step again */
		rc = decode_request(io->c, body, len, req);
	}
	free(body);
	return rc;
}

static int wio_recv(void *ctx, Lwc__ProxyRequest **req)
{
	struct wio *io = ctx;
	int rc, framed;

	*req = NULL;
	if (io->prefetching)               /* the next request is the prefetch's */
		return LWC_ERR_PROTO;
	if ((rc = read_request(io, req, &framed)) == LWC_ERR_INTEGRITY)
		io->c->close_after = 1;
	return rc;
}

/* ---- pipelined requests --------------------------------------------------
 *
 * A loader sends its next INSERT before the answer to the one at the proxy
 * (lwc_insert_send; after_seq names the one it follows).  While a large
 * INSERT runs, a thread of its own reads and opens the next request, if
 * one comes before the statement ends, so the next statement starts as
 * soon as this one has answered: its transfer and its decoding (a
 * 50,000-row INSERT is 40 MB) overlap the commit before it.  An INSERT
 * reads nothing from its user while it runs (only UPDATE and DELETE do:
 * their decisions), so the socket is the prefetch's alone meanwhile; the
 * worker still writes its answer (without reading ahead, wio_write_all). */

/* INSERTs of at least this many rows prefetch the next request. */
#define PREFETCH_MIN_ROWS  256u

struct prefetch {
	struct wio *io;
	struct px_worker *w;
	uint64_t seq;                  /* the request running meanwhile */
	pthread_t th;
	int wake[2];                   /* written when the statement has ended */
	Lwc__ProxyRequest *req;        /* the next request, when rc is LWC_OK  */
	int rc;                        /* LWC_ERR_NOT_FOUND: none came         */
	int framed;                    /* a whole frame was read (read_request) */
};

static void *prefetch_run(void *arg)
{
	struct prefetch *pf = arg;
	struct wio *io = pf->io;

	pf->rc = LWC_ERR_NOT_FOUND;
	while (evbuffer_get_length(io->c->stash) == 0) {
		struct pollfd pfd[2] = { { .fd = io->fd, .events = POLLIN },
					 { .fd = pf->wake[0], .events = POLLIN } };

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			pf->rc = LWC_ERR_IO;
			return NULL;
		}
		if (pfd[0].revents)
			break;                 /* a request (or the end) is coming */
		if (pfd[1].revents)
			return NULL;           /* the statement ended first         */
	}
	/* once its first byte is here, the whole request (the usual timeout) */
	pf->rc = read_request(io, &pf->req, &pf->framed);
	/* a bulk INSERT behind one: its blocks and entries made now, while
	 * the one before it commits (bulk.c, "ahead") */
	if (pf->rc == LWC_OK)
		bulk_ahead(pf->w, pf->req, pf->seq);
	return NULL;
}

static int prefetch_start(struct prefetch *pf, struct wio *io, struct px_worker *w,
			  uint64_t seq)
{
	memset(pf, 0, sizeof(*pf));
	pf->io = io;
	pf->w = w;
	pf->seq = seq;
	if (pipe(pf->wake) != 0)
		return -1;
	(void)fcntl(pf->wake[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(pf->wake[1], F_SETFD, FD_CLOEXEC);
	io->prefetching = 1;
	if (pthread_create(&pf->th, NULL, prefetch_run, pf) != 0) {
		io->prefetching = 0;
		close(pf->wake[0]);
		close(pf->wake[1]);
		return -1;
	}
	return 0;
}

/* The statement has ended: stop waiting for a request that has not begun
 * to come; one being read is read to its end. */
static void prefetch_finish(struct prefetch *pf)
{
	ssize_t n;

	px_pipe_end(pf->w);
	do
		n = write(pf->wake[1], "", 1);
	while (n < 0 && errno == EINTR);
	pthread_join(pf->th, NULL);
	close(pf->wake[0]);
	close(pf->wake[1]);
	pf->io->prefetching = 0;
}

/* A frame that failed authentication: tell the user, close. */
static void lost_stream(struct wio *io)
{
	static const char msg[] = "frame failed authentication (tampered with, replayed "
				  "or reordered); closing the connection";
	uint8_t *body;
	size_t len;

	plog_info(io->c->name, "frame failed authentication; closing");
	if (chan_error_body(LWC_ERR_INTEGRITY, msg, &body, &len) == LWC_OK) {
		uint8_t hdr[WIRE_HDR_BYTES];
		wire_put_u32(hdr, (uint32_t)len);
		if (wio_write_all(io, hdr, sizeof(hdr), 1000) == LWC_OK &&
		    wio_write_all(io, body, len, 1000) != LWC_OK)
			plog_debug(io->c->name, "cannot send the error");
		free(body);
	}
	io->c->close_after = 1;
}

/* Whether req may prefetch the request after it (pipelining, above). */
static int prefetches(const struct px_server *srv, const Lwc__ProxyRequest *req)
{
	return req->op_case == LWC__PROXY_REQUEST__OP_INSERT && req->insert != NULL &&
	       req->insert->n_rows >= PREFETCH_MIN_ROWS && !atomic_load(&srv->shutting_down);
}

/* The connection's request c->req, then each request prefetched while the
 * one before it ran.  Returns with the connection to go on in the event
 * loop, or c->close_after set. */
static void job_run(struct px_worker *w, struct px_server *srv, struct conn *c)
{
	struct wio io = { c, srv, bufferevent_getfd(c->bev), 0, 0 };
	struct px_io pio = { &io, wio_send, wio_recv, c->is_admin ? NULL : &c->pace };
	Lwc__ProxyRequest *req = NULL;
	int rc, framed = 1;

	rc = decode_request(c, c->req, c->req_len, &req);
	free(c->req);
	c->req = NULL;
	for (;;) {
		struct prefetch pf;
		int replaced = 0, prefetched = 0;

		if (rc == LWC_ERR_INTEGRITY) {
			/* forged, replayed, reordered or truncated: the stream is lost */
			lost_stream(&io);
			break;
		}
		if (rc != LWC_OK && !framed) {
			plog_info(c->name, "closing: %s", lwc_strerror(rc));
			c->close_after = 1;
			break;
		}
		if (px_user_check(srv->st, c->user, c->gen, &replaced) != LWC_OK) {
			char msg[200];
			if (replaced)
				snprintf(msg, sizeof(msg), "the key of user %s was replaced (revoked); "
					 "reconnect with the new key file", c->user);
			else
				snprintf(msg, sizeof(msg), "user %s has been revoked; closing the "
					 "connection", c->user);
			plog_info(c->name, "%s", msg);
			if (px_send_error(&pio, req ? req->seq : 0, LWC_ERR_REVOKED, msg) != LWC_OK)
				plog_debug(c->name, "cannot send the revocation notice");
			c->close_after = 1;
			break;
		}
		if (rc != LWC_OK) {
			c->last_seq = 0;
			c->last_failed = 1;
			if (px_send_error(&pio, 0, LWC_ERR_PROTO, "malformed request") != LWC_OK)
				c->close_after = 1;
			break;
		}
		if (req->after_seq != 0 && (req->after_seq != c->last_seq || c->last_failed)) {
			char msg[160];

			snprintf(msg, sizeof(msg), "not run: it was sent to follow statement %llu, "
				 "which did not succeed", (unsigned long long)req->after_seq);
			c->last_seq = req->seq;
			c->last_failed = 1;
			atomic_fetch_add(&srv->st->not_run, 1);
			bulk_drop(w, req);
			if (px_send_error(&pio, req->seq, LWC_ERR_ABORTED, msg) != LWC_OK)
				c->close_after = 1;
			break;
		}
		px_pipe_begin(w);
		prefetched = prefetches(srv, req) && prefetch_start(&pf, &io, w, req->seq) == 0;
		io.sent_error = 0;
		rc = px_execute(w, req, &pio);
		if (prefetched)
			prefetch_finish(&pf);
		bulk_drop(w, req);
		c->last_seq = req->seq;
		c->last_failed = rc != LWC_OK || io.sent_error;
		pb_arena_free(&req->base);
		req = NULL;
		if (rc != LWC_OK) {
			plog_info(c->name, "closing: %s", lwc_strerror(rc));
			c->close_after = 1;
			bulk_drop(w, NULL);
			if (prefetched)
				pb_arena_free(pf.req ? &pf.req->base : NULL);
			break;
		}
		if (!prefetched || pf.rc == LWC_ERR_NOT_FOUND)
			break;
		if (pf.rc == LWC_OK)
			atomic_fetch_add(&srv->st->read_ahead, 1);
		req = pf.req;
		rc = pf.rc;
		framed = pf.framed;
		if (atomic_load(&srv->shutting_down) && rc == LWC_OK) {
			if (px_send_error(&pio, req->seq, LWC_ERR_SHUTDOWN, "not run: the proxy "
					  "is shutting down") != LWC_OK)
				plog_debug(c->name, "cannot send the shutdown notice");
			c->close_after = 1;
			break;
		}
	}
	/* made ahead for a request that will not run now */
	bulk_drop(w, NULL);
	if (req)
		pb_arena_free(&req->base);
}

struct worker_arg {
	struct px_server *srv;
	struct px_worker *w;
};

static void *worker_loop(void *arg)
{
	struct worker_arg *wa = arg;
	struct px_server *srv = wa->srv;
	struct px_worker *w = wa->w;

	free(wa);
	pthread_mutex_lock(&srv->lock);
	for (;;) {
		struct conn *c;

		while (srv->queue_head == NULL && !srv->stopping_workers)
			pthread_cond_wait(&srv->cond, &srv->lock);
		if (srv->queue_head == NULL)
			break;
		c = srv->queue_head;
		srv->queue_head = c->qnext;
		if (srv->queue_head == NULL)
			srv->queue_tail = NULL;
		pthread_mutex_unlock(&srv->lock);

		job_run(w, srv, c);

		pthread_mutex_lock(&srv->lock);
		c->qnext = NULL;
		if (srv->done_tail)
			srv->done_tail->qnext = c;
		else
			srv->done_head = c;
		srv->done_tail = c;
		event_active(srv->done_ev, EV_READ, 0);
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/* ---- event loop side ------------------------------------------------------ */

static void job_submit(struct conn *c, uint8_t *req, size_t len)
{
	struct px_server *srv = c->srv;
	struct evbuffer *in = bufferevent_get_input(c->bev);

	c->req = req;
	c->req_len = len;
	c->state = CONN_BUSY;
	bufferevent_disable(c->bev, EV_READ);
	if (evbuffer_get_length(in) > 0)
		evbuffer_add_buffer(c->stash, in);
	srv->busy++;
	pthread_mutex_lock(&srv->lock);
	c->qnext = NULL;
	if (srv->queue_tail)
		srv->queue_tail->qnext = c;
	else
		srv->queue_head = c;
	srv->queue_tail = c;
	pthread_cond_signal(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
}

static void done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_server *srv = arg;
	struct conn *list;

	(void)fd;
	(void)what;
	pthread_mutex_lock(&srv->lock);
	list = srv->done_head;
	srv->done_head = srv->done_tail = NULL;
	pthread_mutex_unlock(&srv->lock);
	while (list) {
		struct conn *c = list;

		list = c->qnext;
		srv->busy--;
		if (c->peer_gone || c->close_after || srv->shutting_down) {
			conn_free(c);
			continue;
		}
		if (evbuffer_get_length(c->stash) > 0)
			evbuffer_prepend_buffer(bufferevent_get_input(c->bev), c->stash);
		c->state = CONN_READY;
		bufferevent_enable(c->bev, EV_READ);
		conn_process(c);
	}
	maybe_finish_shutdown(srv);
}

static void handle_hello(struct conn *c, const uint8_t *body, size_t len)
{
	struct px_server *srv = c->srv;
	uint8_t *key, *out = NULL;
	size_t out_len;
	char msg[200];
	int rc;

	if (chan_server_hello(c->chan, body, len) != LWC_OK) {
		conn_fail(c, LWC_ERR_PROTO, "malformed Hello");
		return;
	}
	snprintf(c->user, sizeof(c->user), "%s", chan_key_id(c->chan));
	if ((key = sodium_malloc(32)) == NULL) {
		conn_fail(c, LWC_ERR_NOMEM, "out of memory");
		return;
	}
	rc = px_user_key(srv->st, c->user, key, &c->gen);
	if (rc != LWC_OK) {
		sodium_free(key);
		if (rc == LWC_ERR_REVOKED)
			snprintf(msg, sizeof(msg), "user %s has been revoked", c->user);
		else
			snprintf(msg, sizeof(msg), "unknown user '%s'", c->user);
		conn_fail(c, rc, msg);
		return;
	}
	rc = chan_server_reply(c->chan, key, &out, &out_len);
	sodium_free(key);
	if (rc != LWC_OK) {
		conn_fail(c, LWC_ERR_CRYPTO, "channel set-up failed");
		return;
	}
	if (conn_send_frame(c, out, out_len) != LWC_OK) {
		free(out);
		conn_fail(c, LWC_ERR_NOMEM, "out of memory");
		return;
	}
	free(out);
	c->state = CONN_AUTH;
}

static void handle_auth(struct conn *c, const uint8_t *body, size_t len)
{
	uint8_t *out = NULL;
	size_t out_len;
	char msg[200];
	int rc = chan_server_auth(c->chan, body, len, &out, &out_len);

	if (rc != LWC_OK) {
		snprintf(msg, sizeof(msg), rc == LWC_ERR_AUTH
			 ? "authentication failed: wrong key for user %s" : "malformed Auth from %s",
			 c->user);
		conn_fail(c, rc == LWC_ERR_AUTH ? LWC_ERR_AUTH : LWC_ERR_PROTO, msg);
		return;
	}
	/* revoked between Hello and Auth? */
	if (px_user_check(c->srv->st, c->user, c->gen, NULL) != LWC_OK) {
		free(out);
		snprintf(msg, sizeof(msg), "user %s has been revoked", c->user);
		conn_fail(c, LWC_ERR_REVOKED, msg);
		return;
	}
	if (conn_send_frame(c, out, out_len) != LWC_OK) {
		free(out);
		conn_fail(c, LWC_ERR_NOMEM, "out of memory");
		return;
	}
	free(out);
	px_user_session(c->srv->st, c->user, 1);
	c->counted = 1;
	bufferevent_set_timeouts(c->bev, NULL, NULL);
	c->state = CONN_READY;
	plog_info(c->name, "user %s connected", c->user);
}

/* ---- admin socket --------------------------------------------------------- */

static void admin_reply(struct conn *c, const Lwc__AdminResponse *resp)
{
	size_t len = lwc__admin_response__get_packed_size(resp);
	uint8_t *buf = malloc(len ? len : 1);

	if (buf == NULL) {
		conn_fail(c, LWC_ERR_NOMEM, "out of memory");
		return;
	}
	lwc__admin_response__pack(resp, buf);
	if (len == 0) {
		/* an empty message is an empty frame, which framing forbids */
		Lwc__AdminResponse r2 = *resp;
		r2.message = (char *)"ok";
		free(buf);
		admin_reply(c, &r2);
		return;
	}
	if (conn_send_frame(c, buf, len) != LWC_OK)
		plog_debug(c->name, "cannot queue the answer");
	free(buf);
}

static void admin_error(struct conn *c, int code, const char *msg)
{
	Lwc__AdminResponse resp = LWC__ADMIN_RESPONSE__INIT;
	Lwc__Error e = LWC__ERROR__INIT;

	e.code = code;
	e.message = (char *)(uintptr_t)msg;
	resp.error = &e;
	resp.message = (char *)(uintptr_t)msg;
	admin_reply(c, &resp);
}

static void admin_status(struct conn *c)
{
	struct px_server *srv = c->srv;
	struct px_state *st = srv->st;
	Lwc__AdminResponse resp = LWC__ADMIN_RESPONSE__INIT;
	Lwc__AdminResponse__StatusEntry ent[64], *ptrs[64];
	char vals[64][128];
	const char *keys[64];
	size_t n = 0;
	uint64_t blocks, used, cap, tables = 0, inflight, nstash, jbytes, jfolds, by_age, uniform;
	double jfold_ms;
	uint64_t grouped, above = 0;
	unsigned users_active = 0, users_revoked = 0, sessions = 0;
	unsigned pace_cls = px_pacer_class_common(&srv->pacer);

	pthread_mutex_lock(&st->mu);
	nstash = st->nstash;
	grouped = grp_rows(&st->grps);
	jbytes = jr_bytes(st);
	jfolds = jr_folds(st);
	jfold_ms = jr_fold_ms_avg(st);
	blocks = st->nblocks;
	used = st->used_slots;
	cap = st->nblocks * st->g.theta;
	inflight = st->nlocked;
	for (uint64_t b = 0, lim = px_fill_limit(st); b < st->nblocks; b++)
		above += st->occ[b] > lim;
	by_age = st->pa.by_age;
	uniform = st->pa.uniform;
	for (struct px_table *t = st->tables; t; t = t->next)
		if (!t->dropped)
			tables++;
	pthread_mutex_unlock(&st->mu);
	pthread_mutex_lock(&st->users_mu);
	for (struct px_user *u = st->users; u; u = u->next) {
		if (u->active)
			users_active++;
		else
			users_revoked++;
		sessions += u->sessions;
	}
	pthread_mutex_unlock(&st->users_mu);

/* (a key past the arrays' room is dropped, never written out of bounds) */
#define ST_ADD(k, ...) do { if (n < sizeof(keys) / sizeof(keys[0])) { keys[n] = (k); \
	snprintf(vals[n], sizeof(vals[n]), __VA_ARGS__); n++; } } while (0)
	ST_ADD("blocks", "%llu", (unsigned long long)blocks);
	ST_ADD("block_bytes", "%zu", st->g.sealed_bytes);
	ST_ADD("geometry", "R=%u S=%u m=%u theta=%u cell=%u", st->g.R, st->g.S, st->g.m,
	       st->g.theta, st->g.cell);
	ST_ADD("block_format", "%u", st->g.perm);
	ST_ADD("slots_used", "%llu", (unsigned long long)used);
	ST_ADD("slots_capacity", "%llu", (unsigned long long)cap);
	ST_ADD("occupancy", "%.1f%%", cap ? 100.0 * (double)used / (double)cap : 0.0);
	ST_ADD("tables", "%llu", (unsigned long long)tables);
	ST_ADD("users_active", "%u", users_active);
	ST_ADD("users_revoked", "%u", users_revoked);
	ST_ADD("sessions", "%u", sessions);
	ST_ADD("statements", "%llu", (unsigned long long)atomic_load(&st->stmts));
	ST_ADD("statement_errors", "%llu", (unsigned long long)atomic_load(&st->stmt_errors));
	ST_ADD("cloud_reads", "%llu", (unsigned long long)atomic_load(&st->reads));
	ST_ADD("cloud_writes", "%llu", (unsigned long long)atomic_load(&st->writes));
	ST_ADD("blocks_moved", "%llu", (unsigned long long)atomic_load(&st->blocks_moved));
	ST_ADD("blocks_read", "%llu", (unsigned long long)atomic_load(&st->blocks_read));
	ST_ADD("cloud_rtt_ms", "%.3f", atomic_load(&st->cloud_rtt_us) / 1000.0);
	ST_ADD("blocks_locked", "%llu", (unsigned long long)inflight);
	ST_ADD("padding", "%s, min %u", srv->cfg->pad_text, srv->cfg->engine.pad_min);
	ST_ADD("padding_age", "%s: %llu blocks drawn by age, %llu uniformly",
	       srv->cfg->engine.pad_age ? "match" : "uniform", (unsigned long long)by_age,
	       (unsigned long long)uniform);
	ST_ADD("relocation", "%s", st->relocate ? "on" : "off");
	ST_ADD("answer_early", "%s", px_answer_names[srv->cfg->engine.answer_early]);
	ST_ADD("pace", "%s", srv->pacer.mode == PX_PACE_OFF ? "off"
	       : srv->pacer.mode == PX_PACE_AUTO ? "auto" : "fixed");
	ST_ADD("pace_us", "%llu", (unsigned long long)px_pacer_target(&srv->pacer, pace_cls));
	ST_ADD("pace_cap_us", "%llu", (unsigned long long)px_pacer_cap(&srv->pacer, pace_cls));
	ST_ADD("pace_held", "%llu", (unsigned long long)atomic_load(&srv->pacer.paced));
	ST_ADD("pace_held_ms", "%.1f", (double)atomic_load(&srv->pacer.waited_us) / 1000.0);
	ST_ADD("pace_late", "%llu", (unsigned long long)atomic_load(&srv->pacer.over));
	ST_ADD("stash_rows", "%llu", (unsigned long long)nstash);
	ST_ADD("stash_max", "%u", st->stash_max);
	ST_ADD("journal_bytes", "%llu", (unsigned long long)jbytes);
	ST_ADD("journal_folds", "%llu", (unsigned long long)jfolds);
	ST_ADD("journal_fold_ms_avg", "%.1f", jfold_ms);
	ST_ADD("relocate_max", "%u", st->relocate_max);
	ST_ADD("evict_group", "%u", st->evict_group);
	ST_ADD("fill_limit", "%u", px_fill_limit(st));
	ST_ADD("blocks_above_fill_limit", "%llu", (unsigned long long)above);
	ST_ADD("rows_relocated", "%llu", (unsigned long long)atomic_load(&st->rows_relocated));
	ST_ADD("rows_evicted", "%llu", (unsigned long long)atomic_load(&st->rows_evicted));
	ST_ADD("rows_in_groups", "%llu", (unsigned long long)grouped);
	ST_ADD("group_mates_moved", "%llu",
	       (unsigned long long)atomic_load(&st->group_mates_moved));
	ST_ADD("inserts_via_stash", "%llu", (unsigned long long)atomic_load(&st->inserts_stashed));
	ST_ADD("inserts_placed", "%llu", (unsigned long long)atomic_load(&st->inserts_placed));
	ST_ADD("inserts_bulk", "%llu", (unsigned long long)atomic_load(&st->inserts_bulk));
	ST_ADD("requests_read_ahead", "%llu", (unsigned long long)atomic_load(&st->read_ahead));
	ST_ADD("requests_not_run", "%llu", (unsigned long long)atomic_load(&st->not_run));
	ST_ADD("inserts_made_ahead", "%llu", (unsigned long long)atomic_load(&st->made_ahead));
	ST_ADD("stmts_over_relocate_max", "%llu",
	       (unsigned long long)atomic_load(&st->over_relocate_max));
	ST_ADD("stmts_stash_full", "%llu", (unsigned long long)atomic_load(&st->stash_full));
	ST_ADD("plan_waits", "%llu", (unsigned long long)atomic_load(&st->plan_waits));
	ST_ADD("plan_wait_us", "%llu", (unsigned long long)atomic_load(&st->plan_wait_us));
	{
		uint64_t nc = atomic_load(&st->commits), us = atomic_load(&st->commit_us);
		ST_ADD("commit_ms_avg", "%.3f", nc ? (double)us / 1000.0 / (double)nc : 0.0);
	}
	ST_ADD("group_commits", "%llu", (unsigned long long)atomic_load(&st->group_commits));
	ST_ADD("grouped_selects", "%llu", (unsigned long long)atomic_load(&st->grouped));
	ST_ADD("cloudstore", "%s", srv->cfg->engine.cs_addr);
	ST_ADD("listen", "%s", srv->cfg->listen);
	ST_ADD("uptime_s", "%llu", (unsigned long long)(time(NULL) - srv->started));
#undef ST_ADD
	for (size_t i = 0; i < n; i++) {
		lwc__admin_response__status_entry__init(&ent[i]);
		ent[i].key = (char *)(uintptr_t)keys[i];
		ent[i].value = vals[i];
		ptrs[i] = &ent[i];
	}
	resp.n_status = n;
	resp.status = ptrs;
	resp.message = (char *)"status";
	admin_reply(c, &resp);
}

static void admin_list(struct conn *c)
{
	struct px_state *st = c->srv->st;
	Lwc__AdminResponse resp = LWC__ADMIN_RESPONSE__INIT;
	Lwc__AdminUser *us = NULL, **ptrs = NULL;
	size_t n = 0, i = 0;

	pthread_mutex_lock(&st->users_mu);
	for (struct px_user *u = st->users; u; u = u->next)
		n++;
	us = calloc(n + 1, sizeof(*us));
	ptrs = calloc(n + 1, sizeof(*ptrs));
	if (us && ptrs)
		for (struct px_user *u = st->users; u; u = u->next, i++) {
			lwc__admin_user__init(&us[i]);
			us[i].name = strdup(u->name);
			us[i].active = u->active;
			us[i].created = u->created;
			us[i].revoked = u->revoked;
			us[i].sessions = u->sessions;
			ptrs[i] = &us[i];
		}
	pthread_mutex_unlock(&st->users_mu);
	if (us == NULL || ptrs == NULL) {
		free(us);
		free(ptrs);
		admin_error(c, LWC_ERR_NOMEM, "out of memory");
		return;
	}
	resp.n_users = i;
	resp.users = ptrs;
	resp.message = (char *)"users";
	admin_reply(c, &resp);
	for (size_t j = 0; j < i; j++)
		free(us[j].name);
	free(us);
	free(ptrs);
}

static void admin_handle(struct conn *c, const uint8_t *body, size_t len)
{
	struct px_state *st = c->srv->st;
	Lwc__AdminRequest *req = lwc__admin_request__unpack(NULL, len, body);
	Lwc__AdminResponse resp = LWC__ADMIN_RESPONSE__INIT;
	char msg[256] = "";
	int rc, existed;

	if (req == NULL) {
		admin_error(c, LWC_ERR_PROTO, "malformed admin request");
		return;
	}
	switch (req->op_case) {
	case LWC__ADMIN_REQUEST__OP_USER_ADD: {
		const Lwc__AdminUserAdd *a = req->user_add;
		if (a->name == NULL || a->name[0] == '\0' || strlen(a->name) > PX_NAME_MAX ||
		    a->key.len != 32) {
			admin_error(c, LWC_ERR_ARG, "user add needs a name (1-64 bytes) and a 32-byte key");
			break;
		}
		if (!userkey_name_valid(a->name)) {
			admin_error(c, LWC_ERR_ARG, "invalid user name (letters, digits, _ . @ -; "
				    "not starting with - or .)");
			break;
		}
		rc = px_user_add(st, a->name, a->key.data, a->replace, msg, sizeof(msg));
		if (rc != LWC_OK) {
			admin_error(c, rc, msg);
			break;
		}
		log_info("admin: %s", msg);
		resp.message = msg;
		admin_reply(c, &resp);
		break;
	}
	case LWC__ADMIN_REQUEST__OP_USER_REVOKE: {
		const char *name = req->user_revoke->name;
		if (name == NULL || name[0] == '\0') {
			admin_error(c, LWC_ERR_ARG, "user revoke needs a name");
			break;
		}
		if ((rc = px_user_revoke(st, name, &existed)) != LWC_OK) {
			admin_error(c, rc, "cannot store the revocation");
			break;
		}
		snprintf(msg, sizeof(msg), existed ? "user %s revoked; its key is removed and open "
			 "sessions end at their next request" : "user %s was not an active user; "
			 "nothing to revoke", name);
		log_info("admin: %s", msg);
		resp.message = msg;
		admin_reply(c, &resp);
		break;
	}
	case LWC__ADMIN_REQUEST__OP_USER_LIST:
		admin_list(c);
		break;
	case LWC__ADMIN_REQUEST__OP_STATUS:
		admin_status(c);
		break;
	default:
		admin_error(c, LWC_ERR_UNKNOWN_OP, "unknown admin request");
	}
	lwc__admin_request__free_unpacked(req, NULL);
}

/* Every complete frame in the input, as the state allows. */
static void conn_process(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	while (c->state == CONN_HELLO || c->state == CONN_AUTH || c->state == CONN_READY) {
		uint8_t hdr[WIRE_HDR_BYTES], *body;
		uint32_t len, max;
		int rc;

		max = c->is_admin ? ADMIN_FRAME_MAX
		      : c->state == CONN_READY ? c->srv->cfg->max_frame : WIRE_PREAUTH_MAX;
		/* the worker writes the socket itself: set-up bytes go first */
		if (c->state == CONN_READY && !c->is_admin &&
		    evbuffer_get_length(bufferevent_get_output(c->bev)) > 0)
			return;
		if (c->big.body != NULL) {
			body = c->big.body;
			len = (uint32_t)c->big.len;
			if (!srvkit_frame_fill(&c->big, c->bev))
				return;
			goto frame;
		}
		if (evbuffer_copyout(in, hdr, sizeof(hdr)) < (ssize_t)sizeof(hdr))
			return;
		rc = wire_frame_len(hdr, max, &len);
		if (rc != LWC_OK) {
			char msg[128];
			if (rc == LWC_ERR_TOO_BIG)
				snprintf(msg, sizeof(msg), "frame of %u bytes exceeds the maximum of %u "
					 "bytes", wire_get_u32(hdr), max);
			else
				snprintf(msg, sizeof(msg), "empty frame");
			conn_fail(c, rc, msg);
			return;
		}
		if (evbuffer_get_length(in) < (size_t)len + sizeof(hdr)) {
			if (c->state == CONN_READY && !c->is_admin && len >= SRVKIT_FRAME_DIRECT) {
				/* a large request: read on past the bufferevent */
				if (srvkit_frame_begin(&c->big, len) != LWC_OK) {
					conn_fail(c, LWC_ERR_NOMEM, "out of memory");
					return;
				}
				evbuffer_drain(in, sizeof(hdr));
				continue;
			}
			bufferevent_setwatermark(c->bev, EV_READ, (size_t)len + sizeof(hdr), 0);
			return;
		}
		bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
		if ((body = malloc(len)) == NULL) {
			conn_fail(c, LWC_ERR_NOMEM, "out of memory");
			return;
		}
		evbuffer_drain(in, sizeof(hdr));
		evbuffer_remove(in, body, len);
frame:
		if (c->is_admin) {
			admin_handle(c, body, len);
			free(body);
			continue;
		}
		switch (c->state) {
		case CONN_HELLO:
			handle_hello(c, body, len);
			free(body);
			break;
		case CONN_AUTH:
			handle_auth(c, body, len);
			free(body);
			break;
		case CONN_READY:
			if (c->srv->shutting_down) {
				free(body);
				return;
			}
			job_submit(c, body, len);
			return;
		default:
			free(body);
			return;
		}
		/* conn_fail may have freed c */
		if (c->state == CONN_CLOSING)
			return;
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
		conn_process(c);
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
		if (c->state == CONN_BUSY) {
			c->peer_gone = 1;
			bufferevent_disable(c->bev, EV_READ | EV_WRITE);
			return;
		}
		conn_free(c);
	}
}

static struct conn *conn_new(struct px_server *srv, evutil_socket_t fd, const char *peer,
			     int is_admin)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		evutil_closesocket(fd);
		if (!is_admin)
			srvkit_conn_closed(srv->kit);
		return NULL;
	}
	c->srv = srv;
	c->pace.pacer = &srv->pacer;
	c->id = ++srv->next_conn_id;
	c->is_admin = is_admin;
	snprintf(c->name, sizeof(c->name), "%s %llu %s", is_admin ? "admin" : "conn",
		 (unsigned long long)c->id, peer);
	c->bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->stash = evbuffer_new();
	if (c->bev == NULL || c->stash == NULL ||
	    (!is_admin && chan_new(&c->chan, 1) != LWC_OK)) {
		if (c->bev)
			bufferevent_free(c->bev);
		else
			evutil_closesocket(fd);
		if (c->stash)
			evbuffer_free(c->stash);
		chan_free(c->chan);
		free(c);
		if (!is_admin)
			srvkit_conn_closed(srv->kit);
		return NULL;
	}
	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
	c->state = is_admin ? CONN_READY : CONN_HELLO;
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb, c);
	if (!is_admin) {
		struct timeval hs = { srvkit_handshake_s(srv->kit), 0 };
		bufferevent_set_timeouts(c->bev, &hs, NULL);
	}
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	return c;
}

static void accept_cb(void *arg, evutil_socket_t fd, const char *peer)
{
	struct px_server *srv = arg;

	if (conn_new(srv, fd, peer, 0))
		log_debug("accepted %s", peer);
}

static void admin_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
			    struct sockaddr *sa, int salen, void *arg)
{
	(void)l;
	(void)sa;
	(void)salen;
	conn_new(arg, fd, "unix", 1);
}

static void maybe_finish_shutdown(struct px_server *srv)
{
	if (srv->shutting_down && srv->busy == 0) {
		int pending = 0;
		for (struct conn *c = srv->conns; c; c = c->next)
			if (c->state == CONN_CLOSING || c->state == CONN_BUSY)
				pending = 1;
		if (!pending)
			event_base_loopexit(srv->base, NULL);
	}
}

static void grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_server *srv = arg;

	(void)fd;
	(void)what;
	log_warn("shutdown: %d statement(s) still running after %d s; exiting anyway",
		 srv->busy, SHUTDOWN_GRACE_SEC);
	event_base_loopbreak(srv->base);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct px_server *srv = arg;
	struct conn *c, *next;
	struct timeval tv = { SHUTDOWN_GRACE_SEC, 0 };

	(void)what;
	if (srv->shutting_down)
		return;
	log_info("received %s: finishing statements in flight, then exiting",
		 sig == SIGTERM ? "SIGTERM" : "SIGINT");
	srv->shutting_down = 1;
	srvkit_stop(srv->kit);
	if (srv->admin) {
		evconnlistener_free(srv->admin);
		srv->admin = NULL;
	}
	for (c = srv->conns; c; c = next) {
		next = c->next;
		if (c->state == CONN_BUSY || c->state == CONN_CLOSING)
			continue;
		conn_free(c);
	}
	srv->grace_ev = evtimer_new(srv->base, grace_cb, srv);
	if (srv->grace_ev)
		evtimer_add(srv->grace_ev, &tv);
	maybe_finish_shutdown(srv);
}

static struct evconnlistener *admin_listen(struct px_server *srv, const char *path)
{
	struct sockaddr_un sun;
	struct evconnlistener *l;
	mode_t old;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_error("admin socket path too long: %s", path);
		return NULL;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	unlink(path);                         /* a stale socket of a previous run */
	old = umask(0177);
	l = evconnlistener_new_bind(srv->base, admin_accept_cb, srv,
				    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 16,
				    (struct sockaddr *)&sun, (int)sizeof(sun));
	umask(old);
	if (l == NULL) {
		log_error("cannot listen on %s: %s", path, strerror(errno));
		return NULL;
	}
	if (chmod(path, 0600) != 0) {
		log_error("chmod %s: %s", path, strerror(errno));
		evconnlistener_free(l);
		return NULL;
	}
	return l;
}

int px_server_run(struct px_state *st, const struct px_server_config *cfg)
{
	struct px_server srv;
	struct sockaddr_storage ss;
	socklen_t sl;
	char err[512] = "";
	int rc = LWC_ERR_IO, started = 0, admin_bound = 0;

	memset(&srv, 0, sizeof(srv));
	srv.st = st;
	srv.cfg = cfg;
	srv.started = time(NULL);
	pthread_mutex_init(&srv.lock, NULL);
	px_pacer_init(&srv.pacer, cfg->engine.pace, cfg->engine.pace_us);
	pthread_cond_init(&srv.cond, NULL);
	signal(SIGPIPE, SIG_IGN);

	if ((rc = net_parse_addr(cfg->listen, &ss, &sl, err, sizeof(err))) != LWC_OK) {
		log_error("%s", err);
		goto out;
	}
	evthread_use_pthreads();
	if ((srv.base = event_base_new()) == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	srv.nworkers = cfg->workers > 0 ? cfg->workers : 1;
	srv.workers = calloc((size_t)srv.nworkers, sizeof(*srv.workers));
	srv.threads = calloc((size_t)srv.nworkers, sizeof(*srv.threads));
	if (srv.workers == NULL || srv.threads == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	for (int i = 0; i < srv.nworkers; i++) {
		char name[32];
		snprintf(name, sizeof(name), "worker %d", i);
		if ((rc = px_worker_init(&srv.workers[i], st, &cfg->engine, name)) != LWC_OK)
			goto out;
		if ((rc = px_worker_warm(&srv.workers[i])) != 0) {
			log_error("proxy state: cannot open a read transaction for %s: %s", name,
				  mdb_strerror(rc));
			rc = LWC_ERR_STORE;
			goto out;
		}
	}
	srv.done_ev = event_new(srv.base, -1, 0, done_cb, &srv);
	srv.sigterm_ev = evsignal_new(srv.base, SIGTERM, signal_cb, &srv);
	srv.sigint_ev = evsignal_new(srv.base, SIGINT, signal_cb, &srv);
	if (!srv.done_ev || !srv.sigterm_ev || !srv.sigint_ev) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	evsignal_add(srv.sigterm_ev, NULL);
	evsignal_add(srv.sigint_ev, NULL);
	if ((srv.admin = admin_listen(&srv, cfg->admin_path)) == NULL) {
		rc = LWC_ERR_IO;
		goto out;
	}
	admin_bound = 1;
	{
		/* descriptors besides user connections: up to three cloud
		 * connections per worker (its own, READ ahead, WRITE behind) and
		 * the idle pool, LMDB, the admin socket, the log */
		struct srvkit_cfg kc = { cfg->listen, cfg->max_conns, 32 + 3 * srv.nworkers,
					 cfg->handshake_s };
		if ((rc = srvkit_listen(&srv.kit, srv.base, &kc, accept_cb, &srv, err,
					sizeof(err))) != LWC_OK) {
			log_error("%s", err);
			goto out;
		}
	}
	for (int i = 0; i < srv.nworkers; i++) {
		struct worker_arg *wa = malloc(sizeof(*wa));
		if (wa == NULL) {
			rc = LWC_ERR_NOMEM;
			goto stop;
		}
		wa->srv = &srv;
		wa->w = &srv.workers[i];
		if (pthread_create(&srv.threads[i], NULL, worker_loop, wa) != 0) {
			free(wa);
			log_error("cannot start worker threads");
			rc = LWC_ERR_NOMEM;
			goto stop;
		}
		started++;
	}
	log_info("listening on %s (admin socket %s), cloud store %s, %llu blocks, %d workers, "
		 "at most %d connections", cfg->listen, cfg->admin_path, cfg->engine.cs_addr,
		 (unsigned long long)st->nblocks, srv.nworkers, srvkit_max_conns(srv.kit));
	event_base_dispatch(srv.base);
	rc = LWC_OK;
stop:
	pthread_mutex_lock(&srv.lock);
	srv.stopping_workers = 1;
	pthread_cond_broadcast(&srv.cond);
	pthread_mutex_unlock(&srv.lock);
	for (int i = 0; i < started; i++)
		pthread_join(srv.threads[i], NULL);
	log_info("stopped");
out:
	while (srv.conns)
		conn_free(srv.conns);
	srvkit_free(srv.kit);
	if (srv.admin)
		evconnlistener_free(srv.admin);
	/* ours once bound: serve holds the state directory's lock (main.c) */
	if (admin_bound)
		unlink(cfg->admin_path);
	if (srv.done_ev)
		event_free(srv.done_ev);
	if (srv.sigterm_ev)
		event_free(srv.sigterm_ev);
	if (srv.sigint_ev)
		event_free(srv.sigint_ev);
	if (srv.grace_ev)
		event_free(srv.grace_ev);
	for (int i = 0; srv.workers && i < srv.nworkers; i++)
		px_worker_fini(&srv.workers[i]);
	free(srv.workers);
	free(srv.threads);
	if (srv.base)
		event_base_free(srv.base);
	pthread_mutex_destroy(&srv.lock);
	px_pacer_fini(&srv.pacer);
	pthread_cond_destroy(&srv.cond);
	return rc;
}
