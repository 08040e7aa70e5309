/*
 * heapprof start-up: read the HEAPPROF_* options, find the real allocator (real.h),
 * serve the allocations made meanwhile (dlsym and dlopen allocate) from a static arena,
 * and warm the unwinder up.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "boot.h"
#include "heapprof_format.h"
#include "events.h"
#include "live.h"
#include "options.h"
#include "real.h"
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
	live_after_fork();
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
	options_read();
	hp_frames = (unsigned)hp_opt.frames;
	table_init(hp_opt.sample, hp_frames, hp_opt.time ? HP2_P_TIME : 0);
	live_init();
	real_resolve();
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
	/* Another thread is resolving; it does not wait for us, so this ends. */
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
