/*
 * sql_value.c - values: comparison, arithmetic with PostgreSQL's checks,
 * and PostgreSQL's assignment conversions (sql_coerce).
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

const char *sql_vtype_name(enum sql_vtype t)
{
	switch (t) {
	case SQL_INT: return "integer";
	case SQL_FLOAT: return "double precision";
	case SQL_TEXT: return "text";
	default: return "unknown";
	}
}

const char *const sql_cmp_text[] = {
	[SQL_EQ] = "=", [SQL_NE] = "<>", [SQL_LT] = "<",
	[SQL_LE] = "<=", [SQL_GT] = ">", [SQL_GE] = ">=",
};

const char *const sql_arith_text[] = {
	[SQL_ADD] = "+", [SQL_SUB] = "-", [SQL_MUL] = "*", [SQL_DIV] = "/", [SQL_MOD] = "%",
};

static int cmp_double(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return a < b ? -1 : a > b;
}

/* Exact comparison of an int64 and a double. */
static int cmp_int_double(int64_t i, double d)
{
	double t, frac;
	int64_t ti;

	if (isnan(d) || d >= 9223372036854775808.0)
		return -1;
	if (d < -9223372036854775808.0)
		return 1;
	/* -2^63 <= d < 2^63: its integer part fits and the fraction is exact */
	ti = (int64_t)d;
	t = (double)ti;
	if (i != ti)
		return i < ti ? -1 : 1;
	frac = d - t;
	return frac > 0 ? -1 : frac < 0;
}

int sql_value_cmp(const struct sql_value *a, const struct sql_value *b)
{
	size_t n;
	int c;

	if (a->type == SQL_NULL || b->type == SQL_NULL)
		return SQL_CMP_ERR;
	if (a->type == SQL_TEXT || b->type == SQL_TEXT) {
		if (a->type != b->type)
			return SQL_CMP_ERR;
		n = a->len < b->len ? a->len : b->len;
		c = n ? memcmp(a->s, b->s, n) : 0;
		if (c)
			return c < 0 ? -1 : 1;
		return a->len < b->len ? -1 : a->len > b->len;
	}
	if (a->type == SQL_INT && b->type == SQL_INT)
		return a->i < b->i ? -1 : a->i > b->i;
	if (a->type == SQL_INT)
		return cmp_int_double(a->i, b->f);
	if (b->type == SQL_INT)
		return -cmp_int_double(b->i, a->f);
	return cmp_double(a->f, b->f);
}

static double to_double(const struct sql_value *v)
{
	return v->type == SQL_INT ? (double)v->i : v->f;
}

/* -a; NULL stays NULL. */
int sql_value_neg(const struct sql_value *a, struct sql_value *out, char *err, size_t errlen)
{
	*out = *a;
	switch (a->type) {
	case SQL_NULL:
		return LWC_OK;
	case SQL_INT:
		if (a->i == INT64_MIN || (a->i4 && a->i == INT32_MIN)) {
			lwc_errf(err, errlen, a->i4 ? "integer out of range" : "bigint out of range");
			return LWC_ERR_ARG;
		}
		out->i = -a->i;
		return LWC_OK;
	case SQL_FLOAT:
		out->f = -a->f;
		return LWC_OK;
	default:
		lwc_errf(err, errlen, "operator does not exist: - %s", sql_vtype_name(a->type));
		return LWC_ERR_ARG;
	}
}

/* a op b; NULL in, NULL out. */
int sql_value_arith(enum sql_arith op, const struct sql_value *a, const struct sql_value *b,
		       struct sql_value *out, char *err, size_t errlen)
{
	double x, y, r;

	memset(out, 0, sizeof(*out));
	if (a->type == SQL_NULL || b->type == SQL_NULL)
		return LWC_OK;
	if (a->type == SQL_TEXT || b->type == SQL_TEXT ||
	    (op == SQL_MOD && (a->type == SQL_FLOAT || b->type == SQL_FLOAT))) {
		lwc_errf(err, errlen, "operator does not exist: %s %s %s", sql_vtype_name(a->type),
			 sql_arith_text[op], sql_vtype_name(b->type));
		return LWC_ERR_ARG;
	}
	if (a->type == SQL_INT && b->type == SQL_INT) {
		int64_t res = 0;
		int ovf = 0;

		switch (op) {
		case SQL_ADD: ovf = __builtin_add_overflow(a->i, b->i, &res); break;
		case SQL_SUB: ovf = __builtin_sub_overflow(a->i, b->i, &res); break;
		case SQL_MUL: ovf = __builtin_mul_overflow(a->i, b->i, &res); break;
		case SQL_DIV:
		case SQL_MOD:
			if (b->i == 0) {
				lwc_errf(err, errlen, "division by zero");
				return LWC_ERR_ARG;
			}
			if (b->i == -1) {
				/* INT64_MIN / -1 overflows; x % -1 is 0 */
				if (op == SQL_MOD)
					res = 0;
				else if (a->i == INT64_MIN)
					ovf = 1;
				else
					res = -a->i;
			} else {
				res = op == SQL_DIV ? a->i / b->i : a->i % b->i;
			}
			break;
		}
		if (a->i4 && b->i4 && !ovf && (res < INT32_MIN || res > INT32_MAX)) {
			/* int4 op int4 is an int4 in PostgreSQL */
			lwc_errf(err, errlen, "integer out of range");
			return LWC_ERR_ARG;
		}
		if (ovf) {
			lwc_errf(err, errlen, "bigint out of range");
			return LWC_ERR_ARG;
		}
		out->type = SQL_INT;
		out->i = res;
		out->i4 = a->i4 && b->i4;
		return LWC_OK;
	}
	x = to_double(a);
	y = to_double(b);
	switch (op) {
	case SQL_ADD: r = x + y; break;
	case SQL_SUB: r = x - y; break;
	case SQL_MUL: r = x * y; break;
	default:
		if (y == 0) {
			lwc_errf(err, errlen, "division by zero");
			return LWC_ERR_ARG;
		}
		r = x / y;
		break;
	}
	if (isinf(r) && !isinf(x) && !isinf(y)) {
		lwc_errf(err, errlen, "value out of range: overflow");
		return LWC_ERR_ARG;
	}
	out->type = SQL_FLOAT;
	out->f = r;
	return LWC_OK;
}

/* ---- tokens ---------------------------------------------------------------- */

enum tok_kind {
	TK_EOF,
	TK_IDENT,                 /* unquoted word: keyword or name          */
	TK_QIDENT,                /* "quoted identifier"                     */
	TK_INT,                   /* digits                                  */
	TK_FLOAT,                 /* digits with '.' or an exponent          */
	TK_STRING,                /* 'text'                                  */
	TK_OP                     /* punctuation and operators: op below     */
};

/* Two-character operators; one-character ones are their own char. */
enum { OP_LE = 256, OP_GE, OP_NE };

struct tok {
	enum tok_kind kind;
	int op;                   /* TK_OP                                    */
	size_t start, end;        /* source bytes [start, end)                */
};

struct parser {
	const char *sql;
	size_t len;
	struct arena *ar;
	struct tok cur;           /* the current token                        */
	int nest;                 /* recursion depth of the expression parser */
	char *err;
	size_t errlen;
	int errpos;
	int rc;                   /* first error: LWC_ERR_ARG / LWC_ERR_NOMEM */
};

/* Record the first error; always returns -1 for "return fail(...)". */


/* Text to int64 as PostgreSQL's int8in: blanks, a sign, digits, blanks.
 * 0, -1 (syntax) or -2 (out of 64-bit range). */
static int parse_int_text(const char *s, size_t len, int64_t *out)
{
	size_t i = 0, start;
	uint64_t acc = 0;
	int neg = 0, over = 0;

	while (i < len && sql_is_space((unsigned char)s[i]))
		i++;
	if (i < len && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	for (start = i; i < len && sql_is_digit((unsigned char)s[i]); i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (acc > (UINT64_MAX - d) / 10)
			over = 1;
		else
			acc = acc * 10 + d;
	}
	if (i == start)
		return -1;
	while (i < len && sql_is_space((unsigned char)s[i]))
		i++;
	if (i != len)
		return -1;
	if (over || acc > (neg ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1))
		return -2;
	if (!neg)
		*out = (int64_t)acc;
	else
		*out = acc == (uint64_t)1 << 63 ? INT64_MIN : -(int64_t)acc;
	return 0;
}

static int ascii_ieq(const char *s, size_t n, const char *word)
{
	size_t i;

	if (strlen(word) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (sql_ascii_lower((unsigned char)s[i]) != (unsigned char)word[i])
			return 0;
	return 1;
}

/* Text to double as PostgreSQL's float8in: blanks, a decimal number or
 * NaN / [+-]Infinity / [+-]inf, blanks.  0, -1 (syntax), -2 (out of range),
 * -3 (out of memory). */
static int parse_float_text(const char *s, size_t len, double *out)
{
	size_t a = 0, b = len, i, digits = 0;
	int erange;

	while (a < b && sql_is_space((unsigned char)s[a]))
		a++;
	while (b > a && sql_is_space((unsigned char)s[b - 1]))
		b--;
	i = a;
	if (ascii_ieq(s + a, b - a, "nan")) {
		*out = NAN;
		return 0;
	}
	if (i < b && (s[i] == '+' || s[i] == '-'))
		i++;
	if (ascii_ieq(s + i, b - i, "infinity") || ascii_ieq(s + i, b - i, "inf")) {
		*out = s[a] == '-' ? -INFINITY : INFINITY;
		return 0;
	}
	for (; i < b && sql_is_digit((unsigned char)s[i]); i++)
		digits++;
	if (i < b && s[i] == '.')
		for (i++; i < b && sql_is_digit((unsigned char)s[i]); i++)
			digits++;
	if (digits == 0)
		return -1;
	if (i < b && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < b && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i == b || !sql_is_digit((unsigned char)s[i]))
			return -1;
		while (i < b && sql_is_digit((unsigned char)s[i]))
			i++;
	}
	if (i != b)
		return -1;
	if (sql_c_strtod(s + a, b - a, out, &erange) != 0)
		return -3;
	if (isinf(*out) || (erange && *out == 0))
		return -2;
	return 0;
}

/* The shortest "%.Ng" that reads back as d (PostgreSQL's float8out, which
 * also writes NaN and Infinity), under the C locale. */
static void format_double(double d, char out[SQL_NUM_TEXT_MAX])
{
	locale_t c, old = (locale_t)0;
	int prec;

	if (isnan(d)) {
		strcpy(out, "NaN");
		return;
	}
	if (isinf(d)) {
		strcpy(out, d > 0 ? "Infinity" : "-Infinity");
		return;
	}
	c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (c != (locale_t)0)
		old = uselocale(c);
	for (prec = 15; prec <= 17; prec++) {
		snprintf(out, SQL_NUM_TEXT_MAX, "%.*g", prec, d);
		if (strtod(out, NULL) == d)
			break;
	}
	if (c != (locale_t)0) {
		uselocale(old);
		freelocale(c);
	}
}

/* Round half away from zero (as numeric to integer in PostgreSQL); NaN and
 * infinities come back as they are. */
static double round_half_away(double d)
{
	int64_t t;
	double frac;

	if (isnan(d) || d >= 4503599627370496.0 || d <= -4503599627370496.0)
		return d;             /* 2^52 and beyond: already whole */
	t = (int64_t)d;
	frac = d - (double)t;
	if (frac >= 0.5)
		t++;
	else if (frac <= -0.5)
		t--;
	return (double)t;
}

int sql_coerce(const struct sql_coldef *col, const struct sql_value *in, struct sql_value *out,
	       char *buf, size_t buflen, char *err, size_t errlen)
{
	int big = col->type == SQL_CT_BIGINT;
	const char *tname = big ? "bigint" : "integer";
	char num[SQL_NUM_TEXT_MAX], q[256];
	int64_t v = 0;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	if (in->type == SQL_NULL) {
		if (col->not_null || col->primary_key) {
			lwc_errf(err, errlen, "null value in column \"%s\" violates not-null constraint",
				 col->name);
			return LWC_ERR_ARG;
		}
		return LWC_OK;
	}
	switch (col->type) {
	case SQL_CT_INT:
	case SQL_CT_BIGINT:
		switch (in->type) {
		case SQL_INT:
			v = in->i;
			break;
		case SQL_FLOAT: {
			double r = round_half_away(in->f);

			if (isnan(r) || r >= 9223372036854775808.0 || r < -9223372036854775808.0)
				goto range;
			v = (int64_t)r;
			break;
		}
		case SQL_TEXT:
			rc = parse_int_text(in->s, in->len, &v);
			if (rc == 0 && (big || (v >= INT32_MIN && v <= INT32_MAX)))
				break;
			sql_quote_text(q, sizeof(q), in->s, in->len, 200);
			if (rc == -1)
				lwc_errf(err, errlen, "invalid input syntax for type %s: \"%s\"", tname, q);
			else
				lwc_errf(err, errlen, "value \"%s\" is out of range for type %s", q, tname);
			return LWC_ERR_ARG;
		default:
			goto badtype;
		}
		if (!big && (v < INT32_MIN || v > INT32_MAX))
			goto range;
		out->type = SQL_INT;
		out->i = v;
		out->i4 = !big;
		return LWC_OK;
	case SQL_CT_FLOAT:
		out->type = SQL_FLOAT;
		switch (in->type) {
		case SQL_INT:
			out->f = (double)in->i;
			return LWC_OK;
		case SQL_FLOAT:
			out->f = in->f;
			return LWC_OK;
		case SQL_TEXT:
			rc = parse_float_text(in->s, in->len, &out->f);
			if (rc == 0)
				return LWC_OK;
			memset(out, 0, sizeof(*out));
			if (rc == -3) {
				lwc_errf(err, errlen, "out of memory");
				return LWC_ERR_NOMEM;
			}
			sql_quote_text(q, sizeof(q), in->s, in->len, 200);
			if (rc == -1)
				lwc_errf(err, errlen, "invalid input syntax for type double precision: \"%s\"", q);
			else
				lwc_errf(err, errlen, "\"%s\" is out of range for type double precision", q);
			return LWC_ERR_ARG;
		default:
			goto badtype;
		}
	case SQL_CT_TEXT:
		out->type = SQL_TEXT;
		if (in->type == SQL_TEXT) {
			out->s = in->s;
			out->len = in->len;
		} else if (in->type == SQL_INT || in->type == SQL_FLOAT) {
			if (in->type == SQL_INT)
				snprintf(num, sizeof(num), "%lld", (long long)in->i);
			else
				format_double(in->f, num);
			n = strlen(num);
			if (buf == NULL || buflen <= n) {
				memset(out, 0, sizeof(*out));
				lwc_errf(err, errlen, "buffer too small for the text of a number");
				return LWC_ERR_ARG;
			}
			memcpy(buf, num, n + 1);
			out->s = buf;
			out->len = n;
		} else {
			goto badtype;
		}
		if (col->max_len > 0 && sql_utf8_chars(out->s, out->len) > col->max_len) {
			/* PostgreSQL: excess characters that are all spaces are cut */
			size_t keep = out->len;
			while (keep > 0 && out->s[keep - 1] == ' ' &&
			       sql_utf8_chars(out->s, keep) > col->max_len)
				keep--;
			if (sql_utf8_chars(out->s, keep) <= col->max_len) {
				out->len = keep;
				return LWC_OK;
			}
			memset(out, 0, sizeof(*out));
			lwc_errf(err, errlen, "value too long for type character varying(%u)",
				 (unsigned)col->max_len);
			return LWC_ERR_ARG;
		}
		return LWC_OK;
	default:
		break;
	}
badtype:
	memset(out, 0, sizeof(*out));
	lwc_errf(err, errlen, "cannot convert a value of type %s to column \"%s\"",
		 sql_vtype_name(in->type), col->name);
	return LWC_ERR_ARG;
range:
	memset(out, 0, sizeof(*out));
	lwc_errf(err, errlen, "%s out of range", tname);
	return LWC_ERR_ARG;
}
