/*
 * sql_eval.c - evaluation on a decrypted row: values (sql_eval_value) and
 * SQL's three-valued logic for conditions (sql_eval, sql_eval_checked).
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

/* Where functions put the text they make (lower, ||, CAST ...): set by
 * the general SELECT for its run; without it those functions fail. */
static _Thread_local struct arena *scratch;
/* A condition's own text (sql_eval, sql_eval_checked without a scratch
 * arena) never leaves it: an arena for the outermost evaluation. */
static _Thread_local struct arena *cond_temp;
static _Thread_local int cond_depth;

void sql_eval_set_scratch(struct arena *a)
{
	scratch = a;
}

struct arena *sql_eval_get_scratch(void)
{
	return scratch;
}

char *sql_eval_scratch(size_t n, char *err, size_t errlen)
{
	struct arena *a = scratch;
	char *p;

	if (a == NULL && cond_depth > 0) {
		if (cond_temp == NULL && (cond_temp = sql_arena_new()) == NULL) {
			lwc_errf(err, errlen, "out of memory");
			return NULL;
		}
		a = cond_temp;
	}
	if (a == NULL) {
		lwc_errf(err, errlen, "LWC does not support this function here");
		return NULL;
	}
	if ((p = sql_arena_alloc(a, n + 1)) == NULL)
		lwc_errf(err, errlen, "out of memory");
	return p;
}

/* A value as text (for ||): numbers as PostgreSQL prints them. */
static int as_text(const struct sql_value *v, struct sql_value *out, char *err, size_t errlen)
{
	static const struct sql_coldef text_col = { .name = "?column?", .type = SQL_CT_TEXT };
	char *buf;

	if (v->type == SQL_TEXT || v->type == SQL_NULL) {
		*out = *v;
		return LWC_OK;
	}
	if ((buf = sql_eval_scratch(SQL_NUM_TEXT_MAX, err, errlen)) == NULL)
		return LWC_ERR_ARG;
	return sql_coerce(&text_col, v, out, buf, SQL_NUM_TEXT_MAX, err, errlen);
}

static int func_arg_error(const char *f, const struct sql_value *v, char *err, size_t errlen)
{
	lwc_errf(err, errlen, "function %s(%s) does not exist", f, sql_vtype_name(v->type));
	return LWC_ERR_ARG;
}

static double round_away(double d)
{
	return d < 0 ? -floor(-d + 0.5) : floor(d + 0.5);
}

static int eval_func(const struct sql_expr *e, const struct sql_value *values,
		     struct sql_value *out, char *err, size_t errlen)
{
	struct sql_value a[3];
	const char *f = e->fname;
	size_t i, n = e->nlist;
	int rc;

	memset(out, 0, sizeof(*out));
	if (strcmp(f, "coalesce") == 0) {
		for (i = 0; i < n; i++) {
			if ((rc = sql_eval_value(e->list[i], values, out, err, errlen)) != LWC_OK)
				return rc;
			if (out->type != SQL_NULL)
				return LWC_OK;
		}
		return LWC_OK;
	}
	if (strcmp(f, "concat") == 0) {
		/* every argument's text, NULLs skipped; never NULL */
		struct sql_value *t = n > 0 ? malloc(n * sizeof(*t)) : NULL;
		size_t len = 0, o = 0;
		char *p;

		if (n > 0 && t == NULL)
			return lwc_errf(err, errlen, "out of memory"), LWC_ERR_NOMEM;
		for (i = 0, rc = LWC_OK; i < n && rc == LWC_OK; i++) {
			struct sql_value v;

			if ((rc = sql_eval_value(e->list[i], values, &v, err, errlen)) == LWC_OK)
				rc = as_text(&v, &t[i], err, errlen);
			if (rc == LWC_OK && t[i].type != SQL_NULL)
				len += t[i].len;
		}
		if (rc == LWC_OK && (p = sql_eval_scratch(len, err, errlen)) == NULL)
			rc = LWC_ERR_ARG;
		for (i = 0; rc == LWC_OK && i < n; i++)
			if (t[i].type != SQL_NULL && t[i].len > 0) {
				memcpy(p + o, t[i].s, t[i].len);
				o += t[i].len;
			}
		free(t);
		if (rc != LWC_OK)
			return rc;
		p[o] = '\0';
		out->type = SQL_TEXT;
		out->s = p;
		out->len = o;
		return LWC_OK;
	}
	if (strcmp(f, "greatest") == 0 || strcmp(f, "least") == 0) {
		int g = f[0] == 'g';

		for (i = 0; i < n; i++) {
			struct sql_value v;
			int c;

			if ((rc = sql_eval_value(e->list[i], values, &v, err, errlen)) != LWC_OK)
				return rc;
			if (v.type == SQL_NULL)
				continue;
			if (out->type == SQL_NULL) {
				*out = v;
				continue;
			}
			if ((c = sql_value_cmp(&v, out)) == SQL_CMP_ERR) {
				lwc_errf(err, errlen, "%s types %s and %s cannot be matched",
					 g ? "GREATEST" : "LEAST", sql_vtype_name(out->type),
					 sql_vtype_name(v.type));
				return LWC_ERR_ARG;
			}
			if (g ? c > 0 : c < 0)
				*out = v;
		}
		return LWC_OK;
	}
	if (strcmp(f, "nullif") == 0 && n == 2) {
		/* NULLIF(NULL, b) is NULL whatever b: b is not evaluated (as
		 * PostgreSQL's manual allows of a part the result does not need) */
		if ((rc = sql_eval_value(e->list[0], values, &a[0], err, errlen)) != LWC_OK)
			return rc;
		if (a[0].type == SQL_NULL) {
			*out = a[0];
			return LWC_OK;
		}
	}
	if (n > 3) {
		lwc_errf(err, errlen, "function %s has too many arguments", f);
		return LWC_ERR_ARG;
	}
	for (i = strcmp(f, "nullif") == 0 && n == 2; i < n; i++)
		if ((rc = sql_eval_value(e->list[i], values, &a[i], err, errlen)) != LWC_OK)
			return rc;
	if (strcmp(f, "nullif") == 0) {
		int c;

		*out = a[0];
		if (a[0].type == SQL_NULL || a[1].type == SQL_NULL)
			return LWC_OK;
		if ((c = sql_value_cmp(&a[0], &a[1])) == SQL_CMP_ERR) {
			lwc_errf(err, errlen, "operator does not exist: %s = %s",
				 sql_vtype_name(a[0].type), sql_vtype_name(a[1].type));
			return LWC_ERR_ARG;
		}
		if (c == 0)
			out->type = SQL_NULL;
		return LWC_OK;
	}
	for (i = 0; i < n; i++)
		if (a[i].type == SQL_NULL)
			return LWC_OK;          /* strict functions: NULL in, NULL out */
	if ((rc = sql_func_eval(f, a, n, out, err, errlen)) != 1)
		return rc;
	if (strcmp(f, "||") == 0) {
		struct sql_value x, y;
		char *p;

		if ((rc = as_text(&a[0], &x, err, errlen)) != LWC_OK ||
		    (rc = as_text(&a[1], &y, err, errlen)) != LWC_OK)
			return rc;
		if ((p = sql_eval_scratch(x.len + y.len, err, errlen)) == NULL)
			return LWC_ERR_ARG;
		if (x.len > 0)
			memcpy(p, x.s, x.len);
		if (y.len > 0)
			memcpy(p + x.len, y.s, y.len);
		p[x.len + y.len] = '\0';
		out->type = SQL_TEXT;
		out->s = p;
		out->len = x.len + y.len;
		return LWC_OK;
	}
	if (strcmp(f, "abs") == 0) {
		if (a[0].type == SQL_INT) {
			if (a[0].i == INT64_MIN || (a[0].i4 && a[0].i == INT32_MIN)) {
				lwc_errf(err, errlen, a[0].i4 ? "integer out of range" : "bigint out of range");
				return LWC_ERR_ARG;
			}
			out->type = SQL_INT;
			out->i = a[0].i < 0 ? -a[0].i : a[0].i;
			out->i4 = a[0].i4;
			return LWC_OK;
		}
		if (a[0].type == SQL_FLOAT) {
			out->type = SQL_FLOAT;
			out->f = fabs(a[0].f);
			return LWC_OK;
		}
		return func_arg_error(f, &a[0], err, errlen);
	}
	if (strcmp(f, "round") == 0) {
		double scale = 1;

		if (n == 2) {
			if (a[1].type != SQL_INT)
				return func_arg_error(f, &a[1], err, errlen);
			scale = pow(10, (double)(a[1].i > 300 ? 300 : a[1].i < -300 ? -300 : a[1].i));
		}
		if (a[0].type == SQL_INT && n == 1) {
			*out = a[0];
			return LWC_OK;
		}
		if (a[0].type != SQL_INT && a[0].type != SQL_FLOAT)
			return func_arg_error(f, &a[0], err, errlen);
		out->type = SQL_FLOAT;
		out->f = round_away((a[0].type == SQL_INT ? (double)a[0].i : a[0].f) * scale) / scale;
		return LWC_OK;
	}
	if (a[0].type != SQL_TEXT)
		return func_arg_error(f, &a[0], err, errlen);
	if (strcmp(f, "length") == 0 || strcmp(f, "char_length") == 0) {
		out->type = SQL_INT;
		out->i = (int64_t)sql_utf8_chars(a[0].s, a[0].len);
		out->i4 = 1;
		return LWC_OK;
	}
	if (strcmp(f, "lower") == 0 || strcmp(f, "upper") == 0) {
		char *p = sql_eval_scratch(a[0].len, err, errlen);

		if (p == NULL)
			return LWC_ERR_ARG;
		for (i = 0; i < a[0].len; i++) {
			unsigned char c = (unsigned char)a[0].s[i];

			if (f[0] == 'l')
				p[i] = (char)sql_ascii_lower(c);
			else
				p[i] = (char)(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
		}
		p[a[0].len] = '\0';
		out->type = SQL_TEXT;
		out->s = p;
		out->len = a[0].len;
		return LWC_OK;
	}
	if (strcmp(f, "substr") == 0 || strcmp(f, "substring") == 0) {
		/* characters from position a[1] (1-based), a[2] of them */
		int64_t from, cnt, start, end, k = 0;
		size_t b = 0, bs = a[0].len, be = a[0].len;
		char *p;

		if (a[1].type != SQL_INT || (n == 3 && a[2].type != SQL_INT))
			return func_arg_error(f, &a[1], err, errlen);
		from = a[1].i;
		if (n == 3 && (cnt = a[2].i) < 0) {
			lwc_errf(err, errlen, "negative substring length not allowed");
			return LWC_ERR_ARG;
		}
		start = from < 1 ? 1 : from;
		end = n == 3 ? (from > INT64_MAX - cnt ? INT64_MAX : from + cnt) : INT64_MAX;
		for (b = 0, k = 1; b <= a[0].len; k++) {
			if (k == start && bs == a[0].len)
				bs = b;
			if (k == end) {
				be = b;
				break;
			}
			if (b == a[0].len)
				break;
			b += sql_utf8_seq((const unsigned char *)a[0].s + b, a[0].len - b);
		}
		if (end <= start || bs > be)
			bs = be = 0;
		if ((p = sql_eval_scratch(be - bs, err, errlen)) == NULL)
			return LWC_ERR_ARG;
		memcpy(p, a[0].s + bs, be - bs);
		p[be - bs] = '\0';
		out->type = SQL_TEXT;
		out->s = p;
		out->len = be - bs;
		return LWC_OK;
	}
	lwc_errf(err, errlen, "function %s does not exist", f);
	return LWC_ERR_ARG;
}

/* A correlated subquery on one outer row: its fetched rows, each followed
 * by the outer row's values, through the general SELECT. */
static int run_correlated(const struct sql_expr *e, const struct sql_value *outer,
			  struct sql_outrow **out, size_t *nout, char *err, size_t errlen)
{
	const struct sql_query *q = e->sub != NULL ? e->sub->q : NULL;
	struct sql_value **in = NULL, *cells = NULL;
	size_t i, k, n, w;
	int rc;

	if (q == NULL || !q->correlated || outer == NULL) {
		lwc_errf(err, errlen, "LWC does not support this subquery here");
		return LWC_ERR_ARG;
	}
	n = q->ncorr_rows;
	w = q->corr_base + q->corr_outer;
	if (n > 0 && ((in = malloc(n * sizeof(*in))) == NULL ||
		      (cells = malloc(n * w * sizeof(*cells))) == NULL)) {
		free(in);
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	for (i = 0, k = 0; i < n; i++) {
		enum sql_tv t;

		in[k] = cells + k * w;
		memcpy(in[k], q->corr_rows[i], q->corr_base * sizeof(*cells));
		memcpy(in[k] + q->corr_base, outer, q->corr_outer * sizeof(*cells));
		/* its WHERE, which reads the outer row too */
		if ((rc = sql_eval_checked(e->sub->where, in[k], &t, err, errlen)) != LWC_OK) {
			free(in);
			free(cells);
			return rc;
		}
		if (t == SQL_TRUE)
			k++;
	}
	rc = sql_query_run(e->sub, in, k, out, nout, err, errlen);
	free(in);
	free(cells);
	return rc;
}

/* A scalar subquery's value (text copied where this evaluation keeps its
 * own). */
static int eval_scalar_sub(const struct sql_expr *e, const struct sql_value *values,
			   struct sql_value *out, char *err, size_t errlen)
{
	struct sql_outrow *rows;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = run_correlated(e, values, &rows, &n, err, errlen)) != LWC_OK)
		return rc;
	if (n > 1) {
		sql_outrows_free(rows, n);
		lwc_errf(err, errlen, "more than one row returned by a subquery used as an expression");
		return LWC_ERR_ARG;
	}
	if (n == 1) {
		*out = rows[0].v[0];
		if (out->type == SQL_TEXT) {
			char *p = sql_eval_scratch(out->len, err, errlen);

			if (p == NULL) {
				sql_outrows_free(rows, n);
				return LWC_ERR_ARG;
			}
			memcpy(p, out->s, out->len);
			p[out->len] = '\0';
			out->s = p;
		}
	}
	sql_outrows_free(rows, n);
	return LWC_OK;
}

static int eval_case(const struct sql_expr *e, const struct sql_value *values,
		     struct sql_value *out, char *err, size_t errlen)
{
	struct sql_value op, w;
	enum sql_tv t;
	size_t i;
	int rc;

	if (e->a != NULL && (rc = sql_eval_value(e->a, values, &op, err, errlen)) != LWC_OK)
		return rc;
	for (i = 0; i + 1 < e->nlist; i += 2) {
		if (e->a != NULL) {
			int c;

			if ((rc = sql_eval_value(e->list[i], values, &w, err, errlen)) != LWC_OK)
				return rc;
			if (op.type == SQL_NULL || w.type == SQL_NULL)
				continue;
			if ((c = sql_value_cmp(&op, &w)) == SQL_CMP_ERR) {
				lwc_errf(err, errlen, "operator does not exist: %s = %s",
					 sql_vtype_name(op.type), sql_vtype_name(w.type));
				return LWC_ERR_ARG;
			}
			if (c != 0)
				continue;
		} else {
			if ((rc = sql_eval_checked(e->list[i], values, &t, err, errlen)) != LWC_OK)
				return rc;
			if (t != SQL_TRUE)
				continue;
		}
		return sql_eval_value(e->list[i + 1], values, out, err, errlen);
	}
	if (e->b != NULL)
		return sql_eval_value(e->b, values, out, err, errlen);
	memset(out, 0, sizeof(*out));
	return LWC_OK;
}

int sql_eval_value(const struct sql_expr *e, const struct sql_value *values,
		   struct sql_value *out, char *err, size_t errlen)
{
	struct sql_value a, b;
	int rc;

	memset(out, 0, sizeof(*out));
	switch (e->kind) {
	case SQL_E_LIT:
	case SQL_E_AGG:
	case SQL_E_WINDOW:
		*out = e->lit;
		return LWC_OK;
	case SQL_E_FUNC:
	case SQL_E_CASE:
		rc = e->kind == SQL_E_FUNC ? eval_func(e, values, out, err, errlen)
					   : eval_case(e, values, out, err, errlen);
		if (rc == LWC_OK && e->rtype == SQL_FLOAT && out->type == SQL_INT) {
			out->f = (double)out->i;
			out->type = SQL_FLOAT;
		}
		return rc;
	case SQL_E_SCALARSUB:
		return eval_scalar_sub(e, values, out, err, errlen);
	case SQL_E_CAST: {
		struct sql_coldef cd;
		char *buf;

		if ((rc = sql_eval_value(e->a, values, &a, err, errlen)) != LWC_OK)
			return rc;
		memset(&cd, 0, sizeof(cd));
		snprintf(cd.name, sizeof(cd.name), "?column?");
		cd.type = e->cast_type;
		if (a.type == SQL_NULL || (a.type == SQL_TEXT && cd.type == SQL_CT_TEXT)) {
			*out = a;
			return LWC_OK;
		}
		if (cd.type != SQL_CT_TEXT) {
			/* a number: the buffer is not used */
			char num[SQL_NUM_TEXT_MAX];

			return sql_coerce(&cd, &a, out, num, sizeof(num), err, errlen);
		}
		if ((buf = sql_eval_scratch(SQL_NUM_TEXT_MAX, err, errlen)) == NULL)
			return LWC_ERR_ARG;
		return sql_coerce(&cd, &a, out, buf, SQL_NUM_TEXT_MAX, err, errlen);
	}
	case SQL_E_COL:
		if (e->col_index < 0 || values == NULL) {
			lwc_errf(err, errlen, "column \"%s\" is not bound", e->col);
			return LWC_ERR_ARG;
		}
		*out = values[e->col_index];
		return LWC_OK;
	case SQL_E_NEG:
		if ((rc = sql_eval_value(e->a, values, &a, err, errlen)) != LWC_OK)
			return rc;
		return sql_value_neg(&a, out, err, errlen);
	case SQL_E_ARITH:
		if ((rc = sql_eval_value(e->a, values, &a, err, errlen)) != LWC_OK ||
		    (rc = sql_eval_value(e->b, values, &b, err, errlen)) != LWC_OK)
			return rc;
		return sql_value_arith(e->arith, &a, &b, out, err, errlen);
	default: {
		/* a condition as a value: boolean (NULL for UNKNOWN) */
		enum sql_tv t;

		if ((rc = sql_eval_checked(e, values, &t, err, errlen)) != LWC_OK)
			return rc;
		if (t != SQL_UNKNOWN) {
			out->type = SQL_INT;
			out->i = t == SQL_TRUE;
			out->boolean = 1;
		}
		return LWC_OK;
	}
	}
}

struct evalctx {
	const struct sql_value *values;
	char *err;
	size_t errlen;
	int failed;               /* an error happened (the first one is in err) */
};

static int ctx_value(const struct sql_expr *e, struct evalctx *c, struct sql_value *out)
{
	int rc = sql_eval_value(e, c->values, out, c->failed ? NULL : c->err, c->errlen);

	if (rc != LWC_OK)
		c->failed = 1;
	return rc;
}

static enum sql_tv tv_not(enum sql_tv t)
{
	return t == SQL_UNKNOWN ? SQL_UNKNOWN : t == SQL_TRUE ? SQL_FALSE : SQL_TRUE;
}

static enum sql_tv tv_and(enum sql_tv a, enum sql_tv b)
{
	if (a == SQL_FALSE || b == SQL_FALSE)
		return SQL_FALSE;
	return a == SQL_TRUE && b == SQL_TRUE ? SQL_TRUE : SQL_UNKNOWN;
}

/* x op y in three-valued logic. */
static enum sql_tv compare(const struct sql_value *x, const struct sql_value *y, enum sql_cmp op,
			   struct evalctx *c)
{
	int r;

	if (x->type == SQL_NULL || y->type == SQL_NULL)
		return SQL_UNKNOWN;
	r = sql_value_cmp(x, y);
	if (r == SQL_CMP_ERR) {
		if (!c->failed)
			lwc_errf(c->err, c->errlen, "operator does not exist: %s %s %s",
				 sql_vtype_name(x->type), sql_cmp_text[op], sql_vtype_name(y->type));
		c->failed = 1;
		return SQL_UNKNOWN;
	}
	switch (op) {
	case SQL_EQ: return r == 0 ? SQL_TRUE : SQL_FALSE;
	case SQL_NE: return r != 0 ? SQL_TRUE : SQL_FALSE;
	case SQL_LT: return r < 0 ? SQL_TRUE : SQL_FALSE;
	case SQL_LE: return r <= 0 ? SQL_TRUE : SQL_FALSE;
	case SQL_GT: return r > 0 ? SQL_TRUE : SQL_FALSE;
	case SQL_GE: return r >= 0 ? SQL_TRUE : SQL_FALSE;
	}
	return SQL_UNKNOWN;
}

/* LIKE: % any run of characters, _ one character, \ escapes the next. */
static int like_match(const unsigned char *s, size_t n, const unsigned char *p, size_t m, int icase)
{
	size_t i = 0, j = 0, star_p = (size_t)-1, star_s = 0;

	while (i < n) {
		if (j < m && p[j] == '%') {
			star_p = ++j;
			star_s = i;
			continue;
		}
		if (j < m && p[j] == '_') {
			size_t k = sql_utf8_seq(s + i, n - i);

			i += k ? k : 1;
			j++;
			continue;
		}
		if (j < m) {
			size_t pj = j;
			unsigned char pc, sc = s[i];

			if (p[pj] == '\\' && pj + 1 < m)
				pj++;
			pc = p[pj];
			if (icase) {
				pc = sql_ascii_lower(pc);
				sc = sql_ascii_lower(sc);
			}
			if (pc == sc) {
				i++;
				j = pj + 1;
				continue;
			}
		}
		if (star_p == (size_t)-1)
			return 0;
		/* backtrack: the last % takes one more character */
		{
			size_t k = sql_utf8_seq(s + star_s, n - star_s);

			star_s += k ? k : 1;
		}
		i = star_s;
		j = star_p;
	}
	while (j < m && p[j] == '%')
		j++;
	return j == m;
}

static enum sql_tv eval_tv(const struct sql_expr *e, struct evalctx *c)
{
	struct sql_value x, y, z;
	enum sql_tv t, u;
	size_t i;

	switch (e->kind) {
	case SQL_E_CMP:
		if (ctx_value(e->a, c, &x) != LWC_OK || ctx_value(e->b, c, &y) != LWC_OK)
			return SQL_UNKNOWN;
		return compare(&x, &y, e->op, c);
	case SQL_E_IN:
		if (ctx_value(e->a, c, &x) != LWC_OK)
			return SQL_UNKNOWN;
		/* TRUE on a match; else UNKNOWN if x or an item is NULL */
		t = SQL_FALSE;
		for (i = 0; i < e->nlist; i++) {
			if (ctx_value(e->list[i], c, &y) != LWC_OK)
				u = SQL_UNKNOWN;
			else
				u = compare(&x, &y, SQL_EQ, c);
			if (u == SQL_TRUE) {
				t = SQL_TRUE;
				break;
			}
			if (u == SQL_UNKNOWN)
				t = SQL_UNKNOWN;
		}
		return e->negated ? tv_not(t) : t;
	case SQL_E_BETWEEN:
		if (ctx_value(e->a, c, &x) != LWC_OK || ctx_value(e->b, c, &y) != LWC_OK ||
		    ctx_value(e->c, c, &z) != LWC_OK)
			return SQL_UNKNOWN;
		t = tv_and(compare(&x, &y, SQL_GE, c), compare(&x, &z, SQL_LE, c));
		return e->negated ? tv_not(t) : t;
	case SQL_E_ISNULL:
		if (ctx_value(e->a, c, &x) != LWC_OK)
			return SQL_UNKNOWN;
		t = x.type == SQL_NULL ? SQL_TRUE : SQL_FALSE;
		return e->negated ? tv_not(t) : t;
	case SQL_E_AND:
		t = eval_tv(e->a, c);
		if (t == SQL_FALSE)
			return SQL_FALSE;
		return tv_and(t, eval_tv(e->b, c));
	case SQL_E_OR:
		t = eval_tv(e->a, c);
		if (t == SQL_TRUE)
			return SQL_TRUE;
		u = eval_tv(e->b, c);
		if (u == SQL_TRUE)
			return SQL_TRUE;
		return t == SQL_FALSE && u == SQL_FALSE ? SQL_FALSE : SQL_UNKNOWN;
	case SQL_E_NOT:
		return tv_not(eval_tv(e->a, c));
	case SQL_E_EXISTS:
	case SQL_E_INSUB: {
		struct sql_outrow *rows;
		size_t n;
		int rc;

		if (e->kind == SQL_E_INSUB && ctx_value(e->a, c, &x) != LWC_OK)
			return SQL_UNKNOWN;
		rc = run_correlated(e, c->values, &rows, &n, c->failed ? NULL : c->err,
				    c->failed ? 0 : c->errlen);
		if (rc != LWC_OK) {
			c->failed = 1;
			return SQL_UNKNOWN;
		}
		if (e->kind == SQL_E_EXISTS) {
			sql_outrows_free(rows, n);
			return n > 0 ? SQL_TRUE : SQL_FALSE;
		}
		t = SQL_FALSE;
		for (i = 0; i < n; i++) {
			u = compare(&x, &rows[i].v[0], SQL_EQ, c);
			if (u == SQL_TRUE) {
				t = SQL_TRUE;
				break;
			}
			if (u == SQL_UNKNOWN)
				t = SQL_UNKNOWN;
		}
		sql_outrows_free(rows, n);
		return e->negated ? tv_not(t) : t;
	}
	case SQL_E_LIKE:
		if (ctx_value(e->a, c, &x) != LWC_OK || ctx_value(e->b, c, &y) != LWC_OK)
			return SQL_UNKNOWN;
		if (x.type == SQL_NULL || y.type == SQL_NULL)
			return SQL_UNKNOWN;
		if (x.type != SQL_TEXT || y.type != SQL_TEXT) {
			if (!c->failed)
				lwc_errf(c->err, c->errlen, "operator does not exist: %s %s %s",
					 sql_vtype_name(x.type), e->icase ? "~~*" : "~~",
					 sql_vtype_name(y.type));
			c->failed = 1;
			return SQL_UNKNOWN;
		}
		t = like_match((const unsigned char *)x.s, x.len, (const unsigned char *)y.s, y.len,
			       e->icase) ? SQL_TRUE : SQL_FALSE;
		return e->negated ? tv_not(t) : t;
	default:
		if (!c->failed)
			lwc_errf(c->err, c->errlen, "a value is not a condition");
		c->failed = 1;
		return SQL_UNKNOWN;
	}
}

static void cond_end(void)
{
	if (--cond_depth == 0 && cond_temp != NULL) {
		sql_arena_destroy(cond_temp);
		cond_temp = NULL;
	}
}

enum sql_tv sql_eval(const struct sql_expr *e, const struct sql_value *values)
{
	struct evalctx c = { values, NULL, 0, 0 };

	enum sql_tv t;

	if (e == NULL)
		return SQL_TRUE;
	cond_depth++;
	t = eval_tv(e, &c);
	cond_end();
	return t;
}

int sql_eval_checked(const struct sql_expr *e, const struct sql_value *values,
		     enum sql_tv *out, char *err, size_t errlen)
{
	struct evalctx c = { values, err, errlen, 0 };
	enum sql_tv t;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (e == NULL) {
		*out = SQL_TRUE;
		return LWC_OK;
	}
	cond_depth++;
	t = eval_tv(e, &c);
	cond_end();
	*out = c.failed ? SQL_UNKNOWN : t;
	return c.failed ? LWC_ERR_ARG : LWC_OK;
}

/* ---- assignment conversions -------------------------------------------------- */
