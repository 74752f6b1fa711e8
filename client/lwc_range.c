/*
 * lwc_range.c - range indexes on the catalog's tables: the range tokens a
 * row carries, and the tokens of the cover of a range or of a LIKE prefix
 * (the keys, covers and token layout are range.h's).
 *
 * A column has a range index when the proxy's catalog says its rows carry
 * range tokens (TableInfo.range_tokens); ranges use it once the catalog
 * also says every row has them (range_ready).  Literals are turned into
 * inclusive bounds that contain every value PostgreSQL's comparison could
 * accept (a few units of the last place wider where a FLOAT meets a
 * BIGINT), so the cover is a superset and the residual filter in the client
 * makes the answer exact.
 */
#include "lwc_int.h"
#include "range.h"
#include "tokmemo.h"

#include <math.h>
#include <string.h>

#include <sodium.h>

static enum range_kind kind_of(const struct sql_coldef *cd)
{
	switch (cd->type) {
	case SQL_CT_INT:    return RANGE_INT32;
	case SQL_CT_BIGINT: return RANGE_INT64;
	case SQL_CT_FLOAT:  return RANGE_FLOAT;
	default:            return RANGE_TEXT;
	}
}

void ltable_ranges(struct ltable *t, const uint8_t *rtok, size_t n, uint64_t ready)
{
	t->ntok = t->sc.ncols;
	memset(t->rtok, 0, sizeof(t->rtok));
	t->range_ready = 0;
	if (rtok == NULL || n != t->sc.ncols || n > 64)
		return;
	memcpy(t->rtok, rtok, n);
	t->range_ready = ready;
	for (size_t c = 0; c < n; c++)
		t->ntok += rtok[c];
}

/* Bits per level of new range indexes: RANGE_NUM_BITS, or LWC_RANGE_BITS
 * (exactly "0", "1", "2", "4" or "8"; 0: no range index) for the
 * measurements of docs/benchmarks.md.  Any other value is ignored. */
static unsigned num_bits(void)
{
	const char *e = getenv("LWC_RANGE_BITS");

	if (e && e[0] && e[1] == '\0' && strchr("01248", e[0]) != NULL)
		return (unsigned)(e[0] - '0');
	return RANGE_NUM_BITS;
}

unsigned range_tokens_for(const struct sql_coldef *cd)
{
	unsigned bits = num_bits();

	return bits ? range_levels(kind_of(cd), bits) : 0;
}

/* A NULL has no key: its range tokens are one per level that no cover
 * names (level byte 0 is never a node's). */
static int null_range_token(const cry_tokstate *st, unsigned level, struct tokmemo *m,
			    size_t pos, uint8_t out[CRY_TOKEN_BYTES])
{
	uint8_t in[2] = { 0, (uint8_t)level };
	return tokmemo_token(m, pos, out, st, CRY_TAG_RANGE, in, sizeof(in));
}

static const cry_tokstate *col_state(const cry_tokstate *ts, size_t c)
{
	return (const cry_tokstate *)(const void *)((const uint8_t *)ts + c * cry_tokstate_size());
}

cry_tokstate *row_token_states(const struct keys *k, const struct ltable *t)
{
	size_t sz = cry_tokstate_size();
	uint8_t *ts;

	/* sodium_malloc ends the region at a page boundary: a size that is a
	 * multiple of the state's (64-byte aligned) size keeps every state
	 * aligned */
	if (t->sc.ncols == 0 || (ts = sodium_malloc(t->sc.ncols * sz)) == NULL)
		return NULL;
	for (size_t c = 0; c < t->sc.ncols; c++)
		if (cry_token_begin((cry_tokstate *)(void *)(ts + c * sz), k->tok, t->sc.name,
				    t->sc.cols[c].name) != LWC_OK) {
			row_token_states_free((cry_tokstate *)(void *)ts, t);
			return NULL;
		}
	return (cry_tokstate *)(void *)ts;
}

void row_token_states_free(cry_tokstate *ts, const struct ltable *t)
{
	if (ts == NULL)
		return;
	sodium_memzero(ts, t->sc.ncols * cry_tokstate_size());
	sodium_free(ts);
}

int row_tokens(const struct ltable *t, const cry_tokstate *ts, const struct sql_value *v,
	       uint8_t *out)
{
	return row_tokens_skip(t, ts, v, 0, out);
}

int row_tokens_skip(const struct ltable *t, const cry_tokstate *ts, const struct sql_value *v,
		    uint64_t skip, uint8_t *out)
{
	return row_tokens_memo(t, ts, v, skip, out, NULL);
}

int row_tokens_memo(const struct ltable *t, const cry_tokstate *ts, const struct sql_value *v,
		    uint64_t skip, uint8_t *out, struct tokmemo *memo)
{
	size_t j = t->sc.ncols;
	int rc;

	for (size_t c = 0; c < t->sc.ncols; c++)
		if ((c >= 64 || !(skip >> c & 1)) &&
		    (rc = value_token_memo(col_state(ts, c), &v[c], memo, c,
					   out + c * CRY_TOKEN_BYTES)) != LWC_OK)
			return rc;
	for (size_t c = 0; c < t->sc.ncols && c < 64; c++) {
		enum range_kind kind = kind_of(&t->sc.cols[c]);
		unsigned n = t->rtok[c], bits = range_bits_of(kind, n);
		const cry_tokstate *st = col_state(ts, c);
		struct range_node nodes[RANGE_MAX_LEVELS];

		if (n == 0)
			continue;
		if (skip >> c & 1) {
			j += n;
			continue;
		}
		if (bits == 0 || n > RANGE_MAX_LEVELS)
			return LWC_ERR_SCHEMA;   /* a layout this client does not know */
		if (v[c].type == SQL_NULL) {
			for (unsigned l = 1; l <= n; l++, j++)
				if ((rc = null_range_token(st, l, memo, j,
							    out + j * CRY_TOKEN_BYTES)) != LWC_OK)
					return rc;
			continue;
		}
		if (kind == RANGE_TEXT) {
			struct range_node all[RANGE_TEXT_DEPTH];
			range_value_nodes_text((const uint8_t *)v[c].s, v[c].len, all);
			memcpy(nodes, all, n * sizeof(all[0]));
		} else if (kind == RANGE_FLOAT) {
			range_value_nodes_num(kind, bits, range_key_float(v[c].f), nodes);
		} else {
			range_value_nodes_num(kind, bits, range_key_int(kind, v[c].i), nodes);
		}
		for (unsigned l = 0; l < n; l++, j++) {
			uint8_t *o = out + j * CRY_TOKEN_BYTES;

			rc = range_token_memo(o, st, kind, &nodes[l], memo, j);
			if (rc != LWC_OK)
				return rc;
		}
	}
	return LWC_OK;
}

/* ---- bounds ------------------------------------------------------------- */

#define TWO63 9223372036854775808.0

/* An integer column's inclusive bounds from a literal; *empty when no
 * value can satisfy it. */
static void int_bound(const struct sql_value *v, int incl, int upper, int64_t dmin,
		      int64_t dmax, int64_t *out, int *empty)
{
	if (v->type == SQL_INT) {
		int64_t i = v->i;
		if (!upper) {
			if (!incl && i == INT64_MAX) {
				*empty = 1;
				return;
			}
			i = incl ? i : i + 1;
			if (i > dmax)
				*empty = 1;
			*out = i < dmin ? dmin : i;
		} else {
			if (!incl && i == INT64_MIN) {
				*empty = 1;
				return;
			}
			i = incl ? i : i - 1;
			if (i < dmin)
				*empty = 1;
			*out = i > dmax ? dmax : i;
		}
		return;
	}
	/* a FLOAT: NaN is above every number, the infinities beyond them */
	double x = v->f, d;
	if (isnan(x)) {
		if (!upper)
			*empty = 1;
		else
			*out = dmax;
		return;
	}
	if (isinf(x)) {
		if ((x > 0) != upper)
			*empty = 1;
		else
			*out = upper ? dmax : dmin;
		return;
	}
	if (fabs(x) < 0x1p52) {
		if (!upper)
			d = incl ? ceil(x) : floor(x) + 1;
		else
			d = incl ? floor(x) : ceil(x) - 1;
	} else {
		/* where a BIGINT meets a double, PostgreSQL rounds the BIGINT:
		 * widen well beyond that rounding */
		double m = fabs(x) * 0x1p-48;
		d = upper ? ceil(x + m) : floor(x - m);
	}
	if (!upper) {
		if (d >= TWO63 || d > (double)dmax) {
			*empty = 1;
			return;
		}
		*out = d < (double)dmin ? dmin : (int64_t)d;
	} else {
		if (d < -TWO63 || d < (double)dmin) {
			*empty = 1;
			return;
		}
		*out = d >= TWO63 || d > (double)dmax ? dmax : (int64_t)d;
	}
}

/* A FLOAT column's inclusive key bound, two units of the last place wider. */
static void float_bound(const struct sql_value *v, int upper, uint64_t *out, int *empty)
{
	double x = v->type == SQL_INT ? (double)v->i : v->f;

	if (isnan(x)) {
		*out = UINT64_MAX;              /* >= NaN: NaN only; <= NaN: all */
		return;
	}
	(void)empty;
	if (upper)
		x = nextafter(nextafter(x, INFINITY), INFINITY);
	else
		x = nextafter(nextafter(x, -INFINITY), -INFINITY);
	*out = range_key_float(x);
}

static int num_lit(const struct sql_value *v)
{
	return v->type == SQL_INT || v->type == SQL_FLOAT;
}

int range_cover_tokens(const struct keys *k, const struct ltable *t, size_t col,
		       const struct sql_value *lo, int lo_incl, const struct sql_value *hi,
		       int hi_incl, int *usable, int *root, uint8_t **toks, size_t *n)
{
	const struct sql_coldef *cd = &t->sc.cols[col];
	enum range_kind kind = kind_of(cd);
	unsigned bits, depth;
	struct range_node *nodes = NULL;
	size_t max, nn = 0;
	int rc = LWC_OK, empty = 0;

	*usable = 0;
	*root = 0;
	*toks = NULL;
	*n = 0;
	if (col >= 64 || t->rtok[col] == 0 || !(t->range_ready >> col & 1))
		return LWC_OK;
	if ((bits = range_bits_of(kind, t->rtok[col])) == 0)
		return LWC_OK;
	if ((lo && lo->type == SQL_NULL) || (hi && hi->type == SQL_NULL))
		return LWC_OK;
	if (kind == RANGE_TEXT) {
		if ((lo && lo->type != SQL_TEXT) || (hi && hi->type != SQL_TEXT))
			return LWC_OK;
		max = RANGE_BUDGET;
	} else {
		if ((lo && !num_lit(lo)) || (hi && !num_lit(hi)))
			return LWC_OK;
		depth = range_depth(kind, bits);
		max = 2 * (((size_t)1 << bits) - 1) * depth + 1;
	}
	if ((nodes = malloc(max * sizeof(*nodes))) == NULL)
		return LWC_ERR_NOMEM;
	if (kind == RANGE_TEXT) {
		struct range_tbound lb = { 0 }, hb = { 0 };
		int exact;
		if (lo)
			lb = (struct range_tbound){ 1, lo_incl, (const uint8_t *)lo->s, lo->len };
		if (hi)
			hb = (struct range_tbound){ 1, hi_incl, (const uint8_t *)hi->s, hi->len };
		rc = range_cover_text(&lb, &hb, t->rtok[col], RANGE_BUDGET, nodes, max, &nn,
				      &exact);
	} else if (kind == RANGE_FLOAT) {
		uint64_t L = 0, H = UINT64_MAX;
		if (lo)
			float_bound(lo, 0, &L, &empty);
		if (hi)
			float_bound(hi, 1, &H, &empty);
		if (!empty && L <= H)
			rc = range_cover_num(64, bits, L, H, nodes, max, &nn);
	} else {
		int64_t dmin = kind == RANGE_INT32 ? INT32_MIN : INT64_MIN;
		int64_t dmax = kind == RANGE_INT32 ? INT32_MAX : INT64_MAX;
		int64_t L = dmin, H = dmax;
		if (lo)
			int_bound(lo, lo_incl, 0, dmin, dmax, &L, &empty);
		if (hi)
			int_bound(hi, hi_incl, 1, dmin, dmax, &H, &empty);
		if (!empty && L <= H)
			rc = range_cover_num(range_width(kind), bits, range_key_int(kind, L),
					     range_key_int(kind, H), nodes, max, &nn);
	}
	if (rc != LWC_OK)
		goto out;
	*usable = 1;
	if (nn == 1 && nodes[0].level == 0) {
		*root = 1;
		goto out;
	}
	if (nn > 0 && (*toks = malloc(nn * CRY_TOKEN_BYTES)) == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	depth = range_depth(kind, bits);
	for (size_t i = 0; i < nn && rc == LWC_OK; i++) {
		uint8_t *o = *toks + i * CRY_TOKEN_BYTES;
		if (kind != RANGE_TEXT && kind != RANGE_FLOAT && nodes[i].level == depth) {
			/* a whole integer: its equality token */
			struct sql_value v = { .type = SQL_INT };
			v.i = range_int_of_key(kind, nodes[i].num);
			rc = value_token(k, &t->sc, col, &v, o);
		} else {
			rc = range_token(o, k->tok, t->sc.name, cd->name, kind, &nodes[i]);
		}
	}
	if (rc != LWC_OK) {
		free(*toks);
		*toks = NULL;
		*usable = 0;
		goto out;
	}
	*n = nn;
out:
	free(nodes);
	return rc;
}

int range_prefix_token(const struct keys *k, const struct ltable *t, size_t col,
		       const char *pattern, size_t plen, int *usable,
		       uint8_t tok[CRY_TOKEN_BYTES])
{
	struct range_node x = { 0 };
	size_t depth;

	*usable = 0;
	if (col >= 64 || t->rtok[col] == 0 || !(t->range_ready >> col & 1) ||
	    kind_of(&t->sc.cols[col]) != RANGE_TEXT)
		return LWC_OK;
	depth = t->rtok[col] > RANGE_TEXT_DEPTH ? RANGE_TEXT_DEPTH : t->rtok[col];
	/* the fixed bytes before the first wildcard; \ takes the next byte */
	for (size_t i = 0; i < plen && x.len < depth; i++) {
		uint8_t b = (uint8_t)pattern[i];
		if (b == '%' || b == '_')
			break;
		if (b == '\\') {
			if (++i == plen)
				break;
			b = (uint8_t)pattern[i];
		}
		x.bytes[x.len++] = b;
	}
	if (x.len == 0)
		return LWC_OK;
	x.level = x.len;
	*usable = 1;
	return range_token(tok, k->tok, t->sc.name, t->sc.cols[col].name, RANGE_TEXT, &x);
}
