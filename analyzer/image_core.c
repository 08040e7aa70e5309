/*
 * ELF cores as images: every PT_LOAD's file bytes become a segment, read in place
 * from libelf's mapping of the file. gzip cores are inflated chunk by chunk into an
 * unlinked temporary file first, so memory use stays small whatever the core's size.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>

#include "image.h"
#include "rd.h"
#include "util.h"

static bool is_gzip(int fd)
{
	unsigned char m[2];

	return pread(fd, m, 2, 0) == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

/*
 * A gzip core is checked while it inflates, against what its own ELF headers promise:
 * the ELF header first (from the first chunk, before anything is written), then the
 * size the file must have to hold its header tables and every segment and section.
 * More inflated data than that is a gzip bomb or appended junk: inflation stops there.
 */
struct gz_core {
	const char *path, *dir;
	int out;
	uint64_t total;		/* bytes written to out */
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

#define GZ_CHUNK (1u << 20)

/* A 4- or 8-byte field at p in the core's byte order. */
static uint64_t gz_field(const struct gz_core *z, const unsigned char *p, unsigned size)
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

static int gz_not_core(struct gz_core *z, const char *why)
{
	snprintf(z->err, z->errlen, "'%s' is not an ELF core (inside gzip): %s", z->path, why);
	return -1;
}

/* Raise the promise to off + size; -1 when that passes 2^64. */
static int gz_promise(struct gz_core *z, uint64_t off, uint64_t size)
{
	uint64_t end;

	if (__builtin_add_overflow(off, size, &end))
		return gz_not_core(z, "its headers point past the end of any file");
	if (end > z->promise)
		z->promise = end;
	return 0;
}

/* Room for what is left to inflate, asked before writing it, not found by ENOSPC. */
static int gz_check_space(struct gz_core *z)
{
	struct statvfs sv;
	uint64_t avail;

	if (fstatvfs(z->out, &sv) < 0)
		return 0;	/* cannot tell: writing will say */
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (z->promise - z->total <= avail)
		return 0;
	snprintf(z->err, z->errlen, "cannot inflate '%s' into %s: its ELF headers promise %llu "
		 "bytes but only %llu are free there (set TMPDIR to a roomier directory)", z->path,
		 z->dir, (unsigned long long)z->promise, (unsigned long long)avail);
	return -1;
}

/* The ELF header, from the first inflated bytes; -1 unless it is an ELF core's. */
static int gz_read_ehdr(struct gz_core *z, const unsigned char *b, size_t n)
{
	unsigned off = 0;
	uint64_t ehsize;

	if (n < EI_NIDENT || memcmp(b, ELFMAG, SELFMAG))
		return gz_not_core(z, "no ELF header");
	if ((b[EI_CLASS] != ELFCLASS32 && b[EI_CLASS] != ELFCLASS64) ||
	    (b[EI_DATA] != ELFDATA2LSB && b[EI_DATA] != ELFDATA2MSB))
		return gz_not_core(z, "unknown ELF class or byte order");
	z->wsize = b[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	z->big_endian = b[EI_DATA] == ELFDATA2MSB;
	ehsize = z->wsize == 8 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (n < ehsize)
		return gz_not_core(z, "its ELF header is cut short");
	if (gz_field(z, b + EI_NIDENT, 2) != ET_CORE)
		return gz_not_core(z, "an ELF file of another type");
	/* e_type, e_machine, e_version, e_entry, then e_phoff and e_shoff */
	off = EI_NIDENT + 2 + 2 + 4 + z->wsize;
	z->phoff = gz_field(z, b + off, z->wsize);
	z->shoff = gz_field(z, b + off + z->wsize, z->wsize);
	/* e_flags, e_ehsize, then e_phentsize, e_phnum, e_shentsize, e_shnum */
	off += 2 * z->wsize + 4 + 2;
	z->phentsize = (unsigned)gz_field(z, b + off, 2);
	z->phnum = gz_field(z, b + off + 2, 2);
	z->shentsize = (unsigned)gz_field(z, b + off + 4, 2);
	z->shnum = (unsigned)gz_field(z, b + off + 6, 2);
	if (z->phnum && z->phentsize != (z->wsize == 8 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return gz_not_core(z, "unexpected program header size");
	if (z->shoff && z->shentsize != (z->wsize == 8 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
		return gz_not_core(z, "unexpected section header size");
	z->promise = ehsize;
	z->phnum_known = z->phnum != PN_XNUM;
	if (z->phnum_known && gz_promise(z, z->phoff, z->phnum * z->phentsize) < 0)
		return -1;
	/* section 0 is there even when e_shnum is 0: it holds the real counts then */
	if (z->shoff && gz_promise(z, z->shoff, (z->shnum ? z->shnum : 1) * (uint64_t)z->shentsize) < 0)
		return -1;
	z->shdrs_read = !z->shoff;
	return 0;
}

/*
 * Raise the promise to cover each entry of a header table (program headers: offset
 * and file size; sections: offset and size, but SHT_NOBITS has no bytes).
 */
static int gz_read_table(struct gz_core *z, uint64_t off, uint64_t n, bool phdrs)
{
	unsigned char e[sizeof(Elf64_Shdr)];
	unsigned es = phdrs ? z->phentsize : z->shentsize, w = z->wsize;
	/* offsets of (p_offset, p_filesz) or (sh_offset, sh_size) in an entry */
	unsigned o_off = phdrs ? (w == 8 ? 8 : 4) : (w == 8 ? 24 : 16);
	unsigned o_size = phdrs ? (w == 8 ? 32 : 16) : (w == 8 ? 32 : 20);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t size;

		if (pread(z->out, e, es, (off_t)(off + i * es)) != (ssize_t)es)
			return gz_not_core(z, "cannot read back its headers");
		size = gz_field(z, e + o_size, w);
		if (!phdrs && gz_field(z, e + 4, 4) == SHT_NOBITS)
			continue;
		if (size && gz_promise(z, gz_field(z, e + o_off, w), size) < 0)
			return -1;
	}
	return 0;
}

/* Read each header table once it has all been inflated; the promise grows with them. */
static int gz_read_tables(struct gz_core *z)
{
	uint64_t before = z->promise;

	if (!z->phnum_known && z->total >= z->shoff + z->shentsize) {
		unsigned char e[sizeof(Elf64_Shdr)];

		/* too many segments for e_phnum: section 0's sh_info has the count */
		if (!z->shoff || pread(z->out, e, z->shentsize, (off_t)z->shoff) != z->shentsize)
			return gz_not_core(z, "PN_XNUM program headers without section 0");
		z->phnum = gz_field(z, e + (z->wsize == 8 ? 44 : 28), 4);
		z->phnum_known = true;
		if (gz_promise(z, z->phoff, z->phnum * z->phentsize) < 0)
			return -1;
	}
	if (!z->phdrs_read && z->phnum_known &&
	    z->total >= z->phoff + z->phnum * z->phentsize) {
		z->phdrs_read = true;
		if (gz_read_table(z, z->phoff, z->phnum, true) < 0)
			return -1;
	}
	if (!z->shdrs_read && z->total >= z->shoff + z->shnum * (uint64_t)z->shentsize) {
		z->shdrs_read = true;
		if (gz_read_table(z, z->shoff, z->shnum, false) < 0)
			return -1;
	}
	return z->promise > before ? gz_check_space(z) : 0;
}

/*
 * Write one inflated chunk, as much of it as the headers promise; returns 1 when the
 * stream holds more than that (stop inflating), 0 to go on, -1 with err set.
 */
static int gz_write(struct gz_core *z, const unsigned char *b, size_t n)
{
	if (z->total == 0 && (gz_read_ehdr(z, b, n) < 0 || gz_check_space(z) < 0))
		return -1;
	/* the headers read from this chunk may promise more of the same chunk */
	while (n) {
		size_t k = n > z->promise - z->total ? (size_t)(z->promise - z->total) : n;

		if (k == 0)
			return 1;	/* more than the headers promise */
		if (write_all(z->out, b, k) < 0) {
			snprintf(z->err, z->errlen, "cannot inflate '%s' into %s: %s (it needs %llu "
				 "bytes; set TMPDIR to a roomier directory)", z->path, z->dir,
				 strerror(errno), (unsigned long long)z->promise);
			return -1;
		}
		z->total += k;
		b += k;
		n -= k;
		if (gz_read_tables(z) < 0)
			return -1;
	}
	return 0;
}

/*
 * After the stream ended early, badly, or past the promise: say so, keep what we have.
 * zlib reports a cut stream as Z_BUF_ERROR ("unexpected end of file") after gzread
 * has returned what it could, so gzerror is asked even when gzread returned 0.
 */
static void gz_warn_end(struct gz_core *z, gzFile gz, int stop)
{
	int zerr = Z_OK;
	const char *msg = gzerror(gz, &zerr);

	if (stop == 1)
		warn("'%s' inflates to more than the %llu bytes its ELF headers promise; the rest is "
		     "ignored (a gzip bomb, or data appended to the core)", z->path,
		     (unsigned long long)z->promise);
	else if (zerr == Z_BUF_ERROR)
		warn("'%s': gzip stream is cut short after %llu bytes; the rest of the core is "
		     "missing", z->path, (unsigned long long)z->total);
	else if (zerr != Z_OK)
		warn("'%s' is a damaged gzip file (%s) after %llu bytes; using what was inflated "
		     "before the damage", z->path, msg, (unsigned long long)z->total);
}

/* Inflate path into an unlinked file under $TMPDIR; returns its fd or -1. */
static int inflate_to_temp(const char *path, int fd, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	char tmp[4096];
	static unsigned char buf[GZ_CHUNK];
	struct gz_core z = { .path = path, .err = err, .errlen = errlen };
	gzFile gz;
	int n, dfd, stop = 0;

	z.dir = dir && *dir ? dir : "/tmp";
	snprintf(tmp, sizeof(tmp), "%s/heapprof-core.XXXXXX", z.dir);
	z.out = mkstemp(tmp);
	if (z.out < 0) {
		snprintf(err, errlen, "cannot create a temporary file to inflate '%s': %s (set TMPDIR)",
			 path, strerror(errno));
		return -1;
	}
	unlink(tmp);
	dfd = dup(fd);
	gz = dfd < 0 ? NULL : gzdopen(dfd, "rb");
	if (!gz) {
		snprintf(err, errlen, "cannot read '%s' as gzip", path);
		close(z.out);
		return -1;
	}
	gzbuffer(gz, 1 << 18);
	/* a file size limit (ulimit -f) is then an error message, not a kill */
	signal(SIGXFSZ, SIG_IGN);
	while (stop == 0 && (n = gzread(gz, buf, sizeof(buf))) > 0)
		stop = gz_write(&z, buf, (size_t)n);
	if (stop == 0 && z.total == 0) {
		int zerr = Z_OK;

		gzerror(gz, &zerr);
		stop = gz_not_core(&z, zerr == Z_BUF_ERROR ? "its gzip stream is cut short before "
				   "the ELF header" : n < 0 || zerr != Z_OK ? "its gzip stream is damaged"
				   : "nothing inside");
	}
	else if (stop >= 0)
		gz_warn_end(&z, gz, stop);
	gzclose(gz);
	if (stop < 0) {
		close(z.out);
		return -1;
	}
	return z.out;
}

static int segs_from_phdrs(struct image *img, const unsigned char *raw, size_t raw_len,
			   size_t phnum, char *err, size_t errlen)
{
	img->segs = calloc(phnum ? phnum : 1, sizeof(*img->segs));
	if (!img->segs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		uint64_t have;

		if (!gelf_getphdr(img->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_filesz < ph.p_memsz) {
			img->missing_bytes += ph.p_memsz - ph.p_filesz;
			img->missing_segs++;
		}
		have = ph.p_offset >= raw_len ? 0 : raw_len - ph.p_offset;
		if (have < ph.p_filesz) {
			img->truncated_segs++;
			img->missing_bytes += ph.p_filesz - have;
		} else {
			have = ph.p_filesz;
		}
		if (have == 0 || ph.p_vaddr + have < ph.p_vaddr)
			continue;
		img->segs[img->nsegs++] = (struct seg){ ph.p_vaddr, have, raw + ph.p_offset,
							true, img->fd, ph.p_offset };
	}
	return image_sort_segs(img, err, errlen);
}

static int check_header(struct image *img, const char *path, char *err, size_t errlen)
{
	GElf_Ehdr eh;

	if (elf_kind(img->elf) != ELF_K_ELF || !gelf_getehdr(img->elf, &eh)) {
		snprintf(err, errlen, "'%s' is not an ELF file", path);
		return -1;
	}
	if (eh.e_type != ET_CORE) {
		snprintf(err, errlen, "'%s' is an ELF file but not a core (%s)", path,
			 eh.e_type == ET_EXEC || eh.e_type == ET_DYN ?
				 "an executable or library: PROGRAM goes first, then CORE" :
				 "unexpected ELF type");
		return -1;
	}
	img->wsize = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	img->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	img->machine = eh.e_machine;
	return 0;
}

/*
 * Our own read-only mapping of the core, for the segments' data: libelf's is its own
 * business, and ours has no byte that libelf might have converted in place.
 */
static const unsigned char *map_file(struct image *img, int fd, size_t *len)
{
	struct stat st;
	void *map;

	if (fstat(fd, &st) < 0 || st.st_size <= 0)
		return NULL;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return NULL;
	img->raws = xcalloc(1, sizeof(*img->raws));
	img->raws[0] = (struct raw_map){ map, (size_t)st.st_size, img->path, -1 };
	img->nraws = 1;
	*len = (size_t)st.st_size;
	return map;
}

/*
 * CORE '-': standard input, if it is a redirected regular file. A pipe would need the
 * core copied to a temporary file first; that is not done yet, so it is refused.
 */
static int open_stdin(char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (fstat(STDIN_FILENO, &st) < 0) {
		snprintf(err, errlen, "cannot read '-' (standard input): %s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "'-' (standard input) is not a regular file (%s)",
			 image_file_kind(st.st_mode));
		return -1;
	}
	fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		snprintf(err, errlen, "cannot read '-' (standard input): %s", strerror(errno));
	return fd;
}

int image_open_core(struct image *img, const char *path, char *err, size_t errlen)
{
	const unsigned char *raw;
	size_t raw_len, phnum;
	int fd;

	memset(img, 0, sizeof(*img));
	img->fd = -1;
	img->path = path;
	elf_version(EV_CURRENT);
	fd = strcmp(path, "-") ? image_open_regular(path, err, errlen) : open_stdin(err, errlen);
	if (fd < 0)
		return -1;
	if (is_gzip(fd)) {
		int plain = inflate_to_temp(path, fd, err, errlen);

		close(fd);
		if (plain < 0)
			return -1;
		fd = plain;
	}
	img->fd = fd;
	img->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!img->elf) {
		snprintf(err, errlen, "cannot read '%s': %s", path, elf_errmsg(-1));
		return -1;
	}
	if (check_header(img, path, err, errlen) < 0)
		return -1;
	if (elf_getphdrnum(img->elf, &phnum) != 0 || !(raw = map_file(img, fd, &raw_len))) {
		snprintf(err, errlen, "cannot read the program headers of '%s': %s (truncated core?)",
			 path, elf_errmsg(-1));
		return -1;
	}
	return segs_from_phdrs(img, raw, raw_len, phnum, err, errlen);
}
