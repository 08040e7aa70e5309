/*
 * heapprof.so start-up: find the real allocator (dlsym RTLD_NEXT or
 * HEAPPROF_ALLOCATOR), read the HEAPPROF_* options, serve the allocations that dlsym
 * and dlopen make meanwhile from a static arena, and warm the unwinder up.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "boot.h"
#include "heapprof_format.h"
#include "events.h"
#include "options.h"
#include "snapshot.h"
#include "table.h"
#include "triggers.h"
#include "unwind.h"
#include "util.h"

struct hp_real hp_real;
unsigned hp_frames;
bool hp_stacks;


_Alignas(64) unsigned char hp_arena[HP_ARENA_SIZE];
#define arena hp_arena
#define ARENA_SIZE HP_ARENA_SIZE
static size_t arena_used;

/* Each arena block is preceded by its size, so realloc and malloc_usable_size work. */
void *arena_alloc(size_t size, size_t align)
{
	size_t old, start, end;

	if (align < 16)
		align = 16;
	old = __atomic_load_n(&arena_used, __ATOMIC_RELAXED);
	do {
		start = (old + sizeof(size_t) + align - 1) & ~(align - 1);
		if (size > ARENA_SIZE || start > ARENA_SIZE - size)
			return NULL;
		end = start + size;
	} while (!__atomic_compare_exchange_n(&arena_used, &old, end, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	memcpy(arena + start - sizeof(size_t), &size, sizeof(size));
	return arena + start;
}

size_t arena_size(const void *p)
{
	size_t size;

	memcpy(&size, (const unsigned char *)p - sizeof(size_t), sizeof(size));
	return size;
}

HP_TLS uint32_t boot_tid_cache;

uint32_t boot_tid_slow(void)
{
	boot_tid_cache = (uint32_t)syscall(SYS_gettid);
	return boot_tid_cache;
}

static void forget_tid(void)
{
	boot_tid_cache = 0;	/* the child of fork() is another thread */
	table_after_fork();
	hooks_after_fork();
	events_after_fork();
	snapshot_after_fork();
}

uint64_t boot_now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Allocators without memalign (rare) still give aligned blocks this way. */
static int (*real_posix_memalign_fn)(void **, size_t, size_t);

static void *memalign_via_posix(size_t align, size_t size)
{
	void *p;

	return real_posix_memalign_fn((void **)&p, align, size) == 0 ? p : NULL;
}

static bool resolve_from(void *handle)
{
	struct hp_real r;

	r.malloc = (void *(*)(size_t))dlsym(handle, "malloc");
	r.free = (void (*)(void *))dlsym(handle, "free");
	r.calloc = (void *(*)(size_t, size_t))dlsym(handle, "calloc");
	r.realloc = (void *(*)(void *, size_t))dlsym(handle, "realloc");
	r.memalign = (void *(*)(size_t, size_t))dlsym(handle, "memalign");
	r.usable_size = (size_t(*)(void *))dlsym(handle, "malloc_usable_size");
	if (!r.memalign) {
		real_posix_memalign_fn = (int (*)(void **, size_t, size_t))dlsym(
			handle, "posix_memalign");
		if (real_posix_memalign_fn)
			r.memalign = memalign_via_posix;
	}
	if (!r.malloc || !r.free || !r.calloc || !r.realloc || !r.memalign)
		return false;
	hp_real = r;
	return true;
}

/*
 * Stacks from the first allocation on, even those made by other libraries'
 * constructors before ours runs (libstdc++'s exception pool, say).
 */
static void start_unwinder(void)
{
	bool replay = hp_opt.replay == HP_REPLAY_AUTO ? hp_opt.sample < HP_REPLAY_SPARSE
						       : hp_opt.replay != 0;

	unwind_init(hp_opt.unwind, replay);
	__atomic_store_n(&hp_stacks, true, __ATOMIC_RELEASE);
}

static void resolve(void)
{
	const char *lib;

	options_read();
	lib = hp_opt.allocator;
	hp_frames = (unsigned)hp_opt.frames;
	table_init(hp_opt.sample, hp_frames, hp_opt.time ? HP2_P_TIME : 0);
	if (lib) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

		if (h && resolve_from(h)) {
			start_unwinder();
			return;
		}
		const char *why = h ? "it has no malloc family" : dlerror();
		char msg[400];

		/* one line: 'LIB' (why); using the next allocator[; hint] */
		snprintf(msg, sizeof(msg), "' (%s); using the next allocator%s", why ? why : "?",
			 /* jemalloc, tcmalloc, mimalloc use initial-exec TLS, which a library
			  * loaded after start-up may only take from glibc's small surplus */
			 why && strstr(why, "static TLS") ?
				 "; set GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 "
				 "or LD_PRELOAD=\"heapprof.so LIB\"" : "");
		hp_warn("HEAPPROF_ALLOCATOR: cannot use '", lib, msg);
	}
	if (!resolve_from(RTLD_NEXT)) {
		/* Cannot happen with a libc; without an allocator nothing can run. */
		hp_warn("cannot find the real malloc with dlsym; aborting", NULL, NULL);
		abort();
	}
	start_unwinder();
}

static HP_TLS bool resolving;
int hp_boot_state;

bool boot_ensure_slow(void)
{
	int expect = 0;

	if (__atomic_load_n(&hp_boot_state, __ATOMIC_ACQUIRE) == 2)
		return true;
	if (resolving)
		return false;
	if (__atomic_compare_exchange_n(&hp_boot_state, &expect, 1, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		resolving = true;
		resolve();
		resolving = false;
		__atomic_store_n(&hp_boot_state, 2, __ATOMIC_RELEASE);
		return true;
	}
	/* Another thread is resolving; dlsym does not wait for us, so this ends. */
	while (__atomic_load_n(&hp_boot_state, __ATOMIC_ACQUIRE) != 2)
		sched_yield();
	return true;
}

/*
 * Runs before the program's constructors (after those of the libraries it uses):
 * makes sure the allocator is known even in a program that never allocates, and
 * that a forked child knows it is another process.
 */
__attribute__((constructor)) static void boot_ctor(void)
{
	boot_ensure();
	pthread_atfork(NULL, NULL, forget_tid);
	triggers_init();
}
