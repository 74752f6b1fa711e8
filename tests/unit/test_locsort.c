/*
 * test_locsort.c - proxy/locsort.c: rows by location against a plain
 * reference (qsort by location, then row) over the shapes a statement
 * gives it: clustered (blocks in order, slots shuffled), scattered, already
 * sorted, reversed, equal locations, every size of the small path and past
 * it, and locations of 11, 22, 33 and 64 bits.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../proxy/locsort.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	/* splitmix64: fixed seed, reproducible */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	assert_non_null(p);
	return p;
}

/* By loc, then row: the order the result must have once equal locations
 * (whose order locrow_sort leaves unspecified) are put in row order. */
static int cmp_loc_row(const void *x, const void *y)
{
	const struct locrow *a = x, *b = y;

	if (a->loc != b->loc)
		return a->loc < b->loc ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
}

/* got is sorted by loc and holds the same entries as want (sorted by
 * cmp_loc_row). */
static void check(struct locrow *got, const struct locrow *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(got[i].loc, want[i].loc);
	qsort(got, n, sizeof(*got), cmp_loc_row);
	assert_memory_equal(got, want, n * sizeof(*got));
}

enum shape { CLUSTERED, SCATTERED, SORTED, REVERSED, FEW_VALUES, SHAPES };

static void fill(struct locrow *a, size_t n, enum shape sh, unsigned bits)
{
	uint64_t mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;

	for (size_t i = 0; i < n; i++) {
		switch (sh) {
		case CLUSTERED:         /* block i / 40 in order, its slot drawn */
			a[i].loc = ((i / 40) * 64 + next() % 64) & mask;
			break;
		case SCATTERED:
			a[i].loc = next() & mask;
			break;
		case SORTED:
			a[i].loc = (i * 7) & mask;
			break;
		case REVERSED:
			a[i].loc = ((n - i) * 3) & mask;
			break;
		default:
			a[i].loc = next() % 5;
			break;
		}
		a[i].row = i;
	}
}

static void test_against_reference(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 31, 63, 64, 65, 100, 1000, 2048, 2049,
					 20000, 100000 };
	static const unsigned widths[] = { 11, 22, 33, 64 };
	size_t cases = 0;

	(void)state;
	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		size_t n = sizes[z];
		struct locrow *a = xmalloc(n * sizeof(*a)), *b = xmalloc(n * sizeof(*b));

		for (unsigned sh = 0; sh < SHAPES; sh++) {
			for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
				fill(a, n, (enum shape)sh, widths[w]);
				memcpy(b, a, n * sizeof(*a));
				locrow_sort(a, n);
				qsort(b, n, sizeof(*b), cmp_loc_row);
				if (n > 0)
					check(a, b, n);
				cases++;
			}
		}
		free(a);
		free(b);
	}
	assert_true(cases > 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
