/*
 * Stack capture for heapprof.so: four unwinders behind one call, chosen once by
 * HEAPPROF_UNWIND. The hooks capture where their caller stands; this file walks on.
 */
#ifndef HP_UNWIND_H
#define HP_UNWIND_H

#include <stdint.h>

/* Register state of the hook's caller at the moment the hook returns to it. */
struct unwind_start {
	uintptr_t pc;	/* return address into the caller: becomes pcs[0] */
	uintptr_t sp;	/* caller's stack pointer once the hook has returned (hook's CFA) */
	uintptr_t fp;	/* caller's frame pointer register (saved by the hook's prologue) */
};

/*
 * Fill *st inside an exported hook (malloc, free, ...). The preload is built with
 * -fno-omit-frame-pointer, so on x86_64 the hook's frame is rbp-based:
 * [rbp] = caller's rbp, [rbp+8] = return address, caller's sp = rbp + 16.
 * Must be expanded in the exported function itself, never in a helper it calls.
 */
#if defined(__x86_64__)
#define UNWIND_START(st)                                                                   \
	do {                                                                               \
		uintptr_t *fp_ = (uintptr_t *)__builtin_frame_address(0);                  \
		(st).pc = (uintptr_t)__builtin_return_address(0);                          \
		(st).sp = (uintptr_t)fp_ + 2 * sizeof(uintptr_t);                          \
		(st).fp = fp_[0];                                                          \
	} while (0)
#else
#define UNWIND_START(st)                                                                   \
	do {                                                                               \
		(st).pc = (uintptr_t)__builtin_return_address(0);                          \
		(st).sp = 0;                                                               \
		(st).fp = 0;                                                               \
	} while (0)
#endif

/*
 * Choose the unwinder from HEAPPROF_UNWIND (NULL or "" = the default). A bad or
 * unavailable value gives one warning on stderr and the default. Called once while
 * the library boots; it may allocate and load libraries.
 */
void unwind_init(const char *mode);

/* Name of the unwinder in use: "cfi", "fp", "libgcc" or "libunwind". */
const char *unwind_name(void);

/*
 * Store up to max (1..HP_MAX_FRAMES) return addresses into pcs, pcs[0] = st->pc, each
 * next one an outer caller; returns how many. Never faults whatever the stack holds,
 * never takes a lock, allocates only the first time a thread calls it.
 */
unsigned unwind_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st);

#endif
