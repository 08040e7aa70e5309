/*
 * A small area chart of a figure over time (the timeline of live bytes) as SVG
 * elements inside a larger picture: the scale and the positions, which the tests
 * check, and the drawing, with the peak and the last sample marked and the axes
 * labelled. Knows nothing of reports.
 */
#ifndef HP_CHART_H
#define HP_CHART_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct chart_point {
	double t;			/* seconds, non-decreasing */
	uint64_t v;			/* the figure (bytes) */
	uint64_t n;			/* a second figure for the tooltip (blocks) */
};

/* Where the plot goes, and what its axes end at. */
struct chart_geom {
	double x, y, w, h;		/* the plot box, in the picture's pixels */
	double t0, t1;			/* the time axis: first to last sample (t1 > t0) */
	uint64_t vmax;			/* the value axis: a round figure >= the largest */
	uint64_t vunit;			/* 1, 1024, 1024^2, ...: the unit of its labels */
};

/* The smallest round figure (1, 2 or 5 times a power of ten, of 1024^k units) >= v;
 * *unit gets the 1024^k. v 0: 1 (bytes). */
uint64_t chart_round_up(uint64_t v, uint64_t *unit);
/* The geometry of points p[0..n-1] (n >= 1) in the box x, y, w, h. */
void chart_scale(const struct chart_point *p, size_t n, double x, double y, double w, double h,
		 struct chart_geom *g);
/* A point's position in the picture. */
double chart_x(const struct chart_geom *g, double t);
double chart_y(const struct chart_geom *g, uint64_t v);

/*
 * Draw p[0..n-1] (n >= 1) in the box as one <g id="timeline">: the area (at most four
 * points a pixel column, whatever n), the axes with
 * their labels (unit "bytes": KiB, MiB, ...), a marker at p[peak] labelled "peak" and
 * one at the last point labelled "now", each with a <title> giving the exact figures.
 * Returns 0, or -1 if writing to f failed.
 */
int chart_write_svg(const struct chart_point *p, size_t n, size_t peak, const char *unit,
		    double x, double y, double w, double h, FILE *f);

#endif
