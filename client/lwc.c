/*
 * lwc.c - liblwc: see lwc.h.  This file runs a statement (lwc_exec) and
 * answers the catalog calls; the rest is split by job into lwc_*.c, which
 * share lwc_int.h.
 */
#include <string.h>

#include <sodium.h>

#include "lwc_int.h"

int indexes_changed(const lwc_result *r)
{
	return r->status == LWC_RESULT_ERROR && r->errcode == LWC_ERR_SCHEMA && r->count == 0 &&
	       r->errmsg && strstr(r->errmsg, "the table's indexes changed");
}

lwc_result *lwc_exec(lwc_conn *c, const char *sql)
{
	struct sql_stmt *st = NULL;
	char err[512];
	int errpos = -1, retried = 0;
	lwc_result *r;

	if (c == NULL || sql == NULL)
		return result_error(NULL, LWC_ERR_ARG, -1, "no connection");
	if (c->open)
		return result_error(NULL, LWC_ERR_BUSY, -1, "the previous result is still open "
				    "(free it first)");
	if (c->inflight)
		return result_error(NULL, LWC_ERR_BUSY, -1, "an INSERT is in flight on the "
				    "connection (lwc_insert_wait first)");
	if (c->broken)
		return result_error(NULL, LWC_ERR_CLOSED, -1, "the connection to the proxy is "
				    "closed");
	if (sql_parse(sql, strlen(sql), &st, err, sizeof(err), &errpos) != LWC_OK)
		return result_error(NULL, LWC_ERR_ARG, errpos, "%s", err);
	if ((st->kind == SQL_SELECT || st->kind == SQL_UPDATE || st->kind == SQL_DELETE) &&
	    (r = resolve_subqueries(c, st)) != NULL) {
		if (r->errcode == LWC_ERR_NO_TABLE || r->errcode == LWC_ERR_SCHEMA)
			c->catalog_loaded = 0;
		sql_free(st);
		return r;
	}
again:
	switch (st->kind) {
	case SQL_CREATE_TABLE:
		r = exec_create(c, st);
		break;
	case SQL_DROP_TABLE:
		r = exec_drop(c, st);
		break;
	case SQL_CREATE_INDEX:
		r = exec_index(c, st);
		break;
	case SQL_REINDEX:
		r = exec_reindex(c, st);
		break;
	case SQL_INSERT:
		r = exec_insert(c, st);
		break;
	case SQL_SELECT:
		return exec_select(c, st, 1);
	case SQL_UPDATE:
	case SQL_DELETE:
		r = exec_update_delete(c, st);
		break;
	default:
		r = result_error(NULL, LWC_ERR_ARG, -1, "unsupported statement");
	}
	/* another user added a range index since the catalog was read: the
	 * proxy refused the rows (nothing changed); read it again and retry */
	if (indexes_changed(r) && !retried &&
	    (st->kind == SQL_INSERT || st->kind == SQL_UPDATE || st->kind == SQL_DELETE)) {
		lwc_result_free(r);
		c->catalog_loaded = 0;
		retried = 1;
		goto again;
	}
	/* a table dropped or re-created by someone else: read the catalog again */
	if (r->status == LWC_RESULT_ERROR &&
	    (r->errcode == LWC_ERR_NO_TABLE || r->errcode == LWC_ERR_SCHEMA))
		c->catalog_loaded = 0;
	sql_free(st);
	return r;
}

/* ---- catalog API ---------------------------------------------------------------- */

int lwc_tables(lwc_conn *c, char ***names)
{
	char err[256];
	size_t n = 0, i = 0;
	int rc;

	*names = NULL;
	if (c == NULL)
		return LWC_ERR_ARG;
	if ((rc = catalog_load(c, err, sizeof(err))) != LWC_OK)
		return rc;
	for (struct ltable *t = c->tables; t; t = t->next)
		n++;
	if ((*names = calloc(n + 1, sizeof(char *))) == NULL)
		return LWC_ERR_NOMEM;
	for (struct ltable *t = c->tables; t; t = t->next)
		(*names)[i++] = strdup(t->sc.name);
	/* sorted by name */
	for (size_t a = 1; a < n; a++)
		for (size_t b = a; b > 0 && strcmp((*names)[b - 1], (*names)[b]) > 0; b--) {
			char *tmp = (*names)[b];
			(*names)[b] = (*names)[b - 1];
			(*names)[b - 1] = tmp;
		}
	return LWC_OK;
}

void lwc_free_names(char **names)
{
	if (names == NULL)
		return;
	for (size_t i = 0; names[i]; i++)
		free(names[i]);
	free(names);
}

int lwc_insert_max_rows(lwc_conn *c, const char *table, uint64_t *rows)
{
	struct ltable *t;

	*rows = 0;
	if (c == NULL || table == NULL)
		return LWC_ERR_ARG;
	if ((t = catalog_find(c, table, 1)) == NULL)
		return c->broken ? LWC_ERR_CLOSED : LWC_ERR_NO_TABLE;
	*rows = insert_max_rows(c, t);
	return LWC_OK;
}

int lwc_describe(lwc_conn *c, const char *table, struct lwc_column **cols, int *ncols)
{
	struct ltable *t;

	*cols = NULL;
	*ncols = 0;
	if (c == NULL || table == NULL)
		return LWC_ERR_ARG;
	if ((t = catalog_find(c, table, 1)) == NULL)
		return c->broken ? LWC_ERR_CLOSED : LWC_ERR_NO_TABLE;
	if ((*cols = calloc(t->sc.ncols, sizeof(**cols))) == NULL)
		return LWC_ERR_NOMEM;
	for (size_t i = 0; i < t->sc.ncols; i++) {
		struct lwc_column *o = &(*cols)[i];
		const struct sql_coldef *cd = &t->sc.cols[i];
		snprintf(o->name, sizeof(o->name), "%s", cd->name);
		o->type = ctype_to_type(cd->type);
		o->bits = cd->type == SQL_CT_INT ? 32 : cd->type == SQL_CT_BIGINT ? 64 : 0;
		o->max_len = cd->max_len;
		o->primary_key = cd->primary_key;
		o->not_null = cd->not_null || cd->primary_key;
		o->unique = cd->unique || (i < 64 && (t->unique >> i & 1));
		if (i < 64 && t->rtok[i] > 0)
			o->range = (t->range_ready >> i & 1) ? 1 : 2;
	}
	*ncols = (int)t->sc.ncols;
	return LWC_OK;
}
