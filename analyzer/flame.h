/*
 * A self-contained interactive SVG flame graph: stacks merged into a tree, each frame
 * a box as wide as its value, outermost at the bottom. Hover shows the frame's value
 * and percent of the total; click zooms into a frame; "Search" highlights frames
 * matching a regular expression and says what share of the total they hold. All of it
 * is inline (no scripts, fonts or styles from elsewhere). Knows nothing of reports.
 */
#ifndef HP_FLAME_H
#define HP_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "chart.h"

struct flame_stack {
	const char *const *frames;	/* n_frames names, outermost (main, _start) first */
	size_t n_frames;
	uint64_t value;			/* in unit; stacks with equal frames are added up */
};

/*
 * Write the SVG for n stacks to f. unit names the values in tooltips ("bytes",
 * "blocks", "calls"); title is the heading (NULL: "Flame Graph"). Frame names may hold
 * any bytes but NUL: XML's special characters are escaped, control characters
 * replaced. Frames narrower than 0.1 pixel are left out of the picture (their value
 * still counts in their parents'). Children are ordered by name, so the same stacks
 * in any order give the same bytes. Returns 0, or -1 if writing to f failed.
 */
int flame_write(const struct flame_stack *stacks, size_t n, const char *unit, const char *title,
		FILE *f);

/* A timeline to draw above the frames (chart.h): points[0..n-1], n >= 1, the peak's
 * index, the points' unit ("bytes"). */
struct flame_timeline {
	const struct chart_point *points;
	size_t n, peak;
	const char *unit;
};

/* flame_write(), with the timeline tl drawn between the title and the frames (NULL:
 * none, the same bytes as flame_write). */
int flame_write_with(const struct flame_stack *stacks, size_t n, const char *unit,
		     const char *title, const struct flame_timeline *tl, FILE *f);

#endif
