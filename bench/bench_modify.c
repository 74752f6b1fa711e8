/*
 * bench_modify.c - INSERT, UPDATE and DELETE of 1,000 .. 1,000,000 rows
 * (the paper's Figs. 8-10) in a table m with the workload's columns and no
 * unique column (--modify-pk gives it one), the same statements on both
 * systems, each size once; and UPDATE-PK, 100k rows of clus with its key.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static void print_mod_header(void)
{
	out("\n== INSERT, UPDATE, DELETE of K rows: table m (%s), INSERT as statements of up "
	    "to %u rows,\n   UPDATE m SET pad = ... WHERE cK = v, DELETE FROM m WHERE cK = v; "
	    "UPDATE-PK: UPDATE clus SET pad = ... WHERE c100k = v\n",
	    O.modify_pk ? "id BIGINT PRIMARY KEY" : "no unique column", O.batch);
	out("%-9s %9s %6s %11s %12s %11s %12s %8s %10s %10s\n", "op", "rows", "stmts", "LWC s",
	    "LWC rows/s", "PG s", "PG rows/s", "LWC/PG", "LWC B/row", "PG B/row");
}

static void print_mod(const struct mod_res *m)
{
	char kb[32];

	out("%-9s %9s %6u %11.3f %12.0f %11.3f %12.0f %7.2fx %10.0f %10.0f\n", m->op,
	    size_name(m->rows, kb, sizeof(kb)), m->stmts, m->lwc_s, m->rows / m->lwc_s, m->pg_s,
	    m->rows / m->pg_s, m->lwc_s / m->pg_s, (double)m->lwc_written / (double)m->rows,
	    (double)m->pg_written / (double)m->rows);
}

/* What a line made each side write to storage: LWC's proxy and cloud store
 * commit every statement's pages; PostgreSQL writes WAL and leaves its
 * pages to the next checkpoint, which is forced here (not timed) so both
 * count what they made durable.  The two sides' statements alternate, so
 * each one's writes are charged to its side as it ends (storage_written:
 * one device counter for both when they share a disk). */
static uint64_t wmark[2];
static int wshared;

static void charge(struct mod_res *m, int pg)
{
	uint64_t now = storage_written(pg ? pg_dir : work_dir);

	*(pg ? &m->pg_written : &m->lwc_written) += now - wmark[pg];
	wmark[pg] = now;
	if (wshared)
		wmark[!pg] = now;
}

static void written_begin(struct mod_res *m)
{
	m->lwc_written = m->pg_written = 0;
	wshared = storage_shared(work_dir, pg_dir);
	wmark[0] = storage_written(work_dir);
	wmark[1] = wshared ? wmark[0] : storage_written(pg_dir);
}

static void written_end(PGconn *p, struct mod_res *m)
{
	PQclear(PQexec(p, "CHECKPOINT"));
	charge(m, 1);
}

void run_modify(lwc_conn *c, PGconn *p, struct rng *rng)
{
	struct sb b = { 0 };
	char sql[512], newpad[PADLEN + 1];
	int nsz = 0;

	print_mod_header();
	snprintf(sql, sizeof(sql), "CREATE TABLE m %s", O.modify_pk ? SCHEMA_COLS : SCHEMA_COLS_NOPK);
	lwc_cmd(c, sql);
	pg_cmd(p, "DROP TABLE IF EXISTS m");
	pg_cmd(p, sql);
	if (!O.modify_pk)
		pg_cmd(p, "CREATE INDEX ON m (id)");
	for (int i = 0; i < NSIZES; i++) {
		snprintf(sql, sizeof(sql), "CREATE INDEX ON m (%s)", COLS[i]);
		pg_cmd(p, sql);
	}
	memset(newpad, 'u', PADLEN);
	newpad[PADLEN] = '\0';
	for (int si = 1; si < NSIZES; si++)
		if (SIZES[si] <= O.records)
			nsz = si + 1;
	for (int pass = 0; pass < 3; pass++) {
		static const char *const ops[3] = { "INSERT", "UPDATE", "DELETE" };

		for (int si = 1; si < nsz; si++) {
			uint64_t k = SIZES[si], base = (uint64_t)si * MOD_BASE, v = base / k;
			struct mod_res *m = &MODS[nmods];
			double t0;
			char kb[32];

			m->op = ops[pass];
			m->rows = k;
			m->stmts = 0;
			written_begin(m);
			if (pass == 0) {
				/* the same statements on both, alternating which goes first */
				m->lwc_s = m->pg_s = 0;
				for (uint64_t off = 0; off < k; off += O.batch) {
					uint64_t n = k - off < O.batch ? k - off : O.batch, got;

					insert_sql(&b, "m", NULL, base, off, n);
					quiet_start();
					t0 = now_s();
					if ((got = lwc_cmd(c, b.s)) != n)
						die("LWC INSERT into m: %llu rows, expected %llu",
						    (unsigned long long)got, (unsigned long long)n);
					m->lwc_s += now_s() - t0;
					/* what LWC writes after (its store's compaction) is
					 * LWC's, charged once it is quiet */
					quiet_start();
					charge(m, 0);
					t0 = now_s();
					pg_cmd(p, b.s);
					m->pg_s += now_s() - t0;
					charge(m, 1);
					m->stmts++;
					progress("INSERT %s rows: %llu / %llu",
						 size_name(k, kb, sizeof(kb)),
						 (unsigned long long)(off + n), (unsigned long long)k);
				}
			} else {
				uint64_t got;

				if (pass == 1)
					snprintf(sql, sizeof(sql), "UPDATE m SET pad = '%s' WHERE %s = %llu",
						 newpad, COLS[si], (unsigned long long)v);
				else
					snprintf(sql, sizeof(sql), "DELETE FROM m WHERE %s = %llu",
						 COLS[si], (unsigned long long)v);
				progress("%s %s rows (LWC)", ops[pass], size_name(k, kb, sizeof(kb)));
				quiet_start();
				t0 = now_s();
				if ((got = lwc_cmd(c, sql)) != k)
					die("LWC: %s: %llu rows, expected %llu", sql,
					    (unsigned long long)got, (unsigned long long)k);
				m->lwc_s = now_s() - t0;
				quiet_start();
				charge(m, 0);
				progress("%s %s rows (PostgreSQL)", ops[pass],
					 size_name(k, kb, sizeof(kb)));
				t0 = now_s();
				if ((got = pg_cmd(p, sql)) != k)
					die("PostgreSQL: %s: %llu rows, expected %llu", sql,
					    (unsigned long long)got, (unsigned long long)k);
				m->pg_s = now_s() - t0;
				m->stmts = 1;
			}
			written_end(p, m);
			nmods++;
			print_mod(m);
		}
	}
	/* UPDATE of 100k rows of a table with a PRIMARY KEY (clus): the
	 * proxy checks the new values of every unique column */
	if (O.records >= 100000 && (O.only & EXP_LOAD) && !O.modify_pk) {
		struct mod_res *m = &MODS[nmods];
		uint64_t k = 100000, v = rng_below(rng, O.records / k), got;
		double t0;

		snprintf(sql, sizeof(sql), "UPDATE clus SET pad = '%s' WHERE c100k = %llu", newpad,
			 (unsigned long long)v);
		m->op = "UPDATE-PK";
		m->rows = k;
		m->stmts = 1;
		written_begin(m);
		progress("UPDATE of 100k rows of clus (LWC)");
		quiet_start();
		t0 = now_s();
		if ((got = lwc_cmd(c, sql)) != k)
			die("LWC: %s: %llu rows, expected %llu", sql, (unsigned long long)got,
			    (unsigned long long)k);
		m->lwc_s = now_s() - t0;
		quiet_start();
		charge(m, 0);
		progress("UPDATE of 100k rows of clus (PostgreSQL)");
		t0 = now_s();
		if ((got = pg_cmd(p, sql)) != k)
			die("PostgreSQL: %s: %llu rows, expected %llu", sql, (unsigned long long)got,
			    (unsigned long long)k);
		m->pg_s = now_s() - t0;
		written_end(p, m);
		nmods++;
		print_mod(m);
	}
	free(b.s);
}
