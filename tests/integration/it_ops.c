/*
 * it_ops.c - operations hardening (issue 17): each failure an operator meets,
 * with the real servers.  No timed assertion: waits only let the servers
 * reach the state under test.
 *
 *   test_one_server_per_state  a second serve (and check, init) on a state in
 *                              use is refused with the holder's pid; the live
 *                              proxy's admin socket still answers; a second
 *                              cloud store on one LMDB directory likewise
 *   test_stale_state           a proxy state restored from a copy older than
 *                              the cloud store (after an acknowledged UPDATE
 *                              and INSERT) is refused, and served with
 *                              --accept-stale-state
 *   test_conn_flood            100 idle connections to a proxy and to a cloud
 *                              store running at `ulimit -n 64` (the connection
 *                              limit, then accept() out of descriptors): logs
 *                              stay under 1 MB, the service answers after
 *   test_check_counts          lwc-proxy check names exactly the N blocks
 *                              deleted from the store
 *   test_disk_full             the cloud store's and then the proxy state's
 *                              disk full (a small tmpfs; skipped where none
 *                              can be mounted): "no space left on device" for
 *                              the client and in the server's log, no
 *                              acknowledged row lost
 *   test_port_clash            scripts/lwc-local up on a port in use says
 *                              which, exits non-zero, keeps no ports file
 *   test_cancel_update         liblwc's cancel flag (the shell's Ctrl-C)
 *                              aborts an UPDATE all or nothing and keeps the
 *                              session
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>
#include <lmdb.h>
#include <sodium.h>

#include "cry.h"
#include "harness.h"
#include "lwc.h"
#include "lwc_err.h"
#include "pxc.h"

struct env {
	struct h_cs cs;
	struct h_px px;
	uint8_t alice[32];
	char mnt[2][400];             /* tmpfs mounted by the test */
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	h_cs_setup(&e->cs);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	if (e->px.pid > 0)
		h_px_stop(&e->px, SIGTERM);
	h_px_teardown(&e->px);
	if (e->cs.pid > 0)
		h_cs_stop(&e->cs, SIGTERM);
	for (int i = 0; i < 2; i++)
		if (e->mnt[i][0] && umount2(e->mnt[i], MNT_DETACH) != 0)
			fprintf(stderr, "note: cannot unmount %s: %s\n", e->mnt[i], strerror(errno));
	h_cs_teardown(&e->cs);
	free(e);
	return 0;
}

static void deploy(struct env *e, const char *blocks, const char *const *serve)
{
	const char *init[] = { "--blocks", blocks, NULL };

	h_px_init(&e->px, &e->cs, init);
	h_px_start(&e->px, serve);
	assert_int_equal(h_px_user_add(&e->px, "alice", e->alice), 0);
}

static struct pxc *conn(struct env *e)
{
	struct pxc *c = NULL;
	char err[512] = "";
	int rc = pxc_connect(&c, e->px.addr, "alice", e->alice, e->px.ku, err, sizeof(err));

	if (rc != LWC_OK)
		fail_msg("connect: %s (%s)", lwc_errname(rc), err);
	return c;
}

#define OK(c, expr)                                                              \
	do {                                                                     \
		int rc_ = (expr);                                                \
		if (rc_ != LWC_OK)                                               \
			fail_msg("line %d: %s: %s (%s)", __LINE__, #expr,        \
				 lwc_errname(rc_), pxc_errmsg(c));               \
	} while (0)

/* Run argv (NULL-terminated) to completion, output into out; a command that
 * does not end within 60 s is killed and fails the test (a refused server
 * that serves instead would otherwise hang the suite). */
static int run_bounded(const char *out, const char *const *argv)
{
	pid_t pid = fork();
	int st = 0;

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	for (int i = 0; i < 6000; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	h_tail(out, 10);
	fail_msg("%s %s did not end within 60 s", argv[0], argv[1] ? argv[1] : "");
	return -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (f == NULL)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

static void expect_in_file(const char *path, const char *needle, const char *what)
{
	char *s = slurp(path);

	if (strstr(s, needle) == NULL) {
		h_tail(path, 15);
		free(s);
		fail_msg("%s: \"%s\" not found in %s", what, needle, path);
	}
	free(s);
}

static long file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static void shell(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

/* kv(k INT PRIMARY KEY, v INT): rows k = first .. first+n-1, v = val. */
static void kv_insert(struct pxc *c, const struct pxc_table *t, int64_t first, int n, int64_t val,
		      int *rc_out)
{
	struct pxc_row *rows = calloc((size_t)n, sizeof(*rows));
	uint64_t cnt = 0;
	int rc;

	assert_non_null(rows);
	for (int i = 0; i < n; i++) {
		struct pxc_val v[2] = { pxc_int(first + i), pxc_int(val) };
		rows[i] = pxc_row_make(t, v);
	}
	rc = pxc_insert(c, t, rows, (size_t)n, &cnt);
	free(rows);
	if (rc_out) {
		*rc_out = rc;
		return;
	}
	if (rc != LWC_OK)
		fail_msg("INSERT of %d rows: %s (%s)", n, lwc_errname(rc), pxc_errmsg(c));
	assert_int_equal(cnt, (uint64_t)n);
}

/* Every row of kv, sorted by k: keys into keys[], values into vals[]. */
static size_t kv_all(struct pxc *c, const struct pxc_table *t, int64_t *keys, int64_t *vals,
		     size_t cap)
{
	struct pxc_result res;
	size_t n;

	OK(c, pxc_select(c, t, NULL, 0, &res));
	n = res.n;
	assert_true(n <= cap);
	for (size_t i = 0; i < n; i++) {
		keys[i] = res.rows[i].v[0].i;
		vals[i] = res.rows[i].v[1].i;
	}
	pxc_result_free(&res);
	/* insertion sort: a few hundred rows */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && keys[j - 1] > keys[j]; j--) {
			int64_t tk = keys[j], tv = vals[j];
			keys[j] = keys[j - 1];
			vals[j] = vals[j - 1];
			keys[j - 1] = tk;
			vals[j - 1] = tv;
		}
	return n;
}

/* ---- 1. one server per state directory ------------------------------------ */

static void test_one_server_per_state(void **state)
{
	struct env *e = *state;
	char bin[256], out[400], addr2[64], pidtxt[32], lockf[400];
	const char *argv[12];
	int rc;

	h_cs_start(&e->cs, NULL);
	deploy(e, "16", NULL);
	snprintf(out, sizeof(out), "%s/second.log", e->px.dir);
	snprintf(addr2, sizeof(addr2), "127.0.0.1:%d", h_free_port(1));
	snprintf(pidtxt, sizeof(pidtxt), "pid %d", (int)e->px.pid);

	/* a second serve on the same state, another port: refused at once */
	argv[0] = h_bin("lwc-proxy", bin, sizeof(bin));
	argv[1] = "serve";
	argv[2] = "--state";
	argv[3] = e->px.state;
	argv[4] = "--listen";
	argv[5] = addr2;
	argv[6] = NULL;
	rc = run_bounded(out, argv);
	assert_int_not_equal(rc, 0);
	expect_in_file(out, "is in use by", "second serve");
	expect_in_file(out, pidtxt, "second serve names the holder");
	/* the live proxy kept its admin socket */
	assert_int_equal(access(e->px.sock, F_OK), 0);
	assert_int_equal(h_px_cli(&e->px, out, "status", "--state", e->px.state,
				  (const char *)NULL), 0);
	expect_in_file(out, "uptime_s", "status through the admin socket");
	{
		struct pxc *c = conn(e);
		struct pxc_table t;
		assert_int_equal(pxc_table_def(&t, "kv", "k:int:pk,v:int"), 0);
		OK(c, pxc_create_table(c, &t, 0));
		kv_insert(c, &t, 1, 5, 1, NULL);
		pxc_close(c);
	}

	/* check and init are refused too while serve runs */
	assert_int_equal(h_px_cli(&e->px, out, "check", "--state", e->px.state,
				  (const char *)NULL), 2);
	expect_in_file(out, pidtxt, "check on a live state");
	assert_int_not_equal(h_px_cli(&e->px, out, "init", "--state", e->px.state, "--cloudstore",
				      e->cs.addr, "--cs-key-file", e->cs.key_file,
				      (const char *)NULL), 0);
	expect_in_file(out, pidtxt, "init on a live state");
	assert_int_equal(access(e->px.sock, F_OK), 0);

	/* a second cloud store on the same LMDB directory, or PostgreSQL database */
	{
		char bin2[256], a2[64];
		const char *cs2[10];

		snprintf(a2, sizeof(a2), "127.0.0.1:%d", h_free_port(1));
		snprintf(pidtxt, sizeof(pidtxt), "pid %d", (int)e->cs.pid);
		cs2[0] = h_bin("lwc-cloudstore", bin2, sizeof(bin2));
		cs2[1] = "--listen";
		cs2[2] = a2;
		cs2[3] = "--store";
		cs2[4] = e->cs.store;
		cs2[5] = "--key-file";
		cs2[6] = e->cs.key_file;
		cs2[7] = NULL;
		assert_int_not_equal(run_bounded(out, cs2), 0);
		expect_in_file(out, e->cs.db[0] ? "in use by another lwc-cloudstore" : pidtxt,
			       "second cloud store");
	}

	/* the proxy still serves; once stopped, its lock file is gone and a
	 * new serve starts (also after kill -9: the kernel drops the lock) */
	{
		struct pxc *c = conn(e);
		struct pxc_table t;
		struct pxc_result res;
		assert_int_equal(pxc_table_def(&t, "kv", "k:int:pk,v:int"), 0);
		OK(c, pxc_select(c, &t, NULL, 0, &res));
		assert_int_equal(res.n, 5);
		pxc_result_free(&res);
		pxc_close(c);
	}
	snprintf(lockf, sizeof(lockf), "%s/lwc-proxy.pid", e->px.state);
	assert_int_equal(access(lockf, F_OK), 0);
	h_px_stop(&e->px, SIGTERM);
	assert_int_not_equal(access(lockf, F_OK), 0);
	assert_int_not_equal(access(e->px.sock, F_OK), 0);
	h_px_start(&e->px, NULL);
	h_px_stop(&e->px, SIGKILL);
	h_px_start(&e->px, NULL);
	assert_int_equal(h_px_cli(&e->px, out, "status", "--state", e->px.state,
				  (const char *)NULL), 0);
}

/* ---- 2. stale state ------------------------------------------------------- */

static int set_minus_one(void *arg, const struct pxc_row *old, struct pxc_row *nw)
{
	(void)arg;
	(void)old;
	nw->v[1].i = -1;
	return 1;
}

static void test_stale_state(void **state)
{
	struct env *e = *state;
	char backup[400], out[400], bin[256];
	const char *argv[8];
	struct pxc_table t;
	struct pxc *c;
	int rc;

	h_cs_start(&e->cs, NULL);
	deploy(e, "32", NULL);
	assert_int_equal(pxc_table_def(&t, "kv", "k:int:pk,v:int"), 0);
	c = conn(e);
	OK(c, pxc_create_table(c, &t, 0));
	kv_insert(c, &t, 1, 200, 50, NULL);
	pxc_close(c);

	/* a backup of the proxy state alone, taken as docs/operations.md says
	 * (proxy stopped), then two acknowledged writes */
	h_px_stop(&e->px, SIGTERM);
	snprintf(backup, sizeof(backup), "%s/state-backup", e->px.dir);
	shell("cp -a '%s' '%s'", e->px.state, backup);
	h_px_start(&e->px, NULL);
	c = conn(e);
	{
		uint64_t cnt = 0;
		OK(c, pxc_update(c, &t, pxc_eq_int(pxc_keys(c), &t, "k", 5), set_minus_one, NULL,
				 &cnt));
		assert_int_equal(cnt, 1);
	}
	kv_insert(c, &t, 1000, 1, 1, NULL);
	pxc_close(c);
	h_px_stop(&e->px, SIGTERM);

	/* the state restored without its cloud store: refused, with the reason
	 * and the way out */
	shell("rm -rf '%s' && cp -a '%s' '%s'", e->px.state, backup, e->px.state);
	snprintf(out, sizeof(out), "%s/stale.log", e->px.dir);
	argv[0] = h_bin("lwc-proxy", bin, sizeof(bin));
	argv[1] = "serve";
	argv[2] = "--state";
	argv[3] = e->px.state;
	argv[4] = "--listen";
	argv[5] = e->px.addr;
	argv[6] = NULL;
	rc = run_bounded(out, argv);
	assert_int_equal(rc, 1);
	expect_in_file(out, "proxy state is older than the cloud store (epoch", "stale serve");
	expect_in_file(out, "restore both from the same backup set", "stale serve");
	expect_in_file(out, "--accept-stale-state", "stale serve");
	assert_int_not_equal(access(e->px.sock, F_OK), 0);

	/* the expert's override serves, and says so */
	{
		const char *ov[] = { "--accept-stale-state", NULL };
		Lwc__ProxyResponse *resp = NULL;
		h_px_start(&e->px, ov);
		expect_in_file(e->px.log, "serving anyway (--accept-stale-state)", "override");
		c = conn(e);
		OK(c, pxc_list_tables(c, &resp));
		lwc__proxy_response__free_unpacked(resp, NULL);
		pxc_close(c);
	}
	/* ... and re-synchronised the epochs: the next start is clean */
	h_px_stop(&e->px, SIGTERM);
	h_px_start(&e->px, NULL);
	assert_int_equal(h_count_lines(e->px.log, "serving anyway"), 1);
}

/* ---- 3. connection floods --------------------------------------------------- */

/* Start fn(e) with RLIMIT_NOFILE's soft limit at 64 (`ulimit -n 64`). */
static void with_nofile_64(struct env *e, int proxy, const char *const *extra)
{
	struct rlimit old, lim;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim = old;
	lim.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
	if (proxy)
		h_px_start(&e->px, extra);
	else
		h_cs_start(&e->cs, extra);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

/* 100 connections that never say a word, held until the server has had
 * time to time them out, then closed. */
static void flood(const char *addr)
{
	int fds[100];
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)atoi(strrchr(addr, ':') + 1));
	for (int i = 0; i < 100; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		assert_true(fds[i] >= 0);
		/* the backlog (128) takes them all, accepted or not */
		if (connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) != 0)
			fail_msg("flood connect %d: %s", i, strerror(errno));
	}
	sleep(4);              /* handshake timeout 1 s, back-off at most 1 s */
	for (int i = 0; i < 100; i++)
		close(fds[i]);
}

static void statement_works(struct env *e, int64_t key)
{
	struct pxc *c = conn(e);
	struct pxc_table t;
	struct pxc_result res;

	assert_int_equal(pxc_table_def(&t, "kv", "k:int:pk,v:int"), 0);
	kv_insert(c, &t, key, 1, 7, NULL);
	OK(c, pxc_select(c, &t, pxc_eq_int(pxc_keys(c), &t, "k", key), 0, &res));
	assert_int_equal(res.n, 1);
	pxc_result_free(&res);
	pxc_close(c);
}

static void test_conn_flood(void **state)
{
	struct env *e = *state;
	const char *px_limit[] = { "--workers", "4", "--handshake-timeout", "1", NULL };
	const char *px_nolimit[] = { "--workers", "4", "--handshake-timeout", "1",
				     "--max-connections", "1000", NULL };
	const char *cs_args[] = { "--workers", "2", "--handshake-timeout", "1",
				  "--max-connections", "1000", NULL };
	struct pxc *c;
	struct pxc_table t;

	h_cs_start(&e->cs, NULL);
	deploy(e, "16", NULL);
	c = conn(e);
	assert_int_equal(pxc_table_def(&t, "kv", "k:int:pk,v:int"), 0);
	OK(c, pxc_create_table(c, &t, 0));
	pxc_close(c);
	h_px_stop(&e->px, SIGTERM);

	/* (a) the proxy at ulimit -n 64, its default connection limit */
	with_nofile_64(e, 1, px_limit);
	flood(e->px.addr);
	statement_works(e, 1);
	expect_in_file(e->px.log, "connection limit of", "the limit is logged");
	h_px_stop(&e->px, SIGTERM);

	/* (b) a limit above what the descriptors allow: accept() fails with
	 * EMFILE, and the listener pauses instead of spinning */
	with_nofile_64(e, 1, px_nolimit);
	flood(e->px.addr);
	statement_works(e, 2);
	expect_in_file(e->px.log, "pausing the listener", "the back-off is logged");
	if (file_size(e->px.log) >= (1 << 20))
		fail_msg("proxy log is %ld bytes after the floods", file_size(e->px.log));

	/* (c) the cloud store likewise (out of descriptors) */
	h_cs_stop(&e->cs, SIGTERM);
	with_nofile_64(e, 0, cs_args);
	flood(e->cs.addr);
	statement_works(e, 3);
	expect_in_file(e->cs.log, "pausing the listener", "the store's back-off is logged");
	if (file_size(e->cs.log) >= (1 << 20))
		fail_msg("cloud store log is %ld bytes after the flood", file_size(e->cs.log));
}

/* ---- 4. lwc-proxy check counts ----------------------------------------------- */

/* Remove every version of blocks ids[0..n) from the store (stopped for LMDB). */
static void store_delete(struct env *e, const uint64_t *ids, size_t n)
{
	/* the log store's files hold no record of one block to remove; the
	 * proxy's count does not depend on the backend */
	if (strcmp(h_backend(), "log") == 0)
		skip();
	if (e->cs.db[0]) {
		char ci[1200], sql[512];
		size_t off;
		PGconn *pg;
		PGresult *r;

		snprintf(ci, sizeof(ci), "%s dbname=%s", getenv("LWC_TEST_PG"), e->cs.db);
		pg = PQconnectdb(ci);
		if (PQstatus(pg) != CONNECTION_OK)
			fail_msg("PostgreSQL: %s", PQerrorMessage(pg));
		off = (size_t)snprintf(sql, sizeof(sql), "DELETE FROM lwc_blocks WHERE id IN (");
		for (size_t i = 0; i < n; i++)
			off += (size_t)snprintf(sql + off, sizeof(sql) - off, "%s%llu", i ? "," : "",
						(unsigned long long)ids[i]);
		snprintf(sql + off, sizeof(sql) - off, ")");
		r = PQexec(pg, sql);
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			fail_msg("%s: %s", sql, PQerrorMessage(pg));
		PQclear(r);
		PQfinish(pg);
		return;
	}
	assert_true(WIFEXITED(h_cs_stop(&e->cs, SIGTERM)));
	/* each shard of the store (store/, store/shard-1/, ...) drops its ids */
	for (unsigned j = 0, k = h_cs_shards(&e->cs); j < k; j++) {
		char dir[400];
		MDB_env *env;
		MDB_txn *txn;
		MDB_dbi dbi;
		int rc;

		h_cs_shard_dir(&e->cs, j, dir, sizeof(dir));
		if ((rc = mdb_env_create(&env)) != 0 || (rc = mdb_env_set_maxdbs(env, 4)) != 0 ||
		    (rc = mdb_env_set_mapsize(env, 1ull << 30)) != 0 ||
		    (rc = mdb_env_open(env, dir, 0, 0600)) != 0 ||
		    (rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0 ||
		    (rc = mdb_dbi_open(txn, "blocks", 0, &dbi)) != 0)
			fail_msg("lmdb %s: %s", dir, mdb_strerror(rc));
		for (size_t i = 0; i < n; i++) {
			MDB_cursor *cur;
			uint8_t kb[16];
			MDB_val key = { 16, kb }, val;

			if (ids[i] % k != j)
				continue;
			cry_put_be64(kb, ids[i]);
			cry_put_be64(kb + 8, 0);
			assert_int_equal(mdb_cursor_open(txn, dbi, &cur), 0);
			for (rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE); rc == 0;
			     rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
				if (key.mv_size != 16 || cry_get_be64(key.mv_data) != ids[i])
					break;
				assert_int_equal(mdb_cursor_del(cur, 0), 0);
			}
			mdb_cursor_close(cur);
		}
		assert_int_equal(mdb_txn_commit(txn), 0);
		mdb_env_close(env);
	}
	h_cs_start(&e->cs, NULL);
}

static void test_check_counts(void **state)
{
	struct env *e = *state;
	const uint64_t gone[3] = { 3, 17, 40 };
	char out[400], line[64];
	struct pxc *c;
	struct pxc_table t;
	int rc;

	h_cs_start(&e->cs, NULL);
	deploy(e, "48", NULL);
	c = conn(e);
	assert_int_equal(pxc_table_def(&t, "kv", "k:int:pk,v:int"), 0);
	OK(c, pxc_create_table(c, &t, 0));
	kv_insert(c, &t, 1, 300, 3, NULL);
	pxc_close(c);
	h_px_stop(&e->px, SIGTERM);
	assert_int_equal(h_px_check(&e->px, NULL), 0);

	store_delete(e, gone, 3);
	snprintf(out, sizeof(out), "%s/check-gone.log", e->px.dir);
	rc = h_px_check(&e->px, out);
	assert_int_equal(rc, 1);
	if (h_count_lines(out, "cannot be read") != 3) {
		h_tail(out, 20);
		fail_msg("check reported %d unreadable blocks, 3 were deleted",
			 h_count_lines(out, "cannot be read"));
	}
	for (int i = 0; i < 3; i++) {
		snprintf(line, sizeof(line), "block %llu (version", (unsigned long long)gone[i]);
		if (h_count_lines(out, line) != 1) {
			h_tail(out, 20);
			fail_msg("check does not name block %llu once", (unsigned long long)gone[i]);
		}
	}
	expect_in_file(out, "PROBLEMS: 3 found", "the summary counts them");
}

/* ---- 5. disk full ---------------------------------------------------------------- */

/* A tmpfs of size bytes at path; 0 when this machine cannot mount one. */
static int mount_small(struct env *e, int slot, const char *path, const char *size)
{
	char opts[64];

	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
	snprintf(opts, sizeof(opts), "size=%s,mode=0700", size);
	if (mount("tmpfs", path, "tmpfs", 0, opts) != 0) {
		fprintf(stderr, "note: cannot mount a tmpfs (%s): the disk-full case is skipped\n",
			strerror(errno));
		return 0;
	}
	snprintf(e->mnt[slot], sizeof(e->mnt[slot]), "%s", path);
	return 1;
}

static void grow_tmpfs(const char *path)
{
	if (mount("tmpfs", path, "tmpfs", MS_REMOUNT, "size=256m") != 0)
		fail_msg("remount %s: %s", path, strerror(errno));
}

/* INSERT batches of rows until one fails; returns how many were
 * acknowledged (from first), the failure's message in msg. */
static int fill_until_full(struct env *e, int64_t first, char *msg, size_t msglen)
{
	struct pxc *c = conn(e);
	struct pxc_table t;
	int acked = 0;

	assert_int_equal(pxc_table_def(&t, "kv", "k:int:pk,v:int"), 0);
	for (int i = 0; i < 400; i++) {
		int rc;
		kv_insert(c, &t, first + acked, 40, 9, &rc);
		if (rc != LWC_OK) {
			snprintf(msg, msglen, "%s: %s", lwc_errname(rc), pxc_errmsg(c));
			pxc_close(c);
			return acked;
		}
		acked += 40;
	}
	pxc_close(c);
	fail_msg("400 INSERTs of 40 rows did not fill the disk");
	return acked;
}

static void expect_rows(struct env *e, int64_t first, int n)
{
	struct pxc *c = conn(e);
	struct pxc_table t;
	int64_t *k = calloc(20000, sizeof(int64_t)), *v = calloc(20000, sizeof(int64_t));
	size_t got;

	assert_true(k && v);
	assert_int_equal(pxc_table_def(&t, "kv", "k:int:pk,v:int"), 0);
	got = kv_all(c, &t, k, v, 20000);
	pxc_close(c);
	if (got != (size_t)n)
		fail_msg("%zu rows after the disk filled up; %d were acknowledged", got, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(k[i], first + i);
	free(k);
	free(v);
}

static void test_disk_full(void **state)
{
	struct env *e = *state;
	char mnt[400], msg[600] = "";
	int acked, acked2 = 0;
	struct pxc *c;
	struct pxc_table t;

	/* (a) the cloud store's disk (LMDB or the log store: a directory of
	 * ours; the log store's segments of 1 MiB: the second finds no room) */
	if (strcmp(h_backend(), "lmdb") == 0 || strcmp(h_backend(), "log") == 0) {
		snprintf(mnt, sizeof(mnt), "%s/cs-mnt", e->cs.dir);
		if (!mount_small(e, 0, mnt, "1200k"))
			skip();
		if (strcmp(h_backend(), "lmdb") == 0)
			snprintf(e->cs.store, sizeof(e->cs.store), "lmdb:%s/store", mnt);
		else
			snprintf(e->cs.store, sizeof(e->cs.store), "log:%s/store,segment-mb=1",
				 mnt);
	}
	h_cs_start(&e->cs, NULL);
	/* (b) the proxy state's disk: its state directory (logs stay outside) */
	snprintf(e->px.dir, sizeof(e->px.dir), "%s/px", e->cs.dir);
	if (mkdir(e->px.dir, 0700) != 0 && errno != EEXIST)
		fail_msg("mkdir %s", e->px.dir);
	snprintf(mnt, sizeof(mnt), "%s/px/state", e->cs.dir);
	if (!mount_small(e, 1, mnt, "64m"))
		skip();
	deploy(e, "16", NULL);
	c = conn(e);
	assert_int_equal(pxc_table_def(&t, "kv", "k:int:pk,v:int"), 0);
	OK(c, pxc_create_table(c, &t, 0));
	pxc_close(c);

	acked = 0;
	if (e->mnt[0][0]) {
		acked = fill_until_full(e, 1, msg, sizeof(msg));
		if (strstr(msg, "no space left on device") == NULL)
			fail_msg("the cloud store's disk is full; the client got: %s", msg);
		expect_in_file(e->cs.log, "no space left on device", "the cloud store logs it");
		expect_in_file(e->px.log, "no space left on device", "the proxy logs it");
		grow_tmpfs(e->mnt[0]);
		expect_rows(e, 1, acked);
	}

	/* now the proxy's own disk: shrink its tmpfs to what it holds plus a
	 * little, and fill that */
	{
		char opts[64];
		struct statvfs fs;
		unsigned long long used;

		assert_int_equal(statvfs(e->mnt[1], &fs), 0);
		used = (unsigned long long)(fs.f_blocks - fs.f_bfree) * fs.f_frsize;
		snprintf(opts, sizeof(opts), "size=%llu", used + (256ull << 10));
		if (mount("tmpfs", e->mnt[1], "tmpfs", MS_REMOUNT, opts) != 0)
			fail_msg("remount %s: %s", e->mnt[1], strerror(errno));
	}
	msg[0] = '\0';
	acked2 = fill_until_full(e, 1 + acked, msg, sizeof(msg));
	if (strstr(msg, "no space left on device") == NULL)
		fail_msg("the proxy state's disk is full; the client got: %s", msg);
	expect_in_file(e->px.log, "no space left on device", "the proxy logs it");
	grow_tmpfs(e->mnt[1]);
	/* a proxy whose LMDB commit failed may need a restart: either way,
	 * nothing acknowledged is lost */
	h_px_stop(&e->px, SIGTERM);
	h_px_start(&e->px, NULL);
	expect_rows(e, 1, acked + acked2);
	assert_int_equal(h_px_stop(&e->px, SIGTERM) >= 0, 1);
	assert_int_equal(h_px_check(&e->px, NULL), 0);
}

/* ---- 6. lwc-local up on a port in use ------------------------------------------ */

static void test_port_clash(void **state)
{
	struct env *e = *state;
	char dir[400], out[400], pb[16], ports[450], envbin[300];
	struct sockaddr_in sa;
	int lfd, p, rc;
	const char *argv[] = { "scripts/lwc-local", "up", "--dir", dir, "--port-base", pb, NULL };

	if (strcmp(h_backend(), "lmdb") != 0)
		skip();                  /* the script's checks do not depend on the backend */
	snprintf(dir, sizeof(dir), "%s/local", e->cs.dir);
	snprintf(out, sizeof(out), "%s/local.log", e->cs.dir);
	snprintf(ports, sizeof(ports), "%s/ports", dir);
	p = h_free_port(2);
	snprintf(pb, sizeof(pb), "%d", p);
	/* something else listens on P+1, the proxy's port */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)(p + 1));
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	{
		const char *b = getenv("LWC_BIN");
		char cwd[256];
		assert_non_null(getcwd(cwd, sizeof(cwd)));
		snprintf(envbin, sizeof(envbin), "%s%s%s", b && b[0] == '/' ? "" : cwd,
			 b && b[0] == '/' ? "" : "/", b && b[0] ? b : "bin");
		setenv("LWC_BIN", envbin, 1);
	}
	rc = run_bounded(out, argv);
	close(lfd);
	assert_int_not_equal(rc, 0);
	{
		char want[64];
		snprintf(want, sizeof(want), "port %d is already in use", p + 1);
		expect_in_file(out, want, "lwc-local up");
	}
	assert_int_not_equal(access(ports, F_OK), 0);
	/* nothing was started: the cloud store's port is still free */
	{
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "scripts/free-port --check %d", p);
		assert_int_equal(system(cmd), 0);
	}
}

/* ---- 7. cancelling an UPDATE ---------------------------------------------------- */

static int64_t count_where(lwc_conn *c, const char *sql)
{
	lwc_result *r = lwc_exec(c, sql);
	int64_t n = -1;

	if (lwc_result_status(r) != LWC_RESULT_ROWS)
		fail_msg("%s: %s", sql, lwc_result_error(r));
	if (lwc_result_next(r) == 1)
		n = lwc_value_int(r, 0);
	lwc_result_free(r);
	return n;
}

static void exec_ok(lwc_conn *c, const char *sql)
{
	lwc_result *r = lwc_exec(c, sql);

	if (lwc_result_status(r) == LWC_RESULT_ERROR)
		fail_msg("%s: %s", sql, lwc_result_error(r));
	lwc_result_free(r);
}

static void test_cancel_update(void **state)
{
	struct env *e = *state;
	volatile sig_atomic_t flag = 0;
	char key[400], err[512] = "", sql[4096];
	lwc_conn *c = NULL;
	lwc_result *r;
	size_t off;

	h_cs_start(&e->cs, NULL);
	deploy(e, "16", NULL);
	snprintf(key, sizeof(key), "%s/user-1-alice.key", e->px.dir);
	if (lwc_connect(&c, key, e->px.addr, err, sizeof(err)) != LWC_OK)
		fail_msg("lwc_connect: %s", err);
	exec_ok(c, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
	off = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO t VALUES ");
	for (int i = 1; i <= 50; i++)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off, "%s(%d, 1)", i > 1 ? "," : "", i);
	exec_ok(c, sql);

	/* Ctrl-C while the UPDATE runs: the flag is up at its round trip */
	lwc_set_cancel_flag(c, &flag);
	flag = 1;
	r = lwc_exec(c, "UPDATE t SET v = 2 WHERE v = 1 OR id > 0");
	assert_int_equal(lwc_result_status(r), LWC_RESULT_ERROR);
	if (strstr(lwc_result_error(r), "canceling statement due to user request") == NULL)
		fail_msg("cancelled UPDATE: %s", lwc_result_error(r));
	lwc_result_free(r);
	flag = 0;
	/* nothing of it was written, and the session goes on */
	assert_int_equal(lwc_conn_ok(c), 1);
	assert_int_equal(count_where(c, "SELECT COUNT(*) FROM t WHERE v = 2"), 0);
	assert_int_equal(count_where(c, "SELECT COUNT(*) FROM t WHERE v = 1"), 50);
	/* and without the flag it runs */
	r = lwc_exec(c, "UPDATE t SET v = 2 WHERE id <= 10");
	assert_int_equal(lwc_result_status(r), LWC_RESULT_COMMAND);
	lwc_result_free(r);
	assert_int_equal(count_where(c, "SELECT COUNT(*) FROM t WHERE v = 2"), 10);
	lwc_close(c);
	h_px_stop(&e->px, SIGTERM);
	assert_int_equal(h_px_check(&e->px, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_server_per_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conn_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_clash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_update, setup, teardown),
	};

	if (cry_init() != LWC_OK)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
