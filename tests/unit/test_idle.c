/*
 * test_idle.c - idle workers woken most recently idle first (common/idle.c):
 * the worker that went idle last takes the next job, every time; a wake-up
 * with none idle says so; a burst wakes the stack from its top down; and
 * idle_wake_all lets every worker stop.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "../../common/idle.h"

#define NW 4

struct pool {
	pthread_mutex_t mu;
	struct idle_stack idle;
	int jobs;                      /* queued                              */
	int stop;
	int done[64];                  /* the worker that ran job i           */
	int ndone;
	struct idle_slot *slot[NW];    /* each worker's, once it is idle      */
};

struct arg {
	struct pool *p;
	int id;
};

static void *worker(void *v)
{
	struct arg *a = v;
	struct pool *p = a->p;
	struct idle_slot me;

	if (idle_slot_init(&me) != 0)
		return NULL;           /* never idle: settle() fails */
	pthread_mutex_lock(&p->mu);
	p->slot[a->id] = &me;
	for (;;) {
		while (p->jobs == 0 && !p->stop)
			idle_wait(&p->idle, &me, &p->mu);
		if (p->jobs == 0)
			break;
		p->jobs--;
		p->done[p->ndone++] = a->id;
	}
	pthread_mutex_unlock(&p->mu);
	idle_slot_fini(&me);
	return NULL;
}

static int depth(struct pool *p)
{
	int n = 0;

	for (struct idle_slot *s = p->idle.top; s != NULL; s = s->next)
		n++;
	return n;
}

/* Wait (polling) until n workers are idle and no job is left. */
static void settle(struct pool *p, int n)
{
	for (int i = 0; i < 20000; i++) {
		int ok;

		pthread_mutex_lock(&p->mu);
		ok = depth(p) == n && p->jobs == 0;
		pthread_mutex_unlock(&p->mu);
		if (ok)
			return;
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	}
	fail_msg("the workers did not settle");
}

static void test_lifo(void **state)
{
	struct pool p;
	struct arg args[NW];
	pthread_t th[NW];

	(void)state;
	memset(&p, 0, sizeof(p));
	pthread_mutex_init(&p.mu, NULL);
	pthread_mutex_lock(&p.mu);
	assert_int_equal(idle_wake_one(&p.idle), 0);    /* none idle yet */
	pthread_mutex_unlock(&p.mu);
	/* workers 0, 1, 2, 3 go idle in that order: 3 on top */
	for (int i = 0; i < NW; i++) {
		args[i] = (struct arg){ &p, i };
		assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
		settle(&p, i + 1);
	}
	pthread_mutex_lock(&p.mu);
	assert_ptr_equal(p.idle.top, p.slot[NW - 1]);
	pthread_mutex_unlock(&p.mu);

	/* one job at a time: the same worker, the last to go idle, each time
	 * (a shared condition would have woken 0, then 1, ...) */
	for (int k = 0; k < 10; k++) {
		pthread_mutex_lock(&p.mu);
		p.jobs++;
		assert_int_equal(idle_wake_one(&p.idle), 1);
		pthread_mutex_unlock(&p.mu);
		settle(&p, NW);
		pthread_mutex_lock(&p.mu);
		assert_int_equal(p.ndone, k + 1);
		assert_int_equal(p.done[k], NW - 1);
		assert_ptr_equal(p.idle.top, p.slot[NW - 1]);
		pthread_mutex_unlock(&p.mu);
	}

	/* a burst of two jobs wakes the top two; the two below stay asleep */
	pthread_mutex_lock(&p.mu);
	p.jobs += 2;
	assert_int_equal(idle_wake_one(&p.idle), 1);
	assert_int_equal(idle_wake_one(&p.idle), 1);
	assert_ptr_equal(p.idle.top, p.slot[NW - 3]);
	assert_ptr_equal(p.idle.top->next, p.slot[NW - 4]);
	assert_null(p.idle.top->next->next);
	assert_int_equal(p.slot[NW - 1]->waiting, 0);
	assert_int_equal(p.slot[NW - 2]->waiting, 0);
	assert_int_equal(p.slot[NW - 3]->waiting, 1);
	pthread_mutex_unlock(&p.mu);
	settle(&p, NW);
	pthread_mutex_lock(&p.mu);
	assert_int_equal(p.ndone, 12);
	for (int k = 10; k < 12; k++)
		assert_true(p.done[k] == NW - 1 || p.done[k] == NW - 2);
	pthread_mutex_unlock(&p.mu);

	/* stop: every idle worker woken, every thread returns */
	pthread_mutex_lock(&p.mu);
	p.stop = 1;
	idle_wake_all(&p.idle);
	assert_null(p.idle.top);
	pthread_mutex_unlock(&p.mu);
	for (int i = 0; i < NW; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	pthread_mutex_destroy(&p.mu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
