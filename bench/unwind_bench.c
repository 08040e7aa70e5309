/*
 * Nanoseconds per unwind_capture() in each mode at two stack depths, measured the way
 * the hooks call it. Links preload/unwind*.c and cfi_*.c; prints one table.
 *   usage: unwind_bench [iterations [mode]]
 * mode (cfi, fp, libgcc, cfi+replay, fp+replay) keeps that row alone, for an
 * instruction count of it: valgrind --tool=callgrind unwind_bench 2000 cfi+replay, then
 * callgrind_annotate --inclusive=yes: unwind_capture's line.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../include/heapprof_format.h"
#include "../preload/unwind.h"
#include "../preload/util.h"

#define NOIPA __attribute__((noipa))

static volatile unsigned sink;

void hp_warn(const char *a, const char *b, const char *c)
{
	fprintf(stderr, "heapprof: %s%s%s\n", a ? a : "", b ? b : "", c ? c : "");
}

/* like a hook: the preload builds those with frame pointers */
NOIPA __attribute__((optimize("no-omit-frame-pointer"))) static unsigned fake_malloc(uintptr_t *pcs,
										    unsigned max)
{
	struct unwind_start st;

	UNWIND_START(st);
	return unwind_capture(pcs, max, &st);
}

NOIPA static unsigned level(unsigned depth, uintptr_t *pcs, unsigned max)
{
	unsigned n = depth ? level(depth - 1, pcs, max) : fake_malloc(pcs, max);

	sink += n;
	return n;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Best of five runs: the figure least disturbed by the rest of the machine. */
static double ns_per_capture(unsigned depth, unsigned max, unsigned iters, unsigned *frames)
{
	uintptr_t pcs[HP_MAX_FRAMES];
	double best = 1e30;

	*frames = level(depth, pcs, max);	/* warms the rule cache */
	for (int run = 0; run < 5; run++) {
		double t0 = now_ns();

		for (unsigned i = 0; i < iters; i++)
			level(depth, pcs, max);
		double t = (now_ns() - t0) / iters;

		best = t < best ? t : best;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "cfi", "fp", "libgcc" };
	static const struct { unsigned depth, max; } cases[] = { { 6, 16 }, { 40, 16 }, { 40, 64 } };
	unsigned iters = argc > 1 ? (unsigned)atoi(argv[1]) : 200000, frames;
	const char *only = argc > 2 ? argv[2] : NULL;

	unwind_init("cfi", false);
	printf("%-10s", "mode");
	for (unsigned c = 0; c < 3; c++)
		printf("  depth %2u max %2u (frames, ns, ns/frame)", cases[c].depth, cases[c].max);
	printf("\n%-10s", "baseline");
	for (unsigned c = 0; c < 3; c++) {
		double t = ns_per_capture(cases[c].depth, 1, iters, &frames);

		printf("  %33.1f ns", t);
	}
	printf("\n");
	for (unsigned m = 0; m < 6; m++) {
		bool replay = m >= 3;
		const char *name = replay ? (m == 3 ? "cfi+replay" : "fp+replay") : modes[m];

		if (only && strcmp(only, name) != 0)
			continue;
		unwind_init(modes[m % 3], replay);
		if (strcmp(unwind_name(), modes[m % 3]) != 0 || (replay && m == 5))
			continue;	/* libgcc's walks are never replayed */
		printf("%-10s", name);
		for (unsigned c = 0; c < 3; c++) {
			unsigned it = m == 2 ? iters / 10 : iters;
			double t = ns_per_capture(cases[c].depth, cases[c].max, it, &frames);
			double base = ns_per_capture(cases[c].depth, 1, it, &(unsigned){ 0 });

			printf("  %20u %8.1f %7.2f", frames, t - base,
			       frames > 1 ? (t - base) / (frames - 1) : 0.0);
		}
		printf("\n");
	}
	return 0;
}
