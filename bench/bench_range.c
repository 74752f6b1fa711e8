/*
 * bench_range.c - ranges on a range-indexed column (issue 13): per layout
 * and result size K, `SELECT * FROM t WHERE id BETWEEN a AND a + K - 1` on
 * the primary key (range index: an IN of the cover's prefix tokens) beside
 * the EQ line of the same K (`cK = v`, K rows through one equality token)
 * and PostgreSQL's range query, in the same run.  clus holds the rows in id
 * order, so a range is clustered there and scattered in scat.  Each
 * statement draws its own a (a multiple of K, so the range is the rows of
 * one cK value); the three alternate which runs first.  The cover's size
 * (tokens sent) is printed beside the latencies.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "range.h"

/* tokens of the cover of [a, b] on a BIGINT range index of 4 bits per level
 * (what the client sends; the bench does not change LWC_RANGE_BITS) */
static size_t cover_tokens(uint64_t a, uint64_t b)
{
	static struct range_node nodes[2 * 255 * 64];
	const char *e = getenv("LWC_RANGE_BITS");
	unsigned bits = e && atoi(e) > 0 ? (unsigned)atoi(e) : RANGE_NUM_BITS;
	size_t n = 0;

	if (range_cover_num(64, bits, range_key_int(RANGE_INT64, (int64_t)a),
			    range_key_int(RANGE_INT64, (int64_t)b), nodes,
			    sizeof(nodes) / sizeof(nodes[0]), &n) != LWC_OK)
		return 0;
	return n;
}

void run_ranges(lwc_conn *c, PGconn *p, struct rng *rng)
{
	char sql[256], kb[32];

	out("\n== Ranges on an indexed column: SELECT * FROM t WHERE id BETWEEN a AND a+K-1 "
	    "beside the EQ line cK = v of the same K (latency in ms)\n");
	out("%-10s %8s %5s %8s %11s %11s %11s %11s %8s %11s %8s\n", "layout", "rows K", "reps",
	    "tokens", "EQ med", "RANGE med", "EQ p95", "RANGE p95", "RNG/EQ", "PG rng med",
	    "RNG/PG");
	for (int layout = 0; layout < 2; layout++) {
		for (int si = 0; si < NSIZES; si++) {
			uint64_t k = SIZES[si], nv = O.records / k;
			static const unsigned base[NSIZES] = { 20, 10, 4, 2, 1 };
			unsigned reps = (unsigned)(base[si] * O.reps_scale) ? (unsigned)(base[si] *
								O.reps_scale) : 1;
			double *ew = xmalloc(reps * sizeof(double)), *rw = xmalloc(reps * sizeof(double));
			double *pw = xmalloc(reps * sizeof(double));
			struct stats es, rs, ps;
			size_t toks = 0;

			if (nv == 0)
				break;
			for (unsigned i = 0; i < reps; i++) {
				uint64_t ve = rng_below(rng, nv), vr = rng_below(rng, nv);
				char eq[256];

				progress("ranges %s %s rows: %u / %u", LAYOUTS[layout],
					 size_name(k, kb, sizeof(kb)), i, reps);
				snprintf(eq, sizeof(eq), "SELECT * FROM %s WHERE %s = %llu",
					 TABLES[layout], COLS[si], (unsigned long long)ve);
				snprintf(sql, sizeof(sql), "SELECT * FROM %s WHERE id BETWEEN %llu AND "
					 "%llu", TABLES[layout], (unsigned long long)(vr * k),
					 (unsigned long long)(vr * k + k - 1));
				toks += cover_tokens(vr * k, vr * k + k - 1);
				switch (i % 3) {
				case 0:
					ew[i] = lwc_select(c, eq, k);
					rw[i] = lwc_select(c, sql, k);
					pw[i] = pg_select_q(p, sql, k);
					break;
				case 1:
					rw[i] = lwc_select(c, sql, k);
					pw[i] = pg_select_q(p, sql, k);
					ew[i] = lwc_select(c, eq, k);
					break;
				default:
					pw[i] = pg_select_q(p, sql, k);
					ew[i] = lwc_select(c, eq, k);
					rw[i] = lwc_select(c, sql, k);
				}
			}
			es = stats_of(ew, reps);
			rs = stats_of(rw, reps);
			ps = stats_of(pw, reps);
			out("%-10s %8s %5u %8.0f %11.2f %11.2f %11.2f %11.2f %7.2fx %11.2f %7.1fx\n",
			    LAYOUTS[layout], size_name(k, kb, sizeof(kb)), reps,
			    (double)toks / reps, es.med * 1e3, rs.med * 1e3, es.p95 * 1e3,
			    rs.p95 * 1e3, rs.med / es.med, ps.med * 1e3, rs.med / ps.med);
			free(ew);
			free(rw);
			free(pw);
		}
	}
	/* the cost of a long cover alone: a one-sided range past the last id
	 * (no row; the cover spans the rest of the BIGINT domain) beside an EQ
	 * that matches nothing */
	{
		unsigned reps = 20;
		double *ew = xmalloc(reps * sizeof(double)), *rw = xmalloc(reps * sizeof(double));
		struct stats es, rs;
		size_t toks = cover_tokens(O.records, (uint64_t)INT64_MAX);

		for (unsigned i = 0; i < reps; i++) {
			snprintf(sql, sizeof(sql), "SELECT * FROM clus WHERE id > %llu",
				 (unsigned long long)(O.records + i));
			rw[i] = lwc_select(c, sql, 0);
			snprintf(sql, sizeof(sql), "SELECT * FROM clus WHERE c100 = %llu",
				 (unsigned long long)(O.records + i));
			ew[i] = lwc_select(c, sql, 0);
		}
		es = stats_of(ew, reps);
		rs = stats_of(rw, reps);
		out("%-10s %8s %5u %8zu %11.2f %11.2f %11.2f %11.2f %7.2fx   (id > N: an empty "
		    "one-sided range)\n", "clustered", "0", reps, toks, es.med * 1e3, rs.med * 1e3,
		    es.p95 * 1e3, rs.p95 * 1e3, rs.med / es.med);
		free(ew);
		free(rw);
	}
}
