/*
 * padage.c - see padage.h: the blocks' write order and the ranks of the
 * real blocks read.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cry.h"
#include "padage.h"

#define PA_NONE UINT64_MAX

static void fw_add(uint32_t *fw, uint64_t cap, uint64_t i, int d)
{
	for (; i <= cap; i += i & (~i + 1))
		fw[i] = (uint32_t)((int64_t)fw[i] + d);
}

static uint64_t fw_prefix(const uint32_t *fw, uint64_t i)
{
	uint64_t s = 0;

	for (; i > 0; i -= i & (~i + 1))
		s += fw[i];
	return s;
}

/* (Re)build at and fw over cap positions for the blocks in order[0..n). */
static int rebuild(struct px_padage *pa, const uint64_t *order, uint64_t n, uint64_t cap)
{
	uint64_t *at = malloc((cap + 1) * sizeof(*at));
	uint32_t *fw = calloc(cap + 1, sizeof(*fw));

	if (at == NULL || fw == NULL) {
		free(at);
		free(fw);
		return -1;
	}
	for (uint64_t i = 0; i <= cap; i++)
		at[i] = PA_NONE;
	for (uint64_t i = 0; i < n; i++) {
		at[i + 1] = order[i];
		pa->pos[order[i]] = i + 1;
		fw[i + 1] = 1;
	}
	/* linear Fenwick build: push each node's sum to its parent */
	for (uint64_t i = 1; i <= cap; i++) {
		uint64_t j = i + (i & (~i + 1));
		if (j <= cap)
			fw[j] += fw[i];
	}
	free(pa->at);
	free(pa->fw);
	pa->at = at;
	pa->fw = fw;
	pa->cap = cap;
	pa->clock = n;
	pa->n = n;
	return 0;
}

static uint64_t cap_for(uint64_t n)
{
	return 2 * n + 4096;
}

int pa_init_order(struct px_padage *pa, const uint64_t *order, uint64_t n)
{
	uint8_t *seen;
	int rc;

	for (uint64_t i = 0; i < n; i++)
		if (order[i] >= n)
			return -1;
	if ((seen = calloc(n + 1, 1)) == NULL)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		if (seen[order[i]]) {
			free(seen);
			return -1;               /* not a permutation */
		}
		seen[order[i]] = 1;
	}
	free(seen);
	pa_free(pa);
	memset(pa, 0, sizeof(*pa));
	pa->nb = n;
	if ((pa->pos = calloc(n + 1, sizeof(*pa->pos))) == NULL)
		return -1;
	rc = rebuild(pa, order, n, cap_for(n));
	if (rc != 0)
		pa_free(pa);
	return rc;
}

int pa_init(struct px_padage *pa, uint64_t n)
{
	uint64_t *order = malloc((n + 1) * sizeof(*order));
	int rc;

	memset(pa, 0, sizeof(*pa));
	if (order == NULL)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t j = cry_uniform(i + 1);

		order[i] = order[j];
		order[j] = i;
	}
	rc = pa_init_order(pa, order, n);
	free(order);
	return rc;
}

uint64_t *pa_order(const struct px_padage *pa, uint64_t *n)
{
	uint64_t *order, m = 0;

	if (pa->broken || (order = malloc((pa->n + 1) * sizeof(*order))) == NULL)
		return NULL;
	for (uint64_t p = 1; p <= pa->clock; p++)
		if (pa->at[p] != PA_NONE)
			order[m++] = pa->at[p];
	*n = m;
	return order;
}

void pa_free(struct px_padage *pa)
{
	free(pa->pos);
	free(pa->at);
	free(pa->fw);
	pa->pos = pa->at = NULL;
	pa->fw = NULL;
	pa->n = pa->nb = pa->cap = pa->clock = 0;
}

/* The positions are used up: renumber the blocks 1..n in their order. */
static int compact(struct px_padage *pa, uint64_t need_n)
{
	uint64_t *order = malloc((pa->n + 1) * sizeof(*order)), m = 0;
	int rc;

	if (order == NULL)
		return -1;
	for (uint64_t p = 1; p <= pa->clock; p++)
		if (pa->at[p] != PA_NONE)
			order[m++] = pa->at[p];
	rc = rebuild(pa, order, m, cap_for(need_n));
	free(order);
	return rc;
}

void pa_touch(struct px_padage *pa, uint64_t b)
{
	if (pa->broken)
		return;
	if (b >= pa->nb) {
		uint64_t nb = b + 1 > 2 * pa->nb ? b + 1 : 2 * pa->nb;
		uint64_t *pos = realloc(pa->pos, (nb + 1) * sizeof(*pos));

		if (pos == NULL) {
			pa->broken = 1;
			return;
		}
		memset(pos + pa->nb, 0, (nb + 1 - pa->nb) * sizeof(*pos));
		pa->pos = pos;
		pa->nb = nb;
	}
	if (pa->pos[b] != 0) {
		fw_add(pa->fw, pa->cap, pa->pos[b], -1);
		pa->at[pa->pos[b]] = PA_NONE;
		pa->pos[b] = 0;
		pa->n--;
	}
	if (pa->clock == pa->cap && compact(pa, pa->n + 1) != 0) {
		pa->broken = 1;
		return;
	}
	pa->clock++;
	pa->pos[b] = pa->clock;
	pa->at[pa->clock] = b;
	fw_add(pa->fw, pa->cap, pa->clock, 1);
	pa->n++;
}

uint64_t pa_rank(const struct px_padage *pa, uint64_t b)
{
	if (b >= pa->nb || pa->pos[b] == 0)
		return pa->n;               /* never written: older than all */
	return pa->n - fw_prefix(pa->fw, pa->pos[b]);
}

uint64_t pa_block_at(const struct px_padage *pa, uint64_t r)
{
	uint64_t k, p = 0, step = 1;

	if (r >= pa->n)
		return PA_NONE;
	k = pa->n - r;                      /* the k-th oldest, from 1 */
	while (step * 2 <= pa->cap)
		step *= 2;
	/* the largest p with prefix(p) < k; the block is at p + 1 */
	for (; step > 0; step /= 2)
		if (p + step <= pa->cap && pa->fw[p + step] < k) {
			p += step;
			k -= pa->fw[p];
		}
	return pa->at[p + 1];
}

static unsigned class_of(uint64_t gamma)
{
	unsigned c = gamma ? 63u - (unsigned)__builtin_clzll(gamma) : 0;

	return c < PA_CLASSES ? c : PA_CLASSES - 1;
}

void pa_observe(struct px_padage *pa, uint64_t gamma, uint64_t r)
{
	unsigned c = class_of(gamma);

	pa->ring[c][pa->head[c]] = r;
	pa->head[c] = (pa->head[c] + 1) % PA_RING;
	if (pa->nring[c] < PA_RING)
		pa->nring[c]++;
}

int pa_draw(const struct px_padage *pa, uint64_t gamma, uint64_t *r)
{
	unsigned c = class_of(gamma);
	uint64_t v;

	if (pa->broken || pa->n == 0 || pa->nring[c] < PA_MIN_SAMPLES)
		return 0;
	v = pa->ring[c][randombytes_uniform(pa->nring[c])];
	*r = v < pa->n ? v : pa->n - 1;
	return 1;
}

int pa_draw_recent(const struct px_padage *pa, uint64_t gamma, uint64_t *r)
{
	unsigned c = class_of(gamma);
	uint32_t back;
	uint64_t v;

	if (pa->broken || pa->n == 0 || pa->nring[c] < PA_MIN_SAMPLES)
		return 0;
	/* head is where the next goes: the last one is just before it */
	back = 1 + randombytes_uniform(PA_RECENT < pa->nring[c] ? PA_RECENT : pa->nring[c]);
	v = pa->ring[c][(pa->head[c] + PA_RING - back) % PA_RING];
	*r = v < pa->n ? v : pa->n - 1;
	return 1;
}
