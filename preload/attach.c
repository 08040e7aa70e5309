/*
 * heapprof-attach.so's attach: the malloc family's references of every loaded module
 * (GOT and PLT slots, data pointers) are rewritten to lead to hooks.c, as the dynamic
 * linker would have bound them under LD_PRELOAD, and dlopen's too, so that a module
 * loaded later gets the same. The blocks the process allocated before carry no
 * header: hooks.c's free, realloc and malloc_usable_size pass those to the allocator.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attach.h"
#include "hooks.h"
#include "util.h"

/* hooks.c's entry points and exports.c's dlclose, by their hidden names */
extern __typeof(malloc) hooks_malloc;
extern __typeof(calloc) hooks_calloc;
extern __typeof(realloc) hooks_realloc;
extern __typeof(reallocarray) hooks_reallocarray;
extern __typeof(posix_memalign) hooks_posix_memalign;
extern __typeof(aligned_alloc) hooks_aligned_alloc;
extern __typeof(memalign) hooks_memalign;
extern __typeof(valloc) hooks_valloc;
extern __typeof(pvalloc) hooks_pvalloc;
extern __typeof(malloc_usable_size) hooks_malloc_usable_size;
extern __typeof(free) hooks_free;
extern __typeof(dlclose) exports_dlclose;

/* The relocations that bind a module's references to functions: PLT slots, GOT
 * entries, and data words that hold a function's address. */
#if defined(__x86_64__)
#define R_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB R_X86_64_GLOB_DAT
#define R_ABS R_X86_64_64
#elif defined(__aarch64__)
#define R_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB R_AARCH64_GLOB_DAT
#define R_ABS R_AARCH64_ABS64
#else
#define ATTACH_NO_RELOCS	/* heapprof_attach() refuses */
#define R_SLOT (~0u)
#define R_GLOB (~0u)
#define R_ABS (~0u)
#endif

static void *attach_dlopen(const char *file, int mode);

/*
 * The names redirected, in three waves over all modules: first the calls that take
 * both kinds of block (free, malloc_usable_size), then realloc, which may make a
 * tagged block, and last the allocators: no tagged block is made before every module
 * can free it. real: the function each reference led to before (the libc's, or a
 * non-PIE program's canonical PLT entry, which dlsym finds first).
 */
static struct attach_name {
	const char *name;
	unsigned wave;
	void *ours, *real, *next;
} names[] = {
	{ "free", 0, (void *)hooks_free, NULL, NULL },
	{ "malloc_usable_size", 0, (void *)hooks_malloc_usable_size, NULL, NULL },
	{ "realloc", 1, (void *)hooks_realloc, NULL, NULL },
	{ "reallocarray", 1, (void *)hooks_reallocarray, NULL, NULL },
	{ "malloc", 2, (void *)hooks_malloc, NULL, NULL },
	{ "calloc", 2, (void *)hooks_calloc, NULL, NULL },
	{ "posix_memalign", 2, (void *)hooks_posix_memalign, NULL, NULL },
	{ "aligned_alloc", 2, (void *)hooks_aligned_alloc, NULL, NULL },
	{ "memalign", 2, (void *)hooks_memalign, NULL, NULL },
	{ "valloc", 2, (void *)hooks_valloc, NULL, NULL },
	{ "pvalloc", 2, (void *)hooks_pvalloc, NULL, NULL },
	{ "dlopen", 2, (void *)attach_dlopen, NULL, NULL },
	{ "dlclose", 2, (void *)exports_dlclose, NULL, NULL },
};
#define N_NAMES (sizeof(names) / sizeof(names[0]))
#define N_WAVES 3

static void *self_base;	/* our own load address: our references stay as they are */
static int attached;
static void *(*next_dlopen)(const char *, int);

/* A module's tables, from its dynamic section. */
struct module {
	uintptr_t base, lo, hi, relro_lo, relro_hi;
	const ElfW(Phdr) *phdr;
	unsigned phnum;
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Rela) *rela[2];
	size_t rela_n[2];
};

/* glibc relocates the dynamic section's addresses; the vDSO's stay offsets */
static uintptr_t dyn_ptr(const struct module *m, uintptr_t v)
{
	return v < m->base ? v + m->base : v;
}

static bool module_read(const struct dl_phdr_info *info, struct module *m)
{
	const ElfW(Dyn) *dyn = NULL;
	size_t relasz = 0, pltsz = 0;
	uintptr_t rela = 0, jmprel = 0;
	long pltrel = DT_RELA;
	long page = sysconf(_SC_PAGESIZE);

	memset(m, 0, sizeof(*m));
	m->base = info->dlpi_addr;
	m->lo = UINTPTR_MAX;
	m->phdr = info->dlpi_phdr;
	m->phnum = info->dlpi_phnum;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = m->base + ph->p_vaddr;

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)a;
		else if (ph->p_type == PT_GNU_RELRO) {
			/* the pages glibc made read-only: it rounds both ends down, and a
			 * last partial page stays writable */
			m->relro_lo = a & ~(uintptr_t)(page - 1);
			m->relro_hi = (a + ph->p_memsz) & ~(uintptr_t)(page - 1);
		} else if (ph->p_type == PT_LOAD) {
			if (a < m->lo)
				m->lo = a;
			if (a + ph->p_memsz > m->hi)
				m->hi = a + ph->p_memsz;
		}
	}
	if (!dyn)
		return false;	/* static, or the vDSO's tables we do not need */
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: m->symtab = (const ElfW(Sym) *)dyn_ptr(m, dyn->d_un.d_ptr); break;
		case DT_STRTAB: m->strtab = (const char *)dyn_ptr(m, dyn->d_un.d_ptr); break;
		case DT_RELA: rela = dyn_ptr(m, dyn->d_un.d_ptr); break;
		case DT_RELASZ: relasz = dyn->d_un.d_val; break;
		case DT_JMPREL: jmprel = dyn_ptr(m, dyn->d_un.d_ptr); break;
		case DT_PLTRELSZ: pltsz = dyn->d_un.d_val; break;
		case DT_PLTREL: pltrel = (long)dyn->d_un.d_val; break;
		}
	}
	if (!m->symtab || !m->strtab)
		return false;
	m->rela[0] = (const ElfW(Rela) *)rela;
	m->rela_n[0] = rela ? relasz / sizeof(ElfW(Rela)) : 0;
	m->rela[1] = (const ElfW(Rela) *)jmprel;
	m->rela_n[1] = jmprel && pltrel == DT_RELA ? pltsz / sizeof(ElfW(Rela)) : 0;
	return true;
}

/* Whether the slot at a lies in a segment the module writes (else it is no GOT of
 * ours to touch), and in its RELRO part, made read-only after relocation. */
static bool slot_writable(const struct module *m, uintptr_t a, bool *relro)
{
	*relro = a >= m->relro_lo && a + sizeof(void *) <= m->relro_hi;
	for (unsigned i = 0; i < m->phnum; i++) {
		const ElfW(Phdr) *ph = &m->phdr[i];
		uintptr_t lo = m->base + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && a >= lo &&
		    a + sizeof(void *) <= lo + ph->p_memsz)
			return true;
	}
	return false;
}

static void slot_write(uintptr_t a, void *v, bool relro)
{
	long page = sysconf(_SC_PAGESIZE);
	void *pg = (void *)(a & ~(uintptr_t)(page - 1));

	if (relro && mprotect(pg, (size_t)page, PROT_READ | PROT_WRITE))
		return;	/* left as it was: the reference keeps the allocator's */
	__atomic_store_n((void **)a, v, __ATOMIC_RELEASE);
	if (relro)
		mprotect(pg, (size_t)page, PROT_READ);
}

/* The reference at r to name n, rewritten if it leads to the allocator (or, lazily
 * bound, to the module's own PLT). Returns 1 if it was. */
static unsigned patch_one(const struct module *m, const ElfW(Rela) *r, const struct attach_name *n)
{
	unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
	uintptr_t a = m->base + r->r_offset;
	void *cur;
	bool relro;

	if (type != R_SLOT && type != R_GLOB && !(type == R_ABS && r->r_addend == 0))
		return 0;
	if (!slot_writable(m, a, &relro))
		return 0;
	cur = __atomic_load_n((void **)a, __ATOMIC_ACQUIRE);
	if (cur != n->real && cur != n->next &&
	    !(type == R_SLOT && (uintptr_t)cur >= m->lo && (uintptr_t)cur < m->hi))
		return 0;	/* ours already, or bound to another allocator */
	slot_write(a, n->ours, relro);
	return 1;
}

static unsigned patch_module(const struct module *m, unsigned wave)
{
	unsigned done = 0;

	for (unsigned t = 0; t < 2; t++) {
		for (size_t i = 0; i < m->rela_n[t]; i++) {
			const ElfW(Rela) *r = &m->rela[t][i];
			unsigned sym = (unsigned)ELF64_R_SYM(r->r_info);
			const char *s;

			if (!sym)
				continue;
			s = m->strtab + m->symtab[sym].st_name;
			for (unsigned k = 0; k < N_NAMES; k++)
				if (names[k].wave == wave && !strcmp(s, names[k].name))
					done += patch_one(m, r, &names[k]);
		}
	}
	return done;
}

struct walk {
	unsigned wave, done;
};

static int patch_each(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	struct module m;

	(void)size;
	if ((void *)info->dlpi_addr == self_base || !module_read(info, &m))
		return 0;
	w->done += patch_module(&m, w->wave);
	return 0;
}

/* One rewrite at a time: two threads' dlopen would otherwise make a RELRO page
 * read-only again under each other's write. */
static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned patch_all(void)
{
	struct walk w = { 0, 0 };

	pthread_mutex_lock(&patch_lock);
	for (w.wave = 0; w.wave < N_WAVES; w.wave++)
		dl_iterate_phdr(patch_each, &w);
	pthread_mutex_unlock(&patch_lock);
	return w.done;
}

/*
 * The program's dlopen: the new module and its dependencies get our references before
 * the program can call into them. Being the caller of glibc's dlopen, we stand in for
 * the program's module in one respect: a name without a slash is searched along our
 * RUNPATH, not that module's (docs/guide.md, "Attaching to a running process").
 */
static void *attach_dlopen(const char *file, int mode)
{
	void *h = next_dlopen(file, mode);

	if (h)
		patch_all();
	return h;
}

/* Whether the malloc the process binds to is the one hooks.c passes blocks to: the
 * same object's, or a non-PIE program's canonical PLT entry for it. */
static bool same_malloc(void)
{
	void *first = dlsym(RTLD_DEFAULT, "malloc"), *next = dlsym(RTLD_NEXT, "malloc");
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!first || first == next)
		return first != NULL;
	return dladdr1(first, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
	       sym->st_shndx == SHN_UNDEF;
}

HP_EXPORT int heapprof_attach(void)
{
	Dl_info self;

#ifdef ATTACH_NO_RELOCS
	return ATTACH_UNSUPPORTED;
#endif
	if (!hooks_alone())
		return ATTACH_OTHER_HEAPPROF;
	if (__atomic_load_n(&attached, __ATOMIC_ACQUIRE))
		return ATTACH_AGAIN;
	if (!same_malloc())
		return ATTACH_OTHER_MALLOC;
	if (!dladdr((void *)heapprof_attach, &self))
		return ATTACH_UNSUPPORTED;
	self_base = self.dli_fbase;
	next_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	for (unsigned k = 0; k < N_NAMES; k++) {
		names[k].real = dlsym(RTLD_DEFAULT, names[k].name);
		names[k].next = dlsym(RTLD_NEXT, names[k].name);
	}
	/* tagged blocks outlive any dlclose: our free must stay */
	if (!next_dlopen || !dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
		return ATTACH_UNSUPPORTED;
	__atomic_store_n(&attached, 1, __ATOMIC_RELEASE);
	return (int)patch_all();
}
