/*
 * bench_reloc.c - relocation on and off, side by side.  With relocation on
 * (the proxy's default) every row a statement touches leaves its block for
 * the proxy's stash and a later statement writes it back into a random free
 * slot of one of its padding blocks; small INSERTs go through the stash.  This
 * experiment measures what that costs per statement and what it does to the
 * clustered layout, on the deployment the run already has:
 *
 *   0. the proxy as started (its default must be on): the first read of
 *      some clustered c100 = v ranges (the probes), a warm-up of point and
 *      100-row SELECTs on clus and scat that moves records, the measured
 *      lines, the probes again, and a stretch of 100-row SELECTs only that
 *      shows how far the stash grows;
 *   1. the same proxy restarted with `serve --relocate off` (same state,
 *      same data; rows left in the stash drain through later statements):
 *      the same warm-up and lines, the probes a third time;
 *   2, 3. on and off once more, the warm-up and the SELECT lines only:
 *      alternating cancels a drift of the machine's other load between
 *      rounds, and the figures pool the two rounds of each kind;
 *   then the proxy restarted as it was (on).
 *
 * Lines: point SELECT (WHERE id = v) and 100-row SELECT (WHERE c100 = v) on
 * both layouts, the 100-row SELECT of clustered ranges the first warm-up
 * read, and INSERT, UPDATE and DELETE of 1,000 and 10,000 rows in a table r
 * like the modify experiment's m, each round on rows of its own.
 * PostgreSQL runs the statements of the first round.  After every
 * repetition `lwc-proxy status` gives the blocks read (gamma), the rows
 * moved into the stash and the rows written back; nothing else talks to
 * the proxy meanwhile, so the differences are this experiment's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define RL_BASE       200000000ull       /* ids of table r                    */
#define RL_ROUND_STEP 100000000ull       /* per round                         */
#define RL_SIZE_STEP  10000000ull        /* per modify size                   */
#define RL_MAX_USED   4096

static const char *const ROUND_NAMES[RL_NROUNDS] = { "on", "off", "on again", "off again" };

static const struct {
	const char *op, *what, *label;     /* label: the plot's              */
	uint64_t rows;
} LINES[RL_NLINES] = {
	[RL_POINT_CLUS] = { "point SELECT", "clustered", "point clus", 1 },
	[RL_POINT_SCAT] = { "point SELECT", "scattered", "point scat", 1 },
	[RL_R100_CLUS] = { "100-row SELECT", "clustered, new ranges", "100 clus", 100 },
	[RL_R100_CLUS_RE] = { "100-row SELECT", "clustered, read before", "100 clus again", 100 },
	[RL_R100_SCAT] = { "100-row SELECT", "scattered", "100 scat", 100 },
	[RL_INS_1K] = { "INSERT", "1 statement", "INSERT 1k", 1000 },
	[RL_INS_10K] = { "INSERT", "statements of --batch", "INSERT 10k", 10000 },
	[RL_UPD_1K] = { "UPDATE", "WHERE c1k = v", "UPDATE 1k", 1000 },
	[RL_UPD_10K] = { "UPDATE", "WHERE c10k = v", "UPDATE 10k", 10000 },
	[RL_DEL_1K] = { "DELETE", "WHERE c1k = v", "DELETE 1k", 1000 },
	[RL_DEL_10K] = { "DELETE", "WHERE c10k = v", "DELETE 10k", 10000 },
};

const char *reloc_label(int line)
{
	return LINES[line].label;
}

/* The state of one run of the experiment. */
struct rl {
	lwc_conn *c;
	PGconn *p;                     /* NULL: LWC only (after the first round) */
	struct rng *rng;
	int round;                     /* 0 on, 1 off, 2 on again, 3 off again  */
	struct pxstat last;            /* the proxy's counters after the last step */
	uint64_t used[RL_MAX_USED];    /* clus c100 values read here             */
	size_t nused;
	uint64_t warm[RL_MAX_USED];    /* those the first warm-up read          */
	size_t nwarm;
	unsigned reps_point, reps_range, reps_mod, warm_point, warm_range;
};

static unsigned scaled(unsigned n)
{
	long r = lround(n * O.reps_scale);
	return r < 1 ? 1 : (unsigned)r;
}

/* A clus c100 value this experiment has not read yet (any, once nearly all
 * have been read: a small --records). */
static uint64_t fresh_v(struct rl *x)
{
	uint64_t nv = O.records / 100, v = 0;

	for (int tries = 0; tries < 200; tries++) {
		int seen = 0;

		v = rng_below(x->rng, nv);
		for (size_t i = 0; i < x->nused && !seen; i++)
			seen = x->used[i] == v;
		if (!seen)
			break;
	}
	if (x->nused < RL_MAX_USED)
		x->used[x->nused++] = v;
	return v;
}

/* The proxy's counters now; *prev gets the ones of the last step.  Every
 * statement reads and then writes the same gamma blocks, so blocks read
 * are half the blocks moved. */
static void step(struct rl *x, struct pxstat *prev, struct pxstat *now)
{
	*prev = x->last;
	pxstat_read(now);
	x->last = *now;
}

static void sel_sql(char *sql, size_t len, int table, const char *col, uint64_t v)
{
	snprintf(sql, len, "SELECT * FROM %s WHERE %s = %llu", TABLES[table], col,
		 (unsigned long long)v);
}

/* One read of clus c100 = v; returns its gamma. */
static unsigned probe(struct rl *x, uint64_t v)
{
	char sql[128];
	struct pxstat prev, now;

	sel_sql(sql, sizeof(sql), 0, "c100", v);
	lwc_select(x->c, sql, 100);
	step(x, &prev, &now);
	return (unsigned)(now.blocks_read - prev.blocks_read);
}

/* The warm-up: point SELECTs on both tables, a 100-row SELECT of each
 * every few of them, untimed; the first round keeps the clus ranges. */
static void warm_up(struct rl *x)
{
	struct reloc_round *rr = &RELOC.round[x->round];
	unsigned every = x->warm_point / x->warm_range, nr = 0;
	char sql[128];
	double t0 = now_s();

	if (every == 0)
		every = 1;
	rr->warm_point = x->warm_point;
	rr->warm_range = x->warm_range;
	for (unsigned i = 0; i < x->warm_point || nr < x->warm_range; i++) {
		progress("relocation %s: warm-up %u / %u", ROUND_NAMES[x->round], i,
			 x->warm_point);
		if (i < x->warm_point)
			for (int t = 0; t < 2; t++) {
				sel_sql(sql, sizeof(sql), t, "id", rng_below(x->rng, O.records));
				lwc_select(x->c, sql, 1);
			}
		if (i % every == 0 && nr < x->warm_range) {
			uint64_t v = fresh_v(x);

			if (x->round == 0 && x->nwarm < RL_MAX_USED)
				x->warm[x->nwarm++] = v;
			sel_sql(sql, sizeof(sql), 0, "c100", v);
			lwc_select(x->c, sql, 100);
			sel_sql(sql, sizeof(sql), 1, "c100", rng_below(x->rng, O.records / 100));
			lwc_select(x->c, sql, 100);
			nr++;
		}
	}
	rr->warm_s = now_s() - t0;
}

/* The counters of a line: gamma per statement of every repetition, the
 * stash's traffic over all of them. */
struct line_acc {
	struct pxstat first;
	double *gamma;
	unsigned n, stmts;
};

static void acc_start(struct rl *x, struct line_acc *a, unsigned reps)
{
	a->first = x->last;
	a->gamma = xmalloc(reps * sizeof(double));
	a->n = a->stmts = 0;
}

/* after a repetition of stmts LWC statements */
static void acc_rep(struct rl *x, struct line_acc *a, unsigned stmts)
{
	struct pxstat prev, now;

	step(x, &prev, &now);
	a->gamma[a->n++] = (double)(now.blocks_read - prev.blocks_read) / stmts;
	a->stmts += stmts;
}

static void acc_end(struct rl *x, struct line_acc *a, struct reloc_line *l)
{
	const struct pxstat *b = &a->first, *e = &x->last;
	struct stats g = stats_of(a->gamma, a->n);
	int r = x->round;

	l->gamma[r] = g.med;
	l->gamma_max[r] = g.max;
	l->moved[r] = (double)(e->rows_relocated - b->rows_relocated) / a->stmts;
	l->evicted[r] = (double)(e->rows_evicted - b->rows_evicted) / a->stmts;
	l->stashed_inserts[r] = (double)(e->inserts_via_stash - b->inserts_via_stash) / a->stmts;
	free(a->gamma);
}

/* A SELECT line: reps statements, PostgreSQL alongside in the first round
 * (alternating which goes first, as the select experiment does). */
static void select_line(struct rl *x, int li)
{
	struct reloc_line *l = &RELOC.line[li];
	int table = li == RL_POINT_SCAT || li == RL_R100_SCAT;
	int point = li == RL_POINT_CLUS || li == RL_POINT_SCAT;
	unsigned reps = point ? x->reps_point : x->reps_range;
	struct line_acc acc;
	double *lw, *pw;
	char sql[128];

	if (li == RL_R100_CLUS_RE) {
		/* each round its own part of the ranges the first warm-up read */
		size_t part = x->nwarm / RL_NROUNDS;
		if (reps > part)
			reps = (unsigned)part;
		if (reps == 0)
			return;
	}
	lw = xmalloc(reps * sizeof(double));
	pw = xmalloc(reps * sizeof(double));
	acc_start(x, &acc, reps);
	for (unsigned i = 0; i < reps; i++) {
		uint64_t v;

		progress("relocation %s: %s %s %u / %u", ROUND_NAMES[x->round], LINES[li].op,
			 LINES[li].what, i, reps);
		if (point)
			v = rng_below(x->rng, O.records);
		else if (li == RL_R100_CLUS)
			v = fresh_v(x);
		else if (li == RL_R100_CLUS_RE)
			v = x->warm[(size_t)x->round * (x->nwarm / RL_NROUNDS) + i];
		else
			v = rng_below(x->rng, O.records / 100);
		sel_sql(sql, sizeof(sql), table, point ? "id" : "c100", v);
		if (x->p && i % 2) {
			pw[i] = pg_select_q(x->p, sql, l->rows);
			lw[i] = lwc_select(x->c, sql, l->rows);
		} else {
			lw[i] = lwc_select(x->c, sql, l->rows);
			if (x->p)
				pw[i] = pg_select_q(x->p, sql, l->rows);
		}
		acc_rep(x, &acc, 1);
	}
	l->lwc[x->round] = stats_of(lw, reps);
	l->sample[x->round] = lw;
	if (x->p)
		l->pg = stats_of(pw, reps);
	acc_end(x, &acc, l);
	free(pw);
}

/* id of the first row of rep j of a modify size (1: 1k, 2: 10k) */
static uint64_t mod_base(int round, int si, unsigned j)
{
	return RL_BASE + (uint64_t)round * RL_ROUND_STEP + (uint64_t)si * RL_SIZE_STEP +
	       (uint64_t)j * SIZES[si];
}

/* INSERT, UPDATE or DELETE (pass 0, 1, 2) of size si, reps_mod times, each
 * on its own rows; PostgreSQL runs each statement after LWC. */
static void modify_line(struct rl *x, int pass, int si)
{
	static const int lines[3][2] = { { RL_INS_1K, RL_INS_10K }, { RL_UPD_1K, RL_UPD_10K },
					 { RL_DEL_1K, RL_DEL_10K } };
	int li = lines[pass][si - 1];
	struct reloc_line *l = &RELOC.line[li];
	uint64_t k = SIZES[si];
	unsigned reps = x->reps_mod;
	double *lw = xmalloc(reps * sizeof(double)), *pw = xmalloc(reps * sizeof(double));
	char sql[256], newpad[PADLEN + 1];
	struct line_acc acc;
	struct sb b = { 0 };

	memset(newpad, x->round ? 'o' : 'n', PADLEN);
	newpad[PADLEN] = '\0';
	acc_start(x, &acc, reps);
	for (unsigned j = 0; j < reps; j++) {
		uint64_t base = mod_base(x->round, si, j), got;
		unsigned stmts = 0;
		double t0;

		progress("relocation %s: %s %s rows %u / %u", ROUND_NAMES[x->round],
			 LINES[li].op, size_name(k, sql, sizeof(sql)), j, reps);
		lw[j] = pw[j] = 0;
		if (pass == 0) {
			for (uint64_t off = 0; off < k; off += O.batch) {
				uint64_t n = k - off < O.batch ? k - off : O.batch;

				insert_sql(&b, "r", NULL, base, off, n);
				t0 = now_s();
				if ((got = lwc_cmd(x->c, b.s)) != n)
					die("LWC INSERT into r: %llu rows, expected %llu",
					    (unsigned long long)got, (unsigned long long)n);
				lw[j] += now_s() - t0;
				stmts++;
				if (x->p) {
					quiet_start();
					t0 = now_s();
					pg_cmd(x->p, b.s);
					pw[j] += now_s() - t0;
				}
			}
			acc_rep(x, &acc, stmts);
			continue;
		}
		if (pass == 1)
			snprintf(sql, sizeof(sql), "UPDATE r SET pad = '%s' WHERE %s = %llu", newpad,
				 COLS[si], (unsigned long long)(base / k));
		else
			snprintf(sql, sizeof(sql), "DELETE FROM r WHERE %s = %llu", COLS[si],
				 (unsigned long long)(base / k));
		t0 = now_s();
		if ((got = lwc_cmd(x->c, sql)) != k)
			die("LWC: %s: %llu rows, expected %llu", sql, (unsigned long long)got,
			    (unsigned long long)k);
		lw[j] = now_s() - t0;
		acc_rep(x, &acc, 1);
		if (x->p) {
			quiet_start();
			t0 = now_s();
			if ((got = pg_cmd(x->p, sql)) != k)
				die("PostgreSQL: %s: %llu rows, expected %llu", sql,
				    (unsigned long long)got, (unsigned long long)k);
			pw[j] = now_s() - t0;
		}
	}
	l->lwc[x->round] = stats_of(lw, reps);
	l->sample[x->round] = lw;
	if (x->p)
		l->pg = stats_of(pw, reps);
	acc_end(x, &acc, l);
	free(pw);
	free(b.s);
}

/* Range SELECTs only: each moves its 100 rows into the stash, and write-backs
 * have the free slots of its few padding blocks, so the stash grows; where
 * it stops, and what a statement costs on the way. */
static void stretch(struct rl *x)
{
	unsigned n = scaled(600), steps = 0;
	struct pxstat first = x->last, now;
	double lat[RL_STRETCH_STEP];
	char sql[128];

	if (n > RL_MAX_STRETCH * RL_STRETCH_STEP)
		n = RL_MAX_STRETCH * RL_STRETCH_STEP;
	for (unsigned i = 0; i < n; i++) {
		progress("relocation on: 100-row SELECTs only, %u / %u", i, n);
		sel_sql(sql, sizeof(sql), 0, "c100", fresh_v(x));
		lat[i % RL_STRETCH_STEP] = lwc_select(x->c, sql, 100);
		if ((i + 1) % RL_STRETCH_STEP == 0) {
			struct stats st = stats_of(lat, RL_STRETCH_STEP);

			pxstat_read(&now);
			RELOC.stretch[steps].stmts = i + 1;
			RELOC.stretch[steps].stash_rows = now.stash_rows;
			RELOC.stretch[steps].moved = now.rows_relocated - first.rows_relocated;
			RELOC.stretch[steps].back = now.rows_evicted - first.rows_evicted;
			RELOC.stretch[steps].stash_full = now.stash_full - first.stash_full;
			RELOC.stretch[steps].med_ms = st.med * 1e3;
			steps++;
		}
	}
	RELOC.nstretch = steps;
	pxstat_read(&x->last);
}

/* One round: warm-up, the lines (the modify lines in the first two rounds
 * only), the probes (also), and in the first round the stretch of range
 * SELECTs. */
static void run_round(struct rl *x)
{
	struct reloc_round *rr = &RELOC.round[x->round];
	int want_on = x->round % 2 == 0;

	pxstat_read(&rr->start);
	x->last = rr->start;
	rr->relocate = rr->start.relocation;
	if (rr->relocate != want_on)
		die("the proxy runs with relocation %s, expected %s", rr->relocate ? "on" : "off",
		    want_on ? "on" : "off");
	warm_up(x);
	pxstat_read(&rr->warm);
	x->last = rr->warm;
	if (rr->warm.stash_rows > 0 && !want_on)
		say("warning: %llu rows still in the stash after the warm-up with relocation off: "
		    "the lines pay for writing them back", (unsigned long long)rr->warm.stash_rows);
	for (int li = 0; li < RL_NSELECT; li++)
		select_line(x, li);
	if (x->round < 2)
		for (int pass = 0; pass < 3; pass++)
			for (int si = 1; si <= 2; si++)
				modify_line(x, pass, si);
	/* the probes again, after the lines (their rows would otherwise fill
	 * the stash just before the first line): blocks read once their rows
	 * were moved (on) or as they are left (off) */
	if (x->round < 2)
		for (unsigned i = 0; i < RELOC.nprobe; i++)
			RELOC.probe_gamma[1 + x->round][i] = probe(x, RELOC.probe_v[i]);
	if (x->round == 0)
		stretch(x);
	pxstat_read(&rr->end);
}

/* The rounds of each kind (even: on, odd: off) pooled. */
static struct stats pool(struct reloc_line *l, int odd)
{
	unsigned n = 0;
	double *v;
	struct stats st;

	for (int r = odd; r < RL_NROUNDS; r += 2)
		n += l->lwc[r].n;
	v = xmalloc((n ? n : 1) * sizeof(double));
	n = 0;
	for (int r = odd; r < RL_NROUNDS; r += 2) {
		if (l->lwc[r].n)
			memcpy(v + n, l->sample[r], l->lwc[r].n * sizeof(double));
		n += l->lwc[r].n;
	}
	st = stats_of(v, n);
	free(v);
	return st;
}

static void print_status(const char *when, const struct pxstat *a, const struct pxstat *b)
{
	out("   %-32s stash %5llu -> %5llu rows; %6llu rows moved to the stash, %6llu written "
	    "back; %llu statements over --relocate-max, %llu found the stash full\n", when,
	    (unsigned long long)a->stash_rows, (unsigned long long)b->stash_rows,
	    (unsigned long long)(b->rows_relocated - a->rows_relocated),
	    (unsigned long long)(b->rows_evicted - a->rows_evicted),
	    (unsigned long long)(b->over_relocate_max - a->over_relocate_max),
	    (unsigned long long)(b->stash_full - a->stash_full));
}

static void print_reloc(void)
{
	const struct reloc_line *l;
	double g[3][RL_MAX_PROBES];
	static const char *const when[3] = { "first read", "again, relocation on",
		"a third time, relocation off" };

	out("\n== Relocation on and off: the same statements with the proxy at its default "
	    "(relocation on), restarted with\n   `lwc-proxy serve --relocate off` (same state and "
	    "data), then on and off again (SELECTs only); latency in ms;\n   PostgreSQL ran the "
	    "statements of the first round\n");
	for (int r = 0; r < RL_NROUNDS; r++) {
		const struct reloc_round *q = &RELOC.round[r];
		char w[64];

		snprintf(w, sizeof(w), "%s, warm-up (%u+%u per table):", ROUND_NAMES[r],
			 q->warm_point, q->warm_range);
		print_status(w, &q->start, &q->warm);
		snprintf(w, sizeof(w), "%s, probes and lines:", ROUND_NAMES[r]);
		print_status(w, &q->warm, &q->end);
	}
	out("%-38s %6s %4s %8s %8s %8s %8s %7s %8s %8s %8s %8s %8s %6s %6s %6s %6s\n", "line",
	    "rows", "reps", "on med", "on p95", "off med", "off p95", "on/off", "PG med", "r1 on",
	    "r2 off", "r3 on", "r4 off", "blk on", "blkoff", "to st", "back");
	for (int li = 0; li < RL_NLINES; li++) {
		char what[64], rm[RL_NROUNDS][16];

		l = &RELOC.line[li];
		if (l->on.n == 0 || l->off.n == 0)
			continue;
		snprintf(what, sizeof(what), "%s, %s", l->op, l->what);
		for (int r = 0; r < RL_NROUNDS; r++)
			if (l->lwc[r].n)
				snprintf(rm[r], sizeof(rm[r]), "%.2f", l->lwc[r].med * 1e3);
			else
				snprintf(rm[r], sizeof(rm[r]), "-");
		out("%-38s %6llu %4u %8.2f %8.2f %8.2f %8.2f %6.2fx %8.2f %8s %8s %8s %8s %6.0f %6.0f "
		    "%6.1f %6.1f\n", what, (unsigned long long)l->rows, l->on.n, l->on.med * 1e3,
		    l->on.p95 * 1e3, l->off.med * 1e3, l->off.p95 * 1e3, l->on.med / l->off.med,
		    l->pg.med * 1e3, rm[0], rm[1], rm[2], rm[3], l->gamma[0], l->gamma[1],
		    l->moved[0], l->evicted[0]);
	}
	out("   on, off: the rounds of each kind pooled (reps: statements pooled); r1-r4: the "
	    "median of each round (the modify lines\n   ran in r1 and r2 only); blk: blocks read "
	    "(and written) per statement in r1 and r2, the median of the\n   repetitions; to st / "
	    "back: rows per statement moved into the stash / written back from it in r1\n");
	out("Blocks read by SELECT * FROM clus WHERE c100 = v (100 rows), the same %u ranges "
	    "each time:\n", RELOC.nprobe);
	for (int k = 0; k < 3 && RELOC.nprobe; k++) {
		struct stats s;

		for (unsigned i = 0; i < RELOC.nprobe; i++)
			g[k][i] = RELOC.probe_gamma[k][i];
		s = stats_of(g[k], RELOC.nprobe);
		out("   %-30s median %5.0f, min %5.0f, max %5.0f\n", when[k], s.med, s.min, s.max);
	}
	if (RELOC.nstretch) {
		out("The stash under clustered 100-row SELECTs only (new ranges, relocation on, after "
		    "the first round's lines):\n%10s %10s %12s %12s %12s %10s\n", "statements",
		    "stash rows", "moved so far", "back so far", "stash full", "med ms");
		for (unsigned i = 0; i < RELOC.nstretch; i++)
			if (i % 5 == 4 || i == 0 || i + 1 == RELOC.nstretch)
				out("%10u %10llu %12llu %12llu %12llu %10.2f\n", RELOC.stretch[i].stmts,
				    (unsigned long long)RELOC.stretch[i].stash_rows,
				    (unsigned long long)RELOC.stretch[i].moved,
				    (unsigned long long)RELOC.stretch[i].back,
				    (unsigned long long)RELOC.stretch[i].stash_full,
				    RELOC.stretch[i].med_ms);
	}
}

/* Restarts the proxy with relocation as given and reconnects. */
static void restart(struct rl *x, int relocate)
{
	lwc_close(x->c);
	lwc_up(0, relocate);
	x->c = lwc_open();
}

void run_reloc(lwc_conn **cp, PGconn *p, struct rng *rng)
{
	struct rl *x = calloc(1, sizeof(*x));
	struct pxstat now;
	char sql[256];
	unsigned np;
	int on = RELOC_DEFAULT;

	if (x == NULL)
		die("out of memory");
	x->rng = rng;
	x->reps_point = scaled(100);
	x->reps_range = scaled(20);
	x->reps_mod = scaled(5);
	x->warm_point = scaled(200);
	x->warm_range = RL_NROUNDS * x->reps_range;
	for (int li = 0; li < RL_NLINES; li++) {
		RELOC.line[li].op = LINES[li].op;
		RELOC.line[li].what = LINES[li].what;
		RELOC.line[li].rows = LINES[li].rows;
	}
	/* the deployment as the run started it: relocation must be on */
	if (*cp)
		lwc_close(*cp);
	lwc_up(0, RELOC_DEFAULT);
	pxstat_read(&now);
	RELOC.default_on = now.relocation;
	if (!now.relocation) {
		say("warning: the deployment's relocation is off by default; the rounds that "
		    "should be on restart it with --relocate on");
		on = RELOC_ON;
		lwc_up(0, on);
	}
	x->c = lwc_open();
	x->p = p;
	snprintf(sql, sizeof(sql), "CREATE TABLE r %s", SCHEMA_COLS_NOPK);
	lwc_cmd(x->c, sql);
	pg_cmd(p, "DROP TABLE IF EXISTS r");
	pg_cmd(p, sql);
	pg_cmd(p, "CREATE INDEX ON r (id)");
	for (int i = 0; i < NSIZES; i++) {
		snprintf(sql, sizeof(sql), "CREATE INDEX ON r (%s)", COLS[i]);
		pg_cmd(p, sql);
	}
	/* the probes' first read: the clustered layout as loaded (or as the
	 * experiments before this one left it) */
	pxstat_read(&x->last);
	np = scaled(20);
	if (np > RL_MAX_PROBES)
		np = RL_MAX_PROBES;
	if (np > O.records / 100 / 4)
		np = (unsigned)(O.records / 100 / 4);
	RELOC.nprobe = np;
	for (unsigned i = 0; i < np; i++) {
		RELOC.probe_v[i] = fresh_v(x);
		RELOC.probe_gamma[0][i] = probe(x, RELOC.probe_v[i]);
	}
	/* on, off, on, off: the same state and data, relocation set for each
	 * run of the proxy */
	for (int r = 0; r < RL_NROUNDS; r++) {
		if (r > 0)
			restart(x, r % 2 ? RELOC_OFF : on);
		x->round = r;
		run_round(x);
		x->p = NULL;
	}
	/* as the run started it, for the experiments after this one */
	restart(x, O.relocate);
	for (int li = 0; li < RL_NLINES; li++) {
		struct reloc_line *l = &RELOC.line[li];

		l->on = pool(l, 0);
		l->off = pool(l, 1);
		for (int r = 0; r < RL_NROUNDS; r++) {
			free(l->sample[r]);
			l->sample[r] = NULL;
		}
	}
	*cp = x->c;
	RELOC.done = 1;
	print_reloc();
	free(x);
}

/* Rows table r receives: for --blocks when the store is created. */
uint64_t reloc_rows_inserted(void)
{
	return 2 * (uint64_t)scaled(5) * (SIZES[1] + SIZES[2]);
}
