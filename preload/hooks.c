/*
 * The exported entry points of the malloc family of heapprof.so, a screen each: they
 * capture where the caller stands and call the tagging path (hooks_tag.c). No lock, no
 * stdio, no I/O: the heap itself is the profile. They carry the names real.h gives them
 * in this build (malloc, __wrap_malloc, heapprof_rust_malloc), which is why this file
 * is compiled once per build. Also the constructor (the work is hooks_start.c's).
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
#include "block.h"
#include "hooks_boot.h"
#include "counters.h"
#include "events.h"
#include "hooks.h"
#include "hooks_int.h"
#include "oom.h"
#include "options.h"
#include "real.h"
#include "table.h"
#include "triggers.h"
#include "unwind.h"
#include "util.h"

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
	return hooks_tag_malloc(size, &st);
}

/* free before the allocator is known, or with HEAPPROF_EVENTS: out of line, so that
 * free's usual way is one test and sets up no frame */
static __attribute__((noinline)) void free_slow(void *p, const struct unwind_start *st)
{
	if (unlikely(hp_opt.events))
		hooks_tag_free_event(p, st);
	hooks_free_block(p);
}

HP_EXPORT void HP_ENTRY(free)(void *p)
{
	struct unwind_start st;

	if (likely(__atomic_load_n(&hooks_free_plain, __ATOMIC_RELAXED))) {
		hooks_free_block_plain(p);
		return;
	}
	UNWIND_START(st);
	free_slow(p, &st);
}

HP_EXPORT void *HP_ENTRY(calloc)(size_t n, size_t elem)
{
	struct unwind_start st;
	size_t size;

	if (!__builtin_mul_overflow(n, elem, &size) && hooks_sample_skips(size))
		return hp_real.calloc(n, elem);
	UNWIND_START(st);
	return hooks_tag_calloc(n, elem, &st);
}

/* realloc's tagging path and its event: out of line, so that nothing of the export's
 * is live across the call and a skipped block's way sets up no frame */
static __attribute__((noinline)) void *realloc_tagged(void *p, size_t size,
						      const struct unwind_start *st)
{
	void *r = hooks_tag_realloc(p, size, HP2_ENTRY_REALLOC, st);

	HOOK_EVENT(HP2_ENTRY_REALLOC, (uintptr_t)p, size, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

HP_EXPORT void *HP_ENTRY(realloc)(void *p, size_t size)
{
	struct unwind_start st;

	if (hooks_realloc_skips(p, size))
		return p ? hp_real.realloc(p, size) : hp_real.malloc(size);
	UNWIND_START(st);
	return realloc_tagged(p, size, &st);
}

HP_EXPORT void *HP_ENTRY(reallocarray)(void *p, size_t n, size_t elem)
{
	struct unwind_start st;
	size_t size;
	void *r;

	UNWIND_START(st);
	r = hooks_tag_reallocarray(p, n, elem, &st);
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
	rc = hooks_tag_posix_memalign(out, align, size, &st);
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
	r = hooks_tag_aligned_alloc(align, size, &st);
	HOOK_EVENT(HP2_ENTRY_ALIGNED_ALLOC, align, size, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

HP_EXPORT void *HP_ENTRY(memalign)(size_t align, size_t size)
{
	struct unwind_start st;
	void *r;

	UNWIND_START(st);
	r = hooks_tag_memalign(align, size, &st);
	HOOK_EVENT(HP2_ENTRY_MEMALIGN, align, size, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

HP_EXPORT void *HP_ENTRY(valloc)(size_t size)
{
	struct unwind_start st;
	void *r;

	UNWIND_START(st);
	r = hooks_tag_valloc(size, &st);
	HOOK_EVENT(HP2_ENTRY_VALLOC, size, 0, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

HP_EXPORT void *HP_ENTRY(pvalloc)(size_t size)
{
	struct unwind_start st;
	void *r;

	UNWIND_START(st);
	r = hooks_tag_pvalloc(size, &st);
	HOOK_EVENT(HP2_ENTRY_PVALLOC, size, 0, (uintptr_t)r, r);
	HP_SCRUB();
	return r;
}

HP_EXPORT size_t HP_ENTRY(malloc_usable_size)(void *p)
{
	size_t n = hooks_tag_usable_size(p);

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

bool hooks_alone(void)
{
	/* the lookup from here sees the process's objects, then ours */
	void *api = dlsym(RTLD_DEFAULT, "heapprof_api_v1");
	Dl_info theirs, self;

	return !api || (dladdr(api, &theirs) && dladdr((void *)hooks_alone, &self) &&
			 theirs.dli_fbase == self.dli_fbase);
}
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
	if (!hooks_alone())
		return;	/* heapprof is in the process already: stay out of its way */
#endif
	hooks_start_process();
	check_first();
	hooks_start_interp();
}
