/*
 * heapprof.so's way to the real allocator: our malloc family interposes by name, and
 * the real one is the next in the lookup order (dlsym RTLD_NEXT) or the library named
 * by HEAPPROF_ALLOCATOR.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "real.h"
#include "real_int.h"
#include "util.h"

/* Allocators without memalign (rare) still give aligned blocks this way. */
static int (*real_posix_memalign_fn)(void **, size_t, size_t);

static void *memalign_via_posix(size_t align, size_t size)
{
	void *p;

	return real_posix_memalign_fn((void **)&p, align, size) == 0 ? p : NULL;
}

static bool resolve_from(void *handle)
{
	struct hp_real r;

	r.malloc = (void *(*)(size_t))dlsym(handle, "malloc");
	r.free = (void (*)(void *))dlsym(handle, "free");
	r.calloc = (void *(*)(size_t, size_t))dlsym(handle, "calloc");
	r.realloc = (void *(*)(void *, size_t))dlsym(handle, "realloc");
	r.memalign = (void *(*)(size_t, size_t))dlsym(handle, "memalign");
	r.usable_size = (size_t(*)(void *))dlsym(handle, "malloc_usable_size");
	if (!r.memalign) {
		real_posix_memalign_fn = (int (*)(void **, size_t, size_t))dlsym(
			handle, "posix_memalign");
		if (real_posix_memalign_fn)
			r.memalign = memalign_via_posix;
	}
	if (!r.malloc || !r.free || !r.calloc || !r.realloc || !r.memalign)
		return false;
	hp_real = r;
	return true;
}

void real_resolve(void)
{
	const char *lib = hp_opt.allocator;

	if (lib) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

		if (h && resolve_from(h))
			return;
		const char *why = h ? "it has no malloc family" : dlerror();
		char msg[400];

		/* one line: 'LIB' (why); using the next allocator[; hint] */
		snprintf(msg, sizeof(msg), "' (%s); using the next allocator%s", why ? why : "?",
			 /* jemalloc, tcmalloc, mimalloc use initial-exec TLS, which a library
			  * loaded after start-up may only take from glibc's small surplus */
			 why && strstr(why, "static TLS") ?
				 "; set GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 "
				 "or LD_PRELOAD=\"heapprof.so LIB\"" : "");
		hp_warn("HEAPPROF_ALLOCATOR: cannot use '", lib, msg);
	}
	if (!resolve_from(RTLD_NEXT)) {
		/* Cannot happen with a libc; without an allocator nothing can run. */
		hp_warn("cannot find the real malloc with dlsym; aborting", NULL, NULL);
		abort();
	}
}

/* The next aligned_alloc and free in the chain, looked up once. */
bool real_aligned_pair(void *(**aa_out)(size_t, size_t), void (**fr_out)(void *))
{
	static void *(*next_aligned_alloc)(size_t, size_t);
	static void (*next_free)(void *);
	static int looked_up;	/* 0 not yet, 1 found, -1 none: memalign's rules */

	if (!__atomic_load_n(&looked_up, __ATOMIC_ACQUIRE)) {
		/* both from the same object: the block goes back where it came from */
		int saved = errno;	/* a taken alignment leaves errno alone */
		void *aa = dlsym(RTLD_NEXT, "aligned_alloc"), *fr = dlsym(RTLD_NEXT, "free");
		Dl_info ia, ifr;
		bool same = aa && fr && dladdr(aa, &ia) && dladdr(fr, &ifr) &&
			    ia.dli_fbase == ifr.dli_fbase;

		errno = saved;

		/* threads racing here store the same values */
		__atomic_store_n(&next_aligned_alloc, (void *(*)(size_t, size_t))aa,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&next_free, (void (*)(void *))fr, __ATOMIC_RELAXED);
		__atomic_store_n(&looked_up, same ? 1 : -1, __ATOMIC_RELEASE);
	}
	if (__atomic_load_n(&looked_up, __ATOMIC_ACQUIRE) < 0)
		return false;
	*aa_out = __atomic_load_n(&next_aligned_alloc, __ATOMIC_RELAXED);
	*fr_out = __atomic_load_n(&next_free, __ATOMIC_RELAXED);
	return true;
}
