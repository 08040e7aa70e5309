/*
 * The readers behind image_open() (image.h says how to add one): each fills a struct
 * image from its input and knows nothing of the others.
 */
#ifndef HP_IMAGE_INT_H
#define HP_IMAGE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "image.h"
#include "spool.h"

struct image_reader {
	const char *name;
	/* Whether the first bytes of a plain (inflated) input are this format's. */
	bool (*claims)(const unsigned char *head, size_t len);
	/* How long such an input is, for the spooler to copy it (spool.h). */
	const struct spool_sizer *size;
	/*
	 * Fill img from fd, a plain regular file (img->path and img->fd are set; the
	 * image owns fd). 0, or -1 with a one-line reason in err.
	 */
	int (*read)(struct image *img, int fd, char *err, size_t errlen);
};

bool image_core_claims(const unsigned char *head, size_t len);
extern const struct spool_sizer image_core_size;
int image_core_read(struct image *img, int fd, char *err, size_t errlen);

/* Raw mode: the files spec->raw, with the target's shape from spec. */
int image_raw_read(struct image *img, const struct image_spec *spec, char *err, size_t errlen);

#endif
