/*
 * test_stash.c - the proxy's stash in memory (proxy/stash.c): rows added
 * and removed in thousands of statements agree with a plain model (every
 * row found where the map says, nothing found that left, the count right,
 * an add replacing a row held and a row deleted and added in one go); the
 * rows one statement adds are cut into groups in row id order with one
 * delay each; stash_pick hands out each row once, only rows that may go,
 * uniformly among them, and stash_release gives back its statement's; an INSERT's rows are fresh (in no
 * block yet) until they leave, also when a later statement refreshes them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "../../proxy/stash.h"

#define NROWS 5000u

static struct px_state *new_state(uint32_t group)
{
	struct px_state *st = calloc(1, sizeof(*st));
	struct px_table *t = calloc(1, sizeof(*t));

	assert_non_null(st);
	assert_non_null(t);
	t->id = 7;
	st->tables = t;
	st->evict_group = group;
	st->stash_max = 65536;          /* under half full: delays count */
	return st;
}

static void free_state(struct px_state *st)
{
	free(st->tables);
	free(st->stash);
	u64map_free(&st->stash_ix);
	free(st);
}

/* Every row of the model is found with its fields, no other row is. */
static void check(struct px_state *st, const uint8_t *in, const uint64_t *tag)
{
	size_t n = 0;

	for (uint64_t r = 1; r <= NROWS; r++) {
		struct px_stash_ent *e = stash_find(st, r);

		if (!in[r]) {
			assert_null(e);
			continue;
		}
		n++;
		assert_non_null(e);
		assert_int_equal(e->rowid, r);
		assert_int_equal(e->origin, tag[r]);
		assert_int_equal(e->table, 7);
	}
	assert_int_equal(st->nstash, n);
	assert_int_equal(st->stash_ix.n, n);
}

static void test_model(void **state)
{
	struct px_state *st = new_state(1);
	uint8_t *in = calloc(NROWS + 1, 1);
	uint64_t *tag = calloc(NROWS + 1, sizeof(*tag));
	uint64_t dels[64], adds[64];
	uint32_t tabs[64];

	(void)state;
	for (int stmt = 0; stmt < 4000; stmt++) {
		size_t nd = randombytes_uniform(20), na = randombytes_uniform(40);

		st->seq++;
		for (size_t i = 0; i < nd; i++)
			dels[i] = 1 + randombytes_uniform(NROWS);
		for (size_t i = 0; i < na; i++) {
			adds[i] = 1 + randombytes_uniform(NROWS);
			tabs[i] = 7;
		}
		if (stmt % 7 == 0 && nd > 0 && na > 0)
			adds[0] = dels[0];                /* out and back in at once */
		if (stmt % 11 == 0 && na > 1)
			adds[1] = adds[0];                /* a row given twice */
		assert_int_equal(stash_apply(st, dels, nd, adds, tabs, na, 0, NULL, 0), LWC_OK);
		for (size_t i = 0; i < nd; i++)
			in[dels[i]] = 0;
		for (size_t i = 0; i < na; i++) {
			in[adds[i]] = 1;
			tag[adds[i]] = st->seq;
		}
		if (stmt % 97 == 0)
			check(st, in, tag);
	}
	check(st, in, tag);
	/* everything out: empty, and the map with it */
	{
		uint64_t *all = malloc(NROWS * sizeof(*all));
		size_t n = 0;

		for (uint64_t r = 1; r <= NROWS; r++)
			if (in[r])
				all[n++] = r;
		assert_int_equal(stash_apply(st, all, n, NULL, NULL, 0, 0, NULL, 0), LWC_OK);
		memset(in, 0, NROWS + 1);
		check(st, in, tag);
		free(all);
	}
	free(in);
	free(tag);
	free_state(st);
}

static void test_groups_and_pick(void **state)
{
	struct px_state *st = new_state(4);
	uint64_t adds[10] = { 90, 10, 50, 30, 70, 20, 60, 40, 80, 100 };
	uint32_t tabs[10];
	uint64_t rows[10], grps[10];
	uint32_t ptab[10];
	struct stash_held h2 = { 0 }, h3 = { 0 };
	size_t n;

	(void)state;
	for (int i = 0; i < 10; i++)
		tabs[i] = 7;
	st->seq = 5;
	assert_int_equal(stash_apply(st, NULL, 0, adds, tabs, 10, 0, NULL, 0), LWC_OK);
	/* groups of 4 in row id order: 10-40, 50-80, 90-100; one delay each */
	for (uint64_t r = 10; r <= 100; r += 10) {
		struct px_stash_ent *e = stash_find(st, r), *first = stash_find(st, r - (r - 10) % 40);

		assert_non_null(e);
		assert_int_equal(e->grp, first->grp);
		assert_int_equal(e->eligible, first->eligible);
		assert_true(e->eligible > 5 && e->eligible <= 5 + PX_EVICT_DELAY);
	}
	assert_int_not_equal(stash_find(st, 10)->grp, stash_find(st, 50)->grp);
	assert_int_not_equal(stash_find(st, 50)->grp, stash_find(st, 90)->grp);
	/* nothing is eligible at statement 5; everything long after, each row
	 * handed out once, a group's rows together */
	assert_int_equal(stash_pick(st, &h2, 1, 5, 10, rows, ptab, grps), 0);
	n = stash_pick(st, &h2, 2, 5 + PX_EVICT_DELAY + 1, 10, rows, ptab, grps);
	assert_int_equal(n, 10);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(stash_find(st, rows[i])->owner, 2);
		assert_int_equal(grps[i], stash_find(st, rows[i])->grp);
		for (size_t j = 0; j < i; j++)
			assert_int_not_equal(rows[i], rows[j]);
		if (i > 0 && grps[i] != grps[i - 1])
			for (size_t j = 0; j + 1 < i; j++)
				assert_int_not_equal(grps[j], grps[i]);
	}
	assert_int_equal(stash_pick(st, &h3, 3, 5 + PX_EVICT_DELAY + 1, 10, rows, ptab, grps), 0);
	stash_release(st, &h2, 2);
	assert_int_equal(h2.n, 0);
	assert_int_equal(stash_pick(st, &h3, 3, 5 + PX_EVICT_DELAY + 1, 3, rows, ptab, grps), 3);
	stash_held_free(&h2);
	stash_held_free(&h3);
	free_state(st);
}

/*
 * Groups of one row: stash_pick chooses uniformly among the rows that may
 * go, never one that may not (not yet eligible, held by another statement,
 * of a table held exclusively), also when those that may are too few for
 * its draws to find (the pass over the stash then finds them); and
 * stash_release lets go of exactly the rows its statement holds, also
 * those it took while reading (stash_hold), and none of another's.
 */
#define UROWS 400u
#define UPICK 20u
#define UROUNDS 4000u

static void test_pick_uniform(void **state)
{
	struct px_state *st = new_state(1);
	struct px_table *t2 = calloc(1, sizeof(*t2));
	struct stash_held mine = { 0 }, other = { 0 };
	uint64_t adds[UROWS], rows[UROWS], grps[UROWS];
	uint32_t tabs[UROWS], ptab[UROWS];
	unsigned *count = calloc(UROWS + 1, sizeof(unsigned));
	double chi2 = 0, expect;
	size_t nmay = 0;

	(void)state;
	assert_non_null(t2);
	assert_non_null(count);
	/* table 8 held exclusively: its rows may not go */
	t2->id = 8;
	t2->excl_owner = 99;
	st->tables->next = t2;
	for (uint32_t i = 0; i < UROWS; i++) {
		adds[i] = i + 1;
		tabs[i] = i % 10 == 9 ? 8 : 7;
	}
	/* rows 1-300 eligible from statement 65 on; 301-400 young */
	st->seq = 0;
	assert_int_equal(stash_apply(st, NULL, 0, adds, tabs, 300, 0, NULL, 0), LWC_OK);
	st->seq = 1000;
	assert_int_equal(stash_apply(st, NULL, 0, adds + 300, tabs + 300, 100, 0, NULL, 0),
			 LWC_OK);
	/* rows 1-50 held by another statement (one of them twice) */
	assert_int_equal(stash_hold_reserve(&other, 51), LWC_OK);
	for (uint64_t r = 1; r <= 50; r++)
		stash_hold(&other, stash_find(st, r), 77);
	stash_hold(&other, stash_find(st, 3), 77);
	for (uint64_t r = 1; r <= UROWS; r++)
		nmay += r > 50 && r <= 300 && r % 10 != 0;
	for (unsigned round = 0; round < UROUNDS; round++) {
		size_t n = stash_pick(st, &mine, 5, 500, UPICK, rows, ptab, grps);

		assert_int_equal(n, UPICK);
		for (size_t i = 0; i < n; i++) {
			assert_true(rows[i] > 50 && rows[i] <= 300 && rows[i] % 10 != 0);
			assert_int_equal(stash_find(st, rows[i])->owner, 5);
			for (size_t j = 0; j < i; j++)
				assert_int_not_equal(rows[i], rows[j]);
			count[rows[i]]++;
		}
		stash_release(st, &mine, 5);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(stash_find(st, rows[i])->owner, 0);
	}
	/* uniform: chi-square over the nmay rows (nmay - 1 = 224 degrees of
	 * freedom: mean 224, sd 21; 350 is six sd above) */
	expect = (double)UROUNDS * UPICK / (double)nmay;
	for (uint64_t r = 1; r <= UROWS; r++) {
		if (r > 50 && r <= 300 && r % 10 != 0)
			chi2 += (count[r] - expect) * (count[r] - expect) / expect;
		else
			assert_int_equal(count[r], 0);
	}
	assert_true(chi2 < 350.0);
	/* the other statement's rows are still its own, until it lets go */
	for (uint64_t r = 1; r <= 50; r++)
		assert_int_equal(stash_find(st, r)->owner, 77);
	stash_release(st, &other, 77);
	for (uint64_t r = 1; r <= UROWS; r++)
		assert_int_equal(stash_find(st, r)->owner, 0);
	/* few that may go among many: the draws rarely meet them, the pass
	 * does; exactly those come out */
	for (uint64_t r = 1; r <= 300; r++)
		if (r != 121 && r != 253 && r != 257)
			stash_find(st, r)->owner = 78;
	assert_int_equal(stash_pick(st, &mine, 5, 500, UPICK, rows, ptab, grps), 3);
	for (size_t i = 0; i < 3; i++)
		assert_true(rows[i] == 121 || rows[i] == 253 || rows[i] == 257);
	assert_int_equal(stash_pick(st, &mine, 6, 500, UPICK, rows, ptab, grps), 0);
	stash_release(st, &mine, 5);
	assert_int_equal(stash_find(st, 121)->owner, 0);
	assert_int_equal(stash_find(st, 253)->owner, 0);
	assert_int_equal(stash_find(st, 257)->owner, 0);
	assert_int_equal(stash_find(st, 122)->owner, 78);
	stash_held_free(&mine);
	stash_held_free(&other);
	free(count);
	free(t2);
	st->tables->next = NULL;
	free_state(st);
}

/*
 * Groups of 4: a pick (a pass over the stash, stash.c) brings whole groups,
 * group by group, never a young row; the groups are chosen uniformly among
 * those that may go (all of the same size here); with one group that may go
 * among many held, exactly its rows come out.
 */
#define GGROUPS 100u
#define GROUNDS 3000u

static void test_pick_groups(void **state)
{
	struct px_state *st = new_state(4);
	struct stash_held mine = { 0 };
	uint64_t adds[4 * GGROUPS], rows[16], grps[16];
	uint32_t tabs[4 * GGROUPS], ptab[16];
	unsigned *count = calloc(4 * GGROUPS + 1, sizeof(unsigned));
	double chi2 = 0, expect;

	(void)state;
	assert_non_null(count);
	for (uint32_t i = 0; i < 4 * GGROUPS; i++) {
		adds[i] = i + 1;
		tabs[i] = 7;
	}
	/* rows 1-300 (groups 1-75) eligible by statement 65, 301-400 young */
	st->seq = 0;
	assert_int_equal(stash_apply(st, NULL, 0, adds, tabs, 300, 0, NULL, 0), LWC_OK);
	st->seq = 1000;
	assert_int_equal(stash_apply(st, NULL, 0, adds + 300, tabs + 300, 100, 0, NULL, 0),
			 LWC_OK);
	for (unsigned round = 0; round < GROUNDS; round++) {
		size_t n = stash_pick(st, &mine, 5, 500, 8, rows, ptab, grps);

		assert_int_equal(n, 8);
		for (size_t i = 0; i < n; i += 4) {
			/* a whole group, its rows together: ids 4g+1 .. 4g+4 */
			uint64_t first = (rows[i] - 1) / 4 * 4 + 1;

			for (size_t k = 0; k < 4; k++) {
				assert_true(rows[i + k] >= first && rows[i + k] < first + 4);
				assert_true(rows[i + k] <= 300);
				assert_int_equal(grps[i + k], grps[i]);
				for (size_t j = 0; j < i + k; j++)
					assert_int_not_equal(rows[j], rows[i + k]);
			}
			count[first]++;
		}
		stash_release(st, &mine, 5);
	}
	expect = (double)GROUNDS * 2 / 75.0;
	for (uint64_t g = 1; g <= 300; g += 4)
		chi2 += (count[g] - expect) * (count[g] - expect) / expect;
	/* 74 degrees of freedom: mean 74, sd 12.2; 150 is six sd above */
	assert_true(chi2 < 150.0);
	/* one group that may go among many held: exactly its rows */
	for (uint64_t r = 1; r <= 300; r++)
		if (r < 41 || r > 44)
			stash_find(st, r)->owner = 78;
	assert_int_equal(stash_pick(st, &mine, 5, 500, 8, rows, ptab, grps), 4);
	for (size_t i = 0; i < 4; i++)
		assert_true(rows[i] >= 41 && rows[i] <= 44);
	stash_release(st, &mine, 5);
	stash_held_free(&mine);
	free(count);
	free_state(st);
}

/* The last nfresh rows of an add are an INSERT's: fresh; rows moved out of
 * a block are not; a refresh (an UPDATE of a row in the stash) keeps a row
 * fresh, and a row that left and came back from a block is not. */
static void test_fresh(void **state)
{
	struct px_state *st = new_state(1);
	uint64_t adds[6] = { 5, 3, 1, 4, 2, 6 }, again[2] = { 2, 5 }, gone = 2;
	uint32_t tabs[6] = { 7, 7, 7, 7, 7, 7 };

	(void)state;
	/* rows 5, 3, 1 moved out of blocks; 4, 2, 6 inserted */
	assert_int_equal(stash_apply(st, NULL, 0, adds, tabs, 6, 3, NULL, 0), LWC_OK);
	for (uint64_t r = 1; r <= 6; r++)
		assert_int_equal(stash_find(st, r)->fresh, r == 2 || r == 4 || r == 6);
	/* refreshed, none of them fresh in this add: 2 stays fresh, 5 not */
	assert_int_equal(stash_apply(st, NULL, 0, again, tabs, 2, 0, NULL, 0), LWC_OK);
	assert_int_equal(stash_find(st, 2)->fresh, 1);
	assert_int_equal(stash_find(st, 5)->fresh, 0);
	/* 2 written back, then read again: it comes back from a block */
	assert_int_equal(stash_apply(st, &gone, 1, NULL, NULL, 0, 0, NULL, 0), LWC_OK);
	assert_null(stash_find(st, 2));
	assert_int_equal(stash_apply(st, NULL, 0, &gone, tabs, 1, 0, NULL, 0), LWC_OK);
	assert_int_equal(stash_find(st, 2)->fresh, 0);
	free_state(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_groups_and_pick),
		cmocka_unit_test(test_pick_uniform),
		cmocka_unit_test(test_pick_groups),
		cmocka_unit_test(test_fresh),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
