/*
 * The tagging path of the malloc family: each call asks the real allocator for the
 * block plus room for a header and tags it (block.h) with the caller's stack, found
 * here; free checks and counts the tag. Also the steps hooks_pymalloc.c takes for blocks
 * named out of band. The exported entry points (hooks.c) call these.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "block.h"
#include "hooks_boot.h"
#include "counters.h"
#include "events.h"
#include "hooks.h"
#include "hooks_int.h"
#include "oom.h"
#include "options.h"
#include "real.h"
#include "sampled.h"
#include "table.h"
#include "triggers.h"
#include "unwind.h"
#include "util.h"

HP_TLS bool in_hook;	/* hooks_int.h */

/* Alignment malloc promises on this target: the header room keeps it. */
#define HP_ALIGN (__alignof__(max_align_t) < 16 ? 16 : __alignof__(max_align_t))

/* Largest alignment whose offset the header can record (16 << HP2_MAX_SHIFT). */
#define HP_MAX_TAGGED_ALIGN ((size_t)16 << HP2_MAX_SHIFT)

/* ---- counting (counters.h) ------------------------------------------------------- */

/* The block at user (tag t) goes back: count it for the site that made it, unless
 * it has none or heapprof itself frees it. */
static inline __attribute__((always_inline)) void count_free(void *user, uint64_t t)
{
	uint32_t id = (uint32_t)(((uint64_t *)user)[-2] >> 32);

	if (!id || in_hook || !hp_stacks)
		return;
	counters_free(id, block_size(user, t), block_flags(t));
}

/* ---- tagging ---------------------------------------------------------------------- */

/* The site id of the caller at st for a block of size bytes taken at ms, counted as
 * an allocation (0: no stack, or heapprof's own call). Inline in each allocation path:
 * the calls it saves are a fifth of its cost. */
static inline __attribute__((always_inline)) uint32_t site_take(uint64_t size, unsigned entry,
								 unsigned flags, uint64_t ms,
								 const struct unwind_start *st)
{
	uint32_t site = 0;

	if (likely(hp_stacks && !in_hook)) {
		/* one frame more than kept: a walk that fills it was cut */
		uintptr_t pcs[hp_frames + 1];
		struct table_memo *memo;
		uint64_t walk;
		struct hp_site_rec *s;
		unsigned n, sflags;

		in_hook = true;
		if (unlikely(__atomic_load_n(&hooks_interp_pairs, __ATOMIC_RELAXED))) {
			s = hooks_site_interp(st, entry);
		} else {
			n = unwind_capture_walk(pcs, hp_frames + 1, st, &walk);
			memo = table_memo_find(walk);
			sflags = 0;	/* a memo's stack is known: no flags to work out */
			if (unlikely(!memo)) {
				if (walk)
					unwind_walk_frames(walk, pcs);	/* the table needs them this once */
				if (n > hp_frames || unwind_walk_cut(walk))
					sflags = HP2_STACK_TRUNCATED;
			}
			s = table_site(pcs, n > hp_frames ? hp_frames : n, sflags, table_thread_slot,
				       entry, walk, 0, memo);
		}
		if (s)
			site = table_site_id(s);
		counters_alloc(s, size, flags, ms);
		in_hook = false;
	}
	return site;
}

/* Tag real (NULL passes through) with the caller's stack; returns the user pointer. */
static inline __attribute__((always_inline)) void *tag(void *real, unsigned shift, uint64_t size, unsigned entry, unsigned flags,
		 const struct unwind_start *st)
{
	uint32_t site, time;
	uint64_t ms;

	if (unlikely(!real)) {
		if (unlikely(hp_opt.oom) && !in_hook)
			oom_null(size);	/* HEAPPROF_OOM's last look, before the program's */
		return NULL;
	}
	ms = table_ms();
	site = site_take(size, entry, flags, ms, st);
	time = hp2_time_encode(ms);
	real = block_write(real, shift, size, site, flags, time);
	if (unlikely(sampled_lean) && (flags & HP2_F_SAMPLED))
		sampled_add(real);	/* after its header: a lean snapshot reads it there */
	if (unlikely(triggers_tag_work) && !in_hook)
		triggers_tagged(size);	/* after the header: a snapshot holds this block */
	return real;
}

/* size + offset, or false (errno ENOMEM) when it does not fit a size_t. */
static bool add_room(size_t size, size_t offset, size_t *total)
{
	if (__builtin_add_overflow(size, offset, total)) {
		errno = ENOMEM;
		return false;
	}
	return true;
}

/* A block from the real malloc with a header: the sampling decision already made. */
static inline __attribute__((always_inline)) void *malloc_tagged(size_t size, unsigned entry, unsigned flags,
			   const struct unwind_start *st)
{
	unsigned shift = block_shift(size);
	size_t total;

	if (!add_room(size, (size_t)16 << shift, &total))
		return NULL;
	return tag(hp_real.malloc(total), shift, size, entry, flags, st);
}

static inline __attribute__((always_inline)) void *
do_malloc(size_t size, unsigned entry, const struct unwind_start *st)
{
	unsigned flags = 0;

	if (unlikely(!boot_ensure()))
		return arena_alloc(size, 16);
	if (!hooks_sample_take(size, &flags))
		return hp_real.malloc(size);
	return malloc_tagged(size, entry, flags, st);
}

static void *do_memalign(size_t align, size_t size, unsigned entry,
			 const struct unwind_start *st)
{
	unsigned flags = 0, shift = 0;
	size_t total;

	if (align <= HP_ALIGN)
		return do_malloc(size, entry, st);
	if (unlikely(!boot_ensure()))
		return arena_alloc(size, align);
	if (align > HP_MAX_TAGGED_ALIGN || !hooks_sample_take(size, &flags))
		return hp_real.memalign(align, size); /* untagged: free() passes it through */
	while (((size_t)16 << shift) < align)
		shift++;
	if (!add_room(size, align, &total))
		return NULL;
	return tag(hp_real.memalign(align, total), shift, size, entry, flags, st);
}

/* free of a block whose tag word carries our magic: checked whole, then counted */
__attribute__((noinline)) void hooks_free_tagged(void *p)
{
	uint64_t t = block_tag(p);

	if (t) {
		void *real = (char *)p - block_offset(t);

		count_free(p, t);
		block_erase(p);
		if (unlikely(sampled_lean) && (block_flags(t) & HP2_F_SAMPLED))
			sampled_drop(p);	/* before the memory goes back */
		HP_SCRUB();	/* the tag read: the allocator's free returns to the program */
		hp_real.free(real);
	} else if (boot_ensure()) {
		HP_SCRUB();
		hp_real.free(p);	/* the magic by chance, in a block not ours */
	}
}

size_t hooks_tag_usable_size(void *p)
{
	uint64_t t;

	if (!p)
		return 0;
	if (arena_owns(p))
		return arena_size(p);
	t = block_tag(p);
	if (!t)
		return boot_ensure() && hp_real.usable_size ? hp_real.usable_size(p) : 0;
	if (!hp_real.usable_size)
		return block_size(p, t);
	return hp_real.usable_size((char *)p - block_offset(t)) - block_offset(t);
}

/* Copy into a fresh block and free the old one: for blocks realloc cannot resize in
 * place (arena, over-aligned, a size that changes the header) and for foreign ones
 * before the allocator is known. */
static void *move_block(void *p, size_t old_size, size_t size, unsigned entry,
			const struct unwind_start *st)
{
	void *q = do_malloc(size, entry, st);

	if (!q)
		return NULL;
	memcpy(q, p, old_size < size ? old_size : size);
	hooks_free_block(p);
	return q;
}

/* realloc of a block without a header: the allocator's, unless sampling takes it. */
static void *realloc_untagged(void *p, size_t size, unsigned entry, const struct unwind_start *st)
{
	unsigned flags = 0;

	if (!boot_ensure())
		return NULL;
	if (hp_opt.sample && size && hp_real.usable_size && hooks_sample_take(size, &flags)) {
		/* taken by this draw: a tagged copy, without a second draw in do_malloc */
		size_t old = hp_real.usable_size(p);
		void *q = malloc_tagged(size, entry, flags, st);

		if (!q)
			return NULL;
		memcpy(q, p, old < size ? old : size);
		hp_real.free(p);
		return q;
	}
	return hp_real.realloc(p, size);
}

void *hooks_tag_realloc(void *p, size_t size, unsigned entry, const struct unwind_start *st)
{
	unsigned flags = 0;
	uint64_t t;
	size_t total;
	bool keep;
	void *r;

	if (!p)
		return do_malloc(size, entry, st);
	if (arena_owns(p))
		return move_block(p, arena_size(p), size, entry, st);
	t = block_tag(p);
	if (!t)
		return realloc_untagged(p, size, entry, st);
	if (size == 0) {
		hooks_free_block(p);	/* glibc's realloc(p, 0): free and return NULL */
		return NULL;
	}
	if (block_offset(t) != 16 || block_shift(size) != 0)
		return move_block(p, block_size(p, t), size, entry, st);
	if (!add_room(size, 16, &total))
		return NULL;
	/* The new size is a new allocation: with sampling, a new draw (keeping the old
	 * decision and weighing it by the new size would be biased: a string built big
	 * and shrunk would count as if sampled at its small size) */
	keep = hooks_sample_take(size, &flags);
	/* Kill the tag first: the allocator's copy of the block, and the old block it
	 * frees, must not hold a header that still validates. The old block counts as
	 * freed, the new one as allocated (if the realloc fails, as freed all the same). */
	count_free(p, t);
	block_erase(p);
	if (unlikely(sampled_lean) && (block_flags(t) & HP2_F_SAMPLED))
		sampled_drop(p);
	/* Across the allocator's call the tag is kept with its magic flipped: held as it
	 * is, in a callee-saved register the allocator pushed, it left a copy on the stack
	 * that a scan later found below the program's frames (a damaged header, to it) */
	__asm__ volatile("" : "+r"(t));
	t ^= (uint64_t)0xFFFF << 48;
	__asm__ volatile("" : "+r"(t));
	r = hp_real.realloc((char *)p - 16, total);
	if (!r) {
		/* the old block stays the program's */
		block_revive(p, t ^ (uint64_t)0xFFFF << 48);
		if (unlikely(sampled_lean) && (block_flags(t) & HP2_F_SAMPLED))
			sampled_add(p);
		if (unlikely(hp_opt.oom) && !in_hook)
			oom_null(size);
		return NULL;
	}
	if (!keep) {
		memmove(r, (char *)r + 16, size);	/* left out: no header, as malloc's */
		return r;
	}
	return tag(r, 0, size, entry, flags, st);
}

static void *do_calloc(size_t n, size_t elem, const struct unwind_start *st)
{
	size_t size, total;
	unsigned flags = 0, shift;

	if (__builtin_mul_overflow(n, elem, &size)) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(!boot_ensure()))
		return arena_alloc(size, 16);	/* static memory: already zero */
	if (!hooks_sample_take(size, &flags))
		return hp_real.calloc(n, elem);
	shift = block_shift(size);
	if (!add_room(size, (size_t)16 << shift, &total))
		return NULL;
	return tag(hp_real.calloc(1, total), shift, size, HP2_ENTRY_CALLOC, flags, st);
}

void *hooks_tag_reallocarray(void *p, size_t n, size_t elem, const struct unwind_start *st)
{
	size_t size;

	if (__builtin_mul_overflow(n, elem, &size)) {
		errno = ENOMEM;
		return NULL;
	}
	return hooks_tag_realloc(p, size, HP2_ENTRY_REALLOCARRAY, st);
}

static bool power_of_two(size_t x)
{
	return x && !(x & (x - 1));
}

int hooks_tag_posix_memalign(void **out, size_t align, size_t size,
			     const struct unwind_start *st)
{
	void *p;

	if (!power_of_two(align) || align % sizeof(void *))
		return EINVAL;
	p = do_memalign(align, size, HP2_ENTRY_POSIX_MEMALIGN, st);
	if (!p)
		return ENOMEM;	/* errno as the allocator left it: glibc's is ENOMEM too */
	*out = p;
	return 0;
}

/* memalign's alignment: glibc rounds one that is not a power of two up to one, and
 * passes those above the top power of two on, to be refused (EINVAL). */
static size_t memalign_align(size_t align)
{
	while (!power_of_two(align) && align < ((size_t)1 << (sizeof(size_t) * 8 - 1)))
		align = align ? (align | (align >> 1)) + 1 : 1;
	return align;
}

/*
 * aligned_alloc with an alignment that is not a power of two (0 included) is the
 * implementation's choice, and libcs differ: glibc up to 2.37 takes it as memalign
 * does, glibc 2.38 on refuses it with EINVAL. real_takes_align() asks the aligned_alloc
 * the program would have had without us; refused, we return NULL with its errno.
 */
void *hooks_tag_aligned_alloc(size_t align, size_t size, const struct unwind_start *st)
{
	if (!power_of_two(align)) {
		/* before the allocator is known, the arena takes the memalign way */
		if (boot_ensure() && !real_takes_align(align))
			return NULL;
		align = memalign_align(align);
	}
	return do_memalign(align, size, HP2_ENTRY_ALIGNED_ALLOC, st);
}

void *hooks_tag_pvalloc(size_t size, const struct unwind_start *st)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), rounded;

	if (!add_room(size, page - 1, &rounded))
		return NULL;
	rounded &= ~(page - 1);
	return do_memalign(page, rounded ? rounded : page, HP2_ENTRY_PVALLOC, st);
}

/*
 * The paths of malloc and calloc that may tag (hooks_int.h), out of line: their frame (the walk's
 * pcs[], the registers they save) is set up only for the calls that take them, and a
 * block sampling leaves out goes from the export to the allocator by a tail call.
 */
__attribute__((noinline)) void *hooks_tag_malloc(size_t size,
						     const struct unwind_start *st)
{
	void *r = do_malloc(size, HP2_ENTRY_MALLOC, st);

	HOOK_EVENT(HP2_ENTRY_MALLOC, size, 0, (uintptr_t)r, r);
	HP_SCRUB();	/* the export returns from here: its tail call */
	return r;
}

__attribute__((noinline)) void *hooks_tag_calloc(size_t n, size_t elem,
						     const struct unwind_start *st)
{
	void *r = do_calloc(n, elem, st);

	HOOK_EVENT(HP2_ENTRY_CALLOC, n, elem, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

/*
 * A free in the ring names its own stack (a stack record without a site: free has no
 * counters of its own), so that the analyzer shows who freed the block, not who made
 * it; the block's site still goes in the slot. Out of line: only with HEAPPROF_EVENTS.
 */
static uint32_t free_stack(const struct unwind_start *st)
{
	return hooks_stack_id(st);
}

__attribute__((noinline, cold)) void hooks_tag_free_event(void *p, const struct unwind_start *st)
{
	if (!in_hook)
		events_add(HP2_ENTRY_FREE, (uintptr_t)p, free_stack(st), 0, p);
}

/* ---- blocks named out of band (hooks.h) ----------------------------------------- */

bool hooks_take(uint64_t size, unsigned *flags)
{
	return !in_hook && hooks_sample_take(size, flags);
}

uint32_t hooks_site(const struct unwind_start *st, unsigned entry, uint64_t size,
		    unsigned flags, uint32_t *time)
{
	uint64_t ms = table_ms();

	*time = hp2_time_encode(ms);
	return site_take(size, entry, flags, ms, st);
}

void hooks_named(uint64_t size)
{
	if (unlikely(triggers_tag_work) && !in_hook)
		triggers_tagged(size);	/* after the slot: a snapshot holds this block */
}

void hooks_unnamed(uint32_t site, uint64_t size, unsigned flags)
{
	if (site && !in_hook && hp_stacks)
		counters_free(site, size, flags);
}

void hooks_event(unsigned entry, uint64_t a, uint64_t b, uint64_t result, uint32_t site)
{
	if (!in_hook)
		events_add_site(entry, a, b, result, site);
}

void hooks_free_event(const void *p, uint32_t site, const struct unwind_start *st)
{
	if (!in_hook)
		events_add_site(HP2_ENTRY_FREE, (uintptr_t)p, free_stack(st), 0, site);
}


/* memalign and valloc as their exports take them (hooks_int.h) */
void *hooks_tag_memalign(size_t align, size_t size, const struct unwind_start *st)
{
	return do_memalign(memalign_align(align), size, HP2_ENTRY_MEMALIGN, st);
}

void *hooks_tag_valloc(size_t size, const struct unwind_start *st)
{
	return do_memalign((size_t)sysconf(_SC_PAGESIZE), size, HP2_ENTRY_VALLOC, st);
}
