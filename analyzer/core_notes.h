/*
 * The threads an input reported (image.h: img->threads), as the leak classifier, the
 * heap graph and --memory took them before the readers reported into the image. New
 * code reads img->threads; this stays until those callers do.
 */
#ifndef HP_CORE_NOTES_H
#define HP_CORE_NOTES_H

#include <stddef.h>

#include "image.h"

struct core_threads {
	struct image_thread *v;	/* img->threads: valid while the image is open */
	size_t n;
};

/* Point out at img's threads (none for raw images); never fails, frees nothing. */
void core_threads_read(const struct image *img, struct core_threads *out);
void core_threads_free(struct core_threads *t);

#endif
