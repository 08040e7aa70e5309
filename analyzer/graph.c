/*
 * The heap graph's build (see graph.h): blocks sorted and indexed, the roots marked,
 * the pointers between blocks as edges. Each block's contents are scanned once here;
 * consumers walk the edges. The dominator tree is graph_dom.c's, --why graph_why.c's.
 *
 * Finding the block a word points into: blocks sorted by address, then a two-level
 * index: the 1 GiB regions that blocks overlap (sorted), each with an array of cells
 * saying which block is the first to start at or after each granule of the region.
 * The granule grows until the index fits in 8 bytes per block (or 4 MiB), so memory
 * stays linear in the number of blocks whatever the addresses.
 */
#include <elf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "graph.h"
#include "image.h"
#include "rd.h"
#include "scan.h"
#include "util.h"

#define GRAPH_REGION_SHIFT 30
_Static_assert(GRAPH_REGION_SHIFT == SCAN_REGION_SHIFT,
	       "graph_build checks its regions against the scan's pages");
#define MAX_REGIONS_PER_BLOCK 2	/* a block spanning more is "huge": found by bsearch */
#define X86_64_REDZONE 128		/* bytes below rsp a leaf function may use */
#define X86_64_TCB_BYTES 2304	/* glibc's struct pthread above the thread pointer */
#define DEAD_STACK_ALIGN_MAX 8192	/* static TLS alignment a descriptor may sit below */

static int block_cmp(const void *a, const void *b)
{
	const struct scan_block *x = a, *y = b;

	return (x->user > y->user) - (x->user < y->user);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The last block with user <= w among [lo, hi), or SIZE_MAX. */
static size_t last_at_or_below(const struct graph *g, size_t lo, size_t hi, uint64_t w)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->b[mid].user <= w)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : SIZE_MAX;
}

static size_t region_find(const struct graph *g, uint64_t r)
{
	return sorted_find_u64(g->rkey, g->nreg, r);
}

static inline size_t lookup(const struct graph *g, uint64_t w)
{
	size_t r, i, c;
	const uint32_t *cell;

	if (w < g->lo || w >= g->hi)
		return SIZE_MAX;
	r = region_find(g, w >> GRAPH_REGION_SHIFT);
	if (r == SIZE_MAX) {
		if (!g->huge)
			return SIZE_MAX;
		i = last_at_or_below(g, 0, g->n, w);
	} else {
		c = (size_t)((w & ((1ULL << GRAPH_REGION_SHIFT) - 1)) >> g->gshift);
		cell = g->cell + r * g->stride + c;
		/* blocks starting in this granule are [cell[0], cell[1]); the one before
		 * them may reach into it */
		i = last_at_or_below(g, cell[0], cell[1], w);
		if (i == SIZE_MAX || i < cell[0])
			i = cell[0] ? cell[0] - 1 : SIZE_MAX;
	}
	return i != SIZE_MAX && w < g->end[i] ? i : SIZE_MAX;
}

size_t graph_lookup(const struct graph *g, uint64_t w)
{
	return lookup(g, w);
}

static void add_region(struct graph *g, uint64_t r, size_t *cap)
{
	if (g->nreg && g->rkey[g->nreg - 1] == r)
		return;
	if (g->nreg == *cap)
		g->rkey = xrealloc(g->rkey, (*cap *= 2) * sizeof(*g->rkey));
	g->rkey[g->nreg++] = r;
}

static void build_index(struct graph *g)
{
	size_t cap = 16, budget, m = 0;

	g->rkey = xmalloc(cap * sizeof(*g->rkey));
	g->lo = g->n ? g->b[0].user : 0;
	for (size_t i = 0; i < g->n; i++) {
		uint64_t r0 = g->b[i].user >> GRAPH_REGION_SHIFT;
		uint64_t r1 = (g->end[i] - 1) >> GRAPH_REGION_SHIFT;

		if (g->end[i] > g->hi)
			g->hi = g->end[i];
		if (r1 - r0 >= MAX_REGIONS_PER_BLOCK) {
			g->huge = true;
			r1 = r0;
		}
		for (uint64_t r = r0; r <= r1; r++)
			add_region(g, r, &cap);
	}
	qsort(g->rkey, g->nreg, sizeof(*g->rkey), u64_cmp);
	for (size_t i = 0; i < g->nreg; i++)
		if (!m || g->rkey[m - 1] != g->rkey[i])
			g->rkey[m++] = g->rkey[i];
	g->nreg = m;
	budget = g->n * 8 > ((size_t)4 << 20) ? g->n * 8 : (size_t)4 << 20;
	for (g->gshift = 9; g->gshift < GRAPH_REGION_SHIFT; g->gshift++)
		if (g->nreg * ((1ULL << (GRAPH_REGION_SHIFT - g->gshift)) + 1) * sizeof(uint32_t) <=
		    budget)
			break;
	g->stride = (size_t)(1ULL << (GRAPH_REGION_SHIFT - g->gshift)) + 1;
	g->cell = xmalloc((g->nreg ? g->nreg : 1) * g->stride * sizeof(*g->cell));
	for (size_t r = 0, i = 0; r < g->nreg; r++) {
		uint64_t base = g->rkey[r] << GRAPH_REGION_SHIFT;

		/* blocks are sorted: the first starting at or after the region's start */
		i = last_at_or_below(g, 0, g->n, base ? base - 1 : 0);
		i = i == SIZE_MAX ? 0 : i + (g->b[i].user < base);
		for (size_t c = 0; c < g->stride; c++) {
			uint64_t x = base + ((uint64_t)c << g->gshift);

			while (i < g->n && g->b[i].user < x)
				i++;
			g->cell[r * g->stride + c] = (uint32_t)i;
		}
	}
}

static inline uint64_t load_word(const struct graph *g, const unsigned char *p)
{
	bool swap = g->img->big_endian != host_big_endian();

	if (g->img->wsize == 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		return swap ? __builtin_bswap64(v) : v;
	} else {
		uint32_t v;

		memcpy(&v, p, 4);
		return swap ? __builtin_bswap32(v) : v;
	}
}

uint64_t graph_content_end(const struct graph *g, size_t i)
{
	const struct scan_block *b = &g->b[i];
	uint64_t e = b->user + b->size;

	if (e < b->user)
		e = UINT64_MAX;
	if (i + 1 < g->n) {
		uint64_t next = g->b[i + 1].user - g->b[i + 1].below;

		if (next > g->b[i + 1].user)
			next = 0;
		if (e > next)
			e = next > b->user ? next : b->user;
	}
	return e;
}

/* Where block i's bytes end, header and contents: what the root scan skips. */
static uint64_t extent_end(const struct graph *g, size_t i)
{
	uint64_t c = graph_content_end(g, i);

	return g->end[i] > c ? g->end[i] : c;
}

/*
 * Call visit(g, j, addr, start) for every aligned word of [a, b) the image holds that
 * points into block j (start: to its first byte); stops when visit returns false.
 */
typedef bool (*visit_fn)(struct graph *g, size_t j, uint64_t addr, bool start);

/*
 * The bytes of [from, to) in segment s, or of its first part, which ends at *part_end
 * (a word boundary): read through an image_window, as the scan and the allocator's
 * walk read (a 1 GiB heap read through the core's mapping made --leaks 1.2 GB
 * resident). A read that fails is read through the mapping.
 */
#define GRAPH_WIN ((size_t)256 << 10)

static const unsigned char *span_bytes(struct graph *g, const struct seg *s, uint64_t from,
				       uint64_t to, uint64_t *part_end)
{
	struct image_window *w = &g->win;
	uint64_t ws = g->img->wsize, end;

	if (w->seg != s || !image_window_has(w, from, ws)) {
		if (!image_window_fill(w, s, from, GRAPH_WIN) || !image_window_has(w, from, ws)) {
			w->seg = NULL;
			*part_end = to;
			return s->data + (from - s->vaddr);
		}
	}
	end = w->end;
	if (s->in_file && s->fd >= 0)	/* a read: whole words from from on */
		end = w->start + ((end - w->start) & ~(ws - 1));
	*part_end = to < end ? to : end;
	return w->p + (from - w->start);
}

static bool scan_span(struct graph *g, uint64_t a, uint64_t b, visit_fn visit)
{
	const struct image *img = g->img;
	unsigned ws = img->wsize;
	size_t lo = 0, hi = img->nsegs;
	uint64_t mask = ws - 1;

	if (a > UINT64_MAX - mask)
		return true;
	a = (a + mask) & ~mask;
	if (a >= b)
		return true;
	while (lo < hi) {	/* the first segment that ends after a */
		size_t mid = lo + (hi - lo) / 2;
		const struct seg *s = &img->segs[mid];

		if (s->vaddr + s->size <= a && s->vaddr + s->size > s->vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < img->nsegs && a < b; lo++) {
		const struct seg *s = &img->segs[lo];
		uint64_t from = a > s->vaddr ? a : s->vaddr, to = b;
		const unsigned char *p;

		if (s->vaddr >= b)
			break;
		if (s->size < to - s->vaddr)
			to = s->vaddr + s->size;
		from = (from + mask) & ~mask;
		if (to <= from)
			continue;
		while (from + ws <= to) {
			uint64_t part, page_end = to;

			if (g->pages) {	/* a page the scan saw no address in: skipped */
				page_end = s->vaddr + ((((from - s->vaddr) >> SCAN_PAGE_SHIFT) + 1)
						       << SCAN_PAGE_SHIFT);
				if (page_end > to || page_end < from)
					page_end = to;
				if (!scan_page_maybe(g->pages, lo, s->vaddr, from)) {
					from = page_end;
					continue;
				}
			}
			p = span_bytes(g, s, from, page_end, &part);
			for (uint64_t x = from; x + ws <= part; x += ws, p += ws) {
				uint64_t w = load_word(g, p);
				size_t j;

				if (w < g->lo || w >= g->hi || (j = lookup(g, w)) == SIZE_MAX)
					continue;
				if (!visit(g, j, x, w == g->b[j].user))
					return false;
			}
			from = part;
		}
		a = to;
	}
	return true;
}

/* ------------------------------------------------------------------------------ */
/* Roots: registers, memory outside blocks (stacks from sp), less the allocator's. */

static bool root_visit(struct graph *g, size_t j, uint64_t addr, bool start)
{
	if (g->find == GRAPH_NONE) {
		uint8_t r = start ? GRAPH_ROOT_START : GRAPH_ROOT_INTERIOR;

		if (g->rooted[j] < r)
			g->rooted[j] = r;
		return true;
	}
	if (j != g->find)
		return true;
	g->found = true;
	g->ref = (struct graph_root){ .addr = addr };
	return false;
}

/* [a, b) outside blocks, less what the allocator says is free or its own */
static bool scan_root(struct graph *g, uint64_t a, uint64_t b)
{
	const struct alloc *al = g->alloc;
	size_t i = al ? alloc_nonroot_from(al, a) : 0;
	bool counting = g->find == GRAPH_NONE;

	while (a < b) {
		uint64_t to = b;

		if (al && i < al->nnonroot && al->nonroot[i].start < b) {
			if (al->nonroot[i].start <= a) {
				uint64_t e = al->nonroot[i++].end;

				to = e < b ? e : b;
				if (counting)
					g->allocator_bytes += to - a;
				a = to;
				continue;
			}
			to = al->nonroot[i].start;
		}
		if (counting)
			g->root_bytes += to - a;
		if (!scan_span(g, a, to, root_visit))
			return false;
		a = to;
	}
	return true;
}

/* The thread descriptor glibc x86-64 put at the top of segment s (its first and third
 * words point at itself), or 0: below the top, by its size and at most 8 KiB of
 * alignment, in steps of 16 bytes. */
static uint64_t tcb_at_top(const struct graph *g, const struct seg *s, uint64_t send)
{
	uint64_t hi = send - X86_64_TCB_BYTES, lo = hi - DEAD_STACK_ALIGN_MAX;

	if (s->size < X86_64_TCB_BYTES + DEAD_STACK_ALIGN_MAX + 4096)
		return 0;
	for (uint64_t pd = hi & ~(uint64_t)15; pd >= lo; pd -= 16) {
		const unsigned char *p = s->data + (pd - s->vaddr);

		if (load_word(g, p) == pd && load_word(g, p + 16) == pd)
			return pd;
	}
	return 0;
}

/*
 * glibc keeps the stacks of exited threads for reuse: the thread descriptor at the top,
 * the static TLS below it, the dead frames below that. In an input that lists every
 * thread (img->threads_complete), a segment topped by a descriptor that is no listed
 * thread's thread pointer, and that no listed thread's stack pointer is in, is such a
 * stack: up to its TLS it is no root (memcheck and LeakSanitizer scan no exited
 * thread's frames). The descriptor and the TLS stay roots, as they do for memcheck: a
 * joinable thread's return value waits there for pthread_join. Returns where the
 * roots of s start: s->vaddr when it is no such stack. x86-64 only (find_tls's layout).
 */
static uint64_t dead_stack_end(struct graph *g, const struct seg *s, uint64_t send)
{
	const struct image *img = g->img;
	uint64_t pd, tls = 0;

	if (!img->threads_complete || img->machine != EM_X86_64 || img->wsize != 8 ||
	    !(pd = tcb_at_top(g, s, send)))
		return s->vaddr;
	for (size_t t = 0; t < img->nthreads; t++) {
		const struct image_thread *th = &img->threads[t];

		if ((th->have_tls && th->tls == pd) ||
		    (th->have_sp && th->sp >= s->vaddr && th->sp < send))
			return s->vaddr;
		/* the static TLS is as big in every thread: the largest a live one shows */
		if (g->tls_lo[t] && th->tls - g->tls_lo[t] > tls)
			tls = th->tls - g->tls_lo[t];
	}
	if (pd - tls <= s->vaddr)
		return s->vaddr;
	if (g->find == GRAPH_NONE) {
		g->dead_stacks++;
		g->dead_stack_bytes += pd - tls - s->vaddr;
	}
	return pd - tls;
}

/* Where the scan of segment s starts: past the stack pointer of a thread in it, or past
 * the frames of an exited thread. */
static uint64_t seg_start(struct graph *g, const struct seg *s, uint64_t send)
{
	uint64_t cur = dead_stack_end(g, s, send);

	for (size_t t = 0; t < g->img->nthreads; t++) {
		uint64_t sp = g->img->threads[t].sp;

		if (!g->img->threads[t].have_sp || sp < s->vaddr || sp >= send)
			continue;
		if (g->img->machine == EM_X86_64 && !g->img->threads[t].at_call &&
		    sp >= s->vaddr + X86_64_REDZONE)
			sp -= X86_64_REDZONE;
		if (sp > cur)
			cur = sp;
		g->stack_cut = true;
	}
	return cur;
}

static bool reg_roots(struct graph *g)
{
	for (size_t t = 0; t < g->img->nthreads; t++)
		for (unsigned r = 0; r < g->img->threads[t].nregs; r++) {
			uint64_t w = g->img->threads[t].regs[r];
			size_t j = lookup(g, w);

			if (j == SIZE_MAX)
				continue;
			if (g->find == GRAPH_NONE) {
				root_visit(g, j, 0, w == g->b[j].user);
			} else if (j == g->find) {
				g->ref = (struct graph_root){ true, t, r, 0 };
				return g->found = true;
			}
		}
	return false;
}

/*
 * Mark the rooted blocks (g->find GRAPH_NONE), or find the first root into g->find.
 * Memory the core says is read-only is no root, as memcheck scans only readable and
 * writable segments: code, constants, and the RELRO page whose head repeats the file's
 * bytes before the writable segment (.eh_frame's tail: under qemu-user, whose guest
 * heap sits at 0x4000000000, an FDE's length and CIE offset read as a heap address).
 */
static void walk_roots(struct graph *g)
{
	const struct image *img = g->img;

	g->found = false;
	if (reg_roots(g))
		return;
	for (size_t si = 0; si < img->nsegs; si++) {
		const struct seg *s = &img->segs[si];
		uint64_t send = s->vaddr + s->size < s->vaddr ? UINT64_MAX : s->vaddr + s->size;
		uint64_t cur;
		size_t i;

		if (s->read_only)
			continue;
		cur = seg_start(g, s, send);
		i = last_at_or_below(g, 0, g->n, cur);

		for (i = i == SIZE_MAX ? 0 : i; cur < send; i++) {
			uint64_t bstart, bend;

			if (i >= g->n) {
				scan_root(g, cur, send);
				break;
			}
			bstart = g->b[i].user >= g->b[i].below ? g->b[i].user - g->b[i].below : 0;
			bend = extent_end(g, i);
			if (bend <= cur)
				continue;
			if (bstart > cur && !scan_root(g, cur, bstart < send ? bstart : send))
				return;
			cur = bend;
		}
		if (g->found)
			return;
	}
}

bool graph_find_root(struct graph *g, size_t j, struct graph_root *out)
{
	g->find = (uint32_t)j;
	walk_roots(g);
	g->find = GRAPH_NONE;
	*out = g->ref;
	return g->found;
}

/* ------------------------------------------------------------------------------ */
/* Edges between blocks. */

static void add_edge(struct graph *g, uint32_t e)
{
	if (g->nedges == g->edge_cap)
		g->edge = xrealloc(g->edge, (g->edge_cap = g->edge_cap ? 2 * g->edge_cap : 4096) *
						    sizeof(*g->edge));
	g->edge[g->nedges++] = e;
}

/* g->find is the node being scanned: no self edges, and a run of pointers into one
 * block (an array of them) is one edge, a start one if any is */
static bool edge_visit(struct graph *g, size_t j, uint64_t addr, bool start)
{
	uint32_t node = (uint32_t)(j + 1);

	(void)addr;
	if (node == g->find)
		return true;
	if (g->nedges > g->eoff[g->find] && GRAPH_NODE(g->edge[g->nedges - 1]) == node) {
		if (start)
			g->edge[g->nedges - 1] = node;
		return true;
	}
	add_edge(g, start ? node : node | GRAPH_INTERIOR);
	return true;
}

/* A bookkeeping word's target: kept apart (root_held), no edge. */
static bool weak_visit(struct graph *g, size_t j, uint64_t addr, bool start)
{
	(void)addr;
	(void)start;
	if (g->nweak == g->weak_cap)
		g->weak = xrealloc(g->weak, (g->weak_cap = g->weak_cap ? 2 * g->weak_cap : 1024) *
						    sizeof(*g->weak));
	g->weak[g->nweak].from = g->find;
	g->weak[g->nweak++].to = (uint32_t)(j + 1);
	return true;
}

/* Block i's words up to e, but a runtime's bookkeeping; true if it had some. */
static bool scan_contents(struct graph *g, const struct graph_runtime *rt, size_t i, uint64_t e)
{
	uint64_t lo, hi;

	if (rt && rt->bookkeeping(rt->ctx, g->b[i].user, g->b[i].size, &lo, &hi) &&
	    lo >= g->b[i].user && lo <= hi && hi <= e) {
		g->skipped_bytes += hi - lo;
		scan_span(g, g->b[i].user, lo, edge_visit);
		scan_span(g, lo, hi, weak_visit);
		scan_span(g, hi, e, edge_visit);
		return true;
	}
	scan_span(g, g->b[i].user, e, edge_visit);
	return false;
}

/* Mark what the queue's nodes reach, from q[*head] on; nodes are queued once. */
static void reach(const struct graph *g, uint8_t *seen, uint32_t *q, size_t *head, size_t *nq)
{
	while (*head < *nq) {
		uint32_t v = q[(*head)++];

		for (uint32_t e = g->eoff[v]; e < g->eoff[v + 1]; e++) {
			uint32_t w = GRAPH_NODE(g->edge[e]);

			if (!seen[w]) {
				seen[w] = 1;
				q[(*nq)++] = w;
			}
		}
	}
}

/*
 * The blocks no root reaches but through a runtime's bookkeeping (Python's garbage
 * awaiting the collector, whose list holds it) become roots: the runtime holds them,
 * so --leaks calls them reachable, as before the links were left out. Every
 * bookkeeping link is taken only once what the roots reach by contents is marked,
 * so no block a root owns through contents is made a root. Their edges go after the
 * root's others.
 */
static void root_held(struct graph *g)
{
	size_t nn = g->n + 1, head = 0, nq = 0, nextra = 0, w = 0, scanned = 0;
	uint8_t *seen = xcalloc(nn, 1);
	uint32_t *q = xmalloc(nn * sizeof(*q)), *extra = xmalloc(nn * sizeof(*extra));
	uint32_t *woff = xcalloc(nn + 1, sizeof(*woff));

	for (size_t k = 0; k < g->nweak; k++)	/* by block, in scan order already */
		woff[g->weak[k].from + 1]++;
	for (size_t v = 0; v < nn; v++)
		woff[v + 1] += woff[v];
	seen[0] = 1;
	q[nq++] = 0;
	reach(g, seen, q, &head, &nq);
	for (; scanned < nq; scanned++)
		for (w = woff[q[scanned]]; w < woff[q[scanned] + 1]; w++) {
			uint32_t t = g->weak[w].to;

			if (seen[t])
				continue;
			g->rooted[t - 1] = GRAPH_ROOT_START;
			extra[nextra++] = t;
			seen[t] = 1;
			q[nq++] = t;
			reach(g, seen, q, &head, &nq);
		}
	if (nextra) {
		if (g->nedges + nextra > UINT32_MAX - 1)
			die(EXIT_NO_REPORT, "too many pointers between blocks (%zu)", g->nedges + nextra);
		g->edge = xrealloc(g->edge, (g->nedges + nextra) * sizeof(*g->edge));
		memmove(g->edge + g->eoff[1] + nextra, g->edge + g->eoff[1],
			(g->nedges - g->eoff[1]) * sizeof(*g->edge));
		memcpy(g->edge + g->eoff[1], extra, nextra * sizeof(*extra));
		for (size_t v = 1; v <= nn; v++)
			g->eoff[v] += (uint32_t)nextra;
		g->nedges += nextra;
		g->edge_cap = g->nedges;
	}
	free(woff);
	free(extra);
	free(q);
	free(seen);
	free(g->weak);
	g->weak = NULL;
	g->nweak = g->weak_cap = 0;
}

/* The virtual root's edges: every rooted block; then each block's, in address order. */
static void build_edges(struct graph *g, const struct graph_runtime *rt)
{
	g->eoff = xcalloc(g->n + 2, sizeof(*g->eoff));
	for (size_t i = 0; i < g->n; i++)
		if (g->rooted[i])
			add_edge(g, (uint32_t)(i + 1) |
					    (g->rooted[i] == GRAPH_ROOT_START ? 0 : GRAPH_INTERIOR));
	for (size_t i = 0; i < g->n; i++) {
		uint64_t e = graph_content_end(g, i);

		g->eoff[i + 1] = (uint32_t)g->nedges;
		g->find = (uint32_t)(i + 1);
		g->scanned_bytes += e - g->b[i].user;
		scan_contents(g, rt, i, e);
		if (g->nedges > UINT32_MAX - 1)
			die(EXIT_NO_REPORT, "too many pointers between blocks (%zu)", g->nedges);
	}
	g->find = GRAPH_NONE;
	g->eoff[g->n + 1] = (uint32_t)g->nedges;
	g->edge = xrealloc(g->edge, (g->nedges ? g->nedges : 1) * sizeof(*g->edge));
	g->edge_cap = g->nedges;
	if (g->nweak)
		root_held(g);
}

static bool first_visit(struct graph *g, size_t j, uint64_t addr, bool start)
{
	(void)start;
	if (j != g->find)
		return true;
	g->found = true;
	g->ref.addr = addr;
	return false;
}

uint64_t graph_pointer_offset(struct graph *g, size_t i, size_t j)
{
	g->find = (uint32_t)j;
	g->found = false;
	scan_span(g, g->b[i].user, graph_content_end(g, i), first_visit);
	g->find = GRAPH_NONE;
	return g->found ? g->ref.addr - g->b[i].user : 0;
}

/* ------------------------------------------------------------------------------ */

/*
 * glibc x86-64: the static TLS blocks lie below the thread pointer (the reader's
 * image_thread.tls, fs_base); its dtv names them. Other machines lay TLS out otherwise:
 * none is named there.
 */
static void find_tls(struct graph *g)
{
	size_t nth = g->img->nthreads;

	g->tls_lo = xcalloc(nth ? nth : 1, sizeof(*g->tls_lo));
	g->tls_hi = xcalloc(nth ? nth : 1, sizeof(*g->tls_hi));
	if (g->img->machine != EM_X86_64 || g->img->wsize != 8)
		return;
	for (size_t t = 0; t < nth; t++) {
		uint64_t tp = g->img->threads[t].tls, dtv, slots, lo;

		if (!g->img->threads[t].have_tls || !tp)
			continue;
		lo = tp;
		if (image_read(g->img, tp + 8, &dtv, 8) && image_read(g->img, dtv - 16, &slots, 8))
			for (uint64_t i = 1; i <= slots && i <= 64; i++) {
				uint64_t p;

				if (image_read(g->img, dtv + 16 * i, &p, 8) && p < tp &&
				    p >= tp - (1 << 20) && p < lo)
					lo = p;
			}
		g->tls_lo[t] = lo;
		g->tls_hi[t] = tp + X86_64_TCB_BYTES;
	}
}

/* Sort, keep one block per address, and clamp each pointer range below the next. */
_Static_assert(offsetof(struct scan_block, user) == 0 && sizeof(struct scan_block) % 8 == 0,
	       "sort_runs keys a block by its first word");

static void sort_blocks(struct graph *g, struct scan_result *scan)
{
	size_t m = 0;

	g->b = scan->list.v;
	g->n = scan->list.n;
	if (g->n > GRAPH_MAX_BLOCKS)
		die(EXIT_NO_REPORT, "too many blocks for the heap graph (%zu)", g->n);
	if (!sort_runs(g->b, g->n, sizeof(*g->b)))	/* one run per scan thread */
		qsort(g->b, g->n, sizeof(*g->b), block_cmp);
	for (size_t i = 0; i < g->n; i++) {
		if (m && g->b[m - 1].user == g->b[i].user)
			continue;
		g->b[m] = g->b[i];
		g->b[m++].state = 0;
	}
	g->n = scan->list.n = m;
	g->end = xmalloc((g->n ? g->n : 1) * sizeof(*g->end));
	for (size_t i = 0; i < g->n; i++) {
		uint64_t e = g->b[i].user + (g->b[i].size ? g->b[i].size : 1);

		if (e < g->b[i].user)
			e = UINT64_MAX;
		if (i + 1 < g->n && e > g->b[i + 1].user)
			e = g->b[i + 1].user;
		g->end[i] = e;
	}
}

/*
 * Whether the scan's pages can be trusted to find every pointer into a block: each
 * region blocks lie in is one the scan looked for addresses in.
 */
static bool pages_cover(const struct graph *g, const struct scan_pages *pg)
{
	size_t k = 0;

	if (!pg->bits || g->huge)
		return false;
	for (size_t r = 0; r < g->nreg; r++) {
		while (k < pg->nregions && pg->regions[k] < g->rkey[r])
			k++;
		if (k == pg->nregions || pg->regions[k] != g->rkey[r])
			return false;
	}
	return true;
}

struct graph *graph_build(const struct image *img, struct scan_result *scan,
			  const struct alloc *alloc, const struct graph_runtime *rt)
{
	struct graph *g = xcalloc(1, sizeof(*g));

	g->img = img;
	g->alloc = alloc && alloc->known ? alloc : NULL;
	g->find = GRAPH_NONE;
	sort_blocks(g, scan);
	build_index(g);
	if (pages_cover(g, &scan->pages))
		g->pages = &scan->pages;
	find_tls(g);
	g->rooted = xcalloc(g->n ? g->n : 1, 1);
	walk_roots(g);
	build_edges(g, rt);
	return g;
}

void graph_counts(const struct graph *g, uint64_t *blocks, uint64_t *edges, uint64_t *reached)
{
	*blocks = g->n;
	*edges = g->nedges;
	*reached = g->reached;
}

void graph_free(struct graph *g)
{
	if (!g)
		return;
	free(g->end);
	image_window_free(&g->win);
	free(g->rkey);
	free(g->cell);
	free(g->tls_lo);
	free(g->tls_hi);
	free(g->eoff);
	free(g->edge);
	free(g->rooted);
	free(g->idom);
	free(g->pre);
	free(g->order);
	free(g->ret);
	free(g->sid);
	for (size_t i = 0; i < g->nids; i++)
		free(g->ids[i].pcs);
	free(g->ids);
	free(g->slot);
	free(g->parent);
	free(g);
}
