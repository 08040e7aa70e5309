/*
 * The allocator's chunks in a dump, behind one small interface in neutral words:
 * which allocator and version, every chunk it could walk and what it holds (in use,
 * free, cached), which bytes are its own metadata or free memory (never roots, never
 * pointers into blocks), and its own figures. One reader per allocator, a row of
 * alloc.c's table in a file of its own; nothing else reads a chunk header or says
 * the allocator's words.
 */
#ifndef HP_ALLOC_H
#define HP_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct image;
struct sym;
struct scan_blocks;

/* What a chunk is, in words every allocator's reader maps its own onto. */
enum alloc_kind {
	ALLOC_TAGGED,		/* in use, holding a live heapprof block */
	ALLOC_UNTAGGED,		/* in use, no heapprof header (loader, sampled out, ...) */
	ALLOC_CACHED,		/* free to the program, kept for its next allocation of
				 * the size in a per-thread cache: in use to the allocator */
	ALLOC_FREE_UNJOINED,	/* free, kept apart from its free neighbours until the
				 * allocator consolidates (which joins it with them) */
	ALLOC_FREE,		/* free, on the allocator's free lists */
	ALLOC_TOP,		/* an arena's unused end, which it grows into */
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

/* How the arenas split, and the allocator's own view of them. */
struct alloc_stats {
	uint64_t arena_bytes;		/* the arenas' memory from the system */
	uint64_t in_use_bytes;		/* arena_bytes - free_bytes: in use to the allocator */
	uint64_t free_bytes;		/* free, unjoined free and top chunks */
	uint64_t mmapped_bytes;		/* the mmapped chunks' mappings */
	uint64_t mmapped_chunks;
	uint64_t kind_bytes[ALLOC_NKINDS]; /* chunk bytes of each kind, arenas only */
	uint64_t kind_chunks[ALLOC_NKINDS];
	uint64_t tagged_user, tagged_header; /* in tagged arena chunks: the blocks'
					 * sizes and heapprof's headers below them */
	uint64_t mmapped_user, mmapped_header;
	uint64_t trim_pages_bytes;	/* what the allocator would give back if asked
					 * (alloc_reader.release_call): whole free pages */
	uint64_t trim_top_bytes;	/* ... and of the main arena's top */
	unsigned arenas, heaps;
};

#define ALLOC_MAX_PROBLEMS 8
#define ALLOC_MAX_FIGURES 8

/* One of the allocator's own figures, named as its own interface names it. */
struct alloc_figure {
	const char *name;
	uint64_t value;
};

struct alloc_reader;

struct alloc {
	bool known;		/* the allocator and its version are understood */
	const struct alloc_reader *reader; /* the one that knew it, or NULL */
	char name[64];		/* "glibc 2.36" */
	char reason[256];	/* !known: why ("no libc module in the dump", ...) */
	struct alloc_chunk *chunks;	/* sorted by addr */
	size_t nchunks;
	struct alloc_range *nonroot;	/* sorted, merged: metadata and free memory */
	size_t nnonroot;
	struct alloc_range *heaps;	/* the arenas' heaps */
	size_t nheaps;
	struct alloc_range *spans;	/* the address space each heap holds: the brk heap,
					 * a heap_info heap's whole reservation (its part
					 * past the heap's size is mapped PROT_NONE) */
	size_t nspans;
	struct alloc_stats st;
	struct alloc_figure own[ALLOC_MAX_FIGURES]; /* the figures its own statistics
					 * call give (reader->own_name) */
	unsigned nown;
	char problems[ALLOC_MAX_PROBLEMS][200]; /* what could not be walked, and why */
	unsigned nproblems;		/* all of them; the first ALLOC_MAX_PROBLEMS kept */
	uint64_t unwalked_bytes;	/* heap bytes past a damaged chunk */
};

/*
 * One allocator: a row of alloc.c's table, in a file of its own, the only one to know
 * its chunk layout. probe says whether the dump holds this allocator in a version it
 * knows (a->name, or a->reason and false), keeping what walk needs in *state; walk
 * fills the chunks, nonroot ranges, heaps, stats and own figures, and frees *state.
 */
struct alloc_reader {
	const char *name;		/* "glibc" */
	bool (*probe)(struct alloc *a, const struct image *img, struct sym *sym,
		      const char *sysroot, void **state);
	void (*walk)(struct alloc *a, const struct image *img, const struct scan_blocks *blocks,
		     void *state);
	/* What it gives back of one free run [start, end) of an arena when asked (after
	 * it consolidated; not the top). */
	uint64_t (*run_release)(uint64_t start, uint64_t end);
	/* The program's memory of an in-use chunk: where it starts and the bytes the
	 * program may use (malloc_usable_size's answer). */
	void (*usable)(const struct alloc_chunk *c, uint64_t *mem, uint64_t *size);
	const char *own_name;		/* the call whose figures a->own are */
	const char *release_call;	/* what asks it to give back: "malloc_trim(0)" */
	const char *kind_names[ALLOC_NKINDS];	/* "free in bins", ... for the text */
	const char *kind_keys[ALLOC_NKINDS];	/* "bins", ... for JSON */
};

/*
 * Find the allocator of the dump (the readers of alloc.c's table tried in order) and
 * walk its chunks. blocks are the heapprof blocks the scan listed (in any order); sym
 * gives the modules (where libc is); sysroot is --sysroot or NULL. Never fails:
 * a->known false with a->reason when no reader knows it, a->problems when part of it
 * could not be walked. Every read goes through image_read.
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

/* What the allocator would give back of a free run [start, end) when asked (0 when
 * it is not known). */
uint64_t alloc_run_release(const struct alloc *a, uint64_t start, uint64_t end);

/* The program's memory of in-use chunk c, start and usable bytes; false when the
 * allocator is not known. */
bool alloc_usable(const struct alloc *a, const struct alloc_chunk *c, uint64_t *mem,
		  uint64_t *size);

/* A kind as the allocator names it: "free in bins", ...; its JSON key: "bins". */
const char *alloc_kind_name(const struct alloc *a, enum alloc_kind k);
const char *alloc_kind_key(const struct alloc *a, enum alloc_kind k);

/* One line for the report: "glibc 2.36" or "not recognised (reason)". */
const char *alloc_describe(const struct alloc *a, char *buf, size_t size);

#endif
