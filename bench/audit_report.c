/*
 * audit_report.c - lwc-audit's summary of a run: the attacks on the audited
 * statements, the figures around them (gamma, latency, the ground truth's
 * consistency with the trace), the checks against the thresholds of
 * DESIGN.md section 6, the table on stdout and the JSON file.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"

const int au_isect_r[AU_NISECT] = { 2, 3, 5 };
const uint32_t au_size_k[AU_NSIZE] = { 1, 10, 100 };

static const char *const isect_names[AU_NISECT] = {
	"intersection r=2 identified", "intersection r=3 identified",
	"intersection r=5 identified",
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const char *status_get(const struct au_run *run, const char *key)
{
	for (size_t i = 0; i < run->nstatus; i++)
		if (strcmp(run->status[i].key, key) == 0)
			return run->status[i].value;
	return NULL;
}

/* Half-width of an approximate 95% interval of x successes in n
 * (Agresti-Coull: sound at 0 and 1 too). */
static double ci_prop(double x, double n)
{
	double nt = n + 4, p = (x + 2) / nt;

	return n > 0 ? 1.96 * sqrt(p * (1 - p) / nt) : 0;
}

/* ... of the difference of two proportions (Agresti-Caffo). */
static double ci_diff(double x1, double n1, double x2, double n2)
{
	double p1 = (x1 + 1) / (n1 + 2), p2 = (x2 + 1) / (n2 + 2);

	if (n1 <= 0 || n2 <= 0)
		return 0;
	return 1.96 * sqrt(p1 * (1 - p1) / (n1 + 2) + p2 * (1 - p2) / (n2 + 2));
}

static double frac(uint64_t x, uint64_t n)
{
	return n ? (double)x / (double)n : 0.0;
}

enum { ST_GAMMA, ST_KBLOCKS, ST_LATENCY_MS };

/* Attack 3 over every Zipf round (each its own set of ids); the figures are
 * those of the median round by hits beyond chance, so one unlucky round of
 * 20 ids does not decide the check. */
static int frequency_rounds(const struct au_stmt *s, size_t n, const struct au_run *run,
			    struct au_freq *out)
{
	uint32_t rounds = run->zipf_rounds ? (uint32_t)run->zipf_rounds : 1;
	uint32_t order[AU_FREQ_MAX_ROUNDS] = { 0 };
	struct au_freq *f;
	int rc = LWC_OK;

	if (rounds > AU_FREQ_MAX_ROUNDS)
		rounds = AU_FREQ_MAX_ROUNDS;
	if ((f = calloc(rounds, sizeof(*f))) == NULL)
		return LWC_ERR_NOMEM;
	for (uint32_t r = 0; r < rounds && rc == LWC_OK; r++) {
		rc = au_attack_frequency(s, n, AU_FREQ_TOP, r, &f[r]);
		order[r] = r;
	}
	if (rc == LWC_OK) {
		for (uint32_t a = 1; a < rounds; a++)             /* by hits */
			for (uint32_t b = a; b > 0 && f[order[b]].hits - f[order[b]].chance <
					     f[order[b - 1]].hits - f[order[b - 1]].chance; b--) {
				uint32_t t = order[b];
				order[b] = order[b - 1];
				order[b - 1] = t;
			}
		*out = f[order[rounds / 2]];
		out->rounds = rounds;
		for (uint32_t r = 0; r < rounds; r++) {
			out->round_hits[r] = f[r].hits;
			out->round_chance[r] = f[r].chance;
		}
	}
	free(f);
	return rc;
}

/* The median, min and max of the g->n values v (sorted in place, freed). */
static void gstat_close(struct au_gstat *g, double *v)
{
	if (g->n) {
		g->median = au_median(v, g->n);
		g->min = v[0];
		g->max = v[g->n - 1];
	}
	free(v);
}

/* A figure (gamma, the ground truth's kblocks, or the latency) of the
 * statements of a kind (of phase ph, or any when ph < 0; with k rows
 * matched, or any when k = 0). */
static int stat_of(const struct au_stmt *s, size_t n, int ph, enum au_kind kind, uint32_t k,
		   int what, struct au_gstat *g)
{
	double *v = malloc((n ? n : 1) * sizeof(*v));

	memset(g, 0, sizeof(*g));
	if (v == NULL)
		return LWC_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct au_stmt *x = &s[i];

		if (ph >= 0 ? (int)x->phase != ph : x->phase == AU_P_STORM)
			continue;
		if (x->kind != kind || (k && x->k != k))
			continue;
		v[g->n++] = what == ST_KBLOCKS ? (double)x->kblocks :
			    what == ST_LATENCY_MS ? x->secs * 1000.0 : (double)x->o.read_blocks;
	}
	gstat_close(g, v);
	return LWC_OK;
}

/* gamma or the ground truth's blocks of the range reads: first reads of
 * their ranges (later = 0) or the reads after them (later = 1). */
static int range_stat(const struct au_stmt *s, size_t n, int later, int what,
		      struct au_gstat *g)
{
	double *v = malloc((n ? n : 1) * sizeof(*v));

	memset(g, 0, sizeof(*g));
	if (v == NULL)
		return LWC_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		if (s[i].kind == AU_RANGE && (s[i].rep > 0) == (later != 0))
			v[g->n++] = what == ST_KBLOCKS ? (double)s[i].kblocks :
				    (double)s[i].o.read_blocks;
	gstat_close(g, v);
	return LWC_OK;
}

/* Attack 8's figure: precision of the guess beyond the base rate. */
static double shared_adv(const struct au_shared *x)
{
	return x->guessed ? frac(x->hits, x->guessed) - frac(x->real, x->blocks) : 0;
}

int au_analyse(const struct au_stmt *s, size_t n, const struct au_run *run, struct au_rng *rng,
	       struct au_results *R)
{
	int rc = LWC_OK;

	memset(R, 0, sizeof(*R));
	for (size_t i = 0; i < n; i++)
		R->audited += s[i].phase != AU_P_STORM;
	R->stormed = run->storm_clients > 0;
	for (int i = 0; i < AU_NISECT; i++) {
		if ((uint64_t)au_isect_r[i] > run->reps)
			continue;
		R->isect[R->nisect].r = au_isect_r[i];
		if ((rc = au_attack_intersection(s, n, (uint32_t)run->targets,
						 &R->isect[R->nisect])) != LWC_OK)
			return rc;
		R->nisect++;
	}
	if ((rc = au_attack_linkage(s, n, (uint32_t)run->targets, AU_LINK_PAIRS, rng,
				    &R->link)) != LWC_OK ||
	    (rc = frequency_rounds(s, n, run, &R->freq)) != LWC_OK ||
	    (rc = au_attack_type(s, n, AU_TYPE_WINDOW, AU_TYPE_SPLITS, rng, &R->type)) != LWC_OK ||
	    (rc = au_attack_interval(s, n, AU_TYPE_SPLITS, rng, &R->interval)) != LWC_OK ||
	    (rc = au_attack_recency(s, n, 0, &R->recency)) != LWC_OK ||
	    (rc = au_attack_recency(s, n, 1, &R->recency_quiet)) != LWC_OK ||
	    (rc = au_attack_range_linkage(s, n, AU_LINK_PAIRS, rng, &R->rlink)) != LWC_OK ||
	    (rc = au_attack_coread(s, n, AU_LINK_PAIRS, rng, &R->coread)) != LWC_OK ||
	    (rc = au_attack_shared_writer(s, n, 0, &R->shared[0])) != LWC_OK ||
	    (rc = au_attack_shared_writer(s, n, 1, &R->shared[1])) != LWC_OK ||
	    (rc = range_stat(s, n, 0, ST_GAMMA, &R->range_gamma[0])) != LWC_OK ||
	    (rc = range_stat(s, n, 1, ST_GAMMA, &R->range_gamma[1])) != LWC_OK ||
	    (rc = range_stat(s, n, 0, ST_KBLOCKS, &R->range_blocks[0])) != LWC_OK ||
	    (rc = range_stat(s, n, 1, ST_KBLOCKS, &R->range_blocks[1])) != LWC_OK)
		return rc;
	for (int k = 0; k < AU_NKINDS && rc == LWC_OK; k++)
		if ((rc = stat_of(s, n, -1, (enum au_kind)k, 0, ST_GAMMA, &R->gamma[k])) == LWC_OK)
			rc = stat_of(s, n, -1, (enum au_kind)k, 0, ST_LATENCY_MS, &R->latency[k]);
	for (int i = 0; i < AU_NSIZE && rc == LWC_OK; i++)
		if ((rc = stat_of(s, n, AU_P_SIZE, AU_IN, au_size_k[i], ST_GAMMA, &R->size[i])) ==
		    LWC_OK)
			rc = stat_of(s, n, AU_P_SIZE, AU_IN, au_size_k[i], ST_KBLOCKS,
				     &R->size_blocks[i]);
	for (size_t i = 0; i < n; i++) {
		const struct au_stmt *x = &s[i];

		/* a range read READs every block its rows were in */
		for (uint32_t j = 0; x->kind == AU_RANGE && j < x->kblocks; j++) {
			R->truth_checked++;
			if (bsearch(&x->real[j], x->o.rset, x->o.nrset, sizeof(*x->o.rset),
				    cmp_u64) == NULL)
				R->truth_unread++;
		}
		/* an INSERT's row has no block yet; an exact DELETE reads none
		 * (the access of a statement matching nothing: its row's block
		 * only by chance) */
		if (x->id < 0 || x->kind == AU_INSERT || x->kind == AU_DELETE)
			continue;
		if (x->truth == AU_NO_BLOCK) {
			R->stash_served[x->phase]++;
			continue;
		}
		/* a row in a block is read from it: otherwise --state and --trace
		 * are not one deployment, and every score would be meaningless */
		R->truth_checked++;
		if (bsearch(&x->truth, x->o.rset, x->o.nrset, sizeof(*x->o.rset), cmp_u64) == NULL)
			R->truth_unread++;
	}
	return rc;
}

static double rec_rate(const struct au_type *t, int kind)
{
	return frac(t->recurrent[kind], t->per_kind[kind]);
}

size_t au_checks(const struct au_results *R, struct au_check *c)
{
	size_t n = 0;

	for (int i = 0; i < R->nisect; i++)
		for (int j = 0; j < AU_NISECT; j++)
			if (au_isect_r[j] == R->isect[i].r)
				c[n++] = (struct au_check){ isect_names[j],
							    frac(R->isect[i].identified,
								 R->isect[i].targets),
							    AU_LIM_ISECT, 0 };
	c[n++] = (struct au_check){ "linkage advantage",
				 frac(R->link.same_overlap, R->link.same_pairs) -
				 frac(R->link.diff_overlap, R->link.diff_pairs), AU_LIM_LINK, 0 };
	c[n++] = (struct au_check){ "frequency hot ids' blocks in the top 20 beyond chance",
				 R->freq.hits - R->freq.chance, AU_LIM_FREQ, 0 };
	c[n++] = (struct au_check){ "statement type accuracy", frac(R->type.correct, R->type.tested),
				 AU_LIM_TYPE, 0 };
	c[n++] = (struct au_check){ "recurrence |INSERT - SELECT|",
				 fabs(rec_rate(&R->type, AU_INSERT) - rec_rate(&R->type, AU_SELECT)),
				 AU_LIM_REC, 0 };
	if (R->interval.tested > 0)
		c[n++] = (struct au_check){ "statement type accuracy from the intervals",
					 frac(R->interval.correct, R->interval.tested),
					 AU_LIM_TYPE, 0 };
	c[n++] = (struct au_check){ "recency hit rate beyond chance",
				 R->recency.tries ? (R->recency.hits - R->recency.chance) /
				 (double)R->recency.tries : 0, AU_LIM_RECENCY, 0 };
	/* a cloud that tells the bursts by their timing may order by the rest */
	if (R->stormed)
		c[n++] = (struct au_check){ "recency beyond chance, the storm's writes left out",
					 R->recency_quiet.tries ? (R->recency_quiet.hits -
					 R->recency_quiet.chance) / (double)R->recency_quiet.tries : 0,
					 AU_LIM_RECENCY, 0 };
	if (R->rlink.same_pairs > 0)
		c[n++] = (struct au_check){ "range linkage advantage",
					 frac(R->rlink.same_overlap, R->rlink.same_pairs) -
					 frac(R->rlink.diff_overlap, R->rlink.diff_pairs),
					 AU_LIM_RLINK, 0 };
	if (R->shared[1].stmts > 0)
		c[n++] = (struct au_check){ "shared writer beyond base rate, ranges read again",
					 shared_adv(&R->shared[1]), AU_LIM_SHARED, 0 };
	if (R->coread.same_pairs > 0)
		c[n++] = (struct au_check){ "co-read linkage advantage",
					 frac(R->coread.same_overlap, R->coread.same_pairs) -
					 frac(R->coread.diff_overlap, R->coread.diff_pairs),
					 AU_LIM_COREAD, 0 };
	c[n++] = (struct au_check){ "ground truth blocks not READ (--state/--trace mismatch)",
				 (double)R->truth_unread, 0, 0 };
	for (size_t i = 0; i < n; i++)
		c[i].pass = c[i].value <= c[i].limit + 1e-12;
	return n;
}

static const char *verdict(const struct au_check *c)
{
	return c->pass ? "ok" : "FAIL";
}

void au_report_print(const struct au_run *run, const struct au_results *R,
		     const struct au_check *ck)
{
	const struct au_link *L = &R->link;
	const struct au_freq *F = &R->freq;
	const struct au_type *T = &R->type;
	const char *pad = status_get(run, "padding"), *geo = status_get(run, "geometry"),
		   *blocks = status_get(run, "blocks");
	double ps = frac(L->same_overlap, L->same_pairs), pd = frac(L->diff_overlap, L->diff_pairs);
	size_t ci = 0;

	printf("\nlwc-audit: %llu audited statements (+%llu to set up) in %.1f s (load %.1f s); "
	       "table %s, %llu rows; seed %llu\n",
	       (unsigned long long)R->audited, (unsigned long long)run->setup_stmts,
	       run->secs_total, run->secs_load, run->table, (unsigned long long)run->rows,
	       (unsigned long long)run->seed);
	if (run->nstatus)
		printf("proxy: padding %s; %s; %s blocks\n", pad ? pad : "?", geo ? geo : "?",
		       blocks ? blocks : "?");
	else
		printf("proxy: status not available (%s)\n", run->status_err);
	printf("gamma (blocks READ per statement, min/median/max):");
	for (int k = 0; k < AU_NKINDS; k++)
		if (R->gamma[k].n)
			printf(" %s %.0f/%.0f/%.0f%s", au_kind_names[k], R->gamma[k].min,
			       R->gamma[k].median, R->gamma[k].max, k < AU_NKINDS - 1 ? ";" : "");
	printf("\nlatency (client, median ms):");
	for (int k = 0; k < AU_NKINDS; k++)
		if (R->latency[k].n)
			printf(" %s %.1f%s", au_kind_names[k], R->latency[k].median,
			       k < AU_NKINDS - 1 ? ";" : "");
	printf("\nground truth: rows served from the proxy's stash: repetition %llu, "
	       "Zipf %llu, types %llu; from a block: %llu, whose block the statement READ: %llu\n",
	       (unsigned long long)R->stash_served[AU_P_REPEAT],
	       (unsigned long long)R->stash_served[AU_P_ZIPF],
	       (unsigned long long)R->stash_served[AU_P_TYPES],
	       (unsigned long long)R->truth_checked,
	       (unsigned long long)(R->truth_checked - R->truth_unread));
	if (R->truth_unread)
		printf("ERROR: %llu statements did not READ the block the proxy's state put their "
		       "row in: --state and --trace are not the same deployment (or the proxy "
		       "serves rows it did not read); the scores below mean nothing\n",
		       (unsigned long long)R->truth_unread);
	if (run->foreign)
		printf("WARNING: %llu cloud accesses between audited statements: another client "
		       "used this deployment; the figures are blurred\n",
		       (unsigned long long)run->foreign);
	if (run->storm_clients) {
		printf("storm: %u concurrent clients ran statements on ranges of %llu ids for %.1f s "
		       "before every %llu audited statements: %llu bursts, %llu statements (%llu rows "
		       "read), %llu cloud accesses; the proxy's stash after a burst: median %.0f rows "
		       "(%.0f-%.0f)\n",
		       run->storm_clients, (unsigned long long)run->storm_rows, run->storm_secs,
		       (unsigned long long)run->storm_every, (unsigned long long)run->storm_bursts,
		       (unsigned long long)run->storm_stmts, (unsigned long long)run->storm_rows_read,
		       (unsigned long long)run->storm_accesses, run->storm_stash.median,
		       run->storm_stash.min, run->storm_stash.max);
		if (run->storm_writes)
			printf("storm writes: %u %% of its statements: %llu UPDATEs of a range, %llu "
			       "INSERTs and %llu DELETEs of rows of its own\n", run->storm_writes,
			       (unsigned long long)run->storm_updates,
			       (unsigned long long)run->storm_inserts,
			       (unsigned long long)run->storm_deletes);
	}
	printf("\n%-16s %-44s %8s %7s %8s  %s\n", "attack", "figure", "value", "+-95%", "limit",
	       "result");
	for (int i = 0; i < R->nisect; i++, ci++) {
		const struct au_isect *I = &R->isect[i];
		char a[24];

		snprintf(a, sizeof(a), "1 isect r=%d", I->r);
		printf("%-16s %-44s %8.3f %7.3f %8s  %s\n", a, "records' blocks identified",
		       frac(I->identified, I->targets), ci_prop(I->identified, I->targets),
		       "<= 0.05", verdict(&ck[ci]));
		printf("%-16s %-44s %8.3f %7.3f\n", "", "intersection non-empty",
		       frac(I->nonempty, I->targets), ci_prop(I->nonempty, I->targets));
	}
	printf("%-16s %-37s%7llu %8.3f\n", "2 linkage", "P(overlap | same id), pairs",
	       (unsigned long long)L->same_pairs, ps);
	printf("%-16s %-37s%7llu %8.3f\n", "", "P(overlap | different ids), pairs",
	       (unsigned long long)L->diff_pairs, pd);
	printf("%-16s %-44s %8.3f %7.3f %8s  %s\n", "", "advantage", ps - pd,
	       ci_diff((double)L->same_overlap, (double)L->same_pairs, (double)L->diff_overlap,
		       (double)L->diff_pairs), "<= 0.05", verdict(&ck[ci]));
	ci++;
	printf("%-16s %-44s %8u\n", "3 frequency", "hottest 20 ids, block in top 20 READ",
	       F->hits);
	printf("%-16s %-44s %8.2f %7s %8s  %s\n", "", "beyond chance (20 x top blocks' READ share)",
	       F->hits - F->chance, "", "<= 2", verdict(&ck[ci]));
	ci++;
	if (F->rounds > 1) {
		printf("%-16s rounds (each its own ids; median above):", "");
		for (uint32_t r = 0; r < F->rounds; r++)
			printf(" %u", F->round_hits[r]);
		printf("\n");
		printf("%-16s by chance:", "");
		for (uint32_t r = 0; r < F->rounds; r++)
			printf(" %.1f", F->round_chance[r]);
		printf("\n");
	}
	printf("%-16s %-44s %8u\n", "", "hottest 20 ids ever read from a block",
	       F->hot_with_block);
	printf("%-16s %-44s %8llu\n", "", "blocks READ in the phase",
	       (unsigned long long)F->distinct_blocks);
	printf("%-16s %-44s %3llu/%llu/%llu\n", "", "READs of the 1st/2nd/20th block",
	       (unsigned long long)F->top_reads[0], (unsigned long long)F->top_reads[1],
	       (unsigned long long)F->top_reads[2]);
	printf("%-16s %-44s %8.3f %7.3f %8s  %s\n", "4 type", "nearest-centroid accuracy (chance 0.25)",
	       frac(T->correct, T->tested),
	       ci_prop((double)T->correct / (T->splits ? T->splits : 1),
		       (double)T->tested / (T->splits ? T->splits : 1)), "<= 0.30", verdict(&ck[ci]));
	ci++;
	for (int k = 0; k < 4; k++) {
		char f[64];

		snprintf(f, sizeof(f), "recurrence (within %u before) %s", T->window, au_kind_names[k]);
		printf("%-16s %-44s %8.3f %7.3f\n", "", f, rec_rate(T, k),
		       ci_prop(T->recurrent[k], T->per_kind[k]));
	}
	printf("%-16s %-44s %8.3f %7.3f %8s  %s\n", "", "|rec(INSERT) - rec(SELECT)|", ck[ci].value,
	       ci_diff(T->recurrent[AU_INSERT], T->per_kind[AU_INSERT], T->recurrent[AU_SELECT],
		       T->per_kind[AU_SELECT]), "<= 0.05", verdict(&ck[ci]));
	ci++;
	printf("%-16s confusion (rows: true, columns: guessed SEL INS UPD DEL):", "");
	for (int a = 0; a < 4; a++) {
		printf(" %s", au_kind_names[a]);
		for (int b = 0; b < 4; b++)
			printf(" %llu", (unsigned long long)T->confusion[a][b]);
		printf(a < 3 ? ";" : "\n");
	}
	if (R->interval.tested > 0) {
		const struct au_interval *I = &R->interval;
		uint32_t sp = I->splits ? I->splits : 1;

		printf("%-16s %-44s %8.3f %7.3f %8s  %s\n", "4 type, timing",
		       "both intervals, back to back (chance 0.25)", frac(I->correct, I->tested),
		       ci_prop((double)I->correct / sp, (double)I->tested / sp), "<= 0.30",
		       verdict(&ck[ci]));
		ci++;
		printf("%-16s %-44s %8.3f %7.3f\n", "", "the interval before its first READ alone",
		       frac(I->correct_prev, I->tested_prev),
		       ci_prop((double)I->correct_prev / sp, (double)I->tested_prev / sp));
		printf("%-16s %-44s %8.3f %7.3f\n", "", "the interval after its last WRITE alone",
		       frac(I->correct_next, I->tested_next),
		       ci_prop((double)I->correct_next / sp, (double)I->tested_next / sp));
		printf("%-16s median ms before / after:", "");
		for (int k = 0; k < 4; k++)
			printf(" %s %.3f / %.3f%s", au_kind_names[k], I->median_prev_ms[k],
			       I->median_next_ms[k], k < 3 ? ";" : "\n");
		for (int j = 0; j < 2; j++) {
			printf("%-16s share %s past p95 %.3f / p99 %.3f ms:", "",
			       j ? "after" : "before", I->p95_ms[j], I->p99_ms[j]);
			for (int k = 0; k < 4; k++)
				printf(" %s %.3f / %.3f%s", au_kind_names[k], I->past95[j][k],
				       I->past99[j][k], k < 3 ? ";" : "\n");
		}
	}
	printf("%-16s feature means (%s", "", au_feat_names[0]);
	for (int j = 1; j < AU_NFEAT; j++)
		printf(", %s", au_feat_names[j]);
	printf("):\n");
	for (int k = 0; k < 4; k++) {
		printf("%-16s   %-7s", "", au_kind_names[k]);
		for (int j = 0; j < AU_NFEAT; j++)
			printf(j == 4 ? " %.4f" : j == 5 ? " %.3f" : " %.0f", T->mean[k][j]);
		printf("\n");
	}
	for (int i = 0; i < AU_NSIZE; i++)
		printf("%-16s k = %-3u rows in %.0f blocks: gamma %.0f (min %.0f, max %.0f; %zu "
		       "statements)\n", i ? "" : "5 size", au_size_k[i], R->size_blocks[i].median,
		       R->size[i].median, R->size[i].min, R->size[i].max, R->size[i].n);
	printf("%-16s padding in effect: %s\n", "", pad ? pad : "unknown");
	{
		const struct au_recency *Y = &R->recency;
		double hit = Y->tries ? Y->hits / (double)Y->tries : 0;
		double ch = Y->tries ? Y->chance / (double)Y->tries : 0;

		printf("%-16s %-44s %8.3f %7.3f\n", "6 recency",
		       "record's block = the READ block written last", hit,
		       ci_prop(Y->hits, (double)Y->tries));
		printf("%-16s %-44s %8.3f\n", "", "chance (mean 1 / READ set)", ch);
		printf("%-16s %-44s %8.3f %7s %8s  %s\n", "", "beyond chance", hit - ch, "",
		       "<= 0.03", verdict(&ck[ci]));
		printf("%-16s %-44s %8llu\n", "", "point SELECTs with the record in a block",
		       (unsigned long long)Y->tries);
		ci++;
		if (R->stormed) {              /* its check follows recency's */
			const struct au_recency *Q = &R->recency_quiet;

			hit = Q->tries ? Q->hits / (double)Q->tries : 0;
			ch = Q->tries ? Q->chance / (double)Q->tries : 0;
			printf("%-16s %-44s %8.3f %7.3f\n", "", "storm's writes left out: hit rate",
			       hit, ci_prop(Q->hits, (double)Q->tries));
			printf("%-16s %-44s %8.3f %7s %8s  %s\n", "", "... beyond chance", hit - ch, "",
			       "<= 0.03", verdict(&ck[ci]));
			ci++;
		}
	}
	if (R->rlink.same_pairs > 0 || R->shared[0].stmts > 0) {
		const struct au_link *Q = &R->rlink;
		double qs = frac(Q->same_overlap, Q->same_pairs);
		double qd = frac(Q->diff_overlap, Q->diff_pairs);

		printf("%-16s %llu ranges of %llu ids, %llu reads each: gamma of first reads "
		       "%.0f (rows in %.0f blocks), of later reads %.0f (rows in %.0f blocks)\n",
		       "7 ranges", (unsigned long long)run->ranges,
		       (unsigned long long)run->range_rows, (unsigned long long)run->range_reps,
		       R->range_gamma[0].median, R->range_blocks[0].median,
		       R->range_gamma[1].median, R->range_blocks[1].median);
		printf("%-16s %-44s %8.3f %7.3f\n", "", "P(overlap | same range)", qs,
		       ci_prop((double)Q->same_overlap, (double)Q->same_pairs));
		printf("%-16s %-44s %8.3f %7.3f\n", "", "P(overlap | other ranges)", qd,
		       ci_prop((double)Q->diff_overlap, (double)Q->diff_pairs));
		if (Q->same_pairs > 0) {
			printf("%-16s %-44s %8.3f %7.3f %8s  %s\n", "", "range linkage advantage",
			       qs - qd, ci_diff((double)Q->same_overlap, (double)Q->same_pairs,
						(double)Q->diff_overlap, (double)Q->diff_pairs),
			       "<= 0.05", verdict(&ck[ci]));
			ci++;
		}
		for (int l = 0; l < 2; l++) {
			const struct au_shared *X = &R->shared[l];

			printf("%-16s %s reads: %llu blocks READ, %.3f real; guessed %llu, "
			       "precision %.3f\n", l ? "" : "8 shared writer", l ? "later" : "first",
			       (unsigned long long)X->blocks, frac(X->real, X->blocks),
			       (unsigned long long)X->guessed, frac(X->hits, X->guessed));
		}
		if (R->shared[1].stmts > 0) {
			printf("%-16s %-44s %8.3f %7s %8s  %s\n", "",
			       "precision beyond base rate, later reads", ck[ci].value, "", "<= 0.10",
			       verdict(&ck[ci]));
			ci++;
		}
	}
	if (R->coread.same_pairs > 0) {
		const struct au_link *Q = &R->coread;
		double qs = frac(Q->same_overlap, Q->same_pairs);
		double qd = frac(Q->diff_overlap, Q->diff_pairs);

		printf("%-16s %-44s %8.3f %7.3f\n", "9 co-read", "P(overlap | rows of one range)",
		       qs, ci_prop((double)Q->same_overlap, (double)Q->same_pairs));
		printf("%-16s %-44s %8.3f %7.3f\n", "", "P(overlap | rows of two ranges)", qd,
		       ci_prop((double)Q->diff_overlap, (double)Q->diff_pairs));
		printf("%-16s %-44s %8.3f %7.3f %8s  %s\n", "", "co-read linkage advantage",
		       qs - qd, ci_diff((double)Q->same_overlap, (double)Q->same_pairs,
					(double)Q->diff_overlap, (double)Q->diff_pairs),
		       "<= 0.05", verdict(&ck[ci]));
		ci++;
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_gstat(FILE *f, const struct au_gstat *g)
{
	fprintf(f, "{\"statements\": %zu, \"min\": %.0f, \"median\": %.1f, \"max\": %.0f}", g->n,
		g->min, g->median, g->max);
}

int au_report_json(const char *path, const struct au_run *run, const struct au_results *R,
		   const struct au_check *ck, size_t nck, int passed, char *err, size_t errlen)
{
	const struct au_link *L = &R->link;
	const struct au_freq *F = &R->freq;
	const struct au_type *T = &R->type;
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		lwc_errf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return LWC_ERR_IO;
	}
	fprintf(f, "{\n  \"tool\": \"lwc-audit\",\n  \"started\": ");
	json_str(f, run->started);
	fprintf(f, ",\n  \"config\": {\"table\": ");
	json_str(f, run->table);
	fprintf(f, ", \"rows\": %llu, \"targets\": %llu, \"reps\": %llu, \"others\": %llu, "
		"\"zipf_s\": %g, \"zipf_ids\": %llu, \"zipf_queries\": %llu, \"zipf_rounds\": %llu, "
		"\"per_type\": %llu, "
		"\"seed\": %llu, \"trace\": ",
		(unsigned long long)run->rows, (unsigned long long)run->targets,
		(unsigned long long)run->reps, (unsigned long long)run->others, run->zipf_s,
		(unsigned long long)run->zipf_ids, (unsigned long long)run->zipf_queries,
		(unsigned long long)run->zipf_rounds, (unsigned long long)run->per_type,
		(unsigned long long)run->seed);
	json_str(f, run->trace);
	fprintf(f, ", \"state\": ");
	json_str(f, run->state);
	fprintf(f, "},\n  \"proxy_status\": {");
	for (size_t i = 0; i < run->nstatus; i++) {
		fprintf(f, i ? ", " : "");
		json_str(f, run->status[i].key);
		fprintf(f, ": ");
		json_str(f, run->status[i].value);
	}
	fprintf(f, "},\n  \"statements\": {\"audited\": %llu, \"setup\": %llu, "
		"\"foreign_accesses\": %llu},\n",
		(unsigned long long)R->audited, (unsigned long long)run->setup_stmts,
		(unsigned long long)run->foreign);
	fprintf(f, "  \"storm\": {\"clients\": %u, \"rows\": %llu, \"every\": %llu, "
		"\"secs\": %.3f, \"bursts\": %llu, \"statements\": %llu, \"rows_read\": %llu, "
		"\"accesses\": %llu, \"writes_pct\": %u, \"updates\": %llu, \"inserts\": %llu, "
		"\"deletes\": %llu, \"stash_rows_after_burst\": ", run->storm_clients,
		(unsigned long long)run->storm_rows, (unsigned long long)run->storm_every,
		run->storm_secs, (unsigned long long)run->storm_bursts,
		(unsigned long long)run->storm_stmts, (unsigned long long)run->storm_rows_read,
		(unsigned long long)run->storm_accesses, run->storm_writes,
		(unsigned long long)run->storm_updates, (unsigned long long)run->storm_inserts,
		(unsigned long long)run->storm_deletes);
	json_gstat(f, &run->storm_stash);
	fprintf(f, "},\n");
	fprintf(f, "  \"seconds\": {\"total\": %.3f, \"load\": %.3f", run->secs_total, run->secs_load);
	for (int p = 0; p < AU_NPHASES; p++)
		if (p != AU_P_WARM)
			fprintf(f, ", \"%s\": %.3f", au_phase_names[p], run->phase_secs[p]);
	fprintf(f, "},\n  \"gamma\": {");
	for (int k = 0, first = 1; k < AU_NKINDS; k++) {
		if (R->gamma[k].n == 0)
			continue;
		fprintf(f, first ? "\"%s\": " : ", \"%s\": ", au_kind_names[k]);
		json_gstat(f, &R->gamma[k]);
		first = 0;
	}
	fprintf(f, "},\n  \"latency_ms\": {");
	for (int k = 0, first = 1; k < AU_NKINDS; k++) {
		if (R->latency[k].n == 0)
			continue;
		fprintf(f, first ? "\"%s\": " : ", \"%s\": ", au_kind_names[k]);
		fprintf(f, "{\"median\": %.3f, \"max\": %.3f}", R->latency[k].median,
			R->latency[k].max);
		first = 0;
	}
	fprintf(f, "},\n  \"ground_truth\": {\"stash_served\": {\"repeat\": %llu, \"zipf\": %llu, "
		"\"types\": %llu}, \"in_block\": %llu, \"block_not_read\": %llu},\n",
		(unsigned long long)R->stash_served[AU_P_REPEAT],
		(unsigned long long)R->stash_served[AU_P_ZIPF],
		(unsigned long long)R->stash_served[AU_P_TYPES],
		(unsigned long long)R->truth_checked, (unsigned long long)R->truth_unread);
	fprintf(f, "  \"intersection\": [");
	for (int i = 0; i < R->nisect; i++) {
		const struct au_isect *I = &R->isect[i];

		fprintf(f, "%s{\"r\": %d, \"targets\": %u, \"identified\": %u, \"identified_frac\": %.4f, "
			"\"nonempty\": %u, \"nonempty_frac\": %.4f}", i ? ", " : "", I->r, I->targets,
			I->identified, frac(I->identified, I->targets), I->nonempty,
			frac(I->nonempty, I->targets));
	}
	fprintf(f, "],\n  \"linkage\": {\"same_pairs\": %llu, \"same_overlap\": %llu, "
		"\"p_same\": %.4f, \"diff_pairs\": %llu, \"diff_overlap\": %llu, \"p_diff\": %.4f, "
		"\"advantage\": %.4f},\n",
		(unsigned long long)L->same_pairs, (unsigned long long)L->same_overlap,
		frac(L->same_overlap, L->same_pairs), (unsigned long long)L->diff_pairs,
		(unsigned long long)L->diff_overlap, frac(L->diff_overlap, L->diff_pairs),
		frac(L->same_overlap, L->same_pairs) - frac(L->diff_overlap, L->diff_pairs));
	fprintf(f, "  \"frequency\": {\"rounds\": %u, \"round_hits\": [", F->rounds);
	for (uint32_t r = 0; r < F->rounds; r++)
		fprintf(f, "%s%u", r ? ", " : "", F->round_hits[r]);
	fprintf(f, "], \"round_chance\": [");
	for (uint32_t r = 0; r < F->rounds; r++)
		fprintf(f, "%s%.3f", r ? ", " : "", F->round_chance[r]);
	fprintf(f, "], \"top\": %u, \"hits\": %u, \"hot_with_block\": %u, "
		"\"statements\": %llu, \"stash_reads\": %llu, \"distinct_blocks\": %llu, "
		"\"top_reads\": [%llu, %llu, %llu]},\n", F->top, F->hits, F->hot_with_block,
		(unsigned long long)F->statements, (unsigned long long)F->stash_reads,
		(unsigned long long)F->distinct_blocks, (unsigned long long)F->top_reads[0],
		(unsigned long long)F->top_reads[1], (unsigned long long)F->top_reads[2]);
	fprintf(f, "  \"type\": {\"accuracy\": %.4f, \"splits\": %u, \"tested\": %llu, "
		"\"window\": %u, \"features\": [", frac(T->correct, T->tested), T->splits,
		(unsigned long long)T->tested, T->window);
	for (int j = 0; j < AU_NFEAT; j++)
		fprintf(f, "%s\"%s\"", j ? ", " : "", au_feat_names[j]);
	fprintf(f, "], \"per_kind\": {");
	for (int k = 0; k < 4; k++) {
		fprintf(f, "%s\"%s\": {\"statements\": %u, \"recurrence\": %.4f, \"feature_means\": [",
			k ? ", " : "", au_kind_names[k], T->per_kind[k], rec_rate(T, k));
		for (int j = 0; j < AU_NFEAT; j++)
			fprintf(f, "%s%.6g", j ? ", " : "", T->mean[k][j]);
		fprintf(f, "], \"guessed\": [%llu, %llu, %llu, %llu]}",
			(unsigned long long)T->confusion[k][0], (unsigned long long)T->confusion[k][1],
			(unsigned long long)T->confusion[k][2], (unsigned long long)T->confusion[k][3]);
	}
	fprintf(f, "}, \"rec_insert_minus_select\": %.4f},\n",
		rec_rate(T, AU_INSERT) - rec_rate(T, AU_SELECT));
	{
		const struct au_interval *I = &R->interval;

		fprintf(f, "  \"type_timing\": {\"accuracy\": %.4f, \"accuracy_before\": %.4f, "
			"\"accuracy_after\": %.4f, \"splits\": %u, \"tested\": %llu, \"per_kind\": {",
			frac(I->correct, I->tested), frac(I->correct_prev, I->tested_prev),
			frac(I->correct_next, I->tested_next), I->splits,
			(unsigned long long)I->tested);
		for (int k = 0; k < 4; k++)
			fprintf(f, "%s\"%s\": {\"statements\": %u, \"median_before_ms\": %.4f, "
				"\"median_after_ms\": %.4f, \"past_p95_before\": %.4f, "
				"\"past_p95_after\": %.4f, \"past_p99_before\": %.4f, "
				"\"past_p99_after\": %.4f}", k ? ", " : "", au_kind_names[k],
				I->per_kind[k], I->median_prev_ms[k], I->median_next_ms[k],
				I->past95[0][k], I->past95[1][k], I->past99[0][k], I->past99[1][k]);
		fprintf(f, "}, \"p95_before_ms\": %.4f, \"p95_after_ms\": %.4f, "
			"\"p99_before_ms\": %.4f, \"p99_after_ms\": %.4f},\n",
			I->p95_ms[0], I->p95_ms[1], I->p99_ms[0], I->p99_ms[1]);
	}
	fprintf(f, "  \"recency\": {\"tries\": %llu, \"hit_rate\": %.4f, \"chance\": %.4f, "
		"\"record_block_unwritten\": %llu, \"storm_writes_left_out\": {\"hit_rate\": %.4f, "
		"\"chance\": %.4f}},\n", (unsigned long long)R->recency.tries,
		R->recency.tries ? R->recency.hits / (double)R->recency.tries : 0,
		R->recency.tries ? R->recency.chance / (double)R->recency.tries : 0,
		(unsigned long long)R->recency.unwritten,
		R->recency_quiet.tries ? R->recency_quiet.hits / (double)R->recency_quiet.tries : 0,
		R->recency_quiet.tries ? R->recency_quiet.chance / (double)R->recency_quiet.tries : 0);
	fprintf(f, "  \"ranges\": {\"ranges\": %llu, \"range_rows\": %llu, \"range_reps\": %llu, "
		"\"same_pairs\": %llu, \"p_overlap_same\": %.4f, \"diff_pairs\": %llu, "
		"\"p_overlap_diff\": %.4f, \"gamma_first\": ", (unsigned long long)run->ranges,
		(unsigned long long)run->range_rows, (unsigned long long)run->range_reps,
		(unsigned long long)R->rlink.same_pairs,
		frac(R->rlink.same_overlap, R->rlink.same_pairs),
		(unsigned long long)R->rlink.diff_pairs,
		frac(R->rlink.diff_overlap, R->rlink.diff_pairs));
	json_gstat(f, &R->range_gamma[0]);
	fprintf(f, ", \"gamma_later\": ");
	json_gstat(f, &R->range_gamma[1]);
	fprintf(f, ", \"blocks_of_rows_first\": ");
	json_gstat(f, &R->range_blocks[0]);
	fprintf(f, ", \"blocks_of_rows_later\": ");
	json_gstat(f, &R->range_blocks[1]);
	for (int l = 0; l < 2; l++)
		fprintf(f, ", \"shared_writer_%s\": {\"statements\": %llu, \"blocks\": %llu, "
			"\"real\": %llu, \"guessed\": %llu, \"hits\": %llu}", l ? "later" : "first",
			(unsigned long long)R->shared[l].stmts, (unsigned long long)R->shared[l].blocks,
			(unsigned long long)R->shared[l].real, (unsigned long long)R->shared[l].guessed,
			(unsigned long long)R->shared[l].hits);
	fprintf(f, "},\n");
	fprintf(f, "  \"coread\": {\"rows_per_range\": %llu, \"same_pairs\": %llu, "
		"\"p_overlap_same\": %.4f, \"diff_pairs\": %llu, \"p_overlap_diff\": %.4f},\n",
		(unsigned long long)run->coread_rows, (unsigned long long)R->coread.same_pairs,
		frac(R->coread.same_overlap, R->coread.same_pairs),
		(unsigned long long)R->coread.diff_pairs,
		frac(R->coread.diff_overlap, R->coread.diff_pairs));
	fprintf(f, "  \"size\": {\"padding\": ");
	json_str(f, status_get(run, "padding") ? status_get(run, "padding") : "unknown");
	fprintf(f, ", \"k\": [");
	for (int i = 0; i < AU_NSIZE; i++) {
		fprintf(f, "%s{\"k\": %u, \"gamma\": ", i ? ", " : "", au_size_k[i]);
		json_gstat(f, &R->size[i]);
		fprintf(f, ", \"blocks_of_rows\": ");
		json_gstat(f, &R->size_blocks[i]);
		fprintf(f, "}");
	}
	fprintf(f, "]},\n  \"checks\": [");
	for (size_t i = 0; i < nck; i++) {
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		json_str(f, ck[i].name);
		fprintf(f, ", \"value\": %.4f, \"limit\": %g, \"pass\": %s}", ck[i].value, ck[i].limit,
			ck[i].pass ? "true" : "false");
	}
	fprintf(f, "],\n  \"passed\": %s\n}\n", passed ? "true" : "false");
	if (ferror(f) | fclose(f)) {
		lwc_errf(err, errlen, "writing %s failed", path);
		return LWC_ERR_IO;
	}
	return LWC_OK;
}
