/*
 * Allocator stress under the preload: threads run random malloc, calloc, realloc,
 * reallocarray, free and aligned allocations and check that contents survive realloc,
 * alignments are met, malloc_usable_size covers the request and no two live blocks
 * overlap (each is filled with its own pattern, checked before it goes). With
 * STRESS_HEADERS=1 it also checks that every live block carries a header that
 * validates with the right size (heapprof_format.h). Exit 0 when all holds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof_format.h"

#define SLOTS 2000

struct slot {
	unsigned char *p;
	size_t size;
	unsigned char fill;
};

static int check_headers;
static unsigned iterations = 200000;
static volatile int failed;

static void fail(const char *what, size_t a, size_t b)
{
	fprintf(stderr, "stress: %s (%zu, %zu)\n", what, a, b);
	failed = 1;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void check_header(const struct slot *sl)
{
	const uint64_t *w = (const uint64_t *)sl->p - 2;	/* info, tag */
	uint64_t tag = w[1], size = (uint32_t)w[0];
	unsigned flags = (unsigned)(tag >> HP2_FLAGS_SHIFT) & HP2_FLAGS_MASK;

	if (flags & HP2_F_BIG)
		size = w[-1];
	if ((tag >> 48) != HP2_MAGIC16 || size != sl->size || (flags & ~HP2_F_KNOWN)) {
		fail("bad header", size, sl->size);
		return;
	}
	if (hp2_block_check((uintptr_t)sl->p, w[0], tag, size) != (tag & HP2_CHECK_MASK))
		fail("header check value", sl->size, 0);
	if ((w[0] >> 32) == 0)
		fail("no stack", sl->size, 0);
}

static void verify(const struct slot *sl)
{
	for (size_t i = 0; i < sl->size; i++)
		if (sl->p[i] != sl->fill) {
			fail("contents changed (overlap or bad realloc)", i, sl->size);
			return;
		}
	if (check_headers)
		check_header(sl);
}

static void fill(struct slot *sl, size_t from, uint64_t *seed)
{
	if (from == 0)
		sl->fill = (unsigned char)(rnd(seed) | 1);
	memset(sl->p + from, sl->fill, sl->size - from);
	if (malloc_usable_size(sl->p) < sl->size)
		fail("malloc_usable_size below request", malloc_usable_size(sl->p), sl->size);
}

static void new_block(struct slot *sl, uint64_t *seed)
{
	size_t size = rnd(seed) % 4096, align = (size_t)16 << (rnd(seed) % 9);
	void *p = NULL;

	if (rnd(seed) % 64 == 0)
		size = 100000 + rnd(seed) % 300000;	/* mmap'd by glibc */
	switch (rnd(seed) % 6) {
	case 0: p = malloc(size); align = 16; break;
	case 1: p = calloc(1, size); align = 16;
		for (size_t i = 0; i < size; i++)
			if (((unsigned char *)p)[i])
				fail("calloc not zero", i, size);
		break;
	case 2: if (posix_memalign(&p, align, size)) p = NULL; break;
	case 3: p = aligned_alloc(align, size); break;
	case 4: p = memalign(align, size); break;
	default: p = reallocarray(NULL, size, 1); align = 16; break;
	}
	if (!p) {
		fail("allocation failed", size, align);
		return;
	}
	if ((uintptr_t)p % align)
		fail("misaligned", (uintptr_t)p % align, align);
	sl->p = p;
	sl->size = size;
	fill(sl, 0, seed);
}

static void resize(struct slot *sl, uint64_t *seed)
{
	size_t size = rnd(seed) % 8192, keep = size < sl->size ? size : sl->size;
	unsigned char *q = realloc(sl->p, size);

	if (!q) {
		if (size == 0) {	/* glibc: realloc(p, 0) frees */
			sl->p = NULL;
			return;
		}
		fail("realloc failed", size, 0);
		return;
	}
	if ((uintptr_t)q % 16)
		fail("realloc misaligned", (uintptr_t)q % 16, 16);
	for (size_t i = 0; i < keep; i++)
		if (q[i] != sl->fill) {
			fail("realloc lost contents", i, keep);
			break;
		}
	sl->p = q;
	sl->size = size;
	fill(sl, keep, seed);
}

static void *worker(void *arg)
{
	uint64_t seed = (uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1;
	struct slot *slots = calloc(SLOTS, sizeof(*slots));

	for (unsigned it = 0; it < iterations && !failed; it++) {
		struct slot *sl = &slots[rnd(&seed) % SLOTS];

		if (!sl->p) {
			new_block(sl, &seed);
			continue;
		}
		verify(sl);
		if (rnd(&seed) % 3 == 0) {
			resize(sl, &seed);
		} else {
			free(sl->p);
			sl->p = NULL;
		}
	}
	for (unsigned i = 0; i < SLOTS; i++) {
		if (slots[i].p)
			verify(&slots[i]);
		free(slots[i].p);
	}
	free(slots);
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[64];

	check_headers = getenv("STRESS_HEADERS") != NULL;
	if (argc > 2)
		iterations = (unsigned)atoi(argv[2]);
	if (nthreads < 1 || nthreads > 64)
		return 2;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	/* the API corners every program may hit; volatile keeps gcc from judging them */
	volatile size_t half = SIZE_MAX / 2, huge = SIZE_MAX - 8;

	errno = 0;
	if (calloc(half, 4) || errno != ENOMEM)
		fail("calloc overflow not ENOMEM", errno, 0);
	if (reallocarray(NULL, half, 4))
		fail("reallocarray overflow", 0, 0);
	if (malloc(huge))
		fail("malloc(huge) succeeded", 0, 0);
	void *p = NULL;
	if (posix_memalign(&p, 24, 10) != EINVAL)
		fail("posix_memalign(24) not EINVAL", 0, 0);
	if (malloc_usable_size(NULL) != 0)
		fail("malloc_usable_size(NULL)", 0, 0);
	p = memalign(1 << 20, 100);
	if (!p || (uintptr_t)p % (1 << 20))
		fail("memalign 1 MiB", (uintptr_t)p, 0);
	free(p);
	p = valloc(10);
	if (!p || (uintptr_t)p % (size_t)sysconf(_SC_PAGESIZE))
		fail("valloc", (uintptr_t)p, 0);
	free(p);
	p = pvalloc(10);
	if (!p || malloc_usable_size(p) < (size_t)sysconf(_SC_PAGESIZE))
		fail("pvalloc", (uintptr_t)p, 0);
	free(p);
	if (!failed)
		printf("stress: %d threads x %u operations ok\n", nthreads, iterations);
	return failed;
}
