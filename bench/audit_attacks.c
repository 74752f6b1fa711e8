/*
 * audit_attacks.c - the cloud's attacks across statements (DESIGN.md
 * section 6), computed from the READ and WRITE lines of the trace alone.
 *
 * Each attack decides from struct au_obs only; the labels of struct au_stmt
 * say which statements the attack is aimed at (the repetitions of one target,
 * the Zipf phase) and, with the proxy's ground truth, whether it was right.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"

const char *const au_kind_names[AU_NKINDS] = {
	[AU_SELECT] = "SELECT", [AU_INSERT] = "INSERT", [AU_UPDATE] = "UPDATE",
	[AU_DELETE] = "DELETE", [AU_IN] = "SELECT IN", [AU_RANGE] = "SELECT BETWEEN",
};

const char *const au_phase_names[AU_NPHASES] = {
	[AU_P_REPEAT] = "repeat", [AU_P_ZIPF] = "zipf", [AU_P_WARM] = "warm-up",
	[AU_P_TYPES] = "types", [AU_P_SIZE] = "size", [AU_P_RANGE] = "ranges",
	[AU_P_COREAD] = "co-read", [AU_P_PACE] = "pace", [AU_P_STORM] = "storm",
};

const char *const au_feat_names[AU_NFEAT] = {
	"read_blocks", "write_blocks", "bytes_in", "bytes_out", "gap_s", "recurrent",
};

/* ---- generator ------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void au_rng_seed(struct au_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t au_rng_next(struct au_rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

uint64_t au_rng_below(struct au_rng *r, uint64_t n)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % n, x;

	do
		x = au_rng_next(r);
	while (x >= lim);
	return x % n;
}

double au_rng_double(struct au_rng *r)
{
	return (double)(au_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

void au_rng_shuffle(struct au_rng *r, void *base, size_t n, size_t sz)
{
	unsigned char *b = base, tmp[64];

	if (sz > sizeof(tmp))
		abort();                 /* internal misuse: only small elements */
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)au_rng_below(r, i);

		memcpy(tmp, b + (i - 1) * sz, sz);
		memmove(b + (i - 1) * sz, b + j * sz, sz);
		memcpy(b + j * sz, tmp, sz);
	}
}

/* ---- helpers --------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double au_median(double *v, size_t n)
{
	if (n == 0)
		return 0.0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Intersect sorted a[0..*na) with sorted b[0..nb) into a. */
static void intersect(uint64_t *a, size_t *na, const uint64_t *b, size_t nb)
{
	size_t i = 0, j = 0, k = 0;

	while (i < *na && j < nb) {
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else {
			a[k++] = a[i];
			i++;
			j++;
		}
	}
	*na = k;
}

static int overlaps(const struct au_obs *x, const struct au_obs *y)
{
	size_t i = 0, j = 0;

	while (i < x->nrset && j < y->nrset) {
		if (x->rset[i] < y->rset[j])
			i++;
		else if (x->rset[i] > y->rset[j])
			j++;
		else
			return 1;
	}
	return 0;
}

/* Up to npairs random pairs of the statements idx[0..m) with different ids
 * (by_id) or targets, and whether their READ sets overlap (res->diff_*). */
static void random_pairs(const struct au_stmt *s, const size_t *idx, size_t m, int by_id,
			 uint64_t npairs, struct au_rng *rng, struct au_link *res)
{
	for (uint64_t tries = 0; m >= 2 && res->diff_pairs < npairs && tries < npairs * 20;
	     tries++) {
		size_t a = idx[au_rng_below(rng, m)], b = idx[au_rng_below(rng, m)];

		if (by_id ? s[a].id == s[b].id : s[a].target == s[b].target)
			continue;
		res->diff_pairs++;
		res->diff_overlap += (uint64_t)overlaps(&s[a].o, &s[b].o);
	}
}

/* ---- 1. intersection ---------------------------------------------------------- */

int au_attack_intersection(const struct au_stmt *s, size_t n, uint32_t ntargets,
			   struct au_isect *res)
{
	size_t cap = 0, ncur = 0;
	uint64_t *cur = NULL, *truth = malloc((size_t)res->r * sizeof(*truth));

	res->targets = res->identified = res->nonempty = 0;
	if (truth == NULL)
		return LWC_ERR_NOMEM;
	for (uint32_t t = 0; t < ntargets; t++) {
		int reps = 0, hit = 0;

		for (size_t i = 0; i < n && reps < res->r; i++) {
			const struct au_obs *o = &s[i].o;

			if (s[i].phase != AU_P_REPEAT || s[i].target != (int32_t)t)
				continue;
			if (reps == 0) {
				if (o->nrset > cap) {
					uint64_t *nb = realloc(cur, o->nrset * sizeof(*cur));

					if (nb == NULL) {
						free(cur);
						free(truth);
						return LWC_ERR_NOMEM;
					}
					cur = nb;
					cap = o->nrset;
				}
				memcpy(cur, o->rset, o->nrset * sizeof(*cur));
				ncur = o->nrset;
			} else {
				intersect(cur, &ncur, o->rset, o->nrset);
			}
			truth[reps++] = s[i].truth;
		}
		if (reps < res->r)
			continue;
		res->targets++;
		if (ncur > 0)
			res->nonempty++;
		for (int j = 0; ncur == 1 && j < reps && !hit; j++)
			hit = truth[j] != AU_NO_BLOCK && truth[j] == cur[0];
		res->identified += (uint32_t)hit;
	}
	free(cur);
	free(truth);
	return LWC_OK;
}

/* ---- 2. linkage ------------------------------------------------------------------ */

int au_attack_linkage(const struct au_stmt *s, size_t n, uint32_t ntargets, uint64_t npairs,
		      struct au_rng *rng, struct au_link *res)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), m = 0;

	memset(res, 0, sizeof(*res));
	if (idx == NULL)
		return LWC_ERR_NOMEM;
	/* every pair of repetitions of the same target */
	for (uint32_t t = 0; t < ntargets; t++) {
		m = 0;
		for (size_t i = 0; i < n; i++)
			if (s[i].phase == AU_P_REPEAT && s[i].target == (int32_t)t)
				idx[m++] = i;
		for (size_t a = 0; a < m; a++)
			for (size_t b = a + 1; b < m; b++) {
				res->same_pairs++;
				res->same_overlap += (uint64_t)overlaps(&s[idx[a]].o, &s[idx[b]].o);
			}
	}
	/* random pairs of point SELECTs of the phase with different ids */
	m = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i].phase == AU_P_REPEAT && s[i].kind == AU_SELECT)
			idx[m++] = i;
	random_pairs(s, idx, m, 1, npairs, rng, res);
	free(idx);
	return LWC_OK;
}

/* ---- 3. frequency ----------------------------------------------------------------- */

struct bcount {
	uint64_t block, count;          /* count: or a statement's position */
};

static int cmp_bcount_block(const void *a, const void *b)
{
	const struct bcount *x = a, *y = b;

	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return x->count < y->count ? -1 : x->count > y->count;
}

static int cmp_bcount_desc(const void *a, const void *b)
{
	const struct bcount *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->block < y->block ? -1 : x->block > y->block;
}

/* Run-length counts of sorted v[0..n) into out (n entries at most). */
static size_t count_runs(const uint64_t *v, size_t n, struct bcount *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (m > 0 && out[m - 1].block == v[i])
			out[m - 1].count++;
		else
			out[m++] = (struct bcount){ v[i], 1 };
	}
	return m;
}

int au_attack_frequency(const struct au_stmt *s, size_t n, uint32_t top, uint32_t round,
			struct au_freq *res)
{
	size_t nreads = 0, nb, nt, k;
	uint64_t *all = NULL;
	struct bcount *bc = NULL, *mine = NULL;
	int rc = LWC_ERR_NOMEM;

	memset(res, 0, sizeof(*res));
	res->top = top;
	res->round = round;
	for (size_t i = 0; i < n; i++)
		if (s[i].phase == AU_P_ZIPF && s[i].round == round) {
			nreads += s[i].o.nrset;
			res->statements++;
			res->stash_reads += s[i].truth == AU_NO_BLOCK;
		}
	if ((all = malloc((nreads ? nreads : 1) * sizeof(*all))) == NULL ||
	    (bc = malloc((nreads ? nreads : 1) * sizeof(*bc))) == NULL ||
	    (mine = malloc((res->statements ? res->statements : 1) * sizeof(*mine))) == NULL)
		goto out;
	/* how often each block was READ in the phase: the adversary's ranking */
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i].phase == AU_P_ZIPF && s[i].round == round) {
			memcpy(all + k, s[i].o.rset, s[i].o.nrset * sizeof(*all));
			k += s[i].o.nrset;
		}
	qsort(all, nreads, sizeof(*all), cmp_u64);
	nb = count_runs(all, nreads, bc);
	qsort(bc, nb, sizeof(*bc), cmp_bcount_desc);
	res->distinct_blocks = nb;
	nt = nb < top ? nb : top;
	if (nt > 0) {
		uint64_t in_top = 0;

		for (size_t j = 0; j < nt; j++)
			in_top += bc[j].count;
		res->chance = (double)in_top / (double)nreads;  /* times hot_with_block below */
		res->top_reads[0] = bc[0].count;
		res->top_reads[1] = nb > 1 ? bc[1].count : 0;
		res->top_reads[2] = bc[nt - 1].count;
	}
	/* the hottest ids' blocks by ground truth: the block each was read from
	 * most often; a tie goes to the block it was read from first (not to a
	 * low id: low blocks may be the busy ones) */
	for (uint32_t h = 0; h < top; h++) {
		size_t m = 0;
		uint64_t block = AU_NO_BLOCK, best = 0, first = 0;

		for (size_t i = 0; i < n; i++)
			if (s[i].phase == AU_P_ZIPF && s[i].round == round && s[i].target == (int32_t)h &&
			    s[i].truth != AU_NO_BLOCK)
				mine[m++] = (struct bcount){ s[i].truth, i };
		if (m == 0)
			continue;
		qsort(mine, m, sizeof(*mine), cmp_bcount_block);
		for (size_t j = 0, e; j < m; j = e) {
			for (e = j; e < m && mine[e].block == mine[j].block; e++)
				;
			/* mine[j] is the block's first read: sorted by position within a block */
			if (e - j > best || (e - j == best && mine[j].count < first)) {
				best = e - j;
				first = mine[j].count;
				block = mine[j].block;
			}
		}
		res->hot_with_block++;
		for (size_t j = 0; j < nt; j++)
			if (bc[j].block == block) {
				res->hits++;
				break;
			}
	}
	res->chance *= res->hot_with_block;
	rc = LWC_OK;
out:
	free(all);
	free(bc);
	free(mine);
	return rc;
}

/* ---- 5. recency ------------------------------------------------------------------- */

/* Each block's last writer among the audited statements, indexed by block
 * id up to the largest READ: all -1 (none yet), for the caller to update
 * statement by statement (*maxid: that largest id); NULL when out of
 * memory. */
static int64_t *last_writers(const struct au_stmt *s, size_t n, uint64_t *maxid_out)
{
	uint64_t maxid = 0;
	int64_t *last;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < s[i].o.nrset; j++)
			if (s[i].o.rset[j] > maxid)
				maxid = s[i].o.rset[j];
	if ((last = malloc((maxid + 1) * sizeof(*last))) != NULL)
		for (uint64_t b = 0; b <= maxid; b++)
			last[b] = -1;
	*maxid_out = maxid;
	return last;
}

int au_attack_recency(const struct au_stmt *s, size_t n, int quiet, struct au_recency *res)
{
	uint64_t maxid;
	int64_t *last;

	memset(res, 0, sizeof(*res));
	if ((last = last_writers(s, n, &maxid)) == NULL)
		return LWC_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct au_obs *o = &s[i].o;

		if (s[i].kind == AU_SELECT && s[i].k == 1 && s[i].truth != AU_NO_BLOCK &&
		    o->nrset >= 2) {
			int64_t best = -2;
			uint32_t ties = 0;
			int truth_best = 0;

			for (size_t j = 0; j < o->nrset; j++) {
				int64_t w = last[o->rset[j]];

				if (w > best) {
					best = w;
					ties = 0;
					truth_best = 0;
				}
				if (w == best) {
					ties++;
					truth_best |= o->rset[j] == s[i].truth;
				}
			}
			res->tries++;
			res->chance += 1.0 / (double)o->nrset;
			if (truth_best)
				res->hits += 1.0 / ties;
			if (s[i].truth <= maxid && last[s[i].truth] < 0)
				res->unwritten++;
		}
		for (size_t j = 0; j < o->nrset && !(quiet && s[i].phase == AU_P_STORM); j++)
			last[o->rset[j]] = (int64_t)i;
	}
	free(last);
	return LWC_OK;
}

/* ---- 7 and 9: linkage of labelled statements ------------------------------------ */

/* Over the statements of phase ph and kind, with a target: every pair of one
 * target (of different ids when distinct_ids), and npairs random pairs of
 * different targets, and whether their READ sets overlap. */
static int target_linkage(const struct au_stmt *s, size_t n, enum au_phase ph,
			  enum au_kind kind, int distinct_ids, uint64_t npairs, struct au_rng *rng,
			  struct au_link *res)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), m = 0;

	memset(res, 0, sizeof(*res));
	if (idx == NULL)
		return LWC_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		if (s[i].phase == ph && s[i].kind == kind && s[i].target >= 0)
			idx[m++] = i;
	for (size_t a = 0; a < m; a++)
		for (size_t b = a + 1; b < m; b++)
			if (s[idx[a]].target == s[idx[b]].target &&
			    (!distinct_ids || s[idx[a]].id != s[idx[b]].id)) {
				res->same_pairs++;
				res->same_overlap += (uint64_t)overlaps(&s[idx[a]].o, &s[idx[b]].o);
			}
	random_pairs(s, idx, m, 0, npairs, rng, res);
	free(idx);
	return LWC_OK;
}

int au_attack_range_linkage(const struct au_stmt *s, size_t n, uint64_t npairs,
			    struct au_rng *rng, struct au_link *res)
{
	return target_linkage(s, n, AU_P_RANGE, AU_RANGE, 0, npairs, rng, res);
}

int au_attack_coread(const struct au_stmt *s, size_t n, uint64_t npairs, struct au_rng *rng,
		     struct au_link *res)
{
	return target_linkage(s, n, AU_P_COREAD, AU_SELECT, 1, npairs, rng, res);
}

/* ---- 8. shared writer -------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int au_attack_shared_writer(const struct au_stmt *s, size_t n, int later,
			    struct au_shared *res)
{
	uint64_t maxid;
	int64_t *last, *w = NULL, *sorted = NULL;
	size_t cap = 0;
	int rc = LWC_OK;

	memset(res, 0, sizeof(*res));
	if ((last = last_writers(s, n, &maxid)) == NULL)
		return LWC_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct au_obs *o = &s[i].o;

		if (s[i].kind == AU_RANGE && (s[i].rep > 0) == (later != 0) && o->nrset > 0) {
			if (o->nrset > cap) {
				free(w);
				free(sorted);
				cap = o->nrset;
				w = malloc(cap * sizeof(*w));
				sorted = malloc(cap * sizeof(*sorted));
				if (w == NULL || sorted == NULL) {
					rc = LWC_ERR_NOMEM;
					break;
				}
			}
			size_t best = 1;

			for (size_t j = 0; j < o->nrset; j++)
				sorted[j] = w[j] = last[o->rset[j]];
			qsort(sorted, o->nrset, sizeof(*sorted), cmp_i64);
			/* the most blocks of the set one writer wrote */
			for (size_t j = 0, run = 0; j < o->nrset; j++) {
				run = j > 0 && sorted[j] == sorted[j - 1] ? run + 1 : 1;
				if (sorted[j] >= 0 && run > best)
					best = run;
			}
			res->stmts++;
			for (size_t j = 0; j < o->nrset; j++) {
				int real = bsearch(&o->rset[j], s[i].real, s[i].kblocks,
						   sizeof(*s[i].real), cmp_u64) != NULL;
				size_t cnt = 0;
				int shared;

				for (size_t x = 0; x < o->nrset && best > 1 && w[j] >= 0; x++)
					cnt += sorted[x] == w[j];
				/* a block of the writer (or writers) with the most
				 * blocks in the set, when that is two or more */
				shared = best > 1 && cnt == best;

				res->blocks++;
				res->real += (uint64_t)real;
				res->guessed += (uint64_t)shared;
				res->hits += (uint64_t)(shared && real);
			}
		}
		for (size_t j = 0; j < o->nrset; j++)
			last[o->rset[j]] = (int64_t)i;
	}
	free(w);
	free(sorted);
	free(last);
	return rc;
}

/* ---- 4. statement type ------------------------------------------------------------- */

/* Nearest centroid on the standardised feature columns in use (bit j:
 * column j), trained on a random half and tested on the other, splits
 * times; confusion may be NULL. */
static int centroid(const double (*f)[AU_NFEAT], const int *label, size_t nt, unsigned use,
		    uint32_t splits, struct au_rng *rng, uint64_t *tested, uint64_t *correct,
		    uint64_t (*confusion)[4])
{
	size_t *typed = malloc((nt ? nt : 1) * sizeof(*typed));

	if (typed == NULL)
		return LWC_ERR_NOMEM;
	for (size_t q = 0; q < nt; q++)
		typed[q] = q;
	for (uint32_t sp = 0; nt >= 2 && sp < splits; sp++) {
		size_t half = nt / 2;
		double mu[AU_NFEAT] = { 0 }, sd[AU_NFEAT] = { 0 };
		double cen[4][AU_NFEAT] = { { 0 } };
		size_t cnt[4] = { 0 };

		au_rng_shuffle(rng, typed, nt, sizeof(*typed));
		for (size_t q = 0; q < half; q++)
			for (int j = 0; j < AU_NFEAT; j++)
				mu[j] += f[typed[q]][j] / (double)half;
		for (size_t q = 0; q < half; q++)
			for (int j = 0; j < AU_NFEAT; j++) {
				double d = f[typed[q]][j] - mu[j];
				sd[j] += d * d / (double)half;
			}
		for (int j = 0; j < AU_NFEAT; j++)
			sd[j] = sqrt(sd[j]);
		for (size_t q = 0; q < half; q++) {
			int c = label[typed[q]];

			cnt[c]++;
			for (int j = 0; j < AU_NFEAT; j++)
				if (sd[j] > 1e-12)
					cen[c][j] += (f[typed[q]][j] - mu[j]) / sd[j];
		}
		for (int c = 0; c < 4; c++)
			for (int j = 0; cnt[c] && j < AU_NFEAT; j++)
				cen[c][j] /= (double)cnt[c];
		for (size_t q = half; q < nt; q++) {
			int best = -1;
			double bd = 0;

			for (int c = 0; c < 4; c++) {
				double d = 0;

				if (cnt[c] == 0)
					continue;
				for (int j = 0; j < AU_NFEAT; j++)
					if (sd[j] > 1e-12 && (use >> j & 1u)) {
						double z = (f[typed[q]][j] - mu[j]) / sd[j] - cen[c][j];
						d += z * z;
					}
				if (best < 0 || d < bd) {
					best = c;
					bd = d;
				}
			}
			if (best < 0)
				continue;
			(*tested)++;
			*correct += best == label[typed[q]];
			if (confusion)
				confusion[label[typed[q]]][best]++;
		}
	}
	free(typed);
	return LWC_OK;
}


int au_attack_type(const struct au_stmt *s, size_t n, uint32_t window, uint32_t splits,
		   struct au_rng *rng, struct au_type *res)
{
	size_t *seq = malloc((n ? n : 1) * sizeof(*seq)), nseq = 0, *typed = NULL, nt = 0;
	double (*f)[AU_NFEAT] = NULL;
	int *label = NULL, rc = LWC_ERR_NOMEM;

	memset(res, 0, sizeof(*res));
	res->splits = splits;
	res->window = window;
	if (seq == NULL)
		return rc;
	for (size_t i = 0; i < n; i++)
		if (s[i].phase == AU_P_WARM || s[i].phase == AU_P_TYPES)
			seq[nseq++] = i;
	if ((typed = malloc((nseq ? nseq : 1) * sizeof(*typed))) == NULL ||
	    (f = malloc((nseq ? nseq : 1) * sizeof(*f))) == NULL ||
	    (label = malloc((nseq ? nseq : 1) * sizeof(*label))) == NULL)
		goto out;
	/* features, from the trace only */
	for (size_t q = 0; q < nseq; q++) {
		const struct au_stmt *x = &s[seq[q]];
		int rec = 0;

		if (x->phase != AU_P_TYPES || x->kind > AU_DELETE)
			continue;
		for (size_t p = q > window ? q - window : 0; p < q && !rec; p++)
			rec = overlaps(&x->o, &s[seq[p]].o);
		f[nt][0] = (double)x->o.read_blocks;
		f[nt][1] = (double)x->o.write_blocks;
		f[nt][2] = (double)x->o.bytes_in;
		f[nt][3] = (double)x->o.bytes_out;
		f[nt][4] = x->o.gap;
		f[nt][5] = rec;
		label[nt] = (int)x->kind;
		res->per_kind[x->kind]++;
		res->recurrent[x->kind] += (uint32_t)rec;
		for (int j = 0; j < AU_NFEAT; j++)
			res->mean[x->kind][j] += f[nt][j];
		typed[nt] = nt;
		nt++;
	}
	for (int c = 0; c < 4; c++)
		for (int j = 0; res->per_kind[c] && j < AU_NFEAT; j++)
			res->mean[c][j] /= res->per_kind[c];
	if (centroid((const double (*)[AU_NFEAT])f, label, nt, ~0u, splits, rng, &res->tested,
		     &res->correct, res->confusion) != LWC_OK)
		goto out;
	rc = LWC_OK;
out:
	free(seq);
	free(typed);
	free(f);
	free(label);
	return rc;
}

/* ---- 4, timing: the intervals between statements ---------------------------- */

int au_attack_interval(const struct au_stmt *s, size_t n, uint32_t splits, struct au_rng *rng,
		       struct au_interval *res)
{
	double (*f)[AU_NFEAT] = calloc(n ? n : 1, sizeof(*f));
	double *v = malloc((n ? n : 1) * sizeof(*v));
	int *label = malloc((n ? n : 1) * sizeof(*label));
	size_t nt = 0;
	int rc = LWC_ERR_NOMEM;

	memset(res, 0, sizeof(*res));
	res->splits = splits;
	if (f == NULL || v == NULL || label == NULL)
		goto out;
	/* a statement with a statement of the phase on either side */
	for (size_t i = 1; i + 1 < n; i++) {
		const struct au_stmt *x = &s[i];

		if (x->phase != AU_P_PACE || s[i - 1].phase != AU_P_PACE ||
		    s[i + 1].phase != AU_P_PACE || x->kind > AU_DELETE || x->o.read_ops == 0 ||
		    s[i - 1].o.read_ops == 0 || s[i + 1].o.read_ops == 0)
			continue;
		f[nt][0] = x->o.t_first - s[i - 1].o.t_last;
		f[nt][1] = s[i + 1].o.t_first - x->o.t_last;
		label[nt] = (int)x->kind;
		res->per_kind[x->kind]++;
		nt++;
	}
	for (int k = 0; k < 4; k++)
		for (int j = 0; j < 2; j++) {
			size_t m = 0;

			for (size_t q = 0; q < nt; q++)
				if (label[q] == k)
					v[m++] = f[q][j] * 1e3;
			(j ? res->median_next_ms : res->median_prev_ms)[k] = m ? au_median(v, m) : 0;
		}
	/* the tails: each type's share beyond the pooled percentiles */
	for (int j = 0; j < 2 && nt > 0; j++) {
		uint32_t past[2][4] = { { 0 } };

		for (size_t q = 0; q < nt; q++)
			v[q] = f[q][j] * 1e3;
		qsort(v, nt, sizeof(*v), cmp_double);
		res->p95_ms[j] = v[nt * 95 / 100];
		res->p99_ms[j] = v[nt * 99 / 100];
		for (size_t q = 0; q < nt; q++) {
			past[0][label[q]] += f[q][j] * 1e3 > res->p95_ms[j];
			past[1][label[q]] += f[q][j] * 1e3 > res->p99_ms[j];
		}
		for (int k = 0; k < 4; k++) {
			res->past95[j][k] = res->per_kind[k] ? (double)past[0][k] / res->per_kind[k] : 0;
			res->past99[j][k] = res->per_kind[k] ? (double)past[1][k] / res->per_kind[k] : 0;
		}
	}
	if ((rc = centroid((const double (*)[AU_NFEAT])f, label, nt, 3u, splits, rng, &res->tested,
			   &res->correct, NULL)) != LWC_OK ||
	    (rc = centroid((const double (*)[AU_NFEAT])f, label, nt, 1u, splits, rng,
			   &res->tested_prev, &res->correct_prev, NULL)) != LWC_OK)
		goto out;
	rc = centroid((const double (*)[AU_NFEAT])f, label, nt, 2u, splits, rng, &res->tested_next,
		      &res->correct_next, NULL);
out:
	free(f);
	free(v);
	free(label);
	return rc;
}
