/*
 * Heap graphs made by hand and the answers worked out the slow way, for the dominator
 * tree's unit test (test/unit/graph_test.c) and its fuzzer (test/fuzz/fuzz_graph.c):
 * a graph from an edge list, dominators from dominator sets (a node d dominates v
 * when v cannot be reached from the root without d), and the checks of what --why
 * keeps of a path. Header-only: each program has one copy.
 */
#ifndef HP_TEST_GRAPH_CHECK_H
#define HP_TEST_GRAPH_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "scan.h"
#include "util.h"

struct edges {
	uint32_t (*v)[2];
	size_t n, cap;
};

__attribute__((unused)) static void edge_add(struct edges *e, uint32_t from, uint32_t to)
{
	if (e->n == e->cap)
		e->v = xrealloc(e->v, (e->cap = e->cap ? 2 * e->cap : 64) * sizeof(*e->v));
	e->v[e->n][0] = from;
	e->v[e->n++][1] = to;
}

/* A graph of n blocks b (nodes 1..n; node 0 the root) with e's edges, every third one
 * marked interior (the mark is no part of the node). Free with graph_free. */
__attribute__((unused)) static struct graph *graph_make(size_t n, const struct edges *e,
							struct scan_block *b)
{
	struct graph *g = xcalloc(1, sizeof(*g));
	uint32_t *fill;

	g->n = n;
	g->b = b;
	g->eoff = xcalloc(n + 2, sizeof(*g->eoff));
	g->edge = xmalloc((e->n ? e->n : 1) * sizeof(*g->edge));
	g->nedges = e->n;
	for (size_t i = 0; i < e->n; i++)
		g->eoff[e->v[i][0] + 1]++;
	for (size_t v = 0; v <= n; v++)
		g->eoff[v + 1] += g->eoff[v];
	fill = xmalloc((n + 1) * sizeof(*fill));
	memcpy(fill, g->eoff, (n + 1) * sizeof(*fill));
	for (size_t i = 0; i < e->n; i++)
		g->edge[fill[e->v[i][0]]++] = e->v[i][1] | (i % 3 ? 0 : GRAPH_INTERIOR);
	free(fill);
	return g;
}

/* ---- dominators the slow way, for n <= SLOW_MAX ---------------------------------- */

#define SLOW_MAX 63

/* Nodes reached from the set start, never through node skip (0: none). */
static uint64_t slow_reach(const struct edges *e, uint64_t start, unsigned skip)
{
	uint64_t seen = start & ~(skip ? 1ull << skip : 0), before;

	do {
		before = seen;
		for (size_t i = 0; i < e->n; i++)
			if (seen >> e->v[i][0] & 1 && e->v[i][1] != skip)
				seen |= 1ull << e->v[i][1];
	} while (seen != before);
	return seen;
}

/* idom by the dominator sets, the root given an edge to each leader as graph.h says. */
__attribute__((unused)) static void slow_idom(size_t n, struct edges *e, uint32_t *idom)
{
	uint64_t dom[SLOW_MAX + 1], seen = slow_reach(e, 1, 0);
	size_t base = e->n;

	for (unsigned v = 1; v <= n; v++)
		if (!(seen >> v & 1)) {	/* the lowest unreached: a leader */
			edge_add(e, 0, v);
			seen |= slow_reach(e, 1ull << v, 0);
		}
	for (unsigned v = 0; v <= n; v++)
		dom[v] = 1;	/* the root dominates all */
	for (unsigned d = 1; d <= n; d++) {
		uint64_t r = slow_reach(e, 1, d);

		for (unsigned v = 1; v <= n; v++)
			if (v == d || !(r >> v & 1))
				dom[v] |= 1ull << d;
	}
	idom[0] = 0;
	for (unsigned v = 1; v <= n; v++) {
		uint64_t strict = dom[v] & ~(1ull << v);

		/* the strict dominator whose own dominators are all the others */
		for (unsigned d = 0; d <= n; d++)
			if (strict >> d & 1 && (dom[d] | strict) == dom[d])
				idom[v] = d;
	}
	e->n = base;
}

/* g's idom and ret against want's tree; why says the first difference. */
__attribute__((unused)) static bool same_tree(const struct graph *g, const uint32_t *want,
					      char *why, size_t len)
{
	for (size_t v = 1; v <= g->n; v++) {
		uint64_t sub = 0;

		if (g->idom[v] != want[v]) {
			snprintf(why, len, "idom of %zu: %u, the slow way %u", v, g->idom[v],
				 want[v]);
			return false;
		}
		for (size_t u = 1; u <= g->n; u++) {	/* v's subtree in want */
			size_t x = u;

			while (x && x != v)
				x = want[x];
			if (x == v)
				sub += g->b[u - 1].size;
		}
		if (g->ret[v] != sub) {
			snprintf(why, len, "retained by %zu: %llu, the slow way %llu", v,
				 (unsigned long long)g->ret[v], (unsigned long long)sub);
			return false;
		}
	}
	return true;
}

/* ---- --why's paths ------------------------------------------------------------------ */

/* graph_why_steps on path, checked: the steps in the path's order, at most
 * 2 * GRAPH_WHY_ENDS + 1, no two left-out steps side by side, their hops adding up. */
__attribute__((unused)) static bool steps_ok(const struct graph *g, const uint32_t *path,
					     uint32_t np, struct graph_why_path *p, char *why,
					     size_t len)
{
	uint64_t hops = 0;
	uint32_t at = 0;

	graph_why_steps(g, path, np, p);
	if (p->nsteps > 2 * GRAPH_WHY_ENDS + 1 || p->length != np) {
		snprintf(why, len, "%u steps for a path of %u", p->nsteps, np);
		return false;
	}
	for (unsigned k = 0; k < p->nsteps; k++) {
		const struct graph_why_step *s = &p->step[k];

		if (s->block == GRAPH_NONE) {
			if (s->hops < 2 || (k && p->step[k - 1].block == GRAPH_NONE)) {
				snprintf(why, len, "step %u leaves out %llu hops", k,
					 (unsigned long long)s->hops);
				return false;
			}
			hops += s->hops;
			at += (uint32_t)s->hops;
			continue;
		}
		if (at >= np || s->block != path[at] - 1) {
			snprintf(why, len, "step %u is block %u, not the path's %u", k, s->block,
				 at < np ? path[at] - 1 : 0);
			return false;
		}
		hops++;
		at++;
	}
	if (hops != np || !p->nsteps || p->step[p->nsteps - 1].block != path[np - 1] - 1) {
		snprintf(why, len, "the steps make %llu hops of %u", (unsigned long long)hops, np);
		return false;
	}
	return true;
}

#endif
