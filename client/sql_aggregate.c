/*
 * sql_aggregate.c - the aggregates of a general SELECT over one group:
 * COUNT(*), COUNT, SUM, AVG, MIN, MAX, each with DISTINCT, as PostgreSQL
 * computes them (NULLs skipped; COUNT of nothing 0, the others NULL; SUM
 * of integers an int8, checked; AVG a double here).  The value goes to
 * the SQL_E_AGG node's lit, where the select list reads it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql_int.h"

/* One aggregate over the rows rows[idx[0..n)]. */
int sql_aggregate(struct sql_expr *agg, struct sql_value *const *rows, const size_t *idx,
		     size_t n, char *err, size_t errlen)
{
	struct sql_value *vals = NULL, acc;
	size_t i, nv = 0;
	int rc = LWC_OK, is_count = strcmp(agg->fname, "count") == 0;

	memset(&acc, 0, sizeof(acc));
	if (agg->a == NULL) {           /* count(*) */
		agg->lit.type = SQL_INT;
		agg->lit.i = (int64_t)n;
		return LWC_OK;
	}
	if (n > 0 && (vals = malloc(n * sizeof(*vals))) == NULL) {
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	for (i = 0; i < n; i++) {
		struct sql_value v;

		if ((rc = sql_eval_value(agg->a, rows[idx[i]], &v, err, errlen)) != LWC_OK)
			goto out;
		if (v.type != SQL_NULL)
			vals[nv++] = v;
	}
	if (agg->distinct && nv > 1) {
		struct keyed *k = malloc(nv * sizeof(*k));
		struct sortctx ctx = { 1, NULL };
		size_t m = 0;

		if (k == NULL) {
			lwc_errf(err, errlen, "out of memory");
			rc = LWC_ERR_NOMEM;
			goto out;
		}
		for (i = 0; i < nv; i++) {
			k[i].idx = i;
			k[i].k = &vals[i];
		}
		sql_sort_keyed(k, nv, &ctx);
		for (i = 0; i < nv; i++)
			if (m == 0 || !sql_same_keys(k[i].k, k[m - 1].k, 1))
				k[m++] = k[i];
		{
			struct sql_value *dv = malloc(m * sizeof(*dv));

			if (dv == NULL) {
				free(k);
				lwc_errf(err, errlen, "out of memory");
				rc = LWC_ERR_NOMEM;
				goto out;
			}
			for (i = 0; i < m; i++)
				dv[i] = *k[i].k;
			free(vals);
			vals = dv;
			nv = m;
		}
		free(k);
	}
	if (is_count) {
		agg->lit.type = SQL_INT;
		agg->lit.i = (int64_t)nv;
		goto out;
	}
	memset(&agg->lit, 0, sizeof(agg->lit));
	if (nv == 0)
		goto out;               /* NULL */
	if (strcmp(agg->fname, "min") == 0 || strcmp(agg->fname, "max") == 0) {
		int mx = agg->fname[1] == 'a';

		acc = vals[0];
		for (i = 1; i < nv; i++) {
			int c = sql_value_cmp(&vals[i], &acc);

			if (c == SQL_CMP_ERR) {
				lwc_errf(err, errlen, "function %s does not accept mixed types", agg->fname);
				rc = LWC_ERR_ARG;
				goto out;
			}
			if (mx ? c > 0 : c < 0)
				acc = vals[i];
		}
		agg->lit = acc;
		goto out;
	}
	/* sum, avg */
	for (i = 0; i < nv; i++)
		if (vals[i].type == SQL_TEXT) {
			lwc_errf(err, errlen, "function %s(text) does not exist", agg->fname);
			rc = LWC_ERR_ARG;
			goto out;
		}
	for (i = 0; i < nv; i++)
		vals[i].i4 = 0;         /* sum(int4) is an int8 */
	acc = vals[0];
	for (i = 1; i < nv; i++) {
		struct sql_value r;

		if ((rc = sql_value_arith(SQL_ADD, &acc, &vals[i], &r, err, errlen)) != LWC_OK)
			goto out;
		acc = r;
	}
	if (agg->fname[0] == 'a') {
		double d = acc.type == SQL_INT ? (double)acc.i : acc.f;

		acc.type = SQL_FLOAT;
		acc.f = d / (double)nv;
	}
	agg->lit = acc;
out:
	free(vals);
	return rc;
}
