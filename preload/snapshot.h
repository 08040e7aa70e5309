/*
 * Snapshots: heapprof.so writes an ELF core of its own process (ET_CORE, NT_PRSTATUS,
 * NT_PRPSINFO, NT_AUXV, NT_FILE, PT_LOAD) from a forked child, so the analyzer reads it
 * as it reads a core from gcore. Async-signal-safe: no malloc, no stdio, no locks.
 */
#ifndef HP_SNAPSHOT_H
#define HP_SNAPSHOT_H

#include <stdbool.h>
#include <ucontext.h>

#include "boot.h"

/*
 * Write one snapshot to path (NULL: the HEAPPROF_OUTPUT pattern). uc holds the calling
 * thread's registers (a signal handler's context), or NULL to take them here; sig is
 * the signal that asked for it (NT_PRSTATUS's pr_cursig), 0 if none. With
 * wait, the call returns once the file is written (at exit, at a crash); otherwise
 * once a child holds a copy of the process and writes it while the caller runs on.
 * Returns 0, or an errno value: EEXIST (the name is taken), EBUSY (this thread is
 * already taking one), or what open, fork or the child's writing said. One line on
 * stderr per snapshot or per failure.
 */
HP_HIDDEN int snapshot_take(const char *path, const ucontext_t *uc, int sig, bool wait);

#endif
