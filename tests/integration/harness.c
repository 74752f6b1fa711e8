/*
 * harness.c - see harness.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
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

#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <sodium.h>

#include "../../cloudstore/rc_parse.h"
#include "../../proxy/engine_int.h"
#include "admin_client.h"
#include "harness.h"
#include "keyfile.h"
#include "userkey.h"

static int db_counter;

const char *h_backend(void)
{
	const char *b = getenv("LWC_TEST_BACKEND");
	return b && b[0] ? b : "lmdb";
}

void h_cs_shard_dir(const struct h_cs *cs, unsigned j, char *buf, size_t len)
{
	if (j == 0)
		snprintf(buf, len, "%s/store", cs->dir);
	else
		snprintf(buf, len, "%s/store/shard-%u", cs->dir, j);
}

unsigned h_cs_shards(const struct h_cs *cs)
{
	unsigned k = 1;
	char dir[400];
	struct stat sb;

	for (;; k++) {
		h_cs_shard_dir(cs, k, dir, sizeof(dir));
		if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
			return k;
	}
}

const char *h_bin(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("LWC_BIN");
	snprintf(buf, len, "%s/%s", dir && dir[0] ? dir : "bin", name);
	return buf;
}

static void die(const char *what)
{
	fprintf(stderr, "harness: %s\n", what);
	abort();
}

/* Bind a socket to 127.0.0.1:port (0: the kernel's pick; reuse: with
 * SO_REUSEADDR, as the servers do) and close it: the port bound, 0 when
 * the bind failed. */
static int loopback_bind(int port, int reuse)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, bound = 0;

	if (fd < 0)
		die("socket");
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if ((!reuse || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0) &&
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		bound = ntohs(sa.sin_port);
	close(fd);
	return bound;
}

/* A free loopback port P with P .. P+n-1 free, by scripts/free-port's rule
 * (the picker of the shell scripts, here in the test process itself):
 * the kernel's pick of an ephemeral port, its followers checked, 500 tries.
 * Free now, not reserved: callers start their server at once. */
int h_free_port(int n)
{
	for (int tries = 0; tries < 500; tries++) {
		int p = loopback_bind(0, 0), i = 1;

		if (p == 0 || p + n - 1 > 65535)
			continue;
		while (i < n && loopback_bind(p + i, 1) == p + i)
			i++;
		if (i == n)
			return p;
	}
	die("no free loopback port found");
	return 0;
}

const char *h_test_tmp(void)
{
	const char *t = getenv("LWC_TEST_TMP");

	return t && t[0] ? t : "/tmp";
}

void h_make_test_dir(char *dir, size_t len)
{
	if ((size_t)snprintf(dir, len, "%s/lwc-test-XXXXXX", h_test_tmp()) >= len ||
	    mkdtemp(dir) == NULL)
		die("mkdtemp (LWC_TEST_TMP)");
}

int h_is_test_dir(const char *dir)
{
	char want[300];
	int n = snprintf(want, sizeof(want), "%s/lwc-test-", h_test_tmp());

	return n > 0 && (size_t)n < sizeof(want) && strncmp(dir, want, (size_t)n) == 0 &&
	       strstr(dir, "..") == NULL;
}

int h_run(const char *const *argv, const char *out_file)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (out_file) {
			int fd = open(out_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
		}
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void pg_exec(const char *sql)
{
	const char *ci = getenv("LWC_TEST_PG");
	PGconn *c;
	PGresult *r;

	if (ci == NULL)
		die("LWC_TEST_PG is not set (run through tests/run.sh)");
	c = PQconnectdb(ci);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "harness: %s", PQerrorMessage(c));
		die("cannot reach the test PostgreSQL");
	}
	r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		fprintf(stderr, "harness: %s: %s", sql, PQerrorMessage(c));
		die("PostgreSQL statement failed");
	}
	PQclear(r);
	PQfinish(c);
}

void h_cs_setup(struct h_cs *cs)
{
	char bin[256], err[256];
	const char *argv[4];

	memset(cs, 0, sizeof(*cs));
	h_make_test_dir(cs->dir, sizeof(cs->dir));
	snprintf(cs->key_file, sizeof(cs->key_file), "%s/cs.key", cs->dir);
	snprintf(cs->trace, sizeof(cs->trace), "%s/cloudstore.trace", cs->dir);
	snprintf(cs->log, sizeof(cs->log), "%s/cloudstore.log", cs->dir);
	argv[0] = h_bin("lwc-cloudstore", bin, sizeof(bin));
	argv[1] = "keygen";
	argv[2] = cs->key_file;
	argv[3] = NULL;
	if (h_run(argv, "/dev/null") != 0)
		die("lwc-cloudstore keygen failed");
	if (keyfile_read(cs->key_file, "LWC-CS-KEY", cs->key, 32, err, sizeof(err)) != 0)
		die(err);
	if (strcmp(h_backend(), "pg") == 0) {
		char sql[128];
		snprintf(cs->db, sizeof(cs->db), "lwc_t%d_%d", (int)getpid(), ++db_counter);
		snprintf(sql, sizeof(sql), "CREATE DATABASE %s", cs->db);
		pg_exec(sql);
		snprintf(cs->store, sizeof(cs->store), "postgres:%s dbname=%s",
			 getenv("LWC_TEST_PG"), cs->db);
	} else if (strcmp(h_backend(), "redis") == 0) {
		const char *seeds = getenv("LWC_TEST_REDIS");
		if (seeds == NULL || seeds[0] == '\0')
			die("LWC_TEST_REDIS is not set (run through tests/run.sh)");
		snprintf(cs->prefix, sizeof(cs->prefix), "lwc_t%d_%d", (int)getpid(),
			 ++db_counter);
		snprintf(cs->store, sizeof(cs->store), "redis-cluster:%s,prefix=%s", seeds,
			 cs->prefix);
	} else if (strcmp(h_backend(), "log") == 0) {
		/* small segments: the suites' WRITEs fill several and compact them */
		snprintf(cs->store, sizeof(cs->store), "log:%s/store,segment-mb=2", cs->dir);
	} else {
		snprintf(cs->store, sizeof(cs->store), "lmdb:%s/store", cs->dir);
	}
	snprintf(cs->addr, sizeof(cs->addr), "127.0.0.1:%d", h_free_port(1));
}

static int can_connect(const char *addr)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)atoi(strrchr(addr, ':') + 1));
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

void h_cs_start(struct h_cs *cs, const char *const *extra)
{
	char bin[256];
	const char *argv[32];
	int n = 0, st;

	argv[n++] = h_bin("lwc-cloudstore", bin, sizeof(bin));
	argv[n++] = "--listen";
	argv[n++] = cs->addr;
	argv[n++] = "--store";
	argv[n++] = cs->store;
	argv[n++] = "--key-file";
	argv[n++] = cs->key_file;
	argv[n++] = "--trace";
	argv[n++] = cs->trace;
	for (int i = 0; extra && extra[i] && n < 30; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	cs->pid = fork();
	if (cs->pid < 0)
		die("fork");
	if (cs->pid == 0) {
		int fd = open(cs->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	for (int i = 0; i < 1000; i++) {
		if (waitpid(cs->pid, &st, WNOHANG) == cs->pid) {
			cs->pid = 0;
			fprintf(stderr, "harness: lwc-cloudstore exited at start; see %s\n", cs->log);
			die("cloudstore did not start");
		}
		if (can_connect(cs->addr))
			return;
		usleep(10000);
	}
	die("cloudstore did not start listening in 10 s");
}

int h_cs_stop(struct h_cs *cs, int sig)
{
	int st = -1;

	if (cs->pid <= 0)
		return -1;
	kill(cs->pid, sig);
	while (waitpid(cs->pid, &st, 0) < 0 && errno == EINTR)
		;
	cs->pid = 0;
	return st;
}

void h_cs_teardown(struct h_cs *cs)
{
	char cmd[512];

	if (cs->pid > 0)
		h_cs_stop(cs, SIGKILL);
	if (cs->db[0]) {
		char sql[128];
		snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", cs->db);
		pg_exec(sql);
	}
	if (cs->prefix[0] && getenv("LWC_TEST_KEEP") == NULL && h_redis_drop(cs->prefix) < 0)
		fprintf(stderr, "harness: could not delete the keys of %s\n", cs->prefix);
	if (getenv("LWC_TEST_KEEP") == NULL && h_is_test_dir(cs->dir)) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cs->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "harness: could not remove %s\n", cs->dir);
	}
}

/* Counts (del: deletes) the keys of prefix on one node; -1 on failure. */
static long redis_keys_node(const char *host, int port, const char *prefix, int del)
{
	struct timeval tv = { 10, 0 };
	redisContext *c = redisConnectWithTimeout(host, port, tv);
	char cursor[32] = "0", match[96];
	long n = 0;

	if (c == NULL || c->err) {
		redisFree(c);
		return -1;
	}
	snprintf(match, sizeof(match), "%s:*", prefix);
	do {
		redisReply *r = redisCommand(c, "SCAN %s MATCH %s COUNT 1000", cursor, match);
		if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_STRING ||
		    r->element[1]->type != REDIS_REPLY_ARRAY) {
			if (r)
				freeReplyObject(r);
			redisFree(c);
			return -1;
		}
		snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
		if (!del) {
			n += (long)r->element[1]->elements;
			freeReplyObject(r);
			continue;
		}
		for (size_t i = 0; i < r->element[1]->elements; i++) {
			const redisReply *k = r->element[1]->element[i];
			redisAppendCommand(c, "UNLINK %b", k->str, k->len);
		}
		for (size_t i = 0; i < r->element[1]->elements; i++) {
			void *d;
			if (redisGetReply(c, &d) != REDIS_OK) {
				freeReplyObject(r);
				redisFree(c);
				return -1;
			}
			freeReplyObject(d);
			n++;
		}
		freeReplyObject(r);
	} while (strcmp(cursor, "0") != 0);
	redisFree(c);
	return n;
}

long h_redis_count(const char *host, int port, const char *prefix)
{
	return redis_keys_node(host, port, prefix, 0);
}

long h_redis_drop(const char *prefix)
{
	const char *seeds = getenv("LWC_TEST_REDIS");
	struct rc_spec spec;
	struct rc_range *rg = malloc(RC_SLOTS * sizeof(*rg));
	size_t n = 0;
	long total = 0;
	char err[256];

	if (seeds == NULL || rg == NULL || rc_spec_parse(seeds, &spec, err, sizeof(err)) != 0) {
		free(rg);
		return -1;
	}
	/* the masters, from the first seed that answers CLUSTER SLOTS */
	for (size_t i = 0; i < spec.nseeds && n == 0; i++) {
		struct timeval tv = { 10, 0 };
		redisContext *c = redisConnectWithTimeout(spec.seed[i].host, spec.seed[i].port, tv);
		redisReply *r;
		if (c == NULL || c->err) {
			redisFree(c);
			continue;
		}
		r = redisCommand(c, "CLUSTER SLOTS");
		if (r == NULL || rc_parse_slots(r, rg, RC_SLOTS, &n) != 0)
			n = 0;
		for (size_t k = 0; k < n; k++)
			if (rg[k].host[0] == '\0')
				snprintf(rg[k].host, sizeof(rg[k].host), "%s", spec.seed[i].host);
		if (r)
			freeReplyObject(r);
		redisFree(c);
	}
	for (size_t k = 0; k < n; k++) {
		int seen = 0;
		long d;
		for (size_t j = 0; j < k; j++)
			seen |= rg[j].port == rg[k].port && strcmp(rg[j].host, rg[k].host) == 0;
		if (seen)
			continue;
		if ((d = redis_keys_node(rg[k].host, rg[k].port, prefix, 1)) < 0) {
			total = -1;
			break;
		}
		total += d;
	}
	free(rg);
	return n == 0 ? -1 : total;
}

long h_trace_mark(const struct h_cs *cs)
{
	struct stat sb;

	return stat(cs->trace, &sb) == 0 ? (long)sb.st_size : 0;
}

/* The ids of a trace line's "ids=1,2,3", after the n already in ids (up
 * to H_MAX_IDS in all); returns the new count. */
static size_t trace_ids(const char *line, uint64_t *ids, size_t n)
{
	const char *p = strstr(line, " ids=");

	if (p == NULL)
		return n;
	p += 5;
	while (*p && *p != ' ' && *p != '-' && n < H_MAX_IDS) {
		char *end;
		ids[n++] = strtoull(p, &end, 10);
		p = end;
		if (*p == ',')
			p++;
	}
	return n;
}

/* The time of a trace line into a->t, in order (a->op: R or W). */
static void trace_time(const char *line, char op, struct h_access *a)
{
	int hh, mm;
	double ss, t;

	if (a->nops >= H_MAX_OPS || sscanf(line, "%*d-%*d-%*dT%d:%d:%lfZ", &hh, &mm, &ss) != 3)
		return;
	t = hh * 3600.0 + mm * 60.0 + ss;
	while (a->nops > 0 && t < a->t[a->nops - 1] - 43200.0)   /* past midnight */
		t += 86400.0;
	a->op[a->nops] = op;
	a->t[a->nops++] = t;
}

static int trace_read_since(const struct h_cs *cs, long mark, struct h_access *a)
{
	FILE *f = fopen(cs->trace, "r");
	char *line = NULL;
	size_t cap = 0;

	memset(a, 0, sizeof(*a));
	if (f == NULL)
		return -1;
	if (fseek(f, mark, SEEK_SET) != 0) {
		fclose(f);
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		if (strstr(line, " status=ok") == NULL && a->bad[0] == '\0')
			snprintf(a->bad, sizeof(a->bad), "%s", line);
		if (strstr(line, " op=READ ")) {
			a->nread++;
			a->nr = trace_ids(line, a->r, a->nr);
			trace_time(line, 'R', a);
		} else if (strstr(line, " op=WRITE ")) {
			a->nwrite++;
			a->nw = trace_ids(line, a->w, a->nw);
			trace_time(line, 'W', a);
		} else if (strstr(line, " op=HELLO ") == NULL) {
			a->other++;
		}
	}
	free(line);
	fclose(f);
	return 0;
}

void h_px_idle(struct h_px *px)
{
	if (px->pid <= 0)
		return;
	for (int waited_ms = 0; waited_ms < 5000; waited_ms += 2) {
		uint64_t locked = h_px_status_u64(px, "blocks_locked");

		if (locked == 0 || locked == UINT64_MAX)
			break;
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	}
}

long h_trace_mark_idle(struct h_px *px)
{
	h_px_idle(px);
	return h_trace_mark(px->cs);
}

int h_trace_since(const struct h_cs *cs, long mark, struct h_access *a)
{
	for (int waited_ms = 0;; waited_ms += 2) {
		if (trace_read_since(cs, mark, a) != 0)
			return -1;
		if (a->nw >= a->nr || waited_ms >= 3000)
			return 0;
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	}
}

static int batches_at(size_t gamma, size_t max, uint32_t rtt_us)
{
	size_t b = access_batch_size(gamma, max, rtt_us);

	return (int)((gamma + b - 1) / b);
}

int h_batches_ok(int pairs, size_t gamma, size_t max)
{
	/* the proxy cuts finer over a fast link than over a slow one (or a
	 * busy store: a sanitizer build, a loaded machine), and its average
	 * of the round trip may be on either side of the limit */
	return pairs == batches_at(gamma, max, 0) ||
	       pairs == batches_at(gamma, max, PX_PIPE_RTT_US + 1);
}

int h_count_lines(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[1 << 16];
	int n = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

void h_tail(const char *path, int lines)
{
	FILE *f = fopen(path, "r");
	char **ring, buf[4096];
	int n = 0;

	if (f == NULL || lines <= 0) {
		if (f)
			fclose(f);
		return;
	}
	ring = calloc((size_t)lines, sizeof(*ring));
	while (ring && fgets(buf, sizeof(buf), f)) {
		free(ring[n % lines]);
		ring[n % lines] = strdup(buf);
		n++;
	}
	fclose(f);
	if (ring == NULL)
		return;
	fprintf(stderr, "---- last lines of %s\n", path);
	for (int i = n > lines ? n - lines : 0; i < n; i++)
		fprintf(stderr, "  | %s", ring[i % lines] ? ring[i % lines] : "\n");
	for (int i = 0; i < lines; i++)
		free(ring[i]);
	free(ring);
}

void h_px_init(struct h_px *px, struct h_cs *cs, const char *const *extra)
{
	char bin[256];
	const char *argv[40];
	int n = 0, rc;

	memset(px, 0, sizeof(*px));
	px->cs = cs;
	snprintf(px->dir, sizeof(px->dir), "%s/px", cs->dir);
	if (mkdir(px->dir, 0700) != 0 && errno != EEXIST)
		die("mkdir px");
	snprintf(px->state, sizeof(px->state), "%s/state", px->dir);
	snprintf(px->log, sizeof(px->log), "%s/proxy.log", px->dir);
	snprintf(px->sock, sizeof(px->sock), "%s/admin.sock", px->state);
	randombytes_buf(px->ku, sizeof(px->ku));
	argv[n++] = h_bin("lwc-proxy", bin, sizeof(bin));
	argv[n++] = "init";
	argv[n++] = "--state";
	argv[n++] = px->state;
	argv[n++] = "--cloudstore";
	argv[n++] = cs->addr;
	argv[n++] = "--cs-key-file";
	argv[n++] = cs->key_file;
	for (int i = 0; extra && extra[i] && n < 38; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	{
		char out[400];
		snprintf(out, sizeof(out), "%s/init.log", px->dir);
		rc = h_run(argv, out);
		if (rc != 0) {
			fprintf(stderr, "harness: lwc-proxy init exited %d\n", rc);
			h_tail(out, 20);
			die("lwc-proxy init failed");
		}
	}
}

void h_px_start(struct h_px *px, const char *const *extra)
{
	char bin[256];
	const char *argv[40];
	int n = 0, st;

	snprintf(px->addr, sizeof(px->addr), "127.0.0.1:%d", h_free_port(1));
	argv[n++] = h_bin("lwc-proxy", bin, sizeof(bin));
	argv[n++] = "serve";
	argv[n++] = "--state";
	argv[n++] = px->state;
	argv[n++] = "--listen";
	argv[n++] = px->addr;
	for (int i = 0; extra && extra[i] && n < 38; i++)
		argv[n++] = extra[i];
	/* LWC_TEST_PROXY_ARGS: serve options for every proxy of a run (words
	 * split at spaces), e.g. tests/run.sh's pass with a small index run */
	{
		static char words[512];
		const char *env = getenv("LWC_TEST_PROXY_ARGS");

		if (env && strlen(env) < sizeof(words)) {
			strcpy(words, env);
			for (char *w = strtok(words, " "); w && n < 38; w = strtok(NULL, " "))
				argv[n++] = w;
		}
	}
	argv[n] = NULL;
	px->pid = fork();
	if (px->pid < 0)
		die("fork");
	if (px->pid == 0) {
		int fd = open(px->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	for (int i = 0; i < 2000; i++) {
		if (waitpid(px->pid, &st, WNOHANG) == px->pid) {
			px->pid = 0;
			fprintf(stderr, "harness: lwc-proxy exited at start (status %d)\n", st);
			h_tail(px->log, 20);
			die("proxy did not start");
		}
		if (can_connect(px->addr))
			return;
		usleep(5000);
	}
	h_tail(px->log, 20);
	die("proxy did not start listening in 10 s");
}

int h_px_stop(struct h_px *px, int sig)
{
	int st = -1;

	if (px->pid <= 0)
		return -1;
	kill(px->pid, sig);
	while (waitpid(px->pid, &st, 0) < 0 && errno == EINTR)
		;
	px->pid = 0;
	return st;
}

void h_px_teardown(struct h_px *px)
{
	if (px->pid > 0)
		h_px_stop(px, SIGKILL);
}

int h_px_cli(struct h_px *px, const char *out_file, ...)
{
	char bin[256];
	const char *argv[40], *a;
	va_list ap;
	int n = 0;

	argv[n++] = h_bin("lwc-proxy", bin, sizeof(bin));
	va_start(ap, out_file);
	while ((a = va_arg(ap, const char *)) != NULL && n < 39)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	if (out_file == NULL) {
		char tmp[400];
		int rc;
		snprintf(tmp, sizeof(tmp), "%s/cli.log", px->dir);
		rc = h_run(argv, tmp);
		if (rc != 0) {
			fprintf(stderr, "harness: lwc-proxy %s %s exited %d\n", argv[1],
				n > 2 ? argv[2] : "", rc);
			h_tail(tmp, 10);
		}
		return rc;
	}
	return h_run(argv, out_file);
}

uint64_t h_px_status_u64(struct h_px *px, const char *key)
{
	/* straight on the admin socket: no process a call, for the loops that
	 * poll it (h_px_idle) */
	uint64_t v;
	char err[700];

	return admin_status_u64(px->sock, key, &v, err, sizeof(err)) == LWC_OK ? v : UINT64_MAX;
}

int h_px_user_add(struct h_px *px, const char *name, uint8_t kdbu[32])
{
	struct userkey *uk = NULL;
	char path[400], err[256];

	if (userkey_new(&uk) != LWC_OK)
		die("userkey_new");
	snprintf(uk->name, sizeof(uk->name), "%s", name);
	snprintf(uk->proxy, sizeof(uk->proxy), "%s", px->addr);
	randombytes_buf(uk->kdbu, 32);
	memcpy(uk->ku, px->ku, 32);
	memcpy(kdbu, uk->kdbu, 32);
	snprintf(path, sizeof(path), "%s/user-%d-%s.key", px->dir, ++px->nkeys, name);
	if (userkey_write(path, uk, err, sizeof(err)) != LWC_OK) {
		userkey_free(uk);
		die(err);
	}
	userkey_free(uk);
	return h_px_cli(px, NULL, "user", "add", "--state", px->state, "--name", name,
			"--key-file", path, (const char *)NULL);
}

int h_px_user_revoke(struct h_px *px, const char *name)
{
	return h_px_cli(px, NULL, "user", "revoke", "--state", px->state, name,
			(const char *)NULL);
}

int h_px_check(struct h_px *px, const char *out_file)
{
	char tmp[400];

	if (out_file == NULL) {
		snprintf(tmp, sizeof(tmp), "%s/check.log", px->dir);
		out_file = tmp;
	}
	return h_px_cli(px, out_file, "check", "--state", px->state, (const char *)NULL);
}
