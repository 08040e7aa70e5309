/*
 * Per-thread stack bounds for the in-process walks (cfi, fp): the window a walk may
 * read without faulting. The walks themselves live in unwind_cfi.c and unwind_fp.c.
 */
#define _GNU_SOURCE
#include "unwinder.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The window's bounds (unwinder.h): hi == 0 means not looked up yet in this thread; a
 * failed look-up leaves an empty window. */
__thread uintptr_t unwind_stack_lo, unwind_stack_hi;

/* Weak: ld.so exports it on glibc, but the preload must not fail to load without it. */
extern void *__libc_stack_end __attribute__((weak));

static pthread_t main_thread;
static bool main_known;

void unwind_stack_init(void)
{
	if (!main_known && syscall(SYS_gettid) == getpid()) {
		main_thread = pthread_self();
		main_known = true;
	}
}

/*
 * The main thread's stack top is __libc_stack_end, its lowest possible address is
 * RLIMIT_STACK below: no /proc reading. Comparing pthread_self() rather than gettid()
 * keeps a child forked from another thread (whose tid is then the pid) on its own stack.
 */
static bool main_stack(uintptr_t *lo, uintptr_t *hi)
{
	struct rlimit rl;
	uintptr_t top;

	if (!main_known || !pthread_equal(pthread_self(), main_thread) || !&__libc_stack_end)
		return false;
	top = (uintptr_t)__libc_stack_end;
	if (!top || getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= top)
		return false;
	*lo = top - rl.rlim_cur;
	*hi = top;
	return true;
}

/* First capture in a thread: pthread_getattr_np allocates, the hook's guard covers it. */
void unwind_stack_bounds(void)
{
	uintptr_t lo, hi;
	pthread_attr_t attr;
	void *addr;
	size_t size;

	unwind_stack_lo = UINTPTR_MAX;
	unwind_stack_hi = 1;
	if (main_stack(&lo, &hi)) {
		unwind_stack_lo = lo;
		unwind_stack_hi = hi;
		return;
	}
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size >= 64) {
		unwind_stack_lo = (uintptr_t)addr;
		unwind_stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}
