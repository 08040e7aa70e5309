/*
 * The caller's stack with its interpreter's frames (interp.h; Python's today): the
 * native walk, then those frames as word pairs after it (include/heapprof_format.h).
 * Only for processes where an interpreter runs; the native-only path is inline in
 * hooks_tag.c.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "block.h"
#include "hooks.h"
#include "hooks_int.h"
#include "interp.h"
#include "table.h"
#include "unwind.h"

unsigned hooks_interp_pairs;	/* hooks_int.h */
const struct interp *hooks_interp;	/* hooks_int.h */

/*
 * The thread's Python frames, innermost first, as word pairs (include/heapprof_format.h)
 * into w[0..2 * max - 1]; returns the words written (0: no Python on this thread).
 * Out of line: its frame array is only on the stack of the threads that have Python.
 */
static __attribute__((noinline)) unsigned python_words(uintptr_t *w, unsigned max)
{
	const struct interp *in = hooks_interp;
	struct interp_frame f[max];
	unsigned n = in->capture(f, max);

	for (unsigned i = 0; i < n; i++) {
		const void *rec = in->remember(f[i].code);
		unsigned fl = f[i].flags & INTERP_F_ENTRY ? HP2_PYFRAME_ENTRY : 0;

		/* no record (memory, or one being made right now): the object names it,
		 * while it lives */
		w[2 * i] = (uintptr_t)hp2_pyframe_word(f[i].offset, rec ? fl : fl | HP2_PYFRAME_RAW);
		w[2 * i + 1] = rec ? (uintptr_t)rec : f[i].code;
	}
	return 2 * n;
}

/*
 * Append the Python words after the n native pcs of a capture (pcs has room for
 * 2 * hooks_interp_pairs more after pcs[n]); returns how many, and *py their hash for the
 * walk memo. keep: the native pcs the stack keeps (n, or n - 1 when the walk was cut):
 * what the record's HP2_MAX_FRAMES leaves to Python.
 */
static unsigned python_append(uintptr_t *pcs, unsigned n, unsigned keep, uint64_t *py)
{
	unsigned max = (HP2_MAX_FRAMES - keep) / 2, nw;

	if (max > hooks_interp_pairs)
		max = hooks_interp_pairs;
	nw = max ? python_words(pcs + n, max) : 0;
	*py = table_words_hash(pcs + n, nw);
	return nw;
}

/* Once the native walk is in place: the nw Python words behind the keep native pcs
 * (they were after pcs[n - 1]); returns the stack record's flags (TRUNCATED: the walk
 * was cut at the frame limit, or stopped early: cut, unwind_walk_cut). */
static unsigned python_close(uintptr_t *pcs, unsigned n, unsigned keep, unsigned nw, bool cut)
{
	if (nw && keep != n)
		memmove(pcs + keep, pcs + n, nw * sizeof(*pcs));
	return (n > keep || cut ? HP2_STACK_TRUNCATED : 0) | (nw ? HP2_STACK_PYTHON : 0);
}

/*
 * tag()'s site when Python frames may be recorded: the native walk, the Python words
 * after it. Out of line, so that a process without Python keeps the native path as
 * it was (its frame, and this larger one, only where Python runs).
 */
__attribute__((noinline)) struct hp_site_rec *hooks_site_interp(const struct unwind_start *st,
							     unsigned entry)
{
	/* one frame more than kept: a walk that fills it was cut; then the Python words */
	uintptr_t pcs[hp_frames + 1 + 2 * hooks_interp_pairs];
	struct table_memo *memo;
	uint64_t walk, py;
	unsigned n, keep, nw;

	n = unwind_capture_walk(pcs, hp_frames + 1, st, &walk);
	keep = n > hp_frames ? hp_frames : n;
	/* after pcs[n - 1]: a replayed walk fills pcs[1..n - 1] only */
	nw = python_append(pcs, n, keep, &py);
	memo = table_memo_find_py(walk, py);
	if (walk && !memo)
		unwind_walk_frames(walk, pcs);	/* the table needs them this once */
	return table_site(pcs, keep + nw, python_close(pcs, n, keep, nw, unwind_walk_cut(walk)),
			  table_thread_slot, entry, walk, py, memo);
}

/*
 * The id of the stack record of the hook's caller at st (hooks.h), Python frames
 * included; 0 while this thread is inside a hook already or stacks are not taken yet.
 */
uint32_t hooks_stack_id(const struct unwind_start *st)
{
	unsigned pairs = __atomic_load_n(&hooks_interp_pairs, __ATOMIC_RELAXED);
	uintptr_t pcs[hp_frames + 1 + 2 * pairs];
	unsigned n, keep, nw;
	uint32_t stack;
	uint64_t py;

	if (in_hook || !hp_stacks)
		return 0;
	in_hook = true;
	n = unwind_capture(pcs, hp_frames + 1, st);
	keep = n > hp_frames ? hp_frames : n;
	nw = pairs ? python_append(pcs, n, keep, &py) : 0;
	stack = table_stack_id(pcs, keep + nw, python_close(pcs, n, keep, nw, unwind_cut));
	in_hook = false;
	return stack;
}
