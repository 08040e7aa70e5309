/*
 * Free memory pinned by in-use chunks (--memory): every run of free chunks that cannot
 * join its heap's top is charged to the in-use chunk right above it, and the charges
 * are summed per allocation stack of those chunks. Knows no chunk layout (alloc.h).
 */
#ifndef HP_PINNED_H
#define HP_PINNED_H

#include <stddef.h>
#include <stdint.h>

struct alloc;
struct image;
struct report_frame;
struct scan_result;
struct sym;

enum pinned_holder {
	PIN_BLOCK,		/* heapprof blocks of one stack */
	PIN_UNTAGGED,		/* in-use chunks without a heapprof header */
	PIN_CACHED,		/* chunks a thread's cache holds (free to the program) */
	PIN_HEAP_END,		/* the end of a heap that is not its arena's newest (pinned
				 * by the heaps after it), or of a walk cut short */
	PIN_NHOLDERS
};

struct pinned_stack {
	enum pinned_holder holder;
	uint64_t bytes;		/* free bytes pinned (chunk sizes, as the allocator counts) */
	uint64_t trim_bytes;	/* of them, whole pages it would give back when asked */
	uint64_t blocks;	/* pinning chunks: each pins the one run below it */
	unsigned flags;		/* STACK_TRUNCATED, STACK_UNKNOWN (stacks.h) */
	struct report_frame *frames; /* PIN_BLOCK: innermost first; owned */
	unsigned nframes;
	uint64_t key;		/* report_stack_key() of its pcs */
};

struct pinned {
	uint64_t bytes, trim_bytes;	/* all runs below an in-use chunk */
	uint64_t runs;			/* free chunks as a consolidation would join them */
	struct pinned_stack *v;		/* shown: bytes descending */
	size_t n;
	size_t all;			/* distinct holders */
	uint64_t rest_bytes, rest_trim_bytes, rest_blocks; /* what top left out */
};

/*
 * Charge al's pinned runs to their holders (scan's listed blocks, in the order
 * alloc_open saw them: call before graph_build or leaks_apply sorts them), the top
 * (0: all) largest symbolized with sym. p is zeroed first; an unknown allocator
 * pins nothing.
 */
void pinned_apply(struct pinned *p, const struct alloc *al, const struct image *img,
		  const struct scan_result *scan, struct sym *sym, size_t top);
void pinned_free(struct pinned *p);

#endif
