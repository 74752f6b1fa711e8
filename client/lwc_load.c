/*
 * lwc_load.c - liblwc: INSERTs prepared ahead of their round trip, for bulk
 * loading (lwc.h, "Bulk loading"): one statement in flight while the next
 * one's client-side work is done.
 */
#include <stdlib.h>
#include <string.h>

#include "lwc_int.h"

struct lwc_insert {
	uint8_t *frame;               /* the request, packed (chan_frame_new) */
	size_t len;
	uint64_t seq;
	uint64_t rows;
	struct sql_schema sc;         /* the table's, for the proxy's errors  */
	char *sql;                    /* for lwc_exec's one retry             */
};

void lwc_insert_free(lwc_insert *ins)
{
	if (ins == NULL)
		return;
	chan_frame_free(ins->frame, ins->len);   /* not sent: not sealed */
	schema_free(&ins->sc);
	free(ins->sql);
	free(ins);
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
	*err = insert_prepare(c, st, t, ins->seq, &ins->frame, &ins->len, &ins->rows);
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
	if (c->inflight || c->open) {
		lwc_insert_free(ins);
		return LWC_ERR_BUSY;
	}
	if ((rc = conn_send_frame(c, ins->frame, ins->len)) != LWC_OK) {
		lwc_insert_free(ins);
		return rc;
	}
	free(ins->frame);                 /* sealed in place: ciphertext now */
	ins->frame = NULL;
	c->inflight = ins;
	return LWC_OK;
}

lwc_result *lwc_insert_wait(lwc_conn *c)
{
	lwc_insert *ins;
	lwc_result *r;

	if (c == NULL || c->inflight == NULL)
		return NULL;
	ins = c->inflight;
	c->inflight = NULL;
	r = insert_result(c, ins->seq, &ins->sc);
	if (indexes_changed(r)) {
		/* nothing changed at the proxy: as lwc_exec, read the catalog
		 * again and run the statement once more */
		lwc_result_free(r);
		c->catalog_loaded = 0;
		r = lwc_exec(c, ins->sql);
	} else if (r->status == LWC_RESULT_ERROR &&
		   (r->errcode == LWC_ERR_NO_TABLE || r->errcode == LWC_ERR_SCHEMA)) {
		c->catalog_loaded = 0;
	}
	lwc_insert_free(ins);
	return r;
}
