/*
 * Snapshots written by heapprof.so itself: the process forks a child that holds a copy
 * of its memory and writes it as an ELF core while the process runs on. The layout
 * and the choice of mappings are in snapshot_core.c; this file names the file, forks
 * and publishes it. Everything here is async-signal-safe: syscalls, no malloc or stdio.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "options.h"
#include "snapshot.h"
#include "snapshot_core.h"
#include "util.h"

#define DEFAULT_PATTERN "heapprof.%p.%n.snap"

/* One snapshot at a time: the job and the intermediate child's stack are static. */
static int busy;
static HP_TLS bool taking;	/* this thread holds busy: a nested trigger gets EBUSY */
static uint64_t seq;		/* %n: snapshots named so far */
static struct snap_job job;
static _Alignas(64) unsigned char mid_stack[64 << 10];

/* ---- small async-signal-safe text ----------------------------------------------- */

void snap_line_add(struct snap_line *l, const char *s)
{
	while (s && *s && l->n < sizeof(l->buf) - 2)
		l->buf[l->n++] = *s++;
	l->buf[l->n] = 0;
}

void snap_line_num(struct snap_line *l, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n && l->n < sizeof(l->buf) - 2)
		l->buf[l->n++] = tmp[--n];
	l->buf[l->n] = 0;
}

/* "2.53 s", "41 ms" or "370 us": durations in the unit that reads best. */
void snap_line_ns(struct snap_line *l, uint64_t ns)
{
	if (ns >= 10000000000ull) {
		snap_line_num(l, ns / 1000000000u);
		snap_line_add(l, " s");
	} else if (ns >= 10000000u) {
		snap_line_num(l, ns / 1000000u);
		snap_line_add(l, " ms");
	} else {
		snap_line_num(l, ns / 1000u);
		snap_line_add(l, " us");
	}
}

void snap_line_say(struct snap_line *l)
{
	hp_warn(l->buf, NULL, NULL);
}

const char *snap_strerror(int err)
{
	switch (err) {
	case ENOSPC: return "no space left on device";
	case EDQUOT: return "disk quota exceeded";
	case EEXIST: return "the file exists (snapshots never overwrite one)";
	case ENOENT: return "no such directory";
	case EACCES: return "permission denied";
	case EROFS: return "read-only file system";
	case EAGAIN: return "cannot fork (EAGAIN)";
	case ENOMEM: return "out of memory (ENOMEM)";
	case EBUSY: return "this thread is already taking one";
	case ENAMETOOLONG: return "name too long";
	case EFBIG: return "file too large (ulimit -f?)";
	case EIO: return "input/output error";
	}
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
	{
		const char *s = strerrorname_np(err);

		if (s)
			return s;
	}
#endif
	return "an unknown error";
}

uint64_t snap_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void say_failed(const char *path, const char *what, int err)
{
	struct snap_line l = { .n = 0 };

	snap_line_add(&l, "snapshot '");
	snap_line_add(&l, path);
	snap_line_add(&l, "' failed: ");
	snap_line_add(&l, what);
	snap_line_add(&l, snap_strerror(err));
	snap_line_say(&l);
}

/* ---- the name ------------------------------------------------------------------- */

/* pattern with %p (pid), %n (sequence number), %t (seconds since 1970), %% expanded. */
static int expand(char *out, size_t size, const char *pattern, uint64_t n)
{
	struct snap_line l = { .n = 0 };
	struct timespec ts;

	for (const char *p = pattern; *p; p++) {
		char one[2] = { *p, 0 };

		if (*p != '%' || !p[1]) {
			snap_line_add(&l, one);
			continue;
		}
		switch (*++p) {
		case 'p': snap_line_num(&l, (uint64_t)getpid()); break;
		case 'n': snap_line_num(&l, n); break;
		case 't':
			clock_gettime(CLOCK_REALTIME, &ts);
			snap_line_num(&l, (uint64_t)ts.tv_sec);
			break;
		case '%': snap_line_add(&l, "%"); break;
		default: snap_line_add(&l, "%"); one[0] = *p; snap_line_add(&l, one); break;
		}
	}
	if (l.n + 1 >= size || l.n >= sizeof(l.buf) - 2)
		return ENAMETOOLONG;
	memcpy(out, l.buf, l.n + 1);
	return 0;
}

/* final and final.part, the second created here (O_EXCL) so errors reach the caller. */
static int open_files(struct snap_job *j, const char *path)
{
	size_t len;
	int err;

	if (path) {
		len = strlen(path);
		if (len + 1 > sizeof(j->final))
			return ENAMETOOLONG;
		memcpy(j->final, path, len + 1);
	} else {
		err = expand(j->final, sizeof(j->final),
			     hp_opt.output ? hp_opt.output : DEFAULT_PATTERN,
			     __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
		if (err)
			return err;
		len = strlen(j->final);
	}
	if (!len)
		return ENOENT;
	if (access(j->final, F_OK) == 0)
		return EEXIST;
	memcpy(j->tmp, j->final, len);
	memcpy(j->tmp + len, ".part", sizeof(".part"));
	/* 0600, as the kernel's cores: a snapshot holds all the program's data */
	j->fd = open(j->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	return j->fd < 0 ? errno : 0;
}

/* ---- the fork -------------------------------------------------------------------- */

/* fork(2) without glibc's atfork handlers and malloc locks; exit_signal 0 or SIGCHLD. */
static long raw_fork(int exit_signal)
{
	/* clone's later arguments differ in order between architectures; all are 0 here */
	return syscall(SYS_clone, (unsigned long)exit_signal, 0ul, 0ul, 0ul, 0ul);
}

/* The writer: never returns. */
static void __attribute__((noreturn)) child_main(struct snap_job *j)
{
	sigset_t all;
	int err;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);	/* the program's signals are not ours */
	err = snap_core_write(j);
	if (err)
		unlink(j->tmp);
	_exit(err);
}

/*
 * The intermediate child of an asynchronous snapshot: it shares the caller's memory
 * (CLONE_VM | CLONE_VFORK, so the caller waits only for this function), forks the
 * writer and exits at once. The writer, orphaned, is reaped by init (or a subreaper):
 * the program gets no SIGCHLD and no zombie, and its wait() never sees ours.
 */
static int mid_main(void *arg)
{
	long pid = raw_fork(SIGCHLD);

	if (pid == 0)
		child_main(arg);
	_exit(pid < 0 ? errno : 0);
}

/* 0, or an errno value; *said when the writer has said why itself. */
static int fork_writer(struct snap_job *j, bool wait, bool *said)
{
	int status = 0, pid;

	*said = false;
	if (wait) {
		/* exit_signal 0: no SIGCHLD, and only a __WALL wait (ours) reaps it */
		long p = raw_fork(0);

		if (p == 0)
			child_main(j);
		if (p < 0)
			return errno;
		while (waitpid((pid_t)p, &status, __WALL) < 0 && errno == EINTR)
			;
		*said = WIFEXITED(status);
		return WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
	}
	pid = clone(mid_main, mid_stack + sizeof(mid_stack), CLONE_VM | CLONE_VFORK, j);
	if (pid < 0)
		return errno;
	while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
}

/* Registers of the caller's caller; apart, since getcontext returns twice. */
static __attribute__((noinline)) const ucontext_t *here(ucontext_t *uc)
{
	return getcontext(uc) == 0 ? uc : NULL;
}

int snapshot_take(const char *path, const ucontext_t *uc, int sig, bool wait)
{
	int saved = errno, err;
	bool said = false;
	ucontext_t mine;

	if (taking)
		return EBUSY;
	taking = true;
	while (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
		sched_yield();	/* another thread's snapshot: a fork's time */
	if (!uc)
		uc = here(&mine);
	job.full = hp_opt.snapshot && !strcmp(hp_opt.snapshot, "full");
	job.t0_ns = snap_clock_ns();
	job.cursig = sig;
	job.fd = -1;
	job.final[0] = 0;
	err = open_files(&job, path);
	if (!err) {
		snap_core_prepare(&job, uc);
		err = fork_writer(&job, wait, &said);
		if (err && !said)
			unlink(job.tmp);	/* the writer never started, or died */
		close(job.fd);
	}
	if (err && !said)
		say_failed(path ? path : job.final, "", err);
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	taking = false;
	errno = saved;
	return err;
}
