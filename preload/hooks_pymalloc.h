/*
 * CPython's object allocator (pymalloc), named out of band: the blocks of 512 bytes or
 * less that the interpreter's object and memory domains serve from pymalloc's pools get
 * a slot word in a slab table per pool (include/heapprof_format.h), not a header, so
 * that pymalloc's size classes stay as they are. Larger blocks reach our malloc anyway.
 */
#ifndef HP_HOOKS_PYMALLOC_H
#define HP_HOOKS_PYMALLOC_H

#include "compiler.h"

/*
 * Wrap the interpreter's object and memory domains and its arena allocator, when a
 * CPython heapprof knows (3.11 to 3.13, 64-bit, not free-threaded) is linked into the
 * process. Called once by the constructor, before
 * Python's main: what PYTHONMALLOC sets up later replaces the wrap (malloc: the objects
 * reach our malloc; pymalloc: wrapped again at its first arena; the debug hooks: one
 * line on stderr). Calls dlsym: heapprof's own call, never inside a hook.
 */
HP_HIDDEN void pymalloc_start(void);

/* In a forked child: no other thread holds the tables' lock there. */
HP_HIDDEN void pymalloc_after_fork(void);

#endif
