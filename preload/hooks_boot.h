/*
 * heapprof.so's start-up (boot.c): whether the real allocator is known yet, and what
 * start-up decided for the hooks (the stack depth, whether stacks can be taken).
 */
#ifndef HP_HOOKS_BOOT_H
#define HP_HOOKS_BOOT_H

#include <stdbool.h>

#include "compiler.h"

extern unsigned hp_frames HP_HIDDEN;	/* HEAPPROF_FRAMES */
extern bool hp_stacks HP_HIDDEN;	/* the unwinder is ready: take stacks */

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

#endif
