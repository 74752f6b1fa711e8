/*
 * idle.h - a server's idle worker threads, woken most recently idle first
 * (both servers' worker pools).
 *
 * The workers of a pool took their jobs off one queue and slept on one
 * condition variable, and glibc wakes the waiter that has slept longest:
 * the proxy's 64 workers took turns, so each statement of a lone client
 * ran on the worker idle for the 63 statements before it, its stack, its
 * buffers, its LMDB reader and its connection to the store gone cold in
 * the caches (docs/benchmarks.md, "Idle workers").  Here each idle
 * worker sleeps on a condition of its own, kept on a stack: a job wakes
 * the one that went idle last, so a load of one statement at a time keeps
 * running on one warm worker, and a larger load on as few as it needs.
 *
 * Every call is made with the pool's mutex held.
 */
#ifndef LWC_IDLE_H
#define LWC_IDLE_H

#include <pthread.h>

struct idle_slot {                 /* one worker's, on its own stack     */
	pthread_cond_t cv;
	struct idle_slot *next;
	int waiting;               /* on the stack, not yet woken        */
};

struct idle_stack {
	struct idle_slot *top;     /* the worker that went idle last     */
};

int idle_slot_init(struct idle_slot *s);
void idle_slot_fini(struct idle_slot *s);

/* Go on top of the stack and sleep until woken (idle_wake_one/all); the
 * caller then looks at its queue again (a wake-up is a hint, not a job). */
void idle_wait(struct idle_stack *st, struct idle_slot *s, pthread_mutex_t *mu);

/* Wake the worker that went idle last; 0 if none is idle. */
int idle_wake_one(struct idle_stack *st);

/* Wake every idle worker (to stop them). */
void idle_wake_all(struct idle_stack *st);

#endif
