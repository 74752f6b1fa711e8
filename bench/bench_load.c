/*
 * bench_load.c - the workload's rows and the bulk load.  Records are 128
 * bytes: (id, c100, c1k, c10k, c100k, c1m, pad) with cK = id / K, so
 * `cK = v` selects K rows, and pad 64 letters drawn from the id.  The same
 * rows go to LWC as multi-row INSERT statements (through liblwc, the SQL
 * text built inside the measured time) and to PostgreSQL by COPY, then its
 * primary key and one B-tree index per searched column.  clus is loaded in
 * id order (clustered on every cK at once), scat in a seeded random order.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* ---- data ------------------------------------------------------------------------ */

const char SCHEMA_COLS[] =
	"(id BIGINT PRIMARY KEY, c100 INT, c1k INT, c10k INT, c100k INT, c1m INT, "
	"pad VARCHAR(64))";
/* The modify table: no unique column unless --modify-pk (see run_modify). */
const char SCHEMA_COLS_NOPK[] =
	"(id BIGINT, c100 INT, c1k INT, c10k INT, c100k INT, c1m INT, pad VARCHAR(64))";

static void make_pad(uint64_t id, char *p)
{
	static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint64_t x = id * 0x9e3779b97f4a7c15ull + 1;

	for (int i = 0; i < PADLEN; i++) {
		uint64_t z = splitmix64(&x);
		p[i] = al[z % 62];
	}
}

/* "(id,c100,c1k,c10k,c100k,c1m,'pad')" */
static void row_sql(struct sb *b, uint64_t id)
{
	char pad[PADLEN];

	make_pad(id, pad);
	sb_put(b, "(", 1);
	sb_u64(b, id);
	for (int i = 0; i < NSIZES; i++) {
		sb_put(b, ",", 1);
		sb_u64(b, id / SIZES[i]);
	}
	sb_put(b, ",'", 2);
	sb_put(b, pad, PADLEN);
	sb_put(b, "')", 2);
}

/* COPY text format line. */
static void row_copy(struct sb *b, uint64_t id)
{
	char pad[PADLEN];

	make_pad(id, pad);
	sb_u64(b, id);
	for (int i = 0; i < NSIZES; i++) {
		sb_put(b, "\t", 1);
		sb_u64(b, id / SIZES[i]);
	}
	sb_put(b, "\t", 1);
	sb_put(b, pad, PADLEN);
	sb_put(b, "\n", 1);
}

void insert_sql(struct sb *b, const char *table, const uint64_t *order, uint64_t base,
		uint64_t from, uint64_t n)
{
	sb_reset(b);
	sb_printf(b, "INSERT INTO %s VALUES ", table);
	for (uint64_t i = 0; i < n; i++) {
		if (i)
			sb_put(b, ",", 1);
		row_sql(b, base + (order ? order[from + i] : from + i));
	}
}


/* ---- the bulk load --------------------------------------------------------------- */

static void pg_load(PGconn *p, int layout, const uint64_t *order, struct load_res *lr)
{
	const char *t = TABLES[layout];
	struct sb b = { 0 };
	char sql[512];
	PGresult *r;
	double t0;
	uint64_t w0;

	snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", t);
	pg_cmd(p, sql);
	/* the primary key comes with the other indexes, after COPY */
	snprintf(sql, sizeof(sql), "CREATE TABLE %s (id BIGINT NOT NULL, c100 INT, c1k INT, "
		 "c10k INT, c100k INT, c1m INT, pad VARCHAR(64))", t);
	pg_cmd(p, sql);
	quiet_start();
	w0 = storage_written(pg_dir);
	t0 = now_s();
	snprintf(sql, sizeof(sql), "COPY %s FROM STDIN", t);
	r = PQexec(p, sql);
	if (PQresultStatus(r) != PGRES_COPY_IN)
		die("PostgreSQL COPY: %s", PQresultErrorMessage(r));
	PQclear(r);
	for (uint64_t i = 0; i < O.records; i++) {
		row_copy(&b, order ? order[i] : i);
		if (b.len >= (1u << 20) || i + 1 == O.records) {
			if (PQputCopyData(p, b.s, (int)b.len) != 1)
				die("PostgreSQL COPY: %s", PQerrorMessage(p));
			sb_reset(&b);
			progress("PostgreSQL COPY %s: %llu / %llu rows", t,
				 (unsigned long long)(i + 1), (unsigned long long)O.records);
		}
	}
	if (PQputCopyEnd(p, NULL) != 1)
		die("PostgreSQL COPY: %s", PQerrorMessage(p));
	r = PQgetResult(p);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		die("PostgreSQL COPY: %s", PQresultErrorMessage(r));
	PQclear(r);
	while ((r = PQgetResult(p)) != NULL)
		PQclear(r);
	lr->pg_copy_s = now_s() - t0;
	t0 = now_s();
	snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD PRIMARY KEY (id)", t);
	pg_cmd(p, sql);
	for (int i = 0; i < NSIZES; i++) {
		progress("PostgreSQL index %s(%s)", t, COLS[i]);
		snprintf(sql, sizeof(sql), "CREATE INDEX ON %s (%s)", t, COLS[i]);
		pg_cmd(p, sql);
	}
	lr->pg_index_s = now_s() - t0;
	/* what the load wrote, its table and index pages included (not timed:
	 * PostgreSQL writes them at its next checkpoint, LWC at each commit) */
	PQclear(PQexec(p, "CHECKPOINT"));
	lr->pg_written = storage_written(pg_dir) - w0;
	/* statistics for the planner; not part of the load time */
	snprintf(sql, sizeof(sql), "VACUUM ANALYZE %s", t);
	pg_cmd(p, sql);
	free(b.s);
}

static void lwc_load(lwc_conn *c, int layout, const uint64_t *order, struct load_res *lr)
{
	const char *t = TABLES[layout];
	struct sb b = { 0 };
	char sql[512];
	double t0;
	uint64_t batch, w0;

	snprintf(sql, sizeof(sql), "CREATE TABLE %s %s", t, SCHEMA_COLS);
	lwc_cmd(c, sql);
	/* statements of --load-batch rows, at most one request's worth */
	if (lwc_insert_max_rows(c, t, &batch) != LWC_OK || batch == 0)
		die("LWC: no insert size for table %s", t);
	if (batch > O.load_batch)
		batch = O.load_batch;
	lr->batch = (unsigned)batch;
	quiet_start();
	w0 = storage_written(work_dir);
	t0 = now_s();
	lr->stmts = 0;
	/* as \copy loads: each statement made while the one before it is at
	 * the proxy, and sent before that one's answer (lwc_insert_send: the
	 * proxy reads and opens it while the one before it commits) */
	for (uint64_t off = 0, done = 0, q[2] = { 0, 0 }; off < O.records || done < O.records;) {
		uint64_t n = O.records - off < batch ? O.records - off : batch;
		lwc_insert *next = NULL;
		lwc_result *r = NULL;
		double el;

		if (n > 0) {
			insert_sql(&b, t, order, 0, off, n);
			if ((next = lwc_insert_prepare(c, b.s, &r)) == NULL)
				die("LWC: %s\n  statement: %.200s", lwc_result_error(r), b.s);
			if (lwc_insert_send(c, next) != LWC_OK)
				die("LWC INSERT into %s: the connection to the proxy was lost", t);
			q[lwc_insert_pending(c) - 1] = n;
			off += n;
		}
		if (lwc_insert_pending(c) < 2 && n > 0)
			continue;
		if ((r = lwc_insert_wait(c)) == NULL)
			die("LWC INSERT into %s: no statement in flight", t);
		if (lwc_result_status(r) == LWC_RESULT_ERROR)
			die("LWC INSERT into %s: %s", t, lwc_result_error(r));
		if (lwc_result_count(r) != q[0])
			die("LWC INSERT into %s: %llu rows inserted, expected %llu", t,
			    (unsigned long long)lwc_result_count(r), (unsigned long long)q[0]);
		lwc_result_free(r);
		done += q[0];
		q[0] = q[1];
		lr->stmts++;
		el = now_s() - t0;
		progress("LWC load %s: %llu / %llu rows, %.0f rows/s, %.0f s left", t,
			 (unsigned long long)done, (unsigned long long)O.records,
			 done / el, (O.records - done) / (done / el));
	}
	lr->lwc_s = now_s() - t0;
	lr->lwc_written = storage_written(work_dir) - w0;
	free(b.s);
}

static void print_load_header(void)
{
	out("\n== Bulk load of N = %llu records of 128 bytes (LWC: INSERT statements of %u rows "
	    "through liblwc, each made while the one before it is at the proxy and sent before "
	    "its answer; PostgreSQL: COPY, then primary key + 5 B-tree indexes)\n",
	    (unsigned long long)O.records, O.load_batch);
	out("%-10s %10s %12s %11s %11s %11s %12s %8s %12s %12s\n", "layout", "LWC s",
	    "LWC rows/s", "PG COPY s", "PG index s", "PG total s", "PG rows/s", "LWC/PG",
	    "LWC B/row", "PG B/row");
}

static void print_load(int layout)
{
	const struct load_res *l = &LOADS[layout];
	double pg = l->pg_copy_s + l->pg_index_s;

	out("%-10s %10.2f %12.0f %11.2f %11.2f %11.2f %12.0f %7.2fx %12.0f %12.0f\n",
	    LAYOUTS[layout], l->lwc_s, l->rows / l->lwc_s, l->pg_copy_s, l->pg_index_s, pg,
	    l->rows / pg, l->lwc_s / pg, (double)l->lwc_written / (double)l->rows,
	    (double)l->pg_written / (double)l->rows);
}

void run_load(lwc_conn *c, PGconn *p, struct rng *rng)
{
	/* the scattered order: a seeded random permutation */
	uint64_t *order = xmalloc(O.records * sizeof(uint64_t));

	for (uint64_t i = 0; i < O.records; i++)
		order[i] = i;
	for (uint64_t i = O.records - 1; i > 0; i--) {
		uint64_t j = rng_below(rng, i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	print_load_header();
	for (int layout = 0; layout < 2; layout++) {
		LOADS[layout].rows = O.records;
		lwc_load(c, layout, layout ? order : NULL, &LOADS[layout]);
		pg_load(p, layout, layout ? order : NULL, &LOADS[layout]);
		LOADS[layout].done = 1;
		print_load(layout);
	}
	free(order);
}
