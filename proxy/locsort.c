/*
 * locsort.c - rows by location: qsort, or from 2,048 rows an LSD radix sort
 * of 11-bit digits (locsort.h).
 */
#include <stdlib.h>
#include <string.h>

#include "locsort.h"

#define DIGIT_BITS 11u
#define DIGITS (1u << DIGIT_BITS)
#define SMALL 2048u                  /* below this, qsort: the radix sort's
				      * counts (16 KB a pass) cost more */

static int cmp_loc(const void *a, const void *b)
{
	uint64_t x = ((const struct locrow *)a)->loc, y = ((const struct locrow *)b)->loc;

	return x < y ? -1 : x > y;
}

void locrow_sort(struct locrow *a, size_t n)
{
	uint64_t max = 0;
	unsigned bits = 0;
	struct locrow *tmp, *src = a, *dst;
	size_t *count;
	int sorted = 1;

	for (size_t i = 0; i < n; i++) {
		if (a[i].loc > max)
			max = a[i].loc;
		if (i > 0 && a[i].loc < a[i - 1].loc)
			sorted = 0;
	}
	if (sorted)
		return;
	if (n < SMALL) {
		qsort(a, n, sizeof(*a), cmp_loc);
		return;
	}
	while (bits < 64 && (max >> bits) != 0)
		bits += DIGIT_BITS;
	tmp = malloc(n * sizeof(*tmp));
	count = malloc(DIGITS * sizeof(*count));
	if (tmp == NULL || count == NULL) {
		free(tmp);
		free(count);
		qsort(a, n, sizeof(*a), cmp_loc);
		return;
	}
	dst = tmp;
	for (unsigned shift = 0; shift < bits; shift += DIGIT_BITS) {
		size_t sum = 0;

		memset(count, 0, DIGITS * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[(src[i].loc >> shift) & (DIGITS - 1)]++;
		for (size_t d = 0; d < DIGITS; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].loc >> shift) & (DIGITS - 1)]++] = src[i];
		dst = src;
		src = src == a ? tmp : a;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	free(count);
}
