/*
 * heapprof-analyze's command line: one table of options (--help and getopt_long are
 * made from it) and the rules between them as rows: what an option implies, what it
 * cannot go with, what it needs of the format, each format's defaults.
 */
#ifndef HP_OPTIONS_H
#define HP_OPTIONS_H

#include "analysis.h"

/*
 * Fill *o from argv, apply the implications and defaults, check every rule, compile the
 * views' regexes and read --suppressions. Exits: 0 after --help or --version, 64
 * (EXIT_USAGE) with a message and a hint on bad usage, 2 when --suppressions cannot be
 * read.
 */
void options_parse(struct options *o, int argc, char **argv);
/* What options_parse allocated. */
void options_free(struct options *o);

#endif
