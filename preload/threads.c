/*
 * Thread names for the thread records (table.c): a thread that names itself is seen
 * at once; one named by another thread, or through prctl, at its next new site.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "compiler.h"
#include "table.h"

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
	if (rc == 0 && pthread_equal(t, pthread_self()))
		table_thread_named();
	return rc;
}
