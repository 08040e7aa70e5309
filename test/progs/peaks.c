/*
 * Memory over time for the peak table and the timeline (t6007): "rise" climbs to 80 MiB
 * in rise(), frees it, then holds 10 MiB from hold_a() and 5 MiB from hold_b();
 * "ring MS" runs MS ms with a 40 MiB spike() a third of the way in; "threads" has 8
 * threads allocate 4 MiB each at once; "climb" holds 100 blocks of 100,000 bytes from
 * climb(), its last peak table taken at 9,900,000 bytes (1 MiB steps from 1 MiB). Each
 * then exits (HEAPPROF_AT_EXIT snapshots), or with PEAKS_END=abort aborts
 * (HEAPPROF_AT_CRASH), with PEAKS_END=wait says "ready" and waits for a core, with
 * PEAKS_END=sleep sleeps 2 s, allocating nothing, and exits.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define NTHREADS 8

static void *volatile held[128];
static void *volatile kept[NTHREADS][64];
static pthread_barrier_t start;

static __attribute__((noinline)) void rise(void)
{
	void *p[80];

	for (int i = 0; i < 80; i++)
		p[i] = malloc(MIB);
	for (int i = 0; i < 80; i++)
		free(p[i]);
}

static __attribute__((noinline)) void climb(void)
{
	for (int i = 0; i < 100; i++)
		held[i] = malloc(100000);
}

static __attribute__((noinline)) void hold_a(void)
{
	for (int i = 0; i < 10; i++)
		held[i] = malloc(MIB);
}

static __attribute__((noinline)) void hold_b(void)
{
	for (int i = 0; i < 5; i++)
		held[10 + i] = malloc(MIB);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static __attribute__((noinline)) void spike(void)
{
	void *p[40];

	for (int i = 0; i < 40; i++)
		p[i] = malloc(MIB);
	sleep_ms(1);	/* short: only the sample taken at its peak sees it */
	for (int i = 0; i < 40; i++)
		free(p[i]);
}

/* small blocks coming and going, a few ms apart, around the spike */
static __attribute__((noinline)) void churn(int ms)
{
	double t0 = now_ms();
	int i = 0;
	bool spiked = false;

	while (now_ms() - t0 < ms) {
		free(held[i % 64]);
		held[i % 64] = malloc(4096);
		i++;
		if (!spiked && now_ms() - t0 > ms / 3) {
			spike();
			spiked = true;
		}
		sleep_ms(1);
	}
}

static __attribute__((noinline)) void *worker(void *arg)
{
	long k = (long)arg;

	pthread_barrier_wait(&start);
	for (int i = 0; i < 64; i++)
		kept[k][i] = malloc(64 << 10);
	return NULL;
}

static void threads(void)
{
	pthread_t t[NTHREADS];

	pthread_barrier_init(&start, NULL, NTHREADS);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	for (int k = 0; k < NTHREADS; k++)	/* half of it goes: the peak was higher */
		for (int i = 0; i < 32; i++)
			free(kept[k][i]);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "rise";

	if (!strcmp(mode, "rise")) {
		rise();
		hold_a();
		hold_b();
	} else if (!strcmp(mode, "ring")) {
		churn(argc > 2 ? atoi(argv[2]) : 1000);
	} else if (!strcmp(mode, "threads")) {
		threads();
	} else if (!strcmp(mode, "climb")) {
		climb();
	} else {
		fprintf(stderr, "usage: peaks rise|ring [MS]|threads|climb\n");
		return 64;
	}
	mode = getenv("PEAKS_END");
	if (mode && !strcmp(mode, "abort"))
		abort();
	if (mode && !strcmp(mode, "sleep"))
		sleep_ms(2000);	/* the snapshot's time is not the last block's */
	if (mode && !strcmp(mode, "wait")) {
		if (write(1, "ready\n", 6) != 6)
			return 1;
		for (;;)
			pause();
	}
	return 0;
}
