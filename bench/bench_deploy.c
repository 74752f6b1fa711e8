/*
 * bench_deploy.c - the two systems under test: LWC as a deployment of
 * scripts/lwc-local (LMDB cloud store, proxy, user admin) that can be
 * restarted with other `lwc-proxy serve` flags on the same state and data
 * (LWC_PROXY_ARGS), PostgreSQL as a private cluster of tests/pg-tmp.sh;
 * connections to both, and the proxy's counters from `lwc-proxy status`.
 * Both deployments live in throw-away directories and are stopped and
 * removed whatever happens (cleanup, also on die and on signals).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin_client.h"
#include "bench.h"

/* ---- deployments ----------------------------------------------------------------- */

char work_dir[PATH_MAX];                /* LWC deployment                       */
char pg_dir[PATH_MAX];                  /* PostgreSQL cluster (reachable by postgres) */
char lwc_local[PATH_MAX], pg_tmp[PATH_MAX], bin_abs[PATH_MAX];
char lwc_dir[PATH_MAX + 16], lwc_key[PATH_MAX + 32];
int lwc_port;
uint64_t init_blocks;
static int lwc_running, pg_running;
static int cur_rtt = -1, cur_reloc = RELOC_DEFAULT;  /* what the proxy runs with */
static char pg_conninfo[512];

static char *const *lwc_local_argv(const char *cmd)
{
	static char portbuf[16];
	static char *argv[10];
	int n = 6;

	snprintf(portbuf, sizeof(portbuf), "%d", lwc_port);
	argv[0] = lwc_local;
	argv[1] = (char *)cmd;
	argv[2] = (char *)"--dir";
	argv[3] = lwc_dir;
	argv[4] = (char *)"--port-base";
	argv[5] = portbuf;
	if (O.store != NULL && strcmp(cmd, "up") == 0) {
		argv[n++] = (char *)"--backend";
		argv[n++] = (char *)O.store;
	}
	argv[n] = NULL;
	return argv;
}

void lwc_down(void)
{
	static char envbin[PATH_MAX + 16];
	char *env[2] = { envbin, NULL };

	if (!lwc_running)
		return;
	snprintf(envbin, sizeof(envbin), "LWC_BIN=%s", bin_abs);
	if (run_cmd(lwc_local_argv("down"), env, NULL, 0) != 0)
		fprintf(stderr, "lwc-bench: warning: lwc-local down failed\n");
	lwc_running = 0;
	cur_rtt = -1;
	cur_reloc = RELOC_DEFAULT;
}

void lwc_up(int rtt, int relocate)
{
	static char envbin[PATH_MAX + 16], envargs[512], envinit[512];
	char *env[4] = { envbin, envargs, envinit, NULL };
	int n;

	if (lwc_running && cur_rtt == rtt && cur_reloc == relocate)
		return;
	lwc_down();
	snprintf(envbin, sizeof(envbin), "LWC_BIN=%s", bin_abs);
	/* the proxy's own defaults unless asked: what a deployment runs with */
	n = snprintf(envargs, sizeof(envargs), "LWC_PROXY_ARGS=%s ", O.serve_args ? O.serve_args : "");
	if (rtt)
		n += snprintf(envargs + n, sizeof(envargs) - (size_t)n, "--rtt-ms %d ", rtt);
	if (relocate != RELOC_DEFAULT)
		snprintf(envargs + n, sizeof(envargs) - (size_t)n, "--relocate %s",
			 relocate ? "on" : "off");
	n = snprintf(envinit, sizeof(envinit), "LWC_INIT_ARGS=%s", O.init_args ? O.init_args : "");
	if (init_blocks)
		snprintf(envinit + n, sizeof(envinit) - (size_t)n, " --blocks %llu",
			 (unsigned long long)init_blocks);
	lwc_running = 1;
	if (run_cmd(lwc_local_argv("up"), env, NULL, 0) != 0)
		die("scripts/lwc-local up failed (logs in %s)", lwc_dir);
	cur_rtt = rtt;
	cur_reloc = relocate;
}

void pg_stop(void)
{
	char *argv[] = { (char *)"sh", pg_tmp, (char *)"stop", pg_dir, NULL };

	if (!pg_running)
		return;
	if (run_cmd(argv, NULL, NULL, 0) != 0)
		fprintf(stderr, "lwc-bench: warning: pg-tmp.sh stop failed\n");
	pg_running = 0;
}

void pg_start(void)
{
	for (int tries = 0; tries < 5; tries++) {
		char port[16];
		char *argv[] = { (char *)"sh", pg_tmp, (char *)"start", pg_dir, port, NULL };
		char *nl;
		int p = free_ports(1);

		snprintf(port, sizeof(port), "%d", p);
		pg_running = 1;
		if (run_cmd(argv, NULL, pg_conninfo, sizeof(pg_conninfo)) == 0) {
			if ((nl = strchr(pg_conninfo, '\n')) != NULL)
				*nl = '\0';
			return;
		}
		pg_stop();
		pg_running = 0;
		mkdir(pg_dir, 0700);
	}
	die("could not start a private PostgreSQL cluster (tests/pg-tmp.sh)");
}

static volatile sig_atomic_t cleaning;

void cleanup(void)
{
	if (cleaning)
		return;
	cleaning = 1;
	progress_clear();
	if (!O.keep) {
		lwc_down();
		pg_stop();
		if (work_dir[0]) {
			char *argv[] = { (char *)"rm", (char *)"-rf", work_dir, NULL };
			run_cmd(argv, NULL, NULL, 0);
		}
		if (pg_dir[0]) {
			char *argv[] = { (char *)"rm", (char *)"-rf", pg_dir, NULL };
			run_cmd(argv, NULL, NULL, 0);
		}
	} else if (lwc_running || pg_running) {
		fprintf(stderr, "lwc-bench: --keep: LWC in %s, PostgreSQL in %s (%s)\n", lwc_dir,
			pg_dir, pg_conninfo);
	}
}

void on_signal(int sig)
{
	(void)sig;
	/* a signal during the normal cleanup: let that one finish */
	if (cleaning)
		return;
	cleanup();
	_exit(130);
}

/* ---- connections ----------------------------------------------------------------- */

lwc_conn *lwc_open(void)
{
	lwc_conn *c = NULL;
	char err[512];

	for (int i = 0; i < 50; i++) {
		if (lwc_connect(&c, lwc_key, NULL, err, sizeof(err)) == LWC_OK)
			return c;
		usleep(100000);
	}
	die("lwc_connect: %s", err);
}

PGconn *pg_open(void)
{
	PGconn *p = PQconnectdb(pg_conninfo);

	PGresult *r;

	if (PQstatus(p) != CONNECTION_OK)
		die("PostgreSQL: %s", PQerrorMessage(p));
	r = PQexec(p, "SET client_min_messages = warning");
	PQclear(r);
	return p;
}

uint64_t lwc_cmd(lwc_conn *c, const char *sql)
{
	lwc_result *r = lwc_exec(c, sql);
	uint64_t n;

	if (lwc_result_status(r) == LWC_RESULT_ERROR)
		die("LWC: %s\n  statement: %.200s", lwc_result_error(r), sql);
	n = lwc_result_count(r);
	lwc_result_free(r);
	return n;
}

uint64_t pg_cmd(PGconn *p, const char *sql)
{
	PGresult *r = PQexec(p, sql);
	uint64_t n;

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		die("PostgreSQL: %s  statement: %.200s", PQresultErrorMessage(r), sql);
	n = strtoull(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	return n;
}

/* ---- the proxy's counters ------------------------------------------------------ */

/* The value of key in `lwc-proxy status` text: lines of "key<spaces>value". */
static const char *pxstat_value(const char *text, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, kl) == 0 && (p[kl] == ' ' || p[kl] == '\t'))
			return p + kl;
	die("lwc-proxy status has no %s (is the proxy older than the benchmark?)", key);
}

static uint64_t pxstat_u64(const char *text, const char *key)
{
	return strtoull(pxstat_value(text, key), NULL, 10);
}

static double pxstat_f64(const char *text, const char *key)
{
	return strtod(pxstat_value(text, key), NULL);
}

void px_settle(void)
{
	char path[PATH_MAX + 64], err[256] = "";

	if (!O.settle)
		return;
	snprintf(path, sizeof(path), "%s/proxy/admin.sock", lwc_dir);
	if (admin_wait_zero(path, "blocks_locked", 60, NULL, err, sizeof(err)) != LWC_OK)
		die("--settle: %s (from %s; --settle off for a proxy without blocks_locked)", err,
		    path);
}

struct quiet_stats QUIET;

/* A server's pid from its pid file in lwc_dir (0: none). */
static int server_pid(const char *file)
{
	char path[PATH_MAX + 64];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/%s", lwc_dir, file);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fscanf(f, "%d", &pid) != 1 || pid <= 0)
		pid = 0;
	fclose(f);
	return pid;
}

uint64_t lwc_servers_cpu_ns(void)
{
	static const char *const files[] = { "proxy.pid", "cloudstore.pid" };
	uint64_t sum = 0;

	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++)
		sum += proc_cpu_ns(server_pid(files[k]));
	return sum;
}

void quiet_start(void)
{
	const double limit = QUIET_CPU * (double)QUIET_MS * 1e6;
	double t0 = now_s();
	int quiet = 0, waited = 0;

	if (!O.quiet_start)
		return;
	while (quiet < QUIET_WINDOWS) {
		uint64_t a = lwc_servers_cpu_ns() + procs_cpu_ns(pg_dir), b;

		usleep(QUIET_MS * 1000);
		b = lwc_servers_cpu_ns() + procs_cpu_ns(pg_dir);
		/* (a thread that ended between the readings: not quiet) */
		if (b >= a && (double)(b - a) < limit) {
			quiet++;
			continue;
		}
		quiet = 0;
		waited = 1;
		if (now_s() - t0 > QUIET_MAX_S) {
			QUIET.timeouts++;
			break;
		}
	}
	if (waited) {
		QUIET.waits++;
		QUIET.waited_s += now_s() - t0 - QUIET_WINDOWS * QUIET_MS * 1e-3;
	}
}

double pg_select_q(PGconn *p, const char *sql, uint64_t expect)
{
	uint64_t a, b;
	double t;

	quiet_start();
	a = lwc_servers_cpu_ns();
	t = pg_select(p, sql, expect);
	b = lwc_servers_cpu_ns();
	QUIET.busy_ns += b >= a ? (double)(b - a) : 0;
	QUIET.pg_ns += t * 1e9;
	return t;
}

void pxstat_read(struct pxstat *s)
{
	static char text[16384];
	char state[PATH_MAX + 32], bin[PATH_MAX + 16];
	char *argv[] = { bin, (char *)"status", (char *)"--state", state, NULL };
	const char *rel;

	snprintf(bin, sizeof(bin), "%s/lwc-proxy", bin_abs);
	snprintf(state, sizeof(state), "%s/proxy", lwc_dir);
	if (run_cmd(argv, NULL, text, sizeof(text)) != 0)
		die("lwc-proxy status --state %s failed", state);
	memset(s, 0, sizeof(*s));
	if ((rel = strstr(text, "\nrelocation ")) == NULL)
		die("lwc-proxy status does not say whether relocation is on");
	rel += strlen("\nrelocation ");
	while (*rel == ' ')
		rel++;
	s->relocation = strncmp(rel, "on", 2) == 0;
	s->stash_rows = pxstat_u64(text, "stash_rows");
	s->stash_max = pxstat_u64(text, "stash_max");
	s->relocate_max = pxstat_u64(text, "relocate_max");
	s->fill_limit = pxstat_u64(text, "fill_limit");
	s->rows_relocated = pxstat_u64(text, "rows_relocated");
	s->rows_evicted = pxstat_u64(text, "rows_evicted");
	s->inserts_via_stash = pxstat_u64(text, "inserts_via_stash");
	s->inserts_placed = pxstat_u64(text, "inserts_placed");
	s->over_relocate_max = pxstat_u64(text, "stmts_over_relocate_max");
	s->stash_full = pxstat_u64(text, "stmts_stash_full");
	s->statements = pxstat_u64(text, "statements");
	s->cloud_reads = pxstat_u64(text, "cloud_reads");
	s->cloud_writes = pxstat_u64(text, "cloud_writes");
	s->blocks_moved = pxstat_u64(text, "blocks_moved");
	s->blocks_read = pxstat_u64(text, "blocks_read");
	s->blocks = pxstat_u64(text, "blocks");
	s->slots_used = pxstat_u64(text, "slots_used");
	s->plan_waits = pxstat_u64(text, "plan_waits");
	s->plan_wait_us = strstr(text, "\nplan_wait_us ") ? pxstat_u64(text, "plan_wait_us")
							   : UINT64_MAX;
	s->commit_ms_avg = pxstat_f64(text, "commit_ms_avg");
	/* proxies before block formats have none: format 1 */
	s->block_format = strstr(text, "\nblock_format ") ? (unsigned)pxstat_u64(text, "block_format")
							    : 1;
	if ((rel = strstr(text, "\ngeometry ")) != NULL) {
		size_t k = 0;

		rel += strlen("\ngeometry ");
		while (*rel == ' ')
			rel++;
		while (rel[k] && rel[k] != '\n' && k + 1 < sizeof(s->geometry))
			k++;
		memcpy(s->geometry, rel, k);
		s->geometry[k] = '\0';
	}
}
