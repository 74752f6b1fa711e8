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
 * Each entry carries its token's two halves as integers, so that neither
 * the sort nor the caller's walk over its runs goes back to the token
 * (a pointer into a large request: a cache miss an entry).
 */
#ifndef LWC_TOKSORT_H
#define LWC_TOKSORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cry.h"

struct tokrow {
	const uint8_t *tok;           /* CRY_TOKEN_BYTES                      */
	uint64_t row;
	uint64_t key, tail;           /* its two halves (big-endian), set by
				       * tokrow_sort: the sort and the runs
				       * after it never go back to tok, which
				       * points into a large request          */
};

/* memcmp order of the tokens, then row order. */
int tokrow_cmp(const void *a, const void *b);

/* Sort tr[0..n) by tokrow_cmp; sets each entry's key and tail. */
void tokrow_sort(struct tokrow *tr, size_t n);

/* An entry of token tok and row id row, its halves set. */
static inline void tokrow_set(struct tokrow *e, const uint8_t *tok, uint64_t row)
{
	e->tok = tok;
	e->row = row;
	e->key = cry_get_be64(tok);
	e->tail = cry_get_be64(tok + 8);
}

/* tokrow_sort of entries made by tokrow_set (their halves are not read
 * again): a caller with many tokens a row sets every column's entries in
 * one pass over the rows, each row's tokens read once. */
void tokrow_sort_set(struct tokrow *tr, size_t n);

/* a and b (sorted by tokrow_sort) have the same token. */
static inline int tokrow_same(const struct tokrow *a, const struct tokrow *b)
{
	return a->key == b->key && a->tail == b->tail;
}

#endif
