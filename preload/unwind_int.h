/*
 * Internal to the unwinders (unwind*.c: one module): the interface each one fills (unwind_cfi.c, unwind_fp.c,
 * unwind_libgcc.c), the stack window the in-process walks may read, and the count of
 * unloaded libraries that tells a cache its entries may describe code that is gone.
 */
#ifndef HP_UNWIND_INT_H
#define HP_UNWIND_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "unwind.h"

/*
 * The cfi and fp unwinders know the x86_64 LP64 frame only (x32 shares __x86_64__ but
 * not the word size); everywhere else their init() reports "unavailable".
 */
#if defined(__x86_64__) && defined(__LP64__)
#define HP_UNWIND_X86_64 1
#else
#define HP_UNWIND_X86_64 0
#endif

/*
 * What a walk read, for unwind.c's replay (see there): every word loaded from the
 * stack, in order, with its address. A walk is a function of its start (pc, sp and,
 * if fp_used, fp), the rules of the pcs it meets and these words; when all of them
 * are the same again, so is its result; pcs marks the words that became the next
 * pc. A walk that cannot be replayed (too many reads, an odd address, a fallback to
 * another unwinder) sets n past WALK_LOG_MAX; a log that starts there
 * records nothing. Values are stored negated (walk_log_hide): a saved register can
 * hold a heap pointer, and a copy of it in a log must not keep a leaked block
 * reachable (analyzer --leaks); a negated user-space address lies in the kernel's
 * half, never in a heap. And a word still holds its value iff word + stored == 0:
 * one add a word for the replay's check.
 */
#define WALK_LOG_MAX 64

static inline uintptr_t walk_log_hide(uintptr_t v)
{
	return -v;
}

static inline uintptr_t walk_log_show(uintptr_t stored)
{
	return -stored;
}

struct walk_log {
	unsigned n;
	bool fp_used;	/* the walk depended on the fp it started with */
	bool cut;	/* the walk stopped before the outermost frame (unwind_cut) */
	uint64_t pcs;	/* bit i: read i became the next pc */
	uintptr_t *addr, *val;	/* room for WALK_LOG_MAX each */
};

/* Log a word read at a; returns its index, for walk_log_pc(). */
static inline unsigned walk_log_read(struct walk_log *l, uintptr_t a, uintptr_t v)
{
	unsigned i = l->n;

	if (i < WALK_LOG_MAX && !(a & 7)) {
		l->addr[i] = a;
		l->val[i] = walk_log_hide(v);
		l->n = i + 1;
	} else {
		l->n = WALK_LOG_MAX + 1;
	}
	return i;
}

/* The word logged as read i became the next pc. */
static inline void walk_log_pc(struct walk_log *l, unsigned i)
{
	if (i < l->n && l->n <= WALK_LOG_MAX)
		l->pcs |= (uint64_t)1 << i;
}

/* Read i did not become a pc after all (a frame the walk took back). */
static inline void walk_log_unpc(struct walk_log *l, unsigned i)
{
	if (i < 64)
		l->pcs &= ~((uint64_t)1 << i);
}

static inline void walk_log_void(struct walk_log *l)
{
	l->n = WALK_LOG_MAX + 1;
}

struct unwinder {
	const char *name;	/* the HEAPPROF_UNWIND value that picks it */
	/* Make it usable; may allocate and look symbols up. False: not available here. */
	bool (*init)(void);
	/*
	 * pcs[0] = st->pc is already stored and 2 <= max; store further return addresses
	 * in pcs[1..max) and return the total count. No lock, no malloc, no I/O, no fault,
	 * no array sized by max. Log every stack word read in *log (walk_log_read), or
	 * void it.
	 */
	unsigned (*capture)(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			    struct walk_log *log);
};

extern const struct unwinder unwinder_cfi, unwinder_fp, unwinder_libgcc;

/*
 * Bumped after every dlclose() (unwind.c exports dlclose for that): a cache filled from
 * a library's unwind tables or text must not answer for addresses loaded after it.
 * Read with __ATOMIC_ACQUIRE once per capture.
 */
extern unsigned unwind_gen;

/*
 * The part of a stack a walk may read: [lo, hi). On the thread's own stack hi is its
 * top and limit 0: every load is checked against hi, nothing more is ever read. On any
 * other stack (a coroutine's, a sigaltstack) hi is where memory known to be readable
 * ends and limit how far unwind_win_grow() may push hi by asking the kernel, page by
 * page, whether the next one can be read.
 */
struct stack_win {
	uintptr_t lo, hi, limit;
};

/*
 * This thread's stack, [lo, hi): initial-exec TLS (the general-dynamic model may call
 * malloc on first access); hi == 0 until unwind_stack_bounds() looked it up, which
 * the first capture of a thread does (it may allocate: pthread_getattr_np; the hooks'
 * guard covers it). A failed look-up leaves an empty window: every walk is then one
 * off the thread's stack.
 */
#define HP_STACK_TLS __thread HP_TLS_MODEL __attribute__((visibility("hidden")))
extern HP_STACK_TLS uintptr_t unwind_stack_lo;
extern HP_STACK_TLS uintptr_t unwind_stack_hi;
void unwind_stack_bounds(void) __attribute__((cold, visibility("hidden")));

/*
 * The window for a walk from sp when unwind_stack_window() finds it or cur, the
 * unwinder's own frame, off the thread's stack: false if cur is on it (sp cannot be
 * the caller's then). Else the hook's caller runs on another stack (a coroutine's, a
 * sigaltstack), where sp must lie a little above cur: then the page of sp - 8 (the
 * hook's return address) is readable, and so is [sp, the end of that page), the
 * window's start; it grows from there.
 */
bool unwind_other_window(uintptr_t sp, uintptr_t cur, struct stack_win *w)
	__attribute__((cold, visibility("hidden")));

/*
 * The window a walk goes on in from sp, the interrupted code's stack pointer that a
 * signal frame gave: the thread's stack if sp is on it, else an empty growable window
 * at sp (nothing there is read before the kernel said it can be).
 */
void unwind_win_at(uintptr_t sp, struct stack_win *w) __attribute__((visibility("hidden")));

/*
 * Grow w (limit != 0) so that [w->lo, end) can be read: probe each page from w->hi up
 * with a system call that reads without faulting. False if end is past the limit,
 * too far in one go, or a page on the way cannot be read (w keeps what could).
 */
bool unwind_win_grow(struct stack_win *w, uintptr_t end)
	__attribute__((cold, visibility("hidden")));

/*
 * The window for a walk from st: [st->sp, top of the thread's stack), the caller's
 * frames and nothing below them, so that a walk and its replay (which checks from
 * another depth of our own frames) may read the same words. Off the thread's stack,
 * unwind_other_window(). False for an sp that cannot be the caller's: then record
 * pcs[0] only. Inline: our own frame, below the caller's, must be on that stack too.
 */
static inline __attribute__((always_inline)) bool
unwind_stack_window(const struct unwind_start *st, struct stack_win *w)
{
	uintptr_t cur = (uintptr_t)__builtin_frame_address(0), hi;

	if (__builtin_expect(unwind_stack_hi == 0, 0))
		unwind_stack_bounds();
	hi = unwind_stack_hi;
	if (__builtin_expect(cur < unwind_stack_lo || cur >= hi || st->sp < cur || st->sp >= hi - 16,
			     0))
		return unwind_other_window(st->sp, cur, w);
	w->lo = st->sp;
	w->hi = hi;
	w->limit = 0;
	return true;
}

/*
 * Remember the calling thread as the main one (its stack is found without /proc), and
 * find unwind_entry_slot.
 */
void unwind_stack_init(void);

/* Where the process's first return address (into its entry point, _start) sits on the
 * main thread's stack, just below argc; 0 if not found. */
extern uintptr_t unwind_entry_slot __attribute__((visibility("hidden")));

#endif
