/*
 * What the malloc family of heapprof.so (hooks*.c) offers the rest of it: its entry
 * points under hidden names, and the switches of tagging.
 */
#ifndef HP_HOOKS_H
#define HP_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler.h"

/* malloc, aligned_alloc and free under hidden names, for the C++ operators
 * (new_delete.c): called directly, they are ours even when another library's malloc
 * comes first in the lookup order. */
HP_HIDDEN void *hooks_malloc(size_t size);
HP_HIDDEN void *hooks_aligned_alloc(size_t align, size_t size);
HP_HIDDEN void hooks_free(void *p);

/* Tagging on or off for the whole process (heapprof_enable(), HEAPPROF_START,
 * HEAPPROF_TOGGLE_SIGNAL; async-signal-safe), and where it stands; on at start. */
HP_HIDDEN void hooks_enable(bool on);
HP_HIDDEN bool hooks_enabled(void);

/* heapprof_thread_enable(): the same for the calling thread alone. */
HP_HIDDEN void hooks_thread_enable(bool on);

#ifdef HP_ATTACH
/* heapprof-attach.so: whether heapprof may start in this process, not when a heapprof
 * (heapprof.so, libheapprof.a) is there already. Asked by the constructor before
 * anything starts, and by heapprof_attach (attach.c). */
HP_HIDDEN bool hooks_alone(void);
#endif

#endif
