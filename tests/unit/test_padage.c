/*
 * test_padage.c - the proxy's record of the blocks' write order and of the
 * real blocks' ranks (proxy/padage.c): ranks and the block at a rank agree
 * with a plain list through growth and renumbering; padding ranks are drawn
 * only among the real ones seen, in their proportions, per class of γ, the
 * last PA_RING of them, and uniformly (0) before enough were seen.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "../../proxy/padage.h"

/* The model: blocks in write order, oldest first. */
struct model {
	uint64_t *v;
	uint64_t n;
};

static void model_touch(struct model *m, uint64_t b)
{
	uint64_t i;

	for (i = 0; i < m->n && m->v[i] != b; i++)
		;
	if (i < m->n) {
		memmove(m->v + i, m->v + i + 1, (m->n - i - 1) * sizeof(*m->v));
		m->n--;
	}
	m->v[m->n++] = b;
}

static void check_against(const struct px_padage *pa, const struct model *m)
{
	assert_int_equal(pa->n, m->n);
	for (uint64_t r = 0; r < m->n; r++) {
		uint64_t b = m->v[m->n - 1 - r];

		assert_int_equal(pa_block_at(pa, r), b);
		assert_int_equal(pa_rank(pa, b), r);
	}
	assert_int_equal(pa_block_at(pa, m->n), UINT64_MAX);
}

static void test_order_matches_list(void **state)
{
	struct px_padage *pa = malloc(sizeof(*pa));
	struct model m = { calloc(400, sizeof(uint64_t)), 0 };
	uint64_t n0 = 100;

	(void)state;
	assert_non_null(pa);
	assert_int_equal(pa_init(pa, n0), 0);
	/* the initial order is some permutation of 0..n0-1 */
	{
		uint8_t *seen = calloc(n0, 1);

		for (uint64_t r = 0; r < n0; r++) {
			uint64_t b = pa_block_at(pa, r);

			assert_true(b < n0);
			assert_int_equal(seen[b], 0);
			seen[b] = 1;
			assert_int_equal(pa_rank(pa, b), r);
		}
		free(seen);
		for (uint64_t r = n0; r-- > 0;)
			m.v[m.n++] = pa_block_at(pa, r);
	}
	check_against(pa, &m);
	/* 30,000 writes: several renumberings (4,296 positions at first), and
	 * growth to 300 blocks (blocks appear the first time they are written) */
	for (int i = 0; i < 30000; i++) {
		uint64_t limit = i < 10000 ? n0 : 300;
		uint64_t b = randombytes_uniform((uint32_t)limit);

		/* a hot few, as real workloads have */
		if (i % 3 == 0)
			b = randombytes_uniform(5);
		pa_touch(pa, b);
		model_touch(&m, b);
		if (i % 997 == 0 || i == 29999)
			check_against(pa, &m);
	}
	assert_int_equal(pa->broken, 0);
	assert_int_equal(m.n, 300);
	/* a block never written ranks after every block in the order */
	assert_int_equal(pa_rank(pa, 5000), pa->n);
	pa_free(pa);
	free(pa);
	free(m.v);
}

static void test_draw_follows_observed(void **state)
{
	struct px_padage *pa = malloc(sizeof(*pa));
	uint64_t r;
	unsigned low = 0;

	(void)state;
	assert_non_null(pa);
	assert_int_equal(pa_init(pa, 1000), 0);
	/* nothing seen: uniform padding */
	assert_int_equal(pa_draw(pa, 4, &r), 0);
	for (unsigned i = 0; i + 2 < PA_MIN_SAMPLES; i++)
		pa_observe(pa, 4, 37);
	assert_int_equal(pa_draw(pa, 4, &r), 0);
	pa_observe(pa, 5, 3);           /* γ 4-7: one class */
	pa_observe(pa, 7, 37);
	assert_int_equal(pa_draw(pa, 4, &r), 1);
	/* only the ranks seen, in their proportions (1 of 32) */
	for (int i = 0; i < 4000; i++) {
		assert_int_equal(pa_draw(pa, 6, &r), 1);
		assert_true(r == 3 || r == 37);
		low += r == 3;
	}
	assert_in_range(low, 50, 250);          /* 125 expected */
	/* another class is its own */
	assert_int_equal(pa_draw(pa, 8, &r), 0);
	assert_int_equal(pa_draw(pa, 3, &r), 0);
	/* a rank beyond the blocks there are is drawn as the oldest */
	for (unsigned i = 0; i < PA_MIN_SAMPLES; i++)
		pa_observe(pa, 64, 5000);
	assert_int_equal(pa_draw(pa, 64, &r), 1);
	assert_int_equal(r, 999);
	pa_free(pa);
	free(pa);
}

static void test_ring_follows_workload(void **state)
{
	struct px_padage *pa = malloc(sizeof(*pa));
	uint64_t r;

	(void)state;
	assert_non_null(pa);
	assert_int_equal(pa_init(pa, 100000), 0);
	/* every real block at rank 10, then PA_RING at 50,000: the first
	 * workload is forgotten entirely */
	for (unsigned i = 0; i < 3 * PA_RING; i++)
		pa_observe(pa, 4, 10);
	for (unsigned i = 0; i < PA_RING - 1; i++)
		pa_observe(pa, 4, 50000);
	{
		unsigned old = 0;

		for (int i = 0; i < 20000; i++) {
			assert_int_equal(pa_draw(pa, 4, &r), 1);
			old += r == 10;
		}
		assert_in_range(old, 1, 200);   /* one of 1,024 left: ~20 */
	}
	pa_observe(pa, 4, 50000);
	for (int i = 0; i < 5000; i++) {
		assert_int_equal(pa_draw(pa, 4, &r), 1);
		assert_int_equal(r, 50000);
	}
	pa_free(pa);
	free(pa);
}

/* A stand-in's rank is one of the last PA_RECENT ranks of its class, each
 * about as often, and never an older one the ring still holds. */
static void test_stand_in_from_the_last_ranks(void **state)
{
	struct px_padage *pa = malloc(sizeof(*pa));
	unsigned seen[PA_RECENT] = { 0 };
	uint64_t r;

	(void)state;
	assert_non_null(pa);
	assert_int_equal(pa_init(pa, 100000), 0);
	assert_int_equal(pa_draw_recent(pa, 4, &r), 0);
	for (unsigned i = 0; i + 1 < PA_MIN_SAMPLES; i++)
		pa_observe(pa, 4, 7);
	assert_int_equal(pa_draw_recent(pa, 4, &r), 0);
	/* a hot workload (rank 7) fills the ring, then a cold one: the
	 * ranks 1,000 + i, i < PA_RECENT, the newest last */
	for (unsigned i = 0; i < PA_RING; i++)
		pa_observe(pa, 5, 7);
	for (unsigned i = 0; i < PA_RECENT; i++)
		pa_observe(pa, 6, 1000 + i);
	for (int i = 0; i < 32 * (int)PA_RECENT; i++) {
		assert_int_equal(pa_draw_recent(pa, 4, &r), 1);
		assert_in_range(r, 1000, 1000 + PA_RECENT - 1);
		seen[r - 1000]++;
	}
	for (unsigned i = 0; i < PA_RECENT; i++)
		assert_in_range(seen[i], 8, 64);    /* 32 expected */
	/* the ring as a whole still draws the hot ranks mostly */
	{
		unsigned hot = 0;

		for (int i = 0; i < 1000; i++) {
			assert_int_equal(pa_draw(pa, 4, &r), 1);
			hot += r == 7;
		}
		assert_in_range(hot, 900, 1000);   /* 992 of 1,024 kept */
	}
	/* the ring wrapped: the last ones are found across its end */
	for (unsigned i = 0; i < PA_RING - PA_RECENT / 2; i++)
		pa_observe(pa, 4, 7);
	for (unsigned i = 0; i < PA_RECENT; i++)
		pa_observe(pa, 4, 2000 + i);
	for (int i = 0; i < 4000; i++) {
		assert_int_equal(pa_draw_recent(pa, 4, &r), 1);
		assert_in_range(r, 2000, 2000 + PA_RECENT - 1);
	}
	/* another class has none */
	assert_int_equal(pa_draw_recent(pa, 8, &r), 0);
	pa_free(pa);
	free(pa);
}

static void test_order_saved_and_restored(void **state)
{
	struct px_padage *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	uint64_t n = 0, *order, bad[4] = { 0, 1, 1, 3 }, big[4] = { 0, 1, 2, 4 };

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(pa_init(a, 500), 0);
	for (int i = 0; i < 20000; i++)               /* renumbered on the way */
		pa_touch(a, randombytes_uniform(i % 2 ? 10 : 500));
	assert_non_null(order = pa_order(a, &n));
	assert_int_equal(n, 500);
	assert_int_equal(pa_init(b, 500), 0);
	assert_int_equal(pa_init_order(b, order, n), 0);
	for (uint64_t r = 0; r < n; r++)
		assert_int_equal(pa_block_at(b, r), pa_block_at(a, r));
	/* not a permutation of 0..n-1: refused, b unchanged */
	assert_int_equal(pa_init_order(b, bad, 4), -1);
	assert_int_equal(pa_init_order(b, big, 4), -1);
	assert_int_equal(b->n, 500);
	assert_int_equal(pa_block_at(b, 0), pa_block_at(a, 0));
	free(order);
	pa_free(a);
	pa_free(b);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_matches_list),
		cmocka_unit_test(test_draw_follows_observed),
		cmocka_unit_test(test_ring_follows_workload),
		cmocka_unit_test(test_stand_in_from_the_last_ranks),
		cmocka_unit_test(test_order_saved_and_restored),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
