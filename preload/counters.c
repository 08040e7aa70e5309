/*
 * The out-of-line part of the counters (counters.h): HEAPPROF_TIME's clock, read only
 * when that option is on.
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
