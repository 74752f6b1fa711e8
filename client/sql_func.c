/*
 * sql_func.c - scalar functions beyond those of sql_eval.c (abs, round,
 * length, lower, upper, substr, ||, and the ones that look at NULLs):
 *
 *   text     btrim (TRIM), ltrim, rtrim, replace, left, right, strpos
 *            (POSITION), reverse, repeat, lpad, rpad, split_part
 *   numbers  floor, ceil, ceiling, mod, sign, sqrt, power, pow
 *
 * as PostgreSQL 15 computes them in a UTF8 database: positions and lengths
 * count characters; floor, ceil, sign, sqrt and power of an integer are
 * double precision (PostgreSQL's preferred numeric type), mod of integers
 * an integer (and of a FLOAT an error, as of a double precision).  Every one of them is strict: sql_eval.c returns NULL for a
 * NULL argument before calling here.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sql_int.h"

/* What repeat, lpad and rpad make at most (PostgreSQL's limit is 1 GB; a
 * row of LWC holds far less). */
#define FUNC_TEXT_MAX (64u << 20)

static int fail(char *err, size_t errlen, const char *msg)
{
	lwc_errf(err, errlen, "%s", msg);
	return LWC_ERR_ARG;
}

static int no_such(const char *f, const struct sql_value *a, size_t n, char *err, size_t errlen)
{
	char types[96] = "";
	size_t o = 0;

	for (size_t i = 0; i < n && o < sizeof(types); i++)
		o += (size_t)snprintf(types + o, sizeof(types) - o, "%s%s", i ? ", " : "",
				      a[i].type == SQL_INT && !a[i].i4 ? "bigint" :
				      sql_vtype_name(a[i].type));
	lwc_errf(err, errlen, "function %s(%s) does not exist", f, types);
	return LWC_ERR_ARG;
}

/* A count argument (PostgreSQL's integer): an int4. */
static int is_int4(const struct sql_value *v)
{
	return v->type == SQL_INT && v->i4;
}

static size_t seq(const char *s, size_t len, size_t b)
{
	size_t k = sql_utf8_seq((const unsigned char *)s + b, len - b);

	return k ? k : 1;
}

/* Byte offset of character k (0-based) of s, or len past the end. */
static size_t char_at(const char *s, size_t len, int64_t k)
{
	size_t b = 0;

	while (k-- > 0 && b < len)
		b += seq(s, len, b);
	return b < len ? b : len;
}

/* out is the n bytes made at p (from sql_eval_scratch). */
static int text_done(struct sql_value *out, char *p, size_t n)
{
	p[n] = '\0';
	out->type = SQL_TEXT;
	out->s = p;
	out->len = n;
	return LWC_OK;
}

static int text_out(struct sql_value *out, const char *p, size_t n, char *err, size_t errlen)
{
	char *q = sql_eval_scratch(n, err, errlen);

	if (q == NULL)
		return LWC_ERR_ARG;
	if (n > 0)
		memcpy(q, p, n);
	return text_done(out, q, n);
}

/* Whether the character at s[b] is one of set's. */
static int in_set(const char *s, size_t len, size_t b, const struct sql_value *set)
{
	size_t k = seq(s, len, b);

	for (size_t i = 0; i < set->len; i += seq(set->s, set->len, i))
		if (seq(set->s, set->len, i) == k && memcmp(set->s + i, s + b, k) == 0)
			return 1;
	return 0;
}

/* btrim, ltrim, rtrim: characters of set (a space by default) off the
 * start, the end or both. */
static int trim(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
		char *err, size_t errlen)
{
	static const struct sql_value space = { .type = SQL_TEXT, .s = " ", .len = 1 };
	const struct sql_value *set = n == 2 ? &a[1] : &space;
	const char *s = a[0].s;
	size_t len = a[0].len, from = 0, to = 0, b;

	if (n == 2 && a[1].type != SQL_TEXT)
		return no_such(f, a, n, err, errlen);
	if (f[0] != 'r')
		while (from < len && in_set(s, len, from, set))
			from += seq(s, len, from);
	to = len;
	if (f[0] != 'l')
		for (b = to = from; b < len; b += seq(s, len, b))
			if (!in_set(s, len, b, set))
				to = b + seq(s, len, b);
	return text_out(out, s + from, to - from, err, errlen);
}

static int replace(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
		   char *err, size_t errlen)
{
	const char *s = a[0].s, *from = a[1].s, *to = a[2].s;
	size_t len = a[0].len, fl = a[1].len, tl = a[2].len, hits = 0, o = 0;
	char *p;

	(void)f;
	(void)n;
	if (fl == 0 || fl > len)
		return text_out(out, s, len, err, errlen);
	for (size_t b = 0; b + fl <= len;)
		if (memcmp(s + b, from, fl) == 0) {
			hits++;
			b += fl;
		} else {
			b++;
		}
	if (hits > 0 && tl > fl && (len + hits * (tl - fl)) > FUNC_TEXT_MAX)
		return fail(err, errlen, "requested length too large");
	if ((p = sql_eval_scratch(len + hits * tl, err, errlen)) == NULL)
		return LWC_ERR_ARG;
	for (size_t b = 0; b < len;)
		if (b + fl <= len && memcmp(s + b, from, fl) == 0) {
			memcpy(p + o, to, tl);
			o += tl;
			b += fl;
		} else {
			p[o++] = s[b++];
		}
	return text_done(out, p, o);
}

/* left / right: the first or last n characters; n < 0 all but the last or
 * first -n. */
static int left_right(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
		      char *err, size_t errlen)
{
	int right = f[0] == 'r';
	const char *s = a[0].s;
	size_t len = a[0].len, chars = sql_utf8_chars(s, len);
	int64_t k = a[1].i, skip, take;

	(void)n;
	if (!right) {
		take = k >= 0 ? k : (int64_t)chars + k;
		skip = 0;
	} else {
		skip = k >= 0 ? (int64_t)chars - k : -k;
		take = INT64_MAX;
	}
	if (skip < 0)
		skip = 0;
	if (take <= 0)
		return text_out(out, "", 0, err, errlen);
	{
		size_t b = char_at(s, len, skip);
		size_t e = take == INT64_MAX ? len : b + char_at(s + b, len - b, take);

		return text_out(out, s + b, e - b, err, errlen);
	}
}

static int strpos_of(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
		     char *err, size_t errlen)
{
	const char *s = a[0].s, *sub = a[1].s;
	size_t len = a[0].len, sl = a[1].len;

	(void)f;
	(void)n;
	(void)err;
	(void)errlen;
	out->type = SQL_INT;
	out->i4 = 1;
	out->i = 0;
	if (sl == 0) {
		out->i = 1;
		return LWC_OK;
	}
	for (size_t b = 0, k = 1; b + sl <= len; b += seq(s, len, b), k++)
		if (memcmp(s + b, sub, sl) == 0) {
			out->i = (int64_t)k;
			break;
		}
	return LWC_OK;
}

static int reverse(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
		   char *err, size_t errlen)
{
	size_t len = a[0].len;
	char *p = sql_eval_scratch(len, err, errlen);

	(void)f;
	(void)n;
	if (p == NULL)
		return LWC_ERR_ARG;
	for (size_t b = 0; b < len;) {
		size_t k = seq(a[0].s, len, b);

		if (k > len - b)
			k = len - b;
		memcpy(p + len - b - k, a[0].s + b, k);
		b += k;
	}
	return text_done(out, p, len);
}

static int repeat(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
		  char *err, size_t errlen)
{
	size_t len = a[0].len;
	char *p;

	(void)f;
	(void)n;
	if (a[1].i <= 0 || len == 0)
		return text_out(out, "", 0, err, errlen);
	if ((uint64_t)a[1].i > FUNC_TEXT_MAX / len)
		return fail(err, errlen, "requested length too large");
	if ((p = sql_eval_scratch(len * (size_t)a[1].i, err, errlen)) == NULL)
		return LWC_ERR_ARG;
	for (int64_t i = 0; i < a[1].i; i++)
		memcpy(p + (size_t)i * len, a[0].s, len);
	return text_done(out, p, len * (size_t)a[1].i);
}

/* lpad / rpad: s cut or filled (with fill, a space by default, repeated)
 * to n characters. */
static int pad(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
	       char *err, size_t errlen)
{
	int right = f[0] == 'r';
	const char *s = a[0].s, *fill = n == 3 ? a[2].s : " ";
	size_t len = a[0].len, fl = n == 3 ? a[2].len : 1, chars = sql_utf8_chars(s, len);
	size_t keep, padb = 0, o = 0;
	int64_t want = a[1].i, padc;
	char *p;

	if (want <= 0)
		return text_out(out, "", 0, err, errlen);
	if ((uint64_t)want > FUNC_TEXT_MAX)
		return fail(err, errlen, "requested length too large");
	if ((size_t)want <= chars || fl == 0) {
		keep = char_at(s, len, (size_t)want < chars ? want : (int64_t)chars);
		return text_out(out, s, keep, err, errlen);
	}
	padc = want - (int64_t)chars;
	/* the fill's bytes for padc characters */
	for (int64_t c = 0, b = 0; c < padc; c++) {
		size_t k = seq(fill, fl, (size_t)b);

		padb += k;
		b = (int64_t)((size_t)b + k >= fl ? 0 : (size_t)b + k);
	}
	if (padb > FUNC_TEXT_MAX)
		return fail(err, errlen, "requested length too large");
	if ((p = sql_eval_scratch(len + padb, err, errlen)) == NULL)
		return LWC_ERR_ARG;
	if (right) {
		memcpy(p, s, len);
		o = len;
	}
	for (size_t w = 0, b = 0; w < padb;) {
		size_t k = seq(fill, fl, b);

		memcpy(p + o, fill + b, k);
		o += k;
		w += k;
		b = b + k >= fl ? 0 : b + k;
	}
	if (!right) {
		memcpy(p + o, s, len);
		o += len;
	}
	return text_done(out, p, o);
}

/* split_part(s, delimiter, n): field n (from the end when n < 0). */
static int split_part(const char *f, const struct sql_value *a, size_t na, struct sql_value *out,
		      char *err, size_t errlen)
{
	const char *s = a[0].s, *d = a[1].s;
	size_t len = a[0].len, dl = a[1].len, fields = 1, b, start = 0;
	int64_t n = a[2].i, want;

	(void)f;
	(void)na;
	if (n == 0)
		return fail(err, errlen, "field position must not be zero");
	if (dl == 0)
		return n == 1 || n == -1 ? text_out(out, s, len, err, errlen) :
					   text_out(out, "", 0, err, errlen);
	for (b = 0; b + dl <= len;)
		if (memcmp(s + b, d, dl) == 0) {
			fields++;
			b += dl;
		} else {
			b++;
		}
	want = n > 0 ? n : (int64_t)fields + n + 1;
	if (want < 1 || want > (int64_t)fields)
		return text_out(out, "", 0, err, errlen);
	for (b = 0, fields = 1; b <= len;) {
		if (b + dl <= len && memcmp(s + b, d, dl) == 0) {
			if ((int64_t)fields == want)
				return text_out(out, s + start, b - start, err, errlen);
			fields++;
			b += dl;
			start = b;
		} else if (b == len) {
			break;
		} else {
			b++;
		}
	}
	return text_out(out, s + start, len - start, err, errlen);
}

static double num(const struct sql_value *v)
{
	return v->type == SQL_INT ? (double)v->i : v->f;
}

static int float_out(struct sql_value *out, double d)
{
	out->type = SQL_FLOAT;
	out->f = d;
	return LWC_OK;
}

static int power(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
		 char *err, size_t errlen)
{
	double x = num(&a[0]), y = num(&a[1]), r;

	(void)f;
	(void)n;
	if (isnan(x) || isnan(y))
		return float_out(out, (isnan(x) && y == 0) || (isnan(y) && x == 1) ? 1.0 : NAN);
	if (x == 0 && y < 0)
		return fail(err, errlen, "zero raised to a negative power is undefined");
	if (x < 0 && floor(y) != y)
		return fail(err, errlen, "a negative number raised to a non-integer power yields a "
			    "complex result");
	errno = 0;
	r = pow(x, y);
	if (!isinf(x) && !isinf(y)) {
		if (isinf(r))
			return fail(err, errlen, "value out of range: overflow");
		if (r == 0 && x != 0)
			return fail(err, errlen, "value out of range: underflow");
	}
	return float_out(out, r);
}

static int mod(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
	       char *err, size_t errlen)
{
	(void)n;
	if (a[0].type == SQL_INT && a[1].type == SQL_INT) {
		if (a[1].i == 0)
			return fail(err, errlen, "division by zero");
		out->type = SQL_INT;
		out->i = a[1].i == -1 ? 0 : a[0].i % a[1].i;
		out->i4 = a[0].i4 && a[1].i4;
		return LWC_OK;
	}
	/* PostgreSQL's mod is of integers or of numerics, and a double
	 * precision is no numeric without a cast: LWC's FLOAT (a column's, or
	 * a decimal constant's) has no mod */
	return no_such(f, a, 2, err, errlen);
}

static int round_to(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
		    char *err, size_t errlen)
{
	double x = num(&a[0]);

	(void)n;
	if (strcmp(f, "floor") == 0)
		return float_out(out, floor(x));
	if (strcmp(f, "sign") == 0)
		return float_out(out, x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0);
	if (strcmp(f, "sqrt") == 0) {
		if (x < 0)
			return fail(err, errlen, "cannot take square root of a negative number");
		return float_out(out, sqrt(x));
	}
	return float_out(out, ceil(x));  /* ceil, ceiling */
}

/* The functions: arity, the kinds of their arguments (T text, I an int4,
 * N a number; a kind not met is PostgreSQL's "function ... does not
 * exist"), result type, and what computes them (concat: sql_eval.c, since
 * it is not strict). */
static const struct sql_func funcs[] = {
	{ "btrim", 1, 2, "TT", SQL_TEXT, trim },
	{ "ltrim", 1, 2, "TT", SQL_TEXT, trim },
	{ "rtrim", 1, 2, "TT", SQL_TEXT, trim },
	{ "replace", 3, 3, "TTT", SQL_TEXT, replace },
	{ "left", 2, 2, "TI", SQL_TEXT, left_right },
	{ "right", 2, 2, "TI", SQL_TEXT, left_right },
	{ "strpos", 2, 2, "TT", SQL_INT, strpos_of },
	{ "position", 2, 2, "TT", SQL_INT, strpos_of },
	{ "reverse", 1, 1, "T", SQL_TEXT, reverse },
	{ "repeat", 2, 2, "TI", SQL_TEXT, repeat },
	{ "lpad", 2, 3, "TIT", SQL_TEXT, pad },
	{ "rpad", 2, 3, "TIT", SQL_TEXT, pad },
	{ "split_part", 3, 3, "TTI", SQL_TEXT, split_part },
	{ "concat", 1, 100, NULL, SQL_TEXT, NULL },
	{ "floor", 1, 1, "N", SQL_FLOAT, round_to },
	{ "ceil", 1, 1, "N", SQL_FLOAT, round_to },
	{ "ceiling", 1, 1, "N", SQL_FLOAT, round_to },
	{ "sign", 1, 1, "N", SQL_FLOAT, round_to },
	{ "sqrt", 1, 1, "N", SQL_FLOAT, round_to },
	{ "mod", 2, 2, "NN", SQL_INT, mod },
	{ "power", 2, 2, "NN", SQL_FLOAT, power },
	{ "pow", 2, 2, "NN", SQL_FLOAT, power },
};

const struct sql_func *sql_func_find(const char *name)
{
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		if (strcmp(funcs[i].name, name) == 0)
			return &funcs[i];
	return NULL;
}

int sql_func_eval(const char *f, const struct sql_value *a, size_t n, struct sql_value *out,
		  char *err, size_t errlen)
{
	const struct sql_func *fn = sql_func_find(f);

	if (fn == NULL || fn->run == NULL)
		return 1;
	for (size_t i = 0; i < n; i++) {
		char k = fn->args[i];

		if (k == 'T' ? a[i].type != SQL_TEXT : k == 'I' ? !is_int4(&a[i]) :
		    a[i].type != SQL_INT && a[i].type != SQL_FLOAT)
			return no_such(f, a, n, err, errlen);
	}
	return fn->run(f, a, n, out, err, errlen);
}
