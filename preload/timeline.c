/*
 * The live counters' flush (live.h) and the timeline ring (timeline.h). The flush is
 * the one place that reads the process-wide sums, so it decides both when a sample is
 * due and when a peak is passed; the peak table itself is peak.c's.
 */
#include <math.h>
#include <string.h>

#include "heapprof_format.h"
#include "live.h"
#include "options.h"
#include "peak.h"
#include "table.h"
#include "timeline.h"

HP_TLS struct live_pending live_mine;
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

void live_sampled(uint64_t size, int64_t sign)
{
	double p = -expm1(-(double)size / (double)hp_opt.sample);
	int64_t n = (int64_t)(HP2_COUNT_ONE / p + 0.5), b = (int64_t)((double)size / p + 0.5);
	struct live_pending *t = &live_mine;

	t->s_bytes += sign * b;
	t->s_blocks += sign * n;
	if (sign > 0) {
		t->s_calls += (uint64_t)n;
		t->s_alloc_bytes += (uint64_t)b;
	}
}

void live_flush(uint64_t ms)
{
	struct live_pending *t = &live_mine;
	struct timeline_sample s;
	int64_t moved = t->moved, live, dlive, bytes, blocks;
	uint64_t calls, alloc_bytes;

	/*
	 * Not sampled, every block the thread counts is in its record's live bytes too
	 * (hooks.c adds to both), so what it allocated is (moved + live change) / 2.
	 * Sampled, the estimates were summed apart.
	 */
	live = hp_thread_live ? __atomic_load_n(hp_thread_live, __ATOMIC_RELAXED) : t->live_seen;
	dlive = live - t->live_seen;
	blocks = (int64_t)t->calls - (int64_t)t->frees + t->s_blocks;
	calls = t->calls + t->s_calls;
	if (hp_opt.sample) {
		bytes = t->s_bytes;	/* the record holds the same estimates */
		alloc_bytes = t->s_alloc_bytes;
	} else {
		bytes = dlive;
		alloc_bytes = moved + dlive > 0 ? (uint64_t)(moved + dlive) / 2 : 0;
	}
	*t = (struct live_pending){ .live_seen = live };
	/* seq_cst: peak_take() relies on it (a lock xadd either way on x86) */
	s.bytes = __atomic_add_fetch(&live_sums.bytes, bytes, __ATOMIC_SEQ_CST);
	s.blocks = __atomic_add_fetch(&live_sums.blocks, blocks, __ATOMIC_RELAXED);
	s.calls = __atomic_add_fetch(&live_sums.calls, calls, __ATOMIC_RELAXED);
	s.alloc_bytes = __atomic_add_fetch(&live_sums.alloc_bytes, alloc_bytes,
					   __ATOMIC_RELAXED);
	if (ms == UINT64_MAX)
		return;		/* a free: neither a sample nor a peak */
	s.ms = ms;
	if (s.bytes > 0 && (uint64_t)s.bytes >= __atomic_load_n(&peak_next_bytes, __ATOMIC_RELAXED))
		peak_take(ms, s.bytes);
	if (ms >= __atomic_load_n(&live_next_ms, __ATOMIC_RELAXED))
		timeline_add(&s);
}

void live_init(void)
{
	timeline_init(hp_opt.timeline);
	peak_init(hp_opt.peak_step);
}

void live_after_fork(void)
{
	live_mine.live_seen = 0;	/* the child's thread record starts at 0 */
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
