/*
 * rc_cluster.c - Redis Cluster routing on hiredis (rc_cluster.h).
 *
 * A round sends every pending command to the node the map (or an ASK) names,
 * one pipeline per node: every node's share is written first, so the nodes
 * work at the same time, then each node's answers are read in order.  Answers that redirect (MOVED, ASK) or say "not
 * now" (TRYAGAIN during a slot migration, CLUSTERDOWN / MASTERDOWN during a
 * failover, LOADING after a restart) leave the command pending; a lost
 * connection leaves the rest of that node's share pending and marks the map
 * stale.  Rounds repeat, the map re-read from any node that answers before
 * a round when it is stale, with a jittered backoff when a round made no
 * progress, until every command has its answer or the timeout passes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rc_cluster.h"

#define RC_CONNECT_MS  2000     /* one connection attempt                  */
#define RC_IO_MS       10000    /* one answer (a WAIT takes up to RC_WAIT_MS) */
#define RC_WAIT_MS     1000     /* one WAIT                                */
#define RC_BACKOFF_MAX 200      /* ms between rounds that made no progress */

struct rc_node {
	char host[RC_HOST_MAX];
	int port;
	redisContext *c;                /* NULL: not connected                     */
};

struct rc_cluster {
	struct rc_spec spec;
	struct rc_node *node;           /* every node ever named, never removed    */
	size_t nnodes, cap;
	uint16_t owner[RC_SLOTS];       /* node index + 1 serving the slot; 0 = ?  */
	int stale;                      /* re-read the map before the next round   */
	unsigned round;                 /* rounds of rc_cluster_exec so far        */
	uint32_t rng;                   /* backoff jitter                          */
	char last[512];                 /* the last obstacle, for the timeout text */
	struct rc_counters ctr;
};

/* Records the last obstacle met (reported if the timeout passes). */
static void set_last(struct rc_cluster *cl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_last(struct rc_cluster *cl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cl->last, sizeof(cl->last), fmt, ap);
	va_end(ap);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static struct timeval tv_ms(int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	return tv;
}

/* Index of host:port, added when new; -1 when out of memory. */
static int node_get(struct rc_cluster *cl, const char *host, int port)
{
	for (size_t i = 0; i < cl->nnodes; i++)
		if (cl->node[i].port == port && strcmp(cl->node[i].host, host) == 0)
			return (int)i;
	if (cl->nnodes == cl->cap) {
		size_t cap = cl->cap ? cl->cap * 2 : 8;
		struct rc_node *n = realloc(cl->node, cap * sizeof(*n));
		if (n == NULL)
			return -1;
		cl->node = n;
		cl->cap = cap;
	}
	memset(&cl->node[cl->nnodes], 0, sizeof(cl->node[0]));
	snprintf(cl->node[cl->nnodes].host, RC_HOST_MAX, "%s", host);
	cl->node[cl->nnodes].port = port;
	return (int)cl->nnodes++;
}

static void node_drop(struct rc_cluster *cl, int i, const char *why)
{
	struct rc_node *nd = &cl->node[i];

	set_last(cl, "%s:%d: %s", nd->host, nd->port, why);
	if (nd->c) {
		redisFree(nd->c);
		nd->c = NULL;
	}
	cl->stale = 1;
}

/* The node's connection, opened when needed; NULL (and cl->last) if not. */
static redisContext *node_conn(struct rc_cluster *cl, int i)
{
	struct rc_node *nd = &cl->node[i];
	redisContext *c;

	if (nd->c)
		return nd->c;
	c = redisConnectWithTimeout(nd->host, nd->port, tv_ms(RC_CONNECT_MS));
	if (c == NULL || c->err) {
		set_last(cl, "%s:%d: connect: %s", nd->host, nd->port,
			 c ? c->errstr : "out of memory");
		redisFree(c);
		cl->stale = 1;
		return NULL;
	}
	if (redisSetTimeout(c, tv_ms(RC_IO_MS)) != REDIS_OK)
		set_last(cl, "%s:%d: cannot set a timeout", nd->host,
			 nd->port);
	redisEnableKeepAlive(c);
	cl->ctr.reconnect++;
	nd->c = c;
	return c;
}

/* Reads CLUSTER SLOTS from node i into the map; LWC_OK when it did. */
static int refresh_from(struct rc_cluster *cl, int i)
{
	struct rc_range *rg;
	redisContext *c = node_conn(cl, i);
	redisReply *r;
	size_t n = 0;
	int rc;

	if (c == NULL)
		return LWC_ERR_IO;
	r = redisCommand(c, "CLUSTER SLOTS");
	if (r == NULL) {
		node_drop(cl, i, c->errstr[0] ? c->errstr : "connection lost");
		return LWC_ERR_IO;
	}
	rg = malloc(RC_SLOTS * sizeof(*rg));
	if (rg == NULL) {
		freeReplyObject(r);
		return LWC_ERR_NOMEM;
	}
	rc = rc_parse_slots(r, rg, RC_SLOTS, &n);
	if (rc != LWC_OK || n == 0) {
		set_last(cl, "%s:%d: CLUSTER SLOTS: %s", cl->node[i].host,
			 cl->node[i].port, r->type == REDIS_REPLY_ERROR ? r->str :
			 n == 0 && rc == LWC_OK ? "no slot is served" : "malformed answer");
		freeReplyObject(r);
		free(rg);
		return LWC_ERR_PROTO;
	}
	freeReplyObject(r);
	memset(cl->owner, 0, sizeof(cl->owner));
	rc = LWC_OK;
	for (size_t k = 0; k < n && rc == LWC_OK; k++) {
		/* i may move when node_get grows the table: copy the host first */
		char host[RC_HOST_MAX];
		int j;
		snprintf(host, sizeof(host), "%s", rg[k].host[0] ? rg[k].host : cl->node[i].host);
		j = node_get(cl, host, rg[k].port);
		if (j < 0) {
			rc = LWC_ERR_NOMEM;
			break;
		}
		for (unsigned s = rg[k].start; s <= rg[k].end; s++)
			cl->owner[s] = (uint16_t)(j + 1);
	}
	free(rg);
	if (rc == LWC_OK) {
		cl->stale = 0;
		cl->ctr.refresh++;
	}
	return rc;
}

/* Re-reads the map: connected nodes first, then the seeds, then the rest. */
static int refresh(struct rc_cluster *cl)
{
	for (size_t i = 0; i < cl->nnodes; i++)
		if (cl->node[i].c && refresh_from(cl, (int)i) == LWC_OK)
			return LWC_OK;
	for (size_t k = 0; k < cl->spec.nseeds; k++) {
		int i = node_get(cl, cl->spec.seed[k].host, cl->spec.seed[k].port);
		if (i >= 0 && refresh_from(cl, i) == LWC_OK)
			return LWC_OK;
	}
	for (size_t i = 0; i < cl->nnodes; i++)
		if (cl->node[i].c == NULL && refresh_from(cl, (int)i) == LWC_OK)
			return LWC_OK;
	return LWC_ERR_IO;
}

int rc_cluster_open(struct rc_cluster **out, const struct rc_spec *spec,
		    char *err, size_t errlen)
{
	struct rc_cluster *cl = calloc(1, sizeof(*cl));

	*out = NULL;
	if (cl == NULL)
		return LWC_ERR_NOMEM;
	cl->spec = *spec;
	cl->rng = (uint32_t)now_ms() ^ (uint32_t)(uintptr_t)cl ^ 0x9e3779b9u;
	if (cl->rng == 0)
		cl->rng = 1;
	if (refresh(cl) != LWC_OK) {
		lwc_errf(err, errlen, "redis-cluster: no seed node gives a slot map (%s)",
			 cl->last[0] ? cl->last : "no seed");
		rc_cluster_close(cl);
		return LWC_ERR_STORE;
	}
	*out = cl;
	return LWC_OK;
}

void rc_cluster_close(struct rc_cluster *cl)
{
	if (cl == NULL)
		return;
	for (size_t i = 0; i < cl->nnodes; i++)
		if (cl->node[i].c)
			redisFree(cl->node[i].c);
	free(cl->node);
	free(cl);
}

void rc_cmds_clear(struct rc_cmd *cmds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (cmds[i].reply)
			freeReplyObject(cmds[i].reply);
		cmds[i].reply = NULL;
		cmds[i].ask = 0;
	}
}

void rc_cluster_counters(const struct rc_cluster *cl, struct rc_counters *out)
{
	*out = cl->ctr;
}

static int starts(const redisReply *r, const char *word)
{
	size_t n = strlen(word);
	return r->len >= n && memcmp(r->str, word, n) == 0 &&
	       (r->len == n || r->str[n] == ' ');
}

/* What an answer means for its command: 1 final, 0 send again. */
static int judge(struct rc_cluster *cl, int i, struct rc_cmd *cmd, redisReply *r)
{
	char host[RC_HOST_MAX];
	unsigned slot;
	int ask, port, j, rc;

	if (r->type != REDIS_REPLY_ERROR)
		return 1;
	rc = rc_parse_redirect(r->str, r->len, &ask, &slot, host, &port);
	if (rc == LWC_OK) {
		j = node_get(cl, host[0] ? host : cl->node[i].host, port);
		if (j < 0)
			return 1;                      /* out of memory: report it */
		if (ask) {
			cmd->ask = j + 1;
			cl->ctr.ask++;
		} else {
			cl->owner[slot] = (uint16_t)(j + 1);
			cmd->ask = 0;
			cl->stale = 1;
			cl->ctr.moved++;
		}
		return 0;
	}
	if (starts(r, "TRYAGAIN") || starts(r, "CLUSTERDOWN") || starts(r, "MASTERDOWN") ||
	    starts(r, "LOADING") || starts(r, "READONLY")) {
		set_last(cl, "%s:%d: %.*s", cl->node[i].host,
			 cl->node[i].port, (int)(r->len > 200 ? 200 : r->len), r->str);
		cmd->ask = 0;
		cl->stale = 1;
		cl->ctr.retry++;
		return 0;
	}
	return 1;
}

/* Frees the answers node i gave in this round (not acknowledged by WAIT):
 * those commands go again. */
static void share_undo(struct rc_cluster *cl, int i, struct rc_cmd *cmds, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (cmds[k].reply != NULL && cmds[k].node == i && cmds[k].round == cl->round) {
			freeReplyObject(cmds[k].reply);
			cmds[k].reply = NULL;
		}
	}
}

/* Sends node i's share of the pending commands (and the WAIT) without
 * reading: every node of a round works at once.  1 when sent, 0 when the
 * node has no share, -1 when it cannot be reached. */
static int share_send(struct rc_cluster *cl, int i, struct rc_cmd *cmds, size_t n, int wait)
{
	redisContext *c;
	size_t count = 0;
	int done = 0;

	for (size_t k = 0; k < n; k++)
		if (cmds[k].reply == NULL && cmds[k].node == i)
			count++;
	if (count == 0)
		return 0;
	if ((c = node_conn(cl, i)) == NULL)
		return -1;
	for (size_t k = 0; k < n; k++) {
		if (cmds[k].reply != NULL || cmds[k].node != i)
			continue;
		if (cmds[k].ask)
			redisAppendCommand(c, "ASKING");
		redisAppendCommandArgv(c, cmds[k].argc, cmds[k].argv, cmds[k].argvlen);
	}
	if (wait > 0)
		redisAppendCommand(c, "WAIT %d %d", wait, RC_WAIT_MS);
	/* the node buffers its answers (Redis keeps a client's replies in
	 * memory), so writing everything before reading cannot deadlock */
	while (!done) {
		if (redisBufferWrite(c, &done) != REDIS_OK) {
			node_drop(cl, i, c->errstr[0] ? c->errstr : "connection lost");
			return -1;
		}
	}
	return 1;
}

/* Reads the answers of node i's share sent by share_send; *moved counts the
 * commands redirected (progress of a kind). */
static int share_read(struct rc_cluster *cl, int i, struct rc_cmd *cmds, size_t n, int wait,
		      size_t *moved)
{
	redisContext *c = cl->node[i].c;
	void *rv;

	for (size_t k = 0; k < n; k++) {
		redisReply *r;

		if (cmds[k].reply != NULL || cmds[k].node != i)
			continue;
		if (cmds[k].ask) {
			if (redisGetReply(c, &rv) != REDIS_OK)
				goto lost;
			freeReplyObject(rv);
		}
		if (redisGetReply(c, &rv) != REDIS_OK)
			goto lost;
		r = rv;
		if (judge(cl, i, &cmds[k], r)) {
			cmds[k].reply = r;
			cmds[k].round = cl->round;
		} else {
			freeReplyObject(r);
			cmds[k].node = -1;     /* not this node's any more */
			(*moved)++;
		}
	}
	if (wait > 0) {
		redisReply *w;
		if (redisGetReply(c, &rv) != REDIS_OK)
			goto lost;
		w = rv;
		if (w->type != REDIS_REPLY_INTEGER || w->integer < wait) {
			set_last(cl, "%s:%d: WAIT %d: %s%lld replica(s) "
				 "acknowledged", cl->node[i].host, cl->node[i].port, wait,
				 w->type == REDIS_REPLY_INTEGER ? "" : "error, ",
				 w->type == REDIS_REPLY_INTEGER ? w->integer : 0LL);
			freeReplyObject(w);
			share_undo(cl, i, cmds, n);
			cl->ctr.wait_retry++;
			return LWC_ERR_TIMEOUT;
		}
		freeReplyObject(w);
	}
	return LWC_OK;
lost:
	if (wait > 0)
		share_undo(cl, i, cmds, n);
	node_drop(cl, i, c->errstr[0] ? c->errstr : "connection lost");
	return LWC_ERR_IO;
}

static size_t pending(const struct rc_cmd *cmds, size_t n)
{
	size_t left = 0;

	for (size_t k = 0; k < n; k++)
		left += cmds[k].reply == NULL;
	return left;
}

int rc_cluster_exec(struct rc_cluster *cl, struct rc_cmd *cmds, size_t n, int wait,
		    char *err, size_t errlen)
{
	long long deadline = now_ms() + cl->spec.timeout_ms;
	size_t left = pending(cmds, n), nn, sent_cap = 0;
	unsigned char *sent = NULL;           /* nodes that got a share this round */
	int idle = 0;

	cl->last[0] = '\0';
	while (left > 0) {
		size_t moved = 0, before = left;

		cl->round++;
		if (cl->stale)
			(void)refresh(cl);
		for (size_t k = 0; k < n; k++) {
			if (cmds[k].reply != NULL)
				continue;
			cmds[k].node = cmds[k].ask ? cmds[k].ask - 1 :
				       (int)cl->owner[cmds[k].slot & (RC_SLOTS - 1)] - 1;
			if (cmds[k].node < 0) {
				set_last(cl, "slot %u is served by no node",
					 cmds[k].slot);
				cl->stale = 1;
			}
		}
		nn = cl->nnodes;
		if (nn > sent_cap) {
			unsigned char *ns = realloc(sent, nn);
			if (ns == NULL) {
				free(sent);
				return LWC_ERR_NOMEM;
			}
			sent = ns;
			sent_cap = nn;
		}
		for (size_t i = 0; i < nn; i++)
			sent[i] = share_send(cl, (int)i, cmds, n, wait) == 1;
		for (size_t i = 0; i < nn; i++)
			if (sent[i])
				(void)share_read(cl, (int)i, cmds, n, wait, &moved);
		left = pending(cmds, n);
		if (left == 0)
			break;
		if (now_ms() >= deadline) {
			lwc_errf(err, errlen, "redis-cluster: %zu of %zu command(s) unanswered after "
				 "%d ms: %s", left, n, cl->spec.timeout_ms,
				 cl->last[0] ? cl->last : "no node answers");
			free(sent);
			return LWC_ERR_TIMEOUT;
		}
		if (left == before && moved == 0) {
			long ms = idle < 5 ? 10L << idle : RC_BACKOFF_MAX, left_ms;
			cl->rng ^= cl->rng << 13;
			cl->rng ^= cl->rng >> 17;
			cl->rng ^= cl->rng << 5;
			if (ms > RC_BACKOFF_MAX)
				ms = RC_BACKOFF_MAX;
			ms = ms / 2 + (long)(cl->rng % (uint32_t)ms) + 1;
			left_ms = (long)(deadline - now_ms());
			sleep_ms(ms < left_ms ? ms : left_ms > 0 ? left_ms : 1);
			idle++;
		} else {
			idle = 0;
		}
	}
	free(sent);
	return LWC_OK;
}
