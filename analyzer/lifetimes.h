/*
 * --lifetimes: how long each stack's blocks live, from what a dump already holds: the
 * event rings (HEAPPROF_EVENTS) give the time from allocation to free of the blocks
 * made and freed in their window, and heaptrack's temporary allocations; the live
 * blocks' headers give their ages. The report attaches the figures to its stacks.
 */
#ifndef HP_LIFETIMES_H
#define HP_LIFETIMES_H

#include <stdio.h>

#include "report.h"
#include "scan.h"

struct image;
struct stack;

struct lifetimes {
	struct report_lifetimes sum;
	struct life_entry {
		const struct stack *stack;	/* in the scan's table */
		struct report_life life;
	} *v;				/* in the order first met */
	size_t n, cap;
	size_t *map, map_cap;		/* open-addressed by stack address: index + 1 */
};

/*
 * Read scan's event rings and live blocks (scan_image_blocks_with) into *lt, keyed by
 * the stacks of scan->stacks as the join made them (per thread, one region). Figures of
 * blocks whose stack is not in the table (no site, another region) are in lt->sum only.
 */
void lifetimes_apply(const struct image *img, const struct scan_result *scan,
		     struct lifetimes *lt);
/* s's figures, or NULL when nothing is known of its blocks. */
const struct report_life *lifetimes_of(const struct lifetimes *lt, const struct stack *s);
void lifetimes_free(struct lifetimes *lt);

/* The report's section: the summary's lines, and each stack's (text and JSON). */
extern const struct section_ops lifetimes_section;

#endif
