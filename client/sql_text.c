/*
 * sql_text.c - text helpers of the SQL module: UTF-8 checks, quoting input
 * for messages, strtod under the C locale (so a program that called
 * setlocale() with a decimal comma still reads 4.67 as 4.67), and splitting
 * a script into statements for the shell.
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

/* ---- small helpers --------------------------------------------------------- */

int sql_is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

int sql_is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

unsigned char sql_ascii_lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 'a' - 'A') : c;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when it is not one
 * (overlong forms, surrogates, above U+10FFFF, truncated). */
size_t sql_utf8_seq(const unsigned char *s, size_t n)
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
size_t sql_utf8_check(const unsigned char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if (s[i] == 0)
			return i;
		k = sql_utf8_seq(s + i, n - i);
		if (k == 0)
			return i;
		i += k;
	}
	return n;
}

/* Printable form of s[0..n) for a message: valid UTF-8 kept, control and
 * invalid bytes as \xNN, cut after max bytes of input with "...". */
void sql_quote_text(char *out, size_t outlen, const char *src, size_t n, size_t max)
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
		k = sql_utf8_seq(s + i, n - i);
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
int sql_c_strtod(const char *s, size_t n, double *out, int *erange)
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
size_t sql_utf8_chars(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

/* ---- values ---------------------------------------------------------------- */

/* End of a quoted string or identifier starting at i (the quote), or 0
 * when it is not closed; q is the quote character, doubled to escape it. */
size_t sql_quoted_end(const char *s, size_t n, size_t i, char q)
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
size_t sql_skip_blank(const char *s, size_t n, size_t i)
{
	for (;;) {
		while (i < n && sql_is_space((unsigned char)s[i]))
			i++;
		if (i + 1 < n && s[i] == '-' && s[i + 1] == '-') {
			while (i < n && s[i] != '\n' && s[i] != '\r')
				i++;
			continue;
		}
		return i;
	}
}

/* ---- scripts ---------------------------------------------------------------- */

size_t sql_next_statement(const char *text, size_t len)
{
	size_t i = 0, j;

	while (i < len) {
		char c = text[i];

		if (c == '\'' || c == '"') {
			j = sql_quoted_end(text, len, i, c);
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
		i = sql_skip_blank(text, len, i);
		if (i == len)
			return 1;
		if (text[i] != ';')
			return 0;
		i++;
	}
}

