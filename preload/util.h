/*
 * Diagnostics, environment parsing, thread ids and clocks for heapprof.so: no stdio,
 * no malloc, so they are safe inside the hooks and before the real allocator is known.
 */
#ifndef HP_UTIL_H
#define HP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

/* Write "heapprof: " a b c "\n" to stderr with write(2); NULL parts are left out. */
void hp_warn(const char *a, const char *b, const char *c);

/*
 * Parse a decimal integer in [lo, hi] from the environment variable name. Unset or
 * empty: *out = def, true. Malformed or out of range: one warning, *out = def, false.
 */
bool hp_env_u64(const char *name, uint64_t lo, uint64_t hi, uint64_t def, uint64_t *out);

/* Kernel thread id of the caller, cached per thread (the fork handler zeroes the
 * cache in the child). Inline: every tagged block asks for it. */
extern HP_TLS uint32_t hp_tid_cache HP_HIDDEN;
HP_HIDDEN uint32_t hp_tid_slow(void);

static inline uint32_t hp_tid(void)
{
	uint32_t t = hp_tid_cache;

	return likely(t) ? t : hp_tid_slow();
}

/*
 * An anonymous private mapping of len bytes for heapprof's own use (extra: more MAP_*
 * flags), named own (HP2_OWN_*) in the map table; MAP_FAILED as mmap. hp_own_map is
 * what the map table's mmap reads, 0 outside this call.
 */
extern HP_TLS unsigned hp_own_map HP_HIDDEN;
HP_HIDDEN void *hp_map(size_t len, unsigned own, int extra);

/* The decimal digits of v at p (room for 21 bytes), NUL-terminated; returns the end,
 * at the NUL. */
HP_HIDDEN char *hp_utoa(char *p, uint64_t v);

/* ns of CLOCK_MONOTONIC_COARSE (cheap, vDSO): allocation times, seeds; 0 on failure. */
HP_HIDDEN uint64_t hp_now_ns(void);

/* -log(u) for u in (0, 1], a normal number; 1 - exp(-x) for x >= 0: sampling's
 * (libm's log and -expm1(-x), to a few ulps, without loading libm) */
HP_HIDDEN double hp_neg_log(double u);
HP_HIDDEN double hp_one_minus_exp_neg(double x);

/* One line of text built without stdio (snapshots, signal names), said through
 * hp_warn: what does not fit is cut. Async-signal-safe. */
struct hp_line {
	char buf[512];
	size_t n;
};
HP_HIDDEN void hp_line_add(struct hp_line *l, const char *s);
HP_HIDDEN void hp_line_num(struct hp_line *l, uint64_t v);
/* "2.53 s", "41 ms" or "370 us": a duration in the unit that reads best */
HP_HIDDEN void hp_line_ns(struct hp_line *l, uint64_t ns);
HP_HIDDEN void hp_line_say(struct hp_line *l);

/* A short text for errno value err, for lines on stderr: no locale, no allocation. */
HP_HIDDEN const char *hp_strerror(int err);

/* The signal s names for variable var: "USR2", "SIGUSR2", "12" or "RTMIN+3"; 0 after
 * one warning if none of those, or one heapprof cannot take (SIGKILL, SIGSEGV, ...). */
HP_HIDDEN int hp_signal_parse(const char *var, const char *s);

/* ns of CLOCK_MONOTONIC (exact, for durations a user reads). */
HP_HIDDEN uint64_t hp_clock_ns(void);

/*
 * Anonymous memory of len bytes (flags MAP_PRIVATE or MAP_SHARED, with MAP_ANONYMOUS
 * added; at addr with MAP_FIXED), and its release, by the system calls themselves:
 * not through heapprof.so's own mmap and munmap (maps.c), whose lock a thread may hold
 * when a snapshot's writer is forked, or when a signal interrupts it. MAP_FAILED / -1
 * with errno set.
 */
HP_HIDDEN void *hp_sys_mmap(void *addr, size_t len, int flags);
HP_HIDDEN int hp_sys_munmap(void *addr, size_t len);

#endif
