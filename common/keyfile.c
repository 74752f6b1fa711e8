/*
 * keyfile.c - see keyfile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "keyfile.h"
#include "wire.h"

#define KEYFILE_VERSION "1"
#define KEYFILE_MAX_BYTES 4096

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

int keyfile_write(const char *path, const char *kind, const char *description,
		  const uint8_t *secret, size_t len, char *err, size_t errlen)
{
	char text[KEYFILE_MAX_BYTES], when[32];
	char hex[2 * (KEYFILE_SECRET_MAX + 4) + 1];
	uint8_t buf[KEYFILE_SECRET_MAX + 4];
	time_t now = time(NULL);
	struct tm tm;
	int fd, n, rc = LWC_OK;

	if (len == 0 || len > KEYFILE_SECRET_MAX)
		return LWC_ERR_ARG;
	/* the description goes on a "# " comment line: a line break in it would
	 * start a line that keyfile_read takes for the key line */
	if (!one_line(description)) {
		lwc_errf(err, errlen, "%s: the key file description must be one line of text", path);
		return LWC_ERR_ARG;
	}
	memcpy(buf, secret, len);
	checksum(buf + len, kind, secret, len);
	sodium_bin2hex(hex, sizeof(hex), buf, len + 4);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(text, sizeof(text), "# %s\n# created: %s\n%s-%s:%s\n",
		     description, when, kind, KEYFILE_VERSION, hex);
	sodium_memzero(buf, sizeof(buf));
	sodium_memzero(hex, sizeof(hex));
	if (n < 0 || (size_t)n >= sizeof(text)) {
		sodium_memzero(text, sizeof(text));
		return LWC_ERR_ARG;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = errno == EEXIST ? LWC_ERR_EXISTS : LWC_ERR_IO;
		lwc_errf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == EEXIST ? " (refusing to overwrite a key file)" : "");
		sodium_memzero(text, sizeof(text));
		return rc;
	}
	if (fchmod(fd, 0600) != 0 || wire_write_all(fd, text, (size_t)n) != LWC_OK ||
	    fsync(fd) != 0) {
		lwc_errf(err, errlen, "%s: write failed: %s", path, strerror(errno));
		rc = LWC_ERR_IO;
	}
	close(fd);
	if (rc != LWC_OK)
		unlink(path);
	sodium_memzero(text, sizeof(text));
	return rc;
}

int keyfile_read(const char *path, const char *kind, uint8_t *secret, size_t len,
		 char *err, size_t errlen)
{
	char text[KEYFILE_MAX_BYTES + 1];
	uint8_t buf[KEYFILE_SECRET_MAX + 4], sum[4];
	size_t kind_len = strlen(kind), bin_len, got = 0;
	struct stat stt;
	char *line, *save = NULL, *found = NULL;
	int fd, rc = LWC_ERR_FORMAT;
	ssize_t r;

	if (len == 0 || len > KEYFILE_SECRET_MAX)
		return LWC_ERR_ARG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		lwc_errf(err, errlen, "%s: %s", path, strerror(errno));
		return errno == ENOENT ? LWC_ERR_NOT_FOUND : LWC_ERR_IO;
	}
	if (fstat(fd, &stt) != 0 || !S_ISREG(stt.st_mode)) {
		close(fd);
		lwc_errf(err, errlen, "%s: not a regular file", path);
		return LWC_ERR_IO;
	}
	if (stt.st_mode & 077) {
		close(fd);
		lwc_errf(err, errlen, "%s: key file is accessible by group or others "
			 "(mode %04o); run chmod 600 on it", path, (unsigned)(stt.st_mode & 07777));
		return LWC_ERR_PERM;
	}
	while (got < KEYFILE_MAX_BYTES &&
	       (r = read(fd, text + got, KEYFILE_MAX_BYTES - got)) > 0)
		got += (size_t)r;
	close(fd);
	text[got] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t l = strlen(line);
		if (l && line[l - 1] == '\r')
			line[l - 1] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		found = line;
		break;
	}
	if (found == NULL || strncmp(found, kind, kind_len) != 0 || found[kind_len] != '-') {
		lwc_errf(err, errlen, "%s: not a %s key file", path, kind);
		goto out;
	}
	found += kind_len + 1;
	if (strncmp(found, KEYFILE_VERSION ":", 2) != 0) {
		lwc_errf(err, errlen, "%s: unsupported %s version '%.*s' (this build reads version %s)",
			 path, kind, (int)strcspn(found, ":"), found, KEYFILE_VERSION);
		goto out;
	}
	found += 2;
	if (strlen(found) != 2 * (len + 4) ||
	    sodium_hex2bin(buf, sizeof(buf), found, strlen(found), NULL, &bin_len, NULL) != 0 ||
	    bin_len != len + 4) {
		lwc_errf(err, errlen, "%s: damaged %s key line", path, kind);
		rc = LWC_ERR_CHECKSUM;
		goto out;
	}
	checksum(sum, kind, buf, len);
	if (sodium_memcmp(sum, buf + len, 4) != 0) {
		lwc_errf(err, errlen, "%s: checksum mismatch: the key file is damaged", path);
		rc = LWC_ERR_CHECKSUM;
		goto out;
	}
	memcpy(secret, buf, len);
	rc = LWC_OK;
out:
	sodium_memzero(buf, sizeof(buf));
	sodium_memzero(text, sizeof(text));
	return rc;
}
