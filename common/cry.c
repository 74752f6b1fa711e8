/*
 * cry.c - the layouts of cry.h over libsodium.
 *
 * The permutation needs more random words than one call of
 * randombytes_buf_deterministic() can promise when rejection sampling
 * discards some, so it reads the same stream incrementally: that function is
 * ChaCha20-IETF keyed by the seed with the nonce "LibsodiumDRG" from block
 * counter 0, which crypto_stream_chacha20_ietf_xor_ic reproduces chunk by
 * chunk.  tests/unit/test_cry.c checks that the two agree.
 */
#include <string.h>

#include <sodium.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cry.h"

int cry_init(void)
{
	return sodium_init() < 0 ? LWC_ERR_CRYPTO : LWC_OK;
}

/* A point statement draws a few hundred 32-bit values (padding blocks, the
 * stash's write-back places, eviction delays): with the default sysrandom
 * implementation each randombytes_uniform() is a getrandom() system call
 * (6 % of the proxy's CPU for 100-row SELECTs).  libsodium's internal
 * generator keeps its ChaCha20 state in thread-local storage (Debian's
 * build has it: a 568-byte TLS segment) and is seeded from getrandom(). */
int cry_init_server(void)
{
	if (randombytes_set_implementation(&randombytes_internal_implementation) != 0)
		return LWC_ERR_CRYPTO;
	return cry_init();
}

uint64_t cry_uniform(uint64_t n)
{
	if (n <= UINT32_MAX)
		return randombytes_uniform((uint32_t)n);
	return (((uint64_t)randombytes_random() << 32) | randombytes_random()) % n;
}

uint32_t cry_draw(struct cry_draws *d, uint32_t n)
{
	for (;;) {
		uint64_t m;

		if (d->i >= 64) {
			randombytes_buf(d->w, sizeof(d->w));
			d->i = 0;
		}
		m = (uint64_t)d->w[d->i++] * n;
		if ((uint32_t)m >= n || (uint32_t)m >= (0u - n) % n)
			return (uint32_t)(m >> 32);
	}
}

void cry_draws_wipe(struct cry_draws *d)
{
	sodium_memzero(d, sizeof(*d));
	d->i = 64;
}

int cry_kdf(uint8_t out[CRY_KEY_BYTES], const uint8_t master[CRY_KEY_BYTES],
	    uint64_t subkey_id, const char ctx[8])
{
	if (crypto_kdf_derive_from_key(out, CRY_KEY_BYTES, subkey_id, ctx, master) != 0)
		return LWC_ERR_CRYPTO;
	return LWC_OK;
}

struct cry_tokstate {
	crypto_generichash_state h;
};

/* arrays of states stay aligned (client/lwc_range.c row_token_states) */
_Static_assert(sizeof(struct cry_tokstate) % 64 == 0, "token state size not a multiple of 64");

size_t cry_tokstate_size(void)
{
	return sizeof(struct cry_tokstate);
}

int cry_token_begin(cry_tokstate *st, const uint8_t token_key[CRY_KEY_BYTES],
		    const char *table, const char *column)
{
	const uint8_t zero = 0;

	if (st == NULL || table == NULL || column == NULL)
		return LWC_ERR_ARG;
	if (crypto_generichash_init(&st->h, token_key, CRY_KEY_BYTES,
				    crypto_generichash_BYTES) != 0)
		return LWC_ERR_CRYPTO;
	crypto_generichash_update(&st->h, (const uint8_t *)table, strlen(table));
	crypto_generichash_update(&st->h, &zero, 1);
	crypto_generichash_update(&st->h, (const uint8_t *)column, strlen(column));
	crypto_generichash_update(&st->h, &zero, 1);
	return LWC_OK;
}

int cry_token_next(uint8_t out[CRY_TOKEN_BYTES], const cry_tokstate *st, uint8_t type_tag,
		   const void *value, size_t value_len)
{
	crypto_generichash_state h;
	uint8_t full[crypto_generichash_BYTES];

	if (st == NULL || (value == NULL && value_len != 0))
		return LWC_ERR_ARG;
	memcpy(&h, &st->h, sizeof(h));
	crypto_generichash_update(&h, &type_tag, 1);
	if (value_len)
		crypto_generichash_update(&h, value, value_len);
	crypto_generichash_final(&h, full, sizeof(full));
	memcpy(out, full, CRY_TOKEN_BYTES);
	sodium_memzero(&h, sizeof(h));
	sodium_memzero(full, sizeof(full));
	return LWC_OK;
}

int cry_token(uint8_t out[CRY_TOKEN_BYTES], const uint8_t token_key[CRY_KEY_BYTES],
	      const char *table, const char *column, uint8_t type_tag,
	      const void *value, size_t value_len)
{
	cry_tokstate st;
	int rc;

	if (value == NULL && value_len != 0)
		return LWC_ERR_ARG;
	if ((rc = cry_token_begin(&st, token_key, table, column)) == LWC_OK)
		rc = cry_token_next(out, &st, type_tag, value, value_len);
	sodium_memzero(&st, sizeof(st));
	return rc;
}

int cry_record_seal_nonce(uint8_t *out, const uint8_t rec_key[CRY_KEY_BYTES],
			  const uint8_t *rec, size_t rec_len, const char *table,
			  const uint8_t nonce[CRY_NONCE_BYTES])
{
	if (out == NULL || rec == NULL || table == NULL)
		return LWC_ERR_ARG;
	memmove(out, nonce, CRY_NONCE_BYTES);
	if (crypto_aead_xchacha20poly1305_ietf_encrypt(out + CRY_NONCE_BYTES, NULL,
						       rec, rec_len,
						       (const uint8_t *)table, strlen(table),
						       NULL, out, rec_key) != 0)
		return LWC_ERR_CRYPTO;
	return LWC_OK;
}

int cry_record_seal(uint8_t *out, const uint8_t rec_key[CRY_KEY_BYTES],
		    const uint8_t *rec, size_t rec_len, const char *table)
{
	uint8_t nonce[CRY_NONCE_BYTES];

	randombytes_buf(nonce, sizeof(nonce));
	return cry_record_seal_nonce(out, rec_key, rec, rec_len, table, nonce);
}

int cry_record_open(uint8_t *rec, const uint8_t rec_key[CRY_KEY_BYTES],
		    const uint8_t *ct, size_t ct_len, const char *table)
{
	if (rec == NULL || ct == NULL || table == NULL)
		return LWC_ERR_ARG;
	if (ct_len < CRY_RECORD_OVERHEAD)
		return LWC_ERR_INTEGRITY;
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(rec, NULL, NULL,
						       ct + CRY_NONCE_BYTES,
						       ct_len - CRY_NONCE_BYTES,
						       (const uint8_t *)table, strlen(table),
						       ct, rec_key) != 0)
		return LWC_ERR_INTEGRITY;
	return LWC_OK;
}

static void block_aad(uint8_t aad[16], uint64_t block_id, uint64_t version)
{
	cry_put_be64(aad, block_id);
	cry_put_be64(aad + 8, version);
}

int cry_block_seal_nonce(uint8_t *out, const uint8_t seal_key[CRY_KEY_BYTES],
			 uint64_t block_id, uint64_t version,
			 const uint8_t *block, size_t len,
			 const uint8_t nonce[CRY_NONCE_BYTES])
{
	uint8_t aad[16];

	if (out == NULL || block == NULL)
		return LWC_ERR_ARG;
	block_aad(aad, block_id, version);
	cry_put_be64(out, version);
	memmove(out + 8, nonce, CRY_NONCE_BYTES);
	if (crypto_aead_xchacha20poly1305_ietf_encrypt(out + 8 + CRY_NONCE_BYTES, NULL,
						       block, len, aad, sizeof(aad),
						       NULL, out + 8, seal_key) != 0)
		return LWC_ERR_CRYPTO;
	return LWC_OK;
}

int cry_block_seal(uint8_t *out, const uint8_t seal_key[CRY_KEY_BYTES],
		   uint64_t block_id, uint64_t version,
		   const uint8_t *block, size_t len)
{
	uint8_t nonce[CRY_NONCE_BYTES];

	randombytes_buf(nonce, sizeof(nonce));
	return cry_block_seal_nonce(out, seal_key, block_id, version, block, len, nonce);
}

uint64_t cry_block_version(const uint8_t *sealed)
{
	return cry_get_be64(sealed);
}

int cry_block_open(uint8_t *block, const uint8_t seal_key[CRY_KEY_BYTES],
		   uint64_t block_id, uint64_t expected_version,
		   const uint8_t *sealed, size_t sealed_len)
{
	uint8_t aad[16];

	if (block == NULL || sealed == NULL)
		return LWC_ERR_ARG;
	if (sealed_len < CRY_SEAL_OVERHEAD)
		return LWC_ERR_INTEGRITY;
	if (cry_get_be64(sealed) != expected_version)
		return LWC_ERR_VERSION;
	block_aad(aad, block_id, expected_version);
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(block, NULL, NULL,
						       sealed + 8 + CRY_NONCE_BYTES,
						       sealed_len - 8 - CRY_NONCE_BYTES,
						       aad, sizeof(aad),
						       sealed + 8, seal_key) != 0)
		return LWC_ERR_INTEGRITY;
	return LWC_OK;
}

int cry_perm_seed(uint8_t seed[CRY_SEED_BYTES], const uint8_t perm_key[CRY_KEY_BYTES],
		  uint64_t block_id, uint64_t version)
{
	uint8_t msg[16];

	block_aad(msg, block_id, version);
	if (crypto_generichash(seed, CRY_SEED_BYTES, msg, sizeof(msg),
			       perm_key, CRY_KEY_BYTES) != 0)
		return LWC_ERR_CRYPTO;
	return LWC_OK;
}

/*
 * Deterministic random generator: the keystream of
 * randombytes_buf_deterministic(), produced a chunk at a time.  The first
 * chunk is sized to what the draws need when none is rejected (one call of
 * the cipher's wide path instead of three for a block of 1,344 cells), the
 * later ones 1 KiB; any multiple of 64 bytes gives the same stream.
 */
#define DRG_CHUNK 1024u
#define DRG_MAX 4096u
struct drg {
	const uint8_t *seed;
	uint32_t counter;             /* next ChaCha20 block counter */
	size_t pos;                   /* next unread byte of buf */
	size_t len;                   /* bytes of buf filled */
	uint8_t buf[DRG_MAX];
};

static const uint8_t drg_nonce[crypto_stream_chacha20_ietf_NONCEBYTES] = {
	'L', 'i', 'b', 's', 'o', 'd', 'i', 'u', 'm', 'D', 'R', 'G'
};

static void drg_fill(struct drg *g, size_t want)
{
	size_t len = (want + 63u) / 64u * 64u;

	if (len < 64u)
		len = 64u;
	if (len > DRG_MAX)
		len = DRG_MAX;
	if (g->counter == 0) {
		crypto_stream_chacha20_ietf(g->buf, len, drg_nonce, g->seed);
	} else {
		memset(g->buf, 0, len);
		crypto_stream_chacha20_ietf_xor_ic(g->buf, g->buf, len, drg_nonce, g->counter,
						   g->seed);
	}
	g->counter += (uint32_t)(len / 64u);
	g->len = len;
	g->pos = 0;
}

static void drg_refill(struct drg *g)
{
	drg_fill(g, DRG_CHUNK);
}

static uint32_t drg_u32(struct drg *g)
{
	uint32_t v;

	if (g->pos + 4 > g->len)
		drg_refill(g);
	/* little-endian, as randombytes_uniform reads its words */
	v = (uint32_t)g->buf[g->pos] | (uint32_t)g->buf[g->pos + 1] << 8 |
	    (uint32_t)g->buf[g->pos + 2] << 16 | (uint32_t)g->buf[g->pos + 3] << 24;
	g->pos += 4;
	return v;
}

/* Uniform in [0, upper) without modulo bias (randombytes_uniform's method). */
static uint32_t drg_uniform(struct drg *g, uint32_t upper)
{
	uint32_t min, r;

	if (upper < 2)
		return 0;
	/* min = 2**32 mod upper < upper, so r >= upper never needs it: the same
	 * draws as randombytes_uniform, one division instead of two */
	r = drg_u32(g);
	if (r >= upper)
		return r % upper;
	min = (1U + ~upper) % upper;
	while (r < min)
		r = drg_u32(g);
	return r % upper;
}

size_t cry_perm_scratch_words(size_t len, unsigned cell)
{
	return cell ? len / cell : 0;
}

/* The next 16-bit word of the stream (little-endian). */
static uint32_t drg_u16(struct drg *g)
{
	uint32_t v;

	if (g->pos + 2 > g->len)
		drg_refill(g);
	v = (uint32_t)g->buf[g->pos] | (uint32_t)g->buf[g->pos + 1] << 8;
	g->pos += 2;
	return v;
}

/*
 * Uniform in [0, upper), 1 < upper <= 2^16, without bias and nearly without
 * division (Lemire, "Fast random integer generation in an interval", 2019):
 * the high half of x * upper for a 16-bit x, rejecting the few x whose low
 * half falls below 2^16 mod upper.  The division computing that bound runs
 * only when the low half is below upper (probability upper / 2^16).
 */
static uint32_t drg_lemire16(struct drg *g, uint32_t upper)
{
	uint32_t m = drg_u16(g) * upper;

	if ((m & 0xffffu) < upper) {
		uint32_t t = (0x10000u - upper) % upper;

		while ((m & 0xffffu) < t)
			m = drg_u16(g) * upper;
	}
	return m >> 16;
}

/* The same over 32-bit words, for upper > 2^16 (blocks of more than 65,536
 * cells). */
static uint32_t drg_lemire32(struct drg *g, uint32_t upper)
{
	uint64_t m = (uint64_t)drg_u32(g) * upper;

	if ((uint32_t)m < upper) {
		uint32_t t = (0u - upper) % upper;

		while ((uint32_t)m < t)
			m = (uint64_t)drg_u32(g) * upper;
	}
	return (uint32_t)(m >> 32);
}

/* The 16-bit word at p (little-endian). */
static uint32_t le16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

/*
 * drg_lemire16 for i = top .. 1 into scratch[i], the same words drawn the
 * same way, fast: a draw is accepted outright when the low half of its
 * product is at least its bound (all but about i / 65,536 of them), eight at
 * a time with SSE2 where the compiler has it; only the rare one below its
 * bound takes the exact test, and only a rejected one the generic path
 * (which reads that word again and goes on).  tests/unit/test_cry.c checks
 * every format-2 draw against a plain reference over many seeds and sizes.
 */
static void draw16(struct drg *g, size_t top, uint32_t *scratch)
{
	size_t i = top;

	while (i >= 1) {
		const uint8_t *p, *end;
		int slow = 0;

		if (g->pos + 2 > g->len)
			drg_refill(g);
		p = g->buf + g->pos;
		end = g->buf + g->len;
#if defined(__SSE2__)
		/* bounds i+1 .. i-6, all below 2^16 */
		while (end - p >= 16 && i >= 8 && i < 0xffffu) {
			const __m128i z = _mm_setzero_si128();
			__m128i w = _mm_loadu_si128((const __m128i *)(const void *)p);
			__m128i u = _mm_sub_epi16(_mm_set1_epi16((short)(uint16_t)(i + 1)),
						  _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7));
			__m128i lo = _mm_mullo_epi16(w, u), hi = _mm_mulhi_epu16(w, u);
			/* lo >= u exactly where u - lo saturates to 0 */
			unsigned ok = (unsigned)_mm_movemask_epi8(
				_mm_cmpeq_epi16(_mm_subs_epu16(u, lo), z));
			uint16_t h[8];
			unsigned good;

			if (ok == 0xffffu) {
				/* lanes 0..7 are scratch[i] .. scratch[i-7] */
				_mm_storeu_si128((__m128i *)(void *)(scratch + i - 3),
						 _mm_shuffle_epi32(_mm_unpacklo_epi16(hi, z), 0x1b));
				_mm_storeu_si128((__m128i *)(void *)(scratch + i - 7),
						 _mm_shuffle_epi32(_mm_unpackhi_epi16(hi, z), 0x1b));
				i -= 8;
				p += 16;
				continue;
			}
			good = (unsigned)__builtin_ctz(~ok & 0xffffu) / 2;
			_mm_storeu_si128((__m128i *)(void *)h, hi);
			for (unsigned l = 0; l < good; l++)
				scratch[i - l] = h[l];
			i -= good;
			p += 2 * good;
			/* the lane below its bound: the exact test */
			{
				uint32_t up = (uint32_t)i + 1, m = le16(p) * up;

				if ((m & 0xffffu) < (0x10000u - up) % up) {
					slow = 1;
					break;
				}
				scratch[i--] = m >> 16;
				p += 2;
			}
		}
#endif
		while (!slow && end - p >= 2 && i >= 1) {
			uint32_t up = (uint32_t)i + 1, m = le16(p) * up;

			if ((m & 0xffffu) < up && (m & 0xffffu) < (0x10000u - up) % up) {
				slow = 1;
				break;
			}
			scratch[i--] = m >> 16;
			p += 2;
		}
		g->pos = (size_t)(p - g->buf);
		if (slow) {
			scratch[i] = drg_lemire16(g, (uint32_t)i + 1);
			i--;
		}
	}
}

/* Draw the Fisher-Yates swap partners j[i] for i = n-1 .. 1 into scratch[i]. */
static int perm_draw(size_t n, unsigned fmt, const uint8_t seed[CRY_SEED_BYTES],
		     uint32_t *scratch)
{
	struct drg g;
	size_t i = n - 1;

	if (n > UINT32_MAX)
		return LWC_ERR_ARG;
	g.seed = seed;
	g.counter = 0;
	if (fmt == CRY_PERM_V1) {
		drg_fill(&g, 4 * (n - 1) + 64);
		for (; i >= 1; i--)
			scratch[i] = drg_uniform(&g, (uint32_t)i + 1);
	} else {
		size_t big = i >= 0x10000u ? i - 0xffffu : 0;  /* draws of 32 bits */

		drg_fill(&g, 4 * big + 2 * (i - big) + 64);
		for (; i >= 1 && i >= 0x10000u; i--)
			scratch[i] = drg_lemire32(&g, (uint32_t)i + 1);
		draw16(&g, i, scratch);
	}
	sodium_memzero(g.buf, g.len);
	return LWC_OK;
}

/* Swap cell i with cell scratch[i] for i over a range: one loop per cell
 * size, so the copies are single loads and stores, not memcpy calls. */
#define SWAPS(T, init, cond, step) do {                                      \
	for (size_t init; cond; step) {                                      \
		T x, y;                                                      \
		memcpy(&x, buf + i * sizeof(T), sizeof(T));                  \
		memcpy(&y, buf + (size_t)scratch[i] * sizeof(T), sizeof(T)); \
		memcpy(buf + i * sizeof(T), &y, sizeof(T));                  \
		memcpy(buf + (size_t)scratch[i] * sizeof(T), &x, sizeof(T)); \
	}                                                                    \
} while (0)

static int perm_check(const uint8_t *buf, size_t len, unsigned cell, unsigned fmt,
		      const uint32_t *scratch)
{
	if (buf == NULL || scratch == NULL)
		return LWC_ERR_ARG;
	if (fmt != CRY_PERM_V1 && fmt != CRY_PERM_V2)
		return LWC_ERR_ARG;
	if (cell != 1 && cell != 2 && cell != 4 && cell != 8)
		return LWC_ERR_ARG;
	if (len % cell != 0)
		return LWC_ERR_ARG;
	return LWC_OK;
}

int cry_permute(uint8_t *buf, size_t len, unsigned cell, unsigned fmt,
		const uint8_t seed[CRY_SEED_BYTES], uint32_t *scratch)
{
	size_t n = cell ? len / cell : 0;
	int rc;

	if ((rc = perm_check(buf, len, cell, fmt, scratch)) != LWC_OK)
		return rc;
	if (n < 2)
		return LWC_OK;
	if ((rc = perm_draw(n, fmt, seed, scratch)) != LWC_OK)
		return rc;
	/* forward Fisher-Yates: i from n-1 down to 1 swaps cell i with j[i] */
	switch (cell) {
	case 1: SWAPS(uint8_t, i = n - 1, i >= 1, i--); break;
	case 2: SWAPS(uint16_t, i = n - 1, i >= 1, i--); break;
	case 4: SWAPS(uint32_t, i = n - 1, i >= 1, i--); break;
	default: SWAPS(uint64_t, i = n - 1, i >= 1, i--); break;
	}
	return LWC_OK;
}

int cry_unpermute(uint8_t *buf, size_t len, unsigned cell, unsigned fmt,
		  const uint8_t seed[CRY_SEED_BYTES], uint32_t *scratch)
{
	size_t n = cell ? len / cell : 0;
	int rc;

	if ((rc = perm_check(buf, len, cell, fmt, scratch)) != LWC_OK)
		return rc;
	if (n < 2)
		return LWC_OK;
	if ((rc = perm_draw(n, fmt, seed, scratch)) != LWC_OK)
		return rc;
	/* the same swaps in reverse order undo the permutation */
	switch (cell) {
	case 1: SWAPS(uint8_t, i = 1, i < n, i++); break;
	case 2: SWAPS(uint16_t, i = 1, i < n, i++); break;
	case 4: SWAPS(uint32_t, i = 1, i < n, i++); break;
	default: SWAPS(uint64_t, i = 1, i < n, i++); break;
	}
	return LWC_OK;
}
