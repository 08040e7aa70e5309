/*
 * The bootstrap arena: bump allocation from static memory, never reused, for the
 * allocations made while heapprof.so looks the real allocator up (dlsym and dlopen
 * allocate). The hooks ask it of every free; it knows nothing of them.
 */
#ifndef HP_ARENA_H
#define HP_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

#define HP_ARENA_SIZE (1u << 20)	/* dlopen of a backing allocator takes tens of KiB */
extern unsigned char hp_arena[HP_ARENA_SIZE] HP_HIDDEN;

/* size bytes aligned to align (at least 16), or NULL when the arena is full. */
HP_HIDDEN void *arena_alloc(size_t size, size_t align);

/* Inline: free() asks it of every block. One compare: p - hp_arena wraps for p below. */
static inline bool arena_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)hp_arena < HP_ARENA_SIZE;
}

/* The size arena_alloc was asked for, of a block it returned. */
HP_HIDDEN size_t arena_size(const void *p);

#endif
