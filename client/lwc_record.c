/*
 * lwc_record.c - liblwc: tokens, sealed records and schema blobs,
 * in these formats:
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
 */
#include <malloc.h>
#include <string.h>

#include <sodium.h>

#include "lwc_int.h"
#include "tokmemo.h"

/* Free a buffer that held plaintext, wiped first like keys (its whole
 * allocation: rows come from several places, each with its own size). */
static void wipe_free(void *p)
{
	if (p == NULL)
		return;
	sodium_memzero(p, malloc_usable_size(p));
	free(p);
}

void row_free(struct lrow *row)
{
	wipe_free(row->v);
	wipe_free(row->text);
	row->v = NULL;
	row->text = NULL;
}

void schema_free(struct sql_schema *sc)
{
	free(sc->cols);
	sc->cols = NULL;
	sc->ncols = 0;
}

int schema_copy(struct sql_schema *dst, const struct sql_schema *src)
{
	*dst = *src;
	dst->cols = malloc((src->ncols ? src->ncols : 1) * sizeof(*dst->cols));
	if (dst->cols == NULL)
		return LWC_ERR_NOMEM;
	memcpy(dst->cols, src->cols, src->ncols * sizeof(*dst->cols));
	return LWC_OK;
}

enum lwc_type ctype_to_type(enum sql_ctype t)
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
int table_handle(const struct keys *k, const char *table, uint8_t out[CRY_TOKEN_BYTES])
{
	return cry_token(out, k->tok, "", "", CRY_TAG_TEXT, table, strlen(table));
}

/* Token tag of column c's value v, into out; from st when it is given. */
static int token_of(const struct keys *k, const struct sql_schema *sc, size_t c,
		    const cry_tokstate *st, uint8_t tag, const void *val, size_t len,
		    uint8_t out[CRY_TOKEN_BYTES])
{
	if (st != NULL)
		return cry_token_next(out, st, tag, val, len);
	return cry_token(out, k->tok, sc->name, sc->cols[c].name, tag, val, len);
}

/* The token input of value v: its tag, and its bytes (in b when made
 * here). */
static const void *value_input(const struct sql_value *v, uint8_t b[8], uint8_t *tag, size_t *len)
{
	switch (v->type) {
	case SQL_INT:
		cry_put_be64(b, (uint64_t)v->i);
		*tag = CRY_TAG_INT;
		*len = 8;
		return b;
	case SQL_FLOAT: {
		double d = v->f == 0.0 ? 0.0 : v->f;    /* -0.0 equals 0.0 */
		uint64_t u;
		memcpy(&u, &d, 8);
		cry_put_be64(b, u);
		*tag = CRY_TAG_FLOAT;
		*len = 8;
		return b;
	}
	case SQL_TEXT:
		*tag = CRY_TAG_TEXT;
		*len = v->len;
		return v->s;
	default:
		*tag = CRY_TAG_NULL;
		*len = 0;
		return NULL;
	}
}

int value_token_st(const struct keys *k, const struct sql_schema *sc, size_t c,
		   const cry_tokstate *st, const struct sql_value *v, uint8_t out[CRY_TOKEN_BYTES])
{
	uint8_t b[8], tag;
	size_t len;
	const void *in = value_input(v, b, &tag, &len);

	return token_of(k, sc, c, st, tag, in, len, out);
}

int value_token_memo(const cry_tokstate *st, const struct sql_value *v, struct tokmemo *m,
		     size_t pos, uint8_t out[CRY_TOKEN_BYTES])
{
	uint8_t b[8], tag;
	size_t len;
	const void *in = value_input(v, b, &tag, &len);

	return tokmemo_token(m, pos, out, st, tag, in, len);
}

/* Token of a value of column c (value already of the column's type, or NULL);
 * LWC_OK or the derivation's error. */
int value_token(const struct keys *k, const struct sql_schema *sc, size_t c,
		const struct sql_value *v, uint8_t out[CRY_TOKEN_BYTES])
{
	return value_token_st(k, sc, c, NULL, v, out);
}

/* ---- records ---------------------------------------------------------------- */

static size_t encoded_size(const struct sql_schema *sc, const struct sql_value *v)
{
	size_t n = 1;

	for (size_t c = 0; c < sc->ncols; c++)
		n += 1 + (v[c].type == SQL_NULL ? 0 : v[c].type == SQL_TEXT ? 2 + v[c].len : 8);
	return n;
}

int record_seal(lwc_conn *c, const struct sql_schema *sc, const struct sql_value *v,
		const uint8_t *nonce, uint8_t *out, char *err, size_t errlen)
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
	rc = nonce ? cry_record_seal_nonce(out, c->k->rec, rec, c->R, sc->name, nonce)
		   : cry_record_seal(out, c->k->rec, rec, c->R, sc->name);
	sodium_memzero(rec, c->R);
	free(rec);
	return rc;
}

/* Open and decode a record into row (values and their text). */
int record_open(lwc_conn *c, const struct sql_schema *sc, const uint8_t *ct, size_t len,
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

int schema_seal(lwc_conn *c, const struct sql_schema *sc, uint8_t **out, size_t *len)
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

int schema_open(lwc_conn *c, const uint8_t *blob, size_t len, struct ltable *t)
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
