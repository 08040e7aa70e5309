/*
 * Internal to the unwinders: the interface each one fills (unwind_cfi.c, unwind_fp.c,
 * unwind_libgcc.c), the stack window the in-process walks may read, and the count of
 * unloaded libraries that tells a cache its entries may describe code that is gone.
 */
#ifndef HP_UNWINDER_H
#define HP_UNWINDER_H

#include <stdbool.h>
#include <stdint.h>

#include "unwind.h"

/*
 * The cfi and fp unwinders know the x86_64 LP64 frame only (x32 shares __x86_64__ but
 * not the word size); everywhere else their init() reports "unavailable".
 */
#if defined(__x86_64__) && defined(__LP64__)
#define HP_UNWIND_X86_64 1
#else
#define HP_UNWIND_X86_64 0
#endif

struct unwinder {
	const char *name;	/* the HEAPPROF_UNWIND value that picks it */
	/* Make it usable; may allocate and look symbols up. False: not available here. */
	bool (*init)(void);
	/*
	 * pcs[0] = st->pc is already stored and 2 <= max; store further return addresses
	 * in pcs[1..max) and return the total count. No lock, no malloc, no I/O, no fault,
	 * no array sized by max.
	 */
	unsigned (*capture)(uintptr_t *pcs, unsigned max, const struct unwind_start *st);
};

extern const struct unwinder unwinder_cfi, unwinder_fp, unwinder_libgcc;

/*
 * Bumped after every dlclose() (unwind.c exports dlclose for that): a cache filled from
 * a library's unwind tables or text must not answer for addresses loaded after it.
 * Read with __ATOMIC_ACQUIRE once per capture.
 */
extern unsigned unwind_gen;

/*
 * The part of the current thread's stack a walk may read: [lo, hi). lo is at or below
 * the unwinder's own frame, hi is the thread's stack top; every load is checked.
 */
struct stack_win {
	uintptr_t lo, hi;
};

/*
 * The window for a walk from st (unwind_stack.c). False when the hook's caller is not
 * on this thread's known stack (sigaltstack, coroutines): then record pcs[0] only. The
 * first call in a thread may allocate (pthread_getattr_np); the hooks' guard covers it.
 */
bool unwind_stack_window(const struct unwind_start *st, struct stack_win *w);

/* Remember the calling thread as the main one (its stack is found without /proc). */
void unwind_stack_init(void);

#endif
