/*
 * Spooling an input that cannot be mapped as it is (compressed, or from a pipe) into
 * an unlinked temporary file under $TMPDIR, chunk by chunk, so memory use stays small
 * whatever its size. Decompression is source.c's; what the input is and how long its
 * headers say it is, its reader's sizer (spool.h): this file knows no format.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "source.h"
#include "spool.h"
#include "util.h"

/*
 * An input is checked while it is copied, against what its own headers promise (its
 * sizer reads them): more data than that is a decompression bomb or appended junk,
 * and copying stops there.
 */
struct spool {
	const char *path, *dir;
	const char *inside;	/* "gzip", "zstd", "xz", or NULL: plain from a pipe */
	const char *verb;	/* "inflate" or "copy", for messages */
	bool progress;		/* stderr is a terminal: say how far a big copy is */
	struct timespec last_progress;
	int out;
	uint64_t total;		/* bytes written to out */
	uint64_t stored;	/* of them not holes: what takes disk */
	const struct src *src;	/* for the compressed bytes read so far */
	uint64_t promise;	/* file size the headers read so far promise */
	const struct spool_sizer *(*known)(const unsigned char *head, size_t len);
	const struct spool_sizer *sizer; /* the first chunk's */
	void *state;		/* the sizer's */
	char *err;
	size_t errlen;
};

#define SPOOL_CHUNK (1u << 20)

/*
 * Pages of zeros cost nothing, but a small stream can also inflate to gigabytes of
 * other bytes, within what its headers promise: past SPOOL_RATIO_FLOOR of data, the
 * copy may hold at most max_ratio times the compressed bytes read (0: no limit).
 * Real cores inflate 3 to 30 times, the zero pages aside.
 */
#define SPOOL_RATIO_FLOOR (64ull << 20)
static uint64_t max_ratio = SPOOL_DEFAULT_RATIO;

void spool_set_max_ratio(uint64_t ratio)
{
	max_ratio = ratio;
}

static uint64_t max_size;

void spool_set_max_size(uint64_t bytes)
{
	max_size = bytes;
}

static int spool_check_ratio(struct spool *z)
{
	uint64_t in = z->src->in_bytes, limit;

	if (!z->inside || !max_ratio || z->stored <= SPOOL_RATIO_FLOOR)
		return 0;
	if (__builtin_mul_overflow(in, max_ratio, &limit) || z->stored <= limit)
		return 0;
	snprintf(z->err, z->errlen, "'%s' inflates to more than %llu times its %llu compressed "
		 "bytes (%llu bytes of data so far): a decompression bomb, or a core that "
		 "compresses uncommonly well (--max-ratio=0 lifts the limit)", z->path,
		 (unsigned long long)max_ratio, (unsigned long long)in,
		 (unsigned long long)z->stored);
	return -1;
}

/* The input is not one the sizer knows: say so, and why. */
static int spool_not_input(struct spool *z, const char *why)
{
	const char *what = z->sizer ? z->sizer->what : "an input heapprof-analyze reads";

	if (z->inside)
		snprintf(z->err, z->errlen, "'%s' is not %s (inside %s): %s", z->path, what,
			 z->inside, why);
	else
		snprintf(z->err, z->errlen, "'%s' is not %s: %s", z->path, what, why);
	return -1;
}

/*
 * Room for what is left to write, asked before writing it, not found by ENOSPC; and
 * no more than --max-size allows.
 */
static int spool_check_space(struct spool *z)
{
	struct statvfs sv;
	uint64_t avail;

	if (max_size && z->promise > max_size) {
		snprintf(z->err, z->errlen, "'%s' is too big: its %ss promise %llu bytes, more "
			 "than --max-size=%llu", z->path, z->sizer->header,
			 (unsigned long long)z->promise, (unsigned long long)max_size);
		return -1;
	}
	if (fstatvfs(z->out, &sv) < 0)
		return 0;	/* cannot tell: writing will say */
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (z->promise - z->total <= avail)
		return 0;
	snprintf(z->err, z->errlen, "cannot %s '%s' into %s: its %ss promise %llu bytes but "
		 "only %llu are free there (set TMPDIR to a roomier directory)", z->verb, z->path,
		 z->dir, z->sizer->header, (unsigned long long)z->promise,
		 (unsigned long long)avail);
	return -1;
}

/* From the first chunk: which input it starts, and the size that one's header says. */
static int spool_start(struct spool *z, const unsigned char *b, size_t n)
{
	char why[200];

	z->sizer = z->known(b, n);
	if (z->sizer->start(&z->state, b, n, &z->promise, why, sizeof(why)) < 0)
		return spool_not_input(z, why);
	return 0;
}

/* After a chunk: the headers complete by now may promise more; room for it, then. */
static int spool_grow(struct spool *z)
{
	uint64_t before = z->promise;
	char why[200];

	if (z->sizer->more(z->state, z->out, z->total, &z->promise, why, sizeof(why)) < 0)
		return spool_not_input(z, why);
	return z->promise > before ? spool_check_space(z) : 0;
}

#define SPOOL_PAGE 4096u

static bool spool_zero(const unsigned char *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

/* The next piece of b that is all zeros or none: up to the next page boundary of the file. */
static size_t spool_piece(uint64_t off, size_t n)
{
	size_t k = SPOOL_PAGE - (size_t)(off % SPOOL_PAGE);

	return k < n ? k : n;
}

/*
 * Put n bytes at the end of the copy. Pages of zeros are left as holes (spool_core
 * sets the size at the end): a core's untouched memory, and a decompression bomb's
 * gigabytes of zeros, then cost no disk; only what the stream really holds is stored.
 */
static int spool_store(struct spool *z, const unsigned char *b, size_t n)
{
	uint64_t off = z->total;

	while (n) {
		size_t k = spool_piece(off, n);
		bool zero = spool_zero(b, k);

		/* a run of pieces of the same kind, written (or skipped) at once */
		while (k < n) {
			size_t more = spool_piece(off + k, n - k);

			if (spool_zero(b + k, more) != zero)
				break;
			k += more;
		}
		if (!zero)
			z->stored += k;
		for (size_t done = 0; !zero && done < k;) {
			ssize_t w = pwrite(z->out, b + done, k - done, (off_t)(off + done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w == 0)
				errno = ENOSPC;
			if (w <= 0)
				return -1;
			done += (size_t)w;
		}
		off += k;
		b += k;
		n -= k;
	}
	return 0;
}

/*
 * Write one chunk, as much of it as the headers promise; returns 1 when the stream
 * holds more than that (stop reading), 0 to go on, -1 with err set.
 */
static int spool_write(struct spool *z, const unsigned char *b, size_t n)
{
	if (z->total == 0 && (spool_start(z, b, n) < 0 || spool_check_space(z) < 0))
		return -1;
	/* the headers read from this chunk may promise more of the same chunk */
	while (n) {
		size_t k = n > z->promise - z->total ? (size_t)(z->promise - z->total) : n;

		if (k == 0)
			return 1;	/* more than the headers promise */
		if (spool_store(z, b, k) < 0) {
			snprintf(z->err, z->errlen, "cannot %s '%s' into %s: %s (it needs %llu "
				 "bytes; set TMPDIR to a roomier directory)", z->verb, z->path, z->dir,
				 strerror(errno), (unsigned long long)z->promise);
			return -1;
		}
		z->total += k;
		b += k;
		n -= k;
		if (spool_check_ratio(z) < 0 || spool_grow(z) < 0)
			return -1;
	}
	return 0;
}

#define SPOOL_PROGRESS_MIN (1ull << 30)

/*
 * "inflating 'core.zst': 1.5 of 3.2 GiB (46%)" on stderr, at most twice a second, for
 * cores over 1 GiB and only when stderr is a terminal; end erases the line.
 */
static void spool_progress(struct spool *z, bool end)
{
	struct timespec now;
	double gib = 1024.0 * 1024 * 1024;
	char path[1024];

	if (!z->progress || z->promise < SPOOL_PROGRESS_MIN)
		return;
	if (end) {
		fputs("\r\033[K", stderr);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - z->last_progress.tv_sec) * 1000000000LL +
	    (now.tv_nsec - z->last_progress.tv_nsec) < 500000000LL)
		return;
	z->last_progress = now;
	escape_into(path, sizeof(path), z->path);	/* the line's own escapes only */
	fprintf(stderr, "\rheapprof-analyze: %s '%s': %.1f of %.1f GiB (%u%%)\033[K",
		z->inside ? "inflating" : "reading", path, z->total / gib, z->promise / gib,
		(unsigned)(z->total * 100 / z->promise));
}

/* As many bytes as fit in buf, unless the stream ends first: a pipe gives them piecemeal. */
static size_t spool_read_chunk(struct src *s, unsigned char *buf, size_t size)
{
	size_t n = 0, k;

	while (n < size && (k = src_read(s, buf + n, size - n)) > 0)
		n += k;
	return n;
}

/* After the stream ended early, badly, or past the promise: say so, keep what we have. */
static void spool_warn_end(struct spool *z, const struct src *s, int stop)
{
	if (stop == 1)
		warn("'%s' %s to more than the %llu bytes its %ss promise; the rest is "
		     "ignored (%s, or data appended to the core)", z->path,
		     z->inside ? "inflates" : "runs on", (unsigned long long)z->promise,
		     z->sizer->header, z->inside ? "a decompression bomb" : "junk");
	else if (s->end == SRC_CUT)
		warn("'%s': %s stream is cut short after %llu bytes; the rest of the core is "
		     "missing", z->path, z->inside, (unsigned long long)z->total);
	else if (s->end == SRC_DAMAGED)
		warn("'%s' is a damaged %s file (%s) after %llu bytes; using what was read "
		     "before the damage", z->path, z->inside ? z->inside : "core", s->msg,
		     (unsigned long long)z->total);
	else if (z->total < z->promise)
		warn("'%s' ends after %llu of the %llu bytes its %ss promise; the rest of "
		     "the core is missing", z->path, (unsigned long long)z->total,
		     (unsigned long long)z->promise, z->sizer->header);
}

/* Why nothing at all could be read: the header never came. */
static int spool_empty(struct spool *z, const struct src *s)
{
	char why[100];

	z->sizer = z->known(NULL, 0);	/* the one that explains */
	snprintf(why, sizeof(why), "its stream is cut short before the %s", z->sizer->header);
	if (s->end == SRC_CUT)
		return spool_not_input(z, why);
	if (s->end == SRC_DAMAGED)
		return spool_not_input(z, s->msg);
	return spool_not_input(z, "nothing inside");
}

#define SPOOL_CHECK_MAX (1ull << 30)

/*
 * After the copy failed on what a compressed core's headers say (no core, a size past
 * any file or the free room): damage in the compressed data inflates to garbage that
 * reads as such headers, and only the check value at the end of the gzip member or
 * zstd/xz frame tells. Inflate on, up to 1 GiB more and writing nothing, to blame the
 * input when it is damaged.
 */
static void spool_blame_damage(struct spool *z, struct src *s, unsigned char *buf, size_t size)
{
	uint64_t n = 0;
	size_t k;

	if (!z->inside)
		return;
	while (s->end == SRC_MORE && n < SPOOL_CHECK_MAX && (k = src_read(s, buf, size)) > 0)
		n += k;
	if (s->end == SRC_DAMAGED)
		snprintf(z->err, z->errlen, "'%s' is a damaged %s file: %s", z->path, z->inside,
			 s->msg);
}

int spool_input(struct src *s, const char *path,
		const struct spool_sizer *(*known)(const unsigned char *head, size_t len),
		char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	char tmp[4096];
	unsigned char *buf;	/* the heap's: dumps are spooled side by side (-j) */
	struct spool z = { .path = path, .err = err, .errlen = errlen, .inside = s->name, .src = s,
			   .known = known };
	size_t n;
	int stop = 0;

	z.verb = s->name ? "inflate" : "copy";
	z.progress = isatty(STDERR_FILENO);
	z.dir = dir && *dir ? dir : "/tmp";
	snprintf(tmp, sizeof(tmp), "%s/heapprof-core.XXXXXX", z.dir);
	z.out = mkstemp(tmp);
	if (z.out < 0) {
		snprintf(err, errlen, "cannot create a temporary file to %s '%s': %s (set TMPDIR)",
			 z.verb, path, strerror(errno));
		return -1;
	}
	unlink(tmp);
	buf = xmalloc(SPOOL_CHUNK);
	/* a file size limit (ulimit -f) is then an error message, not a kill */
	signal(SIGXFSZ, SIG_IGN);
	while (stop == 0 && (n = spool_read_chunk(s, buf, SPOOL_CHUNK)) > 0) {
		stop = spool_write(&z, buf, n);
		spool_progress(&z, false);
	}
	spool_progress(&z, true);
	if (stop == 0 && z.total == 0)
		stop = spool_empty(&z, s);
	else if (stop >= 0)
		spool_warn_end(&z, s, stop);
	/* the copy ends where the bytes read end, a hole or not */
	if (stop >= 0 && ftruncate(z.out, (off_t)z.total) < 0) {
		snprintf(err, errlen, "cannot %s '%s' into %s: %s (it needs %llu bytes; set "
			 "TMPDIR to a roomier directory)", z.verb, path, z.dir, strerror(errno),
			 (unsigned long long)z.total);
		stop = -1;
	}
	free(z.state);
	if (stop < 0) {
		close(z.out);
		spool_blame_damage(&z, s, buf, SPOOL_CHUNK);
		free(buf);
		return -1;
	}
	free(buf);
	return z.out;
}
