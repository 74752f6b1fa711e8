/*
 * sql_parse_values.c - INSERT ... VALUES of many rows of plain literals
 * without PostgreSQL's parse tree for every row.
 *
 * libpg_query hands its tree over as protobuf: packing, sizing, unpacking and
 * freeing it costs about 38 us per row of a 5,000-row INSERT of seven
 * values, 30 times its grammar's own work and the largest part of a bulk
 * load on the client (docs/benchmarks.md).  So when a statement reads
 *
 *     INSERT INTO name [ ( name, ... ) ] VALUES row , row [ , row ... ] [ ; ]
 *
 * and every row is "( literal , ... )" of the literals below, PostgreSQL's
 * parser still parses the statement up to the end of its first row (so the
 * head and its errors are PostgreSQL's), and the other rows are read here into
 * the same A_Const nodes the grammar makes, converted by the same code.
 * Anything else (comments, other string forms, expressions, DEFAULT, a
 * second statement) leaves the statement to the full parse.
 *
 * Literals, as PostgreSQL 15's scanner and grammar read them:
 *   digits                integer: Integer if it fits 32 bits, else Float
 *                         with its text (process_integer_literal)
 *   digits.digits, .5, 1e3, 1.5E-2   Float with its text
 *   - literal number      negated in the constant (doNegate), located at
 *                         the '-'
 *   'text'                a string, '' for a quote (standard conforming
 *                         strings); not followed by another string
 *   NULL, TRUE, FALSE     any case
 * Blanks are space, tab, newline and carriage return.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sql_parse_int.h"

struct vlex {
	const char *s;
	size_t n, i;
};

enum vlit_kind { VL_INT, VL_NUM, VL_STR, VL_NULL, VL_TRUE, VL_FALSE };

struct vlit {
	enum vlit_kind kind;
	size_t at, end;           /* the literal's text (a string: with quotes) */
	int pos;                  /* where PostgreSQL locates it               */
	int neg;
};

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static int is_ident_char(unsigned char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static void skip_blank(struct vlex *l)
{
	while (l->i < l->n && is_blank(l->s[l->i]))
		l->i++;
}

static int peek(const struct vlex *l)
{
	return l->i < l->n ? (unsigned char)l->s[l->i] : -1;
}

/* A word (an identifier or keyword) at l->i, any case: its length or 0. */
static size_t word(const struct vlex *l)
{
	size_t j = l->i;

	if (j >= l->n || !is_ident_start((unsigned char)l->s[j]))
		return 0;
	while (j < l->n && is_ident_char((unsigned char)l->s[j]))
		j++;
	return j - l->i;
}

static int word_is(const struct vlex *l, size_t len, const char *w)
{
	return strlen(w) == len && strncasecmp(l->s + l->i, w, len) == 0;
}

/* A name of the head: a word or a "quoted" one, with .name parts. */
static int head_name(struct vlex *l)
{
	for (;;) {
		size_t w;

		skip_blank(l);
		if (peek(l) == '"') {
			for (l->i++;; l->i++) {
				if (l->i >= l->n)
					return -1;
				if (l->s[l->i] == '"') {
					if (l->i + 1 < l->n && l->s[l->i + 1] == '"') {
						l->i++;
						continue;
					}
					break;
				}
			}
			l->i++;
		} else if ((w = word(l)) > 0) {
			l->i += w;
		} else {
			return -1;
		}
		skip_blank(l);
		if (peek(l) != '.')
			return 0;
		l->i++;
	}
}

/* The end of a number at i (digits, a point, an exponent), or 0 when the
 * text there is not one this file reads. */
static size_t number_end(const char *s, size_t n, size_t i, int *integer)
{
	size_t j = i, digits = 0;

	*integer = 1;
	while (j < n && is_digit(s[j]))
		j++, digits++;
	if (j < n && s[j] == '.') {
		*integer = 0;
		j++;
		while (j < n && is_digit(s[j]))
			j++, digits++;
	}
	if (digits == 0)
		return 0;
	if (j < n && (s[j] == 'e' || s[j] == 'E')) {
		size_t k = j + 1;

		if (k < n && (s[k] == '+' || s[k] == '-'))
			k++;
		if (k >= n || !is_digit(s[k]))
			return 0;
		while (k < n && is_digit(s[k]))
			k++;
		*integer = 0;
		j = k;
	}
	/* 1.2.3, 12abc, 1_000: not for this reader */
	if (j < n && (is_ident_char((unsigned char)s[j]) || s[j] == '.'))
		return 0;
	return j;
}

/* One literal at l->i (blanks skipped before it). */
static int literal(struct vlex *l, struct vlit *v)
{
	size_t w;
	int integer;

	skip_blank(l);
	v->neg = 0;
	v->pos = (int)l->i;
	if (peek(l) == '-') {
		v->neg = 1;
		l->i++;
		skip_blank(l);
	}
	v->at = l->i;
	if (peek(l) == '\'') {
		if (v->neg)
			return -1;
		for (l->i++;; l->i++) {
			if (l->i >= l->n)
				return -1;
			if (l->s[l->i] == '\'') {
				if (l->i + 1 < l->n && l->s[l->i + 1] == '\'') {
					l->i++;
					continue;
				}
				break;
			}
		}
		l->i++;
		v->end = l->i;
		v->kind = VL_STR;
		/* 'a' 'b' (concatenated across a newline, else an error) */
		skip_blank(l);
		return peek(l) == '\'' ? -1 : 0;
	}
	if (is_digit((char)peek(l)) || peek(l) == '.') {
		if ((v->end = number_end(l->s, l->n, l->i, &integer)) == 0)
			return -1;
		l->i = v->end;
		v->kind = integer ? VL_INT : VL_NUM;
		return 0;
	}
	if (v->neg || (w = word(l)) == 0)
		return -1;
	if (word_is(l, w, "null"))
		v->kind = VL_NULL;
	else if (word_is(l, w, "true"))
		v->kind = VL_TRUE;
	else if (word_is(l, w, "false"))
		v->kind = VL_FALSE;
	else
		return -1;
	l->i += w;
	v->end = l->i;
	return 0;
}

/* "( literal , ... )" at l->i: its number of values, or -1. */
static long row(struct vlex *l, struct vlit *out, size_t max)
{
	size_t k = 0;

	skip_blank(l);
	if (peek(l) != '(')
		return -1;
	l->i++;
	for (;;) {
		struct vlit v;

		if (literal(l, &v) != 0)
			return -1;
		if (out != NULL && k < max)
			out[k] = v;
		k++;
		skip_blank(l);
		if (peek(l) == ')') {
			l->i++;
			return (long)k;
		}
		if (peek(l) != ',')
			return -1;
		l->i++;
	}
}

size_t sqp_values_head(const char *s, size_t n, size_t *nrows)
{
	struct vlex l = { s, n, 0 };
	size_t w, head;

	*nrows = 0;
	skip_blank(&l);
	if ((w = word(&l)) == 0 || !word_is(&l, w, "insert"))
		return 0;
	l.i += w;
	skip_blank(&l);
	if ((w = word(&l)) == 0 || !word_is(&l, w, "into"))
		return 0;
	l.i += w;
	if (head_name(&l) != 0)
		return 0;
	if (peek(&l) == '(') {
		l.i++;
		for (;;) {
			if (head_name(&l) != 0)
				return 0;
			if (peek(&l) == ')')
				break;
			if (peek(&l) != ',')
				return 0;
			l.i++;
		}
		l.i++;
		skip_blank(&l);
	}
	if ((w = word(&l)) == 0 || !word_is(&l, w, "values"))
		return 0;
	l.i += w;
	if (row(&l, NULL, 0) < 0)
		return 0;
	head = l.i;
	*nrows = 1;
	for (;;) {
		skip_blank(&l);
		if (peek(&l) != ',')
			break;
		l.i++;
		if (row(&l, NULL, 0) < 0)
			return 0;
		(*nrows)++;
	}
	if (peek(&l) == ';') {
		l.i++;
		skip_blank(&l);
	}
	if (l.i != n || *nrows < 2)
		return 0;
	return head;
}

/* The A_Const PostgreSQL's grammar makes of v, converted by the parser's own
 * code; text: scratch for a string's or a negated number's text. */
static struct sql_expr *constant_of(struct tx *x, const struct vlit *v, char **text,
				    size_t *cap)
{
	PgQuery__AConst ac = PG_QUERY__A__CONST__INIT;
	PgQuery__Integer iv = PG_QUERY__INTEGER__INIT;
	PgQuery__Float fv = PG_QUERY__FLOAT__INIT;
	PgQuery__String sv = PG_QUERY__STRING__INIT;
	PgQuery__Boolean bv = PG_QUERY__BOOLEAN__INIT;
	Node node = PG_QUERY__NODE__INIT;
	size_t len = v->end - v->at, need = len + 2;

	if (need > *cap) {
		char *t = realloc(*text, need);

		if (t == NULL) {
			sqp_fail_nomem(x);
			return NULL;
		}
		*text = t;
		*cap = need;
	}
	node.node_case = PG_QUERY__NODE__NODE_A_CONST;
	node.a_const = &ac;
	ac.location = v->pos;
	switch (v->kind) {
	case VL_NULL:
		ac.isnull = 1;
		break;
	case VL_TRUE:
	case VL_FALSE:
		bv.boolval = v->kind == VL_TRUE;
		ac.val_case = PG_QUERY__A__CONST__VAL_BOOLVAL;
		ac.boolval = &bv;
		break;
	case VL_STR: {
		const char *s = x->sql + v->at + 1;
		size_t o = 0;

		for (size_t i = 0; i + 2 < len; i++) {
			(*text)[o++] = s[i];
			if (s[i] == '\'')
				i++;            /* '' */
		}
		(*text)[o] = '\0';
		sv.sval = *text;
		ac.val_case = PG_QUERY__A__CONST__VAL_SVAL;
		ac.sval = &sv;
		break;
	}
	case VL_INT: {
		/* strtoint: 32 bits, else the text as a Float */
		long long i = 0;
		size_t k = 0;

		while (k < len && i <= INT_MAX)
			i = i * 10 + (x->sql[v->at + k++] - '0');
		if (i <= INT_MAX) {
			iv.ival = (int32_t)(v->neg ? -i : i);
			ac.val_case = PG_QUERY__A__CONST__VAL_IVAL;
			ac.ival = &iv;
			break;
		}
	}
		/* fall through */
	case VL_NUM:
		(*text)[0] = '-';
		memcpy(*text + 1, x->sql + v->at, len);
		(*text)[len + 1] = '\0';
		fv.fval = *text + (v->neg ? 0 : 1);
		ac.val_case = PG_QUERY__A__CONST__VAL_FVAL;
		ac.fval = &fv;
		break;
	}
	return sqp_constant_expr(x, &node, "VALUES");
}

int sqp_values_rows(struct tx *x, struct sql_stmt *st, size_t from, size_t nrows)
{
	struct vlex l = { x->sql, x->len, from };
	struct sql_expr ***rows;
	struct vlit *vals;
	char *text = NULL;
	size_t cap = 0;
	int rc = 0;

	if ((rows = sqp_talloc(x, nrows * sizeof(*rows))) == NULL ||
	    (vals = malloc(st->rowlen * sizeof(*vals))) == NULL)
		return sqp_fail_nomem(x);
	rows[0] = st->rows[0];
	for (size_t r = 1; r < nrows && rc == 0; r++) {
		size_t start;
		long k;

		skip_blank(&l);
		l.i++;                          /* the ',' sqp_values_head saw */
		skip_blank(&l);
		start = l.i;
		k = row(&l, vals, st->rowlen);
		if (k < 0) {
			rc = sqp_fail(x, (int)start, "malformed VALUES");
			break;
		}
		if ((size_t)k != st->rowlen) {
			/* located as the full parse does: at the row's first value */
			struct vlex again = { x->sql, x->len, start + 1 };
			struct vlit first;

			rc = -1;
			if (literal(&again, &first) == 0)
				sqp_fail(x, first.pos, "VALUES lists must all be the same length");
			else
				sqp_fail(x, (int)start, "VALUES lists must all be the same length");
			break;
		}
		if ((rows[r] = sqp_talloc(x, st->rowlen * sizeof(**rows))) == NULL) {
			rc = -1;
			break;
		}
		for (size_t j = 0; j < st->rowlen; j++)
			if ((rows[r][j] = constant_of(x, &vals[j], &text, &cap)) == NULL) {
				rc = -1;
				break;
			}
	}
	free(text);
	free(vals);
	if (rc == 0) {
		st->rows = rows;
		st->nrows = nrows;
	}
	return rc;
}
