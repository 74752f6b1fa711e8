/*
 * lwc_load.c - liblwc: INSERTs prepared ahead of their round trip, for bulk
 * loading (lwc.h, "Bulk loading"): a statement made while the one before
 * it is at the proxy, and sent before that one's answer (pipelined: it
 * names the one it follows, after_seq, and the proxy runs it only if that
 * one succeeded, so a failure stops the load where lwc_exec would).
 */
#include <stdlib.h>
#include <string.h>

#include "lwc_int.h"

struct lwc_insert {
	uint8_t *frame;               /* the request, packed (chan_frame_new) */
	size_t len;
	uint64_t seq;
	uint64_t after_seq;           /* the statement it follows, or 0       */
	uint64_t rows;
	struct sql_schema sc;         /* the table's, for the proxy's errors  */
	char *sql;                    /* for lwc_exec's one retry             */
	lwc_result *answer;           /* read with the one before it (below)  */
	int rerun;                    /* not run because the one before it was
				       * run again: run it again too          */
	struct lwc_insert *next;      /* in flight after this one             */
};

void lwc_insert_free(lwc_insert *ins)
{
	while (ins != NULL) {
		lwc_insert *next = ins->next;

		chan_frame_free(ins->frame, ins->len);   /* not sent: not sealed */
		lwc_result_free(ins->answer);
		schema_free(&ins->sc);
		free(ins->sql);
		free(ins);
		ins = next;
	}
}

/* The last INSERT in flight, or NULL. */
static lwc_insert *inflight_last(const lwc_conn *c)
{
	lwc_insert *x = c->inflight;

	while (x != NULL && x->next != NULL)
		x = x->next;
	return x;
}

static size_t inflight_count(const lwc_conn *c)
{
	size_t n = 0;

	for (const lwc_insert *x = c->inflight; x != NULL; x = x->next)
		n++;
	return n;
}

uint64_t lwc_insert_rows(const lwc_insert *ins)
{
	return ins ? ins->rows : 0;
}

lwc_insert *lwc_insert_prepare(lwc_conn *c, const char *sql, lwc_result **err)
{
	struct sql_stmt *st = NULL;
	struct ltable *t;
	lwc_insert *ins;
	char msg[512];
	int errpos = -1;

	*err = NULL;
	if (c == NULL || sql == NULL) {
		*err = result_error(NULL, LWC_ERR_ARG, -1, "no connection");
		return NULL;
	}
	if (c->broken) {
		*err = result_error(NULL, LWC_ERR_CLOSED, -1, "the connection to the proxy is "
				    "closed");
		return NULL;
	}
	if (sql_parse(sql, strlen(sql), &st, msg, sizeof(msg), &errpos) != LWC_OK) {
		*err = result_error(NULL, LWC_ERR_ARG, errpos, "%s", msg);
		return NULL;
	}
	if (st->kind != SQL_INSERT || st->src[0]) {
		*err = result_error(NULL, LWC_ERR_ARG, -1, "lwc_insert_prepare takes INSERT ... "
				    "VALUES statements only");
		sql_free(st);
		return NULL;
	}
	/* with a statement in flight or a result open, nothing may be read */
	if (c->inflight || c->open) {
		if ((t = catalog_cached(c, st->table)) == NULL) {
			*err = result_error(NULL, LWC_ERR_BUSY, -1, "table \"%s\" is not in the "
					    "catalog read so far, and the connection is busy",
					    st->table);
			sql_free(st);
			return NULL;
		}
	} else if ((t = catalog_find(c, st->table, 1)) == NULL) {
		*err = error_no_table(st->table, st->table_pos);
		sql_free(st);
		return NULL;
	}
	if ((ins = calloc(1, sizeof(*ins))) == NULL || (ins->sql = strdup(sql)) == NULL ||
	    schema_copy(&ins->sc, &t->sc) != LWC_OK) {
		if (ins)
			free(ins->sql);
		free(ins);
		sql_free(st);
		*err = &nomem_result;
		return NULL;
	}
	ins->seq = ++c->seq;
	/* made while another is in flight: it follows that one */
	ins->after_seq = c->inflight ? inflight_last(c)->seq : 0;
	*err = insert_prepare(c, st, t, ins->seq, ins->after_seq, &ins->frame, &ins->len,
			      &ins->rows);
	sql_free(st);
	if (*err != NULL) {
		lwc_insert_free(ins);
		return NULL;
	}
	return ins;
}

int lwc_insert_send(lwc_conn *c, lwc_insert *ins)
{
	int rc;

	if (c == NULL || ins == NULL) {
		lwc_insert_free(ins);
		return LWC_ERR_ARG;
	}
	/* one more in flight only if it follows the last one sent (made
	 * while that one was in flight), and never more than two */
	if (c->open || (c->inflight && (inflight_count(c) >= 2 ||
					ins->after_seq != inflight_last(c)->seq))) {
		lwc_insert_free(ins);
		return LWC_ERR_BUSY;
	}
	if ((rc = conn_send_frame(c, ins->frame, ins->len)) != LWC_OK) {
		lwc_insert_free(ins);
		return rc;
	}
	free(ins->frame);                 /* sealed in place: ciphertext now */
	ins->frame = NULL;
	ins->next = NULL;
	if (c->inflight)
		inflight_last(c)->next = ins;
	else
		c->inflight = ins;
	return LWC_OK;
}

int lwc_insert_pending(const lwc_conn *c)
{
	return c ? (int)inflight_count(c) : 0;
}

lwc_result *lwc_insert_wait(lwc_conn *c)
{
	lwc_insert *ins, *rest;
	lwc_result *r;

	if (c == NULL || c->inflight == NULL)
		return NULL;
	ins = c->inflight;
	c->inflight = rest = ins->next;
	ins->next = NULL;
	if (ins->rerun || ins->answer) {
		/* its answer was read with the one before it (below) */
		if (ins->rerun) {
			c->inflight = NULL;
			r = lwc_exec(c, ins->sql);
			c->inflight = rest;
		} else {
			r = ins->answer;
			ins->answer = NULL;
		}
		lwc_insert_free(ins);
		return r;
	}
	r = insert_result(c, ins->seq, &ins->sc);
	if (indexes_changed(r)) {
		/* nothing changed at the proxy: as lwc_exec, read the catalog
		 * again and run the statement once more.  The one sent after it
		 * was not run (it follows this one): its answer is read now, and
		 * it runs again in its turn if this one succeeds */
		lwc_result_free(r);
		c->catalog_loaded = 0;
		if (rest != NULL)
			rest->answer = insert_result(c, rest->seq, &rest->sc);
		c->inflight = NULL;
		r = lwc_exec(c, ins->sql);
		c->inflight = rest;
		if (rest != NULL && r->status != LWC_RESULT_ERROR &&
		    rest->answer->status == LWC_RESULT_ERROR &&
		    rest->answer->errcode == LWC_ERR_ABORTED)
			rest->rerun = 1;
	} else if (r->status == LWC_RESULT_ERROR &&
		   (r->errcode == LWC_ERR_NO_TABLE || r->errcode == LWC_ERR_SCHEMA)) {
		c->catalog_loaded = 0;
	}
	lwc_insert_free(ins);
	return r;
}
