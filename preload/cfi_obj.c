/*
 * Loaded objects as the CFI reader sees them: found with _dl_find_object (lock-free, so
 * safe in a hook and in a forked child), described by their program headers, and
 * asked whether an address can be a return address. cfi_parse.c reads their tables.
 */
#define _GNU_SOURCE
#include "cfi_parse.h"

#include <dlfcn.h>
#include <string.h>

#if HP_CFI

typedef int (*find_object_fn)(void *, struct dl_find_object *);
static find_object_fn find_object;

bool cfi_obj_init(void)
{
	if (!find_object)
		find_object = (find_object_fn)dlsym(RTLD_DEFAULT, "_dl_find_object");
	return find_object != NULL;
}

uintptr_t cfi_seg_end(const struct cfi_obj *o, uintptr_t a, uintptr_t len, unsigned flags)
{
	for (unsigned i = 0; i < o->phnum; i++) {
		const Elf64_Phdr *p = &o->phdr[i];
		uintptr_t s = o->bias + p->p_vaddr, e = s + p->p_memsz;

		if (p->p_type != PT_LOAD || (p->p_flags & flags) != flags)
			continue;
		if (a >= s && a < e && len <= e - a)
			return e;
	}
	return 0;
}

/*
 * The program headers are found through the ELF header at the start of the mapping;
 * they must sit in its first page, which is mapped readable in every object the loader
 * accepts, so nothing here can fault.
 */
bool cfi_obj_find(uintptr_t addr, struct cfi_obj *o)
{
	struct dl_find_object d;
	const Elf64_Ehdr *eh;

	if (!find_object || find_object((void *)addr, &d) != 0 || !d.dlfo_link_map)
		return false;
	eh = d.dlfo_map_start;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff < sizeof(*eh) || eh->e_phoff % 8 ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > 4096)
		return false;
	o->phdr = (const Elf64_Phdr *)((uintptr_t)eh + eh->e_phoff);
	o->phnum = eh->e_phnum;
	o->bias = d.dlfo_link_map->l_addr;
	o->hdr = o->hdr_end = 0;
#if DLFO_STRUCT_HAS_EH_DBASE
	o->dbase = (uintptr_t)d.dlfo_eh_dbase;
#else
	o->dbase = 0;	/* x86_64 FDEs never use datarel; treat it as unsupported */
#endif
	for (unsigned i = 0; i < o->phnum; i++) {
		const Elf64_Phdr *p = &o->phdr[i];

		if (p->p_type == PT_GNU_EH_FRAME && o->bias + p->p_vaddr == (uintptr_t)d.dlfo_eh_frame) {
			o->hdr = o->bias + p->p_vaddr;
			o->hdr_end = o->hdr + p->p_memsz;
		}
	}
	if (o->hdr && !cfi_seg_end(o, o->hdr, o->hdr_end - o->hdr, PF_R))
		o->hdr = o->hdr_end = 0;	/* a table outside every readable segment */
	return true;
}

/* Does an x86_64 call instruction end at ra? (e8 rel32, or ff /2 in any addressing form) */
static bool call_before(const uint8_t *ra)
{
	if (ra[-5] == 0xe8)
		return true;
	for (unsigned k = 2; k <= 7; k++) {
		const uint8_t *p = ra - k;
		unsigned modrm = p[1], mod = modrm >> 6, rm = modrm & 7, len = 2;

		if (p[0] != 0xff || (modrm >> 3 & 7) != 2)
			continue;
		if (mod != 3 && rm == 4) {	/* SIB byte; p[2] is before ra only if k > 2 */
			len++;
			if (k > 2 && mod == 0 && (p[2] & 7) == 5)
				len += 4;
		}
		if (mod == 1)
			len += 1;
		else if (mod == 2 || (mod == 0 && rm == 5))
			len += 4;
		if (len == k)
			return true;
	}
	return false;
}

bool cfi_text_at(uintptr_t ra)
{
	struct cfi_obj o;

	if (ra < 8 || !cfi_obj_find(ra - 1, &o) || !cfi_seg_end(&o, ra - 1, 1, PF_X))
		return false;
	/* execute-only text cannot be read; trust the segment test alone there */
	if (!cfi_seg_end(&o, ra - 7, 7, PF_R | PF_X))
		return true;
	return call_before((const uint8_t *)ra);
}

#else /* not x86_64, or glibc headers without _dl_find_object */

bool cfi_obj_init(void)
{
	return false;
}

bool cfi_obj_find(uintptr_t addr, struct cfi_obj *o)
{
	(void)addr, (void)o;
	return false;
}

uintptr_t cfi_seg_end(const struct cfi_obj *o, uintptr_t a, uintptr_t len, unsigned flags)
{
	(void)o, (void)a, (void)len, (void)flags;
	return 0;
}

bool cfi_text_at(uintptr_t ra)
{
	(void)ra;
	return false;
}

#endif
