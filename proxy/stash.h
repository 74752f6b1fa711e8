/*
 * stash.h - the proxy's stash: rows taken out of their blocks by the
 * statement that touched them, served from here until a later statement
 * writes them back into a random free slot of its own access set
 * (docs/architecture.md, "Across statements").
 *
 * The records live in the stash database of the proxy's LMDB (committed
 * with the statement that moved them); this is the in-memory list, with
 * each row's eligibility and the statement using it, in no order, and a
 * map from row id to its place in it (st->stash_ix): a statement's rows
 * come and go and are let go of in time proportional to their number, not
 * to the stash's (65,536 rows by default), and so are they picked for
 * write-back with groups of one row, the default (stash_pick).  All
 * functions run with st->mu held.
 */
#ifndef LWC_PX_STASH_H
#define LWC_PX_STASH_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

/* A row may be written back at the earliest 1 + U[0, PX_EVICT_DELAY)
 * statements after the one that put it in the stash, so the cloud cannot
 * follow a row from the statement that took it out to the next one. */
#define PX_EVICT_DELAY 64u

struct px_stash_ent *stash_find(struct px_state *st, uint64_t rowid);

/* The rows a statement holds (their owner set to its own), so that it lets
 * go of them in time proportional to their number. */
struct stash_held {
	uint64_t *v;
	size_t n, cap;
};

/* Room for more rows in h: LWC_OK or LWC_ERR_NOMEM (nothing held then). */
int stash_hold_reserve(struct stash_held *h, size_t more) LWC_WUR;

/* Hold e for owner, in h (room reserved). */
void stash_hold(struct stash_held *h, struct px_stash_ent *e, uint64_t owner);

void stash_held_free(struct stash_held *h);

/* Groups.  The rows one statement puts in the stash are cut, in row id
 * order, into groups of at most st->evict_group rows (serve
 * --evict-group); a group draws one delay, so its rows become eligible
 * together, and is written back into one block (stash_pick, then
 * plan_evictions): a range read again later costs the blocks its groups
 * went to, not one block a row.  No group goes into two blocks of one
 * statement, and each group leaves at its own random time, so the blocks a
 * later read of the range finds real were last written by different
 * statements at independent times, as single rows' are; for the same
 * reason a statement places at most one group of the rows one statement
 * put here (their origin), and the others it picked wait a new delay.
 * In its block a group stays a group (groups.h): the first statement to
 * take one of its rows out takes the others with it, so two later
 * statements touching different rows of it do not share that block
 * (lwc-audit's co-read attack found them when groups stayed behind).
 * Groups of 1, the default: every row alone, the behaviour before groups.
 * Groups make a range read again cheap, and so take from the stash the
 * room that range's many padding blocks gave it: under a stream of range
 * reads the stash fills more often, and a statement finding it full moves
 * nothing (docs/benchmarks.md, "28 November 2026, last"). */

/* Pick up to max rows among those that may be evicted by statement seq:
 * not in use, of a table nobody holds exclusively, and eligible (or any,
 * when the stash is over half full); a row drawn uniformly brings the
 * eligible rows of its group with it.  They are held by owner (in h) and
 * come out group by group, grps[i] the group of row i.  Returns how many
 * were picked.  Groups of one row are drawn from the whole stash and kept
 * when they may go, in time proportional to max where most rows may (a
 * pass over the stash only for what those draws did not find); larger
 * groups are found by a pass over the stash. */
size_t stash_pick(struct px_state *st, struct stash_held *h, uint64_t owner, uint64_t seq,
		  size_t max, uint64_t *rowids, uint32_t *tables, uint64_t *grps);

/* Rows a statement picked but did not place (their group was larger than
 * the room of its block, or it placed a group of the same origin): they
 * wait a new random delay, as a group. */
void stash_defer(struct px_state *st, const uint64_t *rowids, size_t n, uint64_t seq);

/* Let go of every row owner holds (h: the rows it took; one let go of
 * already, or gone from the stash, is left as it is). */
void stash_release(struct px_state *st, struct stash_held *h, uint64_t owner);

/* After a commit: drop the rows dels[0..ndel) and add (or refresh) the rows
 * adds[0..nadd) (their table), the last nfresh of them an INSERT's new
 * rows (fresh: written back only into blocks below the fill limit; a row
 * refreshed keeps its freshness), each eligible after a new random delay and
 * never to be written back into the blocks from[0..nfrom), the statement's
 * READ set (none when it has more than PX_FROM_MAX blocks).  With padding
 * drawn by age (padage.h) the blocks a row was just read with are young, so
 * without that rule a row would often land in one of them, and two accesses
 * to it would share that block (lwc-audit's intersection and linkage). */
int stash_apply(struct px_state *st, const uint64_t *dels, size_t ndel,
		const uint64_t *adds, const uint32_t *add_tables, size_t nadd, size_t nfresh,
		const uint64_t *from, size_t nfrom) LWC_WUR;

/* May the stash row e be written back into block b? */
int stash_may_land(const struct px_stash_ent *e, uint64_t b);

#endif
