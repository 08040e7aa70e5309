/*
 * Leaks by reachability (memcheck's classes) from the heap graph (graph.h) of one scan:
 * which live heapprof blocks no root reaches. The graph's roots are conservative (every
 * thread's registers, every byte of the image outside live blocks and the allocator's
 * free chunks); then, transitively, the blocks reached. docs/guide.md ("Leaks by
 * reachability") gives the classes and what conservative scanning cannot see.
 */
#ifndef HP_LEAKS_H
#define HP_LEAKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stacks.h"

struct alloc;
struct graph;
struct image;
struct scan_block;
struct scan_result;
struct sym;

enum leak_class {
	LEAK_DEFINITE,		/* no pointer to the block anywhere (or a cycle's head) */
	LEAK_INDIRECT,		/* pointed to only from lost blocks */
	LEAK_POSSIBLE,		/* reached, but only through interior pointers or from
				 * possibly lost blocks */
	LEAK_REACHABLE,		/* reached from a root through start pointers */
	LEAK_NCLASSES
};
#define LEAK_MASK_LOST (1u << LEAK_DEFINITE | 1u << LEAK_INDIRECT)
#define LEAK_MASK_ALL ((1u << LEAK_NCLASSES) - 1)

/* A stack's class, kept in its flags (stacks.h) so that one stack gives one report
 * entry per class, as memcheck's loss records do. 0: no class (plain report). */
#define LEAK_FLAG_SHIFT STACK_CLASS_SHIFT
#define LEAK_FLAG_MASK STACK_CLASS_MASK

/* EXIT status of --fail-on-leak when definitely lost bytes remain (not suppressed). */
#define EXIT_LEAKS 3

struct leak_supp;

struct leak_summary {
	unsigned mask;				/* classes shown */
	uint64_t bytes[LEAK_NCLASSES];		/* not suppressed; estimates when sampled */
	uint64_t blocks[LEAK_NCLASSES];
	uint64_t supp_bytes[LEAK_NCLASSES];	/* removed by --suppressions */
	uint64_t supp_blocks[LEAK_NCLASSES];
	const struct leak_supp *supp;
	unsigned threads;			/* threads whose registers were roots */
	bool stack_cut;				/* stacks scanned from the stack pointer up */
	unsigned dead_stacks;			/* stacks of exited threads: no roots */
	uint64_t dead_stack_bytes;		/* ... their bytes */
	uint64_t root_bytes;			/* memory scanned as roots */
	uint64_t allocator_bytes;		/* left out: free chunks, malloc's metadata */
	char allocator[300];			/* alloc_describe() */
	bool allocator_known;			/* its free chunks were left out */
	char allocator_damage[200];		/* the first part of it not walked, or "" */
	unsigned allocator_problems;		/* how many parts were not */
	uint64_t scanned_bytes;			/* block contents scanned */
};

/* "definite,indirect" -> mask; false on an unknown name. */
bool leaks_parse_classes(const char *s, unsigned *mask);

/* Read LeakSanitizer-style suppressions ("leak:PATTERN" lines); NULL with err. */
struct leak_supp *leaks_read_suppressions(const char *path, char *err, size_t errlen);
void leaks_free_suppressions(struct leak_supp *s);

/*
 * Classify every block of g (built on scan) and replace scan->stacks by the stacks of
 * the classes in mask, each stack once per class, minus what the suppressions match
 * (sym symbolizes for them), counting in supp how many stacks each pattern matched
 * (for the summary). The blocks left out are marked (scan_block.out); each keeps its
 * class in its state (leaks_block_flags). alloc (may be NULL) is described in *sum,
 * which gets all four classes.
 */
void leaks_apply(struct graph *g, struct scan_result *scan, struct sym *sym,
		 const struct alloc *alloc, struct leak_supp *supp, unsigned mask,
		 struct leak_summary *sum);

/* A classified block's class as stack flags (LEAK_FLAG_MASK), as its report entry has. */
unsigned leaks_block_flags(const struct scan_block *b);

/* "definitely lost", ... for a stack's flags; NULL when it carries no class. */
const char *leaks_class_name(unsigned stack_flags);

/* The report's section: the roots and LEAK SUMMARY (text), "leaks" (JSON). */
struct section_ops;
extern const struct section_ops leaks_section;

#endif
