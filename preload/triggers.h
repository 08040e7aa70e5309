/*
 * What asks heapprof.so for a snapshot, besides the API: HEAPPROF_SIGNAL, _AT_EXIT,
 * _AT_CRASH and _PEAK; and HEAPPROF_TOGGLE_SIGNAL and HEAPPROF_START, which switch
 * tagging. Installed once by the constructor.
 */
#ifndef HP_TRIGGERS_H
#define HP_TRIGGERS_H

#include <stdint.h>

#include "compiler.h"

/* Read the options above and install handlers; warns once per bad value. */
HP_HIDDEN void triggers_init(void);

/* HEAPPROF_PEAK: after each tagged block of bytes (hooks.c, only when the option is
 * set). Lock-free: a per-thread count, the live total every PEAK/16 of this thread's
 * growth, and a compare-and-swap so one thread takes each snapshot. */
HP_HIDDEN void peak_check(uint64_t bytes);

/* HEAPPROF_TOGGLE_SIGNAL and heapprof_enable(): the process-wide switch, remembered. */
HP_HIDDEN void triggers_enable(int on);

#endif
