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
int sql_outrow_make(const struct sql_value *v, size_t n, struct sql_outrow *out)
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
			if (v[i].len > 0)
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
	if (sql_outrow_make(x->tmp, x->width, &x->out[x->nout]) != LWC_OK)
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

		sql_sort_keyed(k, nrows, &ctx);
	}
	if (nrows == 0 && q->ngroup == 0) {
		/* no GROUP BY: one group, even of no rows */
		if ((nullrow = calloc(ncols ? ncols : 1, sizeof(*nullrow))) == NULL)
			goto nomem;
		for (j = 0; j < q->naggs; j++)
			if ((rc = sql_aggregate(q->aggs[j], rows, NULL, 0, x->err, x->errlen)) != LWC_OK)
				goto out;
		rc = emit(x, nullrow);
		goto out;
	}
	for (i = 0; i < nrows; i = g) {
		size_t n = 0;

		for (g = i; g < nrows && (q->ngroup == 0 || sql_same_keys(k[g].k, k[i].k, q->ngroup)); g++)
			idx[n++] = k[g].idx;
		for (j = 0; j < q->naggs; j++)
			if ((rc = sql_aggregate(q->aggs[j], rows, idx, n, x->err, x->errlen)) != LWC_OK)
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
	sql_sort_keyed(k, x->nout, &ctx);
	for (i = 0; i < x->nout; i++) {
		if (m > 0 && sql_same_keys(k[i].k, o[m - 1].v, q->ntargets)) {
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
	sql_sort_keyed(k, x->nout, &ctx);
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
	struct arena *scratch;
	struct arena *outer_scratch = sql_eval_get_scratch();
	size_t i, skip, keep;
	int rc = LWC_OK;

	*out = NULL;
	*nout = 0;
	if (q->setop != SQL_SETOP_NONE) {
		lwc_errf(err, errlen, "a set operation runs its SELECTs first");
		return LWC_ERR_ARG;
	}
	if (st->limit == 0)
		return LWC_OK;          /* LIMIT 0: no row, and nothing evaluated
		                           (PostgreSQL's executor never asks its
		                           input for a row, so no error either) */
	scratch = sql_arena_new();
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
	if (!q->from && st->where != NULL && nrows == 1) {
		/* SELECT without FROM: its one row, when the WHERE holds (the
		 * library filters a table's rows before they come here) */
		enum sql_tv t = SQL_UNKNOWN;

		rc = sql_eval_checked(st->where, rows[0], &t, err, errlen);
		if (t != SQL_TRUE)
			nrows = 0;
	}
	if (rc != LWC_OK) {
		/* the WHERE failed */
	} else if (q->grouped) {
		/* an empty group's row of NULLs: a table has at most 255 columns */
		rc = run_grouped(&x, rows, nrows, 256);
	} else if (q->nwins > 0) {
		/* each row with its window functions' values */
		struct sql_value *wv = NULL;

		rc = sql_window_run(q, rows, nrows, &wv, err, errlen);
		for (i = 0; i < nrows && rc == LWC_OK; i++) {
			for (size_t w = 0; w < q->nwins; w++)
				q->wins[w]->lit = wv[w * nrows + i];
			rc = emit(&x, rows[i]);
		}
		free(wv);
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

/* ---- UNION, INTERSECT, EXCEPT ------------------------------------------------------ */

static int keyed_of(struct sql_outrow *rows, size_t n, struct keyed **out)
{
	size_t i;

	*out = NULL;
	if (n == 0)
		return LWC_OK;
	if ((*out = malloc(n * sizeof(**out))) == NULL)
		return LWC_ERR_NOMEM;
	for (i = 0; i < n; i++) {
		(*out)[i].idx = i;
		(*out)[i].k = rows[i].v;
	}
	return LWC_OK;
}

int sql_setop_run(const struct sql_stmt *st, struct sql_outrow *l, size_t nl,
		  struct sql_outrow *r, size_t nr, size_t ncols,
		  struct sql_outrow **out, size_t *nout, char *err, size_t errlen)
{
	const struct sql_query *q = st->q;
	struct sortctx all = { ncols, NULL };
	struct keyed *kl = NULL, *kr = NULL;
	struct sql_outrow *o = NULL;
	char *keepl = NULL, *keepr = NULL;
	size_t i, j, n = 0, skip, keep;
	int rc = LWC_ERR_NOMEM;

	*out = NULL;
	*nout = 0;
	if ((nl + nr > 0 && (o = malloc((nl + nr) * sizeof(*o))) == NULL) ||
	    (nl > 0 && (keepl = calloc(nl, 1)) == NULL) || (nr > 0 && (keepr = calloc(nr, 1)) == NULL) ||
	    keyed_of(l, nl, &kl) != LWC_OK || keyed_of(r, nr, &kr) != LWC_OK)
		goto fail;
	if (q->setop == SQL_UNION && q->setall) {
		if (nl > 0)
			memset(keepl, 1, nl);
		if (nr > 0)
			memset(keepr, 1, nr);
	} else if (q->setop == SQL_UNION) {
		/* the first of each run of equal rows of both sides */
		struct keyed *b = malloc((nl + nr ? nl + nr : 1) * sizeof(*b));

		if (b == NULL)
			goto fail;
		for (i = 0; i < nl; i++)
			b[i] = kl[i];
		for (i = 0; i < nr; i++) {
			b[nl + i] = kr[i];
			b[nl + i].idx = nl + i;
		}
		sql_sort_keyed(b, nl + nr, &all);
		for (i = 0; i < nl + nr; i++)
			if (i == 0 || !sql_same_keys(b[i].k, b[i - 1].k, ncols)) {
				if (b[i].idx < nl)
					keepl[b[i].idx] = 1;
				else
					keepr[b[i].idx - nl] = 1;
			}
		free(b);
	} else {
		/* runs of equal rows on each side, merged */
		sql_sort_keyed(kl, nl, &all);
		sql_sort_keyed(kr, nr, &all);
		for (i = 0, j = 0; i < nl;) {
			size_t ei = i, ej, cl, cr, emit, t;
			int c = 1;

			while (ei < nl && sql_same_keys(kl[ei].k, kl[i].k, ncols))
				ei++;
			while (j < nr) {
				size_t k;

				for (k = 0, c = 0; k < ncols && c == 0; k++) {
					int an = kr[j].k[k].type == SQL_NULL, bn = kl[i].k[k].type == SQL_NULL;

					c = an || bn ? an - bn : sql_cmp_sort(&kr[j].k[k], &kl[i].k[k]);
				}
				if (c >= 0)
					break;
				j++;
			}
			ej = j;
			while (ej < nr && c == 0 && sql_same_keys(kr[ej].k, kl[i].k, ncols))
				ej++;
			cl = ei - i;
			cr = ej - j;
			if (q->setop == SQL_INTERSECT)
				emit = q->setall ? (cl < cr ? cl : cr) : (cr > 0);
			else
				emit = q->setall ? (cl > cr ? cl - cr : 0) : (cr == 0);
			for (t = 0; t < emit; t++)
				keepl[kl[i + t].idx] = 1;
			i = ei;
			j = ej;
		}
	}
	/* left rows then right rows, each in their order */
	for (i = 0; i < nl; i++) {
		if (keepl[i])
			o[n++] = l[i];
		else
			free(l[i].v), free(l[i].text);
	}
	for (i = 0; i < nr; i++) {
		if (keepr[i])
			o[n++] = r[i];
		else
			free(r[i].v), free(r[i].text);
	}
	free(l);
	free(r);
	l = r = NULL;
	nl = nr = 0;
	/* ORDER BY output columns */
	if (q->norder > 0 && n > 1) {
		struct keyed *k = malloc(n * sizeof(*k));
		struct sql_value *keys = malloc(n * q->norder * sizeof(*keys));
		struct sql_outrow *s2 = malloc(n * sizeof(*s2));
		struct sortctx ctx = { q->norder, q->order };

		if (k == NULL || keys == NULL || s2 == NULL) {
			free(k);
			free(keys);
			free(s2);
			sql_outrows_free(o, n);
			o = NULL;
			goto fail;
		}
		for (i = 0; i < n; i++) {
			k[i].idx = i;
			k[i].k = keys + i * q->norder;
			for (j = 0; j < q->norder; j++)
				k[i].k[j] = o[i].v[q->order[j].target];
		}
		sql_sort_keyed(k, n, &ctx);
		for (i = 0; i < n; i++)
			s2[i] = o[k[i].idx];
		free(o);
		o = s2;
		free(k);
		free(keys);
	}
	skip = q->offset > 0 ? ((uint64_t)q->offset > n ? n : (size_t)q->offset) : 0;
	keep = n - skip;
	if (st->limit >= 0 && (uint64_t)st->limit < keep)
		keep = (size_t)st->limit;
	for (i = 0; i < skip; i++)
		free(o[i].v), free(o[i].text);
	for (i = skip + keep; i < n; i++)
		free(o[i].v), free(o[i].text);
	if (skip > 0 && keep > 0)
		memmove(o, o + skip, keep * sizeof(*o));
	if (keep == 0) {
		free(o);
		o = NULL;
	}
	*out = o;
	*nout = keep;
	free(kl);
	free(kr);
	free(keepl);
	free(keepr);
	return LWC_OK;
fail:
	lwc_errf(err, errlen, "out of memory");
	sql_outrows_free(l, nl);
	sql_outrows_free(r, nr);
	free(o);
	free(kl);
	free(kr);
	free(keepl);
	free(keepr);
	return rc;
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
	case SQL_E_WINDOW:
		if (strcmp(e->fname, "lag") == 0 || strcmp(e->fname, "lead") == 0) {
			a = expr_type(e->a, sc);
			return a != SQL_NULL ? a : expr_type(e->b, sc);
		}
		if (strcmp(e->fname, "row_number") == 0 || strstr(e->fname, "rank") != NULL)
			return SQL_INT;
		if (strcmp(e->fname, "count") == 0)
			return SQL_INT;
		return strcmp(e->fname, "avg") == 0 ? SQL_FLOAT : expr_type(e->a, sc);
	case SQL_E_AGG:
		if (strcmp(e->fname, "count") == 0)
			return SQL_INT;
		if (strcmp(e->fname, "avg") == 0)
			return SQL_FLOAT;
		return expr_type(e->a, sc);
	case SQL_E_CMP:
	case SQL_E_IN:
	case SQL_E_BETWEEN:
	case SQL_E_ISNULL:
	case SQL_E_AND:
	case SQL_E_OR:
	case SQL_E_NOT:
	case SQL_E_LIKE:
	case SQL_E_EXISTS:
	case SQL_E_INSUB:
		return SQL_INT;         /* a boolean: 1 / 0 */
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
		if (sql_func_find(e->fname) != NULL)
			return sql_func_find(e->fname)->type;
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
