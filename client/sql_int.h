/*
 * sql_int.h - what the parts of the SQL module share and liblwc does not
 * see: the statement arena, text helpers (UTF-8, quoting for messages,
 * locale-free strtod) and value arithmetic.
 *
 *   sql_arena.c   the arena every statement lives in
 *   sql_text.c    UTF-8, message quoting, splitting a script into statements
 *   sql_parse.c   PostgreSQL's grammar (libpg_query) into struct sql_stmt
 *   sql_bind.c    column names against a schema, CREATE TABLE checks
 *   sql_eval.c    three-valued evaluation of expressions on a row (functions,
 *                 CASE, LIKE, correlated subqueries)
 *   sql_func.c    the text and number functions beyond sql_eval.c's
 *   sql_value.c   comparison, arithmetic and PostgreSQL's assignment rules
 *   sql_query.c   a general SELECT: grouping, HAVING, select list, DISTINCT,
 *                 ORDER BY, OFFSET / LIMIT
 *   sql_aggregate.c  COUNT, SUM, AVG, MIN, MAX (DISTINCT)
 *   sql_window.c  window functions (OVER) of a SELECT that is not grouped
 *   sql_sort.c    PostgreSQL's order of values and rows
 *   sql_join.c    joins: pushdown of predicates, key links, nested loops
 */
#ifndef LWC_SQL_INT_H
#define LWC_SQL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sql.h"

struct arena;

struct arena *sql_arena_new(void);
void sql_arena_destroy(struct arena *a);
/* n zeroed bytes, 16-aligned; NULL when out of memory. */
void *sql_arena_alloc(struct arena *a, size_t n);
/* Room for element n of arr (capacity *cap, elements of elsize), copying
 * to a larger array when needed; NULL when out of memory. */
void *sql_arena_grow(struct arena *a, void *arr, size_t n, size_t *cap, size_t elsize);

int sql_is_space(unsigned char c);
int sql_is_digit(unsigned char c);
unsigned char sql_ascii_lower(unsigned char c);
size_t sql_utf8_seq(const unsigned char *s, size_t n);
size_t sql_utf8_check(const unsigned char *s, size_t n);
size_t sql_utf8_chars(const char *s, size_t n);
void sql_quote_text(char *out, size_t outlen, const char *src, size_t n, size_t max);
int sql_c_strtod(const char *s, size_t n, double *out, int *erange);
size_t sql_quoted_end(const char *s, size_t n, size_t i, char q);
size_t sql_skip_blank(const char *s, size_t n, size_t i);

const char *sql_vtype_name(enum sql_vtype t);
extern const char *const sql_cmp_text[];
extern const char *const sql_arith_text[];
int sql_value_neg(const struct sql_value *a, struct sql_value *out, char *err, size_t errlen);
int sql_value_arith(enum sql_arith op, const struct sql_value *a, const struct sql_value *b,
		    struct sql_value *out, char *err, size_t errlen);

/* The arena text-making functions allocate from on this thread (NULL: none). */
void sql_eval_set_scratch(struct arena *a);
struct arena *sql_eval_get_scratch(void);
/* n + 1 bytes from it (or from a condition's own arena), NULL with a
 * message in err when there is none or no memory. */
char *sql_eval_scratch(size_t n, char *err, size_t errlen);
/* The scalar functions of sql_func.c: name, arity, argument kinds, result
 * type and what computes them (NULL: sql_eval.c). */
struct sql_func {
	const char *name;
	size_t min, max;
	const char *args;
	enum sql_vtype type;
	int (*run)(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
		   char *err, size_t errlen);
};
const struct sql_func *sql_func_find(const char *name);
/* One of them on the evaluated, non-NULL arguments a[0..n): LWC_OK (*out),
 * LWC_ERR_ARG (err), or 1 when f is none it computes. */
int sql_func_eval(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
		  char *err, size_t errlen);

/* Sorting rows by keys (sql_sort.c). */
struct keyed {
	size_t idx;               /* input row or output row                   */
	struct sql_value *k;      /* nkeys values                               */
};

struct sortctx {
	size_t nkeys;
	const struct sql_sortkey *order;   /* NULL: all ascending          */
};

int sql_cmp_sort(const struct sql_value *a, const struct sql_value *b);
void sql_sort_keyed(struct keyed *v, size_t n, const struct sortctx *ctx);
int sql_same_keys(const struct sql_value *a, const struct sql_value *b, size_t n);

/* The window functions q->wins over the n rows (sql_window.c): function w's
 * value for row i in (*vals)[w * n + i] (malloc'ed; NULL when n is 0). */
int sql_window_run(const struct sql_query *q, struct sql_value *const *rows, size_t n,
		   struct sql_value **vals, char *err, size_t errlen);

/* One aggregate over rows[idx[0..n)], into agg->lit (sql_aggregate.c). */
int sql_aggregate(struct sql_expr *agg, struct sql_value *const *rows, const size_t *idx,
		  size_t n, char *err, size_t errlen);

int sql_check_create(struct arena *ar, const struct sql_stmt *st, char *err, size_t errlen,
		     int *errpos);

#endif
