/*
 * fuzz_keyfile.c - libFuzzer target: the key file parser (common/keyfile.c).
 *
 * Each input becomes the content of a 0600 file in a private temporary
 * directory, read back as a 32-byte LWC-CS-KEY and as a 16-byte key of
 * another kind.  Oracles beyond the sanitizers: only the parse errors are
 * possible (never a permission or not-found error), messages are
 * terminated, a failed read leaves the output untouched, and a key that
 * parses is the one keyfile_write would store (write it out, read it back).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "keyfile.h"
#include "../testdir.h"

static char dir[256], path[300], path2[300];

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz_keyfile: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                  \
			abort();                                             \
		}                                                            \
	} while (0)

static void cleanup(void)
{
	unlink(path);
	unlink(path2);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	testdir_make(dir, sizeof(dir), "fuzz-key");
	snprintf(path, sizeof(path), "%s/key", dir);
	snprintf(path2, sizeof(path2), "%s/key2", dir);
	atexit(cleanup);
	return 0;
}

static void read_as(const char *kind, size_t len)
{
	uint8_t secret[KEYFILE_SECRET_MAX], again[KEYFILE_SECRET_MAX];
	char err[256];
	int rc;

	memset(secret, 0xee, sizeof(secret));
	memset(err, 'x', sizeof(err));
	rc = keyfile_read(path, kind, secret, len, err, sizeof(err));
	if (rc != LWC_OK) {
		CHECK(rc == LWC_ERR_FORMAT || rc == LWC_ERR_CHECKSUM);
		CHECK(memchr(err, '\0', sizeof(err)) != NULL && err[0] != '\0');
		for (size_t i = 0; i < len; i++)
			CHECK(secret[i] == 0xee);
		return;
	}
	/* what parsed is a key keyfile_write would store the same way */
	unlink(path2);
	CHECK(keyfile_write(path2, kind, "fuzz", secret, len, err, sizeof(err)) == LWC_OK);
	CHECK(keyfile_read(path2, kind, again, len, err, sizeof(err)) == LWC_OK);
	CHECK(memcmp(secret, again, len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;

	CHECK(fd >= 0);
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);
		CHECK(n > 0);
		done += (size_t)n;
	}
	CHECK(fchmod(fd, 0600) == 0);
	close(fd);
	read_as("LWC-CS-KEY", 32);
	read_as("LWC-OPS-KEY", 16);
	return 0;
}
