/*
 * test_rc_parse.c - the pure parts of the Redis Cluster backend
 * (cloudstore/rc_parse.c): CRC16 and key slots against the Redis Cluster
 * specification's values, the redis-cluster: store string, MOVED / ASK
 * redirections, version fields, and CLUSTER SLOTS answers given as raw
 * RESP bytes to hiredis's reply reader (as the router receives them).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "../../cloudstore/rc_parse.h"

static void test_crc16_slots(void **state)
{
	(void)state;
	/* the specification's check value and examples */
	assert_int_equal(rc_crc16("123456789", 9), 0x31C3);
	assert_int_equal(rc_crc16("", 0), 0);
	/* hash tags: the first {...} that is not empty */
	assert_int_equal(rc_key_slot("{user1000}.following", 20), rc_key_slot("user1000", 8));
	assert_int_equal(rc_key_slot("{user1000}.followers", 20), rc_key_slot("user1000", 8));
	assert_int_equal(rc_key_slot("foo{}{bar}", 10), rc_crc16("foo{}{bar}", 10) & 16383);
	assert_int_equal(rc_key_slot("foo{{bar}}zap", 13), rc_key_slot("{bar", 4));
	assert_int_equal(rc_key_slot("foo{bar}{zap}", 13), rc_key_slot("bar", 3));
	assert_int_equal(rc_key_slot("foo", 3), 12182);      /* CLUSTER KEYSLOT foo */
	assert_int_equal(rc_key_slot("lwc:b{42}", 9), rc_key_slot("42", 2));
	assert_int_equal(rc_key_slot("x:b{42}", 7), rc_key_slot("lwc:b{42}", 9));
	assert_int_equal(rc_key_slot("{", 1), rc_crc16("{", 1) & 16383);
}

static void test_spec(void **state)
{
	struct rc_spec sp;
	char err[256];
	static const char *const bad[] = {
		"", "h", "h:", ":1", "h:0", "h:65536", "h:1x", "h:-1", "h:01", "wait=1",
		"h:1,wait=", "h:1,wait=17", "h:1,wait=x", "h:1,timeout=99", "h:1,timeout=x",
		"h:1,prefix=a{b}", "h:1,prefix=", "h:1,,h:2", "h:1,", "h 1:2", "[::1:5",
		"h:1,foo=bar",
	};
	(void)state;

	assert_int_equal(rc_spec_parse("127.0.0.1:7000", &sp, err, sizeof(err)), LWC_OK);
	assert_int_equal(sp.nseeds, 1);
	assert_string_equal(sp.seed[0].host, "127.0.0.1");
	assert_int_equal(sp.seed[0].port, 7000);
	assert_int_equal(sp.wait, 0);
	assert_int_equal(sp.timeout_ms, 30000);
	assert_string_equal(sp.prefix, "lwc");

	assert_int_equal(rc_spec_parse("a.example:1,[::1]:7001,wait=2,timeout=500,prefix=t_1",
				       &sp, err, sizeof(err)), LWC_OK);
	assert_int_equal(sp.nseeds, 2);
	assert_string_equal(sp.seed[0].host, "a.example");
	assert_string_equal(sp.seed[1].host, "::1");
	assert_int_equal(sp.seed[1].port, 7001);
	assert_int_equal(sp.wait, 2);
	assert_int_equal(sp.timeout_ms, 500);
	assert_string_equal(sp.prefix, "t_1");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (rc_spec_parse(bad[i], &sp, err, sizeof(err)) != LWC_ERR_ARG)
			fail_msg("'%s' accepted", bad[i]);
		assert_true(err[0] != '\0');
	}
}

static void test_redirect(void **state)
{
	char host[RC_HOST_MAX];
	unsigned slot;
	int ask, port;
	static const char *const bad[] = {
		"MOVED 1", "MOVED x 1.2.3.4:5", "MOVED 16384 h:1", "MOVED 1 h",
		"MOVED 1 h:0", "ASK 1 h:99999", "MOVED -1 h:1", "MOVED 1 h:1 ",
	};
	(void)state;

	assert_int_equal(rc_parse_redirect("MOVED 3999 127.0.0.1:6381", 25, &ask, &slot, host,
					   &port), LWC_OK);
	assert_int_equal(ask, 0);
	assert_int_equal(slot, 3999);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 6381);
	assert_int_equal(rc_parse_redirect("ASK 16383 :7000", 15, &ask, &slot, host, &port),
			 LWC_OK);
	assert_int_equal(ask, 1);
	assert_int_equal(slot, 16383);
	assert_string_equal(host, "");
	assert_int_equal(rc_parse_redirect("MOVED 0 fe80::1:7000", 20, &ask, &slot, host, &port),
			 LWC_OK);
	assert_string_equal(host, "fe80::1");
	/* other errors are not redirections */
	assert_int_equal(rc_parse_redirect("ERR unknown", 11, &ask, &slot, host, &port),
			 LWC_ERR_NOT_FOUND);
	assert_int_equal(rc_parse_redirect("MOVEDX 1 h:1", 12, &ask, &slot, host, &port),
			 LWC_ERR_NOT_FOUND);
	assert_int_equal(rc_parse_redirect("MOVED", 5, &ask, &slot, host, &port),
			 LWC_ERR_NOT_FOUND);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rc_parse_redirect(bad[i], strlen(bad[i]), &ask, &slot, host, &port) !=
		    LWC_ERR_PROTO)
			fail_msg("'%s' accepted", bad[i]);
}

static void test_u64(void **state)
{
	uint64_t v;
	static const char *const bad[] = {
		"", "-1", "+1", "01", " 1", "1 ", "18446744073709551616", "99999999999999999999",
		"1a", "0x10",
	};
	(void)state;

	assert_int_equal(rc_parse_u64("0", 1, &v), LWC_OK);
	assert_true(v == 0);
	assert_int_equal(rc_parse_u64("18446744073709551615", 20, &v), LWC_OK);
	assert_true(v == UINT64_MAX);
	assert_int_equal(rc_parse_u64("42", 2, &v), LWC_OK);
	assert_true(v == 42);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rc_parse_u64(bad[i], strlen(bad[i]), &v) != LWC_ERR_PROTO)
			fail_msg("'%s' accepted", bad[i]);
}

/* The first reply of RESP bytes (to be freed), through hiredis's reader. */
static redisReply *resp(const char *bytes)
{
	redisReader *r = redisReaderCreate();
	void *rep = NULL;

	assert_non_null(r);
	assert_int_equal(redisReaderFeed(r, bytes, strlen(bytes)), REDIS_OK);
	assert_int_equal(redisReaderGetReply(r, &rep), REDIS_OK);
	assert_non_null(rep);
	redisReaderFree(r);
	return rep;
}

static void test_slots(void **state)
{
	struct rc_range rg[4];
	size_t n;
	redisReply *r;
	static const char *const bad[] = {
		"+OK\r\n",
		"*1\r\n*2\r\n:0\r\n:1\r\n",                                  /* no master */
		"*1\r\n*3\r\n:5\r\n:4\r\n*2\r\n$1\r\nh\r\n:1\r\n",           /* end < start */
		"*1\r\n*3\r\n:0\r\n:16384\r\n*2\r\n$1\r\nh\r\n:1\r\n",       /* slot 16384 */
		"*1\r\n*3\r\n:0\r\n:1\r\n*2\r\n$1\r\nh\r\n:0\r\n",           /* port 0 */
		"*1\r\n*3\r\n:0\r\n:1\r\n*2\r\n:1\r\n:1\r\n",                /* host not text */
		"*1\r\n*3\r\n$1\r\n0\r\n:1\r\n*2\r\n$1\r\nh\r\n:1\r\n",      /* start not int */
		"*1\r\n*3\r\n:0\r\n:1\r\n*1\r\n$1\r\nh\r\n",                 /* no port */
	};
	(void)state;

	/* Redis 7: [start, end, [ip, port, id, {hostname}], replicas...] */
	r = resp("*2\r\n"
		 "*4\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:30001\r\n$2\r\nid\r\n*0\r\n"
		 "*3\r\n$9\r\n127.0.0.1\r\n:30004\r\n$2\r\nid\r\n"
		 "*3\r\n:5461\r\n:16383\r\n*2\r\n$1\r\n?\r\n:30002\r\n");
	assert_int_equal(rc_parse_slots(r, rg, 4, &n), LWC_OK);
	assert_int_equal(n, 2);
	assert_int_equal(rg[0].start, 0);
	assert_int_equal(rg[0].end, 5460);
	assert_string_equal(rg[0].host, "127.0.0.1");
	assert_int_equal(rg[0].port, 30001);
	assert_int_equal(rg[1].start, 5461);
	assert_int_equal(rg[1].end, 16383);
	assert_string_equal(rg[1].host, "");     /* "?": the node did not know */
	assert_int_equal(rc_parse_slots(r, rg, 1, &n), LWC_ERR_PROTO);   /* too many */
	freeReplyObject(r);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = resp(bad[i]);
		if (rc_parse_slots(r, rg, 4, &n) != LWC_ERR_PROTO)
			fail_msg("bad slot map %zu accepted", i);
		freeReplyObject(r);
	}
	assert_int_equal(rc_parse_slots(NULL, rg, 4, &n), LWC_ERR_PROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc16_slots),
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_redirect),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
