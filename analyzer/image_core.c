/*
 * The ELF core reader (kernel cores, gcore's, heapprof's snapshots): every PT_LOAD's
 * file bytes become a segment, read in place from a mapping of the file, and the notes
 * report threads, mapped files, auxv and (snapshots) resident memory into the image.
 * The only file that parses an ELF core; image_open.c hands it a plain file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "image.h"
#include "image_int.h"
#include "rd.h"
#include "util.h"

static int segs_from_phdrs(struct image *img, const unsigned char *raw, size_t raw_len,
			   size_t phnum, char *err, size_t errlen)
{
	img->segs = calloc(phnum ? phnum : 1, sizeof(*img->segs));
	if (!img->segs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		uint64_t have;

		if (!gelf_getphdr(img->dwfl_core, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_filesz < ph.p_memsz) {
			img->missing_bytes += ph.p_memsz - ph.p_filesz;
			img->missing_segs++;
		}
		have = ph.p_offset >= raw_len ? 0 : raw_len - ph.p_offset;
		if (have < ph.p_filesz) {
			img->truncated_segs++;
			img->missing_bytes += ph.p_filesz - have;
		} else {
			have = ph.p_filesz;
		}
		if (have == 0 || ph.p_vaddr + have < ph.p_vaddr)
			continue;
		img->segs[img->nsegs++] = (struct seg){ ph.p_vaddr, have, raw + ph.p_offset,
							true, img->fd, ph.p_offset, NULL,
							ph.p_flags && !(ph.p_flags & PF_W) };
	}
	return image_sort_segs(img, err, errlen);
}

static int check_header(struct image *img, const char *path, char *err, size_t errlen)
{
	GElf_Ehdr eh;

	if (elf_kind(img->dwfl_core) != ELF_K_ELF || !gelf_getehdr(img->dwfl_core, &eh)) {
		snprintf(err, errlen, "'%s' is not an ELF file", path);
		return -1;
	}
	if (eh.e_type != ET_CORE) {
		snprintf(err, errlen, "'%s' is an ELF file but not a core (%s)", path,
			 eh.e_type == ET_EXEC || eh.e_type == ET_DYN ?
				 "an executable or library: PROGRAM goes first, then CORE" :
				 "unexpected ELF type");
		return -1;
	}
	img->wsize = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	img->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	img->machine = eh.e_machine;
	return 0;
}

/*
 * Our own read-only mapping of the core, for the segments' data: libelf's is its own
 * business, and ours has no byte that libelf might have converted in place.
 */
static const unsigned char *map_file(struct image *img, int fd, size_t *len)
{
	struct stat st;
	void *map;

	if (fstat(fd, &st) < 0 || st.st_size <= 0)
		return NULL;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return NULL;
	img->raws = xcalloc(1, sizeof(*img->raws));
	img->raws[0] = (struct raw_map){ map, (size_t)st.st_size, img->path, -1 };
	img->nraws = 1;
	*len = (size_t)st.st_size;
	return map;
}

/* ---- notes: threads, mapped files, auxv, residency ---- */

/*
 * NT_PRSTATUS: struct elf_prstatus is the same on every Linux machine up to pr_reg:
 * siginfo (3 ints), pr_cursig (short, padded), sigpend and sighold (longs),
 * pid/ppid/pgrp/sid (ints), four timevals (2 longs each); so pr_reg starts at 112 on a
 * 64-bit target and at 72 on a 32-bit one. After pr_reg comes pr_fpvalid (an int,
 * padded to a long). What pr_reg holds is the machine's: the stack pointer's index is
 * known for x86_64, i386 and aarch64; everywhere else the whole area is still kept.
 */
static uint64_t word_at(const unsigned char *p, unsigned wsize, bool be)
{
	uint64_t v = 0;

	if (wsize == 8) {
		memcpy(&v, p, 8);
		if (be != host_big_endian())
			v = __builtin_bswap64(v);
	} else {
		uint32_t w;

		memcpy(&w, p, 4);
		if (be != host_big_endian())
			w = __builtin_bswap32(w);
		v = w;
	}
	return v;
}

/* Index of the stack pointer in pr_reg, or -1. */
static int sp_index(uint16_t machine, unsigned wsize)
{
	if (machine == EM_X86_64 && wsize == 8)
		return 19;	/* user_regs_struct: r15 .. rip cs eflags rsp */
	if (machine == EM_386 && wsize == 4)
		return 15;	/* user_regs_struct: ... eip xcs eflags esp */
	if (machine == EM_AARCH64 && wsize == 8)
		return 31;	/* x0..x30, sp, pc, pstate */
	return -1;
}

static void add_thread(struct image *img, const unsigned char *desc, size_t len)
{
	unsigned w = img->wsize;
	size_t reg_off = w == 8 ? 112 : 72, pid_off = w == 8 ? 32 : 24;
	size_t end = len >= reg_off + w ? len - w : len;	/* pr_fpvalid, padded */
	struct image_thread t = { 0 };
	int spi = sp_index(img->machine, w);
	uint32_t pid;

	if (len < reg_off + w)
		return;
	memcpy(&pid, desc + pid_off, 4);
	t.tid = img->big_endian != host_big_endian() ? __builtin_bswap32(pid) : pid;
	t.nregs = (unsigned)((end - reg_off) / w);
	t.regs = xmalloc((t.nregs ? t.nregs : 1) * sizeof(*t.regs));
	for (unsigned i = 0; i < t.nregs; i++)
		t.regs[i] = word_at(desc + reg_off + (size_t)i * w, w, img->big_endian);
	if (spi >= 0 && (unsigned)spi < t.nregs) {
		t.have_sp = true;
		t.sp = t.regs[spi];
	}
	/* user_regs_struct: ... rsp ss fs_base: the thread pointer on x86_64 */
	if (img->machine == EM_X86_64 && w == 8 && t.nregs > 21 && t.regs[21]) {
		t.have_tls = true;
		t.tls = t.regs[21];
	}
	img->threads = xrealloc(img->threads, (img->nthreads + 1) * sizeof(*img->threads));
	img->threads[img->nthreads++] = t;
}

/* NT_ARM_TLS follows its thread's NT_PRSTATUS: tpidr_el0 first. */
static void add_arm_tls(struct image *img, const unsigned char *desc, size_t len)
{
	struct image_thread *t = img->nthreads ? &img->threads[img->nthreads - 1] : NULL;

	if (!t || t->have_tls || len < 8 || img->machine != EM_AARCH64)
		return;
	t->tls = word_at(desc, 8, img->big_endian);
	t->have_tls = t->tls != 0;
}

/* NT_FILE: count and page size, count (start, end, page offset) words, then count names. */
static void add_files(struct image *img, const unsigned char *desc, size_t len)
{
	unsigned w = img->wsize;
	uint64_t count, page;
	const char *p, *end = (const char *)desc + len;

	if (img->have_files || len < 2 * w)
		return;		/* one list is the core's; a second would be a forgery */
	img->have_files = true;
	count = word_at(desc, w, img->big_endian);
	page = word_at(desc + w, w, img->big_endian);
	/* every name, as libdwfl would read them: it may open() each */
	if (count <= (len / w) / 3) {
		img->file_names = xcalloc(count ? count : 1, sizeof(*img->file_names));
		p = (const char *)desc + (2 + 3 * count) * w;
		for (uint64_t i = 0; i < count && p < end; i++) {
			const char *nul = memchr(p, '\0', (size_t)(end - p));

			if (!nul)
				break;
			img->file_names[img->nfile_names++] = p;
			p = nul + 1;
		}
	}
	if (count > (len / w - 2) / 3 || page > (1u << 30))
		return;
	img->file_page = page;
	img->files = xcalloc(count ? count : 1, sizeof(*img->files));
	p = (const char *)desc + (2 + 3 * count) * w;
	for (uint64_t i = 0; i < count && p < end; i++) {
		const unsigned char *e = desc + (2 + 3 * i) * w;
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		struct image_file *f = &img->files[img->nfiles];

		if (!nul)
			break;
		f->start = word_at(e, w, img->big_endian);
		f->end = word_at(e + w, w, img->big_endian);
		if (__builtin_mul_overflow(word_at(e + 2 * w, w, img->big_endian), page, &f->offset) ||
		    f->end < f->start)
			break;
		f->name = p;
		img->nfiles++;
		p = nul + 1;
	}
}

#define AT_ENTRY_ 9
#define AT_SYSINFO_EHDR_ 33
#define AT_EXECFN_ 31

/*
 * NT_PRPSINFO: four chars, pr_flag (a long, aligned), pr_uid and pr_gid, then pr_pid
 * (an int). The ids are unsigned ints but on i386 and 32-bit ARM, where they are
 * unsigned shorts: pr_pid at 24 on a 64-bit target, 12 or 16 on a 32-bit one.
 */
static void add_psinfo(struct image *img, const unsigned char *desc, size_t len)
{
	size_t at = img->wsize == 8 ? 24 : img->machine == EM_386 || img->machine == EM_ARM ? 12 : 16;

	if (len >= at + 4)
		img->pid = (uint32_t)word_at(desc + at, 4, img->big_endian);
}

static void add_auxv(struct image *img, const unsigned char *desc, size_t len)
{
	unsigned w = img->wsize;

	if (img->have_auxv)
		return;
	img->have_auxv = true;
	for (size_t off = 0; off + 2 * w <= len; off += 2 * w) {
		uint64_t type = word_at(desc + off, w, img->big_endian);
		uint64_t val = word_at(desc + off + w, w, img->big_endian);

		if (type == AT_ENTRY_)
			img->at_entry = val;
		else if (type == AT_SYSINFO_EHDR_)
			img->at_vdso = val;
		else if (type == AT_EXECFN_)
			img->at_execfn = val;
	}
}

/* The snapshot note (heapprof_format.h): resident bytes per mapping. */
static void add_resident(struct image *img, const unsigned char *desc, size_t len)
{
	uint64_t count;

	if (img->resident || len < 8)
		return;
	count = word_at(desc, 8, img->big_endian);
	if (count > (len - 8) / (HP_RESIDENT_WORDS * 8))
		return;
	img->resident = xcalloc(count ? count : 1, sizeof(*img->resident));
	for (uint64_t i = 0; i < count; i++) {
		const unsigned char *e = desc + 8 + i * HP_RESIDENT_WORDS * 8;
		struct image_resident r = { word_at(e, 8, img->big_endian),
					    word_at(e + 8, 8, img->big_endian),
					    word_at(e + 16, 8, img->big_endian),
					    word_at(e + 24, 8, img->big_endian) };

		if (r.end <= r.start || r.rss > r.end - r.start ||
		    r.swap > r.end - r.start - r.rss ||
		    (img->nresident && r.start < img->resident[img->nresident - 1].end))
			continue;
		img->resident[img->nresident++] = r;
	}
}

/*
 * HP_NOTE_THREADS (heapprof_format.h): the snapshot lists every thread; each one's
 * flags. False when it does not match the NT_PRSTATUS notes read (then no flag is
 * taken either).
 */
static bool add_listed(struct image *img, const unsigned char *desc, size_t len)
{
	if (!desc || len < 8 || word_at(desc, 8, img->big_endian) != img->nthreads ||
	    (len - 8) / 8 < img->nthreads)
		return false;
	for (size_t t = 0; t < img->nthreads; t++)
		if ((uint32_t)word_at(desc + 8 + 8 * t, 8, img->big_endian) != img->threads[t].tid)
			return false;
	for (size_t t = 0; t < img->nthreads; t++) {
		uint64_t w = word_at(desc + 8 + 8 * t, 8, img->big_endian);

		img->threads[t].at_call = (w & HP_THREAD_AT_CALL) != 0;
		if (w & HP_THREAD_NO_REGS)
			img->threads[t].have_sp = false;
	}
	return true;
}

static bool owner_is(const GElf_Nhdr *nh, const char *name, const char *want)
{
	return nh->n_namesz == strlen(want) + 1 && !memcmp(name, want, nh->n_namesz);
}

/* Every note of every PT_NOTE segment, each to the reader of its owner and type. */
static void read_notes(struct image *img)
{
	bool gdb = false, heapprof = false, fpregs = false;
	const unsigned char *listed = NULL;	/* HP_NOTE_THREADS' descriptor */
	size_t listed_len = 0, nph;

	if (elf_getphdrnum(img->dwfl_core, &nph) != 0)
		nph = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getphdr(img->dwfl_core, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(img->dwfl_core, (int64_t)ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (!d)
			continue;
		while (off < d->d_size && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const char *name = (const char *)d->d_buf + name_off;
			const unsigned char *desc = (const unsigned char *)d->d_buf + desc_off;

			gdb |= owner_is(&nh, name, "GDB");
			if (owner_is(&nh, name, HP_NOTE_OWNER) && nh.n_type == HP_NOTE_RESIDENT) {
				heapprof = true;
				add_resident(img, desc, nh.n_descsz);
			}
			if (owner_is(&nh, name, HP_NOTE_OWNER) && nh.n_type == HP_NOTE_TIME &&
			    nh.n_descsz >= HP_TIME_WORDS * 8) {
				img->taken_mono_ns = word_at(desc, 8, img->big_endian);
				img->taken_real_ns = word_at(desc + 8, 8, img->big_endian);
			}
			if (owner_is(&nh, name, HP_NOTE_OWNER) && nh.n_type == HP_NOTE_LEAN) {
				heapprof = img->lean = true;
				if (nh.n_descsz >= 8)
					img->lean_headers = word_at(desc, 8, img->big_endian);
			}
			if (owner_is(&nh, name, HP_NOTE_OWNER) && nh.n_type == HP_NOTE_THREADS) {
				listed = desc;
				listed_len = nh.n_descsz;
			}
			if (owner_is(&nh, name, "LINUX") && nh.n_type == NT_ARM_TLS)
				add_arm_tls(img, desc, nh.n_descsz);
			if (!owner_is(&nh, name, "CORE"))
				continue;
			fpregs |= nh.n_type == NT_FPREGSET;
			if (nh.n_type == NT_PRSTATUS)
				add_thread(img, desc, nh.n_descsz);
			else if (nh.n_type == NT_FILE)
				add_files(img, desc, nh.n_descsz);
			else if (nh.n_type == NT_AUXV)
				add_auxv(img, desc, nh.n_descsz);
			else if (nh.n_type == NT_PRPSINFO)
				add_psinfo(img, desc, nh.n_descsz);
		}
	}
	/* the kernel and gdb write every thread (and its floating-point registers, which
	 * heapprof's snapshots leave out); a snapshot says whether it did */
	img->threads_complete = (fpregs && !heapprof) || add_listed(img, listed, listed_len);
	if (!heapprof)
		img->resident_why = gdb ? "gcore core" : "core not written by heapprof";
	else if (!img->resident)
		img->resident_why = img->lean ? "lean snapshot" : "damaged note";
}

bool image_core_claims(const unsigned char *head, size_t len)
{
	return len >= 4 && !memcmp(head, "\177ELF", 4);
}

int image_core_read(struct image *img, int fd, char *err, size_t errlen)
{
	const char *path = img->path;
	const unsigned char *raw;
	size_t raw_len, phnum;

	elf_version(EV_CURRENT);
	img->segs_name = "segments of the core";
	img->seg_name = "segment";
	img->dwfl_core = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!img->dwfl_core) {
		snprintf(err, errlen, "cannot read '%s': %s", path, elf_errmsg(-1));
		return -1;
	}
	if (check_header(img, path, err, errlen) < 0)
		return -1;
	if (elf_getphdrnum(img->dwfl_core, &phnum) != 0 || !(raw = map_file(img, fd, &raw_len))) {
		snprintf(err, errlen, "cannot read the program headers of '%s': %s (truncated core?)",
			 path, elf_errmsg(-1));
		return -1;
	}
	if (segs_from_phdrs(img, raw, raw_len, phnum, err, errlen) < 0)
		return -1;
	read_notes(img);
	return 0;
}
