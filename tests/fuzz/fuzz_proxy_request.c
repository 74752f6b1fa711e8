/*
 * fuzz_proxy_request.c - libFuzzer target: a user's request as the proxy
 * decodes and checks it before a statement touches the indexes.
 *
 * Each input is one decrypted ProxyRequest body, exactly what an
 * authenticated (but possibly malicious or buggy) user can make the proxy
 * decode.  As proxy/server.c does, pred_wire_check() runs first and the
 * body is decoded only when it passes (inputs under 64 KiB are decoded
 * either way, to compare the two).  Then every check a statement passes
 * runs on the decoded fields: pred_validate() on the WHERE of a SELECT,
 * UPDATE or DELETE against a table of 1 to 64 columns (1 + seq % 64: the
 * first byte is nearly always the first tag, the seq is the fuzzer's to
 * choose), the row checks of proxy/engine.c check_row() on INSERT rows and
 * UPDATE decisions (reimplemented here: it is static), and the bounds of
 * CREATE TABLE / CREATE INDEX.
 *
 * Oracles beyond the sanitizers:
 *   - what pred_wire_check() passes decodes to predicates no deeper than
 *     PRED_WIRE_MAX_DEPTH; a decodable request it refuses nests deeper, or
 *     repeats an operation or a WHERE (protobuf-c keeps the last of a
 *     oneof, the check looks at every one); on the canonical re-encoding
 *     it agrees with the decoded depth exactly
 *   - decode, encode, decode, encode gives the same bytes
 *   - pred_validate() agrees with a reference validator written from the
 *     rules in proxy/pred.h (same verdict, same code) and always says why
 *   - a predicate that validates evaluates (pred_eval) over a fixed LMDB
 *     table of 64 columns to exactly the rows a brute force finds; the
 *     table's tokens are 16 equal bytes 0..3, easy for the fuzzer to hit
 *   - rows that pass the row checks have every token readable (ASan)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <lmdb.h>
#include <sodium.h>

#include "cry.h"
#include "lwc.pb-c.h"
#include "pbarena.h"
#include "../../proxy/pred.h"
#include "fuzz_pb.h"
#include "../testdir.h"

#define TNROWS    48u
#define TNCOLS    PX_MAX_COLS
#define TNVALS    4u
#define REC_BYTES (16u + CRY_RECORD_OVERHEAD)  /* S of the smallest geometry */
#define CMP_MAX   (64u * 1024u)                 /* decode refused inputs up to */

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz_proxy_request: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                  \
			abort();                                             \
		}                                                            \
	} while (0)

static char dir[256];
static MDB_env *env;
static struct px_table tab;
static uint64_t tlocs[TNROWS];                  /* sorted                  */
static uint8_t tval[TNROWS][TNCOLS];            /* token byte of each cell */

static void cleanup(void)
{
	char p[512];

	if (env)
		mdb_env_close(env);
	env = NULL;
	snprintf(p, sizeof(p), "%s/data.mdb", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lock.mdb", dir);
	unlink(p);
	rmdir(dir);
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "fuzz_proxy_request: %s: %s\n", what, mdb_strerror(rc));
	abort();
}

/* The table: rows "t1.r", 64 columns "t1.c<c>" and the run "t1.x", laid out as
 * proxy/state.c does; row r sits at a location spread over several blocks,
 * cell (r, c) holds token byte (r * 7 + c * 5 + r / 5 + c / 3) % 4. */
static void table_build(void)
{
	MDB_txn *txn;
	char name[32];
	int rc;

	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0)
		die("txn", rc);
	tab.id = 1;
	tab.ncols = TNCOLS;
	tab.pk_col = -1;
	tab.nrows = TNROWS;
	if (px_db_name(name, sizeof(name), tab.id, -1) != LWC_OK ||
	    (rc = mdb_dbi_open(txn, name, MDB_CREATE, &tab.rows)) != 0)
		die("rows dbi", rc);
	for (uint32_t c = 0; c < TNCOLS; c++)
		if (px_db_name(name, sizeof(name), tab.id, (int)c) != LWC_OK ||
		    (rc = mdb_dbi_open(txn, name, MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED,
				       &tab.cols[c])) != 0)
			die("column dbi", rc);
	/* the table's run of recent index entries (proxy/index.c), empty */
	if (px_db_name(name, sizeof(name), tab.id, PX_DB_RUN) != LWC_OK ||
	    (rc = mdb_dbi_open(txn, name, MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &tab.run)) != 0)
		die("run dbi", rc);
	for (uint32_t r = 0; r < TNROWS; r++) {
		uint8_t lb[8], span[8], toks[TNCOLS][CRY_TOKEN_BYTES];
		MDB_val k = { 8, lb }, d = { sizeof(toks), toks }, sv = { 8, span };

		/* row ids below 2^48: index values are spans of them (pred.h) */
		tlocs[r] = PX_LOC(r / 3 + (r >= 40 ? (uint64_t)1 << 31 : 0), (r % 3) * 1000);
		cry_put_be64(lb, tlocs[r]);
		idx_span_put(span, tlocs[r], 1);
		for (uint32_t c = 0; c < TNCOLS; c++) {
			MDB_val tk = { CRY_TOKEN_BYTES, toks[c] };
			tval[r][c] = (uint8_t)((r * 7 + c * 5 + r / 5 + c / 3) % TNVALS);
			memset(toks[c], tval[r][c], CRY_TOKEN_BYTES);
			if ((rc = mdb_put(txn, tab.cols[c], &tk, &sv, 0)) != 0)
				die("put column", rc);
		}
		if ((rc = mdb_put(txn, tab.rows, &k, &d, 0)) != 0)
			die("put row", rc);
	}
	if ((rc = mdb_txn_commit(txn)) != 0)
		die("commit", rc);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int rc;

	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	testdir_make(dir, sizeof(dir), "fuzz-px");
	atexit(cleanup);
	if ((rc = mdb_env_create(&env)) != 0 || (rc = mdb_env_set_maxdbs(env, 80)) != 0 ||
	    (rc = mdb_env_set_mapsize(env, 16u << 20)) != 0 ||
	    (rc = mdb_env_open(env, dir, MDB_NOSYNC, 0600)) != 0)
		die("environment", rc);
	table_build();
	return 0;
}

/* ------------------------------------------------------------ predicates */

/* Deepest nesting below p (p itself at 0). */
static size_t pred_depth(const Lwc__Pred *p)
{
	size_t d = 0;

	if (p == NULL)
		return 0;
	for (size_t i = 0; i < p->n_args; i++) {
		size_t a = 1 + pred_depth(p->args[i]);
		if (a > d)
			d = a;
	}
	return d;
}

/* Reference validator, from the rules of pred.h and lwc.proto: the first
 * fault in depth-first order decides the code. */
static int ref_validate(const Lwc__Pred *p, uint32_t ncols, size_t depth, size_t *nodes)
{
	int leaf = p->op == LWC__PRED__OP__EQ || p->op == LWC__PRED__OP__IN;
	int empty = p->op == LWC__PRED__OP__ALL || p->op == LWC__PRED__OP__NONE;
	int inner = p->op == LWC__PRED__OP__AND || p->op == LWC__PRED__OP__OR ||
		    p->op == LWC__PRED__OP__NOT;

	if (depth > PRED_MAX_DEPTH || ++*nodes > PRED_MAX_NODES)
		return LWC_ERR_PROTO;
	if (!leaf && !empty && !inner)
		return LWC_ERR_PROTO;
	if ((leaf || empty) && p->n_args != 0)
		return LWC_ERR_PROTO;
	if ((inner || empty) && p->n_tokens != 0)
		return LWC_ERR_PROTO;
	if (p->op == LWC__PRED__OP__EQ && p->n_tokens != 1)
		return LWC_ERR_PROTO;
	if (p->op == LWC__PRED__OP__IN && p->n_tokens == 0)
		return LWC_ERR_PROTO;
	if (p->op == LWC__PRED__OP__NOT && p->n_args != 1)
		return LWC_ERR_PROTO;
	if ((p->op == LWC__PRED__OP__AND || p->op == LWC__PRED__OP__OR) && p->n_args < 2)
		return LWC_ERR_PROTO;
	if (leaf) {
		if (p->col >= ncols)
			return LWC_ERR_SCHEMA;
		for (size_t i = 0; i < p->n_tokens; i++)
			if (p->tokens[i].len != CRY_TOKEN_BYTES)
				return LWC_ERR_PROTO;
		*nodes += p->n_tokens;
		return *nodes > PRED_MAX_NODES ? LWC_ERR_PROTO : LWC_OK;
	}
	for (size_t i = 0; i < p->n_args; i++) {
		int rc = ref_validate(p->args[i], ncols, depth + 1, nodes);
		if (rc != LWC_OK)
			return rc;
	}
	return LWC_OK;
}

/* Brute force over the fixed table: does row r satisfy p? */
static int bf_match(uint32_t r, const Lwc__Pred *p)
{
	switch (p->op) {
	case LWC__PRED__OP__ALL:
		return 1;
	case LWC__PRED__OP__NONE:
		return 0;
	case LWC__PRED__OP__EQ:
	case LWC__PRED__OP__IN:
		for (size_t i = 0; i < p->n_tokens; i++) {
			uint8_t cell[CRY_TOKEN_BYTES];
			memset(cell, tval[r][p->col], sizeof(cell));
			if (memcmp(cell, p->tokens[i].data, CRY_TOKEN_BYTES) == 0)
				return 1;
		}
		return 0;
	case LWC__PRED__OP__AND:
		for (size_t i = 0; i < p->n_args; i++)
			if (!bf_match(r, p->args[i]))
				return 0;
		return 1;
	case LWC__PRED__OP__OR:
		for (size_t i = 0; i < p->n_args; i++)
			if (bf_match(r, p->args[i]))
				return 1;
		return 0;
	case LWC__PRED__OP__NOT:
		return !bf_match(r, p->args[0]);
	default:
		CHECK(!"operator pred_validate should have refused");
		return 0;
	}
}

static void check_where(const Lwc__Pred *where, uint32_t ncols)
{
	char err[256] = "";
	size_t nodes = 0;
	int rc = pred_validate(where, ncols, err, sizeof(err));
	int ref = where ? ref_validate(where, ncols, 0, &nodes) : LWC_OK;
	struct locset got = { 0 };
	MDB_txn *txn;
	size_t n = 0;

	CHECK(rc == ref);
	CHECK(rc == LWC_OK || err[0] != '\0');
	if (rc != LWC_OK)
		return;
	/* a valid predicate evaluates, and to the brute force's rows */
	tab.ncols = ncols;
	CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) == 0);
	rc = pred_eval(txn, &tab, where, &got, err, sizeof(err));
	mdb_txn_abort(txn);
	CHECK(rc == LWC_OK);
	for (uint32_t r = 0; r < TNROWS; r++) {
		if (where && !bf_match(r, where))
			continue;
		CHECK(n < got.n && got.v[n] == tlocs[r]);
		n++;
	}
	CHECK(got.n == n);
	locset_free(&got);
}

/* ------------------------------------------------------------------ rows */

/* proxy/engine.c check_row(): the record is S bytes, one 16-byte token a
 * column.  Returns 1 when the row passes. */
static int row_ok(const Lwc__Row *r, uint32_t ncols)
{
	if (r == NULL || r->record.len != REC_BYTES || r->n_tokens != ncols)
		return 0;
	for (size_t c = 0; c < ncols; c++)
		if (r->tokens[c].len != CRY_TOKEN_BYTES)
			return 0;
	return 1;
}

static volatile uint8_t sink;

/* What the engine reads of a row that passed: the whole record, every token. */
static void row_touch(const Lwc__Row *r, uint32_t ncols)
{
	uint8_t x = 0;

	for (size_t i = 0; i < REC_BYTES; i++)
		x ^= r->record.data[i];
	for (size_t c = 0; c < ncols; c++)
		for (size_t i = 0; i < CRY_TOKEN_BYTES; i++)
			x ^= r->tokens[c].data[i];
	sink = x;
}

struct tokref {
	const uint8_t *tok;
	size_t idx;
};

static int cmp_tokref(const void *a, const void *b)
{
	return memcmp(((const struct tokref *)a)->tok, ((const struct tokref *)b)->tok,
		      CRY_TOKEN_BYTES);
}

/* An INSERT's rows as plan() checks them, then the in-batch uniqueness
 * pass of plan_insert() (sorted tokens, neighbours compared) on column 0,
 * against a quadratic count. */
static void check_insert(const Lwc__Insert *ins, uint32_t ncols)
{
	struct tokref *refs;
	size_t dup_sorted = 0, dup_naive = 0;

	for (size_t i = 0; i < ins->n_rows; i++) {
		if (!row_ok(ins->rows[i], ncols))
			return;
		row_touch(ins->rows[i], ncols);
	}
	if (ins->n_rows == 0 || ins->n_rows > 512)
		return;
	refs = malloc(ins->n_rows * sizeof(*refs));
	CHECK(refs != NULL);
	for (size_t i = 0; i < ins->n_rows; i++) {
		refs[i].tok = ins->rows[i]->tokens[0].data;
		refs[i].idx = i;
	}
	qsort(refs, ins->n_rows, sizeof(*refs), cmp_tokref);
	for (size_t i = 1; i < ins->n_rows; i++)
		dup_sorted += memcmp(refs[i - 1].tok, refs[i].tok, CRY_TOKEN_BYTES) == 0;
	for (size_t i = 0; i < ins->n_rows; i++)
		for (size_t j = 0; j < i; j++)
			if (memcmp(ins->rows[i]->tokens[0].data, ins->rows[j]->tokens[0].data,
				   CRY_TOKEN_BYTES) == 0) {
				dup_naive++;
				break;
			}
	CHECK(dup_sorted == dup_naive);
	free(refs);
}

/* ---------------------------------------------------------------- wiring */

static int rd_varint(const uint8_t *p, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (int k = 0; k < 10; k++) {
		if (*i >= n)
			return -1;
		*v |= (uint64_t)(p[*i] & 0x7f) << (7 * k);
		if (!(p[(*i)++] & 0x80))
			return 0;
	}
	return -1;
}

/* How often, in the encoded request, a member of the op oneof (fields
 * 2..10, wire type 2) or a WHERE (field 2) inside one follows another:
 * protobuf-c keeps only the last of a oneof (and of a WHERE when it does
 * not merge), so an earlier, deeper one is refused by pred_wire_check()
 * yet gone from what decodes.  Independent of proxy/pred.c's scanner;
 * -1 on bytes it cannot walk. */
static int repeats(const uint8_t *p, size_t n, int inner)
{
	int ops = 0, more = 0;
	size_t i = 0;

	while (i < n) {
		uint64_t tag, v;

		if (rd_varint(p, n, &i, &tag) != 0)
			return -1;
		switch (tag & 7) {
		case 0:
			if (rd_varint(p, n, &i, &v) != 0)
				return -1;
			break;
		case 2:
			if (rd_varint(p, n, &i, &v) != 0 || v > n - i)
				return -1;
			if (!inner && (tag >> 3) >= 2 && (tag >> 3) <= 10) {
				int r = repeats(p + i, (size_t)v, 1);
				ops++;
				more += r > 0 ? r : 0;
			} else if (inner && (tag >> 3) == 2) {
				ops++;
			}
			i += (size_t)v;
			break;
		case 1:
			if (n - i < 8)
				return -1;
			i += 8;
			break;
		case 5:
			if (n - i < 4)
				return -1;
			i += 4;
			break;
		default:
			return -1;
		}
	}
	return (ops > 1 ? ops - 1 : 0) + more;
}

static const Lwc__Pred *where_of(const Lwc__ProxyRequest *rq)
{
	switch (rq->op_case) {
	case LWC__PROXY_REQUEST__OP_SELECT:
		return rq->select->where;
	case LWC__PROXY_REQUEST__OP_UPDATE:
		return rq->update->where;
	case LWC__PROXY_REQUEST__OP_DELETE:
		return rq->delete_->where;
	default:
		return NULL;
	}
}

/* Encode, decode, encode: same bytes; the check agrees on them exactly. */
static void check_repack(const Lwc__ProxyRequest *rq, size_t depth)
{
	size_t n = lwc__proxy_request__get_packed_size(rq), n2;
	uint8_t *a = malloc(n ? n : 1), *b;
	Lwc__ProxyRequest *rq2;

	CHECK(a != NULL);
	CHECK(lwc__proxy_request__pack(rq, a) == n);
	CHECK((pred_wire_check(a, n) == LWC_OK) == (depth <= PRED_WIRE_MAX_DEPTH));
	rq2 = lwc__proxy_request__unpack(NULL, n, a);
	if (rq2 == NULL) {
		CHECK(has_field0(&rq->base));
		free(a);
		return;
	}
	n2 = lwc__proxy_request__get_packed_size(rq2);
	CHECK(n2 == n);
	b = malloc(n2 ? n2 : 1);
	CHECK(b != NULL);
	CHECK(lwc__proxy_request__pack(rq2, b) == n2);
	CHECK(memcmp(a, b, n) == 0);
	lwc__proxy_request__free_unpacked(rq2, NULL);
	free(a);
	free(b);
}

/* An INSERT's token blocks as the proxy takes them after decoding
 * (px_request_tokens): taken, each row's tokens are its block's, whole
 * tokens in order; otherwise refused as malformed. */
static void same_tokens_from_block(Lwc__ProxyRequest *rq)
{
	int rc = px_request_tokens(rq);

	CHECK(rc == LWC_OK || rc == LWC_ERR_PROTO);
	if (rc != LWC_OK)
		return;
	if (rq->op_case != LWC__PROXY_REQUEST__OP_INSERT || rq->insert == NULL)
		return;
	for (size_t i = 0; i < rq->insert->n_rows; i++) {
		const Lwc__Row *r = rq->insert->rows[i];
		size_t n = r->token_block.len / CRY_TOKEN_BYTES;

		if (r->token_block.len == 0)
			continue;
		CHECK(r->token_block.len % CRY_TOKEN_BYTES == 0 && n <= PX_MAX_TOKENS &&
		      r->n_tokens == n);
		for (size_t j = 0; j < n; j++)
			CHECK(r->tokens[j].len == CRY_TOKEN_BYTES &&
			      r->tokens[j].data == r->token_block.data + j * CRY_TOKEN_BYTES);
	}
}

/* The proxy unpacks requests into an arena (common/pbarena.c): it must
 * accept and refuse what protobuf-c accepts and refuses, and give the same
 * message (packed again, the same bytes). */
static void same_in_arena(const Lwc__ProxyRequest *rq, const uint8_t *data, size_t size)
{
	ProtobufCMessage *ar = pb_arena_unpack(&lwc__proxy_request__descriptor, size, data);

	CHECK((ar == NULL) == (rq == NULL));
	if (ar != NULL) {
		size_t n = lwc__proxy_request__get_packed_size(rq);
		uint8_t *a = malloc(n + 1), *b = malloc(n + 1);

		CHECK(a != NULL && b != NULL);
		CHECK(protobuf_c_message_get_packed_size(ar) == n);
		lwc__proxy_request__pack(rq, a);
		protobuf_c_message_pack(ar, b);
		CHECK(memcmp(a, b, n) == 0);
		free(a);
		free(b);
		same_tokens_from_block((Lwc__ProxyRequest *)ar);
	}
	pb_arena_free(ar);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int wire = pred_wire_check(data, size);
	Lwc__ProxyRequest *rq;
	const Lwc__Pred *where;
	uint32_t ncols;
	size_t depth;

	CHECK(wire == LWC_OK || wire == LWC_ERR_PROTO);
	if (wire != LWC_OK && size > CMP_MAX)
		return 0;                       /* what the proxy does: never decoded */
	rq = lwc__proxy_request__unpack(NULL, size, data);
	same_in_arena(rq, data, size);
	if (rq == NULL)
		return 0;
	where = where_of(rq);
	depth = pred_depth(where);
	if (wire == LWC_OK) {
		CHECK(depth <= PRED_WIRE_MAX_DEPTH);
	} else if (depth <= PRED_WIRE_MAX_DEPTH) {
		/* refused though what decodes is shallow: only when a deep where
		 * was dropped for a later one */
		CHECK(repeats(data, size, 0) > 0);
	}
	check_repack(rq, depth);
	if (wire != LWC_OK) {
		lwc__proxy_request__free_unpacked(rq, NULL);
		return 0;
	}

	ncols = 1 + (uint32_t)(rq->seq % TNCOLS);
	switch (rq->op_case) {
	case LWC__PROXY_REQUEST__OP_SELECT:
	case LWC__PROXY_REQUEST__OP_UPDATE:
	case LWC__PROXY_REQUEST__OP_DELETE:
		check_where(where, ncols);
		break;
	case LWC__PROXY_REQUEST__OP_INSERT:
		check_insert(rq->insert, ncols);
		break;
	case LWC__PROXY_REQUEST__OP_DECISIONS: {
		const Lwc__Decisions *d = rq->decisions;
		/* as run_access(): an UPDATE checks every changed row first */
		if (d->abort)
			break;
		for (size_t i = 0; i < d->n_d; i++) {
			CHECK(d->d[i] != NULL);
			if (d->d[i]->change && row_ok(d->d[i]->row, ncols))
				row_touch(d->d[i]->row, ncols);
		}
		if (d->reason)
			sink = (uint8_t)strlen(d->reason);
		break;
	}
	case LWC__PROXY_REQUEST__OP_CREATE_TABLE: {
		const Lwc__CreateTable *ct = rq->create_table;
		int ok = ct->table.len == PX_HANDLE_BYTES && ct->ncols >= 1 &&
			 ct->ncols <= PX_MAX_COLS && ct->pk_col >= -1 &&
			 ct->pk_col < (int32_t)ct->ncols && ct->schema.len <= PX_SCHEMA_MAX;
		if (ok) {
			/* what the catalog stores: the handle and the schema */
			sink = ct->table.data[PX_HANDLE_BYTES - 1];
			if (ct->schema.len)
				sink = ct->schema.data[ct->schema.len - 1];
			if (ct->pk_col >= 0)
				CHECK((uint32_t)ct->pk_col < PX_MAX_COLS);
		}
		break;
	}
	case LWC__PROXY_REQUEST__OP_CREATE_INDEX: {
		const Lwc__CreateIndex *ci = rq->create_index;
		if (ci->table.len == PX_HANDLE_BYTES && ci->col < ncols)
			CHECK(ci->col < PX_MAX_COLS);
		break;
	}
	case LWC__PROXY_REQUEST__OP_DROP_TABLE:
		if (rq->drop_table->table.len == PX_HANDLE_BYTES)
			sink = rq->drop_table->table.data[0];
		break;
	default:
		break;
	}
	lwc__proxy_request__free_unpacked(rq, NULL);
	return 0;
}
