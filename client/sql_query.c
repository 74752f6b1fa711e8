/*
 * sql_query.c - a general SELECT run in the client over the decrypted rows
 * its WHERE fetched: grouping and aggregates (COUNT, SUM, AVG, MIN, MAX,
 * with DISTINCT), HAVING, the select list, DISTINCT, ORDER BY and OFFSET /
 * LIMIT, with PostgreSQL's semantics (NULLs group together and sort last
 * ascending, first descending; SUM of integers is checked against 64 bits;
 * COUNT of nothing is 0, the others NULL).
 *
 * Memory: grouping, DISTINCT and sorting need the whole input; the rows
 * are held as the library fetched them (an array of row pointers) and the
 * output rows are built one by one, each a malloc'ed block of values and
 * text.  Text that functions make (lower, ||, CAST) lives in an arena for
 * the run.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_int.h"

/* NULLs after everything (PostgreSQL's ascending order); mixed types
 * (already refused by the expressions) compare equal. */
static int cmp_sort(const struct sql_value *a, const struct sql_value *b)
{
	int c;

	if (a->type == SQL_NULL || b->type == SQL_NULL)
		return (a->type == SQL_NULL) - (b->type == SQL_NULL);
	c = sql_value_cmp(a, b);
	return c == SQL_CMP_ERR ? 0 : c;
}

struct keyed {
	size_t idx;               /* input row or output row                   */
	struct sql_value *k;      /* nkeys values                               */
};

struct sortctx {
	size_t nkeys;
	const struct sql_sortkey *order;   /* NULL: all ascending          */
};

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
			c = cmp_sort(&a->k[i], &b->k[i]);
			if (c != 0)
				return o->desc ? -c : c;
		} else if ((c = cmp_sort(&a->k[i], &b->k[i])) != 0) {
			return c;
		}
	}
	/* stable: input order */
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static void sort_keyed(struct keyed *v, size_t n, const struct sortctx *ctx)
{
	const struct sortctx *old = sort_ctx;

	sort_ctx = ctx;
	qsort(v, n, sizeof(*v), cmp_keyed);
	sort_ctx = old;
}

static int same_keys(const struct sql_value *a, const struct sql_value *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if ((a[i].type == SQL_NULL) != (b[i].type == SQL_NULL))
			return 0;
		if (a[i].type != SQL_NULL && cmp_sort(&a[i], &b[i]) != 0)
			return 0;
	}
	return 1;
}

/* One aggregate over the rows rows[idx[0..n)]. */
static int aggregate(struct sql_expr *agg, struct sql_value *const *rows, const size_t *idx,
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
		sort_keyed(k, nv, &ctx);
		for (i = 0; i < nv; i++)
			if (m == 0 || !same_keys(k[i].k, k[m - 1].k, 1))
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

static void outrow_free(struct sql_outrow *r)
{
	free(r->v);
	free(r->text);
}

void sql_outrows_free(struct sql_outrow *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		outrow_free(&rows[i]);
	free(rows);
}

/* The values v[0..n) as an output row of its own (text copied). */
static int make_outrow(const struct sql_value *v, size_t n, struct sql_outrow *out)
{
	size_t i, tl = 0, o = 0;

	for (i = 0; i < n; i++)
		if (v[i].type == SQL_TEXT)
			tl += v[i].len + 1;
	out->v = malloc((n ? n : 1) * sizeof(*out->v));
	out->text = malloc(tl ? tl : 1);
	if (out->v == NULL || out->text == NULL) {
		outrow_free(out);
		return LWC_ERR_NOMEM;
	}
	for (i = 0; i < n; i++) {
		out->v[i] = v[i];
		if (v[i].type == SQL_TEXT) {
			memcpy(out->text + o, v[i].s, v[i].len);
			out->text[o + v[i].len] = '\0';
			out->v[i].s = out->text + o;
			o += v[i].len + 1;
		}
	}
	return LWC_OK;
}

struct run {
	const struct sql_stmt *st;
	const struct sql_query *q;
	size_t width;             /* targets + order keys                      */
	struct sql_outrow *out;
	size_t nout, capout;
	struct sql_value *tmp;    /* width values                              */
	char *err;
	size_t errlen;
};

/* Evaluate the select list and the ORDER BY keys on one row (with the
 * aggregates of its group set) and keep the result when HAVING holds. */
static int emit(struct run *x, const struct sql_value *row)
{
	const struct sql_query *q = x->q;
	size_t i;
	int rc;

	if (q->having != NULL) {
		enum sql_tv t;

		if ((rc = sql_eval_checked(q->having, row, &t, x->err, x->errlen)) != LWC_OK)
			return rc;
		if (t != SQL_TRUE)
			return LWC_OK;
	}
	for (i = 0; i < q->ntargets; i++)
		if ((rc = sql_eval_value(q->targets[i].e, row, &x->tmp[i], x->err, x->errlen)) != LWC_OK)
			return rc;
	for (i = 0; i < q->norder; i++) {
		struct sql_value *k = &x->tmp[q->ntargets + i];

		if (q->order[i].target >= 0)
			*k = x->tmp[q->order[i].target];
		else if ((rc = sql_eval_value(q->order[i].e, row, k, x->err, x->errlen)) != LWC_OK)
			return rc;
	}
	if (x->nout == x->capout) {
		size_t cap = x->capout ? x->capout * 2 : 64;
		struct sql_outrow *p = realloc(x->out, cap * sizeof(*p));

		if (p == NULL)
			goto nomem;
		x->out = p;
		x->capout = cap;
	}
	if (make_outrow(x->tmp, x->width, &x->out[x->nout]) != LWC_OK)
		goto nomem;
	x->nout++;
	return LWC_OK;
nomem:
	lwc_errf(x->err, x->errlen, "out of memory");
	return LWC_ERR_NOMEM;
}

static int run_grouped(struct run *x, struct sql_value *const *rows, size_t nrows, size_t ncols)
{
	const struct sql_query *q = x->q;
	struct keyed *k = NULL;
	struct sql_value *keys = NULL, *nullrow = NULL;
	size_t *idx = NULL, i, j, g;
	int rc = LWC_OK;

	if (nrows > 0 && ((k = malloc(nrows * sizeof(*k))) == NULL ||
			  (idx = malloc(nrows * sizeof(*idx))) == NULL ||
			  (q->ngroup > 0 &&
			   (keys = calloc(nrows * q->ngroup, sizeof(*keys))) == NULL)))
		goto nomem;
	for (i = 0; i < nrows; i++) {
		k[i].idx = i;
		k[i].k = keys != NULL ? keys + i * q->ngroup : NULL;
		for (j = 0; j < q->ngroup; j++)
			if ((rc = sql_eval_value(q->group[j], rows[i], &k[i].k[j], x->err,
						 x->errlen)) != LWC_OK)
				goto out;
	}
	if (q->ngroup > 0 && nrows > 1) {
		struct sortctx ctx = { q->ngroup, NULL };

		sort_keyed(k, nrows, &ctx);
	}
	if (nrows == 0 && q->ngroup == 0) {
		/* no GROUP BY: one group, even of no rows */
		if ((nullrow = calloc(ncols ? ncols : 1, sizeof(*nullrow))) == NULL)
			goto nomem;
		for (j = 0; j < q->naggs; j++)
			if ((rc = aggregate(q->aggs[j], rows, NULL, 0, x->err, x->errlen)) != LWC_OK)
				goto out;
		rc = emit(x, nullrow);
		goto out;
	}
	for (i = 0; i < nrows; i = g) {
		size_t n = 0;

		for (g = i; g < nrows && (q->ngroup == 0 || same_keys(k[g].k, k[i].k, q->ngroup)); g++)
			idx[n++] = k[g].idx;
		for (j = 0; j < q->naggs; j++)
			if ((rc = aggregate(q->aggs[j], rows, idx, n, x->err, x->errlen)) != LWC_OK)
				goto out;
		/* plain columns of the select list read the group's first row */
		if ((rc = emit(x, rows[idx[0]])) != LWC_OK)
			goto out;
	}
	goto out;
nomem:
	lwc_errf(x->err, x->errlen, "out of memory");
	rc = LWC_ERR_NOMEM;
out:
	free(k);
	free(idx);
	free(keys);
	free(nullrow);
	return rc;
}

/* Keep the first of each run of equal select lists (rows sorted by them). */
static int distinct(struct run *x)
{
	const struct sql_query *q = x->q;
	struct keyed *k;
	struct sql_outrow *o;
	struct sortctx ctx = { q->ntargets, NULL };
	size_t i, m = 0;

	if (x->nout < 2)
		return LWC_OK;
	if ((k = malloc(x->nout * sizeof(*k))) == NULL ||
	    (o = malloc(x->nout * sizeof(*o))) == NULL) {
		free(k);
		lwc_errf(x->err, x->errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	for (i = 0; i < x->nout; i++) {
		k[i].idx = i;
		k[i].k = x->out[i].v;
	}
	sort_keyed(k, x->nout, &ctx);
	for (i = 0; i < x->nout; i++) {
		if (m > 0 && same_keys(k[i].k, o[m - 1].v, q->ntargets)) {
			outrow_free(&x->out[k[i].idx]);
			continue;
		}
		o[m++] = x->out[k[i].idx];
	}
	free(k);
	free(x->out);
	x->out = o;
	x->nout = m;
	x->capout = x->nout;
	return LWC_OK;
}

static int order(struct run *x)
{
	const struct sql_query *q = x->q;
	struct keyed *k;
	struct sql_outrow *o;
	struct sortctx ctx = { q->norder, q->order };
	size_t i;

	if (x->nout < 2 || q->norder == 0)
		return LWC_OK;
	if ((k = malloc(x->nout * sizeof(*k))) == NULL ||
	    (o = malloc(x->nout * sizeof(*o))) == NULL) {
		free(k);
		lwc_errf(x->err, x->errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	for (i = 0; i < x->nout; i++) {
		k[i].idx = i;
		k[i].k = x->out[i].v + q->ntargets;
	}
	sort_keyed(k, x->nout, &ctx);
	for (i = 0; i < x->nout; i++)
		o[i] = x->out[k[i].idx];
	free(k);
	free(x->out);
	x->out = o;
	return LWC_OK;
}

int sql_query_run(const struct sql_stmt *st, struct sql_value *const *rows, size_t nrows,
		  struct sql_outrow **out, size_t *nout, char *err, size_t errlen)
{
	const struct sql_query *q = st->q;
	struct run x;
	struct arena *scratch = sql_arena_new();
	struct arena *outer_scratch = sql_eval_get_scratch();
	size_t i, skip, keep;
	int rc = LWC_OK;

	*out = NULL;
	*nout = 0;
	memset(&x, 0, sizeof(x));
	x.st = st;
	x.q = q;
	x.err = err;
	x.errlen = errlen;
	x.width = q->ntargets + q->norder;
	if (scratch == NULL || (x.tmp = calloc(x.width ? x.width : 1, sizeof(*x.tmp))) == NULL) {
		sql_arena_destroy(scratch);
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	sql_eval_set_scratch(scratch);
	if (q->grouped) {
		/* an empty group's row of NULLs: a table has at most 255 columns */
		rc = run_grouped(&x, rows, nrows, 256);
	} else {
		for (i = 0; i < nrows && rc == LWC_OK; i++)
			rc = emit(&x, rows[i]);
	}
	if (rc == LWC_OK && q->distinct)
		rc = distinct(&x);
	if (rc == LWC_OK)
		rc = order(&x);
	sql_eval_set_scratch(outer_scratch);
	sql_arena_destroy(scratch);
	free(x.tmp);
	if (rc != LWC_OK) {
		sql_outrows_free(x.out, x.nout);
		return rc;
	}
	/* OFFSET, LIMIT */
	skip = q->offset > 0 ? ((uint64_t)q->offset > x.nout ? x.nout : (size_t)q->offset) : 0;
	keep = x.nout - skip;
	if (st->limit >= 0 && (uint64_t)st->limit < keep)
		keep = (size_t)st->limit;
	for (i = 0; i < skip; i++)
		outrow_free(&x.out[i]);
	for (i = skip + keep; i < x.nout; i++)
		outrow_free(&x.out[i]);
	if (skip > 0 && keep > 0)
		memmove(x.out, x.out + skip, keep * sizeof(*x.out));
	*out = x.out;
	*nout = keep;
	if (keep == 0) {
		free(x.out);
		*out = NULL;
	}
	return LWC_OK;
}

static enum sql_vtype expr_type(const struct sql_expr *e, const struct sql_schema *sc)
{
	enum sql_vtype a, b;
	size_t i;

	if (e == NULL)
		return SQL_NULL;
	switch (e->kind) {
	case SQL_E_LIT:
		return e->lit.type;
	case SQL_E_COL:
		if (sc == NULL || e->col_index < 0 || (size_t)e->col_index >= sc->ncols)
			return SQL_NULL;
		switch (sc->cols[e->col_index].type) {
		case SQL_CT_FLOAT: return SQL_FLOAT;
		case SQL_CT_TEXT: return SQL_TEXT;
		default: return SQL_INT;
		}
	case SQL_E_NEG:
		return expr_type(e->a, sc);
	case SQL_E_ARITH:
		a = expr_type(e->a, sc);
		b = expr_type(e->b, sc);
		return a == SQL_FLOAT || b == SQL_FLOAT ? SQL_FLOAT : a == SQL_NULL ? b : a;
	case SQL_E_AGG:
		if (strcmp(e->fname, "count") == 0)
			return SQL_INT;
		if (strcmp(e->fname, "avg") == 0)
			return SQL_FLOAT;
		return expr_type(e->a, sc);
	case SQL_E_CAST:
		return e->cast_type == SQL_CT_TEXT ? SQL_TEXT : e->cast_type == SQL_CT_FLOAT ? SQL_FLOAT
											: SQL_INT;
	case SQL_E_CASE:
		if (e->rtype == SQL_FLOAT)
			return SQL_FLOAT;
		for (i = 1; i < e->nlist; i += 2)
			if ((a = expr_type(e->list[i], sc)) != SQL_NULL)
				return a;
		return expr_type(e->b, sc);
	case SQL_E_FUNC:
		if (strcmp(e->fname, "length") == 0 || strcmp(e->fname, "char_length") == 0)
			return SQL_INT;
		if (strcmp(e->fname, "round") == 0)
			return e->nlist == 1 && expr_type(e->list[0], sc) == SQL_INT ? SQL_INT : SQL_FLOAT;
		if (strcmp(e->fname, "lower") == 0 || strcmp(e->fname, "upper") == 0 ||
		    strcmp(e->fname, "||") == 0 || strncmp(e->fname, "substr", 6) == 0)
			return SQL_TEXT;
		if (e->rtype == SQL_FLOAT)
			return SQL_FLOAT;
		for (i = 0; i < e->nlist; i++)
			if ((a = expr_type(e->list[i], sc)) != SQL_NULL)
				return a;
		return SQL_NULL;
	default:
		return SQL_NULL;
	}
}

/* FLOAT when one of e's result branches is a FLOAT. */
static enum sql_vtype branch_type(const struct sql_expr *e, const struct sql_schema *sc)
{
	size_t i;

	if (e->kind == SQL_E_CASE) {
		for (i = 1; i < e->nlist; i += 2)
			if (expr_type(e->list[i], sc) == SQL_FLOAT)
				return SQL_FLOAT;
		return e->b != NULL && expr_type(e->b, sc) == SQL_FLOAT ? SQL_FLOAT : SQL_NULL;
	}
	if (strcmp(e->fname, "coalesce") == 0 || strcmp(e->fname, "greatest") == 0 ||
	    strcmp(e->fname, "least") == 0 || strcmp(e->fname, "nullif") == 0)
		for (i = 0; i < e->nlist; i++)
			if (expr_type(e->list[i], sc) == SQL_FLOAT)
				return SQL_FLOAT;
	return SQL_NULL;
}

static void settypes(struct sql_expr *e, const struct sql_schema *sc)
{
	size_t i;

	if (e == NULL)
		return;
	settypes(e->a, sc);
	settypes(e->b, sc);
	settypes(e->c, sc);
	for (i = 0; i < e->nlist; i++)
		settypes(e->list[i], sc);
	if (e->kind == SQL_E_CASE || e->kind == SQL_E_FUNC)
		e->rtype = branch_type(e, sc);
}

void sql_query_settypes(struct sql_stmt *st, const struct sql_schema *sc)
{
	struct sql_query *q = st->q;
	size_t i;

	settypes(st->where, sc);
	if (q == NULL)
		return;
	for (i = 0; i < q->ntargets; i++)
		settypes(q->targets[i].e, sc);
	for (i = 0; i < q->ngroup; i++)
		settypes(q->group[i], sc);
	settypes(q->having, sc);
	for (i = 0; i < q->norder; i++)
		settypes(q->order[i].e, sc);
	for (i = 0; i < q->nfroms; i++)
		settypes(q->froms[i].on, sc);
}

enum sql_vtype sql_query_coltype(const struct sql_stmt *st, size_t i, const struct sql_schema *sc)
{
	if (st->q == NULL || i >= st->q->ntargets)
		return SQL_NULL;
	return expr_type(st->q->targets[i].e, sc);
}
