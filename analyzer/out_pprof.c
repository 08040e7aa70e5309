/*
 * -f pprof: the report as pprof's profile.proto (pprof.c encodes). One Location per
 * distinct return address, its inline frames as Lines (innermost first); one Function
 * per name and file; one Mapping per module of the report's module table, with its
 * build-id, so that profiles of two runs merge and diff by module and offset. Sample
 * types inuse_space (bytes) and inuse_objects (blocks).
 */
#include <stdlib.h>
#include <string.h>

#include "pprof.h"
#include "report.h"
#include "sym.h"
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
	for (unsigned j = 0; j < n; j++) {
		GROW(b->lines, b->nlines, b->lines_cap);
		b->lines[b->nlines++] = (struct pprof_line){
			function_id(b, frame_name(b, &fr[j]), fr[j].file), fr[j].line };
		l->n_lines++;
	}
	return ++b->nlocs;
}

static int write_pprof(const struct report *r, FILE *f)
{
	/* the first two always; the alloc ones when the dump counted calls, time with them */
	static const struct pprof_value_type types[] = { { "inuse_space", "bytes" },
							  { "inuse_objects", "count" },
							  { "alloc_space", "bytes" },
							  { "alloc_objects", "count" },
							  { "alloc_time", "nanoseconds" } };
	/* retained_space last, when it is the metric: the others keep their indices */
	static const struct pprof_value_type retained = { "retained_space", "bytes" };
	struct pprof_value_type tv[6];
	size_t nc = r->have_counts ? (r->have_time ? 5 : 4) : 2;
	size_t nt = nc + (r->metric == METRIC_RETAINED_SPACE);
	struct builder b = { 0 };
	struct pprof_sample *samples = xcalloc(r->nstacks ? r->nstacks : 1, sizeof(*samples));
	struct pprof_mapping *maps = xcalloc(r->nmods ? r->nmods : 1, sizeof(*maps));
	uint64_t **ids = xcalloc(r->nstacks ? r->nstacks : 1, sizeof(*ids));
	int64_t *values = xcalloc(nt * (r->nstacks ? r->nstacks : 1), sizeof(*values));
	char comment[1024];
	struct pprof_profile p;
	int rc;

	for (size_t i = 0; i < r->nstacks; i++) {
		const struct report_stack *s = &r->stacks[i];
		size_t k = 0;

		ids[i] = xcalloc((size_t)s->nframes + 2, sizeof(**ids));
		if (s->flags & STACK_UNKNOWN)
			ids[i][k++] = location(&b, r, 0, NULL, 0, "[unknown stack]");
		else if (!s->nframes)
			ids[i][k++] = location(&b, r, 0, NULL, 0, "[no stack]");
		for (unsigned j = 0; j < s->nframes;) {
			unsigned e = j + 1;

			while (e < s->nframes && s->frames[e].pc == s->frames[j].pc)
				e++;	/* one pc's inline frames: one location */
			ids[i][k++] = location(&b, r, s->frames[j].pc, &s->frames[j], e - j, NULL);
			j = e;
		}
		if (s->flags & STACK_TRUNCATED)
			ids[i][k++] = location(&b, r, 0, NULL, 0, "[truncated]");
		values[nt * i] = (int64_t)s->bytes;
		values[nt * i + 1] = (int64_t)s->blocks;
		if (nc > 2) {
			values[nt * i + 2] = (int64_t)s->alloc_bytes;
			values[nt * i + 3] = (int64_t)s->alloc_calls;
		}
		if (nc > 4)
			values[nt * i + 4] = (int64_t)s->time_ns;
		if (nt > nc)
			values[nt * i + nc] = (int64_t)s->retained;
		samples[i] = (struct pprof_sample){ ids[i], k, &values[nt * i] };
	}
	for (size_t i = 0; i < b.nlocs; i++)	/* the lines array stopped moving */
		b.locs[i].lines = b.lines + (uintptr_t)b.locs[i].lines;
	for (size_t i = 0; i < r->nmods; i++)
		maps[i] = (struct pprof_mapping){ i + 1, r->mods[i].start, r->mods[i].end, 0,
						  r->mods[i].path,
						  r->mods[i].build_id[0] ? r->mods[i].build_id : NULL,
						  true, true, true, true };
	memcpy(tv, types, nc * sizeof(*tv));
	tv[nc] = retained;
	snprintf(comment, sizeof(comment), "heapprof-analyze %s: %s, %s%s", HP_VERSION, r->program,
		 r->source, r->sample_period ? " (sampled: figures are estimates)" : "");
	p = (struct pprof_profile){
		.sample_types = tv, .n_sample_types = nt,
		.samples = samples, .n_samples = r->nstacks,
		.locations = b.locs, .n_locations = b.nlocs,
		.functions = b.funcs, .n_functions = b.nfuncs,
		.mappings = maps, .n_mappings = r->nmods,
		.comment = comment,
		.period_type = r->sample_period ? types[0] : (struct pprof_value_type){ NULL, NULL },
		.period = (int64_t)r->sample_period,
		.default_sample_type = report_metric_name(r->metric),
	};
	rc = pprof_write(&p, f);
	for (size_t i = 0; i < r->nstacks; i++)
		free(ids[i]);
	for (size_t i = 0; i < b.nnames; i++)
		free(b.names[i]);
	free(b.names);
	free(ids);
	free(values);
	free(samples);
	free(maps);
	free(b.locs);
	free(b.lines);
	free(b.funcs);
	return rc;
}

const struct out_format out_pprof = { "pprof", write_pprof };
