/* stash_apply and stash_pick at a given stash size: per statement of 100
 * rows in and 100 out (the stash held at its size), microseconds. */
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
	uint64_t *rows = malloc((N + 100) * sizeof(uint64_t)), dels[100], adds[100], pr[100], pg[100];
	uint32_t tabs[100], pt[100];
	uint64_t next = 1;
	double t0, ta = 0, tp = 0, tr = 0;

	sodium_init();
	t->id = 7; st->tables = t; st->evict_group = 1; st->stash_max = 1u << 24;
	for (size_t i = 0; i < 100; i++) tabs[i] = 7;
	/* fill to N with random row ids */
	for (size_t i = 0; i < N; i += K) {
		for (size_t j = 0; j < K; j++) { adds[j] = rows[i + j] = randombytes_random() * 4096ull + next++; }
		stash_apply(st, NULL, 0, adds, tabs, K, NULL, 0);
	}
	for (size_t it = 0; it < iters; it++) {
		st->seq += 1000;
		for (size_t j = 0; j < K; j++) {
			size_t x = randombytes_uniform((uint32_t)N);
			dels[j] = rows[x];
			rows[x] = adds[j] = randombytes_random() * 4096ull + next++;
		}
		t0 = now(); stash_pick(st, 5, st->seq, K, pr, pt, pg); tp += now() - t0;
		t0 = now(); stash_release(st, 5); tr += now() - t0;
		t0 = now(); stash_apply(st, dels, K, adds, tabs, K, NULL, 0); ta += now() - t0;
	}
	printf("N %zu (held %zu): apply %.1f us, pick %.1f us, release %.1f us a statement\n", N, st->nstash,
	       ta / iters * 1e6, tp / iters * 1e6, tr / iters * 1e6);
	return 0;
}
