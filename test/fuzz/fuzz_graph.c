/*
 * libFuzzer target: the shapes that made the analyzer slow or unbounded, built from
 * the bytes. Even first byte: glibc's arenas made up in a small image (main_arena, up
 * to five arenas of up to three heaps, chunks, fastbins and a tcache), their next and
 * prev links and free lists chosen by the bytes (loops, links into garbage), then any
 * word of the image overwritten, through alloc_glibc_walk: the chunks it lists must
 * be fewer than the image's bytes hold, and its untagged chunks as blocks (a core
 * taken without heapprof) each inside its chunk, then their heap graph and what each
 * retains. Odd: a heap graph (random, a list pointing
 * back to its owner, a long chain, unreached cycles) through the dominator tree,
 * checked against dominator sets when small, and --why's cut of its paths. Nothing may
 * crash, hang or leak. Build and run: make fuzz (needs clang).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "alloc_int.h"
#include "graph.h"
#include "image.h"
#include "scan.h"
#include "untagged.h"
#include "../helpers/graph_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct bytes {
	const uint8_t *p;
	size_t left;
};

static unsigned take(struct bytes *b)
{
	if (!b->left)
		return 0;
	b->left--;
	return *b->p++;
}

static uint32_t take16(struct bytes *b)
{
	return take(b) | take(b) << 8;
}

/* ---- glibc's arenas --------------------------------------------------------------- */

#define MS_FAST 16
#define MS_TOP 96
#define MS_BINS 112
#define MS_NEXT 2160
#define MS_SYSMEM 2184
#define MS_MAXSYSMEM 2192
#define MS_SIZE 2200
#define HEAP_MAX ((uint64_t)64 << 20)
#define MAIN 0x10000ull			/* main_arena, in "libc's data" */
#define BRK 0x100000ull			/* the main arena's heap */
#define HEAPSZ 0x3000ull
#define MAXA 5
#define MAXH 3
#define MAXSEG (2 + MAXA * MAXH)
#define MAXCH 256

struct made {
	struct image img;
	struct seg seg[MAXSEG];
	unsigned char *mem[MAXSEG];
	int minor;
	uint64_t info;			/* sizeof(heap_info) */
	unsigned narenas, nheaps[MAXA];
	uint64_t arena[MAXA];
	uint64_t chunk[MAXA][MAXCH];	/* each arena's chunks, for links to them */
	uint64_t csize[MAXA][MAXCH];
	unsigned nchunk[MAXA];
};

static unsigned char *at(struct made *m, uint64_t addr)
{
	for (size_t i = 0; i < m->img.nsegs; i++)
		if (addr >= m->seg[i].vaddr && addr + 8 <= m->seg[i].vaddr + m->seg[i].size)
			return m->mem[i] + (addr - m->seg[i].vaddr);
	return NULL;
}

static void put(struct made *m, uint64_t addr, uint64_t v)
{
	unsigned char *p = at(m, addr);

	if (p)
		memcpy(p, &v, 8);
}

static void add_seg(struct made *m, uint64_t vaddr, uint64_t size)
{
	size_t i = m->img.nsegs++;

	m->mem[i] = calloc(1, size);
	m->seg[i] = (struct seg){ .vaddr = vaddr, .size = size, .data = m->mem[i], .fd = -1 };
}

/* heap j of arena k (j 0 holds the state): 64 MiB apart, as glibc maps them */
static uint64_t heap_at(unsigned k, unsigned j)
{
	return (uint64_t)(k * MAXH + j + 1) * HEAP_MAX;
}

/* Chunks from [start, end), sizes from the bytes (the first first_size if not 0), the
 * last a top or a fencepost. */
static uint64_t fill_heap(struct made *m, struct bytes *b, unsigned k, uint64_t start,
			  uint64_t end, bool top, uint64_t first_size)
{
	uint64_t p = start, prev_free = 0;

	for (;;) {
		unsigned x = take(b);
		uint64_t sz = p == start && first_size ? first_size : 32 + 16 * (x % 40);

		if (p + sz + 64 > end)
			break;
		put(m, p + 8, sz | (prev_free ? 0 : 1));
		if (prev_free)
			put(m, p, prev_free);
		/* free: the next one's PREV_INUSE clear */
		prev_free = x & 0x80 && p != start ? sz : 0;
		if (m->nchunk[k] < MAXCH) {
			m->csize[k][m->nchunk[k]] = prev_free ? 0 : sz;	/* 0: free */
			m->chunk[k][m->nchunk[k]++] = p;
		}
		p += sz;
	}
	if (top) {
		put(m, p + 8, (end - p) | (prev_free ? 0 : 1));
		return p;
	}
	/* a heap that is no longer its arena's last: a chunk to its end, then glibc's
	 * fenceposts (16 bytes, then a size of 0) */
	put(m, p + 8, (end - 32 - p) | (prev_free ? 0 : 1));
	put(m, end - 32 + 8, 16 | 1);
	put(m, end - 16, 16);
	put(m, end - 16 + 8, 0);
	return 0;
}

/* An in-use chunk of arena k of size, from the x-th on; 0 if none. */
static uint64_t chunk_of(const struct made *m, unsigned k, unsigned x, uint64_t size)
{
	for (unsigned i = 0; i < m->nchunk[k]; i++) {
		unsigned c = (x + i) % m->nchunk[k];

		if (m->csize[k][c] == size && c)
			return m->chunk[k][c];
	}
	return 0;
}

static uint64_t mangle(const struct made *m, uint64_t pos, uint64_t ptr)
{
	return m->minor >= 32 ? (pos >> 12) ^ ptr : ptr;
}

static void make_state(struct made *m, struct bytes *b, unsigned k, uint64_t top, uint64_t sys)
{
	uint64_t s = m->arena[k], next;
	unsigned c = take(b) % (m->narenas + 3);

	for (unsigned i = 1; i < 128; i++) {
		uint64_t bin = s + MS_BINS + (uint64_t)(i - 1) * 16;

		put(m, bin, bin - 16);
		put(m, bin + 8, bin - 16);
	}
	put(m, s + MS_TOP, top);
	put(m, s + MS_SYSMEM, sys);
	put(m, s + MS_MAXSYSMEM, sys);
	/* the next link: the list as glibc keeps it, or any arena (loops), or garbage */
	next = k + 1 < m->narenas ? m->arena[k + 1] : MAIN;
	if (c < m->narenas)
		next = m->arena[c];
	else if (c == m->narenas)
		next = MAIN + 0x900 + 8 * (take(b) % 16);
	put(m, s + MS_NEXT, next);
	/* fastbins: a chunk of the bin's size each, its link to one of the same size or
	 * any chunk of the arena (a loop, maybe) */
	for (unsigned i = 0; i < 10 && m->nchunk[k]; i++) {
		unsigned x = take(b), y = take(b);
		uint64_t head = chunk_of(m, k, x, 32 + 16 * i), to;

		if (!head || x & 0x80)
			continue;
		to = y & 0x40 ? m->chunk[k][y % m->nchunk[k]] : chunk_of(m, k, y, 32 + 16 * i);
		put(m, s + MS_FAST + 8 * i, head);
		put(m, head + 16, mangle(m, head + 16, y & 0x80 ? 0 : to));
	}
}

/* The tcache_perthread_struct glibc puts first in the main heap: its size */
static uint64_t tcache_size(const struct made *m)
{
	return m->minor >= 30 ? 0x290 : 0x250;
}

/* ... and its counts and entries, into chunks of the bins' sizes linked as the bytes
 * say (to themselves, maybe) */
static void make_tcache(struct made *m, struct bytes *b)
{
	unsigned cw = m->minor >= 30 ? 2 : 1;
	uint64_t mem = BRK + 16, ent = mem + 64 * cw;

	for (unsigned i = 0; i < 8; i++) {
		unsigned x = take(b), y = take(b);
		uint64_t e = chunk_of(m, 0, x, 32 + 16 * i), to = chunk_of(m, 0, y, 32 + 16 * i);

		if (!e || x & 0x80)
			continue;
		at(m, mem + i * cw)[0] = (unsigned char)(1 + y % 8);
		put(m, ent + 8 * i, e + 16);
		put(m, e + 16, mangle(m, e + 16, y & 0x40 || !to ? 0 : to + 16));
	}
}

/* The untagged chunks as blocks: no more than the chunks, each inside its own; their
 * graph and what each retains, as a core taken without heapprof gives them. */
static void untagged_graph(struct alloc *a, const struct image *img)
{
	struct scan_result scan = { 0 };
	uint64_t bytes, own, *ret;
	uint32_t *group;
	struct graph *g;
	size_t n;

	a->reader = &alloc_glibc_reader;	/* the walk alone leaves it unset */
	a->known = true;
	n = untagged_blocks(a, &scan.list, &bytes, &own);
	if (n > a->nchunks)
		abort();
	for (size_t i = 0; i < n; i++) {
		const struct alloc_chunk *c = alloc_find(a, scan.list.v[i].user);

		if (!c || scan.list.v[i].user + scan.list.v[i].size > c->addr + c->size + 8)
			abort();
	}
	g = graph_build(img, &scan, a, NULL);
	graph_dominators(g);
	group = malloc((g->n ? g->n : 1) * sizeof(*group));
	ret = calloc(3, sizeof(*ret));
	for (size_t i = 0; i < g->n; i++)
		group[i] = i % 4 == 3 ? GRAPH_NONE : (uint32_t)(i % 3);
	graph_retained_by(g, group, 3, ret);
	free(group);
	free(ret);
	graph_free(g);
	free(scan.list.v);
}

static void fuzz_arenas(struct bytes *b)
{
	struct made *m = calloc(1, sizeof(*m));
	struct scan_blocks none = { 0 };
	struct alloc a;
	uint64_t tops[MAXA] = { 0 };

	m->minor = 27 + (int)(take(b) % 15);
	m->info = m->minor >= 35 ? 48 : 32;
	m->narenas = 1 + take(b) % MAXA;
	m->img = (struct image){ .wsize = 8, .fd = -1, .segs = m->seg };
	add_seg(m, MAIN, 0x1000);
	add_seg(m, BRK, HEAPSZ);
	m->arena[0] = MAIN;
	for (unsigned k = 1; k < m->narenas; k++) {
		m->nheaps[k] = 1 + take(b) % MAXH;
		m->arena[k] = heap_at(k, 0) + m->info;
		for (unsigned j = 0; j < m->nheaps[k]; j++)
			add_seg(m, heap_at(k, j), HEAPSZ);
	}
	tops[0] = fill_heap(m, b, 0, BRK, BRK + HEAPSZ, true, tcache_size(m));
	for (unsigned k = 1; k < m->narenas; k++)
		for (unsigned j = 0; j < m->nheaps[k]; j++) {
			uint64_t h = heap_at(k, j), start = j ? h + m->info :
				(m->arena[k] + MS_SIZE + 15) & ~15ull;
			unsigned c = take(b) % (m->nheaps[k] + 2);
			uint64_t prev = j ? heap_at(k, j - 1) : 0;

			if (c < m->nheaps[k])		/* any heap of the arena: loops */
				prev = heap_at(k, c);
			else if (c == m->nheaps[k])
				prev = h + 0x1000;	/* not a heap's start */
			put(m, h, m->arena[k]);
			put(m, h + 8, prev);
			put(m, h + 16, HEAPSZ);
			put(m, h + 24, HEAPSZ);
			if (j + 1 == m->nheaps[k])
				tops[k] = fill_heap(m, b, k, start, h + HEAPSZ, true, 0);
			else
				fill_heap(m, b, k, start, h + HEAPSZ, false, 0);
		}
	for (unsigned k = 0; k < m->narenas; k++)
		make_state(m, b, k, tops[k], HEAPSZ * (k ? m->nheaps[k] : 1));
	make_tcache(m, b);
	for (unsigned n = take(b) % 4; n > 0 && b->left >= 11; n--) {	/* any word anywhere */
		unsigned s = take(b) % m->img.nsegs;
		uint64_t off = take16(b) % m->seg[s].size & ~7ull, v = 0;

		for (unsigned i = 0; i < 8; i++)
			v |= (uint64_t)take(b) << (8 * i);
		put(m, m->seg[s].vaddr + off, v);
	}
	for (size_t i = 0; i < m->img.nsegs; i++)
		m->img.bytes += m->seg[i].size;
	memset(&a, 0, sizeof(a));
	alloc_glibc_walk(&a, &m->img, MAIN, m->minor, &none);
	/* each chunk read from bytes no other chunk's walk read: bounded by the image */
	if (a.nchunks > m->img.bytes / 16 + m->img.nsegs)
		abort();
	for (size_t i = 1; i < a.nchunks; i++)
		if (a.chunks[i].addr < a.chunks[i - 1].addr)
			abort();
	alloc_find(&a, BRK + 0x100);
	untagged_graph(&a, &m->img);
	alloc_close(&a);
	for (size_t i = 0; i < m->img.nsegs; i++)
		free(m->mem[i]);
	free(m);
}

/* ---- the heap graph --------------------------------------------------------------- */

static void fuzz_graph(struct bytes *b)
{
	unsigned shape = take(b) % 4;
	/* up to 131,072 nodes in a list or chain: a minute of quadratic dominators */
	size_t n = shape == 0 ? 1 + take(b) % SLOW_MAX :
		   shape == 3 ? 2 + take16(b) % 4096 : 2 + 2 * (size_t)take16(b);
	struct scan_block *blk = calloc(n, sizeof(*blk));
	struct edges e = { 0 };
	struct graph *g;
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++) {
		blk[i] = (struct scan_block){ .user = 0x100000 + 32 * i, .size = 1 + take(b) % 64 };
		total += blk[i].size;
	}
	if (shape == 1 || shape == 2) {		/* a back-pointer list, or a chain */
		edge_add(&e, 0, 1);
		for (uint32_t v = 2; v <= n; v++) {
			edge_add(&e, v - 1, v);
			if (shape == 1)
				edge_add(&e, v, 1);
		}
	}
	for (unsigned r = take(b) % 4; r > 0; r--)
		edge_add(&e, 0, 1 + take16(b) % n);
	while (b->left >= 4 && e.n < 8 * n)	/* the rest: any edges (self, repeated) */
		edge_add(&e, 1 + take16(b) % n, 1 + take16(b) % n);
	g = graph_make(n, &e, blk);
	graph_dominators(g);
	if (g->ret[0] != total)		/* the root retains every block */
		abort();
	if (n <= SLOW_MAX) {
		uint32_t want[SLOW_MAX + 1];
		char why[200];

		slow_idom(n, &e, want);
		if (!same_tree(g, want, why, sizeof(why))) {
			fprintf(stderr, "%s\n", why);
			abort();
		}
	}
	/* --why's cut of the dominator path to the last block, stacks from the sizes */
	{
		uint32_t np = 0, *path = malloc((n + 1) * sizeof(*path));
		struct graph_why_path *p = malloc(sizeof(*p));
		char why[200];

		g->sid = malloc(n * sizeof(*g->sid));
		for (size_t i = 0; i < n; i++)
			g->sid[i] = blk[i].size % 3;
		for (uint32_t v = (uint32_t)n; v; v = g->idom[v])
			path[np++] = v;
		for (uint32_t i = 0; i < np / 2; i++) {
			uint32_t t = path[i];

			path[i] = path[np - 1 - i];
			path[np - 1 - i] = t;
		}
		if (!steps_ok(g, path, np, p, why, sizeof(why))) {
			fprintf(stderr, "%s\n", why);
			abort();
		}
		free(p);
		free(path);
	}
	graph_free(g);
	free(e.v);
	free(blk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bytes b = { data, size };

	util_quiet = true;
	if (take(&b) & 1)
		fuzz_graph(&b);
	else
		fuzz_arenas(&b);
	return 0;
}
