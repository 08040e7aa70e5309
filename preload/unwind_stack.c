/*
 * The windows the in-process walks (cfi, fp) may read without faulting: the thread's
 * own stack, from bounds looked up once per thread, and any other stack a thread runs
 * on (coroutines, sigaltstack), probed page by page as a walk reaches it. The walks
 * themselves live in unwind_cfi.c and unwind_fp.c.
 */
#define _GNU_SOURCE
#include "unwind_int.h"

#include <pthread.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Probes are made in pages of this size: the smallest any x86_64 kernel maps. */
#define PROBE_PAGE 4096u
/* An off-stack window: how far above the walk's start it may grow, and by how much at
 * once (a frame pointer into the middle of a far mapping is not followed page by page) */
#define OTHER_MAX ((uintptr_t)1 << 20)
#define GROW_MAX ((uintptr_t)256 << 10)
/* The hook's caller sits at most this far above the unwinder's frame: the hook, tag()
 * with its pcs[] and Python frames, the unwinder's own. */
#define OWN_FRAMES_MAX ((uintptr_t)64 << 10)

/* The window's bounds (unwind_int.h): hi == 0 means not looked up yet in this thread; a
 * failed look-up leaves an empty window. */
__thread uintptr_t unwind_stack_lo, unwind_stack_hi;

/* Weak: ld.so exports it on glibc, but the preload must not fail to load without it. */
extern void *__libc_stack_end __attribute__((weak));

static pthread_t main_thread;
static bool main_known;

uintptr_t unwind_entry_slot;

static bool page_readable(uintptr_t page);

/*
 * The kernel starts a process with argc at the stack pointer, then argv, NULL, the
 * environment: the entry point's return address goes just below argc. argc is found
 * below the initial environ, the first word k words under argv's NULL that reads k
 * (argv's pointers never do); every page read is probed first, in case environ has
 * been replaced already.
 */
static void find_entry_slot(void)
{
	extern char **environ;
	uintptr_t env = (uintptr_t)environ, top = getauxval(AT_EXECFN), a, page = 0;

	if (!env || !top || env >= top || top - env > ((uintptr_t)8 << 20) || (env & 7) ||
	    env < 8 * 4098)
		return;
	for (uintptr_t k = 0; k <= 4096; k++) {
		a = env - 8 * (k + 2);
		if ((a & ~(uintptr_t)4095) != page) {
			page = a & ~(uintptr_t)4095;
			if (!page_readable(page))
				return;
		}
		if (k == 0 && ((const uintptr_t *)env)[-1] != 0)
			return;	/* not right after argv's NULL */
		if (k > 0 && *(const uintptr_t *)a == k) {
			unwind_entry_slot = a - 8;
			return;
		}
	}
}

void unwind_stack_init(void)
{
	if (!main_known && syscall(SYS_gettid) == getpid()) {
		main_thread = pthread_self();
		main_known = true;
	}
	if (!unwind_entry_slot)
		find_entry_slot();
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

/* ---- stacks other than the thread's own ---- */

static inline uintptr_t page_end(uintptr_t a)
{
	return (a | (PROBE_PAGE - 1)) + 1;
}

#if HP_UNWIND_X86_64
/*
 * Whether the page at page can be read, without touching it: rt_sigprocmask copies the
 * new set in before it looks at how, here invalid, so the answer is EFAULT for an
 * unreadable (unmapped, PROT_NONE) page and EINVAL for a readable one, and the signal
 * mask never changes. A raw system call: errno belongs to the program. Anything else
 * (a seccomp filter's verdict) counts as unreadable.
 */
static bool page_readable(uintptr_t page)
{
	long ret;
	register long r10 __asm__("r10") = 8;	/* the kernel's sigset_t */

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_rt_sigprocmask), "D"(-1L), "S"(page), "d"(0L), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret == -22;	/* -EINVAL */
}
#else
static bool page_readable(uintptr_t page)
{
	(void)page;
	return false;
}
#endif

bool unwind_other_window(uintptr_t sp, uintptr_t cur, struct stack_win *w)
{
	if (cur >= unwind_stack_lo && cur < unwind_stack_hi)
		return false;	/* on the thread's stack, and sp is not */
	if (sp <= cur || sp - cur > OWN_FRAMES_MAX || (sp & 7) || sp > UINTPTR_MAX - OTHER_MAX)
		return false;
	w->lo = sp;
	w->hi = page_end(sp - 8);	/* sp itself may open the next page */
	w->limit = sp + OTHER_MAX;
	return true;
}

void unwind_win_at(uintptr_t sp, struct stack_win *w)
{
	if (sp >= unwind_stack_lo && sp < unwind_stack_hi) {
		*w = (struct stack_win){ sp, unwind_stack_hi, 0 };
		return;
	}
	sp &= ~(uintptr_t)7;
	*w = (struct stack_win){ sp, sp, sp > UINTPTR_MAX - OTHER_MAX ? 0 : sp + OTHER_MAX };
}

bool unwind_win_grow(struct stack_win *w, uintptr_t end)
{
	uintptr_t hi = w->hi & ~(uintptr_t)(PROBE_PAGE - 1);	/* an empty window's first page */

	if (!w->limit || end > w->limit || end <= w->hi || end - w->hi > GROW_MAX)
		return false;
	while (w->hi < end) {
		if (!page_readable(hi))
			return false;
		hi += PROBE_PAGE;
		w->hi = hi;
	}
	return true;
}
