/*
 * heapprof.so's process-wide state: the real allocator behind it, the options, and
 * the bootstrap arena that serves allocations made while that allocator is looked up.
 */
#ifndef HP_BOOT_H
#define HP_BOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

/* The allocator we pass blocks to: the next one in the chain, or HEAPPROF_ALLOCATOR. */
struct hp_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	size_t (*usable_size)(void *);	/* NULL if the allocator has none */
};

extern struct hp_real hp_real HP_HIDDEN;
extern unsigned hp_frames HP_HIDDEN;	/* HEAPPROF_FRAMES */
extern bool hp_stacks HP_HIDDEN;	/* the unwinder is ready: take stacks */

/* Alignment malloc promises on this target: the header room keeps it. */
#define HP_ALIGN (__alignof__(max_align_t) < 16 ? 16 : __alignof__(max_align_t))

/*
 * Make hp_real usable. Returns false while this thread is itself looking the
 * allocator up (dlsym and dlopen allocate): the caller then uses the arena.
 * Inline: after start-up it is one load on every malloc and free.
 */
extern int hp_boot_state HP_HIDDEN;	/* 0 not started, 1 resolving, 2 ready */
HP_HIDDEN bool boot_ensure_slow(void);

static inline bool boot_ensure(void)
{
	if (likely(__atomic_load_n(&hp_boot_state, __ATOMIC_ACQUIRE) == 2))
		return true;
	return boot_ensure_slow();
}

/* heapprof_enable() and heapprof_thread_enable() (hooks.c). */
HP_HIDDEN void hooks_enable(bool on);
HP_HIDDEN void hooks_thread_enable(bool on);

/* In a forked child (hooks.c): sampling draws its own points. */
HP_HIDDEN void hooks_after_fork(void);

#endif
