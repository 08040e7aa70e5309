/*
 * HEAPPROF_INTERVAL=DURATION: a snapshot every DURATION (500ms, 30s, 5m, 1h, as
 * include/heapprof_duration.h reads it), taken on heapprof's thread and written by a
 * child as the other asynchronous snapshots are, quietly; HEAPPROF_KEEP=N: only the
 * newest N of them stay (the writer of each removes the older ones once its own file
 * has its name).
 */
#ifndef HP_INTERVAL_H
#define HP_INTERVAL_H

#include "compiler.h"

/* Read HEAPPROF_INTERVAL (one warning for a bad value) and set the tick on heapprof's
 * thread: before sigthread_start. Nothing without it. */
HP_HIDDEN void interval_init(void);

/* In the child of fork(): the parent's snapshots are not its own to remove. */
HP_HIDDEN void interval_after_fork(void);

#endif
