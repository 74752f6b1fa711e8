/*
 * bench_machine.c - what the run was made on: the CPU and memory, the load
 * averages, and a thread that samples /proc every 2 s to separate the CPU
 * time of the benchmark's own processes (this program, the proxy and cloud
 * store of its deployment, its PostgreSQL cluster and their children) from
 * everything else on the machine, so the report can say how noisy it was.
 */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"

char cpu_model[256], mem_total[64];
long ncpu;

void read_machine(void)
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

void loadavg(char *buf, size_t len)
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
double other_cores_sum, other_cores_max, ours_cores_sum, sampler_secs;

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

/* The processes now running; ours: this one (with_me), those whose command
 * line has one of the needles, and their children. */
static size_t scan_procs(struct procsample *v, size_t max, const char *const *needles,
			 size_t nneedles, int with_me)
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
		v[n].ours = with_me && pid == me;
		for (size_t k = 0; k < nneedles && !v[n].ours; k++)
			v[n].ours = cmdline_has(pid, needles[k]);
		n++;
	}
	closedir(d);
	/* children of ours are ours (PostgreSQL backends), to any depth */
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n && !v[i].ours; j++)
				if (v[j].ours && v[j].pid == v[i].ppid)
					v[i].ours = changed = 1;
	}
	return n;
}

static size_t read_procs(struct procsample *v, size_t max)
{
	const char *needles[] = { work_dir, pg_dir };

	return scan_procs(v, max, needles, 2, 1);
}

/* The first field of a schedstat file: that task's time on a CPU (ns). */
static uint64_t schedstat_ns(const char *path)
{
	unsigned long long ns = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

uint64_t proc_cpu_ns(int pid)
{
	char path[96];
	struct dirent *e;
	uint64_t sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (pid <= 0 || (d = opendir(path)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", pid, e->d_name);
		sum += schedstat_ns(path);
	}
	closedir(d);
	return sum;
}

/* The processes whose command line names needle, and their children (the
 * .ours of the result; *n entries, NULL when out of memory).  Not this
 * process: PostgreSQL may be a child of it. */
static struct procsample *needle_procs(const char *needle, size_t *n)
{
	enum { MAXP = 8192 };
	struct procsample *v = calloc(MAXP, sizeof(*v));

	*n = v ? scan_procs(v, MAXP, &needle, 1, 0) : 0;
	return v;
}

uint64_t procs_cpu_ns(const char *needle)
{
	size_t n;
	struct procsample *v = needle_procs(needle, &n);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i].ours)
			sum += proc_cpu_ns(v[i].pid);
	free(v);
	return sum;
}

double lwc_cpu_secs(void)
{
	size_t n;
	struct procsample *v = needle_procs(work_dir, &n);
	unsigned long long ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	struct rusage ru;
	double self = 0;

	if (v == NULL)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].ours)
			ticks += v[i].ticks;
	free(v);
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		self = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return (hz > 0 ? (double)ticks / (double)hz : 0) + self;
}

/* Bytes the processes of needle (and their children) have had written to
 * storage so far: /proc/PID/io write_bytes less cancelled_write_bytes,
 * summed over those running now. */
uint64_t procs_written(const char *needle)
{
	size_t n;
	struct procsample *v = needle_procs(needle, &n);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		char path[64], line[128];
		unsigned long long w = 0, cw = 0, x;
		FILE *f;

		if (!v[i].ours)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/io", v[i].pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (sscanf(line, "write_bytes: %llu", &x) == 1)
				w = x;
			else if (sscanf(line, "cancelled_write_bytes: %llu", &x) == 1)
				cw = x;
		}
		fclose(f);
		sum += w > cw ? w - cw : 0;
	}
	free(v);
	return sum;
}

/* The sectors written by the device of st_dev, or -1 when not listed. */
static long long dev_sectors(dev_t dev)
{
	long long sectors = -1;
	char line[512];
	FILE *f;

	if ((f = fopen("/proc/diskstats", "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned maj, min;
		unsigned long long x[7];
		char name[64];

		/* major minor name reads merged sectors ms writes merged sectors */
		if (sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu", &maj, &min, name,
			   &x[0], &x[1], &x[2], &x[3], &x[4], &x[5], &x[6]) == 10 &&
		    maj == major(dev) && min == minor(dev)) {
			sectors = (long long)x[6];
			break;
		}
	}
	fclose(f);
	return sectors;
}

int storage_shared(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       dev_sectors(sa.st_dev) >= 0;
}

uint64_t storage_written(const char *dir)
{
	struct stat sb;
	long long sectors;

	sync();
	if (stat(dir, &sb) != 0 || (sectors = dev_sectors(sb.st_dev)) < 0)
		return procs_written(dir);
	return (uint64_t)sectors * 512;
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

void sampler_start(void)
{
	if (pthread_create(&sampler_th, NULL, sampler_main, NULL) == 0)
		sampler_started = 1;
}

void sampler_end(void)
{
	if (!sampler_started)
		return;
	sampler_stop = 1;
	pthread_join(sampler_th, NULL);
	sampler_started = 0;
}
