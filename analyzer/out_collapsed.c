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
	struct report_path p = { 0 };
	int rc = 0;

	for (size_t i = 0; i < r->nstacks && rc == 0; i++) {
		const struct report_stack *s = &r->stacks[i];

		/* kept for its frees (another thread's blocks freed on this one), a stack
		 * whose metric is 0 would be a line that adds nothing to a flame graph */
		if (!r->diff && !s->value)
			continue;
		report_decorate(r, s, &p);
		for (size_t j = 0; j < p.n && rc == 0; j++)
			if ((j && putc(';', f) == EOF) || put_name(p.items[j].name, f) < 0)
				rc = -1;
		if (r->diff)	/* --base: signed (flamegraph.pl skips negative lines) */
			fprintf(f, " %lld\n", (long long)(int64_t)s->value);
		else
			fprintf(f, " %llu\n", (unsigned long long)s->value);
	}
	report_path_free(&p);
	return rc < 0 || ferror(f) ? -1 : 0;
}

const struct out_format out_collapsed = { "collapsed", write_collapsed, OUT_SIGNED, SYNTAX_NONE };
