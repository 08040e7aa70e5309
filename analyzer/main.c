/*
 * heapprof-analyze: the command line (options.c) to a session (session.c), which reads
 * the dump and runs the analyses, to one writer (out_*.c), to the exit status.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "session.h"
#include "util.h"

static void write_report(const struct options *o, const struct report *r)
{
	FILE *f = stdout;

	if (o->output && !(f = fopen(o->output, "w")))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output, strerror(errno));
	if (o->format->write(r, f) < 0 || fflush(f) != 0 ||
	    (f != stdout && fclose(f) != 0))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output ? o->output : "stdout",
		    strerror(errno));
}

/* A format without a summary still says where the peak was. */
static void say_peak(const struct options *o, const struct report *r)
{
	char line[256];

	if (!r->peak || (o->format->can & OUT_SUMMARY) || util_quiet)
		return;
	report_peak_line(r->peak, line, sizeof(line));
	fprintf(stderr, "heapprof-analyze: peak: %s\n", line);
}

int main(int argc, char **argv)
{
	struct options o;
	struct session s;
	const struct report *r;
	int status;

	options_parse(&o, argc, argv);
	r = session_report(&s, &o);
	write_report(&o, r);
	say_peak(&o, r);
	status = s.status;
	session_end(&s);
	options_free(&o);
	return status;
}
