/*
 * Python frames for native allocation stacks: where this process's CPython (3.11 to
 * 3.13, 64-bit) keeps the calling thread's frame chain, found once; a capture of that
 * chain that neither calls into Python nor allocates nor locks; and the names of code
 * objects, copied into heapprof's own records so they outlive the objects. The row
 * python_interp of interp.c's table (interp.h) puts the three together.
 */
#ifndef HP_INTERP_PYTHON_H
#define HP_INTERP_PYTHON_H

#include <stdint.h>

#include "compiler.h"
#include "interp.h"

/* Python's frames are interp.h's; the entry flag marks the outermost frame of one call
 * of the evaluation loop (_PyEval_EvalFrameDefault). */
#define PYTHON_F_ENTRY INTERP_F_ENTRY

/*
 * Find the interpreter linked into this process (the executable or a libpython, by
 * dlsym of _PyRuntime, Py_Version and PyCode_Type) and choose its layout. Returns its
 * PY_VERSION_HEX when heapprof knows that layout, else 0: no Python in the process
 * (silently), or one it does not know (one line on stderr). The first call that finds
 * an interpreter decides, and later calls return its answer; while there is none, each
 * call looks again (a libpython dlopen'ed with RTLD_GLOBAL is found after its dlopen).
 * Calls dlsym: at start-up or after a dlopen, never inside a hook.
 */
HP_HIDDEN uint32_t python_init(void);

/*
 * The calling thread's Python frames, innermost first, into out[0..max-1]; returns how
 * many (0: python_init() found nothing, or the thread runs no Python). The thread's
 * state comes from the interpreter's own thread-specific key (pthread_getspecific), so
 * it is found whether or not the thread holds the GIL. Async-signal-safe: only loads,
 * no locks, no allocation. Frames that have not started yet and the interpreter's
 * shim frames are left out.
 */
HP_HIDDEN unsigned python_capture(struct interp_frame *out, unsigned max);

/*
 * The name record (HP2_PYCODE_MAGIC, include/heapprof_format.h) of the code object
 * code, made from the object the first time it is seen: its qualified name, file name,
 * first line and line table copied into table_alloc_record() memory. A code object
 * freed and another made at the same address is a new identity (its name, file and
 * table are compared by address), so it gets a record of its own. NULL if code is not
 * a code object, memory cannot be had, or another thread (or the code this signal
 * interrupted) is making that record right now. Lock-free and without malloc.
 */
HP_HIDDEN const void *python_remember(uintptr_t code);

#endif
