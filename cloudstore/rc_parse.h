/*
 * rc_parse.h - the pure parts of the Redis Cluster backend: key slots, the
 * --store string, CLUSTER SLOTS replies, MOVED/ASK redirections and version
 * fields.  No I/O here, so tests/fuzz/fuzz_rc_parse.c feeds them bytes
 * (through hiredis's own reply reader for the replies).
 *
 * Key slots (Redis Cluster specification): CRC16-XMODEM of the key, or of
 * the part between the first '{' and the next '}' when that part is not
 * empty (a hash tag), modulo 16384.
 */
#ifndef LWC_CS_RC_PARSE_H
#define LWC_CS_RC_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "lwc_err.h"

#define RC_SLOTS       16384
#define RC_HOST_MAX    256     /* host names and addresses, with the NUL    */
#define RC_SEEDS_MAX   32      /* seed nodes in one --store string          */
#define RC_PREFIX_MAX  64      /* key prefix, with the NUL                  */
#define RC_WAIT_MAX    16      /* replicas a WRITE may wait for             */

/* The part of --store after "redis-cluster:". */
struct rc_spec {
	size_t nseeds;
	struct {
		char host[RC_HOST_MAX];
		int port;
	} seed[RC_SEEDS_MAX];
	int wait;                       /* replicas to acknowledge a WRITE (WAIT) */
	int timeout_ms;                 /* one store call, redirections and
					 * failovers included                    */
	char prefix[RC_PREFIX_MAX];     /* keys are PREFIX:b{ID}, PREFIX:n{TAG}   */
};

/* One range of CLUSTER SLOTS: slots [start, end] served by host:port. */
struct rc_range {
	unsigned start, end;
	char host[RC_HOST_MAX];         /* "" when the node did not say */
	int port;
};

uint16_t rc_crc16(const char *buf, size_t len);

/* The slot of a key (hash tags honoured). */
unsigned rc_key_slot(const char *key, size_t len);

/* Parses "HOST:PORT[,HOST:PORT...][,wait=N][,timeout=MS][,prefix=P]".
 * HOST may be a name, an IPv4 address or [IPv6]. */
int rc_spec_parse(const char *spec, struct rc_spec *out, char *err, size_t errlen) LWC_WUR;

/* Ranges of a CLUSTER SLOTS reply into out[0..max); *n gets the count.
 * LWC_ERR_PROTO when the reply is not a well-formed slot map. */
int rc_parse_slots(const redisReply *r, struct rc_range *out, size_t max, size_t *n) LWC_WUR;

/* An error reply "MOVED SLOT HOST:PORT" or "ASK SLOT HOST:PORT": *ask = 1
 * for ASK.  HOST may be empty (the node did not know its address).
 * LWC_ERR_NOT_FOUND when msg is another error, LWC_ERR_PROTO when it is a
 * malformed redirection. */
int rc_parse_redirect(const char *msg, size_t len, int *ask, unsigned *slot,
		      char host[RC_HOST_MAX], int *port) LWC_WUR;

/* A strict decimal uint64 (no sign, no leading zeros, no blanks). */
int rc_parse_u64(const char *s, size_t len, uint64_t *out) LWC_WUR;

#endif
