/*
 * index.h - a column's index: its B+ tree and the table's run of recent
 * entries (index.c says why).
 */
#ifndef LWC_PX_INDEX_H
#define LWC_PX_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include <lmdb.h>

#include "pred.h"
#include "state.h"
#include "toksort.h"

/* Bytes of a run key: the column, then the token. */
#define IDX_RUN_KEY  (1u + CRY_TOKEN_BYTES)

/* The run's key of token tok of column col. */
void idx_run_key(uint8_t key[IDX_RUN_KEY], uint32_t col, const uint8_t *tok);

/* A commit's writes to one column's index. */
struct idx_cur {
	MDB_txn *txn;
	struct px_table *t;
	uint32_t col;
	int run;                 /* entries go to (and are looked for in) the run */
	MDB_cursor *tree, *rcur;
	uint8_t key[IDX_RUN_KEY];
};

/* The run takes small statements' entries of a column whose tree holds at
 * least tree_min entries; it moves into the trees when it holds more than
 * run_max entries (0: 128 sqrt(rows x tokens per row), at least 8192).
 * Set once, before any statement (serve --index-run-min/--index-run-max). */
void idx_configure(uint64_t tree_min, uint64_t run_max);

/* Opens column col's index for about m entries written by this commit:
 * to the run, or to the tree (a small tree, m at least a sixteenth of the
 * tree, or m entries for each token of a row more than a quarter of the
 * run's limit or than it has room for), the run moved into the trees first
 * if it holds anything, so that every entry this commit removes is in the
 * tree.  A tree's size is its entries, t->nrows times the column's tokens
 * a row, not its LMDB values (spans of many rows, pred.h). */
int idx_open(struct idx_cur *ic, MDB_txn *txn, struct px_table *t, uint32_t col, size_t m);
void idx_close(struct idx_cur *ic);

/* Adds (tok, row); flags for LMDB's put (MDB_APPENDDUP: row is above every
 * id of tok's list, MDB_APPEND too in an empty tree; a plain put when LMDB
 * refuses the hint). */
int idx_add(struct idx_cur *ic, const uint8_t *tok, uint64_t row, unsigned flags);

/* Adds (tok, rows[i]) for i < n, rows ascending, in one LMDB put
 * (MDB_MULTIPLE: the key is found once for all of them), consecutive ids
 * as one span (pred.h); flags as for idx_add.  scratch: room for n row
 * ids. */
int idx_add_rows(struct idx_cur *ic, const uint8_t *tok, const uint64_t *rows, size_t n,
		 unsigned flags, uint8_t *scratch);

/* 1 when a span of key in dbi (a column's tree, or the run with a run
 * key) holds row, 0 when not, -1 on an LMDB error (lwc-proxy check). */
int idx_holds(MDB_txn *txn, MDB_dbi dbi, const void *key, size_t klen, uint64_t row);

/* Removes (tok, row): MDB_NOTFOUND when the index does not hold it. */
int idx_remove(struct idx_cur *ic, const uint8_t *tok, uint64_t row);

/* Removes tr[0..n) (one token, rows sorted): the whole duplicate list in
 * one delete when those rows are all of it. */
int idx_remove_group(struct idx_cur *ic, const struct tokrow *tr, size_t n);

/* End of a commit that wrote t's indexes: the run into the trees when it
 * holds more than its limit. */
int idx_settle(MDB_txn *txn, struct px_table *t);

/* Moves every entry of t's run into the column trees, in key order. */
int idx_flush(MDB_txn *txn, struct px_table *t);

/* The rows of one token of column col, appended to out (the appended part
 * sorted). */
int idx_lookup(MDB_txn *txn, const struct px_table *t, uint32_t col,
	       const uint8_t token[CRY_TOKEN_BYTES], struct locset *out) LWC_WUR;

/* Whether tokens of column col have entries, many tokens in token order:
 * one cursor on the tree and one on the run for all of them, so LMDB looks
 * for the next token on the page of the last before it descends from the
 * root (an INSERT's check of its unique column). */
struct idx_probe {
	MDB_cursor *tree, *run;
	uint32_t col;
};
int idx_probe_open(struct idx_probe *p, MDB_txn *txn, const struct px_table *t, uint32_t col);
/* *found = 1 when tok has an entry in the tree or the run, else 0; an
 * LMDB code. */
int idx_probe_has(struct idx_probe *p, const uint8_t tok[CRY_TOKEN_BYTES], int *found);
void idx_probe_close(struct idx_probe *p);

/* *dup = 1 when a token of column col occurs twice (across tree and run;
 * the token null apart, NULL: none), else 0.  Returns an LMDB code. */
int idx_has_duplicates(MDB_txn *txn, const struct px_table *t, uint32_t col,
		       const uint8_t *null, int *dup);

#endif
