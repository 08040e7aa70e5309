/*
 * Internal to the unwinder (unwind.c, unwind_cfi.c): the x86_64 DWARF CFI walk with its
 * lock-free rule cache, and the "is this a return address into loaded code" test that
 * the frame-pointer walk borrows. Not part of heapprof's interface.
 */
#ifndef HP_UNWIND_CFI_H
#define HP_UNWIND_CFI_H

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The cfi and fp unwinders know the x86_64 LP64 frame only (x32 shares __x86_64__ but
 * not the word size); everywhere else they compile out and report "unavailable".
 */
#if defined(__x86_64__) && defined(__LP64__)
#define HP_UNWIND_X86_64 1
#else
#define HP_UNWIND_X86_64 0
#endif

/*
 * The part of the current thread's stack a walk may read: [lo, hi). lo is at or below
 * the unwinder's own frame, hi is the thread's stack top; every load is checked.
 */
struct stack_win {
	uintptr_t lo, hi;
};

/*
 * Look up _dl_find_object and map the rule cache (emptied on every call). May allocate;
 * false if CFI unwinding cannot work in this process (old glibc, no mmap, not x86_64).
 */
bool cfi_init(void);

/*
 * Walk outwards from pcs[0] (a return address, already stored by the caller) with the
 * caller's stack pointer sp and frame pointer fp; store up to max - 1 further return
 * addresses in pcs[1..] and return the total count. *fallback is set when not even the
 * first frame could be unwound (no unwind info, or rules the cache cannot express): the
 * caller should then retry the whole stack with libgcc.
 */
unsigned cfi_walk(uintptr_t *pcs, unsigned max, uintptr_t sp, uintptr_t fp,
		  const struct stack_win *w, bool *fallback);

/*
 * True if ra can be a return address: ra - 1 lies in an executable segment of a loaded
 * object and a call instruction ends at ra. Cached like the CFI rules; never faults.
 */
bool cfi_is_text(uintptr_t ra);

/*
 * For test/progs/unwind_check.c, which fuzzes the parser on a copy of real tables: an
 * object as the parser sees it, and the packed rule for return address pc in it
 * (uncached). All reads stay inside o's PT_LOAD segments with PF_R.
 */
struct cfi_obj {
	const Elf64_Phdr *phdr;
	unsigned phnum;
	uintptr_t bias;		/* added to every p_vaddr */
	uintptr_t hdr, hdr_end;	/* the PT_GNU_EH_FRAME segment (.eh_frame_hdr) */
	uintptr_t dbase;	/* DW_EH_PE_datarel base for FDEs, 0 if unknown */
};

uint64_t cfi_rule_in(const struct cfi_obj *o, uintptr_t pc);
uint64_t cfi_rule_of(uintptr_t pc);
#define CFI_RULE_KIND(r) ((unsigned)(r) & 7u)
enum cfi_rule_kind { CFI_EMPTY, CFI_FRAME, CFI_END, CFI_STOP, CFI_TEXT, CFI_NOTEXT };

/* End of o's PT_LOAD with all of flags that holds [a, a + len), or 0 (unwind_cfi.c). */
uintptr_t cfi_seg_end(const struct cfi_obj *o, uintptr_t a, uintptr_t len, unsigned flags);

/*
 * A rule is one 64-bit word so that a cache slot can be checked as a whole:
 *   bits 0-2   kind (enum cfi_rule_kind)
 *   bits 3-4   how the CFA is found (enum cfa_how)
 *   bits 5-6   how the caller's rbp is found (enum fp_how)
 *   bits 8-31  rbp offset, signed
 *   bits 32-63 CFA offset, signed
 * The return address is always at CFA - 8 and the caller's rsp is the CFA: a frame that
 * says otherwise is CFI_STOP.
 */
enum cfa_how { CFA_RSP, CFA_RBP, CFA_RBP_DEREF };		/* reg + k, or [rbp + k] */
enum fp_how { FP_SAME, FP_AT_CFA, FP_AT_RBP, FP_LOST };	/* [cfa + k], [rbp + k] */

#define RULE_FP_MIN (-(1 << 23))
#define RULE_FP_MAX ((1 << 23) - 1)

static inline uint64_t rule_make(enum cfa_how cfa, int32_t cfa_off, enum fp_how fp, int32_t fp_off)
{
	return CFI_FRAME | (uint64_t)cfa << 3 | (uint64_t)fp << 5 |
	       (uint64_t)((uint32_t)fp_off & 0xffffff) << 8 | (uint64_t)(uint32_t)cfa_off << 32;
}

static inline enum cfa_how rule_cfa(uint64_t r) { return (enum cfa_how)(r >> 3 & 3); }
static inline enum fp_how rule_fp(uint64_t r) { return (enum fp_how)(r >> 5 & 3); }
/* gcc shifts signed values arithmetically, which sign-extends the packed fields */
static inline int64_t rule_cfa_off(uint64_t r) { return (int64_t)r >> 32; }
static inline int64_t rule_fp_off(uint64_t r) { return (int32_t)(uint32_t)r >> 8; }

#endif
