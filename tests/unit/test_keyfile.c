/*
 * test_keyfile.c - secret key files (common/keyfile.c) in a private
 * mkdtemp directory: round trip, mode 0600, no silent overwrite, and every
 * refusal on read (permissions, damage, another kind, another version,
 * truncation, absence) with distinct, secret-free messages; the several-
 * comment writer, the variable-length reader and the memory parser.
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

#define KIND "LWC-CS-KEY"
#define DESC "test key: not a real secret"

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

/* A fresh key file holding secret; returns its path. */
static const char *make_key(const char *name, const uint8_t *secret, size_t len)
{
	const char *p = path_of(name);
	char err[256] = "";

	unlink(p);
	assert_int_equal(keyfile_write(p, KIND, DESC, secret, len, err, sizeof(err)), LWC_OK);
	return p;
}

/* Pointer to the key line ("LWC-CS-KEY-1:...") inside text. */
static char *key_line(char *text)
{
	char *l = strstr(text, "\n" KIND "-");

	assert_non_null(l);
	return l + 1;
}

static void secret_pattern(uint8_t *s, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		s[i] = (uint8_t)(seed + 37 * i);
}

/* The error text must never carry the key. */
static void no_secret_in(const char *err, const uint8_t *secret, size_t len)
{
	char hex[2 * KEYFILE_SECRET_MAX + 1];

	sodium_bin2hex(hex, sizeof(hex), secret, len);
	hex[16] = '\0';                 /* any 8-byte run of the key is enough */
	assert_null(strstr(err, hex));
}

/* Expect keyfile_read to fail with want; the output buffer stays untouched. */
static void read_fails(const char *path, int want, char *err, size_t errlen)
{
	uint8_t out[32];

	memset(out, 0xee, sizeof(out));
	err[0] = '\0';
	assert_int_equal(keyfile_read(path, KIND, out, sizeof(out), err, errlen), want);
	assert_true(err[0] != '\0');
	for (size_t i = 0; i < sizeof(out); i++)
		assert_int_equal(out[i], 0xee);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lwc-test-keyfile-XXXXXX");
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

static void test_roundtrip(void **state)
{
	uint8_t secret[KEYFILE_SECRET_MAX], out[KEYFILE_SECRET_MAX];
	const size_t lens[] = { 1, 16, 32, 64, KEYFILE_SECRET_MAX };
	char err[256] = "";
	(void)state;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		const char *p;
		char *text, *line;

		secret_pattern(secret, lens[i], (uint8_t)i);
		p = make_key("rt.key", secret, lens[i]);
		memset(out, 0, sizeof(out));
		assert_int_equal(keyfile_read(p, KIND, out, lens[i], err, sizeof(err)), LWC_OK);
		assert_memory_equal(out, secret, lens[i]);
		/* layout: comments, then KIND-1:hex(secret || 4-byte checksum) */
		text = slurp(p, NULL);
		assert_true(strncmp(text, "# " DESC "\n# created: ", 2 + strlen(DESC) + 12) == 0);
		line = key_line(text);
		assert_true(strncmp(line, KIND "-1:", strlen(KIND) + 3) == 0);
		line += strlen(KIND) + 3;
		assert_int_equal(strcspn(line, "\n"), 2 * (lens[i] + 4));
		free(text);
		/* a shorter read of the same file is a damaged line, not a prefix */
		if (lens[i] > 1)
			assert_int_equal(keyfile_read(p, KIND, out, lens[i] - 1, err, sizeof(err)),
					 LWC_ERR_CHECKSUM);
	}
	/* argument checks */
	assert_int_equal(keyfile_read(path_of("rt.key"), KIND, out, 0, err, sizeof(err)),
			 LWC_ERR_ARG);
	assert_int_equal(keyfile_read(path_of("rt.key"), KIND, out, KEYFILE_SECRET_MAX + 1,
				      err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(keyfile_write(path_of("zero.key"), KIND, DESC, secret, 0,
				       err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(keyfile_write(path_of("huge.key"), KIND, DESC, secret,
				       KEYFILE_SECRET_MAX + 1, err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(access(path_of("zero.key"), F_OK), -1);
	assert_int_equal(access(path_of("huge.key"), F_OK), -1);
	/* no error message needed: a NULL buffer is fine */
	assert_int_equal(keyfile_read(path_of("rt.key"), KIND, out, KEYFILE_SECRET_MAX,
				      NULL, 0), LWC_OK);
}

static void test_mode_0600(void **state)
{
	uint8_t secret[32];
	mode_t old;
	const char *p;
	(void)state;

	secret_pattern(secret, sizeof(secret), 1);
	p = make_key("mode.key", secret, sizeof(secret));
	assert_int_equal(mode_of(p), 0600);
	/* a permissive umask does not widen it */
	old = umask(0);
	p = make_key("mode0.key", secret, sizeof(secret));
	umask(old);
	assert_int_equal(mode_of(p), 0600);
	/* an owner-only read-only file is fine */
	assert_int_equal(chmod(p, 0400), 0);
	{
		uint8_t out[32];
		char err[256];
		assert_int_equal(keyfile_read(p, KIND, out, sizeof(out), err, sizeof(err)), LWC_OK);
		assert_memory_equal(out, secret, sizeof(out));
	}
	assert_int_equal(chmod(p, 0600), 0);
}

static void test_no_overwrite(void **state)
{
	uint8_t a[32], b[32], out[32];
	char err[256] = "", *before, *after;
	size_t lb, la;
	const char *p;
	(void)state;

	secret_pattern(a, sizeof(a), 10);
	secret_pattern(b, sizeof(b), 20);
	p = make_key("exist.key", a, sizeof(a));
	before = slurp(p, &lb);
	assert_int_equal(keyfile_write(p, KIND, "another", b, sizeof(b), err, sizeof(err)),
			 LWC_ERR_EXISTS);
	assert_non_null(strstr(err, "refusing to overwrite"));
	no_secret_in(err, b, sizeof(b));
	after = slurp(p, &la);
	assert_int_equal(la, lb);
	assert_memory_equal(after, before, lb);
	assert_int_equal(mode_of(p), 0600);
	assert_int_equal(keyfile_read(p, KIND, out, sizeof(out), err, sizeof(err)), LWC_OK);
	assert_memory_equal(out, a, sizeof(a));
	free(before);
	free(after);

	/* any existing file, even empty or not a key file, is left alone */
	p = path_of("other.txt");
	write_raw(p, "precious data\n", 14, 0644);
	assert_int_equal(keyfile_write(p, KIND, DESC, b, sizeof(b), err, sizeof(err)),
			 LWC_ERR_EXISTS);
	after = slurp(p, &la);
	assert_string_equal(after, "precious data\n");
	assert_int_equal(mode_of(p), 0644);
	free(after);

	/* a missing directory is an I/O error, and nothing is created */
	assert_int_equal(keyfile_write(path_of("no/such/dir.key"), KIND, DESC, b, sizeof(b),
				       err, sizeof(err)), LWC_ERR_IO);
}

static void test_description_one_line(void **state)
{
	uint8_t a[32], out[32];
	char err[256] = "";
	(void)state;

	/* a line break in the description would start a line that reads as the
	 * key line: refused, and no file is left behind */
	secret_pattern(a, sizeof(a), 30);
	assert_int_equal(keyfile_write(path_of("desc.key"), KIND,
				       "evil\n" KIND "-1:00000000000000000000", a, sizeof(a),
				       err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(access(path_of("desc.key"), F_OK), -1);
	assert_int_equal(keyfile_write(path_of("desc.key"), KIND, "cr\rhere", a, sizeof(a),
				       err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(keyfile_write(path_of("desc.key"), KIND, NULL, a, sizeof(a),
				       err, sizeof(err)), LWC_ERR_ARG);
	assert_int_equal(access(path_of("desc.key"), F_OK), -1);
	/* an empty or ordinary description is fine */
	assert_int_equal(keyfile_write(path_of("desc.key"), KIND, "", a, sizeof(a),
				       err, sizeof(err)), LWC_OK);
	assert_int_equal(keyfile_read(path_of("desc.key"), KIND, out, sizeof(out),
				      err, sizeof(err)), LWC_OK);
	assert_memory_equal(out, a, sizeof(a));
}

static void test_perm(void **state)
{
	uint8_t a[32];
	char err[256];
	const mode_t bad[] = { 0644, 0640, 0604, 0660, 0606, 0610, 0601, 0700 | 0040, 0777 };
	const char *p;
	(void)state;

	secret_pattern(a, sizeof(a), 40);
	p = make_key("perm.key", a, sizeof(a));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(chmod(p, bad[i]), 0);
		read_fails(p, LWC_ERR_PERM, err, sizeof(err));
		assert_non_null(strstr(err, "chmod 600"));
		no_secret_in(err, a, sizeof(a));
	}
	assert_int_equal(chmod(p, 0600), 0);
}

/* Replace one hex digit of the key line with another hex digit. */
static char other_hex(char c)
{
	return c == '0' ? '1' : '0';
}

static void test_checksum(void **state)
{
	uint8_t a[32];
	char err[256], *text, *line;
	size_t len, hex_len = 2 * (sizeof(a) + 4);
	const char *p;
	(void)state;

	secret_pattern(a, sizeof(a), 50);
	p = make_key("sum.key", a, sizeof(a));
	text = slurp(p, &len);
	line = key_line(text) + strlen(KIND) + 3;
	/* every single-digit change is caught, in the secret and in the checksum */
	for (size_t i = 0; i < hex_len; i++) {
		char was = line[i];
		line[i] = other_hex(was);
		write_raw(p, text, len, 0600);
		read_fails(p, LWC_ERR_CHECKSUM, err, sizeof(err));
		assert_non_null(strstr(err, "checksum mismatch"));
		no_secret_in(err, a, sizeof(a));
		line[i] = was;
	}
	/* case of the hex digits does not matter */
	for (size_t i = 0; i < hex_len; i++)
		if (line[i] >= 'a' && line[i] <= 'f')
			line[i] = (char)(line[i] - 'a' + 'A');
	write_raw(p, text, len, 0600);
	{
		uint8_t out[32];
		assert_int_equal(keyfile_read(p, KIND, out, sizeof(out), err, sizeof(err)), LWC_OK);
		assert_memory_equal(out, a, sizeof(a));
	}
	/* a non-hex character */
	line[3] = 'g';
	write_raw(p, text, len, 0600);
	read_fails(p, LWC_ERR_CHECKSUM, err, sizeof(err));
	free(text);
}

static void test_other_kind(void **state)
{
	uint8_t a[32];
	char err[256] = "", *text;
	size_t len;
	const char *p = path_of("ops.key");
	(void)state;

	secret_pattern(a, sizeof(a), 60);
	unlink(p);
	assert_int_equal(keyfile_write(p, "LWC-OPS-KEY", DESC, a, sizeof(a), err, sizeof(err)),
			 LWC_OK);
	read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "not a " KIND " key file"));
	no_secret_in(err, a, sizeof(a));

	/* the kind text rewritten: the checksum covers the kind, so it is caught */
	text = slurp(p, &len);
	{
		char buf[8192];
		char *l = strstr(text, "LWC-OPS-KEY-1:");
		assert_non_null(l);
		snprintf(buf, sizeof(buf), "%.*s" KIND "-1:%s", (int)(l - text), text,
			 l + strlen("LWC-OPS-KEY-1:"));
		free(text);
		text = strdup(buf);
		assert_non_null(text);
		len = strlen(text);
	}
	write_raw(p, text, len, 0600);
	read_fails(p, LWC_ERR_CHECKSUM, err, sizeof(err));
	free(text);

	/* a kind that merely starts like ours */
	unlink(p);
	assert_int_equal(keyfile_write(p, KIND "X", DESC, a, sizeof(a), err, sizeof(err)), LWC_OK);
	read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	unlink(p);
	assert_int_equal(keyfile_write(p, KIND "-EXTRA", DESC, a, sizeof(a), err, sizeof(err)),
			 LWC_OK);
	read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));

	/* not a key file at all */
	write_raw(p, "", 0, 0600);
	read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	write_raw(p, "# only a comment\n\n# and another\n", 33, 0600);
	read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	write_raw(p, "hello world\n", 12, 0600);
	read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
}

static void test_version(void **state)
{
	uint8_t a[32];
	char err[256], *text, *line;
	size_t len;
	const char *p;
	(void)state;

	secret_pattern(a, sizeof(a), 70);
	p = make_key("ver.key", a, sizeof(a));
	text = slurp(p, &len);
	line = key_line(text);
	line[strlen(KIND) + 1] = '2';         /* LWC-CS-KEY-2:... */
	write_raw(p, text, len, 0600);
	read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "version"));
	assert_non_null(strstr(err, "unknown key file version 2 "));
	no_secret_in(err, a, sizeof(a));
	free(text);

	/* a multi-digit version is reported whole */
	text = slurp(make_key("ver2.key", a, sizeof(a)), &len);
	line = key_line(text);
	line[strlen(KIND) + 1] = '1';
	{
		char buf[8192];
		size_t off = (size_t)(line - text) + strlen(KIND) + 2;
		snprintf(buf, sizeof(buf), "%.*s0%s", (int)off, text, text + off);
		write_raw(path_of("ver2.key"), buf, strlen(buf), 0600);
	}
	read_fails(path_of("ver2.key"), LWC_ERR_FORMAT, err, sizeof(err));
	assert_non_null(strstr(err, "unknown key file version 10 "));
	free(text);
}

static void test_truncated(void **state)
{
	uint8_t a[32];
	char err[256], *text, *line;
	size_t len, keep;
	const char *p;
	(void)state;

	secret_pattern(a, sizeof(a), 80);
	p = make_key("trunc.key", a, sizeof(a));
	text = slurp(p, &len);
	line = key_line(text);
	keep = (size_t)(line - text) + strlen(KIND) + 3;   /* up to the ':' */
	/* the key line cut anywhere after the version: a damaged line */
	for (size_t cut = keep; cut < len - 1; cut++) {
		write_raw(p, text, cut, 0600);
		read_fails(p, LWC_ERR_CHECKSUM, err, sizeof(err));
		assert_non_null(strstr(err, "damaged"));
	}
	/* without its final newline the file is still whole */
	write_raw(p, text, len - 1, 0600);
	{
		uint8_t out[32];
		assert_int_equal(keyfile_read(p, KIND, out, sizeof(out), err, sizeof(err)), LWC_OK);
		assert_memory_equal(out, a, sizeof(a));
	}
	/* cut inside the comments: no key line */
	write_raw(p, text, (size_t)(line - text), 0600);
	read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
	/* trailing junk on the key line */
	{
		char buf[8192];
		snprintf(buf, sizeof(buf), "%.*s00\n", (int)(len - 1), text);
		write_raw(p, buf, strlen(buf), 0600);
		read_fails(p, LWC_ERR_CHECKSUM, err, sizeof(err));
	}
	free(text);
}

static void test_crlf_and_comments(void **state)
{
	uint8_t a[32], out[32];
	char err[256], *text, buf[8192];
	size_t len, o = 0;
	const char *p;
	(void)state;

	secret_pattern(a, sizeof(a), 90);
	p = make_key("crlf.key", a, sizeof(a));
	text = slurp(p, &len);
	/* CRLF line ends, blank lines and an extra leading comment */
	o += (size_t)snprintf(buf, sizeof(buf), "# copied from elsewhere\r\n\r\n");
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n')
			buf[o++] = '\r';
		buf[o++] = text[i];
	}
	write_raw(p, buf, o, 0600);
	assert_int_equal(keyfile_read(p, KIND, out, sizeof(out), err, sizeof(err)), LWC_OK);
	assert_memory_equal(out, a, sizeof(a));
	free(text);
}

static void test_missing_and_not_regular(void **state)
{
	char err[256];
	(void)state;

	read_fails(path_of("does-not-exist.key"), LWC_ERR_NOT_FOUND, err, sizeof(err));
	assert_non_null(strstr(err, "does-not-exist.key"));
	assert_int_equal(mkdir(path_of("adir"), 0700), 0);
	read_fails(path_of("adir"), LWC_ERR_IO, err, sizeof(err));
}

static void test_messages_distinct(void **state)
{
	uint8_t a[32];
	char perm[256], sum[256], ver[256], *text, *line;
	size_t len;
	const char *p;
	(void)state;

	secret_pattern(a, sizeof(a), 100);
	p = make_key("msg.key", a, sizeof(a));
	assert_int_equal(chmod(p, 0644), 0);
	read_fails(p, LWC_ERR_PERM, perm, sizeof(perm));
	assert_int_equal(chmod(p, 0600), 0);

	text = slurp(p, &len);
	line = key_line(text) + strlen(KIND) + 3;
	line[0] = other_hex(line[0]);
	write_raw(p, text, len, 0600);
	read_fails(p, LWC_ERR_CHECKSUM, sum, sizeof(sum));
	free(text);

	text = slurp(make_key("msg2.key", a, sizeof(a)), &len);
	key_line(text)[strlen(KIND) + 1] = '2';
	write_raw(path_of("msg2.key"), text, len, 0600);
	read_fails(path_of("msg2.key"), LWC_ERR_FORMAT, ver, sizeof(ver));
	free(text);

	assert_string_not_equal(perm, sum);
	assert_string_not_equal(perm, ver);
	assert_string_not_equal(sum, ver);
	/* and each says what is wrong */
	assert_non_null(strstr(perm, "group or others"));
	assert_non_null(strstr(sum, "checksum"));
	assert_non_null(strstr(ver, "version"));
	assert_null(strstr(perm, "checksum"));
	assert_null(strstr(ver, "checksum"));
}

/* Comment callback for the tests: collects the lines, one per row. */
struct seen {
	char lines[8][128];
	size_t n;
};

static void collect(void *arg, const char *text)
{
	struct seen *s = arg;

	if (s->n < 8)
		snprintf(s->lines[s->n], sizeof(s->lines[0]), "%s", text);
	s->n++;
}

static void test_lines_and_var(void **state)
{
	const char *const comments[] = { "first", "user: alice", "proxy: h:1" };
	uint8_t a[KEYFILE_SECRET_MAX], out[KEYFILE_SECRET_MAX];
	char err[256] = "", *text;
	struct seen seen;
	size_t len = 0, tl;
	const char *p = path_of("lines.key");
	(void)state;

	/* several comments: description, created, the rest, then the key */
	secret_pattern(a, sizeof(a), 110);
	unlink(p);
	assert_int_equal(keyfile_write_lines(p, KIND, comments, 3, a, 70, err, sizeof(err)),
			 LWC_OK);
	assert_int_equal(mode_of(p), 0600);
	text = slurp(p, &tl);
	assert_true(strncmp(text, "# first\n# created: ", 19) == 0);
	assert_non_null(strstr(text, "Z\n# user: alice\n# proxy: h:1\n" KIND "-1:"));
	/* read back at its own length, with the comments */
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(keyfile_read_var(p, KIND, out, sizeof(out), &len, collect, &seen,
					  err, sizeof(err)), LWC_OK);
	assert_int_equal(len, 70);
	assert_memory_equal(out, a, 70);
	assert_int_equal(seen.n, 4);
	assert_string_equal(seen.lines[0], " first");
	assert_true(strncmp(seen.lines[1], " created: ", 10) == 0);
	assert_string_equal(seen.lines[2], " user: alice");
	assert_string_equal(seen.lines[3], " proxy: h:1");
	/* the same from memory, and the fixed-length reader agrees */
	len = 0;
	assert_int_equal(keyfile_parse(text, tl, KIND, out, sizeof(out), &len, NULL, NULL,
				       err, sizeof(err)), LWC_OK);
	assert_int_equal(len, 70);
	assert_int_equal(keyfile_read(p, KIND, out, 70, err, sizeof(err)), LWC_OK);
	/* a cap below the key's length is a damaged line, output untouched */
	memset(out, 0xee, sizeof(out));
	assert_int_equal(keyfile_read_var(p, KIND, out, 69, &len, NULL, NULL, err, sizeof(err)),
			 LWC_ERR_CHECKSUM);
	for (size_t i = 0; i < sizeof(out); i++)
		assert_int_equal(out[i], 0xee);
	free(text);

	/* no comments at all: only the created line */
	unlink(p);
	assert_int_equal(keyfile_write_lines(p, KIND, NULL, 0, a, 1, err, sizeof(err)), LWC_OK);
	text = slurp(p, NULL);
	assert_true(strncmp(text, "# created: ", 11) == 0);
	free(text);
	assert_int_equal(keyfile_read_var(p, KIND, out, sizeof(out), &len, NULL, NULL,
					  err, sizeof(err)), LWC_OK);
	assert_int_equal(len, 1);

	/* any comment with a line break is refused, nothing is created */
	{
		const char *const bad[] = { "ok", "evil\n" KIND "-1:00" };
		unlink(p);
		assert_int_equal(keyfile_write_lines(p, KIND, bad, 2, a, 32, err, sizeof(err)),
				 LWC_ERR_ARG);
		assert_int_equal(access(p, F_OK), -1);
	}
	/* a kind that could hide a ':' or a line break */
	assert_int_equal(keyfile_write_lines(p, "A:B", comments, 1, a, 32, err, sizeof(err)),
			 LWC_ERR_ARG);
	assert_int_equal(keyfile_write_lines(p, "", comments, 1, a, 32, err, sizeof(err)),
			 LWC_ERR_ARG);
	assert_int_equal(access(p, F_OK), -1);
	/* argument checks */
	assert_int_equal(keyfile_read_var(p, KIND, out, 0, &len, NULL, NULL, err, sizeof(err)),
			 LWC_ERR_ARG);
	assert_int_equal(keyfile_read_var(p, KIND, out, 32, NULL, NULL, NULL, err, sizeof(err)),
			 LWC_ERR_ARG);
}

/* The key line names another kind; a line without ':' is never echoed. */
static void test_parse_messages(void **state)
{
	uint8_t a[32], out[32];
	char err[256], buf[512];
	size_t len;
	(void)state;

	secret_pattern(a, sizeof(a), 120);
	snprintf(buf, sizeof(buf), "LWC-OPS-KEY-1:00");
	assert_int_equal(keyfile_parse(buf, strlen(buf), KIND, out, sizeof(out), &len, NULL, NULL,
				       err, sizeof(err)), LWC_ERR_FORMAT);
	assert_string_equal(err, "not a " KIND " key file (it holds a LWC-OPS-KEY key)");
	/* the ':' lost: "LWC-CS-KEY-1<hex>" must not end up in the message */
	memcpy(buf, KIND "-1", strlen(KIND) + 2);
	sodium_bin2hex(buf + strlen(KIND) + 2, sizeof(buf) - strlen(KIND) - 2, a, sizeof(a));
	assert_int_equal(keyfile_parse(buf, strlen(buf), KIND, out, sizeof(out), &len, NULL, NULL,
				       err, sizeof(err)), LWC_ERR_FORMAT);
	no_secret_in(err, a, sizeof(a));
	/* a NUL byte, and more than KEYFILE_MAX_BYTES */
	assert_int_equal(keyfile_parse("# a\0b\n", 6, KIND, out, sizeof(out), &len, NULL, NULL,
				       err, sizeof(err)), LWC_ERR_FORMAT);
	{
		char *big = calloc(1, KEYFILE_MAX_BYTES + 1);
		const char *p = path_of("big.key");
		assert_non_null(big);
		memset(big, '#', KEYFILE_MAX_BYTES + 1);
		assert_int_equal(keyfile_parse(big, KEYFILE_MAX_BYTES + 1, KIND, out, sizeof(out),
					       &len, NULL, NULL, err, sizeof(err)), LWC_ERR_FORMAT);
		assert_non_null(strstr(err, "too large"));
		write_raw(p, big, KEYFILE_MAX_BYTES + 1, 0600);
		read_fails(p, LWC_ERR_FORMAT, err, sizeof(err));
		assert_non_null(strstr(err, "too large"));
		free(big);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_mode_0600),
		cmocka_unit_test(test_no_overwrite),
		cmocka_unit_test(test_description_one_line),
		cmocka_unit_test(test_perm),
		cmocka_unit_test(test_checksum),
		cmocka_unit_test(test_other_kind),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_crlf_and_comments),
		cmocka_unit_test(test_missing_and_not_regular),
		cmocka_unit_test(test_messages_distinct),
		cmocka_unit_test(test_lines_and_var),
		cmocka_unit_test(test_parse_messages),
	};

	if (sodium_init() < 0 || cry_init() != LWC_OK) {
		fprintf(stderr, "libsodium failed to initialise\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
