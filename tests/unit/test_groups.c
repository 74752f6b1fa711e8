/*
 * test_groups.c - the groups of rows in blocks (proxy/groups.c): a row's
 * mates agree with a plain model through notes, forgets and regroupings
 * (the map's deletions shift entries back: thousands of them, over
 * several growths); groups of one row and of another table give no mates,
 * a row given twice is one member;
 * the bytes a clean stop saves give the same groups back, and malformed
 * bytes are refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "../../proxy/groups.h"

#define NROWS 6000u

/* The model: each row's group (0: none), each group's table. */
struct model {
	uint64_t grp[NROWS];
	uint32_t table[NROWS * 4];
};

/* Row r leaves its group; the last row of a group is alone. */
static void model_forget(struct model *m, uint64_t r)
{
	uint64_t grp = m->grp[r], left = NROWS;
	size_t n = 0;

	m->grp[r] = 0;
	if (grp == 0)
		return;
	for (uint64_t x = 0; x < NROWS; x++)
		if (m->grp[x] == grp) {
			n++;
			left = x;
		}
	if (n == 1)
		m->grp[left] = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Every row's mates (any table, then the right one) as the model has them. */
static void check_against(const struct px_groups *G, const struct model *m)
{
	uint64_t got[64], want[64];
	size_t in_groups = 0;

	for (uint64_t r = 0; r < NROWS; r++) {
		size_t ng, nw = 0;
		uint32_t t = m->grp[r] ? m->table[m->grp[r]] : 7;

		in_groups += m->grp[r] != 0;
		assert_int_equal(grp_mates(G, r, t ^ 1, got, 64), 0);
		ng = grp_mates(G, r, t, got, 64);
		for (uint64_t x = 0; x < NROWS && m->grp[r]; x++)
			if (x != r && m->grp[x] == m->grp[r]) {
				assert_true(nw < 64);
				want[nw++] = x;
			}
		if (nw == 0) {
			assert_int_equal(ng, 0);
			continue;
		}
		assert_int_equal(ng, nw);
		qsort(got, ng, sizeof(*got), cmp_u64);
		assert_memory_equal(got, want, nw * sizeof(*want));
	}
	assert_int_equal(grp_rows(G), in_groups);
}

/* A group of n rows drawn at random (distinct), noted in both. */
static uint64_t note_random(struct px_groups *G, struct model *m, uint64_t grp, size_t n)
{
	uint64_t rows[32];
	size_t k = 0;

	while (k < n) {
		uint64_t r = randombytes_uniform(NROWS);
		size_t i = 0;

		while (i < k && rows[i] != r)
			i++;
		if (i == k)
			rows[k++] = r;
	}
	m->table[grp] = randombytes_uniform(4) * 2;
	assert_int_equal(grp_note(G, grp, m->table[grp], rows, n), 0);
	for (size_t i = 0; i < n; i++)
		model_forget(m, rows[i]);
	for (size_t i = 0; i < n; i++)
		m->grp[rows[i]] = n > 1 ? grp : 0;
	return rows[0];
}

static void test_mates_match_model(void **state)
{
	struct px_groups G = { 0 };
	struct model *m = calloc(1, sizeof(*m));
	uint64_t grp = 0;

	(void)state;
	assert_non_null(m);
	for (int round = 0; round < 6; round++) {
		/* notes (regrouping rows already in groups), then forgets */
		for (int i = 0; i < 700; i++)
			note_random(&G, m, ++grp, 1 + randombytes_uniform(16));
		for (int i = 0; i < 1500; i++) {
			uint64_t r = randombytes_uniform(NROWS);

			grp_forget(&G, r);
			model_forget(m, r);
		}
		check_against(&G, m);
	}
	/* everything forgotten: nothing left, the groups freed (ASan) */
	for (uint64_t r = 0; r < NROWS; r++) {
		grp_forget(&G, r);
		model_forget(m, r);
	}
	check_against(&G, m);
	assert_int_equal(G.grps.n, 0);
	grp_free(&G);
	free(m);
}

static void test_one_row_no_group(void **state)
{
	struct px_groups G = { 0 };
	uint64_t row = 5, out[4], two[2] = { 8, 9 };

	(void)state;
	assert_int_equal(grp_note(&G, 1, 0, &row, 1), 0);
	assert_int_equal(grp_rows(&G), 0);
	assert_int_equal(grp_note(&G, 2, 0, two, 2), 0);
	assert_int_equal(grp_mates(&G, 8, 0, out, 4), 1);
	assert_int_equal(out[0], 9);
	/* row 9 leaves: row 8 is alone, its group gone */
	grp_forget(&G, 9);
	assert_int_equal(grp_mates(&G, 8, 0, out, 4), 0);
	assert_int_equal(grp_rows(&G), 0);
	assert_int_equal(G.grps.n, 0);
	/* a row of a group joins another one: it leaves the first */
	assert_int_equal(grp_note(&G, 4, 0, (uint64_t[]){ 1, 2, 3 }, 3), 0);
	assert_int_equal(grp_note(&G, 3, 0, (uint64_t[]){ 3, 5 }, 2), 0);
	assert_int_equal(G.grps.n, 2);
	assert_int_equal(grp_mates(&G, 5, 0, out, 4), 1);
	assert_int_equal(out[0], 3);
	assert_int_equal(grp_mates(&G, 1, 0, out, 4), 1);
	assert_int_equal(out[0], 2);
	assert_int_equal(grp_rows(&G), 4);
	/* a row given twice is one member (a malformed saved record) */
	assert_int_equal(grp_note(&G, 9, 0, (uint64_t[]){ 50, 50, 60 }, 3), 0);
	assert_int_equal(grp_mates(&G, 60, 0, out, 4), 1);
	assert_int_equal(out[0], 50);
	grp_forget(&G, 50);
	assert_int_equal(grp_mates(&G, 60, 0, out, 4), 0);
	assert_null(grp_find(&G, 60));
	assert_int_equal(G.grps.n, 2);
	assert_int_equal(grp_note(&G, 10, 0, (uint64_t[]){ 70, 70 }, 2), 0);
	assert_null(grp_find(&G, 70));
	assert_int_equal(G.grps.n, 2);
	grp_free(&G);
}

static void test_saved_and_restored(void **state)
{
	struct px_groups G = { 0 }, H = { 0 };
	struct model *m = calloc(1, sizeof(*m));
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_non_null(m);
	for (uint64_t grp = 1; grp <= 500; grp++)
		note_random(&G, m, grp, 1 + randombytes_uniform(16));
	for (int i = 0; i < 800; i++) {
		uint64_t r = randombytes_uniform(NROWS);

		grp_forget(&G, r);
		model_forget(m, r);
	}
	assert_int_equal(grp_serialize(&G, &buf, &len), 0);
	assert_int_equal(grp_deserialize(&H, buf, len), 0);
	check_against(&H, m);
	grp_free(&H);
	/* malformed: cut short, a count beyond the bytes, group 0 */
	if (len > 16) {
		assert_int_equal(grp_deserialize(&H, buf, len - 3), -1);
		grp_free(&H);
		buf[12] = 0x7f;
		assert_int_equal(grp_deserialize(&H, buf, len), -1);
		grp_free(&H);
		memset(buf, 0, 8);
		assert_int_equal(grp_deserialize(&H, buf, len), -1);
		grp_free(&H);
	}
	assert_int_equal(grp_deserialize(&H, buf, 0), 0);
	assert_int_equal(grp_rows(&H), 0);
	free(buf);
	grp_free(&G);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mates_match_model),
		cmocka_unit_test(test_one_row_no_group),
		cmocka_unit_test(test_saved_and_restored),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
