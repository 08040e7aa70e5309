/* The timeline chart (see chart.h): a round scale, a polygon and two markers. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "chart.h"
#include "fmt.h"

uint64_t chart_round_up(uint64_t v, uint64_t *unit)
{
	static const uint64_t steps[] = { 1, 2, 5 };
	uint64_t u = 1, m;

	while (v / u >= 1024 && u < (1ULL << 60))
		u *= 1024;
	*unit = u;
	/* in units: the next 1, 2, 5, 10, 20, ... at or above v / u (never above 1000) */
	for (m = 1; m <= 1000; m *= 10)
		for (size_t i = 0; i < 3; i++)
			if (steps[i] * m * u >= v && steps[i] * m <= 1000)
				return steps[i] * m * u;
	/* v / u is within 1000..1023: one unit up, if there is one */
	if (u < (1ULL << 60)) {
		*unit = u * 1024;
		return u * 1024;
	}
	return v;
}

void chart_scale(const struct chart_point *p, size_t n, double x, double y, double w, double h,
		 struct chart_geom *g)
{
	uint64_t top = 0;

	for (size_t i = 0; i < n; i++)
		top = p[i].v > top ? p[i].v : top;
	*g = (struct chart_geom){ x, y, w, h, n ? p[0].t : 0, n ? p[n - 1].t : 0, 0, 1 };
	if (!(g->t1 > g->t0))
		g->t1 = g->t0 + 1;	/* one sample, or all at once: a flat line across */
	g->vmax = chart_round_up(top, &g->vunit);
}

double chart_x(const struct chart_geom *g, double t)
{
	return g->x + (t - g->t0) / (g->t1 - g->t0) * g->w;
}

double chart_y(const struct chart_geom *g, uint64_t v)
{
	return g->y + g->h - (double)v / (double)g->vmax * g->h;
}

/* v in the scale's unit: "80 MiB", "2.5 KiB", "512 bytes" */
static const char *in_unit(uint64_t v, uint64_t unit, const char *what, char *buf, size_t size)
{
	static const char *const names[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned k = 0;

	if (unit == 1 || strcmp(what, "bytes")) {
		snprintf(buf, size, "%" PRIu64 " %s", v, what);
		return buf;
	}
	while (unit >> (10 * (k + 2)) && k < 5)
		k++;
	snprintf(buf, size, "%.4g %s", (double)v / (double)unit, names[k]);
	return buf;
}

static void marker(const struct chart_geom *g, const struct chart_point *p, const char *what,
		   const char *unit, const char *colour, FILE *f)
{
	double x = chart_x(g, p->t), y = chart_y(g, p->v);
	char a[40], b[40], c[40];
	bool right = x > g->x + g->w * 0.75;	/* the label inside the picture */

	fprintf(f, "<g class=\"mark\"><title>%s: %s %s in %s blocks at %.3f s</title>"
		"<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\"/>"
		"<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" fill=\"%s\">%s %s</text></g>\n",
		what, fmt_thousands(p->v, a), unit, fmt_thousands(p->n, b), p->t, x, y, colour,
		right ? x - 6 : x + 6, y < g->y + 12 ? y + 12 : y - 4, right ? "end" : "start",
		colour, what, in_unit(p->v, g->vunit, unit, c, sizeof(c)));
}

/*
 * The area's outline: of each pixel column's points, the first, lowest, highest and
 * last, in time order, which draw what all of them would. A timeline of 2^20 samples
 * is then a few thousand points, not an attribute of 15 MB, past what XML parsers take
 * (libxml2 stops at 10 MB).
 */
static void outline(const struct chart_geom *g, const struct chart_point *p, size_t n, FILE *f)
{
	for (size_t i = 0, j; i < n; i = j) {
		double col = floor(chart_x(g, p[i].t));
		size_t lo = i, hi = i, k[4], nk = 0;

		for (j = i; j < n && floor(chart_x(g, p[j].t)) == col; j++) {
			lo = p[j].v < p[lo].v ? j : lo;
			hi = p[j].v > p[hi].v ? j : hi;
		}
		k[nk++] = i;
		if (lo < hi) {
			k[nk++] = lo;
			k[nk++] = hi;
		} else {
			k[nk++] = hi;
			k[nk++] = lo;
		}
		k[nk++] = j - 1;
		for (size_t m = 0; m < nk; m++) {
			const struct chart_point *q = &p[k[m]];

			if (!m || k[m] != k[m - 1])
				fprintf(f, " %.2f,%.2f", chart_x(g, q->t), chart_y(g, q->v));
		}
	}
}

int chart_write_svg(const struct chart_point *p, size_t n, size_t peak, const char *unit,
		    double x, double y, double w, double h, FILE *f)
{
	struct chart_geom g;
	char a[40];

	if (!n)
		return 0;
	chart_scale(p, n, x, y, w, h, &g);
	fprintf(f, "<g id=\"timeline\" font-size=\"11\">\n"
		"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#fff\" "
		"stroke=\"#bbb\"/>\n<polygon fill=\"#e8a85c\" fill-opacity=\"0.6\" "
		"stroke=\"#b0641c\" points=\"%.2f,%.2f", x, y, w, h, chart_x(&g, p[0].t), y + h);
	outline(&g, p, n, f);
	fprintf(f, " %.2f,%.2f\"/>\n", chart_x(&g, p[n - 1].t), y + h);
	/* the axes: 0 and the top of the scale, the first and last sample's time */
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n", x - 4, y + 9,
		in_unit(g.vmax, g.vunit, unit, a, sizeof(a)));
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">0</text>\n", x - 4, y + h);
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">%.3g s</text>\n", x, y + h + 12, g.t0);
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%.3g s</text>\n", x + w,
		y + h + 12, p[n - 1].t);
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">live %s over time</text>\n",
		x + w / 2, y + h + 12, unit);
	marker(&g, &p[peak < n ? peak : 0], "peak", unit, "#b00", f);
	marker(&g, &p[n - 1], "now", unit, "#05b", f);
	fputs("</g>\n", f);
	return ferror(f) ? -1 : 0;
}
