/*
 * test_sql_values.c - the fast path for INSERT ... VALUES of literal rows
 * (client/sql_parse_values.c) against PostgreSQL's full parse.
 *
 * A comment at the end of a statement sends it to the full parse without
 * moving any location, so each statement is parsed both ways and the two
 * results (rows, values, types, locations, or the error and its position)
 * must be the same.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sql.h"
#include "sql_parse_int.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned below(unsigned n)
{
	return (unsigned)(next() % n);
}

static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < cap - *len);
	*len += (size_t)n;
}

static void blanks(char *buf, size_t cap, size_t *len)
{
	static const char *const b[] = { "", "", " ", "  ", "\t", "\n", "\r\n", " \n " };

	put(buf, cap, len, "%s", b[below(8)]);
}

static void literal(char *buf, size_t cap, size_t *len)
{
	static const char *const ints[] = {
		"0", "1", "42", "007", "2147483647", "2147483648", "9223372036854775807",
		"9223372036854775808", "99999999999999999999999", "00000000000000000001"
	};
	static const char *const nums[] = {
		"1.5", "1.", ".5", "0.0", "1e3", "1E-2", "2.5e+10", "1e400", "123456789.987654321",
		"00.10"
	};
	static const char *const strs[] = {
		"''", "'a'", "'it''s'", "'(,)'", "'''', ''''", "'\\n'", "'h\xc3\xa9'",
		"'  spaces  '", "'--not a comment'", "'/* nor this */'", "'\"q\"'"
	};
	static const char *const words[] = { "NULL", "null", "Null", "TRUE", "true", "FALSE",
					     "False" };

	switch (below(5)) {
	case 0:
		if (below(3) == 0) {
			put(buf, cap, len, "-");
			if (below(2))
				blanks(buf, cap, len);
		}
		put(buf, cap, len, "%s", ints[below(10)]);
		break;
	case 1:
		if (below(3) == 0)
			put(buf, cap, len, below(2) ? "- " : "-");
		put(buf, cap, len, "%s", nums[below(10)]);
		break;
	case 2:
		put(buf, cap, len, "%s", strs[below(11)]);
		break;
	case 3:
		put(buf, cap, len, "%s", words[below(7)]);
		break;
	default:
		put(buf, cap, len, "%llu", (unsigned long long)(next() % 100000));
		break;
	}
}

/* An INSERT of nrows rows of rowlen values (one row of another length when
 * odd_row >= 0). */
static void make_insert(char *buf, size_t cap, size_t nrows, size_t rowlen, long odd_row)
{
	size_t len = 0;

	put(buf, cap, &len, below(2) ? "INSERT INTO t" : "insert into \"T x\"");
	blanks(buf, cap, &len);
	if (below(2)) {
		put(buf, cap, &len, " (");
		for (size_t j = 0; j < rowlen; j++)
			put(buf, cap, &len, "%sc%zu", j ? ", " : "", j);
		put(buf, cap, &len, ")");
	}
	put(buf, cap, &len, " VALUES");
	for (size_t r = 0; r < nrows; r++) {
		size_t n = (long)r == odd_row ? rowlen + 1 : rowlen;

		put(buf, cap, &len, "%s", r ? "," : " ");
		blanks(buf, cap, &len);
		put(buf, cap, &len, "(");
		for (size_t j = 0; j < n; j++) {
			if (j)
				put(buf, cap, &len, ",");
			blanks(buf, cap, &len);
			literal(buf, cap, &len);
			blanks(buf, cap, &len);
		}
		put(buf, cap, &len, ")");
	}
	if (below(3) == 0)
		put(buf, cap, &len, ";");
	blanks(buf, cap, &len);
}

static void same_expr(const struct sql_expr *a, const struct sql_expr *b)
{
	if (a == NULL || b == NULL) {
		assert_true(a == b);
		return;
	}
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->pos, b->pos);
	assert_int_equal(a->op, b->op);
	assert_int_equal(a->lit.type, b->lit.type);
	assert_true(a->lit.i == b->lit.i);
	assert_memory_equal(&a->lit.f, &b->lit.f, sizeof(double));
	assert_int_equal(a->lit.i4, b->lit.i4);
	assert_int_equal(a->lit.boolean, b->lit.boolean);
	assert_int_equal(a->lit.len, b->lit.len);
	if (a->lit.s != NULL || b->lit.s != NULL) {
		assert_non_null(a->lit.s);
		assert_non_null(b->lit.s);
		assert_memory_equal(a->lit.s, b->lit.s, a->lit.len);
	}
	same_expr(a->a, b->a);
	same_expr(a->b, b->b);
}

/* sql parsed as it is and with a comment appended (the full parse). */
static void check_both(const char *sql, int expect_fast)
{
	size_t len = strlen(sql), nrows;
	char *full = malloc(len + 16), err1[512], err2[512];
	struct sql_stmt *s1 = NULL, *s2 = NULL;
	int rc1, rc2, pos1, pos2;

	assert_non_null(full);
	memcpy(full, sql, len);
	memcpy(full + len, "/* full */", 11);
	assert_int_equal(sqp_values_head(full, len + 10, &nrows), 0);
	if (expect_fast)
		assert_true(sqp_values_head(sql, len, &nrows) > 0);
	rc1 = sql_parse(sql, len, &s1, err1, sizeof(err1), &pos1);
	rc2 = sql_parse(full, len + 10, &s2, err2, sizeof(err2), &pos2);
	if (rc1 != rc2 || (rc1 != 0 && (strcmp(err1, err2) != 0 || pos1 != pos2)))
		fail_msg("fast and full parse differ on:\n%s\nfast: %d %s (at %d)\nfull: %d %s "
			 "(at %d)", sql, rc1, rc1 ? err1 : "ok", pos1, rc2, rc2 ? err2 : "ok",
			 pos2);
	if (rc1 == 0) {
		assert_int_equal(s1->kind, SQL_INSERT);
		assert_int_equal(s1->nrows, s2->nrows);
		assert_int_equal(s1->rowlen, s2->rowlen);
		assert_int_equal(s1->ninsert_cols, s2->ninsert_cols);
		assert_string_equal(s1->table, s2->table);
		for (size_t r = 0; r < s1->nrows; r++)
			for (size_t j = 0; j < s1->rowlen; j++)
				same_expr(s1->rows[r][j], s2->rows[r][j]);
		sql_free(s1);
		sql_free(s2);
	}
	free(full);
}

static void test_random_rows(void **state)
{
	enum { CAP = 1 << 16 };
	char *buf = malloc(CAP);

	(void)state;
	assert_non_null(buf);
	for (int i = 0; i < 3000; i++) {
		size_t nrows = 2 + below(12), rowlen = 1 + below(6);
		long odd = below(4) == 0 ? (long)below((unsigned)nrows) : -1;

		make_insert(buf, CAP, nrows, rowlen, odd);
		check_both(buf, 1);
	}
	free(buf);
}

static void test_declined(void **state)
{
	/* not read by the fast path: the full parse has them */
	static const char *const declined[] = {
		"INSERT INTO t VALUES (1)",                            /* one row */
		"INSERT INTO t VALUES (1), (2) -- c",
		"INSERT INTO t VALUES (1), (1 + 2)",
		"INSERT INTO t VALUES (1), (E'x')",
		"INSERT INTO t VALUES (1), ('a' 'b')",
		"INSERT INTO t VALUES (1), ('a'\n'b')",
		"INSERT INTO t VALUES (1), (DEFAULT)",
		"INSERT INTO t VALUES (1), (- -1)",
		"INSERT INTO t VALUES (1), (+1)",
		"INSERT INTO t VALUES (1), (1.2.3)",
		"INSERT INTO t VALUES (1), (12abc)",
		"INSERT INTO t VALUES (1), (1e)",
		"INSERT INTO t VALUES (1), (2); SELECT 1",
		"INSERT INTO t VALUES (1), (2",
		"INSERT INTO t VALUES (1), ('x)",
		"INSERT INTO t SELECT * FROM u",
		"INSERT INTO t VALUES (x), (2)",
		"insert into t values (nul), (2)",
		"INSERT INTO t VALUES (1), ($$x$$)",
		"INSERT INTO t VALUES (1), (U&'x')",
		"INSERT INTO t VALUES (), (1)",
		"WITH x AS (SELECT 1) INSERT INTO t VALUES (1), (2)",
	};
	/* read by it up to PostgreSQL's parse of the head, which refuses them:
	 * the answer is the full parse's */
	static const char *const refused[] = {
		"INSERT INTO values VALUES (1), (2)",
		"INSERT INTO t.u.v.w VALUES (1), (2)",
		"INSERT INTO t (a.b) VALUES (1), (2)",
		"INSERT INTO t VALUES (1, 99999999999999999999999999999999999999e999999), (2, 3)",
	};
	size_t nrows;

	(void)state;
	for (size_t i = 0; i < sizeof(declined) / sizeof(declined[0]); i++)
		if (sqp_values_head(declined[i], strlen(declined[i]), &nrows) != 0)
			fail_msg("the fast path took: %s", declined[i]);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		check_both(refused[i], 1);
}

static void test_errors_located(void **state)
{
	/* a later row of another length, at its first value, as the full parse */
	struct sql_stmt *st = NULL;
	char err[256];
	int pos;
	const char *sql = "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3), (4, 'd')";

	(void)state;
	assert_int_not_equal(sql_parse(sql, strlen(sql), &st, err, sizeof(err), &pos), 0);
	assert_string_equal(err, "VALUES lists must all be the same length");
	assert_int_equal(pos, (int)(strstr(sql, "(3)") - sql) + 1);
	check_both(sql, 1);
	check_both("INSERT INTO t VALUES (1), (  -  2147483648), (-0), (2147483648)", 1);
	check_both("INSERT INTO t VALUES (1), (99999999999999999999999999999999999999)", 1);
}

static void test_many_rows_fast(void **state)
{
	/* a bulk load's statement: 5,000 rows of seven values */
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	struct sql_stmt *st = NULL;
	char err[256];
	int pos;

	(void)state;
	assert_non_null(buf);
	put(buf, cap, &len, "INSERT INTO clus VALUES ");
	for (int i = 0; i < 5000; i++)
		put(buf, cap, &len, "%s(%d,%d,%d,%d,%d,%d,'pad%d')", i ? "," : "", i, i / 100,
		    i / 1000, i / 10000, i / 100000, -i, i);
	assert_int_equal(sql_parse(buf, len, &st, err, sizeof(err), &pos), 0);
	assert_int_equal(st->nrows, 5000);
	assert_int_equal(st->rows[4999][5]->lit.i, -4999);
	assert_string_equal(st->rows[4999][6]->lit.s, "pad4999");
	sql_free(st);
	check_both(buf, 1);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_rows),
		cmocka_unit_test(test_declined),
		cmocka_unit_test(test_errors_located),
		cmocka_unit_test(test_many_rows_fast),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
