/*
 * Sampling (HEAPPROF_SAMPLE) and the tagging switches of the process and of each thread:
 * the state hooks_sample_take() (hooks_int.h) reads on every call, and its slow path.
 */
#include <stdbool.h>
#include <stdint.h>

#include "block.h"
#include "hooks_boot.h"
#include "hooks_int.h"
#include "options.h"
#include "util.h"
/* the switches hooks_int.h reads */
bool hooks_process_on = true;
HP_TLS bool hooks_thread_off;

/*
 * Bytes left until this thread's next sample point (hooks_int.h says when it is 0), and
 * its random state. With HEAPPROF_EVENTS the points are counted in events_left instead:
 * every call then reaches the slow path, which records it.
 */
HP_TLS uint64_t hooks_sample_left;
static HP_TLS uint64_t events_left;
static HP_TLS uint64_t sample_rng;
/* hooks_sample_left while this thread is off (0 meanwhile: every call takes the slow path) */
static HP_TLS uint64_t sample_left_kept;

void hooks_enable(bool on)
{
	__atomic_store_n(&hooks_process_on, on, __ATOMIC_RELAXED);
}

bool hooks_enabled(void)
{
	return __atomic_load_n(&hooks_process_on, __ATOMIC_RELAXED);
}

void hooks_thread_enable(bool on)
{
	if (on == !hooks_thread_off)
		return;
	hooks_thread_off = !on;
	/* off: the thread's calls leave the fast path; on: its next point as it was */
	if (!on) {
		sample_left_kept = hooks_sample_left;
		hooks_sample_left = 0;
	} else {
		hooks_sample_left = sample_left_kept;
	}
}

/* An exponentially distributed interval of mean HEAPPROF_SAMPLE bytes, at least 1. */
static uint64_t sample_interval(void)
{
	uint64_t x = sample_rng;
	double u;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	sample_rng = x;
	u = (double)(((x * 0x2545F4914F6CDD1DULL) >> 11) + 1) * 0x1p-53;	/* (0, 1] */
	return (uint64_t)(hp_neg_log(u) * (double)hp_opt.sample) + 1;
}

/* Threads that drew their first sample point so far: the n-th gets n. A forked child
 * goes on counting, so that its threads draw apart from its parent's. */
static uint64_t sample_threads;

/* out of line: hooks_sample_take() inlines the common case only */
__attribute__((noinline)) bool hooks_sample_point(uint64_t size, unsigned *flags)
{
	uint64_t *left = unlikely(hp_opt.events) ? &events_left : &hooks_sample_left;

	if (unlikely(!sample_rng)) {
		/* the thread's ordinal, not its tid, which changes every run: with a
		 * HEAPPROF_SEED, the same program makes the same draws */
		uint64_t n = __atomic_add_fetch(&sample_threads, 1, __ATOMIC_RELAXED);

		sample_rng = (hp_opt.seed ? hp_opt.seed : hp_now_ns()) ^ n * 0x9E3779B97F4A7C15ULL;
		sample_rng |= 1;
		*left = sample_interval();
	}
	if (size < *left) {
		*left -= size;
		return false;
	}
	*left = sample_interval();	/* memoryless: the next point anew */
	*flags |= HP2_F_SAMPLED;
	return true;
}


void hooks_sample_after_fork(void)
{
	sample_rng = 0;	/* the child draws its own points */
	hooks_sample_left = 0;	/* ... from its first call on (hooks_sample_point) */
	events_left = 0;
	sample_left_kept = 0;
}
