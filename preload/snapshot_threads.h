/*
 * The program's threads as a snapshot records them (snapshot_core.c writes an
 * NT_PRSTATUS note for each). Listed in the process before the fork, each one's
 * registers read from /proc/self/task/TID/syscall when it waits in the kernel; read
 * again after the fork, so that a thread that ran meanwhile is known not to stand
 * where it stood. No thread is stopped or signalled. Async-signal-safe: syscalls.
 */
#ifndef HP_SNAPSHOT_THREADS_H
#define HP_SNAPSHOT_THREADS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "compiler.h"

enum snap_thread_state {
	SNAP_T_RUNS,	/* ran, or may have, around the fork: registers unknown */
	SNAP_T_STILL,	/* waited in the kernel at both readings, unmoved: sp, pc, args */
};

struct snap_thread {
	int32_t tid;
	uint32_t state;		/* enum snap_thread_state */
	uint64_t stamp;		/* hash of what /proc said at the first reading */
	uint64_t nr;		/* SNAP_T_STILL: the system call (-1: none), its six */
	uint64_t args[6];	/* arguments, stack pointer and program counter */
	uint64_t sp, pc;
	uint64_t tp;		/* its thread pointer, 0 if unknown (snap_threads_find_tp) */
};

/* A list, in memory the writer shares with the process (MAP_SHARED): the parent
 * fills it before the fork and says after it, in ready, whether its second reading
 * is in. */
struct snap_threads {
	uint32_t n, cap;
	uint32_t ready;		/* the parent's second reading is in */
	uint32_t complete;	/* t[] holds every thread of the process at the fork
				 * (the caller and heapprof's own thread aside) */
	struct snap_thread t[];
};

/* At start-up, on the main thread: what the thread descriptors look like. */
HP_HIDDEN void snap_threads_init(void);

/* In the child of fork(): the calling thread is the main thread now. */
HP_HIDDEN void snap_threads_after_fork(void);

/*
 * In the process, before the fork: every thread but caller and skip (heapprof's own,
 * 0 if none), read once. NULL when /proc cannot say (the snapshot then lists the
 * caller alone). *len is the mapping's size, for snap_threads_recheck.
 */
HP_HIDDEN struct snap_threads *snap_threads_list(pid_t caller, pid_t skip, size_t *len);

/* In the process, right after the fork: read each again; a thread whose line or run
 * count changed, or that is gone, runs; threads new since the list are added (they
 * may have been there at the fork). Then ready, and the process's mapping goes. */
HP_HIDDEN void snap_threads_recheck(struct snap_threads *t, pid_t caller, pid_t skip,
				    size_t len);

/* In the writer: until the process's second reading is in (a second at most; past
 * it, every thread is taken to run). */
HP_HIDDEN void snap_threads_wait(struct snap_threads *t);

/*
 * In the writer, for a mapping [start, end) of its copy of the process: a glibc thread
 * descriptor at its top (as glibc places one on every thread stack it makes), and
 * whose thread it is. Returns 0 (none, or not a layout known here), 1 (a listed
 * thread's: its tp is set) or 2 (an exited thread's, one that is no listed thread's,
 * or whose it is cannot be told: snap_threads_tp_known).
 */
HP_HIDDEN int snap_threads_find_tp(struct snap_threads *t, uint64_t start, uint64_t end);

/* Whether snap_threads_find_tp can tell whose a descriptor is (x86-64 glibc, the
 * offset of its thread id learned). */
HP_HIDDEN bool snap_threads_tp_known(void);

/* In the writer: t lists every thread of the process at the fork, and (where glibc
 * puts descriptors on stacks) each descriptor found was told a live or a dead one's:
 * the snapshot may say its thread list is complete (HP_NOTE_THREADS). */
HP_HIDDEN bool snap_threads_complete(const struct snap_threads *t);

/* The main thread's thread pointer, recorded at start-up (0 if unknown). */
HP_HIDDEN uint64_t snap_threads_main_tp(void);

#endif
