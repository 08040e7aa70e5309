/*
 * Between report.c and report_events.c: the pieces of a report both build. Writers
 * include report.h only.
 */
#ifndef HP_REPORT_INT_H
#define HP_REPORT_INT_H

#include "report.h"

/* r->rings from the scan's event rings; with stacks, each event's site's stack too. */
void report_build_events(struct report *r, const struct scan_result *scan,
			 const struct image *img, struct sym *sym, const struct report_opts *o);
void report_free_events(struct report *r);

#endif
