/*
 * The timeline ring (timeline.h): samples offered by the live counters' flush
 * (live.c), which decides when one is due; this file keeps them and says when the
 * next one is.
 */
#include "heapprof_format.h"
#include "table.h"
#include "timeline.h"

uint64_t timeline_next_ms = UINT64_MAX;

struct timeline_rec {
	uint64_t magic, check, w2, held, interval_ms, writes, reserved[2];
	struct timeline_sample s[];
};

_Static_assert(sizeof(struct timeline_rec) == HP2_TIMELINE_WORDS * 8, "timeline record");
_Static_assert(sizeof(struct timeline_sample) == HP2_SAMPLE_WORDS * 8, "timeline sample");

static struct timeline_rec *tl;
static uint32_t tl_cap;
static int tl_busy;	/* a writer is at it: others give up, never wait */

void timeline_init(uint64_t n)
{
	if (!n)
		return;
	if (n < 4)
		n = 4;	/* room for the start, a pair and the newest */
	tl = table_alloc_record(sizeof(*tl) + n * sizeof(tl->s[0]), HP2_OWN_TIMELINE);
	if (!tl)
		return;
	tl_cap = (uint32_t)n;
	tl->w2 = n | (uint64_t)HP2_SAMPLE_WORDS << 32;
	tl->held = 1;	/* sample 0: the start, all 0 */
	tl->interval_ms = TIMELINE_FIRST_MS;
	tl->check = table_record_check(tl, &tl->w2, 1);
	__atomic_store_n(&tl->magic, HP2_TIMELINE_MAGIC, __ATOMIC_RELEASE);
	__atomic_store_n(&timeline_next_ms, TIMELINE_FIRST_MS, __ATOMIC_RELAXED);
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
	__atomic_store_n(&timeline_next_ms, s->ms + tl->interval_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&tl->writes, tl->writes + 1, __ATOMIC_RELEASE);	/* even */
	__atomic_store_n(&tl_busy, 0, __ATOMIC_RELEASE);
}

void timeline_after_fork(void)
{
	tl_busy = 0;
	if (tl && (tl->writes & 1))
		tl->writes++;	/* the parent's writer is not in this process */
}
