/*
 * The out-of-line part of the counters (counters.h): HEAPPROF_TIME's clock, read only
 * when that option is on, and the frees of a thread that has no site for them.
 */
#include <time.h>

#include "counters.h"

static HP_TLS uint64_t last_call_ns;

/* The thread's first call adds none: when the thread started is not known here
 * (heapprof.so.7 says so). */
void counters_time(struct hp_site_rec *s)
{
	struct timespec ts;
	uint64_t now;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return;
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (last_call_ns && now > last_call_ns)
		s->time_ns += now - last_call_ns;
	last_call_ns = now;
}

void counters_free_nosite(uint32_t id, uint64_t size, unsigned flags)
{
	struct hp_site_rec *x = table_ended_site(id);
	uint64_t n = 0, bytes = 0;

	if (x) {
		counters_add(&n, &bytes, size, flags);
		__atomic_add_fetch(&x->frees, n, __ATOMIC_RELAXED);
		__atomic_add_fetch(&x->freed, bytes, __ATOMIC_RELAXED);
	}
	if (!(flags & HP2_F_SAMPLED))
		live_free(size);
	else
		live_sampled(size, counters_weight(size, flags), -1, UINT64_MAX);
}
