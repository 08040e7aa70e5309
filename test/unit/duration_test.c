/*
 * Unit test of hp_duration_ms (include/heapprof_duration.h), the one reader of a
 * DURATION for HEAPPROF_INTERVAL and --older-than: each form and unit, fractions to
 * the millisecond, the limits, and what it refuses. t0009 checks that both halves
 * take the same forms.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "heapprof_duration.h"
#include "tap.h"

/* s reads as want ms */
static void is(const char *s, uint64_t want)
{
	uint64_t ms = UINT64_MAX;
	bool read = hp_duration_ms(s, &ms);

	ok(read && ms == want, "'%s' is %" PRIu64 " ms (got %s %" PRIu64 ")", s, want,
	   read ? "true" : "false", ms);
}

/* s is refused and *ms left as it was */
static void refused(const char *s, const char *why)
{
	uint64_t ms = 12345;

	ok(!hp_duration_ms(s, &ms) && ms == 12345, "'%s' is refused: %s", s, why);
}

int main(void)
{
	is("30", 30000);
	is("0", 0);
	is("0s", 0);
	is("500ms", 500);
	is("90s", 90000);
	is("5m", 300000);
	is("5min", 300000);
	is("2h", 7200000);
	is("1d", 86400000);
	is("007s", 7000);
	is("1.5h", 5400000);
	is("0.5", 500);
	is("1.5ms", 1);			/* rounded down */
	is("1.005s", 1005);		/* 1.005 * 1000 in a double is 1004.999...: no double */
	is("1.1s", 1100);
	is("0.0001s", 0);
	is("2.999999999999s", 2999);	/* digits past the ninth read, left out */
	is("0.000000001d", 0);
	is("0.999999999d", 86399999);
	is("9223372036854775807ms", 9223372036854775807ULL);
	is("9223372036854775.807s", 9223372036854775807ULL);
	is("106751991167d", 106751991167ULL * 86400000);

	refused(NULL, "no string");
	refused("", "no digits");
	refused("s", "no digits");
	refused("ms", "no digits");
	refused("5x", "no such unit");
	refused("5 s", "a space");
	refused(" 5s", "a space");
	refused("5s ", "a space");
	refused("+5s", "a sign");
	refused("-5s", "a sign");
	refused("1e3ms", "an exponent");
	refused("0x10", "hexadecimal");
	refused(".5s", "no digit before the point");
	refused("5.s", "no digit after the point");
	refused("5..0s", "two points");
	refused("1,5s", "a comma");
	refused("nan", "not a number");
	refused("inf", "not a number");
	refused("5S", "units are lowercase");
	refused("5sec", "no such unit");
	refused("5hm", "one unit");
	refused("9223372036854775808ms", "over INT64_MAX ms");
	refused("9223372036854775.808s", "over INT64_MAX ms by the fraction");
	refused("106751991168d", "over INT64_MAX ms");
	refused("99999999999999999999999", "more digits than any count");
	return tap_done();
}
