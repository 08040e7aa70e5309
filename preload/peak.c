/*
 * The peak table (peak.h): two records written in turn, so that a dump taken while
 * one is being rewritten still holds the previous peak whole. A peak sums the site
 * counters per stack and region into a private hash, then writes the entries and
 * their exact totals, which the caller hands on to the timeline.
 */
#include <string.h>
#include <sys/mman.h>

#include "util.h"
#include "heapprof_format.h"
#include "peak.h"
#include "table.h"

struct peak_rec {
	uint64_t magic, check, w2, writes, ms, bytes, blocks, used, counter, step;
	uint64_t overflow;	/* stacks summed in the entry of stack id 0 */
	uint64_t reserved[5];
	int64_t e[][HP2_PEAK_ENTRY_WORDS];
};

_Static_assert(sizeof(struct peak_rec) == HP2_PEAK_WORDS * 8, "peak record");

/* The private hash from (stack, region) to an entry: 4 bytes a slot, cleared at each fill,
 * 0 empty, else the entry's index + 1 (the entry holds the key), or SPILLED | i for a
 * stack past the record's room, its key spill[i]: a peak of 20,000 live stacks touched
 * 1 MiB of 16-byte slots that held their key and a generation. */
#define SPILLED 0x80000000u

uint64_t peak_next_bytes = UINT64_MAX;
static uint64_t min_step;
static uint32_t max_entries;	/* HEAPPROF_PEAK_ENTRIES */
static struct peak_rec *recs[2];
static uint32_t cap;		/* entries each record has room for */
static uint32_t *slots;
static uint32_t nslots, keys;	/* a power of two, at most half of it used */
static uint64_t *spill;		/* keys past the record's room, this fill's */
static uint32_t nspill, spill_cap;
static uint64_t taken;		/* peaks written so far */
static int busy;

void peak_init(uint64_t step, uint64_t entries)
{
	min_step = step;
	max_entries = entries < 2 ? 2 : entries > HP2_PEAK_MAX ? HP2_PEAK_MAX : (uint32_t)entries;
	__atomic_store_n(&peak_next_bytes, step ? step : UINT64_MAX, __ATOMIC_RELAXED);
}

static void *peak_map(size_t size)
{
	void *m = hp_map(size, HP2_OWN_PEAK, 0);

	return m == MAP_FAILED ? NULL : m;
}

static size_t rec_size(uint32_t n)
{
	return sizeof(struct peak_rec) + (size_t)n * sizeof(recs[0]->e[0]);
}

/*
 * Give record r (the i-th of n entries) its identity, the magic last. Not inline,
 * the magic made here after the last call: a loop over both records kept the magic in
 * a callee-saved register across the allocation, whose callee pushed it on the
 * thread's stack, where the scan later found a stray copy (and said so).
 */
static __attribute__((noinline)) void peak_seal(struct peak_rec *r, unsigned i, uint32_t n)
{
	r->w2 = n | (uint64_t)i << 32;
	r->check = table_record_check(r, &r->w2, 1);
	r->writes = 0;
	__atomic_store_n(&r->magic, HP2_PEAK_MAGIC, __ATOMIC_RELEASE);
}

/*
 * Records of room for at least n entries (a power of two, at most max_entries) in
 * place of recs[]: at the first peak (a program that never grows past the step pays
 * nothing), and when the stacks live at a peak did not fit. The old ones go to old[],
 * for the caller to unmap once a new peak is whole: until then, they hold the last one.
 */
static bool peak_grow(uint32_t n, struct peak_rec *old[2])
{
	uint32_t room = 1024;
	struct peak_rec *r[2];

	while (room < n && room < max_entries)
		room *= 2;
	if (room > max_entries)
		room = max_entries;
	if (room <= cap)
		return false;
	if (!(r[0] = peak_map(rec_size(room))))
		return false;
	if (!(r[1] = peak_map(rec_size(room)))) {
		munmap(r[0], rec_size(room));
		return false;
	}
	for (unsigned i = 0; i < 2; i++) {
		peak_seal(r[i], i, room);
		old[i] = recs[i];
		recs[i] = r[i];
	}
	cap = room;
	return true;
}

static uint32_t slot_of(uint64_t key, uint32_t mask)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

static uint64_t slot_key(const struct peak_rec *r, uint32_t v)
{
	return v & SPILLED ? spill[v & ~SPILLED] : (uint64_t)r->e[v - 1][0];
}

/* The hash at half full: twice the slots, this fill's keys moved over. False (the hash
 * as it was) when no memory can be had. */
static bool hash_grow(const struct peak_rec *r)
{
	uint32_t n = nslots ? 2 * nslots : 1024;	/* cleared at each fill: small first */
	uint32_t *fresh = peak_map((size_t)n * sizeof(*fresh));

	if (!fresh)
		return false;
	for (uint32_t i = 0; i < nslots; i++) {
		uint32_t h;

		if (!slots[i])
			continue;
		for (h = slot_of(slot_key(r, slots[i]), n - 1); fresh[h]; h = (h + 1) & (n - 1))
			;
		fresh[h] = slots[i];
	}
	if (slots)
		munmap(slots, (size_t)nslots * sizeof(*slots));
	slots = fresh;
	nslots = n;
	return true;
}

/* A stack past r's room, remembered so that it is counted once: false without memory
 * (it is then counted at each of its sites). */
static bool spill_add(uint64_t key, uint32_t *slot)
{
	if (nspill == spill_cap) {
		uint32_t n = spill_cap ? 2 * spill_cap : 4096;
		uint64_t *fresh = n < SPILLED ? peak_map((size_t)n * sizeof(*fresh)) : NULL;

		if (!fresh)
			return false;
		if (spill) {
			memcpy(fresh, spill, (size_t)nspill * sizeof(*spill));
			munmap(spill, (size_t)spill_cap * sizeof(*spill));
		}
		spill = fresh;
		spill_cap = n;
	}
	spill[nspill] = key;
	*slot = SPILLED | nspill++;
	return true;
}

/* The entry of key in r, made if new; the stacks past r's room share the entry of stack
 * id 0, and r->overflow counts them. */
static int64_t *peak_entry(struct peak_rec *r, uint64_t key, uint32_t *other)
{
	uint32_t *s = NULL, idx;

	if (keys + 1 > nslots / 2 && !hash_grow(r) && keys + 1 >= nslots)
		goto past;	/* no memory for the hash: counted, but not told apart */
	for (uint32_t h = slot_of(key, nslots - 1);; h = (h + 1) & (nslots - 1)) {
		s = &slots[h];
		if (!*s)
			break;
		if (slot_key(r, *s) == key)
			return r->e[*s & SPILLED ? *other : *s - 1];
	}
	keys++;
	if (r->used + 1 < cap) {	/* the last entry is kept for the rest */
		idx = (uint32_t)r->used++;
		*s = idx + 1;
		r->e[idx][0] = (int64_t)key;
		r->e[idx][1] = r->e[idx][2] = 0;
		return r->e[idx];
	}
	if (!spill_add(key, s))
		keys--;		/* not remembered: the next site of the stack comes here again */
past:
	r->overflow++;
	if (*other == UINT32_MAX) {
		*other = (uint32_t)r->used++;
		r->e[*other][0] = r->e[*other][1] = r->e[*other][2] = 0;
	}
	return r->e[*other];
}

/* Sum every site into r's entries, drop the empty ones, and total them; returns the
 * stacks (and regions) seen, those past r's room included. */
static uint32_t peak_fill(struct peak_rec *r)
{
	uint32_t end = table_site_ids(), other = UINT32_MAX, k = 0;
	int64_t bytes = 0, blocks = 0;

	if (slots)
		memset(slots, 0, (size_t)nslots * sizeof(*slots));
	keys = nspill = 0;
	r->used = r->overflow = 0;
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
	return keys;
}

/* Fill the record the next peak goes to (marked as being written) at ms. */
static struct peak_rec *peak_start(uint64_t ms, int64_t live, uint64_t step, uint32_t *seen)
{
	struct peak_rec *r = recs[taken & 1];

	__atomic_store_n(&r->writes, 2 * taken + 1, __ATOMIC_RELEASE);
	r->ms = ms;
	r->counter = (uint64_t)live;
	r->step = step;
	*seen = peak_fill(r);
	return r;
}

/*
 * One peak at live bytes (the caller holds busy). Stacks that do not fit the records
 * make them grow (to HEAPPROF_PEAK_ENTRIES) and the peak is summed again; past that,
 * they share one entry. A table whose exact total is below the last one's (the
 * counter ran ahead of the sites) is not written: a peak table never goes down.
 */
static bool peak_write(uint64_t ms, int64_t live, struct peak_point *at)
{
	struct peak_rec *old[2] = { NULL, NULL }, *r;
	uint32_t was = cap, seen;
	uint64_t step = (uint64_t)live / 100 > min_step ? (uint64_t)live / 100 : min_step;
	uint64_t last = taken ? recs[(taken - 1) & 1]->bytes : 0;
	bool lower;

	if (!recs[1] && !peak_grow(8192, old)) {
		__atomic_store_n(&peak_next_bytes, UINT64_MAX, __ATOMIC_RELAXED);
		return false;
	}
	r = peak_start(ms, live, step, &seen);
	if (r->overflow && peak_grow(seen + seen / 2, old))
		r = peak_start(ms, live, step, &seen);
	/* (records just grown are written anyway: the last peak goes with the old ones) */
	lower = taken && r->bytes < last && !old[0];
	__atomic_store_n(&r->writes, lower ? 0 : 2 * taken + 2, __ATOMIC_RELEASE);
	if (!lower)
		taken++;
	for (unsigned i = 0; i < 2; i++)
		if (old[i])
			munmap(old[i], rec_size(was));	/* the new one is whole: they go */
	__atomic_store_n(&peak_next_bytes, (uint64_t)live + step, __ATOMIC_RELAXED);
	if (lower)
		return false;
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
