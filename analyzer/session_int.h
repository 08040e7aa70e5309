/*
 * Between session.c and session_open.c: how the dump is opened and scanned.
 */
#ifndef HP_SESSION_INT_H
#define HP_SESSION_INT_H

#include "analysis.h"

/* What the scan keeps beside the stacks: the rows' needs pick it. */
enum session_scan {
	SESSION_SCAN_STACKS,	/* the stacks alone */
	SESSION_SCAN_LIST,	/* and every block (IN_LIST) */
	SESSION_SCAN_GRAPH,	/* and the pages that may hold pointers (IN_PAGES) */
};

/*
 * Open the memory s->o names, scan it as kind says while the symbols are read, and
 * check that the dump holds what the options ask for. Fills s->img, source, scan, sym,
 * keying and the report's program and source. Exits (EXIT_NO_REPORT) with one line
 * when no report can be made; the warnings then wait until one is certain.
 */
void session_open(struct session *s, enum session_scan kind);

#endif
