/*
 * Loaded objects as the CFI reader sees them: found with _dl_find_object (lock-free, so
 * safe in a hook and in a forked child) or, where the libc has none (musl, static
 * glibc, whose main map has no unwind data), in the list dl_iterate_phdr gave at start-up;
 * described by their program headers, and asked whether an address can be a return
 * address. cfi_parse.c reads their tables.
 */
#define _GNU_SOURCE
#include "cfi_obj.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/auxv.h>

#if HP_CFI

#ifdef DLFO_STRUCT_HAS_EH_DBASE
typedef int (*find_object_fn)(void *, struct dl_find_object *);
static find_object_fn find_object;
#endif

/*
 * The objects loaded at start-up, as dl_iterate_phdr listed them: in a static program
 * the executable (and the vDSO), which stay for good, so a look-up takes no lock. A
 * library dlopen()ed later is not in it: the walk stops at its frames.
 */
#define MAX_LISTED 64
struct listed {
	const Elf64_Phdr *phdr;
	unsigned phnum;
	uintptr_t bias;
};
static struct listed listed[MAX_LISTED];
static unsigned n_listed;

static int list_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	if (n_listed < MAX_LISTED && info->dlpi_phnum)
		listed[n_listed++] = (struct listed){ info->dlpi_phdr, info->dlpi_phnum,
						      info->dlpi_addr };
	return 0;
}

/* The load bias of the object whose ELF header is at eh (its offset-0 PT_LOAD). */
static bool bias_from_ehdr(const Elf64_Ehdr *eh, struct listed *l)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((uintptr_t)eh + eh->e_phoff);

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr))
		return false;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
			*l = (struct listed){ ph, eh->e_phnum, (uintptr_t)eh - ph[i].p_vaddr };
			return true;
		}
	}
	return false;
}

/*
 * A static glibc allocates before its dl_iterate_phdr knows the program (while it
 * sets itself up, before main): the program's headers are then taken from the aux
 * vector, and the vDSO's from its ELF header there.
 */
static void list_from_auxv(void)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);
	uintptr_t vdso = getauxval(AT_SYSINFO_EHDR);
	struct listed l = { ph, (unsigned)n, 0 };
	bool found = false;

	for (unsigned long i = 0; ph && i < n; i++) {
		if (ph[i].p_type == PT_PHDR) {
			l.bias = (uintptr_t)ph - ph[i].p_vaddr;
			found = true;
		}
	}
	/* no PT_PHDR (a static non-PIE program): the header sits just before the table */
	if (!found && ph && ((uintptr_t)ph & 4095) >= sizeof(Elf64_Ehdr)) {
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *)((uintptr_t)ph - sizeof(Elf64_Ehdr));

		found = eh->e_phoff == sizeof(Elf64_Ehdr) && bias_from_ehdr(eh, &l);
	}
	if (found)
		listed[n_listed++] = l;
	if (vdso && bias_from_ehdr((const Elf64_Ehdr *)vdso, &l))
		listed[n_listed++] = l;
}

bool cfi_obj_init(void)
{
#ifdef DLFO_STRUCT_HAS_EH_DBASE
	if (!find_object)
		find_object = (find_object_fn)dlsym(RTLD_DEFAULT, "_dl_find_object");
	if (find_object)
		return true;
#endif
	if (!n_listed)
		dl_iterate_phdr(list_object, NULL);
	if (!n_listed)
		list_from_auxv();
	return n_listed != 0;
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

/* o's .eh_frame_hdr: its PT_GNU_EH_FRAME, if eh_frame (0: any) and readable. */
static void find_hdr(struct cfi_obj *o, uintptr_t eh_frame)
{
	o->hdr = o->hdr_end = 0;
	for (unsigned i = 0; i < o->phnum; i++) {
		const Elf64_Phdr *p = &o->phdr[i];

		if (p->p_type == PT_GNU_EH_FRAME && (!eh_frame || o->bias + p->p_vaddr == eh_frame)) {
			o->hdr = o->bias + p->p_vaddr;
			o->hdr_end = o->hdr + p->p_memsz;
		}
	}
	if (o->hdr && !cfi_seg_end(o, o->hdr, o->hdr_end - o->hdr, PF_R))
		o->hdr = o->hdr_end = 0;	/* a table outside every readable segment */
}

/* The object of the start-up list whose PT_LOAD holds addr. */
static bool find_listed(uintptr_t addr, struct cfi_obj *o)
{
	for (unsigned i = 0; i < n_listed; i++) {
		o->phdr = listed[i].phdr;
		o->phnum = listed[i].phnum;
		o->bias = listed[i].bias;
		o->dbase = 0;	/* x86_64 FDEs never use datarel */
		if (cfi_seg_end(o, addr, 1, 0)) {
			find_hdr(o, 0);
			return true;
		}
	}
	return false;
}

/*
 * The program headers are found through the ELF header at the start of the mapping;
 * they must sit in its first page, which is mapped readable in every object the loader
 * accepts, so nothing here can fault.
 */
bool cfi_obj_find(uintptr_t addr, struct cfi_obj *o)
{
#ifdef DLFO_STRUCT_HAS_EH_DBASE
	struct dl_find_object d;
	const Elf64_Ehdr *eh;

	if (!find_object)
		return find_listed(addr, o);
	if (find_object((void *)addr, &d) != 0 || !d.dlfo_link_map)
		return false;
	eh = d.dlfo_map_start;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff < sizeof(*eh) || eh->e_phoff % 8 ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > 4096)
		return false;
	o->phdr = (const Elf64_Phdr *)((uintptr_t)eh + eh->e_phoff);
	o->phnum = eh->e_phnum;
	o->bias = d.dlfo_link_map->l_addr;
#if DLFO_STRUCT_HAS_EH_DBASE
	o->dbase = (uintptr_t)d.dlfo_eh_dbase;
#else
	o->dbase = 0;	/* x86_64 FDEs never use datarel; treat it as unsupported */
#endif
	find_hdr(o, (uintptr_t)d.dlfo_eh_frame);
	return true;
#else
	return find_listed(addr, o);
#endif
}

/*
 * Does an x86_64 call instruction end at ra? (e8 rel32, or ff /2 in any addressing
 * form) Returns its length, 0 for none.
 */
static unsigned call_before(const uint8_t *ra)
{
	if (ra[-5] == 0xe8)
		return 5;
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
			return k;
	}
	return 0;
}

bool cfi_text_at(uintptr_t ra)
{
	struct cfi_obj o;

	if (ra < 8 || !cfi_obj_find(ra - 1, &o) || !cfi_seg_end(&o, ra - 1, 1, PF_X))
		return false;
	/* execute-only text cannot be read; trust the segment test alone there */
	if (!cfi_seg_end(&o, ra - 7, 7, PF_R | PF_X))
		return true;
	return call_before((const uint8_t *)ra) != 0;
}

enum cfi_call cfi_call_at(uintptr_t ra, uintptr_t *target)
{
	struct cfi_obj o;
	unsigned len;
	int32_t rel;

	*target = 0;
	if (ra < 8 || !cfi_obj_find(ra - 1, &o) || !cfi_seg_end(&o, ra - 7, 7, PF_R | PF_X))
		return CALL_UNKNOWN;
	len = call_before((const uint8_t *)ra);
	if (!len)
		return CALL_NO;
	if (len == 5 && ((const uint8_t *)ra)[-5] == 0xe8) {
		memcpy(&rel, (const void *)(ra - 4), sizeof(rel));
		*target = ra + (intptr_t)rel;
	}
	return CALL_YES;
}

bool cfi_sigreturn_at(const struct cfi_obj *o, uintptr_t pc)
{
	static const uint8_t code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };

	return cfi_seg_end(o, pc, sizeof(code), PF_R | PF_X) &&
	       memcmp((const void *)pc, code, sizeof(code)) == 0;
}

#else /* not x86_64 */

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

enum cfi_call cfi_call_at(uintptr_t ra, uintptr_t *target)
{
	(void)ra;
	*target = 0;
	return CALL_UNKNOWN;
}

bool cfi_sigreturn_at(const struct cfi_obj *o, uintptr_t pc)
{
	(void)o, (void)pc;
	return false;
}

#endif
