/*
 * Between alloc.c and the allocator files: each tries the dump and says whether it is
 * its allocator (false with a->reason when not).
 */
#ifndef HP_ALLOC_INT_H
#define HP_ALLOC_INT_H

#include "alloc.h"

bool alloc_glibc_open(struct alloc *a, const struct image *img, struct sym *sym,
		      const struct scan_blocks *blocks, const char *sysroot);

#endif
