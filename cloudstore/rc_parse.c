/*
 * rc_parse.c - key slots, the store string, slot maps and redirections of
 * the Redis Cluster backend (rc_parse.h).  Everything read from a server is
 * bounds-checked here before the router uses it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_parse.h"

#define RC_DEFAULT_TIMEOUT_MS 30000
#define RC_TIMEOUT_MAX_MS     3600000

/* CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as in the
 * Redis Cluster specification (crc16("123456789") = 0x31C3). */
uint16_t rc_crc16(const char *buf, size_t len)
{
	uint16_t crc = 0;

	for (size_t i = 0; i < len; i++) {
		crc ^= (uint16_t)((uint8_t)buf[i] << 8);
		for (int b = 0; b < 8; b++)
			crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
	}
	return crc;
}

unsigned rc_key_slot(const char *key, size_t len)
{
	const char *open = memchr(key, '{', len), *close;

	if (open != NULL) {
		size_t rest = len - (size_t)(open - key) - 1;
		close = memchr(open + 1, '}', rest);
		if (close != NULL && close > open + 1)
			return rc_crc16(open + 1, (size_t)(close - open - 1)) & (RC_SLOTS - 1);
	}
	return rc_crc16(key, len) & (RC_SLOTS - 1);
}

int rc_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20 || (len > 1 && s[0] == '0'))
		return LWC_ERR_PROTO;
	for (size_t i = 0; i < len; i++) {
		unsigned d;
		if (s[i] < '0' || s[i] > '9')
			return LWC_ERR_PROTO;
		d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return LWC_ERR_PROTO;
		v = v * 10 + d;
	}
	*out = v;
	return LWC_OK;
}

/* A decimal int in [lo, hi] from s[0..len). */
static int parse_int(const char *s, size_t len, long lo, long hi, int *out)
{
	uint64_t v;

	if (rc_parse_u64(s, len, &v) != LWC_OK || v < (uint64_t)lo || v > (uint64_t)hi)
		return LWC_ERR_ARG;
	*out = (int)v;
	return LWC_OK;
}

/* "HOST:PORT" or "[V6]:PORT" of s[0..len) into host, port.  An empty HOST
 * is allowed only when empty_ok. */
static int parse_hostport(const char *s, size_t len, int empty_ok, char host[RC_HOST_MAX],
			  int *port)
{
	const char *colon = NULL, *h = s;
	size_t hl;

	for (size_t i = len; i-- > 0;) {
		if (s[i] == ':') {
			colon = s + i;
			break;
		}
	}
	if (colon == NULL)
		return LWC_ERR_ARG;
	if (parse_int(colon + 1, len - (size_t)(colon + 1 - s), 1, 65535, port) != LWC_OK)
		return LWC_ERR_ARG;
	hl = (size_t)(colon - s);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if ((hl == 0 && !empty_ok) || hl >= RC_HOST_MAX)
		return LWC_ERR_ARG;
	for (size_t i = 0; i < hl; i++)
		if ((unsigned char)h[i] <= ' ' || h[i] == ',' || h[i] == '[' || h[i] == ']' ||
		    (unsigned char)h[i] >= 0x7f)
			return LWC_ERR_ARG;
	memcpy(host, h, hl);
	host[hl] = '\0';
	return LWC_OK;
}

int rc_spec_parse(const char *spec, struct rc_spec *out, char *err, size_t errlen)
{
	const char *p = spec;

	memset(out, 0, sizeof(*out));
	out->timeout_ms = RC_DEFAULT_TIMEOUT_MS;
	snprintf(out->prefix, sizeof(out->prefix), "lwc");
	if (spec == NULL || spec[0] == '\0') {
		lwc_errf(err, errlen, "redis-cluster store needs seed nodes "
			 "(redis-cluster:HOST:PORT[,HOST:PORT...][,wait=N])");
		return LWC_ERR_ARG;
	}
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > 5 && strncmp(p, "wait=", 5) == 0) {
			if (parse_int(p + 5, len - 5, 0, RC_WAIT_MAX, &out->wait) != LWC_OK) {
				lwc_errf(err, errlen, "redis-cluster: wait=%.*s is not a number of "
					 "replicas in 0..%d", (int)(len - 5), p + 5, RC_WAIT_MAX);
				return LWC_ERR_ARG;
			}
		} else if (len > 8 && strncmp(p, "timeout=", 8) == 0) {
			if (parse_int(p + 8, len - 8, 100, RC_TIMEOUT_MAX_MS,
				      &out->timeout_ms) != LWC_OK) {
				lwc_errf(err, errlen, "redis-cluster: timeout=%.*s is not a number "
					 "of milliseconds in 100..%d", (int)(len - 8), p + 8,
					 RC_TIMEOUT_MAX_MS);
				return LWC_ERR_ARG;
			}
		} else if (len > 7 && strncmp(p, "prefix=", 7) == 0) {
			if (len - 7 >= RC_PREFIX_MAX) {
				lwc_errf(err, errlen, "redis-cluster: prefix longer than %d bytes",
					 RC_PREFIX_MAX - 1);
				return LWC_ERR_ARG;
			}
			for (size_t i = 7; i < len; i++) {
				char c = p[i];
				if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				      (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.')) {
					lwc_errf(err, errlen, "redis-cluster: prefix may hold letters, "
						 "digits, '_', '-' and '.' only");
					return LWC_ERR_ARG;
				}
			}
			memcpy(out->prefix, p + 7, len - 7);
			out->prefix[len - 7] = '\0';
		} else {
			if (out->nseeds == RC_SEEDS_MAX) {
				lwc_errf(err, errlen, "redis-cluster: more than %d seed nodes",
					 RC_SEEDS_MAX);
				return LWC_ERR_ARG;
			}
			if (parse_hostport(p, len, 0, out->seed[out->nseeds].host,
					   &out->seed[out->nseeds].port) != LWC_OK) {
				lwc_errf(err, errlen, "redis-cluster: '%.*s' is not HOST:PORT, "
					 "wait=N, timeout=MS or prefix=P", (int)(len > 80 ? 80 : len),
					 p);
				return LWC_ERR_ARG;
			}
			out->nseeds++;
		}
		if (end == NULL)
			break;
		p = end + 1;
	}
	if (out->nseeds == 0) {
		lwc_errf(err, errlen, "redis-cluster: no seed node (HOST:PORT) given");
		return LWC_ERR_ARG;
	}
	return LWC_OK;
}

static int get_int(const redisReply *r, long long lo, long long hi, long long *out)
{
	if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer < lo || r->integer > hi)
		return -1;
	*out = r->integer;
	return 0;
}

int rc_parse_slots(const redisReply *r, struct rc_range *out, size_t max, size_t *n)
{
	*n = 0;
	if (r == NULL || r->type != REDIS_REPLY_ARRAY)
		return LWC_ERR_PROTO;
	for (size_t i = 0; i < r->elements; i++) {
		const redisReply *e = r->element[i], *m;
		long long start, end, port;

		if (e == NULL || e->type != REDIS_REPLY_ARRAY || e->elements < 3)
			return LWC_ERR_PROTO;
		m = e->element[2];
		if (get_int(e->element[0], 0, RC_SLOTS - 1, &start) != 0 ||
		    get_int(e->element[1], start, RC_SLOTS - 1, &end) != 0 ||
		    m == NULL || m->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
		    m->element[0] == NULL || m->element[0]->type != REDIS_REPLY_STRING ||
		    m->element[0]->len >= RC_HOST_MAX ||
		    get_int(m->element[1], 1, 65535, &port) != 0)
			return LWC_ERR_PROTO;
		if (*n == max)
			return LWC_ERR_PROTO;
		out[*n].start = (unsigned)start;
		out[*n].end = (unsigned)end;
		out[*n].port = (int)port;
		memcpy(out[*n].host, m->element[0]->str, m->element[0]->len);
		out[*n].host[m->element[0]->len] = '\0';
		/* a NUL inside the address, or "?" (unknown endpoint): ask the seed */
		if (strlen(out[*n].host) != m->element[0]->len || strcmp(out[*n].host, "?") == 0)
			out[*n].host[0] = '\0';
		(*n)++;
	}
	return LWC_OK;
}

int rc_parse_redirect(const char *msg, size_t len, int *ask, unsigned *slot,
		      char host[RC_HOST_MAX], int *port)
{
	const char *p, *sp;
	size_t skip, rest;
	int s;

	if (len >= 6 && memcmp(msg, "MOVED ", 6) == 0) {
		*ask = 0;
		skip = 6;
	} else if (len >= 4 && memcmp(msg, "ASK ", 4) == 0) {
		*ask = 1;
		skip = 4;
	} else {
		return LWC_ERR_NOT_FOUND;
	}
	p = msg + skip;
	rest = len - skip;
	sp = memchr(p, ' ', rest);
	if (sp == NULL || parse_int(p, (size_t)(sp - p), 0, RC_SLOTS - 1, &s) != LWC_OK)
		return LWC_ERR_PROTO;
	rest -= (size_t)(sp - p) + 1;
	if (parse_hostport(sp + 1, rest, 1, host, port) != LWC_OK)
		return LWC_ERR_PROTO;
	*slot = (unsigned)s;
	return LWC_OK;
}
