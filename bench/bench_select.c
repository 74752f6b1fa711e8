/*
 * bench_select.c - SELECT * FROM t WHERE cK = v on both systems (the
 * paper's Figs. 6 and 7): per result size and layout, latency from the
 * call until every row is read, LWC and PostgreSQL alternating which goes
 * first; the same with the proxy restarted at a simulated cloud round trip;
 * and the throughput of concurrent clients, each a thread with its own
 * connection.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* ---- one statement ---------------------------------------------------------------- */

double lwc_select(lwc_conn *c, const char *sql, uint64_t expect)
{
	double t0 = now_s(), t;
	lwc_result *r = lwc_exec(c, sql);
	uint64_t n = 0, sum = 0;
	int rc;

	if (lwc_result_status(r) == LWC_RESULT_ERROR)
		die("LWC: %s\n  statement: %s", lwc_result_error(r), sql);
	while ((rc = lwc_result_next(r)) == 1) {
		sum += (uint64_t)lwc_value_int(r, 0);
		n++;
	}
	if (rc < 0)
		die("LWC: %s\n  statement: %s", lwc_result_error(r), sql);
	lwc_result_free(r);
	t = now_s() - t0;
	if (n != expect)
		die("LWC: %s returned %llu rows, expected %llu", sql, (unsigned long long)n,
		    (unsigned long long)expect);
	(void)sum;
	return t;
}

double pg_select(PGconn *p, const char *sql, uint64_t expect)
{
	double t0 = now_s(), t;
	PGresult *r = PQexec(p, sql);
	uint64_t n, sum = 0;

	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		die("PostgreSQL: %s  statement: %s", PQresultErrorMessage(r), sql);
	n = (uint64_t)PQntuples(r);
	for (uint64_t i = 0; i < n; i++)
		sum += strtoull(PQgetvalue(r, (int)i, 0), NULL, 10);
	PQclear(r);
	t = now_s() - t0;
	if (n != expect)
		die("PostgreSQL: %s returned %llu rows, expected %llu", sql, (unsigned long long)n,
		    (unsigned long long)expect);
	(void)sum;
	return t;
}

/* The same, and the blocks it read (gamma) from the proxy's counters, read
 * before and after, outside the timed part: the change of blocks_read (a
 * SELECT is answered while its last WRITE may still be in flight). */
static double lwc_select_gamma(lwc_conn *c, const char *sql, uint64_t expect, double *gamma)
{
	struct pxstat a, b;
	double t;

	pxstat_read(&a);
	t = lwc_select(c, sql, expect);
	pxstat_read(&b);
	*gamma = (double)(b.blocks_read - a.blocks_read);
	return t;
}

/* Repetitions per result size: fewer for the big ones. */
static unsigned reps_for(uint64_t k, int rtt)
{
	static const unsigned base[NSIZES] = { 20, 10, 4, 2, 1 };
	static const unsigned with_rtt[NSIZES] = { 10, 5, 2, 2, 1 };
	unsigned r = 1;

	for (int i = 0; i < NSIZES; i++)
		if (SIZES[i] == k)
			r = rtt ? with_rtt[i] : base[i];
	r = (unsigned)lround(r * O.reps_scale);
	return r ? r : 1;
}

static void print_select_header(int rtt)
{
	if (rtt)
		out("\n== SELECT * FROM t WHERE cK = v with a simulated proxy-cloud round trip of "
		    "%d ms (PostgreSQL: local, no round trip)\n", rtt);
	else
		out("\n== SELECT * FROM t WHERE cK = v (latency in ms; rows/s = K / median)\n");
	out("%-10s %8s %5s %11s %11s %12s %11s %11s %12s %8s %8s\n", "layout", "rows K", "reps",
	    "LWC med", "LWC p95", "LWC rows/s", "PG med", "PG p95", "PG rows/s", "LWC/PG",
	    "gamma");
}

static void print_select(const struct sel_res *s)
{
	char kb[32];

	out("%-10s %8s %5u %11.2f %11.2f %12.0f %11.2f %11.2f %12.0f %7.2fx %8.0f\n",
	    LAYOUTS[s->layout], size_name(s->k, kb, sizeof(kb)), s->lwc.n, s->lwc.med * 1e3,
	    s->lwc.p95 * 1e3, s->k / s->lwc.med, s->pg.med * 1e3, s->pg.p95 * 1e3,
	    s->k / s->pg.med, s->lwc.med / s->pg.med, s->gamma);
}

/* PostgreSQL runs only at rtt 0 (it has no cloud), later rounds reuse its
 * figures. */
void run_selects(lwc_conn *c, PGconn *p, int rtt, struct rng *rng)
{
	char sql[256], kb[32];

	print_select_header(rtt);
	for (int layout = 0; layout < 2; layout++) {
		for (int si = 0; si < NSIZES; si++) {
			uint64_t k = SIZES[si], nv = O.records / k;
			unsigned reps = reps_for(k, rtt);
			double *lw = xmalloc(reps * sizeof(double)), *pw = xmalloc(reps * sizeof(double));
			double *gw = xmalloc(reps * sizeof(double));
			struct sel_res res = { .rtt = rtt, .layout = layout, .k = k };
			const struct sel_res *base = sel_find(0, layout, k);
			double busy0 = QUIET.busy_ns, pg0 = QUIET.pg_ns;

			if (nv == 0 || (rtt && k > O.rtt_max_rows))
				break;
			/* one untimed warm-up for the small sizes */
			if (k <= 1000) {
				snprintf(sql, sizeof(sql), "SELECT * FROM %s WHERE %s = %llu",
					 TABLES[layout], COLS[si], (unsigned long long)rng_below(rng, nv));
				lwc_select(c, sql, k);
				if (rtt == 0)
					pg_select_q(p, sql, k);
			}
			for (unsigned i = 0; i < reps; i++) {
				progress("SELECT %s %s rows, rtt %d ms: %u / %u", LAYOUTS[layout],
					 size_name(k, kb, sizeof(kb)), rtt, i, reps);
				snprintf(sql, sizeof(sql), "SELECT * FROM %s WHERE %s = %llu",
					 TABLES[layout], COLS[si], (unsigned long long)rng_below(rng, nv));
				/* alternate the order so neither always runs on a warm cache */
				if (rtt == 0 && i % 2) {
					px_settle();
					pw[i] = pg_select_q(p, sql, k);
					px_settle();
					quiet_start();
					lw[i] = lwc_select_gamma(c, sql, k, &gw[i]);
				} else {
					px_settle();
					quiet_start();
					lw[i] = lwc_select_gamma(c, sql, k, &gw[i]);
					if (rtt == 0) {
						px_settle();
						pw[i] = pg_select_q(p, sql, k);
					}
				}
			}
			res.gamma = stats_of(gw, reps).med;
			res.lwc = stats_of(lw, reps);
			if (rtt == 0)
				res.pg = stats_of(pw, reps);
			else if (base)
				res.pg = base->pg;
			else {
				/* no rtt 0 round: measure PostgreSQL now */
				for (unsigned i = 0; i < reps; i++) {
					snprintf(sql, sizeof(sql), "SELECT * FROM %s WHERE %s = %llu",
						 TABLES[layout], COLS[si],
						 (unsigned long long)rng_below(rng, nv));
					pw[i] = pg_select_q(p, sql, k);
				}
				res.pg = stats_of(pw, reps);
			}
			sel_add(res);
			print_select(&SELS[nsels - 1]);
			/* the log store's compaction after LWC's statement runs
			 * beside PostgreSQL's (5-70 % of a core on the scattered
			 * lines, 6 December 2026; --quiet-start) */
			if (QUIET.pg_ns > pg0 && QUIET.busy_ns - busy0 >= 0.01 * (QUIET.pg_ns - pg0))
				out("   (LWC's servers during PostgreSQL's statements: %.1f %% of a "
				    "core)\n", 100.0 * (QUIET.busy_ns - busy0) / (QUIET.pg_ns - pg0));
			free(lw);
			free(pw);
			free(gw);
		}
	}
}

/* ---- concurrent clients ------------------------------------------------------------- */

struct cthread {
	pthread_t th;
	int pg, si, layout;
	uint64_t seed;
	pthread_barrier_t *bar;
	double start, stop;            /* the measuring window                   */
	double *lat;
	size_t nlat, cap;
	double last_end;
	lwc_conn *lc;
	PGconn *pc;
};

static void *client_main(void *arg)
{
	struct cthread *t = arg;
	struct rng rng;
	uint64_t k = SIZES[t->si], nv = O.records / k;
	char sql[256];

	rng_seed(&rng, t->seed);
	pthread_barrier_wait(t->bar);
	while (now_s() < t->start)
		usleep(1000);
	for (;;) {
		double t0 = now_s(), d;

		if (t0 >= t->stop)
			break;
		snprintf(sql, sizeof(sql), "SELECT * FROM %s WHERE %s = %llu", TABLES[t->layout],
			 COLS[t->si], (unsigned long long)rng_below(&rng, nv));
		d = t->pg ? pg_select(t->pc, sql, k) : lwc_select(t->lc, sql, k);
		if (t->nlat == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 256;
			t->lat = xrealloc(t->lat, t->cap * sizeof(double));
		}
		t->lat[t->nlat++] = d;
		t->last_end = now_s();
	}
	return NULL;
}

/* n clients for secs seconds; returns statements/s, fills *st. */
static double run_clients(int pg, int n, double secs, int si, int layout, uint64_t *nstmts,
			  double *elapsed, struct stats *st, struct rng *rng)
{
	struct cthread *ts = calloc((size_t)n, sizeof(*ts));
	pthread_barrier_t bar;
	double start, end = 0, *all;
	size_t total = 0, pos = 0;

	if (ts == NULL)
		die("out of memory");
	pthread_barrier_init(&bar, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		ts[i].pg = pg;
		ts[i].si = si;
		ts[i].layout = layout;
		ts[i].seed = rng_next(rng);
		ts[i].bar = &bar;
		if (pg)
			ts[i].pc = pg_open();
		else
			ts[i].lc = lwc_open();
	}
	start = now_s() + 0.2;
	for (int i = 0; i < n; i++) {
		ts[i].start = start;
		ts[i].stop = start + secs;
		if (pthread_create(&ts[i].th, NULL, client_main, &ts[i]) != 0)
			die("pthread_create failed");
	}
	pthread_barrier_wait(&bar);
	while (now_s() < start + secs) {
		progress("%d %s clients: %.0f / %.0f s", n, pg ? "PostgreSQL" : "LWC",
			 now_s() - start > 0 ? now_s() - start : 0, secs);
		usleep(200000);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(ts[i].th, NULL);
		total += ts[i].nlat;
		if (ts[i].last_end > end)
			end = ts[i].last_end;
		if (pg)
			PQfinish(ts[i].pc);
		else
			lwc_close(ts[i].lc);
	}
	all = xmalloc(total * sizeof(double));
	for (int i = 0; i < n; i++) {
		memcpy(all + pos, ts[i].lat, ts[i].nlat * sizeof(double));
		pos += ts[i].nlat;
		free(ts[i].lat);
	}
	*st = stats_of(all, (unsigned)total);
	free(all);
	free(ts);
	pthread_barrier_destroy(&bar);
	*nstmts = total;
	*elapsed = end - start;
	return total / (end - start);
}

void run_concurrency(struct rng *rng)
{
	const int si = 0, layout = 0;          /* 100-row SELECTs, clustered */

	out("\n== Throughput of concurrent clients (threads, each its own connection), "
	    "SELECT * FROM clus WHERE c100 = v (100 rows);\n   LWC with a %d ms proxy-cloud round "
	    "trip, PostgreSQL local\n", O.clients_rtt);
	out("%7s %8s %11s %11s %11s %9s %8s %8s %7s %6s %7s %7s %11s %11s %8s\n", "clients",
	    "LWC stm", "LWC stm/s", "LWC med ms", "LWC p95 ms", "speedup", "unmoved", "blk/stm",
	    "CPU ms", "waits", "wait ms", "commit", "PG stm/s", "PG med ms", "PG/LWC");
	lwc_up(O.clients_rtt, O.relocate);
	for (int i = 0; i < O.nclients; i++) {
		struct conc_res *c = &CONCS[nconcs];
		const struct conc_res *first = nconcs ? &CONCS[0] : c;
		struct pxstat before, after;
		char unmoved[16] = "-";
		double cpu0, cpu1;

		c->clients = O.clients[i];
		c->rtt = O.clients_rtt;
		c->k = SIZES[si];
		pxstat_read(&before);
		quiet_start();
		cpu0 = lwc_cpu_secs();
		c->lwc_thr = run_clients(0, c->clients, O.client_secs, si, layout, &c->lwc_stmts,
					 &c->lwc_secs, &c->lwc, rng);
		cpu1 = lwc_cpu_secs();
		/* relocation's share of the throughput: statements that found the
		 * stash full move nothing, and run at relocation-off's price */
		pxstat_read(&after);
		c->lwc_counted = after.statements - before.statements;
		c->lwc_unmoved = (after.stash_full - before.stash_full) +
				 (after.over_relocate_max - before.over_relocate_max);
		if (after.relocation && c->lwc_counted > 0)
			snprintf(unmoved, sizeof(unmoved), "%.0f%%",
				 100.0 * (double)c->lwc_unmoved / (double)c->lwc_counted);
		/* what bounds the line: the blocks a statement moves (a range read
		 * again costs a block a row with relocation on), the CPU they take,
		 * the waits for blocks other statements hold, and the commits made
		 * one at a time under the proxy's state lock */
		if (c->lwc_counted > 0) {
			c->lwc_gamma = (double)(after.blocks_read - before.blocks_read) /
				       (double)c->lwc_counted;
			c->lwc_cpu_ms = (cpu1 - cpu0) * 1e3 / (double)c->lwc_counted;
			c->lwc_waits = (double)(after.plan_waits - before.plan_waits) /
				       (double)c->lwc_counted;
			c->lwc_wait_ms = after.plan_wait_us == UINT64_MAX ? -1.0 :
					 (double)(after.plan_wait_us - before.plan_wait_us) / 1e3 /
					 (double)c->lwc_counted;
			/* the mean's change: every statement commits once */
			c->lwc_commit_ms = (after.commit_ms_avg * (double)after.statements -
					    before.commit_ms_avg * (double)before.statements) /
					   (double)c->lwc_counted;
		}
		quiet_start();
		c->pg_thr = run_clients(1, c->clients, O.pg_client_secs, si, layout, &c->pg_stmts,
					&c->pg_secs, &c->pg, rng);
		nconcs++;
		out("%7d %8llu %11.1f %11.2f %11.2f %8.2fx %8s %8.1f %7.2f %6.2f %7.1f %7.2f %11.1f "
		    "%11.2f %7.1fx\n", c->clients, (unsigned long long)c->lwc_stmts, c->lwc_thr,
		    c->lwc.med * 1e3, c->lwc.p95 * 1e3, c->lwc_thr / first->lwc_thr, unmoved,
		    c->lwc_gamma, c->lwc_cpu_ms, c->lwc_waits, c->lwc_wait_ms, c->lwc_commit_ms, c->pg_thr,
		    c->pg.med * 1e3, c->pg_thr / c->lwc_thr);
	}
	out("   unmoved: of the statements the proxy served during the LWC run, those that "
	    "matched rows but moved none\n   (the stash full, or over --relocate-max: "
	    "docs/architecture.md, \"Caps\");\n   blk/stm: blocks a statement read (and "
	    "wrote back); CPU ms: the CPU of the proxy, the cloud store and the clients\n"
	    "   a statement (%ld CPUs give %.0f ms a second); waits: plans retried after "
	    "waiting for a block or a stash row\n   another statement held; wait ms: the time "
	    "those waits took; commit: ms of "
	    "the proxy's commit, made under its state lock (one at a time);\n   all per "
	    "statement the proxy served\n", ncpu, 1e3 * (double)ncpu);
}
