/*
 * journal.h - the statement journal: deferred writes of the proxy state's
 * three maps that statements change at random places (blocks, pos, stash).
 *
 * A statement that moves rows changes a handful of entries in each of
 * them: the γ blocks' versions, the positions of the rows it took out and
 * of the rows it wrote back (random row ids), and the stash.  Written in
 * place, each entry dirties its own 4 KB B-tree page, so a 1,000-row
 * relocating SELECT wrote about 1.8 MB of pages and waited for them in its
 * fdatasync.  Instead, the statement's commit appends ONE record to the
 * `journal` database (the changes, a few dozen bytes each), in the same
 * LMDB transaction as the rest of its changes, so it is as atomic and as
 * durable as before.  The record goes as values of whole entries that fit
 * on a B-tree page (under half a page each: LMDB puts a larger value on
 * overflow pages, whose allocation walks the free list), keyed by the
 * transaction's id and the value's number (16 bytes; states written before
 * the split have one value a record under the 8-byte id, which sorts
 * before every later key).  The changes are
 * kept in memory (an overlay over pos and stash; the blocks already have
 * their in-memory mirror) and applied to the three databases together, in
 * key order, once the journal holds more than st->jr_fold_bytes ("folding"),
 * and always when the state is opened (before it is loaded).  A page that
 * many statements touched between two folds is written once.
 *
 * A statement that would stage more than PX_JOURNAL_DIRECT_MIN changes (a
 * large DELETE) folds the journal in its own transaction (jr_begin) and applies its
 * changes in place at jr_commit, so huge statements cost what they
 * did before the journal.
 *
 * Every function runs with st->mu held, or before the state is shared
 * (px_state_open).  jr_block, jr_pos, jr_pos_del, jr_stash_put and
 * jr_stash_del stage a change in the write transaction being built; jr_commit
 * writes the staged record and commits the transaction; jr_abort drops what
 * was staged.  Reads go through jr_pos_get and jr_stash_get (staged, then
 * the overlay, then the database).  Writes that bypass the journal (new
 * blocks of a bulk INSERT or of growth, the positions of bulk-inserted rows,
 * all appended above every existing key) never touch a key the journal
 * holds.
 */
#ifndef LWC_PX_JOURNAL_H
#define LWC_PX_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include <lmdb.h>

#include "state.h"

#define PX_JOURNAL_FOLD_DEFAULT (16u << 20)     /* bytes of journal before a fold */

/* Set up st->jr (empty); LWC codes. */
int jr_init(struct px_state *st) LWC_WUR;
void jr_free(struct px_state *st);

/* A statement changing more entries than this writes them to their
 * databases directly (after folding the journal in the same transaction):
 * a 1M-row DELETE's positions go in key order with a cursor, as before the
 * journal, instead of through a 1M-entry overlay and a fold. */
#define PX_JOURNAL_DIRECT_MIN 65536u

/* Begin staging in txn (a write transaction of the state) for a statement
 * that will stage about `entries` changes; LMDB codes. */
int jr_begin(struct px_state *st, MDB_txn *txn, size_t entries) LWC_WUR;

/* Stage a change (0, or ENOMEM: jr_commit then refuses). */
int jr_block(struct px_state *st, uint64_t id, uint64_t version,
	     const uint8_t tag[CRY_TAG_BYTES], const uint64_t *bits) LWC_WUR;
int jr_pos(struct px_state *st, uint64_t row, uint64_t loc) LWC_WUR;
int jr_pos_del(struct px_state *st, uint64_t row) LWC_WUR;
int jr_stash_put(struct px_state *st, uint64_t row, uint32_t table,
		 const uint8_t *rec) LWC_WUR;
int jr_stash_del(struct px_state *st, uint64_t row) LWC_WUR;

/* Append the staged record (if any) to txn's journal, or in direct mode
 * apply it to the databases, and commit txn; on success the staged changes
 * join the overlay (direct: the overlay is emptied, folded by jr_begin).
 * Room in the overlay is made before the commit, so nothing fails after
 * it.  txn is gone on return, committed or aborted; LMDB codes. */
int jr_commit(struct px_state *st, MDB_txn *txn) LWC_WUR;
/* Drop the staged changes (the caller aborts its transaction). */
void jr_abort(struct px_state *st);

/* Apply every journal record of txn to the blocks, pos and stash databases
 * and empty the journal; LMDB codes (ENOMEM too).  With the overlay empty
 * (the state's open) the records are replayed, oldest first; while the
 * proxy runs, their block entries are, and then each row the overlay names,
 * once, in key order.  After the caller commits txn, jr_folded() empties
 * the overlay. */
int jr_fold(struct px_state *st, MDB_txn *txn) LWC_WUR;
void jr_folded(struct px_state *st);
/* Fold in a transaction of its own when the journal is over its limit
 * (after a statement's commit); a failure is logged and retried later. */
void jr_fold_if_due(struct px_state *st);

/* A row's position: staged, overlay, else pos through cur (a cursor on
 * st->pos_db, may be NULL with txn given).  MDB_NOTFOUND when it has none. */
int jr_pos_get(struct px_state *st, MDB_txn *txn, MDB_cursor *cur, uint64_t row,
	       uint64_t *loc) LWC_WUR;
/* A stash row's record (S bytes copied to rec) and, when table is not
 * NULL, its table (without the record's PX_STASH_FRESH mark).  MDB_NOTFOUND
 * when the stash does not hold it. */
int jr_stash_get(struct px_state *st, MDB_txn *txn, uint64_t row, uint32_t *table,
		 uint8_t *rec) LWC_WUR;

/* Walk one journal record's entries (for readers without a px_state: the
 * locator): fn(arg, kind, entry) for each, kind 'B', 'P', 'p', 'S' or 's',
 * entry pointing at the kind byte.  S and words are the state's slot bytes
 * and bitmap words.  0, fn's first non-zero result, or MDB_CORRUPTED. */
int jr_entries(const uint8_t *p, size_t n, size_t S, size_t words,
	       int (*fn)(void *arg, int kind, const uint8_t *entry), void *arg) LWC_WUR;

/* Bytes in the journal now, folds so far (a large statement's included),
 * and the mean milliseconds of jr_fold_if_due's, each of which holds the
 * state's lock (status). */
uint64_t jr_bytes(const struct px_state *st);
uint64_t jr_folds(const struct px_state *st);
double jr_fold_ms_avg(const struct px_state *st);

#endif
