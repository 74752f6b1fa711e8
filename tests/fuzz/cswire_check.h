/*
 * cswire_check.h - the property common/cs_wire.c must hold, for the unit
 * test and the fuzz target: a message it accepts is one protobuf-c
 * decodes to the same seq, op and blocks (ids, versions, bytes, in order).
 * Returns 0 when the property holds for buf, else a number naming what
 * differed.  *accepted tells whether cs_wire took the message.
 */
#ifndef LWC_CSWIRE_CHECK_H
#define LWC_CSWIRE_CHECK_H

#include <stdlib.h>
#include <string.h>

#include "cs_wire.h"
#include "lwc.pb-c.h"

static int cswire_blocks_equal(const struct cs_wire_block *wb, size_t n,
			       Lwc__CsBlock *const *pb, size_t pn)
{
	if (n != pn)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (wb[i].id != pb[i]->id || wb[i].version != pb[i]->version ||
		    wb[i].len != pb[i]->data.len ||
		    (wb[i].len && memcmp(wb[i].data, pb[i]->data.data, wb[i].len) != 0) ||
		    (wb[i].len == 0 && wb[i].data != NULL))
			return 0;
	}
	return 1;
}

static int cswire_check(const uint8_t *buf, size_t len, enum cs_wire_kind want, int *accepted)
{
	struct cs_wire_block *wb;
	uint64_t seq = 0;
	size_t n = 0;
	int bad = 0;

	*accepted = cs_wire_scan(buf, len, want, &seq, &n) == want;
	if (!*accepted)
		return 0;
	if (n > len)                       /* a block is at least its key and length */
		return 1;
	if ((wb = malloc((n ? n : 1) * sizeof(*wb))) == NULL)
		return 0;
	{
		struct cs_wire_iter it;
		struct cs_wire_block extra;
		size_t got = 0;

		cs_wire_iter_init(&it, buf, len);
		while (got < n && cs_wire_next(&it, &wb[got]))
			got++;
		if (got != n || cs_wire_next(&it, &extra))
			bad = 10;             /* the walk and the scan disagree */
	}
	if (bad) {
		free(wb);
		return bad;
	}
	if (want == CS_WIRE_READ_RESP) {
		Lwc__CsResponse *r = lwc__cs_response__unpack(NULL, len, buf);

		if (r == NULL)
			bad = 2;
		else if (r->seq != seq)
			bad = 3;
		else if (r->result_case != LWC__CS_RESPONSE__RESULT_READ)
			bad = 4;
		else if (!cswire_blocks_equal(wb, n, r->read->blocks, r->read->n_blocks))
			bad = 5;
		if (r)
			lwc__cs_response__free_unpacked(r, NULL);
	} else {
		Lwc__CsRequest *r = lwc__cs_request__unpack(NULL, len, buf);

		if (r == NULL)
			bad = 6;
		else if (r->seq != seq)
			bad = 7;
		else if (r->op_case != LWC__CS_REQUEST__OP_WRITE)
			bad = 8;
		else if (!cswire_blocks_equal(wb, n, r->write->blocks, r->write->n_blocks))
			bad = 9;
		if (r)
			lwc__cs_request__free_unpacked(r, NULL);
	}
	free(wb);
	return bad;
}

#endif
