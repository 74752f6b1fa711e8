/*
 * wire.c - see wire.h.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "wire.h"

int wire_frame_len(const uint8_t hdr[WIRE_HDR_BYTES], uint32_t max, uint32_t *len)
{
	uint32_t n = wire_get_u32(hdr);

	if (n == 0)
		return LWC_ERR_PROTO;
	if (n > max)
		return LWC_ERR_TOO_BIG;
	*len = n;
	return LWC_OK;
}

int wire_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		/* send(MSG_NOSIGNAL) on sockets: a peer that went away is an error
		 * here, not a SIGPIPE that kills the program */
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EPIPE || errno == ECONNRESET ? LWC_ERR_CLOSED : LWC_ERR_IO;
		}
		p += n;
		len -= (size_t)n;
	}
	return LWC_OK;
}

int wire_read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n;

		if (timeout_ms >= 0) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			int r = poll(&pfd, 1, timeout_ms);
			if (r < 0) {
				if (errno == EINTR)
					continue;
				return LWC_ERR_IO;
			}
			if (r == 0)
				return LWC_ERR_TIMEOUT;
		}
		n = read(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == ECONNRESET ? LWC_ERR_CLOSED : LWC_ERR_IO;
		}
		if (n == 0)
			return LWC_ERR_CLOSED;
		p += n;
		len -= (size_t)n;
	}
	return LWC_OK;
}

int wire_writev_all(int fd, struct iovec *iov, int cnt)
{
	while (cnt > 0) {
		struct msghdr mh;
		ssize_t n;

		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)cnt;
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = writev(fd, iov, cnt);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EPIPE || errno == ECONNRESET ? LWC_ERR_CLOSED : LWC_ERR_IO;
		}
		/* past what went out, whole pieces first */
		while (cnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return LWC_OK;
}

int wire_send_frame(int fd, const void *body, size_t len)
{
	uint8_t hdr[WIRE_HDR_BYTES];
	struct iovec iov[2];

	if (len == 0 || len > WIRE_FRAME_MAX)
		return LWC_ERR_TOO_BIG;
	wire_put_u32(hdr, (uint32_t)len);
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)(uintptr_t)body;
	iov[1].iov_len = len;
	return wire_writev_all(fd, iov, 2);
}

int wire_recv_frame(int fd, uint32_t max, uint8_t **body, size_t *len, int timeout_ms)
{
	uint8_t hdr[WIRE_HDR_BYTES];
	uint32_t n;
	uint8_t *buf;
	int rc;

	*body = NULL;
	*len = 0;
	if ((rc = wire_read_full(fd, hdr, sizeof(hdr), timeout_ms)) != LWC_OK)
		return rc;
	if ((rc = wire_frame_len(hdr, max, &n)) != LWC_OK)
		return rc;
	buf = malloc(n);
	if (buf == NULL)
		return LWC_ERR_NOMEM;
	if ((rc = wire_read_full(fd, buf, n, timeout_ms)) != LWC_OK) {
		free(buf);
		return rc;
	}
	*body = buf;
	*len = n;
	return LWC_OK;
}
