/*
 * What the three ways to the real allocator (real.h) share: hp_real, which each fills,
 * and the question whether the aligned_alloc below us takes an alignment, asked of
 * whichever pair each gives.
 */
#include "real.h"
#include "real_int.h"

struct hp_real hp_real;

/* A 1-byte block freed at once: NULL means refused. Only odd alignments pay for this. */
bool real_takes_align(size_t align)
{
	void *(*aligned_alloc)(size_t, size_t);
	void (*free)(void *);
	void *p;

	if (!real_aligned_pair(&aligned_alloc, &free))
		return true;
	p = aligned_alloc(align, 1);
	if (!p)
		return false;
	free(p);
	return true;
}
