/*
 * cs_client.c - see cs_client.h.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chan.h"
#include "cs_client.h"
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

int cs_client_recv(struct cs_client *cl, Lwc__CsResponse **resp)
{
	ProtobufCMessage *m;
	int rc;

	*resp = NULL;
	rc = chan_read_msg(cl->chan, cl->fd, &lwc__cs_response__descriptor, WIRE_FRAME_MAX,
			   &m, cl->timeout_ms);
	if (rc != LWC_OK)
		return rc;
	*resp = (Lwc__CsResponse *)m;
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
	if (resp)
		lwc__cs_response__free_unpacked(resp, NULL);
}

/* Send req, wait for its answer; turn an Error answer into its code. */
static int roundtrip(struct cs_client *cl, Lwc__CsRequest *req,
		     Lwc__CsResponse__ResultCase want, Lwc__CsResponse **resp,
		     char *err, size_t errlen)
{
	int rc;

	*resp = NULL;
	if ((rc = cs_client_send(cl, req)) != LWC_OK ||
	    (rc = cs_client_recv(cl, resp)) != LWC_OK) {
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

int cs_client_write(struct cs_client *cl, const struct cs_wblock *blocks, size_t n,
		    char *err, size_t errlen)
{
	Lwc__CsRequest req = LWC__CS_REQUEST__INIT;
	Lwc__CsWriteReq wr = LWC__CS_WRITE_REQ__INIT;
	Lwc__CsBlock *bs, **ptrs;
	Lwc__CsResponse *resp = NULL;
	int rc;

	bs = calloc(n ? n : 1, sizeof(*bs));
	ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	if (bs == NULL || ptrs == NULL) {
		free(bs);
		free(ptrs);
		return LWC_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		lwc__cs_block__init(&bs[i]);
		bs[i].id = blocks[i].id;
		bs[i].version = blocks[i].version;
		bs[i].data.data = (uint8_t *)(uintptr_t)blocks[i].data;
		bs[i].data.len = blocks[i].len;
		ptrs[i] = &bs[i];
	}
	wr.n_blocks = n;
	wr.blocks = ptrs;
	req.op_case = LWC__CS_REQUEST__OP_WRITE;
	req.write = &wr;
	rc = roundtrip(cl, &req, LWC__CS_RESPONSE__RESULT_WRITE, &resp, err, errlen);
	cs_client_free_resp(resp);
	free(bs);
	free(ptrs);
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
