/*
 * test_cswire.c - common/cs_wire.c, the in-place reading of a READ's answer
 * (by the proxy) and of a WRITE request (by the cloud store), against
 * protobuf-c: every message protobuf-c packs is accepted and read as
 * protobuf-c reads it; fields in another order too; anything of another
 * shape is declined (then protobuf-c decides); and over many thousands of
 * corrupted messages, whatever is accepted means what protobuf-c makes of
 * it (cswire_check.h, shared with the fuzz target fuzz_cs_wire).  And the
 * proxy's WRITE frames (cs_wframe_new, the blocks sealed where they are
 * sent from, seq last): protobuf-c reads them as the WRITE they were built
 * for, and so does cs_wire.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../fuzz/cswire_check.h"
#include "cs_client.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	/* splitmix64: fixed seed, reproducible */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A message of n blocks packed by protobuf-c: a READ's answer or a WRITE
 * request; *len its length (free the result). */
static uint8_t *pack_msg(enum cs_wire_kind kind, uint64_t seq, size_t n, const uint64_t *ids,
			 const uint64_t *vers, const size_t *lens, size_t *len)
{
	Lwc__CsBlock *bs = calloc(n ? n : 1, sizeof(*bs)), **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	uint8_t *buf;

	assert_non_null(bs);
	assert_non_null(ptrs);
	for (size_t i = 0; i < n; i++) {
		lwc__cs_block__init(&bs[i]);
		bs[i].id = ids[i];
		bs[i].version = vers[i];
		bs[i].data.len = lens[i];
		bs[i].data.data = malloc(lens[i] ? lens[i] : 1);
		assert_non_null(bs[i].data.data);
		for (size_t j = 0; j < lens[i]; j++)
			bs[i].data.data[j] = (uint8_t)(next() >> 56);
		ptrs[i] = &bs[i];
	}
	if (kind == CS_WIRE_READ_RESP) {
		Lwc__CsResponse r = LWC__CS_RESPONSE__INIT;
		Lwc__CsReadResp rr = LWC__CS_READ_RESP__INIT;

		rr.n_blocks = n;
		rr.blocks = ptrs;
		r.seq = seq;
		r.result_case = LWC__CS_RESPONSE__RESULT_READ;
		r.read = &rr;
		*len = lwc__cs_response__get_packed_size(&r);
		buf = malloc(*len + 1);
		assert_non_null(buf);
		lwc__cs_response__pack(&r, buf);
	} else {
		Lwc__CsRequest r = LWC__CS_REQUEST__INIT;
		Lwc__CsWriteReq wr = LWC__CS_WRITE_REQ__INIT;

		wr.n_blocks = n;
		wr.blocks = ptrs;
		r.seq = seq;
		r.op_case = LWC__CS_REQUEST__OP_WRITE;
		r.write = &wr;
		*len = lwc__cs_request__get_packed_size(&r);
		buf = malloc(*len + 1);
		assert_non_null(buf);
		lwc__cs_request__pack(&r, buf);
	}
	for (size_t i = 0; i < n; i++)
		free(bs[i].data.data);
	free(bs);
	free(ptrs);
	return buf;
}

static void expect_accepted(const uint8_t *buf, size_t len, enum cs_wire_kind kind)
{
	int acc;

	assert_int_equal(cswire_check(buf, len, kind, &acc), 0);
	assert_int_equal(acc, 1);
}

static void expect_declined(const uint8_t *buf, size_t len, enum cs_wire_kind kind)
{
	uint64_t seq = 12345;
	size_t n = 678;

	assert_int_equal(cs_wire_scan(buf, len, kind, &seq, &n), CS_WIRE_DECLINED);
	/* left alone: the store answers a declined, malformed request with seq 0 */
	assert_int_equal(seq, 12345);
	assert_int_equal(n, 678);
}

/* Every combination of the fields' edges, both messages. */
static void test_packed_by_protobuf_c(void **state)
{
	static const uint64_t seqs[] = { 0, 1, 127, 128, 16384, UINT64_MAX };
	static const uint64_t vals[] = { 0, 1, 127, 128, 300, (uint64_t)1 << 35, UINT64_MAX };
	static const size_t sizes[] = { 0, 1, 2, 3, 17, 200 };
	static const size_t lens[] = { 0, 1, 127, 128, 10800, 16384 };
	enum cs_wire_kind kinds[] = { CS_WIRE_READ_RESP, CS_WIRE_WRITE_REQ };
	size_t checked = 0;

	(void)state;
	for (size_t k = 0; k < 2; k++)
		for (size_t si = 0; si < sizeof(seqs) / sizeof(seqs[0]); si++)
			for (size_t ni = 0; ni < sizeof(sizes) / sizeof(sizes[0]); ni++) {
				size_t n = sizes[ni], len;
				uint64_t *ids = calloc(n + 1, sizeof(uint64_t));
				uint64_t *vers = calloc(n + 1, sizeof(uint64_t));
				size_t *ls = calloc(n + 1, sizeof(size_t));
				uint8_t *buf;

				for (size_t i = 0; i < n; i++) {
					ids[i] = vals[(i + si) % 7];
					vers[i] = vals[(i * 3 + ni) % 7];
					ls[i] = lens[(i + si + ni) % 6];
				}
				buf = pack_msg(kinds[k], seqs[si], n, ids, vers, ls, &len);
				expect_accepted(buf, len, kinds[k]);
				free(buf);
				free(ids);
				free(vers);
				free(ls);
				checked++;
			}
	assert_int_equal(checked, 2 * 6 * 6);
}

/* The READ answer the store packs by hand (cs_wire_read_answer): byte for
 * byte protobuf-c's, at the fields' edges (zeros left out, long varints),
 * with its data pointers at the blocks' data. */
static void test_read_answer_packer(void **state)
{
	static const uint64_t seqs[] = { 0, 1, 127, 128, 16384, UINT64_MAX };
	static const uint64_t vals[] = { 0, 1, 127, 128, 300, (uint64_t)1 << 35, UINT64_MAX };
	static const size_t sizes[] = { 0, 1, 2, 17 };
	static const size_t lens[] = { 0, 1, 127, 128, 10800 };

	(void)state;
	for (size_t si = 0; si < sizeof(seqs) / sizeof(seqs[0]); si++)
		for (size_t ni = 0; ni < sizeof(sizes) / sizeof(sizes[0]); ni++)
			for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
				size_t n = sizes[ni], bl = lens[li], len, mine, body, k = 0;
				uint64_t ids[17], vers[17];
				size_t ls[17];
				uint8_t *data[17], *want, *got;
				struct cs_wire_iter it;
				struct cs_wire_block b;

				for (size_t i = 0; i < n; i++) {
					ids[i] = vals[(i + si) % 7];
					vers[i] = vals[(i * 3 + ni) % 7];
					ls[i] = bl;
				}
				want = pack_msg(CS_WIRE_READ_RESP, seqs[si], n, ids, vers, ls, &len);
				mine = cs_wire_read_answer_len(seqs[si], ids, vers, n, bl, &body);
				assert_int_equal(mine, len);
				got = malloc(mine + 1);
				assert_non_null(got);
				assert_ptr_equal(cs_wire_read_answer(got, seqs[si], ids, vers, n, bl,
								     body, data), got + mine);
				for (cs_wire_iter_init(&it, want, len); cs_wire_next(&it, &b); k++) {
					assert_true(k < n);
					assert_int_equal(b.len, bl);
					if (bl == 0)    /* no data field, no place */
						continue;
					assert_int_equal(data[k] - got, b.data - want);
					memcpy(data[k], b.data, bl);
				}
				assert_int_equal(k, n);
				assert_memory_equal(got, want, len);
				free(got);
				free(want);
			}
}

/* Fields in another order than protobuf-c writes them: the same meaning. */
static void test_other_order(void **state)
{
	/* seq after the op; a block's fields reversed: data, version, id */
	static const uint8_t m[] = {
		0x1a, 0x0c,                          /* op/result 3, 12 bytes      */
		0x0a, 0x0a,                          /* a block, 10 bytes          */
		0x1a, 0x03, 'a', 'b', 'c',           /* data "abc"                 */
		0x10, 0x05,                          /* version 5                  */
		0x08, 0xac, 0x02,                    /* id 300                     */
		0x08, 0x07                           /* seq 7                      */
	};
	struct cs_wire_block b[1];
	uint64_t seq;
	size_t n;

	(void)state;
	assert_int_equal(sizeof(m), 16);
	for (int k = 0; k < 2; k++) {
		enum cs_wire_kind kind = k ? CS_WIRE_WRITE_REQ : CS_WIRE_READ_RESP;

		expect_accepted(m, 16, kind);
		assert_int_equal(cs_wire_scan(m, 16, kind, &seq, &n), kind);
		assert_int_equal(seq, 7);
		assert_int_equal(n, 1);
		{
			struct cs_wire_iter it;

			cs_wire_iter_init(&it, m, 16);
			assert_true(cs_wire_next(&it, &b[0]));
			assert_false(cs_wire_next(&it, &b[0]));
			cs_wire_iter_init(&it, m, 16);
			assert_true(cs_wire_next(&it, &b[0]));
		}
		assert_int_equal(b[0].id, 300);
		assert_int_equal(b[0].version, 5);
		assert_int_equal(b[0].len, 3);
		assert_memory_equal(b[0].data, "abc", 3);
		assert_ptr_equal(b[0].data, m + 6);     /* in place */
	}
	/* a varint written longer than it needs: the same value */
	{
		static const uint8_t o[] = { 0x08, 0x87, 0x80, 0x00, 0x1a, 0x04, 0x0a, 0x02,
					     0x08, 0x01 };
		expect_accepted(o, sizeof(o), CS_WIRE_READ_RESP);
		assert_int_equal(cs_wire_scan(o, sizeof(o), CS_WIRE_READ_RESP, &seq, &n),
				 CS_WIRE_READ_RESP);
		assert_int_equal(seq, 7);
		assert_int_equal(n, 1);
	}
}

/* Shapes left to protobuf-c. */
static void test_declined(void **state)
{
	static const struct {
		const char *what;
		uint8_t b[16];
		size_t len;
	} cases[] = {
		{ "empty", { 0 }, 0 },
		{ "seq only, no op", { 0x08, 0x01 }, 2 },
		{ "error result (field 2)", { 0x12, 0x00 }, 2 },
		{ "stat (field 4)", { 0x22, 0x00 }, 2 },
		{ "unknown field 5", { 0x1a, 0x00, 0x28, 0x01 }, 4 },
		{ "seq twice", { 0x08, 0x01, 0x08, 0x02, 0x1a, 0x00 }, 6 },
		{ "op twice", { 0x1a, 0x00, 0x1a, 0x00 }, 4 },
		{ "seq as bytes", { 0x0a, 0x00, 0x1a, 0x00 }, 4 },
		{ "op as varint", { 0x18, 0x01 }, 2 },
		{ "inner field 2", { 0x1a, 0x02, 0x12, 0x00 }, 4 },
		{ "block as varint", { 0x1a, 0x02, 0x08, 0x01 }, 4 },
		{ "block field 4", { 0x1a, 0x04, 0x0a, 0x02, 0x20, 0x01 }, 6 },
		{ "block id twice", { 0x1a, 0x06, 0x0a, 0x04, 0x08, 0x01, 0x08, 0x02 }, 8 },
		{ "block data as varint", { 0x1a, 0x04, 0x0a, 0x02, 0x18, 0x01 }, 6 },
		{ "block id as bytes", { 0x1a, 0x04, 0x0a, 0x02, 0x0a, 0x00 }, 6 },
		{ "length past the end", { 0x1a, 0x05, 0x0a, 0x02 }, 4 },
		{ "block past its message", { 0x1a, 0x02, 0x0a, 0x03, 0x08, 0x01 }, 6 },
		{ "data past its block", { 0x1a, 0x04, 0x0a, 0x02, 0x1a, 0x05, 0x00 }, 7 },
		{ "varint of 11 bytes", { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0xff, 0x01, 0x1a, 0x00 }, 14 },
		{ "varint past 64 bits", { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					   0xff, 0x02, 0x1a, 0x00 }, 13 },
		{ "varint cut short", { 0x1a, 0x00, 0x08, 0x80 }, 4 },
		{ "field number 0", { 0x00, 0x01, 0x1a, 0x00 }, 4 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("%s\n", cases[i].what);
		expect_declined(cases[i].b, cases[i].len, CS_WIRE_READ_RESP);
		expect_declined(cases[i].b, cases[i].len, CS_WIRE_WRITE_REQ);
	}
	/* the largest varint: ten bytes, the last 1 */
	{
		static const uint8_t m[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					     0xff, 0xff, 0x01, 0x1a, 0x00 };
		uint64_t seq;
		size_t n;

		expect_accepted(m, sizeof(m), CS_WIRE_READ_RESP);
		assert_int_equal(cs_wire_scan(m, sizeof(m), CS_WIRE_READ_RESP, &seq, &n),
				 CS_WIRE_READ_RESP);
		assert_true(seq == UINT64_MAX);
		assert_int_equal(n, 0);
	}
	/* a wrong want */
	expect_declined((const uint8_t *)"\x1a\x00", 2, CS_WIRE_DECLINED);
}

/* Corrupted messages: flipped bytes, cuts, bytes inserted and removed. */
static void test_corrupted(void **state)
{
	size_t accepted = 0, declined = 0;

	(void)state;
	for (int round = 0; round < 3000; round++) {
		enum cs_wire_kind kind = round & 1 ? CS_WIRE_WRITE_REQ : CS_WIRE_READ_RESP;
		size_t n = next() % 5, len;
		uint64_t ids[5], vers[5];
		size_t ls[5];
		uint8_t *buf, *m;
		int acc;

		for (size_t i = 0; i < n; i++) {
			ids[i] = next() >> (next() % 64);
			vers[i] = next() % 4 == 0 ? 0 : next() >> (next() % 64);
			ls[i] = next() % 40;
		}
		buf = pack_msg(kind, next() >> (next() % 64), n, ids, vers, ls, &len);
		m = malloc(len + 8);
		assert_non_null(m);
		for (int t = 0; t < 8; t++) {
			size_t ml = len;

			memcpy(m, buf, len);
			switch (next() % 4) {
			case 0:                      /* flip one to three bytes */
				for (int f = 0, nf = 1 + (int)(next() % 3); f < nf && ml; f++)
					m[next() % ml] ^= (uint8_t)(1 + next() % 255);
				break;
			case 1:                      /* cut */
				ml = len ? next() % len : 0;
				break;
			case 2: {                    /* insert a byte */
				size_t at = next() % (len + 1);
				memmove(m + at + 1, m + at, len - at);
				m[at] = (uint8_t)next();
				ml = len + 1;
				break;
			}
			default:                     /* remove a byte */
				if (len) {
					size_t at = next() % len;
					memmove(m + at, m + at + 1, len - at - 1);
					ml = len - 1;
				}
				break;
			}
			assert_int_equal(cswire_check(m, ml, kind, &acc), 0);
			if (acc)
				accepted++;
			else
				declined++;
		}
		free(m);
		free(buf);
	}
	print_message("corrupted: %zu accepted (read as protobuf-c reads them), %zu declined\n",
		      accepted, declined);
	assert_true(accepted > 1000);
	assert_true(declined > 1000);
}

/* cs_wframe: every size and edge, read back by protobuf-c and cs_wire. */
static void test_write_frames(void **state)
{
	static const uint64_t vals[] = { 0, 1, 127, 128, 300, (uint64_t)1 << 35, UINT64_MAX };
	static const size_t sizes[] = { 0, 1, 2, 5, 64, 1024 };
	static const size_t lens[] = { 0, 1, 127, 128, 10800 };
	static const uint64_t seqs[] = { 0, 1, 127, 128, UINT64_MAX };

	(void)state;
	for (size_t ni = 0; ni < sizeof(sizes) / sizeof(sizes[0]); ni++)
		for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
			size_t n = sizes[ni], len = lens[li];
			uint64_t *ids = calloc(n + 1, sizeof(uint64_t));
			uint64_t *vers = calloc(n + 1, sizeof(uint64_t));
			uint8_t **data = calloc(n + 1, sizeof(uint8_t *));
			struct cs_wframe *f;

			assert_non_null(ids);
			assert_non_null(vers);
			assert_non_null(data);
			for (size_t i = 0; i < n; i++) {
				ids[i] = vals[(i + li) % 7];
				vers[i] = vals[(i * 5 + ni) % 7];
			}
			f = cs_wframe_new(n, ids, vers, len, data);
			assert_non_null(f);
			for (size_t i = 0; i < n; i++)
				for (size_t j = 0; j < len; j++)
					data[i][j] = (uint8_t)(i * 31 + j);
			/* sent twice (a retry) with different seqs: the same blocks */
			for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++) {
				const uint8_t *body;
				size_t blen = cs_wframe_body(f, seqs[k], &body);
				Lwc__CsRequest *r = lwc__cs_request__unpack(NULL, blen, body);
				int acc;

				assert_non_null(r);
				assert_true(r->seq == seqs[k]);
				assert_int_equal(r->op_case, LWC__CS_REQUEST__OP_WRITE);
				assert_int_equal(r->write->n_blocks, n);
				for (size_t i = 0; i < n; i++) {
					const Lwc__CsBlock *b = r->write->blocks[i];

					assert_true(b->id == ids[i]);
					assert_true(b->version == vers[i]);
					assert_int_equal(b->data.len, len);
					for (size_t j = 0; j < len; j++)
						assert_int_equal(b->data.data[j], (uint8_t)(i * 31 + j));
				}
				lwc__cs_request__free_unpacked(r, NULL);
				assert_int_equal(cswire_check(body, blen, CS_WIRE_WRITE_REQ, &acc), 0);
				assert_int_equal(acc, 1);
			}
			cs_wframe_free(f);
			/* the same blocks as a run of ids of one version, when they are */
			for (size_t i = 0; i < n; i++) {
				ids[i] = vals[li % 7] + i;
				vers[i] = vals[ni % 7];
			}
			if (n == 0 || ids[n - 1] >= ids[0]) {        /* (no wrap past 2^64) */
				uint8_t **rdata = calloc(n + 1, sizeof(uint8_t *));
				struct cs_wframe *g;
				const uint8_t *b1, *b2;
				size_t l1, l2;

				assert_non_null(rdata);
				f = cs_wframe_new(n, ids, vers, len, data);
				g = cs_wframe_new_run(n, ids[0], vers[0], len, rdata);
				assert_non_null(f);
				assert_non_null(g);
				for (size_t i = 0; i < n; i++) {
					memset(data[i], (int)i, len);
					memset(rdata[i], (int)i, len);
				}
				l1 = cs_wframe_body(f, 5, &b1);
				l2 = cs_wframe_body(g, 5, &b2);
				assert_int_equal(l1, l2);
				assert_memory_equal(b1, b2, l1);
				cs_wframe_free(f);
				cs_wframe_free(g);
				free(rdata);
			}
			free(ids);
			free(vers);
			free(data);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_packed_by_protobuf_c),
		cmocka_unit_test(test_read_answer_packer),
		cmocka_unit_test(test_other_order),
		cmocka_unit_test(test_declined),
		cmocka_unit_test(test_corrupted),
		cmocka_unit_test(test_write_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
