/*
 * What asks heapprof.so for a snapshot, besides the API: HEAPPROF_SIGNAL, _AT_EXIT,
 * _AT_CRASH, _PEAK and _OOM (oom.h). Installed once by the start-up (hooks_start.c), which
 * also installs HEAPPROF_TOGGLE_SIGNAL's handler through triggers_handle().
 */
#ifndef HP_TRIGGERS_H
#define HP_TRIGGERS_H

#include <signal.h>
#include <stdint.h>

#include "compiler.h"

/* Read the options above and install handlers; warns once per bad value. Returns
 * HEAPPROF_SIGNAL's signal, 0 if none. */
HP_HIDDEN int triggers_init(void);

/* Install fn for sig (SA_SIGINFO, SA_RESTART, SA_ONSTACK, all signals blocked while it
 * runs: one trigger at a time per thread); the previous action into *old if not NULL. */
HP_HIDDEN void triggers_handle(int sig, void (*fn)(int, siginfo_t *, void *),
			       struct sigaction *old);

/*
 * The work waiting for the next tagged block, once its header is in place (so that a
 * snapshot holds it): hooks_tag.c calls triggers_tagged(bytes) while this is not 0.
 */
#define TAG_WORK_PEAK 1u	/* HEAPPROF_PEAK is set: peak_check() each time */
#define TAG_WORK_OOM 2u		/* a crossing of HEAPPROF_OOM's line waits (oom.h) */
extern unsigned triggers_tag_work HP_HIDDEN;

HP_HIDDEN void triggers_tagged(uint64_t bytes);

/* HEAPPROF_PEAK: after each tagged block of bytes. Lock-free: a per-thread count, the
 * live total every PEAK/16 of this thread's growth, and a compare-and-swap so one
 * thread takes each snapshot. */
HP_HIDDEN void peak_check(uint64_t bytes);

#endif
