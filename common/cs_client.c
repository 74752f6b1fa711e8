/*
 * cs_client.c - see cs_client.h.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <sodium.h>

#include "chan.h"
#include "cs_client.h"
#include "cs_wire.h"
#include "net.h"
#include "wire.h"

struct cs_client {
	int fd;
	int timeout_ms;
	uint64_t next_seq;      /* seq of the next request sent     */
	uint64_t expect_seq;    /* seq of the next answer expected  */
	struct chan *chan;
};

int cs_client_connect(struct cs_client **out, const char *addr, const uint8_t key[32],
		      int timeout_ms, char *err, size_t errlen)
{
	struct cs_client *cl;
	int rc;

	*out = NULL;
	cl = calloc(1, sizeof(*cl));
	if (cl == NULL)
		return LWC_ERR_NOMEM;
	cl->fd = -1;
	cl->timeout_ms = timeout_ms;
	cl->next_seq = cl->expect_seq = 1;
	if ((rc = chan_new(&cl->chan, 0)) != LWC_OK)
		goto fail;
	/* version 3: WRITEs in clear frames, READ answers in skeleton frames */
	chan_use_skeleton(cl->chan, cs_wire_read_skeleton);
	if ((rc = net_connect(addr, timeout_ms, &cl->fd, err, errlen)) != LWC_OK)
		goto fail;
	if ((rc = chan_connect(cl->chan, cl->fd, "", key, timeout_ms, err, errlen)) != LWC_OK)
		goto fail;
	*out = cl;
	return LWC_OK;
fail:
	cs_client_close(cl);
	return rc;
}

void cs_client_close(struct cs_client *cl)
{
	if (cl == NULL)
		return;
	if (cl->fd >= 0)
		close(cl->fd);
	chan_free(cl->chan);
	free(cl);
}

int cs_client_fd(const struct cs_client *cl)
{
	return cl->fd;
}

int cs_client_send(struct cs_client *cl, Lwc__CsRequest *req)
{
	req->seq = cl->next_seq++;
	return chan_write_msg(cl->chan, cl->fd, &req->base);
}

/*
 * An answer as the caller sees it (r) and what it is made of: a READ's
 * answer read in place (cs_wire.h) keeps the decrypted frame, its blocks
 * pointing into it, and needs no wiping (the store's own bytes: blocks
 * sealed under K_OPS); any other answer is protobuf-c's message (pb),
 * of which r is a shallow copy.
 */
struct resp_hold {
	Lwc__CsResponse r;
	Lwc__CsReadResp rr;
	Lwc__CsResponse *pb;
	uint8_t *frame;
};

static struct resp_hold *hold_of(Lwc__CsResponse *r)
{
	return (struct resp_hold *)(void *)((char *)r - offsetof(struct resp_hold, r));
}

/* The READ's answer in plain[0..len) (its frame body), or NULL (no memory). */
static Lwc__CsResponse *read_in_place(uint8_t *body, const uint8_t *plain, size_t len,
				      uint64_t seq, size_t n)
{
	struct resp_hold *h;
	Lwc__CsBlock **ptrs, *bs;
	struct cs_wire_iter it;
	struct cs_wire_block b;

	if (n > SIZE_MAX / (sizeof(*ptrs) + sizeof(*bs)) - 1)
		return NULL;
	h = malloc(sizeof(*h) + n * (sizeof(*ptrs) + sizeof(*bs)));
	if (h == NULL)
		return NULL;
	ptrs = (Lwc__CsBlock **)(void *)(h + 1);
	bs = (Lwc__CsBlock *)(void *)(ptrs + n);
	cs_wire_iter_init(&it, plain, len);
	for (size_t i = 0; i < n && cs_wire_next(&it, &b); i++) {
		lwc__cs_block__init(&bs[i]);
		bs[i].id = b.id;
		bs[i].version = b.version;
		bs[i].data.data = (uint8_t *)(uintptr_t)b.data;
		bs[i].data.len = b.len;
		ptrs[i] = &bs[i];
	}
	lwc__cs_response__init(&h->r);
	lwc__cs_read_resp__init(&h->rr);
	h->rr.n_blocks = n;
	h->rr.blocks = ptrs;
	h->r.seq = seq;
	h->r.result_case = LWC__CS_RESPONSE__RESULT_READ;
	h->r.read = &h->rr;
	h->pb = NULL;
	h->frame = body;
	return &h->r;
}

int cs_client_recv(struct cs_client *cl, Lwc__CsResponse **resp)
{
	uint8_t *body, *plain;
	size_t len, n;
	uint64_t seq;
	int rc;

	*resp = NULL;
	rc = chan_read_plain(cl->chan, cl->fd, WIRE_FRAME_MAX, &body, &plain, &len,
			     cl->timeout_ms);
	if (rc != LWC_OK)
		return rc;
	if (cs_wire_scan(plain, len, CS_WIRE_READ_RESP, &seq, &n) == CS_WIRE_READ_RESP) {
		if ((*resp = read_in_place(body, plain, len, seq, n)) == NULL)
			rc = LWC_ERR_NOMEM;
	} else {
		Lwc__CsResponse *pb = lwc__cs_response__unpack(NULL, len, plain);
		struct resp_hold *h = pb ? malloc(sizeof(*h)) : NULL;

		if (h != NULL) {
			h->r = *pb;
			h->pb = pb;
			h->frame = NULL;
			*resp = &h->r;
		} else {
			rc = pb ? LWC_ERR_NOMEM : LWC_ERR_PROTO;
			if (pb)
				lwc__cs_response__free_unpacked(pb, NULL);
		}
		sodium_memzero(plain, len);
	}
	if (rc != LWC_OK || hold_of(*resp)->frame == NULL)
		free(body);               /* (read in place, the answer keeps it) */
	if (rc != LWC_OK)
		return rc;
	if ((*resp)->seq != cl->expect_seq) {
		cs_client_free_resp(*resp);
		*resp = NULL;
		return LWC_ERR_PROTO;
	}
	cl->expect_seq++;
	return LWC_OK;
}

void cs_client_free_resp(Lwc__CsResponse *resp)
{
	struct resp_hold *h;

	if (resp == NULL)
		return;
	h = hold_of(resp);
	if (h->pb)
		lwc__cs_response__free_unpacked(h->pb, NULL);
	free(h->frame);
	free(h);
}

/* Wait for the answer to the request just sent; turn an Error answer into
 * its code. */
static int await_resp(struct cs_client *cl, Lwc__CsResponse__ResultCase want,
		      Lwc__CsResponse **resp, char *err, size_t errlen)
{
	int rc;

	*resp = NULL;
	if ((rc = cs_client_recv(cl, resp)) != LWC_OK) {
		lwc_errf(err, errlen, "cloudstore: %s", lwc_strerror(rc));
		return rc;
	}
	if ((*resp)->result_case == LWC__CS_RESPONSE__RESULT_ERROR) {
		Lwc__Error *e = (*resp)->error;
		rc = e->code < 0 && e->code >= LWC_ERR_MIN_ ? e->code : LWC_ERR_PROTO;
		lwc_errf(err, errlen, "%s", e->message ? e->message : lwc_strerror(rc));
		cs_client_free_resp(*resp);
		*resp = NULL;
		return rc;
	}
	if ((*resp)->result_case != want) {
		cs_client_free_resp(*resp);
		*resp = NULL;
		lwc_errf(err, errlen, "cloudstore answered with the wrong message type");
		return LWC_ERR_PROTO;
	}
	return LWC_OK;
}

/* Send req, wait for its answer. */
static int roundtrip(struct cs_client *cl, Lwc__CsRequest *req,
		     Lwc__CsResponse__ResultCase want, Lwc__CsResponse **resp,
		     char *err, size_t errlen)
{
	int rc;

	*resp = NULL;
	if ((rc = cs_client_send(cl, req)) != LWC_OK) {
		lwc_errf(err, errlen, "cloudstore: %s", lwc_strerror(rc));
		return rc;
	}
	return await_resp(cl, want, resp, err, errlen);
}

int cs_client_read(struct cs_client *cl, const uint64_t *ids, const uint64_t *versions,
		   size_t n, Lwc__CsResponse **resp, char *err, size_t errlen)
{
	Lwc__CsRequest req = LWC__CS_REQUEST__INIT;
	Lwc__CsReadReq rd = LWC__CS_READ_REQ__INIT;
	int rc;

	rd.n_ids = n;
	rd.ids = (uint64_t *)(uintptr_t)ids;
	rd.n_versions = n;
	rd.versions = (uint64_t *)(uintptr_t)versions;
	req.op_case = LWC__CS_REQUEST__OP_READ;
	req.read = &rd;
	rc = roundtrip(cl, &req, LWC__CS_RESPONSE__RESULT_READ, resp, err, errlen);
	if (rc == LWC_OK && (*resp)->read->n_blocks != n) {
		cs_client_free_resp(*resp);
		*resp = NULL;
		lwc_errf(err, errlen, "cloudstore returned a short READ");
		return LWC_ERR_PROTO;
	}
	return rc;
}

/*
 * A WRITE request laid out around its blocks, so that they are sealed where
 * they are sent from: CsRequest { write = 3 { blocks = 1 { id = 1,
 * version = 2, data = 3 } ... }, seq = 1 }, seq last (protobuf allows any
 * order, cs_wire and protobuf-c read it) because it is known only when the
 * request is sent.  The body stays as it is after a send (it travels in a
 * clear frame, authenticated where it lies), so a WRITE can be sent again
 * on a new connection.
 */
struct cs_wframe {
	uint8_t *buf;           /* the write field, then room for seq         */
	size_t write_len;       /* bytes of the write field                   */
};

#define SEQ_ROOM 11             /* key and a varint of up to ten bytes        */

/* A frame for a write field of inner bytes of blocks; *p: where the first
 * block's field goes. */
static struct cs_wframe *wf_alloc(size_t inner, uint8_t **p)
{
	struct cs_wframe *f = malloc(sizeof(*f));

	if (f == NULL)
		return NULL;
	f->write_len = 1 + cs_wire_varint_len(inner) + inner;
	if ((f->buf = malloc(f->write_len + SEQ_ROOM)) == NULL) {
		free(f);
		return NULL;
	}
	*p = f->buf;
	*(*p)++ = 3 << 3 | 2;
	*p = cs_wire_varint(*p, inner);
	return f;
}

/* A block's whole field: its key, length and body. */
static size_t wf_field_len(uint64_t id, uint64_t version, size_t len)
{
	size_t bl = cs_wire_block_len(id, version, len);

	return 1 + cs_wire_varint_len(bl) + bl;
}

/* n blocks of len bytes: ids[i] and versions[i], or (ids NULL) first + i
 * and version. */
static struct cs_wframe *wf_blocks(size_t n, const uint64_t *ids, const uint64_t *versions,
				   uint64_t first, uint64_t version, size_t len, uint8_t **data)
{
	struct cs_wframe *f;
	size_t inner = 0;
	uint8_t *p;

	for (size_t i = 0; i < n; i++)
		inner += wf_field_len(ids ? ids[i] : first + i, ids ? versions[i] : version, len);
	if ((f = wf_alloc(inner, &p)) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		data[i] = cs_wire_block_head(p, ids ? ids[i] : first + i,
					     ids ? versions[i] : version, len);
		p = data[i] + len;
	}
	return f;
}

struct cs_wframe *cs_wframe_new(size_t n, const uint64_t *ids, const uint64_t *versions,
				size_t len, uint8_t **data)
{
	return wf_blocks(n, ids, versions, 0, 0, len, data);
}

struct cs_wframe *cs_wframe_new_run(size_t n, uint64_t first, uint64_t version, size_t len,
				    uint8_t **data)
{
	return wf_blocks(n, NULL, NULL, first, version, len, data);
}

void cs_wframe_free(struct cs_wframe *f)
{
	if (f == NULL)
		return;
	free(f->buf);
	free(f);
}

size_t cs_wframe_body(struct cs_wframe *f, uint64_t seq, const uint8_t **body)
{
	uint8_t *p = f->buf + f->write_len;

	if (seq) {                        /* proto3: a zero is left out */
		*p++ = 1 << 3 | 0;
		p = cs_wire_varint(p, seq);
	}
	*body = f->buf;
	return (size_t)(p - f->buf);
}

int cs_client_write_frame(struct cs_client *cl, struct cs_wframe *f, char *err, size_t errlen)
{
	int rc = cs_client_write_send(cl, f, err, errlen);

	return rc == LWC_OK ? cs_client_write_wait(cl, err, errlen) : rc;
}

int cs_client_write_send(struct cs_client *cl, struct cs_wframe *f, char *err, size_t errlen)
{
	const uint8_t *plain;
	uint8_t head[WIRE_HDR_BYTES + CHAN_PLAIN_OFF], tail[CHAN_CLEAR_TAIL];
	size_t body = cs_wframe_body(f, cl->next_seq++, &plain);
	struct iovec iov[3];
	int rc;

	if (body + CHAN_ABYTES + CHAN_MODE_BYTES > WIRE_FRAME_MAX) {
		lwc_errf(err, errlen, "cloudstore: %s", lwc_strerror(LWC_ERR_TOO_BIG));
		return LWC_ERR_TOO_BIG;
	}
	/* a clear frame (chan.h): the blocks are sealed under K_OPS already,
	 * so the request goes out from where it was built, authenticated */
	rc = chan_seal_clear(cl->chan, plain, body, head + WIRE_HDR_BYTES, tail);
	if (rc == LWC_OK) {
		wire_put_u32(head, (uint32_t)(body + CHAN_ABYTES + CHAN_MODE_BYTES));
		iov[0].iov_base = head;
		iov[0].iov_len = sizeof(head);
		iov[1].iov_base = (void *)(uintptr_t)plain;
		iov[1].iov_len = body;
		iov[2].iov_base = tail;
		iov[2].iov_len = sizeof(tail);
		rc = wire_writev_all(cl->fd, iov, 3);
	}
	if (rc != LWC_OK)
		lwc_errf(err, errlen, "cloudstore: %s", lwc_strerror(rc));
	return rc;
}

int cs_client_write_wait(struct cs_client *cl, char *err, size_t errlen)
{
	Lwc__CsResponse *resp = NULL;
	int rc = await_resp(cl, LWC__CS_RESPONSE__RESULT_WRITE, &resp, err, errlen);

	cs_client_free_resp(resp);
	return rc;
}

int cs_client_write(struct cs_client *cl, const struct cs_wblock *blocks, size_t n,
		    char *err, size_t errlen)
{
	struct cs_wframe *f;
	size_t inner = 0;
	uint8_t *p;
	int rc;

	for (size_t i = 0; i < n; i++)
		inner += wf_field_len(blocks[i].id, blocks[i].version, blocks[i].len);
	if ((f = wf_alloc(inner, &p)) == NULL)
		return LWC_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		p = cs_wire_block_head(p, blocks[i].id, blocks[i].version, blocks[i].len);
		if (blocks[i].len)
			memcpy(p, blocks[i].data, blocks[i].len);
		p += blocks[i].len;
	}
	rc = cs_client_write_frame(cl, f, err, errlen);
	cs_wframe_free(f);
	return rc;
}

int cs_client_stat(struct cs_client *cl, const uint64_t *ids, size_t n,
		   Lwc__CsResponse **resp, char *err, size_t errlen)
{
	Lwc__CsRequest req = LWC__CS_REQUEST__INIT;
	Lwc__CsStatReq st = LWC__CS_STAT_REQ__INIT;

	st.n_ids = n;
	st.ids = (uint64_t *)(uintptr_t)ids;
	req.op_case = LWC__CS_REQUEST__OP_STAT;
	req.stat = &st;
	return roundtrip(cl, &req, LWC__CS_RESPONSE__RESULT_STAT, resp, err, errlen);
}
