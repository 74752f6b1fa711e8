/*
 * userkey.c - see userkey.h.
 *
 * Both file kinds are key files of keyfile.h with a variable-length secret;
 * this module only lays out the secret (keys first, name last, so the name's
 * length is what remains) and reads the "# proxy:" comment.  Secrets pass
 * through stack buffers that are wiped on every path.
 */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "keyfile.h"
#include "userkey.h"

#define KEY_BYTES 32u
/* The largest secret of each kind (parsers read up to KEYFILE_SECRET_MAX,
 * so that a longer one with a good checksum is a format error, not damage). */
#define USER_SECRET_MAX   (2 * KEY_BYTES + USERKEY_NAME_MAX)
#define ENROLL_SECRET_MAX (KEY_BYTES + USERKEY_NAME_MAX)

int userkey_new(struct userkey **out)
{
	struct userkey *uk;

	if (out == NULL)
		return LWC_ERR_ARG;
	*out = NULL;
	/* sodium_malloc needs an initialised library (page size, canaries) */
	if (sodium_init() < 0)
		return LWC_ERR_CRYPTO;
	uk = sodium_malloc(sizeof(*uk));
	if (uk == NULL)
		return LWC_ERR_NOMEM;
	memset(uk, 0, sizeof(*uk));
	*out = uk;
	return LWC_OK;
}

void userkey_free(struct userkey *uk)
{
	if (uk == NULL)
		return;
	sodium_memzero(uk, sizeof(*uk));
	sodium_free(uk);
}

static int name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '@' || c == '-';
}

/* name_valid on bytes that need not be NUL-terminated (the secret). */
static int name_valid_mem(const char *s, size_t len)
{
	if (len < 1 || len > USERKEY_NAME_MAX || s[0] == '-' || s[0] == '.')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!name_char(s[i]))
			return 0;
	return 1;
}

int userkey_name_valid(const char *name)
{
	size_t len;

	if (name == NULL)
		return 0;
	len = strnlen(name, USERKEY_NAME_MAX + 1);
	return len <= USERKEY_NAME_MAX && name_valid_mem(name, len);
}

/* A NUL-terminated field of cap bytes holding a valid name. */
static int name_field_valid(const char *name, size_t cap)
{
	return memchr(name, '\0', cap) != NULL && userkey_name_valid(name);
}

/* Proxy address: one line of text, no surrounding spaces (so that it reads
 * back as written), shorter than USERKEY_PROXY_MAX. */
static int proxy_valid(const char *s, size_t len)
{
	if (len >= USERKEY_PROXY_MAX)
		return 0;
	if (len > 0 && (s[0] == ' ' || s[len - 1] == ' '))
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

/* ----------------------------------------------------------------- write */

int userkey_write(const char *path, const struct userkey *uk, char *err, size_t errlen)
{
	uint8_t secret[USER_SECRET_MAX];
	char user[USERKEY_NAME_MAX + 16], proxy[USERKEY_PROXY_MAX + 16];
	const char *comments[3];
	size_t nlen, plen;
	int rc;

	if (path == NULL || uk == NULL)
		return LWC_ERR_ARG;
	if (!name_field_valid(uk->name, sizeof(uk->name))) {
		lwc_errf(err, errlen, "%s: invalid user name (1 to %d of A-Z a-z 0-9 _ . @ -, "
			 "not starting with - or .)", path, USERKEY_NAME_MAX);
		return LWC_ERR_ARG;
	}
	plen = strnlen(uk->proxy, sizeof(uk->proxy));
	if (!proxy_valid(uk->proxy, plen)) {
		lwc_errf(err, errlen, "%s: the proxy address must be one line of text "
			 "shorter than %d characters", path, USERKEY_PROXY_MAX);
		return LWC_ERR_ARG;
	}
	nlen = strlen(uk->name);
	snprintf(user, sizeof(user), "user: %s", uk->name);
	snprintf(proxy, sizeof(proxy), "proxy: %s", uk->proxy);
	comments[0] = "LWC user key - keep it secret";
	comments[1] = user;
	comments[2] = proxy;

	memcpy(secret, uk->kdbu, KEY_BYTES);
	memcpy(secret + KEY_BYTES, uk->ku, KEY_BYTES);
	memcpy(secret + 2 * KEY_BYTES, uk->name, nlen);
	rc = keyfile_write_lines(path, USERKEY_KIND, comments, plen > 0 ? 3 : 2,
				 secret, 2 * KEY_BYTES + nlen, err, errlen);
	sodium_memzero(secret, sizeof(secret));
	return rc;
}

int enroll_write(const char *path, const char *name, const uint8_t kdbu[32],
		 char *err, size_t errlen)
{
	uint8_t secret[ENROLL_SECRET_MAX];
	char head[USERKEY_NAME_MAX + 96], user[USERKEY_NAME_MAX + 16];
	const char *comments[2];
	size_t nlen;
	int rc;

	if (path == NULL || kdbu == NULL)
		return LWC_ERR_ARG;
	if (!userkey_name_valid(name)) {
		lwc_errf(err, errlen, "%s: invalid user name (1 to %d of A-Z a-z 0-9 _ . @ -, "
			 "not starting with - or .)", path, USERKEY_NAME_MAX);
		return LWC_ERR_ARG;
	}
	nlen = strlen(name);
	snprintf(head, sizeof(head), "LWC enrollment for user %s - import with: "
		 "lwc-proxy user add --enroll FILE", name);
	snprintf(user, sizeof(user), "user: %s", name);
	comments[0] = head;
	comments[1] = user;

	memcpy(secret, kdbu, KEY_BYTES);
	memcpy(secret + KEY_BYTES, name, nlen);
	rc = keyfile_write_lines(path, ENROLL_KIND, comments, 2, secret, KEY_BYTES + nlen,
				 err, errlen);
	sodium_memzero(secret, sizeof(secret));
	return rc;
}

/* ----------------------------------------------------------------- parse */

/* What the comment lines of a user key file say. */
struct comments {
	char proxy[USERKEY_PROXY_MAX];  /* value of the "# proxy:" line        */
	int proxies;                    /* how many "# proxy:" lines there are */
	int bad_proxy;                  /* a value that proxy_valid refuses    */
};

static void on_comment(void *arg, const char *text)
{
	struct comments *c = arg;
	size_t len;

	while (*text == ' ')
		text++;
	if (strncmp(text, "proxy:", 6) != 0)
		return;
	text += 6;
	while (*text == ' ')
		text++;
	len = strlen(text);
	while (len > 0 && text[len - 1] == ' ')
		len--;
	if (++c->proxies > 1)
		return;
	if (!proxy_valid(text, len)) {
		c->bad_proxy = 1;
		return;
	}
	memcpy(c->proxy, text, len);
	c->proxy[len] = '\0';
}

int userkey_parse(const char *text, size_t len, struct userkey *uk, char *err, size_t errlen)
{
	uint8_t secret[KEYFILE_SECRET_MAX];
	struct comments c;
	size_t n = 0;
	int rc;

	if ((text == NULL && len > 0) || uk == NULL)
		return LWC_ERR_ARG;
	memset(&c, 0, sizeof(c));
	rc = keyfile_parse(text, len, USERKEY_KIND, secret, sizeof(secret), &n,
			   on_comment, &c, err, errlen);
	if (rc != LWC_OK)
		goto out;
	rc = LWC_ERR_FORMAT;
	if (n <= 2 * KEY_BYTES) {
		lwc_errf(err, errlen, "the user key holds no user name (%zu bytes)", n);
		goto out;
	}
	if (n > USER_SECRET_MAX) {
		lwc_errf(err, errlen, "the user key holds a user name longer than %d bytes",
			 USERKEY_NAME_MAX);
		goto out;
	}
	if (!name_valid_mem((const char *)secret + 2 * KEY_BYTES, n - 2 * KEY_BYTES)) {
		lwc_errf(err, errlen, "the user key holds an invalid user name");
		goto out;
	}
	if (c.proxies > 1) {
		lwc_errf(err, errlen, "the user key file has more than one '# proxy:' line");
		goto out;
	}
	if (c.bad_proxy) {
		lwc_errf(err, errlen, "the '# proxy:' line of the user key file is not a "
			 "one-line address shorter than %d characters", USERKEY_PROXY_MAX);
		goto out;
	}
	memcpy(uk->kdbu, secret, KEY_BYTES);
	memcpy(uk->ku, secret + KEY_BYTES, KEY_BYTES);
	memcpy(uk->name, secret + 2 * KEY_BYTES, n - 2 * KEY_BYTES);
	uk->name[n - 2 * KEY_BYTES] = '\0';
	memcpy(uk->proxy, c.proxy, sizeof(uk->proxy));
	rc = LWC_OK;
out:
	sodium_memzero(secret, sizeof(secret));
	return rc;
}

int enroll_parse(const char *text, size_t len, char name[USERKEY_NAME_MAX + 1],
		 uint8_t kdbu[32], char *err, size_t errlen)
{
	uint8_t secret[KEYFILE_SECRET_MAX];
	size_t n = 0;
	int rc;

	if ((text == NULL && len > 0) || name == NULL || kdbu == NULL)
		return LWC_ERR_ARG;
	rc = keyfile_parse(text, len, ENROLL_KIND, secret, sizeof(secret), &n,
			   NULL, NULL, err, errlen);
	if (rc != LWC_OK)
		goto out;
	rc = LWC_ERR_FORMAT;
	if (n <= KEY_BYTES) {
		lwc_errf(err, errlen, "the enrollment holds no user name (%zu bytes)", n);
		goto out;
	}
	if (n > ENROLL_SECRET_MAX) {
		lwc_errf(err, errlen, "the enrollment holds a user name longer than %d bytes",
			 USERKEY_NAME_MAX);
		goto out;
	}
	if (!name_valid_mem((const char *)secret + KEY_BYTES, n - KEY_BYTES)) {
		lwc_errf(err, errlen, "the enrollment holds an invalid user name");
		goto out;
	}
	memcpy(kdbu, secret, KEY_BYTES);
	memcpy(name, secret + KEY_BYTES, n - KEY_BYTES);
	name[n - KEY_BYTES] = '\0';
	rc = LWC_OK;
out:
	sodium_memzero(secret, sizeof(secret));
	return rc;
}

/* ------------------------------------------------------------------ read */

/* Load path (permission check included) for one of the parsers above. */
static int load(const char *path, char *text, size_t *len, char *err, size_t errlen)
{
	if (path == NULL)
		return LWC_ERR_ARG;
	return keyfile_load(path, text, len, err, errlen);
}

int userkey_read(const char *path, struct userkey **out, char *err, size_t errlen)
{
	char text[KEYFILE_MAX_BYTES + 1], msg[256];
	struct userkey *uk = NULL;
	size_t len = 0;
	int rc;

	if (out == NULL)
		return LWC_ERR_ARG;
	*out = NULL;
	rc = load(path, text, &len, err, errlen);
	if (rc != LWC_OK)
		goto out;
	rc = userkey_new(&uk);
	if (rc != LWC_OK)
		goto out;
	msg[0] = '\0';
	rc = userkey_parse(text, len, uk, msg, sizeof(msg));
	if (rc != LWC_OK) {
		lwc_errf(err, errlen, "%s: %s", path, msg);
		userkey_free(uk);
		goto out;
	}
	*out = uk;
out:
	sodium_memzero(text, sizeof(text));
	return rc;
}

int enroll_read(const char *path, char name[USERKEY_NAME_MAX + 1], uint8_t kdbu[32],
		char *err, size_t errlen)
{
	char text[KEYFILE_MAX_BYTES + 1], msg[256];
	size_t len = 0;
	int rc;

	rc = load(path, text, &len, err, errlen);
	if (rc == LWC_OK) {
		msg[0] = '\0';
		rc = enroll_parse(text, len, name, kdbu, msg, sizeof(msg));
		if (rc != LWC_OK)
			lwc_errf(err, errlen, "%s: %s", path, msg);
	}
	sodium_memzero(text, sizeof(text));
	return rc;
}
