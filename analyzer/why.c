/*
 * --why: why the blocks of stacks matching a regex (or the block holding an address)
 * are alive: graph_why.c's paths of pointers from named roots.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "why.h"
#include "util.h"

static bool why_wanted(const struct options *o)
{
	return o->why != NULL;
}

static void why_text(const struct report *r, const void *data, FILE *f)
{
	(void)r;
	fputs(data, f);
}

/* text: the whole report */
const struct section_ops why_section = {
	.name = "why", .gives = "paths of pointers", .alone = true, .text = why_text,
};

static void *why_run(struct session *s)
{
	char err[300], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		die(EXIT_NO_REPORT, "cannot trace --why: %s", strerror(errno));
	rc = graph_why(s->graph, &s->scan, s->sym, &s->keying, s->o->why, s->o->report.top, f,
		       err, sizeof(err));
	fclose(f);
	if (rc < 0)
		die(EXIT_USAGE, "%s", err);
	if (rc > 0)
		die(EXIT_NO_REPORT, "no live block matches '%s'", s->o->why);
	return text;
}

/* the blocks marked out are not picked; the roots are found again, past the allocator's
 * free chunks, and named: an untagged chunk is one */
const struct analysis why_analysis = {
	"why", IN_GRAPH | IN_DOMINATORS | IN_LIST | IN_MARKS | IN_KEYING | IN_CHUNKS | IN_NONROOT,
	0, 0, why_wanted, why_run, free, &why_section
};
