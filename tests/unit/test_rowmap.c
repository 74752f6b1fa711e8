/*
 * test_rowmap.c - proxy/rowmap.c: the journal's maps from row id to a change.
 *
 * Random statements stage changes (positions, stash records, deletes) in a
 * staged map and merge them into a committed one, or are dropped (cleared);
 * the committed map always equals a plain model (every row found with its
 * latest change, no other row found, the count right), whatever the sizes,
 * also across statements far larger than the table a map keeps when it is
 * emptied.  A map emptied after a large statement keeps no large table, so
 * the small statements after it do not pass over one (the cost found on 29
 * November 2026: docs/benchmarks.md).  Run under ASan, the records changing
 * hands are neither leaked nor freed twice.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "../../proxy/rowmap.h"

#define ROWS 20000u

struct model {
	uint8_t has[ROWS + 1];
	uint8_t del[ROWS + 1];
	uint64_t loc[ROWS + 1];
	uint32_t rec[ROWS + 1];          /* 0: no record, else its tag */
};

static uint8_t *new_rec(uint32_t tag)
{
	uint8_t *r = malloc(sizeof(tag));

	assert_non_null(r);
	memcpy(r, &tag, sizeof(tag));
	return r;
}

static void check(const struct rowmap *m, const struct model *md)
{
	size_t n = 0;

	for (uint64_t row = 1; row <= ROWS; row++) {
		const struct rowent *e = rowmap_find(m, row);

		if (!md->has[row]) {
			assert_null(e);
			continue;
		}
		n++;
		assert_non_null(e);
		assert_int_equal(e->row, row);
		assert_int_equal(e->loc, md->loc[row]);
		assert_int_equal(e->del, md->del[row]);
		if (md->rec[row] == 0) {
			assert_null(e->rec);
		} else {
			uint32_t tag;

			assert_non_null(e->rec);
			memcpy(&tag, e->rec, sizeof(tag));
			assert_int_equal(tag, md->rec[row]);
		}
	}
	assert_int_equal(m->n, n);
}

static void test_model(void **state)
{
	struct rowmap staged = { 0 }, committed = { 0 };
	struct model *md = calloc(1, sizeof(*md)), *st = calloc(1, sizeof(*st));
	uint32_t tag = 0;

	(void)state;
	assert_non_null(md);
	assert_non_null(st);
	for (int round = 0; round < 300; round++) {
		/* mostly small statements, now and then one of thousands of
		 * changes, a tenth of them dropped */
		uint32_t r = randombytes_uniform(100);
		size_t n = r < 8 ? 2000 + randombytes_uniform(12000) : 1 + randombytes_uniform(60);
		int drop = randombytes_uniform(10) == 0;

		memset(st, 0, sizeof(*st));
		for (size_t k = 0; k < n; k++) {
			uint64_t row = 1 + randombytes_uniform(ROWS);
			struct rowent *e = rowmap_get(&staged, row);

			assert_non_null(e);
			e->loc = randombytes_random();
			e->del = (uint8_t)(randombytes_uniform(5) == 0);
			free(e->rec);
			e->rec = NULL;
			st->has[row] = 1;
			st->loc[row] = e->loc;
			st->del[row] = e->del;
			st->rec[row] = 0;
			if (randombytes_uniform(2)) {
				e->rec = new_rec(++tag);
				st->rec[row] = tag;
			}
		}
		if (drop) {
			rowmap_clear(&staged);
		} else {
			assert_int_equal(rowmap_reserve(&committed, staged.n), 0);
			rowmap_merge(&committed, &staged);
			for (uint64_t row = 1; row <= ROWS; row++)
				if (st->has[row]) {
					md->has[row] = 1;
					md->loc[row] = st->loc[row];
					md->del[row] = st->del[row];
					md->rec[row] = st->rec[row];
				}
		}
		assert_int_equal(staged.n, 0);
		assert_null(rowmap_find(&staged, 1 + randombytes_uniform(ROWS)));
		/* what an emptied map keeps */
		assert_true(staged.cap <= ROWMAP_KEEP_CAP);
		check(&committed, md);
		/* now and then the committed map is folded away */
		if (randombytes_uniform(40) == 0) {
			rowmap_clear(&committed);
			assert_true(committed.cap <= ROWMAP_KEEP_CAP);
			memset(md, 0, sizeof(*md));
			check(&committed, md);
		}
	}
	rowmap_free(&staged);
	rowmap_free(&committed);
	assert_null(committed.e);
	assert_int_equal(committed.cap, 0);
	free(md);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
