/*
 * pxc.h - a small test client of lwc-proxy: it does what liblwc will do on
 * the user side (tokens and record ciphertexts under K_U, the K_DBU
 * channel), without SQL.
 *
 *   struct pxc_table t;                  typed table definition
 *   pxc_table_def(&t, "people", "id:int:pk,name:text,age:int");
 *   pxc_connect(&c, addr, "alice", kdbu, ku, err, sizeof(err));
 *   pxc_create_table(c, &t, 0);
 *   pxc_insert(c, &t, rows, n, &count);
 *   p = pxc_and(pxc_eq_text(&t, "name", "bob"), pxc_eq_int(&t, "age", 7));
 *   pxc_select(c, &t, p, &res);          decrypted, decoded rows
 *   pxc_update(c, &t, p, fn, arg, &count);   fn sees each old row, writes the new
 *   pxc_delete(c, &t, p, &count);
 *
 * Record encoding (R bytes, zero padded, R = 128 by default): one byte with
 * the column count, then per column a type byte (CRY_TAG_*) followed by an
 * 8-byte big-endian integer (INT), a 2-byte big-endian length and the bytes
 * (TEXT), or nothing (NULL).  The record is sealed with cry_record_seal under
 * the record key, AAD = table name.
 *
 * Every call returns LWC_OK or a negative lwc_err code; a proxy Error is
 * returned as its code with its message in pxc_errmsg().  None of the calls
 * uses cmocka, so they also run in worker threads.
 */
#ifndef LWC_TEST_PXC_H
#define LWC_TEST_PXC_H

#include <stddef.h>
#include <stdint.h>

#include "cry.h"
#include "lwc.pb-c.h"

#define PXC_MAX_COLS   8
#define PXC_TEXT_MAX   96
#define PXC_R_DEFAULT  128u
#define PXC_TIMEOUT_MS 30000

/* ---- values, rows, tables ------------------------------------------------ */

struct pxc_val {
	uint8_t tag;                  /* CRY_TAG_NULL, CRY_TAG_INT, CRY_TAG_TEXT */
	int64_t i;
	char s[PXC_TEXT_MAX + 1];
};

struct pxc_row {
	int ncols;
	struct pxc_val v[PXC_MAX_COLS];
};

struct pxc_table {
	char name[64];
	int ncols;
	int pk;                       /* -1: none */
	char col[PXC_MAX_COLS][32];
	uint8_t type[PXC_MAX_COLS];   /* CRY_TAG_INT or CRY_TAG_TEXT */
};

/* spec: "name:int[:pk],name:text,..."; returns LWC_ERR_ARG when malformed. */
int pxc_table_def(struct pxc_table *t, const char *name, const char *spec);
/* Column index by name, -1 when absent. */
int pxc_col(const struct pxc_table *t, const char *col);

struct pxc_val pxc_int(int64_t v);
struct pxc_val pxc_text(const char *s);
struct pxc_val pxc_null(void);
int pxc_val_eq(const struct pxc_val *a, const struct pxc_val *b);
/* Row from values; ncols is taken from t. */
struct pxc_row pxc_row_make(const struct pxc_table *t, const struct pxc_val *vals);
int pxc_row_eq(const struct pxc_row *a, const struct pxc_row *b);
/* Canonical text of a row ("3|'bob'|NULL"), for sorting and messages. */
void pxc_row_str(const struct pxc_row *r, char *buf, size_t len);
/* Sort rows by their canonical text. */
void pxc_rows_sort(struct pxc_row *rows, size_t n);

/* ---- keys and client-side crypto ----------------------------------------- */

struct pxc_keys {
	uint8_t tok[32];              /* token key  = kdf(K_U, CRY_SUB_TOKEN)  */
	uint8_t rec[32];              /* record key = kdf(K_U, CRY_SUB_RECORD) */
	size_t R;                     /* record bytes                          */
};

int pxc_keys_init(struct pxc_keys *k, const uint8_t ku[32], size_t R);
/* Table handle = cry_token(tok, "", "", TEXT, name). */
void pxc_handle(const struct pxc_keys *k, const char *table, uint8_t out[16]);
/* Token of a value in column col of t. */
void pxc_token(const struct pxc_keys *k, const struct pxc_table *t, int col,
	       const struct pxc_val *v, uint8_t out[16]);
/* Encode and seal a row: out gets S = R + 40 bytes. */
int pxc_seal_row(const struct pxc_keys *k, const struct pxc_table *t,
		 const struct pxc_row *r, uint8_t *out);
/* Open and decode a record of S bytes. */
int pxc_open_row(const struct pxc_keys *k, const struct pxc_table *t,
		 const uint8_t *rec, size_t len, struct pxc_row *r);
/* A protobuf Row (record + one token per column), heap-allocated; free with
 * pxc_pbrow_free. */
Lwc__Row *pxc_pbrow(const struct pxc_keys *k, const struct pxc_table *t,
		    const struct pxc_row *r);
void pxc_pbrow_free(Lwc__Row *row);

/* ---- predicates ----------------------------------------------------------- */

/* Builders return heap Preds; the compound ones take ownership of their
 * arguments.  Free the root with pxc_pred_free.  Unknown column names abort. */
Lwc__Pred *pxc_all(void);
Lwc__Pred *pxc_none(void);
Lwc__Pred *pxc_eq(const struct pxc_keys *k, const struct pxc_table *t, const char *col,
		  struct pxc_val v);
Lwc__Pred *pxc_eq_int(const struct pxc_keys *k, const struct pxc_table *t, const char *col,
		      int64_t v);
Lwc__Pred *pxc_eq_text(const struct pxc_keys *k, const struct pxc_table *t, const char *col,
		       const char *s);
Lwc__Pred *pxc_is_null(const struct pxc_keys *k, const struct pxc_table *t, const char *col);
Lwc__Pred *pxc_in(const struct pxc_keys *k, const struct pxc_table *t, const char *col,
		  const struct pxc_val *vals, size_t n);
Lwc__Pred *pxc_and(Lwc__Pred *a, Lwc__Pred *b);
Lwc__Pred *pxc_or(Lwc__Pred *a, Lwc__Pred *b);
Lwc__Pred *pxc_not(Lwc__Pred *a);
/* A raw predicate (for bad-input tests): op, col, tokens copied. */
Lwc__Pred *pxc_raw_pred(Lwc__Pred__Op op, uint32_t col, const uint8_t *tokens,
			size_t ntokens, size_t toklen);
void pxc_pred_free(Lwc__Pred *p);

/* ---- connection ----------------------------------------------------------- */

struct pxc;

/* TCP connect and channel handshake as user.  On failure *out is NULL, the
 * server's message (or the local reason) is in err. */
int pxc_connect(struct pxc **out, const char *addr, const char *user,
		const uint8_t kdbu[32], const uint8_t ku[32], char *err, size_t errlen);
void pxc_close(struct pxc *c);
const char *pxc_errmsg(const struct pxc *c);
const struct pxc_keys *pxc_keys(const struct pxc *c);
int pxc_fd(const struct pxc *c);
struct chan *pxc_chan(const struct pxc *c);
/* Read timeout of every wait (ms). */
void pxc_set_timeout(struct pxc *c, int ms);
/* Number of Rows/Candidates chunks and records the last statement received
 * before its final answer (to check an Error carried no data). */
size_t pxc_last_chunks(const struct pxc *c);
size_t pxc_last_records(const struct pxc *c);
/* 1 when the last statement's error code came from a proxy Error answer,
 * 0 when it is local (I/O, timeout, a malformed answer). */
int pxc_error_from_proxy(const struct pxc *c);

/* Statements.  count may be NULL. */
int pxc_create_table(struct pxc *c, const struct pxc_table *t, int if_not_exists);
int pxc_drop_table(struct pxc *c, const struct pxc_table *t, int if_exists);
int pxc_create_index(struct pxc *c, const struct pxc_table *t, const char *col, int unique);
int pxc_insert(struct pxc *c, const struct pxc_table *t, const struct pxc_row *rows,
	       size_t n, uint64_t *count);

struct pxc_result {
	struct pxc_row *rows;
	size_t n;
	uint64_t done_count;
};
void pxc_result_free(struct pxc_result *r);

/* A SELECT's request only, its answer left to pxc_recv; takes ownership of
 * where (NULL: ALL). */
int pxc_select_send(struct pxc *c, const struct pxc_table *t, Lwc__Pred *where, int candidates);

/* SELECT; takes ownership of where (NULL: ALL).  Rows are decrypted. */
int pxc_select(struct pxc *c, const struct pxc_table *t, Lwc__Pred *where, int candidates,
	       struct pxc_result *res);

/* Decision callback of UPDATE / interactive DELETE: return 1 to change
 * (UPDATE: *newrow holds the replacement, preset to a copy of old; DELETE:
 * delete it), 0 to keep, -1 to abort the statement. */
typedef int (*pxc_decide_fn)(void *arg, const struct pxc_row *old, struct pxc_row *newrow);

/* UPDATE (always interactive); takes ownership of where. */
int pxc_update(struct pxc *c, const struct pxc_table *t, Lwc__Pred *where,
	       pxc_decide_fn fn, void *arg, uint64_t *count);
/* DELETE; fn NULL: non-interactive (candidates = false). */
int pxc_delete(struct pxc *c, const struct pxc_table *t, Lwc__Pred *where,
	       pxc_decide_fn fn, void *arg, uint64_t *count);
/* ListTables: on success *resp holds the Catalog answer; free it with
 * lwc__proxy_response__free_unpacked(*resp, NULL). */
int pxc_list_tables(struct pxc *c, Lwc__ProxyResponse **resp);

/* ---- raw access (bad-input tests) ---------------------------------------- */

/* Send a request: a new seq, except Decisions which carry the statement's. */
int pxc_send(struct pxc *c, Lwc__ProxyRequest *req);
/* Receive one response; free with lwc__proxy_response__free_unpacked. */
int pxc_recv(struct pxc *c, Lwc__ProxyResponse **resp);
/* Send a request and read responses up to Done/Error/Catalog, counting
 * Rows/Candidates chunks (which are not answered: for statements that do not
 * produce Candidates).  Returns LWC_OK on Done/Catalog, the error code
 * otherwise; *done_count gets Done.count. */
int pxc_simple(struct pxc *c, Lwc__ProxyRequest *req, uint64_t *done_count);

#endif
