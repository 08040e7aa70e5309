/*
 * heapprof-inject PID LIBRARY: load LIBRARY into the running process PID and call its
 * heapprof_attach(), for `heapprof attach`. One thread is stopped with ptrace (the
 * main one, at a moment it holds none of the libc's locks), made to call dlopen,
 * dlsym and heapprof_attach() in turn, and given back its registers as they were;
 * the process's other threads run on meanwhile. x86-64 only.
 * Exit status: 0 attached (one line on stdout: what was done, how long the thread was
 * stopped), 2 refused or failed (one line on stderr; the process runs on), 64 bad usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"	/* heapprof_attach()'s answers */

static const char *me = "heapprof attach";
static pid_t pid;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", me);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

#if defined(__x86_64__)

/* Where the target's libc and dynamic linker lie: their text holds the locks a call
 * of dlopen would take again. */
struct maps {
	char libc[PATH_MAX];
	uintptr_t libc_base;
	uintptr_t lo[16], hi[16];	/* executable ranges of libc and ld.so */
	unsigned n;
	bool musl;
};

static bool maps_read(struct maps *m)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		char perms[8], file[PATH_MAX] = "";
		const char *base;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi, perms, &off, file) < 4)
			continue;
		base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
		/* musl's libc is its dynamic linker: ld-musl-ARCH.so.1, or libc.so in its
		 * own directory (Debian's x86_64-linux-musl) */
		if (!strncmp(base, "ld-musl", 7) || (strstr(file, "musl") && !strncmp(base, "libc.", 5)))
			m->musl = true;
		bool is_libc = !strncmp(base, "libc.so.", 8) || !strcmp(base, "libc.so");
		bool is_ld = !strncmp(base, "ld-linux", 8) || !strncmp(base, "ld.so", 5);

		if (is_libc && off == 0 && !m->libc_base) {
			m->libc_base = lo;
			snprintf(m->libc, sizeof(m->libc), "%s", file);
		}
		if ((is_libc || is_ld) && perms[2] == 'x' && m->n < 16) {
			m->lo[m->n] = lo;
			m->hi[m->n++] = hi;
		}
	}
	fclose(f);
	return true;
}

/* The target's address of one of our libc's functions: the same file, mapped at base. */
static uintptr_t target_fn(const struct maps *m, void *ours)
{
	Dl_info info;

	if (!dladdr(ours, &info) || !info.dli_fbase)
		return 0;
	return m->libc_base + ((uintptr_t)ours - (uintptr_t)info.dli_fbase);
}

/* Whether the target's libc is the file ours is (compared by device and inode). */
static bool same_libc(const struct maps *m)
{
	char theirs[PATH_MAX + 32];
	struct stat a, b;
	Dl_info info;

	snprintf(theirs, sizeof(theirs), "/proc/%d/root%s", (int)pid, m->libc);
	return dladdr((void *)dlopen, &info) && stat(info.dli_fname, &a) == 0 &&
	       stat(theirs, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* ---- the stopped thread ------------------------------------------------------------ */

static struct user_regs_struct saved;
static unsigned char xsave[16384];
static struct iovec xsave_iov = { xsave, sizeof(xsave) };
static int pending_sig;	/* a signal that came while the thread was ours: given back */

/* Wait for the thread's next stop; false if it ended. A signal is kept for later. */
static bool wait_stop(int *sig)
{
	int st;

	for (;;) {
		if (waitpid(pid, &st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return false;
		if (WIFSTOPPED(st)) {
			*sig = (st >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(st);
			return true;
		}
	}
}

/* Stopped where a call of dlopen cannot deadlock: not in the dynamic linker, and in
 * the libc only while blocked in a system call that takes no allocator lock. */
static bool safe_stop(const struct maps *m, const struct user_regs_struct *r)
{
	long nr = (long)r->orig_rax;

	for (unsigned i = 0; i < m->n; i++) {
		if (r->rip < m->lo[i] || r->rip >= m->hi[i])
			continue;
		if (nr < 0)
			return false;	/* running libc or ld.so code: maybe holding a lock */
		/* what malloc calls with its arena locked */
		return nr != 9 && nr != 10 && nr != 11 && nr != 12 && nr != 25 && nr != 28;
	}
	return true;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Stop the thread at a safe point (500 tries, 2 ms apart); its registers in saved. */
static bool stop_safely(const struct maps *m)
{
	int sig;

	for (int tries = 0; tries < 500; tries++) {
		if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0 || !wait_stop(&sig))
			return false;
		if (sig && sig != SIGTRAP)
			pending_sig = sig;
		if (ptrace(PTRACE_GETREGS, pid, 0, &saved) < 0 ||
		    ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &xsave_iov) < 0)
			return false;
		if (safe_stop(m, &saved))
			return true;
		if (ptrace(PTRACE_CONT, pid, 0, (void *)(long)pending_sig) < 0)
			return false;
		pending_sig = 0;
		usleep(2000);
	}
	errno = EAGAIN;
	return false;
}

static bool poke(uintptr_t addr, const void *buf, size_t len)
{
	for (size_t i = 0; i < len; i += sizeof(long)) {
		long w = 0;

		if (len - i < sizeof(long))
			w = ptrace(PTRACE_PEEKDATA, pid, (void *)(addr + i), 0);
		memcpy(&w, (const char *)buf + i, len - i < sizeof(long) ? len - i : sizeof(long));
		if (ptrace(PTRACE_POKEDATA, pid, (void *)(addr + i), (void *)w) < 0)
			return false;
	}
	return true;
}

/* Copy str below sp on the target's stack; returns its address, sp moved below it. */
static uintptr_t push_str(uintptr_t *sp, const char *str)
{
	size_t len = strlen(str) + 1;

	*sp = (*sp - len) & ~(uintptr_t)15;
	return poke(*sp, str, len) ? *sp : 0;
}

/*
 * Call fn(a, b) in the stopped thread, on its stack below the red zone; a string sa
 * (sb) is copied there and passed as a (b). The call returns to address 0, which
 * stops the thread with SIGSEGV, ours to take.
 */
static bool call(uintptr_t fn, uintptr_t a, uintptr_t b, const char *sa, const char *sb,
		 uintptr_t *ret)
{
	struct user_regs_struct r = saved;
	uintptr_t sp = (saved.rsp - 512) & ~(uintptr_t)15, zero = 0;
	int sig;

	if ((sa && !(a = push_str(&sp, sa))) || (sb && !(b = push_str(&sp, sb))))
		return false;
	sp -= 8;	/* the return address: at entry, sp + 8 is 16-aligned */
	if (!poke(sp, &zero, sizeof(zero)))
		return false;
	r.rsp = sp;
	r.rip = fn;
	r.rdi = a;
	r.rsi = b;
	r.rax = 0;
	r.orig_rax = (unsigned long)-1;	/* no system call to restart on the way */
	if (ptrace(PTRACE_SETREGS, pid, 0, &r) < 0 || ptrace(PTRACE_CONT, pid, 0, 0) < 0)
		return false;
	for (;;) {
		if (!wait_stop(&sig))
			return false;
		if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
			return false;
		if (sig == SIGSEGV && r.rip == 0)
			break;
		if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE)
			return false;	/* the call itself faulted: the process is not ours to save */
		if (sig && sig != SIGTRAP)
			pending_sig = sig;	/* delivered when the thread is back */
		if (ptrace(PTRACE_CONT, pid, 0, 0) < 0)
			return false;
	}
	*ret = r.rax;
	return true;
}

static bool restore(void)
{
	return ptrace(PTRACE_SETREGS, pid, 0, &saved) == 0 &&
	       ptrace(PTRACE_SETREGSET, pid, (void *)NT_X86_XSTATE, &xsave_iov) == 0;
}

/* The target's C string at addr, into buf. */
static void peek_str(uintptr_t addr, char *buf, size_t size)
{
	size_t i = 0;

	while (addr && i + sizeof(long) < size) {
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, pid, (void *)(addr + i), 0);
		if (errno)
			break;
		memcpy(buf + i, &w, sizeof(w));
		if (memchr(&w, 0, sizeof(w)))
			return;
		i += sizeof(w);
	}
	buf[i] = 0;
}

static const char *refusal(int rc)
{
	switch (rc) {
	case ATTACH_OTHER_HEAPPROF: return "heapprof is in the process already";
	case ATTACH_OTHER_MALLOC: return "its malloc is not the libc's (another allocator comes first)";
	case ATTACH_AGAIN: return "heapprof is attached already";
	default: return "heapprof cannot attach on this system";
	}
}

/* The calls, once the thread is stopped: 0 attached, else a line said. */
static int inject(const struct maps *m, const char *lib, long *patched)
{
	uintptr_t h = 0, fn = 0, rc = 0, err = 0;
	char msg[512] = "";

	if (!call(target_fn(m, (void *)dlopen), 0, RTLD_NOW | RTLD_LOCAL, lib, NULL, &h))
		return say("process %d: the call of dlopen failed", (int)pid), 2;
	if (!h) {
		if (call(target_fn(m, (void *)dlerror), 0, 0, NULL, NULL, &err))
			peek_str(err, msg, sizeof(msg));
		return say("process %d cannot load '%s': %s", (int)pid, lib, *msg ? msg : "?"), 2;
	}
	if (!call(target_fn(m, (void *)dlsym), h, 0, NULL, "heapprof_attach", &fn) || !fn) {
		call(target_fn(m, (void *)dlclose), h, 0, NULL, NULL, &err);
		return say("process %d: '%s' has no heapprof_attach", (int)pid, lib), 2;
	}
	if (!call(fn, 0, 0, NULL, NULL, &rc))
		return say("process %d: the call of heapprof_attach failed", (int)pid), 2;
	if ((int)rc < 0) {
		call(target_fn(m, (void *)dlclose), h, 0, NULL, NULL, &err);
		return say("not attaching to process %d: %s", (int)pid, refusal((int)rc)), 2;
	}
	*patched = (int)rc;
	return 0;
}

/* Why the main thread cannot be stopped and given back as it was, or NULL: exited,
 * stopped (SIGSTOP, a job stop) or traced already. */
static const char *not_attachable(char *buf, size_t size)
{
	char path[64], line[256], state = 0;
	long tracer = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)pid);
	if (!(f = fopen(path, "r")))
		return "it has no main thread to read";
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "State: %c", &state);
		sscanf(line, "TracerPid: %ld", &tracer);
	}
	fclose(f);
	if (state == 'Z' || state == 'X')
		return "its main thread has exited";
	if (state == 'T' || state == 't')
		return "it is stopped (attach when it runs again)";
	if (tracer) {
		snprintf(buf, size, "it is traced by process %ld (a debugger?)", tracer);
		return buf;
	}
	return NULL;
}

static int attach(const char *lib)
{
	struct maps m;
	char buf[96];
	const char *why;
	sigset_t block, old;
	double t0, t1;
	long patched = 0;
	int rc;

	if (!maps_read(&m))
		return say("cannot read process %d's maps: %s", (int)pid, strerror(errno)), 2;
	if (m.musl)
		return say("not attaching to process %d: it runs musl's libc (glibc only)", (int)pid), 2;
	if (!m.libc_base)
		return say("not attaching to process %d: no shared libc in it (a static program?)",
			   (int)pid), 2;
	if ((why = not_attachable(buf, sizeof(buf))))
		return say("not attaching to process %d: %s", (int)pid, why), 2;
	if (!same_libc(&m))
		return say("not attaching to process %d: its libc (%s) is not the one this "
			   "runs with (another root or container?)", (int)pid, m.libc), 2;
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0)
		return say("cannot trace process %d: %s (run as its user, with CAP_SYS_PTRACE, "
			   "or see /proc/sys/kernel/yama/ptrace_scope)", (int)pid, strerror(errno)), 2;
	/* the thread must not be left inside a call: no ending halfway on ^C */
	sigfillset(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (!stop_safely(&m)) {
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return say("process %d: cannot stop it at a safe point: %s", (int)pid, strerror(errno)), 2;
	}
	t0 = now_ms();
	rc = inject(&m, lib, &patched);
	if (!restore())
		say("process %d: cannot give its thread back its registers", (int)pid);
	ptrace(PTRACE_DETACH, pid, 0, (void *)(long)pending_sig);
	t1 = now_ms();
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		printf("attached to process %d: %ld references redirected; its thread %d "
		       "stopped for %.2f ms\n", (int)pid, patched, (int)pid, t1 - t0);
	return rc;
}

#else
static int attach(const char *lib)
{
	(void)lib;
	say("not supported on this architecture (x86-64 only)");
	return 2;
}
#endif

int main(int argc, char **argv)
{
	char *end;
	long p;

	if (argc != 3) {
		fprintf(stderr, "usage: heapprof-inject PID LIBRARY\n");
		return 64;
	}
	p = strtol(argv[1], &end, 10);
	if (*end || p <= 0 || p > INT_MAX) {
		fprintf(stderr, "%s: '%s' is not a process id\n", me, argv[1]);
		return 64;
	}
	pid = (pid_t)p;
	return attach(argv[2]);
}
