/*
 * A DURATION as both halves read it: HEAPPROF_INTERVAL (heapprof.so) and --older-than
 * (heapprof-analyze). Header only, since heapprof.so links nothing of the analyzer;
 * libc only, and no allocation, so that the preload can read its options with it.
 *
 *   DURATION = DIGITS [ "." DIGITS ] [ UNIT ]      UNIT = ms | s | m | min | h | d
 *
 * No unit is seconds. No sign, space, exponent or hexadecimal: "1.5h", "90s", "500ms",
 * "2d" and "30" are durations; "+5s", " 5s", "1e3ms", ".5s" and "5.s" are not.
 */
#ifndef HEAPPROF_DURATION_H
#define HEAPPROF_DURATION_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The largest duration read, in ms: it fits an int64_t. */
#define HP_DURATION_MAX_MS ((uint64_t)INT64_MAX)

/*
 * s in milliseconds into *ms, rounded down (a fraction counts to its ninth digit; the
 * digits past it are read and left out): true; false, *ms untouched, when s is NULL,
 * not a DURATION or more than HP_DURATION_MAX_MS.
 */
static inline bool hp_duration_ms(const char *s, uint64_t *ms)
{
	static const struct {
		const char *name;
		uint64_t ms;
	} units[] = {
		{ "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "min", 60000 },
		{ "h", 3600000 }, { "d", 86400000 },
	};
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *p = s;

	if (!p || *p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > HP_DURATION_MAX_MS / 10)
			return false;	/* over any unit's limit already */
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		if (*++p < '0' || *p > '9')
			return false;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (scale < 1000000000) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
		}
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t u = units[i].ms, v;

		if (strcmp(p, units[i].name))
			continue;
		/* frac < scale <= 1e9 and u < 1e8: frac * u cannot overflow */
		if (whole > HP_DURATION_MAX_MS / u ||
		    (v = whole * u) > HP_DURATION_MAX_MS - frac * u / scale)
			return false;
		*ms = v + frac * u / scale;
		return true;
	}
	return false;
}

#endif
