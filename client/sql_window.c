/*
 * sql_window.c - window functions of a general SELECT that is not grouped:
 * row_number, rank, dense_rank, lag, lead, and count, sum, avg, min, max
 * OVER (PARTITION BY ... ORDER BY ...), as PostgreSQL computes them over
 * its default frame: the rows of the partition up to the current row's
 * last peer (rows equal in the window's ORDER BY) when the window has an
 * ORDER BY, the whole partition when it has none.
 *
 * Each window sorts the statement's rows by its partition and order keys
 * (NULLs as ORDER BY puts them) and walks partitions and peer groups once;
 * the aggregates add a peer group at a time.  A window function's value
 * for row i is vals[w * n + i]; sql_query_run puts it in the node's lit
 * before it computes that row's select list.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql_int.h"

/* A running count, sum, avg, min or max. */
struct acc {
	const struct sql_expr *e;
	int64_t n;                /* rows (count(*)) or values that are not NULL */
	struct sql_value v;       /* sum, min or max so far (n > 0)              */
};

static int acc_add(struct acc *a, const struct sql_value *row, char *err, size_t errlen)
{
	const char *f = a->e->fname;
	struct sql_value v, r;
	int rc, c;

	if (a->e->a == NULL) {          /* count(*) */
		a->n++;
		return LWC_OK;
	}
	if ((rc = sql_eval_value(a->e->a, row, &v, err, errlen)) != LWC_OK)
		return rc;
	if (v.type == SQL_NULL)
		return LWC_OK;
	if (f[0] == 'c') {
		a->n++;
		return LWC_OK;
	}
	if (f[1] == 'i' || f[1] == 'a') {       /* min, max */
		if (a->n++ == 0) {
			a->v = v;
			return LWC_OK;
		}
		if ((c = sql_value_cmp(&v, &a->v)) == SQL_CMP_ERR) {
			lwc_errf(err, errlen, "function %s does not accept mixed types", f);
			return LWC_ERR_ARG;
		}
		if (f[1] == 'a' ? c > 0 : c < 0)
			a->v = v;
		return LWC_OK;
	}
	/* sum, avg: of integers a bigint (checked), as sql_aggregate */
	if (v.type == SQL_TEXT) {
		lwc_errf(err, errlen, "function %s(text) does not exist", f);
		return LWC_ERR_ARG;
	}
	v.i4 = 0;
	if (a->n++ == 0) {
		a->v = v;
		return LWC_OK;
	}
	if ((rc = sql_value_arith(SQL_ADD, &a->v, &v, &r, err, errlen)) != LWC_OK)
		return rc;
	a->v = r;
	return LWC_OK;
}

static struct sql_value acc_value(const struct acc *a)
{
	struct sql_value out;

	memset(&out, 0, sizeof(out));
	if (a->e->fname[0] == 'c') {
		out.type = SQL_INT;
		out.i = a->n;
		return out;
	}
	if (a->n == 0)
		return out;             /* NULL */
	if (a->e->fname[0] == 'a' && a->e->fname[1] == 'v') {
		out.type = SQL_FLOAT;
		out.f = (a->v.type == SQL_INT ? (double)a->v.i : a->v.f) / (double)a->n;
		return out;
	}
	return a->v;
}

/* lag / lead of the row at sorted position p of the partition [p0, p1). */
static int lag_lead(const struct sql_expr *e, struct sql_value *const *rows, const struct keyed *ks,
		    size_t p0, size_t p1, size_t p, struct sql_value *out, char *err, size_t errlen)
{
	const struct sql_value *row = rows[ks[p].idx];
	struct sql_value off = { .type = SQL_INT, .i = 1 };
	int64_t t;
	int rc;

	memset(out, 0, sizeof(*out));
	if (e->c != NULL && (rc = sql_eval_value(e->c, row, &off, err, errlen)) != LWC_OK)
		return rc;
	if (off.type == SQL_NULL)
		return LWC_OK;
	if (off.type != SQL_INT) {
		lwc_errf(err, errlen, "function %s(%s) does not exist", e->fname,
			 sql_vtype_name(off.type));
		return LWC_ERR_ARG;
	}
	/* (a negative offset looks the other way, as in PostgreSQL) */
	if (off.i > INT32_MAX || off.i < INT32_MIN) {
		lwc_errf(err, errlen, "integer out of range");
		return LWC_ERR_ARG;
	}
	t = (int64_t)p + (e->fname[1] == 'a' ? -off.i : off.i);
	if (t >= (int64_t)p0 && t < (int64_t)p1)
		return sql_eval_value(e->a, rows[ks[t].idx], out, err, errlen);
	if (e->b != NULL)
		return sql_eval_value(e->b, row, out, err, errlen);
	return LWC_OK;
}

static int one_window(const struct sql_expr *e, struct sql_value *const *rows, size_t n,
		      struct sql_value *vals, char *err, size_t errlen)
{
	size_t nk = e->nlist, np = e->npart, p0, p1, g0, g1, r;
	struct keyed *ks = malloc((n ? n : 1) * sizeof(*ks));
	struct sql_value *kv = malloc((n > 0 && nk > 0 ? n * nk : 1) * sizeof(*kv));
	struct sql_sortkey *so = calloc(nk ? nk : 1, sizeof(*so));
	/* what the function is, once, not per row */
	enum { ROW_NUMBER, RANK, DENSE_RANK, AGGREGATE, LAG_LEAD } kind =
		strcmp(e->fname, "row_number") == 0 ? ROW_NUMBER :
		strcmp(e->fname, "rank") == 0 ? RANK :
		strcmp(e->fname, "dense_rank") == 0 ? DENSE_RANK :
		strcmp(e->fname, "lag") == 0 || strcmp(e->fname, "lead") == 0 ? LAG_LEAD : AGGREGATE;
	struct sortctx ctx = { nk, so };
	int rc = LWC_OK;

	if (ks == NULL || kv == NULL || so == NULL) {
		lwc_errf(err, errlen, "out of memory");
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	for (size_t j = np; j < nk; j++) {
		so[j].desc = e->wdir[j - np] & 1;
		so[j].nulls_first = (e->wdir[j - np] >> 1) & 1;
	}
	for (r = 0; r < n; r++) {
		ks[r].idx = r;
		ks[r].k = &kv[r * nk];
		for (size_t j = 0; j < nk && rc == LWC_OK; j++)
			rc = sql_eval_value(e->list[j], rows[r], &kv[r * nk + j], err, errlen);
		if (rc != LWC_OK)
			goto out;
	}
	sql_sort_keyed(ks, n, &ctx);
	for (p0 = 0; p0 < n; p0 = p1) {
		size_t dense = 0;
		struct acc a = { e, 0, { 0 } };

		for (p1 = p0 + 1; p1 < n && sql_same_keys(ks[p1].k, ks[p0].k, np); p1++)
			;
		for (g0 = p0; g0 < p1; g0 = g1) {
			for (g1 = g0 + 1; g1 < p1 && sql_same_keys(ks[g1].k + np, ks[g0].k + np, nk - np);
			     g1++)
				;
			dense++;
			if (kind == AGGREGATE) {
				struct sql_value v;

				for (r = g0; r < g1; r++)
					if ((rc = acc_add(&a, rows[ks[r].idx], err, errlen)) != LWC_OK)
						goto out;
				v = acc_value(&a);
				for (r = g0; r < g1; r++)
					vals[ks[r].idx] = v;
				continue;
			}
			for (r = g0; r < g1; r++) {
				struct sql_value *v = &vals[ks[r].idx];

				memset(v, 0, sizeof(*v));
				v->type = SQL_INT;
				if (kind == ROW_NUMBER)
					v->i = (int64_t)(r - p0 + 1);
				else if (kind == RANK)
					v->i = (int64_t)(g0 - p0 + 1);
				else if (kind == DENSE_RANK)
					v->i = (int64_t)dense;
				else if ((rc = lag_lead(e, rows, ks, p0, p1, r, v, err, errlen)) != LWC_OK)
					goto out;
			}
		}
	}
out:
	free(ks);
	free(kv);
	free(so);
	return rc;
}

int sql_window_run(const struct sql_query *q, struct sql_value *const *rows, size_t n,
		   struct sql_value **vals, char *err, size_t errlen)
{
	int rc = LWC_OK;

	*vals = NULL;
	if (q->nwins == 0 || n == 0)
		return LWC_OK;
	if (n > SIZE_MAX / sizeof(**vals) / q->nwins ||
	    (*vals = calloc(q->nwins * n, sizeof(**vals))) == NULL) {
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	for (size_t w = 0; w < q->nwins && rc == LWC_OK; w++)
		rc = one_window(q->wins[w], rows, n, *vals + w * n, err, errlen);
	if (rc != LWC_OK) {
		free(*vals);
		*vals = NULL;
	}
	return rc;
}
