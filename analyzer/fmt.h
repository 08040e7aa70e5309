/*
 * Numbers and durations as the reports print them: "1,234,567", "+1,234", "1.5 KiB",
 * "1.235 s". Below everything that writes a report, so that the report, its sections
 * and its writers share one way of saying a figure.
 */
#ifndef HP_FMT_H
#define HP_FMT_H

#include <stdint.h>

/* Each writes into buf, which must hold FMT_BUF bytes, and returns it. */
#define FMT_BUF 32

/* 1234567 -> "1,234,567" */
const char *fmt_thousands(uint64_t v, char *buf);
/* -1234 -> "-1,234", 5 -> "+5" */
const char *fmt_signed_thousands(int64_t v, char *buf);
/* 1536 -> "1.5 KiB"; below 1 KiB the exact count ("512 B") */
const char *fmt_bytes(uint64_t v, char *buf);
/* ns: 1234567890 -> "1.235 s"; below a second "12.3 ms" */
const char *fmt_seconds(uint64_t ns, char *buf);
/* ns, to the unit that fits: "640 ns", "812 us", "12.3 ms", "1.234 s" */
const char *fmt_span(uint64_t ns, char *buf);

#endif
