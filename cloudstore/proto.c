/*
 * proto.c - decode a CsRequest, validate it, run it, encode the CsResponse.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chan.h"
#include "cs_wire.h"
#include "lwc.pb-c.h"
#include "proto.h"

#define ERRLEN 256

void cs_trace_info_clear(struct cs_trace_info *ti)
{
	free(ti->ids);
	memset(ti, 0, sizeof(*ti));
}

/* Where a response goes: *buf (malloc'ed) holds head bytes, the body of
 * *len bytes, then tail bytes. */
struct cs_out {
	uint8_t **buf;
	size_t *len;
	size_t head, tail;
};

static int pack_resp(Lwc__CsResponse *r, const struct cs_out *o)
{
	size_t n = lwc__cs_response__get_packed_size(r);
	uint8_t *buf = malloc(o->head + n + o->tail + 1);

	if (buf == NULL)
		return LWC_ERR_NOMEM;
	lwc__cs_response__pack(r, buf + o->head);
	*o->buf = buf;
	*o->len = n;
	return LWC_OK;
}

static int error_resp(uint64_t seq, int code, const char *msg, const struct cs_out *o)
{
	Lwc__CsResponse r = LWC__CS_RESPONSE__INIT;
	Lwc__Error e = LWC__ERROR__INIT;

	e.code = code;
	e.message = (char *)(uintptr_t)(msg && msg[0] ? msg : lwc_strerror(code));
	r.seq = seq;
	r.result_case = LWC__CS_RESPONSE__RESULT_ERROR;
	r.error = &e;
	return pack_resp(&r, o);
}

static void trace_ids(struct cs_trace_info *ti, const char *op, const uint64_t *ids, size_t n)
{
	ti->op = op;
	ti->n = n;
	if (n && (ti->ids = malloc(n * sizeof(uint64_t))) != NULL)
		memcpy(ti->ids, ids, n * sizeof(uint64_t));
}

/*
 * The answer to a READ is packed by hand (cs_wire_read_answer) so that the
 * backend copies every block straight into its place in the frame
 * (protobuf-c would copy each block once more from a buffer of its own);
 * test_store checks its bytes against lwc__cs_response__pack.
 */
static int do_read(const struct cs_store_ops *ops, struct cs_session *s, uint32_t max_frame,
		   uint64_t seq, const Lwc__CsReadReq *rq, const struct cs_out *o,
		   char *err)
{
	uint8_t **dst = NULL, *buf = NULL;
	uint32_t bsz;
	size_t n = rq->n_ids, total, body;
	int rc;

	if (rq->n_versions != n) {
		lwc_errf(err, ERRLEN, "READ names %zu ids but %zu versions", n, rq->n_versions);
		return LWC_ERR_PROTO;
	}
	if ((rc = cs_read_validate(rq->ids, n, err, ERRLEN)) != LWC_OK)
		return rc;
	if ((rc = ops->block_size(s, &bsz, err, ERRLEN)) != LWC_OK)
		return rc;
	if (bsz == 0) {
		lwc_errf(err, ERRLEN, "block %llu not held (the store is empty)",
			 (unsigned long long)rq->ids[0]);
		return LWC_ERR_NOT_FOUND;
	}
	/* per block: data + id/version/length tags, well under 32 bytes */
	if ((uint64_t)n * ((uint64_t)bsz + 32) + 64 > max_frame) {
		lwc_errf(err, ERRLEN, "READ of %zu blocks of %u bytes exceeds the maximum "
			 "frame size (%u bytes); split it", n, bsz, max_frame);
		return LWC_ERR_TOO_BIG;
	}
	total = cs_wire_read_answer_len(seq, rq->ids, rq->versions, n, bsz, &body);
	dst = malloc((n ? n : 1) * sizeof(*dst));
	buf = malloc(o->head + total + o->tail + 1);
	if (dst == NULL || buf == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	cs_wire_read_answer(buf + o->head, seq, rq->ids, rq->versions, n, bsz, body, dst);
	if ((rc = ops->read(s, rq->ids, rq->versions, n, dst, bsz, err, ERRLEN)) != LWC_OK)
		goto out;
	*o->buf = buf;
	*o->len = total;
	buf = NULL;
out:
	free(buf);
	free(dst);
	return rc;
}

static int do_write(const struct cs_store_ops *ops, struct cs_session *s, uint64_t seq,
		    const struct cs_block *bs, size_t n, const struct cs_out *o, char *err)
{
	Lwc__CsResponse r = LWC__CS_RESPONSE__INIT;
	Lwc__CsWriteResp wr = LWC__CS_WRITE_RESP__INIT;
	int rc;

	if ((rc = cs_write_validate(bs, n, err, ERRLEN)) == LWC_OK)
		rc = ops->write(s, bs, n, err, ERRLEN);
	if (rc != LWC_OK)
		return rc;
	wr.count = (uint32_t)n;
	r.seq = seq;
	r.result_case = LWC__CS_RESPONSE__RESULT_WRITE;
	r.write = &wr;
	return pack_resp(&r, o);
}

/* The blocks of a WRITE protobuf-c decoded, as the backends take them. */
static struct cs_block *write_blocks(const Lwc__CsWriteReq *wq)
{
	size_t n = wq->n_blocks;
	struct cs_block *bs = calloc(n ? n : 1, sizeof(*bs));

	for (size_t i = 0; bs && i < n; i++) {
		bs[i].id = wq->blocks[i]->id;
		bs[i].version = wq->blocks[i]->version;
		bs[i].data = wq->blocks[i]->data.data;
		bs[i].len = wq->blocks[i]->data.len;
	}
	return bs;
}

static void trace_write(struct cs_trace_info *ti, const struct cs_block *bs, size_t n)
{
	ti->op = "WRITE";
	ti->n = n;
	if (n && (ti->ids = malloc(n * sizeof(uint64_t))) != NULL)
		for (size_t i = 0; i < n; i++)
			ti->ids[i] = bs[i].id;
}

/*
 * A WRITE request read in place (cs_wire.h): the blocks point into the
 * request, so the backend copies each once, into its own storage, where
 * protobuf-c would first copy it into memory of its own.  *handled = 0
 * when the request is not a WRITE of the shape cs_wire reads.
 */
static int write_in_place(const struct cs_store_ops *ops, struct cs_session *s,
			  const uint8_t *req, size_t req_len, const struct cs_out *o,
			  struct cs_trace_info *ti, uint64_t *seq, int *handled, char *err)
{
	struct cs_wire_iter it;
	struct cs_wire_block b;
	struct cs_block *bs;
	size_t n;
	int rc;

	*handled = 0;           /* (*seq untouched: the caller's 0) */
	if (cs_wire_scan(req, req_len, CS_WIRE_WRITE_REQ, seq, &n) != CS_WIRE_WRITE_REQ)
		return LWC_OK;
	*handled = 1;
	if ((bs = malloc((n ? n : 1) * sizeof(*bs))) == NULL)
		return LWC_ERR_NOMEM;
	cs_wire_iter_init(&it, req, req_len);
	for (size_t i = 0; i < n && cs_wire_next(&it, &b); i++) {
		bs[i].id = b.id;
		bs[i].version = b.version;
		bs[i].data = b.data;
		bs[i].len = b.len;
	}
	trace_write(ti, bs, n);
	rc = do_write(ops, s, *seq, bs, n, o, err);
	free(bs);
	return rc;
}

static int do_stat(const struct cs_store_ops *ops, struct cs_session *s, uint64_t seq,
		   const Lwc__CsStatReq *sq, const struct cs_out *o, char *err)
{
	Lwc__CsResponse r = LWC__CS_RESPONSE__INIT;
	Lwc__CsStatResp sr = LWC__CS_STAT_RESP__INIT;
	struct cs_stat st;
	struct cs_held *held;
	Lwc__CsHeld *hs, **ptrs;
	size_t n = sq->n_ids;
	int rc;

	if (n > 65536) {
		lwc_errf(err, ERRLEN, "STAT of %zu ids: at most 65536 per request", n);
		return LWC_ERR_TOO_BIG;
	}
	held = calloc(n ? n : 1, sizeof(*held));
	hs = calloc(n ? n : 1, sizeof(*hs));
	ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	if (held == NULL || hs == NULL || ptrs == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	if ((rc = ops->stat(s, sq->ids, n, &st, held, err, ERRLEN)) != LWC_OK)
		goto out;
	for (size_t i = 0; i < n; i++) {
		lwc__cs_held__init(&hs[i]);
		hs[i].id = held[i].id;
		hs[i].n_versions = held[i].n;
		hs[i].versions = held[i].v;
		ptrs[i] = &hs[i];
	}
	sr.block_count = st.block_count;
	sr.block_size = st.block_size;
	sr.versions_held = st.versions_held;
	sr.n_held = n;
	sr.held = ptrs;
	sr.backend = (char *)(uintptr_t)ops->name;
	r.seq = seq;
	r.result_case = LWC__CS_RESPONSE__RESULT_STAT;
	r.stat = &sr;
	rc = pack_resp(&r, o);
out:
	free(held);
	free(hs);
	free(ptrs);
	return rc;
}

int cs_proto_handle(const struct cs_store_ops *ops, struct cs_session *s,
		    uint32_t max_frame, const uint8_t *req, size_t req_len,
		    uint8_t **resp, size_t *resp_len, struct cs_trace_info *ti)
{
	return cs_proto_handle_room(ops, s, max_frame, req, req_len, 0, 0, resp, resp_len, ti);
}

int cs_proto_handle_room(const struct cs_store_ops *ops, struct cs_session *s,
			 uint32_t max_frame, const uint8_t *req, size_t req_len,
			 size_t head, size_t tail, uint8_t **resp, size_t *resp_len,
			 struct cs_trace_info *ti)
{
	const struct cs_out o = { resp, resp_len, head, tail };
	Lwc__CsRequest *rq;
	char err[ERRLEN] = "";
	uint64_t seq = 0;
	int rc, handled;

	*resp = NULL;
	*resp_len = 0;
	memset(ti, 0, sizeof(*ti));
	ti->op = "BAD";
	rc = write_in_place(ops, s, req, req_len, &o, ti, &seq, &handled, err);
	if (handled) {
		if (rc == LWC_OK)
			return LWC_OK;
		goto error;
	}
	rq = lwc__cs_request__unpack(NULL, req_len, req);
	if (rq == NULL) {
		rc = LWC_ERR_PROTO;
		lwc_errf(err, sizeof(err), "malformed request: not a CsRequest message");
		goto error;
	}
	seq = rq->seq;
	switch (rq->op_case) {
	case LWC__CS_REQUEST__OP_READ:
		trace_ids(ti, "READ", rq->read->ids, rq->read->n_ids);
		rc = do_read(ops, s, max_frame, seq, rq->read, &o, err);
		break;
	case LWC__CS_REQUEST__OP_WRITE: {
		struct cs_block *bs = write_blocks(rq->write);

		if (bs == NULL) {
			rc = LWC_ERR_NOMEM;
			break;
		}
		trace_write(ti, bs, rq->write->n_blocks);
		rc = do_write(ops, s, seq, bs, rq->write->n_blocks, &o, err);
		free(bs);
		break;
	}
	case LWC__CS_REQUEST__OP_STAT:
		trace_ids(ti, "STAT", rq->stat->ids, rq->stat->n_ids);
		rc = do_stat(ops, s, seq, rq->stat, &o, err);
		break;
	default:
		rc = LWC_ERR_UNKNOWN_OP;
		lwc_errf(err, sizeof(err), "unknown operation (the request names no READ, "
			 "WRITE or STAT)");
		break;
	}
	lwc__cs_request__free_unpacked(rq, NULL);
	if (rc == LWC_OK)
		return LWC_OK;
error:
	ti->status = rc;
	if (rc == LWC_ERR_NOMEM && err[0] == '\0')
		lwc_errf(err, sizeof(err), "out of memory");
	snprintf(ti->err, sizeof(ti->err), "%s", err);
	return error_resp(seq, rc, err, &o);
}

void cs_trace_write(FILE *f, uint64_t conn, const struct cs_trace_info *ti,
		    size_t bytes_in, size_t bytes_out)
{
	struct timespec ts;
	struct tm tm;
	char when[32];

	if (f == NULL)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "%s.%06ldZ conn=%" PRIu64 " op=%s n=%zu ids=", when, ts.tv_nsec / 1000,
		conn, ti->op, ti->n);
	if (ti->ids == NULL || ti->n == 0)
		fputc('-', f);
	for (size_t i = 0; ti->ids && i < ti->n; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, ti->ids[i]);
	fprintf(f, " in=%zu out=%zu status=%s\n", bytes_in, bytes_out,
		ti->status == LWC_OK ? "ok" : lwc_errname(ti->status));
	fflush(f);
}
