/* The per-thread rings of HEAPPROF_EVENTS (see events.h), kept with the thread's slot
 * (table.h): a thread that takes a slot over rewrites the ring it finds there. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <time.h>

#include "block.h"
#include "events.h"
#include "heapprof_format.h"
#include "table.h"
#include "util.h"

struct ring {
	uint64_t magic, check, w2, written;
	uint64_t slots[][HP2_SLOT_WORDS];
};

static HP_TLS struct ring *ring;
static HP_TLS int ring_failed;

static struct ring *ring_get(void)
{
	size_t n = (size_t)hp_opt.events, len;
	int saved = errno;
	void **kept;
	struct ring *r;

	if (ring_failed)
		return NULL;
	kept = table_thread_ring();
	if (kept && *kept) {
		/* the slot's last thread's: made this thread's, its events gone */
		r = *kept;
		*(volatile uint64_t *)&r->magic = 0;
		for (size_t i = 0; i < n; i++)
			r->slots[i][5] = 0;
		r->written = 0;
	} else {
		len = (sizeof(struct ring) + n * sizeof(r->slots[0]) + 4095) & ~(size_t)4095;
		r = hp_map(len, HP2_OWN_RINGS, 0);
		errno = saved;
		if (r == MAP_FAILED) {
			ring_failed = 1;
			return NULL;
		}
		if (kept)
			*kept = r;
	}
	r->w2 = hp_tid() | (uint64_t)n << 32;
	r->check = table_record_check(r, &r->w2, 1);
	r->magic = HP2_RING_MAGIC;
	return ring = r;
}

void events_add(unsigned entry, uint64_t a, uint64_t b, uint64_t result, const void *block)
{
	uint32_t site = 0;

	if (block && block_tag(block))
		site = (uint32_t)(((const uint64_t *)block)[-2] >> 32);
	events_add_site(entry, a, b, result, site);
}

void events_add_site(unsigned entry, uint64_t a, uint64_t b, uint64_t result, uint32_t site)
{
	struct ring *r = ring ? ring : ring_get();
	uint64_t *s, seq;
	struct timespec ts;

	if (!r)
		return;
	seq = r->written + 1;
	s = r->slots[(seq - 1) % hp_opt.events];
	s[5] = 0;		/* invalid while it is rewritten */
	s[0] = entry | (uint64_t)site << 32;
	s[1] = a;
	s[2] = b;
	s[3] = result;
	s[4] = clock_gettime(CLOCK_MONOTONIC, &ts) == 0 ?
		       (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec : 0;
	__atomic_store_n(&s[5], seq, __ATOMIC_RELEASE);
	r->written = seq;
}

void events_after_fork(void)
{
	ring = NULL;
	ring_failed = 0;
}

void events_thread_end(void)
{
	ring = NULL;	/* the slot's now, for the thread that takes it over */
	ring_failed = 1;
}
