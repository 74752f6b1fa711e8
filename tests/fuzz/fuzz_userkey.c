/*
 * fuzz_userkey.c - libFuzzer target: the user key and enrollment parsers
 * (userkey_parse, enroll_parse in common/userkey.c, over keyfile_parse).
 *
 * Each input is parsed from memory as a user key and as an enrollment.
 * Oracles beyond the sanitizers: only the parse errors are possible,
 * messages are terminated and non-empty, a failed parse leaves the output
 * untouched, and what parses is valid (name rules, one-line proxy) and is
 * what the writer would store: written to a 0600 file in a private
 * temporary directory and read back, it is the same.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "userkey.h"
#include "../testdir.h"

static char dir[256], path[300];
static struct userkey *uk, *before, *again;

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz_userkey: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                  \
			abort();                                             \
		}                                                            \
	} while (0)

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
	userkey_free(uk);
	userkey_free(before);
	userkey_free(again);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	testdir_make(dir, sizeof(dir), "fuzz-userkey");
	snprintf(path, sizeof(path), "%s/key", dir);
	if (userkey_new(&uk) != LWC_OK || userkey_new(&before) != LWC_OK ||
	    userkey_new(&again) != LWC_OK)
		abort();
	atexit(cleanup);
	return 0;
}

static int parse_error(int rc)
{
	return rc == LWC_ERR_FORMAT || rc == LWC_ERR_CHECKSUM;
}

static void message_ok(const char *err, size_t errlen)
{
	CHECK(memchr(err, '\0', errlen) != NULL && err[0] != '\0');
}

static void as_userkey(const char *text, size_t size)
{
	char err[256];
	int rc;

	memset(uk, 0xee, sizeof(*uk));
	memcpy(before, uk, sizeof(*uk));
	memset(err, 'x', sizeof(err));
	rc = userkey_parse(text, size, uk, err, sizeof(err));
	if (rc != LWC_OK) {
		CHECK(parse_error(rc));
		message_ok(err, sizeof(err));
		CHECK(memcmp(uk, before, sizeof(*uk)) == 0);
		return;
	}
	CHECK(userkey_name_valid(uk->name));
	CHECK(memchr(uk->proxy, '\0', sizeof(uk->proxy)) != NULL);
	for (const char *p = uk->proxy; *p; p++)
		CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
	/* what parsed is what the writer stores */
	{
		struct userkey *got = NULL;

		unlink(path);
		CHECK(userkey_write(path, uk, err, sizeof(err)) == LWC_OK);
		CHECK(userkey_read(path, &got, err, sizeof(err)) == LWC_OK);
		CHECK(strcmp(got->name, uk->name) == 0);
		CHECK(strcmp(got->proxy, uk->proxy) == 0);
		CHECK(memcmp(got->kdbu, uk->kdbu, sizeof(uk->kdbu)) == 0);
		CHECK(memcmp(got->ku, uk->ku, sizeof(uk->ku)) == 0);
		userkey_free(got);
	}
}

static void as_enrollment(const char *text, size_t size)
{
	char name[USERKEY_NAME_MAX + 1], name2[USERKEY_NAME_MAX + 1], err[256];
	uint8_t kdbu[32], kdbu2[32];
	int rc;

	memset(name, 'x', sizeof(name));
	memset(kdbu, 0xee, sizeof(kdbu));
	memset(err, 'x', sizeof(err));
	rc = enroll_parse(text, size, name, kdbu, err, sizeof(err));
	if (rc != LWC_OK) {
		CHECK(parse_error(rc));
		message_ok(err, sizeof(err));
		for (size_t i = 0; i < sizeof(name); i++)
			CHECK(name[i] == 'x');
		for (size_t i = 0; i < sizeof(kdbu); i++)
			CHECK(kdbu[i] == 0xee);
		return;
	}
	CHECK(userkey_name_valid(name));
	unlink(path);
	CHECK(enroll_write(path, name, kdbu, err, sizeof(err)) == LWC_OK);
	CHECK(enroll_read(path, name2, kdbu2, err, sizeof(err)) == LWC_OK);
	CHECK(strcmp(name, name2) == 0);
	CHECK(memcmp(kdbu, kdbu2, sizeof(kdbu)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy, so reading past size is caught by ASan */
	char *text = malloc(size ? size : 1);

	CHECK(text != NULL);
	if (size)
		memcpy(text, data, size);
	as_userkey(text, size);
	as_enrollment(text, size);
	free(text);
	return 0;
}
