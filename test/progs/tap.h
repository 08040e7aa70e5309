/*
 * The test programs' report lines, as test/run counts them: "ok N - what",
 * "not ok N - what", "ok N - what # SKIP why", and a closing "N passed, N failed,
 * N skipped". Header-only: each test program has one set of counters.
 */
#ifndef HP_TEST_TAP_H
#define HP_TEST_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static unsigned tap_n, tap_passed, tap_failed, tap_skipped;

/* One check; returns cond so a test can stop early. */
__attribute__((format(printf, 2, 3), unused)) static bool ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %u - ", cond ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (cond)
		tap_passed++;
	else
		tap_failed++;
	return cond;
}

__attribute__((unused)) static void skip(const char *what, const char *why)
{
	printf("ok %u - %s # SKIP %s\n", ++tap_n, what, why);
	fflush(stdout);
	tap_skipped++;
}

/* The closing line; the program's exit status. */
__attribute__((unused)) static int tap_done(void)
{
	printf("%u passed, %u failed, %u skipped\n", tap_passed, tap_failed, tap_skipped);
	return tap_failed != 0;
}

#endif
