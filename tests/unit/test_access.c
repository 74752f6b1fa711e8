/*
 * test_access.c - how the proxy cuts an access into READ/WRITE batches
 * (proxy/access.c, access_batch_size): at most --batch-blocks each; over a
 * fast link at least PX_PIPE_BATCHES of them from 2 x PX_PIPE_MIN_BLOCKS
 * blocks up, none smaller than PX_PIPE_MIN_BLOCKS unless --batch-blocks
 * is, and the whole access in one batch below that; over a slow link by
 * --batch-blocks alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../proxy/engine_int.h"

#define FAST 300u                       /* a round trip of 0.3 ms */
#define SLOW 25000u                     /* 25 ms */

static size_t batches(size_t gamma, size_t max)
{
	size_t b = access_batch_size(gamma, max, FAST);

	return (gamma + b - 1) / b;
}

static void test_values(void **state)
{
	(void)state;
	/* small accesses stay whole: a point statement, a 100-row range */
	assert_int_equal(batches(4, 1024), 1);
	assert_int_equal(batches(6, 1024), 1);
	assert_int_equal(batches(64, 1024), 1);
	assert_int_equal(batches(127, 1024), 2);    /* 64 + 63 */
	/* mid-sized ones are cut in four: a scattered 100-row SELECT (gamma
	 * 200), a clustered 10k one (500), up to four full batches */
	assert_int_equal(access_batch_size(200, 1024, FAST), 64);
	assert_int_equal(batches(200, 1024), 4);
	assert_int_equal(access_batch_size(500, 1024, FAST), 125);
	assert_int_equal(batches(500, 1024), 4);
	assert_int_equal(batches(4096, 1024), 4);
	/* above that, --batch-blocks bounds every batch */
	assert_int_equal(access_batch_size(5000, 1024, FAST), 1024);
	assert_int_equal(batches(5000, 1024), 5);
	assert_int_equal(batches(50000, 1024), 49);
	/* a lower --batch-blocks wins (the tests' --batch-blocks 4) */
	assert_int_equal(access_batch_size(6, 4, FAST), 4);
	assert_int_equal(batches(6, 4), 2);
	assert_int_equal(access_batch_size(300, 100, FAST), 75);
}

static void test_bounds(void **state)
{
	static const size_t maxes[] = { 1, 4, 64, 100, 1024, 4096 };

	(void)state;
	for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++)
		for (size_t g = 1; g <= 20000; g++) {
			size_t max = maxes[m], b = access_batch_size(g, max, FAST), nb = batches(g, max);
			size_t floor_nb = (g + max - 1) / max;

			assert_true(b >= 1 && b <= max);
			/* never more batches than the bound or four need */
			assert_true(nb >= floor_nb);
			assert_true(nb <= (floor_nb > PX_PIPE_BATCHES ? floor_nb : PX_PIPE_BATCHES));
			/* batches below the minimum only when --batch-blocks is */
			if (max >= PX_PIPE_MIN_BLOCKS && g >= PX_PIPE_MIN_BLOCKS)
				assert_true(b >= PX_PIPE_MIN_BLOCKS);
			/* pipelined from two minimum batches up */
			if (max >= PX_PIPE_MIN_BLOCKS && g > PX_PIPE_MIN_BLOCKS)
				assert_true(nb >= 2);
			if (g <= PX_PIPE_MIN_BLOCKS && max >= PX_PIPE_MIN_BLOCKS)
				assert_int_equal(nb, 1);
		}
}

/* Over a slow link (or before the first measurement: 0 counts as fast)
 * only --batch-blocks cuts. */
static void test_slow_link(void **state)
{
	(void)state;
	assert_int_equal(access_batch_size(200, 1024, SLOW), 1024);
	assert_int_equal(access_batch_size(500, 1024, PX_PIPE_RTT_US + 1), 1024);
	assert_int_equal(access_batch_size(500, 1024, PX_PIPE_RTT_US), 125);
	assert_int_equal(access_batch_size(500, 1024, 0), 125);
	assert_int_equal(access_batch_size(6, 4, SLOW), 4);
	for (size_t g = 1; g <= 5000; g++) {
		size_t b = access_batch_size(g, 1024, SLOW);

		assert_int_equal(b, 1024);
		assert_int_equal((g + b - 1) / b, (g + 1023) / 1024);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_slow_link),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
