/* What every image shares, whatever its reader: the sorted segment list and reads from it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libelf.h>

#include "image.h"
#include "util.h"

const char *image_file_kind(unsigned mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return S_ISREG(mode) ? "a regular file" : "an unknown kind of file";
}

/* Clear O_NONBLOCK, so that no later reader sees EAGAIN; -1 with err on failure. */
static int set_blocking(int fd, const char *path, char *err, size_t errlen)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return 0;
}

/*
 * Open path without waiting (O_NONBLOCK: a FIFO or device cannot stall open()), and
 * fstat the fd itself, so that nothing changes between the check and the use.
 */
static int open_checked(const char *path, struct stat *st, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;

		/* a socket cannot be opened at all; say what it is rather than ENXIO */
		if (e == ENXIO && stat(path, st) == 0 && !S_ISREG(st->st_mode))
			snprintf(err, errlen, "'%s' is not a regular file (%s)", path,
				 image_file_kind(st->st_mode));
		else
			snprintf(err, errlen, "cannot open '%s': %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, st) < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int image_open_regular(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd = open_checked(path, &st, err, errlen);

	if (fd < 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file (%s)", path,
			 image_file_kind(st.st_mode));
		close(fd);
		return -1;
	}
	return set_blocking(fd, path, err, errlen) < 0 ? -1 : fd;
}

/* Standard input as CORE '-': its own fd is left alone for whoever else reads it. */
static int open_stdin(struct stat *st, char *err, size_t errlen)
{
	int fd;

	if (fstat(STDIN_FILENO, st) < 0) {
		snprintf(err, errlen, "cannot read '-' (standard input): %s", strerror(errno));
		return -1;
	}
	if (isatty(STDIN_FILENO)) {
		snprintf(err, errlen, "'-' (standard input) is a terminal: pipe a core into it, "
			 "or name the core file");
		return -1;
	}
	fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		snprintf(err, errlen, "cannot read '-' (standard input): %s", strerror(errno));
	return fd;
}

int image_open_stream(const char *path, bool *regular, char *err, size_t errlen)
{
	bool is_stdin = strcmp(path, "-") == 0;
	struct stat st;
	int fd = is_stdin ? open_stdin(&st, err, errlen) : open_checked(path, &st, err, errlen);

	if (fd < 0)
		return -1;
	*regular = S_ISREG(st.st_mode);
	if (!*regular && !S_ISFIFO(st.st_mode) && !(is_stdin && S_ISSOCK(st.st_mode))) {
		snprintf(err, errlen, "'%s'%s is not a regular file or a pipe (%s)", path,
			 is_stdin ? " (standard input)" : "", image_file_kind(st.st_mode));
		close(fd);
		return -1;
	}
	if (!is_stdin && set_blocking(fd, path, err, errlen) < 0)
		return -1;
	if (S_ISFIFO(st.st_mode) && !is_stdin) {
		/*
		 * A FIFO opened without waiting reads as empty until a writer comes; poll
		 * waits for the first writer's data (or its close) as a blocking open would.
		 */
		struct pollfd p = { .fd = fd, .events = POLLIN };

		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
	}
	return fd;
}

/* by address; of two at one address the larger first (it hides less when kept), then
 * by offset in the file, so which one is kept does not depend on the order given */
static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return (x->file_offset > y->file_offset) - (x->file_offset < y->file_offset);
}

/* Note s, left out for overlapping kept (s->vaddr >= kept->vaddr). */
static void note_overlap(struct image *img, const struct seg *s, const struct seg *kept)
{
	struct seg_overlap *o;
	uint64_t kept_end = kept->vaddr + kept->size, end = s->vaddr + s->size;
	uint64_t both = (end < kept_end ? end : kept_end) - s->vaddr;

	if (img->overlap_segs++ >= IMAGE_MAX_OVERLAPS)
		return;
	o = &img->overlaps[img->overlap_segs - 1];
	*o = (struct seg_overlap){ .vaddr = s->vaddr, .end = end, .kept_vaddr = kept->vaddr,
				   .kept_end = kept_end, .file = s->file,
				   .kept_file = kept->file, .offset = s->file_offset,
				   .kept_offset = kept->file_offset };
	/* what only it holds: its bytes past the kept one, and the shared range if the
	 * two differ there (a block in it would not be seen) */
	o->hidden = end - s->vaddr - both;
	if (memcmp(s->data, kept->data + (s->vaddr - kept->vaddr), both))
		o->hidden += both;
}

int image_sort_segs(struct image *img, char *err, size_t errlen)
{
	size_t kept = 0;

	qsort(img->segs, img->nsegs, sizeof(*img->segs), seg_cmp);
	img->bytes = 0;
	for (size_t i = 0; i < img->nsegs; i++) {
		struct seg *s = &img->segs[i];

		/* Overlapping segments would count a block twice; keep the first. */
		if (kept && s->vaddr < img->segs[kept - 1].vaddr + img->segs[kept - 1].size) {
			note_overlap(img, s, &img->segs[kept - 1]);
			continue;
		}
		img->segs[kept++] = *s;
		img->bytes += s->size;
	}
	img->nsegs = kept;
	if (!kept) {
		snprintf(err, errlen, "no memory contents in %s",
			 img->path ? img->path : "the images");
		return -1;
	}
	return 0;
}

const struct seg *image_find(const struct image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->nsegs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct seg *s = &img->segs[mid];

		if (addr < s->vaddr)
			hi = mid;
		else if (addr - s->vaddr >= s->size)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

bool image_read(const struct image *img, uint64_t addr, void *buf, size_t len)
{
	unsigned char *out = buf;

	while (len) {
		const struct seg *s = image_find(img, addr);
		uint64_t off, n;

		if (!s)
			return false;
		off = addr - s->vaddr;
		n = s->size - off < len ? s->size - off : len;
		memcpy(out, s->data + off, n);
		out += n;
		len -= n;
		addr += n;
	}
	return true;
}

bool image_read_mapped(const struct image *img, const char *sysroot, uint64_t addr, void *buf,
		       size_t len)
{
	char path[4096], err[64];
	ssize_t got = -1;
	int fd;

	if (image_read(img, addr, buf, len))
		return true;
	for (size_t i = 0; i < img->nfiles; i++) {
		const struct image_file *f = &img->files[i];

		if (addr < f->start || addr >= f->end || len > f->end - addr)
			continue;
		if (snprintf(path, sizeof(path), "%s%s", sysroot ? sysroot : "", f->name) >=
		    (int)sizeof(path))
			return false;
		fd = image_open_regular(path, err, sizeof(err));
		if (fd < 0)
			return false;
		got = pread(fd, buf, len, (off_t)(f->offset + (addr - f->start)));
		close(fd);
		return got == (ssize_t)len;
	}
	return false;
}

bool image_has(const struct image *img, uint64_t addr, uint64_t len)
{
	while (len) {
		const struct seg *s = image_find(img, addr);
		uint64_t n;

		if (!s)
			return false;
		n = s->size - (addr - s->vaddr) < len ? s->size - (addr - s->vaddr) : len;
		if (n < len && addr + n < addr)
			return false;	/* past the top of the address space */
		len -= n;
		addr += n;
	}
	return true;
}

bool image_window_fill(struct image_window *w, const struct seg *s, uint64_t from, size_t len)
{
	uint64_t off = from - s->vaddr, got = 0;

	if (!s->in_file || s->fd < 0) {
		*w = (struct image_window){ s, s->vaddr, s->vaddr + s->size, s->data, w->buf, w->cap };
		return true;
	}
	if (len > s->size - off)
		len = (size_t)(s->size - off);
	if (len > w->cap) {
		free(w->buf);
		w->buf = xmalloc(w->cap = len);
	}
	while (got < len) {
		ssize_t n = pread(s->fd, w->buf + got, len - got, (off_t)(s->file_offset + off + got));

		if (n <= 0)
			break;
		got += (uint64_t)n;
	}
	if (!got) {
		w->seg = NULL;
		return false;
	}
	w->seg = s;
	w->start = from;
	w->end = from + got;
	w->p = w->buf;
	return true;
}

void image_window_free(struct image_window *w)
{
	free(w->buf);
	*w = (struct image_window){ 0 };
}

void image_close(struct image *img)
{
	if (img->dwfl_core)
		elf_end(img->dwfl_core);
	for (size_t i = 0; i < img->nthreads; i++)
		free(img->threads[i].regs);
	free(img->threads);
	free(img->files);
	free(img->file_names);
	free(img->resident);
	if (img->fd >= 0)
		close(img->fd);
	for (size_t i = 0; i < img->nraws; i++) {
		munmap(img->raws[i].map, img->raws[i].len);
		if (img->raws[i].fd >= 0)
			close(img->raws[i].fd);
	}
	free(img->raws);
	free(img->segs);
	memset(img, 0, sizeof(*img));
	img->fd = -1;
}
