/*
 * Known resident memory (t6006): one malloc'd block, then an 8 MiB anonymous mapping
 * (no huge pages) of which nothing is touched, then 3 MiB are.
 *   resident snap A B   heapprof_snapshot(A) before the touch, (B) after; exits
 *   resident wait       touches, prints "ready", waits (for gcore)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heapprof.h"

#define MAPPED (8u << 20)
#define TOUCHED (3u << 20)

static void *volatile keep;

static __attribute__((noinline)) void *alloc_one(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static int snap(const char *path)
{
	int rc = heapprof_snapshot(path);

	if (!rc)
		rc = heapprof_snapshot_wait(10000);
	if (rc)
		fprintf(stderr, "snapshot %s: %s\n", path, strerror(rc));
	return rc;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *m;

	keep = alloc_one(100);
	m = mmap(NULL, MAPPED, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || argc < 2)
		return 1;
	madvise(m, MAPPED, MADV_NOHUGEPAGE);	/* one touch must be one page */
	if (!strcmp(argv[1], "snap") && argc == 4 && snap(argv[2]))
		return 1;
	for (unsigned i = 0; i < TOUCHED; i += (unsigned)page)
		m[i] = 1;
	if (!strcmp(argv[1], "snap"))
		return argc == 4 && !snap(argv[3]) ? 0 : 1;
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
