/*
 * heap.c - see heap.h.
 */
#include <malloc.h>

#include "heap.h"

void lwc_keep_heap(void)
{
	/* one arena: the threads' own arenas are what unmaps freed sub-heaps
	 * whatever the trim threshold; the threads that allocate large
	 * buffers (statements, batches, the client's two sealing threads)
	 * are few, so one arena costs no contention that shows */
	(void)mallopt(M_TRIM_THRESHOLD, 256 << 20);
	(void)mallopt(M_ARENA_MAX, 1);
	(void)mallopt(M_MMAP_MAX, 0);
}
