/*
 * A dump's modules from the files it lists as mapped (img->files), reported to libdwfl with no
 * file opened by name: dwfl_core_file_report would open() each name itself, blocking
 * on one swapped for a FIFO. A module's bounds and build-id come from its ELF headers
 * in the core's memory; its file is opened later, once, by sym_find_elf.
 */
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "sym_dwfl.h"

#define SYM_HDR_BYTES 4096	/* ELF and program headers read from memory: one page */
#define SYM_NOTE_BYTES 4096	/* a PT_NOTE read from memory for the build-id */
#define SYM_MAX_MODULE (1ull << 40)	/* a module's span: beyond it, the headers are bad */

struct span {
	uint64_t lo, hi;
};

struct placed {			/* what the headers say of one module */
	uint64_t lo, hi;	/* its address range in the target */
	uint64_t bias;
	unsigned char id[SYM_MAX_BUILD_ID];
	size_t idlen;
	uint64_t id_vaddr;
	bool exec;		/* ET_EXEC: loaded where it was linked */
};

/* Bounds and bias from the program headers of elf, mapped from offset 0 at start. */
static bool place(Elf *elf, uint64_t start, uint64_t page, struct placed *p)
{
	size_t phnum;
	bool found = false;
	uint64_t end;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* as libdwfl: the segment that maps the file's first page sets the bias */
		if (!found && (ph.p_offset & ~(page - 1)) == 0) {
			p->bias = start - (ph.p_vaddr & ~(page - 1));
			found = true;
		}
		if (__builtin_add_overflow(ph.p_vaddr, ph.p_memsz, &end))
			return false;	/* headers from a core are input: never trusted */
		if (end > p->hi)
			p->hi = end;
	}
	if (!found)
		return false;
	p->lo = start;
	p->hi += p->bias;	/* modulo 2^64, as the target's addresses wrap */
	return p->hi > p->lo && p->hi - p->lo <= SYM_MAX_MODULE;
}

static uint32_t u32_at(const unsigned char *b, bool be)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return be != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) ? __builtin_bswap32(v) : v;
}

/* The GNU build-id among the notes at vaddr (bias applied), if the core holds them. */
static void mem_build_id(const struct image *img, uint64_t vaddr, uint64_t size, struct placed *p)
{
	unsigned char b[SYM_NOTE_BYTES];
	size_t n = size < sizeof(b) ? (size_t)size : sizeof(b), off = 0;

	if (!image_read(img, vaddr, b, n))
		return;
	while (off + 12 <= n) {
		uint32_t namesz = u32_at(b + off, img->big_endian);
		uint32_t descsz = u32_at(b + off + 4, img->big_endian);
		uint32_t type = u32_at(b + off + 8, img->big_endian);
		size_t name = off + 12, desc = name + ((namesz + 3u) & ~3u);

		if (namesz > n || descsz > n || desc + descsz > n)
			return;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(b + name, "GNU", 4) &&
		    descsz && descsz <= SYM_MAX_BUILD_ID) {
			memcpy(p->id, b + desc, descsz);
			p->idlen = descsz;
			p->id_vaddr = vaddr + desc;
			return;
		}
		off = desc + ((descsz + 3u) & ~3u);
	}
}

/*
 * The module whose first page the core holds at start: 1 if placed, 0 if that page is
 * no ELF header (a data file), -1 if the core lacks it.
 */
static int place_from_memory(const struct image *img, uint64_t start, uint64_t page,
			     struct placed *p)
{
	unsigned char b[SYM_HDR_BYTES];
	bool is64, ok;
	size_t phnum;
	Elf *elf;

	if (!image_read(img, start, b, sizeof(b)))
		return -1;
	if (memcmp(b, ELFMAG, SELFMAG))
		return 0;
	/* headers only: no section headers to look for past the page */
	is64 = b[EI_CLASS] == ELFCLASS64;
	memset(b + (is64 ? 0x28 : 0x20), 0, is64 ? 8 : 4);	/* e_shoff */
	memset(b + (is64 ? 0x3c : 0x30), 0, 4);		/* e_shnum, e_shstrndx */
	elf = elf_memory((char *)b, sizeof(b));
	ok = elf && elf_kind(elf) == ELF_K_ELF && place(elf, start, page, p);
	if (ok) {
		GElf_Ehdr eh;

		p->exec = gelf_getehdr(elf, &eh) && eh.e_type == ET_EXEC;
	}
	if (ok && elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum && !p->idlen; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_NOTE)
				mem_build_id(img, p->bias + ph.p_vaddr, ph.p_filesz, p);
		}
	}
	elf_end(elf);
	return ok ? 1 : 0;
}

static bool overlaps(const struct span *v, size_t n, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < n; i++)
		if (lo < v[i].hi && v[i].lo < hi)
			return true;
	return false;
}

/* The vDSO, which NT_FILE does not list (it has no file): from its image in the core. */
static void report_vdso(struct sym *s, const struct image *img, uint64_t addr, uint64_t page)
{
	struct placed p = { 0 };
	Dwfl_Module *mod;

	if (!addr || place_from_memory(img, addr, page, &p) <= 0)
		return;
	mod = dwfl_report_module(s->dwfl, SYM_VDSO, p.lo, p.hi);
	if (mod && p.idlen)
		dwfl_module_report_build_id(mod, p.id, p.idlen, p.id_vaddr);
	if (mod) {
		s->vdso_lo = p.lo;
		s->vdso_size = ((p.hi - p.lo) + page - 1) & ~(page - 1);
	}
}

Elf *sym_vdso_elf(struct sym *s, Dwarf_Addr lo)
{
	Elf *elf;

	/* the vDSO is a whole ELF file in its pages, section headers and all */
	if (!s->img || lo != s->vdso_lo || !s->vdso_size || s->vdso_size > SYM_VDSO_MAX ||
	    s->vdso_buf || !(s->vdso_buf = malloc(s->vdso_size)))
		return NULL;
	if (!image_read(s->img, lo, s->vdso_buf, s->vdso_size) ||
	    !(elf = elf_memory(s->vdso_buf, s->vdso_size)) || elf_kind(elf) != ELF_K_ELF) {
		free(s->vdso_buf);
		s->vdso_buf = NULL;
		return NULL;
	}
	return elf;
}

/* The link_map's name for the module at [lo, hi), or NULL. */
static const char *lm_name(const struct sym_lm_names *lm, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; lm && i < lm->n; i++)
		if (lm->v[i].l_ld >= lo && lm->v[i].l_ld < hi)
			return lm->v[i].name;
	return NULL;
}

int sym_report_core_files(struct sym *s, const struct image *img, uint64_t vdso,
			  const struct sym_lm_names *lm)
{
	struct span *done = calloc(img->nfiles ? img->nfiles : 1, sizeof(*done));
	uint64_t pg = img->file_page, page = pg >= 512 && !(pg & (pg - 1)) ? pg : 4096;
	size_t ndone = 0;
	int n = 0;

	if (!done)
		return -1;
	for (size_t i = 0; i < img->nfiles; i++) {
		const struct image_file *f = &img->files[i];
		struct placed p = { 0 };
		Dwfl_Module *mod;
		const char *name;
		int placed;

		/* a module starts where its file's first page is mapped */
		if (f->offset != 0 || f->name[0] != '/' || overlaps(done, ndone, f->start, f->end))
			continue;
		/* as dwfl_core_file_report: a file whose headers the core left out is found
		 * through the link_map, if at all (sym_dwfl.c) */
		placed = place_from_memory(img, f->start, page, &p);
		if (placed <= 0 || overlaps(done, ndone, p.lo, p.hi))
			continue;
		name = lm_name(lm, p.lo, p.hi);
		mod = dwfl_report_module(s->dwfl, name ? name : f->name, p.lo, p.hi);
		if (!mod)
			continue;
		if (p.idlen)
			dwfl_module_report_build_id(mod, p.id, p.idlen, p.id_vaddr);
		done[ndone++] = (struct span){ p.lo, p.hi };
		n++;
	}
	free(done);
	if (n > 0)
		report_vdso(s, img, vdso, page);
	return n;
}

struct sym_dump_module *sym_dump_modules(const struct image *img, size_t *n)
{
	struct sym_dump_module *v = calloc(img->nfiles ? img->nfiles : 1, sizeof(*v));
	uint64_t pg = img->file_page, page = pg >= 512 && !(pg & (pg - 1)) ? pg : 4096;
	size_t k = 0;

	*n = 0;
	if (!v)
		return NULL;
	elf_version(EV_CURRENT);
	for (size_t i = 0; i < img->nfiles; i++) {
		const struct image_file *f = &img->files[i];
		struct placed p = { 0 };
		bool taken = false;

		/* as sym_report_core_files: a module starts where its first page is mapped */
		if (f->offset != 0 || f->name[0] != '/')
			continue;
		if (place_from_memory(img, f->start, page, &p) <= 0)
			continue;
		for (size_t j = 0; j < k && !taken; j++)
			taken = p.lo < v[j].hi && v[j].lo < p.hi;
		if (taken)
			continue;
		v[k] = (struct sym_dump_module){ f->name, p.lo, p.hi, p.bias, p.exec, "" };
		if (p.idlen)
			sym_hex(v[k].build_id, sizeof(v[k].build_id), p.id, p.idlen);
		k++;
	}
	*n = k;
	return v;
}
