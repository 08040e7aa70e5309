/*
 * chart.c: the round scale, the positions of the points and the peak marker, and the
 * SVG the flame graph gets with a timeline (argv[1]: written there for t4003 to check
 * with xmllint). Timeline: 0 at 0 s, 80 MiB in 5 blocks at 2.5 s (the peak), 15 MiB
 * in 2 blocks at 10 s (now). Then a timeline of 2^20 samples, a sawtooth with one
 * spike: the area has at most four points a pixel column, the spike's among them.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "flame.h"
#include "tap.h"

#define MiB (1024ULL * 1024)

static const struct chart_point tl[] = { { 0, 0, 0 }, { 2.5, 80 * MiB, 5 }, { 10, 15 * MiB, 2 } };
static const char *const s1[] = { "main", "site_a" };
static const struct flame_stack stacks[] = { { s1, 2, 15 * MiB } };

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

static char *svg(const struct flame_timeline *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f || flame_write_with(stacks, 1, "bytes", "t", t, f) < 0)
		return NULL;
	fclose(f);
	return buf;
}

static void round_up(uint64_t v, uint64_t want, uint64_t want_unit)
{
	uint64_t unit, got = chart_round_up(v, &unit);

	ok(got == want && unit == want_unit, "round up %llu: %llu in units of %llu (got %llu, %llu)",
	   (unsigned long long)v, (unsigned long long)want, (unsigned long long)want_unit,
	   (unsigned long long)got, (unsigned long long)unit);
}

/* 2^20 samples over 1090 pixels: the polygon's points, how many and the highest */
static void long_timeline(void)
{
	size_t n = 1u << 20, npts = 0;
	struct chart_point *p = calloc(n, sizeof(*p));
	char *buf = NULL, *at;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	double top = 1e9, x, y;
	int used;

	if (!p || !f)
		return;
	for (size_t i = 0; i < n; i++)	/* a sawtooth, and a spike at 777,777 */
		p[i] = (struct chart_point){ i * 0.004, (i % 1000) * 1000 + (i == 777777) * MiB,
					     1 };
	chart_write_svg(p, n, 777777, "bytes", 80, 54, 1090, 80, f);
	fclose(f);
	at = strstr(buf, "points=\"");
	at = at ? at + 8 : NULL;
	for (; at && sscanf(at, "%lf,%lf%n", &x, &y, &used) == 2; at += used) {
		npts++;
		top = y < top ? y : top;
	}
	ok(npts >= 2 * 1090 && npts <= 4 * 1091 + 2, "2^20 samples: %zu points, at most 4 a pixel",
	   npts);
	/* the spike: 777,000 + 1 MiB on a scale to 2 MiB */
	ok(fabs(top - (54 + 80 - 80.0 * (777000 + MiB) / (2 * MiB))) < 0.01,
	   "the spike is the area's top (%.2f)", top);
	ok(len < 200000, "the SVG of it: %zu bytes", len);
	free(buf);
	free(p);
}

int main(int argc, char **argv)
{
	struct chart_geom g;
	struct flame_timeline t = { tl, 3, 1, "bytes" };
	char *plain, *with, *none;

	round_up(0, 1, 1);
	round_up(1000, 1000, 1);
	round_up(1023, 1024, 1024);
	round_up(80 * MiB, 100 * MiB, MiB);
	round_up(15 * MiB, 20 * MiB, MiB);
	round_up(1010 * MiB, 1024 * MiB, 1024 * MiB);
	round_up(3 * 1024 + 1, 5 * 1024, 1024);

	chart_scale(tl, 3, 80, 54, 1090, 80, &g);
	ok(g.vmax == 100 * MiB && near(g.t0, 0) && near(g.t1, 10), "scale: 0-10 s, 0-100 MiB");
	ok(near(chart_x(&g, 2.5), 80 + 1090 * 0.25) && near(chart_y(&g, 80 * MiB), 54 + 80 - 64),
	   "the peak at a quarter of the width, 80%% of the height");
	ok(near(chart_x(&g, 10), 80 + 1090) && near(chart_y(&g, 0), 54 + 80),
	   "now at the right edge; 0 at the bottom");
	chart_scale(tl, 1, 80, 54, 1090, 80, &g);
	ok(near(g.t1, g.t0 + 1) && g.vmax == 1, "one sample at 0 bytes: a flat line, no division by 0");

	plain = svg(NULL);
	with = svg(&t);
	t.n = 0;
	none = svg(&t);
	ok(plain && none && !strcmp(plain, none), "no timeline: the picture as before");
	ok(with && strstr(with, "<g id=\"timeline\""), "the timeline is drawn");
	ok(with && strstr(with, "<title>peak: 83,886,080 bytes in 5 blocks at 2.500 s</title>"
			  "<circle cx=\"355.00\" cy=\"70.00\""), "the peak's marker: figures and place");
	ok(with && strstr(with, ">peak 80 MiB</text>") && strstr(with, ">now 15 MiB</text>"),
	   "peak and now labelled in MiB");
	ok(with && strstr(with, "<title>now: 15,728,640 bytes in 2 blocks at 10.000 s</title>"),
	   "now's marker");
	ok(with && strstr(with, ">100 MiB</text>") && strstr(with, ">10 s</text>"),
	   "axis labels with units");
	ok(with && plain && strstr(with, "height=\"222\"") && strstr(plain, "height=\"112\""),
	   "the band adds 110 pixels above the frames");
	if (argc > 1 && with) {
		FILE *f = fopen(argv[1], "w");

		ok(f && fputs(with, f) >= 0 && fclose(f) == 0, "wrote %s", argv[1]);
	}
	free(plain);
	free(with);
	free(none);
	long_timeline();
	return tap_done();
}
