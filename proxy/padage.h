/*
 * padage.h - padding as old as the real blocks (docs/architecture.md,
 * "The age of the padding"; docs/threat-model.md, "The age of the blocks
 * read").
 *
 * Every statement writes back what it read, so the cloud knows the order in
 * which the blocks were last written.  A real block is younger than a block
 * drawn uniformly (a record lands in a padding block of a statement shortly
 * after it was read, and is read again soon if it is hot), so the youngest
 * block of a statement's READ set was the real one far more often than
 * chance.  The proxy therefore keeps the same order the cloud sees (a
 * Fenwick tree over write positions: a block's rank is how many blocks were
 * written after it, 0 for the last written), records the rank of every real
 * block it reads, per statement size (the class: log2 of γ), and draws each
 * padding block by first drawing a rank among those of its class and then
 * taking the block at that rank.  Real and padding blocks of a statement
 * then have one distribution of ages, whatever the (steady) workload.
 *
 * Each class keeps the ranks of its last PA_RING real blocks, exactly, and
 * a padding rank is one of them drawn uniformly: a fair sample of the real
 * blocks' ranks while the workload holds still, and a changed workload is
 * followed within PA_RING real blocks of its class.  A class with fewer than
 * PA_MIN_SAMPLES draws uniformly, as does a proxy whose order could not grow
 * (out of memory).  A clean stop saves the order in the state (meta
 * "block_order", px_order_save) and the next serve takes it back and drops
 * it (px_order_restore), so after a crash the proxy starts with the blocks
 * in a random order, exact again for every block written since.
 * All functions run with st->mu held.
 */
#ifndef LWC_PX_PADAGE_H
#define LWC_PX_PADAGE_H

#include <stdint.h>

#define PA_CLASSES      32u       /* γ classes: floor(log2 γ)           */
#define PA_RING         1024u     /* real blocks' ranks kept per class  */
#define PA_MIN_SAMPLES  32u       /* fewer: uniform padding             */
#define PA_RECENT       32u       /* a stand-in's ranks: the last ones  */

struct px_padage {
	uint64_t n;           /* blocks in the order                      */
	uint64_t nb;          /* entries of pos                           */
	uint64_t cap;         /* write positions                          */
	uint64_t clock;       /* last position handed out                 */
	uint64_t *pos;        /* [nb] a block's position, 0: not written  */
	uint64_t *at;         /* [cap + 1] a position's block             */
	uint32_t *fw;         /* [cap + 1] Fenwick tree of taken positions */
	int broken;           /* allocation failed: uniform from now on   */
	uint64_t ring[PA_CLASSES][PA_RING];  /* the last ranks seen, per class */
	uint32_t nring[PA_CLASSES];          /* how many are kept              */
	uint32_t head[PA_CLASSES];           /* where the next goes            */
	uint64_t by_age, uniform; /* padding blocks drawn each way         */
};

/* The blocks 0..n-1 in a random order (the cloud's order is not known). */
int pa_init(struct px_padage *pa, uint64_t n);
/* The blocks 0..n-1 in the order given, oldest first (a permutation of
 * them, or -1 and pa unchanged). */
int pa_init_order(struct px_padage *pa, const uint64_t *order, uint64_t n);
/* The blocks in the order, oldest first (malloc'ed, *n of them), or NULL. */
uint64_t *pa_order(const struct px_padage *pa, uint64_t *n);
void pa_free(struct px_padage *pa);

/* Block b was written (now, after every block written before). */
void pa_touch(struct px_padage *pa, uint64_t b);

/* How many blocks were written after b (0: b was written last). */
uint64_t pa_rank(const struct px_padage *pa, uint64_t b);

/* The block of rank r (r < pa->n). */
uint64_t pa_block_at(const struct px_padage *pa, uint64_t r);

/* A statement of γ blocks read a real block of rank r. */
void pa_observe(struct px_padage *pa, uint64_t gamma, uint64_t r);

/* A rank for a padding block of a statement of γ blocks, one of the real
 * blocks' ranks kept for its class: 1, or 0 when the padding is uniform. */
int pa_draw(const struct px_padage *pa, uint64_t gamma, uint64_t *r);

/* A rank for the stand-in of a statement with no real block: one of the
 * last PA_RECENT real blocks' ranks of its class (1), or 0 as pa_draw.
 * The ring as a whole follows a changed workload only after PA_RING real
 * blocks; until then padding drawn from it is as old as the real blocks
 * were, not as they are, and a statement reading only padding (an INSERT,
 * a statement matching nothing) differed from one reading a real block.
 * With one block drawn from the last few ranks in place of the real one,
 * both read one block as old as the real blocks are now and the rest from
 * the ring. */
int pa_draw_recent(const struct px_padage *pa, uint64_t gamma, uint64_t *r);

#endif
