/*
 * lwc_err.c - text for the LWC error codes (see lwc_err.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/statvfs.h>

#include "lwc_err.h"

static const char *const err_text[] = {
#define LWC_ERR_TEXT(name, val, text) [-(val)] = text,
	LWC_ERRORS(LWC_ERR_TEXT)
#undef LWC_ERR_TEXT
};

static const char *const err_name[] = {
#define LWC_ERR_NAME(name, val, text) [-(val)] = #name,
	LWC_ERRORS(LWC_ERR_NAME)
#undef LWC_ERR_NAME
};

const char *lwc_strerror(int err)
{
	if (err > 0 || err < LWC_ERR_MIN_)
		return "unknown error";
	return err_text[-err];
}

const char *lwc_errname(int err)
{
	if (err > 0 || err < LWC_ERR_MIN_)
		return "LWC_ERR_UNKNOWN";
	return err_name[-err];
}

void lwc_errf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (buf == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

int lwc_disk_full(const char *path, int e, int fallback)
{
	struct statvfs fs;

	if (e == ENOSPC)
		return LWC_ERR_NO_SPACE;
	if ((e == EIO || e == EFBIG) && path && statvfs(path, &fs) == 0 &&
	    (unsigned long long)fs.f_bavail * fs.f_frsize < (1ull << 20))
		return LWC_ERR_NO_SPACE;
	return fallback;
}
