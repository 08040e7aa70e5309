/*
 * The cfi walk's frames that have no rule to follow (unwind_scan.h): signal frames,
 * gone through to the code they interrupted, and code without unwind tables, whose
 * caller is looked for on the stack as crash reporters do, each candidate checked by
 * its call, the called function's prologue (cfi_prologue.c) and the caller's own rules.
 */
#define _GNU_SOURCE
#include "unwind_scan.h"

#include <string.h>
#include <sys/auxv.h>

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

/*
 * Stack scanning, for a frame whose code has no unwind tables (musl's libc.a has
 * none): its caller's return address is the first word above sp that follows a call
 * instruction in loaded code and that the caller's own rules confirm, as crash
 * reporters find frames. Where this can be wrong: see scan_step.
 */
#define SCAN_WORDS 512		/* a frame larger than 4 KiB hides its caller */
#define SCAN_FP_SLOTS 8		/* saved registers below a return address tried as rbp */
#define FUNC_MAX (64u << 10)	/* a direct call's target at most this far below the pc */
#define ENTRY_SPAN 64		/* bytes of the program's entry point (_start) */

static uintptr_t entry_pc;	/* AT_ENTRY: the outermost frame of a program's main thread */

void cfi_scan_init(void)
{
	entry_pc = getauxval(AT_ENTRY);
}

static inline bool in_entry(uintptr_t pc)
{
	return entry_pc && pc - 1 - entry_pc < ENTRY_SPAN;
}

/* Whether ra, read at cfa - 8 for a frame found by a scan, can be its caller's return
 * address: after a call, or a signal trampoline. Uncached: most words a scan tries
 * are no return address, and must not evict rules. */
static bool next_ra_ok(uintptr_t ra)
{
	struct cfi_obj o;
	uintptr_t target;

	return cfi_call_at(ra, &target) == CALL_YES ||
	       (cfi_obj_find(ra - 1, &o) && cfi_sigreturn_at(&o, ra));
}

/*
 * A frame found at a with return address ra, whose own rule is rule: confirmed if the
 * rule, applied with sp = a + 8, finds a return address above it that can be one; then
 * *cfa is its CFA. A rule that needs rbp tries the walk's rbp, then the words just
 * below a (the scanned function's saved registers, read by the scan already) and sets
 * *fp and *fp_from (where it was read; the walk's own: r->fp_from) to the one that worked.
 */
static bool scan_confirm(struct stack_win *w, const struct regs *r, uintptr_t a, uint64_t rule,
			 struct walk_log *log, uintptr_t *cfa, uintptr_t *fp, uintptr_t *fp_from)
{
	int64_t off = rule_cfa_off(rule);
	uintptr_t sp = a + 8, ra, base = sp;
	unsigned i, k;

	for (k = 0; k <= SCAN_FP_SLOTS; k++) {
		if (rule_cfa(rule) == CFA_RSP) {
			if (k > 0)
				return false;
		} else if (k == 0) {
			if (!r->fp_ok)
				continue;
			base = r->fp;
		} else {
			if (a - r->sp < 8 * k)
				return false;
			memcpy(&base, (const void *)(a - 8 * k), sizeof(base));
		}
		*cfa = base + off;
		if (rule_cfa(rule) == CFA_RBP_DEREF && win_word(w, base + off, cfa, log, &i) != 1)
			continue;
		if (*cfa < sp + 8 || win_word(w, *cfa - 8, &ra, log, &i) != 1 || !next_ra_ok(ra))
			continue;
		*fp = base;
		*fp_from = k ? a - 8 * k : r->fp_from;
		return true;
	}
	return false;
}

/* A caller a scan found: where its return address was, and its registers. */
struct found {
	uintptr_t a, pc, fp, fp_from, cfa;
	bool fp_ok;
	unsigned idx;
};

/* How a candidate caller's call fits the scanned frame (call_fit). */
enum fit { FIT_NONE, FIT_WEAK, FIT_STRONG, FIT_EXACT };

/*
 * How a candidate at a whose call went to target (0: indirect) fits r's frame. A
 * direct call to a place at most FUNC_MAX below r->pc with no function that has tables
 * in between (floor) can have entered it: STRONG, and EXACT if the prologue there
 * (cfi_prologue_size) builds a frame of just the size that puts the return address
 * at a; NONE if that prologue's frame cannot be the one (a stale word: its call went
 * to another function). Other calls: WEAK.
 */
static enum fit call_fit(const struct regs *r, const struct cfi_obj *o, uintptr_t floor,
			 uintptr_t a, uintptr_t target)
{
	uint32_t size;
	int known;

	if (!target || target < floor || target > r->pc - 1 || r->pc - 1 - target >= FUNC_MAX)
		return FIT_WEAK;
	known = o ? cfi_prologue_size(o, target, &size) : -1;
	if (known < 0)
		return FIT_STRONG;
	if (a - r->sp == size)
		return FIT_EXACT;
	return known == 0 && a - r->sp > size ? FIT_STRONG : FIT_NONE;
}

/*
 * The caller of r's frame, which has no unwind tables, found by scanning the words
 * above r->sp (see above). A candidate return address must follow a call. One whose
 * call fits the frame EXACTly (call_fit) is taken at once. Else the scan goes to its
 * end and takes the best it saw, by what vouches for it: a caller with rules that
 * confirm it (scan_confirm) whose call fits STRONG, then one whose call fits WEAK,
 * then the process's first frame (_start, which has no tables in musl; exactly where
 * the kernel's start-up block puts it, not a copy of its return address left
 * anywhere; the scan ends there), then a caller without tables whose call fits
 * STRONG; the first of a kind.
 * Stale frames deeper down can confirm one another, so a CFA proves little, and the
 * prologue's exact fit is what ends a scan early.
 *
 * Where it can be wrong: a stale return address (left in a slot the scanned frame
 * never wrote, by an earlier call at the same depth) whose call fits as well or better
 * than the true one's (an indirect call, a callee whose prologue this cannot read, a
 * function entered by a tail call that is no mere thunk) can pass for the caller; a
 * true caller past the scan, or one whose call cannot be told from a stale one's, may
 * be passed over; a function entered by a jump leaves no frame, as with every
 * unwinder; a frame larger than SCAN_WORDS words hides its caller; after a frame
 * found so, rbp is known only where a caller's rule needed it and confirmed it, and a
 * later frame whose CFA is rbp-based then ends the walk.
 */
static enum special scan_step(struct stack_win *w, struct regs *r, struct walk_log *log,
			      uint64_t key)
{
	struct cfi_obj o;
	struct found f, kept = { 0 };
	enum fit fit;
	uintptr_t floor = 0, v, target;
	bool have_o = cfi_obj_find(r->pc - 1, &o);
	unsigned kept_by = 0, by;	/* what vouches for kept: 4 best .. 1, 0 none */
	uint64_t rule;
	int got = 1;

	if (have_o)
		floor = cfi_code_floor(&o, r->pc);
	for (unsigned i = 0; i < SCAN_WORDS; i++) {
		f.a = r->sp + 8 * i;
		got = win_word(w, f.a, &v, log, &f.idx);
		if (got <= 0)
			break;
		if (cfi_call_at(v, &target) != CALL_YES)
			continue;
		fit = call_fit(r, have_o ? &o : NULL, floor, f.a, target);
		f.pc = v;
		f.fp = 0;
		f.fp_from = 0;
		f.fp_ok = false;
		rule = cfi_rule_cached(v, key);
		by = 0;
		switch (CFI_RULE_KIND(rule)) {
		case CFI_END:	/* an outermost frame: nothing above to confirm it by */
			by = fit == FIT_STRONG ? 1 : 0;
			break;
		case CFI_FRAME:
			if (fit && !scan_confirm(w, r, f.a, rule, log, &f.cfa, &f.fp, &f.fp_from))
				fit = FIT_NONE;
			/* rbp as the caller's rule confirmed it, else lost: the scanned code
			 * may have used it for anything */
			f.fp_ok = rule_cfa(rule) != CFA_RSP;
			by = fit == FIT_STRONG ? 4 : fit == FIT_WEAK ? 3 : 0;
			break;
		case CFI_NOINFO:
		case CFI_STOP:
			if (in_entry(v) && f.a == unwind_entry_slot)
				by = 2;
			else
				by = fit == FIT_STRONG ? 1 : 0;
			break;
		}
		if (fit == FIT_EXACT && CFI_RULE_KIND(rule) != CFI_SIGNAL) {
			kept = f;
			goto take;
		}
		if (by > kept_by) {
			kept = f;
			kept_by = by;
		}
		if (f.a == unwind_entry_slot)
			break;	/* the process's first frame: nothing above it is one */
	}
	if (!kept_by)	/* the stack ends, and nothing on it called this frame */
		return got == 0 ? SP_END : SP_CUT;
take:
	if (kept.fp_ok && kept.fp_from != r->fp_from)
		r->fp_logged = true;	/* a word the scan read, in the log */
	r->fp_ok = kept.fp_ok;
	r->fp = kept.fp;
	r->fp_from = kept.fp_from;
	r->pc = kept.pc;
	r->sp = kept.a + 8;
	r->pc_read = kept.idx;
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
		if (in_entry(r->pc))
			return SP_END;	/* the program's _start, which has no tables in musl */
		/* an address no call precedes was put there to end the stack (glibc's
		 * makecontext puts __start_context): not a frame */
		if (n > 1 && cfi_call_at(r->pc, &target) == CALL_NO)
			return SP_DROP;
		return scan_step(w, r, log, key);
	}
	return SP_CUT;
}

#else /* not x86_64 */

void cfi_scan_init(void)
{
}

enum special cfi_special(uint64_t rule, struct stack_win *w, struct regs *r,
			 struct walk_log *log, uint64_t key, unsigned n, unsigned *sigframes)
{
	(void)rule, (void)w, (void)r, (void)log, (void)key, (void)n, (void)sigframes;
	return SP_CUT;
}

#endif
