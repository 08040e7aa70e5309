/*
 * The libc calls that set a thread's signal mask, so that heapprof's signals stay
 * blocked in the program's threads (sigthread.h) whatever mask the program sets (bash
 * and python set the empty one), and the exec calls, so that a program image the
 * process starts gets the mask it would have had without heapprof. heapprof.so
 * exports them by their names, libheapprof.a as __wrap_NAME (ld --wrap); the Rust
 * crate has none. With no signal thread, each is the libc's call and nothing more.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE	/* ppoll and pselect are defined here, not inlined */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#include "compiler.h"
#include "sigthread.h"

#if defined(HP_ENTRIES_WRAP)
#define WRAPPED(name) __wrap_##name
#define REAL(name) __real_##name
#define HAVE(name) 1
#define DECLARE(ret, name, args) ret __real_##name args; ret __wrap_##name args;
#else
#define WRAPPED(name) name
/* the next definition, looked up once (never from a signal handler: sigmask_init asks
 * for the calls a handler may make before the program runs) */
#define REAL(name) ((__typeof__(&name))next(&next_##name, #name))
#define HAVE(name) (REAL(name) != NULL)
#define DECLARE(ret, name, args) static void *next_##name;

static void *next(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!fn) {
		fn = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	return fn;
}
#endif

DECLARE(int, sigprocmask, (int, const sigset_t *, sigset_t *))
DECLARE(int, pthread_sigmask, (int, const sigset_t *, sigset_t *))
DECLARE(int, sigsuspend, (const sigset_t *))
DECLARE(int, ppoll, (struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))
DECLARE(int, pselect, (int, fd_set *, fd_set *, fd_set *, const struct timespec *,
		       const sigset_t *))
DECLARE(int, epoll_pwait, (int, struct epoll_event *, int, int, const sigset_t *))
DECLARE(int, execve, (const char *, char *const[], char *const[]))
DECLARE(int, execv, (const char *, char *const[]))
DECLARE(int, execvp, (const char *, char *const[]))
DECLARE(int, execvpe, (const char *, char *const[], char *const[]))
DECLARE(int, fexecve, (int, char *const[], char *const[]))
DECLARE(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *,
			   const posix_spawnattr_t *, char *const[], char *const[]))
DECLARE(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *,
			    const posix_spawnattr_t *, char *const[], char *const[]))

#if !defined(HP_ENTRIES_WRAP)
/* No next definition (a libc without the call): the call fails as a missing one would. */
#define CALL(name, ...) (HAVE(name) ? REAL(name)(__VA_ARGS__) : (errno = ENOSYS, -1))

void sigmask_init(void)
{
	(void)REAL(sigprocmask), (void)REAL(pthread_sigmask), (void)REAL(sigsuspend);
	(void)REAL(ppoll), (void)REAL(pselect), (void)REAL(epoll_pwait);
}
#else
#define CALL(name, ...) REAL(name)(__VA_ARGS__)

void sigmask_init(void)
{
}
#endif

HP_EXPORT int WRAPPED(sigprocmask)(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t tmp;

	return CALL(sigprocmask, how, sigthread_keep(how, set, &tmp), old);
}

HP_EXPORT int WRAPPED(pthread_sigmask)(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t tmp;

	/* pthread_sigmask returns its error; a missing one cannot be */
	return HAVE(pthread_sigmask) ?
		       REAL(pthread_sigmask)(how, sigthread_keep(how, set, &tmp), old) : ENOSYS;
}

/* The calls that wait with a mask of their own in place of the thread's */
HP_EXPORT int WRAPPED(sigsuspend)(const sigset_t *mask)
{
	sigset_t tmp;

	return CALL(sigsuspend, sigthread_keep(SIG_SETMASK, mask, &tmp));
}

HP_EXPORT int WRAPPED(ppoll)(struct pollfd *fds, nfds_t n, const struct timespec *ts,
			     const sigset_t *mask)
{
	sigset_t tmp;

	return CALL(ppoll, fds, n, ts, sigthread_keep(SIG_SETMASK, mask, &tmp));
}

HP_EXPORT int WRAPPED(pselect)(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
			       const sigset_t *mask)
{
	sigset_t tmp;

	return CALL(pselect, n, r, w, e, ts, sigthread_keep(SIG_SETMASK, mask, &tmp));
}

HP_EXPORT int WRAPPED(epoll_pwait)(int epfd, struct epoll_event *ev, int max, int timeout,
				   const sigset_t *mask)
{
	sigset_t tmp;

	return CALL(epoll_pwait, epfd, ev, max, timeout, sigthread_keep(SIG_SETMASK, mask, &tmp));
}

/* ---- exec: the new image gets heapprof's signals unblocked, as it would have ---- */

static bool unblock(sigset_t *s)
{
	if (!sigthread_signals(s) || !HAVE(pthread_sigmask))
		return false;
	REAL(pthread_sigmask)(SIG_UNBLOCK, s, NULL);
	return true;
}

/* exec failed: blocked again (errno kept) */
static int reblock(bool on, const sigset_t *s, int rc)
{
	int saved = errno;

	if (on)
		REAL(pthread_sigmask)(SIG_BLOCK, s, NULL);
	errno = saved;
	return rc;
}

HP_EXPORT int WRAPPED(execve)(const char *path, char *const argv[], char *const envp[])
{
	sigset_t s;
	bool on = unblock(&s);

	return reblock(on, &s, CALL(execve, path, argv, envp));
}

HP_EXPORT int WRAPPED(execv)(const char *path, char *const argv[])
{
	sigset_t s;
	bool on = unblock(&s);

	return reblock(on, &s, CALL(execv, path, argv));
}

HP_EXPORT int WRAPPED(execvp)(const char *file, char *const argv[])
{
	sigset_t s;
	bool on = unblock(&s);

	return reblock(on, &s, CALL(execvp, file, argv));
}

HP_EXPORT int WRAPPED(execvpe)(const char *file, char *const argv[], char *const envp[])
{
	sigset_t s;
	bool on = unblock(&s);

	return reblock(on, &s, CALL(execvpe, file, argv, envp));
}

HP_EXPORT int WRAPPED(fexecve)(int fd, char *const argv[], char *const envp[])
{
	sigset_t s;
	bool on = unblock(&s);

	return reblock(on, &s, CALL(fexecve, fd, argv, envp));
}

/*
 * posix_spawn's child takes the attributes' mask when they set one (the program's
 * choice, less heapprof's signals, which it has blocked only through heapprof), else
 * the caller's, unblocked for the while.
 */
static int spawn(bool path, pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	__typeof__(&posix_spawn) fn = path ? REAL(posix_spawnp) : REAL(posix_spawn);
	posix_spawnattr_t mine;
	short flags = 0;
	sigset_t s, m;
	bool on;
	int rc;

	if (!fn)
		return ENOSYS;
	if (!sigthread_signals(&s))
		return fn(pid, file, fa, attr, argv, envp);
	if (attr && posix_spawnattr_getflags(attr, &flags) == 0 &&
	    (flags & POSIX_SPAWN_SETSIGMASK) && posix_spawnattr_getsigmask(attr, &m) == 0) {
		mine = *attr;
		for (int sig = 1; sig < NSIG; sig++)
			if (sigismember(&s, sig) == 1)
				sigdelset(&m, sig);
		posix_spawnattr_setsigmask(&mine, &m);
		return fn(pid, file, fa, &mine, argv, envp);
	}
	on = unblock(&s);
	rc = fn(pid, file, fa, attr, argv, envp);
	reblock(on, &s, 0);
	return rc;
}

HP_EXPORT int WRAPPED(posix_spawn)(pid_t *pid, const char *path,
				   const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
				   char *const argv[], char *const envp[])
{
	return spawn(false, pid, path, fa, attr, argv, envp);
}

HP_EXPORT int WRAPPED(posix_spawnp)(pid_t *pid, const char *file,
				    const posix_spawn_file_actions_t *fa,
				    const posix_spawnattr_t *attr, char *const argv[],
				    char *const envp[])
{
	return spawn(true, pid, file, fa, attr, argv, envp);
}
