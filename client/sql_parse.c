/*
 * sql_parse.c - SQL text to struct sql_stmt with PostgreSQL's own grammar.
 *
 * libpg_query (Debian's libpg-query-dev) runs PostgreSQL 15's scanner and
 * bison grammar and hands back the raw parse tree as protobuf; this file
 * walks that tree and builds the statement LWC runs.  So a syntax error is
 * PostgreSQL's, message and position, and a statement that PostgreSQL
 * parses but LWC does not run is refused naming the construct:
 * "LWC does not support <construct>".
 *
 * Before the grammar sees the text it is checked to be UTF-8 without NUL
 * bytes (PostgreSQL's own input check, which libpg_query leaves out).
 *
 * Expression trees: a constant sub-expression is folded into one literal
 * ("-3", "3+1", "(NULL)"), with PostgreSQL's errors (division by zero,
 * bigint out of range) reported at the operator; AND / OR lists become
 * balanced trees, so no tree is higher than SQL_MAX_HEIGHT and the walks
 * over it may recurse.  The walk over PostgreSQL's tree counts its depth
 * (SQL_MAX_NESTING).
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

#include "sql_int.h"

typedef PgQuery__Node Node;

struct tx {
	const char *sql;
	size_t len;
	struct arena *ar;
	int depth;                /* recursion over PostgreSQL's tree          */
	int agg_ok;               /* aggregates allowed here (select list ...) */
	struct sql_expr **aggs;   /* the aggregates met (general SELECT)       */
	size_t naggs, capaggs;
	char tname[SQL_NAME_MAX + 1];   /* the SELECT's table and its alias     */
	char talias[SQL_NAME_MAX + 1];
	char outer[SQL_NAME_MAX + 1];   /* in a subquery: the outer table (or alias) */
	struct sql_query *join;   /* a general SELECT of several tables: its FROM */
	const struct sql_query *outer_join;  /* in a subquery: the outer join   */
	int fields_ok;            /* in a subquery: outer columns may be read  */
	int force_general;        /* parse the next SELECT as a general one    */
	size_t capfroms;
	char *err;
	size_t errlen;
	int errpos;
	int rc;                   /* first error: LWC_ERR_ARG / LWC_ERR_NOMEM */
};

/* Record the first error; always returns -1 for "return fail(...)". */
__attribute__((format(printf, 3, 4)))
static int fail(struct tx *x, int pos, const char *fmt, ...)
{
	va_list ap;

	if (x->rc != LWC_OK)
		return -1;
	x->rc = LWC_ERR_ARG;
	x->errpos = pos < 0 ? 0 : pos;
	if (x->err != NULL && x->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(x->err, x->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int fail_nomem(struct tx *x)
{
	if (x->rc == LWC_OK) {
		x->rc = LWC_ERR_NOMEM;
		x->errpos = -1;
		lwc_errf(x->err, x->errlen, "out of memory");
	}
	return -1;
}

/* "LWC does not support <what>" at pos. */
static int unsupported(struct tx *x, int pos, const char *what)
{
	return fail(x, pos, "LWC does not support %s", what);
}

static void *talloc(struct tx *x, size_t n)
{
	void *p = sql_arena_alloc(x->ar, n ? n : 1);

	if (p == NULL)
		fail_nomem(x);
	return p;
}

/* ---- names ------------------------------------------------------------------ */

/* The construct a node is, for "LWC does not support ...". */
static const char *node_name(const Node *n)
{
	switch (n->node_case) {
	case PG_QUERY__NODE__NODE_FUNC_CALL: return "function calls";
	case PG_QUERY__NODE__NODE_SUB_LINK: return "subqueries";
	case PG_QUERY__NODE__NODE_CASE_EXPR: return "CASE";
	case PG_QUERY__NODE__NODE_COALESCE_EXPR: return "COALESCE";
	case PG_QUERY__NODE__NODE_MIN_MAX_EXPR: return "GREATEST and LEAST";
	case PG_QUERY__NODE__NODE_TYPE_CAST: return "type casts";
	case PG_QUERY__NODE__NODE_BOOLEAN_TEST: return "IS TRUE and IS FALSE";
	case PG_QUERY__NODE__NODE_PARAM_REF: return "parameters ($1)";
	case PG_QUERY__NODE__NODE_A_ARRAY_EXPR: return "arrays";
	case PG_QUERY__NODE__NODE_A_INDIRECTION: return "subscripts and field selection";
	case PG_QUERY__NODE__NODE_ROW_EXPR: return "row constructors";
	case PG_QUERY__NODE__NODE_COLLATE_CLAUSE: return "COLLATE";
	case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION: return "CURRENT_DATE and similar functions";
	case PG_QUERY__NODE__NODE_XML_EXPR:
	case PG_QUERY__NODE__NODE_XML_SERIALIZE: return "XML";
	case PG_QUERY__NODE__NODE_GROUPING_FUNC: return "GROUPING";
	case PG_QUERY__NODE__NODE_SET_TO_DEFAULT: return "DEFAULT";
	case PG_QUERY__NODE__NODE_JOIN_EXPR: return "JOIN";
	case PG_QUERY__NODE__NODE_RANGE_SUBSELECT: return "subqueries in FROM";
	case PG_QUERY__NODE__NODE_RANGE_FUNCTION: return "functions in FROM";
	/* statements */
	case PG_QUERY__NODE__NODE_ALTER_TABLE_STMT: return "ALTER TABLE";
	case PG_QUERY__NODE__NODE_TRANSACTION_STMT: return "transactions (BEGIN, COMMIT, ROLLBACK)";
	case PG_QUERY__NODE__NODE_VIEW_STMT: return "CREATE VIEW";
	case PG_QUERY__NODE__NODE_EXPLAIN_STMT: return "EXPLAIN";
	case PG_QUERY__NODE__NODE_TRUNCATE_STMT: return "TRUNCATE";
	case PG_QUERY__NODE__NODE_COPY_STMT: return "COPY (use the shell's \\copy)";
	case PG_QUERY__NODE__NODE_VARIABLE_SET_STMT: return "SET";
	case PG_QUERY__NODE__NODE_VARIABLE_SHOW_STMT: return "SHOW";
	case PG_QUERY__NODE__NODE_CREATE_TABLE_AS_STMT: return "CREATE TABLE AS";
	case PG_QUERY__NODE__NODE_CREATE_SCHEMA_STMT: return "CREATE SCHEMA";
	case PG_QUERY__NODE__NODE_CREATE_SEQ_STMT: return "CREATE SEQUENCE";
	case PG_QUERY__NODE__NODE_CREATE_FUNCTION_STMT: return "CREATE FUNCTION";
	case PG_QUERY__NODE__NODE_CREATE_TRIG_STMT: return "CREATE TRIGGER";
	case PG_QUERY__NODE__NODE_GRANT_STMT: return "GRANT and REVOKE";
	case PG_QUERY__NODE__NODE_CREATE_ROLE_STMT: return "CREATE ROLE";
	case PG_QUERY__NODE__NODE_MERGE_STMT: return "MERGE";
	case PG_QUERY__NODE__NODE_VACUUM_STMT: return "VACUUM and ANALYZE";
	case PG_QUERY__NODE__NODE_RENAME_STMT: return "ALTER ... RENAME";
	case PG_QUERY__NODE__NODE_PREPARE_STMT: return "PREPARE";
	case PG_QUERY__NODE__NODE_EXECUTE_STMT: return "EXECUTE";
	case PG_QUERY__NODE__NODE_DO_STMT: return "DO";
	case PG_QUERY__NODE__NODE_LOCK_STMT: return "LOCK";
	case PG_QUERY__NODE__NODE_DECLARE_CURSOR_STMT: return "cursors";
	case PG_QUERY__NODE__NODE_COMMENT_STMT: return "COMMENT";
	default: break;
	}
	{
		const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field(&pg_query__node__descriptor,
								(unsigned)n->node_case);

		return f != NULL ? f->name : "this statement";
	}
}

/* A best-effort position of a node (its location field), or -1. */
static int node_pos(const Node *n)
{
	if (n == NULL)
		return -1;
	switch (n->node_case) {
	case PG_QUERY__NODE__NODE_A_EXPR: return n->a_expr->location;
	case PG_QUERY__NODE__NODE_A_CONST: return n->a_const->location;
	case PG_QUERY__NODE__NODE_COLUMN_REF: return n->column_ref->location;
	case PG_QUERY__NODE__NODE_BOOL_EXPR: return n->bool_expr->location;
	case PG_QUERY__NODE__NODE_NULL_TEST: return n->null_test->location;
	case PG_QUERY__NODE__NODE_FUNC_CALL: return n->func_call->location;
	case PG_QUERY__NODE__NODE_SUB_LINK: return n->sub_link->location;
	case PG_QUERY__NODE__NODE_CASE_EXPR: return n->case_expr->location;
	case PG_QUERY__NODE__NODE_COALESCE_EXPR: return n->coalesce_expr->location;
	case PG_QUERY__NODE__NODE_MIN_MAX_EXPR: return n->min_max_expr->location;
	case PG_QUERY__NODE__NODE_TYPE_CAST: return n->type_cast->location;
	case PG_QUERY__NODE__NODE_BOOLEAN_TEST: return n->boolean_test->location;
	case PG_QUERY__NODE__NODE_PARAM_REF: return n->param_ref->location;
	case PG_QUERY__NODE__NODE_RES_TARGET: return n->res_target->location;
	case PG_QUERY__NODE__NODE_SORT_BY: return n->sort_by->location;
	case PG_QUERY__NODE__NODE_RANGE_VAR: return n->range_var->location;
	case PG_QUERY__NODE__NODE_A_ARRAY_EXPR: return n->a_array_expr->location;
	case PG_QUERY__NODE__NODE_ROW_EXPR: return n->row_expr->location;
	case PG_QUERY__NODE__NODE_COLLATE_CLAUSE: return n->collate_clause->location;
	case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION: return n->sqlvalue_function->location;
	case PG_QUERY__NODE__NODE_SET_TO_DEFAULT: return n->set_to_default->location;
	case PG_QUERY__NODE__NODE_GROUPING_FUNC: return n->grouping_func->location;
	case PG_QUERY__NODE__NODE_COLUMN_DEF: return n->column_def->location;
	case PG_QUERY__NODE__NODE_CONSTRAINT: return n->constraint->location;
	case PG_QUERY__NODE__NODE_A_INDIRECTION: return node_pos(n->a_indirection->arg);
	case PG_QUERY__NODE__NODE_JOIN_EXPR: return node_pos(n->join_expr->larg);
	default: return -1;
	}
}

static int node_unsupported(struct tx *x, const Node *n, int fallback)
{
	int pos = node_pos(n);

	return unsupported(x, pos >= 0 ? pos : fallback, node_name(n));
}

/* Copy a name PostgreSQL already folded (and truncated to 63 bytes). */
static int take(struct tx *x, const char *s, char out[SQL_NAME_MAX + 1], int pos)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n == 0 || n > SQL_NAME_MAX)
		return fail(x, pos, "invalid name");
	memcpy(out, s, n + 1);
	return 0;
}

static const char *str_of(const Node *n)
{
	if (n != NULL && n->node_case == PG_QUERY__NODE__NODE_STRING && n->string != NULL)
		return n->string->sval;
	return NULL;
}

/* A table: a plain name (no schema, no alias). */
static int table_name(struct tx *x, const PgQuery__RangeVar *rv, char out[SQL_NAME_MAX + 1],
		      int *pos)
{
	if (rv->schemaname != NULL && rv->schemaname[0] != '\0')
		return unsupported(x, rv->location, "schema-qualified table names");
	if (rv->relpersistence != NULL && rv->relpersistence[0] == 't')
		return unsupported(x, rv->location, "temporary tables");
	if (rv->relpersistence != NULL && rv->relpersistence[0] == 'u')
		return unsupported(x, rv->location, "unlogged tables");
	if (!rv->inh)
		return unsupported(x, rv->location, "ONLY");
	if (pos != NULL)
		*pos = rv->location;
	return take(x, rv->relname, out, rv->location);
}

/* Offset of the first mention of identifier name at or after from (an
 * unquoted word folded to lower case, or a "quoted" one), skipping string
 * literals and comments; fallback when there is none.  For the nodes
 * PostgreSQL's tree gives no location (index columns, key columns). */
static int find_name(const struct tx *x, size_t from, const char *name, int fallback)
{
	const char *s = x->sql;
	size_t n = x->len, i = from, nl = strlen(name);

	while (i < n) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\'') {
			size_t e = sql_quoted_end(s, n, i, '\'');

			if (e == 0)
				break;
			i = e;
		} else if (c == '-' && i + 1 < n && s[i + 1] == '-') {
			i = sql_skip_blank(s, n, i);
		} else if (c == '"') {
			size_t e = sql_quoted_end(s, n, i, '"');

			if (e == 0)
				break;
			if (e - i - 2 == nl && memcmp(s + i + 1, name, nl) == 0)
				return (int)i;
			i = e;
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80) {
			size_t b = i, k;

			while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
					 (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '$' ||
					 (unsigned char)s[i] >= 0x80))
				i++;
			if (i - b == nl) {
				for (k = 0; k < nl; k++)
					if (sql_ascii_lower((unsigned char)s[b + k]) != (unsigned char)name[k])
						break;
				if (k == nl)
					return (int)b;
			}
		} else {
			i++;
		}
	}
	return fallback;
}

/* ---- expressions ------------------------------------------------------------ */

static int is_bool_kind(enum sql_ekind k)
{
	return k == SQL_E_CMP || k == SQL_E_IN || k == SQL_E_BETWEEN || k == SQL_E_ISNULL ||
	       k == SQL_E_AND || k == SQL_E_OR || k == SQL_E_NOT || k == SQL_E_LIKE ||
	       k == SQL_E_EXISTS || k == SQL_E_INSUB;
}

static struct sql_expr *new_expr(struct tx *x, enum sql_ekind kind, int pos)
{
	struct sql_expr *e = talloc(x, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->kind = kind;
	e->pos = pos;
	e->col_index = -1;
	e->height = 1;
	return e;
}

/* Set e's height from its children; refuse a tree that grew too high. */
static struct sql_expr *finish(struct tx *x, struct sql_expr *e)
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
		fail(x, e->pos, "expression nested too deeply");
		return NULL;
	}
	return e;
}

/* e must be a value (not a condition) as the argument of what. */
static int need_value(struct tx *x, const struct sql_expr *e, const char *what)
{
	if (!is_bool_kind(e->kind))
		return 0;
	return fail(x, e->pos, "argument of %s must be a value, not a condition", what);
}

/* e must be a condition as the argument of what. */
static int need_bool(struct tx *x, const struct sql_expr *e, const char *what)
{
	if (is_bool_kind(e->kind))
		return 0;
	if (e->kind == SQL_E_LIT)
		return fail(x, e->pos, "argument of %s must be type boolean, not type %s",
			    what, sql_vtype_name(e->lit.type));
	return fail(x, e->pos, "argument of %s must be type boolean, not a value", what);
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
		return fail_nomem(x);
	if (isinf(d) || (erange && d == 0)) {
		char q[160];

		sql_quote_text(q, sizeof(q), s, n, 60);
		return fail(x, pos, "\"%s\" is out of range for type double precision", q);
	}
	out->type = SQL_FLOAT;
	out->f = d;
	return 0;
}

static struct sql_expr *constant(struct tx *x, const PgQuery__AConst *c)
{
	struct sql_expr *e = new_expr(x, SQL_E_LIT, c->location);

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
		char *buf = talloc(x, n + 1);

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
		struct sql_expr *a = new_expr(x, SQL_E_LIT, c->location);
		struct sql_expr *b = new_expr(x, SQL_E_LIT, c->location);

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
		return finish(x, e);
	}
	case PG_QUERY__A__CONST__VAL_BSVAL:
		unsupported(x, c->location, "bit strings");
		return NULL;
	default:
		return e;
	}
}

static struct sql_expr *expr(struct tx *x, const Node *n);
static struct sql_expr *make_func(struct tx *x, const char *fname, int pos, struct sql_expr *a,
				  struct sql_expr *b);
static int column_type(struct tx *x, const PgQuery__TypeName *t, struct sql_coldef *c);

/* -a, folded when a is a literal. */
static struct sql_expr *make_neg(struct tx *x, int pos, struct sql_expr *a)
{
	struct sql_expr *e;
	char msg[160];

	if (need_value(x, a, "-") != 0)
		return NULL;
	if (a->kind == SQL_E_LIT) {
		if ((e = new_expr(x, SQL_E_LIT, pos)) == NULL)
			return NULL;
		if (sql_value_neg(&a->lit, &e->lit, msg, sizeof(msg)) != LWC_OK) {
			fail(x, pos, "%s", msg);
			return NULL;
		}
		return e;
	}
	if ((e = new_expr(x, SQL_E_NEG, pos)) == NULL)
		return NULL;
	e->a = a;
	return finish(x, e);
}

/* a op b, folded when both are literals. */
static struct sql_expr *make_arith(struct tx *x, enum sql_arith op, int pos, struct sql_expr *a,
				   struct sql_expr *b)
{
	struct sql_expr *e;
	char msg[160];

	if (need_value(x, a, sql_arith_text[op]) != 0 || need_value(x, b, sql_arith_text[op]) != 0)
		return NULL;
	if (a->kind == SQL_E_LIT && b->kind == SQL_E_LIT) {
		if ((e = new_expr(x, SQL_E_LIT, pos)) == NULL)
			return NULL;
		if (sql_value_arith(op, &a->lit, &b->lit, &e->lit, msg, sizeof(msg)) != LWC_OK) {
			fail(x, pos, "%s", msg);
			return NULL;
		}
		return e;
	}
	if ((e = new_expr(x, SQL_E_ARITH, pos)) == NULL)
		return NULL;
	e->arith = op;
	e->a = a;
	e->b = b;
	return finish(x, e);
}

/* The one-word operator name of an A_Expr ("=", "+"), or NULL when it is
 * schema-qualified (OPERATOR(pg_catalog.+)). */
static const char *op_name(const PgQuery__AExpr *a)
{
	return a->n_name == 1 ? str_of(a->name[0]) : NULL;
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
static struct sql_expr *value(struct tx *x, const Node *n, const char *what)
{
	struct sql_expr *e = expr(x, n);

	if (e == NULL || need_value(x, e, what) != 0)
		return NULL;
	return e;
}

/* A condition. */
static struct sql_expr *cond(struct tx *x, const Node *n, const char *what)
{
	struct sql_expr *e = expr(x, n);

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
			if ((l = value(x, a->lexpr, op)) == NULL || (r = value(x, a->rexpr, op)) == NULL)
				return NULL;
			if ((e = new_expr(x, SQL_E_CMP, a->location)) == NULL)
				return NULL;
			e->op = cmp;
			e->a = l;
			e->b = r;
			return finish(x, e);
		}
		if (op != NULL && strcmp(op, "||") == 0 && a->lexpr != NULL) {
			if ((l = value(x, a->lexpr, op)) == NULL || (r = value(x, a->rexpr, op)) == NULL)
				return NULL;
			return make_func(x, "||", a->location, l, r);
		}
		if (arith_op(op, &ar)) {
			if (a->lexpr == NULL) {
				if (ar == SQL_ADD)
					return value(x, a->rexpr, "+");
				if (ar != SQL_SUB)
					break;
				if ((r = expr(x, a->rexpr)) == NULL)
					return NULL;
				return make_neg(x, a->location, r);
			}
			if ((l = expr(x, a->lexpr)) == NULL || (r = expr(x, a->rexpr)) == NULL)
				return NULL;
			return make_arith(x, ar, a->location, l, r);
		}
		break;
	case PG_QUERY__A__EXPR__KIND__AEXPR_IN: {
		const PgQuery__List *list;

		if (a->rexpr == NULL || a->rexpr->node_case != PG_QUERY__NODE__NODE_LIST)
			break;
		list = a->rexpr->list;
		if ((l = value(x, a->lexpr, "IN")) == NULL)
			return NULL;
		if ((e = new_expr(x, SQL_E_IN, a->location)) == NULL)
			return NULL;
		e->negated = op != NULL && strcmp(op, "<>") == 0;
		e->a = l;
		e->nlist = list->n_items;
		if ((e->list = talloc(x, list->n_items * sizeof(*e->list))) == NULL)
			return NULL;
		for (i = 0; i < list->n_items; i++)
			if ((e->list[i] = value(x, list->items[i], "IN")) == NULL)
				return NULL;
		return finish(x, e);
	}
	case PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN:
	case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN: {
		const PgQuery__List *list;

		if (a->rexpr == NULL || a->rexpr->node_case != PG_QUERY__NODE__NODE_LIST ||
		    a->rexpr->list->n_items != 2)
			break;
		list = a->rexpr->list;
		if ((e = new_expr(x, SQL_E_BETWEEN, a->location)) == NULL)
			return NULL;
		e->negated = a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN;
		if ((e->a = value(x, a->lexpr, "BETWEEN")) == NULL ||
		    (e->b = value(x, list->items[0], "BETWEEN")) == NULL ||
		    (e->c = value(x, list->items[1], "BETWEEN")) == NULL)
			return NULL;
		return finish(x, e);
	}
	case PG_QUERY__A__EXPR__KIND__AEXPR_LIKE:
	case PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE:
		if (a->lexpr == NULL || op == NULL)
			break;
		if (a->rexpr != NULL && a->rexpr->node_case == PG_QUERY__NODE__NODE_FUNC_CALL &&
		    a->rexpr->func_call->n_funcname == 2 &&
		    str_of(a->rexpr->func_call->funcname[1]) != NULL &&
		    strcmp(str_of(a->rexpr->func_call->funcname[1]), "like_escape") == 0)
			return unsupported(x, a->location, "LIKE ... ESCAPE"), NULL;
		if ((l = value(x, a->lexpr, "LIKE")) == NULL || (r = value(x, a->rexpr, "LIKE")) == NULL)
			return NULL;
		if ((e = new_expr(x, SQL_E_LIKE, a->location)) == NULL)
			return NULL;
		e->negated = op[0] == '!';
		e->icase = a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE;
		e->a = l;
		e->b = r;
		return finish(x, e);
	case PG_QUERY__A__EXPR__KIND__AEXPR_SIMILAR:
		return unsupported(x, a->location, "SIMILAR TO"), NULL;
	case PG_QUERY__A__EXPR__KIND__AEXPR_DISTINCT:
	case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_DISTINCT:
		return unsupported(x, a->location, "IS [NOT] DISTINCT FROM"), NULL;
	case PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF:
		if ((l = value(x, a->lexpr, "NULLIF")) == NULL || (r = value(x, a->rexpr, "NULLIF")) == NULL)
			return NULL;
		return make_func(x, "nullif", a->location, l, r);
	case PG_QUERY__A__EXPR__KIND__AEXPR_OP_ANY:
	case PG_QUERY__A__EXPR__KIND__AEXPR_OP_ALL:
		return unsupported(x, a->location, "ANY and ALL"), NULL;
	case PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN_SYM:
	case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN_SYM:
		return unsupported(x, a->location, "BETWEEN SYMMETRIC"), NULL;
	default:
		break;
	}
	{
		char what[96];

		snprintf(what, sizeof(what), "the operator %s", op != NULL ? op : "OPERATOR()");
		unsupported(x, a->location, what);
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
	if ((e = new_expr(x, kind, pos)) == NULL)
		return NULL;
	e->a = balance(x, kind, terms, pos, lo, mid - 1);
	e->b = balance(x, kind, terms, pos, mid, hi);
	if (e->a == NULL || e->b == NULL)
		return NULL;
	return finish(x, e);
}

/* fname(a, b) (b may be NULL). */
static struct sql_expr *make_func(struct tx *x, const char *fname, int pos, struct sql_expr *a,
				  struct sql_expr *b)
{
	struct sql_expr *e = new_expr(x, SQL_E_FUNC, pos);

	if (e == NULL || (e->list = talloc(x, 2 * sizeof(*e->list))) == NULL)
		return NULL;
	snprintf(e->fname, sizeof(e->fname), "%s", fname);
	e->list[0] = a;
	e->list[1] = b;
	e->nlist = b != NULL ? 2 : 1;
	return finish(x, e);
}

static const char *last_name(const PgQuery__Node *const *names, size_t n)
{
	return n > 0 ? str_of(names[n - 1]) : NULL;
}

static struct sql_expr *func_call(struct tx *x, const PgQuery__FuncCall *f)
{
	static const struct { const char *name; size_t min, max; } scalar[] = {
		{ "abs", 1, 1 }, { "lower", 1, 1 }, { "upper", 1, 1 }, { "length", 1, 1 },
		{ "char_length", 1, 1 }, { "round", 1, 2 }, { "substr", 2, 3 },
		{ "substring", 2, 3 }, { "coalesce", 1, 100 }, { "greatest", 1, 100 },
		{ "least", 1, 100 },
	};
	const char *name = last_name((const PgQuery__Node *const *)f->funcname, f->n_funcname);
	struct sql_expr *e;
	size_t i, k;
	char what[96];

	if (name == NULL)
		return fail(x, f->location, "malformed function call"), NULL;
	if (f->over != NULL)
		return unsupported(x, f->location, "window functions (OVER)"), NULL;
	if (f->agg_filter != NULL)
		return unsupported(x, f->location, "FILTER"), NULL;
	if (f->n_agg_order > 0 || f->agg_within_group)
		return unsupported(x, f->location, "ordered aggregates"), NULL;
	if (f->func_variadic)
		return unsupported(x, f->location, "VARIADIC"), NULL;
	if (strcmp(name, "count") == 0 || strcmp(name, "sum") == 0 || strcmp(name, "avg") == 0 ||
	    strcmp(name, "min") == 0 || strcmp(name, "max") == 0) {
		if (!x->agg_ok)
			return fail(x, f->location, "aggregate functions are not allowed here"), NULL;
		if ((e = new_expr(x, SQL_E_AGG, f->location)) == NULL)
			return NULL;
		snprintf(e->fname, sizeof(e->fname), "%s", name);
		e->distinct = f->agg_distinct;
		if (f->agg_star) {
			if (strcmp(name, "count") != 0)
				return fail(x, f->location, "%s(*) must be used to call a parameterless "
					    "aggregate function", name), NULL;
		} else {
			if (f->n_args != 1)
				return fail(x, f->location, "function %s with %zu arguments does not "
					    "exist", name, f->n_args), NULL;
			x->agg_ok = 0;          /* no aggregate inside an aggregate */
			e->a = value(x, f->args[0], name);
			x->agg_ok = 1;
			if (e->a == NULL)
				return NULL;
		}
		if (x->naggs == x->capaggs) {
			x->aggs = sql_arena_grow(x->ar, x->aggs, x->naggs, &x->capaggs, sizeof(*x->aggs));
			if (x->aggs == NULL)
				return fail_nomem(x), NULL;
		}
		x->aggs[x->naggs++] = e;
		return finish(x, e);
	}
	for (k = 0; k < sizeof(scalar) / sizeof(scalar[0]); k++)
		if (strcmp(name, scalar[k].name) == 0)
			break;
	if (k == sizeof(scalar) / sizeof(scalar[0])) {
		snprintf(what, sizeof(what), "the function %s()", name);
		return unsupported(x, f->location, what), NULL;
	}
	if (f->agg_star || f->agg_distinct || f->n_args < scalar[k].min || f->n_args > scalar[k].max)
		return fail(x, f->location, "function %s with %zu arguments does not exist", name,
			    f->n_args), NULL;
	if ((e = new_expr(x, SQL_E_FUNC, f->location)) == NULL ||
	    (e->list = talloc(x, f->n_args * sizeof(*e->list))) == NULL)
		return NULL;
	snprintf(e->fname, sizeof(e->fname), "%s", name);
	for (i = 0; i < f->n_args; i++)
		if ((e->list[i] = value(x, f->args[i], name)) == NULL)
			return NULL;
	e->nlist = f->n_args;
	return finish(x, e);
}

static struct sql_expr *case_expr(struct tx *x, const PgQuery__CaseExpr *c)
{
	struct sql_expr *e = new_expr(x, SQL_E_CASE, c->location);
	size_t i;

	if (e == NULL || (e->list = talloc(x, 2 * c->n_args * sizeof(*e->list))) == NULL)
		return NULL;
	if (c->arg != NULL && (e->a = value(x, c->arg, "CASE")) == NULL)
		return NULL;
	for (i = 0; i < c->n_args; i++) {
		const PgQuery__CaseWhen *w;

		if (c->args[i]->node_case != PG_QUERY__NODE__NODE_CASE_WHEN)
			return fail(x, c->location, "malformed CASE"), NULL;
		w = c->args[i]->case_when;
		e->list[2 * i] = c->arg != NULL ? value(x, w->expr, "CASE") : cond(x, w->expr, "CASE");
		if (e->list[2 * i] == NULL ||
		    (e->list[2 * i + 1] = value(x, w->result, "CASE")) == NULL)
			return NULL;
	}
	e->nlist = 2 * c->n_args;
	if (c->defresult != NULL && (e->b = value(x, c->defresult, "CASE")) == NULL)
		return NULL;
	return finish(x, e);
}

static int type_of(struct tx *x, const PgQuery__TypeName *t, enum sql_ctype *out)
{
	struct sql_coldef c;

	memset(&c, 0, sizeof(c));
	if (column_type(x, t, &c) != 0)
		return -1;
	*out = c.type;
	return 0;
}

static int select_stmt(struct tx *x, const PgQuery__SelectStmt *s, int pos, struct sql_stmt *st);

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
		if (l->n_oper_name > 0 && (l->n_oper_name != 1 || str_of(l->oper_name[0]) == NULL ||
					   strcmp(str_of(l->oper_name[0]), "=") != 0))
			return unsupported(x, l->location, "ANY and SOME with subqueries"), NULL;
		kind = SQL_E_INSUB;
		if (l->testexpr != NULL && l->testexpr->node_case == PG_QUERY__NODE__NODE_ROW_EXPR)
			return unsupported(x, l->location, "row constructors"), NULL;
		if ((test = value(x, l->testexpr, "IN")) == NULL)
			return NULL;
		break;
	case PG_QUERY__SUB_LINK_TYPE__ALL_SUBLINK:
		return unsupported(x, l->location, "ALL with subqueries"), NULL;
	case PG_QUERY__SUB_LINK_TYPE__ARRAY_SUBLINK:
		return unsupported(x, l->location, "ARRAY subqueries"), NULL;
	default:
		return unsupported(x, l->location, "this kind of subquery"), NULL;
	}
	if (l->subselect == NULL || l->subselect->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
		return fail(x, l->location, "malformed subquery"), NULL;
	if ((sub = talloc(x, sizeof(*sub))) == NULL)
		return NULL;
	sub->arena = x->ar;
	sub->shared_arena = 1;
	sub->limit = -1;
	snprintf(x->outer, sizeof(x->outer), "%s", x->talias[0] != '\0' ? x->talias : x->tname);
	x->outer_join = x->join;
	x->join = NULL;
	x->force_general = 1;
	x->fields_ok = 1;
	x->tname[0] = x->talias[0] = '\0';
	x->agg_ok = 0;
	x->aggs = NULL;
	x->naggs = x->capaggs = 0;
	rc = select_stmt(x, l->subselect->select_stmt, l->location, sub);
	/* back to the outer SELECT (keeping the first error, if any) */
	save.rc = x->rc;
	save.errpos = x->errpos;
	save.depth = x->depth;
	*x = save;
	if (rc != 0)
		return NULL;
	if ((e = new_expr(x, kind, l->location)) == NULL)
		return NULL;
	e->sub = sub;
	e->a = test;
	return finish(x, e);
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
		if ((e = new_expr(x, SQL_E_NOT, b->location)) == NULL ||
		    (e->a = cond(x, b->args[0], "NOT")) == NULL)
			return NULL;
		return finish(x, e);
	case PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR:
	case PG_QUERY__BOOL_EXPR_TYPE__OR_EXPR:
		if (b->n_args < 1)
			break;
		name = b->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR ? "AND" : "OR";
		if ((terms = talloc(x, b->n_args * sizeof(*terms))) == NULL)
			return NULL;
		for (i = 0; i < b->n_args; i++)
			if ((terms[i] = cond(x, b->args[i], name)) == NULL)
				return NULL;
		return balance(x, b->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR ? SQL_E_AND : SQL_E_OR,
			       terms, b->location, 0, b->n_args - 1);
	default:
		break;
	}
	fail(x, b->location, "malformed boolean expression");
	return NULL;
}

/* The FROM entry a name (alias, or table without one) stands for, or -1. */
static int from_index(const struct sql_query *q, const char *name)
{
	size_t i;

	for (i = 0; i < q->nfroms; i++) {
		const struct sql_from *f = &q->froms[i];

		if (strcmp(f->alias[0] != '\0' ? f->alias : f->table, name) == 0)
			return (int)i;
	}
	return -1;
}

static struct sql_expr *column_ref(struct tx *x, const PgQuery__ColumnRef *c)
{
	struct sql_expr *e;
	const char *name;

	if (x->join != NULL && c->n_fields <= 2) {
		const char *q = c->n_fields == 2 ? str_of(c->fields[0]) : NULL;

		if (c->n_fields == 2 && (q == NULL || from_index(x->join, q) < 0)) {
			if (q != NULL && ((x->outer[0] != '\0' && strcmp(q, x->outer) == 0) ||
					  (x->outer_join != NULL && from_index(x->outer_join, q) >= 0)))
				return unsupported(x, c->location, "correlated subqueries"), NULL;
			return fail(x, c->location, "missing FROM-clause entry for table \"%s\"",
				    q != NULL ? q : "?"), NULL;
		}
		name = str_of(c->fields[c->n_fields - 1]);
		if (c->fields[c->n_fields - 1]->node_case == PG_QUERY__NODE__NODE_A_STAR)
			return unsupported(x, c->location, "* here"), NULL;
		if (name == NULL || (e = new_expr(x, SQL_E_COL, c->location)) == NULL ||
		    take(x, name, e->col, c->location) != 0)
			return NULL;
		if (q != NULL)
			snprintf(e->qual, sizeof(e->qual), "%s", q);
		return e;
	}
	if (c->n_fields == 2 && str_of(c->fields[0]) != NULL &&
	    ((x->talias[0] != '\0' && strcmp(str_of(c->fields[0]), x->talias) == 0) ||
	     (x->talias[0] == '\0' && x->tname[0] != '\0' &&
	      strcmp(str_of(c->fields[0]), x->tname) == 0))) {
		name = str_of(c->fields[1]);
	} else if (c->n_fields == 2 && str_of(c->fields[0]) != NULL && x->outer_join == NULL &&
		   x->outer[0] != '\0' && strcmp(str_of(c->fields[0]), x->outer) == 0 &&
		   x->fields_ok) {
		/* the outer statement's column: bound with sql_bind_outer */
		if ((name = str_of(c->fields[1])) == NULL ||
		    (e = new_expr(x, SQL_E_COL, c->location)) == NULL ||
		    take(x, name, e->col, c->location) != 0)
			return NULL;
		snprintf(e->qual, sizeof(e->qual), "%s", x->outer);
		return e;
	} else if (c->n_fields == 2 && str_of(c->fields[0]) != NULL &&
		   ((x->outer[0] != '\0' && strcmp(str_of(c->fields[0]), x->outer) == 0) ||
		    (x->outer_join != NULL && from_index(x->outer_join, str_of(c->fields[0])) >= 0))) {
		return unsupported(x, c->location, "correlated subqueries of joins"), NULL;
	} else if (c->n_fields == 2 && str_of(c->fields[0]) != NULL) {
		return fail(x, c->location, "missing FROM-clause entry for table \"%s\"",
			    str_of(c->fields[0])), NULL;
	} else if (c->n_fields != 1) {
		return unsupported(x, c->location, "qualified column names"), NULL;
	} else {
		name = str_of(c->fields[0]);
	}
	if (c->fields[c->n_fields - 1]->node_case == PG_QUERY__NODE__NODE_A_STAR)
		return unsupported(x, c->location, "* here"), NULL;
	if (name == NULL)
		return fail(x, c->location, "malformed column reference"), NULL;
	if ((e = new_expr(x, SQL_E_COL, c->location)) == NULL)
		return NULL;
	if (take(x, name, e->col, c->location) != 0)
		return NULL;
	return e;
}

static struct sql_expr *expr(struct tx *x, const Node *n)
{
	struct sql_expr *e = NULL;

	if (n == NULL) {
		fail(x, -1, "missing expression");
		return NULL;
	}
	if (++x->depth > SQL_MAX_NESTING) {
		fail(x, node_pos(n), "expression nested too deeply");
		return NULL;
	}
	switch (n->node_case) {
	case PG_QUERY__NODE__NODE_A_CONST:
		e = constant(x, n->a_const);
		break;
	case PG_QUERY__NODE__NODE_COLUMN_REF:
		e = column_ref(x, n->column_ref);
		break;
	case PG_QUERY__NODE__NODE_A_EXPR:
		e = a_expr(x, n->a_expr);
		break;
	case PG_QUERY__NODE__NODE_BOOL_EXPR:
		e = bool_expr(x, n->bool_expr);
		break;
	case PG_QUERY__NODE__NODE_NULL_TEST: {
		const PgQuery__NullTest *t = n->null_test;

		if ((e = new_expr(x, SQL_E_ISNULL, t->location)) == NULL)
			break;
		e->negated = t->nulltesttype == PG_QUERY__NULL_TEST_TYPE__IS_NOT_NULL;
		if ((e->a = value(x, t->arg, e->negated ? "IS NOT NULL" : "IS NULL")) == NULL ||
		    finish(x, e) == NULL)
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

		if ((e = new_expr(x, SQL_E_FUNC, c->location)) == NULL ||
		    (e->list = talloc(x, c->n_args * sizeof(*e->list))) == NULL) {
			e = NULL;
			break;
		}
		snprintf(e->fname, sizeof(e->fname), "coalesce");
		for (i = 0; i < c->n_args && e != NULL; i++)
			if ((e->list[i] = value(x, c->args[i], "COALESCE")) == NULL)
				e = NULL;
		if (e != NULL) {
			e->nlist = c->n_args;
			e = finish(x, e);
		}
		break;
	}
	case PG_QUERY__NODE__NODE_MIN_MAX_EXPR: {
		const PgQuery__MinMaxExpr *m = n->min_max_expr;
		size_t i;

		if ((e = new_expr(x, SQL_E_FUNC, m->location)) == NULL ||
		    (e->list = talloc(x, m->n_args * sizeof(*e->list))) == NULL) {
			e = NULL;
			break;
		}
		snprintf(e->fname, sizeof(e->fname), "%s",
			 m->op == PG_QUERY__MIN_MAX_OP__IS_GREATEST ? "greatest" : "least");
		for (i = 0; i < m->n_args && e != NULL; i++)
			if ((e->list[i] = value(x, m->args[i], e->fname)) == NULL)
				e = NULL;
		if (e != NULL) {
			e->nlist = m->n_args;
			e = finish(x, e);
		}
		break;
	}
	case PG_QUERY__NODE__NODE_TYPE_CAST: {
		const PgQuery__TypeCast *tc = n->type_cast;

		if ((e = new_expr(x, SQL_E_CAST, tc->location)) == NULL ||
		    type_of(x, tc->type_name, &e->cast_type) != 0 ||
		    (e->a = value(x, tc->arg, "CAST")) == NULL || finish(x, e) == NULL)
			e = NULL;
		break;
	}
	default:
		node_unsupported(x, n, -1);
		break;
	}
	x->depth--;
	return e;
}

/* An expression that names no column (VALUES, LIMIT). */
static struct sql_expr *constant_expr(struct tx *x, const Node *n, const char *what)
{
	struct sql_expr *e = value(x, n, what);
	const struct sql_expr *c;

	if (e == NULL)
		return NULL;
	if (e->kind != SQL_E_LIT) {
		c = first_col(e);
		fail(x, c != NULL ? c->pos : e->pos, "column \"%s\" does not exist",
		     c != NULL ? c->col : "?");
		return NULL;
	}
	return e;
}

/* ---- statements ------------------------------------------------------------- */

/* A column type: INT INTEGER INT4 SMALLINT | BIGINT INT8 | FLOAT FLOAT8
 * REAL DOUBLE PRECISION | TEXT [(n)] | VARCHAR [(n)] | CHARACTER VARYING
 * [(n)]. */
static int column_type(struct tx *x, const PgQuery__TypeName *t, struct sql_coldef *c)
{
	const char *name = NULL;
	int has_len = 0;

	if (t->n_names == 2 && str_of(t->names[0]) != NULL &&
	    strcmp(str_of(t->names[0]), "pg_catalog") == 0)
		name = str_of(t->names[1]);
	else if (t->n_names == 1)
		name = str_of(t->names[0]);
	if (name == NULL)
		return unsupported(x, t->location, "qualified type names");
	if (t->n_array_bounds > 0)
		return unsupported(x, t->location, "arrays");
	if (strcmp(name, "int4") == 0 || strcmp(name, "int2") == 0 || strcmp(name, "int") == 0 ||
	    strcmp(name, "integer") == 0 || strcmp(name, "smallint") == 0) {
		c->type = SQL_CT_INT;
	} else if (strcmp(name, "int8") == 0 || strcmp(name, "bigint") == 0) {
		c->type = SQL_CT_BIGINT;
	} else if (strcmp(name, "float8") == 0 || strcmp(name, "float4") == 0 ||
		   strcmp(name, "float") == 0 || strcmp(name, "real") == 0) {
		c->type = SQL_CT_FLOAT;
	} else if (strcmp(name, "text") == 0 || strcmp(name, "varchar") == 0) {
		c->type = SQL_CT_TEXT;
		has_len = 1;
	} else {
		char q[160];

		sql_quote_text(q, sizeof(q), name, strlen(name), 40);
		return fail(x, t->location, "type \"%s\" does not exist", q);
	}
	if (t->n_typmods > 0) {
		const Node *m = t->typmods[0];
		const PgQuery__AConst *k = m->node_case == PG_QUERY__NODE__NODE_A_CONST ? m->a_const
										: NULL;
		int64_t v;

		if (!has_len && c->type == SQL_CT_FLOAT && t->n_names == 2 && t->n_typmods == 1) {
			/* FLOAT(p): PostgreSQL's grammar already chose float4 or float8 */
			return 0;
		}
		if (!has_len || t->n_typmods != 1 || k == NULL || k->isnull)
			return fail(x, t->location, "type modifier is not allowed for type \"%s\"", name);
		if (k->val_case == PG_QUERY__A__CONST__VAL_IVAL)
			v = k->ival != NULL ? k->ival->ival : 0;
		else if (k->val_case == PG_QUERY__A__CONST__VAL_FVAL)
			v = 10485761;
		else
			return fail(x, k->location, "type modifiers must be simple constants or identifiers");
		if (v < 1)
			return fail(x, k->location, "length for type varchar must be at least 1");
		if (v > 10485760)
			return fail(x, k->location, "length for type varchar cannot exceed 10485760");
		c->max_len = (uint32_t)v;
	}
	return 0;
}

static int create_table(struct tx *x, const PgQuery__CreateStmt *cs, struct sql_stmt *st)
{
	size_t i, j, k, ncol = 0;
	int npk = 0, pk2 = -1;

	st->kind = SQL_CREATE_TABLE;
	st->if_not_exists = cs->if_not_exists;
	if (table_name(x, cs->relation, st->table, &st->table_pos) != 0)
		return -1;
	if (cs->n_inh_relations > 0)
		return unsupported(x, node_pos(cs->inh_relations[0]), "INHERITS");
	if (cs->partspec != NULL || cs->partbound != NULL)
		return unsupported(x, cs->relation->location, "partitioned tables");
	if (cs->of_typename != NULL)
		return unsupported(x, cs->relation->location, "typed tables (OF)");
	if (cs->n_options > 0)
		return unsupported(x, cs->relation->location, "storage parameters (WITH)");
	if (cs->tablespacename != NULL && cs->tablespacename[0] != '\0')
		return unsupported(x, cs->relation->location, "TABLESPACE");
	if (cs->oncommit > PG_QUERY__ON_COMMIT_ACTION__ONCOMMIT_NOOP)
		return unsupported(x, cs->relation->location, "ON COMMIT");
	for (i = 0; i < cs->n_table_elts; i++)
		ncol += cs->table_elts[i]->node_case == PG_QUERY__NODE__NODE_COLUMN_DEF;
	if (ncol == 0)
		return fail(x, st->table_pos, "table \"%s\" has no columns", st->table);
	if ((st->cols = talloc(x, ncol * sizeof(*st->cols))) == NULL)
		return -1;
	/* columns first: a table constraint may name a later column */
	for (i = 0; i < cs->n_table_elts; i++) {
		const Node *el = cs->table_elts[i];
		const PgQuery__ColumnDef *cd;
		struct sql_coldef *c;
		int explicit_null = 0;

		if (el->node_case != PG_QUERY__NODE__NODE_COLUMN_DEF)
			continue;
		cd = el->column_def;
		c = &st->cols[st->ncols++];
		c->pos = cd->location;
		if (take(x, cd->colname, c->name, cd->location) != 0 ||
		    column_type(x, cd->type_name, c) != 0)
			return -1;
		if (cd->coll_clause != NULL)
			return unsupported(x, cd->coll_clause->location, "COLLATE");
		for (j = 0; j < cd->n_constraints; j++) {
			const PgQuery__Constraint *k2 = cd->constraints[j]->constraint;

			if (cd->constraints[j]->node_case != PG_QUERY__NODE__NODE_CONSTRAINT)
				return node_unsupported(x, cd->constraints[j], cd->location);
			switch (k2->contype) {
			case PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY:
				c->primary_key = c->not_null = 1;
				if (++npk == 2)
					pk2 = k2->location;
				break;
			case PG_QUERY__CONSTR_TYPE__CONSTR_NOTNULL:
				c->not_null = 1;
				break;
			case PG_QUERY__CONSTR_TYPE__CONSTR_NULL:
				explicit_null = 1;
				break;
			case PG_QUERY__CONSTR_TYPE__CONSTR_UNIQUE:
				c->unique = 1;
				break;
			case PG_QUERY__CONSTR_TYPE__CONSTR_DEFAULT:
				return unsupported(x, k2->location, "DEFAULT");
			case PG_QUERY__CONSTR_TYPE__CONSTR_CHECK:
				return unsupported(x, k2->location, "CHECK constraints");
			case PG_QUERY__CONSTR_TYPE__CONSTR_FOREIGN:
				return unsupported(x, k2->location, "REFERENCES (foreign keys)");
			case PG_QUERY__CONSTR_TYPE__CONSTR_IDENTITY:
			case PG_QUERY__CONSTR_TYPE__CONSTR_GENERATED:
				return unsupported(x, k2->location, "generated columns");
			default:
				return unsupported(x, k2->location, "this column constraint");
			}
			if (k2->conname != NULL && k2->conname[0] != '\0')
				return unsupported(x, k2->location, "named constraints");
			if (explicit_null && c->not_null)
				return fail(x, k2->location, "conflicting NULL/NOT NULL declarations "
					    "for column \"%s\" of table \"%s\"", c->name, st->table);
		}
	}
	for (i = 0; i < cs->n_table_elts; i++) {
		const Node *el = cs->table_elts[i];
		const PgQuery__Constraint *k2;
		const char *name;
		int primary;

		if (el->node_case == PG_QUERY__NODE__NODE_COLUMN_DEF)
			continue;
		if (el->node_case != PG_QUERY__NODE__NODE_CONSTRAINT)
			return node_unsupported(x, el, st->table_pos);
		k2 = el->constraint;
		if (k2->contype != PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY &&
		    k2->contype != PG_QUERY__CONSTR_TYPE__CONSTR_UNIQUE) {
			return unsupported(x, k2->location,
					   k2->contype == PG_QUERY__CONSTR_TYPE__CONSTR_CHECK ?
					   "CHECK constraints" :
					   k2->contype == PG_QUERY__CONSTR_TYPE__CONSTR_FOREIGN ?
					   "FOREIGN KEY constraints" : "this table constraint");
		}
		primary = k2->contype == PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY;
		if (k2->n_keys > 1)
			return unsupported(x, k2->location, primary ?
					   "multi-column PRIMARY KEY constraints" :
					   "multi-column UNIQUE constraints");
		if (k2->n_keys != 1 || (name = str_of(k2->keys[0])) == NULL)
			return unsupported(x, k2->location, "this table constraint");
		if (primary && ++npk == 2)
			pk2 = k2->location;
		for (k = 0; k < st->ncols; k++)
			if (strcmp(st->cols[k].name, name) == 0)
				break;
		if (k == st->ncols)
			return fail(x, find_name(x, (size_t)k2->location, name, k2->location),
				    "column \"%s\" named in key does not exist", name);
		if (primary)
			st->cols[k].primary_key = st->cols[k].not_null = 1;
		else
			st->cols[k].unique = 1;
	}
	if (npk > 1)
		return fail(x, pk2, "multiple primary keys for table \"%s\" are not allowed",
			    st->table);
	{
		int epos = -1, rc = sql_check_create(x->ar, st, x->err, x->errlen, &epos);

		if (rc != LWC_OK) {
			if (rc == LWC_ERR_NOMEM)
				return fail_nomem(x);
			x->rc = LWC_ERR_ARG;
			x->errpos = epos;
			return -1;
		}
	}
	return 0;
}

static int create_index(struct tx *x, const PgQuery__IndexStmt *is, struct sql_stmt *st)
{
	size_t i, n = is->n_index_params;

	st->kind = SQL_CREATE_INDEX;
	st->unique = is->unique;
	st->if_not_exists = is->if_not_exists;
	if (is->idxname != NULL && is->idxname[0] != '\0' &&
	    take(x, is->idxname, st->index, is->relation->location) != 0)
		return -1;
	if (table_name(x, is->relation, st->table, &st->table_pos) != 0)
		return -1;
	if (is->where_clause != NULL)
		return unsupported(x, node_pos(is->where_clause), "partial indexes (WHERE)");
	if (is->n_index_including_params > 0)
		return unsupported(x, st->table_pos, "INCLUDE");
	if (is->concurrent)
		return unsupported(x, st->table_pos, "CONCURRENTLY");
	if (is->n_options > 0)
		return unsupported(x, st->table_pos, "storage parameters (WITH)");
	if (is->nulls_not_distinct)
		return unsupported(x, st->table_pos, "NULLS NOT DISTINCT");
	if ((st->index_cols = talloc(x, n * sizeof(*st->index_cols))) == NULL ||
	    (st->index_col_pos = talloc(x, n * sizeof(*st->index_col_pos))) == NULL ||
	    (st->index_col_index = talloc(x, n * sizeof(*st->index_col_index))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		const Node *p = is->index_params[i];
		const PgQuery__IndexElem *ie;

		if (p->node_case != PG_QUERY__NODE__NODE_INDEX_ELEM)
			return node_unsupported(x, p, st->table_pos);
		ie = p->index_elem;
		if (ie->expr != NULL)
			return unsupported(x, node_pos(ie->expr) >= 0 ? node_pos(ie->expr) :
					   st->table_pos, "indexes on expressions");
		if (ie->n_collation > 0 || ie->n_opclass > 0)
			return unsupported(x, st->table_pos, "index operator classes and collations");
		/* IndexElem has no location: the column's first mention after ON */
		if (take(x, ie->name, st->index_cols[i], st->table_pos) != 0)
			return -1;
		st->index_col_pos[i] = find_name(x, i > 0 ? (size_t)st->index_col_pos[i - 1] + 1 :
						 (size_t)st->table_pos + strlen(st->table),
						 st->index_cols[i], st->table_pos);
		st->index_col_index[i] = -1;
	}
	st->nindex_cols = n;
	return 0;
}

static int drop(struct tx *x, const PgQuery__DropStmt *ds, int pos, struct sql_stmt *st)
{
	const Node *o;
	const char *name;

	if (ds->remove_type != PG_QUERY__OBJECT_TYPE__OBJECT_TABLE) {
		const char *what = "DROP of this kind of object";

		switch (ds->remove_type) {
		case PG_QUERY__OBJECT_TYPE__OBJECT_INDEX: what = "DROP INDEX"; break;
		case PG_QUERY__OBJECT_TYPE__OBJECT_VIEW: what = "DROP VIEW"; break;
		case PG_QUERY__OBJECT_TYPE__OBJECT_SCHEMA: what = "DROP SCHEMA"; break;
		case PG_QUERY__OBJECT_TYPE__OBJECT_SEQUENCE: what = "DROP SEQUENCE"; break;
		case PG_QUERY__OBJECT_TYPE__OBJECT_FUNCTION: what = "DROP FUNCTION"; break;
		default: break;
		}
		return unsupported(x, pos, what);
	}
	st->kind = SQL_DROP_TABLE;
	st->if_exists = ds->missing_ok;
	if (ds->n_objects != 1)
		return unsupported(x, pos, "dropping several tables in one statement");
	if (ds->behavior == PG_QUERY__DROP_BEHAVIOR__DROP_CASCADE)
		return unsupported(x, pos, "CASCADE");
	o = ds->objects[0];
	if (o->node_case != PG_QUERY__NODE__NODE_LIST || o->list->n_items != 1 ||
	    (name = str_of(o->list->items[0])) == NULL)
		return unsupported(x, pos, "schema-qualified table names");
	/* the name's offset: DropStmt has none; the last word of the text */
	st->table_pos = pos;
	return take(x, name, st->table, pos);
}

/* SELECT pieces LWC does not run, named. */
static int select_plain(struct tx *x, const PgQuery__SelectStmt *s, int pos)
{
	if (s->op != PG_QUERY__SET_OPERATION__SETOP_NONE)
		return unsupported(x, pos, s->op == PG_QUERY__SET_OPERATION__SETOP_UNION ? "UNION" :
				   s->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT ? "INTERSECT" :
				   "EXCEPT");
	if (s->with_clause != NULL)
		return unsupported(x, s->with_clause->location, "WITH");
	if (s->into_clause != NULL)
		return unsupported(x, pos, "SELECT INTO");
	if (s->n_values_lists > 0)
		return unsupported(x, pos, "VALUES as a query");
	if (s->n_distinct_clause > 0)
		return unsupported(x, pos, "SELECT DISTINCT");
	if (s->n_group_clause > 0)
		return unsupported(x, node_pos(s->group_clause[0]) >= 0 ?
				   node_pos(s->group_clause[0]) : pos, "GROUP BY");
	if (s->having_clause != NULL)
		return unsupported(x, node_pos(s->having_clause) >= 0 ?
				   node_pos(s->having_clause) : pos, "HAVING");
	if (s->n_window_clause > 0)
		return unsupported(x, pos, "WINDOW");
	if (s->n_locking_clause > 0)
		return unsupported(x, pos, "FOR UPDATE and FOR SHARE");
	if (s->limit_offset != NULL)
		return unsupported(x, node_pos(s->limit_offset) >= 0 ? node_pos(s->limit_offset) :
				   pos, "OFFSET");
	if (s->limit_option == PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_WITH_TIES)
		return unsupported(x, pos, "FETCH ... WITH TIES");
	if (s->n_from_clause == 0)
		return unsupported(x, pos, "SELECT without FROM");
	if (s->n_from_clause > 1)
		return unsupported(x, node_pos(s->from_clause[1]) >= 0 ?
				   node_pos(s->from_clause[1]) : pos, "joins");
	if (s->from_clause[0]->node_case != PG_QUERY__NODE__NODE_RANGE_VAR)
		return node_unsupported(x, s->from_clause[0], pos);
	if (s->from_clause[0]->range_var->alias != NULL)
		return unsupported(x, s->from_clause[0]->range_var->location, "table aliases");
	return 0;
}

static int is_star(const Node *n)
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
	return f->n_funcname == 1 && str_of(f->funcname[0]) != NULL &&
	       strcmp(str_of(f->funcname[0]), "count") == 0 && f->agg_star && !f->agg_distinct &&
	       f->agg_filter == NULL && f->over == NULL && f->n_agg_order == 0;
}

static int limit(struct tx *x, const Node *n, struct sql_stmt *st)
{
	int pos = node_pos(n);
	struct sql_expr *e = value(x, n, "LIMIT");

	if (e == NULL)
		return -1;
	if (e->kind != SQL_E_LIT)
		return fail(x, pos, "argument of LIMIT must not contain variables");
	switch (e->lit.type) {
	case SQL_NULL:
		return 0;
	case SQL_INT:
		if (e->lit.i < 0)
			return fail(x, pos, "LIMIT must not be negative");
		st->limit = e->lit.i;
		return 0;
	default:
		return fail(x, pos, "argument of LIMIT must be type bigint, not type %s",
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

		return c->n_fields > 0 ? str_of(c->fields[c->n_fields - 1]) : NULL;
	}
	case PG_QUERY__NODE__NODE_FUNC_CALL:
		return last_name((const PgQuery__Node *const *)n->func_call->funcname,
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
		return t->n_names > 0 ? str_of(t->names[t->n_names - 1]) : NULL;
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
	int pos = node_pos(n);
	struct sql_expr *e = value(x, n, what);

	if (e == NULL)
		return -1;
	if (e->kind != SQL_E_LIT)
		return fail(x, pos, "argument of %s must not contain variables", what);
	switch (e->lit.type) {
	case SQL_NULL:
		return 0;
	case SQL_INT:
		if (e->lit.i < 0)
			return fail(x, pos, "%s must not be negative", what);
		*out = e->lit.i;
		return 0;
	default:
		return fail(x, pos, "argument of %s must be type bigint, not type %s", what,
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
		if ((is_star(v) || is_count_star(v)) && n == 1)
			continue;
		if (v->node_case != PG_QUERY__NODE__NODE_COLUMN_REF || is_star(v) ||
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

/* A table of FROM into q->froms. */
static int from_table(struct tx *x, const PgQuery__RangeVar *rv, struct sql_query *q,
		      enum sql_join join)
{
	struct sql_from *f;
	const char *name;

	if (q->nfroms == x->capfroms) {
		q->froms = sql_arena_grow(x->ar, q->froms, q->nfroms, &x->capfroms, sizeof(*q->froms));
		if (q->froms == NULL)
			return fail_nomem(x);
	}
	f = &q->froms[q->nfroms];
	memset(f, 0, sizeof(*f));
	f->join = join;
	f->pos = rv->location;
	if (table_name(x, rv, f->table, NULL) != 0)
		return -1;
	if (rv->alias != NULL) {
		if (rv->alias->n_colnames > 0)
			return unsupported(x, rv->location, "column aliases in FROM");
		if (take(x, rv->alias->aliasname, f->alias, rv->location) != 0)
			return -1;
	}
	name = f->alias[0] != '\0' ? f->alias : f->table;
	if (from_index(q, name) >= 0)
		return fail(x, rv->location, "table name \"%s\" specified more than once", name);
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
		return fail(x, pos, "expression nested too deeply");
	x->depth--;
	switch (n->node_case) {
	case PG_QUERY__NODE__NODE_RANGE_VAR:
		return from_table(x, n->range_var, q, join);
	case PG_QUERY__NODE__NODE_JOIN_EXPR:
		break;
	default:
		return node_unsupported(x, n, pos);
	}
	j = n->join_expr;
	if (j->is_natural)
		return unsupported(x, pos, "NATURAL JOIN");
	if (j->alias != NULL || j->join_using_alias != NULL)
		return unsupported(x, pos, "aliases of joins");
	switch (j->jointype) {
	case PG_QUERY__JOIN_TYPE__JOIN_INNER:
		jt = j->quals != NULL || j->n_using_clause > 0 ? SQL_JOIN_INNER : SQL_JOIN_NONE;
		break;
	case PG_QUERY__JOIN_TYPE__JOIN_LEFT:
		jt = SQL_JOIN_LEFT;
		break;
	case PG_QUERY__JOIN_TYPE__JOIN_RIGHT:
		return unsupported(x, pos, "RIGHT JOIN");
	case PG_QUERY__JOIN_TYPE__JOIN_FULL:
		return unsupported(x, pos, "FULL JOIN");
	default:
		return unsupported(x, pos, "this kind of join");
	}
	if (from_item(x, j->larg, q, join, pos) != 0)
		return -1;
	first_right = q->nfroms;
	if (jt == SQL_JOIN_LEFT && j->rarg->node_case != PG_QUERY__NODE__NODE_RANGE_VAR)
		return unsupported(x, pos, "LEFT JOIN of a parenthesized join");
	if (from_item(x, j->rarg, q, jt == SQL_JOIN_LEFT ? SQL_JOIN_LEFT : SQL_JOIN_NONE, pos) != 0)
		return -1;
	if (jt == SQL_JOIN_NONE)
		return 0;
	if (j->quals != NULL) {
		struct sql_expr *on = cond(x, j->quals, "JOIN/ON");

		if (on == NULL)
			return -1;
		q->froms[q->nfroms - 1].on = on;
	} else {
		/* USING (a, ...): left.a = right.a AND ... */
		struct sql_expr *all = NULL;
		const struct sql_from *l = &q->froms[first_right - 1], *r = &q->froms[q->nfroms - 1];
		size_t k;

		for (k = 0; k < j->n_using_clause; k++) {
			const char *nm = str_of(j->using_clause[k]);
			struct sql_expr *a, *b, *eq, *and;

			if (nm == NULL || (a = new_expr(x, SQL_E_COL, pos)) == NULL ||
			    (b = new_expr(x, SQL_E_COL, pos)) == NULL ||
			    (eq = new_expr(x, SQL_E_CMP, pos)) == NULL)
				return -1;
			snprintf(a->col, sizeof(a->col), "%s", nm);
			snprintf(b->col, sizeof(b->col), "%s", nm);
			snprintf(a->qual, sizeof(a->qual), "%s", l->alias[0] ? l->alias : l->table);
			snprintf(b->qual, sizeof(b->qual), "%s", r->alias[0] ? r->alias : r->table);
			eq->op = SQL_EQ;
			eq->a = a;
			eq->b = b;
			if (finish(x, eq) == NULL)
				return -1;
			if (all == NULL) {
				all = eq;
				continue;
			}
			if ((and = new_expr(x, SQL_E_AND, pos)) == NULL)
				return -1;
			and->a = all;
			and->b = eq;
			if ((all = finish(x, and)) == NULL)
				return -1;
		}
		q->froms[q->nfroms - 1].on = all;
		if ((q->froms[q->nfroms - 1].using = talloc(x, j->n_using_clause *
				sizeof(*q->froms[0].using))) == NULL)
			return -1;
		for (k = 0; k < j->n_using_clause; k++)
			snprintf(q->froms[q->nfroms - 1].using[k], SQL_NAME_MAX + 1, "%s",
				 str_of(j->using_clause[k]));
		q->froms[q->nfroms - 1].nusing = j->n_using_clause;
	}
	q->froms[q->nfroms - 1].join = jt;
	return 0;
}

static int general_select(struct tx *x, const PgQuery__SelectStmt *s, int pos,
			  struct sql_stmt *st)
{
	struct sql_query *q = talloc(x, sizeof(*q));
	size_t i, n = s->n_target_list;

	if (q == NULL)
		return -1;
	st->q = q;
	if (s->n_from_clause > 1 ||
	    (s->n_from_clause == 1 && s->from_clause[0]->node_case != PG_QUERY__NODE__NODE_RANGE_VAR)) {
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

		if (table_name(x, rv, st->table, &st->table_pos) != 0)
			return -1;
		memcpy(x->tname, st->table, sizeof(x->tname));
		if (rv->alias != NULL) {
			if (rv->alias->n_colnames > 0)
				return unsupported(x, rv->location, "column aliases in FROM");
			if (take(x, rv->alias->aliasname, x->talias, rv->location) != 0)
				return -1;
		}
		q->from = 1;
	}
	if (s->n_distinct_clause > 0) {
		if (s->n_distinct_clause > 1 || (s->distinct_clause[0] != NULL &&
						 s->distinct_clause[0]->node_case !=
						 PG_QUERY__NODE__NODE__NOT_SET))
			return unsupported(x, pos, "DISTINCT ON");
		q->distinct = 1;
	}
	if (s->group_distinct)
		return unsupported(x, pos, "GROUP BY DISTINCT");
	if ((q->targets = talloc(x, n * sizeof(*q->targets))) == NULL)
		return -1;
	x->agg_ok = 1;
	for (i = 0; i < n; i++) {
		const PgQuery__ResTarget *rt = s->target_list[i]->res_target;
		struct sql_target *t = &q->targets[i];
		const char *name;

		t->pos = rt->location;
		if (is_star(rt->val)) {
			if (!q->from)
				return fail(x, rt->location, "SELECT * with no tables specified is not valid");
			continue;
		}
		if (rt->val->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
		    rt->val->column_ref->n_fields == 2 &&
		    rt->val->column_ref->fields[1]->node_case == PG_QUERY__NODE__NODE_A_STAR) {
			const char *qn = str_of(rt->val->column_ref->fields[0]);

			if (qn == NULL || !q->from ||
			    (x->join != NULL ? from_index(q, qn) < 0 :
			     strcmp(qn, x->talias[0] != '\0' ? x->talias : x->tname) != 0))
				return fail(x, rt->location, "missing FROM-clause entry for table \"%s\"",
					    qn != NULL ? qn : "?");
			if (x->join != NULL)
				snprintf(t->star_of, sizeof(t->star_of), "%s", qn);
			continue;
		}
		if ((t->e = expr(x, rt->val)) == NULL)
			return -1;
		name = rt->name != NULL && rt->name[0] != '\0' ? rt->name : figure_name(rt->val);
		snprintf(t->name, sizeof(t->name), "%s", name != NULL ? name : "?column?");
	}
	q->ntargets = n;
	x->agg_ok = 0;
	if (s->where_clause != NULL && (st->where = cond(x, s->where_clause, "WHERE")) == NULL)
		return -1;
	if (s->n_group_clause > 0) {
		if ((q->group = talloc(x, s->n_group_clause * sizeof(*q->group))) == NULL)
			return -1;
		for (i = 0; i < s->n_group_clause; i++) {
			const Node *g = s->group_clause[i];
			int64_t k = const_int(g);

			if (g->node_case == PG_QUERY__NODE__NODE_GROUPING_SET)
				return unsupported(x, pos, "GROUPING SETS, ROLLUP and CUBE");
			if (k >= 0) {
				if (k < 1 || (size_t)k > n || q->targets[k - 1].e == NULL)
					return fail(x, node_pos(g), "GROUP BY position %lld is not in "
						    "select list", (long long)k);
				q->group[i] = q->targets[k - 1].e;
			} else if ((q->group[i] = value(x, g, "GROUP BY")) == NULL) {
				return -1;
			}
		}
		q->ngroup = s->n_group_clause;
	}
	x->agg_ok = 1;
	if (s->having_clause != NULL && (q->having = cond(x, s->having_clause, "HAVING")) == NULL)
		return -1;
	if (s->n_sort_clause > 0) {
		if ((q->order = talloc(x, s->n_sort_clause * sizeof(*q->order))) == NULL)
			return -1;
		for (i = 0; i < s->n_sort_clause; i++) {
			const PgQuery__SortBy *sb = s->sort_clause[i]->sort_by;
			struct sql_sortkey *o = &q->order[i];
			int64_t k = const_int(sb->node);
			const char *nm = NULL;
			size_t j;

			if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
				return unsupported(x, sb->location, "ORDER BY ... USING");
			o->desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
			o->nulls_first = sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ||
					 (sb->sortby_nulls <= PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT &&
					  o->desc);
			o->target = -1;
			if (k >= 0) {
				if (k < 1 || (size_t)k > n)
					return fail(x, node_pos(sb->node), "ORDER BY position %lld is not "
						    "in select list", (long long)k);
				o->target = (int)k - 1;
				continue;
			}
			if (sb->node->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
			    sb->node->column_ref->n_fields == 1)
				nm = str_of(sb->node->column_ref->fields[0]);
			for (j = 0; nm != NULL && j < n; j++) {
				const PgQuery__ResTarget *rt = s->target_list[j]->res_target;

				if (rt->name != NULL && strcmp(rt->name, nm) == 0) {
					o->target = (int)j;
					break;
				}
			}
			if (o->target < 0 && (o->e = value(x, sb->node, "ORDER BY")) == NULL)
				return -1;
		}
		q->norder = s->n_sort_clause;
	}
	x->agg_ok = 0;
	if (s->limit_count != NULL && limit_value(x, s->limit_count, "LIMIT", &st->limit) != 0)
		return -1;
	if (s->limit_offset != NULL && limit_value(x, s->limit_offset, "OFFSET", &q->offset) != 0)
		return -1;
	q->aggs = x->aggs;
	q->naggs = x->naggs;
	q->grouped = q->naggs > 0 || q->ngroup > 0;
	return 0;
}

/* A SELECT of a set operation: a statement of its own (sharing the
 * arena), with the parser's per-SELECT state saved around it. */
static struct sql_stmt *branch(struct tx *x, const PgQuery__SelectStmt *s, int pos)
{
	struct sql_stmt *b = talloc(x, sizeof(*b));
	struct tx save = *x;
	int rc;

	if (b == NULL)
		return NULL;
	b->arena = x->ar;
	b->shared_arena = 1;
	b->limit = -1;
	x->tname[0] = x->talias[0] = '\0';
	x->join = NULL;
	x->agg_ok = 0;
	x->aggs = NULL;
	x->naggs = x->capaggs = 0;
	rc = select_stmt(x, s, pos, b);
	save.rc = x->rc;
	save.errpos = x->errpos;
	save.depth = x->depth;
	*x = save;
	return rc == 0 ? b : NULL;
}

/* UNION / INTERSECT / EXCEPT [ALL]. */
static int setop_stmt(struct tx *x, const PgQuery__SelectStmt *s, int pos, struct sql_stmt *st)
{
	struct sql_query *q = talloc(x, sizeof(*q));
	size_t i;

	if (q == NULL)
		return -1;
	st->q = q;
	q->from = 1;
	q->setop = s->op == PG_QUERY__SET_OPERATION__SETOP_UNION ? SQL_UNION :
		   s->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT ? SQL_INTERSECT : SQL_EXCEPT;
	q->setall = s->all;
	if (s->with_clause != NULL)
		return unsupported(x, s->with_clause->location, "WITH");
	if (s->into_clause != NULL)
		return unsupported(x, pos, "SELECT INTO");
	if (s->n_locking_clause > 0)
		return unsupported(x, pos, "FOR UPDATE and FOR SHARE");
	if (s->limit_option == PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_WITH_TIES)
		return unsupported(x, pos, "FETCH ... WITH TIES");
	if (s->larg == NULL || s->rarg == NULL)
		return fail(x, pos, "malformed set operation");
	if ((q->larg = branch(x, s->larg, pos)) == NULL || (q->rarg = branch(x, s->rarg, pos)) == NULL)
		return -1;
	if (s->n_sort_clause > 0) {
		if ((q->order = talloc(x, s->n_sort_clause * sizeof(*q->order))) == NULL)
			return -1;
		for (i = 0; i < s->n_sort_clause; i++) {
			const PgQuery__SortBy *sb = s->sort_clause[i]->sort_by;
			struct sql_sortkey *o = &q->order[i];
			int64_t k = const_int(sb->node);

			if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
				return unsupported(x, sb->location, "ORDER BY ... USING");
			o->desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
			o->nulls_first = sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ||
					 (sb->sortby_nulls <= PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT &&
					  o->desc);
			o->target = -1;
			if (k >= 1 && k <= 1000) {
				o->target = (int)k - 1;   /* checked against the columns when run */
			} else if (sb->node->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
				   sb->node->column_ref->n_fields == 1 &&
				   str_of(sb->node->column_ref->fields[0]) != NULL) {
				if ((o->e = new_expr(x, SQL_E_COL, sb->location)) == NULL ||
				    take(x, str_of(sb->node->column_ref->fields[0]), o->e->col,
					 node_pos(sb->node)) != 0)
					return -1;
				o->e->pos = node_pos(sb->node);
			} else if (k >= 0) {
				return fail(x, node_pos(sb->node), "ORDER BY position %lld is not in select "
					    "list", (long long)k);
			} else {
				return unsupported(x, node_pos(sb->node) >= 0 ? node_pos(sb->node) : pos,
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

static int select_stmt(struct tx *x, const PgQuery__SelectStmt *s, int pos, struct sql_stmt *st)
{
	size_t i, n = s->n_target_list;

	st->kind = SQL_SELECT;
	if (s->op != PG_QUERY__SET_OPERATION__SETOP_NONE)
		return setop_stmt(x, s, pos, st);
	if (s->op == PG_QUERY__SET_OPERATION__SETOP_NONE && s->with_clause == NULL &&
	    s->into_clause == NULL && s->n_values_lists == 0 && s->n_window_clause == 0 &&
	    s->n_locking_clause == 0 &&
	    s->limit_option != PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_WITH_TIES &&
	    (x->force_general || needs_general(s))) {
		x->force_general = 0;
		return general_select(x, s, pos, st);
	}
	if (select_plain(x, s, pos) != 0)
		return -1;
	if (table_name(x, s->from_clause[0]->range_var, st->table, &st->table_pos) != 0)
		return -1;
	memcpy(x->tname, st->table, sizeof(x->tname));
	for (i = 0; i < n; i++) {
		const PgQuery__ResTarget *rt = s->target_list[i]->res_target;

		if (rt->name != NULL && rt->name[0] != '\0')
			return unsupported(x, rt->location, "column aliases (AS)");
		if ((is_star(rt->val) || is_count_star(rt->val)) && n > 1)
			return unsupported(x, rt->location, is_star(rt->val) ?
					   "* together with other columns" :
					   "count(*) together with other columns");
	}
	if (n == 1 && is_star(s->target_list[0]->res_target->val)) {
		st->star = 1;
	} else if (n == 1 && is_count_star(s->target_list[0]->res_target->val)) {
		st->count_star = 1;
	} else {
		if ((st->proj = talloc(x, n * sizeof(*st->proj))) == NULL ||
		    (st->proj_index = talloc(x, n * sizeof(*st->proj_index))) == NULL ||
		    (st->proj_pos = talloc(x, n * sizeof(*st->proj_pos))) == NULL)
			return -1;
		for (i = 0; i < n; i++) {
			const Node *v = s->target_list[i]->res_target->val;
			struct sql_expr *e;

			if (v->node_case != PG_QUERY__NODE__NODE_COLUMN_REF) {
				if (v->node_case == PG_QUERY__NODE__NODE_FUNC_CALL)
					return unsupported(x, node_pos(v), "functions and aggregates "
							   "in the select list");
				return unsupported(x, node_pos(v), "expressions in the select list");
			}
			if ((e = column_ref(x, v->column_ref)) == NULL)
				return -1;
			memcpy(st->proj[i], e->col, sizeof(e->col));
			st->proj_pos[i] = e->pos;
			st->proj_index[i] = -1;
		}
		st->nproj = n;
	}
	if (s->where_clause != NULL && (st->where = cond(x, s->where_clause, "WHERE")) == NULL)
		return -1;
	if (s->n_sort_clause > 0) {
		if ((st->order = talloc(x, s->n_sort_clause * sizeof(*st->order))) == NULL)
			return -1;
		for (i = 0; i < s->n_sort_clause; i++) {
			const PgQuery__SortBy *sb = s->sort_clause[i]->sort_by;
			struct sql_order *o = &st->order[i];
			struct sql_expr *e;

			if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
				return unsupported(x, sb->location, "ORDER BY ... USING");
			if (sb->sortby_nulls > PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT)
				return unsupported(x, sb->location, "NULLS FIRST and NULLS LAST");
			if (sb->node->node_case != PG_QUERY__NODE__NODE_COLUMN_REF)
				return unsupported(x, node_pos(sb->node), "ORDER BY expressions");
			if ((e = column_ref(x, sb->node->column_ref)) == NULL)
				return -1;
			memcpy(o->col, e->col, sizeof(e->col));
			o->pos = e->pos;
			o->col_index = -1;
			o->desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
			if (st->count_star)
				return fail(x, o->pos, "column \"%s\" must appear in the GROUP BY clause "
					    "or be used in an aggregate function", o->col);
		}
		st->norder = s->n_sort_clause;
	}
	if (s->limit_count != NULL && limit(x, s->limit_count, st) != 0)
		return -1;
	return 0;
}

static int insert_stmt(struct tx *x, const PgQuery__InsertStmt *is, int pos, struct sql_stmt *st)
{
	const PgQuery__SelectStmt *s;
	size_t i, j;

	st->kind = SQL_INSERT;
	if (is->with_clause != NULL)
		return unsupported(x, is->with_clause->location, "WITH");
	if (is->on_conflict_clause != NULL)
		return unsupported(x, is->on_conflict_clause->location, "ON CONFLICT");
	if (is->n_returning_list > 0)
		return unsupported(x, node_pos(is->returning_list[0]), "RETURNING");
	if (is->override > PG_QUERY__OVERRIDING_KIND__OVERRIDING_NOT_SET)
		return unsupported(x, pos, "OVERRIDING");
	if (table_name(x, is->relation, st->table, &st->table_pos) != 0)
		return -1;
	if (is->relation->alias != NULL)
		return unsupported(x, is->relation->location, "table aliases");
	if (is->n_cols > 0) {
		if ((st->insert_cols = talloc(x, is->n_cols * sizeof(*st->insert_cols))) == NULL ||
		    (st->insert_col_pos = talloc(x, is->n_cols * sizeof(*st->insert_col_pos))) == NULL)
			return -1;
		for (i = 0; i < is->n_cols; i++) {
			const PgQuery__ResTarget *rt = is->cols[i]->res_target;

			if (rt->n_indirection > 0)
				return unsupported(x, rt->location, "subscripts and field selection");
			if (take(x, rt->name, st->insert_cols[i], rt->location) != 0)
				return -1;
			st->insert_col_pos[i] = rt->location;
		}
		st->ninsert_cols = is->n_cols;
	}
	if (is->select_stmt == NULL)
		return unsupported(x, pos, "DEFAULT VALUES");
	if (is->select_stmt->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
		return node_unsupported(x, is->select_stmt, pos);
	s = is->select_stmt->select_stmt;
	if (s->n_values_lists == 0) {
		/* INSERT ... SELECT * FROM src */
		if (select_plain(x, s, pos) != 0)
			return -1;
		if (s->n_target_list != 1 || !is_star(s->target_list[0]->res_target->val) ||
		    s->where_clause != NULL || s->n_sort_clause > 0 || s->limit_count != NULL)
			return unsupported(x, s->n_target_list > 0 ? node_pos(s->target_list[0]) : pos,
					   "INSERT ... SELECT other than SELECT * FROM table");
		return table_name(x, s->from_clause[0]->range_var, st->src, &st->src_pos);
	}
	if (s->with_clause != NULL || s->n_sort_clause > 0 || s->limit_count != NULL ||
	    s->limit_offset != NULL)
		return unsupported(x, pos, "ORDER BY, LIMIT or WITH on VALUES");
	st->nrows = s->n_values_lists;
	if ((st->rows = talloc(x, st->nrows * sizeof(*st->rows))) == NULL)
		return -1;
	for (i = 0; i < st->nrows; i++) {
		const Node *r = s->values_lists[i];
		const PgQuery__List *l;

		if (r->node_case != PG_QUERY__NODE__NODE_LIST)
			return fail(x, pos, "malformed VALUES");
		l = r->list;
		if (i == 0)
			st->rowlen = l->n_items;
		else if (l->n_items != st->rowlen)
			return fail(x, l->n_items > 0 ? node_pos(l->items[0]) : pos,
				    "VALUES lists must all be the same length");
		if ((st->rows[i] = talloc(x, st->rowlen * sizeof(**st->rows))) == NULL)
			return -1;
		for (j = 0; j < l->n_items; j++) {
			if (l->items[j]->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT)
				return unsupported(x, node_pos(l->items[j]), "DEFAULT");
			if ((st->rows[i][j] = constant_expr(x, l->items[j], "VALUES")) == NULL)
				return -1;
		}
	}
	return 0;
}

static int update_stmt(struct tx *x, const PgQuery__UpdateStmt *us, int pos, struct sql_stmt *st)
{
	size_t i;

	(void)pos;
	st->kind = SQL_UPDATE;
	if (us->with_clause != NULL)
		return unsupported(x, us->with_clause->location, "WITH");
	if (us->n_from_clause > 0)
		return unsupported(x, node_pos(us->from_clause[0]), "UPDATE ... FROM");
	if (us->n_returning_list > 0)
		return unsupported(x, node_pos(us->returning_list[0]), "RETURNING");
	if (table_name(x, us->relation, st->table, &st->table_pos) != 0)
		return -1;
	memcpy(x->tname, st->table, sizeof(x->tname));
	if (us->relation->alias != NULL)
		return unsupported(x, us->relation->location, "table aliases");
	st->nsets = us->n_target_list;
	if ((st->sets = talloc(x, st->nsets * sizeof(*st->sets))) == NULL)
		return -1;
	for (i = 0; i < st->nsets; i++) {
		const PgQuery__ResTarget *rt = us->target_list[i]->res_target;
		struct sql_set *s = &st->sets[i];

		if (rt->n_indirection > 0)
			return unsupported(x, rt->location, "subscripts and field selection");
		if (rt->val != NULL && rt->val->node_case == PG_QUERY__NODE__NODE_MULTI_ASSIGN_REF)
			return unsupported(x, rt->location, "multiple-column assignment");
		if (rt->val != NULL && rt->val->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT)
			return unsupported(x, node_pos(rt->val), "DEFAULT");
		s->col_index = -1;
		s->pos = rt->location;
		if (take(x, rt->name, s->col, rt->location) != 0 ||
		    (s->value = value(x, rt->val, "SET")) == NULL)
			return -1;
	}
	if (us->where_clause != NULL && (st->where = cond(x, us->where_clause, "WHERE")) == NULL)
		return -1;
	return 0;
}

static int delete_stmt(struct tx *x, const PgQuery__DeleteStmt *ds, struct sql_stmt *st)
{
	st->kind = SQL_DELETE;
	if (ds->with_clause != NULL)
		return unsupported(x, ds->with_clause->location, "WITH");
	if (ds->n_using_clause > 0)
		return unsupported(x, node_pos(ds->using_clause[0]), "DELETE ... USING");
	if (ds->n_returning_list > 0)
		return unsupported(x, node_pos(ds->returning_list[0]), "RETURNING");
	if (table_name(x, ds->relation, st->table, &st->table_pos) != 0)
		return -1;
	memcpy(x->tname, st->table, sizeof(x->tname));
	if (ds->relation->alias != NULL)
		return unsupported(x, ds->relation->location, "table aliases");
	if (ds->where_clause != NULL && (st->where = cond(x, ds->where_clause, "WHERE")) == NULL)
		return -1;
	return 0;
}

static int statement(struct tx *x, const PgQuery__RawStmt *raw, struct sql_stmt *st)
{
	const Node *n = raw->stmt;
	int pos = (int)sql_skip_blank(x->sql, x->len, (size_t)raw->stmt_location);

	switch (n->node_case) {
	case PG_QUERY__NODE__NODE_SELECT_STMT:
		return select_stmt(x, n->select_stmt, pos, st);
	case PG_QUERY__NODE__NODE_INSERT_STMT:
		return insert_stmt(x, n->insert_stmt, pos, st);
	case PG_QUERY__NODE__NODE_UPDATE_STMT:
		return update_stmt(x, n->update_stmt, pos, st);
	case PG_QUERY__NODE__NODE_DELETE_STMT:
		return delete_stmt(x, n->delete_stmt, st);
	case PG_QUERY__NODE__NODE_CREATE_STMT:
		return create_table(x, n->create_stmt, st);
	case PG_QUERY__NODE__NODE_INDEX_STMT:
		return create_index(x, n->index_stmt, st);
	case PG_QUERY__NODE__NODE_DROP_STMT: {
		/* DropStmt has no location: the table name is the statement's last word */
		size_t end = (size_t)raw->stmt_location +
			     (raw->stmt_len > 0 ? (size_t)raw->stmt_len : x->len - (size_t)raw->stmt_location);
		size_t b = end;

		while (b > (size_t)pos && (sql_is_space((unsigned char)x->sql[b - 1]) ||
					   x->sql[b - 1] == ';'))
			b--;
		while (b > (size_t)pos && !sql_is_space((unsigned char)x->sql[b - 1]))
			b--;
		return drop(x, n->drop_stmt, (int)b, st);
	}
	default:
		return unsupported(x, pos, node_name(n));
	}
}

/* ---- running PostgreSQL's parser -------------------------------------------- */

/* libpg_query's output and protobuf-c's unpacking recurse once or twice per
 * level of the tree, about 1 KiB of stack per level, and PostgreSQL's
 * grammar builds a left-deep tree for "b + b + b ...".  So before the text
 * is parsed the depth of its tree is bounded from the tokens, per group of
 * parentheses: the operator characters and words of its longest segment
 * (AND, OR and commas separate segments, whose trees are siblings:
 * PostgreSQL flattens AND and OR lists), plus the words that nest across
 * segments (CASE WHEN THEN ELSE, BETWEEN, SELECT, UNION, INTERSECT,
 * EXCEPT, JOIN, ON; no segment ends inside CASE ... END or between BETWEEN
 * and its AND), plus 3; a node is at most as deep as the sum of that over
 * the groups enclosing it.  A statement whose bound is at most
 * PARSE_INLINE_DEPTH is parsed on the caller's stack; up to
 * PARSE_MAX_DEPTH on a thread with PARSE_STACK bytes of stack; beyond
 * that it is refused. */
#define PARSE_INLINE_DEPTH 300
#define PARSE_MAX_DEPTH    SQL_MAX_TOKENS
#define PARSE_STACK        ((size_t)96 << 20)

static int is_word_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c >= 0x80;
}

struct dgroup {
	size_t parent;
	size_t seg, maxseg, global;
	size_t in_case, in_between;
	size_t value;             /* after the scan: the bound along the path  */
};

static int word_is(const char *s, size_t n, const char *w)
{
	size_t i;

	if (strlen(w) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (sql_ascii_lower((unsigned char)s[i]) != (unsigned char)w[i])
			return 0;
	return 1;
}

static void seg_end(struct dgroup *g)
{
	if (g->seg > g->maxseg)
		g->maxseg = g->seg;
	g->seg = 0;
}

/* One word of group g. */
static void depth_word(struct dgroup *g, const char *w, size_t n)
{
	static const char *const nest[] = { "when", "then", "else", "select", "union",
					    "intersect", "except", "join", "on" };
	size_t k;

	if (word_is(w, n, "and") || word_is(w, n, "or")) {
		if (word_is(w, n, "and") && g->in_between > 0) {
			g->in_between--;
			g->seg++;
		} else if (g->in_case == 0 && g->in_between == 0) {
			seg_end(g);
		} else {
			g->seg++;
		}
		return;
	}
	if (word_is(w, n, "case")) {
		g->in_case++;
		g->global++;
		return;
	}
	if (word_is(w, n, "end")) {
		if (g->in_case > 0)
			g->in_case--;
		g->seg++;
		return;
	}
	if (word_is(w, n, "between")) {
		g->in_between++;
		g->global++;
		return;
	}
	for (k = 0; k < sizeof(nest) / sizeof(nest[0]); k++)
		if (word_is(w, n, nest[k])) {
			g->global++;
			return;
		}
	g->seg++;
}

/* The depth bound of text[0..n), or SIZE_MAX when out of memory. */
static size_t depth_bound(const char *s, size_t n)
{
	struct dgroup *gs;
	size_t ng = 1, cap = 64, cur = 0, i = 0, best = 0, k;

	if ((gs = calloc(cap, sizeof(*gs))) == NULL)
		return SIZE_MAX;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\'' || c == '"') {
			/* E'...' strings take backslash escapes */
			int esc = c == '\'' && i > 0 && (s[i - 1] == 'e' || s[i - 1] == 'E') &&
				  (i < 2 || !is_word_char((unsigned char)s[i - 2]));

			for (i++; i < n; i++) {
				if (esc && s[i] == '\\') {
					i++;
					continue;
				}
				if ((unsigned char)s[i] == c) {
					if (i + 1 < n && (unsigned char)s[i + 1] == c) {
						i++;
						continue;
					}
					break;
				}
			}
			i++;
			gs[cur].seg++;
			continue;
		}
		if (c == '-' && i + 1 < n && s[i + 1] == '-') {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (sql_is_space(c) || c == ';' || c == '.') {
			i++;
			continue;
		}
		if (c == ',') {
			if (gs[cur].in_case == 0 && gs[cur].in_between == 0)
				seg_end(&gs[cur]);
			i++;
			continue;
		}
		if (c >= '0' && c <= '9') {
			while (i < n && (is_word_char((unsigned char)s[i]) || s[i] == '.'))
				i++;
			continue;
		}
		if (c == '(') {
			if (ng == cap) {
				struct dgroup *ngs = realloc(gs, 2 * cap * sizeof(*gs));

				if (ngs == NULL) {
					free(gs);
					return SIZE_MAX;
				}
				gs = ngs;
				cap *= 2;
			}
			memset(&gs[ng], 0, sizeof(gs[ng]));
			gs[ng].parent = cur;
			cur = ng++;
			i++;
			continue;
		}
		if (c == ')') {
			cur = gs[cur].parent;
			i++;
			continue;
		}
		if (is_word_char(c)) {
			size_t b = i;

			while (i < n && is_word_char((unsigned char)s[i]))
				i++;
			depth_word(&gs[cur], s + b, i - b);
			continue;
		}
		gs[cur].seg++;
		i++;
	}
	/* groups come after their parents: path sums in one pass */
	for (k = 0; k < ng; k++) {
		seg_end(&gs[k]);
		gs[k].value = 3 + gs[k].maxseg + gs[k].global + (k > 0 ? gs[gs[k].parent].value : 0);
		if (gs[k].value > best)
			best = gs[k].value;
	}
	free(gs);
	return best;
}

struct pg_job {
	const char *text;
	PgQueryProtobufParseResult res;
	PgQuery__ParseResult *tree;
};

static void pg_job_run(struct pg_job *j)
{
	j->res = pg_query_parse_protobuf(j->text);
	j->tree = NULL;
	if (j->res.error == NULL)
		j->tree = pg_query__parse_result__unpack(NULL, j->res.parse_tree.len,
							 (const uint8_t *)j->res.parse_tree.data);
}

static void *pg_job_thread(void *arg)
{
	pg_job_run(arg);
	return NULL;
}

/* Parse on this stack or, for a deep statement, on a thread with a large
 * one.  0, or -1 when the thread could not start. */
static int pg_parse(struct pg_job *j, size_t depth)
{
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (depth <= PARSE_INLINE_DEPTH) {
		pg_job_run(j);
		return 0;
	}
	if (pthread_attr_init(&attr) != 0)
		return -1;
	rc = pthread_attr_setstacksize(&attr, PARSE_STACK);
	if (rc == 0)
		rc = pthread_create(&t, &attr, pg_job_thread, j);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return -1;
	pthread_join(t, NULL);
	return 0;
}

/* Byte offset of the 1-based character position PostgreSQL reports. */
static int char_to_byte(const char *s, size_t len, int cursor)
{
	size_t i = 0;
	int c = 1;

	if (cursor <= 0)
		return -1;
	while (i < len && c < cursor) {
		size_t k = sql_utf8_seq((const unsigned char *)s + i, len - i);

		i += k ? k : 1;
		c++;
	}
	return (int)i;
}

int sql_parse(const char *sql, size_t len, struct sql_stmt **out,
	      char *err, size_t errlen, int *errpos)
{
	struct pg_job job;
	PgQuery__ParseResult *tree = NULL;
	size_t depth;
	int job_started = 0;
	struct sql_stmt *st = NULL;
	struct tx x;
	char *text;
	size_t bad;

	*out = NULL;
	if (errpos != NULL)
		*errpos = -1;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (sql == NULL && len > 0) {
		lwc_errf(err, errlen, "no SQL text");
		return LWC_ERR_ARG;
	}
	if (len >= INT_MAX) {
		lwc_errf(err, errlen, "statement too long");
		return LWC_ERR_ARG;
	}
	if (sql_is_blank(sql, len)) {
		lwc_errf(err, errlen, "empty statement");
		if (errpos != NULL)
			*errpos = 0;
		return LWC_ERR_ARG;
	}
	bad = sql_utf8_check((const unsigned char *)sql, len);
	if (bad < len) {
		lwc_errf(err, errlen, "invalid byte sequence for encoding \"UTF8\": 0x%02x",
			 (unsigned char)sql[bad]);
		if (errpos != NULL)
			*errpos = (int)bad;
		return LWC_ERR_ARG;
	}
	if ((text = malloc(len + 1)) == NULL) {
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	memcpy(text, sql, len);
	text[len] = '\0';
	memset(&x, 0, sizeof(x));
	x.sql = text;
	x.len = len;
	x.err = err;
	x.errlen = errlen;
	x.errpos = -1;
	x.rc = LWC_OK;

	depth = depth_bound(text, len);
	if (depth == SIZE_MAX) {
		fail_nomem(&x);
	} else if (depth > PARSE_MAX_DEPTH) {
		fail(&x, 0, "statement too complex: more than %d operators, words or nested "
		     "parentheses", PARSE_MAX_DEPTH);
	} else if ((job.text = text, pg_parse(&job, depth)) != 0) {
		fail_nomem(&x);
	} else if ((job_started = 1, job.res.error != NULL)) {
		const char *m = job.res.error->message != NULL ? job.res.error->message : "syntax error";

		const char *near = strstr(m, " at or near \"");
		size_t ml = strlen(m);

		if (near != NULL && ml > 0 && m[ml - 1] == '"') {
			/* quote at most a bounded prefix of the input, as elsewhere */
			const char *tok = near + strlen(" at or near \"");
			char q[160];

			sql_quote_text(q, sizeof(q), tok, (size_t)(m + ml - 1 - tok), 40);
			fail(&x, char_to_byte(text, len, job.res.error->cursorpos),
			     "%.*s at or near \"%s\"", (int)(near - m), m, q);
		} else {
			fail(&x, char_to_byte(text, len, job.res.error->cursorpos), "%s", m);
		}
		if (strstr(m, "out of memory") != NULL)
			x.rc = LWC_ERR_NOMEM;
	} else if ((tree = job.tree) == NULL) {
		fail_nomem(&x);
	}
	if (x.rc != LWC_OK) {
		/* reported */
	} else if (tree->n_stmts == 0) {
		fail(&x, 0, "empty statement");
	} else if (tree->n_stmts > 1) {
		size_t at = sql_skip_blank(text, len, (size_t)tree->stmts[1]->stmt_location);
		size_t e = at;
		char q[160];

		while (e < len && !sql_is_space((unsigned char)text[e]) && text[e] != ';')
			e++;
		sql_quote_text(q, sizeof(q), text + at, e - at, 40);
		fail(&x, (int)at, "only one statement is allowed: more text at or near \"%s\"", q);
	} else {
		if ((x.ar = sql_arena_new()) == NULL) {
			fail_nomem(&x);
		} else if ((st = talloc(&x, sizeof(*st))) != NULL) {
			st->arena = x.ar;
			st->limit = -1;
			statement(&x, tree->stmts[0], st);
		}
	}
	if (tree != NULL)
		pg_query__parse_result__free_unpacked(tree, NULL);
	if (job_started)
		pg_query_free_protobuf_parse_result(job.res);
	free(text);
	if (x.rc != LWC_OK) {
		if (x.ar != NULL)
			sql_arena_destroy(x.ar);
		if (errpos != NULL)
			*errpos = x.errpos;
		return x.rc;
	}
	*out = st;
	return LWC_OK;
}

void sql_free(struct sql_stmt *st)
{
	if (st != NULL && st->attach_free != NULL) {
		st->attach_free(st->attach);
		st->attach_free = NULL;
	}
	if (st != NULL && !st->shared_arena)
		sql_arena_destroy(st->arena);
}
