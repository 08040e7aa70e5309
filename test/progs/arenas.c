/*
 * glibc's arenas in known states, for t3007-memory.sh: a fragmented main arena, a
 * second arena from a thread, mmapped blocks, and blocks whose only pointers sit in
 * free chunks or in malloc's own metadata (all definitely lost, as memcheck says):
 *
 *   alloc_in_tcache 40, alloc_in_bin 56, alloc_in_fastbin 72: each pointed to only
 *     from a block freed into a tcache, an unsorted bin and a fastbin
 *   alloc_edge 1..16: each followed by a free chunk in a bin, whose header (a word of
 *     the block when size % 16 is 1..8) the bins' links point at
 *   alloc_below_top 8: the last chunk below the top, which main_arena.top points past
 *   alloc_in_slack 24: pointed to only from the slack after a block (past its size,
 *     in its chunk) that reused the chunk of a larger freed block which held it
 *
 * It prints glibc's mallinfo2() as "mallinfo2 arena=A uordblks=U fordblks=F hblks=N
 * hblkhd=H" (mallinfo.h), then "ready", and waits (for gcore). "arenas damage": the
 * size field of a free chunk is overwritten after mallinfo2 is printed. "arenas trim":
 * a forked copy also says what malloc_trim(0) released ("trim arena_delta=A
 * rss_delta=R"). "arenas memcheck": under valgrind, memcheck's leak check at that
 * point, then exit. "arenas abort": abort() there instead of waiting, for a core from
 * qemu-user (t5002-foreign-targets.sh).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mallinfo.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define HAVE_MEMCHECK 1
#endif
#endif

#define NOINLINE __attribute__((noinline))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

static void *volatile g_keep[4096];
static unsigned g_nkeep;
static char *g_frag;		/* a kept 1,000-byte block: free chunks follow it */
static pthread_barrier_t g_ready;

#define ALLOC(name, n) NOINLINE void *name(void) \
	{ void *p = malloc(n); memset(p, 0, n); ESCAPE(p); return p; }
ALLOC(alloc_in_tcache, 40)
ALLOC(alloc_in_bin, 56)
ALLOC(alloc_in_fastbin, 72)
ALLOC(alloc_below_top, 8)
ALLOC(alloc_in_slack, 24)
ALLOC(alloc_kept, 1000)
ALLOC(alloc_thread, 200)
ALLOC(alloc_big, 1 << 20)

NOINLINE void *alloc_edge(size_t n)
{
	void *p = malloc(n);

	memset(p, 0, n);
	ESCAPE(p);
	return p;
}

static void keep(void *p)
{
	g_keep[g_nkeep++] = p;
}

NOINLINE static void scrub(void)
{
	volatile char buf[16384];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = 0;
}

static void block_forever(void)
{
	for (;;)
		pause();
}

/* Another arena: a thread's first malloc makes one; half its blocks freed. */
static void *thread_main(void *arg)
{
	void *v[400];

	(void)arg;
	for (int i = 0; i < 400; i++)
		v[i] = alloc_thread();
	for (int i = 0; i < 400; i += 2)
		free(v[i]);
	for (int i = 1; i < 400; i += 2)
		keep(v[i]);
	pthread_barrier_wait(&g_ready);
	block_forever();
	return NULL;
}

/* 2,000 blocks of 1,000 bytes, 99 of each 100 freed: holes everywhere */
NOINLINE static void fragment(void)
{
	static void *v[2000];

	for (int i = 0; i < 2000; i++)
		v[i] = alloc_kept();
	for (int i = 0; i < 2000; i++)
		if (i % 100 == 50)
			keep(v[i]);
	g_frag = v[50];
	for (int i = 0; i < 2000; i++)
		if (i % 100 != 50) {
			free(v[i]);
			v[i] = NULL;	/* no stale pointer to what reuses it */
		}
}

static void **g_h3, *g_fill[7];

NOINLINE static void freed_holders(void)
{
	void **h1, **h2, **h4;

	h1 = malloc(100);		/* freed into the tcache: the first 16 bytes are its */
	h1[6] = alloc_in_tcache();
	free(h1);
	h2 = malloc(2000);		/* above the tcache's sizes: an unsorted bin */
	keep(malloc(16));		/* so that it does not join the top */
	h2[10] = alloc_in_bin();
	free(h2);
	g_h3 = malloc(40);		/* freed after the tcache of its size is full */
	for (int i = 0; i < 7; i++)
		g_fill[i] = malloc(40);
	g_h3[3] = alloc_in_fastbin();
	h4 = malloc(200);		/* with heapprof's header, a 224-byte chunk */
	h4[24] = alloc_in_slack();	/* its last word: the next chunk's prev_size */
	ESCAPE(h4);			/* a store before free() is dead to the compiler */
	free(h4);
	keep(malloc(185));		/* the same chunk again: that word is past its end */
}

/* Last: a large malloc would consolidate the fastbins */
NOINLINE static void into_fastbin(void)
{
	for (int i = 0; i < 7; i++)
		free(g_fill[i]);
	free(g_h3);
	g_h3 = NULL;
}

/* Each block followed by a free chunk; the last, alloc_below_top, by the top. */
NOINLINE static void edges(void)
{
	void *f[17];

	for (int s = 1; s <= 16; s++) {
		alloc_edge((size_t)s);
		f[s] = malloc(1100);	/* above the tcache's sizes */
	}
	alloc_below_top();
	for (int s = 1; s <= 16; s++)
		free(f[s]);
}

int main(int argc, char **argv)
{
	pthread_t t;

	printf("start\n");		/* stdout's buffer: allocated before the layout */
	fflush(stdout);
	pthread_barrier_init(&g_ready, NULL, 2);
	pthread_create(&t, NULL, thread_main, NULL);
	pthread_barrier_wait(&g_ready);
	for (int i = 0; i < 3; i++)
		keep(alloc_big());
	fragment();
	freed_holders();
	edges();
	into_fastbin();
	scrub();
	say_mallinfo2();
	if (argc > 1 && !strcmp(argv[1], "trim") && trim_in_copy("trim", NULL, NULL) < 0)
		return 1;
	if (argc > 1 && !strcmp(argv[1], "memcheck")) {
#ifdef HAVE_MEMCHECK
		VALGRIND_DO_LEAK_CHECK;
#endif
		_exit(0);
	}
	if (argc > 1 && !strcmp(argv[1], "damage")) {
		/* the free chunk after a kept block (whose chunk starts 32 bytes
		 * below heapprof's user pointer): its size field */
		uint64_t *size = (uint64_t *)(g_frag - 24);

		*(uint64_t *)(g_frag - 32 + (*size & ~7ul) + 8) = 0x4141414141414141;
	}
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();	/* a core written by qemu-user, which has no gcore */
	if (write(1, "ready\n", 6) != 6)
		return 1;
	block_forever();
	return 0;
}
