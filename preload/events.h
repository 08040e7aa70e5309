/*
 * HEAPPROF_EVENTS=N: each thread keeps a ring of its last N allocator calls in a
 * mapping of its own (format in include/heapprof_format.h), so that a core shows what
 * the crashing thread allocated and freed last. The ring stays with the thread's slot
 * when it ends: a thread that takes the slot over writes it anew. Off by default.
 */
#ifndef HP_EVENTS_H
#define HP_EVENTS_H

#include <stdint.h>

#include "compiler.h"
#include "options.h"

/* Record one call; block, if not NULL, is a block whose header names the site. */
HP_HIDDEN void events_add(unsigned entry, uint64_t a, uint64_t b, uint64_t result,
			  const void *block);
/* The same for a block named out of band: site is its site id (0 none). */
HP_HIDDEN void events_add_site(unsigned entry, uint64_t a, uint64_t b, uint64_t result,
			       uint32_t site);

/* In a forked child: its thread gets a ring of its own (its slot's, made its own). */
HP_HIDDEN void events_after_fork(void);

/* The calling thread ends: it records no more calls, and its ring stays with its slot
 * for a later thread (table.h). */
HP_HIDDEN void events_thread_end(void);

#endif
