/*
 * The heap graph (see graph.h): block index, pointer scan and roots as leaks.c has them
 * (any pointer into a block is an edge here, start or interior), then the dominator
 * tree, retained bytes per block and per stack, and shortest retaining paths (--why).
 * Node 0 is the virtual root; block i (sorted by address) is node i + 1.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "core_notes.h"
#include "decode.h"
#include "graph.h"
#include "image.h"
#include "rd.h"
#include "report.h"
#include "scan.h"
#include "stacks.h"
#include "sym.h"
#include "util.h"

#define REGION_SHIFT 30
#define MAX_REGIONS_PER_BLOCK 2
#define X86_64_REDZONE 128
#define X86_64_FS_BASE 21	/* user_regs_struct's fs_base: the thread pointer */
#define X86_64_TCB_BYTES 2304	/* glibc's struct pthread above the thread pointer */
#define NONE UINT32_MAX
#define WHY_FRAMES 3		/* innermost frames shown per hop */

struct stack_id {		/* one distinct allocation stack */
	uint64_t hash;
	uint64_t *pcs;		/* owned */
	unsigned nframes, flags;
	uint64_t retained;
};

/* A root that points to a block: a register, or a word of memory at addr. */
struct root_ref {
	bool reg;
	size_t thread;
	unsigned regno;
	uint64_t addr;
};

struct graph {
	const struct image *img;
	const struct alloc *alloc;
	struct scan_block *b;		/* sorted by user */
	uint64_t *end;			/* pointer range end, clamped below the next block */
	size_t n;
	uint64_t lo, hi;
	uint64_t *rkey;
	size_t nreg;
	unsigned gshift;
	size_t stride;
	uint32_t *cell;
	bool huge;
	bool be;
	unsigned wsize;
	struct core_threads th;
	uint64_t *tls_lo, *tls_hi;	/* per thread; 0, 0 when unknown */
	/* edges: successors of node v are edge[eoff[v] .. eoff[v + 1]) */
	uint32_t *eoff, *edge;
	size_t nedges, edge_cap;
	uint8_t *rooted;		/* block i: some root points into it */
	uint32_t *idom;			/* by node; NONE: not reached (never after build) */
	uint32_t *post;			/* node -> postorder number; root's is n */
	uint32_t *order;		/* postorder -> node */
	uint64_t *ret;			/* by node: bytes its dominator subtree holds */
	uint64_t reached;		/* blocks reached from the roots */
	uint32_t *sid;			/* block -> stack id */
	struct stack_id *ids;
	size_t nids;
	uint32_t *slot;			/* open-addressed stack ids by hash, cap slots */
	size_t cap;
	uint32_t *parent;		/* BFS from the roots, by node, lazily */
	/* root walk state */
	uint32_t find;			/* block sought (NONE: mark every rooted block) */
	bool found;
	struct root_ref ref;
};

/* ------------------------------------------------------------------------------ */
/* The block index: leaks.c's two-level one. */

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
	size_t lo = 0, hi = g->nreg;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->rkey[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->nreg && g->rkey[lo] == r ? lo : SIZE_MAX;
}

/* The block w points into, or SIZE_MAX. */
static inline size_t lookup(const struct graph *g, uint64_t w)
{
	size_t r, i, c;
	const uint32_t *cell;

	if (w < g->lo || w >= g->hi)
		return SIZE_MAX;
	r = region_find(g, w >> REGION_SHIFT);
	if (r == SIZE_MAX) {
		if (!g->huge)
			return SIZE_MAX;
		i = last_at_or_below(g, 0, g->n, w);
	} else {
		c = (size_t)((w & ((1ULL << REGION_SHIFT) - 1)) >> g->gshift);
		cell = g->cell + r * g->stride + c;
		i = last_at_or_below(g, cell[0], cell[1], w);
		if (i == SIZE_MAX || i < cell[0])
			i = cell[0] ? cell[0] - 1 : SIZE_MAX;
	}
	return i != SIZE_MAX && w < g->end[i] ? i : SIZE_MAX;
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
		uint64_t r0 = g->b[i].user >> REGION_SHIFT, r1 = (g->end[i] - 1) >> REGION_SHIFT;

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
	budget = g->n * 32 > ((size_t)4 << 20) ? g->n * 32 : (size_t)4 << 20;
	for (g->gshift = 9; g->gshift < REGION_SHIFT; g->gshift++)
		if (g->nreg * ((1ULL << (REGION_SHIFT - g->gshift)) + 1) * sizeof(uint32_t) <= budget)
			break;
	g->stride = (size_t)(1ULL << (REGION_SHIFT - g->gshift)) + 1;
	g->cell = xmalloc((g->nreg ? g->nreg : 1) * g->stride * sizeof(*g->cell));
	for (size_t r = 0, i = 0; r < g->nreg; r++) {
		uint64_t base = g->rkey[r] << REGION_SHIFT;

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
	if (g->wsize == 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		return g->be != host_big_endian() ? __builtin_bswap64(v) : v;
	} else {
		uint32_t v;

		memcpy(&v, p, 4);
		return g->be != host_big_endian() ? __builtin_bswap32(v) : v;
	}
}

/* The bytes of block i the scan reads: its user bytes, clamped below the next block. */
static uint64_t content_end(const struct graph *g, size_t i)
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

static uint64_t extent_end(const struct graph *g, size_t i)
{
	uint64_t c = content_end(g, i);

	return g->end[i] > c ? g->end[i] : c;
}

/*
 * Call visit(g, j, addr) for every aligned word of [a, b) the image holds that points
 * into block j; stops early when visit returns false.
 */
typedef bool (*visit_fn)(struct graph *g, size_t j, uint64_t addr);

static bool scan_span(struct graph *g, uint64_t a, uint64_t b, visit_fn visit)
{
	const struct image *img = g->img;
	size_t lo = 0, hi = img->nsegs;
	uint64_t mask = g->wsize - 1;

	if (a > UINT64_MAX - mask)
		return true;
	a = (a + mask) & ~mask;
	if (a >= b)
		return true;
	while (lo < hi) {
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
		p = s->data + (from - s->vaddr);
		for (uint64_t x = from; x + g->wsize <= to; x += g->wsize, p += g->wsize) {
			uint64_t w = load_word(g, p);
			size_t j;

			if (w < g->lo || w >= g->hi || (j = lookup(g, w)) == SIZE_MAX)
				continue;
			if (!visit(g, j, x))
				return false;
		}
		a = to;
	}
	return true;
}

/* ------------------------------------------------------------------------------ */
/* Roots: registers, memory outside blocks (stacks from sp), less the allocator's. */

static bool root_visit(struct graph *g, size_t j, uint64_t addr)
{
	if (g->find == NONE) {
		g->rooted[j] = 1;
		return true;
	}
	if (j != g->find)
		return true;
	g->found = true;
	g->ref = (struct root_ref){ .addr = addr };
	return false;
}

static bool scan_root(struct graph *g, uint64_t a, uint64_t b)
{
	const struct alloc *al = g->alloc;
	size_t i = al ? alloc_nonroot_from(al, a) : 0;

	while (a < b) {
		uint64_t to = b;

		if (al && i < al->nnonroot && al->nonroot[i].start < b) {
			if (al->nonroot[i].start <= a) {
				uint64_t e = al->nonroot[i++].end;

				a = e < b ? e : b;
				continue;
			}
			to = al->nonroot[i].start;
		}
		if (!scan_span(g, a, to, root_visit))
			return false;
		a = to;
	}
	return true;
}

/* Where the scan of segment s starts: past the stack pointer of a thread in it. */
static uint64_t seg_start(const struct graph *g, const struct seg *s, uint64_t send)
{
	uint64_t cur = s->vaddr;

	for (size_t t = 0; t < g->th.n; t++) {
		uint64_t sp = g->th.v[t].sp;

		if (!g->th.v[t].have_sp || sp < s->vaddr || sp >= send)
			continue;
		if (g->img->machine == 62 && sp >= s->vaddr + X86_64_REDZONE)
			sp -= X86_64_REDZONE;
		if (sp > cur)
			cur = sp;
	}
	return cur;
}

/* Mark the rooted blocks (g->find NONE), or find the first root pointing to g->find. */
static void walk_roots(struct graph *g)
{
	const struct image *img = g->img;

	g->found = false;
	for (size_t t = 0; t < g->th.n; t++)
		for (unsigned r = 0; r < g->th.v[t].nregs; r++) {
			size_t j = lookup(g, g->th.v[t].regs[r]);

			if (j == SIZE_MAX)
				continue;
			if (g->find == NONE) {
				g->rooted[j] = 1;
			} else if (j == g->find) {
				g->found = true;
				g->ref = (struct root_ref){ true, t, r, 0 };
				return;
			}
		}
	for (size_t si = 0; si < img->nsegs; si++) {
		const struct seg *s = &img->segs[si];
		uint64_t send = s->vaddr + s->size < s->vaddr ? UINT64_MAX : s->vaddr + s->size;
		uint64_t cur = seg_start(g, s, send);
		size_t i = last_at_or_below(g, 0, g->n, cur);

		for (i = i == SIZE_MAX ? 0 : i; cur < send; i++) {
			uint64_t bstart, bend;

			if (i >= g->n) {
				if (!scan_root(g, cur, send))
					return;
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
	}
}

/* ------------------------------------------------------------------------------ */
/* Edges between blocks. */

static bool edge_visit(struct graph *g, size_t j, uint64_t addr)
{
	size_t from = g->nedges;

	(void)addr;
	/* the node being scanned is the last one whose eoff was set; skip self edges and
	 * runs of the same target (arrays of pointers into one block) */
	if (from > 0 && from > g->eoff[g->n + 1] && g->edge[from - 1] == j + 1)
		return true;
	if (g->nedges == g->edge_cap)
		g->edge = xrealloc(g->edge, (g->edge_cap = g->edge_cap ? 2 * g->edge_cap : 4096) *
						    sizeof(*g->edge));
	g->edge[g->nedges++] = (uint32_t)(j + 1);
	return true;
}

/* The virtual root's edges: every rooted block; then each block's, in address order.
 * eoff[n + 1] doubles as "where the current node's edges began" while scanning. */
static void build_edges(struct graph *g)
{
	g->eoff = xcalloc(g->n + 2, sizeof(*g->eoff));
	for (size_t i = 0; i < g->n; i++)
		if (g->rooted[i]) {
			g->eoff[g->n + 1] = (uint32_t)g->nedges;
			edge_visit(g, i, 0);
		}
	for (size_t i = 0; i < g->n; i++) {
		size_t start = g->nedges, m = start;

		g->eoff[i + 1] = (uint32_t)start;
		g->eoff[g->n + 1] = (uint32_t)start;
		scan_span(g, g->b[i].user, content_end(g, i), edge_visit);
		for (size_t e = start; e < g->nedges; e++)	/* no self edges */
			if (g->edge[e] != i + 1)
				g->edge[m++] = g->edge[e];
		g->nedges = m;
		if (g->nedges > UINT32_MAX - 1)
			die(EXIT_NO_REPORT, "too many pointers between blocks (%zu)", g->nedges);
	}
	g->eoff[g->n + 1] = (uint32_t)g->nedges;
}

/* ------------------------------------------------------------------------------ */
/* Dominators: Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm". */

/* Iterative DFS from node v, numbering nodes in postorder into g->post / g->order. */
static void dfs(struct graph *g, uint32_t v, uint32_t *stack, uint32_t *cursor, uint32_t *np)
{
	size_t sp = 0;

	stack[sp++] = v;
	cursor[v] = g->eoff[v];
	g->post[v] = NONE - 1;	/* on the stack */
	while (sp) {
		uint32_t u = stack[sp - 1];

		if (cursor[u] < g->eoff[u + 1]) {
			uint32_t w = g->edge[cursor[u]++];

			if (g->post[w] == NONE) {
				g->post[w] = NONE - 1;
				cursor[w] = g->eoff[w];
				stack[sp++] = w;
			}
			continue;
		}
		sp--;
		g->order[*np] = u;
		g->post[u] = (*np)++;
	}
}

static uint32_t intersect(const struct graph *g, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (g->post[a] < g->post[b])
			a = g->idom[a];
		while (g->post[b] < g->post[a])
			b = g->idom[b];
	}
	return a;
}

/* Predecessor lists (CSR) of every node. */
static void build_preds(const struct graph *g, uint32_t **poff, uint32_t **pred)
{
	size_t nn = g->n + 1;
	uint32_t *off = xcalloc(nn + 1, sizeof(*off)), *p = xmalloc((g->nedges ? g->nedges : 1) *
								      sizeof(*p));

	for (size_t e = 0; e < g->nedges; e++)
		off[g->edge[e] + 1]++;
	for (size_t v = 0; v < nn; v++)
		off[v + 1] += off[v];
	{
		uint32_t *fill = xmalloc(nn * sizeof(*fill));

		memcpy(fill, off, nn * sizeof(*fill));
		for (size_t v = 0; v < nn; v++)
			for (uint32_t e = g->eoff[v]; e < g->eoff[v + 1]; e++)
				p[fill[g->edge[e]]++] = (uint32_t)v;
		free(fill);
	}
	*poff = off;
	*pred = p;
}

static void dominators(struct graph *g)
{
	size_t nn = g->n + 1;
	uint32_t *stack = xmalloc(nn * sizeof(*stack)), *cursor = xmalloc(nn * sizeof(*cursor));
	uint32_t *poff, *pred, np = 0;
	uint8_t *leader = xcalloc(nn, 1);
	bool changed = true;

	g->post = xmalloc(nn * sizeof(*g->post));
	g->order = xmalloc(nn * sizeof(*g->order));
	g->idom = xmalloc(nn * sizeof(*g->idom));
	for (size_t v = 0; v < nn; v++)
		g->post[v] = g->idom[v] = NONE;
	g->post[0] = NONE - 1;
	for (uint32_t e = g->eoff[0]; e < g->eoff[1]; e++)
		if (g->post[g->edge[e]] == NONE)
			dfs(g, g->edge[e], stack, cursor, &np);
	g->reached = np;
	/* unreached blocks: the lowest-addressed of each group hangs below the root */
	for (size_t v = 1; v < nn; v++)
		if (g->post[v] == NONE) {
			leader[v] = 1;
			dfs(g, (uint32_t)v, stack, cursor, &np);
		}
	g->order[np] = 0;
	g->post[0] = np;
	build_preds(g, &poff, &pred);
	g->idom[0] = 0;
	for (size_t v = 1; v < nn; v++)	/* the root's own edges are not in eoff for leaders */
		if (leader[v])
			g->idom[v] = 0;
	while (changed) {
		changed = false;
		for (size_t k = np; k-- > 0;) {	/* reverse postorder, root left out */
			uint32_t v = g->order[k], d = NONE;

			if (leader[v])
				continue;
			for (uint32_t e = poff[v]; e < poff[v + 1]; e++) {
				uint32_t p = pred[e];

				if (g->idom[p] == NONE)
					continue;
				d = d == NONE ? p : intersect(g, p, d);
			}
			if (d != NONE && g->idom[v] != d) {
				g->idom[v] = d;
				changed = true;
			}
		}
	}
	g->ret = xcalloc(nn, sizeof(*g->ret));
	for (size_t i = 0; i < g->n; i++)
		g->ret[i + 1] = g->b[i].size;
	for (size_t k = 0; k < np; k++) {	/* children before their dominators */
		uint32_t v = g->order[k];

		g->ret[g->idom[v]] += g->ret[v];
	}
	free(stack);
	free(cursor);
	free(poff);
	free(pred);
	free(leader);
}

/* ------------------------------------------------------------------------------ */

/* glibc x86-64: the static TLS blocks lie below the thread pointer; its dtv names them. */
static void find_tls(struct graph *g)
{
	g->tls_lo = xcalloc(g->th.n ? g->th.n : 1, sizeof(*g->tls_lo));
	g->tls_hi = xcalloc(g->th.n ? g->th.n : 1, sizeof(*g->tls_hi));
	if (g->img->machine != 62 || g->wsize != 8)
		return;
	for (size_t t = 0; t < g->th.n; t++) {
		uint64_t tp, dtv, slots, lo;

		if (g->th.v[t].nregs <= X86_64_FS_BASE || !(tp = g->th.v[t].regs[X86_64_FS_BASE]))
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

struct graph *graph_build(const struct image *img, struct scan_result *scan,
			  const struct alloc *alloc)
{
	struct graph *g = xcalloc(1, sizeof(*g));
	size_t m = 0;

	g->img = img;
	g->alloc = alloc && alloc->known ? alloc : NULL;
	g->be = img->big_endian;
	g->wsize = img->wsize;
	g->b = scan->list.v;
	g->n = scan->list.n;
	if (g->n > UINT32_MAX - 2)
		die(EXIT_NO_REPORT, "too many blocks for the heap graph (%zu)", g->n);
	qsort(g->b, g->n, sizeof(*g->b), block_cmp);
	for (size_t i = 0; i < g->n; i++)	/* one block per address */
		if (!m || g->b[m - 1].user != g->b[i].user)
			g->b[m++] = g->b[i];
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
	build_index(g);
	core_threads_read(img, &g->th);
	find_tls(g);
	g->rooted = xcalloc(g->n ? g->n : 1, 1);
	g->find = NONE;
	walk_roots(g);
	build_edges(g);
	dominators(g);
	return g;
}

void graph_counts(const struct graph *g, uint64_t *blocks, uint64_t *edges, uint64_t *reached)
{
	*blocks = g->n;
	*edges = g->nedges;
	*reached = g->reached;
}

/* ------------------------------------------------------------------------------ */
/* Stacks: each block's allocation stack, keyed as collect_join keys it. */

static const uint64_t no_pcs[1];

static void block_key(const struct graph *g, const struct scan_result *scan, size_t i,
		      struct decode_buf *buf, struct stack_key *k)
{
	const struct scan_block *b = &g->b[i];
	struct decoded d;

	*k = (struct stack_key){ no_pcs, 0, 0, 0 };
	if (b->version == 2) {
		const struct decoded_stack *s;

		if (!b->site)
			return;
		s = collect_site_stack(&scan->found, b->site);
		if (!s)
			k->flags = STACK_UNKNOWN;
		else
			*k = (struct stack_key){ s->pcs, s->nframes,
						 s->flags & HP2_STACK_TRUNCATED ? STACK_TRUNCATED : 0,
						 0 };
		return;
	}
	if (scan_block_decoded(g->img, b, buf, &d) && d.kind == DEC_BLOCK)
		*k = (struct stack_key){ d.block.pcs, d.block.nframes, 0, 0 };
}

static uint64_t key_hash(const struct stack_key *k)
{
	uint64_t h = 1469598103934665603ULL ^ k->nframes ^ (uint64_t)k->flags << 32;

	for (unsigned i = 0; i < k->nframes; i++)
		h = (h ^ k->pcs[i]) * 1099511628211ULL;
	return h;
}

static uint32_t stack_id(struct graph *g, const struct stack_key *k)
{
	uint64_t h = key_hash(k);
	size_t s;

	if ((g->nids + 1) * 2 > g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 1024;

		free(g->slot);
		g->slot = xmalloc(cap * sizeof(*g->slot));
		memset(g->slot, 0xff, cap * sizeof(*g->slot));
		g->cap = cap;
		for (size_t i = 0; i < g->nids; i++) {
			for (s = g->ids[i].hash & (cap - 1); g->slot[s] != NONE; s = (s + 1) & (cap - 1))
				;
			g->slot[s] = (uint32_t)i;
		}
	}
	for (s = h & (g->cap - 1); g->slot[s] != NONE; s = (s + 1) & (g->cap - 1)) {
		const struct stack_id *x = &g->ids[g->slot[s]];

		if (x->hash == h && x->nframes == k->nframes && x->flags == k->flags &&
		    !memcmp(x->pcs, k->pcs, k->nframes * sizeof(*k->pcs)))
			return g->slot[s];
	}
	g->ids = xrealloc(g->ids, (g->nids + 1) * sizeof(*g->ids));
	g->ids[g->nids] = (struct stack_id){ h, xmalloc((k->nframes ? k->nframes : 1) * 8),
					     k->nframes, k->flags, 0 };
	memcpy(g->ids[g->nids].pcs, k->pcs, k->nframes * sizeof(*k->pcs));
	g->slot[s] = (uint32_t)g->nids;
	return (uint32_t)g->nids++;
}

static void assign_stacks(struct graph *g, const struct scan_result *scan)
{
	struct decode_buf *buf;

	if (g->sid)
		return;
	buf = xmalloc(sizeof(*buf));
	g->sid = xmalloc((g->n ? g->n : 1) * sizeof(*g->sid));
	for (size_t i = 0; i < g->n; i++) {
		struct stack_key k;

		block_key(g, scan, i, buf, &k);
		g->sid[i] = stack_id(g, &k);
	}
	free(buf);
}

/*
 * Walk the dominator tree depth first; a block adds its subtree to its stack only when
 * no block of the same stack dominates it, so nested blocks of one stack count once.
 */
void graph_add_retained(struct graph *g, struct scan_result *scan)
{
	size_t nn = g->n + 1;
	uint32_t *coff = xcalloc(nn + 1, sizeof(*coff)), *child = xmalloc(nn * sizeof(*child));
	uint32_t *fill = xmalloc(nn * sizeof(*fill)), *stack = xmalloc(nn * sizeof(*stack));
	uint32_t *cur = xmalloc(nn * sizeof(*cur)), *active;
	size_t sp = 0;

	assign_stacks(g, scan);
	active = xcalloc(g->nids ? g->nids : 1, sizeof(*active));
	for (size_t v = 1; v < nn; v++)
		coff[g->idom[v] + 1]++;
	for (size_t v = 0; v < nn; v++)
		coff[v + 1] += coff[v];
	memcpy(fill, coff, nn * sizeof(*fill));
	for (size_t v = 1; v < nn; v++)
		child[fill[g->idom[v]]++] = (uint32_t)v;
	stack[sp++] = 0;
	cur[0] = coff[0];
	while (sp) {
		uint32_t u = stack[sp - 1];

		if (cur[u] < coff[u + 1]) {
			uint32_t v = child[cur[u]++];
			uint32_t s = g->sid[v - 1];

			if (!active[s]++)
				g->ids[s].retained += g->ret[v];
			cur[v] = coff[v];
			stack[sp++] = v;
			continue;
		}
		if (u)
			active[g->sid[u - 1]]--;
		sp--;
	}
	for (size_t i = 0; i < g->nids; i++) {
		const struct stack_id *x = &g->ids[i];
		struct stack_key k = { x->pcs, x->nframes, x->flags, 0 };
		struct stack_add a = { .counts.retained = x->retained };

		stacks_add_group(&scan->stacks, &k, &a);
	}
	free(coff);
	free(child);
	free(fill);
	free(stack);
	free(cur);
	free(active);
}

/* ------------------------------------------------------------------------------ */
/* --why */

static void bfs(struct graph *g)
{
	size_t nn = g->n + 1, head = 0, tail = 0;
	uint32_t *q;

	if (g->parent)
		return;
	g->parent = xmalloc(nn * sizeof(*g->parent));
	q = xmalloc(nn * sizeof(*q));
	for (size_t v = 0; v < nn; v++)
		g->parent[v] = NONE;
	g->parent[0] = 0;
	q[tail++] = 0;
	while (head < tail) {
		uint32_t u = q[head++];

		for (uint32_t e = g->eoff[u]; e < g->eoff[u + 1]; e++) {
			uint32_t v = g->edge[e];

			if (g->parent[v] == NONE) {
				g->parent[v] = u;
				q[tail++] = v;
			}
		}
	}
	free(q);
}

static bool first_visit(struct graph *g, size_t j, uint64_t addr)
{
	if (j != g->find)
		return true;
	g->found = true;
	g->ref.addr = addr;
	return false;
}

/* Offset in block i of its first word pointing into block j. */
static uint64_t pointer_offset(struct graph *g, size_t i, size_t j)
{
	g->find = (uint32_t)j;
	g->found = false;
	scan_span(g, g->b[i].user, content_end(g, i), first_visit);
	g->find = NONE;
	return g->found ? g->ref.addr - g->b[i].user : 0;
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "?";
}

static const char *frame_name(struct sym *sym, uint64_t pc, bool ret, char *buf, size_t size)
{
	const struct sym_pc *p = sym_lookup(sym, pc, ret);

	if (p->nframes && p->frames[0].func)
		return p->frames[0].func;
	if (p->module)
		snprintf(buf, size, "%s+0x%llx", base_name(p->module),
			 (unsigned long long)p->module_offset);
	else
		snprintf(buf, size, "0x%llx", (unsigned long long)pc);
	return buf;
}

/* A block of stack id s (there is one: ids come from blocks). */
static size_t first_block(const struct graph *g, uint32_t s)
{
	size_t i = 0;

	while (i + 1 < g->n && g->sid[i] != s)
		i++;
	return i;
}

static void print_frames(struct graph *g, struct sym *sym, size_t i, FILE *f)
{
	const struct stack_id *s = &g->ids[g->sid[i]];
	char buf[256];

	if (s->flags & STACK_UNKNOWN || !s->nframes) {
		fputs(s->flags & STACK_UNKNOWN ? "[unknown stack]" : "[no stack]", f);
		return;
	}
	for (unsigned k = 0; k < s->nframes && k < WHY_FRAMES; k++)
		fprintf(f, "%s%s", k ? " < " : "", frame_name(sym, s->pcs[k], true, buf, sizeof(buf)));
	if (s->nframes > WHY_FRAMES)
		fputs(" < ...", f);
}

static const char *const x86_64_regs[] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
	"rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base",
	"gs_base", "ds", "es", "fs", "gs"
};

static void print_root(struct graph *g, struct sym *sym, FILE *f)
{
	const struct root_ref *r = &g->ref;
	const struct alloc_chunk *c;
	const struct sym_pc *p;

	if (r->reg) {
		fprintf(f, "thread %lu register ", (unsigned long)g->th.v[r->thread].tid);
		if (g->img->machine == 62 && r->regno < sizeof(x86_64_regs) / sizeof(*x86_64_regs))
			fprintf(f, "%s\n", x86_64_regs[r->regno]);
		else
			fprintf(f, "#%u\n", r->regno);
		return;
	}
	for (size_t t = 0; t < g->th.n; t++)
		if (r->addr >= g->tls_lo[t] && r->addr < g->tls_hi[t]) {
			fprintf(f, "thread %lu TLS (0x%llx)\n", (unsigned long)g->th.v[t].tid,
				(unsigned long long)r->addr);
			return;
		}
	for (size_t t = 0; t < g->th.n; t++) {
		const struct seg *s = image_find(g->img, g->th.v[t].sp);

		if (g->th.v[t].have_sp && s && r->addr >= s->vaddr && r->addr - s->vaddr < s->size) {
			fprintf(f, "thread %lu stack (0x%llx, sp+0x%llx)\n",
				(unsigned long)g->th.v[t].tid, (unsigned long long)r->addr,
				(unsigned long long)(r->addr - g->th.v[t].sp));
			return;
		}
	}
	p = sym_lookup(sym, r->addr, false);
	if (p->module) {
		if (p->nframes && p->frames[0].func)
			fprintf(f, "global %s (%s+0x%llx)\n", p->frames[0].func,
				base_name(p->module), (unsigned long long)p->module_offset);
		else
			fprintf(f, "module data (%s+0x%llx)\n", base_name(p->module),
				(unsigned long long)p->module_offset);
		return;
	}
	if (g->alloc && (c = alloc_find(g->alloc, r->addr)))
		fprintf(f, "untagged block (0x%llx)\n", (unsigned long long)r->addr);
	else
		fprintf(f, "anonymous mapping (0x%llx)\n", (unsigned long long)r->addr);
}

static void print_path(struct graph *g, struct sym *sym, size_t i, FILE *f)
{
	uint32_t *path, np = 0;
	char a[32], b[32];

	fprintf(f, "\n0x%llx: %s bytes, retains %s bytes, allocated at ",
		(unsigned long long)g->b[i].user, report_thousands(g->b[i].size, a),
		report_thousands(g->ret[i + 1], b));
	print_frames(g, sym, i, f);
	fputc('\n', f);
	if (g->parent[i + 1] == NONE) {
		fputs("  no root reaches it (lost)\n", f);
		return;
	}
	path = xmalloc((g->n + 1) * sizeof(*path));
	for (uint32_t v = (uint32_t)(i + 1); v; v = g->parent[v])
		path[np++] = v;
	g->find = path[np - 1] - 1;
	walk_roots(g);
	g->find = NONE;
	fputs("  root: ", f);
	if (g->found)
		print_root(g, sym, f);
	else
		fputs("?\n", f);
	for (uint32_t k = np; k-- > 0;) {
		size_t x = path[k] - 1;

		fprintf(f, "  0x%llx  %s bytes", (unsigned long long)g->b[x].user,
			report_thousands(g->b[x].size, a));
		if (k)
			fprintf(f, "  +%llu ->", (unsigned long long)pointer_offset(g, x, path[k - 1] - 1));
		fputs("  ", f);
		print_frames(g, sym, x, f);
		fputc('\n', f);
	}
	free(path);
}

static bool stack_matches(struct graph *g, struct sym *sym, uint32_t s, const regex_t *re)
{
	const struct stack_id *x = &g->ids[s];

	for (unsigned k = 0; k < x->nframes; k++) {
		const struct sym_pc *p = sym_lookup(sym, x->pcs[k], true);
		char buf[256];

		for (unsigned j = 0; j < p->nframes; j++)
			if (p->frames[j].func && !regexec(re, p->frames[j].func, 0, NULL, 0))
				return true;
		if (!regexec(re, frame_name(sym, x->pcs[k], true, buf, sizeof(buf)), 0, NULL, 0))
			return true;
	}
	return false;
}

struct by_stack {
	uint32_t sid;
	uint64_t bytes, blocks;
};

static int by_stack_cmp(const void *a, const void *b)
{
	const struct by_stack *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return (x->sid > y->sid) - (x->sid < y->sid);
}

/*
 * The dominator tree view: what the picked blocks retain together (each block once),
 * by allocation stack. In reverse postorder a block's dominator comes before it.
 */
static void print_retained(struct graph *g, struct sym *sym, const uint32_t *pick,
			   size_t npick, FILE *f)
{
	uint8_t *under = xcalloc(g->n + 1, 1);
	struct by_stack *t = xcalloc(g->nids ? g->nids : 1, sizeof(*t));
	uint64_t bytes = 0, blocks = 0;
	char a[32], b[32];
	size_t nt = 0;

	for (size_t k = 0; k < npick; k++)
		under[pick[k] + 1] = 1;
	for (size_t i = 0; i < g->nids; i++)
		t[i].sid = (uint32_t)i;
	for (size_t k = g->n; k-- > 0;) {	/* order[n] is the root */
		uint32_t v = g->order[k];

		under[v] |= under[g->idom[v]];
		if (!under[v])
			continue;
		t[g->sid[v - 1]].bytes += g->b[v - 1].size;
		t[g->sid[v - 1]].blocks++;
		bytes += g->b[v - 1].size;
		blocks++;
	}
	qsort(t, g->nids, sizeof(*t), by_stack_cmp);
	fprintf(f, "\nretained by the %zu blocks: %s bytes in %s blocks, by stack:\n", npick,
		report_thousands(bytes, a), report_thousands(blocks, b));
	for (size_t i = 0; i < g->nids && t[i].bytes; i++, nt++) {
		if (nt == 20) {
			fputs("  ...\n", f);
			break;
		}
		fprintf(f, "  %s bytes in %s blocks  ", report_thousands(t[i].bytes, a),
			report_thousands(t[i].blocks, b));
		print_frames(g, sym, first_block(g, t[i].sid), f);
		fputc('\n', f);
	}
	free(under);
	free(t);
}

static const struct graph *sort_g;

static int size_desc(const void *a, const void *b)
{
	const struct scan_block *x = &sort_g->b[*(const uint32_t *)a];
	const struct scan_block *y = &sort_g->b[*(const uint32_t *)b];

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return (x->user > y->user) - (x->user < y->user);
}

int graph_why(struct graph *g, const struct scan_result *scan, struct sym *sym,
	      const char *what, size_t top, FILE *f, char *err, size_t errlen)
{
	uint32_t *pick = xmalloc((g->n ? g->n : 1) * sizeof(*pick));
	size_t npick = 0;
	unsigned long long addr;
	regex_t re;
	int rc;

	assign_stacks(g, scan);
	bfs(g);
	if (!strncmp(what, "0x", 2) && parse_u64(what, &addr)) {
		size_t i = lookup(g, addr);

		if (i != SIZE_MAX)
			pick[npick++] = (uint32_t)i;
	} else {
		int8_t *match;

		if ((rc = regcomp(&re, what, REG_EXTENDED | REG_NOSUB))) {
			char msg[200];

			regerror(rc, &re, msg, sizeof(msg));
			snprintf(err, errlen, "bad --why regex '%s': %s", what, msg);
			free(pick);
			return -1;
		}
		match = xmalloc(g->nids ? g->nids : 1);
		memset(match, -1, g->nids ? g->nids : 1);
		for (size_t i = 0; i < g->n; i++) {
			uint32_t s = g->sid[i];

			if (match[s] < 0)
				match[s] = stack_matches(g, sym, s, &re);
			if (match[s])
				pick[npick++] = (uint32_t)i;
		}
		free(match);
		regfree(&re);
	}
	if (!npick) {
		free(pick);
		return 1;
	}
	sort_g = g;
	qsort(pick, npick, sizeof(*pick), size_desc);
	fprintf(f, "why alive: %zu blocks match '%s'%s\n", npick, what,
		top && npick > top ? "; the largest shown (--top)" : "");
	for (size_t k = 0; k < npick && (!top || k < top); k++)
		print_path(g, sym, pick[k], f);
	print_retained(g, sym, pick, npick, f);
	free(pick);
	return 0;
}

void graph_free(struct graph *g)
{
	if (!g)
		return;
	free(g->end);
	free(g->rkey);
	free(g->cell);
	core_threads_free(&g->th);
	free(g->tls_lo);
	free(g->tls_hi);
	free(g->eoff);
	free(g->edge);
	free(g->rooted);
	free(g->idom);
	free(g->post);
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
