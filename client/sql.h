/*
 * sql.h - the SQL of LWC (DESIGN section 10): PostgreSQL's own grammar
 * (libpg_query) into the statement tree below, SQL's three-valued
 * evaluation of a WHERE expression on a decrypted row, and the translation
 * of a WHERE expression into the proxy's index predicate.
 *
 * Syntax and syntax errors are PostgreSQL 15's, message and position; a
 * statement PostgreSQL parses but LWC does not run is refused with
 * "LWC does not support <construct>".  Names are folded and truncated as
 * PostgreSQL does (63 bytes).
 *
 * The parser allocates from an arena owned by the statement: sql_free
 * releases everything at once.  Errors carry a message and a byte offset.
 *
 * A value may be an arithmetic expression (+ - * / %, unary -,
 * parentheses), as in the conformance files' "UPDATE t1 SET x=x+2".  The
 * parser folds every part that names no column into one literal, so "-3",
 * "3+1" or "(NULL)" arrive as SQL_E_LIT; INSERT rows are always literals;
 * only an expression that reads a column keeps SQL_E_NEG / SQL_E_ARITH
 * nodes (sql_eval_value).  The parts of the module: sql_int.h.
 */
#ifndef LWC_SQL_H
#define LWC_SQL_H

#include <stddef.h>
#include <stdint.h>

#include "lwc_err.h"

#define SQL_NAME_MAX  63

/* PostgreSQL's parse tree is walked at most SQL_MAX_NESTING levels deep
 * ("expression nested too deeply"; parentheses add no level).  Expression
 * trees are at most SQL_MAX_HEIGHT nodes high (chains of AND / OR are built
 * balanced, so a long OR list stays shallow): tree walks may recurse.  A
 * statement with more than SQL_MAX_TOKENS operators and words on one path
 * of parentheses is refused before it is parsed ("statement too complex"). */
#define SQL_MAX_NESTING  1000
#define SQL_MAX_HEIGHT   1000
#define SQL_MAX_TOKENS   20000

/* A buffer of this size holds the text of any INT or FLOAT (sql_coerce). */
#define SQL_NUM_TEXT_MAX 32

enum sql_vtype { SQL_NULL = 0, SQL_INT = 1, SQL_FLOAT = 2, SQL_TEXT = 3 };

struct sql_value {
	enum sql_vtype type;
	int64_t i;
	double f;
	const char *s;            /* TEXT: bytes (NUL-terminated), len below  */
	size_t len;
	int i4;                   /* SQL_INT: PostgreSQL's integer (int4), whose
	                             arithmetic is checked against 32 bits      */
	int boolean;              /* SQL_INT 1 / 0: a condition's value (TRUE /
	                             FALSE), shown as t / f                     */
};

/* Column types as declared. */
enum sql_ctype { SQL_CT_INT = 1, SQL_CT_BIGINT, SQL_CT_FLOAT, SQL_CT_TEXT };

struct sql_coldef {
	char name[SQL_NAME_MAX + 1];
	enum sql_ctype type;
	uint32_t max_len;         /* TEXT(n), VARCHAR(n): n; 0: unbounded     */
	int primary_key;
	int not_null;             /* NOT NULL (PRIMARY KEY implies it)        */
	int unique;               /* UNIQUE column constraint                  */
	int pos;                  /* offset in the SQL                         */
};

enum sql_ekind {
	SQL_E_LIT,                /* lit                                       */
	SQL_E_COL,                /* col (name, pos)                           */
	SQL_E_CMP,                /* a op b                                    */
	SQL_E_IN,                 /* a [NOT] IN (list...)                      */
	SQL_E_BETWEEN,            /* a [NOT] BETWEEN b AND c                   */
	SQL_E_ISNULL,             /* a IS [NOT] NULL                           */
	SQL_E_AND,
	SQL_E_OR,
	SQL_E_NOT,
	SQL_E_NEG,                /* -a (on a column or expression)            */
	SQL_E_ARITH,              /* a arith b (+ - * / %), reads a column     */
	/* general SELECTs (struct sql_query) */
	SQL_E_LIKE,               /* a [NOT] [I]LIKE b: a condition            */
	SQL_E_FUNC,               /* fname(list...): abs, lower, ||, ...       */
	SQL_E_AGG,                /* fname(a | *) [DISTINCT]: its value in lit */
	SQL_E_CASE,               /* CASE [a] WHEN list[2i] THEN list[2i+1] ... ELSE b */
	SQL_E_CAST,               /* CAST(a AS cast_type)                      */
	/* subqueries: each run as a statement of its own before the one that
	 * holds it, which the library then rewrites with the result */
	SQL_E_EXISTS,             /* EXISTS (sub): a condition                 */
	SQL_E_INSUB,              /* a [NOT] IN (sub): a condition             */
	SQL_E_SCALARSUB,          /* (sub): a value                            */
	/* window functions (sql_window.c): fname(a [, c offset [, b default]])
	 * OVER (PARTITION BY list[0..npart) ORDER BY list[npart..nlist)); its
	 * value for the row being emitted in lit, as an aggregate's */
	SQL_E_WINDOW
};

enum sql_cmp { SQL_EQ, SQL_NE, SQL_LT, SQL_LE, SQL_GT, SQL_GE };
enum sql_arith { SQL_ADD, SQL_SUB, SQL_MUL, SQL_DIV, SQL_MOD };

/* Boolean kinds (CMP, IN, BETWEEN, ISNULL, AND, OR, NOT) only ever have
 * boolean children in AND / OR / NOT and value children elsewhere; value
 * kinds (LIT, COL, NEG, ARITH) never stand where a condition is expected. */
struct sql_expr {
	enum sql_ekind kind;
	int pos;                  /* offset in the SQL: an operator's own offset
	                             (=, IN, AND, +, ...), as PostgreSQL reports */
	int negated;              /* NOT IN, NOT BETWEEN, IS NOT NULL          */
	enum sql_cmp op;
	enum sql_arith arith;     /* SQL_E_ARITH                               */
	int height;               /* 1 + the highest child's (<= SQL_MAX_HEIGHT) */
	struct sql_value lit;     /* SQL_E_LIT                                 */
	char col[SQL_NAME_MAX + 1];  /* SQL_E_COL                              */
	char qual[SQL_NAME_MAX + 1]; /* SQL_E_COL of a join or of an outer
	                                statement: table or alias ("")      */
	int col_index;            /* resolved by sql_bind: -1 before           */
	struct sql_expr *a, *b, *c;
	struct sql_expr **list;   /* SQL_E_IN, FUNC, CASE                      */
	size_t nlist;
	char fname[16];           /* SQL_E_FUNC, SQL_E_AGG (lower case)        */
	int distinct;             /* SQL_E_AGG: DISTINCT                       */
	int icase;                /* SQL_E_LIKE: ILIKE                         */
	enum sql_ctype cast_type; /* SQL_E_CAST                                */
	struct sql_stmt *sub;     /* SQL_E_EXISTS, INSUB, SCALARSUB: a SELECT  */
	enum sql_vtype rtype;     /* CASE, COALESCE ...: FLOAT when a branch is
	                             (integers then convert), else SQL_NULL      */
	size_t npart;             /* SQL_E_WINDOW: PARTITION BY expressions     */
	unsigned char *wdir;      /* SQL_E_WINDOW: per ORDER BY key, bit 0 DESC,
	                             bit 1 NULLS FIRST                           */
};

/* A SELECT beyond a plain list of columns, run in the client over the
 * rows the WHERE fetched (sql_query.c): expressions, aggregates, GROUP BY,
 * HAVING, DISTINCT, ORDER BY expressions and ordinals, LIMIT / OFFSET. */
struct sql_target {
	struct sql_expr *e;       /* NULL: * (expanded by sql_bind)            */
	char star_of[SQL_NAME_MAX + 1];  /* e NULL: "t.*" ("" for all)         */
	char name[SQL_NAME_MAX + 1];  /* output column name                    */
	int pos;
};

struct sql_sortkey {
	struct sql_expr *e;
	int target;               /* >= 0: sort by that output column          */
	int desc;
	int nulls_first;
};

/* A table of a general SELECT's FROM, in join order: the first, then each
 * joined to everything before it (comma and CROSS JOIN: join NONE). */
enum sql_join { SQL_JOIN_NONE = 0, SQL_JOIN_INNER, SQL_JOIN_LEFT };

struct sql_from {
	char table[SQL_NAME_MAX + 1];
	char alias[SQL_NAME_MAX + 1];  /* "" when none: the table's name       */
	int pos;
	enum sql_join join;
	struct sql_expr *on;      /* INNER / LEFT: ON (USING as equalities)    */
	char (*using)[SQL_NAME_MAX + 1];  /* USING columns: merged into the    */
	size_t nusing;            /* left side's (not in *, not ambiguous)     */
	size_t offset;            /* after binding: its first column in a row  */
	size_t ncols;
	/* a subquery in FROM, or a reference to a WITH query: its SELECT, run
	 * before the statement (table is then the subquery's alias or the
	 * WITH query's name); colnames rename its first ncolnames columns */
	struct sql_stmt *sub;
	char (*colnames)[SQL_NAME_MAX + 1];
	size_t ncolnames;
};

struct sql_query {
	struct sql_from *froms;   /* nfroms >= 2: a join (st->table: froms[0]) */
	size_t nfroms;
	struct sql_target *targets;
	size_t ntargets;
	int from;                 /* 0: SELECT without FROM                    */
	int distinct;
	struct sql_expr **group;
	size_t ngroup;
	struct sql_expr *having;
	struct sql_sortkey *order;
	size_t norder;
	int64_t offset;           /* 0: none                                   */
	struct sql_expr **aggs;   /* every SQL_E_AGG of targets, HAVING, ORDER */
	size_t naggs;
	struct sql_expr **wins;   /* every SQL_E_WINDOW of targets and ORDER BY */
	size_t nwins;
	int grouped;              /* aggregates or GROUP BY                    */
	/* a correlated subquery (it reads columns of the statement around it):
	 * its rows are its table's columns, then the outer row's
	 * (corr_base + k for the outer column k); the library fetches its
	 * table once (corr_rows) and runs it per outer row. */
	int correlated;
	size_t corr_base, corr_outer;
	/* UNION / INTERSECT / EXCEPT [ALL] of the SELECTs larg and rarg (no
	 * targets of its own; ORDER BY ordinals, or names in order[i].e) */
	enum sql_setop { SQL_SETOP_NONE = 0, SQL_UNION, SQL_INTERSECT, SQL_EXCEPT } setop;
	int setall;
	struct sql_stmt *larg, *rarg;
	struct sql_value *const *corr_rows;
	size_t ncorr_rows;
};

enum sql_skind {
	SQL_CREATE_TABLE = 1,
	SQL_DROP_TABLE,
	SQL_CREATE_INDEX,
	SQL_INSERT,               /* VALUES rows, or SELECT * FROM src         */
	SQL_SELECT,
	SQL_UPDATE,
	SQL_DELETE,
	SQL_REINDEX               /* REINDEX TABLE t: rebuild its range indexes */
};

struct sql_order {
	char col[SQL_NAME_MAX + 1];
	int col_index;
	int desc;
	int pos;
};

struct sql_set {
	char col[SQL_NAME_MAX + 1];
	int col_index;
	struct sql_expr *value;   /* a literal (or -literal), possibly NULL   */
	int pos;
};

struct sql_stmt {
	enum sql_skind kind;
	char table[SQL_NAME_MAX + 1];
	int table_pos;
	int if_exists, if_not_exists;

	/* CREATE TABLE */
	struct sql_coldef *cols;
	size_t ncols;

	/* CREATE [UNIQUE] INDEX name ON table (col [ASC|DESC], ...) */
	char index[SQL_NAME_MAX + 1];   /* "" when the name was left out      */
	int unique;
	char (*index_cols)[SQL_NAME_MAX + 1];
	size_t nindex_cols;
	int *index_col_pos;       /* offsets of index_cols                     */
	int *index_col_index;     /* resolved by sql_bind: -1 before           */

	/* INSERT INTO table [(cols)] VALUES (...), ... | SELECT * FROM src */
	char (*insert_cols)[SQL_NAME_MAX + 1];
	size_t ninsert_cols;      /* 0: all columns in order                   */
	int *insert_col_pos;      /* offsets of insert_cols                    */
	struct sql_expr ***rows;  /* rows[i][j]: literal expressions           */
	size_t nrows, rowlen;     /* every row has rowlen values (>= 1)        */
	char src[SQL_NAME_MAX + 1];  /* INSERT ... SELECT * FROM src ("" none) */
	int src_pos;
	/* After sql_bind: value j of a row (or of a source row) goes to column
	 * insert_map[j], j < ninsert_map; every other column gets NULL (as in
	 * PostgreSQL, VALUES without a column list may be shorter than the
	 * table).  For INSERT ... SELECT the source must have ninsert_map
	 * columns. */
	int *insert_map;
	size_t ninsert_map;

	/* SELECT */
	int star;                 /* SELECT *                                  */
	int count_star;           /* SELECT COUNT(*)                           */
	char (*proj)[SQL_NAME_MAX + 1];
	int *proj_index;          /* resolved by sql_bind: -1 before           */
	int *proj_pos;            /* offsets of proj                           */
	size_t nproj;
	struct sql_order *order;
	size_t norder;
	int64_t limit;            /* -1: none                                  */

	/* UPDATE: after sql_bind at most one per column (the rightmost of
	 * "SET x=3, x=4" wins, as in SQLite); a value reading a column
	 * ("x = x + 2") is computed from the old row with sql_eval_value. */
	struct sql_set *sets;
	size_t nsets;

	/* a general SELECT (NULL: star, proj or count_star above) */
	struct sql_query *q;

	/* SELECT, UPDATE, DELETE */
	struct sql_expr *where;   /* NULL: all rows                            */

	void *arena;              /* owner of everything above                 */
	int shared_arena;         /* a subquery: the arena is its statement's  */
	/* what the library attached (a correlated subquery's fetched rows),
	 * released by sql_free */
	void *attach;
	void (*attach_free)(void *);
};

/* Parse one statement of sql[0..len) (a trailing ';' and whitespace are
 * fine; a second statement is an error).  On failure *out is NULL, err holds
 * the message and *errpos the byte offset.  Returns LWC_OK, LWC_ERR_ARG for
 * bad SQL (also "empty statement": see sql_is_blank) or LWC_ERR_NOMEM
 * (*errpos -1).  sql need not be NUL-terminated; len < INT_MAX.  A CREATE
 * TABLE is fully checked here (duplicate columns, one primary key). */
int sql_parse(const char *sql, size_t len, struct sql_stmt **out,
	      char *err, size_t errlen, int *errpos) LWC_WUR;
void sql_free(struct sql_stmt *st);

/* Split a script into statements: the offset just past the next ';' that is
 * not inside a string, quoted identifier or comment, or 0 when the text holds
 * no complete statement yet (for the shell's continuation prompt). */
size_t sql_next_statement(const char *text, size_t len);

/* 1 when text holds nothing but whitespace, comments and ';' (a script's
 * empty statement, which sql_parse refuses), else 0. */
int sql_is_blank(const char *text, size_t len);

/* ---- rows and evaluation --------------------------------------------------- */

/* SQL three-valued logic. */
enum sql_tv { SQL_FALSE = 0, SQL_TRUE = 1, SQL_UNKNOWN = 2 };

/* A table schema as the client knows it. */
struct sql_schema {
	char name[SQL_NAME_MAX + 1];
	size_t ncols;
	struct sql_coldef *cols;
	int pk;                   /* column index or -1                        */
};

/* Resolve column names of the statement against the schema (where, order,
 * projection, sets, insert columns, index columns); errors name the
 * position.  Checks INSERT's column list and row length, and (again) a
 * CREATE TABLE, for which sc may be NULL, as it may for DROP TABLE.
 * Returns LWC_OK, LWC_ERR_SCHEMA (unknown or repeated column, row length),
 * LWC_ERR_ARG (no schema given) or LWC_ERR_NOMEM.  May be called again. */
int sql_bind(struct sql_stmt *st, const struct sql_schema *sc,
	     char *err, size_t errlen, int *errpos) LWC_WUR;

/* Bind a general SELECT of one table that is a subquery of a statement of
 * table outer (named outer_name, or its alias): a column its own table
 * lacks, or one qualified with outer_name, reads the outer row, and
 * st->q->correlated is then set.  Errors as sql_bind. */
int sql_bind_outer(struct sql_stmt *st, const struct sql_schema *sc,
		   const struct sql_schema *outer, const char *outer_name,
		   char *err, size_t errlen, int *errpos) LWC_WUR;

/* Bind a general SELECT over a join: scs[i] is the schema of
 * st->q->froms[i]; a row is their columns one after the other.  Errors as
 * sql_bind ("column reference \"x\" is ambiguous"). */
int sql_bind_join(struct sql_stmt *st, const struct sql_schema *const *scs,
		  char *err, size_t errlen, int *errpos) LWC_WUR;

/* Joins (sql_join.c).  The part of the WHERE and of the ON conditions
 * that reads only table k of a bound join, as a condition on that table's
 * own rows (allocated in the statement), or NULL: its fetch's index
 * predicate.  LWC_OK or LWC_ERR_NOMEM. */
int sql_join_pushdown(const struct sql_stmt *st, size_t k, struct sql_expr **out) LWC_WUR;
/* Join the fetched rows: tabs[k][0..ntab[k]) the rows of q->froms[k].
 * *out: *nout joined rows (malloc'ed; values point into the input rows),
 * the WHERE already applied; free with sql_join_free. */
#define SQL_JOIN_MAX_ROWS 5000000
int sql_join_run(const struct sql_stmt *st, struct sql_value *const *const *tabs,
		 const size_t *ntab, struct sql_value ***out, size_t *nout,
		 char *err, size_t errlen) LWC_WUR;
void sql_join_free(struct sql_value **rows, size_t n);
/* Whether table k of a bound join is linked by an equality of columns
 * (a WHERE conjunct, or an ON conjunct that may restrict k) to a table
 * already fetched (fetched[j] != 0), of the same type: then *kcol and
 * *jcol are the two columns (indexes in the joined row), and only rows of
 * k whose kcol is among the fetched values of jcol can join. */
int sql_join_link(const struct sql_stmt *st, size_t k, const int *fetched,
		  const struct sql_schema *const *scs, int *kcol, int *jcol);

/* Evaluate a bound WHERE expression on a row (values[i] for column i).
 * Comparing TEXT with a number, or an arithmetic error (division by zero,
 * overflow), makes that comparison UNKNOWN. */
enum sql_tv sql_eval(const struct sql_expr *e, const struct sql_value *values);

/* The same, but such an error fails the evaluation as PostgreSQL fails the
 * statement: LWC_ERR_ARG and a message ("division by zero", "operator does
 * not exist: text = integer"); *out is then SQL_UNKNOWN. */
int sql_eval_checked(const struct sql_expr *e, const struct sql_value *values,
		     enum sql_tv *out, char *err, size_t errlen) LWC_WUR;

/* Compute a bound value expression (LIT, COL, NEG, ARITH; a SET value) on a
 * row; values may be NULL when it reads no column.  INT arithmetic is
 * 64-bit and checked ("bigint out of range", "division by zero"); INT with
 * FLOAT gives FLOAT; NULL in, NULL out.  A TEXT result points into the
 * expression or the row.  LWC_OK or LWC_ERR_ARG with a message. */
int sql_eval_value(const struct sql_expr *e, const struct sql_value *values,
		   struct sql_value *out, char *err, size_t errlen) LWC_WUR;

/* Compare two non-NULL values: INT and FLOAT numerically, TEXT bytewise
 * (memcmp, then length); INT/FLOAT against TEXT is an error (returns
 * SQL_CMP_ERR), and so is a NULL.  Otherwise -1, 0 or 1.  INT against FLOAT
 * is exact (2^53 + 1 > 9007199254740992.0); a FLOAT NaN equals NaN and is
 * above every other number, as in PostgreSQL. */
#define SQL_CMP_ERR 2
int sql_value_cmp(const struct sql_value *a, const struct sql_value *b);

/* Convert a literal to a column's type as PostgreSQL does for an INSERT or
 * UPDATE: INT from FLOAT rounds half away from zero; range checks (32-bit
 * INT, 64-bit BIGINT); FLOAT from INT; TEXT must fit max_len; TEXT into a
 * number is parsed; NULL into a NOT NULL column is an error.
 * A number into a TEXT column becomes its text in buf (SQL_NUM_TEXT_MAX
 * bytes always suffice); a TEXT result may also point at in->s.  Messages
 * are PostgreSQL's ("integer out of range", "invalid input syntax for type
 * integer: \"abc\"", "value too long for type character varying(5)",
 * "null value in column \"x\" violates not-null constraint").  Returns
 * LWC_OK or LWC_ERR_ARG. */
int sql_coerce(const struct sql_coldef *col, const struct sql_value *in, struct sql_value *out,
	       char *buf, size_t buflen, char *err, size_t errlen) LWC_WUR;

/* ---- general SELECTs (sql_query.c) ------------------------------------------ */

/* An output row of a general SELECT: values (TEXT pointing into text). */
struct sql_outrow {
	struct sql_value *v;
	char *text;
};

/* Run a bound general SELECT over input rows (each st->... table row;
 * for a SELECT without FROM one row of no columns): grouping, aggregates,
 * HAVING, the select list, DISTINCT, ORDER BY, OFFSET and LIMIT.  On
 * success *out holds *nout rows of q->ntargets values, each row and its
 * text malloc'ed (free with sql_outrows_free).  LWC_OK, LWC_ERR_ARG (an
 * evaluation error, message in err) or LWC_ERR_NOMEM. */
int sql_query_run(const struct sql_stmt *st, struct sql_value *const *rows, size_t nrows,
		  struct sql_outrow **out, size_t *nout, char *err, size_t errlen) LWC_WUR;
void sql_outrows_free(struct sql_outrow *rows, size_t n);
/* Combine the rows of a set operation's two SELECTs (l, r: ncols values
 * each, taken over: freed here or moved to *out), then its ORDER BY
 * (targets resolved), OFFSET and LIMIT.  Errors as sql_query_run. */
int sql_setop_run(const struct sql_stmt *st, struct sql_outrow *l, size_t nl,
		  struct sql_outrow *r, size_t nr, size_t ncols,
		  struct sql_outrow **out, size_t *nout, char *err, size_t errlen) LWC_WUR;
/* A row of its own (values and text copied). */
int sql_outrow_make(const struct sql_value *v, size_t n, struct sql_outrow *out) LWC_WUR;

/* After binding: the common type of CASE / COALESCE / NULLIF / GREATEST /
 * LEAST branches (rtype), from the schema a row follows. */
void sql_query_settypes(struct sql_stmt *st, const struct sql_schema *sc);
/* The type of output column i when known from the expressions (SQL_NULL
 * when it is not). */
enum sql_vtype sql_query_coltype(const struct sql_stmt *st, size_t i,
				 const struct sql_schema *sc);

#endif
