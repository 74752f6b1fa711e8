/*
 * test_sql.c - the SQL subset (client/sql.c): every statement form of
 * DESIGN section 10 and the tree it parses into, every refusal with its
 * message and byte position, 200 statements of the conformance corpus,
 * script splitting, name binding, SQL's three-valued logic (AND / OR / NOT
 * tables, IN and NOT IN with NULLs, BETWEEN, IS NULL), exact INT / FLOAT
 * comparison at the extremes, and PostgreSQL's assignment conversions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"
#include "sql_int.h"
#include "test_sql_corpus.h"

/* ---------------------------------------------------------------- helpers */

static struct sql_stmt *parse_ok(const char *sql)
{
	struct sql_stmt *st = NULL;
	char err[256];
	int pos = -2;

	if (sql_parse(sql, strlen(sql), &st, err, sizeof(err), &pos) != LWC_OK)
		fail_msg("parse failed: %s (at %d) in: %.300s", err, pos, sql);
	assert_non_null(st);
	return st;
}

/* Offset of the n-th (1-based) occurrence of needle in sql; NULL needle:
 * the end of the text. */
static int at_nth(const char *sql, const char *needle, int n)
{
	const char *p = sql;

	if (needle == NULL)
		return (int)strlen(sql);
	for (;;) {
		p = strstr(p, needle);
		assert_non_null(p);
		if (--n == 0)
			return (int)(p - sql);
		p++;
	}
}

static void parse_fails_n(const char *sql, size_t len, const char *msg, int pos)
{
	struct sql_stmt *st = (struct sql_stmt *)1;
	char err[256];
	int epos = -2, rc;

	rc = sql_parse(sql, len, &st, err, sizeof(err), &epos);
	if (rc == LWC_OK)
		fail_msg("parsed but should not: %.300s", sql);
	assert_int_equal(rc, LWC_ERR_ARG);
	assert_null(st);
	if (strcmp(err, msg) != 0)
		fail_msg("for %.300s\n  got:      %s\n  expected: %s", sql, err, msg);
	if (pos != -2 && epos != pos)	/* -2: any position */
		fail_msg("for %.300s (%s): position %d, expected %d", sql, err, epos, pos);
}

/* sql must fail with msg at the n-th occurrence of needle. */
static void parse_fails_at(const char *sql, const char *msg, const char *needle, int n)
{
	parse_fails_n(sql, strlen(sql), msg, at_nth(sql, needle, n));
}

/* The test table: pk INT PRIMARY KEY, a INT, b INT, n INT, f FLOAT,
 * s TEXT, v VARCHAR(5), big BIGINT. */
static struct sql_coldef test_cols[] = {
	{ .name = "pk", .type = SQL_CT_INT, .primary_key = 1, .not_null = 1 },
	{ .name = "a", .type = SQL_CT_INT },
	{ .name = "b", .type = SQL_CT_INT },
	{ .name = "n", .type = SQL_CT_INT },
	{ .name = "f", .type = SQL_CT_FLOAT },
	{ .name = "s", .type = SQL_CT_TEXT },
	{ .name = "v", .type = SQL_CT_TEXT, .max_len = 5 },
	{ .name = "big", .type = SQL_CT_BIGINT, .not_null = 1 },
};
enum { C_PK, C_A, C_B, C_N, C_F, C_S, C_V, C_BIG, NCOLS };

static const struct sql_schema test_schema = {
	.name = "t", .ncols = NCOLS, .cols = test_cols, .pk = 0,
};

static struct sql_value I(int64_t v)
{
	struct sql_value x = { .type = SQL_INT, .i = v };
	return x;
}

static struct sql_value F(double v)
{
	struct sql_value x = { .type = SQL_FLOAT, .f = v };
	return x;
}

static struct sql_value T(const char *s)
{
	struct sql_value x = { .type = SQL_TEXT, .s = s, .len = strlen(s) };
	return x;
}

static struct sql_value N(void)
{
	struct sql_value x = { .type = SQL_NULL };
	return x;
}

/* The default row: pk 7, a 1, b 0, n NULL, f 2.5, s 'abc', v '', big
 * INT64_MAX. */
static void default_row(struct sql_value row[NCOLS])
{
	row[C_PK] = I(7);
	row[C_A] = I(1);
	row[C_B] = I(0);
	row[C_N] = N();
	row[C_F] = F(2.5);
	row[C_S] = T("abc");
	row[C_V] = T("");
	row[C_BIG] = I(INT64_MAX);
}

static struct sql_stmt *bind_ok(const char *sql)
{
	struct sql_stmt *st = parse_ok(sql);
	char err[256];
	int pos = -2;

	if (sql_bind(st, &test_schema, err, sizeof(err), &pos) != LWC_OK)
		fail_msg("bind failed: %s (at %d) in: %.300s", err, pos, sql);
	assert_int_equal(pos, -1);
	return st;
}

static void bind_fails(const char *sql, int code, const char *msg, const char *needle, int n)
{
	struct sql_stmt *st = parse_ok(sql);
	char err[256];
	int pos = -2, rc;

	rc = sql_bind(st, &test_schema, err, sizeof(err), &pos);
	if (rc == LWC_OK)
		fail_msg("bound but should not: %s", sql);
	assert_int_equal(rc, code);
	if (strcmp(err, msg) != 0)
		fail_msg("for %.300s\n  got:      %s\n  expected: %s", sql, err, msg);
	assert_int_equal(pos, at_nth(sql, needle, n));
	sql_free(st);
}

/* WHERE cond on row: sql_eval, checked against sql_eval_checked (which
 * must agree unless it reports an error, then UNKNOWN). */
static enum sql_tv tv_row(const char *cond, const struct sql_value *row, int *had_error,
			  char *err, size_t errlen)
{
	char sql[8192];
	struct sql_stmt *st;
	enum sql_tv t, t2;
	char e2[256];
	int rc;

	snprintf(sql, sizeof(sql), "SELECT * FROM t WHERE %s", cond);
	st = bind_ok(sql);
	t = sql_eval(st->where, row);
	rc = sql_eval_checked(st->where, row, &t2, e2, sizeof(e2));
	if (had_error != NULL)
		*had_error = rc != LWC_OK;
	if (rc == LWC_OK)
		assert_int_equal(t, t2);
	else
		assert_int_equal(t2, SQL_UNKNOWN);
	if (err != NULL)
		snprintf(err, errlen, "%s", rc == LWC_OK ? "" : e2);
	sql_free(st);
	return t;
}

static enum sql_tv tv(const char *cond)
{
	struct sql_value row[NCOLS];
	int had_error;
	enum sql_tv t;

	default_row(row);
	t = tv_row(cond, row, &had_error, NULL, 0);
	if (had_error)
		fail_msg("evaluation error in: %s", cond);
	return t;
}

#define ASSERT_TV(cond, want)                                                \
	do {                                                                 \
		enum sql_tv got_ = tv(cond);                                 \
		if (got_ != (want))                                          \
			fail_msg("%s: got %d, expected %d", cond, (int)got_, (int)(want)); \
	} while (0)

/* A long string built by repeating pieces (freed by the caller). */
static char *repeat3(const char *head, const char *piece, size_t n, const char *mid,
		     const char *piece2, size_t n2, const char *tail)
{
	size_t len = strlen(head) + strlen(piece) * n + strlen(mid) + strlen(piece2) * n2 +
		     strlen(tail) + 1, i;
	char *s = malloc(len), *p = s;

	assert_non_null(s);
	p += sprintf(p, "%s", head);
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s", piece);
	p += sprintf(p, "%s", mid);
	for (i = 0; i < n2; i++)
		p += sprintf(p, "%s", piece2);
	sprintf(p, "%s", tail);
	return s;
}

/* ---------------------------------------------------------------- parsing */

static void test_create_table(void **state)
{
	struct sql_stmt *st;

	(void)state;
	st = parse_ok("CREATE TABLE tab0(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, "
		      "col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)");
	assert_int_equal(st->kind, SQL_CREATE_TABLE);
	assert_string_equal(st->table, "tab0");
	assert_int_equal(st->table_pos, 13);
	assert_int_equal(st->ncols, 7);
	assert_string_equal(st->cols[0].name, "pk");
	assert_int_equal(st->cols[0].type, SQL_CT_INT);
	assert_true(st->cols[0].primary_key && st->cols[0].not_null);
	assert_string_equal(st->cols[2].name, "col1");
	assert_int_equal(st->cols[2].type, SQL_CT_FLOAT);
	assert_int_equal(st->cols[3].type, SQL_CT_TEXT);
	assert_int_equal(st->cols[3].max_len, 0);
	assert_false(st->cols[6].primary_key || st->cols[6].not_null);
	assert_int_equal(st->cols[1].pos, 42);
	sql_free(st);

	st = parse_ok("create table if not exists \"My Tab\" (a int, b bigint not null unique, "
		      "c real null, d double precision, e smallint, f varchar(8), g text(3), "
		      "h character varying(2), i int8, j int4, k float8, l varchar, "
		      "\"Quoted \"\"Col\"\"\" text);");
	assert_true(st->if_not_exists);
	assert_string_equal(st->table, "My Tab");
	assert_int_equal(st->ncols, 13);
	assert_int_equal(st->cols[0].type, SQL_CT_INT);
	assert_int_equal(st->cols[1].type, SQL_CT_BIGINT);
	assert_true(st->cols[1].not_null && st->cols[1].unique && !st->cols[1].primary_key);
	assert_int_equal(st->cols[2].type, SQL_CT_FLOAT);
	assert_false(st->cols[2].not_null);
	assert_int_equal(st->cols[3].type, SQL_CT_FLOAT);
	assert_int_equal(st->cols[4].type, SQL_CT_INT);
	assert_int_equal(st->cols[5].type, SQL_CT_TEXT);
	assert_int_equal(st->cols[5].max_len, 8);
	assert_int_equal(st->cols[6].max_len, 3);
	assert_int_equal(st->cols[7].max_len, 2);
	assert_int_equal(st->cols[8].type, SQL_CT_BIGINT);
	assert_int_equal(st->cols[9].type, SQL_CT_INT);
	assert_int_equal(st->cols[10].type, SQL_CT_FLOAT);
	assert_int_equal(st->cols[11].type, SQL_CT_TEXT);
	assert_int_equal(st->cols[11].max_len, 0);
	assert_string_equal(st->cols[12].name, "Quoted \"Col\"");
	sql_free(st);

	/* the evidence file's form, and table-level constraints */
	st = parse_ok("CREATE TABLE t1( x INTEGER, y VARCHAR(8) )");
	assert_int_equal(st->ncols, 2);
	assert_int_equal(st->cols[1].max_len, 8);
	sql_free(st);
	st = parse_ok("CREATE TABLE t (a INT, b TEXT, PRIMARY KEY (b), UNIQUE (a))");
	assert_int_equal(st->ncols, 2);
	assert_true(st->cols[1].primary_key && st->cols[1].not_null);
	assert_true(st->cols[0].unique && !st->cols[0].primary_key);
	sql_free(st);
	st = parse_ok("CREATE TABLE t (PRIMARY KEY (id), id INT)");
	assert_true(st->cols[0].primary_key);
	sql_free(st);
	/* type names and words like "key" are ordinary column names */
	st = parse_ok("CREATE TABLE text (text TEXT, key INT, count INT, \"select\" INT)");
	assert_string_equal(st->table, "text");
	assert_string_equal(st->cols[0].name, "text");
	assert_string_equal(st->cols[3].name, "select");
	sql_free(st);
	st = parse_ok("CREATE TABLE t (a INT NOT NULL PRIMARY KEY UNIQUE NOT NULL)");
	assert_true(st->cols[0].primary_key && st->cols[0].unique && st->cols[0].not_null);
	sql_free(st);
	st = parse_ok("CREATE TABLE t (a VARCHAR(10485760))");
	assert_int_equal(st->cols[0].max_len, 10485760);
	sql_free(st);
}

static void test_create_index_drop(void **state)
{
	struct sql_stmt *st;

	(void)state;
	st = parse_ok("CREATE UNIQUE INDEX idx_tab2_0 ON tab2 (col3,col1 DESC)");
	assert_int_equal(st->kind, SQL_CREATE_INDEX);
	assert_true(st->unique);
	assert_string_equal(st->index, "idx_tab2_0");
	assert_string_equal(st->table, "tab2");
	assert_int_equal(st->nindex_cols, 2);
	assert_string_equal(st->index_cols[0], "col3");
	assert_string_equal(st->index_cols[1], "col1");
	assert_int_equal(st->index_col_pos[1], 45);
	assert_int_equal(st->index_col_index[0], -1);
	sql_free(st);
	st = parse_ok("CREATE INDEX idx_tab1_0 on tab1 (col0)");
	assert_false(st->unique);
	assert_int_equal(st->nindex_cols, 1);
	sql_free(st);
	st = parse_ok("create index on t (a asc)");
	assert_string_equal(st->index, "");
	assert_string_equal(st->table, "t");
	sql_free(st);
	st = parse_ok("CREATE INDEX IF NOT EXISTS i ON t (a, b)");
	assert_true(st->if_not_exists);
	assert_string_equal(st->index, "i");
	sql_free(st);

	st = parse_ok("DROP TABLE tab0");
	assert_int_equal(st->kind, SQL_DROP_TABLE);
	assert_string_equal(st->table, "tab0");
	assert_false(st->if_exists);
	sql_free(st);
	st = parse_ok("drop table if exists TAB0 ;");
	assert_true(st->if_exists);
	assert_string_equal(st->table, "tab0");
	sql_free(st);
}

static void test_insert(void **state)
{
	struct sql_stmt *st;

	(void)state;
	st = parse_ok("INSERT INTO tab0 VALUES(0,6,4.67,'wdbsg',4,2.89,'altmp')");
	assert_int_equal(st->kind, SQL_INSERT);
	assert_string_equal(st->table, "tab0");
	assert_int_equal(st->ninsert_cols, 0);
	assert_int_equal(st->nrows, 1);
	assert_int_equal(st->rowlen, 7);
	assert_string_equal(st->src, "");
	assert_int_equal(st->rows[0][0]->kind, SQL_E_LIT);
	assert_int_equal(st->rows[0][0]->lit.type, SQL_INT);
	assert_int_equal(st->rows[0][1]->lit.i, 6);
	assert_int_equal(st->rows[0][2]->lit.type, SQL_FLOAT);
	assert_true(st->rows[0][2]->lit.f == 4.67);
	assert_int_equal(st->rows[0][3]->lit.type, SQL_TEXT);
	assert_string_equal(st->rows[0][3]->lit.s, "wdbsg");
	assert_int_equal(st->rows[0][3]->lit.len, 5);
	assert_int_equal(st->rows[0][3]->pos, 33);
	sql_free(st);

	/* column list, many rows, NULL, negatives, escapes, empty strings,
	 * folded arithmetic, the 64-bit extremes */
	st = parse_ok("insert into t (a, \"B\", c) values (-3, NULL, 'it''s'), (+4, -2.5e1, ''),"
		      " (3+1, (2*-3), 'x' ), (-9223372036854775808, 9223372036854775807, "
		      "9223372036854775808), (7/2, 7%3, -(-(5)));");
	assert_int_equal(st->ninsert_cols, 3);
	assert_string_equal(st->insert_cols[0], "a");
	assert_string_equal(st->insert_cols[1], "B");
	assert_int_equal(st->insert_col_pos[2], 23);
	assert_int_equal(st->nrows, 5);
	assert_int_equal(st->rowlen, 3);
	assert_int_equal(st->rows[0][0]->lit.i, -3);
	assert_int_equal(st->rows[0][1]->lit.type, SQL_NULL);
	assert_string_equal(st->rows[0][2]->lit.s, "it's");
	assert_int_equal(st->rows[1][0]->lit.i, 4);
	assert_true(st->rows[1][1]->lit.f == -25.0);
	assert_int_equal(st->rows[1][2]->lit.type, SQL_TEXT);
	assert_int_equal(st->rows[1][2]->lit.len, 0);
	assert_string_equal(st->rows[1][2]->lit.s, "");
	assert_int_equal(st->rows[2][0]->kind, SQL_E_LIT);
	assert_int_equal(st->rows[2][0]->lit.i, 4);
	assert_int_equal(st->rows[2][1]->lit.i, -6);
	assert_true(st->rows[3][0]->lit.type == SQL_INT && st->rows[3][0]->lit.i == INT64_MIN);
	assert_true(st->rows[3][1]->lit.type == SQL_INT && st->rows[3][1]->lit.i == INT64_MAX);
	assert_true(st->rows[3][2]->lit.type == SQL_FLOAT &&
		    st->rows[3][2]->lit.f == 9223372036854775808.0);
	assert_int_equal(st->rows[4][0]->lit.i, 3);
	assert_int_equal(st->rows[4][1]->lit.i, 1);
	assert_int_equal(st->rows[4][2]->lit.i, 5);
	sql_free(st);

	st = parse_ok("INSERT INTO tab1 SELECT * FROM tab0");
	assert_int_equal(st->kind, SQL_INSERT);
	assert_string_equal(st->src, "tab0");
	assert_int_equal(st->src_pos, 31);
	assert_int_equal(st->nrows, 0);
	sql_free(st);
	st = parse_ok("INSERT INTO t (b, a) SELECT * FROM u");
	assert_int_equal(st->ninsert_cols, 2);
	assert_string_equal(st->src, "u");
	sql_free(st);

	/* special characters survive inside strings */
	st = parse_ok("INSERT INTO t VALUES ('a;b -- c \"d\" ''e''', 'h\xc3\xa9')");
	assert_string_equal(st->rows[0][0]->lit.s, "a;b -- c \"d\" 'e'");
	assert_string_equal(st->rows[0][1]->lit.s, "h\xc3\xa9");
	sql_free(st);
}

static void test_many_rows(void **state)
{
	size_t n = 100000, i;
	char *sql = repeat3("INSERT INTO t VALUES (0, 'x', 1.5)", ", (1, 'abc', NULL)", n, "",
			    "", 0, ";");
	struct sql_stmt *st;

	(void)state;
	st = parse_ok(sql);
	assert_int_equal(st->nrows, n + 1);
	assert_int_equal(st->rowlen, 3);
	for (i = 1; i <= n; i += 9999)
		assert_string_equal(st->rows[i][1]->lit.s, "abc");
	assert_int_equal(st->rows[n][2]->lit.type, SQL_NULL);
	sql_free(st);
	free(sql);

	/* a long IN list */
	sql = repeat3("SELECT * FROM t WHERE a IN (0", ", 1", n, ")", "", 0, "");
	st = parse_ok(sql);
	assert_int_equal(st->where->kind, SQL_E_IN);
	assert_int_equal(st->where->nlist, n + 1);
	sql_free(st);
	free(sql);
}

static void test_select(void **state)
{
	struct sql_stmt *st;

	(void)state;
	st = parse_ok("SELECT * FROM tab0");
	assert_int_equal(st->kind, SQL_SELECT);
	assert_true(st->star);
	assert_false(st->count_star);
	assert_null(st->where);
	assert_int_equal(st->limit, -1);
	assert_int_equal(st->norder, 0);
	sql_free(st);

	st = parse_ok("SELECT count(*) FROM t1 WHERE x=3");
	assert_true(st->count_star);
	assert_false(st->star);
	assert_int_equal(st->where->kind, SQL_E_CMP);
	assert_int_equal(st->where->op, SQL_EQ);
	assert_int_equal(st->where->pos, 31);	/* the operator */
	assert_int_equal(st->where->a->kind, SQL_E_COL);
	assert_string_equal(st->where->a->col, "x");
	assert_int_equal(st->where->a->col_index, -1);
	assert_int_equal(st->where->b->lit.i, 3);
	sql_free(st);
	st = parse_ok("select COUNT ( * ) from t");
	assert_true(st->count_star);
	sql_free(st);
	/* "count" without a parenthesis is a column */
	st = parse_ok("SELECT count, pk FROM t");
	assert_false(st->count_star);
	assert_int_equal(st->nproj, 2);
	assert_string_equal(st->proj[0], "count");
	assert_string_equal(st->proj[1], "pk");
	assert_int_equal(st->proj_pos[1], 14);
	assert_int_equal(st->proj_index[1], -1);
	sql_free(st);

	st = parse_ok("SELECT pk, col0 FROM tab0 WHERE col0 > 5 ORDER BY col0 DESC, pk, col1 ASC "
		      "LIMIT 10;");
	assert_int_equal(st->nproj, 2);
	assert_int_equal(st->norder, 3);
	assert_string_equal(st->order[0].col, "col0");
	assert_true(st->order[0].desc);
	assert_false(st->order[1].desc);
	assert_false(st->order[2].desc);
	assert_int_equal(st->order[2].col_index, -1);
	assert_int_equal(st->limit, 10);
	sql_free(st);
	st = parse_ok("SELECT * FROM t LIMIT 0");
	assert_int_equal(st->limit, 0);
	sql_free(st);
	st = parse_ok("SELECT * FROM t LIMIT ALL");
	assert_int_equal(st->limit, -1);
	sql_free(st);
	st = parse_ok("SELECT * FROM t LIMIT NULL");
	assert_int_equal(st->limit, -1);
	sql_free(st);
	st = parse_ok("SELECT * FROM t LIMIT 9223372036854775807");
	assert_true(st->limit == INT64_MAX);
	sql_free(st);
}

static void test_update_delete(void **state)
{
	struct sql_stmt *st;

	(void)state;
	st = parse_ok("UPDATE t1 SET z='foo' WHERE x>0");
	assert_int_equal(st->kind, SQL_UPDATE);
	assert_string_equal(st->table, "t1");
	assert_int_equal(st->nsets, 1);
	assert_string_equal(st->sets[0].col, "z");
	assert_int_equal(st->sets[0].pos, 14);
	assert_int_equal(st->sets[0].col_index, -1);
	assert_string_equal(st->sets[0].value->lit.s, "foo");
	assert_int_equal(st->where->op, SQL_GT);
	sql_free(st);

	st = parse_ok("UPDATE t SET a = 1, b = NULL, c = -3, d = 'x', e = 2.5, f = 3+1");
	assert_int_equal(st->nsets, 6);
	assert_null(st->where);
	assert_int_equal(st->sets[1].value->lit.type, SQL_NULL);
	assert_int_equal(st->sets[2].value->kind, SQL_E_LIT);
	assert_int_equal(st->sets[2].value->lit.i, -3);
	assert_int_equal(st->sets[5].value->lit.i, 4);
	sql_free(st);

	/* a value that reads the row stays an expression */
	st = parse_ok("UPDATE t1 SET x=x+2");
	assert_int_equal(st->sets[0].value->kind, SQL_E_ARITH);
	assert_int_equal(st->sets[0].value->arith, SQL_ADD);
	assert_int_equal(st->sets[0].value->a->kind, SQL_E_COL);
	assert_int_equal(st->sets[0].value->b->lit.i, 2);
	sql_free(st);
	st = parse_ok("UPDATE t SET a = -b");
	assert_int_equal(st->sets[0].value->kind, SQL_E_NEG);
	sql_free(st);

	st = parse_ok("DELETE FROM tab0 WHERE col0 > 5");
	assert_int_equal(st->kind, SQL_DELETE);
	assert_string_equal(st->table, "tab0");
	assert_non_null(st->where);
	sql_free(st);
	st = parse_ok("delete from T -- every row\n");
	assert_null(st->where);
	assert_string_equal(st->table, "t");
	sql_free(st);
}

/* The terms of a chain of kind, left to right. */
static void leaves(const struct sql_expr *e, enum sql_ekind kind, const struct sql_expr **out,
		   size_t *n, size_t max)
{
	if (e->kind == kind) {
		leaves(e->a, kind, out, n, max);
		leaves(e->b, kind, out, n, max);
		return;
	}
	assert_true(*n < max);
	out[(*n)++] = e;
}

static void test_expression_shapes(void **state)
{
	struct sql_stmt *st;
	const struct sql_expr *e;

	(void)state;
	/* AND binds tighter than OR; NOT tighter than AND */
	st = parse_ok("SELECT * FROM t WHERE a = 1 OR NOT b = 2 AND c IS NOT NULL");
	e = st->where;
	assert_int_equal(e->kind, SQL_E_OR);
	assert_int_equal(e->pos, 28);
	assert_int_equal(e->a->kind, SQL_E_CMP);
	assert_int_equal(e->b->kind, SQL_E_AND);
	assert_int_equal(e->b->a->kind, SQL_E_NOT);
	assert_int_equal(e->b->a->a->kind, SQL_E_CMP);
	assert_int_equal(e->b->b->kind, SQL_E_ISNULL);
	assert_true(e->b->b->negated);
	assert_int_equal(e->height, 5);
	sql_free(st);

	/* BETWEEN takes its AND; NOT IN / NOT BETWEEN; negative list items */
	st = parse_ok("SELECT * FROM t WHERE a BETWEEN -1 AND 5 AND b NOT IN (1.5, -2, NULL) "
		      "AND c NOT BETWEEN 'a' AND 'b' AND d IN (1)");
	e = st->where;
	assert_int_equal(e->kind, SQL_E_AND);
	/* four terms: a balanced tree */
	assert_int_equal(e->a->kind, SQL_E_AND);
	assert_int_equal(e->b->kind, SQL_E_AND);
	assert_int_equal(e->a->a->kind, SQL_E_BETWEEN);
	assert_false(e->a->a->negated);
	assert_int_equal(e->a->a->b->lit.i, -1);
	assert_int_equal(e->a->a->c->lit.i, 5);
	assert_int_equal(e->a->b->kind, SQL_E_IN);
	assert_true(e->a->b->negated);
	assert_int_equal(e->a->b->nlist, 3);
	assert_true(e->a->b->list[0]->lit.f == 1.5);
	assert_int_equal(e->a->b->list[1]->lit.i, -2);
	assert_int_equal(e->a->b->list[2]->lit.type, SQL_NULL);
	assert_int_equal(e->b->a->kind, SQL_E_BETWEEN);
	assert_true(e->b->a->negated);
	assert_int_equal(e->b->b->kind, SQL_E_IN);
	assert_false(e->b->b->negated);
	sql_free(st);

	/* the conformance files' deep form */
	st = parse_ok("SELECT pk FROM tab0 WHERE col3 >= 60 OR (col3 IS NULL AND (((((col3 = 66))) "
		      "AND (col3 > 45))) OR col1 < 85.55 OR col0 IS NULL OR (col3 > 35)) OR col0 IN "
		      "(10,68,82,67,6)");
	e = st->where;
	assert_int_equal(e->kind, SQL_E_OR);
	assert_true(e->height <= 8);
	sql_free(st);

	/* arithmetic precedence and folding: 1 + 2 * 3 = 7, (1 + 2) * 3 = 9 */
	st = parse_ok("SELECT * FROM t WHERE a = 1 + 2 * 3 AND b = (1 + 2) * 3 AND c = -a * 2");
	e = st->where;
	/* three terms: the first, then the other two */
	assert_int_equal(e->a->kind, SQL_E_CMP);
	assert_int_equal(e->b->kind, SQL_E_AND);
	assert_int_equal(e->a->b->lit.i, 7);
	assert_int_equal(e->b->a->b->lit.i, 9);
	assert_int_equal(e->b->b->b->kind, SQL_E_ARITH);
	assert_int_equal(e->b->b->b->arith, SQL_MUL);
	assert_int_equal(e->b->b->b->a->kind, SQL_E_NEG);
	sql_free(st);

	/* comparisons in every spelling; literal on the left */
	st = parse_ok("SELECT * FROM t WHERE a<>1 OR a!=1 OR a<1 OR a<=1 OR a>1 OR a>=1 OR 1=a");
	{
		static const enum sql_cmp want[] = { SQL_NE, SQL_NE, SQL_LT, SQL_LE, SQL_GT, SQL_GE, SQL_EQ };
		const struct sql_expr *leaf[8];
		size_t n = 0, i;

		leaves(st->where, SQL_E_OR, leaf, &n, 8);
		assert_int_equal(n, 7);
		for (i = 0; i < n; i++) {
			assert_int_equal(leaf[i]->kind, SQL_E_CMP);
			assert_int_equal(leaf[i]->op, want[i]);
		}
		assert_int_equal(leaf[6]->a->kind, SQL_E_LIT);
		assert_int_equal(leaf[6]->b->kind, SQL_E_COL);
	}
	sql_free(st);

	/* IS binds looser than comparison, NOT looser still */
	st = parse_ok("SELECT * FROM t WHERE NOT a IS NULL");
	assert_int_equal(st->where->kind, SQL_E_NOT);
	assert_int_equal(st->where->a->kind, SQL_E_ISNULL);
	sql_free(st);
	st = parse_ok("SELECT * FROM t WHERE NOT NOT (a = 1)");
	assert_int_equal(st->where->a->kind, SQL_E_NOT);
	sql_free(st);
	/* "-" then "--": a comment */
	st = parse_ok("SELECT * FROM t WHERE a = 1--2\n");
	assert_int_equal(st->where->b->lit.i, 1);
	sql_free(st);
}

static void test_balanced_chains(void **state)
{
	size_t n = 50000;
	char *sql = repeat3("SELECT * FROM t WHERE a = 0", " OR a = 1", n, " AND b = 0", " AND b = 1",
			    n, "");
	struct sql_stmt *st;

	(void)state;
	st = parse_ok(sql);
	/* OR over n terms whose last is an AND of n + 1 terms: both balanced */
	assert_int_equal(st->where->kind, SQL_E_OR);
	assert_true(st->where->height <= 40);
	sql_free(st);
	free(sql);
}

static void test_nesting_limits(void **state)
{
	char *sql;
	struct sql_stmt *st;

	(void)state;
	/* parentheses add no level to PostgreSQL's tree */
	sql = repeat3("SELECT * FROM t WHERE ", "(", 2000, "a = 1", ")", 2000, "");
	st = parse_ok(sql);
	assert_int_equal(st->where->kind, SQL_E_CMP);
	sql_free(st);
	free(sql);
	sql = repeat3("SELECT * FROM t WHERE ", "NOT ", SQL_MAX_NESTING + 10, "a = 1", "", 0, "");
	parse_fails_n(sql, strlen(sql), "expression nested too deeply",
		      (int)(strlen("SELECT * FROM t WHERE ") + 4 * SQL_MAX_NESTING));
	free(sql);

	/* beyond SQL_MAX_TOKENS on one path: refused before the grammar runs
	 * (NOT, signs, IN lists and parentheses all count) */
	sql = repeat3("SELECT * FROM t WHERE ", "NOT ", 100000, "a = 1", "", 0, "");
	parse_fails_n(sql, strlen(sql), "statement too complex: more than 20000 operators, words "
		      "or nested parentheses", 0);
	free(sql);
	sql = repeat3("SELECT * FROM t WHERE a = ", "- ", 100000, "b", "", 0, "");
	parse_fails_n(sql, strlen(sql), "statement too complex: more than 20000 operators, words "
		      "or nested parentheses", 0);
	free(sql);
	sql = repeat3("SELECT * FROM t WHERE ", "a IN (", 100000, "1", ")", 100000, "");
	parse_fails_n(sql, strlen(sql), "statement too complex: more than 20000 operators, words "
		      "or nested parentheses", 0);
	free(sql);
	sql = repeat3("UPDATE t SET a = ", "(", 100000, "1", ")", 100000, "");
	parse_fails_n(sql, strlen(sql), "statement too complex: more than 20000 operators, words "
		      "or nested parentheses", 0);
	free(sql);
	/* PostgreSQL's own parser stack: 10,000 levels of parentheses */
	sql = repeat3("SELECT * FROM t WHERE a = ", "(", 9000, "1", ")", 9000, "");
	parse_fails_n(sql, strlen(sql), "statement too complex: more than 20000 operators, words "
		      "or nested parentheses", 0);
	free(sql);
	/* chains that nest across AND and OR */
	sql = repeat3("SELECT * FROM t WHERE a ", "BETWEEN 1 AND a ", 30000, "", "", 0, "");
	parse_fails_n(sql, strlen(sql), "statement too complex: more than 20000 operators, words "
		      "or nested parentheses", 0);
	free(sql);
	sql = repeat3("SELECT * FROM t WHERE a = ", "CASE WHEN a = 1 OR ", 500, "a = 2",
		      " THEN 1 END", 500, "");
	parse_fails_n(sql, strlen(sql), "expression nested too deeply", -2);
	free(sql);
	/* many rows of VALUES are not deep */
	sql = repeat3("INSERT INTO t VALUES (1)", ", (1)", 30000, "", "", 0, "");
	st = parse_ok(sql);
	assert_int_equal(st->nrows, 30001);
	sql_free(st);
	free(sql);

	/* a left-deep chain of arithmetic on a column is bounded by height;
	 * on constants it folds as it goes */
	sql = repeat3("SELECT * FROM t WHERE a = b", " + b", 5000, "", "", 0, "");
	{
		struct sql_stmt *bad = NULL;
		char err[128];
		int epos;

		assert_int_equal(sql_parse(sql, strlen(sql), &bad, err, sizeof(err), &epos), LWC_ERR_ARG);
		assert_string_equal(err, "expression nested too deeply");
		assert_null(bad);
	}
	free(sql);
	sql = repeat3("SELECT * FROM t WHERE a = b", " + b", 500, "", "", 0, "");
	st = parse_ok(sql);
	assert_int_equal(st->where->height, 502);
	sql_free(st);
	free(sql);
	sql = repeat3("SELECT * FROM t WHERE a = 0", " + 1", 900, "", "", 0, "");
	st = parse_ok(sql);
	assert_int_equal(st->where->b->kind, SQL_E_LIT);
	assert_int_equal(st->where->b->lit.i, 900);
	sql_free(st);
	free(sql);
}

struct bad_sql {
	const char *sql;
	const char *msg;
	const char *at;           /* position: first occurrence; NULL: the end */
	int nth;                  /* 0 or 1: first occurrence                  */
};

static const struct bad_sql bad[] = {
	{ "SELECT * FORM t",
	  "syntax error at or near \"FORM\"", "FORM t", 0 },
	{ "SELECT * FROM",
	  "syntax error at end of input", NULL, 0 },
	{ "SELECT pk FROM tab0 WHERE col0 >",
	  "syntax error at end of input", NULL, 0 },
	{ "SELECT pk FROM tab0 WHERE col0 > 5 col1",
	  "syntax error at or near \"col1\"", "col1", 0 },
	{ "SELEC * FROM t",
	  "syntax error at or near \"SELEC\"", "SELEC ", 0 },
	{ "SELECT * FROM t WHERE a = 'abc",
	  "unterminated quoted string at or near \"'abc\"", "'abc", 0 },
	{ "SELECT * FROM \"t",
	  "unterminated quoted identifier at or near \"\"t\"", "\"t", 0 },
	{ "SELECT * FROM \"\"",
	  "zero-length delimited identifier at or near \"\"\"\"", "\"\"", 0 },
	{ "SELECT * FROM t WHERE a = 12abc",
	  "trailing junk after numeric literal at or near \"12a\"", "12abc", 0 },
	{ "SELECT * FROM t WHERE a = 1.2.3",
	  "syntax error at or near \".3\"", ".3", 0 },
	{ "SELECT * FROM t WHERE a = 1e400",
	  "\"1e400\" is out of range for type double precision", "1e400", 0 },
	{ "SELECT * FROM t WHERE a = -1e400",
	  "\"-1e400\" is out of range for type double precision", "-1e400", 0 },
	{ "SELECT * FROM t WHERE a @ 1",
	  "LWC does not support the operator @", "@ 1", 0 },
	{ "SELECT * FROM t WHERE a == 1",
	  "LWC does not support the operator ==", "== 1", 0 },
	{ "SELECT * FROM t WHERE a = 'x\xff'",
	  "invalid byte sequence for encoding \"UTF8\": 0xff", "\xff'", 0 },
	{ "SELECT * FROM t WHERE \xc3( = 1",
	  "invalid byte sequence for encoding \"UTF8\": 0xc3", "\xc3( = 1", 0 },
	{ "SELECT * FROM t.x",
	  "LWC does not support schema-qualified table names", "t.x", 0 },
	{ "SELECT * FROM select",
	  "syntax error at or near \"select\"", "select", 0 },
	{ "SELECT a, FROM t",
	  "syntax error at or near \"FROM\"", "FROM t", 0 },
	{ "SELECT * FROM t WHERE a",
	  "argument of WHERE must be type boolean, not a value", "a", 0 },
	{ "SELECT * FROM t WHERE 5",
	  "argument of WHERE must be type boolean, not type integer", "5", 0 },
	{ "SELECT * FROM t WHERE NULL",
	  "argument of WHERE must be type boolean, not type unknown", "NULL", 0 },
	{ "SELECT * FROM t WHERE a = 1 AND 5",
	  "argument of AND must be type boolean, not type integer", "5", 0 },
	{ "SELECT * FROM t WHERE 'x' OR a = 1",
	  "argument of OR must be type boolean, not type text", "'x' OR", 0 },
	{ "SELECT * FROM t WHERE NOT a",
	  "argument of NOT must be type boolean, not a value", "a", 0 },
	{ "SELECT * FROM t WHERE (a = 1) + 1 = 2",
	  "argument of + must be a value, not a condition", "= 1) +", 0 },
	{ "SELECT * FROM t WHERE (a = 1) IS NULL",
	  "argument of IS NULL must be a value, not a condition", "= 1) I", 0 },
	{ "SELECT * FROM t WHERE a IN (b = 1)",
	  "argument of IN must be a value, not a condition", "= 1)", 0 },
	{ "SELECT * FROM t WHERE a = 1 = 2",
	  "syntax error at or near \"=\"", "= 2", 0 },
	{ "SELECT * FROM t WHERE a IN () +",
	  "syntax error at or near \")\"", ")", 0 },
	{ "SELECT * FROM t WHERE a IN ( ) OR b IN (,)",
	  "syntax error at or near \")\"", ")", 0 },
	{ "SELECT * FROM t WHERE s = 'IN ()' AND a IN (",
	  "syntax error at end of input", NULL, 0 },
	{ "SELECT * FROM t WHERE a IN () = 1",
	  "argument of = must be a value, not a condition", "IN () =", 0 },
	{ "SELECT * FROM t WHERE a IN 1",
	  "syntax error at or near \"1\"", "1", 0 },
	{ "SELECT * FROM t WHERE a BETWEEN 1",
	  "syntax error at end of input", NULL, 0 },
	{ "SELECT * FROM t WHERE a BETWEEN 1 OR 2",
	  "syntax error at or near \"OR\"", "OR 2", 0 },
	{ "SELECT * FROM t WHERE a IS 5",
	  "syntax error at or near \"5\"", "5", 0 },
	{ "SELECT * FROM t WHERE a = 1 AND b",
	  "argument of AND must be type boolean, not a value", "b", 0 },
	{ "SELECT * FROM t WHERE (a) ORDER BY a",
	  "argument of WHERE must be type boolean, not a value", "a) ORD", 0 },
	{ "SELECT * FROM t WHERE a = -'x'",
	  "operator does not exist: - text", "-'x'", 0 },
	{ "SELECT * FROM t WHERE a = 'a' + 1",
	  "operator does not exist: text + integer", "+ 1", 0 },
	{ "SELECT * FROM t WHERE a = 1.5 % 2",
	  "operator does not exist: double precision % integer", "% 2", 0 },
	{ "SELECT * FROM t WHERE a = 1 / 0",
	  "division by zero", "/ 0", 0 },
	{ "SELECT * FROM t WHERE a = 9223372036854775807 + 1",
	  "bigint out of range", "+ 1", 0 },
	{ "SELECT * FROM t WHERE a = 1e300 * 1e300",
	  "value out of range: overflow", "* 1e30", 0 },
	{ "SELECT * FROM t LIMIT -1",
	  "LIMIT must not be negative", "-1", 0 },
	{ "SELECT * FROM t LIMIT a",
	  "argument of LIMIT must not contain variables", "a", 0 },
	{ "SELECT * FROM t LIMIT 1.5",
	  "argument of LIMIT must be type bigint, not type double precision", "1.5", 0 },
	{ "SELECT * FROM t LIMIT 1 ORDER BY a",
	  "syntax error at or near \"ORDER\"", "ORDER ", 0 },
	{ "SELECT count(*) FROM t ORDER BY a",
	  "column \"a\" must appear in the GROUP BY clause or be used in an aggregate function", "a", 0 },
	{ "SELECT * FROM t ORDER a",
	  "syntax error at or near \"a\"", "a", 0 },
	{ "SELECT * FROM t; SELECT * FROM u",
	  "only one statement is allowed: more text at or near \"SELECT\"", "SELECT", 2 },
	{ "SELECT * FROM t WHERE a = 1 junk",
	  "syntax error at or near \"junk\"", "junk", 0 },
	{ "CREATE TABLE t (a BLOB)",
	  "type \"blob\" does not exist", "BLOB)", 0 },
	{ "CREATE TABLE t (a)",
	  "syntax error at end of input", NULL, 0 },
	{ "CREATE TABLE t ()",
	  "table \"t\" has no columns", "t ()", 0 },
	{ "CREATE TABLE t (a INT,)",
	  "syntax error at or near \")\"", ")", 0 },
	{ "CREATE TABLE t (a INT, a TEXT)",
	  "column \"a\" specified more than once", "a TEXT", 0 },
	{ "CREATE TABLE t (a INT, b INT, \"A\" INT, B TEXT)",
	  "column \"b\" specified more than once", "B TEXT", 0 },
	{ "CREATE TABLE t (a INT PRIMARY KEY, b INT PRIMARY KEY)",
	  "multiple primary keys for table \"t\" are not allowed", "PRIMAR", 2 },
	{ "CREATE TABLE t (a INT PRIMARY KEY PRIMARY KEY)",
	  "multiple primary keys for table \"t\" are not allowed", "PRIMAR", 2 },
	{ "CREATE TABLE t (a INT PRIMARY KEY, PRIMARY KEY (a))",
	  "multiple primary keys for table \"t\" are not allowed", "PRIMAR", 2 },
	{ "CREATE TABLE t (a INT, PRIMARY KEY (b))",
	  "column \"b\" named in key does not exist", "b))", 0 },
	{ "CREATE TABLE t (a INT, b INT, PRIMARY KEY (a, b))",
	  "LWC does not support multi-column PRIMARY KEY constraints", "PRIMAR", 0 },
	{ "CREATE TABLE t (a INT NOT NULL NULL)",
	  "conflicting NULL/NOT NULL declarations for column \"a\" of table \"t\"", "NULL)", 0 },
	{ "CREATE TABLE t (a INT PRIMARY KEY NULL)",
	  "conflicting NULL/NOT NULL declarations for column \"a\" of table \"t\"", "NULL)", 0 },
	{ "CREATE TABLE t (a VARCHAR(0))",
	  "length for type varchar must be at least 1", "0))", 0 },
	{ "CREATE TABLE t (a TEXT(99999999999999999999))",
	  "length for type varchar cannot exceed 10485760", "999999", 0 },
	{ "CREATE TABLE t (a VARCHAR(-1))",
	  "syntax error at or near \"-\"", "-1))", 0 },
	{ "CREATE TABLE t (a DOUBLE)",
	  "type \"double\" does not exist", "DOUBLE", 0 },
	{ "CREATE TABLE t (a INT DEFAULT 0)",
	  "LWC does not support DEFAULT", "DEFAUL", 0 },
	{ "CREATE TABLE t (a INT) x",
	  "syntax error at or near \"x\"", "x", 0 },
	{ "CREATE TABLE IF EXISTS t (a INT)",
	  "syntax error at or near \"EXISTS\"", "EXISTS", 0 },
	{ "CREATE VIEW v",
	  "syntax error at end of input", NULL, 0 },
	{ "CREATE INDEX i ON t ()",
	  "syntax error at or near \")\"", ")", 0 },
	{ "CREATE INDEX i t (a)",
	  "syntax error at or near \"t\"", "t (a)", 0 },
	{ "DROP INDEX i",
	  "LWC does not support DROP INDEX", "i", 0 },
	{ "DROP TABLE a, b",
	  "LWC does not support dropping several tables in one statement", "b", 0 },
	{ "DROP TABLE IF t",
	  "syntax error at or near \"t\"", "t", 0 },
	{ "INSERT INTO t VALUES (1, 2), (3)",
	  "VALUES lists must all be the same length", "3)", 0 },
	{ "INSERT INTO t VALUES (1), (2, 3)",
	  "VALUES lists must all be the same length", "2, 3)", 0 },
	{ "INSERT INTO t VALUES (x)",
	  "column \"x\" does not exist", "x)", 0 },
	{ "INSERT INTO t VALUES (1 + \"Col\")",
	  "column \"Col\" does not exist", "\"Col\")", 0 },
	{ "INSERT INTO t VALUES ()",
	  "syntax error at or near \")\"", ")", 0 },
	{ "INSERT INTO t VALUES (1),",
	  "syntax error at end of input", NULL, 0 },
	{ "INSERT INTO t VALUES (1 = 1)",
	  "argument of VALUES must be a value, not a condition", "= 1)", 0 },
	{ "INSERT INTO t SELECT a FROM u",
	  "LWC does not support INSERT ... SELECT other than SELECT * FROM table", "a FROM", 0 },
	{ "INSERT INTO t SELECT * FROM u WHERE a = 1",
	  "LWC does not support INSERT ... SELECT other than SELECT * FROM table", "* FROM", 0 },
	{ "INSERT t VALUES (1)",
	  "syntax error at or near \"t\"", "t VALU", 0 },
	{ "UPDATE t SET a = b = 1",
	  "argument of SET must be a value, not a condition", "= 1", 0 },
	{ "UPDATE t SET a",
	  "syntax error at end of input", NULL, 0 },
	{ "UPDATE t SET (a) = 1",
	  "LWC does not support multiple-column assignment", "a) = 1", 0 },
	{ "UPDATE t WHERE a = 1",
	  "syntax error at or near \"WHERE\"", "WHERE ", 0 },
	{ "DELETE t",
	  "syntax error at or near \"t\"", "t", 0 },
	{ "DELETE FROM t WHERE",
	  "syntax error at end of input", NULL, 0 },
	{ "DELETE FROM t WHERE a IS NOT",
	  "syntax error at end of input", NULL, 0 },
	{ "-- only a comment",
	  "empty statement", "-- onl", 0 },
	{ "  ;; ",
	  "empty statement", "  ;; ", 0 },
	{ "SELECT p.id FROM t p RIGHT JOIN t q ON p.id = q.id",
	  "LWC does not support RIGHT JOIN", "SELECT", 0 },
	{ "SELECT p.id FROM t p FULL JOIN t q ON p.id = q.id",
	  "LWC does not support FULL JOIN", "SELECT", 0 },
	{ "SELECT p.id FROM t p NATURAL JOIN t q",
	  "LWC does not support NATURAL JOIN", "SELECT", 0 },
	{ "SELECT p.id FROM t p LEFT JOIN (t q JOIN u ON q.a = u.a) ON p.id = q.id",
	  "LWC does not support LEFT JOIN of a parenthesized join", "SELECT", 0 },
	{ "SELECT 1 FROM t, t",
	  "table name \"t\" specified more than once", "t", 2 },
	{ "SELECT x.a FROM t, u",
	  "missing FROM-clause entry for table \"x\"", "x.a", 0 },
	{ "SELECT * FROM (SELECT 1)",
	  "subquery in FROM must have an alias", "(SELECT", 0 },
	{ "SELECT * FROM t, LATERAL (SELECT t.a) s",
	  "LWC does not support LATERAL", "(SELECT", 0 },
	{ "SELECT * FROM (SELECT a FROM t WHERE b =) s",
	  "syntax error at or near \")\"", ") s", 0 },
	{ "SELECT * FROM (SELECT a FROM t) s, (SELECT b FROM u) s",
	  "table name \"s\" specified more than once", "(SELECT b", 0 },
	{ "SELECT * FROM (SELECT a FROM t FOR UPDATE) s",
	  "LWC does not support FOR UPDATE and FOR SHARE", "(SELECT a", 0 },
	{ "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM (SELECT a FROM u WHERE u.a = t.a) s)",
	  "LWC does not support correlated subqueries", "t.a)", 0 },
	{ "SELECT * FROM t, (SELECT a FROM u WHERE u.a = t.a) s",
	  "missing FROM-clause entry for table \"t\"", "t.a)", 0 },
	{ "SELECT count(*) FILTER (WHERE max(a) > 1) FROM t",
	  "aggregate functions are not allowed here", "max(a)", 0 },
	{ "SELECT upper(s) FILTER (WHERE a > 1) FROM t",
	  "FILTER specified, but upper is not an aggregate function", "upper", 0 },
	{ "SELECT sum(a) FILTER (WHERE a + 1) FROM t",
	  "argument of FILTER must be type boolean, not a value", "+ 1", 0 },
	{ "SELECT * FROM t WHERE row_number() OVER () > 1",
	  "window functions are not allowed here", "row_number", 0 },
	{ "SELECT a, count(*), rank() OVER (ORDER BY a) FROM t GROUP BY a",
	  "LWC does not support window functions with GROUP BY, HAVING or aggregates", "rank", 0 },
	{ "SELECT sum(a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
	  "LWC does not support window frames (ROWS, RANGE, GROUPS)", "(ORDER", 0 },
	{ "SELECT ntile(2) OVER () FROM t",
	  "LWC does not support the window function ntile()", "ntile", 0 },
	{ "SELECT sum(sum(a) OVER ()) OVER () FROM t",
	  "window functions are not allowed here", "sum(a)", 0 },
	{ "SELECT count(DISTINCT a) OVER () FROM t",
	  "DISTINCT is not implemented for window functions", "count", 0 },
	{ "SELECT rank() OVER w FROM t WINDOW w AS (ORDER BY a)",
	  "LWC does not support WINDOW", "SELECT", 0 },
	{ "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r",
	  "LWC does not support WITH RECURSIVE", "WITH", 0 },
	{ "WITH a AS (SELECT 1), a AS (SELECT 2) SELECT * FROM a",
	  "WITH query name \"a\" specified more than once", "a AS (SELECT 2", 0 },
	{ "WITH w AS (DELETE FROM t RETURNING *) SELECT * FROM w",
	  "LWC does not support data-modifying statements in WITH", "w AS", 0 },
	{ "WITH a AS (SELECT x FROM t WHERE) SELECT 1",
	  "syntax error at or near \")\"", ") SELECT", 0 },
	{ "WITH a AS (SELECT 1 AS v) INSERT INTO t SELECT * FROM a",
	  "LWC does not support WITH", "WITH", 0 },
	{ "WITH a AS (SELECT 1 AS v) UPDATE t SET b = 1",
	  "LWC does not support WITH", "WITH", 0 },
	{ "SELECT a FROM t UNION SELECT a FROM u ORDER BY a + 1",
	  "LWC does not support ORDER BY expressions on UNION, INTERSECT or EXCEPT", "+ 1", 0 },
	{ "SELECT * FROM t, u WHERE t.a > (SELECT max(a) FROM v WHERE v.b = t.b)",
	  "LWC does not support correlated subqueries of joins", "t.b)", 0 },
	{ "SELECT * FROM t WHERE a > ALL (SELECT a FROM u)",
	  "LWC does not support ALL with subqueries", "> ALL", 0 },
	{ "SELECT * FROM t WHERE a IN (SELECT a FROM u WHERE a LIKE 'x' ESCAPE '!')",
	  "LWC does not support LIKE ... ESCAPE", "LIKE", 0 },
	{ "SELECT DISTINCT ON (a) a FROM t",
	  "LWC does not support DISTINCT ON", "SELECT", 0 },
	{ "ALTER TABLE t ADD COLUMN b INT",
	  "LWC does not support ALTER TABLE", "ALTER ", 0 },
	{ "BEGIN",
	  "LWC does not support transactions (BEGIN, COMMIT, ROLLBACK)", "BEGIN", 0 },
	{ "CREATE VIEW v AS SELECT 1",
	  "LWC does not support CREATE VIEW", "CREATE", 0 },
	{ "SELECT a FROM t FOR UPDATE",
	  "LWC does not support FOR UPDATE and FOR SHARE", "SELECT", 0 },
	{ "SELECT now()",
	  "LWC does not support the function now()", "now()", 0 },
	{ "INSERT INTO t VALUES (1) RETURNING a",
	  "LWC does not support RETURNING", "a", 0 },
	{ "UPDATE t SET a = 1 FROM u",
	  "LWC does not support UPDATE ... FROM", "u", 0 },
	{ "SELECT sum(a) OVER () FROM t GROUP BY a",
	  "LWC does not support window functions with GROUP BY, HAVING or aggregates", "sum(a)", 0 },
	{ "TRUNCATE t",
	  "LWC does not support TRUNCATE", "TRUNCA", 0 },
	{ "SELECT a FROM t WHERE a SIMILAR TO 'x'",
	  "LWC does not support SIMILAR TO", "SIMILA", 0 },
	{ "CREATE TABLE t (a INT DEFAULT 0)",
	  "LWC does not support DEFAULT", "DEFAUL", 0 },
	{ "CREATE TABLE t (a INT CHECK (a > 0))",
	  "LWC does not support CHECK constraints", "CHECK ", 0 },
	{ "DROP INDEX i",
	  "LWC does not support DROP INDEX", "i", 0 },
	{ "SELECT a FROM t GROUP BY ROLLUP (a)",
	  "LWC does not support GROUPING SETS, ROLLUP and CUBE", "SELECT", 0 },
	{ "EXPLAIN SELECT 1",
	  "LWC does not support EXPLAIN", "EXPLAI", 0 },
	{ "SELECT a IS DISTINCT FROM 1 FROM t",
	  "LWC does not support IS [NOT] DISTINCT FROM", "IS DIS", 0 },
};

static void test_errors(void **state)
{
	size_t i;
	struct sql_stmt *st;
	char *sql;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_fails_at(bad[i].sql, bad[i].msg, bad[i].at, bad[i].nth ? bad[i].nth : 1);
	parse_fails_n("", 0, "empty statement", 0);
	parse_fails_n(NULL, 0, "empty statement", 0);

	/* a NUL byte is not SQL, in or out of a string */
	parse_fails_n("SELECT * FROM t\0", 16, "invalid byte sequence for encoding \"UTF8\": 0x00", 15);
	parse_fails_n("SELECT * FROM t WHERE a = 'x\0y'", 31,
		      "invalid byte sequence for encoding \"UTF8\": 0x00", 28);
	/* names: PostgreSQL truncates them to 63 bytes, never inside a character */
	sql = repeat3("SELECT * FROM ", "a", 64, "", "", 0, "");
	st = parse_ok(sql);
	assert_int_equal(strlen(st->table), 63);
	sql_free(st);
	free(sql);
	sql = repeat3("SELECT * FROM \"", "\xc3\xa9", 32, "\"", "", 0, "");
	st = parse_ok(sql);
	assert_int_equal(strlen(st->table), 62);
	sql_free(st);
	free(sql);
	/* a message never quotes more than a bounded prefix of the input */
	sql = repeat3("SELECT * FROM t WHERE a = '", "x", 5000, "", "", 0, "");
	parse_fails_n(sql, strlen(sql), "unterminated quoted string at or near "
		      "\"'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\"", 26);
	free(sql);
}

static void test_error_buffers(void **state)
{
	struct sql_stmt *st = NULL;
	char small[8];
	int pos;

	(void)state;
	/* no message buffer, no position pointer: still an error code */
	assert_int_equal(sql_parse("SELECT (", 8, &st, NULL, 0, NULL), LWC_ERR_ARG);
	assert_null(st);
	/* a short buffer gets a terminated prefix */
	assert_int_equal(sql_parse("SELECT (", 8, &st, small, sizeof(small), &pos), LWC_ERR_ARG);
	assert_string_equal(small, "syntax ");
	assert_int_equal(pos, 8);
	/* the text need not be NUL-terminated: only len bytes are read */
	assert_int_equal(sql_parse("DROP TABLE abcXYZ", 14, &st, NULL, 0, NULL), LWC_OK);
	assert_string_equal(st->table, "abc");
	sql_free(st);
	sql_free(NULL);
}

static void test_conformance_sample(void **state)
{
	size_t i, n = sizeof(conformance_sql) / sizeof(conformance_sql[0]);
	int kinds[8] = { 0 };

	(void)state;
	assert_int_equal(n, 200);
	for (i = 0; i < n; i++) {
		struct sql_stmt *st = parse_ok(conformance_sql[i]);

		kinds[st->kind]++;
		sql_free(st);
	}
	for (i = SQL_CREATE_TABLE; i <= SQL_DELETE; i++)
		assert_true(kinds[i] > 0);
}

/* ---------------------------------------------------------------- scripts */

static void test_next_statement(void **state)
{
	static const struct {
		const char *text;
		const char *end;          /* the text up to the split; NULL: none */
	} cases[] = {
		{ "SELECT 1; SELECT 2;", "SELECT 1;" },
		{ "SELECT ';'; x", "SELECT ';';" },
		{ "SELECT 'it''s;'; x", "SELECT 'it''s;';" },
		{ "SELECT '';", "SELECT '';" },
		{ "SELECT '''';", "SELECT '''';" },
		{ "SELECT \"a;b\" FROM t;", "SELECT \"a;b\" FROM t;" },
		{ "SELECT \"a\"\";\" FROM t; z", "SELECT \"a\"\";\" FROM t;" },
		{ "-- c;\nSELECT 1;", "-- c;\nSELECT 1;" },
		{ "-- c;\rSELECT 1;", "-- c;\rSELECT 1;" },
		{ "SELECT 1 -- ;\n;", "SELECT 1 -- ;\n;" },
		{ "SELECT '--'; x", "SELECT '--';" },
		{ "SELECT 1 - -1;", "SELECT 1 - -1;" },
		{ ";", ";" },
		{ "", NULL },
		{ "SELECT 1", NULL },
		{ "SELECT 'abc", NULL },
		{ "SELECT 'abc;", NULL },
		{ "SELECT \"abc;", NULL },
		{ "SELECT 1 -- ;", NULL },
		{ "SELECT 'a''", NULL },
		{ "SELECT 'a'';' ", NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t got = sql_next_statement(cases[i].text, strlen(cases[i].text));
		size_t want = cases[i].end ? strlen(cases[i].end) : 0;

		if (cases[i].end != NULL)
			assert_memory_equal(cases[i].text, cases[i].end, want);
		if (got != want)
			fail_msg("sql_next_statement(%s) = %zu, expected %zu", cases[i].text, got, want);
	}
	/* only len bytes are looked at */
	assert_int_equal(sql_next_statement("SELECT 1; x", 8), 0);
	assert_int_equal(sql_next_statement("SELECT 1; x", 9), 9);
}

static void test_script(void **state)
{
	const char *script =
		"-- a script; with comments\n"
		"CREATE TABLE t (a INT, s TEXT); -- trailing ; comment\n"
		"INSERT INTO t VALUES (1, 'x;y'), (2, '--');\n"
		"\n"
		"SELECT * FROM \"t\" WHERE s = ';' ;;\n"
		"DELETE FROM t\n"
		"   WHERE a = 2;   \n"
		"  -- end\n";
	static const enum sql_skind kinds[] = { SQL_CREATE_TABLE, SQL_INSERT, SQL_SELECT, SQL_DELETE };
	size_t off = 0, len = strlen(script), k, nk = 0;

	(void)state;
	while ((k = sql_next_statement(script + off, len - off)) > 0) {
		struct sql_stmt *st;
		char err[256];
		int pos;

		if (!sql_is_blank(script + off, k)) {
			assert_int_equal(sql_parse(script + off, k, &st, err, sizeof(err), &pos), LWC_OK);
			assert_true(nk < 4);
			assert_int_equal(st->kind, kinds[nk]);
			nk++;
			sql_free(st);
		}
		off += k;
	}
	assert_int_equal(nk, 4);
	assert_true(sql_is_blank(script + off, len - off));
	assert_true(sql_is_blank("", 0));
	assert_true(sql_is_blank(" ;\n-- x\n ; ", 11));
	assert_false(sql_is_blank(" ; x", 4));
	assert_false(sql_is_blank("'';", 3));
}

/* ---------------------------------------------------------------- binding */

static void test_bind(void **state)
{
	struct sql_stmt *st;
	char err[256];
	int pos;

	(void)state;
	st = bind_ok("SELECT big, a FROM t WHERE (s = 'x' OR n IS NULL) AND f > -1 ORDER BY v DESC, pk");
	assert_int_equal(st->proj_index[0], C_BIG);
	assert_int_equal(st->proj_index[1], C_A);
	assert_int_equal(st->order[0].col_index, C_V);
	assert_int_equal(st->order[1].col_index, C_PK);
	assert_int_equal(st->where->a->a->a->col_index, C_S);
	assert_int_equal(st->where->a->b->a->col_index, C_N);
	assert_int_equal(st->where->b->a->col_index, C_F);
	/* binding twice is harmless */
	assert_int_equal(sql_bind(st, &test_schema, err, sizeof(err), &pos), LWC_OK);
	sql_free(st);

	bind_fails("SELECT x FROM t", LWC_ERR_SCHEMA, "column \"x\" does not exist", "x", 1);
	bind_fails("SELECT * FROM t WHERE a = 1 OR (b IN (1, zz))", LWC_ERR_SCHEMA,
		   "column \"zz\" does not exist", "zz", 1);
	bind_fails("SELECT * FROM t WHERE A = 1 AND \"A\" = 1", LWC_ERR_SCHEMA,
		   "column \"A\" does not exist", "\"A\"", 1);
	bind_fails("SELECT * FROM t ORDER BY a, q", LWC_ERR_SCHEMA, "column \"q\" does not exist", "q", 1);
	bind_fails("DELETE FROM t WHERE q BETWEEN 1 AND 2", LWC_ERR_SCHEMA,
		   "column \"q\" does not exist", "q", 1);
	bind_fails("SELECT count(*) FROM t WHERE a + q > 1", LWC_ERR_SCHEMA,
		   "column \"q\" does not exist", "q", 1);
	bind_fails("CREATE INDEX i ON t (a, zz DESC)", LWC_ERR_SCHEMA, "column \"zz\" does not exist",
		   "zz", 1);
	st = bind_ok("CREATE UNIQUE INDEX i ON t (v, a DESC)");
	assert_int_equal(st->index_col_index[0], C_V);
	assert_int_equal(st->index_col_index[1], C_A);
	sql_free(st);

	/* UPDATE: unknown target, values reading the row, rightmost wins */
	bind_fails("UPDATE t1 SET z='foo' WHERE x>0", LWC_ERR_SCHEMA,
		   "column \"z\" of relation \"t\" does not exist", "z", 1);
	bind_fails("UPDATE t SET a = zz + 1", LWC_ERR_SCHEMA, "column \"zz\" does not exist", "zz", 1);
	bind_fails("UPDATE t SET a = 1 WHERE zz = 1", LWC_ERR_SCHEMA, "column \"zz\" does not exist",
		   "zz", 1);
	st = bind_ok("UPDATE t SET a=3, b=b+1, a=4, a=5");
	assert_int_equal(st->nsets, 2);
	assert_int_equal(st->sets[0].col_index, C_B);
	assert_int_equal(st->sets[0].value->a->col_index, C_B);
	assert_int_equal(st->sets[1].col_index, C_A);
	assert_int_equal(st->sets[1].value->lit.i, 5);
	sql_free(st);

	/* statements without a table */
	st = parse_ok("SELECT * FROM t");
	assert_int_equal(sql_bind(st, NULL, err, sizeof(err), &pos), LWC_ERR_ARG);
	assert_int_equal(pos, -1);
	sql_free(st);
	st = parse_ok("CREATE TABLE u (a INT PRIMARY KEY, b TEXT)");
	assert_int_equal(sql_bind(st, NULL, err, sizeof(err), &pos), LWC_OK);
	/* the same checks as the parser's, on a statement changed afterwards */
	st->cols[1].primary_key = 1;
	assert_int_equal(sql_bind(st, NULL, err, sizeof(err), &pos), LWC_ERR_SCHEMA);
	assert_string_equal(err, "multiple primary keys for table \"u\" are not allowed");
	assert_int_equal(pos, 35);
	st->cols[1].primary_key = 0;
	strcpy(st->cols[1].name, "a");
	assert_int_equal(sql_bind(st, NULL, err, sizeof(err), &pos), LWC_ERR_SCHEMA);
	assert_string_equal(err, "column \"a\" specified more than once");
	assert_int_equal(pos, 35);
	sql_free(st);
	st = parse_ok("DROP TABLE t");
	assert_int_equal(sql_bind(st, NULL, NULL, 0, NULL), LWC_OK);
	sql_free(st);
}

static void test_bind_insert(void **state)
{
	struct sql_stmt *st;
	size_t i;

	(void)state;
	st = bind_ok("INSERT INTO t VALUES (1, 2, 3, NULL, 2.5, 'x', 'y', 9)");
	assert_int_equal(st->ninsert_map, NCOLS);
	for (i = 0; i < NCOLS; i++)
		assert_int_equal(st->insert_map[i], (int)i);
	sql_free(st);
	/* shorter than the table: the rest is NULL (PostgreSQL) */
	st = bind_ok("INSERT INTO t VALUES (1, 2)");
	assert_int_equal(st->ninsert_map, 2);
	sql_free(st);
	st = bind_ok("INSERT INTO t (s, pk, \"big\") VALUES ('a', 1, 2), ('b', 3, 4)");
	assert_int_equal(st->ninsert_map, 3);
	assert_int_equal(st->insert_map[0], C_S);
	assert_int_equal(st->insert_map[1], C_PK);
	assert_int_equal(st->insert_map[2], C_BIG);
	sql_free(st);
	st = bind_ok("INSERT INTO t SELECT * FROM u");
	assert_int_equal(st->ninsert_map, NCOLS);
	sql_free(st);
	st = bind_ok("INSERT INTO t (b, a) SELECT * FROM u");
	assert_int_equal(st->ninsert_map, 2);
	assert_int_equal(st->insert_map[0], C_B);
	assert_int_equal(st->insert_map[1], C_A);
	sql_free(st);

	bind_fails("INSERT INTO t VALUES (1, 2, 3, 4, 5, 6, 7, 8, 9)", LWC_ERR_SCHEMA,
		   "INSERT has more expressions than target columns", "9", 1);
	bind_fails("INSERT INTO t (a, b) VALUES (1, 2, 3)", LWC_ERR_SCHEMA,
		   "INSERT has more expressions than target columns", "3", 1);
	bind_fails("INSERT INTO t (a, b) VALUES (1)", LWC_ERR_SCHEMA,
		   "INSERT has more target columns than expressions", "b", 1);
	bind_fails("INSERT INTO t (a, zz) VALUES (1, 2)", LWC_ERR_SCHEMA,
		   "column \"zz\" of relation \"t\" does not exist", "zz", 1);
	bind_fails("INSERT INTO t (a, b, A) VALUES (1, 2, 3)", LWC_ERR_SCHEMA,
		   "column \"a\" specified more than once", "A", 1);
}

/* ---------------------------------------------------------------- evaluation */

#define TV_T SQL_TRUE
#define TV_F SQL_FALSE
#define TV_U SQL_UNKNOWN

static void test_truth_tables(void **state)
{
	/* atoms on the default row: TRUE, FALSE, UNKNOWN */
	static const char *const atom[3] = { "a = 2", "a = 1", "n = 1" };
	static const enum sql_tv val[3] = { TV_F, TV_T, TV_U };
	static const enum sql_tv and_tab[3][3] = {
		{ TV_F, TV_F, TV_F }, { TV_F, TV_T, TV_U }, { TV_F, TV_U, TV_U } };
	static const enum sql_tv or_tab[3][3] = {
		{ TV_F, TV_T, TV_U }, { TV_T, TV_T, TV_T }, { TV_U, TV_T, TV_U } };
	static const enum sql_tv not_tab[3] = { TV_T, TV_F, TV_U };
	char cond[128];
	int i, j;

	(void)state;
	for (i = 0; i < 3; i++) {
		ASSERT_TV(atom[i], val[i]);
		snprintf(cond, sizeof(cond), "NOT %s", atom[i]);
		ASSERT_TV(cond, not_tab[i]);
		snprintf(cond, sizeof(cond), "NOT (NOT %s)", atom[i]);
		ASSERT_TV(cond, val[i]);
		for (j = 0; j < 3; j++) {
			snprintf(cond, sizeof(cond), "%s AND %s", atom[i], atom[j]);
			ASSERT_TV(cond, and_tab[i][j]);
			snprintf(cond, sizeof(cond), "%s OR %s", atom[i], atom[j]);
			ASSERT_TV(cond, or_tab[i][j]);
			snprintf(cond, sizeof(cond), "NOT (%s AND %s)", atom[i], atom[j]);
			ASSERT_TV(cond, not_tab[and_tab[i][j] == TV_T ? 1 : and_tab[i][j] == TV_F ? 0 : 2]);
		}
	}
	/* every comparison with NULL is UNKNOWN, both ways round */
	ASSERT_TV("n = n", TV_U);
	ASSERT_TV("n <> 1", TV_U);
	ASSERT_TV("1 < n", TV_U);
	ASSERT_TV("a >= NULL", TV_U);
	ASSERT_TV("NULL = NULL", TV_U);
	ASSERT_TV("s = NULL", TV_U);
	ASSERT_TV("n + 1 = 1", TV_U);
	ASSERT_TV("-n = 1", TV_U);
	/* long chains: UNKNOWN unless decided */
	ASSERT_TV("n = 1 OR n = 2 OR n = 3 OR a = 1", TV_T);
	ASSERT_TV("n = 1 OR n = 2 OR n = 3 OR a = 2", TV_U);
	ASSERT_TV("n = 1 AND n = 2 AND n = 3 AND a = 2", TV_F);
	ASSERT_TV("n = 1 AND n = 2 AND n = 3 AND a = 1", TV_U);
}

static void test_in_between_isnull(void **state)
{
	(void)state;
	/* IN with NULLs in the list: TRUE on a match, else UNKNOWN */
	ASSERT_TV("a IN (1, NULL)", TV_T);
	ASSERT_TV("a IN (NULL, 1)", TV_T);
	ASSERT_TV("b IN (1, NULL)", TV_U);
	ASSERT_TV("b IN (NULL)", TV_U);
	ASSERT_TV("b IN (1, 2)", TV_F);
	ASSERT_TV("b IN (0)", TV_T);
	ASSERT_TV("a NOT IN (1, NULL)", TV_F);
	ASSERT_TV("b NOT IN (1, NULL)", TV_U);
	ASSERT_TV("b NOT IN (1, 2)", TV_T);
	ASSERT_TV("b NOT IN (0, 2)", TV_F);
	/* a NULL on the left: UNKNOWN whatever the list */
	ASSERT_TV("n IN (1, 2)", TV_U);
	ASSERT_TV("n IN (NULL)", TV_U);
	ASSERT_TV("n NOT IN (1)", TV_U);
	/* numbers of both kinds */
	ASSERT_TV("a IN (1.5, -2)", TV_F);
	ASSERT_TV("a IN (1.5, 1.0)", TV_T);
	ASSERT_TV("f IN (2, 2.5)", TV_T);
	ASSERT_TV("-a IN (-1)", TV_T);
	ASSERT_TV("a IN (b + 1)", TV_T);
	ASSERT_TV("s IN ('x', 'abc')", TV_T);
	ASSERT_TV("v IN ('')", TV_T);
	ASSERT_TV("s IN ('')", TV_F);

	/* BETWEEN a AND b = (x >= a AND x <= b) */
	ASSERT_TV("a BETWEEN 0 AND 2", TV_T);
	ASSERT_TV("a BETWEEN 1 AND 1", TV_T);
	ASSERT_TV("a BETWEEN 2 AND 0", TV_F);
	ASSERT_TV("a BETWEEN -5 AND 0.5", TV_F);
	ASSERT_TV("a BETWEEN NULL AND 0", TV_F);
	ASSERT_TV("a BETWEEN NULL AND 2", TV_U);
	ASSERT_TV("a BETWEEN 2 AND NULL", TV_F);
	ASSERT_TV("a BETWEEN 0 AND NULL", TV_U);
	ASSERT_TV("n BETWEEN 0 AND 2", TV_U);
	ASSERT_TV("a NOT BETWEEN 0 AND 2", TV_F);
	ASSERT_TV("a NOT BETWEEN 2 AND 3", TV_T);
	ASSERT_TV("a NOT BETWEEN NULL AND 0", TV_T);
	ASSERT_TV("a NOT BETWEEN NULL AND 2", TV_U);
	ASSERT_TV("f BETWEEN 2 AND 3", TV_T);
	ASSERT_TV("f BETWEEN 2.5 AND 2.5", TV_T);
	ASSERT_TV("s BETWEEN 'abb' AND 'abd'", TV_T);
	ASSERT_TV("s BETWEEN 'abc' AND 'abc'", TV_T);
	ASSERT_TV("s BETWEEN 'abca' AND 'b'", TV_F);

	/* IS [NOT] NULL is never UNKNOWN */
	ASSERT_TV("n IS NULL", TV_T);
	ASSERT_TV("n IS NOT NULL", TV_F);
	ASSERT_TV("a IS NULL", TV_F);
	ASSERT_TV("a IS NOT NULL", TV_T);
	ASSERT_TV("v IS NULL", TV_F);
	ASSERT_TV("NOT n IS NULL", TV_F);
	ASSERT_TV("n + 1 IS NULL", TV_T);
	ASSERT_TV("NULL IS NULL", TV_T);
}

static void test_compare_values(void **state)
{
	struct sql_value row[NCOLS];
	char err[256];
	int had;

	(void)state;
	ASSERT_TV("a < 1.5", TV_T);
	ASSERT_TV("a > 0.999", TV_T);
	ASSERT_TV("a = 1.0", TV_T);
	ASSERT_TV("1.0 = a", TV_T);
	ASSERT_TV("a <> 1", TV_F);
	ASSERT_TV("f = 2.5", TV_T);
	ASSERT_TV("f > 2", TV_T);
	ASSERT_TV("f <= 2", TV_F);
	ASSERT_TV("s = 'abc'", TV_T);
	ASSERT_TV("s > 'ab'", TV_T);
	ASSERT_TV("s < 'abd'", TV_T);
	ASSERT_TV("s < 'abcd'", TV_T);
	ASSERT_TV("s <> 'abc'", TV_F);
	ASSERT_TV("s >= 'ABC'", TV_T);
	ASSERT_TV("v = ''", TV_T);
	ASSERT_TV("v < 'a'", TV_T);
	ASSERT_TV("s = ''", TV_F);
	/* 2^63 - 1 against doubles near 2^63 */
	ASSERT_TV("big = 9223372036854775807", TV_T);
	ASSERT_TV("big > 9.2e18", TV_T);
	ASSERT_TV("big < 9223372036854775808", TV_T);
	ASSERT_TV("big = 9223372036854775808", TV_F);
	ASSERT_TV("big < 9.3e18", TV_T);
	ASSERT_TV("big <> 9223372036854775807.0", TV_T);
	ASSERT_TV("-big - 1 = -9223372036854775808", TV_T);
	ASSERT_TV("-big - 1 = -9223372036854775808.0", TV_T);
	ASSERT_TV("-big - 1 > -9223372036854777856.0", TV_T);
	/* arithmetic on the row */
	ASSERT_TV("a + 1 = 2", TV_T);
	ASSERT_TV("a * 3 - b = 3", TV_T);
	ASSERT_TV("a / 2 = 0", TV_T);
	ASSERT_TV("a / 2.0 = 0.5", TV_T);
	ASSERT_TV("-a = -1", TV_T);
	ASSERT_TV("f * 2 = 5", TV_T);
	ASSERT_TV("big - 1 < big", TV_T);

	/* TEXT against a number, arithmetic errors: UNKNOWN, or an error when
	 * checked */
	default_row(row);
	assert_int_equal(tv_row("s = 1", row, &had, err, sizeof(err)), TV_U);
	assert_true(had);
	assert_string_equal(err, "operator does not exist: text = integer");
	assert_int_equal(tv_row("1.5 < s", row, &had, err, sizeof(err)), TV_U);
	assert_string_equal(err, "operator does not exist: double precision < text");
	assert_int_equal(tv_row("a IN ('1', 2)", row, &had, err, sizeof(err)), TV_U);
	assert_string_equal(err, "operator does not exist: integer = text");
	assert_int_equal(tv_row("a IN (1, '1')", row, &had, err, sizeof(err)), TV_T);
	assert_false(had);
	assert_int_equal(tv_row("a / b = 1", row, &had, err, sizeof(err)), TV_U);
	assert_string_equal(err, "division by zero");
	assert_int_equal(tv_row("a % b = 1", row, &had, err, sizeof(err)), TV_U);
	assert_string_equal(err, "division by zero");
	assert_int_equal(tv_row("big + 1 > 0", row, &had, err, sizeof(err)), TV_U);
	assert_string_equal(err, "bigint out of range");
	assert_int_equal(tv_row("s + 1 > 0", row, &had, err, sizeof(err)), TV_U);
	assert_string_equal(err, "operator does not exist: text + integer");
	assert_int_equal(tv_row("a / b = 1 OR a = 1", row, &had, err, sizeof(err)), TV_T);
	assert_true(had);
	/* FALSE AND ... is decided before the error */
	assert_int_equal(tv_row("a = 2 AND a / b = 1", row, &had, err, sizeof(err)), TV_F);
	assert_false(had);
	/* NULL with a text: still UNKNOWN, no error (no comparison happens) */
	row[C_S] = N();
	assert_int_equal(tv_row("s = 1", row, &had, err, sizeof(err)), TV_U);
	assert_false(had);

	/* the empty WHERE is TRUE */
	assert_int_equal(sql_eval(NULL, row), SQL_TRUE);
}

static void test_eval_value(void **state)
{
	struct sql_value row[NCOLS], out;
	struct sql_stmt *st;
	char err[128];

	(void)state;
	default_row(row);
	st = bind_ok("UPDATE t SET a = a + 2, b = -f, n = 'lit', s = s, f = a * 1.5, v = n * 2");
	assert_int_equal(sql_eval_value(st->sets[0].value, row, &out, err, sizeof(err)), LWC_OK);
	assert_true(out.type == SQL_INT && out.i == 3);
	assert_int_equal(sql_eval_value(st->sets[1].value, row, &out, err, sizeof(err)), LWC_OK);
	assert_true(out.type == SQL_FLOAT && out.f == -2.5);
	/* a literal needs no row */
	assert_int_equal(sql_eval_value(st->sets[2].value, NULL, &out, err, sizeof(err)), LWC_OK);
	assert_true(out.type == SQL_TEXT && strcmp(out.s, "lit") == 0 && out.len == 3);
	assert_int_equal(sql_eval_value(st->sets[3].value, row, &out, err, sizeof(err)), LWC_OK);
	assert_true(out.type == SQL_TEXT && out.s == row[C_S].s);
	assert_int_equal(sql_eval_value(st->sets[4].value, row, &out, err, sizeof(err)), LWC_OK);
	assert_true(out.type == SQL_FLOAT && out.f == 1.5);
	assert_int_equal(sql_eval_value(st->sets[5].value, row, &out, err, sizeof(err)), LWC_OK);
	assert_int_equal(out.type, SQL_NULL);
	/* a column without a row */
	assert_int_equal(sql_eval_value(st->sets[0].value, NULL, &out, err, sizeof(err)), LWC_ERR_ARG);
	assert_string_equal(err, "column \"a\" is not bound");
	/* a condition as a value is a boolean (1 / 0, NULL for UNKNOWN); a
	 * value is not a condition */
	sql_free(st);
	st = bind_ok("SELECT * FROM t WHERE a = 1");
	assert_int_equal(sql_eval_value(st->where, row, &out, err, sizeof(err)), LWC_OK);
	assert_true(out.type == SQL_INT && out.i == 1 && out.boolean);
	assert_int_equal(sql_eval(st->where->a, row), SQL_UNKNOWN);
	sql_free(st);
	row[C_BIG] = I(INT64_MIN);
	st = bind_ok("UPDATE t SET big = -big, a = big * -1, b = big / -1, n = big % -1");
	assert_int_equal(sql_eval_value(st->sets[0].value, row, &out, err, sizeof(err)), LWC_ERR_ARG);
	assert_string_equal(err, "bigint out of range");
	assert_int_equal(sql_eval_value(st->sets[1].value, row, &out, err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(sql_eval_value(st->sets[2].value, row, &out, err, sizeof(err)), LWC_ERR_ARG);
	assert_string_equal(err, "bigint out of range");
	assert_int_equal(sql_eval_value(st->sets[3].value, row, &out, err, sizeof(err)), LWC_OK);
	assert_true(out.type == SQL_INT && out.i == 0);
	sql_free(st);
}

/* SQLite's empty IN list: IN () is an empty subquery (false for every
 * value, NULL included), NOT IN () the NOT of one; only tokens are read
 * (a string or comment holding "IN ()" is not touched) and every location
 * is the text's as written. */
static void test_empty_in(void **state)
{
	struct sql_stmt *st;
	const char *sql;

	(void)state;
	sql = "SELECT * FROM t WHERE a IN ()";
	st = parse_ok(sql);
	assert_int_equal(st->where->kind, SQL_E_INSUB);
	assert_int_equal(st->where->pos, at_nth(sql, "IN", 1));
	assert_non_null(st->where->sub);
	assert_non_null(st->where->sub->where);     /* SELECT NULL WHERE false */
	assert_int_equal(st->where->sub->where->kind, SQL_E_CMP);
	assert_int_equal(st->where->sub->where->b->lit.i, 0);
	sql_free(st);

	sql = "SELECT * FROM t WHERE a NOT IN ( /* none */ ) AND s = 'IN ()' AND b IN ( ) -- IN ()";
	st = parse_ok(sql);
	assert_int_equal(st->where->kind, SQL_E_AND);
	{
		const struct sql_expr *t3[3];
		size_t n = 0;

		leaves(st->where, SQL_E_AND, t3, &n, 3);
		assert_int_equal(n, 3);
		assert_int_equal(t3[0]->kind, SQL_E_NOT);
		assert_int_equal(t3[0]->a->kind, SQL_E_INSUB);
		assert_int_equal(t3[0]->a->pos, at_nth(sql, "NOT IN", 1));
		assert_int_equal(t3[1]->kind, SQL_E_CMP);
		assert_int_equal(t3[1]->pos, at_nth(sql, "= 'IN", 1));
		assert_string_equal(t3[1]->b->lit.s, "IN ()");
		assert_int_equal(t3[1]->b->pos, at_nth(sql, "'IN ()'", 1));
		assert_int_equal(t3[2]->kind, SQL_E_INSUB);
		assert_int_equal(t3[2]->pos, at_nth(sql, "IN", 3));
	}
	sql_free(st);

	/* positions after the insertions are the text's as written */
	bind_fails("SELECT a IN (), b NOT IN () FROM t WHERE zz = 1", LWC_ERR_SCHEMA,
		   "column \"zz\" does not exist", "zz", 1);
	bind_fails("SELECT * FROM t WHERE a IN () OR (b IN () AND qq IN ())", LWC_ERR_SCHEMA,
		   "column \"qq\" does not exist", "qq", 1);
	/* no "IN ( )": the error stands untouched */
	parse_fails_at("SELECT * FROM t WHERE a IN (1,)", "syntax error at or near \")\"",
		       ")", 1);
	parse_fails_at("SELECT * FROM t WHERE a = ()", "syntax error at or near \")\"", ")", 1);
}

/* A constant that fails (division by zero, out of range) is PostgreSQL's
 * error at parse time, except where it is evaluated only when needed: a
 * CASE branch (not its operand nor first WHEN), a later COALESCE argument,
 * NULLIF's second.  There it fails only if evaluated. */
static void test_lazy_constants(void **state)
{
	struct sql_value row[NCOLS], out;
	struct sql_stmt *st;
	char err[128];

	(void)state;
	parse_fails_at("SELECT CASE 1 / 0 WHEN 1 THEN a END FROM t", "division by zero", "/ 0", 1);
	parse_fails_at("SELECT CASE WHEN 1 / 0 = a THEN a END FROM t", "division by zero", "/ 0", 1);
	parse_fails_at("SELECT COALESCE(1 / 0, a) FROM t", "division by zero", "/ 0", 1);
	parse_fails_at("SELECT NULLIF(- 2147483647 - 2, a) FROM t", "integer out of range", "- 2,", 1);

	default_row(row);
	st = bind_ok("SELECT CASE WHEN a = 1 THEN 0 WHEN 1 / 0 = 1 THEN 1 ELSE 2147483647 + 1 END, "
		     "CASE a WHEN 2 THEN 1 / 0 END, COALESCE(a, 1 / 0), NULLIF(n, 1 / 0), "
		     "NULLIF(a, 1 / 0), CASE WHEN a = 2 THEN 0 ELSE 2147483647 + 1 END FROM t");
	assert_int_equal(sql_eval_value(st->q->targets[0].e, row, &out, err, sizeof(err)), LWC_OK);
	assert_true(out.type == SQL_INT && out.i == 0);
	assert_int_equal(sql_eval_value(st->q->targets[1].e, row, &out, err, sizeof(err)), LWC_OK);
	assert_int_equal(out.type, SQL_NULL);
	assert_int_equal(sql_eval_value(st->q->targets[2].e, row, &out, err, sizeof(err)), LWC_OK);
	assert_true(out.type == SQL_INT && out.i == 1);
	assert_int_equal(sql_eval_value(st->q->targets[3].e, row, &out, err, sizeof(err)), LWC_OK);
	assert_int_equal(out.type, SQL_NULL);
	assert_int_equal(sql_eval_value(st->q->targets[4].e, row, &out, err, sizeof(err)),
			 LWC_ERR_ARG);
	assert_string_equal(err, "division by zero");
	assert_int_equal(sql_eval_value(st->q->targets[5].e, row, &out, err, sizeof(err)),
			 LWC_ERR_ARG);
	assert_string_equal(err, "integer out of range");
	row[C_A] = I(2);
	assert_int_equal(sql_eval_value(st->q->targets[1].e, row, &out, err, sizeof(err)),
			 LWC_ERR_ARG);
	assert_string_equal(err, "division by zero");
	row[C_A] = N();
	assert_int_equal(sql_eval_value(st->q->targets[2].e, row, &out, err, sizeof(err)),
			 LWC_ERR_ARG);
	assert_string_equal(err, "division by zero");
	sql_free(st);
}

/* Subqueries in FROM and WITH queries: each becomes a FROM item with its
 * own statement; a WITH query's body sees the WITH queries before it, a
 * reference parses it again, and a name that is no WITH query's is a
 * table. */
static void test_derived(void **state)
{
	struct sql_stmt *st;
	const struct sql_query *q;

	(void)state;
	st = parse_ok("SELECT d.k, count(*) FROM (SELECT a, b FROM t WHERE a > 1) AS d(k) "
		      "JOIN u ON u.x = d.k GROUP BY d.k");
	q = st->q;
	assert_non_null(q);
	assert_int_equal(q->nfroms, 2);
	assert_non_null(q->froms[0].sub);
	assert_string_equal(q->froms[0].table, "d");
	assert_string_equal(q->froms[0].alias, "d");
	assert_int_equal(q->froms[0].ncolnames, 1);
	assert_string_equal(q->froms[0].colnames[0], "k");
	assert_string_equal(q->froms[0].sub->table, "t");
	assert_non_null(q->froms[0].sub->where);
	assert_null(q->froms[1].sub);
	assert_string_equal(q->froms[1].table, "u");
	sql_free(st);

	/* one FROM item that is a WITH query: a subquery of one item */
	st = parse_ok("WITH c(x, y) AS (SELECT a, b FROM t), d AS (SELECT x FROM c) "
		      "SELECT * FROM d");
	q = st->q;
	assert_int_equal(q->nfroms, 1);
	assert_string_equal(q->froms[0].table, "d");
	assert_string_equal(q->froms[0].alias, "");
	assert_non_null(q->froms[0].sub);
	/* d's body reads c, itself a WITH query with its column aliases */
	assert_non_null(q->froms[0].sub->q);
	assert_int_equal(q->froms[0].sub->q->nfroms, 1);
	assert_non_null(q->froms[0].sub->q->froms[0].sub);
	assert_string_equal(q->froms[0].sub->q->froms[0].table, "c");
	assert_int_equal(q->froms[0].sub->q->froms[0].ncolnames, 2);
	assert_string_equal(q->froms[0].sub->q->froms[0].colnames[1], "y");
	sql_free(st);

	/* a WITH query read twice: two subqueries; a table of another name */
	st = parse_ok("WITH c AS (SELECT a FROM t) SELECT * FROM c p, c q, u WHERE p.a = q.a");
	q = st->q;
	assert_int_equal(q->nfroms, 3);
	assert_non_null(q->froms[0].sub);
	assert_non_null(q->froms[1].sub);
	assert_true(q->froms[0].sub != q->froms[1].sub);
	assert_string_equal(q->froms[1].alias, "q");
	assert_null(q->froms[2].sub);
	sql_free(st);

	/* a WITH query does not see itself or the ones after it: the name is
	 * a table's (PostgreSQL's rule without RECURSIVE) */
	st = parse_ok("WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS v) SELECT * FROM a");
	q = st->q;
	assert_non_null(q->froms[0].sub);
	assert_string_equal(q->froms[0].sub->table, "b");
	assert_true(q->froms[0].sub->q == NULL || q->froms[0].sub->q->nfroms == 0 ||
		    q->froms[0].sub->q->froms[0].sub == NULL);
	sql_free(st);

	/* in a subquery of the statement, and in a set operation */
	st = parse_ok("WITH c AS (SELECT a FROM t) SELECT * FROM u WHERE x IN (SELECT a FROM c)");
	assert_null(st->q == NULL ? NULL : st->q->froms);
	assert_non_null(st->where);
	assert_non_null(st->where->sub);
	assert_non_null(st->where->sub->q);
	assert_int_equal(st->where->sub->q->nfroms, 1);
	assert_non_null(st->where->sub->q->froms[0].sub);
	sql_free(st);
	st = parse_ok("WITH c AS (SELECT a FROM t) SELECT a FROM c UNION SELECT a + 1 FROM c");
	assert_non_null(st->q);
	assert_int_equal(st->q->setop, SQL_UNION);
	assert_non_null(st->q->larg->q->froms[0].sub);
	assert_non_null(st->q->rarg->q->froms[0].sub);
	sql_free(st);

	/* agg FILTER (WHERE c): agg(CASE WHEN c THEN arg END), count(*) of 1 */
	st = parse_ok("SELECT count(*) FILTER (WHERE a > 1), sum(DISTINCT b) FILTER (WHERE s LIKE 'x%') "
		      "FROM t");
	assert_non_null(st->q);
	assert_int_equal(st->q->naggs, 2);
	assert_int_equal(st->q->aggs[0]->kind, SQL_E_AGG);
	assert_non_null(st->q->aggs[0]->a);
	assert_int_equal(st->q->aggs[0]->a->kind, SQL_E_CASE);
	assert_int_equal(st->q->aggs[0]->a->nlist, 2);
	assert_int_equal(st->q->aggs[0]->a->list[0]->kind, SQL_E_CMP);
	assert_int_equal(st->q->aggs[0]->a->list[1]->kind, SQL_E_LIT);
	assert_null(st->q->aggs[0]->a->b);
	assert_true(st->q->aggs[1]->distinct);
	assert_int_equal(st->q->aggs[1]->a->kind, SQL_E_CASE);
	assert_int_equal(st->q->aggs[1]->a->list[0]->kind, SQL_E_LIKE);
	assert_int_equal(st->q->aggs[1]->a->list[1]->kind, SQL_E_COL);
	assert_string_equal(st->q->targets[0].name, "count");
	sql_free(st);

	/* window functions: partition keys, then order keys with their
	 * direction; arguments in a, c (offset), b (default) */
	st = parse_ok("SELECT lead(a, 2, b) OVER (PARTITION BY s ORDER BY b DESC, a NULLS FIRST), "
		      "row_number() OVER () FROM t ORDER BY rank() OVER (ORDER BY a)");
	assert_non_null(st->q);
	assert_int_equal(st->q->nwins, 3);
	assert_false(st->q->grouped);
	assert_int_equal(st->q->wins[0]->kind, SQL_E_WINDOW);
	assert_string_equal(st->q->wins[0]->fname, "lead");
	assert_int_equal(st->q->wins[0]->npart, 1);
	assert_int_equal(st->q->wins[0]->nlist, 3);
	assert_int_equal(st->q->wins[0]->wdir[0], 3);      /* DESC: NULLs first */
	assert_int_equal(st->q->wins[0]->wdir[1], 2);      /* NULLS FIRST */
	assert_non_null(st->q->wins[0]->a);
	assert_non_null(st->q->wins[0]->c);
	assert_non_null(st->q->wins[0]->b);
	assert_int_equal(st->q->wins[1]->nlist, 0);
	assert_string_equal(st->q->targets[1].name, "row_number");
	assert_string_equal(st->q->wins[2]->fname, "rank");
	sql_free(st);

	/* a schema-qualified name is never a WITH query */
	parse_fails_n("WITH c AS (SELECT 1) SELECT * FROM public.c", 43,
		      "LWC does not support schema-qualified table names", 35);
}

/* The text and number functions of sql_func.c (and concat), evaluated as
 * PostgreSQL 15 computes them; their errors fail the evaluation. */
static void test_functions(void **state)
{
	static const struct {
		const char *expr;
		const char *text;       /* a TEXT result, or NULL */
		double num;             /* else an INT or FLOAT result */
		enum sql_vtype type;
	} ok[] = {
		{ "trim('  ab  ')", "ab", 0, SQL_TEXT },
		{ "trim(both 'x' from 'xxaxx')", "a", 0, SQL_TEXT },
		{ "trim(leading 'x' from 'xxaxx')", "axx", 0, SQL_TEXT },
		{ "trim(trailing 'x' from 'xxaxx')", "xxa", 0, SQL_TEXT },
		{ "btrim('xyxaxyx', 'xy')", "a", 0, SQL_TEXT },
		{ "rtrim('héé', 'é')", "h", 0, SQL_TEXT },
		{ "ltrim('    ')", "", 0, SQL_TEXT },
		{ "replace('a-b-c', '-', '+-')", "a+-b+-c", 0, SQL_TEXT },
		{ "replace('abc', '', 'x')", "abc", 0, SQL_TEXT },
		{ "concat('a', NULL, 1, 2.5, -3)", "a12.5-3", 0, SQL_TEXT },
		{ "concat(NULL)", "", 0, SQL_TEXT },
		{ "left('héllo', 2)", "hé", 0, SQL_TEXT },
		{ "left('héllo', -2)", "hél", 0, SQL_TEXT },
		{ "left('héllo', -9)", "", 0, SQL_TEXT },
		{ "right('héllo', 4)", "éllo", 0, SQL_TEXT },
		{ "right('héllo', -1)", "éllo", 0, SQL_TEXT },
		{ "right('héllo', 9)", "héllo", 0, SQL_TEXT },
		{ "strpos('héllo', 'l')", NULL, 3, SQL_INT },
		{ "strpos('héllo', 'z')", NULL, 0, SQL_INT },
		{ "strpos('abc', '')", NULL, 1, SQL_INT },
		{ "position('lo' in 'héllo')", NULL, 4, SQL_INT },
		{ "reverse('héllo')", "olléh", 0, SQL_TEXT },
		{ "repeat('ab', 3)", "ababab", 0, SQL_TEXT },
		{ "repeat('ab', -1)", "", 0, SQL_TEXT },
		{ "lpad('7', 3, '0')", "007", 0, SQL_TEXT },
		{ "lpad('abcdef', 3)", "abc", 0, SQL_TEXT },
		{ "lpad('ab', 5, 'éx')", "éxéab", 0, SQL_TEXT },
		{ "lpad('ab', 5, '')", "ab", 0, SQL_TEXT },
		{ "rpad('ab', 5, 'xy')", "abxyx", 0, SQL_TEXT },
		{ "rpad('ab', 0)", "", 0, SQL_TEXT },
		{ "split_part('a,b,c', ',', 2)", "b", 0, SQL_TEXT },
		{ "split_part('a,b,c', ',', -1)", "c", 0, SQL_TEXT },
		{ "split_part('a,b,c', ',', 4)", "", 0, SQL_TEXT },
		{ "split_part('a,b,c', ',', -4)", "", 0, SQL_TEXT },
		{ "split_part('abc', '', 1)", "abc", 0, SQL_TEXT },
		{ "split_part('a::b', '::', 2)", "b", 0, SQL_TEXT },
		{ "floor(-5.5)", NULL, -6, SQL_FLOAT },
		{ "floor(7)", NULL, 7, SQL_FLOAT },
		{ "ceil(5.1)", NULL, 6, SQL_FLOAT },
		{ "ceiling(-5.1)", NULL, -5, SQL_FLOAT },
		{ "mod(-7, 3)", NULL, -1, SQL_INT },
		{ "mod(-9223372036854775808, -1)", NULL, 0, SQL_INT },
		{ "sign(-3)", NULL, -1, SQL_FLOAT },
		{ "sign(0.0)", NULL, 0, SQL_FLOAT },
		{ "sqrt(16)", NULL, 4, SQL_FLOAT },
		{ "power(2, 10)", NULL, 1024, SQL_FLOAT },
		{ "pow(-2, 3)", NULL, -8, SQL_FLOAT },
		{ "power(0, 0)", NULL, 1, SQL_FLOAT },
	};
	static const struct {
		const char *sql, *msg;
	} bad[] = {
		{ "SELECT replace('a', 'b')", "function replace with 2 arguments does not exist" },
	}, bad_run[] = {
		{ "SELECT sqrt(-1)", "cannot take square root of a negative number" },
		{ "SELECT power(0, -1)", "zero raised to a negative power is undefined" },
		{ "SELECT power(-8, 0.5)", "a negative number raised to a non-integer power yields a "
		  "complex result" },
		{ "SELECT power(10, 400)", "value out of range: overflow" },
		{ "SELECT power(10, -400)", "value out of range: underflow" },
		{ "SELECT mod(1, 0)", "division by zero" },
		{ "SELECT mod(7.5, 2)", "function mod(double precision, integer) does not exist" },
		{ "SELECT left(1, 2)", "function left(integer, integer) does not exist" },
		{ "SELECT repeat('x', 100000000)", "requested length too large" },
		{ "SELECT lpad('x', 100000000)", "requested length too large" },
		{ "SELECT split_part('a', ',', 0)", "field position must not be zero" },
	};
	struct arena *ar = sql_arena_new();
	char sql[160], err[256];
	size_t i;

	(void)state;
	assert_non_null(ar);
	sql_eval_set_scratch(ar);
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct sql_stmt *st;
		struct sql_value out;
		const struct sql_value *v;

		snprintf(sql, sizeof(sql), "SELECT %s", ok[i].expr);
		st = parse_ok(sql);
		assert_non_null(st->q);
		if (sql_eval_value(st->q->targets[0].e, NULL, &out, err, sizeof(err)) != LWC_OK)
			fail_msg("%s: %s", sql, err);
		v = &out;
		if (v->type != ok[i].type)
			fail_msg("%s: type %d, expected %d", sql, v->type, ok[i].type);
		if (ok[i].text != NULL && (v->len != strlen(ok[i].text) || strcmp(v->s, ok[i].text) != 0))
			fail_msg("%s: '%s', expected '%s'", sql, v->s, ok[i].text);
		if (ok[i].type == SQL_INT && v->i != (int64_t)ok[i].num)
			fail_msg("%s: %lld, expected %g", sql, (long long)v->i, ok[i].num);
		if (ok[i].type == SQL_FLOAT && v->f != ok[i].num)
			fail_msg("%s: %g, expected %g", sql, v->f, ok[i].num);
		sql_free(st);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sql_stmt *st = NULL;
		int pos = -2, rc = sql_parse(bad[i].sql, strlen(bad[i].sql), &st, err, sizeof(err), &pos);

		if (rc == LWC_OK)
			fail_msg("parsed but should not: %s", bad[i].sql);
		if (strcmp(err, bad[i].msg) != 0)
			fail_msg("for %s\n  got:      %s\n  expected: %s", bad[i].sql, err, bad[i].msg);
	}
	for (i = 0; i < sizeof(bad_run) / sizeof(bad_run[0]); i++) {
		struct sql_stmt *st = parse_ok(bad_run[i].sql);
		struct sql_value out;

		if (sql_eval_value(st->q->targets[0].e, NULL, &out, err, sizeof(err)) == LWC_OK)
			fail_msg("ran but should not: %s", bad_run[i].sql);
		if (strcmp(err, bad_run[i].msg) != 0)
			fail_msg("for %s\n  got:      %s\n  expected: %s", bad_run[i].sql, err,
				 bad_run[i].msg);
		sql_free(st);
	}
	sql_eval_set_scratch(NULL);
	sql_arena_destroy(ar);
}

/* A grouped query reads only grouped expressions, aggregates and the
 * columns of a table grouped by its primary key (PostgreSQL's rule). */
static void test_grouped(void **state)
{
	static const char *const ok[] = {
		"SELECT a, s, count(*) FROM t GROUP BY pk",        /* functional dependency */
		"SELECT a + 1, count(*) FROM t GROUP BY a + 1 ORDER BY a + 1",
		"SELECT a = 1, max(s) FROM t GROUP BY a = 1",       /* a condition */
		"SELECT count(*) FROM t GROUP BY a = 1, s LIKE 'x%'",
		"SELECT count(*), 1 + 2, sum(a) * 2 FROM t",
		"SELECT b FROM t GROUP BY b HAVING max(a) > 0 ORDER BY b",
		"SELECT upper(s), count(*) FROM t GROUP BY upper(s)",
		"SELECT b, CASE WHEN b > 0 THEN count(*) ELSE min(a) END FROM t GROUP BY b",
	};
	const char *m = "must appear in the GROUP BY clause or be used in an aggregate function";
	char msg[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		sql_free(bind_ok(ok[i]));
	snprintf(msg, sizeof(msg), "column \"t.a\" %s", m);
	bind_fails("SELECT a, count(*) FROM t GROUP BY b", LWC_ERR_SCHEMA, msg, "a,", 1);
	bind_fails("SELECT count(*) FROM t HAVING a > 1", LWC_ERR_SCHEMA, msg, "a >", 1);
	bind_fails("SELECT a + 1, count(*) FROM t GROUP BY a + 2", LWC_ERR_SCHEMA, msg, "a + 1", 1);
	bind_fails("SELECT a, count(*) FROM t GROUP BY a = 1", LWC_ERR_SCHEMA, msg, "a,", 1);
	snprintf(msg, sizeof(msg), "column \"t.s\" %s", m);
	bind_fails("SELECT b FROM t GROUP BY b ORDER BY s", LWC_ERR_SCHEMA, msg, "s", 1);
}

static void test_value_cmp(void **state)
{
	static const struct {
		struct sql_value a, b;
		int want;
	} cases[] = {
		{ { SQL_INT, INT64_MAX, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, 9.2e18, NULL, 0, 0, 0 }, 1 },
		{ { SQL_INT, INT64_MAX, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, 9223372036854775808.0, NULL, 0, 0, 0 }, -1 },
		{ { SQL_INT, INT64_MAX, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, 9223372036854774784.0, NULL, 0, 0, 0 }, 1 },
		{ { SQL_INT, INT64_MIN, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, -9223372036854775808.0, NULL, 0, 0, 0 }, 0 },
		{ { SQL_INT, INT64_MIN, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, -9223372036854777856.0, NULL, 0, 0, 0 }, 1 },
		{ { SQL_INT, INT64_MIN, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, -1e300, NULL, 0, 0, 0 }, 1 },
		{ { SQL_INT, 9007199254740993, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, 9007199254740992.0, NULL, 0, 0, 0 }, 1 },
		{ { SQL_INT, 9007199254740992, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, 9007199254740992.0, NULL, 0, 0, 0 }, 0 },
		{ { SQL_INT, -9007199254740993, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, -9007199254740992.0, NULL, 0, 0, 0 }, -1 },
		{ { SQL_INT, 3, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, 3.5, NULL, 0, 0, 0 }, -1 },
		{ { SQL_INT, 4, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, 3.5, NULL, 0, 0, 0 }, 1 },
		{ { SQL_INT, -3, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, -3.5, NULL, 0, 0, 0 }, 1 },
		{ { SQL_INT, -4, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, -3.5, NULL, 0, 0, 0 }, -1 },
		{ { SQL_INT, 0, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, -0.0, NULL, 0, 0, 0 }, 0 },
		{ { SQL_INT, 0, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, 1e-300, NULL, 0, 0, 0 }, -1 },
		{ { SQL_INT, 0, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, -1e-300, NULL, 0, 0, 0 }, 1 },
		{ { SQL_INT, INT64_MAX, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, INFINITY, NULL, 0, 0, 0 }, -1 },
		{ { SQL_INT, INT64_MIN, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, -INFINITY, NULL, 0, 0, 0 }, 1 },
		{ { SQL_INT, INT64_MAX, 0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, NAN, NULL, 0, 0, 0 }, -1 },
		{ { SQL_FLOAT, 0, NAN, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, NAN, NULL, 0, 0, 0 }, 0 },
		{ { SQL_FLOAT, 0, NAN, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, INFINITY, NULL, 0, 0, 0 }, 1 },
		{ { SQL_FLOAT, 0, -0.0, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, 0.0, NULL, 0, 0, 0 }, 0 },
		{ { SQL_FLOAT, 0, 1.5, NULL, 0, 0, 0 }, { SQL_FLOAT, 0, 2.5, NULL, 0, 0, 0 }, -1 },
		{ { SQL_INT, -1, 0, NULL, 0, 0, 0 }, { SQL_INT, 1, 0, NULL, 0, 0, 0 }, -1 },
		{ { SQL_INT, INT64_MIN, 0, NULL, 0, 0, 0 }, { SQL_INT, INT64_MAX, 0, NULL, 0, 0, 0 }, -1 },
		{ { SQL_TEXT, 0, 0, "ab", 2, 0, 0 }, { SQL_TEXT, 0, 0, "abc", 3, 0, 0 }, -1 },
		{ { SQL_TEXT, 0, 0, "", 0, 0, 0 }, { SQL_TEXT, 0, 0, "", 0, 0, 0 }, 0 },
		{ { SQL_TEXT, 0, 0, "b", 1, 0, 0 }, { SQL_TEXT, 0, 0, "abc", 3, 0, 0 }, 1 },
		{ { SQL_TEXT, 0, 0, "\xff", 1, 0, 0 }, { SQL_TEXT, 0, 0, "\x01", 1, 0, 0 }, 1 },
		{ { SQL_TEXT, 0, 0, "a\0b", 3, 0, 0 }, { SQL_TEXT, 0, 0, "a", 1, 0, 0 }, 1 },
		{ { SQL_TEXT, 0, 0, "B", 1, 0, 0 }, { SQL_TEXT, 0, 0, "a", 1, 0, 0 }, -1 },
		{ { SQL_TEXT, 0, 0, "1", 1, 0, 0 }, { SQL_INT, 1, 0, NULL, 0, 0, 0 }, SQL_CMP_ERR },
		{ { SQL_FLOAT, 0, 1, NULL, 0, 0, 0 }, { SQL_TEXT, 0, 0, "1", 1, 0, 0 }, SQL_CMP_ERR },
		{ { SQL_NULL, 0, 0, NULL, 0, 0, 0 }, { SQL_INT, 1, 0, NULL, 0, 0, 0 }, SQL_CMP_ERR },
		{ { SQL_NULL, 0, 0, NULL, 0, 0, 0 }, { SQL_NULL, 0, 0, NULL, 0, 0, 0 }, SQL_CMP_ERR },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = sql_value_cmp(&cases[i].a, &cases[i].b);
		int rev = sql_value_cmp(&cases[i].b, &cases[i].a);
		int want_rev = cases[i].want == SQL_CMP_ERR ? SQL_CMP_ERR : -cases[i].want;

		if (got != cases[i].want || rev != want_rev)
			fail_msg("case %zu: got %d / %d, expected %d / %d", i, got, rev,
				 cases[i].want, want_rev);
	}
}

/* ---------------------------------------------------------------- coercion */

static const struct sql_coldef col_int = { .name = "x", .type = SQL_CT_INT };
static const struct sql_coldef col_big = { .name = "x", .type = SQL_CT_BIGINT };
static const struct sql_coldef col_float = { .name = "x", .type = SQL_CT_FLOAT };
static const struct sql_coldef col_text = { .name = "x", .type = SQL_CT_TEXT };
static const struct sql_coldef col_vc5 = { .name = "x", .type = SQL_CT_TEXT, .max_len = 5 };
static const struct sql_coldef col_nn = { .name = "nn", .type = SQL_CT_TEXT, .not_null = 1 };
static const struct sql_coldef col_pk = { .name = "id", .type = SQL_CT_INT, .primary_key = 1 };

static struct sql_value coerce_ok(const struct sql_coldef *c, struct sql_value in, char *buf,
				  size_t buflen)
{
	struct sql_value out;
	char err[256];

	if (sql_coerce(c, &in, &out, buf, buflen, err, sizeof(err)) != LWC_OK)
		fail_msg("coerce failed: %s", err);
	return out;
}

static void coerce_fails(const struct sql_coldef *c, struct sql_value in, const char *msg)
{
	struct sql_value out;
	char err[256], buf[SQL_NUM_TEXT_MAX];

	assert_int_equal(sql_coerce(c, &in, &out, buf, sizeof(buf), err, sizeof(err)), LWC_ERR_ARG);
	if (strcmp(err, msg) != 0)
		fail_msg("got: %s\nexpected: %s", err, msg);
	assert_int_equal(out.type, SQL_NULL);
}

static int64_t to_int(const struct sql_coldef *c, struct sql_value in)
{
	struct sql_value out = coerce_ok(c, in, NULL, 0);

	assert_int_equal(out.type, SQL_INT);
	return out.i;
}

static double to_float(struct sql_value in)
{
	struct sql_value out = coerce_ok(&col_float, in, NULL, 0);

	assert_int_equal(out.type, SQL_FLOAT);
	return out.f;
}

static void assert_text(const struct sql_coldef *c, struct sql_value in, const char *want)
{
	char buf[SQL_NUM_TEXT_MAX];
	struct sql_value out;

	memset(buf, 'z', sizeof(buf));
	out = coerce_ok(c, in, buf, sizeof(buf));
	assert_int_equal(out.type, SQL_TEXT);
	assert_int_equal(out.len, strlen(want));
	assert_memory_equal(out.s, want, out.len + 1);
}

static void test_coerce_numbers(void **state)
{
	(void)state;
	/* INT: 32-bit range */
	assert_int_equal(to_int(&col_int, I(5)), 5);
	assert_int_equal(to_int(&col_int, I(2147483647)), 2147483647);
	assert_int_equal(to_int(&col_int, I(-2147483648)), -2147483648LL);
	coerce_fails(&col_int, I(2147483648), "integer out of range");
	coerce_fails(&col_int, I(-2147483649), "integer out of range");
	coerce_fails(&col_int, I(INT64_MIN), "integer out of range");
	/* FLOAT into INT rounds half away from zero */
	assert_int_equal(to_int(&col_int, F(2.5)), 3);
	assert_int_equal(to_int(&col_int, F(-2.5)), -3);
	assert_int_equal(to_int(&col_int, F(3.5)), 4);
	assert_int_equal(to_int(&col_int, F(2.4999999)), 2);
	assert_int_equal(to_int(&col_int, F(0.49999999999999994)), 0);
	assert_int_equal(to_int(&col_int, F(-0.5)), -1);
	assert_int_equal(to_int(&col_int, F(-0.0)), 0);
	assert_int_equal(to_int(&col_int, F(4.67)), 5);
	assert_int_equal(to_int(&col_int, F(2147483647.4)), 2147483647);
	assert_int_equal(to_int(&col_int, F(-2147483648.4)), -2147483648LL);
	coerce_fails(&col_int, F(2147483647.5), "integer out of range");
	coerce_fails(&col_int, F(-2147483648.5), "integer out of range");
	coerce_fails(&col_int, F(1e300), "integer out of range");
	coerce_fails(&col_int, F(NAN), "integer out of range");
	coerce_fails(&col_int, F(-INFINITY), "integer out of range");
	/* TEXT into INT is parsed */
	assert_int_equal(to_int(&col_int, T("12")), 12);
	assert_int_equal(to_int(&col_int, T("  -12 \n")), -12);
	assert_int_equal(to_int(&col_int, T("+0")), 0);
	assert_int_equal(to_int(&col_int, T("-2147483648")), -2147483648LL);
	coerce_fails(&col_int, T("abc"), "invalid input syntax for type integer: \"abc\"");
	coerce_fails(&col_int, T("12.5"), "invalid input syntax for type integer: \"12.5\"");
	coerce_fails(&col_int, T(""), "invalid input syntax for type integer: \"\"");
	coerce_fails(&col_int, T(" "), "invalid input syntax for type integer: \" \"");
	coerce_fails(&col_int, T("1 2"), "invalid input syntax for type integer: \"1 2\"");
	coerce_fails(&col_int, T("0x10"), "invalid input syntax for type integer: \"0x10\"");
	coerce_fails(&col_int, T("99999999999"), "value \"99999999999\" is out of range for type integer");
	coerce_fails(&col_int, T("2147483648"), "value \"2147483648\" is out of range for type integer");

	/* BIGINT: 64-bit range */
	assert_true(to_int(&col_big, I(INT64_MAX)) == INT64_MAX);
	assert_true(to_int(&col_big, I(INT64_MIN)) == INT64_MIN);
	assert_true(to_int(&col_big, F(-9223372036854775808.0)) == INT64_MIN);
	assert_true(to_int(&col_big, F(9223372036854774784.0)) == 9223372036854774784LL);
	assert_true(to_int(&col_big, F(1e18 + 0.5)) == 1000000000000000000LL);
	coerce_fails(&col_big, F(9223372036854775808.0), "bigint out of range");
	coerce_fails(&col_big, F(9.3e18), "bigint out of range");
	coerce_fails(&col_big, F(-9223372036854777856.0), "bigint out of range");
	assert_true(to_int(&col_big, T("9223372036854775807")) == INT64_MAX);
	assert_true(to_int(&col_big, T("-9223372036854775808")) == INT64_MIN);
	coerce_fails(&col_big, T("9223372036854775808"),
		     "value \"9223372036854775808\" is out of range for type bigint");
	coerce_fails(&col_big, T("-9223372036854775809"),
		     "value \"-9223372036854775809\" is out of range for type bigint");
	coerce_fails(&col_big, T("123456789012345678901234567890"),
		     "value \"123456789012345678901234567890\" is out of range for type bigint");
	coerce_fails(&col_big, T("x"), "invalid input syntax for type bigint: \"x\"");

	/* FLOAT */
	assert_true(to_float(I(3)) == 3.0);
	assert_true(to_float(I(-7)) == -7.0);
	assert_true(to_float(I(9007199254740993)) == 9007199254740992.0);
	assert_true(to_float(I(INT64_MAX)) == 9223372036854775808.0);
	assert_true(to_float(F(4.67)) == 4.67);
	assert_true(to_float(T(" 4.5e1 ")) == 45.0);
	assert_true(to_float(T(".5")) == 0.5);
	assert_true(to_float(T("5.")) == 5.0);
	assert_true(to_float(T("-1E-3")) == -0.001);
	assert_true(to_float(T("4.9e-324")) > 0);
	assert_true(isnan(to_float(T("NaN"))));
	assert_true(to_float(T("-Infinity")) == -INFINITY);
	assert_true(to_float(T("inf")) == INFINITY);
	coerce_fails(&col_float, T("1e400"), "\"1e400\" is out of range for type double precision");
	coerce_fails(&col_float, T("1e-400"), "\"1e-400\" is out of range for type double precision");
	coerce_fails(&col_float, T("abc"), "invalid input syntax for type double precision: \"abc\"");
	coerce_fails(&col_float, T("0x10"), "invalid input syntax for type double precision: \"0x10\"");
	coerce_fails(&col_float, T("e5"), "invalid input syntax for type double precision: \"e5\"");
	coerce_fails(&col_float, T("1e"), "invalid input syntax for type double precision: \"1e\"");
	coerce_fails(&col_float, T("-NaN"), "invalid input syntax for type double precision: \"-NaN\"");
	coerce_fails(&col_float, T(""), "invalid input syntax for type double precision: \"\"");
}

static void test_coerce_text_null(void **state)
{
	char buf[SQL_NUM_TEXT_MAX], tiny[2];
	struct sql_value in, out;
	char err[128];

	(void)state;
	/* TEXT stays where it is */
	in = T("h\xc3\xa9llo");
	out = coerce_ok(&col_vc5, in, NULL, 0);
	assert_ptr_equal(out.s, in.s);
	assert_int_equal(out.len, 6);
	/* VARCHAR(n) counts characters, not bytes */
	coerce_fails(&col_vc5, T("h\xc3\xa9lloo"), "value too long for type character varying(5)");
	coerce_fails(&col_vc5, T("abcdef"), "value too long for type character varying(5)");
	assert_text(&col_vc5, T(""), "");
	assert_text(&col_vc5, T("\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"),
		    "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac");
	/* numbers into TEXT: their text, in the caller's buffer */
	assert_text(&col_text, I(42), "42");
	assert_text(&col_text, I(INT64_MIN), "-9223372036854775808");
	assert_text(&col_text, F(4.67), "4.67");
	assert_text(&col_text, F(0.1), "0.1");
	assert_text(&col_text, F(100.0), "100");
	assert_text(&col_text, F(1e20), "1e+20");
	assert_text(&col_text, F(-0.0), "-0");
	assert_text(&col_text, F(1.0 / 3.0), "0.3333333333333333");
	assert_text(&col_text, F(-1.7976931348623157e308), "-1.7976931348623157e+308");
	assert_text(&col_text, F(NAN), "NaN");
	assert_text(&col_text, F(-INFINITY), "-Infinity");
	assert_text(&col_vc5, I(12345), "12345");
	coerce_fails(&col_vc5, I(123456), "value too long for type character varying(5)");
	coerce_fails(&col_vc5, F(0.1251), "value too long for type character varying(5)");
	in = I(42);
	assert_int_equal(sql_coerce(&col_text, &in, &out, tiny, sizeof(tiny), err, sizeof(err)),
			 LWC_ERR_ARG);
	assert_int_equal(sql_coerce(&col_text, &in, &out, NULL, 0, err, sizeof(err)), LWC_ERR_ARG);
	in = I(4);
	out = coerce_ok(&col_text, in, tiny, sizeof(tiny));
	assert_string_equal(out.s, "4");
	(void)buf;

	/* NULL */
	out = coerce_ok(&col_int, N(), NULL, 0);
	assert_int_equal(out.type, SQL_NULL);
	out = coerce_ok(&col_vc5, N(), NULL, 0);
	assert_int_equal(out.type, SQL_NULL);
	coerce_fails(&col_nn, N(), "null value in column \"nn\" violates not-null constraint");
	coerce_fails(&col_pk, N(), "null value in column \"id\" violates not-null constraint");
	assert_int_equal(to_int(&col_pk, T("7")), 7);
}

/* The literals of a parsed INSERT through sql_coerce into the test table:
 * the path the library takes. */
static void test_insert_pipeline(void **state)
{
	struct sql_stmt *st;
	struct sql_value out[NCOLS];
	char bufs[NCOLS][SQL_NUM_TEXT_MAX], err[256];
	size_t j;

	(void)state;
	st = bind_ok("INSERT INTO t (pk, a, f, s, v, big) VALUES (1, 2.5, 3, 4.67, 'h\xc3\xa9llo', '12')");
	for (j = 0; j < st->ninsert_map; j++) {
		int c = st->insert_map[j];

		assert_int_equal(sql_coerce(&test_cols[c], &st->rows[0][j]->lit, &out[c], bufs[c],
					    sizeof(bufs[c]), err, sizeof(err)), LWC_OK);
	}
	assert_int_equal(out[C_A].i, 3);
	assert_true(out[C_F].type == SQL_FLOAT && out[C_F].f == 3.0);
	assert_string_equal(out[C_S].s, "4.67");
	assert_int_equal(out[C_V].len, 6);
	assert_true(out[C_BIG].type == SQL_INT && out[C_BIG].i == 12);
	sql_free(st);
}

/* A decimal-comma locale must not change how numbers read or print.  The
 * thread's own locale (uselocale) is what strtod and printf follow; unlike
 * setlocale it leaves no global state behind. */
static void test_locale(void **state)
{
	static const char *const names[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8" };
	locale_t loc = (locale_t)0, old;
	struct sql_stmt *st;
	char buf[SQL_NUM_TEXT_MAX];
	struct sql_value out;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]) && loc == (locale_t)0; i++)
		loc = newlocale(LC_ALL_MASK, names[i], (locale_t)0);
	if (loc == (locale_t)0)
		skip();
	old = uselocale(loc);
	/* the locale really reads a decimal comma */
	assert_true(strtod("4,5", NULL) == 4.5);
	st = parse_ok("INSERT INTO t VALUES (4.67, -1.5e3)");
	assert_true(st->rows[0][0]->lit.f == 4.67);
	assert_true(st->rows[0][1]->lit.f == -1500.0);
	sql_free(st);
	out = coerce_ok(&col_text, F(4.67), buf, sizeof(buf));
	assert_string_equal(out.s, "4.67");
	assert_true(to_float(T("2.5")) == 2.5);
	/* and the thread's locale is as it was */
	assert_true(uselocale((locale_t)0) == loc);
	uselocale(old);
	freelocale(loc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_table),
		cmocka_unit_test(test_create_index_drop),
		cmocka_unit_test(test_insert),
		cmocka_unit_test(test_many_rows),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_update_delete),
		cmocka_unit_test(test_expression_shapes),
		cmocka_unit_test(test_balanced_chains),
		cmocka_unit_test(test_nesting_limits),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_error_buffers),
		cmocka_unit_test(test_conformance_sample),
		cmocka_unit_test(test_next_statement),
		cmocka_unit_test(test_script),
		cmocka_unit_test(test_bind),
		cmocka_unit_test(test_bind_insert),
		cmocka_unit_test(test_truth_tables),
		cmocka_unit_test(test_in_between_isnull),
		cmocka_unit_test(test_compare_values),
		cmocka_unit_test(test_eval_value),
		cmocka_unit_test(test_empty_in),
		cmocka_unit_test(test_lazy_constants),
		cmocka_unit_test(test_grouped),
		cmocka_unit_test(test_derived),
		cmocka_unit_test(test_functions),
		cmocka_unit_test(test_value_cmp),
		cmocka_unit_test(test_coerce_numbers),
		cmocka_unit_test(test_coerce_text_null),
		cmocka_unit_test(test_insert_pipeline),
		cmocka_unit_test(test_locale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
