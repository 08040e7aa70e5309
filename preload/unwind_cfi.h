/*
 * The cfi unwinder's cache, as two other users see it: the fp unwinder asks it whether
 * an address can be a return address, and test/progs/unwind_check.c reads rules.
 */
#ifndef HP_UNWIND_CFI_H
#define HP_UNWIND_CFI_H

#include <stdbool.h>
#include <stdint.h>

/*
 * cfi_text_at(ra) (cfi_parse.h), cached. gen is unwind_gen as read at the start of the
 * capture: entries from an earlier generation never answer. Needs unwinder_cfi.init().
 */
bool cfi_is_text(uintptr_t ra, unsigned gen);

/* The packed rule (cfi_parse.h) for return address pc in whichever object holds pc - 1. */
uint64_t cfi_rule_of(uintptr_t pc);

#endif
