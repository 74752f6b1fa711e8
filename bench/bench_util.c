/*
 * bench_util.c - lwc-bench's tools: messages and progress on stderr, table
 * lines on stdout, memory that never fails (die), growing strings, a seeded
 * generator, statistics of latencies, and running a command or finding a
 * free port.  Nothing here knows about LWC or PostgreSQL.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* ---- messages ---------------------------------------------------------------- */

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t bulk_fill(uint64_t theta)
{
	uint64_t keep = theta / 6 ? theta / 6 : 1;

	return theta > keep ? theta - keep : 1;
}

double time_loop(int (*fn)(void *), void *arg, double min_s)
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

void die(const char *fmt, ...)
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

/* Progress on stderr: rewritten in place on a terminal, otherwise one line
 * at most every 10 s. */
static int progress_tty = -1;
static double progress_last;
static int progress_open;

void progress_clear(void)
{
	if (progress_open) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		progress_open = 0;
	}
}

void progress(const char *fmt, ...)
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

void say(const char *fmt, ...)
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

void out(const char *fmt, ...)
{
	va_list ap;

	progress_clear();
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* ---- memory and strings ---------------------------------------------------------- */

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		die("out of memory (%zu bytes)", n);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		die("out of memory (%zu bytes)", n);
	return p;
}

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

void sb_printf(struct sb *b, const char *fmt, ...)
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

void sb_put(struct sb *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void sb_u64(struct sb *b, uint64_t v)
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

void sb_reset(struct sb *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

const char *size_name(uint64_t k, char *buf, size_t len)
{
	if (k >= 1000000 && k % 1000000 == 0)
		snprintf(buf, len, "%llum", (unsigned long long)(k / 1000000));
	else if (k >= 1000 && k % 1000 == 0)
		snprintf(buf, len, "%lluk", (unsigned long long)(k / 1000));
	else
		snprintf(buf, len, "%llu", (unsigned long long)k);
	return buf;
}

/* ---- xoshiro256** seeded with splitmix64 ------------------------------------------ */

uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
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

uint64_t rng_below(struct rng *r, uint64_t bound)
{
	uint64_t lim = -bound % bound, x;

	do
		x = rng_next(r);
	while (x < lim);
	return x % bound;
}

/* ---- statistics ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct stats stats_of(double *v, unsigned n)
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

int run_cmd(char *const argv[], char *const extra_env[], char *capture, size_t caplen)
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

/* P such that 127.0.0.1 ports P .. P+n-1 are free now: scripts/free-port,
 * the one port picker of the project's tests and scripts. */
int free_ports(int n)
{
	char script[PATH_MAX + 32], count[16], out[64];
	char *argv[] = { (char *)"python3", script, count, NULL };
	int p;

	snprintf(script, sizeof(script), "%s/scripts/free-port", O.root);
	snprintf(count, sizeof(count), "%d", n);
	if (run_cmd(argv, NULL, out, sizeof(out)) != 0 || (p = atoi(out)) <= 0)
		die("scripts/free-port found no free loopback ports");
	return p;
}
