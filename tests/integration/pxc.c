/*
 * pxc.c - see pxc.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "chan.h"
#include "net.h"
#include "pxc.h"
#include "wire.h"

struct pxc {
	int fd;
	struct chan *ch;
	uint64_t seq;
	int timeout_ms;
	struct pxc_keys keys;
	size_t last_chunks, last_records;
	int from_proxy;               /* the last error was an Error answer */
	char err[512];
};

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (p == NULL) {
		fprintf(stderr, "pxc: out of memory\n");
		abort();
	}
	return p;
}

static void *xrealloc(void *p, size_t sz)
{
	void *q = realloc(p, sz ? sz : 1);

	if (q == NULL) {
		fprintf(stderr, "pxc: out of memory\n");
		abort();
	}
	return q;
}

/* ---- values, rows, tables ------------------------------------------------ */

int pxc_table_def(struct pxc_table *t, const char *name, const char *spec)
{
	char buf[512], *save = NULL, *tok;

	memset(t, 0, sizeof(*t));
	t->pk = -1;
	if (strlen(name) >= sizeof(t->name) || strlen(spec) >= sizeof(buf))
		return LWC_ERR_ARG;
	strcpy(t->name, name);
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *c1 = strchr(tok, ':'), *c2;
		if (c1 == NULL || t->ncols == PXC_MAX_COLS)
			return LWC_ERR_ARG;
		*c1++ = '\0';
		c2 = strchr(c1, ':');
		if (c2)
			*c2++ = '\0';
		if (strlen(tok) == 0 || strlen(tok) >= sizeof(t->col[0]))
			return LWC_ERR_ARG;
		strcpy(t->col[t->ncols], tok);
		if (strcmp(c1, "int") == 0)
			t->type[t->ncols] = CRY_TAG_INT;
		else if (strcmp(c1, "text") == 0)
			t->type[t->ncols] = CRY_TAG_TEXT;
		else
			return LWC_ERR_ARG;
		if (c2 && strcmp(c2, "pk") == 0)
			t->pk = t->ncols;
		else if (c2)
			return LWC_ERR_ARG;
		t->ncols++;
	}
	return t->ncols ? LWC_OK : LWC_ERR_ARG;
}

int pxc_col(const struct pxc_table *t, const char *col)
{
	for (int i = 0; i < t->ncols; i++)
		if (strcmp(t->col[i], col) == 0)
			return i;
	return -1;
}

static int col_or_die(const struct pxc_table *t, const char *col)
{
	int i = pxc_col(t, col);

	if (i < 0) {
		fprintf(stderr, "pxc: table %s has no column %s\n", t->name, col);
		abort();
	}
	return i;
}

struct pxc_val pxc_int(int64_t v)
{
	struct pxc_val x;

	memset(&x, 0, sizeof(x));
	x.tag = CRY_TAG_INT;
	x.i = v;
	return x;
}

struct pxc_val pxc_text(const char *s)
{
	struct pxc_val x;

	memset(&x, 0, sizeof(x));
	x.tag = CRY_TAG_TEXT;
	snprintf(x.s, sizeof(x.s), "%s", s);
	return x;
}

struct pxc_val pxc_null(void)
{
	struct pxc_val x;

	memset(&x, 0, sizeof(x));
	x.tag = CRY_TAG_NULL;
	return x;
}

int pxc_val_eq(const struct pxc_val *a, const struct pxc_val *b)
{
	if (a->tag != b->tag)
		return 0;
	if (a->tag == CRY_TAG_INT)
		return a->i == b->i;
	if (a->tag == CRY_TAG_TEXT)
		return strcmp(a->s, b->s) == 0;
	return 1;
}

struct pxc_row pxc_row_make(const struct pxc_table *t, const struct pxc_val *vals)
{
	struct pxc_row r;

	memset(&r, 0, sizeof(r));
	r.ncols = t->ncols;
	for (int i = 0; i < t->ncols; i++)
		r.v[i] = vals[i];
	return r;
}

int pxc_row_eq(const struct pxc_row *a, const struct pxc_row *b)
{
	if (a->ncols != b->ncols)
		return 0;
	for (int i = 0; i < a->ncols; i++)
		if (!pxc_val_eq(&a->v[i], &b->v[i]))
			return 0;
	return 1;
}

void pxc_row_str(const struct pxc_row *r, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int i = 0; i < r->ncols && o < len; i++) {
		const char *sep = i ? "|" : "";
		int n;
		if (r->v[i].tag == CRY_TAG_INT)
			n = snprintf(buf + o, len - o, "%s%lld", sep, (long long)r->v[i].i);
		else if (r->v[i].tag == CRY_TAG_TEXT)
			n = snprintf(buf + o, len - o, "%s'%s'", sep, r->v[i].s);
		else
			n = snprintf(buf + o, len - o, "%sNULL", sep);
		if (n < 0)
			break;
		o += (size_t)n;
	}
}

static int row_cmp(const void *a, const void *b)
{
	char sa[1024], sb[1024];

	pxc_row_str(a, sa, sizeof(sa));
	pxc_row_str(b, sb, sizeof(sb));
	return strcmp(sa, sb);
}

void pxc_rows_sort(struct pxc_row *rows, size_t n)
{
	if (n > 1)
		qsort(rows, n, sizeof(*rows), row_cmp);
}

/* ---- keys and client-side crypto ----------------------------------------- */

int pxc_keys_init(struct pxc_keys *k, const uint8_t ku[32], size_t R)
{
	int rc;

	memset(k, 0, sizeof(*k));
	k->R = R ? R : PXC_R_DEFAULT;
	if ((rc = cry_init()) != LWC_OK ||
	    (rc = cry_kdf(k->tok, ku, CRY_SUB_TOKEN, CRY_CTX_USER)) != LWC_OK ||
	    (rc = cry_kdf(k->rec, ku, CRY_SUB_RECORD, CRY_CTX_USER)) != LWC_OK)
		return rc;
	return LWC_OK;
}

static void must(int rc, const char *what)
{
	if (rc != LWC_OK) {
		fprintf(stderr, "pxc: %s: %s\n", what, lwc_strerror(rc));
		abort();
	}
}

void pxc_handle(const struct pxc_keys *k, const char *table, uint8_t out[16])
{
	must(cry_token(out, k->tok, "", "", CRY_TAG_TEXT, table, strlen(table)), "handle");
}

void pxc_token(const struct pxc_keys *k, const struct pxc_table *t, int col,
	       const struct pxc_val *v, uint8_t out[16])
{
	uint8_t be[8];

	if (v->tag == CRY_TAG_INT) {
		cry_put_be64(be, (uint64_t)v->i);
		must(cry_token(out, k->tok, t->name, t->col[col], CRY_TAG_INT, be, 8), "token");
	} else if (v->tag == CRY_TAG_TEXT) {
		must(cry_token(out, k->tok, t->name, t->col[col], CRY_TAG_TEXT, v->s,
			       strlen(v->s)), "token");
	} else {
		must(cry_token(out, k->tok, t->name, t->col[col], CRY_TAG_NULL, NULL, 0), "token");
	}
}

int pxc_seal_row(const struct pxc_keys *k, const struct pxc_table *t,
		 const struct pxc_row *r, uint8_t *out)
{
	uint8_t *rec = xcalloc(1, k->R);
	size_t p = 1;
	int rc;

	if (r->ncols != t->ncols) {
		free(rec);
		return LWC_ERR_ARG;
	}
	rec[0] = (uint8_t)r->ncols;
	for (int i = 0; i < r->ncols; i++) {
		const struct pxc_val *v = &r->v[i];
		size_t need = 1 + (v->tag == CRY_TAG_INT ? 8 :
				   v->tag == CRY_TAG_TEXT ? 2 + strlen(v->s) : 0);
		if (v->tag != CRY_TAG_NULL && v->tag != t->type[i]) {
			free(rec);
			return LWC_ERR_ARG;
		}
		if (p + need > k->R) {
			free(rec);
			return LWC_ERR_ARG;
		}
		rec[p++] = v->tag;
		if (v->tag == CRY_TAG_INT) {
			cry_put_be64(rec + p, (uint64_t)v->i);
			p += 8;
		} else if (v->tag == CRY_TAG_TEXT) {
			size_t n = strlen(v->s);
			rec[p] = (uint8_t)(n >> 8);
			rec[p + 1] = (uint8_t)n;
			memcpy(rec + p + 2, v->s, n);
			p += 2 + n;
		}
	}
	rc = cry_record_seal(out, k->rec, rec, k->R, t->name);
	sodium_memzero(rec, k->R);
	free(rec);
	return rc;
}

int pxc_open_row(const struct pxc_keys *k, const struct pxc_table *t,
		 const uint8_t *ct, size_t len, struct pxc_row *r)
{
	uint8_t *rec;
	size_t p = 1;
	int rc = LWC_OK;

	memset(r, 0, sizeof(*r));
	if (len != k->R + CRY_RECORD_OVERHEAD)
		return LWC_ERR_INTEGRITY;
	rec = xcalloc(1, k->R);
	if (cry_record_open(rec, k->rec, ct, len, t->name) != LWC_OK) {
		free(rec);
		return LWC_ERR_INTEGRITY;
	}
	if (rec[0] != t->ncols) {
		rc = LWC_ERR_FORMAT;
		goto out;
	}
	r->ncols = rec[0];
	for (int i = 0; i < r->ncols; i++) {
		struct pxc_val *v = &r->v[i];
		if (p >= k->R) {
			rc = LWC_ERR_FORMAT;
			goto out;
		}
		v->tag = rec[p++];
		if (v->tag == CRY_TAG_INT) {
			if (p + 8 > k->R) {
				rc = LWC_ERR_FORMAT;
				goto out;
			}
			v->i = (int64_t)cry_get_be64(rec + p);
			p += 8;
		} else if (v->tag == CRY_TAG_TEXT) {
			size_t n;
			if (p + 2 > k->R) {
				rc = LWC_ERR_FORMAT;
				goto out;
			}
			n = (size_t)rec[p] << 8 | rec[p + 1];
			if (n > PXC_TEXT_MAX || p + 2 + n > k->R) {
				rc = LWC_ERR_FORMAT;
				goto out;
			}
			memcpy(v->s, rec + p + 2, n);
			v->s[n] = '\0';
			p += 2 + n;
		} else if (v->tag != CRY_TAG_NULL) {
			rc = LWC_ERR_FORMAT;
			goto out;
		}
	}
out:
	sodium_memzero(rec, k->R);
	free(rec);
	return rc;
}

Lwc__Row *pxc_pbrow(const struct pxc_keys *k, const struct pxc_table *t,
		    const struct pxc_row *r)
{
	Lwc__Row *row = xcalloc(1, sizeof(*row));
	size_t S = k->R + CRY_RECORD_OVERHEAD;

	lwc__row__init(row);
	row->record.data = xcalloc(1, S);
	row->record.len = S;
	if (pxc_seal_row(k, t, r, row->record.data) != LWC_OK) {
		fprintf(stderr, "pxc: row does not fit table %s\n", t->name);
		abort();
	}
	row->n_tokens = (size_t)t->ncols;
	row->tokens = xcalloc((size_t)t->ncols, sizeof(ProtobufCBinaryData));
	for (int i = 0; i < t->ncols; i++) {
		row->tokens[i].data = xcalloc(1, CRY_TOKEN_BYTES);
		row->tokens[i].len = CRY_TOKEN_BYTES;
		pxc_token(k, t, i, &r->v[i], row->tokens[i].data);
	}
	return row;
}

void pxc_pbrow_free(Lwc__Row *row)
{
	if (row == NULL)
		return;
	for (size_t i = 0; i < row->n_tokens; i++)
		free(row->tokens[i].data);
	free(row->tokens);
	free(row->record.data);
	free(row);
}

/* ---- predicates ----------------------------------------------------------- */

static Lwc__Pred *pred_new(Lwc__Pred__Op op)
{
	Lwc__Pred *p = xcalloc(1, sizeof(*p));

	lwc__pred__init(p);
	p->op = op;
	return p;
}

Lwc__Pred *pxc_all(void)
{
	return pred_new(LWC__PRED__OP__ALL);
}

Lwc__Pred *pxc_none(void)
{
	return pred_new(LWC__PRED__OP__NONE);
}

Lwc__Pred *pxc_in(const struct pxc_keys *k, const struct pxc_table *t, const char *col,
		  const struct pxc_val *vals, size_t n)
{
	Lwc__Pred *p = pred_new(LWC__PRED__OP__IN);
	int c = col_or_die(t, col);

	p->col = (uint32_t)c;
	p->n_tokens = n;
	p->tokens = xcalloc(n, sizeof(ProtobufCBinaryData));
	for (size_t i = 0; i < n; i++) {
		p->tokens[i].data = xcalloc(1, CRY_TOKEN_BYTES);
		p->tokens[i].len = CRY_TOKEN_BYTES;
		pxc_token(k, t, c, &vals[i], p->tokens[i].data);
	}
	return p;
}

Lwc__Pred *pxc_eq(const struct pxc_keys *k, const struct pxc_table *t, const char *col,
		  struct pxc_val v)
{
	Lwc__Pred *p = pxc_in(k, t, col, &v, 1);

	p->op = LWC__PRED__OP__EQ;
	return p;
}

Lwc__Pred *pxc_eq_int(const struct pxc_keys *k, const struct pxc_table *t, const char *col,
		      int64_t v)
{
	return pxc_eq(k, t, col, pxc_int(v));
}

Lwc__Pred *pxc_eq_text(const struct pxc_keys *k, const struct pxc_table *t, const char *col,
		       const char *s)
{
	return pxc_eq(k, t, col, pxc_text(s));
}

Lwc__Pred *pxc_is_null(const struct pxc_keys *k, const struct pxc_table *t, const char *col)
{
	return pxc_eq(k, t, col, pxc_null());
}

static Lwc__Pred *pred_args(Lwc__Pred__Op op, Lwc__Pred *a, Lwc__Pred *b)
{
	Lwc__Pred *p = pred_new(op);

	p->n_args = b ? 2 : 1;
	p->args = xcalloc(p->n_args, sizeof(Lwc__Pred *));
	p->args[0] = a;
	if (b)
		p->args[1] = b;
	return p;
}

Lwc__Pred *pxc_and(Lwc__Pred *a, Lwc__Pred *b)
{
	return pred_args(LWC__PRED__OP__AND, a, b);
}

Lwc__Pred *pxc_or(Lwc__Pred *a, Lwc__Pred *b)
{
	return pred_args(LWC__PRED__OP__OR, a, b);
}

Lwc__Pred *pxc_not(Lwc__Pred *a)
{
	return pred_args(LWC__PRED__OP__NOT, a, NULL);
}

Lwc__Pred *pxc_raw_pred(Lwc__Pred__Op op, uint32_t col, const uint8_t *tokens,
			size_t ntokens, size_t toklen)
{
	Lwc__Pred *p = pred_new(op);

	p->col = col;
	p->n_tokens = ntokens;
	p->tokens = ntokens ? xcalloc(ntokens, sizeof(ProtobufCBinaryData)) : NULL;
	for (size_t i = 0; i < ntokens; i++) {
		p->tokens[i].data = xcalloc(1, toklen);
		p->tokens[i].len = toklen;
		if (tokens)
			memcpy(p->tokens[i].data, tokens + i * toklen, toklen);
	}
	return p;
}

void pxc_pred_free(Lwc__Pred *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n_tokens; i++)
		free(p->tokens[i].data);
	free(p->tokens);
	for (size_t i = 0; i < p->n_args; i++)
		pxc_pred_free(p->args[i]);
	free(p->args);
	free(p);
}

/* ---- connection ----------------------------------------------------------- */

int pxc_connect(struct pxc **out, const char *addr, const char *user,
		const uint8_t kdbu[32], const uint8_t ku[32], char *err, size_t errlen)
{
	struct pxc *c;
	int rc;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	c = xcalloc(1, sizeof(*c));
	c->fd = -1;
	c->timeout_ms = PXC_TIMEOUT_MS;
	if ((rc = pxc_keys_init(&c->keys, ku, PXC_R_DEFAULT)) != LWC_OK)
		goto fail;
	if ((rc = net_connect(addr, c->timeout_ms, &c->fd, err, errlen)) != LWC_OK)
		goto fail;
	if ((rc = chan_new(&c->ch, 0)) != LWC_OK)
		goto fail;
	if ((rc = chan_connect(c->ch, c->fd, user, kdbu, c->timeout_ms, err, errlen)) != LWC_OK)
		goto fail;
	*out = c;
	return LWC_OK;
fail:
	pxc_close(c);
	return rc;
}

void pxc_close(struct pxc *c)
{
	if (c == NULL)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->ch)
		chan_free(c->ch);
	sodium_memzero(&c->keys, sizeof(c->keys));
	free(c);
}

const char *pxc_errmsg(const struct pxc *c)
{
	return c->err;
}

const struct pxc_keys *pxc_keys(const struct pxc *c)
{
	return &c->keys;
}

int pxc_fd(const struct pxc *c)
{
	return c->fd;
}

struct chan *pxc_chan(const struct pxc *c)
{
	return c->ch;
}

void pxc_set_timeout(struct pxc *c, int ms)
{
	c->timeout_ms = ms;
}

size_t pxc_last_chunks(const struct pxc *c)
{
	return c->last_chunks;
}

size_t pxc_last_records(const struct pxc *c)
{
	return c->last_records;
}

int pxc_error_from_proxy(const struct pxc *c)
{
	return c->from_proxy;
}

int pxc_send(struct pxc *c, Lwc__ProxyRequest *req)
{
	int rc;

	if (req->op_case != LWC__PROXY_REQUEST__OP_DECISIONS)
		c->from_proxy = 0;

	if (req->op_case != LWC__PROXY_REQUEST__OP_DECISIONS)
		req->seq = ++c->seq;
	else
		req->seq = c->seq;
	rc = chan_write_msg(c->ch, c->fd, &req->base);
	if (rc != LWC_OK)
		snprintf(c->err, sizeof(c->err), "send: %s", lwc_strerror(rc));
	return rc;
}

int pxc_recv(struct pxc *c, Lwc__ProxyResponse **resp)
{
	ProtobufCMessage *m = NULL;
	int rc = chan_read_msg(c->ch, c->fd, &lwc__proxy_response__descriptor, WIRE_FRAME_MAX,
			       &m, c->timeout_ms);

	*resp = NULL;
	if (rc != LWC_OK) {
		snprintf(c->err, sizeof(c->err), "receive: %s", lwc_strerror(rc));
		return rc;
	}
	*resp = (Lwc__ProxyResponse *)m;
	return LWC_OK;
}

/* Error answer: its code (negative), message into c->err. */
static int take_error(struct pxc *c, const Lwc__ProxyResponse *r)
{
	int code = r->error ? r->error->code : LWC_ERR_PROTO;

	if (code > 0)
		code = -code;
	if (code == 0)
		code = LWC_ERR_PROTO;
	c->from_proxy = 1;
	snprintf(c->err, sizeof(c->err), "%s", r->error && r->error->message ?
		 r->error->message : "(no message)");
	return code;
}

static int check_seq(struct pxc *c, const Lwc__ProxyResponse *r)
{
	if (r->seq != c->seq) {
		snprintf(c->err, sizeof(c->err), "response seq %llu, expected %llu",
			 (unsigned long long)r->seq, (unsigned long long)c->seq);
		return LWC_ERR_PROTO;
	}
	return LWC_OK;
}

int pxc_simple(struct pxc *c, Lwc__ProxyRequest *req, uint64_t *done_count)
{
	int rc;

	c->last_chunks = c->last_records = 0;
	c->err[0] = '\0';
	if ((rc = pxc_send(c, req)) != LWC_OK)
		return rc;
	for (;;) {
		Lwc__ProxyResponse *r = NULL;
		if ((rc = pxc_recv(c, &r)) != LWC_OK)
			return rc;
		if ((rc = check_seq(c, r)) != LWC_OK) {
			lwc__proxy_response__free_unpacked(r, NULL);
			return rc;
		}
		switch (r->result_case) {
		case LWC__PROXY_RESPONSE__RESULT_ROWS:
			c->last_chunks++;
			c->last_records += r->rows->n_records;
			break;
		case LWC__PROXY_RESPONSE__RESULT_CANDIDATES:
			c->last_chunks++;
			c->last_records += r->candidates->n_records;
			snprintf(c->err, sizeof(c->err), "unexpected Candidates");
			lwc__proxy_response__free_unpacked(r, NULL);
			return LWC_ERR_PROTO;
		case LWC__PROXY_RESPONSE__RESULT_DONE:
			if (done_count)
				*done_count = r->done->count;
			lwc__proxy_response__free_unpacked(r, NULL);
			return LWC_OK;
		case LWC__PROXY_RESPONSE__RESULT_CATALOG:
			lwc__proxy_response__free_unpacked(r, NULL);
			return LWC_OK;
		case LWC__PROXY_RESPONSE__RESULT_ERROR:
			rc = take_error(c, r);
			lwc__proxy_response__free_unpacked(r, NULL);
			return rc;
		default:
			snprintf(c->err, sizeof(c->err), "response without a result");
			lwc__proxy_response__free_unpacked(r, NULL);
			return LWC_ERR_PROTO;
		}
		lwc__proxy_response__free_unpacked(r, NULL);
	}
}

int pxc_create_table(struct pxc *c, const struct pxc_table *t, int if_not_exists)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__CreateTable ct = LWC__CREATE_TABLE__INIT;
	uint8_t handle[16], *schema;
	char plain[1024];
	size_t o = 0, slen;
	int rc;

	/* the schema is opaque to the proxy: sealed under the record key */
	for (int i = 0; i < t->ncols; i++)
		o += (size_t)snprintf(plain + o, sizeof(plain) - o, "%s%s:%s%s", i ? "," : "",
				      t->col[i], t->type[i] == CRY_TAG_INT ? "int" : "text",
				      t->pk == i ? ":pk" : "");
	slen = o + CRY_RECORD_OVERHEAD;
	schema = xcalloc(1, slen);
	if ((rc = cry_record_seal(schema, c->keys.rec, (const uint8_t *)plain, o, t->name)) != LWC_OK) {
		free(schema);
		return rc;
	}
	pxc_handle(&c->keys, t->name, handle);
	ct.table.data = handle;
	ct.table.len = 16;
	ct.ncols = (uint32_t)t->ncols;
	ct.pk_col = t->pk;
	ct.schema.data = schema;
	ct.schema.len = slen;
	ct.if_not_exists = if_not_exists != 0;
	req.op_case = LWC__PROXY_REQUEST__OP_CREATE_TABLE;
	req.create_table = &ct;
	rc = pxc_simple(c, &req, NULL);
	free(schema);
	return rc;
}

int pxc_drop_table(struct pxc *c, const struct pxc_table *t, int if_exists)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__DropTable dt = LWC__DROP_TABLE__INIT;
	uint8_t handle[16];

	pxc_handle(&c->keys, t->name, handle);
	dt.table.data = handle;
	dt.table.len = 16;
	dt.if_exists = if_exists != 0;
	req.op_case = LWC__PROXY_REQUEST__OP_DROP_TABLE;
	req.drop_table = &dt;
	return pxc_simple(c, &req, NULL);
}

int pxc_create_index(struct pxc *c, const struct pxc_table *t, const char *col, int unique)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__CreateIndex ci = LWC__CREATE_INDEX__INIT;
	uint8_t handle[16];

	pxc_handle(&c->keys, t->name, handle);
	ci.table.data = handle;
	ci.table.len = 16;
	ci.col = (uint32_t)col_or_die(t, col);
	ci.unique = unique != 0;
	req.op_case = LWC__PROXY_REQUEST__OP_CREATE_INDEX;
	req.create_index = &ci;
	return pxc_simple(c, &req, NULL);
}

int pxc_insert(struct pxc *c, const struct pxc_table *t, const struct pxc_row *rows,
	       size_t n, uint64_t *count)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Insert ins = LWC__INSERT__INIT;
	uint8_t handle[16];
	uint64_t cnt = 0;
	int rc;

	pxc_handle(&c->keys, t->name, handle);
	ins.table.data = handle;
	ins.table.len = 16;
	ins.n_rows = n;
	ins.rows = xcalloc(n, sizeof(Lwc__Row *));
	for (size_t i = 0; i < n; i++)
		ins.rows[i] = pxc_pbrow(&c->keys, t, &rows[i]);
	req.op_case = LWC__PROXY_REQUEST__OP_INSERT;
	req.insert = &ins;
	rc = pxc_simple(c, &req, &cnt);
	for (size_t i = 0; i < n; i++)
		pxc_pbrow_free(ins.rows[i]);
	free(ins.rows);
	if (count)
		*count = cnt;
	return rc;
}

void pxc_result_free(struct pxc_result *r)
{
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

int pxc_select_send(struct pxc *c, const struct pxc_table *t, Lwc__Pred *where, int candidates)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Select sel = LWC__SELECT__INIT;
	uint8_t handle[16];
	int rc;

	if (where == NULL)
		where = pxc_all();
	pxc_handle(&c->keys, t->name, handle);
	sel.table.data = handle;
	sel.table.len = 16;
	sel.where = where;
	sel.candidates = candidates != 0;
	req.op_case = LWC__PROXY_REQUEST__OP_SELECT;
	req.select = &sel;
	rc = pxc_send(c, &req);
	pxc_pred_free(where);
	return rc;
}

int pxc_select(struct pxc *c, const struct pxc_table *t, Lwc__Pred *where, int candidates,
	       struct pxc_result *res)
{
	size_t cap = 0;
	int rc, bad = 0;

	memset(res, 0, sizeof(*res));
	c->last_chunks = c->last_records = 0;
	c->err[0] = '\0';
	if ((rc = pxc_select_send(c, t, where, candidates)) != LWC_OK)
		return rc;
	for (;;) {
		Lwc__ProxyResponse *r = NULL;
		if ((rc = pxc_recv(c, &r)) != LWC_OK)
			break;
		if ((rc = check_seq(c, r)) != LWC_OK) {
			lwc__proxy_response__free_unpacked(r, NULL);
			break;
		}
		if (r->result_case == LWC__PROXY_RESPONSE__RESULT_ROWS) {
			c->last_chunks++;
			c->last_records += r->rows->n_records;
			for (size_t i = 0; i < r->rows->n_records; i++) {
				if (res->n == cap) {
					cap = cap ? cap * 2 : 64;
					res->rows = xrealloc(res->rows, cap * sizeof(*res->rows));
				}
				if (pxc_open_row(&c->keys, t, r->rows->records[i].data,
						 r->rows->records[i].len, &res->rows[res->n]) != LWC_OK) {
					if (!bad)
						snprintf(c->err, sizeof(c->err),
							 "SELECT returned a record (%zu bytes) that does "
							 "not open as a row of %s", r->rows->records[i].len,
							 t->name);
					bad = 1;
					continue;
				}
				res->n++;
			}
			lwc__proxy_response__free_unpacked(r, NULL);
			continue;
		}
		if (r->result_case == LWC__PROXY_RESPONSE__RESULT_DONE) {
			res->done_count = r->done->count;
			rc = bad ? LWC_ERR_INTEGRITY : LWC_OK;
		} else if (r->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR) {
			rc = take_error(c, r);
		} else {
			snprintf(c->err, sizeof(c->err), "SELECT answered with result %d",
				 (int)r->result_case);
			rc = LWC_ERR_PROTO;
		}
		lwc__proxy_response__free_unpacked(r, NULL);
		break;
	}
	if (rc != LWC_OK)
		pxc_result_free(res);
	return rc;
}

/* UPDATE or interactive DELETE. */
static int interactive(struct pxc *c, const struct pxc_table *t, Lwc__ProxyRequest *req,
		       int is_update, pxc_decide_fn fn, void *arg, uint64_t *count)
{
	int rc, bad = 0;

	if (count)
		*count = 0;
	if ((rc = pxc_send(c, req)) != LWC_OK)
		return rc;
	for (;;) {
		Lwc__ProxyResponse *r = NULL;
		if ((rc = pxc_recv(c, &r)) != LWC_OK)
			return rc;
		if ((rc = check_seq(c, r)) != LWC_OK) {
			lwc__proxy_response__free_unpacked(r, NULL);
			return rc;
		}
		if (r->result_case == LWC__PROXY_RESPONSE__RESULT_CANDIDATES) {
			Lwc__ProxyRequest dreq = LWC__PROXY_REQUEST__INIT;
			Lwc__Decisions ds = LWC__DECISIONS__INIT;
			size_t n = r->candidates->n_records;
			Lwc__Decision *d = xcalloc(n, sizeof(*d));
			Lwc__Decision **dp = xcalloc(n, sizeof(*dp));
			int abort_it = 0;

			c->last_chunks++;
			c->last_records += n;
			for (size_t i = 0; i < n && !abort_it; i++) {
				struct pxc_row old, nw;
				int v;
				lwc__decision__init(&d[i]);
				dp[i] = &d[i];
				if (pxc_open_row(&c->keys, t, r->candidates->records[i].data,
						 r->candidates->records[i].len, &old) != LWC_OK) {
					snprintf(c->err, sizeof(c->err), "candidate %zu does not open "
						 "as a row of %s", i, t->name);
					bad = 1;
					abort_it = 1;
					break;
				}
				nw = old;
				v = fn(arg, &old, &nw);
				if (v < 0) {
					abort_it = 1;
				} else if (v > 0) {
					d[i].change = 1;
					if (is_update)
						d[i].row = pxc_pbrow(&c->keys, t, &nw);
				}
			}
			ds.n_d = abort_it ? 0 : n;
			ds.d = dp;
			ds.abort = abort_it != 0;
			ds.reason = (char *)(uintptr_t)(abort_it ? "client aborted" : "");
			dreq.op_case = LWC__PROXY_REQUEST__OP_DECISIONS;
			dreq.decisions = &ds;
			rc = pxc_send(c, &dreq);
			for (size_t i = 0; i < n; i++)
				pxc_pbrow_free(d[i].row);
			free(d);
			free(dp);
			lwc__proxy_response__free_unpacked(r, NULL);
			if (rc != LWC_OK)
				return rc;
			continue;
		}
		if (r->result_case == LWC__PROXY_RESPONSE__RESULT_DONE) {
			if (count)
				*count = r->done->count;
			rc = bad ? LWC_ERR_INTEGRITY : LWC_OK;
		} else if (r->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR) {
			rc = bad ? LWC_ERR_INTEGRITY : take_error(c, r);
		} else {
			snprintf(c->err, sizeof(c->err), "%s answered with result %d",
				 is_update ? "UPDATE" : "DELETE", (int)r->result_case);
			rc = LWC_ERR_PROTO;
		}
		lwc__proxy_response__free_unpacked(r, NULL);
		return rc;
	}
}

int pxc_update(struct pxc *c, const struct pxc_table *t, Lwc__Pred *where,
	       pxc_decide_fn fn, void *arg, uint64_t *count)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Update up = LWC__UPDATE__INIT;
	uint8_t handle[16];
	int rc;

	c->last_chunks = c->last_records = 0;
	c->err[0] = '\0';
	if (where == NULL)
		where = pxc_all();
	pxc_handle(&c->keys, t->name, handle);
	up.table.data = handle;
	up.table.len = 16;
	up.where = where;
	req.op_case = LWC__PROXY_REQUEST__OP_UPDATE;
	req.update = &up;
	rc = interactive(c, t, &req, 1, fn, arg, count);
	pxc_pred_free(where);
	return rc;
}

int pxc_delete(struct pxc *c, const struct pxc_table *t, Lwc__Pred *where,
	       pxc_decide_fn fn, void *arg, uint64_t *count)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Delete del = LWC__DELETE__INIT;
	uint8_t handle[16];
	uint64_t cnt = 0;
	int rc;

	c->last_chunks = c->last_records = 0;
	c->err[0] = '\0';
	if (where == NULL)
		where = pxc_all();
	pxc_handle(&c->keys, t->name, handle);
	del.table.data = handle;
	del.table.len = 16;
	del.where = where;
	del.candidates = fn != NULL;
	req.op_case = LWC__PROXY_REQUEST__OP_DELETE;
	req.delete_ = &del;
	if (fn) {
		rc = interactive(c, t, &req, 0, fn, arg, &cnt);
	} else {
		rc = pxc_simple(c, &req, &cnt);
	}
	pxc_pred_free(where);
	if (count)
		*count = cnt;
	return rc;
}

int pxc_list_tables(struct pxc *c, Lwc__ProxyResponse **resp)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__ListTables lt = LWC__LIST_TABLES__INIT;
	int rc;

	*resp = NULL;
	c->err[0] = '\0';
	req.op_case = LWC__PROXY_REQUEST__OP_LIST_TABLES;
	req.list_tables = &lt;
	if ((rc = pxc_send(c, &req)) != LWC_OK)
		return rc;
	if ((rc = pxc_recv(c, resp)) != LWC_OK)
		return rc;
	if ((rc = check_seq(c, *resp)) != LWC_OK)
		goto fail;
	if ((*resp)->result_case == LWC__PROXY_RESPONSE__RESULT_CATALOG)
		return LWC_OK;
	rc = (*resp)->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR ?
		take_error(c, *resp) : LWC_ERR_PROTO;
fail:
	lwc__proxy_response__free_unpacked(*resp, NULL);
	*resp = NULL;
	return rc;
}
