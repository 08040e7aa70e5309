/*
 * The big-heap workload, for peak RSS: allocates N blocks (default 2,000,000), writes
 * every byte of each, frees nothing, prints the live bytes and exits (or, with -h,
 * prints "ready" and waits for a snapshot).
 *   bigheap [-n BLOCKS] [-s logu|unif|FIXED] [-h]
 * -s logu (default): sizes log-uniform in 16..4096 (median 256, mean ~740): many small
 *    blocks and a tail of large ones, the shape of measured heaps;
 * -s unif: uniform 16..4096 (mean ~2 KiB), the churn workload's sizes;
 * -s 64: every block 64 bytes, the small-object worst case for a per-block header.
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

/* Three call sites so the report has a little structure. */
NOINLINE static void *small_site(size_t n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }
NOINLINE static void *mid_site(size_t n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }
NOINLINE static void *big_site(size_t n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }

static size_t pick(const char *dist, uint64_t *seed)
{
	double u = (double)(rnd(seed) >> 11) / 9007199254740992.0;	/* [0, 1) */

	if (strcmp(dist, "logu") == 0)
		return (size_t)(16.0 * pow(256.0, u));		/* 16 * 2^(8u): 16..4095 */
	if (strcmp(dist, "unif") == 0)
		return 16 + (size_t)(u * 4081);
	return (size_t)strtoul(dist, NULL, 10);
}

int main(int argc, char **argv)
{
	unsigned long n = 2000000, live = 0;
	const char *dist = "logu";
	uint64_t seed = 88172645463325252ull;
	int c, hold = 0;

	while ((c = getopt(argc, argv, "n:s:h")) != -1) {
		switch (c) {
		case 'n': n = strtoul(optarg, NULL, 10); break;
		case 's': dist = optarg; break;
		case 'h': hold = 1; break;
		default: return 2;
		}
	}
	void **blocks = malloc(n * sizeof(*blocks));

	if (!blocks || pick(dist, &seed) == 0)
		return 2;
	for (unsigned long i = 0; i < n; i++) {
		size_t sz = pick(dist, &seed);
		void *p = sz < 128 ? small_site(sz) : sz < 1024 ? mid_site(sz) : big_site(sz);

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
