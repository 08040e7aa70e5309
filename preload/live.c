/*
 * The live counters (live.h): each thread's side and its flush into the process-wide
 * sums. The flush is the one place that reads the sums, so it is the one owner of
 * what they decide: when a timeline sample is due (timeline.c keeps the ring) and
 * when a peak is passed (peak.c writes the table); neither of those calls the other.
 */

#include "heapprof_format.h"
#include "live.h"
#include "options.h"
#include "peak.h"
#include "table.h"
#include "timeline.h"
#include "util.h"

int64_t live_nowhere;
int64_t live_mark = INT64_MAX;
static void (*live_watcher)(int64_t live);
/* no record yet: every call to live_slow() (hi and lo can never be passed inside) */
#define LIVE_UNBOUND { .rec = &live_nowhere, .hi = INT64_MIN, .lo = INT64_MAX }
HP_TLS struct live_pending live_mine = LIVE_UNBOUND;
struct live_sums live_sums;

void live_sampled(uint64_t size, int64_t weight, int sign, uint64_t ms)
{
	struct live_pending *t = &live_mine;
#ifdef HP_NO_LIVE
	(void)size, (void)t, (void)ms;
	table_live_add(sign * weight);
#else
	double p = hp_one_minus_exp_neg((double)size / (double)hp_opt.sample);
	uint64_t n = (uint64_t)(HP2_COUNT_ONE / p + 0.5);
	int64_t live = *t->rec + sign * weight;

	*t->rec = live;
	if (sign > 0) {
		t->calls += n;
		t->alloc_bytes += (uint64_t)weight;
		if (live >= t->hi || ms >= t->due)
			live_slow(weight, 1, ms);
	} else {
		t->frees += n;
		if (live <= t->lo)
			live_slow(weight, -1, UINT64_MAX);
	}
#endif
}

/* Bounds around the record's live bytes now, and the thread's next due time. */
static void live_rearm(struct live_pending *t, int64_t live)
{
	t->live_seen = live;
	/* the process's next sample, or later: the thread flushes once per interval at
	 * most, so the calls it counts reach the sums within one */
	t->due = live_next_due();
	if (t->rec == &live_nowhere)
		return;	/* still unbounded */
	t->hi = live + LIVE_FLUSH_BYTES;
	t->lo = live - LIVE_FLUSH_BYTES;
}

/* The thread's record, when it has one now (table.c makes it with the first site):
 * rec takes it over, with the bytes counted in own so far. */
static bool live_bind(struct live_pending *t)
{
	int64_t *rec = hp_thread_live, unflushed = t->own - t->live_seen;

	if (!rec || t->ended)
		return false;
	t->rec = rec;
	*rec += t->own;
	t->own = 0;
	t->live_seen = *rec - unflushed;
	return true;
}

/* Whether a thread counting in own flushes now: at once once it ended, else as one
 * with a record would (64 KiB moved, or an allocation at the due time). */
static bool live_owed(const struct live_pending *t, uint64_t ms)
{
	int64_t moved = t->own - t->live_seen;

	return t->ended || moved >= LIVE_FLUSH_BYTES || moved <= -LIVE_FLUSH_BYTES ||
	       (ms != UINT64_MAX && ms >= t->due);
}

void live_slow(int64_t weight, int sign, uint64_t ms)
{
	struct live_pending *t = &live_mine;

	if (t->rec == &live_nowhere) {
		/* the inline path added to live_nowhere: count it here instead */
		t->own += sign * weight;
		if (!live_bind(t) && !live_owed(t, ms))
			return;
	}
	live_flush(ms);
}

/*
 * The sums passed the next peak at ms: take it, and offer the point to the timeline.
 * A thread that finds another taking the peak goes on at once, so the taker looks at
 * the sums again when done: a crossing made meanwhile (the other thread added to the
 * sums before it tried, all in one order: seq_cst) is taken then, not lost when no
 * flush comes after it.
 */
static void live_peak(uint64_t ms, int64_t live)
{
	struct peak_point at;

	for (;;) {
		switch (peak_take(ms, live, &at)) {
		case PEAK_BUSY:
			return;
		case PEAK_TAKEN:
			timeline_add(&(struct timeline_sample){
				at.ms, at.bytes, at.blocks,
				__atomic_load_n(&live_sums.calls, __ATOMIC_RELAXED),
				__atomic_load_n(&live_sums.alloc_bytes, __ATOMIC_RELAXED) });
			break;
		case PEAK_NONE:
			break;
		}
		live = __atomic_load_n(&live_sums.bytes, __ATOMIC_SEQ_CST);
		if (live <= 0 || (uint64_t)live < __atomic_load_n(&peak_next_bytes,
								  __ATOMIC_RELAXED))
			return;
	}
}

void live_flush(uint64_t ms)
{
	struct live_pending *t = &live_mine;
	struct timeline_sample s;
	int64_t live = t->rec != &live_nowhere ? *t->rec : t->own;
	int64_t bytes = live - t->live_seen, blocks = (int64_t)(t->calls - t->frees);
	uint64_t calls = t->calls, alloc_bytes = t->alloc_bytes;

	t->calls = t->frees = t->alloc_bytes = 0;
	/* seq_cst: live_peak() relies on it (a lock xadd either way on x86) */
	s.bytes = __atomic_add_fetch(&live_sums.bytes, bytes, __ATOMIC_SEQ_CST);
	s.blocks = __atomic_add_fetch(&live_sums.blocks, blocks, __ATOMIC_RELAXED);
	s.calls = __atomic_add_fetch(&live_sums.calls, calls, __ATOMIC_RELAXED);
	s.alloc_bytes = __atomic_add_fetch(&live_sums.alloc_bytes, alloc_bytes,
					   __ATOMIC_RELAXED);
	if (ms != UINT64_MAX) {	/* a free: neither a sample nor a peak */
		s.ms = ms;
		if (s.bytes > 0 &&
		    (uint64_t)s.bytes >= __atomic_load_n(&peak_next_bytes, __ATOMIC_RELAXED))
			live_peak(ms, s.bytes);
		if (unlikely(s.bytes >= __atomic_load_n(&live_mark, __ATOMIC_RELAXED)))
			live_watcher(s.bytes);	/* HEAPPROF_OOM: time for a look at the limit */
		if (ms >= live_next_due())
			timeline_add(&s);
	}
	live_rearm(t, live);
}

void live_watch(void (*fn)(int64_t live))
{
	live_watcher = fn;
}

void live_init(void)
{
#ifndef HP_NO_LIVE
	timeline_init(hp_opt.timeline);
	peak_init(hp_opt.peak_step, hp_opt.peak_entries);
#endif
}

void live_thread_end(void)
{
	struct live_pending *t = &live_mine;

	live_flush(table_ms());	/* its blocks still live may make a peak */
	t->rec = &live_nowhere;
	t->hi = INT64_MIN;
	t->lo = INT64_MAX;
	t->own = t->live_seen = 0;
	t->ended = true;
}

void live_after_fork(void)
{
	struct live_pending *t = &live_mine;

	/* the child's thread record comes with its first new site (table_after_fork);
	 * the counts not flushed yet stay, to be flushed into the sums it inherited */
	if (t->rec != &live_nowhere)
		t->own = *t->rec - t->live_seen;	/* the bytes not flushed yet */
	else
		t->own -= t->live_seen;
	t->rec = &live_nowhere;
	t->hi = INT64_MIN;
	t->lo = INT64_MAX;
	t->live_seen = 0;
	t->due = 0;
	timeline_after_fork();
	peak_after_fork();
}
