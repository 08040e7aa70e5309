/*
 * A program started without heapprof, for `heapprof attach` (t6013). It allocates
 * blocks in every way first, prints "ready" and waits for SIGUSR1 while a second
 * thread allocates, reallocates and frees without pause. After the signal (heapprof
 * attached meanwhile), each site_* function allocates known bytes, the blocks from
 * before are checked, grown and freed, and it prints "done" (or "fail: why" lines)
 * and waits to be dumped. Live after attach: site_malloc 2000, site_calloc 1024,
 * site_realloc 777, site_memalign 300, site_aligned 256, site_strdup 100,
 * site_grow 5000. With --late=LIB it then loads LIB (liblate.so), has it free a
 * block of site_malloc's and keeps one of 640 bytes from its late_alloc. With --wrong-free it ends by freeing a new block through a pointer
 * to free taken before the attach (the libc's own): glibc must abort then, which
 * shows that a block given to the wrong free does not pass unnoticed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define N_PRE 400

static volatile size_t sink;
static int failures;

static void fail(const char *why, long i)
{
	printf("fail: %s (%ld)\n", why, i);
	fflush(stdout);
	failures++;
}

NOINLINE static void *site_malloc(size_t n) { void *p = malloc(n); sink += (size_t)p; return p; }
NOINLINE static void *site_calloc(size_t n) { void *p = calloc(n, 1); sink += (size_t)p; return p; }
NOINLINE static void *site_realloc(size_t n) { void *p = realloc(NULL, n); sink += (size_t)p; return p; }
NOINLINE static void *site_strdup(const char *s) { void *p = strdup(s); sink += (size_t)p; return p; }

NOINLINE static void *site_memalign(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, n) || (uintptr_t)p % 64)
		fail("posix_memalign", (long)n);
	sink += (size_t)p;
	return p;
}

NOINLINE static void *site_aligned(size_t n)
{
	void *p = aligned_alloc(256, n);

	if (!p || (uintptr_t)p % 256)
		fail("aligned_alloc", (long)n);
	sink += (size_t)p;
	return p;
}

NOINLINE static void *site_grow(size_t n)
{
	char *p = malloc(100);

	memset(p, 'g', 100);
	p = realloc(p, n);
	for (int i = 0; i < 100; i++)
		if (p[i] != 'g')
			fail("realloc lost the content of a new block", i);
	sink += (size_t)p;
	return p;
}

/* The second thread: blocks made and freed on both sides of the attach. */
static volatile int stop;

static void *churn(void *arg)
{
	void *ring[64] = { 0 };
	unsigned long n = 0;

	(void)arg;
	while (!stop) {
		unsigned k = (unsigned)(n % 64);
		size_t size = 16 + (n * 7919) % 3000;

		if (ring[k] && ((unsigned char *)ring[k])[0] != (unsigned char)k)
			fail("churn block changed", (long)k);
		ring[k] = n % 3 ? realloc(ring[k], size) : (free(ring[k]), malloc(size));
		if (!ring[k])
			fail("churn allocation failed", (long)size);
		else
			memset(ring[k], k, size);
		if (n++ % 1024 == 0)
			usleep(100);
	}
	for (unsigned k = 0; k < 64; k++)
		free(ring[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	static char *pre[N_PRE], *pre_c[50], *pre_a[20], *pre_s[20], *pre_big[2];
	void (*volatile early_free)(void *) = free;	/* the libc's, kept */
	int wrong_free = argc > 1 && !strcmp(argv[1], "--wrong-free");
	const char *late = argc > 1 && !strncmp(argv[1], "--late=", 7) ? argv[1] + 7 : NULL;
	char text[100];
	void *keep[16];
	pthread_t t;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int i = 0; i < N_PRE; i++)
		memset(pre[i] = malloc(200), i & 0xff, 200);
	for (int i = 0; i < 50; i++)
		pre_c[i] = calloc(1, 300);
	for (int i = 0; i < 20; i++)
		pre_a[i] = memalign(64, 500);
	for (int i = 0; i < 20; i++)
		pre_s[i] = strdup("a block strdup made before heapprof came");
	for (int i = 0; i < 2; i++)
		memset(pre_big[i] = malloc(1 << 20), 'B', 1 << 20);
	pthread_create(&t, NULL, churn, NULL);
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);

	memset(text, 's', 99);
	text[99] = 0;
	for (int i = 0; i < 3; i++)
		keep[i] = site_malloc(1000);
	free(keep[2]);
	keep[2] = site_calloc(512);
	keep[3] = site_calloc(512);
	for (int i = 0; i < 1024; i++)
		if (((char *)keep[2])[i % 512] || ((char *)keep[3])[i % 512])
			fail("calloc block not zero", i);
	keep[4] = site_realloc(777);
	keep[5] = site_memalign(300);
	keep[6] = site_aligned(256);
	keep[7] = site_strdup(text);
	keep[8] = site_grow(5000);
	if (malloc_usable_size(keep[0]) < 1000)
		fail("usable size of a new block", (long)malloc_usable_size(keep[0]));

	/* the blocks from before: read, sized, grown, freed */
	for (int i = 0; i < N_PRE; i++) {
		for (int j = 0; j < 200; j++)
			if ((unsigned char)pre[i][j] != (i & 0xff))
				fail("old block changed", i);
		if (malloc_usable_size(pre[i]) < 200)
			fail("usable size of an old block", i);
	}
	for (int i = 0; i < 100; i++) {
		pre[i] = realloc(pre[i], 400);
		for (int j = 0; j < 200; j++)
			if ((unsigned char)pre[i][j] != (i & 0xff))
				fail("realloc lost an old block's content", i);
	}
	for (int i = 0; i < N_PRE; i++)
		free(pre[i]);
	for (int i = 0; i < 50; i++)
		free(pre_c[i]);
	for (int i = 0; i < 20; i++)
		free(pre_a[i]), free(pre_s[i]);
	for (int i = 0; i < 2; i++)
		free(pre_big[i]);
	FILE *f = fopen("/proc/self/stat", "r");	/* the libc's malloc and free, inside */
	if (!f || fclose(f))
		fail("fopen", 0);
	stop = 1;
	pthread_join(t, NULL);
	if (late) {
		void *h = dlopen(late, RTLD_NOW);
		void *(*alloc)(size_t) = h ? (void *(*)(size_t))dlsym(h, "late_alloc") : NULL;
		void (*lfree)(void *) = h ? (void (*)(void *))dlsym(h, "late_free") : NULL;

		if (!alloc || !lfree) {
			fail(dlerror(), 0);
		} else {
			lfree(site_malloc(50));
			keep[9] = alloc(640);
		}
	}
	if (wrong_free) {
		printf("freeing a new block with the libc's free\n");
		fflush(stdout);
		early_free(site_malloc(10));
	}
	printf(failures ? "failed\n" : "done\n");
	fflush(stdout);
	for (;;)
		pause();
}
