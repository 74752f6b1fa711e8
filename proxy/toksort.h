/*
 * toksort.h - index entries (a token and a row id) in the order of the
 * proxy's index B-trees: token bytes, then row id.
 *
 * A statement's commit sorts each column's entries before it walks the
 * B-tree (bulk INSERT, DELETE, UPDATE).  qsort() with a memcmp() per
 * comparison took 70 % of a 200,000-row DELETE; tokens are uniformly random
 * BLAKE2b outputs, so a stable radix sort on their first 33 bits puts almost
 * every entry in place and only runs of equal prefixes (the same token, or
 * a coincidence: about n^2 / 2^34 pairs among n entries) are compared whole.
 */
#ifndef LWC_TOKSORT_H
#define LWC_TOKSORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tokrow {
	const uint8_t *tok;           /* CRY_TOKEN_BYTES                      */
	uint64_t row;
	uint64_t key;                 /* its first 8 bytes, set by tokrow_sort */
};

/* memcmp order of the tokens, then row order. */
int tokrow_cmp(const void *a, const void *b);

/* Sort tr[0..n) by tokrow_cmp; sets each entry's key (entries with
 * different keys have different tokens). */
void tokrow_sort(struct tokrow *tr, size_t n);

/* a and b (sorted by tokrow_sort) have the same token. */
static inline int tokrow_same(const struct tokrow *a, const struct tokrow *b)
{
	uint64_t x, y;

	if (a->key != b->key)
		return 0;
	memcpy(&x, a->tok + 8, 8);
	memcpy(&y, b->tok + 8, 8);
	return x == y;
}

#endif
