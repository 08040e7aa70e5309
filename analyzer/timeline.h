/*
 * Memory over time from a dump's own records (include/heapprof_format.h): the timeline
 * ring, ended by the state at the snapshot, and the peak table, which --peak puts in
 * place of the live blocks. Reads through the image; knows nothing of writers.
 */
#ifndef HP_TIMELINE_H
#define HP_TIMELINE_H

#include <stdbool.h>

#include "report.h"
#include "scan.h"

struct image;

struct timeline_data {
	struct report_sample *v;
	size_t n;
	struct report_peak peak;
	bool have_peak;
	bool taken;		/* the last sample's time is the snapshot's (HP_NOTE_TIME) */
	bool chart;		/* --timeline: the text report draws it */
	bool all;		/* --timeline=all: its table lists every sample */
};

/*
 * The dump's timeline into t (none: t->n 0), its last sample the state at the snapshot
 * from scan's stacks and r's sums (report_count() first), at the snapshot's time when
 * the image has it (t->taken), else at the newest time the dump shows. A record that
 * is damaged, cut off or was being written is left out with one warning.
 */
void timeline_read(struct timeline_data *t, const struct report *r,
		   const struct scan_result *scan, const struct image *img);

/*
 * --peak: scan's stacks become those of the newest whole peak table, keyed and kept as
 * opts says (a region; never per thread), unless they hold more now than the table
 * does: then they are the peak, and stay. After timeline_read(). False, with scan
 * untouched, when the dump has none; *why then says so.
 */
bool timeline_peak_apply(struct timeline_data *t, struct scan_result *scan,
			 const struct image *img, const struct join_opts *opts, const char **why);

/* Point r at t (after report_build, which clears nothing of it). */
void timeline_attach(struct report *r, const struct timeline_data *t);

void timeline_free(struct timeline_data *t);

/* The report's section: with --timeline, a chart of block characters, the peak and the
 * snapshot marked, and the table of samples; its data is the timeline_data. */
extern const struct section_ops timeline_section;

#endif
