/*
 * pred.c - see pred.h.
 */
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "pbarena.h"
#include "pred.h"

void locset_free(struct locset *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int locset_grow(struct locset *s, size_t need)
{
	size_t cap = s->cap ? s->cap : 64;
	uint64_t *v;

	if (need <= s->cap)
		return LWC_OK;
	while (cap < need)
		cap *= 2;
	if ((v = realloc(s->v, cap * sizeof(*v))) == NULL)
		return LWC_ERR_NOMEM;
	s->v = v;
	s->cap = cap;
	return LWC_OK;
}

int locset_push(struct locset *s, uint64_t loc)
{
	if (s->n == s->cap && locset_grow(s, s->n + 1) != LWC_OK)
		return LWC_ERR_NOMEM;
	s->v[s->n++] = loc;
	return LWC_OK;
}

int locset_union(struct locset *out, const struct locset *a, const struct locset *b)
{
	size_t i = 0, j = 0;

	out->n = 0;
	if (locset_grow(out, a->n + b->n) != LWC_OK)
		return LWC_ERR_NOMEM;
	while (i < a->n && j < b->n) {
		if (a->v[i] < b->v[j])
			out->v[out->n++] = a->v[i++];
		else if (a->v[i] > b->v[j])
			out->v[out->n++] = b->v[j++];
		else {
			out->v[out->n++] = a->v[i++];
			j++;
		}
	}
	while (i < a->n)
		out->v[out->n++] = a->v[i++];
	while (j < b->n)
		out->v[out->n++] = b->v[j++];
	return LWC_OK;
}

int locset_inter(struct locset *out, const struct locset *a, const struct locset *b)
{
	size_t i = 0, j = 0;

	out->n = 0;
	if (locset_grow(out, a->n < b->n ? a->n : b->n) != LWC_OK)
		return LWC_ERR_NOMEM;
	while (i < a->n && j < b->n) {
		if (a->v[i] < b->v[j])
			i++;
		else if (a->v[i] > b->v[j])
			j++;
		else {
			out->v[out->n++] = a->v[i++];
			j++;
		}
	}
	return LWC_OK;
}

int locset_minus(struct locset *out, const struct locset *a, const struct locset *b)
{
	size_t i = 0, j = 0;

	out->n = 0;
	if (locset_grow(out, a->n) != LWC_OK)
		return LWC_ERR_NOMEM;
	while (i < a->n) {
		while (j < b->n && b->v[j] < a->v[i])
			j++;
		if (j < b->n && b->v[j] == a->v[i])
			i++;
		else
			out->v[out->n++] = a->v[i++];
	}
	return LWC_OK;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void locset_normalize(struct locset *s)
{
	size_t w = 0;

	if (s->n < 2)
		return;
	qsort(s->v, s->n, sizeof(uint64_t), cmp_u64);
	for (size_t r = 1; r < s->n; r++)
		if (s->v[r] != s->v[w])
			s->v[++w] = s->v[r];
	s->n = w + 1;
}

int locset_contains(const struct locset *s, uint64_t loc)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid] < loc)
			lo = mid + 1;
		else if (s->v[mid] > loc)
			hi = mid;
		else
			return 1;
	}
	return 0;
}

static int validate(const Lwc__Pred *p, uint32_t ncols, int depth, size_t *nodes,
		    char *err, size_t errlen)
{
	if (depth > PRED_MAX_DEPTH) {
		lwc_errf(err, errlen, "predicate nested deeper than %d", PRED_MAX_DEPTH);
		return LWC_ERR_PROTO;
	}
	if (++*nodes > PRED_MAX_NODES) {
		lwc_errf(err, errlen, "predicate larger than %d nodes", PRED_MAX_NODES);
		return LWC_ERR_PROTO;
	}
	switch (p->op) {
	case LWC__PRED__OP__ALL:
	case LWC__PRED__OP__NONE:
		if (p->n_args || p->n_tokens)
			goto bad;
		return LWC_OK;
	case LWC__PRED__OP__EQ:
	case LWC__PRED__OP__IN:
		if (p->n_args || p->n_tokens == 0 ||
		    (p->op == LWC__PRED__OP__EQ && p->n_tokens != 1))
			goto bad;
		if (p->col >= ncols) {
			lwc_errf(err, errlen, "predicate on column %u of a table with %u columns",
				 p->col, ncols);
			return LWC_ERR_SCHEMA;
		}
		for (size_t i = 0; i < p->n_tokens; i++)
			if (p->tokens[i].len != CRY_TOKEN_BYTES) {
				lwc_errf(err, errlen, "predicate token of %zu bytes (expected %u)",
					 p->tokens[i].len, CRY_TOKEN_BYTES);
				return LWC_ERR_PROTO;
			}
		/* tokens count as nodes: check here too, or a last IN escapes the cap */
		*nodes += p->n_tokens;
		if (*nodes > PRED_MAX_NODES) {
			lwc_errf(err, errlen, "predicate larger than %d nodes", PRED_MAX_NODES);
			return LWC_ERR_PROTO;
		}
		return LWC_OK;
	case LWC__PRED__OP__AND:
	case LWC__PRED__OP__OR:
		if (p->n_args < 2 || p->n_tokens)
			goto bad;
		break;
	case LWC__PRED__OP__NOT:
		if (p->n_args != 1 || p->n_tokens)
			goto bad;
		break;
	default:
		lwc_errf(err, errlen, "unknown predicate operator %d", (int)p->op);
		return LWC_ERR_PROTO;
	}
	for (size_t i = 0; i < p->n_args; i++) {
		int rc = validate(p->args[i], ncols, depth + 1, nodes, err, errlen);
		if (rc != LWC_OK)
			return rc;
	}
	return LWC_OK;
bad:
	lwc_errf(err, errlen, "malformed predicate (operator %d with %zu arguments, %zu tokens)",
		 (int)p->op, p->n_args, p->n_tokens);
	return LWC_ERR_PROTO;
}

int pred_validate(const Lwc__Pred *p, uint32_t ncols, char *err, size_t errlen)
{
	size_t nodes = 0;

	if (p == NULL)
		return LWC_OK;
	return validate(p, ncols, 0, &nodes, err, errlen);
}

/* A base-128 varint at buf[*pos] (at most 10 bytes, before end). */
static int wire_varint(const uint8_t *buf, size_t end, size_t *pos, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (*pos >= end)
			return -1;
		b = buf[(*pos)++];
		*v |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0)
			return 0;
	}
	return -1;
}

/* One field of the protobuf wire format in buf[*pos..end): its number and
 * wire type; a length-delimited field's contents in [*sub, *sub_end).
 * Returns 1, 0 at the end, -1 when the bytes do not parse. */
static int wire_field(const uint8_t *buf, size_t end, size_t *pos, uint64_t *field,
		      unsigned *wt, size_t *sub, size_t *sub_end)
{
	uint64_t tag, v;

	if (*pos >= end)
		return 0;
	if (wire_varint(buf, end, pos, &tag) != 0)
		return -1;
	*field = tag >> 3;
	*wt = (unsigned)(tag & 7);
	switch (*wt) {
	case 0:                                 /* varint */
		return wire_varint(buf, end, pos, &v) == 0 ? 1 : -1;
	case 1:                                 /* 64-bit */
		if (end - *pos < 8)
			return -1;
		*pos += 8;
		return 1;
	case 2:                                 /* length-delimited */
		if (wire_varint(buf, end, pos, &v) != 0 || v > end - *pos)
			return -1;
		*sub = *pos;
		*sub_end = *pos + (size_t)v;
		*pos = *sub_end;
		return 1;
	case 5:                                 /* 32-bit */
		if (end - *pos < 4)
			return -1;
		*pos += 4;
		return 1;
	default:                                /* groups: protobuf-c refuses them */
		return -1;
	}
}

/* A Pred in buf[start..end): its args (field 4) nest at most
 * PRED_WIRE_MAX_DEPTH deep.  Iterative, so the check itself is bounded. */
static int wire_pred(const uint8_t *buf, size_t start, size_t end)
{
	size_t pos[PRED_WIRE_MAX_DEPTH + 1], lim[PRED_WIRE_MAX_DEPTH + 1];
	int d = 0;

	pos[0] = start;
	lim[0] = end;
	while (d >= 0) {
		uint64_t field;
		unsigned wt;
		size_t sub = 0, sub_end = 0;
		int r = wire_field(buf, lim[d], &pos[d], &field, &wt, &sub, &sub_end);

		if (r < 0)
			return LWC_ERR_PROTO;
		if (r == 0) {
			d--;
			continue;
		}
		if (field == 4 && wt == 2) {
			if (d == PRED_WIRE_MAX_DEPTH)
				return LWC_ERR_PROTO;
			d++;
			pos[d] = sub;
			lim[d] = sub_end;
		}
	}
	return LWC_OK;
}

int pred_wire_check(const uint8_t *buf, size_t len)
{
	size_t pos = 0, sub = 0, sub_end = 0;
	uint64_t field;
	unsigned wt;
	int r;

	/* ProxyRequest: select, update, delete (6, 7, 8) hold a where (2) */
	while ((r = wire_field(buf, len, &pos, &field, &wt, &sub, &sub_end)) > 0) {
		size_t p2 = sub, s2 = 0, e2 = 0;
		uint64_t f2;
		unsigned wt2;
		int r2;

		if (wt != 2 || field < 6 || field > 8)
			continue;
		while ((r2 = wire_field(buf, sub_end, &p2, &f2, &wt2, &s2, &e2)) > 0)
			if (f2 == 2 && wt2 == 2 && wire_pred(buf, s2, e2) != LWC_OK)
				return LWC_ERR_PROTO;
		if (r2 < 0)
			return LWC_ERR_PROTO;
	}
	return r < 0 ? LWC_ERR_PROTO : LWC_OK;
}

int px_request_tokens(Lwc__ProxyRequest *req)
{
	const Lwc__Insert *ins;

	if (req->op_case != LWC__PROXY_REQUEST__OP_INSERT || (ins = req->insert) == NULL)
		return LWC_OK;
	for (size_t i = 0; i < ins->n_rows; i++) {
		Lwc__Row *r = ins->rows[i];
		size_t n = r->token_block.len / CRY_TOKEN_BYTES;

		if (r->token_block.len == 0)
			continue;
		if (r->token_block.len % CRY_TOKEN_BYTES != 0 || r->n_tokens != 0 ||
		    n > PX_MAX_TOKENS)
			return LWC_ERR_PROTO;
		r->tokens = pb_arena_alloc(&req->base, n * sizeof(*r->tokens));
		if (r->tokens == NULL)
			return LWC_ERR_NOMEM;
		for (size_t j = 0; j < n; j++) {
			r->tokens[j].len = CRY_TOKEN_BYTES;
			r->tokens[j].data = r->token_block.data + j * CRY_TOKEN_BYTES;
		}
		r->n_tokens = n;
	}
	return LWC_OK;
}

int pred_lookup(MDB_txn *txn, MDB_dbi dbi, const void *key, size_t klen, struct locset *out)
{
	MDB_cursor *cur;
	MDB_val k = { klen, (void *)(uintptr_t)key }, d;
	int rc;

	if ((rc = mdb_cursor_open(txn, dbi, &cur)) != 0)
		return LWC_ERR_STORE;
	rc = mdb_cursor_get(cur, &k, &d, MDB_SET);
	if (rc == MDB_NOTFOUND) {
		mdb_cursor_close(cur);
		return LWC_OK;
	}
	if (rc == 0)
		rc = mdb_cursor_get(cur, &k, &d, MDB_GET_MULTIPLE);
	while (rc == 0) {
		const uint8_t *p = d.mv_data;
		size_t cnt = d.mv_size / 8, rows = 0;

		for (size_t i = 0; i < cnt; i++)
			rows += idx_span_rows(p + 8 * i);
		if (locset_grow(out, out->n + rows) != LWC_OK) {
			mdb_cursor_close(cur);
			return LWC_ERR_NOMEM;
		}
		for (size_t i = 0; i < cnt; i++) {
			uint64_t first = idx_span_first(p + 8 * i);
			uint32_t n = idx_span_rows(p + 8 * i);

			for (uint32_t j = 0; j < n; j++)
				out->v[out->n++] = first + j;
		}
		rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT_MULTIPLE);
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? LWC_OK : LWC_ERR_STORE;
}

static int all_rows(MDB_txn *txn, const struct px_table *t, struct locset *out)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	out->n = 0;
	if ((rc = mdb_cursor_open(txn, t->rows, &cur)) != 0)
		return LWC_ERR_STORE;
	if (locset_grow(out, t->nrows + 1) != LWC_OK) {
		mdb_cursor_close(cur);
		return LWC_ERR_NOMEM;
	}
	while ((rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) == 0) {
		if (k.mv_size != 8) {
			rc = MDB_CORRUPTED;
			break;
		}
		if (locset_push(out, cry_get_be64(k.mv_data)) != LWC_OK) {
			mdb_cursor_close(cur);
			return LWC_ERR_NOMEM;
		}
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? LWC_OK : LWC_ERR_STORE;
}

/* The table's rows, read once per evaluation however many NOTs ask. */
struct allcache {
	struct locset rows;
	int have;
};

static int all_cached(MDB_txn *txn, const struct px_table *t, struct allcache *ac,
		      const struct locset **out)
{
	if (!ac->have) {
		int rc = all_rows(txn, t, &ac->rows);
		if (rc != LWC_OK)
			return rc;
		ac->have = 1;
	}
	*out = &ac->rows;
	return LWC_OK;
}

static int eval(MDB_txn *txn, const struct px_table *t, const Lwc__Pred *p,
		struct locset *out, struct allcache *ac)
{
	const struct locset *all;
	struct locset a = { 0 }, b = { 0 };
	int rc = LWC_OK;

	out->n = 0;
	switch (p->op) {
	case LWC__PRED__OP__ALL:
		if ((rc = all_cached(txn, t, ac, &all)) != LWC_OK)
			return rc;
		out->n = 0;
		if (all->n && locset_union(out, all, &b) != LWC_OK)   /* b is empty: a copy */
			return LWC_ERR_NOMEM;
		return LWC_OK;
	case LWC__PRED__OP__NONE:
		return LWC_OK;
	case LWC__PRED__OP__EQ:
		return idx_lookup(txn, t, p->col, p->tokens[0].data, out);
	case LWC__PRED__OP__IN:
		for (size_t i = 0; i < p->n_tokens && rc == LWC_OK; i++)
			rc = idx_lookup(txn, t, p->col, p->tokens[i].data, out);
		if (rc == LWC_OK)
			locset_normalize(out);
		return rc;
	case LWC__PRED__OP__AND:
	case LWC__PRED__OP__OR:
		if ((rc = eval(txn, t, p->args[0], out, ac)) != LWC_OK)
			return rc;
		for (size_t i = 1; i < p->n_args; i++) {
			struct locset tmp;

			if (p->op == LWC__PRED__OP__AND && out->n == 0)
				break;
			if ((rc = eval(txn, t, p->args[i], &a, ac)) != LWC_OK)
				break;
			rc = p->op == LWC__PRED__OP__AND ? locset_inter(&b, out, &a)
							 : locset_union(&b, out, &a);
			if (rc != LWC_OK)
				break;
			tmp = *out;
			*out = b;
			b = tmp;
		}
		break;
	case LWC__PRED__OP__NOT:
		if ((rc = eval(txn, t, p->args[0], &a, ac)) != LWC_OK)
			break;
		if ((rc = all_cached(txn, t, ac, &all)) != LWC_OK)
			break;
		rc = locset_minus(out, all, &a);
		break;
	default:
		rc = LWC_ERR_PROTO;
	}
	locset_free(&a);
	locset_free(&b);
	return rc;
}

int pred_eval(MDB_txn *txn, const struct px_table *t, const Lwc__Pred *p,
	      struct locset *out, char *err, size_t errlen)
{
	int rc;

	struct allcache ac = { { 0 }, 0 };

	if (p == NULL)
		rc = all_rows(txn, t, out);
	else
		rc = eval(txn, t, p, out, &ac);
	locset_free(&ac.rows);
	if (rc != LWC_OK)
		lwc_errf(err, errlen, "index lookup failed: %s", lwc_strerror(rc));
	return rc;
}
