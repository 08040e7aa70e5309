/*
 * Snapshots: heapprof.so writes an ELF core of its own process (ET_CORE, NT_PRSTATUS,
 * NT_PRPSINFO, NT_AUXV, NT_FILE, PT_LOAD) from a forked child, so the analyzer reads it
 * as it reads a core from gcore. Async-signal-safe: no malloc, no stdio, no locks.
 */
#ifndef HP_SNAPSHOT_H
#define HP_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "compiler.h"

/* Who asks for a snapshot: it decides what happens while another is being written. */
enum snap_why {
	SNAP_API,	/* heapprof_snapshot(): waits for a writer in flight, HEAPPROF_WAIT_MS */
	SNAP_SIGNAL,	/* HEAPPROF_SIGNAL: refused while a writer runs, with one line */
	SNAP_PEAK,	/* HEAPPROF_PEAK: waits for a writer in flight, as the API */
	SNAP_EXIT,	/* at exit: waits for a writer in flight, then writes its own */
	SNAP_CRASH,	/* a crash signal: written at once, whatever else runs */
	SNAP_OOM,	/* HEAPPROF_OOM: as a crash, named with ".oom" (see snapshot_take) */
	SNAP_INTERVAL,	/* HEAPPROF_INTERVAL: refused while a writer runs, quietly; written
			 * with no line on stderr, and the hooks below called */
};

/*
 * HEAPPROF_INTERVAL's bookkeeping (interval.c): named(final) in the caller, under the
 * snapshot lock, once a writer holds the copy that will be final; published() in the
 * writer, once its file has its name. Set before the first snapshot.
 */
HP_HIDDEN void snapshot_interval_hooks(void (*named)(const char *final), void (*published)(void));

/*
 * Write one snapshot to path (NULL: the HEAPPROF_OUTPUT pattern, with ".oom" before a
 * final ".snap", or after it all, for SNAP_OOM). uc holds the calling thread's
 * registers (a signal handler's context), or NULL to take them here; sig is the signal
 * that asked for it (NT_PRSTATUS's pr_cursig), 0 if none. SNAP_EXIT, SNAP_CRASH and
 * SNAP_OOM return once the file is written (SNAP_OOM's writer keeps little of it in
 * the page cache: its memory counts against the limit); the others once a child holds
 * a copy of the process and writes it while the caller runs on. At most one such
 * writer runs at a time (see enum snap_why). Returns 0, or an errno value: EEXIST (the
 * name is taken), EBUSY (this thread is already taking one, or a writer is still
 * running), or what open, fork or the child's writing said. One line on stderr per
 * snapshot or per failure.
 */
HP_HIDDEN int snapshot_take(const char *path, const ucontext_t *uc, int sig, enum snap_why why);

/*
 * Wait up to timeout_ms (negative: no limit) until no asynchronous writer of this
 * process is running. 0 when the last one wrote its file (or there was none), its
 * errno value when it failed (EIO: it died), ETIMEDOUT when it still runs.
 */
HP_HIDDEN int snapshot_wait(long timeout_ms);

/* Fill uc with the context of a caller whose stack pointer was sp at the call and
 * which returns to pc (see snapshot.c); uc, or NULL if getcontext failed. */
HP_HIDDEN const ucontext_t *snapshot_context_at(ucontext_t *uc, uintptr_t sp, uintptr_t pc);

/* Address space (len bytes at p, mapped PROT_NONE) that every writer unmaps in its own
 * copy of the process before it maps anything: under RLIMIT_AS the copy is as large
 * as the process, so the writer's room is what the process keeps for it. NULL: none. */
HP_HIDDEN void snapshot_reserve(void *p, size_t len);

/* In the child of fork(): no snapshot is being taken or written there. */
HP_HIDDEN void snapshot_after_fork(void);

#endif
