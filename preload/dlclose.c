/*
 * heapprof.so's dlclose: moves unwind_gen so that the unwinders' caches forget what
 * they read from an unloaded library, and writes its module record (modules.c).
 * Not in libheapprof.a: a static program loads no libraries.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#include "compiler.h"
#include "unwinder.h"

/* Module records (modules.c); weak, so that the unwinders also link alone (tests). */
void *modules_before_close(void *handle) __attribute__((weak, visibility("hidden")));
void modules_after_close(void *rec, int (*real_dlclose)(void *))
	__attribute__((weak, visibility("hidden")));

/*
 * Every unload goes through here (the program's and its libraries' calls of dlclose
 * bind to the first definition in the process, ours), so the generation moves
 * before a library loaded at the same address can allocate. Bumped after the real
 * dlclose: a rule cached meanwhile from the old object carries the old generation.
 * glibc's internal unloads (NSS and iconv modules, __libc_dlclose) bypass it; glibc
 * unloads those at exit only.
 */
HP_EXPORT int dlclose(void *handle)
{
	static int (*real)(void *);
	int (*fn)(void *) = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	void *rec;
	int rc;

	if (!fn) {
		fn = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
		if (!fn)
			return -1;	/* no libc below us: nothing was loaded by it */
		__atomic_store_n(&real, fn, __ATOMIC_RELEASE);
	}
	rec = modules_before_close ? modules_before_close(handle) : NULL;
	rc = fn(handle);
	__atomic_add_fetch(&unwind_gen, 1, __ATOMIC_RELEASE);
	if (rc == 0 && modules_after_close)
		modules_after_close(rec, fn);
	return rc;
}
