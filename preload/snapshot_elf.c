/*
 * The pieces of an ELF core both snapshot writers use (snapshot_core.c forks a copy of
 * the process and writes its memory; snapshot_lean.c writes heapprof's records and the
 * sampled blocks' headers from the process itself): scratch memory, /proc's files,
 * notes, the headers, the file's name. Async-signal-safe: system calls, no malloc.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "snapshot_elf.h"
#include "util.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

extern const ElfW(Ehdr) __ehdr_start;	/* our own header: the machine we run on */

/* The writer's own scratch memory: shared mappings, which never merge with the
 * program's and are left out of the core by their exact range. */
#define MAX_SCRATCH 32
static struct { void *p; size_t len; } scratch[MAX_SCRATCH];
static unsigned n_scratch;

void *snap_elf_grab(size_t len)
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

bool snap_elf_is_scratch(uint64_t start, uint64_t end)
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

void snap_elf_release(void)
{
	while (n_scratch) {
		n_scratch--;
		hp_sys_munmap(scratch[n_scratch].p, scratch[n_scratch].len);
	}
}

/* A whole /proc file into scratch memory; NULL on failure, *len its size. The buffer
 * grows as the file is read, to max at most: what the writer maps counts against the
 * process's limit (RLIMIT_AS, a cgroup) as the process's own memory does. */
char *snap_elf_slurp(const char *path, size_t *len, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t size = max < (64u << 10) ? max : 64u << 10;
	char *buf, *more;
	ssize_t r;

	*len = 0;
	if (fd < 0)
		return NULL;	/* errno from open */
	if (!(buf = snap_elf_grab(size))) {
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

uint64_t snap_elf_hex(const char **s)
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
size_t snap_elf_maps(char *text, struct vma *v, size_t max)
{
	size_t n = 0;

	for (char *line = text; *line && n < max;) {
		char *eol = strchr(line, '\n');
		const char *s = line;

		if (eol)
			*eol = 0;
		v[n].start = snap_elf_hex(&s);
		s++;
		v[n].end = snap_elf_hex(&s);
		s++;
		memcpy(v[n].perms, s, 4);
		v[n].perms[4] = 0;
		s += 5;
		v[n].pgoff = snap_elf_hex(&s);
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

void snap_elf_note_of(struct notes *nb, const char *owner, uint32_t type, const void *desc,
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

void snap_elf_note(struct notes *nb, uint32_t type, const void *desc, size_t size)
{
	snap_elf_note_of(nb, "CORE", type, desc, size);
}

/* HP_NOTE_TIME: the moment of the copy, so that the analyzer's "now" is the snapshot's
 * and not the newest block's (a program may sleep a long while after its last one). */
void snap_elf_note_time(struct notes *nb, const struct snap_job *j)
{
	uint64_t w[HP_TIME_WORDS] = { j->at_mono_ns, j->at_real_ns };

	snap_elf_note_of(nb, HP_NOTE_OWNER, HP_NOTE_TIME, w, sizeof(w));
}

void snap_elf_note_status(struct notes *nb, const struct snap_job *j, pid_t tid,
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
	snap_elf_note(nb, NT_PRSTATUS, &st, sizeof(st));
}

void snap_elf_note_psinfo(struct notes *nb, const struct snap_job *j)
{
	struct elf_prpsinfo ps;
	size_t len;
	char *cmd = snap_elf_slurp("/proc/self/cmdline", &len, 1 << 16);
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
	snap_elf_note(nb, NT_PRPSINFO, &ps, sizeof(ps));
}

static bool in_file_note(const struct vma *v)
{
	return v->path[0] == '/' && !snap_elf_is_scratch(v->start, v->end);
}

/* NT_FILE: count, page size, (start, end, offset in pages) each, then the names. */
void snap_elf_note_files(struct notes *nb, const struct vma *v, size_t n, uint64_t page)
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
	if (!(w = snap_elf_grab(size)))
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
	snap_elf_note(nb, NT_FILE, w, size);
}

int snap_elf_pwrite(int fd, const void *buf, size_t len, uint64_t off)
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

bool snap_elf_zero_page(const unsigned char *p, uint64_t page)
{
	const uint64_t *w = (const uint64_t *)p;

	for (uint64_t i = 0; i < page / 8; i++)
		if (w[i])
			return false;
	return true;
}

int snap_elf_publish(const struct snap_job *j)
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

void snap_elf_say(const struct snap_job *j, int err, const char *what, uint64_t size,
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
		hp_line_add(&l, j->lean ? "' written (lean): " : "' written: ");
		hp_line_num(&l, size);
		hp_line_add(&l, " bytes, ");
		hp_line_num(&l, data);
		hp_line_add(&l, " of them data, in ");
		hp_line_ns(&l, hp_clock_ns() - j->t0_ns);
	}
	hp_line_say(&l);
}

uint64_t snap_elf_notes_at(size_t nload)
{
	size_t phnum = 1 + nload;

	return sizeof(ElfW(Ehdr)) + phnum * sizeof(ElfW(Phdr)) +
	       (phnum >= PN_XNUM ? sizeof(ElfW(Shdr)) : 0);
}

/* Offsets: ELF header, program headers, (section 0 past 65535 segments), notes, data. */
int snap_elf_headers(const struct snap_job *j, const struct vma *v, size_t n,
			 const struct notes *nb, uint64_t page, size_t nload, uint64_t *end)
{
	size_t phnum = 1 + nload, hsize = sizeof(ElfW(Ehdr)) + phnum * sizeof(ElfW(Phdr));
	bool xnum = phnum >= PN_XNUM;
	uint64_t shoff = hsize, notes_off = snap_elf_notes_at(nload), off;
	ElfW(Ehdr) eh;
	ElfW(Phdr) *ph;
	size_t k = 1;
	int err;

	if (!(ph = snap_elf_grab(phnum * sizeof(*ph))))
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
			.p_filesz = v[i].dump, .p_memsz = v[i].dump,
			.p_align = v[i].dump % page ? 8 : page,	/* a lean one's headers */
			.p_flags = (v[i].perms[0] == 'r' ? PF_R : 0) |
				   (v[i].perms[1] == 'w' ? PF_W : 0) |
				   (v[i].perms[2] == 'x' ? PF_X : 0),
		};
		off += v[i].dump;
	}
	*end = off;
	if ((err = snap_elf_pwrite(j->fd, &eh, sizeof(eh), 0)) ||
	    (err = snap_elf_pwrite(j->fd, ph, phnum * sizeof(*ph), sizeof(eh))))
		return err;
	if (xnum) {
		ElfW(Shdr) sh;

		memset(&sh, 0, sizeof(sh));
		sh.sh_info = (ElfW(Word))phnum;	/* the real count */
		if ((err = snap_elf_pwrite(j->fd, &sh, sizeof(sh), shoff)))
			return err;
	}
	return snap_elf_pwrite(j->fd, nb->p, nb->n, notes_off);
}
