/*
 * The leak classifier (see leaks.h): memcheck's algorithm (mc_leakcheck.c) on the heap
 * graph (graph.h), whose edges say which blocks each block points into and whether a
 * pointer holds a block's start:
 *
 *  1. Mark from the roots. A start pointer from a root or from a reachable block makes
 *     b reachable; anything else (an interior pointer, or any pointer from a possibly
 *     lost block) makes an unreached block possibly lost. A block whose state rises
 *     passes its pointers on (again).
 *  2. Cliques. For every block still unreached, in address order: it leads a clique;
 *     every unreached block it reaches (transitively, any pointer) becomes indirectly
 *     lost, including earlier clique leaders. The leaders left are definitely lost.
 *     So a cycle of lost blocks that nothing outside points into has exactly one
 *     definitely lost block, its lowest-addressed one, and the rest are indirectly
 *     lost: what memcheck reports.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>		/* malloc_trim */
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "analysis.h"
#include "decode.h"
#include "fmt.h"
#include "graph.h"
#include "image.h"
#include "json.h"
#include "leaks.h"
#include "scan.h"
#include "stacks.h"
#include "sym.h"
#include "util.h"

enum { ST_UNREACHED, ST_POSSIBLE, ST_REACHABLE, ST_INDIRECT };

struct lk {
	struct graph *g;
	struct scan_block *b;		/* g->b */
	size_t n;
	uint32_t *work;			/* block indices to pass on */
	size_t nwork, work_cap;
	uint8_t *hide;			/* per block: held only from suppressed leaks */
};

static void push(struct lk *k, size_t i)
{
	if (k->nwork == k->work_cap)
		k->work = xrealloc(k->work, (k->work_cap = k->work_cap ? 2 * k->work_cap : 1024) *
						    sizeof(*k->work));
	k->work[k->nwork++] = (uint32_t)i;
}

/* Pass 1: an edge e from a root (prior_definite) or from a block of that state. */
static inline void mark(struct lk *k, uint32_t e, bool prior_definite)
{
	size_t i = GRAPH_NODE(e) - 1;
	struct scan_block *b = &k->b[i];

	if (!(e & GRAPH_INTERIOR) && prior_definite) {
		if (b->state != ST_REACHABLE) {
			b->state = ST_REACHABLE;
			push(k, i);
		}
	} else if (b->state == ST_UNREACHED) {
		b->state = ST_POSSIBLE;
		push(k, i);
	}
}

static void pass_reach(struct lk *k)
{
	const struct graph *g = k->g;

	for (uint32_t e = g->eoff[0]; e < g->eoff[1]; e++)
		mark(k, g->edge[e], true);
	while (k->nwork) {
		size_t i = k->work[--k->nwork];
		bool definite = k->b[i].state == ST_REACHABLE;

		for (uint32_t e = g->eoff[i + 1]; e < g->eoff[i + 2]; e++)
			mark(k, g->edge[e], definite);
	}
}

/* Pass 2: every unreached block leader reaches, leader aside, is indirectly lost. */
static void pass_cliques(struct lk *k)
{
	const struct graph *g = k->g;

	for (size_t leader = 0; leader < k->n; leader++) {
		if (k->b[leader].state != ST_UNREACHED)
			continue;
		push(k, leader);
		while (k->nwork) {
			size_t i = k->work[--k->nwork];

			for (uint32_t e = g->eoff[i + 1]; e < g->eoff[i + 2]; e++) {
				size_t j = GRAPH_NODE(g->edge[e]) - 1;

				if (j == leader || k->b[j].state != ST_UNREACHED)
					continue;
				k->b[j].state = ST_INDIRECT;
				push(k, j);
			}
		}
	}
}

/* ------------------------------------------------------------------------------ */
/* Suppressions: LeakSanitizer's format and matching. */

struct leak_supp {
	char **pat;
	uint64_t *hits;			/* stacks matched, for the summary */
	size_t n;
};

/*
 * LSan's TemplateMatch: '*' matches any run, '^' at the start anchors there, '$'
 * anchors at the end; otherwise the pattern may match anywhere in str.
 */
static bool template_match(const char *t, const char *str)
{
	bool start = false, star = false;

	if (!str || !*str)
		return false;
	if (*t == '^') {
		start = true;
		t++;
	}
	while (*t) {
		const char *tend, *spos;
		size_t len;
		char piece[512];

		if (*t == '*') {
			t++;
			start = false;
			star = true;
			continue;
		}
		if (*t == '$')
			return !*str || star;
		if (!*str)
			return false;
		tend = t + strcspn(t, "*$");
		len = (size_t)(tend - t);
		if (len >= sizeof(piece))
			len = sizeof(piece) - 1;
		memcpy(piece, t, len);
		piece[len] = 0;
		spos = strstr(str, piece);
		if (!spos || (start && spos != str))
			return false;
		str = spos + len;
		t = tend;
		start = star = false;
	}
	return true;
}

struct leak_supp *leaks_read_suppressions(const char *path, char *err, size_t errlen)
{
	char line[4096];
	struct leak_supp *s;
	unsigned lineno = 0;
	FILE *f;
	int fd = image_open_regular(path, err, errlen);

	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0) {
			snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
			close(fd);
		}
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *e;

		lineno++;
		while (isspace((unsigned char)*p))
			p++;
		e = p + strlen(p);
		while (e > p && isspace((unsigned char)e[-1]))
			*--e = 0;
		if (!*p || *p == '#')
			continue;
		if (strncmp(p, "leak:", 5) || !p[5]) {
			snprintf(err, errlen, "%s:%u: not a suppression (leak:PATTERN)", path, lineno);
			fclose(f);
			leaks_free_suppressions(s);
			return NULL;
		}
		s->pat = xrealloc(s->pat, (s->n + 1) * sizeof(*s->pat));
		s->hits = xrealloc(s->hits, (s->n + 1) * sizeof(*s->hits));
		s->pat[s->n] = xstrdup(p + 5);
		s->hits[s->n++] = 0;
	}
	fclose(f);
	return s;
}

void leaks_free_suppressions(struct leak_supp *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->pat[i]);
	free(s->pat);
	free(s->hits);
	free(s);
}

/* Does some frame of pcs match a pattern: function, file or module name. */
static bool suppressed(struct leak_supp *supp, struct sym *sym, const uint64_t *pcs,
		       unsigned n, bool count)
{
	struct sym_pc *ps;
	unsigned np;

	if (!supp || !supp->n)
		return false;
	np = sym_stack(sym, pcs, n, &ps);	/* the frames as the report shows them */
	for (unsigned i = 0; i < np; i++) {
		const struct sym_pc *p = &ps[i];

		for (size_t j = 0; j < supp->n; j++) {
			const char *pat = supp->pat[j];
			/* the module as the core records it, or its file name alone */
			const char *slash = p->module ? strrchr(p->module, '/') : NULL;
			bool hit = template_match(pat, p->module) ||
				   (slash && template_match(pat, slash + 1));

			for (unsigned f = 0; f < p->nframes && !hit; f++)
				hit = template_match(pat, p->frames[f].func) ||
				      template_match(pat, p->frames[f].file);
			if (hit) {
				supp->hits[j] += count;
				free(ps);
				return true;
			}
		}
	}
	free(ps);
	return false;
}

/* ------------------------------------------------------------------------------ */

bool leaks_parse_classes(const char *s, unsigned *mask)
{
	static const char *const names[LEAK_NCLASSES] = { "definite", "indirect", "possible",
							  "reachable" };

	*mask = 0;
	while (*s) {
		size_t len = strcspn(s, ",");
		int c;

		for (c = 0; c < LEAK_NCLASSES; c++)
			if (strlen(names[c]) == len && !strncmp(s, names[c], len))
				break;
		if (c == LEAK_NCLASSES) {
			if (len == 3 && !strncmp(s, "all", 3))
				*mask |= LEAK_MASK_ALL;
			else
				return false;
		} else {
			*mask |= 1u << c;
		}
		s += len;
		if (*s)
			s++;
	}
	return *mask != 0;
}

/* by class: a stack's class is its index + 1 (LEAK_FLAG_MASK) */
static const char *const class_names[LEAK_NCLASSES] = { "definitely lost", "indirectly lost",
							"possibly lost", "still reachable" };

const char *leaks_class_name(unsigned flags)
{
	unsigned c = (flags & LEAK_FLAG_MASK) >> LEAK_FLAG_SHIFT;

	return c >= 1 && c <= LEAK_NCLASSES ? class_names[c - 1] : NULL;
}

static enum leak_class state_class(unsigned st)
{
	switch (st) {
	case ST_REACHABLE: return LEAK_REACHABLE;
	case ST_POSSIBLE: return LEAK_POSSIBLE;
	case ST_INDIRECT: return LEAK_INDIRECT;
	default: return LEAK_DEFINITE;
	}
}

static void sat_add(uint64_t *a, uint64_t b)
{
	if (__builtin_add_overflow(*a, b, a))
		*a = UINT64_MAX;
}

/*
 * The stacks of every class's blocks, one collect per class joined with every record,
 * in one pass over the blocks: a v2 block goes in by the site id the scan kept, only a
 * v1 one (its stack lies below it) is decoded again.
 */
static void join_classes(const struct lk *k, const struct scan_result *scan,
			 struct collect cc[2 * LEAK_NCLASSES],
			 struct join_info ji[2 * LEAK_NCLASSES])
{
	struct decode_buf *buf = xmalloc(sizeof(*buf));
	int ncc = k->hide ? 2 * LEAK_NCLASSES : LEAK_NCLASSES;

	for (int c = 0; c < ncc; c++)	/* by thread, one region: as the plain report */
		collect_init_records(&cc[c], &scan->found);
	for (size_t i = 0; i < k->n; i++) {
		struct decoded d;

		if (!k->b[i].out && scan_block_decoded(k->g->img, &k->b[i], buf, &d))
			collect_add(&cc[state_class(k->b[i].state) +
					(k->hide && k->hide[i] ? LEAK_NCLASSES : 0)], &d);
	}
	free(buf);
	for (int c = 0; c < ncc; c++)
		collect_join(&cc[c], &ji[c]);
}

/* Whether block i's stack is one a suppression names (count: the match counts). */
static bool block_suppressed(const struct lk *k, const struct scan_result *scan,
			     struct sym *sym, struct leak_supp *supp, size_t i,
			     struct decode_buf *buf, bool count)
{
	unsigned n;
	const uint64_t *pcs = scan_block_stack(k->g->img, scan, &k->b[i], buf, &n);

	return n && suppressed(supp, sym, pcs, n, count);	/* no frame matches none */
}

/*
 * As LeakSanitizer: a suppressed leak hides what it alone holds. Every block not
 * reachable whose stack a suppression matches, and every block not reachable that
 * one of those points to (transitively, any pointer), is marked in k->hide, and
 * counts as suppressed in its class.
 */
static void hide_suppressed(struct lk *k, const struct scan_result *scan, struct sym *sym,
			    struct leak_supp *supp)
{
	struct decode_buf *buf;

	if (!supp || !supp->n || !k->n)
		return;
	k->hide = xcalloc(k->n, 1);
	buf = xmalloc(sizeof(*buf));
	for (size_t i = 0; i < k->n; i++) {
		if (k->b[i].state == ST_REACHABLE || k->hide[i] ||
		    !block_suppressed(k, scan, sym, supp, i, buf, true))
			continue;
		k->hide[i] = 1;
		push(k, i);
		while (k->nwork) {
			size_t x = k->work[--k->nwork];

			for (uint32_t e = k->g->eoff[x + 1]; e < k->g->eoff[x + 2]; e++) {
				size_t j = GRAPH_NODE(k->g->edge[e]) - 1;

				if (k->b[j].state == ST_REACHABLE || k->hide[j])
					continue;
				k->hide[j] = 1;
				push(k, j);
			}
		}
	}
	free(buf);
}

/*
 * Mark out (scan_block.out) every block the report leaves out: of a class not shown,
 * held only from a suppressed leak, or of a suppressed stack.
 * Other consumers of the graph (retained sizes) then count only the blocks shown.
 */
static void mark_out(struct lk *k, const struct scan_result *scan, struct sym *sym,
		     struct leak_supp *supp, unsigned mask)
{
	bool any_supp = supp && supp->n;
	struct decode_buf *buf = any_supp ? xmalloc(sizeof(*buf)) : NULL;

	for (size_t i = 0; i < k->n; i++) {
		struct scan_block *b = &k->b[i];

		if (!(mask & 1u << state_class(b->state)) || (k->hide && k->hide[i]))
			b->out = 1;
		else if (any_supp && block_suppressed(k, scan, sym, supp, i, buf, false))
			b->out = 1;
	}
	free(buf);
}

unsigned leaks_block_flags(const struct scan_block *b)
{
	return (unsigned)(state_class(b->state) + 1) << LEAK_FLAG_SHIFT;
}

void leaks_apply(struct graph *g, struct scan_result *scan, struct sym *sym,
		 const struct alloc *alloc, struct leak_supp *supp, unsigned mask,
		 struct leak_summary *sum)
{
	struct lk k = { .g = g, .b = g->b, .n = g->n };
	struct collect cc[2 * LEAK_NCLASSES];
	struct join_info ji[2 * LEAK_NCLASSES];
	struct stacks out;
	uint64_t unknown_blocks = 0, unknown_bytes = 0;

	memset(sum, 0, sizeof(*sum));
	sum->mask = mask;
	sum->supp = supp;
	for (size_t i = 0; i < k.n; i++)
		k.b[i].state = ST_UNREACHED;
	pass_reach(&k);
	pass_cliques(&k);
	sum->threads = (unsigned)g->img->nthreads;
	sum->stack_cut = g->stack_cut;
	sum->dead_stacks = g->dead_stacks;
	sum->dead_stack_bytes = g->dead_stack_bytes;
	sum->root_bytes = g->root_bytes;
	sum->scanned_bytes = g->scanned_bytes;
	sum->allocator_bytes = g->allocator_bytes;
	if (alloc) {
		alloc_describe(alloc, sum->allocator, sizeof(sum->allocator));
		sum->allocator_known = alloc->known;
		sum->allocator_problems = alloc->nproblems;
		if (alloc->nproblems)
			snprintf(sum->allocator_damage, sizeof(sum->allocator_damage), "%s",
				 alloc->problems[0]);
	}

	hide_suppressed(&k, scan, sym, supp);
	/* the plain report's stacks are made again by class below: gone first, so that
	 * their sizes (8 bytes a block) and the classes' are not held at once */
	stacks_free(&scan->stacks);
	stacks_init(&out);
	join_classes(&k, scan, cc, ji);
	for (int cc_i = 0; cc_i < (k.hide ? 2 : 1) * LEAK_NCLASSES; cc_i++) {
		int c = cc_i % LEAK_NCLASSES;
		bool hidden = cc_i >= LEAK_NCLASSES;
		struct stack **all;
		size_t n;

		all = stacks_list(&cc[cc_i].stacks, &n);
		for (size_t i = 0; i < n; i++) {
			struct stack *s = all[i];
			/* the sites' counters (calls, frees) are not split by class: left out */
			struct stack_add a = { .bytes = s->bytes, .blocks = s->blocks,
					       .est_bytes = s->est_bytes,
					       .est_blocks = s->est_blocks, .sizes = s->sizes,
					       .nsizes = s->nsizes, .give = &s->sizes,
					       .give_cap = s->sizes_cap };
			struct stack_key key = { .pcs = s->pcs, .nframes = s->nframes, .tid = s->tid,
				.flags = s->flags | (unsigned)(c + 1) << LEAK_FLAG_SHIFT };

			if (hidden || suppressed(supp, sym, s->pcs, s->nframes, true)) {
				sat_add(&sum->supp_bytes[c], stack_bytes(s));
				sat_add(&sum->supp_blocks[c], stack_blocks(s));
				continue;
			}
			sat_add(&sum->bytes[c], stack_bytes(s));
			sat_add(&sum->blocks[c], stack_blocks(s));
			if (!(mask & 1u << c))
				continue;
			stacks_add_group(&out, &key, &a);
		}
		if (mask & 1u << c && !hidden) {
			unknown_blocks += ji[cc_i].unknown_blocks;
			unknown_bytes += ji[cc_i].unknown_bytes;
		}
		free(all);
		stacks_take_pools(&out, &cc[cc_i].stacks);	/* sizes given to out's stacks */
		collect_free(&cc[cc_i]);
	}
	scan->stacks = out;
	scan->join.unknown_blocks = unknown_blocks;
	scan->join.unknown_bytes = unknown_bytes;
	mark_out(&k, scan, sym, supp, mask);
	free(k.hide);
	free(k.work);
}

static void leaks_text(const struct report *r, const void *data, FILE *f)
{
	const struct leak_summary *sum = data;
	static const char *const label[LEAK_NCLASSES] = { "definitely lost", "indirectly lost",
							  "  possibly lost", "still reachable" };
	uint64_t sb = 0, sn = 0;
	size_t used = 0;

	(void)r;
	char n1[32];

	fprintf(f, "  roots:      registers of %u threads, %s bytes of memory outside blocks%s\n",
		sum->threads, fmt_thousands(sum->root_bytes, n1),
		sum->stack_cut ? " (stacks from sp up)" : "");
	if (sum->dead_stacks)
		fprintf(f, "  exited:     %u stacks of exited threads (%s bytes) kept by the C "
			"library for reuse are no roots\n", sum->dead_stacks,
			fmt_thousands(sum->dead_stack_bytes, n1));
	if (sum->allocator_known)
		fprintf(f, "  allocator:  %s; %s bytes of free chunks and its metadata are no "
			"roots\n", sum->allocator, fmt_thousands(sum->allocator_bytes, n1));
	else if (sum->allocator[0])
		fprintf(f, "  allocator:  %s\n", sum->allocator);
	if (sum->allocator_problems > 1)
		fprintf(f, "  not walked: %s, and %u more (--memory lists them)\n",
			sum->allocator_damage, sum->allocator_problems - 1);
	else if (sum->allocator_problems)
		fprintf(f, "  not walked: %s\n", sum->allocator_damage);
	fprintf(f, "LEAK SUMMARY:\n");
	for (int c = 0; c < LEAK_NCLASSES; c++) {
		char a[32], b[32];

		fprintf(f, "  %s: %s bytes in %s blocks%s\n", label[c],
			fmt_thousands(sum->bytes[c], a), fmt_thousands(sum->blocks[c], b),
			sum->mask & 1u << c ? "" : " (not shown)");
		sb += sum->supp_bytes[c];
		sn += sum->supp_blocks[c];
	}
	for (size_t i = 0; sum->supp && i < sum->supp->n; i++)
		used += sum->supp->hits[i] != 0;
	if (sum->supp) {
		char a[32], b[32];

		fprintf(f, "       suppressed: %s bytes in %s blocks (%zu of %zu patterns "
			"matched)\n", fmt_thousands(sb, a), fmt_thousands(sn, b), used, sum->supp->n);
	}
}

static void leaks_json(const struct report *r, const void *data, const struct report_out *o)
{
	const struct leak_summary *l = data;
	FILE *f = o->f;

	(void)r;
	fputs("  \"leaks\": {\"classes\": [", f);
	for (int c = 0; c < LEAK_NCLASSES; c++) {
		fputs(c ? ", " : "", f);
		fputs("{\"class\": ", f);
		json_str(class_names[c], false, f);
		fprintf(f, ", \"shown\": %s, \"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64
			", \"suppressed_bytes\": %" PRIu64 ", \"suppressed_blocks\": %" PRIu64 "}",
			l->mask & 1u << c ? "true" : "false", l->bytes[c], l->blocks[c],
			l->supp_bytes[c], l->supp_blocks[c]);
	}
	fprintf(f, "],\n    \"root_threads\": %u, \"root_bytes\": %" PRIu64
		", \"scanned_bytes\": %" PRIu64 ", \"allocator_bytes\": %" PRIu64 "},\n",
		l->threads, l->root_bytes, l->scanned_bytes, l->allocator_bytes);
}

/* every format: the classes are the roots of its stacks */
static bool leaks_can(const struct out_format *f)
{
	(void)f;
	return true;
}

const struct section_ops leaks_section = {
	.name = "leaks", .gives = "leak classes", .can = leaks_can, .text = leaks_text,
	.json = leaks_json,
};

/* ---- the row --------------------------------------------------------------------- */

static bool leaks_wanted(const struct options *o)
{
	return o->leak_mask != 0;
}

static void *leaks_run(struct session *s)
{
	struct leak_summary *sum = xmalloc(sizeof(*sum));

	leaks_apply(s->graph, &s->scan, s->sym, &s->alloc, s->o->supp, s->o->leak_mask, sum);
	s->r.class_names = class_names;
	s->r.regrouped = true;	/* its stacks carry no counters */
	s->keying.flags = leaks_block_flags;
	if (s->o->fail_on_leak && sum->blocks[LEAK_DEFINITE])
		s->status = EXIT_LEAKS;
#ifdef __GLIBC__
	/* the free pages inside the heap back: the classes' tables (sizes of every block,
	 * four times over) leave holes that the dominator tree's arrays, which come next,
	 * do not fit, and a heap of a million blocks kept 20 MiB of them resident */
	malloc_trim(0);
#endif
	return sum;
}

/* each block's class: in its stack's flags, and in the graph's keys after it */
const struct analysis leaks_analysis = {
	"leaks", IN_GRAPH | IN_LIST | IN_TYPED, IN_MARKS | IN_KEYING | IN_STACKS, IN_COUNTERS, leaks_wanted,
	leaks_run, free, &leaks_section
};
