/*
 * tokmemo.h - the tokens a statement has made, kept so that a value met
 * again costs a table lookup instead of a keyed BLAKE2b.
 *
 * A token costs two BLAKE2b compressions (about 0.36 us here): libsodium
 * holds the 128-byte key block in its buffer, so a state prepared by
 * cry_token_begin saves the set-up, not the key block's compression.  The
 * rows of one INSERT repeat values: a column of a hundred values, the
 * upper levels of a range index (16 or 256 nodes), a clustered load's
 * consecutive equal values.  The memo keeps, for each token position of a
 * row (a column's token, then each range level), a direct-mapped table
 * keyed by the token's whole input (tag and value bytes): a hit is the
 * token that input makes, never a guess.  A position whose values rarely
 * repeat (a key column, the lowest range levels) stops being looked up
 * after its first TOKMEMO_PROBE tokens, so it costs nothing more.
 *
 * The memo holds tokens: tokmemo_free wipes it.  It belongs to one thread.
 */
#ifndef LWC_TOKMEMO_H
#define LWC_TOKMEMO_H

#include <stddef.h>
#include <stdint.h>

#include "cry.h"

/* inputs (tag byte and value) longer than this are made, not kept: 79
 * holds a number, a range node and a short text (VARCHAR(64) and less) */
#define TOKMEMO_INPUT  79u
/* tokens a position looks up in a window before it is judged */
#define TOKMEMO_PROBE  512u

struct tokmemo;

/* A memo for rows of npos token positions, for about nrows rows (its
 * tables are sized to them: at most 4,096 entries a position and 131,072
 * in all, 96 bytes each); NULL when out of memory (callers then make every
 * token). */
struct tokmemo *tokmemo_new(size_t npos, size_t nrows);
void tokmemo_free(struct tokmemo *m);

/* cry_token_next(out, st, tag, in, n) for token position pos < npos,
 * through m (m NULL: made). */
int tokmemo_token(struct tokmemo *m, size_t pos, uint8_t out[CRY_TOKEN_BYTES],
		  const cry_tokstate *st, uint8_t tag, const void *in, size_t n) LWC_WUR;

/* Tokens m has made with cry_token_next (the rest came from its tables). */
uint64_t tokmemo_made(const struct tokmemo *m);

#endif
