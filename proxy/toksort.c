/*
 * toksort.c - see toksort.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cry.h"
#include "toksort.h"

int tokrow_cmp(const void *x, const void *y)
{
	const struct tokrow *a = x, *b = y;
	int c = memcmp(a->tok, b->tok, CRY_TOKEN_BYTES);

	if (c)
		return c;
	return a->row < b->row ? -1 : a->row > b->row;
}

/* Entries whose first 8 bytes are equal, in whole order: usually one token
 * repeated in input order, which is already row order when the caller's
 * input was (then only the check runs). */
static void fix_run(struct tokrow *tr, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (tokrow_cmp(&tr[i - 1], &tr[i]) > 0) {
			qsort(tr, n, sizeof(*tr), tokrow_cmp);
			return;
		}
}

void tokrow_sort(struct tokrow *tr, size_t n)
{
	struct tokrow *tmp, *src = tr, *dst;
	size_t count[256];

	for (size_t i = 0; i < n; i++)
		tr[i].key = cry_get_be64(tr[i].tok);
	if (n < 2)
		return;
	if (n < 64 || (tmp = malloc(n * sizeof(*tmp))) == NULL) {
		qsort(tr, n, sizeof(*tr), tokrow_cmp);
		return;
	}
	dst = tmp;
	/* least significant byte first; each pass stable */
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t pos = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[src[i].key >> shift & 0xff]++;
		if (count[src[0].key >> shift & 0xff] == n)
			continue;                   /* every entry has this byte */
		for (size_t b = 0; b < 256; b++) {
			size_t c = count[b];

			count[b] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[src[i].key >> shift & 0xff]++] = src[i];
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

		while (j < n && tr[j].key == tr[i].key)
			j++;
		if (j - i > 1)
			fix_run(tr + i, j - i);
		i = j;
	}
}
