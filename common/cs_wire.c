/*
 * cs_wire.c - see cs_wire.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cs_wire.h"
#include "lwc_err.h"

enum {
	WT_VARINT = 0,
	WT_LEN = 2
};

/* A varint of at most ten bytes whose value fits 64 bits; 0 otherwise. */
static int get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;

	for (unsigned i = 0; i < 10; i++) {
		uint8_t b;

		if (p == end)
			return 0;
		b = *p++;
		if (i == 9 && b > 1)
			return 0;
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (b < 0x80) {
			*v = x;
			*pp = p;
			return 1;
		}
	}
	return 0;
}

/* A field's key: its number (1 .. 2^29 - 1) and wire type. */
static int get_key(const uint8_t **pp, const uint8_t *end, uint32_t *field, unsigned *wire)
{
	uint64_t k;

	if (!get_varint(pp, end, &k) || k > UINT32_MAX || (k >> 3) == 0)
		return 0;
	*field = (uint32_t)(k >> 3);
	*wire = (unsigned)(k & 7);
	return 1;
}

/* A length-delimited field's bytes, within the message. */
static int get_bytes(const uint8_t **pp, const uint8_t *end, const uint8_t **at, size_t *len)
{
	uint64_t n;

	if (!get_varint(pp, end, &n) || n > (uint64_t)(end - *pp))
		return 0;
	*at = *pp;
	*len = (size_t)n;
	*pp += n;
	return 1;
}

/* CsBlock { uint64 id = 1; uint64 version = 2; bytes data = 3; } */
static int get_block(const uint8_t *p, const uint8_t *end, struct cs_wire_block *b)
{
	unsigned seen = 0;

	b->id = 0;
	b->version = 0;
	b->data = NULL;
	b->len = 0;
	while (p < end) {
		uint32_t field;
		unsigned wire;

		if (!get_key(&p, end, &field, &wire) || field > 3 || (seen & 1u << field))
			return 0;
		seen |= 1u << field;
		if (field == 1 && wire == WT_VARINT) {
			if (!get_varint(&p, end, &b->id))
				return 0;
		} else if (field == 2 && wire == WT_VARINT) {
			if (!get_varint(&p, end, &b->version))
				return 0;
		} else if (field == 3 && wire == WT_LEN) {
			if (!get_bytes(&p, end, &b->data, &b->len))
				return 0;
		} else {
			return 0;
		}
	}
	if (b->len == 0)
		b->data = NULL;           /* as protobuf-c leaves an empty bytes field */
	return 1;
}

/*
 * The outer message: seq = 1 (varint) and the op or result = 3 (a READ's
 * answer, a WRITE request), each at most once, nothing else.  *body is the
 * inner message: repeated CsBlock blocks = 1.
 */
static int get_outer(const uint8_t *buf, size_t len, uint64_t *seq, const uint8_t **body,
		     size_t *body_len)
{
	const uint8_t *p = buf, *end = buf + len;
	int seen_seq = 0, seen_op = 0;

	*seq = 0;
	while (p < end) {
		uint32_t field;
		unsigned wire;

		if (!get_key(&p, end, &field, &wire))
			return 0;
		if (field == 1 && wire == WT_VARINT && !seen_seq) {
			if (!get_varint(&p, end, seq))
				return 0;
			seen_seq = 1;
		} else if (field == 3 && wire == WT_LEN && !seen_op) {
			if (!get_bytes(&p, end, body, body_len))
				return 0;
			seen_op = 1;
		} else {
			return 0;
		}
	}
	return seen_op;
}

/* The next block of the inner message at *pp: 1 and *b, 0 at its end or
 * at a field that is not a block of the accepted shape. */
static int next_block(const uint8_t **pp, const uint8_t *end, struct cs_wire_block *b)
{
	const uint8_t *at;
	size_t blen;
	uint32_t field;
	unsigned wire;

	return *pp < end && get_key(pp, end, &field, &wire) && field == 1 && wire == WT_LEN &&
	       get_bytes(pp, end, &at, &blen) && get_block(at, at + blen, b);
}

enum cs_wire_kind cs_wire_scan(const uint8_t *buf, size_t len, enum cs_wire_kind want,
			       uint64_t *seq, size_t *n)
{
	const uint8_t *body = NULL;
	size_t body_len = 0, count;
	uint64_t s;

	if (want != CS_WIRE_READ_RESP && want != CS_WIRE_WRITE_REQ)
		return CS_WIRE_DECLINED;
	if (!get_outer(buf, len, &s, &body, &body_len))
		return CS_WIRE_DECLINED;
	{
		const uint8_t *p = body, *end = body + body_len;
		struct cs_wire_block b;

		for (count = 0; p < end; count++)
			if (!next_block(&p, end, &b))
				return CS_WIRE_DECLINED;
	}
	*seq = s;                         /* (untouched when declined) */
	*n = count;
	return want;
}

void cs_wire_iter_init(struct cs_wire_iter *it, const uint8_t *buf, size_t len)
{
	const uint8_t *body = NULL;
	size_t body_len = 0;
	uint64_t seq;

	it->p = it->end = NULL;
	if (get_outer(buf, len, &seq, &body, &body_len)) {
		it->p = body;
		it->end = body + body_len;
	}
}

int cs_wire_next(struct cs_wire_iter *it, struct cs_wire_block *b)
{
	return next_block(&it->p, it->end, b);
}

size_t cs_wire_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

uint8_t *cs_wire_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

size_t cs_wire_block_len(uint64_t id, uint64_t version, size_t len)
{
	return (id ? 1 + cs_wire_varint_len(id) : 0) +
	       (version ? 1 + cs_wire_varint_len(version) : 0) +
	       (len ? 1 + cs_wire_varint_len(len) + len : 0);
}

uint8_t *cs_wire_block_head(uint8_t *p, uint64_t id, uint64_t version, size_t len)
{
	*p++ = 1 << 3 | WT_LEN;                   /* blocks = 1 */
	p = cs_wire_varint(p, cs_wire_block_len(id, version, len));
	if (id) {
		*p++ = 1 << 3 | WT_VARINT;
		p = cs_wire_varint(p, id);
	}
	if (version) {
		*p++ = 2 << 3 | WT_VARINT;
		p = cs_wire_varint(p, version);
	}
	if (len) {
		*p++ = 3 << 3 | WT_LEN;
		p = cs_wire_varint(p, len);
	}
	return p;
}

/* the READ's result, read = 3: its blocks' fields */
static size_t read_body_len(const uint64_t *ids, const uint64_t *versions, size_t n,
			    size_t data_len)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		size_t bl = cs_wire_block_len(ids[i], versions[i], data_len);

		len += 1 + cs_wire_varint_len(bl) + bl;
	}
	return len;
}

size_t cs_wire_read_answer_len(uint64_t seq, const uint64_t *ids, const uint64_t *versions,
			       size_t n, size_t data_len, size_t *body_len)
{
	size_t body = read_body_len(ids, versions, n, data_len);

	*body_len = body;
	return (seq ? 1 + cs_wire_varint_len(seq) : 0) + 1 + cs_wire_varint_len(body) + body;
}

uint8_t *cs_wire_read_answer(uint8_t *out, uint64_t seq, const uint64_t *ids,
			     const uint64_t *versions, size_t n, size_t data_len,
			     size_t body_len, uint8_t **data)
{
	uint8_t *p = out;

	if (seq) {
		*p++ = 1 << 3 | WT_VARINT;        /* seq = 1 */
		p = cs_wire_varint(p, seq);
	}
	*p++ = 3 << 3 | WT_LEN;                   /* read = 3 */
	p = cs_wire_varint(p, body_len);
	for (size_t i = 0; i < n; i++) {
		p = cs_wire_block_head(p, ids[i], versions[i], data_len);
		data[i] = p;
		p += data_len;
	}
	return p;
}

int cs_wire_read_skeleton(const uint8_t *msg, size_t len, uint8_t **out, size_t *out_len)
{
	struct cs_wire_iter it;
	struct cs_wire_block b;
	const uint8_t *from = msg;
	uint64_t seq;
	size_t n, data = 0, k = 0;
	uint8_t *s;

	*out = NULL;
	*out_len = 0;
	if (cs_wire_scan(msg, len, CS_WIRE_READ_RESP, &seq, &n) != CS_WIRE_READ_RESP)
		return LWC_ERR_PROTO;
	for (cs_wire_iter_init(&it, msg, len); cs_wire_next(&it, &b);)
		data += b.len;
	/* (one byte more: malloc(0) of a message that is all data) */
	if ((s = malloc(len - data + 1)) == NULL)
		return LWC_ERR_NOMEM;
	/* the blocks' data lie in order, apart, inside the message (empty
	 * data has no place: its pointer is NULL) */
	for (cs_wire_iter_init(&it, msg, len); cs_wire_next(&it, &b);) {
		if (b.len == 0)
			continue;
		memcpy(s + k, from, (size_t)(b.data - from));
		k += (size_t)(b.data - from);
		from = b.data + b.len;
	}
	memcpy(s + k, from, (size_t)(msg + len - from));
	k += (size_t)(msg + len - from);
	*out = s;
	*out_len = k;
	return LWC_OK;
}
