/*
 * toksort.c - see toksort.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cry.h"
#include "toksort.h"

/* Three passes of 11 bits sort on the key's top 33 bits (2,048 counters a
 * pass, all three counted in one read); random tokens of a statement are
 * then almost all apart, and the entries sharing their top 33 bits (the
 * same token, or a coincidence) are put in whole order by fix_run. */
#define RADIX_BITS 11u
#define RADIX_MASK ((1u << RADIX_BITS) - 1)
#define RADIX_PASSES 3u
#define RADIX_LOW (64u - RADIX_PASSES * RADIX_BITS)   /* bits below: fix_run */

/* a token is its key (8 bytes) and a tail of 8 */
_Static_assert(CRY_TOKEN_BYTES == 16, "tokens of 16 bytes");

int tokrow_cmp(const void *x, const void *y)
{
	const struct tokrow *a = x, *b = y;
	int c = memcmp(a->tok, b->tok, CRY_TOKEN_BYTES);

	if (c)
		return c;
	return a->row < b->row ? -1 : a->row > b->row;
}

/* tokrow_cmp's order by the halves tokrow_sort set */
static int halves_cmp(const void *x, const void *y)
{
	const struct tokrow *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->tail != b->tail)
		return a->tail < b->tail ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
}

/* Already sorted: one token for every row, in row order (a bulk INSERT's
 * upper range levels), or tokens in order.  Random tokens stop at the
 * first or second entry. */
static int in_order(const struct tokrow *tr, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (tr[i - 1].key != tr[i].key) {
			if (tr[i - 1].key > tr[i].key)
				return 0;
			continue;
		}
		if (tr[i - 1].tail > tr[i].tail ||
		    (tr[i - 1].tail == tr[i].tail && tr[i - 1].row > tr[i].row))
			return 0;
	}
	return 1;
}

/* Entries whose top 33 bits are equal, in whole order: usually one token
 * repeated in input order, which is already row order when the caller's
 * input was (then only in_order's check runs). */
static void fix_run(struct tokrow *tr, size_t n)
{
	if (!in_order(tr, n))
		qsort(tr, n, sizeof(*tr), halves_cmp);
}

void tokrow_sort(struct tokrow *tr, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tokrow_set(&tr[i], tr[i].tok, tr[i].row);
	tokrow_sort_set(tr, n);
}

void tokrow_sort_set(struct tokrow *tr, size_t n)
{
	struct tokrow *tmp, *src = tr, *dst;
	uint32_t count[RADIX_PASSES][1u << RADIX_BITS];

	if (n < 2 || in_order(tr, n))
		return;
	if (n < 64 || n > UINT32_MAX || (tmp = malloc(n * sizeof(*tmp))) == NULL) {
		qsort(tr, n, sizeof(*tr), halves_cmp);
		return;
	}
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++)
		for (unsigned p = 0; p < RADIX_PASSES; p++)
			count[p][tr[i].key >> (RADIX_LOW + p * RADIX_BITS) & RADIX_MASK]++;
	dst = tmp;
	/* least significant digit first; each pass stable */
	for (unsigned p = 0; p < RADIX_PASSES; p++) {
		unsigned shift = RADIX_LOW + p * RADIX_BITS;
		uint32_t *c = count[p], pos = 0;

		if (c[src[0].key >> shift & RADIX_MASK] == n)
			continue;                   /* every entry has this digit */
		for (size_t b = 0; b <= RADIX_MASK; b++) {
			uint32_t k = c[b];

			c[b] = pos;
			pos += k;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[src[i].key >> shift & RADIX_MASK]++] = src[i];
		{
			struct tokrow *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != tr)
		memcpy(tr, src, n * sizeof(*tr));
	free(tmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && tr[j].key >> RADIX_LOW == tr[i].key >> RADIX_LOW)
			j++;
		if (j - i > 1)
			fix_run(tr + i, j - i);
		i = j;
	}
}
