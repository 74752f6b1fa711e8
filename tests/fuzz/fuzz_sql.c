/*
 * fuzz_sql.c - libFuzzer target: the client's SQL (client/sql_*.c): PostgreSQL's
 * grammar through libpg_query into LWC's statements, binding, evaluation and
 * the general SELECT executor.
 *
 * Each input is SQL text exactly as given (not NUL-terminated, so ASan sees
 * any read past the end).  It is split with sql_next_statement and every
 * piece parsed, then parsed whole; a statement that parses is bound to a
 * fixed table, its WHERE evaluated on fixed rows (NULLs, extremes, NaN),
 * its INSERT values and UPDATE values converted to their columns.
 *
 * Oracles beyond the sanitizers: splitting ends each piece at a ';' and
 * never passes the end; blank text is exactly what sql_parse calls an empty
 * statement; errors are terminated, non-empty, with an in-range position;
 * a parsed tree keeps the documented invariants (heights, value / condition
 * placement, literal INSERT rows, one value per IN item); binding is
 * repeatable; sql_eval agrees with sql_eval_checked and with NOT; value
 * comparison is antisymmetric; a conversion yields the column's type and
 * respects VARCHAR(n).  Subqueries in FROM and WITH queries are checked
 * as statements of their own.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"
#include "sql_int.h"             /* sql_value_neg, sql_value_arith */

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz_sql: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                  \
			abort();                                             \
		}                                                            \
	} while (0)

/* The conformance files' table, plus columns of the other types. */
static struct sql_coldef cols[] = {
	{ .name = "pk", .type = SQL_CT_INT, .primary_key = 1, .not_null = 1 },
	{ .name = "col0", .type = SQL_CT_INT },
	{ .name = "col1", .type = SQL_CT_FLOAT },
	{ .name = "col2", .type = SQL_CT_TEXT },
	{ .name = "col3", .type = SQL_CT_INT },
	{ .name = "col4", .type = SQL_CT_FLOAT },
	{ .name = "col5", .type = SQL_CT_TEXT, .max_len = 5 },
	{ .name = "x", .type = SQL_CT_BIGINT, .not_null = 1 },
	{ .name = "y", .type = SQL_CT_TEXT, .unique = 1 },
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static const struct sql_schema schema = { .name = "tab0", .ncols = NCOLS, .cols = cols, .pk = 0 };

#define NROWS 4
static struct sql_value rows[NROWS][NCOLS];

static struct sql_value vi(int64_t v)
{
	struct sql_value x = { .type = SQL_INT, .i = v };
	return x;
}

static struct sql_value vf(double v)
{
	struct sql_value x = { .type = SQL_FLOAT, .f = v };
	return x;
}

static struct sql_value vt(const char *s)
{
	struct sql_value x = { .type = SQL_TEXT, .s = s, .len = strlen(s) };
	return x;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t c;

	(void)argc;
	(void)argv;
	/* row 0: all NULL */
	/* row 1: an ordinary row of the conformance files */
	rows[1][0] = vi(3);
	rows[1][1] = vi(58);
	rows[1][2] = vf(46.61);
	rows[1][3] = vt("lnnip");
	rows[1][4] = vi(9);
	rows[1][5] = vf(22.75);
	rows[1][6] = vt("toxta");
	rows[1][7] = vi(1);
	rows[1][8] = vt("");
	/* row 2: extremes */
	rows[2][0] = vi(INT32_MIN);
	rows[2][1] = vi(INT32_MAX);
	rows[2][2] = vf(INFINITY);
	rows[2][3] = vt("h\xc3\xa9llo");
	rows[2][4] = vi(0);
	rows[2][5] = vf(-0.0);
	rows[2][6] = vt("");
	rows[2][7] = vi(INT64_MIN);
	rows[2][8] = vt("'");
	/* row 3: NaN, the other ends, some NULLs */
	rows[3][0] = vi(0);
	rows[3][2] = vf(NAN);
	rows[3][4] = vi(-1);
	rows[3][5] = vf(9223372036854775808.0);
	rows[3][7] = vi(INT64_MAX);
	for (c = 0; c < NCOLS; c++)
		CHECK(rows[0][c].type == SQL_NULL);
	return 0;
}

static void check_msg(const char *err, size_t errlen)
{
	CHECK(memchr(err, '\0', errlen) != NULL);
	CHECK(err[0] != '\0');
}

static int is_bool(enum sql_ekind k)
{
	return k == SQL_E_CMP || k == SQL_E_IN || k == SQL_E_BETWEEN || k == SQL_E_ISNULL ||
	       k == SQL_E_AND || k == SQL_E_OR || k == SQL_E_NOT || k == SQL_E_LIKE ||
	       k == SQL_E_EXISTS || k == SQL_E_INSUB;
}

/* A well-formed literal. */
static void check_lit(const struct sql_value *v)
{
	CHECK(v->type == SQL_NULL || v->type == SQL_INT || v->type == SQL_FLOAT ||
	      v->type == SQL_TEXT);
	if (v->type == SQL_TEXT) {
		CHECK(v->s != NULL);
		CHECK(v->s[v->len] == '\0');
		CHECK(memchr(v->s, '\0', v->len) == NULL);
	}
	if (v->type == SQL_FLOAT)
		CHECK(!isnan(v->f) && !isinf(v->f));
}

static void check_stmt(struct sql_stmt *st);

/* The tree invariants; returns the height; collects up to 16 literals. */
static int check_expr(const struct sql_expr *e, int want_bool, const struct sql_value **lits,
		      size_t *nlits)
{
	int h = 0, k;
	size_t i;

	CHECK(e != NULL);
	CHECK(is_bool(e->kind) == want_bool);
	CHECK(e->height >= 1 && e->height <= SQL_MAX_HEIGHT);
	switch (e->kind) {
	case SQL_E_LIT:
		check_lit(&e->lit);
		if (*nlits < 16 && e->lit.type != SQL_NULL)
			lits[(*nlits)++] = &e->lit;
		break;
	case SQL_E_COL:
		CHECK(e->col[0] != '\0' && strlen(e->col) <= SQL_NAME_MAX);
		break;
	case SQL_E_NEG:
		h = check_expr(e->a, 0, lits, nlits);
		/* a negated literal is folded, unless that fails (in a part
		 * evaluated only when needed: the error waits until then) */
		if (e->a->kind == SQL_E_LIT) {
			struct sql_value v;
			char m[128];

			CHECK(sql_value_neg(&e->a->lit, &v, m, sizeof(m)) != LWC_OK);
		}
		break;
	case SQL_E_ARITH:
		CHECK(e->arith >= SQL_ADD && e->arith <= SQL_MOD);
		h = check_expr(e->a, 0, lits, nlits);
		k = check_expr(e->b, 0, lits, nlits);
		h = k > h ? k : h;
		/* literals are folded unless that fails (as for SQL_E_NEG) */
		if (e->a->kind == SQL_E_LIT && e->b->kind == SQL_E_LIT) {
			struct sql_value v;
			char m[128];

			CHECK(sql_value_arith(e->arith, &e->a->lit, &e->b->lit, &v, m, sizeof(m)) !=
			      LWC_OK);
		}
		break;
	case SQL_E_CMP:
		CHECK(e->op >= SQL_EQ && e->op <= SQL_GE);
		h = check_expr(e->a, 0, lits, nlits);
		k = check_expr(e->b, 0, lits, nlits);
		h = k > h ? k : h;
		break;
	case SQL_E_IN:
		CHECK(e->nlist >= 1);
		h = check_expr(e->a, 0, lits, nlits);
		for (i = 0; i < e->nlist; i++) {
			k = check_expr(e->list[i], 0, lits, nlits);
			h = k > h ? k : h;
		}
		break;
	case SQL_E_BETWEEN:
		h = check_expr(e->a, 0, lits, nlits);
		k = check_expr(e->b, 0, lits, nlits);
		h = k > h ? k : h;
		k = check_expr(e->c, 0, lits, nlits);
		h = k > h ? k : h;
		break;
	case SQL_E_ISNULL:
		h = check_expr(e->a, 0, lits, nlits);
		break;
	case SQL_E_AND:
	case SQL_E_OR:
		h = check_expr(e->a, 1, lits, nlits);
		k = check_expr(e->b, 1, lits, nlits);
		h = k > h ? k : h;
		break;
	case SQL_E_NOT:
		h = check_expr(e->a, 1, lits, nlits);
		break;
	case SQL_E_LIKE:
		h = check_expr(e->a, 0, lits, nlits);
		k = check_expr(e->b, 0, lits, nlits);
		h = k > h ? k : h;
		break;
	case SQL_E_FUNC:
		CHECK(e->fname[0] != '\0' && e->nlist >= 1);
		for (i = 0; i < e->nlist; i++) {
			k = check_expr(e->list[i], 0, lits, nlits);
			h = k > h ? k : h;
		}
		break;
	case SQL_E_AGG:
		CHECK(e->fname[0] != '\0');
		if (e->a != NULL)
			h = check_expr(e->a, 0, lits, nlits);
		break;
	case SQL_E_CAST:
		CHECK(e->cast_type >= SQL_CT_INT && e->cast_type <= SQL_CT_TEXT);
		h = check_expr(e->a, 0, lits, nlits);
		break;
	case SQL_E_CASE:
		CHECK(e->nlist >= 2 && e->nlist % 2 == 0);
		if (e->a != NULL)
			h = check_expr(e->a, 0, lits, nlits);
		for (i = 0; i < e->nlist; i++) {
			k = check_expr(e->list[i], i % 2 == 0 && e->a == NULL, lits, nlits);
			h = k > h ? k : h;
		}
		if (e->b != NULL) {
			k = check_expr(e->b, 0, lits, nlits);
			h = k > h ? k : h;
		}
		break;
	case SQL_E_EXISTS:
	case SQL_E_INSUB:
	case SQL_E_SCALARSUB:
		/* the subquery is a statement of its own, in the same arena */
		CHECK(e->sub != NULL && e->sub->kind == SQL_SELECT && e->sub->shared_arena);
		CHECK((e->a != NULL) == (e->kind == SQL_E_INSUB));
		if (e->a != NULL)
			h = check_expr(e->a, 0, lits, nlits);
		check_stmt(e->sub);
		break;
	case SQL_E_WINDOW:
		/* fname(a [, c [, b]]) OVER (PARTITION BY list[0..npart) ORDER BY the rest) */
		CHECK(e->fname[0] != '\0' && e->npart <= e->nlist);
		CHECK(e->nlist == e->npart || e->wdir != NULL);
		CHECK(e->c == NULL || e->a != NULL);
		CHECK(e->b == NULL || e->c != NULL);
		if (e->a != NULL)
			h = check_expr(e->a, 0, lits, nlits);
		if (e->b != NULL) {
			k = check_expr(e->b, 0, lits, nlits);
			h = k > h ? k : h;
		}
		if (e->c != NULL) {
			k = check_expr(e->c, 0, lits, nlits);
			h = k > h ? k : h;
		}
		for (i = 0; i < e->nlist; i++) {
			k = check_expr(e->list[i], 0, lits, nlits);
			h = k > h ? k : h;
		}
		break;
	default:
		CHECK(0);
	}
	CHECK(e->height == h + 1);
	return e->height;
}

static void check_cmp_pairs(const struct sql_value **lits, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		CHECK(sql_value_cmp(lits[i], lits[i]) == 0);
		for (j = i + 1; j < n; j++) {
			int a = sql_value_cmp(lits[i], lits[j]), b = sql_value_cmp(lits[j], lits[i]);

			CHECK(a == -1 || a == 0 || a == 1 || a == SQL_CMP_ERR);
			CHECK(a == SQL_CMP_ERR ? b == SQL_CMP_ERR : a == -b);
		}
	}
}

/* A converted value has its column's type and fits. */
static void coerce_check(const struct sql_coldef *c, const struct sql_value *in)
{
	char buf[SQL_NUM_TEXT_MAX], err[256];
	struct sql_value out;
	int rc;

	rc = sql_coerce(c, in, &out, buf, sizeof(buf), err, sizeof(err));
	if (rc != LWC_OK) {
		CHECK(rc == LWC_ERR_ARG || rc == LWC_ERR_NOMEM);
		check_msg(err, sizeof(err));
		CHECK(out.type == SQL_NULL);
		return;
	}
	if (out.type == SQL_NULL) {
		CHECK(in->type == SQL_NULL && !c->not_null && !c->primary_key);
		return;
	}
	switch (c->type) {
	case SQL_CT_INT:
		CHECK(out.type == SQL_INT && out.i >= INT32_MIN && out.i <= INT32_MAX);
		break;
	case SQL_CT_BIGINT:
		CHECK(out.type == SQL_INT);
		break;
	case SQL_CT_FLOAT:
		CHECK(out.type == SQL_FLOAT);
		break;
	case SQL_CT_TEXT: {
		size_t i, chars = 0;

		CHECK(out.type == SQL_TEXT && out.s != NULL && out.s[out.len] == '\0');
		for (i = 0; i < out.len; i++)
			chars += ((unsigned char)out.s[i] & 0xc0) != 0x80;
		CHECK(c->max_len == 0 || chars <= c->max_len);
		break;
	}
	}
}

static enum sql_tv tv_not(enum sql_tv t)
{
	return t == SQL_UNKNOWN ? SQL_UNKNOWN : t == SQL_TRUE ? SQL_FALSE : SQL_TRUE;
}

static void eval_where(const struct sql_expr *where)
{
	struct sql_expr not_e;
	char err[256];
	size_t r;

	memset(&not_e, 0, sizeof(not_e));
	not_e.kind = SQL_E_NOT;
	not_e.a = (struct sql_expr *)where;
	not_e.height = where->height + 1;
	for (r = 0; r < NROWS; r++) {
		enum sql_tv t = sql_eval(where, rows[r]), t2;
		int rc = sql_eval_checked(where, rows[r], &t2, err, sizeof(err));

		CHECK(t == SQL_TRUE || t == SQL_FALSE || t == SQL_UNKNOWN);
		if (rc == LWC_OK) {
			CHECK(t2 == t);
		} else {
			CHECK(rc == LWC_ERR_ARG && t2 == SQL_UNKNOWN);
			check_msg(err, sizeof(err));
		}
		CHECK(sql_eval(&not_e, rows[r]) == tv_not(t));
	}
}

static void check_bound(struct sql_stmt *st)
{
	size_t i, j, r;

	switch (st->kind) {
	case SQL_SELECT:
		if (st->q != NULL) {
			struct sql_value *in[NROWS];
			struct sql_outrow *out;
			size_t nout, nin = st->q->from ? NROWS : 1;
			char err[256];
			int rc;

			for (i = 0; i < st->q->ntargets; i++)
				CHECK(st->q->targets[i].e != NULL);
			for (r = 0; r < NROWS; r++)
				in[r] = rows[r];
			rc = sql_query_run(st, in, nin, &out, &nout, err, sizeof(err));
			if (rc != LWC_OK) {
				CHECK(rc == LWC_ERR_ARG || rc == LWC_ERR_NOMEM);
				check_msg(err, sizeof(err));
				break;
			}
			CHECK(st->limit < 0 || nout <= (size_t)st->limit);
			for (r = 0; r < nout; r++)
				for (j = 0; j < st->q->ntargets; j++)
					CHECK(out[r].v[j].type <= SQL_TEXT &&
					      (out[r].v[j].type != SQL_TEXT ||
					       out[r].v[j].s[out[r].v[j].len] == '\0'));
			sql_outrows_free(out, nout);
			break;
		}
		for (i = 0; i < st->nproj; i++)
			CHECK(st->proj_index[i] >= 0 && (size_t)st->proj_index[i] < NCOLS);
		for (i = 0; i < st->norder; i++)
			CHECK(st->order[i].col_index >= 0 && (size_t)st->order[i].col_index < NCOLS);
		break;
	case SQL_CREATE_INDEX:
		for (i = 0; i < st->nindex_cols; i++)
			CHECK(st->index_col_index[i] >= 0 && (size_t)st->index_col_index[i] < NCOLS);
		break;
	case SQL_INSERT:
		CHECK(st->ninsert_map <= NCOLS);
		for (i = 0; i < st->ninsert_map; i++)
			CHECK(st->insert_map[i] >= 0 && (size_t)st->insert_map[i] < NCOLS);
		if (st->src[0] == '\0')
			CHECK(st->ninsert_map == st->rowlen);
		for (i = 0; i < st->nrows && i < 64; i++)
			for (j = 0; j < st->rowlen; j++)
				coerce_check(&cols[st->insert_map[j]], &st->rows[i][j]->lit);
		break;
	case SQL_UPDATE:
		for (i = 0; i < st->nsets; i++) {
			CHECK(st->sets[i].col_index >= 0 && (size_t)st->sets[i].col_index < NCOLS);
			for (j = 0; j < i; j++)
				CHECK(st->sets[j].col_index != st->sets[i].col_index);
			for (r = 0; r < NROWS; r++) {
				struct sql_value v;
				char err[256];

				if (sql_eval_value(st->sets[i].value, rows[r], &v, err, sizeof(err)) == LWC_OK)
					coerce_check(&cols[st->sets[i].col_index], &v);
				else
					check_msg(err, sizeof(err));
			}
		}
		break;
	default:
		break;
	}
	if (st->where != NULL)
		eval_where(st->where);
}

/* A bound join: pushdown conditions read only their own table; the join
 * of the fixed rows (each table the same rows) runs, then the SELECT. */
static void check_join(struct sql_stmt *st)
{
	const struct sql_query *q = st->q;
	struct sql_value *const *tabs[64];
	struct sql_value *in[NROWS], **jr = NULL;
	size_t ntab[64], nj = 0, k, r;
	char err[256];
	int rc;

	for (k = 0; k < q->nfroms; k++) {
		struct sql_expr *cond = NULL;

		CHECK(sql_join_pushdown(st, k, &cond) == LWC_OK);
		if (cond != NULL)
			eval_where(cond);
		CHECK(q->froms[k].ncols == NCOLS && q->froms[k].offset == k * NCOLS);
	}
	for (r = 0; r < NROWS; r++)
		in[r] = rows[r];
	for (k = 0; k < q->nfroms; k++) {
		tabs[k] = in;
		/* at most 3 tables of 4 rows each: 64 joined rows */
		ntab[k] = k < 3 ? NROWS : 1;
	}
	rc = sql_join_run(st, tabs, ntab, &jr, &nj, err, sizeof(err));
	if (rc != LWC_OK) {
		CHECK(rc == LWC_ERR_ARG || rc == LWC_ERR_NOMEM);
		check_msg(err, sizeof(err));
		return;
	}
	{
		struct sql_outrow *out;
		size_t nout;

		rc = sql_query_run(st, jr, nj, &out, &nout, err, sizeof(err));
		if (rc == LWC_OK)
			sql_outrows_free(out, nout);
		else
			check_msg(err, sizeof(err));
	}
	sql_join_free(jr, nj);
}

static void check_stmt(struct sql_stmt *st)
{
	const struct sql_value *lits[16];
	size_t nlits = 0, i, j;
	char err[256];
	int pos, rc, rc2;

	CHECK(st->kind >= SQL_CREATE_TABLE && st->kind <= SQL_DELETE);
	CHECK(st->table[0] != '\0' ||
	      (st->kind == SQL_SELECT && st->q != NULL && (!st->q->from || st->q->setop)));
	if (st->q != NULL && st->q->setop != SQL_SETOP_NONE) {
		/* a set operation: two SELECTs of their own */
		CHECK(st->q->larg != NULL && st->q->rarg != NULL && st->q->ntargets == 0);
		CHECK(st->q->larg->shared_arena && st->q->rarg->shared_arena);
		check_stmt(st->q->larg);
		check_stmt(st->q->rarg);
	}
	if (st->q != NULL) {
		const struct sql_query *q = st->q;

		/* subqueries in FROM and WITH queries: SELECTs of their own */
		for (i = 0; i < q->nfroms; i++) {
			const struct sql_from *f = &q->froms[i];

			CHECK(f->table[0] != '\0');
			CHECK(f->ncolnames == 0 || (f->sub != NULL && f->colnames != NULL));
			if (f->sub != NULL) {
				CHECK(f->sub->kind == SQL_SELECT && f->sub->shared_arena);
				check_stmt(f->sub);
			}
		}
		CHECK(st->kind == SQL_SELECT && !st->star && !st->count_star && st->nproj == 0);
		for (i = 0; i < q->ntargets; i++)
			if (q->targets[i].e != NULL)   /* a value or a condition */
				check_expr(q->targets[i].e, is_bool(q->targets[i].e->kind), lits,
					   &nlits);
		for (i = 0; i < q->ngroup; i++)     /* a value or a condition */
			check_expr(q->group[i], is_bool(q->group[i]->kind), lits, &nlits);
		if (q->having != NULL)
			check_expr(q->having, 1, lits, &nlits);
		for (i = 0; i < q->norder; i++) {
			CHECK((q->order[i].e != NULL) != (q->order[i].target >= 0));
			/* a set operation's targets are its SELECTs' columns, known
			 * when they have run */
			CHECK(q->setop || q->order[i].target < (int)q->ntargets);
			if (q->order[i].e != NULL)
				check_expr(q->order[i].e, 0, lits, &nlits);
		}
		CHECK(q->offset >= 0);
		CHECK(q->grouped == (q->naggs > 0 || q->ngroup > 0));
		CHECK(q->nwins == 0 || (!q->grouped && q->having == NULL));
	}
	CHECK(st->limit >= -1);
	if (st->where != NULL) {
		CHECK(st->kind == SQL_SELECT || st->kind == SQL_UPDATE || st->kind == SQL_DELETE);
		check_expr(st->where, 1, lits, &nlits);
	}
	if (st->kind == SQL_INSERT) {
		CHECK((st->src[0] != '\0') == (st->nrows == 0));
		for (i = 0; i < st->nrows; i++)
			for (j = 0; j < st->rowlen; j++) {
				CHECK(st->rows[i][j]->kind == SQL_E_LIT);
				check_expr(st->rows[i][j], 0, lits, &nlits);
			}
	}
	if (st->kind == SQL_UPDATE) {
		CHECK(st->nsets >= 1);
		for (i = 0; i < st->nsets; i++)
			check_expr(st->sets[i].value, 0, lits, &nlits);
	}
	if (st->kind == SQL_CREATE_TABLE) {
		int npk = 0;

		CHECK(st->ncols >= 1);
		for (i = 0; i < st->ncols; i++) {
			npk += st->cols[i].primary_key;
			CHECK(!st->cols[i].primary_key || st->cols[i].not_null);
			for (j = 0; j < i; j++)
				CHECK(strcmp(st->cols[i].name, st->cols[j].name) != 0);
		}
		CHECK(npk <= 1);
	}
	check_cmp_pairs(lits, nlits);

	if (st->q != NULL && st->q->nfroms > 0) {
		/* a join: every table of FROM is the fixed table */
		const struct sql_schema *scs[64];

		for (i = 0; i < st->q->nfroms && i < 64; i++)
			scs[i] = &schema;
		if (st->q->nfroms > 64)
			return;
		rc = sql_bind_join(st, scs, err, sizeof(err), &pos);
		if (rc != LWC_OK) {
			CHECK(rc == LWC_ERR_SCHEMA || rc == LWC_ERR_NOMEM);
			check_msg(err, sizeof(err));
			return;
		}
		check_join(st);
		return;
	}
	rc = sql_bind(st, &schema, err, sizeof(err), &pos);
	if (rc != LWC_OK) {
		CHECK(rc == LWC_ERR_SCHEMA || rc == LWC_ERR_NOMEM);
		check_msg(err, sizeof(err));
		CHECK(pos >= -1);
	} else {
		CHECK(pos == -1);
		check_bound(st);
	}
	rc2 = sql_bind(st, &schema, err, sizeof(err), &pos);
	CHECK(rc2 == rc || rc == LWC_ERR_NOMEM || rc2 == LWC_ERR_NOMEM);
}

static void parse_one(const char *sql, size_t len)
{
	struct sql_stmt *st = NULL;
	char err[256];
	int pos = -2, rc;

	memset(err, 'x', sizeof(err));
	rc = sql_parse(sql, len, &st, err, sizeof(err), &pos);
	if (rc != LWC_OK) {
		CHECK(st == NULL);
		CHECK(rc == LWC_ERR_ARG || rc == LWC_ERR_NOMEM);
		check_msg(err, sizeof(err));
		if (rc == LWC_ERR_ARG)
			CHECK(pos >= 0 && (size_t)pos <= len);
		CHECK(!sql_is_blank(sql, len) || strcmp(err, "empty statement") == 0);
		return;
	}
	CHECK(st != NULL && pos == -1);
	CHECK(!sql_is_blank(sql, len));
	check_stmt(st);
	sql_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *sql = (const char *)data;
	size_t off = 0, k, pieces = 0;

	/* a script: every piece ends at a ';' */
	while (off < size && (k = sql_next_statement(sql + off, size - off)) > 0) {
		CHECK(k <= size - off && sql[off + k - 1] == ';');
		if (pieces++ < 8)
			parse_one(sql + off, k);
		off += k;
	}
	/* the whole input as one statement */
	parse_one(sql, size);
	return 0;
}
