/*
 * malloc, aligned_alloc and free of heapprof.so under hidden names (hooks.c), for
 * the C++ operators (new_delete.c): called directly, they are ours even when another
 * library's malloc comes first in the lookup order.
 */
#ifndef HP_HOOKS_H
#define HP_HOOKS_H

#include <stddef.h>

#include "boot.h"

HP_HIDDEN void *hooks_malloc(size_t size);
HP_HIDDEN void *hooks_aligned_alloc(size_t align, size_t size);
HP_HIDDEN void hooks_free(void *p);

#endif
