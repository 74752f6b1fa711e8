/*
 * heap.h - the programs' malloc settings (both servers, the shell,
 * lwc-bench).
 *
 * The servers move blocks in batches of up to 1024 sealed blocks of
 * 10.8 KB: buffers of about 11 MB, several per batch.  A bulk load's
 * statements are 45 MB requests, unpacked into as much on the proxy and
 * made from about as much on the client.  glibc serves allocations that
 * large with mmap and returns them with munmap, trims the heap's top past
 * twice its (dynamic) mmap threshold, and unmaps a thread arena's 64 MB
 * sub-heap as soon as it is wholly free: every batch and every statement
 * then page-faulted its memory in again (17 % of the proxy's CPU in a
 * bulk load, 17 % of the client's).  lwc_keep_heap, called once at
 * start-up before any thread: every allocation from one heap, in one
 * arena, and up to 256 MB of freed heap kept for the next batch or
 * statement (the resident size stays near its high-water mark).
 * Programs that link liblwc choose for themselves; the library does not
 * set it.
 */
#ifndef LWC_HEAP_H
#define LWC_HEAP_H

void lwc_keep_heap(void);

#endif
