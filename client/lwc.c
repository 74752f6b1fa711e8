/*
 * lwc.c - liblwc: see lwc.h.
 *
 * Record layout (R bytes, sealed under the record key with the table name as
 * AAD, giving the S = R + 40 bytes the proxy stores):
 *   ncols(1), then per column a type tag (CRY_TAG_*) and the value:
 *   INT 8 bytes big-endian two's complement, FLOAT 8 bytes IEEE-754
 *   big-endian, TEXT 2-byte big-endian length and the bytes, NULL nothing;
 *   zero padding to R.
 * Schema blob (what the proxy stores for a table, opaque to it), sealed under
 * the record key with AAD "lwc-schema":
 *   "LWS1", ncols(1), pk(1, 0xff none), name(len 1 + bytes), then per column
 *   name(len 1 + bytes), type(1), max_len(4 BE), flags(1: 1 pk, 2 not null,
 *   4 unique).
 * Tokens: table handle = token("", "", TEXT, name); a value of column c of
 * table t = token(t, c, tag, value) with INT/FLOAT as 8 bytes big-endian
 * (-0.0 as 0.0) and TEXT as its bytes.
 *
 * WHERE translation: every expression e gets two index predicates, T(e) the
 * rows where e is TRUE and F(e) the rows where e is FALSE, each exact or a
 * superset.  Equality, IN and IS [NOT] NULL are exact; ranges and anything
 * else are supersets (the rows whose column is not NULL, or all rows); AND,
 * OR and NOT combine them (NOT swaps T and F, which is what makes SQL's
 * three-valued NOT exact).  When T(where) is not exact the proxy returns
 * candidates and the library filters them with sql_eval.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "chan.h"
#include "cry.h"
#include "lwc.h"
#include "lwc.pb-c.h"
#include "net.h"
#include "sql.h"
#include "sql_int.h"
#include "userkey.h"
#include "wire.h"

#define TIMEOUT_MS        120000
#define INSERT_FRAME_MAX  (48u << 20)    /* one Insert message (atomic)       */
#define RESP_MAX          WIRE_FRAME_MAX
#define SCHEMA_AAD        "lwc-schema"

struct ltable {
	struct sql_schema sc;
	uint8_t handle[CRY_TOKEN_BYTES];
	uint64_t unique;
	struct ltable *next;
};

struct keys {
	uint8_t tok[CRY_KEY_BYTES];
	uint8_t rec[CRY_KEY_BYTES];
};

struct lwc_conn {
	int fd;
	struct chan *chan;
	char user[USERKEY_NAME_MAX + 1];
	struct keys *k;                  /* sodium_malloc'ed                 */
	uint32_t R, S;
	uint64_t seq;
	int broken;
	struct ltable *tables;
	int catalog_loaded;
	lwc_result *open;                /* a streaming result in progress   */
	volatile sig_atomic_t *cancel;   /* lwc_set_cancel_flag              */
};

/* A decoded row: values point into text (owned). */
struct lrow {
	struct sql_value *v;
	char *text;
};

struct lwc_result {
	enum lwc_result_status status;
	char *errmsg;
	int errpos, errcode;
	char tag[64];
	uint64_t count;

	/* query */
	lwc_conn *conn;                  /* set while streaming              */
	uint64_t seq;
	struct ltable *t;                /* the table (copy of its schema)   */
	struct sql_schema sc;            /* copy owned by the result         */
	struct sql_stmt *stmt;           /* owned                            */
	int filter;                      /* residual WHERE on candidates     */
	int ncols;
	char (*colname)[SQL_NAME_MAX + 1];
	enum lwc_type *coltype;
	int *colsrc;                     /* projection: source column        */
	int count_only;
	int64_t limit;
	/* stream state */
	Lwc__ProxyResponse *chunk;       /* current Rows chunk               */
	size_t chunk_pos;
	int stream_done;
	/* materialised rows (ORDER BY, COUNT(*)) */
	struct lrow *rows;
	size_t nrows, caprows, pos;
	int materialised;
	/* the first row, read by lwc_exec so errors show at once */
	struct lrow peek;
	int have_peek;
	/* current row */
	struct lrow cur;
	int have_cur;
	uint64_t returned;
	char (*numbuf)[64];              /* per column: text of numbers      */
};

/* ---- small helpers --------------------------------------------------------- */

static lwc_result *result_new(void)
{
	lwc_result *r = calloc(1, sizeof(*r));
	if (r) {
		r->errpos = -1;
		r->limit = -1;
	}
	return r;
}

static lwc_result nomem_result = {
	.status = LWC_RESULT_ERROR, .errmsg = (char *)"out of memory", .errpos = -1,
	.errcode = LWC_ERR_NOMEM
};

static lwc_result *result_error(lwc_result *r, int code, int pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static lwc_result *result_error(lwc_result *r, int code, int pos, const char *fmt, ...)
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

/* Free a buffer that held plaintext, wiped first like keys (its whole
 * allocation: rows come from several places, each with its own size). */
static void wipe_free(void *p)
{
	if (p == NULL)
		return;
	sodium_memzero(p, malloc_usable_size(p));
	free(p);
}

static void row_free(struct lrow *row)
{
	wipe_free(row->v);
	wipe_free(row->text);
	row->v = NULL;
	row->text = NULL;
}

static void schema_free(struct sql_schema *sc)
{
	free(sc->cols);
	sc->cols = NULL;
	sc->ncols = 0;
}

static int schema_copy(struct sql_schema *dst, const struct sql_schema *src)
{
	*dst = *src;
	dst->cols = malloc((src->ncols ? src->ncols : 1) * sizeof(*dst->cols));
	if (dst->cols == NULL)
		return LWC_ERR_NOMEM;
	memcpy(dst->cols, src->cols, src->ncols * sizeof(*dst->cols));
	return LWC_OK;
}

static enum lwc_type ctype_to_type(enum sql_ctype t)
{
	switch (t) {
	case SQL_CT_INT:
	case SQL_CT_BIGINT:
		return LWC_TYPE_INT;
	case SQL_CT_FLOAT:
		return LWC_TYPE_FLOAT;
	default:
		return LWC_TYPE_TEXT;
	}
}

/* A table's handle: LWC_OK or the error of the derivation (never a token
 * of zeros, which would name one table for every failure). */
static int handle_of(const struct keys *k, const char *table, uint8_t out[CRY_TOKEN_BYTES])
{
	return cry_token(out, k->tok, "", "", CRY_TAG_TEXT, table, strlen(table));
}

/* Token of a value of column c (value already of the column's type, or NULL);
 * LWC_OK or the derivation's error. */
static int value_token(const struct keys *k, const struct sql_schema *sc, size_t c,
		       const struct sql_value *v, uint8_t out[CRY_TOKEN_BYTES])
{
	uint8_t b[8];
	int rc;

	switch (v->type) {
	case SQL_INT:
		cry_put_be64(b, (uint64_t)v->i);
		rc = cry_token(out, k->tok, sc->name, sc->cols[c].name, CRY_TAG_INT, b, 8);
		break;
	case SQL_FLOAT: {
		double d = v->f == 0.0 ? 0.0 : v->f;    /* -0.0 equals 0.0 */
		uint64_t u;
		memcpy(&u, &d, 8);
		cry_put_be64(b, u);
		rc = cry_token(out, k->tok, sc->name, sc->cols[c].name, CRY_TAG_FLOAT, b, 8);
		break;
	}
	case SQL_TEXT:
		rc = cry_token(out, k->tok, sc->name, sc->cols[c].name, CRY_TAG_TEXT, v->s, v->len);
		break;
	default:
		rc = cry_token(out, k->tok, sc->name, sc->cols[c].name, CRY_TAG_NULL, NULL, 0);
	}
	return rc;
}

/* ---- records ---------------------------------------------------------------- */

static size_t encoded_size(const struct sql_schema *sc, const struct sql_value *v)
{
	size_t n = 1;

	for (size_t c = 0; c < sc->ncols; c++)
		n += 1 + (v[c].type == SQL_NULL ? 0 : v[c].type == SQL_TEXT ? 2 + v[c].len : 8);
	return n;
}

/* Encode and seal a row into out (S bytes). */
static int seal_row(lwc_conn *c, const struct sql_schema *sc, const struct sql_value *v,
		    uint8_t *out, char *err, size_t errlen)
{
	uint8_t *rec;
	size_t p = 0, need = encoded_size(sc, v);
	int rc;

	if (need > c->R) {
		lwc_errf(err, errlen, "row of %zu bytes exceeds the database's record size of %u "
			 "bytes", need, c->R);
		return LWC_ERR_TOO_BIG;
	}
	if ((rec = calloc(1, c->R)) == NULL)
		return LWC_ERR_NOMEM;
	rec[p++] = (uint8_t)sc->ncols;
	for (size_t i = 0; i < sc->ncols; i++) {
		rec[p++] = (uint8_t)v[i].type;
		if (v[i].type == SQL_INT) {
			cry_put_be64(rec + p, (uint64_t)v[i].i);
			p += 8;
		} else if (v[i].type == SQL_FLOAT) {
			double d = v[i].f == 0.0 ? 0.0 : v[i].f;   /* a literal -0 is 0 */
			uint64_t u;
			memcpy(&u, &d, 8);
			cry_put_be64(rec + p, u);
			p += 8;
		} else if (v[i].type == SQL_TEXT) {
			rec[p++] = (uint8_t)(v[i].len >> 8);
			rec[p++] = (uint8_t)v[i].len;
			memcpy(rec + p, v[i].s, v[i].len);
			p += v[i].len;
		}
	}
	rc = cry_record_seal(out, c->k->rec, rec, c->R, sc->name);
	sodium_memzero(rec, c->R);
	free(rec);
	return rc;
}

/* Open and decode a record into row (values and their text). */
static int open_row(lwc_conn *c, const struct sql_schema *sc, const uint8_t *ct, size_t len,
		    struct lrow *row)
{
	uint8_t *rec;
	size_t p = 0, tlen = 0;
	int rc = LWC_ERR_INTEGRITY;

	row->v = NULL;
	row->text = NULL;
	if (len != c->S || (rec = malloc(c->R)) == NULL)
		return len != c->S ? LWC_ERR_INTEGRITY : LWC_ERR_NOMEM;
	if (cry_record_open(rec, c->k->rec, ct, len, sc->name) != LWC_OK)
		goto out;
	if (rec[0] != sc->ncols)
		goto out;
	row->v = calloc(sc->ncols ? sc->ncols : 1, sizeof(*row->v));
	row->text = malloc(c->R + sc->ncols);
	if (row->v == NULL || row->text == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	p = 1;
	for (size_t i = 0; i < sc->ncols; i++) {
		uint8_t tag;

		if (p >= c->R)
			goto bad;
		tag = rec[p++];
		row->v[i].type = (enum sql_vtype)tag;
		if (tag == CRY_TAG_NULL)
			continue;
		if (tag == CRY_TAG_INT || tag == CRY_TAG_FLOAT) {
			uint64_t u;
			if (p + 8 > c->R)
				goto bad;
			u = cry_get_be64(rec + p);
			p += 8;
			if (tag == CRY_TAG_INT) {
				row->v[i].i = (int64_t)u;
				row->v[i].i4 = i < sc->ncols && sc->cols[i].type == SQL_CT_INT;
			}
			else {
				memcpy(&row->v[i].f, &u, 8);
			}
		} else if (tag == CRY_TAG_TEXT) {
			size_t l;
			if (p + 2 > c->R)
				goto bad;
			l = (size_t)rec[p] << 8 | rec[p + 1];
			p += 2;
			if (p + l > c->R)
				goto bad;
			memcpy(row->text + tlen, rec + p, l);
			row->text[tlen + l] = '\0';
			row->v[i].s = row->text + tlen;
			row->v[i].len = l;
			tlen += l + 1;
			p += l;
		} else {
			goto bad;
		}
	}
	rc = LWC_OK;
	goto out;
bad:
	rc = LWC_ERR_FORMAT;
out:
	if (rc != LWC_OK)
		row_free(row);
	sodium_memzero(rec, c->R);
	free(rec);
	return rc;
}

/* ---- schema blobs ------------------------------------------------------------ */

static int schema_seal(lwc_conn *c, const struct sql_schema *sc, uint8_t **out, size_t *len)
{
	size_t cap = 16 + strlen(sc->name) + sc->ncols * (SQL_NAME_MAX + 8), p = 0;
	uint8_t *b = malloc(cap), *o;
	int rc;

	if (b == NULL)
		return LWC_ERR_NOMEM;
	memcpy(b, "LWS1", 4);
	p = 4;
	b[p++] = (uint8_t)sc->ncols;
	b[p++] = sc->pk < 0 ? 0xff : (uint8_t)sc->pk;
	b[p++] = (uint8_t)strlen(sc->name);
	memcpy(b + p, sc->name, strlen(sc->name));
	p += strlen(sc->name);
	for (size_t i = 0; i < sc->ncols; i++) {
		const struct sql_coldef *cd = &sc->cols[i];
		size_t nl = strlen(cd->name);
		b[p++] = (uint8_t)nl;
		memcpy(b + p, cd->name, nl);
		p += nl;
		b[p++] = (uint8_t)cd->type;
		b[p++] = (uint8_t)(cd->max_len >> 24);
		b[p++] = (uint8_t)(cd->max_len >> 16);
		b[p++] = (uint8_t)(cd->max_len >> 8);
		b[p++] = (uint8_t)cd->max_len;
		b[p++] = (uint8_t)((cd->primary_key ? 1 : 0) | (cd->not_null ? 2 : 0) |
				   (cd->unique ? 4 : 0));
	}
	if ((o = malloc(p + CRY_RECORD_OVERHEAD)) == NULL) {
		free(b);
		return LWC_ERR_NOMEM;
	}
	rc = cry_record_seal(o, c->k->rec, b, p, SCHEMA_AAD);
	free(b);
	if (rc != LWC_OK) {
		free(o);
		return rc;
	}
	*out = o;
	*len = p + CRY_RECORD_OVERHEAD;
	return LWC_OK;
}

static int schema_open(lwc_conn *c, const uint8_t *blob, size_t len, struct ltable *t)
{
	uint8_t *b;
	size_t n, p = 0;
	int rc = LWC_ERR_FORMAT;

	if (len <= CRY_RECORD_OVERHEAD + 7 || (b = malloc(len)) == NULL)
		return LWC_ERR_FORMAT;
	n = len - CRY_RECORD_OVERHEAD;
	if (cry_record_open(b, c->k->rec, blob, len, SCHEMA_AAD) != LWC_OK ||
	    memcmp(b, "LWS1", 4) != 0)
		goto out;
	p = 4;
	t->sc.ncols = b[p++];
	t->sc.pk = b[p] == 0xff ? -1 : b[p];
	p++;
	if (p >= n || b[p] > SQL_NAME_MAX || p + 1 + b[p] > n)
		goto out;
	memcpy(t->sc.name, b + p + 1, b[p]);
	t->sc.name[b[p]] = '\0';
	p += 1 + b[p];
	if (t->sc.ncols == 0 || (t->sc.cols = calloc(t->sc.ncols, sizeof(*t->sc.cols))) == NULL)
		goto out;
	for (size_t i = 0; i < t->sc.ncols; i++) {
		struct sql_coldef *cd = &t->sc.cols[i];
		if (p >= n || b[p] > SQL_NAME_MAX || p + 1 + b[p] + 6 > n)
			goto bad;
		memcpy(cd->name, b + p + 1, b[p]);
		cd->name[b[p]] = '\0';
		p += 1 + b[p];
		cd->type = (enum sql_ctype)b[p++];
		cd->max_len = (uint32_t)b[p] << 24 | (uint32_t)b[p + 1] << 16 |
			      (uint32_t)b[p + 2] << 8 | b[p + 3];
		p += 4;
		cd->primary_key = b[p] & 1;
		cd->not_null = (b[p] & 2) != 0;
		cd->unique = (b[p] & 4) != 0;
		p++;
	}
	if (t->sc.pk >= (int)t->sc.ncols)
		goto bad;
	rc = LWC_OK;
	goto out;
bad:
	schema_free(&t->sc);
out:
	free(b);
	return rc;
}

/* ---- the channel ---------------------------------------------------------------- */

static void conn_break(lwc_conn *c)
{
	c->broken = 1;
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
}

static int send_req(lwc_conn *c, Lwc__ProxyRequest *req)
{
	int rc;

	if (c->broken)
		return LWC_ERR_CLOSED;
	rc = chan_write_msg(c->chan, c->fd, &req->base);
	if (rc != LWC_OK)
		conn_break(c);
	return rc;
}

/* Next response of the statement seq. */
static int recv_resp(lwc_conn *c, uint64_t seq, Lwc__ProxyResponse **out)
{
	ProtobufCMessage *m = NULL;
	int rc;

	*out = NULL;
	if (c->broken)
		return LWC_ERR_CLOSED;
	rc = chan_read_msg(c->chan, c->fd, &lwc__proxy_response__descriptor, RESP_MAX, &m,
			   TIMEOUT_MS);
	if (rc != LWC_OK) {
		conn_break(c);
		return rc;
	}
	*out = (Lwc__ProxyResponse *)m;
	if ((*out)->seq != seq && (*out)->result_case != LWC__PROXY_RESPONSE__RESULT_ERROR) {
		lwc__proxy_response__free_unpacked(*out, NULL);
		*out = NULL;
		conn_break(c);
		return LWC_ERR_PROTO;
	}
	return LWC_OK;
}

static const char *conn_lost_msg(int rc)
{
	switch (rc) {
	case LWC_ERR_CLOSED:
		return "the proxy closed the connection";
	case LWC_ERR_TIMEOUT:
		return "the proxy did not answer in time";
	default:
		return lwc_strerror(rc);
	}
}

/* An Error response as a result (a revoked user's connection is over). */
static lwc_result *error_from(lwc_conn *c, lwc_result *r, const Lwc__Error *e)
{
	int code = e->code < 0 ? e->code : LWC_ERR_PROTO;

	if (code == LWC_ERR_REVOKED ||
	    (code == LWC_ERR_INTEGRITY && strstr(e->message ? e->message : "", "closing") != NULL))
		conn_break(c);
	return result_error(r, code, -1, "%s", e->message && e->message[0] ? e->message
						: lwc_strerror(code));
}

/* Send a request and wait for Done (or Error); rows/candidates are not
 * expected.  *count gets Done.count. */
static lwc_result *simple_call(lwc_conn *c, Lwc__ProxyRequest *req, uint64_t *count)
{
	Lwc__ProxyResponse *resp = NULL;
	lwc_result *r = NULL;
	int rc;

	req->seq = ++c->seq;
	if ((rc = send_req(c, req)) != LWC_OK)
		return result_error(NULL, rc, -1, "connection to the proxy lost: %s",
				    conn_lost_msg(rc));
	for (;;) {
		if ((rc = recv_resp(c, req->seq, &resp)) != LWC_OK)
			return result_error(NULL, rc, -1, "connection to the proxy lost: %s",
					    conn_lost_msg(rc));
		if (resp->result_case == LWC__PROXY_RESPONSE__RESULT_DONE) {
			if (count)
				*count = resp->done->count;
			lwc__proxy_response__free_unpacked(resp, NULL);
			return NULL;
		}
		if (resp->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR) {
			r = error_from(c, NULL, resp->error);
			lwc__proxy_response__free_unpacked(resp, NULL);
			return r;
		}
		lwc__proxy_response__free_unpacked(resp, NULL);
		conn_break(c);
		return result_error(NULL, LWC_ERR_PROTO, -1, "unexpected answer from the proxy");
	}
}

/* ---- catalog ---------------------------------------------------------------------- */

static void tables_free(lwc_conn *c)
{
	while (c->tables) {
		struct ltable *t = c->tables;
		c->tables = t->next;
		schema_free(&t->sc);
		free(t);
	}
	c->catalog_loaded = 0;
}

static int load_catalog(lwc_conn *c, char *err, size_t errlen)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__ListTables lt = LWC__LIST_TABLES__INIT;
	Lwc__ProxyResponse *resp = NULL;
	int rc;

	req.op_case = LWC__PROXY_REQUEST__OP_LIST_TABLES;
	req.list_tables = &lt;
	req.seq = ++c->seq;
	if ((rc = send_req(c, &req)) != LWC_OK || (rc = recv_resp(c, req.seq, &resp)) != LWC_OK) {
		lwc_errf(err, errlen, "connection to the proxy lost: %s", conn_lost_msg(rc));
		return rc;
	}
	if (resp->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR) {
		rc = resp->error->code < 0 ? resp->error->code : LWC_ERR_PROTO;
		lwc_errf(err, errlen, "%s", resp->error->message ? resp->error->message
			 : lwc_strerror(rc));
		if (rc == LWC_ERR_REVOKED)
			conn_break(c);
		lwc__proxy_response__free_unpacked(resp, NULL);
		return rc;
	}
	if (resp->result_case != LWC__PROXY_RESPONSE__RESULT_CATALOG) {
		lwc__proxy_response__free_unpacked(resp, NULL);
		lwc_errf(err, errlen, "unexpected answer from the proxy");
		return LWC_ERR_PROTO;
	}
	tables_free(c);
	c->R = resp->catalog->record_bytes;
	c->S = c->R + CRY_RECORD_OVERHEAD;
	for (size_t i = 0; i < resp->catalog->n_tables; i++) {
		const Lwc__TableInfo *ti = resp->catalog->tables[i];
		struct ltable *t = calloc(1, sizeof(*t));

		if (t == NULL)
			break;
		if (ti->table.len != CRY_TOKEN_BYTES ||
		    schema_open(c, ti->schema.data, ti->schema.len, t) != LWC_OK) {
			free(t);     /* a table of other keys: not ours to read */
			continue;
		}
		memcpy(t->handle, ti->table.data, CRY_TOKEN_BYTES);
		t->unique = ti->unique_cols;
		t->next = c->tables;
		c->tables = t;
	}
	c->catalog_loaded = 1;
	lwc__proxy_response__free_unpacked(resp, NULL);
	return LWC_OK;
}

static struct ltable *find_table(lwc_conn *c, const char *name, int refresh)
{
	char err[256];

	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 || !c->catalog_loaded) {
			if (!refresh && c->catalog_loaded)
				return NULL;
			if (load_catalog(c, err, sizeof(err)) != LWC_OK)
				return NULL;
		}
		for (struct ltable *t = c->tables; t; t = t->next)
			if (strcmp(t->sc.name, name) == 0)
				return t;
	}
	return NULL;
}

/* ---- connect ------------------------------------------------------------------------ */

int lwc_connect(lwc_conn **out, const char *key_file, const char *proxy, char *err,
		size_t errlen)
{
	struct userkey *uk = NULL;
	lwc_conn *c;
	int rc;

	*out = NULL;
	if (cry_init() != LWC_OK) {
		lwc_errf(err, errlen, "libsodium failed to initialise");
		return LWC_ERR_CRYPTO;
	}
	if ((rc = userkey_read(key_file, &uk, err, errlen)) != LWC_OK)
		return rc;
	if (proxy == NULL || proxy[0] == '\0')
		proxy = uk->proxy;
	if (proxy[0] == '\0') {
		lwc_errf(err, errlen, "no proxy address: give one (--proxy HOST:PORT); the key file "
			 "%s names none", key_file);
		userkey_free(uk);
		return LWC_ERR_ARG;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL || (c->k = sodium_malloc(sizeof(*c->k))) == NULL) {
		free(c);
		userkey_free(uk);
		return LWC_ERR_NOMEM;
	}
	c->fd = -1;
	snprintf(c->user, sizeof(c->user), "%s", uk->name);
	if ((rc = cry_kdf(c->k->tok, uk->ku, CRY_SUB_TOKEN, CRY_CTX_USER)) != LWC_OK ||
	    (rc = cry_kdf(c->k->rec, uk->ku, CRY_SUB_RECORD, CRY_CTX_USER)) != LWC_OK ||
	    (rc = chan_new(&c->chan, 0)) != LWC_OK)
		goto fail;
	if ((rc = net_connect(proxy, 10000, &c->fd, err, errlen)) != LWC_OK)
		goto fail;
	if ((rc = chan_connect(c->chan, c->fd, uk->name, uk->kdbu, 10000, err, errlen)) != LWC_OK)
		goto fail;
	userkey_free(uk);
	uk = NULL;
	if ((rc = load_catalog(c, err, errlen)) != LWC_OK)
		goto fail;
	*out = c;
	return LWC_OK;
fail:
	userkey_free(uk);
	lwc_close(c);
	return rc;
}

void lwc_close(lwc_conn *c)
{
	if (c == NULL)
		return;
	if (c->open) {
		c->open->conn = NULL;
		c->open = NULL;
	}
	tables_free(c);
	if (c->fd >= 0)
		close(c->fd);
	chan_free(c->chan);
	if (c->k)
		sodium_free(c->k);
	free(c);
}

void lwc_set_cancel_flag(lwc_conn *c, volatile sig_atomic_t *flag)
{
	if (c)
		c->cancel = flag;
}

const char *lwc_conn_user(const lwc_conn *c)
{
	return c ? c->user : "";
}

int lwc_conn_ok(const lwc_conn *c)
{
	return c && !c->broken;
}

/* ---- WHERE translation ------------------------------------------------------------- */

struct pnode {
	Lwc__Pred p;
	uint8_t (*toks)[CRY_TOKEN_BYTES];
};

static void pred_free(Lwc__Pred *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n_args; i++)
		pred_free(p->args[i]);
	free(p->args);
	free(p->tokens);
	free(((struct pnode *)p)->toks);
	free(p);
}

static Lwc__Pred *pnew(Lwc__Pred__Op op)
{
	struct pnode *n = calloc(1, sizeof(*n));

	if (n == NULL)
		return NULL;
	lwc__pred__init(&n->p);
	n->p.op = op;
	return &n->p;
}

/* A predicate over column col with n tokens (EQ when n == 1). */
static Lwc__Pred *ptok(uint32_t col, size_t n)
{
	Lwc__Pred *p = pnew(n == 1 ? LWC__PRED__OP__EQ : LWC__PRED__OP__IN);
	struct pnode *pn = (struct pnode *)p;

	if (p == NULL)
		return NULL;
	p->col = col;
	pn->toks = calloc(n ? n : 1, CRY_TOKEN_BYTES);
	p->tokens = calloc(n ? n : 1, sizeof(*p->tokens));
	if (pn->toks == NULL || p->tokens == NULL) {
		pred_free(p);
		return NULL;
	}
	p->n_tokens = n;
	for (size_t i = 0; i < n; i++) {
		p->tokens[i].data = pn->toks[i];
		p->tokens[i].len = CRY_TOKEN_BYTES;
	}
	return p;
}

static Lwc__Pred *pbin(Lwc__Pred__Op op, Lwc__Pred *a, Lwc__Pred *b)
{
	Lwc__Pred *p;

	if (a == NULL || b == NULL)
		goto fail;
	/* simplifications: ALL and NONE */
	if (op == LWC__PRED__OP__AND) {
		if (a->op == LWC__PRED__OP__ALL) { pred_free(a); return b; }
		if (b->op == LWC__PRED__OP__ALL) { pred_free(b); return a; }
		if (a->op == LWC__PRED__OP__NONE) { pred_free(b); return a; }
		if (b->op == LWC__PRED__OP__NONE) { pred_free(a); return b; }
	} else {
		if (a->op == LWC__PRED__OP__NONE) { pred_free(a); return b; }
		if (b->op == LWC__PRED__OP__NONE) { pred_free(b); return a; }
		if (a->op == LWC__PRED__OP__ALL) { pred_free(b); return a; }
		if (b->op == LWC__PRED__OP__ALL) { pred_free(a); return b; }
	}
	if ((p = pnew(op)) == NULL || (p->args = calloc(2, sizeof(*p->args))) == NULL) {
		pred_free(p);
		goto fail;
	}
	p->args[0] = a;
	p->args[1] = b;
	p->n_args = 2;
	return p;
fail:
	pred_free(a);
	pred_free(b);
	return NULL;
}

static Lwc__Pred *pnot(Lwc__Pred *a)
{
	Lwc__Pred *p;

	if (a == NULL)
		return NULL;
	if (a->op == LWC__PRED__OP__ALL || a->op == LWC__PRED__OP__NONE) {
		a->op = a->op == LWC__PRED__OP__ALL ? LWC__PRED__OP__NONE : LWC__PRED__OP__ALL;
		return a;
	}
	if (a->op == LWC__PRED__OP__NOT) {
		p = a->args[0];
		a->n_args = 0;
		pred_free(a);
		return p;
	}
	if ((p = pnew(LWC__PRED__OP__NOT)) == NULL || (p->args = calloc(1, sizeof(*p->args))) == NULL) {
		pred_free(p);
		pred_free(a);
		return NULL;
	}
	p->args[0] = a;
	p->n_args = 1;
	return p;
}

struct tr {
	lwc_conn *c;
	const struct sql_schema *sc;
	char err[512];
	int errpos;
	int code;
};

/* value_token inside the predicate translation: a failure is the
 * statement's error. */
static int tr_token(struct tr *x, size_t c, const struct sql_value *v,
		    uint8_t out[CRY_TOKEN_BYTES])
{
	int rc = value_token(x->c->k, x->sc, c, v, out);

	if (rc != LWC_OK) {
		snprintf(x->err, sizeof(x->err), "keyword token derivation failed: %s",
			 lwc_strerror(rc));
		x->code = LWC_ERR_CRYPTO;
		return -1;
	}
	return 0;
}

/* The literal of a comparison converted to the column's type for equality:
 * 1 converted, 0 impossible (no value of the column can equal it), -1 error. */
static int lit_for_eq(struct tr *x, const struct sql_coldef *cd, const struct sql_value *lit,
		      struct sql_value *out, int pos)
{
	*out = *lit;
	switch (cd->type) {
	case SQL_CT_INT:
	case SQL_CT_BIGINT: {
		double lo = cd->type == SQL_CT_INT ? -2147483648.0 : -9223372036854775808.0;
		double hi = cd->type == SQL_CT_INT ? 2147483647.0 : 9223372036854775807.0;
		if (lit->type == SQL_INT) {
			if (cd->type == SQL_CT_INT && (lit->i < INT32_MIN || lit->i > INT32_MAX))
				return 0;
			return 1;
		}
		if (lit->type == SQL_FLOAT) {
			if (!(lit->f >= lo && lit->f < -lo) || lit->f != floor(lit->f) || lit->f > hi)
				return 0;
			out->type = SQL_INT;
			out->i = (int64_t)lit->f;
			return 1;
		}
		break;
	}
	case SQL_CT_FLOAT:
		if (lit->type == SQL_INT) {
			out->type = SQL_FLOAT;
			out->f = (double)lit->i;
			return 1;
		}
		if (lit->type == SQL_FLOAT)
			return 1;
		break;
	case SQL_CT_TEXT:
		if (lit->type == SQL_TEXT)
			return 1;
		break;
	}
	snprintf(x->err, sizeof(x->err), "operator does not exist: %s = %s (column \"%s\")",
		 cd->type == SQL_CT_TEXT ? "text" : cd->type == SQL_CT_FLOAT ? "double precision"
		 : "integer", lit->type == SQL_TEXT ? "text" : lit->type == SQL_FLOAT
		 ? "numeric" : "integer", cd->name);
	x->errpos = pos;
	x->code = LWC_ERR_SCHEMA;
	return -1;
}

/* One literal compared with a column of type cd. */
static int fix_one(struct tr *x, const struct sql_coldef *cd, struct sql_expr *o, const char *op,
		   int in_list)
{
	char *end;

	if (o == NULL || o->kind != SQL_E_LIT || o->lit.type == SQL_NULL)
		return 0;
	if (cd->type == SQL_CT_TEXT && o->lit.type != SQL_TEXT) {
		snprintf(x->err, sizeof(x->err), "operator does not exist: text %s %s (column "
			 "\"%s\")", op, o->lit.type == SQL_FLOAT ? "numeric" : "integer", cd->name);
		x->errpos = o->pos;
		x->code = LWC_ERR_SCHEMA;
		return -1;
	}
	if (cd->type == SQL_CT_TEXT || o->lit.type != SQL_TEXT)
		return 0;
	errno = 0;
	if (cd->type == SQL_CT_FLOAT) {
		double d = strtod(o->lit.s, &end);
		while (*end == ' ' || *end == '\t' || *end == '\n')
			end++;
		if (end == o->lit.s || *end || errno) {
			snprintf(x->err, sizeof(x->err), "invalid input syntax for type double "
				 "precision: \"%s\"", o->lit.s);
			x->errpos = o->pos;
			x->code = LWC_ERR_SCHEMA;
			return -1;
		}
		o->lit.type = SQL_FLOAT;
		o->lit.f = d;
	} else {
		long long v = strtoll(o->lit.s, &end, 10);
		while (*end == ' ' || *end == '\t' || *end == '\n')
			end++;
		if (end == o->lit.s || *end || errno) {
			snprintf(x->err, sizeof(x->err), "invalid input syntax for type integer: "
				 "\"%s\"", o->lit.s);
			x->errpos = o->pos;
			x->code = LWC_ERR_SCHEMA;
			return -1;
		}
		/* in an IN list PostgreSQL may resolve the items to a wider type */
		if (!in_list && cd->type == SQL_CT_INT && (v < INT32_MIN || v > INT32_MAX)) {
			snprintf(x->err, sizeof(x->err), "value \"%s\" is out of range for type "
				 "integer", o->lit.s);
			x->errpos = o->pos;
			x->code = LWC_ERR_SCHEMA;
			return -1;
		}
		o->lit.type = SQL_INT;
		o->lit.i = v;
	}
	return 0;
}

/* Text literals compared with numeric columns are read as numbers (as
 * PostgreSQL reads an untyped literal); numbers compared with a text column
 * are an error.  Done once on the bound tree so that the index predicate and
 * the residual evaluation see the same values. */
static int fix_literals(struct tr *x, struct sql_expr *e)
{
	if (e == NULL)
		return 0;
	if (e->kind == SQL_E_CMP || e->kind == SQL_E_IN || e->kind == SQL_E_BETWEEN) {
		struct sql_expr *col = e->a && e->a->kind == SQL_E_COL ? e->a : NULL;
		struct sql_expr *ops[64];
		size_t nops = 0;

		if (e->kind == SQL_E_CMP && col == NULL && e->b && e->b->kind == SQL_E_COL) {
			/* lit op col: mirror it so the column comes first */
			struct sql_expr *t = e->a;
			static const enum sql_cmp mirror[] = {
				[SQL_EQ] = SQL_EQ, [SQL_NE] = SQL_NE, [SQL_LT] = SQL_GT,
				[SQL_LE] = SQL_GE, [SQL_GT] = SQL_LT, [SQL_GE] = SQL_LE };
			e->a = e->b;
			e->b = t;
			e->op = mirror[e->op];
			col = e->a;
		}
		if (col == NULL || col->col_index < 0)
			goto kids;
		if (e->kind == SQL_E_CMP)
			ops[nops++] = e->b;
		else if (e->kind == SQL_E_BETWEEN) {
			ops[nops++] = e->b;
			ops[nops++] = e->c;
		}
		for (size_t i = 0; i < nops; i++)
			if (fix_one(x, &x->sc->cols[col->col_index], ops[i],
				    e->kind == SQL_E_BETWEEN ? ">=" : "=", 0) != 0)
				return -1;
		if (e->kind == SQL_E_IN) {
			/* PostgreSQL resolves the list to a common type: a number
			 * beyond int32 (or a decimal) widens it, and then text items
			 * out of int32 range are no error */
			int wide = 0;
			for (size_t i = 0; i < e->nlist; i++) {
				const struct sql_expr *o = e->list[i];
				if (o->kind == SQL_E_LIT && (o->lit.type == SQL_FLOAT ||
				    (o->lit.type == SQL_INT &&
				     (o->lit.i < INT32_MIN || o->lit.i > INT32_MAX))))
					wide = 1;
			}
			for (size_t i = 0; i < e->nlist; i++)
				if (fix_one(x, &x->sc->cols[col->col_index], e->list[i], "=", wide) != 0)
					return -1;
		}
	}
kids:
	if (fix_literals(x, e->a) || fix_literals(x, e->b) || fix_literals(x, e->c))
		return -1;
	for (size_t i = 0; i < e->nlist; i++)
		if (fix_literals(x, e->list[i]))
			return -1;
	return 0;
}

/* T and F predicates of e. */
static int tr_expr(struct tr *x, const struct sql_expr *e, Lwc__Pred **T, int *tex,
		   Lwc__Pred **F, int *fex);

static int tr_nonnull(struct tr *x, int col, Lwc__Pred **p)
{
	struct sql_value nul = { .type = SQL_NULL };
	Lwc__Pred *eq = ptok((uint32_t)col, 1);

	if (eq == NULL)
		return -1;
	if (tr_token(x, (size_t)col, &nul, ((struct pnode *)eq)->toks[0]) != 0)
		return pred_free(eq), -1;
	*p = pnot(eq);
	return *p ? 0 : -1;
}

static int tr_expr(struct tr *x, const struct sql_expr *e, Lwc__Pred **T, int *tex,
		   Lwc__Pred **F, int *fex)
{
	Lwc__Pred *ta = NULL, *fa = NULL, *tb = NULL, *fb = NULL;
	int tae, fae, tbe, fbe;
	const struct sql_expr *col = e->a && e->a->kind == SQL_E_COL ? e->a : NULL;

	*T = *F = NULL;
	*tex = *fex = 0;
	switch (e->kind) {
	case SQL_E_AND:
	case SQL_E_OR:
		if (tr_expr(x, e->a, &ta, &tae, &fa, &fae) ||
		    tr_expr(x, e->b, &tb, &tbe, &fb, &fbe)) {
			pred_free(ta);
			pred_free(fa);
			pred_free(tb);
			pred_free(fb);
			return -1;
		}
		if (e->kind == SQL_E_AND) {
			*T = pbin(LWC__PRED__OP__AND, ta, tb);
			*F = pbin(LWC__PRED__OP__OR, fa, fb);
		} else {
			*T = pbin(LWC__PRED__OP__OR, ta, tb);
			*F = pbin(LWC__PRED__OP__AND, fa, fb);
		}
		*tex = tae && tbe;
		*fex = fae && fbe;
		break;
	case SQL_E_NOT:
		if (tr_expr(x, e->a, &ta, &tae, &fa, &fae))
			return -1;
		*T = fa;
		*tex = fae;
		*F = ta;
		*fex = tae;
		break;
	case SQL_E_ISNULL:
		if (col == NULL || col->col_index < 0)
			goto opaque;
		{
			struct sql_value nul = { .type = SQL_NULL };
			Lwc__Pred *eq = ptok((uint32_t)col->col_index, 1);
			if (eq == NULL)
				return -1;
			if (tr_token(x, (size_t)col->col_index, &nul,
				     ((struct pnode *)eq)->toks[0]) != 0)
				return pred_free(eq), -1;
			if (tr_nonnull(x, col->col_index, &fa))
				return pred_free(eq), -1;
			*T = e->negated ? fa : eq;
			*F = e->negated ? eq : fa;
			*tex = *fex = 1;
		}
		break;
	case SQL_E_CMP:
		if (col == NULL || col->col_index < 0 || e->b == NULL || e->b->kind != SQL_E_LIT)
			goto opaque;
		if (e->b->lit.type == SQL_NULL) {     /* col op NULL: never TRUE nor FALSE */
			*T = pnew(LWC__PRED__OP__NONE);
			*F = pnew(LWC__PRED__OP__NONE);
			*tex = *fex = 1;
			break;
		}
		if (e->op == SQL_EQ || e->op == SQL_NE) {
			struct sql_value v, nul = { .type = SQL_NULL };
			int ok = lit_for_eq(x, &x->sc->cols[col->col_index], &e->b->lit, &v, e->b->pos);
			Lwc__Pred *eq, *neither;

			if (ok < 0)
				return -1;
			if (ok == 0) {
				eq = pnew(LWC__PRED__OP__NONE);
				if (tr_nonnull(x, col->col_index, &neither))
					return pred_free(eq), -1;
			} else {
				eq = ptok((uint32_t)col->col_index, 1);
				neither = ptok((uint32_t)col->col_index, 2);
				if (eq == NULL || neither == NULL)
					return pred_free(eq), pred_free(neither), -1;
				if (tr_token(x, (size_t)col->col_index, &v,
					     ((struct pnode *)eq)->toks[0]) != 0 ||
				    tr_token(x, (size_t)col->col_index, &v,
					     ((struct pnode *)neither)->toks[0]) != 0 ||
				    tr_token(x, (size_t)col->col_index, &nul,
					     ((struct pnode *)neither)->toks[1]) != 0)
					return pred_free(eq), pred_free(neither), -1;
				neither = pnot(neither);
			}
			*T = e->op == SQL_EQ ? eq : neither;
			*F = e->op == SQL_EQ ? neither : eq;
			*tex = *fex = 1;
			break;
		}
		/* ranges: TRUE or FALSE only where the column is not NULL */
		if (tr_nonnull(x, col->col_index, T) || tr_nonnull(x, col->col_index, F))
			return pred_free(*T), -1;
		break;
	case SQL_E_IN: {
		struct sql_value nul = { .type = SQL_NULL };
		size_t n = 0, has_null = 0;
		Lwc__Pred *in, *notin;

		if (col == NULL || col->col_index < 0)
			goto opaque;
		for (size_t i = 0; i < e->nlist; i++) {
			if (e->list[i]->kind != SQL_E_LIT)
				goto opaque;
			if (e->list[i]->lit.type == SQL_NULL)
				has_null = 1;
		}
		in = ptok((uint32_t)col->col_index, e->nlist + 1);
		if (in == NULL)
			return -1;
		for (size_t i = 0; i < e->nlist; i++) {
			struct sql_value v;
			int ok;
			if (e->list[i]->lit.type == SQL_NULL)
				continue;
			ok = lit_for_eq(x, &x->sc->cols[col->col_index], &e->list[i]->lit, &v,
					e->list[i]->pos);
			if (ok < 0)
				return pred_free(in), -1;
			if (ok > 0 && tr_token(x, (size_t)col->col_index, &v,
					       ((struct pnode *)in)->toks[n++]) != 0)
				return pred_free(in), -1;
		}
		/* NOT IN's FALSE side: no NULL in the list, column not NULL, not in it */
		if (tr_token(x, (size_t)col->col_index, &nul, ((struct pnode *)in)->toks[n]) != 0)
			return pred_free(in), -1;
		if (has_null) {
			notin = pnew(LWC__PRED__OP__NONE);
		} else {
			Lwc__Pred *all = ptok((uint32_t)col->col_index, n + 1);
			if (all == NULL)
				return pred_free(in), -1;
			memcpy(((struct pnode *)all)->toks, ((struct pnode *)in)->toks,
			       (n + 1) * CRY_TOKEN_BYTES);
			notin = pnot(all);
		}
		if (n == 0) {
			pred_free(in);
			in = pnew(LWC__PRED__OP__NONE);
		} else {
			in->n_tokens = n;
			if (n == 1)
				in->op = LWC__PRED__OP__EQ;
		}
		*T = e->negated ? notin : in;
		*F = e->negated ? in : notin;
		*tex = *fex = 1;
		break;
	}
	case SQL_E_BETWEEN:
		if (col == NULL || col->col_index < 0)
			goto opaque;
		/* TRUE only where not NULL; FALSE can hold with a NULL bound */
		if (tr_nonnull(x, col->col_index, T))
			return -1;
		*F = pnew(LWC__PRED__OP__ALL);
		if (e->negated) {
			Lwc__Pred *t = *T;
			*T = *F;
			*F = t;
		}
		break;
	default:
	opaque:
		*T = pnew(LWC__PRED__OP__ALL);
		*F = pnew(LWC__PRED__OP__ALL);
		break;
	}
	if (*T == NULL || *F == NULL) {
		pred_free(*T);
		pred_free(*F);
		*T = *F = NULL;
		return -1;
	}
	return 0;
}

/* The index predicate of a WHERE (NULL where: ALL); *exact when it is the
 * WHERE's TRUE set exactly. */
static int translate(lwc_conn *c, const struct sql_schema *sc, struct sql_expr *where,
		     Lwc__Pred **out, int *exact, char *err, size_t errlen, int *errpos, int *code)
{
	struct tr x = { .c = c, .sc = sc, .errpos = -1, .code = LWC_ERR_NOMEM };
	Lwc__Pred *T, *F;
	int tex, fex;

	*out = NULL;
	*exact = 1;
	if (where == NULL) {
		*out = pnew(LWC__PRED__OP__ALL);
		return *out ? LWC_OK : LWC_ERR_NOMEM;
	}
	if (fix_literals(&x, where) != 0 ||
	    tr_expr(&x, where, &T, &tex, &F, &fex) != 0) {
		lwc_errf(err, errlen, "%s", x.err[0] ? x.err : "out of memory");
		*errpos = x.errpos;
		*code = x.code;
		return x.code;
	}
	pred_free(F);
	*out = T;
	*exact = tex;
	return LWC_OK;
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
static void result_drain(lwc_result *r)
{
	while (r->conn && !r->stream_done) {
		Lwc__ProxyResponse *resp = NULL;
		if (recv_resp(r->conn, r->seq, &resp) != LWC_OK)
			break;
		if (resp->result_case != LWC__PROXY_RESPONSE__RESULT_ROWS)
			r->stream_done = 1;
		lwc__proxy_response__free_unpacked(resp, NULL);
	}
	result_close_stream(r);
}

/* The next matching decoded row from the stream: 1, 0 at the end, <0. */
static int stream_next(lwc_result *r, struct lrow *row)
{
	for (;;) {
		if (r->chunk && r->chunk_pos < r->chunk->rows->n_records) {
			const ProtobufCBinaryData *rec = &r->chunk->rows->records[r->chunk_pos++];
			int rc = open_row(r->conn, &r->sc, rec->data, rec->len, row);
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
			int rc = recv_resp(r->conn, r->seq, &resp);
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
				error_from(r->conn, r, resp->error);
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
static int materialise(lwc_result *r)
{
	struct lrow row;
	int rc;

	while ((rc = stream_next(r, &row)) == 1) {
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
		if (!r->materialised && (rc = materialise(r)) != LWC_OK)
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
		if ((rc = materialise(r)) != LWC_OK)
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
		rc = stream_next(r, &r->cur);
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

static const struct sql_value *cur_value(const lwc_result *r, int col)
{
	if (r == NULL || !r->have_cur || col < 0 || col >= r->ncols)
		return NULL;
	return &r->cur.v[r->colsrc[col]];
}

enum lwc_type lwc_value_type(const lwc_result *r, int col)
{
	const struct sql_value *v = cur_value(r, col);
	return v ? (enum lwc_type)v->type : LWC_TYPE_NULL;
}

int lwc_value_is_null(const lwc_result *r, int col)
{
	const struct sql_value *v = cur_value(r, col);
	return v == NULL || v->type == SQL_NULL;
}

int64_t lwc_value_int(const lwc_result *r, int col)
{
	const struct sql_value *v = cur_value(r, col);
	if (v == NULL)
		return 0;
	return v->type == SQL_INT ? v->i : v->type == SQL_FLOAT ? (int64_t)v->f : 0;
}

double lwc_value_float(const lwc_result *r, int col)
{
	const struct sql_value *v = cur_value(r, col);
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
	const struct sql_value *v = cur_value(r, col);
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

/* ---- statements ------------------------------------------------------------------ */

static lwc_result *command(const char *tag, uint64_t count)
{
	lwc_result *r = result_new();

	if (r == NULL)
		return &nomem_result;
	r->status = LWC_RESULT_COMMAND;
	snprintf(r->tag, sizeof(r->tag), "%s", tag);
	r->count = count;
	return r;
}

static lwc_result *exec_create(lwc_conn *c, struct sql_stmt *st)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__CreateTable ct = LWC__CREATE_TABLE__INIT;
	struct sql_schema sc;
	uint8_t handle[CRY_TOKEN_BYTES], *blob = NULL;
	size_t blen = 0, fixed = 1;
	lwc_result *r;
	int rc;

	if (find_table(c, st->table, 1) != NULL && !st->if_not_exists)
		return result_error(NULL, LWC_ERR_EXISTS, st->table_pos,
				    "relation \"%s\" already exists", st->table);
	if (st->ncols > 64)
		return result_error(NULL, LWC_ERR_SCHEMA, st->table_pos,
				    "a table has at most 64 columns");
	memset(&sc, 0, sizeof(sc));
	snprintf(sc.name, sizeof(sc.name), "%s", st->table);
	sc.ncols = st->ncols;
	sc.cols = st->cols;
	sc.pk = -1;
	for (size_t i = 0; i < st->ncols; i++) {
		if (st->cols[i].primary_key)
			sc.pk = (int)i;
		fixed += 1 + (st->cols[i].type == SQL_CT_TEXT ? 2 + st->cols[i].max_len : 8);
	}
	if (fixed > c->R)
		return result_error(NULL, LWC_ERR_TOO_BIG, st->table_pos,
				    "rows of table \"%s\" can take %zu bytes, more than the "
				    "database's record size of %u bytes", st->table, fixed, c->R);
	if ((rc = schema_seal(c, &sc, &blob, &blen)) != LWC_OK)
		return result_error(NULL, rc, -1, "%s", lwc_strerror(rc));
	if ((rc = handle_of(c->k, st->table, handle)) != LWC_OK) {
		free(blob);
		return result_error(NULL, LWC_ERR_CRYPTO, -1, "table handle derivation failed: %s",
				    lwc_strerror(rc));
	}
	ct.table.data = handle;
	ct.table.len = sizeof(handle);
	ct.ncols = (uint32_t)st->ncols;
	ct.pk_col = sc.pk;
	ct.schema.data = blob;
	ct.schema.len = blen;
	ct.if_not_exists = st->if_not_exists;
	req.op_case = LWC__PROXY_REQUEST__OP_CREATE_TABLE;
	req.create_table = &ct;
	r = simple_call(c, &req, NULL);
	free(blob);
	if (r) {
		if (r->errcode == LWC_ERR_EXISTS) {
			free(r->errmsg);
			r->errmsg = NULL;
			return result_error(r, LWC_ERR_EXISTS, st->table_pos,
					    "relation \"%s\" already exists", st->table);
		}
		return r;
	}
	c->catalog_loaded = 0;
	/* UNIQUE column constraints: unique indexes with the NULL exemption */
	for (size_t i = 0; i < st->ncols; i++) {
		Lwc__CreateIndex ci = LWC__CREATE_INDEX__INIT;
		struct sql_value nul = { .type = SQL_NULL };
		uint8_t nt[CRY_TOKEN_BYTES];

		if (!st->cols[i].unique || st->cols[i].primary_key)
			continue;
		if ((rc = value_token(c->k, &sc, i, &nul, nt)) != LWC_OK)
			return result_error(NULL, LWC_ERR_CRYPTO, -1,
					    "keyword token derivation failed: %s", lwc_strerror(rc));
		ci.table.data = handle;
		ci.table.len = sizeof(handle);
		ci.col = (uint32_t)i;
		ci.unique = 1;
		ci.null_token.data = nt;
		ci.null_token.len = sizeof(nt);
		memset(&req, 0, sizeof(req));
		lwc__proxy_request__init(&req);
		req.op_case = LWC__PROXY_REQUEST__OP_CREATE_INDEX;
		req.create_index = &ci;
		if ((r = simple_call(c, &req, NULL)) != NULL)
			return r;
	}
	return command("CREATE TABLE", 0);
}

static lwc_result *exec_drop(lwc_conn *c, struct sql_stmt *st)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__DropTable dt = LWC__DROP_TABLE__INIT;
	uint8_t handle[CRY_TOKEN_BYTES];
	lwc_result *r;

	if (handle_of(c->k, st->table, handle) != LWC_OK)
		return result_error(NULL, LWC_ERR_CRYPTO, -1, "table handle derivation failed");
	dt.table.data = handle;
	dt.table.len = sizeof(handle);
	dt.if_exists = st->if_exists;
	req.op_case = LWC__PROXY_REQUEST__OP_DROP_TABLE;
	req.drop_table = &dt;
	r = simple_call(c, &req, NULL);
	c->catalog_loaded = 0;
	if (r && r->errcode == LWC_ERR_NO_TABLE) {
		free(r->errmsg);
		r->errmsg = NULL;
		return result_error(r, LWC_ERR_NO_TABLE, st->table_pos,
				    "table \"%s\" does not exist", st->table);
	}
	return r ? r : command("DROP TABLE", 0);
}

static lwc_result *no_table(const char *name, int pos)
{
	return result_error(NULL, LWC_ERR_NO_TABLE, pos, "relation \"%s\" does not exist", name);
}

static lwc_result *exec_index(lwc_conn *c, struct sql_stmt *st)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__CreateIndex ci = LWC__CREATE_INDEX__INIT;
	struct ltable *t = find_table(c, st->table, 1);
	struct sql_value nul = { .type = SQL_NULL };
	uint8_t nt[CRY_TOKEN_BYTES];
	int col = -1;
	lwc_result *r;

	if (t == NULL)
		return no_table(st->table, st->table_pos);
	for (size_t i = 0; i < st->nindex_cols; i++) {
		int found = -1;
		for (size_t j = 0; j < t->sc.ncols; j++)
			if (strcmp(t->sc.cols[j].name, st->index_cols[i]) == 0)
				found = (int)j;
		if (found < 0)
			return result_error(NULL, LWC_ERR_SCHEMA, -1, "column \"%s\" does not exist",
					    st->index_cols[i]);
		if (col < 0)
			col = found;
	}
	if (col < 0)
		return result_error(NULL, LWC_ERR_SCHEMA, -1, "an index needs a column");
	if (value_token(c->k, &t->sc, (size_t)col, &nul, nt) != LWC_OK)
		return result_error(NULL, LWC_ERR_CRYPTO, -1, "keyword token derivation failed");
	ci.table.data = t->handle;
	ci.table.len = sizeof(t->handle);
	ci.col = (uint32_t)col;
	/* every column is indexed already; a one-column UNIQUE index is enforced
	 * by the proxy, a composite one is accepted as an index only */
	ci.unique = st->unique && st->nindex_cols == 1;
	ci.null_token.data = nt;
	ci.null_token.len = sizeof(nt);
	req.op_case = LWC__PROXY_REQUEST__OP_CREATE_INDEX;
	req.create_index = &ci;
	r = simple_call(c, &req, NULL);
	if (r && r->errcode == LWC_ERR_UNIQUE) {
		free(r->errmsg);
		r->errmsg = NULL;
		return result_error(r, LWC_ERR_UNIQUE, -1, "could not create unique index \"%s\": "
				    "key values are duplicated in column \"%s\"", st->index,
				    t->sc.cols[col].name);
	}
	if (r == NULL && ci.unique)
		t->unique |= (uint64_t)1 << col;
	return r ? r : command("CREATE INDEX", 0);
}

/* Build and send one Insert of rows[0..n) (values per row, in column order). */
static lwc_result *send_insert(lwc_conn *c, struct ltable *t, struct sql_value *const *rows,
			       size_t n, uint64_t *count)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Insert ins = LWC__INSERT__INIT;
	Lwc__Row *pr = calloc(n ? n : 1, sizeof(*pr)), **pp = calloc(n ? n : 1, sizeof(*pp));
	ProtobufCBinaryData *toks = calloc(n * t->sc.ncols + 1, sizeof(*toks));
	uint8_t *recs = malloc(n * c->S + 1), *tokb = malloc(n * t->sc.ncols * CRY_TOKEN_BYTES + 1);
	char err[256];
	lwc_result *r = NULL;

	if (!pr || !pp || !toks || !recs || !tokb) {
		r = result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		int rc;
		lwc__row__init(&pr[i]);
		if ((rc = seal_row(c, &t->sc, rows[i], recs + i * c->S, err, sizeof(err))) !=
		    LWC_OK) {
			r = result_error(NULL, rc, -1, "%s", err);
			goto out;
		}
		pr[i].record.data = recs + i * c->S;
		pr[i].record.len = c->S;
		pr[i].tokens = toks + i * t->sc.ncols;
		pr[i].n_tokens = t->sc.ncols;
		for (size_t j = 0; j < t->sc.ncols; j++) {
			uint8_t *tk = tokb + (i * t->sc.ncols + j) * CRY_TOKEN_BYTES;
			if ((rc = value_token(c->k, &t->sc, j, &rows[i][j], tk)) != LWC_OK) {
				r = result_error(NULL, LWC_ERR_CRYPTO, -1,
						 "keyword token derivation failed: %s", lwc_strerror(rc));
				goto out;
			}
			toks[i * t->sc.ncols + j].data = tk;
			toks[i * t->sc.ncols + j].len = CRY_TOKEN_BYTES;
		}
		pp[i] = &pr[i];
	}
	ins.table.data = t->handle;
	ins.table.len = sizeof(t->handle);
	ins.rows = pp;
	ins.n_rows = n;
	req.op_case = LWC__PROXY_REQUEST__OP_INSERT;
	req.insert = &ins;
	r = simple_call(c, &req, count);
out:
	free(pr);
	free(pp);
	free(toks);
	if (recs)
		sodium_memzero(recs, n * c->S);
	free(recs);
	free(tokb);
	return r;
}

/* The proxy's "duplicate key value (row R, column N) ..." in the user's
 * terms: the column's name, and the rows counted from 1 in the whole INSERT
 * (its first row is row off + 1 of what the proxy saw), so a \copy can name
 * the input line. */
static lwc_result *unique_error(lwc_result *r, const struct ltable *t, size_t off)
{
	const char *m = r->errmsg ? r->errmsg : "";
	const char *p = strstr(m, "column ");
	char msg[512], rows[96] = "";
	size_t a, b;
	const char *q;

	if ((q = strstr(m, "in rows ")) != NULL && sscanf(q, "in rows %zu and %zu", &a, &b) == 2)
		snprintf(rows, sizeof(rows), " (rows %zu and %zu of the INSERT)", a + off, b + off);
	else if ((q = strstr(m, "(row ")) != NULL && sscanf(q, "(row %zu", &a) == 1)
		snprintf(rows, sizeof(rows), " (row %zu of the INSERT)", a + off);
	if (p) {
		unsigned col = (unsigned)strtoul(p + 7, NULL, 10);
		if (col >= 1 && col <= t->sc.ncols) {
			snprintf(msg, sizeof(msg), "duplicate key value violates unique constraint "
				 "on column \"%s\" of table \"%s\"%s", t->sc.cols[col - 1].name,
				 t->sc.name, rows);
			free(r->errmsg);
			r->errmsg = strdup(msg);
		}
	}
	return r;
}

/* Rows of an INSERT, converted to the table's types. */
struct rowbuf {
	struct sql_value **rows;
	char **texts;
	size_t n, cap;
};

static void rowbuf_free(struct rowbuf *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->rows[i]);
		free(b->texts[i]);
	}
	free(b->rows);
	free(b->texts);
	memset(b, 0, sizeof(*b));
}

/* *bad: the index in in[] of the value refused, -1 for the row as a whole. */
static int rowbuf_add(struct rowbuf *b, const struct ltable *t, const struct sql_value *in,
		      const int *target, size_t nin, char *err, size_t errlen, int *bad)
{
	struct sql_value *row;
	char *text;
	size_t tl = 0, cap = 0;

	*bad = -1;
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 64;
		void *p1 = realloc(b->rows, nc * sizeof(*b->rows));
		void *p2 = p1 ? realloc(b->texts, nc * sizeof(*b->texts)) : NULL;
		if (p1)
			b->rows = p1;
		if (p2 == NULL)
			return LWC_ERR_NOMEM;
		b->texts = p2;
		b->cap = nc;
	}
	for (size_t i = 0; i < nin; i++)
		if (in[i].type == SQL_TEXT)
			cap += in[i].len + 1;
		else
			cap += SQL_NUM_TEXT_MAX + 8;
	row = calloc(t->sc.ncols, sizeof(*row));
	text = malloc(cap + 1);
	if (row == NULL || text == NULL) {
		free(row);
		free(text);
		return LWC_ERR_NOMEM;
	}
	for (size_t j = 0; j < t->sc.ncols; j++)
		row[j].type = SQL_NULL;
	for (size_t i = 0; i < nin; i++) {
		int col = target ? target[i] : (int)i;
		int rc = sql_coerce(&t->sc.cols[col], &in[i], &row[col], text + tl, cap + 1 - tl,
				    err, errlen);
		if (rc != LWC_OK) {
			free(row);
			free(text);
			*bad = (int)i;
			return rc;
		}
		if (row[col].type == SQL_TEXT) {
			/* own the bytes: the input may be a row that is freed next */
			if (row[col].s != text + tl)
				memmove(text + tl, row[col].s, row[col].len);
			text[tl + row[col].len] = '\0';
			row[col].s = text + tl;
			tl += row[col].len + 1;
		} else if (row[col].type == SQL_FLOAT && row[col].f == 0.0) {
			row[col].f = 0.0;          /* -0 is 0 */
		}
	}
	/* columns not given are NULL: NOT NULL and the primary key refuse it */
	for (size_t j = 0; j < t->sc.ncols; j++)
		if (row[j].type == SQL_NULL && (t->sc.cols[j].not_null || t->sc.cols[j].primary_key)) {
			lwc_errf(err, errlen, "null value in column \"%s\" of relation \"%s\" "
				 "violates not-null constraint", t->sc.cols[j].name, t->sc.name);
			for (size_t i = 0; i < nin; i++)
				if ((target ? (size_t)target[i] : i) == j)
					*bad = (int)i;
			free(row);
			free(text);
			return LWC_ERR_SCHEMA;
		}
	b->rows[b->n] = row;
	b->texts[b->n] = text;
	b->n++;
	return LWC_OK;
}

static lwc_result *insert_rows(lwc_conn *c, struct ltable *t, struct rowbuf *b)
{
	uint64_t total = 0, cnt = 0;
	size_t per = INSERT_FRAME_MAX / (c->S + t->sc.ncols * (CRY_TOKEN_BYTES + 4) + 16);
	lwc_result *r;
	char tag[64];

	if (per == 0)
		per = 1;
	for (size_t off = 0; off < b->n || (b->n == 0 && off == 0); off += per) {
		size_t n = b->n - off < per ? b->n - off : per;
		if ((r = send_insert(c, t, (struct sql_value *const *)b->rows + off, n, &cnt)) != NULL)
			return r->errcode == LWC_ERR_UNIQUE ? unique_error(r, t, off) : r;
		total += cnt;
		if (b->n == 0)
			break;
	}
	snprintf(tag, sizeof(tag), "INSERT 0 %llu", (unsigned long long)total);
	return command(tag, total);
}

static lwc_result *exec_select(lwc_conn *c, struct sql_stmt *st, int own_stmt);

static lwc_result *exec_insert(lwc_conn *c, struct sql_stmt *st)
{
	struct ltable *t = find_table(c, st->table, 1);
	struct sql_schema sc;
	struct rowbuf b = { 0 };
	int target[64];
	char err[1024];
	lwc_result *r;
	int rc, errpos = -1;

	if (t == NULL)
		return no_table(st->table, st->table_pos);
	if (schema_copy(&sc, &t->sc) != LWC_OK)
		return &nomem_result;
	if (sql_bind(st, &sc, err, sizeof(err), &errpos) != LWC_OK) {
		schema_free(&sc);
		return result_error(NULL, LWC_ERR_SCHEMA, errpos, "%s", err);
	}
	schema_free(&sc);
	if (st->src[0]) {
		/* INSERT INTO t SELECT * FROM src */
		struct ltable *s = find_table(c, st->src, 1);
		struct sql_stmt *sel = NULL;
		char q[160];
		lwc_result *sr;

		if (s == NULL)
			return no_table(st->src, -1);
		if (s->sc.ncols != st->ninsert_map)
			return result_error(NULL, LWC_ERR_SCHEMA, st->src_pos, "INSERT has %s "
					    "expressions than target columns",
					    s->sc.ncols > st->ninsert_map ? "more" : "fewer");
		for (size_t i = 0; i < st->ninsert_map; i++)
			target[i] = st->insert_map[i];
		snprintf(q, sizeof(q), "SELECT * FROM \"%s\"", st->src);
		if (sql_parse(q, strlen(q), &sel, err, sizeof(err), &errpos) != LWC_OK)
			return result_error(NULL, LWC_ERR_ARG, -1, "%s", err);
		sr = exec_select(c, sel, 1);
		if (sr->status == LWC_RESULT_ERROR)
			return sr;
		while ((rc = lwc_result_next(sr)) == 1) {
			struct sql_value v[64];

			/* a FLOAT column into an INT one rounds half to even, as a
			 * double precision cast does in PostgreSQL */
			memcpy(v, sr->cur.v, st->ninsert_map * sizeof(*v));
			for (size_t j = 0; j < st->ninsert_map; j++)
				if (v[j].type == SQL_FLOAT &&
				    (t->sc.cols[target[j]].type == SQL_CT_INT ||
				     t->sc.cols[target[j]].type == SQL_CT_BIGINT))
					v[j].f = nearbyint(v[j].f);
			int bad;
			if ((rc = rowbuf_add(&b, t, v, target, st->ninsert_map, err,
					     sizeof(err), &bad)) != LWC_OK) {
				lwc_result_free(sr);
				rowbuf_free(&b);
				return result_error(NULL, rc, -1, "%s", err);
			}
		}
		if (rc < 0) {
			r = result_error(NULL, sr->errcode, -1, "%s", lwc_result_error(sr));
			lwc_result_free(sr);
			rowbuf_free(&b);
			return r;
		}
		lwc_result_free(sr);
	} else {
		size_t nin = st->ninsert_map;
		struct sql_value *vals = calloc(nin ? nin : 1, sizeof(*vals));

		if (vals == NULL)
			return &nomem_result;
		for (size_t i = 0; i < nin; i++)
			target[i] = st->insert_map[i];
		for (size_t i = 0; i < st->nrows; i++) {
			for (size_t j = 0; j < nin; j++) {
				const struct sql_expr *e = st->rows[i][j];
				if (sql_eval_value(e, NULL, &vals[j], err, sizeof(err)) != LWC_OK) {
					free(vals);
					rowbuf_free(&b);
					return result_error(NULL, LWC_ERR_SCHEMA, e->pos, "%s", err);
				}
			}
			int bad;
			if ((rc = rowbuf_add(&b, t, vals, target, nin, err, sizeof(err),
					     &bad)) != LWC_OK) {
				/* the refused value's place in the SQL (a \copy names its
				 * line and column from it), else its row's */
				int pos = nin == 0 ? -1 : st->rows[i][bad >= 0 ? bad : 0]->pos;
				free(vals);
				rowbuf_free(&b);
				return result_error(NULL, rc, pos, "%s", err);
			}
		}
		free(vals);
	}
	r = insert_rows(c, t, &b);
	rowbuf_free(&b);
	return r;
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
	if (nout > 0) {
		r->rows = calloc(nout, sizeof(*r->rows));
		if (r->rows == NULL) {
			sql_outrows_free(out, nout);
			return result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
		}
		for (size_t i = 0; i < nout; i++) {
			r->rows[i].v = out[i].v;
			r->rows[i].text = out[i].text;
		}
		free(out);
	}
	r->nrows = r->caprows = nout;
	r->materialised = 1;
	r->pos = 0;
	r->limit = -1;
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

/* A general SELECT of a table: every row its WHERE selects, then the rest
 * in the client. */
static lwc_result *exec_general(lwc_conn *c, lwc_result *r, struct sql_stmt *st,
				struct ltable *t, Lwc__Pred *pred, int exact)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Select sel = LWC__SELECT__INIT;
	struct sql_value **in = NULL;
	lwc_result *res;
	int rc;

	r->limit = -1;
	r->filter = !exact;
	sel.table.data = t->handle;
	sel.table.len = sizeof(t->handle);
	sel.where = pred;
	sel.candidates = !exact;
	req.op_case = LWC__PROXY_REQUEST__OP_SELECT;
	req.select = &sel;
	req.seq = r->seq = ++c->seq;
	rc = send_req(c, &req);
	pred_free(pred);
	if (rc != LWC_OK)
		return result_error(r, rc, -1, "connection to the proxy lost: %s", conn_lost_msg(rc));
	r->stmt = st;
	r->conn = c;
	c->open = r;
	r->status = LWC_RESULT_ROWS;
	if (materialise(r) != LWC_OK)
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
static lwc_result *fetch_rows(lwc_conn *c, struct sql_stmt *owner, struct ltable *t,
			      struct sql_expr *cond)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Select sel = LWC__SELECT__INIT;
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
	if ((rc = translate(c, &r->sc, cond, &pred, &exact, err, sizeof(err), &errpos,
			    &code)) != LWC_OK)
		return result_error(r, code, errpos, "%s", err);
	r->filter = !exact;
	sel.table.data = t->handle;
	sel.table.len = sizeof(t->handle);
	sel.where = pred;
	sel.candidates = !exact;
	req.op_case = LWC__PROXY_REQUEST__OP_SELECT;
	req.select = &sel;
	req.seq = r->seq = ++c->seq;
	rc = send_req(c, &req);
	pred_free(pred);
	if (rc != LWC_OK)
		return result_error(r, rc, -1, "connection to the proxy lost: %s", conn_lost_msg(rc));
	r->conn = c;
	c->open = r;
	r->status = LWC_RESULT_ROWS;
	materialise(r);
	return r;
}

/* The rows of one table of a join, from one fetch or several. */
struct jtab {
	lwc_result **rs;
	size_t nrs;
	struct sql_value **rows;
	size_t nrows, cap;
};

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
	int errpos = -1, rc;

	if (!ts || !scs || !jt || !conds || !fetched || !tabs || !ntab || !r) {
		if (r == NULL)
			r = &nomem_result;
		else
			r = result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
		sql_free(st);
		goto out;
	}
	r->stmt = st;
	for (size_t k = 0; k < nf; k++) {
		if ((ts[k] = find_table(c, q->froms[k].table, 1)) == NULL) {
			r->stmt = NULL;
			lwc_result_free(r);
			r = no_table(q->froms[k].table, q->froms[k].pos);
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
	for (size_t k = 0; k < nf; k++)
		if (sql_join_pushdown(st, k, &conds[k]) != LWC_OK) {
			r = result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
			goto out;
		}
	for (size_t step = 0; step < nf; step++) {
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

static lwc_result *resolve_subqueries(lwc_conn *c, struct sql_stmt *st);

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
			v[i] = *cur_value(r, i);
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
	r->rows = nout ? calloc(nout, sizeof(*r->rows)) : NULL;
	if (!r->colname || !r->coltype || !r->colsrc || !r->numbuf || (nout && !r->rows)) {
		sql_outrows_free(out, nout);
		r = result_error(r, LWC_ERR_NOMEM, -1, "out of memory");
		goto out;
	}
	for (int i = 0; i < r->ncols; i++) {
		memcpy(r->colname[i], lr->colname[i], sizeof(r->colname[i]));
		r->coltype[i] = lr->coltype[i];
		r->colsrc[i] = i;
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

static lwc_result *exec_select(lwc_conn *c, struct sql_stmt *st, int own_stmt)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Select sel = LWC__SELECT__INIT;
	struct ltable *t = find_table(c, st->table, 1);
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
		r = no_table(st->table, st->table_pos);
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
	if ((rc = translate(c, &r->sc, st->where, &pred, &exact, err, sizeof(err), &errpos,
			    &code)) != LWC_OK)
		return result_error(r, code, errpos, "%s", err);
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
	r->filter = !exact;
	sel.table.data = t->handle;
	sel.table.len = sizeof(t->handle);
	sel.where = pred;
	sel.candidates = !exact;
	req.op_case = LWC__PROXY_REQUEST__OP_SELECT;
	req.select = &sel;
	req.seq = r->seq = ++c->seq;
	rc = send_req(c, &req);
	pred_free(pred);
	if (rc != LWC_OK)
		return result_error(r, rc, -1, "connection to the proxy lost: %s", conn_lost_msg(rc));
	r->stmt = st;
	r->conn = c;
	c->open = r;
	r->status = LWC_RESULT_ROWS;
	/* an empty result or an error shows now, not at the first row */
	if (!r->count_only && st->norder == 0) {
		struct lrow row;
		rc = stream_next(r, &row);
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

/* The new values of a row: each SET value computed on the old row, then
 * converted to its column's type (PostgreSQL's assignment rules). */
static int apply_sets(const struct ltable *t, const struct sql_stmt *st,
		      const struct sql_value *old, struct sql_value *nv, char *text, size_t textlen,
		      char *err, size_t errlen)
{
	size_t tl = 0;
	/* text that functions make (lower, ||, CAST) lives in an arena for this
	 * row and is copied into text */
	struct arena *scratch = sql_arena_new(), *outer = sql_eval_get_scratch();
	int rc = LWC_OK;

	if (scratch == NULL)
		return LWC_ERR_NOMEM;
	sql_eval_set_scratch(scratch);
	memcpy(nv, old, t->sc.ncols * sizeof(*nv));
	for (size_t i = 0; i < st->nsets && rc == LWC_OK; i++) {
		const struct sql_set *s = &st->sets[i];
		struct sql_value v, out;

		if ((rc = sql_eval_value(s->value, old, &v, err, errlen)) != LWC_OK)
			break;
		if (textlen - tl < SQL_NUM_TEXT_MAX + 1) {
			rc = LWC_ERR_NOMEM;
			break;
		}
		rc = sql_coerce(&t->sc.cols[s->col_index], &v, &out, text + tl, textlen - tl,
				err, errlen);
		if (rc != LWC_OK)
			break;
		if (out.type == SQL_TEXT && out.s != text + tl) {
			if (textlen - tl < out.len + 1) {
				lwc_errf(err, errlen, "row too large");
				rc = LWC_ERR_ARG;
				break;
			}
			memmove(text + tl, out.s, out.len);
			text[tl + out.len] = '\0';
			out.s = text + tl;
		}
		if (out.type == SQL_TEXT)
			tl += out.len + 1;
		nv[s->col_index] = out;
	}
	sql_eval_set_scratch(outer);
	sql_arena_destroy(scratch);
	return rc;
}

/* UPDATE, or DELETE with residual predicates: answer Candidates chunks. */
static lwc_result *interactive(lwc_conn *c, struct ltable *t, struct sql_stmt *st,
			       Lwc__ProxyRequest *req, int update, const char *verb)
{
	Lwc__ProxyResponse *resp = NULL;
	lwc_result *r = NULL;
	char err[512] = "";
	uint64_t seq;
	int rc, failing = 0;

	req->seq = seq = ++c->seq;
	if ((rc = send_req(c, req)) != LWC_OK)
		return result_error(NULL, rc, -1, "connection to the proxy lost: %s", conn_lost_msg(rc));
	for (;;) {
		Lwc__ProxyRequest dr = LWC__PROXY_REQUEST__INIT;
		Lwc__Decisions ds = LWC__DECISIONS__INIT;
		Lwc__Decision *dv = NULL, **dp = NULL;
		Lwc__Row *rows = NULL;
		ProtobufCBinaryData *toks = NULL;
		uint8_t *recs = NULL, *tokb = NULL;
		size_t n;

		if ((rc = recv_resp(c, seq, &resp)) != LWC_OK)
			return result_error(r, rc, -1, "connection to the proxy lost: %s",
					    conn_lost_msg(rc));
		if (resp->result_case == LWC__PROXY_RESPONSE__RESULT_DONE) {
			char tag[64];
			uint64_t cnt = resp->done->count;
			lwc__proxy_response__free_unpacked(resp, NULL);
			if (r)
				return r;
			snprintf(tag, sizeof(tag), "%s %llu", verb, (unsigned long long)cnt);
			return command(tag, cnt);
		}
		if (resp->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR) {
			if (r == NULL) {
				r = error_from(c, NULL, resp->error);
				if (r->errcode == LWC_ERR_UNIQUE)
					unique_error(r, t, 0);
			}
			lwc__proxy_response__free_unpacked(resp, NULL);
			return r;
		}
		if (resp->result_case != LWC__PROXY_RESPONSE__RESULT_CANDIDATES) {
			lwc__proxy_response__free_unpacked(resp, NULL);
			conn_break(c);
			return result_error(r, LWC_ERR_PROTO, -1, "unexpected answer from the proxy");
		}
		n = resp->candidates->n_records;
		if (c->cancel && *c->cancel && !failing) {
			/* abort: the proxy writes none of the statement */
			failing = 1;
			snprintf(err, sizeof(err), "canceling statement due to user request");
		}
		dv = calloc(n + 1, sizeof(*dv));
		dp = calloc(n + 1, sizeof(*dp));
		rows = calloc(n + 1, sizeof(*rows));
		toks = calloc(n * t->sc.ncols + 1, sizeof(*toks));
		recs = malloc(n * c->S + 1);
		tokb = malloc(n * t->sc.ncols * CRY_TOKEN_BYTES + 1);
		if (!dv || !dp || !rows || !toks || !recs || !tokb) {
			failing = 1;
			snprintf(err, sizeof(err), "out of memory");
		}
		for (size_t i = 0; i < n && !failing; i++) {
			struct lrow old;
			const ProtobufCBinaryData *rec = &resp->candidates->records[i];

			lwc__decision__init(&dv[i]);
			dp[i] = &dv[i];
			rc = open_row(c, &t->sc, rec->data, rec->len, &old);
			if (rc != LWC_OK) {
				failing = 1;
				snprintf(err, sizeof(err), "a record of table %s does not decrypt under "
					 "this key", t->sc.name);
				break;
			}
			enum sql_tv tv = SQL_TRUE;
			if (st->where &&
			    sql_eval_checked(st->where, old.v, &tv, err, sizeof(err)) != LWC_OK) {
				row_free(&old);
				failing = 1;
				break;
			}
			if (tv == SQL_TRUE) {
				dv[i].change = 1;
				if (update) {
					struct sql_value nv[64];
					char text[8192];

					lwc__row__init(&rows[i]);
					rc = apply_sets(t, st, old.v, nv, text, sizeof(text), err,
							sizeof(err));
					if (rc == LWC_OK)
						rc = seal_row(c, &t->sc, nv, recs + i * c->S, err,
							      sizeof(err));
					if (rc != LWC_OK) {
						row_free(&old);
						failing = 1;
						break;
					}
					rows[i].record.data = recs + i * c->S;
					rows[i].record.len = c->S;
					rows[i].tokens = toks + i * t->sc.ncols;
					rows[i].n_tokens = t->sc.ncols;
					for (size_t j = 0; j < t->sc.ncols; j++) {
						uint8_t *tk = tokb + (i * t->sc.ncols + j) * CRY_TOKEN_BYTES;
						if (value_token(c->k, &t->sc, j, &nv[j], tk) != LWC_OK) {
							snprintf(err, sizeof(err),
								 "keyword token derivation failed");
							rc = LWC_ERR_CRYPTO;
							break;
						}
						toks[i * t->sc.ncols + j].data = tk;
						toks[i * t->sc.ncols + j].len = CRY_TOKEN_BYTES;
					}
					if (rc != LWC_OK) {
						row_free(&old);
						failing = 1;
						break;
					}
					dv[i].row = &rows[i];
				}
			}
			row_free(&old);
		}
		lwc__proxy_response__free_unpacked(resp, NULL);
		resp = NULL;
		dr.seq = seq;
		dr.op_case = LWC__PROXY_REQUEST__OP_DECISIONS;
		dr.decisions = &ds;
		if (failing) {
			ds.abort = 1;
			ds.reason = err;
			if (r == NULL)
				r = result_error(NULL, LWC_ERR_ABORTED, -1, "%s", err);
		} else {
			ds.d = dp;
			ds.n_d = n;
		}
		rc = send_req(c, &dr);
		free(dv);
		free(dp);
		free(rows);
		free(toks);
		if (recs)
			sodium_memzero(recs, n * c->S);
		free(recs);
		free(tokb);
		if (rc != LWC_OK)
			return result_error(r, rc, -1, "connection to the proxy lost: %s",
					    conn_lost_msg(rc));
	}
}

static lwc_result *exec_update_delete(lwc_conn *c, struct sql_stmt *st)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Update up = LWC__UPDATE__INIT;
	Lwc__Delete del = LWC__DELETE__INIT;
	struct ltable *t = find_table(c, st->table, 1);
	struct sql_schema sc;
	char err[512];
	Lwc__Pred *pred = NULL;
	lwc_result *r;
	int exact, errpos = -1, code = LWC_ERR_SCHEMA, rc;

	if (t == NULL)
		return no_table(st->table, st->table_pos);
	if (schema_copy(&sc, &t->sc) != LWC_OK)
		return &nomem_result;
	rc = sql_bind(st, &sc, err, sizeof(err), &errpos);
	schema_free(&sc);
	if (rc != LWC_OK)
		return result_error(NULL, LWC_ERR_SCHEMA, errpos, "%s", err);
	if (st->kind == SQL_UPDATE && t->sc.ncols > 64)
		return result_error(NULL, LWC_ERR_SCHEMA, -1, "too many columns");
	/* SET literals are converted once, before any row: a bad one fails the
	 * statement even when no row matches (as in PostgreSQL) */
	for (size_t i = 0; st->kind == SQL_UPDATE && i < st->nsets; i++) {
		const struct sql_set *s = &st->sets[i];
		struct sql_value out;
		char buf[SQL_NUM_TEXT_MAX + 8];

		if (s->value->kind != SQL_E_LIT)
			continue;
		if ((rc = sql_coerce(&t->sc.cols[s->col_index], &s->value->lit, &out, buf,
				     sizeof(buf), err, sizeof(err))) != LWC_OK)
			return result_error(NULL, rc, s->value->pos, "%s", err);
	}
	if ((rc = translate(c, &t->sc, st->where, &pred, &exact, err, sizeof(err), &errpos,
			    &code)) != LWC_OK)
		return result_error(NULL, code, errpos, "%s", err);
	if (st->kind == SQL_UPDATE) {
		up.table.data = t->handle;
		up.table.len = sizeof(t->handle);
		up.where = pred;
		up.candidates = !exact;
		req.op_case = LWC__PROXY_REQUEST__OP_UPDATE;
		req.update = &up;
		r = interactive(c, t, st, &req, 1, "UPDATE");
	} else {
		del.table.data = t->handle;
		del.table.len = sizeof(t->handle);
		del.where = pred;
		del.candidates = !exact;
		req.op_case = LWC__PROXY_REQUEST__OP_DELETE;
		req.delete_ = &del;
		if (exact) {
			uint64_t cnt = 0;
			char tag[64];
			r = simple_call(c, &req, &cnt);
			if (r == NULL) {
				snprintf(tag, sizeof(tag), "DELETE %llu", (unsigned long long)cnt);
				r = command(tag, cnt);
			}
		} else {
			r = interactive(c, t, st, &req, 0, "DELETE");
		}
	}
	pred_free(pred);
	return r;
}

/* ---- subqueries ------------------------------------------------------------------- */

/* Subqueries run first, each as a SELECT of its own (one access pattern of
 * the proxy's like any other statement), and the expression that held one
 * is rewritten with its result: x IN (SELECT ...) becomes an IN list of
 * literals (so the outer WHERE gets an exact index predicate), EXISTS a
 * constant condition, a scalar subquery a literal.  Uncorrelated
 * subqueries only: each runs once. */
struct subq {
	lwc_conn *c;
	struct sql_stmt *root;    /* the statement lwc_exec runs               */
	struct arena *ar;         /* the outer statement's: literals live there */
	lwc_result *err;          /* the first error                            */
	int depth;
};

/* The fetched rows of correlated subqueries, freed with the statement. */
struct corr_fetch {
	lwc_result *r;
	struct sql_value **rows;
	struct corr_fetch *next;
};

static void corr_free(void *p)
{
	struct corr_fetch *f = p, *next;

	for (; f != NULL; f = next) {
		next = f->next;
		lwc_result_free(f->r);
		free(f->rows);
		free(f);
	}
}

static lwc_result *fetch_rows(lwc_conn *c, struct sql_stmt *owner, struct ltable *t,
			      struct sql_expr *cond);
static int subq_fail(struct subq *s, lwc_result *r);

/* The conjuncts of where that read only the subquery's own table
 * (columns below base), as its fetch's condition. */
static struct sql_expr *own_part(struct arena *ar, struct sql_expr *e, size_t base)
{
	struct sql_expr *a, *b, *n;

	if (e == NULL)
		return NULL;
	if (e->kind == SQL_E_AND) {
		a = own_part(ar, e->a, base);
		b = own_part(ar, e->b, base);
		if (a == NULL || b == NULL)
			return a != NULL ? a : b;
		if ((n = sql_arena_alloc(ar, sizeof(*n))) == NULL)
			return NULL;
		*n = *e;
		n->a = a;
		n->b = b;
		return n;
	}
	{
		/* every column below base, and no subquery */
		struct sql_expr *stack[SQL_MAX_HEIGHT + 8];
		size_t sp = 0;

		stack[sp++] = e;
		while (sp > 0) {
			const struct sql_expr *x = stack[--sp];

			if (x->kind == SQL_E_COL && (x->col_index < 0 || (size_t)x->col_index >= base))
				return NULL;
			if (x->kind == SQL_E_EXISTS || x->kind == SQL_E_INSUB ||
			    x->kind == SQL_E_SCALARSUB)
				return NULL;
			if (sp + 3 + x->nlist > sizeof(stack) / sizeof(stack[0]))
				return NULL;
			if (x->a)
				stack[sp++] = x->a;
			if (x->b)
				stack[sp++] = x->b;
			if (x->c)
				stack[sp++] = x->c;
			for (size_t i = 0; i < x->nlist && sp < sizeof(stack) / sizeof(stack[0]); i++)
				stack[sp++] = x->list[i];
		}
	}
	return e;
}

/* A subquery of outer that reads outer's columns: fetch its table once
 * (with the part of its WHERE that reads only it) for the evaluation per
 * outer row.  1 when it is correlated and ready, 0 when it is not
 * correlated, -1 on error. */
static int prepare_correlated(struct subq *s, struct sql_stmt *outer, struct sql_stmt *sub)
{
	struct ltable *ot, *it;
	struct corr_fetch *f;
	char err[512];
	int errpos = -1;

	if (sub->q == NULL || !sub->q->from || sub->q->nfroms > 0 || outer->table[0] == '\0' ||
	    (outer->q != NULL && outer->q->nfroms > 0))
		return 0;
	if ((ot = find_table(s->c, outer->table, 1)) == NULL ||
	    (it = find_table(s->c, sub->table, 1)) == NULL)
		return 0;               /* the ordinary path reports it */
	if (sql_bind_outer(sub, &it->sc, &ot->sc, NULL, err, sizeof(err), &errpos) != LWC_OK)
		return subq_fail(s, result_error(NULL, LWC_ERR_SCHEMA, errpos, "%s", err));
	if (!sub->q->correlated)
		return 0;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return subq_fail(s, result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory"));
	f->r = fetch_rows(s->c, sub, it, own_part(sub->arena, sub->where, sub->q->corr_base));
	f->next = s->root->attach;
	s->root->attach = f;
	s->root->attach_free = corr_free;
	if (f->r->status == LWC_RESULT_ERROR)
		return subq_fail(s, result_error(NULL, f->r->errcode, -1, "%s", f->r->errmsg));
	if (f->r->nrows > 0 && (f->rows = malloc(f->r->nrows * sizeof(*f->rows))) == NULL)
		return subq_fail(s, result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory"));
	for (size_t i = 0; i < f->r->nrows; i++)
		f->rows[i] = f->r->rows[i].v;
	sub->q->corr_rows = f->rows;
	sub->q->ncorr_rows = f->r->nrows;
	return 1;
}

static int resolve_stmt(struct subq *s, struct sql_stmt *st);

/* A literal node holding v (text copied into the arena). */
static struct sql_expr *lit_node(struct subq *s, const struct sql_value *v, int pos)
{
	struct sql_expr *e = sql_arena_alloc(s->ar, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->kind = SQL_E_LIT;
	e->pos = pos;
	e->col_index = -1;
	e->height = 1;
	e->lit = *v;
	if (v->type == SQL_TEXT) {
		char *p = sql_arena_alloc(s->ar, v->len + 1);

		if (p == NULL)
			return NULL;
		memcpy(p, v->s, v->len);
		p[v->len] = '\0';
		e->lit.s = p;
	}
	return e;
}

/* e becomes the constant condition (1 = want). */
static int const_cond(struct subq *s, struct sql_expr *e, int want)
{
	struct sql_value one = { .type = SQL_INT, .i = 1 }, w = { .type = SQL_INT, .i = want };

	e->kind = SQL_E_CMP;
	e->op = SQL_EQ;
	e->negated = 0;
	e->a = lit_node(s, &one, e->pos);
	e->b = lit_node(s, &w, e->pos);
	e->height = 2;
	return e->a && e->b ? 0 : -1;
}

static int subq_fail(struct subq *s, lwc_result *r)
{
	if (s->err == NULL)
		s->err = r;
	else
		lwc_result_free(r);
	return -1;
}

static int resolve_one(struct subq *s, struct sql_stmt *outer, struct sql_expr *e)
{
	struct sql_stmt *sub = e->sub;
	struct sql_expr **vals = NULL;
	size_t n = 0, cap = 0;
	lwc_result *r;
	int rc;

	if (resolve_stmt(s, sub) != 0)
		return -1;
	if ((rc = prepare_correlated(s, outer, sub)) != 0)
		return rc < 0 ? -1 : 0;
	r = exec_select(s->c, sub, 1);
	if (r->status == LWC_RESULT_ERROR) {
		/* the error outlives the statement (and the subquery in its arena) */
		lwc_result *er = result_error(NULL, r->errcode, r->errpos, "%s", lwc_result_error(r));

		lwc_result_free(r);
		return subq_fail(s, er);
	}
	if (e->kind != SQL_E_EXISTS && r->ncols != 1) {
		lwc_result_free(r);
		return subq_fail(s, result_error(NULL, LWC_ERR_ARG, e->pos, e->kind == SQL_E_INSUB ?
						 "subquery has too many columns" :
						 "subquery must return only one column"));
	}
	while ((rc = lwc_result_next(r)) == 1) {
		const struct sql_value *v = cur_value(r, 0);
		struct sql_expr *l;

		if (e->kind == SQL_E_EXISTS) {
			n = 1;
			break;
		}
		if (e->kind == SQL_E_SCALARSUB && n == 1) {
			lwc_result_free(r);
			return subq_fail(s, result_error(NULL, LWC_ERR_ARG, e->pos, "more than one row "
							 "returned by a subquery used as an expression"));
		}
		if (n == cap) {
			vals = sql_arena_grow(s->ar, vals, n, &cap, sizeof(*vals));
			if (vals == NULL)
				break;
		}
		if ((l = lit_node(s, v, e->pos)) == NULL)
			break;
		vals[n++] = l;
	}
	if (rc < 0) {
		lwc_result *er = result_error(NULL, r->errcode ? r->errcode : LWC_ERR_ARG, -1, "%s",
					      lwc_result_error(r));
		lwc_result_free(r);
		return subq_fail(s, er);
	}
	lwc_result_free(r);
	if (rc == 1 && e->kind != SQL_E_EXISTS)
		return subq_fail(s, result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory"));
	switch (e->kind) {
	case SQL_E_EXISTS:
		return const_cond(s, e, n > 0);
	case SQL_E_SCALARSUB: {
		struct sql_value nul = { .type = SQL_NULL };
		struct sql_expr *l = n == 1 ? vals[0] : lit_node(s, &nul, e->pos);

		if (l == NULL)
			return subq_fail(s, result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory"));
		*e = *l;
		return 0;
	}
	default:
		/* x IN (no rows) is FALSE even for a NULL x; NOT IN TRUE */
		if (n == 0)
			return const_cond(s, e, e->negated);
		e->kind = SQL_E_IN;
		e->list = vals;
		e->nlist = n;
		e->sub = NULL;
		e->height = e->a->height + 1;
		return 0;
	}
}

static int resolve_expr(struct subq *s, struct sql_stmt *st, struct sql_expr *e)
{
	if (e == NULL)
		return 0;
	if (resolve_expr(s, st, e->a) != 0 || resolve_expr(s, st, e->b) != 0 ||
	    resolve_expr(s, st, e->c) != 0)
		return -1;
	for (size_t i = 0; i < e->nlist; i++)
		if (resolve_expr(s, st, e->list[i]) != 0)
			return -1;
	if (e->kind == SQL_E_EXISTS || e->kind == SQL_E_INSUB || e->kind == SQL_E_SCALARSUB)
		return resolve_one(s, st, e);
	return 0;
}

static int resolve_stmt(struct subq *s, struct sql_stmt *st)
{
	struct sql_query *q = st->q;

	if (++s->depth > 32) {
		s->depth--;
		return subq_fail(s, result_error(NULL, LWC_ERR_ARG, -1, "subqueries nested too deeply"));
	}
	if (resolve_expr(s, st, st->where) != 0)
		goto fail;
	for (size_t i = 0; i < st->nsets; i++)
		if (resolve_expr(s, st, st->sets[i].value) != 0)
			goto fail;
	if (q != NULL) {
		for (size_t i = 0; i < q->ntargets; i++)
			if (resolve_expr(s, st, q->targets[i].e) != 0)
				goto fail;
		for (size_t i = 0; i < q->ngroup; i++)
			if (resolve_expr(s, st, q->group[i]) != 0)
				goto fail;
		if (resolve_expr(s, st, q->having) != 0)
			goto fail;
		for (size_t i = 0; i < q->norder; i++)
			if (resolve_expr(s, st, q->order[i].e) != 0)
				goto fail;
	}
	s->depth--;
	return 0;
fail:
	s->depth--;
	return -1;
}

/* Run the subqueries of st and rewrite it; NULL, or the error result. */
static lwc_result *resolve_subqueries(lwc_conn *c, struct sql_stmt *st)
{
	struct subq s = { c, st, st->arena, NULL, 0 };

	if (resolve_stmt(&s, st) != 0)
		return s.err != NULL ? s.err : result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory");
	return NULL;
}

lwc_result *lwc_exec(lwc_conn *c, const char *sql)
{
	struct sql_stmt *st = NULL;
	char err[512];
	int errpos = -1;
	lwc_result *r;

	if (c == NULL || sql == NULL)
		return result_error(NULL, LWC_ERR_ARG, -1, "no connection");
	if (c->open)
		return result_error(NULL, LWC_ERR_BUSY, -1, "the previous result is still open "
				    "(free it first)");
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
	if ((rc = load_catalog(c, err, sizeof(err))) != LWC_OK)
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

int lwc_describe(lwc_conn *c, const char *table, struct lwc_column **cols, int *ncols)
{
	struct ltable *t;

	*cols = NULL;
	*ncols = 0;
	if (c == NULL || table == NULL)
		return LWC_ERR_ARG;
	if ((t = find_table(c, table, 1)) == NULL)
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
	}
	*ncols = (int)t->sc.ncols;
	return LWC_OK;
}
