/*
 * Test program for snapshots and the control API (include/heapprof.h), built without
 * heapprof.so: it must run the same with and without the preload.
 *   snapapi api     blocks outside and inside a region, untagged ones from a thread
 *                   switched off, then heapprof_snapshot(NULL); prints "ready", waits
 *   snapapi peak    rises to 1,000,000 live bytes in site_peak, falls to 0, rises to
 *                   500,000; prints "ready", waits
 *   snapapi toggle  site_outside 3x1000, "ready", waits for a file "go" in the working
 *                   directory, site_region 4x250, "done", waits
 *   snapapi load N  4 threads allocate and free while the main thread asks for N
 *                   snapshots; prints a checksum of the threads' work, exits
 */
#include <pthread.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof.h"

#define NOINLINE __attribute__((noinline))

static volatile size_t sink;

NOINLINE static void *site_outside(size_t n) { void *p = malloc(n); sink += (size_t)p; return p; }
NOINLINE static void *site_region(size_t n) { void *p = malloc(n); sink += (size_t)p; return p; }
NOINLINE static void *site_untagged(size_t n) { void *p = malloc(n); sink += (size_t)p; return p; }
NOINLINE static void *site_peak(size_t n) { void *p = malloc(n); sink += (size_t)p; return p; }
NOINLINE static void *site_load(size_t n) { void *p = malloc(n); sink += (size_t)p; return p; }

static void *untagged_thread(void *arg)
{
	void *keep[5], *tmp[5];

	(void)arg;
	heapprof_thread_enable(0);
	for (int i = 0; i < 5; i++)
		tmp[i] = site_untagged(100);
	for (int i = 0; i < 5; i++)
		free(tmp[i]);	/* untagged blocks go back through heapprof's free */
	for (int i = 0; i < 5; i++)
		keep[i] = site_untagged(100);
	keep[0] = realloc(keep[0], 300);
	sink += (size_t)keep[0];
	heapprof_thread_enable(1);
	return NULL;
}

static int api(void)
{
	pthread_t t;
	int rc;

	for (int i = 0; i < 3; i++)
		site_outside(1000);
	heapprof_region_begin("inner");
	for (int i = 0; i < 4; i++)
		site_region(250);
	heapprof_region_end();
	pthread_create(&t, NULL, untagged_thread, NULL);
	pthread_join(t, NULL);
	rc = heapprof_snapshot(NULL);
	printf("snapshot %s\n", rc == 0 ? "0" : rc == ENOSYS ? "ENOSYS" : strerror(rc));
	return 0;
}

static int peak(void)
{
	void *b[10];

	for (int i = 0; i < 10; i++)
		b[i] = site_peak(100000);
	for (int i = 0; i < 10; i++)
		free(b[i]);
	for (int i = 0; i < 5; i++)
		b[i] = site_peak(100000);
	return 0;
}

static int toggle(void)
{
	for (int i = 0; i < 3; i++)
		site_outside(1000);
	printf("ready\n");
	fflush(stdout);
	while (access("go", F_OK) != 0)
		usleep(10000);
	for (int i = 0; i < 4; i++)
		site_region(250);
	printf("done\n");
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

static void *load_thread(void *arg)
{
	unsigned long sum = 0, seed = (unsigned long)(size_t)arg + 1;
	void *slot[64] = { 0 };

	for (unsigned long i = 0; i < 200000; i++) {
		unsigned k = (unsigned)(seed = seed * 6364136223846793005ul + 1) >> 3 & 63;
		size_t n = 16 + (seed >> 40) % 2000;

		free(slot[k]);
		slot[k] = site_load(n);
		memset(slot[k], (int)(i & 0xff), n);
		sum += ((unsigned char *)slot[k])[n - 1] + n;
	}
	for (int k = 0; k < 64; k++)
		free(slot[k]);
	return (void *)sum;
}

static int load(int n)
{
	pthread_t t[4];
	unsigned long total = 0;
	int failed = 0;

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, load_thread, (void *)i);
	for (int i = 0; i < n; i++) {
		int rc = heapprof_snapshot(NULL);

		failed += rc != 0 && rc != ENOSYS;
		usleep(20000);
	}
	for (int i = 0; i < 4; i++) {
		void *r;

		pthread_join(t[i], &r);
		total += (unsigned long)r;
	}
	printf("load %lu, %d snapshot calls failed\n", total, failed);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;

	/* SNAPAPI_NODUMP: a process that cannot be traced (nor gcore'd, unless by root) */
	if (getenv("SNAPAPI_NODUMP"))
		prctl(PR_SET_DUMPABLE, 0);
	if (argc >= 2 && !strcmp(argv[1], "toggle"))
		return toggle();
	if (argc >= 2 && !strcmp(argv[1], "api"))
		rc = api();
	else if (argc >= 2 && !strcmp(argv[1], "peak"))
		rc = peak();
	else if (argc >= 3 && !strcmp(argv[1], "load"))
		return load(atoi(argv[2]));
	if (rc)
		return rc;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
