/*
 * The registry of live sampled blocks (sampled.h): an open-addressing hash set of
 * addresses under a spin lock, in a table of heapprof's own that grows and shrinks by
 * rehashing into a new one. Each entry holds the block's address inverted, so that no
 * reader of a dump (the heap graph's root scan) takes the registry for a pointer to
 * the block: on 64-bit targets ~address is never a user address.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include "heapprof_format.h"
#include "maps.h"
#include "options.h"
#include "sampled.h"
#include "util.h"

int sampled_lean;

#define EMPTY ((uint64_t)0)
#define GONE ((uint64_t)1)	/* a dropped entry: a search goes on past it */
#define MIN_SLOTS 1024u		/* 8 KiB: a few hundred live sampled blocks is usual */

/* The table is one mapping, its size in its first word, so that a reader that copies
 * the pointer has the size that goes with it. */
struct set {
	uint64_t cap;		/* slots, a power of two */
	uint64_t slot[];	/* EMPTY, GONE, or ~address */
};

static struct set *set;
static size_t used, gone;	/* live entries, GONE entries */
static int lock_word;		/* 0 free, 1 held */
static HP_TLS bool busy;	/* this thread holds it: a signal handler's call gives up */
static bool lost;		/* an update could not be made: the registry is not whole */

/* ---- the mode ---------------------------------------------------------------------- */

void sampled_init(void)
{
	const char *m = hp_opt.snapshot;
	bool asked = m && !strcmp(m, "lean");

	if (!asked && (m || !hp_opt.interval))
		return;
	/* a lean snapshot takes heapprof's own mappings from the map table */
	if (!hp_opt.sample || !hp_opt.maps || !maps_init) {
		if (asked)
			hp_warn("HEAPPROF_SNAPSHOT=lean ", !hp_opt.sample ?
				"needs HEAPPROF_SAMPLE (only sampled blocks are listed)" :
				"needs the map table (HEAPPROF_MAPS is 0, or this build has none)",
				": snapshots are compact");
		return;
	}
	sampled_lean = asked ? SAMPLED_LEAN_ALL : SAMPLED_LEAN_INTERVAL;
}

/* ---- the table --------------------------------------------------------------------- */

/* The lock, unless this thread holds it already (a signal handler's call): then an
 * update is lost, and the registry is not whole from here on. */
static bool take(bool update)
{
	if (busy) {
		lost |= update;
		return false;
	}
	for (unsigned spins = 0; __atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE); spins++)
		if (spins > 64)
			sched_yield();
	busy = true;
	return true;
}

static void give(void)
{
	busy = false;
	__atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

static size_t home(uint64_t key, uint64_t cap)
{
	return (size_t)((key >> 4) * 0x9E3779B97F4A7C15ULL >> 32) & (cap - 1);
}

/* Into a table of cap slots that has room: no GONE entries there yet. */
static void put(struct set *s, uint64_t key)
{
	size_t i = home(key, s->cap);

	while (s->slot[i] != EMPTY)
		i = (i + 1) & (s->cap - 1);
	s->slot[i] = key;
}

/* A new table for the live entries and one more, a quarter full at most; the old one
 * goes once the new one is in place. False when there is no memory for it. */
static bool rehash(void)
{
	uint64_t cap = MIN_SLOTS;
	struct set *s, *old = set;

	while (cap < 4 * (used + 1))
		cap *= 2;
	s = hp_map(sizeof(*s) + cap * sizeof(s->slot[0]), HP2_OWN_INDEX, 0);
	if (s == MAP_FAILED)
		return false;
	s->cap = cap;
	for (size_t i = 0; old && i < old->cap; i++)
		if (old->slot[i] > GONE)
			put(s, old->slot[i]);
	__atomic_store_n(&set, s, __ATOMIC_RELEASE);
	gone = 0;
	if (old)
		munmap(old, sizeof(*old) + old->cap * sizeof(old->slot[0]));
	return true;
}

void sampled_add(const void *user)
{
	uint64_t key = ~(uint64_t)(uintptr_t)user;
	size_t i, at = SIZE_MAX;

	if (!take(true))
		return;
	if (lost)
		goto out;
	/* three quarters taken (live and GONE): a new table first */
	if ((!set || 4 * (used + gone + 1) > 3 * set->cap) && !rehash()) {
		lost = true;
		goto out;
	}
	for (i = home(key, set->cap); set->slot[i] != EMPTY; i = (i + 1) & (set->cap - 1)) {
		if (set->slot[i] == key)
			goto out;	/* its last free was not ours to see (a libc-internal one) */
		if (set->slot[i] == GONE && at == SIZE_MAX)
			at = i;
	}
	if (at == SIZE_MAX)
		at = i;
	else
		gone--;
	set->slot[at] = key;
	used++;
out:
	give();
}

void sampled_drop(const void *user)
{
	uint64_t key = ~(uint64_t)(uintptr_t)user;

	if (!take(true))
		return;
	for (size_t i = set && !lost ? home(key, set->cap) : 0; set && !lost && set->slot[i] != EMPTY;
	     i = (i + 1) & (set->cap - 1))
		if (set->slot[i] == key) {
			set->slot[i] = GONE;
			used--;
			gone++;
			break;
		}
	give();
}

long sampled_copy(uint64_t *out, size_t max)
{
	size_t n = 0;

	if (!sampled_lean || !take(false))
		return -1;
	if (lost) {
		give();
		return -1;
	}
	if (used <= max)
		for (size_t i = 0; set && i < set->cap; i++)
			if (set->slot[i] > GONE)
				out[n++] = ~set->slot[i];
	n = used;
	give();
	return (long)n;
}

void sampled_after_fork(void)
{
	bool held = __atomic_load_n(&lock_word, __ATOMIC_RELAXED);

	lock_word = 0;
	busy = false;
	/* another thread was changing it: the table is whole (a slot is one store, a new
	 * table is put in place once filled), the counts may not be */
	if (held && set) {
		used = gone = 0;
		for (size_t i = 0; i < set->cap; i++) {
			used += set->slot[i] > GONE;
			gone += set->slot[i] == GONE;
		}
	}
}
