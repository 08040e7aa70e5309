/*
 * The heap as a graph, built once per run and shared by every question asked of it:
 * the live blocks of one scan sorted and indexed, the roots with names, the pointers
 * between blocks (the allocator's free chunks and metadata left out) and, on demand,
 * the dominator tree. --leaks (leaks.c), --metric=retained_space (graph_dom.c) and
 * --why (graph_why.c) are consumers; graph.c builds it.
 */
#ifndef HP_GRAPH_H
#define HP_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "image.h"

struct alloc;
struct image;
struct scan_block;
struct scan_pages;
struct scan_result;
struct sym;

/*
 * Nodes: 0 is the virtual root above all roots, block i (sorted by address) is node
 * i + 1. Edges are node numbers; GRAPH_INTERIOR marks one where no word points to
 * the target's first byte (memcheck's interior pointer).
 */
#define GRAPH_INTERIOR (1u << 31)
#define GRAPH_NODE(e) ((e) & ~GRAPH_INTERIOR)
#define GRAPH_MAX_BLOCKS ((size_t)GRAPH_INTERIOR - 2)
#define GRAPH_NONE UINT32_MAX

/* rooted[i]: what the roots hold of block i */
enum { GRAPH_UNROOTED, GRAPH_ROOT_INTERIOR, GRAPH_ROOT_START };

/* A root pointing into a block, named: a register of a thread, or a word of memory. */
struct graph_root {
	bool reg;
	size_t thread;		/* index into img->threads */
	unsigned regno;		/* pr_reg word */
	uint64_t addr;		/* the word's address (memory roots) */
};

struct graph_stack {		/* one distinct allocation stack key (graph_dom.c) */
	uint64_t hash;
	uint64_t *pcs;		/* owned */
	unsigned nframes, flags;
	uint32_t tid;
	uint64_t retained;
};

struct graph {
	const struct image *img;
	const struct alloc *alloc;	/* known allocator, or NULL: its chunks are no roots */
	struct scan_block *b;		/* the scan's list, sorted by user, one per address */
	uint64_t *end;			/* pointer range end, clamped below the next block */
	size_t n;
	uint64_t *tls_lo, *tls_hi;	/* per img->threads entry; 0, 0 when unknown */

	/* the block index (graph.c) */
	uint64_t lo, hi;		/* [lowest user, highest end) */
	uint64_t *rkey;			/* sorted region numbers (addr >> GRAPH_REGION_SHIFT) */
	size_t nreg;
	unsigned gshift;		/* log2 of the granule */
	size_t stride;			/* cells per region: granules + 1 */
	uint32_t *cell;			/* nreg * stride */
	bool huge;			/* some block spans more than two regions */

	/* roots and edges; successors of node v are edge[eoff[v] .. eoff[v + 1]) */
	uint8_t *rooted;		/* by block: GRAPH_ROOT_* */
	uint32_t *eoff, *edge;
	size_t nedges, edge_cap;
	uint64_t root_bytes;		/* memory scanned as roots */
	uint64_t allocator_bytes;	/* left out: free chunks, malloc's metadata */
	uint64_t scanned_bytes;		/* block contents scanned */
	uint64_t skipped_bytes;		/* ... of them a runtime's bookkeeping, no edges */
	struct { uint32_t from, to; } *weak;	/* graph.c's while it builds: bookkeeping */
	size_t nweak, weak_cap;			/* links, by block */
	bool stack_cut;			/* some stack was scanned from its pointer up */
	unsigned dead_stacks;		/* stacks of exited threads left out (graph.c) */
	uint64_t dead_stack_bytes;	/* ... their bytes below the TLS */

	/* the dominator tree (graph_dominators) */
	uint32_t *idom;			/* by node */
	uint32_t *pre;			/* node -> depth-first preorder number; the root's is
					 * 0 (NULL once graph_add_retained is done with them):
					 * a node's dominators come before it */
	uint32_t *order;		/* preorder number -> node */
	uint64_t *ret;			/* by node: bytes its dominator subtree holds */
	uint64_t reached;		/* blocks reached from the roots */

	/* each block's stack (graph_stacks) */
	uint32_t *sid;
	struct graph_stack *ids;
	size_t nids;
	uint32_t *slot;			/* open-addressed ids by hash */
	size_t cap;
	uint32_t *parent;		/* --why: BFS tree from the root, by node */

	struct image_window win;	/* the bytes scanned (graph.c: span_bytes) */
	const struct scan_pages *pages;	/* the scan's, when they cover every block, or
					 * NULL: pages to skip */

	/* root walk state (graph.c) */
	uint32_t find;			/* block sought, GRAPH_NONE: mark every rooted one */
	bool found;
	struct graph_root ref;
};

/*
 * A runtime's own words in a block (Python's collector list links in front of an
 * object): its bookkeeping, not the block's references, so no edges. true with
 * [*lo, *hi) inside [user, user + size) when the block has such words.
 */
struct graph_runtime {
	bool (*bookkeeping)(void *ctx, uint64_t user, uint64_t size, uint64_t *lo, uint64_t *hi);
	void *ctx;
};

/*
 * Build the graph of scan's listed blocks (scan_image_blocks_with): sorts scan->list by
 * address and keeps one block per address (their state cleared); alloc (may be NULL or
 * not known) says what is no root. Roots: every thread's registers, every byte of the
 * image outside blocks (stacks from their thread's stack pointer up, less x86-64's red
 * zone), less the allocator's free chunks and metadata. Edges: each block's words
 * but rt's bookkeeping (rt may be NULL: every word). Exits (EXIT_NO_REPORT) only on
 * more than GRAPH_MAX_BLOCKS blocks.
 */
struct graph *graph_build(const struct image *img, struct scan_result *scan,
			  const struct alloc *alloc, const struct graph_runtime *rt);
void graph_free(struct graph *g);

/* The block w points into (start or interior), or SIZE_MAX. */
size_t graph_lookup(const struct graph *g, uint64_t w);

/* The bytes of block i the scan reads: its user bytes, clamped below the next block. */
uint64_t graph_content_end(const struct graph *g, size_t i);

/* The first root (registers first, then memory by address) pointing into block j. */
bool graph_find_root(struct graph *g, size_t j, struct graph_root *out);

/* Offset in block i of its first word pointing into block j (0 if none). */
uint64_t graph_pointer_offset(struct graph *g, size_t i, size_t j);

/*
 * The dominator tree (Lengauer and Tarjan's, O(m log n) whatever the shape), once;
 * blocks no root reaches hang below the virtual root from the lowest-addressed block
 * of each unreached group. Then ret[] by node.
 */
void graph_dominators(struct graph *g);

/*
 * Each block's stack key (sid, ids), as collect_join keys the plain report, once. It
 * and graph_add_retained fill the same table: a run asks for one of them.
 */
void graph_stacks(struct graph *g, const struct scan_result *scan);

/* How retained bytes are keyed and which blocks count (graph_add_retained). */
struct graph_keying {
	bool by_thread;			/* --by-thread: key by the thread too */
	bool region;			/* --region: only blocks of sites in region_id */
	uint32_t region_id;
	/* extra stack flags for a block (--leaks' class), or NULL */
	unsigned (*flags)(const struct scan_block *b);
};

/* Does block i count: not marked out, and in k's region if it names one (k may be NULL). */
bool graph_counted(const struct graph *g, const struct scan_result *scan,
		   const struct graph_keying *k, size_t i);

/*
 * Add each stack's retained bytes (its blocks' dominator subtrees, each block once) to
 * scan->stacks' counts, keyed as k says. Blocks marked out (scan_block.out) and, with
 * k->region, blocks of other regions add nothing; what they retain still counts.
 */
void graph_add_retained(struct graph *g, struct scan_result *scan, const struct graph_keying *k);

/*
 * What each group of blocks retains (--by=type's rows, for one): group[i] is block i's
 * (GRAPH_NONE: none), below ngroups; out[g] (ngroups of them, zeroed by the caller) gets
 * the bytes of the blocks that blocks of g dominate, each block once however many of
 * them dominate it (a block below another of its group counts in that one's). Makes the
 * dominator tree if it is not there.
 */
void graph_retained_by(struct graph *g, const uint32_t *group, size_t ngroups, uint64_t *out);

/*
 * --why's path to one block, as data: the shortest path of pointers from a root, with
 * what would make it long left out. A run of more than 2 * GRAPH_WHY_RUN + 1 blocks of
 * one allocation stack (a list, a chain) keeps its first and last GRAPH_WHY_RUN; of a
 * path still longer than 2 * GRAPH_WHY_ENDS + 1 steps, the first and last
 * GRAPH_WHY_ENDS are kept. A step left out stands for the hops it replaces.
 */
#define GRAPH_WHY_RUN 5
#define GRAPH_WHY_ENDS 20

struct graph_why_step {
	uint32_t block;		/* its index in g->b; GRAPH_NONE: hops left out */
	uint64_t offset;	/* a block: its word pointing into the next block of the
				 * whole path (0 on the last) */
	uint64_t hops;		/* left out: how many blocks */
	bool same_stack;	/* left out: all of the allocation stack of the blocks
				 * around them */
};

struct graph_why_path {
	size_t block;			/* the block asked about */
	bool reached;			/* a root reaches it; else no steps */
	bool have_root;			/* root names the root pointing into step 0 */
	struct graph_root root;
	uint64_t length;		/* blocks on the whole path */
	struct graph_why_step step[2 * GRAPH_WHY_ENDS + 1];
	unsigned nsteps;
};

/*
 * The path to block i (graph_stacks first: runs are told by its stack ids). Time in
 * the path's length, memory bounded: a path through ten million blocks is a few
 * dozen steps.
 */
void graph_why_path(struct graph *g, size_t i, struct graph_why_path *out);

/* What graph_why_path keeps of a whole path: np nodes (block + 1), the root's side
 * first, into out's steps and length (the rest of out untouched). */
void graph_why_steps(const struct graph *g, const uint32_t *path, uint32_t np,
		     struct graph_why_path *out);

/*
 * --why's answer, as a value that outlives the graph: for each block shown, its path
 * from a root (what graph_why_path keeps of it), the root named, and what the picked
 * blocks retain together by stack. Stacks are named as the report names frames (each
 * pc's innermost function, else module+0xoffset), or by one marker: "[unknown stack]",
 * "[no stack]".
 */
struct graph_why_stack {
	char **names;			/* innermost first; owned */
	unsigned n;
	const uint64_t *pcs;		/* its pcs: the graph's, valid while the graph lives */
	unsigned npcs;
	bool marked;			/* names[0] is a mark ("[unknown stack]"), no frames */
};

enum graph_why_root_kind {
	WHY_ROOT_NONE,			/* none found ("?") */
	WHY_ROOT_REGISTER,		/* a thread's register: tid, reg (NULL: regno) */
	WHY_ROOT_TLS,			/* a thread's TLS: tid, addr */
	WHY_ROOT_STACK,			/* a thread's stack: tid, name (its frame, or NULL),
					 * addr, offset (from the stack pointer) */
	WHY_ROOT_GLOBAL,		/* a module's symbol: name, module, offset */
	WHY_ROOT_MODULE_DATA,		/* a module's data, no symbol: module, offset */
	WHY_ROOT_UNTAGGED,		/* an allocator chunk with no heapprof header: addr */
	WHY_ROOT_ANONYMOUS,		/* other memory: addr */
};

struct graph_why_root {
	enum graph_why_root_kind kind;
	uint32_t tid;
	const char *reg;		/* a register's name; static */
	unsigned regno;
	uint64_t addr, offset;
	char *name, *module;		/* owned; module is a base name */
};

struct graph_why_hop {
	bool gap;			/* hops left out: hops of them (same_stack: all of
					 * the stack of the blocks around them) */
	uint64_t hops;
	bool same_stack;
	uint64_t addr, size;		/* a block on the path */
	uint64_t offset;		/* its word pointing into the next block kept */
	bool last;			/* the block asked about: no offset */
	size_t stack;			/* index into graph_why.stacks */
};

struct graph_why_shown {
	uint64_t addr, size, retains;
	size_t stack;
	bool reached;			/* a root reaches it; else no root and no hops */
	struct graph_why_root root;
	uint64_t length;		/* blocks on the whole path */
	struct graph_why_hop *hops;	/* the root's side first */
	unsigned nhops;
};

#define GRAPH_WHY_RETAINED_ROWS 20

struct graph_why_retained {
	uint64_t bytes, blocks;
	size_t stack;
};

struct graph_why {
	char *what;			/* as asked */
	size_t matched;			/* blocks picked */
	struct graph_why_shown *shown;	/* the top largest of them, size descending */
	size_t nshown;
	uint64_t retained_bytes, retained_blocks; /* by the picked blocks together */
	struct graph_why_retained rows[GRAPH_WHY_RETAINED_ROWS]; /* by stack, bytes descending */
	size_t nrows;
	bool more_rows;			/* stacks past those rows retain some too */
	struct graph_why_stack *stacks;
	size_t nstacks;
};

/*
 * --why: WHAT is 0xADDR (the block holding ADDR) or a POSIX extended regex matched
 * against the frame names of each block's stack; blocks marked out, or outside k's
 * region, are not picked. For the top (0: all) largest such blocks, the shortest path
 * from a root to it (graph_why_path). Returns 0 with *out (graph_why_free frees it),
 * or -1 when WHAT is a bad regex (err gets why); 1 when no block matched.
 */
int graph_why(struct graph *g, const struct scan_result *scan, struct sym *sym,
	      const struct graph_keying *k, const char *what, size_t top,
	      struct graph_why **out, char *err, size_t errlen);
/* The same for the blocks picked[i] says (by index in g->b), what naming them in the
 * answer; 1 when none of them is counted. */
int graph_why_picked(struct graph *g, const struct scan_result *scan, struct sym *sym,
		     const struct graph_keying *k, const char *what, const uint8_t *picked,
		     size_t top, struct graph_why **out);
void graph_why_free(struct graph_why *w);

/* Totals for stderr and tests: blocks, edges, blocks reached from the roots. */
void graph_counts(const struct graph *g, uint64_t *blocks, uint64_t *edges, uint64_t *reached);

#endif
