/*
 * libgcc's unwinder (_Unwind_Backtrace and the readers of its context), for the libgcc
 * unwinder and the at-exit walk, reached through one table: heapprof.so on x86_64
 * loads libgcc_s.so.1 when a walk first needs it (gcc_unwind.c; elsewhere libgcc is the
 * default unwinder, linked), libheapprof.a and the Rust crate link it
 * (gcc_unwind_linked.c).
 */
#ifndef HP_GCC_UNWIND_H
#define HP_GCC_UNWIND_H

#include <unwind.h>

#include "compiler.h"

/* (some are macros on ARM: a linked table points at functions that expand them) */
struct gcc_unwind {
	_Unwind_Reason_Code (*backtrace)(_Unwind_Trace_Fn fn, void *arg);
	_Unwind_Ptr (*get_ip)(struct _Unwind_Context *ctx);
	_Unwind_Word (*get_gr)(struct _Unwind_Context *ctx, int reg);
	_Unwind_Word (*get_cfa)(struct _Unwind_Context *ctx);
	void *(*find_enclosing)(void *pc);	/* NULL on ARM's EHABI */
};

/*
 * The unwinder; NULL where there is none (no libgcc_s to load, a libc other than
 * glibc's). The first call may load a library (it allocates and takes the loader's
 * lock: from the hooks, inside one, as their other allocations); the next ones are a
 * load and a compare.
 */
HP_HIDDEN const struct gcc_unwind *gcc_unwind(void);

#endif
