/*
 * lwc_subquery.c - liblwc: subqueries (IN, EXISTS, scalar; correlated over one
 * table), resolved before dispatch.
 */
#include <string.h>

#include <sodium.h>

#include "sql_int.h"
#include "lwc_int.h"

/* ---- subqueries ------------------------------------------------------------------- */

/* Subqueries run first, each as a SELECT of its own (one access pattern of
 * the proxy's like any other statement), and the expression that held one
 * is rewritten with its result: x IN (SELECT ...) becomes an IN list of
 * literals (so the outer WHERE gets an exact index predicate), EXISTS a
 * constant condition, a scalar subquery a literal.  Uncorrelated
 * subqueries only: each runs once. */
struct subq {
	lwc_conn *c;
	struct sql_stmt *root;    /* the statement lwc_exec runs               */
	struct arena *ar;         /* the outer statement's: literals live there */
	lwc_result *err;          /* the first error                            */
	int depth;
};

/* The fetched rows of correlated subqueries, freed with the statement. */
struct corr_fetch {
	lwc_result *r;
	struct sql_value **rows;
	struct corr_fetch *next;
};

static void corr_free(void *p)
{
	struct corr_fetch *f = p, *next;

	for (; f != NULL; f = next) {
		next = f->next;
		lwc_result_free(f->r);
		free(f->rows);
		free(f);
	}
}

static int subq_fail(struct subq *s, lwc_result *r);

/* The conjuncts of where that read only the subquery's own table
 * (columns below base), as its fetch's condition. */
static struct sql_expr *own_part(struct arena *ar, struct sql_expr *e, size_t base)
{
	struct sql_expr *a, *b, *n;

	if (e == NULL)
		return NULL;
	if (e->kind == SQL_E_AND) {
		a = own_part(ar, e->a, base);
		b = own_part(ar, e->b, base);
		if (a == NULL || b == NULL)
			return a != NULL ? a : b;
		if ((n = sql_arena_alloc(ar, sizeof(*n))) == NULL)
			return NULL;
		*n = *e;
		n->a = a;
		n->b = b;
		return n;
	}
	{
		/* every column below base, and no subquery */
		struct sql_expr *stack[SQL_MAX_HEIGHT + 8];
		size_t sp = 0;

		stack[sp++] = e;
		while (sp > 0) {
			const struct sql_expr *x = stack[--sp];

			if (x->kind == SQL_E_COL && (x->col_index < 0 || (size_t)x->col_index >= base))
				return NULL;
			if (x->kind == SQL_E_EXISTS || x->kind == SQL_E_INSUB ||
			    x->kind == SQL_E_SCALARSUB)
				return NULL;
			if (sp + 3 + x->nlist > sizeof(stack) / sizeof(stack[0]))
				return NULL;
			if (x->a)
				stack[sp++] = x->a;
			if (x->b)
				stack[sp++] = x->b;
			if (x->c)
				stack[sp++] = x->c;
			for (size_t i = 0; i < x->nlist && sp < sizeof(stack) / sizeof(stack[0]); i++)
				stack[sp++] = x->list[i];
		}
	}
	return e;
}

/* A subquery of outer that reads outer's columns: fetch its table once
 * (with the part of its WHERE that reads only it) for the evaluation per
 * outer row.  1 when it is correlated and ready, 0 when it is not
 * correlated, -1 on error. */
static int prepare_correlated(struct subq *s, struct sql_stmt *outer, struct sql_stmt *sub)
{
	struct ltable *ot, *it;
	struct corr_fetch *f;
	char err[512];
	int errpos = -1;

	if (sub->q == NULL || !sub->q->from || sub->q->nfroms > 0 || outer->table[0] == '\0' ||
	    (outer->q != NULL && outer->q->nfroms > 0))
		return 0;
	if ((ot = catalog_find(s->c, outer->table, 1)) == NULL ||
	    (it = catalog_find(s->c, sub->table, 1)) == NULL)
		return 0;               /* the ordinary path reports it */
	if (sql_bind_outer(sub, &it->sc, &ot->sc, NULL, err, sizeof(err), &errpos) != LWC_OK)
		return subq_fail(s, result_error(NULL, LWC_ERR_SCHEMA, errpos, "%s", err));
	if (!sub->q->correlated)
		return 0;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return subq_fail(s, result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory"));
	f->r = fetch_rows(s->c, sub, it, own_part(sub->arena, sub->where, sub->q->corr_base));
	f->next = s->root->attach;
	s->root->attach = f;
	s->root->attach_free = corr_free;
	if (f->r->status == LWC_RESULT_ERROR)
		return subq_fail(s, result_error(NULL, f->r->errcode, -1, "%s", f->r->errmsg));
	if (f->r->nrows > 0 && (f->rows = malloc(f->r->nrows * sizeof(*f->rows))) == NULL)
		return subq_fail(s, result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory"));
	for (size_t i = 0; i < f->r->nrows; i++)
		f->rows[i] = f->r->rows[i].v;
	sub->q->corr_rows = f->rows;
	sub->q->ncorr_rows = f->r->nrows;
	return 1;
}

static int resolve_stmt(struct subq *s, struct sql_stmt *st);

/* A literal node holding v (text copied into the arena). */
static struct sql_expr *lit_node(struct subq *s, const struct sql_value *v, int pos)
{
	struct sql_expr *e = sql_arena_alloc(s->ar, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->kind = SQL_E_LIT;
	e->pos = pos;
	e->col_index = -1;
	e->height = 1;
	e->lit = *v;
	if (v->type == SQL_TEXT) {
		char *p = sql_arena_alloc(s->ar, v->len + 1);

		if (p == NULL)
			return NULL;
		memcpy(p, v->s, v->len);
		p[v->len] = '\0';
		e->lit.s = p;
	}
	return e;
}

/* e becomes the constant condition (1 = want). */
static int const_cond(struct subq *s, struct sql_expr *e, int want)
{
	struct sql_value one = { .type = SQL_INT, .i = 1 }, w = { .type = SQL_INT, .i = want };

	e->kind = SQL_E_CMP;
	e->op = SQL_EQ;
	e->negated = 0;
	e->a = lit_node(s, &one, e->pos);
	e->b = lit_node(s, &w, e->pos);
	e->height = 2;
	return e->a && e->b ? 0 : -1;
}

static int subq_fail(struct subq *s, lwc_result *r)
{
	if (s->err == NULL)
		s->err = r;
	else
		lwc_result_free(r);
	return -1;
}

static int resolve_one(struct subq *s, struct sql_stmt *outer, struct sql_expr *e)
{
	struct sql_stmt *sub = e->sub;
	struct sql_expr **vals = NULL;
	size_t n = 0, cap = 0;
	lwc_result *r;
	enum lwc_type coltype;
	int rc;

	if (resolve_stmt(s, sub) != 0)
		return -1;
	if ((rc = prepare_correlated(s, outer, sub)) != 0)
		return rc < 0 ? -1 : 0;
	r = exec_select(s->c, sub, 1);
	if (r->status == LWC_RESULT_ERROR) {
		/* the error outlives the statement (and the subquery in its arena) */
		lwc_result *er = result_error(NULL, r->errcode, r->errpos, "%s", lwc_result_error(r));

		lwc_result_free(r);
		return subq_fail(s, er);
	}
	if (e->kind != SQL_E_EXISTS && r->ncols != 1) {
		lwc_result_free(r);
		return subq_fail(s, result_error(NULL, LWC_ERR_ARG, e->pos, e->kind == SQL_E_INSUB ?
						 "subquery has too many columns" :
						 "subquery must return only one column"));
	}
	while ((rc = lwc_result_next(r)) == 1) {
		const struct sql_value *v = result_cur_value(r, 0);
		struct sql_expr *l;

		if (e->kind == SQL_E_EXISTS) {
			n = 1;
			break;
		}
		if (e->kind == SQL_E_SCALARSUB && n == 1) {
			lwc_result_free(r);
			return subq_fail(s, result_error(NULL, LWC_ERR_ARG, e->pos, "more than one row "
							 "returned by a subquery used as an expression"));
		}
		if (n == cap) {
			vals = sql_arena_grow(s->ar, vals, n, &cap, sizeof(*vals));
			if (vals == NULL)
				break;
		}
		if ((l = lit_node(s, v, e->pos)) == NULL)
			break;
		vals[n++] = l;
	}
	if (rc < 0) {
		lwc_result *er = result_error(NULL, r->errcode ? r->errcode : LWC_ERR_ARG, -1, "%s",
					      lwc_result_error(r));
		lwc_result_free(r);
		return subq_fail(s, er);
	}
	coltype = e->kind != SQL_E_EXISTS ? lwc_result_coltype(r, 0) : LWC_TYPE_NULL;
	lwc_result_free(r);
	if (rc == 1 && e->kind != SQL_E_EXISTS)
		return subq_fail(s, result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory"));
	switch (e->kind) {
	case SQL_E_EXISTS:
		return const_cond(s, e, n > 0);
	case SQL_E_SCALARSUB: {
		struct sql_value nul = { .type = SQL_NULL };
		struct sql_expr *l = n == 1 ? vals[0] : lit_node(s, &nul, e->pos);

		if (l != NULL && l->lit.type == SQL_NULL && coltype != LWC_TYPE_NULL) {
			/* no row, or NULL: a NULL of the subquery's column type
			 * (CAST(NULL AS type)), so that the column keeps its type */
			struct sql_expr *c = lit_node(s, &nul, e->pos);

			if (c != NULL) {
				c->kind = SQL_E_CAST;
				c->cast_type = coltype == LWC_TYPE_TEXT ? SQL_CT_TEXT :
					       coltype == LWC_TYPE_FLOAT ? SQL_CT_FLOAT : SQL_CT_BIGINT;
				c->a = l;
				c->height = 2;
			}
			l = c;
		}
		if (l == NULL)
			return subq_fail(s, result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory"));
		*e = *l;
		return 0;
	}
	default:
		/* x IN (no rows) is FALSE even for a NULL x; NOT IN TRUE */
		if (n == 0)
			return const_cond(s, e, e->negated);
		e->kind = SQL_E_IN;
		e->list = vals;
		e->nlist = n;
		e->sub = NULL;
		e->height = e->a->height + 1;
		return 0;
	}
}

static int resolve_expr(struct subq *s, struct sql_stmt *st, struct sql_expr *e)
{
	if (e == NULL)
		return 0;
	if (resolve_expr(s, st, e->a) != 0 || resolve_expr(s, st, e->b) != 0 ||
	    resolve_expr(s, st, e->c) != 0)
		return -1;
	for (size_t i = 0; i < e->nlist; i++)
		if (resolve_expr(s, st, e->list[i]) != 0)
			return -1;
	if (e->kind == SQL_E_EXISTS || e->kind == SQL_E_INSUB || e->kind == SQL_E_SCALARSUB)
		return resolve_one(s, st, e);
	return 0;
}

static int resolve_stmt(struct subq *s, struct sql_stmt *st)
{
	struct sql_query *q = st->q;

	if (++s->depth > 32) {
		s->depth--;
		return subq_fail(s, result_error(NULL, LWC_ERR_ARG, -1, "subqueries nested too deeply"));
	}
	if (resolve_expr(s, st, st->where) != 0)
		goto fail;
	for (size_t i = 0; i < st->nsets; i++)
		if (resolve_expr(s, st, st->sets[i].value) != 0)
			goto fail;
	if (q != NULL) {
		for (size_t i = 0; i < q->ntargets; i++)
			if (resolve_expr(s, st, q->targets[i].e) != 0)
				goto fail;
		for (size_t i = 0; i < q->ngroup; i++)
			if (resolve_expr(s, st, q->group[i]) != 0)
				goto fail;
		if (resolve_expr(s, st, q->having) != 0)
			goto fail;
		for (size_t i = 0; i < q->norder; i++)
			if (resolve_expr(s, st, q->order[i].e) != 0)
				goto fail;
	}
	s->depth--;
	return 0;
fail:
	s->depth--;
	return -1;
}

/* Run the subqueries of st and rewrite it; NULL, or the error result. */
lwc_result *resolve_subqueries(lwc_conn *c, struct sql_stmt *st)
{
	struct subq s = { c, st, st->arena, NULL, 0 };

	if (resolve_stmt(&s, st) != 0)
		return s.err != NULL ? s.err : result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory");
	return NULL;
}
