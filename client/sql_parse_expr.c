/*
 * sql_parse_expr.c - PostgreSQL's expression nodes into struct sql_expr:
 * constants (folded with PostgreSQL's errors), operators, AND / OR / NOT
 * (balanced), IN, BETWEEN, IS NULL, LIKE, functions and aggregates, CASE,
 * COALESCE, casts, column references and subqueries.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_parse_int.h"

/* ---- expressions ------------------------------------------------------------ */

static int is_bool_kind(enum sql_ekind k)
{
	return k == SQL_E_CMP || k == SQL_E_IN || k == SQL_E_BETWEEN || k == SQL_E_ISNULL ||
	       k == SQL_E_AND || k == SQL_E_OR || k == SQL_E_NOT || k == SQL_E_LIKE ||
	       k == SQL_E_EXISTS || k == SQL_E_INSUB;
}

struct sql_expr *sqp_new_expr(struct tx *x, enum sql_ekind kind, int pos)
{
	struct sql_expr *e = sqp_talloc(x, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->kind = kind;
	e->pos = pos;
	e->col_index = -1;
	e->height = 1;
	return e;
}

/* Set e's height from its children; refuse a tree that grew too high. */
struct sql_expr *sqp_finish(struct tx *x, struct sql_expr *e)
{
	int h = 0;
	size_t i;

	if (e->a != NULL && e->a->height > h)
		h = e->a->height;
	if (e->b != NULL && e->b->height > h)
		h = e->b->height;
	if (e->c != NULL && e->c->height > h)
		h = e->c->height;
	for (i = 0; i < e->nlist; i++)
		if (e->list[i]->height > h)
			h = e->list[i]->height;
	e->height = h + 1;
	if (e->height > SQL_MAX_HEIGHT) {
		sqp_fail(x, e->pos, "expression nested too deeply");
		return NULL;
	}
	return e;
}

/* e must be a sqp_value (not a condition) as the argument of what. */
static int need_value(struct tx *x, const struct sql_expr *e, const char *what)
{
	if (!is_bool_kind(e->kind))
		return 0;
	return sqp_fail(x, e->pos, "argument of %s must be a value, not a condition", what);
}

/* e must be a condition as the argument of what. */
static int need_bool(struct tx *x, const struct sql_expr *e, const char *what)
{
	if (is_bool_kind(e->kind))
		return 0;
	if (e->kind == SQL_E_LIT)
		return sqp_fail(x, e->pos, "argument of %s must be type boolean, not type %s",
			    what, sql_vtype_name(e->lit.type));
	return sqp_fail(x, e->pos, "argument of %s must be type boolean, not a value", what);
}

/* The first column an expression reads, or NULL. */
static const struct sql_expr *first_col(const struct sql_expr *e)
{
	const struct sql_expr *c;
	size_t i;

	if (e == NULL)
		return NULL;
	if (e->kind == SQL_E_COL)
		return e;
	if ((c = first_col(e->a)) != NULL || (c = first_col(e->b)) != NULL ||
	    (c = first_col(e->c)) != NULL)
		return c;
	for (i = 0; i < e->nlist; i++)
		if ((c = first_col(e->list[i])) != NULL)
			return c;
	return NULL;
}

/* A number as PostgreSQL's scanner left it (fval: an integer beyond 32
 * bits or a decimal, with a '-' when the grammar folded a unary minus):
 * an INT when it fits 64 bits, else a FLOAT (PostgreSQL's numeric). */
static int number_text(struct tx *x, const char *s, int pos, struct sql_value *out)
{
	size_t n = strlen(s), i = 0;
	int neg = 0, erange;
	double d;

	if (n > 0 && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i < n && strspn(s + i, "0123456789") == n - i) {
		uint64_t v = 0, lim = neg ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1;
		int over = 0;

		for (; i < n && !over; i++) {
			unsigned d10 = (unsigned)(s[i] - '0');

			if (v > (UINT64_MAX - d10) / 10)
				over = 1;
			else
				v = v * 10 + d10;
		}
		if (!over && v <= lim) {
			out->type = SQL_INT;
			if (!neg)
				out->i = (int64_t)v;
			else if (v == (uint64_t)1 << 63)
				out->i = INT64_MIN;
			else
				out->i = -(int64_t)v;
			return 0;
		}
	}
	if (sql_c_strtod(s, n, &d, &erange) != 0)
		return sqp_fail_nomem(x);
	if (isinf(d) || (erange && d == 0)) {
		char q[160];

		sql_quote_text(q, sizeof(q), s, n, 60);
		return sqp_fail(x, pos, "\"%s\" is out of range for type double precision", q);
	}
	out->type = SQL_FLOAT;
	out->f = d;
	return 0;
}

static struct sql_expr *constant(struct tx *x, const PgQuery__AConst *c)
{
	struct sql_expr *e = sqp_new_expr(x, SQL_E_LIT, c->location);

	if (e == NULL)
		return NULL;
	if (c->isnull)
		return e;
	switch (c->val_case) {
	case PG_QUERY__A__CONST__VAL_IVAL:
		e->lit.type = SQL_INT;
		e->lit.i = c->ival != NULL ? c->ival->ival : 0;
		e->lit.i4 = 1;
		return e;
	case PG_QUERY__A__CONST__VAL_FVAL:
		if (number_text(x, c->fval != NULL ? c->fval->fval : "0", c->location, &e->lit) != 0)
			return NULL;
		return e;
	case PG_QUERY__A__CONST__VAL_SVAL: {
		const char *s = c->sval != NULL ? c->sval->sval : "";
		size_t n = strlen(s);
		char *buf = sqp_talloc(x, n + 1);

		if (buf == NULL)
			return NULL;
		memcpy(buf, s, n + 1);
		e->lit.type = SQL_TEXT;
		e->lit.s = buf;
		e->lit.len = n;
		return e;
	}
	case PG_QUERY__A__CONST__VAL_BOOLVAL: {
		/* TRUE / FALSE: the constant condition 1 = 1 / 1 = 0 */
		struct sql_expr *a = sqp_new_expr(x, SQL_E_LIT, c->location);
		struct sql_expr *b = sqp_new_expr(x, SQL_E_LIT, c->location);

		if (a == NULL || b == NULL)
			return NULL;
		a->lit.type = b->lit.type = SQL_INT;
		a->lit.i4 = b->lit.i4 = 1;
		a->lit.i = 1;
		b->lit.i = c->boolval != NULL && c->boolval->boolval;
		e->kind = SQL_E_CMP;
		e->op = SQL_EQ;
		e->a = a;
		e->b = b;
		return sqp_finish(x, e);
	}
	case PG_QUERY__A__CONST__VAL_BSVAL:
		sqp_unsupported(x, c->location, "bit strings");
		return NULL;
	default:
		return e;
	}
}

struct sql_expr *sqp_expr(struct tx *x, const Node *n);
static struct sql_expr *make_func(struct tx *x, const char *fname, int pos, struct sql_expr *a,
				  struct sql_expr *b);
int sqp_column_type(struct tx *x, const PgQuery__TypeName *t, struct sql_coldef *c);

/* -a, folded when a is a literal.  A constant that fails (bigint out of
 * range ...) is PostgreSQL's error here, at parse time, as its planner
 * folds constants, except in a lazy part (x->lazy): PostgreSQL evaluates a
 * CASE branch, a later COALESCE argument or NULLIF's second only when it
 * needs it (its own folding at plan time is the exception its manual
 * warns of), so there the node stays and fails only if evaluated. */
static struct sql_expr *make_neg(struct tx *x, int pos, struct sql_expr *a)
{
	struct sql_expr *e;
	char msg[160];

	if (need_value(x, a, "-") != 0)
		return NULL;
	if (a->kind == SQL_E_LIT) {
		if ((e = sqp_new_expr(x, SQL_E_LIT, pos)) == NULL)
			return NULL;
		if (sql_value_neg(&a->lit, &e->lit, msg, sizeof(msg)) == LWC_OK)
			return e;
		if (!x->lazy) {
			sqp_fail(x, pos, "%s", msg);
			return NULL;
		}
	}
	if ((e = sqp_new_expr(x, SQL_E_NEG, pos)) == NULL)
		return NULL;
	e->a = a;
	return sqp_finish(x, e);
}

/* a op b, folded when both are literals (a failure: as make_neg). */
static struct sql_expr *make_arith(struct tx *x, enum sql_arith op, int pos, struct sql_expr *a,
				   struct sql_expr *b)
{
	struct sql_expr *e;
	char msg[160];

	if (need_value(x, a, sql_arith_text[op]) != 0 || need_value(x, b, sql_arith_text[op]) != 0)
		return NULL;
	if (a->kind == SQL_E_LIT && b->kind == SQL_E_LIT) {
		if ((e = sqp_new_expr(x, SQL_E_LIT, pos)) == NULL)
			return NULL;
		if (sql_value_arith(op, &a->lit, &b->lit, &e->lit, msg, sizeof(msg)) == LWC_OK)
			return e;
		if (!x->lazy) {
			sqp_fail(x, pos, "%s", msg);
			return NULL;
		}
	}
	if ((e = sqp_new_expr(x, SQL_E_ARITH, pos)) == NULL)
		return NULL;
	e->arith = op;
	e->a = a;
	e->b = b;
	return sqp_finish(x, e);
}

/* The one-word operator name of an A_Expr ("=", "+"), or NULL when it is
 * schema-qualified (OPERATOR(pg_catalog.+)). */
static const char *op_name(const PgQuery__AExpr *a)
{
	return a->n_name == 1 ? sqp_str_of(a->name[0]) : NULL;
}

static int cmp_op(const char *s, enum sql_cmp *op)
{
	static const struct { const char *s; enum sql_cmp op; } t[] = {
		{ "=", SQL_EQ }, { "<>", SQL_NE }, { "!=", SQL_NE }, { "<", SQL_LT },
		{ "<=", SQL_LE }, { ">", SQL_GT }, { ">=", SQL_GE },
	};
	size_t i;

	for (i = 0; s != NULL && i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(s, t[i].s) == 0) {
			*op = t[i].op;
			return 1;
		}
	return 0;
}

static int arith_op(const char *s, enum sql_arith *op)
{
	static const char *const t[] = { [SQL_ADD] = "+", [SQL_SUB] = "-", [SQL_MUL] = "*",
					 [SQL_DIV] = "/", [SQL_MOD] = "%" };
	size_t i;

	for (i = 0; s != NULL && i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(s, t[i]) == 0) {
			*op = (enum sql_arith)i;
			return 1;
		}
	return 0;
}

/* A value: an expression that is not a condition. */
struct sql_expr *sqp_value(struct tx *x, const Node *n, const char *what)
{
	struct sql_expr *e = sqp_expr(x, n);

	if (e == NULL || need_value(x, e, what) != 0)
		return NULL;
	return e;
}

/* A condition. */
struct sql_expr *sqp_cond(struct tx *x, const Node *n, const char *what)
{
	struct sql_expr *e = sqp_expr(x, n);

	if (e == NULL || need_bool(x, e, what) != 0)
		return NULL;
	return e;
}

static struct sql_expr *a_expr(struct tx *x, const PgQuery__AExpr *a)
{
	const char *op = op_name(a);
	struct sql_expr *e, *l, *r;
	enum sql_cmp cmp;
	enum sql_arith ar;
	size_t i;

	switch (a->kind) {
	case PG_QUERY__A__EXPR__KIND__AEXPR_OP:
		if (cmp_op(op, &cmp)) {
			if (a->lexpr == NULL)
				break;
			if ((l = sqp_value(x, a->lexpr, op)) == NULL || (r = sqp_value(x, a->rexpr, op)) == NULL)
				return NULL;
			if ((e = sqp_new_expr(x, SQL_E_CMP, a->location)) == NULL)
				return NULL;
			e->op = cmp;
			e->a = l;
			e->b = r;
			return sqp_finish(x, e);
		}
		if (op != NULL && strcmp(op, "||") == 0 && a->lexpr != NULL) {
			if ((l = sqp_value(x, a->lexpr, op)) == NULL || (r = sqp_value(x, a->rexpr, op)) == NULL)
				return NULL;
			return make_func(x, "||", a->location, l, r);
		}
		if (arith_op(op, &ar)) {
			if (a->lexpr == NULL) {
				if (ar == SQL_ADD)
					return sqp_value(x, a->rexpr, "+");
				if (ar != SQL_SUB)
					break;
				if ((r = sqp_expr(x, a->rexpr)) == NULL)
					return NULL;
				return make_neg(x, a->location, r);
			}
			if ((l = sqp_expr(x, a->lexpr)) == NULL || (r = sqp_expr(x, a->rexpr)) == NULL)
				return NULL;
			return make_arith(x, ar, a->location, l, r);
		}
		break;
	case PG_QUERY__A__EXPR__KIND__AEXPR_IN: {
		const PgQuery__List *list;

		if (a->rexpr == NULL || a->rexpr->node_case != PG_QUERY__NODE__NODE_LIST)
			break;
		list = a->rexpr->list;
		if ((l = sqp_value(x, a->lexpr, "IN")) == NULL)
			return NULL;
		if ((e = sqp_new_expr(x, SQL_E_IN, a->location)) == NULL)
			return NULL;
		e->negated = op != NULL && strcmp(op, "<>") == 0;
		e->a = l;
		e->nlist = list->n_items;
		if ((e->list = sqp_talloc(x, list->n_items * sizeof(*e->list))) == NULL)
			return NULL;
		for (i = 0; i < list->n_items; i++)
			if ((e->list[i] = sqp_value(x, list->items[i], "IN")) == NULL)
				return NULL;
		return sqp_finish(x, e);
	}
	case PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN:
	case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN: {
		const PgQuery__List *list;

		if (a->rexpr == NULL || a->rexpr->node_case != PG_QUERY__NODE__NODE_LIST ||
		    a->rexpr->list->n_items != 2)
			break;
		list = a->rexpr->list;
		if ((e = sqp_new_expr(x, SQL_E_BETWEEN, a->location)) == NULL)
			return NULL;
		e->negated = a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN;
		if ((e->a = sqp_value(x, a->lexpr, "BETWEEN")) == NULL ||
		    (e->b = sqp_value(x, list->items[0], "BETWEEN")) == NULL ||
		    (e->c = sqp_value(x, list->items[1], "BETWEEN")) == NULL)
			return NULL;
		return sqp_finish(x, e);
	}
	case PG_QUERY__A__EXPR__KIND__AEXPR_LIKE:
	case PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE:
		if (a->lexpr == NULL || op == NULL)
			break;
		if (a->rexpr != NULL && a->rexpr->node_case == PG_QUERY__NODE__NODE_FUNC_CALL &&
		    a->rexpr->func_call->n_funcname == 2 &&
		    sqp_str_of(a->rexpr->func_call->funcname[1]) != NULL &&
		    strcmp(sqp_str_of(a->rexpr->func_call->funcname[1]), "like_escape") == 0)
			return sqp_unsupported(x, a->location, "LIKE ... ESCAPE"), NULL;
		if ((l = sqp_value(x, a->lexpr, "LIKE")) == NULL || (r = sqp_value(x, a->rexpr, "LIKE")) == NULL)
			return NULL;
		if ((e = sqp_new_expr(x, SQL_E_LIKE, a->location)) == NULL)
			return NULL;
		e->negated = op[0] == '!';
		e->icase = a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE;
		e->a = l;
		e->b = r;
		return sqp_finish(x, e);
	case PG_QUERY__A__EXPR__KIND__AEXPR_SIMILAR:
		return sqp_unsupported(x, a->location, "SIMILAR TO"), NULL;
	case PG_QUERY__A__EXPR__KIND__AEXPR_DISTINCT:
	case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_DISTINCT:
		return sqp_unsupported(x, a->location, "IS [NOT] DISTINCT FROM"), NULL;
	case PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF:
		/* NULLIF(NULL, b) is NULL whatever b: b is evaluated only when needed */
		if ((l = sqp_value(x, a->lexpr, "NULLIF")) == NULL)
			return NULL;
		x->lazy++;
		r = sqp_value(x, a->rexpr, "NULLIF");
		x->lazy--;
		if (r == NULL)
			return NULL;
		return make_func(x, "nullif", a->location, l, r);
	case PG_QUERY__A__EXPR__KIND__AEXPR_OP_ANY:
	case PG_QUERY__A__EXPR__KIND__AEXPR_OP_ALL:
		return sqp_unsupported(x, a->location, "ANY and ALL"), NULL;
	case PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN_SYM:
	case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN_SYM:
		return sqp_unsupported(x, a->location, "BETWEEN SYMMETRIC"), NULL;
	default:
		break;
	}
	{
		char what[96];

		snprintf(what, sizeof(what), "the operator %s", op != NULL ? op : "OPERATOR()");
		sqp_unsupported(x, a->location, what);
	}
	return NULL;
}

/* terms[lo..hi] joined by AND or OR into a balanced tree. */
static struct sql_expr *balance(struct tx *x, enum sql_ekind kind, struct sql_expr **terms,
				int pos, size_t lo, size_t hi)
{
	struct sql_expr *e;
	size_t mid;

	if (lo == hi)
		return terms[lo];
	mid = lo + (hi - lo + 1) / 2;
	if ((e = sqp_new_expr(x, kind, pos)) == NULL)
		return NULL;
	e->a = balance(x, kind, terms, pos, lo, mid - 1);
	e->b = balance(x, kind, terms, pos, mid, hi);
	if (e->a == NULL || e->b == NULL)
		return NULL;
	return sqp_finish(x, e);
}

/* fname(a, b) (b may be NULL). */
static struct sql_expr *make_func(struct tx *x, const char *fname, int pos, struct sql_expr *a,
				  struct sql_expr *b)
{
	struct sql_expr *e = sqp_new_expr(x, SQL_E_FUNC, pos);

	if (e == NULL || (e->list = sqp_talloc(x, 2 * sizeof(*e->list))) == NULL)
		return NULL;
	snprintf(e->fname, sizeof(e->fname), "%s", fname);
	e->list[0] = a;
	e->list[1] = b;
	e->nlist = b != NULL ? 2 : 1;
	return sqp_finish(x, e);
}

const char *sqp_last_name(const PgQuery__Node *const *names, size_t n)
{
	return n > 0 ? sqp_str_of(names[n - 1]) : NULL;
}

/* e appended to the arena array *arr of *n (capacity *cap); -1 when out of
 * memory. */
static int push_expr(struct tx *x, struct sql_expr ***arr, size_t *n, size_t *cap,
		     struct sql_expr *e)
{
	if (*n == *cap && (*arr = sql_arena_grow(x->ar, *arr, *n, cap, sizeof(**arr))) == NULL)
		return sqp_fail_nomem(x);
	(*arr)[(*n)++] = e;
	return 0;
}

/* fname(args) OVER (PARTITION BY ... ORDER BY ...): row_number, rank,
 * dense_rank, lag, lead, and count, sum, avg, min, max over the default
 * frame (the partition up to the current row's last peer with ORDER BY,
 * the whole partition without). */
static struct sql_expr *window_call(struct tx *x, const PgQuery__FuncCall *f, const char *name)
{
	static const struct { const char *name; size_t min, max; } fns[] = {
		{ "row_number", 0, 0 }, { "rank", 0, 0 }, { "dense_rank", 0, 0 }, { "count", 0, 1 },
		{ "sum", 1, 1 }, { "avg", 1, 1 }, { "min", 1, 1 }, { "max", 1, 1 }, { "lag", 1, 3 },
		{ "lead", 1, 3 },
	};
	const PgQuery__WindowDef *w = f->over;
	struct sql_expr *e, *args[3] = { NULL, NULL, NULL };
	size_t k, i, nk;
	int agg_ok = x->agg_ok;
	char what[96];

	if (!x->win_ok)
		return sqp_fail(x, f->location, "window functions are not allowed here"), NULL;
	if ((w->name != NULL && w->name[0] != '\0') || (w->refname != NULL && w->refname[0] != '\0'))
		return sqp_unsupported(x, w->location, "named windows (WINDOW)"), NULL;
	if (w->frame_options & 1)       /* FRAMEOPTION_NONDEFAULT: a frame clause */
		return sqp_unsupported(x, w->location, "window frames (ROWS, RANGE, GROUPS)"), NULL;
	if (f->agg_filter != NULL)
		return sqp_unsupported(x, f->location, "FILTER in window functions"), NULL;
	if (f->agg_distinct)
		return sqp_fail(x, f->location, "DISTINCT is not implemented for window functions"), NULL;
	if (f->n_agg_order > 0 || f->agg_within_group || f->func_variadic)
		return sqp_unsupported(x, f->location, "this window function call"), NULL;
	for (k = 0; k < sizeof(fns) / sizeof(fns[0]) && strcmp(fns[k].name, name) != 0; k++)
		;
	if (k == sizeof(fns) / sizeof(fns[0])) {
		snprintf(what, sizeof(what), "the window function %s()", name);
		return sqp_unsupported(x, f->location, what), NULL;
	}
	if ((f->agg_star && strcmp(name, "count") != 0) || f->n_args < fns[k].min ||
	    f->n_args > fns[k].max || (strcmp(name, "count") == 0 && !f->agg_star && f->n_args != 1))
		return sqp_fail(x, f->location, "function %s with %zu arguments does not exist", name,
			    f->n_args), NULL;
	if ((e = sqp_new_expr(x, SQL_E_WINDOW, f->location)) == NULL)
		return NULL;
	snprintf(e->fname, sizeof(e->fname), "%s", name);
	x->win_ok = 0;                  /* no window function inside one */
	x->agg_ok = 0;
	for (i = 0; i < f->n_args; i++)
		if ((args[i] = sqp_value(x, f->args[i], name)) == NULL)
			goto fail;
	e->a = args[0];
	e->c = args[1];
	e->b = args[2];
	nk = w->n_partition_clause + w->n_order_clause;
	if (nk > 0 && ((e->list = sqp_talloc(x, nk * sizeof(*e->list))) == NULL ||
		       (w->n_order_clause > 0 &&
			(e->wdir = sqp_talloc(x, w->n_order_clause)) == NULL)))
		goto fail;
	for (i = 0; i < w->n_partition_clause; i++)
		if ((e->list[i] = sqp_value(x, w->partition_clause[i], "PARTITION BY")) == NULL)
			goto fail;
	for (i = 0; i < w->n_order_clause; i++) {
		const PgQuery__SortBy *sb;
		int desc;

		if (w->order_clause[i]->node_case != PG_QUERY__NODE__NODE_SORT_BY)
			return sqp_fail(x, w->location, "malformed window ORDER BY"), NULL;
		sb = w->order_clause[i]->sort_by;
		if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING) {
			sqp_unsupported(x, sb->location, "ORDER BY ... USING");
			goto fail;
		}
		desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
		e->wdir[i] = (unsigned char)(desc | ((sb->sortby_nulls ==
			PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ||
			(sb->sortby_nulls <= PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT && desc)) << 1));
		if ((e->list[w->n_partition_clause + i] = sqp_value(x, sb->node, "ORDER BY")) == NULL)
			goto fail;
	}
	e->nlist = nk;
	e->npart = w->n_partition_clause;
	x->win_ok = 1;
	x->agg_ok = agg_ok;
	if (push_expr(x, &x->wins, &x->nwins, &x->capwins, e) != 0)
		return NULL;
	return sqp_finish(x, e);
fail:
	x->win_ok = 1;
	x->agg_ok = agg_ok;
	return NULL;
}

/* agg(arg) FILTER (WHERE cond) is agg(CASE WHEN cond THEN arg END), and
 * count(*) FILTER (WHERE cond) count(CASE WHEN cond THEN 1 END): the
 * aggregates skip NULLs, so a row the filter does not pass adds nothing
 * (DISTINCT included), and arg is computed only for the rows it passes. */
static int agg_filter(struct tx *x, const PgQuery__FuncCall *f, struct sql_expr *agg)
{
	struct sql_expr *c = sqp_new_expr(x, SQL_E_CASE, f->location), *cond, *val = agg->a;

	if (c == NULL || (c->list = sqp_talloc(x, 2 * sizeof(*c->list))) == NULL)
		return -1;
	x->agg_ok = 0;                  /* no aggregate in a FILTER */
	cond = sqp_cond(x, f->agg_filter, "FILTER");
	x->agg_ok = 1;
	if (cond == NULL)
		return -1;
	if (val == NULL) {
		if ((val = sqp_new_expr(x, SQL_E_LIT, f->location)) == NULL)
			return -1;
		val->lit.type = SQL_INT;
		val->lit.i = 1;
		val->lit.i4 = 1;
		if ((val = sqp_finish(x, val)) == NULL)
			return -1;
	}
	c->list[0] = cond;
	c->list[1] = val;
	c->nlist = 2;
	return (agg->a = sqp_finish(x, c)) == NULL ? -1 : 0;
}

static struct sql_expr *func_call(struct tx *x, const PgQuery__FuncCall *f)
{
	static const struct { const char *name; size_t min, max; } scalar[] = {
		{ "abs", 1, 1 }, { "lower", 1, 1 }, { "upper", 1, 1 }, { "length", 1, 1 },
		{ "char_length", 1, 1 }, { "round", 1, 2 }, { "substr", 2, 3 },
		{ "substring", 2, 3 }, { "coalesce", 1, 100 }, { "greatest", 1, 100 },
		{ "least", 1, 100 },
	};
	const char *name = sqp_last_name((const PgQuery__Node *const *)f->funcname, f->n_funcname);
	const struct sql_func *fn;
	size_t min, max;
	struct sql_expr *e;
	size_t i, k;
	char what[96];

	if (name == NULL)
		return sqp_fail(x, f->location, "malformed function call"), NULL;
	if (f->over != NULL)
		return window_call(x, f, name);
	if (f->n_agg_order > 0 || f->agg_within_group)
		return sqp_unsupported(x, f->location, "ordered aggregates"), NULL;
	if (f->func_variadic)
		return sqp_unsupported(x, f->location, "VARIADIC"), NULL;
	if (strcmp(name, "count") == 0 || strcmp(name, "sum") == 0 || strcmp(name, "avg") == 0 ||
	    strcmp(name, "min") == 0 || strcmp(name, "max") == 0) {
		if (!x->agg_ok)
			return sqp_fail(x, f->location, "aggregate functions are not allowed here"), NULL;
		if ((e = sqp_new_expr(x, SQL_E_AGG, f->location)) == NULL)
			return NULL;
		snprintf(e->fname, sizeof(e->fname), "%s", name);
		e->distinct = f->agg_distinct;
		if (f->agg_star) {
			if (strcmp(name, "count") != 0)
				return sqp_fail(x, f->location, "%s(*) must be used to call a parameterless "
					    "aggregate function", name), NULL;
		} else {
			if (f->n_args != 1)
				return sqp_fail(x, f->location, "function %s with %zu arguments does not "
					    "exist", name, f->n_args), NULL;
			x->agg_ok = 0;          /* no aggregate inside an aggregate */
			e->a = sqp_value(x, f->args[0], name);
			x->agg_ok = 1;
			if (e->a == NULL)
				return NULL;
		}
		if (f->agg_filter != NULL && agg_filter(x, f, e) != 0)
			return NULL;
		if (push_expr(x, &x->aggs, &x->naggs, &x->capaggs, e) != 0)
			return NULL;
		return sqp_finish(x, e);
	}
	for (k = 0; k < sizeof(scalar) / sizeof(scalar[0]); k++)
		if (strcmp(name, scalar[k].name) == 0)
			break;
	if (k < sizeof(scalar) / sizeof(scalar[0])) {
		min = scalar[k].min;
		max = scalar[k].max;
	} else if ((fn = sql_func_find(name)) != NULL) {   /* sql_func.c's */
		min = fn->min;
		max = fn->max;
	} else {
		snprintf(what, sizeof(what), "the function %s()", name);
		return sqp_unsupported(x, f->location, what), NULL;
	}
	if (f->agg_filter != NULL)
		return sqp_fail(x, f->location, "FILTER specified, but %s is not an aggregate "
			    "function", name), NULL;
	if (f->agg_star || f->agg_distinct || f->n_args < min || f->n_args > max)
		return sqp_fail(x, f->location, "function %s with %zu arguments does not exist", name,
			    f->n_args), NULL;
	if ((e = sqp_new_expr(x, SQL_E_FUNC, f->location)) == NULL ||
	    (e->list = sqp_talloc(x, f->n_args * sizeof(*e->list))) == NULL)
		return NULL;
	snprintf(e->fname, sizeof(e->fname), "%s", name);
	for (i = 0; i < f->n_args; i++)
		if ((e->list[i] = sqp_value(x, f->args[i], name)) == NULL)
			return NULL;
	e->nlist = f->n_args;
	return sqp_finish(x, e);
}

static struct sql_expr *case_expr(struct tx *x, const PgQuery__CaseExpr *c)
{
	struct sql_expr *e = sqp_new_expr(x, SQL_E_CASE, c->location);
	size_t i;

	if (e == NULL || (e->list = sqp_talloc(x, 2 * c->n_args * sizeof(*e->list))) == NULL)
		return NULL;
	if (c->arg != NULL && (e->a = sqp_value(x, c->arg, "CASE")) == NULL)
		return NULL;
	for (i = 0; i < c->n_args; i++) {
		const PgQuery__CaseWhen *w;

		if (c->args[i]->node_case != PG_QUERY__NODE__NODE_CASE_WHEN)
			return sqp_fail(x, c->location, "malformed CASE"), NULL;
		w = c->args[i]->case_when;
		/* all but the first WHEN and every result: evaluated when needed */
		x->lazy += i > 0;
		e->list[2 * i] = c->arg != NULL ? sqp_value(x, w->expr, "CASE") : sqp_cond(x, w->expr, "CASE");
		x->lazy += i == 0;
		if (e->list[2 * i] != NULL)
			e->list[2 * i + 1] = sqp_value(x, w->result, "CASE");
		x->lazy--;
		if (e->list[2 * i] == NULL || e->list[2 * i + 1] == NULL)
			return NULL;
	}
	e->nlist = 2 * c->n_args;
	x->lazy++;
	if (c->defresult != NULL)
		e->b = sqp_value(x, c->defresult, "CASE");
	x->lazy--;
	if (c->defresult != NULL && e->b == NULL)
		return NULL;
	return sqp_finish(x, e);
}

static int type_of(struct tx *x, const PgQuery__TypeName *t, enum sql_ctype *out)
{
	struct sql_coldef c;

	memset(&c, 0, sizeof(c));
	if (sqp_column_type(x, t, &c) != 0)
		return -1;
	*out = c.type;
	return 0;
}

int sqp_select_stmt(struct tx *x, const PgQuery__SelectStmt *s, int pos, struct sql_stmt *st);

void sqp_new_select(struct tx *x)
{
	x->tname[0] = x->talias[0] = '\0';
	x->join = NULL;
	x->agg_ok = 0;
	x->aggs = NULL;
	x->naggs = x->capaggs = 0;
	x->win_ok = 0;
	x->wins = NULL;
	x->nwins = x->capwins = 0;
}

/* A subquery: its SELECT parsed into a statement of its own (sharing the
 * arena), with the parser's per-SELECT state saved around it. */
static struct sql_expr *sub_link(struct tx *x, const PgQuery__SubLink *l)
{
	struct sql_stmt *sub;
	struct sql_expr *e, *test = NULL;
	struct tx save = *x;
	enum sql_ekind kind;
	int rc;

	switch (l->sub_link_type) {
	case PG_QUERY__SUB_LINK_TYPE__EXISTS_SUBLINK:
		kind = SQL_E_EXISTS;
		break;
	case PG_QUERY__SUB_LINK_TYPE__EXPR_SUBLINK:
		kind = SQL_E_SCALARSUB;
		break;
	case PG_QUERY__SUB_LINK_TYPE__ANY_SUBLINK:
		if (l->n_oper_name > 0 && (l->n_oper_name != 1 || sqp_str_of(l->oper_name[0]) == NULL ||
					   strcmp(sqp_str_of(l->oper_name[0]), "=") != 0))
			return sqp_unsupported(x, l->location, "ANY and SOME with subqueries"), NULL;
		kind = SQL_E_INSUB;
		if (l->testexpr != NULL && l->testexpr->node_case == PG_QUERY__NODE__NODE_ROW_EXPR)
			return sqp_unsupported(x, l->location, "row constructors"), NULL;
		if ((test = sqp_value(x, l->testexpr, "IN")) == NULL)
			return NULL;
		break;
	case PG_QUERY__SUB_LINK_TYPE__ALL_SUBLINK:
		return sqp_unsupported(x, l->location, "ALL with subqueries"), NULL;
	case PG_QUERY__SUB_LINK_TYPE__ARRAY_SUBLINK:
		return sqp_unsupported(x, l->location, "ARRAY subqueries"), NULL;
	default:
		return sqp_unsupported(x, l->location, "this kind of subquery"), NULL;
	}
	if (l->subselect == NULL || l->subselect->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
		return sqp_fail(x, l->location, "malformed subquery"), NULL;
	if ((sub = sqp_talloc(x, sizeof(*sub))) == NULL)
		return NULL;
	sub->arena = x->ar;
	sub->shared_arena = 1;
	sub->limit = -1;
	snprintf(x->outer, sizeof(x->outer), "%s", x->talias[0] != '\0' ? x->talias : x->tname);
	x->outer_join = x->join;
	sqp_new_select(x);
	x->force_general = 1;
	x->fields_ok = 1;
	rc = sqp_select_stmt(x, l->subselect->select_stmt, l->location, sub);
	/* back to the outer SELECT (keeping the first error, if any) */
	save.rc = x->rc;
	save.errpos = x->errpos;
	save.depth = x->depth;
	*x = save;
	if (rc != 0)
		return NULL;
	if ((e = sqp_new_expr(x, kind, l->location)) == NULL)
		return NULL;
	e->sub = sub;
	e->a = test;
	return sqp_finish(x, e);
}

static struct sql_expr *bool_expr(struct tx *x, const PgQuery__BoolExpr *b)
{
	struct sql_expr **terms, *e;
	const char *name;
	size_t i;

	switch (b->boolop) {
	case PG_QUERY__BOOL_EXPR_TYPE__NOT_EXPR:
		if (b->n_args != 1)
			break;
		if ((e = sqp_new_expr(x, SQL_E_NOT, b->location)) == NULL ||
		    (e->a = sqp_cond(x, b->args[0], "NOT")) == NULL)
			return NULL;
		return sqp_finish(x, e);
	case PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR:
	case PG_QUERY__BOOL_EXPR_TYPE__OR_EXPR:
		if (b->n_args < 1)
			break;
		name = b->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR ? "AND" : "OR";
		if ((terms = sqp_talloc(x, b->n_args * sizeof(*terms))) == NULL)
			return NULL;
		for (i = 0; i < b->n_args; i++)
			if ((terms[i] = sqp_cond(x, b->args[i], name)) == NULL)
				return NULL;
		return balance(x, b->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR ? SQL_E_AND : SQL_E_OR,
			       terms, b->location, 0, b->n_args - 1);
	default:
		break;
	}
	sqp_fail(x, b->location, "malformed boolean expression");
	return NULL;
}

/* The FROM entry a name (alias, or table without one) stands for, or -1. */
int sqp_from_index(const struct sql_query *q, const char *name)
{
	size_t i;

	for (i = 0; i < q->nfroms; i++) {
		const struct sql_from *f = &q->froms[i];

		if (strcmp(f->alias[0] != '\0' ? f->alias : f->table, name) == 0)
			return (int)i;
	}
	return -1;
}

struct sql_expr *sqp_column_ref(struct tx *x, const PgQuery__ColumnRef *c)
{
	struct sql_expr *e;
	const char *name;

	if (x->join != NULL && c->n_fields <= 2) {
		const char *q = c->n_fields == 2 ? sqp_str_of(c->fields[0]) : NULL;

		if (c->n_fields == 2 && (q == NULL || sqp_from_index(x->join, q) < 0)) {
			if (q != NULL && ((x->outer[0] != '\0' && strcmp(q, x->outer) == 0) ||
					  (x->outer_join != NULL && sqp_from_index(x->outer_join, q) >= 0)))
				return sqp_unsupported(x, c->location, "correlated subqueries"), NULL;
			return sqp_fail(x, c->location, "missing FROM-clause entry for table \"%s\"",
				    q != NULL ? q : "?"), NULL;
		}
		name = sqp_str_of(c->fields[c->n_fields - 1]);
		if (c->fields[c->n_fields - 1]->node_case == PG_QUERY__NODE__NODE_A_STAR)
			return sqp_unsupported(x, c->location, "* here"), NULL;
		if (name == NULL || (e = sqp_new_expr(x, SQL_E_COL, c->location)) == NULL ||
		    sqp_take(x, name, e->col, c->location) != 0)
			return NULL;
		if (q != NULL)
			snprintf(e->qual, sizeof(e->qual), "%s", q);
		return e;
	}
	if (c->n_fields == 2 && sqp_str_of(c->fields[0]) != NULL &&
	    ((x->talias[0] != '\0' && strcmp(sqp_str_of(c->fields[0]), x->talias) == 0) ||
	     (x->talias[0] == '\0' && x->tname[0] != '\0' &&
	      strcmp(sqp_str_of(c->fields[0]), x->tname) == 0))) {
		name = sqp_str_of(c->fields[1]);
	} else if (c->n_fields == 2 && sqp_str_of(c->fields[0]) != NULL && x->outer_join == NULL &&
		   x->outer[0] != '\0' && strcmp(sqp_str_of(c->fields[0]), x->outer) == 0 &&
		   x->fields_ok) {
		/* the outer statement's column: bound with sql_bind_outer */
		if ((name = sqp_str_of(c->fields[1])) == NULL ||
		    (e = sqp_new_expr(x, SQL_E_COL, c->location)) == NULL ||
		    sqp_take(x, name, e->col, c->location) != 0)
			return NULL;
		snprintf(e->qual, sizeof(e->qual), "%s", x->outer);
		return e;
	} else if (c->n_fields == 2 && sqp_str_of(c->fields[0]) != NULL &&
		   ((x->outer[0] != '\0' && strcmp(sqp_str_of(c->fields[0]), x->outer) == 0) ||
		    (x->outer_join != NULL && sqp_from_index(x->outer_join, sqp_str_of(c->fields[0])) >= 0))) {
		/* (no fields_ok: a subquery in FROM reading the statement around
		 * the one it is in) */
		return sqp_unsupported(x, c->location, x->outer_join != NULL ?
				       "correlated subqueries of joins" : "correlated subqueries"), NULL;
	} else if (c->n_fields == 2 && sqp_str_of(c->fields[0]) != NULL) {
		return sqp_fail(x, c->location, "missing FROM-clause entry for table \"%s\"",
			    sqp_str_of(c->fields[0])), NULL;
	} else if (c->n_fields != 1) {
		return sqp_unsupported(x, c->location, "qualified column names"), NULL;
	} else {
		name = sqp_str_of(c->fields[0]);
	}
	if (c->fields[c->n_fields - 1]->node_case == PG_QUERY__NODE__NODE_A_STAR)
		return sqp_unsupported(x, c->location, "* here"), NULL;
	if (name == NULL)
		return sqp_fail(x, c->location, "malformed column reference"), NULL;
	if ((e = sqp_new_expr(x, SQL_E_COL, c->location)) == NULL)
		return NULL;
	if (sqp_take(x, name, e->col, c->location) != 0)
		return NULL;
	return e;
}

struct sql_expr *sqp_expr(struct tx *x, const Node *n)
{
	struct sql_expr *e = NULL;

	if (n == NULL) {
		sqp_fail(x, -1, "missing expression");
		return NULL;
	}
	if (++x->depth > SQL_MAX_NESTING) {
		sqp_fail(x, sqp_node_pos(n), "expression nested too deeply");
		return NULL;
	}
	switch (n->node_case) {
	case PG_QUERY__NODE__NODE_A_CONST:
		e = constant(x, n->a_const);
		break;
	case PG_QUERY__NODE__NODE_COLUMN_REF:
		e = sqp_column_ref(x, n->column_ref);
		break;
	case PG_QUERY__NODE__NODE_A_EXPR:
		e = a_expr(x, n->a_expr);
		break;
	case PG_QUERY__NODE__NODE_BOOL_EXPR:
		e = bool_expr(x, n->bool_expr);
		break;
	case PG_QUERY__NODE__NODE_NULL_TEST: {
		const PgQuery__NullTest *t = n->null_test;

		if ((e = sqp_new_expr(x, SQL_E_ISNULL, t->location)) == NULL)
			break;
		e->negated = t->nulltesttype == PG_QUERY__NULL_TEST_TYPE__IS_NOT_NULL;
		if ((e->a = sqp_value(x, t->arg, e->negated ? "IS NOT NULL" : "IS NULL")) == NULL ||
		    sqp_finish(x, e) == NULL)
			e = NULL;
		break;
	}
	case PG_QUERY__NODE__NODE_FUNC_CALL:
		e = func_call(x, n->func_call);
		break;
	case PG_QUERY__NODE__NODE_CASE_EXPR:
		e = case_expr(x, n->case_expr);
		break;
	case PG_QUERY__NODE__NODE_SUB_LINK:
		e = sub_link(x, n->sub_link);
		break;
	case PG_QUERY__NODE__NODE_COALESCE_EXPR: {
		const PgQuery__CoalesceExpr *c = n->coalesce_expr;
		size_t i;

		if ((e = sqp_new_expr(x, SQL_E_FUNC, c->location)) == NULL ||
		    (e->list = sqp_talloc(x, c->n_args * sizeof(*e->list))) == NULL) {
			e = NULL;
			break;
		}
		snprintf(e->fname, sizeof(e->fname), "coalesce");
		for (i = 0; i < c->n_args && e != NULL; i++) {
			/* the arguments after the first: evaluated when needed */
			x->lazy += i > 0;
			if ((e->list[i] = sqp_value(x, c->args[i], "COALESCE")) == NULL)
				e = NULL;
			x->lazy -= i > 0;
		}
		if (e != NULL) {
			e->nlist = c->n_args;
			e = sqp_finish(x, e);
		}
		break;
	}
	case PG_QUERY__NODE__NODE_MIN_MAX_EXPR: {
		const PgQuery__MinMaxExpr *m = n->min_max_expr;
		size_t i;

		if ((e = sqp_new_expr(x, SQL_E_FUNC, m->location)) == NULL ||
		    (e->list = sqp_talloc(x, m->n_args * sizeof(*e->list))) == NULL) {
			e = NULL;
			break;
		}
		snprintf(e->fname, sizeof(e->fname), "%s",
			 m->op == PG_QUERY__MIN_MAX_OP__IS_GREATEST ? "greatest" : "least");
		for (i = 0; i < m->n_args && e != NULL; i++)
			if ((e->list[i] = sqp_value(x, m->args[i], e->fname)) == NULL)
				e = NULL;
		if (e != NULL) {
			e->nlist = m->n_args;
			e = sqp_finish(x, e);
		}
		break;
	}
	case PG_QUERY__NODE__NODE_TYPE_CAST: {
		const PgQuery__TypeCast *tc = n->type_cast;

		if ((e = sqp_new_expr(x, SQL_E_CAST, tc->location)) == NULL ||
		    type_of(x, tc->type_name, &e->cast_type) != 0 ||
		    (e->a = sqp_value(x, tc->arg, "CAST")) == NULL || sqp_finish(x, e) == NULL)
			e = NULL;
		break;
	}
	default:
		sqp_node_unsupported(x, n, -1);
		break;
	}
	x->depth--;
	return e;
}

/* An expression that names no column (VALUES, LIMIT). */
struct sql_expr *sqp_constant_expr(struct tx *x, const Node *n, const char *what)
{
	struct sql_expr *e = sqp_value(x, n, what);
	const struct sql_expr *c;

	if (e == NULL)
		return NULL;
	if (e->kind != SQL_E_LIT) {
		c = first_col(e);
		sqp_fail(x, c != NULL ? c->pos : e->pos, "column \"%s\" does not exist",
		     c != NULL ? c->col : "?");
		return NULL;
	}
	return e;
}
