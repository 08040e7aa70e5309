/*
 * Between session.c and session_open.c: how the dump is opened and scanned.
 */
#ifndef HP_SESSION_INT_H
#define HP_SESSION_INT_H

#include "analysis.h"

/* What the scan keeps beside the stacks: the rows' needs pick it. */
enum session_scan {
	SESSION_SCAN_STACKS,	/* the stacks alone */
	SESSION_SCAN_FIRSTS,	/* and every block counted by its first word (IN_FIRSTS) */
	SESSION_SCAN_LIST,	/* and every block (IN_LIST) */
	SESSION_SCAN_GRAPH,	/* and the pages that may hold pointers (IN_PAGES) */
};

/*
 * Open the memory s->o names, scan it as kind says while the symbols are read, and
 * check that the dump holds what the options ask for. Fills s->img, source, scan, sym,
 * keying and the report's program and source. Exits (EXIT_NO_REPORT) with one line
 * when no report can be made; the warnings then wait until one is certain. heap: what
 * the options ask for that reads the heap's contents, as the user wrote it (NULL:
 * nothing), which a lean snapshot cannot give.
 */
void session_open(struct session *s, enum session_scan kind, const char *heap);

/* Whether a dump scanned holds what the options ask for; exits with one line when not.
 * True when it holds no heapprof block (its allocator's chunks would be the blocks). */
bool session_check_dump(const struct options *o, const struct scan_result *s,
			const char *source);
/* What the dump lacked and the scan skipped, as warnings. */
void session_warn_dump(const struct image *img, const struct scan_result *s, const char *source);

/*
 * More than one CORE (session_fleet.c): read every dump, -j at a time, merge their
 * stacks by module and offset, symbolize once and build s->r with a "dumps" section
 * (each stack's dumps, median and p95 bytes). Exits (EXIT_NO_REPORT) with one line
 * when a dump cannot be read or the dumps are of different builds. s->fleet holds
 * what the report points into: session_fleet_free() after it is written.
 */
void session_fleet(struct session *s, const struct options *o, const struct report_opts *ro);
void session_fleet_free(struct fleet *f);

#endif
