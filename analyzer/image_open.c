/*
 * image_open(): the one way in. A core or snapshot is made a plain file first
 * (source.c tells compression, spool.c copies pipes and inflates, asking this table
 * which input the bytes are), then goes to the reader whose magic it has; raw images
 * go to the raw reader. No format parsed here.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "image_int.h"
#include "source.h"
#include "spool.h"

/*
 * Readers of a plain file, tried in order by their magic. The last is also the one
 * that explains an input nobody claims (an ELF core's reader says what it is not).
 */
static const struct image_reader readers[] = {
	{ "ELF core", image_core_claims, &image_core_size, image_core_read },
};
#define NREADERS (sizeof(readers) / sizeof(readers[0]))

static uint64_t max_size;

void image_set_max_size(uint64_t bytes)
{
	max_size = bytes;
	spool_set_max_size(bytes);
}

/* -1 with err set when fd, a plain regular file, is over max_size */
static int check_size(int fd, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (!max_size || fstat(fd, &st) < 0 || (uint64_t)st.st_size <= max_size)
		return 0;
	snprintf(err, errlen, "'%s' is too big: %llu bytes, more than --max-size=%llu", path,
		 (unsigned long long)st.st_size, (unsigned long long)max_size);
	return -1;
}

/* The reader whose magic the first bytes have, else the last, which says why not. */
static const struct image_reader *reader_of(const unsigned char *head, size_t len)
{
	size_t r = 0;

	while (r + 1 < NREADERS && !readers[r].claims(head, len))
		r++;
	return &readers[r];
}

/* The spooler's question: how long is the input these bytes start? */
static const struct spool_sizer *known(const unsigned char *head, size_t len)
{
	return reader_of(head, len)->size;
}

/* A plain regular file holding path's bytes: path itself, or an inflated copy. */
static int open_plain(const char *path, char *err, size_t errlen)
{
	struct src src;
	bool regular;
	int fd = image_open_stream(path, &regular, err, errlen);

	if (fd < 0)
		return -1;
	if (src_open(&src, fd, path, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	if (regular && !src.name && check_size(fd, path, err, errlen) < 0) {
		src_close(&src);
		close(fd);
		return -1;
	}
	/* a plain regular file is mapped as it is; anything else is copied first */
	if (!regular || src.name) {
		int plain = spool_input(&src, path, known, err, errlen);

		close(fd);
		fd = plain;
	}
	src_close(&src);
	return fd;
}

static void image_blank(struct image *img)
{
	memset(img, 0, sizeof(*img));
	img->fd = -1;
}

static int open_file(struct image *img, const char *path, char *err, size_t errlen)
{
	unsigned char head[64];
	ssize_t got;

	img->path = path;
	img->fd = open_plain(path, err, errlen);
	if (img->fd < 0)
		return -1;
	got = pread(img->fd, head, sizeof(head), 0);
	return reader_of(head, got > 0 ? (size_t)got : 0)->read(img, img->fd, err, errlen);
}

int image_open(struct image *img, const struct image_spec *spec, char *err, size_t errlen)
{
	image_blank(img);
	if (spec->nraw)
		return image_raw_read(img, spec, err, errlen);
	return open_file(img, spec->core, err, errlen);
}

int image_open_core(struct image *img, const char *path, char *err, size_t errlen)
{
	return image_open(img, &(struct image_spec){ .core = path }, err, errlen);
}
