/* stash_pick and stash_release at a given stash size, the proxy's own code
 * (linked against a build's libproxy.a): per statement, 100 rows picked
 * among the eligible (a tenth of the stash young: not yet eligible), then
 * released; microseconds.  -DHELD for the API with a statement's held rows
 * (29 November 2026, later), without it the one before. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sodium.h>
#include "stash.h"

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

int main(int argc, char **argv)
{
	size_t N = argc > 1 ? strtoul(argv[1], 0, 10) : 60000, K = 100, iters = 300;
	struct px_state *st = calloc(1, sizeof(*st));
	struct px_table *t = calloc(1, sizeof(*t));
	uint64_t adds[100], pr[100], pg[100], next = 1;
	uint32_t tabs[100], pt[100];
	double t0, tp = 0, tr = 0;
	size_t got = 0;
#ifdef HELD
	struct stash_held h = { 0 };
#endif

	if (sodium_init() < 0)
		return 1;
	t->id = 7; st->tables = t; st->evict_group = 1; st->stash_max = 1u << 24;
	for (size_t i = 0; i < 100; i++) tabs[i] = 7;
	for (size_t i = 0; i < N; i += K) {
		for (size_t j = 0; j < K; j++)
			adds[j] = next++;
		st->seq = i < N / 10 ? 1u << 30 : 1;   /* the first tenth young */
		if (stash_apply(st, NULL, 0, adds, tabs, K, 0, NULL, 0) != 0)
			return 1;
	}
	for (size_t it = 0; it < iters; it++) {
		uint64_t owner = 10 + it;

#ifdef HELD
		t0 = now(); got += stash_pick(st, &h, owner, 1000, K, pr, pt, pg); tp += now() - t0;
		t0 = now(); stash_release(st, &h, owner); tr += now() - t0;
#else
		t0 = now(); got += stash_pick(st, owner, 1000, K, pr, pt, pg); tp += now() - t0;
		t0 = now(); stash_release(st, owner); tr += now() - t0;
#endif
	}
	printf("N %zu: pick %.1f us, release %.1f us a statement (%zu rows a pick)\n", st->nstash,
	       tp / iters * 1e6, tr / iters * 1e6, got / iters);
	return 0;
}
