/*
 * cs_wire.h - the two large messages between the proxy and the cloud store,
 * read in place.
 *
 * A READ's answer and a WRITE request are almost all block bytes.
 * protobuf-c's unpacker copies every bytes field into memory of its own
 * (one malloc and one copy of 10.8 KB a block); these decoders point into
 * the frame instead.  They read the shape the two sides send (CsResponse
 * { seq, read { blocks { id, version, data } } } and CsRequest { seq,
 * write { blocks ... } }, fields in any order) and decline anything else:
 * a field of another number or wire type, a field given twice, a varint
 * longer than ten bytes, a length past its message.  A declined message is
 * handed to protobuf-c, which gives it the meaning (or the refusal) it
 * always had; an accepted one means what protobuf-c would make of it
 * (test_cswire and the fuzz target fuzz_cs_wire check both).
 */
#ifndef LWC_CS_WIRE_H
#define LWC_CS_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* One block of a READ's answer or a WRITE: data points into the frame. */
struct cs_wire_block {
	uint64_t id;
	uint64_t version;
	const uint8_t *data;
	size_t len;
};

/* What a decoder found. */
enum cs_wire_kind {
	CS_WIRE_DECLINED = 0,      /* not this shape: use protobuf-c          */
	CS_WIRE_READ_RESP,         /* a CsResponse whose result is a READ     */
	CS_WIRE_WRITE_REQ          /* a CsRequest whose op is a WRITE         */
};

/*
 * Count the blocks of a READ's answer (want CS_WIRE_READ_RESP) or a WRITE
 * request (CS_WIRE_WRITE_REQ) in buf[0..len): returns want and sets *seq
 * and *n when the message has that shape, CS_WIRE_DECLINED (and leaves
 * them alone) otherwise.
 */
enum cs_wire_kind cs_wire_scan(const uint8_t *buf, size_t len, enum cs_wire_kind want,
			       uint64_t *seq, size_t *n);

/* The blocks of a message cs_wire_scan accepted, in order:
 *   for (cs_wire_iter_init(&it, buf, len); cs_wire_next(&it, &b);) ...  */
struct cs_wire_iter {
	const uint8_t *p, *end;
};
void cs_wire_iter_init(struct cs_wire_iter *it, const uint8_t *buf, size_t len);
int cs_wire_next(struct cs_wire_iter *it, struct cs_wire_block *b);

/*
 * The skeleton of a READ's answer (chan.h, CHAN_MODE_SKELETON): the
 * message without the bytes of its blocks' data, in *out (malloc'ed, even
 * when empty).  LWC_ERR_PROTO for a message cs_wire_scan does not accept
 * as CS_WIRE_READ_RESP.  (A WRITE request has the same shape: the channel,
 * not this function, keeps skeleton frames to the store's answers.)
 */
int cs_wire_read_skeleton(const uint8_t *msg, size_t len, uint8_t **out, size_t *out_len);

/* Encoding helpers shared with the store's hand-packed READ answer. */
size_t cs_wire_varint_len(uint64_t v);
uint8_t *cs_wire_varint(uint8_t *p, uint64_t v);
/* The length of a CsBlock's body as protobuf-c packs it (zeros left out). */
size_t cs_wire_block_len(uint64_t id, uint64_t version, size_t len);
/* Write the field of one block (blocks = 1) up to its data: the key and
 * length of the block, its id and version, the data's key and length (each
 * left out when zero, as protobuf-c does); returns where the len bytes of
 * data go. */
uint8_t *cs_wire_block_head(uint8_t *p, uint64_t id, uint64_t version, size_t len);

/*
 * A READ's answer packed by hand, CsResponse { seq = 1; read = 3 { repeated
 * blocks = 1 } } with n blocks of data_len bytes each, the bytes protobuf-c
 * packs for it (fields in number order, proto3 zeros left out, the oneof's
 * CsReadResp always present): the store sends it so, with each block read
 * straight into its place in the frame.  cs_wire_read_answer_len is its
 * size, and sets *body_len to the length of its read field;
 * cs_wire_read_answer, given that body_len, writes it all but the blocks'
 * data at out (that many bytes), sets data[i] to where block i's data goes
 * and returns the message's end.
 */
size_t cs_wire_read_answer_len(uint64_t seq, const uint64_t *ids, const uint64_t *versions,
			       size_t n, size_t data_len, size_t *body_len);
uint8_t *cs_wire_read_answer(uint8_t *out, uint64_t seq, const uint64_t *ids,
			     const uint64_t *versions, size_t n, size_t data_len,
			     size_t body_len, uint8_t **data);

#endif
