/*
 * A snapshot's bytes: an ELF core of this process as the forked writer sees it. One
 * PT_NOTE (NT_PRSTATUS of the thread that asked, NT_PRPSINFO, NT_AUXV, NT_FILE, and
 * heapprof's time, threads and resident-memory notes, heapprof_format.h) and a
 * PT_LOAD per mapping kept, zero pages of anonymous memory left as holes (as the
 * kernel's cores do). Compact keeps what the analyzer reads: the private writable
 * mappings (heap, anonymous memory, heapprof's tables, modules' data) and each
 * module's ELF header page; full adds every other readable mapping but program text.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "snapshot_core.h"
#include "snapshot_threads.h"
#include "util.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

extern const ElfW(Ehdr) __ehdr_start;	/* our own header: the machine we run on */

struct vma {
	uint64_t start, end, pgoff;
	const char *path;	/* "" for anonymous memory */
	char perms[5];
	uint64_t dump;		/* bytes kept from start: 0, the header page or all */
	bool holes;		/* anonymous: zero pages may stay holes */
};

/* The writer's own scratch memory: shared mappings, which never merge with the
 * program's and are left out of the core by their exact range. */
#define MAX_SCRATCH 12
static struct { void *p; size_t len; } scratch[MAX_SCRATCH];
static unsigned n_scratch;

static void *grab(size_t len)
{
	void *p;

	if (n_scratch == MAX_SCRATCH)
		return NULL;
	/* the writer: maps.c's lock may be held by a thread of the copied process */
	p = hp_sys_mmap(NULL, len, MAP_SHARED);
	if (p == MAP_FAILED)
		return NULL;
	scratch[n_scratch].p = p;
	scratch[n_scratch++].len = len;
	return p;
}

static bool is_scratch(uint64_t start, uint64_t end)
{
	for (unsigned i = 0; i < n_scratch; i++)
		if ((uintptr_t)scratch[i].p == start && start + scratch[i].len == end)
			return true;
	return false;
}

/* Scratch memory p (from grab) made len bytes long, in a new place; NULL on failure
 * (p stays as it was). Not mremap: a shared anonymous mapping grown so has no pages
 * past its first size (SIGBUS). */
static void *regrab(void *p, size_t len)
{
	for (unsigned i = 0; i < n_scratch; i++) {
		void *q;

		if (scratch[i].p != p)
			continue;
		q = hp_sys_mmap(NULL, len, MAP_SHARED);
		if (q == MAP_FAILED)
			return NULL;
		memcpy(q, p, scratch[i].len < len ? scratch[i].len : len);
		hp_sys_munmap(p, scratch[i].len);
		scratch[i].p = q;
		scratch[i].len = len;
		return q;
	}
	return NULL;
}

/* A whole /proc file into scratch memory; NULL on failure, *len its size. The buffer
 * grows as the file is read, to max at most: what the writer maps counts against the
 * process's limit (RLIMIT_AS, a cgroup) as the process's own memory does. */
static char *slurp(const char *path, size_t *len, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t size = max < (64u << 10) ? max : 64u << 10;
	char *buf, *more;
	ssize_t r;

	*len = 0;
	if (fd < 0)
		return NULL;	/* errno from open */
	if (!(buf = grab(size))) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	for (;;) {
		r = read(fd, buf + *len, size - 1 - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
		if (*len < size - 1 || size == max)
			continue;
		more = regrab(buf, size * 2 < max ? size * 2 : max);
		if (!more)
			break;	/* what was read so far */
		buf = more;
		size = size * 2 < max ? size * 2 : max;
	}
	close(fd);
	buf[*len] = 0;
	return buf;
}

static uint64_t hex(const char **s)
{
	uint64_t v = 0;

	for (;; (*s)++) {
		char c = **s;

		if (c >= '0' && c <= '9')
			v = v * 16 + (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uint64_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* "start-end perms offset dev inode   path" per line; the lines are cut in place. */
static size_t parse_maps(char *text, struct vma *v, size_t max)
{
	size_t n = 0;

	for (char *line = text; *line && n < max;) {
		char *eol = strchr(line, '\n');
		const char *s = line;

		if (eol)
			*eol = 0;
		v[n].start = hex(&s);
		s++;
		v[n].end = hex(&s);
		s++;
		memcpy(v[n].perms, s, 4);
		v[n].perms[4] = 0;
		s += 5;
		v[n].pgoff = hex(&s);
		for (int field = 0; field < 2 && *s; field++) {	/* dev, inode */
			while (*s == ' ')
				s++;
			while (*s && *s != ' ')
				s++;
		}
		while (*s == ' ')
			s++;
		v[n].path = s;
		n++;
		if (!eol)
			break;
		line = eol + 1;
	}
	return n;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * What of v goes into the core (v->dump, v->holes). next: the mapping after it, or
 * NULL. A module's read-only mapping just below its writable one is its RELRO part,
 * written by the loader: the dynamic section's DT_DEBUG (the way to the link_map)
 * lives there, so it is kept whole.
 */
static void choose(struct vma *v, const struct vma *next, bool full, uint64_t page)
{
	bool relro = next && v->path[0] == '/' && v->pgoff && next->start == v->end &&
		     !strcmp(v->perms, "r--p") && !strcmp(next->perms, "rw-p") &&
		     !strcmp(v->path, next->path);

	bool file = v->path[0] == '/', anon = !file && !starts(v->path, "[v");
	bool priv = v->perms[3] == 'p', writable = v->perms[1] == 'w';

	v->dump = 0;
	v->holes = !file;
	if (v->perms[0] != 'r' || starts(v->path, "[vvar") || starts(v->path, "[vsyscall]") ||
	    is_scratch(v->start, v->end))
		return;
	/* device memory may not read like memory: only shared memory files are safe */
	if (starts(v->path, "/dev/") && !starts(v->path, "/dev/shm/") &&
	    !starts(v->path, "/dev/zero"))
		return;
	if (!strcmp(v->path, "[vdso]") || relro || (priv && writable && strcmp(v->path, "[stack]")) ||
	    (full && (writable || anon)))
		v->dump = v->end - v->start;
	else if (file && v->pgoff == 0)
		v->dump = page;	/* the ELF header: modules are found by it */
}

/*
 * A thread stack choose() left out (compact leaves out the main thread's [stack]): its
 * used part, from the lowest stack pointer known in it (the caller's, or that of a
 * thread waiting in the kernel; less the red zone a leaf may use, unless it is where
 * the caller called a function) up, so that what a live frame holds is a root for
 * --leaks. Whole when the main thread's stack pointer is not known (it ran around
 * the fork): its frames are somewhere in it.
 */
static void keep_stacks(struct vma *v, const struct snap_job *j, uint64_t page)
{
	const struct snap_threads *t = j->threads;
	bool main_stack = !strcmp(v->path, "[stack]"), whole = false;
	uint64_t low = UINT64_MAX, from;

	if (v->dump || v->perms[0] != 'r' || v->perms[1] != 'w' || v->perms[3] != 'p' ||
	    v->path[0] == '/')
		return;
	if (j->sp >= v->start && j->sp < v->end)
		low = j->at_call ? j->sp : j->sp - 128;
	for (uint32_t i = 0; t && i < t->n; i++) {
		const struct snap_thread *th = &t->t[i];

		if (th->state == SNAP_T_STILL && th->sp >= v->start && th->sp < v->end &&
		    th->sp - 128 < low)
			low = th->sp - 128 > v->start ? th->sp - 128 : v->start;
		else if (th->state == SNAP_T_RUNS && th->tid == j->pid && main_stack)
			whole = true;
	}
	/* without the list, the main thread stands somewhere on it unless it is the caller */
	if (!t && main_stack && j->tid != j->pid)
		whole = true;
	if (!whole && low == UINT64_MAX)
		return;
	from = low & ~(page - 1);
	if (!whole && from > v->start)
		v->start = from;
	v->dump = v->end - v->start;
	v->holes = true;
}

/* Memory of heapprof's own: its thread's stack, and the list of threads it shares
 * with this writer. */
static bool is_ours(const struct vma *v, const struct snap_job *j)
{
	return (j->own_hi && v->start >= j->own_lo && v->end <= j->own_hi) ||
	       (j->threads && v->start == (uintptr_t)j->threads);
}

/* An anonymous private writable mapping may be a thread's stack: whose thread it is
 * goes to the thread's NT_PRSTATUS (its thread pointer). */
static void find_thread(const struct vma *v, struct snap_job *j)
{
	if (j->threads && v->dump && v->perms[1] == 'w' && v->perms[3] == 'p' && !v->path[0])
		snap_threads_find_tp(j->threads, v->start, v->end);
}

/*
 * Anonymous private memory the program made unreadable (mprotect PROT_NONE: guard
 * pages, a pool it fences off) still holds blocks: kept, as the kernel's cores keep
 * it, from the first to the last resident page, read through our own copy of the
 * mapping made readable (the writer is a fork: the program's protection stays).
 * mincore() bounds the range, so a reservation never touched costs nothing; pages
 * swapped out are missed. mincore's cost is a byte per page, so mappings past
 * UNREADABLE_MAX (a sanitizer's shadow gap spans terabytes) are left out.
 */
#define UNREADABLE_MAX (1ull << 30)
static void keep_unreadable(struct vma *v, uint64_t page)
{
	unsigned char vec[4096];
	uint64_t first = 0, last = 0;

	if (v->dump || v->perms[0] == 'r' || v->perms[3] != 'p' || v->path[0] == '/' ||
	    starts(v->path, "[v") || is_scratch(v->start, v->end) ||
	    v->end - v->start > UNREADABLE_MAX)
		return;
	for (uint64_t a = v->start; a < v->end;) {
		uint64_t len = v->end - a < sizeof(vec) * page ? v->end - a : sizeof(vec) * page;

		if (mincore((void *)(uintptr_t)a, len, vec) < 0)
			return;
		for (uint64_t i = 0; i < len / page; i++)
			if (vec[i] & 1) {
				if (!first)
					first = a + i * page;
				last = a + (i + 1) * page;
			}
		a += len;
	}
	if (!first || mprotect((void *)(uintptr_t)first, last - first, PROT_READ) < 0)
		return;
	v->start = first;
	v->end = last;
	v->dump = last - first;
	v->holes = true;
}

/* ---- notes ------------------------------------------------------------------------ */

struct notes {
	unsigned char *p;
	size_t n, max;
};

static void note_of(struct notes *nb, const char *owner, uint32_t type, const void *desc,
		    size_t size)
{
	size_t namesz = strlen(owner) + 1, name4 = (namesz + 3) & ~(size_t)3;
	ElfW(Nhdr) h = { (uint32_t)namesz, (uint32_t)size, type };
	size_t need = sizeof(h) + name4 + ((size + 3) & ~(size_t)3);

	if (nb->n + need > nb->max)
		return;
	memcpy(nb->p + nb->n, &h, sizeof(h));
	memset(nb->p + nb->n + sizeof(h), 0, name4);
	memcpy(nb->p + nb->n + sizeof(h), owner, namesz);
	memcpy(nb->p + nb->n + sizeof(h) + name4, desc, size);
	nb->n += need;
}

static void note(struct notes *nb, uint32_t type, const void *desc, size_t size)
{
	note_of(nb, "CORE", type, desc, size);
}

/* HP_NOTE_TIME: the moment of the copy, so that the analyzer's "now" is the snapshot's
 * and not the newest block's (a program may sleep a long while after its last one). */
static void note_time(struct notes *nb, const struct snap_job *j)
{
	uint64_t w[HP_TIME_WORDS] = { j->at_mono_ns, j->at_real_ns };

	note_of(nb, HP_NOTE_OWNER, HP_NOTE_TIME, w, sizeof(w));
}

static void note_status(struct notes *nb, const struct snap_job *j, pid_t tid,
			const elf_gregset_t regs, bool first)
{
	struct elf_prstatus st;

	memset(&st, 0, sizeof(st));
	if (first)
		st.pr_info.si_signo = st.pr_cursig = (short)j->cursig;
	st.pr_pid = tid;
	st.pr_ppid = j->ppid;
	st.pr_pgrp = j->pgrp;
	st.pr_sid = j->sid;
	memcpy(&st.pr_reg, regs, sizeof(st.pr_reg));
	note(nb, NT_PRSTATUS, &st, sizeof(st));
}

/* A listed thread's registers, in the kernel's layout: those /proc gave for a thread
 * waiting in the kernel (its system call's arguments, stack pointer and program
 * counter), none for one that ran; its thread pointer if known. */
static void regs_listed(elf_gregset_t out, const struct snap_thread *th, uint64_t tp)
{
	memset(out, 0, sizeof(elf_gregset_t));
#if defined(__x86_64__)
	if (th->state == SNAP_T_STILL) {
		/* rdi rsi rdx r10 r8 r9: the system call's arguments */
		static const int arg[6] = { 14, 13, 12, 7, 9, 8 };

		for (int i = 0; i < 6; i++)
			out[arg[i]] = th->args[i];
		out[15] = th->nr;	/* orig_rax */
		out[16] = th->pc;
		out[19] = th->sp;
	}
	out[17] = 0x33;		/* user cs and ss */
	out[20] = 0x2b;
	out[21] = tp;		/* fs_base */
#elif defined(__aarch64__)
	(void)tp;
	if (th->state == SNAP_T_STILL) {
		memcpy(out, th->args, sizeof(th->args));	/* x0-x5 */
		out[31] = th->sp;
		out[32] = th->pc;
	}
#else
	(void)th;
	(void)tp;
#endif
}

/*
 * NT_PRSTATUS per thread: the caller first (a program thread: the signal's context,
 * the caller of the API), then the others as /proc listed them (the main thread
 * first, as the kernel writes them). With a complete list, HP_NOTE_THREADS says so.
 */
static void note_threads(struct notes *nb, const struct snap_job *j, uint64_t *w)
{
	const struct snap_threads *t = j->threads;
	uint64_t n = 0;

	if (j->caller_listed || !t) {
		note_status(nb, j, j->tid, j->regs, true);
		w[++n] = (uint32_t)j->tid | (j->at_call ? HP_THREAD_AT_CALL : 0);
	}
	for (uint32_t i = 0; t && i < t->n; i++) {
		const struct snap_thread *th = &t->t[i];
		elf_gregset_t regs;

		regs_listed(regs, th, th->tid == j->pid && !th->tp ? snap_threads_main_tp() : th->tp);
		note_status(nb, j, th->tid, regs, n == 0);
		w[++n] = (uint32_t)th->tid | (th->state == SNAP_T_RUNS ? HP_THREAD_NO_REGS : 0);
	}
	w[0] = n;
	if (t && snap_threads_complete(t))
		note_of(nb, HP_NOTE_OWNER, HP_NOTE_THREADS, w, (n + 1) * sizeof(*w));
}

static void note_psinfo(struct notes *nb, const struct snap_job *j)
{
	struct elf_prpsinfo ps;
	size_t len;
	char *cmd = slurp("/proc/self/cmdline", &len, 1 << 16);
	const char *base;

	memset(&ps, 0, sizeof(ps));
	ps.pr_sname = 'R';
	ps.pr_pid = j->pid;
	ps.pr_ppid = j->ppid;
	ps.pr_pgrp = j->pgrp;
	ps.pr_sid = j->sid;
	ps.pr_uid = getuid();
	ps.pr_gid = getgid();
	if (cmd && len) {
		base = strrchr(cmd, '/');
		base = base ? base + 1 : cmd;
		memcpy(ps.pr_fname, base, strnlen(base, sizeof(ps.pr_fname) - 1));
		for (size_t i = 0; i + 1 < len; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		memcpy(ps.pr_psargs, cmd, len < sizeof(ps.pr_psargs) ? len : sizeof(ps.pr_psargs) - 1);
	}
	note(nb, NT_PRPSINFO, &ps, sizeof(ps));
}

static bool in_file_note(const struct vma *v)
{
	return v->path[0] == '/' && !is_scratch(v->start, v->end);
}

/* NT_FILE: count, page size, (start, end, offset in pages) each, then the names. */
static void note_files(struct notes *nb, const struct vma *v, size_t n, uint64_t page)
{
	size_t count = 0, names = 0, size;
	unsigned long *w;
	char *s;

	for (size_t i = 0; i < n; i++)
		if (in_file_note(&v[i])) {
			count++;
			names += strlen(v[i].path) + 1;
		}
	size = (2 + 3 * count) * sizeof(long) + names;
	if (!(w = grab(size)))
		return;
	w[0] = count;
	w[1] = page;
	s = (char *)(w + 2 + 3 * count);
	count = 0;
	for (size_t i = 0; i < n; i++) {
		if (!in_file_note(&v[i]))
			continue;
		w[2 + 3 * count] = v[i].start;
		w[3 + 3 * count] = v[i].end;
		w[4 + 3 * count] = v[i].pgoff / page;
		count++;
		memcpy(s, v[i].path, strlen(v[i].path) + 1);
		s += strlen(v[i].path) + 1;
	}
	note(nb, NT_FILE, w, size);
}

/* Decimal digits at *s, skipping leading blanks. */
static uint64_t dec(const char *s)
{
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	return v;
}

/* /proc/PID/smaps of the program (pid), not of this writer: a fork copies the page
 * tables of anonymous memory only, so the writer's own Rss of a file mapping would
 * be short of the program's. */
static char *read_smaps(pid_t pid, size_t *len)
{
	char path[40] = "/proc/";

	memcpy(hp_utoa(path + strlen(path), (uint64_t)pid), "/smaps", sizeof("/smaps"));
	return slurp(path, len, 256 << 20);
}

/*
 * The resident note (heapprof_format.h): per mapping of smaps, its range, Rss and Swap
 * in bytes. Entries are words in our byte order, the target's. Left out when smaps
 * cannot be read; the analyzer then says residency was not recorded.
 */
static void note_resident(struct notes *nb, char *smaps, size_t len)
{
	size_t count = 0, max = 1;
	uint64_t *w, *e = NULL;

	for (size_t i = 0; i < len; i++)
		max += smaps[i] == '\n';
	max = max / 4 + 1;	/* a mapping takes many more lines than 4 */
	if (!(w = grab((1 + max * HP_RESIDENT_WORDS) * sizeof(*w))))
		return;
	for (char *line = smaps; line && *line;) {
		char *eol = strchr(line, '\n');
		const char *p = line;

		if (eol)
			*eol = 0;
		if ((*line >= '0' && *line <= '9') || (*line >= 'a' && *line <= 'f')) {
			if (count == max)
				break;
			e = &w[1 + count++ * HP_RESIDENT_WORDS];
			e[0] = hex(&p);
			p++;
			e[1] = hex(&p);
			e[2] = e[3] = 0;
		} else if (e && starts(line, "Rss:")) {
			e[2] = dec(line + 4) * 1024;
		} else if (e && starts(line, "Swap:")) {
			e[3] = dec(line + 5) * 1024;
		}
		line = eol ? eol + 1 : NULL;
	}
	w[0] = count;
	note_of(nb, HP_NOTE_OWNER, HP_NOTE_RESIDENT, w, (1 + count * HP_RESIDENT_WORDS) * sizeof(*w));
}

/* ---- writing ---------------------------------------------------------------------- */

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t w = pwrite(fd, buf, len > (1u << 30) ? (1u << 30) : len, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		buf = (const char *)buf + w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static bool zero_page(const unsigned char *p, uint64_t page)
{
	const uint64_t *w = (const uint64_t *)p;

	for (uint64_t i = 0; i < page / 8; i++)
		if (w[i])
			return false;
	return true;
}

/*
 * A light writer's pages of the file go to the disk and out of the page cache a run
 * behind the one it writes: the page cache a process's writes fill counts against its
 * memory cgroup, and dirty pages are slow to take back. len 0: the last run's.
 */
#define LIGHT_RUN ((uint64_t)4 << 20)
static void settle(int fd, uint64_t off, uint64_t len)
{
	static uint64_t prev_off, prev_len;

	if (len)
		sync_file_range(fd, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
	if (prev_len) {
		sync_file_range(fd, (off_t)prev_off, (off_t)prev_len,
				SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
					SYNC_FILE_RANGE_WAIT_AFTER);
		posix_fadvise(fd, (off_t)prev_off, (off_t)prev_len, POSIX_FADV_DONTNEED);
	}
	prev_off = off;
	prev_len = len;
}

/* A mapping's kept bytes at off: runs of non-zero pages; a page that cannot be read
 * (a file mapping past its file's end) stays a hole, as zeros. light: runs of
 * LIGHT_RUN at most, each settled. */
static int write_vma(int fd, const struct vma *v, uint64_t off, uint64_t page, bool light,
		     uint64_t *data)
{
	uint64_t most = light ? LIGHT_RUN : 64u << 20;
	const unsigned char *base = (const unsigned char *)(uintptr_t)v->start;
	uint64_t i = 0, n = v->dump;

	while (i < n) {
		uint64_t run = i;
		int err;

		if (v->holes) {
			while (i < n && zero_page(base + i, page))
				i += page;
			run = i;
			while (run < n && !zero_page(base + run, page) && run - i < most)
				run += page;
		} else {
			run = i + (n - i > most ? most : n - i);
		}
		if (run == i)
			continue;
		err = pwrite_all(fd, base + i, run - i, off + i);
		if (err == EFAULT) {
			for (; i < run; i += page)
				if (pwrite_all(fd, base + i, page, off + i) == 0)
					*data += page;
			continue;
		}
		if (err)
			return err;
		if (light)
			settle(fd, off + i, run - i);
		*data += run - i;
		i = run;
	}
	return 0;
}

static int publish(const struct snap_job *j)
{
	if (syscall(SYS_renameat2, AT_FDCWD, j->tmp, AT_FDCWD, j->final, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return errno;
	/* a file system without RENAME_NOREPLACE: link() never replaces either */
	if (link(j->tmp, j->final) < 0)
		return errno;
	unlink(j->tmp);
	return 0;
}

static void say(const struct snap_job *j, int err, const char *what, uint64_t size,
		uint64_t data)
{
	struct hp_line l = { .n = 0 };

	hp_line_add(&l, "snapshot '");
	hp_line_add(&l, j->final);
	if (err) {
		hp_line_add(&l, "' failed: ");
		hp_line_add(&l, what);
		hp_line_add(&l, hp_strerror(err));
	} else {
		hp_line_add(&l, "' written: ");
		hp_line_num(&l, size);
		hp_line_add(&l, " bytes, ");
		hp_line_num(&l, data);
		hp_line_add(&l, " of them data, in ");
		hp_line_ns(&l, hp_clock_ns() - j->t0_ns);
	}
	hp_line_say(&l);
}

/* Offsets: ELF header, program headers, (section 0 past 65535 segments), notes, data. */
static int write_headers(const struct snap_job *j, const struct vma *v, size_t n,
			 const struct notes *nb, uint64_t page, size_t nload, uint64_t *end)
{
	size_t phnum = 1 + nload, hsize = sizeof(ElfW(Ehdr)) + phnum * sizeof(ElfW(Phdr));
	bool xnum = phnum >= PN_XNUM;
	uint64_t shoff = hsize, notes_off = hsize + (xnum ? sizeof(ElfW(Shdr)) : 0), off;
	ElfW(Ehdr) eh;
	ElfW(Phdr) *ph;
	size_t k = 1;
	int err;

	if (!(ph = grab(phnum * sizeof(*ph))))
		return ENOMEM;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, __ehdr_start.e_ident, EI_NIDENT);
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_ident[EI_ABIVERSION] = 0;
	eh.e_type = ET_CORE;
	eh.e_machine = __ehdr_start.e_machine;
	eh.e_version = EV_CURRENT;
	eh.e_flags = __ehdr_start.e_flags;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ElfW(Phdr));
	eh.e_phnum = xnum ? PN_XNUM : (ElfW(Half))phnum;
	if (xnum) {
		eh.e_shoff = shoff;
		eh.e_shentsize = sizeof(ElfW(Shdr));
		eh.e_shnum = 1;
	}
	ph[0] = (ElfW(Phdr)){ .p_type = PT_NOTE, .p_offset = notes_off, .p_filesz = nb->n,
			      .p_align = 4 };
	off = (notes_off + nb->n + page - 1) & ~(page - 1);
	for (size_t i = 0; i < n; i++) {
		if (!v[i].dump)
			continue;
		ph[k++] = (ElfW(Phdr)){
			.p_type = PT_LOAD, .p_offset = off, .p_vaddr = v[i].start,
			.p_filesz = v[i].dump, .p_memsz = v[i].dump, .p_align = page,
			.p_flags = (v[i].perms[0] == 'r' ? PF_R : 0) |
				   (v[i].perms[1] == 'w' ? PF_W : 0) |
				   (v[i].perms[2] == 'x' ? PF_X : 0),
		};
		off += v[i].dump;
	}
	*end = off;
	if ((err = pwrite_all(j->fd, &eh, sizeof(eh), 0)) ||
	    (err = pwrite_all(j->fd, ph, phnum * sizeof(*ph), sizeof(eh))))
		return err;
	if (xnum) {
		ElfW(Shdr) sh;

		memset(&sh, 0, sizeof(sh));
		sh.sh_info = (ElfW(Word))phnum;	/* the real count */
		if ((err = pwrite_all(j->fd, &sh, sizeof(sh), shoff)))
			return err;
	}
	return pwrite_all(j->fd, nb->p, nb->n, notes_off);
}

int snap_core_write(struct snap_job *j)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), off, end = 0, data = 0;
	size_t len, n, nload = 0, auxv_len, smaps_len = 0;
	struct notes nb = { 0 };
	char *maps, *auxv, *smaps;
	uint64_t *words;
	struct vma *v;
	int err = 0;

	/* A process that made itself non-dumpable has its /proc files owned by root; the
	 * writer, a process of its own, may take them back (the file it writes holds the
	 * same memory, and is readable by the owner alone) */
	if (access("/proc/self/auxv", R_OK) < 0)
		prctl(PR_SET_DUMPABLE, 1);
	maps = slurp("/proc/self/maps", &len, 64 << 20);
	if (!maps || !len) {
		say(j, maps ? EIO : errno, "cannot read /proc/self/maps: ", 0, 0);
		return maps ? EIO : errno;
	}
	auxv = slurp("/proc/self/auxv", &auxv_len, 1 << 16);
	if (!auxv) {
		say(j, errno, "cannot read /proc/self/auxv: ", 0, 0);
		return errno;
	}
	n = 1;
	for (size_t i = 0; i < len; i++)
		n += maps[i] == '\n';
	if (!(v = grab(n * sizeof(*v)))) {
		say(j, ENOMEM, "", 0, 0);
		return ENOMEM;
	}
	n = parse_maps(maps, v, n);
	if (j->threads)
		snap_threads_wait(j->threads);	/* the process's second reading */
	for (size_t i = 0; i < n; i++) {
		choose(&v[i], i + 1 < n ? &v[i + 1] : NULL, j->full, page);
		if (is_ours(&v[i], j)) {
			v[i].dump = 0;
			continue;
		}
		keep_stacks(&v[i], j, page);
		keep_unreadable(&v[i], page);
		find_thread(&v[i], j);
		if (v[i].dump > v[i].end - v[i].start)
			v[i].dump = v[i].end - v[i].start;
		nload += v[i].dump != 0;
	}
	/* residency as near the fork as can be: before the data is written */
	smaps = read_smaps(j->pid, &smaps_len);
	nb.max = 4096 + auxv_len + len * 2 + (smaps ? smaps_len / 2 : 0) +
		 (j->threads ? j->threads->n + 1 : 1) * (sizeof(struct elf_prstatus) + 40);
	if (!(nb.p = grab(nb.max))) {
		say(j, ENOMEM, "", 0, 0);
		return ENOMEM;
	}
	if (!(words = grab(((j->threads ? j->threads->n : 0) + 2) * sizeof(*words)))) {
		say(j, ENOMEM, "", 0, 0);
		return ENOMEM;
	}
	note_threads(&nb, j, words);
	note_psinfo(&nb, j);
	note(&nb, NT_AUXV, auxv, auxv_len);
	note_files(&nb, v, n, page);
	note_time(&nb, j);
	if (smaps && smaps_len)
		note_resident(&nb, smaps, smaps_len);
	err = write_headers(j, v, n, &nb, page, nload, &end);
	off = end;
	for (size_t i = n; !err && i-- > 0;) {	/* backwards: offsets were given forwards */
		if (!v[i].dump)
			continue;
		off -= v[i].dump;
		err = write_vma(j->fd, &v[i], off, page, j->light, &data);
	}
	if (j->light)
		settle(j->fd, 0, 0);
	if (!err && ftruncate(j->fd, (off_t)end) < 0)
		err = errno;
	if (err) {
		say(j, err, "cannot write: ", 0, 0);
		return err;
	}
	if ((err = publish(j))) {
		say(j, err, "cannot name it: ", 0, 0);
		return err;
	}
	if (!j->quiet)
		say(j, 0, NULL, end, data);
	return 0;
}

/* ---- in the parent ---------------------------------------------------------------- */

/* The caller's registers in the layout of the kernel's NT_PRSTATUS. */
static void regs_from(elf_gregset_t out, const ucontext_t *uc)
{
	memset(out, 0, sizeof(elf_gregset_t));
	if (!uc)
		return;
#if defined(__x86_64__)
	{
		const greg_t *g = uc->uc_mcontext.gregs;
		/* struct user_regs_struct's order, from ucontext's REG_* */
		static const signed char from[27] = {
			REG_R15, REG_R14, REG_R13, REG_R12, REG_RBP, REG_RBX, REG_R11, REG_R10,
			REG_R9, REG_R8, REG_RAX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, -1 /* orig_rax */,
			REG_RIP, -1 /* cs */, REG_EFL, REG_RSP, -1 /* ss */, -1, -1, -1, -1, -1, -1,
		};
		unsigned long fs_base = 0;

		for (int i = 0; i < 27; i++)
			out[i] = from[i] >= 0 ? (elf_greg_t)g[from[i]] : 0;
		out[15] = (elf_greg_t)-1;
		/* getcontext leaves cs unwritten (zero in ours): the user code segment */
		out[17] = (elf_greg_t)(g[REG_CSGSFS] & 0xffff ? g[REG_CSGSFS] & 0xffff : 0x33);
		out[20] = 0x2b;	/* user SS: not in a ucontext */
		syscall(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, &fs_base);
		out[21] = fs_base;
	}
#elif defined(__aarch64__)
	/* regs[31], sp, pc, pstate: the same order in both */
	memcpy(out, &uc->uc_mcontext.regs, 34 * sizeof(elf_greg_t));
#endif
}

void snap_core_prepare(struct snap_job *j, const ucontext_t *uc)
{
	j->pid = getpid();
	j->tid = (pid_t)syscall(SYS_gettid);
	j->ppid = getppid();
	j->pgrp = getpgrp();
	j->sid = getsid(0);
	j->caller_listed = j->tid != j->own_tid;
	regs_from(j->regs, uc);
#if defined(__x86_64__)
	j->sp = uc ? (uint64_t)uc->uc_mcontext.gregs[REG_RSP] : 0;
#elif defined(__aarch64__)
	j->sp = uc ? uc->uc_mcontext.sp : 0;
#else
	j->sp = 0;
#endif
	if (!j->caller_listed)
		j->sp = 0;	/* heapprof's own thread: its stack is no program's */
	j->threads = snap_threads_list(j->tid, j->own_tid, &j->threads_len);
}

void snap_core_forked(struct snap_job *j)
{
	if (j->threads)
		snap_threads_recheck(j->threads, j->tid, j->own_tid, j->threads_len);
	j->threads = NULL;	/* the writer has its own mapping of it; ours is gone */
}
