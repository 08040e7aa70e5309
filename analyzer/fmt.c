/*
 * Numbers and durations for people (fmt.h): digit groups, binary units, seconds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"

const char *fmt_thousands(uint64_t v, char *buf)
{
	char tmp[FMT_BUF];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), k = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = tmp[i];
	}
	buf[k] = 0;
	return buf;
}

const char *fmt_signed_thousands(int64_t v, char *buf)
{
	char tmp[FMT_BUF];

	buf[0] = v < 0 ? '-' : '+';
	fmt_thousands(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, tmp);
	strcpy(buf + 1, tmp);
	return buf;
}

const char *fmt_bytes(uint64_t v, char *buf)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double x = (double)v;
	int u = -1;

	if (v < 1024) {
		snprintf(buf, FMT_BUF, "%llu B", (unsigned long long)v);
		return buf;
	}
	while (x >= 1024 && u < 5) {
		x /= 1024;
		u++;
	}
	snprintf(buf, FMT_BUF, "%.1f %s", x, unit[u]);
	return buf;
}

const char *fmt_seconds(uint64_t ns, char *buf)
{
	if (ns >= 1000000000u)
		snprintf(buf, FMT_BUF, "%.3f s", (double)ns / 1e9);
	else
		snprintf(buf, FMT_BUF, "%.1f ms", (double)ns / 1e6);
	return buf;
}

const char *fmt_span(uint64_t ns, char *buf)
{
	if (ns >= 1000000000u)
		snprintf(buf, FMT_BUF, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000u)
		snprintf(buf, FMT_BUF, "%.1f ms", (double)ns / 1e6);
	else if (ns >= 1000u)
		snprintf(buf, FMT_BUF, "%" PRIu64 " us", ns / 1000);
	else
		snprintf(buf, FMT_BUF, "%" PRIu64 " ns", ns);
	return buf;
}
