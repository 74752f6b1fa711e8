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

#include "sql_parse_int.h"


/* Record the first error; always returns -1 for "return sqp_fail(...)". */
__attribute__((format(printf, 3, 4)))
int sqp_fail(struct tx *x, int pos, const char *fmt, ...)
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

int sqp_fail_nomem(struct tx *x)
{
	if (x->rc == LWC_OK) {
		x->rc = LWC_ERR_NOMEM;
		x->errpos = -1;
		lwc_errf(x->err, x->errlen, "out of memory");
	}
	return -1;
}

/* "LWC does not support <what>" at pos. */
int sqp_unsupported(struct tx *x, int pos, const char *what)
{
	return sqp_fail(x, pos, "LWC does not support %s", what);
}

void *sqp_talloc(struct tx *x, size_t n)
{
	void *p = sql_arena_alloc(x->ar, n ? n : 1);

	if (p == NULL)
		sqp_fail_nomem(x);
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
int sqp_node_pos(const Node *n)
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
	case PG_QUERY__NODE__NODE_A_INDIRECTION: return sqp_node_pos(n->a_indirection->arg);
	case PG_QUERY__NODE__NODE_JOIN_EXPR: return sqp_node_pos(n->join_expr->larg);
	default: return -1;
	}
}

int sqp_node_unsupported(struct tx *x, const Node *n, int fallback)
{
	int pos = sqp_node_pos(n);

	return sqp_unsupported(x, pos >= 0 ? pos : fallback, node_name(n));
}

/* Copy a name PostgreSQL already folded (and truncated to 63 bytes). */
int sqp_take(struct tx *x, const char *s, char out[SQL_NAME_MAX + 1], int pos)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n == 0 || n > SQL_NAME_MAX)
		return sqp_fail(x, pos, "invalid name");
	memcpy(out, s, n + 1);
	return 0;
}

const char *sqp_str_of(const Node *n)
{
	if (n != NULL && n->node_case == PG_QUERY__NODE__NODE_STRING && n->string != NULL)
		return n->string->sval;
	return NULL;
}

/* A table: a plain name (no schema, no alias). */
int sqp_table_name(struct tx *x, const PgQuery__RangeVar *rv, char out[SQL_NAME_MAX + 1],
		      int *pos)
{
	if (rv->schemaname != NULL && rv->schemaname[0] != '\0')
		return sqp_unsupported(x, rv->location, "schema-qualified table names");
	if (rv->relpersistence != NULL && rv->relpersistence[0] == 't')
		return sqp_unsupported(x, rv->location, "temporary tables");
	if (rv->relpersistence != NULL && rv->relpersistence[0] == 'u')
		return sqp_unsupported(x, rv->location, "unlogged tables");
	if (!rv->inh)
		return sqp_unsupported(x, rv->location, "ONLY");
	if (pos != NULL)
		*pos = rv->location;
	return sqp_take(x, rv->relname, out, rv->location);
}

/* Offset of the first mention of identifier name at or after from (an
 * unquoted word folded to lower case, or a "quoted" one), skipping string
 * literals and comments; fallback when there is none.  For the nodes
 * PostgreSQL's tree gives no location (index columns, key columns). */
int sqp_find_name(const struct tx *x, size_t from, const char *name, int fallback)
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

static int statement(struct tx *x, const PgQuery__RawStmt *raw, struct sql_stmt *st)
{
	const Node *n = raw->stmt;
	int pos = (int)sql_skip_blank(x->sql, x->len, (size_t)raw->stmt_location);

	switch (n->node_case) {
	case PG_QUERY__NODE__NODE_SELECT_STMT:
		return sqp_select_stmt(x, n->select_stmt, pos, st);
	case PG_QUERY__NODE__NODE_INSERT_STMT:
		return sqp_insert_stmt(x, n->insert_stmt, pos, st);
	case PG_QUERY__NODE__NODE_UPDATE_STMT:
		return sqp_update_stmt(x, n->update_stmt, pos, st);
	case PG_QUERY__NODE__NODE_DELETE_STMT:
		return sqp_delete_stmt(x, n->delete_stmt, st);
	case PG_QUERY__NODE__NODE_CREATE_STMT:
		return sqp_create_table(x, n->create_stmt, st);
	case PG_QUERY__NODE__NODE_INDEX_STMT:
		return sqp_create_index(x, n->index_stmt, st);
	case PG_QUERY__NODE__NODE_REINDEX_STMT:
		return sqp_reindex(x, n->reindex_stmt, pos, st);
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
		return sqp_drop(x, n->drop_stmt, (int)b, st);
	}
	default:
		return sqp_unsupported(x, pos, node_name(n));
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

/* ---- SQLite's empty IN list ---------------------------------------------------
 *
 * "x IN ()" and "x NOT IN ()" are not SQL and PostgreSQL's grammar refuses
 * them, but SQLite accepts them and its users write them: x IN () is false
 * and x NOT IN () true for every x, NULL included.  LWC accepts them as an
 * extension with that meaning.  When PostgreSQL's parser reports a syntax
 * error at a ")" that directly follows "IN (" (comments aside), the text is
 * scanned with PostgreSQL's own scanner (pg_query_scan, so nothing inside a
 * string literal, quoted name or comment is touched), the empty subquery
 * EMPTY_SUBQUERY is put between the parentheses of every such "IN ( )"
 * and the text is parsed again: x IN (SELECT NULL WHERE false) is false for
 * every x, NULL included, in PostgreSQL's semantics too.  The locations in
 * the new tree are mapped back to the text as written (those inside an
 * insertion to its ")"), so every later error points into the user's text.
 * When the second parse fails as well, the first error is the one
 * reported. */
#define EMPTY_SUBQUERY "SELECT NULL WHERE false"
#define EMPTY_SUBQUERY_LEN (sizeof(EMPTY_SUBQUERY) - 1)

struct inmap {
	const int *at;            /* offsets in the text as written of the    */
	size_t n;                 /* ")" the insertions precede, ascending    */
};

/* The offset in the text as written of offset p of the rewritten text. */
static int32_t inmap_pos(const struct inmap *m, int32_t p)
{
	size_t k;

	if (p < 0)
		return p;
	for (k = 0; k < m->n; k++) {
		int64_t start = (int64_t)m->at[k] + (int64_t)(k * EMPTY_SUBQUERY_LEN);

		if (p < start)
			return (int32_t)(p - (int64_t)(k * EMPTY_SUBQUERY_LEN));
		if (p < start + (int64_t)EMPTY_SUBQUERY_LEN)
			return m->at[k];
	}
	return (int32_t)(p - (int64_t)(m->n * EMPTY_SUBQUERY_LEN));
}

/* Every "location" of message m and the messages under it, through
 * protobuf-c's descriptors (so no node type is left out). */
static void inmap_message(ProtobufCMessage *m, const struct inmap *map)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	unsigned i;

	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		char *field = (char *)m + f->offset;

		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0 &&
		    *(const uint32_t *)((const char *)m + f->quantifier_offset) != f->id)
			continue;
		if (f->type == PROTOBUF_C_TYPE_INT32 && f->label != PROTOBUF_C_LABEL_REPEATED &&
		    strcmp(f->name, "location") == 0) {
			*(int32_t *)field = inmap_pos(map, *(int32_t *)field);
		} else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
			if (f->label == PROTOBUF_C_LABEL_REPEATED) {
				size_t k, n = *(const size_t *)((const char *)m + f->quantifier_offset);
				ProtobufCMessage **v = *(ProtobufCMessage ***)field;

				for (k = 0; k < n; k++)
					if (v[k] != NULL)
						inmap_message(v[k], map);
			} else if (*(ProtobufCMessage **)field != NULL) {
				inmap_message(*(ProtobufCMessage **)field, map);
			}
		}
	}
}

static void inmap_tree(PgQuery__ParseResult *tree, const struct inmap *map)
{
	size_t i;

	for (i = 0; i < tree->n_stmts; i++) {
		PgQuery__RawStmt *raw = tree->stmts[i];
		int32_t loc = raw->stmt_location;

		if (raw->stmt_len > 0)
			raw->stmt_len = inmap_pos(map, loc + raw->stmt_len) - inmap_pos(map, loc);
		raw->stmt_location = inmap_pos(map, loc);
		if (raw->stmt != NULL)
			inmap_message(&raw->stmt->base, map);
	}
}

static int is_comment_token(PgQuery__Token t)
{
	return t == PG_QUERY__TOKEN__SQL_COMMENT || t == PG_QUERY__TOKEN__C_COMMENT;
}

/* When the syntax error at byte errat is the ")" of an "IN ( )", text with
 * EMPTY_SUBQUERY in every "IN ( )" (malloc'ed, in *out) and in map the
 * offsets of their ")": 1.  0 when the error is something else, -1 when out
 * of memory. */
static int empty_in_rewrite(const char *text, size_t len, int errat, char **out,
			    struct inmap *map)
{
	PgQueryScanResult scan = pg_query_scan(text);
	PgQuery__ScanResult *sr = NULL;
	const PgQuery__ScanToken **tok = NULL;
	int *at = NULL;
	size_t i, n = 0, nat = 0, o = 0, from = 0;
	int rc = 0, hit = 0;
	char *s;

	*out = NULL;
	if (scan.error != NULL)
		goto done;
	sr = pg_query__scan_result__unpack(NULL, scan.pbuf.len, (const uint8_t *)scan.pbuf.data);
	if (sr == NULL) {
		rc = -1;
		goto done;
	}
	if ((tok = malloc((sr->n_tokens + 1) * sizeof(*tok))) == NULL ||
	    (at = malloc((sr->n_tokens + 1) * sizeof(*at))) == NULL) {
		rc = -1;
		goto done;
	}
	for (i = 0; i < sr->n_tokens; i++)
		if (!is_comment_token(sr->tokens[i]->token))
			tok[n++] = sr->tokens[i];
	for (i = 0; i + 2 < n; i++) {
		if (tok[i]->token == PG_QUERY__TOKEN__IN_P &&
		    tok[i + 1]->token == PG_QUERY__TOKEN__ASCII_40 &&
		    tok[i + 2]->token == PG_QUERY__TOKEN__ASCII_41 &&
		    tok[i + 2]->start >= 0 && (size_t)tok[i + 2]->start < len) {
			at[nat++] = tok[i + 2]->start;
			hit |= tok[i + 2]->start == errat;
		}
	}
	if (!hit || len + nat * EMPTY_SUBQUERY_LEN >= INT_MAX)
		goto done;                      /* the first error stands */
	if ((s = malloc(len + nat * EMPTY_SUBQUERY_LEN + 1)) == NULL) {
		rc = -1;
		goto done;
	}
	for (i = 0; i < nat; i++) {
		memcpy(s + o, text + from, (size_t)at[i] - from);
		o += (size_t)at[i] - from;
		memcpy(s + o, EMPTY_SUBQUERY, EMPTY_SUBQUERY_LEN);
		o += EMPTY_SUBQUERY_LEN;
		from = (size_t)at[i];
	}
	memcpy(s + o, text + from, len - from);
	o += len - from;
	s[o] = '\0';
	*out = s;
	map->at = at;
	map->n = nat;
	at = NULL;
	rc = 1;
done:
	free(at);
	free(tok);
	if (sr != NULL)
		pg_query__scan_result__free_unpacked(sr, NULL);
	pg_query_free_scan_result(scan);
	return rc;
}

struct pg_job {
	const char *text;
	const struct inmap *map;  /* text is a rewrite: map locations back */
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
	if (j->tree != NULL && j->map != NULL)
		inmap_tree(j->tree, j->map);
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

/* After the syntax error of job: when it is the ")" of "IN ( )", parse the
 * text with empty subqueries there and, when that succeeds, let job hold
 * that parse instead (its tree's locations in x->sql).  0 (job unchanged
 * or replaced), -1 when out of memory. */
static int retry_empty_in(const struct tx *x, struct pg_job *job)
{
	struct pg_job again;
	struct inmap map = { NULL, 0 };
	const char *m = job->res.error->message;
	char *text2 = NULL;
	size_t depth;
	int rc;

	if (m == NULL || strncmp(m, "syntax error at or near", 23) != 0)
		return 0;
	rc = empty_in_rewrite(x->sql, x->len, char_to_byte(x->sql, x->len, job->res.error->cursorpos),
			      &text2, &map);
	if (rc <= 0)
		return rc;
	depth = depth_bound(text2, strlen(text2));
	rc = 0;
	if (depth == SIZE_MAX) {
		rc = -1;
	} else if (depth <= PARSE_MAX_DEPTH) {
		again.text = text2;
		again.map = &map;
		if (pg_parse(&again, depth) != 0) {
			rc = -1;
		} else if (again.res.error != NULL || again.tree == NULL) {
			/* the first error stands */
			if (again.tree != NULL)
				pg_query__parse_result__free_unpacked(again.tree, NULL);
			pg_query_free_protobuf_parse_result(again.res);
		} else {
			pg_query_free_protobuf_parse_result(job->res);
			again.text = x->sql;
			again.map = NULL;
			*job = again;
		}
	}
	free(text2);
	free((void *)map.at);
	return rc;
}

#define PARSE_AGAIN 1000   /* parse_text: the fast path declined, parse it all */

/* fast: an INSERT of plain literal rows may be parsed by PostgreSQL up to
 * the end of its first row, the rest in sql_parse_values.c; PARSE_AGAIN when
 * that part declined after all (the full parse then says what is wrong). */
static int parse_text(const char *sql, size_t len, int fast, struct sql_stmt **out,
		      char *err, size_t errlen, int *errpos)
{
	struct pg_job job;
	PgQuery__ParseResult *tree = NULL;
	size_t depth;
	int job_started = 0;
	struct sql_stmt *st = NULL;
	struct tx x;
	char *text;
	size_t bad, head = 0, nrows = 0;

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

	job.map = NULL;
	if (fast)
		head = sqp_values_head(text, len, &nrows);
	if (head > 0)
		text[head] = '\0';     /* PostgreSQL parses up to the first row's end */
	depth = depth_bound(text, head > 0 ? head : len);
	if (depth == SIZE_MAX) {
		sqp_fail_nomem(&x);
	} else if (depth > PARSE_MAX_DEPTH) {
		sqp_fail(&x, 0, "statement too complex: more than %d operators, words or nested "
		     "parentheses", PARSE_MAX_DEPTH);
	} else if ((job.text = text, pg_parse(&job, depth)) != 0) {
		sqp_fail_nomem(&x);
	} else if ((job_started = 1, job.res.error != NULL) && head == 0 &&
		   retry_empty_in(&x, &job) < 0) {
		sqp_fail_nomem(&x);
	} else if (job.res.error != NULL) {
		const char *m = job.res.error->message != NULL ? job.res.error->message : "syntax error";

		const char *near = strstr(m, " at or near \"");
		size_t ml = strlen(m);

		if (near != NULL && ml > 0 && m[ml - 1] == '"') {
			/* quote at most a bounded prefix of the input, as elsewhere */
			const char *tok = near + strlen(" at or near \"");
			char q[160];

			sql_quote_text(q, sizeof(q), tok, (size_t)(m + ml - 1 - tok), 40);
			sqp_fail(&x, char_to_byte(text, len, job.res.error->cursorpos),
			     "%.*s at or near \"%s\"", (int)(near - m), m, q);
		} else {
			sqp_fail(&x, char_to_byte(text, len, job.res.error->cursorpos), "%s", m);
		}
		if (strstr(m, "out of memory") != NULL)
			x.rc = LWC_ERR_NOMEM;
	} else if ((tree = job.tree) == NULL) {
		sqp_fail_nomem(&x);
	}
	if (head > 0) {
		text[head] = sql[head];
		if (x.rc != LWC_OK)
			x.rc = PARSE_AGAIN;
	}
	if (x.rc != LWC_OK) {
		/* reported */
	} else if (tree->n_stmts == 0) {
		sqp_fail(&x, 0, "empty statement");
	} else if (tree->n_stmts > 1) {
		size_t at = sql_skip_blank(text, len, (size_t)tree->stmts[1]->stmt_location);
		size_t e = at;
		char q[160];

		while (e < len && !sql_is_space((unsigned char)text[e]) && text[e] != ';')
			e++;
		sql_quote_text(q, sizeof(q), text + at, e - at, 40);
		sqp_fail(&x, (int)at, "only one statement is allowed: more text at or near \"%s\"", q);
	} else {
		if ((x.ar = sql_arena_new()) == NULL) {
			sqp_fail_nomem(&x);
		} else if ((st = sqp_talloc(&x, sizeof(*st))) != NULL) {
			st->arena = x.ar;
			st->limit = -1;
			statement(&x, tree->stmts[0], st);
			if (head > 0 && x.rc == LWC_OK) {
				if (st->kind != SQL_INSERT || st->nrows != 1 || st->src[0] != '\0')
					x.rc = PARSE_AGAIN;
				else
					sqp_values_rows(&x, st, head, nrows);
			} else if (head > 0) {
				x.rc = PARSE_AGAIN;
			}
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

int sql_parse(const char *sql, size_t len, struct sql_stmt **out,
	      char *err, size_t errlen, int *errpos)
{
	int rc = parse_text(sql, len, 1, out, err, errlen, errpos);

	if (rc == PARSE_AGAIN)
		rc = parse_text(sql, len, 0, out, err, errlen, errpos);
	return rc;
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
