/*
 * The fp unwinder (x86_64): follows the frame-pointer chain, [rbp] = caller's rbp,
 * [rbp + 8] = return address, and keeps a return address only where cfi_is_text()
 * (unwind_cfi.c) finds a call before it in loaded code.
 */
#include "unwind_int.h"

#include "unwind_cfi.h"

#if HP_UNWIND_X86_64

/*
 * The chain from fp, with pcs[0..n) taken. Each record must lie above the last one
 * (strictly increasing, so no loops) and inside the stack; the chain breaks at the
 * first library built without frame pointers, where rbp holds anything, so each return
 * address is checked as well. Two copies: on the thread's stack (growable false, the
 * window never grows) and on any other, where the window grows as the chain goes up
 * (not replayed). Where a chain ends is no sign of whether the stack does: fp marks
 * no walk cut.
 */
static inline __attribute__((always_inline)) unsigned
fp_walk(uintptr_t *pcs, unsigned max, uintptr_t fp, uintptr_t floor, struct stack_win w,
	unsigned gen, struct walk_log *log, const bool growable)
{
	unsigned n = 1;

	for (;;) {
		while (n < max && fp >= floor && !(fp & 7) && fp <= w.hi - 16) {
			uintptr_t next = ((const uintptr_t *)fp)[0];
			uintptr_t ra = ((const uintptr_t *)fp)[1];
			unsigned i;

			walk_log_read(log, fp, next);
			i = walk_log_read(log, fp + 8, ra);
			if (!cfi_is_text(ra, gen))
				return n;
			walk_log_pc(log, i);
			pcs[n++] = ra;
			floor = fp + 16;
			fp = next;
		}
		if (!growable || n >= max || fp < floor || (fp & 7) || fp > UINTPTR_MAX - 16)
			return n;
		walk_log_void(log);
		if (!unwind_win_grow(&w, fp + 16))
			return n;
	}
}

static __attribute__((noinline)) unsigned fp_walk_grown(uintptr_t *pcs, unsigned max,
							uintptr_t fp, uintptr_t floor,
							struct stack_win w, unsigned gen,
							struct walk_log *log)
{
	return fp_walk(pcs, max, fp, floor, w, gen, log, true);
}

static unsigned fp_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			   struct walk_log *log)
{
	struct stack_win w;
	unsigned gen = __atomic_load_n(&unwind_gen, __ATOMIC_ACQUIRE);

	if (!unwind_stack_window(st, &w)) {
		log->cut = true;
		return 1;
	}
	log->fp_used = true;
	if (__builtin_expect(w.limit != 0, 0))
		return fp_walk_grown(pcs, max, st->fp, st->sp, w, gen, log);
	return fp_walk(pcs, max, st->fp, st->sp, w, gen, log, false);
}

/* fp checks return addresses through the cfi unwinder's object look-ups and cache */
static bool fp_init(void)
{
	return unwinder_cfi.init();
}

#else

static unsigned fp_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			   struct walk_log *log)
{
	(void)pcs, (void)max, (void)st;
	walk_log_void(log);
	return 1;
}

static bool fp_init(void)
{
	return false;
}

#endif

const struct unwinder unwinder_fp = { "fp", fp_init, fp_capture };
