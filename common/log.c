/*
 * log.c - see log.h.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "log.h"

static const char *log_program = "lwc";
static volatile int log_level = LOG_INFO;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *const level_name[] = {
	[LOG_ERROR] = "error", [LOG_WARN] = "warning",
	[LOG_INFO] = "info", [LOG_DEBUG] = "debug"
};

void log_init(const char *program, enum log_level level)
{
	log_program = program;
	log_level = (int)level;
}

void log_set_level(enum log_level level)
{
	log_level = (int)level;
}

enum log_level log_get_level(void)
{
	return (enum log_level)log_level;
}

int log_parse_level(const char *s)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };

	for (int i = 0; i < 4; i++)
		if (strcasecmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* One line; log_lock held.  suppressed > 0 appends the count. */
static void log_line(enum log_level level, const char *prefix, unsigned long long suppressed,
		     const char *fmt, va_list ap)
{
	struct timespec ts;
	struct tm tm;
	char when[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ldZ %s %s: ", when, ts.tv_nsec / 1000000, log_program,
		level_name[level]);
	if (prefix)
		fprintf(stderr, "[%s] ", prefix);
	vfprintf(stderr, fmt, ap);
	if (suppressed)
		fprintf(stderr, " (%llu similar line%s suppressed before this one)", suppressed,
			suppressed == 1 ? "" : "s");
	fputc('\n', stderr);
	fflush(stderr);
}

void log_msg(enum log_level level, const char *prefix, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > log_level)
		return;
	pthread_mutex_lock(&log_lock);
	va_start(ap, fmt);
	log_line(level, prefix, 0, fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&log_lock);
}

void log_limited(struct log_limit *ll, enum log_level level, const char *prefix,
		 const char *fmt, ...)
{
	struct timespec now;
	unsigned long long suppressed;
	va_list ap;

	if ((int)level > log_level)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&log_lock);
	if (now.tv_sec - ll->window >= LOG_LIMIT_SECONDS) {
		ll->window = now.tv_sec;
		ll->logged = 0;
	}
	if (ll->logged >= LOG_LIMIT_BURST) {
		ll->suppressed++;
		pthread_mutex_unlock(&log_lock);
		return;
	}
	ll->logged++;
	suppressed = ll->suppressed;
	ll->suppressed = 0;
	va_start(ap, fmt);
	log_line(level, prefix, suppressed, fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&log_lock);
}
