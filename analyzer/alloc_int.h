/*
 * Between alloc.c and the allocator files: each tries the dump and says whether it is
 * its allocator (false with a->reason when not).
 */
#ifndef HP_ALLOC_INT_H
#define HP_ALLOC_INT_H

#include "alloc.h"

bool alloc_glibc_open(struct alloc *a, const struct image *img, struct sym *sym,
		      const struct scan_blocks *blocks, const char *sysroot);

/*
 * The walk alone, once glibc 2.minor (27..41) and its main_arena are found: what
 * alloc_glibc_open does then, and what the fuzzer runs on made-up arenas. a->name is
 * left as it is.
 */
void alloc_glibc_walk(struct alloc *a, const struct image *img, uint64_t main_arena, int minor,
		      const struct scan_blocks *blocks);

#endif
