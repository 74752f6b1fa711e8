/*
 * pbarena.h - protobuf-c messages unpacked into an arena.
 *
 * protobuf-c allocates every field of an unpacked message on its own: an
 * INSERT of 50,000 rows with 22 tokens each is 1.2 million mallocs, and as
 * many frees.  pb_arena_unpack gives it an allocator that bumps through a
 * few large blocks instead, and pb_arena_free returns them at once.
 *
 * A message unpacked here is freed with pb_arena_free only (never with
 * protobuf_c_message_free_unpacked), and nothing of it may be freed or
 * reallocated on its own.
 */
#ifndef LWC_PBARENA_H
#define LWC_PBARENA_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* The message, or NULL when data is not a valid message of desc (or out
 * of memory). */
ProtobufCMessage *pb_arena_unpack(const ProtobufCMessageDescriptor *desc, size_t len,
				  const uint8_t *data);

/* size bytes (aligned to 16) from the arena of m, a message of
 * pb_arena_unpack, freed with it; NULL when out of memory. */
void *pb_arena_alloc(ProtobufCMessage *m, size_t size);

/* Free a message of pb_arena_unpack and all it points to (NULL: nothing). */
void pb_arena_free(ProtobufCMessage *m);

#endif
