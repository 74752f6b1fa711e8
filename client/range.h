/*
 * range.h - order-structured tokens: what lets the proxy's per-field B+
 * trees answer <, <=, >, >=, BETWEEN and LIKE 'prefix%' (issue 13).
 *
 * A value of a range-indexed column is mapped to a key whose byte order is
 * the column's SQL order:
 *   INT      32 bits, two's complement with the sign bit flipped;
 *   BIGINT   64 bits, the same;
 *   FLOAT    64 bits, the IEEE-754 pattern with the sign bit flipped for
 *            positive numbers and every bit flipped for negative ones;
 *            -0.0 is 0.0 and every NaN is the greatest key (PostgreSQL
 *            orders NaN above +Infinity and equal to itself);
 *   TEXT     the value's bytes followed by a 0 byte (PostgreSQL text holds
 *            no 0 byte, so the order is the byte order of the C collation,
 *            which is the order LWC compares text in).
 * A key is a string of digits: numbers of RANGE_NUM_BITS bits (fan-out
 * 2^bits, INT 32/bits digits, BIGINT and FLOAT 64/bits), text of bytes
 * (fan-out 256) read to RANGE_TEXT_DEPTH bytes.  A node of the trie is a
 * prefix of `level` digits: all the keys that start with it.  Each row
 * carries, per range-indexed column, one keyword token per level (under
 * K_U, per table and column, CRY_TAG_RANGE: level byte then the prefix), so
 * the proxy can look a node up like any value; a range becomes the minimal
 * set of nodes whose union is the range (the cover) and goes to the proxy
 * as an IN of their tokens.
 *
 * Levels a row carries (range_levels): INT and BIGINT 1 .. D-1, the last
 * level (the whole value) being the column's ordinary equality token;
 * FLOAT 1 .. D (its equality token is of the value's own bits, while a
 * cover names the ordered key); TEXT 1 .. RANGE_TEXT_DEPTH, where a text
 * shorter than level - 1 bytes has at that level the token of its whole
 * terminated key, which no cover names (covers name prefixes of exactly
 * `level` bytes).  The number of tokens a column carries tells a reader the
 * fan-out it was built with (range_bits_of).
 *
 * Covers: numbers are exact (the canonical decomposition of [lo, hi] into
 * aligned blocks, greedy from lo: at most 2 (fan-out - 1) nodes per level);
 * text is exact down to RANGE_TEXT_DEPTH bytes and a superset below (a node
 * of that depth is named whole), and a cover is cut to at most `budget`
 * nodes by stopping one level early (a superset again).  Level 0, the root,
 * is "every non-NULL value" (the caller sends NOT EQ NULL).  Pure functions:
 * no I/O, no allocation.
 */
#ifndef LWC_RANGE_H
#define LWC_RANGE_H

#include <stddef.h>
#include <stdint.h>

#include "cry.h"
#include "lwc_err.h"

#define RANGE_NUM_BITS      4u     /* default bits per level: fan-out 16   */
#define RANGE_TEXT_DEPTH    8u     /* text bytes the trie reads            */
#define RANGE_MAX_LEVELS    64u    /* 64 bits at 1 bit per level            */
#define RANGE_BUDGET        1024u  /* nodes a cover may have               */

enum range_kind { RANGE_INT32 = 1, RANGE_INT64, RANGE_FLOAT, RANGE_TEXT };

/* A node: level digits of a key.  Numbers: `num` is the prefix (the key
 * shifted right to its top level*bits bits).  Text: bytes[0..level). */
struct range_node {
	uint8_t level;
	uint8_t len;              /* text: bytes used; less than level only for
				     the token of a text too short for the level */
	uint64_t num;
	uint8_t bytes[RANGE_TEXT_DEPTH];
};

/* Ordered keys. */
uint64_t range_key_int(enum range_kind k, int64_t v);
int64_t range_int_of_key(enum range_kind k, uint64_t key);
uint64_t range_key_float(double d);

/* Key width in bits of a numeric kind (32 or 64). */
unsigned range_width(enum range_kind k);
/* Digits of a full key: width / bits (numbers), RANGE_TEXT_DEPTH (text). */
unsigned range_depth(enum range_kind k, unsigned bits);
/* Tokens a row carries for a column of kind k built with `bits` per level. */
unsigned range_levels(enum range_kind k, unsigned bits);
/* The bits per level of a column carrying n range tokens; 0 if none fits. */
unsigned range_bits_of(enum range_kind k, unsigned n);

/* The nodes of one value, levels 1 .. range_levels (out[i] is level i+1).
 * Text: s, len (the bytes, no 0 byte); numbers: key. */
void range_value_nodes_num(enum range_kind k, unsigned bits, uint64_t key,
			   struct range_node *out);
void range_value_nodes_text(const uint8_t *s, size_t len, struct range_node *out);

/* Cover of the inclusive key interval [lo, hi] (lo <= hi) of a numeric kind
 * of width `width` bits (range_width, or smaller in tests).  Writes at most
 * max nodes; LWC_ERR_TOO_BIG if more were needed. */
int range_cover_num(unsigned width, unsigned bits, uint64_t lo, uint64_t hi,
		    struct range_node *out, size_t max, size_t *n) LWC_WUR;

/* A text bound: absent (no limit), or the bytes s[0..len) inclusive or not. */
struct range_tbound {
	int present;
	int incl;
	const uint8_t *s;
	size_t len;
};

/* Cover of the texts between lo and hi, with `depth` levels (RANGE_TEXT_DEPTH,
 * or smaller in tests) and at most budget nodes (<= max); *exact is set when
 * the cover is exactly the range (no node is named whole while the range
 * holds only part of it).  An empty range gives n = 0. */
int range_cover_text(const struct range_tbound *lo, const struct range_tbound *hi,
		     unsigned depth, size_t budget, struct range_node *out, size_t max,
		     size_t *n, int *exact) LWC_WUR;

/* Does the key (numeric: key; text: s, len) lie under node x? */
int range_node_holds_num(unsigned width, unsigned bits, const struct range_node *x,
			 uint64_t key);
int range_node_holds_text(const struct range_node *x, const uint8_t *s, size_t len);

/* The keyword token of a node (level >= 1) of column `column` of `table`. */
int range_token(uint8_t out[CRY_TOKEN_BYTES], const uint8_t token_key[CRY_KEY_BYTES],
		const char *table, const char *column, enum range_kind k,
		const struct range_node *x) LWC_WUR;
struct tokmemo;

/* The same from the column's token state (cry_token_begin), through the
 * statement's memo m (tokmemo.h; NULL: made) as token position pos of a
 * row: rows of a statement share their upper levels (every id below 2^20
 * has the same 11 top nodes of 15, and 16 or 256 nodes below them), so
 * most of a row's range tokens are found there. */
int range_token_memo(uint8_t out[CRY_TOKEN_BYTES], const cry_tokstate *st,
		     enum range_kind k, const struct range_node *x, struct tokmemo *m,
		     size_t pos) LWC_WUR;

#endif
