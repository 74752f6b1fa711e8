/*
 * test_access.c - how the proxy cuts an access into READ/WRITE batches
 * (proxy/access.c, access_batch_size): at most --batch-blocks each, at
 * least PX_PIPE_BATCHES of them from 2 x PX_PIPE_MIN_BLOCKS blocks up, none
 * smaller than PX_PIPE_MIN_BLOCKS unless --batch-blocks is, and the whole
 * access in one batch below that.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../proxy/engine_int.h"

static size_t batches(size_t gamma, size_t max)
{
	size_t b = access_batch_size(gamma, max);

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
	assert_int_equal(access_batch_size(200, 1024), 64);
	assert_int_equal(batches(200, 1024), 4);
	assert_int_equal(access_batch_size(500, 1024), 125);
	assert_int_equal(batches(500, 1024), 4);
	assert_int_equal(batches(4096, 1024), 4);
	/* above that, --batch-blocks bounds every batch */
	assert_int_equal(access_batch_size(5000, 1024), 1024);
	assert_int_equal(batches(5000, 1024), 5);
	assert_int_equal(batches(50000, 1024), 49);
	/* a lower --batch-blocks wins (the tests' --batch-blocks 4) */
	assert_int_equal(access_batch_size(6, 4), 4);
	assert_int_equal(batches(6, 4), 2);
	assert_int_equal(access_batch_size(300, 100), 75);
}

static void test_bounds(void **state)
{
	static const size_t maxes[] = { 1, 4, 64, 100, 1024, 4096 };

	(void)state;
	for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++)
		for (size_t g = 1; g <= 20000; g++) {
			size_t max = maxes[m], b = access_batch_size(g, max), nb = batches(g, max);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
