/*
 * net.c - see net.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net.h"

int net_parse_addr(const char *hostport, struct sockaddr_storage *ss, socklen_t *len,
		   char *err, size_t errlen)
{
	char host[256], port[16];
	const char *colon, *h = hostport;
	size_t hl;
	struct addrinfo hints, *res = NULL;
	int r;

	if (hostport == NULL)
		return LWC_ERR_ARG;
	colon = strrchr(hostport, ':');
	if (colon == NULL || colon[1] == '\0' || strlen(colon + 1) >= sizeof(port)) {
		lwc_errf(err, errlen, "bad address '%s' (want HOST:PORT)", hostport);
		return LWC_ERR_ARG;
	}
	hl = (size_t)(colon - hostport);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl == 0 || hl >= sizeof(host)) {
		lwc_errf(err, errlen, "bad address '%s' (want HOST:PORT)", hostport);
		return LWC_ERR_ARG;
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	strcpy(port, colon + 1);
	for (const char *p = port; *p; p++) {
		if (*p < '0' || *p > '9') {
			lwc_errf(err, errlen, "bad port in '%s'", hostport);
			return LWC_ERR_ARG;
		}
	}
	if (atoi(port) > 65535) {
		lwc_errf(err, errlen, "bad port in '%s'", hostport);
		return LWC_ERR_ARG;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	r = getaddrinfo(host, port, &hints, &res);
	if (r != 0 || res == NULL) {
		lwc_errf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(r));
		return LWC_ERR_ARG;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return LWC_OK;
}

int net_connect(const char *hostport, int timeout_ms, int *fd_out,
		char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, rc, one = 1, flags;

	*fd_out = -1;
	if ((rc = net_parse_addr(hostport, &ss, &sl, err, errlen)) != LWC_OK)
		return rc;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		lwc_errf(err, errlen, "socket: %s", strerror(errno));
		return LWC_ERR_IO;
	}
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	if (connect(fd, (struct sockaddr *)&ss, sl) != 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int soerr = 0;
		socklen_t el = sizeof(soerr);

		if (errno != EINPROGRESS) {
			lwc_errf(err, errlen, "connect to %s: %s", hostport, strerror(errno));
			close(fd);
			return LWC_ERR_IO;
		}
		rc = poll(&pfd, 1, timeout_ms);
		if (rc <= 0) {
			lwc_errf(err, errlen, "connect to %s: timed out", hostport);
			close(fd);
			return LWC_ERR_TIMEOUT;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el);
		if (soerr != 0) {
			lwc_errf(err, errlen, "connect to %s: %s", hostport, strerror(soerr));
			close(fd);
			return LWC_ERR_IO;
		}
	}
	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*fd_out = fd;
	return LWC_OK;
}

void net_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		snprintf(buf, len, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		snprintf(buf, len, "[%s]:%u", host, port);
	} else {
		snprintf(buf, len, "unix");
	}
}
