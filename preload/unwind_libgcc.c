/*
 * The libgcc unwinder: _Unwind_Backtrace, the one unwinder on every architecture and
 * the cfi walk's fallback. libgcc finds unwind tables per call (through
 * _dl_find_object on glibc >= 2.35), so it never answers from an unloaded library.
 */
#include "unwind_int.h"

#include "gcc_unwind.h"

/* Frames of our own (callbacks, unwind_capture, the hook) seen before st->pc. */
#define SKIP_MAX 16

struct bt_arg {
	const struct gcc_unwind *gcc;
	uintptr_t *pcs;
	unsigned n, max, skipped;
	uintptr_t want;
	bool found;
	bool zero;	/* the walk ended at a return address of 0 */
};

/* ARM: return addresses carry the Thumb bit, _Unwind_GetIP clears it; compare without. */
static inline uintptr_t code_addr(uintptr_t pc)
{
#if defined(__arm__)
	return pc & ~(uintptr_t)1;
#else
	return pc;
#endif
}

static _Unwind_Reason_Code bt_frame(struct _Unwind_Context *ctx, void *p)
{
	struct bt_arg *a = p;
	uintptr_t ip = a->gcc->get_ip(ctx);

	if (!a->found) {
		/* a stack that never reaches st->pc (a hook called oddly) must not spin */
		a->found = code_addr(ip) == code_addr(a->want);
		return a->found || ++a->skipped < SKIP_MAX ? _URC_NO_REASON : _URC_END_OF_STACK;
	}
	if (ip == 0) {	/* the outermost frame of some threads */
		a->zero = true;
		return _URC_END_OF_STACK;
	}
	a->pcs[a->n++] = ip;
	return a->n < a->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

/*
 * glibc only: elsewhere (musl) the libgcc at hand may be glibc's (Debian's musl-gcc
 * links it), whose unwinder calls _dl_find_object, which musl has not; there the cfi
 * and fp unwinders remain.
 */
#ifdef __GLIBC__
#define HAVE_LIBGCC 1
#else
#define HAVE_LIBGCC 0
#endif

/*
 * ARM's EHABI unwinder answers _URC_FAILURE at the outermost frame (EXIDX_CANTUNWIND)
 * as at a frame it has no entry for, so its answer tells a cut from an end nowhere.
 * (The DWARF one answers _URC_END_OF_STACK for a frame without an FDE, and an error
 * only for tables it cannot read.)
 */
#ifdef __ARM_EABI_UNWINDER__
#define ARM_EHABI 1
#else
#define ARM_EHABI 0
#endif

/*
 * Never replayed: what _Unwind_Backtrace reads is its own affair, on any stack (it
 * trusts the unwind tables as backtrace() does). A walk is cut if it never reached
 * st->pc, or if _Unwind_Backtrace says it failed where that means something.
 */
static unsigned libgcc_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			       struct walk_log *log)
{
	struct bt_arg a = { gcc_unwind(), pcs, 1, max, 0, st->pc, false, false };
	_Unwind_Reason_Code end = _URC_END_OF_STACK;

	walk_log_void(log);
#if HP_UNWIND_X86_64
	struct stack_win w;

	/* the same rule as cfi and fp: an sp that cannot be the caller's gives pcs[0] only */
	if (!unwind_stack_window(st, &w)) {
		log->cut = true;
		return 1;
	}
#endif
	if (HAVE_LIBGCC && a.gcc)
		end = a.gcc->backtrace(bt_frame, &a);
	log->cut = a.n < a.max && !a.zero && (!a.found || (end != _URC_END_OF_STACK && !ARM_EHABI));
	return a.n;
}

/* chosen (HEAPPROF_UNWIND=libgcc, or no cfi here): libgcc_s loaded at once, at start-up */
static bool libgcc_init(void)
{
	return HAVE_LIBGCC && gcc_unwind();
}

const struct unwinder unwinder_libgcc = { "libgcc", libgcc_init, libgcc_capture };
