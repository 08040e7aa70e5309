/*
 * The libc names heapprof.so stands in for besides the malloc family (hooks.c,
 * new_delete.c): dlclose, for the unwinders and the module records, and
 * pthread_setname_np, for the thread records. Not in libheapprof.a nor the Rust
 * crate: a static program loads no libraries, and their thread names are read later.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "compiler.h"
#include "modules.h"
#include "table.h"
#include "unwind.h"

/* Weak, so that the unwinders link with this file alone (test/progs/unwind_check). */
#pragma weak modules_before_close
#pragma weak modules_after_close
#pragma weak table_thread_named

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
	unwind_unloaded();
	if (rc == 0 && modules_after_close)
		modules_after_close(rec, fn);
	return rc;
}

/* for attach.c, which binds a running process's references to it */
extern __typeof(dlclose) exports_dlclose
	__attribute__((alias("dlclose"), copy(dlclose), visibility("hidden")));

/*
 * A thread that names itself is seen at once; one named by another thread, or
 * through prctl, at its next new site.
 */
HP_EXPORT int pthread_setname_np(pthread_t t, const char *name)
{
	static int (*next)(pthread_t, const char *);
	int (*fn)(pthread_t, const char *) = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
	int rc;

	if (!fn) {
		fn = (int (*)(pthread_t, const char *))dlsym(RTLD_NEXT, "pthread_setname_np");
		if (!fn)
			return ENOSYS;
		__atomic_store_n(&next, fn, __ATOMIC_RELEASE);
	}
	rc = fn(t, name);
	if (rc == 0 && pthread_equal(t, pthread_self()) && table_thread_named)
		table_thread_named();
	return rc;
}
