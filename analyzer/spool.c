/*
 * Spooling a core that cannot be mapped as it is (compressed, or from a pipe) into an
 * unlinked temporary file under $TMPDIR, chunk by chunk, so memory use stays small
 * whatever the core's size. Decompression is source.c's; ELF parsing proper stays in
 * image_core.c: this file reads only the few header fields that bound the copy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "rd.h"
#include "source.h"
#include "spool.h"
#include "util.h"

/*
 * A core is checked while it is copied, against what its own ELF headers promise:
 * the ELF header first (from the first chunk, before anything is written), then the
 * size the file must have to hold its header tables and every segment and section.
 * More data than that is a decompression bomb or appended junk: copying stops there.
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
	bool big_endian;
	unsigned wsize;		/* 4 or 8: ELFCLASS32 or ELFCLASS64 */
	uint64_t phoff, shoff;
	uint64_t phnum;		/* from e_phnum, or section 0's sh_info past PN_XNUM */
	unsigned phentsize, shentsize, shnum;
	bool phnum_known, phdrs_read, shdrs_read;
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

/* A 4- or 8-byte field at p in the core's byte order. */
static uint64_t spool_field(const struct spool *z, const unsigned char *p, unsigned size)
{
	struct rd r = { p, size, z->big_endian };
	uint64_t v = 0;
	uint32_t v32;
	uint16_t v16;

	if (size == 8)
		rd_u64(&r, &v);
	else if (size == 4 && rd_u32(&r, &v32))
		v = v32;
	else if (size == 2 && rd_u16(&r, &v16))
		v = v16;
	return v;
}

static int spool_not_core(struct spool *z, const char *why)
{
	if (z->inside)
		snprintf(z->err, z->errlen, "'%s' is not an ELF core (inside %s): %s", z->path,
			 z->inside, why);
	else
		snprintf(z->err, z->errlen, "'%s' is not an ELF core: %s", z->path, why);
	return -1;
}

/* Raise the promise to off + size; -1 when that passes 2^64. */
static int spool_promise(struct spool *z, uint64_t off, uint64_t size)
{
	uint64_t end;

	/* off_t is signed: past INT64_MAX is no file offset at all */
	if (__builtin_add_overflow(off, size, &end) || end > INT64_MAX)
		return spool_not_core(z, "its headers point past the end of any file");
	if (end > z->promise)
		z->promise = end;
	return 0;
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
		snprintf(z->err, z->errlen, "'%s' is too big: its ELF headers promise %llu bytes, "
			 "more than --max-size=%llu", z->path, (unsigned long long)z->promise,
			 (unsigned long long)max_size);
		return -1;
	}
	if (fstatvfs(z->out, &sv) < 0)
		return 0;	/* cannot tell: writing will say */
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (z->promise - z->total <= avail)
		return 0;
	snprintf(z->err, z->errlen, "cannot %s '%s' into %s: its ELF headers promise %llu "
		 "bytes but only %llu are free there (set TMPDIR to a roomier directory)", z->verb,
		 z->path, z->dir, (unsigned long long)z->promise, (unsigned long long)avail);
	return -1;
}

/* The ELF header, from the first bytes; -1 unless it is an ELF core's. */
static int spool_read_ehdr(struct spool *z, const unsigned char *b, size_t n)
{
	unsigned off = 0;
	uint64_t ehsize;

	if (n < EI_NIDENT || memcmp(b, ELFMAG, SELFMAG))
		return spool_not_core(z, "no ELF header");
	if ((b[EI_CLASS] != ELFCLASS32 && b[EI_CLASS] != ELFCLASS64) ||
	    (b[EI_DATA] != ELFDATA2LSB && b[EI_DATA] != ELFDATA2MSB))
		return spool_not_core(z, "unknown ELF class or byte order");
	z->wsize = b[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	z->big_endian = b[EI_DATA] == ELFDATA2MSB;
	ehsize = z->wsize == 8 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (n < ehsize)
		return spool_not_core(z, "its ELF header is cut short");
	if (spool_field(z, b + EI_NIDENT, 2) != ET_CORE)
		return spool_not_core(z, "an ELF file of another type");
	/* e_type, e_machine, e_version, e_entry, then e_phoff and e_shoff */
	off = EI_NIDENT + 2 + 2 + 4 + z->wsize;
	z->phoff = spool_field(z, b + off, z->wsize);
	z->shoff = spool_field(z, b + off + z->wsize, z->wsize);
	/* e_flags, e_ehsize, then e_phentsize, e_phnum, e_shentsize, e_shnum */
	off += 2 * z->wsize + 4 + 2;
	z->phentsize = (unsigned)spool_field(z, b + off, 2);
	z->phnum = spool_field(z, b + off + 2, 2);
	z->shentsize = (unsigned)spool_field(z, b + off + 4, 2);
	z->shnum = (unsigned)spool_field(z, b + off + 6, 2);
	if (z->phnum && z->phentsize != (z->wsize == 8 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return spool_not_core(z, "unexpected program header size");
	if (z->shoff && z->shentsize != (z->wsize == 8 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
		return spool_not_core(z, "unexpected section header size");
	z->promise = ehsize;
	z->phnum_known = z->phnum != PN_XNUM;
	if (z->phnum_known && spool_promise(z, z->phoff, z->phnum * z->phentsize) < 0)
		return -1;
	/* section 0 is there even when e_shnum is 0: it holds the real counts then */
	if (z->shoff && spool_promise(z, z->shoff, (z->shnum ? z->shnum : 1) * (uint64_t)z->shentsize) < 0)
		return -1;
	z->shdrs_read = !z->shoff;
	return 0;
}

/*
 * Raise the promise to cover each entry of a header table (program headers: offset
 * and file size; sections: offset and size, but SHT_NOBITS has no bytes).
 */
static int spool_read_table(struct spool *z, uint64_t off, uint64_t n, bool phdrs)
{
	unsigned char e[sizeof(Elf64_Shdr)];
	unsigned es = phdrs ? z->phentsize : z->shentsize, w = z->wsize;
	/* offsets of (p_offset, p_filesz) or (sh_offset, sh_size) in an entry */
	unsigned o_off = phdrs ? (w == 8 ? 8 : 4) : (w == 8 ? 24 : 16);
	unsigned o_size = phdrs ? (w == 8 ? 32 : 16) : (w == 8 ? 32 : 20);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t size;

		if (pread(z->out, e, es, (off_t)(off + i * es)) != (ssize_t)es)
			return spool_not_core(z, "cannot read back its headers");
		size = spool_field(z, e + o_size, w);
		if (!phdrs && spool_field(z, e + 4, 4) == SHT_NOBITS)
			continue;
		if (size && spool_promise(z, spool_field(z, e + o_off, w), size) < 0)
			return -1;
	}
	return 0;
}

/* Read each header table once it has all been written; the promise grows with them. */
static int spool_read_tables(struct spool *z)
{
	uint64_t before = z->promise;

	if (!z->phnum_known && z->total >= z->shoff + z->shentsize) {
		unsigned char e[sizeof(Elf64_Shdr)];

		/* too many segments for e_phnum: section 0's sh_info has the count */
		if (!z->shoff || pread(z->out, e, z->shentsize, (off_t)z->shoff) != z->shentsize)
			return spool_not_core(z, "PN_XNUM program headers without section 0");
		z->phnum = spool_field(z, e + (z->wsize == 8 ? 44 : 28), 4);
		z->phnum_known = true;
		if (spool_promise(z, z->phoff, z->phnum * z->phentsize) < 0)
			return -1;
	}
	if (!z->phdrs_read && z->phnum_known &&
	    z->total >= z->phoff + z->phnum * z->phentsize) {
		z->phdrs_read = true;
		if (spool_read_table(z, z->phoff, z->phnum, true) < 0)
			return -1;
	}
	if (!z->shdrs_read && z->total >= z->shoff + z->shnum * (uint64_t)z->shentsize) {
		z->shdrs_read = true;
		if (spool_read_table(z, z->shoff, z->shnum, false) < 0)
			return -1;
	}
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
	if (z->total == 0 && (spool_read_ehdr(z, b, n) < 0 || spool_check_space(z) < 0))
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
		if (spool_check_ratio(z) < 0 || spool_read_tables(z) < 0)
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
		warn("'%s' %s to more than the %llu bytes its ELF headers promise; the rest is "
		     "ignored (%s, or data appended to the core)", z->path,
		     z->inside ? "inflates" : "runs on", (unsigned long long)z->promise,
		     z->inside ? "a decompression bomb" : "junk");
	else if (s->end == SRC_CUT)
		warn("'%s': %s stream is cut short after %llu bytes; the rest of the core is "
		     "missing", z->path, z->inside, (unsigned long long)z->total);
	else if (s->end == SRC_DAMAGED)
		warn("'%s' is a damaged %s file (%s) after %llu bytes; using what was read "
		     "before the damage", z->path, z->inside ? z->inside : "core", s->msg,
		     (unsigned long long)z->total);
	else if (z->total < z->promise)
		warn("'%s' ends after %llu of the %llu bytes its ELF headers promise; the rest of "
		     "the core is missing", z->path, (unsigned long long)z->total,
		     (unsigned long long)z->promise);
}

/* Why nothing at all could be read: the ELF header never came. */
static int spool_empty(struct spool *z, const struct src *s)
{
	if (s->end == SRC_CUT)
		return spool_not_core(z, "its stream is cut short before the ELF header");
	if (s->end == SRC_DAMAGED)
		return spool_not_core(z, s->msg);
	return spool_not_core(z, "nothing inside");
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

int spool_core(struct src *s, const char *path, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	char tmp[4096];
	static unsigned char buf[SPOOL_CHUNK];
	struct spool z = { .path = path, .err = err, .errlen = errlen, .inside = s->name, .src = s };
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
	/* a file size limit (ulimit -f) is then an error message, not a kill */
	signal(SIGXFSZ, SIG_IGN);
	while (stop == 0 && (n = spool_read_chunk(s, buf, sizeof(buf))) > 0) {
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
	if (stop < 0) {
		close(z.out);
		spool_blame_damage(&z, s, buf, sizeof(buf));
		return -1;
	}
	return z.out;
}
