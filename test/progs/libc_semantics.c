/*
 * The malloc family on its edge cases, one line per call, in words that do not
 * depend on where blocks land: NULL or a block, errno, posix_memalign's result,
 * alignment, writability, usable size. t1003 runs it with and without heapprof.so
 * and wants the same lines: the preload must keep the running libc's semantics,
 * whatever they are, so nothing here says what the right answer is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Called through volatile pointers: gcc knows the malloc family and would fold
 * malloc(SIZE_MAX) to NULL or drop a malloc whose block is only freed. */
static void *(*volatile f_malloc)(size_t) = malloc;
static void *(*volatile f_calloc)(size_t, size_t) = calloc;
static void *(*volatile f_realloc)(void *, size_t) = realloc;
static void *(*volatile f_reallocarray)(void *, size_t, size_t) = reallocarray;
static int (*volatile f_posix_memalign)(void **, size_t, size_t) = posix_memalign;
static void *(*volatile f_aligned_alloc)(size_t, size_t) = aligned_alloc;
static void *(*volatile f_memalign)(size_t, size_t) = memalign;
static void *(*volatile f_valloc)(size_t) = valloc;
static void *(*volatile f_pvalloc)(size_t) = pvalloc;
static size_t (*volatile f_usable)(void *) = malloc_usable_size;
static void (*volatile f_free)(void *) = free;

struct val {
	size_t v;
	const char *name;
};

#define V(x) { (size_t)(x), #x }
#define N(x, name) { (size_t)(x), name }

static const struct val aligns[] = {
	V(0), V(1), V(2), V(3), V(4), V(8), V(16), V(24), V(48), V(64), V(4096),
	V(1 << 20), N((size_t)1 << 31, "1 << 31"), N(SIZE_MAX / 2 + 1, "SIZE_MAX/2+1"), V(SIZE_MAX),
};

static const struct val sizes[] = {
	V(0), V(1), V(100), V(SIZE_MAX), N(SIZE_MAX - 4096, "SIZE_MAX-4096"), V(PTRDIFF_MAX),
	N((size_t)PTRDIFF_MAX + 1, "PTRDIFF_MAX+1"),
};

static const struct val pairs[][2] = {
	{ V(0), V(0) }, { V(1), V(0) }, { V(0), V(1) }, { V(3), V(33) }, { V(100), V(1) },
	{ N(SIZE_MAX / 2, "SIZE_MAX/2"), V(3) }, { V(0), V(SIZE_MAX) }, { V(SIZE_MAX), V(0) },
	{ V(SIZE_MAX), V(1) }, { V(2), N(SIZE_MAX / 2 + 1, "SIZE_MAX/2+1") },
	{ N(SIZE_MAX / 2 + 1, "SIZE_MAX/2+1"), V(2) }, { N(PTRDIFF_MAX / 2 + 1, "PTRDIFF_MAX/2+1"), V(2) },
	{ V(65536), V(16) }, { N((size_t)1 << 32, "1 << 32"), N((size_t)1 << 32, "1 << 32") },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Blocks up to this size are written and read back end to end. */
#define SMALL 8192

static const char *errname(int e)
{
	static char buf[32];

	switch (e) {
	case 0: return "0";
	case ENOMEM: return "ENOMEM";
	case EINVAL: return "EINVAL";
	}
	snprintf(buf, sizeof(buf), "%d", e);
	return buf;
}

/* Smallest power of two >= x (x > 0 and not above SIZE_MAX / 2 + 1), else 0. */
static size_t pow2_up(size_t x)
{
	size_t a = 1;

	if (x == 0 || x > SIZE_MAX / 2 + 1)
		return 0;
	while (a < x)
		a <<= 1;
	return a;
}

/*
 * Describe a result and free it; call names it unless the caller did. align: the alignment asked for (0: none asked);
 * a block must then be aligned to the power of two at or above it, which is what
 * an allocator that accepts an odd alignment can give. zero: calloc, all zero.
 */
static void report(const char *call, void *p, int err, size_t size, size_t align, int zero)
{
	if (call)
		printf("%s: ", call);
	printf("%s errno=%s", p ? "block" : "NULL", errname(err));
	if (p) {
		size_t want = pow2_up(align);

		if (align)
			printf(" aligned=%s", want && (uintptr_t)p % want == 0 ? "yes" : "no");
		printf(" aligned16=%s", (uintptr_t)p % 16 == 0 ? "yes" : "no");
		printf(" usable>=size=%s", f_usable(p) >= size ? "yes" : "no");
		if (size <= SMALL) {
			unsigned char *c = p;
			int ok = 1;

			if (zero)
				for (size_t i = 0; i < size; i++)
					ok &= c[i] == 0;
			if (zero)
				printf(" zeroed=%s", ok ? "yes" : "no");
			if (size) {
				c[0] = 0x5a;
				c[size - 1] = 0xa5;
				ok = (size == 1 || c[0] == 0x5a) && c[size - 1] == 0xa5;
			}
			printf(" writable=%s", ok ? "yes" : "no");
		}
		f_free(p);
	}
	putchar('\n');
}

/* A block of 100 bytes holding a known pattern, for realloc to move or keep. */
static void *pattern_block(void)
{
	unsigned char *p = f_malloc(100);

	if (!p) {
		puts("malloc(100) failed");
		exit(1);
	}
	for (int i = 0; i < 100; i++)
		p[i] = (unsigned char)i;
	return p;
}

static const char *pattern_kept(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n && i < 100; i++)
		if (p[i] != (unsigned char)i)
			return "no";
	return "yes";
}

/* realloc(p, size) or reallocarray(p, n, elem) of a pattern block, and what became of
 * the old block: its contents in the new block, or kept when the call failed. */
static void realloc_case(const char *call, int array, size_t n, size_t elem)
{
	unsigned char *p = pattern_block(), *q;
	size_t size = array ? n * elem : n;	/* only used when the call succeeds */
	int err;

	errno = 0;
	q = array ? f_reallocarray(p, n, elem) : f_realloc(p, n);
	err = errno;
	if (q)
		printf("%s: contents kept=%s, ", call, pattern_kept(q, size));
	else if (size == 0 && !(array && elem && n > SIZE_MAX / elem))
		printf("%s: old block freed, ", call);	/* glibc's realloc(p, 0) */
	else {
		printf("%s: old block kept=%s, ", call, pattern_kept(p, 100));
		f_free(p);
	}
	report(NULL, q, err, size, 0, 0);
}

int main(void)
{
	char call[200];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	setvbuf(stdout, NULL, _IOFBF, 1 << 16);

	for (size_t i = 0; i < NELEM(sizes); i++) {
		const struct val *s = &sizes[i];
		void *p;
		int err;

		snprintf(call, sizeof(call), "malloc(%s)", s->name);
		errno = 0;
		p = f_malloc(s->v);
		report(call, p, errno, s->v, 0, 0);

		snprintf(call, sizeof(call), "calloc(1, %s)", s->name);
		errno = 0;
		p = f_calloc(1, s->v);
		report(call, p, errno, s->v, 0, 1);

		snprintf(call, sizeof(call), "realloc(NULL, %s)", s->name);
		errno = 0;
		p = f_realloc(NULL, s->v);
		report(call, p, errno, s->v, 0, 0);

		snprintf(call, sizeof(call), "realloc(p, %s)", s->name);
		realloc_case(call, 0, s->v, 0);

		snprintf(call, sizeof(call), "reallocarray(NULL, 1, %s)", s->name);
		errno = 0;
		p = f_reallocarray(NULL, 1, s->v);
		report(call, p, errno, s->v, 0, 0);

		snprintf(call, sizeof(call), "valloc(%s)", s->name);
		errno = 0;
		p = f_valloc(s->v);
		report(call, p, errno, s->v, page, 0);

		/* pvalloc also promises the size rounded up to whole pages */
		snprintf(call, sizeof(call), "pvalloc(%s)", s->name);
		errno = 0;
		p = f_pvalloc(s->v);
		err = errno;
		if (p)
			printf("%s: usable>=pages=%s, ", call,
			       f_usable(p) >= (s->v + page - 1) / page * page ? "yes" : "no");
		report(p ? NULL : call, p, err, s->v, page, 0);
	}

	for (size_t i = 0; i < NELEM(pairs); i++) {
		const struct val *n = &pairs[i][0], *e = &pairs[i][1];
		size_t size = n->v * e->v;	/* wraps when the call must fail */
		void *p;

		snprintf(call, sizeof(call), "calloc(%s, %s)", n->name, e->name);
		errno = 0;
		p = f_calloc(n->v, e->v);
		report(call, p, errno, size, 0, 1);

		snprintf(call, sizeof(call), "reallocarray(NULL, %s, %s)", n->name, e->name);
		errno = 0;
		p = f_reallocarray(NULL, n->v, e->v);
		report(call, p, errno, size, 0, 0);

		snprintf(call, sizeof(call), "reallocarray(p, %s, %s)", n->name, e->name);
		realloc_case(call, 1, n->v, e->v);
	}

	for (size_t i = 0; i < NELEM(aligns); i++) {
		for (size_t j = 0; j < NELEM(sizes); j++) {
			const struct val *a = &aligns[i], *s = &sizes[j];
			void *p, *sentinel = &p;
			int rc;

			snprintf(call, sizeof(call), "posix_memalign(%s, %s)", a->name, s->name);
			p = sentinel;
			errno = 0;
			rc = f_posix_memalign(&p, a->v, s->v);
			printf("%s: returns %s, out %s, ", call, errname(rc),
			       p == sentinel ? "untouched" : "set");
			report(NULL, rc == 0 ? p : NULL, errno, s->v, a->v, 0);

			snprintf(call, sizeof(call), "aligned_alloc(%s, %s)", a->name, s->name);
			errno = 0;
			p = f_aligned_alloc(a->v, s->v);
			report(call, p, errno, s->v, a->v, 0);

			snprintf(call, sizeof(call), "memalign(%s, %s)", a->name, s->name);
			errno = 0;
			p = f_memalign(a->v, s->v);
			report(call, p, errno, s->v, a->v, 0);
		}
	}

	/* calloc zeroes a block that malloc handed out and the program dirtied */
	for (size_t size = 16; size <= 1 << 20; size *= 4) {
		unsigned char *d = f_malloc(size), *z;
		size_t nonzero = 0;

		memset(d, 0xff, size);
		f_free(d);
		z = f_calloc(1, size);
		for (size_t i = 0; z && i < size; i++)
			nonzero += z[i] != 0;
		printf("calloc(1, %zu) after a dirty free: %s\n", size,
		       !z ? "NULL" : nonzero ? "not zeroed" : "zeroed");
		f_free(z);
	}

	errno = 0;
	printf("malloc_usable_size(NULL) = %zu errno=%s\n", f_usable(NULL), errname(errno));
	errno = EILSEQ;
	f_free(NULL);
	printf("free(NULL): errno %s\n", errno == EILSEQ ? "kept" : "changed");
	{
		void *p = f_malloc(100);

		errno = EILSEQ;
		f_free(p);
		printf("free(block): errno %s\n", errno == EILSEQ ? "kept" : "changed");
	}
	return 0;
}
