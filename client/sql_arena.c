/*
 * sql_arena.c - the arena a parsed statement lives in: a chain of malloc'ed
 * blocks that sql_free releases at once (see sql_int.h).
 */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_int.h"

/* ---- arena ----------------------------------------------------------------- */

#define ARENA_ALIGN     16
#define ARENA_FIRST     4096
#define ARENA_MAX_STEP  (1u << 20)
#define ARENA_HDR       ((sizeof(struct arena_block) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))

struct arena_block {
	struct arena_block *next;
	size_t size;                  /* usable bytes after the header         */
	size_t used;
};

struct arena {
	struct arena_block *head;     /* the block allocations come from        */
	size_t step;                  /* size of the next ordinary block        */
};

static struct arena_block *arena_block_new(size_t size)
{
	struct arena_block *b;

	if (size > SIZE_MAX - ARENA_HDR)
		return NULL;
	b = malloc(ARENA_HDR + size);
	if (b == NULL)
		return NULL;
	b->next = NULL;
	b->size = size;
	b->used = 0;
	return b;
}

/* A new arena; the struct arena lives in its own first block. */
struct arena *sql_arena_new(void)
{
	struct arena_block *b = arena_block_new(ARENA_FIRST);
	struct arena *a;

	if (b == NULL)
		return NULL;
	a = (struct arena *)(void *)((unsigned char *)b + ARENA_HDR);
	b->used = (sizeof(*a) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	a->head = b;
	a->step = ARENA_FIRST * 2;
	return a;
}

void sql_arena_destroy(struct arena *a)
{
	struct arena_block *b, *next;

	if (a == NULL)
		return;
	for (b = a->head; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
}

/* n zeroed bytes aligned to ARENA_ALIGN, or NULL. */
void *sql_arena_alloc(struct arena *a, size_t n)
{
	struct arena_block *b = a->head;
	void *p;

	if (n > SIZE_MAX - ARENA_ALIGN)
		return NULL;
	n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (n == 0)
		n = ARENA_ALIGN;
	if (b->size - b->used < n) {
		if (n > a->step / 2) {
			/* a big request gets its own block behind the head, so
			 * the head keeps its free space */
			struct arena_block *nb = arena_block_new(n);

			if (nb == NULL)
				return NULL;
			nb->next = b->next;
			b->next = nb;
			nb->used = n;
			p = (unsigned char *)nb + ARENA_HDR;
			memset(p, 0, n);
			return p;
		}
		b = arena_block_new(a->step);
		if (b == NULL)
			return NULL;
		if (a->step < ARENA_MAX_STEP)
			a->step *= 2;
		b->next = a->head;
		a->head = b;
	}
	p = (unsigned char *)b + ARENA_HDR + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

/* Room for one more element in an arena array of n used / *cap elements:
 * the array itself, or a copy with twice the room (the old one stays in
 * the arena until the statement is freed: at most half is wasted). */
void *sql_arena_grow(struct arena *a, void *arr, size_t n, size_t *cap, size_t elsize)
{
	size_t ncap = *cap ? *cap * 2 : 4;
	void *na;

	if (n < *cap)
		return arr;
	if (ncap < *cap || ncap > SIZE_MAX / elsize)
		return NULL;
	na = sql_arena_alloc(a, ncap * elsize);
	if (na == NULL)
		return NULL;
	if (n)
		memcpy(na, arr, n * elsize);
	*cap = ncap;
	return na;
}
