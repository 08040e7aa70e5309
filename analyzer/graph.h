/*
 * The heap as a graph: the live blocks of one scan sorted and indexed, the conservative
 * pointers between them (leaks.c's scan, the allocator's free chunks and metadata left
 * out), the roots with names, a virtual root above them, and the dominator tree.
 * Built once per run for --metric=retained_space and --why.
 */
#ifndef HP_GRAPH_H
#define HP_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct alloc;
struct image;
struct scan_result;
struct sym;

struct graph;

/*
 * Build the graph of scan's listed blocks (scan_image_blocks_with); sorts scan->list
 * by address and keeps one block per address, as leaks_apply does. alloc (may be NULL
 * or not known) says what is no root. Then the dominator tree (Cooper, Harvey and
 * Kennedy's iterative algorithm on reverse postorder); blocks no root reaches hang
 * below the virtual root from the lowest-addressed block of each unreached group.
 * Exits (EXIT_NO_REPORT) only on more than 2^32 - 2 blocks.
 */
struct graph *graph_build(const struct image *img, struct scan_result *scan,
			  const struct alloc *alloc);

/* Add each stack's retained bytes (its blocks' dominator subtrees, each block once)
 * to scan->stacks' counts, keyed as the plain join keys them (no --by-thread). */
void graph_add_retained(struct graph *g, struct scan_result *scan);

/*
 * --why: WHAT is 0xADDR (the block holding ADDR) or a POSIX extended regex matched
 * against the frame names of each block's stack. For the top (0: all) largest such
 * blocks, the shortest path from a root to it. Returns 0, or -1 when WHAT is a bad
 * regex (err gets why); 1 when no block matched.
 */
int graph_why(struct graph *g, const struct scan_result *scan, struct sym *sym,
	      const char *what, size_t top, FILE *f, char *err, size_t errlen);

/* Totals for stderr and tests: blocks, edges, blocks reached from the roots. */
void graph_counts(const struct graph *g, uint64_t *blocks, uint64_t *edges, uint64_t *reached);

void graph_free(struct graph *g);

#endif
