/*
 * wire.h - framing: a 4-byte big-endian length, then the body.
 *
 * The length is checked against a hard maximum before anything is allocated
 * or decoded.  Frames exchanged before a channel is authenticated have a
 * much smaller cap (WIRE_PREAUTH_MAX) so an unauthenticated peer cannot make
 * a server allocate large buffers.
 *
 * The blocking helpers (wire_send_frame, wire_recv_frame) serve clients and
 * tests; servers parse frames out of libevent buffers with wire_frame_len().
 */
#ifndef LWC_WIRE_H
#define LWC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "lwc_err.h"

#define WIRE_HDR_BYTES     4u
#define WIRE_PREAUTH_MAX   4096u                 /* Hello, HelloReply, Auth, Error */
#define WIRE_FRAME_MAX     (128u * 1024u * 1024u) /* hard cap after authentication */

/* Catalog.features (common/lwc.proto): what the proxy takes beyond the
 * first release, so a newer client talks to an older proxy as before. */
#define WIRE_FEATURE_TOKENS_AS_BEFORE 1u     /* empty UPDATE token: unchanged */
#define WIRE_FEATURE_TOKEN_BLOCK      2u     /* INSERT rows' tokens in one field */

static inline void wire_put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t wire_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Length of the frame whose header is hdr: LWC_ERR_TOO_BIG above max,
 * LWC_ERR_PROTO for an empty frame. */
int wire_frame_len(const uint8_t hdr[WIRE_HDR_BYTES], uint32_t max, uint32_t *len) LWC_WUR;

/* Write all of buf to fd (retrying on EINTR and short writes). */
int wire_write_all(int fd, const void *buf, size_t len) LWC_WUR;

/* Read exactly len bytes; timeout_ms < 0 waits forever.
 * LWC_ERR_CLOSED on EOF, LWC_ERR_TIMEOUT, LWC_ERR_IO. */
int wire_read_full(int fd, void *buf, size_t len, int timeout_ms) LWC_WUR;

/* Write all of the cnt pieces (sendmsg, writev where fd is no socket);
 * iov is used up as it goes. */
struct iovec;
int wire_writev_all(int fd, struct iovec *iov, int cnt) LWC_WUR;

/* Send one frame (header and body in one writev). */
int wire_send_frame(int fd, const void *body, size_t len) LWC_WUR;

/* Receive one frame of at most max bytes into a malloc'ed *body. */
int wire_recv_frame(int fd, uint32_t max, uint8_t **body, size_t *len,
		    int timeout_ms) LWC_WUR;

#endif
