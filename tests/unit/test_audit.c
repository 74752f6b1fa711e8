/*
 * test_audit.c - lwc-audit's trace reader and attacks (bench/audit_trace.c,
 * bench/audit_attacks.c) without a deployment: trace lines parsed and
 * refused, a trace file cut into statements (lines appended after opening,
 * a partial line at open, a missing WRITE, a foreign line), each attack on
 * hand-made statements with known answers, and the attacks on two simulated
 * proxies: one that leaves records in their blocks and fills one block with
 * INSERTs (every check must fail) and an ideal one whose READ sets are
 * fresh random blocks every time (every check must pass).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../bench/audit.h"

static char dir[64];

static int group_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lwc-test-audit-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- lines ------------------------------------------------------------------ */

static int parse(const char *s, struct au_line *l, uint64_t **buf, size_t *cap)
{
	return au_line_parse(s, strlen(s), l, buf, cap);
}

static void test_line_parse(void **state)
{
	uint64_t *buf = NULL;
	size_t cap = 0;
	struct au_line l;
	struct tm tm = { .tm_year = 2026 - 1900, .tm_mon = 10, .tm_mday = 24, .tm_hour = 16,
			 .tm_min = 56, .tm_sec = 2 };

	(void)state;
	assert_int_equal(parse("2026-11-24T16:56:02.123456Z conn=3 op=READ n=3 ids=1,5,9 "
			       "in=40 out=43270 status=ok", &l, &buf, &cap), LWC_OK);
	assert_true(fabs(l.t - ((double)timegm(&tm) + 0.123456)) < 1e-6);
	assert_int_equal(l.conn, 3);
	assert_string_equal(l.op, "READ");
	assert_int_equal(l.n, 3);
	assert_int_equal(l.ids[0], 1);
	assert_int_equal(l.ids[1], 5);
	assert_int_equal(l.ids[2], 9);
	assert_int_equal(l.in, 40);
	assert_int_equal(l.out, 43270);
	assert_true(l.ok);

	assert_int_equal(parse("1970-01-01T00:00:01.5Z conn=2 op=HELLO n=0 ids=- in=107 out=105 "
			       "status=ok", &l, &buf, &cap), LWC_OK);
	assert_true(fabs(l.t - 1.5) < 1e-9);
	assert_string_equal(l.op, "HELLO");
	assert_int_equal(l.n, 0);

	assert_int_equal(parse("2026-11-24T16:56:02.000001Z conn=9 op=WRITE n=1 ids=18446744073709551615 "
			       "in=1 out=27 status=LWC_ERR_VERSION", &l, &buf, &cap), LWC_OK);
	assert_int_equal(l.ids[0], UINT64_MAX);
	assert_false(l.ok);

	/* refused */
	static const char *const bad[] = {
		"",
		"hello world",
		"2026-11-24 16:56:02.123456Z conn=3 op=READ n=1 ids=1 in=1 out=1 status=ok",
		"2026-13-24T16:56:02.123456Z conn=3 op=READ n=1 ids=1 in=1 out=1 status=ok",
		"2026-11-24T16:56:02Z conn=3 op=READ n=1 ids=1 in=1 out=1 status=ok",
		"2026-11-24T16:56:02.1Z conn=3 op=READ n=2 ids=1 in=1 out=1 status=ok",
		"2026-11-24T16:56:02.1Z conn=3 op=READ n=1 ids=1,2 in=1 out=1 status=ok",
		"2026-11-24T16:56:02.1Z conn=3 op=READ n=1 ids=- in=1 out=1 status=ok",
		"2026-11-24T16:56:02.1Z conn=3 op=READ n=1 ids=1, in=1 out=1 status=ok",
		"2026-11-24T16:56:02.1Z conn=3 op=READ n=1 ids=1 in=1 status=ok",
		"2026-11-24T16:56:02.1Z conn=3 op=read n=1 ids=1 in=1 out=1 status=ok",
		"2026-11-24T16:56:02.1Z conn=3 op=READ n=1 ids=99999999999999999999 in=1 out=1 status=ok",
		"2026-11-24T16:56:02.1Z conn=x op=READ n=1 ids=1 in=1 out=1 status=ok",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(bad[i], &l, &buf, &cap), LWC_ERR_FORMAT);
	free(buf);
}

/* ---- the file ----------------------------------------------------------------- */

static void append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

struct seen {
	uint64_t ids[8];
	size_t nids, lines;
};

static int note_write(void *ctx, const uint64_t *ids, size_t n)
{
	struct seen *w = ctx;

	for (size_t i = 0; i < n && w->nids < 8; i++)
		w->ids[w->nids++] = ids[i];
	w->lines++;
	return LWC_OK;
}

static void test_trace_collect(void **state)
{
	char path[128], err[512];
	struct au_trace *t;
	struct au_obs o = { 0 };
	uint64_t n;

	(void)state;
	snprintf(path, sizeof(path), "%s/trace", dir);
	assert_int_equal(au_trace_open(&t, path, err, sizeof(err)), LWC_ERR_IO);
	assert_non_null(strstr(err, path));
	/* what was there before opening does not count; a partial line at open is skipped */
	append(path, "2026-11-24T16:56:01.000000Z conn=1 op=READ n=1 ids=7 in=1 out=1 status=ok\n"
	       "2026-11-24T16:56:01.000000Z conn=1 op=WRITE n=1 ids=7 in=1");
	assert_int_equal(au_trace_open(&t, path, err, sizeof(err)), LWC_OK);
	append(path, " out=1 status=ok\n"
	       "2026-11-24T16:56:01.500000Z conn=2 op=READ n=2 ids=3,4 in=1 out=1 status=ok\n"
	       "2026-11-24T16:56:01.600000Z conn=2 op=WRITE n=2 ids=3,4 in=1 out=1 status=ok\n");
	assert_int_equal(au_trace_skip(t, &n, err, sizeof(err)), LWC_OK);
	assert_int_equal(n, 2);
	/* the WRITE lines of other clients (--storm), in order */
	append(path, "2026-11-24T16:56:01.700000Z conn=5 op=READ n=2 ids=8,6 in=1 out=1 status=ok\n"
	       "2026-11-24T16:56:01.710000Z conn=6 op=HELLO n=0 ids=- in=107 out=105 status=ok\n"
	       "2026-11-24T16:56:01.720000Z conn=5 op=WRITE n=2 ids=8,6 in=1 out=1 status=ok\n"
	       "2026-11-24T16:56:01.730000Z conn=6 op=WRITE n=1 ids=12 in=1 out=1 status=ok\n");
	{
		struct seen w = { 0 };

		assert_int_equal(au_trace_writes(t, note_write, &w, &n, err, sizeof(err)), LWC_OK);
		assert_int_equal(n, 3);
		assert_int_equal(w.lines, 2);
		assert_int_equal(w.nids, 3);
		assert_int_equal(w.ids[0], 8);
		assert_int_equal(w.ids[1], 6);
		assert_int_equal(w.ids[2], 12);
	}
	/* one statement: two READ/WRITE pairs, a HELLO, ids repeated */
	append(path, "2026-11-24T16:56:02.000000Z conn=4 op=HELLO n=0 ids=- in=107 out=105 status=ok\n"
	       "2026-11-24T16:56:02.100000Z conn=4 op=READ n=3 ids=9,2,5 in=40 out=300 status=ok\n"
	       "2026-11-24T16:56:02.125000Z conn=4 op=WRITE n=3 ids=2,5,9 in=300 out=27 status=ok\n"
	       "2026-11-24T16:56:02.200000Z conn=4 op=READ n=2 ids=5,11 in=30 out=200 status=ok\n"
	       "2026-11-24T16:56:02.300000Z conn=4 op=WRITE n=2 ids=5,11 in=200 out=27 status=ok\n");
	assert_int_equal(au_trace_collect(t, &o, 100, err, sizeof(err)), LWC_OK);
	assert_int_equal(o.nrset, 4);
	assert_int_equal(o.rset[0], 2);
	assert_int_equal(o.rset[1], 5);
	assert_int_equal(o.rset[2], 9);
	assert_int_equal(o.rset[3], 11);
	assert_int_equal(o.read_blocks, 5);
	assert_int_equal(o.write_blocks, 5);
	assert_int_equal(o.read_ops, 2);
	assert_int_equal(o.write_ops, 2);
	assert_int_equal(o.bytes_in, 40 + 300 + 30 + 200);
	assert_int_equal(o.bytes_out, 300 + 27 + 200 + 27);
	assert_true(fabs(o.gap - 0.025) < 1e-6);
	/* a READ whose WRITE never comes */
	append(path, "2026-11-24T16:56:03.000000Z conn=4 op=READ n=1 ids=1 in=1 out=1 status=ok\n");
	assert_int_equal(au_trace_collect(t, &o, 30, err, sizeof(err)), LWC_ERR_TIMEOUT);
	assert_non_null(strstr(err, "no WRITE"));
	assert_null(o.rset);
	/* ... and nothing at all */
	assert_int_equal(au_trace_collect(t, &o, 30, err, sizeof(err)), LWC_ERR_TIMEOUT);
	assert_non_null(strstr(err, "no READ"));
	/* not a trace */
	append(path, "this is not a trace line\n");
	assert_int_equal(au_trace_skip(t, &n, err, sizeof(err)), LWC_ERR_FORMAT);
	assert_non_null(strstr(err, "not a cloud store trace line"));
	au_obs_free(&o);
	au_trace_close(t);
}

/* ---- attacks on hand-made statements ----------------------------------------------- */

static struct au_stmt mk(enum au_phase ph, enum au_kind kind, int64_t id, int32_t target,
			 uint64_t truth, const uint64_t *rset, size_t n)
{
	struct au_stmt s = { .phase = ph, .kind = kind, .id = id, .target = target, .k = 1,
			     .truth = truth };

	s.o.rset = malloc((n ? n : 1) * sizeof(*rset));
	assert_non_null(s.o.rset);
	memcpy(s.o.rset, rset, n * sizeof(*rset));
	s.o.nrset = n;
	s.o.read_blocks = s.o.write_blocks = n;
	s.o.read_ops = s.o.write_ops = 1;
	return s;
}

static void free_stmts(struct au_stmt *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		au_obs_free(&s[i].o);
		free(s[i].real);
	}
}

/* A read of range `target` (its rep-th) with ground truth real[0..nreal). */
static struct au_stmt mk_range(int32_t target, uint32_t rep, const uint64_t *rset, size_t n,
			       const uint64_t *real, uint32_t nreal)
{
	struct au_stmt s = mk(AU_P_RANGE, AU_RANGE, -1, target, AU_NO_BLOCK, rset, n);

	s.k = 100;
	s.rep = rep;
	s.kblocks = nreal;
	s.real = malloc((nreal ? nreal : 1) * sizeof(*real));
	assert_non_null(s.real);
	memcpy(s.real, real, nreal * sizeof(*real));
	return s;
}

static void test_shared_writer_known(void **state)
{
	struct au_stmt s[6];
	struct au_shared first, later;
	struct au_link L;
	struct au_rng rng;
	size_t n = 0;

	(void)state;
	/* s[0] writes 1, 2, 3; s[1] writes 4, 5.  s[2], a later read: 1 and 2
	 * share their writer (s[0]), 4 and 9 do not: guessed {1, 2}, real
	 * {1, 4}: one hit.  s[3], a first read: 3 (s[0]) and 5 (s[1]) share
	 * nothing.  s[4], a later read: 1 and 2 now share s[2]: guessed {1, 2},
	 * real {2, 6}: one hit.  s[5], a point SELECT, is not scored. */
	s[n++] = mk(AU_P_RANGE, AU_SELECT, 7, -1, 1, (uint64_t[]){ 1, 2, 3 }, 3);
	s[n++] = mk(AU_P_RANGE, AU_SELECT, 8, -1, 4, (uint64_t[]){ 4, 5 }, 2);
	s[n++] = mk_range(0, 1, (uint64_t[]){ 1, 2, 4, 9 }, 4, (uint64_t[]){ 1, 4 }, 2);
	s[n++] = mk_range(1, 0, (uint64_t[]){ 3, 5 }, 2, (uint64_t[]){ 3 }, 1);
	s[n++] = mk_range(0, 2, (uint64_t[]){ 1, 2, 6 }, 3, (uint64_t[]){ 2, 6 }, 2);
	s[n++] = mk(AU_P_RANGE, AU_SELECT, 9, -1, 1, (uint64_t[]){ 1, 2 }, 2);
	assert_int_equal(au_attack_shared_writer(s, n, 1, &later), LWC_OK);
	assert_int_equal(later.stmts, 2);
	assert_int_equal(later.blocks, 7);
	assert_int_equal(later.real, 4);
	assert_int_equal(later.guessed, 4);
	assert_int_equal(later.hits, 2);
	assert_int_equal(au_attack_shared_writer(s, n, 0, &first), LWC_OK);
	assert_int_equal(first.stmts, 1);
	assert_int_equal(first.blocks, 2);
	assert_int_equal(first.real, 1);
	assert_int_equal(first.guessed, 0);
	/* linkage of the range reads: s[2] and s[4] (range 0) overlap; the
	 * other pairs are of different ranges: s[3] meets neither */
	au_rng_seed(&rng, 7);
	assert_int_equal(au_attack_range_linkage(s, n, 100, &rng, &L), LWC_OK);
	assert_int_equal(L.same_pairs, 1);
	assert_int_equal(L.same_overlap, 1);
	assert_int_equal(L.diff_pairs, 100);
	assert_int_equal(L.diff_overlap, 0);
	free_stmts(s, n);

	/* 9: rows 1 and 2 of range 0 share block 2; rows 5 and 6 of range 1
	 * share nothing; no pair of different ranges overlaps; the statement
	 * of target -1 (a filler) is not paired */
	n = 0;
	s[n++] = mk(AU_P_COREAD, AU_SELECT, 1, 0, 2, (uint64_t[]){ 1, 2 }, 2);
	s[n++] = mk(AU_P_COREAD, AU_SELECT, 5, 1, 7, (uint64_t[]){ 7, 8 }, 2);
	s[n++] = mk(AU_P_COREAD, AU_SELECT, 2, 0, 2, (uint64_t[]){ 2, 3 }, 2);
	s[n++] = mk(AU_P_COREAD, AU_SELECT, 9, -1, 1, (uint64_t[]){ 1, 7, 9 }, 3);
	s[n++] = mk(AU_P_COREAD, AU_SELECT, 6, 1, 9, (uint64_t[]){ 9, 10 }, 2);
	assert_int_equal(au_attack_coread(s, n, 50, &rng, &L), LWC_OK);
	assert_int_equal(L.same_pairs, 2);
	assert_int_equal(L.same_overlap, 1);
	assert_int_equal(L.diff_pairs, 50);
	assert_int_equal(L.diff_overlap, 0);
	free_stmts(s, n);
}

static void test_intersection_known(void **state)
{
	struct au_stmt s[8];
	struct au_isect r2 = { .r = 2 }, r3 = { .r = 3 };
	size_t n = 0;

	(void)state;
	/* target 0: always in block 5 -> identified; target 1: moved -> empty;
	 * target 2: {1,2} left -> non-empty, not identified; target 3: one block
	 * left that is not where the record was -> not identified */
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 10, 0, 5, (uint64_t[]){ 1, 5, 9 }, 3);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 11, 1, 1, (uint64_t[]){ 1, 2 }, 2);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 12, 2, 1, (uint64_t[]){ 1, 2, 3 }, 3);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 10, 0, 5, (uint64_t[]){ 5, 7, 8 }, 3);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 11, 1, 4, (uint64_t[]){ 3, 4 }, 2);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 12, 2, 2, (uint64_t[]){ 1, 2, 4 }, 3);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 13, 3, 8, (uint64_t[]){ 6, 8 }, 2);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 13, 3, AU_NO_BLOCK, (uint64_t[]){ 6, 9 }, 2);
	assert_int_equal(au_attack_intersection(s, n, 4, &r2), LWC_OK);
	assert_int_equal(r2.targets, 4);
	assert_int_equal(r2.identified, 1);
	assert_int_equal(r2.nonempty, 3);
	assert_int_equal(au_attack_intersection(s, n, 4, &r3), LWC_OK);
	assert_int_equal(r3.targets, 0);           /* nobody was read 3 times */
	free_stmts(s, n);
}

static void test_linkage_known(void **state)
{
	struct au_stmt s[5];
	struct au_link l;
	struct au_rng rng;
	size_t n = 0;

	(void)state;
	au_rng_seed(&rng, 1);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 1, 0, 1, (uint64_t[]){ 1, 2 }, 2);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 1, 0, 1, (uint64_t[]){ 1, 3 }, 2);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 1, 0, 4, (uint64_t[]){ 4, 5 }, 2);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 2, -1, 6, (uint64_t[]){ 6, 7 }, 2);
	s[n++] = mk(AU_P_REPEAT, AU_SELECT, 3, -1, 8, (uint64_t[]){ 8, 9 }, 2);
	assert_int_equal(au_attack_linkage(s, n, 1, 1000, &rng, &l), LWC_OK);
	assert_int_equal(l.same_pairs, 3);         /* (0,1) (0,2) (1,2) */
	assert_int_equal(l.same_overlap, 1);       /* only (0,1) shares block 1 */
	assert_int_equal(l.diff_pairs, 1000);
	assert_int_equal(l.diff_overlap, 0);       /* different ids never share here */
	free_stmts(s, n);
}

static void test_recency_known(void **state)
{
	struct au_stmt s[6];
	struct au_recency y;
	size_t n = 0;

	(void)state;
	/* s[0]: blocks 1 and 2 never written, tied: half a hit; s[1] a range
	 * SELECT (not counted) writes 3 and 4; s[2]: 4 (s[1]) is younger than
	 * 1 (s[0]) and 7 (never): a hit; s[3]: 3 (s[1]) is younger than 2
	 * (s[0]) but the record is in 2: a miss; s[4]: 5 and 6 never written:
	 * half; s[5]: the row in the stash, not counted */
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 1, 0, 1, (uint64_t[]){ 1, 2 }, 2);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 2, 1, 3, (uint64_t[]){ 3, 4 }, 2);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 3, 2, 4, (uint64_t[]){ 1, 4, 7 }, 3);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 4, 3, 2, (uint64_t[]){ 2, 3 }, 2);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 5, 4, 5, (uint64_t[]){ 5, 6 }, 2);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 6, 5, AU_NO_BLOCK, (uint64_t[]){ 8, 9 }, 2);
	s[1].k = 10;
	assert_int_equal(au_attack_recency(s, n, 0, &y), LWC_OK);
	assert_int_equal(y.tries, 4);            /* s[0], s[2], s[3], s[4] */
	assert_true(fabs(y.hits - 2.0) < 1e-9);
	assert_true(fabs(y.chance - (0.5 + 1.0 / 3 + 0.5 + 0.5)) < 1e-9);
	free_stmts(s, n);
}

/* The writes of other clients (--storm's WRITE lines) move a block to the
 * front of the order the recency attack guesses by, and are not scored. */
static void test_recency_storm(void **state)
{
	struct au_stmt s[4];
	struct au_recency y;
	size_t n = 0;

	(void)state;
	/* s[0] writes 1 and 2; a storm WRITE of 2 makes 2 the younger; s[2]
	 * reads 1, 2 and 3 with its record in 2: a hit (half, a tie, without s[1]) */
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 1, 0, AU_NO_BLOCK, (uint64_t[]){ 1, 2 }, 2);
	s[n++] = mk(AU_P_STORM, AU_SELECT, -1, -1, AU_NO_BLOCK, (uint64_t[]){ 2 }, 1);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 2, 1, 2, (uint64_t[]){ 1, 2, 3 }, 3);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 3, 2, 1, (uint64_t[]){ 1, 4 }, 2);
	s[1].k = 0;
	assert_int_equal(au_attack_recency(s, n, 0, &y), LWC_OK);
	assert_int_equal(y.tries, 2);            /* s[2], s[3]: not the storm's line */
	/* s[2]: 2 is the youngest: a hit; s[3]: 1 (s[2]) against 4 (never): a hit */
	assert_true(fabs(y.hits - 2.0) < 1e-9);
	/* the storm's writes left out: s[2] sees 1 and 2 tied (half), s[3] a hit */
	assert_int_equal(au_attack_recency(s, n, 1, &y), LWC_OK);
	assert_int_equal(y.tries, 2);
	assert_true(fabs(y.hits - 1.5) < 1e-9);
	free_stmts(s, n);
}

static void test_frequency_known(void **state)
{
	struct au_stmt s[16];
	struct au_freq f;
	size_t n = 0;

	(void)state;
	/* rank 0 read from block 7 three times (and once from 3): block 7 is
	 * the most read; rank 1 from block 2 once, block 9 once: a tie that goes
	 * to 9, read first; rank 2 only from the stash: no block */
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 100, 0, 7, (uint64_t[]){ 7, 20 }, 2);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 101, 1, 9, (uint64_t[]){ 9, 21 }, 2);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 100, 0, 7, (uint64_t[]){ 7, 22 }, 2);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 101, 1, 2, (uint64_t[]){ 2, 23 }, 2);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 100, 0, 3, (uint64_t[]){ 3, 24 }, 2);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 100, 0, 7, (uint64_t[]){ 7, 25 }, 2);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 102, 2, AU_NO_BLOCK, (uint64_t[]){ 26, 27 }, 2);
	s[n++] = mk(AU_P_ZIPF, AU_SELECT, 103, 3, 2, (uint64_t[]){ 2, 28 }, 2);
	assert_int_equal(au_attack_frequency(s, n, 2, 0, &f), LWC_OK);
	/* counts: 7 x3, 2 x2, everything else x1 -> top 2 = {7, 2} */
	assert_int_equal(f.top, 2);
	assert_int_equal(f.statements, n);
	assert_int_equal(f.stash_reads, 1);
	assert_int_equal(f.top_reads[0], 3);
	assert_int_equal(f.top_reads[1], 2);
	assert_int_equal(f.hot_with_block, 2);     /* ranks 0 and 1 */
	assert_int_equal(f.hits, 1);               /* rank 0 (7); rank 1's block is 9 */
	/* chance: 2 ids x the top blocks' 5 of 16 READs */
	assert_true(fabs(f.chance - 2.0 * 5 / 16) < 1e-9);
	free_stmts(s, n);
}

/* The --check verdicts: every check in an array of exactly AU_MAX_CHECKS
 * (on the heap: ASan sees one too many), frequency and recency beyond
 * their chance, and each limit's edge. */
/* Statements 1..n of a trace, of random types, sent back to back in the
 * timing phase (0 and n + 1 outside it): each access takes 0.5 ms, and
 * the interval after it 0.8-0.9 ms plus extra(its type). */
static void pace_trace(struct au_stmt *s, int n, struct au_rng *rng,
		       double (*extra)(enum au_kind, struct au_rng *))
{
	double t = 1000.0;

	s[0].phase = AU_P_TYPES;              /* before the phase */
	s[0].o.read_ops = 1;
	for (int i = 1; i <= n; i++) {
		enum au_kind k = (enum au_kind)au_rng_below(rng, 4);
		double jitter = (double)au_rng_below(rng, 100) * 1e-6;

		s[i].phase = AU_P_PACE;
		s[i].kind = k;
		s[i].o.read_ops = s[i].o.write_ops = 1;
		s[i].o.t_first = t;
		s[i].o.t_last = t + 0.0005;
		t += 0.0005 + 0.0008 + jitter + extra(k, rng);
	}
	s[n + 1] = s[0];
}

static double extra_by_type(enum au_kind k, struct au_rng *rng)
{
	(void)rng;
	return 0.0001 * (int)k;
}

static double extra_none(enum au_kind k, struct au_rng *rng)
{
	(void)k;
	(void)rng;
	return 0;
}

/* one UPDATE in seven 3 ms later */
static double extra_update_tail(enum au_kind k, struct au_rng *rng)
{
	return k == AU_UPDATE && au_rng_below(rng, 7) == 0 ? 0.003 : 0;
}

/* The intervals between statements sent back to back: an interval after
 * the WRITE that grows with the type is found; the same one for all is
 * chance; statements outside the phase, or at its ends, are not scored. */
static void test_interval_known(void **state)
{
	enum { N = 800 };
	struct au_stmt *s = calloc(N + 2, sizeof(*s));
	struct au_interval iv;
	struct au_rng rng;

	(void)state;
	assert_non_null(s);
	au_rng_seed(&rng, 7);
	for (int pass = 0; pass < 2; pass++) {
		/* pass 0: 0.1 ms more after each type; pass 1: the same */
		pace_trace(s, N, &rng, pass == 0 ? extra_by_type : extra_none);
		assert_int_equal(au_attack_interval(s, N + 2, 25, &rng, &iv), LWC_OK);
		assert_int_equal(iv.per_kind[0] + iv.per_kind[1] + iv.per_kind[2] +
				 iv.per_kind[3], N - 2);
		if (pass == 0) {
			assert_true((double)iv.correct_next / (double)iv.tested_next > 0.6);
			assert_true((double)iv.correct / (double)iv.tested > 0.5);
			assert_true(iv.median_next_ms[3] > iv.median_next_ms[0] + 0.25);
		} else {
			assert_true((double)iv.correct_next / (double)iv.tested_next < 0.32);
			assert_true((double)iv.correct / (double)iv.tested < 0.32);
		}
		/* the interval before a statement is after the one before it */
		assert_true((double)iv.correct_prev / (double)iv.tested_prev < 0.32);
	}
	free(s);
}

/* The tails: every type's intervals have the same median, but one in
 * seven of UPDATE's after-intervals is 3 ms longer.  Its share past the
 * pooled 95th and 99th percentiles after the WRITE stands out; the others',
 * and every share before the READ, stay near the chance ones. */
static void test_interval_tail(void **state)
{
	enum { N = 4000 };
	struct au_stmt *s = calloc(N + 2, sizeof(*s));
	struct au_interval iv;
	struct au_rng rng;

	(void)state;
	assert_non_null(s);
	au_rng_seed(&rng, 11);
	pace_trace(s, N, &rng, extra_update_tail);
	assert_int_equal(au_attack_interval(s, N + 2, 25, &rng, &iv), LWC_OK);
	assert_true(iv.p95_ms[1] > 0.8 && iv.p95_ms[1] < 0.9);
	assert_true(iv.p99_ms[1] > 3.8 && iv.p99_ms[1] < 3.9);
	assert_true(iv.past95[1][AU_UPDATE] > 0.12);
	assert_true(iv.past99[1][AU_UPDATE] > 0.03);
	for (int k = 0; k < 4; k++) {
		assert_true(iv.past95[0][k] > 0.02 && iv.past95[0][k] < 0.09);
		if (k == AU_UPDATE)
			continue;
		assert_true(iv.past95[1][k] < 0.04);
		assert_true(iv.past99[1][k] < 0.01);
	}
	free(s);
}

static void test_checks(void **state)
{
	struct au_results *R = calloc(1, sizeof(*R));
	struct au_check *c = malloc(AU_MAX_CHECKS * sizeof(*c));
	size_t n;

	(void)state;
	assert_non_null(R);
	assert_non_null(c);
	R->nisect = AU_NISECT;
	for (int i = 0; i < AU_NISECT; i++) {
		R->isect[i].r = au_isect_r[i];
		R->isect[i].targets = 50;
		R->isect[i].identified = i == 0 ? 3 : 2;        /* 0.06 fails, 0.04 passes */
	}
	R->link.same_pairs = R->link.diff_pairs = 1000;
	R->link.same_overlap = 60;
	R->link.diff_overlap = 20;                              /* 0.04: passes */
	R->freq.hits = 4;
	R->freq.chance = 1.5;                                   /* 2.5 beyond: fails */
	R->type.tested = 100;
	R->type.correct = 30;                                   /* 0.30: passes */
	R->type.per_kind[AU_INSERT] = R->type.per_kind[AU_SELECT] = 100;
	R->type.recurrent[AU_INSERT] = 20;
	R->type.recurrent[AU_SELECT] = 14;                      /* 0.06: fails */
	R->interval.tested = 1000;
	R->interval.correct = 310;                              /* 0.31: fails */
	R->recency.tries = 1000;
	R->recency.chance = 250;
	R->recency.hits = 275;                                  /* 0.025: passes */
	R->stormed = 1;
	R->recency_quiet.tries = 1000;
	R->recency_quiet.chance = 250;
	R->recency_quiet.hits = 285;                            /* 0.035: fails */
	R->rlink.same_pairs = 100;
	R->rlink.same_overlap = 30;
	R->rlink.diff_pairs = 1000;
	R->rlink.diff_overlap = 200;                            /* 0.10: fails */
	R->shared[1].stmts = 40;
	R->shared[1].blocks = 1000;
	R->shared[1].real = 100;
	R->shared[1].guessed = 50;
	R->shared[1].hits = 9;                                  /* 0.08: passes */
	R->coread.same_pairs = R->coread.diff_pairs = 1000;
	R->coread.same_overlap = 100;
	R->coread.diff_overlap = 40;                            /* 0.06: fails */
	n = au_checks(R, c);
	assert_int_equal(n, AU_MAX_CHECKS);
	assert_int_equal(c[0].pass, 0);
	assert_int_equal(c[1].pass, 1);
	assert_int_equal(c[AU_NISECT].pass, 1);                 /* linkage */
	assert_int_equal(c[AU_NISECT + 1].pass, 0);             /* frequency */
	assert_true(fabs(c[AU_NISECT + 1].value - 2.5) < 1e-9);
	assert_int_equal(c[AU_NISECT + 2].pass, 1);             /* type */
	assert_int_equal(c[AU_NISECT + 3].pass, 0);             /* recurrence */
	assert_int_equal(c[AU_NISECT + 4].pass, 0);             /* type, intervals */
	assert_true(strstr(c[AU_NISECT + 4].name, "intervals") != NULL);
	assert_true(fabs(c[AU_NISECT + 4].value - 0.31) < 1e-9);
	assert_int_equal(c[AU_NISECT + 5].pass, 1);             /* recency */
	assert_true(strstr(c[AU_NISECT + 5].name, "recency") != NULL);
	assert_int_equal(c[AU_NISECT + 6].pass, 0);             /* recency, storm left out */
	assert_true(strstr(c[AU_NISECT + 6].name, "storm") != NULL);
	assert_true(fabs(c[AU_NISECT + 6].value - 0.035) < 1e-9);
	assert_int_equal(c[AU_NISECT + 7].pass, 0);             /* range linkage */
	assert_true(strstr(c[AU_NISECT + 7].name, "range linkage") != NULL);
	assert_int_equal(c[AU_NISECT + 8].pass, 1);             /* shared writer */
	assert_true(fabs(c[AU_NISECT + 8].value - 0.08) < 1e-9);
	assert_int_equal(c[AU_NISECT + 9].pass, 0);             /* co-read */
	assert_true(strstr(c[AU_NISECT + 9].name, "co-read") != NULL);
	assert_int_equal(c[AU_NISECT + 10].pass, 1);             /* ground truth */
	/* the recency leak of uniform padding fails; the frequency at chance passes */
	R->recency.hits = 394;
	R->freq.hits = 3;
	R->shared[1].hits = 11;                                 /* 0.12: fails */
	n = au_checks(R, c);
	assert_int_equal(c[AU_NISECT + 5].pass, 0);
	assert_int_equal(c[AU_NISECT + 1].pass, 1);
	assert_int_equal(c[AU_NISECT + 8].pass, 0);
	/* no range phase (--ranges 0): neither range check */
	memset(&R->rlink, 0, sizeof(R->rlink));
	memset(&R->shared, 0, sizeof(R->shared));
	memset(&R->coread, 0, sizeof(R->coread));
	assert_int_equal(au_checks(R, c), AU_MAX_CHECKS - 3);
	/* an audit without --storm: no check of the storm's order */
	R->stormed = 0;
	assert_int_equal(au_checks(R, c), AU_MAX_CHECKS - 4);
	/* an audit without its pace phase: no check of the intervals */
	memset(&R->interval, 0, sizeof(R->interval));
	assert_int_equal(au_checks(R, c), AU_MAX_CHECKS - 5);
	free(c);
	free(R);
}

/* ---- simulated proxies ------------------------------------------------------------ */

#define SIM_BLOCKS  1024u
#define SIM_ROWS    20000u
#define SIM_GAMMA   4u

struct sim {
	int leaky;                     /* records stay put, INSERTs fill one block */
	uint32_t *home;                /* row -> block (leaky model)               */
	uint64_t insert_block;
	struct au_rng rng;
};

/* The READ set of one access of a row: its block plus random padding (the
 * ideal model draws the row's block afresh each time: it moved). */
static struct au_stmt sim_access(struct sim *m, enum au_phase ph, enum au_kind kind,
				 int64_t id, int32_t target)
{
	uint64_t set[SIM_GAMMA], real;
	size_t k = 0;

	if (kind == AU_INSERT)
		real = m->leaky ? m->insert_block : au_rng_below(&m->rng, SIM_BLOCKS);
	else
		real = m->leaky ? m->home[id] : au_rng_below(&m->rng, SIM_BLOCKS);
	set[k++] = real;
	while (k < SIM_GAMMA) {
		uint64_t b = au_rng_below(&m->rng, SIM_BLOCKS);
		int dup = 0;

		for (size_t j = 0; j < k; j++)
			dup |= set[j] == b;
		if (!dup)
			set[k++] = b;
	}
	for (size_t i = 1; i < k; i++)             /* sorted, as the reader leaves them */
		for (size_t j = i; j > 0 && set[j - 1] > set[j]; j--) {
			uint64_t t = set[j];
			set[j] = set[j - 1];
			set[j - 1] = t;
		}
	struct au_stmt s = mk(ph, kind, id, target, kind == AU_INSERT ? AU_NO_BLOCK : real, set, k);
	s.o.gap = 0.003 + 0.001 * au_rng_double(&m->rng);
	s.o.bytes_in = s.o.bytes_out = 43300;
	return s;
}

static void simulate(int leaky, uint64_t seed, int expect_pass)
{
	struct sim m = { .leaky = leaky, .insert_block = 417 };
	size_t cap = 8000, n = 0;
	struct au_stmt *s = calloc(cap, sizeof(*s));
	struct au_isect is[3] = { { .r = 2 }, { .r = 3 }, { .r = 5 } };
	struct au_link l;
	struct au_freq f;
	struct au_type ty;
	struct au_recency y;
	struct au_rng rng;
	double cdf[1000], total = 0;

	assert_non_null(s);
	assert_non_null(m.home = malloc((SIM_ROWS + 1) * sizeof(*m.home)));
	au_rng_seed(&m.rng, seed);
	au_rng_seed(&rng, seed + 1);
	for (uint32_t i = 0; i <= SIM_ROWS; i++)
		m.home[i] = (uint32_t)au_rng_below(&m.rng, 417);
	/* repetition: 50 targets x 5 among 500 others */
	{
		int32_t seq[750];
		size_t k = 0;

		for (int t = 0; t < 50; t++)
			for (int r = 0; r < 5; r++)
				seq[k++] = t;
		for (int o = 0; o < 500; o++)
			seq[k++] = -1 - o;
		au_rng_shuffle(&m.rng, seq, k, sizeof(*seq));
		for (size_t i = 0; i < k; i++)
			s[n++] = sim_access(&m, AU_P_REPEAT, AU_SELECT,
					    seq[i] >= 0 ? 1 + seq[i] : 1000 - seq[i],
					    seq[i] >= 0 ? seq[i] : -1);
	}
	/* Zipf */
	for (int r = 0; r < 1000; r++) {
		total += 1.0 / (r + 1);
		cdf[r] = total;
	}
	for (int q = 0; q < 2000; q++) {
		double u = au_rng_double(&m.rng) * total;
		int r = 0;

		while (r < 999 && cdf[r] <= u)
			r++;
		s[n++] = sim_access(&m, AU_P_ZIPF, AU_SELECT, 5000 + r, r);
	}
	/* types: 400 each, after 5 warm-up statements */
	for (int w = 0; w < 5; w++)
		s[n++] = sim_access(&m, AU_P_WARM, AU_SELECT, 7000 + w, -1);
	{
		enum au_kind kinds[1600];

		for (int i = 0; i < 1600; i++)
			kinds[i] = (enum au_kind)(i % 4);
		au_rng_shuffle(&m.rng, kinds, 1600, sizeof(*kinds));
		for (int i = 0; i < 1600; i++)
			s[n++] = sim_access(&m, AU_P_TYPES, kinds[i], 8000 + i, -1);
	}
	assert_true(n <= cap);

	for (int i = 0; i < 3; i++)
		assert_int_equal(au_attack_intersection(s, n, 50, &is[i]), LWC_OK);
	assert_int_equal(au_attack_linkage(s, n, 50, 4000, &rng, &l), LWC_OK);
	assert_int_equal(au_attack_frequency(s, n, 20, 0, &f), LWC_OK);
	assert_int_equal(au_attack_type(s, n, 5, 25, &rng, &ty), LWC_OK);
	assert_int_equal(au_attack_recency(s, n, 0, &y), LWC_OK);

	double adv = (double)l.same_overlap / (double)l.same_pairs -
		     (double)l.diff_overlap / (double)l.diff_pairs;
	double acc = (double)ty.correct / (double)ty.tested;
	double recency = (y.hits - y.chance) / (double)y.tries;
	double rec = fabs((double)ty.recurrent[AU_INSERT] / ty.per_kind[AU_INSERT] -
			  (double)ty.recurrent[AU_SELECT] / ty.per_kind[AU_SELECT]);

	assert_int_equal(is[0].targets, 50);
	assert_int_equal(l.same_pairs, 50 * 10);
	assert_int_equal(ty.per_kind[AU_SELECT], 400);
	assert_int_equal(ty.tested, 25 * 800);
	if (expect_pass) {
		for (int i = 0; i < 3; i++)
			assert_true(is[i].identified <= 2);          /* <= 0.05 of 50 */
		assert_true(fabs(adv) <= 0.05);
		assert_true(f.hits - f.chance <= 2);
		assert_true(acc <= 0.30);
		assert_true(rec <= 0.05);
		assert_true(recency <= 0.03);
	} else {
		for (int i = 0; i < 3; i++)
			assert_true(is[i].identified >= 45);
		assert_true(adv > 0.9);
		assert_true(f.hits >= 10);
		assert_true(f.hits - f.chance > 5);
		assert_true(acc > 0.30);
		assert_true(rec > 0.5);
		assert_true(recency > 0.1);
	}
	free_stmts(s, n);
	free(s);
	free(m.home);
}

static void test_sim_leaky(void **state)
{
	(void)state;
	simulate(1, 42, 0);
}

static void test_sim_ideal(void **state)
{
	(void)state;
	simulate(0, 42, 1);
}

/* ---- the generator --------------------------------------------------------------- */

static void test_rng(void **state)
{
	struct au_rng a, b;
	uint64_t hist[10] = { 0 };
	int perm[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, seen = 0;

	(void)state;
	au_rng_seed(&a, 7);
	au_rng_seed(&b, 7);
	for (int i = 0; i < 100; i++)
		assert_int_equal(au_rng_next(&a), au_rng_next(&b));
	for (int i = 0; i < 100000; i++)
		hist[au_rng_below(&a, 10)]++;
	for (int i = 0; i < 10; i++)
		assert_true(hist[i] > 9500 && hist[i] < 10500);
	for (int i = 0; i < 1000; i++) {
		double d = au_rng_double(&a);
		assert_true(d >= 0.0 && d < 1.0);
	}
	au_rng_shuffle(&a, perm, 8, sizeof(*perm));
	for (int i = 0; i < 8; i++)
		seen |= 1 << perm[i];
	assert_int_equal(seen, 0xff);
	double v[5] = { 5, 1, 4, 2, 3 };
	assert_true(au_median(v, 5) == 3.0);
	assert_true(au_median(v, 4) == 2.5);
	assert_true(au_median(v, 0) == 0.0);
}

/* n statements of one storm thread, each taken as run; n_kind[] counts
 * them by kind, and no thread ever inserts past its ids. */
static void storm_count(const struct au_storm_cfg *cfg, struct au_storm_ids *ids,
			struct au_rng *rng, int n, uint64_t n_kind[4])
{
	char sql[8192];

	memset(n_kind, 0, 4 * sizeof(*n_kind));
	for (int i = 0; i < n; i++) {
		enum au_storm_kind k = au_storm_next(cfg, ids, rng, sql, sizeof(sql));

		n_kind[k]++;
		au_storm_ran(cfg, ids, k);
		assert_true(ids->next <= ids->end);
	}
}

/* The storm's statements (audit_storm_sql.c): reads and UPDATEs of ranges of
 * the loaded ids, INSERTs of the thread's own ids, DELETEs of exactly the
 * batches it inserted, oldest first, in the shares the comment gives. */
static void test_storm_statements(void **state)
{
	struct au_storm_cfg cfg = { .table = "t", .clients = 8, .rows = 100, .id_max = 1000 };
	struct au_storm_ids ids;
	struct au_rng rng;
	char sql[8192];
	uint64_t n[4] = { 0 }, ni = au_storm_insert_rows(&cfg);
	int64_t fifo[AU_STORM_BATCHES], lo, hi, first = AU_STORM_ID_BASE + 3 * AU_STORM_ID_SPAN;
	size_t head = 0, count = 0;

	(void)state;
	assert_int_equal(ni, 10);
	au_rng_seed(&rng, 11);
	au_storm_ids_init(&ids, 3);
	for (int i = 0; i < 1000; i++) {              /* no writes: range reads */
		assert_int_equal(au_storm_next(&cfg, &ids, &rng, sql, sizeof(sql)), AU_SK_READ);
		assert_int_equal(sscanf(sql, "SELECT * FROM t WHERE id BETWEEN %ld AND %ld", &lo,
					&hi), 2);
		assert_true(lo >= 1 && hi <= 1000 && hi - lo + 1 == 100);
	}
	cfg.writes = 100;
	for (int i = 0; i < 20000; i++) {
		enum au_storm_kind k = au_storm_next(&cfg, &ids, &rng, sql, sizeof(sql));
		int64_t id, prev = 0;
		const char *p;
		int got = 0;

		n[k]++;
		switch (k) {
		case AU_SK_READ:
			fail_msg("a read with every statement a write: %s", sql);
			break;
		case AU_SK_UPDATE:
			assert_int_equal(sscanf(sql, "UPDATE t SET v = v + 1 WHERE id BETWEEN %ld "
						"AND %ld", &lo, &hi), 2);
			assert_true(lo >= 1 && hi <= 1000 && hi - lo + 1 == 100);
			break;
		case AU_SK_INSERT:
			assert_true(strncmp(sql, "INSERT INTO t VALUES (", 22) == 0);
			for (p = strchr(sql, '('); p; p = strchr(p + 1, '(')) {
				assert_int_equal(sscanf(p, "(%ld,", &id), 1);
				assert_true(got == 0 ? id == ids.next : id == prev + 1);
				assert_true(id >= first && id < first + AU_STORM_ID_SPAN);
				prev = id;
				got++;
			}
			assert_int_equal(got, ni);
			assert_true(count < AU_STORM_BATCHES);
			fifo[(head + count++) % AU_STORM_BATCHES] = ids.next;
			break;
		case AU_SK_DELETE:
			assert_int_equal(sscanf(sql, "DELETE FROM t WHERE id BETWEEN %ld AND %ld", &lo,
						&hi), 2);
			assert_true(count > 0);
			assert_true(lo == fifo[head] && hi == lo + (int64_t)ni - 1);
			head = (head + 1) % AU_STORM_BATCHES;
			count--;
			break;
		}
		au_storm_ran(&cfg, &ids, k);
		assert_int_equal(ids.count, count);
	}
	/* half UPDATEs, the rest INSERTs and DELETEs in step */
	assert_true(n[AU_SK_UPDATE] > 9500 && n[AU_SK_UPDATE] < 10500);
	assert_true(n[AU_SK_INSERT] >= n[AU_SK_DELETE] &&
		    n[AU_SK_INSERT] - n[AU_SK_DELETE] <= AU_STORM_BATCHES);
	/* a quarter of the statements write */
	cfg.writes = 25;
	storm_count(&cfg, &ids, &rng, 20000, n);
	assert_true(n[AU_SK_READ] > 14500 && n[AU_SK_READ] < 15500);
	/* the thread's ids run out: no INSERT past them */
	au_storm_ids_init(&ids, 0);
	ids.end = ids.next + 2 * (int64_t)ni;
	cfg.writes = 100;
	storm_count(&cfg, &ids, &rng, 2000, n);
	assert_int_equal(n[AU_SK_INSERT], 2);
	assert_true(n[AU_SK_DELETE] <= 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_parse),
		cmocka_unit_test(test_trace_collect),
		cmocka_unit_test(test_intersection_known),
		cmocka_unit_test(test_linkage_known),
		cmocka_unit_test(test_frequency_known),
		cmocka_unit_test(test_recency_known),
		cmocka_unit_test(test_recency_storm),
		cmocka_unit_test(test_shared_writer_known),
		cmocka_unit_test(test_interval_known),
		cmocka_unit_test(test_interval_tail),
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_sim_leaky),
		cmocka_unit_test(test_sim_ideal),
		cmocka_unit_test(test_rng),
		cmocka_unit_test(test_storm_statements),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
