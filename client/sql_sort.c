/*
 * sql_sort.c - ordering of values and rows for the general SELECT:
 * PostgreSQL's order (NULLs last ascending, first descending, per key),
 * a stable sort of keyed rows, and equality of keys (NULLs equal) for
 * grouping and DISTINCT.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql_int.h"

/* NULLs after everything (PostgreSQL's ascending order); mixed types
 * (already refused by the expressions) compare equal. */
int sql_cmp_sort(const struct sql_value *a, const struct sql_value *b)
{
	int c;

	if (a->type == SQL_NULL || b->type == SQL_NULL)
		return (a->type == SQL_NULL) - (b->type == SQL_NULL);
	c = sql_value_cmp(a, b);
	return c == SQL_CMP_ERR ? 0 : c;
}

static _Thread_local const struct sortctx *sort_ctx;

static int cmp_keyed(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;
	size_t i;

	for (i = 0; i < sort_ctx->nkeys; i++) {
		int c;

		if (sort_ctx->order != NULL) {
			const struct sql_sortkey *o = &sort_ctx->order[i];
			int an = a->k[i].type == SQL_NULL, bn = b->k[i].type == SQL_NULL;

			if (an || bn) {
				if (an == bn)
					continue;
				return (an ? 1 : -1) * (o->nulls_first ? -1 : 1);
			}
			c = sql_cmp_sort(&a->k[i], &b->k[i]);
			if (c != 0)
				return o->desc ? -c : c;
		} else if ((c = sql_cmp_sort(&a->k[i], &b->k[i])) != 0) {
			return c;
		}
	}
	/* stable: input order */
	return (a->idx > b->idx) - (a->idx < b->idx);
}

void sql_sort_keyed(struct keyed *v, size_t n, const struct sortctx *ctx)
{
	const struct sortctx *old = sort_ctx;

	if (n < 2)
		return;                 /* v may be NULL when n is 0 (no qsort(NULL, 0)) */
	sort_ctx = ctx;
	qsort(v, n, sizeof(*v), cmp_keyed);
	sort_ctx = old;
}

int sql_same_keys(const struct sql_value *a, const struct sql_value *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if ((a[i].type == SQL_NULL) != (b[i].type == SQL_NULL))
			return 0;
		if (a[i].type != SQL_NULL && sql_cmp_sort(&a[i], &b[i]) != 0)
			return 0;
	}
	return 1;
}
