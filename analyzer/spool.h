/*
 * Copy a core that cannot be mapped as it is (compressed, or coming through a pipe)
 * into an unlinked temporary file under $TMPDIR ("/tmp" when unset).
 */
#ifndef HP_SPOOL_H
#define HP_SPOOL_H

#include <stddef.h>

struct src;

/*
 * Read s to its end into the temporary file, checking the bytes against the ELF
 * headers they start with: the ELF header must be a core's (checked on the first
 * chunk, before anything is written), the free room in $TMPDIR must hold the size the
 * headers promise, and no more than that size is ever written (a decompression bomb,
 * or junk after the core, is cut off with a warning). A stream that is cut short or
 * damaged after the header gives a warning and the bytes read before. Pages of zeros
 * are left as holes. When the headers are refused and the compressed stream turns out
 * damaged, err says the input is damaged instead. Returns the
 * temporary file's fd (the caller closes it), or -1 with a one-line reason in err;
 * path names the input in messages. Sets SIGXFSZ to be ignored, so that a file size
 * limit is a message, not a kill.
 */
int spool_core(struct src *s, const char *path, char *err, size_t errlen);

/* A compressed core may inflate to at most ratio times its size in data (not zero
 * pages) beyond its first 64 MiB; 0: no limit. --max-ratio sets it. */
#define SPOOL_DEFAULT_RATIO 1000
#include <stdint.h>
void spool_set_max_ratio(uint64_t ratio);

/* A copy may be at most bytes (0: no limit): headers that promise more are refused
 * before the bytes past the limit are written. image_set_max_size() sets it. */
void spool_set_max_size(uint64_t bytes);

#endif
