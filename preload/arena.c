/*
 * The bootstrap arena (arena.h): lock-free bump allocation, each block preceded by its
 * size so that realloc and malloc_usable_size work on it.
 */
#include <string.h>

#include "arena.h"

_Alignas(64) unsigned char hp_arena[HP_ARENA_SIZE];
#define arena hp_arena
#define ARENA_SIZE HP_ARENA_SIZE
static size_t arena_used;

void *arena_alloc(size_t size, size_t align)
{
	size_t old, start, end;

	if (align < 16)
		align = 16;
	old = __atomic_load_n(&arena_used, __ATOMIC_RELAXED);
	do {
		start = (old + sizeof(size_t) + align - 1) & ~(align - 1);
		if (size > ARENA_SIZE || start > ARENA_SIZE - size)
			return NULL;
		end = start + size;
	} while (!__atomic_compare_exchange_n(&arena_used, &old, end, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	memcpy(arena + start - sizeof(size_t), &size, sizeof(size));
	return arena + start;
}

size_t arena_size(const void *p)
{
	size_t size;

	memcpy(&size, (const unsigned char *)p - sizeof(size_t), sizeof(size));
	return size;
}
