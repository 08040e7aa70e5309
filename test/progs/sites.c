/*
 * End-to-end test program: each site_* function allocates a known number of blocks of
 * a known size in one way, so a report must show exact bytes per function. Arguments
 * are NAME=COUNTxSIZE, sleep=MS to pause, free-NAME=K to free the last K of them again, smash-NAME=K to
 * overwrite the header of the first K as a buggy program would, and flip-NAME=K to flip a
 * bit of the check value in the header of the first K. When done it prints
 * "ready" and waits for a signal, so the test can take a core. The argument "wait"
 * prints "ready" and waits for SIGUSR1 before the arguments after it: a core of each
 * phase (heapprof-analyze --base).
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define MAX_BLOCKS 100000

struct site {
	const char *name;
	void *(*alloc)(size_t size);
	void *blocks[MAX_BLOCKS];
	unsigned n;
};

/* Storing the result keeps each call a real call, not a tail jump that would hide
 * the site's frame. */
static volatile size_t sink;

NOINLINE static void *site_small(size_t size) { void *p = malloc(size); sink += (size_t)p; return p; }
NOINLINE static void *site_big(size_t size) { void *p = malloc(size); sink += (size_t)p; return p; }
NOINLINE static void *site_zeroed(size_t size) { void *p = calloc(size, 1); sink += (size_t)p; return p; }
NOINLINE static void *site_tmp(size_t size) { void *p = malloc(size); sink += (size_t)p; return p; }

NOINLINE static void *site_grow(size_t size)
{
	char *p = malloc(16);

	memset(p, 'g', 16);
	for (size_t s = 100; s < size; s *= 10)
		p = realloc(p, s);
	p = realloc(p, size);
	sink += (size_t)p;
	return p;
}

NOINLINE static void *site_aligned(size_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, 256, size) != 0)
		abort();
	sink += (size_t)p;
	return p;
}

NOINLINE static void *site_pagealigned(size_t size) { void *p = aligned_alloc(4096, size); sink += (size_t)p; return p; }

NOINLINE static void *site_dup(size_t size)
{
	char buf[4096];
	size_t n = size < sizeof(buf) ? size : sizeof(buf);
	char *p;

	memset(buf, 'd', n - 1);
	buf[n - 1] = 0;
	p = strdup(buf);
	sink += (size_t)p;
	return p;
}

/* always_inline: the report must still show it as a frame of its own. */
static inline __attribute__((always_inline)) void *inl_alloc(size_t size)
{
	void *p = malloc(size);

	sink += (size_t)p;
	return p;
}

NOINLINE static void *site_inl(size_t size) { void *p = inl_alloc(size); sink += (size_t)p; return p; }

extern void *lib_alloc(size_t size);	/* test/progs/libsite.c */

NOINLINE static void *site_lib(size_t size)
{
	void *p = lib_alloc(size);

	sink += (size_t)p;
	return p;
}

static size_t thread_size;
static unsigned thread_count;

NOINLINE static void *site_thread(size_t size) { void *p = malloc(size); sink += (size_t)p; return p; }

static void *thread_main(void *arg)
{
	struct site *s = arg;

	for (unsigned i = 0; i < thread_count; i++)
		s->blocks[__atomic_fetch_add(&s->n, 1, __ATOMIC_RELAXED)] = site_thread(thread_size);
	return NULL;
}

#define NTHREADS 8

#define SITE(n) { .name = #n, .alloc = site_##n }
static struct site sites[] = {
	SITE(small), SITE(big), SITE(zeroed), SITE(tmp), SITE(grow), SITE(aligned),
	SITE(pagealigned), SITE(dup), SITE(inl), SITE(lib), { .name = "thread" },
};

static struct site *find_site(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++)
		if (strlen(sites[i].name) == len && !strncmp(sites[i].name, name, len))
			return &sites[i];
	fprintf(stderr, "sites: unknown site '%.*s'\n", (int)len, name);
	exit(2);
}

static void run_threads(struct site *s, unsigned count, size_t size)
{
	pthread_t t[NTHREADS];

	thread_size = size;
	thread_count = count / NTHREADS;
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, thread_main, s);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
}

static void do_arg(const char *arg)
{
	const char *eq = strchr(arg, '=');
	unsigned count;
	size_t size;

	if (!strncmp(arg, "sleep=", 6)) {	/* sleep=MS: blocks after it are younger */
		usleep((useconds_t)atoi(arg + 6) * 1000);
		return;
	}
	if (!strcmp(arg, "wait")) {
		sigset_t set;
		int sig;

		printf("ready\n");
		fflush(stdout);
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigwait(&set, &sig);
		return;
	}

	if (!eq)
		exit(2);
	if (!strncmp(arg, "smash-", 6)) {
		/* heap corruption: the program overwrites K blocks' headers (the size, in
		 * format 2's 16-byte header on a little-endian target) */
		struct site *s = find_site(arg + 6, (size_t)(eq - arg - 6));
		unsigned k = (unsigned)atoi(eq + 1);

		for (unsigned i = 0; i < k && i < s->n; i++)
			memset((char *)s->blocks[i] - 16, 0x55, 4);
		return;
	}
	if (!strncmp(arg, "flip-", 5)) {
		/* a stray write that hits the check value alone (format 2's tag, bit 0, on a
		 * little-endian target): every other bit of the header stays as it was */
		struct site *s = find_site(arg + 5, (size_t)(eq - arg - 5));
		unsigned k = (unsigned)atoi(eq + 1);

		for (unsigned i = 0; i < k && i < s->n; i++)
			((unsigned char *)s->blocks[i] - 8)[0] ^= 1;
		return;
	}
	if (!strncmp(arg, "free-", 5)) {
		struct site *s = find_site(arg + 5, (size_t)(eq - arg - 5));
		unsigned k = (unsigned)atoi(eq + 1);

		for (unsigned i = 0; i < k && s->n; i++)
			free(s->blocks[--s->n]);
		return;
	}
	struct site *s = find_site(arg, (size_t)(eq - arg));

	if (sscanf(eq + 1, "%ux%zu", &count, &size) != 2 || count > MAX_BLOCKS - s->n)
		exit(2);
	if (!s->alloc) {
		run_threads(s, count, size);
		return;
	}
	for (unsigned i = 0; i < count; i++)
		s->blocks[s->n++] = s->alloc(size);
}

int main(int argc, char **argv)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* for "wait": sigwait() takes it */
	for (int i = 1; i < argc; i++)
		do_arg(argv[i]);
	printf("ready\n");
	fflush(stdout);
	if (getenv("SITES_EXIT"))
		return 0;
	if (getenv("SITES_ABORT"))
		abort();
	for (;;)
		pause();
}
