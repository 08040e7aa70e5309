/*
 * Interpreters whose frames heapprof.so records in native allocation stacks, behind one
 * interface, as struct unwinder is for unwinders: each runtime is one file (interp_python.c)
 * and one row of interp.c's table. The frames go into a stack record as word pairs
 * (include/heapprof_format.h, "Python frames").
 */
#ifndef HP_INTERP_H
#define HP_INTERP_H

#include <stdint.h>

#include "compiler.h"

/* One interpreter frame, as an interp's capture gives it. */
struct interp_frame {
	uintptr_t code;		/* the code object it runs */
	uint32_t offset;	/* bytes from the code's first instruction to the one running */
	uint32_t flags;		/* INTERP_F_* */
};

/* The frame is the outermost of one call of the interpreter's evaluation loop: the
 * frames up to and including it replace that native frame. */
#define INTERP_F_ENTRY 0x1u

struct interp {
	const char *name;
	/* Find this runtime in the process: its version when heapprof knows its layout,
	 * else 0 (not here, silently; or one it does not know, one line on stderr). Calls
	 * dlsym: at start-up, never inside a hook. */
	uint32_t (*init)(void);
	/* The calling thread's frames, innermost first, into out[0..max-1]; how many.
	 * Async-signal-safe: loads only, no lock, no allocation. */
	unsigned (*capture)(struct interp_frame *out, unsigned max);
	/* The name record of a frame's code (table_alloc_record() memory), made the first
	 * time it is seen; NULL when it cannot be had now. Lock-free, no malloc. */
	const void *(*remember)(uintptr_t code);
};

extern const struct interp python_interp HP_HIDDEN;

/*
 * The first runtime of the table that init() finds in this process, or NULL. Called
 * once by start-up (hooks_start.c), with heapprof's own calls kept out of the profile.
 */
HP_HIDDEN const struct interp *interp_find(void);

#endif
