/*
 * What asks heapprof.so for a snapshot, besides the API: HEAPPROF_SIGNAL, _AT_EXIT,
 * _AT_CRASH and _PEAK. Installed once by the constructor (api.c), which also installs
 * HEAPPROF_TOGGLE_SIGNAL's handler through triggers_handle().
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

/* HEAPPROF_PEAK: after each tagged block of bytes (hooks.c, only when the option is
 * set). Lock-free: a per-thread count, the live total every PEAK/16 of this thread's
 * growth, and a compare-and-swap so one thread takes each snapshot. */
HP_HIDDEN void peak_check(uint64_t bytes);

#endif
