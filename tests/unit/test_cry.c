/*
 * test_cry.c - known-answer and property tests for common/cry.c.
 *
 * The expected values come from tests/kat/ref.py, an independent pure-Python
 * implementation of the cry.h layouts (BLAKE2b, ChaCha20, HChaCha20,
 * Poly1305 and XChaCha20-Poly1305 written from their RFCs and checked
 * against the published vectors), so a match here means cry.c implements
 * the documented layout, not merely that it still prints what it printed.
 * Regenerate the vectors with: python3 tests/kat/ref.py --out tests/unit/kat_vectors.h
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cry.h"
#include "kat_vectors.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const unsigned cells[] = { 1, 2, 4, 8 };

/* ---------------------------------------------------------------- helpers */

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	assert_non_null(p);
	return p;
}

static uint8_t *pattern_block(size_t n)
{
	uint8_t *p = xmalloc(n);

	for (size_t i = 0; i < n; i++)
		p[i] = KAT_PATTERN(i);
	return p;
}

/* Scratch for cry_permute: never NULL, even for an empty buffer. */
static uint32_t *scratch_for(size_t len, unsigned cell)
{
	size_t w = cry_perm_scratch_words(len, cell);

	return xmalloc((w ? w : 1) * sizeof(uint32_t));
}

static void digest32(uint8_t out[32], const uint8_t *p, size_t n)
{
	assert_int_equal(crypto_generichash(out, 32, p, n, NULL, 0), 0);
}

static void assert_digest(const uint8_t *p, size_t n, const uint8_t want[32])
{
	uint8_t d[32];

	digest32(d, p, n);
	assert_memory_equal(d, want, 32);
}

static void permute_fmt(uint8_t *buf, size_t len, unsigned cell, unsigned fmt,
			const uint8_t seed[32])
{
	uint32_t *s = scratch_for(len, cell);

	assert_int_equal(cry_permute(buf, len, cell, fmt, seed, s), LWC_OK);
	free(s);
}

static void unpermute_fmt(uint8_t *buf, size_t len, unsigned cell, unsigned fmt,
			  const uint8_t seed[32])
{
	uint32_t *s = scratch_for(len, cell);

	assert_int_equal(cry_unpermute(buf, len, cell, fmt, seed, s), LWC_OK);
	free(s);
}

/* Block format 1: the vectors of databases made before formats. */
static void permute_ok(uint8_t *buf, size_t len, unsigned cell, const uint8_t seed[32])
{
	permute_fmt(buf, len, cell, CRY_PERM_V1, seed);
}

static void unpermute_ok(uint8_t *buf, size_t len, unsigned cell, const uint8_t seed[32])
{
	unpermute_fmt(buf, len, cell, CRY_PERM_V1, seed);
}

static const unsigned fmts[] = { CRY_PERM_V1, CRY_PERM_V2 };

/* ------------------------------------------------ platform libsodium check */

/* draft-irtf-cfrg-xchacha-03 A.3.1 straight through libsodium: the vector
 * ref.py asserts against is the one the library we link also produces. */
static void test_xchacha_draft_vector(void **state)
{
	uint8_t out[KAT_A31_CT_LEN], back[KAT_A31_PT_LEN];
	unsigned long long outlen = 0, backlen = 0;

	(void)state;
	assert_int_equal(crypto_aead_xchacha20poly1305_ietf_encrypt(
				 out, &outlen, kat_a31_pt, KAT_A31_PT_LEN, kat_a31_aad,
				 KAT_A31_AAD_LEN, NULL, kat_a31_nonce, kat_a31_key), 0);
	assert_int_equal(outlen, KAT_A31_CT_LEN);
	assert_memory_equal(out, kat_a31_ct, KAT_A31_CT_LEN);
	assert_int_equal(crypto_aead_xchacha20poly1305_ietf_decrypt(
				 back, &backlen, NULL, kat_a31_ct, KAT_A31_CT_LEN,
				 kat_a31_aad, KAT_A31_AAD_LEN, kat_a31_nonce, kat_a31_key), 0);
	assert_int_equal(backlen, KAT_A31_PT_LEN);
	assert_memory_equal(back, kat_a31_pt, KAT_A31_PT_LEN);
}

/* -------------------------------------------------------------------- KDF */

static void test_kdf_kat(void **state)
{
	uint8_t k[CRY_KEY_BYTES];

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(kat_kdf); i++) {
		const uint8_t *master = kat_kdf[i].ops ? kat_ops_master : kat_user_master;

		assert_int_equal(strlen(kat_kdf[i].ctx), 8);
		assert_int_equal(cry_kdf(k, master, kat_kdf[i].id, kat_kdf[i].ctx), LWC_OK);
		assert_memory_equal(k, kat_kdf[i].out, CRY_KEY_BYTES);
	}
	/* The subkeys every other vector uses, through cry.h's own names. */
	assert_int_equal(cry_kdf(k, kat_user_master, CRY_SUB_TOKEN, CRY_CTX_USER), LWC_OK);
	assert_memory_equal(k, kat_token_key, CRY_KEY_BYTES);
	assert_int_equal(cry_kdf(k, kat_user_master, CRY_SUB_RECORD, CRY_CTX_USER), LWC_OK);
	assert_memory_equal(k, kat_rec_key, CRY_KEY_BYTES);
	assert_int_equal(cry_kdf(k, kat_ops_master, CRY_SUB_SEAL, CRY_CTX_OPS), LWC_OK);
	assert_memory_equal(k, kat_seal_key, CRY_KEY_BYTES);
	assert_int_equal(cry_kdf(k, kat_ops_master, CRY_SUB_PERM, CRY_CTX_OPS), LWC_OK);
	assert_memory_equal(k, kat_perm_key, CRY_KEY_BYTES);
	/* same id, different context: different keys */
	assert_memory_not_equal(kat_token_key, kat_seal_key, CRY_KEY_BYTES);
	assert_memory_not_equal(kat_token_key, kat_rec_key, CRY_KEY_BYTES);
}

/* ----------------------------------------------------------------- tokens */

static void test_token_kat(void **state)
{
	uint8_t t[CRY_TOKEN_BYTES];

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(kat_token); i++) {
		const struct kat_token *v = &kat_token[i];

		assert_int_equal(cry_token(t, kat_token_key, v->table, v->column, v->tag,
					   v->value, v->value_len), LWC_OK);
		assert_memory_equal(t, v->out, CRY_TOKEN_BYTES);
		/* an empty value may also be passed as NULL */
		if (v->value_len == 0) {
			assert_int_equal(cry_token(t, kat_token_key, v->table, v->column,
						   v->tag, NULL, 0), LWC_OK);
			assert_memory_equal(t, v->out, CRY_TOKEN_BYTES);
		}
	}
}

/* A column's token state gives the known answers too, and is not changed
 * by use: the same state, many values, in any order. */
static void test_token_state(void **state)
{
	cry_tokstate *st = sodium_malloc(cry_tokstate_size());
	uint8_t t[CRY_TOKEN_BYTES], u[CRY_TOKEN_BYTES];

	(void)state;
	assert_non_null(st);
	for (size_t i = 0; i < ARRAY_LEN(kat_token); i++) {
		const struct kat_token *v = &kat_token[i];

		assert_int_equal(cry_token_begin(st, kat_token_key, v->table, v->column), LWC_OK);
		assert_int_equal(cry_token_next(t, st, v->tag, v->value, v->value_len), LWC_OK);
		assert_memory_equal(t, v->out, CRY_TOKEN_BYTES);
	}
	assert_int_equal(cry_token_begin(st, kat_token_key, "orders", "customer"), LWC_OK);
	for (int r = 0; r < 300; r++) {
		uint8_t val[200];
		size_t len = (size_t)r % sizeof(val);
		uint8_t tag = (uint8_t)(r % 5);

		randombytes_buf(val, sizeof(val));
		assert_int_equal(cry_token_next(t, st, tag, val, len), LWC_OK);
		assert_int_equal(cry_token(u, kat_token_key, "orders", "customer", tag, val, len),
				 LWC_OK);
		assert_memory_equal(t, u, CRY_TOKEN_BYTES);
	}
	assert_int_equal(cry_token_next(t, st, CRY_TAG_TEXT, NULL, 1), LWC_ERR_ARG);
	assert_int_equal(cry_token_begin(st, kat_token_key, NULL, "c"), LWC_ERR_ARG);
	sodium_memzero(st, cry_tokstate_size());
	sodium_free(st);
}

static void tok(uint8_t out[CRY_TOKEN_BYTES], const char *table, const char *column,
		uint8_t tag, const void *value, size_t len)
{
	assert_int_equal(cry_token(out, kat_token_key, table, column, tag, value, len),
			 LWC_OK);
}

static void test_token_properties(void **state)
{
	uint8_t a[CRY_TOKEN_BYTES], b[CRY_TOKEN_BYTES];
	uint8_t other_key[CRY_KEY_BYTES];
	const uint8_t one_be[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };

	(void)state;
	/* deterministic */
	tok(a, "users", "name", CRY_TAG_TEXT, "alice", 5);
	tok(b, "users", "name", CRY_TAG_TEXT, "alice", 5);
	assert_memory_equal(a, b, sizeof(a));
	/* NULL is not the empty string */
	tok(a, "users", "name", CRY_TAG_NULL, NULL, 0);
	tok(b, "users", "name", CRY_TAG_TEXT, "", 0);
	assert_memory_not_equal(a, b, sizeof(a));
	/* type tag, column, table, key each change the token */
	tok(a, "users", "id", CRY_TAG_INT, one_be, 8);
	tok(b, "users", "id", CRY_TAG_FLOAT, one_be, 8);
	assert_memory_not_equal(a, b, sizeof(a));
	tok(b, "users", "id", CRY_TAG_TEXT, one_be, 8);
	assert_memory_not_equal(a, b, sizeof(a));
	tok(b, "users", "uid", CRY_TAG_INT, one_be, 8);
	assert_memory_not_equal(a, b, sizeof(a));
	tok(b, "admins", "id", CRY_TAG_INT, one_be, 8);
	assert_memory_not_equal(a, b, sizeof(a));
	memcpy(other_key, kat_token_key, sizeof(other_key));
	other_key[0] ^= 1;
	assert_int_equal(cry_token(b, other_key, "users", "id", CRY_TAG_INT, one_be, 8),
			 LWC_OK);
	assert_memory_not_equal(a, b, sizeof(a));
	/* the separators make the split unambiguous */
	tok(a, "ab", "c", CRY_TAG_TEXT, "x", 1);
	tok(b, "a", "bc", CRY_TAG_TEXT, "x", 1);
	assert_memory_not_equal(a, b, sizeof(a));
	/* every KAT token is distinct from every other */
	for (size_t i = 0; i < ARRAY_LEN(kat_token); i++)
		for (size_t j = i + 1; j < ARRAY_LEN(kat_token); j++)
			assert_memory_not_equal(kat_token[i].out, kat_token[j].out,
						CRY_TOKEN_BYTES);
	/* bad arguments */
	assert_int_equal(cry_token(a, kat_token_key, "t", "c", CRY_TAG_TEXT, NULL, 1),
			 LWC_ERR_ARG);
	assert_int_equal(cry_token(a, kat_token_key, NULL, "c", CRY_TAG_TEXT, "x", 1),
			 LWC_ERR_ARG);
	assert_int_equal(cry_token(a, kat_token_key, "t", NULL, CRY_TAG_TEXT, "x", 1),
			 LWC_ERR_ARG);
}

/* ---------------------------------------------------------------- records */

struct rec_vec {
	const char *table;
	const uint8_t *nonce;
	const uint8_t *out;
	size_t out_len;
};

static const struct rec_vec rec_vecs[] = {
	{ KAT_REC1_TABLE, kat_rec1_nonce, kat_rec1_out, KAT_REC1_OUT_LEN },
	{ KAT_REC2_TABLE, kat_rec2_nonce, kat_rec2_out, KAT_REC2_OUT_LEN },
	{ KAT_REC3_TABLE, kat_rec3_nonce, kat_rec3_out, KAT_REC3_OUT_LEN },
	{ KAT_REC4_TABLE, kat_rec4_nonce, kat_rec4_out, KAT_REC4_OUT_LEN },
};

static void test_record_kat(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(rec_vecs); i++) {
		const struct rec_vec *v = &rec_vecs[i];
		size_t n = v->out_len - CRY_RECORD_OVERHEAD;
		uint8_t *rec = pattern_block(n);
		uint8_t *out = xmalloc(v->out_len);
		uint8_t *back = xmalloc(n);

		assert_int_equal(cry_record_seal_nonce(out, kat_rec_key, rec, n, v->table,
						       v->nonce), LWC_OK);
		assert_memory_equal(out, v->out, v->out_len);
		memset(back, 0xAA, n);
		assert_int_equal(cry_record_open(back, kat_rec_key, v->out, v->out_len,
						 v->table), LWC_OK);
		if (n)
			assert_memory_equal(back, rec, n);
		free(rec);
		free(out);
		free(back);
	}
}

static void test_record_tamper(void **state)
{
	const size_t S = KAT_REC1_OUT_LEN, R = S - CRY_RECORD_OVERHEAD;
	uint8_t ct[KAT_REC1_OUT_LEN], rec[KAT_REC1_OUT_LEN];
	uint8_t key[CRY_KEY_BYTES];

	(void)state;
	/* every single flipped bit position class: nonce, ciphertext, tag */
	for (size_t pos = 0; pos < S; pos++) {
		memcpy(ct, kat_rec1_out, S);
		ct[pos] ^= (uint8_t)(1u << (pos % 8));
		assert_int_equal(cry_record_open(rec, kat_rec_key, ct, S, KAT_REC1_TABLE),
				 LWC_ERR_INTEGRITY);
	}
	/* one named byte of each part, for the record */
	const size_t named[] = { 0, CRY_NONCE_BYTES - 1, CRY_NONCE_BYTES,
				 CRY_NONCE_BYTES + R - 1, S - CRY_TAG_BYTES, S - 1 };
	for (size_t i = 0; i < ARRAY_LEN(named); i++) {
		memcpy(ct, kat_rec1_out, S);
		ct[named[i]] ^= 0x80;
		assert_int_equal(cry_record_open(rec, kat_rec_key, ct, S, KAT_REC1_TABLE),
				 LWC_ERR_INTEGRITY);
	}
	/* wrong table (AAD) */
	assert_int_equal(cry_record_open(rec, kat_rec_key, kat_rec1_out, S, "orders"),
			 LWC_ERR_INTEGRITY);
	assert_int_equal(cry_record_open(rec, kat_rec_key, kat_rec1_out, S, "Users"),
			 LWC_ERR_INTEGRITY);
	assert_int_equal(cry_record_open(rec, kat_rec_key, kat_rec1_out, S, "user"),
			 LWC_ERR_INTEGRITY);
	assert_int_equal(cry_record_open(rec, kat_rec_key, kat_rec1_out, S, ""),
			 LWC_ERR_INTEGRITY);
	/* wrong key: another subkey, and the record key with one bit flipped */
	assert_int_equal(cry_record_open(rec, kat_token_key, kat_rec1_out, S,
					 KAT_REC1_TABLE), LWC_ERR_INTEGRITY);
	memcpy(key, kat_rec_key, sizeof(key));
	key[31] ^= 0x01;
	assert_int_equal(cry_record_open(rec, key, kat_rec1_out, S, KAT_REC1_TABLE),
			 LWC_ERR_INTEGRITY);
	/* truncated or extended slots */
	assert_int_equal(cry_record_open(rec, kat_rec_key, kat_rec1_out, S - 1,
					 KAT_REC1_TABLE), LWC_ERR_INTEGRITY);
	assert_int_equal(cry_record_open(rec, kat_rec_key, kat_rec1_out,
					 CRY_RECORD_OVERHEAD - 1, KAT_REC1_TABLE),
			 LWC_ERR_INTEGRITY);
	assert_int_equal(cry_record_open(rec, kat_rec_key, kat_rec1_out, 0,
					 KAT_REC1_TABLE), LWC_ERR_INTEGRITY);
	/* a record of one table is not a record of another (KAT rec2 is "orders") */
	assert_int_equal(cry_record_open(rec, kat_rec_key, kat_rec2_out, KAT_REC2_OUT_LEN,
					 KAT_REC1_TABLE), LWC_ERR_INTEGRITY);
	/* uniformly random bytes of size S are not a record */
	randombytes_buf(ct, S);
	assert_int_equal(cry_record_open(rec, kat_rec_key, ct, S, KAT_REC1_TABLE),
			 LWC_ERR_INTEGRITY);
	/* and the untouched vector still opens */
	assert_int_equal(cry_record_open(rec, kat_rec_key, kat_rec1_out, S,
					 KAT_REC1_TABLE), LWC_OK);
}

static void test_record_random_nonce(void **state)
{
	uint8_t rec[128], a[128 + CRY_RECORD_OVERHEAD], b[sizeof(a)], back[128];

	(void)state;
	for (size_t i = 0; i < sizeof(rec); i++)
		rec[i] = KAT_PATTERN(i);
	assert_int_equal(cry_record_seal(a, kat_rec_key, rec, sizeof(rec), "users"), LWC_OK);
	assert_int_equal(cry_record_seal(b, kat_rec_key, rec, sizeof(rec), "users"), LWC_OK);
	assert_memory_not_equal(a, b, CRY_NONCE_BYTES);
	assert_memory_not_equal(a + CRY_NONCE_BYTES, b + CRY_NONCE_BYTES,
				sizeof(a) - CRY_NONCE_BYTES);
	assert_int_equal(cry_record_open(back, kat_rec_key, a, sizeof(a), "users"), LWC_OK);
	assert_memory_equal(back, rec, sizeof(rec));
	assert_int_equal(cry_record_open(back, kat_rec_key, b, sizeof(b), "users"), LWC_OK);
	assert_memory_equal(back, rec, sizeof(rec));
	/* the layout matches the KAT: re-sealing with a's nonce gives a */
	assert_int_equal(cry_record_seal_nonce(b, kat_rec_key, rec, sizeof(rec), "users", a),
			 LWC_OK);
	assert_memory_equal(a, b, sizeof(a));
}

/* ----------------------------------------------------------------- blocks */

static void test_block_kat(void **state)
{
	uint8_t *blk, *out, *back;
	const size_t big_sealed = KAT_BLK_BIG_LEN + CRY_SEAL_OVERHEAD;

	(void)state;
	/* 64-byte block, full output compared */
	blk = pattern_block(64);
	out = xmalloc(KAT_BLK_SMALL_OUT_LEN);
	back = xmalloc(64);
	assert_int_equal(KAT_BLK_SMALL_OUT_LEN, 64 + CRY_SEAL_OVERHEAD);
	assert_int_equal(cry_block_seal_nonce(out, kat_seal_key, KAT_BLK_SMALL_ID,
					      KAT_BLK_SMALL_VERSION, blk, 64, kat_blk_nonce),
			 LWC_OK);
	assert_memory_equal(out, kat_blk_small_out, KAT_BLK_SMALL_OUT_LEN);
	assert_true(cry_block_version(out) == KAT_BLK_SMALL_VERSION);
	assert_int_equal(cry_block_open(back, kat_seal_key, KAT_BLK_SMALL_ID,
					KAT_BLK_SMALL_VERSION, kat_blk_small_out,
					KAT_BLK_SMALL_OUT_LEN), LWC_OK);
	assert_memory_equal(back, blk, 64);
	free(blk);
	free(out);
	free(back);

	/* 10752-byte block: head, tail and digest of the sealed output */
	blk = pattern_block(KAT_BLK_BIG_LEN);
	out = xmalloc(big_sealed);
	back = xmalloc(KAT_BLK_BIG_LEN);
	assert_int_equal(cry_block_seal_nonce(out, kat_seal_key, KAT_BLK_BIG_ID,
					      KAT_BLK_BIG_VERSION, blk, KAT_BLK_BIG_LEN,
					      kat_blk_nonce), LWC_OK);
	assert_memory_equal(out, kat_blk_big_head, KAT_BLK_BIG_HEAD_LEN);
	assert_memory_equal(out + big_sealed - KAT_BLK_BIG_TAIL_LEN, kat_blk_big_tail,
			    KAT_BLK_BIG_TAIL_LEN);
	assert_digest(out, big_sealed, kat_blk_big_digest);
	assert_true(cry_block_version(out) == KAT_BLK_BIG_VERSION);
	assert_int_equal(cry_block_open(back, kat_seal_key, KAT_BLK_BIG_ID,
					KAT_BLK_BIG_VERSION, out, big_sealed), LWC_OK);
	assert_memory_equal(back, blk, KAT_BLK_BIG_LEN);
	free(blk);
	free(out);
	free(back);
}

static void test_block_tamper(void **state)
{
	const size_t L = KAT_BLK_SMALL_OUT_LEN;
	const uint64_t id = KAT_BLK_SMALL_ID, ver = KAT_BLK_SMALL_VERSION;
	uint8_t s[KAT_BLK_SMALL_OUT_LEN], blk[KAT_BLK_SMALL_OUT_LEN];
	uint8_t key[CRY_KEY_BYTES];

	(void)state;
	/* wrong block id: the AAD differs -> integrity */
	assert_int_equal(cry_block_open(blk, kat_seal_key, id + 1, ver, kat_blk_small_out, L),
			 LWC_ERR_INTEGRITY);
	assert_int_equal(cry_block_open(blk, kat_seal_key, id | (UINT64_C(1) << 63), ver,
					kat_blk_small_out, L), LWC_ERR_INTEGRITY);
	/* expected version differs from the clear field -> version error */
	assert_int_equal(cry_block_open(blk, kat_seal_key, id, ver + 1, kat_blk_small_out, L),
			 LWC_ERR_VERSION);
	assert_int_equal(cry_block_open(blk, kat_seal_key, id, 0, kat_blk_small_out, L),
			 LWC_ERR_VERSION);
	/* version field edited to what the reader expects: caught by the tag */
	memcpy(s, kat_blk_small_out, L);
	cry_put_be64(s, ver + 1);
	assert_int_equal(cry_block_open(blk, kat_seal_key, id, ver + 1, s, L),
			 LWC_ERR_INTEGRITY);
	/* version field edited, reader expects the real one: version error */
	assert_int_equal(cry_block_open(blk, kat_seal_key, id, ver, s, L), LWC_ERR_VERSION);
	/* any flipped bit: in the version field -> VERSION, elsewhere -> INTEGRITY */
	for (size_t pos = 0; pos < L; pos++) {
		memcpy(s, kat_blk_small_out, L);
		s[pos] ^= (uint8_t)(1u << (pos % 8));
		assert_int_equal(cry_block_open(blk, kat_seal_key, id, ver, s, L),
				 pos < 8 ? LWC_ERR_VERSION : LWC_ERR_INTEGRITY);
		if (pos < 8)    /* and with the edited version expected: the tag */
			assert_int_equal(cry_block_open(blk, kat_seal_key, id,
							cry_block_version(s), s, L),
					 LWC_ERR_INTEGRITY);
	}
	/* wrong key */
	assert_int_equal(cry_block_open(blk, kat_perm_key, id, ver, kat_blk_small_out, L),
			 LWC_ERR_INTEGRITY);
	memcpy(key, kat_seal_key, sizeof(key));
	key[0] ^= 0x40;
	assert_int_equal(cry_block_open(blk, key, id, ver, kat_blk_small_out, L),
			 LWC_ERR_INTEGRITY);
	/* truncated */
	assert_int_equal(cry_block_open(blk, kat_seal_key, id, ver, kat_blk_small_out, L - 1),
			 LWC_ERR_INTEGRITY);
	assert_int_equal(cry_block_open(blk, kat_seal_key, id, ver, kat_blk_small_out,
					CRY_SEAL_OVERHEAD - 1), LWC_ERR_INTEGRITY);
	/* untouched still opens */
	assert_int_equal(cry_block_open(blk, kat_seal_key, id, ver, kat_blk_small_out, L),
			 LWC_OK);
}

static void test_block_random_nonce(void **state)
{
	uint8_t blk[256], a[256 + CRY_SEAL_OVERHEAD], b[sizeof(a)], back[256];

	(void)state;
	for (size_t i = 0; i < sizeof(blk); i++)
		blk[i] = KAT_PATTERN(i);
	/* the same (id, version) sealed twice never repeats the nonce */
	assert_int_equal(cry_block_seal(a, kat_seal_key, 5, 9, blk, sizeof(blk)), LWC_OK);
	assert_int_equal(cry_block_seal(b, kat_seal_key, 5, 9, blk, sizeof(blk)), LWC_OK);
	assert_memory_equal(a, b, 8);
	assert_memory_not_equal(a + 8, b + 8, CRY_NONCE_BYTES);
	assert_int_equal(cry_block_open(back, kat_seal_key, 5, 9, a, sizeof(a)), LWC_OK);
	assert_memory_equal(back, blk, sizeof(blk));
	assert_int_equal(cry_block_open(back, kat_seal_key, 5, 9, b, sizeof(b)), LWC_OK);
	assert_memory_equal(back, blk, sizeof(blk));
	assert_int_equal(cry_block_seal_nonce(b, kat_seal_key, 5, 9, blk, sizeof(blk), a + 8),
			 LWC_OK);
	assert_memory_equal(a, b, sizeof(a));
}

/* ------------------------------------------------------------ permutation */

static void test_perm_seed_kat(void **state)
{
	uint8_t seed[CRY_SEED_BYTES];

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(kat_seed); i++) {
		assert_int_equal(cry_perm_seed(seed, kat_perm_key, kat_seed[i].id,
					       kat_seed[i].version), LWC_OK);
		assert_memory_equal(seed, kat_seed[i].seed, CRY_SEED_BYTES);
	}
	assert_int_equal(cry_perm_seed(seed, kat_perm_key, 7, 1), LWC_OK);
	assert_memory_equal(seed, kat_drg_seed, CRY_SEED_BYTES);
	assert_int_equal(cry_perm_seed(seed, kat_perm_key, KAT_REJ_ID, KAT_REJ_VERSION),
			 LWC_OK);
	assert_memory_equal(seed, kat_rej_seed, CRY_SEED_BYTES);
}

/* libsodium's randombytes_buf_deterministic against ref.py's ChaCha20-IETF
 * keystream (key = seed, nonce "LibsodiumDRG", counter 0): the stream cry.c
 * reads incrementally with crypto_stream_chacha20_ietf_xor_ic. */
static void test_drg_stream(void **state)
{
	uint8_t *buf = xmalloc(65536);

	(void)state;
	randombytes_buf_deterministic(buf, 64, kat_drg_seed);
	assert_memory_equal(buf, kat_drg_1024, 64);
	randombytes_buf_deterministic(buf, 1024, kat_drg_seed);
	assert_memory_equal(buf, kat_drg_1024, 1024);
	randombytes_buf_deterministic(buf, 65536, kat_drg_seed);
	assert_memory_equal(buf, kat_drg_1024, 1024);
	assert_digest(buf, 65536, kat_drg_65536_digest);
	free(buf);
}

static void test_perm_kat_64(void **state)
{
	static const uint8_t *const want[] = {
		kat_perm64_c1, kat_perm64_c2, kat_perm64_c4, kat_perm64_c8
	};
	uint8_t buf[64], id[64];

	(void)state;
	for (size_t i = 0; i < 64; i++)
		id[i] = (uint8_t)i;
	for (size_t c = 0; c < ARRAY_LEN(cells); c++) {
		memcpy(buf, id, 64);
		permute_ok(buf, 64, cells[c], kat_drg_seed);
		assert_memory_equal(buf, want[c], 64);
		unpermute_ok(buf, 64, cells[c], kat_drg_seed);
		assert_memory_equal(buf, id, 64);
	}
}

static void test_perm_kat_10752(void **state)
{
	static const uint8_t *const want[] = {
		kat_perm10752_c1_digest, kat_perm10752_c2_digest,
		kat_perm10752_c4_digest, kat_perm10752_c8_digest
	};
	const size_t n = 10752;
	uint8_t *orig = pattern_block(n), *buf = xmalloc(n);

	(void)state;
	for (size_t c = 0; c < ARRAY_LEN(cells); c++) {
		memcpy(buf, orig, n);
		permute_ok(buf, n, cells[c], kat_drg_seed);
		assert_digest(buf, n, want[c]);
		unpermute_ok(buf, n, cells[c], kat_drg_seed);
		assert_memory_equal(buf, orig, n);
	}
	free(orig);
	free(buf);
}

/* 262144 cells: ref.py saw KAT_REJ_COUNT draws rejected by the unbiased
 * sampler here; a sampler without (or with wrong) rejection diverges. */
static void test_perm_kat_rejection(void **state)
{
	uint8_t *orig = pattern_block(KAT_REJ_LEN), *buf = xmalloc(KAT_REJ_LEN);

	(void)state;
	assert_true(KAT_REJ_COUNT > 0);
	memcpy(buf, orig, KAT_REJ_LEN);
	permute_ok(buf, KAT_REJ_LEN, 1, kat_rej_seed);
	assert_memory_equal(buf, kat_rej_head, KAT_REJ_HEAD_LEN);
	assert_digest(buf, KAT_REJ_LEN, kat_rej_digest);
	unpermute_ok(buf, KAT_REJ_LEN, 1, kat_rej_seed);
	assert_memory_equal(buf, orig, KAT_REJ_LEN);
	free(orig);
	free(buf);
}

static void test_perm_roundtrip(void **state)
{
	uint8_t seed[CRY_SEED_BYTES];

	(void)state;
	randombytes_buf(seed, sizeof(seed));
	for (size_t f = 0; f < ARRAY_LEN(fmts); f++)
	for (size_t c = 0; c < ARRAY_LEN(cells); c++) {
		const unsigned cell = cells[c];
		const size_t lens[] = { 0, cell, 2 * cell, 3 * cell, 64, 10752, 262144 };

		for (size_t l = 0; l < ARRAY_LEN(lens); l++) {
			const size_t n = lens[l];
			uint8_t *orig = xmalloc(n), *buf = xmalloc(n);

			randombytes_buf(orig, n);
			memcpy(buf, orig, n);
			permute_fmt(buf, n, cell, fmts[f], seed);
			unpermute_fmt(buf, n, cell, fmts[f], seed);
			if (n)
				assert_memory_equal(buf, orig, n);
			/* and the other way round */
			unpermute_fmt(buf, n, cell, fmts[f], seed);
			permute_fmt(buf, n, cell, fmts[f], seed);
			if (n)
				assert_memory_equal(buf, orig, n);
			/* one cell is left alone */
			if (n == cell) {
				permute_fmt(buf, n, cell, fmts[f], seed);
				assert_memory_equal(buf, orig, n);
			}
			free(orig);
			free(buf);
		}
	}
}

static void test_perm_determinism(void **state)
{
	uint8_t perms[ARRAY_LEN(kat_seed)][256];
	uint8_t again[256];

	(void)state;
	for (size_t s = 0; s < ARRAY_LEN(kat_seed); s++) {
		for (size_t i = 0; i < 256; i++)
			perms[s][i] = (uint8_t)i;
		permute_ok(perms[s], 256, 1, kat_seed[s].seed);
		/* same seed -> same order */
		for (size_t i = 0; i < 256; i++)
			again[i] = (uint8_t)i;
		permute_ok(again, 256, 1, kat_seed[s].seed);
		assert_memory_equal(again, perms[s], 256);
	}
	/* different seeds (different id or version) -> different orders */
	for (size_t s = 0; s < ARRAY_LEN(kat_seed); s++)
		for (size_t t = s + 1; t < ARRAY_LEN(kat_seed); t++)
			assert_memory_not_equal(perms[s], perms[t], 256);
	/* and none is the identity */
	for (size_t i = 0; i < 256; i++)
		again[i] = (uint8_t)i;
	for (size_t s = 0; s < ARRAY_LEN(kat_seed); s++)
		assert_memory_not_equal(perms[s], again, 256);
}

/* Distinct cells (each holds its own index) come out as a permutation:
 * every index exactly once. */
static void test_perm_bijection(void **state)
{
	uint8_t seed[CRY_SEED_BYTES];

	(void)state;
	randombytes_buf(seed, sizeof(seed));
	for (size_t f = 0; f < ARRAY_LEN(fmts); f++)
	for (size_t c = 0; c < ARRAY_LEN(cells); c++) {
		const unsigned cell = cells[c];
		/* n distinct indices must fit in one cell */
		const size_t len = cell == 1 ? 256 : cell == 2 ? 131072 : 262144;
		const size_t n = len / cell;
		uint8_t *buf = xmalloc(len), *seen = xmalloc(n);
		size_t moved = 0;

		for (size_t i = 0; i < n; i++) {
			uint64_t v = i;

			for (unsigned k = 0; k < cell; k++)
				buf[i * cell + k] = (uint8_t)(v >> (8 * k));
		}
		permute_fmt(buf, len, cell, fmts[f], seed);
		memset(seen, 0, n);
		for (size_t i = 0; i < n; i++) {
			uint64_t v = 0;

			for (unsigned k = 0; k < cell; k++)
				v |= (uint64_t)buf[i * cell + k] << (8 * k);
			assert_true(v < n);
			assert_int_equal(seen[v], 0);
			seen[v] = 1;
			moved += v != i;
		}
		assert_true(moved > n / 2);
		free(buf);
		free(seen);
	}
}

/* Block format 2 against ref.py's independent Lemire draws: 64 cells of
 * bytes 0..63, the 10752-byte pattern (cell 1: hundreds of rejected draws)
 * and 131072 cells (32-bit draws, then 16-bit ones). */
static void test_perm2_kat(void **state)
{
	static const uint8_t *const want64[] = {
		kat_perm2_64_c1, kat_perm2_64_c2, kat_perm2_64_c4, kat_perm2_64_c8
	};
	static const uint8_t *const want10752[] = {
		kat_perm2_10752_c1_digest, kat_perm2_10752_c2_digest,
		kat_perm2_10752_c4_digest, kat_perm2_10752_c8_digest
	};
	const size_t n = 10752;
	uint8_t buf64[64], id[64];
	uint8_t *orig = pattern_block(KAT_PERM2_BIG_LEN), *buf = xmalloc(KAT_PERM2_BIG_LEN);

	(void)state;
	for (size_t i = 0; i < 64; i++)
		id[i] = (uint8_t)i;
	for (size_t c = 0; c < ARRAY_LEN(cells); c++) {
		memcpy(buf64, id, 64);
		permute_fmt(buf64, 64, cells[c], CRY_PERM_V2, kat_drg_seed);
		assert_memory_equal(buf64, want64[c], 64);
		unpermute_fmt(buf64, 64, cells[c], CRY_PERM_V2, kat_drg_seed);
		assert_memory_equal(buf64, id, 64);

		memcpy(buf, orig, n);
		permute_fmt(buf, n, cells[c], CRY_PERM_V2, kat_drg_seed);
		assert_digest(buf, n, want10752[c]);
		unpermute_fmt(buf, n, cells[c], CRY_PERM_V2, kat_drg_seed);
		assert_memory_equal(buf, orig, n);
	}
	memcpy(buf, orig, KAT_PERM2_BIG_LEN);
	permute_fmt(buf, KAT_PERM2_BIG_LEN, 2, CRY_PERM_V2, kat_drg_seed);
	assert_digest(buf, KAT_PERM2_BIG_LEN, kat_perm2_262144_c2_digest);
	/* format 1 is another permutation of the same block */
	memcpy(buf64, id, 64);
	permute_fmt(buf64, 64, 1, CRY_PERM_V1, kat_drg_seed);
	assert_memory_not_equal(buf64, kat_perm2_64_c1, 64);
	free(orig);
	free(buf);
}

/* A plain format-2 reference from its definition: Fisher-Yates from the
 * top, the swap partner of cell i drawn by Lemire's method from the next
 * little-endian word of randombytes_buf_deterministic's stream, 32 bits
 * while i + 1 > 2^16, else 16, a word rejected while its product's low half
 * is below 2^w mod (i + 1).  Returns the number of rejected words. */
static size_t ref_perm2(uint32_t *cells32, size_t n, const uint8_t seed[32])
{
	size_t len = 4 * n + 65536, pos = 0, rejected = 0;
	uint8_t *ks = xmalloc(len);

	randombytes_buf_deterministic(ks, len, seed);
	for (size_t i = n - 1; i >= 1; i--) {
		uint64_t up = (uint64_t)i + 1, j;

		for (;;) {
			int wide = up > 65536;
			uint64_t w = 0, m, lo, bits = wide ? 32 : 16;

			assert_true(pos + bits / 8 <= len);
			for (unsigned b = 0; b < bits / 8; b++)
				w |= (uint64_t)ks[pos + b] << (8 * b);
			pos += bits / 8;
			m = w * up;
			lo = m & ((1ull << bits) - 1);
			if (lo >= ((1ull << bits) % up)) {
				j = m >> bits;
				break;
			}
			rejected++;
		}
		uint32_t t = cells32[i];
		cells32[i] = cells32[j];
		cells32[j] = t;
	}
	free(ks);
	return rejected;
}

/* cry_permute's format-2 draws (eight at a time where the CPU allows)
 * against ref_perm2: 4-byte cells holding their own index, every size from 2
 * to 80 cells, sizes around the draws' groups of eight and the generator's
 * chunks, the block sizes of every cell width, sizes past 2^16 (32-bit draws
 * first), each over many seeds; enough rejected words that a wrong
 * rejection anywhere would show. */
static void test_perm2_reference(void **state)
{
	static const size_t sizes[] = {
		127, 128, 129, 511, 512, 513, 514, 515, 520, 1023, 1024, 1025, 1344,
		1345, 1350, 2047, 2048, 2049, 2688, 5376, 10752, 40000, 65535, 65536,
		65537, 65544, 70000
	};
	size_t rejected = 0, cases = 0;

	(void)state;
	for (size_t z = 0; z < 80 + ARRAY_LEN(sizes); z++) {
		size_t n = z < 80 ? z + 2 : sizes[z - 80];
		unsigned seeds = n > 20000 ? 3 : n > 2000 ? 20 : 60;
		uint32_t *want = xmalloc(4 * n), *got = xmalloc(4 * n);
		uint32_t *s = scratch_for(4 * n, 4);

		for (unsigned k = 0; k < seeds; k++) {
			uint8_t seed[32], label[16];

			snprintf((char *)label, sizeof(label), "%zu/%u", n, k);
			crypto_generichash(seed, sizeof(seed), label, sizeof(label), NULL, 0);
			for (size_t i = 0; i < n; i++)
				want[i] = got[i] = (uint32_t)i;
			rejected += ref_perm2(want, n, seed);
			assert_int_equal(cry_permute((uint8_t *)got, 4 * n, 4, CRY_PERM_V2,
						     seed, s), LWC_OK);
			assert_memory_equal(got, want, 4 * n);
			assert_int_equal(cry_unpermute((uint8_t *)got, 4 * n, 4, CRY_PERM_V2,
						       seed, s), LWC_OK);
			for (size_t i = 0; i < n; i++)
				assert_int_equal(got[i], i);
			cases++;
		}
		free(want);
		free(got);
		free(s);
	}
	assert_true(cases > 5000);
	assert_true(rejected > 1000);
}

/* Both formats are uniform: the 24 orders of 4 cells over 24,000 seeds
 * (fixed, so the figure is reproducible) each come out about 1,000 times.
 * Chi-square with 23 degrees of freedom: 80 has probability below 1e-7 for
 * a uniform shuffle.  The exactness of the rejection is what the
 * known-answer vectors check. */
static void test_perm_uniform(void **state)
{
	(void)state;
	for (size_t f = 0; f < ARRAY_LEN(fmts); f++) {
		unsigned count[256] = { 0 };
		double chi = 0;
		size_t orders = 0;

		for (uint32_t k = 0; k < 24000; k++) {
			uint8_t seed[CRY_SEED_BYTES] = { 0 }, b[4] = { 0, 1, 2, 3 };

			memcpy(seed, &k, sizeof(k));
			seed[31] = (uint8_t)(0xa0 + f);
			permute_fmt(b, 4, 1, fmts[f], seed);
			count[b[0] << 6 | b[1] << 4 | b[2] << 2 | b[3]]++;
		}
		for (size_t i = 0; i < 256; i++) {
			if (count[i] == 0)
				continue;
			orders++;
			chi += (count[i] - 1000.0) * (count[i] - 1000.0) / 1000.0;
		}
		assert_int_equal(orders, 24);
		assert_true(chi < 80.0);
	}
	/* The first swap of a 1000-cell block puts j = uniform(1000) in the
	 * last position for good: over 10,000 seeds each decile of j comes
	 * out about 1,000 times (chi-square, 9 degrees of freedom: 45 has
	 * probability below 1e-6). */
	for (size_t f = 0; f < ARRAY_LEN(fmts); f++) {
		unsigned decile[10] = { 0 };
		const size_t n = 1000;
		uint16_t b[1000];
		double chi = 0;

		for (uint32_t k = 0; k < 10000; k++) {
			uint8_t seed[CRY_SEED_BYTES] = { 0 };

			for (size_t i = 0; i < n; i++)
				b[i] = (uint16_t)i;
			memcpy(seed, &k, sizeof(k));
			seed[30] = 0x5c;
			seed[31] = (uint8_t)f;
			permute_fmt((uint8_t *)b, sizeof(b), 2, fmts[f], seed);
			assert_true(b[n - 1] < n);
			decile[b[n - 1] / 100]++;
		}
		for (int t = 0; t < 10; t++)
			chi += (decile[t] - 1000.0) * (decile[t] - 1000.0) / 1000.0;
		assert_true(chi < 45.0);
	}
}

static void test_perm_args(void **state)
{
	uint8_t buf[64], orig[64], seed[CRY_SEED_BYTES] = { 1 };
	uint32_t scratch[64];
	const unsigned bad_cells[] = { 0, 3, 5, 6, 7, 9, 16, 32 };

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		orig[i] = (uint8_t)i;
	memcpy(buf, orig, sizeof(buf));
	for (size_t i = 0; i < ARRAY_LEN(bad_cells); i++) {
		assert_int_equal(cry_permute(buf, 48, bad_cells[i], CRY_PERM_V2, seed, scratch),
				 LWC_ERR_ARG);
		assert_int_equal(cry_unpermute(buf, 48, bad_cells[i], CRY_PERM_V2, seed, scratch),
				 LWC_ERR_ARG);
	}
	/* len not a multiple of the cell */
	assert_int_equal(cry_permute(buf, 63, 2, CRY_PERM_V1, seed, scratch), LWC_ERR_ARG);
	assert_int_equal(cry_permute(buf, 62, 4, CRY_PERM_V1, seed, scratch), LWC_ERR_ARG);
	assert_int_equal(cry_permute(buf, 60, 8, CRY_PERM_V1, seed, scratch), LWC_ERR_ARG);
	assert_int_equal(cry_unpermute(buf, 1, 2, CRY_PERM_V1, seed, scratch), LWC_ERR_ARG);
	assert_int_equal(cry_unpermute(buf, 12, 8, CRY_PERM_V1, seed, scratch), LWC_ERR_ARG);
	/* missing buffers */
	assert_int_equal(cry_permute(NULL, 64, 1, CRY_PERM_V1, seed, scratch), LWC_ERR_ARG);
	assert_int_equal(cry_permute(buf, 64, 1, CRY_PERM_V1, seed, NULL), LWC_ERR_ARG);
	assert_int_equal(cry_unpermute(NULL, 64, 1, CRY_PERM_V1, seed, scratch), LWC_ERR_ARG);
	assert_int_equal(cry_unpermute(buf, 64, 1, CRY_PERM_V1, seed, NULL), LWC_ERR_ARG);
	/* nothing was touched */
	assert_memory_equal(buf, orig, sizeof(buf));
	/* scratch sizing */
	assert_int_equal(cry_perm_scratch_words(64, 1), 64);
	assert_int_equal(cry_perm_scratch_words(64, 8), 8);
	assert_int_equal(cry_perm_scratch_words(262144, 4), 65536);
	assert_int_equal(cry_perm_scratch_words(0, 2), 0);
}

/* ------------------------------------------------------- the servers' RNG */

#define RNG_DRAWS 4096

static void *rng_thread(void *p)
{
	uint64_t *out = p;

	for (size_t i = 0; i < RNG_DRAWS; i++)
		out[i] = ((uint64_t)randombytes_random() << 32) | randombytes_random();
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* cry_init_server installs libsodium's internal generator; its state must be
 * per thread (a shared state raced by two threads can hand both the same
 * bytes), and its uniform draws must stay uniform. */
/* The big-endian helpers every layout uses: the byte order, and a round
 * trip of values with every byte different. */
static void test_be64(void **state)
{
	static const uint8_t want[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
	uint8_t b[9];
	uint64_t v = 0x9e3779b97f4a7c15u;
	(void)state;

	memset(b, 0x5a, sizeof(b));
	cry_put_be64(b, 0x0123456789abcdefu);
	assert_memory_equal(b, want, 8);
	assert_int_equal(b[8], 0x5a);                 /* nothing past the 8 bytes */
	assert_true(cry_get_be64(want) == 0x0123456789abcdefu);
	for (int i = 0; i < 1000; i++) {
		v ^= v << 13;
		v ^= v >> 7;
		v ^= v << 17;
		cry_put_be64(b + (i & 1), v);            /* unaligned as well */
		assert_true(cry_get_be64(b + (i & 1)) == v);
		assert_int_equal(b[(i & 1)], (uint8_t)(v >> 56));
		assert_int_equal(b[(i & 1) + 7], (uint8_t)v);
	}
}

/* chi-square of counts against a uniform expectation */
static double chi2(const unsigned *cnt, unsigned k, unsigned total)
{
	double e = (double)total / k, x = 0;

	for (unsigned i = 0; i < k; i++)
		x += (cnt[i] - e) * (cnt[i] - e) / e;
	return x;
}

/* cry_draw: within [0, n), uniform across refills of its buffer (70,000
 * draws of 7), without the multiply-and-shift's bias where it is largest:
 * for n = 3 * 2^30 a word maps to v = floor(3w / 4), and without the
 * rejection v = 0 mod 3 comes twice as often as each other residue (chi-
 * square in the thousands); 2 degrees of freedom, 1 in 10^6 to pass 28. */
static void test_draws(void **state)
{
	struct cry_draws d = CRY_DRAWS_INIT;
	unsigned c7[7] = { 0 }, c3[3] = { 0 };

	(void)state;
	for (int i = 0; i < 1000; i++)
		assert_int_equal(cry_draw(&d, 1), 0);
	for (int i = 0; i < 70000; i++) {
		uint32_t v = cry_draw(&d, 7);

		assert_true(v < 7);
		c7[v]++;
	}
	/* 6 degrees of freedom: 1 in 10^6 above 35.9 */
	assert_true(chi2(c7, 7, 70000) < 35.9);
	for (int i = 0; i < 30000; i++) {
		uint32_t v = cry_draw(&d, 3u << 30);

		assert_true(v < (3u << 30));
		c3[v % 3]++;
	}
	assert_true(chi2(c3, 3, 30000) < 28.0);
	assert_true(cry_draw(&d, UINT32_MAX) < UINT32_MAX);
	cry_draws_wipe(&d);
	assert_int_equal(d.i, 64);
	for (int i = 0; i < 64; i++)
		assert_int_equal(d.w[i], 0);
}

static void test_server_rng(void **state)
{
	uint64_t *all = malloc(3 * RNG_DRAWS * sizeof(*all));
	pthread_t th[2];
	unsigned counts[10] = { 0 };
	double chi2 = 0;
	uint8_t a[64], b[64];

	(void)state;
	assert_non_null(all);
	assert_int_equal(cry_init_server(), LWC_OK);
	assert_string_equal(randombytes_implementation_name(), "internal");
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, rng_thread, all + (size_t)i * RNG_DRAWS), 0);
	rng_thread(all + 2 * RNG_DRAWS);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	qsort(all, 3 * RNG_DRAWS, sizeof(*all), cmp_u64);
	for (size_t i = 1; i < 3 * RNG_DRAWS; i++)
		assert_true(all[i] != all[i - 1]);
	free(all);
	randombytes_buf(a, sizeof(a));
	randombytes_buf(b, sizeof(b));
	assert_memory_not_equal(a, b, sizeof(a));
	for (int i = 0; i < 100000; i++)
		counts[randombytes_uniform(10)]++;
	for (int i = 0; i < 10; i++)
		chi2 += (counts[i] - 10000.0) * (counts[i] - 10000.0) / 10000.0;
	assert_true(chi2 < 40.0);      /* 9 degrees of freedom: p < 1e-5 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xchacha_draft_vector),
		cmocka_unit_test(test_kdf_kat),
		cmocka_unit_test(test_token_kat),
		cmocka_unit_test(test_token_state),
		cmocka_unit_test(test_token_properties),
		cmocka_unit_test(test_record_kat),
		cmocka_unit_test(test_record_tamper),
		cmocka_unit_test(test_record_random_nonce),
		cmocka_unit_test(test_block_kat),
		cmocka_unit_test(test_block_tamper),
		cmocka_unit_test(test_block_random_nonce),
		cmocka_unit_test(test_perm_seed_kat),
		cmocka_unit_test(test_drg_stream),
		cmocka_unit_test(test_perm_kat_64),
		cmocka_unit_test(test_perm_kat_10752),
		cmocka_unit_test(test_perm_kat_rejection),
		cmocka_unit_test(test_perm2_kat),
		cmocka_unit_test(test_perm2_reference),
		cmocka_unit_test(test_perm_uniform),
		cmocka_unit_test(test_perm_roundtrip),
		cmocka_unit_test(test_perm_determinism),
		cmocka_unit_test(test_perm_bijection),
		cmocka_unit_test(test_perm_args),
		cmocka_unit_test(test_be64),
		cmocka_unit_test(test_draws),
		cmocka_unit_test(test_server_rng),
	};

	if (cry_init() != LWC_OK) {
		fprintf(stderr, "cry_init failed\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
