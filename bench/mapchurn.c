/*
 * mapchurn [-n PAIRS] [-k KEEP] [-s BYTES]: KEEP anonymous mappings held, then PAIRS
 * times an mmap of BYTES, one page touched, and its munmap, from a function of its
 * own; prints ns per pair (CLOCK_MONOTONIC). For bench/maps_cost.sh: what heapprof.so's
 * map table adds to each call, with a table of KEEP entries to search and move.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static __attribute__((noinline)) char *map_one(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mapchurn: mmap");
		exit(1);
	}
	p[0] = 1;
	return p;
}

int main(int argc, char **argv)
{
	long pairs = 200000, keep = 0, len = 65536;
	struct timespec a, b;
	int c;

	while ((c = getopt(argc, argv, "n:k:s:")) != -1) {
		switch (c) {
		case 'n': pairs = atol(optarg); break;
		case 'k': keep = atol(optarg); break;
		case 's': len = atol(optarg); break;
		default: return 64;
		}
	}
	for (long i = 0; i < keep; i++)	/* PROT_NONE apart: the kernel cannot merge them */
		map_one(4096), mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < pairs; i++)
		munmap(map_one((size_t)len), (size_t)len);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / pairs);
	return 0;
}
