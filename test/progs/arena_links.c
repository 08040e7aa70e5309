/*
 * glibc's arena list and heap chain with links the program wrote itself, for
 * t3007-glibc-arenas.sh: the analyzer must walk each arena and heap once, say where
 * the list or chain loops, and keep its memory bounded by the dump.
 *
 *   arena_links arena-self    a thread's arena whose next link is itself
 *   arena_links arena-pair    two threads' arenas whose links lead to each other
 *                             (main_arena -> B -> A -> B -> ...)
 *   arena_links arena-garbage a thread's arena whose next link points at a block of
 *                             0x41 bytes
 *   arena_links heap-self     a thread's arena of two heaps, the second's prev its own
 *                             address
 *   arena_links fastbin-self  no thread; a chunk in the main arena's fastbin whose
 *                             link leads to itself
 *
 * Each thread allocates 2,000 alloc_in_thread blocks of 100 bytes (arena-self: 100,000;
 * heap-self: 1,100 of 64 KiB, more than one 64 MiB heap holds) and frees every other
 * one (heap-self: none); then the program
 * prints mallinfo2() (mallinfo.h), which walks the arena list, writes the link, prints
 * "ready" and waits for gcore. No thread starts after the link is written: glibc would
 * walk the list then.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mallinfo.h"

#define NOINLINE __attribute__((noinline))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

#define HEAP_MAX ((uintptr_t)64 << 20)	/* glibc's HEAP_MAX_SIZE on 64-bit targets */
#define MS_NEXT 2160			/* struct malloc_state's next, 2.27 to 2.41 */
#define NBLOCKS 100000

static pthread_barrier_t g_ready;
static void *volatile g_keep[2][NBLOCKS];
static size_t g_size = 100, g_count = 2000;
static uintptr_t g_arena[2], g_last_heap[2];
static void *g_garbage;

NOINLINE void *alloc_in_thread(size_t n)
{
	void *p = malloc(n);

	memset(p, 0, n < 256 ? n : 256);
	ESCAPE(p);
	return p;
}

NOINLINE void *alloc_garbage(void)
{
	void *p = malloc(4096);

	memset(p, 0x41, 4096);
	ESCAPE(p);
	return p;
}

static void keep_one(void *p)
{
	g_keep[0][0] = p;
}

static void fail(const char *why)
{
	fprintf(stderr, "arena_links: %s\n", why);
	exit(1);
}

/*
 * The arena of a thread's block p, from the heap_info at the start of p's 64 MiB heap:
 * the first word is ar_ptr, and in an arena's first heap the malloc_state follows the
 * heap_info (32 bytes, 48 from 2.35).
 */
static uintptr_t arena_of(void *p, uintptr_t *heap)
{
	uintptr_t h = (uintptr_t)p & ~(HEAP_MAX - 1);

	*heap = h;
	return *(uintptr_t *)h;
}

static void *thread_main(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	uintptr_t first;
	void *p = NULL;

	for (size_t i = 0; i < g_count; i++) {
		p = alloc_in_thread(g_size);
		if (i % 2)
			g_keep[t][i] = p;
		else if (g_size <= 100)
			free(p);	/* holes in the heap; the big ones all stay */
		else
			g_keep[t][i] = p;
	}
	g_arena[t] = arena_of(p, &g_last_heap[t]);
	if (arena_of((void *)(g_arena[t] & ~(HEAP_MAX - 1)), &first) != g_arena[t] ||
	    (g_arena[t] - first != 32 && g_arena[t] - first != 48))
		fail("no heap_info with its arena after it: not glibc's layout");
	pthread_barrier_wait(&g_ready);
	for (;;)
		pause();
	return NULL;
}

static uintptr_t *next_of(uintptr_t arena)
{
	return (uintptr_t *)(arena + MS_NEXT);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned threads = !strcmp(mode, "arena-pair") ? 2 : !strcmp(mode, "fastbin-self") ? 0 : 1;
	void *fill[7], *fast = NULL;
	pthread_t t;

	printf("start\n");		/* stdout's buffer: allocated before the layout */
	fflush(stdout);
	if (!strcmp(mode, "arena-self"))
		g_count = NBLOCKS;	/* each walk of it again: 50,000 chunks more */
	if (!strcmp(mode, "heap-self")) {
		g_size = 64 << 10;	/* below the mmap threshold: in the arena's heaps */
		g_count = 1100;
	}
	pthread_barrier_init(&g_ready, NULL, threads + 1);
	for (unsigned i = 0; i < threads; i++) {
		pthread_create(&t, NULL, thread_main, (void *)(uintptr_t)i);
		if (threads > 1)	/* the second thread starts while the first holds its
					 * arena: a new arena, not the first's */
			usleep(20000);
	}
	pthread_barrier_wait(&g_ready);
	if (!strcmp(mode, "arena-garbage"))
		g_garbage = alloc_garbage();	/* before mallinfo2 counts the main arena */
	if (!strcmp(mode, "fastbin-self")) {	/* the tcache of its size full first */
		fast = alloc_in_thread(40);
		for (int i = 0; i < 7; i++)
			fill[i] = alloc_in_thread(40);
		keep_one(alloc_in_thread(40));	/* no merging with the top */
		for (int i = 0; i < 7; i++)
			free(fill[i]);
		free(fast);
	}
	say_mallinfo2();
	/* the list is main_arena -> the newest arena -> ... -> main_arena */
	if (!strcmp(mode, "arena-self")) {
		if (*next_of(*next_of(g_arena[0])) != g_arena[0])
			fail("the thread's arena is not main_arena's next");
		*next_of(g_arena[0]) = g_arena[0];
	} else if (!strcmp(mode, "arena-pair")) {
		if (g_arena[0] == g_arena[1] || *next_of(g_arena[1]) != g_arena[0])
			fail("the second thread's arena does not lead to the first's");
		*next_of(g_arena[0]) = g_arena[1];
	} else if (!strcmp(mode, "arena-garbage")) {
		*next_of(g_arena[0]) = (uintptr_t)g_garbage;
	} else if (!strcmp(mode, "heap-self")) {
		uintptr_t h = g_last_heap[0];

		if (h == (g_arena[0] & ~(HEAP_MAX - 1)) || *(uintptr_t *)(h + 8) == 0)
			fail("the thread's blocks did not take a second heap");
		*(uintptr_t *)(h + 8) = h;	/* heap_info.prev */
	} else if (fast) {
		/* heapprof's header takes the 16 bytes below the pointer it gave: malloc's
		 * own pointer is there, where a fastbin chunk keeps its link to the next
		 * chunk (NULL: the only one), mangled since 2.32 (pos >> 12 ^ ptr) */
		uintptr_t *mem = (uintptr_t *)((char *)fast - 16), pos = (uintptr_t)mem;
		uintptr_t chunk = pos - 16;

		if (*mem == pos >> 12)
			*mem = pos >> 12 ^ chunk;
		else if (*mem == 0)
			*mem = chunk;
		else
			fail("the freed block's link is not where glibc keeps it");
	} else {
		fail("usage: arena_links arena-self|arena-pair|arena-garbage|heap-self|"
		     "fastbin-self");
	}
	if (write(1, "ready\n", 6) != 6)
		return 1;
	for (;;)
		pause();
	return 0;
}
