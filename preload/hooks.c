/*
 * The malloc family of heapprof.so. Each hook asks the real allocator for the block
 * plus room for a header, and tags it through hp_tag.c with the caller's stack. No
 * lock, no stdio, no I/O: the heap itself is the profile.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "hp_tag.h"
#include "unwind.h"

#define HP_EXPORT __attribute__((visibility("default")))

/* Set while this thread unwinds, so that an allocation made by the unwinder itself
 * is tagged without a stack instead of recursing. */
static HP_TLS bool in_hook;

/* Largest alignment whose offset the header can record (a 32-bit field). */
#define HP_MAX_TAGGED_ALIGN ((size_t)1 << 30)

static void *tag(void *real, size_t offset, size_t size, const struct unwind_start *st)
{
	uintptr_t pcs[HP_MAX_FRAMES];
	struct hp_tag_info info = { .size = size, .pcs = pcs };

	if (unlikely(!real))
		return NULL;
	if (likely(hp_stacks && !in_hook)) {
		in_hook = true;
		info.nframes = unwind_capture(pcs, hp_frames, st);
		in_hook = false;
	}
	info.tid = boot_tid();
	info.birth = boot_now_ns();
	return hp_tag_write(real, offset, &info);
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

static void *do_malloc(size_t size, const struct unwind_start *st)
{
	size_t total;

	if (unlikely(!boot_ensure()))
		return arena_alloc(size, 16);
	if (!add_room(size, hp_reserve, &total))
		return NULL;
	return tag(hp_real.malloc(total), hp_reserve, size, st);
}

static void *do_memalign(size_t align, size_t size, const struct unwind_start *st)
{
	size_t offset, total;

	if (align <= HP_ALIGN)
		return do_malloc(size, st);
	if (unlikely(!boot_ensure()))
		return arena_alloc(size, align);
	if (align > HP_MAX_TAGGED_ALIGN)
		return hp_real.memalign(align, size); /* untagged: free() passes it through */
	offset = hp_tag_reserve(hp_frames, align);
	if (!add_room(size, offset, &total))
		return NULL;
	return tag(hp_real.memalign(align, total), offset, size, st);
}

static void do_free(void *p)
{
	void *real;

	if (!p || arena_owns(p))
		return;
	real = hp_tag_real(p);
	if (real) {
		hp_tag_erase(p);
		hp_real.free(real);
	} else if (boot_ensure()) {
		hp_real.free(p);	/* not ours: allocated before us or untagged */
	}
}

static size_t usable_size(void *p)
{
	void *real;

	if (!p)
		return 0;
	if (arena_owns(p))
		return arena_size(p);
	real = hp_tag_real(p);
	if (!real)
		return boot_ensure() && hp_real.usable_size ? hp_real.usable_size(p) : 0;
	if (!hp_real.usable_size)
		return hp_tag_size(p);
	return hp_real.usable_size(real) - hp_tag_offset(p);
}

/* Copy into a fresh block and free the old one: for blocks realloc cannot resize in
 * place (arena, over-aligned) and for foreign ones before the allocator is known. */
static void *move_block(void *p, size_t old_size, size_t size, const struct unwind_start *st)
{
	void *q = do_malloc(size, st);

	if (!q)
		return NULL;
	memcpy(q, p, old_size < size ? old_size : size);
	do_free(p);
	return q;
}

static void *do_realloc(void *p, size_t size, const struct unwind_start *st)
{
	size_t offset, total;
	void *real, *r;

	if (!p)
		return do_malloc(size, st);
	if (arena_owns(p))
		return move_block(p, arena_size(p), size, st);
	real = hp_tag_real(p);
	if (!real)
		return boot_ensure() ? hp_real.realloc(p, size) : NULL;
	if (size == 0) {
		do_free(p);	/* glibc's realloc(p, 0): free and return NULL */
		return NULL;
	}
	offset = hp_tag_offset(p);
	if (offset != hp_reserve)
		return move_block(p, hp_tag_size(p), size, st);
	if (!add_room(size, offset, &total))
		return NULL;
	/* Kill the tag first: the allocator's copy of the block, and the old block it
	 * frees, must not hold a header that still validates. */
	hp_tag_erase(p);
	r = hp_real.realloc(real, total);
	if (!r) {
		hp_tag_revive(p);	/* the old block stays the program's */
		return NULL;
	}
	return tag(r, offset, size, st);
}

HP_EXPORT void *malloc(size_t size)
{
	struct unwind_start st;

	UNWIND_START(st);
	return do_malloc(size, &st);
}

HP_EXPORT void free(void *p)
{
	do_free(p);
}

HP_EXPORT void *calloc(size_t n, size_t elem)
{
	struct unwind_start st;
	size_t size, total;

	UNWIND_START(st);
	if (__builtin_mul_overflow(n, elem, &size)) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(!boot_ensure()))
		return arena_alloc(size, 16);	/* static memory: already zero */
	if (!add_room(size, hp_reserve, &total))
		return NULL;
	return tag(hp_real.calloc(1, total), hp_reserve, size, &st);
}

HP_EXPORT void *realloc(void *p, size_t size)
{
	struct unwind_start st;

	UNWIND_START(st);
	return do_realloc(p, size, &st);
}

HP_EXPORT void *reallocarray(void *p, size_t n, size_t elem)
{
	struct unwind_start st;
	size_t size;

	UNWIND_START(st);
	if (__builtin_mul_overflow(n, elem, &size)) {
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc(p, size, &st);
}

static bool power_of_two(size_t x)
{
	return x && !(x & (x - 1));
}

HP_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	struct unwind_start st;
	void *p;

	UNWIND_START(st);
	if (!power_of_two(align) || align % sizeof(void *))
		return EINVAL;
	p = do_memalign(align, size, &st);
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
 * does, glibc 2.38 on refuses it with EINVAL. Ask the aligned_alloc the program
 * would have had without us (the next one in the chain), with a 1-byte block freed
 * at once: NULL means refused, and we return NULL with its errno. Only odd
 * alignments pay for this.
 */
static bool next_takes_align(size_t align)
{
	static void *(*next_aligned_alloc)(size_t, size_t);
	static void (*next_free)(void *);
	static int looked_up;	/* 0 not yet, 1 found, -1 none: memalign's rules */
	void *p;

	if (!__atomic_load_n(&looked_up, __ATOMIC_ACQUIRE)) {
		/* both from the same object: the block goes back where it came from */
		int saved = errno;	/* a taken alignment leaves errno alone */
		void *aa = dlsym(RTLD_NEXT, "aligned_alloc"), *fr = dlsym(RTLD_NEXT, "free");
		Dl_info ia, ifr;
		bool same = aa && fr && dladdr(aa, &ia) && dladdr(fr, &ifr) &&
			    ia.dli_fbase == ifr.dli_fbase;

		errno = saved;

		/* threads racing here store the same values */
		__atomic_store_n(&next_aligned_alloc, (void *(*)(size_t, size_t))aa,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&next_free, (void (*)(void *))fr, __ATOMIC_RELAXED);
		__atomic_store_n(&looked_up, same ? 1 : -1, __ATOMIC_RELEASE);
	}
	if (__atomic_load_n(&looked_up, __ATOMIC_ACQUIRE) < 0)
		return true;
	p = __atomic_load_n(&next_aligned_alloc, __ATOMIC_RELAXED)(align, 1);
	if (!p)
		return false;
	__atomic_load_n(&next_free, __ATOMIC_RELAXED)(p);
	return true;
}

HP_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	struct unwind_start st;

	UNWIND_START(st);
	if (!power_of_two(align)) {
		/* before the allocator is known, the arena takes the memalign way */
		if (boot_ensure() && !next_takes_align(align))
			return NULL;
		align = memalign_align(align);
	}
	return do_memalign(align, size, &st);
}

HP_EXPORT void *memalign(size_t align, size_t size)
{
	struct unwind_start st;

	UNWIND_START(st);
	return do_memalign(memalign_align(align), size, &st);
}

HP_EXPORT void *valloc(size_t size)
{
	struct unwind_start st;

	UNWIND_START(st);
	return do_memalign((size_t)sysconf(_SC_PAGESIZE), size, &st);
}

HP_EXPORT void *pvalloc(size_t size)
{
	struct unwind_start st;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), rounded;

	UNWIND_START(st);
	if (!add_room(size, page - 1, &rounded))
		return NULL;
	rounded &= ~(page - 1);
	return do_memalign(page, rounded ? rounded : page, &st);
}

HP_EXPORT size_t malloc_usable_size(void *p)
{
	return usable_size(p);
}
