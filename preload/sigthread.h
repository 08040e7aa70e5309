/*
 * heapprof's own thread for its signals (HEAPPROF_SIGNAL, HEAPPROF_TOGGLE_SIGNAL): they
 * are blocked in every thread of the program and taken by this thread alone, with
 * sigwaitinfo, so that no system call of the program is cut short (EINTR) by them. The
 * program's own changes of its mask keep them blocked (sigmask.c). Between signals it
 * does heapprof's periodic work, if any (sigthread_every).
 */
#ifndef HP_SIGTHREAD_H
#define HP_SIGTHREAD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "compiler.h"

/* Take sig on heapprof's thread: handler, installed for sig, is called there as
 * handler(sig, info, NULL). Before sigthread_start. */
HP_HIDDEN void sigthread_take(int sig, void (*handler)(int, siginfo_t *, void *));

/* Call tick on heapprof's thread, first when it starts, then again as many ms later as
 * tick returned (a negative value: never again); the thread runs even with no signal
 * taken. Up to four ticks, each on its own schedule, one after the other (a slow one
 * delays the rest). Before sigthread_start. */
HP_HIDDEN void sigthread_every(long (*tick)(void));

/* Block the signals taken in the calling thread (the main thread, before the program
 * makes any) and start the thread; nothing if no signal is taken and no tick is set.
 * Says once why when it cannot (the handlers then run on the program's threads, as a
 * fallback; a tick then never runs). */
HP_HIDDEN void sigthread_start(void);

/* In the child of fork(): the thread is gone there; start another. */
HP_HIDDEN void sigthread_after_fork(void);

/* The thread's id (0 when it does not run) and its stack, [lo, hi) (snapshots leave
 * it out: it holds nothing of the program's). */
HP_HIDDEN void sigthread_self(pid_t *tid, uint64_t *lo, uint64_t *hi);

/*
 * For the program's calls that set a thread's mask (sigmask.c): the set to pass on in
 * place of set, so that the signals taken stay blocked: set itself, or tmp filled.
 * how is sigprocmask's (SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK). NULL stays NULL.
 */
HP_HIDDEN const sigset_t *sigthread_keep(int how, const sigset_t *set, sigset_t *tmp);

/* sigmask.c: look up the libc's calls it wraps that a signal handler may make (dlsym
 * may allocate and free): at start-up, with the hooks off. */
HP_HIDDEN void sigmask_init(void);

/* The signals taken, for a program image exec is about to start (it gets the mask its
 * caller would have had without heapprof); false if none. */
HP_HIDDEN bool sigthread_signals(sigset_t *out);

#endif
