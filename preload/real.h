/*
 * How heapprof reaches the allocator it stands in front of: one file per mechanism,
 * linked into one build each. real_dlsym.c (heapprof.so): our malloc interposes, the
 * real one is dlsym(RTLD_NEXT) or HEAPPROF_ALLOCATOR. real_wrap.c (libheapprof.a): ld
 * --wrap sends the program's and the static libc's calls to __wrap_malloc, the real
 * one is __real_malloc. real_libc.c (the Rust crate): our entry points have names of
 * their own, the real allocator is the libc's, called by name.
 */
#ifndef HP_REAL_H
#define HP_REAL_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler.h"

/* The allocator we pass blocks to: the next one in the chain, or HEAPPROF_ALLOCATOR. */
struct hp_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	size_t (*usable_size)(void *);	/* NULL if the allocator has none */
};

extern struct hp_real hp_real HP_HIDDEN;

/* The names hooks.c gives its entry points in this build: the libc's, or --wrap's. */
#if defined(HP_ENTRIES_WRAP)
#define HP_ENTRY(name) __wrap_##name
#define HP_ENTRY_STR(name) "__wrap_" #name
#elif defined(HP_ENTRIES_RUST)
#define HP_ENTRY(name) heapprof_rust_##name
#define HP_ENTRY_STR(name) "heapprof_rust_" #name
#else
#define HP_ENTRY(name) name
#define HP_ENTRY_STR(name) #name
#endif

#if defined(HP_ENTRIES_WRAP) || defined(HP_ENTRIES_RUST)
/* hooks.c's entry points under names the libc headers do not declare */
void *HP_ENTRY(malloc)(size_t size);
void HP_ENTRY(free)(void *p);
void *HP_ENTRY(calloc)(size_t n, size_t elem);
void *HP_ENTRY(realloc)(void *p, size_t size);
void *HP_ENTRY(reallocarray)(void *p, size_t n, size_t elem);
int HP_ENTRY(posix_memalign)(void **out, size_t align, size_t size);
void *HP_ENTRY(aligned_alloc)(size_t align, size_t size);
void *HP_ENTRY(memalign)(size_t align, size_t size);
void *HP_ENTRY(valloc)(size_t size);
void *HP_ENTRY(pvalloc)(size_t size);
size_t HP_ENTRY(malloc_usable_size)(void *p);
#endif

/* Fill hp_real (hooks_boot.c, once, while resolving); aborts when no allocator can be found. */
HP_HIDDEN void real_resolve(void);

/*
 * Whether the aligned_alloc the program would have had without us takes an alignment
 * that is not a power of two (libcs differ, see hooks_tag.c); errno as it left it if not.
 * Written once (real.c) over the pair real_aligned_pair() gives (real_int.h).
 */
HP_HIDDEN bool real_takes_align(size_t align);

#endif
