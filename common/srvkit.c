/*
 * srvkit.c - see srvkit.h.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "net.h"
#include "srvkit.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 1000

struct srvkit {
	struct srvkit_cfg cfg;
	struct evconnlistener *listener;
	struct event *resume_ev;       /* re-enables the listener after a pause */
	srvkit_accept_fn fn;
	void *arg;
	int live;                      /* connections handed out, not yet closed */
	int paused;
	int backoff_ms;
	unsigned long long refused;    /* over the limit, since the last warning */
	unsigned long long pauses;     /* accept failures, since the last warning */
	struct log_limit limit_lim, accept_lim;
};

struct log_limit srvkit_preauth_limit = LOG_LIMIT_INIT;

int srvkit_default_max_conns(int reserve_fds)
{
	struct rlimit rl;
	long n;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 4096;
	n = ((long)rl.rlim_cur - reserve_fds) * 3 / 4;
	return n < 4 ? 4 : n > 4096 ? 4096 : (int)n;
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct srvkit *k = arg;

	(void)fd;
	(void)what;
	k->paused = 0;
	if (k->listener)
		evconnlistener_enable(k->listener);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
		      int salen, void *arg)
{
	struct srvkit *k = arg;
	char peer[64];
	int one = 1;

	(void)l;
	(void)salen;
	k->backoff_ms = 0;
	if (k->live >= k->cfg.max_conns) {
		evutil_closesocket(fd);
		k->refused++;
		log_limited(&k->limit_lim, LOG_WARN, NULL, "connection limit of %d reached "
			    "(--max-connections): %llu connection(s) refused", k->cfg.max_conns,
			    k->refused);
		if (k->limit_lim.suppressed == 0)
			k->refused = 0;
		return;
	}
	/* answers are single frames: Nagle would hold their tail for the peer's
	 * delayed ACK */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	net_addr_str(sa, peer, sizeof(peer));
	k->live++;
	k->fn(k->arg, fd, peer);
}

/* accept() failed.  Out of descriptors (or memory), the listening socket
 * stays readable: without a pause the loop would spin and log each turn. */
static void error_cb(struct evconnlistener *l, void *arg)
{
	struct srvkit *k = arg;
	int e = EVUTIL_SOCKET_ERROR();
	struct timeval tv;

	k->backoff_ms = k->backoff_ms ? k->backoff_ms * 2 : BACKOFF_MIN_MS;
	if (k->backoff_ms > BACKOFF_MAX_MS)
		k->backoff_ms = BACKOFF_MAX_MS;
	k->pauses++;
	log_limited(&k->accept_lim, LOG_WARN, NULL, "accept failed: %s (%d connections open, "
		    "limit %d); pausing the listener for %d ms (%llu pause(s))",
		    evutil_socket_error_to_string(e), k->live, k->cfg.max_conns, k->backoff_ms,
		    k->pauses);
	if (k->accept_lim.suppressed == 0)
		k->pauses = 0;
	evconnlistener_disable(l);
	k->paused = 1;
	tv.tv_sec = k->backoff_ms / 1000;
	tv.tv_usec = (k->backoff_ms % 1000) * 1000;
	evtimer_add(k->resume_ev, &tv);
}

int srvkit_listen(struct srvkit **out, struct event_base *base, const struct srvkit_cfg *cfg,
		  srvkit_accept_fn fn, void *arg, char *err, size_t errlen)
{
	struct srvkit *k;
	struct sockaddr_storage ss;
	socklen_t sl;
	int rc;

	*out = NULL;
	if ((rc = net_parse_addr(cfg->listen, &ss, &sl, err, errlen)) != LWC_OK)
		return rc;
	if ((k = calloc(1, sizeof(*k))) == NULL)
		return LWC_ERR_NOMEM;
	k->cfg = *cfg;
	if (k->cfg.max_conns <= 0)
		k->cfg.max_conns = srvkit_default_max_conns(cfg->reserve_fds);
	if (k->cfg.handshake_s <= 0)
		k->cfg.handshake_s = SRVKIT_HANDSHAKE_DEFAULT_S;
	k->fn = fn;
	k->arg = arg;
	if ((k->resume_ev = evtimer_new(base, resume_cb, k)) == NULL) {
		free(k);
		return LWC_ERR_NOMEM;
	}
	k->listener = evconnlistener_new_bind(base, accept_cb, k,
					      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
					      LEV_OPT_CLOSE_ON_EXEC, 128,
					      (struct sockaddr *)&ss, (int)sl);
	if (k->listener == NULL) {
		int e = errno;
		lwc_errf(err, errlen, "cannot listen on %s: %s", cfg->listen,
			 e == EADDRINUSE ? "port already in use" : strerror(e));
		event_free(k->resume_ev);
		free(k);
		return LWC_ERR_IO;
	}
	evconnlistener_set_error_cb(k->listener, error_cb);
	{
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    (long)k->cfg.max_conns + cfg->reserve_fds > (long)rl.rlim_cur)
			log_warn("--max-connections %d and the %d descriptors the server needs "
				 "exceed the open-file limit (%llu): accepts will pause when "
				 "descriptors run out (raise LimitNOFILE / ulimit -n)",
				 k->cfg.max_conns, cfg->reserve_fds, (unsigned long long)rl.rlim_cur);
	}
	*out = k;
	return LWC_OK;
}

void srvkit_conn_closed(struct srvkit *k)
{
	if (k && k->live > 0)
		k->live--;
}

void srvkit_stop(struct srvkit *k)
{
	if (k == NULL)
		return;
	if (k->listener)
		evconnlistener_free(k->listener);
	k->listener = NULL;
	evtimer_del(k->resume_ev);
}

void srvkit_free(struct srvkit *k)
{
	if (k == NULL)
		return;
	srvkit_stop(k);
	event_free(k->resume_ev);
	free(k);
}

int srvkit_max_conns(const struct srvkit *k)
{
	return k->cfg.max_conns;
}

int srvkit_live_conns(const struct srvkit *k)
{
	return k->live;
}

int srvkit_handshake_s(const struct srvkit *k)
{
	return k->cfg.handshake_s;
}

/* ---- large frames ------------------------------------------------------ */

#define FRAME_DIRECT_READ (1u << 20)

int srvkit_frame_begin(struct srvkit_frame *f, size_t len)
{
	if ((f->body = malloc(len ? len : 1)) == NULL)
		return LWC_ERR_NOMEM;
	f->len = len;
	f->got = 0;
	return LWC_OK;
}

int srvkit_frame_fill(struct srvkit_frame *f, struct bufferevent *bev)
{
	evutil_socket_t fd = bufferevent_getfd(bev);
	int n = evbuffer_remove(bufferevent_get_input(bev), f->body + f->got, f->len - f->got);

	if (n > 0)
		f->got += (size_t)n;
	while (f->got < f->len) {
		size_t want = f->len - f->got;
		ssize_t r = read(fd, f->body + f->got,
				 want < FRAME_DIRECT_READ ? want : FRAME_DIRECT_READ);

		if (r > 0)
			f->got += (size_t)r;
		else if (!(r < 0 && errno == EINTR))
			return 0;
	}
	f->body = NULL;
	return 1;
}

void srvkit_frame_free(struct srvkit_frame *f)
{
	free(f->body);
	f->body = NULL;
}
