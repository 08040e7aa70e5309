/*
 * HEAPPROF_OOM=PERCENT: a snapshot each time the process's memory crosses PERCENT of
 * its limit, before the kernel ends it. The limits are the memory cgroup's, at the
 * process's cgroup and each one above it (v2 memory.max, v1 memory.limit_in_bytes),
 * and RLIMIT_AS; the use is the cgroup's charge less its page cache, or the address
 * space. heapprof's thread looks every 5 to 200 ms (sooner the nearer the line); the
 * live-bytes flush (live.h) looks when the live bytes pass a mark set from the last
 * look, so growth through malloc is seen at once; a malloc that returns NULL near the
 * limit takes one last snapshot. One snapshot per crossing: the next once the use has
 * come back below PERCENT - 5.
 */
#ifndef HP_OOM_H
#define HP_OOM_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

/*
 * Find the limits and start watching (on heapprof's thread: before sigthread_start);
 * nothing without HEAPPROF_OOM. Says once when there is no limit to watch. A crossing
 * waits for the next tagged allocation as bit in *work (triggers_tag_work): the caller
 * owns the word, oom.c sets and claims its bit. The live-bytes flush calls oom's look
 * when the live bytes reach live_mark (live.h), which oom.c keeps: a look then starts
 * unless one is under way or was made less than a ms ago. Never blocks, never allocates.
 */
HP_HIDDEN void oom_init(unsigned *work, unsigned bit);

/* After a tagged allocation, when a crossing waits: the thread that claims it takes
 * the snapshot and returns once the file is written. */
HP_HIDDEN void oom_take_due(void);

/* The allocator returned NULL for size bytes: the last snapshot before the program
 * hears of it, if size would have taken the use past the line (and size is no more
 * than the limit). */
HP_HIDDEN void oom_null(size_t size);

/* In the child of fork(): no look is under way. */
HP_HIDDEN void oom_after_fork(void);

#endif
