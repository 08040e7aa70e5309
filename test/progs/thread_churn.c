/*
 * Creates and joins N threads one after the other, each allocating from a few places,
 * and prints the process's address space (VmSize, KiB) before and after: heapprof.so's
 * per-thread memory (the replay log of stack walks, unwind.c) must go with its thread.
 *   thread_churn [N]
 * With SITES: each thread allocates and frees from SITES stacks of its own, frees a
 * block main made for it and leaves one that main frees, so that heapprof makes sites
 * for it of every kind; and the resident set (VmRSS, KiB) is printed after MARK threads
 * and after N. The program's own heap does not grow: what grows is heapprof's.
 *   thread_churn N SITES MARK
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;	/* keeps the compiler from pairing malloc with free away */
static int sites;

static void *work(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		sink = malloc(32 + (size_t)i);
		free(sink);
	}
	return NULL;
}

/* A block from depth d of a recursion: a stack of its own per depth. */
static __attribute__((noinline)) void *nest(int d)
{
	void *p;

	if (d > 0) {
		p = nest(d - 1);
		__asm__ volatile("" : : "r"(p) : "memory");	/* no tail call */
		return p;
	}
	return malloc(64);
}

static void *work_sites(void *handed)
{
	void *left;

	for (int d = 0; d < sites; d++)
		free(nest(d));
	free(handed);
	left = nest(sites);	/* main frees it */
	__asm__ volatile("" : : "r"(left) : "memory");	/* no tail call: work_sites stays */
	return left;
}

static long status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	size_t n = strlen(field);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && sscanf(line + n, ": %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	int mark = argc > 3 ? atoi(argv[3]) : 0;
	long before = status_kib("VmSize"), rss_mark = -1;

	sites = argc > 2 ? atoi(argv[2]) : 0;
	for (int i = 0; i < n; i++) {
		pthread_t t;
		void *left = NULL, *handed = sites ? malloc(48) : NULL;

		if (i == mark)
			rss_mark = status_kib("VmRSS");
		if (pthread_create(&t, NULL, sites ? work_sites : work, handed) ||
		    pthread_join(t, &left) != 0) {
			perror("thread_churn");
			return 1;
		}
		free(left);
	}
	printf("%d threads: VmSize %ld KiB before, %ld KiB after\n", n, before,
	       status_kib("VmSize"));
	if (sites)
		printf("VmRSS %ld KiB after %d threads, %ld KiB after %d\n", rss_mark, mark,
		       status_kib("VmRSS"), n);
	return 0;
}
