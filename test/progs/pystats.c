/*
 * libpystats.so: what a Python process says of its own memory, for t3026 to check
 * --memory against, printed by one call through ctypes.PyDLL (the GIL held, no Python
 * object made or freed in between): pymalloc_stats() writes pymalloc's own statistics
 * to stderr, the part of sys._debugmallocstats() it prints of pymalloc, then glibc's
 * mallinfo2() to stdout (mallinfo.h's line).
 *
 * CPython prints pymalloc's part only when the object domain's allocator is pymalloc's
 * own (_PyMem_PymallocEnabled): under heapprof.so's wrap it is not, and
 * sys._debugmallocstats() says nothing of pymalloc. So for the call the domain gets
 * back what heapprof.so wrapped, which the wrap's context points at (preload/pymalloc.c:
 * "ctx points at the former"), and the wrap after it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "mallinfo.h"

/* Include/cpython/pymem.h, the same since 3.5 */
struct py_allocator {
	void *ctx;
	void *(*malloc)(void *ctx, size_t size);
	void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
	void *(*realloc)(void *ctx, void *ptr, size_t size);
	void (*free)(void *ctx, void *ptr);
};

#define DOMAIN_OBJ 2

/* Whether the function at p is heapprof.so's. */
static int in_heapprof(void *p)
{
	Dl_info info;

	return dladdr(p, &info) && info.dli_fname && strstr(info.dli_fname, "heapprof");
}

/* 0, or -1 when the interpreter lacks what it needs */
__attribute__((visibility("default"))) int pymalloc_stats(void)
{
	void (*get)(int, struct py_allocator *) = (void (*)(int, struct py_allocator *))
		dlsym(RTLD_DEFAULT, "PyMem_GetAllocator");
	void (*set)(int, struct py_allocator *) = (void (*)(int, struct py_allocator *))
		dlsym(RTLD_DEFAULT, "PyMem_SetAllocator");
	int (*stats)(FILE *) = (int (*)(FILE *))dlsym(RTLD_DEFAULT, "_PyObject_DebugMallocStats");
	struct py_allocator cur, orig;

	if (!get || !set || !stats)
		return -1;
	get(DOMAIN_OBJ, &cur);
	if (in_heapprof((void *)cur.malloc)) {
		orig = *(const struct py_allocator *)cur.ctx;
		set(DOMAIN_OBJ, &orig);
		stats(stderr);
		set(DOMAIN_OBJ, &cur);
	} else {
		stats(stderr);
	}
	fflush(stderr);
	say_mallinfo2();
	return 0;
}
