/*
 * lwc_write.c - liblwc: CREATE TABLE, DROP TABLE, CREATE INDEX and INSERT.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "lwc_int.h"
#include "range.h"
#include "tokmemo.h"
#include "wire.h"

/* ---- statements ------------------------------------------------------------------ */

lwc_result *result_command(const char *tag, uint64_t count)
{
	lwc_result *r = result_new();

	if (r == NULL)
		return &nomem_result;
	r->status = LWC_RESULT_COMMAND;
	snprintf(r->tag, sizeof(r->tag), "%s", tag);
	r->count = count;
	return r;
}

lwc_result *exec_create(lwc_conn *c, struct sql_stmt *st)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__CreateTable ct = LWC__CREATE_TABLE__INIT;
	struct sql_schema sc;
	uint8_t handle[CRY_TOKEN_BYTES], *blob = NULL, rtok[64] = { 0 };
	size_t blen = 0, fixed = 1;
	lwc_result *r;
	int rc;

	if (catalog_find(c, st->table, 1) != NULL && !st->if_not_exists)
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
	if ((rc = table_handle(c->k, st->table, handle)) != LWC_OK) {
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
	/* range indexes on the PRIMARY KEY and UNIQUE columns (range.h) */
	for (size_t i = 0; i < st->ncols; i++)
		if (st->cols[i].primary_key || st->cols[i].unique) {
			rtok[i] = (uint8_t)range_tokens_for(&st->cols[i]);
			if (rtok[i])
				ct.range_tokens.len = st->ncols;
		}
	ct.range_tokens.data = rtok;
	req.op_case = LWC__PROXY_REQUEST__OP_CREATE_TABLE;
	req.create_table = &ct;
	r = conn_call(c, &req, NULL);
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
		if ((r = conn_call(c, &req, NULL)) != NULL)
			return r;
	}
	return result_command("CREATE TABLE", 0);
}

lwc_result *exec_drop(lwc_conn *c, struct sql_stmt *st)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__DropTable dt = LWC__DROP_TABLE__INIT;
	uint8_t handle[CRY_TOKEN_BYTES];
	lwc_result *r;

	if (table_handle(c->k, st->table, handle) != LWC_OK)
		return result_error(NULL, LWC_ERR_CRYPTO, -1, "table handle derivation failed");
	dt.table.data = handle;
	dt.table.len = sizeof(handle);
	dt.if_exists = st->if_exists;
	req.op_case = LWC__PROXY_REQUEST__OP_DROP_TABLE;
	req.drop_table = &dt;
	r = conn_call(c, &req, NULL);
	c->catalog_loaded = 0;
	if (r && r->errcode == LWC_ERR_NO_TABLE) {
		free(r->errmsg);
		r->errmsg = NULL;
		return result_error(r, LWC_ERR_NO_TABLE, st->table_pos,
				    "table \"%s\" does not exist", st->table);
	}
	return r ? r : result_command("DROP TABLE", 0);
}

lwc_result *error_no_table(const char *name, int pos)
{
	return result_error(NULL, LWC_ERR_NO_TABLE, pos, "relation \"%s\" does not exist", name);
}

static void quote_ident(char *out, size_t len, const char *name)
{
	size_t o = 0;

	if (len < 3)
		return;
	out[o++] = '"';
	for (const char *p = name; *p && o + 3 < len; p++) {
		if (*p == '"')
			out[o++] = '"';
		out[o++] = *p;
	}
	out[o++] = '"';
	out[o] = '\0';
}

/* A range index added to a table that has rows: the proxy gave every row
 * zero tokens (no token) for the column.  One UPDATE of every row to
 * itself writes the real ones (the catalog, read again, says the rows
 * carry them), then the proxy checks every row has them and lets ranges
 * use the index.  Until then ranges on the column fall back to the
 * superset; a REINDEX (or CREATE INDEX) of the column runs this again. */
static lwc_result *range_build(lwc_conn *c, const char *table, size_t col)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__CreateIndex ci = LWC__CREATE_INDEX__INIT;
	char qt[2 * SQL_NAME_MAX + 3], qc[2 * SQL_NAME_MAX + 3], sql[8 * SQL_NAME_MAX + 64];
	struct ltable *t;
	lwc_result *r;

	c->catalog_loaded = 0;
	if ((t = catalog_find(c, table, 1)) == NULL)
		return error_no_table(table, -1);
	if (col >= t->sc.ncols || t->rtok[col] == 0 || (t->range_ready >> col & 1))
		return NULL;                    /* empty table: ready already */
	quote_ident(qt, sizeof(qt), table);
	quote_ident(qc, sizeof(qc), t->sc.cols[col].name);
	snprintf(sql, sizeof(sql), "UPDATE %s SET %s = %s", qt, qc, qc);
	r = lwc_exec(c, sql);
	if (r->status == LWC_RESULT_ERROR)
		return r;
	lwc_result_free(r);
	if ((t = catalog_find(c, table, 1)) == NULL)
		return error_no_table(table, -1);
	ci.table.data = t->handle;
	ci.table.len = sizeof(t->handle);
	ci.col = (uint32_t)col;
	ci.range_ready = 1;
	req.op_case = LWC__PROXY_REQUEST__OP_CREATE_INDEX;
	req.create_index = &ci;
	r = conn_call(c, &req, NULL);
	c->catalog_loaded = 0;
	return r;
}

/* The index is in the catalog (and a UNIQUE one enforced) when its range
 * tokens fail to build: say so in r's error. */
static lwc_result *build_failed(lwc_result *r, const char *table, const char *col)
{
	char *why = r->errmsg;

	r->errmsg = NULL;
	r = result_error(r, r->errcode, -1, "the index on column \"%s\" was created, but its "
			 "range tokens were not built (%s): ranges on it read every row until "
			 "REINDEX TABLE %s", col, why != NULL ? why : "error", table);
	free(why);
	return r;
}

lwc_result *exec_index(lwc_conn *c, struct sql_stmt *st)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__CreateIndex ci = LWC__CREATE_INDEX__INIT;
	struct ltable *t = catalog_find(c, st->table, 1);
	struct sql_value nul = { .type = SQL_NULL };
	uint8_t nt[CRY_TOKEN_BYTES];
	int col = -1;
	lwc_result *r;

	if (t == NULL)
		return error_no_table(st->table, st->table_pos);
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
	/* a range index on the (first) column, unless it has one */
	if (col < 64 && (t->rtok[col] == 0 || !(t->range_ready >> col & 1)))
		ci.range_tokens = range_tokens_for(&t->sc.cols[col]);
	req.op_case = LWC__PROXY_REQUEST__OP_CREATE_INDEX;
	req.create_index = &ci;
	r = conn_call(c, &req, NULL);
	if (r && r->errcode == LWC_ERR_UNIQUE) {
		free(r->errmsg);
		r->errmsg = NULL;
		return result_error(r, LWC_ERR_UNIQUE, -1, "could not create unique index \"%s\": "
				    "key values are duplicated in column \"%s\"", st->index,
				    t->sc.cols[col].name);
	}
	if (r == NULL && ci.unique)
		t->unique |= (uint64_t)1 << col;
	if (r == NULL && ci.range_tokens) {
		char cname[SQL_NAME_MAX + 1];

		/* range_build reloads the catalog: t is gone after it */
		snprintf(cname, sizeof(cname), "%s", t->sc.cols[col].name);
		if ((r = range_build(c, st->table, (size_t)col)) != NULL)
			return build_failed(r, st->table, cname);
	}
	return r ? r : result_command("CREATE INDEX", 0);
}

/* REINDEX TABLE t: a range index on every PRIMARY KEY and UNIQUE column
 * that has none (a table made before range indexes), and the build of any
 * range index that is not complete.  A plain CREATE INDEX of an older
 * database left no trace in the catalog: run it again. */
lwc_result *exec_reindex(lwc_conn *c, struct sql_stmt *st)
{
	struct ltable *t = catalog_find(c, st->table, 1);
	lwc_result *r = NULL;
	char table[SQL_NAME_MAX + 1];
	size_t ncols;

	if (t == NULL)
		return error_no_table(st->table, st->table_pos);
	snprintf(table, sizeof(table), "%s", t->sc.name);
	ncols = t->sc.ncols;
	for (size_t col = 0; col < ncols && col < 64 && r == NULL; col++) {
		Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
		Lwc__CreateIndex ci = LWC__CREATE_INDEX__INIT;
		int keyed;

		/* the catalog is read again by each build: look the table up anew */
		if ((t = catalog_find(c, table, 1)) == NULL)
			return error_no_table(table, -1);
		keyed = t->sc.cols[col].primary_key || (t->unique >> col & 1);
		if (t->rtok[col] != 0 && (t->range_ready >> col & 1))
			continue;
		if (t->rtok[col] == 0) {
			if (!keyed || range_tokens_for(&t->sc.cols[col]) == 0)
				continue;
			ci.table.data = t->handle;
			ci.table.len = sizeof(t->handle);
			ci.col = (uint32_t)col;
			ci.range_tokens = range_tokens_for(&t->sc.cols[col]);
			req.op_case = LWC__PROXY_REQUEST__OP_CREATE_INDEX;
			req.create_index = &ci;
			if ((r = conn_call(c, &req, NULL)) != NULL)
				break;
		}
		r = range_build(c, table, col);
	}
	c->catalog_loaded = 0;
	return r ? r : result_command("REINDEX", 0);
}

/* The sealed records and tokens of rows [lo, hi) of an INSERT: each row's
 * own slices of recs and tokb, so two parts can run side by side. */
struct seal_part {
	lwc_conn *c;
	const struct ltable *t;
	const cry_tokstate *ts;
	struct sql_value *const *rows;
	size_t lo, hi;
	const uint8_t *nonces;
	uint8_t *recs, *tokb;
	int rc;                       /* of the first row that failed */
	char err[256];
};

static void *seal_rows(void *arg)
{
	struct seal_part *p = arg;
	lwc_conn *c = p->c;
	size_t nt = p->t->ntok;
	/* rows repeat values and share range nodes: each part its own memo
	 * (none when out of memory: every token made) */
	struct tokmemo *memo = tokmemo_new(nt, p->hi - p->lo);

	for (size_t i = p->lo; i < p->hi; i++) {
		int rc = record_seal(c, &p->t->sc, p->rows[i], p->nonces + i * CRY_NONCE_BYTES,
				     p->recs + i * c->S, p->err, sizeof(p->err));

		if (rc != LWC_OK) {
			p->rc = rc;
			break;
		}
		if ((rc = row_tokens_memo(p->t, p->ts, p->rows[i], 0,
					  p->tokb + i * nt * CRY_TOKEN_BYTES, memo)) != LWC_OK) {
			p->rc = LWC_ERR_CRYPTO;
			snprintf(p->err, sizeof(p->err), "keyword token derivation failed: %s",
				 lwc_strerror(rc));
			break;
		}
	}
	tokmemo_free(memo);
	return NULL;
}

/* Rows from which an INSERT's records and tokens are made on two threads
 * (about 8 us a row: a thread costs less than 1 % of the half it takes). */
#define SEAL_SPLIT_ROWS  1024

int split_worth(size_t n, size_t min_rows)
{
	return n >= min_rows && sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

void run_pair(void *(*fn)(void *), void *a, void *b)
{
	pthread_t th;
	int two = pthread_create(&th, NULL, fn, b) == 0;

	fn(a);
	if (two)
		pthread_join(th, NULL);
	else
		fn(b);            /* no thread: the second half after the first */
}

/* seal_rows over rows[0..n), in halves on two threads when worth it; the
 * error of the first row that failed. */
static int seal_all(struct seal_part *a, size_t n, char *err, size_t errlen)
{
	struct seal_part b = *a;

	a->lo = 0;
	a->hi = n;
	if (split_worth(n, SEAL_SPLIT_ROWS)) {
		a->hi = b.lo = n / 2;
		b.hi = n;
		run_pair(seal_rows, a, &b);
		if (a->rc == LWC_OK && b.rc != LWC_OK)
			*a = b;
	} else {
		seal_rows(a);
	}
	if (a->rc != LWC_OK)
		snprintf(err, errlen, "%s", a->err);
	return a->rc;
}

/* One Insert of rows[0..n) (values per row, in column order), sealed and
 * packed into a frame for conn_send_frame as statement seq, to run only if
 * statement after_seq succeeded (0: whatever came before); no I/O.  NULL
 * or an error result. */
static lwc_result *insert_frame(lwc_conn *c, const struct ltable *t,
				struct sql_value *const *rows, size_t n, uint64_t seq,
				uint64_t after_seq, uint8_t **frame, size_t *frame_len)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Insert ins = LWC__INSERT__INIT;
	Lwc__Row *pr = calloc(n ? n : 1, sizeof(*pr)), **pp = calloc(n ? n : 1, sizeof(*pp));
	size_t nt = t->ntok;          /* column tokens, then range tokens */
	int block = (c->features & WIRE_FEATURE_TOKEN_BLOCK) != 0;
	/* one field a token only for a proxy without token blocks */
	ProtobufCBinaryData *toks = block ? NULL : calloc(n * nt + 1, sizeof(*toks));
	uint8_t *recs = malloc(n * c->S + 1), *tokb = malloc(n * nt * CRY_TOKEN_BYTES + 1);
	uint8_t *nonces = malloc(n * CRY_NONCE_BYTES + 1);
	cry_tokstate *ts = row_token_states(c->k, t);
	struct seal_part part = { .c = c, .t = t, .ts = ts, .rows = rows, .nonces = nonces,
				  .recs = recs, .tokb = tokb };
	char err[256];
	lwc_result *r = NULL;
	int rc;

	if (!pr || !pp || (!block && !toks) || !recs || !tokb || !nonces || !ts) {
		r = result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory");
		goto out;
	}
	randombytes_buf(nonces, n * CRY_NONCE_BYTES);    /* one call, not one a row */
	if ((rc = seal_all(&part, n, err, sizeof(err))) != LWC_OK) {
		r = result_error(NULL, rc, -1, "%s", err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		lwc__row__init(&pr[i]);
		pr[i].record.data = recs + i * c->S;
		pr[i].record.len = c->S;
		pp[i] = &pr[i];
		if (block) {
			/* one field for the row's tokens, not one each */
			pr[i].token_block.data = tokb + i * nt * CRY_TOKEN_BYTES;
			pr[i].token_block.len = nt * CRY_TOKEN_BYTES;
			continue;
		}
		pr[i].tokens = toks + i * nt;
		pr[i].n_tokens = nt;
		for (size_t j = 0; j < nt; j++) {
			toks[i * nt + j].data = tokb + (i * nt + j) * CRY_TOKEN_BYTES;
			toks[i * nt + j].len = CRY_TOKEN_BYTES;
		}
	}
	ins.table.data = (uint8_t *)(uintptr_t)t->handle;
	ins.table.len = sizeof(t->handle);
	ins.rows = pp;
	ins.n_rows = n;
	req.op_case = LWC__PROXY_REQUEST__OP_INSERT;
	req.insert = &ins;
	req.seq = seq;
	req.after_seq = after_seq;
	if ((rc = chan_frame_new(&req.base, frame, frame_len)) != LWC_OK)
		r = result_error(NULL, rc, -1, "%s", rc == LWC_ERR_TOO_BIG ?
				 "the INSERT is larger than one request to the proxy may be" :
				 "out of memory");
out:
	row_token_states_free(ts, t);
	free(nonces);
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
lwc_result *unique_error(lwc_result *r, const struct sql_schema *sc, size_t off)
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
		if (col >= 1 && col <= sc->ncols) {
			snprintf(msg, sizeof(msg), "duplicate key value violates unique constraint "
				 "on column \"%s\" of table \"%s\"%s", sc->cols[col - 1].name,
				 sc->name, rows);
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

size_t insert_max_rows(const lwc_conn *c, const struct ltable *t)
{
	size_t per = INSERT_FRAME_MAX / (c->S + t->ntok * (CRY_TOKEN_BYTES + 4) + 16);

	return per > 0 ? per : 1;
}

/* One request to the proxy, so the statement is all or nothing: an INSERT
 * of more rows than a request carries is refused, never split (a split one
 * would leave its first requests committed when a later one fails).  The
 * rows sealed and packed as statement seq: NULL or an error result. */
static lwc_result *insert_pack(lwc_conn *c, const struct ltable *t, const struct rowbuf *b,
			       uint64_t seq, uint64_t after_seq, uint8_t **frame,
			       size_t *frame_len)
{
	size_t per = insert_max_rows(c, t);

	if (b->n > per)
		return result_error(NULL, LWC_ERR_TOO_BIG, -1,
				    "an INSERT of %zu rows is more than one statement can carry to "
				    "the proxy (%zu rows of table \"%s\"); split it into smaller "
				    "statements", b->n, per, t->sc.name);
	return insert_frame(c, t, (struct sql_value *const *)b->rows, b->n, seq, after_seq,
			    frame, frame_len);
}

/* The proxy's answer to the INSERT sent as statement seq. */
lwc_result *insert_result(lwc_conn *c, uint64_t seq, const struct sql_schema *sc)
{
	uint64_t cnt = 0;
	lwc_result *r;
	char tag[64];

	if ((r = conn_wait_done(c, seq, &cnt)) != NULL)
		return r->errcode == LWC_ERR_UNIQUE ? unique_error(r, sc, 0) : r;
	snprintf(tag, sizeof(tag), "INSERT 0 %llu", (unsigned long long)cnt);
	return result_command(tag, cnt);
}

static lwc_result *insert_rows(lwc_conn *c, struct ltable *t, struct rowbuf *b)
{
	uint64_t seq = ++c->seq;
	uint8_t *frame = NULL;
	size_t len = 0;
	lwc_result *r = insert_pack(c, t, b, seq, 0, &frame, &len);
	int rc;

	if (r != NULL)
		return r;
	rc = conn_send_frame(c, frame, len);
	if (rc != LWC_OK) {
		chan_frame_free(frame, len);
		return result_error(NULL, rc, -1, "connection to the proxy lost: %s",
				    conn_lost_msg(rc));
	}
	free(frame);                      /* sealed in place: ciphertext */
	return insert_result(c, seq, &t->sc);
}

/* The rows of INSERT st into t, converted to its types, into *b: NULL, or
 * an error result.  Reads from the proxy only for INSERT ... SELECT. */
static lwc_result *insert_collect(lwc_conn *c, struct sql_stmt *st, struct ltable *t,
				  struct rowbuf *b)
{
	struct sql_schema sc;
	int target[64];
	char err[1024];
	lwc_result *r;
	int rc, errpos = -1;

	if (schema_copy(&sc, &t->sc) != LWC_OK)
		return &nomem_result;
	if (sql_bind(st, &sc, err, sizeof(err), &errpos) != LWC_OK) {
		schema_free(&sc);
		return result_error(NULL, LWC_ERR_SCHEMA, errpos, "%s", err);
	}
	schema_free(&sc);
	if (st->src[0]) {
		/* INSERT INTO t SELECT * FROM src */
		struct ltable *s = catalog_find(c, st->src, 1);
		struct sql_stmt *sel = NULL;
		char q[160];
		lwc_result *sr;

		if (s == NULL)
			return error_no_table(st->src, -1);
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
			if ((rc = rowbuf_add(b, t, v, target, st->ninsert_map, err,
					     sizeof(err), &bad)) != LWC_OK) {
				lwc_result_free(sr);
				rowbuf_free(b);
				return result_error(NULL, rc, -1, "%s", err);
			}
		}
		if (rc < 0) {
			r = result_error(NULL, sr->errcode, -1, "%s", lwc_result_error(sr));
			lwc_result_free(sr);
			rowbuf_free(b);
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
					rowbuf_free(b);
					return result_error(NULL, LWC_ERR_SCHEMA, e->pos, "%s", err);
				}
			}
			int bad;
			if ((rc = rowbuf_add(b, t, vals, target, nin, err, sizeof(err),
					     &bad)) != LWC_OK) {
				/* the refused value's place in the SQL (a \copy names its
				 * line and column from it), else its row's */
				int pos = nin == 0 ? -1 : st->rows[i][bad >= 0 ? bad : 0]->pos;
				free(vals);
				rowbuf_free(b);
				return result_error(NULL, rc, pos, "%s", err);
			}
		}
		free(vals);
	}
	return NULL;
}

lwc_result *insert_prepare(lwc_conn *c, struct sql_stmt *st, struct ltable *t, uint64_t seq,
			   uint64_t after_seq, uint8_t **frame, size_t *frame_len, uint64_t *rows)
{
	struct rowbuf b = { 0 };
	lwc_result *r;

	if ((r = insert_collect(c, st, t, &b)) == NULL)
		r = insert_pack(c, t, &b, seq, after_seq, frame, frame_len);
	*rows = b.n;
	rowbuf_free(&b);
	return r;
}

lwc_result *exec_insert(lwc_conn *c, struct sql_stmt *st)
{
	struct ltable *t = catalog_find(c, st->table, 1);
	struct rowbuf b = { 0 };
	lwc_result *r;

	if (t == NULL)
		return error_no_table(st->table, st->table_pos);
	if ((r = insert_collect(c, st, t, &b)) == NULL)
		r = insert_rows(c, t, &b);
	rowbuf_free(&b);
	return r;
}
