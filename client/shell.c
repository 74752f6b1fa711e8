/*
 * shell.c - `lwc`, the interactive and scripting shell of LWC (psql-like).
 *
 *   lwc --key FILE [--proxy HOST:PORT] [-c SQL]... [-f FILE]... [options]
 *
 * Input comes from -c strings and -f files in command-line order, else from
 * stdin when it is not a terminal, else from the terminal through libedit
 * (history in ~/.lwc_history).  Statements end at a ';' outside strings,
 * quoted identifiers and comments (sql_next_statement), so they may span
 * lines; a line starting with a backslash is a meta command.  Scripts stop
 * at the first failed statement (exit 3); the terminal session goes on.
 *
 * Ctrl-C at the prompt cancels the input line: the SIGINT handler only sets
 * a flag, and the editor's character reader (ed_getc) waits in pselect with
 * SIGINT unblocked, so the signal always ends the wait and the reader
 * reports an error that makes el_gets return.  The handler is installed with
 * SA_RESTART so that it never interrupts liblwc's own socket I/O.
 */
#define _XOPEN_SOURCE 700       /* wcwidth */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <histedit.h>

#include "heap.h"
#include "lwc.h"
#include "shell.h"
#include "sql.h"

#define SH_HISTORY_SIZE  500
#define SH_MAX_DEPTH     16     /* \i nesting                                */
#define SH_ERR_WIDTH     60     /* psql's DISPLAY_SIZE for "LINE n:"         */
#define SH_ERR_RIGHT     10     /* psql's MIN_RIGHT_CUT                      */

volatile sig_atomic_t sh_sigint;

/* ---- memory and strings ------------------------------------------------------ */

static void oom(void)
{
	fputs("lwc: out of memory\n", stderr);
	exit(SH_EXIT_USAGE);
}

void *sh_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		oom();
	return p;
}

void *sh_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (q == NULL)
		oom();
	return q;
}

char *sh_strdup(const char *s)
{
	return sh_strndup(s, strlen(s));
}

char *sh_strndup(const char *s, size_t n)
{
	char *p = sh_malloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static void buf_grow(struct sh_buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->p = sh_realloc(b->p, cap);
	b->cap = cap;
}

void sh_buf_add(struct sh_buf *b, const void *data, size_t n)
{
	buf_grow(b, n);
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void sh_buf_adds(struct sh_buf *b, const char *s)
{
	sh_buf_add(b, s, strlen(s));
}

void sh_buf_addc(struct sh_buf *b, char c)
{
	sh_buf_add(b, &c, 1);
}

void sh_buf_printf(struct sh_buf *b, const char *fmt, ...)
{
	va_list ap, aq;

	va_start(ap, fmt);
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n > 0) {
		buf_grow(b, (size_t)n);
		vsnprintf(b->p + b->len, (size_t)n + 1, fmt, aq);
		b->len += (size_t)n;
	}
	va_end(aq);
}

void sh_buf_reset(struct sh_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

void sh_buf_free(struct sh_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

size_t sh_utf8(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c = u[0], min;
	size_t need;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < need + 1)
		return 0;
	for (size_t k = 1; k <= need; k++) {
		if ((u[k] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (u[k] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return need + 1;
}

/* The next character boundary after s[i] (an invalid byte counts as one). */
static size_t utf8_next(const char *s, size_t n, size_t i)
{
	uint32_t c;
	size_t k = sh_utf8(s + i, n - i, &c);

	return i + (k ? k : 1);
}

size_t sh_width(const char *s, size_t n)
{
	size_t w = 0, i = 0;

	while (i < n) {
		uint32_t c;
		size_t k = sh_utf8(s + i, n - i, &c);
		int cw = k == 0 || c < 0x80 ? 1 : wcwidth((wchar_t)c);
		w += cw < 0 ? 1 : (size_t)cw;
		i += k ? k : 1;
	}
	return w;
}

double sh_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- messages -------------------------------------------------------------------- */

static void vmessage(const struct sh *s, const char *level, const char *fmt, va_list ap)
{
	fflush(stdout);
	if (s->src_name != NULL)
		fprintf(stderr, "lwc:%s:%lu: ", s->src_name, s->src_line);
	if (level)
		fprintf(stderr, "%s:  ", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* psql's "LINE n: ..." excerpt with a caret under byte offset pos of sql,
 * the line cut to about SH_ERR_WIDTH columns around the position. */
static void error_position(const char *sql, size_t pos)
{
	size_t len = strlen(sql), ls = 0, le, b, e, i;
	int lineno = 1, beg_trunc = 0, end_trunc = 0;
	char head[32];

	if (pos > len)
		pos = len;
	for (i = 0; i < pos; i++) {
		if (sql[i] == '\n') {
			lineno++;
			ls = i + 1;
		}
	}
	le = ls;
	while (le < len && sql[le] != '\n' && sql[le] != '\r')
		le++;
	if (pos > le)
		pos = le;
	b = ls;
	e = le;
	size_t cpos = sh_width(sql + ls, pos - ls);
	if (sh_width(sql + ls, le - ls) > SH_ERR_WIDTH) {
		size_t limit = cpos + SH_ERR_RIGHT < SH_ERR_WIDTH ? SH_ERR_WIDTH : cpos + SH_ERR_RIGHT;
		/* cut the right end at the limit (on a character boundary) */
		for (i = ls, e = ls; i < le;) {
			size_t j = utf8_next(sql, le, i);
			if (sh_width(sql + ls, j - ls) > limit)
				break;
			i = e = j;
		}
		if (e < pos)
			e = pos;
		end_trunc = e < le;
		/* then the left end while still too wide */
		while (b < pos && sh_width(sql + b, e - b) > SH_ERR_WIDTH) {
			b = utf8_next(sql, e, b);
			beg_trunc = 1;
		}
	}
	int hl = snprintf(head, sizeof(head), "LINE %d: ", lineno);
	fprintf(stderr, "%s%s%.*s%s\n", head, beg_trunc ? "..." : "", (int)(e - b), sql + b,
		end_trunc ? "..." : "");
	size_t pad = (size_t)hl + (beg_trunc ? 3 : 0) + sh_width(sql + b, pos - b);
	fprintf(stderr, "%*s^\n", (int)pad, "");
}

void sh_error(const struct sh *s, const char *sql, int pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(s, "ERROR", fmt, ap);
	va_end(ap);
	if (pos >= 0 && sql != NULL)
		error_position(sql, (size_t)pos);
}

void sh_msg(const struct sh *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(s, NULL, fmt, ap);
	va_end(ap);
}

/* ---- the connection ------------------------------------------------------------------- */

static int connect_proxy(struct sh *s, char *err, size_t errlen)
{
	lwc_conn *c = NULL;

	if (lwc_connect(&c, s->key_file, s->proxy, err, errlen) != LWC_OK)
		return -1;
	/* Ctrl-C (interactive) cancels a running UPDATE or DELETE cleanly */
	lwc_set_cancel_flag(c, &sh_sigint);
	if (s->conn)
		lwc_close(s->conn);
	s->conn = c;
	return 0;
}

/* Interactive sessions survive a broken connection, like psql's reset. */
static int reconnect(struct sh *s)
{
	char err[512];

	fflush(stdout);
	fputs("The connection to the proxy was lost. Attempting reset: ", stderr);
	if (s->conn) {
		lwc_close(s->conn);
		s->conn = NULL;
	}
	if (connect_proxy(s, err, sizeof(err)) == 0) {
		fputs("Succeeded.\n", stderr);
		return 0;
	}
	fprintf(stderr, "Failed.\n%s\n", err);
	return -1;
}

enum sh_status sh_fail_status(const struct sh *s)
{
	return s->conn == NULL || !lwc_conn_ok(s->conn) ? SH_CONN_LOST : SH_FAIL;
}

static void print_timing(double ms)
{
	if (ms < 1000.0) {
		printf("Time: %.3f ms\n", ms);
		return;
	}
	double secs = ms / 1000.0;
	long long mins = (long long)(secs / 60.0);
	secs -= 60.0 * (double)mins;
	if (mins < 60) {
		printf("Time: %.3f ms (%02d:%06.3f)\n", ms, (int)mins, secs);
		return;
	}
	long long hours = mins / 60;
	mins -= 60 * hours;
	if (hours < 24) {
		printf("Time: %.3f ms (%02d:%02d:%06.3f)\n", ms, (int)hours, (int)mins, secs);
		return;
	}
	long long days = hours / 24;
	hours -= 24 * days;
	printf("Time: %.3f ms (%lld d %02d:%02d:%06.3f)\n", ms, days, (int)hours, (int)mins,
	       secs);
}

enum sh_status sh_exec(struct sh *s, const char *sql)
{
	enum sh_status st = SH_OK;
	uint64_t n = 0;

	if (s->echo) {
		printf("%s\n", sql);
		fflush(stdout);
	}
	if (s->conn == NULL) {
		/* an earlier reset failed: try again, quietly when it works */
		char err[512] = "";
		if (!s->interactive || connect_proxy(s, err, sizeof(err)) != 0) {
			sh_error(s, NULL, -1, "not connected to the proxy%s%s", *err ? ": " : "", err);
			return s->interactive ? SH_FAIL : SH_CONN_LOST;
		}
	}
	sh_sigint = 0;
	double t0 = sh_now_ms();
	lwc_result *r = lwc_exec(s->conn, sql);
	switch (lwc_result_status(r)) {
	case LWC_RESULT_ROWS:
		st = sh_print_rows(s, r, sql, stdout, &n);
		break;
	case LWC_RESULT_COMMAND:
		if (!s->quiet)
			printf("%s\n", lwc_result_tag(r));
		break;
	default:
		sh_error(s, sql, lwc_result_error_pos(r), "%s", lwc_result_error(r));
		st = sh_fail_status(s);
		break;
	}
	lwc_result_free(r);
	if (s->timing)
		print_timing(sh_now_ms() - t0);
	fflush(stdout);
	sh_sigint = 0;
	return st;
}

/* ---- lexical state of the query buffer ------------------------------------------------ */

/* What the end of a partial statement is inside of: for the prompt (psql's
 * %R: '=' idle, '-' continued, '\'' or '"' in a quote, '(' in parentheses)
 * and to know whether the buffer holds anything but blanks and comments. */
struct lexstate {
	char quote;              /* '\'' or '"' while inside one, else 0      */
	int paren;               /* open parentheses                          */
	int content;             /* anything besides blanks, ';' and comments */
};

static void lex_scan(const char *p, size_t n, struct lexstate *ls)
{
	int comment = 0;

	memset(ls, 0, sizeof(*ls));
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (comment) {
			if (c == '\n')
				comment = 0;
		} else if (ls->quote) {
			if (c == ls->quote) {
				if (i + 1 < n && p[i + 1] == c)
					i++;
				else
					ls->quote = 0;
			}
		} else if (c == '\'' || c == '"') {
			ls->quote = c;
			ls->content = 1;
		} else if (c == '-' && i + 1 < n && p[i + 1] == '-') {
			comment = 1;
			i++;
		} else {
			if (c == '(')
				ls->paren++;
			else if (c == ')' && ls->paren > 0)
				ls->paren--;
			if (!isspace((unsigned char)c) && c != ';')
				ls->content = 1;
		}
	}
}

static int is_blank(const char *p, size_t n)
{
	struct lexstate ls;

	lex_scan(p, n, &ls);
	return !ls.content && !ls.quote;
}

/* ---- input sources -------------------------------------------------------------------- */

enum src_kind { SRC_TTY, SRC_FILE, SRC_STRING };

struct src {
	enum src_kind kind;
	FILE *fp;                /* SRC_FILE                                  */
	const char *str;         /* SRC_STRING                                */
	size_t pos, len;
	const char *name;        /* for message prefixes; NULL for none       */
	unsigned long line;
};

static EditLine *ed;
static History *hist;
static char ed_prompt_buf[160];
static char *hist_path;

static char *ed_prompt(EditLine *e)
{
	(void)e;
	return ed_prompt_buf;
}

/* libedit's character reader: a pselect that only SIGINT can interrupt, so
 * Ctrl-C ends el_gets (returning -1 makes it give up the line). */
static int ed_getc(EditLine *e, wchar_t *wc)
{
	char cbuf[MB_LEN_MAX];
	size_t cbp = 0;
	sigset_t block, old;

	(void)e;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	for (;;) {
		fd_set rf;
		int n;

		sigprocmask(SIG_BLOCK, &block, &old);
		if (sh_sigint) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			return -1;
		}
		FD_ZERO(&rf);
		FD_SET(STDIN_FILENO, &rf);
		n = pselect(STDIN_FILENO + 1, &rf, NULL, NULL, NULL, &old);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		ssize_t r = read(STDIN_FILENO, cbuf + cbp, 1);
		if (r == 0)
			return 0;
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		cbp++;
		mbstate_t mbs;
		memset(&mbs, 0, sizeof(mbs));
		size_t k = mbrtowc(wc, cbuf, cbp, &mbs);
		if (k == (size_t)-2 && cbp < sizeof(cbuf))
			continue;
		if (k == (size_t)-1 || k == (size_t)-2) {
			cbp = 0;        /* drop an invalid sequence */
			continue;
		}
		return 1;
	}
}

static void history_path(void)
{
	const char *env = getenv("LWC_HISTORY");
	const char *home = getenv("HOME");

	if (env && *env) {
		hist_path = sh_strdup(env);
		return;
	}
	if (home == NULL || *home == '\0') {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (home == NULL)
		return;
	size_t n = strlen(home) + sizeof("/.lwc_history");
	hist_path = sh_malloc(n);
	snprintf(hist_path, n, "%s/.lwc_history", home);
}

static void editor_open(void)
{
	HistEvent ev;

	hist = history_init();
	if (hist) {
		history(hist, &ev, H_SETSIZE, SH_HISTORY_SIZE);
		history(hist, &ev, H_SETUNIQUE, 1);
		history_path();
		if (hist_path)
			history(hist, &ev, H_LOAD, hist_path);
	}
	ed = el_init("lwc", stdin, stdout, stderr);
	if (ed == NULL)
		return;
	el_set(ed, EL_EDITOR, "emacs");
	el_set(ed, EL_PROMPT, ed_prompt);
	el_set(ed, EL_GETCFN, ed_getc);
	if (hist)
		el_set(ed, EL_HIST, history, hist);
	el_set(ed, EL_BIND, "^R", "em-inc-search-prev", NULL);
	el_source(ed, NULL);        /* ~/.editrc */
}

static void editor_close(void)
{
	if (ed)
		el_end(ed);
	if (hist)
		history_end(hist);
	ed = NULL;
	hist = NULL;
	free(hist_path);
	hist_path = NULL;
}

/* One history entry per statement (or meta command), saved at once so a
 * crash loses nothing; the file is private (queries hold data). */
static void history_add(const char *text)
{
	HistEvent ev;

	if (hist == NULL || is_blank(text, strlen(text)))
		return;
	if (history(hist, &ev, H_ENTER, text) < 0)
		return;
	if (hist_path) {
		mode_t old = umask(077);
		history(hist, &ev, H_SAVE, hist_path);
		umask(old);
		(void)chmod(hist_path, 0600);
	}
}

/* The next input line without its newline (malloc'ed), or NULL at the end;
 * *cancelled is set when Ctrl-C ended the line at the terminal. */
static char *src_getline(struct src *in, int *cancelled)
{
	*cancelled = 0;
	switch (in->kind) {
	case SRC_TTY: {
		int n = 0;
		const char *l;

		if (ed == NULL) {
			/* no line editor (el_init failed): plain lines */
			struct src plain = { .kind = SRC_FILE, .fp = stdin };
			fputs(ed_prompt_buf, stdout);
			fflush(stdout);
			return src_getline(&plain, cancelled);
		}
		fflush(stdout);
		l = el_gets(ed, &n);
		if (sh_sigint) {
			sh_sigint = 0;
			*cancelled = 1;
			return NULL;
		}
		if (l == NULL || n <= 0)
			return NULL;
		size_t len = strlen(l);
		while (len > 0 && (l[len - 1] == '\n' || l[len - 1] == '\r'))
			len--;
		return sh_strndup(l, len);
	}
	case SRC_FILE: {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n = getline(&line, &cap, in->fp);

		if (n < 0) {
			free(line);
			return NULL;
		}
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		return line;
	}
	case SRC_STRING: {
		if (in->pos >= in->len)
			return NULL;
		const char *p = in->str + in->pos;
		const char *nl = memchr(p, '\n', in->len - in->pos);
		size_t n = nl ? (size_t)(nl - p) : in->len - in->pos;
		in->pos += n + (nl ? 1 : 0);
		while (n > 0 && p[n - 1] == '\r')
			n--;
		return sh_strndup(p, n);
	}
	}
	return NULL;
}

/* ---- meta commands ------------------------------------------------------------------ */

static enum sh_status run_source(struct sh *s, struct src *in);

static const char help_text[] =
	"General\n"
	"  \\q                      quit lwc (also Ctrl-D, \"quit\", \"exit\")\n"
	"  \\?                      show this help\n"
	"\n"
	"Query buffer and input\n"
	"  \\r                      reset (clear) the query buffer\n"
	"  \\i FILE                 execute statements from FILE\n"
	"  \\echo TEXT              print TEXT\n"
	"\n"
	"Informational\n"
	"  \\d                      list tables\n"
	"  \\d TABLE                describe a table's columns, keys and range indexes\n"
	"\n"
	"Formatting\n"
	"  \\x [on|off]             toggle expanded output\n"
	"  \\a                      toggle between aligned and unaligned output\n"
	"  \\t [on|off]             show only rows\n"
	"  \\pset null STRING       show NULL as STRING in tables (default: empty)\n"
	"  \\pset format aligned|unaligned|csv\n"
	"  \\timing [on|off]        toggle timing of statements\n"
	"\n"
	"Import and export (client-side files)\n"
	"  \\copy TABLE [(COLS)] FROM 'FILE' [CSV] [HEADER] [DELIMITER 'C'] [NULL 'S']\n"
	"  \\copy TABLE | (SELECT ...) TO 'FILE' [CSV] [HEADER] [DELIMITER 'C'] [NULL 'S']\n"
	"                          without CSV the format is text (tab-separated, \\N);\n"
	"                          FILE may be STDIN / STDOUT\n"
	"\n"
	"SQL: CREATE TABLE, DROP TABLE, CREATE [UNIQUE] INDEX, INSERT, SELECT,\n"
	"     UPDATE, DELETE; end each statement with ';'.  The subset and what runs\n"
	"     where: docs/client.md and docs/design.md section 10 (in the LWC sources).\n";

/* Next argument of a meta command: a word, or a '...' string with ''
 * escapes; NULL when none is left. */
static char *meta_arg(const char **pp)
{
	const char *p = *pp;
	struct sh_buf b = {0};

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0') {
		*pp = p;
		return NULL;
	}
	if (*p == '\'') {
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
	} else {
		while (*p && !isspace((unsigned char)*p))
			sh_buf_addc(&b, *p++);
	}
	*pp = p;
	if (b.p == NULL)
		return sh_strdup("");
	return b.p;
}

/* on/off argument of a toggle: 1, 0, or -1 for a bad word. */
static int toggle_arg(const char *arg, int cur)
{
	if (arg == NULL)
		return !cur;
	if (!strcasecmp(arg, "on") || !strcasecmp(arg, "true") || !strcmp(arg, "1"))
		return 1;
	if (!strcasecmp(arg, "off") || !strcasecmp(arg, "false") || !strcmp(arg, "0"))
		return 0;
	return -1;
}

char *sh_ident_fold(const char *t)
{
	size_t n = strlen(t);
	struct sh_buf b = {0};

	if (n >= 2 && t[0] == '"' && t[n - 1] == '"') {
		for (size_t i = 1; i + 1 < n; i++) {
			if (t[i] == '"' && t[i + 1] == '"')
				i++;
			sh_buf_addc(&b, t[i]);
		}
	} else {
		for (size_t i = 0; i < n; i++)
			sh_buf_addc(&b, (char)tolower((unsigned char)t[i]));
	}
	return b.p ? b.p : sh_strdup("");
}

static const char *type_name(const struct lwc_column *c, char *buf, size_t len)
{
	switch (c->type) {
	case LWC_TYPE_INT:
		return c->bits == 64 ? "bigint" : "integer";
	case LWC_TYPE_FLOAT:
		return "float";
	case LWC_TYPE_TEXT:
		if (c->max_len) {
			snprintf(buf, len, "varchar(%u)", (unsigned)c->max_len);
			return buf;
		}
		return "text";
	default:
		return "?";
	}
}

static enum sh_status meta_describe(struct sh *s, const char *arg)
{
	struct sh_table t;

	if (s->conn == NULL && reconnect(s) != 0)
		return SH_CONN_LOST;
	if (arg == NULL) {
		char **names = NULL;
		int rc = lwc_tables(s->conn, &names);
		if (rc != LWC_OK) {
			sh_error(s, NULL, -1, "could not list tables: %s", lwc_strerror(rc));
			return sh_fail_status(s);
		}
		if (names[0] == NULL) {
			printf("Did not find any tables.\n");
			lwc_free_names(names);
			return SH_OK;
		}
		sh_table_init(&t, 2);
		t.title = "List of tables";
		t.footer = 1;
		sh_table_set_header(&t, 0, "Name", 'l');
		sh_table_set_header(&t, 1, "Type", 'l');
		for (size_t i = 0; names[i]; i++) {
			const char *cells[2] = { names[i], "table" };
			sh_table_add_row(&t, cells, NULL);
		}
		lwc_free_names(names);
		sh_table_print(s, &t, stdout);
		sh_table_free(&t);
		return SH_OK;
	}

	struct lwc_column *cols = NULL;
	int ncols = 0;
	char *name = sh_ident_fold(arg);
	int rc = lwc_describe(s->conn, name, &cols, &ncols);
	if (rc != LWC_OK) {
		fflush(stdout);
		if (rc == LWC_ERR_NO_TABLE)
			fprintf(stderr, "Did not find any table named \"%s\".\n", arg);
		else
			sh_error(s, NULL, -1, "could not describe \"%s\": %s", name,
				 lwc_strerror(rc));
		free(name);
		return rc == LWC_ERR_NO_TABLE ? SH_FAIL : sh_fail_status(s);
	}
	struct sh_buf title = {0};
	sh_buf_printf(&title, "Table \"%s\"", name);
	free(name);
	sh_table_init(&t, 4);
	t.title = title.p;
	sh_table_set_header(&t, 0, "Column", 'l');
	sh_table_set_header(&t, 1, "Type", 'l');
	sh_table_set_header(&t, 2, "Nullable", 'l');
	sh_table_set_header(&t, 3, "Key", 'l');
	struct sh_buf idx = {0};
	for (int i = 0; i < ncols; i++) {
		char tb[32];
		const char *cells[4] = {
			cols[i].name, type_name(&cols[i], tb, sizeof(tb)),
			cols[i].not_null ? "not null" : "",
			cols[i].primary_key ? "primary key" : cols[i].unique ? "unique" : ""
		};
		sh_table_add_row(&t, cells, NULL);
	}
	/* psql's "Indexes:" footer: the keys, then the range indexes (every
	 * column answers equality through its tokens, so none is listed for it) */
	for (int pass = 0; pass < 3; pass++)
		for (int i = 0; i < ncols; i++) {
			const char *kind = pass == 0 && cols[i].primary_key ? "PRIMARY KEY" :
					   pass == 1 && cols[i].unique && !cols[i].primary_key ? "UNIQUE" :
					   pass == 2 && cols[i].range ? "RANGE" : NULL;

			if (kind == NULL)
				continue;
			if (idx.p == NULL)
				sh_buf_printf(&idx, "Indexes:\n");
			sh_buf_printf(&idx, "    %s (%s)%s\n", kind, cols[i].name,
				      pass == 2 && cols[i].range == 2 ? ", not complete (REINDEX TABLE)" : "");
		}
	if (idx.p != NULL) {
		t.footer = 1;
		t.footer_text = idx.p;
	}
	free(cols);
	sh_table_print(s, &t, stdout);
	sh_table_free(&t);
	sh_buf_free(&title);
	sh_buf_free(&idx);
	return SH_OK;
}

static enum sh_status meta_include(struct sh *s, const char *path)
{
	struct src in = { .kind = SRC_FILE };

	if (path == NULL || *path == '\0') {
		sh_error(s, NULL, -1, "\\i: missing required argument");
		return SH_FAIL;
	}
	if (s->depth >= SH_MAX_DEPTH) {
		sh_error(s, NULL, -1, "\\i: nested too deeply (%d levels)", SH_MAX_DEPTH);
		return SH_FAIL;
	}
	in.fp = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (in.fp == NULL) {
		sh_msg(s, "lwc: %s: %s", path, strerror(errno));
		return SH_FAIL;
	}
	in.name = in.fp == stdin ? "<stdin>" : path;
	s->depth++;
	enum sh_status st = run_source(s, &in);
	s->depth--;
	if (in.fp != stdin)
		fclose(in.fp);
	return st;
}

static enum sh_status meta_pset(struct sh *s, const char *rest)
{
	char *what = meta_arg(&rest), *val = meta_arg(&rest);
	enum sh_status st = SH_OK;

	if (what == NULL) {
		printf("Null display is \"%s\".\nOutput format is %s.\n", s->null_str,
		       s->format == SH_FMT_CSV ? "csv" :
		       s->format == SH_FMT_UNALIGNED ? "unaligned" : "aligned");
	} else if (!strcmp(what, "null")) {
		if (val) {
			free(s->null_str);
			s->null_str = val;
			val = NULL;
		}
		printf("Null display is \"%s\".\n", s->null_str);
	} else if (!strcmp(what, "format")) {
		if (val && !strcmp(val, "aligned"))
			s->format = SH_FMT_ALIGNED;
		else if (val && !strcmp(val, "unaligned"))
			s->format = SH_FMT_UNALIGNED;
		else if (val && !strcmp(val, "csv"))
			s->format = SH_FMT_CSV;
		else if (val) {
			sh_error(s, NULL, -1, "\\pset: allowed formats are aligned, unaligned, csv");
			st = SH_FAIL;
		}
		if (st == SH_OK)
			printf("Output format is %s.\n", s->format == SH_FMT_CSV ? "csv" :
			       s->format == SH_FMT_UNALIGNED ? "unaligned" : "aligned");
	} else {
		sh_error(s, NULL, -1, "\\pset: unknown option: %s", what);
		st = SH_FAIL;
	}
	free(what);
	free(val);
	return st;
}

static enum sh_status set_toggle(struct sh *s, const char *cmd, const char *rest, int *flag,
				 const char *what)
{
	char *arg = meta_arg(&rest);
	int v = toggle_arg(arg, *flag);

	if (v < 0) {
		sh_error(s, NULL, -1, "unrecognized value \"%s\" for \"\\%s\": Boolean expected",
			 arg, cmd);
		free(arg);
		return SH_FAIL;
	}
	free(arg);
	*flag = v;
	if (!s->quiet || s->interactive)
		printf("%s is %s.\n", what, v ? "on" : "off");
	return SH_OK;
}

/* Run the backslash command in line (after the backslash). */
static enum sh_status meta_command(struct sh *s, const char *line, struct sh_buf *query)
{
	const char *p = line;
	char cmd[32];
	size_t n = 0;

	while (*p && !isspace((unsigned char)*p) && n + 1 < sizeof(cmd))
		cmd[n++] = *p++;
	cmd[n] = '\0';
	const char *rest = p;

	if (!strcmp(cmd, "q") || !strcmp(cmd, "quit"))
		return SH_QUIT;
	if (!strcmp(cmd, "?") || !strcmp(cmd, "h") || !strcmp(cmd, "help")) {
		fputs(help_text, stdout);
		return SH_OK;
	}
	if (!strcmp(cmd, "r")) {
		sh_buf_reset(query);
		if (s->interactive)
			printf("Query buffer reset (cleared).\n");
		return SH_OK;
	}
	if (!strcmp(cmd, "timing"))
		return set_toggle(s, cmd, rest, &s->timing, "Timing");
	if (!strcmp(cmd, "x"))
		return set_toggle(s, cmd, rest, &s->expanded, "Expanded display");
	if (!strcmp(cmd, "t"))
		return set_toggle(s, cmd, rest, &s->tuples_only, "Tuples only");
	if (!strcmp(cmd, "a")) {
		s->format = s->format == SH_FMT_ALIGNED ? SH_FMT_UNALIGNED : SH_FMT_ALIGNED;
		printf("Output format is %s.\n",
		       s->format == SH_FMT_ALIGNED ? "aligned" : "unaligned");
		return SH_OK;
	}
	if (!strcmp(cmd, "pset"))
		return meta_pset(s, rest);
	if (!strcmp(cmd, "echo")) {
		/* psql's \echo: arguments ('...' unquoted) joined by a space */
		char *arg;
		int first = 1;
		while ((arg = meta_arg(&rest)) != NULL) {
			printf("%s%s", first ? "" : " ", arg);
			first = 0;
			free(arg);
		}
		putchar('\n');
		return SH_OK;
	}
	if (!strcmp(cmd, "d") || !strcmp(cmd, "dt") || !strcmp(cmd, "d+")) {
		char *arg = meta_arg(&rest);
		enum sh_status st = meta_describe(s, arg);
		free(arg);
		return st;
	}
	if (!strcmp(cmd, "i") || !strcmp(cmd, "include")) {
		char *arg = meta_arg(&rest);
		enum sh_status st = meta_include(s, arg);
		free(arg);
		return st;
	}
	if (!strcmp(cmd, "copy")) {
		if (s->conn == NULL && reconnect(s) != 0)
			return SH_CONN_LOST;
		return sh_copy(s, rest);
	}
	fflush(stdout);
	if (s->src_name)
		fprintf(stderr, "lwc:%s:%lu: ", s->src_name, s->src_line);
	fprintf(stderr, "invalid command \\%s\nTry \\? for help.\n", cmd);
	return SH_FAIL;
}

/* ---- the input loop ------------------------------------------------------------------ */

static void set_prompt(const struct sh *s, const struct sh_buf *q)
{
	struct lexstate ls;
	char c = '=';
	const char *user = s->conn ? lwc_conn_user(s->conn) : "";

	if (q->len) {
		lex_scan(q->p, q->len, &ls);
		c = ls.quote ? ls.quote : ls.paren ? '(' : '-';
	}
	snprintf(ed_prompt_buf, sizeof(ed_prompt_buf), "%s%c> ",
		 user && *user ? user : "lwc", c);
}

/* Execute every complete statement at the front of the query buffer. */
static enum sh_status run_complete(struct sh *s, struct sh_buf *q, int flush)
{
	enum sh_status st = SH_OK;

	while (q->len > 0) {
		size_t n = sql_next_statement(q->p, q->len);
		if (n == 0) {
			if (!flush || is_blank(q->p, q->len))
				break;
			n = q->len;       /* the end of a script ends a statement */
		}
		char *stmt = sh_strndup(q->p, n);
		memmove(q->p, q->p + n, q->len - n + 1);
		q->len -= n;
		/* positions in error reports count from the first non-blank */
		size_t b = 0, e = n;
		while (b < e && isspace((unsigned char)stmt[b]))
			b++;
		while (e > b && isspace((unsigned char)stmt[e - 1]))
			e--;
		stmt[e] = '\0';
		if (!is_blank(stmt + b, e - b))
			st = sh_exec(s, stmt + b);
		free(stmt);
		if (st != SH_OK && (s->on_error_stop || st == SH_CONN_LOST))
			break;
	}
	if (is_blank(q->p ? q->p : "", q->len))
		sh_buf_reset(q);
	return st;
}

static int is_word_line(const char *line, const char *word)
{
	size_t n = strlen(word);

	while (isspace((unsigned char)*line))
		line++;
	if (strncasecmp(line, word, n) != 0)
		return 0;
	line += n;
	while (isspace((unsigned char)*line) || *line == ';')
		line++;
	return *line == '\0';
}

static enum sh_status run_source(struct sh *s, struct src *in)
{
	struct sh_buf q = {0}, histq = {0};
	enum sh_status st = SH_OK, ret = SH_OK;
	const char *save_name = s->src_name;
	unsigned long save_line = s->src_line;
	FILE *save_fp = s->src_fp;
	int save_inter = s->interactive;

	s->src_name = in->name;
	s->src_line = 0;
	s->src_fp = in->kind == SRC_FILE ? in->fp : NULL;
	s->interactive = in->kind == SRC_TTY;
	for (;;) {
		int cancelled;
		char *line;

		if (in->kind == SRC_TTY)
			set_prompt(s, &q);
		line = src_getline(in, &cancelled);
		if (line == NULL) {
			if (cancelled) {
				fputs("^C\n", stdout);
				sh_buf_reset(&q);
				sh_buf_reset(&histq);
				continue;
			}
			if (in->kind == SRC_TTY) {
				fputs("\\q\n", stdout);
			} else if (q.len) {
				st = run_complete(s, &q, 1);
				if (st != SH_OK && (s->on_error_stop || st == SH_CONN_LOST))
					ret = st;
			}
			break;
		}
		in->line++;
		s->src_line = in->line;

		struct lexstate ls;
		const char *t = line;
		while (isspace((unsigned char)*t))
			t++;
		lex_scan(q.p ? q.p : "", q.len, &ls);
		if (*t == '\\' && !ls.quote) {
			if (in->kind == SRC_TTY)
				history_add(line);
			st = meta_command(s, t + 1, &q);
		} else if (in->kind == SRC_TTY && is_blank(q.p ? q.p : "", q.len) &&
			   (is_word_line(t, "quit") || is_word_line(t, "exit"))) {
			history_add(line);
			st = SH_QUIT;
		} else if (in->kind == SRC_TTY && is_blank(q.p ? q.p : "", q.len) &&
			   is_word_line(t, "help")) {
			printf("You are using lwc, the shell of LWC.\n"
			       "Type:  \\? for help with lwc commands and SQL\n"
			       "       \\q to quit\n");
			st = SH_OK;
		} else {
			sh_buf_adds(&q, line);
			sh_buf_addc(&q, '\n');
			if (in->kind == SRC_TTY) {
				if (histq.len)
					sh_buf_addc(&histq, strstr(histq.p, "--") ? '\n' : ' ');
				sh_buf_adds(&histq, line);
			}
			st = run_complete(s, &q, 0);
			if (in->kind == SRC_TTY && q.len == 0) {
				history_add(histq.p ? histq.p : "");
				sh_buf_reset(&histq);
			}
		}
		free(line);
		if (st == SH_QUIT) {
			ret = SH_QUIT;
			break;
		}
		if (st == SH_CONN_LOST && in->kind == SRC_TTY) {
			/* the terminal session goes on; sh_exec retries later */
			(void)reconnect(s);
			st = SH_FAIL;
		}
		if (st == SH_CONN_LOST || (st == SH_FAIL && s->on_error_stop)) {
			ret = st;
			break;
		}
	}
	sh_buf_free(&q);
	sh_buf_free(&histq);
	s->src_name = save_name;
	s->src_line = save_line;
	s->src_fp = save_fp;
	s->interactive = save_inter;
	return ret;
}

/* ---- main ------------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fputs("lwc, the shell of LWC (Long White Cloud).\n"
	      "\n"
	      "Usage:\n"
	      "  lwc --key FILE [OPTION]...\n"
	      "\n"
	      "Connection:\n"
	      "  -k, --key FILE            user key file (default: $LWC_KEY)\n"
	      "  -p, --proxy HOST:PORT     proxy address (default: from the key file)\n"
	      "\n"
	      "Input (in command-line order; default: stdin when not a terminal,\n"
	      "else the interactive shell):\n"
	      "  -c, --command SQL         run SQL or one backslash command (repeatable)\n"
	      "  -f, --file FILE           run the statements of FILE (- for stdin)\n"
	      "      --json-lines          machine protocol: {\"sql\": ...} lines in,\n"
	      "                            one JSON result line out\n"
	      "\n"
	      "Output:\n"
	      "  -A, --no-align            unaligned output\n"
	      "  -t, --tuples-only         rows only (no header, no footer)\n"
	      "  -F, --field-separator S   separator of unaligned output (default \"|\")\n"
	      "      --csv                 CSV output\n"
	      "  -x, --expanded            expanded (one line per column) output\n"
	      "      --null STRING         show NULL as STRING in tables\n"
	      "  -e, --echo-queries        print each statement before running it\n"
	      "  -q, --quiet               no command tags or messages\n"
	      "\n"
	      "  -?, --help                this help\n"
	      "\n"
	      "Exit status: 0 ok, 1 usage error, 2 connection failed or lost,\n"
	      "3 a statement of a script (-c, -f, stdin) failed.\n",
	      f);
}

enum { OPT_CSV = 256, OPT_JSON, OPT_NULL };

static void on_sigint(int sig)
{
	(void)sig;
	sh_sigint = 1;
}

struct action {
	char kind;               /* 'c' or 'f'                                */
	const char *arg;
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "proxy", required_argument, NULL, 'p' },
		{ "command", required_argument, NULL, 'c' },
		{ "file", required_argument, NULL, 'f' },
		{ "no-align", no_argument, NULL, 'A' },
		{ "tuples-only", no_argument, NULL, 't' },
		{ "field-separator", required_argument, NULL, 'F' },
		{ "expanded", no_argument, NULL, 'x' },
		{ "echo-queries", no_argument, NULL, 'e' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "json-lines", no_argument, NULL, OPT_JSON },
		{ "null", required_argument, NULL, OPT_NULL },
		{ "help", no_argument, NULL, '?' },
		{ NULL, 0, NULL, 0 }
	};
	struct sh s;
	struct action *acts;
	size_t nacts = 0;
	int json = 0, opt, code = SH_EXIT_OK;
	char err[512];

	/* \copy's 45 MB statements reuse their memory (common/heap.h) */
	lwc_keep_heap();
	memset(&s, 0, sizeof(s));
	s.fieldsep = sh_strdup("|");
	s.null_str = sh_strdup("");
	acts = sh_malloc(sizeof(*acts) * (size_t)(argc + 1));
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "k:p:c:f:AtF:xeq?", opts, NULL)) != -1) {
		switch (opt) {
		case 'k':
			s.key_file = optarg;
			break;
		case 'p':
			s.proxy = optarg;
			break;
		case 'c':
		case 'f':
			acts[nacts].kind = (char)opt;
			acts[nacts++].arg = optarg;
			break;
		case 'A':
			s.format = SH_FMT_UNALIGNED;
			break;
		case 't':
			s.tuples_only = 1;
			break;
		case 'F':
			free(s.fieldsep);
			s.fieldsep = sh_strdup(optarg);
			break;
		case 'x':
			s.expanded = 1;
			break;
		case 'e':
			s.echo = 1;
			break;
		case 'q':
			s.quiet = 1;
			break;
		case OPT_CSV:
			s.format = SH_FMT_CSV;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_NULL:
			free(s.null_str);
			s.null_str = sh_strdup(optarg);
			break;
		case '?':
			if (optopt == 0 && (!strcmp(argv[optind - 1], "-?") ||
					    !strcmp(argv[optind - 1], "--help"))) {
				usage(stdout);
				code = SH_EXIT_OK;
				goto out;
			}
			if (optopt && strchr("kpcfF", optopt))
				fprintf(stderr, "lwc: option requires an argument -- '%c'\n", optopt);
			else if (optopt)
				fprintf(stderr, "lwc: invalid option -- '%c'\n", optopt);
			else
				fprintf(stderr, "lwc: unrecognized option '%s'\n", argv[optind - 1]);
			fputs("Try \"lwc --help\" for more information.\n", stderr);
			code = SH_EXIT_USAGE;
			goto out;
		default:
			code = SH_EXIT_USAGE;
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "lwc: too many command-line arguments (first is \"%s\")\n"
			"Try \"lwc --help\" for more information.\n", argv[optind]);
		code = SH_EXIT_USAGE;
		goto out;
	}
	if (json && nacts) {
		fputs("lwc: --json-lines reads its statements from stdin; "
		      "it does not take -c or -f\n", stderr);
		code = SH_EXIT_USAGE;
		goto out;
	}
	if (s.key_file == NULL)
		s.key_file = getenv("LWC_KEY");
	if (s.key_file == NULL || *s.key_file == '\0') {
		fputs("lwc: no key file: use --key FILE or set LWC_KEY\n"
		      "Try \"lwc --help\" for more information.\n", stderr);
		code = SH_EXIT_USAGE;
		goto out;
	}
	if (access(s.key_file, R_OK) != 0) {
		fprintf(stderr, "lwc: cannot read key file \"%s\": %s\n", s.key_file,
			strerror(errno));
		code = SH_EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < nacts; i++) {
		if (acts[i].kind == 'f' && strcmp(acts[i].arg, "-") &&
		    access(acts[i].arg, R_OK) != 0) {
			fprintf(stderr, "lwc: %s: %s\n", acts[i].arg, strerror(errno));
			code = SH_EXIT_USAGE;
			goto out;
		}
	}

	signal(SIGPIPE, SIG_IGN);
	setlocale(LC_CTYPE, "");
	if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
		setlocale(LC_CTYPE, "C.UTF-8");

	if (connect_proxy(&s, err, sizeof(err)) != 0) {
		fprintf(stderr, "lwc: error: connection to the proxy failed: %s\n", err);
		code = SH_EXIT_CONN;
		goto out;
	}

	enum sh_status st = SH_OK;
	if (json) {
		code = sh_json_lines(&s, stdin, stdout);
		goto out;
	}
	if (nacts > 0 || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		s.on_error_stop = 1;
		if (nacts == 0) {
			acts[0].kind = 'f';
			acts[0].arg = "-";
			nacts = 1;
		}
		for (size_t i = 0; i < nacts && st != SH_QUIT; i++) {
			struct src in = { .kind = SRC_STRING };
			if (acts[i].kind == 'c') {
				in.str = acts[i].arg;
				in.len = strlen(in.str);
				st = run_source(&s, &in);
				if (st == SH_FAIL || st == SH_CONN_LOST)
					break;
				continue;
			}
			in.kind = SRC_FILE;
			if (!strcmp(acts[i].arg, "-")) {
				in.fp = stdin;
				in.name = "<stdin>";
			} else if ((in.fp = fopen(acts[i].arg, "r")) == NULL) {
				fprintf(stderr, "lwc: %s: %s\n", acts[i].arg, strerror(errno));
				st = SH_FAIL;
				break;
			} else {
				in.name = acts[i].arg;
			}
			st = run_source(&s, &in);
			if (in.fp != stdin)
				fclose(in.fp);
			if (st == SH_FAIL || st == SH_CONN_LOST)
				break;
		}
		code = st == SH_FAIL ? SH_EXIT_SCRIPT : st == SH_CONN_LOST ? SH_EXIT_CONN :
									      SH_EXIT_OK;
	} else {
		struct sigaction sa;
		struct src in = { .kind = SRC_TTY };

		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		sa.sa_handler = on_sigint;
		sigaction(SIGINT, &sa, NULL);
		editor_open();
		if (!s.quiet)
			printf("lwc: connected to LWC as user \"%s\".\n"
			       "Type \"\\?\" for help, \"\\q\" to quit.\n\n",
			       lwc_conn_user(s.conn));
		(void)run_source(&s, &in);
		editor_close();
		code = SH_EXIT_OK;
	}
	fflush(stdout);
out:
	if (s.conn)
		lwc_close(s.conn);
	free(s.fieldsep);
	free(s.null_str);
	free(acts);
	return code;
}
