/*
 * The files the symbolizer reads for a module: each opened once, through
 * image_open_regular() (O_NONBLOCK, fstat of the descriptor, regular files only), its
 * build-id read from that descriptor, and the descriptor handed to libdwfl, so that the
 * file checked is the file read. Which module wants which file is sym_dwfl.c's.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "sym_dwfl.h"

int sym_file_open(const struct sym *s, const char *path, const char *what,
		  unsigned char *id, size_t idsize, int *idlen)
{
	char err[2 * 4096];
	const void *bits;
	ssize_t n = 0;
	struct stat st;
	Elf *elf;
	int fd;

	/* a device is not even opened (that alone may act); a swap after this is caught
	 * by the fstat of the descriptor in image_open_regular */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (what)
			sym_warn(s, "not opening '%s' for %s: not a regular file (%s)", path, what,
				 image_file_kind(st.st_mode));
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	fd = image_open_regular(path, err, sizeof(err));
	if (fd < 0) {
		/* a missing file is the common case: the next place is tried, silently */
		if (errno != ENOENT && what)
			sym_warn(s, "not opening '%s' for %s: %s", path, what, err);
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(fd);
		errno = ENOEXEC;	/* a core maps data files too: the caller may say it */
		return -1;
	}
	n = dwelf_elf_gnu_build_id(elf, &bits);
	if (n < 0 || (size_t)n > idsize)
		n = 0;
	if (n > 0)
		memcpy(id, bits, (size_t)n);
	*idlen = (int)n;
	elf_end(elf);
	return fd;
}

int sym_file_build_id(const char *path, unsigned char *id, size_t idsize)
{
	int n, fd = sym_file_open(NULL, path, NULL, id, idsize, &n);

	if (fd < 0)
		return -1;
	close(fd);
	return n;
}

int sym_file_matching(const struct sym *s, const char *path, const char *what,
		      const unsigned char *want, size_t wantlen, struct sym_mismatch *mm)
{
	unsigned char id[SYM_MAX_BUILD_ID];
	int n, fd = sym_file_open(s, path, what, id, sizeof(id), &n);

	if (fd < 0)
		return -1;
	if (!wantlen || ((size_t)n == wantlen && !memcmp(id, want, wantlen)))
		return fd;
	close(fd);
	if (mm && !mm->path) {
		mm->path = strdup(path);
		sym_hex(mm->id, sizeof(mm->id), id, (size_t)n);
		if (!n)
			strcpy(mm->id, "none");
	}
	return -1;
}

int sym_file_by_build_id(const struct sym *s, const unsigned char *id, size_t len, char **found)
{
	char hex[2 * SYM_MAX_BUILD_ID + 1];
	const char *p = s->debuginfo_path ? s->debuginfo_path : SYM_DEFAULT_DEBUG_PATH;

	if (!len || len > SYM_MAX_BUILD_ID)
		return -1;
	sym_hex(hex, sizeof(hex), id, len);
	while (*p) {
		size_t n = strcspn(p, ":");

		/* only absolute entries hold .build-id trees (relative ones name a module's
		 * own subdirectory); the debug file first, it is the likelier */
		for (int debug = 1; p[0] == '/' && debug >= 0; debug--) {
			char *f = malloc(n + sizeof(hex) + 32);
			int fd;

			if (!f)
				return -1;
			sprintf(f, "%.*s/.build-id/%.2s/%s%s", (int)n, p, hex, hex + 2,
				debug ? ".debug" : "");
			fd = sym_file_matching(s, f, "a build-id", id, len, NULL);
			if (fd >= 0) {
				*found = f;
				return fd;
			}
			free(f);
		}
		p += n + (p[n] == ':');
	}
	return -1;
}
