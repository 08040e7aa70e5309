/*
 * x86_64 DWARF CFI unwinding for heapprof.so: one packed unwind rule per return address
 * in a lock-free cache, filled lazily (cfi_parse.c reads the rule from the object's
 * .eh_frame_hdr and .eh_frame, found with _dl_find_object, so no loader lock). unwind.c
 * chooses the mode and the stack window; this file caches and walks.
 */
#define _GNU_SOURCE
#include "unwind_cfi.h"

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#if HP_UNWIND_X86_64 && defined(DLFO_STRUCT_HAS_EH_DBASE)

/*
 * The cache: 64K slots of 16 bytes (1 MiB, touched lazily), in 64-byte buckets of four,
 * so a probe never leaves one cache line. The bucket comes from the low bits of the
 * return address, as in a set-associative CPU cache: no hash, since the bucket address
 * is on the walk's critical path (load return address, load rule, load the next return
 * address). A writer stores rule and check with two plain stores; check = pc ^
 * seal(rule), so a reader that sees half of a concurrent update finds a mismatch and
 * takes it as a miss instead of using a torn entry. Collisions overwrite.
 */
#define CACHE_BITS 16
#define CACHE_SLOTS (1u << CACHE_BITS)
#define BUCKET 4

struct slot {
	uint64_t check, rule;
};

static struct slot *cache;

typedef int (*find_object_fn)(void *, struct dl_find_object *);
static find_object_fn find_object;

static inline uint64_t seal(uint64_t rule)
{
	return rule * 0x9e3779b97f4a7c15ull;
}

static inline struct slot *bucket_of(struct slot *tab, uintptr_t pc)
{
	return &tab[(pc * BUCKET) & (CACHE_SLOTS - BUCKET)];
}

static inline uint64_t cache_get_in(struct slot *tab, uintptr_t pc)
{
	struct slot *s = bucket_of(tab, pc);

	for (unsigned i = 0; i < BUCKET; i++) {
		uint64_t rule = __atomic_load_n(&s[i].rule, __ATOMIC_RELAXED);
		uint64_t check = __atomic_load_n(&s[i].check, __ATOMIC_RELAXED);

		if (rule && (check ^ seal(rule)) == pc)
			return rule;
	}
	return 0;
}

static inline uint64_t cache_get(uintptr_t pc)
{
	return cache_get_in(cache, pc);
}

static void cache_put(uintptr_t pc, uint64_t rule)
{
	struct slot *s = bucket_of(cache, pc);
	/* bits above the bucket index pick the victim: spreads a hot bucket's evictions */
	struct slot *victim = &s[(pc >> (CACHE_BITS - 2)) & (BUCKET - 1)];

	for (unsigned i = 0; i < BUCKET; i++) {
		uint64_t r = __atomic_load_n(&s[i].rule, __ATOMIC_RELAXED);

		if (!r || (__atomic_load_n(&s[i].check, __ATOMIC_RELAXED) ^ seal(r)) == pc) {
			victim = &s[i];
			break;
		}
	}
	__atomic_store_n(&victim->rule, rule, __ATOMIC_RELAXED);
	__atomic_store_n(&victim->check, pc ^ seal(rule), __ATOMIC_RELAXED);
}

/* ---- objects: which segments may be read while parsing ---- */

/* End of the PT_LOAD with all of flags that holds [a, a + len), or 0. */
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
 * Describe the object holding addr. The program headers are found through the ELF
 * header at the start of the mapping; they must sit in its first page, which is mapped
 * readable in every object the loader accepts, so nothing here can fault.
 */
static bool obj_find(uintptr_t addr, struct cfi_obj *o)
{
	struct dl_find_object d;
	const Elf64_Ehdr *eh;

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

uint64_t cfi_rule_of(uintptr_t pc)
{
	struct cfi_obj o;

	if (!find_object || !obj_find(pc - 1, &o))
		return CFI_STOP;
	return cfi_rule_in(&o, pc);
}

/* ---- the walk ---- */

struct regs {
	uintptr_t pc, sp, fp;
	bool fp_ok;	/* false once a frame lost track of rbp */
};

/* The window goes by value: in registers, where stores to pcs[] cannot alias it. */
static inline bool win_load(struct stack_win w, uintptr_t a, uintptr_t *v)
{
	if (a < w.lo || a > w.hi - sizeof(*v))
		return false;
	memcpy(v, (const void *)a, sizeof(*v));
	return true;
}

/* One frame outwards; false if the rule leads outside the stack or backwards. */
static inline bool step(struct stack_win w, uint64_t rule, struct regs *r)
{
	int64_t off = rule_cfa_off(rule);
	uintptr_t cfa;

	switch (rule_cfa(rule)) {
	case CFA_RSP:
		cfa = r->sp + off;
		break;
	case CFA_RBP:
		if (!r->fp_ok)
			return false;
		cfa = r->fp + off;
		break;
	default:
		if (!r->fp_ok || !win_load(w, r->fp + off, &cfa))
			return false;
	}
	/*
	 * The return address sits above sp: a CFA at or below it is a loop or garbage.
	 * sp >= w.lo always holds, so [cfa - 8, cfa) needs only the upper check.
	 */
	if (cfa < r->sp + 8 || cfa > w.hi)
		return false;
	memcpy(&r->pc, (const void *)(cfa - 8), sizeof(r->pc));
	switch (rule_fp(rule)) {
	case FP_SAME:
		break;
	case FP_AT_CFA:
		if (!win_load(w, cfa + rule_fp_off(rule), &r->fp))
			return false;
		break;
	case FP_AT_RBP:
		if (!r->fp_ok || !win_load(w, r->fp + rule_fp_off(rule), &r->fp))
			return false;
		break;
	default:
		r->fp_ok = false;
	}
	r->sp = cfa;
	return true;
}

static uint64_t rule_fill(uintptr_t pc)
{
	uint64_t rule = cfi_rule_of(pc);

	cache_put(pc, rule);
	return rule;
}

unsigned cfi_walk(uintptr_t *pcs, unsigned max, uintptr_t sp, uintptr_t fp,
		  const struct stack_win *w, bool *fallback)
{
	struct regs r = { pcs[0], sp, fp, true };
	struct stack_win win = *w;
	struct slot *tab = cache;
	unsigned n = 1;

	*fallback = false;
	if (sp < win.lo || sp >= win.hi)
		return 1;	/* step() relies on sp >= win.lo */
	while (n < max) {
		uint64_t rule = cache_get_in(tab, r.pc);

		if (__builtin_expect(!rule || CFI_RULE_KIND(rule) >= CFI_TEXT, 0))
			rule = rule_fill(r.pc);
		if (CFI_RULE_KIND(rule) != CFI_FRAME) {
			*fallback = n == 1 && CFI_RULE_KIND(rule) != CFI_END;
			break;
		}
		if (!step(win, rule, &r) || r.pc == 0)
			break;
		pcs[n++] = r.pc;
	}
	return n;
}

/* ---- return-address check for the fp walk ---- */

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

static bool text_check(uintptr_t ra)
{
	struct cfi_obj o;

	if (ra < 8 || !obj_find(ra - 1, &o) || !cfi_seg_end(&o, ra - 1, 1, PF_X))
		return false;
	/* execute-only text cannot be read; trust the segment test alone there */
	if (!cfi_seg_end(&o, ra - 7, 7, PF_R | PF_X))
		return true;
	return call_before((const uint8_t *)ra);
}

bool cfi_is_text(uintptr_t ra)
{
	uint64_t rule = cache_get(ra);

	if (CFI_RULE_KIND(rule) != CFI_TEXT && CFI_RULE_KIND(rule) != CFI_NOTEXT) {
		rule = text_check(ra) ? CFI_TEXT : CFI_NOTEXT;
		cache_put(ra, rule);
	}
	return rule == CFI_TEXT;
}

bool cfi_init(void)
{
	size_t size = CACHE_SLOTS * sizeof(struct slot);

	if (cache) {
		memset(cache, 0, size);	/* rules from another mode must not answer */
		return find_object != NULL;
	}
	/* dlsym, not a link-time reference: heapprof.so must still load on glibc < 2.35 */
	find_object = (find_object_fn)dlsym(RTLD_DEFAULT, "_dl_find_object");
	if (!find_object)
		return false;
	cache = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cache == MAP_FAILED) {
		cache = NULL;
		return false;
	}
	return true;
}

#else /* not x86_64, or glibc headers without _dl_find_object */

bool cfi_init(void)
{
	return false;
}

unsigned cfi_walk(uintptr_t *pcs, unsigned max, uintptr_t sp, uintptr_t fp,
		  const struct stack_win *w, bool *fallback)
{
	(void)pcs, (void)max, (void)sp, (void)fp, (void)w;
	*fallback = true;
	return 1;
}

bool cfi_is_text(uintptr_t ra)
{
	(void)ra;
	return false;
}

uint64_t cfi_rule_of(uintptr_t pc)
{
	(void)pc;
	return CFI_STOP;
}

#endif
