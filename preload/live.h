/*
 * The process's live memory counters for the timeline and the peak table: each thread
 * adds its blocks to its own record's live bytes (table.c's), counts its calls, frees
 * and bytes asked for (no atomic, no shared line), and flushes them into the
 * process-wide sums when its live bytes have moved LIVE_FLUSH_BYTES from the last
 * flush, or when it allocates and the next timeline sample may be due. The flush, not
 * the allocation, checks for a new peak.
 */
#ifndef HP_LIVE_H
#define HP_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "heapprof_format.h"
#include "table.h"
#include "timeline.h"

#define LIVE_FLUSH_BYTES ((int64_t)64 << 10)

/*
 * One thread's side, all in one TLS block and one cache line: the hot path reads rec,
 * hi or lo and due, and adds to two counters. Blocks and calls of sampled blocks are
 * estimates in HP2_COUNT_ONE units, an unsampled one counts 1.
 */
struct live_pending {
	int64_t *rec;			/* the thread record's live bytes, or live_nowhere */
	int64_t hi, lo;			/* the slow path once they reach hi or fall to lo */
	uint64_t due;			/* the slow path at an allocation from this ms on */
	uint64_t calls, frees;		/* since the flush */
	uint64_t alloc_bytes;		/* asked for since the flush (estimates if sampled) */
	int64_t live_seen;		/* *rec (or own) at the flush */
	int64_t own;			/* live bytes counted with no record: before the
					 * thread has one, and after it ended */
	bool ended;			/* live_thread_end() ran: every call flushes */
} __attribute__((aligned(64)));

/* The process-wide sums (one cache line, touched only by flushes). */
struct live_sums {
	int64_t bytes, blocks;
	uint64_t calls, alloc_bytes;
} __attribute__((aligned(64)));

extern HP_TLS struct live_pending live_mine HP_HIDDEN;
/* A thread with no record (none yet, or it ended) points rec here, with bounds that
 * send every call to the slow path: the inline path never tests for NULL. Written by
 * any such thread, never read. */
extern int64_t live_nowhere HP_HIDDEN;
extern struct live_sums live_sums HP_HIDDEN;

/*
 * Live bytes at which a flush calls the watcher (INT64_MAX: never), and the watcher:
 * HEAPPROF_OOM's look at the limit (oom.c), which moves the mark after each look. Set
 * by the watcher, once, before it first lowers the mark: live.c knows no feature above it.
 */
extern int64_t live_mark HP_HIDDEN;
HP_HIDDEN void live_watch(void (*fn)(int64_t live));

/* When the next timeline sample is due: from this ms on, an allocation flushes. */
static inline uint64_t live_next_due(void)
{
	return timeline_next_due();
}

/* An allocation (sign 1, at ms) or a free (sign -1, ms UINT64_MAX) of a block weighing
 * weight bytes took its record's live bytes past hi or lo, or found the thread's due
 * time passed, or the thread has no record: flush, or count it in own. */
HP_HIDDEN void live_slow(int64_t weight, int sign, uint64_t ms);
/* Flush this thread's counts; ms is now (allocation) or UINT64_MAX (free: no sample). */
HP_HIDDEN void live_flush(uint64_t ms);
/* live_alloc() (sign 1, at ms) or live_free() (sign -1) of a sampled block: it stands
 * for weight bytes and 1 / p blocks (HP2_COUNT_ONE units). Out of line: the estimate
 * takes a libm call anyway. */
HP_HIDDEN void live_sampled(uint64_t size, int64_t weight, int sign, uint64_t ms);

/* Start the counters, the timeline and the peak table (boot, after the options). */
HP_HIDDEN void live_init(void);
/* The calling thread ends (its key destructors run): its counts go to the sums now, and
 * whatever it frees from here on at once; its record is no longer written. */
HP_HIDDEN void live_thread_end(void);
/* In a forked child: a writer of the parent's may have held a record. */
HP_HIDDEN void live_after_fork(void);

#ifndef HP_NO_LIVE
/* A block of size bytes, not sampled, was tagged at ms since the start. Inline: every
 * tagged allocation comes here. */
static inline __attribute__((always_inline)) void live_alloc(uint64_t size, uint64_t ms)
{
	struct live_pending *t = &live_mine;
	int64_t live = *t->rec + (int64_t)size;

	*t->rec = live;	/* this thread's alone: no atomic needed */
	t->calls++;
	t->alloc_bytes += size;
	if (unlikely(live >= t->hi || ms >= t->due))
		live_slow((int64_t)size, 1, ms);
}

/* A tagged block of size bytes, not sampled, went back. Inline: every free of one
 * comes here. Never a new peak, nor a sample. */
static inline __attribute__((always_inline)) void live_free(uint64_t size)
{
	struct live_pending *t = &live_mine;
	int64_t live = *t->rec - (int64_t)size;

	*t->rec = live;
	t->frees++;
	if (unlikely(live <= t->lo))
		live_slow((int64_t)size, -1, UINT64_MAX);
}
#else
/* NO_TIMELINE=1 (make): no peak table, no timeline, nothing counted for them; the
 * thread record's live bytes only, as before either existed. For measuring their cost. */
static inline __attribute__((always_inline)) void live_alloc(uint64_t size, uint64_t ms)
{
	(void)ms;
	table_live_add((int64_t)size);
}

static inline __attribute__((always_inline)) void live_free(uint64_t size)
{
	table_live_add(-(int64_t)size);
}
#endif

#endif
