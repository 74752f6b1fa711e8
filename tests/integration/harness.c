/*
 * harness.c - see harness.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
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

#include "harness.h"
#include "keyfile.h"

static int db_counter;

const char *h_backend(void)
{
	const char *b = getenv("LWC_TEST_BACKEND");
	return b && b[0] ? b : "lmdb";
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

static int free_port(void)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0)
		die("cannot find a free port");
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
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
	snprintf(cs->dir, sizeof(cs->dir), "/tmp/lwc-test-XXXXXX");
	if (mkdtemp(cs->dir) == NULL)
		die("mkdtemp");
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
	} else {
		snprintf(cs->store, sizeof(cs->store), "lmdb:%s/store", cs->dir);
	}
	snprintf(cs->addr, sizeof(cs->addr), "127.0.0.1:%d", free_port());
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
	if (getenv("LWC_TEST_KEEP") == NULL && strncmp(cs->dir, "/tmp/lwc-test-", 14) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cs->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "harness: could not remove %s\n", cs->dir);
	}
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
