/*
 * libheapprof.a's way to the real allocator: the program is linked with ld --wrap for
 * each name of the malloc family (pkg-config --static --libs heapprof), so every call
 * in its objects and in a static libc goes to our __wrap_ entry points (hooks.c) and
 * the libc's own malloc answers as __real_malloc.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/types.h>

#include "block.h"
#include "options.h"
#include "real.h"
#include "real_int.h"
#include "util.h"

void *__real_malloc(size_t size);
void __real_free(void *p);
void *__real_calloc(size_t n, size_t elem);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
size_t __real_malloc_usable_size(void *p);
ssize_t __real_getdelim(char **line, size_t *n, int delim, FILE *f);
ssize_t __wrap_getdelim(char **line, size_t *n, int delim, FILE *f);
ssize_t __wrap_getline(char **line, size_t *n, FILE *f);
ssize_t __wrap___getdelim(char **line, size_t *n, int delim, FILE *f);
void *__wrap_realloc(void *p, size_t size);

/* The program has a dynamic libc (PT_INTERP): calls made inside it are not wrapped. */
static bool libc_shared;

static bool has_interp(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);

	for (unsigned long i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_INTERP)
			return true;
	return false;
}

/*
 * musl's calloc, memalign and posix_memalign are written over malloc and aligned_alloc
 * by name, which --wrap sends back to us: the real ones are aligned_alloc, and calloc
 * made here of the real malloc (glibc's call nothing wrapped: its calloc skips the
 * clearing of fresh pages).
 */
#ifdef __GLIBC__
#define real_calloc __real_calloc
#else
static void *real_calloc(size_t n, size_t elem)
{
	size_t size;
	void *p;

	if (__builtin_mul_overflow(n, elem, &size))
		return NULL;	/* do_calloc refused it already */
	p = __real_malloc(size);
	if (p)
		memset(p, 0, size);
	return p;
}
#endif

void real_resolve(void)
{
	hp_real = (struct hp_real){ __real_malloc, __real_free, real_calloc, __real_realloc,
				    __real_aligned_alloc, __real_malloc_usable_size };
	libc_shared = has_interp();
	if (hp_opt.allocator)
		hp_warn("HEAPPROF_ALLOCATOR: cannot use '", hp_opt.allocator,
			"' in a program linked with libheapprof.a; using the libc's malloc");
}

bool real_aligned_pair(void *(**aa)(size_t, size_t), void (**fr)(void *))
{
	*aa = __real_aligned_alloc;
	*fr = __real_free;
	return true;
}

/*
 * getdelim and getline resize the caller's buffer with the libc's realloc. In a static
 * program that realloc is ours (--wrap reaches into libc.a); with a shared libc it is
 * the libc's own, which must never see one of our blocks: the line is read into a
 * buffer of the libc's and copied into the caller's, resized by our realloc.
 */
ssize_t __wrap_getdelim(char **line, size_t *n, int delim, FILE *f)
{
	char *tmp = NULL;
	size_t cap = 0;
	ssize_t len;

	if (!libc_shared || !line || !n || !*line || !block_tag(*line))
		return __real_getdelim(line, n, delim, f);
	len = __real_getdelim(&tmp, &cap, delim, f);
	if (len >= 0 && *n < (size_t)len + 1) {
		char *q = __wrap_realloc(*line, (size_t)len + 1);

		if (!q) {
			len = -1;	/* errno ENOMEM, as getdelim's own failure */
		} else {
			*line = q;
			*n = (size_t)len + 1;
		}
	}
	if (len >= 0)
		memcpy(*line, tmp, (size_t)len + 1);
	__real_free(tmp);
	return len;
}

ssize_t __wrap_getline(char **line, size_t *n, FILE *f)
{
	return __wrap_getdelim(line, n, '\n', f);
}

/* glibc's <stdio.h> inlines getline as __getdelim at -O1 and up */
ssize_t __wrap___getdelim(char **line, size_t *n, int delim, FILE *f)
{
	return __wrap_getdelim(line, n, delim, f);
}
