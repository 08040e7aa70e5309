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

#endif
