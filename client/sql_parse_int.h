/*
 * sql_parse_int.h - what the parts of the SQL parser share: the walk's
 * state over PostgreSQL's parse tree and the helpers every part uses.
 *
 *   sql_parse.c         libpg_query, the depth bound, errors, names, the
 *                       statement dispatch
 *   sql_parse_expr.c    expressions (operators, functions, CASE, LIKE,
 *                       subqueries, column references)
 *   sql_parse_select.c  SELECT: plain, general, joins in FROM, set operations
 *   sql_parse_ddl.c     CREATE TABLE / INDEX, DROP, INSERT, UPDATE, DELETE
 */
#ifndef LWC_SQL_PARSE_INT_H
#define LWC_SQL_PARSE_INT_H

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

#include "sql_int.h"

typedef PgQuery__Node Node;

/* A WITH query in scope: its body sees only the WITH queries before it. */
struct sqp_cte {
	char name[SQL_NAME_MAX + 1];
	const PgQuery__CommonTableExpr *cte;
	struct sqp_cte *up;       /* the one before it, or of an outer WITH   */
};

struct tx {
	const char *sql;
	size_t len;
	struct arena *ar;
	int depth;                /* recursion over PostgreSQL's tree          */
	int agg_ok;               /* aggregates allowed here (select list ...) */
	struct sql_expr **aggs;   /* the aggregates met (general SELECT)       */
	size_t naggs, capaggs;
	int win_ok;               /* window functions allowed here             */
	struct sql_expr **wins;   /* the window functions met                  */
	size_t nwins, capwins;
	char tname[SQL_NAME_MAX + 1];   /* the SELECT's table and its alias     */
	char talias[SQL_NAME_MAX + 1];
	char outer[SQL_NAME_MAX + 1];   /* in a subquery: the outer table (or alias) */
	struct sql_query *join;   /* a general SELECT of several tables: its FROM */
	const struct sql_query *outer_join;  /* in a subquery: the outer join   */
	int fields_ok;            /* in a subquery: outer columns may be read  */
	int force_general;        /* parse the next SELECT as a general one    */
	int lazy;                 /* > 0: in a part evaluated only when needed
	                             (a CASE branch, a later COALESCE argument,
	                             NULLIF's second): a constant that fails
	                             stays unfolded, failing if evaluated      */
	size_t capfroms;
	struct sqp_cte *ctes;     /* the WITH queries in scope, the last first */
	char *err;
	size_t errlen;
	int errpos;
	int rc;                   /* first error: LWC_ERR_ARG / LWC_ERR_NOMEM */
};

__attribute__((format(printf, 3, 4)))
int sqp_fail(struct tx *x, int pos, const char *fmt, ...);
int sqp_fail_nomem(struct tx *x);
int sqp_unsupported(struct tx *x, int pos, const char *what);
void *sqp_talloc(struct tx *x, size_t n);
int sqp_node_pos(const Node *n);
int sqp_node_unsupported(struct tx *x, const Node *n, int fallback);
int sqp_take(struct tx *x, const char *s, char out[SQL_NAME_MAX + 1], int pos);
const char *sqp_str_of(const Node *n);
int sqp_table_name(struct tx *x, const PgQuery__RangeVar *rv, char out[SQL_NAME_MAX + 1], int *pos);
int sqp_find_name(const struct tx *x, size_t from, const char *name, int fallback);
/* sql_parse_values.c: INSERT ... VALUES of plain literal rows.  The end of
 * the first row when the whole statement is such an INSERT of at least two
 * rows (their number in *nrows), else 0; then, after PostgreSQL's parse of
 * the text up to there, the other rows into st. */
size_t sqp_values_head(const char *s, size_t n, size_t *nrows);
int sqp_values_rows(struct tx *x, struct sql_stmt *st, size_t from, size_t nrows);
struct sql_expr *sqp_new_expr(struct tx *x, enum sql_ekind kind, int pos);
/* The per-SELECT state cleared for a SELECT inside another one (a
 * subquery, a set operation's branch, a subquery in FROM); the caller
 * saves x before and restores it after. */
void sqp_new_select(struct tx *x);
struct sql_expr *sqp_finish(struct tx *x, struct sql_expr *e);
struct sql_expr *sqp_value(struct tx *x, const Node *n, const char *what);
struct sql_expr *sqp_cond(struct tx *x, const Node *n, const char *what);
const char *sqp_last_name(const PgQuery__Node *const *names, size_t n);
int sqp_from_index(const struct sql_query *q, const char *name);
struct sql_expr *sqp_column_ref(struct tx *x, const PgQuery__ColumnRef *c);
struct sql_expr *sqp_expr(struct tx *x, const Node *n);
struct sql_expr *sqp_constant_expr(struct tx *x, const Node *n, const char *what);
int sqp_column_type(struct tx *x, const PgQuery__TypeName *t, struct sql_coldef *c);
int sqp_create_table(struct tx *x, const PgQuery__CreateStmt *cs, struct sql_stmt *st);
int sqp_create_index(struct tx *x, const PgQuery__IndexStmt *is, struct sql_stmt *st);
int sqp_reindex(struct tx *x, const PgQuery__ReindexStmt *rs, int pos, struct sql_stmt *st);
int sqp_drop(struct tx *x, const PgQuery__DropStmt *ds, int pos, struct sql_stmt *st);
int sqp_select_plain(struct tx *x, const PgQuery__SelectStmt *s, int pos);
int sqp_is_star(const Node *n);
int sqp_select_stmt(struct tx *x, const PgQuery__SelectStmt *s, int pos, struct sql_stmt *st);
int sqp_insert_stmt(struct tx *x, const PgQuery__InsertStmt *is, int pos, struct sql_stmt *st);
int sqp_update_stmt(struct tx *x, const PgQuery__UpdateStmt *us, int pos, struct sql_stmt *st);
int sqp_delete_stmt(struct tx *x, const PgQuery__DeleteStmt *ds, struct sql_stmt *st);

#endif
