/*
 * lwc_result.c - liblwc: results: streaming from the proxy, materialising and
 * ordering, the accessors.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>

#include <sodium.h>

#include "lwc_int.h"

/* ---- results: creating them, errors ----------------------------------------- */

lwc_result *result_new(void)
{
	lwc_result *r = calloc(1, sizeof(*r));
	if (r) {
		r->errpos = -1;
		r->limit = -1;
	}
	return r;
}

lwc_result nomem_result = {
	.status = LWC_RESULT_ERROR, .errmsg = (char *)"out of memory", .errpos = -1,
	.errcode = LWC_ERR_NOMEM
};

lwc_result *result_error(lwc_result *r, int code, int pos, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	if (r == NULL && (r = result_new()) == NULL)
		return &nomem_result;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(r->errmsg);
	r->errmsg = strdup(buf);
	r->status = LWC_RESULT_ERROR;
	r->errcode = code;
	r->errpos = pos;
	return r;
}

/* ---- results: streaming ------------------------------------------------------------- */

static void result_close_stream(lwc_result *r)
{
	if (r->chunk) {
		lwc__proxy_response__free_unpacked(r->chunk, NULL);
		r->chunk = NULL;
	}
	if (r->conn && r->conn->open == r)
		r->conn->open = NULL;
	r->conn = NULL;
}

/* Drain what the proxy still sends for this statement. */
void result_drain(lwc_result *r)
{
	while (r->conn && !r->stream_done) {
		Lwc__ProxyResponse *resp = NULL;
		if (conn_recv(r->conn, r->seq, &resp) != LWC_OK)
			break;
		if (resp->result_case != LWC__PROXY_RESPONSE__RESULT_ROWS)
			r->stream_done = 1;
		lwc__proxy_response__free_unpacked(resp, NULL);
	}
	result_close_stream(r);
}

/* The next matching decoded row from the stream: 1, 0 at the end, <0. */
int result_stream_next(lwc_result *r, struct lrow *row)
{
	for (;;) {
		if (r->chunk && r->chunk_pos < r->chunk->rows->n_records) {
			const ProtobufCBinaryData *rec = &r->chunk->rows->records[r->chunk_pos++];
			int rc = record_open(r->conn, &r->sc, rec->data, rec->len, row);
			if (rc != LWC_OK) {
				result_error(r, rc, -1, "a record of table %s does not decrypt under "
					     "this key (%s)", r->sc.name, lwc_strerror(rc));
				result_drain(r);
				return rc;
			}
			if (r->filter && r->stmt->where) {
				enum sql_tv tv;
				char err[256];
				if (sql_eval_checked(r->stmt->where, row->v, &tv, err, sizeof(err)) !=
				    LWC_OK) {
					row_free(row);
					result_error(r, LWC_ERR_ARG, -1, "%s", err);
					result_drain(r);
					return LWC_ERR_ARG;
				}
				if (tv != SQL_TRUE) {
					row_free(row);
					continue;
				}
			}
			return 1;
		}
		if (r->chunk) {
			lwc__proxy_response__free_unpacked(r->chunk, NULL);
			r->chunk = NULL;
		}
		if (r->stream_done || r->conn == NULL)
			return 0;
		{
			Lwc__ProxyResponse *resp = NULL;
			int rc = conn_recv(r->conn, r->seq, &resp);
			if (rc != LWC_OK) {
				result_error(r, rc, -1, "connection to the proxy lost: %s",
					     conn_lost_msg(rc));
				result_close_stream(r);
				return rc;
			}
			switch (resp->result_case) {
			case LWC__PROXY_RESPONSE__RESULT_ROWS:
				r->chunk = resp;
				r->chunk_pos = 0;
				break;
			case LWC__PROXY_RESPONSE__RESULT_DONE:
				r->stream_done = 1;
				lwc__proxy_response__free_unpacked(resp, NULL);
				result_close_stream(r);
				return 0;
			case LWC__PROXY_RESPONSE__RESULT_ERROR:
				r->stream_done = 1;
				conn_error_result(r->conn, r, resp->error);
				lwc__proxy_response__free_unpacked(resp, NULL);
				result_close_stream(r);
				return r->errcode;
			default:
				lwc__proxy_response__free_unpacked(resp, NULL);
				conn_break(r->conn);
				result_error(r, LWC_ERR_PROTO, -1, "unexpected answer from the proxy");
				result_close_stream(r);
				return LWC_ERR_PROTO;
			}
		}
	}
}

static int cmp_values_for_order(const struct sql_value *a, const struct sql_value *b)
{
	int c;

	/* PostgreSQL: NULLs sort after everything ascending */
	if (a->type == SQL_NULL || b->type == SQL_NULL)
		return (a->type == SQL_NULL) - (b->type == SQL_NULL);
	c = sql_value_cmp(a, b);
	return c == SQL_CMP_ERR ? 0 : c;
}

static const lwc_result *sort_ctx;

static int cmp_rows(const void *pa, const void *pb)
{
	const struct lrow *a = pa, *b = pb;
	const struct sql_stmt *st = sort_ctx->stmt;

	for (size_t i = 0; i < st->norder; i++) {
		int ci = st->order[i].col_index;
		int c = cmp_values_for_order(&a->v[ci], &b->v[ci]);
		if (c != 0)
			return st->order[i].desc ? -c : c;
	}
	return 0;
}

static pthread_mutex_t sort_mu = PTHREAD_MUTEX_INITIALIZER;

/* Read all rows (ORDER BY, COUNT(*)). */
int result_materialise(lwc_result *r)
{
	struct lrow row;
	int rc;

	while ((rc = result_stream_next(r, &row)) == 1) {
		if (r->count_only) {
			r->nrows++;
			row_free(&row);
			continue;
		}
		if (r->nrows == r->caprows) {
			size_t cap = r->caprows ? r->caprows * 2 : 256;
			void *p = realloc(r->rows, cap * sizeof(*r->rows));
			if (p == NULL) {
				row_free(&row);
				result_drain(r);
				result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
				return LWC_ERR_NOMEM;
			}
			r->rows = p;
			r->caprows = cap;
		}
		r->rows[r->nrows++] = row;
	}
	if (rc < 0)
		return rc;
	if (!r->count_only && r->stmt->norder > 0 && r->nrows > 1) {
		pthread_mutex_lock(&sort_mu);
		sort_ctx = r;
		qsort(r->rows, r->nrows, sizeof(*r->rows), cmp_rows);
		pthread_mutex_unlock(&sort_mu);
	}
	r->materialised = 1;
	r->pos = 0;
	return LWC_OK;
}

int lwc_result_next(lwc_result *r)
{
	int rc;

	if (r == NULL || r->status != LWC_RESULT_ROWS)
		return r && r->status == LWC_RESULT_ERROR ? (r->errcode ? r->errcode : LWC_ERR_ARG)
							  : 0;
	if (r->have_cur && !r->materialised)
		row_free(&r->cur);
	r->have_cur = 0;
	if (r->limit >= 0 && (int64_t)r->returned >= r->limit) {
		result_drain(r);
		return 0;
	}
	if (r->count_only) {
		if (r->returned > 0)
			return 0;
		if (!r->materialised && (rc = result_materialise(r)) != LWC_OK)
			return rc;
		r->cur.v = calloc(1, sizeof(*r->cur.v));
		r->cur.text = NULL;
		if (r->cur.v == NULL)
			return LWC_ERR_NOMEM;
		r->cur.v[0].type = SQL_INT;
		r->cur.v[0].i = (int64_t)r->nrows;
		r->materialised = 0;        /* cur is ours to free */
		r->have_cur = 1;
		r->returned = 1;
		r->count = 1;
		snprintf(r->tag, sizeof(r->tag), "SELECT 1");
		return 1;
	}
	if (r->stmt->norder > 0 && !r->materialised) {
		if ((rc = result_materialise(r)) != LWC_OK)
			return rc;
	}
	if (r->materialised) {
		if (r->pos >= r->nrows) {
			snprintf(r->tag, sizeof(r->tag), "SELECT %llu", (unsigned long long)r->returned);
			return 0;
		}
		r->cur = r->rows[r->pos++];
	} else if (r->have_peek) {
		r->cur = r->peek;
		r->have_peek = 0;
	} else {
		rc = result_stream_next(r, &r->cur);
		if (rc <= 0) {
			if (rc == 0)
				snprintf(r->tag, sizeof(r->tag), "SELECT %llu",
					 (unsigned long long)r->returned);
			return rc;
		}
	}
	r->have_cur = 1;
	r->returned++;
	r->count = r->returned;
	return 1;
}

/* ---- results: accessors ------------------------------------------------------------- */

enum lwc_result_status lwc_result_status(const lwc_result *r)
{
	return r ? r->status : LWC_RESULT_ERROR;
}

const char *lwc_result_error(const lwc_result *r)
{
	return r == NULL ? "no result" : r->status == LWC_RESULT_ERROR && r->errmsg ? r->errmsg : "";
}

int lwc_result_error_pos(const lwc_result *r)
{
	return r && r->status == LWC_RESULT_ERROR ? r->errpos : -1;
}

int lwc_result_error_code(const lwc_result *r)
{
	return r && r->status == LWC_RESULT_ERROR ? r->errcode : LWC_OK;
}

const char *lwc_result_tag(const lwc_result *r)
{
	return r ? r->tag : "";
}

uint64_t lwc_result_count(const lwc_result *r)
{
	return r ? r->count : 0;
}

int lwc_result_ncols(const lwc_result *r)
{
	return r && r->status == LWC_RESULT_ROWS ? r->ncols : 0;
}

const char *lwc_result_colname(const lwc_result *r, int col)
{
	return r && r->status == LWC_RESULT_ROWS && col >= 0 && col < r->ncols ? r->colname[col] : "";
}

enum lwc_type lwc_result_coltype(const lwc_result *r, int col)
{
	return r && r->status == LWC_RESULT_ROWS && col >= 0 && col < r->ncols ? r->coltype[col]
									      : LWC_TYPE_NULL;
}

const struct sql_value *result_cur_value(const lwc_result *r, int col)
{
	if (r == NULL || !r->have_cur || col < 0 || col >= r->ncols)
		return NULL;
	return &r->cur.v[r->colsrc[col]];
}

enum lwc_type lwc_value_type(const lwc_result *r, int col)
{
	const struct sql_value *v = result_cur_value(r, col);
	return v ? (enum lwc_type)v->type : LWC_TYPE_NULL;
}

int lwc_value_is_null(const lwc_result *r, int col)
{
	const struct sql_value *v = result_cur_value(r, col);
	return v == NULL || v->type == SQL_NULL;
}

int64_t lwc_value_int(const lwc_result *r, int col)
{
	const struct sql_value *v = result_cur_value(r, col);
	if (v == NULL)
		return 0;
	return v->type == SQL_INT ? v->i : v->type == SQL_FLOAT ? (int64_t)v->f : 0;
}

double lwc_value_float(const lwc_result *r, int col)
{
	const struct sql_value *v = result_cur_value(r, col);
	if (v == NULL)
		return 0;
	return v->type == SQL_FLOAT ? v->f : v->type == SQL_INT ? (double)v->i : 0;
}

/* Shortest text that reads back as the same double, written as PostgreSQL
 * writes it: plain decimals, an exponent only below 1e-4 or from 1e15. */
static void fmt_double(char *buf, size_t len, double d)
{
	char tmp[40];
	int prec, exp;

	if (isinf(d)) {
		snprintf(buf, len, d > 0 ? "Infinity" : "-Infinity");
		return;
	}
	if (isnan(d)) {
		snprintf(buf, len, "NaN");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
	exp = atoi(strchr(tmp, 'e') + 1);
	if (exp < -4 || exp >= 15)
		snprintf(buf, len, "%.*e", prec - 1, d);
	else
		snprintf(buf, len, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, d);
}

const char *lwc_value_text(lwc_result *r, int col, size_t *len)
{
	const struct sql_value *v = result_cur_value(r, col);
	const char *s = "";

	if (v != NULL) {
		switch (v->type) {
		case SQL_INT:
			if (v->boolean)
				snprintf(r->numbuf[col], sizeof(r->numbuf[col]), "%s", v->i ? "t" : "f");
			else
				snprintf(r->numbuf[col], sizeof(r->numbuf[col]), "%lld", (long long)v->i);
			s = r->numbuf[col];
			break;
		case SQL_FLOAT:
			fmt_double(r->numbuf[col], sizeof(r->numbuf[col]), v->f);
			s = r->numbuf[col];
			break;
		case SQL_TEXT:
			if (len)
				*len = v->len;
			return v->s;
		default:
			break;
		}
	}
	if (len)
		*len = strlen(s);
	return s;
}

void lwc_result_free(lwc_result *r)
{
	if (r == NULL || r == &nomem_result)
		return;
	result_drain(r);
	if (r->have_cur && !r->materialised)
		row_free(&r->cur);
	if (r->have_peek)
		row_free(&r->peek);
	for (size_t i = 0; i < r->nrows && !r->count_only; i++)
		row_free(&r->rows[i]);
	free(r->rows);
	free(r->colname);
	free(r->coltype);
	free(r->colsrc);
	free(r->numbuf);
	schema_free(&r->sc);
	sql_free(r->stmt);
	free(r->errmsg);
	free(r);
}
