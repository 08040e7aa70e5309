/*
 * The allocator's chunks in a dump, behind one small interface: which allocator and
 * version, every chunk it could walk and what it holds, and which bytes are its own
 * metadata or free memory (never roots, never pointers into blocks). One file per
 * allocator (alloc_glibc.c); nothing else reads a chunk header.
 */
#ifndef HP_ALLOC_H
#define HP_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct image;
struct sym;
struct scan_blocks;

enum alloc_kind {
	ALLOC_TAGGED,		/* in use, holding a live heapprof block */
	ALLOC_UNTAGGED,		/* in use, no heapprof header (loader, sampled out, ...) */
	ALLOC_TCACHE,		/* free to the program, in use to malloc: a tcache entry */
	ALLOC_FASTBIN,		/* the same, in a fastbin */
	ALLOC_FREE,		/* free, in a bin (its successor's PREV_INUSE is clear) */
	ALLOC_TOP,		/* an arena's top chunk */
	ALLOC_FENCE,		/* the end of a heap that is no longer its arena's last */
	ALLOC_NKINDS
};

struct alloc_chunk {
	uint64_t addr;		/* the chunk header; the program's memory is at addr + 2 words */
	uint64_t size;		/* with its header, as the size field says (flags cleared) */
	uint8_t kind;		/* enum alloc_kind */
	bool mmapped;		/* a chunk in a mapping of its own */
	uint32_t block;		/* ALLOC_TAGGED: its block's index in the blocks given to
				 * alloc_open, in their order then (graph_build and
				 * leaks_apply sort them later); else ALLOC_NO_BLOCK */
};
#define ALLOC_NO_BLOCK UINT32_MAX

struct alloc_range {
	uint64_t start, end;	/* [start, end) */
};

/* glibc's own figures (mallinfo2's meanings), and how the arenas split. */
struct alloc_stats {
	uint64_t arena_bytes;		/* mallinfo2 arena: the arenas' system_mem */
	uint64_t in_use_bytes;		/* uordblks: arena_bytes - free_bytes */
	uint64_t free_bytes;		/* fordblks: top + bins + fastbins */
	uint64_t mmapped_bytes;		/* hblkhd: the mmapped chunks' mappings */
	uint64_t mmapped_chunks;	/* hblks */
	uint64_t kind_bytes[ALLOC_NKINDS]; /* chunk bytes of each kind, arenas only */
	uint64_t kind_chunks[ALLOC_NKINDS];
	uint64_t tagged_user, tagged_header; /* in tagged arena chunks: the blocks'
					 * sizes and heapprof's headers below them */
	uint64_t mmapped_user, mmapped_header;
	uint64_t trim_pages_bytes;	/* malloc_trim(0): whole free pages madvised away */
	uint64_t trim_top_bytes;	/* ... and the main arena's top given back to sbrk */
	unsigned arenas, heaps;
};

#define ALLOC_MAX_PROBLEMS 8

struct alloc {
	bool known;		/* the allocator and its version are understood */
	char name[64];		/* "glibc 2.36" */
	char reason[256];	/* !known: why ("no libc module in the dump", ...) */
	struct alloc_chunk *chunks;	/* sorted by addr */
	size_t nchunks;
	struct alloc_range *nonroot;	/* sorted, merged: metadata and free memory */
	size_t nnonroot;
	struct alloc_range *heaps;	/* the arenas' heaps (brk heap, heap_info heaps) */
	size_t nheaps;
	struct alloc_stats st;
	char problems[ALLOC_MAX_PROBLEMS][200]; /* what could not be walked, and why */
	unsigned nproblems;		/* all of them; the first ALLOC_MAX_PROBLEMS kept */
	uint64_t unwalked_bytes;	/* heap bytes past a damaged chunk */
};

/*
 * Find the allocator of the dump and walk its chunks. blocks are the heapprof blocks
 * the scan listed (in any order); sym gives the modules (where libc is); sysroot is
 * --sysroot or NULL. Never fails: a->known false with a->reason when the allocator is
 * not recognised, a->problems when part of it could not be walked. Every read goes
 * through image_read.
 */
void alloc_open(struct alloc *a, const struct image *img, struct sym *sym,
		const struct scan_blocks *blocks, const char *sysroot);
void alloc_close(struct alloc *a);

/*
 * Free the chunk list, or the ranges that are no roots, once every reader has had
 * them (memory_apply and pinned_apply read the chunks, graph_build the ranges, --why
 * both): on a heap of small blocks they are the larger part of the analyzer's memory.
 * The figures in st stay.
 */
void alloc_drop_chunks(struct alloc *a);
void alloc_drop_nonroot(struct alloc *a);

/* The chunk whose [addr, addr + size) holds p, or NULL. */
const struct alloc_chunk *alloc_find(const struct alloc *a, uint64_t p);

/* The index of the first nonroot range that ends after p (a->nnonroot if none). */
size_t alloc_nonroot_from(const struct alloc *a, uint64_t p);

/*
 * What malloc_trim(0) gives back of one free chunk [start, end) of an arena (after
 * malloc_consolidate, not the top): its whole pages past its struct malloc_chunk.
 */
uint64_t alloc_run_trim(uint64_t start, uint64_t end);

/* "in use", "free in bins", ... */
const char *alloc_kind_name(enum alloc_kind k);

/* One line for the report: "glibc 2.36" or "not recognised (reason)". */
const char *alloc_describe(const struct alloc *a, char *buf, size_t size);

#endif
