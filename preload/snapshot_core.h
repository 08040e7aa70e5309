/*
 * The ELF core a snapshot is (snapshot_core.c), and what the parent hands the writer:
 * the file, the caller's registers and ids. Async-signal-safe on both sides.
 */
#ifndef HP_SNAPSHOT_CORE_H
#define HP_SNAPSHOT_CORE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/procfs.h>
#include <sys/types.h>
#include <ucontext.h>

#include "compiler.h"

struct snap_threads;

struct snap_job {
	char final[PATH_MAX], tmp[PATH_MAX + 8];	/* tmp = final ".part" */
	int fd;			/* tmp, opened by the parent */
	bool full;		/* HEAPPROF_SNAPSHOT=full */
	bool lean;		/* heapprof's records and the sampled headers (snapshot_lean.h) */
	bool light;		/* keep little of the file in the page cache as it goes */
	bool quiet;		/* no line on stderr when it is written (failures still say) */
	bool interval;		/* HEAPPROF_INTERVAL's: the writer calls the published hook */
	int cursig;		/* the signal that asked for it, 0 if none */
	pid_t pid, tid, ppid, pgrp, sid;
	bool caller_listed;	/* the calling thread is the program's (not heapprof's own):
				 * its registers are the first NT_PRSTATUS */
	elf_gregset_t regs;	/* the calling thread's, in the kernel's core layout */
	uint64_t sp;		/* the calling thread's stack pointer, 0 if unknown */
	bool at_call;		/* ... taken where it called a function (the API, exit): no
				 * red zone below it */
	uint64_t t0_ns;		/* CLOCK_MONOTONIC when it was asked for */
	uint64_t at_mono_ns, at_real_ns;	/* the snapshot's moment, the writer's copy
						 * made (HP_NOTE_TIME): set by the writer */
	uint32_t gen;		/* asynchronous: the writer's generation; 0: waited for */
	struct snap_threads *threads;	/* the program's other threads (MAP_SHARED), or NULL */
	size_t threads_len;		/* its mapping's size */
	pid_t own_tid;			/* heapprof's own thread, 0 if none */
	uint64_t own_lo, own_hi;	/* its stack, left out of the snapshot */
};

/*
 * In the parent, before the fork: ids, the caller's registers (uc may be NULL: none),
 * the program's other threads as they stand (snapshot_threads.h). snap_core_ids: the
 * first two alone (a lean snapshot lists no other thread).
 */
HP_HIDDEN void snap_core_prepare(struct snap_job *j, const ucontext_t *uc);
HP_HIDDEN void snap_core_ids(struct snap_job *j, const ucontext_t *uc);

/* In the parent, once the writer is forked (or failed to be): the threads read again,
 * and the writer told. */
HP_HIDDEN void snap_core_forked(struct snap_job *j);

/* In the child: write the core to j->fd, then give it its name. 0 or an errno value;
 * says one line on stderr either way. */
HP_HIDDEN int snap_core_write(struct snap_job *j);

#endif
