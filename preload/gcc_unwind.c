/*
 * libgcc's unwinder for heapprof.so, loaded at the first walk that needs it on x86_64,
 * where the cfi unwinder seldom falls back to it: a program that does not link
 * libgcc_s.so.1 (C programs, python3, git) would otherwise keep 100 KiB of it resident
 * for nothing. Elsewhere libgcc is the default unwinder: linked (gcc_unwind_fns.h),
 * and the Makefile's --as-needed keeps libgcc_s out of x86_64's DT_NEEDED.
 */
#define _GNU_SOURCE
#include <stdlib.h>	/* __GLIBC__ */

#if !defined(__x86_64__) || !defined(__GLIBC__)
#include "gcc_unwind_fns.h"

const struct gcc_unwind *gcc_unwind(void)
{
	return gcc_linked;
}
#else
#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <stdbool.h>

#include "gcc_unwind.h"
#include "util.h"

#ifndef LIBGCC_S_SO
#define LIBGCC_S_SO "libgcc_s.so.1"
#endif

static struct gcc_unwind fns;
static int state;	/* 0 not looked for, 1 in fns, -1 none */

/*
 * Threads that get here at once each load it (dlopen counts them) and store the same
 * pointers: none waits on another, which may hold the loader's lock and be in a hook.
 * Never unloaded (RTLD_NODELETE): a walk of another thread may be in it.
 */
static __attribute__((noinline)) const struct gcc_unwind *load(void)
{
	void *h = dlopen(LIBGCC_S_SO, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	void *sym[5] = { NULL };
	static const char *const names[5] = { "_Unwind_Backtrace", "_Unwind_GetIP",
					       "_Unwind_GetGR", "_Unwind_GetCFA",
					       "_Unwind_FindEnclosingFunction" };
	bool all = h != NULL;

	for (int i = 0; all && i < 5; i++)
		all = (sym[i] = dlsym(h, names[i])) != NULL;
	if (!all) {
		if (!__atomic_exchange_n(&state, -1, __ATOMIC_ACQ_REL))
			hp_warn("cannot load ", LIBGCC_S_SO, ": stacks the cfi unwinder cannot "
				"walk end at their first frame");
		return NULL;
	}
	__atomic_store_n((void **)&fns.backtrace, sym[0], __ATOMIC_RELAXED);
	__atomic_store_n((void **)&fns.get_ip, sym[1], __ATOMIC_RELAXED);
	__atomic_store_n((void **)&fns.get_gr, sym[2], __ATOMIC_RELAXED);
	__atomic_store_n((void **)&fns.get_cfa, sym[3], __ATOMIC_RELAXED);
	__atomic_store_n((void **)&fns.find_enclosing, sym[4], __ATOMIC_RELAXED);
	__atomic_store_n(&state, 1, __ATOMIC_RELEASE);
	return &fns;
}

const struct gcc_unwind *gcc_unwind(void)
{
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);

	if (likely(s))
		return s > 0 ? &fns : NULL;
	return load();
}
#endif
