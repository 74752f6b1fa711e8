/*
 * sql_bind.c - binding a parsed statement's column names to a table's
 * schema, and CREATE TABLE's own checks.
 */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_int.h"

static int name_ptr_cmp(const void *x, const void *y)
{
	const struct sql_coldef *a = *(const struct sql_coldef *const *)x;
	const struct sql_coldef *b = *(const struct sql_coldef *const *)y;
	int c = strcmp(a->name, b->name);

	return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

/* CREATE TABLE's own checks: distinct column names, one primary key. */
int sql_check_create(struct arena *ar, const struct sql_stmt *st, char *err, size_t errlen,
			int *errpos)
{
	const struct sql_coldef **v;
	const struct sql_coldef *dup = NULL;
	size_t i, npk = 0;

	for (i = 0; i < st->ncols; i++) {
		if (st->cols[i].primary_key && ++npk == 2) {
			*errpos = st->cols[i].pos;
			lwc_errf(err, errlen, "multiple primary keys for table \"%s\" are not allowed",
				 st->table);
			return LWC_ERR_SCHEMA;
		}
	}
	if (st->ncols < 2)
		return LWC_OK;
	v = sql_arena_alloc(ar, st->ncols * sizeof(*v));
	if (v == NULL) {
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	for (i = 0; i < st->ncols; i++)
		v[i] = &st->cols[i];
	qsort(v, st->ncols, sizeof(*v), name_ptr_cmp);
	/* of all repeated names, report the earliest repetition */
	for (i = 1; i < st->ncols; i++)
		if (strcmp(v[i - 1]->name, v[i]->name) == 0 && (dup == NULL || v[i]->pos < dup->pos))
			dup = v[i];
	if (dup != NULL) {
		*errpos = dup->pos;
		lwc_errf(err, errlen, "column \"%s\" specified more than once", dup->name);
		return LWC_ERR_SCHEMA;
	}
	return LWC_OK;
}

/* ---- binding ---------------------------------------------------------------- */

static int find_col(const struct sql_schema *sc, const char *name)
{
	size_t i;

	for (i = 0; i < sc->ncols; i++)
		if (strcmp(sc->cols[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The next column after column k named name (a subquery's columns may
 * share a name), or -1. */
static int find_col_after(const struct sql_schema *sc, const char *name, int k)
{
	for (size_t i = (size_t)k + 1; i < sc->ncols; i++)
		if (strcmp(sc->cols[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Fill err; returns rc. */
__attribute__((format(printf, 4, 5)))
static int bind_fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* The statement around a subquery being bound (sql_bind_outer). */
struct outer_scope {
	const struct sql_schema *sc;
	const char *name;
	int used;
};

static _Thread_local struct outer_scope *outer_scope;

static int bind_expr(struct sql_expr *e, const struct sql_schema *sc, char *err, size_t errlen,
		     int *errpos)
{
	size_t i;
	int rc;

	if (e == NULL)
		return LWC_OK;
	if (e->kind == SQL_E_COL) {
		struct outer_scope *o = outer_scope;

		e->col_index = e->qual[0] != '\0' ? -1 : find_col(sc, e->col);
		if (e->col_index < 0 && o != NULL &&
		    (e->qual[0] == '\0' || o->name == NULL || strcmp(e->qual, o->name) == 0)) {
			int k = find_col(o->sc, e->col);

			if (k >= 0) {
				e->col_index = (int)(sc->ncols + (size_t)k);
				o->used = 1;
				return LWC_OK;
			}
		}
		if (e->col_index < 0) {
			*errpos = e->pos;
			return bind_fail(LWC_ERR_SCHEMA, err, errlen,
					 "column \"%s\" does not exist", e->col);
		}
		return LWC_OK;
	}
	if ((rc = bind_expr(e->a, sc, err, errlen, errpos)) != LWC_OK ||
	    (rc = bind_expr(e->b, sc, err, errlen, errpos)) != LWC_OK ||
	    (rc = bind_expr(e->c, sc, err, errlen, errpos)) != LWC_OK)
		return rc;
	for (i = 0; i < e->nlist; i++)
		if ((rc = bind_expr(e->list[i], sc, err, errlen, errpos)) != LWC_OK)
			return rc;
	return LWC_OK;
}

static int bind_insert(struct sql_stmt *st, const struct sql_schema *sc, char *err, size_t errlen,
		       int *errpos)
{
	struct arena *ar = st->arena;
	size_t n, i;
	int *map, *seen;

	if (st->ninsert_cols > 0) {
		seen = sql_arena_alloc(ar, (sc->ncols ? sc->ncols : 1) * sizeof(*seen));
		map = sql_arena_alloc(ar, st->ninsert_cols * sizeof(*map));
		if (seen == NULL || map == NULL)
			goto nomem;
		for (i = 0; i < st->ninsert_cols; i++) {
			int c = find_col(sc, st->insert_cols[i]);

			*errpos = st->insert_col_pos[i];
			if (c < 0)
				return bind_fail(LWC_ERR_SCHEMA, err, errlen,
						 "column \"%s\" of relation \"%s\" does not exist",
						 st->insert_cols[i], sc->name);
			if (seen[c]++)
				return bind_fail(LWC_ERR_SCHEMA, err, errlen,
						 "column \"%s\" specified more than once", st->insert_cols[i]);
			map[i] = c;
		}
		n = st->ninsert_cols;
	} else {
		n = st->src[0] != '\0' ? sc->ncols : st->rowlen;
		map = sql_arena_alloc(ar, (n ? n : 1) * sizeof(*map));
		if (map == NULL)
			goto nomem;
		for (i = 0; i < n; i++)
			map[i] = (int)i;
	}
	if (st->src[0] == '\0') {
		size_t targets = st->ninsert_cols > 0 ? st->ninsert_cols : sc->ncols;

		if (st->rowlen > targets) {
			*errpos = st->rows[0][targets]->pos;
			return bind_fail(LWC_ERR_SCHEMA, err, errlen,
					 "INSERT has more expressions than target columns");
		}
		if (st->ninsert_cols > 0 && st->rowlen < st->ninsert_cols) {
			*errpos = st->insert_col_pos[st->rowlen];
			return bind_fail(LWC_ERR_SCHEMA, err, errlen,
					 "INSERT has more target columns than expressions");
		}
	}
	*errpos = -1;
	st->insert_map = map;
	st->ninsert_map = n;
	return LWC_OK;
nomem:
	*errpos = -1;
	return bind_fail(LWC_ERR_NOMEM, err, errlen, "out of memory");
}

/* Resolve SET columns and keep only the rightmost assignment of each. */
static int bind_update(struct sql_stmt *st, const struct sql_schema *sc, char *err, size_t errlen,
		       int *errpos)
{
	size_t i, k = 0;
	int *last, rc;

	last = sql_arena_alloc(st->arena, (sc->ncols ? sc->ncols : 1) * sizeof(*last));
	if (last == NULL) {
		*errpos = -1;
		return bind_fail(LWC_ERR_NOMEM, err, errlen, "out of memory");
	}
	for (i = 0; i < st->nsets; i++) {
		struct sql_set *s = &st->sets[i];

		s->col_index = find_col(sc, s->col);
		if (s->col_index < 0) {
			*errpos = s->pos;
			return bind_fail(LWC_ERR_SCHEMA, err, errlen,
					 "column \"%s\" of relation \"%s\" does not exist", s->col, sc->name);
		}
		if ((rc = bind_expr(s->value, sc, err, errlen, errpos)) != LWC_OK)
			return rc;
		last[s->col_index] = (int)i + 1;
	}
	for (i = 0; i < st->nsets; i++)
		if (last[st->sets[i].col_index] == (int)i + 1)
			st->sets[k++] = st->sets[i];
	st->nsets = k;
	return LWC_OK;
}

/* ---- grouped queries ------------------------------------------------------------ */

/* 1 when a and b are the same bound expression (GROUP BY a ... SELECT b). */
static int same_expr(const struct sql_expr *a, const struct sql_expr *b)
{
	size_t i;

	if (a == b)
		return 1;
	if (a == NULL || b == NULL || a->kind != b->kind || a->negated != b->negated ||
	    a->nlist != b->nlist)
		return 0;
	switch (a->kind) {
	case SQL_E_LIT:
		if (a->lit.type != b->lit.type)
			return 0;
		return a->lit.type == SQL_NULL || sql_value_cmp(&a->lit, &b->lit) == 0;
	case SQL_E_COL:
		return a->col_index >= 0 && a->col_index == b->col_index;
	case SQL_E_CMP:
		if (a->op != b->op)
			return 0;
		break;
	case SQL_E_ARITH:
		if (a->arith != b->arith)
			return 0;
		break;
	case SQL_E_FUNC:
	case SQL_E_AGG:
		if (strcmp(a->fname, b->fname) != 0 || a->distinct != b->distinct)
			return 0;
		break;
	case SQL_E_WINDOW:
		return 0;             /* the same node only */
	case SQL_E_LIKE:
		if (a->icase != b->icase)
			return 0;
		break;
	case SQL_E_CAST:
		if (a->cast_type != b->cast_type)
			return 0;
		break;
	case SQL_E_EXISTS:
	case SQL_E_INSUB:
	case SQL_E_SCALARSUB:
		return 0;             /* the same node only */
	default:
		break;
	}
	if (!same_expr(a->a, b->a) || !same_expr(a->b, b->b) || !same_expr(a->c, b->c))
		return 0;
	for (i = 0; i < a->nlist; i++)
		if (!same_expr(a->list[i], b->list[i]))
			return 0;
	return 1;
}

/* What a grouped query's row may read: the GROUP BY expressions and every
 * column of a table whose primary key is grouped (PostgreSQL's functional
 * dependency); columns at or beyond ncols are an outer statement's. */
struct groupscope {
	const struct sql_query *q;
	size_t ncols;
	const size_t *keyed_from, *keyed_to;   /* column ranges of keyed tables */
	size_t nkeyed;
};

/* The first column e reads outside an aggregate and outside the GROUP BY
 * expressions, or NULL. */
static const struct sql_expr *ungrouped(const struct sql_expr *e, const struct groupscope *g)
{
	const struct sql_expr *bad;
	size_t i;

	if (e == NULL || e->kind == SQL_E_AGG)
		return NULL;
	for (i = 0; i < g->q->ngroup; i++)
		if (same_expr(e, g->q->group[i]))
			return NULL;
	if (e->kind == SQL_E_COL) {
		if (e->col_index < 0 || (size_t)e->col_index >= g->ncols)
			return NULL;
		for (i = 0; i < g->nkeyed; i++)
			if ((size_t)e->col_index >= g->keyed_from[i] && (size_t)e->col_index < g->keyed_to[i])
				return NULL;
		return e;
	}
	if ((bad = ungrouped(e->a, g)) != NULL || (bad = ungrouped(e->b, g)) != NULL ||
	    (bad = ungrouped(e->c, g)) != NULL)
		return bad;
	for (i = 0; i < e->nlist; i++)
		if ((bad = ungrouped(e->list[i], g)) != NULL)
			return bad;
	return NULL;
}

/* A grouped query (aggregates or GROUP BY) reads in its select list,
 * HAVING and ORDER BY only grouped expressions, aggregates and columns of
 * tables grouped by their primary key, as PostgreSQL requires. */
static int check_grouped(const struct sql_query *q, const struct groupscope *g,
			 const char *table, char *err, size_t errlen, int *errpos)
{
	const struct sql_expr *bad = NULL;
	size_t i;

	if (!q->grouped)
		return LWC_OK;
	for (i = 0; i < q->ntargets && bad == NULL; i++)
		bad = ungrouped(q->targets[i].e, g);
	if (bad == NULL)
		bad = ungrouped(q->having, g);
	for (i = 0; i < q->norder && bad == NULL; i++)
		bad = ungrouped(q->order[i].e, g);
	if (bad == NULL)
		return LWC_OK;
	*errpos = bad->pos;
	return bind_fail(LWC_ERR_SCHEMA, err, errlen, "column \"%s.%s\" must appear in the GROUP BY "
			 "clause or be used in an aggregate function",
			 bad->qual[0] != '\0' ? bad->qual : table, bad->col);
}

/* A general SELECT: * expanded into the table's columns, then every
 * expression bound. */
static int bind_query(struct sql_stmt *st, const struct sql_schema *sc, char *err, size_t errlen,
		      int *errpos)
{
	struct sql_query *q = st->q;
	size_t i, j, n = 0, nstar = 0;
	int rc;

	for (i = 0; i < q->ntargets; i++)
		nstar += q->targets[i].e == NULL;
	if (nstar > 0) {
		struct sql_target *t;

		n = q->ntargets - nstar + nstar * sc->ncols;
		if ((t = sql_arena_alloc(st->arena, (n ? n : 1) * sizeof(*t))) == NULL)
			return bind_fail(LWC_ERR_NOMEM, err, errlen, "out of memory");
		for (i = 0, n = 0; i < q->ntargets; i++) {
			if (q->targets[i].e != NULL) {
				t[n++] = q->targets[i];
				continue;
			}
			for (j = 0; j < sc->ncols; j++) {
				struct sql_expr *e = sql_arena_alloc(st->arena, sizeof(*e));

				if (e == NULL)
					return bind_fail(LWC_ERR_NOMEM, err, errlen, "out of memory");
				e->kind = SQL_E_COL;
				e->pos = q->targets[i].pos;
				e->height = 1;
				snprintf(e->col, sizeof(e->col), "%s", sc->cols[j].name);
				t[n].e = e;
				t[n].pos = q->targets[i].pos;
				snprintf(t[n].name, sizeof(t[n].name), "%s", sc->cols[j].name);
				n++;
			}
		}
		q->targets = t;
		q->ntargets = n;
	}
	for (i = 0; i < q->ntargets; i++)
		if ((rc = bind_expr(q->targets[i].e, sc, err, errlen, errpos)) != LWC_OK)
			return rc;
	for (i = 0; i < q->ngroup; i++)
		if ((rc = bind_expr(q->group[i], sc, err, errlen, errpos)) != LWC_OK)
			return rc;
	if ((rc = bind_expr(q->having, sc, err, errlen, errpos)) != LWC_OK)
		return rc;
	for (i = 0; i < q->norder; i++)
		if ((rc = bind_expr(q->order[i].e, sc, err, errlen, errpos)) != LWC_OK)
			return rc;
	if ((rc = bind_expr(st->where, sc, err, errlen, errpos)) != LWC_OK)
		return rc;
	{
		struct groupscope g = { q, sc->ncols, NULL, NULL, 0 };
		size_t from = 0, to = sc->ncols;

		for (i = 0; sc->pk >= 0 && i < q->ngroup; i++)
			if (q->group[i]->kind == SQL_E_COL && q->group[i]->col_index == sc->pk) {
				g.keyed_from = &from;
				g.keyed_to = &to;
				g.nkeyed = 1;
			}
		if ((rc = check_grouped(q, &g, sc->name, err, errlen, errpos)) != LWC_OK)
			return rc;
	}
	if (outer_scope == NULL)
		sql_query_settypes(st, sc);
	return LWC_OK;
}

int sql_bind(struct sql_stmt *st, const struct sql_schema *sc,
	     char *err, size_t errlen, int *errpos)
{
	int dummy, rc;
	size_t i;

	if (errpos == NULL)
		errpos = &dummy;
	*errpos = -1;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (st == NULL)
		return bind_fail(LWC_ERR_ARG, err, errlen, "no statement");
	if (st->kind == SQL_CREATE_TABLE) {
		rc = sql_check_create(st->arena, st, err, errlen, errpos);
		return rc;
	}
	if (st->kind == SQL_DROP_TABLE)
		return LWC_OK;
	if (st->kind == SQL_SELECT && st->q != NULL && st->q->setop != SQL_SETOP_NONE)
		return LWC_OK;          /* its SELECTs bind when they run */
	if (st->kind == SQL_SELECT && st->q != NULL && !st->q->from) {
		static const struct sql_schema none = { .name = "", .ncols = 0, .pk = -1 };

		return bind_query(st, &none, err, errlen, errpos);
	}
	if (sc == NULL)
		return bind_fail(LWC_ERR_ARG, err, errlen, "no table definition to bind to");
	switch (st->kind) {
	case SQL_CREATE_INDEX:
		for (i = 0; i < st->nindex_cols; i++) {
			st->index_col_index[i] = find_col(sc, st->index_cols[i]);
			if (st->index_col_index[i] < 0) {
				*errpos = st->index_col_pos[i];
				return bind_fail(LWC_ERR_SCHEMA, err, errlen,
						 "column \"%s\" does not exist", st->index_cols[i]);
			}
		}
		return LWC_OK;
	case SQL_INSERT:
		return bind_insert(st, sc, err, errlen, errpos);
	case SQL_SELECT:
		if (st->q != NULL && st->q->nfroms > 0)
			return bind_fail(LWC_ERR_SCHEMA, err, errlen, "a join binds with sql_bind_join");
		if (st->q != NULL)
			return bind_query(st, sc, err, errlen, errpos);
		for (i = 0; i < st->nproj; i++) {
			st->proj_index[i] = find_col(sc, st->proj[i]);
			if (st->proj_index[i] < 0) {
				*errpos = st->proj_pos[i];
				return bind_fail(LWC_ERR_SCHEMA, err, errlen,
						 "column \"%s\" does not exist", st->proj[i]);
			}
		}
		for (i = 0; i < st->norder; i++) {
			st->order[i].col_index = find_col(sc, st->order[i].col);
			if (st->order[i].col_index < 0) {
				*errpos = st->order[i].pos;
				return bind_fail(LWC_ERR_SCHEMA, err, errlen,
						 "column \"%s\" does not exist", st->order[i].col);
			}
		}
		return bind_expr(st->where, sc, err, errlen, errpos);
	case SQL_UPDATE:
		if ((rc = bind_update(st, sc, err, errlen, errpos)) != LWC_OK)
			return rc;
		return bind_expr(st->where, sc, err, errlen, errpos);
	case SQL_DELETE:
		return bind_expr(st->where, sc, err, errlen, errpos);
	default:
		return bind_fail(LWC_ERR_ARG, err, errlen, "unknown statement kind");
	}
}

/* ---- evaluation --------------------------------------------------------------- */

int sql_bind_outer(struct sql_stmt *st, const struct sql_schema *sc,
		   const struct sql_schema *outer, const char *outer_name,
		   char *err, size_t errlen, int *errpos)
{
	struct outer_scope o = { outer, outer_name, 0 };
	int dummy, rc;

	if (errpos == NULL)
		errpos = &dummy;
	*errpos = -1;
	if (st->q == NULL || st->q->nfroms > 0 || !st->q->from)
		return sql_bind(st, sc, err, errlen, errpos);
	outer_scope = &o;
	rc = bind_query(st, sc, err, errlen, errpos);
	outer_scope = NULL;
	if (rc == LWC_OK && o.used) {
		st->q->correlated = 1;
		st->q->corr_base = sc->ncols;
		st->q->corr_outer = outer->ncols;
	}
	return rc;
}

/* ---- joins -------------------------------------------------------------------- */

/* Whether a USING of from f merged column name into the left side's. */
static int merged(const struct sql_from *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nusing; i++)
		if (strcmp(f->using[i], name) == 0)
			return 1;
	return 0;
}

struct join_scope {
	const struct sql_query *q;
	const struct sql_schema *const *scs;
};

static int join_from(const struct sql_query *q, const char *name)
{
	size_t i;

	for (i = 0; i < q->nfroms; i++)
		if (strcmp(q->froms[i].alias[0] ? q->froms[i].alias : q->froms[i].table, name) == 0)
			return (int)i;
	return -1;
}

static int bind_join_expr(struct sql_expr *e, const struct join_scope *js, char *err,
			  size_t errlen, int *errpos)
{
	size_t i;
	int rc;

	if (e == NULL)
		return LWC_OK;
	if (e->kind == SQL_E_COL) {
		int f = -1, c = -1;

		if (e->col_index >= 0)
			return LWC_OK;  /* a column of *, by its place (a subquery's
					   columns may share a name) */
		if (e->qual[0] != '\0') {
			if ((f = join_from(js->q, e->qual)) < 0) {
				*errpos = e->pos;
				return bind_fail(LWC_ERR_SCHEMA, err, errlen, "missing FROM-clause entry "
						 "for table \"%s\"", e->qual);
			}
			if ((c = find_col(js->scs[f], e->col)) >= 0 &&
			    find_col_after(js->scs[f], e->col, c) >= 0) {
				*errpos = e->pos;
				return bind_fail(LWC_ERR_SCHEMA, err, errlen, "column reference \"%s\" is "
						 "ambiguous", e->col);
			}
			if (c < 0) {
				*errpos = e->pos;
				return bind_fail(LWC_ERR_SCHEMA, err, errlen, "column %s.%s does not exist",
						 e->qual, e->col);
			}
		} else {
			for (i = 0; i < js->q->nfroms; i++) {
				int k = find_col(js->scs[i], e->col);

				if (k < 0 || merged(&js->q->froms[i], e->col))
					continue;
				if (f >= 0 || find_col_after(js->scs[i], e->col, k) >= 0) {
					*errpos = e->pos;
					return bind_fail(LWC_ERR_SCHEMA, err, errlen, "column reference "
							 "\"%s\" is ambiguous", e->col);
				}
				f = (int)i;
				c = k;
			}
			if (f < 0) {
				*errpos = e->pos;
				return bind_fail(LWC_ERR_SCHEMA, err, errlen, "column \"%s\" does not exist",
						 e->col);
			}
		}
		e->col_index = (int)(js->q->froms[f].offset + (size_t)c);
		return LWC_OK;
	}
	if ((rc = bind_join_expr(e->a, js, err, errlen, errpos)) != LWC_OK ||
	    (rc = bind_join_expr(e->b, js, err, errlen, errpos)) != LWC_OK ||
	    (rc = bind_join_expr(e->c, js, err, errlen, errpos)) != LWC_OK)
		return rc;
	for (i = 0; i < e->nlist; i++)
		if ((rc = bind_join_expr(e->list[i], js, err, errlen, errpos)) != LWC_OK)
			return rc;
	return LWC_OK;
}

int sql_bind_join(struct sql_stmt *st, const struct sql_schema *const *scs,
		  char *err, size_t errlen, int *errpos)
{
	struct sql_query *q = st->q;
	struct join_scope js = { q, scs };
	size_t i, j, n, off = 0, nstar = 0;
	int dummy, rc;

	if (errpos == NULL)
		errpos = &dummy;
	*errpos = -1;
	if (q == NULL || q->nfroms < 1)
		return bind_fail(LWC_ERR_ARG, err, errlen, "not a join");
	for (i = 0; i < q->nfroms; i++) {
		q->froms[i].offset = off;
		q->froms[i].ncols = scs[i]->ncols;
		off += scs[i]->ncols;
	}
	for (i = 0; i < q->ntargets; i++)
		nstar += q->targets[i].e == NULL;
	if (nstar > 0) {
		struct sql_target *t;

		n = q->ntargets - nstar + nstar * off;
		if ((t = sql_arena_alloc(st->arena, (n ? n : 1) * sizeof(*t))) == NULL)
			return bind_fail(LWC_ERR_NOMEM, err, errlen, "out of memory");
		for (i = 0, n = 0; i < q->ntargets; i++) {
			const struct sql_target *s = &q->targets[i];

			if (s->e != NULL) {
				t[n++] = *s;
				continue;
			}
			for (j = 0; j < q->nfroms; j++) {
				const struct sql_from *f = &q->froms[j];
				size_t k;

				if (s->star_of[0] != '\0' &&
				    strcmp(s->star_of, f->alias[0] ? f->alias : f->table) != 0)
					continue;
				for (k = 0; k < scs[j]->ncols; k++) {
					struct sql_expr *e;

					if (s->star_of[0] == '\0' && merged(f, scs[j]->cols[k].name))
						continue;
					if ((e = sql_arena_alloc(st->arena, sizeof(*e))) == NULL)
						return bind_fail(LWC_ERR_NOMEM, err, errlen, "out of memory");
					e->kind = SQL_E_COL;
					e->pos = s->pos;
					e->height = 1;
					e->col_index = (int)(f->offset + k);
					snprintf(e->col, sizeof(e->col), "%s", scs[j]->cols[k].name);
					snprintf(e->qual, sizeof(e->qual), "%s", f->alias[0] ? f->alias : f->table);
					memset(&t[n], 0, sizeof(t[n]));
					t[n].e = e;
					t[n].pos = s->pos;
					snprintf(t[n].name, sizeof(t[n].name), "%s", scs[j]->cols[k].name);
					n++;
				}
			}
		}
		q->targets = t;
		q->ntargets = n;
	}
	for (i = 0; i < q->nfroms; i++)
		if ((rc = bind_join_expr(q->froms[i].on, &js, err, errlen, errpos)) != LWC_OK)
			return rc;
	for (i = 0; i < q->ntargets; i++)
		if ((rc = bind_join_expr(q->targets[i].e, &js, err, errlen, errpos)) != LWC_OK)
			return rc;
	for (i = 0; i < q->ngroup; i++)
		if ((rc = bind_join_expr(q->group[i], &js, err, errlen, errpos)) != LWC_OK)
			return rc;
	if ((rc = bind_join_expr(q->having, &js, err, errlen, errpos)) != LWC_OK)
		return rc;
	for (i = 0; i < q->norder; i++)
		if ((rc = bind_join_expr(q->order[i].e, &js, err, errlen, errpos)) != LWC_OK)
			return rc;
	if ((rc = bind_join_expr(st->where, &js, err, errlen, errpos)) != LWC_OK)
		return rc;
	if (q->grouped) {
		size_t *from = malloc(2 * q->nfroms * sizeof(*from));
		struct groupscope g = { q, off, NULL, NULL, 0 };

		if (from == NULL)
			return bind_fail(LWC_ERR_NOMEM, err, errlen, "out of memory");
		for (i = 0; i < q->nfroms; i++) {
			int pk = scs[i]->pk;

			for (j = 0; pk >= 0 && j < q->ngroup; j++)
				if (q->group[j]->kind == SQL_E_COL &&
				    q->group[j]->col_index == (int)(q->froms[i].offset + (size_t)pk)) {
					from[g.nkeyed] = q->froms[i].offset;
					from[q->nfroms + g.nkeyed] = q->froms[i].offset + q->froms[i].ncols;
					g.nkeyed++;
					break;
				}
		}
		g.keyed_from = from;
		g.keyed_to = from + q->nfroms;
		rc = check_grouped(q, &g, "?", err, errlen, errpos);
		free(from);
		if (rc != LWC_OK)
			return rc;
	}
	{
		/* the types of the joined row: every table's columns */
		struct sql_schema all = { .name = "", .ncols = off, .pk = -1 };

		if ((all.cols = malloc((off ? off : 1) * sizeof(*all.cols))) == NULL)
			return bind_fail(LWC_ERR_NOMEM, err, errlen, "out of memory");
		for (i = 0, n = 0; i < q->nfroms; i++)
			for (j = 0; j < scs[i]->ncols; j++)
				all.cols[n++] = scs[i]->cols[j];
		sql_query_settypes(st, &all);
		free(all.cols);
	}
	return LWC_OK;
}
