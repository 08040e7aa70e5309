/*
 * --memory: where the process's memory goes, from the dump's segments and the
 * allocator's chunks (alloc.h): bytes per mapping kind, and inside the arenas what
 * the allocator's own figures would say and how the chunks split.
 */
#ifndef HP_MEMORY_H
#define HP_MEMORY_H

#include <stdint.h>
#include <stdio.h>

struct alloc;
struct image;
struct maps;
struct pinned;
struct report_frame;
struct sym;

enum memory_kind {
	MEM_ARENAS,		/* the allocator's heaps; what an allocator other than
				 * glibc's mapped for itself (maps.h) */
	MEM_MMAPPED,		/* chunks in mappings of their own */
	MEM_STACKS,		/* segments holding a thread's stack pointer, kept stacks
				 * of exited threads, and their guard areas */
	MEM_MAPPED,		/* mapped by the program, with a stack (maps.h) */
	MEM_HEAPPROF,		/* heapprof's own tables (maps.h) */
	MEM_MODULES,		/* inside a module's address range: its data and bss (to
				 * its last page's end); the vsyscall page */
	MEM_FILES,		/* other mapped files (written private pages) */
	MEM_LOADER,		/* the main thread's TLS and control block (ld.so maps it) */
	MEM_OTHER,		/* anonymous memory of no known origin: mapped before
				 * heapprof started, by a raw system call */
	MEM_NKINDS
};

/* The blocks heapprof.so named in slab tables (python's object allocator's pools) as the
 * scan found them: under HEAPPROF_SAMPLE, the sampled ones. */
struct memory_slabs {
	uint64_t tables, blocks;	/* tables naming a block (pools in use), blocks */
	uint64_t slot_bytes;		/* their slots: a block's size class each */
	uint64_t user_bytes;		/* what was asked for */
};

struct memory_summary {
	const struct alloc *alloc;
	uint64_t bytes[MEM_NKINDS];	/* bytes of the dump's segments */
	uint64_t dumped;		/* all of them */
	/* What the kernel said was resident (img->resident), per kind as the mappings
	 * split (a mapping's Rss shared out by its bytes), whole mappings included that
	 * the dump left out. resident_why says why not, when it was not recorded. */
	const char *resident_why;
	uint64_t resident[MEM_NKINDS];
	uint64_t resident_total, swapped_total;
	size_t resident_maps;
	const struct pinned *pinned;	/* free memory pinned, by stack (pinned.h); NULL: none */
	const struct maps *maps;	/* the map table (maps.h) */
	struct memory_slabs slabs;
	/* heapprof's headers in the blocks found (v2: 16 bytes each, more for an
	 * aligned block's; v1: 48 and its pcs; slab blocks have none) */
	uint64_t header_bytes, header_blocks;
};

/* Fill *m from img; alloc (opened on the same image) and maps (maps_apply, on the same
 * scan) must outlive it. */
void memory_apply(const struct image *img, struct sym *sym, const struct alloc *alloc,
		  const struct maps *maps, struct memory_summary *m);

/* The report's section: MEMORY (text), "memory" (JSON, the page); its data is the
 * memory_summary. */
struct section_ops;
extern const struct section_ops memory_section;

#endif
