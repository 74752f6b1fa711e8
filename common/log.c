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

void log_msg(enum log_level level, const char *prefix, const char *fmt, ...)
{
	struct timespec ts;
	struct tm tm;
	char when[32];
	va_list ap;

	if ((int)level > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	pthread_mutex_lock(&log_lock);
	fprintf(stderr, "%s.%03ldZ %s %s: ", when, ts.tv_nsec / 1000000, log_program,
		level_name[level]);
	if (prefix)
		fprintf(stderr, "[%s] ", prefix);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	pthread_mutex_unlock(&log_lock);
}
