/*
 * locsort.h - a statement's rows in the order of their places in blocks.
 *
 * Before it reads, a statement sorts its rows by location (block * m +
 * slot), so that each block's rows are together.  qsort() took about 2 % of
 * the proxy's CPU on a 100,000-row SELECT (an indirect call a comparison,
 * seventeen comparisons a row); locations are dense integers below
 * blocks x slots, so from 2,048 rows a radix sort of 11-bit digits over only
 * the bits the largest one uses (three passes below 2^33) does it in linear
 * time.  Fewer rows keep qsort (the radix sort's counts cost more there),
 * and rows already in order are left as they are.
 */
#ifndef LWC_LOCSORT_H
#define LWC_LOCSORT_H

#include <stddef.h>
#include <stdint.h>

struct locrow {
	uint64_t loc, row;
};

/* Sort a[0..n) by loc, ascending.  The order among entries of equal loc
 * is unspecified (a statement's locations are distinct). */
void locrow_sort(struct locrow *a, size_t n);

#endif
