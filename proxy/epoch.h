/*
 * epoch.h - stale-state detection: does this proxy state belong with the
 * cloud store it is about to serve?
 *
 * The proxy keeps an epoch E in its state (meta "epoch") and in one header
 * record in the cloud store: block id PX_HEADER_ID, of the store's block
 * size, sealed under K_OPS like the blocks (AAD = id || version), holding
 * "LWC-EPOCH" and E.  Every serve start advances E: first in the state
 * (committed), then in the store (a WRITE of the header's next version).
 * A crash between the two leaves the store one behind, which is accepted.
 *
 * At start, before the listener opens (never per statement):
 *   store epoch > state epoch         the state is an older copy (a backup
 *                                     restored without its store): refuse
 *   store epoch < state epoch - 1     the store is older (restored from an
 *   (or no header for a state that    older backup, replaced, or rolled back
 *   has one)                          by the cloud): refuse
 *   a block held at a version above   the state missed a statement that
 *   its committed version + 1         committed (a live copy restored): refuse
 *   a block's committed version       the store lost or rolled back that
 *   missing                           block: a warning (its statements fail,
 *                                     as they always did; the rest serves)
 * --accept-stale-state serves anyway (the expert's override): blocks that do
 * not match still fail their statements, and the epochs are re-synchronised.
 * One STAT per 65536 blocks, one READ and one WRITE of the header.
 */
#ifndef LWC_PX_EPOCH_H
#define LWC_PX_EPOCH_H

#include <stddef.h>
#include <stdint.h>

#include "lwc_err.h"
#include "state.h"

#define PX_HEADER_ID (UINT64_C(1) << 62)   /* far above any data block id */

/* lwc-proxy init, after the first blocks: epoch 1 in the state and the store. */
int px_epoch_init(struct px_state *st, const char *cs_addr, const uint8_t cs_key[32],
		  char *err, size_t errlen) LWC_WUR;

/* lwc-proxy serve: compare (above), then advance.  LWC_ERR_STALE with the
 * operator's message in err when refused; warnings go to the log. */
int px_epoch_start(struct px_state *st, const char *cs_addr, const uint8_t cs_key[32],
		   int accept_stale, char *err, size_t errlen) LWC_WUR;

#endif
