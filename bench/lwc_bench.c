/*
 * lwc_bench.c - lwc-bench: the paper's experiments (Cui et al., WISTP 2017,
 * section 6), run on LWC through liblwc and on a plaintext PostgreSQL through
 * libpq, on the same data, with the same SQL statements, in the same run.
 *
 *   lwc-bench [--records N] [--only LIST] [--tag T] [--out DIR] [--img DIR] ...
 *
 * It starts its own LWC deployment (scripts/lwc-local: LMDB cloud store,
 * proxy with the default geometry, padding ratio:2, permutation and sealing
 * on, a user "admin") and its own private PostgreSQL cluster
 * (tests/pg-tmp.sh), both in throw-away directories on free loopback ports,
 * and stops both whatever happens.
 *
 * Workload: 128-byte records (id BIGINT PRIMARY KEY, c100 INT, c1k INT,
 * c10k INT, c100k INT, c1m INT, pad VARCHAR(64)) where row id has
 * cK = id / K, so `cK = v` selects K rows.  Two tables of N rows:
 * `clus` loaded in id order (clustered on every cK column at once) and
 * `scat` loaded in a random order (scattered).  PostgreSQL gets the rows
 * with COPY, then a B-tree index per searched column and the primary key;
 * LWC gets them with multi-row INSERT statements through lwc_exec (every
 * column is indexed by the proxy).
 *
 * Experiments (--only picks some, comma-separated):
 *   load     bulk load of both tables (time, records/s)
 *   select   SELECT * ... WHERE cK = v, K = 100 .. 1,000,000 (<= N), both
 *            layouts: latency median/p95, rows/s (paper Figs. 6, 7)
 *   modify   INSERT, UPDATE, DELETE of 1,000 .. 1,000,000 rows (Figs. 8-10)
 *   rtt      the SELECTs again with the proxy restarted with --rtt-ms R
 *   clients  throughput of 1/4/16/64 concurrent clients at 25 ms
 *   cells    cell permutation (1, 2, 4, 8 bytes) against AEAD sealing per
 *            block size, 512 B .. 256 KiB (Fig. 11; no deployment needed)
 *
 * Output: a table on stdout (with the LWC/PostgreSQL ratio of each line),
 * JSON in DIR/lwc-bench-TAG.json, gnuplot data and scripts in
 * DIR/lwc-bench-TAG/ and the PNG plots in IMG/lwc-bench-TAG-*.png.
 * Progress of long phases goes to stderr.  See docs/benchmarks.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sodium.h>

#include "cry.h"
#include "lwc.h"

#define PADLEN        64
#define MAX_LIST      16
#define NSIZES        5
#define MOD_BASE      10000000ull        /* id step between modify batches */

static const uint64_t SIZES[NSIZES] = { 100, 1000, 10000, 100000, 1000000 };
static const char *const COLS[NSIZES] = { "c100", "c1k", "c10k", "c100k", "c1m" };
static const char *const LAYOUTS[2] = { "clustered", "scattered" };
static const char *const TABLES[2] = { "clus", "scat" };

/* ---- options ------------------------------------------------------------- */

struct opts {
	uint64_t records;
	const char *tag, *out, *img, *root, *bin;
	unsigned only;                 /* bit set of EXP_*                       */
	int rtts[MAX_LIST], nrtts;
	int clients[MAX_LIST], nclients;
	int clients_rtt;
	double client_secs, pg_client_secs;
	unsigned batch;                /* rows per INSERT statement              */
	double reps_scale;
	uint64_t seed;
	int keep;
	int presize;                   /* create the store with room for all rows */
	int modify_pk;                 /* table m with id BIGINT PRIMARY KEY      */
	uint64_t rtt_max_rows;         /* largest result size of the rtt rounds  */
};

enum {
	EXP_LOAD = 1, EXP_SELECT = 2, EXP_MODIFY = 4, EXP_RTT = 8, EXP_CLIENTS = 16,
	EXP_CELLS = 32, EXP_ALL = 63
};
static const char *const EXP_NAMES[] = { "load", "select", "modify", "rtt", "clients", "cells" };

static struct opts O;

/* ---- small helpers --------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void cleanup(void);

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "\nlwc-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup();
	exit(1);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Progress on stderr: rewritten in place on a terminal, otherwise one line
 * at most every 10 s. */
static int progress_tty = -1;
static double progress_last;
static int progress_open;

static void progress_clear(void)
{
	if (progress_open) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		progress_open = 0;
	}
}

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
	va_list ap;
	double t = now_s();

	if (progress_tty < 0)
		progress_tty = isatty(2);
	if (t - progress_last < (progress_tty ? 0.25 : 10.0))
		return;
	progress_last = t;
	if (progress_tty)
		fputs("\r\033[K", stderr);
	fputs("  ... ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (!progress_tty)
		fputc('\n', stderr);
	progress_open = progress_tty;
	fflush(stderr);
}

static void say(const char *fmt, ...)
{
	va_list ap;

	progress_clear();
	fputs("lwc-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/* Table lines go to stdout, flushed at once. */
static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	va_list ap;

	progress_clear();
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		die("out of memory (%zu bytes)", n);
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		die("out of memory (%zu bytes)", n);
	return p;
}

/* A growing string. */
struct sb {
	char *s;
	size_t len, cap;
};

static void sb_reserve(struct sb *b, size_t more)
{
	if (b->len + more + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 4096;
		while (b->len + more + 1 > nc)
			nc *= 2;
		b->s = xrealloc(b->s, nc);
		b->cap = nc;
	}
}

static void sb_printf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	sb_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static void sb_put(struct sb *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_u64(struct sb *b, uint64_t v)
{
	char tmp[24];
	int i = 0;

	do {
		tmp[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sb_reserve(b, (size_t)i);
	while (i > 0)
		b->s[b->len++] = tmp[--i];
	b->s[b->len] = '\0';
}

static void sb_reset(struct sb *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

/* Human-readable counts: 1000 -> "1k". */
static const char *size_name(uint64_t k, char *buf, size_t len)
{
	if (k >= 1000000 && k % 1000000 == 0)
		snprintf(buf, len, "%llum", (unsigned long long)(k / 1000000));
	else if (k >= 1000 && k % 1000 == 0)
		snprintf(buf, len, "%lluk", (unsigned long long)(k / 1000));
	else
		snprintf(buf, len, "%llu", (unsigned long long)k);
	return buf;
}

/* xoshiro256** seeded with splitmix64 (one per thread). */
struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t res = rotl(r->s[1] * 5, 7) * 9, t = r->s[1] << 17;

	r->s[2] ^= r->s[0];
	r->s[3] ^= r->s[1];
	r->s[1] ^= r->s[2];
	r->s[0] ^= r->s[3];
	r->s[2] ^= t;
	r->s[3] = rotl(r->s[3], 45);
	return res;
}

static uint64_t rng_below(struct rng *r, uint64_t bound)
{
	uint64_t lim = -bound % bound, x;

	do
		x = rng_next(r);
	while (x < lim);
	return x % bound;
}

/* ---- statistics ------------------------------------------------------------ */

struct stats {
	unsigned n;
	double med, p95, mean, min, max;      /* seconds */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static struct stats stats_of(double *v, unsigned n)
{
	struct stats s = { 0 };
	double sum = 0;
	size_t r;

	if (n == 0)
		return s;
	qsort(v, n, sizeof(*v), cmp_double);
	for (unsigned i = 0; i < n; i++)
		sum += v[i];
	s.n = n;
	s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	r = (size_t)ceil(0.95 * n);            /* nearest rank */
	s.p95 = v[(r ? r : 1) - 1];
	s.mean = sum / n;
	s.min = v[0];
	s.max = v[n - 1];
	return s;
}

/* ---- processes --------------------------------------------------------------- */

/* Runs argv; its stdout goes to capture (if not NULL) or /dev/null, its
 * stderr to ours.  extra_env: "NAME=VALUE" strings or NULL.  Returns the
 * exit status (-1 when it could not run). */
static int run_cmd(char *const argv[], char *const extra_env[], char *capture, size_t caplen)
{
	int pfd[2] = { -1, -1 }, st;
	pid_t pid;
	size_t got = 0;

	if (capture && pipe(pfd) != 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd;

		if (capture) {
			dup2(pfd[1], 1);
			close(pfd[0]);
			close(pfd[1]);
		} else if ((fd = open("/dev/null", O_WRONLY)) >= 0) {
			dup2(fd, 1);
			close(fd);
		}
		if ((fd = open("/dev/null", O_RDONLY)) >= 0) {
			dup2(fd, 0);
			close(fd);
		}
		for (int i = 0; extra_env && extra_env[i]; i++)
			putenv(extra_env[i]);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (capture) {
		ssize_t r;

		close(pfd[1]);
		while ((r = read(pfd[0], capture + got, caplen - 1 - got)) > 0 || (r < 0 && errno == EINTR))
			if (r > 0) {
				got += (size_t)r;
				if (got == caplen - 1)
					break;
			}
		capture[got] = '\0';
		close(pfd[0]);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int port_free(int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	if (fd < 0)
		return 0;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

/* Two consecutive free loopback ports. */
static int free_ports(struct rng *r)
{
	for (int i = 0; i < 200; i++) {
		int p = 20000 + (int)rng_below(r, 40000);
		if (port_free(p) && port_free(p + 1))
			return p;
	}
	die("no free loopback ports");
}

/* ---- deployments --------------------------------------------------------------- */

static char work_dir[PATH_MAX];         /* LWC deployment                       */
static char pg_dir[PATH_MAX];           /* PostgreSQL cluster (reachable by postgres) */
static char lwc_local[PATH_MAX], pg_tmp[PATH_MAX], bin_abs[PATH_MAX];
static char lwc_dir[PATH_MAX + 16], lwc_key[PATH_MAX + 32];
static int lwc_running, pg_running, lwc_port;
static int cur_rtt = -1;
static char pg_conninfo[512];

static char *const *lwc_local_argv(const char *cmd)
{
	static char portbuf[16];
	static char *argv[8];

	snprintf(portbuf, sizeof(portbuf), "%d", lwc_port);
	argv[0] = lwc_local;
	argv[1] = (char *)cmd;
	argv[2] = (char *)"--dir";
	argv[3] = lwc_dir;
	argv[4] = (char *)"--port-base";
	argv[5] = portbuf;
	argv[6] = NULL;
	return argv;
}

static void lwc_down(void)
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
}

/* (Re)start the deployment with the proxy simulating rtt ms to the cloud. */
static uint64_t init_blocks;           /* lwc-proxy init --blocks (0: default) */

static void lwc_up(int rtt)
{
	static char envbin[PATH_MAX + 16], envargs[64], envinit[64];
	char *env[4] = { envbin, envargs, envinit, NULL };

	if (lwc_running && cur_rtt == rtt)
		return;
	lwc_down();
	snprintf(envbin, sizeof(envbin), "LWC_BIN=%s", bin_abs);
	snprintf(envargs, sizeof(envargs), "LWC_PROXY_ARGS=--rtt-ms %d", rtt);
	if (init_blocks)
		snprintf(envinit, sizeof(envinit), "LWC_INIT_ARGS=--blocks %llu",
			 (unsigned long long)init_blocks);
	else
		snprintf(envinit, sizeof(envinit), "LWC_INIT_ARGS=");
	lwc_running = 1;
	if (run_cmd(lwc_local_argv("up"), env, NULL, 0) != 0)
		die("scripts/lwc-local up failed (logs in %s)", lwc_dir);
	cur_rtt = rtt;
}

static void pg_stop(void)
{
	char *argv[] = { (char *)"sh", pg_tmp, (char *)"stop", pg_dir, NULL };

	if (!pg_running)
		return;
	if (run_cmd(argv, NULL, NULL, 0) != 0)
		fprintf(stderr, "lwc-bench: warning: pg-tmp.sh stop failed\n");
	pg_running = 0;
}

static void pg_start(struct rng *r)
{
	for (int tries = 0; tries < 5; tries++) {
		char port[16];
		char *argv[] = { (char *)"sh", pg_tmp, (char *)"start", pg_dir, port, NULL };
		char *nl;
		int p = 20000 + (int)rng_below(r, 40000);

		if (!port_free(p))
			continue;
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

static void cleanup(void)
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

static void on_signal(int sig)
{
	(void)sig;
	/* a signal during the normal cleanup: let that one finish */
	if (cleaning)
		return;
	cleanup();
	_exit(130);
}

/* ---- connections ----------------------------------------------------------------- */

static lwc_conn *lwc_open(void)
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

static PGconn *pg_open(void)
{
	PGconn *p = PQconnectdb(pg_conninfo);

	PGresult *r;

	if (PQstatus(p) != CONNECTION_OK)
		die("PostgreSQL: %s", PQerrorMessage(p));
	r = PQexec(p, "SET client_min_messages = warning");
	PQclear(r);
	return p;
}

/* Runs a statement that returns no rows; returns the affected-row count. */
static uint64_t lwc_cmd(lwc_conn *c, const char *sql)
{
	lwc_result *r = lwc_exec(c, sql);
	uint64_t n;

	if (lwc_result_status(r) == LWC_RESULT_ERROR)
		die("LWC: %s\n  statement: %.200s", lwc_result_error(r), sql);
	n = lwc_result_count(r);
	lwc_result_free(r);
	return n;
}

static uint64_t pg_cmd(PGconn *p, const char *sql)
{
	PGresult *r = PQexec(p, sql);
	uint64_t n;

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		die("PostgreSQL: %s  statement: %.200s", PQresultErrorMessage(r), sql);
	n = strtoull(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	return n;
}

/* ---- data ------------------------------------------------------------------------ */

static const char SCHEMA_COLS[] =
	"(id BIGINT PRIMARY KEY, c100 INT, c1k INT, c10k INT, c100k INT, c1m INT, "
	"pad VARCHAR(64))";
/* The modify table: no unique column unless --modify-pk (see run_modify). */
static const char SCHEMA_COLS_NOPK[] =
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

static void insert_sql(struct sb *b, const char *table, const uint64_t *order, uint64_t base,
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

/* ---- results --------------------------------------------------------------------- */

struct load_res {
	int done;
	uint64_t rows;
	unsigned stmts;
	double lwc_s;
	double pg_copy_s, pg_index_s;
};

struct sel_res {
	int rtt, layout;
	uint64_t k;
	struct stats lwc, pg;
};

struct mod_res {
	const char *op;
	uint64_t rows;
	unsigned stmts;
	double lwc_s, pg_s;
};

struct conc_res {
	int clients, rtt;
	uint64_t k;
	double lwc_secs, pg_secs;
	uint64_t lwc_stmts, pg_stmts;
	struct stats lwc, pg;
	double lwc_thr, pg_thr;      /* statements/s */
};

#define NCELLSZ 10
struct cell_res {
	size_t bytes;
	double perm_us[4], unperm_us[4], seal_us, open_us;
};

static struct load_res LOADS[2];
static struct sel_res *SELS;
static size_t nsels;
static struct mod_res MODS[3 * NSIZES + 1];
static size_t nmods;
static struct conc_res CONCS[MAX_LIST];
static size_t nconcs;
static struct cell_res CELLS[NCELLSZ];
static size_t ncells;
static double t_start;
static char started_at[64];
static char pg_version[256];
static double phase_s[8];

static void sel_add(struct sel_res r)
{
	SELS = xrealloc(SELS, (nsels + 1) * sizeof(*SELS));
	SELS[nsels++] = r;
}

static const struct sel_res *sel_find(int rtt, int layout, uint64_t k)
{
	for (size_t i = 0; i < nsels; i++)
		if (SELS[i].rtt == rtt && SELS[i].layout == layout && SELS[i].k == k)
			return &SELS[i];
	return NULL;
}

/* ---- experiment: load -------------------------------------------------------------- */

static void pg_load(PGconn *p, int layout, const uint64_t *order, struct load_res *lr)
{
	const char *t = TABLES[layout];
	struct sb b = { 0 };
	char sql[512];
	PGresult *r;
	double t0;

	snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", t);
	pg_cmd(p, sql);
	/* the primary key comes with the other indexes, after COPY */
	snprintf(sql, sizeof(sql), "CREATE TABLE %s (id BIGINT NOT NULL, c100 INT, c1k INT, "
		 "c10k INT, c100k INT, c1m INT, pad VARCHAR(64))", t);
	pg_cmd(p, sql);
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

	snprintf(sql, sizeof(sql), "CREATE TABLE %s %s", t, SCHEMA_COLS);
	lwc_cmd(c, sql);
	t0 = now_s();
	lr->stmts = 0;
	for (uint64_t off = 0; off < O.records; off += O.batch) {
		uint64_t n = O.records - off < O.batch ? O.records - off : O.batch, got;
		double el;

		insert_sql(&b, t, order, 0, off, n);
		if ((got = lwc_cmd(c, b.s)) != n)
			die("LWC INSERT into %s: %llu rows inserted, expected %llu", t,
			    (unsigned long long)got, (unsigned long long)n);
		lr->stmts++;
		el = now_s() - t0;
		progress("LWC load %s: %llu / %llu rows, %.0f rows/s, %.0f s left", t,
			 (unsigned long long)(off + n), (unsigned long long)O.records,
			 (off + n) / el, (O.records - off - n) / ((off + n) / el));
	}
	lr->lwc_s = now_s() - t0;
	free(b.s);
}

static void print_load_header(void)
{
	out("\n== Bulk load of N = %llu records of 128 bytes (LWC: INSERT statements of %u rows "
	    "through liblwc; PostgreSQL: COPY, then primary key + 5 B-tree indexes)\n",
	    (unsigned long long)O.records, O.batch);
	out("%-10s %10s %12s %11s %11s %11s %12s %8s\n", "layout", "LWC s", "LWC rows/s",
	    "PG COPY s", "PG index s", "PG total s", "PG rows/s", "LWC/PG");
}

static void print_load(int layout)
{
	const struct load_res *l = &LOADS[layout];
	double pg = l->pg_copy_s + l->pg_index_s;

	out("%-10s %10.2f %12.0f %11.2f %11.2f %11.2f %12.0f %7.2fx\n", LAYOUTS[layout], l->lwc_s,
	    l->rows / l->lwc_s, l->pg_copy_s, l->pg_index_s, pg, l->rows / pg, l->lwc_s / pg);
}

/* ---- experiment: select ------------------------------------------------------------ */

static double lwc_select(lwc_conn *c, const char *sql, uint64_t expect)
{
	double t0 = now_s(), t;
	lwc_result *r = lwc_exec(c, sql);
	uint64_t n = 0, sum = 0;
	int rc;

	if (lwc_result_status(r) == LWC_RESULT_ERROR)
		die("LWC: %s\n  statement: %s", lwc_result_error(r), sql);
	while ((rc = lwc_result_next(r)) == 1) {
		sum += (uint64_t)lwc_value_int(r, 0);
		n++;
	}
	if (rc < 0)
		die("LWC: %s\n  statement: %s", lwc_result_error(r), sql);
	lwc_result_free(r);
	t = now_s() - t0;
	if (n != expect)
		die("LWC: %s returned %llu rows, expected %llu", sql, (unsigned long long)n,
		    (unsigned long long)expect);
	(void)sum;
	return t;
}

static double pg_select(PGconn *p, const char *sql, uint64_t expect)
{
	double t0 = now_s(), t;
	PGresult *r = PQexec(p, sql);
	uint64_t n, sum = 0;

	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		die("PostgreSQL: %s  statement: %s", PQresultErrorMessage(r), sql);
	n = (uint64_t)PQntuples(r);
	for (uint64_t i = 0; i < n; i++)
		sum += strtoull(PQgetvalue(r, (int)i, 0), NULL, 10);
	PQclear(r);
	t = now_s() - t0;
	if (n != expect)
		die("PostgreSQL: %s returned %llu rows, expected %llu", sql, (unsigned long long)n,
		    (unsigned long long)expect);
	(void)sum;
	return t;
}

/* Repetitions per result size: fewer for the big ones. */
static unsigned reps_for(uint64_t k, int rtt)
{
	static const unsigned base[NSIZES] = { 20, 10, 4, 2, 1 };
	static const unsigned with_rtt[NSIZES] = { 10, 5, 2, 2, 1 };
	unsigned r = 1;

	for (int i = 0; i < NSIZES; i++)
		if (SIZES[i] == k)
			r = rtt ? with_rtt[i] : base[i];
	r = (unsigned)lround(r * O.reps_scale);
	return r ? r : 1;
}

static void print_select_header(int rtt)
{
	if (rtt)
		out("\n== SELECT * FROM t WHERE cK = v with a simulated proxy-cloud round trip of "
		    "%d ms (PostgreSQL: local, no round trip)\n", rtt);
	else
		out("\n== SELECT * FROM t WHERE cK = v (latency in ms; rows/s = K / median)\n");
	out("%-10s %8s %5s %11s %11s %12s %11s %11s %12s %8s\n", "layout", "rows K", "reps",
	    "LWC med", "LWC p95", "LWC rows/s", "PG med", "PG p95", "PG rows/s", "LWC/PG");
}

static void print_select(const struct sel_res *s)
{
	char kb[32];

	out("%-10s %8s %5u %11.2f %11.2f %12.0f %11.2f %11.2f %12.0f %7.2fx\n",
	    LAYOUTS[s->layout], size_name(s->k, kb, sizeof(kb)), s->lwc.n, s->lwc.med * 1e3,
	    s->lwc.p95 * 1e3, s->k / s->lwc.med, s->pg.med * 1e3, s->pg.p95 * 1e3,
	    s->k / s->pg.med, s->lwc.med / s->pg.med);
}

/* The SELECTs of one round trip; PostgreSQL runs only at rtt 0 (it has no
 * cloud), later rounds reuse its figures. */
static void run_selects(lwc_conn *c, PGconn *p, int rtt, struct rng *rng)
{
	char sql[256], kb[32];

	print_select_header(rtt);
	for (int layout = 0; layout < 2; layout++) {
		for (int si = 0; si < NSIZES; si++) {
			uint64_t k = SIZES[si], nv = O.records / k;
			unsigned reps = reps_for(k, rtt);
			double *lw = xmalloc(reps * sizeof(double)), *pw = xmalloc(reps * sizeof(double));
			struct sel_res res = { .rtt = rtt, .layout = layout, .k = k };
			const struct sel_res *base = sel_find(0, layout, k);

			if (nv == 0 || (rtt && k > O.rtt_max_rows))
				break;
			/* one untimed warm-up for the small sizes */
			if (k <= 1000) {
				snprintf(sql, sizeof(sql), "SELECT * FROM %s WHERE %s = %llu",
					 TABLES[layout], COLS[si], (unsigned long long)rng_below(rng, nv));
				lwc_select(c, sql, k);
				if (rtt == 0)
					pg_select(p, sql, k);
			}
			for (unsigned i = 0; i < reps; i++) {
				progress("SELECT %s %s rows, rtt %d ms: %u / %u", LAYOUTS[layout],
					 size_name(k, kb, sizeof(kb)), rtt, i, reps);
				snprintf(sql, sizeof(sql), "SELECT * FROM %s WHERE %s = %llu",
					 TABLES[layout], COLS[si], (unsigned long long)rng_below(rng, nv));
				/* alternate the order so neither always runs on a warm cache */
				if (rtt == 0 && i % 2) {
					pw[i] = pg_select(p, sql, k);
					lw[i] = lwc_select(c, sql, k);
				} else {
					lw[i] = lwc_select(c, sql, k);
					if (rtt == 0)
						pw[i] = pg_select(p, sql, k);
				}
			}
			res.lwc = stats_of(lw, reps);
			if (rtt == 0)
				res.pg = stats_of(pw, reps);
			else if (base)
				res.pg = base->pg;
			else {
				/* no rtt 0 round: measure PostgreSQL now */
				for (unsigned i = 0; i < reps; i++) {
					snprintf(sql, sizeof(sql), "SELECT * FROM %s WHERE %s = %llu",
						 TABLES[layout], COLS[si],
						 (unsigned long long)rng_below(rng, nv));
					pw[i] = pg_select(p, sql, k);
				}
				res.pg = stats_of(pw, reps);
			}
			sel_add(res);
			print_select(&SELS[nsels - 1]);
			free(lw);
			free(pw);
		}
	}
}

/* ---- experiment: modify ------------------------------------------------------------ */

static void print_mod_header(void)
{
	out("\n== INSERT, UPDATE, DELETE of K rows: table m (%s), INSERT as statements of up "
	    "to %u rows,\n   UPDATE m SET pad = ... WHERE cK = v, DELETE FROM m WHERE cK = v; "
	    "UPDATE-PK: UPDATE clus SET pad = ... WHERE c100k = v\n",
	    O.modify_pk ? "id BIGINT PRIMARY KEY" : "no unique column", O.batch);
	out("%-9s %9s %6s %11s %12s %11s %12s %8s\n", "op", "rows", "stmts", "LWC s",
	    "LWC rows/s", "PG s", "PG rows/s", "LWC/PG");
}

static void print_mod(const struct mod_res *m)
{
	char kb[32];

	out("%-9s %9s %6u %11.3f %12.0f %11.3f %12.0f %7.2fx\n", m->op,
	    size_name(m->rows, kb, sizeof(kb)), m->stmts, m->lwc_s, m->rows / m->lwc_s, m->pg_s,
	    m->rows / m->pg_s, m->lwc_s / m->pg_s);
}

static void run_modify(lwc_conn *c, PGconn *p, struct rng *rng)
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
			if (pass == 0) {
				/* the same statements on both, alternating which goes first */
				m->lwc_s = m->pg_s = 0;
				for (uint64_t off = 0; off < k; off += O.batch) {
					uint64_t n = k - off < O.batch ? k - off : O.batch, got;

					insert_sql(&b, "m", NULL, base, off, n);
					t0 = now_s();
					if ((got = lwc_cmd(c, b.s)) != n)
						die("LWC INSERT into m: %llu rows, expected %llu",
						    (unsigned long long)got, (unsigned long long)n);
					m->lwc_s += now_s() - t0;
					t0 = now_s();
					pg_cmd(p, b.s);
					m->pg_s += now_s() - t0;
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
				t0 = now_s();
				if ((got = lwc_cmd(c, sql)) != k)
					die("LWC: %s: %llu rows, expected %llu", sql,
					    (unsigned long long)got, (unsigned long long)k);
				m->lwc_s = now_s() - t0;
				progress("%s %s rows (PostgreSQL)", ops[pass],
					 size_name(k, kb, sizeof(kb)));
				t0 = now_s();
				if ((got = pg_cmd(p, sql)) != k)
					die("PostgreSQL: %s: %llu rows, expected %llu", sql,
					    (unsigned long long)got, (unsigned long long)k);
				m->pg_s = now_s() - t0;
				m->stmts = 1;
			}
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
		progress("UPDATE of 100k rows of clus (LWC)");
		t0 = now_s();
		if ((got = lwc_cmd(c, sql)) != k)
			die("LWC: %s: %llu rows, expected %llu", sql, (unsigned long long)got,
			    (unsigned long long)k);
		m->lwc_s = now_s() - t0;
		progress("UPDATE of 100k rows of clus (PostgreSQL)");
		t0 = now_s();
		if ((got = pg_cmd(p, sql)) != k)
			die("PostgreSQL: %s: %llu rows, expected %llu", sql, (unsigned long long)got,
			    (unsigned long long)k);
		m->pg_s = now_s() - t0;
		nmods++;
		print_mod(m);
	}
	free(b.s);
}

/* ---- experiment: concurrent clients ------------------------------------------------ */

struct cthread {
	pthread_t th;
	int pg, si, layout;
	uint64_t seed;
	pthread_barrier_t *bar;
	double start, stop;            /* the measuring window                   */
	double *lat;
	size_t nlat, cap;
	double last_end;
	lwc_conn *lc;
	PGconn *pc;
};

static void *client_main(void *arg)
{
	struct cthread *t = arg;
	struct rng rng;
	uint64_t k = SIZES[t->si], nv = O.records / k;
	char sql[256];

	rng_seed(&rng, t->seed);
	pthread_barrier_wait(t->bar);
	while (now_s() < t->start)
		usleep(1000);
	for (;;) {
		double t0 = now_s(), d;

		if (t0 >= t->stop)
			break;
		snprintf(sql, sizeof(sql), "SELECT * FROM %s WHERE %s = %llu", TABLES[t->layout],
			 COLS[t->si], (unsigned long long)rng_below(&rng, nv));
		d = t->pg ? pg_select(t->pc, sql, k) : lwc_select(t->lc, sql, k);
		if (t->nlat == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 256;
			t->lat = xrealloc(t->lat, t->cap * sizeof(double));
		}
		t->lat[t->nlat++] = d;
		t->last_end = now_s();
	}
	return NULL;
}

/* n clients for secs seconds; returns statements/s, fills *st. */
static double run_clients(int pg, int n, double secs, int si, int layout, uint64_t *nstmts,
			  double *elapsed, struct stats *st, struct rng *rng)
{
	struct cthread *ts = calloc((size_t)n, sizeof(*ts));
	pthread_barrier_t bar;
	double start, end = 0, *all;
	size_t total = 0, pos = 0;

	if (ts == NULL)
		die("out of memory");
	pthread_barrier_init(&bar, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		ts[i].pg = pg;
		ts[i].si = si;
		ts[i].layout = layout;
		ts[i].seed = rng_next(rng);
		ts[i].bar = &bar;
		if (pg)
			ts[i].pc = pg_open();
		else
			ts[i].lc = lwc_open();
	}
	start = now_s() + 0.2;
	for (int i = 0; i < n; i++) {
		ts[i].start = start;
		ts[i].stop = start + secs;
		if (pthread_create(&ts[i].th, NULL, client_main, &ts[i]) != 0)
			die("pthread_create failed");
	}
	pthread_barrier_wait(&bar);
	while (now_s() < start + secs) {
		progress("%d %s clients: %.0f / %.0f s", n, pg ? "PostgreSQL" : "LWC",
			 now_s() - start > 0 ? now_s() - start : 0, secs);
		usleep(200000);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(ts[i].th, NULL);
		total += ts[i].nlat;
		if (ts[i].last_end > end)
			end = ts[i].last_end;
		if (pg)
			PQfinish(ts[i].pc);
		else
			lwc_close(ts[i].lc);
	}
	all = xmalloc(total * sizeof(double));
	for (int i = 0; i < n; i++) {
		memcpy(all + pos, ts[i].lat, ts[i].nlat * sizeof(double));
		pos += ts[i].nlat;
		free(ts[i].lat);
	}
	*st = stats_of(all, (unsigned)total);
	free(all);
	free(ts);
	pthread_barrier_destroy(&bar);
	*nstmts = total;
	*elapsed = end - start;
	return total / (end - start);
}

static void run_concurrency(struct rng *rng)
{
	const int si = 0, layout = 0;          /* 100-row SELECTs, clustered */

	out("\n== Throughput of concurrent clients (threads, each its own connection), "
	    "SELECT * FROM clus WHERE c100 = v (100 rows);\n   LWC with a %d ms proxy-cloud round "
	    "trip, PostgreSQL local\n", O.clients_rtt);
	out("%7s %8s %11s %11s %11s %9s %11s %11s %8s\n", "clients", "LWC stm", "LWC stm/s",
	    "LWC med ms", "LWC p95 ms", "speedup", "PG stm/s", "PG med ms", "PG/LWC");
	lwc_up(O.clients_rtt);
	for (int i = 0; i < O.nclients; i++) {
		struct conc_res *c = &CONCS[nconcs];
		const struct conc_res *first = nconcs ? &CONCS[0] : c;

		c->clients = O.clients[i];
		c->rtt = O.clients_rtt;
		c->k = SIZES[si];
		c->lwc_thr = run_clients(0, c->clients, O.client_secs, si, layout, &c->lwc_stmts,
					 &c->lwc_secs, &c->lwc, rng);
		c->pg_thr = run_clients(1, c->clients, O.pg_client_secs, si, layout, &c->pg_stmts,
					&c->pg_secs, &c->pg, rng);
		nconcs++;
		out("%7d %8llu %11.1f %11.2f %11.2f %8.2fx %11.1f %11.2f %7.1fx\n", c->clients,
		    (unsigned long long)c->lwc_stmts, c->lwc_thr, c->lwc.med * 1e3, c->lwc.p95 * 1e3,
		    c->lwc_thr / first->lwc_thr, c->pg_thr, c->pg.med * 1e3, c->pg_thr / c->lwc_thr);
	}
}

/* ---- experiment: cells (Fig. 11) ----------------------------------------------------- */

static double time_loop(int (*fn)(void *), void *arg, double min_s)
{
	unsigned iters = 0;
	double t0 = now_s(), t;

	do {
		if (fn(arg) != LWC_OK)
			die("crypto call failed");
		iters++;
		t = now_s() - t0;
	} while (t < min_s || iters < 3);
	return t / iters;
}

struct cellarg {
	uint8_t *buf, *sealed, key[CRY_KEY_BYTES], seed[CRY_SEED_BYTES];
	uint32_t *scratch;
	size_t len;
	unsigned cell;
	uint64_t ver;
};

/* What the proxy does per written block: derive the seed, permute. */
static int do_perm(void *p)
{
	struct cellarg *a = p;
	int rc = cry_perm_seed(a->seed, a->key, 7, ++a->ver);
	return rc ? rc : cry_permute(a->buf, a->len, a->cell, a->seed, a->scratch);
}

static int do_unperm(void *p)
{
	struct cellarg *a = p;
	int rc = cry_perm_seed(a->seed, a->key, 7, a->ver);
	return rc ? rc : cry_unpermute(a->buf, a->len, a->cell, a->seed, a->scratch);
}

static int do_seal(void *p)
{
	struct cellarg *a = p;
	return cry_block_seal(a->sealed, a->key, 7, ++a->ver, a->buf, a->len);
}

static int do_open(void *p)
{
	struct cellarg *a = p;
	return cry_block_open(a->buf, a->key, 7, a->ver, a->sealed, a->len + CRY_SEAL_OVERHEAD);
}

static void run_cells(void)
{
	static const unsigned cells[4] = { 1, 2, 4, 8 };

	out("\n== Cell permutation (seed derivation + Fisher-Yates) against AEAD sealing "
	    "(XChaCha20-Poly1305), microseconds per block, one core\n");
	out("%9s %10s %10s %10s %10s %10s %10s %10s %12s\n", "block B", "perm c=1", "perm c=2",
	    "perm c=4", "perm c=8", "seal", "open", "c=1/seal", "seal MB/s");
	for (size_t bytes = 512; bytes <= 256 * 1024 && ncells < NCELLSZ; bytes *= 2) {
		struct cell_res *r = &CELLS[ncells++];
		struct cellarg a = { 0 };
		size_t maxw = cry_perm_scratch_words(bytes, 1);

		a.len = bytes;
		a.buf = xmalloc(bytes);
		a.sealed = xmalloc(bytes + CRY_SEAL_OVERHEAD);
		a.scratch = xmalloc(maxw * sizeof(uint32_t) + 64);
		randombytes_buf(a.buf, bytes);
		randombytes_buf(a.key, sizeof(a.key));
		r->bytes = bytes;
		for (int ci = 0; ci < 4; ci++) {
			progress("cells: %zu B, cell %u", bytes, cells[ci]);
			a.cell = cells[ci];
			r->perm_us[ci] = time_loop(do_perm, &a, 0.1) * 1e6;
			r->unperm_us[ci] = time_loop(do_unperm, &a, 0.05) * 1e6;
		}
		r->seal_us = time_loop(do_seal, &a, 0.1) * 1e6;
		r->open_us = time_loop(do_open, &a, 0.05) * 1e6;
		out("%9zu %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %9.2fx %12.0f\n", bytes,
		    r->perm_us[0], r->perm_us[1], r->perm_us[2], r->perm_us[3], r->seal_us,
		    r->open_us, r->perm_us[0] / r->seal_us, bytes / r->seal_us);
		free(a.buf);
		free(a.sealed);
		free(a.scratch);
	}
}

/* ---- machine ------------------------------------------------------------------------- */

static char cpu_model[256], mem_total[64];
static long ncpu;

static void read_machine(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(cpu_model, sizeof(cpu_model), "unknown");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "model name", 10) == 0) {
				char *p = strchr(line, ':');
				if (p) {
					p++;
					while (*p == ' ' || *p == '\t')
						p++;
					p[strcspn(p, "\n")] = '\0';
					snprintf(cpu_model, sizeof(cpu_model), "%s", p);
				}
				break;
			}
		fclose(f);
	}
	snprintf(mem_total, sizeof(mem_total), "unknown");
	if ((f = fopen("/proc/meminfo", "r")) != NULL) {
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "MemTotal:", 9) == 0) {
				unsigned long long kb = strtoull(line + 9, NULL, 10);
				snprintf(mem_total, sizeof(mem_total), "%.1f GiB", kb / 1048576.0);
				break;
			}
		fclose(f);
	}
}

static void loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)len, f)) {
			/* the three load averages only */
			char *p = buf;
			for (int i = 0; i < 3 && p; i++)
				if ((p = strchr(p, ' ')) != NULL && i < 2)
					p++;
			if (p)
				*p = '\0';
			buf[strcspn(buf, "\n")] = '\0';
		}
		fclose(f);
	}
}

/* ---- other load on the machine ------------------------------------------------------ */

/* A thread samples /proc every 2 s: CPU time of our processes (this one,
 * the proxy and cloud store of work_dir, the PostgreSQL cluster of pg_dir
 * and their children) against everything else, so the report can say how
 * busy the machine was with other work. */
struct procsample {
	int pid, ppid;
	unsigned long long ticks;
	int ours;
};

static pthread_t sampler_th;
static volatile int sampler_stop;
static int sampler_started;
static double other_cores_sum, other_cores_max, ours_cores_sum, sampler_secs;

static int cmdline_has(int pid, const char *needle)
{
	char path[64], buf[4096];
	FILE *f;
	size_t n;

	if (needle[0] == '\0')
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static size_t read_procs(struct procsample *v, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;
	int me = getpid();

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && n < max) {
		char path[300], buf[1024], *p;
		FILE *f;
		int pid = atoi(e->d_name), ppid;
		unsigned long long ut, st;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) == NULL) {
			fclose(f);
			continue;
		}
		fclose(f);
		/* after the ")" of comm: state ppid ... utime(14) stime(15) */
		if ((p = strrchr(buf, ')')) == NULL)
			continue;
		if (sscanf(p + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ppid, &ut,
			   &st) != 3)
			continue;
		v[n].pid = pid;
		v[n].ppid = ppid;
		v[n].ticks = ut + st;
		v[n].ours = pid == me || cmdline_has(pid, work_dir) || cmdline_has(pid, pg_dir);
		n++;
	}
	closedir(d);
	/* children of ours are ours (PostgreSQL backends) */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n && !v[i].ours; j++)
			if (v[j].ours && v[j].pid == v[i].ppid)
				v[i].ours = 1;
	return n;
}

static int cmp_pid(const void *a, const void *b)
{
	return ((const struct procsample *)a)->pid - ((const struct procsample *)b)->pid;
}

static void *sampler_main(void *arg)
{
	enum { MAXP = 8192 };
	struct procsample *prev = calloc(MAXP, sizeof(*prev)), *cur = calloc(MAXP, sizeof(*cur));
	size_t np, nc;
	double tprev = now_s(), hz = (double)sysconf(_SC_CLK_TCK);

	(void)arg;
	if (prev == NULL || cur == NULL)
		return NULL;
	np = read_procs(prev, MAXP);
	qsort(prev, np, sizeof(*prev), cmp_pid);
	while (!sampler_stop) {
		double t, other = 0, ours = 0;

		for (int i = 0; i < 20 && !sampler_stop; i++)
			usleep(100000);
		nc = read_procs(cur, MAXP);
		qsort(cur, nc, sizeof(*cur), cmp_pid);
		t = now_s();
		for (size_t i = 0, j = 0; i < nc; i++) {
			unsigned long long before = 0;
			while (j < np && prev[j].pid < cur[i].pid)
				j++;
			if (j < np && prev[j].pid == cur[i].pid && prev[j].ticks <= cur[i].ticks)
				before = prev[j].ticks;
			else if (!(j < np && prev[j].pid == cur[i].pid))
				before = cur[i].ticks;     /* new process: count from now */
			if (cur[i].ours)
				ours += (cur[i].ticks - before) / hz;
			else
				other += (cur[i].ticks - before) / hz;
		}
		if (t > tprev) {
			other_cores_sum += other;
			ours_cores_sum += ours;
			sampler_secs += t - tprev;
			if (other / (t - tprev) > other_cores_max)
				other_cores_max = other / (t - tprev);
		}
		tprev = t;
		{
			struct procsample *x = prev;
			prev = cur;
			cur = x;
			np = nc;
		}
	}
	free(prev);
	free(cur);
	return NULL;
}

static void sampler_start(void)
{
	if (pthread_create(&sampler_th, NULL, sampler_main, NULL) == 0)
		sampler_started = 1;
}

static void sampler_end(void)
{
	if (!sampler_started)
		return;
	sampler_stop = 1;
	pthread_join(sampler_th, NULL);
	sampler_started = 0;
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void json_stats(FILE *f, const char *name, const struct stats *s)
{
	fprintf(f, "\"%s\": {\"n\": %u, \"median_ms\": %.4f, \"p95_ms\": %.4f, \"mean_ms\": %.4f, "
		"\"min_ms\": %.4f, \"max_ms\": %.4f}", name, s->n, s->med * 1e3, s->p95 * 1e3,
		s->mean * 1e3, s->min * 1e3, s->max * 1e3);
}

static void write_json(const char *path, const char *la0, const char *la1)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		die("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "{\n  \"benchmark\": \"lwc-bench\",\n  \"started\": ");
	json_str(f, started_at);
	fprintf(f, ",\n  \"seconds\": %.1f,\n  \"records\": %llu,\n  \"record_bytes\": 128,\n",
		now_s() - t_start, (unsigned long long)O.records);
	fprintf(f, "  \"machine\": {\"cpus\": %ld, \"cpu_model\": ", ncpu);
	json_str(f, cpu_model);
	fprintf(f, ", \"memory\": ");
	json_str(f, mem_total);
	fprintf(f, ", \"loadavg_start\": ");
	json_str(f, la0);
	fprintf(f, ", \"loadavg_end\": ");
	json_str(f, la1);
	fprintf(f, ", \"postgresql\": ");
	json_str(f, pg_version);
	fprintf(f, ", \"other_processes_cores_mean\": %.3f, \"other_processes_cores_max_2s\": %.3f, "
		"\"benchmark_processes_cores_mean\": %.3f",
		sampler_secs > 0 ? other_cores_sum / sampler_secs : 0, other_cores_max,
		sampler_secs > 0 ? ours_cores_sum / sampler_secs : 0);
	fprintf(f, "},\n  \"lwc\": {\"deployment\": \"scripts/lwc-local, LMDB cloud store\", "
		"\"geometry\": \"R=128, m=64 slots, theta=48, cells of 1 byte\", "
		"\"pad\": \"ratio:2 (pad-min 4)\", \"sealing\": true, \"permutation\": true, "
		"\"insert_rows_per_statement\": %u},\n", O.batch);
	fprintf(f, "  \"phase_seconds\": {");
	for (int i = 0; i < 6; i++)
		fprintf(f, "%s\"%s\": %.1f", i ? ", " : "", EXP_NAMES[i], phase_s[i]);
	fprintf(f, "},\n");
	fprintf(f, "  \"load\": [");
	for (int l = 0, first = 1; l < 2; l++) {
		const struct load_res *r = &LOADS[l];
		if (!r->done)
			continue;
		fprintf(f, "%s\n    {\"layout\": \"%s\", \"rows\": %llu, \"lwc_statements\": %u, "
			"\"lwc_s\": %.3f, \"lwc_rows_per_s\": %.1f, \"pg_copy_s\": %.3f, "
			"\"pg_index_s\": %.3f, \"pg_total_s\": %.3f, \"pg_rows_per_s\": %.1f, "
			"\"ratio\": %.3f}", first ? "" : ",", LAYOUTS[l], (unsigned long long)r->rows,
			r->stmts, r->lwc_s, r->rows / r->lwc_s, r->pg_copy_s, r->pg_index_s,
			r->pg_copy_s + r->pg_index_s, r->rows / (r->pg_copy_s + r->pg_index_s),
			r->lwc_s / (r->pg_copy_s + r->pg_index_s));
		first = 0;
	}
	fprintf(f, "\n  ],\n  \"select\": [");
	for (size_t i = 0; i < nsels; i++) {
		const struct sel_res *s = &SELS[i];
		fprintf(f, "%s\n    {\"rtt_ms\": %d, \"layout\": \"%s\", \"rows\": %llu, \"reps\": %u, ",
			i ? "," : "", s->rtt, LAYOUTS[s->layout], (unsigned long long)s->k, s->lwc.n);
		json_stats(f, "lwc", &s->lwc);
		fprintf(f, ", ");
		json_stats(f, "pg", &s->pg);
		fprintf(f, ", \"lwc_rows_per_s\": %.1f, \"pg_rows_per_s\": %.1f, "
			"\"lwc_stmts_per_s\": %.3f, \"pg_stmts_per_s\": %.3f, \"ratio\": %.3f}",
			s->k / s->lwc.med, s->k / s->pg.med, 1 / s->lwc.mean, 1 / s->pg.mean,
			s->lwc.med / s->pg.med);
	}
	fprintf(f, "\n  ],\n  \"modify\": [");
	for (size_t i = 0; i < nmods; i++) {
		const struct mod_res *m = &MODS[i];
		fprintf(f, "%s\n    {\"op\": \"%s\", \"rows\": %llu, \"statements\": %u, "
			"\"reps\": 1, \"lwc_s\": %.4f, \"pg_s\": %.4f, \"lwc_rows_per_s\": %.1f, "
			"\"pg_rows_per_s\": %.1f, \"ratio\": %.3f}", i ? "," : "", m->op,
			(unsigned long long)m->rows, m->stmts, m->lwc_s, m->pg_s, m->rows / m->lwc_s,
			m->rows / m->pg_s, m->lwc_s / m->pg_s);
	}
	fprintf(f, "\n  ],\n  \"clients\": [");
	for (size_t i = 0; i < nconcs; i++) {
		const struct conc_res *c = &CONCS[i];
		fprintf(f, "%s\n    {\"clients\": %d, \"lwc_rtt_ms\": %d, \"rows\": %llu, "
			"\"lwc_statements\": %llu, \"lwc_seconds\": %.2f, \"lwc_stmts_per_s\": %.2f, "
			"\"speedup_vs_1\": %.3f, ", i ? "," : "", c->clients, c->rtt,
			(unsigned long long)c->k, (unsigned long long)c->lwc_stmts, c->lwc_secs,
			c->lwc_thr, c->lwc_thr / CONCS[0].lwc_thr);
		json_stats(f, "lwc", &c->lwc);
		fprintf(f, ", \"pg_statements\": %llu, \"pg_seconds\": %.2f, \"pg_stmts_per_s\": %.2f, ",
			(unsigned long long)c->pg_stmts, c->pg_secs, c->pg_thr);
		json_stats(f, "pg", &c->pg);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ],\n  \"cells\": [");
	for (size_t i = 0; i < ncells; i++) {
		const struct cell_res *c = &CELLS[i];
		fprintf(f, "%s\n    {\"block_bytes\": %zu, \"permute_us\": {\"1\": %.3f, \"2\": %.3f, "
			"\"4\": %.3f, \"8\": %.3f}, \"unpermute_us\": {\"1\": %.3f, \"2\": %.3f, "
			"\"4\": %.3f, \"8\": %.3f}, \"seal_us\": %.3f, \"open_us\": %.3f}",
			i ? "," : "", c->bytes, c->perm_us[0], c->perm_us[1], c->perm_us[2],
			c->perm_us[3], c->unperm_us[0], c->unperm_us[1], c->unperm_us[2],
			c->unperm_us[3], c->seal_us, c->open_us);
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f) != 0)
		die("writing %s failed", path);
}

/* ---- plots ------------------------------------------------------------------------------ */

static FILE *open_w(const char *dir, const char *name)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		die("cannot write %s: %s", path, strerror(errno));
	return f;
}

static void write_plots(const char *ddir, const char *img)
{
	char term[128], path[PATH_MAX + 64];
	FILE *f, *g;
	char hdr[256];

	/* pngcairo when this gnuplot has it */
	{
		char capture[16384];
		size_t got = 0, r;
		FILE *pf;

		fflush(stdout);
		fflush(stderr);
		capture[0] = '\0';
		if ((pf = popen("gnuplot -e 'set terminal' 2>&1", "r")) != NULL) {
			while ((r = fread(capture + got, 1, sizeof(capture) - 1 - got, pf)) > 0)
				got += r;
			capture[got] = '\0';
			pclose(pf);
		}
		if (strstr(capture, "pngcairo"))
			snprintf(term, sizeof(term), "pngcairo size 1400,620 font 'Sans,11'");
		else if (strstr(capture, " png "))
			snprintf(term, sizeof(term), "png size 1400,620");
		else {
			say("gnuplot has no png terminal (or is missing): no plots");
			return;
		}
	}
	snprintf(hdr, sizeof(hdr), "set terminal %s\nset grid lc rgb '#dddddd'\n"
		 "set key inside top left opaque box\n", term);

	/* select: latency and rows/s per size; one file per (rtt, layout, system) */
	if (nsels) {
		for (int layout = 0; layout < 2; layout++) {
			char name[64];
			snprintf(name, sizeof(name), "select-%s.dat", LAYOUTS[layout]);
			f = open_w(ddir, name);
			fprintf(f, "# rows lwc_med_ms lwc_p95_ms pg_med_ms pg_p95_ms lwc_rows_s pg_rows_s\n");
			for (size_t i = 0; i < nsels; i++) {
				const struct sel_res *s = &SELS[i];
				if (s->rtt || s->layout != layout)
					continue;
				fprintf(f, "%llu %.4f %.4f %.4f %.4f %.1f %.1f\n",
					(unsigned long long)s->k, s->lwc.med * 1e3, s->lwc.p95 * 1e3,
					s->pg.med * 1e3, s->pg.p95 * 1e3, s->k / s->lwc.med,
					s->k / s->pg.med);
			}
			fclose(f);
		}
		g = open_w(ddir, "select.gp");
		fprintf(g, "%sset output '%s/lwc-bench-%s-select.png'\n", hdr, img, O.tag);
		fprintf(g, "set multiplot layout 1,2 title 'SELECT * FROM t WHERE cK = v, N = %llu "
			"records (LWC: {/Symbol g} = 2k, sealed, permuted; PostgreSQL: B-tree)'\n"
			"set logscale xy\nset format x '%%g'\nset format y '%%g'\n"
			"set xlabel 'rows returned (K)'\n", (unsigned long long)O.records);
		fprintf(g, "set ylabel 'latency (ms)'\nset title 'Latency, median (p95 dashed)'\n"
			"set key bottom right\n"
			"plot '%1$s/select-clustered.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC clustered', "
			"'%1$s/select-clustered.dat' u 1:3 w l dt 2 lc rgb '#1f77b4' notitle, "
			"'%1$s/select-scattered.dat' u 1:2 w lp lw 2 pt 5 lc rgb '#ff7f0e' t 'LWC scattered', "
			"'%1$s/select-scattered.dat' u 1:3 w l dt 2 lc rgb '#ff7f0e' notitle, "
			"'%1$s/select-clustered.dat' u 1:4 w lp lw 2 pt 6 lc rgb '#2ca02c' t 'PostgreSQL clustered', "
			"'%1$s/select-scattered.dat' u 1:4 w lp lw 2 pt 4 lc rgb '#d62728' t 'PostgreSQL scattered'\n",
			ddir);
		fprintf(g, "set ylabel 'rows/s (K / median)'\nset title 'Throughput'\n"
			"set key top left\nset yrange [*:1e8]\n"
			"plot '%1$s/select-clustered.dat' u 1:6 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC clustered', "
			"'%1$s/select-scattered.dat' u 1:6 w lp lw 2 pt 5 lc rgb '#ff7f0e' t 'LWC scattered', "
			"'%1$s/select-clustered.dat' u 1:7 w lp lw 2 pt 6 lc rgb '#2ca02c' t 'PostgreSQL clustered', "
			"'%1$s/select-scattered.dat' u 1:7 w lp lw 2 pt 4 lc rgb '#d62728' t 'PostgreSQL scattered'\n"
			"unset multiplot\n", ddir);
		fclose(g);
	}
	/* rtt: LWC median per size, one line per rtt, per layout */
	{
		int rtts[MAX_LIST + 1], nr = 0;

		for (size_t i = 0; i < nsels; i++) {
			int seen = 0;
			for (int j = 0; j < nr; j++)
				seen |= rtts[j] == SELS[i].rtt;
			if (!seen && nr < MAX_LIST)
				rtts[nr++] = SELS[i].rtt;
		}
		if (nr > 1) {
			static const char *const colors[] = { "#1f77b4", "#ff7f0e", "#2ca02c",
				"#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22" };
			g = open_w(ddir, "rtt.gp");
			fprintf(g, "%sset output '%s/lwc-bench-%s-rtt.png'\n", hdr, img, O.tag);
			fprintf(g, "set multiplot layout 1,2 title 'SELECT latency (median) with a "
				"simulated proxy-cloud round trip, N = %llu'\nset logscale xy\n"
				"set format x '%%g'\nset format y '%%g'\nset xlabel 'rows returned (K)'\n"
				"set ylabel 'latency (ms)'\nset key bottom right\n", (unsigned long long)O.records);
			for (int layout = 0; layout < 2; layout++) {
				fprintf(g, "set title '%s'\nplot ", LAYOUTS[layout]);
				for (int j = 0; j < nr; j++) {
					char name[64];
					snprintf(name, sizeof(name), "rtt-%d-%s.dat", rtts[j], LAYOUTS[layout]);
					f = open_w(ddir, name);
					for (size_t i = 0; i < nsels; i++)
						if (SELS[i].rtt == rtts[j] && SELS[i].layout == layout)
							fprintf(f, "%llu %.4f %.4f %.4f\n",
								(unsigned long long)SELS[i].k,
								SELS[i].lwc.med * 1e3, SELS[i].lwc.p95 * 1e3,
								SELS[i].pg.med * 1e3);
					fclose(f);
					fprintf(g, "'%s/%s' u 1:2 w lp lw 2 pt 7 lc rgb '%s' t 'LWC, %d ms', ",
						ddir, name, colors[j % 8], rtts[j]);
				}
				fprintf(g, "'%s/rtt-%d-%s.dat' u 1:4 w lp lw 2 dt 2 pt 4 lc rgb '#d62728' "
					"t 'PostgreSQL (local)'\n", ddir, rtts[0], LAYOUTS[layout]);
			}
			fprintf(g, "unset multiplot\n");
			fclose(g);
		}
	}
	/* modify */
	if (nmods) {
		static const char *const ops[3] = { "INSERT", "UPDATE", "DELETE" };
		g = open_w(ddir, "modify.gp");
		fprintf(g, "%sset output '%s/lwc-bench-%s-modify.png'\n", hdr, img, O.tag);
		fprintf(g, "set multiplot layout 1,3 title 'INSERT, UPDATE and DELETE of K rows "
			"(N = %llu)'\nset logscale xy\nset format x '%%g'\nset format y '%%g'\n"
			"set xlabel 'rows (K)'\nset ylabel 'time (s)'\n", (unsigned long long)O.records);
		for (int op = 0; op < 3; op++) {
			char name[64];
			snprintf(name, sizeof(name), "modify-%s.dat", ops[op]);
			f = open_w(ddir, name);
			for (size_t i = 0; i < nmods; i++)
				if (strcmp(MODS[i].op, ops[op]) == 0)
					fprintf(f, "%llu %.4f %.4f\n", (unsigned long long)MODS[i].rows,
						MODS[i].lwc_s, MODS[i].pg_s);
			fclose(f);
			fprintf(g, "set title '%s'\nplot '%s/%s' u 1:2 w lp lw 2 pt 7 lc rgb '#1f77b4' "
				"t 'LWC', '%s/%s' u 1:3 w lp lw 2 pt 4 lc rgb '#d62728' t 'PostgreSQL'\n",
				ops[op], ddir, name, ddir, name);
		}
		fprintf(g, "unset multiplot\n");
		fclose(g);
	}
	/* clients */
	if (nconcs) {
		f = open_w(ddir, "clients.dat");
		fprintf(f, "# clients lwc_stmts_s lwc_med_ms pg_stmts_s ideal\n");
		for (size_t i = 0; i < nconcs; i++)
			fprintf(f, "%d %.2f %.3f %.2f %.2f\n", CONCS[i].clients, CONCS[i].lwc_thr,
				CONCS[i].lwc.med * 1e3, CONCS[i].pg_thr,
				CONCS[0].lwc_thr * CONCS[i].clients / CONCS[0].clients);
		fclose(f);
		g = open_w(ddir, "clients.gp");
		fprintf(g, "%sset output '%s/lwc-bench-%s-clients.png'\n", hdr, img, O.tag);
		fprintf(g, "set multiplot layout 1,2 title 'Concurrent clients, 100-row SELECTs "
			"(clustered), LWC at %d ms proxy-cloud round trip'\nset logscale xy\n"
			"set format x '%%g'\nset format y '%%g'\nset xlabel 'clients'\n"
			"set xtics (1,4,16,64)\n", O.clients_rtt);
		fprintf(g, "set ylabel 'statements/s'\nset title 'Throughput'\nset yrange [*:1e6]\n"
			"plot '%1$s/clients.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC', "
			"'%1$s/clients.dat' u 1:5 w l dt 2 lc rgb '#1f77b4' t 'LWC, linear in clients', "
			"'%1$s/clients.dat' u 1:4 w lp lw 2 pt 4 lc rgb '#d62728' t 'PostgreSQL (local)'\n",
			ddir);
		fprintf(g, "set ylabel 'median latency (ms)'\nset title 'Latency'\nunset yrange\n"
			"plot '%1$s/clients.dat' u 1:3 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC'\n"
			"unset multiplot\n", ddir);
		fclose(g);
	}
	/* cells */
	if (ncells) {
		f = open_w(ddir, "cells.dat");
		fprintf(f, "# bytes perm1 perm2 perm4 perm8 seal open (us per block)\n");
		for (size_t i = 0; i < ncells; i++)
			fprintf(f, "%zu %.3f %.3f %.3f %.3f %.3f %.3f\n", CELLS[i].bytes,
				CELLS[i].perm_us[0], CELLS[i].perm_us[1], CELLS[i].perm_us[2],
				CELLS[i].perm_us[3], CELLS[i].seal_us, CELLS[i].open_us);
		fclose(f);
		g = open_w(ddir, "cells.gp");
		fprintf(g, "%sset output '%s/lwc-bench-%s-cells.png'\n", hdr, img, O.tag);
		fprintf(g, "set multiplot layout 1,2 title 'Re-encryption of one block: cell "
			"permutation against AEAD sealing (one core)'\nset logscale xy\n"
			"set format x '%%g'\nset format y '%%g'\nset xlabel 'block size (bytes)'\n");
		fprintf(g, "set ylabel 'microseconds per block'\nset title 'Time per block'\n"
			"plot '%1$s/cells.dat' u 1:2 w lp lw 2 pt 7 t 'permute, cell 1 B', "
			"'%1$s/cells.dat' u 1:3 w lp lw 2 pt 5 t 'cell 2 B', "
			"'%1$s/cells.dat' u 1:4 w lp lw 2 pt 9 t 'cell 4 B', "
			"'%1$s/cells.dat' u 1:5 w lp lw 2 pt 11 t 'cell 8 B', "
			"'%1$s/cells.dat' u 1:6 w lp lw 3 pt 4 lc rgb 'black' t 'seal (XChaCha20-Poly1305)'\n",
			ddir);
		fprintf(g, "set ylabel 'MB/s'\nset title 'Throughput'\nset yrange [*:10000]\n"
			"plot '%1$s/cells.dat' u 1:($1/$2) w lp lw 2 pt 7 t 'permute, cell 1 B', "
			"'%1$s/cells.dat' u 1:($1/$3) w lp lw 2 pt 5 t 'cell 2 B', "
			"'%1$s/cells.dat' u 1:($1/$4) w lp lw 2 pt 9 t 'cell 4 B', "
			"'%1$s/cells.dat' u 1:($1/$5) w lp lw 2 pt 11 t 'cell 8 B', "
			"'%1$s/cells.dat' u 1:($1/$6) w lp lw 3 pt 4 lc rgb 'black' t 'seal'\n"
			"unset multiplot\n", ddir);
		fclose(g);
	}
	/* draw them all */
	{
		static const char *const gps[] = { "select.gp", "rtt.gp", "modify.gp", "clients.gp",
			"cells.gp" };
		for (size_t i = 0; i < sizeof(gps) / sizeof(gps[0]); i++) {
			char cmd[2 * PATH_MAX + 128];
			snprintf(path, sizeof(path), "%s/%s", ddir, gps[i]);
			if (access(path, R_OK) != 0)
				continue;
			/* gnuplot's warnings (e.g. a one-point x range) go to a log */
			snprintf(cmd, sizeof(cmd), "gnuplot '%s' 2>>'%s/gnuplot.log'", path, ddir);
			if (system(cmd) != 0)
				say("gnuplot %s failed (see %s/gnuplot.log)", path, ddir);
		}
	}
	say("plots in %s/lwc-bench-%s-*.png (gnuplot scripts in %s)", img, O.tag, ddir);
}

/* ---- targets ------------------------------------------------------------------------------ */

static void print_targets(void)
{
	out("\n== Targets (issue 6)\n");
	if (nsels) {
		double worst = 0;
		const struct sel_res *w = NULL;
		for (size_t i = 0; i < nsels; i++)
			if (SELS[i].rtt == 0 && SELS[i].lwc.med / SELS[i].pg.med > worst) {
				worst = SELS[i].lwc.med / SELS[i].pg.med;
				w = &SELS[i];
			}
		if (w) {
			char kb[32];
			out("SELECT within 3x of PostgreSQL at every size and layout: %s (worst %.2fx, "
			    "%s %s rows)\n", worst <= 3 ? "MET" : "MISSED", worst, LAYOUTS[w->layout],
			    size_name(w->k, kb, sizeof(kb)));
		}
	}
	if (LOADS[0].done) {
		double r = 0;
		for (int l = 0; l < 2; l++)
			if (LOADS[l].done) {
				double x = LOADS[l].lwc_s / (LOADS[l].pg_copy_s + LOADS[l].pg_index_s);
				if (x > r)
					r = x;
			}
		out("Bulk load within 1.5x of PostgreSQL load + index build: %s (worst %.2fx at "
		    "N = %llu; the target is stated for 10M)\n", r <= 1.5 ? "MET" : "MISSED", r,
		    (unsigned long long)O.records);
	}
	for (size_t i = 0; i < nmods; i++) {
		const struct mod_res *m = &MODS[i];
		if (m->rows != 1000000)
			continue;
		if (strcmp(m->op, "UPDATE") == 0)
			out("UPDATE of 1M rows no slower than PostgreSQL: %s (%.2f s vs %.2f s)\n",
			    m->lwc_s <= m->pg_s ? "MET" : "MISSED", m->lwc_s, m->pg_s);
		if (strcmp(m->op, "DELETE") == 0)
			out("DELETE of 1M rows under 4 s: %s (%.2f s)\n",
			    m->lwc_s < 4 ? "MET" : "MISSED", m->lwc_s);
	}
	for (size_t i = 0; i < nconcs; i++)
		if (CONCS[i].clients == 16 && CONCS[0].clients == 1)
			out("16 clients at %d ms give at least 8x one client's throughput: %s (%.2fx)\n",
			    CONCS[i].rtt, CONCS[i].lwc_thr >= 8 * CONCS[0].lwc_thr ? "MET" : "MISSED",
			    CONCS[i].lwc_thr / CONCS[0].lwc_thr);
}

/* ---- main ---------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lwc-bench [--records N] [--only load,select,modify,rtt,clients,cells]\n"
		"                 [--rtt 25,50,100] [--clients 1,4,16,64] [--clients-rtt 25]\n"
		"                 [--client-seconds 6] [--batch 5000] [--reps-scale 1]\n"
		"                 [--rtt-max-rows 10000] [--no-presize] [--modify-pk]\n"
		"                 [--tag T] [--out bench/results] [--img docs/img]\n"
		"                 [--root DIR] [--bin DIR] [--seed S] [--keep]\n"
		"\n"
		"Runs the LWC paper's experiments on LWC (scripts/lwc-local) and on a private\n"
		"plaintext PostgreSQL, side by side.  --records N: rows per table (default\n"
		"1000000).  Paths are relative to --root (default: the directory above the\n"
		"binary's).  select and modify need load (they run it if absent).\n");
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char tagbuf[32], ddir[PATH_MAX], jpath[PATH_MAX], la0[128], la1[128];
	char rootbuf[PATH_MAX], binbuf[PATH_MAX];
	uint64_t *order = NULL;
	lwc_conn *c = NULL;
	PGconn *p = NULL;
	struct rng rng;
	int o;

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
	O.reps_scale = 1;
	O.seed = 20170801;
	O.presize = 1;
	O.rtt_max_rows = 10000;
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
				for (int i = 0; i < 6; i++)
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
	if (O.only & (EXP_SELECT | EXP_MODIFY | EXP_RTT | EXP_CLIENTS))
		O.only |= EXP_LOAD;
	if (O.only & EXP_LOAD) {
		char w[] = "/tmp/lwc-bench-XXXXXX", pg[] = "/tmp/lwc-bench-pg-XXXXXX";
		if (mkdtemp(w) == NULL || mkdtemp(pg) == NULL)
			die("mkdtemp: %s", strerror(errno));
		snprintf(work_dir, sizeof(work_dir), "%s", w);
		snprintf(pg_dir, sizeof(pg_dir), "%s", pg);
	}
	sampler_start();
	if (O.only & (EXP_SELECT | EXP_MODIFY | EXP_RTT | EXP_CLIENTS))
		O.only |= EXP_LOAD;

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
		lwc_port = free_ports(&rng);
		if (O.presize) {
			/* room for every row the run inserts (theta = 48 slots of 64
			 * are ever full), so no statement pays for growing the store */
			uint64_t rows = 2 * O.records;
			if (O.only & EXP_MODIFY)
				for (int i = 1; i < NSIZES; i++)
					if (SIZES[i] <= O.records)
						rows += SIZES[i];
			init_blocks = rows / 48 + rows / 48 / 8 + 1024;
		}
		say("starting LWC (scripts/lwc-local, ports %d-%d) and PostgreSQL (tests/pg-tmp.sh)",
		    lwc_port, lwc_port + 1);
		lwc_up(0);
		pg_start(&rng);
		c = lwc_open();
		p = pg_open();
		{
			PGresult *r = PQexec(p, "SHOW server_version");
			if (PQresultStatus(r) == PGRES_TUPLES_OK)
				snprintf(pg_version, sizeof(pg_version), "%s", PQgetvalue(r, 0, 0));
			PQclear(r);
		}
		/* the scattered order: a seeded random permutation */
		order = xmalloc(O.records * sizeof(uint64_t));
		for (uint64_t i = 0; i < O.records; i++)
			order[i] = i;
		for (uint64_t i = O.records - 1; i > 0; i--) {
			uint64_t j = rng_below(&rng, i + 1), t = order[i];
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
		phase_s[0] = now_s() - t0;
	}
	if (O.only & EXP_SELECT) {
		double t0 = now_s();
		run_selects(c, p, 0, &rng);
		phase_s[1] = now_s() - t0;
	}
	if (O.only & EXP_RTT) {
		double t0 = now_s();
		for (int i = 0; i < O.nrtts; i++) {
			if (O.rtts[i] == 0 && (O.only & EXP_SELECT))
				continue;
			lwc_close(c);
			lwc_up(O.rtts[i]);
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
		lwc_up(0);
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
