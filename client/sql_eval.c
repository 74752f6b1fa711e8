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

int sql_eval_value(const struct sql_expr *e, const struct sql_value *values,
		   struct sql_value *out, char *err, size_t errlen)
{
	struct sql_value a, b;
	int rc;

	memset(out, 0, sizeof(*out));
	switch (e->kind) {
	case SQL_E_LIT:
		*out = e->lit;
		return LWC_OK;
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
	default:
		lwc_errf(err, errlen, "a condition is not a value");
		return LWC_ERR_ARG;
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
	default:
		if (!c->failed)
			lwc_errf(c->err, c->errlen, "a value is not a condition");
		c->failed = 1;
		return SQL_UNKNOWN;
	}
}

enum sql_tv sql_eval(const struct sql_expr *e, const struct sql_value *values)
{
	struct evalctx c = { values, NULL, 0, 0 };

	if (e == NULL)
		return SQL_TRUE;
	return eval_tv(e, &c);
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
	t = eval_tv(e, &c);
	*out = c.failed ? SQL_UNKNOWN : t;
	return c.failed ? LWC_ERR_ARG : LWC_OK;
}

/* ---- assignment conversions -------------------------------------------------- */
