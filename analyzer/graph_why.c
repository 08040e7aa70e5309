/*
 * --why (see graph.h): for the picked blocks, the shortest path of pointers from a
 * named root (a breadth-first tree over the heap graph's edges), and what they retain
 * together by stack (the dominator tree view), as a value why.c prints. The graph is
 * graph.c's, the dominator tree graph_dom.c's.
 */
#include <elf.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "graph.h"
#include "image.h"
#include "scan.h"
#include "stacks.h"
#include "sym.h"
#include "util.h"

#define NONE GRAPH_NONE

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
			uint32_t v = GRAPH_NODE(g->edge[e]);

			if (g->parent[v] == NONE) {
				g->parent[v] = u;
				q[tail++] = v;
			}
		}
	}
	free(q);
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "?";
}

static const char *frame_name(const struct sym_pc *p, char *buf, size_t size)
{
	if (p->nframes && p->frames[0].func)
		return p->frames[0].func;
	if (p->module)
		snprintf(buf, size, "%s+0x%llx", base_name(p->module),
			 (unsigned long long)p->module_offset);
	else
		snprintf(buf, size, "0x%llx", (unsigned long long)p->pc);
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

/* What graph_why fills, as it goes. */
struct why_fill {
	struct graph *g;
	struct sym *sym;
	struct graph_why *w;
	size_t *memo;			/* by stack id: its index in w->stacks, or SIZE_MAX */
	size_t cap;
};

/* Block i's stack, named as the report names frames: its index in w->stacks. */
static size_t stack_of(struct why_fill *c, size_t i)
{
	uint32_t sid = c->g->sid[i];
	const struct graph_stack *s = &c->g->ids[sid];
	struct graph_why_stack *x;
	char buf[256];
	struct sym_pc *ps;
	unsigned np;

	if (c->memo[sid] != SIZE_MAX)
		return c->memo[sid];
	if (c->w->nstacks == c->cap)
		c->w->stacks = xrealloc(c->w->stacks, (c->cap = c->cap ? 2 * c->cap : 16) *
						       sizeof(*c->w->stacks));
	x = &c->w->stacks[c->w->nstacks];
	x->pcs = s->pcs;
	x->npcs = s->nframes;
	x->marked = false;
	if (stack_mark(s->flags, s->nframes)) {
		x->names = xmalloc(sizeof(*x->names));
		x->names[0] = xstrdup(stack_mark(s->flags, s->nframes));
		x->n = 1;
		x->marked = true;
	} else {
		np = sym_stack(c->sym, s->pcs, s->nframes, &ps);	/* as the report shows them */
		x->names = xmalloc((np ? np : 1) * sizeof(*x->names));
		for (unsigned k = 0; k < np; k++)
			x->names[k] = xstrdup(frame_name(&ps[k], buf, sizeof(buf)));
		x->n = np;
		free(ps);
	}
	return c->memo[sid] = c->w->nstacks++;
}

static const char *const x86_64_regs[] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
	"rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base",
	"gs_base", "ds", "es", "fs", "gs"
};

static void name_root(struct graph *g, struct sym *sym, const struct graph_root *r,
		      struct graph_why_root *out)
{
	const struct sym_pc *p;

	if (r->reg) {
		out->kind = WHY_ROOT_REGISTER;
		out->tid = g->img->threads[r->thread].tid;
		out->regno = r->regno;
		if (g->img->machine == EM_X86_64 && r->regno < sizeof(x86_64_regs) / sizeof(*x86_64_regs))
			out->reg = x86_64_regs[r->regno];
		return;
	}
	out->addr = r->addr;
	for (size_t t = 0; t < g->img->nthreads; t++)
		if (r->addr >= g->tls_lo[t] && r->addr < g->tls_hi[t]) {
			out->kind = WHY_ROOT_TLS;
			out->tid = g->img->threads[t].tid;
			return;
		}
	for (size_t t = 0; t < g->img->nthreads; t++) {
		const struct image_thread *th = &g->img->threads[t];
		const struct seg *s = image_find(g->img, th->sp);
		const char *fn;

		if (!th->have_sp || !s || r->addr < s->vaddr || r->addr - s->vaddr >= s->size)
			continue;
		out->kind = WHY_ROOT_STACK;
		out->tid = th->tid;
		out->offset = r->addr - th->sp;
		fn = sym_stack_frame(sym, th->tid, th->regs, th->nregs, r->addr);
		out->name = fn ? xstrdup(fn) : NULL;
		return;
	}
	p = sym_lookup(sym, r->addr, false);
	if (p->module) {
		out->kind = p->nframes && p->frames[0].func ? WHY_ROOT_GLOBAL : WHY_ROOT_MODULE_DATA;
		out->name = out->kind == WHY_ROOT_GLOBAL ? xstrdup(p->frames[0].func) : NULL;
		out->module = xstrdup(base_name(p->module));
		out->offset = p->module_offset;
		return;
	}
	out->kind = g->alloc && alloc_find(g->alloc, r->addr) ? WHY_ROOT_UNTAGGED : WHY_ROOT_ANONYMOUS;
}

/* The path being cut: its first steps in place, the last ones in a ring. */
struct cut {
	struct graph_why_path *p;
	struct graph_why_step ring[GRAPH_WHY_ENDS + 1];
	unsigned nring, at;		/* steps in the ring, the oldest's slot */
	uint64_t mid_hops;		/* hops of the steps pushed out of it */
};

static void cut_step(struct cut *c, struct graph_why_step s)
{
	struct graph_why_path *p = c->p;

	if (p->nsteps < GRAPH_WHY_ENDS) {
		p->step[p->nsteps++] = s;
		return;
	}
	if (c->nring == GRAPH_WHY_ENDS + 1) {	/* the oldest goes to the middle */
		const struct graph_why_step *o = &c->ring[c->at];

		c->mid_hops += o->block == NONE ? o->hops : 1;
		c->ring[c->at] = s;
		c->at = (c->at + 1) % (GRAPH_WHY_ENDS + 1);
		return;
	}
	c->ring[(c->at + c->nring++) % (GRAPH_WHY_ENDS + 1)] = s;
}

/* The ring after the first steps; with steps pushed out, one more, for what they were. */
static void cut_end(struct cut *c)
{
	struct graph_why_path *p = c->p;
	unsigned from = 0, m = 0;

	if (c->mid_hops) {
		const struct graph_why_step *o = &c->ring[c->at];

		c->mid_hops += o->block == NONE ? o->hops : 1;
		p->step[p->nsteps++] = (struct graph_why_step){ NONE, 0, c->mid_hops, false };
		from = 1;
	}
	for (unsigned k = from; k < c->nring; k++)
		p->step[p->nsteps++] = c->ring[(c->at + k) % (GRAPH_WHY_ENDS + 1)];
	/* a run's hops left out beside the middle's: one step */
	for (unsigned k = 0; k < p->nsteps; k++) {
		struct graph_why_step *last = m ? &p->step[m - 1] : NULL;

		if (last && last->block == NONE && p->step[k].block == NONE) {
			last->hops += p->step[k].hops;
			last->same_stack = false;
		} else {
			p->step[m++] = p->step[k];
		}
	}
	p->nsteps = m;
}

static struct graph_why_step block_step(uint32_t node)
{
	return (struct graph_why_step){ node - 1, 0, 0, false };
}

void graph_why_steps(const struct graph *g, const uint32_t *path, uint32_t np,
		     struct graph_why_path *out)
{
	struct cut c = { .p = out };

	out->nsteps = 0;
	out->length = np;
	for (uint32_t k = 0, r; k < np; k = r + 1) {
		/* [k, r]: a run of blocks of one stack */
		for (r = k; r + 1 < np && g->sid[path[r + 1] - 1] == g->sid[path[k] - 1]; r++)
			;
		if (r - k + 1 <= 2 * GRAPH_WHY_RUN + 1) {
			for (uint32_t x = k; x <= r; x++)
				cut_step(&c, block_step(path[x]));
			continue;
		}
		for (uint32_t x = k; x < k + GRAPH_WHY_RUN; x++)
			cut_step(&c, block_step(path[x]));
		cut_step(&c, (struct graph_why_step){ NONE, 0, r - k + 1 - 2 * GRAPH_WHY_RUN,
						      true });
		for (uint32_t x = r + 1 - GRAPH_WHY_RUN; x <= r; x++)
			cut_step(&c, block_step(path[x]));
	}
	cut_end(&c);
}

void graph_why_path(struct graph *g, size_t i, struct graph_why_path *out)
{
	uint32_t *path, np = 0;

	bfs(g);
	memset(out, 0, sizeof(*out));
	out->block = i;
	if (g->parent[i + 1] == NONE)
		return;
	out->reached = true;
	for (uint32_t v = (uint32_t)(i + 1); v; v = g->parent[v])
		np++;
	path = xmalloc(np * sizeof(*path));
	for (uint32_t v = (uint32_t)(i + 1), k = np; v; v = g->parent[v])
		path[--k] = v;	/* the root's side first */
	out->have_root = graph_find_root(g, path[0] - 1, &out->root);
	graph_why_steps(g, path, np, out);
	/* the offsets of the blocks kept, each into the block after it on the whole path:
	 * their places found again by walking the path once */
	for (uint32_t k = 0, s = 0; k < np && s < out->nsteps; k++) {
		struct graph_why_step *st = &out->step[s];

		while (st->block == NONE && s + 1 < out->nsteps)
			st = &out->step[++s];
		if (st->block != path[k] - 1)
			continue;
		if (k + 1 < np)
			st->offset = graph_pointer_offset(g, st->block, path[k + 1] - 1);
		s++;
	}
	free(path);
}

static void fill_path(struct why_fill *c, size_t i, struct graph_why_shown *out)
{
	struct graph *g = c->g;
	struct graph_why_path *p = xmalloc(sizeof(*p));

	graph_why_path(g, i, p);
	*out = (struct graph_why_shown){ .addr = g->b[i].user, .size = g->b[i].size,
					 .retains = g->ret[i + 1], .stack = stack_of(c, i),
					 .reached = p->reached, .length = p->length };
	if (!p->reached) {
		free(p);
		return;
	}
	if (p->have_root)
		name_root(g, c->sym, &p->root, &out->root);
	out->hops = xcalloc(p->nsteps ? p->nsteps : 1, sizeof(*out->hops));
	for (unsigned k = 0; k < p->nsteps; k++) {
		const struct graph_why_step *s = &p->step[k];
		struct graph_why_hop *h = &out->hops[out->nhops++];

		if (s->block == NONE) {
			*h = (struct graph_why_hop){ .gap = true, .hops = s->hops,
						     .same_stack = s->same_stack };
			continue;
		}
		*h = (struct graph_why_hop){ .addr = g->b[s->block].user, .size = g->b[s->block].size,
					     .offset = s->offset, .last = k + 1 == p->nsteps,
					     .stack = stack_of(c, s->block) };
	}
	free(p);
}

static bool stack_matches(struct graph *g, struct sym *sym, uint32_t s, const regex_t *re)
{
	const struct graph_stack *x = &g->ids[s];

	struct sym_pc *ps;
	unsigned np = sym_stack(sym, x->pcs, x->nframes, &ps);
	bool hit = false;

	for (unsigned k = 0; k < np && !hit; k++) {
		const struct sym_pc *p = &ps[k];
		char buf[256];

		for (unsigned j = 0; j < p->nframes && !hit; j++)
			hit = p->frames[j].func && !regexec(re, p->frames[j].func, 0, NULL, 0);
		hit = hit || !regexec(re, frame_name(p, buf, sizeof(buf)), 0, NULL, 0);
	}
	free(ps);
	return hit;
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
 * by allocation stack. In preorder a block's dominator comes before it.
 */
static void fill_retained(struct why_fill *c, const uint32_t *pick, size_t npick)
{
	struct graph *g = c->g;
	struct graph_why *w = c->w;
	uint8_t *under = xcalloc(g->n + 1, 1);
	struct by_stack *t = xcalloc(g->nids ? g->nids : 1, sizeof(*t));
	uint64_t bytes = 0, blocks = 0;

	for (size_t k = 0; k < npick; k++)
		under[pick[k] + 1] = 1;
	for (size_t i = 0; i < g->nids; i++)
		t[i].sid = (uint32_t)i;
	for (size_t k = 1; k <= g->n; k++) {	/* order[0] is the root */
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
	w->retained_bytes = bytes;
	w->retained_blocks = blocks;
	for (size_t i = 0; i < g->nids && t[i].bytes; i++) {
		if (w->nrows == GRAPH_WHY_RETAINED_ROWS) {
			w->more_rows = true;
			break;
		}
		w->rows[w->nrows++] = (struct graph_why_retained){
			t[i].bytes, t[i].blocks, stack_of(c, first_block(g, t[i].sid)) };
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

/* The answer for the npick blocks of pick (taken), the largest top of them shown. */
static struct graph_why *answer(struct graph *g, struct sym *sym, const char *what,
				uint32_t *pick, size_t npick, size_t top)
{
	struct why_fill c = { g, sym, NULL, NULL, 0 };

	sort_g = g;
	qsort(pick, npick, sizeof(*pick), size_desc);
	c.w = xcalloc(1, sizeof(*c.w));
	c.memo = xmalloc((g->nids ? g->nids : 1) * sizeof(*c.memo));
	memset(c.memo, 0xff, (g->nids ? g->nids : 1) * sizeof(*c.memo));
	c.w->what = xstrdup(what);
	c.w->matched = npick;
	c.w->nshown = top && npick > top ? top : npick;
	c.w->shown = xcalloc(c.w->nshown ? c.w->nshown : 1, sizeof(*c.w->shown));
	for (size_t x = 0; x < c.w->nshown; x++)
		fill_path(&c, pick[x], &c.w->shown[x]);
	fill_retained(&c, pick, npick);
	free(c.memo);
	free(pick);
	return c.w;
}

int graph_why_picked(struct graph *g, const struct scan_result *scan, struct sym *sym,
		     const struct graph_keying *k, const char *what, const uint8_t *picked,
		     size_t top, struct graph_why **out)
{
	uint32_t *pick = xmalloc((g->n ? g->n : 1) * sizeof(*pick));
	size_t npick = 0;

	graph_dominators(g);
	graph_stacks(g, scan);
	bfs(g);
	for (size_t i = 0; i < g->n; i++)
		if (picked[i] && graph_counted(g, scan, k, i))
			pick[npick++] = (uint32_t)i;
	if (!npick) {
		free(pick);
		return 1;
	}
	*out = answer(g, sym, what, pick, npick, top);
	return 0;
}

int graph_why(struct graph *g, const struct scan_result *scan, struct sym *sym,
	      const struct graph_keying *k, const char *what, size_t top,
	      struct graph_why **out, char *err, size_t errlen)
{
	uint32_t *pick = xmalloc((g->n ? g->n : 1) * sizeof(*pick));
	size_t npick = 0;
	unsigned long long addr;
	regex_t re;
	int rc;

	graph_dominators(g);
	graph_stacks(g, scan);
	bfs(g);
	if (!strncmp(what, "0x", 2) && parse_u64(what, &addr)) {
		size_t i = graph_lookup(g, addr);

		if (i != SIZE_MAX && graph_counted(g, scan, k, i))
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

			if (!graph_counted(g, scan, k, i))
				continue;
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
	*out = answer(g, sym, what, pick, npick, top);
	return 0;
}

void graph_why_free(struct graph_why *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nshown; i++) {
		free(w->shown[i].hops);
		free(w->shown[i].root.name);
		free(w->shown[i].root.module);
	}
	for (size_t i = 0; i < w->nstacks; i++) {
		for (unsigned k = 0; k < w->stacks[i].n; k++)
			free(w->stacks[i].names[k]);
		free(w->stacks[i].names);
	}
	free(w->stacks);
	free(w->shown);
	free(w->what);
	free(w);
}

