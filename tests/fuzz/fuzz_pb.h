/*
 * fuzz_pb.h - helpers the protobuf-decoding fuzz targets share.
 */
#ifndef LWC_FUZZ_PB_H
#define LWC_FUZZ_PB_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* Somewhere in m, an unknown field numbered 0.  protobuf-c decodes one
 * whose tag is spelled in two bytes (80 00) but refuses the one byte 00 it
 * re-encodes it as: the only round trip that may fail (and harmless here:
 * the proxy never re-encodes a request). */
static inline int has_field0(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	const char *base = (const char *)m;

	for (unsigned i = 0; i < m->n_unknown_fields; i++)
		if (m->unknown_fields[i].tag == 0)
			return 1;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];

		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)(base + f->quantifier_offset);
			ProtobufCMessage *const *v = *(ProtobufCMessage *const *const *)(base + f->offset);
			for (size_t j = 0; j < n; j++)
				if (has_field0(v[j]))
					return 1;
		} else {
			const ProtobufCMessage *sub;
			if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
			    *(const uint32_t *)(base + f->quantifier_offset) != f->id)
				continue;
			sub = *(const ProtobufCMessage *const *)(base + f->offset);
			if (sub && has_field0(sub))
				return 1;
		}
	}
	return 0;
}

#endif
