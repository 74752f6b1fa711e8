/*
 * pace.c - see pace.h: a connection's statements start their access at a
 * time the type of the statement before does not decide.
 */
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "pace.h"
#include "state.h"

/*
 * Buckets of 1 us below PX_PACE_SUB, then PX_PACE_SUB a doubling, each a
 * PX_PACE_SUB-th of its doubling's bottom wide (64 us from 1,024 to 2,048):
 * D is a bucket's top, so the bucket's width is what D may exceed the
 * percentile by.  (Four a doubling, until 5 December 2026, put D up to a
 * quarter above it: 1,536 or 1,792 us for a 95th percentile of 1,516.)
 */
unsigned px_pace_bucket(uint64_t us)
{
	unsigned msb, b;

	if (us < PX_PACE_SUB)
		return (unsigned)us;
	msb = 63u - (unsigned)__builtin_clzll(us);
	b = PX_PACE_SUB * (msb - PX_PACE_SUB_BITS + 1u) +
	    (unsigned)((us >> (msb - PX_PACE_SUB_BITS)) & (PX_PACE_SUB - 1u));
	return b < PX_PACE_BUCKETS ? b : PX_PACE_BUCKETS - 1;
}

uint64_t px_pace_bucket_top(unsigned b)
{
	unsigned msb = b / PX_PACE_SUB + PX_PACE_SUB_BITS - 1u, frac = b % PX_PACE_SUB;

	if (b < PX_PACE_SUB)
		return b + 1;   /* exact */
	return (uint64_t)(PX_PACE_SUB + frac + 1u) << (msb - PX_PACE_SUB_BITS);
}

unsigned px_pace_class(uint64_t gamma)
{
	unsigned c = gamma ? 63u - (unsigned)__builtin_clzll(gamma) : 0;

	return c < PX_PACE_CLASSES ? c : PX_PACE_CLASSES - 1;
}

void px_pacer_init(struct px_pacer *p, enum px_pace_mode mode, uint32_t fixed_us)
{
	uint64_t d = mode == PX_PACE_FIXED ? fixed_us : mode == PX_PACE_AUTO ? PX_PACE_START_US : 0;

	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->mu, NULL);
	p->mode = mode;
	p->halved_us = px_now_us();
	for (unsigned c = 0; c < PX_PACE_CLASSES; c++) {
		atomic_store(&p->target_us[c], d);
		atomic_store(&p->cap_us[c], PX_PACE_CAP_US);
	}
}

void px_pacer_fini(struct px_pacer *p)
{
	pthread_mutex_destroy(&p->mu);
}

uint64_t px_pacer_target(struct px_pacer *p, unsigned cls)
{
	return atomic_load(&p->target_us[cls < PX_PACE_CLASSES ? cls : PX_PACE_CLASSES - 1]);
}

uint64_t px_pacer_cap(struct px_pacer *p, unsigned cls)
{
	return atomic_load(&p->cap_us[cls < PX_PACE_CLASSES ? cls : PX_PACE_CLASSES - 1]);
}

unsigned px_pacer_class_common(struct px_pacer *p)
{
	unsigned best = 0;

	pthread_mutex_lock(&p->mu);
	for (unsigned c = 1; c < PX_PACE_CLASSES; c++)
		if (p->class_n[c] > p->class_n[best])
			best = c;
	pthread_mutex_unlock(&p->mu);
	return best;
}

/* The q-th (per mille) quantile's bucket top of a type's intervals. */
static uint64_t quantile_top(const uint32_t *h, uint32_t n, unsigned permille)
{
	uint64_t need = ((uint64_t)n * permille + 999) / 1000, seen = 0;

	for (unsigned b = 0; b < PX_PACE_BUCKETS; b++) {
		seen += h[b];
		if (seen >= need)
			return px_pace_bucket_top(b);
	}
	return px_pace_bucket_top(PX_PACE_BUCKETS - 1);
}

/* mu held: every count halves for each half-life passed (idle ones too) */
static void halve(struct px_pacer *p, uint64_t now)
{
	uint64_t lives;

	if (now <= p->halved_us || now - p->halved_us < PX_PACE_HALF_LIFE_US)
		return;
	lives = (now - p->halved_us) / PX_PACE_HALF_LIFE_US;
	for (unsigned c = 0; c < PX_PACE_CLASSES; c++)
		for (int k = 0; k < PX_PACE_KINDS; k++) {
			p->count[c][k] = 0;
			for (unsigned b = 0; b < PX_PACE_BUCKETS; b++)
				p->count[c][k] += p->hist[c][k][b] =
					lives >= 32 ? 0 : p->hist[c][k][b] >> lives;
		}
	p->halved_us += lives * PX_PACE_HALF_LIFE_US;
}

/* mu held: a sample of the interval after a statement of this kind and
 * class, and the class's D and cap recomputed from its types (pace.h;
 * START and PX_PACE_CAP_US until one counts). */
static void record(struct px_pacer *p, int kind, unsigned cls, uint64_t us, uint64_t now)
{
	uint64_t d = 0, spread = 0, median = 0;
	int any = 0, rare = 0;

	if (kind < 0 || kind >= PX_PACE_KINDS || cls >= PX_PACE_CLASSES)
		return;
	halve(p, now);
	p->hist[cls][kind][px_pace_bucket(us)]++;
	p->count[cls][kind]++;
	p->class_n[cls]++;
	p->last_us[cls][kind] = now;
	/* the types with enough samples, and their widest spread */
	for (int k = 0; k < PX_PACE_KINDS; k++) {
		uint32_t n = p->count[cls][k];
		uint64_t t, m;

		if (n < PX_PACE_MIN_SAMPLES)
			continue;
		t = quantile_top(p->hist[cls][k], n, 950);
		m = quantile_top(p->hist[cls][k], n, 500);
		if (!any || t - m > spread)
			spread = t - m;
		any = 1;
		if (t > d)
			d = t;
		if (m > median)
			median = m;
	}
	/* the rare ones seen lately: their median and that spread */
	for (int k = 0; k < PX_PACE_KINDS; k++) {
		uint32_t n = p->count[cls][k];
		uint64_t t, m;

		/* (a sample of another thread may be later than now) */
		if (n == 0 || n >= PX_PACE_MIN_SAMPLES ||
		    (now > p->last_us[cls][k] && now - p->last_us[cls][k] > PX_PACE_RARE_US))
			continue;
		if (n < 3) {
			t = quantile_top(p->hist[cls][k], n, 1000);
		} else {
			m = quantile_top(p->hist[cls][k], n, 500);
			t = m + (any ? spread : m);
		}
		rare = 1;
		if (t > d)
			d = t;
	}
	atomic_store(&p->target_us[cls], any || rare ? d : PX_PACE_START_US);
	atomic_store(&p->cap_us[cls], median * PX_PACE_CAP_MEDIANS > PX_PACE_CAP_US
					      ? median * PX_PACE_CAP_MEDIANS : PX_PACE_CAP_US);
}

void px_pacer_sample(struct px_pacer *p, int kind, unsigned cls, uint64_t us, uint64_t now)
{
	pthread_mutex_lock(&p->mu);
	record(p, kind, cls, us, now);
	pthread_mutex_unlock(&p->mu);
}

/*
 * Until CLOCK_MONOTONIC reads `until` (px_now_us): asleep to within
 * PX_PACE_SPIN_US of it, then a spin that yields.  A sleep alone wakes late
 * on the benchmark's virtual machine (0.13 ms on the median interval, 3
 * December 2026), all of it added to every held statement; a spin alone
 * burnt a core for the whole wait (56 % of the proxy's samples over point
 * SELECTs sent back to back).  The thread's timer slack is set to 1 ns, so
 * that the sleep wakes as early as the kernel can (on that VM, a 0.5 ms
 * sleep overshot by 0.094 ms at the median with the 50 us default, by
 * 0.047 with 1 ns; by 0.09-0.23 ms at the 99th percentile, within the
 * spin).
 */
static void wait_until(uint64_t until)
{
	static _Thread_local int slack_set;

	if (!slack_set) {
		(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
		slack_set = 1;
	}
	while (px_now_us() + PX_PACE_SPIN_US < until) {
		uint64_t at = until - PX_PACE_SPIN_US;
		struct timespec ts = { .tv_sec = (time_t)(at / 1000000u),
				       .tv_nsec = (long)(at % 1000000u) * 1000 };

		/* (interrupted or early: the loop looks at the clock again) */
		(void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	while (px_now_us() < until)
		sched_yield();
}

void px_pace_wait(struct px_pace *c)
{
	struct px_pacer *p = c ? c->pacer : NULL;
	uint64_t now, n, d, cap, before;
	int alone;

	if (p == NULL || p->mode == PX_PACE_OFF)
		return;
	before = atomic_fetch_add(&p->starts, 1);
	alone = c->ended_alone && before == c->starts_seen && atomic_load(&p->running) == 0;
	atomic_fetch_add(&p->running, 1);
	c->running = 1;
	if (c->end_us == 0)
		return;
	now = px_now_us();
	n = now - c->end_us;
	cap = px_pacer_cap(p, c->cls);
	if (p->mode == PX_PACE_AUTO && alone && n < cap)
		px_pacer_sample(p, c->kind, c->cls, n, now);
	d = px_pacer_target(p, c->cls);
	if (n >= d) {
		if (n - d < cap)
			atomic_fetch_add(&p->over, 1);
		return;
	}
	wait_until(c->end_us + d);
	atomic_fetch_add(&p->paced, 1);
	atomic_fetch_add(&p->waited_us, d - n);
}

void px_pace_done(struct px_pace *c, int kind, uint64_t gamma, uint64_t end_us)
{
	if (c == NULL)
		return;
	c->ended_alone = 1;
	if (c->running) {
		c->ended_alone = atomic_fetch_sub(&c->pacer->running, 1) == 1;
		c->running = 0;
	}
	c->starts_seen = atomic_load(&c->pacer->starts);
	c->end_us = end_us ? end_us : px_now_us();
	c->kind = kind;
	c->cls = px_pace_class(gamma);
}
