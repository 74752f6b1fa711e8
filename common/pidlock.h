/*
 * pidlock.h - one server per state directory.
 *
 * A server takes an exclusive flock(2) on DIR/NAME before it touches
 * anything in DIR, and writes its pid into that file (PostgreSQL's
 * postmaster.pid, LMDB's lock file).  The kernel drops the lock when the
 * process dies, even by kill -9, so a stale file never blocks a restart;
 * a second server on the same directory is refused with the holder's pid.
 * Only the holder ever unlinks the file (at release), and an acquirer that
 * locked a file unlinked meanwhile tries again, so two processes can never
 * both believe they hold the lock.
 */
#ifndef LWC_PIDLOCK_H
#define LWC_PIDLOCK_H

#include <stddef.h>

#include "lwc_err.h"

struct pidlock {
	int fd;                    /* -1 when not held                      */
	char path[600];            /* DIR/NAME                               */
};

/* Take the lock on dir (which must exist) without waiting.  LWC_ERR_BUSY
 * when a live process holds it: err says "state directory DIR is in use by
 * pid N".  what names the holder's job for that message ("lwc-proxy serve"). */
int pidlock_acquire(struct pidlock *pl, const char *dir, const char *name,
		    char *err, size_t errlen) LWC_WUR;

/* Unlink the file and drop the lock (no-op when not held). */
void pidlock_release(struct pidlock *pl);

#endif
