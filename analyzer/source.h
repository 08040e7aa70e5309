/*
 * A core's bytes as one stream, whatever wraps them: plain, gzip, zstd or xz, told
 * apart by their first bytes (never by the file name). spool.c copies a stream into a
 * temporary file; only source.c calls a decompression library.
 */
#ifndef HP_SOURCE_H
#define HP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum src_end {
	SRC_MORE,	/* not ended yet */
	SRC_DONE,	/* the stream ended where its format says it ends */
	SRC_CUT,	/* the input ended in the middle of a compressed stream */
	SRC_DAMAGED,	/* the decompressor refused the data: reason in msg */
};

struct src_ops;

struct src {
	const char *name;	/* "gzip", "zstd", "xz", or NULL for plain bytes */
	int fd;			/* not owned: the caller closes it after src_close() */
	uint64_t in_bytes;	/* bytes read from fd so far */
	enum src_end end;	/* how the stream ended, once src_read() returned 0 */
	char msg[160];		/* the library's reason when end is SRC_DAMAGED */

	/* private to source.c */
	const struct src_ops *ops;
	void *state;
	unsigned char *in;	/* read-ahead from fd: in[in_pos .. in_len) not used yet */
	size_t in_pos, in_len;
	bool in_eof;
};

/*
 * Set s up to read fd from its start (a seekable fd is rewound; from a pipe, the bytes
 * read to tell the format are kept, not lost). Returns 0, or -1 with a one-line reason
 * in err: a read error, or a compression we do not read ("'X' is compressed with
 * bzip2: decompress it first"). An empty or short input is not an error here.
 */
int src_open(struct src *s, int fd, const char *path, char *err, size_t errlen);

/*
 * Up to len decompressed bytes into buf. 0 once the stream has ended: s->end says how
 * (a read error from fd is SRC_DAMAGED with strerror in msg). Never more than len.
 */
size_t src_read(struct src *s, unsigned char *buf, size_t len);

/* Free the decompressor's state; fd stays open. */
void src_close(struct src *s);

#endif
