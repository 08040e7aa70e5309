/*
 * The map table (maps.c, heapprof.so alone): anonymous mappings with their stacks.
 * Weak here, so that libheapprof.a and the Rust crate, which leave maps.c out, link.
 */
#ifndef HP_MAPS_H
#define HP_MAPS_H

#include <stdint.h>

#include "compiler.h"

struct unwind_start;

/* Make the table (HEAPPROF_MAPS entries), once the options are read. id: the id of the
 * stack record of a caller of mmap at st (0: none), the one the malloc family takes. */
HP_HIDDEN void maps_init(uint32_t (*id)(const struct unwind_start *st));
/* The allocator is known: fn is its malloc. Its own mappings are then the allocator's
 * (no stack: it may call mmap holding its lock, and unwinding may allocate). */
HP_HIDDEN void maps_allocator(void *fn);
/* In a forked child: the lock is free (its holder is not in the child). */
HP_HIDDEN void maps_after_fork(void);
/*
 * heapprof's own mappings, as the table holds them under its lock: each one's start,
 * end and what it holds (HP2_OWN_*) into out, room for max. Returns how many there
 * are (more than max: the first max copied), or -1 when the table cannot list them
 * all: none was made (HEAPPROF_MAPS=0), a call's effect was lost (the table was full,
 * or a signal handler mapped while its thread changed it), or this thread is changing
 * it (a snapshot in a signal handler).
 */
HP_HIDDEN long maps_own(uint64_t (*out)[3], size_t max);
#pragma weak maps_own
#pragma weak maps_init
#pragma weak maps_after_fork
#pragma weak maps_allocator

#endif
