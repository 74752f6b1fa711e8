/*
 * lwc_err.h - error codes shared by every LWC library and binary.
 *
 * Libraries (common/, client/) never log and never exit: they return one of
 * these codes (0 or a negative value) and, where a detail helps the operator,
 * fill a caller-supplied message buffer.  lwc_strerror() turns a code into a
 * stable, human-readable text; the wire carries the code as a positive
 * number so both ends agree on its meaning.
 */
#ifndef LWC_ERR_H
#define LWC_ERR_H

#include <stddef.h>

#define LWC_WUR __attribute__((warn_unused_result))

/* X-macro: name, value, text.  Values are part of the wire protocol. */
#define LWC_ERRORS(X)                                                        \
	X(LWC_OK,            0,  "success")                                  \
	X(LWC_ERR_NOMEM,    -1,  "out of memory")                            \
	X(LWC_ERR_IO,       -2,  "input/output error")                       \
	X(LWC_ERR_PROTO,    -3,  "malformed message")                        \
	X(LWC_ERR_TOO_BIG,  -4,  "message exceeds the maximum frame size")   \
	X(LWC_ERR_AUTH,     -5,  "authentication failed (wrong or unknown key)") \
	X(LWC_ERR_INTEGRITY,-6,  "integrity check failed")                   \
	X(LWC_ERR_NOT_FOUND,-7,  "not found")                                \
	X(LWC_ERR_VERSION,  -8,  "bad block version")                        \
	X(LWC_ERR_BLOCK_SIZE,-9, "wrong block size")                         \
	X(LWC_ERR_STORE,   -10,  "storage backend error")                    \
	X(LWC_ERR_ARG,     -11,  "invalid argument")                         \
	X(LWC_ERR_EXISTS,  -12,  "already exists")                           \
	X(LWC_ERR_PERM,    -13,  "insecure file permissions")                \
	X(LWC_ERR_CLOSED,  -14,  "connection closed")                        \
	X(LWC_ERR_TIMEOUT, -15,  "timed out")                                \
	X(LWC_ERR_UNKNOWN_OP,-16,"unknown operation")                        \
	X(LWC_ERR_CRYPTO,  -17,  "cryptographic library failure")            \
	X(LWC_ERR_FORMAT,  -18,  "bad file format")                          \
	X(LWC_ERR_CHECKSUM,-19,  "checksum mismatch")                        \
	X(LWC_ERR_REVOKED, -20,  "key revoked")                              \
	X(LWC_ERR_BUSY,    -21,  "server busy")                              \
	X(LWC_ERR_DUPLICATE,-22, "duplicate block id in request")            \
	X(LWC_ERR_SHUTDOWN,-23,  "server shutting down")                     \
	X(LWC_ERR_NO_TABLE,-24,  "no such table")                            \
	X(LWC_ERR_UNIQUE,  -25,  "duplicate key value violates a unique constraint") \
	X(LWC_ERR_ABORTED, -26,  "statement aborted")                        \
	X(LWC_ERR_SCHEMA,  -27,  "statement does not match the table definition") \
	X(LWC_ERR_NO_USER, -28,  "unknown user")                             \
	X(LWC_ERR_NO_SPACE,-29,  "no space left on device")                  \
	X(LWC_ERR_STALE,   -30,  "proxy state and cloud store do not match (stale state)")

enum lwc_err {
#define LWC_ERR_ENUM(name, val, text) name = (val),
	LWC_ERRORS(LWC_ERR_ENUM)
#undef LWC_ERR_ENUM
	LWC_ERR_MIN_ = -30
};

/* Stable text for a code; never NULL. */
const char *lwc_strerror(int err);

/* Symbolic name ("LWC_ERR_AUTH") for a code; never NULL. */
const char *lwc_errname(int err);

/* A write under path failed with errno e: is it the disk that is full?
 * ENOSPC, or EIO/EFBIG while the file system holding path has under 1 MiB
 * left (LMDB reports a short write, which is what a full disk gives, as
 * EIO).  Then LWC_ERR_NO_SPACE, else fallback. */
int lwc_disk_full(const char *path, int e, int fallback);

/* snprintf into an optional message buffer (buf may be NULL). */
void lwc_errf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
