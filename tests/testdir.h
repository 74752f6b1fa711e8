/*
 * testdir.h - private directories for the unit tests and fuzz targets.
 *
 * testdir_empty(dir) removes what dir holds, directories included (a store's
 * shard-N/ or a proxy state's subdirectories); testdir_rm(dir) removes dir
 * too.  testdir_make(dir, len, tag) makes a fresh directory under
 * $LWC_FUZZ_TMP, else /dev/shm when writable, else /tmp, and aborts when it
 * cannot (a fuzz target's set-up has no one to report to).
 */
#ifndef LWC_TESTDIR_H
#define LWC_TESTDIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline void testdir_rm(const char *dir);

static inline void testdir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[1024];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		struct stat sb;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= sizeof(p))
			continue;
		if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
			testdir_rm(p);
		else
			unlink(p);
	}
	closedir(d);
}

static inline void testdir_rm(const char *dir)
{
	testdir_empty(dir);
	rmdir(dir);
}

static inline void testdir_make(char *dir, size_t len, const char *tag)
{
	const char *base = getenv("LWC_FUZZ_TMP");

	if (base == NULL || base[0] == '\0')
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	if ((size_t)snprintf(dir, len, "%s/lwc-%s-XXXXXX", base, tag) >= len ||
	    mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		abort();
	}
}

#endif
