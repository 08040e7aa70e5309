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

/*
 * Initial-exec TLS: the general-dynamic model may call malloc on first access. hi == 0
 * means not looked up yet in this thread; a failed look-up leaves an empty window.
 */
static __thread uintptr_t stack_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stack_hi __attribute__((tls_model("initial-exec")));

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
static void stack_bounds_init(void)
{
	uintptr_t lo, hi;
	pthread_attr_t attr;
	void *addr;
	size_t size;

	stack_lo = UINTPTR_MAX;
	stack_hi = 1;
	if (main_stack(&lo, &hi)) {
		stack_lo = lo;
		stack_hi = hi;
		return;
	}
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size >= 64) {
		stack_lo = (uintptr_t)addr;
		stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}

/* Our own frame is below every frame the walk reads, so it bounds the window below. */
bool unwind_stack_window(const struct unwind_start *st, struct stack_win *w)
{
	uintptr_t cur = (uintptr_t)__builtin_frame_address(0);

	if (__builtin_expect(stack_hi == 0, 0))
		stack_bounds_init();
	if (cur < stack_lo || cur >= stack_hi || st->sp < cur || st->sp >= stack_hi - 16)
		return false;
	w->lo = cur;
	w->hi = stack_hi;
	return true;
}
