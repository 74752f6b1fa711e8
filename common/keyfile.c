/*
 * keyfile.c - see keyfile.h.
 *
 * The parser works on a memory buffer so that it can be fuzzed and shared by
 * every kind of key file; the file readers only add the permission check and
 * the path in front of its messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "keyfile.h"
#include "wire.h"

#define KEYFILE_VERSION "1"
/* Longest "KIND-VERSION" head of another kind that a message may name. */
#define KEYFILE_HEAD_MAX 64u
/* Longest version number a message may quote. */
#define KEYFILE_VERSION_DIGITS 9u

static void checksum(uint8_t out[4], const char *kind, const uint8_t *secret, size_t len)
{
	crypto_generichash_state st;
	uint8_t h[32];

	crypto_generichash_init(&st, NULL, 0, sizeof(h));
	crypto_generichash_update(&st, (const uint8_t *)kind, strlen(kind));
	crypto_generichash_update(&st, (const uint8_t *)"-" KEYFILE_VERSION, 2);
	crypto_generichash_update(&st, secret, len);
	crypto_generichash_final(&st, h, sizeof(h));
	memcpy(out, h, 4);
	sodium_memzero(&st, sizeof(st));
	sodium_memzero(h, sizeof(h));
}

/* Text that fits on one comment line: no control characters. */
static int one_line(const char *s)
{
	if (s == NULL)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

static int kind_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-';
}

/* A kind is what the key line starts with: [A-Za-z0-9-]+, so that neither
 * ':' nor a line break can hide in it. */
static int kind_valid(const char *kind)
{
	if (kind == NULL || kind[0] == '\0' || strlen(kind) > KEYFILE_HEAD_MAX)
		return 0;
	for (; *kind; kind++)
		if (!kind_char(*kind))
			return 0;
	return 1;
}

/* snprintf at buf + *o; -1 when it does not fit. */
static int append(char *buf, size_t cap, size_t *o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int append(char *buf, size_t cap, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(buf + *o, cap - *o, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= cap - *o)
		return -1;
	*o += (size_t)w;
	return 0;
}

int keyfile_write_lines(const char *path, const char *kind,
			const char *const *comments, size_t n,
			const uint8_t *secret, size_t len, char *err, size_t errlen)
{
	char text[KEYFILE_MAX_BYTES], when[32];
	char hex[2 * (KEYFILE_SECRET_MAX + 4) + 1];
	uint8_t buf[KEYFILE_SECRET_MAX + 4];
	time_t now = time(NULL);
	struct tm tm;
	size_t o = 0;
	int fd, w, rc = LWC_OK;

	if (len == 0 || len > KEYFILE_SECRET_MAX || secret == NULL || !kind_valid(kind) ||
	    (n > 0 && comments == NULL))
		return LWC_ERR_ARG;
	/* a comment goes on a "# " line: a line break in it would start a
	 * line that the reader takes for the key line */
	for (size_t i = 0; i < n; i++) {
		if (!one_line(comments[i])) {
			lwc_errf(err, errlen, "%s: key file comments must be one line of text", path);
			return LWC_ERR_ARG;
		}
	}
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* description, created, the other comments */
	if ((n > 0 && append(text, sizeof(text), &o, "# %s\n", comments[0]) != 0) ||
	    append(text, sizeof(text), &o, "# created: %s\n", when) != 0)
		goto too_long;
	for (size_t i = 1; i < n; i++)
		if (append(text, sizeof(text), &o, "# %s\n", comments[i]) != 0)
			goto too_long;
	memcpy(buf, secret, len);
	checksum(buf + len, kind, secret, len);
	sodium_bin2hex(hex, sizeof(hex), buf, len + 4);
	w = append(text, sizeof(text), &o, "%s-%s:%s\n", kind, KEYFILE_VERSION, hex);
	sodium_memzero(buf, sizeof(buf));
	sodium_memzero(hex, sizeof(hex));
	if (w != 0)
		goto too_long;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = errno == EEXIST ? LWC_ERR_EXISTS : LWC_ERR_IO;
		lwc_errf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == EEXIST ? " (refusing to overwrite a key file)" : "");
		sodium_memzero(text, sizeof(text));
		return rc;
	}
	if (fchmod(fd, 0600) != 0 || wire_write_all(fd, text, o) != LWC_OK ||
	    fsync(fd) != 0) {
		lwc_errf(err, errlen, "%s: write failed: %s", path, strerror(errno));
		rc = LWC_ERR_IO;
	}
	close(fd);
	if (rc != LWC_OK)
		unlink(path);
	sodium_memzero(text, sizeof(text));
	return rc;

too_long:
	lwc_errf(err, errlen, "%s: key file comments too long", path);
	sodium_memzero(text, sizeof(text));
	return LWC_ERR_ARG;
}

int keyfile_write(const char *path, const char *kind, const char *description,
		  const uint8_t *secret, size_t len, char *err, size_t errlen)
{
	const char *const comments[1] = { description };

	return keyfile_write_lines(path, kind, comments, 1, secret, len, err, errlen);
}

/*
 * The parser.  The key line must be "KIND-1:" and 2 * (n + 4) hex digits
 * with min <= n <= max; a head of the form "OTHER-KIND-<digits>:" is named
 * in the message, so that handing one key file for another says so.
 */
static int parse(const char *text, size_t text_len, const char *kind,
		 uint8_t *secret, size_t min, size_t max, size_t *out_len,
		 keyfile_comment_fn on_comment, void *arg, char *err, size_t errlen)
{
	char comment[KEYFILE_MAX_BYTES + 1];
	uint8_t buf[KEYFILE_SECRET_MAX + 4], sum[4];
	const char *p = text, *end = text + text_len, *line = NULL;
	const char *colon, *dash = NULL, *hex;
	size_t llen = 0, kind_len = strlen(kind), head_max, hex_len, bin_len, n;
	int rc = LWC_ERR_FORMAT;

	if (text_len > KEYFILE_MAX_BYTES) {
		lwc_errf(err, errlen, "too large to be a key file (%zu bytes, at most %u)",
			 text_len, KEYFILE_MAX_BYTES);
		return LWC_ERR_FORMAT;
	}
	if (text_len > 0 && memchr(text, '\0', text_len) != NULL) {
		lwc_errf(err, errlen, "not a %s key file (it holds a NUL byte)", kind);
		return LWC_ERR_FORMAT;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;
		size_t l = (size_t)((nl ? nl : end) - p);

		if (l > 0 && p[l - 1] == '\r')
			l--;
		if (l > 0 && p[0] == '#') {
			if (on_comment != NULL) {
				memcpy(comment, p + 1, l - 1);
				comment[l - 1] = '\0';
				on_comment(arg, comment);
			}
		} else if (l > 0) {
			line = p;
			llen = l;
			break;
		}
		p = next;
	}
	if (line == NULL) {
		lwc_errf(err, errlen, "not a %s key file (no key line)", kind);
		return LWC_ERR_FORMAT;
	}

	/* head: KIND '-' VERSION ':' */
	head_max = kind_len + 1 + KEYFILE_VERSION_DIGITS + 1;
	if (head_max < KEYFILE_HEAD_MAX)
		head_max = KEYFILE_HEAD_MAX;
	colon = memchr(line, ':', llen < head_max ? llen : head_max);
	if (colon != NULL) {
		const char *q = line;
		size_t digits;

		for (; q < colon && kind_char(*q); q++)
			if (*q == '-')
				dash = q;
		digits = dash ? (size_t)(colon - dash - 1) : 0;
		if (q != colon || dash == line || digits < 1 || digits > KEYFILE_VERSION_DIGITS)
			dash = NULL;
		for (q = colon - digits; dash != NULL && q < colon; q++)
			if (*q < '0' || *q > '9')
				dash = NULL;
	}
	if (colon == NULL || dash == NULL) {
		lwc_errf(err, errlen, "not a %s key file", kind);
		return LWC_ERR_FORMAT;
	}
	if ((size_t)(dash - line) != kind_len || memcmp(line, kind, kind_len) != 0) {
		lwc_errf(err, errlen, "not a %s key file (it holds a %.*s key)", kind,
			 (int)(dash - line), line);
		return LWC_ERR_FORMAT;
	}
	if (colon - dash - 1 != 1 || dash[1] != KEYFILE_VERSION[0]) {
		lwc_errf(err, errlen, "unknown key file version %.*s (this build reads %s-%s)",
			 (int)(colon - dash - 1), dash + 1, kind, KEYFILE_VERSION);
		return LWC_ERR_FORMAT;
	}

	hex = colon + 1;
	hex_len = llen - (size_t)(hex - line);
	n = hex_len / 2;
	if (hex_len % 2 != 0 || n < min + 4 || n > max + 4 ||
	    sodium_hex2bin(buf, sizeof(buf), hex, hex_len, NULL, &bin_len, NULL) != 0 ||
	    bin_len != n) {
		lwc_errf(err, errlen, "damaged %s key line (wrong length or not hex)", kind);
		rc = LWC_ERR_CHECKSUM;
		goto out;
	}
	n -= 4;
	checksum(sum, kind, buf, n);
	if (sodium_memcmp(sum, buf + n, 4) != 0) {
		lwc_errf(err, errlen, "checksum mismatch: the key file is damaged");
		rc = LWC_ERR_CHECKSUM;
		goto out;
	}
	memcpy(secret, buf, n);
	*out_len = n;
	rc = LWC_OK;
out:
	sodium_memzero(buf, sizeof(buf));
	sodium_memzero(sum, sizeof(sum));
	return rc;
}

int keyfile_parse(const char *text, size_t text_len, const char *kind,
		  uint8_t *secret, size_t cap, size_t *len,
		  keyfile_comment_fn on_comment, void *arg, char *err, size_t errlen)
{
	if ((text == NULL && text_len > 0) || kind == NULL || secret == NULL ||
	    cap == 0 || len == NULL)
		return LWC_ERR_ARG;
	if (cap > KEYFILE_SECRET_MAX)
		cap = KEYFILE_SECRET_MAX;
	if (text == NULL)
		text = "";
	return parse(text, text_len, kind, secret, 1, cap, len, on_comment, arg, err, errlen);
}

int keyfile_load(const char *path, char *text, size_t *text_len, char *err, size_t errlen)
{
	struct stat st;
	size_t got = 0;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		lwc_errf(err, errlen, "%s: %s", path, strerror(e));
		return e == ENOENT ? LWC_ERR_NOT_FOUND : LWC_ERR_IO;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		lwc_errf(err, errlen, "%s: not a regular file", path);
		return LWC_ERR_IO;
	}
	if (st.st_mode & 077) {
		close(fd);
		lwc_errf(err, errlen, "%s: key file is %s by group or others (mode %04o); "
			 "run chmod 600 on it", path,
			 (st.st_mode & 044) ? "readable" : "accessible",
			 (unsigned)(st.st_mode & 07777));
		return LWC_ERR_PERM;
	}
	/* one byte more than a key file may hold, to tell a larger file */
	while (got <= KEYFILE_MAX_BYTES) {
		r = read(fd, text + got, KEYFILE_MAX_BYTES + 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			lwc_errf(err, errlen, "%s: read failed: %s", path, strerror(e));
			return LWC_ERR_IO;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got > KEYFILE_MAX_BYTES) {
		lwc_errf(err, errlen, "%s: too large to be a key file (more than %u bytes)",
			 path, KEYFILE_MAX_BYTES);
		return LWC_ERR_FORMAT;
	}
	*text_len = got;
	return LWC_OK;
}

/* keyfile_load, then parse with the path in front of the parser's message. */
static int read_file(const char *path, const char *kind, uint8_t *secret,
		     size_t min, size_t max, size_t *len,
		     keyfile_comment_fn on_comment, void *arg, char *err, size_t errlen)
{
	char text[KEYFILE_MAX_BYTES + 1], msg[256];
	size_t text_len = 0;
	int rc;

	rc = keyfile_load(path, text, &text_len, err, errlen);
	if (rc == LWC_OK) {
		msg[0] = '\0';
		rc = parse(text, text_len, kind, secret, min, max, len, on_comment, arg,
			   msg, sizeof(msg));
		if (rc != LWC_OK)
			lwc_errf(err, errlen, "%s: %s", path, msg);
	}
	sodium_memzero(text, sizeof(text));
	return rc;
}

int keyfile_read(const char *path, const char *kind, uint8_t *secret, size_t len,
		 char *err, size_t errlen)
{
	size_t got;

	if (len == 0 || len > KEYFILE_SECRET_MAX || kind == NULL || secret == NULL)
		return LWC_ERR_ARG;
	return read_file(path, kind, secret, len, len, &got, NULL, NULL, err, errlen);
}

int keyfile_read_var(const char *path, const char *kind, uint8_t *secret, size_t cap,
		     size_t *len, keyfile_comment_fn on_comment, void *arg,
		     char *err, size_t errlen)
{
	if (cap == 0 || kind == NULL || secret == NULL || len == NULL)
		return LWC_ERR_ARG;
	if (cap > KEYFILE_SECRET_MAX)
		cap = KEYFILE_SECRET_MAX;
	return read_file(path, kind, secret, 1, cap, len, on_comment, arg, err, errlen);
}
