/*
 * shell.h - internals of the `lwc` shell (bin/lwc), shared by its modules:
 *
 *   shell.c        options, connection, the input loop (scripts and the
 *                  interactive editor), backslash commands, error reports
 *   shell_print.c  result output as psql prints it: aligned tables, expanded
 *                  records, unaligned rows and CSV
 *   shell_copy.c   \copy: CSV and text-format reading and writing, batched
 *                  INSERTs with a progress bar
 *   shell_json.c   --json-lines, the machine protocol of the conformance
 *                  runner (../shared/conformance/run.py)
 *
 * The shell is a program, not a library: it prints its own messages and
 * exits on out-of-memory (like psql's pg_malloc); liblwc underneath follows
 * the library rules.
 */
#ifndef LWC_SHELL_H
#define LWC_SHELL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lwc.h"

/* Exit codes (psql's, with 3 for a failed script statement). */
enum sh_exit {
	SH_EXIT_OK = 0,
	SH_EXIT_USAGE = 1,      /* bad options, no key file                   */
	SH_EXIT_CONN = 2,       /* could not connect, or the connection broke */
	SH_EXIT_SCRIPT = 3      /* a statement of -c, -f or stdin failed      */
};

/* Outcome of running one statement, meta command or input source. */
enum sh_status {
	SH_OK = 0,
	SH_FAIL,                /* the statement failed (reported)            */
	SH_QUIT,                /* \q                                         */
	SH_CONN_LOST            /* the connection broke (reported)            */
};

enum sh_format {
	SH_FMT_ALIGNED = 0,
	SH_FMT_UNALIGNED,       /* -A                                         */
	SH_FMT_CSV              /* --csv                                      */
};

/* Settings and session state.  One per process. */
struct sh {
	lwc_conn *conn;          /* NULL until connected                      */
	const char *key_file;    /* --key or LWC_KEY                          */
	const char *proxy;       /* --proxy HOST:PORT, NULL: from the key file */

	enum sh_format format;
	int tuples_only;         /* -t: no header, no footer                  */
	int expanded;            /* \x: one "column | value" line per field   */
	int timing;              /* \timing: "Time: 1.234 ms" after each      */
	int quiet;               /* -q: no command tags, no banners           */
	int echo;                /* -e: print each statement before running   */
	char *fieldsep;          /* -F: unaligned separator, "|"              */
	char *null_str;          /* shown for NULL in tables (\pset null)     */

	int interactive;         /* reading from the terminal editor          */
	int on_error_stop;       /* scripts stop at the first failed statement */
	const char *src_name;    /* script being read, for "lwc:FILE:LINE: "  */
	unsigned long src_line;  /* its current line                          */
	FILE *src_fp;            /* the script's stream (\copy ... FROM STDIN) */
	int depth;               /* \i nesting                                */
};

/* ---- memory and strings (shell.c) ------------------------------------------ */

void *sh_malloc(size_t n);
void *sh_realloc(void *p, size_t n);
char *sh_strdup(const char *s);
char *sh_strndup(const char *s, size_t n);

/* A growing byte buffer, always NUL-terminated. */
struct sh_buf {
	char *p;
	size_t len, cap;
};
void sh_buf_add(struct sh_buf *b, const void *data, size_t n);
void sh_buf_adds(struct sh_buf *b, const char *s);
void sh_buf_addc(struct sh_buf *b, char c);
void sh_buf_printf(struct sh_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sh_buf_reset(struct sh_buf *b);
void sh_buf_free(struct sh_buf *b);

/* The valid UTF-8 sequence at s[0..n): its length and code point, or 0 when
 * it is not one (overlong, surrogate, beyond U+10FFFF, truncated). */
size_t sh_utf8(const char *s, size_t n, uint32_t *cp);

/* Display width of s[0..n) on a terminal (UTF-8 aware). */
size_t sh_width(const char *s, size_t n);

/* An identifier as the SQL parser reads it: "Quoted" verbatim, else folded
 * to lower case (malloc'ed). */
char *sh_ident_fold(const char *t);

/* Monotonic clock in milliseconds. */
double sh_now_ms(void);

/* ---- messages (shell.c) ---------------------------------------------------- */

/* "ERROR:  msg" on stderr, with the script position prefix when reading a
 * script and, when pos >= 0, psql's "LINE n:" excerpt of sql with a caret. */
void sh_error(const struct sh *s, const char *sql, int pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A non-SQL message on stderr ("lwc: ..."), with the script prefix. */
void sh_msg(const struct sh *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Set by the SIGINT handler of the interactive shell: cancels the input
 * line at the prompt, stops printing rows while a statement runs. */
extern volatile sig_atomic_t sh_sigint;

/* Run one SQL statement and print its outcome as configured. */
enum sh_status sh_exec(struct sh *s, const char *sql);
/* The status for a failed result: SH_CONN_LOST when the connection broke. */
enum sh_status sh_fail_status(const struct sh *s);

/* ---- output (shell_print.c) --------------------------------------------------- */

/* Alignment of a column: 'l' (text) or 'r' (numbers). */
struct sh_table {
	const char *title;       /* centered above the table, or NULL         */
	int ncols;
	char **headers;          /* ncols                                     */
	char *aligns;            /* ncols                                     */
	int footer;              /* print "(N rows)" after the rows           */
	const char *footer_text; /* with footer: these lines instead (\d's)   */
	size_t nrows, caprows;
	char **cells;            /* nrows * ncols; NULL: SQL NULL             */
};

void sh_table_init(struct sh_table *t, int ncols);
void sh_table_set_header(struct sh_table *t, int col, const char *name, char align);
/* Append a row of ncols cells (copied; NULL entries are SQL NULLs). */
void sh_table_add_row(struct sh_table *t, const char *const *cells, const size_t *lens);
void sh_table_free(struct sh_table *t);
/* Print as configured (aligned, expanded, unaligned, CSV) with the footer. */
void sh_table_print(const struct sh *s, const struct sh_table *t, FILE *out);

/* Print a query result; returns SH_OK or SH_FAIL (error reported) when the
 * row stream failed.  *nrows gets the number of rows printed. */
enum sh_status sh_print_rows(struct sh *s, lwc_result *r, const char *sql, FILE *out,
			     uint64_t *nrows);

/* One CSV field: quoted when it holds the delimiter, a quote, CR or LF, is
 * empty (NULL is written unquoted and empty) or is the end marker "\.". */
void sh_csv_field(struct sh_buf *b, const char *v, size_t len, char delim);

/* ---- \copy (shell_copy.c) ---------------------------------------------------------- */

/* args: everything after "\copy". */
enum sh_status sh_copy(struct sh *s, const char *args);

/* ---- --json-lines (shell_json.c) ----------------------------------------------------- */

/* Strict parse of one request line {"sql": "..."}: *sql is malloc'ed. */
int sh_json_request(const char *line, size_t len, char **sql, char *err, size_t errlen);
/* JSON string literal of s[0..n) (invalid UTF-8 becomes U+FFFD). */
void sh_json_string(struct sh_buf *b, const char *s, size_t n);
/* Serve the protocol on in/out until EOF; the exit code. */
int sh_json_lines(struct sh *s, FILE *in, FILE *out);

#endif
