/*
 * Stack capture for heapprof.so: three unwinders (cfi, fp, libgcc) behind one call,
 * chosen once by HEAPPROF_UNWIND. The hooks capture where their caller stands; the
 * unwinder walks on. heapprof.so's dlclose() (exports.c) tells them of unloads.
 */
#ifndef HP_UNWIND_H
#define HP_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

/*
 * The deepest stack heapprof keeps. Ask for HP_UNWIND_MAX + 1 frames to learn whether
 * a stack was cut: it was if all of them came back.
 */
#define HP_UNWIND_MAX 1024

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
void unwind_init(const char *mode, bool replay);

/* Name of the unwinder in use: "cfi", "fp" or "libgcc" ("none" before unwind_init). */
const char *unwind_name(void);

/*
 * Store up to max return addresses into pcs, pcs[0] = st->pc, each next one an outer
 * caller; returns how many (0 if max is 0). max above HP_UNWIND_MAX + 1 counts as
 * HP_UNWIND_MAX + 1; no unwinder keeps an array of that size, pcs is the only store.
 * Never faults whatever the stack holds, never takes a lock, allocates only the first
 * time a thread calls it (its stack bounds), does no I/O.
 */
unsigned unwind_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st);

/*
 * Whether a walk stopped before the stack's outermost frame for want of a way on (code
 * without unwind tables whose caller a stack scan could not find, a frame leading off
 * the readable stack, rules no unwinder could follow) rather than at that frame or
 * max: a stack record from it carries HP2_STACK_TRUNCATED. unwind_cut says it of this
 * thread's last capture that returned no walk id (and of every unwind_capture), the
 * id itself of one that did (bit 8), so that a replayed walk writes nothing.
 */
extern __thread bool unwind_cut HP_TLS_MODEL __attribute__((visibility("hidden")));

static inline bool unwind_walk_cut(uint64_t walk)
{
	return walk ? (walk >> 8) & 1 : unwind_cut;
}

/* A library was unloaded (after the real dlclose): what the unwinders cached from the
 * objects they read may be gone, and no replayed walk from before is taken. */
void unwind_unloaded(void);

/*
 * unwind_capture, for a caller that keeps what it learns of a walk: *walk = 0 if the
 * walk was not logged; else the id of the logged walk (unwind.c, "replay"), the same
 * for every capture in this thread that replays that log, so the same frames, and
 * never given to another walk of the thread; its low 8 bits tell apart the walks kept
 * at once, bit 8 is unwind_walk_cut(). With an id, pcs[1..] may be left unfilled (a replay leaves the frames in
 * the log): unwind_walk_frames() fills them.
 */
unsigned unwind_capture_walk(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			     uint64_t *walk);

/* Fill pcs[1..] of the capture that just returned walk id (nonzero), before the
 * thread's next capture. */
void unwind_walk_frames(uint64_t id, uintptr_t *pcs);

#endif
