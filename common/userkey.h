/*
 * userkey.h - a user's key file and the enrollment file of a user.
 *
 * User key file (the user keeps it; mode 0600, in the style of age keys):
 *
 *   # LWC user key - keep it secret
 *   # created: 2026-11-21T12:00:00Z
 *   # user: alice
 *   # proxy: db.example.org:5544          (absent when none is known)
 *   LWC-USER-KEY-1:<hex of K_DBU(32) || K_U(32) || name><hex of checksum>
 *
 * Enrollment file (what a key authority on another host hands to the proxy
 * admin: the user's name and K_DBU only, never K_U):
 *
 *   # LWC enrollment for user alice - import with: lwc-proxy user add --enroll FILE
 *   # created: 2026-11-21T12:00:00Z
 *   # user: alice
 *   LWC-ENROLL-1:<hex of K_DBU(32) || name><hex of checksum>
 *
 * Both use the key file format of keyfile.h (checksum, O_EXCL, 0600, refusal
 * of files others can read, distinct messages for permissions, damage and an
 * unknown version).  The name inside the secret is authoritative; the
 * "# user:" comment is for people.  The "# proxy:" comment is read back.
 */
#ifndef LWC_USERKEY_H
#define LWC_USERKEY_H

#include <stddef.h>
#include <stdint.h>

#include "lwc_err.h"

#define USERKEY_NAME_MAX  64
#define USERKEY_PROXY_MAX 256
#define USERKEY_KIND      "LWC-USER-KEY"
#define ENROLL_KIND       "LWC-ENROLL"

/* A user's secrets; lives in sodium_malloc'ed (guarded, mlock'ed) memory. */
struct userkey {
	char name[USERKEY_NAME_MAX + 1];   /* user name, userkey_name_valid        */
	char proxy[USERKEY_PROXY_MAX];     /* "HOST:PORT" of the proxy, "" when none */
	uint8_t kdbu[32];                  /* K_DBU: user-proxy channel key         */
	uint8_t ku[32];                    /* K_U: token and record keys            */
};

/* A zeroed struct userkey in sodium_malloc'ed memory.  LWC_ERR_NOMEM,
 * LWC_ERR_CRYPTO (libsodium failed to initialise). */
int userkey_new(struct userkey **out) LWC_WUR;

/* Wipe and release; NULL is fine. */
void userkey_free(struct userkey *uk);

/* 1 if name is [A-Za-z0-9_.@-]{1,64} not starting with '-' or '.', else 0. */
int userkey_name_valid(const char *name);

/* Create path (must not exist, O_EXCL, 0600) holding uk.  LWC_ERR_ARG for an
 * invalid name or a proxy address that is not one line shorter than
 * USERKEY_PROXY_MAX; LWC_ERR_EXISTS, LWC_ERR_IO. */
int userkey_write(const char *path, const struct userkey *uk, char *err, size_t errlen) LWC_WUR;

/* Read a user key file into a new struct userkey (*out, free with
 * userkey_free; NULL on failure).  Refuses a file others can read
 * (LWC_ERR_PERM), a damaged one (LWC_ERR_CHECKSUM), an unknown version, a
 * key file of another kind (an enrollment file, K_CS...) or a bad name
 * (LWC_ERR_FORMAT); LWC_ERR_NOT_FOUND, LWC_ERR_IO, LWC_ERR_NOMEM. */
int userkey_read(const char *path, struct userkey **out, char *err, size_t errlen) LWC_WUR;

/* The parser of userkey_read on text[0..len) (no file, no permission check,
 * messages without a path).  uk is left untouched on failure. */
int userkey_parse(const char *text, size_t len, struct userkey *uk,
		  char *err, size_t errlen) LWC_WUR;

/* Create an enrollment file (O_EXCL, 0600) for name with K_DBU. */
int enroll_write(const char *path, const char *name, const uint8_t kdbu[32],
		 char *err, size_t errlen) LWC_WUR;

/* Read an enrollment file; errors as userkey_read (a user key file is
 * LWC_ERR_FORMAT here).  name and kdbu are left untouched on failure. */
int enroll_read(const char *path, char name[USERKEY_NAME_MAX + 1], uint8_t kdbu[32],
		char *err, size_t errlen) LWC_WUR;

/* The parser of enroll_read on text[0..len). */
int enroll_parse(const char *text, size_t len, char name[USERKEY_NAME_MAX + 1],
		 uint8_t kdbu[32], char *err, size_t errlen) LWC_WUR;

#endif
