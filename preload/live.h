/*
 * The process's live memory counters for the timeline and the peak table: each thread
 * counts its calls and frees and the bytes it moves (no atomic, no shared line) and
 * flushes them into the process-wide sums every LIVE_FLUSH_BYTES it allocates or
 * frees, or when the next timeline sample is due. Live bytes come from the thread's
 * own record (table_live_add), read at the flush. The flush, not the allocation,
 * checks for a new peak.
 */
#ifndef HP_LIVE_H
#define HP_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "heapprof_format.h"

#define LIVE_FLUSH_BYTES ((int64_t)64 << 10)

struct live_pending {
	int64_t moved;			/* bytes allocated or freed since the flush */
	uint64_t calls, frees;		/* since the flush, not sampled */
	int64_t live_seen;		/* the thread record's live bytes at the flush */
	int64_t s_bytes, s_blocks;	/* sampled blocks: estimates, HP2_COUNT_ONE units */
	uint64_t s_calls, s_alloc_bytes;
};

/* The process-wide sums (one cache line, touched only by flushes). */
struct live_sums {
	int64_t bytes, blocks;
	uint64_t calls, alloc_bytes;
} __attribute__((aligned(64)));

extern HP_TLS struct live_pending live_mine HP_HIDDEN;
extern struct live_sums live_sums HP_HIDDEN;
extern uint64_t live_next_ms HP_HIDDEN;	/* the next timeline sample; UINT64_MAX: none */

/* When the next sample is due. A 32-bit target has no lock-free 64-bit load (libatomic
 * would take a lock on every allocation): a torn read there only flushes early or late. */
static inline uint64_t live_next_due(void)
{
	if (__atomic_always_lock_free(sizeof(uint64_t), 0))
		return __atomic_load_n(&live_next_ms, __ATOMIC_RELAXED);
	return *(volatile uint64_t *)&live_next_ms;
}

/* Flush this thread's deltas; ms is now (allocation) or UINT64_MAX (free: no sample). */
HP_HIDDEN void live_flush(uint64_t ms);
/* A sampled block's weight (1 / p, as hooks.c's count() takes it) in HP2_COUNT_ONE units. */
HP_HIDDEN void live_sampled(uint64_t size, int64_t sign);

/* Start the counters, the timeline and the peak table (boot, after the options). */
HP_HIDDEN void live_init(void);
/* In a forked child: a writer of the parent's may have held a record. */
HP_HIDDEN void live_after_fork(void);

/* A block of size bytes (HP2_F_* flags) was tagged at ms since the start. Inline: every
 * tagged allocation comes here. */
static inline __attribute__((always_inline)) void live_alloc(uint64_t size, unsigned flags,
							     uint64_t ms)
{
	struct live_pending *t = &live_mine;

	if (likely(!(flags & HP2_F_SAMPLED)))
		t->calls++;
	else
		live_sampled(size, 1);
	t->moved += (int64_t)size;
	if (unlikely(t->moved >= LIVE_FLUSH_BYTES || ms >= live_next_due()))
		live_flush(ms);
}

/* A tagged block of size bytes went back. Inline: every free of one comes here. */
static inline __attribute__((always_inline)) void live_free(uint64_t size, unsigned flags)
{
	struct live_pending *t = &live_mine;

	if (likely(!(flags & HP2_F_SAMPLED)))
		t->frees++;
	else
		live_sampled(size, -1);
	t->moved += (int64_t)size;
	if (unlikely(t->moved >= LIVE_FLUSH_BYTES))
		live_flush(UINT64_MAX);
}

#endif
