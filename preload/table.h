/*
 * The process's stack table (block format v2, include/heapprof_format.h): each
 * distinct stack stored once as a record, each (thread, stack, entry point) once as a
 * site record, and one process record, all in anonymous mappings of their own that a
 * scanner finds by their magics. Lookups take no lock and allocate nothing; inserts
 * are lock-free (a compare-and-swap on a chain head), so many threads inserting at
 * once neither lose nor duplicate a stack, and a signal handler may insert too.
 */
#ifndef HP_TABLE_H
#define HP_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "boot.h"

/* The v2 stack record as this process stores it (target = host). */
struct hp_stack_rec {
	uint64_t magic;		/* HP2_STACK_MAGIC */
	uint64_t check;
	uint64_t w2;		/* id | nframes << 32 | flags << 48 | wsize << 56 */
	uint64_t link;		/* next record in the chain (a pointer), private */
	uintptr_t pcs[];
};

/* Record the process (start time, options); called once when the allocator is known. */
HP_HIDDEN void table_init(uint64_t sample_period, unsigned max_frames);

/* In a forked child: the process record names the child. */
HP_HIDDEN void table_after_fork(void);

/*
 * The site id for this stack (pcs[0..n-1], innermost first; truncated if the walk
 * went on past n), the calling thread (boot_tid(), read only when the thread's cache
 * misses) and entry (HP2_ENTRY_*): found in the thread's cache or the table,
 * inserted if new. 0 (no stack) if memory for a new record cannot be had: the block
 * is then still tagged, only without its stack.
 */
HP_HIDDEN uint32_t table_site(const uintptr_t *pcs, unsigned n, bool truncated, unsigned entry);

/* ms since the process record's start, for block headers. */
HP_HIDDEN uint64_t table_ms(void);

#endif
