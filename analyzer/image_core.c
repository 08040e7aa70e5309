/*
 * ELF cores as images: every PT_LOAD's file bytes become a segment, read in place
 * from libelf's mapping of the file. Compressed cores and cores from a pipe are
 * copied into a temporary file first (source.c reads them, spool.c copies them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "rd.h"
#include "source.h"
#include "spool.h"
#include "util.h"

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

int image_open_core(struct image *img, const char *path, char *err, size_t errlen)
{
	const unsigned char *raw;
	size_t raw_len, phnum;
	struct src src;
	bool regular;
	int fd;

	memset(img, 0, sizeof(*img));
	img->fd = -1;
	img->path = path;
	elf_version(EV_CURRENT);
	fd = image_open_stream(path, &regular, err, errlen);
	if (fd < 0)
		return -1;
	if (src_open(&src, fd, path, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	/* a plain regular file is mapped as it is; anything else is copied first */
	if (!regular || src.name) {
		int plain = spool_core(&src, path, err, errlen);

		close(fd);
		fd = plain;
	}
	src_close(&src);
	if (fd < 0)
		return -1;
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
