/*
 * What the files of the malloc family (hooks*.c) share and no other file sees: the
 * re-entry flag, the tagging switches, the inline first step of sampling, and the
 * steps of the tagging path that blocks named out of band take.
 * hooks.c: the exported entry points; hooks_tag.c: the tagging path behind them;
 * hooks_stack.c: stacks with Python frames; hooks_sample.c: HEAPPROF_SAMPLE and the
 * switches; hooks_boot.c: finding the allocator, at the first call (hooks_boot.h);
 * hooks_start.c: start-up and fork; hooks_pymalloc.c: CPython's object allocator,
 * whose blocks are named out of band (hooks_pymalloc.h).
 */
#ifndef HP_HOOKS_INT_H
#define HP_HOOKS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "block.h"
#include "compiler.h"
#include "events.h"
#include "hooks.h"
#include "hooks_boot.h"
#include "options.h"
#include "real.h"

struct interp;
struct unwind_start;

/*
 * The fast path of an allocation when sampling: a block the next sample point does not
 * fall into costs a subtraction, before any stack is looked at. hooks_sample_left, the
 * bytes left to this thread's next sample point (hooks_sample.c), is 0 whenever the fast
 * path may not answer, so that every call goes on to the slow path, whose draw
 * (hooks_take, or the malloc family's own) decides it again from the same state: until
 * the thread's first call (which comes after the allocator is known), without
 * sampling, with the event ring (which counts its points apart), while the thread is
 * off. With tagging off for the process the fast path answers on: a block it leaves out
 * is untagged and uncounted, as every block then is.
 */
extern HP_TLS uint64_t hooks_sample_left HP_HIDDEN;

static inline __attribute__((always_inline)) bool hooks_sample_skips(uint64_t size)
{
	if (size >= hooks_sample_left)
		return false;
	hooks_sample_left -= size;
	return true;
}

/*
 * For blocks heapprof names out of band (hooks_pymalloc.c: a slot word, not a header), the
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

/* Set while this thread unwinds, so that an allocation made by the unwinder itself
 * is tagged without a stack instead of recursing. */
extern HP_TLS bool in_hook HP_HIDDEN;

/* Off for the process (heapprof_enable, HEAPPROF_START=off, HEAPPROF_TOGGLE_SIGNAL:
 * api.c) or this thread (heapprof_thread_enable): blocks then pass through untagged
 * and uncounted. hooks_process_on is the one copy of the process's switch
 * (hooks_sample.c keeps both). */
extern bool hooks_process_on HP_HIDDEN;
extern HP_TLS bool hooks_thread_off HP_HIDDEN;
#define tagging_on (__atomic_load_n(&hooks_process_on, __ATOMIC_RELAXED) && !hooks_thread_off)

/* hooks_sample_take's slow path: the thread's first call, or a sample point reached. */
HP_HIDDEN bool hooks_sample_point(uint64_t size, unsigned *flags);
/* In a forked child: its threads draw their own points. */
HP_HIDDEN void hooks_sample_after_fork(void);

/*
 * Whether a block of size bytes gets a header: always, unless sampling. Sampled
 * blocks are the ones a Poisson process of one point per HEAPPROF_SAMPLE bytes
 * falls into, so a block is taken with probability 1 - exp(-size / period) and the
 * analyzer weighs it back by the inverse: an unbiased estimate, O(1) per call.
 * Inline: when sampling, nearly every call is the subtraction alone (hooks_sample_left is
 * 0 until the thread's first call, which so takes the slow path).
 */
static inline __attribute__((always_inline)) bool hooks_sample_take(uint64_t size, unsigned *flags)
{
	if (unlikely(!tagging_on))
		return false;	/* heapprof_enable(0) or heapprof_thread_enable(0) */
	if (likely(!hp_opt.sample))
		return true;
	if (likely(size < hooks_sample_left)) {
		hooks_sample_left -= size;
		return false;
	}
	return hooks_sample_point(size, flags);
}

/* An event for the thread's ring (HEAPPROF_EVENTS): the program's calls only, not
 * those heapprof makes itself while it unwinds (pthread_getattr_np's, say). */
#define HOOK_EVENT(entry, a, b, result, block)                                             \
	do {                                                                               \
		if (unlikely(hp_opt.events) && !in_hook)                                   \
			events_add(entry, (uint64_t)(a), (uint64_t)(b), (uint64_t)(result), \
				   block);                                                 \
	} while (0)

/*
 * The tagging path (hooks_tag.c), one function per entry point, each taking the
 * caller's place as UNWIND_START saw it in the export. malloc and calloc: the calls
 * sampling does not leave out at once (hooks_sample_skips); out of line, so that a
 * left-out block goes from the export to the allocator by a tail call.
 */
HP_HIDDEN void *hooks_tag_malloc(size_t size, const struct unwind_start *st);
HP_HIDDEN void *hooks_tag_calloc(size_t n, size_t elem, const struct unwind_start *st);
HP_HIDDEN void *hooks_tag_realloc(void *p, size_t size, unsigned entry,
				  const struct unwind_start *st);
HP_HIDDEN void *hooks_tag_reallocarray(void *p, size_t n, size_t elem,
				       const struct unwind_start *st);
HP_HIDDEN int hooks_tag_posix_memalign(void **out, size_t align, size_t size,
				       const struct unwind_start *st);
HP_HIDDEN void *hooks_tag_aligned_alloc(size_t align, size_t size, const struct unwind_start *st);
HP_HIDDEN void *hooks_tag_memalign(size_t align, size_t size, const struct unwind_start *st);
HP_HIDDEN void *hooks_tag_valloc(size_t size, const struct unwind_start *st);
HP_HIDDEN void *hooks_tag_pvalloc(size_t size, const struct unwind_start *st);
HP_HIDDEN size_t hooks_tag_usable_size(void *p);
/* free's call in the event ring (HEAPPROF_EVENTS only), with free's own stack */
HP_HIDDEN void hooks_tag_free_event(void *p, const struct unwind_start *st);
/* free of a block whose tag word carries our magic: checked whole, then counted */
HP_HIDDEN void hooks_free_tagged(void *p);

/*
 * A block without our magic (allocated before us, or left out by sampling) goes
 * straight to the allocator from here: the tagged path, and the registers it saves,
 * stay out of line, so free of an unsampled block costs a load and a compare.
 */
static inline __attribute__((always_inline)) void hooks_free_block(void *p)
{
	if (!p || arena_owns(p))
		return;
	if (block_has_magic(p))
		hooks_free_tagged(p);
	else if (boot_ensure())
		hp_real.free(p);	/* not ours: allocated before us, or not sampled */
}

/*
 * Whether free may take hooks_free_block_plain(): the allocator known, no event ring.
 * Set once, when the allocator is found (hooks_boot.c).
 */
extern bool hooks_free_plain HP_HIDDEN;

/*
 * hooks_free_block once hooks_free_plain holds: every way out a tail call, so that the
 * exported free sets up no frame (a program frees about as often as it allocates, and
 * with sampling nearly every block is unsampled: this is the whole of its cost).
 */
static inline __attribute__((always_inline)) void hooks_free_block_plain(void *p)
{
	if (!p || arena_owns(p))
		return;
	if (block_has_magic(p))
		hooks_free_tagged(p);
	else
		hp_real.free(p);
}

/*
 * realloc's fast path when sampling: a block without our magic whose new size the next
 * sample point does not fall into is the allocator's affair alone, as malloc's skip is
 * (a NULL p is a malloc). Size 0, a block of ours or of the arena, and a sample point
 * go the tagging path's way.
 */
static inline __attribute__((always_inline)) bool hooks_realloc_skips(const void *p, size_t size)
{
	if (!size || size >= hooks_sample_left || (p && (arena_owns(p) || block_has_magic(p))))
		return false;
	hooks_sample_left -= size;
	return true;
}

/*
 * Python frames a stack may hold (each a pair of words after the native pcs): 0 while
 * no interpreter heapprof knows runs here, or with HEAPPROF_PYTHON=0; else
 * HEAPPROF_FRAMES, and never so many that a record could pass HP2_MAX_FRAMES words.
 * Set once by hooks_start_interp(), before the program's own code runs; hooks_stack.c
 * keeps it.
 */
extern unsigned hooks_interp_pairs HP_HIDDEN;
/* the interpreter whose frames those are (interp.h), set before hooks_interp_pairs */
extern const struct interp *hooks_interp HP_HIDDEN;

/* The id of the stack record (table.h) of a hook's caller, st filled by UNWIND_START
 * in the exported function (unwind.h); 0: no stack (inside a hook, or too early).
 * maps.c gets it from hooks_boot.c, for the callers of mmap. */
HP_HIDDEN uint32_t hooks_stack_id(const struct unwind_start *st);

/* tag()'s site when Python frames may be recorded (hooks_stack.c): out of line, so
 * that a process without Python keeps the native path as it was. */
struct hp_site_rec;
HP_HIDDEN struct hp_site_rec *hooks_site_interp(const struct unwind_start *st, unsigned entry);

/* Start-up (hooks_start.c), in this order, from hooks.c's constructor. */
HP_HIDDEN void hooks_start_process(void);
HP_HIDDEN void hooks_start_interp(void);

#endif
