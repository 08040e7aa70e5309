/*
 * Free memory pinned by a few live blocks, for t3013-pinned.sh: 40 MB of 1,000-byte
 * blocks from fill() in the main arena (8 MB in a thread's arena), 99 of every 100
 * freed; the survivors come from keep(). Prints mallinfo2() as "mallinfo2 arena=A
 * uordblks=U fordblks=F ..." (mallinfo.h), then what forked copies saw: "trim
 * arena_delta=A rss_delta=R" and malloc_info()'s XML after malloc_trim(0), then "freed
 * arena_delta=A" when the main arena's survivors were freed before malloc_trim(0).
 * Then "ready", and it waits (for gcore).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mallinfo.h"

#define NOINLINE __attribute__((noinline))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")
#define BLOCK 1000
#define MAIN_BLOCKS 40000
#define THREAD_BLOCKS 8000

static void *g_main[MAIN_BLOCKS / 100], *g_thread[THREAD_BLOCKS / 100];
static pthread_barrier_t g_ready;

NOINLINE void *fill(void)
{
	void *p = malloc(BLOCK);

	memset(p, 1, BLOCK);
	ESCAPE(p);
	return p;
}

NOINLINE void *keep(void)
{
	void *p = malloc(BLOCK);

	memset(p, 2, BLOCK);
	ESCAPE(p);
	return p;
}

/* n blocks, every hundredth (the 50th of each hundred) kept in out, the rest freed */
NOINLINE static void layout(void **out, int n)
{
	void **v = calloc((size_t)n, sizeof(*v));

	for (int i = 0; i < n; i++)
		v[i] = i % 100 == 50 ? keep() : fill();
	for (int i = 0; i < n; i++)
		if (i % 100 == 50)
			out[i / 100] = v[i];
		else
			free(v[i]);
	free(v);
}

static void *thread_main(void *arg)
{
	(void)arg;
	layout(g_thread, THREAD_BLOCKS);
	pthread_barrier_wait(&g_ready);
	for (;;)
		pause();
	return NULL;
}

/* the main arena's survivors, freed in a copy before malloc_trim(0) */
static void free_kept(void)
{
	for (size_t i = 0; i < sizeof(g_main) / sizeof(*g_main); i++)
		free(g_main[i]);
}

/* malloc_info()'s XML of the bins, in the copy after malloc_trim(0) */
static void bins_info(void)
{
	malloc_info(0, stdout);
	fflush(stdout);
}

int main(void)
{
	pthread_t t;

	printf("start\n");		/* stdout's buffer: allocated before the layout */
	fflush(stdout);
	pthread_barrier_init(&g_ready, NULL, 2);
	pthread_create(&t, NULL, thread_main, NULL);
	pthread_barrier_wait(&g_ready);
	layout(g_main, MAIN_BLOCKS);
	say_mallinfo2();
	if (trim_in_copy("trim", NULL, bins_info) < 0 || trim_in_copy("freed", free_kept, NULL) < 0)
		return 1;
	say("ready\n");
	for (;;)
		pause();
	return 0;
}
