/*
 * Between real.c and the one file per mechanism (real_dlsym.c, real_wrap.c,
 * real_libc.c) that a build links: what real.c asks of the mechanism. The rest of
 * heapprof sees real.h only.
 */
#ifndef HP_REAL_INT_H
#define HP_REAL_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler.h"
#include "real.h"

/* The aligned_alloc and free the program would have had without us, from one
 * allocator; false if there is no such pair (alignments then go memalign's way). */
HP_HIDDEN bool real_aligned_pair(void *(**aligned_alloc)(size_t, size_t), void (**free)(void *));

#endif
