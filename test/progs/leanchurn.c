/*
 * The registry of sampled blocks under load (t1017): THREADS threads each make ITERS
 * random calls of the malloc family (malloc, calloc, realloc, reallocarray,
 * posix_memalign, aligned_alloc, memalign, valloc, free) over slots of their own, 1 byte
 * to 64 KiB, each from a site of its own, and leave what is live when they end. With
 * "big", one block of 5 GiB more (a header with the size word: "big no" when the
 * system will not give it). Prints "ready", then allocates nothing more and waits.
 *   leanchurn THREADS ITERS [big]
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 512

static unsigned iters;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

__attribute__((noinline)) static void *site_malloc(size_t n) { void *p = malloc(n); KEEP(p); return p; }
__attribute__((noinline)) static void *site_calloc(size_t n) { void *p = calloc(1, n); KEEP(p); return p; }
__attribute__((noinline)) static void *site_realloc(void *q, size_t n) { void *p = realloc(q, n); KEEP(p); return p; }
__attribute__((noinline)) static void *site_reallocarray(void *q, size_t n) { void *p = reallocarray(q, 1, n); KEEP(p); return p; }
__attribute__((noinline)) static void *site_posix_memalign(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, n))
		return NULL;
	KEEP(p);
	return p;
}
__attribute__((noinline)) static void *site_aligned_alloc(size_t n) { void *p = aligned_alloc(256, (n + 255) & ~(size_t)255); KEEP(p); return p; }
__attribute__((noinline)) static void *site_memalign(size_t n) { void *p = memalign(128, n); KEEP(p); return p; }
__attribute__((noinline)) static void *site_valloc(size_t n) { void *p = valloc(n); KEEP(p); return p; }

static void *churn(void *arg)
{
	uint64_t s = (uintptr_t)arg * 0x9E3779B97F4A7C15ULL + 1;
	void *slot[SLOTS] = { 0 };

	for (unsigned i = 0; i < iters; i++) {
		unsigned k = (unsigned)(rnd(&s) % SLOTS);
		size_t n = 1 + (size_t)(rnd(&s) % (rnd(&s) % 8 ? 512 : 65536));
		void *p;

		switch (rnd(&s) % 10) {
		case 0: p = site_calloc(n); break;
		case 1: p = slot[k] ? site_realloc(slot[k], n) : NULL; if (p) slot[k] = NULL; break;
		case 2: p = slot[k] ? site_reallocarray(slot[k], n) : NULL; if (p) slot[k] = NULL; break;
		case 3: p = site_posix_memalign(n); break;
		case 4: p = site_aligned_alloc(n); break;
		case 5: p = site_memalign(n); break;
		case 6: p = site_valloc(n); break;
		case 7: free(slot[k]); slot[k] = NULL; p = NULL; break;
		default: p = site_malloc(n); break;
		}
		if (p) {
			free(slot[k]);
			slot[k] = p;
		}
	}
	return NULL;	/* the slots' blocks stay live */
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
	pthread_t t[64];
	void *big = NULL;

	iters = argc > 2 ? (unsigned)atoi(argv[2]) : 20000;
	if (n > 64)
		n = 64;
	for (unsigned i = 0; i < n; i++)
		pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1));
	for (unsigned i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (argc > 3 && !strcmp(argv[3], "big")) {
		big = site_malloc((size_t)5 << 30);
		printf("big %s\n", big ? "yes" : "no");
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
