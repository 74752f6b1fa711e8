/*
 * lwc_modify.c - liblwc: UPDATE and DELETE (interactive: the proxy sends
 * candidates, the library decides).
 */
#include <string.h>

#include <sodium.h>

#include "sql_int.h"
#include "lwc_int.h"
#include "tokmemo.h"
#include "wire.h"

/* The new values of a row: each SET value computed on the old row, then
 * converted to its column's type (PostgreSQL's assignment rules). */
static int apply_sets(const struct ltable *t, const struct sql_stmt *st,
		      const struct sql_value *old, struct sql_value *nv, char *text, size_t textlen,
		      char *err, size_t errlen)
{
	size_t tl = 0;
	/* text that functions make (lower, ||, CAST) lives in an arena for this
	 * row and is copied into text */
	struct arena *scratch = sql_arena_new(), *outer = sql_eval_get_scratch();
	int rc = LWC_OK;

	if (scratch == NULL)
		return LWC_ERR_NOMEM;
	sql_eval_set_scratch(scratch);
	memcpy(nv, old, t->sc.ncols * sizeof(*nv));
	for (size_t i = 0; i < st->nsets && rc == LWC_OK; i++) {
		const struct sql_set *s = &st->sets[i];
		struct sql_value v, out;

		if ((rc = sql_eval_value(s->value, old, &v, err, errlen)) != LWC_OK)
			break;
		if (textlen - tl < SQL_NUM_TEXT_MAX + 1) {
			rc = LWC_ERR_NOMEM;
			break;
		}
		rc = sql_coerce(&t->sc.cols[s->col_index], &v, &out, text + tl, textlen - tl,
				err, errlen);
		if (rc != LWC_OK)
			break;
		if (out.type == SQL_TEXT && out.s != text + tl) {
			if (textlen - tl < out.len + 1) {
				lwc_errf(err, errlen, "row too large");
				rc = LWC_ERR_ARG;
				break;
			}
			memmove(text + tl, out.s, out.len);
			text[tl + out.len] = '\0';
			out.s = text + tl;
		}
		if (out.type == SQL_TEXT)
			tl += out.len + 1;
		nv[s->col_index] = out;
	}
	sql_eval_set_scratch(outer);
	sql_arena_destroy(scratch);
	return rc;
}

/* The decisions about candidates [lo, hi) of one chunk: each row's own
 * slices of dv, rows, recs, toks and tokb, so two parts can run side by
 * side. */
struct decide_part {
	lwc_conn *c;
	const struct ltable *t;
	const struct sql_stmt *st;
	const cry_tokstate *ts;
	int update;
	const ProtobufCBinaryData *cand;
	const uint8_t *nonces;        /* one per candidate, drawn at once     */
	uint64_t keep;                /* columns < 64 not SET: tokens as before */
	const uint8_t *keep_tok;      /* [ntok]: token j is kept (range ones)  */
	struct tokmemo *memo;         /* the part's tokens made (tokmemo.h)    */
	Lwc__Decision *dv, **dp;
	Lwc__Row *rows;
	ProtobufCBinaryData *toks;
	uint8_t *recs, *tokb;
	size_t lo, hi;
	int rc;                       /* of the first row that failed         */
	char err[512];
};

/* The new row of candidate i (its old values old): its record and tokens
 * into p's slices, and the decision that carries them. */
static int update_row(struct decide_part *p, size_t i, const struct sql_value *old)
{
	const struct ltable *t = p->t;
	size_t nt = t->ntok, S = p->c->S;
	Lwc__Row *row = &p->rows[i];
	struct sql_value nv[64];
	char text[8192];
	int rc;

	lwc__row__init(row);
	if ((rc = apply_sets(t, p->st, old, nv, text, sizeof(text), p->err, sizeof(p->err))) !=
	    LWC_OK)
		return rc;
	if ((rc = record_seal(p->c, &t->sc, nv, p->nonces + i * CRY_NONCE_BYTES, p->recs + i * S,
			      p->err, sizeof(p->err))) != LWC_OK)
		return rc;
	if (row_tokens_memo(t, p->ts, nv, p->keep, p->tokb + i * nt * CRY_TOKEN_BYTES, p->memo) !=
	    LWC_OK) {
		snprintf(p->err, sizeof(p->err), "keyword token derivation failed");
		return LWC_ERR_CRYPTO;
	}
	row->record.data = p->recs + i * S;
	row->record.len = S;
	row->tokens = p->toks + i * nt;
	row->n_tokens = nt;
	for (size_t j = 0; j < nt; j++) {
		/* a column the statement does not SET keeps its tokens: sent
		 * empty, the proxy takes the row's own */
		int kept = j < t->sc.ncols ? j < 64 && (p->keep >> j & 1) : p->keep_tok[j];

		p->toks[i * nt + j].data = kept ? NULL : p->tokb + (i * nt + j) * CRY_TOKEN_BYTES;
		p->toks[i * nt + j].len = kept ? 0 : CRY_TOKEN_BYTES;
	}
	p->dv[i].row = row;
	return LWC_OK;
}

/* Candidate i: open it, test the WHERE, and for an UPDATE make its new row. */
static int decide_row(struct decide_part *p, size_t i)
{
	const ProtobufCBinaryData *rec = &p->cand[i];
	struct lrow old;
	enum sql_tv tv = SQL_TRUE;
	int rc = LWC_OK;

	lwc__decision__init(&p->dv[i]);
	p->dp[i] = &p->dv[i];
	if (record_open(p->c, &p->t->sc, rec->data, rec->len, &old) != LWC_OK) {
		snprintf(p->err, sizeof(p->err), "a record of table %s does not decrypt under "
			 "this key", p->t->sc.name);
		return LWC_ERR_CRYPTO;
	}
	if (p->st->where)
		rc = sql_eval_checked(p->st->where, old.v, &tv, p->err, sizeof(p->err));
	if (rc == LWC_OK && tv == SQL_TRUE) {
		p->dv[i].change = 1;
		if (p->update)
			rc = update_row(p, i, old.v);
	}
	row_free(&old);
	return rc;
}

static void *decide_rows(void *arg)
{
	struct decide_part *p = arg;

	/* SET values repeat (SET c = 5, c = c + 1 over a range): a memo of
	 * the part's new tokens (none when out of memory: every token made) */
	p->memo = p->update ? tokmemo_new(p->t->ntok, p->hi - p->lo) : NULL;
	for (size_t i = p->lo; i < p->hi; i++)
		if ((p->rc = decide_row(p, i)) != LWC_OK)
			break;
	tokmemo_free(p->memo);
	p->memo = NULL;
	return NULL;
}

/* Candidates from which a chunk is decided on two threads.  The proxy sends
 * chunks of up to 512 (CHUNK_ROWS); an UPDATE's row costs 10-15 us (open,
 * SET, seal, tokens), so a thread's 30-50 us is about 1 % of 256 rows. */
#define DECIDE_SPLIT_ROWS  256

/* decide_rows over candidates [0, n), in halves on two threads when worth
 * it; the error of the first candidate that failed, as one thread would. */
static int decide_all(struct decide_part *a, size_t n, char *err, size_t errlen)
{
	struct decide_part b;

	a->lo = 0;
	a->hi = n;
	a->rc = LWC_OK;
	if (split_worth(n, DECIDE_SPLIT_ROWS)) {
		b = *a;
		a->hi = b.lo = n / 2;
		run_pair(decide_rows, a, &b);
		if (a->rc == LWC_OK && b.rc != LWC_OK) {
			a->rc = b.rc;
			memcpy(a->err, b.err, sizeof(a->err));
		}
	} else {
		decide_rows(a);
	}
	if (a->rc != LWC_OK)
		snprintf(err, errlen, "%s", a->err);
	return a->rc;
}

/* UPDATE, or DELETE with residual predicates: answer Candidates chunks.
 * keep, keep_tok: the tokens left empty (decide_part). */
static lwc_result *answer_candidates(lwc_conn *c, struct ltable *t, struct sql_stmt *st,
				     Lwc__ProxyRequest *req, int update, const char *verb,
				     uint64_t keep, const uint8_t *keep_tok)
{
	Lwc__ProxyResponse *resp = NULL;
	lwc_result *r = NULL;
	char err[512] = "";
	uint64_t seq;
	int rc, failing = 0;

	req->seq = seq = ++c->seq;
	if ((rc = conn_send(c, req)) != LWC_OK)
		return result_error(NULL, rc, -1, "connection to the proxy lost: %s", conn_lost_msg(rc));
	for (;;) {
		Lwc__ProxyRequest dr = LWC__PROXY_REQUEST__INIT;
		Lwc__Decisions ds = LWC__DECISIONS__INIT;
		Lwc__Decision *dv = NULL, **dp = NULL;
		Lwc__Row *rows = NULL;
		ProtobufCBinaryData *toks = NULL;
		uint8_t *recs = NULL, *tokb = NULL, *nonces = NULL;
		cry_tokstate *ts = NULL;
		size_t n;

		if ((rc = conn_recv(c, seq, &resp)) != LWC_OK)
			return result_error(r, rc, -1, "connection to the proxy lost: %s",
					    conn_lost_msg(rc));
		if (resp->result_case == LWC__PROXY_RESPONSE__RESULT_DONE) {
			char tag[64];
			uint64_t cnt = resp->done->count;
			lwc__proxy_response__free_unpacked(resp, NULL);
			if (r)
				return r;
			snprintf(tag, sizeof(tag), "%s %llu", verb, (unsigned long long)cnt);
			return result_command(tag, cnt);
		}
		if (resp->result_case == LWC__PROXY_RESPONSE__RESULT_ERROR) {
			if (r == NULL) {
				r = conn_error_result(c, NULL, resp->error);
				if (r->errcode == LWC_ERR_UNIQUE)
					unique_error(r, &t->sc, 0);
			}
			lwc__proxy_response__free_unpacked(resp, NULL);
			return r;
		}
		if (resp->result_case != LWC__PROXY_RESPONSE__RESULT_CANDIDATES) {
			lwc__proxy_response__free_unpacked(resp, NULL);
			conn_break(c);
			return result_error(r, LWC_ERR_PROTO, -1, "unexpected answer from the proxy");
		}
		n = resp->candidates->n_records;
		if (c->cancel && *c->cancel && !failing) {
			/* abort: the proxy writes none of the statement */
			failing = 1;
			snprintf(err, sizeof(err), "canceling statement due to user request");
		}
		dv = calloc(n + 1, sizeof(*dv));
		dp = calloc(n + 1, sizeof(*dp));
		rows = calloc(n + 1, sizeof(*rows));
		toks = calloc(n * t->ntok + 1, sizeof(*toks));
		recs = malloc(n * c->S + 1);
		tokb = malloc(n * t->ntok * CRY_TOKEN_BYTES + 1);
		nonces = malloc(n * CRY_NONCE_BYTES + 1);
		if (update && n > 0)
			ts = row_token_states(c->k, t);
		if (!dv || !dp || !rows || !toks || !recs || !tokb || !nonces ||
		    (update && n > 0 && !ts)) {
			failing = 1;
			snprintf(err, sizeof(err), "out of memory");
		}
		if (update && !failing)
			randombytes_buf(nonces, n * CRY_NONCE_BYTES);  /* one call, not one a row */
		if (!failing) {
			struct decide_part a = {
				.c = c, .t = t, .st = st, .ts = ts, .update = update,
				.keep = keep, .keep_tok = keep_tok,
				.cand = resp->candidates->records, .nonces = nonces, .dv = dv,
				.dp = dp, .rows = rows, .toks = toks, .recs = recs, .tokb = tokb,
			};

			if ((rc = decide_all(&a, n, err, sizeof(err))) != LWC_OK)
				failing = 1;
		}
		lwc__proxy_response__free_unpacked(resp, NULL);
		resp = NULL;
		dr.seq = seq;
		dr.op_case = LWC__PROXY_REQUEST__OP_DECISIONS;
		dr.decisions = &ds;
		if (failing) {
			ds.abort = 1;
			ds.reason = err;
			if (r == NULL)
				r = result_error(NULL, LWC_ERR_ABORTED, -1, "%s", err);
		} else {
			ds.d = dp;
			ds.n_d = n;
		}
		rc = conn_send(c, &dr);
		free(dv);
		free(dp);
		free(rows);
		free(toks);
		if (recs)
			sodium_memzero(recs, n * c->S);
		free(recs);
		free(tokb);
		free(nonces);
		row_token_states_free(ts, t);
		if (rc != LWC_OK)
			return result_error(r, rc, -1, "connection to the proxy lost: %s",
					    conn_lost_msg(rc));
	}
}

static lwc_result *interactive(lwc_conn *c, struct ltable *t, struct sql_stmt *st,
			       Lwc__ProxyRequest *req, int update, const char *verb)
{
	uint64_t keep = 0;
	uint8_t *keep_tok = calloc(t->ntok + 1, 1);
	lwc_result *r;

	if (keep_tok == NULL)
		return result_error(NULL, LWC_ERR_NOMEM, -1, "out of memory");
	if (update && (c->features & WIRE_FEATURE_TOKENS_AS_BEFORE)) {
		/* the tokens of the columns the statement does not SET stay as
		 * the rows have them: sent empty, the proxy fills them in */
		size_t j = t->sc.ncols;

		for (size_t col = 0; col < t->sc.ncols && col < 64; col++)
			keep |= 1ull << col;
		for (size_t i = 0; i < st->nsets; i++)
			if (st->sets[i].col_index >= 0 && st->sets[i].col_index < 64)
				keep &= ~(1ull << st->sets[i].col_index);
		for (size_t col = 0; col < t->sc.ncols && col < 64; col++)
			for (unsigned l = 0; l < t->rtok[col]; l++)
				keep_tok[j++] = keep >> col & 1;
	}
	r = answer_candidates(c, t, st, req, update, verb, keep, keep_tok);
	free(keep_tok);
	return r;
}

lwc_result *exec_update_delete(lwc_conn *c, struct sql_stmt *st)
{
	Lwc__ProxyRequest req = LWC__PROXY_REQUEST__INIT;
	Lwc__Update up = LWC__UPDATE__INIT;
	Lwc__Delete del = LWC__DELETE__INIT;
	struct ltable *t = catalog_find(c, st->table, 1);
	struct sql_schema sc;
	char err[512];
	Lwc__Pred *pred = NULL;
	lwc_result *r;
	int exact, errpos = -1, code = LWC_ERR_SCHEMA, rc;

	if (t == NULL)
		return error_no_table(st->table, st->table_pos);
	if (schema_copy(&sc, &t->sc) != LWC_OK)
		return &nomem_result;
	rc = sql_bind(st, &sc, err, sizeof(err), &errpos);
	schema_free(&sc);
	if (rc != LWC_OK)
		return result_error(NULL, LWC_ERR_SCHEMA, errpos, "%s", err);
	if (st->kind == SQL_UPDATE && t->sc.ncols > 64)
		return result_error(NULL, LWC_ERR_SCHEMA, -1, "too many columns");
	/* SET literals are converted once, before any row: a bad one fails the
	 * statement even when no row matches (as in PostgreSQL) */
	for (size_t i = 0; st->kind == SQL_UPDATE && i < st->nsets; i++) {
		const struct sql_set *s = &st->sets[i];
		struct sql_value out;
		char buf[SQL_NUM_TEXT_MAX + 8];

		if (s->value->kind != SQL_E_LIT)
			continue;
		if ((rc = sql_coerce(&t->sc.cols[s->col_index], &s->value->lit, &out, buf,
				     sizeof(buf), err, sizeof(err))) != LWC_OK)
			return result_error(NULL, rc, s->value->pos, "%s", err);
	}
	if ((rc = where_translate(c, &t->sc, st->where, &pred, &exact, err, sizeof(err), &errpos,
			    &code)) != LWC_OK)
		return result_error(NULL, code, errpos, "%s", err);
	if (st->kind == SQL_UPDATE) {
		up.table.data = t->handle;
		up.table.len = sizeof(t->handle);
		up.where = pred;
		up.candidates = !exact;
		req.op_case = LWC__PROXY_REQUEST__OP_UPDATE;
		req.update = &up;
		r = interactive(c, t, st, &req, 1, "UPDATE");
	} else {
		del.table.data = t->handle;
		del.table.len = sizeof(t->handle);
		del.where = pred;
		del.candidates = !exact;
		req.op_case = LWC__PROXY_REQUEST__OP_DELETE;
		req.delete_ = &del;
		if (exact) {
			uint64_t cnt = 0;
			char tag[64];
			r = conn_call(c, &req, &cnt);
			if (r == NULL) {
				snprintf(tag, sizeof(tag), "DELETE %llu", (unsigned long long)cnt);
				r = result_command(tag, cnt);
			}
		} else {
			r = interactive(c, t, st, &req, 0, "DELETE");
		}
	}
	pred_free(pred);
	return r;
}
