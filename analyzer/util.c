/* Messages, exit codes and allocation for heapprof-analyze. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "escape.h"
#include "util.h"

bool util_quiet;

/* Warnings held back by warn_hold(), guarded: symbolization warns from its thread. */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static bool holding;
static char *held;
static size_t held_len;

#define LINE_MAX_BYTES 2048

/*
 * A message as one line of printable UTF-8: the paths and names it quotes come from the
 * target (a module's path, a core's name) and may hold control characters, so they
 * are escaped as the reports escape them (escape.h). Returns its length.
 */
static size_t format_line(char *line, const char *fmt, va_list ap)
{
	char raw[LINE_MAX_BYTES];

	if (vsnprintf(raw, sizeof(raw), fmt, ap) < 0)
		raw[0] = 0;
	return escape_into(line, LINE_MAX_BYTES, raw);
}

static void vsay(const char *prefix, const char *fmt, va_list ap)
{
	char line[LINE_MAX_BYTES];

	format_line(line, fmt, ap);
	fprintf(stderr, "heapprof-analyze: %s%s\n", prefix, line);
}

void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

void warn(const char *fmt, ...)
{
	char line[LINE_MAX_BYTES];
	va_list ap;
	size_t n;

	if (util_quiet)
		return;
	va_start(ap, fmt);
	n = format_line(line, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&held_lock);
	if (holding) {
		held = xrealloc(held, held_len + n + 1);
		memcpy(held + held_len, line, n + 1);
		held_len += n + 1;
	} else {
		fprintf(stderr, "heapprof-analyze: warning: %s\n", line);
	}
	pthread_mutex_unlock(&held_lock);
}

void warn_hold(void)
{
	pthread_mutex_lock(&held_lock);
	holding = true;
	pthread_mutex_unlock(&held_lock);
}

void warn_release(void)
{
	pthread_mutex_lock(&held_lock);
	for (size_t i = 0; i < held_len; i += strlen(held + i) + 1)
		fprintf(stderr, "heapprof-analyze: warning: %s\n", held + i);
	free(held);
	held = NULL;
	held_len = 0;
	holding = false;
	pthread_mutex_unlock(&held_lock);
}

void die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
	exit(status);
}

/*
 * The large arrays (a block list, the allocator's chunks, the graph's tables: tens of
 * bytes for each of a million blocks) are offered to transparent huge pages, which a
 * kernel in madvise mode gives only when asked: each 4 KiB page of them faulted in on
 * its own cost a third of the heap graph's time on a VM, where a fault is dear. The
 * advice covers the whole huge pages inside the block, so nothing else is affected.
 */
#define HUGE_PAGE ((uintptr_t)2 << 20)
#define HUGE_FROM ((size_t)4 << 20)

static void *advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	/* the range advised last (per thread): an array grown a little at a time
	 * (one stack more, by realloc) is advised again only when it moves or passes
	 * another huge page (a range unmapped and mapped again in there goes
	 * unadvised: only the advice is lost) */
	static _Thread_local uintptr_t done_lo, done_hi;
	uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t e = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);

	if (n >= HUGE_FROM && e > a && (a < done_lo || e > done_hi)) {
		madvise((void *)a, e - a, MADV_HUGEPAGE);	/* advice: failing is fine */
		done_lo = a;
		done_hi = e;
	}
#endif
	return p;
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die(EXIT_NO_REPORT, "out of memory (%zu bytes)", n);
	return advise_huge(p, n);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die(EXIT_NO_REPORT, "out of memory (%zu x %zu bytes)", n, size);
	return advise_huge(p, n * size);
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die(EXIT_NO_REPORT, "out of memory (%zu bytes)", n);
	return advise_huge(p, n);
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

bool parse_u64(const char *s, unsigned long long *out)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return !errno && !*end;
}

/*
 * sort_runs (util.h): the runs merged pairwise, each pair in place with a buffer the
 * size of its shorter run. A copy of the whole array made a block list of a million
 * blocks fault in as many pages again, for one or two runs that were mostly in order.
 */
static uint64_t first_word(const unsigned char *p)
{
	uint64_t k;

	memcpy(&k, p, sizeof(k));
	return k;
}

#define MAX_RUNS 64

/* one element: sz is a multiple of 8, so word copies the compiler inlines */
static inline void copy_elem(unsigned char *d, const unsigned char *s, size_t sz)
{
	for (size_t w = 0; w < sz; w += 8)
		memcpy(d + w, s + w, 8);
}

struct merge_buf {
	unsigned char *p;
	size_t cap;
};

static unsigned char *merge_room(struct merge_buf *buf, size_t bytes)
{
	if (bytes > buf->cap) {
		free(buf->p);
		buf->p = xmalloc(bytes);
		buf->cap = bytes;
	}
	return buf->p;
}

/* The first element of [lo, hi) whose key is above k (after), or at or above it. */
static size_t bound(const unsigned char *v, size_t lo, size_t hi, size_t sz, uint64_t k,
		    bool after)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t x = first_word(v + mid * sz);

		if (x < k || (after && x == k))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Merge the ascending runs [lo, mid) and [mid, hi) of v, stably. */
static void merge_pair(unsigned char *v, size_t lo, size_t mid, size_t hi, size_t sz,
		       struct merge_buf *buf)
{
	unsigned char *t;
	size_t nl, nr;

	if (lo == mid || mid == hi || first_word(v + (mid - 1) * sz) <= first_word(v + mid * sz))
		return;
	/* what is in place already: the left run's head below the right's first key,
	 * the right run's tail at or above the left's last */
	lo = bound(v, lo, mid, sz, first_word(v + mid * sz), true);
	hi = bound(v, mid, hi, sz, first_word(v + (mid - 1) * sz), false);
	nl = mid - lo;
	nr = hi - mid;
	if (nl <= nr) {	/* the left run aside, merged from the front */
		size_t i = 0, j = mid, k = lo;

		t = merge_room(buf, nl * sz);
		memcpy(t, v + lo * sz, nl * sz);
		while (i < nl && j < hi) {
			if (first_word(v + j * sz) < first_word(t + i * sz))
				copy_elem(v + k++ * sz, v + j++ * sz, sz);
			else
				copy_elem(v + k++ * sz, t + i++ * sz, sz);
		}
		memcpy(v + k * sz, t + i * sz, (nl - i) * sz);
	} else {	/* the right run aside, merged from the back */
		size_t i = mid, j = nr, k = hi;

		t = merge_room(buf, nr * sz);
		memcpy(t, v + mid * sz, nr * sz);
		while (i > lo && j > 0) {
			if (first_word(v + (i - 1) * sz) > first_word(t + (j - 1) * sz))
				copy_elem(v + --k * sz, v + --i * sz, sz);
			else
				copy_elem(v + --k * sz, t + --j * sz, sz);
		}
		memcpy(v + lo * sz, t, j * sz);
	}
}

bool sort_runs(void *base, size_t n, size_t sz)
{
	unsigned char *v = base;
	size_t b[MAX_RUNS + 1], nb = 0;
	struct merge_buf buf = { NULL, 0 };

	b[nb++] = 0;
	for (size_t i = 1; i < n; i++)
		if (first_word(v + i * sz) < first_word(v + (i - 1) * sz)) {
			if (nb == MAX_RUNS)
				return false;
			b[nb++] = i;
		}
	b[nb] = n;
	while (nb > 1) {
		size_t m = 0;

		for (size_t r = 0; r < nb; r += 2) {
			if (r + 1 < nb)
				merge_pair(v, b[r], b[r + 1], b[r + 2], sz, &buf);
			b[m++] = b[r];
		}
		b[m] = n;
		nb = m;
	}
	free(buf.p);
	return true;
}
