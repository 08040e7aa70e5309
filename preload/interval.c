/*
 * HEAPPROF_INTERVAL and HEAPPROF_KEEP (see interval.h). Only heapprof's thread takes
 * these snapshots and keeps their names: no lock, nothing on the allocation path. The
 * names live in a ring mapped at the first snapshot (HEAPPROF_KEEP + 1 slots of
 * PATH_MAX, touched as used); each writer gets a copy of it with the process, and
 * removes the older ones itself once its own file is there, so that the directory
 * never holds fewer than the newest N complete files, nor, once each is written, more.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heapprof_duration.h"
#include "interval.h"
#include "options.h"
#include "sigthread.h"
#include "snapshot.h"
#include "util.h"

static long period_ms;
static char (*ring)[PATH_MAX];	/* names, oldest at head; NULL with HEAPPROF_KEEP=0 */
static unsigned head, count, cap;
static bool pending;		/* the newest name's writer has not been heard from */
static bool first = true;	/* the first tick, at start: the first snapshot comes a
				 * period later */

static char *slot(unsigned i)
{
	return ring[(head + i) % cap];
}

/* In the parent, under the snapshot lock: the writer has its copy of the ring. */
static void named(const char *final)
{
	size_t len = strlen(final);

	pending = true;
	if (!ring || len >= PATH_MAX)
		return;	/* (a longer name cannot be taken: snapshot.c refuses it) */
	if (count == cap) {	/* cannot happen: the tick trims first */
		head = (head + 1) % cap;
		count--;
	}
	memcpy(slot(count++), final, len + 1);
}

/* In the writer, once its file has its name: all but the newest HEAPPROF_KEEP - 1 of
 * the earlier ones go (the ring it copied holds the earlier ones alone). */
static void published(void)
{
	unsigned keep = (unsigned)hp_opt.keep;

	if (!ring || count < keep)
		return;
	for (unsigned i = 0; i + keep - 1 < count; i++)
		unlink(slot(i));
}

/* Since the newest writer finished: what its copy removed, the parent forgets. */
static void settle(void)
{
	int err = snapshot_wait(0);

	if (err == ETIMEDOUT)
		return;
	pending = false;
	if (!ring)
		return;
	if (err) {	/* no file: the older ones stay */
		count--;
		return;
	}
	while (count > hp_opt.keep) {
		head = (head + 1) % cap;
		count--;
	}
}

static long tick(void)
{
	if (first) {
		first = false;
		return period_ms;
	}
	if (pending)
		settle();
	if (pending)
		return period_ms;	/* still being written: this one is skipped */
	snapshot_take(NULL, NULL, 0, SNAP_INTERVAL);
	return period_ms;
}

void interval_init(void)
{
	uint64_t ms;

	if (!hp_opt.interval)
		return;
	if (!hp_duration_ms(hp_opt.interval, &ms) || ms < 10 || ms > 86400000) {
		hp_warn("HEAPPROF_INTERVAL=", hp_opt.interval,
			" is not a duration from 10ms to 24h (500ms, 30s, 5m, 1h): no interval snapshots");
		return;
	}
	period_ms = (long)ms;
	if (hp_opt.keep) {
		void *p;

		cap = (unsigned)hp_opt.keep + 1;
		p = hp_sys_mmap(NULL, (size_t)cap * PATH_MAX, MAP_PRIVATE | MAP_NORESERVE);
		if (p == MAP_FAILED) {
			hp_warn("HEAPPROF_KEEP: no memory for the names (", hp_strerror(errno),
				"): every interval snapshot is kept");
		} else {
			ring = p;
		}
	}
	snapshot_interval_hooks(named, published);
	sigthread_every(tick);
}

void interval_after_fork(void)
{
	head = count = 0;
	pending = false;
	first = true;	/* its thread starts anew: its first a period later */
}
