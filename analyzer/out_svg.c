/*
 * -f svg: the report as a self-contained interactive flame graph (flame.c draws it),
 * outermost frame at the bottom, the metric (live bytes by default) as widths. Stacks the writer cut start
 * from a "[truncated]" frame, as in the collapsed output.
 */
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "report.h"
#include "util.h"

static int write_svg(const struct report *r, FILE *f)
{
	struct flame_stack *v = xcalloc(r->nstacks ? r->nstacks : 1, sizeof(*v));
	const char ***names = xcalloc(r->nstacks ? r->nstacks : 1, sizeof(*names));
	char **made = NULL, title[600];
	size_t nmade = 0;
	int rc;

	for (size_t i = 0; i < r->nstacks; i++) {
		const struct report_stack *s = &r->stacks[i];
		size_t k = 0;

		names[i] = xcalloc((size_t)s->nframes + 1, sizeof(**names));
		if (s->flags & STACK_UNKNOWN)
			names[i][k++] = "[unknown stack]";
		else if (!s->nframes)
			names[i][k++] = "[no stack]";
		else if (s->flags & STACK_TRUNCATED)
			names[i][k++] = "[truncated]";
		for (unsigned j = s->nframes; j-- > 0;) {
			char buf[512];
			const char *n = report_frame_name(&s->frames[j], buf, sizeof(buf));

			if (n == buf) {
				made = xrealloc(made, (nmade + 1) * sizeof(*made));
				n = made[nmade++] = xstrdup(buf);
			}
			names[i][k++] = n;
		}
		v[i] = (struct flame_stack){ names[i], k, s->value };
	}
	snprintf(title, sizeof(title), "Live heap of %s (%s)%s", r->program, r->source,
		 r->sample_period ? ", sampled: estimates" : "");
	rc = flame_write(v, r->nstacks, report_metric_unit(r->metric), title, f);
	for (size_t i = 0; i < r->nstacks; i++)
		free(names[i]);
	for (size_t i = 0; i < nmade; i++)
		free(made[i]);
	free(made);
	free(names);
	free(v);
	return rc;
}

const struct out_format out_svg = { "svg", write_svg };
