/*
 * Collapsed stacks, the input of flamegraph.pl and speedscope: one line per stack,
 * frames outermost first joined by ';', a space, the report's metric (live bytes unless
 * --metric says otherwise). Split by thread, the outermost frame is "[thread TID NAME]".
 * A stack the writer cut starts with a "[truncated]" frame; blocks without a readable
 * stack are "[unknown stack]". Under --leaks every stack starts with its class:
 * "[definitely lost]", ...
 */
#include <stdint.h>
#include <stdio.h>

#include "leaks.h"
#include "report.h"

/* ';' separates frames and a newline ends the record: neither may appear in a name. */
static int put_name(const char *s, FILE *f)
{
	for (; *s; s++)
		if (putc(*s == ';' ? ':' : *s == '\n' ? ' ' : *s, f) == EOF)
			return -1;
	return 0;
}

static int write_collapsed(const struct report *r, FILE *f)
{
	char buf[512];

	for (size_t i = 0; i < r->nstacks; i++) {
		const struct report_stack *s = &r->stacks[i];

		/* kept for its frees (another thread's blocks freed on this one), a stack
		 * whose metric is 0 would be a line that adds nothing to a flame graph */
		if (!r->diff && !s->value)
			continue;
		if (leaks_class_name(s->flags))	/* --leaks: the class is the root */
			fprintf(f, "[%s];", leaks_class_name(s->flags));
		if (r->by_thread) {
			fprintf(f, "[thread %lu", (unsigned long)s->tid);
			if (s->thread_name && (putc(' ', f) == EOF || put_name(s->thread_name, f) < 0))
				return -1;
			fputs("];", f);
		}
		/* a cut stack's outermost frame is not the root: say so rather than invent one */
		if (s->flags & STACK_UNKNOWN)
			fputs("[unknown stack]", f);
		else if (!s->nframes)
			fputs("[no stack]", f);
		else if (s->flags & STACK_TRUNCATED)
			fputs("[truncated];", f);
		for (unsigned j = s->nframes; j-- > 0;) {
			if (put_name(report_frame_name(&s->frames[j], buf, sizeof(buf)), f) < 0)
				return -1;
			if (j)
				putc(';', f);
		}
		if (r->diff)	/* --base: signed (flamegraph.pl skips negative lines) */
			fprintf(f, " %lld\n", (long long)(int64_t)s->value);
		else
			fprintf(f, " %llu\n", (unsigned long long)s->value);
	}
	return ferror(f) ? -1 : 0;
}

const struct out_format out_collapsed = { "collapsed", write_collapsed };
