/*
 * The x86_64 DWARF CFI reader behind the cfi unwinder: cfi_parse.c packs the unwind rule
 * for a return address in an object (cfi_obj.h) into one word, cfi_prologue.c reads a
 * function's frame from its code. Neither caches nor walks; unwind_cfi.c does. Not
 * heapprof's interface.
 */
#ifndef HP_CFI_PARSE_H
#define HP_CFI_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "cfi_obj.h"

/* ---- cfi_parse.c ---- */

/* The packed rule for return address pc in o, uncached; reads stay in o's PF_R segments. */
uint64_t cfi_rule_in(const struct cfi_obj *o, uintptr_t pc);
#define CFI_RULE_KIND(r) ((unsigned)(r) & 7u)
/*
 * FRAME a rule to follow; END the outermost frame (the return address is undefined);
 * STOP unwind info the walk cannot follow; NOINFO none at all for the address (code
 * without tables: the caller is looked for on the stack); SIGNAL a signal return
 * trampoline (the caller's registers are in the signal frame); TEXT and NOTEXT the fp
 * unwinder's answers of cfi_is_text(), never rules.
 */
enum cfi_rule_kind { CFI_EMPTY, CFI_FRAME, CFI_END, CFI_STOP, CFI_NOINFO, CFI_SIGNAL, CFI_TEXT,
		     CFI_NOTEXT };

/*
 * For return address pc in o whose code has no unwind tables: the end of the nearest
 * function below it that has them, the lowest address its function can start at; 0
 * if unknown (none below, a table that cannot be read).
 */
uintptr_t cfi_code_floor(const struct cfi_obj *o, uintptr_t pc);

/* ---- cfi_prologue.c ---- */

/*
 * The bytes the function at fn in o pushes and subtracts from rsp, read from its code
 * (through jumps that come first: a thunk's target): 1 and *size, its frame at its
 * first call; 0 and *size, what it built before a branch, a return or an instruction
 * this reader does not know (more may follow); -1 if fn is not readable code of o or
 * an instruction moves rsp in another way (pop, and, mov).
 */
int cfi_prologue_size(const struct cfi_obj *o, uintptr_t fn, uint32_t *size);

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
