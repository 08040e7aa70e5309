/*
 * The program's threads for a snapshot (see snapshot_threads.h): /proc/self/task lists
 * them, TID/syscall says where a thread waiting in the kernel stands, TID/schedstat
 * whether it ran between two readings. snapshot.c calls the readings around its fork;
 * snapshot_core.c writes what they found.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "snapshot_threads.h"
#include "util.h"

#define SLACK 256		/* threads a list has room for beyond those it found */
#define TCB_BYTES 2304		/* glibc x86-64's thread descriptor, at least */
#define TCB_ALIGN_MAX 8192	/* static TLS alignment it may sit below the top by */

static uint64_t main_tp;	/* the main thread's descriptor, from start-up */
static int tid_off = -1;	/* where a descriptor holds its thread id, -1: unknown */

/* ---- the descriptors (x86-64 glibc: the first and third words point at it) --------- */

static bool is_tcb(uint64_t pd)
{
#if defined(__x86_64__) && defined(__GLIBC__)
	const uint64_t *w = (const uint64_t *)(uintptr_t)pd;

	return pd && w[0] == pd && w[2] == pd;
#else
	(void)pd;
	return false;
#endif
}

/* The first offset past the descriptor's header words at which pd holds tid. */
static int offset_of(uint64_t pd, int32_t tid, int from)
{
	for (int off = from; off + 4 <= TCB_BYTES; off += 4) {
		int32_t v;

		memcpy(&v, (const char *)(uintptr_t)pd + off, 4);
		if (v == tid)
			return off;
	}
	return -1;
}

/*
 * The thread id's place in a descriptor, learned from two whose ids are known: the
 * caller's (its id) and the main thread's (the process id). The first offset where
 * both agree; with the main thread alone, its first match past the header's small
 * counters (a process id of 1 could pass for one of them).
 */
static void learn_tid_off(uint64_t own_tp, int32_t own_tid, int32_t pid)
{
	tid_off = -1;
	if (!is_tcb(own_tp))
		return;
	for (int off = offset_of(own_tp, own_tid, 24); off >= 0;
	     off = offset_of(own_tp, own_tid, off + 4)) {
		int32_t v = 0;

		if (own_tid != pid && is_tcb(main_tp))
			memcpy(&v, (const char *)(uintptr_t)main_tp + off, 4);
		if (own_tid == pid ? off >= 64 : v == pid) {
			tid_off = off;
			return;
		}
	}
}

void snap_threads_init(void)
{
	main_tp = (uint64_t)(uintptr_t)pthread_self();
}

void snap_threads_after_fork(void)
{
	main_tp = (uint64_t)(uintptr_t)pthread_self();
}

uint64_t snap_threads_main_tp(void)
{
	return main_tp;
}

bool snap_threads_tp_known(void)
{
	return tid_off >= 0;
}

bool snap_threads_complete(const struct snap_threads *t)
{
	/* where descriptors sit on stacks, each must be told a live or a dead one's */
#if defined(__x86_64__) && defined(__GLIBC__)
	if (tid_off < 0)
		return false;
#endif
	return t->complete;
}

int snap_threads_find_tp(struct snap_threads *t, uint64_t start, uint64_t end)
{
	uint64_t hi, pd;
	int32_t tid;

	if (end - start < TCB_BYTES + TCB_ALIGN_MAX + 4096)
		return 0;
	hi = (end - TCB_BYTES) & ~(uint64_t)15;
	for (pd = hi; pd >= hi - TCB_ALIGN_MAX && !is_tcb(pd); pd -= 16)
		;
	if (pd < hi - TCB_ALIGN_MAX)
		return 0;
	if (tid_off < 0)
		return 2;
	memcpy(&tid, (const char *)(uintptr_t)pd + tid_off, 4);
	for (uint32_t i = 0; t && tid > 0 && i < t->n; i++)
		if (t->t[i].tid == tid) {
			t->t[i].tp = pd;
			return 1;
		}
	return 2;
}

/* ---- reading /proc ------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

/* dir/tid/name into buf (NUL-terminated); its length, or -1. */
static ssize_t read_task(int dir, int32_t tid, const char *name, char *buf, size_t size)
{
	char path[48];
	ssize_t n = 0, r;
	int fd;

	memcpy(hp_utoa(path, (uint64_t)tid), "/", 2);
	memcpy(path + strlen(path), name, strlen(name) + 1);
	fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((r = read(fd, buf + n, size - 1 - (size_t)n)) > 0)
		n += r;
	close(fd);
	buf[n] = 0;
	return r < 0 ? -1 : n;
}

static uint64_t number(const char **s)
{
	uint64_t v = 0;
	bool neg = false;

	while (**s == ' ')
		(*s)++;
	if (**s == '-') {
		neg = true;
		(*s)++;
	}
	if ((*s)[0] == '0' && (*s)[1] == 'x') {
		for (*s += 2;; (*s)++) {
			char c = **s;

			if (c >= '0' && c <= '9')
				v = v * 16 + (uint64_t)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v = v * 16 + (uint64_t)(c - 'a' + 10);
			else
				break;
		}
	} else {
		for (; **s >= '0' && **s <= '9'; (*s)++)
			v = v * 10 + (uint64_t)(**s - '0');
	}
	return neg ? (uint64_t)0 - v : v;
}

/* "NR A1 .. A6 SP PC" (in a system call), "-1 SP PC" (stopped outside one), "running" */
static void parse_syscall(struct snap_thread *th, const char *s)
{
	uint64_t w[9];
	int n = 0;

	th->state = SNAP_T_RUNS;
	while (n < 9 && *s && *s != '\n' && ((*s >= '0' && *s <= '9') || *s == '-' || *s == ' ')) {
		w[n++] = number(&s);
		while (*s == ' ')
			s++;
	}
	if (n == 9) {
		th->nr = w[0];
		memcpy(th->args, &w[1], sizeof(th->args));
		th->sp = w[7];
		th->pc = w[8];
	} else if (n == 3 && w[0] == (uint64_t)-1) {
		th->nr = w[0];
		memset(th->args, 0, sizeof(th->args));
		th->sp = w[1];
		th->pc = w[2];
	} else {
		return;
	}
	th->state = th->sp ? SNAP_T_STILL : SNAP_T_RUNS;
}

/*
 * What says whether a thread ran since the last reading: its run count and time
 * (schedstat), or without schedstats its context switches (status). Returns its hash,
 * 0 when neither can be read.
 */
static uint64_t run_stamp(int dir, int32_t tid)
{
	char buf[4096];
	uint64_t h = 0xcbf29ce484222325ull;
	ssize_t n = read_task(dir, tid, "schedstat", buf, 256);

	if (n > 0)
		return fnv(h, buf, (size_t)n);
	n = read_task(dir, tid, "status", buf, sizeof(buf));
	for (const char *p = buf; n > 0 && (p = strstr(p, "ctxt_switches:")); p++)
		h = fnv(h, p, strcspn(p, "\n"));
	return n > 0 ? h : 0;
}

/* The first reading: where the thread stands (its syscall line) and, if it waits in
 * the kernel, its run stamp. */
static void read_first(int dir, struct snap_thread *th)
{
	char buf[256];

	th->state = SNAP_T_RUNS;
	if (read_task(dir, th->tid, "syscall", buf, sizeof(buf)) <= 0)
		return;
	parse_syscall(th, buf);
	if (th->state == SNAP_T_STILL && !(th->stamp = run_stamp(dir, th->tid)))
		th->state = SNAP_T_RUNS;	/* nothing to tell a move by */
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Call fn(t, tid) for every thread in /proc/self/task; the count, or -1. */
static long each_task(int dir, struct snap_threads *t, void (*fn)(struct snap_threads *, int32_t))
{
	char buf[4096] __attribute__((aligned(8)));
	long count = 0, n;

	if (lseek(dir, 0, SEEK_SET) < 0)
		return -1;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
			const char *s = d->d_name;

			off += d->d_reclen;
			if (*s < '1' || *s > '9')
				continue;
			count++;
			if (fn)
				fn(t, (int32_t)number(&s));
		}
	return n < 0 ? -1 : count;
}

static pid_t skip_a, skip_b;	/* under the snapshot lock: the caller, heapprof's */

static struct snap_thread *find(struct snap_threads *t, int32_t tid)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->t[i].tid == tid)
			return &t->t[i];
	return NULL;
}

static void add(struct snap_threads *t, int32_t tid)
{
	if (tid == skip_a || tid == skip_b || find(t, tid))
		return;
	if (t->n == t->cap) {
		t->complete = 0;
		return;
	}
	t->t[t->n].tid = tid;
	t->t[t->n].state = SNAP_T_RUNS;
	t->n++;
}

static int open_tasks(void)
{
	return open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

struct snap_threads *snap_threads_list(pid_t caller, pid_t skip, size_t *len)
{
	int dir = open_tasks();
	struct snap_threads *t;
	long count;
	void *p;

	if (dir < 0)
		return NULL;
	count = each_task(dir, NULL, NULL);
	*len = sizeof(*t) + (size_t)(count + SLACK) * sizeof(t->t[0]);
	p = count < 0 ? MAP_FAILED : hp_sys_mmap(NULL, *len, MAP_SHARED);
	if (p == MAP_FAILED) {
		close(dir);
		return NULL;
	}
	t = p;
	t->cap = (uint32_t)(count + SLACK);
	t->complete = 1;
	skip_a = caller;
	skip_b = skip;
	if (each_task(dir, t, add) < 0)
		t->complete = 0;
	for (uint32_t i = 0; i < t->n; i++)
		read_first(dir, &t->t[i]);
	close(dir);
	learn_tid_off((uint64_t)(uintptr_t)pthread_self(), (int32_t)caller, (int32_t)getpid());
	return t;
}

void snap_threads_recheck(struct snap_threads *t, pid_t caller, pid_t skip, size_t len)
{
	int dir = open_tasks();

	skip_a = caller;
	skip_b = skip;
	/* a thread that has not run since cannot stand elsewhere */
	for (uint32_t i = 0; i < t->n; i++)
		if (t->t[i].state == SNAP_T_STILL &&
		    (dir < 0 || run_stamp(dir, t->t[i].tid) != t->t[i].stamp))
			t->t[i].state = SNAP_T_RUNS;
	/* one made between the list and the fork is in the copy: listed, as running */
	if (dir < 0 || each_task(dir, t, add) < 0)
		t->complete = 0;
	if (dir >= 0)
		close(dir);
	__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
	hp_sys_munmap(t, len);
}

void snap_threads_wait(struct snap_threads *t)
{
	struct timespec nap = { 0, 100000 };

	for (int i = 0; i < 10000 && !__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE); i++)
		nanosleep(&nap, NULL);
	if (__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE))
		return;
	for (uint32_t i = 0; i < t->n; i++)
		t->t[i].state = SNAP_T_RUNS;
	t->complete = 0;
}
