/*
 * The replaceable C++ allocation functions (C++17's set: plain, array, nothrow, aligned,
 * sized and their deletes), so that every new and delete passes through heapprof's
 * malloc and free whatever allocator is behind it: jemalloc and tcmalloc export their
 * own, which would otherwise pair a new of theirs with a free of ours or skip us.
 * Failure (new_handler, bad_alloc) is left to the C++ runtime's own operator new.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include "compiler.h"
#include "hooks.h"
#include "util.h"

/* Itanium mangling of size_t: unsigned long (m) on LP64 and 31-bit s390, else unsigned
 * int (j) on the 32-bit Linux targets. */
#if __SIZEOF_SIZE_T__ == 8 || defined(__s390__)
#define SZ "m"
#else
#define SZ "j"
#endif
#define NOTHROW "RKSt9nothrow_t"
#define ALIGN "St11align_val_t"

/* std::align_val_t and std::nothrow_t as the ABI passes them */
typedef size_t align_val;
struct nothrow;

/* A call the compiler must not turn into a jump: the caller's frame stays in the stack
 * the way libstdc++'s does (nothrow new[] above new). */
#define KEEP_FRAME(p) __asm__ volatile("" : "+r"(p))

/*
 * Out of memory: the C++ runtime's operator new of the same form, the next one after
 * us, calls the new_handler until it gives up and throws std::bad_alloc (or, nothrow,
 * returns NULL). Its allocation comes back through our malloc (libstdc++, libc++) or
 * its own allocator's, whose blocks our free hands back to it.
 */
static void *next_new(const char *name, size_t size, size_t align, const struct nothrow *nt)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (!fn) {
		if (nt)
			return NULL;
		hp_warn("out of memory in ", name, " and no C++ runtime to throw bad_alloc");
		abort();
	}
	if (!align)
		return nt ? ((void *(*)(size_t, const struct nothrow *))fn)(size, nt) :
			    ((void *(*)(size_t))fn)(size);
	return nt ? ((void *(*)(size_t, align_val, const struct nothrow *))fn)(size, align, nt) :
		    ((void *(*)(size_t, align_val))fn)(size, align);
}

HP_EXPORT void *new_plain(size_t size) __asm__("_Znw" SZ);
HP_EXPORT void *new_array(size_t size) __asm__("_Zna" SZ);
HP_EXPORT void *new_nothrow(size_t size, const struct nothrow *) __asm__("_Znw" SZ NOTHROW);
HP_EXPORT void *new_array_nothrow(size_t size, const struct nothrow *)
	__asm__("_Zna" SZ NOTHROW);
HP_EXPORT void *new_aligned(size_t size, align_val align) __asm__("_Znw" SZ ALIGN);
HP_EXPORT void *new_array_aligned(size_t size, align_val align) __asm__("_Zna" SZ ALIGN);
HP_EXPORT void *new_aligned_nothrow(size_t size, align_val align, const struct nothrow *)
	__asm__("_Znw" SZ ALIGN NOTHROW);
HP_EXPORT void *new_array_aligned_nothrow(size_t size, align_val align, const struct nothrow *)
	__asm__("_Zna" SZ ALIGN NOTHROW);

/* new(0) must give a unique pointer, and malloc(0) may be NULL: hence size ? size : 1 */
void *new_plain(size_t size)
{
	void *p = hooks_malloc(size ? size : 1);

	if (likely(p))
		return p;
	return next_new("_Znw" SZ, size, 0, NULL);
}

void *new_array(size_t size)
{
	return new_plain(size);
}

void *new_nothrow(size_t size, const struct nothrow *nt)
{
	void *p = hooks_malloc(size ? size : 1);

	if (likely(p))
		return p;
	return next_new("_Znw" SZ NOTHROW, size, 0, nt);
}

void *new_array_nothrow(size_t size, const struct nothrow *nt)
{
	void *p = new_nothrow(size, nt);

	KEEP_FRAME(p);
	return p;
}

/* aligned_alloc as libstdc++'s does; the alignment is a power of two (the caller's
 * promise), below sizeof(void *) raised to it */
void *new_aligned(size_t size, align_val align)
{
	void *p = hooks_aligned_alloc(align < sizeof(void *) ? sizeof(void *) : align,
				      size ? size : 1);

	if (likely(p))
		return p;
	return next_new("_Znw" SZ ALIGN, size, align, NULL);
}

void *new_array_aligned(size_t size, align_val align)
{
	return new_aligned(size, align);
}

void *new_aligned_nothrow(size_t size, align_val align, const struct nothrow *nt)
{
	void *p = hooks_aligned_alloc(align < sizeof(void *) ? sizeof(void *) : align,
				      size ? size : 1);

	if (likely(p))
		return p;
	return next_new("_Znw" SZ ALIGN NOTHROW, size, align, nt);
}

void *new_array_aligned_nothrow(size_t size, align_val align, const struct nothrow *nt)
{
	void *p = new_aligned_nothrow(size, align, nt);

	KEEP_FRAME(p);
	return p;
}

/* Every delete is free: the size and alignment a sized or aligned delete is given are
 * the block's own, which its header already knows. */
HP_EXPORT void delete_plain(void *p) __asm__("_ZdlPv");
HP_EXPORT void delete_array(void *p) __asm__("_ZdaPv");
HP_EXPORT void delete_nothrow(void *p, const struct nothrow *) __asm__("_ZdlPv" NOTHROW);
HP_EXPORT void delete_array_nothrow(void *p, const struct nothrow *) __asm__("_ZdaPv" NOTHROW);
HP_EXPORT void delete_sized(void *p, size_t) __asm__("_ZdlPv" SZ);
HP_EXPORT void delete_array_sized(void *p, size_t) __asm__("_ZdaPv" SZ);
HP_EXPORT void delete_aligned(void *p, align_val) __asm__("_ZdlPv" ALIGN);
HP_EXPORT void delete_array_aligned(void *p, align_val) __asm__("_ZdaPv" ALIGN);
HP_EXPORT void delete_aligned_nothrow(void *p, align_val, const struct nothrow *)
	__asm__("_ZdlPv" ALIGN NOTHROW);
HP_EXPORT void delete_array_aligned_nothrow(void *p, align_val, const struct nothrow *)
	__asm__("_ZdaPv" ALIGN NOTHROW);
HP_EXPORT void delete_sized_aligned(void *p, size_t, align_val) __asm__("_ZdlPv" SZ ALIGN);
HP_EXPORT void delete_array_sized_aligned(void *p, size_t, align_val)
	__asm__("_ZdaPv" SZ ALIGN);

void delete_plain(void *p)
{
	hooks_free(p);
}

void delete_array(void *p)
{
	hooks_free(p);
}

void delete_nothrow(void *p, const struct nothrow *nt)
{
	(void)nt;
	hooks_free(p);
}

void delete_array_nothrow(void *p, const struct nothrow *nt)
{
	(void)nt;
	hooks_free(p);
}

void delete_sized(void *p, size_t size)
{
	(void)size;
	hooks_free(p);
}

void delete_array_sized(void *p, size_t size)
{
	(void)size;
	hooks_free(p);
}

void delete_aligned(void *p, align_val align)
{
	(void)align;
	hooks_free(p);
}

void delete_array_aligned(void *p, align_val align)
{
	(void)align;
	hooks_free(p);
}

void delete_aligned_nothrow(void *p, align_val align, const struct nothrow *nt)
{
	(void)align, (void)nt;
	hooks_free(p);
}

void delete_array_aligned_nothrow(void *p, align_val align, const struct nothrow *nt)
{
	(void)align, (void)nt;
	hooks_free(p);
}

void delete_sized_aligned(void *p, size_t size, align_val align)
{
	(void)size, (void)align;
	hooks_free(p);
}

void delete_array_sized_aligned(void *p, size_t size, align_val align)
{
	(void)size, (void)align;
	hooks_free(p);
}
