/*
 * heapprof's start-up, once per process, and what a forked child and an ending thread
 * set right: HEAPPROF_START, HEAPPROF_TOGGLE_SIGNAL, the signal thread, Python frames.
 * The constructor that calls it is in hooks.c, which every build links.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "hooks_boot.h"
#include "events.h"
#include "gcc_unwind.h"
#include "hooks_int.h"
#include "live.h"
#include "maps.h"
#include "interval.h"
#include "oom.h"
#include "options.h"
#include "hooks_pymalloc.h"
#include "interp.h"
#include "sampled.h"
#include "sigthread.h"
#include "snapshot.h"
#include "snapshot_threads.h"
#include "table.h"
#include "triggers.h"
#include "util.h"

/* ---- HEAPPROF_START and HEAPPROF_TOGGLE_SIGNAL ------------------------------------ */

static void on_toggle_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	hooks_enable(!hooks_enabled());
}

static void start_switch(void)
{
	if (!hp_opt.start || !strcmp(hp_opt.start, "on"))
		return;
	if (!strcmp(hp_opt.start, "off"))
		hooks_enable(false);
	else
		hp_warn("HEAPPROF_START=", hp_opt.start, " is neither on nor off; using on");
}

/* snap_sig: HEAPPROF_SIGNAL's signal (0 if none), which takes snapshots, not turns. */
static void toggle_signal(int snap_sig)
{
	int sig;

	if (!hp_opt.toggle_signal ||
	    !(sig = hp_signal_parse("HEAPPROF_TOGGLE_SIGNAL", hp_opt.toggle_signal)))
		return;
	if (sig == snap_sig) {
		hp_warn("HEAPPROF_TOGGLE_SIGNAL=", hp_opt.toggle_signal,
			" is HEAPPROF_SIGNAL's signal too; it takes snapshots and does not toggle");
	} else {
		triggers_handle(sig, on_toggle_signal, NULL);
		sigthread_take(sig, on_toggle_signal);
	}
}

/* ---- start-up and fork ------------------------------------------------------------- */

/* sigmask.c is in heapprof.so and libheapprof.a, not in the Rust crate */
#pragma weak sigmask_init

/* The calls sigmask.c wraps, looked up now: dlsym's own allocations and frees are not
 * the program's (nor in its event ring). */
static void sigmask_start(void)
{
	if (!sigmask_init)
		return;
	hooks_thread_enable(false);
	in_hook = true;
	sigmask_init();
	in_hook = false;
	hooks_thread_enable(true);
}

/* heapprof's signal thread, started with this thread's tagging off: the blocks its
 * creation allocates (glibc's TLS vector for it) are not the program's, nor in its
 * event ring. */
static void start_sigthread(bool fork_child)
{
	bool was_off = hooks_thread_off, was_in = in_hook;

	hooks_thread_enable(false);
	in_hook = true;
	if (fork_child)
		sigthread_after_fork();
	else
		sigthread_start();
	in_hook = was_in;
	hooks_thread_enable(!was_off);
}

static void hooks_fork_child(void)
{
	hp_tid_cache = 0;	/* the child of fork() is another thread */
	table_after_fork();
	pymalloc_after_fork();
	live_after_fork();
	hooks_sample_after_fork();
	sampled_after_fork();
	if (maps_after_fork)
		maps_after_fork();
	events_after_fork();
	snapshot_after_fork();
	snap_threads_after_fork();
	oom_after_fork();
	interval_after_fork();
	start_sigthread(true);
}

/* The thread ends (table.c's key destructor, in the last round): its counts go to the
 * sums, and what it allocates from here on is left untagged, as with
 * heapprof_thread_enable(0); what it frees is still counted. */
static void hooks_thread_end(void)
{
	hooks_thread_enable(false);
	live_thread_end();
	events_thread_end();
}

/*
 * Interpreter frames from the start, when the interpreter is in the executable or in
 * a library it links (for Python, a libpython): interp_find() asks each runtime once
 * (one says so once when it does not know its version). Here, not in a hook: it calls
 * dlsym. A libpython the program dlopen()s later is not looked for: a dlopen of ours in
 * front of glibc's would take the place of its caller, whose address glibc reads to
 * expand $ORIGIN and search the caller's RUNPATH, so every dlopen of the program could
 * find other libraries.
 */
void hooks_start_interp(void)
{
	unsigned pairs = hp_frames < HP2_MAX_FRAMES / 2 ? hp_frames : HP2_MAX_FRAMES / 2;
	const struct interp *in = NULL;

	/* heapprof's own calls, not the program's: a dlsym that finds nothing leaves
	 * glibc's error message allocated (untagged, so not a live block of the
	 * program's), and neither it nor the blocks dlsym frees again go in the event
	 * ring (in_hook) */
	hooks_thread_enable(false);
	in_hook = true;
	if (hp_opt.python)
		in = interp_find();
	/* Python's small objects are named with HEAPPROF_PYTHON=0 too (native stacks):
	 * the frames are the option's, the bytes are the program's */
	pymalloc_start();
	in_hook = false;
	hooks_thread_enable(true);
	if (in) {
		hooks_interp = in;
		__atomic_store_n(&hooks_interp_pairs, pairs, __ATOMIC_RELEASE);
	}
}

/*
 * The at-exit snapshot walks to exit()'s frame with libgcc's unwinder, which heapprof.so
 * otherwise loads when a walk first needs it (gcc_unwind.h): loaded at exit, what the
 * loader allocates would be tagged, live blocks of the program's in that very snapshot.
 * So with HEAPPROF_AT_EXIT it is loaded now, as heapprof's own calls (untagged).
 */
static void start_exit_walk(void)
{
	if (!hp_opt.at_exit)
		return;
	hooks_thread_enable(false);
	in_hook = true;
	(void)gcc_unwind();
	in_hook = false;
	hooks_thread_enable(true);
}

/* All of start-up but the check of hooks.c's own names and Python (hooks_start_interp). */
void hooks_start_process(void)
{
	boot_ensure();
	table_on_thread_end(hooks_thread_end);
	pthread_atfork(NULL, NULL, hooks_fork_child);
	start_switch();
	start_exit_walk();
	toggle_signal(triggers_init());
	sigmask_start();
	start_sigthread(false);	/* the program's threads block the two signals above */
}
