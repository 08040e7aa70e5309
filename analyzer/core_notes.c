/* The threads of an image for callers of core_notes.h: the reader's own list. */
#include <string.h>

#include "core_notes.h"

void core_threads_read(const struct image *img, struct core_threads *out)
{
	out->v = img->threads;
	out->n = img->nthreads;
}

void core_threads_free(struct core_threads *t)
{
	memset(t, 0, sizeof(*t));
}
