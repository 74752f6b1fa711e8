/*
 * keyfile.h - secret key files (K_CS, K_OPS, user keys, enrollments, ...).
 *
 *   # <description>
 *   # created: 2026-11-21T12:00:00Z
 *   # <more comment lines>
 *   <KIND>-<VERSION>:<hex of the secret><hex of a 4-byte checksum>
 *
 * KIND names the key ("LWC-CS-KEY"), VERSION is 1; the checksum is the first
 * 4 bytes of BLAKE2b-256 over "KIND-VERSION" and the secret, so a key of one
 * kind is never taken for another and a damaged file is detected.  Files are
 * created 0600 with O_EXCL (never overwritten) and refused when group or
 * others may read them.  The first line that is neither empty nor a "#"
 * comment is the key line; what follows it is ignored.
 *
 * Each refusal has its own code and message (none ever shows the secret):
 *   LWC_ERR_PERM       "key file is readable by group or others ...; run chmod 600 on it"
 *   LWC_ERR_CHECKSUM   "checksum mismatch: the key file is damaged" /
 *                      "damaged KIND key line" (wrong length, not hex)
 *   LWC_ERR_FORMAT     "unknown key file version N (this build reads KIND-1)"
 *   LWC_ERR_FORMAT     "not a KIND key file" [" (it holds a OTHER key)"]
 *   LWC_ERR_NOT_FOUND, LWC_ERR_IO (with strerror)
 */
#ifndef LWC_KEYFILE_H
#define LWC_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "lwc_err.h"

#define KEYFILE_SECRET_MAX 256u
/* Larger files are refused (LWC_ERR_FORMAT) without being parsed. */
#define KEYFILE_MAX_BYTES  4096u

/* Receives each comment line before the key line: the text after the '#',
 * NUL-terminated, without the line end.  Not secret. */
typedef void (*keyfile_comment_fn)(void *arg, const char *text);

/* Create path (must not exist) holding secret[0..len). */
int keyfile_write(const char *path, const char *kind, const char *description,
		  const uint8_t *secret, size_t len, char *err, size_t errlen) LWC_WUR;

/* Same with several comment lines: "# comments[0]" (the description), then
 * "# created: <ISO-8601 UTC>", then "# comments[1..n)".  Each comment must be
 * one line of text (LWC_ERR_ARG otherwise); n may be 0. */
int keyfile_write_lines(const char *path, const char *kind,
			const char *const *comments, size_t n,
			const uint8_t *secret, size_t len, char *err, size_t errlen) LWC_WUR;

/* Read a file written by keyfile_write with the same kind; secret must have
 * room for len bytes and receives exactly len bytes (a key of another length
 * is a damaged line).  On failure secret is left untouched. */
int keyfile_read(const char *path, const char *kind, uint8_t *secret, size_t len,
		 char *err, size_t errlen) LWC_WUR;

/* Read a key of 1..cap bytes into secret, its length into *len; on_comment
 * (may be NULL) sees the comment lines before the key line. */
int keyfile_read_var(const char *path, const char *kind, uint8_t *secret, size_t cap,
		     size_t *len, keyfile_comment_fn on_comment, void *arg,
		     char *err, size_t errlen) LWC_WUR;

/* The parser of keyfile_read_var on a memory buffer (text[0..text_len), need
 * not be NUL-terminated): no file, no permission check, and messages without
 * a path.  A NUL byte or more than KEYFILE_MAX_BYTES is LWC_ERR_FORMAT. */
int keyfile_parse(const char *text, size_t text_len, const char *kind,
		  uint8_t *secret, size_t cap, size_t *len,
		  keyfile_comment_fn on_comment, void *arg, char *err, size_t errlen) LWC_WUR;

/* Load a key file for parsing: refuses group/other access (LWC_ERR_PERM), a
 * missing file (LWC_ERR_NOT_FOUND), anything but a regular file (LWC_ERR_IO),
 * and more than KEYFILE_MAX_BYTES (LWC_ERR_FORMAT).  text must hold
 * KEYFILE_MAX_BYTES + 1 bytes; the caller wipes it. */
int keyfile_load(const char *path, char *text, size_t *text_len,
		 char *err, size_t errlen) LWC_WUR;

#endif
