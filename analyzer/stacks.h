/*
 * Figures per distinct stack: a hash table from a pc array (with its flags, and its
 * thread when split by thread) to live byte and block totals, the sizes of its live
 * blocks, and the sites' counters summed. One table per scanning thread, merged after;
 * sampled blocks add estimates, which the report rounds.
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
#define STACK_UNTAGGED 0x4u	/* an allocator's chunk with no heapprof header, counted
				 * as a block (untagged.c): "[untagged]" */
#define STACK_OVERFLOW 0x8u	/* the peak table's stacks past its room, summed */
/* A class an analysis splits the stacks by (--leaks: memcheck's), as its index + 1 into
 * the report's class names; 0: none. */
#define STACK_CLASS_SHIFT 8
#define STACK_CLASS_MASK (7u << STACK_CLASS_SHIFT)

/* Counters summed from site records, as read (sampled: calls and frees in units of
 * 1/HP2_COUNT_ONE); each saturates at UINT64_MAX. */
struct stack_counts {
	uint64_t calls, bytes;	/* allocation calls, bytes asked for */
	uint64_t frees, freed;	/* frees, bytes of the blocks freed */
	uint64_t time_ns;	/* HEAPPROF_TIME */
	uint64_t retained;	/* --metric=retained_space: bytes its blocks dominate
				 * (graph.c), each block once */
};

/* The marker a stack with no frames to show stands under: "[unknown stack]",
 * "[untagged]", "[no stack]"; NULL when it has frames and no such flag. */
static inline const char *stack_mark(unsigned flags, unsigned nframes)
{
	if (flags & STACK_UNKNOWN)
		return "[unknown stack]";
	if (flags & STACK_UNTAGGED)
		return "[untagged]";
	return nframes ? NULL : "[no stack]";
}

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
	size_t sizes_cap;	/* 0 with sizes set: sizes lie in one of the table's
				 * pools, copied out when they grow */
	struct stack_counts counts;
	unsigned flags;		/* STACK_*; part of the stack's identity */
	uint32_t tid;		/* split by thread: the thread (0 = unknown); else 0. Part of
				 * the identity */
	unsigned nframes;
	uint64_t pcs[];		/* pcs[0] innermost, as in the block header */
};

/* Which stack: pcs[0..nframes-1] (pcs non-NULL even when nframes is 0), STACK_* flags,
 * thread (0 unless split by thread). */
struct stack_key {
	const uint64_t *pcs;
	unsigned nframes;
	unsigned flags;
	uint32_t tid;
};

/* What a group of blocks and counters adds to a stack. */
struct stack_add {
	uint64_t bytes, blocks;	/* counted one for one */
	double est_bytes, est_blocks;
	const uint64_t *sizes;	/* every live block's size, sampled or not */
	uint64_t nsizes;
	struct stack_counts counts;
	/* sizes is *give, a heap array of give_cap (0: inside a pool of the table's):
	 * a stack with no sizes yet takes it (*give becomes NULL) instead of a copy.
	 * NULL: copied. */
	uint64_t **give;
	size_t give_cap;
};

struct stacks {
	struct stack **slots;	/* open-addressed by hash */
	size_t n, cap;
	bool saturated;		/* some total did not fit 64 bits */
	void **pools;		/* heap blocks that stacks' sizes point into (the join
				 * gives every site's sizes in one): freed with the table */
	size_t npools;
};

void stacks_init(struct stacks *t);
/* The table frees pool (a heap block) with itself: sizes given with give_cap 0 point
 * into it. */
void stacks_adopt(struct stacks *t, void *pool);
/* from's pools to into, whose stacks took from's sizes. */
void stacks_take_pools(struct stacks *into, struct stacks *from);
/* Add a group of blocks and counters to the stack k (created if new). */
void stacks_add_group(struct stacks *t, const struct stack_key *k, const struct stack_add *a);
/* The stack k, or NULL when the table has none. */
const struct stack *stacks_lookup(const struct stacks *t, const struct stack_key *k);
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
/* qsort's order of struct size_count: count descending, then size ascending. */
int stacks_size_count_cmp(const void *a, const void *b);
/* The stacks as an array (order unspecified); the table keeps ownership. */
struct stack **stacks_list(const struct stacks *t, size_t *n);
void stacks_free(struct stacks *t);

#endif
