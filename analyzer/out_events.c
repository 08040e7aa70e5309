/*
 * --events: each thread's last allocator calls, oldest first, one per line: the thread,
 * the time since the process start, the sequence number, the call with its arguments
 * and result, and the function that made it; with --stacks, its whole stack below.
 */
#include <inttypes.h>
#include <stdio.h>

#include "report.h"

static void thread_tag(const struct report_ring *g, FILE *f)
{
	fprintf(f, "[thread %lu%s%s]", (unsigned long)g->tid, g->thread_name ? " " : "",
		g->thread_name ? g->thread_name : "");
}

static void call(const struct report_event *e, FILE *f)
{
	fprintf(f, "%s(", e->entry);
	if (e->arg0_is_pointer)
		fprintf(f, "0x%" PRIx64, e->arg[0]);
	else
		fprintf(f, "%" PRIu64, e->arg[0]);
	if (e->nargs > 1)
		fprintf(f, ", %" PRIu64, e->arg[1]);
	fputc(')', f);
	if (!e->has_result)
		return;
	if (!e->result_is_pointer)
		fprintf(f, " = %" PRIu64 " (error)", e->result);
	else if (e->result)
		fprintf(f, " = 0x%" PRIx64, e->result);
	else
		fputs(" = NULL", f);
}

static void event(const struct report *r, const struct report_ring *g,
		  const struct report_event *e, FILE *f)
{
	char buf[512];
	/* the ring's times are not checked: INT64_MIN has no int64_t negation */
	uint64_t t = e->time_ns < 0 ? -(uint64_t)e->time_ns : (uint64_t)e->time_ns;

	thread_tag(g, f);
	fprintf(f, " %c%" PRIu64 ".%06" PRIu64 " s #%" PRIu64 " ", e->time_ns < 0 ? '-' : '+',
		t / 1000000000, t % 1000000000 / 1000, e->seq);
	call(e, f);
	if (e->func)
		fprintf(f, " %s", e->func);
	else if (e->nframes)
		fprintf(f, " %s", report_frame_name(&e->frames[0], buf, sizeof(buf)));
	else if (e->site)
		fprintf(f, " [site %lu: no readable stack]", (unsigned long)e->site);
	fputc('\n', f);
	for (unsigned j = 0; j < e->nframes; j++) {
		const struct report_frame *fr = &e->frames[j];

		fprintf(f, "        0x%0*" PRIx64 "  %s", r->wsize * 2, fr->pc,
			report_frame_name(fr, buf, sizeof(buf)));
		if (fr->file)
			fprintf(f, "  %s:%d", fr->file, fr->line);
		fputc('\n', f);
	}
}

static int write_events(const struct report *r, FILE *f)
{
	for (size_t i = 0; i < r->nrings; i++) {
		const struct report_ring *g = &r->rings[i];

		fputs(i ? "\n# " : "# ", f);
		thread_tag(g, f);
		fprintf(f, ": the last %zu of %" PRIu64 " calls (ring of %lu)\n", g->nevents,
			g->written, (unsigned long)g->slots);
		for (size_t k = 0; k < g->nevents; k++)
			event(r, g, &g->events[k], f);
	}
	return ferror(f) ? -1 : 0;
}

const struct out_format out_events = { "events", write_events, 0, SYNTAX_NONE };
