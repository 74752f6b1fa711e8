/*
 * lwc_int.h - what the parts of liblwc (lwc*.c) share: the connection, the
 * table catalog, results, and the functions one part calls in another.
 */
#ifndef LWC_INT_H
#define LWC_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "chan.h"
#include "cry.h"
#include "lwc.h"
#include "lwc.pb-c.h"
#include "sql.h"
#include "userkey.h"

#define TIMEOUT_MS        120000
#define INSERT_FRAME_MAX  (48u << 20)    /* one Insert message (atomic)       */
#define RESP_MAX          WIRE_FRAME_MAX
#define SCHEMA_AAD        "lwc-schema"

struct ltable {
	struct sql_schema sc;
	uint8_t handle[CRY_TOKEN_BYTES];
	uint64_t unique;
	uint8_t rtok[64];                /* range tokens per row of column c  */
	uint64_t range_ready;            /* bit c: c's range tokens complete  */
	size_t ntok;                     /* tokens per row: ncols + sum(rtok) */
	struct ltable *next;
};

struct keys {
	uint8_t tok[CRY_KEY_BYTES];
	uint8_t rec[CRY_KEY_BYTES];
};

struct lwc_conn {
	int fd;
	struct chan *chan;
	char user[USERKEY_NAME_MAX + 1];
	struct keys *k;                  /* sodium_malloc'ed                 */
	uint32_t R, S;
	uint64_t seq;
	int broken;
	struct ltable *tables;
	int catalog_loaded;
	lwc_result *open;                /* a streaming result in progress   */
	struct lwc_insert *inflight;     /* lwc_insert_send: sent, unanswered,
					  * oldest first (at most two) */
	volatile sig_atomic_t *cancel;   /* lwc_set_cancel_flag              */
	uint32_t features;               /* the proxy's Catalog.features     */
};

/* A decoded row: values point into text (owned). */
struct lrow {
	struct sql_value *v;
	char *text;
};

struct lwc_result {
	enum lwc_result_status status;
	char *errmsg;
	int errpos, errcode;
	char tag[64];
	uint64_t count;

	/* query */
	lwc_conn *conn;                  /* set while streaming              */
	uint64_t seq;
	struct ltable *t;                /* the table (copy of its schema)   */
	struct sql_schema sc;            /* copy owned by the result         */
	struct sql_stmt *stmt;           /* owned                            */
	int filter;                      /* residual WHERE on candidates     */
	int ncols;
	char (*colname)[SQL_NAME_MAX + 1];
	enum lwc_type *coltype;
	int *colsrc;                     /* projection: source column        */
	int count_only;
	int64_t limit;
	/* stream state */
	Lwc__ProxyResponse *chunk;       /* current Rows chunk               */
	size_t chunk_pos;
	int stream_done;
	/* materialised rows (ORDER BY, COUNT(*)) */
	struct lrow *rows;
	size_t nrows, caprows, pos;
	int materialised;
	/* the first row, read by lwc_exec so errors show at once */
	struct lrow peek;
	int have_peek;
	/* current row */
	struct lrow cur;
	int have_cur;
	uint64_t returned;
	char (*numbuf)[64];              /* per column: text of numbers      */
};


/* lwc_record.c */
lwc_result *result_error(lwc_result *r, int code, int pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void row_free(struct lrow *row);
void schema_free(struct sql_schema *sc);
int schema_copy(struct sql_schema *dst, const struct sql_schema *src);
enum lwc_type ctype_to_type(enum sql_ctype t);
int table_handle(const struct keys *k, const char *table, uint8_t out[CRY_TOKEN_BYTES]);
int value_token(const struct keys *k, const struct sql_schema *sc, size_t c,
		       const struct sql_value *v, uint8_t out[CRY_TOKEN_BYTES]);
/* The same from column c's token state st (cry_token_begin; k is then
 * not used), or as value_token when st is NULL. */
int value_token_st(const struct keys *k, const struct sql_schema *sc, size_t c,
		   const cry_tokstate *st, const struct sql_value *v, uint8_t out[CRY_TOKEN_BYTES]);
struct tokmemo;
/* The same from st through a statement's memo m, as token position pos of
 * a row (tokmemo.h; m NULL: made). */
int value_token_memo(const cry_tokstate *st, const struct sql_value *v, struct tokmemo *m,
		     size_t pos, uint8_t out[CRY_TOKEN_BYTES]);
/* Encode and seal a row into out (S bytes) under a random nonce: nonce's
 * CRY_NONCE_BYTES when given (drawn by the caller, many at a time), else
 * one drawn here. */
int record_seal(lwc_conn *c, const struct sql_schema *sc, const struct sql_value *v,
		const uint8_t *nonce, uint8_t *out, char *err, size_t errlen);
int record_open(lwc_conn *c, const struct sql_schema *sc, const uint8_t *ct, size_t len,
		    struct lrow *row);
int schema_seal(lwc_conn *c, const struct sql_schema *sc, uint8_t **out, size_t *len);
int schema_open(lwc_conn *c, const uint8_t *blob, size_t len, struct ltable *t);

/* lwc_conn.c */
void conn_break(lwc_conn *c);
int conn_send(lwc_conn *c, Lwc__ProxyRequest *req);
int conn_recv(lwc_conn *c, uint64_t seq, Lwc__ProxyResponse **out);
const char *conn_lost_msg(int rc);
lwc_result *conn_error_result(lwc_conn *c, lwc_result *r, const Lwc__Error *e);
lwc_result *conn_call(lwc_conn *c, Lwc__ProxyRequest *req, uint64_t *count);
int conn_send_frame(lwc_conn *c, uint8_t *frame, size_t len);
lwc_result *conn_wait_done(lwc_conn *c, uint64_t seq, uint64_t *count);
struct ltable *catalog_cached(lwc_conn *c, const char *name);
int catalog_load(lwc_conn *c, char *err, size_t errlen);
struct ltable *catalog_find(lwc_conn *c, const char *name, int refresh);

/* lwc_range.c: range indexes (range.h) on the catalog's tables */
void ltable_ranges(struct ltable *t, const uint8_t *rtok, size_t n, uint64_t ready);
unsigned range_tokens_for(const struct sql_coldef *cd);
/* The tokens of a row of t (ncols, then the range tokens), into out, from
 * the token states of t's columns (row_token_states: the set-up of each
 * token's keyed BLAKE2b done once a column; the key block is still
 * compressed for every token, tokmemo.h). */
/* row_tokens but for the columns of skip (bit c: column c < 64), whose
 * tokens in out are left as they are. */
int row_tokens_skip(const struct ltable *t, const cry_tokstate *ts, const struct sql_value *v,
		    uint64_t skip, uint8_t *out);
int row_tokens(const struct ltable *t, const cry_tokstate *ts, const struct sql_value *v,
	       uint8_t *out);
/* row_tokens_skip through a statement's memo of the tokens it made
 * (tokmemo.h: t->ntok positions, a row's tokens in order); NULL: none. */
int row_tokens_memo(const struct ltable *t, const cry_tokstate *ts, const struct sql_value *v,
		    uint64_t skip, uint8_t *out, struct tokmemo *memo);
/* t's column token states for a statement's rows (sodium_malloc'ed), NULL
 * when out of memory; row_token_states_free wipes and frees. */
cry_tokstate *row_token_states(const struct keys *k, const struct ltable *t);
void row_token_states_free(cry_tokstate *ts, const struct ltable *t);
/* The tokens of the cover of lo..hi (either NULL: no limit) on column col
 * of t: *usable 0 when the column has no complete range index or the
 * literals do not suit it; else *root (every non-NULL value) or *n tokens
 * in *toks (malloc'ed; n = 0: the range is empty). */
int range_cover_tokens(const struct keys *k, const struct ltable *t, size_t col,
		       const struct sql_value *lo, int lo_incl, const struct sql_value *hi,
		       int hi_incl, int *usable, int *root, uint8_t **toks, size_t *n);
/* LIKE 'p%': the one token of the texts starting with the pattern's fixed
 * prefix; *usable 0 when none applies. */
int range_prefix_token(const struct keys *k, const struct ltable *t, size_t col,
		       const char *pattern, size_t plen, int *usable,
		       uint8_t tok[CRY_TOKEN_BYTES]);
/* lwc_where.c */
void pred_free(Lwc__Pred *p);
int where_translate(lwc_conn *c, const struct sql_schema *sc, struct sql_expr *where,
		     Lwc__Pred **out, int *exact, char *err, size_t errlen, int *errpos, int *code);
/* The literals of a bound general SELECT's conditions that the client
 * evaluates (select list, FILTER, GROUP BY, HAVING, ORDER BY, and a join's
 * ON and WHERE), read as where_translate reads the WHERE's: a quoted number
 * compared with a numeric column of sc (the statement's row) is a number.
 * LWC_OK, or an error as where_translate's. */
int query_fix_literals(const struct sql_schema *sc, struct sql_stmt *st, char *err, size_t errlen,
		       int *errpos, int *code);

/* lwc_result.c */
extern lwc_result nomem_result;         /* returned when there is no memory */
lwc_result *result_new(void);
void result_drain(lwc_result *r);
int result_stream_next(lwc_result *r, struct lrow *row);
int result_materialise(lwc_result *r);
const struct sql_value *result_cur_value(const lwc_result *r, int col);

/* lwc_write.c */
/* Whether n rows are worth two threads: min_rows or more, and a second core. */
int split_worth(size_t n, size_t min_rows);
/* fn(a) here and fn(b) on a thread of its own (after fn(a) when no thread
 * can be made); returns when both are done. */
void run_pair(void *(*fn)(void *), void *a, void *b);
size_t insert_max_rows(const lwc_conn *c, const struct ltable *t);
lwc_result *result_command(const char *tag, uint64_t count);
lwc_result *exec_create(lwc_conn *c, struct sql_stmt *st);
lwc_result *exec_drop(lwc_conn *c, struct sql_stmt *st);
lwc_result *error_no_table(const char *name, int pos);
lwc_result *exec_index(lwc_conn *c, struct sql_stmt *st);
lwc_result *exec_reindex(lwc_conn *c, struct sql_stmt *st);
lwc_result *unique_error(lwc_result *r, const struct sql_schema *sc, size_t off);
lwc_result *exec_insert(lwc_conn *c, struct sql_stmt *st);
/* INSERT ... VALUES st into t, sealed and packed as statement seq for
 * conn_send_frame (to run only if statement after_seq succeeded, when not
 * 0), with no I/O: NULL (*rows: how many), or an error. */
lwc_result *insert_prepare(lwc_conn *c, struct sql_stmt *st, struct ltable *t, uint64_t seq,
			   uint64_t after_seq, uint8_t **frame, size_t *frame_len, uint64_t *rows);
/* The proxy's answer to the INSERT sent as statement seq. */
lwc_result *insert_result(lwc_conn *c, uint64_t seq, const struct sql_schema *sc);
/* lwc_exec's one retry: the proxy refused a statement (nothing changed)
 * because another user added a range index since the catalog was read. */
int indexes_changed(const lwc_result *r);

/* lwc_select.c */
lwc_result *fetch_rows(lwc_conn *c, struct sql_stmt *owner, struct ltable *t,
			      struct sql_expr *cond);
lwc_result *exec_select(lwc_conn *c, struct sql_stmt *st, int own_stmt);

/* lwc_modify.c */
lwc_result *exec_update_delete(lwc_conn *c, struct sql_stmt *st);

/* lwc_subquery.c */
lwc_result *resolve_subqueries(lwc_conn *c, struct sql_stmt *st);

#endif
