/*
 * The peak table (peak.h): two records written in turn, so that a dump taken while
 * one is being rewritten still holds the previous peak whole. A peak sums the site
 * counters per stack and region into a private hash, then writes the entries and
 * their exact totals, which the caller hands on to the timeline.
 */
#include <sys/mman.h>

#include "heapprof_format.h"
#include "peak.h"
#include "table.h"

struct peak_rec {
	uint64_t magic, check, w2, writes, ms, bytes, blocks, used, counter, step;
	uint64_t reserved[6];
	int64_t e[][HP2_PEAK_ENTRY_WORDS];
};

_Static_assert(sizeof(struct peak_rec) == HP2_PEAK_WORDS * 8, "peak record");

/* The private hash from (stack, region) to an entry: valid when gen is this peak's. */
struct peak_slot {
	uint64_t key;
	uint32_t idx, gen;
};

#define SLOTS (2 * PEAK_ENTRIES)	/* a power of two, at most half full */

uint64_t peak_next_bytes = UINT64_MAX;
static uint64_t min_step;
static struct peak_rec *recs[2];
static struct peak_slot *slots;
static uint64_t taken;		/* peaks written so far */
static uint32_t gen;
static int busy;

void peak_init(uint64_t step)
{
	min_step = step;
	__atomic_store_n(&peak_next_bytes, step ? step : UINT64_MAX, __ATOMIC_RELAXED);
}

/*
 * Give record r (the i-th) its identity, the magic last. Not inline, the magic made
 * here after the last call: a loop over both records kept the magic in a callee-saved
 * register across the allocation, whose callee pushed it on the thread's stack, where
 * the scan later found a stray copy (and said so).
 */
static __attribute__((noinline)) void peak_seal(struct peak_rec *r, unsigned i)
{
	r->w2 = PEAK_ENTRIES | (uint64_t)i << 32;
	r->check = table_record_check(r, &r->w2, 1);
	r->writes = 0;
	__atomic_store_n(&r->magic, HP2_PEAK_MAGIC, __ATOMIC_RELEASE);
}

/* The two records and the hash, at the first peak: a program that never grows past
 * the step pays nothing. */
static bool peak_make(void)
{
	size_t size = sizeof(struct peak_rec) + PEAK_ENTRIES * sizeof(recs[0]->e[0]);
	void *m = mmap(NULL, SLOTS * sizeof(*slots), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return false;
	slots = m;
	for (unsigned i = 0; i < 2; i++) {
		struct peak_rec *r = table_alloc_record(size);

		if (!r)
			return false;
		peak_seal(r, i);
		recs[i] = r;
	}
	return true;
}

/* The entry of key in r (made if new; the stacks past the table share entry "other"). */
static int64_t *peak_entry(struct peak_rec *r, uint64_t key, uint32_t *other)
{
	uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> 40) & (SLOTS - 1);
	struct peak_slot *s;

	for (;; h = (h + 1) & (SLOTS - 1)) {
		s = &slots[h];
		if (s->gen != gen)
			break;
		if (s->key == key)
			return r->e[s->idx];
	}
	if (r->used + 1 >= PEAK_ENTRIES) {	/* the last entry is kept for the rest */
		if (*other == UINT32_MAX) {
			*other = (uint32_t)r->used++;
			r->e[*other][0] = r->e[*other][1] = r->e[*other][2] = 0;
		}
		return r->e[*other];
	}
	*s = (struct peak_slot){ key, (uint32_t)r->used, gen };
	r->e[r->used][0] = (int64_t)key;
	r->e[r->used][1] = r->e[r->used][2] = 0;
	return r->e[r->used++];
}

/* Sum every site into r's entries, drop the empty ones, and total them. */
static void peak_fill(struct peak_rec *r)
{
	uint32_t end = table_site_ids(), other = UINT32_MAX, k = 0;
	int64_t bytes = 0, blocks = 0;

	if (++gen == 0) {	/* wrapped: no slot may look current */
		for (unsigned i = 0; i < SLOTS; i++)
			slots[i].gen = 0;
		gen = 1;
	}
	r->used = 0;
	for (uint32_t id = 1; id < end; id++) {
		const struct hp_site_rec *s = table_site_by_id(id);
		int64_t b, n, *e;

		if (!s)
			continue;
		b = (int64_t)(__atomic_load_n(&s->bytes, __ATOMIC_RELAXED) -
			      __atomic_load_n(&s->freed, __ATOMIC_RELAXED));
		n = (int64_t)(__atomic_load_n(&s->calls, __ATOMIC_RELAXED) -
			      __atomic_load_n(&s->frees, __ATOMIC_RELAXED));
		if (!b && !n)
			continue;
		e = peak_entry(r, (s->w2 >> 32) | (s->w3 >> 48) << 48, &other);
		e[1] += b;
		e[2] += n;
	}
	for (uint32_t i = 0; i < r->used; i++) {
		if (!r->e[i][1] && !r->e[i][2])
			continue;	/* what a stack made, all freed */
		if (k != i)
			for (unsigned w = 0; w < HP2_PEAK_ENTRY_WORDS; w++)
				r->e[k][w] = r->e[i][w];
		bytes += r->e[k][1];
		blocks += r->e[k][2];
		k++;
	}
	r->used = k;
	r->bytes = (uint64_t)bytes;
	r->blocks = (uint64_t)blocks;
}

/* One peak at live bytes (the caller holds busy). */
static bool peak_write(uint64_t ms, int64_t live, struct peak_point *at)
{
	struct peak_rec *r;
	uint64_t step;

	if (!recs[1] && !peak_make()) {
		__atomic_store_n(&peak_next_bytes, UINT64_MAX, __ATOMIC_RELAXED);
		return false;
	}
	step = (uint64_t)live / 100 > min_step ? (uint64_t)live / 100 : min_step;
	r = recs[taken & 1];
	__atomic_store_n(&r->writes, 2 * taken + 1, __ATOMIC_RELEASE);
	r->ms = ms;
	r->counter = (uint64_t)live;
	r->step = step;
	peak_fill(r);
	__atomic_store_n(&r->writes, 2 * taken + 2, __ATOMIC_RELEASE);
	taken++;
	__atomic_store_n(&peak_next_bytes, (uint64_t)live + step, __ATOMIC_RELAXED);
	*at = (struct peak_point){ ms, (int64_t)r->bytes, (int64_t)r->blocks };
	return true;
}

/* seq_cst on busy: a thread that finds it taken has added to the counter before (the
 * caller's flush), so the taker, which reads the counter after letting go, sees it. */
enum peak_taken peak_take(uint64_t ms, int64_t live, struct peak_point *at)
{
	bool wrote = false;

	if (__atomic_exchange_n(&busy, 1, __ATOMIC_SEQ_CST))
		return PEAK_BUSY;
	if ((uint64_t)live >= __atomic_load_n(&peak_next_bytes, __ATOMIC_RELAXED))
		wrote = peak_write(ms, live, at);
	__atomic_store_n(&busy, 0, __ATOMIC_SEQ_CST);
	return wrote ? PEAK_TAKEN : PEAK_NONE;
}

void peak_after_fork(void)
{
	busy = 0;
	for (unsigned i = 0; i < 2; i++)
		if (recs[i] && (recs[i]->writes & 1))
			recs[i]->writes = 0;	/* cut short in the parent: never valid */
}
