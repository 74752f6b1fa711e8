/*
 * shell_print.c - result output of the `lwc` shell, byte for byte as psql
 * prints it with its default border 1:
 *
 *    id |  name  | age          header centered, " | " between columns,
 *   ----+--------+-----         "-+-" in the rule,
 *     1 | alice  |  30          numbers right-aligned, text left-aligned,
 *     2 | bob +  |              a cell with line breaks continues with '+',
 *       | smith  |
 *   (2 rows)                    footer, then an empty line.
 *
 * Expanded output (\x) prints "-[ RECORD n ]-" rules; -A joins fields with
 * the separator; --csv writes RFC 4180 with NULL empty and '' as "".  The
 * aligned formats need every width first, so they read the whole result;
 * unaligned and CSV output stream row by row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

/* ---- tables ------------------------------------------------------------------------- */

void sh_table_init(struct sh_table *t, int ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->headers = sh_malloc(sizeof(char *) * (size_t)(ncols > 0 ? ncols : 1));
	t->aligns = sh_malloc((size_t)(ncols > 0 ? ncols : 1));
	for (int i = 0; i < ncols; i++) {
		t->headers[i] = NULL;
		t->aligns[i] = 'l';
	}
}

void sh_table_set_header(struct sh_table *t, int col, const char *name, char align)
{
	free(t->headers[col]);
	t->headers[col] = sh_strdup(name);
	t->aligns[col] = align;
}

void sh_table_add_row(struct sh_table *t, const char *const *cells, const size_t *lens)
{
	size_t nc = (size_t)t->ncols;

	if (t->nrows == t->caprows) {
		t->caprows = t->caprows ? t->caprows * 2 : 64;
		t->cells = sh_realloc(t->cells, sizeof(char *) * t->caprows * (nc ? nc : 1));
	}
	for (size_t c = 0; c < nc; c++) {
		const char *v = cells[c];
		t->cells[t->nrows * nc + c] =
			v == NULL ? NULL : sh_strndup(v, lens ? lens[c] : strlen(v));
	}
	t->nrows++;
}

void sh_table_free(struct sh_table *t)
{
	size_t nc = (size_t)t->ncols;

	for (size_t i = 0; i < t->nrows * nc; i++)
		free(t->cells[i]);
	for (size_t c = 0; c < nc; c++)
		free(t->headers[c]);
	free(t->cells);
	free(t->headers);
	free(t->aligns);
	memset(t, 0, sizeof(*t));
}

static const char *cell_text(const struct sh *s, const char *v)
{
	return v ? v : s->null_str;
}

/* Number of lines of a cell and the widest of them. */
static size_t cell_lines(const char *v, size_t *maxw)
{
	size_t lines = 1, w = 0;
	const char *p = v;

	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		size_t lw = sh_width(p, n);
		if (lw > w)
			w = lw;
		if (nl == NULL)
			break;
		lines++;
		p = nl + 1;
	}
	if (maxw)
		*maxw = w;
	return lines;
}

/* Line k of a cell: its start and length (an empty line past the end). */
static const char *cell_line(const char *v, size_t k, size_t *len)
{
	const char *p = v;

	while (k > 0) {
		const char *nl = strchr(p, '\n');
		if (nl == NULL) {
			*len = 0;
			return "";
		}
		p = nl + 1;
		k--;
	}
	const char *nl = strchr(p, '\n');
	*len = nl ? (size_t)(nl - p) : strlen(p);
	return p;
}

static void pad(FILE *out, size_t n, char c)
{
	while (n-- > 0)
		fputc(c, out);
}

static void print_footer(const struct sh_table *t, FILE *out)
{
	if (t->footer_text != NULL)
		fputs(t->footer_text, out);
	else
		fprintf(out, "(%zu row%s)\n", t->nrows, t->nrows == 1 ? "" : "s");
}

static void print_aligned(const struct sh *s, const struct sh_table *t, FILE *out)
{
	size_t nc = (size_t)t->ncols, *w = sh_malloc(sizeof(size_t) * (nc ? nc : 1));
	size_t total = 0;

	for (size_t c = 0; c < nc; c++) {
		w[c] = s->tuples_only ? 0 : sh_width(t->headers[c], strlen(t->headers[c]));
		for (size_t r = 0; r < t->nrows; r++) {
			size_t cw;
			cell_lines(cell_text(s, t->cells[r * nc + c]), &cw);
			if (cw > w[c])
				w[c] = cw;
		}
		total += w[c] + 3;
	}
	if (total > 0)
		total--;

	if (t->title && !s->tuples_only) {
		size_t tw = sh_width(t->title, strlen(t->title));
		if (tw < total)
			pad(out, (total - tw) / 2, ' ');
		fprintf(out, "%s\n", t->title);
	}
	if (!s->tuples_only) {
		for (size_t c = 0; c < nc; c++) {
			size_t hw = sh_width(t->headers[c], strlen(t->headers[c]));
			size_t sp = w[c] - hw;
			fputc(' ', out);
			pad(out, sp / 2, ' ');
			fputs(t->headers[c], out);
			pad(out, (sp + 1) / 2, ' ');
			fputc(' ', out);
			if (c + 1 < nc)
				fputc('|', out);
		}
		fputc('\n', out);
		for (size_t c = 0; c < nc; c++) {
			pad(out, w[c] + 2, '-');
			if (c + 1 < nc)
				fputc('+', out);
		}
		fputc('\n', out);
	}
	for (size_t r = 0; r < t->nrows; r++) {
		size_t height = 1;
		for (size_t c = 0; c < nc; c++) {
			size_t h = cell_lines(cell_text(s, t->cells[r * nc + c]), NULL);
			if (h > height)
				height = h;
		}
		for (size_t k = 0; k < height; k++) {
			for (size_t c = 0; c < nc; c++) {
				const char *v = cell_text(s, t->cells[r * nc + c]);
				size_t len, lines = cell_lines(v, NULL);
				const char *line = cell_line(v, k, &len);
				size_t lw = sh_width(line, len);
				int more = k + 1 < lines, last = c + 1 == nc;

				fputc(' ', out);
				if (k >= lines) {
					/* past this cell's lines: blank, nothing at the end */
					if (!last) {
						pad(out, w[c], ' ');
						fputs(" |", out);
					}
					continue;
				}
				if (t->aligns[c] == 'r') {
					pad(out, w[c] - lw, ' ');
					fwrite(line, 1, len, out);
				} else {
					fwrite(line, 1, len, out);
					if (!last || more)
						pad(out, w[c] - lw, ' ');
				}
				if (more)
					fputc('+', out);
				else if (!last)
					fputc(' ', out);
				if (!last)
					fputc('|', out);
			}
			fputc('\n', out);
		}
	}
	if (t->footer && !s->tuples_only)
		print_footer(t, out);
	fputc('\n', out);
	free(w);
}

/* psql's print_aligned_vertical_line for border 1: "-[ RECORD n ]" padded
 * with '-' to the width of the records, '+' above the divider. */
static void record_line(FILE *out, size_t rec, size_t hw, size_t dw)
{
	long reclen = 0;

	fputc('-', out);
	if (rec)
		reclen = fprintf(out, "[ RECORD %zu ]", rec);
	reclen++;
	for (long i = reclen; i < (long)hw; i++)
		fputc('-', out);
	reclen -= (long)hw;
	if (reclen-- <= 0)
		fputc('-', out);
	if (reclen-- <= 0)
		fputc('+', out);
	if (reclen-- <= 0)
		fputc('-', out);
	if (reclen < 0)
		reclen = 0;
	for (long i = reclen; i < (long)dw; i++)
		fputc('-', out);
	fputc('\n', out);
}

static void print_expanded(const struct sh *s, const struct sh_table *t, FILE *out)
{
	size_t nc = (size_t)t->ncols, hw = 0, dw = 0;

	if (t->title && !s->tuples_only)
		fprintf(out, "%s\n", t->title);
	if (t->nrows == 0) {
		if (!s->tuples_only && t->footer)
			fputs("(0 rows)\n", out);
		fputc('\n', out);
		return;
	}
	for (size_t c = 0; c < nc; c++) {
		size_t x = sh_width(t->headers[c], strlen(t->headers[c]));
		if (x > hw)
			hw = x;
	}
	for (size_t i = 0; i < t->nrows * nc; i++) {
		size_t x;
		cell_lines(cell_text(s, t->cells[i]), &x);
		if (x > dw)
			dw = x;
	}
	for (size_t r = 0; r < t->nrows; r++) {
		if (!s->tuples_only)
			record_line(out, r + 1, hw, dw);
		else if (r > 0)
			record_line(out, 0, hw, dw);
		for (size_t c = 0; c < nc; c++) {
			const char *v = cell_text(s, t->cells[r * nc + c]);
			size_t lines = cell_lines(v, NULL);
			for (size_t k = 0; k < lines; k++) {
				size_t len, hl = k ? 0 : sh_width(t->headers[c], strlen(t->headers[c]));
				const char *line = cell_line(v, k, &len);
				if (k == 0)
					fputs(t->headers[c], out);
				pad(out, hw - hl, ' ');
				fputs(" | ", out);
				fwrite(line, 1, len, out);
				if (k + 1 < lines) {
					pad(out, dw - sh_width(line, len), ' ');
					fputc('+', out);
				}
				fputc('\n', out);
			}
		}
	}
	if (t->footer_text != NULL && !s->tuples_only)
		fputs(t->footer_text, out);   /* (psql's expanded mode has no row count) */
	fputc('\n', out);
}

void sh_csv_field(struct sh_buf *b, const char *v, size_t len, char delim)
{
	int quote = len == 0 || (len == 2 && v[0] == '\\' && v[1] == '.');

	for (size_t i = 0; i < len && !quote; i++)
		quote = v[i] == delim || v[i] == '"' || v[i] == '\n' || v[i] == '\r';
	if (!quote) {
		sh_buf_add(b, v, len);
		return;
	}
	sh_buf_addc(b, '"');
	for (size_t i = 0; i < len; i++) {
		if (v[i] == '"')
			sh_buf_addc(b, '"');
		sh_buf_addc(b, v[i]);
	}
	sh_buf_addc(b, '"');
}

/* One row of unaligned or CSV output (cells NULL for SQL NULL). */
static void print_flat_row(const struct sh *s, FILE *out, const char *const *cells,
			   const size_t *lens, int n)
{
	struct sh_buf b = {0};

	for (int c = 0; c < n; c++) {
		if (s->format == SH_FMT_CSV) {
			if (c)
				sh_buf_addc(&b, ',');
			if (cells[c])
				sh_csv_field(&b, cells[c], lens ? lens[c] : strlen(cells[c]), ',');
		} else {
			if (c)
				sh_buf_adds(&b, s->fieldsep);
			if (cells[c])
				sh_buf_add(&b, cells[c], lens ? lens[c] : strlen(cells[c]));
			else
				sh_buf_adds(&b, s->null_str);
		}
	}
	sh_buf_addc(&b, '\n');
	fwrite(b.p, 1, b.len, out);
	sh_buf_free(&b);
}

/* One record of unaligned expanded output: "name|value" lines. */
static void print_flat_record(const struct sh *s, FILE *out, char *const *headers,
			      const char *const *cells, const size_t *lens, int n, size_t rec)
{
	if (rec > 0)
		fputc('\n', out);
	for (int c = 0; c < n; c++) {
		fputs(headers[c], out);
		fputs(s->fieldsep, out);
		if (cells[c])
			fwrite(cells[c], 1, lens ? lens[c] : strlen(cells[c]), out);
		else
			fputs(s->null_str, out);
		fputc('\n', out);
	}
}

static int flat_expanded(const struct sh *s)
{
	return s->format == SH_FMT_UNALIGNED && s->expanded;
}

void sh_table_print(const struct sh *s, const struct sh_table *t, FILE *out)
{
	size_t nc = (size_t)t->ncols;

	if (s->format == SH_FMT_ALIGNED) {
		if (s->expanded)
			print_expanded(s, t, out);
		else
			print_aligned(s, t, out);
		return;
	}
	if (flat_expanded(s)) {
		for (size_t r = 0; r < t->nrows; r++)
			print_flat_record(s, out, t->headers, (const char *const *)&t->cells[r * nc],
					  NULL, t->ncols, r);
		return;
	}
	if (t->title && !s->tuples_only && s->format == SH_FMT_UNALIGNED)
		fprintf(out, "%s\n", t->title);
	if (!s->tuples_only)
		print_flat_row(s, out, (const char *const *)t->headers, NULL, t->ncols);
	for (size_t r = 0; r < t->nrows; r++)
		print_flat_row(s, out, (const char *const *)&t->cells[r * nc], NULL, t->ncols);
	if (t->footer && !s->tuples_only && s->format == SH_FMT_UNALIGNED)
		print_footer(t, out);
}

/* ---- query results ---------------------------------------------------------------- */

static void cancelled(struct sh *s)
{
	sh_error(s, NULL, -1, "canceling statement due to user request");
}

enum sh_status sh_print_rows(struct sh *s, lwc_result *r, const char *sql, FILE *out,
			     uint64_t *nrows)
{
	int nc = lwc_result_ncols(r), rc;
	size_t ncs = (size_t)(nc > 0 ? nc : 1);
	const char **cells = sh_malloc(sizeof(char *) * ncs);
	size_t *lens = sh_malloc(sizeof(size_t) * ncs), *offs = sh_malloc(sizeof(size_t) * ncs);
	enum sh_status st = SH_OK;
	struct sh_table t;
	struct sh_buf row = {0};

	(void)sql;
	*nrows = 0;
	sh_table_init(&t, nc);
	t.footer = 1;
	for (int c = 0; c < nc; c++) {
		enum lwc_type ty = lwc_result_coltype(r, c);
		sh_table_set_header(&t, c, lwc_result_colname(r, c),
				    ty == LWC_TYPE_INT || ty == LWC_TYPE_FLOAT ? 'r' : 'l');
	}
	int stream = s->format != SH_FMT_ALIGNED;
	if (stream && !s->tuples_only && !flat_expanded(s))
		print_flat_row(s, out, (const char *const *)t.headers, NULL, nc);
	while ((rc = lwc_result_next(r)) == 1) {
		if (sh_sigint) {
			cancelled(s);
			st = SH_FAIL;
			goto done;
		}
		/* copy each value at once: number texts share one buffer */
		sh_buf_reset(&row);
		for (int c = 0; c < nc; c++) {
			offs[c] = row.len;
			lens[c] = 0;
			if (!lwc_value_is_null(r, c)) {
				const char *v = lwc_value_text(r, c, &lens[c]);
				sh_buf_add(&row, v, lens[c]);
			}
			sh_buf_addc(&row, '\0');
		}
		for (int c = 0; c < nc; c++)
			cells[c] = lwc_value_is_null(r, c) ? NULL : row.p + offs[c];
		if (!stream)
			sh_table_add_row(&t, cells, lens);
		else if (flat_expanded(s))
			print_flat_record(s, out, t.headers, cells, lens, nc, (size_t)*nrows);
		else
			print_flat_row(s, out, cells, lens, nc);
		(*nrows)++;
	}
	if (rc < 0) {
		sh_error(s, NULL, -1, "%s", lwc_result_status(r) == LWC_RESULT_ERROR ?
			 lwc_result_error(r) : lwc_strerror(rc));
		st = sh_fail_status(s);
		goto done;
	}
	if (!stream) {
		sh_table_print(s, &t, out);
	} else if (s->format == SH_FMT_UNALIGNED && !s->tuples_only && !flat_expanded(s)) {
		t.nrows = (size_t)*nrows;
		print_footer(&t, out);
		t.nrows = 0;
	}
done:
	sh_table_free(&t);
	sh_buf_free(&row);
	free(cells);
	free(lens);
	free(offs);
	return st;
}
