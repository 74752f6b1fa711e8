/*
 * lwc.h - liblwc, the client library of LWC.
 *
 * A user's program talks SQL to an LWC database through this API; the
 * library parses the SQL, turns every literal into a keyword token and every
 * row into a record ciphertext under the shared user key K_U, wraps the
 * query under the user's own K_DBU and sends it to the proxy.  The proxy and
 * the cloud never see SQL text, values or names.
 *
 *   lwc_conn *c;
 *   char err[256];
 *   if (lwc_connect(&c, "alice.key", NULL, err, sizeof(err)) != LWC_OK) ...
 *   lwc_result *r = lwc_exec(c, "SELECT name, age FROM people WHERE age > 30");
 *   if (lwc_result_status(r) == LWC_RESULT_ERROR) puts(lwc_result_error(r));
 *   while (lwc_result_next(r) == 1)
 *       printf("%s %lld\n", lwc_value_text(r, 0, NULL), (long long)lwc_value_int(r, 1));
 *   lwc_result_free(r);
 *   lwc_close(c);
 *
 * Results stream: rows arrive from the proxy in chunks and lwc_result_next
 * fetches the next chunk when the current one is used up, so a result of a
 * million rows never needs a million rows in memory (ORDER BY is the
 * exception: sorting needs them all).  While a result is open its
 * connection is busy: free the result (which drains what is left) before
 * the next lwc_exec.
 *
 * One connection is used by one thread at a time; different connections are
 * independent.  Every function is safe to call with NULL where it takes a
 * result (it then returns an error value).
 */
#ifndef LWC_H
#define LWC_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "lwc_err.h"

typedef struct lwc_conn lwc_conn;
typedef struct lwc_result lwc_result;

/* Value and column types (the order is the token type tags'). */
enum lwc_type {
	LWC_TYPE_NULL = 0,
	LWC_TYPE_INT = 1,      /* INT, INTEGER (32-bit), BIGINT (64-bit)      */
	LWC_TYPE_FLOAT = 2,    /* FLOAT (IEEE double)                          */
	LWC_TYPE_TEXT = 3      /* TEXT, TEXT(n), VARCHAR(n)                    */
};

enum lwc_result_status {
	LWC_RESULT_ROWS = 1,   /* a query: columns, then rows                  */
	LWC_RESULT_COMMAND,    /* a statement: a tag and an affected-row count */
	LWC_RESULT_ERROR       /* an error: a message, maybe a position        */
};

/* Connect to the proxy with a user key file (LWC-USER-KEY-1).  proxy is
 * "HOST:PORT", or NULL for the "# proxy:" line of the key file.  On failure
 * *out is NULL and err says why (a refused key file, an unknown or revoked
 * user, an unreachable proxy). */
int lwc_connect(lwc_conn **out, const char *key_file, const char *proxy,
		char *err, size_t errlen) LWC_WUR;
void lwc_close(lwc_conn *c);

/* The user name of the connection. */
const char *lwc_conn_user(const lwc_conn *c);
/* 1 while the connection is usable; 0 after it broke (e.g. revoked). */
int lwc_conn_ok(const lwc_conn *c);

/* Cancellation (the shell's Ctrl-C): while *flag is non-zero (a signal
 * handler may set it), an UPDATE or a DELETE with a residual predicate in
 * progress aborts at its next round trip with "canceling statement due to
 * user request": the proxy writes none of it (all or nothing) and the
 * connection stays usable.  A statement the proxy runs in one round trip
 * (INSERT, SELECT, a DELETE on index predicates only) completes.  NULL
 * turns it off. */
void lwc_set_cancel_flag(lwc_conn *c, volatile sig_atomic_t *flag);

/* Run one SQL statement (a trailing ';' is allowed).  Never returns NULL;
 * check lwc_result_status. */
lwc_result *lwc_exec(lwc_conn *c, const char *sql);

enum lwc_result_status lwc_result_status(const lwc_result *r);
/* Error: message, byte offset in the SQL (-1 when none) and lwc_err code. */
const char *lwc_result_error(const lwc_result *r);
int lwc_result_error_pos(const lwc_result *r);
int lwc_result_error_code(const lwc_result *r);
/* Command: the psql-style tag ("INSERT 0 3", "UPDATE 2", "DELETE 0",
 * "CREATE TABLE", "DROP TABLE", "CREATE INDEX"); for a query "SELECT n"
 * once all rows were read. */
const char *lwc_result_tag(const lwc_result *r);
/* Rows inserted, updated or deleted; rows returned so far for a query. */
uint64_t lwc_result_count(const lwc_result *r);

/* Query columns. */
int lwc_result_ncols(const lwc_result *r);
const char *lwc_result_colname(const lwc_result *r, int col);
enum lwc_type lwc_result_coltype(const lwc_result *r, int col);

/* Advance to the next row: 1 when there is one, 0 at the end, a negative
 * lwc_err code when the stream failed (the result then carries the error). */
int lwc_result_next(lwc_result *r);

/* Values of the current row. */
enum lwc_type lwc_value_type(const lwc_result *r, int col);
int lwc_value_is_null(const lwc_result *r, int col);
int64_t lwc_value_int(const lwc_result *r, int col);
double lwc_value_float(const lwc_result *r, int col);
/* Text (NUL-terminated; *len without the NUL when len is not NULL); for
 * INT and FLOAT values their text form (as PostgreSQL prints them); "" for
 * NULL.  Valid until the next lwc_result_next (each column has its own
 * buffer). */
const char *lwc_value_text(lwc_result *r, int col, size_t *len);

void lwc_result_free(lwc_result *r);

/* Tables of the database (for \d): names in a NULL-terminated array the
 * caller frees with lwc_free_names. */
int lwc_tables(lwc_conn *c, char ***names) LWC_WUR;
void lwc_free_names(char **names);
/* Describe a table: column i's name, type, declared maximum length (0: none),
 * constraints and range index.  LWC_ERR_NO_TABLE when unknown. */
struct lwc_column {
	char name[64];
	enum lwc_type type;
	int bits;              /* INT: 32 or 64                                */
	uint32_t max_len;      /* TEXT(n)/VARCHAR(n): n; 0 otherwise           */
	int primary_key;
	int not_null;          /* NOT NULL or PRIMARY KEY                      */
	int unique;
	int range;             /* a range index (CREATE INDEX): 1 ready, 2 not
	                          complete (REINDEX TABLE completes it)         */
};
int lwc_describe(lwc_conn *c, const char *table, struct lwc_column **cols, int *ncols)
	LWC_WUR;
/* The most rows of table one INSERT may carry (one request to the proxy,
 * all or nothing; a larger INSERT is refused with LWC_ERR_TOO_BIG).  For
 * loaders that size their statements (\copy).  LWC_ERR_NO_TABLE when
 * unknown. */
int lwc_insert_max_rows(lwc_conn *c, const char *table, uint64_t *rows) LWC_WUR;

/*
 * Bulk loading (\copy, lwc-bench): an INSERT's work on the client apart from
 * its round trip, so that a loader makes statement i + 1 (converts its
 * values, seals its records, derives its tokens, packs it) while statement
 * i is at the proxy, and sends it before statement i is answered:
 *
 *   lwc_insert *next = lwc_insert_prepare(c, sql, &r);  // no I/O
 *   lwc_insert_send(c, next);                // i and i + 1 in flight
 *   r = lwc_insert_wait(c);                  // the answer to i
 *
 * A statement prepared while another is in flight follows it: the proxy
 * runs it only if the one before it succeeded, and otherwise answers it
 * LWC_ERR_ABORTED, not run, so a failure stops a load exactly where lwc_exec
 * would (the loader still waits for the answers in flight).  The proxy
 * reads and opens statement i + 1 while statement i commits.  Each
 * statement is all or nothing as with lwc_exec.  lwc_insert_prepare takes
 * INSERT ... VALUES only; while an INSERT is in flight it reads nothing
 * from the proxy, so the table must be in the catalog already read (any
 * earlier statement on it reads it), else LWC_ERR_BUSY: wait, then prepare
 * again.  NULL and an error result in *err when the statement fails before
 * it is sent (bad SQL or values, unknown table, too many rows).  Until the
 * last lwc_insert_wait, lwc_exec and the catalog calls refuse with
 * LWC_ERR_BUSY.
 */
typedef struct lwc_insert lwc_insert;
lwc_insert *lwc_insert_prepare(lwc_conn *c, const char *sql, lwc_result **err);
/* Rows of a prepared INSERT. */
uint64_t lwc_insert_rows(const lwc_insert *ins);
/* Send a prepared INSERT, which the connection then owns (freed whatever
 * the outcome).  LWC_ERR_BUSY while a result is open, while two are in
 * flight, or while one is in flight that ins was not prepared to follow
 * (prepared before it was sent); LWC_ERR_CLOSED when the connection is
 * lost. */
int lwc_insert_send(lwc_conn *c, lwc_insert *ins) LWC_WUR;
/* How many INSERTs are in flight (sent, not yet waited for): 0, 1 or 2. */
int lwc_insert_pending(const lwc_conn *c);
/* The result of the oldest INSERT in flight (NULL when there is none), as
 * lwc_exec would give it (including its one retry when another user changed
 * the table's indexes meanwhile; the one in flight after it then runs again
 * in its turn). */
lwc_result *lwc_insert_wait(lwc_conn *c);
/* A prepared INSERT not sent. */
void lwc_insert_free(lwc_insert *ins);

#endif
