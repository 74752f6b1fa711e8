/*
 * sql_join.c - joins of a general SELECT, in the client: which part of the
 * WHERE (and of the ON conditions) each table's fetch may use as its index
 * predicate, and the nested-loop join of the fetched rows.
 *
 * A joined row is the columns of every table of FROM one after the other
 * (struct sql_from offset).  Tables join in FROM order; each WHERE
 * conjunct (the top-level AND) is applied as soon as every table it reads
 * has joined, so a join never holds rows its WHERE already rules out.  A
 * LEFT JOIN keeps a row of its left side that no right row matches, with
 * NULLs for the right table, before the WHERE conjuncts of that level.
 *
 * Memory: every fetched row and every joined row is held until the SELECT
 * has run over them; a join of more than SQL_JOIN_MAX_ROWS rows is refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_int.h"

/* The top-level conjuncts of e into v (at most max; more stay whole). */
static size_t conjuncts(struct sql_expr *e, struct sql_expr **v, size_t n, size_t max)
{
	if (e == NULL)
		return n;
	if (e->kind == SQL_E_AND && n + 2 <= max) {
		n = conjuncts(e->a, v, n, max - 1);     /* a slot stays for b */
		return conjuncts(e->b, v, n, max);
	}
	if (n < max)
		v[n++] = e;
	return n;
}

/* The lowest and highest FROM entries e reads (-1, -1 when none). */
static void span(const struct sql_query *q, const struct sql_expr *e, int *lo, int *hi)
{
	size_t i;

	if (e == NULL)
		return;
	if (e->kind == SQL_E_COL && e->col_index >= 0) {
		for (i = q->nfroms; i-- > 0;)
			if ((size_t)e->col_index >= q->froms[i].offset) {
				if (*lo < 0 || (int)i < *lo)
					*lo = (int)i;
				if ((int)i > *hi)
					*hi = (int)i;
				break;
			}
		return;
	}
	span(q, e->a, lo, hi);
	span(q, e->b, lo, hi);
	span(q, e->c, lo, hi);
	for (i = 0; i < e->nlist; i++)
		span(q, e->list[i], lo, hi);
}

/* A copy of e reading table k's own row (column indexes less its offset). */
static struct sql_expr *clone_local(struct arena *ar, const struct sql_expr *e, size_t off)
{
	struct sql_expr *c;
	size_t i;

	if (e == NULL)
		return NULL;
	if ((c = sql_arena_alloc(ar, sizeof(*c))) == NULL)
		return NULL;
	*c = *e;
	if (e->kind == SQL_E_COL)
		c->col_index = (int)((size_t)e->col_index - off);
	if ((e->a && !(c->a = clone_local(ar, e->a, off))) ||
	    (e->b && !(c->b = clone_local(ar, e->b, off))) ||
	    (e->c && !(c->c = clone_local(ar, e->c, off))))
		return NULL;
	if (e->nlist > 0) {
		if ((c->list = sql_arena_alloc(ar, e->nlist * sizeof(*c->list))) == NULL)
			return NULL;
		for (i = 0; i < e->nlist; i++)
			if ((c->list[i] = clone_local(ar, e->list[i], off)) == NULL)
				return NULL;
	}
	return c;
}

#define MAX_CONJ 256

int sql_join_pushdown(const struct sql_stmt *st, size_t k, struct sql_expr **out)
{
	const struct sql_query *q = st->q;
	struct sql_expr *v[MAX_CONJ], *all = NULL;
	size_t n = 0, i;
	int nullable = q->froms[k].join == SQL_JOIN_LEFT;

	*out = NULL;
	/* WHERE conjuncts of this table alone, unless its rows may be
	 * NULL-extended (then the WHERE sees the NULLs, not the rows) */
	if (!nullable)
		n = conjuncts(st->where, v, 0, MAX_CONJ);
	/* the ON of the join that brings this table in, where it reads only it */
	if (q->froms[k].on != NULL)
		n = conjuncts(q->froms[k].on, v, n, MAX_CONJ);
	for (i = 0; i < n; i++) {
		int lo = -1, hi = -1;
		struct sql_expr *c, *a;

		span(q, v[i], &lo, &hi);
		if (lo != (int)k || hi != (int)k)
			continue;
		if ((c = clone_local(st->arena, v[i], q->froms[k].offset)) == NULL)
			return LWC_ERR_NOMEM;
		if (all == NULL) {
			all = c;
			continue;
		}
		if ((a = sql_arena_alloc(st->arena, sizeof(*a))) == NULL)
			return LWC_ERR_NOMEM;
		a->kind = SQL_E_AND;
		a->col_index = -1;
		a->a = all;
		a->b = c;
		a->height = 1 + (all->height > c->height ? all->height : c->height);
		if (a->height > SQL_MAX_HEIGHT)
			break;
		all = a;
	}
	*out = all;
	return LWC_OK;
}

struct level {
	struct sql_expr *conj[MAX_CONJ];
	size_t n;
};

struct joined {
	struct sql_value **rows;
	size_t n, cap;
};

static int keep(struct joined *j, const struct sql_value *row, size_t width)
{
	struct sql_value *r;

	if (j->n >= SQL_JOIN_MAX_ROWS)
		return LWC_ERR_ARG;
	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 256;
		struct sql_value **p = realloc(j->rows, cap * sizeof(*p));

		if (p == NULL)
			return LWC_ERR_NOMEM;
		j->rows = p;
		j->cap = cap;
	}
	if ((r = malloc((width ? width : 1) * sizeof(*r))) == NULL)
		return LWC_ERR_NOMEM;
	memcpy(r, row, width * sizeof(*r));
	j->rows[j->n++] = r;
	return LWC_OK;
}

void sql_join_free(struct sql_value **rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(rows[i]);
	free(rows);
}

/* Every conjunct of lv TRUE on row: 1, 0, or <0 (error in err). */
static int passes(const struct level *lv, const struct sql_value *row, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < lv->n; i++) {
		enum sql_tv t;
		int rc = sql_eval_checked(lv->conj[i], row, &t, err, errlen);

		if (rc != LWC_OK)
			return -rc;
		if (t != SQL_TRUE)
			return 0;
	}
	return 1;
}

static int fail_rc(int rc, char *err, size_t errlen)
{
	if (rc == LWC_ERR_NOMEM)
		lwc_errf(err, errlen, "out of memory");
	else if (rc == LWC_ERR_ARG)
		lwc_errf(err, errlen, "the join holds more than %d rows (LWC joins in memory)",
			 SQL_JOIN_MAX_ROWS);
	return rc;
}

int sql_join_run(const struct sql_stmt *st, struct sql_value *const *const *tabs,
		 const size_t *ntab, struct sql_value ***out, size_t *nout, char *err, size_t errlen)
{
	const struct sql_query *q = st->q;
	size_t nf = q->nfroms, width = 0, i, k, r, c;
	struct level *lv = NULL;
	struct sql_expr *v[MAX_CONJ];
	struct joined cur = { 0 }, next = { 0 };
	struct sql_value *tmp = NULL;
	size_t n;
	int rc = LWC_OK, p;

	*out = NULL;
	*nout = 0;
	for (k = 0; k < nf; k++)
		width += q->froms[k].ncols;
	if ((lv = calloc(nf, sizeof(*lv))) == NULL || (tmp = calloc(width + 1, sizeof(*tmp))) == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	/* each WHERE conjunct at the level where its last table joins */
	n = conjuncts(st->where, v, 0, MAX_CONJ);
	for (i = 0; i < n; i++) {
		int lo = -1, hi = -1;

		span(q, v[i], &lo, &hi);
		if (hi < 0)
			hi = 0;
		lv[hi].conj[lv[hi].n++] = v[i];
	}
	for (r = 0; r < ntab[0]; r++) {
		memset(tmp, 0, width * sizeof(*tmp));
		memcpy(tmp, tabs[0][r], q->froms[0].ncols * sizeof(*tmp));
		if ((p = passes(&lv[0], tmp, err, errlen)) < 0) {
			rc = -p;
			goto out_err;
		}
		if (p && (rc = keep(&cur, tmp, width)) != LWC_OK)
			goto out;
	}
	for (k = 1; k < nf; k++) {
		const struct sql_from *f = &q->froms[k];

		for (c = 0; c < cur.n; c++) {
			int matched = 0;

			memcpy(tmp, cur.rows[c], width * sizeof(*tmp));
			for (r = 0; r < ntab[k]; r++) {
				memcpy(tmp + f->offset, tabs[k][r], f->ncols * sizeof(*tmp));
				if (f->on != NULL) {
					enum sql_tv t;

					if ((rc = sql_eval_checked(f->on, tmp, &t, err, errlen)) != LWC_OK)
						goto out_err;
					if (t != SQL_TRUE)
						continue;
				}
				matched = 1;
				if ((p = passes(&lv[k], tmp, err, errlen)) < 0) {
					rc = -p;
					goto out_err;
				}
				if (p && (rc = keep(&next, tmp, width)) != LWC_OK)
					goto out;
			}
			if (!matched && f->join == SQL_JOIN_LEFT) {
				memset(tmp + f->offset, 0, f->ncols * sizeof(*tmp));
				if ((p = passes(&lv[k], tmp, err, errlen)) < 0) {
					rc = -p;
					goto out_err;
				}
				if (p && (rc = keep(&next, tmp, width)) != LWC_OK)
					goto out;
			}
		}
		sql_join_free(cur.rows, cur.n);
		cur = next;
		memset(&next, 0, sizeof(next));
	}
	*out = cur.rows;
	*nout = cur.n;
	cur.rows = NULL;
	cur.n = 0;
out:
	if (rc != LWC_OK)
		fail_rc(rc, err, errlen);
out_err:
	sql_join_free(cur.rows, cur.n);
	sql_join_free(next.rows, next.n);
	free(lv);
	free(tmp);
	return rc;
}

/* The type family of a column: INT and BIGINT compare alike. */
static int family(enum sql_ctype t)
{
	return t == SQL_CT_BIGINT ? SQL_CT_INT : (int)t;
}

static int from_of(const struct sql_query *q, int col)
{
	size_t i;

	for (i = q->nfroms; i-- > 0;)
		if ((size_t)col >= q->froms[i].offset)
			return (int)i;
	return -1;
}

/* Whether conjunct e is "column of k = column of a fetched table"; sets
 * the columns (global indexes). */
static int link_of(const struct sql_query *q, const struct sql_expr *e, size_t k,
		   const int *fetched, const struct sql_schema *const *scs, int *kcol, int *jcol)
{
	const struct sql_expr *a = e->a, *b = e->b;
	int fa, fb;

	if (e->kind != SQL_E_CMP || e->op != SQL_EQ || a == NULL || b == NULL ||
	    a->kind != SQL_E_COL || b->kind != SQL_E_COL || a->col_index < 0 || b->col_index < 0)
		return 0;
	fa = from_of(q, a->col_index);
	fb = from_of(q, b->col_index);
	if (fb == (int)k) {
		const struct sql_expr *t = a;
		int ft = fa;

		a = b;
		b = t;
		fa = fb;
		fb = ft;
	}
	if (fa != (int)k || fb < 0 || fb == (int)k || !fetched[fb])
		return 0;
	if (family(scs[fa]->cols[(size_t)a->col_index - q->froms[fa].offset].type) !=
	    family(scs[fb]->cols[(size_t)b->col_index - q->froms[fb].offset].type))
		return 0;
	*kcol = a->col_index;
	*jcol = b->col_index;
	return 1;
}

int sql_join_link(const struct sql_stmt *st, size_t k, const int *fetched,
		  const struct sql_schema *const *scs, int *kcol, int *jcol)
{
	const struct sql_query *q = st->q;
	struct sql_expr *v[MAX_CONJ];
	size_t n, i, m;

	/* WHERE: a row of k without a partner fails the equality, NULL-extended
	 * or not */
	n = conjuncts(st->where, v, 0, MAX_CONJ);
	for (i = 0; i < n; i++)
		if (link_of(q, v[i], k, fetched, scs, kcol, jcol))
			return 1;
	/* ON: of an inner join on either side; of a LEFT JOIN only for its
	 * right table (its left rows stay, NULL-extended) */
	for (m = 1; m < q->nfroms; m++) {
		if (q->froms[m].on == NULL || (q->froms[m].join == SQL_JOIN_LEFT && m != k))
			continue;
		n = conjuncts(q->froms[m].on, v, 0, MAX_CONJ);
		for (i = 0; i < n; i++)
			if (link_of(q, v[i], k, fetched, scs, kcol, jcol))
				return 1;
	}
	return 0;
}
