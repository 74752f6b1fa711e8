/*
 * admin_client.h - client of the proxy's admin socket (a Unix socket in the
 * proxy's state directory, mode 0600): one AdminRequest frame, one
 * AdminResponse frame.  Used by `lwc-proxy user ...|status` and `lwc-kma`.
 */
#ifndef LWC_ADMIN_CLIENT_H
#define LWC_ADMIN_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "lwc.pb-c.h"
#include "lwc_err.h"

/* Send req to the socket at path and wait for the answer.  On LWC_OK *out
 * holds a successful answer (free with lwc__admin_response__free_unpacked);
 * an Error answer returns its code with its message in err. */
int admin_call(const char *path, const Lwc__AdminRequest *req, Lwc__AdminResponse **out,
	       char *err, size_t errlen) LWC_WUR;

/* One value of the proxy's status (the admin socket at path) as a number:
 * LWC_OK and *v; LWC_ERR_NOT_FOUND when the status has no such key or its
 * value is not a number; the call's error otherwise (its message in err). */
int admin_status_u64(const char *path, const char *key, uint64_t *v, char *err,
		     size_t errlen) LWC_WUR;

/* Until the proxy's status reports key as 0 (e.g. blocks_locked: it holds no
 * block, the statement before has committed), asking every 0.2 ms: LWC_OK;
 * LWC_ERR_TIMEOUT with *last the value still reported after timeout_s
 * seconds; admin_status_u64's error otherwise. */
int admin_wait_zero(const char *path, const char *key, double timeout_s, uint64_t *last,
		    char *err, size_t errlen) LWC_WUR;

#endif
