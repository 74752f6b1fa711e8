/*
 * sql_parse_select.c - SELECT into struct sql_stmt: the plain form (star,
 * columns, count(*) of one table), the general one (struct sql_query:
 * select list, GROUP BY, HAVING, DISTINCT, ORDER BY, OFFSET), the FROM of
 * a join and set operations.
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

int sqp_select_plain(struct tx *x, const PgQuery__SelectStmt *s, int pos)
{
	if (s->op != PG_QUERY__SET_OPERATION__SETOP_NONE)
		return sqp_unsupported(x, pos, s->op == PG_QUERY__SET_OPERATION__SETOP_UNION ? "UNION" :
				   s->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT ? "INTERSECT" :
				   "EXCEPT");
	if (s->with_clause != NULL)
		return sqp_unsupported(x, s->with_clause->location, "WITH");
	if (s->into_clause != NULL)
		return sqp_unsupported(x, pos, "SELECT INTO");
	if (s->n_values_lists > 0)
		return sqp_unsupported(x, pos, "VALUES as a query");
	if (s->n_distinct_clause > 0)
		return sqp_unsupported(x, pos, "SELECT DISTINCT");
	if (s->n_group_clause > 0)
		return sqp_unsupported(x, sqp_node_pos(s->group_clause[0]) >= 0 ?
				   sqp_node_pos(s->group_clause[0]) : pos, "GROUP BY");
	if (s->having_clause != NULL)
		return sqp_unsupported(x, sqp_node_pos(s->having_clause) >= 0 ?
				   sqp_node_pos(s->having_clause) : pos, "HAVING");
	if (s->n_window_clause > 0)
		return sqp_unsupported(x, pos, "WINDOW");
	if (s->n_locking_clause > 0)
		return sqp_unsupported(x, pos, "FOR UPDATE and FOR SHARE");
	if (s->limit_offset != NULL)
		return sqp_unsupported(x, sqp_node_pos(s->limit_offset) >= 0 ? sqp_node_pos(s->limit_offset) :
				   pos, "OFFSET");
	if (s->limit_option == PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_WITH_TIES)
		return sqp_unsupported(x, pos, "FETCH ... WITH TIES");
	if (s->n_from_clause == 0)
		return sqp_unsupported(x, pos, "SELECT without FROM");
	if (s->n_from_clause > 1)
		return sqp_unsupported(x, sqp_node_pos(s->from_clause[1]) >= 0 ?
				   sqp_node_pos(s->from_clause[1]) : pos, "joins");
	if (s->from_clause[0]->node_case != PG_QUERY__NODE__NODE_RANGE_VAR)
		return sqp_node_unsupported(x, s->from_clause[0], pos);
	if (s->from_clause[0]->range_var->alias != NULL)
		return sqp_unsupported(x, s->from_clause[0]->range_var->location, "table aliases");
	return 0;
}

int sqp_is_star(const Node *n)
{
	return n != NULL && n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
	       n->column_ref->n_fields == 1 &&
	       n->column_ref->fields[0]->node_case == PG_QUERY__NODE__NODE_A_STAR;
}

static int is_count_star(const Node *n)
{
	const PgQuery__FuncCall *f;

	if (n == NULL || n->node_case != PG_QUERY__NODE__NODE_FUNC_CALL)
		return 0;
	f = n->func_call;
	return f->n_funcname == 1 && sqp_str_of(f->funcname[0]) != NULL &&
	       strcmp(sqp_str_of(f->funcname[0]), "count") == 0 && f->agg_star && !f->agg_distinct &&
	       f->agg_filter == NULL && f->over == NULL && f->n_agg_order == 0;
}

static int limit(struct tx *x, const Node *n, struct sql_stmt *st)
{
	int pos = sqp_node_pos(n);
	struct sql_expr *e = sqp_value(x, n, "LIMIT");

	if (e == NULL)
		return -1;
	if (e->kind != SQL_E_LIT)
		return sqp_fail(x, pos, "argument of LIMIT must not contain variables");
	switch (e->lit.type) {
	case SQL_NULL:
		return 0;
	case SQL_INT:
		if (e->lit.i < 0)
			return sqp_fail(x, pos, "LIMIT must not be negative");
		st->limit = e->lit.i;
		return 0;
	default:
		return sqp_fail(x, pos, "argument of LIMIT must be type bigint, not type %s",
			    sql_vtype_name(e->lit.type));
	}
}

/* The output name PostgreSQL gives an expression (FigureColname). */
static const char *figure_name(const Node *n)
{
	if (n == NULL)
		return NULL;
	switch (n->node_case) {
	case PG_QUERY__NODE__NODE_COLUMN_REF: {
		const PgQuery__ColumnRef *c = n->column_ref;

		return c->n_fields > 0 ? sqp_str_of(c->fields[c->n_fields - 1]) : NULL;
	}
	case PG_QUERY__NODE__NODE_FUNC_CALL:
		return sqp_last_name((const PgQuery__Node *const *)n->func_call->funcname,
				 n->func_call->n_funcname);
	case PG_QUERY__NODE__NODE_CASE_EXPR: return "case";
	case PG_QUERY__NODE__NODE_COALESCE_EXPR: return "coalesce";
	case PG_QUERY__NODE__NODE_A_CONST:
		return n->a_const->val_case == PG_QUERY__A__CONST__VAL_BOOLVAL ? "bool" : NULL;
	case PG_QUERY__NODE__NODE_SUB_LINK: {
		const PgQuery__SubLink *l = n->sub_link;
		const PgQuery__SelectStmt *s;

		if (l->sub_link_type == PG_QUERY__SUB_LINK_TYPE__EXISTS_SUBLINK)
			return "exists";
		if (l->sub_link_type != PG_QUERY__SUB_LINK_TYPE__EXPR_SUBLINK || l->subselect == NULL ||
		    l->subselect->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
			return NULL;
		s = l->subselect->select_stmt;
		if (s->n_target_list < 1)
			return NULL;
		if (s->target_list[0]->res_target->name != NULL &&
		    s->target_list[0]->res_target->name[0] != '\0')
			return s->target_list[0]->res_target->name;
		return figure_name(s->target_list[0]->res_target->val);
	}
	case PG_QUERY__NODE__NODE_MIN_MAX_EXPR:
		return n->min_max_expr->op == PG_QUERY__MIN_MAX_OP__IS_GREATEST ? "greatest" : "least";
	case PG_QUERY__NODE__NODE_A_EXPR:
		return n->a_expr->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF ? "nullif" : NULL;
	case PG_QUERY__NODE__NODE_TYPE_CAST: {
		const char *a = figure_name(n->type_cast->arg);
		const PgQuery__TypeName *t = n->type_cast->type_name;

		if (a != NULL)
			return a;
		return t->n_names > 0 ? sqp_str_of(t->names[t->n_names - 1]) : NULL;
	}
	default:
		return NULL;
	}
}

/* A constant integer node (ORDER BY 2, GROUP BY 1), or -1. */
static int64_t const_int(const Node *n)
{
	if (n != NULL && n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
	    n->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL && !n->a_const->isnull)
		return n->a_const->ival != NULL ? n->a_const->ival->ival : 0;
	return -1;
}

static int limit_value(struct tx *x, const Node *n, const char *what, int64_t *out)
{
	int pos = sqp_node_pos(n);
	struct sql_expr *e = sqp_value(x, n, what);

	if (e == NULL)
		return -1;
	if (e->kind != SQL_E_LIT)
		return sqp_fail(x, pos, "argument of %s must not contain variables", what);
	switch (e->lit.type) {
	case SQL_NULL:
		return 0;
	case SQL_INT:
		if (e->lit.i < 0)
			return sqp_fail(x, pos, "%s must not be negative", what);
		*out = e->lit.i;
		return 0;
	default:
		return sqp_fail(x, pos, "argument of %s must be type bigint, not type %s", what,
			    sql_vtype_name(e->lit.type));
	}
}

/* Whether a SELECT is beyond the plain form (star, columns or count(*)
 * of one table, ORDER BY columns, LIMIT). */
static int needs_general(const PgQuery__SelectStmt *s)
{
	size_t i, n = s->n_target_list;

	if (n == 0 || s->n_from_clause != 1 || s->from_clause[0]->node_case != PG_QUERY__NODE__NODE_RANGE_VAR ||
	    s->from_clause[0]->range_var->alias != NULL || s->n_distinct_clause > 0 ||
	    s->n_group_clause > 0 || s->having_clause != NULL || s->limit_offset != NULL)
		return 1;
	for (i = 0; i < n; i++) {
		const PgQuery__ResTarget *rt = s->target_list[i]->res_target;
		const Node *v = rt->val;

		if (rt->name != NULL && rt->name[0] != '\0')
			return 1;
		if ((sqp_is_star(v) || is_count_star(v)) && n == 1)
			continue;
		if (v->node_case != PG_QUERY__NODE__NODE_COLUMN_REF || sqp_is_star(v) ||
		    v->column_ref->n_fields != 1)
			return 1;
	}
	for (i = 0; i < s->n_sort_clause; i++) {
		const PgQuery__SortBy *sb = s->sort_clause[i]->sort_by;

		if (sb->node->node_case != PG_QUERY__NODE__NODE_COLUMN_REF ||
		    sb->node->column_ref->n_fields != 1 ||
		    sb->sortby_nulls > PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT)
			return 1;
	}
	return 0;
}

/* The WITH query a table name in FROM refers to, innermost first; NULL
 * for a table (a schema-qualified name never refers to one). */
static struct sqp_cte *cte_find(const struct tx *x, const PgQuery__RangeVar *rv)
{
	char name[SQL_NAME_MAX + 1];

	if ((rv->schemaname != NULL && rv->schemaname[0] != '\0') ||
	    (rv->catalogname != NULL && rv->catalogname[0] != '\0') || rv->relname == NULL)
		return NULL;
	snprintf(name, sizeof(name), "%s", rv->relname);
	for (struct sqp_cte *c = x->ctes; c != NULL; c = c->up)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* The SELECT of a subquery in FROM or of a WITH query: a statement of its
 * own (sharing the arena), with the parser's per-SELECT state saved around
 * it.  It reads no column of the FROM it is in (no LATERAL), and none of a
 * statement around that one (refused as a correlated subquery). */
static struct sql_stmt *derived_stmt(struct tx *x, const Node *n, int pos)
{
	struct sql_stmt *b;
	struct tx save = *x;
	int rc;

	if (n == NULL || n->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
		return sqp_fail(x, pos, "malformed subquery"), NULL;
	if ((b = sqp_talloc(x, sizeof(*b))) == NULL)
		return NULL;
	b->arena = x->ar;
	b->shared_arena = 1;
	b->limit = -1;
	sqp_new_select(x);
	x->fields_ok = 0;
	x->force_general = 0;
	rc = sqp_select_stmt(x, n->select_stmt, pos, b);
	save.rc = x->rc;
	save.errpos = x->errpos;
	save.depth = x->depth;
	*x = save;
	return rc == 0 ? b : NULL;
}

/* The body of WITH query c, parsed with only the WITH queries before it in
 * scope. */
static struct sql_stmt *cte_stmt(struct tx *x, const struct sqp_cte *c, int pos)
{
	struct sqp_cte *scope = x->ctes;
	struct sql_stmt *b;

	x->ctes = c->up;
	b = derived_stmt(x, c->cte->ctequery, pos);
	x->ctes = scope;
	return b;
}

/* Where a subquery in FROM starts, for messages: PostgreSQL's tree gives
 * its SELECT no location, so the '(' before its first select-list item
 * (of its first SELECT, for a set operation); fallback when none. */
static int subquery_pos(const struct tx *x, const Node *n, int fallback)
{
	const PgQuery__SelectStmt *s;
	int i;

	if (n == NULL || n->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
		return fallback;
	s = n->select_stmt;
	while (s->op != PG_QUERY__SET_OPERATION__SETOP_NONE && s->larg != NULL)
		s = s->larg;
	if (s->n_target_list == 0 || s->target_list[0]->node_case != PG_QUERY__NODE__NODE_RES_TARGET ||
	    (i = s->target_list[0]->res_target->location) < 0 || (size_t)i > x->len)
		return fallback;
	while (i > 0 && x->sql[i - 1] != '(')
		i--;
	return i > 0 ? i - 1 : fallback;
}

/* The next FROM item of q, zeroed (q->nfroms is counted once it is
 * filled in); NULL when out of memory. */
static struct sql_from *from_new(struct tx *x, struct sql_query *q, enum sql_join join, int pos)
{
	struct sql_from *f;

	if (q->nfroms == x->capfroms) {
		q->froms = sql_arena_grow(x->ar, q->froms, q->nfroms, &x->capfroms, sizeof(*q->froms));
		if (q->froms == NULL)
			return sqp_fail_nomem(x), NULL;
	}
	f = &q->froms[q->nfroms];
	memset(f, 0, sizeof(*f));
	f->join = join;
	f->pos = pos;
	return f;
}

/* Column aliases (names[0..n)) of a FROM item into f. */
static int from_colnames(struct tx *x, struct sql_from *f, PgQuery__Node *const *names, size_t n,
			 int pos)
{
	if (n == 0)
		return 0;
	if ((f->colnames = sqp_talloc(x, n * sizeof(*f->colnames))) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *nm = sqp_str_of(names[i]);

		if (nm == NULL)
			return sqp_fail(x, pos, "malformed column alias");
		if (sqp_take(x, nm, f->colnames[i], pos) != 0)
			return -1;
	}
	f->ncolnames = n;
	return 0;
}

/* A subquery in FROM, or a WITH query named there (sub, already parsed),
 * into q->froms as table name (alias: "" or the alias). */
static int from_derived(struct tx *x, struct sql_query *q, enum sql_join join, struct sql_stmt *sub,
			const char *name, const PgQuery__Alias *alias,
			PgQuery__Node *const *colnames, size_t ncolnames, int pos)
{
	struct sql_from *f;
	const char *as;

	if ((f = from_new(x, q, join, pos)) == NULL)
		return -1;
	f->sub = sub;
	if (sqp_take(x, name, f->table, pos) != 0)
		return -1;
	if (alias != NULL && alias->aliasname != NULL && alias->aliasname[0] != '\0' &&
	    sqp_take(x, alias->aliasname, f->alias, pos) != 0)
		return -1;
	if (alias != NULL && alias->n_colnames > 0) {
		colnames = alias->colnames;
		ncolnames = alias->n_colnames;
	}
	if (from_colnames(x, f, colnames, ncolnames, pos) != 0)
		return -1;
	as = f->alias[0] != '\0' ? f->alias : f->table;
	if (sqp_from_index(q, as) >= 0)
		return sqp_fail(x, pos, "table name \"%s\" specified more than once", as);
	q->nfroms++;
	return 0;
}

/* WITH: its queries come into scope one after the other, each body parsed
 * (and so checked) here, as PostgreSQL checks a WITH query it never runs;
 * each reference in a FROM parses it again into a subquery of its own. */
static int with_push(struct tx *x, const PgQuery__WithClause *w)
{
	if (w->recursive)
		return sqp_unsupported(x, w->location, "WITH RECURSIVE");
	for (size_t i = 0; i < w->n_ctes; i++) {
		const PgQuery__CommonTableExpr *c;
		struct sqp_cte *e;

		if (w->ctes[i] == NULL || w->ctes[i]->node_case != PG_QUERY__NODE__NODE_COMMON_TABLE_EXPR)
			return sqp_fail(x, w->location, "malformed WITH");
		c = w->ctes[i]->common_table_expr;
		if (c->ctequery == NULL || c->ctequery->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
			return sqp_unsupported(x, c->location, "data-modifying statements in WITH");
		if (c->search_clause != NULL || c->cycle_clause != NULL)
			return sqp_unsupported(x, c->location, "SEARCH and CYCLE");
		if ((e = sqp_talloc(x, sizeof(*e))) == NULL ||
		    sqp_take(x, c->ctename != NULL ? c->ctename : "", e->name, c->location) != 0)
			return -1;
		for (size_t j = 0; j < i; j++)
			if (strcmp(w->ctes[j]->common_table_expr->ctename, c->ctename) == 0)
				return sqp_fail(x, c->location, "WITH query name \"%s\" specified more "
					    "than once", e->name);
		e->cte = c;
		e->up = x->ctes;
		if (cte_stmt(x, e, c->location) == NULL)
			return -1;
		x->ctes = e;
	}
	return 0;
}

/* A table of FROM into q->froms. */
static int from_table(struct tx *x, const PgQuery__RangeVar *rv, struct sql_query *q,
		      enum sql_join join)
{
	struct sql_from *f;
	const char *name;
	struct sqp_cte *c = cte_find(x, rv);

	if (c != NULL) {
		struct sql_stmt *sub = cte_stmt(x, c, rv->location);

		if (sub == NULL)
			return -1;
		return from_derived(x, q, join, sub, c->name, rv->alias, c->cte->aliascolnames,
				    c->cte->n_aliascolnames, rv->location);
	}
	if ((f = from_new(x, q, join, rv->location)) == NULL)
		return -1;
	if (sqp_table_name(x, rv, f->table, NULL) != 0)
		return -1;
	if (rv->alias != NULL) {
		if (rv->alias->n_colnames > 0)
			return sqp_unsupported(x, rv->location, "column aliases in FROM");
		if (sqp_take(x, rv->alias->aliasname, f->alias, rv->location) != 0)
			return -1;
	}
	name = f->alias[0] != '\0' ? f->alias : f->table;
	if (sqp_from_index(q, name) >= 0)
		return sqp_fail(x, rv->location, "table name \"%s\" specified more than once", name);
	q->nfroms++;
	return 0;
}

/* A FROM item: a table, or a join of items (flattened in order; the ON of
 * a join goes to the last table of its right side). */
static int from_item(struct tx *x, const Node *n, struct sql_query *q, enum sql_join join, int pos)
{
	const PgQuery__JoinExpr *j;
	enum sql_join jt;
	size_t first_right;

	if (++x->depth > SQL_MAX_NESTING)
		return sqp_fail(x, pos, "expression nested too deeply");
	x->depth--;
	switch (n->node_case) {
	case PG_QUERY__NODE__NODE_RANGE_VAR:
		return from_table(x, n->range_var, q, join);
	case PG_QUERY__NODE__NODE_RANGE_SUBSELECT: {
		const PgQuery__RangeSubselect *rs = n->range_subselect;
		int at = subquery_pos(x, rs->subquery, pos);
		struct sql_stmt *sub;

		if (rs->lateral)
			return sqp_unsupported(x, at, "LATERAL");
		if (rs->alias == NULL || rs->alias->aliasname == NULL || rs->alias->aliasname[0] == '\0')
			return sqp_fail(x, at, "subquery in FROM must have an alias");
		if ((sub = derived_stmt(x, rs->subquery, at)) == NULL)
			return -1;
		return from_derived(x, q, join, sub, rs->alias->aliasname, rs->alias, NULL, 0, at);
	}
	case PG_QUERY__NODE__NODE_JOIN_EXPR:
		break;
	default:
		return sqp_node_unsupported(x, n, pos);
	}
	j = n->join_expr;
	if (j->is_natural)
		return sqp_unsupported(x, pos, "NATURAL JOIN");
	if (j->alias != NULL || j->join_using_alias != NULL)
		return sqp_unsupported(x, pos, "aliases of joins");
	switch (j->jointype) {
	case PG_QUERY__JOIN_TYPE__JOIN_INNER:
		jt = j->quals != NULL || j->n_using_clause > 0 ? SQL_JOIN_INNER : SQL_JOIN_NONE;
		break;
	case PG_QUERY__JOIN_TYPE__JOIN_LEFT:
		jt = SQL_JOIN_LEFT;
		break;
	case PG_QUERY__JOIN_TYPE__JOIN_RIGHT:
		return sqp_unsupported(x, pos, "RIGHT JOIN");
	case PG_QUERY__JOIN_TYPE__JOIN_FULL:
		return sqp_unsupported(x, pos, "FULL JOIN");
	default:
		return sqp_unsupported(x, pos, "this kind of join");
	}
	if (from_item(x, j->larg, q, join, pos) != 0)
		return -1;
	first_right = q->nfroms;
	if (jt == SQL_JOIN_LEFT && j->rarg->node_case != PG_QUERY__NODE__NODE_RANGE_VAR &&
	    j->rarg->node_case != PG_QUERY__NODE__NODE_RANGE_SUBSELECT)
		return sqp_unsupported(x, pos, "LEFT JOIN of a parenthesized join");
	if (from_item(x, j->rarg, q, jt == SQL_JOIN_LEFT ? SQL_JOIN_LEFT : SQL_JOIN_NONE, pos) != 0)
		return -1;
	if (jt == SQL_JOIN_NONE)
		return 0;
	if (j->quals != NULL) {
		struct sql_expr *on = sqp_cond(x, j->quals, "JOIN/ON");

		if (on == NULL)
			return -1;
		q->froms[q->nfroms - 1].on = on;
	} else {
		/* USING (a, ...): left.a = right.a AND ... */
		struct sql_expr *all = NULL;
		const struct sql_from *l = &q->froms[first_right - 1], *r = &q->froms[q->nfroms - 1];
		size_t k;

		for (k = 0; k < j->n_using_clause; k++) {
			const char *nm = sqp_str_of(j->using_clause[k]);
			struct sql_expr *a, *b, *eq, *and;

			if (nm == NULL || (a = sqp_new_expr(x, SQL_E_COL, pos)) == NULL ||
			    (b = sqp_new_expr(x, SQL_E_COL, pos)) == NULL ||
			    (eq = sqp_new_expr(x, SQL_E_CMP, pos)) == NULL)
				return -1;
			snprintf(a->col, sizeof(a->col), "%s", nm);
			snprintf(b->col, sizeof(b->col), "%s", nm);
			snprintf(a->qual, sizeof(a->qual), "%s", l->alias[0] ? l->alias : l->table);
			snprintf(b->qual, sizeof(b->qual), "%s", r->alias[0] ? r->alias : r->table);
			eq->op = SQL_EQ;
			eq->a = a;
			eq->b = b;
			if (sqp_finish(x, eq) == NULL)
				return -1;
			if (all == NULL) {
				all = eq;
				continue;
			}
			if ((and = sqp_new_expr(x, SQL_E_AND, pos)) == NULL)
				return -1;
			and->a = all;
			and->b = eq;
			if ((all = sqp_finish(x, and)) == NULL)
				return -1;
		}
		q->froms[q->nfroms - 1].on = all;
		if ((q->froms[q->nfroms - 1].using = sqp_talloc(x, j->n_using_clause *
				sizeof(*q->froms[0].using))) == NULL)
			return -1;
		for (k = 0; k < j->n_using_clause; k++)
			snprintf(q->froms[q->nfroms - 1].using[k], SQL_NAME_MAX + 1, "%s",
				 sqp_str_of(j->using_clause[k]));
		q->froms[q->nfroms - 1].nusing = j->n_using_clause;
	}
	q->froms[q->nfroms - 1].join = jt;
	return 0;
}

static int general_select(struct tx *x, const PgQuery__SelectStmt *s, int pos,
			  struct sql_stmt *st)
{
	struct sql_query *q = sqp_talloc(x, sizeof(*q));
	size_t i, n = s->n_target_list;

	if (q == NULL)
		return -1;
	st->q = q;
	if (s->n_from_clause > 1 ||
	    (s->n_from_clause == 1 && s->from_clause[0]->node_case != PG_QUERY__NODE__NODE_RANGE_VAR) ||
	    (s->n_from_clause == 1 && cte_find(x, s->from_clause[0]->range_var) != NULL)) {
		/* a join: names resolve when it is bound */
		x->join = q;
		x->capfroms = 0;
		for (i = 0; i < s->n_from_clause; i++)
			if (from_item(x, s->from_clause[i], q, SQL_JOIN_NONE, pos) != 0)
				return -1;
		memcpy(st->table, q->froms[0].table, sizeof(st->table));
		st->table_pos = q->froms[0].pos;
		q->from = 1;
	} else if (s->n_from_clause == 1) {
		const PgQuery__RangeVar *rv = s->from_clause[0]->range_var;

		if (sqp_table_name(x, rv, st->table, &st->table_pos) != 0)
			return -1;
		memcpy(x->tname, st->table, sizeof(x->tname));
		if (rv->alias != NULL) {
			if (rv->alias->n_colnames > 0)
				return sqp_unsupported(x, rv->location, "column aliases in FROM");
			if (sqp_take(x, rv->alias->aliasname, x->talias, rv->location) != 0)
				return -1;
		}
		q->from = 1;
	}
	if (s->n_distinct_clause > 0) {
		if (s->n_distinct_clause > 1 || (s->distinct_clause[0] != NULL &&
						 s->distinct_clause[0]->node_case !=
						 PG_QUERY__NODE__NODE__NOT_SET))
			return sqp_unsupported(x, pos, "DISTINCT ON");
		q->distinct = 1;
	}
	if (s->group_distinct)
		return sqp_unsupported(x, pos, "GROUP BY DISTINCT");
	if ((q->targets = sqp_talloc(x, n * sizeof(*q->targets))) == NULL)
		return -1;
	x->agg_ok = 1;
	x->win_ok = 1;
	for (i = 0; i < n; i++) {
		const PgQuery__ResTarget *rt = s->target_list[i]->res_target;
		struct sql_target *t = &q->targets[i];
		const char *name;

		t->pos = rt->location;
		if (sqp_is_star(rt->val)) {
			if (!q->from)
				return sqp_fail(x, rt->location, "SELECT * with no tables specified is not valid");
			continue;
		}
		if (rt->val->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
		    rt->val->column_ref->n_fields == 2 &&
		    rt->val->column_ref->fields[1]->node_case == PG_QUERY__NODE__NODE_A_STAR) {
			const char *qn = sqp_str_of(rt->val->column_ref->fields[0]);

			if (qn == NULL || !q->from ||
			    (x->join != NULL ? sqp_from_index(q, qn) < 0 :
			     strcmp(qn, x->talias[0] != '\0' ? x->talias : x->tname) != 0))
				return sqp_fail(x, rt->location, "missing FROM-clause entry for table \"%s\"",
					    qn != NULL ? qn : "?");
			if (x->join != NULL)
				snprintf(t->star_of, sizeof(t->star_of), "%s", qn);
			continue;
		}
		if ((t->e = sqp_expr(x, rt->val)) == NULL)
			return -1;
		name = rt->name != NULL && rt->name[0] != '\0' ? rt->name : figure_name(rt->val);
		snprintf(t->name, sizeof(t->name), "%s", name != NULL ? name : "?column?");
	}
	q->ntargets = n;
	x->agg_ok = 0;
	x->win_ok = 0;
	if (s->where_clause != NULL && (st->where = sqp_cond(x, s->where_clause, "WHERE")) == NULL)
		return -1;
	if (s->n_group_clause > 0) {
		if ((q->group = sqp_talloc(x, s->n_group_clause * sizeof(*q->group))) == NULL)
			return -1;
		for (i = 0; i < s->n_group_clause; i++) {
			const Node *g = s->group_clause[i];
			int64_t k = const_int(g);

			if (g->node_case == PG_QUERY__NODE__NODE_GROUPING_SET)
				return sqp_unsupported(x, pos, "GROUPING SETS, ROLLUP and CUBE");
			if (k >= 0) {
				if (k < 1 || (size_t)k > n || q->targets[k - 1].e == NULL)
					return sqp_fail(x, sqp_node_pos(g), "GROUP BY position %lld is not in "
						    "select list", (long long)k);
				q->group[i] = q->targets[k - 1].e;
			} else if ((q->group[i] = sqp_expr(x, g)) == NULL) {
				/* a value or a condition (grouped by its boolean) */
				return -1;
			}
		}
		q->ngroup = s->n_group_clause;
	}
	x->agg_ok = 1;
	if (s->having_clause != NULL && (q->having = sqp_cond(x, s->having_clause, "HAVING")) == NULL)
		return -1;
	x->win_ok = 1;
	if (s->n_sort_clause > 0) {
		if ((q->order = sqp_talloc(x, s->n_sort_clause * sizeof(*q->order))) == NULL)
			return -1;
		for (i = 0; i < s->n_sort_clause; i++) {
			const PgQuery__SortBy *sb = s->sort_clause[i]->sort_by;
			struct sql_sortkey *o = &q->order[i];
			int64_t k = const_int(sb->node);
			const char *nm = NULL;
			size_t j;

			if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
				return sqp_unsupported(x, sb->location, "ORDER BY ... USING");
			o->desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
			o->nulls_first = sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ||
					 (sb->sortby_nulls <= PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT &&
					  o->desc);
			o->target = -1;
			if (k >= 0) {
				if (k < 1 || (size_t)k > n)
					return sqp_fail(x, sqp_node_pos(sb->node), "ORDER BY position %lld is not "
						    "in select list", (long long)k);
				o->target = (int)k - 1;
				continue;
			}
			if (sb->node->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
			    sb->node->column_ref->n_fields == 1)
				nm = sqp_str_of(sb->node->column_ref->fields[0]);
			for (j = 0; nm != NULL && j < n; j++) {
				const PgQuery__ResTarget *rt = s->target_list[j]->res_target;

				if (rt->name != NULL && strcmp(rt->name, nm) == 0) {
					o->target = (int)j;
					break;
				}
			}
			if (o->target < 0 && (o->e = sqp_value(x, sb->node, "ORDER BY")) == NULL)
				return -1;
		}
		q->norder = s->n_sort_clause;
	}
	x->agg_ok = 0;
	if (s->limit_count != NULL && limit_value(x, s->limit_count, "LIMIT", &st->limit) != 0)
		return -1;
	if (s->limit_offset != NULL && limit_value(x, s->limit_offset, "OFFSET", &q->offset) != 0)
		return -1;
	x->win_ok = 0;
	q->aggs = x->aggs;
	q->naggs = x->naggs;
	q->grouped = q->naggs > 0 || q->ngroup > 0;
	q->wins = x->wins;
	q->nwins = x->nwins;
	if (q->nwins > 0 && (q->grouped || q->having != NULL))
		return sqp_unsupported(x, q->wins[0]->pos, "window functions with GROUP BY, HAVING or "
				       "aggregates");
	return 0;
}

/* A SELECT of a set operation: a statement of its own (sharing the
 * arena), with the parser's per-SELECT state saved around it. */
static struct sql_stmt *branch(struct tx *x, const PgQuery__SelectStmt *s, int pos)
{
	struct sql_stmt *b = sqp_talloc(x, sizeof(*b));
	struct tx save = *x;
	int rc;

	if (b == NULL)
		return NULL;
	b->arena = x->ar;
	b->shared_arena = 1;
	b->limit = -1;
	sqp_new_select(x);
	rc = sqp_select_stmt(x, s, pos, b);
	save.rc = x->rc;
	save.errpos = x->errpos;
	save.depth = x->depth;
	*x = save;
	return rc == 0 ? b : NULL;
}

/* UNION / INTERSECT / EXCEPT [ALL]. */
static int setop_stmt(struct tx *x, const PgQuery__SelectStmt *s, int pos, struct sql_stmt *st)
{
	struct sql_query *q = sqp_talloc(x, sizeof(*q));
	size_t i;

	if (q == NULL)
		return -1;
	st->q = q;
	q->from = 1;
	q->setop = s->op == PG_QUERY__SET_OPERATION__SETOP_UNION ? SQL_UNION :
		   s->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT ? SQL_INTERSECT : SQL_EXCEPT;
	q->setall = s->all;
	if (s->into_clause != NULL)
		return sqp_unsupported(x, pos, "SELECT INTO");
	if (s->n_locking_clause > 0)
		return sqp_unsupported(x, pos, "FOR UPDATE and FOR SHARE");
	if (s->limit_option == PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_WITH_TIES)
		return sqp_unsupported(x, pos, "FETCH ... WITH TIES");
	if (s->larg == NULL || s->rarg == NULL)
		return sqp_fail(x, pos, "malformed set operation");
	if ((q->larg = branch(x, s->larg, pos)) == NULL || (q->rarg = branch(x, s->rarg, pos)) == NULL)
		return -1;
	if (s->n_sort_clause > 0) {
		if ((q->order = sqp_talloc(x, s->n_sort_clause * sizeof(*q->order))) == NULL)
			return -1;
		for (i = 0; i < s->n_sort_clause; i++) {
			const PgQuery__SortBy *sb = s->sort_clause[i]->sort_by;
			struct sql_sortkey *o = &q->order[i];
			int64_t k = const_int(sb->node);

			if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
				return sqp_unsupported(x, sb->location, "ORDER BY ... USING");
			o->desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
			o->nulls_first = sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ||
					 (sb->sortby_nulls <= PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT &&
					  o->desc);
			o->target = -1;
			if (k >= 1 && k <= 1000) {
				o->target = (int)k - 1;   /* checked against the columns when run */
			} else if (sb->node->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
				   sb->node->column_ref->n_fields == 1 &&
				   sqp_str_of(sb->node->column_ref->fields[0]) != NULL) {
				if ((o->e = sqp_new_expr(x, SQL_E_COL, sb->location)) == NULL ||
				    sqp_take(x, sqp_str_of(sb->node->column_ref->fields[0]), o->e->col,
					 sqp_node_pos(sb->node)) != 0)
					return -1;
				o->e->pos = sqp_node_pos(sb->node);
			} else if (k >= 0) {
				return sqp_fail(x, sqp_node_pos(sb->node), "ORDER BY position %lld is not in select "
					    "list", (long long)k);
			} else {
				return sqp_unsupported(x, sqp_node_pos(sb->node) >= 0 ? sqp_node_pos(sb->node) : pos,
						   "ORDER BY expressions on UNION, INTERSECT or EXCEPT");
			}
		}
		q->norder = s->n_sort_clause;
	}
	if (s->limit_count != NULL && limit_value(x, s->limit_count, "LIMIT", &st->limit) != 0)
		return -1;
	if (s->limit_offset != NULL && limit_value(x, s->limit_offset, "OFFSET", &q->offset) != 0)
		return -1;
	return 0;
}

static int select_stmt(struct tx *x, const PgQuery__SelectStmt *s, int pos, struct sql_stmt *st);

int sqp_select_stmt(struct tx *x, const PgQuery__SelectStmt *s, int pos, struct sql_stmt *st)
{
	struct sqp_cte *scope = x->ctes;
	int rc;

	if (s->with_clause == NULL)
		return select_stmt(x, s, pos, st);
	if (with_push(x, s->with_clause) != 0) {
		x->ctes = scope;
		return -1;
	}
	if (s->op == PG_QUERY__SET_OPERATION__SETOP_NONE)
		x->force_general = 1;   /* a WITH query is a subquery in FROM */
	rc = select_stmt(x, s, pos, st);
	x->ctes = scope;
	return rc;
}

static int select_stmt(struct tx *x, const PgQuery__SelectStmt *s, int pos, struct sql_stmt *st)
{
	size_t i, n = s->n_target_list;

	st->kind = SQL_SELECT;
	if (s->op != PG_QUERY__SET_OPERATION__SETOP_NONE)
		return setop_stmt(x, s, pos, st);
	if (s->op == PG_QUERY__SET_OPERATION__SETOP_NONE &&
	    s->into_clause == NULL && s->n_values_lists == 0 && s->n_window_clause == 0 &&
	    s->n_locking_clause == 0 &&
	    s->limit_option != PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_WITH_TIES &&
	    (x->force_general || needs_general(s) ||
	     (s->n_from_clause == 1 && s->from_clause[0]->node_case == PG_QUERY__NODE__NODE_RANGE_VAR &&
	      cte_find(x, s->from_clause[0]->range_var) != NULL))) {
		x->force_general = 0;
		return general_select(x, s, pos, st);
	}
	if (sqp_select_plain(x, s, pos) != 0)
		return -1;
	if (sqp_table_name(x, s->from_clause[0]->range_var, st->table, &st->table_pos) != 0)
		return -1;
	memcpy(x->tname, st->table, sizeof(x->tname));
	for (i = 0; i < n; i++) {
		const PgQuery__ResTarget *rt = s->target_list[i]->res_target;

		if (rt->name != NULL && rt->name[0] != '\0')
			return sqp_unsupported(x, rt->location, "column aliases (AS)");
		if ((sqp_is_star(rt->val) || is_count_star(rt->val)) && n > 1)
			return sqp_unsupported(x, rt->location, sqp_is_star(rt->val) ?
					   "* together with other columns" :
					   "count(*) together with other columns");
	}
	if (n == 1 && sqp_is_star(s->target_list[0]->res_target->val)) {
		st->star = 1;
	} else if (n == 1 && is_count_star(s->target_list[0]->res_target->val)) {
		st->count_star = 1;
	} else {
		if ((st->proj = sqp_talloc(x, n * sizeof(*st->proj))) == NULL ||
		    (st->proj_index = sqp_talloc(x, n * sizeof(*st->proj_index))) == NULL ||
		    (st->proj_pos = sqp_talloc(x, n * sizeof(*st->proj_pos))) == NULL)
			return -1;
		for (i = 0; i < n; i++) {
			const Node *v = s->target_list[i]->res_target->val;
			struct sql_expr *e;

			if (v->node_case != PG_QUERY__NODE__NODE_COLUMN_REF) {
				if (v->node_case == PG_QUERY__NODE__NODE_FUNC_CALL)
					return sqp_unsupported(x, sqp_node_pos(v), "functions and aggregates "
							   "in the select list");
				return sqp_unsupported(x, sqp_node_pos(v), "expressions in the select list");
			}
			if ((e = sqp_column_ref(x, v->column_ref)) == NULL)
				return -1;
			memcpy(st->proj[i], e->col, sizeof(e->col));
			st->proj_pos[i] = e->pos;
			st->proj_index[i] = -1;
		}
		st->nproj = n;
	}
	if (s->where_clause != NULL && (st->where = sqp_cond(x, s->where_clause, "WHERE")) == NULL)
		return -1;
	if (s->n_sort_clause > 0) {
		if ((st->order = sqp_talloc(x, s->n_sort_clause * sizeof(*st->order))) == NULL)
			return -1;
		for (i = 0; i < s->n_sort_clause; i++) {
			const PgQuery__SortBy *sb = s->sort_clause[i]->sort_by;
			struct sql_order *o = &st->order[i];
			struct sql_expr *e;

			if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
				return sqp_unsupported(x, sb->location, "ORDER BY ... USING");
			if (sb->sortby_nulls > PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT)
				return sqp_unsupported(x, sb->location, "NULLS FIRST and NULLS LAST");
			if (sb->node->node_case != PG_QUERY__NODE__NODE_COLUMN_REF)
				return sqp_unsupported(x, sqp_node_pos(sb->node), "ORDER BY expressions");
			if ((e = sqp_column_ref(x, sb->node->column_ref)) == NULL)
				return -1;
			memcpy(o->col, e->col, sizeof(e->col));
			o->pos = e->pos;
			o->col_index = -1;
			o->desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
			if (st->count_star)
				return sqp_fail(x, o->pos, "column \"%s\" must appear in the GROUP BY clause "
					    "or be used in an aggregate function", o->col);
		}
		st->norder = s->n_sort_clause;
	}
	if (s->limit_count != NULL && limit(x, s->limit_count, st) != 0)
		return -1;
	return 0;
}
