/*
 * The triggers of snapshots (see triggers.h). Signal handlers are installed once, at
 * start-up; a program that later installs its own handler for the same signal wins
 * (heapprof does not wrap sigaction), as heapprof.so.7 says.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gcc_unwind.h"
#include "heapprof_format.h"
#include "interval.h"
#include "oom.h"
#include "options.h"
#include "sigthread.h"
#include "snapshot.h"
#include "snapshot_threads.h"
#include "table.h"
#include "triggers.h"
#include "util.h"

void triggers_handle(int sig, void (*fn)(int, siginfo_t *, void *), struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigfillset(&sa.sa_mask);	/* one trigger at a time per thread */
	sigaction(sig, &sa, old);
}

/* ---- HEAPPROF_SIGNAL ------------------------------------------------------------- */

/* On heapprof's signal thread (uc NULL), or on a thread of the program that let the
 * signal through (sigthread.h): then that thread's context. */
static void on_snapshot_signal(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	snapshot_take(NULL, uc, sig, SNAP_SIGNAL);
}

/* ---- exit and HEAPPROF_AT_EXIT ---------------------------------------------------- */

/* The stack pointer of our caller at the call: our canonical frame address. */
#if defined(__GNUC__) && !defined(__clang__)
#define CALLER_SP() ((uintptr_t)__builtin_dwarf_cfa())
#else
#define CALLER_SP() ((uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *))
#endif

/*
 * exit()'s frame is found with libgcc's unwinder: glibc only, as for unwind_libgcc.c
 * (the libgcc at hand for musl may call glibc's _dl_find_object), and on the machines
 * whose preserved registers are named here.
 */
#if defined(__GLIBC__) && (defined(__x86_64__) || defined(__aarch64__))
#define EXIT_WALK 1
#else
#define EXIT_WALK 0
#endif

#if EXIT_WALK
/* DWARF numbers of the registers a call preserves, and their places in a ucontext */
#if defined(__x86_64__)
static const struct { int dwarf, greg; } kept_regs[] = {
	{ 3, REG_RBX }, { 6, REG_RBP }, { 12, REG_R12 }, { 13, REG_R13 }, { 14, REG_R14 },
	{ 15, REG_R15 },
};
#endif

/* The frame of exit(), found by walking up from the handler: its caller's stack
 * pointer at the call (exit's canonical frame address) and return address, and the
 * registers a call preserves as they were in that caller. */
struct exit_frame {
	uintptr_t sp, pc;
	bool in_exit;
	ucontext_t *uc;
	const struct gcc_unwind *gcc;
};

static _Unwind_Reason_Code exit_walk(struct _Unwind_Context *ctx, void *arg)
{
	struct exit_frame *f = arg;
	const struct gcc_unwind *g = f->gcc;
	uintptr_t ip = g->get_ip(ctx);

	if (f->in_exit) {	/* exit's caller */
		f->pc = ip;
#if defined(__x86_64__)
		for (size_t i = 0; i < sizeof(kept_regs) / sizeof(kept_regs[0]); i++)
			f->uc->uc_mcontext.gregs[kept_regs[i].greg] =
				(greg_t)g->get_gr(ctx, kept_regs[i].dwarf);
#elif defined(__aarch64__)
		for (int r = 19; r <= 29; r++)	/* x19-x28 and the frame pointer */
			f->uc->uc_mcontext.regs[r] = g->get_gr(ctx, r);
#endif
		return _URC_END_OF_STACK;
	}
	/* a return address may be one past a call that ends its function (exit's to its
	 * handlers never returns): ip - 1 is in the caller */
	if (ip && g->find_enclosing((void *)(ip - 1)) == (void *)exit) {
		f->in_exit = true;
		f->sp = g->get_cfa(ctx);
	}
	return _URC_NO_REASON;
}

static void keep_regs(ucontext_t *uc, const ucontext_t *from)
{
#if defined(__x86_64__)
	for (size_t i = 0; i < sizeof(kept_regs) / sizeof(kept_regs[0]); i++)
		uc->uc_mcontext.gregs[kept_regs[i].greg] = from->uc_mcontext.gregs[kept_regs[i].greg];
#else
	for (int r = 19; r <= 29; r++)
		uc->uc_mcontext.regs[r] = from->uc_mcontext.regs[r];
#endif
}
#endif

/*
 * The thread context of the at-exit snapshot: that of exit()'s caller, where exit was
 * entered, as LeakSanitizer bounds the exiting thread's scan: the frames of exit's
 * handlers (__run_exit_handlers, _dl_fini, ours) and the dead ones they lie over, with
 * the holes they never wrote, are no roots. Without exit's frame (a libc without
 * unwind tables), where its handlers called ours.
 */
static __attribute__((noinline)) const ucontext_t *exit_context(ucontext_t *uc, uintptr_t sp,
								uintptr_t pc)
{
#if EXIT_WALK
	struct exit_frame f = { .uc = uc, .gcc = gcc_unwind() };
	ucontext_t caller;

	if (f.gcc)
		f.gcc->backtrace(exit_walk, &f);
	if (f.in_exit && f.pc) {
		caller = *uc;	/* its preserved registers, before uc is made anew */
		if (!snapshot_context_at(uc, f.sp, f.pc))
			return NULL;
		keep_regs(uc, &caller);
		return uc;
	}
#endif
	return snapshot_context_at(uc, sp, pc);
}

/*
 * A snapshot asked for just before exit is written by a child that outlives the
 * process: wait for it (HEAPPROF_WAIT_MS at most), so that the file is there, complete,
 * once the program is gone. Then HEAPPROF_AT_EXIT's own. A destructor of priority 101,
 * the last to run: exit runs the atexit and __cxa_atexit handlers (the C++ globals'
 * destructors among them) first, then the destructors. An atexit handler of ours ran
 * before those registered ahead of our constructor: in a static program, which links
 * us last, every C++ global's.
 */
__attribute__((destructor(101), noinline)) static void at_exit(void)
{
	ucontext_t uc;

	if (snapshot_wait((long)hp_opt.wait_ms) == ETIMEDOUT)
		hp_warn("exit waited HEAPPROF_WAIT_MS for a snapshot still being written; "
			"it goes on under its .part name", NULL, NULL);
	if (hp_opt.at_exit)
		snapshot_take(NULL, exit_context(&uc, CALLER_SP(),
						 (uintptr_t)__builtin_return_address(0)),
			      0, SNAP_EXIT);
}

/* ---- HEAPPROF_AT_CRASH ------------------------------------------------------------ */

static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
static struct sigaction crash_old[sizeof(crash_sigs) / sizeof(crash_sigs[0])];

/*
 * One snapshot, then the signal does what it would have done: the previous disposition
 * comes back, and a fault returns to the faulting instruction to fault again, while a
 * sent signal (kill, raise, abort) is sent again; it is blocked until we return.
 */
static void on_crash(int sig, siginfo_t *si, void *uc)
{
	for (size_t i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
		if (crash_sigs[i] == sig)
			sigaction(sig, &crash_old[i], NULL);
	snapshot_take(NULL, uc, sig, SNAP_CRASH);
	if (si->si_code <= 0)
		syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

/* The main thread's stack may be what overflowed: give the handler a stack of its own
 * unless the program set one up. Other threads use theirs (heapprof.so.7 says so). */
static void crash_stack(void)
{
	stack_t ss, old;
	size_t size = 64 << 10;

	if (sigaltstack(NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE))
		return;
	ss.ss_sp = hp_map(size, HP2_OWN_SIGSTACKS, 0);
	if (ss.ss_sp == MAP_FAILED)
		return;
	ss.ss_size = size;
	ss.ss_flags = 0;
	sigaltstack(&ss, NULL);
}

/* ---- after a tagged block ------------------------------------------------------------ */

unsigned triggers_tag_work;

void triggers_tagged(uint64_t bytes)
{
	unsigned work = __atomic_load_n(&triggers_tag_work, __ATOMIC_RELAXED);

	if (work & TAG_WORK_PEAK)
		peak_check(bytes);
	if (work & TAG_WORK_OOM)
		oom_take_due();
}

/* ---- HEAPPROF_PEAK ---------------------------------------------------------------- */

static HP_TLS uint64_t grown;	/* bytes this thread tagged since its last look */
/* live bytes that take the next snapshot; 0 until the first: HEAPPROF_PEAK. Not set by
 * the constructor: libraries the program links (libstdc++'s emergency pool) allocate
 * before it runs, and a 0 there took a snapshot at their first block */
static uint64_t peak_next;

void peak_check(uint64_t bytes)
{
	uint64_t step = hp_opt.peak / 16 ? hp_opt.peak / 16 : 1, want;
	int64_t live;

	grown += bytes;
	if (grown < step)
		return;
	grown = 0;
	live = table_live_bytes();
	want = __atomic_load_n(&peak_next, __ATOMIC_RELAXED);
	if (live < 0 || (uint64_t)live < (want ? want : hp_opt.peak) ||
	    !__atomic_compare_exchange_n(&peak_next, &want, (uint64_t)live + hp_opt.peak, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	/* a writer still running after HEAPPROF_WAIT_MS: the next look tries again */
	if (snapshot_take(NULL, NULL, 0, SNAP_PEAK) == EBUSY) {
		uint64_t mine = (uint64_t)live + hp_opt.peak;

		__atomic_compare_exchange_n(&peak_next, &mine, want, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	}
}

/* ---- checks of the options --------------------------------------------------------- */

/* An unknown %x in HEAPPROF_OUTPUT stays as written, said once. */
static void check_output(const char *pattern)
{
	for (const char *p = pattern; p && *p; p++) {
		if (*p != '%')
			continue;
		if (!*++p)
			break;
		if (!strchr("pnt%", *p)) {
			char what[3] = { '%', *p, 0 };

			hp_warn("HEAPPROF_OUTPUT: ", what, " is not %p, %n, %t or %%; kept as written");
			return;
		}
	}
}

int triggers_init(void)
{
	int sig = 0;

	if (hp_opt.snapshot && strcmp(hp_opt.snapshot, "compact") && strcmp(hp_opt.snapshot, "full") &&
	    strcmp(hp_opt.snapshot, "lean"))
		hp_warn("HEAPPROF_SNAPSHOT=", hp_opt.snapshot,
			" is not compact, full or lean; using compact");
	check_output(hp_opt.output);
	snap_threads_init();
	if (hp_opt.peak)
		__atomic_or_fetch(&triggers_tag_work, TAG_WORK_PEAK, __ATOMIC_RELAXED);
	oom_init(&triggers_tag_work, TAG_WORK_OOM);
	interval_init();
	if (hp_opt.signal && (sig = hp_signal_parse("HEAPPROF_SIGNAL", hp_opt.signal))) {
		triggers_handle(sig, on_snapshot_signal, NULL);
		sigthread_take(sig, on_snapshot_signal);
	}
	if (hp_opt.at_crash) {
		crash_stack();
		for (size_t i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
			triggers_handle(crash_sigs[i], on_crash, &crash_old[i]);
	}
	return sig;
}
