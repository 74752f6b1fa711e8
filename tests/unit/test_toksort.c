/*
 * test_toksort.c - the order of index entries (proxy/toksort.c) against
 * qsort() with the same comparison: random tokens, random first 8 bytes
 * each shared by two tokens, one token repeated in
 * and out of row order, tokens equal in their first 8 bytes only, a few
 * distinct tokens among many rows, tokens apart only below the radix's
 * top 33 bits, tokens in order already (or but for the
 * last), and the sizes around the radix cut-off;
 * tokrow_same on neighbours of the sorted order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cry.h"
#include "../../proxy/toksort.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* tokens of one shape, n entries; sorted both ways and compared */
enum shape { RANDOM, PAIRS, SAME_TOKEN, SAME_PREFIX, FEW_TOKENS, SHARED_BYTES, LOW_BITS, ASCENDING,
	     LAST_OUT };

static void check(size_t n, enum shape sh, int row_order)
{
	uint8_t *toks = malloc((n ? n : 1) * CRY_TOKEN_BYTES);
	struct tokrow *a = malloc((n ? n : 1) * sizeof(*a));
	struct tokrow *b = malloc((n ? n : 1) * sizeof(*b));
	struct tokrow *c = malloc((n ? n : 1) * sizeof(*c));

	assert_non_null(toks);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	for (size_t i = 0; i < n; i++) {
		uint8_t *t = toks + i * CRY_TOKEN_BYTES;
		uint64_t hi = next(), lo = next();

		switch (sh) {
		case RANDOM:
			break;
		case PAIRS:                    /* first 8 bytes twice, spread: a few
						* to a top-digit bucket, tails random */
			hi = (uint64_t)(i / 2 + 1) * 0x9e3779b97f4a7c15u;
			break;
		case SAME_TOKEN:
			hi = 0x0123456789abcdefu, lo = 42;
			break;
		case SAME_PREFIX:              /* equal first 8 bytes, rest differs */
			hi = 0xfedcba9876543210u, lo %= 7;
			break;
		case FEW_TOKENS:
			hi = (hi % 5) * 0x1111111111111111u, lo = hi;
			break;
		case SHARED_BYTES:             /* only the middle bytes differ */
			hi = 0xaa000000000000bbu | (hi & 0x0000ffff00000000u);
			break;
		case LOW_BITS:                 /* the radix's 33 bits shared: only
						* the key's low 31 bits and the
						* tails differ (a few values) */
			hi = 0x123456789u << 31 | (hi % 5), lo %= 3;
			break;
		case ASCENDING:                /* in order already (tails too) */
			hi = i / 3, lo = i;
			break;
		case LAST_OUT:                 /* in order but for the last entry */
			hi = i + 1 == n ? 0 : i + 1, lo = 7;
			break;
		}
		cry_put_be64(t, hi);
		cry_put_be64(t + 8, lo);
		a[i].tok = t;
		a[i].row = row_order ? i : next() % (n + 1);
		a[i].key = 0;
	}
	memcpy(b, a, n * sizeof(*a));
	/* entries made by tokrow_set (with halves), sorted by tokrow_sort_set */
	for (size_t i = 0; i < n; i++) {
		tokrow_set(&c[i], a[i].tok, a[i].row);
		assert_int_equal(c[i].key, cry_get_be64(a[i].tok));
		assert_int_equal(c[i].tail, cry_get_be64(a[i].tok + 8));
	}
	tokrow_sort(a, n);
	tokrow_sort_set(c, n);
	qsort(b, n, sizeof(*b), tokrow_cmp);
	for (size_t i = 0; i < n; i++) {
		assert_memory_equal(a[i].tok, b[i].tok, CRY_TOKEN_BYTES);
		assert_int_equal(a[i].row, b[i].row);
		assert_ptr_equal(c[i].tok, a[i].tok);
		assert_int_equal(c[i].row, a[i].row);
		/* tokrow_same: the same token, not only the same first 8 bytes */
		if (i > 0)
			assert_int_equal(tokrow_same(&a[i - 1], &a[i]),
					 memcmp(a[i - 1].tok, a[i].tok, CRY_TOKEN_BYTES) == 0);
	}
	free(toks);
	free(a);
	free(b);
	free(c);
}

static void test_shapes(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 63, 64, 65, 1000, 20000 };
	(void)state;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int sh = RANDOM; sh <= LAST_OUT; sh++)
			for (int ro = 0; ro < 2; ro++)
				check(sizes[s], (enum shape)sh, ro);
}

static void test_many_random(void **state)
{
	(void)state;
	for (int r = 0; r < 200; r++)
		check(next() % 3000, (enum shape)(next() % (LAST_OUT + 1)), (int)(next() % 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_many_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
