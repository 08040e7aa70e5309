/*
 * The least a block header can cost: a preload that gives every block a 16-byte header
 * (size and a magic) and checks it in free and realloc, nothing else. The floor under
 * heapprof's per-block cost on a workload (docs/PERFORMANCE.md, "Where the time goes").
 *   cc -O2 -shared -fPIC -o header_only.so bench/header_only.c
 *   LD_PRELOAD=./header_only.so PROGRAM...
 * glibc only (__libc_malloc and friends); calloc's size is not checked for overflow.
 */
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t), *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

#define MAGIC 0xA3E1000000000000ull

static void *header(void *real, size_t n)
{
	uint64_t *w = real;

	if (!w)
		return NULL;
	w[0] = n;
	w[1] = MAGIC;
	return w + 2;
}

static uint64_t *of(void *p)
{
	uint64_t *w = (uint64_t *)p - 2;

	return w[1] == MAGIC ? w : NULL;
}

void *malloc(size_t n)
{
	return header(__libc_malloc(n + 16), n);
}

void *calloc(size_t a, size_t b)
{
	return header(__libc_calloc(1, a * b + 16), a * b);
}

void free(void *p)
{
	uint64_t *w;

	if (!p)
		return;
	if ((w = of(p))) {
		w[1] = 0;
		__libc_free(w);
	} else {
		__libc_free(p);
	}
}

void *realloc(void *p, size_t n)
{
	uint64_t *w;

	if (!p)
		return malloc(n);
	if (!(w = of(p)))
		return __libc_realloc(p, n);
	return header(__libc_realloc(w, n + 16), n);
}
