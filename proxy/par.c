/*
 * par.c - the block pool (par.h).
 *
 * Jobs wait in a FIFO list under one mutex; a job's blocks are claimed one
 * at a time with an atomic counter, so the mutex is taken only to find a
 * job, to join it and to leave it.  A block costs 5-30 us (open or seal of
 * 10 KB), so one atomic add per block is noise.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "lwc_err.h"
#include "log.h"
#include "par.h"

struct par_job {
	par_fn fn;
	void *arg;
	size_t n;
	atomic_size_t next;           /* next block to claim               */
	atomic_size_t err_i;          /* lowest failed block, n when none   */
	int *rcs;                     /* result per block                  */
	int helpers;                  /* pool threads inside (under mu)    */
	int queued;                   /* in the list (under mu)            */
	struct par_job *link;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static struct par_job *head, *tail;
static pthread_t *threads;
static uint32_t **scratches;
static unsigned nthreads;
static int stopping;

static void run_job(struct par_job *j, uint32_t *scratch)
{
	size_t i;

	while ((i = atomic_fetch_add(&j->next, 1)) < j->n) {
		int rc = j->fn(j->arg, i, scratch);

		j->rcs[i] = rc;
		if (rc != LWC_OK) {
			size_t cur = atomic_load(&j->err_i);

			while (i < cur && !atomic_compare_exchange_weak(&j->err_i, &cur, i))
				;
		}
	}
}

/* Unlink j (mu held). */
static void dequeue(struct par_job *j)
{
	struct par_job **pp = &head, *prev = NULL;

	while (*pp && *pp != j) {
		prev = *pp;
		pp = &(*pp)->link;
	}
	if (*pp == NULL)
		return;
	*pp = j->link;
	if (tail == j)
		tail = prev;
	j->queued = 0;
}

static void *pool_main(void *p)
{
	uint32_t *scratch = p;

	pthread_mutex_lock(&mu);
	while (!stopping) {
		struct par_job *j = head;

		/* jobs whose blocks are all claimed leave the list */
		while (j && atomic_load(&j->next) >= j->n) {
			dequeue(j);
			j = head;
		}
		if (j == NULL) {
			pthread_cond_wait(&work_cv, &mu);
			continue;
		}
		j->helpers++;
		pthread_mutex_unlock(&mu);
		run_job(j, scratch);
		pthread_mutex_lock(&mu);
		if (--j->helpers == 0)
			pthread_cond_broadcast(&done_cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

int par_start(unsigned n, size_t scratch_words)
{
	if (n == 0)
		return LWC_OK;
	threads = calloc(n, sizeof(*threads));
	scratches = calloc(n, sizeof(*scratches));
	if (threads == NULL || scratches == NULL)
		goto nomem;
	for (unsigned i = 0; i < n; i++) {
		if ((scratches[i] = malloc((scratch_words ? scratch_words : 1) *
					   sizeof(uint32_t))) == NULL)
			goto nomem;
	}
	stopping = 0;
	for (unsigned i = 0; i < n; i++) {
		if (pthread_create(&threads[i], NULL, pool_main, scratches[i]) != 0) {
			log_error("block pool: cannot start thread %u of %u", i + 1, n);
			break;
		}
		nthreads++;
	}
	return LWC_OK;
nomem:
	if (scratches)
		for (unsigned i = 0; i < n; i++)
			free(scratches[i]);
	free(scratches);
	free(threads);
	scratches = NULL;
	threads = NULL;
	return LWC_ERR_NOMEM;
}

void par_stop(void)
{
	unsigned n = nthreads;

	pthread_mutex_lock(&mu);
	stopping = 1;
	pthread_cond_broadcast(&work_cv);
	pthread_mutex_unlock(&mu);
	for (unsigned i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	if (scratches)
		for (unsigned i = 0; i < n; i++)
			free(scratches[i]);
	free(scratches);
	free(threads);
	scratches = NULL;
	threads = NULL;
	nthreads = 0;
}

unsigned par_threads(void)
{
	return nthreads;
}

int par_for(size_t n, par_fn fn, void *arg, uint32_t *scratch, int *rcs)
{
	struct par_job j;
	int *own = NULL, rc, shared = nthreads > 0 && n >= PAR_SHARED_MIN;
	size_t e;

	if (n == 0)
		return LWC_OK;
	if (rcs == NULL && (rcs = own = malloc(n * sizeof(int))) == NULL) {
		/* no room to record results: run inline */
		for (size_t i = 0; i < n; i++)
			if ((rc = fn(arg, i, scratch)) != LWC_OK)
				return rc;
		return LWC_OK;
	}
	j.fn = fn;
	j.arg = arg;
	j.n = n;
	atomic_init(&j.next, 0);
	atomic_init(&j.err_i, n);
	j.rcs = rcs;
	j.helpers = 0;
	j.queued = 0;
	j.link = NULL;
	if (shared) {
		pthread_mutex_lock(&mu);
		if (tail)
			tail->link = &j;
		else
			head = &j;
		tail = &j;
		j.queued = 1;
		if (n - 1 >= nthreads)
			pthread_cond_broadcast(&work_cv);
		else
			for (size_t k = 0; k < n - 1; k++)
				pthread_cond_signal(&work_cv);
		pthread_mutex_unlock(&mu);
	}
	run_job(&j, scratch);
	if (shared) {
		/* j.queued is read under mu only: a pool thread that takes the
		 * last block unlinks the job (dequeue) */
		pthread_mutex_lock(&mu);
		if (j.queued)
			dequeue(&j);
		while (j.helpers > 0)
			pthread_cond_wait(&done_cv, &mu);
		pthread_mutex_unlock(&mu);
	}
	e = atomic_load(&j.err_i);
	rc = e < n ? rcs[e] : LWC_OK;
	free(own);
	return rc;
}
