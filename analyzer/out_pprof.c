/*
 * -f pprof: the report as pprof's profile.proto (pprof.c encodes). One Location per
 * distinct return address, its inline frames as Lines (innermost first); one Function
 * per name and file; one Mapping per module of the report's module table, with its
 * build-id, so that profiles of two runs merge and diff by module and offset. Sample
 * types: every metric the report holds, complete whatever --metric sorted by; the
 * report's roots (leak class, thread) as outermost frames and as labels, and --label's
 * on every sample. With --symbols=none: locations are addresses alone, no functions,
 * and one Mapping per mapping of a module's file, with its file offset and build-id,
 * for a platform to symbolize (the roots are labels only).
 */
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "pprof.h"
#include "report.h"
#include "util.h"

struct builder {
	struct pprof_location *locs;
	size_t nlocs, locs_cap;
	struct pprof_line *lines;	/* every location's lines, one array */
	size_t nlines, lines_cap;
	struct pprof_function *funcs;
	size_t nfuncs, funcs_cap;
	char **names;			/* names made here (module+offset) */
	size_t nnames;
};

#define GROW(v, n, cap) \
	do { if ((n) == (cap)) (v) = xrealloc((v), ((cap) = (cap) ? (cap) * 2 : 64) * sizeof(*(v))); } while (0)

static uint64_t function_id(struct builder *b, const char *name, const char *file)
{
	for (size_t i = b->nfuncs; i-- > 0;)	/* recent ones first: stacks share frames */
		if (!strcmp(b->funcs[i].name, name) &&
		    ((!file && !b->funcs[i].filename) ||
		     (file && b->funcs[i].filename && !strcmp(file, b->funcs[i].filename))))
			return b->funcs[i].id;
	GROW(b->funcs, b->nfuncs, b->funcs_cap);
	b->funcs[b->nfuncs] = (struct pprof_function){ b->nfuncs + 1, name, NULL, file, 0 };
	return ++b->nfuncs;
}

static uint64_t mapping_of(const struct report *r, uint64_t pc)
{
	if (r->nmaps) {
		for (size_t i = 0; i < r->nmaps; i++)
			if (pc >= r->maps[i].start && pc < r->maps[i].end)
				return i + 1;
		return 0;
	}
	for (size_t i = 0; i < r->nmods; i++)
		if (pc >= r->mods[i].start && pc < r->mods[i].end)
			return i + 1;
	return 0;
}

static const char *frame_name(struct builder *b, const struct report_frame *f)
{
	char buf[512];
	const char *n = report_frame_name(f, buf, sizeof(buf));

	if (n != buf)
		return n;
	b->names = xrealloc(b->names, (b->nnames + 1) * sizeof(*b->names));
	return b->names[b->nnames++] = xstrdup(buf);
}

/* A location for frames[0..n) (one pc, innermost first); lines point into b->lines
 * by index until the end, when the array stops moving. */
static uint64_t location(struct builder *b, const struct report *r, uint64_t pc,
			 const struct report_frame *fr, unsigned n, const char *synthetic)
{
	struct pprof_location *l;

	if (!synthetic)
		for (size_t i = b->nlocs; i-- > 0;)
			if (b->locs[i].address == pc && pc)
				return b->locs[i].id;
	GROW(b->locs, b->nlocs, b->locs_cap);
	l = &b->locs[b->nlocs];
	*l = (struct pprof_location){ b->nlocs + 1, synthetic ? 0 : mapping_of(r, pc), pc,
				      (const struct pprof_line *)(uintptr_t)b->nlines, 0 };
	if (synthetic) {
		GROW(b->lines, b->nlines, b->lines_cap);
		b->lines[b->nlines++] = (struct pprof_line){ function_id(b, synthetic, NULL), 0 };
		l->n_lines = 1;
	}
	for (unsigned j = 0; j < n && !r->no_symbols; j++) {
		GROW(b->lines, b->nlines, b->lines_cap);
		b->lines[b->nlines++] = (struct pprof_line){
			function_id(b, frame_name(b, &fr[j]), fr[j].file), fr[j].line };
		l->n_lines++;
	}
	return ++b->nlocs;
}

/* A Python frame's location: no address (its pc is a name record's, no code), one per
 * function, file and line, so that the same line of two records is one location. */
static uint64_t python_location(struct builder *b, const struct report_frame *fr)
{
	uint64_t fid = function_id(b, frame_name(b, fr), fr->file);

	for (size_t i = b->nlocs; i-- > 0;) {
		const struct pprof_line *l = &b->lines[(uintptr_t)b->locs[i].lines];

		if (!b->locs[i].address && b->locs[i].n_lines == 1 && l->function_id == fid &&
		    l->line == fr->line)
			return b->locs[i].id;
	}
	GROW(b->locs, b->nlocs, b->locs_cap);
	b->locs[b->nlocs] = (struct pprof_location){ b->nlocs + 1, 0, 0,
						     (const struct pprof_line *)(uintptr_t)b->nlines, 1 };
	GROW(b->lines, b->nlines, b->lines_cap);
	b->lines[b->nlines++] = (struct pprof_line){ fid, fr->line };
	return ++b->nlocs;
}

/* The sample types the report holds, each complete over the dump's stacks (the report
 * was built with every stack that has any figure): the live ones always; the counters'
 * when the dump counted calls and its stacks still carry them; time with them;
 * retained_space when it was computed. */
static size_t sample_types(const struct report *r, struct pprof_value_type *tv, int *which)
{
	static const struct pprof_value_type types[] = {
		[METRIC_INUSE_SPACE] = { "inuse_space", "bytes" },
		[METRIC_INUSE_OBJECTS] = { "inuse_objects", "count" },
		[METRIC_ALLOC_SPACE] = { "alloc_space", "bytes" },
		[METRIC_ALLOC_OBJECTS] = { "alloc_objects", "count" },
		[METRIC_ALLOC_TIME] = { "alloc_time", "nanoseconds" },
		[METRIC_RETAINED_SPACE] = { "retained_space", "bytes" } };
	size_t n = 0;

	for (int m = 0; m < METRIC_COUNT; m++) {
		bool counter = m == METRIC_ALLOC_SPACE || m == METRIC_ALLOC_OBJECTS;

		if ((counter && (!r->have_counts || r->regrouped)) ||
		    (m == METRIC_ALLOC_TIME && (!r->have_counts || !r->have_time || r->regrouped)) ||
		    (m == METRIC_RETAINED_SPACE && r->metric != m))
			continue;
		which[n] = m;
		tv[n++] = types[m];
	}
	return n;
}

static int64_t metric_value(const struct report_stack *s, int m)
{
	switch (m) {
	case METRIC_INUSE_OBJECTS: return (int64_t)s->blocks;
	case METRIC_ALLOC_SPACE: return (int64_t)s->alloc_bytes;
	case METRIC_ALLOC_OBJECTS: return (int64_t)s->alloc_calls;
	case METRIC_ALLOC_TIME: return (int64_t)s->time_ns;
	case METRIC_RETAINED_SPACE: return (int64_t)s->retained;
	default: return (int64_t)s->bytes;
	}
}

/* What the profile holds and what it does not, for pprof -comments and the reader. */
static void comment_for(const struct report *r, char *buf, size_t size)
{
	char a[32];
	int n = snprintf(buf, size, "heapprof-analyze %s: %s, %s%s", HP_VERSION, r->program,
			 r->source, r->sample_period ? " (sampled: figures are estimates)" : "");

	if (n > 0 && (size_t)n < size && r->lean_dumps)
		n += snprintf(buf + n, size - (size_t)n, "; lean snapshot%s: heapprof's records and "
			      "the sampled blocks' headers, no heap contents",
			      r->ndumps ? "s among the dumps" : "");
	if (n > 0 && (size_t)n < size && r->no_symbols)
		n += snprintf(buf + n, size - (size_t)n, "; --symbols=none: addresses, file "
			      "offsets and build-ids only, for the reader to symbolize");
	if (n > 0 && (size_t)n < size && r->nstacks < r->all_stacks)
		n += snprintf(buf + n, size - (size_t)n, "; cut by --top/--min-percent: %zu more "
			      "stacks hold %s of %s, and every sample type lacks their figures",
			      r->all_stacks - r->nstacks, fmt_thousands(r->rest_value, a),
			      report_metric_name(r->metric));
	if (n > 0 && (size_t)n < size && r->regrouped && r->have_counts)
		snprintf(buf + n, size - (size_t)n, "; stacks regrouped (--leaks, --older-than): "
			 "allocation counts are not split by class or age, so not here");
}

/* Locations for stack s, leaf first: its frames, one location per pc with its inline
 * frames as lines, then the roots and markers report_decorate() put before them. */
static size_t stack_locations(struct builder *b, const struct report *r,
			      const struct report_stack *s, const struct report_path *p,
			      uint64_t *ids)
{
	size_t k = 0;

	for (unsigned j = 0; j < s->nframes;) {
		unsigned e = j + 1;

		if (s->frames[j].python) {
			ids[k++] = python_location(b, &s->frames[j++]);
			continue;
		}
		while (e < s->nframes && !s->frames[e].python && s->frames[e].pc == s->frames[j].pc)
			e++;	/* one pc's inline frames: one location */
		ids[k++] = location(b, r, s->frames[j].pc, &s->frames[j], e - j, NULL);
		j = e;
	}
	for (size_t j = p->n; j-- > 0 && !r->no_symbols;) {
		const char *name = p->items[j].name;

		if (p->items[j].kind == ITEM_FRAME)
			continue;
		if (name == p->items[j].buf) {	/* reused by the next stack: the function keeps a copy */
			b->names = xrealloc(b->names, (b->nnames + 1) * sizeof(*b->names));
			name = b->names[b->nnames++] = xstrdup(name);
		}
		ids[k++] = location(b, r, 0, NULL, 0, name);
	}
	return k;
}

/* --symbols=none: a stack's marker ("[unknown stack]", "[truncated]") as a label,
 * since no location names it; its text without the brackets, kept by b. */
static const char *mark_of(struct builder *b, const struct report_path *p)
{
	for (size_t j = 0; j < p->n; j++)
		if (p->items[j].kind == ITEM_MARK) {
			const char *n = p->items[j].name;
			size_t len = strlen(n);
			char *v = xstrdup(n[0] == '[' ? n + 1 : n);

			if (len >= 2 && n[0] == '[' && n[len - 1] == ']')
				v[len - 2] = 0;
			b->names = xrealloc(b->names, (b->nnames + 1) * sizeof(*b->names));
			return b->names[b->nnames++] = v;
		}
	return NULL;
}

/* The mappings: the modules', or with --symbols=none each of their files' mappings
 * with its offset (what a platform's symbolizer takes), none claiming names. */
static struct pprof_mapping *mappings(const struct report *r, size_t *n)
{
	bool named = !r->no_symbols;
	struct pprof_mapping *maps;

	if (r->nmaps) {
		maps = xcalloc(r->nmaps, sizeof(*maps));
		for (size_t i = 0; i < r->nmaps; i++) {
			const struct report_module *m = &r->mods[r->maps[i].module];

			maps[i] = (struct pprof_mapping){ i + 1, r->maps[i].start, r->maps[i].end,
							  r->maps[i].offset, m->path,
							  m->build_id[0] ? m->build_id : NULL,
							  false, false, false, false };
		}
		*n = r->nmaps;
		return maps;
	}
	maps = xcalloc(r->nmods ? r->nmods : 1, sizeof(*maps));
	for (size_t i = 0; i < r->nmods; i++)
		maps[i] = (struct pprof_mapping){ i + 1, r->mods[i].start, r->mods[i].end, 0,
						  r->mods[i].path,
						  r->mods[i].build_id[0] ? r->mods[i].build_id : NULL,
						  named, named, named, named };
	*n = r->nmods;
	return maps;
}

/* --label's KEY=VALUE as key and value, split once for every sample to point at. */
static struct pprof_label *given_labels(const struct report *r)
{
	struct pprof_label *v = xcalloc(r->nlabels ? r->nlabels : 1, sizeof(*v));

	for (size_t i = 0; i < r->nlabels; i++) {
		const char *eq = strchr(r->labels[i], '=');
		char *key = xstrdup(r->labels[i]);

		key[eq - r->labels[i]] = 0;
		v[i] = (struct pprof_label){ key, eq + 1 };
	}
	return v;
}

static int write_pprof(const struct report *r, FILE *f)
{
	struct pprof_value_type tv[METRIC_COUNT];
	int which[METRIC_COUNT];
	size_t nt = sample_types(r, tv, which), ns = r->nstacks ? r->nstacks : 1, nmaps;
	size_t per = 3 + r->nlabels;	/* a sample's labels: class, thread, mark, --label */
	struct builder b = { 0 };
	struct report_path path = { 0 };
	struct pprof_sample *samples = xcalloc(ns, sizeof(*samples));
	struct pprof_mapping *maps = mappings(r, &nmaps);
	struct pprof_label *given = given_labels(r);
	uint64_t **ids = xcalloc(ns, sizeof(*ids));
	int64_t *values = xcalloc(nt * ns, sizeof(*values));
	struct pprof_label *labels = xcalloc(per * ns, sizeof(*labels));
	char **threads = xcalloc(ns, sizeof(*threads));
	char comment[2048];
	struct pprof_profile p;
	int rc;

	for (size_t i = 0; i < r->nstacks; i++) {
		const struct report_stack *s = &r->stacks[i];
		struct pprof_label *l = &labels[per * i];
		const char *mark;
		size_t nl = 0;

		report_decorate(r, s, &path);
		ids[i] = xcalloc(path.n + 1, sizeof(**ids));
		for (size_t t = 0; t < nt; t++)
			values[nt * i + t] = metric_value(s, which[t]);
		if (report_stack_class(r, s))
			l[nl++] = (struct pprof_label){ "leak_class", report_stack_class(r, s) };
		if (r->by_thread) {
			char buf[300];

			snprintf(buf, sizeof(buf), "%lu%s%s", (unsigned long)s->tid,
				 s->thread_name ? " " : "", s->thread_name ? s->thread_name : "");
			l[nl++] = (struct pprof_label){ "thread", threads[i] = xstrdup(buf) };
		}
		if (r->no_symbols && (mark = mark_of(&b, &path)))
			l[nl++] = (struct pprof_label){ "stack", mark };
		for (size_t j = 0; j < r->nlabels; j++)
			l[nl++] = given[j];
		samples[i] = (struct pprof_sample){ ids[i], stack_locations(&b, r, s, &path, ids[i]),
						    &values[nt * i], nl ? l : NULL, nl };
	}
	report_path_free(&path);
	for (size_t i = 0; i < b.nlocs; i++)	/* the lines array stopped moving */
		b.locs[i].lines = b.lines + (uintptr_t)b.locs[i].lines;
	comment_for(r, comment, sizeof(comment));
	p = (struct pprof_profile){
		.sample_types = tv, .n_sample_types = nt,
		.samples = samples, .n_samples = r->nstacks,
		.locations = b.locs, .n_locations = b.nlocs,
		.functions = b.funcs, .n_functions = b.nfuncs,
		.mappings = maps, .n_mappings = nmaps,
		.comment = comment,
		.period_type = r->sample_period ? tv[0] : (struct pprof_value_type){ NULL, NULL },
		.period = (int64_t)r->sample_period,
		.default_sample_type = report_metric_name(r->metric),
	};
	rc = pprof_write(&p, f);
	for (size_t i = 0; i < r->nstacks; i++) {
		free(ids[i]);
		free(threads[i]);
	}
	for (size_t i = 0; i < b.nnames; i++)
		free(b.names[i]);
	for (size_t i = 0; i < r->nlabels; i++)
		free((void *)given[i].key);
	free(given);
	free(b.names);
	free(threads);
	free(labels);
	free(ids);
	free(values);
	free(samples);
	free(maps);
	free(b.locs);
	free(b.lines);
	free(b.funcs);
	return rc;
}

/* every stack with any figure, so that each sample type is complete */
const struct out_format out_pprof = { "pprof", write_pprof, OUT_SIGNED | OUT_ALL, SYNTAX_NONE };
