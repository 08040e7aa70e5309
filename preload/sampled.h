/*
 * The live sampled blocks of the process, by address: what a lean snapshot
 * (snapshot_lean.c) reads instead of the heap. Kept only when lean snapshots may be
 * taken (HEAPPROF_SAMPLE with HEAPPROF_SNAPSHOT=lean, or with HEAPPROF_INTERVAL and no
 * HEAPPROF_SNAPSHOT). The sampled path adds a block once its header is written; free
 * drops it before the block goes back: both rare, neither on the path of a block that
 * sampling leaves out.
 */
#ifndef HP_SAMPLED_H
#define HP_SAMPLED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

/* Which snapshots are lean (sampled_lean), as HEAPPROF_SNAPSHOT and HEAPPROF_INTERVAL say. */
enum sampled_lean {
	SAMPLED_LEAN_NONE,	/* none: no registry is kept */
	SAMPLED_LEAN_INTERVAL,	/* HEAPPROF_INTERVAL's (HEAPPROF_SNAPSHOT unset) */
	SAMPLED_LEAN_ALL,	/* every snapshot (HEAPPROF_SNAPSHOT=lean) */
};

/* Set once by sampled_init(), before the first block is tagged. */
extern int sampled_lean HP_HIDDEN;

/* Read the options (after options_read): whether to keep the registry; a warning when
 * HEAPPROF_SNAPSHOT names no mode, or asks for lean snapshots that cannot be had. */
HP_HIDDEN void sampled_init(void);

/* The sampled block at user is live / goes back (user: the pointer the program has). */
HP_HIDDEN void sampled_add(const void *user);
HP_HIDDEN void sampled_drop(const void *user);

/*
 * For a lean snapshot's writer, in this process: copy the live blocks' addresses into
 * out (room for max) under the registry's lock. Returns how many there are (more than
 * max: none copied, ask again with room for them), or -1 when the registry is not
 * whole: none is kept, an update was lost (a signal handler's allocation in a thread
 * changing it, no memory to grow it), or this thread holds its lock.
 */
HP_HIDDEN long sampled_copy(uint64_t *out, size_t max);

/* In a forked child: the lock is free (its holder is not in the child). */
HP_HIDDEN void sampled_after_fork(void);

#endif
