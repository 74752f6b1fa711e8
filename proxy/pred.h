/*
 * pred.h - predicates over the per-field indexes, as sorted location sets.
 *
 * A location set is a sorted array of distinct 64-bit locations.  EQ reads
 * one key of a column's B+ tree (MDB_GET_MULTIPLE over the DUPFIXED
 * duplicates, already sorted), IN and OR are unions, AND an intersection,
 * NOT the table's rows minus the argument, ALL the table's rows.
 */
#ifndef LWC_PX_PRED_H
#define LWC_PX_PRED_H

#include <stddef.h>
#include <stdint.h>

#include <lmdb.h>

#include "lwc.pb-c.h"
#include "lwc_err.h"
#include "state.h"

#define PRED_MAX_DEPTH  64
#define PRED_MAX_NODES  100000
/* Nesting allowed in an encoded request, checked before protobuf-c decodes
 * it: above PRED_MAX_DEPTH so pred_validate still names the problem. */
#define PRED_WIRE_MAX_DEPTH  (4 * PRED_MAX_DEPTH)

struct locset {
	uint64_t *v;
	size_t n, cap;
};

void locset_free(struct locset *s);
int locset_push(struct locset *s, uint64_t loc) LWC_WUR;
/* out = a op b (out must be distinct from a and b). */
int locset_union(struct locset *out, const struct locset *a, const struct locset *b) LWC_WUR;
int locset_inter(struct locset *out, const struct locset *a, const struct locset *b) LWC_WUR;
int locset_minus(struct locset *out, const struct locset *a, const struct locset *b) LWC_WUR;
/* Sort and remove duplicates in place. */
void locset_normalize(struct locset *s);
int locset_contains(const struct locset *s, uint64_t loc);

/* Structural check of a predicate against a table of ncols columns:
 * arity, column range, token sizes, depth and size limits. */
int pred_validate(const Lwc__Pred *p, uint32_t ncols, char *err, size_t errlen) LWC_WUR;

/* Check an encoded ProxyRequest before decoding it: LWC_ERR_PROTO when a
 * predicate nests deeper than PRED_WIRE_MAX_DEPTH or the bytes on its way
 * do not parse.  protobuf-c decodes nested messages recursively with no
 * limit (about 1 KB of stack a level): without this a request of a few
 * tens of kilobytes overflows a worker's stack. */
int pred_wire_check(const uint8_t *buf, size_t len) LWC_WUR;

/* After decoding, before the engine: an INSERT's rows sent with their
 * tokens as one token_block (WIRE_FEATURE_TOKEN_BLOCK) given their tokens
 * array over it, from req's arena (req: a message of pb_arena_unpack).
 * LWC_ERR_PROTO when a block is not whole tokens, holds more than a row
 * may, or comes with tokens as well. */
int px_request_tokens(Lwc__ProxyRequest *req) LWC_WUR;

/* Evaluate (p may be NULL: ALL) inside txn. */
int pred_eval(MDB_txn *txn, const struct px_table *t, const Lwc__Pred *p,
	      struct locset *out, char *err, size_t errlen) LWC_WUR;

/* An index value (8 bytes, state format 4): a span of consecutive row
 * ids, the first in the high 48 bits and the count less one in the low
 * 16; one row is a span of one.  Big-endian, so LMDB's order of a token's
 * values is the order of their first rows; a token's spans never overlap.
 * A bulk INSERT's rows have consecutive ids, so a token every row of it
 * carries (a range index's upper levels) is one value, not one a row. */
#define IDX_ROW_BITS    48
#define IDX_ROW_LIMIT   ((uint64_t)1 << IDX_ROW_BITS)   /* row ids are below */
#define IDX_SPAN_ROWS   65536u                          /* rows a value at most */

static inline void idx_span_put(uint8_t v[8], uint64_t first, uint32_t n)
{
	cry_put_be64(v, first << 16 | (uint64_t)(n - 1));
}

static inline uint64_t idx_span_first(const void *v)
{
	return cry_get_be64(v) >> 16;
}

static inline uint32_t idx_span_rows(const void *v)
{
	return (uint32_t)(cry_get_be64(v) & 0xffffu) + 1;
}

/* The row ids of key's values (spans) in dbi, appended to out in order
 * (idx_lookup: a column's token). */
int pred_lookup(MDB_txn *txn, MDB_dbi dbi, const void *key, size_t klen,
		struct locset *out) LWC_WUR;

#endif
