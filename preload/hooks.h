/*
 * What the malloc family of heapprof.so (hooks*.c) offers the rest of it: its entry
 * points under hidden names, and the switches of tagging.
 */
#ifndef HP_HOOKS_H
#define HP_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct unwind_start;

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

/* The id of the stack record (table.h) of a hook's caller, st filled by UNWIND_START
 * in the exported function (unwind.h); 0: no stack (inside a hook, or too early). */
struct unwind_start;
HP_HIDDEN uint32_t hooks_stack_id(const struct unwind_start *st);

/* heapprof_thread_enable(): the same for the calling thread alone. */
HP_HIDDEN void hooks_thread_enable(bool on);

/*
 * The fast path of an allocation when sampling: a block the next sample point does not
 * fall into costs a subtraction, before any stack is looked at. Everything else (the
 * first call of a thread, a sample point, sampling or tagging off) goes on to the slow
 * path, whose draw (hooks_take, or the malloc family's own) decides it again from the
 * same state. hooks_sample.c keeps both: the bytes left to this thread's next sample point, and
 * whether the fast path may answer (sampling on, tagging on, no event ring).
 */
extern HP_TLS uint64_t hooks_sample_left HP_HIDDEN;
extern bool hooks_sample_fast HP_HIDDEN;

static inline __attribute__((always_inline)) bool hooks_sample_skips(uint64_t size)
{
	if (!__atomic_load_n(&hooks_sample_fast, __ATOMIC_RELAXED) || size >= hooks_sample_left)
		return false;
	hooks_sample_left -= size;
	return true;
}

/*
 * For blocks heapprof names out of band (pymalloc.c: a slot word, not a header), the
 * steps the malloc family takes, one by one, so that such a block is sampled, counted
 * and timed as a malloc'd one. hooks_take: whether a block of size bytes is named at
 * all (tagging on, not heapprof's own call, HEAPPROF_SAMPLE's draw; *flags gets
 * HP2_F_SAMPLED). hooks_site: the site of the caller at st, counted as an allocation
 * (0: no stack), and *time the block's time code. hooks_named: once the block's slot
 * is written (the peak check). hooks_unnamed: a named block goes back. hooks_event and
 * hooks_free_event: its calls in the thread's ring (HEAPPROF_EVENTS).
 */
HP_HIDDEN bool hooks_take(uint64_t size, unsigned *flags);
HP_HIDDEN uint32_t hooks_site(const struct unwind_start *st, unsigned entry, uint64_t size,
			      unsigned flags, uint32_t *time);
HP_HIDDEN void hooks_named(uint64_t size);
HP_HIDDEN void hooks_unnamed(uint32_t site, uint64_t size, unsigned flags);
HP_HIDDEN void hooks_event(unsigned entry, uint64_t a, uint64_t b, uint64_t result,
			   uint32_t site);
HP_HIDDEN void hooks_free_event(const void *p, uint32_t site, const struct unwind_start *st);

#endif
