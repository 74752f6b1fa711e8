/*
 * test_userkey.c - user key files and enrollment files (common/userkey.c)
 * in a private mkdtemp directory: round trips with and without a proxy
 * line, the file layout, name rules, no silent overwrite, and every refusal
 * on read (permissions, damage, unknown version, another kind, truncation,
 * bad names) with distinct, secret-free messages.  The memory parsers are
 * tested on the same texts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cry.h"
#include "keyfile.h"
#include "userkey.h"

static char dir[64];

/* ---------------------------------------------------------------- helpers */

static const char *path_of(const char *name)
{
	static char buf[4][512];
	static int turn;
	char *p = buf[turn++ % 4];
	int n = snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);

	assert_true(n > 0 && (size_t)n < sizeof(buf[0]));
	return p;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(8192);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 8191, f);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static void write_raw(const char *path, const char *text, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static void pattern(uint8_t *s, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		s[i] = (uint8_t)(seed + 37 * i);
}

/* A user key with recognisable keys. */
static struct userkey *make_uk(const char *name, const char *proxy, uint8_t seed)
{
	struct userkey *uk = NULL;

	assert_int_equal(userkey_new(&uk), LWC_OK);
	assert_non_null(uk);
	snprintf(uk->name, sizeof(uk->name), "%s", name);
	snprintf(uk->proxy, sizeof(uk->proxy), "%s", proxy);
	pattern(uk->kdbu, sizeof(uk->kdbu), seed);
	pattern(uk->ku, sizeof(uk->ku), (uint8_t)(seed + 100));
	return uk;
}

/* Write uk to a fresh file name; returns the path. */
static const char *write_uk(const char *name, const struct userkey *uk)
{
	const char *p = path_of(name);
	char err[256] = "";

	unlink(p);
	assert_int_equal(userkey_write(p, uk, err, sizeof(err)), LWC_OK);
	return p;
}

/* Pointer to the key line ("KIND-1:...") inside text. */
static char *key_line(char *text, const char *kind)
{
	char pat[64];
	char *l;

	snprintf(pat, sizeof(pat), "\n%s-", kind);
	l = strstr(text, pat);
	assert_non_null(l);
	return l + 1;
}

/* The error text must never carry a key. */
static void no_secret_in(const char *err, const uint8_t *secret, size_t len)
{
	char hex[2 * 64 + 1];

	assert_true(len <= 64);
	sodium_bin2hex(hex, sizeof(hex), secret, len);
	for (size_t i = 0; i + 16 <= 2 * len; i += 2) {
		char run[17];
		memcpy(run, hex + i, 16);    /* any 8-byte run of the key */
		run[16] = '\0';
		assert_null(strstr(err, run));
	}
}

static void no_keys_in(const char *err, const struct userkey *uk)
{
	no_secret_in(err, uk->kdbu, sizeof(uk->kdbu));
	no_secret_in(err, uk->ku, sizeof(uk->ku));
}

/* Expect userkey_read to fail with want and a message; *out stays NULL. */
static void uk_read_fails(const char *path, int want, char *err, size_t errlen)
{
	struct userkey *out = (struct userkey *)&out;   /* not NULL before */

	err[0] = '\0';
	assert_int_equal(userkey_read(path, &out, err, errlen), want);
	assert_null(out);
	assert_true(err[0] != '\0');
	assert_non_null(strstr(err, path));
}

/* Expect enroll_read to fail with want; the outputs stay untouched. */
static void en_read_fails(const char *path, int want, char *err, size_t errlen)
{
	char name[USERKEY_NAME_MAX + 1];
	uint8_t kdbu[32];

	memset(name, 'x', sizeof(name));
	memset(kdbu, 0xee, sizeof(kdbu));
	err[0] = '\0';
	assert_int_equal(enroll_read(path, name, kdbu, err, errlen), want);
	assert_true(err[0] != '\0');
	for (size_t i = 0; i < sizeof(name); i++)
		assert_int_equal(name[i], 'x');
	for (size_t i = 0; i < sizeof(kdbu); i++)
		assert_int_equal(kdbu[i], 0xee);
}

static void assert_uk_equal(const struct userkey *a, const struct userkey *b)
{
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->proxy, b->proxy);
	assert_memory_equal(a->kdbu, b->kdbu, sizeof(a->kdbu));
	assert_memory_equal(a->ku, b->ku, sizeof(a->ku));
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lwc-test-userkey-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	(void)state;
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlink(path_of(e->d_name)) != 0)
			rmdir(path_of(e->d_name));
	}
	closedir(d);
	return rmdir(dir);
}

/* ----------------------------------------------------------------- tests */

static void test_new_free(void **state)
{
	struct userkey *uk = NULL;
	static const uint8_t zero[sizeof(struct userkey)];
	(void)state;

	assert_int_equal(userkey_new(&uk), LWC_OK);
	assert_non_null(uk);
	assert_memory_equal(uk, zero, sizeof(*uk));
	userkey_free(uk);
	userkey_free(NULL);
	assert_int_equal(userkey_new(NULL), LWC_ERR_ARG);
}

static void test_roundtrip_proxy(void **state)
{
	struct userkey *uk = make_uk("alice", "db.example.org:5544", 1), *got = NULL;
	char err[256] = "", *text;
	const char *p;
	(void)state;

	p = write_uk("alice.key", uk);
	assert_int_equal(mode_of(p), 0600);
	assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
	assert_non_null(got);
	assert_uk_equal(got, uk);
	userkey_free(got);

	/* layout: the four comment lines in order, then the key line holding
	 * K_DBU || K_U || name and a 4-byte checksum */
	text = slurp(p, NULL);
	{
		const char *head = "# LWC user key - keep it secret\n# created: ";
		assert_true(strncmp(text, head, strlen(head)) == 0);
	}
	assert_non_null(strstr(text, "Z\n# user: alice\n# proxy: db.example.org:5544\n"
			       USERKEY_KIND "-1:"));
	{
		char *line = key_line(text, USERKEY_KIND) + strlen(USERKEY_KIND) + 3;
		char hex[2 * 64 + 1];

		assert_int_equal(strcspn(line, "\n"), 2 * (32 + 32 + 5 + 4));
		sodium_bin2hex(hex, sizeof(hex), uk->kdbu, 32);
		assert_true(strncmp(line, hex, 64) == 0);
		sodium_bin2hex(hex, sizeof(hex), uk->ku, 32);
		assert_true(strncmp(line + 64, hex, 64) == 0);
		assert_true(strncmp(line + 128, "616c696365", 10) == 0);   /* "alice" */
	}
	/* the memory parser reads the same text */
	{
		struct userkey *m = NULL;
		assert_int_equal(userkey_new(&m), LWC_OK);
		assert_int_equal(userkey_parse(text, strlen(text), m, err, sizeof(err)), LWC_OK);
		assert_uk_equal(m, uk);
		userkey_free(m);
	}
	free(text);
	userkey_free(uk);
}

static void test_roundtrip_no_proxy(void **state)
{
	struct userkey *uk = make_uk("bob", "", 2), *got = NULL;
	char err[256] = "", *text;
	const char *p;
	(void)state;

	p = write_uk("bob.key", uk);
	text = slurp(p, NULL);
	assert_null(strstr(text, "proxy"));
	assert_non_null(strstr(text, "\n# user: bob\n" USERKEY_KIND "-1:"));
	free(text);
	assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
	assert_string_equal(got->proxy, "");
	assert_uk_equal(got, uk);
	userkey_free(got);
	/* NULL error buffer is fine */
	assert_int_equal(userkey_read(p, &got, NULL, 0), LWC_OK);
	userkey_free(got);
	userkey_free(uk);
}

static void test_roundtrip_names(void **state)
{
	const char *names[] = {
		"a", "Z", "0", "_x", "@host", "a.b", "a-b", "a@b.c", "user_01",
		"0123456789012345678901234567890123456789012345678901234567890123", /* 64 */
	};
	char err[256] = "";
	(void)state;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct userkey *uk = make_uk(names[i], "[::1]:5544", (uint8_t)i), *got = NULL;
		char name[USERKEY_NAME_MAX + 1];
		uint8_t kdbu[32];
		const char *p;

		assert_true(userkey_name_valid(names[i]));
		p = write_uk("names.key", uk);
		assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
		assert_uk_equal(got, uk);
		userkey_free(got);

		p = path_of("names.enroll");
		unlink(p);
		assert_int_equal(enroll_write(p, names[i], uk->kdbu, err, sizeof(err)), LWC_OK);
		assert_int_equal(enroll_read(p, name, kdbu, err, sizeof(err)), LWC_OK);
		assert_string_equal(name, names[i]);
		assert_memory_equal(kdbu, uk->kdbu, 32);
		userkey_free(uk);
	}
}

static void test_name_valid(void **state)
{
	const char *bad[] = {
		"", "-a", ".a", "a b", "a/b", "a:b", "a\nb", "a\tb", "é", "a\"b", "a#b",
		"01234567890123456789012345678901234567890123456789012345678901234", /* 65 */
	};
	struct userkey *uk = make_uk("x", "", 3);
	char err[256] = "";
	uint8_t kdbu[32] = { 0 };
	(void)state;

	assert_false(userkey_name_valid(NULL));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *p = path_of("badname.key");

		assert_false(userkey_name_valid(bad[i]));
		snprintf(uk->name, sizeof(uk->name), "%s", bad[i]);
		if (strlen(bad[i]) > USERKEY_NAME_MAX)
			memcpy(uk->name, bad[i], sizeof(uk->name));  /* no terminator */
		err[0] = '\0';
		assert_int_equal(userkey_write(p, uk, err, sizeof(err)), LWC_ERR_ARG);
		assert_non_null(strstr(err, "invalid user name"));
		assert_int_equal(access(p, F_OK), -1);
		assert_int_equal(enroll_write(p, bad[i], kdbu, err, sizeof(err)), LWC_ERR_ARG);
		assert_int_equal(access(p, F_OK), -1);
	}
	/* middle dots and dashes are fine, leading ones are not */
	assert_true(userkey_name_valid("a.-.b"));
	assert_true(userkey_name_valid("a."));
	userkey_free(uk);
}

static void test_bad_proxy_on_write(void **state)
{
	const char *bad[] = { "host\n" USERKEY_KIND "-1:00", "a\rb", "tab\there", " lead", "trail " };
	struct userkey *uk = make_uk("carol", "", 4);
	char err[256] = "";
	const char *p = path_of("proxy.key");
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(uk->proxy, sizeof(uk->proxy), "%s", bad[i]);
		assert_int_equal(userkey_write(p, uk, err, sizeof(err)), LWC_ERR_ARG);
		assert_int_equal(access(p, F_OK), -1);
	}
	/* not terminated within the field */
	memset(uk->proxy, 'h', sizeof(uk->proxy));
	assert_int_equal(userkey_write(p, uk, err, sizeof(err)), LWC_ERR_ARG);
	/* the longest one that fits */
	uk->proxy[sizeof(uk->proxy) - 1] = '\0';
	assert_int_equal(userkey_write(p, uk, err, sizeof(err)), LWC_OK);
	{
		struct userkey *got = NULL;
		assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
		assert_uk_equal(got, uk);
		userkey_free(got);
	}
	userkey_free(uk);
}

static void test_proxy_comment_read(void **state)
{
	struct userkey *uk = make_uk("dave", "", 5), *got = NULL;
	char err[256], *text, buf[8192];
	size_t len;
	const char *p;
	(void)state;

	p = write_uk("pc.key", uk);
	text = slurp(p, &len);

	/* a proxy line added by hand, with extra spaces and CRLF, anywhere
	 * among the comments before the key line */
	snprintf(buf, sizeof(buf), "#proxy:   10.0.0.1:5544  \r\n%s", text);
	write_raw(p, buf, strlen(buf), 0600);
	assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
	assert_string_equal(got->proxy, "10.0.0.1:5544");
	userkey_free(got);

	/* a comment after the key line is not read */
	snprintf(buf, sizeof(buf), "%s# proxy: late:1\n", text);
	write_raw(p, buf, strlen(buf), 0600);
	assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
	assert_string_equal(got->proxy, "");
	userkey_free(got);

	/* two proxy lines are ambiguous */
	snprintf(buf, sizeof(buf), "# proxy: a:1\n# proxy: b:2\n%s", text);
	write_raw(p, buf, strlen(buf), 0600);
	uk_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "more than one"));

	/* a control character or an overlong address */
	snprintf(buf, sizeof(buf), "# proxy: a\tb:1\n%s", text);
	write_raw(p, buf, strlen(buf), 0600);
	uk_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "proxy"));
	{
		char longp[USERKEY_PROXY_MAX + 1];
		memset(longp, 'h', USERKEY_PROXY_MAX);
		longp[USERKEY_PROXY_MAX] = '\0';
		snprintf(buf, sizeof(buf), "# proxy: %s\n%s", longp, text);
		write_raw(p, buf, strlen(buf), 0600);
		uk_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
		/* one shorter fits */
		snprintf(buf, sizeof(buf), "# proxy: %s\n%s", longp + 1, text);
		write_raw(p, buf, strlen(buf), 0600);
		assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
		assert_string_equal(got->proxy, longp + 1);
		userkey_free(got);
	}
	/* an empty proxy line is no proxy */
	snprintf(buf, sizeof(buf), "# proxy:\n%s", text);
	write_raw(p, buf, strlen(buf), 0600);
	assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
	assert_string_equal(got->proxy, "");
	userkey_free(got);
	free(text);
	userkey_free(uk);
}

static void test_perm(void **state)
{
	const mode_t bad[] = { 0644, 0640, 0604, 0660, 0606, 0610, 0601, 0740, 0777 };
	struct userkey *uk = make_uk("erin", "px:1", 6);
	char err[256];
	const char *p;
	(void)state;

	p = write_uk("perm.key", uk);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(chmod(p, bad[i]), 0);
		uk_read_fails(p, LWC_ERR_PERM, err, sizeof(err));
		assert_non_null(strstr(err, "group or others"));
		assert_non_null(strstr(err, "chmod 600"));
		if (bad[i] & 044)
			assert_non_null(strstr(err, "is readable by group or others"));
		no_keys_in(err, uk);
	}
	assert_int_equal(chmod(p, 0400), 0);
	{
		struct userkey *got = NULL;
		assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
		userkey_free(got);
	}
	/* enrollment files too */
	p = path_of("perm.enroll");
	unlink(p);
	assert_int_equal(enroll_write(p, "erin", uk->kdbu, err, sizeof(err)), LWC_OK);
	assert_int_equal(mode_of(p), 0600);
	assert_int_equal(chmod(p, 0644), 0);
	en_read_fails(p, LWC_ERR_PERM, err, sizeof(err));
	assert_non_null(strstr(err, "chmod 600"));
	userkey_free(uk);
}

static char other_hex(char c)
{
	return c == '0' ? '1' : '0';
}

static void test_checksum(void **state)
{
	struct userkey *uk = make_uk("frank", "", 7);
	char err[256], *text, *line;
	size_t len, hex_len;
	const char *p;
	(void)state;

	p = write_uk("sum.key", uk);
	text = slurp(p, &len);
	line = key_line(text, USERKEY_KIND) + strlen(USERKEY_KIND) + 3;
	hex_len = strcspn(line, "\n");
	assert_int_equal(hex_len, 2 * (64 + 5 + 4));
	/* every single-digit change is caught: keys, name and checksum */
	for (size_t i = 0; i < hex_len; i++) {
		char was = line[i];
		line[i] = other_hex(was);
		write_raw(p, text, len, 0600);
		uk_read_fails(p, LWC_ERR_CHECKSUM, err, sizeof(err));
		assert_non_null(strstr(err, "checksum mismatch"));
		no_keys_in(err, uk);
		line[i] = was;
	}
	/* the memory parser says the same, without a path */
	line[0] = other_hex(line[0]);
	{
		struct userkey *m = make_uk("untouched", "", 9), *copy = make_uk("untouched", "", 9);
		assert_int_equal(userkey_parse(text, len, m, err, sizeof(err)), LWC_ERR_CHECKSUM);
		assert_non_null(strstr(err, "checksum mismatch"));
		assert_null(strstr(err, dir));
		assert_uk_equal(m, copy);                /* left untouched */
		userkey_free(m);
		userkey_free(copy);
	}
	free(text);
	userkey_free(uk);
}

static void test_version(void **state)
{
	struct userkey *uk = make_uk("grace", "", 8);
	char err[256], *text, *line;
	size_t len;
	const char *p;
	(void)state;

	p = write_uk("ver.key", uk);
	text = slurp(p, &len);
	line = key_line(text, USERKEY_KIND);
	line[strlen(USERKEY_KIND) + 1] = '2';          /* LWC-USER-KEY-2:... */
	write_raw(p, text, len, 0600);
	uk_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "unknown key file version 2 "));
	no_keys_in(err, uk);
	free(text);

	/* enrollment files too */
	p = path_of("ver.enroll");
	unlink(p);
	assert_int_equal(enroll_write(p, "grace", uk->kdbu, err, sizeof(err)), LWC_OK);
	text = slurp(p, &len);
	line = key_line(text, ENROLL_KIND);
	line[strlen(ENROLL_KIND) + 1] = '7';
	write_raw(p, text, len, 0600);
	en_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "unknown key file version 7 "));
	free(text);
	userkey_free(uk);
}

static void test_other_kinds(void **state)
{
	struct userkey *uk = make_uk("heidi", "", 9), *got = NULL;
	char err[256], name[USERKEY_NAME_MAX + 1];
	uint8_t kdbu[32];
	const char *cs = path_of("cs.key"), *en = path_of("kind.enroll"), *up;
	(void)state;

	/* a K_CS key file given as a user key */
	unlink(cs);
	assert_int_equal(keyfile_write(cs, "LWC-CS-KEY", "K_CS", uk->kdbu, 32, err, sizeof(err)),
			 LWC_OK);
	uk_read_fails(cs, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "not a " USERKEY_KIND " key file"));
	assert_non_null(strstr(err, "LWC-CS-KEY"));
	no_keys_in(err, uk);
	en_read_fails(cs, LWC_ERR_FORMAT, err, sizeof(err));

	/* an enrollment file is not a user key, and the other way round */
	unlink(en);
	assert_int_equal(enroll_write(en, "heidi", uk->kdbu, err, sizeof(err)), LWC_OK);
	uk_read_fails(en, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "not a " USERKEY_KIND " key file"));
	assert_non_null(strstr(err, ENROLL_KIND));
	no_keys_in(err, uk);
	up = write_uk("kind.key", uk);
	en_read_fails(up, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "not a " ENROLL_KIND " key file"));
	assert_non_null(strstr(err, USERKEY_KIND));
	no_keys_in(err, uk);
	/* nor is a user key a K_CS key */
	{
		uint8_t k[32];
		assert_int_equal(keyfile_read(up, "LWC-CS-KEY", k, sizeof(k), err, sizeof(err)),
				 LWC_ERR_FORMAT);
	}
	/* both still read as what they are */
	assert_int_equal(enroll_read(en, name, kdbu, err, sizeof(err)), LWC_OK);
	assert_int_equal(userkey_read(up, &got, err, sizeof(err)), LWC_OK);
	userkey_free(got);

	/* not a key file at all */
	write_raw(cs, "", 0, 0600);
	uk_read_fails(cs, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "not a " USERKEY_KIND " key file"));
	write_raw(cs, "hello world\n", 12, 0600);
	uk_read_fails(cs, LWC_ERR_FORMAT, err, sizeof(err));
	write_raw(cs, "# user: heidi\n", 14, 0600);
	uk_read_fails(cs, LWC_ERR_FORMAT, err, sizeof(err));
	/* a NUL byte */
	write_raw(cs, "# a\0b\n", 6, 0600);
	uk_read_fails(cs, LWC_ERR_FORMAT, err, sizeof(err));
	/* too large */
	{
		char *big = malloc(KEYFILE_MAX_BYTES + 2);
		assert_non_null(big);
		memset(big, '#', KEYFILE_MAX_BYTES + 1);
		write_raw(cs, big, KEYFILE_MAX_BYTES + 1, 0600);
		uk_read_fails(cs, LWC_ERR_FORMAT, err, sizeof(err));
		assert_non_null(strstr(err, "too large"));
		free(big);
	}
	/* missing, not regular */
	uk_read_fails(path_of("nope.key"), LWC_ERR_NOT_FOUND, err, sizeof(err));
	en_read_fails(path_of("nope.key"), LWC_ERR_NOT_FOUND, err, sizeof(err));
	assert_int_equal(mkdir(path_of("adir"), 0700), 0);
	uk_read_fails(path_of("adir"), LWC_ERR_IO, err, sizeof(err));
	userkey_free(uk);
}

static void test_truncated(void **state)
{
	struct userkey *uk = make_uk("ivan", "px:1", 10);
	char err[256], *text, *line;
	size_t len, keep;
	const char *p;
	(void)state;

	p = write_uk("trunc.key", uk);
	text = slurp(p, &len);
	line = key_line(text, USERKEY_KIND);
	keep = (size_t)(line - text) + strlen(USERKEY_KIND) + 3;  /* up to the ':' */
	/* cut anywhere in the hex: damaged (odd length, or a wrong checksum) */
	for (size_t cut = keep; cut < len - 1; cut++) {
		write_raw(p, text, cut, 0600);
		uk_read_fails(p, LWC_ERR_CHECKSUM, err, sizeof(err));
		no_keys_in(err, uk);
	}
	/* without the final newline the file is whole */
	write_raw(p, text, len - 1, 0600);
	{
		struct userkey *got = NULL;
		assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
		assert_uk_equal(got, uk);
		userkey_free(got);
	}
	/* cut inside the comments */
	write_raw(p, text, (size_t)(line - text), 0600);
	uk_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	free(text);
	userkey_free(uk);
}

/* A key file of the right kind and a valid checksum, but a secret that is
 * not a user key / enrollment: too short for a name, or a bad name. */
static void test_bad_secret_layout(void **state)
{
	uint8_t s[KEYFILE_SECRET_MAX];
	char err[256], name[USERKEY_NAME_MAX + 1];
	uint8_t kdbu[32];
	struct userkey *got = NULL;
	const char *p = path_of("layout.key");
	(void)state;

	pattern(s, sizeof(s), 11);
	/* 64 bytes: K_DBU and K_U, no name */
	unlink(p);
	assert_int_equal(keyfile_write(p, USERKEY_KIND, "x", s, 64, err, sizeof(err)), LWC_OK);
	uk_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "no user name"));
	/* a name with a bad character, a leading dot */
	memcpy(s + 64, "ab/c", 4);
	unlink(p);
	assert_int_equal(keyfile_write(p, USERKEY_KIND, "x", s, 68, err, sizeof(err)), LWC_OK);
	uk_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "invalid user name"));
	memcpy(s + 64, ".abc", 4);
	unlink(p);
	assert_int_equal(keyfile_write(p, USERKEY_KIND, "x", s, 68, err, sizeof(err)), LWC_OK);
	uk_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	/* a NUL inside the name */
	memcpy(s + 64, "ab\0c", 4);
	unlink(p);
	assert_int_equal(keyfile_write(p, USERKEY_KIND, "x", s, 68, err, sizeof(err)), LWC_OK);
	uk_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	/* a name of 65 bytes: the secret is longer than a user key can be */
	memset(s + 64, 'n', 65);
	unlink(p);
	assert_int_equal(keyfile_write(p, USERKEY_KIND, "x", s, 64 + 65, err, sizeof(err)), LWC_OK);
	uk_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "longer than 64"));
	/* ... and 64 is fine */
	unlink(p);
	assert_int_equal(keyfile_write(p, USERKEY_KIND, "x", s, 64 + 64, err, sizeof(err)), LWC_OK);
	assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
	assert_int_equal(strlen(got->name), 64);
	userkey_free(got);

	/* enrollments: 32 bytes (no name), 32 + 65 (too long), a bad name */
	p = path_of("layout.enroll");
	unlink(p);
	assert_int_equal(keyfile_write(p, ENROLL_KIND, "x", s, 32, err, sizeof(err)), LWC_OK);
	en_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "no user name"));
	memset(s + 32, 'n', 65);
	unlink(p);
	assert_int_equal(keyfile_write(p, ENROLL_KIND, "x", s, 32 + 65, err, sizeof(err)), LWC_OK);
	en_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "longer than 64"));
	memcpy(s + 32, "-x", 2);
	unlink(p);
	assert_int_equal(keyfile_write(p, ENROLL_KIND, "x", s, 34, err, sizeof(err)), LWC_OK);
	en_read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "invalid user name"));
	(void)name;
	(void)kdbu;
}

static void test_enroll(void **state)
{
	uint8_t kdbu[32], got_k[32];
	char name[USERKEY_NAME_MAX + 1], err[256] = "", *text;
	struct userkey *uk = make_uk("judy", "", 12);
	const char *p = path_of("judy.enroll");
	(void)state;

	pattern(kdbu, sizeof(kdbu), 12);
	unlink(p);
	assert_int_equal(enroll_write(p, "judy", kdbu, err, sizeof(err)), LWC_OK);
	assert_int_equal(mode_of(p), 0600);
	assert_int_equal(enroll_read(p, name, got_k, err, sizeof(err)), LWC_OK);
	assert_string_equal(name, "judy");
	assert_memory_equal(got_k, kdbu, 32);

	/* layout: the comments, and a secret of K_DBU || name only, never K_U */
	text = slurp(p, NULL);
	{
		const char *head = "# LWC enrollment for user judy - import with: "
				   "lwc-proxy user add --enroll FILE\n# created: ";
		assert_true(strncmp(text, head, strlen(head)) == 0);
	}
	assert_non_null(strstr(text, "Z\n# user: judy\n" ENROLL_KIND "-1:"));
	assert_int_equal(strcspn(key_line(text, ENROLL_KIND) + strlen(ENROLL_KIND) + 3, "\n"),
			 2 * (32 + 4 + 4));
	/* the memory parser */
	memset(name, 0, sizeof(name));
	assert_int_equal(enroll_parse(text, strlen(text), name, got_k, err, sizeof(err)), LWC_OK);
	assert_string_equal(name, "judy");
	/* a damaged enrollment */
	{
		char *line = key_line(text, ENROLL_KIND) + strlen(ENROLL_KIND) + 3;
		line[5] = other_hex(line[5]);
		write_raw(p, text, strlen(text), 0600);
		en_read_fails(p, LWC_ERR_CHECKSUM, err, sizeof(err));
		assert_non_null(strstr(err, "checksum mismatch"));
	}
	free(text);
	userkey_free(uk);
}

static void test_no_overwrite(void **state)
{
	struct userkey *a = make_uk("kim", "a:1", 13), *b = make_uk("lee", "b:2", 14), *got = NULL;
	char err[256] = "", *before, *after;
	size_t lb, la;
	const char *p;
	(void)state;

	p = write_uk("exist.key", a);
	before = slurp(p, &lb);
	assert_int_equal(userkey_write(p, b, err, sizeof(err)), LWC_ERR_EXISTS);
	assert_non_null(strstr(err, "refusing to overwrite"));
	no_keys_in(err, b);
	assert_int_equal(enroll_write(p, "lee", b->kdbu, err, sizeof(err)), LWC_ERR_EXISTS);
	after = slurp(p, &la);
	assert_int_equal(la, lb);
	assert_memory_equal(after, before, lb);
	assert_int_equal(userkey_read(p, &got, err, sizeof(err)), LWC_OK);
	assert_uk_equal(got, a);
	userkey_free(got);
	free(before);
	free(after);

	/* any existing file is left alone */
	p = path_of("other.txt");
	write_raw(p, "precious\n", 9, 0644);
	assert_int_equal(userkey_write(p, b, err, sizeof(err)), LWC_ERR_EXISTS);
	assert_int_equal(mode_of(p), 0644);
	/* a missing directory */
	assert_int_equal(userkey_write(path_of("no/such/dir.key"), b, err, sizeof(err)),
			 LWC_ERR_IO);
	/* a permissive umask does not widen the mode */
	{
		mode_t old = umask(0);
		p = write_uk("umask.key", b);
		umask(old);
		assert_int_equal(mode_of(p), 0600);
	}
	userkey_free(a);
	userkey_free(b);
}

static void test_messages_distinct(void **state)
{
	struct userkey *uk = make_uk("mallory", "", 15);
	char perm[256], sum[256], ver[256], kind[256], notkey[256], *text;
	size_t len;
	const char *p;
	(void)state;

	p = write_uk("msg.key", uk);
	assert_int_equal(chmod(p, 0644), 0);
	uk_read_fails(p, LWC_ERR_PERM, perm, sizeof(perm));
	assert_int_equal(chmod(p, 0600), 0);

	text = slurp(p, &len);
	{
		char *line = key_line(text, USERKEY_KIND) + strlen(USERKEY_KIND) + 3;
		line[0] = other_hex(line[0]);
		write_raw(p, text, len, 0600);
		uk_read_fails(p, LWC_ERR_CHECKSUM, sum, sizeof(sum));
		line[0] = other_hex(line[0]);
	}
	key_line(text, USERKEY_KIND)[strlen(USERKEY_KIND) + 1] = '2';
	write_raw(p, text, len, 0600);
	uk_read_fails(p, LWC_ERR_FORMAT, ver, sizeof(ver));
	free(text);

	p = path_of("msg.enroll");
	unlink(p);
	assert_int_equal(enroll_write(p, "mallory", uk->kdbu, kind, sizeof(kind)), LWC_OK);
	uk_read_fails(p, LWC_ERR_FORMAT, kind, sizeof(kind));
	write_raw(p, "hello\n", 6, 0600);
	uk_read_fails(p, LWC_ERR_FORMAT, notkey, sizeof(notkey));

	/* each says what is wrong, and only that */
	assert_non_null(strstr(perm, "is readable by group or others"));
	assert_non_null(strstr(perm, "chmod 600"));
	assert_non_null(strstr(sum, "checksum mismatch"));
	assert_non_null(strstr(ver, "unknown key file version 2"));
	assert_non_null(strstr(kind, "not a " USERKEY_KIND " key file (it holds a "
			       ENROLL_KIND " key)"));
	assert_non_null(strstr(notkey, "not a " USERKEY_KIND " key file"));
	assert_null(strstr(perm, "checksum"));
	assert_null(strstr(perm, "version"));
	assert_null(strstr(sum, "readable"));
	assert_null(strstr(sum, "version"));
	assert_null(strstr(ver, "checksum"));
	assert_null(strstr(ver, "readable"));
	assert_null(strstr(ver, "not a"));
	assert_null(strstr(notkey, "version"));
	assert_null(strstr(notkey, "checksum"));
	userkey_free(uk);
}

/* The memory parsers on their own: no file, arguments checked, and a key
 * line without ':' never echoed (it would carry the secret). */
static void test_parse_memory(void **state)
{
	struct userkey *uk = NULL;
	char err[256], name[USERKEY_NAME_MAX + 1], buf[512];
	uint8_t kdbu[32], s[80];
	(void)state;

	assert_int_equal(userkey_new(&uk), LWC_OK);
	assert_int_equal(userkey_parse(NULL, 0, uk, err, sizeof(err)), LWC_ERR_FORMAT);
	assert_int_equal(userkey_parse(NULL, 1, uk, err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(userkey_parse("", 0, NULL, err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(enroll_parse("", 0, NULL, kdbu, err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(enroll_parse("", 0, name, NULL, err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(enroll_parse("", 0, name, kdbu, err, sizeof(err)), LWC_ERR_FORMAT);
	/* the length is honoured: no NUL terminator needed, text after len unseen */
	{
		const char *t = "# only a comment\nLWC-USER-KEY-1:00";
		assert_int_equal(userkey_parse(t, 17, uk, err, sizeof(err)), LWC_ERR_FORMAT);
		assert_non_null(strstr(err, "no key line"));
	}
	/* "LWC-USER-KEY-1" and hex with the ':' missing */
	pattern(s, sizeof(s), 16);
	memcpy(buf, USERKEY_KIND "-1", 14);
	sodium_bin2hex(buf + 14, sizeof(buf) - 14, s, 64);
	assert_int_equal(userkey_parse(buf, strlen(buf), uk, err, sizeof(err)), LWC_ERR_FORMAT);
	no_secret_in(err, s, 64);
	/* the same with a ':' far away */
	strcat(buf, ":00");
	assert_int_equal(userkey_parse(buf, strlen(buf), uk, err, sizeof(err)), LWC_ERR_FORMAT);
	no_secret_in(err, s, 64);
	/* a version that is not a number */
	snprintf(buf, sizeof(buf), USERKEY_KIND "-x:00");
	assert_int_equal(userkey_parse(buf, strlen(buf), uk, err, sizeof(err)), LWC_ERR_FORMAT);
	assert_null(strstr(err, "version"));
	userkey_free(uk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_free),
		cmocka_unit_test(test_roundtrip_proxy),
		cmocka_unit_test(test_roundtrip_no_proxy),
		cmocka_unit_test(test_roundtrip_names),
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_bad_proxy_on_write),
		cmocka_unit_test(test_proxy_comment_read),
		cmocka_unit_test(test_perm),
		cmocka_unit_test(test_checksum),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_other_kinds),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_secret_layout),
		cmocka_unit_test(test_enroll),
		cmocka_unit_test(test_no_overwrite),
		cmocka_unit_test(test_messages_distinct),
		cmocka_unit_test(test_parse_memory),
	};

	if (sodium_init() < 0 || cry_init() != LWC_OK) {
		fprintf(stderr, "libsodium failed to initialise\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
