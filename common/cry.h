/*
 * cry.h - LWC's crypto wrappers over libsodium (DESIGN section 2).
 *
 * Nothing here is a home-made primitive: every function is a fixed layout
 * around a libsodium call, so that all components agree byte for byte.
 *
 *   key derivation   crypto_kdf_derive_from_key, contexts CRY_CTX_*
 *   keyword token    BLAKE2b-256(key = token key,
 *                            table \0 column \0 type-tag value), first 16 B
 *   record           nonce(24) || XChaCha20-Poly1305(record key, row,
 *                            AAD = table name)              (S = R + 40)
 *   block seal       version(8, big-endian, clear) || nonce(24) ||
 *                    XChaCha20-Poly1305(seal key, permuted block,
 *                            AAD = id(8 BE) || version(8 BE))
 *   permutation      Fisher-Yates over cells of c in {1,2,4,8} bytes, driven
 *                    by the ChaCha20 stream of randombytes_buf_deterministic
 *                    keyed by BLAKE2b-256(key = perm key, id BE || version BE),
 *                    with unbiased bounded draws in one of two formats:
 *                    CRY_PERM_V1 32-bit words, randombytes_uniform's method
 *                    (a division per draw); CRY_PERM_V2 16-bit words (32-bit
 *                    beyond 65,536 cells), Lemire's multiply-and-shift with
 *                    rejection (a division only on a near-miss).
 *
 * All functions return LWC_OK or a negative lwc_err code; none logs.
 */
#ifndef LWC_CRY_H
#define LWC_CRY_H

#include <stddef.h>
#include <stdint.h>

#include "lwc_err.h"

#define CRY_KEY_BYTES      32u
#define CRY_TOKEN_BYTES    16u
#define CRY_NONCE_BYTES    24u
#define CRY_TAG_BYTES      16u
#define CRY_SEED_BYTES     32u
/* Record ciphertext = nonce || ciphertext || tag: S = R + 40. */
#define CRY_RECORD_OVERHEAD (CRY_NONCE_BYTES + CRY_TAG_BYTES)
/* Sealed block = version || nonce || ciphertext || tag. */
#define CRY_SEAL_OVERHEAD  (8u + CRY_NONCE_BYTES + CRY_TAG_BYTES)

/* crypto_kdf contexts (8 bytes each) and subkey ids. */
#define CRY_CTX_USER  "LWCUSER1"   /* subkeys of K_U   */
#define CRY_CTX_OPS   "LWCPROX1"   /* subkeys of K_OPS */
enum cry_subkey {
	CRY_SUB_TOKEN  = 1,   /* K_U:   keyword token PRF key      */
	CRY_SUB_RECORD = 2,   /* K_U:   record AEAD key            */
	CRY_SUB_SEAL   = 1,   /* K_OPS: block seal AEAD key        */
	CRY_SUB_PERM   = 2    /* K_OPS: permutation seed PRF key   */
};

/* Type tags of token values; NULL has its own so IS NULL is an equality. */
enum cry_type_tag {
	CRY_TAG_NULL  = 0x00,
	CRY_TAG_INT   = 0x01,  /* value: 8-byte big-endian two's complement */
	CRY_TAG_FLOAT = 0x02,  /* value: 8-byte IEEE-754 big-endian           */
	CRY_TAG_TEXT  = 0x03,  /* value: the UTF-8 bytes                      */
	CRY_TAG_RANGE = 0x04   /* value: level byte, then the prefix (range.h) */
};

/* Initialise libsodium; safe to call many times. */
int cry_init(void) LWC_WUR;

/* Initialise libsodium for a server process (lwc-proxy, lwc-cloudstore):
 * randombytes_* draw from libsodium's own "internal" generator, ChaCha20
 * keyed per thread from getrandom() and re-keyed after every call, instead
 * of one getrandom() system call per draw.  Call first thing in main(),
 * before any thread starts; a process that uses it must not fork() and go
 * on drawing in the child (libsodium aborts).  Not for liblwc, which must
 * not change its host program's generator. */
int cry_init_server(void) LWC_WUR;

/* A uniform draw from [0, n), n >= 1: randombytes_uniform below 2^32,
 * 64 random bits mod n above (a bias below 2^-32 there). */
uint64_t cry_uniform(uint64_t n);

/* Uniform draws in [0, n), 1 <= n < 2^32, from a buffer of random words
 * filled 64 at a time (one call to the generator for many draws, where
 * randombytes_uniform makes one per draw: with libsodium's internal
 * generator each is a getpid() system call), without bias (Lemire's
 * multiply and shift, the rare word below the bound drawn again).  Start
 * from CRY_DRAWS_INIT; cry_draws_wipe when done. */
struct cry_draws {
	uint32_t w[64];
	unsigned i;
};
#define CRY_DRAWS_INIT { .i = 64 }

uint32_t cry_draw(struct cry_draws *d, uint32_t n);
void cry_draws_wipe(struct cry_draws *d);

/* Derive a 32-byte subkey of master under an 8-byte context. */
int cry_kdf(uint8_t out[CRY_KEY_BYTES], const uint8_t master[CRY_KEY_BYTES],
	    uint64_t subkey_id, const char ctx[8]) LWC_WUR;

/* Keyword token (deterministic). value may be NULL when value_len is 0. */
int cry_token(uint8_t out[CRY_TOKEN_BYTES], const uint8_t token_key[CRY_KEY_BYTES],
	      const char *table, const char *column, uint8_t type_tag,
	      const void *value, size_t value_len) LWC_WUR;

/* The tokens of one column, many at a time: the state after the key and
 * "table \0 column \0", so that each token costs BLAKE2b's final
 * compression only (cry_token compresses the key block every time).  Same
 * tokens as cry_token.  The state is key material: keep it in
 * sodium_malloc'ed memory and sodium_memzero it (cry_tokstate_size bytes). */
typedef struct cry_tokstate cry_tokstate;
size_t cry_tokstate_size(void);
int cry_token_begin(cry_tokstate *st, const uint8_t token_key[CRY_KEY_BYTES],
		    const char *table, const char *column) LWC_WUR;
int cry_token_next(uint8_t out[CRY_TOKEN_BYTES], const cry_tokstate *st, uint8_t type_tag,
		   const void *value, size_t value_len) LWC_WUR;

/* Record AEAD.  out must hold rec_len + CRY_RECORD_OVERHEAD bytes. */
int cry_record_seal(uint8_t *out, const uint8_t rec_key[CRY_KEY_BYTES],
		    const uint8_t *rec, size_t rec_len, const char *table) LWC_WUR;
/* Same with a caller-chosen nonce: random bytes the caller drew (the rows
 * of an INSERT take theirs from one randombytes_buf call), or fixed in
 * known-answer tests.  A nonce must never be used twice under one key. */
int cry_record_seal_nonce(uint8_t *out, const uint8_t rec_key[CRY_KEY_BYTES],
			  const uint8_t *rec, size_t rec_len, const char *table,
			  const uint8_t nonce[CRY_NONCE_BYTES]) LWC_WUR;
/* Opens ct (ct_len = S bytes) into rec (ct_len - 40 bytes).
 * LWC_ERR_INTEGRITY when the slot is not a record of this table under this key. */
int cry_record_open(uint8_t *rec, const uint8_t rec_key[CRY_KEY_BYTES],
		    const uint8_t *ct, size_t ct_len, const char *table) LWC_WUR;

/* Block seal.  out must hold len + CRY_SEAL_OVERHEAD bytes. */
int cry_block_seal(uint8_t *out, const uint8_t seal_key[CRY_KEY_BYTES],
		   uint64_t block_id, uint64_t version,
		   const uint8_t *block, size_t len) LWC_WUR;
int cry_block_seal_nonce(uint8_t *out, const uint8_t seal_key[CRY_KEY_BYTES],
			 uint64_t block_id, uint64_t version,
			 const uint8_t *block, size_t len,
			 const uint8_t nonce[CRY_NONCE_BYTES]) LWC_WUR;
/* Opens a sealed block (sealed_len bytes) into block (sealed_len - 48 bytes).
 * LWC_ERR_VERSION when the clear version differs from expected_version,
 * LWC_ERR_INTEGRITY when the tag (hence id, version or content) is wrong. */
int cry_block_open(uint8_t *block, const uint8_t seal_key[CRY_KEY_BYTES],
		   uint64_t block_id, uint64_t expected_version,
		   const uint8_t *sealed, size_t sealed_len) LWC_WUR;
/* The clear version field of a sealed block. */
uint64_t cry_block_version(const uint8_t *sealed);

/* Formats of the permutation's draws (a database's blocks all use one,
 * recorded with its geometry). */
enum cry_perm_fmt {
	CRY_PERM_V1 = 1,
	CRY_PERM_V2 = 2
};

/* Per-block permutation seed. */
int cry_perm_seed(uint8_t seed[CRY_SEED_BYTES], const uint8_t perm_key[CRY_KEY_BYTES],
		  uint64_t block_id, uint64_t version) LWC_WUR;
/* Number of uint32_t scratch words cry_permute/cry_unpermute need. */
size_t cry_perm_scratch_words(size_t len, unsigned cell);
/* Permute buf (len bytes, a multiple of cell; cell in {1,2,4,8}) in place
 * with draws of format fmt (enum cry_perm_fmt).
 * scratch holds cry_perm_scratch_words(len, cell) words. */
int cry_permute(uint8_t *buf, size_t len, unsigned cell, unsigned fmt,
		const uint8_t seed[CRY_SEED_BYTES], uint32_t *scratch) LWC_WUR;
/* Inverse of cry_permute with the same seed. */
int cry_unpermute(uint8_t *buf, size_t len, unsigned cell, unsigned fmt,
		  const uint8_t seed[CRY_SEED_BYTES], uint32_t *scratch) LWC_WUR;

/* Big-endian helpers used by every layout above.  Written out byte by
 * byte, which compilers turn into one load or store and a byte swap (the
 * loop they replace was not: a token's halves in the proxy's sort took
 * half again as long). */
static inline void cry_put_be64(uint8_t *p, uint64_t v)
{
	p[0] = (uint8_t)(v >> 56);
	p[1] = (uint8_t)(v >> 48);
	p[2] = (uint8_t)(v >> 40);
	p[3] = (uint8_t)(v >> 32);
	p[4] = (uint8_t)(v >> 24);
	p[5] = (uint8_t)(v >> 16);
	p[6] = (uint8_t)(v >> 8);
	p[7] = (uint8_t)v;
}

static inline void cry_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t cry_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t cry_get_be64(const uint8_t *p)
{
	return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
	       (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
	       (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

#endif
