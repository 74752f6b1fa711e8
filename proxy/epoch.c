/*
 * epoch.c - see epoch.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cs_client.h"
#include "epoch.h"
#include "log.h"

#define EPOCH_MAGIC      "LWC-EPOCH"
#define EPOCH_TIMEOUT_MS 60000
#define STAT_MAX         65536u

/* What the store holds of the header record. */
struct header {
	int present;
	uint64_t version;        /* newest held                           */
	uint64_t epoch;          /* sealed in it                          */
	int opens;               /* 0: it does not open (tampered)        */
};

static int header_read(struct px_state *st, struct cs_client *cl, struct header *h,
		       char *err, size_t errlen)
{
	uint64_t id = PX_HEADER_ID;
	Lwc__CsResponse *resp = NULL;
	uint8_t *plain;
	int rc;

	memset(h, 0, sizeof(*h));
	if ((rc = cs_client_stat(cl, &id, 1, &resp, err, errlen)) != LWC_OK)
		return rc;
	if (resp->result_case != LWC__CS_RESPONSE__RESULT_STAT || resp->stat->n_held != 1) {
		cs_client_free_resp(resp);
		lwc_errf(err, errlen, "the cloud store answered STAT with something else");
		return LWC_ERR_PROTO;
	}
	if (resp->stat->held[0]->n_versions > 0) {
		const Lwc__CsHeld *hd = resp->stat->held[0];
		h->present = 1;
		for (size_t i = 0; i < hd->n_versions; i++)
			if (hd->versions[i] > h->version)
				h->version = hd->versions[i];
	}
	cs_client_free_resp(resp);
	if (!h->present)
		return LWC_OK;
	if ((rc = cs_client_read(cl, &id, &h->version, 1, &resp, err, errlen)) != LWC_OK)
		return rc;
	if ((plain = malloc(st->g.block_bytes)) == NULL) {
		cs_client_free_resp(resp);
		return LWC_ERR_NOMEM;
	}
	if (resp->result_case == LWC__CS_RESPONSE__RESULT_READ && resp->read->n_blocks == 1 &&
	    resp->read->blocks[0]->id == id &&
	    resp->read->blocks[0]->data.len == st->g.sealed_bytes &&
	    cry_block_open(plain, st->seal_key, id, h->version, resp->read->blocks[0]->data.data,
			   resp->read->blocks[0]->data.len) == LWC_OK &&
	    memcmp(plain, EPOCH_MAGIC, sizeof(EPOCH_MAGIC)) == 0) {
		h->opens = 1;
		h->epoch = cry_get_be64(plain + 16);
	}
	free(plain);
	cs_client_free_resp(resp);
	return LWC_OK;
}

/* meta "stale_accepted": 1 once a serve ran with --accept-stale-state.  From
 * then on blocks that disagree with the state are expected (the operator
 * chose to serve a mismatched pair) and only warned about; the epochs are
 * still compared at every start. */
static int stale_accepted(struct px_state *st)
{
	MDB_txn *txn;
	MDB_val k = { 14, (void *)"stale_accepted" }, v;
	int yes = 0;

	if (mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn) != 0)
		return 0;
	if (mdb_get(txn, st->meta, &k, &v) == 0 && v.mv_size == 8)
		yes = cry_get_be64(v.mv_data) != 0;
	mdb_txn_abort(txn);
	return yes;
}

/* Commit epoch e to the state, then write it as the header's next version. */
static int advance(struct px_state *st, struct cs_client *cl, const struct header *h,
		   uint64_t e, int accepted, char *err, size_t errlen)
{
	struct cs_wblock wb;
	uint8_t *plain = calloc(1, st->g.block_bytes), *sealed = malloc(st->g.sealed_bytes);
	MDB_txn *txn = NULL;
	int rc;

	if (plain == NULL || sealed == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0 ||
	    (rc = px_meta_put_u64(st, txn, "epoch", e)) != 0 ||
	    (accepted && (rc = px_meta_put_u64(st, txn, "stale_accepted", 1)) != 0) ||
	    (rc = mdb_txn_commit(txn)) != 0) {
		if (txn && rc != 0)
			mdb_txn_abort(txn);
		lwc_errf(err, errlen, "proxy state: recording epoch %llu: %s", (unsigned long long)e,
			 rc == ENOSPC ? "no space left on device" : mdb_strerror(rc));
		rc = rc == ENOSPC ? LWC_ERR_NO_SPACE : LWC_ERR_STORE;
		goto out;
	}
	st->epoch = e;
	memcpy(plain, EPOCH_MAGIC, sizeof(EPOCH_MAGIC));
	cry_put_be64(plain + 16, e);
	wb.id = PX_HEADER_ID;
	wb.version = h->present ? h->version + 1 : 1;
	if ((rc = cry_block_seal(sealed, st->seal_key, wb.id, wb.version, plain,
				 st->g.block_bytes)) != LWC_OK)
		goto out;
	wb.data = sealed;
	wb.len = st->g.sealed_bytes;
	if ((rc = cs_client_write(cl, &wb, 1, err, errlen)) != LWC_OK) {
		char tmp[300];
		snprintf(tmp, sizeof(tmp), "%s", err);
		lwc_errf(err, errlen, "writing the cloud store's header record (epoch %llu): %s",
			 (unsigned long long)e, tmp);
	}
out:
	free(plain);
	free(sealed);
	return rc;
}

int px_epoch_init(struct px_state *st, const char *cs_addr, const uint8_t cs_key[32],
		  char *err, size_t errlen)
{
	struct cs_client *cl;
	struct header h;
	int rc;

	if ((rc = cs_client_connect(&cl, cs_addr, cs_key, EPOCH_TIMEOUT_MS, err, errlen)) != LWC_OK)
		return rc;
	memset(&h, 0, sizeof(h));
	rc = advance(st, cl, &h, 1, 0, err, errlen);
	cs_client_close(cl);
	return rc;
}

/* Blocks whose store versions disagree with the state: held above
 * committed + 1 (newer), or the committed version not held (lost). */
static int check_blocks(struct px_state *st, struct cs_client *cl, uint64_t *newer,
			uint64_t *lost, char *ex_newer, char *ex_lost, size_t exlen,
			char *err, size_t errlen)
{
	uint64_t *ids = malloc(STAT_MAX * sizeof(uint64_t));

	*newer = *lost = 0;
	if (ids == NULL)
		return LWC_ERR_NOMEM;
	for (uint64_t first = 0; first < st->nblocks; first += STAT_MAX) {
		size_t n = st->nblocks - first < STAT_MAX ? (size_t)(st->nblocks - first) : STAT_MAX;
		Lwc__CsResponse *resp = NULL;
		int rc;

		for (size_t i = 0; i < n; i++)
			ids[i] = first + i;
		if ((rc = cs_client_stat(cl, ids, n, &resp, err, errlen)) != LWC_OK) {
			free(ids);
			return rc;
		}
		if (resp->result_case != LWC__CS_RESPONSE__RESULT_STAT || resp->stat->n_held != n) {
			cs_client_free_resp(resp);
			free(ids);
			lwc_errf(err, errlen, "the cloud store answered STAT with something else");
			return LWC_ERR_PROTO;
		}
		for (size_t i = 0; i < n; i++) {
			const Lwc__CsHeld *hd = resp->stat->held[i];
			uint64_t b = first + i, want = st->version[b], top = 0;
			int has = 0;

			for (size_t j = 0; j < hd->n_versions; j++) {
				if (hd->versions[j] > top)
					top = hd->versions[j];
				if (hd->versions[j] == want)
					has = 1;
			}
			if (top > want + 1 && (*newer)++ == 0)
				snprintf(ex_newer, exlen, "block %llu: version %llu in the store, %llu "
					 "committed in the state", (unsigned long long)b,
					 (unsigned long long)top, (unsigned long long)want);
			if (!has && (*lost)++ == 0)
				snprintf(ex_lost, exlen, "block %llu: committed version %llu not in the "
					 "store (newest held: %llu)", (unsigned long long)b,
					 (unsigned long long)want, (unsigned long long)top);
		}
		cs_client_free_resp(resp);
	}
	free(ids);
	return LWC_OK;
}

int px_epoch_start(struct px_state *st, const char *cs_addr, const uint8_t cs_key[32],
		   int accept_stale, char *err, size_t errlen)
{
	struct cs_client *cl;
	struct header h;
	uint64_t newer = 0, lost = 0, e;
	char ex_newer[160] = "", ex_lost[160] = "", msg[1024] = "";
	int rc, accepted = stale_accepted(st);

	if ((rc = cs_client_connect(&cl, cs_addr, cs_key, EPOCH_TIMEOUT_MS, err, errlen)) != LWC_OK)
		return rc;
	if ((rc = header_read(st, cl, &h, err, errlen)) != LWC_OK ||
	    (rc = check_blocks(st, cl, &newer, &lost, ex_newer, ex_lost, sizeof(ex_newer), err,
			       errlen)) != LWC_OK)
		goto out;
	if (accepted && newer > 0) {
		log_warn("%llu block(s) hold versions newer than this state committed (%s): "
			 "expected after a start with --accept-stale-state; statements touching "
			 "them fail", (unsigned long long)newer, ex_newer);
		newer = 0;
	}
	if (h.present && !h.opens)
		snprintf(msg, sizeof(msg), "the cloud store's header record (version %llu) does "
			 "not open under this proxy's key: it belongs to another deployment, or "
			 "the cloud altered it; restore the proxy state and the cloud store from "
			 "the same backup set (docs/operations.md section 6) or start with "
			 "--accept-stale-state", (unsigned long long)h.version);
	else if ((h.present && h.epoch > st->epoch) || newer > 0)
		snprintf(msg, sizeof(msg), "proxy state is older than the cloud store (epoch %llu "
			 "%s %llu%s%s%s): this is a restored backup without its cloud store; restore "
			 "both from the same backup set (docs/operations.md section 6) or start with "
			 "--accept-stale-state", (unsigned long long)st->epoch,
			 h.epoch > st->epoch ? "<" : "=", (unsigned long long)h.epoch,
			 newer ? "; " : "", newer ? ex_newer : "",
			 newer > 1 ? " and more" : "");
	else if ((!h.present && st->epoch > 0) || (h.present && h.epoch + 1 < st->epoch))
		snprintf(msg, sizeof(msg), "the cloud store is older than the proxy state (epoch "
			 "%llu%s %llu%s%s%s): the store was restored from an older backup, replaced, "
			 "or rolled back by the cloud; restore both from the same backup set "
			 "(docs/operations.md section 6) or start with --accept-stale-state",
			 (unsigned long long)h.epoch, h.present ? " <" : " (no header record) <",
			 (unsigned long long)st->epoch, lost ? "; " : "", lost ? ex_lost : "",
			 lost > 1 ? " and more" : "");
	else if (lost > 0)
		/* single blocks the store lost or rolled back: the statements that
		 * touch them fail (integrity), the rest of the database serves */
		log_warn("%llu block(s) lack their committed version in the cloud store (%s): "
			 "statements touching them will fail; run 'lwc-proxy check' to list them",
			 (unsigned long long)lost, ex_lost);
	if (msg[0] && newer + lost > 0)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), " [%llu block(s) newer "
			 "than the state, %llu missing their committed version]",
			 (unsigned long long)newer, (unsigned long long)lost);
	if (msg[0] && !accept_stale) {
		lwc_errf(err, errlen, "%s", msg);
		rc = LWC_ERR_STALE;
		goto out;
	}
	if (msg[0])
		log_warn("%s; serving anyway (--accept-stale-state): statements on blocks that do "
			 "not match will fail", msg);
	e = (h.opens && h.epoch > st->epoch ? h.epoch : st->epoch) + 1;
	rc = advance(st, cl, &h, e, accepted || msg[0], err, errlen);
out:
	cs_client_close(cl);
	return rc;
}
