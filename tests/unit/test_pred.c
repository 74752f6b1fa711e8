/*
 * test_pred.c - the proxy's predicates (proxy/pred.c) and its padding
 * policy (px_gamma, proxy/engine.c).
 *
 * Location sets are checked on edge cases and against a naive bitmap
 * reference over random sets; pred_validate on every structural rule;
 * pred_eval against a real LMDB environment in a private mkdtemp directory,
 * laid out as proxy/state.c lays out a table (rows "t<id>.r": loc(8 BE) ->
 * tokens; columns "t<id>.c<c>", DUPSORT|DUPFIXED: token(16) -> loc(8 BE)),
 * every answer compared with a brute-force evaluation over the rows (set
 * semantics: NOT x is the table's rows minus x).  idx_lookup is checked
 * on keys whose duplicates span many MDB_GET_MULTIPLE pages, and
 * pred_wire_check on nesting far beyond what protobuf-c can decode.
 *
 * Every random choice comes from one fixed-seed generator: runs repeat.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lmdb.h>
#include <sodium.h>

#include "cry.h"
#include "lwc.pb-c.h"
#include "../../proxy/engine.h"
#include "../../proxy/index.h"
#include "../../proxy/pred.h"
#include "../testdir.h"

/* ---------------------------------------------------------------- helpers */

static uint64_t rng_state;

static void rng_seed(uint64_t s)
{
	rng_state = s;
}

/* splitmix64: small, fast, and the same sequence everywhere */
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)(rng() % n);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	assert_non_null(p);
	return p;
}

static void set_of(struct locset *s, const uint64_t *v, size_t n)
{
	s->n = 0;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(locset_push(s, v[i]), LWC_OK);
}

static void expect_set(const struct locset *s, const uint64_t *v, size_t n)
{
	if (s->n != n)
		fail_msg("set of %zu locations, expected %zu", s->n, n);
	for (size_t i = 0; i < n; i++)
		if (s->v[i] != v[i])
			fail_msg("location %zu is %llu, expected %llu", i,
				 (unsigned long long)s->v[i], (unsigned long long)v[i]);
}

static void expect_sorted_unique(const struct locset *s)
{
	for (size_t i = 1; i < s->n; i++)
		if (s->v[i - 1] >= s->v[i])
			fail_msg("set not strictly increasing at %zu", i);
}

/* ---------------------------------------------------- location sets: edges */

static void test_locset_edges(void **state)
{
	struct locset e = { 0 }, a = { 0 }, b = { 0 }, out = { 0 };
	static const uint64_t va[] = { 0, 5, 9, UINT64_MAX - 1, UINT64_MAX };
	static const uint64_t vb[] = { 1, 2, 3 };
	static const uint64_t vab[] = { 0, 1, 2, 3, 5, 9, UINT64_MAX - 1, UINT64_MAX };
	static const uint64_t vc[] = { 5, UINT64_MAX };
	static const uint64_t va_c[] = { 0, 9, UINT64_MAX - 1 };

	(void)state;
	/* empty with empty (out never allocated: v stays NULL, n 0) */
	assert_int_equal(locset_union(&out, &e, &e), LWC_OK);
	assert_int_equal(out.n, 0);
	assert_int_equal(locset_inter(&out, &e, &e), LWC_OK);
	assert_int_equal(out.n, 0);
	assert_int_equal(locset_minus(&out, &e, &e), LWC_OK);
	assert_int_equal(out.n, 0);
	assert_false(locset_contains(&e, 0));
	assert_false(locset_contains(&e, UINT64_MAX));
	locset_normalize(&e);
	assert_int_equal(e.n, 0);

	/* empty with non-empty, both ways */
	set_of(&a, va, 5);
	assert_int_equal(locset_union(&out, &a, &e), LWC_OK);
	expect_set(&out, va, 5);
	assert_int_equal(locset_union(&out, &e, &a), LWC_OK);
	expect_set(&out, va, 5);
	assert_int_equal(locset_inter(&out, &a, &e), LWC_OK);
	assert_int_equal(out.n, 0);
	assert_int_equal(locset_inter(&out, &e, &a), LWC_OK);
	assert_int_equal(out.n, 0);
	assert_int_equal(locset_minus(&out, &a, &e), LWC_OK);
	expect_set(&out, va, 5);
	assert_int_equal(locset_minus(&out, &e, &a), LWC_OK);
	assert_int_equal(out.n, 0);

	/* identical */
	set_of(&b, va, 5);
	assert_int_equal(locset_union(&out, &a, &b), LWC_OK);
	expect_set(&out, va, 5);
	assert_int_equal(locset_inter(&out, &a, &b), LWC_OK);
	expect_set(&out, va, 5);
	assert_int_equal(locset_minus(&out, &a, &b), LWC_OK);
	assert_int_equal(out.n, 0);

	/* disjoint, interleaved */
	set_of(&b, vb, 3);
	assert_int_equal(locset_union(&out, &a, &b), LWC_OK);
	expect_set(&out, vab, 8);
	assert_int_equal(locset_union(&out, &b, &a), LWC_OK);
	expect_set(&out, vab, 8);
	assert_int_equal(locset_inter(&out, &a, &b), LWC_OK);
	assert_int_equal(out.n, 0);
	assert_int_equal(locset_minus(&out, &a, &b), LWC_OK);
	expect_set(&out, va, 5);
	assert_int_equal(locset_minus(&out, &b, &a), LWC_OK);
	expect_set(&out, vb, 3);

	/* a subset, with the extremes of the range */
	set_of(&b, vc, 2);
	assert_int_equal(locset_inter(&out, &a, &b), LWC_OK);
	expect_set(&out, vc, 2);
	assert_int_equal(locset_minus(&out, &a, &b), LWC_OK);
	expect_set(&out, va_c, 3);
	assert_int_equal(locset_minus(&out, &b, &a), LWC_OK);
	assert_int_equal(out.n, 0);

	/* out reused with stale contents larger than the answer */
	set_of(&out, vab, 8);
	assert_int_equal(locset_inter(&out, &a, &b), LWC_OK);
	expect_set(&out, vc, 2);

	/* contains: present, absent, below, above, between */
	for (size_t i = 0; i < 5; i++)
		assert_true(locset_contains(&a, va[i]));
	assert_false(locset_contains(&a, 1));
	assert_false(locset_contains(&a, 6));
	assert_false(locset_contains(&a, UINT64_MAX - 2));
	assert_false(locset_contains(&b, 0));
	assert_false(locset_contains(&b, 4));
	set_of(&b, vc, 1);
	assert_true(locset_contains(&b, 5));
	assert_false(locset_contains(&b, 4));
	assert_false(locset_contains(&b, 6));

	/* normalize: one element, all equal, reversed with duplicates */
	{
		static const uint64_t same[] = { 7, 7, 7, 7 };
		static const uint64_t rev[] = { UINT64_MAX, 9, 9, 5, 0, UINT64_MAX, 0,
						UINT64_MAX - 1, 5 };
		static const uint64_t seven[] = { 7 };

		set_of(&b, same, 1);
		locset_normalize(&b);
		expect_set(&b, seven, 1);
		set_of(&b, same, 4);
		locset_normalize(&b);
		expect_set(&b, seven, 1);
		set_of(&b, rev, 9);
		locset_normalize(&b);
		expect_set(&b, va, 5);
		locset_normalize(&b);           /* idempotent */
		expect_set(&b, va, 5);
	}

	/* free resets; a freed set is a valid empty set */
	locset_free(&b);
	assert_null(b.v);
	assert_int_equal(b.n, 0);
	assert_int_equal(b.cap, 0);
	assert_int_equal(locset_union(&out, &a, &b), LWC_OK);
	expect_set(&out, va, 5);
	locset_free(&b);
	locset_free(&a);
	locset_free(&out);
	locset_free(&e);
}

/* -------------------------------------------- location sets: random vs naive */

#define DOM 4096u

/* Values spread over the whole 64-bit range, in the order of their index. */
static uint64_t dom_val(uint32_t i)
{
	return i == DOM - 1 ? UINT64_MAX : (uint64_t)i * 0x0004000000000003ull;
}

static void random_set(struct locset *s, uint8_t *mark, uint32_t density)
{
	s->n = 0;
	memset(mark, 0, DOM);
	for (uint32_t i = 0; i < DOM; i++)
		if (rnd(1000) < density) {
			mark[i] = 1;
			assert_int_equal(locset_push(s, dom_val(i)), LWC_OK);
		}
}

static void expect_marks(const struct locset *s, const uint8_t *mark)
{
	size_t n = 0;

	for (uint32_t i = 0; i < DOM; i++) {
		if (!mark[i])
			continue;
		if (n >= s->n || s->v[n] != dom_val(i))
			fail_msg("location %zu differs from the reference", n);
		n++;
	}
	assert_int_equal(s->n, n);
}

static void test_locset_random(void **state)
{
	struct locset a = { 0 }, b = { 0 }, out = { 0 };
	uint8_t *ma = xmalloc(DOM), *mb = xmalloc(DOM), *mr = xmalloc(DOM);
	static const uint32_t dens[] = { 0, 1, 10, 100, 500, 900, 1000 };

	(void)state;
	rng_seed(20240611);
	for (int round = 0; round < 300; round++) {
		uint32_t da = dens[rnd(7)], db = dens[rnd(7)];

		random_set(&a, ma, da);
		random_set(&b, mb, db);

		assert_int_equal(locset_union(&out, &a, &b), LWC_OK);
		for (uint32_t i = 0; i < DOM; i++)
			mr[i] = ma[i] | mb[i];
		expect_marks(&out, mr);

		assert_int_equal(locset_inter(&out, &a, &b), LWC_OK);
		for (uint32_t i = 0; i < DOM; i++)
			mr[i] = ma[i] & mb[i];
		expect_marks(&out, mr);

		assert_int_equal(locset_minus(&out, &a, &b), LWC_OK);
		for (uint32_t i = 0; i < DOM; i++)
			mr[i] = ma[i] & !mb[i];
		expect_marks(&out, mr);

		assert_int_equal(locset_minus(&out, &b, &a), LWC_OK);
		for (uint32_t i = 0; i < DOM; i++)
			mr[i] = mb[i] & !ma[i];
		expect_marks(&out, mr);

		for (int q = 0; q < 64; q++) {
			uint32_t i = rnd(DOM);
			assert_int_equal(locset_contains(&a, dom_val(i)), ma[i]);
			/* between two domain values: never present */
			if (i + 1 < DOM - 1)
				assert_false(locset_contains(&a, dom_val(i) + 1));
		}

		/* normalize: a shuffled concatenation with duplicates is a ∪ b */
		out.n = 0;
		for (size_t i = 0; i < a.n; i++)
			assert_int_equal(locset_push(&out, a.v[i]), LWC_OK);
		for (size_t i = 0; i < b.n; i++)
			assert_int_equal(locset_push(&out, b.v[i]), LWC_OK);
		for (size_t i = 0; i < a.n; i++)
			if (rnd(4) == 0)
				assert_int_equal(locset_push(&out, a.v[i]), LWC_OK);
		for (size_t i = out.n; i > 1; i--) {
			size_t j = rnd((uint32_t)i);
			uint64_t t = out.v[i - 1];
			out.v[i - 1] = out.v[j];
			out.v[j] = t;
		}
		locset_normalize(&out);
		for (uint32_t i = 0; i < DOM; i++)
			mr[i] = ma[i] | mb[i];
		expect_marks(&out, mr);
	}
	locset_free(&a);
	locset_free(&b);
	locset_free(&out);
	free(ma);
	free(mb);
	free(mr);
}

/* ----------------------------------------------------- predicates: builders */

static Lwc__Pred *p_new(Lwc__Pred__Op op)
{
	Lwc__Pred *p = xmalloc(sizeof(*p));

	lwc__pred__init(p);
	p->op = op;
	return p;
}

static void p_token(Lwc__Pred *p, const uint8_t *tok, size_t len)
{
	uint8_t *d = xmalloc(len);

	if (len)
		memcpy(d, tok, len);
	p->tokens = realloc(p->tokens, (p->n_tokens + 1) * sizeof(*p->tokens));
	assert_non_null(p->tokens);
	p->tokens[p->n_tokens].data = d;
	p->tokens[p->n_tokens].len = len;
	p->n_tokens++;
}

static void p_arg(Lwc__Pred *p, Lwc__Pred *a)
{
	p->args = realloc(p->args, (p->n_args + 1) * sizeof(*p->args));
	assert_non_null(p->args);
	p->args[p->n_args++] = a;
}

static void p_free(Lwc__Pred *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n_args; i++)
		p_free(p->args[i]);
	for (size_t i = 0; i < p->n_tokens; i++)
		free(p->tokens[i].data);
	free(p->args);
	free(p->tokens);
	free(p);
}

static Lwc__Pred *p_eq(uint32_t col, const uint8_t tok[CRY_TOKEN_BYTES])
{
	Lwc__Pred *p = p_new(LWC__PRED__OP__EQ);

	p->col = col;
	p_token(p, tok, CRY_TOKEN_BYTES);
	return p;
}

/* AND, OR or NOT of n arguments. */
static Lwc__Pred *p_op(Lwc__Pred__Op op, int n, ...)
{
	Lwc__Pred *p = p_new(op);
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		p_arg(p, va_arg(ap, Lwc__Pred *));
	va_end(ap);
	return p;
}

/* ------------------------------------------------------ pred_validate rules */

static const uint8_t tok_a[CRY_TOKEN_BYTES] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
						15, 16 };

static void expect_valid(const Lwc__Pred *p, uint32_t ncols)
{
	char err[256] = "";
	int rc = pred_validate(p, ncols, err, sizeof(err));

	if (rc != LWC_OK)
		fail_msg("valid predicate refused: %s (%s)", lwc_errname(rc), err);
}

/* Checks and frees p. */
static void expect_invalid(Lwc__Pred *p, uint32_t ncols, int code)
{
	char err[256] = "";
	int rc = pred_validate(p, ncols, err, sizeof(err));

	if (rc != code)
		fail_msg("expected %s, got %s (%s)", lwc_errname(code), lwc_errname(rc), err);
	assert_true(err[0] != '\0');
	/* no message buffer: the same answer */
	assert_int_equal(pred_validate(p, ncols, NULL, 0), code);
	p_free(p);
}

/* A chain of depth NOTs over an EQ: the EQ sits at nesting depth `depth`. */
static Lwc__Pred *not_chain(int depth)
{
	Lwc__Pred *p = p_eq(0, tok_a);

	for (int i = 0; i < depth; i++)
		p = p_op(LWC__PRED__OP__NOT, 1, p);
	return p;
}

/* The same depth through AND nodes, each with an EQ beside the chain. */
static Lwc__Pred *and_chain(int depth)
{
	Lwc__Pred *p = p_eq(0, tok_a);

	for (int i = 0; i < depth; i++)
		p = p_op(LWC__PRED__OP__AND, 2, p_eq(1, tok_a), p);
	return p;
}

static void test_pred_validate(void **state)
{
	Lwc__Pred *p;

	(void)state;
	/* no WHERE: every row */
	assert_int_equal(pred_validate(NULL, 1, NULL, 0), LWC_OK);

	/* ALL and NONE take nothing */
	for (int k = 0; k < 2; k++) {
		Lwc__Pred__Op op = k ? LWC__PRED__OP__NONE : LWC__PRED__OP__ALL;

		p = p_new(op);
		expect_valid(p, 1);
		p_free(p);
		p = p_new(op);
		p_token(p, tok_a, CRY_TOKEN_BYTES);
		expect_invalid(p, 1, LWC_ERR_PROTO);
		p = p_new(op);
		p_arg(p, p_new(LWC__PRED__OP__ALL));
		expect_invalid(p, 1, LWC_ERR_PROTO);
	}

	/* EQ: exactly one token of 16 bytes, no args */
	p = p_eq(0, tok_a);
	expect_valid(p, 1);
	p_free(p);
	expect_invalid(p_new(LWC__PRED__OP__EQ), 1, LWC_ERR_PROTO);
	p = p_eq(0, tok_a);
	p_token(p, tok_a, CRY_TOKEN_BYTES);
	expect_invalid(p, 1, LWC_ERR_PROTO);
	p = p_eq(0, tok_a);
	p_arg(p, p_new(LWC__PRED__OP__ALL));
	expect_invalid(p, 1, LWC_ERR_PROTO);
	for (size_t len = 0; len <= 32; len++) {
		if (len == CRY_TOKEN_BYTES)
			continue;
		p = p_new(LWC__PRED__OP__EQ);
		p_token(p, tok_a, len > 16 ? 16 : len);
		p->tokens[0].len = len;
		if (len > 16) {
			p->tokens[0].data = realloc(p->tokens[0].data, len);
			assert_non_null(p->tokens[0].data);
		}
		expect_invalid(p, 1, LWC_ERR_PROTO);
	}

	/* IN: one or more tokens, all of 16 bytes */
	expect_invalid(p_new(LWC__PRED__OP__IN), 1, LWC_ERR_PROTO);
	p = p_new(LWC__PRED__OP__IN);
	p_token(p, tok_a, CRY_TOKEN_BYTES);
	expect_valid(p, 1);
	p_token(p, tok_a, CRY_TOKEN_BYTES);
	p_token(p, tok_a, CRY_TOKEN_BYTES);
	expect_valid(p, 1);
	p_token(p, tok_a, 15);
	expect_invalid(p, 1, LWC_ERR_PROTO);
	p = p_new(LWC__PRED__OP__IN);
	p_token(p, tok_a, CRY_TOKEN_BYTES);
	p_arg(p, p_new(LWC__PRED__OP__ALL));
	expect_invalid(p, 1, LWC_ERR_PROTO);

	/* column range: LWC_ERR_SCHEMA, for EQ and IN */
	p = p_eq(0, tok_a);
	p->col = 63;
	expect_valid(p, 64);
	p->col = 64;
	expect_invalid(p, 64, LWC_ERR_SCHEMA);
	p = p_eq(0, tok_a);
	p->col = 3;
	expect_valid(p, 4);
	expect_invalid(p, 3, LWC_ERR_SCHEMA);
	p = p_eq(0, tok_a);
	p->col = UINT32_MAX;
	expect_invalid(p, 64, LWC_ERR_SCHEMA);
	p = p_new(LWC__PRED__OP__IN);
	p_token(p, tok_a, CRY_TOKEN_BYTES);
	p->col = 1;
	expect_invalid(p, 1, LWC_ERR_SCHEMA);

	/* AND and OR: two or more args, no tokens */
	for (int k = 0; k < 2; k++) {
		Lwc__Pred__Op op = k ? LWC__PRED__OP__OR : LWC__PRED__OP__AND;

		expect_invalid(p_new(op), 2, LWC_ERR_PROTO);
		expect_invalid(p_op(op, 1, p_eq(0, tok_a)), 2, LWC_ERR_PROTO);
		p = p_op(op, 2, p_eq(0, tok_a), p_eq(1, tok_a));
		expect_valid(p, 2);
		p_arg(p, p_new(LWC__PRED__OP__NONE));
		expect_valid(p, 2);
		p_token(p, tok_a, CRY_TOKEN_BYTES);
		expect_invalid(p, 2, LWC_ERR_PROTO);
		/* an argument's own error comes through */
		expect_invalid(p_op(op, 2, p_eq(0, tok_a), p_eq(2, tok_a)), 2, LWC_ERR_SCHEMA);
		expect_invalid(p_op(op, 2, p_eq(0, tok_a), p_new(LWC__PRED__OP__EQ)), 2,
			       LWC_ERR_PROTO);
	}

	/* NOT: exactly one arg, no tokens */
	expect_invalid(p_new(LWC__PRED__OP__NOT), 1, LWC_ERR_PROTO);
	p = p_op(LWC__PRED__OP__NOT, 1, p_eq(0, tok_a));
	expect_valid(p, 1);
	p_arg(p, p_eq(0, tok_a));
	expect_invalid(p, 1, LWC_ERR_PROTO);
	p = p_op(LWC__PRED__OP__NOT, 1, p_eq(0, tok_a));
	p_token(p, tok_a, CRY_TOKEN_BYTES);
	expect_invalid(p, 1, LWC_ERR_PROTO);

	/* operators outside the enum (proto3 enums are open on the wire) */
	{
		static const int bad[] = { 7, 8, 99, -1, INT32_MIN, INT32_MAX };
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			p = p_new((Lwc__Pred__Op)bad[i]);
			expect_invalid(p, 1, LWC_ERR_PROTO);
			p = p_op(LWC__PRED__OP__NOT, 1, p_new((Lwc__Pred__Op)bad[i]));
			expect_invalid(p, 1, LWC_ERR_PROTO);
		}
	}

	/* nesting: depth 64 is fine, 65 is not, through NOT or AND */
	p = not_chain(PRED_MAX_DEPTH);
	expect_valid(p, 1);
	p_free(p);
	expect_invalid(not_chain(PRED_MAX_DEPTH + 1), 1, LWC_ERR_PROTO);
	expect_invalid(not_chain(1000), 1, LWC_ERR_PROTO);
	p = and_chain(PRED_MAX_DEPTH);
	expect_valid(p, 2);
	p_free(p);
	expect_invalid(and_chain(PRED_MAX_DEPTH + 1), 2, LWC_ERR_PROTO);
}

/* The node cap counts tokens; it holds wherever the big IN stands. */
static void test_pred_validate_size(void **state)
{
	Lwc__Pred *in = p_new(LWC__PRED__OP__IN);
	ProtobufCBinaryData *toks = xmalloc(PRED_MAX_NODES * sizeof(*toks));
	Lwc__Pred *eq = p_eq(0, tok_a), *args[2];
	Lwc__Pred top = LWC__PRED__INIT;
	char err[256] = "";

	(void)state;
	for (size_t i = 0; i < PRED_MAX_NODES; i++) {
		toks[i].data = (uint8_t *)(uintptr_t)tok_a;
		toks[i].len = CRY_TOKEN_BYTES;
	}
	in->tokens = toks;
	/* the IN node itself plus its tokens */
	in->n_tokens = PRED_MAX_NODES - 1;
	assert_int_equal(pred_validate(in, 1, err, sizeof(err)), LWC_OK);
	in->n_tokens = PRED_MAX_NODES;
	assert_int_equal(pred_validate(in, 1, err, sizeof(err)), LWC_ERR_PROTO);
	assert_non_null(strstr(err, "nodes"));

	/* inside an OR: 1, its EQ: 2 (a token counts), so IN may hold MAX - 4
	 * tokens, first or last */
	top.op = LWC__PRED__OP__OR;
	top.n_args = 2;
	top.args = args;
	in->n_tokens = PRED_MAX_NODES - 4;
	args[0] = eq;
	args[1] = in;
	assert_int_equal(pred_validate(&top, 1, err, sizeof(err)), LWC_OK);
	args[0] = in;
	args[1] = eq;
	assert_int_equal(pred_validate(&top, 1, err, sizeof(err)), LWC_OK);
	in->n_tokens = PRED_MAX_NODES - 3;
	assert_int_equal(pred_validate(&top, 1, err, sizeof(err)), LWC_ERR_PROTO);
	args[0] = eq;
	args[1] = in;
	assert_int_equal(pred_validate(&top, 1, err, sizeof(err)), LWC_ERR_PROTO);

	in->tokens = NULL;
	in->n_tokens = 0;
	p_free(in);
	p_free(eq);
	free(toks);
}

/* ------------------------------------------------------ pred_eval on LMDB */

#define NCOLS  4
#define T1_ID  1u
#define T2_ID  2u
#define T3_ID  3u
#define TD_ID  4u

/* values per column of table 1 (column 0: two values, ~500 rows each) */
static const uint32_t dom[NCOLS] = { 2, 3, 5, 11 };

/* The token of value v in column c (v >= 1000: never stored). */
static void make_token(uint8_t out[CRY_TOKEN_BYTES], uint32_t col, uint32_t v)
{
	uint64_t save = rng_state;

	rng_state = ((uint64_t)col << 32 | v) * 0x2545f4914f6cdd1dull + 77;
	cry_put_be64(out, rng());
	cry_put_be64(out + 8, rng());
	rng_state = save;
}

struct tab {
	struct px_table t;
	size_t nrows;
	uint64_t *locs;                        /* sorted                      */
	uint32_t (*val)[NCOLS];                /* value of each column        */
	uint8_t (*tok)[NCOLS][CRY_TOKEN_BYTES];
};

struct fx {
	char dir[64];
	MDB_env *env;
	struct tab t1, t2, t3;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Open (creating) the dbis of t as proxy/state.c px_table_open_dbis does. */
static void open_dbis(MDB_txn *txn, struct px_table *t)
{
	char name[32];

	assert_int_equal(px_db_name(name, sizeof(name), t->id, -1), LWC_OK);
	assert_int_equal(mdb_dbi_open(txn, name, MDB_CREATE, &t->rows), 0);
	for (uint32_t c = 0; c < t->ncols; c++) {
		assert_int_equal(px_db_name(name, sizeof(name), t->id, (int)c), LWC_OK);
		assert_int_equal(mdb_dbi_open(txn, name, MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED,
					      &t->cols[c]), 0);
	}
	assert_int_equal(px_db_name(name, sizeof(name), t->id, PX_DB_RUN), LWC_OK);
	assert_int_equal(mdb_dbi_open(txn, name, MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &t->run),
			 0);
}

/* Index one row: its tokens under its location, its location under each token. */
static void put_row(MDB_txn *txn, const struct px_table *t, uint64_t loc,
		    const uint8_t (*tok)[CRY_TOKEN_BYTES])
{
	uint8_t lb[8];
	MDB_val k = { 8, lb }, d = { (size_t)t->ncols * CRY_TOKEN_BYTES, (void *)(uintptr_t)tok };

	uint8_t span[8];

	cry_put_be64(lb, loc);
	idx_span_put(span, loc, 1);
	assert_int_equal(mdb_put(txn, t->rows, &k, &d, MDB_NOOVERWRITE), 0);
	for (uint32_t c = 0; c < t->ncols; c++) {
		MDB_val tk = { CRY_TOKEN_BYTES, (void *)(uintptr_t)tok[c] }, tl = { 8, span };
		assert_int_equal(mdb_put(txn, t->cols[c], &tk, &tl, MDB_NODUPDATA), 0);
	}
}

/* A table of about `want` rows at distinct random locations; values drawn
 * from dom[] (columns beyond ncols unused). */
static void fill_table(MDB_txn *txn, struct tab *tb, uint32_t id, uint32_t ncols, size_t want)
{
	size_t n = 0, cap = want + 16;

	memset(tb, 0, sizeof(*tb));
	tb->t.id = id;
	tb->t.ncols = ncols;
	tb->t.pk_col = -1;
	open_dbis(txn, &tb->t);
	tb->locs = xmalloc(cap * sizeof(uint64_t));
	while (n < want) {
		/* small blocks mostly, a few far out (every byte of a row id
		 * matters: index values hold 48 bits of it, pred.h) */
		uint64_t block = rnd(8) == 0 ? ((uint64_t)1 << 31) + rnd(64) : rnd(600);
		tb->locs[n++] = PX_LOC(block, rnd(PX_MAX_SLOTS));
		if (n == want) {
			qsort(tb->locs, n, sizeof(uint64_t), cmp_u64);
			struct locset s = { tb->locs, n, cap };
			locset_normalize(&s);
			n = s.n;
		}
	}
	tb->nrows = n;
	tb->t.nrows = n;
	tb->val = xmalloc(n * sizeof(*tb->val));
	tb->tok = xmalloc(n * sizeof(*tb->tok));
	for (size_t i = 0; i < n; i++) {
		for (uint32_t c = 0; c < ncols; c++) {
			tb->val[i][c] = rnd(dom[c]);
			make_token(tb->tok[i][c], c, tb->val[i][c]);
		}
		put_row(txn, &tb->t, tb->locs[i], (const uint8_t (*)[CRY_TOKEN_BYTES])tb->tok[i]);
	}
}

static void free_table(struct tab *tb)
{
	free(tb->locs);
	free(tb->val);
	free(tb->tok);
}

static int db_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	MDB_txn *txn;

	if (f == NULL)
		return -1;
	rng_seed(42);
	snprintf(f->dir, sizeof(f->dir), "/tmp/lwc-test-pred-XXXXXX");
	if (mkdtemp(f->dir) == NULL || mdb_env_create(&f->env) != 0 ||
	    mdb_env_set_maxdbs(f->env, 64) != 0 ||
	    mdb_env_set_mapsize(f->env, 256u << 20) != 0 ||
	    mdb_env_open(f->env, f->dir, MDB_NOSYNC, 0600) != 0 ||
	    mdb_txn_begin(f->env, NULL, 0, &txn) != 0) {
		fprintf(stderr, "cannot create the LMDB environment in %s\n", f->dir);
		return -1;
	}
	fill_table(txn, &f->t1, T1_ID, NCOLS, 1000);
	/* a second table sharing locations and tokens: NOT and ALL stay inside
	 * their own table */
	fill_table(txn, &f->t2, T2_ID, 2, 60);
	for (size_t i = 0; i < 40; i++) {
		uint8_t tok[2][CRY_TOKEN_BYTES];
		uint64_t loc = f->t1.locs[i * 7];
		if (locset_contains(&(struct locset){ f->t2.locs, f->t2.nrows, f->t2.nrows }, loc))
			continue;
		memcpy(tok[0], f->t1.tok[i * 7][0], CRY_TOKEN_BYTES);
		memcpy(tok[1], f->t1.tok[i * 7][1], CRY_TOKEN_BYTES);
		put_row(txn, &f->t2.t, loc, (const uint8_t (*)[CRY_TOKEN_BYTES])tok);
	}
	/* t2's expected rows come from LMDB itself: rebuild its arrays */
	{
		MDB_cursor *cur;
		MDB_val k, d;
		size_t n = 0;

		free_table(&f->t2);
		f->t2.locs = xmalloc(200 * sizeof(uint64_t));
		f->t2.val = xmalloc(200 * sizeof(*f->t2.val));
		f->t2.tok = xmalloc(200 * sizeof(*f->t2.tok));
		assert_int_equal(mdb_cursor_open(txn, f->t2.t.rows, &cur), 0);
		while (mdb_cursor_get(cur, &k, &d, MDB_NEXT) == 0) {
			assert_true(n < 200);
			f->t2.locs[n] = cry_get_be64(k.mv_data);
			memcpy(f->t2.tok[n], d.mv_data, 2 * CRY_TOKEN_BYTES);
			n++;
		}
		mdb_cursor_close(cur);
		f->t2.nrows = f->t2.t.nrows = n;
	}
	fill_table(txn, &f->t3, T3_ID, 1, 0);   /* empty */
	if (mdb_txn_commit(txn) != 0)
		return -1;
	*state = f;
	return 0;
}

static int db_teardown(void **state)
{
	struct fx *f = *state;

	mdb_env_close(f->env);
	testdir_rm(f->dir);
	free_table(&f->t1);
	free_table(&f->t2);
	free_table(&f->t3);
	free(f);
	return 0;
}

/* Brute force: does row i of tb satisfy p? */
static int bf_match(const struct tab *tb, size_t i, const Lwc__Pred *p)
{
	switch (p->op) {
	case LWC__PRED__OP__ALL:
		return 1;
	case LWC__PRED__OP__NONE:
		return 0;
	case LWC__PRED__OP__EQ:
	case LWC__PRED__OP__IN:
		for (size_t j = 0; j < p->n_tokens; j++)
			if (memcmp(tb->tok[i][p->col], p->tokens[j].data, CRY_TOKEN_BYTES) == 0)
				return 1;
		return 0;
	case LWC__PRED__OP__AND:
		for (size_t j = 0; j < p->n_args; j++)
			if (!bf_match(tb, i, p->args[j]))
				return 0;
		return 1;
	case LWC__PRED__OP__OR:
		for (size_t j = 0; j < p->n_args; j++)
			if (bf_match(tb, i, p->args[j]))
				return 1;
		return 0;
	case LWC__PRED__OP__NOT:
		return !bf_match(tb, i, p->args[0]);
	default:
		fail_msg("operator %d in a test predicate", (int)p->op);
		return 0;
	}
}

/* pred_eval(p) equals the brute force; returns the number of matches. */
static size_t check_eval(struct fx *f, const struct tab *tb, const Lwc__Pred *p)
{
	MDB_txn *txn;
	struct locset got = { 0 };
	char err[256] = "";
	size_t n = 0;
	int rc;

	if (p)
		expect_valid(p, tb->t.ncols);
	assert_int_equal(mdb_txn_begin(f->env, NULL, MDB_RDONLY, &txn), 0);
	/* out starts dirty: pred_eval replaces, never appends */
	assert_int_equal(locset_push(&got, 12345), LWC_OK);
	rc = pred_eval(txn, &tb->t, p, &got, err, sizeof(err));
	mdb_txn_abort(txn);
	if (rc != LWC_OK)
		fail_msg("pred_eval: %s (%s)", lwc_errname(rc), err);
	expect_sorted_unique(&got);
	for (size_t i = 0; i < tb->nrows; i++) {
		if (p && !bf_match(tb, i, p))
			continue;
		if (n >= got.n || got.v[n] != tb->locs[i])
			fail_msg("pred_eval differs from brute force at match %zu (row %zu)", n, i);
		n++;
	}
	if (got.n != n)
		fail_msg("pred_eval found %zu rows, brute force %zu", got.n, n);
	locset_free(&got);
	return n;
}

static Lwc__Pred *p_val(uint32_t col, uint32_t v)
{
	uint8_t tok[CRY_TOKEN_BYTES];

	make_token(tok, col, v);
	return p_eq(col, tok);
}

static Lwc__Pred *p_in(uint32_t col, int n, ...)
{
	Lwc__Pred *p = p_new(LWC__PRED__OP__IN);
	va_list ap;

	p->col = col;
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		uint8_t tok[CRY_TOKEN_BYTES];
		make_token(tok, col, va_arg(ap, uint32_t));
		p_token(p, tok, CRY_TOKEN_BYTES);
	}
	va_end(ap);
	return p;
}

/* Frees p after checking it; returns the count. */
static size_t check_free(struct fx *f, const struct tab *tb, Lwc__Pred *p)
{
	size_t n = check_eval(f, tb, p);

	p_free(p);
	return n;
}

static void test_pred_eval_fixed(void **state)
{
	struct fx *f = *state;
	struct tab *t1 = &f->t1;
	size_t total = t1->nrows, sum;

	assert_true(total > 900);
	/* ALL, no WHERE, NONE, NOT ALL, NOT NONE */
	assert_int_equal(check_eval(f, t1, NULL), total);
	assert_int_equal(check_free(f, t1, p_new(LWC__PRED__OP__ALL)), total);
	assert_int_equal(check_free(f, t1, p_new(LWC__PRED__OP__NONE)), 0);
	assert_int_equal(check_free(f, t1, p_op(LWC__PRED__OP__NOT, 1,
						p_new(LWC__PRED__OP__ALL))), 0);
	assert_int_equal(check_free(f, t1, p_op(LWC__PRED__OP__NOT, 1,
						p_new(LWC__PRED__OP__NONE))), total);

	/* EQ over every value of every column partitions the table */
	for (uint32_t c = 0; c < NCOLS; c++) {
		sum = 0;
		for (uint32_t v = 0; v < dom[c]; v++) {
			size_t n = check_free(f, t1, p_val(c, v));
			assert_true(n > 0);
			sum += n;
		}
		assert_int_equal(sum, total);
		/* a token never stored, and NOT of it */
		assert_int_equal(check_free(f, t1, p_val(c, 1000 + c)), 0);
		assert_int_equal(check_free(f, t1, p_op(LWC__PRED__OP__NOT, 1,
							p_val(c, 1000))), total);
	}

	/* IN: union, duplicates and absent tokens included */
	check_free(f, t1, p_in(3, 3, 1u, 4u, 9u));
	check_free(f, t1, p_in(3, 5, 4u, 1u, 4u, 1000u, 1u));
	assert_int_equal(check_free(f, t1, p_in(0, 2, 0u, 1u)), total);
	assert_int_equal(check_free(f, t1, p_in(2, 2, 1000u, 1001u)), 0);
	assert_int_equal(check_free(f, t1, p_in(1, 1, 1000u)), 0);

	/* AND, OR, NOT */
	check_free(f, t1, p_op(LWC__PRED__OP__AND, 2, p_val(0, 1), p_val(1, 2)));
	check_free(f, t1, p_op(LWC__PRED__OP__AND, 3, p_val(0, 1), p_val(1, 2), p_val(3, 7)));
	check_free(f, t1, p_op(LWC__PRED__OP__OR, 2, p_val(2, 4), p_val(3, 10)));
	check_free(f, t1, p_op(LWC__PRED__OP__OR, 3, p_val(2, 4), p_val(2, 4), p_val(2, 0)));
	check_free(f, t1, p_op(LWC__PRED__OP__NOT, 1, p_val(1, 0)));
	/* AND that empties early, then meets more arguments */
	assert_int_equal(check_free(f, t1, p_op(LWC__PRED__OP__AND, 3, p_val(0, 0), p_val(0, 1),
						p_new(LWC__PRED__OP__ALL))), 0);
	assert_int_equal(check_free(f, t1, p_op(LWC__PRED__OP__AND, 2,
						p_new(LWC__PRED__OP__NONE),
						p_val(0, 1))), 0);
	/* x AND NOT x, x OR NOT x */
	assert_int_equal(check_free(f, t1, p_op(LWC__PRED__OP__AND, 2, p_val(3, 5),
						p_op(LWC__PRED__OP__NOT, 1, p_val(3, 5)))), 0);
	assert_int_equal(check_free(f, t1, p_op(LWC__PRED__OP__OR, 2, p_val(3, 5),
						p_op(LWC__PRED__OP__NOT, 1, p_val(3, 5)))),
			 total);
	/* nested: De Morgan both ways, and deeper mixes */
	{
		size_t a = check_free(f, t1, p_op(LWC__PRED__OP__NOT, 1,
						  p_op(LWC__PRED__OP__AND, 2, p_val(1, 1),
						       p_val(2, 3))));
		size_t b = check_free(f, t1, p_op(LWC__PRED__OP__OR, 2,
						  p_op(LWC__PRED__OP__NOT, 1, p_val(1, 1)),
						  p_op(LWC__PRED__OP__NOT, 1, p_val(2, 3))));
		assert_int_equal(a, b);
	}
	check_free(f, t1, p_op(LWC__PRED__OP__OR, 2,
			       p_op(LWC__PRED__OP__AND, 2, p_val(0, 0),
				    p_op(LWC__PRED__OP__NOT, 1, p_in(3, 2, 2u, 3u))),
			       p_op(LWC__PRED__OP__NOT, 1,
				    p_op(LWC__PRED__OP__OR, 2, p_in(2, 2, 0u, 1u), p_val(1, 2)))));
	check_free(f, t1, p_op(LWC__PRED__OP__NOT, 1,
			       p_op(LWC__PRED__OP__NOT, 1,
				    p_op(LWC__PRED__OP__AND, 2, p_val(0, 1),
					 p_op(LWC__PRED__OP__NOT, 1, p_val(1, 1))))));
	/* the deepest nesting allowed */
	{
		Lwc__Pred *p = p_val(3, 6);
		for (int i = 0; i < PRED_MAX_DEPTH; i++)
			p = i % 2 ? p_op(LWC__PRED__OP__NOT, 1, p)
				  : p_op(LWC__PRED__OP__OR, 2, p_val(3, (uint32_t)i % 11), p);
		check_free(f, t1, p);
	}
}

/* Another table of the same environment: its own rows only. */
static void test_pred_eval_tables(void **state)
{
	struct fx *f = *state;
	struct tab *t2 = &f->t2, *t3 = &f->t3;

	assert_true(t2->nrows > 60);
	assert_int_equal(check_eval(f, t2, NULL), t2->nrows);
	assert_int_equal(check_free(f, t2, p_new(LWC__PRED__OP__ALL)), t2->nrows);
	assert_int_equal(check_free(f, t2, p_op(LWC__PRED__OP__NOT, 1, p_val(0, 0))) +
			 check_free(f, t2, p_val(0, 0)), t2->nrows);
	check_free(f, t2, p_op(LWC__PRED__OP__NOT, 1,
			       p_op(LWC__PRED__OP__OR, 2, p_val(1, 2), p_val(0, 1))));
	check_free(f, t2, p_in(1, 3, 0u, 1u, 2u));

	/* the empty table */
	assert_int_equal(check_eval(f, t3, NULL), 0);
	assert_int_equal(check_free(f, t3, p_new(LWC__PRED__OP__ALL)), 0);
	assert_int_equal(check_free(f, t3, p_val(0, 0)), 0);
	assert_int_equal(check_free(f, t3, p_op(LWC__PRED__OP__NOT, 1, p_val(0, 0))), 0);
	assert_int_equal(check_free(f, t3, p_op(LWC__PRED__OP__NOT, 1,
						p_new(LWC__PRED__OP__NONE))), 0);
}

/* A random valid predicate over tb, nesting at most `depth`. */
static Lwc__Pred *rand_pred(const struct tab *tb, int depth)
{
	uint32_t r = rnd(100);
	Lwc__Pred *p;

	if (depth == 0 || r < 35) {
		uint32_t c = rnd(tb->t.ncols);
		r = rnd(100);
		if (r < 60)
			return p_val(c, rnd(dom[c] + 1) == dom[c] ? 1000 : rnd(dom[c]));
		if (r < 90) {
			p = p_new(LWC__PRED__OP__IN);
			p->col = c;
			for (uint32_t i = 0, n = 1 + rnd(4); i < n; i++) {
				uint8_t tok[CRY_TOKEN_BYTES];
				make_token(tok, c, rnd(dom[c] + 1));
				p_token(p, tok, CRY_TOKEN_BYTES);
			}
			return p;
		}
		return p_new(r < 95 ? LWC__PRED__OP__ALL : LWC__PRED__OP__NONE);
	}
	if (r < 55)
		return p_op(LWC__PRED__OP__NOT, 1, rand_pred(tb, depth - 1));
	p = p_new(r < 80 ? LWC__PRED__OP__AND : LWC__PRED__OP__OR);
	for (uint32_t i = 0, n = 2 + rnd(3); i < n; i++)
		p_arg(p, rand_pred(tb, depth - 1));
	return p;
}

static void test_pred_eval_random(void **state)
{
	struct fx *f = *state;
	size_t nonempty = 0, partial = 0;

	rng_seed(7);
	for (int i = 0; i < 600; i++) {
		const struct tab *tb = i % 5 == 4 ? &f->t2 : &f->t1;
		size_t n = check_free(f, tb, rand_pred(tb, 1 + i % 6));
		nonempty += n > 0;
		partial += n > 0 && n < tb->nrows;
	}
	/* the generator reaches interesting answers, not only empty or full */
	assert_true(nonempty > 200);
	assert_true(partial > 150);
}

/* ------------------------------------------------ idx_lookup, many pages */

static void test_pred_lookup_dups(void **state)
{
	struct fx *f = *state;
	/* counts around one MDB_GET_MULTIPLE page (510 locations of 8 bytes) */
	static const size_t counts[] = { 1, 2, 509, 510, 511, 1020, 1021, 5000 };
	enum { NK = sizeof(counts) / sizeof(counts[0]) };
	struct px_table t;
	uint8_t tok[NK + 2][CRY_TOKEN_BYTES];
	struct locset want[NK] = { { 0 } };
	MDB_txn *txn;

	rng_seed(99);
	memset(&t, 0, sizeof(t));
	t.id = TD_ID;
	t.ncols = 1;
	t.pk_col = -1;
	/* tokens next to each other in key order: a neighbour's duplicates
	 * must not leak in */
	for (size_t k = 0; k < NK + 2; k++) {
		memset(tok[k], 0xab, CRY_TOKEN_BYTES);
		tok[k][CRY_TOKEN_BYTES - 1] = (uint8_t)(0x40 + k);
	}
	assert_int_equal(mdb_txn_begin(f->env, NULL, 0, &txn), 0);
	open_dbis(txn, &t);
	for (size_t k = 0; k < NK; k++) {
		uint8_t lb[8];
		MDB_val tk = { CRY_TOKEN_BYTES, tok[k] }, tl = { 8, lb };

		/* distinct random locations over the whole 64-bit range, put in
		 * random order */
		while (want[k].n < counts[k]) {
			size_t miss = counts[k] - want[k].n;
			for (size_t i = 0; i < miss; i++) {
				uint64_t loc = rng() >> (64 - IDX_ROW_BITS);
				if (i % 3 == 0)
					loc >>= 20;
				assert_int_equal(locset_push(&want[k], loc), LWC_OK);
				idx_span_put(lb, loc, 1);
				assert_int_equal(mdb_put(txn, t.cols[0], &tk, &tl, 0), 0);
			}
			locset_normalize(&want[k]);
		}
	}
	assert_int_equal(mdb_txn_commit(txn), 0);

	assert_int_equal(mdb_txn_begin(f->env, NULL, MDB_RDONLY, &txn), 0);
	for (size_t k = 0; k < NK; k++) {
		struct locset got = { 0 };

		assert_int_equal(idx_lookup(txn, &t, 0, tok[k], &got), LWC_OK);
		expect_set(&got, want[k].v, want[k].n);

		/* appended after what out already holds */
		got.n = 0;
		assert_int_equal(locset_push(&got, 1), LWC_OK);
		assert_int_equal(locset_push(&got, 0), LWC_OK);
		assert_int_equal(idx_lookup(txn, &t, 0, tok[k], &got), LWC_OK);
		assert_int_equal(got.n, want[k].n + 2);
		assert_int_equal(got.v[0], 1);
		assert_int_equal(got.v[1], 0);
		assert_memory_equal(got.v + 2, want[k].v, want[k].n * sizeof(uint64_t));
		locset_free(&got);
	}
	/* tokens with no entry, before, between and after the stored ones */
	{
		struct locset got = { 0 };
		uint8_t none[CRY_TOKEN_BYTES];

		assert_int_equal(idx_lookup(txn, &t, 0, tok[NK], &got), LWC_OK);
		assert_int_equal(got.n, 0);
		memset(none, 0, sizeof(none));
		assert_int_equal(idx_lookup(txn, &t, 0, none, &got), LWC_OK);
		memset(none, 0xff, sizeof(none));
		assert_int_equal(idx_lookup(txn, &t, 0, none, &got), LWC_OK);
		memcpy(none, tok[3], sizeof(none));
		none[CRY_TOKEN_BYTES - 2] ^= 1;
		assert_int_equal(idx_lookup(txn, &t, 0, none, &got), LWC_OK);
		assert_int_equal(got.n, 0);
		locset_free(&got);
	}
	mdb_txn_abort(txn);

	/* the same through pred_eval: EQ, and IN of two big keys plus one twice */
	{
		Lwc__Pred *p;
		struct locset got = { 0 }, u = { 0 };
		char err[256];

		assert_int_equal(mdb_txn_begin(f->env, NULL, MDB_RDONLY, &txn), 0);
		p = p_eq(0, tok[NK - 1]);
		assert_int_equal(pred_eval(txn, &t, p, &got, err, sizeof(err)), LWC_OK);
		expect_set(&got, want[NK - 1].v, want[NK - 1].n);
		p_free(p);
		p = p_new(LWC__PRED__OP__IN);
		p_token(p, tok[NK - 1], CRY_TOKEN_BYTES);
		p_token(p, tok[NK - 2], CRY_TOKEN_BYTES);
		p_token(p, tok[NK - 1], CRY_TOKEN_BYTES);
		assert_int_equal(pred_eval(txn, &t, p, &got, err, sizeof(err)), LWC_OK);
		assert_int_equal(locset_union(&u, &want[NK - 1], &want[NK - 2]), LWC_OK);
		expect_set(&got, u.v, u.n);
		p_free(p);
		mdb_txn_abort(txn);
		locset_free(&got);
		locset_free(&u);
	}
	for (size_t k = 0; k < NK; k++)
		locset_free(&want[k]);
}

/* ------------------------------------------------------ pred_wire_check */

/* A packed ProxyRequest whose where nests `depth` NOTs over an EQ. */
static uint8_t *pack_deep(int kind, int depth, size_t *len)
{
	Lwc__ProxyRequest rq = LWC__PROXY_REQUEST__INIT;
	Lwc__Select sel = LWC__SELECT__INIT;
	Lwc__Update upd = LWC__UPDATE__INIT;
	Lwc__Delete del = LWC__DELETE__INIT;
	Lwc__Pred *p = not_chain(depth);
	uint8_t handle[16];
	uint8_t *buf;

	memset(handle, 0x5a, sizeof(handle));
	rq.seq = 9;
	if (kind == 0) {
		rq.op_case = LWC__PROXY_REQUEST__OP_SELECT;
		rq.select = &sel;
		sel.table = (ProtobufCBinaryData){ sizeof(handle), handle };
		sel.where = p;
	} else if (kind == 1) {
		rq.op_case = LWC__PROXY_REQUEST__OP_UPDATE;
		rq.update = &upd;
		upd.table = (ProtobufCBinaryData){ sizeof(handle), handle };
		upd.where = p;
	} else {
		rq.op_case = LWC__PROXY_REQUEST__OP_DELETE;
		rq.delete_ = &del;
		del.table = (ProtobufCBinaryData){ sizeof(handle), handle };
		del.where = p;
		del.candidates = 1;
	}
	*len = lwc__proxy_request__get_packed_size(&rq);
	buf = xmalloc(*len);
	assert_int_equal(lwc__proxy_request__pack(&rq, buf), *len);
	p_free(p);
	return buf;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* A select whose where is n NOTs around an empty Pred (ALL, at depth n),
 * built inside out and never decoded. */
static uint8_t *raw_deep(size_t n, size_t *len)
{
	size_t *m = xmalloc((n + 1) * sizeof(size_t)), pos = 0, ns;
	uint8_t tmp[16], *buf;

	/* m[i]: bytes of the Pred i levels above the innermost one */
	m[0] = 0;
	for (size_t i = 1; i <= n; i++)
		m[i] = 3 + put_varint(tmp, m[i - 1]) + m[i - 1];
	/* ProxyRequest { seq = 1, select (6) { where (2) = the outermost } } */
	ns = 1 + put_varint(tmp, m[n]) + m[n];
	buf = xmalloc(3 + 10 + ns);
	buf[pos++] = 0x08;
	buf[pos++] = 1;
	buf[pos++] = 0x32;
	pos += put_varint(buf + pos, ns);
	buf[pos++] = 0x12;
	pos += put_varint(buf + pos, m[n]);
	for (size_t i = n; i >= 1; i--) {
		buf[pos++] = 0x08;               /* op = NOT */
		buf[pos++] = 5;
		buf[pos++] = 0x22;               /* args */
		pos += put_varint(buf + pos, m[i - 1]);
	}
	free(m);
	*len = pos;
	return buf;
}

static void test_pred_wire_check(void **state)
{
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_int_equal(pred_wire_check(NULL, 0), LWC_OK);
	for (int kind = 0; kind < 3; kind++) {
		Lwc__ProxyRequest *rq;

		buf = pack_deep(kind, PRED_WIRE_MAX_DEPTH, &len);
		assert_int_equal(pred_wire_check(buf, len), LWC_OK);
		/* what passes decodes, and pred_validate names the depth */
		rq = lwc__proxy_request__unpack(NULL, len, buf);
		assert_non_null(rq);
		lwc__proxy_request__free_unpacked(rq, NULL);
		/* every truncation either still parses as a prefix or is refused,
		 * and never reads past the end */
		for (size_t cut = 0; cut < len; cut += 1 + cut / 8) {
			uint8_t *part = xmalloc(cut);
			memcpy(part, buf, cut);
			int rc = pred_wire_check(part, cut);
			assert_true(rc == LWC_OK || rc == LWC_ERR_PROTO);
			free(part);
		}
		free(buf);
		buf = pack_deep(kind, PRED_WIRE_MAX_DEPTH + 1, &len);
		assert_int_equal(pred_wire_check(buf, len), LWC_ERR_PROTO);
		free(buf);
	}
	/* far beyond: refused before protobuf-c would overflow the stack */
	buf = raw_deep(200000, &len);
	assert_true(len > 1000000);
	assert_int_equal(pred_wire_check(buf, len), LWC_ERR_PROTO);
	free(buf);
	buf = raw_deep(PRED_WIRE_MAX_DEPTH, &len);
	assert_int_equal(pred_wire_check(buf, len), LWC_OK);
	{
		Lwc__ProxyRequest *rq = lwc__proxy_request__unpack(NULL, len, buf);
		const Lwc__Pred *p;
		int depth = 0;

		assert_non_null(rq);
		assert_int_equal(rq->op_case, LWC__PROXY_REQUEST__OP_SELECT);
		for (p = rq->select->where; p->n_args == 1; p = p->args[0]) {
			assert_int_equal(p->op, LWC__PRED__OP__NOT);
			depth++;
		}
		assert_int_equal(p->op, LWC__PRED__OP__ALL);
		assert_int_equal(depth, PRED_WIRE_MAX_DEPTH);
		/* decodable, and pred_validate refuses it with its own words */
		{
			char err[256] = "";
			assert_int_equal(pred_validate(rq->select->where, 1, err, sizeof(err)),
					 LWC_ERR_PROTO);
			assert_non_null(strstr(err, "deeper"));
		}
		lwc__proxy_request__free_unpacked(rq, NULL);
	}
	free(buf);
	buf = raw_deep(PRED_WIRE_MAX_DEPTH + 1, &len);
	assert_int_equal(pred_wire_check(buf, len), LWC_ERR_PROTO);
	/* cut one byte short: the lengths no longer fit */
	assert_int_equal(pred_wire_check(buf, len - 1), LWC_ERR_PROTO);
	free(buf);

	/* bytes that look nested inside records and tokens are not scanned */
	{
		Lwc__ProxyRequest rq = LWC__PROXY_REQUEST__INIT;
		Lwc__Insert ins = LWC__INSERT__INIT;
		Lwc__Row row = LWC__ROW__INIT, *rows[1] = { &row };
		uint8_t *deep = raw_deep(5000, &len), *packed;
		size_t plen;

		row.record = (ProtobufCBinaryData){ len, deep };
		ins.n_rows = 1;
		ins.rows = rows;
		rq.op_case = LWC__PROXY_REQUEST__OP_INSERT;
		rq.insert = &ins;
		plen = lwc__proxy_request__get_packed_size(&rq);
		packed = xmalloc(plen);
		assert_int_equal(lwc__proxy_request__pack(&rq, packed), plen);
		assert_int_equal(pred_wire_check(packed, plen), LWC_OK);
		free(packed);
		free(deep);
	}
	/* malformed: a length past the end, a group, an endless varint */
	{
		static const uint8_t past[] = { 0x32, 0x05, 0x12, 0x00 };
		static const uint8_t group[] = { 0x0b, 0x0c };
		static const uint8_t endless[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
						   0xff, 0xff, 0xff, 0xff, 0x01 };
		static const uint8_t ok[] = { 0x08, 0x01, 0x32, 0x02, 0x12, 0x00 };
		assert_int_equal(pred_wire_check(past, sizeof(past)), LWC_ERR_PROTO);
		assert_int_equal(pred_wire_check(group, sizeof(group)), LWC_ERR_PROTO);
		assert_int_equal(pred_wire_check(endless, sizeof(endless)), LWC_ERR_PROTO);
		assert_int_equal(pred_wire_check(ok, sizeof(ok)), LWC_OK);
	}
}

/* ------------------------------------------------------------- px_gamma */

static void test_px_gamma(void **state)
{
	struct px_engine_cfg cfg;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));

	/* ratio:2, γ_min 4 */
	cfg.pad = PX_PAD_RATIO;
	cfg.pad_arg = 2;
	cfg.pad_min = 4;
	assert_int_equal(px_gamma(&cfg, 0), 4);
	assert_int_equal(px_gamma(&cfg, 1), 4);
	assert_int_equal(px_gamma(&cfg, 2), 4);
	assert_int_equal(px_gamma(&cfg, 3), 6);
	assert_int_equal(px_gamma(&cfg, 100), 200);
	cfg.pad_arg = 3;
	cfg.pad_min = 1;
	assert_int_equal(px_gamma(&cfg, 0), 1);
	assert_int_equal(px_gamma(&cfg, 7), 21);

	/* pow2: the smallest power of two >= 2k, at least γ_min */
	cfg.pad = PX_PAD_POW2;
	cfg.pad_arg = 0;
	cfg.pad_min = 4;
	assert_int_equal(px_gamma(&cfg, 0), 4);
	assert_int_equal(px_gamma(&cfg, 1), 4);
	assert_int_equal(px_gamma(&cfg, 2), 4);
	assert_int_equal(px_gamma(&cfg, 3), 8);
	assert_int_equal(px_gamma(&cfg, 4), 8);
	assert_int_equal(px_gamma(&cfg, 5), 16);
	assert_int_equal(px_gamma(&cfg, 100), 256);
	assert_int_equal(px_gamma(&cfg, 128), 256);
	assert_int_equal(px_gamma(&cfg, 129), 512);
	cfg.pad_min = 100;
	assert_int_equal(px_gamma(&cfg, 3), 100);
	assert_int_equal(px_gamma(&cfg, 60), 128);
	cfg.pad_min = 1;
	assert_int_equal(px_gamma(&cfg, 0), 1);
	assert_int_equal(px_gamma(&cfg, 1), 2);
	assert_int_equal(px_gamma(&cfg, (uint64_t)1 << 40), (uint64_t)1 << 41);
	for (uint64_t k = 1; k < 5000; k++) {
		uint64_t g = px_gamma(&cfg, k);
		assert_true(g >= 2 * k && g < 4 * k && (g & (g - 1)) == 0);
	}

	/* fixed:G: G, but at least k (and γ_min) */
	cfg.pad = PX_PAD_FIXED;
	cfg.pad_arg = 8;
	cfg.pad_min = 4;
	assert_int_equal(px_gamma(&cfg, 0), 8);
	assert_int_equal(px_gamma(&cfg, 1), 8);
	assert_int_equal(px_gamma(&cfg, 8), 8);
	assert_int_equal(px_gamma(&cfg, 9), 9);
	assert_int_equal(px_gamma(&cfg, 100), 100);
	cfg.pad_arg = 2;
	assert_int_equal(px_gamma(&cfg, 0), 4);
	assert_int_equal(px_gamma(&cfg, 3), 4);
	assert_int_equal(px_gamma(&cfg, 5), 5);
	cfg.pad_min = 0;
	assert_int_equal(px_gamma(&cfg, 0), 2);
	assert_int_equal(px_gamma(&cfg, 1), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locset_edges),
		cmocka_unit_test(test_locset_random),
		cmocka_unit_test(test_pred_validate),
		cmocka_unit_test(test_pred_validate_size),
		cmocka_unit_test(test_pred_eval_fixed),
		cmocka_unit_test(test_pred_eval_tables),
		cmocka_unit_test(test_pred_eval_random),
		cmocka_unit_test(test_pred_lookup_dups),
		cmocka_unit_test(test_pred_wire_check),
		cmocka_unit_test(test_px_gamma),
	};

	if (sodium_init() < 0 || cry_init() != LWC_OK) {
		fprintf(stderr, "libsodium failed to initialise\n");
		return 1;
	}
	/* one LMDB environment for the eval tests: a group fixture */
	return cmocka_run_group_tests(tests, db_setup, db_teardown);
}
