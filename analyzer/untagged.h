/*
 * Untagged chunks as blocks (untagged.c): the allocator's in-use chunks with no
 * heapprof header, as blocks of the list with no stack; and the row that does it.
 */
#ifndef HP_UNTAGGED_H
#define HP_UNTAGGED_H

#include <stddef.h>
#include <stdint.h>

struct alloc;
struct scan_blocks;

/*
 * Append to l a block (version SCAN_UNTAGGED) for each chunk of a in use with no
 * heapprof block: its memory and usable size as the allocator's reader gives them.
 * Chunks that are the allocator's own bookkeeping (all of their bytes no roots) are
 * left out and counted in *own; *bytes gets the blocks' sum (saturated). Returns how
 * many were added: at most a->nchunks.
 */
size_t untagged_blocks(const struct alloc *a, struct scan_blocks *l, uint64_t *bytes,
		       uint64_t *own);

#endif
