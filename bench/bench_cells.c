/*
 * bench_cells.c - the paper's Fig. 11 on one core, no deployment: per block
 * size, what the proxy does to every block it writes (derive the
 * permutation seed, permute cells of 1, 2, 4 or 8 bytes) and reads
 * (un-permute), against AEAD sealing and opening (XChaCha20-Poly1305).
 */
#include <stdlib.h>

#include <sodium.h>

#include "bench.h"
#include "cry.h"

struct cellarg {
	uint8_t *buf, *sealed, key[CRY_KEY_BYTES], seed[CRY_SEED_BYTES];
	uint32_t *scratch;
	size_t len;
	unsigned cell, fmt;
	uint64_t ver;
};

/* What the proxy does per written block: derive the seed, permute. */
static int do_perm(void *p)
{
	struct cellarg *a = p;
	int rc = cry_perm_seed(a->seed, a->key, 7, ++a->ver);
	return rc ? rc : cry_permute(a->buf, a->len, a->cell, a->fmt, a->seed, a->scratch);
}

static int do_unperm(void *p)
{
	struct cellarg *a = p;
	int rc = cry_perm_seed(a->seed, a->key, 7, a->ver);
	return rc ? rc : cry_unpermute(a->buf, a->len, a->cell, a->fmt, a->seed, a->scratch);
}

static int do_seal(void *p)
{
	struct cellarg *a = p;
	return cry_block_seal(a->sealed, a->key, 7, ++a->ver, a->buf, a->len);
}

static int do_open(void *p)
{
	struct cellarg *a = p;
	return cry_block_open(a->buf, a->key, 7, a->ver, a->sealed, a->len + CRY_SEAL_OVERHEAD);
}

void run_cells(void)
{
	static const unsigned cells[4] = { 1, 2, 4, 8 };

	out("\n== Cell permutation (seed derivation + Fisher-Yates; draws of block format 2, "
	    "and of format 1 for c=1 and c=8) against AEAD sealing (XChaCha20-Poly1305), "
	    "microseconds per block, one core\n");
	out("%9s %10s %10s %10s %10s %10s %10s %10s %10s %10s %12s\n", "block B", "perm c=1",
	    "perm c=2", "perm c=4", "perm c=8", "v1 c=1", "v1 c=8", "seal", "open", "c=8/seal",
	    "seal MB/s");
	for (size_t bytes = 512; bytes <= 256 * 1024 && ncells < NCELLSZ; bytes *= 2) {
		struct cell_res *r = &CELLS[ncells++];
		struct cellarg a = { 0 };
		size_t maxw = cry_perm_scratch_words(bytes, 1);

		a.len = bytes;
		a.buf = xmalloc(bytes);
		a.sealed = xmalloc(bytes + CRY_SEAL_OVERHEAD);
		a.scratch = xmalloc(maxw * sizeof(uint32_t) + 64);
		randombytes_buf(a.buf, bytes);
		randombytes_buf(a.key, sizeof(a.key));
		r->bytes = bytes;
		for (int ci = 0; ci < 4; ci++) {
			progress("cells: %zu B, cell %u", bytes, cells[ci]);
			a.cell = cells[ci];
			a.fmt = CRY_PERM_V2;
			r->perm_us[ci] = time_loop(do_perm, &a, 0.1) * 1e6;
			r->unperm_us[ci] = time_loop(do_unperm, &a, 0.05) * 1e6;
			a.fmt = CRY_PERM_V1;
			r->perm1_us[ci] = time_loop(do_perm, &a, 0.05) * 1e6;
		}
		r->seal_us = time_loop(do_seal, &a, 0.1) * 1e6;
		r->open_us = time_loop(do_open, &a, 0.05) * 1e6;
		out("%9zu %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %9.2fx %12.0f\n",
		    bytes, r->perm_us[0], r->perm_us[1], r->perm_us[2], r->perm_us[3],
		    r->perm1_us[0], r->perm1_us[3], r->seal_us, r->open_us,
		    r->perm_us[3] / r->seal_us, bytes / r->seal_us);
		free(a.buf);
		free(a.sealed);
		free(a.scratch);
	}
}
