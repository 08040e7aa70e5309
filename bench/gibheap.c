/*
 * The time-to-an-answer workload: holds about 1 GiB of live blocks made at 4,096
 * distinct call sites (each its own function), sizes log-uniform in 32..8192 (mean
 * ~1.5 KiB, so ~730k blocks), reached through 2..9 frames of recursion per site.
 *   gibheap [-m MIB] [-z SIZE] [-p] [-h] [-s N]
 * -z gives every block SIZE bytes instead (heaptrack's interpreter needs memory per
 * distinct size and stack, and cannot trace the default mix in 4 GiB). Blocks hold
 * 0x5a bytes; with -p each starts with a pointer to the block made before it, so no
 * two blocks start with the same word (a heap of linked nodes).
 * Prints "ready" and waits for a snapshot with -h; otherwise exits once the heap is
 * built (for tracers that report at exit). -s N: asks heapprof.so for N snapshots
 * (include/heapprof.h) before that, 5 s apart, and prints how long each call paused,
 * then times N plain fork()s of the process for comparison.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heapprof.h"

#define NOINLINE __attribute__((noinline, no_icf))	/* no_icf: -O2 folds identical sites */

/* 4^6 = 4096 sites: site_000000 .. site_333333, and a table of them. */
#define S1(n) NOINLINE static void *site_##n(size_t s) \
	{ void *p = malloc(s); __asm__ volatile("" ::: "memory"); return p; }
#define S4(n) S1(n##0) S1(n##1) S1(n##2) S1(n##3)
#define S16(n) S4(n##0) S4(n##1) S4(n##2) S4(n##3)
#define S64(n) S16(n##0) S16(n##1) S16(n##2) S16(n##3)
#define S256(n) S64(n##0) S64(n##1) S64(n##2) S64(n##3)
#define S1024(n) S256(n##0) S256(n##1) S256(n##2) S256(n##3)
S1024(0) S1024(1) S1024(2) S1024(3)

#define T1(n) site_##n,
#define T4(n) T1(n##0) T1(n##1) T1(n##2) T1(n##3)
#define T16(n) T4(n##0) T4(n##1) T4(n##2) T4(n##3)
#define T64(n) T16(n##0) T16(n##1) T16(n##2) T16(n##3)
#define T256(n) T64(n##0) T64(n##1) T64(n##2) T64(n##3)
#define T1024(n) T256(n##0) T256(n##1) T256(n##2) T256(n##3)
static void *(*const sites[])(size_t) = { T1024(0) T1024(1) T1024(2) T1024(3) };
#define N_SITES (sizeof(sites) / sizeof(sites[0]))

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

NOINLINE static void *descend(unsigned depth, unsigned site, size_t size)
{
	void *volatile p;

	if (depth == 0)
		return sites[site](size);
	p = descend(depth - 1, site, size);
	return p;
}

int main(int argc, char **argv)
{
	unsigned long long want = 1024ull << 20, live = 0, n = 0;
	uint64_t seed = 0x9E3779B97F4A7C15ull;
	size_t fixed = 0;
	int c, hold = 0, snaps = 0, linked = 0;
	void *prev = NULL;

	while ((c = getopt(argc, argv, "m:z:phs:")) != -1) {
		switch (c) {
		case 'm': want = strtoull(optarg, NULL, 10) << 20; break;
		case 'z': fixed = strtoul(optarg, NULL, 10); break;
		case 'p': linked = 1; break;
		case 'h': hold = 1; break;
		case 's': snaps = atoi(optarg); break;
		default: return 2;
		}
	}
	while (live < want) {
		uint64_t r = rnd(&seed);
		size_t size = fixed ? fixed : (size_t)(32.0 * pow(256.0, (double)(r >> 11) / 9007199254740992.0));
		unsigned site = (unsigned)(rnd(&seed) % N_SITES);
		void *p = descend(1 + site % 8, site, size);

		if (!p)
			return 1;
		memset(p, 0x5a, size);
		if (linked && prev)
			memcpy(p, &prev, sizeof(prev));
		prev = p;
		live += size;
		n++;
	}
	printf("%llu blocks, %llu live bytes, %zu call sites\n", n, live, N_SITES);
	for (int i = 0; i < snaps; i++) {
		struct timespec a, b;
		int rc;

		clock_gettime(CLOCK_MONOTONIC, &a);
		rc = heapprof_snapshot(NULL);
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("snapshot call %d: %d, paused %.1f ms\n", i + 1, rc,
		       (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
		fflush(stdout);
		sleep(5);
	}
	for (int i = 0; i < snaps; i++) {	/* what a plain fork of this process costs */
		struct timespec a, b;
		pid_t pid;

		clock_gettime(CLOCK_MONOTONIC, &a);
		pid = fork();
		if (pid == 0)
			_exit(0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		waitpid(pid, NULL, 0);
		printf("fork %d: parent paused %.1f ms\n", i + 1,
		       (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
	}
	if (hold) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();	/* a snapshot signal must not end it */
	}
	return 0;
}
