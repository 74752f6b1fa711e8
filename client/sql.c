/*
 * sql.c - the SQL subset of LWC (DESIGN section 10): a tokenizer and a
 * hand-written recursive-descent parser into struct sql_stmt, the binding
 * of column names to a schema, SQL's three-valued evaluation of a WHERE
 * expression on a decrypted row, and PostgreSQL's assignment conversions.
 *
 * Everything a statement holds lives in one arena (a chain of malloc'ed
 * blocks) that sql_free releases at once; the parser never frees on error
 * paths, it drops the arena.  Tokens are lexed lazily from byte offsets, so
 * a statement needs no token array and the SQL need not be NUL-terminated.
 *
 * Stack use is bounded whatever the input: the parser's recursion counts
 * parentheses, NOT, unary signs and IN lists (SQL_MAX_NESTING), and every
 * tree it builds is at most SQL_MAX_HEIGHT high, with AND / OR chains built
 * balanced, so the recursive tree walks here and in the library are safe.
 *
 * Numbers are converted under the "C" locale (uselocale), so a program that
 * called setlocale() with a decimal comma still reads 4.67 as 4.67.
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

#include "sql.h"

/* ---- arena ----------------------------------------------------------------- */

#define ARENA_ALIGN     16
#define ARENA_FIRST     4096
#define ARENA_MAX_STEP  (1u << 20)
#define ARENA_HDR       ((sizeof(struct arena_block) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))

struct arena_block {
	struct arena_block *next;
	size_t size;                  /* usable bytes after the header         */
	size_t used;
};

struct arena {
	struct arena_block *head;     /* the block allocations come from        */
	size_t step;                  /* size of the next ordinary block        */
};

static struct arena_block *arena_block_new(size_t size)
{
	struct arena_block *b;

	if (size > SIZE_MAX - ARENA_HDR)
		return NULL;
	b = malloc(ARENA_HDR + size);
	if (b == NULL)
		return NULL;
	b->next = NULL;
	b->size = size;
	b->used = 0;
	return b;
}

/* A new arena; the struct arena lives in its own first block. */
static struct arena *arena_new(void)
{
	struct arena_block *b = arena_block_new(ARENA_FIRST);
	struct arena *a;

	if (b == NULL)
		return NULL;
	a = (struct arena *)(void *)((unsigned char *)b + ARENA_HDR);
	b->used = (sizeof(*a) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	a->head = b;
	a->step = ARENA_FIRST * 2;
	return a;
}

static void arena_destroy(struct arena *a)
{
	struct arena_block *b, *next;

	if (a == NULL)
		return;
	for (b = a->head; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
}

/* n zeroed bytes aligned to ARENA_ALIGN, or NULL. */
static void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_block *b = a->head;
	void *p;

	if (n > SIZE_MAX - ARENA_ALIGN)
		return NULL;
	n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (n == 0)
		n = ARENA_ALIGN;
	if (b->size - b->used < n) {
		if (n > a->step / 2) {
			/* a big request gets its own block behind the head, so
			 * the head keeps its free space */
			struct arena_block *nb = arena_block_new(n);

			if (nb == NULL)
				return NULL;
			nb->next = b->next;
			b->next = nb;
			nb->used = n;
			p = (unsigned char *)nb + ARENA_HDR;
			memset(p, 0, n);
			return p;
		}
		b = arena_block_new(a->step);
		if (b == NULL)
			return NULL;
		if (a->step < ARENA_MAX_STEP)
			a->step *= 2;
		b->next = a->head;
		a->head = b;
	}
	p = (unsigned char *)b + ARENA_HDR + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

/* Room for one more element in an arena array of n used / *cap elements:
 * the array itself, or a copy with twice the room (the old one stays in
 * the arena until the statement is freed: at most half is wasted). */
static void *arena_grow(struct arena *a, void *arr, size_t n, size_t *cap, size_t elsize)
{
	size_t ncap = *cap ? *cap * 2 : 4;
	void *na;

	if (n < *cap)
		return arr;
	if (ncap < *cap || ncap > SIZE_MAX / elsize)
		return NULL;
	na = arena_alloc(a, ncap * elsize);
	if (na == NULL)
		return NULL;
	if (n)
		memcpy(na, arr, n * elsize);
	*cap = ncap;
	return na;
}

/* ---- small helpers --------------------------------------------------------- */

static int is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static int is_ident_char(unsigned char c)
{
	return is_ident_start(c) || is_digit(c) || c == '$';
}

static unsigned char ascii_lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 'a' - 'A') : c;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when it is not one
 * (overlong forms, surrogates, above U+10FFFF, truncated). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Offset of the first byte of s[0..n) that is not valid UTF-8 or is NUL, or
 * n when all is well. */
static size_t utf8_check(const unsigned char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if (s[i] == 0)
			return i;
		k = utf8_seq(s + i, n - i);
		if (k == 0)
			return i;
		i += k;
	}
	return n;
}

/* Printable form of s[0..n) for a message: valid UTF-8 kept, control and
 * invalid bytes as \xNN, cut after max bytes of input with "...". */
static void quote_text(char *out, size_t outlen, const char *src, size_t n, size_t max)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0, k;
	int cut = 0;

	if (outlen == 0)
		return;
	if (n > max) {
		/* never cut a character in two */
		for (n = max; n > 0 && (s[n] & 0xc0) == 0x80; n--)
			;
		cut = 1;
	}
	while (i < n) {
		k = utf8_seq(s + i, n - i);
		if (k == 0 || s[i] < 0x20 || s[i] == 0x7f) {
			if (o + 5 > outlen)
				break;
			snprintf(out + o, outlen - o, "\\x%02x", s[i]);
			o += 4;
			i++;
			continue;
		}
		if (o + k + 1 > outlen)
			break;
		memcpy(out + o, s + i, k);
		o += k;
		i += k;
	}
	if ((cut || i < n) && o + 4 <= outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* strtod of s[0..n) (already checked to be a decimal number, NaN or
 * Infinity) under the C locale; *out set; -1 only when out of memory. */
static int c_strtod(const char *s, size_t n, double *out, int *erange)
{
	char small[128], *buf = small;
	locale_t c, old = (locale_t)0;
	int e;

	if (n >= sizeof(small)) {
		buf = malloc(n + 1);
		if (buf == NULL)
			return -1;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (c != (locale_t)0)
		old = uselocale(c);
	errno = 0;
	*out = strtod(buf, NULL);
	e = errno;
	if (c != (locale_t)0) {
		uselocale(old);
		freelocale(c);
	}
	*erange = e == ERANGE;
	if (buf != small)
		free(buf);
	return 0;
}

/* Number of code points in valid UTF-8 s[0..n). */
static size_t utf8_chars(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

/* ---- values ---------------------------------------------------------------- */

static const char *vtype_name(enum sql_vtype t)
{
	switch (t) {
	case SQL_INT: return "integer";
	case SQL_FLOAT: return "double precision";
	case SQL_TEXT: return "text";
	default: return "unknown";
	}
}

static const char *const cmp_text[] = {
	[SQL_EQ] = "=", [SQL_NE] = "<>", [SQL_LT] = "<",
	[SQL_LE] = "<=", [SQL_GT] = ">", [SQL_GE] = ">=",
};

static const char *const arith_text[] = {
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
static int value_neg(const struct sql_value *a, struct sql_value *out, char *err, size_t errlen)
{
	*out = *a;
	switch (a->type) {
	case SQL_NULL:
		return LWC_OK;
	case SQL_INT:
		if (a->i == INT64_MIN) {
			lwc_errf(err, errlen, "bigint out of range");
			return LWC_ERR_ARG;
		}
		out->i = -a->i;
		return LWC_OK;
	case SQL_FLOAT:
		out->f = -a->f;
		return LWC_OK;
	default:
		lwc_errf(err, errlen, "operator does not exist: - %s", vtype_name(a->type));
		return LWC_ERR_ARG;
	}
}

/* a op b; NULL in, NULL out. */
static int value_arith(enum sql_arith op, const struct sql_value *a, const struct sql_value *b,
		       struct sql_value *out, char *err, size_t errlen)
{
	double x, y, r;

	memset(out, 0, sizeof(*out));
	if (a->type == SQL_NULL || b->type == SQL_NULL)
		return LWC_OK;
	if (a->type == SQL_TEXT || b->type == SQL_TEXT ||
	    (op == SQL_MOD && (a->type == SQL_FLOAT || b->type == SQL_FLOAT))) {
		lwc_errf(err, errlen, "operator does not exist: %s %s %s", vtype_name(a->type),
			 arith_text[op], vtype_name(b->type));
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
		if (ovf) {
			lwc_errf(err, errlen, "bigint out of range");
			return LWC_ERR_ARG;
		}
		out->type = SQL_INT;
		out->i = res;
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
__attribute__((format(printf, 3, 4)))
static int fail(struct parser *p, size_t pos, const char *fmt, ...)
{
	va_list ap;

	if (p->rc != LWC_OK)
		return -1;
	p->rc = LWC_ERR_ARG;
	p->errpos = (int)pos;
	if (p->err != NULL && p->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(p->err, p->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int fail_nomem(struct parser *p)
{
	if (p->rc == LWC_OK) {
		p->rc = LWC_ERR_NOMEM;
		p->errpos = -1;
		lwc_errf(p->err, p->errlen, "out of memory");
	}
	return -1;
}

static void *palloc(struct parser *p, size_t n)
{
	void *m = arena_alloc(p->ar, n);

	if (m == NULL)
		fail_nomem(p);
	return m;
}

/* "syntax error at or near ..." for token t. */
static int fail_near(struct parser *p, const struct tok *t, const char *what)
{
	char q[160];

	if (t->kind == TK_EOF)
		return fail(p, t->start, "%s at end of input", what);
	quote_text(q, sizeof(q), p->sql + t->start, t->end - t->start, 40);
	return fail(p, t->start, "%s at or near \"%s\"", what, q);
}

static int syntax_error(struct parser *p)
{
	return fail_near(p, &p->cur, "syntax error");
}

/* End of a quoted string or identifier starting at i (the quote), or 0
 * when it is not closed; q is the quote character, doubled to escape it. */
static size_t quoted_end(const char *s, size_t n, size_t i, char q)
{
	for (i++; i < n; i++) {
		if (s[i] != q)
			continue;
		if (i + 1 < n && s[i + 1] == q) {
			i++;
			continue;
		}
		return i + 1;
	}
	return 0;
}

/* Skip whitespace and -- comments from i. */
static size_t skip_blank(const char *s, size_t n, size_t i)
{
	for (;;) {
		while (i < n && is_space((unsigned char)s[i]))
			i++;
		if (i + 1 < n && s[i] == '-' && s[i + 1] == '-') {
			while (i < n && s[i] != '\n' && s[i] != '\r')
				i++;
			continue;
		}
		return i;
	}
}

static int fail_encoding(struct parser *p, size_t at)
{
	const unsigned char *s = (const unsigned char *)p->sql;

	return fail(p, at, "invalid byte sequence for encoding \"UTF8\": 0x%02x", s[at]);
}

/* Lex the token at or after offset i into *t. */
static int lex(struct parser *p, size_t i, struct tok *t)
{
	const char *s = p->sql;
	const unsigned char *u = (const unsigned char *)s;
	size_t n = p->len, j, bad;
	unsigned char c;

	i = skip_blank(s, n, i);
	t->start = i;
	t->op = 0;
	if (i >= n) {
		t->kind = TK_EOF;
		t->end = n;
		return 0;
	}
	c = u[i];
	if (is_ident_start(c)) {
		for (j = i + 1; j < n && is_ident_char(u[j]); j++)
			;
		bad = utf8_check(u + i, j - i);
		if (bad < j - i)
			return fail_encoding(p, i + bad);
		t->kind = TK_IDENT;
		t->end = j;
		return 0;
	}
	if (is_digit(c) || (c == '.' && i + 1 < n && is_digit(u[i + 1]))) {
		int isfloat = 0;

		for (j = i; j < n && is_digit(u[j]); j++)
			;
		if (j < n && s[j] == '.') {
			isfloat = 1;
			for (j++; j < n && is_digit(u[j]); j++)
				;
		}
		if (j < n && (s[j] == 'e' || s[j] == 'E')) {
			size_t k = j + 1;

			if (k < n && (s[k] == '+' || s[k] == '-'))
				k++;
			if (k < n && is_digit(u[k])) {
				isfloat = 1;
				for (j = k; j < n && is_digit(u[j]); j++)
					;
			}
		}
		t->kind = isfloat ? TK_FLOAT : TK_INT;
		t->end = j;
		if (j < n && (is_ident_char(u[j]) || s[j] == '.')) {
			while (j < n && (is_ident_char(u[j]) || s[j] == '.'))
				j++;
			t->end = j;
			return fail_near(p, t, "trailing junk after numeric literal");
		}
		return 0;
	}
	if (c == '\'' || c == '"') {
		j = quoted_end(s, n, i, (char)c);
		if (j == 0) {
			t->kind = TK_STRING;
			t->end = n;
			return fail_near(p, t, c == '\'' ? "unterminated quoted string"
					 : "unterminated quoted identifier");
		}
		bad = utf8_check(u + i + 1, j - i - 2);
		if (bad < j - i - 2)
			return fail_encoding(p, i + 1 + bad);
		t->kind = c == '\'' ? TK_STRING : TK_QIDENT;
		t->end = j;
		if (c == '"' && j == i + 2)
			return fail_near(p, t, "zero-length delimited identifier");
		return 0;
	}
	t->kind = TK_OP;
	t->end = i + 1;
	t->op = c;
	if (i + 1 < n) {
		unsigned char d = u[i + 1];

		if (c == '<' && d == '=')
			t->op = OP_LE;
		else if (c == '>' && d == '=')
			t->op = OP_GE;
		else if ((c == '<' && d == '>') || (c == '!' && d == '='))
			t->op = OP_NE;
		if (t->op >= 256)
			t->end = i + 2;
	}
	switch (t->op) {
	case '(': case ')': case ',': case ';': case '*': case '=': case '<': case '>':
	case '+': case '-': case '/': case '%': case OP_LE: case OP_GE: case OP_NE:
		return 0;
	default:
		/* bytes >= 0x80 start identifiers: c is ASCII here */
		return fail_near(p, t, "syntax error");
	}
}

/* ---- token helpers --------------------------------------------------------- */

/* The next token; after an error the current token stays an end of input
 * so that every caller unwinds (only the first error is kept). */
static void advance(struct parser *p)
{
	size_t from = p->cur.end;

	if (p->rc == LWC_OK && lex(p, from, &p->cur) == 0)
		return;
	p->cur.kind = TK_EOF;
	p->cur.start = p->cur.end = p->len;
}

/* The token after the current one, without consuming anything. */
static void peek(struct parser *p, struct tok *t)
{
	if (p->rc != LWC_OK || lex(p, p->cur.end, t) != 0) {
		t->kind = TK_EOF;
		t->start = t->end = p->len;
	}
}

static int tok_is_kw(const struct parser *p, const struct tok *t, const char *kw)
{
	size_t n = strlen(kw), i;

	if (t->kind != TK_IDENT || t->end - t->start != n)
		return 0;
	for (i = 0; i < n; i++)
		if (ascii_lower((unsigned char)p->sql[t->start + i]) != (unsigned char)kw[i])
			return 0;
	return 1;
}

static int is_kw(const struct parser *p, const char *kw)
{
	return tok_is_kw(p, &p->cur, kw);
}

static int accept_kw(struct parser *p, const char *kw)
{
	if (!is_kw(p, kw))
		return 0;
	advance(p);
	return 1;
}

static int expect_kw(struct parser *p, const char *kw)
{
	return accept_kw(p, kw) ? 0 : syntax_error(p);
}

static int is_op(const struct parser *p, int op)
{
	return p->cur.kind == TK_OP && p->cur.op == op;
}

static int accept_op(struct parser *p, int op)
{
	if (!is_op(p, op))
		return 0;
	advance(p);
	return 1;
}

static int expect_op(struct parser *p, int op)
{
	return accept_op(p, op) ? 0 : syntax_error(p);
}

/* Words that cannot be unquoted names (PostgreSQL's reserved words that
 * matter here, and BETWEEN). */
static const char *const reserved_words[] = {
	"all", "and", "any", "as", "asc", "between", "case", "check", "collate",
	"constraint", "create", "default", "desc", "distinct", "else", "end",
	"false", "for", "foreign", "from", "group", "having", "in", "into", "is",
	"limit", "not", "null", "offset", "on", "or", "order", "primary",
	"references", "select", "table", "then", "true", "union", "unique",
	"using", "when", "where", "with",
};

static int is_reserved(const struct parser *p, const struct tok *t)
{
	size_t i;

	for (i = 0; i < sizeof(reserved_words) / sizeof(reserved_words[0]); i++)
		if (tok_is_kw(p, t, reserved_words[i]))
			return 1;
	return 0;
}

/* A table, column or index name: folded to lower case unless quoted. */
static int take_name(struct parser *p, char out[SQL_NAME_MAX + 1], int *pos)
{
	const struct tok *t = &p->cur;
	const char *s = p->sql + t->start;
	size_t n = t->end - t->start, i, o = 0;
	char q[160];

	if (t->kind == TK_IDENT && !is_reserved(p, t)) {
		if (n > SQL_NAME_MAX)
			goto toolong;
		for (i = 0; i < n; i++)
			out[o++] = (char)ascii_lower((unsigned char)s[i]);
	} else if (t->kind == TK_QIDENT) {
		for (i = 1; i + 1 < n; i++) {
			if (o == SQL_NAME_MAX)
				goto toolong;
			out[o++] = s[i];
			if (s[i] == '"')
				i++;
		}
	} else {
		return syntax_error(p);
	}
	out[o] = '\0';
	if (pos != NULL)
		*pos = (int)t->start;
	advance(p);
	return 0;
toolong:
	if (t->kind == TK_QIDENT)
		quote_text(q, sizeof(q), s + 1, n - 2, 40);
	else
		quote_text(q, sizeof(q), s, n, 40);
	return fail(p, t->start, "identifier \"%s\" is too long (at most %d bytes)", q, SQL_NAME_MAX);
}

/* ---- expressions ------------------------------------------------------------ */

static int is_bool_kind(enum sql_ekind k)
{
	return k == SQL_E_CMP || k == SQL_E_IN || k == SQL_E_BETWEEN || k == SQL_E_ISNULL ||
	       k == SQL_E_AND || k == SQL_E_OR || k == SQL_E_NOT;
}

static struct sql_expr *new_expr(struct parser *p, enum sql_ekind kind, size_t pos)
{
	struct sql_expr *e = palloc(p, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->kind = kind;
	e->pos = (int)pos;
	e->col_index = -1;
	e->height = 1;
	return e;
}

/* Set e's height from its children; refuse a tree that grew too high. */
static struct sql_expr *finish(struct parser *p, struct sql_expr *e)
{
	int h = 0;
	size_t i;

	if (e->a != NULL && e->a->height > h)
		h = e->a->height;
	if (e->b != NULL && e->b->height > h)
		h = e->b->height;
	if (e->c != NULL && e->c->height > h)
		h = e->c->height;
	for (i = 0; i < e->nlist; i++)
		if (e->list[i]->height > h)
			h = e->list[i]->height;
	e->height = h + 1;
	if (e->height > SQL_MAX_HEIGHT) {
		fail(p, (size_t)e->pos, "expression nested too deeply");
		return NULL;
	}
	return e;
}

/* One level deeper in the parser's recursion, for the construct at pos. */
static int nest_in(struct parser *p, size_t pos)
{
	if (++p->nest > SQL_MAX_NESTING)
		return fail(p, pos, "expression nested too deeply");
	return 0;
}

/* e must be a value (not a condition) as the argument of what. */
static int need_value(struct parser *p, const struct sql_expr *e, const char *what)
{
	if (!is_bool_kind(e->kind))
		return 0;
	return fail(p, (size_t)e->pos, "argument of %s must be a value, not a condition", what);
}

/* Whether the current token may follow a complete condition. */
static int at_condition_end(const struct parser *p)
{
	if (p->cur.kind == TK_EOF)
		return 1;
	if (p->cur.kind == TK_OP)
		return p->cur.op == ';' || p->cur.op == ')' || p->cur.op == ',';
	return is_kw(p, "and") || is_kw(p, "or") || is_kw(p, "order") || is_kw(p, "limit");
}

/* e, just parsed, must be a condition as the argument of what.  When the
 * next token cannot follow a condition ("a LIKE 'x'"), the real problem is
 * that token: a syntax error there. */
static int need_bool(struct parser *p, const struct sql_expr *e, const char *what)
{
	if (is_bool_kind(e->kind))
		return 0;
	if (!at_condition_end(p))
		return syntax_error(p);
	if (e->kind == SQL_E_LIT)
		return fail(p, (size_t)e->pos, "argument of %s must be type boolean, not type %s",
			    what, vtype_name(e->lit.type));
	return fail(p, (size_t)e->pos, "argument of %s must be type boolean, not a value", what);
}

/* The first column an expression reads (for "column does not exist" in
 * VALUES), or NULL. */
static const struct sql_expr *first_col(const struct sql_expr *e)
{
	const struct sql_expr *c;
	size_t i;

	if (e == NULL)
		return NULL;
	if (e->kind == SQL_E_COL)
		return e;
	if ((c = first_col(e->a)) != NULL || (c = first_col(e->b)) != NULL ||
	    (c = first_col(e->c)) != NULL)
		return c;
	for (i = 0; i < e->nlist; i++)
		if ((c = first_col(e->list[i])) != NULL)
			return c;
	return NULL;
}

/* A numeric literal from token t, negated when neg (so that
 * -9223372036854775808 is an INT). */
static struct sql_expr *number_literal(struct parser *p, const struct tok *t, int neg, size_t pos)
{
	struct sql_expr *e = new_expr(p, SQL_E_LIT, pos);
	const char *s = p->sql + t->start;
	size_t n = t->end - t->start, i;
	int erange;
	double d;

	if (e == NULL)
		return NULL;
	if (t->kind == TK_INT) {
		uint64_t v = 0, lim = neg ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1;
		int over = 0;

		for (i = 0; i < n && !over; i++) {
			unsigned d10 = (unsigned)(s[i] - '0');

			if (v > (UINT64_MAX - d10) / 10)
				over = 1;
			else
				v = v * 10 + d10;
		}
		if (!over && v <= lim) {
			e->lit.type = SQL_INT;
			if (!neg)
				e->lit.i = (int64_t)v;
			else if (v == (uint64_t)1 << 63)
				e->lit.i = INT64_MIN;
			else
				e->lit.i = -(int64_t)v;
			return e;
		}
		/* beyond 64 bits: a FLOAT, as PostgreSQL makes it a numeric */
	}
	if (c_strtod(s, n, &d, &erange) != 0) {
		fail_nomem(p);
		return NULL;
	}
	if (isinf(d) || (erange && d == 0)) {
		char q[160];

		quote_text(q, sizeof(q), s, n, 60);
		fail(p, t->start, "\"%s\" is out of range for type double precision", q);
		return NULL;
	}
	e->lit.type = SQL_FLOAT;
	e->lit.f = neg ? -d : d;
	return e;
}

static struct sql_expr *string_literal(struct parser *p, const struct tok *t)
{
	struct sql_expr *e = new_expr(p, SQL_E_LIT, t->start);
	const char *s = p->sql + t->start;
	size_t n = t->end - t->start, i, o = 0;
	char *buf;

	if (e == NULL)
		return NULL;
	buf = palloc(p, n - 1);
	if (buf == NULL)
		return NULL;
	for (i = 1; i + 1 < n; i++) {
		buf[o++] = s[i];
		if (s[i] == '\'')
			i++;
	}
	buf[o] = '\0';
	e->lit.type = SQL_TEXT;
	e->lit.s = buf;
	e->lit.len = o;
	return e;
}

/* -a, folded when a is a literal. */
static struct sql_expr *make_neg(struct parser *p, size_t pos, struct sql_expr *a)
{
	struct sql_expr *e;
	char msg[160];

	if (need_value(p, a, "-") != 0)
		return NULL;
	if (a->kind == SQL_E_LIT) {
		e = new_expr(p, SQL_E_LIT, pos);
		if (e == NULL)
			return NULL;
		if (value_neg(&a->lit, &e->lit, msg, sizeof(msg)) != LWC_OK) {
			fail(p, pos, "%s", msg);
			return NULL;
		}
		return e;
	}
	e = new_expr(p, SQL_E_NEG, pos);
	if (e == NULL)
		return NULL;
	e->a = a;
	return finish(p, e);
}

/* a op b, folded when both are literals. */
static struct sql_expr *make_arith(struct parser *p, enum sql_arith op, size_t pos,
				   struct sql_expr *a, struct sql_expr *b)
{
	struct sql_expr *e;
	char msg[160];

	if (need_value(p, a, arith_text[op]) != 0 || need_value(p, b, arith_text[op]) != 0)
		return NULL;
	if (a->kind == SQL_E_LIT && b->kind == SQL_E_LIT) {
		e = new_expr(p, SQL_E_LIT, pos);
		if (e == NULL)
			return NULL;
		if (value_arith(op, &a->lit, &b->lit, &e->lit, msg, sizeof(msg)) != LWC_OK) {
			fail(p, pos, "%s", msg);
			return NULL;
		}
		return e;
	}
	e = new_expr(p, SQL_E_ARITH, pos);
	if (e == NULL)
		return NULL;
	e->arith = op;
	e->a = a;
	e->b = b;
	return finish(p, e);
}

static struct sql_expr *parse_or(struct parser *p);

static struct sql_expr *parse_primary(struct parser *p)
{
	struct tok t = p->cur;
	struct sql_expr *e;

	switch (t.kind) {
	case TK_INT:
	case TK_FLOAT:
		e = number_literal(p, &t, 0, t.start);
		advance(p);
		return e;
	case TK_STRING:
		e = string_literal(p, &t);
		advance(p);
		return e;
	case TK_IDENT:
		if (is_kw(p, "null")) {
			e = new_expr(p, SQL_E_LIT, t.start);
			advance(p);
			return e;
		}
		/* fall through */
	case TK_QIDENT:
		e = new_expr(p, SQL_E_COL, t.start);
		if (e == NULL || take_name(p, e->col, NULL) != 0)
			return NULL;
		return e;
	case TK_OP:
		if (t.op != '(')
			break;
		if (nest_in(p, t.start) != 0)
			return NULL;
		advance(p);
		e = parse_or(p);
		if (e == NULL || expect_op(p, ')') != 0)
			return NULL;
		p->nest--;
		return e;
	default:
		break;
	}
	syntax_error(p);
	return NULL;
}

static struct sql_expr *parse_unary(struct parser *p)
{
	size_t pos = p->cur.start;
	struct sql_expr *a;
	int sign;

	if (!is_op(p, '-') && !is_op(p, '+'))
		return parse_primary(p);
	sign = p->cur.op;
	advance(p);
	if (sign == '-' && (p->cur.kind == TK_INT || p->cur.kind == TK_FLOAT)) {
		struct tok t = p->cur;

		a = number_literal(p, &t, 1, pos);
		advance(p);
		return a;
	}
	if (nest_in(p, pos) != 0)
		return NULL;
	a = parse_unary(p);
	if (a == NULL)
		return NULL;
	p->nest--;
	if (sign == '-')
		return make_neg(p, pos, a);
	if (need_value(p, a, "+") != 0)
		return NULL;
	if (a->kind == SQL_E_LIT && a->lit.type == SQL_TEXT) {
		fail(p, pos, "operator does not exist: + text");
		return NULL;
	}
	return a;
}

static struct sql_expr *parse_mul(struct parser *p)
{
	struct sql_expr *a = parse_unary(p), *b;
	enum sql_arith op;
	size_t pos;

	while (a != NULL && (is_op(p, '*') || is_op(p, '/') || is_op(p, '%'))) {
		op = is_op(p, '*') ? SQL_MUL : is_op(p, '/') ? SQL_DIV : SQL_MOD;
		pos = p->cur.start;
		advance(p);
		b = parse_unary(p);
		if (b == NULL)
			return NULL;
		a = make_arith(p, op, pos, a, b);
	}
	return a;
}

static struct sql_expr *parse_add(struct parser *p)
{
	struct sql_expr *a = parse_mul(p), *b;
	enum sql_arith op;
	size_t pos;

	while (a != NULL && (is_op(p, '+') || is_op(p, '-'))) {
		op = is_op(p, '+') ? SQL_ADD : SQL_SUB;
		pos = p->cur.start;
		advance(p);
		b = parse_mul(p);
		if (b == NULL)
			return NULL;
		a = make_arith(p, op, pos, a, b);
	}
	return a;
}

/* a [NOT] IN (list) | a [NOT] BETWEEN b AND c | a */
static struct sql_expr *parse_in_between(struct parser *p)
{
	struct sql_expr *a = parse_add(p), *e, *item;
	size_t pos, cap = 0;
	int negated = 0;
	struct tok next;

	if (a == NULL)
		return NULL;
	if (is_kw(p, "not")) {
		peek(p, &next);
		if (!tok_is_kw(p, &next, "in") && !tok_is_kw(p, &next, "between"))
			return a;
		advance(p);
		negated = 1;
	}
	pos = p->cur.start;
	if (accept_kw(p, "in")) {
		if (need_value(p, a, "IN") != 0 || (e = new_expr(p, SQL_E_IN, pos)) == NULL)
			return NULL;
		e->negated = negated;
		e->a = a;
		if (nest_in(p, p->cur.start) != 0 || expect_op(p, '(') != 0)
			return NULL;
		do {
			item = parse_or(p);
			if (item == NULL || need_value(p, item, "IN") != 0)
				return NULL;
			e->list = arena_grow(p->ar, e->list, e->nlist, &cap, sizeof(*e->list));
			if (e->list == NULL) {
				fail_nomem(p);
				return NULL;
			}
			e->list[e->nlist++] = item;
		} while (accept_op(p, ','));
		if (expect_op(p, ')') != 0)
			return NULL;
		p->nest--;
		return finish(p, e);
	}
	if (accept_kw(p, "between")) {
		if (need_value(p, a, "BETWEEN") != 0 || (e = new_expr(p, SQL_E_BETWEEN, pos)) == NULL)
			return NULL;
		e->negated = negated;
		e->a = a;
		e->b = parse_add(p);
		if (e->b == NULL || need_value(p, e->b, "BETWEEN") != 0 || expect_kw(p, "and") != 0)
			return NULL;
		e->c = parse_add(p);
		if (e->c == NULL || need_value(p, e->c, "BETWEEN") != 0)
			return NULL;
		return finish(p, e);
	}
	return a;
}

/* a op b for the six comparisons (not associative, as in PostgreSQL). */
static struct sql_expr *parse_cmp(struct parser *p)
{
	struct sql_expr *a = parse_in_between(p), *e;
	enum sql_cmp op;
	size_t pos;

	if (a == NULL || p->cur.kind != TK_OP)
		return a;
	switch (p->cur.op) {
	case '=': op = SQL_EQ; break;
	case OP_NE: op = SQL_NE; break;
	case '<': op = SQL_LT; break;
	case OP_LE: op = SQL_LE; break;
	case '>': op = SQL_GT; break;
	case OP_GE: op = SQL_GE; break;
	default: return a;
	}
	pos = p->cur.start;
	advance(p);
	if (need_value(p, a, cmp_text[op]) != 0 || (e = new_expr(p, SQL_E_CMP, pos)) == NULL)
		return NULL;
	e->op = op;
	e->a = a;
	e->b = parse_in_between(p);
	if (e->b == NULL || need_value(p, e->b, cmp_text[op]) != 0)
		return NULL;
	return finish(p, e);
}

/* a IS [NOT] NULL (binds looser than comparisons, as in PostgreSQL). */
static struct sql_expr *parse_is(struct parser *p)
{
	struct sql_expr *a = parse_cmp(p), *e;
	size_t pos;

	while (a != NULL && is_kw(p, "is")) {
		pos = p->cur.start;
		advance(p);
		if (need_value(p, a, "IS NULL") != 0 || (e = new_expr(p, SQL_E_ISNULL, pos)) == NULL)
			return NULL;
		e->negated = accept_kw(p, "not");
		if (expect_kw(p, "null") != 0)
			return NULL;
		e->a = a;
		a = finish(p, e);
	}
	return a;
}

static struct sql_expr *parse_not(struct parser *p)
{
	struct sql_expr *a, *e;
	size_t pos = p->cur.start;

	if (!is_kw(p, "not"))
		return parse_is(p);
	if (nest_in(p, pos) != 0)
		return NULL;
	advance(p);
	a = parse_not(p);
	if (a == NULL || need_bool(p, a, "NOT") != 0 || (e = new_expr(p, SQL_E_NOT, pos)) == NULL)
		return NULL;
	p->nest--;
	e->a = a;
	return finish(p, e);
}

/* A balanced tree over terms[lo..hi] joined by kind; ops[i] is the offset
 * of the operator before terms[i].  Depth log2(n), order kept. */
static struct sql_expr *balance(struct parser *p, enum sql_ekind kind, struct sql_expr **terms,
				const int *ops, size_t lo, size_t hi)
{
	struct sql_expr *e;
	size_t mid;

	if (lo == hi)
		return terms[lo];
	mid = lo + (hi - lo + 1) / 2;
	e = new_expr(p, kind, (size_t)ops[mid]);
	if (e == NULL)
		return NULL;
	e->a = balance(p, kind, terms, ops, lo, mid - 1);
	e->b = balance(p, kind, terms, ops, mid, hi);
	if (e->a == NULL || e->b == NULL)
		return NULL;
	return finish(p, e);
}

/* term {AND term} or term {OR term}: AND and OR are associative in SQL's
 * three-valued logic, so a long chain becomes a balanced tree. */
static struct sql_expr *parse_chain(struct parser *p, int is_or)
{
	const char *kw = is_or ? "or" : "and", *name = is_or ? "OR" : "AND";
	struct sql_expr **terms = NULL, *t;
	size_t n = 0, cap = 0, cap2 = 0, oppos = 0;
	int *ops = NULL;

	t = is_or ? parse_chain(p, 0) : parse_not(p);
	if (t == NULL || !is_kw(p, kw))
		return t;
	for (;;) {
		if (need_bool(p, t, name) != 0)
			return NULL;
		terms = arena_grow(p->ar, terms, n, &cap, sizeof(*terms));
		ops = arena_grow(p->ar, ops, n, &cap2, sizeof(*ops));
		if (terms == NULL || ops == NULL) {
			fail_nomem(p);
			return NULL;
		}
		terms[n] = t;
		ops[n] = (int)oppos;
		n++;
		if (!is_kw(p, kw))
			break;
		oppos = p->cur.start;
		advance(p);
		t = is_or ? parse_chain(p, 0) : parse_not(p);
		if (t == NULL)
			return NULL;
	}
	return balance(p, is_or ? SQL_E_OR : SQL_E_AND, terms, ops, 0, n - 1);
}

static struct sql_expr *parse_or(struct parser *p)
{
	return parse_chain(p, 1);
}

/* A value where only a constant may stand (VALUES): after folding it is a
 * literal unless it reads a column. */
static struct sql_expr *parse_constant(struct parser *p, const char *what)
{
	struct sql_expr *e = parse_or(p);
	const struct sql_expr *c;

	if (e == NULL || need_value(p, e, what) != 0)
		return NULL;
	if (e->kind != SQL_E_LIT) {
		c = first_col(e);
		fail(p, c != NULL ? (size_t)c->pos : (size_t)e->pos, "column \"%s\" does not exist",
		     c != NULL ? c->col : "?");
		return NULL;
	}
	return e;
}

static struct sql_expr *parse_where(struct parser *p)
{
	struct sql_expr *e = parse_or(p);

	if (e == NULL || need_bool(p, e, "WHERE") != 0)
		return NULL;
	return e;
}

/* ---- statements ------------------------------------------------------------- */

struct name_pos {
	char name[SQL_NAME_MAX + 1];
	int pos;
};

/* '(' name [ASC|DESC] {, ...} ')' into arena arrays (order words only when
 * with_order). */
static int parse_name_list(struct parser *p, int with_order, char (**names)[SQL_NAME_MAX + 1],
			   int **pos, size_t *count)
{
	struct name_pos *l = NULL;
	size_t n = 0, cap = 0, i;

	if (expect_op(p, '(') != 0)
		return -1;
	do {
		l = arena_grow(p->ar, l, n, &cap, sizeof(*l));
		if (l == NULL)
			return fail_nomem(p);
		if (take_name(p, l[n].name, &l[n].pos) != 0)
			return -1;
		n++;
		if (with_order && !accept_kw(p, "asc"))
			accept_kw(p, "desc");
	} while (accept_op(p, ','));
	if (expect_op(p, ')') != 0)
		return -1;
	*names = palloc(p, n * sizeof(**names));
	*pos = palloc(p, n * sizeof(**pos));
	if (*names == NULL || *pos == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		memcpy((*names)[i], l[i].name, sizeof(l[i].name));
		(*pos)[i] = l[i].pos;
	}
	*count = n;
	return 0;
}

static int name_ptr_cmp(const void *x, const void *y)
{
	const struct sql_coldef *a = *(const struct sql_coldef *const *)x;
	const struct sql_coldef *b = *(const struct sql_coldef *const *)y;
	int c = strcmp(a->name, b->name);

	return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

/* CREATE TABLE's own checks: distinct column names, one primary key. */
static int check_create(struct arena *ar, const struct sql_stmt *st, char *err, size_t errlen,
			int *errpos)
{
	const struct sql_coldef **v;
	const struct sql_coldef *dup = NULL;
	size_t i, npk = 0;

	for (i = 0; i < st->ncols; i++) {
		if (st->cols[i].primary_key && ++npk == 2) {
			*errpos = st->cols[i].pos;
			lwc_errf(err, errlen, "multiple primary keys for table \"%s\" are not allowed",
				 st->table);
			return LWC_ERR_SCHEMA;
		}
	}
	if (st->ncols < 2)
		return LWC_OK;
	v = arena_alloc(ar, st->ncols * sizeof(*v));
	if (v == NULL) {
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	for (i = 0; i < st->ncols; i++)
		v[i] = &st->cols[i];
	qsort(v, st->ncols, sizeof(*v), name_ptr_cmp);
	/* of all repeated names, report the earliest repetition */
	for (i = 1; i < st->ncols; i++)
		if (strcmp(v[i - 1]->name, v[i]->name) == 0 && (dup == NULL || v[i]->pos < dup->pos))
			dup = v[i];
	if (dup != NULL) {
		*errpos = dup->pos;
		lwc_errf(err, errlen, "column \"%s\" specified more than once", dup->name);
		return LWC_ERR_SCHEMA;
	}
	return LWC_OK;
}

/* A column type: INT INTEGER INT4 SMALLINT | BIGINT INT8 | FLOAT FLOAT8
 * REAL DOUBLE PRECISION | TEXT [(n)] | VARCHAR [(n)] | CHARACTER VARYING
 * [(n)]. */
static int parse_type(struct parser *p, struct sql_coldef *c)
{
	size_t pos = p->cur.start;
	int has_len = 0;
	char q[160];

	if (p->cur.kind != TK_IDENT || is_reserved(p, &p->cur))
		return syntax_error(p);
	if (accept_kw(p, "int") || accept_kw(p, "integer") || accept_kw(p, "int4") ||
	    accept_kw(p, "smallint")) {
		c->type = SQL_CT_INT;
	} else if (accept_kw(p, "bigint") || accept_kw(p, "int8")) {
		c->type = SQL_CT_BIGINT;
	} else if (accept_kw(p, "float") || accept_kw(p, "float8") || accept_kw(p, "real")) {
		c->type = SQL_CT_FLOAT;
	} else if (accept_kw(p, "double")) {
		if (expect_kw(p, "precision") != 0)
			return -1;
		c->type = SQL_CT_FLOAT;
	} else if (accept_kw(p, "text")) {
		c->type = SQL_CT_TEXT;
		has_len = 1;
	} else if (accept_kw(p, "varchar")) {
		c->type = SQL_CT_TEXT;
		has_len = 1;
	} else if (accept_kw(p, "character")) {
		if (expect_kw(p, "varying") != 0)
			return -1;
		c->type = SQL_CT_TEXT;
		has_len = 1;
	} else {
		size_t i;

		quote_text(q, sizeof(q), p->sql + pos, p->cur.end - pos, 40);
		for (i = 0; q[i] != '\0'; i++)
			q[i] = (char)ascii_lower((unsigned char)q[i]);
		return fail(p, pos, "type \"%s\" does not exist", q);
	}
	if (has_len && accept_op(p, '(')) {
		struct tok t = p->cur;
		uint64_t v = 0;
		size_t i;

		if (t.kind != TK_INT)
			return syntax_error(p);
		for (i = t.start; i < t.end && v <= 10485760; i++)
			v = v * 10 + (uint64_t)(p->sql[i] - '0');
		if (v < 1)
			return fail(p, t.start, "length for type varchar must be at least 1");
		if (v > 10485760)
			return fail(p, t.start, "length for type varchar cannot exceed 10485760");
		c->max_len = (uint32_t)v;
		advance(p);
		if (expect_op(p, ')') != 0)
			return -1;
	}
	return 0;
}

struct table_constraint {
	int primary;              /* PRIMARY KEY, else UNIQUE                  */
	int kwpos;                /* offset of PRIMARY / UNIQUE                */
	char (*cols)[SQL_NAME_MAX + 1];
	int *pos;
	size_t ncols;
};

static int parse_create_table(struct parser *p, struct sql_stmt *st)
{
	struct table_constraint *tc = NULL;
	size_t ntc = 0, tccap = 0, colcap = 0, i, j;
	int npk = 0, pk2 = -1;

	st->kind = SQL_CREATE_TABLE;
	if (accept_kw(p, "if")) {
		if (expect_kw(p, "not") != 0 || expect_kw(p, "exists") != 0)
			return -1;
		st->if_not_exists = 1;
	}
	if (take_name(p, st->table, &st->table_pos) != 0 || expect_op(p, '(') != 0)
		return -1;
	do {
		int kwpos = (int)p->cur.start;

		if (is_kw(p, "primary") || is_kw(p, "unique")) {
			struct table_constraint *c;

			tc = arena_grow(p->ar, tc, ntc, &tccap, sizeof(*tc));
			if (tc == NULL)
				return fail_nomem(p);
			c = &tc[ntc++];
			c->kwpos = kwpos;
			c->primary = accept_kw(p, "primary");
			if (c->primary ? expect_kw(p, "key") != 0 : expect_kw(p, "unique") != 0)
				return -1;
			if (parse_name_list(p, 0, &c->cols, &c->pos, &c->ncols) != 0)
				return -1;
			if (c->ncols > 1)
				return fail(p, (size_t)c->pos[1], "multi-column %s constraints are not supported",
					    c->primary ? "PRIMARY KEY" : "UNIQUE");
			if (c->primary && ++npk == 2)
				pk2 = kwpos;
			continue;
		}
		{
			struct sql_coldef *c;
			int explicit_null = 0;

			st->cols = arena_grow(p->ar, st->cols, st->ncols, &colcap, sizeof(*st->cols));
			if (st->cols == NULL)
				return fail_nomem(p);
			c = &st->cols[st->ncols++];
			memset(c, 0, sizeof(*c));
			if (take_name(p, c->name, &c->pos) != 0 || parse_type(p, c) != 0)
				return -1;
			for (;;) {
				int cpos = (int)p->cur.start;

				if (accept_kw(p, "primary")) {
					if (expect_kw(p, "key") != 0)
						return -1;
					c->primary_key = c->not_null = 1;
					if (++npk == 2)
						pk2 = cpos;
				} else if (accept_kw(p, "not")) {
					if (expect_kw(p, "null") != 0)
						return -1;
					c->not_null = 1;
				} else if (accept_kw(p, "null")) {
					explicit_null = 1;
				} else if (accept_kw(p, "unique")) {
					c->unique = 1;
				} else {
					break;
				}
				if (explicit_null && c->not_null)
					return fail(p, (size_t)cpos, "conflicting NULL/NOT NULL declarations "
						    "for column \"%s\" of table \"%s\"", c->name, st->table);
			}
		}
	} while (accept_op(p, ','));
	if (expect_op(p, ')') != 0)
		return -1;
	if (st->ncols == 0)
		return fail(p, (size_t)st->table_pos, "table \"%s\" has no columns", st->table);
	if (npk > 1)
		return fail(p, (size_t)pk2, "multiple primary keys for table \"%s\" are not allowed",
			    st->table);
	for (i = 0; i < ntc; i++) {
		for (j = 0; j < st->ncols; j++)
			if (strcmp(st->cols[j].name, tc[i].cols[0]) == 0)
				break;
		if (j == st->ncols)
			return fail(p, (size_t)tc[i].pos[0], "column \"%s\" named in key does not exist",
				    tc[i].cols[0]);
		if (tc[i].primary)
			st->cols[j].primary_key = st->cols[j].not_null = 1;
		else
			st->cols[j].unique = 1;
	}
	{
		int epos = -1, rc = check_create(p->ar, st, p->err, p->errlen, &epos);

		if (rc != LWC_OK) {
			if (rc == LWC_ERR_NOMEM)
				return fail_nomem(p);
			p->rc = LWC_ERR_ARG;
			p->errpos = epos;
			return -1;
		}
	}
	return 0;
}

/* CREATE [UNIQUE] INDEX [IF NOT EXISTS] [name] ON table (col [ASC|DESC], ...) */
static int parse_create_index(struct parser *p, struct sql_stmt *st)
{
	size_t i;

	st->kind = SQL_CREATE_INDEX;
	if (accept_kw(p, "if")) {
		if (expect_kw(p, "not") != 0 || expect_kw(p, "exists") != 0)
			return -1;
		st->if_not_exists = 1;
		if (take_name(p, st->index, NULL) != 0)
			return -1;
	} else if (!is_kw(p, "on") && take_name(p, st->index, NULL) != 0) {
		return -1;
	}
	if (expect_kw(p, "on") != 0 || take_name(p, st->table, &st->table_pos) != 0)
		return -1;
	if (parse_name_list(p, 1, &st->index_cols, &st->index_col_pos, &st->nindex_cols) != 0)
		return -1;
	st->index_col_index = palloc(p, st->nindex_cols * sizeof(*st->index_col_index));
	if (st->index_col_index == NULL)
		return -1;
	for (i = 0; i < st->nindex_cols; i++)
		st->index_col_index[i] = -1;
	return 0;
}

static int parse_insert(struct parser *p, struct sql_stmt *st)
{
	size_t rowcap = 0, cap = 0;

	st->kind = SQL_INSERT;
	if (expect_kw(p, "into") != 0 || take_name(p, st->table, &st->table_pos) != 0)
		return -1;
	if (is_op(p, '(') &&
	    parse_name_list(p, 0, &st->insert_cols, &st->insert_col_pos, &st->ninsert_cols) != 0)
		return -1;
	if (accept_kw(p, "select")) {
		if (expect_op(p, '*') != 0 || expect_kw(p, "from") != 0)
			return -1;
		return take_name(p, st->src, &st->src_pos);
	}
	if (expect_kw(p, "values") != 0)
		return -1;
	do {
		size_t rowpos = p->cur.start, k = 0;
		struct sql_expr **row = NULL, *v;

		if (expect_op(p, '(') != 0)
			return -1;
		if (st->nrows > 0 && (row = palloc(p, st->rowlen * sizeof(*row))) == NULL)
			return -1;
		do {
			if ((v = parse_constant(p, "VALUES")) == NULL)
				return -1;
			if (st->nrows == 0) {
				row = arena_grow(p->ar, row, k, &cap, sizeof(*row));
				if (row == NULL)
					return fail_nomem(p);
			} else if (k == st->rowlen) {
				return fail(p, rowpos, "VALUES lists must all be the same length");
			}
			row[k++] = v;
		} while (accept_op(p, ','));
		if (expect_op(p, ')') != 0)
			return -1;
		if (st->nrows == 0)
			st->rowlen = k;
		else if (k != st->rowlen)
			return fail(p, rowpos, "VALUES lists must all be the same length");
		st->rows = arena_grow(p->ar, st->rows, st->nrows, &rowcap, sizeof(*st->rows));
		if (st->rows == NULL)
			return fail_nomem(p);
		st->rows[st->nrows++] = row;
	} while (accept_op(p, ','));
	return 0;
}

static int parse_select(struct parser *p, struct sql_stmt *st)
{
	struct name_pos *l = NULL;
	size_t n = 0, cap = 0, i;
	struct tok next;

	st->kind = SQL_SELECT;
	peek(p, &next);
	if (accept_op(p, '*')) {
		st->star = 1;
	} else if (is_kw(p, "count") && next.kind == TK_OP && next.op == '(') {
		advance(p);
		advance(p);
		if (expect_op(p, '*') != 0 || expect_op(p, ')') != 0)
			return -1;
		st->count_star = 1;
	} else {
		do {
			l = arena_grow(p->ar, l, n, &cap, sizeof(*l));
			if (l == NULL)
				return fail_nomem(p);
			if (take_name(p, l[n].name, &l[n].pos) != 0)
				return -1;
			n++;
		} while (accept_op(p, ','));
		st->proj = palloc(p, n * sizeof(*st->proj));
		st->proj_index = palloc(p, n * sizeof(*st->proj_index));
		st->proj_pos = palloc(p, n * sizeof(*st->proj_pos));
		if (st->proj == NULL || st->proj_index == NULL || st->proj_pos == NULL)
			return -1;
		for (i = 0; i < n; i++) {
			memcpy(st->proj[i], l[i].name, sizeof(l[i].name));
			st->proj_pos[i] = l[i].pos;
			st->proj_index[i] = -1;
		}
		st->nproj = n;
	}
	if (expect_kw(p, "from") != 0 || take_name(p, st->table, &st->table_pos) != 0)
		return -1;
	if (accept_kw(p, "where") && (st->where = parse_where(p)) == NULL)
		return -1;
	if (accept_kw(p, "order")) {
		cap = 0;
		if (expect_kw(p, "by") != 0)
			return -1;
		do {
			struct sql_order *o;

			st->order = arena_grow(p->ar, st->order, st->norder, &cap, sizeof(*st->order));
			if (st->order == NULL)
				return fail_nomem(p);
			o = &st->order[st->norder++];
			memset(o, 0, sizeof(*o));
			o->col_index = -1;
			if (take_name(p, o->col, &o->pos) != 0)
				return -1;
			if (st->count_star)
				return fail(p, (size_t)o->pos, "column \"%s\" must appear in the GROUP BY "
					    "clause or be used in an aggregate function", o->col);
			if (accept_kw(p, "desc"))
				o->desc = 1;
			else
				accept_kw(p, "asc");
		} while (accept_op(p, ','));
	}
	if (accept_kw(p, "limit")) {
		size_t pos = p->cur.start;
		struct sql_expr *e;

		if (accept_kw(p, "all"))
			return 0;
		e = parse_or(p);
		if (e == NULL || need_value(p, e, "LIMIT") != 0)
			return -1;
		if (e->kind != SQL_E_LIT)
			return fail(p, pos, "argument of LIMIT must not contain variables");
		switch (e->lit.type) {
		case SQL_NULL:
			break;
		case SQL_INT:
			if (e->lit.i < 0)
				return fail(p, pos, "LIMIT must not be negative");
			st->limit = e->lit.i;
			break;
		default:
			return fail(p, pos, "argument of LIMIT must be type bigint, not type %s",
				    vtype_name(e->lit.type));
		}
	}
	return 0;
}

static int parse_update(struct parser *p, struct sql_stmt *st)
{
	size_t cap = 0;

	st->kind = SQL_UPDATE;
	if (take_name(p, st->table, &st->table_pos) != 0 || expect_kw(p, "set") != 0)
		return -1;
	do {
		struct sql_set *s;

		st->sets = arena_grow(p->ar, st->sets, st->nsets, &cap, sizeof(*st->sets));
		if (st->sets == NULL)
			return fail_nomem(p);
		s = &st->sets[st->nsets++];
		memset(s, 0, sizeof(*s));
		s->col_index = -1;
		if (take_name(p, s->col, &s->pos) != 0 || expect_op(p, '=') != 0)
			return -1;
		s->value = parse_or(p);
		if (s->value == NULL || need_value(p, s->value, "SET") != 0)
			return -1;
	} while (accept_op(p, ','));
	if (accept_kw(p, "where") && (st->where = parse_where(p)) == NULL)
		return -1;
	return 0;
}

static int parse_statement(struct parser *p, struct sql_stmt *st)
{
	if (accept_kw(p, "create")) {
		if (accept_kw(p, "table"))
			return parse_create_table(p, st);
		if (accept_kw(p, "unique")) {
			st->unique = 1;
			if (expect_kw(p, "index") != 0)
				return -1;
			return parse_create_index(p, st);
		}
		if (accept_kw(p, "index"))
			return parse_create_index(p, st);
		return syntax_error(p);
	}
	if (accept_kw(p, "drop")) {
		st->kind = SQL_DROP_TABLE;
		if (expect_kw(p, "table") != 0)
			return -1;
		if (accept_kw(p, "if")) {
			if (expect_kw(p, "exists") != 0)
				return -1;
			st->if_exists = 1;
		}
		return take_name(p, st->table, &st->table_pos);
	}
	if (accept_kw(p, "insert"))
		return parse_insert(p, st);
	if (accept_kw(p, "select"))
		return parse_select(p, st);
	if (accept_kw(p, "update"))
		return parse_update(p, st);
	if (accept_kw(p, "delete")) {
		st->kind = SQL_DELETE;
		if (expect_kw(p, "from") != 0 || take_name(p, st->table, &st->table_pos) != 0)
			return -1;
		if (accept_kw(p, "where") && (st->where = parse_where(p)) == NULL)
			return -1;
		return 0;
	}
	return syntax_error(p);
}

int sql_parse(const char *sql, size_t len, struct sql_stmt **out,
	      char *err, size_t errlen, int *errpos)
{
	struct parser p;
	struct sql_stmt *st;
	int semi = 0;

	*out = NULL;
	if (errpos != NULL)
		*errpos = -1;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (sql == NULL && len > 0) {
		lwc_errf(err, errlen, "no SQL text");
		return LWC_ERR_ARG;
	}
	if (len >= INT_MAX) {
		lwc_errf(err, errlen, "statement too long");
		return LWC_ERR_ARG;
	}
	if (sql_is_blank(sql, len)) {
		lwc_errf(err, errlen, "empty statement");
		if (errpos != NULL)
			*errpos = 0;
		return LWC_ERR_ARG;
	}
	memset(&p, 0, sizeof(p));
	p.sql = sql;
	p.len = len;
	p.err = err;
	p.errlen = errlen;
	p.errpos = -1;
	p.rc = LWC_OK;
	p.ar = arena_new();
	if (p.ar == NULL) {
		lwc_errf(err, errlen, "out of memory");
		return LWC_ERR_NOMEM;
	}
	st = palloc(&p, sizeof(*st));
	if (st != NULL) {
		st->arena = p.ar;
		st->limit = -1;
		advance(&p);
		if (parse_statement(&p, st) == 0) {
			while (accept_op(&p, ';'))
				semi = 1;
			if (p.cur.kind != TK_EOF)
				fail_near(&p, &p.cur, semi ? "only one statement is allowed: more text"
					  : "syntax error");
		}
	}
	if (p.rc != LWC_OK) {
		arena_destroy(p.ar);
		if (errpos != NULL)
			*errpos = p.errpos;
		return p.rc;
	}
	*out = st;
	return LWC_OK;
}

void sql_free(struct sql_stmt *st)
{
	if (st != NULL)
		arena_destroy(st->arena);
}

size_t sql_next_statement(const char *text, size_t len)
{
	size_t i = 0, j;

	while (i < len) {
		char c = text[i];

		if (c == '\'' || c == '"') {
			j = quoted_end(text, len, i, c);
			if (j == 0)
				return 0;
			i = j;
		} else if (c == '-' && i + 1 < len && text[i + 1] == '-') {
			while (i < len && text[i] != '\n' && text[i] != '\r')
				i++;
		} else if (c == ';') {
			return i + 1;
		} else {
			i++;
		}
	}
	return 0;
}

int sql_is_blank(const char *text, size_t len)
{
	size_t i = 0;

	if (text == NULL)
		return 1;
	for (;;) {
		i = skip_blank(text, len, i);
		if (i == len)
			return 1;
		if (text[i] != ';')
			return 0;
		i++;
	}
}

/* ---- binding ---------------------------------------------------------------- */

static int find_col(const struct sql_schema *sc, const char *name)
{
	size_t i;

	for (i = 0; i < sc->ncols; i++)
		if (strcmp(sc->cols[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Fill err; returns rc. */
__attribute__((format(printf, 4, 5)))
static int bind_fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int bind_expr(struct sql_expr *e, const struct sql_schema *sc, char *err, size_t errlen,
		     int *errpos)
{
	size_t i;
	int rc;

	if (e == NULL)
		return LWC_OK;
	if (e->kind == SQL_E_COL) {
		e->col_index = find_col(sc, e->col);
		if (e->col_index < 0) {
			*errpos = e->pos;
			return bind_fail(LWC_ERR_SCHEMA, err, errlen,
					 "column \"%s\" does not exist", e->col);
		}
		return LWC_OK;
	}
	if ((rc = bind_expr(e->a, sc, err, errlen, errpos)) != LWC_OK ||
	    (rc = bind_expr(e->b, sc, err, errlen, errpos)) != LWC_OK ||
	    (rc = bind_expr(e->c, sc, err, errlen, errpos)) != LWC_OK)
		return rc;
	for (i = 0; i < e->nlist; i++)
		if ((rc = bind_expr(e->list[i], sc, err, errlen, errpos)) != LWC_OK)
			return rc;
	return LWC_OK;
}

static int bind_insert(struct sql_stmt *st, const struct sql_schema *sc, char *err, size_t errlen,
		       int *errpos)
{
	struct arena *ar = st->arena;
	size_t n, i;
	int *map, *seen;

	if (st->ninsert_cols > 0) {
		seen = arena_alloc(ar, (sc->ncols ? sc->ncols : 1) * sizeof(*seen));
		map = arena_alloc(ar, st->ninsert_cols * sizeof(*map));
		if (seen == NULL || map == NULL)
			goto nomem;
		for (i = 0; i < st->ninsert_cols; i++) {
			int c = find_col(sc, st->insert_cols[i]);

			*errpos = st->insert_col_pos[i];
			if (c < 0)
				return bind_fail(LWC_ERR_SCHEMA, err, errlen,
						 "column \"%s\" of relation \"%s\" does not exist",
						 st->insert_cols[i], sc->name);
			if (seen[c]++)
				return bind_fail(LWC_ERR_SCHEMA, err, errlen,
						 "column \"%s\" specified more than once", st->insert_cols[i]);
			map[i] = c;
		}
		n = st->ninsert_cols;
	} else {
		n = st->src[0] != '\0' ? sc->ncols : st->rowlen;
		map = arena_alloc(ar, (n ? n : 1) * sizeof(*map));
		if (map == NULL)
			goto nomem;
		for (i = 0; i < n; i++)
			map[i] = (int)i;
	}
	if (st->src[0] == '\0') {
		size_t targets = st->ninsert_cols > 0 ? st->ninsert_cols : sc->ncols;

		if (st->rowlen > targets) {
			*errpos = st->rows[0][targets]->pos;
			return bind_fail(LWC_ERR_SCHEMA, err, errlen,
					 "INSERT has more expressions than target columns");
		}
		if (st->ninsert_cols > 0 && st->rowlen < st->ninsert_cols) {
			*errpos = st->insert_col_pos[st->rowlen];
			return bind_fail(LWC_ERR_SCHEMA, err, errlen,
					 "INSERT has more target columns than expressions");
		}
	}
	*errpos = -1;
	st->insert_map = map;
	st->ninsert_map = n;
	return LWC_OK;
nomem:
	*errpos = -1;
	return bind_fail(LWC_ERR_NOMEM, err, errlen, "out of memory");
}

/* Resolve SET columns and keep only the rightmost assignment of each. */
static int bind_update(struct sql_stmt *st, const struct sql_schema *sc, char *err, size_t errlen,
		       int *errpos)
{
	size_t i, k = 0;
	int *last, rc;

	last = arena_alloc(st->arena, (sc->ncols ? sc->ncols : 1) * sizeof(*last));
	if (last == NULL) {
		*errpos = -1;
		return bind_fail(LWC_ERR_NOMEM, err, errlen, "out of memory");
	}
	for (i = 0; i < st->nsets; i++) {
		struct sql_set *s = &st->sets[i];

		s->col_index = find_col(sc, s->col);
		if (s->col_index < 0) {
			*errpos = s->pos;
			return bind_fail(LWC_ERR_SCHEMA, err, errlen,
					 "column \"%s\" of relation \"%s\" does not exist", s->col, sc->name);
		}
		if ((rc = bind_expr(s->value, sc, err, errlen, errpos)) != LWC_OK)
			return rc;
		last[s->col_index] = (int)i + 1;
	}
	for (i = 0; i < st->nsets; i++)
		if (last[st->sets[i].col_index] == (int)i + 1)
			st->sets[k++] = st->sets[i];
	st->nsets = k;
	return LWC_OK;
}

int sql_bind(struct sql_stmt *st, const struct sql_schema *sc,
	     char *err, size_t errlen, int *errpos)
{
	int dummy, rc;
	size_t i;

	if (errpos == NULL)
		errpos = &dummy;
	*errpos = -1;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (st == NULL)
		return bind_fail(LWC_ERR_ARG, err, errlen, "no statement");
	if (st->kind == SQL_CREATE_TABLE) {
		rc = check_create(st->arena, st, err, errlen, errpos);
		return rc;
	}
	if (st->kind == SQL_DROP_TABLE)
		return LWC_OK;
	if (sc == NULL)
		return bind_fail(LWC_ERR_ARG, err, errlen, "no table definition to bind to");
	switch (st->kind) {
	case SQL_CREATE_INDEX:
		for (i = 0; i < st->nindex_cols; i++) {
			st->index_col_index[i] = find_col(sc, st->index_cols[i]);
			if (st->index_col_index[i] < 0) {
				*errpos = st->index_col_pos[i];
				return bind_fail(LWC_ERR_SCHEMA, err, errlen,
						 "column \"%s\" does not exist", st->index_cols[i]);
			}
		}
		return LWC_OK;
	case SQL_INSERT:
		return bind_insert(st, sc, err, errlen, errpos);
	case SQL_SELECT:
		for (i = 0; i < st->nproj; i++) {
			st->proj_index[i] = find_col(sc, st->proj[i]);
			if (st->proj_index[i] < 0) {
				*errpos = st->proj_pos[i];
				return bind_fail(LWC_ERR_SCHEMA, err, errlen,
						 "column \"%s\" does not exist", st->proj[i]);
			}
		}
		for (i = 0; i < st->norder; i++) {
			st->order[i].col_index = find_col(sc, st->order[i].col);
			if (st->order[i].col_index < 0) {
				*errpos = st->order[i].pos;
				return bind_fail(LWC_ERR_SCHEMA, err, errlen,
						 "column \"%s\" does not exist", st->order[i].col);
			}
		}
		return bind_expr(st->where, sc, err, errlen, errpos);
	case SQL_UPDATE:
		if ((rc = bind_update(st, sc, err, errlen, errpos)) != LWC_OK)
			return rc;
		return bind_expr(st->where, sc, err, errlen, errpos);
	case SQL_DELETE:
		return bind_expr(st->where, sc, err, errlen, errpos);
	default:
		return bind_fail(LWC_ERR_ARG, err, errlen, "unknown statement kind");
	}
}

/* ---- evaluation --------------------------------------------------------------- */

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
		return value_neg(&a, out, err, errlen);
	case SQL_E_ARITH:
		if ((rc = sql_eval_value(e->a, values, &a, err, errlen)) != LWC_OK ||
		    (rc = sql_eval_value(e->b, values, &b, err, errlen)) != LWC_OK)
			return rc;
		return value_arith(e->arith, &a, &b, out, err, errlen);
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
				 vtype_name(x->type), cmp_text[op], vtype_name(y->type));
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

/* Text to int64 as PostgreSQL's int8in: blanks, a sign, digits, blanks.
 * 0, -1 (syntax) or -2 (out of 64-bit range). */
static int parse_int_text(const char *s, size_t len, int64_t *out)
{
	size_t i = 0, start;
	uint64_t acc = 0;
	int neg = 0, over = 0;

	while (i < len && is_space((unsigned char)s[i]))
		i++;
	if (i < len && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	for (start = i; i < len && is_digit((unsigned char)s[i]); i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (acc > (UINT64_MAX - d) / 10)
			over = 1;
		else
			acc = acc * 10 + d;
	}
	if (i == start)
		return -1;
	while (i < len && is_space((unsigned char)s[i]))
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
		if (ascii_lower((unsigned char)s[i]) != (unsigned char)word[i])
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

	while (a < b && is_space((unsigned char)s[a]))
		a++;
	while (b > a && is_space((unsigned char)s[b - 1]))
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
	for (; i < b && is_digit((unsigned char)s[i]); i++)
		digits++;
	if (i < b && s[i] == '.')
		for (i++; i < b && is_digit((unsigned char)s[i]); i++)
			digits++;
	if (digits == 0)
		return -1;
	if (i < b && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < b && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i == b || !is_digit((unsigned char)s[i]))
			return -1;
		while (i < b && is_digit((unsigned char)s[i]))
			i++;
	}
	if (i != b)
		return -1;
	if (c_strtod(s + a, b - a, out, &erange) != 0)
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
			quote_text(q, sizeof(q), in->s, in->len, 200);
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
			quote_text(q, sizeof(q), in->s, in->len, 200);
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
		if (col->max_len > 0 && utf8_chars(out->s, out->len) > col->max_len) {
			/* PostgreSQL: excess characters that are all spaces are cut */
			size_t keep = out->len;
			while (keep > 0 && out->s[keep - 1] == ' ' &&
			       utf8_chars(out->s, keep) > col->max_len)
				keep--;
			if (utf8_chars(out->s, keep) <= col->max_len) {
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
		 vtype_name(in->type), col->name);
	return LWC_ERR_ARG;
range:
	memset(out, 0, sizeof(*out));
	lwc_errf(err, errlen, "%s out of range", tname);
	return LWC_ERR_ARG;
}
