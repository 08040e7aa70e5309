/*
 * Between the cfi walk (unwind_cfi.c) and its steps over frames that have no rule to
 * follow (unwind_scan.c): the walk's registers, and the one call. Not heapprof's
 * interface.
 */
#ifndef HP_UNWIND_SCAN_H
#define HP_UNWIND_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "cfi_parse.h"
#include "unwind_int.h"

struct regs {
	uintptr_t pc, sp, fp;
	bool fp_ok;	/* false once a frame lost track of rbp */
	bool fp_logged;	/* the read that gave fp is in the log */
	uintptr_t fp_from;	/* where fp was read, 0: the fp the walk started with */
	unsigned pc_read;	/* the log's index of the read that gave pc */
};

/* How a frame with no rule to follow ended (cfi_special). */
enum special {
	SP_FRAME,	/* r is its caller's frame, to record */
	SP_END,		/* the stack's outermost frame */
	SP_DROP,	/* r->pc is no frame (glibc's __start_context): take it back, the end */
	SP_CUT,		/* no way on: the walk stops early */
};

/*
 * A frame whose rule is not one to follow: a signal trampoline (CFI_SIGNAL), or code
 * without tables (CFI_NOINFO); n is the frames so far, r->pc the last. Reads only
 * through w, which it may grow or, past a signal frame, replace; logs what it reads.
 */
enum special cfi_special(uint64_t rule, struct stack_win *w, struct regs *r,
			 struct walk_log *log, uint64_t key, unsigned n, unsigned *sigframes)
	__attribute__((cold, visibility("hidden")));

/* Once, from the cfi unwinder's init: what the scan needs of the process. */
void cfi_scan_init(void) __attribute__((visibility("hidden")));

/* unwind_cfi.c's cached rule for return address pc (key: gen_key of the walk's
 * unwind_gen), filled if missing. */
uint64_t cfi_rule_cached(uintptr_t pc, uint64_t key) __attribute__((visibility("hidden")));

#endif
