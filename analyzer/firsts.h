/*
 * Blocks counted by their first word, as the scan finds them, for --by=type when no
 * analysis needs the block list (types.c names each distinct word once). A C++ object
 * starts with its vtable pointer, and the words of a heap repeat: a table of distinct
 * words stands for millions of blocks, where a list would hold each.
 */
#ifndef HP_FIRSTS_H
#define HP_FIRSTS_H

#include <stddef.h>
#include <stdint.h>

/* The blocks that start with one word. */
struct firsts_count {
	uint64_t blocks, bytes;	/* bytes: their sizes, modulo 2^64 as a list's sum */
};

/* One block whose word found the table full. */
struct firsts_block {
	uint64_t word, size;
};

/* Blocks past the table's bound, in pieces that are never moved once written. */
#define FIRSTS_PIECE 65536
struct firsts_piece {
	struct firsts_piece *next;
	size_t n;
	struct firsts_block v[FIRSTS_PIECE];
};

/* A sampled block (HP2_F_SAMPLED): its weight comes from its size, summed in address
 * order as the list's would be. */
struct firsts_sampled {
	uint64_t user, size, word;
};

struct firsts {
	unsigned wsize;			/* the target's word size, 4 or 8 */
	uint64_t *word;			/* open addressing, 0 a free slot: apart from
					 * the counts, so that a word's probe stays in
					 * 32 KiB when the table is full */
	struct firsts_count *count;	/* word[i]'s */
	size_t cap, n;
	uint64_t other_blocks;		/* first word 0 or not word-aligned (no vtable
					 * pointer), or the block shorter than a word */
	uint64_t other_bytes;
	struct firsts_piece *spilled;	/* the table held FIRSTS_MAX_WORDS words */
	struct firsts_sampled *sampled;
	size_t nsampled, sampled_cap;
};

/* Words a scan thread's table takes (32 KiB of words, 64 KiB of counts) before blocks
 * spill to pieces. */
#define FIRSTS_MAX_WORDS 2048

void firsts_init(struct firsts *f, unsigned wsize);
/* A block of size bytes whose first word is word (0: none, or shorter than a word). */
void firsts_add(struct firsts *f, uint64_t word, uint64_t size);
void firsts_add_sampled(struct firsts *f, uint64_t user, uint64_t size, uint64_t word);
/* Move from's counts into into (from is left empty, ready for firsts_free); then the
 * sampled blocks are in address order. */
void firsts_merge(struct firsts *into, struct firsts *from);
void firsts_free(struct firsts *f);

#endif
