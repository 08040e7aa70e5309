/*
 * Between report.c and report_events.c: the pieces of a report both build. Writers
 * include report.h only.
 */
#ifndef HP_REPORT_INT_H
#define HP_REPORT_INT_H

#include "report.h"

/* pcs[0..n-1] as frames, inlined functions expanded (short_names: names shortened, the
 * copies owned by r); *nout gets how many. Caller frees the array. */
struct report_frame *report_symbolize(struct report *r, const uint64_t *pcs, unsigned n,
				      struct sym *sym, bool short_names, unsigned *nout);

/* r->rings from the scan's event rings; with stacks, each event's site's stack too. */
void report_build_events(struct report *r, const struct scan_result *scan,
			 const struct image *img, struct sym *sym, const struct report_opts *o);
void report_free_events(struct report *r);

#endif
