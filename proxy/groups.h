/*
 * groups.h - the groups of rows that are in blocks: rows a statement wrote
 * back into one block together (serve --evict-group, stash.h), remembered
 * so that the next statement to take one of them out of that block takes
 * the others with it ("move the group on access", docs/architecture.md,
 * "Groups").
 *
 * Without it a group stays in its block until each of its rows is read,
 * and two later statements reading different rows of it share that block:
 * lwc-audit's co-read attack links them.  With it, the first of them takes
 * the whole group out (the cloud sees the READ and WRITE it sees anyway),
 * so a later reader of another row finds it in the stash or in another
 * block.
 *
 * Only a hint: a statement takes a remembered row out only where the
 * position map still puts it in a block the statement holds, so a stale
 * entry (a row moved or deleted since) moves nothing.  In memory, saved
 * into the state by a clean stop and taken back at the next start
 * (px_groups_save, px_groups_restore); after a crash the groups are
 * unknown and their rows move one by one again, until read.  All
 * functions run with st->mu held.
 */
#ifndef LWC_PX_GROUPS_H
#define LWC_PX_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "u64map.h"

struct px_groups {
	struct u64map rows;            /* row id -> its group             */
	struct u64map grps;            /* group -> struct px_group *      */
};

struct px_group {
	uint64_t grp;
	uint32_t table;
	uint32_t n;                    /* rows written back together     */
	uint32_t live;                 /* of them, still in this group   */
	uint64_t rows[];
};

/* Rows rows[0..n) of table were written back together into one block as
 * group grp (a group of one row is not kept).  0, or -1 when out of
 * memory (nothing kept then: the rows are alone). */
int grp_note(struct px_groups *G, uint64_t grp, uint32_t table, const uint64_t *rows,
	     size_t n);
/* The row left its block (moved to the stash, deleted). */
void grp_forget(struct px_groups *G, uint64_t row);
/* The other rows of row's group, if it has one of table: up to max into
 * out; returns how many. */
size_t grp_mates(const struct px_groups *G, uint64_t row, uint32_t table, uint64_t *out,
		 size_t max);
/* The group row is in, or NULL. */
const struct px_group *grp_find(const struct px_groups *G, uint64_t row);
/* Rows in a group now (status). */
size_t grp_rows(const struct px_groups *G);
void grp_free(struct px_groups *G);

/* The groups as bytes (each: group(8) table(4) rows(4) row ids(8 each),
 * big-endian), malloc'ed into *buf; -1 when out of memory. */
int grp_serialize(const struct px_groups *G, uint8_t **buf, size_t *len);
/* Add the groups of buf; -1 when it is malformed or memory runs out (what
 * was added stays: every entry is only a hint). */
int grp_deserialize(struct px_groups *G, const uint8_t *buf, size_t len);

#endif
