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
#include "snapshot_elf.h"
#include "snapshot_threads.h"
#include "util.h"

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
	    snap_elf_is_scratch(v->start, v->end))
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
	    starts(v->path, "[v") || snap_elf_is_scratch(v->start, v->end) ||
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
		snap_elf_note_status(nb, j, j->tid, j->regs, true);
		w[++n] = (uint32_t)j->tid | (j->at_call ? HP_THREAD_AT_CALL : 0);
	}
	for (uint32_t i = 0; t && i < t->n; i++) {
		const struct snap_thread *th = &t->t[i];
		elf_gregset_t regs;

		regs_listed(regs, th, th->tid == j->pid && !th->tp ? snap_threads_main_tp() : th->tp);
		snap_elf_note_status(nb, j, th->tid, regs, n == 0);
		w[++n] = (uint32_t)th->tid | (th->state == SNAP_T_RUNS ? HP_THREAD_NO_REGS : 0);
	}
	w[0] = n;
	if (t && snap_threads_complete(t))
		snap_elf_note_of(nb, HP_NOTE_OWNER, HP_NOTE_THREADS, w, (n + 1) * sizeof(*w));
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
	return snap_elf_slurp(path, len, 256 << 20);
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
	if (!(w = snap_elf_grab((1 + max * HP_RESIDENT_WORDS) * sizeof(*w))))
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
			e[0] = snap_elf_hex(&p);
			p++;
			e[1] = snap_elf_hex(&p);
			e[2] = e[3] = 0;
		} else if (e && starts(line, "Rss:")) {
			e[2] = dec(line + 4) * 1024;
		} else if (e && starts(line, "Swap:")) {
			e[3] = dec(line + 5) * 1024;
		}
		line = eol ? eol + 1 : NULL;
	}
	w[0] = count;
	snap_elf_note_of(nb, HP_NOTE_OWNER, HP_NOTE_RESIDENT, w, (1 + count * HP_RESIDENT_WORDS) * sizeof(*w));
}

/* ---- writing ---------------------------------------------------------------------- */

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
			while (i < n && snap_elf_zero_page(base + i, page))
				i += page;
			run = i;
			while (run < n && !snap_elf_zero_page(base + run, page) && run - i < most)
				run += page;
		} else {
			run = i + (n - i > most ? most : n - i);
		}
		if (run == i)
			continue;
		err = snap_elf_pwrite(fd, base + i, run - i, off + i);
		if (err == EFAULT) {
			for (; i < run; i += page)
				if (snap_elf_pwrite(fd, base + i, page, off + i) == 0)
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
	maps = snap_elf_slurp("/proc/self/maps", &len, 64 << 20);
	if (!maps || !len) {
		snap_elf_say(j, maps ? EIO : errno, "cannot read /proc/self/maps: ", 0, 0);
		return maps ? EIO : errno;
	}
	auxv = snap_elf_slurp("/proc/self/auxv", &auxv_len, 1 << 16);
	if (!auxv) {
		snap_elf_say(j, errno, "cannot read /proc/self/auxv: ", 0, 0);
		return errno;
	}
	n = 1;
	for (size_t i = 0; i < len; i++)
		n += maps[i] == '\n';
	if (!(v = snap_elf_grab(n * sizeof(*v)))) {
		snap_elf_say(j, ENOMEM, "", 0, 0);
		return ENOMEM;
	}
	n = snap_elf_maps(maps, v, n);
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
	if (!(nb.p = snap_elf_grab(nb.max))) {
		snap_elf_say(j, ENOMEM, "", 0, 0);
		return ENOMEM;
	}
	if (!(words = snap_elf_grab(((j->threads ? j->threads->n : 0) + 2) * sizeof(*words)))) {
		snap_elf_say(j, ENOMEM, "", 0, 0);
		return ENOMEM;
	}
	note_threads(&nb, j, words);
	snap_elf_note_psinfo(&nb, j);
	snap_elf_note(&nb, NT_AUXV, auxv, auxv_len);
	snap_elf_note_files(&nb, v, n, page);
	snap_elf_note_time(&nb, j);
	if (smaps && smaps_len)
		note_resident(&nb, smaps, smaps_len);
	err = snap_elf_headers(j, v, n, &nb, page, nload, &end);
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
		snap_elf_say(j, err, "cannot write: ", 0, 0);
		return err;
	}
	if ((err = snap_elf_publish(j))) {
		snap_elf_say(j, err, "cannot name it: ", 0, 0);
		return err;
	}
	if (!j->quiet)
		snap_elf_say(j, 0, NULL, end, data);
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

void snap_core_ids(struct snap_job *j, const ucontext_t *uc)
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
}

void snap_core_prepare(struct snap_job *j, const ucontext_t *uc)
{
	snap_core_ids(j, uc);
	j->threads = snap_threads_list(j->tid, j->own_tid, &j->threads_len);
}

void snap_core_forked(struct snap_job *j)
{
	if (j->threads)
		snap_threads_recheck(j->threads, j->tid, j->own_tid, j->threads_len);
	j->threads = NULL;	/* the writer has its own mapping of it; ours is gone */
}
