/*
 * relocate.c - relocation across statements (docs/architecture.md, "Across
 * statements"): where matched rows are (blocks or the stash), move on
 * access, deferred eviction into padding blocks, delivering rows after the
 * write-back, and the stash part of a commit.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine_int.h"
#include "locsort.h"
#include "log.h"
#include "stash.h"

/* The matched row ids (s->locs) become where the rows are: locations in
 * blocks (s->locs, sorted, with s->lrow) and rows in the stash (s->srow,
 * their records copied to s->srec and held by the statement).  PLAN_WAIT
 * when another statement holds one of the stash rows, unless this is a
 * SELECT: it reads such a row without holding it (s->sshared). */
int map_rows(struct px_state *st, struct stmt *s, MDB_txn *txn)
{
	size_t n = s->locs.n, nb = 0, ns = 0, S = st->g.S;
	MDB_cursor *cur = NULL;
	struct locrow *lr = malloc((n + 1) * sizeof(*lr));
	uint64_t *rows = malloc((n + 1) * sizeof(*rows));
	uint8_t *shared = malloc(n + 1);
	int rc = LWC_OK;

	free(s->srow);
	free(s->srec);
	free(s->sdel);
	free(s->sshared);
	free(s->lmate);
	s->lmate = NULL;
	s->sshared = NULL;
	s->srow = NULL;
	s->srec = NULL;
	s->sdel = NULL;
	s->nsrow = 0;
	if (lr == NULL || rows == NULL || shared == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	/* the row ids are sorted: one cursor finds most on the page it is on */
	if (n > 0 && (rc = mdb_cursor_open(txn, st->pos_db, &cur)) != 0) {
		rc = stmt_fail(s, LWC_ERR_STORE, "positions: %s", mdb_strerror(rc));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t row = s->locs.v[i], loc;
		int e = jr_pos_get(st, txn, cur, row, &loc);

		if (e != 0) {
			rc = stmt_fail(s, LWC_ERR_STORE, "row %llu has no position: %s",
				       (unsigned long long)row, mdb_strerror(e));
			goto out;
		}
		if (loc == PX_LOC_STASH) {
			struct px_stash_ent *se = stash_find(st, row);
			if (se == NULL) {
				rc = stmt_fail(s, LWC_ERR_STORE, "row %llu is missing from the stash",
					       (unsigned long long)row);
				goto out;
			}
			if (se->owner != 0 && se->owner != s->owner && s->kind != ST_SELECT) {
				rc = PLAN_WAIT;
				goto out;
			}
			/* a SELECT reads a row another statement is writing back (its
			 * record does not change) without holding it: waiting for that
			 * statement made concurrent readers queue behind write-backs */
			shared[ns] = se->owner != 0 && se->owner != s->owner;
			rows[ns++] = row;
			continue;
		}
		lr[nb].loc = loc;
		lr[nb].row = row;
		nb++;
	}
	if (ns > 0) {
		s->srow = malloc(ns * sizeof(*s->srow));
		s->srec = malloc(ns * S);
		s->sdel = calloc(ns, 1);
		s->sshared = calloc(ns, 1);
		if (!s->srow || !s->srec || !s->sdel || !s->sshared) {
			rc = LWC_ERR_NOMEM;
			goto out;
		}
		for (size_t i = 0; i < ns; i++) {
			if (jr_stash_get(st, txn, rows[i], NULL, s->srec + i * S) != 0) {
				rc = stmt_fail(s, LWC_ERR_STORE, "row %llu: no record in the stash",
					       (unsigned long long)rows[i]);
				goto out;
			}
			s->srow[i] = rows[i];
		}
		if (stash_hold_reserve(&s->held, ns) != LWC_OK) {
			rc = LWC_ERR_NOMEM;
			goto out;
		}
		for (size_t i = 0; i < ns; i++)
			if (shared[i])
				s->sshared[i] = 1;
			else
				stash_hold(&s->held, stash_find(st, rows[i]), s->owner);
		s->nsrow = ns;
	}
	locrow_sort(lr, nb);
	free(s->lrow);
	if ((s->lrow = malloc((nb + 1) * sizeof(*s->lrow))) == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < nb; i++) {
		s->locs.v[i] = lr[i].loc;
		s->lrow[i] = lr[i].row;
	}
	s->locs.n = nb;
out:
	if (cur)
		mdb_cursor_close(cur);
	free(lr);
	free(rows);
	free(shared);
	if (rc == LWC_ERR_NOMEM)
		stmt_fail(s, rc, "out of memory");
	return rc;
}

/* Move on access: the rows a SELECT returns and the candidates of an
 * UPDATE or DELETE leave their blocks for the stash, unless there are more
 * than relocate_max of them or the stash has no room (both counted). */
int plan_relocation(struct px_state *st, struct stmt *s)
{
	size_t n = s->locs.n;

	s->relocating = 0;
	if (!st->relocate || n == 0 || s->kind == ST_DROP || (s->kind == ST_DELETE && !s->interactive))
		return LWC_OK;
	if (n > st->relocate_max || st->nstash + st->stash_reserved + n > st->stash_max)
		return LWC_OK;
	free(s->mrow);
	free(s->mrec);
	free(s->mdel);
	free(s->mmate);
	s->mrow = malloc(n * sizeof(*s->mrow));
	s->mrec = malloc(n * st->g.S);
	s->mdel = calloc(n, 1);
	s->mmate = calloc(n, 1);
	if (s->mrow == NULL || s->mrec == NULL || s->mdel == NULL || s->mmate == NULL)
		return stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
	s->capmoved = n;
	s->nmoved = 0;
	s->nmates = 0;
	s->relocating = 1;
	s->reserved = n;
	st->stash_reserved += n;
	return LWC_OK;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Move the group on access (groups.h): the rows of a matched row's group
 * that are in a block this statement reads anyway leave it too, for the
 * stash, without going to the user (s->lmate).  Only rows the position map
 * puts in one of those blocks: a stale group entry moves nothing.  None
 * when the stash or relocate_max has no room for them. */
int plan_mates(struct px_state *st, struct stmt *s, MDB_txn *txn)
{
	size_t n = s->locs.n, nc = 0, cap = 0, nm = 0;
	uint64_t *cand = NULL, *sorted = NULL, *v = NULL, *r = NULL;
	struct locrow *add = NULL;
	uint8_t *mate = NULL, *mdel = NULL, *mmate = NULL, *mrec = NULL;
	uint64_t *mrow = NULL;
	uint32_t tid = s->t ? s->t->id : 0;
	int rc = LWC_OK;

	if (!s->relocating || n == 0 || grp_rows(&st->grps) == 0)
		return LWC_OK;
	for (size_t i = 0; i < n; i++) {
		/* room for a whole group: it was written into one block */
		if (nc + PX_MAX_SLOTS > cap) {
			size_t cap2 = cap ? cap * 2 : 2 * PX_MAX_SLOTS;
			uint64_t *c2 = realloc(cand, cap2 * sizeof(*cand));

			if (c2 == NULL)
				goto nomem;
			cand = c2;
			cap = cap2;
		}
		nc += grp_mates(&st->grps, s->lrow[i], tid, cand + nc, PX_MAX_SLOTS);
	}
	if (nc == 0)
		goto out;
	qsort(cand, nc, sizeof(*cand), cmp_u64);
	if ((sorted = malloc(n * sizeof(*sorted))) == NULL ||
	    (add = malloc(nc * sizeof(*add))) == NULL)
		goto nomem;
	memcpy(sorted, s->lrow, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	for (size_t i = 0; i < nc; i++) {
		uint64_t row = cand[i], loc;
		size_t lo, hi;

		if ((i > 0 && cand[i - 1] == row) ||
		    bsearch(&row, sorted, n, sizeof(*sorted), cmp_u64) != NULL)
			continue;                        /* matched itself, or twice */
		if (jr_pos_get(st, txn, NULL, row, &loc) != 0 || loc == PX_LOC_STASH)
			continue;
		block_range(&s->locs, PX_LOC_BLOCK(loc), &lo, &hi);
		if (hi == lo || PX_LOC_SLOT(loc) >= st->g.m ||
		    !px_bit(st->bits + PX_LOC_BLOCK(loc) * st->g.words, PX_LOC_SLOT(loc)))
			continue;                        /* not in a block it reads */
		add[nm].loc = loc;
		add[nm].row = row;
		nm++;
	}
	if (nm == 0 || n + nm > st->relocate_max ||
	    st->nstash + st->stash_reserved + nm > st->stash_max)
		goto out;
	/* the locations, merged in order, and room for the rows to move */
	locrow_sort(add, nm);
	v = malloc((n + nm) * sizeof(*v));
	r = malloc((n + nm) * sizeof(*r));
	mate = malloc(n + nm);
	mrow = malloc((n + nm) * sizeof(*mrow));
	mrec = malloc((n + nm) * st->g.S);
	mdel = calloc(n + nm, 1);
	mmate = calloc(n + nm, 1);
	if (!v || !r || !mate || !mrow || !mrec || !mdel || !mmate)
		goto nomem;
	for (size_t i = 0, j = 0, k = 0; k < n + nm; k++) {
		if (j < nm && (i == n || add[j].loc < s->locs.v[i])) {
			v[k] = add[j].loc;
			r[k] = add[j++].row;
			mate[k] = 1;
		} else {
			v[k] = s->locs.v[i];
			r[k] = s->lrow[i++];
			mate[k] = 0;
		}
	}
	free(s->locs.v);
	free(s->lrow);
	free(s->mrow);
	free(s->mrec);
	free(s->mdel);
	free(s->mmate);
	s->locs.v = v;
	s->locs.n = s->locs.cap = n + nm;
	s->lrow = r;
	s->lmate = mate;
	s->mrow = mrow;
	s->mrec = mrec;
	s->mdel = mdel;
	s->mmate = mmate;
	s->capmoved = n + nm;
	s->reserved += nm;
	st->stash_reserved += nm;
	v = r = mrow = NULL;
	mate = mdel = mmate = mrec = NULL;
	goto out;
nomem:
	rc = stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
out:
	free(cand);
	free(sorted);
	free(add);
	free(v);
	free(r);
	free(mate);
	free(mrow);
	free(mrec);
	free(mdel);
	free(mmate);
	return rc;
}

/* Undo what a planning attempt took in the stash. */
void plan_undo_stash(struct px_state *st, struct stmt *s)
{
	stash_release(st, &s->held, s->owner);
	st->stash_reserved -= s->reserved;
	s->reserved = 0;
	s->nsrow = 0;
	s->via_stash = 0;
	s->relocating = 0;
	s->nmoved = 0;
}

void stash_release_evictions(struct px_state *st, struct stmt *s)
{
	for (size_t i = 0; i < s->nev; i++) {
		struct px_stash_ent *e = stash_find(st, s->ev[i].row);
		if (e && e->owner == s->owner)
			e->owner = 0;
	}
	s->nev = 0;
}

/* May stash row e go to the statement's block i?  Not to a block it was
 * last read with (stash_may_land), and an INSERT's row that is in no block
 * yet only below the fill limit (capf[i]: room left under it), as INSERTs
 * that place their rows fill blocks: the room above the limit is for rows
 * that move.  Without that, rows inserted through the stash filled the
 * blocks they went to up to theta, and a later row taken out of one could
 * then only go where rows had just been taken out (the only room left):
 * the hottest rows went round among the few blocks they had just left,
 * read far more often than the others, and lwc-audit's frequency check
 * found them (docs/threat-model.md). */
static int may_land(const struct px_stash_ent *e, const struct stmt *s, size_t i,
		    const uint32_t *capf)
{
	return stash_may_land(e, s->ids[i]) && (!e->fresh || capf[i] > 0);
}

/* Deferred eviction: stash rows that entered in earlier statements go to
 * free slots of this statement's padding blocks.  Padding is drawn by the
 * blocks' age (padage.h), not by what they hold, so a row's next block
 * depends neither on the access that took it out nor on the rows around
 * it: writing back into real blocks too (or choosing blocks by their free
 * room) lets blocks that are read often collect the rows that are read
 * often, which a frequency count of the trace finds (docs/threat-model.md).
 * The same holds only while most padding blocks have room: hence an
 * INSERT's rows stop at the fill limit (may_land).  Each row goes to a
 * block drawn uniformly among the padding blocks that still have room for
 * it (below theta; below the fill limit for a fresh row), then to a
 * uniform free slot of it. */
int plan_evictions(struct px_worker *w, struct stmt *s)
{
	struct px_state *st = w->st;
	const struct px_geom *g = &st->g;
	size_t words = g->words, total = 0, n, k = 0, want, nopen = 0;
	uint32_t *capb = calloc(s->gamma, sizeof(uint32_t));
	uint32_t *capf = calloc(s->gamma, sizeof(uint32_t));
	uint32_t *cnt = calloc(s->gamma, sizeof(uint32_t));
	uint32_t limit = px_fill_limit(st);
	size_t *units = NULL, *blk = NULL, *byblk = NULL, *first = NULL, norig = 0;
	uint64_t *rows = NULL, *grps = NULL, *origins = NULL;
	uint32_t *tabs = NULL, *slots = malloc(g->m * sizeof(uint32_t));
	MDB_txn *txn = NULL;
	int rc = LWC_OK;

	s->nev = 0;
	if (!capb || !capf || !cnt || !slots) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->gamma; i++) {
		uint32_t occ = 0;
		size_t lo = 0, hi = 0;

		block_range(&s->locs, s->ids[i], &lo, &hi);
		if (hi > lo)
			continue;                        /* a real block */
		for (size_t x = 0; x < words; x++)
			occ += (uint32_t)__builtin_popcountll(s->bits[i * words + x]);
		capb[i] = occ < g->theta ? g->theta - occ : 0;
		capf[i] = occ < limit ? limit - occ : 0;
		total += capb[i];
	}
	want = total < st->nstash ? total : st->nstash;
	if (want == 0)
		goto out;
	rows = malloc(want * sizeof(*rows));
	tabs = malloc(want * sizeof(*tabs));
	grps = malloc(want * sizeof(*grps));
	origins = malloc(want * sizeof(*origins));
	if (!rows || !tabs || !grps || !origins) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	n = stash_pick(st, &s->held, s->owner, s->seq, want, rows, tabs, grps);
	if (n == 0)
		goto out;
	s->ev = malloc(n * sizeof(*s->ev));
	s->evrec = malloc(n * g->S);
	units = malloc(total * sizeof(*units));
	blk = malloc(n * sizeof(*blk));
	byblk = malloc(n * sizeof(*byblk) + 1);
	first = malloc(s->gamma * sizeof(*first) + 1);
	if (!s->ev || !s->evrec || !units || !blk || !byblk || !first) {
		for (size_t i = 0; i < n; i++)
			stash_find(st, rows[i])->owner = 0;
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	/* for each group a block, uniformly among the padding blocks with room
	 * it may go to (not one it was last read with: stash_may_land, the
	 * same for a group's rows); as many of its rows as the block has room
	 * for go there, the rest wait a new delay (stash_defer): a group is
	 * never in two blocks of one statement, nor are two groups of one
	 * origin (stash.h).  A group with no block stays in the stash.
	 * Groups of one row (--evict-group 1): a block for each row, any
	 * origin. */
	for (size_t i = 0; i < s->gamma; i++)
		if (capb[i] > 0)
			units[nopen++] = i;
	for (size_t r = 0, ge; r < n; r = ge) {
		const struct px_stash_ent *e = stash_find(st, rows[r]);
		size_t j = SIZE_MAX, ok = 0, b, take;

		for (ge = r + 1; ge < n && grps[ge] == grps[r]; ge++)
			;
		for (size_t x = r; x < ge; x++)
			blk[x] = SIZE_MAX;
		if (st->evict_group > 1) {
			size_t o = 0;

			while (o < norig && origins[o] != e->origin)
				o++;
			if (o < norig) {                 /* its origin has a block here */
				stash_defer(st, rows + r, ge - r, s->seq);
				continue;
			}
		}
		for (int tries = 0; tries < 8 && nopen > 0 && j == SIZE_MAX; tries++) {
			size_t c = (size_t)cry_uniform(nopen);
			if (may_land(e, s, units[c], capf))
				j = c;
		}
		if (j == SIZE_MAX) {                     /* few allowed: count them */
			for (size_t c = 0; c < nopen; c++)
				ok += (size_t)may_land(e, s, units[c], capf);
			if (ok > 0) {
				size_t pick = (size_t)cry_uniform(ok);
				for (size_t c = 0; c < nopen && j == SIZE_MAX; c++)
					if (may_land(e, s, units[c], capf) && pick-- == 0)
						j = c;
			}
		}
		if (j == SIZE_MAX)
			continue;
		b = units[j];
		take = ge - r < capb[b] ? ge - r : capb[b];
		if (e->fresh && take > capf[b])
			take = capf[b];
		for (size_t x = r; x < r + take; x++)
			blk[x] = b;
		if (take < ge - r)                       /* the rest: a group of its own */
			stash_defer(st, rows + r + take, ge - r - take, s->seq);
		cnt[b] += (uint32_t)take;
		capb[b] -= (uint32_t)take;
		capf[b] = capf[b] > take ? capf[b] - (uint32_t)take : 0;
		origins[norig++] = e->origin;
		if (capb[b] == 0)
			units[j] = units[--nopen];
	}
	/* the rows by block (a counting sort: byblk[first[i]..] are block
	 * i's), then in each block that many of its free slots, uniformly; the
	 * entries come out sorted by block, as the access walks them */
	for (size_t i = 0, at = 0; i < s->gamma; i++) {
		first[i] = at;
		at += cnt[i];
	}
	for (size_t r = 0; r < n; r++)
		if (blk[r] != SIZE_MAX)
			byblk[first[blk[r]]++] = r;
	for (size_t i = 0, at = 0; i < s->gamma; i++) {
		const uint64_t *bits = s->bits + i * words;
		uint32_t nf = 0;

		if (cnt[i] == 0)
			continue;
		for (uint32_t slot = 0; slot < g->m; slot++)
			if (!px_bit(bits, slot))
				slots[nf++] = slot;
		for (uint32_t c = 0; c < cnt[i]; c++) {
			size_t r = byblk[at + c];
			uint32_t j, t;

			if (c >= nf)
				continue;               /* (never: room was counted) */
			j = c + randombytes_uniform(nf - c);
			t = slots[c];
			slots[c] = slots[j];
			slots[j] = t;
			s->ev[k].row = rows[r];
			s->ev[k].table = tabs[r];
			s->ev[k].grp = grps[r];
			s->ev[k].blk = i;
			s->ev[k].slot = slots[c];
			blk[r] = SIZE_MAX - 1;           /* placed */
			k++;
		}
		at += cnt[i];
	}
	s->nev = k;
	for (size_t r = 0; r < n; r++)                 /* rows with no block */
		if (blk[r] != SIZE_MAX - 1)
			stash_find(st, rows[r])->owner = 0;
	/* the records */
	if (px_read_begin(w, &txn) != 0) {
		rc = LWC_ERR_STORE;
		goto fail;
	}
	for (size_t i = 0; i < k; i++) {
		if (jr_stash_get(st, txn, s->ev[i].row, NULL, s->evrec + i * g->S) != 0) {
			log_error("stash row %llu has no record", (unsigned long long)s->ev[i].row);
			rc = LWC_ERR_STORE;
			goto fail;
		}
	}
	px_read_end(w, txn);
	txn = NULL;
	goto out;
fail:
	px_read_end(w, txn);
	stash_release_evictions(st, s);         /* every picked row has an entry */
out:
	free(capb);
	free(capf);
	free(cnt);
	free(units);
	free(blk);
	free(byblk);
	free(first);
	free(rows);
	free(tabs);
	free(grps);
	free(origins);
	free(slots);
	return rc;
}

/* Move on access: the record at rec (slot of the block whose occupancy is
 * bits) goes to the statement's list of rows for the stash and its slot is
 * freed (random bytes when the block is written).  Returns where the
 * record now is, so an UPDATE can put the new one there. */
uint8_t *take_out(struct stmt *s, size_t S, uint64_t row, const uint8_t *rec,
			 uint64_t *bits, uint32_t slot, int mate)
{
	uint8_t *dst;

	if (s->nmoved >= s->capmoved)
		return NULL;
	dst = s->mrec + s->nmoved * S;
	memcpy(dst, rec, S);
	s->mmate[s->nmoved] = (uint8_t)(mate != 0);
	s->nmates += mate != 0;
	s->mrow[s->nmoved++] = row;
	px_bit_set(bits, slot, 0);
	return dst;
}

/* Rows the user gets, or decides about, once the blocks are written (a
 * SELECT's once its last WRITE is sent, while the store makes it durable:
 * run_access): those the statement found in the stash (they need no block)
 * and those it moved out of its blocks.  So a relocating UPDATE or DELETE
 * shows the cloud the READ-WRITE gap of a SELECT, not a user round trip.
 * A SELECT sends them, a DELETE deletes the stash rows, an UPDATE or a
 * DELETE with a residual asks the user, chunk by chunk; new records are
 * checked and put in place once every chunk is decided. */
int deliver_rows(struct px_worker *w, struct stmt *s, struct px_io *io, int *io_err)
{
	const size_t S = w->st->g.S;
	size_t n = s->nsrow + s->nmoved - s->nmates, k = s->nsrow;
	uint8_t **recs;
	uint64_t *rows;

	if (n == 0 || s->kind == ST_DROP)
		return LWC_OK;
	if (s->kind == ST_DELETE && !s->interactive) {
		for (size_t i = 0; i < s->nsrow; i++) {
			s->sdel[i] = 1;
			if (locset_push(&s->dels, s->srow[i]) != LWC_OK)
				return stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
			s->count++;
		}
		return LWC_OK;
	}
	recs = malloc(n * sizeof(*recs));
	rows = malloc(n * sizeof(*rows));
	if (recs == NULL || rows == NULL) {
		free(recs);
		free(rows);
		return stmt_fail(s, LWC_ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < s->nsrow; i++) {
		recs[i] = s->srec + i * S;
		rows[i] = s->srow[i];
	}
	for (size_t i = 0; i < s->nmoved; i++) {
		if (s->mmate[i])
			continue;                /* a group's other row: the stash's */
		recs[k] = s->mrec + i * S;
		rows[k++] = s->mrow[i];
	}
	s->batch_upd = s->nupds;
	s->npend = 0;
	if (s->interactive) {
		if (n > 0 && (*io_err = get_decisions(w, s, io, recs, rows, n, NULL, NULL)) != LWC_OK)
			s->aborted = 1;
	}
	for (size_t off = 0; off < n && !s->interactive && !s->aborted; ) {
		size_t cnt = n - off < CHUNK_ROWS ? n - off : CHUNK_ROWS;

		if (cnt * S > CHUNK_BYTES)
			cnt = CHUNK_BYTES / S ? CHUNK_BYTES / S : 1;
		if ((*io_err = send_records(io, s->req->seq, 0, recs + off, cnt, S)) == LWC_OK)
			s->count += cnt;
		else
			s->aborted = 1;
		off += cnt;
	}
	if (s->interactive)
		apply_decided(w, s);
	free(recs);
	free(rows);
	return s->aborted ? (s->err != LWC_OK ? s->err : LWC_ERR_ABORTED) : LWC_OK;
}

struct evgrp {
	uint64_t blk, grp, row;
	uint32_t table;
};

static int cmp_evgrp(const void *a, const void *b)
{
	const struct evgrp *x = a, *y = b;

	if (x->blk != y->blk)
		return x->blk < y->blk ? -1 : 1;
	if (x->grp != y->grp)
		return x->grp < y->grp ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* The groups in blocks after a commit (groups.h): rows that left their
 * blocks leave their groups; the rows of one group this statement wrote
 * into one block are a group there.  Out of memory, a group is not kept
 * (its rows move one by one: logged). */
static void note_groups(struct px_state *st, struct stmt *s)
{
	struct evgrp *e;
	uint64_t *rows;
	size_t nrun = 0;

	for (size_t i = 0; i < s->nmoved; i++)
		grp_forget(&st->grps, s->mrow[i]);
	for (size_t i = 0; i < s->dels.n; i++)
		grp_forget(&st->grps, s->dels.v[i]);
	if (s->nev < 2)
		return;
	e = malloc(s->nev * sizeof(*e));
	rows = malloc(s->nev * sizeof(*rows));
	if (e == NULL || rows == NULL) {
		log_warn("out of memory noting groups of rows: %zu rows written back go alone",
			 s->nev);
		goto out;
	}
	for (size_t i = 0; i < s->nev; i++) {
		e[i].blk = s->ev[i].blk;
		e[i].grp = s->ev[i].grp;
		e[i].row = s->ev[i].row;
		e[i].table = s->ev[i].table;
	}
	qsort(e, s->nev, sizeof(*e), cmp_evgrp);
	for (size_t i = 0; i < s->nev; i++) {
		rows[nrun++] = e[i].row;
		if (i + 1 < s->nev && e[i + 1].blk == e[i].blk && e[i + 1].grp == e[i].grp)
			continue;
		if (nrun > 1 && grp_note(&st->grps, e[i].grp, e[i].table, rows, nrun) != 0)
			log_warn("out of memory noting a group of %zu rows: they go alone", nrun);
		nrun = 0;
	}
out:
	free(e);
	free(rows);
}

/* The committed stash changes, in memory: rows written back or deleted
 * leave, rows moved or inserted come in, rows served are refreshed (a new
 * delay: they were touched again). */
void commit_stash(struct px_state *st, struct stmt *s)
{
	size_t nfresh = s->kind == ST_INSERT && s->via_stash ? s->req->insert->n_rows : 0;
	size_t nadd = s->nmoved + s->nsrow + nfresh;
	size_t ndel = s->nev + s->nsrow, a = 0, d = 0;
	uint64_t *adds = malloc((nadd + 1) * sizeof(uint64_t));
	uint32_t *tabs = malloc((nadd + 1) * sizeof(uint32_t));
	uint64_t *dels = malloc((ndel + 1) * sizeof(uint64_t));
	uint32_t tid = s->t ? s->t->id : 0;

	if (!adds || !tabs || !dels)
		goto fail;
	for (size_t i = 0; i < s->nev; i++)
		dels[d++] = s->ev[i].row;
	for (size_t i = 0; i < s->nmoved; i++)
		if (!s->mdel[i]) {
			adds[a] = s->mrow[i];
			tabs[a++] = tid;
		}
	for (size_t i = 0; i < s->nsrow; i++) {
		if (s->sshared[i])
			continue;                /* the writing-back statement's */
		if (s->kind == ST_DROP || s->sdel[i]) {
			dels[d++] = s->srow[i];
		} else {
			adds[a] = s->srow[i];
			tabs[a++] = tid;
		}
	}
	for (size_t i = 0; i < nfresh; i++) {
		adds[a] = st->next_rowid + i;
		tabs[a++] = tid;
	}
	if (stash_apply(st, dels, d, adds, tabs, a, nfresh, s->ids, s->gamma) != LWC_OK)
		goto fail;
	note_groups(st, s);
	atomic_fetch_add(&st->rows_relocated, s->nmoved);
	atomic_fetch_add(&st->group_mates_moved, s->nmates);
	atomic_fetch_add(&st->rows_evicted, s->nev);
	free(adds);
	free(tabs);
	free(dels);
	return;
fail:
	/* committed on disk; the next start reads the stash from there */
	log_error("out of memory updating the stash in memory: restart the proxy");
	free(adds);
	free(tabs);
	free(dels);
}
