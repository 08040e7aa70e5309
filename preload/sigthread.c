/*
 * heapprof's signal thread (see sigthread.h). A signal sent to the process goes to a
 * thread that does not block it: the program's threads all block heapprof's signals
 * (the main thread from start-up, the others inherit it), so this thread, waiting in
 * sigwaitinfo, takes them, and a program blocked in nanosleep, poll, epoll_wait or
 * select sleeps on. It blocks every other signal: the program's stay the program's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "sigthread.h"
#include "util.h"

#define MAX_TAKEN 2
#define MAX_TICKS 4	/* HEAPPROF_OOM's watch, HEAPPROF_INTERVAL's snapshots */

static struct {
	int sig;
	void (*handler)(int, siginfo_t *, void *);
} taken[MAX_TAKEN];
static unsigned ntaken;
static struct {
	long (*fn)(void);
	uint64_t due_ns;	/* its next run (CLOCK_MONOTONIC); 0: never again */
} ticks[MAX_TICKS];		/* the periodic work (sigthread_every) */
static unsigned nticks;
static sigset_t ours;		/* the signals taken; empty until the thread starts */
static bool running;		/* the thread was started in this process */
static pid_t thread_tid;	/* its id, once it runs */
static void *stack;		/* its stack, a mapping of ours, kept across fork */
static size_t stack_len;

void sigthread_take(int sig, void (*handler)(int, siginfo_t *, void *))
{
	if (ntaken < MAX_TAKEN)
		taken[ntaken++] = (typeof(taken[0])){ sig, handler };
}

void sigthread_every(long (*fn)(void))
{
	if (nticks < MAX_TICKS)
		ticks[nticks++].fn = fn;
}

/*
 * The program put a handler of its own on a signal taken here (its sigaction after
 * ours), or reset it: it gets the signal as the kernel would have given it, on this
 * thread, with the sender's siginfo: queued to ourselves, then let through.
 */
static void pass_on(int sig, siginfo_t *si)
{
	sigset_t one;

	sigemptyset(&one);
	sigaddset(&one, sig);
	si->si_signo = sig;
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), thread_tid, sig, si) < 0)
		syscall(SYS_tgkill, getpid(), thread_tid, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	pthread_sigmask(SIG_BLOCK, &one, NULL);
}

static void dispatch(int sig, siginfo_t *si)
{
	struct sigaction cur;

	for (unsigned i = 0; i < ntaken; i++) {
		if (taken[i].sig != sig)
			continue;
		if (sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_sigaction == taken[i].handler)
			taken[i].handler(sig, si, NULL);
		else
			pass_on(sig, si);
		return;
	}
}

/* The earliest due time of the ticks, 0 if none is due ever again. */
static uint64_t next_due(void)
{
	uint64_t due = 0;

	for (unsigned i = 0; i < nticks; i++)
		if (ticks[i].due_ns && (!due || ticks[i].due_ns < due))
			due = ticks[i].due_ns;
	return due;
}

/* Run each tick that is due; each says when it wants to run again. */
static void run_due(void)
{
	for (unsigned i = 0; i < nticks; i++) {
		long ms;

		if (!ticks[i].due_ns || hp_clock_ns() < ticks[i].due_ns)
			continue;
		ms = ticks[i].fn();
		ticks[i].due_ns = ms < 0 ? 0 : hp_clock_ns() + (uint64_t)ms * 1000000u + 1;
	}
}

/* The next signal taken, or 0 once the ticks due by then have run. */
static int next_signal(siginfo_t *si)
{
	uint64_t due = next_due(), now;

	if (!due)
		return sigwaitinfo(&ours, si);
	now = hp_clock_ns();
	if (now < due) {
		uint64_t left = due - now;
		struct timespec ts = { (time_t)(left / 1000000000u), (long)(left % 1000000000u) };
		int sig = sigtimedwait(&ours, si, &ts);

		if (sig > 0 || errno != EAGAIN)
			return sig;
	}
	run_due();
	return 0;
}

static void *loop(void *arg)
{
	siginfo_t si;

	(void)arg;
	/* a name, in /proc/PID/task/TID/comm, that says whose thread it is */
	prctl(PR_SET_NAME, "heapprof", 0, 0, 0);
	__atomic_store_n(&thread_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (unsigned i = 0; i < nticks; i++)
		ticks[i].due_ns = 1;	/* each at once */
	for (;;) {
		int sig = next_signal(&si);

		if (sig > 0)
			dispatch(sig, &si);
	}
	return NULL;
}

/* A stack of ours (guard page at the bottom): big enough for the snapshot's frames and
 * for the static TLS glibc puts at its top; tries larger while glibc says too small. */
static int create(pthread_t *t)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_attr_t attr;
	int err = EINVAL;

	for (size_t len = 128 << 10; err == EINVAL && len <= (16u << 20); len *= 4) {
		if (!stack || stack_len < len) {
			void *p = hp_map(len, HP2_OWN_SIGSTACKS, MAP_STACK);

			if (p == MAP_FAILED)
				return errno;
			if (stack)
				munmap(stack, stack_len);
			stack = p;
			stack_len = len;
			mprotect(stack, page, PROT_NONE);
		}
		if ((err = pthread_attr_init(&attr)))
			return err;
		err = pthread_attr_setstack(&attr, (char *)stack + page, stack_len - page);
		if (!err)
			err = pthread_create(t, &attr, loop, NULL);
		pthread_attr_destroy(&attr);
	}
	return err;
}

static void start(void)
{
	sigset_t all, old;
	pthread_t t;
	int err;

	if (!ntaken && !nticks)
		return;
	sigemptyset(&ours);
	for (unsigned i = 0; i < ntaken; i++)
		sigaddset(&ours, taken[i].sig);
	/* blocked here first (every thread the program makes inherits it); the thread
	 * starts with all blocked, so that the program's own signals never reach it */
	pthread_sigmask(SIG_BLOCK, &ours, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	thread_tid = 0;
	err = create(&t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_sigmask(SIG_UNBLOCK, &ours, NULL);
		hp_warn("cannot start its signal thread (", hp_strerror(err),
			"): the signals' handlers run on the program's threads");
		return;
	}
	pthread_detach(t);
	__atomic_store_n(&running, true, __ATOMIC_RELEASE);
}

void sigthread_start(void)
{
	start();
}

void sigthread_after_fork(void)
{
	if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&running, false, __ATOMIC_RELEASE);
	start();
}

void sigthread_self(pid_t *tid, uint64_t *lo, uint64_t *hi)
{
	bool on = __atomic_load_n(&running, __ATOMIC_ACQUIRE);

	*tid = on ? __atomic_load_n(&thread_tid, __ATOMIC_ACQUIRE) : 0;
	*lo = on ? (uint64_t)(uintptr_t)stack : 0;
	*hi = on ? (uint64_t)(uintptr_t)stack + stack_len : 0;
}

const sigset_t *sigthread_keep(int how, const sigset_t *set, sigset_t *tmp)
{
	bool changed = false;

	if (!set || how == SIG_BLOCK || !__atomic_load_n(&running, __ATOMIC_ACQUIRE) ||
	    (pid_t)hp_tid() == __atomic_load_n(&thread_tid, __ATOMIC_ACQUIRE))
		return set;
	*tmp = *set;
	for (unsigned i = 0; i < ntaken; i++) {
		int sig = taken[i].sig, in = sigismember(set, sig) == 1;

		if (how == SIG_UNBLOCK && in)
			changed |= sigdelset(tmp, sig) == 0;
		else if (how == SIG_SETMASK && !in)
			changed |= sigaddset(tmp, sig) == 0;
	}
	return changed ? tmp : set;
}

bool sigthread_signals(sigset_t *out)
{
	if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
		return false;
	*out = ours;
	return true;
}
