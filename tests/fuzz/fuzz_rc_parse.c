/*
 * fuzz_rc_parse.c - libFuzzer target: what the Redis Cluster backend parses
 * (cloudstore/rc_parse.c): the redis-cluster: store string, MOVED / ASK
 * redirections, version fields, key slots, and CLUSTER SLOTS answers read
 * from raw RESP bytes by hiredis's own reply reader (the router reads every
 * answer through that reader, so these are the bytes a node could send).
 *
 * The first input byte picks the parser, the rest is its input.  Oracles
 * beyond the sanitizers: a parsed store string has 1..RC_SEEDS_MAX seeds
 * with non-empty hosts and ports in 1..65535, wait and timeout in range; a
 * parsed redirection has a slot < 16384 and a port in 1..65535; a parsed
 * u64 prints back as the same text; a slot map has ranges inside 0..16383
 * with start <= end; crc16 of "123456789" is 0x31C3 (the specification's
 * check value) and a key's slot equals the slot of its hash tag.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "../../cloudstore/rc_parse.h"

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz_rc_parse: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                  \
			abort();                                             \
		}                                                            \
	} while (0)

static void check_spec(const uint8_t *d, size_t n)
{
	char *s = malloc(n + 1), err[256];
	struct rc_spec spec;

	if (s == NULL)
		return;
	memcpy(s, d, n);
	s[n] = '\0';
	err[0] = '\0';
	if (rc_spec_parse(s, &spec, err, sizeof(err)) == LWC_OK) {
		CHECK(spec.nseeds >= 1 && spec.nseeds <= RC_SEEDS_MAX);
		for (size_t i = 0; i < spec.nseeds; i++) {
			CHECK(spec.seed[i].host[0] != '\0');
			CHECK(strlen(spec.seed[i].host) < RC_HOST_MAX);
			CHECK(spec.seed[i].port >= 1 && spec.seed[i].port <= 65535);
		}
		CHECK(spec.wait >= 0 && spec.wait <= RC_WAIT_MAX);
		CHECK(spec.timeout_ms >= 100);
		CHECK(strlen(spec.prefix) < RC_PREFIX_MAX && strchr(spec.prefix, '{') == NULL);
	} else {
		CHECK(err[0] != '\0' && memchr(err, '\0', sizeof(err)) != NULL);
	}
	free(s);
}

static void check_redirect(const uint8_t *d, size_t n)
{
	char host[RC_HOST_MAX];
	unsigned slot;
	int ask, port;

	if (rc_parse_redirect((const char *)d, n, &ask, &slot, host, &port) == LWC_OK) {
		CHECK(slot < RC_SLOTS);
		CHECK(port >= 1 && port <= 65535);
		CHECK(ask == 0 || ask == 1);
		CHECK(strlen(host) < RC_HOST_MAX);
	}
}

static void check_u64(const uint8_t *d, size_t n)
{
	uint64_t v;
	char back[32];

	if (rc_parse_u64((const char *)d, n, &v) == LWC_OK) {
		int k = snprintf(back, sizeof(back), "%llu", (unsigned long long)v);
		CHECK(k > 0 && (size_t)k == n && memcmp(back, d, n) == 0);
	}
}

static void check_slot(const uint8_t *d, size_t n)
{
	const char *k = (const char *)d;
	const char *open = memchr(k, '{', n);
	unsigned s = rc_key_slot(k, n);

	CHECK(s < RC_SLOTS);
	if (open != NULL) {
		const char *close = memchr(open + 1, '}', n - (size_t)(open - k) - 1);
		if (close != NULL && close > open + 1)
			CHECK(s == rc_key_slot(open + 1, (size_t)(close - open - 1)));
	}
}

static void check_slots_reply(const uint8_t *d, size_t n)
{
	redisReader *r = redisReaderCreate();
	struct rc_range *rg = malloc(RC_SLOTS * sizeof(*rg));
	void *rep = NULL;

	if (r == NULL || rg == NULL)
		goto out;
	if (redisReaderFeed(r, (const char *)d, n) != REDIS_OK)
		goto out;
	while (redisReaderGetReply(r, &rep) == REDIS_OK && rep != NULL) {
		const redisReply *x = rep;
		size_t m = 0;
		if (rc_parse_slots(x, rg, RC_SLOTS, &m) == LWC_OK) {
			CHECK(m <= RC_SLOTS);
			for (size_t i = 0; i < m; i++) {
				CHECK(rg[i].start <= rg[i].end && rg[i].end < RC_SLOTS);
				CHECK(rg[i].port >= 1 && rg[i].port <= 65535);
				CHECK(strlen(rg[i].host) < RC_HOST_MAX);
			}
		}
		if (x->type == REDIS_REPLY_ERROR)
			check_redirect((const uint8_t *)x->str, x->len);
		if (x->type == REDIS_REPLY_STRING)
			check_u64((const uint8_t *)x->str, x->len);
		freeReplyObject(rep);
		rep = NULL;
	}
out:
	free(rg);
	if (r)
		redisReaderFree(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int checked;

	if (!checked) {
		CHECK(rc_crc16("123456789", 9) == 0x31C3);
		CHECK(rc_key_slot("{user1000}.following", 20) == rc_key_slot("user1000", 8));
		checked = 1;
	}
	if (size == 0)
		return 0;
	switch (data[0] % 5) {
	case 0:
		check_spec(data + 1, size - 1);
		break;
	case 1:
		check_redirect(data + 1, size - 1);
		break;
	case 2:
		check_u64(data + 1, size - 1);
		break;
	case 3:
		check_slot(data + 1, size - 1);
		break;
	default:
		check_slots_reply(data + 1, size - 1);
		break;
	}
	return 0;
}
