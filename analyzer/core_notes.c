/*
 * NT_PRSTATUS notes (see core_notes.h). struct elf_prstatus is the same on every Linux
 * machine up to pr_reg: siginfo (3 ints), pr_cursig (short, padded), sigpend and
 * sighold (longs), pid/ppid/pgrp/sid (ints), four timevals (2 longs each); so pr_reg
 * starts at 112 on a 64-bit target and at 72 on a 32-bit one. After pr_reg comes
 * pr_fpvalid (an int, padded to a long). What pr_reg holds is the machine's: the
 * index of the stack pointer is known for x86_64, i386 and aarch64; everywhere else
 * the whole area is still scanned as words.
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "core_notes.h"
#include "image.h"
#include "rd.h"
#include "util.h"

#define EM_X86_64_ 62
#define EM_386_ 3
#define EM_AARCH64_ 183

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
	if (machine == EM_X86_64_ && wsize == 8)
		return 19;	/* user_regs_struct: r15 .. rip cs eflags rsp */
	if (machine == EM_386_ && wsize == 4)
		return 15;	/* user_regs_struct: ... eip xcs eflags esp */
	if (machine == EM_AARCH64_ && wsize == 8)
		return 31;	/* x0..x30, sp, pc, pstate */
	return -1;
}

static void add_thread(const struct image *img, const unsigned char *desc, size_t len,
		       struct core_threads *out)
{
	unsigned w = img->wsize;
	size_t reg_off = w == 8 ? 112 : 72, pid_off = w == 8 ? 32 : 24;
	size_t end = len >= reg_off + w ? len - w : len;	/* pr_fpvalid, padded */
	struct core_thread t = { 0 };
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
	out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
	out->v[out->n++] = t;
}

typedef void (*note_fn)(const struct image *img, const unsigned char *desc, size_t len,
			void *arg);

/* Call fn for each "CORE" note of type type in every PT_NOTE segment. */
static void each_note(const struct image *img, unsigned type, note_fn fn, void *arg)
{
	size_t nph;

	if (!img->elf || elf_getphdrnum(img->elf, &nph) != 0)
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getphdr(img->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(img->elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!d)
			continue;
		while (off < d->d_size && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != type || nh.n_namesz != 5 ||
			    memcmp((const char *)d->d_buf + name_off, "CORE", 5))
				continue;
			fn(img, (const unsigned char *)d->d_buf + desc_off, nh.n_descsz, arg);
		}
	}
}

static void add_thread_note(const struct image *img, const unsigned char *desc, size_t len,
			    void *arg)
{
	add_thread(img, desc, len, arg);
}

void core_threads_read(const struct image *img, struct core_threads *out)
{
	memset(out, 0, sizeof(*out));
	each_note(img, NT_PRSTATUS, add_thread_note, out);
}

/* NT_FILE: count and page size, count (start, end, page offset) words, then count names. */
static void add_files(const struct image *img, const unsigned char *desc, size_t len, void *arg)
{
	struct core_files *out = arg;
	unsigned w = img->wsize;
	uint64_t count, page;
	const char *p, *end = (const char *)desc + len;

	out->present = true;
	if (out->n || len < 2 * w)
		return;		/* one list is the core's; a second would be a forgery */
	count = word_at(desc, w, img->big_endian);
	page = word_at(desc + w, w, img->big_endian);
	if (count > (len / w - 2) / 3 || page > (1u << 30))
		return;
	out->page = page;
	out->v = xcalloc(count ? count : 1, sizeof(*out->v));
	p = (const char *)desc + (2 + 3 * count) * w;
	for (uint64_t i = 0; i < count && p < end; i++) {
		const unsigned char *e = desc + (2 + 3 * i) * w;
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		struct core_file *f = &out->v[out->n];

		if (!nul)
			break;
		f->start = word_at(e, w, img->big_endian);
		f->end = word_at(e + w, w, img->big_endian);
		if (__builtin_mul_overflow(word_at(e + 2 * w, w, img->big_endian), page, &f->offset) ||
		    f->end < f->start)
			break;
		f->name = p;
		out->n++;
		p = nul + 1;
	}
}

void core_files_read(const struct image *img, struct core_files *out)
{
	memset(out, 0, sizeof(*out));
	each_note(img, NT_FILE, add_files, out);
}

void core_files_free(struct core_files *f)
{
	free(f->v);
	memset(f, 0, sizeof(*f));
}

void core_threads_free(struct core_threads *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].regs);
	free(t->v);
	memset(t, 0, sizeof(*t));
}
