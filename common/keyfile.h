/*
 * keyfile.h - secret key files (K_CS, K_OPS, ...).
 *
 *   # <description>
 *   # created: 2026-11-21T12:00:00Z
 *   <KIND>-<VERSION>:<hex of the secret><hex of a 4-byte checksum>
 *
 * KIND names the key ("LWC-CS-KEY"), VERSION is 1; the checksum is the first
 * 4 bytes of BLAKE2b-256 over "KIND-VERSION" and the secret, so a key of one
 * kind is never taken for another and a damaged file is detected.  Files are
 * created 0600 with O_EXCL (never overwritten) and refused when group or
 * others may read them.
 */
#ifndef LWC_KEYFILE_H
#define LWC_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "lwc_err.h"

#define KEYFILE_SECRET_MAX 256u

/* Create path (must not exist) holding secret[0..len). */
int keyfile_write(const char *path, const char *kind, const char *description,
		  const uint8_t *secret, size_t len, char *err, size_t errlen) LWC_WUR;

/* Read a file written by keyfile_write with the same kind; secret must have
 * room for len bytes and receives exactly len bytes.  Errors: LWC_ERR_PERM
 * (readable by others), LWC_ERR_FORMAT (not a key file of this kind, or an
 * unknown version), LWC_ERR_CHECKSUM, LWC_ERR_NOT_FOUND, LWC_ERR_IO. */
int keyfile_read(const char *path, const char *kind, uint8_t *secret, size_t len,
		 char *err, size_t errlen) LWC_WUR;

#endif
