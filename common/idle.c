/*
 * idle.c - idle worker threads woken most recently idle first (idle.h).
 */
#include "idle.h"

int idle_slot_init(struct idle_slot *s)
{
	s->next = NULL;
	s->waiting = 0;
	return pthread_cond_init(&s->cv, NULL);
}

void idle_slot_fini(struct idle_slot *s)
{
	pthread_cond_destroy(&s->cv);
}

void idle_wait(struct idle_stack *st, struct idle_slot *s, pthread_mutex_t *mu)
{
	s->next = st->top;
	st->top = s;
	s->waiting = 1;
	/* off the stack only through a wake-up, which clears waiting */
	while (s->waiting)
		pthread_cond_wait(&s->cv, mu);
}

int idle_wake_one(struct idle_stack *st)
{
	struct idle_slot *s = st->top;

	if (s == NULL)
		return 0;
	st->top = s->next;
	s->next = NULL;
	s->waiting = 0;
	pthread_cond_signal(&s->cv);
	return 1;
}

void idle_wake_all(struct idle_stack *st)
{
	while (idle_wake_one(st))
		;
}
