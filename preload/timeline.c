/*
 * The live counters' flush (live.h) and the timeline ring (timeline.h). The flush is
 * the one place that reads the process-wide sums, so it decides both when a sample is
 * due and when a peak is passed; the peak table itself is peak.c's.
 */
#include <math.h>
#include <string.h>

#include "heapprof_format.h"
#include "live.h"
#include "oom.h"
#include "options.h"
#include "peak.h"
#include "table.h"
#include "timeline.h"

int64_t live_nowhere;
/* no record yet: every call to live_slow() (hi and lo can never be passed inside) */
#define LIVE_UNBOUND { .rec = &live_nowhere, .hi = INT64_MIN, .lo = INT64_MAX }
HP_TLS struct live_pending live_mine = LIVE_UNBOUND;
struct live_sums live_sums;
uint64_t live_next_ms = UINT64_MAX;

struct timeline_rec {
	uint64_t magic, check, w2, held, interval_ms, writes, reserved[2];
	struct timeline_sample s[];
};

_Static_assert(sizeof(struct timeline_rec) == HP2_TIMELINE_WORDS * 8, "timeline record");
_Static_assert(sizeof(struct timeline_sample) == HP2_SAMPLE_WORDS * 8, "timeline sample");

static struct timeline_rec *tl;
static uint32_t tl_cap;
static int tl_busy;	/* a writer is at it: others give up, never wait */

void live_sampled(uint64_t size, int64_t weight, int sign, uint64_t ms)
{
	struct live_pending *t = &live_mine;
#ifdef HP_NO_LIVE
	(void)size, (void)t, (void)ms;
	table_live_add(sign * weight);
#else
	double p = -expm1(-(double)size / (double)hp_opt.sample);
	uint64_t n = (uint64_t)(HP2_COUNT_ONE / p + 0.5);
	int64_t live = *t->rec + sign * weight;

	*t->rec = live;
	if (sign > 0) {
		t->calls += n;
		t->alloc_bytes += (uint64_t)weight;
		if (live >= t->hi || ms >= t->due)
			live_slow(size, weight, 1, ms);
	} else {
		t->frees += n;
		if (live <= t->lo)
			live_slow(size, weight, -1, UINT64_MAX);
	}
#endif
}

/* Bounds around the record's live bytes now, and the thread's next due time. */
static void live_rearm(struct live_pending *t, int64_t live)
{
	t->live_seen = live;
	t->moved = 0;
	if (t->rec == &live_nowhere)
		return;	/* still unbounded */
	t->hi = live + LIVE_FLUSH_BYTES;
	t->lo = live - LIVE_FLUSH_BYTES;
	/* the process's next sample, or later: the thread flushes once per interval at
	 * most, so the calls it counts reach the sums within one */
	t->due = live_next_due();
}

void live_slow(uint64_t size, int64_t weight, int sign, uint64_t ms)
{
	struct live_pending *t = &live_mine;

	if (t->rec == &live_nowhere) {
		int64_t *rec = hp_thread_live;	/* table.c makes it with the first site */

		if (!rec) {
			/* as the thread counts no live bytes, it flushes every 64 KiB moved */
			t->moved += size;
			if (t->moved >= (uint64_t)LIVE_FLUSH_BYTES || ms >= t->due)
				live_flush(ms);
			if (ms != UINT64_MAX)
				t->due = live_next_due();
			return;
		}
		t->rec = rec;
		t->live_seen = *rec;
		*rec += sign * weight;	/* the inline path added it to live_nowhere */
	}
	live_flush(ms);
}

void live_flush(uint64_t ms)
{
	struct live_pending *t = &live_mine;
	struct timeline_sample s;
	int64_t live = t->rec != &live_nowhere ? *t->rec : t->live_seen;
	int64_t bytes = live - t->live_seen, blocks = (int64_t)(t->calls - t->frees);
	uint64_t calls = t->calls, alloc_bytes = t->alloc_bytes;

	t->calls = t->frees = t->alloc_bytes = 0;
	/* seq_cst: peak_take() relies on it (a lock xadd either way on x86) */
	s.bytes = __atomic_add_fetch(&live_sums.bytes, bytes, __ATOMIC_SEQ_CST);
	s.blocks = __atomic_add_fetch(&live_sums.blocks, blocks, __ATOMIC_RELAXED);
	s.calls = __atomic_add_fetch(&live_sums.calls, calls, __ATOMIC_RELAXED);
	s.alloc_bytes = __atomic_add_fetch(&live_sums.alloc_bytes, alloc_bytes,
					   __ATOMIC_RELAXED);
	if (ms != UINT64_MAX) {	/* a free: neither a sample nor a peak */
		s.ms = ms;
		if (s.bytes > 0 &&
		    (uint64_t)s.bytes >= __atomic_load_n(&peak_next_bytes, __ATOMIC_RELAXED))
			peak_take(ms, s.bytes);
		if (unlikely(s.bytes >= __atomic_load_n(&oom_mark, __ATOMIC_RELAXED)))
			oom_flushed(s.bytes);	/* HEAPPROF_OOM: time for a look at the limit */
		if (ms >= live_next_due())
			timeline_add(&s);
	}
	live_rearm(t, live);
}

void live_init(void)
{
#ifndef HP_NO_LIVE
	timeline_init(hp_opt.timeline);
	peak_init(hp_opt.peak_step);
#endif
}

void live_after_fork(void)
{
	struct live_pending *t = &live_mine;

	/* the child's thread record comes with its first new site (table_after_fork);
	 * the counts not flushed yet stay, to be flushed into the sums it inherited */
	t->rec = &live_nowhere;
	t->hi = INT64_MIN;
	t->lo = INT64_MAX;
	t->live_seen = 0;
	t->due = 0;
	timeline_after_fork();
	peak_after_fork();
}

/* ---- the ring ------------------------------------------------------------------- */

void timeline_init(uint64_t n)
{
	if (!n)
		return;
	if (n < 4)
		n = 4;	/* room for the start, a pair and the newest */
	tl = table_alloc_record(sizeof(*tl) + n * sizeof(tl->s[0]));
	if (!tl)
		return;
	tl_cap = (uint32_t)n;
	tl->w2 = n | (uint64_t)HP2_SAMPLE_WORDS << 32;
	tl->held = 1;	/* sample 0: the start, all 0 */
	tl->interval_ms = TIMELINE_FIRST_MS;
	tl->check = table_record_check(tl, &tl->w2, 1);
	__atomic_store_n(&tl->magic, HP2_TIMELINE_MAGIC, __ATOMIC_RELEASE);
	__atomic_store_n(&live_next_ms, TIMELINE_FIRST_MS, __ATOMIC_RELAXED);
}

/* Full: keep sample 0, and of each pair after it the one with the more live bytes. */
static void timeline_halve(void)
{
	uint32_t k = 1, i;

	for (i = 1; i + 1 < tl->held; i += 2)
		tl->s[k++] = tl->s[i + 1].bytes > tl->s[i].bytes ? tl->s[i + 1] : tl->s[i];
	if (i < tl->held)
		tl->s[k++] = tl->s[i];	/* the odd one out: the newest, kept as it is */
	tl->held = k;
	tl->interval_ms *= 2;
}

void timeline_add(const struct timeline_sample *in)
{
	struct timeline_sample *last, now = *in, *s = &now;

	if (!tl || __atomic_exchange_n(&tl_busy, 1, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&tl->writes, tl->writes + 1, __ATOMIC_RELEASE);	/* odd */
	last = &tl->s[tl->held - 1];
	/* a thread that read the clock before another's sample went in comes later: its
	 * figures are newer than that sample's, so its time is at least that one's */
	if (s->ms < last->ms)
		s->ms = last->ms;
	if (tl->held > 1 && s->ms < last->ms + tl->interval_ms) {
		if (s->bytes > last->bytes)
			*last = *s;	/* a higher point within the interval: the peak */
	} else {
		if (tl->held == tl_cap)
			timeline_halve();
		tl->s[tl->held] = *s;
		__atomic_store_n(&tl->held, tl->held + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&live_next_ms, s->ms + tl->interval_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&tl->writes, tl->writes + 1, __ATOMIC_RELEASE);	/* even */
	__atomic_store_n(&tl_busy, 0, __ATOMIC_RELEASE);
}

void timeline_after_fork(void)
{
	tl_busy = 0;
	if (tl && (tl->writes & 1))
		tl->writes++;	/* the parent's writer is not in this process */
}
