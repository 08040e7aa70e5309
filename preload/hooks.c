/*
 * The malloc family of heapprof.so. Each hook asks the real allocator for the block
 * plus room for a header, and tags it (block.h) with the caller's stack. No
 * lock, no stdio, no I/O: the heap itself is the profile. The entry points carry the
 * names real.h gives them in this build (malloc, __wrap_malloc, heapprof_rust_malloc).
 * Also the constructor, which hooks_start.c does the work of.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "attach.h"
#include "block.h"
#include "boot.h"
#include "counters.h"
#include "events.h"
#include "hooks.h"
#include "hooks_int.h"
#include "oom.h"
#include "options.h"
#include "python.h"
#include "real.h"
#include "table.h"
#include "triggers.h"
#include "unwind.h"
#include "util.h"

HP_TLS bool in_hook;

/* An event for the thread's ring (HEAPPROF_EVENTS): the program's calls only, not
 * those heapprof makes itself while it unwinds (pthread_getattr_np's, say). */
#define HOOK_EVENT(entry, a, b, result, block)                                             \
	do {                                                                               \
		if (unlikely(hp_opt.events) && !in_hook)                                   \
			events_add(entry, (uint64_t)(a), (uint64_t)(b), (uint64_t)(result), \
				   block);                                                 \
	} while (0)

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

/* ---- Python frames (python.h) ------------------------------------------------------ */

unsigned hooks_python_pairs;	/* hooks_int.h */

/*
 * The thread's Python frames, innermost first, as word pairs (include/heapprof_format.h)
 * into w[0..2 * max - 1]; returns the words written (0: no Python on this thread).
 * Out of line: its frame array is only on the stack of the threads that have Python.
 */
static __attribute__((noinline)) unsigned python_words(uintptr_t *w, unsigned max)
{
	struct python_frame f[max];
	unsigned n = python_capture(f, max);

	for (unsigned i = 0; i < n; i++) {
		const void *rec = python_remember(f[i].code);
		unsigned fl = f[i].flags & PYTHON_F_ENTRY ? HP2_PYFRAME_ENTRY : 0;

		/* no record (memory, or one being made right now): the object names it,
		 * while it lives */
		w[2 * i] = (uintptr_t)hp2_pyframe_word(f[i].offset, rec ? fl : fl | HP2_PYFRAME_RAW);
		w[2 * i + 1] = rec ? (uintptr_t)rec : f[i].code;
	}
	return 2 * n;
}

/*
 * Append the Python words after the n native pcs of a capture (pcs has room for
 * 2 * hooks_python_pairs more after pcs[n]); returns how many, and *py their hash for the
 * walk memo. keep: the native pcs the stack keeps (n, or n - 1 when the walk was cut):
 * what the record's HP2_MAX_FRAMES leaves to Python.
 */
static unsigned python_append(uintptr_t *pcs, unsigned n, unsigned keep, uint64_t *py)
{
	unsigned max = (HP2_MAX_FRAMES - keep) / 2, nw;

	if (max > hooks_python_pairs)
		max = hooks_python_pairs;
	nw = max ? python_words(pcs + n, max) : 0;
	*py = table_words_hash(pcs + n, nw);
	return nw;
}

/* Once the native walk is in place: the nw Python words behind the keep native pcs
 * (they were after pcs[n - 1]); returns the stack record's flags (TRUNCATED: the walk
 * was cut at the frame limit, or stopped early: cut, unwind_walk_cut). */
static unsigned python_close(uintptr_t *pcs, unsigned n, unsigned keep, unsigned nw, bool cut)
{
	if (nw && keep != n)
		memmove(pcs + keep, pcs + n, nw * sizeof(*pcs));
	return (n > keep || cut ? HP2_STACK_TRUNCATED : 0) | (nw ? HP2_STACK_PYTHON : 0);
}

/*
 * tag()'s site when Python frames may be recorded: the native walk, the Python words
 * after it. Out of line, so that a process without Python keeps the native path as
 * it was (its frame, and this larger one, only where Python runs).
 */
static __attribute__((noinline)) struct hp_site_rec *site_python(const struct unwind_start *st,
								  unsigned entry)
{
	/* one frame more than kept: a walk that fills it was cut; then the Python words */
	uintptr_t pcs[hp_frames + 1 + 2 * hooks_python_pairs];
	struct table_memo *memo;
	uint64_t walk, py;
	unsigned n, keep, nw;

	n = unwind_capture_walk(pcs, hp_frames + 1, st, &walk);
	keep = n > hp_frames ? hp_frames : n;
	/* after pcs[n - 1]: a replayed walk fills pcs[1..n - 1] only */
	nw = python_append(pcs, n, keep, &py);
	memo = table_memo_find_py(walk, py);
	if (walk && !memo)
		unwind_walk_frames(walk, pcs);	/* the table needs them this once */
	return table_site(pcs, keep + nw, python_close(pcs, n, keep, nw, unwind_walk_cut(walk)),
			  table_thread_slot, entry, walk, py, memo);
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
		if (unlikely(__atomic_load_n(&hooks_python_pairs, __ATOMIC_RELAXED))) {
			s = site_python(st, entry);
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
	if (unlikely(hp_opt.sample && !__atomic_load_n(&hooks_sample_fast, __ATOMIC_RELAXED)))
		hooks_sample_fast_update();	/* the first call after the boot, or after a change */
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
static __attribute__((noinline)) void free_tagged(void *p)
{
	uint64_t t = block_tag(p);

	if (t) {
		void *real = (char *)p - block_offset(t);

		count_free(p, t);
		block_erase(p);
		HP_SCRUB();	/* the tag read: the allocator's free returns to the program */
		hp_real.free(real);
	} else if (boot_ensure()) {
		HP_SCRUB();
		hp_real.free(p);	/* the magic by chance, in a block not ours */
	}
}

/*
 * A block without our magic (allocated before us, or left out by sampling) goes
 * straight to the allocator from here: the tagged path, and the registers it saves,
 * stay out of line, so free of an unsampled block costs a load and a compare.
 */
static inline __attribute__((always_inline)) void do_free(void *p)
{
	if (!p || arena_owns(p))
		return;
	if (block_has_magic(p))
		free_tagged(p);
	else if (boot_ensure())
		hp_real.free(p);	/* not ours: allocated before us, or not sampled */
}

static size_t usable_size(void *p)
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
	do_free(p);
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

static void *do_realloc(void *p, size_t size, unsigned entry, const struct unwind_start *st)
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
		do_free(p);	/* glibc's realloc(p, 0): free and return NULL */
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

static void *do_reallocarray(void *p, size_t n, size_t elem, const struct unwind_start *st)
{
	size_t size;

	if (__builtin_mul_overflow(n, elem, &size)) {
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc(p, size, HP2_ENTRY_REALLOCARRAY, st);
}

static bool power_of_two(size_t x)
{
	return x && !(x & (x - 1));
}

static int do_posix_memalign(void **out, size_t align, size_t size,
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
static void *do_aligned_alloc(size_t align, size_t size, const struct unwind_start *st)
{
	if (!power_of_two(align)) {
		/* before the allocator is known, the arena takes the memalign way */
		if (boot_ensure() && !real_takes_align(align))
			return NULL;
		align = memalign_align(align);
	}
	return do_memalign(align, size, HP2_ENTRY_ALIGNED_ALLOC, st);
}

static void *do_pvalloc(size_t size, const struct unwind_start *st)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), rounded;

	if (!add_room(size, page - 1, &rounded))
		return NULL;
	rounded &= ~(page - 1);
	return do_memalign(page, rounded ? rounded : page, HP2_ENTRY_PVALLOC, st);
}

/*
 * The paths of malloc and calloc that may tag, out of line: their frame (the walk's
 * pcs[], the registers they save) is set up only for the calls that take them, and a
 * block sampling leaves out goes from the export to the allocator by a tail call.
 */
static __attribute__((noinline)) void *malloc_hooked(size_t size,
						     const struct unwind_start *st)
{
	void *r = do_malloc(size, HP2_ENTRY_MALLOC, st);

	HOOK_EVENT(HP2_ENTRY_MALLOC, size, 0, (uintptr_t)r, r);
	HP_SCRUB();	/* the export returns from here: its tail call */
	return r;
}

static __attribute__((noinline)) void *calloc_hooked(size_t n, size_t elem,
						     const struct unwind_start *st)
{
	void *r = do_calloc(n, elem, st);

	HOOK_EVENT(HP2_ENTRY_CALLOC, n, elem, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

/*
 * The exported entry points: each captures where its caller stands (UNWIND_START
 * must be expanded here, in the function the program called) and, with
 * HEAPPROF_EVENTS, records the call in the thread's ring.
 */
HP_EXPORT void *HP_ENTRY(malloc)(size_t size)
{
	struct unwind_start st;

	if (hooks_sample_skips(size))
		return hp_real.malloc(size);
	UNWIND_START(st);
	return malloc_hooked(size, &st);
}

/*
 * The id of the stack record of the hook's caller at st (hooks.h), Python frames
 * included; 0 while this thread is inside a hook already or stacks are not taken yet.
 */
uint32_t hooks_stack_id(const struct unwind_start *st)
{
	unsigned pairs = __atomic_load_n(&hooks_python_pairs, __ATOMIC_RELAXED);
	uintptr_t pcs[hp_frames + 1 + 2 * pairs];
	unsigned n, keep, nw;
	uint32_t stack;
	uint64_t py;

	if (in_hook || !hp_stacks)
		return 0;
	in_hook = true;
	n = unwind_capture(pcs, hp_frames + 1, st);
	keep = n > hp_frames ? hp_frames : n;
	nw = pairs ? python_append(pcs, n, keep, &py) : 0;
	stack = table_stack_id(pcs, keep + nw, python_close(pcs, n, keep, nw, unwind_cut));
	in_hook = false;
	return stack;
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

static __attribute__((noinline, cold)) void free_event(void *p, const struct unwind_start *st)
{
	if (!in_hook)
		events_add(HP2_ENTRY_FREE, (uintptr_t)p, free_stack(st), 0, p);
}

HP_EXPORT void HP_ENTRY(free)(void *p)
{
	if (unlikely(hp_opt.events)) {
		struct unwind_start st;

		UNWIND_START(st);
		free_event(p, &st);
	}
	do_free(p);
}

HP_EXPORT void *HP_ENTRY(calloc)(size_t n, size_t elem)
{
	struct unwind_start st;
	size_t size;

	if (!__builtin_mul_overflow(n, elem, &size) && hooks_sample_skips(size))
		return hp_real.calloc(n, elem);
	UNWIND_START(st);
	return calloc_hooked(n, elem, &st);
}

HP_EXPORT void *HP_ENTRY(realloc)(void *p, size_t size)
{
	struct unwind_start st;
	void *r;

	UNWIND_START(st);
	r = do_realloc(p, size, HP2_ENTRY_REALLOC, &st);
	HOOK_EVENT(HP2_ENTRY_REALLOC, (uintptr_t)p, size, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

HP_EXPORT void *HP_ENTRY(reallocarray)(void *p, size_t n, size_t elem)
{
	struct unwind_start st;
	size_t size;
	void *r;

	UNWIND_START(st);
	r = do_reallocarray(p, n, elem, &st);
	/* a product that overflows (refused, ENOMEM) is recorded as SIZE_MAX, not wrapped */
	HOOK_EVENT(HP2_ENTRY_REALLOCARRAY, (uintptr_t)p,
		   __builtin_mul_overflow(n, elem, &size) ? SIZE_MAX : size, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

HP_EXPORT int HP_ENTRY(posix_memalign)(void **out, size_t align, size_t size)
{
	struct unwind_start st;
	int rc;

	UNWIND_START(st);
	rc = do_posix_memalign(out, align, size, &st);
	HOOK_EVENT(HP2_ENTRY_POSIX_MEMALIGN, align, size, rc ? (uint64_t)rc : (uintptr_t)*out,
	      rc ? NULL : *out);
	HP_SCRUB();
	return rc;
}

HP_EXPORT void *HP_ENTRY(aligned_alloc)(size_t align, size_t size)
{
	struct unwind_start st;
	void *r;

	UNWIND_START(st);
	r = do_aligned_alloc(align, size, &st);
	HOOK_EVENT(HP2_ENTRY_ALIGNED_ALLOC, align, size, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

HP_EXPORT void *HP_ENTRY(memalign)(size_t align, size_t size)
{
	struct unwind_start st;
	void *r;

	UNWIND_START(st);
	r = do_memalign(memalign_align(align), size, HP2_ENTRY_MEMALIGN, &st);
	HOOK_EVENT(HP2_ENTRY_MEMALIGN, align, size, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

HP_EXPORT void *HP_ENTRY(valloc)(size_t size)
{
	struct unwind_start st;
	void *r;

	UNWIND_START(st);
	r = do_memalign((size_t)sysconf(_SC_PAGESIZE), size, HP2_ENTRY_VALLOC, &st);
	HOOK_EVENT(HP2_ENTRY_VALLOC, size, 0, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

HP_EXPORT void *HP_ENTRY(pvalloc)(size_t size)
{
	struct unwind_start st;
	void *r;

	UNWIND_START(st);
	r = do_pvalloc(size, &st);
	HOOK_EVENT(HP2_ENTRY_PVALLOC, size, 0, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

HP_EXPORT size_t HP_ENTRY(malloc_usable_size)(void *p)
{
	size_t n = usable_size(p);

	HP_SCRUB();	/* the tag read */
	return n;
}

/*
 * The same entry points under hidden names, for heapprof's operator new and delete
 * (new_delete.c): a direct call, never through the PLT, so that they reach these
 * hooks whichever malloc comes first in the process.
 */
extern __typeof(malloc) hooks_malloc __attribute__((alias(HP_ENTRY_STR(malloc)), copy(HP_ENTRY(malloc))));
extern __typeof(aligned_alloc) hooks_aligned_alloc
	__attribute__((alias(HP_ENTRY_STR(aligned_alloc)), copy(HP_ENTRY(aligned_alloc))));
extern __typeof(free) hooks_free __attribute__((alias(HP_ENTRY_STR(free)), copy(HP_ENTRY(free))));

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

#ifdef HP_ATTACH
/* ... and the rest, for attach.c, which writes their addresses into the references of
 * a process heapprof-attach.so was loaded into */
#define HOOKS_ALIAS(name) \
	extern __typeof(name) hooks_##name \
		__attribute__((alias(HP_ENTRY_STR(name)), copy(HP_ENTRY(name))))
HOOKS_ALIAS(calloc);
HOOKS_ALIAS(realloc);
HOOKS_ALIAS(reallocarray);
HOOKS_ALIAS(posix_memalign);
HOOKS_ALIAS(memalign);
HOOKS_ALIAS(valloc);
HOOKS_ALIAS(pvalloc);
HOOKS_ALIAS(malloc_usable_size);
#endif

#if !defined(HP_ENTRIES_WRAP) && !defined(HP_ENTRIES_RUST) && !defined(HP_ATTACH)
/*
 * heapprof.so: a malloc before ours in the lookup order (LD_PRELOAD="libjemalloc.so.2
 * heapprof.so", or a program that defines its own) gets every call: heapprof then
 * records nothing, so say so once, at start-up. A non-PIE program that takes malloc's
 * address (python3's allocator table) has a canonical PLT entry: dlsym finds that stub,
 * which only jumps to ours; its malloc symbol is undefined there.
 */
static void check_first(void)
{
	void *first = dlsym(RTLD_DEFAULT, "malloc");
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!first || first == (void *)hooks_malloc)
		return;
	if (dladdr1(first, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_shndx == SHN_UNDEF)
		return;
	hp_warn("malloc is not heapprof's but ",
		dladdr(first, &info) && info.dli_fname && *info.dli_fname ? info.dli_fname :
									   "the program's",
		"'s, which comes first: nothing will be recorded (put heapprof.so first in "
		"LD_PRELOAD, or name the allocator in HEAPPROF_ALLOCATOR)");
}
#else
/* libheapprof.a and the Rust crate call us by names of their own: nothing comes first;
 * heapprof-attach.so comes last, and attach.c says what it did */
static void check_first(void)
{
}
#endif

/*
 * heapprof's constructor, here because this file is linked into every build (an
 * archive member nothing calls would be left out: so is hooks_start.c, through this
 * call). Runs before the program's constructors (after those of the libraries it uses):
 * makes sure the allocator is known even in a program that never allocates, and
 * that a forked child knows it is another process.
 */
__attribute__((constructor)) static void hooks_start(void)
{
#ifdef HP_ATTACH
	if (!attach_may_start())
		return;	/* heapprof is in the process already: stay out of its way */
#endif
	hooks_start_process();
	check_first();
	hooks_start_python();
}
