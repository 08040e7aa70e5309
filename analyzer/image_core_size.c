/*
 * How long an ELF core is, from its headers as a copy gets them (the spooler's sizer,
 * spool.h): the ELF header must be a core's, then the file must hold its header
 * tables and every segment and section they name. Reads only the few fields that
 * bound the copy; image_core.c reads the core proper.
 */
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image_int.h"
#include "rd.h"
#include "util.h"

struct core_size {
	bool big_endian;
	unsigned wsize;		/* 4 or 8: ELFCLASS32 or ELFCLASS64 */
	uint64_t phoff, shoff;
	uint64_t phnum;		/* from e_phnum, or section 0's sh_info past PN_XNUM */
	unsigned phentsize, shentsize, shnum;
	bool phnum_known, phdrs_read, shdrs_read;
	uint64_t promise;
	char *why;
	size_t whylen;
};

/* A 2-, 4- or 8-byte field at p in the core's byte order. */
static uint64_t field(const struct core_size *z, const unsigned char *p, unsigned size)
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

static int refuse(struct core_size *z, const char *why)
{
	snprintf(z->why, z->whylen, "%s", why);
	return -1;
}

/* Raise the promise to off + size; -1 when that passes 2^64. */
static int promise(struct core_size *z, uint64_t off, uint64_t size)
{
	uint64_t end;

	/* off_t is signed: past INT64_MAX is no file offset at all */
	if (__builtin_add_overflow(off, size, &end) || end > INT64_MAX)
		return refuse(z, "its headers point past the end of any file");
	if (end > z->promise)
		z->promise = end;
	return 0;
}

/* The ELF header, from the first bytes; -1 unless it is an ELF core's. */
static int read_ehdr(struct core_size *z, const unsigned char *b, size_t n)
{
	unsigned off = 0;
	uint64_t ehsize;

	if (n < EI_NIDENT || memcmp(b, ELFMAG, SELFMAG))
		return refuse(z, "no ELF header");
	if ((b[EI_CLASS] != ELFCLASS32 && b[EI_CLASS] != ELFCLASS64) ||
	    (b[EI_DATA] != ELFDATA2LSB && b[EI_DATA] != ELFDATA2MSB))
		return refuse(z, "unknown ELF class or byte order");
	z->wsize = b[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	z->big_endian = b[EI_DATA] == ELFDATA2MSB;
	ehsize = z->wsize == 8 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (n < ehsize)
		return refuse(z, "its ELF header is cut short");
	if (field(z, b + EI_NIDENT, 2) != ET_CORE)
		return refuse(z, "an ELF file of another type");
	/* e_type, e_machine, e_version, e_entry, then e_phoff and e_shoff */
	off = EI_NIDENT + 2 + 2 + 4 + z->wsize;
	z->phoff = field(z, b + off, z->wsize);
	z->shoff = field(z, b + off + z->wsize, z->wsize);
	/* e_flags, e_ehsize, then e_phentsize, e_phnum, e_shentsize, e_shnum */
	off += 2 * z->wsize + 4 + 2;
	z->phentsize = (unsigned)field(z, b + off, 2);
	z->phnum = field(z, b + off + 2, 2);
	z->shentsize = (unsigned)field(z, b + off + 4, 2);
	z->shnum = (unsigned)field(z, b + off + 6, 2);
	if (z->phnum && z->phentsize != (z->wsize == 8 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return refuse(z, "unexpected program header size");
	if (z->shoff && z->shentsize != (z->wsize == 8 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
		return refuse(z, "unexpected section header size");
	z->promise = ehsize;
	z->phnum_known = z->phnum != PN_XNUM;
	if (z->phnum_known && promise(z, z->phoff, z->phnum * z->phentsize) < 0)
		return -1;
	/* section 0 is there even when e_shnum is 0: it holds the real counts then */
	if (z->shoff && promise(z, z->shoff, (z->shnum ? z->shnum : 1) * (uint64_t)z->shentsize) < 0)
		return -1;
	z->shdrs_read = !z->shoff;
	return 0;
}

/*
 * Raise the promise to cover each entry of a header table (program headers: offset
 * and file size; sections: offset and size, but SHT_NOBITS has no bytes).
 */
static int read_table(struct core_size *z, int fd, uint64_t off, uint64_t n, bool phdrs)
{
	unsigned char e[sizeof(Elf64_Shdr)];
	unsigned es = phdrs ? z->phentsize : z->shentsize, w = z->wsize;
	/* offsets of (p_offset, p_filesz) or (sh_offset, sh_size) in an entry */
	unsigned o_off = phdrs ? (w == 8 ? 8 : 4) : (w == 8 ? 24 : 16);
	unsigned o_size = phdrs ? (w == 8 ? 32 : 16) : (w == 8 ? 32 : 20);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t size;

		if (pread(fd, e, es, (off_t)(off + i * es)) != (ssize_t)es)
			return refuse(z, "cannot read back its headers");
		size = field(z, e + o_size, w);
		if (!phdrs && field(z, e + 4, 4) == SHT_NOBITS)
			continue;
		if (size && promise(z, field(z, e + o_off, w), size) < 0)
			return -1;
	}
	return 0;
}

/* Read each header table once it has all been written; the promise grows with them. */
static int read_tables(struct core_size *z, int fd, uint64_t total)
{
	if (!z->phnum_known && total >= z->shoff + z->shentsize) {
		unsigned char e[sizeof(Elf64_Shdr)];

		/* too many segments for e_phnum: section 0's sh_info has the count */
		if (!z->shoff || pread(fd, e, z->shentsize, (off_t)z->shoff) != z->shentsize)
			return refuse(z, "PN_XNUM program headers without section 0");
		z->phnum = field(z, e + (z->wsize == 8 ? 44 : 28), 4);
		z->phnum_known = true;
		if (promise(z, z->phoff, z->phnum * z->phentsize) < 0)
			return -1;
	}
	if (!z->phdrs_read && z->phnum_known && total >= z->phoff + z->phnum * z->phentsize) {
		z->phdrs_read = true;
		if (read_table(z, fd, z->phoff, z->phnum, true) < 0)
			return -1;
	}
	if (!z->shdrs_read && total >= z->shoff + z->shnum * (uint64_t)z->shentsize) {
		z->shdrs_read = true;
		if (read_table(z, fd, z->shoff, z->shnum, false) < 0)
			return -1;
	}
	return 0;
}

static int core_start(void **state, const unsigned char *b, size_t n, uint64_t *size, char *why,
		      size_t whylen)
{
	struct core_size *z = xcalloc(1, sizeof(*z));

	*state = z;
	z->why = why;
	z->whylen = whylen;
	if (read_ehdr(z, b, n) < 0)
		return -1;
	*size = z->promise;
	return 0;
}

static int core_more(void *state, int fd, uint64_t total, uint64_t *size, char *why,
		     size_t whylen)
{
	struct core_size *z = state;

	z->why = why;
	z->whylen = whylen;
	if (read_tables(z, fd, total) < 0)
		return -1;
	*size = z->promise;
	return 0;
}

const struct spool_sizer image_core_size = {
	.what = "an ELF core",
	.header = "ELF header",
	.start = core_start,
	.more = core_more,
};
