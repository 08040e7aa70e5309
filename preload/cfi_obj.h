/*
 * The loaded objects as the x86_64 CFI reader sees them (cfi_obj.c): the one holding an
 * address, its segments, what its text says before a return address. Below the parser
 * (cfi_parse.h), which reads the tables these find. Not heapprof's interface.
 */
#ifndef HP_CFI_OBJ_H
#define HP_CFI_OBJ_H

#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>

/* x86_64 LP64 (objects from glibc's _dl_find_object, or dl_iterate_phdr at start-up);
 * elsewhere both files are stubs */
#if defined(__x86_64__) && defined(__LP64__)
#define HP_CFI 1
#else
#define HP_CFI 0
#endif

/*
 * An object as the parser sees it. test/progs/unwind_check.c builds one over a copy of
 * libc's tables to fuzz the parser.
 */
struct cfi_obj {
	const Elf64_Phdr *phdr;
	unsigned phnum;
	uintptr_t bias;		/* added to every p_vaddr */
	uintptr_t hdr, hdr_end;	/* the PT_GNU_EH_FRAME segment (.eh_frame_hdr) */
	uintptr_t dbase;	/* DW_EH_PE_datarel base for FDEs, 0 if unknown */
};

/*
 * Look up _dl_find_object (dlsym: heapprof.so must still load on glibc < 2.35), or
 * without it list the objects loaded now (dl_iterate_phdr). False if neither gives
 * any or this is not x86_64; then no object is ever found.
 */
bool cfi_obj_init(void);

/*
 * Describe the loaded object holding addr, without a lock (_dl_find_object, or the
 * start-up list) and without a fault. False if no object holds it or its headers look wrong.
 */
bool cfi_obj_find(uintptr_t addr, struct cfi_obj *o);

/*
 * True if ra can be a return address: ra - 1 lies in an executable segment of a loaded
 * object and a call instruction ends at ra. Uncached; never faults.
 */
bool cfi_text_at(uintptr_t ra);

/*
 * What the text before ra says, strictly (code that cannot be read says nothing):
 * CALL_YES a call instruction ends at ra, in readable executable text of a loaded
 * object, and *target is what a direct call (e8 rel32) calls, 0 for an indirect one;
 * CALL_NO that text can be read and no call ends at ra; CALL_UNKNOWN otherwise.
 * Uncached; never faults.
 */
enum cfi_call { CALL_UNKNOWN, CALL_NO, CALL_YES };
enum cfi_call cfi_call_at(uintptr_t ra, uintptr_t *target);

/* Whether pc is the first byte of a signal return trampoline (mov $15, %rax; syscall),
 * as glibc's and musl's __restore_rt are, in readable text of o. */
bool cfi_sigreturn_at(const struct cfi_obj *o, uintptr_t pc);

/* End of o's PT_LOAD with all of flags that holds [a, a + len), or 0. */
uintptr_t cfi_seg_end(const struct cfi_obj *o, uintptr_t a, uintptr_t len, unsigned flags);

#endif
