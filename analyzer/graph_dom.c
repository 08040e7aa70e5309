/*
 * The heap graph's dominator tree (Cooper, Harvey and Kennedy, "A Simple, Fast
 * Dominance Algorithm"), each block's allocation stack, and retained bytes per stack
 * for --metric=retained_space. The graph itself is graph.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "decode.h"
#include "graph.h"
#include "scan.h"
#include "stacks.h"
#include "util.h"

#define NONE GRAPH_NONE

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
			uint32_t w = GRAPH_NODE(g->edge[cursor[u]++]);

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
	uint32_t *off = xcalloc(nn + 1, sizeof(*off));
	uint32_t *p = xmalloc((g->nedges ? g->nedges : 1) * sizeof(*p));
	uint32_t *fill;

	for (size_t e = 0; e < g->nedges; e++)
		off[GRAPH_NODE(g->edge[e]) + 1]++;
	for (size_t v = 0; v < nn; v++)
		off[v + 1] += off[v];
	fill = xmalloc(nn * sizeof(*fill));
	memcpy(fill, off, nn * sizeof(*fill));
	for (size_t v = 0; v < nn; v++)
		for (uint32_t e = g->eoff[v]; e < g->eoff[v + 1]; e++)
			p[fill[GRAPH_NODE(g->edge[e])]++] = (uint32_t)v;
	free(fill);
	*poff = off;
	*pred = p;
}

/* Postorder from the root; then the unreached blocks, the lowest-addressed of each
 * group a leader hanging below the root. */
static uint32_t number_nodes(struct graph *g, uint8_t *leader)
{
	size_t nn = g->n + 1;
	uint32_t *stack = xmalloc(nn * sizeof(*stack)), *cursor = xmalloc(nn * sizeof(*cursor));
	uint32_t np = 0;

	g->post = xmalloc(nn * sizeof(*g->post));
	g->order = xmalloc(nn * sizeof(*g->order));
	for (size_t v = 0; v < nn; v++)
		g->post[v] = NONE;
	g->post[0] = NONE - 1;
	for (uint32_t e = g->eoff[0]; e < g->eoff[1]; e++)
		if (g->post[GRAPH_NODE(g->edge[e])] == NONE)
			dfs(g, GRAPH_NODE(g->edge[e]), stack, cursor, &np);
	g->reached = np;
	for (size_t v = 1; v < nn; v++)
		if (g->post[v] == NONE) {
			leader[v] = 1;
			dfs(g, (uint32_t)v, stack, cursor, &np);
		}
	g->order[np] = 0;
	g->post[0] = np;
	free(stack);
	free(cursor);
	return np;
}

void graph_dominators(struct graph *g)
{
	size_t nn = g->n + 1;
	uint32_t *poff, *pred, np;
	uint8_t *leader;
	bool changed = true;

	if (g->idom && g->order)
		return;
	free(g->idom);	/* graph_add_retained dropped the numbering: made again */
	free(g->ret);
	free(g->post);
	leader = xcalloc(nn, 1);
	np = number_nodes(g, leader);
	build_preds(g, &poff, &pred);
	g->idom = xmalloc(nn * sizeof(*g->idom));
	for (size_t v = 0; v < nn; v++)	/* the root's own edges are not in eoff for leaders */
		g->idom[v] = v == 0 || leader[v] ? 0 : NONE;
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
	free(poff);
	free(pred);
	free(leader);
}

/* ------------------------------------------------------------------------------ */
/* Stacks: each block's allocation stack, keyed as collect_join keys it. */

static const uint64_t no_pcs[1];

bool graph_counted(const struct graph *g, const struct scan_result *scan,
		   const struct graph_keying *k, size_t i)
{
	const struct scan_block *b = &g->b[i];
	const struct decoded_stack *s;
	const struct decoded_site *site;

	if (b->out)
		return false;
	if (!k || !k->region)
		return true;
	if (b->version != 2 || !b->site)	/* a v1 block names no region */
		return false;
	site = collect_site(&scan->found, b->site, &s);
	return site && site->flags == k->region_id;
}

/* Block i's key, as k says (NULL: as the plain report keys it). */
static void block_key(const struct graph *g, const struct scan_result *scan, size_t i,
		      const struct graph_keying *gk, struct decode_buf *buf,
		      struct stack_key *k)
{
	const struct scan_block *b = &g->b[i];
	struct decoded d;

	*k = (struct stack_key){ no_pcs, 0, 0, 0 };
	if (b->version == 2) {
		const struct decoded_stack *s = NULL;
		const struct decoded_site *site = b->site ? collect_site(&scan->found, b->site, &s)
							  : NULL;

		if (site && gk && gk->by_thread)
			k->tid = site->tid;
		if (b->site && !s)
			k->flags = STACK_UNKNOWN;
		else if (s)
			k->pcs = s->pcs, k->nframes = s->nframes,
			k->flags = s->flags & HP2_STACK_TRUNCATED ? STACK_TRUNCATED : 0;
	} else {
		if (scan_block_decoded(g->img, b, buf, &d) && d.kind == DEC_BLOCK) {
			k->pcs = d.block.pcs;
			k->nframes = d.block.nframes;
			if (gk && gk->by_thread)
				k->tid = d.block.tid;
		}
	}
	if (gk && gk->flags)
		k->flags |= gk->flags(b);
}

static uint64_t key_hash(const struct stack_key *k)
{
	uint64_t h = 1469598103934665603ULL ^ k->nframes ^ (uint64_t)k->flags << 32 ^ k->tid;

	for (unsigned i = 0; i < k->nframes; i++)
		h = (h ^ k->pcs[i]) * 1099511628211ULL;
	return h;
}

static void grow_slots(struct graph *g)
{
	size_t cap = g->cap ? 2 * g->cap : 1024;

	free(g->slot);
	g->slot = xmalloc(cap * sizeof(*g->slot));
	memset(g->slot, 0xff, cap * sizeof(*g->slot));
	g->cap = cap;
	for (size_t i = 0; i < g->nids; i++) {
		size_t s;

		for (s = g->ids[i].hash & (cap - 1); g->slot[s] != NONE; s = (s + 1) & (cap - 1))
			;
		g->slot[s] = (uint32_t)i;
	}
}

static uint32_t stack_id(struct graph *g, const struct stack_key *k)
{
	uint64_t h = key_hash(k);
	size_t s;

	if ((g->nids + 1) * 2 > g->cap)
		grow_slots(g);
	for (s = h & (g->cap - 1); g->slot[s] != NONE; s = (s + 1) & (g->cap - 1)) {
		const struct graph_stack *x = &g->ids[g->slot[s]];

		if (x->hash == h && x->nframes == k->nframes && x->flags == k->flags &&
		    x->tid == k->tid && !memcmp(x->pcs, k->pcs, k->nframes * sizeof(*k->pcs)))
			return g->slot[s];
	}
	g->ids = xrealloc(g->ids, (g->nids + 1) * sizeof(*g->ids));
	g->ids[g->nids] = (struct graph_stack){ h, xmalloc((k->nframes ? k->nframes : 1) * 8),
						k->nframes, k->flags, k->tid, 0 };
	memcpy(g->ids[g->nids].pcs, k->pcs, k->nframes * sizeof(*k->pcs));
	g->slot[s] = (uint32_t)g->nids;
	return (uint32_t)g->nids++;
}

/* v2 blocks of one site and class share their key: (site, flags) -> id, memoized */
struct memo {
	uint64_t *key;		/* site << 32 | flags, + 1; 0: empty */
	uint32_t *id;
	size_t cap, n;
};

static uint32_t *memo_slot(struct memo *m, uint64_t key)
{
	uint64_t h;
	size_t s;

	if ((m->n + 1) * 2 > m->cap) {
		struct memo old = *m;

		m->cap = m->cap ? 2 * m->cap : 1024;
		m->key = xcalloc(m->cap, sizeof(*m->key));
		m->id = xmalloc(m->cap * sizeof(*m->id));
		m->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.key[i])
				*memo_slot(m, old.key[i] - 1) = old.id[i];
		free(old.key);
		free(old.id);
	}
	/* a site sits in the key's high half and the class flags in its low one: mix
	 * both into the slot's bits (a product shifted by 20 kept only the flags') */
	h = key ^ key >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	for (s = h & (m->cap - 1); m->key[s];
	     s = (s + 1) & (m->cap - 1))
		if (m->key[s] == key + 1)
			return &m->id[s];
	m->key[s] = key + 1;
	m->id[s] = NONE;
	m->n++;
	return &m->id[s];
}

/* Each block's id as gk keys it (NULL: as the plain report); with counted_only, NONE
 * for the blocks gk does not count. */
static void assign_stacks(struct graph *g, const struct scan_result *scan,
			  const struct graph_keying *gk, bool counted_only)
{
	struct decode_buf *buf;
	struct memo m = { 0 };

	if (g->sid)
		return;
	buf = xmalloc(sizeof(*buf));
	g->sid = xmalloc((g->n ? g->n : 1) * sizeof(*g->sid));
	for (size_t i = 0; i < g->n; i++) {
		const struct scan_block *b = &g->b[i];
		struct stack_key k;
		uint32_t *slot = NULL;

		if (counted_only && !graph_counted(g, scan, gk, i)) {
			g->sid[i] = NONE;
			continue;
		}
		if (b->version == 2) {
			slot = memo_slot(&m, (uint64_t)b->site << 32 |
						     (gk && gk->flags ? gk->flags(b) : 0));
			if (*slot != NONE) {
				g->sid[i] = *slot;
				continue;
			}
		}
		block_key(g, scan, i, gk, buf, &k);
		g->sid[i] = stack_id(g, &k);
		if (slot)
			*slot = g->sid[i];
	}
	free(m.key);
	free(m.id);
	free(buf);
}

void graph_stacks(struct graph *g, const struct scan_result *scan)
{
	assign_stacks(g, scan, NULL, false);
}

/*
 * Walk the dominator tree depth first; a block adds its subtree to its stack only when
 * no block of the same stack dominates it, so nested blocks of one stack count once.
 * The tree is kept as first child and next sibling (two words a node), and the walk's
 * stack grows with the tree's depth, not its size.
 */
static void sum_retained(struct graph *g)
{
	size_t nn = g->n + 1, sp = 0, cap = 1024;
	uint32_t *first = xmalloc(nn * sizeof(*first)), *next = xmalloc(nn * sizeof(*next));
	uint32_t *stack = xmalloc(cap * sizeof(*stack));
	uint32_t *active = xcalloc(g->nids ? g->nids : 1, sizeof(*active));

	memset(first, 0xff, nn * sizeof(*first));
	for (size_t v = nn; v-- > 1;) {	/* children in address order, as before */
		next[v] = first[g->idom[v]];
		first[g->idom[v]] = (uint32_t)v;
	}
	/* stack: the nodes on the path from the root; first[u] becomes u's next child */
	stack[sp++] = 0;
	while (sp) {
		uint32_t u = stack[sp - 1];

		if (first[u] != NONE) {
			uint32_t v = first[u];
			uint32_t s = g->sid[v - 1];

			first[u] = next[v];
			if (s != NONE && !active[s]++)
				g->ids[s].retained += g->ret[v];
			if (sp == cap)
				stack = xrealloc(stack, (cap *= 2) * sizeof(*stack));
			stack[sp++] = v;
			continue;
		}
		if (u && g->sid[u - 1] != NONE)
			active[g->sid[u - 1]]--;
		sp--;
	}
	free(first);
	free(next);
	free(stack);
	free(active);
}

void graph_add_retained(struct graph *g, struct scan_result *scan, const struct graph_keying *k)
{
	graph_dominators(g);
	/* only --why reads the numbering again, and it never asks for this: its room
	 * goes to the stacks and the tree walk */
	free(g->post);
	free(g->order);
	g->post = g->order = NULL;
	assign_stacks(g, scan, k, true);
	sum_retained(g);
	for (size_t i = 0; i < g->nids; i++) {
		const struct graph_stack *x = &g->ids[i];
		struct stack_key key = { x->pcs, x->nframes, x->flags, x->tid };
		struct stack_add a = { .counts.retained = x->retained };

		stacks_add_group(&scan->stacks, &key, &a);
	}
}
