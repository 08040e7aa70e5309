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
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "options.h"
#include "sampled.h"
#include "sigthread.h"
#include "snapshot.h"
#include "snapshot_core.h"
#include "snapshot_lean.h"
#include "util.h"

#define DEFAULT_PATTERN "heapprof.%p.%n.snap"

/* One snapshot at a time: the job and the intermediate child's stack are static. */
static int busy;
static HP_TLS bool taking;	/* this thread holds busy: a nested trigger gets EBUSY */
static uint64_t seq;		/* %n: the last number a snapshot's name took */
static struct snap_job job;
static _Alignas(64) unsigned char mid_stack[64 << 10];

/*
 * The asynchronous writer, as its parent sees it: a page shared with the writer (which
 * has a memory of its own), where the writer says it is done and how it went. A
 * writer that dies before saying so is seen through a pidfd, which turns readable at
 * its death whether or not anyone reaps it, and whose pid is never another's. One
 * writer at a time runs, so a signal storm cannot start dozens. Whoever reads or
 * changes this state holds busy.
 */
struct writer_state {
	int pid;		/* the last asynchronous writer, 0 before the first */
	uint32_t started;	/* generation of the last writer started */
	uint32_t done;		/* = started once that writer has finished */
	int err;		/* its result then: 0 or an errno value */
};
static struct writer_state *writer;	/* MAP_SHARED; NULL until the first writer */
static int writer_pid;			/* set by mid_main, which shares our memory */
static int writer_fd = -1;		/* its pidfd (mid_main shares our files), or -1 */
static dev_t writer_fd_dev;		/* what writer_fd was, lest the program closed */
static ino_t writer_fd_ino;		/* it and the number now names a file of its */

static void say_failed(const char *path, const char *what, int err)
{
	struct hp_line l = { .n = 0 };

	hp_line_add(&l, "snapshot '");
	hp_line_add(&l, path);
	hp_line_add(&l, "' failed: ");
	hp_line_add(&l, what);
	hp_line_add(&l, hp_strerror(err));
	hp_line_say(&l);
}

/* ---- the name ------------------------------------------------------------------- */

/* pattern with %p (pid), %n (sequence number), %t (seconds since 1970), %% expanded. */
static int expand(char *out, size_t size, const char *pattern, uint64_t n)
{
	struct hp_line l = { .n = 0 };
	struct timespec ts;

	for (const char *p = pattern; *p; p++) {
		char one[2] = { *p, 0 };

		if (*p != '%' || !p[1]) {
			hp_line_add(&l, one);
			continue;
		}
		switch (*++p) {
		case 'p': hp_line_num(&l, (uint64_t)getpid()); break;
		case 'n': hp_line_num(&l, n); break;
		case 't':
			clock_gettime(CLOCK_REALTIME, &ts);
			hp_line_num(&l, (uint64_t)ts.tv_sec);
			break;
		case '%': hp_line_add(&l, "%"); break;
		default: hp_line_add(&l, "%"); one[0] = *p; hp_line_add(&l, one); break;
		}
	}
	if (l.n + 1 >= size || l.n >= sizeof(l.buf) - 2)
		return ENAMETOOLONG;
	memcpy(out, l.buf, l.n + 1);
	return 0;
}

static bool has_seq(const char *pattern)
{
	for (const char *p = pattern; *p; p++) {
		if (*p != '%')
			continue;
		if (!*++p)
			break;
		if (*p == 'n')
			return true;
	}
	return false;
}

/* Create final.part (O_EXCL): errors reach the caller, and no file is overwritten. */
static int open_tmp(struct snap_job *j)
{
	size_t len = strlen(j->final);

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

/* pattern with ".oom" before a final ".snap", or at its end (under busy) */
static const char *oom_pattern(const char *pattern)
{
	static char out[PATH_MAX];
	size_t n = strlen(pattern), cut = n;

	if (n + sizeof(".oom") > sizeof(out))
		return pattern;
	if (n >= 5 && !strcmp(pattern + n - 5, ".snap"))
		cut = n - 5;
	memcpy(out, pattern, cut);
	memcpy(out + cut, ".oom", 4);
	memcpy(out + cut + 4, pattern + cut, n - cut + 1);
	return out;
}

/*
 * final and final.part. With %n in the pattern a name already taken (by a program
 * this process was before an exec, which started counting at 1 too, or by a writer
 * still running) is passed over for the next number, so every request gets a file.
 */
static int open_files(struct snap_job *j, const char *path, enum snap_why why)
{
	const char *pattern = hp_opt.output ? hp_opt.output : DEFAULT_PATTERN;
	size_t len;
	int err;

	if (path) {
		len = strlen(path);
		if (len + 1 > sizeof(j->final))
			return ENAMETOOLONG;
		memcpy(j->final, path, len + 1);
		return open_tmp(j);
	}
	if (why == SNAP_OOM)
		pattern = oom_pattern(pattern);
	for (int tries = 0; tries < 100000; tries++) {
		err = expand(j->final, sizeof(j->final), pattern,
			     __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
		if (!err)
			err = open_tmp(j);
		if (err != EEXIST || !has_seq(pattern))
			return err;
	}
	return EEXIST;
}

/* ---- the fork -------------------------------------------------------------------- */

/* fork(2) without glibc's atfork handlers and malloc locks; exit_signal 0 or SIGCHLD. */
static long raw_fork(int exit_signal)
{
	/* clone's later arguments differ in order between architectures; all are 0 here */
	return syscall(SYS_clone, (unsigned long)exit_signal, 0ul, 0ul, 0ul, 0ul);
}

static void *reserve;
static size_t reserve_len;
static void (*interval_named)(const char *final);
static void (*interval_published)(void);

void snapshot_interval_hooks(void (*named)(const char *final), void (*published)(void))
{
	interval_named = named;
	interval_published = published;
}

void snapshot_reserve(void *p, size_t len)
{
	reserve = p;
	reserve_len = p ? len : 0;
}

/* The writer: never returns. */
static void __attribute__((noreturn)) child_main(struct snap_job *j)
{
	sigset_t all;
	struct timespec ts;
	int err;

	/* first: this copy of the process is the snapshot, and now is its moment */
	j->at_mono_ns = hp_clock_ns();
	clock_gettime(CLOCK_REALTIME, &ts);
	j->at_real_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);	/* the program's signals are not ours */
	if (reserve)
		hp_sys_munmap(reserve, reserve_len);	/* the room kept for us (snapshot_reserve) */
	err = snap_core_write(j);
	if (err)
		unlink(j->tmp);
	else if (j->interval && interval_published)
		interval_published();
	if (j->gen) {
		writer->err = err;
		__atomic_store_n(&writer->done, j->gen, __ATOMIC_RELEASE);
	}
	_exit(err);
}

/*
 * The intermediate child of an asynchronous snapshot: it shares the caller's memory
 * (CLONE_VM | CLONE_VFORK, so the caller waits only for this function), forks the
 * writer and exits at once. The writer, orphaned, is reaped by init: the program gets
 * no SIGCHLD and no zombie, and its wait() never sees ours (unless the program is
 * itself a child subreaper or PID 1: docs/guide.md says so). It shares our file table too,
 * so the pidfd it opens for the writer is ours.
 */
static int mid_main(void *arg)
{
	long pid = raw_fork(SIGCHLD);

	if (pid == 0)
		child_main(arg);
	writer_pid = (int)pid;
	/* the writer is our child until we exit, so this pid is still the writer's */
#ifdef SYS_pidfd_open
	writer_fd = pid > 0 ? (int)syscall(SYS_pidfd_open, (pid_t)pid, 0u) : -1;
#endif
	_exit(pid < 0 ? errno : 0);
}

/* 0, or an errno value; *said when the writer has said why itself. */
static int fork_writer(struct snap_job *j, bool wait, bool *said)
{
	int status = 0, pid, err;

	*said = false;
	if (wait) {
		/* exit_signal 0: no SIGCHLD, and only a __WALL wait (ours) reaps it */
		long p = raw_fork(0);

		if (p == 0)
			child_main(j);
		err = p < 0 ? errno : 0;
		snap_core_forked(j);
		if (p < 0)
			return err;
		while (waitpid((pid_t)p, &status, __WALL) < 0 && errno == EINTR)
			;
		*said = WIFEXITED(status);
		return WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
	}
	writer_pid = 0;
	if (writer_fd >= 0)
		close(writer_fd);
	writer_fd = -1;
	__atomic_store_n(&writer->pid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&writer->started, j->gen, __ATOMIC_RELEASE);
	pid = clone(mid_main, mid_stack + sizeof(mid_stack), CLONE_VM | CLONE_VFORK | CLONE_FILES, j);
	err = pid < 0 ? errno : 0;
	snap_core_forked(j);
	if (pid >= 0) {
		while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
			;
		err = WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
	}
	if (err || writer_pid <= 0) {
		writer->err = err ? err : EIO;	/* no writer: nothing is in flight */
		__atomic_store_n(&writer->done, j->gen, __ATOMIC_RELEASE);
	} else {
		struct stat st;

		__atomic_store_n(&writer->pid, writer_pid, __ATOMIC_RELAXED);
		if (writer_fd >= 0 && fstat(writer_fd, &st) == 0) {
			writer_fd_dev = st.st_dev;
			writer_fd_ino = st.st_ino;
		}
	}
	return err;
}

/* ---- the writer in flight -------------------------------------------------------- */

/* The writer is alive: its pidfd not readable, or (without one) its pid there. */
static bool writer_alive(void)
{
	struct pollfd pf = { .fd = writer_fd, .events = POLLIN };
	struct stat st;

	if (writer_fd >= 0 && fstat(writer_fd, &st) == 0 && st.st_dev == writer_fd_dev &&
	    st.st_ino == writer_fd_ino && poll(&pf, 1, 0) >= 0 && !(pf.revents & POLLNVAL))
		return !(pf.revents & (POLLIN | POLLHUP));
	return kill(writer->pid, 0) == 0 || errno == EPERM;
}

/* Under busy: the last writer started has not said it is done and lives. */
static bool writer_running(void)
{
	uint32_t started;

	if (!writer)
		return false;
	started = __atomic_load_n(&writer->started, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&writer->done, __ATOMIC_ACQUIRE) == started)
		return false;
	if (writer_alive())
		return true;
	/* dead: its word, if it said one, is there now; if not it died (killed, say) */
	if (__atomic_load_n(&writer->done, __ATOMIC_ACQUIRE) != started) {
		writer->err = EIO;
		__atomic_store_n(&writer->done, started, __ATOMIC_RELEASE);
	}
	return false;
}

/* writer_running() with busy taken, if no one holds it: then someone is forking one. */
static bool writer_running_now(void)
{
	bool running;

	if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
		return true;
	running = writer_running();
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	return running;
}

/* Until no writer runs (0 or its error), or until_ns (0: no limit) has come: ETIMEDOUT. */
static int wait_until(uint64_t until_ns)
{
	struct timespec nap = { 0, 1000000 };

	while (writer_running_now()) {
		if (until_ns && hp_clock_ns() >= until_ns)
			return ETIMEDOUT;
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 32000000)
			nap.tv_nsec *= 2;	/* 1 ms, 2, 4, ... 64: quick for a small file */
	}
	return writer ? writer->err : 0;
}

static uint64_t deadline(long timeout_ms)
{
	return timeout_ms < 0 ? 0 : hp_clock_ns() + (uint64_t)timeout_ms * 1000000u + 1;
}

int snapshot_wait(long timeout_ms)
{
	int saved = errno, err;

	if (taking)
		return EBUSY;	/* a handler on a thread in the midst of starting one */
	err = wait_until(deadline(timeout_ms));
	errno = saved;
	return err;
}

/* The page the writers report on, mapped by the first asynchronous snapshot. */
static bool writer_page(void)
{
	void *p;

	if (writer)
		return true;
	p = hp_sys_mmap(NULL, sizeof(*writer), MAP_SHARED);
	if (p == MAP_FAILED)
		return false;
	writer = p;
	return true;
}

void snapshot_after_fork(void)
{
	/* The parent's writer is not ours, and a thread that held busy is gone */
	__atomic_store_n(&busy, 0, __ATOMIC_RELAXED);
	taking = false;
	if (writer_fd >= 0)
		close(writer_fd);
	writer_fd = -1;
	if (writer) {
		void *p = hp_sys_mmap(writer, sizeof(*writer), MAP_SHARED | MAP_FIXED);

		writer = p == MAP_FAILED ? NULL : p;	/* zeroed: nothing in flight */
	}
}

static void say_refused(void)
{
	struct hp_line l = { .n = 0 };

	hp_line_add(&l, "snapshot refused: '");
	hp_line_add(&l, job.final);
	hp_line_add(&l, "' is still being written (one writer at a time)");
	hp_line_say(&l);
}

/*
 * musl declares getcontext but has none, and a static glibc links it only when
 * something else asks for it: weak, and without it the registers snapshot_context_at
 * keeps (the callee-saved ones; it sets sp and pc itself) are read here by hand.
 */
#pragma weak getcontext

static const ucontext_t *here_by_hand(ucontext_t *uc)
{
#if defined(__x86_64__)
	greg_t *g = uc->uc_mcontext.gregs;

	__asm__ volatile("mov %%rbx, %0\n\tmov %%rbp, %1\n\tmov %%r12, %2\n\t"
			 "mov %%r13, %3\n\tmov %%r14, %4\n\tmov %%r15, %5"
			 : "=m"(g[REG_RBX]), "=m"(g[REG_RBP]), "=m"(g[REG_R12]), "=m"(g[REG_R13]),
			   "=m"(g[REG_R14]), "=m"(g[REG_R15]));
	return uc;
#else
	(void)uc;
	return NULL;
#endif
}

/* Registers of the caller's caller; apart, since getcontext returns twice. uc is
 * zeroed first: getcontext leaves some registers (rax, r10, r11, eflags, cs) and
 * most of the structure unwritten, and what it leaves would be read as roots. */
static __attribute__((noinline)) const ucontext_t *here(ucontext_t *uc)
{
	memset(uc, 0, sizeof(*uc));
	if (getcontext)
		return getcontext(uc) == 0 ? uc : NULL;
	return here_by_hand(uc);
}

/*
 * The context of a caller of ours whose stack pointer was sp at the call and which
 * returns to pc: the callee-saved registers as they are here (still its own, or ours
 * whose values point at heapprof's memory, never into a block), sp and pc its own,
 * and the registers a call clobbers zeroed. So the snapshot's stack starts at the
 * caller's frame, and the frames below it (ours, and the dead ones we overlie) are
 * no roots.
 */
__attribute__((noinline)) const ucontext_t *snapshot_context_at(ucontext_t *uc, uintptr_t sp,
								 uintptr_t pc)
{
	if (!here(uc))
		return NULL;
#if defined(__x86_64__)
	{
		greg_t *g = uc->uc_mcontext.gregs;
		static const int clobbered[] = { REG_RAX, REG_RCX, REG_RDX, REG_RSI, REG_RDI,
						 REG_R8, REG_R9, REG_R10, REG_R11 };

		for (size_t i = 0; i < sizeof(clobbered) / sizeof(clobbered[0]); i++)
			g[clobbered[i]] = 0;
		g[REG_RSP] = (greg_t)sp;
		g[REG_RIP] = (greg_t)pc;
	}
#elif defined(__aarch64__)
	for (int i = 0; i < 18; i++)	/* x0-x17: arguments, results, scratch */
		uc->uc_mcontext.regs[i] = 0;
	uc->uc_mcontext.sp = sp;
	uc->uc_mcontext.pc = pc;
#else
	(void)sp;
	(void)pc;
#endif
	return uc;
}

/* Whether a snapshot asked for why is lean (sampled.h says which are). */
static bool lean_for(enum snap_why why)
{
	return sampled_lean == SAMPLED_LEAN_ALL ||
	       (sampled_lean == SAMPLED_LEAN_INTERVAL && why == SNAP_INTERVAL);
}

/*
 * Under busy: a lean snapshot to job's file, written here, no writer forked. 0, an
 * errno value (said), or -1: none can be had, and a compact one goes to the file
 * instead (said once: the causes last, but for a snapshot taken by a signal handler
 * in a thread changing the registry).
 */
static int take_lean(const ucontext_t *uc)
{
	static bool said;
	const char *why_not;
	int err;

	snap_core_ids(&job, uc);
	err = snap_lean_write(&job, &why_not);
	if (err < 0) {
		job.lean = false;
		if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
			hp_warn("a lean snapshot cannot be written (", why_not,
				"): writing a compact one");
		return -1;
	}
	if (!err && job.interval) {
		/* as a forked writer does, then its parent: the older names go, this one
		 * is kept, and the next tick hears that it was written */
		if (interval_published)
			interval_published();
		if (interval_named)
			interval_named(job.final);
	}
	if (writer)
		writer->err = err;	/* no writer runs (busy): snapshot_wait's answer */
	return err;
}

/* Take busy with no writer in flight, as why wants it; 0 or EBUSY. */
static int lock_for(enum snap_why why)
{
	uint64_t until = deadline((long)hp_opt.wait_ms);

	for (;;) {
		/* the API and a peak wait, within HEAPPROF_WAIT_MS in all: a peak refused
		 * would be lost, since live memory may never come back up to it */
		if ((why == SNAP_API || why == SNAP_PEAK) && wait_until(until) == ETIMEDOUT)
			return EBUSY;
		while (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
			sched_yield();	/* another thread's snapshot: a fork's time */
		/* exit has waited already; a crash cannot, nor a process near its limit */
		if (why == SNAP_CRASH || why == SNAP_EXIT || why == SNAP_OOM || !writer_running())
			return 0;
		if (why == SNAP_SIGNAL)
			say_refused();	/* (an interval's is skipped: the next comes soon) */
		__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
		if (why != SNAP_API && why != SNAP_PEAK)
			return EBUSY;
		/* another thread started one since we waited: wait for that one too */
	}
}

int snapshot_take(const char *path, const ucontext_t *uc, int sig, enum snap_why why)
{
	bool wait = why == SNAP_EXIT || why == SNAP_CRASH || why == SNAP_OOM, said = false;
	int saved = errno, err, lean;
	ucontext_t mine;

	if (taking) {
		if (why == SNAP_SIGNAL)
			hp_warn("snapshot refused: the thread the signal interrupted is taking "
				"one", NULL, NULL);
		return EBUSY;
	}
	taking = true;
	err = lock_for(why);
	if (err) {
		taking = false;
		errno = saved;
		return err;
	}
	/* our own context, or exit's caller's: where a function was called */
	job.at_call = !uc || why == SNAP_EXIT;
	if (!uc)
		uc = here(&mine);
	job.full = hp_opt.snapshot && !strcmp(hp_opt.snapshot, "full");
	job.lean = lean_for(why);
	job.light = why == SNAP_OOM;
	job.quiet = job.interval = why == SNAP_INTERVAL;
	job.t0_ns = hp_clock_ns();
	job.cursig = sig;
	job.fd = -1;
	job.final[0] = 0;
	job.gen = 0;
	sigthread_self(&job.own_tid, &job.own_lo, &job.own_hi);
	if (!wait) {
		if (!writer_page())
			wait = true;	/* no page to hear from the writer: write it now */
		else
			job.gen = writer->started + 1 ? writer->started + 1 : 1;
	}
	err = open_files(&job, path, why);
	lean = !err && job.lean ? take_lean(uc) : -1;
	if (lean >= 0) {
		err = lean;
		if (err)
			unlink(job.tmp);
		said = true;	/* written, or its failure said */
		close(job.fd);
	} else if (!err) {
		snap_core_prepare(&job, uc);
		err = fork_writer(&job, wait, &said);
		if (err && !said)
			unlink(job.tmp);	/* the writer never started, or died */
		if (!err && job.interval && interval_named)
			interval_named(job.final);
		close(job.fd);
	}
	if (err && !said)
		say_failed(path ? path : job.final, "", err);
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	taking = false;
	errno = saved;
	return err;
}
