/*
 * The churn workload: malloc/free/realloc over a live working set (default 100k
 * blocks), sizes 16..4096, from a handful of call sites; one operation in eight is a
 * realloc of the slot's block.
 *   churn [-t THREADS] [-n OPS] [-d] [-r MIN-MAX] [-w WORKING_SET] [-m MAX_SIZE] [-h]
 * -d makes each allocation 30..60 frames deep (the same as -r 30-60); -r MIN-MAX makes
 * it MIN..MAX frames of recursion deep; -m MAX_SIZE: sizes 16..MAX_SIZE; -h holds the
 * final working set of the main thread (for a snapshot) and prints "ready". Prints
 * ops/s on stderr. bench/run's main churn is `-w 50000 -r 8-24 -m 1024`.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, no_icf))	/* no_icf: -O2 folds identical sites */

static unsigned long ops = 10000000;
static unsigned nthreads = 1, working = 100000, max_size = 4096;
static unsigned depth_lo, depth_hi;	/* recursion per allocation; 0..0: none */
static int hold;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A handful of call sites, each its own function. */
NOINLINE static void *site_a(size_t n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }
NOINLINE static void *site_b(size_t n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }
NOINLINE static void *site_c(size_t n) { void *p = calloc(1, n); __asm__ volatile("" ::: "memory"); return p; }
NOINLINE static void *site_d(void *q, size_t n) { void *p = realloc(q, n); __asm__ volatile("" ::: "memory"); return p; }
NOINLINE static void *site_e(size_t n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }

static void *one_alloc(void **slot, uint64_t r)
{
	size_t n = 16 + (r >> 20) % (max_size - 15);

	switch (r % 8) {
	case 0: case 1: case 2: return site_a(n);
	case 3: case 4: return site_b(n);
	case 5: return site_c(n);
	case 6: return *slot ? site_d(*slot, n) : site_e(n);
	default: return site_e(n);
	}
}

/* Recursion of a depth chosen per allocation; the volatile keeps every frame. */
NOINLINE static void *descend(unsigned depth, void **slot, uint64_t r)
{
	void *volatile p;

	if (depth == 0)
		return one_alloc(slot, r);
	p = descend(depth - 1, slot, r);
	return p;
}

static void churn(void **slots, unsigned long n, uint64_t seed)
{
	for (unsigned long i = 0; i < n; i++) {
		uint64_t r = rnd(&seed);
		void **slot = &slots[(r >> 8) % working];
		void *p = depth_hi ? descend(depth_lo + (unsigned)(r >> 40) % (depth_hi - depth_lo + 1), slot, r)
				  : one_alloc(slot, r);

		if (p != *slot)
			free(r % 8 == 6 && *slot ? NULL : *slot);	/* realloc freed the old */
		*slot = p;
	}
}

static void *worker(void *arg)
{
	void **slots = calloc(working, sizeof(*slots));

	churn(slots, ops / nthreads, (uintptr_t)arg * 0x9E3779B97F4A7C15ull + 7);
	for (unsigned i = 0; i < working; i++)
		free(slots[i]);
	free(slots);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	struct timespec a, b;
	int c;

	while ((c = getopt(argc, argv, "t:n:dr:w:m:h")) != -1) {
		switch (c) {
		case 't': nthreads = (unsigned)atoi(optarg); break;
		case 'n': ops = strtoul(optarg, NULL, 10); break;
		case 'd': depth_lo = 30, depth_hi = 60; break;
		case 'r':
			if (sscanf(optarg, "%u-%u", &depth_lo, &depth_hi) != 2 || depth_lo > depth_hi ||
			    !depth_hi)
				return 2;
			break;
		case 'w': working = (unsigned)atoi(optarg); break;
		case 'm': max_size = (unsigned)atoi(optarg); break;
		case 'h': hold = 1; break;
		default: return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64 || !working || max_size < 16)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (hold) {
		void **slots = calloc(working, sizeof(*slots));

		churn(slots, ops, 1);
		printf("ready\n");
		fflush(stdout);
		pause();
	}
	for (unsigned i = 1; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	worker((void *)(uintptr_t)0);
	for (unsigned i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	fprintf(stderr, "%.1f Mops/s\n",
		(double)ops / ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9) / 1e6);
	return 0;
}
