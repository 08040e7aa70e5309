/*
 * Unit test of the dominator tree (analyzer/graph_dom.c) on graphs made by hand: every
 * small graph's idom and retained bytes against dominator sets worked out the slow way
 * (a node d dominates v when v cannot be reached from the root without d), on random
 * graphs with self loops, repeated edges and unreached groups; then the shapes that
 * were slow: a list of 1,000,000 nodes pointing back to their owner, and a chain of
 * 2,000,000. An alarm fails the run if they take minutes (they take a second). Then
 * what --why keeps of long paths (graph_why_steps).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../helpers/graph_check.h"
#include "tap.h"

static uint64_t rnd_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t below)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % below);
}

static void random_graphs(void)
{
	struct scan_block b[SLOW_MAX];
	uint32_t want[SLOW_MAX + 1];
	char why[200] = "";
	unsigned bad = 0, runs = 3000;

	for (unsigned i = 0; i < SLOW_MAX; i++)
		b[i] = (struct scan_block){ .user = 0x1000 + 64 * i, .size = 1 + i * 7 };
	for (unsigned r = 0; r < runs && !bad; r++) {
		size_t n = 1 + rnd(SLOW_MAX);
		struct edges e = { 0 };
		struct graph *g;
		unsigned m = rnd(4 * (unsigned)n), roots = rnd(4);

		for (unsigned k = 0; k < roots; k++)
			edge_add(&e, 0, 1 + rnd((uint32_t)n));
		for (unsigned k = 0; k < m; k++)	/* self loops and repeats included */
			edge_add(&e, 1 + rnd((uint32_t)n), 1 + rnd((uint32_t)n));
		if (r % 4 == 0)			/* a back-pointer list below node 1 */
			for (unsigned k = 2; k <= n; k++) {
				edge_add(&e, k - 1, k);
				edge_add(&e, k, 1);
			}
		g = graph_make(n, &e, b);
		graph_dominators(g);
		slow_idom(n, &e, want);
		if (!same_tree(g, want, why, sizeof(why)))
			bad = r + 1;
		graph_free(g);
		free(e.v);
	}
	ok(!bad, "dominators of %u random graphs equal the slow way's%s%s", runs,
	   bad ? ": " : "", why);
}

/* ---- the shapes --------------------------------------------------------------------- */

static struct scan_block *sized(size_t n, uint64_t size)
{
	struct scan_block *b = xcalloc(n, sizeof(*b));

	for (size_t i = 0; i < n; i++)
		b[i] = (struct scan_block){ .user = 0x100000 + 32 * i, .size = size };
	return b;
}

/* the root -> owner (node 1, 32 bytes) -> node 2 -> ... -> node k + 1, each back to 1 */
static void backlist(size_t k)
{
	struct scan_block *b = sized(k + 1, 16);
	struct edges e = { 0 };
	struct graph *g;
	bool right = true;

	b[0].size = 32;
	edge_add(&e, 0, 1);
	edge_add(&e, 1, 2);
	for (uint32_t v = 2; v <= k + 1; v++) {
		if (v <= k)
			edge_add(&e, v, v + 1);
		edge_add(&e, v, 1);
	}
	g = graph_make(k + 1, &e, b);
	graph_dominators(g);
	for (size_t v = 2; v <= k + 1 && right; v++)
		right = g->idom[v] == v - 1 && g->ret[v] == 16 * (k + 2 - v);
	ok(right && g->idom[1] == 0 && g->ret[1] == 32 + 16 * k && g->reached == k + 1,
	   "a list of %zu nodes pointing back to their owner: each dominated by the one "
	   "before, the owner retains %zu bytes (got %llu)", k, 32 + 16 * k,
	   (unsigned long long)g->ret[1]);
	graph_free(g);
	free(e.v);
	free(b);
}

/* the root -> node 1 -> ... -> node k; and a cycle of c unreached nodes */
static void chain(size_t k, size_t c)
{
	struct scan_block *b = sized(k + c, 16);
	struct edges e = { 0 };
	struct graph *g;
	bool right = true;

	edge_add(&e, 0, 1);
	for (uint32_t v = 1; v < k; v++)
		edge_add(&e, v, v + 1);
	for (uint32_t v = (uint32_t)k + 1; v <= k + c; v++)
		edge_add(&e, v, v < k + c ? v + 1 : (uint32_t)k + 1);
	g = graph_make(k + c, &e, b);
	graph_dominators(g);
	for (size_t v = 1; v <= k + c && right; v++)
		right = g->idom[v] == (v == k + 1 ? 0 : v - 1) &&
			g->ret[v] == 16 * (v <= k ? k + 1 - v : k + c + 1 - v);
	ok(right && g->reached == k, "a chain of %zu nodes and an unreached cycle of %zu: each "
	   "dominated by the one before, the first retains %zu bytes (got %llu)", k, c, 16 * k,
	   (unsigned long long)g->ret[1]);
	graph_free(g);
	free(e.v);
	free(b);
}

/* ---- --why's paths ------------------------------------------------------------------ */

static void why_paths(void)
{
	uint32_t n = 1000000, *path = xmalloc(n * sizeof(*path));
	struct graph g = { .n = n, .sid = xcalloc(n, sizeof(uint32_t)) };
	struct graph_why_path *p = xmalloc(sizeof(*p));
	char why[200] = "";
	bool good;

	for (uint32_t k = 0; k < n; k++)
		path[k] = k + 1;
	good = steps_ok(&g, path, n, p, why, sizeof(why)) && p->nsteps == 11 &&
	       p->step[5].hops == n - 10 && p->step[5].same_stack;
	ok(good, "a chain of %u blocks of one stack: 5 steps, %u hops of the same stack "
	   "left out, 5 steps (%u steps%s%s)", n, n - 10, p->nsteps, why[0] ? ": " : "", why);
	for (uint32_t k = 0; k < 1000; k++)
		g.sid[k] = k % 2;
	good = steps_ok(&g, path, 1000, p, why, sizeof(why)) && p->nsteps == 41 &&
	       p->step[20].hops == 960 && !p->step[20].same_stack;
	ok(good, "a path of 1000 blocks of two stacks in turn: its first and last 20 "
	   "steps (%u steps%s%s)", p->nsteps, why[0] ? ": " : "", why);
	good = true;
	for (unsigned r = 0; r < 2000 && good; r++) {
		uint32_t len = 1 + rnd(r % 2 ? 200 : 5000), runs = 1 + rnd(6);

		for (uint32_t k = 0; k < len; k++)	/* runs of random lengths */
			g.sid[k] = rnd(runs * 8) < 7 && k ? g.sid[k - 1] : rnd(runs);
		good = steps_ok(&g, path, len, p, why, sizeof(why));
	}
	ok(good, "2000 random paths: each step in the path's order, the hops left out "
	   "adding up%s%s", why[0] ? ": " : "", why);
	free(g.sid);
	free(path);
	free(p);
}

static void too_long(int sig)
{
	static const char msg[] = "not ok - the dominators took more than 300 s: quadratic?\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

int main(void)
{
	signal(SIGALRM, too_long);
	alarm(300);	/* quadratic dominators took hours here: a failure, not a hang */
	random_graphs();
	backlist(1000000);
	chain(2000000, 1000);
	why_paths();
	return tap_done();
}
