/*
 * shell_copy.c - \copy of the `lwc` shell: client-side files in and out, as
 * psql's \copy (the proxy has no COPY: data is read and written here).
 *
 *   \copy TABLE [(COL, ...)] FROM 'FILE' | STDIN [options]
 *   \copy TABLE [(COL, ...)] | (SELECT ...) TO 'FILE' | STDOUT [options]
 *   options: CSV, HEADER, DELIMITER 'c', NULL 'str', or
 *            [WITH] (FORMAT csv|text, HEADER [bool], DELIMITER 'c', NULL 'str')
 *
 * Formats as PostgreSQL's COPY: text (the default) separates fields with a
 * tab, writes NULL as \N and escapes backslash, tab, CR and LF; CSV follows
 * RFC 4180 with NULL an unquoted empty field and the empty string "".
 *
 * FROM turns rows into INSERT statements of SH_COPY_BATCH rows (or about
 * SH_COPY_BATCH_BYTES of SQL, or SH_COPY_BATCH_VALUES values, or what one
 * request to the proxy carries: lwc_insert_max_rows; $LWC_COPY_ROWS for
 * fewer) with every value as a properly quoted literal:
 * numbers for INT and FLOAT columns when the field is a number, else a
 * string literal that the column type's own conversion judges.  Each batch
 * is one statement, so a failure leaves the batches before it loaded: the
 * error says which lines failed and how many rows were loaded.  Each batch
 * is read, converted and sealed while the one before it is at the proxy,
 * and sent before that one's answer, to run only if that one succeeds
 * (lwc_insert_send), so the stop is where it would be without the overlap.
 * A progress bar goes to stderr when stderr is a terminal.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell.h"
#include "sql.h"

/* Large statements: the proxy writes the index pages a statement touches
 * once, so the bytes it writes per row fall with the statement's size (a
 * million-row load: 22 KB per row at 5,000 rows a statement, 1.9 KB at
 * 50,000, in half the time; docs/benchmarks.md).  The value count bounds
 * the parsed statement (about 300 bytes a value) to about 100 MB. */
#define SH_COPY_BATCH        50000
#define SH_COPY_BATCH_BYTES  (16u << 20)
#define SH_COPY_BATCH_VALUES 350000
#define SH_BAR_WIDTH         30

/* ---- the command line -------------------------------------------------------- */

struct copy_opts {
	int to;                  /* TO (export), else FROM (import)           */
	char *table;             /* as typed, for SQL; NULL with a query      */
	char *query;             /* TO: the (SELECT ...) text                 */
	char *cols;              /* "(a, b)" as typed, or NULL                */
	char **colnames;         /* folded column names of cols               */
	size_t ncolnames;
	char *file;              /* NULL: STDIN / STDOUT                      */
	int csv, header;
	char delim;
	char *null_str;          /* text: "\N"; CSV: ""                       */
};

static void opts_free(struct copy_opts *o)
{
	free(o->table);
	free(o->query);
	free(o->cols);
	for (size_t i = 0; i < o->ncolnames; i++)
		free(o->colnames[i]);
	free(o->colnames);
	free(o->file);
	free(o->null_str);
}

static void skip_ws(const char **p)
{
	while (isspace((unsigned char)**p))
		(*p)++;
}

/* A word (letters, digits, _ . and other non-special bytes), a '...'
 * string (quoted=1, '' unescaped) or a "..." identifier (kept with its
 * quotes).  NULL at the end. */
static char *token(const char **pp, int *quoted)
{
	const char *p = *pp;
	struct sh_buf b = {0};

	*quoted = 0;
	skip_ws(&p);
	if (*p == '\0') {
		*pp = p;
		return NULL;
	}
	if (*p == '\'') {
		*quoted = 1;
		for (p++; *p; p++) {
			if (*p == '\'') {
				if (p[1] == '\'') {
					sh_buf_addc(&b, '\'');
					p++;
					continue;
				}
				p++;
				break;
			}
			sh_buf_addc(&b, *p);
		}
	} else if (*p == '"') {
		sh_buf_addc(&b, *p++);
		for (; *p; p++) {
			sh_buf_addc(&b, *p);
			if (*p == '"') {
				if (p[1] == '"') {
					sh_buf_addc(&b, *++p);
					continue;
				}
				p++;
				break;
			}
		}
	} else if (strchr("(),", *p)) {
		sh_buf_addc(&b, *p++);
	} else {
		while (*p && !isspace((unsigned char)*p) && !strchr("(),'", *p))
			sh_buf_addc(&b, *p++);
	}
	*pp = p;
	return b.p ? b.p : sh_strdup("");
}

/* The text between a '(' at *pp and its matching ')' (quotes respected). */
static char *paren_text(const char **pp)
{
	const char *p = *pp + 1, *start = p;
	int depth = 1;
	char q = 0;

	for (; *p; p++) {
		if (q) {
			if (*p == q)
				q = 0;
		} else if (*p == '\'' || *p == '"') {
			q = *p;
		} else if (*p == '(') {
			depth++;
		} else if (*p == ')' && --depth == 0) {
			*pp = p + 1;
			return sh_strndup(start, (size_t)(p - start));
		}
	}
	return NULL;
}

static int bool_word(const char *w)
{
	return !strcasecmp(w, "true") || !strcasecmp(w, "on") || !strcmp(w, "1");
}

static int parse_opts(struct sh *s, const char *args, struct copy_opts *o)
{
	const char *p = args;
	char *t = NULL;
	int q, have_null = 0;

	memset(o, 0, sizeof(*o));
	o->delim = 0;
	skip_ws(&p);
	if (*p == '(') {
		if ((o->query = paren_text(&p)) == NULL) {
			sh_error(s, NULL, -1, "\\copy: unterminated parenthesis");
			return -1;
		}
	} else {
		o->table = token(&p, &q);
		if (o->table == NULL || q || !strcmp(o->table, "(") || !strcmp(o->table, ",")) {
			sh_error(s, NULL, -1, "\\copy: arguments required");
			return -1;
		}
		skip_ws(&p);
		if (*p == '(') {
			const char *c0 = p;
			char *inner = paren_text(&p);
			if (inner == NULL) {
				sh_error(s, NULL, -1, "\\copy: unterminated column list");
				return -1;
			}
			o->cols = sh_strndup(c0, (size_t)(p - c0));
			const char *ip = inner;
			char *ct;
			while ((ct = token(&ip, &q)) != NULL) {
				if (strcmp(ct, ",") != 0) {
					o->colnames = sh_realloc(o->colnames,
								 sizeof(char *) * (o->ncolnames + 1));
					o->colnames[o->ncolnames++] = sh_ident_fold(ct);
				}
				free(ct);
			}
			free(inner);
		}
	}
	t = token(&p, &q);
	if (t && !q && !strcasecmp(t, "from")) {
		o->to = 0;
	} else if (t && !q && !strcasecmp(t, "to")) {
		o->to = 1;
	} else {
		sh_error(s, NULL, -1, "\\copy: parse error at \"%s\"", t ? t : "end of line");
		goto fail;
	}
	if (o->query && !o->to) {
		sh_error(s, NULL, -1, "\\copy: a query can only be copied TO a file");
		goto fail;
	}
	free(t);
	t = token(&p, &q);
	if (t == NULL) {
		sh_error(s, NULL, -1, "\\copy: parse error at end of line");
		goto fail;
	}
	if (!q && (!strcasecmp(t, "stdin") || !strcasecmp(t, "pstdin") ||
		   !strcasecmp(t, "stdout") || !strcasecmp(t, "pstdout"))) {
		int is_in = tolower((unsigned char)t[strlen(t) - 2]) == 'i';
		if (is_in == o->to) {
			sh_error(s, NULL, -1, "\\copy: %s with %s", o->to ? "TO" : "FROM", t);
			goto fail;
		}
		o->file = NULL;
	} else {
		o->file = t;
		t = NULL;
	}
	free(t);
	t = NULL;

	/* options, old style and the parenthesised list */
	int in_list = 0;
	while ((t = token(&p, &q)) != NULL) {
		if (!q && !strcasecmp(t, "with")) {
		} else if (!q && !strcmp(t, "(")) {
			in_list = 1;
		} else if (!q && !strcmp(t, ")")) {
			in_list = 0;
		} else if (!q && !strcmp(t, ",")) {
		} else if (!q && !strcasecmp(t, "csv")) {
			o->csv = 1;
		} else if (!q && !strcasecmp(t, "binary")) {
			sh_error(s, NULL, -1, "\\copy: BINARY format is not supported");
			goto fail;
		} else if (!q && !strcasecmp(t, "format")) {
			free(t);
			t = token(&p, &q);
			if (t && !strcasecmp(t, "csv"))
				o->csv = 1;
			else if (t && !strcasecmp(t, "text"))
				o->csv = 0;
			else {
				sh_error(s, NULL, -1, "\\copy: COPY format \"%s\" not recognized",
					 t ? t : "");
				goto fail;
			}
		} else if (!q && !strcasecmp(t, "header")) {
			o->header = 1;
			if (in_list) {
				const char *save = p;
				char *v = token(&p, &q);
				if (v && strcmp(v, ",") && strcmp(v, ")"))
					o->header = bool_word(v);
				else
					p = save;
				free(v);
			}
		} else if (!q && (!strcasecmp(t, "delimiter") || !strcasecmp(t, "null"))) {
			int is_null = !strcasecmp(t, "null");
			free(t);
			t = token(&p, &q);
			if (t && !q && !strcasecmp(t, "as")) {
				free(t);
				t = token(&p, &q);
			}
			if (t == NULL || !q) {
				sh_error(s, NULL, -1, "\\copy: %s needs a quoted string",
					 is_null ? "NULL" : "DELIMITER");
				goto fail;
			}
			if (is_null) {
				free(o->null_str);
				o->null_str = t;
				t = NULL;
				have_null = 1;
			} else {
				if (strlen(t) != 1 || t[0] == '\n' || t[0] == '\r' || t[0] == '"') {
					sh_error(s, NULL, -1,
						 "\\copy: the delimiter must be a single one-byte character");
					goto fail;
				}
				o->delim = t[0];
			}
		} else {
			sh_error(s, NULL, -1, "\\copy: option \"%s\" not recognized", t);
			goto fail;
		}
		free(t);
	}
	if (o->delim == 0)
		o->delim = o->csv ? ',' : '\t';
	if (!have_null)
		o->null_str = sh_strdup(o->csv ? "" : "\\N");
	return 0;
fail:
	free(t);
	return -1;
}

/* ---- reading records ---------------------------------------------------------- */

struct reader {
	FILE *fp;
	int csv;
	char delim;
	int stdin_data;          /* "\." ends the data                        */
	unsigned long line;      /* physical line of the record's end         */
	uint64_t bytes;          /* consumed, for the progress bar            */
	struct sh_buf rec;
	/* fields of the current record */
	char **f;
	size_t *flen;
	unsigned char *fquoted;
	size_t nf, capf;
};

static void reader_free(struct reader *rd)
{
	for (size_t i = 0; i < rd->capf; i++)
		free(rd->f[i]);
	free(rd->f);
	free(rd->flen);
	free(rd->fquoted);
	sh_buf_free(&rd->rec);
}

static struct sh_buf *field_new(struct reader *rd, struct sh_buf *b)
{
	(void)rd;
	sh_buf_reset(b);
	return b;
}

static void field_push(struct reader *rd, const struct sh_buf *b, int quoted)
{
	if (rd->nf == rd->capf) {
		size_t cap = rd->capf ? rd->capf * 2 : 16;
		rd->f = sh_realloc(rd->f, sizeof(char *) * cap);
		rd->flen = sh_realloc(rd->flen, sizeof(size_t) * cap);
		rd->fquoted = sh_realloc(rd->fquoted, cap);
		for (size_t i = rd->capf; i < cap; i++)
			rd->f[i] = NULL;
		rd->capf = cap;
	}
	free(rd->f[rd->nf]);
	rd->f[rd->nf] = sh_strndup(b->p ? b->p : "", b->len);
	rd->flen[rd->nf] = b->len;
	rd->fquoted[rd->nf] = (unsigned char)quoted;
	rd->nf++;
}

/* Split a CSV record; 0 when a quoted field is still open at the end. */
static int csv_split(struct reader *rd, const char *p, size_t n)
{
	struct sh_buf b = {0};
	size_t i = 0;

	rd->nf = 0;
	for (;;) {
		int quoted = 0;
		field_new(rd, &b);
		for (;;) {
			if (i >= n)
				break;
			char c = p[i];
			if (c == '"') {
				/* a quoted part: up to the closing quote, "" is a quote */
				quoted = 1;
				i++;
				for (;;) {
					if (i >= n) {
						sh_buf_free(&b);
						return 0;
					}
					if (p[i] == '"') {
						if (i + 1 < n && p[i + 1] == '"') {
							sh_buf_addc(&b, '"');
							i += 2;
							continue;
						}
						i++;
						break;
					}
					sh_buf_addc(&b, p[i++]);
				}
				continue;
			}
			if (c == rd->delim)
				break;
			sh_buf_addc(&b, c);
			i++;
		}
		field_push(rd, &b, quoted);
		if (i >= n)
			break;
		i++;    /* the delimiter */
	}
	sh_buf_free(&b);
	return 1;
}

/* Split a text-format line: delimiter-separated, backslash escapes; a field
 * that is exactly the NULL string is NULL (fquoted 2 marks it). */
static void text_split(struct reader *rd, const char *p, size_t n, const char *null_str)
{
	struct sh_buf b = {0};
	size_t i = 0, nl = strlen(null_str);

	rd->nf = 0;
	for (;;) {
		size_t start = i;
		field_new(rd, &b);
		while (i < n && p[i] != rd->delim) {
			char c = p[i++];
			if (c != '\\' || i >= n) {
				sh_buf_addc(&b, c);
				continue;
			}
			c = p[i++];
			switch (c) {
			case 'b': sh_buf_addc(&b, '\b'); break;
			case 'f': sh_buf_addc(&b, '\f'); break;
			case 'n': sh_buf_addc(&b, '\n'); break;
			case 'r': sh_buf_addc(&b, '\r'); break;
			case 't': sh_buf_addc(&b, '\t'); break;
			case 'v': sh_buf_addc(&b, '\v'); break;
			case 'x': {
				int v = 0, k = 0;
				while (k < 2 && i < n && isxdigit((unsigned char)p[i])) {
					char h = p[i++];
					v = v * 16 + (isdigit((unsigned char)h) ? h - '0' :
						      tolower((unsigned char)h) - 'a' + 10);
					k++;
				}
				if (k == 0)
					sh_buf_addc(&b, 'x');
				else
					sh_buf_addc(&b, (char)v);
				break;
			}
			default:
				if (c >= '0' && c <= '7') {
					int v = c - '0', k = 1;
					while (k < 3 && i < n && p[i] >= '0' && p[i] <= '7') {
						v = v * 8 + (p[i++] - '0');
						k++;
					}
					sh_buf_addc(&b, (char)v);
				} else {
					sh_buf_addc(&b, c);
				}
				break;
			}
		}
		int is_null = i - start == nl && memcmp(p + start, null_str, nl) == 0;
		field_push(rd, &b, is_null ? 2 : 0);
		if (i >= n)
			break;
		i++;
	}
	sh_buf_free(&b);
}

/* Read one physical line into rd->rec (appended); 0 at EOF. */
static int read_line(struct reader *rd, int append)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, rd->fp);

	if (n < 0) {
		free(line);
		return 0;
	}
	rd->bytes += (uint64_t)n;
	rd->line++;
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	if (append)
		sh_buf_addc(&rd->rec, '\n');
	else
		sh_buf_reset(&rd->rec);
	sh_buf_add(&rd->rec, line, (size_t)n);
	free(line);
	return 1;
}

/* The next record: 1, 0 at the end, -1 on an error (message in err). */
static int read_record(struct reader *rd, const char *null_str, char *err, size_t errlen)
{
	for (;;) {
		if (!read_line(rd, 0))
			return 0;
		if (rd->stdin_data && rd->rec.len == 2 && !memcmp(rd->rec.p, "\\.", 2))
			return 0;
		if (rd->rec.len == 0)
			continue;        /* blank lines hold no record */
		break;
	}
	if (memchr(rd->rec.p, '\0', rd->rec.len)) {
		snprintf(err, errlen, "invalid byte sequence: 0x00");
		return -1;
	}
	if (!rd->csv) {
		text_split(rd, rd->rec.p, rd->rec.len, null_str);
		return 1;
	}
	while (!csv_split(rd, rd->rec.p, rd->rec.len)) {
		if (!read_line(rd, 1)) {
			snprintf(err, errlen, "unterminated CSV quoted field");
			return -1;
		}
		if (memchr(rd->rec.p, '\0', rd->rec.len)) {
			snprintf(err, errlen, "invalid byte sequence: 0x00");
			return -1;
		}
	}
	/* CSV: an unquoted field equal to the NULL string is NULL */
	size_t nl = strlen(null_str);
	for (size_t i = 0; i < rd->nf; i++) {
		if (!rd->fquoted[i] && rd->flen[i] == nl && memcmp(rd->f[i], null_str, nl) == 0)
			rd->fquoted[i] = 2;
	}
	return 1;
}

/* ---- progress ----------------------------------------------------------------------- */

struct progress {
	int on;                  /* stderr is a terminal                      */
	uint64_t total;          /* file size, 0 when unknown                 */
	double t0, last;
	int width;               /* of the last line drawn                    */
	const char *what;
};

static void progress_draw(struct progress *pg, uint64_t bytes, uint64_t rows, int force)
{
	char line[200], bar[SH_BAR_WIDTH + 1];
	double now = sh_now_ms();
	int n;

	if (!pg->on || (!force && now - pg->last < 100.0))
		return;
	pg->last = now;
	double secs = (now - pg->t0) / 1000.0;
	double rate = secs > 0 ? (double)rows / secs : 0;
	if (pg->total > 0) {
		int pct = (int)(bytes >= pg->total ? 100 : bytes * 100 / pg->total);
		int fill = pct * SH_BAR_WIDTH / 100;
		for (int i = 0; i < SH_BAR_WIDTH; i++)
			bar[i] = i < fill ? '#' : '.';
		bar[SH_BAR_WIDTH] = '\0';
		n = snprintf(line, sizeof(line), "COPY %s [%s] %3d%%  %llu rows  %.0f rows/s",
			     pg->what, bar, pct, (unsigned long long)rows, rate);
	} else {
		n = snprintf(line, sizeof(line), "COPY %s  %llu rows  %.0f rows/s", pg->what,
			     (unsigned long long)rows, rate);
	}
	if (n < 0)
		return;
	fprintf(stderr, "\r%s%*s", line, pg->width > n ? pg->width - n : 0, "");
	fflush(stderr);
	pg->width = n;
}

static void progress_clear(struct progress *pg)
{
	if (!pg->on || pg->width == 0)
		return;
	fprintf(stderr, "\r%*s\r", pg->width, "");
	fflush(stderr);
	pg->width = 0;
}

/* ---- FROM --------------------------------------------------------------------------- */

/* A number as the SQL parser reads one: [-]digits[.digits][e[+-]digits]. */
static int is_number(const char *v, size_t n)
{
	size_t i = 0, digits = 0;

	if (i < n && v[i] == '-')
		i++;
	while (i < n && isdigit((unsigned char)v[i])) {
		i++;
		digits++;
	}
	if (i < n && v[i] == '.') {
		i++;
		while (i < n && isdigit((unsigned char)v[i])) {
			i++;
			digits++;
		}
	}
	if (digits == 0)
		return 0;
	if (i < n && (v[i] == 'e' || v[i] == 'E')) {
		i++;
		if (i < n && (v[i] == '+' || v[i] == '-'))
			i++;
		if (i >= n || !isdigit((unsigned char)v[i]))
			return 0;
		while (i < n && isdigit((unsigned char)v[i]))
			i++;
	}
	return i == n;
}

static void add_literal(struct sh_buf *b, const char *v, size_t n, int isnull, enum lwc_type ty)
{
	if (isnull) {
		sh_buf_adds(b, "NULL");
		return;
	}
	if (ty == LWC_TYPE_INT || ty == LWC_TYPE_FLOAT) {
		size_t s = 0, e = n;
		while (s < e && isspace((unsigned char)v[s]))
			s++;
		while (e > s && isspace((unsigned char)v[e - 1]))
			e--;
		if (s < e && v[s] == '+')
			s++;
		if (is_number(v + s, e - s)) {
			sh_buf_add(b, v + s, e - s);
			return;
		}
	}
	sh_buf_addc(b, '\'');
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '\'')
			sh_buf_addc(b, '\'');
		sh_buf_addc(b, v[i]);
	}
	sh_buf_addc(b, '\'');
}

/* One INSERT of up to SH_COPY_BATCH input records, and where each record
 * and each of its values sit in the SQL, so an error of the statement is
 * traced back to its input line and column. */
struct batch {
	struct sh_buf sql;
	size_t rows;
	unsigned long first_line, last_line;
	size_t nfld;                  /* values per record                      */
	size_t *row_off;              /* [rows]: offset of the record's '('      */
	unsigned long *row_line;      /* [rows]: its input line                  */
	size_t *fld_off;              /* [rows * nfld]: offset of each value     */
	size_t cap;                   /* records the arrays hold                 */
	const char *const *names;     /* [nfld]: column names                    */
};

static void batch_free(struct batch *bt)
{
	free(bt->row_off);
	free(bt->row_line);
	free(bt->fld_off);
}

/* Record i of the batch (0-based) starts here; grows the arrays. */
static void batch_note_row(struct batch *bt, size_t i, unsigned long line)
{
	if (i >= bt->cap) {
		size_t cap = bt->cap ? bt->cap * 2 : 64;
		bt->row_off = sh_realloc(bt->row_off, cap * sizeof(*bt->row_off));
		bt->row_line = sh_realloc(bt->row_line, cap * sizeof(*bt->row_line));
		bt->fld_off = sh_realloc(bt->fld_off, cap * (bt->nfld ? bt->nfld : 1) *
					 sizeof(*bt->fld_off));
		bt->cap = cap;
	}
	bt->row_off[i] = bt->sql.len;
	bt->row_line[i] = line;
}

/* The CONTEXT of a failed batch: the exact line (and column) when the error
 * names a position in the SQL or a row of the INSERT, else the batch's
 * lines.  Nothing of the batch was loaded: an INSERT is all or nothing. */
static void batch_context(const struct batch *bt, const char *table, lwc_result *r,
			  uint64_t loaded)
{
	const char *msg = lwc_result_error(r), *p;
	int pos = lwc_result_error_pos(r);
	size_t row = SIZE_MAX, row2 = SIZE_MAX, fld = SIZE_MAX, a, b;

	if (pos >= 0 && bt->rows > 0 && (size_t)pos >= bt->row_off[0]) {
		for (row = 0; row + 1 < bt->rows && bt->row_off[row + 1] <= (size_t)pos; row++)
			;
		for (fld = 0; fld + 1 < bt->nfld && bt->fld_off[row * bt->nfld + fld + 1] <=
		     (size_t)pos; fld++)
			;
	} else if (msg && (p = strstr(msg, "(rows ")) != NULL &&
		   sscanf(p, "(rows %zu and %zu", &a, &b) == 2 && a >= 1 && b >= 1 &&
		   a <= bt->rows && b <= bt->rows) {
		row = a - 1;
		row2 = b - 1;
	} else if (msg && (p = strstr(msg, "(row ")) != NULL && sscanf(p, "(row %zu", &a) == 1 &&
		   a >= 1 && a <= bt->rows) {
		row = a - 1;
	}
	if (row == SIZE_MAX) {
		fprintf(stderr, "CONTEXT:  COPY %s, line%s %lu", table,
			bt->first_line == bt->last_line ? "" : "s", bt->first_line);
		if (bt->first_line != bt->last_line)
			fprintf(stderr, "-%lu", bt->last_line);
	} else if (row2 != SIZE_MAX) {
		fprintf(stderr, "CONTEXT:  COPY %s, lines %lu and %lu", table, bt->row_line[row],
			bt->row_line[row2]);
	} else {
		fprintf(stderr, "CONTEXT:  COPY %s, line %lu", table, bt->row_line[row]);
		if (fld != SIZE_MAX) {
			size_t f0 = bt->fld_off[row * bt->nfld + fld];
			size_t f1 = fld + 1 < bt->nfld ? bt->fld_off[row * bt->nfld + fld + 1] - 1
				    : row + 1 < bt->rows ? bt->row_off[row + 1] - 2 : bt->sql.len - 2;
			int n = f1 > f0 ? (int)(f1 - f0) : 0;
			fprintf(stderr, ", column %s: %.*s%s", bt->names[fld], n > 60 ? 60 : n,
				bt->sql.p + f0, n > 60 ? "..." : "");
		}
	}
	fprintf(stderr, " (%llu row%s loaded before it; none of lines %lu-%lu)\n",
		(unsigned long long)loaded, loaded == 1 ? "" : "s", bt->first_line, bt->last_line);
}

/* The batches in flight, oldest first: at most two, the one the proxy runs
 * and the one sent after it (lwc_insert_send), which it runs only if the
 * first succeeds. */
struct flight {
	struct batch *b[2];
	int n;
};

static void batch_reset(struct batch *bt)
{
	sh_buf_reset(&bt->sql);
	bt->rows = 0;
}

/* The oldest batch in flight answered: its rows counted, or its error
 * reported with its lines; the batch is empty again.  After an error the
 * batch sent after it is answered too (not run: it follows the failed
 * one). */
static enum sh_status settle(struct sh *s, const struct copy_opts *o, struct flight *f,
			     uint64_t *loaded, struct progress *pg)
{
	struct batch *bt;
	enum sh_status st = SH_OK;
	lwc_result *r;

	if (f->n == 0)
		return SH_OK;
	bt = f->b[0];
	f->b[0] = f->b[1];
	f->n--;
	r = lwc_insert_wait(s->conn);
	if (r == NULL || lwc_result_status(r) == LWC_RESULT_ERROR) {
		progress_clear(pg);
		sh_error(s, NULL, -1, "%s", r ? lwc_result_error(r) : "no answer from the proxy");
		if (r)
			batch_context(bt, o->table, r, *loaded);
		st = sh_fail_status(s);
		for (; f->n > 0; f->n--) {
			lwc_result *next = lwc_insert_wait(s->conn);

			/* not run, unless the proxy ran it after all: then counted */
			if (next && lwc_result_status(next) != LWC_RESULT_ERROR)
				*loaded += lwc_result_count(next);
			lwc_result_free(next);
			batch_reset(f->b[0]);
			f->b[0] = f->b[1];
		}
	} else {
		*loaded += lwc_result_count(r) ? lwc_result_count(r) : bt->rows;
	}
	lwc_result_free(r);
	batch_reset(bt);
	return st;
}

/* Every batch in flight answered (settle). */
static enum sh_status settle_all(struct sh *s, const struct copy_opts *o, struct flight *f,
				 uint64_t *loaded, struct progress *pg)
{
	enum sh_status st = SH_OK;

	while (f->n > 0 && st == SH_OK)
		st = settle(s, o, f, loaded, pg);
	return st;
}

/* Send the batch: each batch is made (values converted, records sealed,
 * tokens derived) while the one before it is at the proxy, and sent before
 * that one's answer; the proxy runs it only if that one succeeded, so a
 * failure stops the load where it would without the overlap
 * (lwc_insert_prepare).  Then the one before it is settled: bt is in
 * flight, alone, and the caller fills the other batch. */
static enum sh_status flush_batch(struct sh *s, const struct copy_opts *o, struct batch *bt,
				  struct flight *f, uint64_t *loaded, struct progress *pg)
{
	lwc_result *err = NULL;
	lwc_insert *ins;
	enum sh_status st;
	int rc;

	if (bt->rows == 0)
		return settle_all(s, o, f, loaded, pg);
	sh_buf_addc(&bt->sql, ';');
	ins = lwc_insert_prepare(s->conn, bt->sql.p, &err);
	if (ins == NULL && lwc_result_error_code(err) == LWC_ERR_BUSY) {
		/* the table's schema needs the catalog: after the answers */
		lwc_result_free(err);
		if ((st = settle_all(s, o, f, loaded, pg)) != SH_OK)
			return st;
		ins = lwc_insert_prepare(s->conn, bt->sql.p, &err);
	}
	if (ins == NULL) {
		/* the batches before it first: one may have failed before */
		if ((st = settle_all(s, o, f, loaded, pg)) != SH_OK) {
			lwc_result_free(err);
			return st;
		}
		progress_clear(pg);
		sh_error(s, NULL, -1, "%s", lwc_result_error(err));
		batch_context(bt, o->table, err, *loaded);
		lwc_result_free(err);
		return sh_fail_status(s);
	}
	if ((rc = lwc_insert_send(s->conn, ins)) != LWC_OK) {
		/* the connection is lost: no answer in flight will come */
		for (; f->n > 0; f->n--) {
			lwc_result_free(lwc_insert_wait(s->conn));
			batch_reset(f->b[f->n - 1]);
		}
		progress_clear(pg);
		sh_error(s, NULL, -1, "connection to the proxy lost: %s", lwc_strerror(rc));
		fprintf(stderr, "CONTEXT:  COPY %s, lines %lu-%lu (%llu rows loaded before them)\n",
			o->table, bt->first_line, bt->last_line, (unsigned long long)*loaded);
		return sh_fail_status(s);
	}
	f->b[f->n++] = bt;
	return f->n > 1 ? settle(s, o, f, loaded, pg) : SH_OK;
}

static enum sh_status copy_from(struct sh *s, struct copy_opts *o)
{
	struct lwc_column *cols = NULL;
	int ncols = 0, rc, *map = NULL;
	uint64_t max_rows = 1;
	enum lwc_type *types = NULL;
	const char **names = NULL;
	size_t nwant;
	struct reader rd;
	struct progress pg;
	struct batch bts[2], *cur = &bts[0];
	struct flight inflight = { { NULL, NULL }, 0 };
	enum sh_status st = SH_OK;
	uint64_t loaded = 0;
	char err[256];
	const char *env;
	char *tname = sh_ident_fold(o->table);

	memset(&rd, 0, sizeof(rd));
	memset(&pg, 0, sizeof(pg));
	memset(bts, 0, sizeof(bts));
	rc = lwc_describe(s->conn, tname, &cols, &ncols);
	if (rc != LWC_OK) {
		if (rc == LWC_ERR_NO_TABLE)
			sh_error(s, NULL, -1, "relation \"%s\" does not exist", tname);
		else
			sh_error(s, NULL, -1, "%s", lwc_strerror(rc));
		free(tname);
		return rc == LWC_ERR_NO_TABLE ? SH_FAIL : sh_fail_status(s);
	}
	/* a statement is one request to the proxy (all or nothing): no more
	 * rows than that carries */
	if (lwc_insert_max_rows(s->conn, tname, &max_rows) != LWC_OK || max_rows == 0)
		max_rows = 1;
	if (max_rows > SH_COPY_BATCH)
		max_rows = SH_COPY_BATCH;
	/* fewer rows a statement, e.g. to see a load's overlap in a small file */
	if ((env = getenv("LWC_COPY_ROWS")) != NULL && *env) {
		char *end;
		unsigned long long v = strtoull(env, &end, 10);

		if (*end == '\0' && v > 0 && v < max_rows)
			max_rows = v;
	}
	nwant = o->ncolnames ? o->ncolnames : (size_t)ncols;
	types = sh_malloc(sizeof(*types) * (nwant ? nwant : 1));
	map = sh_malloc(sizeof(*map) * (nwant ? nwant : 1));
	names = sh_malloc(sizeof(*names) * (nwant ? nwant : 1));
	for (size_t i = 0; i < nwant; i++) {
		int k = -1;
		if (o->ncolnames) {
			for (int c = 0; c < ncols; c++)
				if (!strcmp(cols[c].name, o->colnames[i]))
					k = c;
			if (k < 0) {
				sh_error(s, NULL, -1, "column \"%s\" of relation \"%s\" does not exist",
					 o->colnames[i], tname);
				st = SH_FAIL;
				goto out;
			}
		} else {
			k = (int)i;
		}
		map[i] = k;
		types[i] = cols[k].type;
		names[i] = cols[k].name;
	}
	bts[0].nfld = bts[1].nfld = nwant;
	bts[0].names = bts[1].names = names;

	rd.csv = o->csv;
	rd.delim = o->delim;
	if (o->file) {
		rd.fp = fopen(o->file, "r");
		if (rd.fp == NULL) {
			sh_error(s, NULL, -1, "%s: %s", o->file, strerror(errno));
			st = SH_FAIL;
			goto out;
		}
		struct stat sb;
		if (fstat(fileno(rd.fp), &sb) == 0 && S_ISREG(sb.st_mode))
			pg.total = (uint64_t)sb.st_size;
	} else {
		rd.fp = s->src_fp ? s->src_fp : stdin;
		rd.stdin_data = 1;
		if (s->interactive && isatty(fileno(rd.fp)))
			printf("Enter data to be copied followed by a newline.\n"
			       "End with a backslash and a period on a line by itself, "
			       "or an EOF signal.\n");
		fflush(stdout);
	}
	pg.on = isatty(STDERR_FILENO) && !(rd.fp == stdin && isatty(fileno(stdin)));
	pg.t0 = sh_now_ms();
	pg.what = o->table;

	if (o->header) {
		rc = read_record(&rd, o->null_str, err, sizeof(err));
		if (rc < 0) {
			sh_error(s, NULL, -1, "%s", err);
			fprintf(stderr, "CONTEXT:  COPY %s, line %lu\n", o->table, rd.line);
			st = SH_FAIL;
			goto out;
		}
	}
	while ((rc = read_record(&rd, o->null_str, err, sizeof(err))) == 1) {
		if (rd.nf != nwant) {
			/* the batch in flight first: it may have failed before */
			if ((st = settle_all(s, o, &inflight, &loaded, &pg)) != SH_OK)
				goto out;
			progress_clear(&pg);
			if (rd.nf > nwant)
				sh_error(s, NULL, -1, "extra data after last expected column");
			else
				sh_error(s, NULL, -1, "missing data for column \"%s\"",
					 cols[map[rd.nf]].name);
			fprintf(stderr, "CONTEXT:  COPY %s, line %lu (%llu rows before it loaded)\n",
				o->table, rd.line, (unsigned long long)loaded);
			if (!o->csv && rd.nf == 1 && memchr(rd.rec.p, ',', rd.rec.len))
				fputs("HINT:  Without CSV the format is text (tab-separated); "
				      "for a CSV file add CSV (and HEADER).\n", stderr);
			st = SH_FAIL;
			goto out;
		}
		if (cur->rows == 0) {
			sh_buf_printf(&cur->sql, "INSERT INTO %s%s%s VALUES ", o->table,
				      o->cols ? " " : "", o->cols ? o->cols : "");
			cur->first_line = rd.line;
		} else {
			sh_buf_addc(&cur->sql, ',');
		}
		batch_note_row(cur, cur->rows, rd.line);
		sh_buf_addc(&cur->sql, '(');
		for (size_t i = 0; i < nwant; i++) {
			if (i)
				sh_buf_addc(&cur->sql, ',');
			cur->fld_off[cur->rows * nwant + i] = cur->sql.len;
			add_literal(&cur->sql, rd.f[i], rd.flen[i], rd.fquoted[i] == 2, types[i]);
		}
		sh_buf_addc(&cur->sql, ')');
		cur->rows++;
		cur->last_line = rd.line;
		if (cur->rows >= max_rows || cur->sql.len >= SH_COPY_BATCH_BYTES ||
		    cur->rows * nwant >= SH_COPY_BATCH_VALUES) {
			st = flush_batch(s, o, cur, &inflight, &loaded, &pg);
			if (st != SH_OK)
				goto out;
			cur = cur == &bts[0] ? &bts[1] : &bts[0];
			progress_draw(&pg, rd.bytes, loaded, pg.width == 0);
		}
		if (sh_sigint) {
			/* what is in flight completes at the proxy: count it */
			if ((st = settle_all(s, o, &inflight, &loaded, &pg)) != SH_OK)
				goto out;
			progress_clear(&pg);
			sh_error(s, NULL, -1, "canceling COPY due to user request (%llu rows loaded)",
				 (unsigned long long)loaded);
			st = SH_FAIL;
			goto out;
		}
	}
	if (rc < 0) {
		if ((st = settle_all(s, o, &inflight, &loaded, &pg)) != SH_OK)
			goto out;
		progress_clear(&pg);
		sh_error(s, NULL, -1, "%s", err);
		fprintf(stderr, "CONTEXT:  COPY %s, line %lu (%llu rows before it loaded)\n",
			o->table, rd.line, (unsigned long long)loaded);
		st = SH_FAIL;
		goto out;
	}
	st = flush_batch(s, o, cur, &inflight, &loaded, &pg);
	if (st == SH_OK)
		st = settle_all(s, o, &inflight, &loaded, &pg);
	if (st == SH_OK) {
		progress_draw(&pg, rd.bytes, loaded, 1);
		progress_clear(&pg);
		if (!s->quiet)
			printf("COPY %llu\n", (unsigned long long)loaded);
	}
out:
	/* every failure above settles first; none leaves an answer unread */
	if (inflight.n > 0)
		(void)settle_all(s, o, &inflight, &loaded, &pg);
	if (rd.fp && o->file)
		fclose(rd.fp);
	else if (rd.fp)
		clearerr(rd.fp);
	reader_free(&rd);
	for (int i = 0; i < 2; i++) {
		sh_buf_free(&bts[i].sql);
		batch_free(&bts[i]);
	}
	free(names);
	free(types);
	free(map);
	free(cols);
	free(tname);
	return st;
}

/* ---- TO ------------------------------------------------------------------------------- */

static void text_field(struct sh_buf *b, const char *v, size_t n, char delim)
{
	for (size_t i = 0; i < n; i++) {
		char c = v[i];
		switch (c) {
		case '\\': sh_buf_adds(b, "\\\\"); break;
		case '\n': sh_buf_adds(b, "\\n"); break;
		case '\r': sh_buf_adds(b, "\\r"); break;
		case '\t': sh_buf_adds(b, "\\t"); break;
		case '\b': sh_buf_adds(b, "\\b"); break;
		case '\f': sh_buf_adds(b, "\\f"); break;
		case '\v': sh_buf_adds(b, "\\v"); break;
		default:
			if (c == delim)
				sh_buf_addc(b, '\\');
			sh_buf_addc(b, c);
			break;
		}
	}
}

static void out_field(struct sh_buf *b, const struct copy_opts *o, const char *v, size_t n,
		      int isnull)
{
	size_t nl = strlen(o->null_str);

	if (isnull) {
		sh_buf_adds(b, o->null_str);
	} else if (!o->csv) {
		text_field(b, v, n, o->delim);
	} else if (nl > 0 && n == nl && memcmp(v, o->null_str, nl) == 0) {
		sh_buf_addc(b, '"');        /* a value that reads as NULL is quoted */
		sh_buf_add(b, v, n);
		sh_buf_addc(b, '"');
	} else {
		sh_csv_field(b, v, n, o->delim);
	}
}

static enum sh_status copy_to(struct sh *s, struct copy_opts *o)
{
	struct sh_buf sql = {0}, line = {0};
	FILE *out = stdout;
	enum sh_status st = SH_OK;
	uint64_t n = 0;
	int rc;

	if (o->query)
		sh_buf_adds(&sql, o->query);
	else if (o->cols)
		sh_buf_printf(&sql, "SELECT %.*s FROM %s", (int)strlen(o->cols) - 2, o->cols + 1,
			      o->table);
	else
		sh_buf_printf(&sql, "SELECT * FROM %s", o->table);
	lwc_result *r = lwc_exec(s->conn, sql.p);
	if (lwc_result_status(r) == LWC_RESULT_ERROR) {
		sh_error(s, o->query ? sql.p : NULL, o->query ? lwc_result_error_pos(r) : -1, "%s",
			 lwc_result_error(r));
		st = sh_fail_status(s);
		goto out;
	}
	if (lwc_result_status(r) != LWC_RESULT_ROWS) {
		sh_error(s, NULL, -1, "\\copy: the statement returns no rows");
		st = SH_FAIL;
		goto out;
	}
	if (o->file && (out = fopen(o->file, "w")) == NULL) {
		sh_error(s, NULL, -1, "%s: %s", o->file, strerror(errno));
		st = SH_FAIL;
		goto out;
	}
	int nc = lwc_result_ncols(r);
	if (o->header) {
		for (int c = 0; c < nc; c++) {
			const char *name = lwc_result_colname(r, c);
			if (c)
				sh_buf_addc(&line, o->delim);
			out_field(&line, o, name, strlen(name), 0);
		}
		sh_buf_addc(&line, '\n');
		fwrite(line.p, 1, line.len, out);
	}
	while ((rc = lwc_result_next(r)) == 1) {
		sh_buf_reset(&line);
		for (int c = 0; c < nc; c++) {
			size_t len = 0;
			int isnull = lwc_value_is_null(r, c);
			const char *v = isnull ? "" : lwc_value_text(r, c, &len);
			if (c)
				sh_buf_addc(&line, o->delim);
			out_field(&line, o, v, len, isnull);
		}
		sh_buf_addc(&line, '\n');
		fwrite(line.p, 1, line.len, out);
		n++;
		if (sh_sigint) {
			sh_error(s, NULL, -1, "canceling COPY due to user request");
			st = SH_FAIL;
			goto out;
		}
	}
	if (rc < 0) {
		sh_error(s, NULL, -1, "%s", lwc_result_status(r) == LWC_RESULT_ERROR ?
			 lwc_result_error(r) : lwc_strerror(rc));
		st = sh_fail_status(s);
		goto out;
	}
	if (out != stdout) {
		int bad = ferror(out);
		if (fclose(out) != 0 || bad) {
			out = stdout;
			sh_error(s, NULL, -1, "%s: could not write: %s", o->file, strerror(errno));
			st = SH_FAIL;
			goto out;
		}
		out = stdout;
	}
	if (!s->quiet)
		printf("COPY %llu\n", (unsigned long long)n);
out:
	if (out != stdout)
		fclose(out);
	lwc_result_free(r);
	sh_buf_free(&sql);
	sh_buf_free(&line);
	return st;
}

enum sh_status sh_copy(struct sh *s, const char *args)
{
	struct copy_opts o;
	enum sh_status st;
	char *a = sh_strdup(args);
	size_t n = strlen(a);

	/* a habitual ';' at the end is not part of the command */
	while (n > 0 && (isspace((unsigned char)a[n - 1]) || a[n - 1] == ';'))
		a[--n] = '\0';
	int rc = parse_opts(s, a, &o);
	free(a);
	if (rc != 0) {
		opts_free(&o);
		return SH_FAIL;
	}
	st = o.to ? copy_to(s, &o) : copy_from(s, &o);
	fflush(stdout);
	opts_free(&o);
	return st;
}
