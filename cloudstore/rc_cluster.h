/*
 * rc_cluster.h - a Redis Cluster client on hiredis for one thread: the slot
 * map from CLUSTER SLOTS, a connection per node, commands pipelined and
 * grouped by node, MOVED and ASK redirections, TRYAGAIN / CLUSTERDOWN
 * (resharding, failover) retried with backoff, lost connections reopened,
 * the map re-read after any of them, and WAIT for replica acknowledgement.
 * Everything a call does is bounded by the store string's timeout.
 *
 * Used by the redis-cluster: backend (store_redis.c) and by the tests that
 * look at the raw store.
 */
#ifndef LWC_CS_RC_CLUSTER_H
#define LWC_CS_RC_CLUSTER_H

#include <stddef.h>

#include <hiredis/hiredis.h>

#include "rc_parse.h"

struct rc_cluster;

/* One command of a batch.  The caller fills slot and the arguments (which
 * must stay valid during rc_cluster_exec); exec fills reply with the node's
 * answer (never a redirection; possibly an error reply the caller reads). */
struct rc_cmd {
	unsigned slot;                  /* rc_key_slot() of its key               */
	int argc;
	const char **argv;
	const size_t *argvlen;
	redisReply *reply;              /* owned here; rc_cmds_clear frees it     */
	int ask;                        /* router: node index + 1 of an ASK       */
	int node;                       /* router: node of the current round      */
	unsigned round;                 /* router: round that answered it         */
};

/* Connects to a seed and reads the slot map. */
int rc_cluster_open(struct rc_cluster **out, const struct rc_spec *spec,
		    char *err, size_t errlen) LWC_WUR;
void rc_cluster_close(struct rc_cluster *cl);

/* Runs cmds[0..n) (those without a reply yet) until every one has its
 * answer.  wait > 0: after each node's share of the batch, WAIT for that
 * many replicas; a share not acknowledged is sent again (the caller's
 * commands must be idempotent and must write even when repeated, so the
 * repetition itself is what WAIT waits for).  LWC_ERR_TIMEOUT when the
 * store's timeout passes first (err names the last obstacle). */
int rc_cluster_exec(struct rc_cluster *cl, struct rc_cmd *cmds, size_t n, int wait,
		    char *err, size_t errlen) LWC_WUR;

/* Frees the replies of cmds[0..n) and forgets their redirections. */
void rc_cmds_clear(struct rc_cmd *cmds, size_t n);

/* Counters since open: redirections followed, map refreshes, reconnects,
 * commands sent again (for the failover and resharding tests' reports). */
struct rc_counters {
	unsigned long moved, ask, retry, refresh, reconnect, wait_retry;
};
void rc_cluster_counters(const struct rc_cluster *cl, struct rc_counters *out);

#endif
