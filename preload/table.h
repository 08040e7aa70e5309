/*
 * The process's stack table (block format v2, include/heapprof_format.h): each
 * distinct stack stored once as a record, each (thread, stack, entry point) once as a
 * site record, and one process record, all in anonymous mappings of their own that a
 * scanner finds by their magics. Lookups take no lock and allocate nothing; inserts
 * are lock-free (a compare-and-swap on a chain head), so many threads inserting at
 * once neither lose nor duplicate a stack, and a signal handler may insert too.
 */
#ifndef HP_TABLE_H
#define HP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "compiler.h"

/* The v2 stack record as this process stores it (target = host). */
struct hp_stack_rec {
	uint64_t magic;		/* HP2_STACK_MAGIC */
	uint64_t check;
	uint64_t w2;		/* id | nframes << 32 | flags << 48 | wsize << 56 */
	uint64_t link;		/* next record in the chain (a pointer), private */
	uintptr_t pcs[];
};

/* A part of stacks, or a joined stack (HP2_STACK_PART, HP2_STACK_JOINED): w4 after the
 * stack record's words, then a part's own words. */
struct hp_part_rec {
	uint64_t magic, check, w2, link;	/* as a stack record's */
	uint64_t w4;		/* part: outer part id; joined: native | Python part id << 32 */
	uintptr_t pcs[];
};

/* The v2 site record: identity, then the counters only the thread holding its slot
 * writes (slot 0, the threads that ended: atomic adds). Its links are references to
 * records (table.c's chunk_ref: 4 bytes), so that both go in the one private word w4. */
struct hp_site_rec {
	uint64_t magic;		/* HP2_SITE_MAGIC */
	uint64_t check;
	uint64_t w2;		/* id | stack id << 32 */
	uint64_t w3;		/* thread slot | entry << 32 | region << 48 */
	uint32_t link;		/* the next in the chain, private */
	uint32_t slot_link;	/* the next site of the same slot, private (threads.h) */
	uint64_t calls, bytes;	/* allocations made here by the slot's thread */
	uint64_t frees, freed;	/* blocks from here freed by the slot's thread */
	uint64_t time_ns;	/* HEAPPROF_TIME */
};

/* Stacks of more than HP2_PART_MIN words go in parts that stacks share (HEAPPROF_STACK_PARTS;
 * set before table_init); false: every stack record whole. */
extern bool table_parts HP_HIDDEN;

/* Record the process (start time, options); called once when the allocator is known. */
HP_HIDDEN void table_init(uint64_t sample_period, unsigned max_frames, unsigned flags);

/* In a forked child: the process record names the child. */
HP_HIDDEN void table_after_fork(void);

/*
 * The site for this stack (pcs[0..n-1], innermost first: the native pcs, then with
 * HP2_STACK_PYTHON the Python frames' word pairs; sflags HP2_STACK_*, TRUNCATED if the
 * walk went on past the native part), the calling thread and entry (HP2_ENTRY_*):
 * found in the thread's cache or the table, inserted if new. tslot: table_thread_slot
 * (0 before the thread's first site: one is taken). NULL (no stack) if memory for a
 * new record cannot be had, or the thread has ended: the block is then still tagged,
 * only without its stack, and counted nowhere.
 * walk: the capture's walk id (unwind.h), 0 if none; py: table_words_hash() of the
 * Python words (0: none); m: the memo table_memo_find_py(walk, py) gave (or, in a
 * process that records no Python words, table_memo_find(walk)), and then pcs[1..] are
 * not read.
 */
struct table_memo;
HP_HIDDEN struct hp_site_rec *table_site_slow(const uintptr_t *pcs, unsigned n,
					      unsigned sflags, uint32_t tslot, unsigned entry,
					      uint64_t walk, uint64_t py, const struct table_memo *m);

/* The id of the stack record for pcs[0..n-1] (sflags as above; stored if new), without
 * a site: the event ring's free names its own stack so. 0 if memory for it cannot be
 * had. */
HP_HIDDEN uint32_t table_stack_id(const uintptr_t *pcs, unsigned n, unsigned sflags);

/* A hash of w[0..n-1] (a stack's Python words) for the memo: 0 for none, else nonzero. */
HP_HIDDEN uint64_t table_words_hash(const uintptr_t *w, unsigned n);

/* This thread's innermost region as it goes into a site's entry (id << 16; 0: none). */
extern HP_TLS unsigned table_region_entry HP_HIDDEN;

/* The calling thread's slot (threads.h) while it has one: 0 before its first site and
 * after its end. Sites name it. */
extern HP_TLS uint32_t table_thread_slot HP_HIDDEN;

/*
 * The thread's memo of walks: what the table found for a walk id (unwind_capture_walk)
 * and the Python words that went with it (their table_words_hash, 0 for none): its
 * stack record and hash, and the last site it gave (for slot and entry). A walk id's
 * low 8 bits tell apart the walks the unwinder keeps at once. The same native walk
 * under other Python frames is another stack: the memo answers only for the same py.
 */
struct table_memo {
	uint64_t walk;
	uint64_t py;
	const struct hp_stack_rec *stack;
	struct hp_site_rec *site;
	uint64_t hash;
	uint32_t tslot, entry;
};
#define TABLE_MEMO 256
extern HP_TLS struct table_memo hp_table_memo[TABLE_MEMO] HP_HIDDEN;

static inline struct table_memo *table_memo_of(uint64_t walk)
{
	return &hp_table_memo[walk % TABLE_MEMO];
}

/* The memo of walk, when the table knows its stack (its frames are then not needed);
 * NULL for walk 0 or one not seen. For a process that records no Python words: every
 * memo then has py 0. */
static inline struct table_memo *table_memo_find(uint64_t walk)
{
	struct table_memo *m = table_memo_of(walk);

	return walk && m->walk == walk ? m : NULL;
}

/* The same, for a stack whose Python words have hash py: NULL for a walk last seen
 * under other Python words. */
static inline struct table_memo *table_memo_find_py(uint64_t walk, uint64_t py)
{
	struct table_memo *m = table_memo_of(walk);

	return walk && m->walk == walk && m->py == py ? m : NULL;
}

/* Inline: a walk whose memo m (table_memo_find) holds this thread's site is answered
 * here. */
static inline struct hp_site_rec *table_site(const uintptr_t *pcs, unsigned n, unsigned sflags,
					     uint32_t tslot, unsigned entry, uint64_t walk,
					     uint64_t py, const struct table_memo *m)
{
	entry |= table_region_entry;	/* a site is also per region */
	if (m && m->tslot == tslot && m->entry == entry)
		return m->site;
	return table_site_slow(pcs, n, sflags, tslot, entry, walk, py, m);
}

/*
 * The site, of this thread, that counts frees of blocks allocated at site id (NULL if
 * that site is unknown, memory cannot be had, or the thread has ended): a per-thread
 * cache in front of table_free_site_slow(). Inline: every free asks.
 */
#define TABLE_FREE_CACHE 256
struct table_free_slot {
	uint32_t id;
	struct hp_site_rec *site;
};
extern HP_TLS struct table_free_slot hp_free_cache[TABLE_FREE_CACHE] HP_HIDDEN;

HP_HIDDEN struct hp_site_rec *table_free_site_slow(uint32_t id);

/* For a thread that has ended (else NULL): the site of the threads that ended (slot 0)
 * for blocks of site id, where its frees count, with atomic adds (others write it). */
HP_HIDDEN struct hp_site_rec *table_ended_site(uint32_t id);

static inline struct table_free_slot *table_free_slot_of(uint32_t id)
{
	return &hp_free_cache[((id * 0x9E3779B9u) >> 24) % TABLE_FREE_CACHE];
}

static inline struct hp_site_rec *table_free_site(uint32_t id)
{
	struct table_free_slot *f = table_free_slot_of(id);

	if (__builtin_expect(f->id == id && f->site != NULL, 1))
		return f->site;
	return table_free_site_slow(id);
}

/* The site's id, as block headers name it. */
static inline uint32_t table_site_id(const struct hp_site_rec *s)
{
	return (uint32_t)s->w2;
}

/* This thread's live bytes (its slot's record), while it has one: live.h keeps the
 * pointer and adds to it (table_live_add() in a NO_TIMELINE build); table_live_bytes()
 * sums all threads', those that ended included (read without stopping them, so only
 * as exact as a moment allows). */
extern HP_TLS int64_t *hp_thread_live HP_HIDDEN;

static inline void table_live_add(int64_t bytes)
{
	if (hp_thread_live)
		*hp_thread_live += bytes;	/* this thread's alone: no atomic needed */
}
HP_HIDDEN int64_t table_live_bytes(void);

/* For the peak table: site ids run from 1 to table_site_ids() - 1; the record of one,
 * or NULL (not published yet, lost a race, or past the directory). */
HP_HIDDEN uint32_t table_site_ids(void);
HP_HIDDEN const struct hp_site_rec *table_site_by_id(uint32_t id);

/* Regions of code (per thread, nested): sites made inside carry the innermost one. */
HP_HIDDEN void table_region_begin(const char *name);
HP_HIDDEN void table_region_end(void);

/* Memory in the table's mappings for a record of size bytes (64-aligned; own: the
 * HP2_OWN_* kind of mapping it goes in, NAMES, TIMELINE, else RECORDS), and the
 * check of one: over its address and nw words from w. For records made elsewhere. */
HP_HIDDEN void *table_alloc_record(size_t size, unsigned own);
HP_HIDDEN uint64_t table_record_check(const void *rec, const uint64_t *w, unsigned nw);

/*
 * fn runs on a thread that has a slot when it ends (returns, pthread_exit(),
 * cancellation; not exit(), which ends the process): in the last round of its key
 * destructors, so that other keys' destructors, which may free, run before it; then
 * the slot goes back, for a later thread. Set once, at start-up.
 */
HP_HIDDEN void table_on_thread_end(void (*fn)(void));

/* Where the calling thread's slot keeps its event ring (HEAPPROF_EVENTS; NULL in it
 * until the slot's first), so that a thread taking the slot over writes the same one:
 * taken now if the thread holds no slot yet. NULL when it has ended, or no slot can be
 * had. */
HP_HIDDEN void **table_thread_ring(void);

/* The calling thread's name changed (or may have): refresh its thread record. */
HP_HIDDEN void table_thread_named(void);

/*
 * ms since the process record's start, for block headers: CLOCK_MONOTONIC_COARSE (a
 * read of the vDSO's page, no TSC) in whole ms, less the start's. Inline: every tagged
 * block asks for it.
 */
extern uint64_t table_start_ms HP_HIDDEN;

static inline uint64_t table_ms(void)
{
	struct timespec ts;
	uint64_t now;

	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return 0;
	now = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	return now > table_start_ms ? now - table_start_ms : 0;
}

#endif
