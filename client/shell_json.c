/*
 * shell_json.c - `lwc --json-lines`, the machine protocol that
 * ../shared/conformance/run.py (and any program) drives the shell with:
 *
 *   in, one per line:  {"sql": "<one statement>"}
 *   out, one per line: {"columns": ["a", ...], "rows": [[1, 2.5, "x", null], ...]}
 *                      {"ok": true, "count": N}
 *                      {"err": "message"}
 *
 * Values are typed: INT as JSON integers, FLOAT as numbers that always read
 * back as floats (a fraction or an exponent; NaN and Infinity as Python's
 * json module writes them), TEXT as strings, NULL as null.  A failed
 * statement or a malformed request line gets an "err" answer and the
 * session goes on; a broken connection is re-established before the next
 * statement.
 *
 * The request parser is strict RFC 8259: the whole line is one object,
 * strings are valid UTF-8 with every escape including \uXXXX surrogate
 * pairs, and other members are parsed and ignored.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "shell.h"

#define JSON_MAX_DEPTH 64

struct jp {
	const char *start, *p, *end;
	char *err;
	size_t errlen;
};

static int jfail(struct jp *j, const char *what)
{
	if (j->err && j->errlen)
		snprintf(j->err, j->errlen, "%s at offset %zu", what, (size_t)(j->p - j->start));
	return -1;
}

static void jws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int hex4(struct jp *j, unsigned *out)
{
	unsigned v = 0;

	if (j->end - j->p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = j->p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	j->p += 4;
	*out = v;
	return 0;
}

static void put_utf8(struct sh_buf *b, unsigned c)
{
	char u[4];

	if (c < 0x80) {
		sh_buf_addc(b, (char)c);
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | (c >> 6));
		u[1] = (char)(0x80 | (c & 0x3f));
		sh_buf_add(b, u, 2);
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | (c >> 12));
		u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		sh_buf_add(b, u, 3);
	} else {
		u[0] = (char)(0xf0 | (c >> 18));
		u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		sh_buf_add(b, u, 4);
	}
}

/* A string at j->p (which is at its opening quote) into out (may be NULL). */
static int jstring(struct jp *j, struct sh_buf *out)
{
	struct sh_buf tmp = {0};
	struct sh_buf *b = out ? out : &tmp;

	if (j->p >= j->end || *j->p != '"')
		return jfail(j, "expected a string");
	j->p++;
	for (;;) {
		if (j->p >= j->end) {
			sh_buf_free(&tmp);
			return jfail(j, "unterminated string");
		}
		unsigned char c = (unsigned char)*j->p;
		if (c == '"') {
			j->p++;
			break;
		}
		if (c < 0x20) {
			sh_buf_free(&tmp);
			return jfail(j, "control character in a string");
		}
		if (c != '\\') {
			uint32_t cp;
			size_t n = sh_utf8(j->p, (size_t)(j->end - j->p), &cp);
			if (n == 0) {
				sh_buf_free(&tmp);
				return jfail(j, "invalid UTF-8 in a string");
			}
			sh_buf_add(b, j->p, n);
			j->p += n;
			continue;
		}
		j->p++;
		if (j->p >= j->end) {
			sh_buf_free(&tmp);
			return jfail(j, "unterminated escape");
		}
		char e = *j->p++;
		unsigned cp, lo;
		switch (e) {
		case '"': sh_buf_addc(b, '"'); break;
		case '\\': sh_buf_addc(b, '\\'); break;
		case '/': sh_buf_addc(b, '/'); break;
		case 'b': sh_buf_addc(b, '\b'); break;
		case 'f': sh_buf_addc(b, '\f'); break;
		case 'n': sh_buf_addc(b, '\n'); break;
		case 'r': sh_buf_addc(b, '\r'); break;
		case 't': sh_buf_addc(b, '\t'); break;
		case 'u':
			if (hex4(j, &cp) != 0) {
				sh_buf_free(&tmp);
				return jfail(j, "bad \\u escape");
			}
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				sh_buf_free(&tmp);
				return jfail(j, "lone low surrogate");
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u') {
					sh_buf_free(&tmp);
					return jfail(j, "lone high surrogate");
				}
				j->p += 2;
				if (hex4(j, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff) {
					sh_buf_free(&tmp);
					return jfail(j, "bad surrogate pair");
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			put_utf8(b, cp);
			break;
		default:
			sh_buf_free(&tmp);
			return jfail(j, "bad escape");
		}
	}
	sh_buf_free(&tmp);
	if (out && out->p == NULL)
		sh_buf_add(out, "", 0);     /* "" is a string, not a missing one */
	return 0;
}

static int jnumber(struct jp *j)
{
	const char *p = j->p;

	if (p < j->end && *p == '-')
		p++;
	if (p >= j->end || !isdigit((unsigned char)*p))
		return jfail(j, "bad number");
	if (*p == '0')
		p++;
	else
		while (p < j->end && isdigit((unsigned char)*p))
			p++;
	if (p < j->end && *p == '.') {
		p++;
		if (p >= j->end || !isdigit((unsigned char)*p))
			return jfail(j, "bad number");
		while (p < j->end && isdigit((unsigned char)*p))
			p++;
	}
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < j->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= j->end || !isdigit((unsigned char)*p))
			return jfail(j, "bad number");
		while (p < j->end && isdigit((unsigned char)*p))
			p++;
	}
	j->p = p;
	return 0;
}

static int jword(struct jp *j, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return jfail(j, "unexpected character");
	j->p += n;
	return 0;
}

/* Parse and drop any value. */
static int jskip(struct jp *j, int depth)
{
	if (depth > JSON_MAX_DEPTH)
		return jfail(j, "nested too deeply");
	jws(j);
	if (j->p >= j->end)
		return jfail(j, "expected a value");
	switch (*j->p) {
	case '"':
		return jstring(j, NULL);
	case 't':
		return jword(j, "true");
	case 'f':
		return jword(j, "false");
	case 'n':
		return jword(j, "null");
	case '[':
		j->p++;
		jws(j);
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			return 0;
		}
		for (;;) {
			if (jskip(j, depth + 1) != 0)
				return -1;
			jws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == ']') {
				j->p++;
				return 0;
			}
			return jfail(j, "expected ',' or ']'");
		}
	case '{':
		j->p++;
		jws(j);
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			return 0;
		}
		for (;;) {
			jws(j);
			if (jstring(j, NULL) != 0)
				return -1;
			jws(j);
			if (j->p >= j->end || *j->p != ':')
				return jfail(j, "expected ':'");
			j->p++;
			if (jskip(j, depth + 1) != 0)
				return -1;
			jws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == '}') {
				j->p++;
				return 0;
			}
			return jfail(j, "expected ',' or '}'");
		}
	default:
		return jnumber(j);
	}
}

int sh_json_request(const char *line, size_t len, char **sql, char *err, size_t errlen)
{
	struct jp j = { line, line, line + len, err, errlen };
	struct sh_buf key = {0}, val = {0};
	int have = 0;

	*sql = NULL;
	jws(&j);
	if (j.p >= j.end || *j.p != '{') {
		jfail(&j, "expected an object");
		goto fail;
	}
	j.p++;
	jws(&j);
	if (j.p < j.end && *j.p == '}') {
		j.p++;
	} else {
		for (;;) {
			jws(&j);
			sh_buf_reset(&key);
			if (jstring(&j, &key) != 0)
				goto fail;
			jws(&j);
			if (j.p >= j.end || *j.p != ':') {
				jfail(&j, "expected ':'");
				goto fail;
			}
			j.p++;
			jws(&j);
			if (key.len == 3 && memcmp(key.p, "sql", 3) == 0) {
				if (have) {
					jfail(&j, "duplicate \"sql\"");
					goto fail;
				}
				if (j.p >= j.end || *j.p != '"') {
					jfail(&j, "\"sql\" must be a string");
					goto fail;
				}
				if (jstring(&j, &val) != 0)
					goto fail;
				have = 1;
			} else if (jskip(&j, 1) != 0) {
				goto fail;
			}
			jws(&j);
			if (j.p < j.end && *j.p == ',') {
				j.p++;
				continue;
			}
			if (j.p < j.end && *j.p == '}') {
				j.p++;
				break;
			}
			jfail(&j, "expected ',' or '}'");
			goto fail;
		}
	}
	jws(&j);
	if (j.p != j.end) {
		jfail(&j, "trailing characters after the object");
		goto fail;
	}
	if (!have) {
		jfail(&j, "no \"sql\" member");
		goto fail;
	}
	if (memchr(val.p, '\0', val.len) != NULL) {
		jfail(&j, "NUL character in \"sql\"");
		goto fail;
	}
	sh_buf_free(&key);
	*sql = val.p;
	return 0;
fail:
	sh_buf_free(&key);
	sh_buf_free(&val);
	return -1;
}

/* ---- output ------------------------------------------------------------------------- */

void sh_json_string(struct sh_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	sh_buf_addc(b, '"');
	while (i < n) {
		unsigned char c = u[i];
		if (c == '"' || c == '\\') {
			sh_buf_addc(b, '\\');
			sh_buf_addc(b, (char)c);
			i++;
		} else if (c < 0x20) {
			switch (c) {
			case '\n': sh_buf_adds(b, "\\n"); break;
			case '\r': sh_buf_adds(b, "\\r"); break;
			case '\t': sh_buf_adds(b, "\\t"); break;
			case '\b': sh_buf_adds(b, "\\b"); break;
			case '\f': sh_buf_adds(b, "\\f"); break;
			default: sh_buf_printf(b, "\\u%04x", c); break;
			}
			i++;
		} else if (c < 0x80) {
			sh_buf_addc(b, (char)c);
			i++;
		} else {
			uint32_t cp;
			size_t k = sh_utf8(s + i, n - i, &cp);
			if (k == 0) {
				sh_buf_adds(b, "\\ufffd");
				i++;
			} else {
				sh_buf_add(b, s + i, k);
				i += k;
			}
		}
	}
	sh_buf_addc(b, '"');
}

/* A FLOAT in liblwc's text form (the shortest that reads back the same),
 * with ".0" when it has neither fraction nor exponent so that it reads back
 * as a float; NaN and Infinity as Python's json module writes them. */
static void json_float(struct sh_buf *b, const char *text)
{
	sh_buf_adds(b, text);
	if (strpbrk(text, ".eEnN") == NULL)
		sh_buf_adds(b, ".0");
}

static void json_err(struct sh_buf *b, const char *msg)
{
	sh_buf_adds(b, "{\"err\":");
	sh_json_string(b, msg, strlen(msg));
	sh_buf_addc(b, '}');
}

static void json_exec(struct sh *s, const char *sql, struct sh_buf *b)
{
	char err[512];
	int rc;

	if (s->conn == NULL || !lwc_conn_ok(s->conn)) {
		if (s->conn) {
			lwc_close(s->conn);
			s->conn = NULL;
		}
		if (lwc_connect(&s->conn, s->key_file, s->proxy, err, sizeof(err)) != LWC_OK) {
			char msg[600];
			s->conn = NULL;
			snprintf(msg, sizeof(msg), "not connected: %s", err);
			json_err(b, msg);
			return;
		}
	}
	lwc_result *r = lwc_exec(s->conn, sql);
	switch (lwc_result_status(r)) {
	case LWC_RESULT_ROWS: {
		int nc = lwc_result_ncols(r);
		uint64_t n = 0;

		sh_buf_adds(b, "{\"columns\":[");
		for (int c = 0; c < nc; c++) {
			const char *name = lwc_result_colname(r, c);
			if (c)
				sh_buf_addc(b, ',');
			sh_json_string(b, name, strlen(name));
		}
		sh_buf_adds(b, "],\"rows\":[");
		while ((rc = lwc_result_next(r)) == 1) {
			sh_buf_adds(b, n++ ? ",[" : "[");
			for (int c = 0; c < nc; c++) {
				size_t len;
				const char *t;
				if (c)
					sh_buf_addc(b, ',');
				switch (lwc_value_is_null(r, c) ? LWC_TYPE_NULL : lwc_value_type(r, c)) {
				case LWC_TYPE_INT:
					sh_buf_printf(b, "%lld", (long long)lwc_value_int(r, c));
					break;
				case LWC_TYPE_FLOAT:
					json_float(b, lwc_value_text(r, c, NULL));
					break;
				case LWC_TYPE_TEXT:
					t = lwc_value_text(r, c, &len);
					sh_json_string(b, t, len);
					break;
				default:
					sh_buf_adds(b, "null");
					break;
				}
			}
			sh_buf_addc(b, ']');
		}
		if (rc < 0) {
			sh_buf_reset(b);
			json_err(b, lwc_result_status(r) == LWC_RESULT_ERROR ? lwc_result_error(r)
									     : lwc_strerror(rc));
			break;
		}
		sh_buf_adds(b, "]}");
		break;
	}
	case LWC_RESULT_COMMAND:
		sh_buf_printf(b, "{\"ok\":true,\"count\":%llu}",
			      (unsigned long long)lwc_result_count(r));
		break;
	default:
		json_err(b, lwc_result_error(r));
		break;
	}
	lwc_result_free(r);
}

int sh_json_lines(struct sh *s, FILE *in, FILE *out)
{
	char *line = NULL, *sql, err[160];
	size_t cap = 0;
	ssize_t n;
	struct sh_buf b = {0};

	while ((n = getline(&line, &cap, in)) >= 0) {
		size_t len = (size_t)n;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		size_t i = 0;
		while (i < len && isspace((unsigned char)line[i]))
			i++;
		if (i == len)
			continue;        /* a blank line is not a request */
		sh_buf_reset(&b);
		if (sh_json_request(line, len, &sql, err, sizeof(err)) != 0) {
			char msg[200];
			snprintf(msg, sizeof(msg), "invalid request: %s", err);
			json_err(&b, msg);
		} else {
			json_exec(s, sql, &b);
			free(sql);
		}
		sh_buf_addc(&b, '\n');
		if (fwrite(b.p, 1, b.len, out) != b.len || fflush(out) != 0)
			break;       /* the reader went away */
	}
	free(line);
	sh_buf_free(&b);
	return SH_EXIT_OK;
}
