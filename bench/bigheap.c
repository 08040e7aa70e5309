/*
 * The big-heap workload, for peak RSS: allocates N blocks (default 2,000,000), writes
 * every byte of each, frees nothing, prints the live bytes and exits (or, with -h,
 * prints "ready" and waits for a snapshot).
 *   bigheap [-n BLOCKS] [-s logu|unif|small|FIXED] [-D] [-h]
 * -s logu (default): sizes log-uniform in 16..4096 (median 256, mean ~740): many small
 *    blocks and a tail of large ones, the shape of measured heaps;
 * -s unif: uniform 16..4096 (mean ~2 KiB), the churn workload's sizes;
 * -s small: uniform 16..72 (mean 44), a heap of small objects (nodes, short strings);
 * -s 64: every block 64 bytes, the small-object worst case for a per-block header.
 * -D: each allocation is made 25..40 frames deep, through one of 300 recursion paths
 *    (a fixed sequence of four distinct functions per path), so the heap holds 300
 *    distinct whole stacks: what a program's object graph looks like to a profiler
 *    that keeps every frame.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, no_icf))	/* no_icf: -O2 folds identical sites */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define PATHS 300

/* Three call sites so the report has a little structure. */
NOINLINE static void *small_site(size_t n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }
NOINLINE static void *mid_site(size_t n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }
NOINLINE static void *big_site(size_t n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }

/*
 * -D: the path p (0..PATHS-1) fixes a depth of 20..35 levels (with main, the libc
 * frames under it and the two above: whole stacks of 25..40 frames) and, per level,
 * which of four functions makes the next call: two bits of a hash of p per level (past 32
 * levels, the low bits again). The volatile result keeps every frame.
 */
static void *leaf(size_t sz);
typedef void *step_fn(unsigned level, unsigned depth, uint64_t path, size_t sz);
static step_fn *const steps[4];

/* one frame per level: step K calls the step its path names for the next level */
#define STEP_FN(k) \
	NOINLINE static void *step##k(unsigned level, unsigned depth, uint64_t path, size_t sz) \
	{ \
		void *volatile p = level + 1 >= depth ? leaf(sz) \
			: steps[(path >> (2 * ((level + 1) % 32))) & 3](level + 1, depth, path, sz); \
		__asm__ volatile("" ::"r"(k) : "memory"); \
		return p; \
	}
STEP_FN(0)
STEP_FN(1)
STEP_FN(2)
STEP_FN(3)
static step_fn *const steps[4] = { step0, step1, step2, step3 };

static size_t pick(const char *dist, uint64_t *seed)
{
	double u = (double)(rnd(seed) >> 11) / 9007199254740992.0;	/* [0, 1) */

	if (strcmp(dist, "logu") == 0)
		return (size_t)(16.0 * pow(256.0, u));		/* 16 * 2^(8u): 16..4095 */
	if (strcmp(dist, "small") == 0)
		return 16 + (size_t)(u * 57);			/* 16..72 */
	if (strcmp(dist, "unif") == 0)
		return 16 + (size_t)(u * 4081);
	return (size_t)strtoul(dist, NULL, 10);
}

static void *leaf(size_t sz)
{
	return sz < 128 ? small_site(sz) : sz < 1024 ? mid_site(sz) : big_site(sz);
}

int main(int argc, char **argv)
{
	unsigned long n = 2000000, live = 0;
	const char *dist = "logu";
	uint64_t seed = 88172645463325252ull;
	int c, hold = 0, deep = 0;

	while ((c = getopt(argc, argv, "n:s:Dh")) != -1) {
		switch (c) {
		case 'n': n = strtoul(optarg, NULL, 10); break;
		case 's': dist = optarg; break;
		case 'D': deep = 1; break;
		case 'h': hold = 1; break;
		default: return 2;
		}
	}
	void **blocks = malloc(n * sizeof(*blocks));

	if (!blocks || pick(dist, &seed) == 0)
		return 2;
	for (unsigned long i = 0; i < n; i++) {
		size_t sz = pick(dist, &seed);
		void *p;

		if (deep) {
			unsigned k = (unsigned)(rnd(&seed) % PATHS);
			uint64_t path = (k + 1) * 0x9E3779B97F4A7C15ull;

			path ^= path >> 29;
			p = steps[path & 3](0, 20 + (unsigned)(path >> 59) % 16, path, sz);
		} else {
			p = leaf(sz);
		}

		if (!p)
			return 1;
		memset(p, (int)i, sz);	/* a live heap is a used heap: every page resident */
		blocks[i] = p;
		live += sz;
	}
	printf("%lu blocks, %lu live bytes\n", n, live);
	if (hold) {
		printf("ready\n");
		fflush(stdout);
		pause();
	}
	return 0;
}
