/*
 * test_pace.c - the pacing of a connection's accesses (proxy/pace.c): the
 * histogram's buckets, D from the 95th percentile of the slowest type, the
 * samples it takes (alone, under the cap) and leaves, the wait itself, and
 * the fixed and off modes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "../../proxy/pace.h"
#include "../../proxy/state.h"

#define CLS 2                     /* px_pace_class(4): point statements */

static void test_buckets(void **state)
{
	(void)state;
	assert_int_equal(px_pace_class(4), CLS);
	assert_int_equal(px_pace_class(7), CLS);
	assert_int_equal(px_pace_class(8), CLS + 1);
	assert_int_equal(px_pace_class(0), 0);
	assert_int_equal(px_pace_class(UINT64_MAX), PX_PACE_CLASSES - 1);
	/* every interval lies inside its bucket, buckets rise with it and
	 * follow each other with no gap, and a bucket is at most a sixteenth
	 * of its bottom wide (D, a bucket's top, exceeds the percentile by at
	 * most that) */
	for (uint64_t us = 0; us < 70000; us += 1 + us / 200) {
		unsigned b = px_pace_bucket(us);

		assert_true(b < PX_PACE_BUCKETS);
		assert_true(us < px_pace_bucket_top(b) || b == PX_PACE_BUCKETS - 1);
		if (b > 0)
			assert_true(us >= px_pace_bucket_top(b - 1));
		assert_true(px_pace_bucket(us + 1) >= b);
		assert_true(px_pace_bucket(px_pace_bucket_top(b)) == b + 1 ||
			    b == PX_PACE_BUCKETS - 1);
		if (b < PX_PACE_BUCKETS - 1)
			assert_true(px_pace_bucket_top(b) - us <= us / 16 + 1);
	}
	assert_int_equal(px_pace_bucket_top(PX_PACE_BUCKETS - 1), 65536);
	assert_int_equal(px_pace_bucket_top(px_pace_bucket(1516)), 1536);
	assert_int_equal(px_pace_bucket_top(px_pace_bucket(1540)), 1600);
	assert_int_equal(px_pace_bucket(1000), px_pace_bucket(1023));
	assert_true(px_pace_bucket(1000) < px_pace_bucket(1024));
	assert_true(px_pace_bucket(1024) < px_pace_bucket(1088));
	assert_true(px_pace_bucket(UINT64_MAX) == PX_PACE_BUCKETS - 1);
}

/* One statement of this kind whose access ended interval_us before the
 * next one starts, on a connection alone: the next start records it (or
 * more: time only adds). */
static void sample(struct px_pacer *p, struct px_pace *c, int kind, uint64_t interval_us)
{
	c->pacer = p;
	px_pace_wait(c);
	px_pace_done(c, kind, 4, px_now_us() - interval_us);
}

static void test_target_is_slowest_p95(void **state)
{
	struct px_pacer p;
	uint64_t now;

	(void)state;
	px_pacer_init(&p, PX_PACE_AUTO, 0);
	now = px_now_us();
	assert_int_equal(px_pacer_target(&p, CLS), PX_PACE_START_US);
	/* kind 1 at 100 us, 4 % at 3,000: its 95th percentile is 100's bucket */
	for (int i = 0; i < 500; i++)
		px_pacer_sample(&p, 1, CLS, i % 25 == 0 ? 3000 : 100, now);
	assert_int_equal(px_pacer_target(&p, CLS), px_pace_bucket_top(px_pace_bucket(100)));
	/* 6 % at 3,000: the percentile is there */
	for (int i = 0; i < 40; i++)
		px_pacer_sample(&p, 2, CLS, 3000, now);
	for (int i = 0; i < 460; i++)
		px_pacer_sample(&p, 2, CLS, 90, now);
	assert_int_equal(px_pacer_target(&p, CLS), px_pace_bucket_top(px_pace_bucket(3000)));
	px_pacer_fini(&p);

	px_pacer_init(&p, PX_PACE_AUTO, 0);
	now = px_now_us();
	for (int i = 0; i < 500; i++)
		px_pacer_sample(&p, 1, CLS, 100, now);
	/* kind 3 at 400 us, too few samples for its own percentile, but
	 * recent: a rare type, its median plus kind 1's spread (none) */
	for (uint32_t i = 0; i + 1 < PX_PACE_MIN_SAMPLES; i++)
		px_pacer_sample(&p, 3, CLS, 400, now);
	assert_int_equal(px_pacer_target(&p, CLS), px_pace_bucket_top(px_pace_bucket(400)));
	/* enough of kind 3: D is its percentile, the slowest type's */
	px_pacer_sample(&p, 3, CLS, 400, now);
	assert_int_equal(px_pacer_target(&p, CLS), px_pace_bucket_top(px_pace_bucket(400)));
	assert_true(px_pacer_target(&p, CLS) > 400);
	/* a half-life later every count halves: kind 3 (200) drops below the
	 * minimum, kind 1 (500) does not; kind 3, rare now and not seen
	 * lately, is left out */
	px_pacer_sample(&p, 1, CLS, 100, now + PX_PACE_HALF_LIFE_US);
	assert_int_equal(p.count[CLS][3], PX_PACE_MIN_SAMPLES / 2);
	assert_int_equal(p.count[CLS][1], 251);
	assert_int_equal(px_pacer_target(&p, CLS), px_pace_bucket_top(px_pace_bucket(100)));
	/* three half-lives idle: three halvings at the next sample */
	px_pacer_sample(&p, 1, CLS, 100, now + 4 * PX_PACE_HALF_LIFE_US);
	assert_int_equal(p.count[CLS][3], PX_PACE_MIN_SAMPLES / 16);
	assert_int_equal(p.count[CLS][1], 251 / 8 + 1);
	/* a class of its own: 500-row SELECTs, and the statements after them,
	 * leave the point statements' D alone */
	for (int i = 0; i < 800; i++)
		px_pacer_sample(&p, 1, px_pace_class(256), 5000, now + 4 * PX_PACE_HALF_LIFE_US);
	assert_int_equal(px_pacer_target(&p, px_pace_class(256)),
			 px_pace_bucket_top(px_pace_bucket(5000)));
	/* (kind 1, 32 now, is rare: twice its median) */
	assert_int_equal(px_pacer_target(&p, CLS), 2 * px_pace_bucket_top(px_pace_bucket(100)));
	assert_int_equal(px_pacer_target(&p, px_pace_class(64)), PX_PACE_START_US);
	assert_int_equal(px_pacer_target(&p, px_pacer_class_common(&p)), px_pace_bucket_top(px_pace_bucket(5000)));
	/* a long pause forgets everything */
	px_pacer_sample(&p, 1, CLS, 100, now + 100 * PX_PACE_HALF_LIFE_US);
	assert_int_equal(p.count[CLS][3], 0);
	assert_int_equal(p.count[CLS][1], 1);
	px_pacer_fini(&p);
}

/* A rare type, too few samples for its own 95th percentile, counts while
 * it was seen lately: its largest sample while it has fewer than three,
 * then its median plus the widest spread of the types with enough (twice
 * its median alone). */
static void test_rare_type_counts(void **state)
{
	struct px_pacer p;
	uint64_t now, b100 = px_pace_bucket_top(px_pace_bucket(100));
	uint64_t b200 = px_pace_bucket_top(px_pace_bucket(200));
	uint64_t b300 = px_pace_bucket_top(px_pace_bucket(300));

	(void)state;
	px_pacer_init(&p, PX_PACE_AUTO, 0);
	now = px_now_us();
	/* kind 1: median 100's bucket, 95th percentile 200's */
	for (int i = 0; i < 500; i++)
		px_pacer_sample(&p, 1, CLS, i % 10 == 0 ? 200 : 100, now);
	assert_int_equal(px_pacer_target(&p, CLS), b200);
	/* two UPDATEs: the larger */
	px_pacer_sample(&p, 3, CLS, 900, now);
	px_pacer_sample(&p, 3, CLS, 300, now);
	assert_int_equal(px_pacer_target(&p, CLS), px_pace_bucket_top(px_pace_bucket(900)));
	/* five: their median and kind 1's spread */
	for (int i = 0; i < 3; i++)
		px_pacer_sample(&p, 3, CLS, 300, now);
	assert_int_equal(px_pacer_target(&p, CLS), b300 + (b200 - b100));
	/* no UPDATE for longer than PX_PACE_RARE_US: left out */
	px_pacer_sample(&p, 1, CLS, 100, now + PX_PACE_RARE_US + 1);
	assert_int_equal(px_pacer_target(&p, CLS), b200);
	px_pacer_fini(&p);

	/* no type with enough: twice the median */
	px_pacer_init(&p, PX_PACE_AUTO, 0);
	now = px_now_us();
	for (int i = 0; i < 5; i++)
		px_pacer_sample(&p, 3, CLS, 300, now);
	assert_int_equal(px_pacer_target(&p, CLS), 2 * b300);
	px_pacer_fini(&p);
}

static void test_user_pauses_and_crowds_not_sampled(void **state)
{
	struct px_pacer p;
	struct px_pace a, b;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	px_pacer_init(&p, PX_PACE_AUTO, 0);
	/* pauses beyond the cap are the user's */
	for (int i = 0; i < 400; i++)
		sample(&p, &a, 2, PX_PACE_CAP_US + 10);
	assert_int_equal(px_pacer_target(&p, CLS), PX_PACE_START_US);
	assert_int_equal(atomic_load(&p.paced), 0);
	/* two connections interleaved: neither is alone, nothing is recorded */
	a.pacer = b.pacer = &p;
	for (int i = 0; i < 400; i++) {
		px_pace_wait(&a);
		px_pace_wait(&b);
		px_pace_done(&a, 2, 4, px_now_us() - 5);
		px_pace_done(&b, 2, 4, px_now_us() - 5);
	}
	assert_int_equal(p.count[CLS][2], 0);
	assert_int_equal(px_pacer_target(&p, CLS), PX_PACE_START_US);
	assert_int_equal(atomic_load(&p.running), 0);
	px_pacer_fini(&p);
}

/* A slow build: every type's median near PX_PACE_CAP_US.  The cap grows to
 * PX_PACE_CAP_MEDIANS medians, so the tail of the slowest type, beyond
 * PX_PACE_CAP_US, is sampled and D covers it; pauses beyond that are
 * still the user's. */
static void test_cap_follows_a_slow_build(void **state)
{
	struct px_pacer p;
	struct px_pace a;
	uint32_t before;

	(void)state;
	memset(&a, 0, sizeof(a));
	px_pacer_init(&p, PX_PACE_AUTO, 0);
	assert_int_equal(px_pacer_cap(&p, CLS), PX_PACE_CAP_US);
	for (int i = 0; i < 300; i++)
		sample(&p, &a, 1, 4000);
	assert_int_equal(px_pacer_cap(&p, CLS),
			 PX_PACE_CAP_MEDIANS * px_pace_bucket_top(px_pace_bucket(4000)));
	/* one statement in five of type 2 has a tail beyond PX_PACE_CAP_US */
	for (int i = 0; i < 250; i++)
		sample(&p, &a, 2, i % 5 ? 4000 : 7000);
	sample(&p, &a, 1, 4000);
	assert_true(p.count[CLS][2] >= 250);
	assert_true(px_pacer_target(&p, CLS) >= 7000);
	/* a pause beyond the grown cap is not sampled (each call records the
	 * interval after the call before) */
	sample(&p, &a, 1, PX_PACE_CAP_MEDIANS * 4096 + 1000);
	before = p.count[CLS][1];
	for (int i = 0; i < 50; i++)
		sample(&p, &a, 1, PX_PACE_CAP_MEDIANS * 4096 + 1000);
	sample(&p, &a, 2, 4000);
	assert_int_equal(p.count[CLS][1], before);
	px_pacer_fini(&p);
}

/* This thread's CPU time, in microseconds. */
static uint64_t thread_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void test_wait_holds_until_d(void **state)
{
	struct px_pacer p;
	struct px_pace c;
	uint64_t t0, t1, cpu0;

	(void)state;
	memset(&c, 0, sizeof(c));
	px_pacer_init(&p, PX_PACE_FIXED, 20000);
	c.pacer = &p;
	px_pace_wait(&c);               /* a connection's first access: no wait */
	assert_int_equal(atomic_load(&p.paced), 0);
	t0 = px_now_us();
	px_pace_done(&c, 1, 4, t0);
	cpu0 = thread_cpu_us();
	px_pace_wait(&c);
	t1 = px_now_us();
	assert_true(t1 - t0 >= 20000);
	/* asleep for all but its last PX_PACE_SPIN_US: a wait that spun the
	 * whole 20 ms would take as much CPU */
	assert_true(thread_cpu_us() - cpu0 < 10000);
	assert_int_equal(atomic_load(&p.paced), 1);
	assert_int_equal(px_pacer_target(&p, CLS), 20000);   /* fixed: no learning */
	/* one that comes after D is not held */
	px_pace_done(&c, 1, 4, px_now_us() - 21000);
	px_pace_wait(&c);
	assert_int_equal(atomic_load(&p.paced), 1);
	assert_int_equal(atomic_load(&p.over), 1);
	px_pace_done(&c, 1, 4, 0);
	px_pacer_fini(&p);
}

static void test_off(void **state)
{
	struct px_pacer p;
	struct px_pace c;

	(void)state;
	memset(&c, 0, sizeof(c));
	px_pacer_init(&p, PX_PACE_OFF, 0);
	c.pacer = &p;
	px_pace_wait(&c);
	px_pace_done(&c, 1, 4, 0);
	px_pace_wait(&c);
	assert_int_equal(atomic_load(&p.paced), 0);
	assert_int_equal(px_pacer_target(&p, CLS), 0);
	px_pace_done(&c, 1, 4, 0);
	/* no pacing at all (NULL) is a no-op */
	px_pace_wait(NULL);
	px_pace_done(NULL, 1, 4, 0);
	px_pacer_fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_target_is_slowest_p95),
		cmocka_unit_test(test_rare_type_counts),
		cmocka_unit_test(test_user_pauses_and_crowds_not_sampled),
		cmocka_unit_test(test_cap_follows_a_slow_build),
		cmocka_unit_test(test_wait_holds_until_d),
		cmocka_unit_test(test_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
