/*
 * it_kma.c - the key authority suite: the real lwc-kma issuing users to the
 * real lwc-proxy in front of the real lwc-cloudstore on the backend named by
 * LWC_TEST_BACKEND (tests/run.sh runs it for LMDB and for PostgreSQL), and
 * scripts/lwc-local.
 *
 *   test_issue              init (0700 / 0600, refuses an existing
 *                           authority), issue through the admin socket,
 *                           shared K_U / per-user K_DBU, --replace, list
 *                           without key material, enrollment files, a failed
 *                           registration leaves no key behind
 *   test_issue_concurrent   parallel issues keep every user in the register
 *   test_revoke             revoking a connected user: REVOKED, closed, no
 *                           reconnect, others unaffected, no block touched,
 *                           idempotent
 *   test_revoked_store      a revoked user with its key file and a full copy
 *                           of the store opens no record at any byte offset
 *                           (with a planted-record control)
 *   test_capture            a captured session does not authenticate or open
 *                           under another user's key (replay into a server
 *                           end with chan_server_*; alice's key as control)
 *   test_kma_offline        the system serves without the authority's
 *                           directory; issuing then fails clearly
 *   test_bad_key_files      0644, a flipped hex digit, version 2: distinct
 *                           refusals by userkey_read and lwc-proxy user add
 *   test_lwc_local          scripts/lwc-local up / status / user / revoke /
 *                           down (and up again: the data is still there)
 *
 * Environment: LWC_BIN (binaries), LWC_TEST_BACKEND, LWC_TEST_PG (harness.h),
 * LWC_SCRIPTS (directory of lwc-local, default scripts), LWC_TEST_FILTER.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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

#include "chan.h"
#include "cry.h"
#include "cs_client.h"
#include "harness.h"
#include "keyfile.h"
#include "lwc.pb-c.h"
#include "net.h"
#include "pxc.h"
#include "userkey.h"
#include "wire.h"

#define TIMEOUT   20000
#define R_BYTES   128u
#define S_BYTES   (R_BYTES + CRY_RECORD_OVERHEAD)          /* 168 */
#define KU_KIND   "LWC-KMA-KU"

/* ---- a test-only RNG hook ------------------------------------------------------
 * The replay of a captured handshake into a server-side struct chan needs the
 * server's nonce of the captured session (chan_server_reply draws it with
 * randombytes_buf).  The implementation installed in main() before
 * sodium_init is libsodium's own sysrandom, except that while a nonce is
 * armed the next randombytes_buf of that size returns it. */

static randombytes_implementation rng_impl;
static const uint8_t *rng_forced;
static size_t rng_forced_len;

static const char *rng_name(void)
{
	return "lwc-test (sysrandom with a forced nonce)";
}

static void rng_buf(void *const buf, const size_t size)
{
	if (rng_forced != NULL && size == rng_forced_len) {
		memcpy(buf, rng_forced, size);
		rng_forced = NULL;
		return;
	}
	randombytes_sysrandom_implementation.buf(buf, size);
}

/* ---- environment ------------------------------------------------------------ */

struct env {
	struct h_cs cs;
	struct h_px px;
	char kma[400];                /* the authority's directory */
	char users[400];              /* where key files go        */
	char sock[400];               /* copy of px.sock           */
	uint64_t nblocks;
	/* test_lwc_local */
	char local[300];
	char local_db[64];
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	h_cs_setup(&e->cs);
	h_cs_start(&e->cs, NULL);
	snprintf(e->kma, sizeof(e->kma), "%s/kma", e->cs.dir);
	snprintf(e->users, sizeof(e->users), "%s/users", e->cs.dir);
	if (mkdir(e->users, 0700) != 0)
		abort();
	*state = e;
	return 0;
}

static void pg_admin(const char *sql)
{
	const char *ci = getenv("LWC_TEST_PG");
	PGconn *c;
	PGresult *r;

	if (ci == NULL) {
		fprintf(stderr, "LWC_TEST_PG is not set\n");
		return;
	}
	c = PQconnectdb(ci);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "PostgreSQL: %s", PQerrorMessage(c));
		PQfinish(c);
		return;
	}
	r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		fprintf(stderr, "%s: %s", sql, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
}

static pid_t read_pidfile(const char *path)
{
	FILE *f = fopen(path, "r");
	long pid = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return (pid_t)pid;
}

/* Alive and not a zombie. */
static int pid_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	if (pid <= 0 || kill(pid, 0) != 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/* Stop the servers lwc-local started (they are not our children). */
static void local_kill(const char *dir)
{
	static const char *const names[] = { "proxy.pid", "cloudstore.pid" };
	char path[600];

	for (int i = 0; i < 2; i++) {
		pid_t pid;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if ((pid = read_pidfile(path)) <= 0 || !pid_alive(pid))
			continue;
		kill(pid, SIGTERM);
		for (int t = 0; t < 100 && pid_alive(pid); t++)
			usleep(50000);
		if (pid_alive(pid))
			kill(pid, SIGKILL);
	}
}

static int teardown(void **state)
{
	struct env *e = *state;

	if (e->local[0])
		local_kill(e->local);
	if (e->local_db[0]) {
		char sql[160];
		snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", e->local_db);
		pg_admin(sql);
	}
	if (e->px.pid > 0)
		h_px_stop(&e->px, SIGTERM);
	h_px_teardown(&e->px);
	h_cs_teardown(&e->cs);
	free(e);
	return 0;
}

/* init with --blocks, serve with the defaults. */
static void deploy(struct env *e, unsigned blocks)
{
	char nb[32];
	const char *init[] = { "--blocks", nb, NULL };

	snprintf(nb, sizeof(nb), "%u", blocks);
	e->nblocks = blocks;
	h_px_init(&e->px, &e->cs, init);
	h_px_start(&e->px, NULL);
	snprintf(e->sock, sizeof(e->sock), "%s", e->px.sock);
}

/* ---- running commands ---------------------------------------------------------- */

struct res {
	int rc;                       /* exit status, -1 when killed */
	char *out, *err;              /* stdout and stderr           */
	char cmd[256];                /* for messages                */
};

static void res_free(struct res *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (f == NULL) {
		if (len)
			*len = 0;
		return strdup("");
	}
	do {
		if (n + 4096 + 1 > cap) {
			cap = (n + 4096 + 1) * 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static int tmp_counter;

/* Run argv with stdout and stderr in separate files, wait (at most limit_s
 * seconds, then SIGKILL); the outputs end up in r. */
static void run_argv(struct env *e, const char *const *argv, int limit_s, struct res *r)
{
	char out[500], err[500];
	pid_t pid;
	int st = 0, n = ++tmp_counter;
	size_t o = 0;

	memset(r, 0, sizeof(*r));
	for (int i = 0; argv[i] && o + 1 < sizeof(r->cmd); i++) {
		const char *b = i == 0 && strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
		int w = snprintf(r->cmd + o, sizeof(r->cmd) - o, "%s%s", i ? " " : "", b);
		if (w < 0)
			break;
		o += (size_t)w;
	}
	snprintf(out, sizeof(out), "%s/cmd-%d.out", e->cs.dir, n);
	snprintf(err, sizeof(err), "%s/cmd-%d.err", e->cs.dir, n);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int dn = open("/dev/null", O_RDONLY);
		if (fo < 0 || fe < 0 || dn < 0)
			_exit(126);
		dup2(dn, 0);
		dup2(fo, 1);
		dup2(fe, 2);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	for (int i = 0;; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			fail_msg("waitpid: %s", strerror(errno));
		if (i >= limit_s * 100) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fail_msg("'%s' did not finish in %d s", r->cmd, limit_s);
		}
		usleep(10000);
	}
	r->rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	r->out = slurp(out, NULL);
	r->err = slurp(err, NULL);
}

#define MAX_ARGS 40

static void run_va(struct env *e, struct res *r, const char *bin, va_list ap)
{
	const char *argv[MAX_ARGS + 1], *a;
	char path[300];
	int n = 0;

	argv[n++] = h_bin(bin, path, sizeof(path));
	while ((a = va_arg(ap, const char *)) != NULL && n < MAX_ARGS)
		argv[n++] = a;
	argv[n] = NULL;
	run_argv(e, argv, 60, r);
}

/* lwc-kma ARGS... */
static void kma(struct env *e, struct res *r, ...) __attribute__((sentinel));
static void kma(struct env *e, struct res *r, ...)
{
	va_list ap;

	va_start(ap, r);
	run_va(e, r, "lwc-kma", ap);
	va_end(ap);
}

/* lwc-proxy ARGS... */
static void pxcli(struct env *e, struct res *r, ...) __attribute__((sentinel));
static void pxcli(struct env *e, struct res *r, ...)
{
	va_list ap;

	va_start(ap, r);
	run_va(e, r, "lwc-proxy", ap);
	va_end(ap);
}

static void expect_ok_at(int line, struct res *r)
{
	if (r->rc != 0)
		fail_msg("line %d: '%s' exited %d\n  stdout: %s\n  stderr: %s", line, r->cmd, r->rc,
			 r->out, r->err);
}
#define expect_ok(r) expect_ok_at(__LINE__, r)

static void expect_fail_at(int line, struct res *r, const char *needle)
{
	if (r->rc == 0)
		fail_msg("line %d: '%s' succeeded, expected a refusal\n  stdout: %s", line, r->cmd,
			 r->out);
	if (r->err[0] == '\0')
		fail_msg("line %d: '%s' exited %d without a message on stderr", line, r->cmd, r->rc);
	if (needle && strstr(r->err, needle) == NULL)
		fail_msg("line %d: '%s': stderr lacks \"%s\":\n  %s", line, r->cmd, needle, r->err);
}
#define expect_fail(r, needle) expect_fail_at(__LINE__, r, needle)

static int file_exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

static unsigned file_mode(const char *path)
{
	struct stat sb;

	if (stat(path, &sb) != 0)
		fail_msg("%s: %s", path, strerror(errno));
	return (unsigned)(sb.st_mode & 07777);
}

/* ---- the authority ------------------------------------------------------------- */

static void kma_init(struct env *e)
{
	struct res r;

	kma(e, &r, "init", "--dir", e->kma, (const char *)NULL);
	expect_ok(&r);
	res_free(&r);
}

static void key_path(struct env *e, const char *file, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", e->users, file);
}

/* lwc-kma issue NAME through the admin socket into users/FILE. */
static void issue_at(int line, struct env *e, const char *name, const char *file, int replace)
{
	char out[500];
	struct res r;

	key_path(e, file, out, sizeof(out));
	if (replace)
		kma(e, &r, "issue", "--dir", e->kma, "--user", name, "--proxy", e->px.addr,
		    "--out", out, "--proxy-socket", e->sock, "--replace", (const char *)NULL);
	else
		kma(e, &r, "issue", "--dir", e->kma, "--user", name, "--proxy", e->px.addr,
		    "--out", out, "--proxy-socket", e->sock, (const char *)NULL);
	expect_ok_at(line, &r);
	res_free(&r);
}
#define issue(e, name, file) issue_at(__LINE__, e, name, file, 0)
#define reissue(e, name, file) issue_at(__LINE__, e, name, file, 1)

static struct userkey *load_key(struct env *e, const char *file)
{
	struct userkey *uk = NULL;
	char path[500], err[512] = "";
	int rc;

	key_path(e, file, path, sizeof(path));
	rc = userkey_read(path, &uk, err, sizeof(err));
	if (rc != LWC_OK)
		fail_msg("userkey_read %s: %s (%s)", path, lwc_errname(rc), err);
	return uk;
}

static void read_ku(struct env *e, const char *kmadir, uint8_t ku[32])
{
	char path[500], err[512] = "";
	int rc;

	(void)e;
	snprintf(path, sizeof(path), "%s/ku.key", kmadir);
	rc = keyfile_read(path, KU_KIND, ku, 32, err, sizeof(err));
	if (rc != LWC_OK)
		fail_msg("reading K_U of the authority: %s (%s)", lwc_errname(rc), err);
}

static int try_connect(const char *addr, const struct userkey *uk, struct pxc **c,
		       char *err, size_t errlen)
{
	*c = NULL;
	return pxc_connect(c, addr, uk->name, uk->kdbu, uk->ku, err, errlen);
}

static struct pxc *connect_at(int line, const char *addr, const struct userkey *uk)
{
	struct pxc *c = NULL;
	char err[512] = "";
	int rc = try_connect(addr, uk, &c, err, sizeof(err));

	if (rc != LWC_OK)
		fail_msg("line %d: connect as %s to %s: %s (%s)", line, uk->name, addr,
			 lwc_errname(rc), err);
	return c;
}
#define connect_uk(addr, uk) connect_at(__LINE__, addr, uk)

#define OK(c, expr)                                                              \
	do {                                                                     \
		int rc_ = (expr);                                                \
		if (rc_ != LWC_OK)                                               \
			fail_msg("line %d: %s: %s (%s)", __LINE__, #expr,        \
				 lwc_errname(rc_), pxc_errmsg(c));               \
	} while (0)

/* ---- data ---------------------------------------------------------------------- */

static struct pxc_row kv_row(const struct pxc_table *t, int64_t k, const char *s)
{
	struct pxc_val v[2];

	v[0] = pxc_int(k);
	v[1] = pxc_text(s);
	return pxc_row_make(t, v);
}

struct model {
	struct pxc_row rows[256];
	size_t n;
};

static void insert_kv(struct pxc *c, const struct pxc_table *t, struct model *m, int64_t k,
		      const char *s)
{
	struct pxc_row row = kv_row(t, k, s);
	uint64_t cnt = 0;

	OK(c, pxc_insert(c, t, &row, 1, &cnt));
	assert_int_equal(cnt, 1);
	assert_true(m->n < 256);
	m->rows[m->n++] = row;
}

/* SELECT * equals the model. */
static void check_table_at(int line, struct pxc *c, const struct pxc_table *t,
			   const struct model *m)
{
	struct pxc_result res;
	struct pxc_row want[256];
	int rc = pxc_select(c, t, NULL, 0, &res);

	if (rc != LWC_OK)
		fail_msg("line %d: SELECT * FROM %s: %s (%s)", line, t->name, lwc_errname(rc),
			 pxc_errmsg(c));
	if (res.n != m->n)
		fail_msg("line %d: SELECT * FROM %s: %zu rows, expected %zu", line, t->name, res.n,
			 m->n);
	memcpy(want, m->rows, m->n * sizeof(want[0]));
	pxc_rows_sort(want, m->n);
	pxc_rows_sort(res.rows, res.n);
	for (size_t i = 0; i < m->n; i++) {
		if (!pxc_row_eq(&want[i], &res.rows[i])) {
			char a[512], b[512];
			pxc_row_str(&want[i], a, sizeof(a));
			pxc_row_str(&res.rows[i], b, sizeof(b));
			fail_msg("line %d: SELECT * FROM %s: row %zu is %s, expected %s", line,
				 t->name, i, b, a);
		}
	}
	pxc_result_free(&res);
}
#define check_table(c, t, m) check_table_at(__LINE__, c, t, m)

/* ---- key material in text -------------------------------------------------------- */

/* Does text hold the hex (either case) of any 8-byte piece of key? */
static int has_hex(const char *text, const uint8_t *key, size_t len)
{
	char hex[2 * 64 + 1];

	assert_true(len <= 64);
	sodium_bin2hex(hex, sizeof(hex), key, len);
	for (size_t o = 0; o + 8 <= len; o++) {
		char lo[17], up[17];
		memcpy(lo, hex + 2 * o, 16);
		lo[16] = '\0';
		for (int i = 0; i < 17; i++)
			up[i] = (char)(lo[i] >= 'a' && lo[i] <= 'f' ? lo[i] - 32 : lo[i]);
		if (strstr(text, lo) || strstr(text, up))
			return 1;
	}
	return 0;
}

static void no_hex_at(int line, const char *text, const uint8_t *key, size_t len,
		      const char *what, const char *where)
{
	if (has_hex(text, key, len))
		fail_msg("line %d: %s shows key material (hex of %s)", line, where, what);
}
#define no_hex(text, key, len, what, where) no_hex_at(__LINE__, text, key, len, what, where)

/* "YYYY-MM-DDTHH:MM:SSZ" somewhere in s. */
static int has_date(const char *s)
{
	static const char pat[] = "dddd-dd-ddTdd:dd:ddZ";
	size_t n = strlen(s), m = sizeof(pat) - 1;

	for (size_t i = 0; i + m <= n; i++) {
		size_t j = 0;
		for (; j < m; j++) {
			char c = s[i + j];
			if (pat[j] == 'd' ? !(c >= '0' && c <= '9') : c != pat[j])
				break;
		}
		if (j == m)
			return 1;
	}
	return 0;
}

/* The line of text that contains word as a whitespace-delimited field. */
static int line_with(const char *text, const char *word, char *line, size_t len)
{
	const char *p = text;
	size_t wl = strlen(word);

	while (*p) {
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
		for (const char *q = p; q + wl <= end; q++) {
			if ((q == p || q[-1] == ' ' || q[-1] == '\t') && memcmp(q, word, wl) == 0 &&
			    (q + wl == end || q[wl] == ' ' || q[wl] == '\t')) {
				size_t l = (size_t)(end - p);
				if (l >= len)
					l = len - 1;
				memcpy(line, p, l);
				line[l] = '\0';
				return 1;
			}
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}

/* ==== 1. init, issue, replace, list, enrollment ===================================== */

static void check_private_dir(const char *dir)
{
	DIR *d;
	struct dirent *de;
	int files = 0;

	if (file_mode(dir) != 0700)
		fail_msg("%s has mode %04o, expected 0700", dir, file_mode(dir));
	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		char path[800];
		struct stat sb;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		assert_int_equal(lstat(path, &sb), 0);
		if (!S_ISREG(sb.st_mode))
			fail_msg("%s in the authority's directory is not a regular file", path);
		if ((sb.st_mode & 07777) != 0600)
			fail_msg("%s has mode %04o, expected 0600", path,
				 (unsigned)(sb.st_mode & 07777));
		files++;
	}
	closedir(d);
	if (files == 0)
		fail_msg("%s is empty after init", dir);
}

static void test_issue(void **state)
{
	struct env *e = *state;
	struct pxc_table kv;
	struct model m = { .n = 0 };
	struct userkey *alice, *bob, *alice2, *carol;
	struct pxc *ca, *cb, *cx = NULL;
	struct res r;
	uint8_t ku[32], ku_before[32];
	char path[500], path2[500], enroll[500], err[512], line[512];
	size_t len1, len2;
	char *ku1, *ku2;
	int rc;

	deploy(e, 16);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);

	/* ---- init: a private directory of private files */
	umask(022);
	kma_init(e);
	check_private_dir(e->kma);
	read_ku(e, e->kma, ku_before);
	snprintf(path, sizeof(path), "%s/ku.key", e->kma);
	ku1 = slurp(path, &len1);
	kma(e, &r, "init", "--dir", e->kma, (const char *)NULL);
	expect_fail(&r, "already");
	no_hex(r.out, ku_before, 32, "K_U", "init on an existing authority");
	no_hex(r.err, ku_before, 32, "K_U", "init on an existing authority");
	res_free(&r);
	ku2 = slurp(path, &len2);
	if (len1 != len2 || memcmp(ku1, ku2, len1) != 0)
		fail_msg("init on an existing authority changed its K_U file");
	free(ku1);
	free(ku2);
	check_private_dir(e->kma);

	/* ---- issue alice: registered at once, connects, runs statements */
	key_path(e, "alice.key", path, sizeof(path));
	kma(e, &r, "issue", "--dir", e->kma, "--user", "alice", "--proxy", e->px.addr, "--out",
	    path, "--proxy-socket", e->sock, (const char *)NULL);
	expect_ok(&r);
	no_hex(r.out, ku_before, 32, "K_U", "lwc-kma issue");
	res_free(&r);
	if (file_mode(path) != 0600)
		fail_msg("%s has mode %04o, expected 0600", path, file_mode(path));
	check_private_dir(e->kma);
	alice = load_key(e, "alice.key");
	assert_string_equal(alice->name, "alice");
	assert_string_equal(alice->proxy, e->px.addr);
	{
		/* control of the key-material check: the key file itself holds both keys */
		char *text = slurp(path, NULL);
		if (!has_hex(text, alice->kdbu, 32) || !has_hex(text, alice->ku, 32))
			fail_msg("control: the hex check does not find the keys in the key file");
		free(text);
	}
	read_ku(e, e->kma, ku);
	assert_memory_equal(alice->ku, ku, 32);
	ca = connect_uk(alice->proxy, alice);
	OK(ca, pxc_create_table(ca, &kv, 0));
	insert_kv(ca, &kv, &m, 1, "written by alice");
	insert_kv(ca, &kv, &m, 2, "also alice");
	check_table(ca, &kv, &m);

	/* ---- bob: same K_U, his own K_DBU; he reads what alice wrote */
	issue(e, "bob", "bob.key");
	bob = load_key(e, "bob.key");
	assert_string_equal(bob->name, "bob");
	assert_memory_equal(bob->ku, alice->ku, 32);
	assert_memory_not_equal(bob->kdbu, alice->kdbu, 32);
	cb = connect_uk(bob->proxy, bob);
	check_table(cb, &kv, &m);
	insert_kv(cb, &kv, &m, 3, "written by bob");
	check_table(ca, &kv, &m);
	/* bob's key is not alice's */
	rc = pxc_connect(&cx, e->px.addr, "alice", bob->kdbu, bob->ku, err, sizeof(err));
	if (rc != LWC_ERR_AUTH)
		fail_msg("alice's name with bob's K_DBU: %s (%s), expected LWC_ERR_AUTH",
			 lwc_errname(rc), err);

	/* ---- an existing name: refused without --replace, nothing written */
	key_path(e, "alice-2.key", path2, sizeof(path2));
	kma(e, &r, "issue", "--dir", e->kma, "--user", "alice", "--proxy", e->px.addr, "--out",
	    path2, "--proxy-socket", e->sock, (const char *)NULL);
	expect_fail(&r, "--replace");
	res_free(&r);
	if (file_exists(path2))
		fail_msg("a refused issue left a key file %s", path2);
	pxc_close(ca);
	ca = connect_uk(e->px.addr, alice);        /* alice's key still works */
	check_table(ca, &kv, &m);

	/* ---- --replace: re-registered; the old key no longer connects, the new one does */
	reissue(e, "alice", "alice-2.key");
	alice2 = load_key(e, "alice-2.key");
	assert_memory_equal(alice2->ku, alice->ku, 32);
	assert_memory_not_equal(alice2->kdbu, alice->kdbu, 32);
	rc = try_connect(e->px.addr, alice, &cx, err, sizeof(err));
	if (rc == LWC_OK)
		fail_msg("alice's replaced key still connects");
	if (rc != LWC_ERR_AUTH && rc != LWC_ERR_REVOKED)
		fail_msg("alice's replaced key: %s (%s), expected LWC_ERR_AUTH", lwc_errname(rc), err);
	{
		/* the session opened with the old key ends too */
		struct pxc_result res;
		rc = pxc_select(ca, &kv, NULL, 0, &res);
		if (rc == LWC_OK)
			fail_msg("a session of alice's replaced key still runs statements");
		pxc_close(ca);
	}
	ca = connect_uk(e->px.addr, alice2);
	check_table(ca, &kv, &m);
	insert_kv(ca, &kv, &m, 4, "alice, new key");
	check_table(cb, &kv, &m);

	/* ---- a registration that fails leaves no key file and no register entry */
	key_path(e, "dave.key", path2, sizeof(path2));
	{
		char badsock[500];
		snprintf(badsock, sizeof(badsock), "%s/no-such.sock", e->cs.dir);
		kma(e, &r, "issue", "--dir", e->kma, "--user", "dave", "--proxy", e->px.addr,
		    "--out", path2, "--proxy-socket", badsock, (const char *)NULL);
	}
	expect_fail(&r, "admin socket");
	res_free(&r);
	if (file_exists(path2))
		fail_msg("issuing dave failed at the proxy but left the key file %s", path2);

	/* ---- enrollment: the proxy's operator imports it, then carol connects */
	snprintf(enroll, sizeof(enroll), "%s/carol.enroll", e->users);
	key_path(e, "carol.key", path2, sizeof(path2));
	kma(e, &r, "issue", "--dir", e->kma, "--user", "carol", "--proxy", e->px.addr, "--out",
	    path2, "--enroll-out", enroll, (const char *)NULL);
	expect_ok(&r);
	if (strstr(r.out, "user add") == NULL)
		fail_msg("issue --enroll-out does not say how to import it: %s", r.out);
	res_free(&r);
	if (file_mode(enroll) != 0600)
		fail_msg("%s has mode %04o, expected 0600", enroll, file_mode(enroll));
	carol = load_key(e, "carol.key");
	assert_memory_equal(carol->ku, ku, 32);
	{
		char *text = slurp(enroll, NULL);
		no_hex(text, ku, 32, "K_U", "the enrollment file");   /* K_DBU only */
		free(text);
	}
	rc = try_connect(e->px.addr, carol, &cx, err, sizeof(err));
	if (rc == LWC_OK)
		fail_msg("carol connects before her enrollment was imported");
	pxcli(e, &r, "user", "add", "--state", e->px.state, "--enroll", enroll,
	      (const char *)NULL);
	expect_ok(&r);
	res_free(&r);
	cx = connect_uk(e->px.addr, carol);
	check_table(cx, &kv, &m);
	pxc_close(cx);

	/* ---- list: names and dates, never key material */
	kma(e, &r, "list", "--dir", e->kma, (const char *)NULL);
	expect_ok(&r);
	{
		const char *names[] = { "alice", "bob", "carol" };
		for (int i = 0; i < 3; i++) {
			if (!line_with(r.out, names[i], line, sizeof(line)))
				fail_msg("lwc-kma list does not show %s:\n%s", names[i], r.out);
			if (!has_date(line))
				fail_msg("lwc-kma list shows %s without a date: %s", names[i], line);
		}
		if (line_with(r.out, "dave", line, sizeof(line)))
			fail_msg("lwc-kma list shows dave, whose issue failed:\n%s", r.out);
	}
	{
		const struct userkey *keys[] = { alice, alice2, bob, carol };
		char *reg;
		snprintf(path2, sizeof(path2), "%s/issued", e->kma);
		reg = file_exists(path2) ? slurp(path2, NULL) : strdup("");
		no_hex(r.out, ku, 32, "K_U", "lwc-kma list");
		no_hex(r.err, ku, 32, "K_U", "lwc-kma list");
		no_hex(reg, ku, 32, "K_U", "the register of issued users");
		for (int i = 0; i < 4; i++) {
			no_hex(r.out, keys[i]->kdbu, 32, "a K_DBU", "lwc-kma list");
			no_hex(r.err, keys[i]->kdbu, 32, "a K_DBU", "lwc-kma list");
			no_hex(reg, keys[i]->kdbu, 32, "a K_DBU", "the register of issued users");
		}
		free(reg);
	}
	res_free(&r);
	check_private_dir(e->kma);

	pxc_close(ca);
	pxc_close(cb);
	userkey_free(alice);
	userkey_free(alice2);
	userkey_free(bob);
	userkey_free(carol);
}

/* ==== 1b. parallel issues keep every user in the register ============================= */

#define NPAR 8

static void test_issue_concurrent(void **state)
{
	struct env *e = *state;
	pid_t pids[NPAR];
	char bin[300], names[NPAR][16], outs[NPAR][600], line[512];
	struct res r;
	int bad = 0;

	deploy(e, 16);
	kma_init(e);
	h_bin("lwc-kma", bin, sizeof(bin));
	for (int i = 0; i < NPAR; i++) {
		snprintf(names[i], sizeof(names[i]), "user%d", i);
		snprintf(outs[i], sizeof(outs[i]), "%s/%s.key", e->users, names[i]);
	}
	for (int i = 0; i < NPAR; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			int dn = open("/dev/null", O_WRONLY);
			if (dn >= 0) {
				dup2(dn, 1);
				dup2(dn, 2);
			}
			execl(bin, bin, "issue", "--dir", e->kma, "--user", names[i], "--proxy",
			      e->px.addr, "--out", outs[i], "--proxy-socket", e->sock, (char *)NULL);
			_exit(127);
		}
	}
	for (int i = 0; i < NPAR; i++) {
		int st;
		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "  lwc-kma issue --user %s exited %d\n", names[i],
				WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			bad++;
		}
	}
	if (bad)
		fail_msg("%d of %d parallel issues of distinct users failed", bad, NPAR);
	/* every user was issued and registered: each connects ... */
	for (int i = 0; i < NPAR; i++) {
		char file[160];
		struct userkey *uk;
		struct pxc *c;
		snprintf(file, sizeof(file), "%s.key", names[i]);
		uk = load_key(e, file);
		c = connect_uk(e->px.addr, uk);
		pxc_close(c);
		userkey_free(uk);
	}
	/* ... and the authority's register must know all of them */
	kma(e, &r, "list", "--dir", e->kma, (const char *)NULL);
	expect_ok(&r);
	for (int i = 0; i < NPAR; i++)
		if (!line_with(r.out, names[i], line, sizeof(line)))
			bad++;
	if (bad) {
		char listing[2048];
		snprintf(listing, sizeof(listing), "%s", r.out);
		res_free(&r);
		fail_msg("lwc-kma list misses %d of %d users issued in parallel (all %d were "
			 "issued and connect): the register DIR/issued is rewritten without a lock, "
			 "so concurrent issues lose each other's entries\n%s", bad, NPAR, NPAR,
			 listing);
	}
	res_free(&r);
}

/* ==== the cloud's store: every block, every version held ============================== */

struct snap {
	size_t n;
	uint64_t *id, *ver;
	uint8_t **data;
	size_t *len;
};

static void snap_free(struct snap *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->data[i]);
	free(s->id);
	free(s->ver);
	free(s->data);
	free(s->len);
	memset(s, 0, sizeof(*s));
}

static struct cs_client *cs_conn(struct env *e)
{
	struct cs_client *cl = NULL;
	char err[256] = "";
	int rc = cs_client_connect(&cl, e->cs.addr, e->cs.key, TIMEOUT, err, sizeof(err));

	if (rc != LWC_OK)
		fail_msg("cloud store connect: %s (%s)", lwc_errname(rc), err);
	return cl;
}

/* Read every version held of every block (K_CS: the cloud's own view). */
static void snap_take(struct env *e, struct snap *s)
{
	struct cs_client *cl = cs_conn(e);
	Lwc__CsResponse *st = NULL;
	uint64_t nb, *ids;
	size_t cap = 0;
	char err[256] = "";

	/* a SELECT answered may still be writing its blocks back and
	 * committing them (proxy/engine.c, stmt_answer): the snapshot is of
	 * the store after that */
	h_px_idle(&e->px);
	memset(s, 0, sizeof(*s));
	{
		uint64_t zero = 0;
		if (cs_client_stat(cl, &zero, 1, &st, err, sizeof(err)) != LWC_OK)
			fail_msg("STAT: %s", err);
		nb = st->stat->block_count;
		cs_client_free_resp(st);
	}
	assert_true(nb >= e->nblocks);
	ids = calloc(nb, sizeof(*ids));
	assert_non_null(ids);
	for (uint64_t i = 0; i < nb; i++)
		ids[i] = i;
	if (cs_client_stat(cl, ids, nb, &st, err, sizeof(err)) != LWC_OK)
		fail_msg("STAT: %s", err);
	assert_int_equal(st->stat->n_held, nb);
	/* one READ per layer of versions: never the same id twice in a request */
	for (size_t layer = 0;; layer++) {
		uint64_t *rid = calloc(nb, sizeof(uint64_t)), *rver = calloc(nb, sizeof(uint64_t));
		Lwc__CsResponse *rd = NULL;
		size_t k = 0;
		assert_true(rid && rver);
		for (uint64_t i = 0; i < nb; i++) {
			Lwc__CsHeld *h = st->stat->held[i];
			if (h->n_versions > layer) {
				rid[k] = h->id;
				rver[k] = h->versions[layer];
				k++;
			}
		}
		if (k == 0) {
			free(rid);
			free(rver);
			break;
		}
		if (cs_client_read(cl, rid, rver, k, &rd, err, sizeof(err)) != LWC_OK)
			fail_msg("READ of layer %zu: %s", layer, err);
		assert_int_equal(rd->read->n_blocks, k);
		for (size_t j = 0; j < k; j++) {
			Lwc__CsBlock *b = rd->read->blocks[j];
			if (s->n == cap) {
				cap = cap ? 2 * cap : 128;
				s->id = realloc(s->id, cap * sizeof(*s->id));
				s->ver = realloc(s->ver, cap * sizeof(*s->ver));
				s->data = realloc(s->data, cap * sizeof(*s->data));
				s->len = realloc(s->len, cap * sizeof(*s->len));
				assert_true(s->id && s->ver && s->data && s->len);
			}
			assert_int_equal(b->id, rid[j]);
			assert_int_equal(b->version, rver[j]);
			s->id[s->n] = b->id;
			s->ver[s->n] = b->version;
			s->len[s->n] = b->data.len;
			s->data[s->n] = malloc(b->data.len ? b->data.len : 1);
			assert_non_null(s->data[s->n]);
			memcpy(s->data[s->n], b->data.data, b->data.len);
			s->n++;
		}
		cs_client_free_resp(rd);
		free(rid);
		free(rver);
	}
	cs_client_free_resp(st);
	cs_client_close(cl);
	free(ids);
}

static void snap_same(const struct snap *a, const struct snap *b, const char *what)
{
	if (a->n != b->n)
		fail_msg("%s: the store held %zu block versions before, %zu after", what, a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		if (a->id[i] != b->id[i] || a->ver[i] != b->ver[i])
			fail_msg("%s: block %" PRIu64 " v%" PRIu64 " became block %" PRIu64 " v%" PRIu64,
				 what, a->id[i], a->ver[i], b->id[i], b->ver[i]);
		if (a->len[i] != b->len[i] || memcmp(a->data[i], b->data[i], a->len[i]) != 0)
			fail_msg("%s: block %" PRIu64 " v%" PRIu64 " changed (re-encrypted?)", what,
				 a->id[i], a->ver[i]);
	}
}

static long trace_mark(struct env *e)
{
	struct stat sb;

	h_px_idle(&e->px);                /* after the last statement's WRITE */
	return stat(e->cs.trace, &sb) == 0 ? (long)sb.st_size : 0;
}

/* READ and WRITE lines of the trace since mark. */
static int trace_rw_since(struct env *e, long mark, char *first, size_t len)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int n = 0;

	/* a SELECT's WRITE may land after its answer (proxy/engine.c,
	 * stmt_answer): read once the proxy has committed it */
	h_px_idle(&e->px);
	f = fopen(e->cs.trace, "r");

	if (first && len)
		first[0] = '\0';
	if (f == NULL)
		return 0;
	fseek(f, mark, SEEK_SET);
	while (getline(&line, &cap, f) > 0) {
		if (strstr(line, " op=READ ") || strstr(line, " op=WRITE ")) {
			if (n++ == 0 && first)
				snprintf(first, len, "%s", line);
		}
	}
	free(line);
	fclose(f);
	return n;
}

/* ==== 2. revocation =================================================================== */

static void test_revoke(void **state)
{
	struct env *e = *state;
	struct pxc_table kv;
	struct model m = { .n = 0 };
	struct userkey *alice, *bob;
	struct pxc *ca, *cb, *cx = NULL;
	struct snap before, after;
	struct pxc_result res;
	struct res r;
	char err[512], first[512], line[512];
	long mark;
	int rc, n;

	deploy(e, 32);
	kma_init(e);
	issue(e, "alice", "alice.key");
	issue(e, "bob", "bob.key");
	alice = load_key(e, "alice.key");
	bob = load_key(e, "bob.key");
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	ca = connect_uk(e->px.addr, alice);
	cb = connect_uk(e->px.addr, bob);
	OK(ca, pxc_create_table(ca, &kv, 0));
	for (int i = 1; i <= 6; i++)
		insert_kv(ca, &kv, &m, i, i % 2 ? "odd" : "even");
	check_table(cb, &kv, &m);
	check_table(ca, &kv, &m);

	/* ---- the revocation itself touches no block */
	snap_take(e, &before);
	mark = trace_mark(e);
	pxcli(e, &r, "user", "revoke", "--state", e->px.state, "alice", (const char *)NULL);
	expect_ok(&r);
	if (strstr(r.out, "alice") == NULL || strstr(r.out, "revoked") == NULL)
		fail_msg("user revoke says: %s", r.out);
	res_free(&r);
	if ((n = trace_rw_since(e, mark, first, sizeof(first))) != 0)
		fail_msg("revoking alice made %d READ/WRITE requests to the cloud (re-encryption?); "
			 "first: %s", n, first);
	snap_take(e, &after);
	snap_same(&before, &after, "revoking alice");
	snap_free(&after);

	/* ---- alice's next request: LWC_ERR_REVOKED, "revoked", then the connection closes */
	mark = trace_mark(e);
	rc = pxc_select(ca, &kv, NULL, 0, &res);
	if (rc != LWC_ERR_REVOKED || !pxc_error_from_proxy(ca))
		fail_msg("a revoked user's request: %s (%s), expected an LWC_ERR_REVOKED answer",
			 lwc_errname(rc), pxc_errmsg(ca));
	if (strstr(pxc_errmsg(ca), "revoked") == NULL)
		fail_msg("the revocation answer does not say 'revoked': %s", pxc_errmsg(ca));
	if (pxc_last_records(ca) != 0)
		fail_msg("the revoked user received %zu records", pxc_last_records(ca));
	{
		Lwc__ProxyResponse *resp = NULL;
		pxc_set_timeout(ca, 5000);
		rc = pxc_recv(ca, &resp);
		if (rc != LWC_ERR_CLOSED && rc != LWC_ERR_IO) {
			if (resp)
				lwc__proxy_response__free_unpacked(resp, NULL);
			fail_msg("the revoked user's connection is still open (%s)", lwc_errname(rc));
		}
	}
	pxc_close(ca);
	if ((n = trace_rw_since(e, mark, first, sizeof(first))) != 0)
		fail_msg("the revoked user's request reached the cloud (%d requests): %s", n, first);

	/* ---- reconnecting fails */
	rc = try_connect(e->px.addr, alice, &cx, err, sizeof(err));
	assert_null(cx);
	if (rc != LWC_ERR_REVOKED || strstr(err, "revoked") == NULL)
		fail_msg("reconnecting a revoked user: %s (%s), expected LWC_ERR_REVOKED",
			 lwc_errname(rc), err);

	/* ---- bob, connected all along, is unaffected */
	check_table(cb, &kv, &m);
	insert_kv(cb, &kv, &m, 7, "after the revocation");
	check_table(cb, &kv, &m);
	cx = connect_uk(e->px.addr, bob);
	check_table(cx, &kv, &m);
	pxc_close(cx);

	/* ---- revoking again: not active, exit 0 */
	pxcli(e, &r, "user", "revoke", "--state", e->px.state, "alice", (const char *)NULL);
	expect_ok(&r);
	if (strstr(r.out, "alice") == NULL || strstr(r.out, "not") == NULL ||
	    strstr(r.out, "active") == NULL)
		fail_msg("revoking alice twice should say she was not active: %s", r.out);
	res_free(&r);
	pxcli(e, &r, "user", "list", "--state", e->px.state, (const char *)NULL);
	expect_ok(&r);
	if (!line_with(r.out, "alice", line, sizeof(line)) || strstr(line, "revoked") == NULL)
		fail_msg("user list does not show alice revoked:\n%s", r.out);
	if (!line_with(r.out, "bob", line, sizeof(line)) || strstr(line, "active") == NULL)
		fail_msg("user list does not show bob active:\n%s", r.out);
	res_free(&r);
	/* control: a statement does show in the trace and in the blocks */
	snap_free(&before);
	snap_take(e, &before);
	mark = trace_mark(e);
	check_table(cb, &kv, &m);
	if (trace_rw_since(e, mark, NULL, 0) < 2)
		fail_msg("control: a SELECT made no READ and WRITE in the trace");
	snap_take(e, &after);
	{
		size_t same = before.n == after.n;
		for (size_t i = 0; same && i < before.n; i++)
			same = before.ver[i] == after.ver[i] && before.len[i] == after.len[i] &&
			       memcmp(before.data[i], after.data[i], before.len[i]) == 0;
		if (same)
			fail_msg("control: a SELECT left every stored block unchanged");
	}
	snap_free(&after);
	snap_free(&before);
	pxc_close(cb);
	userkey_free(alice);
	userkey_free(bob);
}

/* ==== 3. a revoked user with the whole store ========================================== */

/* Count the S-byte windows at every byte offset of buf that open as a record
 * of any of the tables under rec_key; *at gets the first offset. */
static size_t scan_records(const uint8_t *buf, size_t len, const uint8_t rec_key[32],
			   const char *const *tables, size_t ntables, size_t *at)
{
	uint8_t rec[R_BYTES];
	size_t hits = 0;

	if (len < S_BYTES)
		return 0;
	for (size_t o = 0; o + S_BYTES <= len; o++) {
		for (size_t t = 0; t < ntables; t++) {
			if (cry_record_open(rec, rec_key, buf + o, S_BYTES, tables[t]) == LWC_OK) {
				if (hits++ == 0 && at)
					*at = o;
			}
		}
	}
	sodium_memzero(rec, sizeof(rec));
	return hits;
}

static int bump_fn(void *arg, const struct pxc_row *old, struct pxc_row *nw)
{
	(void)arg;
	(void)old;
	snprintf(nw->v[1].s, sizeof(nw->v[1].s), "updated");
	return 1;
}

static void test_revoked_store(void **state)
{
	struct env *e = *state;
	static const char *const tables[] = { "kv", "people" };
	struct pxc_table kv, people;
	struct model m = { .n = 0 };
	struct userkey *alice, *bob, *stolen;
	struct pxc *ca, *cb, *cx = NULL;
	struct snap s;
	uint8_t used_rec[32], rec_key[32];
	char err[512];
	size_t hits = 0, windows = 0, at = 0;
	uint64_t cnt;
	int rc;

	deploy(e, 32);
	kma_init(e);
	issue(e, "alice", "alice.key");
	issue(e, "bob", "bob.key");
	alice = load_key(e, "alice.key");
	bob = load_key(e, "bob.key");
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	assert_int_equal(pxc_table_def(&people, "people", "id:int:pk,name:text,age:int"), 0);
	ca = connect_uk(e->px.addr, alice);
	memcpy(used_rec, pxc_keys(ca)->rec, 32);
	OK(ca, pxc_create_table(ca, &kv, 0));
	OK(ca, pxc_create_table(ca, &people, 0));
	for (int i = 1; i <= 12; i++)
		insert_kv(ca, &kv, &m, i, "a secret value of alice");
	for (int i = 1; i <= 8; i++) {
		struct pxc_val v[3] = { pxc_int(i), pxc_text("someone"), pxc_int(30 + i) };
		struct pxc_row row = pxc_row_make(&people, v);
		OK(ca, pxc_insert(ca, &people, &row, 1, &cnt));
	}
	/* older versions of the blocks too: updates and deletes */
	OK(ca, pxc_update(ca, &kv, pxc_eq_int(pxc_keys(ca), &kv, "k", 3), bump_fn, NULL, &cnt));
	assert_int_equal(cnt, 1);
	snprintf(m.rows[2].v[1].s, sizeof(m.rows[2].v[1].s), "updated");
	OK(ca, pxc_delete(ca, &people, pxc_eq_int(pxc_keys(ca), &people, "id", 2), NULL, NULL,
			  &cnt));
	assert_int_equal(cnt, 1);
	cb = connect_uk(e->px.addr, bob);
	check_table(cb, &kv, &m);
	pxc_close(ca);

	/* alice is revoked */
	assert_int_equal(h_px_user_revoke(&e->px, "alice"), 0);
	rc = try_connect(e->px.addr, alice, &cx, err, sizeof(err));
	assert_int_equal(rc, LWC_ERR_REVOKED);

	/* she keeps her key file and takes a full copy of the store */
	stolen = load_key(e, "alice.key");
	assert_int_equal(cry_kdf(rec_key, stolen->ku, CRY_SUB_RECORD, CRY_CTX_USER), LWC_OK);
	if (memcmp(rec_key, used_rec, 32) != 0)
		fail_msg("the record key derived from alice's key file is not the key her client "
			 "encrypted with");
	snap_take(e, &s);
	assert_true(s.n >= e->nblocks);
	for (size_t i = 0; i < s.n; i++) {
		size_t a = 0, h = scan_records(s.data[i], s.len[i], rec_key, tables, 2, &a);
		if (h && hits == 0)
			fprintf(stderr, "  block %" PRIu64 " v%" PRIu64 " opens at offset %zu\n",
				s.id[i], s.ver[i], a);
		hits += h;
		windows += s.len[i] >= S_BYTES ? s.len[i] - S_BYTES + 1 : 0;
	}
	if (hits != 0)
		fail_msg("a revoked user holding K_U opened %zu records in the stored blocks", hits);
	fprintf(stderr, "    %zu block versions, %zu windows x 2 tables: 0 records open\n", s.n,
		windows);

	/* control: the same routine finds a record planted in a stored block */
	{
		struct pxc_keys k;
		struct pxc_row row = kv_row(&kv, 99, "planted");
		uint8_t *buf = malloc(s.len[0]), sealed[S_BYTES];
		size_t off = 1 + (s.len[0] - S_BYTES) / 3;     /* unaligned on purpose */
		assert_non_null(buf);
		assert_int_equal(pxc_keys_init(&k, stolen->ku, R_BYTES), LWC_OK);
		assert_int_equal(pxc_seal_row(&k, &kv, &row, sealed), LWC_OK);
		memcpy(buf, s.data[0], s.len[0]);
		memcpy(buf + off, sealed, S_BYTES);
		at = 0;
		hits = scan_records(buf, s.len[0], rec_key, tables, 2, &at);
		if (hits != 1 || at != off)
			fail_msg("control: a record planted at offset %zu was found %zu times (first at "
				 "%zu)", off, hits, at);
		hits = scan_records(buf, s.len[0], rec_key, tables + 1, 1, &at);
		assert_int_equal(hits, 0);                   /* AAD of another table */
		free(buf);
	}
	snap_free(&s);
	sodium_memzero(rec_key, sizeof(rec_key));
	pxc_close(cb);
	userkey_free(alice);
	userkey_free(bob);
	userkey_free(stolen);
}

/* ==== 4. captured sessions ============================================================= */

struct cbuf {
	uint8_t *p;
	size_t n, cap;
};

static void cbuf_add(struct cbuf *b, const uint8_t *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (b->p == NULL)
			abort();
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

/* A TCP relay between one client and the proxy that records both directions. */
struct relay {
	int lfd;
	char addr[64];
	char target[64];
	pthread_t th;
	struct cbuf c2s, s2c;
	char err[256];
};

static int write_all_fd(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void *relay_main(void *arg)
{
	struct relay *r = arg;
	struct pollfd lp = { r->lfd, POLLIN, 0 };
	uint8_t buf[65536];
	int cfd, sfd = -1, rd[2];

	if (poll(&lp, 1, TIMEOUT) != 1) {
		snprintf(r->err, sizeof(r->err), "relay: no client");
		return NULL;
	}
	if ((cfd = accept(r->lfd, NULL, NULL)) < 0) {
		snprintf(r->err, sizeof(r->err), "relay: accept: %s", strerror(errno));
		return NULL;
	}
	if (net_connect(r->target, TIMEOUT, &sfd, r->err, sizeof(r->err)) != LWC_OK) {
		close(cfd);
		return NULL;
	}
	rd[0] = cfd;
	rd[1] = sfd;
	while (rd[0] >= 0 || rd[1] >= 0) {
		struct pollfd p[2] = { { rd[0], POLLIN, 0 }, { rd[1], POLLIN, 0 } };
		int pr = poll(p, 2, 2 * TIMEOUT);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			snprintf(r->err, sizeof(r->err), "relay: idle for %d ms", 2 * TIMEOUT);
			break;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;
			int to = i == 0 ? sfd : cfd;
			if (rd[i] < 0 || p[i].revents == 0)
				continue;
			n = read(rd[i], buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n > 0) {
				cbuf_add(i == 0 ? &r->c2s : &r->s2c, buf, (size_t)n);
				if (write_all_fd(to, buf, (size_t)n) == 0)
					continue;
			}
			rd[i] = -1;                 /* EOF or error: pass it on */
			shutdown(to, SHUT_WR);
		}
	}
	close(cfd);
	close(sfd);
	return NULL;
}

static void relay_start(struct relay *r, const char *target)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);

	memset(r, 0, sizeof(*r));
	snprintf(r->target, sizeof(r->target), "%s", target);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(r->lfd >= 0);
	assert_int_equal(bind(r->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(r->lfd, 1), 0);
	assert_int_equal(getsockname(r->lfd, (struct sockaddr *)&sa, &sl), 0);
	snprintf(r->addr, sizeof(r->addr), "127.0.0.1:%d", ntohs(sa.sin_port));
	assert_int_equal(pthread_create(&r->th, NULL, relay_main, r), 0);
}

static void relay_join(struct relay *r)
{
	pthread_join(r->th, NULL);
	close(r->lfd);
	if (r->err[0])
		fail_msg("%s", r->err);
}

static void relay_free(struct relay *r)
{
	free(r->c2s.p);
	free(r->s2c.p);
}

/* Frame i (0-based) of a captured stream. */
static int frame_at(const struct cbuf *b, size_t i, const uint8_t **body, size_t *len)
{
	size_t o = 0;

	for (size_t k = 0;; k++) {
		uint32_t l;
		if (o + WIRE_HDR_BYTES > b->n)
			return 0;
		l = wire_get_u32(b->p + o);
		if (o + WIRE_HDR_BYTES + l > b->n)
			return 0;
		if (k == i) {
			*body = b->p + o + WIRE_HDR_BYTES;
			*len = l;
			return 1;
		}
		o += WIRE_HDR_BYTES + l;
	}
}

static size_t frame_count(const struct cbuf *b)
{
	const uint8_t *p;
	size_t n = 0, l;

	while (frame_at(b, n, &p, &l))
		n++;
	return n;
}

static int has_bytes(const struct cbuf *b, const void *needle, size_t n)
{
	for (size_t i = 0; i + n <= b->n; i++)
		if (memcmp(b->p + i, needle, n) == 0)
			return 1;
	return 0;
}

/* A session of uk through a relay: CREATE TABLE t, INSERT, SELECT. */
static void captured_session(struct env *e, const struct userkey *uk, const char *table,
			     struct relay *r)
{
	struct pxc_table t;
	struct model m = { .n = 0 };
	struct pxc *c;

	assert_int_equal(pxc_table_def(&t, table, "k:int:pk,s:text"), 0);
	relay_start(r, e->px.addr);
	c = connect_uk(r->addr, uk);
	OK(c, pxc_create_table(c, &t, 0));
	insert_kv(c, &t, &m, 1, "capture-secret-one");
	insert_kv(c, &t, &m, 2, "capture-secret-two");
	check_table(c, &t, &m);
	pxc_close(c);
	relay_join(r);
}

/* Replay a captured handshake into a new server end with psk; the server's
 * nonce is the captured one.  Returns chan_server_auth's code; *out is the
 * channel (free it). */
static int replay_server(const struct relay *r, const uint8_t psk[32], int force_nonce,
			 const char *user, struct chan **out)
{
	const uint8_t *hello = NULL, *auth = NULL, *reply = NULL;
	size_t hello_len = 0, auth_len = 0, reply_len = 0, out_len = 0;
	Lwc__HelloReply *hr, *mine;
	uint8_t *o = NULL, nonce[32];
	struct chan *s = NULL;
	int rc;

	assert_true(frame_at(&r->c2s, 0, &hello, &hello_len));
	assert_true(frame_at(&r->c2s, 1, &auth, &auth_len));
	assert_true(frame_at(&r->s2c, 0, &reply, &reply_len));
	assert_non_null(hr = lwc__hello_reply__unpack(NULL, reply_len, reply));
	assert_int_equal(hr->nonce.len, 32);
	memcpy(nonce, hr->nonce.data, 32);
	lwc__hello_reply__free_unpacked(hr, NULL);

	assert_int_equal(chan_new(&s, 1), LWC_OK);
	assert_int_equal(chan_server_hello(s, hello, hello_len), LWC_OK);
	assert_string_equal(chan_key_id(s), user);
	if (force_nonce) {
		rng_forced = nonce;
		rng_forced_len = sizeof(nonce);
	}
	rc = chan_server_reply(s, psk, &o, &out_len);
	rng_forced = NULL;
	assert_int_equal(rc, LWC_OK);
	assert_non_null(mine = lwc__hello_reply__unpack(NULL, out_len, o));
	assert_int_equal(mine->nonce.len, 32);
	if (force_nonce && memcmp(mine->nonce.data, nonce, 32) != 0)
		fail_msg("test set-up: the replayed server did not take the captured nonce");
	lwc__hello_reply__free_unpacked(mine, NULL);
	free(o);
	o = NULL;
	rc = chan_server_auth(s, auth, auth_len, &o, &out_len);
	free(o);
	*out = s;
	return rc;
}

/* Open request frame i of a capture with ch; the ProxyRequest's op or -1. */
static int open_request(struct chan *ch, const struct relay *r, size_t i, int *rc_out)
{
	const uint8_t *body;
	size_t len, plen = 0;
	uint8_t *plain;
	Lwc__ProxyRequest *req;
	int op = -1, rc;

	assert_true(frame_at(&r->c2s, i, &body, &len));
	plain = malloc(len + 1);
	assert_non_null(plain);
	rc = chan_open(ch, body, len, plain, &plen);
	if (rc == LWC_OK && (req = lwc__proxy_request__unpack(NULL, plen, plain)) != NULL) {
		op = (int)req->op_case;
		lwc__proxy_request__free_unpacked(req, NULL);
	}
	free(plain);
	*rc_out = rc;
	return op;
}

static void test_capture(void **state)
{
	struct env *e = *state;
	struct userkey *alice, *bob;
	struct relay ra, rb;
	struct chan *ch;
	size_t nreq;
	int rc, op;

	deploy(e, 16);
	kma_init(e);
	issue(e, "alice", "alice.key");
	issue(e, "bob", "bob.key");
	alice = load_key(e, "alice.key");
	bob = load_key(e, "bob.key");

	captured_session(e, alice, "cap_a", &ra);
	captured_session(e, bob, "cap_b", &rb);
	nreq = frame_count(&ra.c2s);
	if (nreq < 2 + 4 || frame_count(&ra.s2c) < 2 + 4)
		fail_msg("capture: %zu client and %zu server frames (expected Hello, Auth and 4 "
			 "statements)", nreq, frame_count(&ra.s2c));
	/* the wire holds neither the values nor a key */
	if (has_bytes(&ra.c2s, "capture-secret", 14) || has_bytes(&ra.s2c, "capture-secret", 14))
		fail_msg("a plaintext value crossed the wire");
	if (has_bytes(&ra.c2s, alice->kdbu, 32) || has_bytes(&ra.c2s, alice->ku, 32) ||
	    has_bytes(&ra.s2c, alice->kdbu, 32) || has_bytes(&ra.s2c, alice->ku, 32))
		fail_msg("a key crossed the wire");

	/* ---- alice's handshake replayed into a server end holding bob's key: refused */
	rc = replay_server(&ra, bob->kdbu, 1, "alice", &ch);
	if (rc != LWC_ERR_AUTH)
		fail_msg("alice's captured Auth under bob's K_DBU: %s, expected LWC_ERR_AUTH",
			 lwc_errname(rc));
	op = open_request(ch, &ra, 2, &rc);
	if (rc == LWC_OK)
		fail_msg("alice's request opened after a failed authentication (op %d)", op);
	chan_free(ch);

	/* ---- control: with alice's key the same replay authenticates and every
	 * captured request opens, in order */
	rc = replay_server(&ra, alice->kdbu, 1, "alice", &ch);
	if (rc != LWC_OK)
		fail_msg("control: alice's captured handshake under her own key: %s",
			 lwc_errname(rc));
	{
		static const int want[] = { LWC__PROXY_REQUEST__OP_CREATE_TABLE,
					    LWC__PROXY_REQUEST__OP_INSERT,
					    LWC__PROXY_REQUEST__OP_INSERT,
					    LWC__PROXY_REQUEST__OP_SELECT };
		for (size_t i = 2; i < nreq; i++) {
			op = open_request(ch, &ra, i, &rc);
			if (rc != LWC_OK || op < 0)
				fail_msg("control: captured request frame %zu does not open with "
					 "alice's session (%s)", i, lwc_errname(rc));
			if (i - 2 < 4 && op != want[i - 2])
				fail_msg("control: request %zu is op %d, expected %d", i - 2, op,
					 want[i - 2]);
		}
	}
	chan_free(ch);

	/* ---- the server's fresh nonce alone defeats a replay, even with alice's key */
	rc = replay_server(&ra, alice->kdbu, 0, "alice", &ch);
	if (rc != LWC_ERR_AUTH)
		fail_msg("alice's captured Auth against a fresh server nonce: %s, expected "
			 "LWC_ERR_AUTH", lwc_errname(rc));
	chan_free(ch);

	/* ---- bob's own (replayed) session does not open alice's frames */
	rc = replay_server(&rb, bob->kdbu, 1, "bob", &ch);
	if (rc != LWC_OK)
		fail_msg("control: bob's captured handshake under his key: %s", lwc_errname(rc));
	op = open_request(ch, &ra, 2, &rc);
	if (rc == LWC_OK)
		fail_msg("bob's session opened alice's request frame (op %d)", op);
	chan_free(ch);

	/* ---- the live proxy refuses the replayed handshake */
	{
		const uint8_t *hello = NULL, *auth = NULL;
		size_t hl = 0, al = 0, len = 0;
		uint8_t *body = NULL, b;
		Lwc__Error *er;
		char err[128];
		int fd;
		assert_true(frame_at(&ra.c2s, 0, &hello, &hl));
		assert_true(frame_at(&ra.c2s, 1, &auth, &al));
		assert_int_equal(net_connect(e->px.addr, TIMEOUT, &fd, err, sizeof(err)), LWC_OK);
		assert_int_equal(wire_send_frame(fd, hello, hl), LWC_OK);
		assert_int_equal(wire_recv_frame(fd, WIRE_PREAUTH_MAX, &body, &len, TIMEOUT),
				 LWC_OK);
		free(body);
		assert_int_equal(wire_send_frame(fd, auth, al), LWC_OK);
		rc = wire_recv_frame(fd, WIRE_PREAUTH_MAX, &body, &len, TIMEOUT);
		if (rc != LWC_OK)
			fail_msg("replayed Auth: no answer (%s), expected an Error", lwc_errname(rc));
		er = lwc__error__unpack(NULL, len, body);
		if (er == NULL || er->code != LWC_ERR_AUTH)
			fail_msg("the proxy accepted a replayed handshake of alice (answer is %s)",
				 er ? lwc_errname(er->code) : "not an Error");
		lwc__error__free_unpacked(er, NULL);
		free(body);
		assert_int_equal(wire_read_full(fd, &b, 1, TIMEOUT), LWC_ERR_CLOSED);
		close(fd);
	}
	relay_free(&ra);
	relay_free(&rb);
	userkey_free(alice);
	userkey_free(bob);
}

/* ==== 5. the authority offline ========================================================= */

static void test_kma_offline(void **state)
{
	struct env *e = *state;
	struct pxc_table kv;
	struct model m = { .n = 0 };
	struct userkey *alice, *bob, *carol;
	struct pxc *ca, *cb, *cx;
	struct res r;
	char away[500], carol_key[500], line[512];

	deploy(e, 16);
	kma_init(e);
	issue(e, "alice", "alice.key");
	issue(e, "bob", "bob.key");
	alice = load_key(e, "alice.key");
	bob = load_key(e, "bob.key");
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	ca = connect_uk(e->px.addr, alice);
	OK(ca, pxc_create_table(ca, &kv, 0));
	insert_kv(ca, &kv, &m, 1, "before");
	pxc_close(ca);

	/* the authority goes away */
	snprintf(away, sizeof(away), "%s.away", e->kma);
	assert_int_equal(rename(e->kma, away), 0);

	/* existing users carry on, new connections included, across a proxy restart */
	ca = connect_uk(e->px.addr, alice);
	cb = connect_uk(e->px.addr, bob);
	insert_kv(ca, &kv, &m, 2, "alice, authority away");
	insert_kv(cb, &kv, &m, 3, "bob, authority away");
	check_table(ca, &kv, &m);
	check_table(cb, &kv, &m);
	pxc_close(ca);
	pxc_close(cb);
	assert_int_equal(WEXITSTATUS(h_px_stop(&e->px, SIGTERM)), 0);
	h_px_start(&e->px, NULL);
	snprintf(e->sock, sizeof(e->sock), "%s", e->px.sock);
	ca = connect_uk(e->px.addr, alice);
	cb = connect_uk(e->px.addr, bob);
	insert_kv(cb, &kv, &m, 4, "after a proxy restart");
	check_table(ca, &kv, &m);
	{
		/* interactive UPDATE and DELETE need no authority either */
		uint64_t cnt = 0;
		OK(ca, pxc_update(ca, &kv, pxc_eq_int(pxc_keys(ca), &kv, "k", 1), bump_fn, NULL,
				  &cnt));
		assert_int_equal(cnt, 1);
		snprintf(m.rows[0].v[1].s, sizeof(m.rows[0].v[1].s), "updated");
		OK(cb, pxc_delete(cb, &kv, pxc_eq_int(pxc_keys(cb), &kv, "k", 4), NULL, NULL, &cnt));
		assert_int_equal(cnt, 1);
		m.n--;
	}
	check_table(cb, &kv, &m);

	/* issuing fails, clearly, and leaves nothing behind */
	key_path(e, "carol.key", carol_key, sizeof(carol_key));
	kma(e, &r, "issue", "--dir", e->kma, "--user", "carol", "--proxy", e->px.addr, "--out",
	    carol_key, "--proxy-socket", e->sock, (const char *)NULL);
	expect_fail(&r, e->kma);
	if (strstr(r.err, "key authority") == NULL)
		fail_msg("issuing without the authority: unclear message: %s", r.err);
	res_free(&r);
	if (file_exists(carol_key))
		fail_msg("a failed issue left %s", carol_key);
	pxcli(e, &r, "user", "list", "--state", e->px.state, (const char *)NULL);
	expect_ok(&r);
	if (line_with(r.out, "carol", line, sizeof(line)))
		fail_msg("carol was registered at the proxy without an authority:\n%s", r.out);
	res_free(&r);
	kma(e, &r, "list", "--dir", e->kma, (const char *)NULL);
	expect_fail(&r, e->kma);
	res_free(&r);

	/* control: the authority comes back and issuing works again */
	assert_int_equal(rename(away, e->kma), 0);
	issue(e, "carol", "carol.key");
	carol = load_key(e, "carol.key");
	assert_memory_equal(carol->ku, alice->ku, 32);
	cx = connect_uk(e->px.addr, carol);
	check_table(cx, &kv, &m);
	pxc_close(cx);
	pxc_close(ca);
	pxc_close(cb);
	userkey_free(alice);
	userkey_free(bob);
	userkey_free(carol);
}

/* ==== 6. damaged key files ============================================================ */

static void copy_file(const char *from, const char *to, unsigned mode)
{
	size_t len;
	char *text = slurp(from, &len);
	int fd = open(to, O_WRONLY | O_CREAT | O_EXCL, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write_all_fd(fd, (const uint8_t *)text, len), 0);
	close(fd);
	assert_int_equal(chmod(to, mode), 0);
	free(text);
}

/* Copy with the key line edited: which = 0 flips the first hex digit of the
 * secret, 1 flips the last (checksum) digit, 2 makes the version 2. */
static void damaged_copy(const char *from, const char *to, const char *kind, int which)
{
	size_t len;
	char *text = slurp(from, &len), head[64], *line, *colon, *end;
	int fd;

	snprintf(head, sizeof(head), "\n%s-1:", kind);
	line = strstr(text, head);
	assert_non_null(line);
	line++;
	colon = strchr(line, ':');
	end = strchr(line, '\n');
	assert_true(colon && end && end > colon + 8);
	if (which == 0)
		colon[1] = colon[1] == '0' ? '1' : '0';
	else if (which == 1)
		end[-1] = end[-1] == '0' ? '1' : '0';
	else
		colon[-1] = '2';
	fd = open(to, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write_all_fd(fd, (const uint8_t *)text, len), 0);
	close(fd);
	sodium_memzero(text, len);
	free(text);
}

struct bad_case {
	const char *what;
	char path[500];
	int code;               /* userkey_read */
	const char *needle;     /* in both messages */
	char msg[512];          /* userkey_read's message */
	char *stderr_text;      /* lwc-proxy user add's */
};

static void test_bad_key_files(void **state)
{
	struct env *e = *state;
	struct bad_case bc[4] = {
		{ .what = "mode 0644", .code = LWC_ERR_PERM, .needle = "chmod 600" },
		{ .what = "a flipped hex digit of the key", .code = LWC_ERR_CHECKSUM,
		  .needle = "checksum" },
		{ .what = "a flipped hex digit of the checksum", .code = LWC_ERR_CHECKSUM,
		  .needle = "checksum" },
		{ .what = "version 2", .code = LWC_ERR_FORMAT, .needle = "version 2" },
	};
	struct userkey *erin, *uk = NULL;
	struct pxc *c = NULL;
	struct res r;
	char good[500], enroll[500], err[512];
	int rc;

	deploy(e, 16);
	kma_init(e);
	/* erin is issued as an enrollment, so the proxy does not know her yet */
	key_path(e, "erin.key", good, sizeof(good));
	snprintf(enroll, sizeof(enroll), "%s/erin.enroll", e->users);
	kma(e, &r, "issue", "--dir", e->kma, "--user", "erin", "--proxy", e->px.addr, "--out",
	    good, "--enroll-out", enroll, (const char *)NULL);
	expect_ok(&r);
	res_free(&r);
	erin = load_key(e, "erin.key");

	snprintf(bc[0].path, sizeof(bc[0].path), "%s/erin-0644.key", e->users);
	copy_file(good, bc[0].path, 0644);
	snprintf(bc[1].path, sizeof(bc[1].path), "%s/erin-sum.key", e->users);
	damaged_copy(good, bc[1].path, USERKEY_KIND, 0);
	snprintf(bc[2].path, sizeof(bc[2].path), "%s/erin-sum2.key", e->users);
	damaged_copy(good, bc[2].path, USERKEY_KIND, 1);
	snprintf(bc[3].path, sizeof(bc[3].path), "%s/erin-v2.key", e->users);
	damaged_copy(good, bc[3].path, USERKEY_KIND, 2);

	for (int i = 0; i < 4; i++) {
		err[0] = '\0';
		rc = userkey_read(bc[i].path, &uk, err, sizeof(err));
		if (rc != bc[i].code)
			fail_msg("userkey_read of a key file with %s: %s (%s), expected %s",
				 bc[i].what, lwc_errname(rc), err, lwc_errname(bc[i].code));
		assert_null(uk);
		if (strstr(err, bc[i].needle) == NULL)
			fail_msg("userkey_read of a key file with %s says \"%s\" (no \"%s\")",
				 bc[i].what, err, bc[i].needle);
		no_hex(err, erin->kdbu, 32, "K_DBU", "userkey_read's message");
		no_hex(err, erin->ku, 32, "K_U", "userkey_read's message");
		snprintf(bc[i].msg, sizeof(bc[i].msg), "%s", err);

		pxcli(e, &r, "user", "add", "--state", e->px.state, "--key-file", bc[i].path,
		      (const char *)NULL);
		expect_fail(&r, bc[i].needle);
		no_hex(r.err, erin->kdbu, 32, "K_DBU", "lwc-proxy user add");
		no_hex(r.err, erin->ku, 32, "K_U", "lwc-proxy user add");
		no_hex(r.out, erin->kdbu, 32, "K_DBU", "lwc-proxy user add");
		bc[i].stderr_text = strdup(r.err);
		res_free(&r);
		/* and with --name, the documented form */
		pxcli(e, &r, "user", "add", "--state", e->px.state, "--name", "erin", "--key-file",
		      bc[i].path, (const char *)NULL);
		expect_fail(&r, bc[i].needle);
		res_free(&r);
	}
	/* distinct messages for permissions, damage and version */
	{
		static const int kinds[3] = { 0, 1, 3 };
		static const char *const only[3] = { "chmod", "checksum", "version" };
		for (int a = 0; a < 3; a++) {
			for (int b = 0; b < 3; b++) {
				if (a == b)
					continue;
				if (strstr(bc[kinds[a]].msg, only[b]))
					fail_msg("userkey_read: the message for %s also speaks of "
						 "\"%s\": %s", bc[kinds[a]].what, only[b],
						 bc[kinds[a]].msg);
				if (strstr(bc[kinds[a]].stderr_text, only[b]))
					fail_msg("user add: the message for %s also speaks of "
						 "\"%s\": %s", bc[kinds[a]].what, only[b],
						 bc[kinds[a]].stderr_text);
			}
		}
	}
	/* none of them registered erin */
	rc = try_connect(e->px.addr, erin, &c, err, sizeof(err));
	if (rc == LWC_OK)
		fail_msg("erin connects although only refused key files were added");

	/* enrollment files are checked the same way */
	{
		char bad[500];
		snprintf(bad, sizeof(bad), "%s/erin-0644.enroll", e->users);
		copy_file(enroll, bad, 0644);
		pxcli(e, &r, "user", "add", "--state", e->px.state, "--enroll", bad,
		      (const char *)NULL);
		expect_fail(&r, "chmod 600");
		res_free(&r);
		snprintf(bad, sizeof(bad), "%s/erin-v2.enroll", e->users);
		damaged_copy(enroll, bad, ENROLL_KIND, 2);
		pxcli(e, &r, "user", "add", "--state", e->px.state, "--enroll", bad,
		      (const char *)NULL);
		expect_fail(&r, "version 2");
		res_free(&r);
		snprintf(bad, sizeof(bad), "%s/erin-sum.enroll", e->users);
		damaged_copy(enroll, bad, ENROLL_KIND, 0);
		pxcli(e, &r, "user", "add", "--state", e->px.state, "--enroll", bad,
		      (const char *)NULL);
		expect_fail(&r, "checksum");
		res_free(&r);
	}

	/* control: the intact key file is accepted and erin connects */
	pxcli(e, &r, "user", "add", "--state", e->px.state, "--key-file", good,
	      (const char *)NULL);
	expect_ok(&r);
	res_free(&r);
	c = connect_uk(e->px.addr, erin);
	pxc_close(c);
	for (int i = 0; i < 4; i++)
		free(bc[i].stderr_text);
	userkey_free(erin);
}

/* ==== 7. scripts/lwc-local ============================================================ */

static int can_connect_port(int port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* scripts/lwc-local CMD [NAME] --dir T (+ up's options). */
static void local(struct env *e, struct res *r, const char *cmd, const char *name,
		  const char *port_base, const char *backend)
{
	const char *argv[16];
	char script[400];
	const char *dir = getenv("LWC_SCRIPTS");
	int n = 0;

	snprintf(script, sizeof(script), "%s/lwc-local", dir && dir[0] ? dir : "scripts");
	if (access(script, X_OK) != 0)
		fail_msg("%s is missing or not executable (run from the repository root or set "
			 "LWC_SCRIPTS)", script);
	argv[n++] = script;
	argv[n++] = cmd;
	if (name)
		argv[n++] = name;
	argv[n++] = "--dir";
	argv[n++] = e->local;
	if (port_base) {
		argv[n++] = "--port-base";
		argv[n++] = port_base;
	}
	if (backend) {
		argv[n++] = "--backend";
		argv[n++] = backend;
	}
	argv[n] = NULL;
	run_argv(e, argv, 90, r);
}

static void test_lwc_local(void **state)
{
	struct env *e = *state;
	struct pxc_table kv;
	struct model m = { .n = 0 };
	struct userkey *admin, *dave;
	struct pxc *c, *cd, *cx = NULL;
	struct res r;
	char pb[16], want[128], path[600], backend[1400], err[512], bindir[300];
	pid_t cs_pid, px_pid;
	int p, rc;

	/* lwc-local finds the binaries through LWC_BIN, like the harness */
	if (getenv("LWC_BIN") == NULL || getenv("LWC_BIN")[0] == '\0') {
		h_bin("", bindir, sizeof(bindir));
		bindir[strlen(bindir) - 1] = '\0';
		setenv("LWC_BIN", bindir, 1);
	}
	snprintf(e->local, sizeof(e->local), "%s/local", e->cs.dir);
	backend[0] = '\0';
	if (strcmp(h_backend(), "pg") == 0) {
		char sql[128];
		snprintf(e->local_db, sizeof(e->local_db), "lwc_local_%d", (int)getpid());
		snprintf(sql, sizeof(sql), "CREATE DATABASE %s", e->local_db);
		pg_admin(sql);
		snprintf(backend, sizeof(backend), "postgres:%s dbname=%s", getenv("LWC_TEST_PG"),
			 e->local_db);
	}
	p = h_free_port(2);
	snprintf(pb, sizeof(pb), "%d", p);

	/* ---- up */
	local(e, &r, "up", NULL, pb, backend[0] ? backend : NULL);
	expect_ok(&r);
	{
		const char *needles[6];
		char a[64], b[64];
		snprintf(a, sizeof(a), "127.0.0.1:%d", p);
		snprintf(b, sizeof(b), "127.0.0.1:%d", p + 1);
		needles[0] = e->local;
		needles[1] = a;
		needles[2] = b;
		needles[3] = "admin.sock";
		needles[4] = "admin.key";
		needles[5] = "down";
		for (int i = 0; i < 6; i++)
			if (strstr(r.out, needles[i]) == NULL)
				fail_msg("lwc-local up does not say \"%s\":\n%s", needles[i], r.out);
	}
	res_free(&r);
	snprintf(path, sizeof(path), "%s/cloudstore.pid", e->local);
	cs_pid = read_pidfile(path);
	snprintf(path, sizeof(path), "%s/proxy.pid", e->local);
	px_pid = read_pidfile(path);
	if (!pid_alive(cs_pid) || !pid_alive(px_pid))
		fail_msg("after up: cloud store pid %ld %s, proxy pid %ld %s", (long)cs_pid,
			 pid_alive(cs_pid) ? "alive" : "gone", (long)px_pid,
			 pid_alive(px_pid) ? "alive" : "gone");
	assert_true(can_connect_port(p));
	assert_true(can_connect_port(p + 1));

	/* the first user, admin, connects with the address from its key file */
	snprintf(e->users, sizeof(e->users), "%s/users", e->local);
	admin = load_key(e, "admin.key");
	snprintf(want, sizeof(want), "127.0.0.1:%d", p + 1);
	assert_string_equal(admin->proxy, want);
	c = connect_uk(admin->proxy, admin);
	assert_int_equal(pxc_table_def(&kv, "kv", "k:int:pk,s:text"), 0);
	OK(c, pxc_create_table(c, &kv, 0));
	insert_kv(c, &kv, &m, 1, "from admin");
	check_table(c, &kv, &m);

	/* ---- status */
	local(e, &r, "status", NULL, NULL, NULL);
	expect_ok(&r);
	if (strstr(r.out, "cloudstore: running") == NULL || strstr(r.out, "proxy: running") == NULL)
		fail_msg("lwc-local status:\n%s", r.out);
	if (strstr(r.out, "users_active") == NULL)
		fail_msg("lwc-local status does not show the proxy's status:\n%s", r.out);
	res_free(&r);

	/* ---- user dave */
	local(e, &r, "user", "dave", NULL, NULL);
	expect_ok(&r);
	no_hex(r.out, admin->ku, 32, "K_U", "lwc-local user");
	res_free(&r);
	snprintf(path, sizeof(path), "%s/users/dave.key", e->local);
	if (!file_exists(path))
		fail_msg("lwc-local user dave did not create %s", path);
	if (file_mode(path) != 0600)
		fail_msg("%s has mode %04o", path, file_mode(path));
	dave = load_key(e, "dave.key");
	assert_string_equal(dave->name, "dave");
	assert_memory_equal(dave->ku, admin->ku, 32);
	cd = connect_uk(dave->proxy, dave);
	check_table(cd, &kv, &m);
	insert_kv(cd, &kv, &m, 2, "from dave");
	check_table(c, &kv, &m);
	pxc_close(cd);
	local(e, &r, "user", "dave", NULL, NULL);      /* never overwrites a key file */
	expect_fail(&r, "dave");
	res_free(&r);

	/* ---- revoke dave */
	local(e, &r, "revoke", "dave", NULL, NULL);
	expect_ok(&r);
	if (strstr(r.out, "revoked") == NULL)
		fail_msg("lwc-local revoke dave says: %s", r.out);
	res_free(&r);
	rc = try_connect(dave->proxy, dave, &cx, err, sizeof(err));
	if (rc != LWC_ERR_REVOKED)
		fail_msg("dave after lwc-local revoke: %s (%s), expected LWC_ERR_REVOKED",
			 lwc_errname(rc), err);
	check_table(c, &kv, &m);
	pxc_close(c);

	/* ---- down: what up started is gone */
	local(e, &r, "down", NULL, NULL, NULL);
	expect_ok(&r);
	res_free(&r);
	if (pid_alive(cs_pid) || pid_alive(px_pid))
		fail_msg("after down: cloud store pid %ld %s, proxy pid %ld %s", (long)cs_pid,
			 pid_alive(cs_pid) ? "alive" : "gone", (long)px_pid,
			 pid_alive(px_pid) ? "alive" : "gone");
	if (can_connect_port(p) || can_connect_port(p + 1))
		fail_msg("after down something still listens on %d or %d", p, p + 1);
	local(e, &r, "status", NULL, NULL, NULL);
	expect_ok(&r);
	if (strstr(r.out, "cloudstore: stopped") == NULL || strstr(r.out, "proxy: stopped") == NULL)
		fail_msg("lwc-local status after down:\n%s", r.out);
	res_free(&r);

	/* ---- up again: the same deployment, the data is still there */
	local(e, &r, "up", NULL, NULL, NULL);
	expect_ok(&r);
	res_free(&r);
	if ((rc = try_connect(admin->proxy, admin, &c, err, sizeof(err))) != LWC_OK) {
		/* what the servers said, for the failure's cause */
		snprintf(path, sizeof(path), "%s/proxy.log", e->local);
		h_tail(path, 20);
		snprintf(path, sizeof(path), "%s/cloudstore.log", e->local);
		h_tail(path, 20);
		fail_msg("connect as admin after lwc-local up: %s (%s)", lwc_errname(rc), err);
	}
	check_table(c, &kv, &m);
	pxc_close(c);
	rc = try_connect(dave->proxy, dave, &cx, err, sizeof(err));
	if (rc != LWC_ERR_REVOKED)
		fail_msg("dave after a restart: %s (%s), expected LWC_ERR_REVOKED", lwc_errname(rc),
			 err);
	snprintf(path, sizeof(path), "%s/cloudstore.pid", e->local);
	cs_pid = read_pidfile(path);
	snprintf(path, sizeof(path), "%s/proxy.pid", e->local);
	px_pid = read_pidfile(path);
	local(e, &r, "down", NULL, NULL, NULL);
	expect_ok(&r);
	res_free(&r);
	if (pid_alive(cs_pid) || pid_alive(px_pid))
		fail_msg("after the second down a server is still running");
	userkey_free(admin);
	userkey_free(dave);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_issue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_issue_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revoke, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revoked_store, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kma_offline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_key_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lwc_local, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	rng_impl = randombytes_sysrandom_implementation;
	rng_impl.implementation_name = rng_name;
	rng_impl.buf = rng_buf;
	randombytes_set_implementation(&rng_impl);
	if (sodium_init() < 0)
		return 1;
	if (getenv("LWC_TEST_FILTER"))
		cmocka_set_test_filter(getenv("LWC_TEST_FILTER"));
	fprintf(stderr, "key authority suite on backend: %s\n", h_backend());
	return cmocka_run_group_tests_name(h_backend(), tests, NULL, NULL);
}
