/*
 * lwc_where.c - liblwc: WHERE -> index predicates (T and F of each expression,
 * exact or a superset).
 *
 * WHERE translation: every expression e gets two index predicates, T(e) the
 * rows where e is TRUE and F(e) the rows where e is FALSE, each exact or a
 * superset.  Equality, IN and IS [NOT] NULL are exact; ranges and anything
 * else are supersets (the rows whose column is not NULL, or all rows); AND,
 * OR and NOT combine them (NOT swaps T and F, which is what makes SQL's
 * three-valued NOT exact).  When T(where) is not exact the proxy returns
 * candidates and the library filters them with sql_eval.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <sodium.h>

#include "lwc_int.h"

/* ---- WHERE translation ------------------------------------------------------------- */

struct pnode {
	Lwc__Pred p;
	uint8_t (*toks)[CRY_TOKEN_BYTES];
};

void pred_free(Lwc__Pred *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n_args; i++)
		pred_free(p->args[i]);
	free(p->args);
	free(p->tokens);
	free(((struct pnode *)p)->toks);
	free(p);
}

static Lwc__Pred *pnew(Lwc__Pred__Op op)
{
	struct pnode *n = calloc(1, sizeof(*n));

	if (n == NULL)
		return NULL;
	lwc__pred__init(&n->p);
	n->p.op = op;
	return &n->p;
}

/* A predicate over column col with n tokens (EQ when n == 1). */
static Lwc__Pred *ptok(uint32_t col, size_t n)
{
	Lwc__Pred *p = pnew(n == 1 ? LWC__PRED__OP__EQ : LWC__PRED__OP__IN);
	struct pnode *pn = (struct pnode *)p;

	if (p == NULL)
		return NULL;
	p->col = col;
	pn->toks = calloc(n ? n : 1, CRY_TOKEN_BYTES);
	p->tokens = calloc(n ? n : 1, sizeof(*p->tokens));
	if (pn->toks == NULL || p->tokens == NULL) {
		pred_free(p);
		return NULL;
	}
	p->n_tokens = n;
	for (size_t i = 0; i < n; i++) {
		p->tokens[i].data = pn->toks[i];
		p->tokens[i].len = CRY_TOKEN_BYTES;
	}
	return p;
}

static Lwc__Pred *pbin(Lwc__Pred__Op op, Lwc__Pred *a, Lwc__Pred *b)
{
	Lwc__Pred *p;

	if (a == NULL || b == NULL)
		goto fail;
	/* simplifications: ALL and NONE */
	if (op == LWC__PRED__OP__AND) {
		if (a->op == LWC__PRED__OP__ALL) { pred_free(a); return b; }
		if (b->op == LWC__PRED__OP__ALL) { pred_free(b); return a; }
		if (a->op == LWC__PRED__OP__NONE) { pred_free(b); return a; }
		if (b->op == LWC__PRED__OP__NONE) { pred_free(a); return b; }
	} else {
		if (a->op == LWC__PRED__OP__NONE) { pred_free(a); return b; }
		if (b->op == LWC__PRED__OP__NONE) { pred_free(b); return a; }
		if (a->op == LWC__PRED__OP__ALL) { pred_free(b); return a; }
		if (b->op == LWC__PRED__OP__ALL) { pred_free(a); return b; }
	}
	if ((p = pnew(op)) == NULL || (p->args = calloc(2, sizeof(*p->args))) == NULL) {
		pred_free(p);
		goto fail;
	}
	p->args[0] = a;
	p->args[1] = b;
	p->n_args = 2;
	return p;
fail:
	pred_free(a);
	pred_free(b);
	return NULL;
}

static Lwc__Pred *pnot(Lwc__Pred *a)
{
	Lwc__Pred *p;

	if (a == NULL)
		return NULL;
	if (a->op == LWC__PRED__OP__ALL || a->op == LWC__PRED__OP__NONE) {
		a->op = a->op == LWC__PRED__OP__ALL ? LWC__PRED__OP__NONE : LWC__PRED__OP__ALL;
		return a;
	}
	if (a->op == LWC__PRED__OP__NOT) {
		p = a->args[0];
		a->n_args = 0;
		pred_free(a);
		return p;
	}
	if ((p = pnew(LWC__PRED__OP__NOT)) == NULL || (p->args = calloc(1, sizeof(*p->args))) == NULL) {
		pred_free(p);
		pred_free(a);
		return NULL;
	}
	p->args[0] = a;
	p->n_args = 1;
	return p;
}

/* Range cover tokens of one statement, at most (the proxy refuses
 * predicates of more than 100,000 nodes; a cover is up to 4,080 tokens). */
#define TR_COVER_TOKENS_MAX 20000

struct tr {
	lwc_conn *c;
	const struct sql_schema *sc;
	const struct ltable *t;          /* the catalog's table: range indexes */
	int under_not;                   /* NOTs above: FALSE sets are used    */
	size_t cover_tokens;             /* range cover tokens sent so far     */
	char err[512];
	int errpos;
	int code;
};

/* value_token inside the predicate translation: a failure is the
 * statement's error. */
static int tr_token(struct tr *x, size_t c, const struct sql_value *v,
		    uint8_t out[CRY_TOKEN_BYTES])
{
	int rc = value_token(x->c->k, x->sc, c, v, out);

	if (rc != LWC_OK) {
		snprintf(x->err, sizeof(x->err), "keyword token derivation failed: %s",
			 lwc_strerror(rc));
		x->code = LWC_ERR_CRYPTO;
		return -1;
	}
	return 0;
}

/* The literal of a comparison converted to the column's type for equality:
 * 1 converted, 0 impossible (no value of the column can equal it), -1 error. */
static int lit_for_eq(struct tr *x, const struct sql_coldef *cd, const struct sql_value *lit,
		      struct sql_value *out, int pos)
{
	*out = *lit;
	switch (cd->type) {
	case SQL_CT_INT:
	case SQL_CT_BIGINT: {
		double lo = cd->type == SQL_CT_INT ? -2147483648.0 : -9223372036854775808.0;
		double hi = cd->type == SQL_CT_INT ? 2147483647.0 : 9223372036854775807.0;
		if (lit->type == SQL_INT) {
			if (cd->type == SQL_CT_INT && (lit->i < INT32_MIN || lit->i > INT32_MAX))
				return 0;
			return 1;
		}
		if (lit->type == SQL_FLOAT) {
			if (!(lit->f >= lo && lit->f < -lo) || lit->f != floor(lit->f) || lit->f > hi)
				return 0;
			out->type = SQL_INT;
			out->i = (int64_t)lit->f;
			return 1;
		}
		break;
	}
	case SQL_CT_FLOAT:
		if (lit->type == SQL_INT) {
			out->type = SQL_FLOAT;
			out->f = (double)lit->i;
			return 1;
		}
		if (lit->type == SQL_FLOAT)
			return 1;
		break;
	case SQL_CT_TEXT:
		if (lit->type == SQL_TEXT)
			return 1;
		break;
	}
	snprintf(x->err, sizeof(x->err), "operator does not exist: %s = %s (column \"%s\")",
		 cd->type == SQL_CT_TEXT ? "text" : cd->type == SQL_CT_FLOAT ? "double precision"
		 : "integer", lit->type == SQL_TEXT ? "text" : lit->type == SQL_FLOAT
		 ? "numeric" : "integer", cd->name);
	x->errpos = pos;
	x->code = LWC_ERR_SCHEMA;
	return -1;
}

/* One literal compared with a column of type cd. */
static int fix_one(struct tr *x, const struct sql_coldef *cd, struct sql_expr *o, const char *op,
		   int in_list)
{
	char *end;

	if (o == NULL || o->kind != SQL_E_LIT || o->lit.type == SQL_NULL)
		return 0;
	if (cd->type == SQL_CT_TEXT && o->lit.type != SQL_TEXT) {
		snprintf(x->err, sizeof(x->err), "operator does not exist: text %s %s (column "
			 "\"%s\")", op, o->lit.type == SQL_FLOAT ? "numeric" : "integer", cd->name);
		x->errpos = o->pos;
		x->code = LWC_ERR_SCHEMA;
		return -1;
	}
	if (cd->type == SQL_CT_TEXT || o->lit.type != SQL_TEXT)
		return 0;
	errno = 0;
	if (cd->type == SQL_CT_FLOAT) {
		double d = strtod(o->lit.s, &end);
		while (*end == ' ' || *end == '\t' || *end == '\n')
			end++;
		if (end == o->lit.s || *end || errno) {
			snprintf(x->err, sizeof(x->err), "invalid input syntax for type double "
				 "precision: \"%s\"", o->lit.s);
			x->errpos = o->pos;
			x->code = LWC_ERR_SCHEMA;
			return -1;
		}
		o->lit.type = SQL_FLOAT;
		o->lit.f = d;
	} else {
		long long v = strtoll(o->lit.s, &end, 10);
		while (*end == ' ' || *end == '\t' || *end == '\n')
			end++;
		if (end == o->lit.s || *end || errno) {
			snprintf(x->err, sizeof(x->err), "invalid input syntax for type integer: "
				 "\"%s\"", o->lit.s);
			x->errpos = o->pos;
			x->code = LWC_ERR_SCHEMA;
			return -1;
		}
		/* in an IN list PostgreSQL may resolve the items to a wider type */
		if (!in_list && cd->type == SQL_CT_INT && (v < INT32_MIN || v > INT32_MAX)) {
			snprintf(x->err, sizeof(x->err), "value \"%s\" is out of range for type "
				 "integer", o->lit.s);
			x->errpos = o->pos;
			x->code = LWC_ERR_SCHEMA;
			return -1;
		}
		o->lit.type = SQL_INT;
		o->lit.i = v;
	}
	return 0;
}

/* Text literals compared with numeric columns are read as numbers (as
 * PostgreSQL reads an untyped literal); numbers compared with a text column
 * are an error.  Done once on the bound tree so that the index predicate and
 * the residual evaluation see the same values. */
static int fix_literals(struct tr *x, struct sql_expr *e)
{
	if (e == NULL)
		return 0;
	if (e->kind == SQL_E_CMP || e->kind == SQL_E_IN || e->kind == SQL_E_BETWEEN) {
		struct sql_expr *col = e->a && e->a->kind == SQL_E_COL ? e->a : NULL;
		struct sql_expr *ops[64];
		size_t nops = 0;

		if (e->kind == SQL_E_CMP && col == NULL && e->b && e->b->kind == SQL_E_COL) {
			/* lit op col: mirror it so the column comes first */
			struct sql_expr *t = e->a;
			static const enum sql_cmp mirror[] = {
				[SQL_EQ] = SQL_EQ, [SQL_NE] = SQL_NE, [SQL_LT] = SQL_GT,
				[SQL_LE] = SQL_GE, [SQL_GT] = SQL_LT, [SQL_GE] = SQL_LE };
			e->a = e->b;
			e->b = t;
			e->op = mirror[e->op];
			col = e->a;
		}
		if (col == NULL || col->col_index < 0 || (size_t)col->col_index >= x->sc->ncols)
			goto kids;     /* (a correlated subquery's outer column) */
		if (e->kind == SQL_E_CMP)
			ops[nops++] = e->b;
		else if (e->kind == SQL_E_BETWEEN) {
			ops[nops++] = e->b;
			ops[nops++] = e->c;
		}
		for (size_t i = 0; i < nops; i++)
			if (fix_one(x, &x->sc->cols[col->col_index], ops[i],
				    e->kind == SQL_E_BETWEEN ? ">=" : "=", 0) != 0)
				return -1;
		if (e->kind == SQL_E_IN) {
			/* PostgreSQL resolves the list to a common type: a number
			 * beyond int32 (or a decimal) widens it, and then text items
			 * out of int32 range are no error */
			int wide = 0;
			for (size_t i = 0; i < e->nlist; i++) {
				const struct sql_expr *o = e->list[i];
				if (o->kind == SQL_E_LIT && (o->lit.type == SQL_FLOAT ||
				    (o->lit.type == SQL_INT &&
				     (o->lit.i < INT32_MIN || o->lit.i > INT32_MAX))))
					wide = 1;
			}
			for (size_t i = 0; i < e->nlist; i++)
				if (fix_one(x, &x->sc->cols[col->col_index], e->list[i], "=", wide) != 0)
					return -1;
		}
	}
kids:
	if (fix_literals(x, e->a) || fix_literals(x, e->b) || fix_literals(x, e->c))
		return -1;
	for (size_t i = 0; i < e->nlist; i++)
		if (fix_literals(x, e->list[i]))
			return -1;
	return 0;
}

/* T and F predicates of e. */
static int tr_expr(struct tr *x, const struct sql_expr *e, Lwc__Pred **T, int *tex,
		   Lwc__Pred **F, int *fex);

static int tr_nonnull(struct tr *x, int col, Lwc__Pred **p)
{
	struct sql_value nul = { .type = SQL_NULL };
	Lwc__Pred *eq = ptok((uint32_t)col, 1);

	if (eq == NULL)
		return -1;
	if (tr_token(x, (size_t)col, &nul, ((struct pnode *)eq)->toks[0]) != 0)
		return pred_free(eq), -1;
	*p = pnot(eq);
	return *p ? 0 : -1;
}

/* The cover of lo..hi on a range-indexed column (range.h): 1 with *p an
 * IN of its tokens (a superset: the client filters), NOT NULL for the
 * whole domain, NONE for an empty range; 0 when the column has no range
 * index or the literals do not suit it; -1 on error. */
static int tr_range(struct tr *x, int col, const struct sql_value *lo, int lo_incl,
		    const struct sql_value *hi, int hi_incl, Lwc__Pred **p)
{
	int usable, root, rc;
	uint8_t *toks;
	size_t n;

	*p = NULL;
	if (x->t == NULL)
		return 0;
	rc = range_cover_tokens(x->c->k, x->t, (size_t)col, lo, lo_incl, hi, hi_incl, &usable,
				&root, &toks, &n);
	if (rc != LWC_OK) {
		snprintf(x->err, sizeof(x->err), "range token derivation failed: %s",
			 lwc_strerror(rc));
		x->code = rc;
		return -1;
	}
	if (!usable)
		return 0;
	if (!root && n > TR_COVER_TOKENS_MAX - x->cover_tokens) {
		/* the proxy takes predicates of at most PRED_MAX_NODES nodes:
		 * past this budget a range is the superset (the client filters) */
		free(toks);
		root = 1;
	}
	if (root)
		return tr_nonnull(x, col, p) ? -1 : 1;
	x->cover_tokens += n;
	if (n == 0) {
		*p = pnew(LWC__PRED__OP__NONE);
		return *p ? 1 : -1;
	}
	if ((*p = ptok((uint32_t)col, n)) == NULL) {
		free(toks);
		return -1;
	}
	memcpy(((struct pnode *)*p)->toks, toks, n * CRY_TOKEN_BYTES);
	free(toks);
	return 1;
}

/* col op v for op one of < <= > >= */
static int tr_cmp_range(struct tr *x, int col, enum sql_cmp op, const struct sql_value *v,
			Lwc__Pred **p)
{
	switch (op) {
	case SQL_LT: return tr_range(x, col, NULL, 0, v, 0, p);
	case SQL_LE: return tr_range(x, col, NULL, 0, v, 1, p);
	case SQL_GT: return tr_range(x, col, v, 0, NULL, 0, p);
	case SQL_GE: return tr_range(x, col, v, 1, NULL, 0, p);
	default:     return 0;
	}
}

static int tr_expr(struct tr *x, const struct sql_expr *e, Lwc__Pred **T, int *tex,
		   Lwc__Pred **F, int *fex)
{
	Lwc__Pred *ta = NULL, *fa = NULL, *tb = NULL, *fb = NULL;
	int tae, fae, tbe, fbe;
	const struct sql_expr *col = e->a && e->a->kind == SQL_E_COL ? e->a : NULL;

	*T = *F = NULL;
	*tex = *fex = 0;
	switch (e->kind) {
	case SQL_E_AND:
	case SQL_E_OR:
		if (tr_expr(x, e->a, &ta, &tae, &fa, &fae) ||
		    tr_expr(x, e->b, &tb, &tbe, &fb, &fbe)) {
			pred_free(ta);
			pred_free(fa);
			pred_free(tb);
			pred_free(fb);
			return -1;
		}
		if (e->kind == SQL_E_AND) {
			*T = pbin(LWC__PRED__OP__AND, ta, tb);
			*F = pbin(LWC__PRED__OP__OR, fa, fb);
		} else {
			*T = pbin(LWC__PRED__OP__OR, ta, tb);
			*F = pbin(LWC__PRED__OP__AND, fa, fb);
		}
		*tex = tae && tbe;
		*fex = fae && fbe;
		break;
	case SQL_E_NOT:
		x->under_not++;
		if (tr_expr(x, e->a, &ta, &tae, &fa, &fae)) {
			x->under_not--;
			return -1;
		}
		x->under_not--;
		*T = fa;
		*tex = fae;
		*F = ta;
		*fex = tae;
		break;
	case SQL_E_ISNULL:
		if (col == NULL || col->col_index < 0)
			goto opaque;
		{
			struct sql_value nul = { .type = SQL_NULL };
			Lwc__Pred *eq = ptok((uint32_t)col->col_index, 1);
			if (eq == NULL)
				return -1;
			if (tr_token(x, (size_t)col->col_index, &nul,
				     ((struct pnode *)eq)->toks[0]) != 0)
				return pred_free(eq), -1;
			if (tr_nonnull(x, col->col_index, &fa))
				return pred_free(eq), -1;
			*T = e->negated ? fa : eq;
			*F = e->negated ? eq : fa;
			*tex = *fex = 1;
		}
		break;
	case SQL_E_CMP:
		if (col == NULL || col->col_index < 0 || e->b == NULL || e->b->kind != SQL_E_LIT)
			goto opaque;
		if (e->b->lit.type == SQL_NULL) {     /* col op NULL: never TRUE nor FALSE */
			*T = pnew(LWC__PRED__OP__NONE);
			*F = pnew(LWC__PRED__OP__NONE);
			*tex = *fex = 1;
			break;
		}
		if (e->op == SQL_EQ || e->op == SQL_NE) {
			struct sql_value v, nul = { .type = SQL_NULL };
			int ok = lit_for_eq(x, &x->sc->cols[col->col_index], &e->b->lit, &v, e->b->pos);
			Lwc__Pred *eq, *neither;

			if (ok < 0)
				return -1;
			if (ok == 0) {
				eq = pnew(LWC__PRED__OP__NONE);
				if (tr_nonnull(x, col->col_index, &neither))
					return pred_free(eq), -1;
			} else {
				eq = ptok((uint32_t)col->col_index, 1);
				neither = ptok((uint32_t)col->col_index, 2);
				if (eq == NULL || neither == NULL)
					return pred_free(eq), pred_free(neither), -1;
				if (tr_token(x, (size_t)col->col_index, &v,
					     ((struct pnode *)eq)->toks[0]) != 0 ||
				    tr_token(x, (size_t)col->col_index, &v,
					     ((struct pnode *)neither)->toks[0]) != 0 ||
				    tr_token(x, (size_t)col->col_index, &nul,
					     ((struct pnode *)neither)->toks[1]) != 0)
					return pred_free(eq), pred_free(neither), -1;
				neither = pnot(neither);
			}
			*T = e->op == SQL_EQ ? eq : neither;
			*F = e->op == SQL_EQ ? neither : eq;
			*tex = *fex = 1;
			break;
		}
		/* ranges: the cover on a range index, else (and for the FALSE
		 * side outside a NOT) TRUE or FALSE only where the column is not
		 * NULL; supersets either way */
		{
			static const enum sql_cmp neg[] = {
				[SQL_LT] = SQL_GE, [SQL_LE] = SQL_GT, [SQL_GT] = SQL_LE,
				[SQL_GE] = SQL_LT };
			int got = tr_cmp_range(x, col->col_index, e->op, &e->b->lit, T);
			if (got < 0)
				return -1;
			if (got == 0 && tr_nonnull(x, col->col_index, T))
				return -1;
			got = x->under_not && e->op <= SQL_GE && e->op >= SQL_LT
			      ? tr_cmp_range(x, col->col_index, neg[e->op], &e->b->lit, F) : 0;
			if (got < 0)
				return pred_free(*T), -1;
			if (got == 0 && tr_nonnull(x, col->col_index, F))
				return pred_free(*T), -1;
		}
		break;
	case SQL_E_IN: {
		struct sql_value nul = { .type = SQL_NULL };
		size_t n = 0, has_null = 0;
		Lwc__Pred *in, *notin;

		if (col == NULL || col->col_index < 0)
			goto opaque;
		for (size_t i = 0; i < e->nlist; i++) {
			if (e->list[i]->kind != SQL_E_LIT)
				goto opaque;
			if (e->list[i]->lit.type == SQL_NULL)
				has_null = 1;
		}
		in = ptok((uint32_t)col->col_index, e->nlist + 1);
		if (in == NULL)
			return -1;
		for (size_t i = 0; i < e->nlist; i++) {
			struct sql_value v;
			int ok;
			if (e->list[i]->lit.type == SQL_NULL)
				continue;
			ok = lit_for_eq(x, &x->sc->cols[col->col_index], &e->list[i]->lit, &v,
					e->list[i]->pos);
			if (ok < 0)
				return pred_free(in), -1;
			if (ok > 0 && tr_token(x, (size_t)col->col_index, &v,
					       ((struct pnode *)in)->toks[n++]) != 0)
				return pred_free(in), -1;
		}
		/* NOT IN's FALSE side: no NULL in the list, column not NULL, not in it */
		if (tr_token(x, (size_t)col->col_index, &nul, ((struct pnode *)in)->toks[n]) != 0)
			return pred_free(in), -1;
		if (has_null) {
			notin = pnew(LWC__PRED__OP__NONE);
		} else {
			Lwc__Pred *all = ptok((uint32_t)col->col_index, n + 1);
			if (all == NULL)
				return pred_free(in), -1;
			memcpy(((struct pnode *)all)->toks, ((struct pnode *)in)->toks,
			       (n + 1) * CRY_TOKEN_BYTES);
			notin = pnot(all);
		}
		if (n == 0) {
			pred_free(in);
			in = pnew(LWC__PRED__OP__NONE);
		} else {
			in->n_tokens = n;
			if (n == 1)
				in->op = LWC__PRED__OP__EQ;
		}
		*T = e->negated ? notin : in;
		*F = e->negated ? in : notin;
		*tex = *fex = 1;
		break;
	}
	case SQL_E_BETWEEN:
		if (col == NULL || col->col_index < 0)
			goto opaque;
		/* TRUE only where not NULL (on a range index: the cover of
		 * [b, c]); FALSE can hold with a NULL bound */
		{
			int got = 0;
			if (e->b && e->b->kind == SQL_E_LIT && e->c && e->c->kind == SQL_E_LIT &&
			    (got = tr_range(x, col->col_index, &e->b->lit, 1, &e->c->lit, 1,
					    T)) < 0)
				return -1;
			if (got == 0 && tr_nonnull(x, col->col_index, T))
				return -1;
			*F = NULL;
			if (got && (x->under_not || e->negated)) {
				Lwc__Pred *below = NULL, *above = NULL;
				int g1 = tr_range(x, col->col_index, NULL, 0, &e->b->lit, 0, &below);
				int g2 = g1 > 0 ? tr_range(x, col->col_index, &e->c->lit, 0, NULL, 0,
							   &above) : 0;
				if (g1 < 0 || g2 < 0) {
					pred_free(below);
					return pred_free(*T), -1;
				}
				if (g1 > 0 && g2 > 0)
					*F = pbin(LWC__PRED__OP__OR, below, above);
				else
					pred_free(below);
			}
		}
		if (*F == NULL)
			*F = pnew(LWC__PRED__OP__ALL);
		if (e->negated) {
			Lwc__Pred *t = *T;
			*T = *F;
			*F = t;
		}
		break;
	case SQL_E_LIKE: {
		/* LIKE 'abc%' on a range index: the texts starting with abc */
		uint8_t tok[CRY_TOKEN_BYTES];
		int usable = 0;
		if (col == NULL || col->col_index < 0 || e->icase || x->t == NULL || e->b == NULL ||
		    e->b->kind != SQL_E_LIT || e->b->lit.type != SQL_TEXT)
			goto opaque;
		if (range_prefix_token(x->c->k, x->t, (size_t)col->col_index, e->b->lit.s,
				       e->b->lit.len, &usable, tok) != LWC_OK) {
			snprintf(x->err, sizeof(x->err), "range token derivation failed");
			x->code = LWC_ERR_CRYPTO;
			return -1;
		}
		if (!usable)
			goto opaque;
		*T = ptok((uint32_t)col->col_index, 1);
		if (*T)
			memcpy(((struct pnode *)*T)->toks[0], tok, CRY_TOKEN_BYTES);
		*F = pnew(LWC__PRED__OP__ALL);
		if (e->negated) {
			Lwc__Pred *t = *T;
			*T = *F;
			*F = t;
		}
		break;
	}
	default:
	opaque:
		*T = pnew(LWC__PRED__OP__ALL);
		*F = pnew(LWC__PRED__OP__ALL);
		break;
	}
	if (*T == NULL || *F == NULL) {
		pred_free(*T);
		pred_free(*F);
		*T = *F = NULL;
		return -1;
	}
	return 0;
}

int query_fix_literals(const struct sql_schema *sc, struct sql_stmt *st, char *err, size_t errlen,
		       int *errpos, int *code)
{
	struct tr x = { .sc = sc, .errpos = -1, .code = LWC_ERR_NOMEM };
	const struct sql_query *q = st->q;
	int rc = 0;

	if (q == NULL)
		return LWC_OK;
	for (size_t i = 0; rc == 0 && i < q->ntargets; i++)
		rc = fix_literals(&x, q->targets[i].e);
	for (size_t i = 0; rc == 0 && i < q->ngroup; i++)
		rc = fix_literals(&x, q->group[i]);
	if (rc == 0)
		rc = fix_literals(&x, q->having);
	for (size_t i = 0; rc == 0 && i < q->norder; i++)
		rc = fix_literals(&x, q->order[i].e);
	for (size_t i = 0; rc == 0 && i < q->nfroms; i++)
		rc = fix_literals(&x, q->froms[i].on);
	if (rc == 0 && q->nfroms > 0)
		rc = fix_literals(&x, st->where);
	if (rc == 0)
		return LWC_OK;
	lwc_errf(err, errlen, "%s", x.err[0] ? x.err : "out of memory");
	*errpos = x.errpos;
	*code = x.code;
	return x.code;
}

/* The index predicate of a WHERE (NULL where: ALL); *exact when it is the
 * WHERE's TRUE set exactly. */
int where_translate(lwc_conn *c, const struct sql_schema *sc, struct sql_expr *where,
		     Lwc__Pred **out, int *exact, char *err, size_t errlen, int *errpos, int *code)
{
	struct tr x = { .c = c, .sc = sc, .errpos = -1, .code = LWC_ERR_NOMEM };
	Lwc__Pred *T, *F;
	int tex, fex;

	for (const struct ltable *t = c->tables; t; t = t->next)
		if (strcmp(t->sc.name, sc->name) == 0 && t->sc.ncols == sc->ncols)
			x.t = t;

	*out = NULL;
	*exact = 1;
	if (where == NULL) {
		*out = pnew(LWC__PRED__OP__ALL);
		return *out ? LWC_OK : LWC_ERR_NOMEM;
	}
	if (fix_literals(&x, where) != 0 ||
	    tr_expr(&x, where, &T, &tex, &F, &fex) != 0) {
		lwc_errf(err, errlen, "%s", x.err[0] ? x.err : "out of memory");
		*errpos = x.errpos;
		*code = x.code;
		return x.code;
	}
	pred_free(F);
	*out = T;
	*exact = tex;
	return LWC_OK;
}
