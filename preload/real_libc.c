/*
 * The Rust crate's way to the real allocator (rust/heapprof): its GlobalAlloc calls our
 * entry points under names of their own (heapprof_rust_malloc, ...), and the real
 * allocator is the libc's malloc family, which is what std::alloc::System calls.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>

#include "options.h"
#include "real.h"
#include "real_int.h"
#include "util.h"

void real_resolve(void)
{
	hp_real = (struct hp_real){ malloc, free, calloc, realloc, memalign, malloc_usable_size };
	if (hp_opt.allocator)
		hp_warn("HEAPPROF_ALLOCATOR: cannot use '", hp_opt.allocator,
			"' under the Rust allocator; using the libc's malloc");
}

bool real_aligned_pair(void *(**aa)(size_t, size_t), void (**fr)(void *))
{
	*aa = aligned_alloc;
	*fr = free;
	return true;
}
