/*
 * heapprof start-up: read the HEAPPROF_* options, find the real allocator (real.h;
 * the allocations made meanwhile go to arena.c), and warm the unwinder up.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stddef.h>

#include "heapprof_format.h"
#include "hooks_int.h"
#include "live.h"
#include "maps.h"
#include "options.h"
#include "real.h"
#include "sampled.h"
#include "table.h"
#include "unwind.h"
#include "util.h"

unsigned hp_frames;
bool hp_stacks;

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
	if (maps_init)
		maps_init(hooks_stack_id);	/* before table_init maps the first tables */
	hp_frames = (unsigned)hp_opt.frames;
	table_parts = hp_opt.stack_parts != 0;
	table_init(hp_opt.sample, hp_frames, hp_opt.time ? HP2_P_TIME : 0);
	sampled_init();
	live_init();
	real_resolve();
	if (maps_allocator)
		maps_allocator((void *)hp_real.malloc);
	start_unwinder();
}

static HP_TLS bool resolving;
int hp_boot_state;
bool hooks_free_plain;

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
		__atomic_store_n(&hooks_free_plain, !hp_opt.events, __ATOMIC_RELEASE);
		return true;
	}
	/* Another thread is resolving; it does not wait for us, so this ends. */
	while (__atomic_load_n(&hp_boot_state, __ATOMIC_ACQUIRE) != 2)
		sched_yield();
	return true;
}
