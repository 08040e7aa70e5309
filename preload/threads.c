/*
 * Thread slots (threads.h). Slots live in pages of SLOT_PAGE mapped as they are
 * needed, each record beside its private part; slot n is at a fixed place, found
 * without a lock. Slots given back wait in a ring of the last ENDED_KEPT, which keep
 * their thread's tid, name and counts for a dump; the oldest then goes to the free
 * list, a stack that threads starting take from. Both are under a spin lock taken
 * only when a thread takes its slot or ends, never on an allocation, and never twice
 * by one thread (a signal handler's allocation while it is held finds the thread
 * taking or ended, and goes without a site).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "util.h"
#include "heapprof_format.h"
#include "threads.h"

#define SLOT_PAGE_BITS 10
#define SLOT_PAGE (1u << SLOT_PAGE_BITS)
#define SLOT_PAGES 4096		/* 4 million slots: threads alive at once */
/* Slots of threads that ended, not taken over yet. Each slot has its own sites, so on a
 * server that starts a thread per request the sites of the request's stacks exist once
 * per kept slot: 16 cost python3 -m http.server 730 KiB more than 1 (bench/own_rss.py) */
#define ENDED_KEPT 4

struct slot_page {
	struct thread_rec rec[SLOT_PAGE];
	struct thread_slot slot[SLOT_PAGE];
};

_Static_assert(sizeof(struct thread_rec) == HP2_THREAD_SIZE, "thread record");

static struct slot_page *pages[SLOT_PAGES];
static uint32_t next_slot = 1;	/* slot 0: the threads that ended, in site records */
static int64_t ended_live;	/* live bytes of the records taken over */

static int lock;
static uint32_t free_top;	/* the free list's first slot, 0: empty */
static uint32_t ended[ENDED_KEPT];	/* the ring of the last slots given back */
static unsigned ended_first, ended_n;

/* Slot n, or NULL when its page is not there (yet). */
static struct thread_slot *slot_at(uint32_t n)
{
	struct slot_page *p;

	if (n >> SLOT_PAGE_BITS >= SLOT_PAGES)
		return NULL;
	p = __atomic_load_n(&pages[n >> SLOT_PAGE_BITS], __ATOMIC_ACQUIRE);
	return p ? &p->slot[n & (SLOT_PAGE - 1)] : NULL;
}

static struct slot_page *page_for(uint32_t n)
{
	struct slot_page **at = &pages[n >> SLOT_PAGE_BITS];
	struct slot_page *p = __atomic_load_n(at, __ATOMIC_ACQUIRE), *fresh;

	if (p)
		return p;
	fresh = hp_map(sizeof(*fresh), HP2_OWN_THREADS, 0);
	if (fresh == MAP_FAILED)
		return NULL;
	if (__atomic_compare_exchange_n(at, &p, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return fresh;
	munmap(fresh, sizeof(*fresh));	/* another thread mapped it first */
	return p;
}

/*
 * Give record r its identity, the magic last, in two halves: a register left holding
 * the whole magic would be saved on the thread's stack by the next variadic call
 * (prctl's), where a scan finds a stray copy with a bad check (peak.c's seal met the
 * same with a callee-saved register).
 */
static void slot_seal(struct thread_rec *r)
{
	volatile uint32_t *half = (volatile uint32_t *)&r->magic;
	unsigned lo = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

	r->check = hp_check_final(hp_mix(hp_mix(HP2_SEED, (uint64_t)(uintptr_t)r), r->slot));
	__atomic_thread_fence(__ATOMIC_RELEASE);
	half[lo] = (uint32_t)HP2_THREAD_MAGIC;
	half[!lo] = (uint32_t)(HP2_THREAD_MAGIC >> 32);
}

/* A slot never used before; its record is sealed once named (threads_take). */
static struct thread_slot *slot_new(void)
{
	uint32_t n = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
	struct slot_page *p;
	struct thread_slot *s;

	if (n >> SLOT_PAGE_BITS >= SLOT_PAGES || !(p = page_for(n)))
		return NULL;
	s = &p->slot[n & (SLOT_PAGE - 1)];
	p->rec[n & (SLOT_PAGE - 1)].slot = n;
	__atomic_store_n(&s->rec, &p->rec[n & (SLOT_PAGE - 1)], __ATOMIC_RELEASE);
	return s;
}

static void slots_lock(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();	/* another thread starts or ends: a few stores */
}

static void slots_unlock(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

/* (under the lock) */
static void free_push(struct thread_slot *s)
{
	s->next_free = free_top;
	free_top = (uint32_t)s->rec->slot;
}

/* (under the lock) s joins the ring of ended slots; the oldest, if it is full, is
 * free from now on. */
static void ended_push(struct thread_slot *s)
{
	if (ended_n == ENDED_KEPT) {
		free_push(slot_at(ended[ended_first]));
		ended_first = (ended_first + 1) % ENDED_KEPT;
		ended_n--;
	}
	ended[(ended_first + ended_n++) % ENDED_KEPT] = (uint32_t)s->rec->slot;
}

static struct thread_slot *free_pop(void)
{
	struct thread_slot *s = NULL;

	slots_lock();
	if (free_top) {
		s = slot_at(free_top);
		free_top = s->next_free;
	}
	slots_unlock();
	return s;
}

void threads_name(struct thread_slot *s)
{
	char name[17] = "";

	if (prctl(PR_GET_NAME, name) == 0)
		memcpy(s->rec->name, name, sizeof(s->rec->name));
}

struct thread_slot *threads_take(uint32_t tid, bool *reused)
{
	struct thread_slot *s = free_pop();

	*reused = s != NULL;
	if (!s && !(s = slot_new()))
		return NULL;
	threads_name(s);
	__atomic_store_n(&s->rec->tid_state, tid | (uint64_t)HP2_THREAD_LIVE << 32,
			 __ATOMIC_RELEASE);
	if (!*reused)
		slot_seal(s->rec);
	return s;
}

void threads_give_back(struct thread_slot *s)
{
	uint32_t tid = (uint32_t)s->rec->tid_state;

	__atomic_store_n(&s->rec->tid_state, tid | (uint64_t)HP2_THREAD_ENDED << 32,
			 __ATOMIC_RELEASE);
	slots_lock();
	ended_push(s);
	slots_unlock();
}

void threads_fold_live(struct thread_slot *s)
{
	__atomic_add_fetch(&ended_live, s->rec->live, __ATOMIC_RELAXED);
	s->rec->live = 0;
}

int64_t threads_live_bytes(void)
{
	uint32_t end = __atomic_load_n(&next_slot, __ATOMIC_RELAXED);
	int64_t sum = __atomic_load_n(&ended_live, __ATOMIC_RELAXED);

	for (uint32_t n = 1; n < end; n++) {
		struct thread_slot *s = slot_at(n);

		if (s && s->rec)
			sum += __atomic_load_n(&s->rec->live, __ATOMIC_RELAXED);
	}
	return sum;
}

void threads_after_fork(struct thread_slot *self, uint32_t tid)
{
	uint32_t end = next_slot;

	lock = 0;
	free_top = 0;
	ended_first = ended_n = 0;
	for (uint32_t n = 1; n < end; n++) {
		struct thread_slot *s = slot_at(n);

		if (!s || !s->rec)
			continue;	/* being made in the parent when it forked */
		if (s == self) {
			s->rec->tid_state = tid | (uint64_t)HP2_THREAD_LIVE << 32;
			continue;
		}
		s->rec->tid_state = (uint32_t)s->rec->tid_state | (uint64_t)HP2_THREAD_ENDED << 32;
		ended_push(s);
	}
}
