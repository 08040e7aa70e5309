/*
 * --why (see graph.h): for the picked blocks, the shortest path of pointers from a
 * named root (a breadth-first tree over the heap graph's edges), and what they retain
 * together by stack (the dominator tree view). The graph is graph.c's, the dominator
 * tree graph_dom.c's.
 */
#include <elf.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fmt.h"
#include "graph.h"
#include "image.h"
#include "report.h"
#include "scan.h"
#include "stacks.h"
#include "sym.h"
#include "util.h"

#define NONE GRAPH_NONE
#define WHY_FRAMES 3		/* innermost frames shown per hop */


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

static void print_frames(struct graph *g, struct sym *sym, size_t i, FILE *f)
{
	const struct graph_stack *s = &g->ids[g->sid[i]];
	char buf[256];
	struct sym_pc *ps;
	unsigned np;

	if (s->flags & STACK_UNKNOWN || !s->nframes) {
		fputs(s->flags & STACK_UNKNOWN ? "[unknown stack]" : "[no stack]", f);
		return;
	}
	np = sym_stack(sym, s->pcs, s->nframes, &ps);	/* as the report shows them */
	for (unsigned k = 0; k < np && k < WHY_FRAMES; k++)
		fprintf(f, "%s%s", k ? " < " : "", frame_name(&ps[k], buf, sizeof(buf)));
	if (np > WHY_FRAMES)
		fputs(" < ...", f);
	free(ps);
}

static const char *const x86_64_regs[] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
	"rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base",
	"gs_base", "ds", "es", "fs", "gs"
};

static void print_root(struct graph *g, struct sym *sym, const struct graph_root *r, FILE *f)
{
	const struct alloc_chunk *c;
	const struct sym_pc *p;

	if (r->reg) {
		fprintf(f, "thread %lu register ", (unsigned long)g->img->threads[r->thread].tid);
		if (g->img->machine == EM_X86_64 && r->regno < sizeof(x86_64_regs) / sizeof(*x86_64_regs))
			fprintf(f, "%s\n", x86_64_regs[r->regno]);
		else
			fprintf(f, "#%u\n", r->regno);
		return;
	}
	for (size_t t = 0; t < g->img->nthreads; t++)
		if (r->addr >= g->tls_lo[t] && r->addr < g->tls_hi[t]) {
			fprintf(f, "thread %lu TLS (0x%llx)\n", (unsigned long)g->img->threads[t].tid,
				(unsigned long long)r->addr);
			return;
		}
	for (size_t t = 0; t < g->img->nthreads; t++) {
		const struct image_thread *th = &g->img->threads[t];
		const struct seg *s = image_find(g->img, th->sp);
		const char *fn;

		if (!th->have_sp || !s || r->addr < s->vaddr || r->addr - s->vaddr >= s->size)
			continue;
		fprintf(f, "thread %lu stack, ", (unsigned long)th->tid);
		fn = sym_stack_frame(sym, th->tid, th->regs, th->nregs, r->addr);
		if (fn)
			fprintf(f, "frame %s ", fn);
		fprintf(f, "(0x%llx, sp+0x%llx)\n", (unsigned long long)r->addr,
			(unsigned long long)(r->addr - th->sp));
		return;
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

static void print_path(struct graph *g, struct sym *sym, size_t i, FILE *f)
{
	struct graph_why_path *p = xmalloc(sizeof(*p));
	char a[32], b[32];

	graph_why_path(g, i, p);
	fprintf(f, "\n0x%llx: %s bytes, retains %s bytes, allocated at ",
		(unsigned long long)g->b[i].user, fmt_thousands(g->b[i].size, a),
		fmt_thousands(g->ret[i + 1], b));
	print_frames(g, sym, i, f);
	fputc('\n', f);
	if (!p->reached) {
		fputs("  no root reaches it (lost)\n", f);
		free(p);
		return;
	}
	fputs("  root: ", f);
	if (p->have_root)
		print_root(g, sym, &p->root, f);
	else
		fputs("?\n", f);
	for (unsigned k = 0; k < p->nsteps; k++) {
		const struct graph_why_step *s = &p->step[k];

		if (s->block == NONE) {
			fprintf(f, "  ... %s more hops%s ...\n", fmt_thousands(s->hops, a),
				s->same_stack ? " of the same stack" : "");
			continue;
		}
		fprintf(f, "  0x%llx  %s bytes", (unsigned long long)g->b[s->block].user,
			fmt_thousands(g->b[s->block].size, a));
		if (k + 1 < p->nsteps)
			fprintf(f, "  +%llu ->", (unsigned long long)s->offset);
		fputs("  ", f);
		print_frames(g, sym, s->block, f);
		fputc('\n', f);
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
	fprintf(f, "\nretained by the %zu blocks: %s bytes in %s blocks, by stack:\n", npick,
		fmt_thousands(bytes, a), fmt_thousands(blocks, b));
	for (size_t i = 0; i < g->nids && t[i].bytes; i++, nt++) {
		if (nt == 20) {
			fputs("  ...\n", f);
			break;
		}
		fprintf(f, "  %s bytes in %s blocks  ", fmt_thousands(t[i].bytes, a),
			fmt_thousands(t[i].blocks, b));
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
	      const struct graph_keying *k, const char *what, size_t top, FILE *f, char *err,
	      size_t errlen)
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
	sort_g = g;
	qsort(pick, npick, sizeof(*pick), size_desc);
	fprintf(f, "why alive: %zu blocks match '%s'%s\n", npick, what,
		top && npick > top ? "; the largest shown (--top)" : "");
	for (size_t x = 0; x < npick && (!top || x < top); x++)
		print_path(g, sym, pick[x], f);
	print_retained(g, sym, pick, npick, f);
	free(pick);
	return 0;
}

