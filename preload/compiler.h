/*
 * The compiler words every file of heapprof.so uses: symbol visibility, thread-local
 * storage, branch hints, and the registers scrubbed on the way back to the program.
 * Nothing else, so that any file may include it.
 */
#ifndef HP_COMPILER_H
#define HP_COMPILER_H

#define HP_HIDDEN __attribute__((visibility("hidden")))
/* the libc and C++ names heapprof.so stands in for, and heapprof_api_v1: nothing else
 * (the exports layer: hooks.c, new_delete.c, exports.c, sigmask.c, api.c) */
#define HP_EXPORT __attribute__((visibility("default")))
#ifdef HP_ATTACH
/* heapprof-attach.so is dlopen()ed into a running process: the static TLS was sized at
 * its start, without room for ours */
#define HP_TLS_MODEL __attribute__((tls_model("global-dynamic")))
#else
#define HP_TLS_MODEL __attribute__((tls_model("initial-exec")))
#endif
#define HP_TLS __thread HP_TLS_MODEL
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Zero the caller-saved registers but the one that returns a value, on the way back to
 * the program from a path that held a block header's words: the program's next
 * variadic call saves its argument registers on its stack, and a scan took such a
 * stale tag there, after a return address whose upper half named a known site, for a
 * damaged header. x86-64 and aarch64; nothing elsewhere.
 */
#if defined(__x86_64__)
#define HP_SCRUB_REGS "xor %%ecx,%%ecx; xor %%edx,%%edx; xor %%esi,%%esi; xor %%edi,%%edi; " \
	"xor %%r8d,%%r8d; xor %%r9d,%%r9d; xor %%r10d,%%r10d; xor %%r11d,%%r11d"
#define HP_SCRUB() __asm__ volatile(HP_SCRUB_REGS ::: "rcx", "rdx", "rsi", "rdi", "r8", "r9", \
				    "r10", "r11", "cc")
#elif defined(__aarch64__)
#define HP_SCRUB_REGS "mov x1, xzr; mov x2, xzr; mov x3, xzr; mov x4, xzr; mov x5, xzr; " \
	"mov x6, xzr; mov x7, xzr; mov x8, xzr; mov x9, xzr; mov x10, xzr; mov x11, xzr; " \
	"mov x12, xzr; mov x13, xzr; mov x14, xzr; mov x15, xzr; mov x16, xzr; mov x17, xzr"
#define HP_SCRUB() __asm__ volatile(HP_SCRUB_REGS ::: "x1", "x2", "x3", "x4", "x5", "x6", \
				    "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", \
				    "x16", "x17")
#else
#define HP_SCRUB() do { } while (0)
#endif

#endif
