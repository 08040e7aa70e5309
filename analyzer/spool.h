/*
 * Copy an input that cannot be mapped as it is (compressed, or coming through a pipe)
 * into an unlinked temporary file under $TMPDIR ("/tmp" when unset). What the input
 * is, and how long its headers say it is, the input readers tell (image_open.c's
 * table): the spooler knows no format.
 */
#ifndef HP_SPOOL_H
#define HP_SPOOL_H

#include <stddef.h>
#include <stdint.h>

struct src;

/*
 * How long an input of one format is, told by its headers as the copy gets them: an
 * input reader's (image_int.h). start sees the first bytes (n of them: all the
 * stream holds, or its first MiB) and sets *promise to the size they say the input
 * has at least; more is called after each chunk, with total bytes of the input in
 * fd, and raises *promise by the headers complete by then. Both return 0, or -1
 * with why (the input is not one, or its headers point past any file). state is
 * the format's: start allocates it, the spooler frees it.
 */
struct spool_sizer {
	const char *what;		/* "a toy input": "'x' is not a toy input" */
	const char *header;		/* "toy header": "what its toy headers promise" */
	int (*start)(void **state, const unsigned char *b, size_t n, uint64_t *promise,
		     char *why, size_t whylen);
	int (*more)(void *state, int fd, uint64_t total, uint64_t *promise, char *why,
		    size_t whylen);
};

/*
 * Read s to its end into the temporary file, asking known() which sizer the first
 * chunk's bytes are for (the input readers' table answers; one that knows none
 * explains why the bytes are not its input). Checked against the size the headers
 * promise: the first bytes before anything is written, the free room in $TMPDIR
 * before it fills, and no more than that size is ever written (a decompression bomb,
 * or junk after the input, is cut off with a warning). A stream that is cut short or
 * damaged after the header gives a warning and the bytes read before. Pages of zeros
 * are left as holes. When the headers are refused and the compressed stream turns out
 * damaged, err says the input is damaged instead. Returns the temporary file's fd
 * (the caller closes it), or -1 with a one-line reason in err; path names the input
 * in messages. Sets SIGXFSZ to be ignored, so that a file size limit is a message,
 * not a kill.
 */
int spool_input(struct src *s, const char *path,
		const struct spool_sizer *(*known)(const unsigned char *head, size_t len),
		char *err, size_t errlen);

/* A compressed core may inflate to at most ratio times its size in data (not zero
 * pages) beyond its first 64 MiB; 0: no limit. --max-ratio sets it. */
#define SPOOL_DEFAULT_RATIO 1000
void spool_set_max_ratio(uint64_t ratio);

/* A copy may be at most bytes (0: no limit): headers that promise more are refused
 * before the bytes past the limit are written. image_set_max_size() sets it. */
void spool_set_max_size(uint64_t bytes);

#endif
