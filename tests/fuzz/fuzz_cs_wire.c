/*
 * fuzz_cs_wire.c - libFuzzer target: common/cs_wire.c, the in-place
 * reading of a READ's answer (the proxy reads every one with it) and of a
 * WRITE request (the cloud store reads every one with it).
 *
 * The first input byte picks the message (even: a READ's answer, odd: a
 * WRITE request), the rest is its bytes.  Oracle beyond the sanitizers
 * (cswire_check.h): a message cs_wire accepts, protobuf-c decodes to the
 * same seq, op and blocks, byte for byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cswire_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum cs_wire_kind kind;
	int acc, bad;

	if (size < 1)
		return 0;
	kind = data[0] & 1 ? CS_WIRE_WRITE_REQ : CS_WIRE_READ_RESP;
	if ((bad = cswire_check(data + 1, size - 1, kind, &acc)) != 0) {
		fprintf(stderr, "fuzz_cs_wire: accepted, but not as protobuf-c reads it (%d)\n",
			bad);
		abort();
	}
	return 0;
}
