/*
 * test_par.c - the proxy's block pool (proxy/par.c): every block done once,
 * results per block, the first error in block order, the caller's scratch
 * and the pool threads' own, several statements at once, and no pool.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lwc_err.h"
#include "../../proxy/par.h"

#define SCRATCH 64

struct job {
	size_t n;
	atomic_int *hits;
	size_t fail_from;             /* blocks >= this fail (n: none) */
	uint32_t *caller_scratch;
	atomic_int caller_blocks;
};

static int block(void *p, size_t i, uint32_t *scratch)
{
	struct job *j = p;

	/* the scratch is the thread's own: write all of it */
	for (size_t k = 0; k < SCRATCH; k++)
		scratch[k] = (uint32_t)i;
	if (scratch == j->caller_scratch)
		atomic_fetch_add(&j->caller_blocks, 1);
	atomic_fetch_add(&j->hits[i], 1);
	return i >= j->fail_from ? (i % 2 ? LWC_ERR_INTEGRITY : LWC_ERR_VERSION) : LWC_OK;
}

static void run(size_t n, size_t fail_from, int expect_rc)
{
	struct job j = { n, calloc(n ? n : 1, sizeof(atomic_int)), fail_from, NULL, 0 };
	uint32_t scratch[SCRATCH];
	int *rcs = calloc(n ? n : 1, sizeof(int));

	j.caller_scratch = scratch;
	assert_int_equal(par_for(n, block, &j, scratch, rcs), expect_rc);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(atomic_load(&j.hits[i]), 1);
		assert_int_equal(rcs[i], i >= fail_from ? (i % 2 ? LWC_ERR_INTEGRITY
							      : LWC_ERR_VERSION) : LWC_OK);
	}
	/* without a pool, or for fewer blocks than a pool thread is woken
	 * for, the caller does every block */
	if (par_threads() == 0 || n < PAR_SHARED_MIN)
		assert_int_equal(atomic_load(&j.caller_blocks), (int)n);
	/* without rcs the same first error */
	memset(j.hits, 0, (n ? n : 1) * sizeof(atomic_int));
	assert_int_equal(par_for(n, block, &j, scratch, NULL), expect_rc);
	free(j.hits);
	free(rcs);
}

static void cases(void)
{
	run(0, 0, LWC_OK);
	run(1, 1, LWC_OK);
	run(1000, 1000, LWC_OK);
	/* the first failure in block order decides, whichever thread saw it */
	run(1000, 501, LWC_ERR_INTEGRITY);
	run(1000, 500, LWC_ERR_VERSION);
	run(7, 0, LWC_ERR_VERSION);
	/* either side of the size a pool thread is woken for */
	run(PAR_SHARED_MIN - 1, 5, LWC_ERR_INTEGRITY);
	run(PAR_SHARED_MIN, 6, LWC_ERR_VERSION);
	run(PAR_SHARED_MIN + 1, PAR_SHARED_MIN + 1, LWC_OK);
}

static void test_inline(void **state)
{
	(void)state;
	assert_int_equal(par_threads(), 0);
	cases();
}

static void test_pool(void **state)
{
	(void)state;
	assert_int_equal(par_start(3, SCRATCH), LWC_OK);
	assert_int_equal(par_threads(), 3);
	for (int r = 0; r < 20; r++)
		cases();
	par_stop();
	assert_int_equal(par_threads(), 0);
	/* and again after a stop */
	assert_int_equal(par_start(1, SCRATCH), LWC_OK);
	cases();
	par_stop();
}

static int slow_block(void *p, size_t i, uint32_t *scratch)
{
	usleep(2000);
	return block(p, i, scratch);
}

/* A job of fewer than PAR_SHARED_MIN blocks stays on the calling thread even
 * when the pool is idle: 2 ms a block gives a woken pool thread time to take
 * some. */
static void test_small_inline(void **state)
{
	enum { N = PAR_SHARED_MIN - 1 };
	struct job j = { N, calloc(N, sizeof(atomic_int)), N, NULL, 0 };
	uint32_t scratch[SCRATCH];

	(void)state;
	assert_int_equal(par_start(3, SCRATCH), LWC_OK);
	j.caller_scratch = scratch;
	assert_int_equal(par_for(N, slow_block, &j, scratch, NULL), LWC_OK);
	assert_int_equal(atomic_load(&j.caller_blocks), N);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(atomic_load(&j.hits[i]), 1);
	par_stop();
	free(j.hits);
}

static void *statement(void *p)
{
	(void)p;
	for (int r = 0; r < 30; r++)
		cases();
	return NULL;
}

/* Eight statements share two pool threads. */
static void test_concurrent(void **state)
{
	pthread_t th[8];

	(void)state;
	assert_int_equal(par_start(2, SCRATCH), LWC_OK);
	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&th[i], NULL, statement, NULL), 0);
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	par_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_small_inline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
