/*
 * lwc_select.c - liblwc: SELECT: one table, joins (the other side fetched by
 * key tokens) and set operations.
 */
#include <string.h>

#include <sodium.h>

#include "sql_int.h"
#include "lwc_int.h"

/* The rows a client-side query produced (out, taken whatever happens)
 * become r's materialised rows. */
static int take_rows(lwc_result *r, struct sql_outrow *out, size_t nout)
{
	if (nout > 0 && (r->rows = calloc(nout, sizeof(*r->rows))) == NULL) {
		sql_outrows_free(out, nout);
		return LWC_ERR_NOMEM;
	}
	for (size_t i = 0; i < nout; i++) {
		r->rows[i].v = out[i].v;
		r->rows[i].text = out[i].text;
	}
	free(out);
	r->nrows = r->caprows = nout;
	r->materialised = 1;
	r->pos = 0;
	r->limit = -1;
	return LWC_OK;
}

/* The columns of a general SELECT: its select list, typed from the
 * expressions or else from the first value that is not NULL. */
static int general_columns(lwc_result *r, const struct sql_stmt *st, const struct sql_schema *sc)
{
	r->ncols = (int)st->q->ntargets;
	r->colname = calloc((size_t)r->ncols + 1, sizeof(*r->colname));
	r->coltype = calloc((size_t)r->ncols + 1, sizeof(*r->coltype));
	r->colsrc = calloc((size_t)r->ncols + 1, sizeof(*r->colsrc));
	r->numbuf = calloc((size_t)r->ncols + 1, sizeof(*r->numbuf));
	if (!r->colname || !r->coltype || !r->colsrc || !r->numbuf)
		return LWC_ERR_NOMEM;
	for (int i = 0; i < r->ncols; i++) {
		enum sql_vtype t = sql_query_coltype(st, (size_t)i, sc);

		for (size_t k = 0; t == SQL_NULL && k < r->nrows; k++)
			t = r->rows[k].v[i].type;
		snprintf(r->colname[i], sizeof(r->colname[i]), "%s", st->q->targets[i].name);
		r->coltype[i] = t == SQL_NULL ? LWC_TYPE_TEXT : (enum lwc_type)t;
		r->colsrc[i] = i;
	}
	return LWC_OK;
}

/* Run a general SELECT over r->rows (the fetched rows, or none) and make
 * its output the result's rows. */
static lwc_result *general_finish(lwc_result *r, struct sql_stmt *st, struct sql_value *const *in,
				  size_t nin)
{
	struct sql_outrow *out = NULL;
	size_t nout = 0;
	char err[512];
	int rc = sql_query_run(st, in, nin, &out, &nout, err, sizeof(err));

	for (size_t i = 0; i < r->nrows; i++)
		row_free(&r->rows[i]);
	free(r->rows);
	r->rows = NULL;
	r->nrows = r->caprows = 0;
	if (rc != LWC_OK)
		return result_error(r, rc, -1, "%s", err);
	if (take_rows(r, out, nout) != LWC_OK)
		return result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
	if (general_columns(r, st, &r->sc) != LWC_OK)
		return result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
	r->status = LWC_RESULT_ROWS;
	return r;
}

/* SELECT without FROM: one row of no columns. */
static lwc_result *exec_nofrom(struct sql_stmt *st)
{
	lwc_result *r = result_new();
	struct sql_value none = { .type = SQL_NULL };
	struct sql_value *one = &none;
	char err[512];
	int errpos = -1;

	if (r == NULL) {
		sql_free(st);
		return &nomem_result;
	}
	r->stmt = st;
	if (sql_bind(st, NULL, err, sizeof(err), &errpos) != LWC_OK)
		return result_error(r, LWC_ERR_SCHEMA, errpos, "%s", err);
	return general_finish(r, st, &one, 1);
}

/* Send the SELECT of table t with pred (freed here) and make r the
 * connection's open stream.  LWC_OK, or an error held by r. */
static int select_send(lwc_conn *c, lwc_result *r, struct ltable *t, Lwc__Pred *pred,
		       int exact)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Select sel = LWC__SELECT__INIT;
	int rc;

	r->filter = !exact;
	sel.table.data = t->handle;
	sel.table.len = sizeof(t->handle);
	sel.where = pred;
	sel.candidates = !exact;
	req.op_case = LWC__PROXY_REQUEST__OP_SELECT;
	req.select = &sel;
	req.seq = r->seq = ++c->seq;
	rc = conn_send(c, &req);
	pred_free(pred);
	if (rc != LWC_OK) {
		result_error(r, rc, -1, "connection to the proxy lost: %s", conn_lost_msg(rc));
		return rc;
	}
	r->conn = c;
	c->open = r;
	r->status = LWC_RESULT_ROWS;
	return LWC_OK;
}

/* A general SELECT of a table: every row its WHERE selects, then the rest
 * in the client. */
static lwc_result *exec_general(lwc_conn *c, lwc_result *r, struct sql_stmt *st,
				struct ltable *t, Lwc__Pred *pred, int exact)
{
	struct sql_value **in = NULL;
	lwc_result *res;

	r->limit = -1;
	if (select_send(c, r, t, pred, exact) != LWC_OK)
		return r;
	r->stmt = st;
	if (result_materialise(r) != LWC_OK)
		return r;
	if (r->nrows > 0 && (in = malloc(r->nrows * sizeof(*in))) == NULL) {
		result_drain(r);
		return result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
	}
	for (size_t i = 0; i < r->nrows; i++)
		in[i] = r->rows[i].v;
	res = general_finish(r, st, in, r->nrows);
	free(in);
	return res;
}

/* Fetch the rows of table t that cond (on its own rows, or NULL) may
 * select, decrypted and filtered: a SELECT of its own to the proxy. */
lwc_result *fetch_rows(lwc_conn *c, struct sql_stmt *owner, struct ltable *t,
			      struct sql_expr *cond)
{
	struct sql_stmt *fs = sql_arena_alloc(owner->arena, sizeof(*fs));
	Lwc__Pred *pred = NULL;
	lwc_result *r = result_new();
	char err[512];
	int rc, exact, errpos = -1, code = LWC_ERR_SCHEMA;

	if (r == NULL || fs == NULL) {
		free(r);
		return &nomem_result;
	}
	fs->kind = SQL_SELECT;
	fs->where = cond;
	fs->arena = owner->arena;
	fs->shared_arena = 1;
	fs->limit = -1;
	snprintf(fs->table, sizeof(fs->table), "%s", t->sc.name);
	r->stmt = fs;
	r->limit = -1;
	if (schema_copy(&r->sc, &t->sc) != LWC_OK)
		return result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
	if ((rc = where_translate(c, &r->sc, cond, &pred, &exact, err, sizeof(err), &errpos,
			    &code)) != LWC_OK)
		return result_error(r, code, errpos, "%s", err);
	if (select_send(c, r, t, pred, exact) == LWC_OK)
		result_materialise(r);
	return r;
}

/* The rows of one table of a join, from one fetch or several, or of a
 * subquery in FROM (sub: its result, for the names and types; own: its
 * rows; sc: the schema it makes). */
struct jtab {
	lwc_result **rs;
	size_t nrs;
	struct sql_value **rows;
	size_t nrows, cap;
	lwc_result *sub;
	struct sql_outrow *own;
	size_t nown;
	struct sql_schema sc;
};

static lwc_result *run_branch(lwc_conn *c, struct sql_stmt *b, lwc_result **res,
			      struct sql_outrow **rows, size_t *n);

static int jtab_add(struct jtab *j, lwc_result *r)
{
	lwc_result **p = realloc(j->rs, (j->nrs + 1) * sizeof(*p));

	if (p == NULL)
		return LWC_ERR_NOMEM;
	j->rs = p;
	j->rs[j->nrs++] = r;
	if (r->status == LWC_RESULT_ERROR)
		return LWC_OK;
	if (j->nrows + r->nrows > j->cap) {
		size_t cap = j->nrows + r->nrows + 64;
		struct sql_value **q = realloc(j->rows, cap * sizeof(*q));

		if (q == NULL)
			return LWC_ERR_NOMEM;
		j->rows = q;
		j->cap = cap;
	}
	for (size_t i = 0; i < r->nrows; i++)
		j->rows[j->nrows++] = r->rows[i].v;
	return LWC_OK;
}

static int key_cmp(const void *a, const void *b)
{
	int c = sql_value_cmp(a, b);

	return c == SQL_CMP_ERR ? 0 : c;
}

#define JOIN_KEYS_BATCH 256

/* Fetch table k by the keys of the fetched table j: the distinct values
 * of j's column jl become IN lists (JOIN_KEYS_BATCH at a time) on k's
 * column kl, each with cond, as SELECTs of their own. */
static int fetch_by_keys(lwc_conn *c, struct sql_stmt *st, struct ltable *t, struct sql_expr *cond,
			 int kl, const struct jtab *jt, int jl, struct jtab *out)
{
	struct sql_value *keys = malloc((jt->nrows ? jt->nrows : 1) * sizeof(*keys));
	size_t nk = 0, u = 0;
	int rc = LWC_OK;

	if (keys == NULL)
		return LWC_ERR_NOMEM;
	for (size_t i = 0; i < jt->nrows; i++)
		if (jt->rows[i][jl].type != SQL_NULL)
			keys[nk++] = jt->rows[i][jl];
	if (nk > 1)
		qsort(keys, nk, sizeof(*keys), key_cmp);
	for (size_t i = 0; i < nk; i++)
		if (u == 0 || key_cmp(&keys[u - 1], &keys[i]) != 0)
			keys[u++] = keys[i];
	for (size_t b = 0; b < u && rc == LWC_OK; b += JOIN_KEYS_BATCH) {
		size_t n = u - b < JOIN_KEYS_BATCH ? u - b : JOIN_KEYS_BATCH;
		struct sql_expr *in = sql_arena_alloc(st->arena, sizeof(*in));
		struct sql_expr *col = sql_arena_alloc(st->arena, sizeof(*col));
		struct sql_expr **list = sql_arena_alloc(st->arena, n * sizeof(*list));
		struct sql_expr *all = in;
		lwc_result *r;

		if (in == NULL || col == NULL || list == NULL)
			return free(keys), LWC_ERR_NOMEM;
		col->kind = SQL_E_COL;
		col->col_index = kl;
		col->height = 1;
		snprintf(col->col, sizeof(col->col), "%s", t->sc.cols[kl].name);
		for (size_t i = 0; i < n; i++) {
			/* the key's text stays in table j's rows while the statement runs */
			if ((list[i] = sql_arena_alloc(st->arena, sizeof(*list[i]))) == NULL)
				return free(keys), LWC_ERR_NOMEM;
			list[i]->kind = SQL_E_LIT;
			list[i]->col_index = -1;
			list[i]->height = 1;
			list[i]->lit = keys[b + i];
		}
		in->kind = SQL_E_IN;
		in->col_index = -1;
		in->a = col;
		in->list = list;
		in->nlist = n;
		in->height = 2;
		if (cond != NULL) {
			if ((all = sql_arena_alloc(st->arena, sizeof(*all))) == NULL)
				return free(keys), LWC_ERR_NOMEM;
			all->kind = SQL_E_AND;
			all->col_index = -1;
			all->a = in;
			all->b = cond;
			all->height = 1 + (cond->height > 2 ? cond->height : 2);
		}
		r = fetch_rows(c, st, t, all);
		if ((rc = jtab_add(out, r)) != LWC_OK)
			lwc_result_free(r);
		else if (r->status == LWC_RESULT_ERROR)
			break;
	}
	free(keys);
	return rc;
}

/* A subquery in FROM (or a WITH query named there): run as a statement of
 * its own, its rows kept in j as those of a table named as f is, whose
 * columns are the subquery's (renamed by f's column aliases).  NULL, or
 * the error. */
static lwc_result *derived_rows(lwc_conn *c, const struct sql_from *f, struct jtab *j)
{
	lwc_result *e = run_branch(c, f->sub, &j->sub, &j->own, &j->nown);
	size_t ncols;

	if (e != NULL)
		return e;
	ncols = (size_t)j->sub->ncols;
	if (f->ncolnames > ncols)
		return result_error(NULL, LWC_ERR_SCHEMA, -1, "table \"%s\" has %zu columns "
				    "available but %zu columns specified",
				    f->alias[0] ? f->alias : f->table, ncols, f->ncolnames);
	snprintf(j->sc.name, sizeof(j->sc.name), "%s", f->alias[0] ? f->alias : f->table);
	j->sc.pk = -1;
	j->sc.ncols = ncols;
	if ((j->sc.cols = calloc(ncols ? ncols : 1, sizeof(*j->sc.cols))) == NULL ||
	    (j->rows = malloc((j->nown ? j->nown : 1) * sizeof(*j->rows))) == NULL)
		return result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory");
	for (size_t i = 0; i < ncols; i++) {
		struct sql_coldef *cd = &j->sc.cols[i];
		enum lwc_type t = j->sub->coltype[i];

		snprintf(cd->name, sizeof(cd->name), "%s",
			 i < f->ncolnames ? f->colnames[i] : j->sub->colname[i]);
		cd->type = t == LWC_TYPE_INT ? SQL_CT_BIGINT : t == LWC_TYPE_FLOAT ? SQL_CT_FLOAT :
			   SQL_CT_TEXT;
		cd->pos = f->pos;
	}
	for (size_t i = 0; i < j->nown; i++)
		j->rows[i] = j->own[i].v;
	j->nrows = j->cap = j->nown;
	return NULL;
}

/* A general SELECT of several tables: each table fetched with the part of
 * the WHERE and ON that reads it alone as its index predicate (one SELECT
 * of the proxy's per table), tables with such a predicate first; a table
 * an equality of columns links to a fetched one is fetched by that one's
 * keys (IN lists of their tokens, in batches) instead of whole.  Then the
 * client joins the rows and runs the rest. */
static lwc_result *exec_join(lwc_conn *c, struct sql_stmt *st)
{
	struct sql_query *q = st->q;
	size_t nf = q->nfroms, total = 0, nj = 0;
	struct ltable **ts = calloc(nf, sizeof(*ts));
	const struct sql_schema **scs = calloc(nf, sizeof(*scs));
	struct jtab *jt = calloc(nf, sizeof(*jt));
	struct sql_expr **conds = calloc(nf, sizeof(*conds));
	int *fetched = calloc(nf, sizeof(*fetched));
	struct sql_value ***tabs = calloc(nf, sizeof(*tabs));
	size_t *ntab = calloc(nf, sizeof(*ntab));
	struct sql_value **jrows = NULL;
	lwc_result *r = result_new();
	char err[512];
	int errpos = -1, rc, code = LWC_ERR_SCHEMA;
	size_t nderived = 0;

	if (!ts || !scs || !jt || !conds || !fetched || !tabs || !ntab || !r) {
		if (r == NULL)
			r = &nomem_result;
		else
			r = result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
		sql_free(st);
		goto out;
	}
	r->stmt = st;
	/* subqueries first: running one may load the catalog again, which
	 * the tables' schemas below point into */
	for (size_t k = 0; k < nf; k++) {
		if (q->froms[k].sub != NULL) {
			lwc_result *e = derived_rows(c, &q->froms[k], &jt[k]);

			if (e != NULL) {
				r = result_error(r, e->errcode, e->errpos, "%s", e->errmsg);
				lwc_result_free(e);
				goto out;
			}
			scs[k] = &jt[k].sc;
			total += jt[k].sc.ncols;
			fetched[k] = 1;
			tabs[k] = jt[k].rows;
			ntab[k] = jt[k].nrows;
			nderived++;
		}
	}
	for (size_t k = 0; k < nf; k++) {
		if (q->froms[k].sub != NULL)
			continue;
		if ((ts[k] = catalog_find(c, q->froms[k].table, 1)) == NULL) {
			r->stmt = NULL;
			lwc_result_free(r);
			r = error_no_table(q->froms[k].table, q->froms[k].pos);
			sql_free(st);
			goto out;
		}
		scs[k] = &ts[k]->sc;
		total += ts[k]->sc.ncols;
	}
	/* the result's schema: every table's columns one after the other */
	r->sc.ncols = total;
	r->sc.pk = -1;
	if ((r->sc.cols = calloc(total ? total : 1, sizeof(*r->sc.cols))) == NULL) {
		r = result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
		goto out;
	}
	for (size_t k = 0, o = 0; k < nf; k++)
		for (size_t i = 0; i < scs[k]->ncols; i++)
			r->sc.cols[o++] = scs[k]->cols[i];
	if (sql_bind_join(st, scs, err, sizeof(err), &errpos) != LWC_OK) {
		r = result_error(r, LWC_ERR_SCHEMA, errpos, "%s", err);
		goto out;
	}
	if ((rc = query_fix_literals(&r->sc, st, err, sizeof(err), &errpos, &code)) != LWC_OK) {
		r = result_error(r, code, errpos, "%s", err);
		goto out;
	}
	for (size_t k = 0; k < nf; k++)
		if (sql_join_pushdown(st, k, &conds[k]) != LWC_OK) {
			r = result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
			goto out;
		}
	for (size_t step = nderived; step < nf; step++) {
		size_t k = nf, lk = nf;
		int kcol = -1, jcol = -1, linked = 0;

		/* a table with a predicate of its own, else one linked to a
		 * fetched table, else the first left */
		for (size_t i = 0; i < nf && k == nf; i++)
			if (!fetched[i] && conds[i] != NULL)
				k = i;
		for (size_t i = 0; i < nf && k == nf && lk == nf; i++)
			if (!fetched[i] && sql_join_link(st, i, fetched, scs, &kcol, &jcol))
				lk = i;
		if (k == nf && lk != nf) {
			k = lk;
			linked = 1;
		}
		for (size_t i = 0; i < nf && k == nf; i++)
			if (!fetched[i])
				k = i;
		if (!linked && sql_join_link(st, k, fetched, scs, &kcol, &jcol))
			linked = 1;
		if (linked) {
			size_t j = 0;

			while (j + 1 < nf && (size_t)jcol >= q->froms[j + 1].offset)
				j++;
			rc = fetch_by_keys(c, st, ts[k], conds[k], kcol - (int)q->froms[k].offset, &jt[j],
					   jcol - (int)q->froms[j].offset, &jt[k]);
		} else {
			lwc_result *f = fetch_rows(c, st, ts[k], conds[k]);

			if ((rc = jtab_add(&jt[k], f)) != LWC_OK)
				lwc_result_free(f);
		}
		if (rc != LWC_OK) {
			r = result_error(r, rc, -1, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < jt[k].nrs; i++)
			if (jt[k].rs[i]->status == LWC_RESULT_ERROR) {
				r = result_error(r, jt[k].rs[i]->errcode, -1, "%s", jt[k].rs[i]->errmsg);
				goto out;
			}
		fetched[k] = 1;
		tabs[k] = jt[k].rows;
		ntab[k] = jt[k].nrows;
	}
	if ((rc = sql_join_run(st, (struct sql_value *const *const *)tabs, ntab, &jrows, &nj, err,
			       sizeof(err))) != LWC_OK) {
		r = result_error(r, rc, -1, "%s", err);
		goto out;
	}
	r = general_finish(r, st, jrows, nj);
out:
	sql_join_free(jrows, nj);
	for (size_t k = 0; jt != NULL && k < nf; k++) {
		for (size_t i = 0; i < jt[k].nrs; i++)
			lwc_result_free(jt[k].rs[i]);
		free(jt[k].rs);
		free(jt[k].rows);
		if (jt[k].sub != NULL)
			lwc_result_free(jt[k].sub);
		sql_outrows_free(jt[k].own, jt[k].nown);
		free(jt[k].sc.cols);
	}
	free(ts);
	free(scs);
	free(jt);
	free(conds);
	free(fetched);
	free(tabs);
	free(ntab);
	return r;
}


/* Run one SELECT of a set operation and keep its rows (copied); the
 * result stays for its column names and types.  NULL, or the error. */
static lwc_result *run_branch(lwc_conn *c, struct sql_stmt *b, lwc_result **res,
			      struct sql_outrow **rows, size_t *n)
{
	lwc_result *r;
	size_t cap = 0;
	int rc = 1;

	*res = NULL;
	*rows = NULL;
	*n = 0;
	if ((r = resolve_subqueries(c, b)) != NULL)
		return r;
	r = exec_select(c, b, 1);
	if (r->status == LWC_RESULT_ERROR)
		return r;
	struct sql_value *v = calloc((size_t)r->ncols + 1, sizeof(*v));

	while (v != NULL && (rc = lwc_result_next(r)) == 1) {
		for (int i = 0; i < r->ncols; i++)
			v[i] = *result_cur_value(r, i);
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct sql_outrow *p = realloc(*rows, nc * sizeof(*p));

			if (p == NULL)
				break;
			*rows = p;
			cap = nc;
		}
		if (sql_outrow_make(v, (size_t)r->ncols, &(*rows)[*n]) != LWC_OK)
			break;
		(*n)++;
	}
	if (v == NULL)
		rc = 1;                 /* out of memory, as below */
	free(v);
	if (rc < 0) {
		lwc_result *e = result_error(NULL, r->errcode ? r->errcode : LWC_ERR_ARG, -1, "%s",
					     lwc_result_error(r));
		lwc_result_free(r);
		sql_outrows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
		return e;
	}
	if (rc == 1) {
		lwc_result_free(r);
		sql_outrows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
		return result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory");
	}
	*res = r;
	return NULL;
}

/* UNION / INTERSECT / EXCEPT: both SELECTs run as statements of their
 * own, the client combines their rows. */
static lwc_result *exec_setop(lwc_conn *c, struct sql_stmt *st)
{
	static const char *const names[] = { "", "UNION", "INTERSECT", "EXCEPT" };
	struct sql_query *q = st->q;
	lwc_result *r = result_new(), *lr = NULL, *rr = NULL, *e;
	struct sql_outrow *lo = NULL, *ro = NULL, *out = NULL;
	size_t nl = 0, nr = 0, nout = 0;
	char err[512];
	int rc;

	if (r == NULL) {
		sql_free(st);
		return &nomem_result;
	}
	r->stmt = st;
	if ((e = run_branch(c, q->larg, &lr, &lo, &nl)) != NULL ||
	    (e = run_branch(c, q->rarg, &rr, &ro, &nr)) != NULL) {
		r = result_error(r, e->errcode, e->errpos, "%s", e->errmsg);
		lwc_result_free(e);
		goto out;
	}
	if (lr->ncols != rr->ncols) {
		r = result_error(r, LWC_ERR_ARG, -1, "each %s query must have the same number of "
				 "columns", names[q->setop]);
		goto out;
	}
	for (size_t i = 0; i < q->norder; i++) {
		struct sql_sortkey *o = &q->order[i];

		if (o->e != NULL) {
			o->target = -1;
			for (int k = 0; k < lr->ncols && o->target < 0; k++)
				if (strcmp(lr->colname[k], o->e->col) == 0)
					o->target = k;
			if (o->target < 0) {
				r = result_error(r, LWC_ERR_SCHEMA, o->e->pos, "column \"%s\" does not exist",
						 o->e->col);
				goto out;
			}
		} else if (o->target >= lr->ncols) {
			r = result_error(r, LWC_ERR_SCHEMA, -1, "ORDER BY position %d is not in select "
					 "list", o->target + 1);
			goto out;
		}
	}
	rc = sql_setop_run(st, lo, nl, ro, nr, (size_t)lr->ncols, &out, &nout, err, sizeof(err));
	lo = ro = NULL;
	nl = nr = 0;
	if (rc != LWC_OK) {
		r = result_error(r, rc, -1, "%s", err);
		goto out;
	}
	r->ncols = lr->ncols;
	r->colname = calloc((size_t)r->ncols + 1, sizeof(*r->colname));
	r->coltype = calloc((size_t)r->ncols + 1, sizeof(*r->coltype));
	r->colsrc = calloc((size_t)r->ncols + 1, sizeof(*r->colsrc));
	r->numbuf = calloc((size_t)r->ncols + 1, sizeof(*r->numbuf));
	if (!r->colname || !r->coltype || !r->colsrc || !r->numbuf) {
		sql_outrows_free(out, nout);
		r = result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
		goto out;
	}
	if (take_rows(r, out, nout) != LWC_OK) {
		r = result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
		goto out;
	}
	for (int i = 0; i < r->ncols; i++) {
		memcpy(r->colname[i], lr->colname[i], sizeof(r->colname[i]));
		r->coltype[i] = lr->coltype[i];
		r->colsrc[i] = i;
	}
	r->status = LWC_RESULT_ROWS;
out:
	sql_outrows_free(lo, nl);
	sql_outrows_free(ro, nr);
	if (lr != NULL)
		lwc_result_free(lr);
	if (rr != NULL)
		lwc_result_free(rr);
	return r;
}

lwc_result *exec_select(lwc_conn *c, struct sql_stmt *st, int own_stmt)
{
	struct ltable *t = catalog_find(c, st->table, 1);
	Lwc__Pred *pred = NULL;
	lwc_result *r;
	char err[512];
	int rc, exact, errpos = -1, code = LWC_ERR_SCHEMA;

	if (st->q != NULL && st->q->setop != SQL_SETOP_NONE)
		return exec_setop(c, st);
	if (st->q != NULL && !st->q->from)
		return exec_nofrom(st);
	if (st->q != NULL && st->q->nfroms > 0)
		return exec_join(c, st);
	if (t == NULL) {
		r = error_no_table(st->table, st->table_pos);
		if (own_stmt)
			sql_free(st);
		return r;
	}
	if ((r = result_new()) == NULL) {
		if (own_stmt)
			sql_free(st);
		return &nomem_result;
	}
	r->stmt = own_stmt ? st : NULL;
	if (schema_copy(&r->sc, &t->sc) != LWC_OK)
		return result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
	if (sql_bind(st, &r->sc, err, sizeof(err), &errpos) != LWC_OK)
		return result_error(r, LWC_ERR_SCHEMA, errpos, "%s", err);
	if ((rc = where_translate(c, &r->sc, st->where, &pred, &exact, err, sizeof(err), &errpos,
			    &code)) != LWC_OK)
		return result_error(r, code, errpos, "%s", err);
	if (st->q != NULL &&
	    (rc = query_fix_literals(&r->sc, st, err, sizeof(err), &errpos, &code)) != LWC_OK) {
		pred_free(pred);
		return result_error(r, code, errpos, "%s", err);
	}
	if (st->q != NULL)
		return exec_general(c, r, st, t, pred, exact);
	/* columns */
	if (st->count_star) {
		r->ncols = 1;
		r->count_only = 1;
	} else {
		r->ncols = st->star ? (int)r->sc.ncols : (int)st->nproj;
	}
	r->colname = calloc((size_t)r->ncols + 1, sizeof(*r->colname));
	r->coltype = calloc((size_t)r->ncols + 1, sizeof(*r->coltype));
	r->colsrc = calloc((size_t)r->ncols + 1, sizeof(*r->colsrc));
	r->numbuf = calloc((size_t)r->ncols + 1, sizeof(*r->numbuf));
	if (!r->colname || !r->coltype || !r->colsrc || !r->numbuf) {
		pred_free(pred);
		return result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
	}
	for (int i = 0; i < r->ncols; i++) {
		int src = r->count_only ? 0 : st->star ? i : st->proj_index[i];
		if (r->count_only) {
			snprintf(r->colname[i], sizeof(r->colname[i]), "count");
			r->coltype[i] = LWC_TYPE_INT;
			r->colsrc[i] = 0;
			continue;
		}
		snprintf(r->colname[i], sizeof(r->colname[i]), "%s", r->sc.cols[src].name);
		r->coltype[i] = ctype_to_type(r->sc.cols[src].type);
		r->colsrc[i] = src;
	}
	r->limit = st->limit;
	if (select_send(c, r, t, pred, exact) != LWC_OK)
		return r;
	r->stmt = st;
	/* an empty result or an error shows now, not at the first row */
	if (!r->count_only && st->norder == 0) {
		struct lrow row;
		rc = result_stream_next(r, &row);
		if (rc < 0) {
			if (!own_stmt)
				r->stmt = NULL;
			return r;
		}
		if (rc == 1) {
			r->peek = row;
			r->have_peek = 1;
		}
	}
	if (!own_stmt)
		r->stmt = st;
	return r;
}
