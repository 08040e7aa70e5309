/*
 * Live bytes per distinct stack: a hash table from a pc array (and its flags) to byte
 * and block totals and the sizes of its blocks. One table per scanning thread, merged
 * after; sampled blocks add estimates, which the report rounds.
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

#define STACK_TRUNCATED 0x1u	/* the writer cut the stack at its frame limit */
#define STACK_UNKNOWN 0x2u	/* no readable stack record: "[unknown stack]" */

struct stack {
	uint64_t hash;
	uint64_t bytes;		/* blocks counted one for one (not sampled); saturates at
				 * UINT64_MAX (stacks->saturated is set) */
	uint64_t blocks;
	double est_bytes;	/* sampled blocks: estimated bytes and blocks they stand */
	double est_blocks;	/* for (see stack_bytes(), stack_blocks()) */
	uint64_t *sizes;	/* each block's size, in no order: appending keeps the
				 * scan to one cache line per stack, and only the
				 * stacks a report shows are ever counted by size */
	uint64_t nsizes;	/* blocks found, sampled or not: entries of sizes[] */
	size_t sizes_cap;
	unsigned flags;		/* STACK_*; part of the stack's identity */
	unsigned nframes;
	uint64_t pcs[];		/* pcs[0] innermost, as in the block header */
};

/* What a group of blocks adds to a stack. */
struct stack_add {
	uint64_t bytes, blocks;	/* counted one for one */
	double est_bytes, est_blocks;
	const uint64_t *sizes;	/* every block's size, sampled or not */
	uint64_t nsizes;
};

struct stacks {
	struct stack **slots;	/* open-addressed by hash */
	size_t n, cap;
	bool saturated;		/* some total did not fit 64 bits */
};

void stacks_init(struct stacks *t);
/* Count one live block of size bytes allocated at pcs[0..nframes-1]. */
void stacks_add(struct stacks *t, const uint64_t *pcs, unsigned nframes, uint64_t size);
/* Count a group of blocks at pcs[0..nframes-1] with STACK_* flags. */
void stacks_add_group(struct stacks *t, const uint64_t *pcs, unsigned nframes, unsigned flags,
		      const struct stack_add *a);
/* A stack's bytes and blocks, sampled estimates rounded in; saturating. */
uint64_t stack_bytes(const struct stack *s);
uint64_t stack_blocks(const struct stack *s);
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
