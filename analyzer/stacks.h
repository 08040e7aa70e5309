/*
 * Live bytes per distinct stack: a hash table from a pc array to byte and block
 * totals and the sizes of its blocks. One table per scanning thread, merged after.
 */
#ifndef HP_STACKS_H
#define HP_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct size_count {
	uint64_t size;
	uint64_t count;
};

struct stack {
	uint64_t hash;
	uint64_t bytes;		/* saturates at UINT64_MAX (stacks->saturated is set) */
	uint64_t blocks;
	uint64_t *sizes;	/* each block's size, in no order: appending keeps the
				 * scan to one cache line per stack, and only the
				 * stacks a report shows are ever counted by size */
	size_t sizes_cap;	/* blocks of sizes[] are the stack's blocks */
	unsigned nframes;
	uint64_t pcs[];		/* pcs[0] innermost, as in the block header */
};

struct stacks {
	struct stack **slots;	/* open-addressed by hash */
	size_t n, cap;
	bool saturated;		/* some total did not fit 64 bits */
};

void stacks_init(struct stacks *t);
/* Count one live block of size bytes allocated at pcs[0..nframes-1]. */
void stacks_add(struct stacks *t, const uint64_t *pcs, unsigned nframes, uint64_t size);
/* Move every stack of from into into; from is left empty. */
void stacks_merge(struct stacks *into, struct stacks *from);
/*
 * The distinct sizes of s's blocks with their counts, by count descending then size;
 * *n gets how many. The caller frees the array.
 */
struct size_count *stacks_sizes(const struct stack *s, size_t *n);
/* The stacks as an array (order unspecified); the table keeps ownership. */
struct stack **stacks_list(const struct stacks *t, size_t *n);
void stacks_free(struct stacks *t);

#endif
