/*
 * The raw reader (--raw IMAGE@ADDR): files holding a target's memory as it was at
 * ADDR, such as a RAM dump read over JTAG or /proc/PID/mem. Word size and byte order
 * come from PROGRAM (image_program_info), since a raw file says nothing of itself, and
 * nothing else of the process (threads, files, residency) is known.
 */
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
#include "image_int.h"
#include "util.h"

void image_init_raw(struct image *img, unsigned wsize, bool big_endian, uint16_t machine)
{
	memset(img, 0, sizeof(*img));
	img->fd = -1;
	img->wsize = wsize;
	img->big_endian = big_endian;
	img->machine = machine;
	img->segs_name = "raw images";
	img->seg_name = "image";
	img->resident_why = "raw images";
}

int image_raw_read(struct image *img, const struct image_spec *spec, char *err, size_t errlen)
{
	image_init_raw(img, spec->wsize, spec->big_endian, spec->machine);
	for (size_t i = 0; i < spec->nraw; i++)
		if (image_add_raw(img, spec->raw[i].path, spec->raw[i].addr, err, errlen) < 0)
			return -1;
	return image_sort_segs(img, err, errlen);
}

int image_add_raw(struct image *img, const char *file, uint64_t addr, char *err, size_t errlen)
{
	struct stat st;
	void *map;
	int fd = image_open_regular(file, err, errlen);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size == 0) {
		snprintf(err, errlen, "'%s' is empty", file);
		close(fd);
		return -1;
	}
	if (addr + (uint64_t)st.st_size - 1 < addr ||
	    (img->wsize == 4 && addr + (uint64_t)st.st_size - 1 > UINT32_MAX)) {
		snprintf(err, errlen, "'%s' at 0x%llx runs past the end of the address space",
			 file, (unsigned long long)addr);
		close(fd);
		return -1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "cannot map '%s': %s", file, strerror(errno));
		close(fd);
		return -1;
	}
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	img->raws = xrealloc(img->raws, (img->nraws + 1) * sizeof(*img->raws));
	img->raws[img->nraws++] = (struct raw_map){ map, (size_t)st.st_size, file, fd };
	img->segs = xrealloc(img->segs, (img->nsegs + 1) * sizeof(*img->segs));
	img->segs[img->nsegs++] = (struct seg){ addr, (uint64_t)st.st_size, map, true, fd, 0, file,
						false };
	return 0;
}

int image_program_info(const char *path, unsigned *wsize, bool *big_endian, uint16_t *machine,
		       bool *pie, char *err, size_t errlen)
{
	GElf_Ehdr eh;
	Elf *elf;
	int fd = image_open_regular(path, err, errlen), rc = -1;

	elf_version(EV_CURRENT);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		snprintf(err, errlen, "'%s' is not an ELF file", path);
	} else if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		snprintf(err, errlen, "'%s' is not an executable%s", path,
			 eh.e_type == ET_CORE ? " but a core: PROGRAM goes first, then CORE" : "");
	} else {
		*wsize = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
		*big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
		*machine = eh.e_machine;
		*pie = eh.e_type == ET_DYN;
		rc = 0;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}
