/*
 * rowmap.h - a map from row id to one change of that row (a position, or a
 * stash record), for the journal's staged and committed changes
 * (journal.h) and for the read-only locator (locate.h).
 *
 * Open addressing over a power-of-two table; entries are added or
 * replaced, never removed one by one: the whole map is emptied at once.
 */
#ifndef LWC_PX_ROWMAP_H
#define LWC_PX_ROWMAP_H

#include <stddef.h>
#include <stdint.h>

struct rowent {
	uint64_t row;
	uint64_t loc;            /* a position                               */
	uint8_t *rec;            /* a stash entry: table(4) || record, malloc'ed */
	uint8_t used, del;       /* del: the row has no entry (deleted)      */
};

struct rowmap {
	struct rowent *e;
	size_t cap, n;
};

/* The entry of row, or NULL. */
struct rowent *rowmap_find(const struct rowmap *m, uint64_t row);
/* The entry of row, added (loc 0, rec NULL, del 0) when absent; NULL when
 * out of memory. */
struct rowent *rowmap_get(struct rowmap *m, uint64_t row);
/* Room for n more entries without growing; -1 when out of memory. */
int rowmap_reserve(struct rowmap *m, size_t n);
/* Slots of a table kept when it is emptied (32 bytes each): a larger one,
 * grown for a large statement, is freed, so that the statements after it
 * do not pass over all of it (a staged map of 131,072 slots cost every later
 * statement about 0.35 ms under the state lock: docs/benchmarks.md, "29
 * November 2026, evening"). */
#define ROWMAP_KEEP_CAP 4096u

/* Move every entry of from into to (records change hands); from is left
 * empty (rowmap_clear).  Cannot fail after rowmap_reserve(to, from->n). */
void rowmap_merge(struct rowmap *to, struct rowmap *from);
/* Empty m (its records freed); a table of more than ROWMAP_KEEP_CAP slots
 * is freed too. */
void rowmap_clear(struct rowmap *m);
void rowmap_free(struct rowmap *m);

#endif
