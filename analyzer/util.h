/*
 * Messages, exit codes and allocation for heapprof-analyze. Every message is one line
 * on stderr starting "heapprof-analyze: ".
 */
#ifndef HP_AUTIL_H
#define HP_AUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXIT_NO_REPORT 2	/* unreadable or unusable input: no report */
#define EXIT_USAGE 64		/* bad command line (sysexits EX_USAGE) */

extern bool util_quiet;		/* --quiet: no warnings */

/*
 * Messages: control characters and bytes that are not UTF-8 in what they quote are
 * escaped (escape.h), so that a path or name from the target cannot drive the
 * terminal. say() prints a line as it is, warn() one starting "warning: ".
 */
__attribute__((format(printf, 1, 2))) void say(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void warn(const char *fmt, ...);
__attribute__((format(printf, 2, 3), noreturn)) void die(int status, const char *fmt, ...);

/*
 * Hold warnings back until warn_release() prints them; die() drops them, so that a
 * run that fails says one line. Thread-safe.
 */
void warn_hold(void);
void warn_release(void);

/* Allocation that cannot fail: out of memory ends the run with EXIT_NO_REPORT. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* write(2) until done; -1 with errno on failure. */
int write_all(int fd, const void *buf, size_t n);

/*
 * Sort n elements of sz bytes (a multiple of 8) by the uint64_t each starts with,
 * stably, when they come in at most 64 ascending runs (the scan's threads each list
 * blocks going up; a heap's walk adds ranges going up). false, untouched, when there
 * are more runs: sort them another way.
 */
bool sort_runs(void *base, size_t n, size_t sz);

/*
 * The index of key in v[0..n), sorted ascending without repeats, or SIZE_MAX: a
 * lower-bound search. Inline: the heap graph asks it for every word it reads.
 */
static inline size_t sorted_find_u64(const uint64_t *v, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == key ? lo : SIZE_MAX;
}

/* Parse a number in decimal, or hex with 0x; false on junk or overflow. */
bool parse_u64(const char *s, unsigned long long *out);

#endif
