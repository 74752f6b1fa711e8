/*
 * test_pbarena.c - messages unpacked into an arena (common/pbarena.c) are
 * the messages protobuf-c unpacks on its own, small and spanning many
 * chunks; bad input gives NULL (and, under ASan, leaks nothing).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "lwc.pb-c.h"
#include "pbarena.h"

/* An Insert of n rows, each a record of rec bytes and ntok tokens. */
static uint8_t *insert_request(size_t n, size_t rec, size_t ntok, size_t *len)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Insert ins = LWC__INSERT__INIT;
	Lwc__Row *rows = calloc(n, sizeof(*rows)), **rp = calloc(n, sizeof(*rp));
	ProtobufCBinaryData *toks = calloc(n * ntok, sizeof(*toks));
	uint8_t *bytes = malloc(n * (rec + ntok * 16)), *out, table[16];

	assert_non_null(rows);
	assert_non_null(rp);
	assert_non_null(toks);
	assert_non_null(bytes);
	for (size_t i = 0; i < n * (rec + ntok * 16); i++)
		bytes[i] = (uint8_t)(i * 131 + 7);
	for (size_t i = 0; i < n; i++) {
		uint8_t *b = bytes + i * (rec + ntok * 16);

		lwc__row__init(&rows[i]);
		rows[i].record.data = b;
		rows[i].record.len = rec;
		for (size_t t = 0; t < ntok; t++) {
			toks[i * ntok + t].data = b + rec + t * 16;
			/* an empty token now and then, as an UPDATE's kept ones */
			toks[i * ntok + t].len = (i + t) % 5 == 0 ? 0 : 16;
		}
		rows[i].tokens = toks + i * ntok;
		rows[i].n_tokens = ntok;
		rp[i] = &rows[i];
	}
	memset(table, 0xab, sizeof(table));
	ins.table.data = table;
	ins.table.len = sizeof(table);
	ins.rows = rp;
	ins.n_rows = n;
	req.seq = 77;
	req.op_case = LWC__PROXY_REQUEST__OP_INSERT;
	req.insert = &ins;
	*len = lwc__proxy_request__get_packed_size(&req);
	out = malloc(*len ? *len : 1);
	assert_non_null(out);
	lwc__proxy_request__pack(&req, out);
	free(rows);
	free(rp);
	free(toks);
	free(bytes);
	return out;
}

static void same_insert(const Lwc__ProxyRequest *a, const Lwc__ProxyRequest *b)
{
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->op_case, b->op_case);
	assert_int_equal(a->insert->table.len, b->insert->table.len);
	assert_memory_equal(a->insert->table.data, b->insert->table.data, a->insert->table.len);
	assert_int_equal(a->insert->n_rows, b->insert->n_rows);
	for (size_t i = 0; i < a->insert->n_rows; i++) {
		const Lwc__Row *x = a->insert->rows[i], *y = b->insert->rows[i];

		assert_int_equal(x->record.len, y->record.len);
		assert_memory_equal(x->record.data, y->record.data, x->record.len);
		assert_int_equal(x->n_tokens, y->n_tokens);
		for (size_t t = 0; t < x->n_tokens; t++) {
			assert_int_equal(x->tokens[t].len, y->tokens[t].len);
			if (x->tokens[t].len)
				assert_memory_equal(x->tokens[t].data, y->tokens[t].data,
						    x->tokens[t].len);
		}
	}
}

static void check_sizes(size_t n, size_t rec, size_t ntok)
{
	size_t len;
	uint8_t *wire = insert_request(n, rec, ntok, &len);
	Lwc__ProxyRequest *plain = lwc__proxy_request__unpack(NULL, len, wire);
	Lwc__ProxyRequest *ar = (Lwc__ProxyRequest *)pb_arena_unpack(
		&lwc__proxy_request__descriptor, len, wire);

	assert_non_null(plain);
	assert_non_null(ar);
	same_insert(plain, ar);
	lwc__proxy_request__free_unpacked(plain, NULL);
	pb_arena_free(&ar->base);
	free(wire);
}

static void test_small(void **state)
{
	(void)state;
	check_sizes(0, 0, 0);
	check_sizes(1, 168, 7);
	check_sizes(3, 168, 22);
}

/* 20,000 rows of 22 tokens: far past the first chunk and the 16 MB ones */
static void test_many_chunks(void **state)
{
	(void)state;
	check_sizes(20000, 168, 22);
	check_sizes(2000, 65536, 1);         /* pieces larger than a doubled chunk */
}

/* The arena accepts exactly what protobuf-c accepts. */
static void same_acceptance(const uint8_t *wire, size_t len)
{
	ProtobufCMessage *m = pb_arena_unpack(&lwc__proxy_request__descriptor, len, wire);
	Lwc__ProxyRequest *p = lwc__proxy_request__unpack(NULL, len, wire);

	assert_int_equal(m == NULL, p == NULL);
	pb_arena_free(m);
	if (p)
		lwc__proxy_request__free_unpacked(p, NULL);
}

static void test_bad_input(void **state)
{
	size_t len;
	uint8_t *wire = insert_request(50, 168, 7, &len);

	(void)state;
	/* every proper prefix of a message with required-free proto3 fields
	 * either decodes (a shorter message) or fails; a truncated length
	 * inside a row fails */
	for (size_t cut = 1; cut < len; cut += 97)
		same_acceptance(wire, cut);
	wire[3] ^= 0xff;
	same_acceptance(wire, len);
	pb_arena_free(NULL);
	free(wire);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_many_chunks),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
