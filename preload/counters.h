/*
 * What each tagged allocation and free adds up: its site's calls and bytes, frees and
 * bytes freed, time between calls (HEAPPROF_TIME), and the thread's live bytes (live.h); a
 * sampled block weighed back to what it stands for. The records are table.c's; the
 * hooks decide which blocks count (tagged, outside heapprof's own calls).
 */
#ifndef HP_COUNTERS_H
#define HP_COUNTERS_H

#include <stdint.h>

#include "compiler.h"
#include "heapprof_format.h"
#include "live.h"
#include "options.h"
#include "table.h"
#include "util.h"

/* A sampled block stands for 1/p blocks: p = 1 - exp(-size / period). */
static inline double counters_sample_p(uint64_t size)
{
	return hp_one_minus_exp_neg((double)size / (double)hp_opt.sample);
}

/* The bytes a block stands for: its size, or its estimate when sampled. */
static inline int64_t counters_weight(uint64_t size, unsigned flags)
{
	if (likely(!(flags & HP2_F_SAMPLED)))
		return (int64_t)size;
	return (int64_t)((double)size / counters_sample_p(size) + 0.5);
}

/* Add a block of size bytes to a pair of counters (calls and bytes, or frees and
 * bytes freed): 1 and size exactly, or weighted estimates when it was sampled. */
static inline __attribute__((always_inline)) void counters_add(uint64_t *n, uint64_t *bytes,
							       uint64_t size, unsigned flags)
{
	if (likely(!(flags & HP2_F_SAMPLED))) {
		*n += 1;
		*bytes += size;
	} else {
		double p = counters_sample_p(size);

		*n += (uint64_t)(HP2_COUNT_ONE / p + 0.5);
		*bytes += (uint64_t)((double)size / p + 0.5);
	}
}

/* HEAPPROF_TIME: the time since this thread's previous allocation call, to site s. */
HP_HIDDEN void counters_time(struct hp_site_rec *s);

/* A block of size bytes tagged for site s at ms since the start. Inline in every
 * allocation path. With no site (no stack could be had, or the thread has ended) it
 * counts nowhere, not in the live counts either: its free, which finds site 0, is not
 * counted. */
static inline __attribute__((always_inline)) void counters_alloc(struct hp_site_rec *s,
								 uint64_t size, unsigned flags,
								 uint64_t ms)
{
	if (unlikely(!s))
		return;
	/* one test of the flag for both the site and the live counts */
	if (likely(!(flags & HP2_F_SAMPLED))) {
		s->calls += 1;
		s->bytes += size;
		if (unlikely(hp_opt.time))
			counters_time(s);
		live_alloc(size, ms);	/* the thread record, the timeline, the peak table */
	} else {
		counters_add(&s->calls, &s->bytes, size, flags);
		if (unlikely(hp_opt.time))
			counters_time(s);
		live_sampled(size, counters_weight(size, flags), 1, ms);
	}
}

/* counters_free() of a block whose site this thread has none for: it ended (its frees
 * count on the site of the threads that ended), or memory for a site could not be had.
 * Out of line: rare. */
HP_HIDDEN void counters_free_nosite(uint32_t id, uint64_t size, unsigned flags);

/* A block of size bytes made at site id goes back. Inline in free: one cache look-up
 * and three adds when the site is known. */
static inline __attribute__((always_inline)) void counters_free(uint32_t id, uint64_t size,
								unsigned flags)
{
	struct hp_site_rec *s = table_free_site(id);

	if (unlikely(!s)) {
		counters_free_nosite(id, size, flags);
	} else if (likely(!(flags & HP2_F_SAMPLED))) {
		s->frees += 1;
		s->freed += size;
		live_free(size);
	} else {
		counters_add(&s->frees, &s->freed, size, flags);
		live_sampled(size, counters_weight(size, flags), -1, UINT64_MAX);
	}
}

#endif
