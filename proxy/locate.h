/*
 * locate.h - a read-only view of a proxy state directory: where a row lives.
 *
 * For tools that need the ground truth the cloud is not supposed to learn
 * (lwc-audit scores its attacks with it).  The LMDB environment is opened
 * MDB_RDONLY, so it runs beside a live proxy; each lookup is its own read
 * transaction and sees the last committed statement.
 *
 * State layout it reads (format 2, see state.h): catalog handle -> table id
 * (first 4 bytes, big-endian); t<ID>.c<C> token -> row ids; pos row id ->
 * location (block << 16 | slot) or PX_LOC_STASH.
 */
#ifndef LWC_PX_LOCATE_H
#define LWC_PX_LOCATE_H

#include <stddef.h>
#include <stdint.h>

#include "lwc_err.h"

#define PX_LOCATE_STASH UINT64_MAX       /* *block when the row is in the stash */

struct px_locator;

int px_locator_open(struct px_locator **out, const char *state_dir, char *err,
		    size_t errlen) LWC_WUR;
void px_locator_close(struct px_locator *l);

/* The block of the (first) row of table `handle` whose column col has the
 * keyword token tok: *block, or PX_LOCATE_STASH when the row is in the
 * proxy's stash.  LWC_ERR_NO_TABLE, LWC_ERR_NOT_FOUND (no such row),
 * LWC_ERR_STORE. */
int px_locate(struct px_locator *l, const uint8_t handle[16], uint32_t col,
	      const uint8_t tok[16], uint64_t *block) LWC_WUR;

#endif
