/*
 * -f svg: the report as a self-contained interactive flame graph (flame.c draws it),
 * outermost frame at the bottom, the metric (live bytes by default) as widths; the
 * frames as report_decorate() gives them (split roots, markers), as in collapsed; the
 * dump's timeline of live bytes above them, when it holds one.
 */
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "report.h"
#include "util.h"

/* The dump's timeline of live bytes (issue 21) as the chart's points; NULL when none. */
static const struct flame_timeline *timeline(const struct report *r, struct flame_timeline *tl)
{
	struct chart_point *p;

	if (!r->ntimeline)
		return NULL;
	p = xcalloc(r->ntimeline, sizeof(*p));
	for (size_t i = 0; i < r->ntimeline; i++)
		p[i] = (struct chart_point){ r->timeline[i].time_s, r->timeline[i].live_bytes,
					     r->timeline[i].live_blocks };
	*tl = (struct flame_timeline){ p, r->ntimeline, r->timeline_peak, "bytes" };
	return tl;
}

static int write_svg(const struct report *r, FILE *f)
{
	struct flame_stack *v = xcalloc(r->nstacks ? r->nstacks : 1, sizeof(*v));
	char ***names = xcalloc(r->nstacks ? r->nstacks : 1, sizeof(*names));
	struct report_path p = { 0 };
	struct flame_timeline tl = { 0 };
	char title[600];
	int rc;

	for (size_t i = 0; i < r->nstacks; i++) {
		report_decorate(r, &r->stacks[i], &p);
		names[i] = xcalloc(p.n ? p.n : 1, sizeof(**names));
		for (size_t j = 0; j < p.n; j++)
			names[i][j] = xstrdup(p.items[j].name);
		v[i] = (struct flame_stack){ (const char *const *)names[i], p.n, r->stacks[i].value };
	}
	report_path_free(&p);
	snprintf(title, sizeof(title), "Live heap of %s (%s)%s", r->program, r->source,
		 r->sample_period ? ", sampled: estimates" : "");
	rc = flame_write_with(v, r->nstacks, report_metric_unit(r->metric), title,
			      timeline(r, &tl), f);
	free((void *)tl.points);
	for (size_t i = 0; i < r->nstacks; i++) {
		for (size_t j = 0; j < v[i].n_frames; j++)
			free(names[i][j]);
		free(names[i]);
	}
	free(names);
	free(v);
	return rc;
}

const struct out_format out_svg = { "svg", write_svg, 0, SYNTAX_NONE };
