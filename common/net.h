/*
 * net.h - TCP addresses and blocking client connections.
 */
#ifndef LWC_NET_H
#define LWC_NET_H

#include <stddef.h>
#include <sys/socket.h>

#include "lwc_err.h"

/* Parse "HOST:PORT" or "[V6]:PORT" into a socket address (numeric port). */
int net_parse_addr(const char *hostport, struct sockaddr_storage *ss, socklen_t *len,
		   char *err, size_t errlen) LWC_WUR;

/* Connect to HOST:PORT within timeout_ms; *fd is a blocking socket with
 * TCP_NODELAY and SIGPIPE suppressed by the caller (MSG_NOSIGNAL is not
 * available to write(2): binaries ignore SIGPIPE). */
int net_connect(const char *hostport, int timeout_ms, int *fd,
		char *err, size_t errlen) LWC_WUR;

/* "HOST:PORT" of a socket address, for logs. */
void net_addr_str(const struct sockaddr *sa, char *buf, size_t len);

#endif
