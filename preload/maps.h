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
#pragma weak maps_init
#pragma weak maps_after_fork
#pragma weak maps_allocator

#endif
