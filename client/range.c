/*
 * range.c - order-preserving keys, the tokens of their prefixes, and the
 * minimal prefix cover of a range (see range.h).
 */
#include "range.h"
#include "tokmemo.h"

#include <string.h>

/* a node's prefix: 8 bytes of a number, RANGE_TEXT_DEPTH of a text */
#define RANGE_TOKEN_INPUT (8 > RANGE_TEXT_DEPTH ? 8 : RANGE_TEXT_DEPTH)

uint64_t range_key_int(enum range_kind k, int64_t v)
{
	if (k == RANGE_INT32)
		return (uint64_t)((uint32_t)(int32_t)v ^ UINT32_C(0x80000000));
	return (uint64_t)v ^ UINT64_C(0x8000000000000000);
}

int64_t range_int_of_key(enum range_kind k, uint64_t key)
{
	if (k == RANGE_INT32)
		return (int64_t)(int32_t)((uint32_t)key ^ UINT32_C(0x80000000));
	return (int64_t)(key ^ UINT64_C(0x8000000000000000));
}

uint64_t range_key_float(double d)
{
	uint64_t u;

	if (d != d)
		return UINT64_MAX;          /* NaN: above +Infinity, as PostgreSQL */
	if (d == 0.0)
		d = 0.0;                    /* -0.0 is 0.0 */
	memcpy(&u, &d, sizeof(u));
	return u >> 63 ? ~u : u | UINT64_C(0x8000000000000000);
}

unsigned range_width(enum range_kind k)
{
	return k == RANGE_INT32 ? 32u : 64u;
}

unsigned range_depth(enum range_kind k, unsigned bits)
{
	if (k == RANGE_TEXT)
		return RANGE_TEXT_DEPTH;
	return bits ? range_width(k) / bits : 0;
}

unsigned range_levels(enum range_kind k, unsigned bits)
{
	if (k == RANGE_TEXT)
		return RANGE_TEXT_DEPTH;
	if (k == RANGE_FLOAT)
		return range_depth(k, bits);
	return range_depth(k, bits) - 1;   /* the last level is the equality token */
}

unsigned range_bits_of(enum range_kind k, unsigned n)
{
	static const unsigned cand[] = { 1, 2, 4, 8, 16 };

	if (k == RANGE_TEXT)
		return n >= 1 && n <= RANGE_TEXT_DEPTH ? 8u : 0u;
	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (range_levels(k, cand[i]) == n)
			return cand[i];
	return 0;
}

void range_value_nodes_num(enum range_kind k, unsigned bits, uint64_t key,
			   struct range_node *out)
{
	unsigned w = range_width(k), n = range_levels(k, bits);

	for (unsigned i = 1; i <= n; i++) {
		unsigned sh = w - i * bits;

		memset(&out[i - 1], 0, sizeof(out[i - 1]));
		out[i - 1].level = (uint8_t)i;
		out[i - 1].num = sh >= 64 ? 0 : key >> sh;
	}
}

void range_value_nodes_text(const uint8_t *s, size_t len, struct range_node *out)
{
	for (unsigned i = 1; i <= RANGE_TEXT_DEPTH; i++) {
		size_t have = len + 1 < i ? len + 1 : i;   /* bytes of s || 0 */

		memset(&out[i - 1], 0, sizeof(out[i - 1]));
		out[i - 1].level = (uint8_t)i;
		out[i - 1].len = (uint8_t)have;
		for (size_t j = 0; j < have; j++)
			out[i - 1].bytes[j] = j < len ? s[j] : 0;
	}
}

/* ---- numbers: the canonical decomposition, greedy from lo ---------------- */

static uint64_t low_mask(unsigned nbits)
{
	return nbits >= 64 ? UINT64_MAX : ((uint64_t)1 << nbits) - 1;
}

int range_cover_num(unsigned width, unsigned bits, uint64_t lo, uint64_t hi,
		    struct range_node *out, size_t max, size_t *n)
{
	unsigned depth = width / bits;

	*n = 0;
	if (lo > hi)
		return LWC_OK;
	for (;;) {
		unsigned j = 0;           /* digits below the node */
		uint64_t m;

		/* grow the block while it stays aligned at lo and inside [lo, hi] */
		while (j < depth) {
			uint64_t mm = low_mask((j + 1) * bits);

			if ((lo & mm) != 0 || hi - lo < mm)
				break;
			j++;
		}
		if (*n == max)
			return LWC_ERR_TOO_BIG;
		memset(&out[*n], 0, sizeof(out[*n]));
		out[*n].level = (uint8_t)(depth - j);
		out[*n].num = j * bits >= 64 ? 0 : lo >> (j * bits);
		(*n)++;
		m = low_mask(j * bits);
		if (hi - lo == m)
			break;
		lo += m + 1;
	}
	return LWC_OK;
}

int range_node_holds_num(unsigned width, unsigned bits, const struct range_node *x,
			 uint64_t key)
{
	unsigned sh = width - x->level * bits;

	if (x->level == 0)
		return 1;
	return (sh >= 64 ? 0 : key >> sh) == x->num;
}

/* ---- text: breadth first down the byte trie ------------------------------ */

/* memcmp over the first min(la, lb) bytes, then shorter first */
static int cmp_str(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	size_t m = la < lb ? la : lb;
	int c = m ? memcmp(a, b, m) : 0;

	if (c)
		return c;
	return la < lb ? -1 : la > lb;
}

/* the first min(la, lb) bytes only */
static int cmp_head(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	size_t m = la < lb ? la : lb;

	return m ? memcmp(a, b, m) : 0;
}

enum { T_OUT, T_FULL, T_PART };

/* Where the node p (l bytes; terminal: its last byte is the 0 after a
 * string, so it holds that one string) stands against the bounds. */
static int classify(const uint8_t *p, size_t l, int terminal, const struct range_tbound *lo,
		    const struct range_tbound *hi)
{
	int above_lo, below_hi;

	if (terminal) {
		size_t sl = l - 1;
		if (lo->present) {
			int c = cmp_str(p, sl, lo->s, lo->len);
			if (c < 0 || (c == 0 && !lo->incl))
				return T_OUT;
		}
		if (hi->present) {
			int c = cmp_str(p, sl, hi->s, hi->len);
			if (c > 0 || (c == 0 && !hi->incl))
				return T_OUT;
		}
		return T_FULL;
	}
	/* the node's least key is p itself; it has no greatest */
	above_lo = 1;
	if (lo->present) {
		int c;
		if (cmp_head(p, l, lo->s, lo->len) < 0)
			return T_OUT;            /* every key under p is below lo */
		c = cmp_str(p, l, lo->s, lo->len);
		above_lo = c > 0 || (c == 0 && lo->incl);
	}
	below_hi = 1;
	if (hi->present) {
		int c = cmp_str(p, l, hi->s, hi->len);
		if (c > 0 || (c == 0 && !hi->incl))
			return T_OUT;            /* even p is above hi */
		below_hi = cmp_head(p, l, hi->s, hi->len) < 0;
	}
	return above_lo && below_hi ? T_FULL : T_PART;
}

static void put_text(struct range_node *x, const uint8_t *p, size_t l)
{
	memset(x, 0, sizeof(*x));
	x->level = (uint8_t)l;
	x->len = (uint8_t)l;
	memcpy(x->bytes, p, l);
}

int range_cover_text(const struct range_tbound *lo, const struct range_tbound *hi,
		     unsigned depth, size_t budget, struct range_node *out, size_t max,
		     size_t *n, int *exact)
{
	/* at most two partial nodes per level: the paths of lo and of hi */
	uint8_t front[2][RANGE_TEXT_DEPTH], next[2][RANGE_TEXT_DEPTH];
	size_t nf = 1, nn;
	struct range_node kids[512];
	size_t nk;

	*n = 0;
	*exact = 1;
	if (depth > RANGE_TEXT_DEPTH || depth == 0)
		return LWC_ERR_ARG;
	if (budget > max)
		budget = max;
	if (!lo->present && !hi->present) {
		if (budget == 0)
			return LWC_ERR_TOO_BIG;
		memset(&out[0], 0, sizeof(out[0]));  /* the root: every value */
		*n = 1;
		return LWC_OK;
	}
	for (size_t l = 0; l < depth && nf > 0; l++) {
		nn = 0;
		nk = 0;
		for (size_t f = 0; f < nf; f++) {
			uint8_t p[RANGE_TEXT_DEPTH];

			memcpy(p, front[f], l);
			for (unsigned c = 0; c < 256; c++) {
				int k;

				p[l] = (uint8_t)c;
				k = classify(p, l + 1, c == 0, lo, hi);
				if (k == T_OUT)
					continue;
				if (k == T_FULL) {
					put_text(&kids[nk++], p, l + 1);
					continue;
				}
				if (nn == 2)
					return LWC_ERR_ARG;     /* cannot happen */
				memcpy(next[nn++], p, l + 1);
			}
		}
		if (*n + nk + nn > budget) {
			/* too many nodes: name this level's partial nodes whole */
			if (*n + nf > budget)
				return LWC_ERR_TOO_BIG;
			for (size_t f = 0; f < nf; f++)
				put_text(&out[(*n)++], front[f], l);
			*exact = 0;
			return LWC_OK;
		}
		memcpy(out + *n, kids, nk * sizeof(kids[0]));
		*n += nk;
		memcpy(front, next, sizeof(next));
		nf = nn;
	}
	if (nf > 0) {
		/* partial nodes at the last level: named whole, a superset */
		for (size_t f = 0; f < nf; f++)
			put_text(&out[(*n)++], front[f], depth);
		*exact = 0;
	}
	return LWC_OK;
}

int range_node_holds_text(const struct range_node *x, const uint8_t *s, size_t len)
{
	if (x->level == 0)
		return 1;
	if (len + 1 < x->len)
		return 0;
	for (size_t j = 0; j < x->len; j++)
		if ((j < len ? s[j] : 0) != x->bytes[j])
			return 0;
	return 1;
}

/* A node's token input: its level byte, then its prefix. */
static size_t node_input(enum range_kind k, const struct range_node *x,
			 uint8_t in[1 + RANGE_TOKEN_INPUT])
{
	in[0] = x->level;
	if (k == RANGE_TEXT) {
		memcpy(in + 1, x->bytes, x->len);
		return 1 + (size_t)x->len;
	}
	for (int i = 0; i < 8; i++)
		in[1 + i] = (uint8_t)(x->num >> (56 - 8 * i));
	return 9;
}

int range_token(uint8_t out[CRY_TOKEN_BYTES], const uint8_t token_key[CRY_KEY_BYTES],
		const char *table, const char *column, enum range_kind k,
		const struct range_node *x)
{
	uint8_t in[1 + RANGE_TOKEN_INPUT];
	size_t n = node_input(k, x, in);

	return cry_token(out, token_key, table, column, CRY_TAG_RANGE, in, n);
}

int range_token_memo(uint8_t out[CRY_TOKEN_BYTES], const cry_tokstate *st,
		     enum range_kind k, const struct range_node *x, struct tokmemo *m,
		     size_t pos)
{
	uint8_t in[1 + RANGE_TOKEN_INPUT];
	size_t n = node_input(k, x, in);

	return tokmemo_token(m, pos, out, st, CRY_TAG_RANGE, in, n);
}
