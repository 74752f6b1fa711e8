/*
 * audit_storm.c - lwc-audit --storm N: concurrent clients between the audited
 * statements.
 *
 * lwc-audit drives its labelled statements one at a time from one
 * connection, so on its own it audits the proxy's state as one client leaves
 * it: a stash of tens of rows.  Under many clients the stash holds thousands
 * (every running statement counts its rows against it) and the blocks are
 * written back by statements that overlap.  The storm builds that state: N
 * threads, each with its own connection, read ranges of consecutive ids in
 * bursts.  A burst ends with every thread idle, so the audited statements
 * that follow still run alone (their trace lines are theirs: the adversary is
 * given a clean cut, which only helps it), in the state the burst left.
 *
 * With --storm-writes P, P % of the storm's statements write (UPDATEs of a
 * range, INSERTs and DELETEs of rows of the thread's own: audit_storm_sql.c),
 * so that the proxy's stash, blocks and indexes go through every kind of
 * write between the audited statements, whose rows keep their ids.
 */
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "lwc.h"

struct worker {
	pthread_t th;
	struct au_storm *s;
	lwc_conn *conn;
	struct au_rng rng;
	int started;
	struct au_storm_ids ids;        /* the rows it inserted, still there     */
};

struct au_storm {
	struct au_storm_cfg cfg;
	struct worker *w;
	pthread_mutex_t mu;
	pthread_cond_t go;              /* running became 1, or quit            */
	pthread_cond_t idle;            /* a worker finished its statement      */
	int running, quit;
	uint32_t busy;                  /* workers inside a statement           */
	struct au_storm_tally tally;
	int failed;
	char err[512];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct au_storm *s = w->s;
	char sql[8192];

	for (;;) {
		lwc_result *r;
		uint64_t n = 0;
		int rc = 0, bad;
		enum au_storm_kind kind;

		pthread_mutex_lock(&s->mu);
		while (!s->quit && !s->running)
			pthread_cond_wait(&s->go, &s->mu);
		if (s->quit) {
			pthread_mutex_unlock(&s->mu);
			return NULL;
		}
		s->busy++;
		pthread_mutex_unlock(&s->mu);

		kind = au_storm_next(&s->cfg, &w->ids, &w->rng, sql, sizeof(sql));
		r = lwc_exec(w->conn, sql);
		if (lwc_result_status(r) == LWC_RESULT_ROWS)
			while ((rc = lwc_result_next(r)) == 1)
				n++;
		bad = lwc_result_status(r) == LWC_RESULT_ERROR || rc < 0;
		if (!bad)
			au_storm_ran(&s->cfg, &w->ids, kind);

		pthread_mutex_lock(&s->mu);
		if (bad && !s->failed) {
			s->failed = 1;
			snprintf(s->err, sizeof(s->err), "a storm client's statement failed: %s\n"
				 "  statement: %.160s", lwc_result_error(r), sql);
			s->running = 0;
		}
		s->tally.stmts++;
		if (!bad)
			switch (kind) {
			case AU_SK_READ: s->tally.rows += n; break;
			case AU_SK_UPDATE: s->tally.updates++; break;
			case AU_SK_INSERT: s->tally.inserts++; break;
			case AU_SK_DELETE: s->tally.deletes++; break;
			}
		s->busy--;
		pthread_cond_broadcast(&s->idle);
		pthread_mutex_unlock(&s->mu);
		lwc_result_free(r);
	}
}

int au_storm_start(struct au_storm **out, const struct au_storm_cfg *cfg, char *err,
		   size_t errlen)
{
	struct au_storm *s;
	int rc = LWC_OK;

	*out = NULL;
	if (cfg->clients == 0 || cfg->rows == 0 || cfg->id_max == 0) {
		snprintf(err, errlen, "the storm needs clients, rows and ids");
		return LWC_ERR_ARG;
	}
	if (cfg->writes > 100 || (cfg->writes > 0 &&
	    ((int64_t)cfg->id_max >= AU_STORM_ID_BASE ||
	     (int64_t)cfg->clients * AU_STORM_ID_SPAN > INT32_MAX - AU_STORM_ID_BASE))) {
		snprintf(err, errlen, "the storm's writes need at most 100 %%, ids below %lld and at "
			 "most %lld clients", AU_STORM_ID_BASE,
			 (long long)((INT32_MAX - AU_STORM_ID_BASE) / AU_STORM_ID_SPAN));
		return LWC_ERR_ARG;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->w = calloc(cfg->clients, sizeof(*s->w))) == NULL) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	s->cfg = *cfg;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->go, NULL);
	pthread_cond_init(&s->idle, NULL);
	for (uint32_t i = 0; i < cfg->clients; i++) {
		struct worker *w = &s->w[i];

		w->s = s;
		au_storm_ids_init(&w->ids, i);
		au_rng_seed(&w->rng, cfg->seed + 0x9e3779b97f4a7c15ull * (i + 1));
		if ((rc = lwc_connect(&w->conn, cfg->key, cfg->proxy, err, errlen)) != LWC_OK)
			break;
		if (pthread_create(&w->th, NULL, worker_main, w) != 0) {
			snprintf(err, errlen, "starting a storm client's thread failed");
			rc = LWC_ERR_NOMEM;
			break;
		}
		w->started = 1;
	}
	*out = s;                       /* au_storm_stop releases what was made */
	return rc;
}

int au_storm_burst(struct au_storm *s, double secs, char *err, size_t errlen)
{
	struct timespec d = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
	int rc = LWC_OK;

	pthread_mutex_lock(&s->mu);
	if (!s->failed) {
		s->running = 1;
		pthread_cond_broadcast(&s->go);
	}
	pthread_mutex_unlock(&s->mu);
	while (nanosleep(&d, &d) != 0 && errno == EINTR)
		;
	pthread_mutex_lock(&s->mu);
	s->running = 0;
	while (s->busy > 0)
		pthread_cond_wait(&s->idle, &s->mu);
	s->tally.bursts++;
	if (s->failed) {
		snprintf(err, errlen, "%s", s->err);
		rc = LWC_ERR_ABORTED;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

void au_storm_counts(struct au_storm *s, struct au_storm_tally *t)
{
	pthread_mutex_lock(&s->mu);
	*t = s->tally;
	pthread_mutex_unlock(&s->mu);
}

void au_storm_stop(struct au_storm *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->quit = 1;
	s->running = 0;
	pthread_cond_broadcast(&s->go);
	pthread_mutex_unlock(&s->mu);
	for (uint32_t i = 0; i < s->cfg.clients; i++) {
		if (s->w[i].started)
			pthread_join(s->w[i].th, NULL);
		lwc_close(s->w[i].conn);
	}
	pthread_cond_destroy(&s->go);
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->mu);
	free(s->w);
	free(s);
}
