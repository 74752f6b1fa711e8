/*
 * pbarena.c - see pbarena.h.
 *
 * The first chunk starts with the arena itself, and the first thing
 * protobuf_c_message_unpack allocates is the message (every release of
 * protobuf-c does so; pb_arena_unpack checks it and refuses otherwise), so
 * the arena sits right before the message and pb_arena_free finds it from
 * the message alone.
 */
#include <stdlib.h>
#include <string.h>

#include "pbarena.h"

#define PB_ALIGN       16u
#define PB_ROUND(x)    (((x) + (PB_ALIGN - 1)) & ~(size_t)(PB_ALIGN - 1))
/* chunks of at most this much come from the servers' kept heap
 * (srvkit_keep_heap), not from fresh mappings */
#define PB_CHUNK_MAX   ((size_t)16 << 20)

struct pb_chunk {
	struct pb_chunk *next;
	size_t cap, used;
};

struct pb_arena {
	ProtobufCAllocator a;
	struct pb_chunk *head;           /* the chunk being filled, then older */
	void *first;                     /* what was allocated first           */
};

#define CHUNK_HDR      PB_ROUND(sizeof(struct pb_chunk))
#define ARENA_HDR      PB_ROUND(sizeof(struct pb_arena))

static struct pb_chunk *chunk_new(size_t cap)
{
	struct pb_chunk *c;

	if (cap > SIZE_MAX - CHUNK_HDR || (c = malloc(CHUNK_HDR + cap)) == NULL)
		return NULL;
	c->next = NULL;
	c->cap = cap;
	c->used = 0;
	return c;
}

static void *arena_alloc(void *data, size_t size)
{
	struct pb_arena *A = data;
	struct pb_chunk *c = A->head;
	void *p;

	if (size > SIZE_MAX - PB_ALIGN)
		return NULL;
	size = PB_ROUND(size);
	if (c->cap - c->used < size) {
		size_t cap = c->cap * 2 < PB_CHUNK_MAX ? c->cap * 2 : PB_CHUNK_MAX;
		struct pb_chunk *n = chunk_new(size > cap ? size : cap);

		if (n == NULL)
			return NULL;
		n->next = c;
		A->head = c = n;
	}
	p = (unsigned char *)c + CHUNK_HDR + c->used;
	c->used += size;
	if (A->first == NULL)
		A->first = p;
	return p;
}

static void arena_free(void *data, void *ptr)
{
	(void)data;
	(void)ptr;            /* all at once, in pb_arena_free */
}

static void arena_destroy(struct pb_arena *A)
{
	struct pb_chunk *c = A->head, *first = NULL;

	/* the arena lives in the oldest chunk: free that one last */
	while (c) {
		struct pb_chunk *next = c->next;

		if (next == NULL)
			first = c;
		else
			free(c);
		c = next;
	}
	free(first);
}

ProtobufCMessage *pb_arena_unpack(const ProtobufCMessageDescriptor *desc, size_t len,
				  const uint8_t *data)
{
	size_t cap = len < PB_CHUNK_MAX / 2 ? 2 * len : PB_CHUNK_MAX;
	struct pb_chunk *c;
	struct pb_arena *A;
	ProtobufCMessage *m;

	cap = PB_ROUND(cap) + ARENA_HDR + 4096;
	if ((c = chunk_new(cap)) == NULL)
		return NULL;
	A = (struct pb_arena *)(void *)((unsigned char *)c + CHUNK_HDR);
	c->used = ARENA_HDR;
	A->a.alloc = arena_alloc;
	A->a.free = arena_free;
	A->a.allocator_data = A;
	A->head = c;
	A->first = NULL;
	m = protobuf_c_message_unpack(desc, &A->a, len, data);
	if (m != NULL && (void *)m != (unsigned char *)A + ARENA_HDR) {
		/* not the first allocation: pb_arena_free could not find the
		 * arena (a protobuf-c that changed its order; test_pbarena) */
		m = NULL;
	}
	if (m == NULL)
		arena_destroy(A);
	return m;
}

void pb_arena_free(ProtobufCMessage *m)
{
	if (m != NULL)
		arena_destroy((struct pb_arena *)(void *)((unsigned char *)m - ARENA_HDR));
}

void *pb_arena_alloc(ProtobufCMessage *m, size_t size)
{
	return arena_alloc((unsigned char *)m - ARENA_HDR, size);
}
