/*
 * Between alloc.c and the allocators' readers: the rows of alloc.c's table.
 */
#ifndef HP_ALLOC_INT_H
#define HP_ALLOC_INT_H

#include "alloc.h"

extern const struct alloc_reader alloc_glibc_reader;

/*
 * The walk alone, once glibc 2.minor (27..41) and its main_arena are found: what
 * the reader's walk does then, and what the fuzzer runs on made-up arenas. a->name is
 * left as it is.
 */
void alloc_glibc_walk(struct alloc *a, const struct image *img, uint64_t main_arena, int minor,
		      const struct scan_blocks *blocks);

#endif
