/*
 * test_range.c - order-preserving keys and range covers (client/range.c).
 *
 * Keys: INT, BIGINT and FLOAT values in SQL order give keys in the same
 * order (FLOAT with -0.0 = 0.0 and NaN last, as PostgreSQL).  Covers: every
 * range [lo, hi] of an 8-bit domain, for 1, 2, 4 and 8 bits per level, is
 * checked against brute force: each key of the range lies under exactly one
 * node, no key outside under any, and the node count is the canonical
 * decomposition's (computed recursively over the trie), which is the
 * minimum.  Text: every range between bounds drawn from all strings of up
 * to 3 bytes over a small alphabet (with 0x01 and 0xff, inclusive,
 * exclusive or absent), at depths 1 to 3 and with a tight budget, checked
 * on every string of up to 4 bytes through the tokens a row really carries
 * (range_value_nodes_text): a string of the range always matches a node, a
 * string outside matches none when the cover says it is exact.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "range.h"
#include "tokmemo.h"

static uint64_t rng_state = 1;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void test_int_keys(void **state)
{
	const int64_t v32[] = { INT32_MIN, INT32_MIN + 1, -65536, -1, 0, 1, 255, 65536,
				INT32_MAX - 1, INT32_MAX };
	const int64_t v64[] = { INT64_MIN, INT64_MIN + 1, -((int64_t)1 << 40), INT32_MIN, -1, 0,
				1, INT32_MAX, (int64_t)1 << 40, INT64_MAX - 1, INT64_MAX };
	(void)state;
	for (size_t i = 0; i < sizeof(v32) / sizeof(v32[0]); i++) {
		uint64_t k = range_key_int(RANGE_INT32, v32[i]);
		assert_true(k <= UINT32_MAX);
		assert_int_equal(range_int_of_key(RANGE_INT32, k), v32[i]);
		if (i > 0)
			assert_true(range_key_int(RANGE_INT32, v32[i - 1]) < k);
	}
	for (size_t i = 0; i < sizeof(v64) / sizeof(v64[0]); i++) {
		uint64_t k = range_key_int(RANGE_INT64, v64[i]);
		assert_int_equal(range_int_of_key(RANGE_INT64, k), v64[i]);
		if (i > 0)
			assert_true(range_key_int(RANGE_INT64, v64[i - 1]) < k);
	}
	for (int i = 0; i < 100000; i++) {
		int64_t a = (int64_t)rng(), b = (int64_t)rng();
		assert_int_equal(a < b, range_key_int(RANGE_INT64, a) < range_key_int(RANGE_INT64, b));
		a = (int32_t)a;
		b = (int32_t)b;
		assert_int_equal(a < b, range_key_int(RANGE_INT32, a) < range_key_int(RANGE_INT32, b));
	}
}

static void test_float_keys(void **state)
{
	/* PostgreSQL's order: -Infinity ... -0 = 0 ... Infinity < NaN */
	const double v[] = { -INFINITY, -DBL_MAX, -1e300, -2.5, -1.0, -DBL_MIN, -4.9e-324, 0.0,
			     4.9e-324, DBL_MIN, 1.0, 1.0000000000000002, 2.5, 1e300, DBL_MAX,
			     INFINITY };
	(void)state;
	for (size_t i = 1; i < sizeof(v) / sizeof(v[0]); i++)
		assert_true(range_key_float(v[i - 1]) < range_key_float(v[i]));
	assert_true(range_key_float(-0.0) == range_key_float(0.0));
	assert_true(range_key_float(NAN) == UINT64_MAX);
	assert_true(range_key_float(-NAN) == UINT64_MAX);
	assert_true(range_key_float(INFINITY) < range_key_float(NAN));
	for (int i = 0; i < 100000; i++) {
		uint64_t ua = rng(), ub = rng();
		double a, b;
		memcpy(&a, &ua, 8);
		memcpy(&b, &ub, 8);
		if (isnan(a) || isnan(b))
			continue;
		assert_int_equal(a < b, range_key_float(a) < range_key_float(b));
		assert_int_equal(a == b, range_key_float(a) == range_key_float(b));
	}
}

static void test_levels(void **state)
{
	(void)state;
	assert_int_equal(range_levels(RANGE_INT32, 4), 7);
	assert_int_equal(range_levels(RANGE_INT64, 4), 15);
	assert_int_equal(range_levels(RANGE_FLOAT, 4), 16);
	assert_int_equal(range_levels(RANGE_TEXT, 4), RANGE_TEXT_DEPTH);
	for (unsigned b = 1; b <= 16; b *= 2) {
		assert_int_equal(range_bits_of(RANGE_INT32, range_levels(RANGE_INT32, b)), b);
		assert_int_equal(range_bits_of(RANGE_INT64, range_levels(RANGE_INT64, b)), b);
		assert_int_equal(range_bits_of(RANGE_FLOAT, range_levels(RANGE_FLOAT, b)), b);
	}
	assert_int_equal(range_bits_of(RANGE_INT32, 5), 0);
}

/* nodes of the canonical decomposition of [lo, hi] under the node
 * (prefix at `level`) of a width-bit trie */
static size_t canon(unsigned width, unsigned bits, unsigned level, uint64_t prefix,
		    uint64_t lo, uint64_t hi)
{
	unsigned sh = width - level * bits;
	uint64_t first = prefix << sh, last = first + (((uint64_t)1 << sh) - 1);
	size_t n = 0;

	if (last < lo || first > hi)
		return 0;
	if (first >= lo && last <= hi)
		return 1;
	for (uint64_t c = 0; c < ((uint64_t)1 << bits); c++)
		n += canon(width, bits, level + 1, prefix << bits | c, lo, hi);
	return n;
}

static void test_cover_num_all(void **state)
{
	static struct range_node out[512];
	size_t n;

	(void)state;
	for (unsigned bits = 1; bits <= 8; bits *= 2) {
		for (unsigned lo = 0; lo < 256; lo++)
			for (unsigned hi = 0; hi < 256; hi++) {
				assert_int_equal(range_cover_num(8, bits, lo, hi, out, 512, &n),
						 LWC_OK);
				if (lo > hi) {
					assert_int_equal(n, 0);
					continue;
				}
				assert_int_equal(n, canon(8, bits, 0, 0, lo, hi));
				for (unsigned k = 0; k < 256; k++) {
					int under = 0;
					for (size_t i = 0; i < n; i++)
						under += range_node_holds_num(8, bits, &out[i], k);
					assert_int_equal(under, k >= lo && k <= hi);
				}
			}
	}
	/* too small an output */
	assert_int_equal(range_cover_num(8, 1, 1, 254, out, 3, &n), LWC_ERR_TOO_BIG);
}

/* the cover of wide keys through the tokens rows carry: levels 1 .. D-1 and
 * the equality (whole key) at level D */
static int row_matches_num(enum range_kind k, unsigned bits, uint64_t key,
			   const struct range_node *x)
{
	struct range_node rn[RANGE_MAX_LEVELS];
	unsigned nl = range_levels(k, bits), d = range_depth(k, bits);

	if (x->level == 0)
		return 1;
	if (x->level == d && nl < d)
		return key == x->num;
	range_value_nodes_num(k, bits, key, rn);
	return rn[x->level - 1].num == x->num;
}

static void test_cover_num_wide(void **state)
{
	static struct range_node out[4096];
	size_t n;

	(void)state;
	assert_int_equal(range_cover_num(64, 4, 0, UINT64_MAX, out, 4096, &n), LWC_OK);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].level, 0);
	assert_int_equal(range_cover_num(64, 4, UINT64_MAX, UINT64_MAX, out, 4096, &n), LWC_OK);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].level, 16);
	assert_int_equal(range_cover_num(64, 4, 1, UINT64_MAX - 1, out, 4096, &n), LWC_OK);
	/* 15 nodes at each of levels 16 .. 2 on either side, 14 at level 1 */
	assert_int_equal(n, 2 * 15 * 15 + 14);
	for (int round = 0; round < 3000; round++) {
		enum range_kind k = round % 2 ? RANGE_INT32 : RANGE_INT64;
		unsigned bits = 1u << (round % 3 + 1);       /* 2, 4, 8 */
		unsigned w = range_width(k);
		uint64_t mask = w == 64 ? UINT64_MAX : ((uint64_t)1 << w) - 1;
		uint64_t a = rng() & mask, b, span = rng() >> (rng() % 64);
		b = a + span > mask || a + span < a ? mask : a + span;
		assert_int_equal(range_cover_num(w, bits, a, b, out, 4096, &n), LWC_OK);
		assert_true(n <= 2 * ((1u << bits) - 1) * range_depth(k, bits));
		/* probes: the bounds, their neighbours, random keys */
		for (int p = 0; p < 40; p++) {
			uint64_t key = p == 0 ? a : p == 1 ? b : p == 2 ? a - 1 : p == 3 ? b + 1
				       : p < 20 ? a + rng() % (span + 1) : rng();
			int under = 0;
			key &= mask;
			for (size_t i = 0; i < n; i++)
				under += row_matches_num(k, bits, key, &out[i]);
			assert_int_equal(under, key >= a && key <= b);
		}
	}
}

/* ---- text ---------------------------------------------------------------- */

static const uint8_t alpha[] = { 0x01, 'b', 0xff };

/* all strings of up to maxlen bytes over alpha */
static size_t all_strings(uint8_t s[][4], size_t *len, size_t maxlen)
{
	size_t n = 0;

	for (size_t l = 0; l <= maxlen; l++) {
		size_t count = 1;
		for (size_t i = 0; i < l; i++)
			count *= sizeof(alpha);
		for (size_t x = 0; x < count; x++) {
			size_t y = x;
			for (size_t i = l; i-- > 0;) {
				s[n][i] = alpha[y % sizeof(alpha)];
				y /= sizeof(alpha);
			}
			len[n++] = l;
		}
	}
	return n;
}

static int cmp_bytes(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	size_t m = la < lb ? la : lb;
	int c = m ? memcmp(a, b, m) : 0;

	return c ? c : la < lb ? -1 : la > lb;
}

static int in_range(const uint8_t *s, size_t l, const struct range_tbound *lo,
		    const struct range_tbound *hi)
{
	if (lo->present) {
		int c = cmp_bytes(s, l, lo->s, lo->len);
		if (c < 0 || (c == 0 && !lo->incl))
			return 0;
	}
	if (hi->present) {
		int c = cmp_bytes(s, l, hi->s, hi->len);
		if (c > 0 || (c == 0 && !hi->incl))
			return 0;
	}
	return 1;
}

/* does a row whose tokens are those of rn match node x: token equality at
 * x's level */
static int row_matches_text(const struct range_node *rn, const struct range_node *x)
{
	if (x->level == 0)
		return 1;
	return rn[x->level - 1].len == x->len &&
	       memcmp(rn[x->level - 1].bytes, x->bytes, x->len) == 0;
}

static void test_cover_text_all(void **state)
{
	static uint8_t bs[64][4], ps[160][4];
	static size_t bl[64], pl[160];
	static struct range_node out[1024], rn[160][RANGE_TEXT_DEPTH];
	size_t nb = all_strings(bs, bl, 3), np = all_strings(ps, pl, 4);
	size_t covers = 0, inexact = 0;

	(void)state;
	assert_int_equal(nb, 40);
	assert_int_equal(np, 121);
	for (size_t p = 0; p < np; p++)
		range_value_nodes_text(ps[p], pl[p], rn[p]);
	for (size_t i = 0; i <= 2 * nb; i++)
		for (size_t j = 0; j <= 2 * nb; j++) {
			struct range_tbound lo = { 0 }, hi = { 0 };
			if (i < 2 * nb)
				lo = (struct range_tbound){ 1, (int)(i & 1), bs[i / 2], bl[i / 2] };
			if (j < 2 * nb)
				hi = (struct range_tbound){ 1, (int)(j & 1), bs[j / 2], bl[j / 2] };
			for (unsigned depth = 1; depth <= 3; depth++)
				for (int tight = 0; tight < 2; tight++) {
					size_t n, budget = tight ? 3 : RANGE_BUDGET;
					int exact, rc;

					rc = range_cover_text(&lo, &hi, depth, budget, out, 1024,
							      &n, &exact);
					assert_int_equal(rc, LWC_OK);
					assert_true(n <= budget);
					covers++;
					inexact += !exact;
					for (size_t p = 0; p < np; p++) {
						int want = in_range(ps[p], pl[p], &lo, &hi), got = 0;
						for (size_t x = 0; x < n && !got; x++)
							got = row_matches_text(rn[p], &out[x]);
						if (want)
							assert_true(got);
						else if (exact)
							assert_false(got);
					}
				}
		}
	/* most covers are exact at these depths */
	assert_true(covers == 81 * 81 * 6);
	assert_true(inexact < covers);
}

static void test_cover_text_prefix(void **state)
{
	/* LIKE 'abc%': [abc, abd) is the one node "abc" */
	struct range_tbound lo = { 1, 1, (const uint8_t *)"abc", 3 },
			    hi = { 1, 0, (const uint8_t *)"abd", 3 };
	struct range_node out[RANGE_BUDGET];
	size_t n;
	int exact;

	(void)state;
	assert_int_equal(range_cover_text(&lo, &hi, RANGE_TEXT_DEPTH, RANGE_BUDGET, out,
					  RANGE_BUDGET, &n, &exact), LWC_OK);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].level, 3);
	assert_memory_equal(out[0].bytes, "abc", 3);
	assert_true(exact);
	/* an empty range */
	lo.s = (const uint8_t *)"b";
	lo.len = 1;
	hi.s = (const uint8_t *)"a";
	hi.len = 1;
	assert_int_equal(range_cover_text(&lo, &hi, RANGE_TEXT_DEPTH, RANGE_BUDGET, out,
					  RANGE_BUDGET, &n, &exact), LWC_OK);
	assert_int_equal(n, 0);
}

static void test_tokens(void **state)
{
	uint8_t key[CRY_KEY_BYTES] = { 7 }, t1[CRY_TOKEN_BYTES], t2[CRY_TOKEN_BYTES];
	struct range_node a[RANGE_MAX_LEVELS], b[RANGE_MAX_LEVELS];

	(void)state;
	assert_int_equal(cry_init(), LWC_OK);
	range_value_nodes_num(RANGE_INT32, 4, range_key_int(RANGE_INT32, 0x12345), a);
	range_value_nodes_num(RANGE_INT32, 4, range_key_int(RANGE_INT32, 0x12399), b);
	/* same prefix to level 6 (24 bits), different at level 7 */
	for (unsigned l = 0; l < 7; l++) {
		assert_int_equal(range_token(t1, key, "t", "c", RANGE_INT32, &a[l]), LWC_OK);
		assert_int_equal(range_token(t2, key, "t", "c", RANGE_INT32, &b[l]), LWC_OK);
		assert_int_equal(memcmp(t1, t2, sizeof(t1)) == 0, l < 6);
	}
	/* per column */
	assert_int_equal(range_token(t1, key, "t", "c", RANGE_INT32, &a[0]), LWC_OK);
	assert_int_equal(range_token(t2, key, "t", "d", RANGE_INT32, &a[0]), LWC_OK);
	assert_memory_not_equal(t1, t2, sizeof(t1));
}

/* The nodes x[0..n) through the memo, as positions 0..n): each token the
 * one range_token makes of its node. */
static void check_memo(const cry_tokstate *st, const uint8_t key[CRY_KEY_BYTES],
		       enum range_kind k, const struct range_node *x, unsigned n,
		       struct tokmemo *memo)
{
	uint8_t got[CRY_TOKEN_BYTES], want[CRY_TOKEN_BYTES];

	for (unsigned l = 0; l < n; l++) {
		assert_int_equal(range_token_memo(got, st, k, &x[l], memo, l), LWC_OK);
		assert_int_equal(range_token(want, key, "t", "c", k, &x[l]), LWC_OK);
		assert_memory_equal(got, want, CRY_TOKEN_BYTES);
	}
}

/* range_token_memo: the token range_token makes, whether the memo holds
 * the node (reused), another of the same level (made anew), or a text node
 * that is a prefix of one it holds (other length: made anew); a value met
 * again makes no token, a neighbour only its lower levels'. */
static void test_token_memo(void **state)
{
	uint8_t key[CRY_KEY_BYTES] = { 9 };
	static const int32_t vals[] = { 0x12345, 0x12346, 0x12399, 0x12345, -7, -7, 0x7fffffff };
	static const char *texts[] = { "apple", "apple", "apricot", "ap", "a", "apple" };
	struct range_node x[RANGE_MAX_LEVELS];
	cry_tokstate *st = malloc(cry_tokstate_size());
	unsigned levels = range_levels(RANGE_INT32, 4);
	struct tokmemo *memo;
	enum { nv = sizeof(vals) / sizeof(vals[0]) };
	uint64_t made[nv];
	uint8_t seen[nv][RANGE_MAX_LEVELS][CRY_TOKEN_BYTES];

	(void)state;
	assert_non_null(st);
	assert_int_equal(cry_init(), LWC_OK);
	assert_int_equal(cry_token_begin(st, key, "t", "c"), LWC_OK);
	assert_non_null(memo = tokmemo_new(RANGE_MAX_LEVELS, 64));
	for (size_t v = 0; v < nv; v++) {
		uint64_t fresh = 0;

		range_value_nodes_num(RANGE_INT32, 4, range_key_int(RANGE_INT32, vals[v]), x);
		/* the levels whose node no value before had */
		for (unsigned l = 0; l < levels; l++) {
			int met = 0;

			assert_int_equal(range_token(seen[v][l], key, "t", "c", RANGE_INT32, &x[l]),
					 LWC_OK);
			for (size_t u = 0; u < v; u++)
				met |= memcmp(seen[u][l], seen[v][l], CRY_TOKEN_BYTES) == 0;
			fresh += !met;
		}
		check_memo(st, key, RANGE_INT32, x, levels, memo);
		made[v] = tokmemo_made(memo);
		assert_int_equal(made[v] - (v ? made[v - 1] : 0), fresh);
	}
	assert_int_equal(made[0], levels);                 /* all new */
	assert_true(made[2] - made[1] > 0 && made[2] - made[1] < levels);  /* the lower */
	assert_int_equal(made[3], made[2]);                /* met again */
	assert_int_equal(made[5], made[4]);
	tokmemo_free(memo);
	assert_non_null(memo = tokmemo_new(RANGE_MAX_LEVELS, 64));
	for (size_t v = 0; v < sizeof(texts) / sizeof(texts[0]); v++) {
		range_value_nodes_text((const uint8_t *)texts[v], strlen(texts[v]), x);
		check_memo(st, key, RANGE_TEXT, x, RANGE_TEXT_DEPTH, memo);
	}
	tokmemo_free(memo);
	/* no memo: every token made, the same ones */
	range_value_nodes_num(RANGE_INT32, 4, range_key_int(RANGE_INT32, vals[0]), x);
	check_memo(st, key, RANGE_INT32, x, levels, NULL);
	free(st);
}

/* tokmemo_token against cry_token_next: inputs of many sizes (longer than
 * the memo keeps included), values that repeat and ones that do not, in
 * positions of their own; each token the one cry_token_next makes, each
 * value that repeats made once, a table of one entry (a statement of one
 * row), the tag part of the input, and a failing state's error not
 * remembered. */
static void test_tokmemo(void **state)
{
	uint8_t key[CRY_KEY_BYTES] = { 3 }, in[TOKMEMO_INPUT + 16], got[CRY_TOKEN_BYTES], want[CRY_TOKEN_BYTES];
	cry_tokstate *st = malloc(cry_tokstate_size());
	struct tokmemo *m;
	uint64_t rng = 7, made, longs = 0;

	(void)state;
	assert_non_null(st);
	assert_int_equal(cry_init(), LWC_OK);
	assert_int_equal(cry_token_begin(st, key, "t", "c"), LWC_OK);
	assert_non_null(m = tokmemo_new(3, 5000));
	for (int i = 0; i < 20000; i++) {
		size_t pos = (size_t)i % 3, n;

		rng = rng * 6364136223846793005u + 1442695040888963407u;
		if (pos == 0) {                 /* values of 0 .. TOKMEMO_INPUT + 9
						 * bytes, one of each size */
			n = (size_t)(rng >> 33) % (TOKMEMO_INPUT + 10);
			memset(in, (int)n, n);
		} else if (pos == 1) {          /* never twice */
			n = 8;
			cry_put_be64(in, (uint64_t)i);
		} else {                        /* four values just short enough,
						 * and longer ones */
			n = TOKMEMO_INPUT - 1 + (size_t)(rng >> 33) % 6;
			memset(in, (int)(rng >> 40) % 4, n);
		}
		longs += n >= TOKMEMO_INPUT;
		assert_int_equal(tokmemo_token(m, pos, got, st, CRY_TAG_TEXT, in, n), LWC_OK);
		assert_int_equal(cry_token_next(want, st, CRY_TAG_TEXT, in, n), LWC_OK);
		assert_memory_equal(got, want, CRY_TOKEN_BYTES);
	}
	made = tokmemo_made(m);
	/* made: position 1's 6,666 tokens, each input too long to keep, and
	 * the kept values once each (TOKMEMO_INPUT of position 0, 4 of
	 * position 2; a few more if two of them share an entry of the table) */
	assert_true(made >= 6666 + longs + TOKMEMO_INPUT + 4);
	assert_true(made <= 6666 + longs + TOKMEMO_INPUT + 4 + 16);
	tokmemo_free(m);
	/* one entry: the last input only */
	assert_non_null(m = tokmemo_new(1, 1));
	memset(in, 1, 8);
	assert_int_equal(tokmemo_token(m, 0, got, st, CRY_TAG_INT, in, 8), LWC_OK);
	assert_int_equal(tokmemo_token(m, 0, got, st, CRY_TAG_INT, in, 8), LWC_OK);
	assert_int_equal(tokmemo_made(m), 1);
	assert_int_equal(tokmemo_token(m, 0, got, st, CRY_TAG_FLOAT, in, 8), LWC_OK);
	assert_int_equal(tokmemo_made(m), 2);                /* the tag is input */
	assert_int_equal(cry_token_next(want, st, CRY_TAG_FLOAT, in, 8), LWC_OK);
	assert_memory_equal(got, want, CRY_TOKEN_BYTES);
	/* a derivation that fails: its error, and nothing kept */
	assert_int_not_equal(tokmemo_token(m, 0, got, NULL, CRY_TAG_INT, in, 7), LWC_OK);
	assert_int_equal(tokmemo_token(m, 0, got, st, CRY_TAG_INT, in, 7), LWC_OK);
	assert_int_equal(cry_token_next(want, st, CRY_TAG_INT, in, 7), LWC_OK);
	assert_memory_equal(got, want, CRY_TOKEN_BYTES);
	tokmemo_free(m);
	tokmemo_free(NULL);
	/* a row of 1,024 tokens (the most a row may carry): fewer entries a
	 * position, the same tokens, each input made once */
	assert_non_null(m = tokmemo_new(1024, 100000));
	for (int round = 0; round < 3; round++)
		for (size_t pos = 0; pos < 1024; pos++) {
			cry_put_be64(in, pos % 7);
			assert_int_equal(tokmemo_token(m, pos, got, st, CRY_TAG_INT, in, 8), LWC_OK);
			assert_int_equal(cry_token_next(want, st, CRY_TAG_INT, in, 8), LWC_OK);
			assert_memory_equal(got, want, CRY_TOKEN_BYTES);
		}
	assert_int_equal(tokmemo_made(m), 1024);
	tokmemo_free(m);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int_keys),
		cmocka_unit_test(test_float_keys),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_cover_num_all),
		cmocka_unit_test(test_cover_num_wide),
		cmocka_unit_test(test_cover_text_all),
		cmocka_unit_test(test_cover_text_prefix),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_token_memo),
		cmocka_unit_test(test_tokmemo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
