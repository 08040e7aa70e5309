/*
 * The session (session.h): the analyses table, run in the order their needs make,
 * each input dropped after its last reader; then the report, its views, and NEW - OLD
 * for --base. Opening and scanning the dump is session_open.c's; each analysis is its
 * own file.
 */
#include <stdlib.h>
#include <string.h>

#include "pyobj.h"
#include "session.h"
#include "session_int.h"
#include "util.h"

static bool always(const struct options *o)
{
	(void)o;
	return true;
}

/* The session's own rows: the counters' sums, and the inputs others read. */
static void *counts_apply(struct session *s)
{
	report_count(&s->r, &s->scan);
	return NULL;
}

static const struct analysis counts_analysis = {
	"counts", IN_COUNTERS, IN_SUMS, 0, always, counts_apply, NULL, NULL
};

static void *alloc_apply(struct session *s)
{
	alloc_open(&s->alloc, &s->img, s->sym, &s->scan.list, s->o->sysroot);
	return NULL;
}

static const struct analysis alloc_analysis = {
	"allocator", IN_LIST | IN_LIST_ORDER, IN_CHUNKS | IN_NONROOT, 0, NULL, alloc_apply, NULL,
	NULL
};

/* Python's collector links its objects in lists: the words are no ownership */
static bool python_bookkeeping(void *ctx, uint64_t user, uint64_t size, uint64_t *lo,
			       uint64_t *hi)
{
	struct pyobj_info pi;

	if (!pyobj_block(ctx, user, size, &pi) || pi.gc_lo == pi.gc_hi)
		return false;
	*lo = pi.gc_lo;
	*hi = pi.gc_hi;
	return true;
}

static void *graph_apply(struct session *s)
{
	struct pyobj *py = pyobj_open_image(&s->img, s->o->sysroot);
	struct graph_runtime rt = { python_bookkeeping, py };

	s->graph = graph_build(&s->img, &s->scan, &s->alloc, py ? &rt : NULL);
	pyobj_close(py);
	return NULL;
}

static const struct analysis graph_analysis = {	/* it sorts the list by address */
	"graph", IN_LIST | IN_PAGES | IN_NONROOT | IN_UNTAGGED, IN_GRAPH | IN_DOMINATORS, IN_LIST_ORDER,
	NULL, graph_apply, NULL, NULL
};

extern const struct analysis untagged_analysis, timeline_analysis, ages_analysis, memory_analysis,
	leaks_analysis, retained_analysis, lifetimes_analysis, why_analysis, by_analysis,
	types_analysis, types_stacks_analysis, types_retained_analysis, types_focus_analysis;

/* Every analysis, once. The order is the sections' in the report (the timeline's last:
 * text draws it after the summary), and the order of rows whose needs leave it open. */
static const struct analysis *const analyses[] = {
	&counts_analysis,
	&alloc_analysis,
	&untagged_analysis,
	&types_focus_analysis,
	&graph_analysis,
	&leaks_analysis,
	&ages_analysis,
	&memory_analysis,
	&lifetimes_analysis,
	&retained_analysis,
	&why_analysis,
	&by_analysis,
	&types_analysis,
	&types_stacks_analysis,
	&types_retained_analysis,
	&timeline_analysis,
};
#define N_ANALYSES (sizeof(analyses) / sizeof(analyses[0]))
_Static_assert(N_ANALYSES <= sizeof(((struct session *)0)->ran), "session.ran has a slot a row");

/* ---- inputs ---------------------------------------------------------------------- */

static void drop_list(struct session *s)
{
	free(s->scan.list.v);
	s->scan.list = (struct scan_blocks){ 0 };
}

static void drop_chunks(struct session *s)
{
	alloc_drop_chunks(&s->alloc);
}

static void drop_nonroot(struct session *s)
{
	alloc_drop_nonroot(&s->alloc);
}

static void drop_graph(struct session *s)
{
	graph_free(s->graph);
	s->graph = NULL;
}

/*
 * The inputs that take memory, and how each is let go: on a heap of small blocks the
 * block list (60 bytes a block and more), the chunks and the graph are most of the
 * analyzer's memory, and symbolization's comes after them.
 */
static const struct input {
	unsigned in;
	void (*drop)(struct session *s);
} inputs[] = {
	{ IN_LIST, drop_list },
	{ IN_CHUNKS, drop_chunks },
	{ IN_NONROOT, drop_nonroot },
	{ IN_GRAPH, drop_graph },
};

/* ---- the order ------------------------------------------------------------------- */

/* The rows that run: those the options want, and those whose gifts they need. */
static void pick(const struct options *o, bool run[N_ANALYSES])
{
	bool more = true;

	for (size_t i = 0; i < N_ANALYSES; i++)
		run[i] = analyses[i]->wanted && analyses[i]->wanted(o);
	while (more) {
		unsigned needs = 0;

		more = false;
		for (size_t i = 0; i < N_ANALYSES; i++)
			needs |= run[i] ? analyses[i]->needs : 0;
		for (size_t i = 0; i < N_ANALYSES; i++)
			if (!run[i] && !analyses[i]->wanted && (analyses[i]->gives & needs))
				more = run[i] = true;
	}
}

/* Must row a run before row b: a gives what b needs, or needs what b spoils. */
static bool before(const struct analysis *a, const struct analysis *b)
{
	return a != b && ((a->gives & b->needs) || (a->needs & b->spoils));
}

/*
 * The rows to run, in an order every before() holds in: of the rows whose
 * predecessors have run, the first in the table. n gets how many; a cycle is a
 * mistake in the table, not in the input.
 */
static size_t order(const struct options *o, bool report_phase, size_t *out)
{
	bool run[N_ANALYSES], done[N_ANALYSES] = { false };
	size_t n = 0, want = 0;

	pick(o, run);
	for (size_t i = 0; i < N_ANALYSES; i++) {
		run[i] = run[i] && !(analyses[i]->needs & IN_REPORT) == !report_phase;
		want += run[i];
	}
	while (n < want) {
		size_t next = N_ANALYSES;

		for (size_t i = 0; i < N_ANALYSES && next == N_ANALYSES; i++) {
			bool ready = run[i] && !done[i];

			for (size_t j = 0; j < N_ANALYSES && ready; j++)
				ready = !(run[j] && !done[j] && before(analyses[j], analyses[i]));
			if (ready)
				next = i;
		}
		if (next == N_ANALYSES)
			die(EXIT_NO_REPORT, "the analyses' needs make a cycle (a bug)");
		done[next] = true;
		out[n++] = next;
	}
	return n;
}

/*
 * The inputs a lean snapshot (HP_NOTE_LEAN) cannot give: they read the heap's words or
 * the allocator's chunks, which it does not hold. A row that needs or gives one reads
 * the heap.
 */
#define IN_HEAP (IN_PAGES | IN_CHUNKS | IN_NONROOT | IN_GRAPH | IN_DOMINATORS | IN_UNTAGGED | \
		 IN_FIRSTS)

/* The rows the options ask for that read the heap, as the user asks for them. */
static const struct {
	const char *row, *asked;
} heap_rows[] = {
	{ "leaks", "--leaks" },
	{ "retained", "--metric=retained_space" },
	{ "memory", "--memory" },
	{ "why", "--why" },
	{ "types", "--by=type" },
	{ "types, stacks", "--by=type" },
	{ "types, retained", "--by=type" },
	{ "types focus", "--focus=type:/--ignore=type:" },
	{ "untagged", "--untagged" },
};

/* What the rows to run ask for that reads the heap (NULL: nothing). */
static const char *heap_asked(const size_t *rows, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const struct analysis *a = analyses[rows[k]];

		if (!((a->needs | a->gives) & IN_HEAP))
			continue;
		for (size_t i = 0; i < sizeof(heap_rows) / sizeof(heap_rows[0]); i++)
			if (!strcmp(heap_rows[i].row, a->name))
				return heap_rows[i].asked;
	}
	for (size_t k = 0; k < n; k++)	/* a row the table does not name: by its name */
		if ((analyses[rows[k]]->needs | analyses[rows[k]]->gives) & IN_HEAP)
			return analyses[rows[k]]->name;
	return NULL;
}

/* What the scan must keep for the rows of o: the union of their needs, where a row that
 * can count first words (IN_FIRSTS) does not ask for the list. */
static enum session_scan scan_kind(const size_t *rows, size_t n)
{
	unsigned needs = 0;

	for (size_t k = 0; k < n; k++) {
		unsigned in = analyses[rows[k]]->needs;

		needs |= in & IN_FIRSTS ? in & ~IN_LIST : in;
	}
	return needs & IN_PAGES ? SESSION_SCAN_GRAPH :
	       needs & IN_LIST ? SESSION_SCAN_LIST :
	       needs & IN_FIRSTS ? SESSION_SCAN_FIRSTS : SESSION_SCAN_STACKS;
}

/* Drop what no row from k on needs. */
static void drop_unread(struct session *s, const size_t *rows, size_t k, size_t n)
{
	unsigned needed = 0;

	for (; k < n; k++)
		needed |= analyses[rows[k]]->needs;
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
		if ((s->held & inputs[i].in) && !(needed & inputs[i].in)) {
			inputs[i].drop(s);
			s->held &= ~inputs[i].in;
		}
}

static void run_rows(struct session *s, const size_t *rows, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const struct analysis *a = analyses[rows[k]];

		s->state[rows[k]] = a->apply(s);
		s->ran[rows[k]] = true;
		s->held |= a->gives;
		drop_unread(s, rows, k + 1, n);
	}
}

/* ---- the report ------------------------------------------------------------------ */

/* The sections of the rows of one phase that ran, in table order. */
static void add_sections(struct session *s, struct report *r, bool report_phase)
{
	for (size_t i = 0; i < N_ANALYSES; i++)
		if (s->ran[i] && analyses[i]->section && s->state[i] &&
		    !(analyses[i]->needs & IN_REPORT) == !report_phase)
			report_add_section(r, analyses[i]->section, s->state[i]);
}

/*
 * Does a stack hold Python frames? Then stacks of different words can show the same
 * frames (--python=native or python leave some out; two records may name one line),
 * so the report is built whole and its equal stacks merged, as a view's are.
 */
static bool has_python(const struct scan_result *scan)
{
	size_t n;
	struct stack **all = stacks_list(&scan->stacks, &n);
	bool found = false;

	for (size_t i = 0; i < n && !found; i++)
		for (unsigned k = 0; k < all[i]->nframes && !found; k++)
			found = hp2_is_pyframe_word(all[i]->pcs[k]);
	free(all);
	return found;
}

/* One dump from memory to a symbolized report. */
static void run(struct session *s, const struct options *o, const struct report_opts *ro)
{
	size_t rows[N_ANALYSES], n = order(o, false, rows);
	struct report_opts with;

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->ro = *ro;
	session_open(s, scan_kind(rows, n), heap_asked(rows, n));
	if (s->untagged_dump && !o->untagged) {	/* its chunks are the blocks */
		s->own_o = xmalloc(sizeof(*s->own_o));
		*s->own_o = *o;
		s->own_o->untagged = true;
		s->o = o = s->own_o;
		n = order(o, false, rows);
	}
	s->held = s->scan.list.v || o->untagged ? IN_LIST : 0;
	drop_unread(s, rows, 0, n);
	run_rows(s, rows, n);
	with = s->ro;
	if ((s->python = has_python(&s->scan))) {
		with.top = 0;	/* the view merges and cuts */
		with.min_percent = 0;
	}
	report_build(&s->r, &s->scan, &s->img, s->sym, &with);
	add_sections(s, &s->r, false);
}

/* --base: the same program's other core, with NEW's symbol options; --peak-diff: the
 * same dump, now */
static struct options *base_options(const struct options *o)
{
	struct options *b = xmalloc(sizeof(*b));

	*b = *o;
	b->core = o->peak_diff ? o->core : o->base;
	b->peak = b->peak_diff = false;
	if (o->base_program)
		b->program = o->base_program;
	b->nraw = 0;
	b->nmodules = 0;
	b->have_load_base = false;
	return b;
}

/* --base: each section that can be differenced shows NEW - OLD in the difference. */
static void diff_sections(struct session *s)
{
	for (size_t i = 0; i < N_ANALYSES; i++) {
		const struct section_ops *ops = analyses[i]->section;

		if (!s->ran[i] || !s->base->ran[i] || !ops || !ops->diff || !s->state[i] ||
		    !s->base->state[i])
			continue;
		s->diff_state[i] = ops->diff(s->state[i], s->base->state[i]);
		for (size_t k = 0; k < s->diff.nsections; k++)
			if (s->diff.sections[k].data == s->state[i])
				s->diff.sections[k].data = s->diff_state[i];
	}
}

/* --base, --peak-diff: OLD's session, and NEW - OLD as the report */
static void difference(struct session *s, const struct options *o, const struct report_opts *ro)
{
	s->base = xmalloc(sizeof(*s->base));
	s->base_o = base_options(o);
	run(s->base, s->base_o, ro);
	views_apply(&s->r, &o->view, false);
	views_apply(&s->base->r, &o->view, false);
	diff_build(&s->diff, &s->r, &s->base->r);
	diff_sections(s);
	s->diff.peak = s->r.peak;
	views_cut(&s->diff, o->view.by != BY_NONE ? 0 : o->view.top, 0);
	s->final = &s->diff;
}

/* More than one CORE: every dump's stacks merged into one report (session_fleet.c). */
static void merged(struct session *s, const struct options *o, const struct report_opts *ro)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	s->ro = *ro;
	s->img.fd = -1;
	session_fleet(s, o, ro);
	s->final = &s->r;
	if (views_active(&o->view))
		views_apply(&s->r, &o->view, true);
}

const struct report *session_report(struct session *s, const struct options *o)
{
	struct report_opts ro = o->report;
	size_t rows[N_ANALYSES], n;

	if (o->base || o->peak_diff || views_active(&o->view)) {
		ro.top = 0;	/* the view or the difference cuts, later */
		ro.min_percent = 0;
	}
	if (o->ncores > 1) {
		merged(s, o, &ro);
	} else {
		run(s, o, &ro);
		s->final = &s->r;
		if (o->base || o->peak_diff)
			difference(s, o, &ro);
		else if (views_active(&o->view) || (s->python && !o->report.events))
			views_apply(&s->r, &o->view, true);
	}
	n = order(o, true, rows);
	run_rows(s, rows, n);
	add_sections(s, s->final, true);
	return s->final;
}

static void end(struct session *s)
{
	for (size_t i = 0; i < N_ANALYSES; i++)
		if (s->ran[i] && analyses[i]->free) {
			analyses[i]->free(s->state[i]);
			if (s->diff_state[i])
				analyses[i]->free(s->diff_state[i]);
		}
	report_free(&s->r);
	graph_free(s->graph);
	alloc_close(&s->alloc);
	sym_close(s->sym);
	scan_result_free(&s->scan);
	image_close(&s->img);
	free(s->source);
	free(s->own_o);
	session_fleet_free(s->fleet);
}

void session_end(struct session *s)
{
	if (s->base) {
		diff_free(&s->diff);
		end(s->base);
		free(s->base_o);
		free(s->base);
	}
	end(s);
}
