/*
 * par.h - the proxy's block pool: a few threads that open, un-permute,
 * permute and seal the blocks of a batch in parallel with the statement's
 * own worker thread.
 *
 * A statement calls par_for(n, fn, arg); the blocks 0..n-1 are handed out
 * in small runs to the calling thread and to every idle pool thread, and
 * par_for returns when all n are done.  The caller always works too, so a
 * statement makes progress when every pool thread is busy with other
 * statements, and par_for without a pool (par_start never called: the
 * command-line tools) runs the loop inline.
 *
 * fn gets a permutation scratch area of the calling thread: the worker's
 * own, or one per pool thread.
 */
#ifndef LWC_PX_PAR_H
#define LWC_PX_PAR_H

#include <stddef.h>
#include <stdint.h>

/* fn(arg, i, scratch) for one block; returns LWC_OK or an error, which
 * par_for records per block in rcs[i] when rcs is not NULL. */
typedef int (*par_fn)(void *arg, size_t i, uint32_t *scratch);

/* Start nthreads pool threads with scratch_words of scratch each (0 threads:
 * no pool).  Called once, before the workers start. */
int par_start(unsigned nthreads, size_t scratch_words);
/* Stop and join the pool threads (no par_for may be running). */
void par_stop(void);
/* Threads in the pool (0 when none). */
unsigned par_threads(void);
/* Fewer blocks than this run on the calling thread alone: waking a pool
 * thread costs about what it saves for a few blocks (a context switch each
 * way, tens of microseconds on a guest whose idle vCPUs halt), and with
 * many statements in flight the workers keep the cores busy anyway
 * (docs/benchmarks.md, "27 November 2026, late night"). */
#define PAR_SHARED_MIN 16u

/* Run fn for i in [0, n); scratch is the caller's.  Returns the first error
 * in block order (LWC_OK when every call succeeded); rcs (n entries, may be
 * NULL) receives every call's result. */
int par_for(size_t n, par_fn fn, void *arg, uint32_t *scratch, int *rcs);

#endif
