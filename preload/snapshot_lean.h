/*
 * A lean snapshot (snapshot_lean.c): an ELF core of heapprof's records and the live
 * sampled blocks' headers, without the heap, written by the thread that asks.
 */
#ifndef HP_SNAPSHOT_LEAN_H
#define HP_SNAPSHOT_LEAN_H

#include "compiler.h"
#include "snapshot_core.h"

/*
 * Write a lean snapshot to j->fd (opened, empty), and give it its name; j's ids and
 * the caller's registers are set (snap_core_ids). 0, or an errno value when it could
 * not be written (one line on stderr says why; the caller unlinks j->tmp). -1 when a
 * lean one cannot be had at all, before anything is written: *why_not says why (the
 * registry of sampled blocks or the map table lost an update, a system call the
 * process may not make), and the caller writes a compact one to the same file.
 */
HP_HIDDEN int snap_lean_write(struct snap_job *j, const char **why_not);

#endif
