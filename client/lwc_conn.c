/*
 * lwc_conn.c - liblwc: the channel to the proxy, the catalog of tables,
 * connect and close.
 */
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "net.h"
#include "wire.h"
#include "lwc_int.h"

/* ---- the channel ---------------------------------------------------------------- */

void conn_break(lwc_conn *c)
{
	c->broken = 1;
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
}

int conn_send(lwc_conn *c, Lwc__ProxyRequest *req)
{
	int rc;

	if (c->broken)
		return LWC_ERR_CLOSED;
	rc = chan_write_msg(c->chan, c->fd, &req->base);
	if (rc != LWC_OK)
		conn_break(c);
	return rc;
}

/* A frame of chan_frame_new: sealed and sent (the frame stays the caller's). */
int conn_send_frame(lwc_conn *c, uint8_t *frame, size_t len)
{
	int rc;

	if (c->broken)
		return LWC_ERR_CLOSED;
	rc = chan_write_frame(c->chan, c->fd, frame, len);
	if (rc != LWC_OK)
		conn_break(c);
	return rc;
}

/* Next response of the statement seq. */
int conn_recv(lwc_conn *c, uint64_t seq, Lwc__ProxyResponse **out)
{
	ProtobufCMessage *m = NULL;
	int rc;

	*out = NULL;
	if (c->broken)
		return LWC_ERR_CLOSED;
	rc = chan_read_msg(c->chan, c->fd, &lwc__proxy_response__descriptor, RESP_MAX, &m,
			   TIMEOUT_MS);
	if (rc != LWC_OK) {
		conn_break(c);
		return rc;
	}
	*out = (Lwc__ProxyResponse *)m;
	if ((*out)->seq != seq && (*out)->result_case != LWC__PROXY_RESPONSE__RESULT_ERROR) {
		lwc__proxy_response__free_unpacked(*out, NULL);
		*out = NULL;
		conn_break(c);
		return LWC_ERR_PROTO;
	}
	return LWC_OK;
}

const char *conn_lost_msg(int rc)
{
	switch (rc) {
	case LWC_ERR_CLOSED:
		return "the proxy closed the connection";
	case LWC_ERR_TIMEOUT:
		return "the proxy did not answer in time";
	default:
		return lwc_strerror(rc);
	}
}

/* An Error response as a result (a revoked user's connection is over). */
lwc_result *conn_error_result(lwc_conn *c, lwc_result *r, const Lwc__Error *e)
{
	int code = e->code < 0 ? e->code : LWC_ERR_PROTO;

	if (code == LWC_ERR_REVOKED ||
	    (code == LWC_ERR_INTEGRITY && strstr(e->message ? e->message : "", "closing") != NULL))
		conn_break(c);
	return result_error(r, code, -1, "%s", e->message && e->message[0] ? e->message
						: lwc_strerror(code));
}

/* Send a request and wait for Done (or Error); rows/candidates are not
 * expected.  *count gets Done.count. */
lwc_result *conn_call(lwc_conn *c, Lwc__ProxyRequest *req, uint64_t *count)
{
	int rc;

	req->seq = ++c->seq;
	if ((rc = conn_send(c, req)) != LWC_OK)
		return result_error(NULL, rc, -1, "connection to the proxy lost: %s",
				    conn_lost_msg(rc));
	return conn_wait_done(c, req->seq, count);
}

/* Wait for statement seq's Done (NULL, *count its count) or Error. */
lwc_result *conn_wait_done(lwc_conn *c, uint64_t seq, uint64_t *count)
{
	Lwc__ProxyResponse *resp = NULL;
	lwc_result *r = NULL;
	int rc;

	for (;;) {
		if ((rc = conn_recv(c, seq, &resp)) != LWC_OK)
			return result_error(NULL, rc, -1, "connection to the proxy lost: %s",
					    conn_lost_msg(rc));
		if (resp->result_case == LWC__PROXY_RESPONSE__RESULT_DONE) {
			if (count)
				*count = resp->done->count;
			lwc__proxy_response__free_unpacked(resp, NULL);
			return NULL;
		}
		if (resp->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR) {
			r = conn_error_result(c, NULL, resp->error);
			lwc__proxy_response__free_unpacked(resp, NULL);
			return r;
		}
		lwc__proxy_response__free_unpacked(resp, NULL);
		conn_break(c);
		return result_error(NULL, LWC_ERR_PROTO, -1, "unexpected answer from the proxy");
	}
}

/* ---- catalog ---------------------------------------------------------------------- */

static void tables_free(lwc_conn *c)
{
	while (c->tables) {
		struct ltable *t = c->tables;
		c->tables = t->next;
		schema_free(&t->sc);
		free(t);
	}
	c->catalog_loaded = 0;
}

int catalog_load(lwc_conn *c, char *err, size_t errlen)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__ListTables lt = LWC__LIST_TABLES__INIT;
	Lwc__ProxyResponse *resp = NULL;
	int rc;

	/* the answer to the INSERT in flight comes first (lwc_insert_send) */
	if (c->inflight) {
		lwc_errf(err, errlen, "an INSERT is in flight on the connection "
			 "(lwc_insert_wait first)");
		return LWC_ERR_BUSY;
	}
	req.op_case = LWC__PROXY_REQUEST__OP_LIST_TABLES;
	req.list_tables = &lt;
	req.seq = ++c->seq;
	if ((rc = conn_send(c, &req)) != LWC_OK || (rc = conn_recv(c, req.seq, &resp)) != LWC_OK) {
		lwc_errf(err, errlen, "connection to the proxy lost: %s", conn_lost_msg(rc));
		return rc;
	}
	if (resp->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR) {
		rc = resp->error->code < 0 ? resp->error->code : LWC_ERR_PROTO;
		lwc_errf(err, errlen, "%s", resp->error->message ? resp->error->message
			 : lwc_strerror(rc));
		if (rc == LWC_ERR_REVOKED)
			conn_break(c);
		lwc__proxy_response__free_unpacked(resp, NULL);
		return rc;
	}
	if (resp->result_case != LWC__PROXY_RESPONSE__RESULT_CATALOG) {
		lwc__proxy_response__free_unpacked(resp, NULL);
		lwc_errf(err, errlen, "unexpected answer from the proxy");
		return LWC_ERR_PROTO;
	}
	tables_free(c);
	c->R = resp->catalog->record_bytes;
	c->features = resp->catalog->features;
	c->S = c->R + CRY_RECORD_OVERHEAD;
	for (size_t i = 0; i < resp->catalog->n_tables; i++) {
		const Lwc__TableInfo *ti = resp->catalog->tables[i];
		struct ltable *t = calloc(1, sizeof(*t));

		if (t == NULL)
			break;
		if (ti->table.len != CRY_TOKEN_BYTES ||
		    schema_open(c, ti->schema.data, ti->schema.len, t) != LWC_OK) {
			free(t);     /* a table of other keys: not ours to read */
			continue;
		}
		memcpy(t->handle, ti->table.data, CRY_TOKEN_BYTES);
		t->unique = ti->unique_cols;
		ltable_ranges(t, ti->range_tokens.data, ti->range_tokens.len, ti->range_ready);
		t->next = c->tables;
		c->tables = t;
	}
	c->catalog_loaded = 1;
	lwc__proxy_response__free_unpacked(resp, NULL);
	return LWC_OK;
}

/* The table as the catalog last read holds it, with no I/O (NULL when the
 * catalog is not loaded or has no such table). */
struct ltable *catalog_cached(lwc_conn *c, const char *name)
{
	if (!c->catalog_loaded)
		return NULL;
	for (struct ltable *t = c->tables; t; t = t->next)
		if (strcmp(t->sc.name, name) == 0)
			return t;
	return NULL;
}

struct ltable *catalog_find(lwc_conn *c, const char *name, int refresh)
{
	char err[256];

	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 || !c->catalog_loaded) {
			if (!refresh && c->catalog_loaded)
				return NULL;
			if (catalog_load(c, err, sizeof(err)) != LWC_OK)
				return NULL;
		}
		for (struct ltable *t = c->tables; t; t = t->next)
			if (strcmp(t->sc.name, name) == 0)
				return t;
	}
	return NULL;
}

/* ---- connect ------------------------------------------------------------------------ */

int lwc_connect(lwc_conn **out, const char *key_file, const char *proxy, char *err,
		size_t errlen)
{
	struct userkey *uk = NULL;
	lwc_conn *c;
	int rc;

	*out = NULL;
	if (cry_init() != LWC_OK) {
		lwc_errf(err, errlen, "libsodium failed to initialise");
		return LWC_ERR_CRYPTO;
	}
	if ((rc = userkey_read(key_file, &uk, err, errlen)) != LWC_OK)
		return rc;
	if (proxy == NULL || proxy[0] == '\0')
		proxy = uk->proxy;
	if (proxy[0] == '\0') {
		lwc_errf(err, errlen, "no proxy address: give one (--proxy HOST:PORT); the key file "
			 "%s names none", key_file);
		userkey_free(uk);
		return LWC_ERR_ARG;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL || (c->k = sodium_malloc(sizeof(*c->k))) == NULL) {
		free(c);
		userkey_free(uk);
		return LWC_ERR_NOMEM;
	}
	c->fd = -1;
	snprintf(c->user, sizeof(c->user), "%s", uk->name);
	if ((rc = cry_kdf(c->k->tok, uk->ku, CRY_SUB_TOKEN, CRY_CTX_USER)) != LWC_OK ||
	    (rc = cry_kdf(c->k->rec, uk->ku, CRY_SUB_RECORD, CRY_CTX_USER)) != LWC_OK ||
	    (rc = chan_new(&c->chan, 0)) != LWC_OK)
		goto fail;
	if ((rc = net_connect(proxy, 10000, &c->fd, err, errlen)) != LWC_OK)
		goto fail;
	if ((rc = chan_connect(c->chan, c->fd, uk->name, uk->kdbu, 10000, err, errlen)) != LWC_OK)
		goto fail;
	userkey_free(uk);
	uk = NULL;
	if ((rc = catalog_load(c, err, errlen)) != LWC_OK)
		goto fail;
	*out = c;
	return LWC_OK;
fail:
	userkey_free(uk);
	lwc_close(c);
	return rc;
}

void lwc_close(lwc_conn *c)
{
	if (c == NULL)
		return;
	if (c->open) {
		c->open->conn = NULL;
		c->open = NULL;
	}
	lwc_insert_free(c->inflight);     /* its answer is not waited for */
	tables_free(c);
	if (c->fd >= 0)
		close(c->fd);
	chan_free(c->chan);
	if (c->k)
		sodium_free(c->k);
	free(c);
}

void lwc_set_cancel_flag(lwc_conn *c, volatile sig_atomic_t *flag)
{
	if (c)
		c->cancel = flag;
}

const char *lwc_conn_user(const lwc_conn *c)
{
	return c ? c->user : "";
}

int lwc_conn_ok(const lwc_conn *c)
{
	return c && !c->broken;
}
