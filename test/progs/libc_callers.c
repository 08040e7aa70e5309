/*
 * End-to-end test program: blocks allocated inside libc on behalf of named functions,
 * for a libc without unwind tables (musl's libc.a), where only a stack scan finds who
 * called libc. dup_strings calls strdup N times (N x LEN bytes live), sort_things
 * has qsort call cmp_alloc, which allocates 777 bytes at its first call (a scan through
 * qsort's own frames, then back to the program's), and open_files opens /dev/null M
 * times (fopen's blocks, of a size libc chooses). Arguments: N LEN M. When done it
 * prints "ready" and waits for SIGUSR2, so the test can take a core.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static volatile size_t sink;
void *kept[1024];	/* not static: the blocks stay reachable */
static unsigned n_kept;

static void keep(void *p)
{
	if (!p || n_kept == sizeof(kept) / sizeof(kept[0]))
		abort();
	kept[n_kept++] = p;
	sink += (size_t)p;
}

NOINLINE static void dup_strings(unsigned n, size_t len)
{
	char buf[256];

	if (len == 0 || len > sizeof(buf))
		abort();
	memset(buf, 's', len - 1);
	buf[len - 1] = 0;
	for (unsigned i = 0; i < n; i++)
		keep(strdup(buf));
	sink++;
}

static int cmp_calls;

NOINLINE static int cmp_alloc(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (cmp_calls++ == 0)
		keep(malloc(777));
	return (x > y) - (x < y);
}

NOINLINE static void sort_things(void)
{
	int v[64];

	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof(v[0]), cmp_alloc);
	sink += (size_t)v[0];
}

NOINLINE static void open_files(unsigned m)
{
	for (unsigned i = 0; i < m; i++)
		keep(fopen("/dev/null", "r"));
	sink++;
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig;

	if (argc != 4) {
		fprintf(stderr, "usage: libc_callers N LEN M\n");
		return 64;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	dup_strings((unsigned)atoi(argv[1]), (size_t)atoi(argv[2]));
	sort_things();
	open_files((unsigned)atoi(argv[3]));
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
