/*
 * The heap graph's dominator tree (Lengauer and Tarjan, "A Fast Algorithm for Finding
 * Dominators in a Flowgraph", 1979: the simple version, O(m log n) on every shape),
 * each block's allocation stack, and retained bytes per stack for
 * --metric=retained_space. The graph itself is graph.c's.
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

/*
 * Depth first from node v, numbering nodes in preorder from *np: g->pre by node, g->order
 * by number, and up[] each number's parent's number in the DFS tree. stack and cursor
 * are scratch (one word a node each), the walk's depth bounded by them, not the C stack.
 */
static void dfs(struct graph *g, uint32_t v, uint32_t from, uint32_t *up, uint32_t *stack,
		uint32_t *cursor, uint32_t *np)
{
	size_t sp = 0;

	g->pre[v] = *np;
	g->order[*np] = v;
	up[(*np)++] = from;
	cursor[v] = g->eoff[v];
	stack[sp++] = v;
	while (sp) {
		uint32_t u = stack[sp - 1], w;

		if (cursor[u] == g->eoff[u + 1]) {
			sp--;
			continue;
		}
		w = GRAPH_NODE(g->edge[cursor[u]++]);
		if (g->pre[w] != NONE)
			continue;
		g->pre[w] = *np;
		g->order[*np] = w;
		up[(*np)++] = g->pre[u];
		cursor[w] = g->eoff[w];
		stack[sp++] = w;
	}
}

/*
 * Preorder from the root; then the unreached blocks, the lowest-addressed of each group
 * a leader hanging below the root (leader[] by number). The numbering is a depth-first
 * walk of the graph plus an edge from the root to each leader. up[] gets each number's
 * parent's number.
 */
static void number_nodes(struct graph *g, uint32_t *up, uint8_t *leader)
{
	size_t nn = g->n + 1;
	uint32_t *stack = xmalloc(nn * sizeof(*stack)), *cursor = xmalloc(nn * sizeof(*cursor));
	uint32_t np = 1;

	g->pre = xmalloc(nn * sizeof(*g->pre));
	g->order = xmalloc(nn * sizeof(*g->order));
	for (size_t v = 0; v < nn; v++)
		g->pre[v] = NONE;
	g->pre[0] = 0;
	g->order[0] = 0;
	up[0] = 0;
	for (uint32_t e = g->eoff[0]; e < g->eoff[1]; e++)
		if (g->pre[GRAPH_NODE(g->edge[e])] == NONE)
			dfs(g, GRAPH_NODE(g->edge[e]), 0, up, stack, cursor, &np);
	g->reached = np - 1;
	for (size_t v = 1; v < nn; v++)
		if (g->pre[v] == NONE) {
			leader[np] = 1;
			dfs(g, (uint32_t)v, 0, up, stack, cursor, &np);
		}
	free(stack);
	free(cursor);
}

/* Predecessor lists (CSR) by preorder number, of numbers; a leader's has the root. */
static void build_preds(const struct graph *g, const uint8_t *leader, uint32_t **poff,
			uint32_t **pred)
{
	size_t nn = g->n + 1, nl = 0;
	uint32_t *off = xcalloc(nn + 1, sizeof(*off)), *p, *fill;

	for (size_t e = 0; e < g->nedges; e++)
		off[g->pre[GRAPH_NODE(g->edge[e])] + 1]++;
	for (size_t k = 0; k < nn; k++) {
		off[k + 1] += off[k] + leader[k];
		nl += leader[k];
	}
	p = xmalloc((g->nedges + nl ? g->nedges + nl : 1) * sizeof(*p));
	fill = xmalloc(nn * sizeof(*fill));
	memcpy(fill, off, nn * sizeof(*fill));
	for (size_t k = 0; k < nn; k++)
		if (leader[k])
			p[fill[k]++] = 0;
	for (size_t v = 0; v < nn; v++)
		for (uint32_t e = g->eoff[v]; e < g->eoff[v + 1]; e++)
			p[fill[g->pre[GRAPH_NODE(g->edge[e])]]++] = g->pre[v];
	free(fill);
	*poff = off;
	*pred = p;
}

/*
 * Lengauer and Tarjan's link and eval with path compression, on preorder numbers: the
 * forest holds the numbers >= lim (linked); anc[x] is x's ancestor in it (its DFS parent
 * until compressed), lab[x] the number of least semi on the path compressed into x.
 * The path is compressed without recursion: its links are reversed on the way up and
 * set right on the way down, so a chain of ten million blocks needs no deep stack.
 */
struct lt {
	uint32_t *anc, *lab, *semi;
	uint32_t lim;
};

static uint32_t eval(struct lt *t, uint32_t v)
{
	uint32_t x = v, back = NONE, above;

	if (v < t->lim)
		return v;
	while (t->anc[x] >= t->lim) {	/* x's ancestor is linked: compress through it */
		uint32_t a = t->anc[x];

		t->anc[x] = back;
		back = x;
		x = a;
	}
	for (above = x; back != NONE; above = x) {
		x = back;
		back = t->anc[x];
		if (t->semi[t->lab[above]] < t->semi[t->lab[x]])
			t->lab[x] = t->lab[above];
		t->anc[x] = t->anc[above];
	}
	return t->lab[v];
}

/*
 * idom[] by number. Semidominators in reverse preorder, each number put in the bucket
 * of its semidominator and the bucket of its parent emptied once it is linked, then the
 * idoms fixed in preorder: O(m log n) on any shape. A number below lim is never used as
 * a bucket again once lim passes it, and one at or above it always has its idom set:
 * both live in idom[] (bucket heads below lim, idoms from it up).
 */
static void lengauer_tarjan(uint32_t nn, const uint32_t *poff, const uint32_t *pred,
			    uint32_t *up, uint32_t *idom)
{
	uint32_t *next = xmalloc(nn * sizeof(*next));
	struct lt t = { up, xmalloc(nn * sizeof(*t.lab)), xmalloc(nn * sizeof(*t.semi)), nn };

	for (uint32_t k = 0; k < nn; k++) {
		t.lab[k] = t.semi[k] = k;
		idom[k] = NONE;	/* empty buckets */
	}
	for (uint32_t w = nn; w-- > 1;) {
		uint32_t p = up[w];

		for (uint32_t e = poff[w]; e < poff[w + 1]; e++) {
			uint32_t u = eval(&t, pred[e]);

			if (t.semi[u] < t.semi[w])
				t.semi[w] = t.semi[u];
		}
		next[w] = idom[t.semi[w]];	/* into its semidominator's bucket */
		idom[t.semi[w]] = w;
		t.lim = w;			/* link(p, w): up[w] is p until compressed */
		for (uint32_t v = idom[p], nv; v != NONE; v = nv) {
			uint32_t u = eval(&t, v);

			nv = next[v];
			idom[v] = t.semi[u] < t.semi[v] ? u : p;
		}
		idom[p] = NONE;
	}
	idom[0] = 0;
	for (uint32_t w = 1; w < nn; w++)
		if (idom[w] != t.semi[w])
			idom[w] = idom[idom[w]];
	free(next);
	free(t.lab);
	free(t.semi);
}

void graph_dominators(struct graph *g)
{
	size_t nn = g->n + 1;
	uint32_t *poff, *pred, *up, *idom;
	uint8_t *leader;

	if (g->idom && g->order)
		return;	/* made already (--why by type asks after --why by stack) */
	up = xmalloc(nn * sizeof(*up));
	free(g->idom);	/* graph_add_retained dropped the numbering: made again */
	free(g->ret);
	free(g->pre);
	leader = xcalloc(nn, 1);
	number_nodes(g, up, leader);
	build_preds(g, leader, &poff, &pred);
	free(leader);
	idom = xmalloc(nn * sizeof(*idom));
	lengauer_tarjan((uint32_t)nn, poff, pred, up, idom);
	free(poff);
	free(pred);
	g->idom = up;	/* by node now: the parents are done with */
	for (size_t v = 0; v < nn; v++)
		g->idom[v] = g->order[idom[g->pre[v]]];
	free(idom);
	g->ret = xcalloc(nn, sizeof(*g->ret));
	for (size_t i = 0; i < g->n; i++)
		g->ret[i + 1] = g->b[i].size;
	for (size_t k = nn; k-- > 1;) {	/* children before their dominators */
		uint32_t v = g->order[k];

		g->ret[g->idom[v]] += g->ret[v];
	}
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
	if (b->version == SCAN_UNTAGGED) {
		k->flags = STACK_UNTAGGED;
	} else if (b->version == 2) {
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
 * Walk the dominator tree depth first; a block adds its subtree to its group only when
 * no block of the same group dominates it, so nested blocks of one group count once.
 * The tree is kept as first child and next sibling (two words a node), and the walk's
 * stack grows with the tree's depth, not its size.
 */
static void sum_grouped(const struct graph *g, const uint32_t *group, size_t ngroups,
			uint64_t *out)
{
	size_t nn = g->n + 1, sp = 0, cap = 1024;
	uint32_t *first = xmalloc(nn * sizeof(*first)), *next = xmalloc(nn * sizeof(*next));
	uint32_t *stack = xmalloc(cap * sizeof(*stack));
	uint32_t *active = xcalloc(ngroups ? ngroups : 1, sizeof(*active));

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
			uint32_t s = group[v - 1];

			first[u] = next[v];
			if (s != NONE && !active[s]++)
				out[s] += g->ret[v];
			if (sp == cap)
				stack = xrealloc(stack, (cap *= 2) * sizeof(*stack));
			stack[sp++] = v;
			continue;
		}
		if (u && group[u - 1] != NONE)
			active[group[u - 1]]--;
		sp--;
	}
	free(first);
	free(next);
	free(stack);
	free(active);
}

static void sum_retained(struct graph *g)
{
	uint64_t *ret = xcalloc(g->nids ? g->nids : 1, sizeof(*ret));

	sum_grouped(g, g->sid, g->nids, ret);
	for (size_t i = 0; i < g->nids; i++)
		g->ids[i].retained += ret[i];
	free(ret);
}

void graph_retained_by(struct graph *g, const uint32_t *group, size_t ngroups, uint64_t *out)
{
	graph_dominators(g);
	sum_grouped(g, group, ngroups, out);
}

void graph_add_retained(struct graph *g, struct scan_result *scan, const struct graph_keying *k)
{
	graph_dominators(g);
	/* only --why reads the numbering again, and it never asks for this: its room
	 * goes to the stacks and the tree walk */
	free(g->pre);
	free(g->order);
	g->pre = g->order = NULL;
	assign_stacks(g, scan, k, true);
	sum_retained(g);
	for (size_t i = 0; i < g->nids; i++) {
		const struct graph_stack *x = &g->ids[i];
		struct stack_key key = { x->pcs, x->nframes, x->flags, x->tid };
		struct stack_add a = { .counts.retained = x->retained };

		stacks_add_group(&scan->stacks, &key, &a);
	}
}
