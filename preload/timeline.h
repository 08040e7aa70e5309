/*
 * The timeline (HEAPPROF_TIMELINE=N samples, include/heapprof_format.h): a record of
 * fixed size in the table's mappings, written by whichever thread flushes its live
 * counters when a sample is due (live.c), never by a timer or a signal.
 */
#ifndef HP_TIMELINE_H
#define HP_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

#define TIMELINE_FIRST_MS 4	/* ms between samples until the ring first fills */

/* When the next sample is due (ms since the start); UINT64_MAX: never (no timeline). */
extern uint64_t timeline_next_ms HP_HIDDEN;

/* timeline_next_ms, read on the hot path. A 32-bit target has no lock-free 64-bit load
 * (libatomic would take a lock): a torn read there only flushes early or late. */
static inline uint64_t timeline_next_due(void)
{
	if (__atomic_always_lock_free(sizeof(uint64_t), 0))
		return __atomic_load_n(&timeline_next_ms, __ATOMIC_RELAXED);
	return *(volatile uint64_t *)&timeline_next_ms;
}

struct timeline_sample {
	uint64_t ms;
	int64_t bytes, blocks;
	uint64_t calls, alloc_bytes;
};

/* Make the record of n samples (0: none) and take sample 0, the start. */
HP_HIDDEN void timeline_init(uint64_t n);

/*
 * Add *s (taken at s->ms): a new sample once the interval has passed since the last
 * one; within it, it replaces the last one if it holds more live bytes (a new peak
 * is offered so). Lock-free: a thread that finds another writing gives up.
 */
HP_HIDDEN void timeline_add(const struct timeline_sample *s);

HP_HIDDEN void timeline_after_fork(void);

#endif
