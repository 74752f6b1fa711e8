/*
 * lwc_bench.c - lwc-bench: the paper's experiments (Cui et al., WISTP 2017,
 * section 6), run on LWC through liblwc and on a plaintext PostgreSQL through
 * libpq, on the same data, with the same SQL statements, in the same run.
 * This file holds the options and the order of the experiments.
 *
 *   lwc-bench [--records N] [--only LIST] [--tag T] [--out DIR] [--img DIR] ...
 *
 * It starts its own LWC deployment (scripts/lwc-local: LMDB cloud store,
 * proxy with its defaults: geometry, padding ratio:2, permutation and
 * sealing, relocation on; a user "admin") and its own private PostgreSQL
 * cluster (tests/pg-tmp.sh), both in throw-away directories on free
 * loopback ports, and stops both whatever happens (bench_deploy.c).
 *
 * Workload (bench_load.c): 128-byte records (id BIGINT PRIMARY KEY, c100
 * INT, c1k INT, c10k INT, c100k INT, c1m INT, pad VARCHAR(64)) where row id
 * has cK = id / K, so `cK = v` selects K rows.  Two tables of N rows:
 * `clus` loaded in id order (clustered on every cK column at once) and
 * `scat` loaded in a random order (scattered).  PostgreSQL gets the rows
 * with COPY, then a B-tree index per searched column and the primary key;
 * LWC gets them with multi-row INSERT statements through lwc_exec (every
 * column is indexed by the proxy).
 *
 * Experiments (--only picks some, comma-separated), in the order they run:
 *   cells    cell permutation (1, 2, 4, 8 bytes) against AEAD sealing per
 *            block size, 512 B .. 256 KiB (Fig. 11; no deployment needed;
 *            bench_cells.c)
 *   load     bulk load of both tables (time, records/s; bench_load.c)
 *   select   SELECT * ... WHERE cK = v, K = 100 .. 1,000,000 (<= N), both
 *            layouts: latency median/p95, rows/s (Figs. 6, 7; bench_select.c)
 *   reloc    relocation on and off side by side: point and 100-row SELECTs,
 *            INSERT/UPDATE/DELETE of 1k and 10k rows, after a warm-up that
 *            moves records, then the proxy restarted with --relocate off;
 *            how the clustered layout scatters (bench_reloc.c)
 *   range    SELECT * ... WHERE id BETWEEN a AND a+K-1 on the primary key (a
 *            range index) beside the EQ line of the same K and PostgreSQL's
 *            range query (bench_range.c)
 *   rtt      the SELECTs again with the proxy restarted with --rtt-ms R
 *   clients  throughput of 1/4/16/64 concurrent clients at 25 ms
 *   modify   INSERT, UPDATE, DELETE of 1,000 .. 1,000,000 rows (Figs. 8-10;
 *            bench_modify.c)
 *
 * Output (bench_report.c): a table on stdout (with the LWC/PostgreSQL ratio
 * of each line), JSON in DIR/lwc-bench-TAG.json, gnuplot data and scripts
 * in DIR/lwc-bench-TAG/ and the PNG plots in IMG/lwc-bench-TAG-*.png.
 * Progress of long phases goes to stderr.  See docs/benchmarks.md.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "bench.h"
#include "heap.h"

const uint64_t SIZES[NSIZES] = { 100, 1000, 10000, 100000, 1000000 };
const char *const COLS[NSIZES] = { "c100", "c1k", "c10k", "c100k", "c1m" };
const char *const LAYOUTS[2] = { "clustered", "scattered" };
const char *const TABLES[2] = { "clus", "scat" };
const char *const EXP_NAMES[NEXP] = { "load", "select", "modify", "rtt", "clients", "cells",
				      "reloc", "range" };

struct opts O;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lwc-bench [--records N] [--only load,select,range,reloc,modify,rtt,clients,cells]\n"
		"                 [--rtt 25,50,100] [--clients 1,4,16,64] [--clients-rtt 25]\n"
		"                 [--client-seconds 6] [--batch 5000] [--load-batch 50000]\n"
		"                 [--reps-scale 1]\n"
		"                 [--rtt-max-rows 10000] [--no-presize] [--modify-pk]\n"
		"                 [--relocate on|off] [--init-args \"--slots 16 ...\"]\n"
		"                 [--serve-args \"--read-ahead off ...\"] [--store lmdb|log]\n"
		"                 [--settle on|off] [--quiet-start on|off]\n"
		"                 [--tag T] [--out bench/results] [--img docs/img]\n"
		"                 [--root DIR] [--bin DIR] [--seed S] [--keep]\n"
		"\n"
		"Runs the LWC paper's experiments on LWC (scripts/lwc-local) and on a private\n"
		"plaintext PostgreSQL, side by side.  --records N: rows per table (default\n"
		"1000000).  Paths are relative to --root (default: the directory above the\n"
		"binary's).  select, reloc, modify, rtt and clients need load (they run it\n"
		"if absent).  --relocate on|off: `lwc-proxy serve --relocate` for every\n"
		"experiment but reloc (default: the proxy's own setting, on).  --batch: rows\n"
		"per INSERT of the modify lines; --load-batch: of the bulk load (the shell's\n"
		"\\copy sends up to 50,000).  --store: the cloud store's engine (lwc-local\n"
		"--backend; default lmdb).  --settle on: each timed SELECT of either system\n"
		"starts when the proxy holds no block (a SELECT is answered before its\n"
		"WRITE is done), so that neither pays for LWC's work left over from the\n"
		"statement before; off (the default): back to back.  --quiet-start on: every\n"
		"timed statement of either system in the load, SELECT and INSERT / UPDATE /\n"
		"DELETE lines (and PostgreSQL's in the others) starts once LWC's servers and\n"
		"PostgreSQL's processes are quiet (LWC's store compacts its log after a\n"
		"statement); off (the default): in turn, as they come.  Under each SELECT\n"
		"line the run says how much CPU LWC's servers used while PostgreSQL's\n"
		"statements ran (when 1 %% of a core or more).\n");
}

static int parse_list(const char *s, int *v, int max)
{
	int n = 0;
	char *end;

	while (*s && n < max) {
		long x = strtol(s, &end, 10);
		if (end == s || x < 0 || x > 100000)
			return -1;
		v[n++] = (int)x;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return n;
}

/* Rows a bulk load puts in a block under the geometry of init_args
 * (--slots, --theta; lwc-proxy init's defaults otherwise). */
static uint64_t fill_limit_of(const char *init_args)
{
	unsigned long m = 64, theta = 0;
	const char *p;

	if (init_args && (p = strstr(init_args, "--slots")) != NULL)
		m = strtoul(p + strlen("--slots"), NULL, 10);
	if (init_args && (p = strstr(init_args, "--theta")) != NULL)
		theta = strtoul(p + strlen("--theta"), NULL, 10);
	if (theta == 0)
		theta = m * 3 / 4 ? m * 3 / 4 : 1;
	return bulk_fill(theta);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "records", required_argument, NULL, 'n' },
		{ "only", required_argument, NULL, 'o' },
		{ "rtt", required_argument, NULL, 'r' },
		{ "clients", required_argument, NULL, 'c' },
		{ "clients-rtt", required_argument, NULL, 'R' },
		{ "client-seconds", required_argument, NULL, 'S' },
		{ "batch", required_argument, NULL, 'b' },
		{ "load-batch", required_argument, NULL, 'W' },
		{ "reps-scale", required_argument, NULL, 'x' },
		{ "tag", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'O' },
		{ "img", required_argument, NULL, 'I' },
		{ "root", required_argument, NULL, 'T' },
		{ "bin", required_argument, NULL, 'B' },
		{ "seed", required_argument, NULL, 's' },
		{ "keep", no_argument, NULL, 'k' },
		{ "no-presize", no_argument, NULL, 'P' },
		{ "modify-pk", no_argument, NULL, 'K' },
		{ "rtt-max-rows", required_argument, NULL, 'M' },
		{ "relocate", required_argument, NULL, 'L' },
		{ "init-args", required_argument, NULL, 'G' },
		{ "serve-args", required_argument, NULL, 'E' },
		{ "store", required_argument, NULL, 'Z' },
		{ "settle", required_argument, NULL, 'Q' },
		{ "quiet-start", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char tagbuf[32], ddir[PATH_MAX], jpath[PATH_MAX], la0[128], la1[128];
	char rootbuf[PATH_MAX], binbuf[PATH_MAX];
	lwc_conn *c = NULL;
	PGconn *p = NULL;
	struct rng rng;
	int o;

	/* as the shell: a load's 45 MB statements reuse their memory */
	lwc_keep_heap();
	O.records = 1000000;
	O.out = "bench/results";
	O.img = "docs/img";
	O.only = EXP_ALL;
	O.rtts[0] = 25;
	O.rtts[1] = 50;
	O.rtts[2] = 100;
	O.nrtts = 3;
	O.clients[0] = 1;
	O.clients[1] = 4;
	O.clients[2] = 16;
	O.clients[3] = 64;
	O.nclients = 4;
	O.clients_rtt = 25;
	O.client_secs = 6;
	O.batch = 5000;
	O.load_batch = 50000;
	O.reps_scale = 1;
	O.seed = 20170801;
	O.presize = 1;
	O.rtt_max_rows = 10000;
	O.relocate = RELOC_DEFAULT;
	O.settle = 0;
	O.quiet_start = 0;
	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (o) {
		case 'n':
			O.records = strtoull(optarg, NULL, 10);
			if (O.records < 100 || O.records > 100000000)
				die("--records must be from 100 to 100000000");
			break;
		case 'o': {
			char *s = strdup(optarg), *tok, *save = NULL;
			O.only = 0;
			for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int found = 0;
				for (int i = 0; i < NEXP; i++)
					if (strcmp(tok, EXP_NAMES[i]) == 0) {
						O.only |= 1u << i;
						found = 1;
					}
				if (!found)
					die("--only: unknown experiment '%s'", tok);
			}
			free(s);
			break;
		}
		case 'r':
			if ((O.nrtts = parse_list(optarg, O.rtts, MAX_LIST)) < 0)
				die("--rtt: a comma-separated list of ms");
			break;
		case 'c':
			if ((O.nclients = parse_list(optarg, O.clients, MAX_LIST)) <= 0)
				die("--clients: a comma-separated list of counts");
			for (int i = 0; i < O.nclients; i++)
				if (O.clients[i] < 1 || O.clients[i] > 1000)
					die("--clients: counts from 1 to 1000");
			break;
		case 'R': O.clients_rtt = atoi(optarg); break;
		case 'S': O.client_secs = atof(optarg); break;
		case 'b':
			O.batch = (unsigned)strtoul(optarg, NULL, 10);
			if (O.batch < 1 || O.batch > 100000)
				die("--batch must be from 1 to 100000");
			break;
		case 'W':
			O.load_batch = (unsigned)strtoul(optarg, NULL, 10);
			if (O.load_batch < 1 || O.load_batch > 100000)
				die("--load-batch must be from 1 to 100000");
			break;
		case 'x': O.reps_scale = atof(optarg); break;
		case 't': O.tag = optarg; break;
		case 'O': O.out = optarg; break;
		case 'I': O.img = optarg; break;
		case 'T': O.root = optarg; break;
		case 'B': O.bin = optarg; break;
		case 's': O.seed = strtoull(optarg, NULL, 10); break;
		case 'k': O.keep = 1; break;
		case 'P': O.presize = 0; break;
		case 'K': O.modify_pk = 1; break;
		case 'M': O.rtt_max_rows = strtoull(optarg, NULL, 10); break;
		case 'L':
			if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0)
				die("--relocate: on or off");
			O.relocate = strcmp(optarg, "on") == 0 ? RELOC_ON : RELOC_OFF;
			break;
		case 'G': O.init_args = optarg; break;
		case 'E': O.serve_args = optarg; break;
		case 'Z':
			if (strcmp(optarg, "lmdb") != 0 && strcmp(optarg, "log") != 0)
				die("--store: lmdb or log");
			O.store = optarg;
			break;
		case 'Q':
			if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0)
				die("--settle: on or off");
			O.settle = strcmp(optarg, "on") == 0;
			break;
		case 'U':
			if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0)
				die("--quiet-start: on or off");
			O.quiet_start = strcmp(optarg, "on") == 0;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	O.pg_client_secs = O.client_secs / 2 > 2 ? O.client_secs / 2 : 2;
	if (O.client_secs <= 0)
		die("--client-seconds must be positive");
	if (O.tag == NULL)
		O.tag = size_name(O.records, tagbuf, sizeof(tagbuf));

	/* root: --root, or the parent of the binary's directory */
	if (O.root == NULL) {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		char *slash;

		if (n <= 0)
			die("cannot find my own path; give --root");
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL)
			*slash = '\0';
		snprintf(binbuf, sizeof(binbuf), "%s", self);
		if ((slash = strrchr(self, '/')) != NULL)
			*slash = '\0';
		snprintf(rootbuf, sizeof(rootbuf), "%s", self);
		O.root = rootbuf;
		if (O.bin == NULL)
			O.bin = binbuf;
	}
	if (chdir(O.root) != 0)
		die("cannot enter %s: %s", O.root, strerror(errno));
	if (O.bin == NULL)
		O.bin = "bin";
	if (realpath(O.bin, bin_abs) == NULL)
		die("binary directory %s: %s", O.bin, strerror(errno));
	snprintf(lwc_local, sizeof(lwc_local), "%s/scripts/lwc-local", O.root);
	snprintf(pg_tmp, sizeof(pg_tmp), "%s/tests/pg-tmp.sh", O.root);
	if (access(lwc_local, X_OK) != 0)
		die("%s not found (give --root)", lwc_local);
	if (sodium_init() < 0)
		die("libsodium failed to initialise");

	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	atexit(cleanup);
	setvbuf(stdout, NULL, _IOLBF, 0);
	read_machine();
	loadavg(la0, sizeof(la0));
	t_start = now_s();
	{
		time_t tt = time(NULL);
		struct tm tm;
		gmtime_r(&tt, &tm);
		strftime(started_at, sizeof(started_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	rng_seed(&rng, O.seed);
	if (O.only & (EXP_SELECT | EXP_MODIFY | EXP_RTT | EXP_CLIENTS | EXP_RELOC | EXP_RANGE))
		O.only |= EXP_LOAD;
	if (O.only & EXP_LOAD) {
		char w[] = "/tmp/lwc-bench-XXXXXX", pg[] = "/tmp/lwc-bench-pg-XXXXXX";
		if (mkdtemp(w) == NULL || mkdtemp(pg) == NULL)
			die("mkdtemp: %s", strerror(errno));
		snprintf(work_dir, sizeof(work_dir), "%s", w);
		snprintf(pg_dir, sizeof(pg_dir), "%s", pg);
	}
	sampler_start();

	out("lwc-bench: N = %llu records, %ld CPUs (%s), %s RAM, load average %s\n",
	    (unsigned long long)O.records, ncpu, cpu_model, mem_total, la0);

	if (O.only & EXP_CELLS) {
		double t0 = now_s();
		run_cells();
		phase_s[5] = now_s() - t0;
	}
	if (O.only & EXP_LOAD) {
		double t0 = now_s();

		snprintf(lwc_dir, sizeof(lwc_dir), "%s/lwc", work_dir);
		snprintf(lwc_key, sizeof(lwc_key), "%s/users/admin.key", lwc_dir);
		lwc_port = free_ports(2);
		if (O.presize) {
			/* room for every row the run inserts, so no statement pays for
			 * growing the store: theta slots of m are ever full (48 of 64
			 * by default), and with relocation on (the default) a bulk
			 * INSERT fills blocks up to theta - theta/6 (40), the rest
			 * kept for evictions */
			uint64_t rows = 2 * O.records;
			if (O.only & EXP_MODIFY)
				for (int i = 1; i < NSIZES; i++)
					if (SIZES[i] <= O.records)
						rows += SIZES[i];
			if (O.only & EXP_RELOC)
				rows += reloc_rows_inserted();
			uint64_t per = fill_limit_of(O.init_args);
			init_blocks = rows / per + rows / per / 8 + 1024;
		}
		say("starting LWC (scripts/lwc-local, ports %d-%d) and PostgreSQL (tests/pg-tmp.sh)",
		    lwc_port, lwc_port + 1);
		/* the proxy's defaults (relocation on unless its init says off),
		 * or --relocate */
		lwc_up(0, O.relocate);
		pxstat_read(&deploy_status);
		say("the proxy runs with relocation %s (stash of at most %llu rows, statements over "
		    "%llu rows move none)", deploy_status.relocation ? "on" : "off",
		    (unsigned long long)deploy_status.stash_max,
		    (unsigned long long)deploy_status.relocate_max);
		pg_start();
		c = lwc_open();
		p = pg_open();
		{
			PGresult *r = PQexec(p, "SHOW server_version");
			if (PQresultStatus(r) == PGRES_TUPLES_OK)
				snprintf(pg_version, sizeof(pg_version), "%s", PQgetvalue(r, 0, 0));
			PQclear(r);
		}
		run_load(c, p, &rng);
		phase_s[0] = now_s() - t0;
	}
	if (O.only & EXP_SELECT) {
		double t0 = now_s();
		run_selects(c, p, 0, &rng);
		phase_s[1] = now_s() - t0;
	}
	if (O.only & EXP_RANGE) {
		double t0 = now_s();
		run_ranges(c, p, &rng);
		phase_s[7] = now_s() - t0;
	}
	/* after the SELECTs (whose rows relocation has moved), before the
	 * experiments that restart the proxy anyway */
	if (O.only & EXP_RELOC) {
		double t0 = now_s();
		run_reloc(&c, p, &rng);
		phase_s[6] = now_s() - t0;
	}
	if (O.only & EXP_RTT) {
		double t0 = now_s();
		for (int i = 0; i < O.nrtts; i++) {
			if (O.rtts[i] == 0 && (O.only & EXP_SELECT))
				continue;
			lwc_close(c);
			lwc_up(O.rtts[i], O.relocate);
			c = lwc_open();
			run_selects(c, p, O.rtts[i], &rng);
		}
		phase_s[3] = now_s() - t0;
	}
	if (O.only & EXP_CLIENTS) {
		double t0 = now_s();
		lwc_close(c);
		c = NULL;
		run_concurrency(&rng);
		phase_s[4] = now_s() - t0;
	}
	if (O.only & EXP_MODIFY) {
		double t0 = now_s();
		if (c)
			lwc_close(c);
		lwc_up(0, O.relocate);
		c = lwc_open();
		run_modify(c, p, &rng);
		phase_s[2] = now_s() - t0;
	}
	if (c)
		lwc_close(c);
	if (p)
		PQfinish(p);
	print_targets();
	sampler_end();
	loadavg(la1, sizeof(la1));
	if (sampler_secs > 0)
		out("\nOther processes on the machine used %.2f cores on average (at most %.2f over a 2 s "
		    "window); the benchmark's own processes %.2f.\n", other_cores_sum / sampler_secs,
		    other_cores_max, ours_cores_sum / sampler_secs);
	if (O.quiet_start)
		out("Timed statements waited for a quiet machine %u times, %.1f s in all beyond "
		    "the %d x %d ms each waits at least (%u gave up after %d s): --quiet-start on.\n",
		    QUIET.waits, QUIET.waited_s, QUIET_WINDOWS, QUIET_MS, QUIET.timeouts,
		    QUIET_MAX_S);

	/* results */
	mkdir(O.out, 0755);
	snprintf(jpath, sizeof(jpath), "%s/lwc-bench-%s.json", O.out, O.tag);
	write_json(jpath, la0, la1);
	say("results in %s", jpath);
	snprintf(ddir, sizeof(ddir), "%s/lwc-bench-%s", O.out, O.tag);
	mkdir(ddir, 0755);
	mkdir(O.img, 0755);
	write_plots(ddir, O.img);
	cleanup();
	say("done in %.0f s", now_s() - t_start);
	return 0;
}

