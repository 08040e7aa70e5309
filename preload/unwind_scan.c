/*
 * The cfi walk's frames that have no rule to follow (unwind_scan.h): signal frames,
 * gone through to the code they interrupted, and the return address glibc's
 * makecontext plants, which is none.
 */
#define _GNU_SOURCE
#include "unwind_scan.h"

#include <string.h>

#if HP_CFI

/*
 * The word at a into *v, the window grown to hold it if it may, logged: 1 read, 0
 * a's page cannot be read (the stack ends below it), -1 the window may not go there.
 */
static int win_word(struct stack_win *w, uintptr_t a, uintptr_t *v, struct walk_log *log,
		    unsigned *idx)
{
	if (a < w->lo || a > UINTPTR_MAX - 8)
		return -1;
	if (a + 8 > w->hi) {
		if (!w->limit)
			return 0;	/* the top of the thread's stack */
		if (a + 8 > w->limit)
			return -1;
		walk_log_void(log);	/* a replay must not read past the first window */
		if (!unwind_win_grow(w, a + 8))
			return 0;
	}
	memcpy(v, (const void *)a, sizeof(*v));
	*idx = walk_log_read(log, a, *v);
	return 1;
}

/* The interrupted frame's registers, as the kernel stores them in a signal frame:
 * struct ucontext's uc_mcontext (after uc_flags, uc_link, uc_stack), gregs[REG_*]. */
#define UC_GREG(i) (40 + 8 * (i))
#define UC_RBP UC_GREG(10)
#define UC_RSP UC_GREG(15)
#define UC_RIP UC_GREG(16)
#define SIGFRAMES_MAX 4	/* nested signals followed in one walk */

/*
 * pc is a signal return trampoline and sp the frame the kernel built: go on in the
 * interrupted code, on whichever stack it ran. Its pc is the instruction that was to
 * run next, not a return address: stored as pc + 1, so that the pc - 1 every reader
 * takes (and the next rule's look-up) lands on that instruction. Not replayed.
 */
static enum special sigframe_step(struct stack_win *w, struct regs *r, struct walk_log *log,
				  unsigned *sigframes)
{
	uintptr_t rbp, rsp, rip;
	unsigned i;

	walk_log_void(log);
	if (++*sigframes > SIGFRAMES_MAX || win_word(w, r->sp + UC_RBP, &rbp, log, &i) != 1 ||
	    win_word(w, r->sp + UC_RSP, &rsp, log, &i) != 1 ||
	    win_word(w, r->sp + UC_RIP, &rip, log, &i) != 1)
		return SP_CUT;
	if (rip == 0 || rip == UINTPTR_MAX)
		return SP_CUT;
	if (rsp <= r->sp || rsp >= w->hi)	/* an alternate stack: the interrupted one */
		unwind_win_at(rsp, w);
	r->pc = rip + 1;
	r->sp = rsp;
	r->fp = rbp;
	r->fp_ok = true;
	r->fp_from = 0;
	return SP_FRAME;
}

enum special cfi_special(uint64_t rule, struct stack_win *w, struct regs *r,
			 struct walk_log *log, uint64_t key, unsigned n, unsigned *sigframes)
{
	uintptr_t target;

	switch (CFI_RULE_KIND(rule)) {
	case CFI_SIGNAL:
		return sigframe_step(w, r, log, sigframes);
	case CFI_NOINFO:
		/* an address no call precedes was put there to end the stack (glibc's
		 * makecontext puts __start_context): not a frame */
		if (n > 1 && cfi_call_at(r->pc, &target) == CALL_NO)
			return SP_DROP;
	}
	(void)key;
	return SP_CUT;
}

#else /* not x86_64 */

enum special cfi_special(uint64_t rule, struct stack_win *w, struct regs *r,
			 struct walk_log *log, uint64_t key, unsigned n, unsigned *sigframes)
{
	(void)rule, (void)w, (void)r, (void)log, (void)key, (void)n, (void)sigframes;
	return SP_CUT;
}

#endif
