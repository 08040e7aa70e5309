/*
 * --by: the bottom-up table of the report, per function, file or module (views.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "by.h"
#include "util.h"

static bool by_wanted(const struct options *o)
{
	return o->view.by != BY_NONE && o->format == &out_text;
}

static void by_text(const struct report *r, const void *data, FILE *f)
{
	(void)r;
	fputs(data, f);
}

/* text: the whole report */
const struct section_ops by_section = {
	.name = "by", .gives = "a bottom-up table", .alone = true, .text = by_text,
};

static void *by_run(struct session *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		die(EXIT_NO_REPORT, "cannot make the --by table: %s", strerror(errno));
	views_write_by(s->final, s->o->view.by, s->o->by_top, f);
	fclose(f);
	return text;
}

/* of the report as it is written: viewed, and NEW - OLD with --base */
const struct analysis by_analysis = {
	"by", IN_REPORT, 0, 0, by_wanted, by_run, free, &by_section
};
