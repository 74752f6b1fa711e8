/*
 * log.h - leveled logging for the LWC binaries (never used by libraries).
 *
 * One line per event on stderr: time, program, level, optional prefix (a
 * connection id), message.  Secrets are never passed to these macros.
 */
#ifndef LWC_LOG_H
#define LWC_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_init(const char *program, enum log_level level);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* Parses "error", "warn", "info", "debug"; returns -1 when unknown. */
int log_parse_level(const char *s);
void log_msg(enum log_level level, const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Rate-limited lines: whatever an outsider can trigger over and over (a
 * refused connection, a failed accept, a handshake that times out) goes
 * through one of these, so nobody who can reach a port can fill the disk.
 * At most LOG_LIMIT_BURST lines per LOG_LIMIT_SECONDS per limiter; the next
 * line after a quiet spell says how many were suppressed.  Thread-safe.
 */
#define LOG_LIMIT_BURST   5
#define LOG_LIMIT_SECONDS 10
struct log_limit {
	long window;                  /* start of the current window (s)      */
	unsigned logged;              /* lines logged in this window          */
	unsigned long long suppressed;/* lines dropped since the last one     */
};
#define LOG_LIMIT_INIT { 0, 0, 0 }
void log_limited(struct log_limit *ll, enum log_level level, const char *prefix,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define log_error(...) log_msg(LOG_ERROR, NULL, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, NULL, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, NULL, __VA_ARGS__)
#define log_debug(...) \
	do { if (log_get_level() >= LOG_DEBUG) log_msg(LOG_DEBUG, NULL, __VA_ARGS__); } while (0)

/* Per-connection variants: prefix is e.g. "conn 12". */
#define plog_error(p, ...) log_msg(LOG_ERROR, (p), __VA_ARGS__)
#define plog_warn(p, ...)  log_msg(LOG_WARN, (p), __VA_ARGS__)
#define plog_info(p, ...)  log_msg(LOG_INFO, (p), __VA_ARGS__)
#define plog_debug(p, ...) \
	do { if (log_get_level() >= LOG_DEBUG) log_msg(LOG_DEBUG, (p), __VA_ARGS__); } while (0)

#endif
