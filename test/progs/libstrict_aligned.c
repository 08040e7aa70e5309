/*
 * An aligned_alloc with the rules of glibc 2.38 and later, for a glibc that is older:
 * an alignment that is not a power of two is refused with EINVAL. Preloaded behind
 * heapprof.so, it stands for a libc whose answers differ from the test machine's, so
 * t1003 can check that heapprof asks the libc instead of knowing one version's rules.
 * free is defined here too, as a libc defines both: a block goes back to the object
 * it came from. glibc only: __libc_memalign and __libc_free reach its allocator
 * without dlsym, which itself allocates.
 */
#include <errno.h>
#include <stddef.h>

extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *p);

__attribute__((visibility("default"))) void *aligned_alloc(size_t align, size_t size)
{
	if (align == 0 || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	return __libc_memalign(align, size);
}

__attribute__((visibility("default"))) void free(void *p)
{
	__libc_free(p);
}
