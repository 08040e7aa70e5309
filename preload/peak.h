/*
 * The peak table (include/heapprof_format.h): the live bytes and blocks per stack at
 * the highest point live memory has reached, read from the site counters whenever the
 * process's live bytes pass the last peak by the step (HEAPPROF_PEAK_STEP, or 1% of
 * the peak): a logarithmic number of times, never per allocation. Its records grow
 * with the stacks live at a peak; stacks past HEAPPROF_PEAK_ENTRIES share one entry.
 */
#ifndef HP_PEAK_H
#define HP_PEAK_H

#include <stdint.h>

#include "compiler.h"

/* Live bytes at which the next peak is taken; UINT64_MAX: the table is off. */
extern uint64_t peak_next_bytes HP_HIDDEN;

/* Switch the table on with the least step min_step (0: off), its records growing to
 * hold the stacks live at a peak, up to max_entries (HEAPPROF_PEAK_ENTRIES). */
HP_HIDDEN void peak_init(uint64_t min_step, uint64_t max_entries);

/* A peak as written: when, and the exact totals of its entries. */
struct peak_point {
	uint64_t ms;
	int64_t bytes, blocks;
};

enum peak_taken {
	PEAK_BUSY,	/* another thread is taking one: it looks at the counter again after */
	PEAK_NONE,	/* live is below peak_next_bytes now: nothing to take */
	PEAK_TAKEN,	/* written; *at says what it holds */
};

/* The process's live bytes counter reached live at ms: take the peak if it still passes
 * peak_next_bytes, unless another thread is taking one. Never blocks, never allocates
 * through malloc. The caller (live.c, which owns the counter) looks again after a
 * PEAK_NONE or PEAK_TAKEN, lest a crossing made meanwhile by a thread that found this
 * one busy be lost. */
HP_HIDDEN enum peak_taken peak_take(uint64_t ms, int64_t live, struct peak_point *at);

HP_HIDDEN void peak_after_fork(void);

#endif
