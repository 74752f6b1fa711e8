/*
 * test_fill.c - the proxy's random fill of empty slots (proxy/cloud_io.c
 * fill_empty): full slots untouched, every empty slot new bytes, no two
 * empty slots alike (one keystream, not one per run restarted), new
 * bytes under each block's key of a batch's random bytes (rnd_draw), the
 * whole block when there is no bitmap, and the scratch used within
 * px_scratch_words; a batch's random bytes: no two blocks' keys or nonces
 * alike, nor two batches'.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "../../proxy/engine_int.h"

#define CANARY 0xa5a5a5a5u

static void geom(struct px_state *st, uint32_t m, uint32_t S, uint32_t cell)
{
	memset(st, 0, sizeof(*st));
	st->g.m = m;
	st->g.S = S;
	st->g.R = S - 40;
	st->g.cell = cell;
	st->g.block_bytes = (size_t)m * S;
	st->g.words = (m + 63) / 64;
}

static int all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

/* Fill a block whose full slots are those of bits, twice, and check. */
static void check(uint32_t m, uint32_t S, uint32_t cell, const uint64_t *bits)
{
	struct px_state st;
	size_t words, bb;
	uint32_t *scratch;
	uint8_t *blk, *first, *rnd = rnd_draw(2);

	assert_non_null(rnd);
	geom(&st, m, S, cell);
	bb = st.g.block_bytes;
	words = px_scratch_words(&st.g);
	scratch = malloc((words + 16) * sizeof(uint32_t));
	blk = malloc(bb);
	first = malloc(bb);
	assert_non_null(scratch);
	assert_non_null(blk);
	assert_non_null(first);
	for (size_t i = 0; i < words + 16; i++)
		scratch[i] = CANARY;
	memset(blk, 0x5c, bb);

	fill_empty(&st, blk, bits, scratch, rnd);
	for (size_t i = words; i < words + 16; i++)
		assert_int_equal(scratch[i], CANARY);
	for (uint32_t s = 0; s < m; s++) {
		const uint8_t *slot = blk + (size_t)s * S;

		if (px_bit(bits, s)) {
			assert_true(all_bytes(slot, S, 0x5c));
			continue;
		}
		/* 1 in 2^(8 S) to fail by chance */
		assert_false(all_bytes(slot, S, 0x5c));
		for (uint32_t t = 0; t < s; t++)
			if (!px_bit(bits, t))
				assert_memory_not_equal(slot, blk + (size_t)t * S, S);
	}
	memcpy(first, blk, bb);
	fill_empty(&st, blk, bits, scratch, rnd + PX_BLOCK_RND);
	for (uint32_t s = 0; s < m; s++) {
		const uint8_t *a = blk + (size_t)s * S, *b = first + (size_t)s * S;

		if (px_bit(bits, s))
			assert_true(all_bytes(a, S, 0x5c));
		else
			assert_memory_not_equal(a, b, S);
	}
	rnd_free(rnd, 2);
	free(first);
	free(blk);
	free(scratch);
}

static void test_runs(void **state)
{
	uint64_t bits[2];

	(void)state;
	/* the default geometry, 40 full slots of 64 in runs of every length */
	bits[0] = 0x0f0f33cc5a5a3c3cull;
	check(64, 168, 8, bits);
	/* alternate slots, the shortest runs */
	bits[0] = 0x5555555555555555ull;
	check(64, 168, 8, bits);
	/* one empty slot at each end */
	bits[0] = 0x7ffffffffffffffeull;
	check(64, 168, 8, bits);
	/* two bitmap words, byte cells, slots not a multiple of 64 bytes */
	bits[0] = 0x00ff00ff00ff00ffull;
	bits[1] = 0x5ull;
	check(70, 41, 1, bits);
	/* small blocks */
	bits[0] = 0x96ull;
	check(8, 40, 2, bits);
}

static void test_empty_and_full(void **state)
{
	uint64_t none[1] = { 0 }, full[1] = { ~0ull };
	struct px_state st;
	uint8_t *blk, *zero, *rnd = rnd_draw(1);

	(void)state;
	check(64, 168, 8, none);
	check(64, 168, 8, full);
	/* no bitmap: the whole block, no scratch needed */
	geom(&st, 64, 168, 8);
	blk = calloc(1, st.g.block_bytes);
	zero = calloc(1, st.g.block_bytes);
	assert_non_null(blk);
	assert_non_null(zero);
	assert_non_null(rnd);
	fill_empty(&st, blk, NULL, NULL, rnd);
	for (uint32_t s = 0; s < 64; s++)
		assert_memory_not_equal(blk + (size_t)s * 168, zero, 168);
	rnd_free(rnd, 1);
	free(zero);
	free(blk);
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, PX_RND_KEY);
}

static int cmp_nonce(const void *a, const void *b)
{
	return memcmp((const uint8_t *)a + PX_RND_KEY, (const uint8_t *)b + PX_RND_KEY,
		      CRY_NONCE_BYTES);
}

/* A batch's random bytes (rnd_draw): every block its own key and nonce,
 * in one batch and across two (a nonce twice under K_OPS would be the
 * seal's undoing); sorted, no two neighbours alike. */
static void test_batch_rnd(void **state)
{
	enum { N = 1024 };
	uint8_t *all = malloc(2 * N * PX_BLOCK_RND), *a = rnd_draw(N), *b = rnd_draw(N);

	(void)state;
	assert_non_null(all);
	assert_non_null(a);
	assert_non_null(b);
	memcpy(all, a, N * PX_BLOCK_RND);
	memcpy(all + N * PX_BLOCK_RND, b, N * PX_BLOCK_RND);
	qsort(all, 2 * N, PX_BLOCK_RND, cmp_key);
	for (size_t i = 1; i < 2 * N; i++)
		assert_memory_not_equal(all + (i - 1) * PX_BLOCK_RND, all + i * PX_BLOCK_RND,
					PX_RND_KEY);
	qsort(all, 2 * N, PX_BLOCK_RND, cmp_nonce);
	for (size_t i = 1; i < 2 * N; i++)
		assert_memory_not_equal(all + (i - 1) * PX_BLOCK_RND + PX_RND_KEY,
					all + i * PX_BLOCK_RND + PX_RND_KEY, CRY_NONCE_BYTES);
	rnd_free(a, N);
	rnd_free(b, N);
	rnd_free(NULL, N);
	free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_empty_and_full),
		cmocka_unit_test(test_batch_rnd),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
