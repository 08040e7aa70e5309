/*
 * Stack capture for heapprof.so: picks the unwinder once (HEAPPROF_UNWIND), keeps each
 * thread's stack bounds, and holds the libgcc, libunwind and frame-pointer walks. The
 * DWARF CFI walk and its rule cache live in unwind_cfi.c.
 */
#define _GNU_SOURCE
#include "unwind.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <unwind.h>

#include "../include/heapprof_format.h"
#include "unwind_cfi.h"
#include "util.h"

enum mode { MODE_NONE, MODE_CFI, MODE_FP, MODE_LIBGCC, MODE_LIBUNWIND };

static const char *const mode_names[] = {
	[MODE_NONE] = "none", [MODE_CFI] = "cfi", [MODE_FP] = "fp",
	[MODE_LIBGCC] = "libgcc", [MODE_LIBUNWIND] = "libunwind",
};

/* Written once while the library boots, before any thread can capture. */
static enum mode mode;

/* Frames of our own (callbacks, unwind_capture, the hook) seen before st->pc. */
#define SKIP_MAX 16

/* ---- libgcc: _Unwind_Backtrace, the one unwinder on every architecture ---- */

struct bt_arg {
	uintptr_t *pcs;
	unsigned n, max, skipped;
	uintptr_t want;
	bool found;
};

/* ARM: return addresses carry the Thumb bit, _Unwind_GetIP clears it; compare without. */
static inline uintptr_t code_addr(uintptr_t pc)
{
#if defined(__arm__)
	return pc & ~(uintptr_t)1;
#else
	return pc;
#endif
}

static _Unwind_Reason_Code bt_frame(struct _Unwind_Context *ctx, void *p)
{
	struct bt_arg *a = p;
	uintptr_t ip = _Unwind_GetIP(ctx);

	if (!a->found) {
		/* a stack that never reaches st->pc (a hook called oddly) must not spin */
		a->found = code_addr(ip) == code_addr(a->want);
		return a->found || ++a->skipped < SKIP_MAX ? _URC_NO_REASON : _URC_END_OF_STACK;
	}
	if (ip == 0)	/* the outermost frame of some threads */
		return _URC_END_OF_STACK;
	a->pcs[a->n++] = ip;
	return a->n < a->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

static unsigned libgcc_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st)
{
	struct bt_arg a = { pcs, 1, max, 0, st->pc, false };

	_Unwind_Backtrace(bt_frame, &a);
	return a.n;
}

#if HP_UNWIND_X86_64

/* ---- libunwind: dlopened only when chosen, so heapprof.so never depends on it ---- */

/* The few libunwind entry points, declared here to need no libunwind-dev to build. */
typedef int (*unw_backtrace_fn)(void **, int);
typedef int (*unw_caching_fn)(void *, int);
#define UNW_CACHE_PER_THREAD 2	/* enum unw_caching_policy_t in libunwind-common.h */

static unw_backtrace_fn unw_backtrace_p;

static bool libunwind_init(void)
{
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	unw_caching_fn set_caching;
	void **addr_space;

	if (!h)
		return false;
	/* unw_* are macros for _ULx86_64_*; only unw_backtrace is exported unprefixed */
	unw_backtrace_p = (unw_backtrace_fn)dlsym(h, "unw_backtrace");
	set_caching = (unw_caching_fn)dlsym(h, "_ULx86_64_set_caching_policy");
	addr_space = dlsym(h, "_ULx86_64_local_addr_space");
	if (!unw_backtrace_p || !set_caching || !addr_space) {
		dlclose(h);
		return false;
	}
	/* the global cache takes a lock; the per-thread one does not */
	set_caching(*addr_space, UNW_CACHE_PER_THREAD);
	return true;
}

static unsigned libunwind_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st)
{
	void *buf[HP_MAX_FRAMES + SKIP_MAX];
	int got = unw_backtrace_p(buf, (int)(max - 1 + SKIP_MAX));
	unsigned n = 1;
	int i = 0;

	while (i < got && (uintptr_t)buf[i] != st->pc)
		i++;
	for (i++; i < got && n < max && buf[i]; i++)
		pcs[n++] = (uintptr_t)buf[i];
	return n;
}

/* ---- per-thread stack bounds ---- */

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

/*
 * The readable window [our own frame, stack top). False when the hook's caller is not on
 * this thread's known stack (sigaltstack, coroutines): then only pcs[0] is recorded.
 */
static inline bool stack_window(const struct unwind_start *st, struct stack_win *w)
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

/* ---- fp: [fp] = caller's fp, [fp + 8] = return address ---- */

static unsigned fp_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			   const struct stack_win *w)
{
	uintptr_t fp = st->fp, floor = st->sp;
	unsigned n = 1;

	/*
	 * Each record must lie above the last one (strictly increasing, so no loops) and
	 * inside the stack; the chain breaks at the first library built without frame
	 * pointers, where rbp holds anything, so each return address is checked as well.
	 */
	while (n < max && fp >= floor && !(fp & 7) && fp <= w->hi - 16) {
		uintptr_t next = ((const uintptr_t *)fp)[0];
		uintptr_t ra = ((const uintptr_t *)fp)[1];

		if (!cfi_is_text(ra))
			break;
		pcs[n++] = ra;
		floor = fp + 16;
		fp = next;
	}
	return n;
}

static unsigned x86_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st)
{
	struct stack_win w;
	bool fallback;
	unsigned n;

	if (!stack_window(st, &w))
		return 1;
	switch (mode) {
	case MODE_CFI:
		n = cfi_walk(pcs, max, st->sp, st->fp, &w, &fallback);
		return fallback ? libgcc_capture(pcs, max, st) : n;
	case MODE_FP:
		return fp_capture(pcs, max, st, &w);
	case MODE_LIBUNWIND:
		return libunwind_capture(pcs, max, st);
	default:
		return libgcc_capture(pcs, max, st);
	}
}

#endif /* HP_UNWIND_X86_64 */

unsigned unwind_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st)
{
	if (max == 0)
		return 0;
	if (max > HP_MAX_FRAMES)
		max = HP_MAX_FRAMES;
	pcs[0] = st->pc;
	if (max == 1 || mode == MODE_NONE)
		return 1;
#if HP_UNWIND_X86_64
	return x86_capture(pcs, max, st);
#else
	return libgcc_capture(pcs, max, st);
#endif
}

/* ---- choosing ---- */

static bool mode_start(enum mode m)
{
	switch (m) {
	case MODE_LIBGCC:
		return true;
#if HP_UNWIND_X86_64
	case MODE_CFI:
	case MODE_FP:	/* fp checks return addresses through the same object look-ups */
		return cfi_init();
	case MODE_LIBUNWIND:
		return libunwind_init();
#endif
	default:
		return false;
	}
}

void unwind_init(const char *name)
{
	enum mode want = MODE_NONE;

#if HP_UNWIND_X86_64
	if (syscall(SYS_gettid) == getpid()) {
		main_thread = pthread_self();
		main_known = true;
	}
#endif
	if (name && *name) {
		for (enum mode m = MODE_CFI; m <= MODE_LIBUNWIND; m++)
			if (strcmp(name, mode_names[m]) == 0)
				want = m;
		if (want == MODE_NONE)
			hp_warn("HEAPPROF_UNWIND=", name, ": unknown unwinder, using the default");
		else if (!mode_start(want))
			hp_warn("HEAPPROF_UNWIND=", name, ": not available here, using the default");
		else {
			mode = want;
			return;
		}
	}
	/* the default: cfi where it works (x86_64, glibc >= 2.35), else libgcc */
	mode = mode_start(MODE_CFI) ? MODE_CFI : MODE_LIBGCC;
}

const char *unwind_name(void)
{
	return mode_names[mode];
}
