/*
 * fuzz_cs_wire.c - libFuzzer target: common/cs_wire.c, the in-place
 * reading of a READ's answer (the proxy reads every one with it) and of a
 * WRITE request (the cloud store reads every one with it).
 *
 * The first input byte picks the message (even: a READ's answer, odd: a
 * WRITE request), the rest is its bytes.  Oracle beyond the sanitizers
 * (cswire_check.h): a message cs_wire accepts, protobuf-c decodes to the
 * same seq, op and blocks, byte for byte; and the skeleton of exactly the
 * READ answers it accepts is the message less its blocks' data.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cswire_check.h"
#include "lwc_err.h"

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
	/* the skeleton (chan.h's skeleton frames): made of exactly the
	 * messages cs_wire accepts, each with every byte but its blocks' data */
	{
		uint8_t *skel;
		size_t skel_len, data_len = 0;
		int rc = cs_wire_read_skeleton(data + 1, size - 1, &skel, &skel_len);
		struct cs_wire_iter it;
		struct cs_wire_block b;

		if (kind == CS_WIRE_READ_RESP && (rc == LWC_OK) != acc)
			abort();
		if (rc == LWC_OK) {
			for (cs_wire_iter_init(&it, data + 1, size - 1); cs_wire_next(&it, &b);)
				data_len += b.len;
			if (skel_len != size - 1 - data_len || skel == NULL)
				abort();
			free(skel);
		} else if (rc != LWC_ERR_PROTO || skel != NULL) {
			abort();
		}
	}
	return 0;
}
