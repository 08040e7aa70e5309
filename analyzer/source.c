/*
 * Stream sources: the format is told by the first bytes, which are kept in the
 * read-ahead buffer so that a pipe loses nothing. gzip (zlib), zstd (libzstd) and xz
 * (liblzma) are streamed through each library's own streaming API, and so is a plain
 * core from a pipe; what the bytes mean is spool.c's business.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "source.h"

#define SRC_IN_SIZE (1u << 18)
/* an xz core asking for more memory than this is refused, not decompressed */
#define SRC_XZ_MEMLIMIT (1ull << 30)

struct src_ops {
	const char *name;
	int (*init)(struct src *s);	/* 0, or -1 with msg set */
	size_t (*read)(struct src *s, unsigned char *buf, size_t len);
	void (*fini)(struct src *s);
};

/* Make unread input available: 1 when there is some, 0 at the end, -1 after an error. */
static int src_fill(struct src *s)
{
	ssize_t n;

	if (s->in_pos < s->in_len)
		return 1;
	if (s->in_eof)
		return 0;
	do
		n = read(s->fd, s->in, SRC_IN_SIZE);
	while (n < 0 && errno == EINTR);
	s->in_pos = 0;
	s->in_len = n > 0 ? (size_t)n : 0;
	if (n > 0) {
		s->in_bytes += (uint64_t)n;
		return 1;
	}
	s->in_eof = true;
	if (n == 0)
		return 0;
	s->end = SRC_DAMAGED;
	snprintf(s->msg, sizeof(s->msg), "read error: %s", strerror(errno));
	return -1;
}

static void src_damaged(struct src *s, const char *why)
{
	s->end = SRC_DAMAGED;
	snprintf(s->msg, sizeof(s->msg), "%s", why ? why : "unknown error");
}

static size_t plain_read(struct src *s, unsigned char *buf, size_t len)
{
	size_t k;
	int r = src_fill(s);

	if (r <= 0) {
		if (r == 0)
			s->end = SRC_DONE;
		return 0;
	}
	k = s->in_len - s->in_pos < len ? s->in_len - s->in_pos : len;
	memcpy(buf, s->in + s->in_pos, k);
	s->in_pos += k;
	return k;
}

/* gzip: members may follow each other (gzip's own rule); anything else after one ends it. */
struct gz_state {
	z_stream z;
	bool in_member;
};

static int gz_init(struct src *s)
{
	struct gz_state *g = calloc(1, sizeof(*g));

	if (!g || inflateInit2(&g->z, 15 + 16) != Z_OK) {
		free(g);
		src_damaged(s, "out of memory");
		return -1;
	}
	s->state = g;
	return 0;
}

static size_t gz_read(struct src *s, unsigned char *buf, size_t len)
{
	struct gz_state *g = s->state;
	int r, ret;

	g->z.next_out = buf;
	g->z.avail_out = (uInt)len;
	while (g->z.avail_out == len) {
		r = src_fill(s);
		if (r < 0)
			break;
		if (!g->in_member) {
			/* like gzread: what follows a member is either another member or ignored */
			if (r == 0 || s->in[s->in_pos] != 0x1f) {
				s->end = SRC_DONE;
				break;
			}
			inflateReset(&g->z);
			g->in_member = true;
		}
		if (r == 0) {
			s->end = SRC_CUT;
			break;
		}
		g->z.next_in = s->in + s->in_pos;
		g->z.avail_in = (uInt)(s->in_len - s->in_pos);
		ret = inflate(&g->z, Z_NO_FLUSH);
		s->in_pos = s->in_len - g->z.avail_in;
		if (ret == Z_STREAM_END) {
			g->in_member = false;
		} else if (ret != Z_OK && ret != Z_BUF_ERROR) {
			src_damaged(s, g->z.msg ? g->z.msg : "damaged data");
			break;
		}
	}
	return len - g->z.avail_out;
}

static void gz_fini(struct src *s)
{
	struct gz_state *g = s->state;

	inflateEnd(&g->z);
	free(g);
}

/* zstd: frames may follow each other; the stream is cut if input ends inside one. */
struct zstd_state {
	ZSTD_DStream *d;
	bool in_frame;		/* some of a frame read, not all of it */
};

static int zstd_init(struct src *s)
{
	struct zstd_state *z = calloc(1, sizeof(*z));

	if (!z || !(z->d = ZSTD_createDStream()) || ZSTD_isError(ZSTD_initDStream(z->d))) {
		if (z)
			ZSTD_freeDStream(z->d);
		free(z);
		src_damaged(s, "out of memory");
		return -1;
	}
	s->state = z;
	return 0;
}

static size_t zstd_read(struct src *s, unsigned char *buf, size_t len)
{
	struct zstd_state *z = s->state;
	ZSTD_outBuffer out = { buf, len, 0 };

	for (;;) {
		ZSTD_inBuffer in = { s->in + s->in_pos, s->in_len - s->in_pos, 0 };
		size_t ret = ZSTD_decompressStream(z->d, &out, &in);
		int r;

		s->in_pos += in.pos;
		if (ZSTD_isError(ret)) {
			src_damaged(s, ZSTD_getErrorName(ret));
			break;
		}
		/* 0: a frame is complete and flushed; between frames nothing is pending */
		if (ret == 0)
			z->in_frame = false;
		else if (in.pos || out.pos)
			z->in_frame = true;
		if (out.pos)
			break;
		if (s->in_pos == s->in_len) {
			r = src_fill(s);
			if (r < 0)
				break;
			if (r == 0) {
				s->end = z->in_frame ? SRC_CUT : SRC_DONE;
				break;
			}
		}
	}
	return out.pos;
}

static void zstd_fini(struct src *s)
{
	struct zstd_state *z = s->state;

	ZSTD_freeDStream(z->d);
	free(z);
}

/* xz: concatenated streams as xz(1) reads them; liblzma itself tells a cut stream. */
static int xz_init(struct src *s)
{
	lzma_stream *x = calloc(1, sizeof(*x));
	lzma_stream init = LZMA_STREAM_INIT;

	if (!x) {
		src_damaged(s, "out of memory");
		return -1;
	}
	*x = init;
	if (lzma_stream_decoder(x, SRC_XZ_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK) {
		free(x);
		src_damaged(s, "out of memory");
		return -1;
	}
	s->state = x;
	return 0;
}

static const char *xz_why(lzma_ret ret)
{
	switch (ret) {
	case LZMA_MEM_ERROR: return "out of memory";
	case LZMA_MEMLIMIT_ERROR: return "it needs more than 1 GiB of memory to decompress";
	case LZMA_FORMAT_ERROR: return "not an xz stream";
	case LZMA_OPTIONS_ERROR: return "unsupported compression options";
	case LZMA_DATA_ERROR: return "compressed data is corrupt";
	default: return "unexpected liblzma error";
	}
}

static size_t xz_read(struct src *s, unsigned char *buf, size_t len)
{
	lzma_stream *x = s->state;

	x->next_out = buf;
	x->avail_out = len;
	for (;;) {
		lzma_action action = LZMA_RUN;
		lzma_ret ret;
		int r = src_fill(s);

		if (r < 0)
			break;
		if (r == 0)
			action = LZMA_FINISH;
		x->next_in = s->in + s->in_pos;
		x->avail_in = s->in_len - s->in_pos;
		ret = lzma_code(x, action);
		s->in_pos = s->in_len - x->avail_in;
		if (ret == LZMA_STREAM_END) {
			s->end = SRC_DONE;
			break;
		}
		if (ret == LZMA_BUF_ERROR) {
			/* no progress is possible: the input ended inside a stream */
			s->end = SRC_CUT;
			break;
		}
		if (ret != LZMA_OK) {
			src_damaged(s, xz_why(ret));
			break;
		}
		if (x->avail_out < len)
			break;
	}
	return len - x->avail_out;
}

static void xz_fini(struct src *s)
{
	lzma_end(s->state);
	free(s->state);
}

static const struct src_ops plain_ops = { NULL, NULL, plain_read, NULL };
static const struct src_ops gz_ops = { "gzip", gz_init, gz_read, gz_fini };
static const struct src_ops zstd_ops = { "zstd", zstd_init, zstd_read, zstd_fini };
static const struct src_ops xz_ops = { "xz", xz_init, xz_read, xz_fini };

/* First bytes of formats we read, and of those we only name (ops NULL). */
static const struct magic {
	const char *bytes;
	size_t len;
	const struct src_ops *ops;
	const char *name, *hint;
} magics[] = {
	{ "\x1f\x8b", 2, &gz_ops, "gzip", NULL },
	{ "\x28\xb5\x2f\xfd", 4, &zstd_ops, "zstd", NULL },
	{ "\xfd" "7zXZ\0", 6, &xz_ops, "xz", NULL },
	{ "BZh", 3, NULL, "bzip2", "bzip2 -d" },
	{ "\x04\x22\x4d\x18", 4, NULL, "lz4", "lz4 -d" },
	{ "\x02\x21\x4c\x18", 4, NULL, "lz4 (legacy format)", "lz4 -d" },
	{ "LZIP", 4, NULL, "lzip", "lzip -d" },
	{ "\x1f\x9d", 2, NULL, "compress (.Z)", "uncompress" },
	{ "\x89LZO", 4, NULL, "lzop", "lzop -d" },
};

/* Read up to want bytes into the read-ahead buffer, as a pipe delivers them. */
static int src_sniff(struct src *s, size_t want)
{
	while (s->in_len < want) {
		ssize_t n = read(s->fd, s->in + s->in_len, want - s->in_len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			s->in_eof = true;
			break;
		}
		s->in_len += (size_t)n;
		s->in_bytes += (uint64_t)n;
	}
	return 0;
}

static int src_start(struct src *s, const char *path, char *err, size_t errlen);

int src_open(struct src *s, int fd, const char *path, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->ops = &plain_ops;
	s->in = malloc(SRC_IN_SIZE);
	if (!s->in) {
		snprintf(err, errlen, "cannot read '%s': out of memory", path);
		return -1;
	}
	if (src_start(s, path, err, errlen) == 0)
		return 0;
	src_close(s);
	return -1;
}

/* src_open() once the buffer is there: tell the format, start its decompressor. */
static int src_start(struct src *s, const char *path, char *err, size_t errlen)
{
	const struct magic *m = NULL;

	/* a pipe cannot seek (ESPIPE) and is read from where it is; a file from its start */
	lseek(s->fd, 0, SEEK_SET);
	if (src_sniff(s, 6) < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]) && !m; i++)
		if (s->in_len >= magics[i].len && !memcmp(s->in, magics[i].bytes, magics[i].len))
			m = &magics[i];
	if (m && !m->ops) {
		snprintf(err, errlen, "'%s' is compressed with %s: decompress it first (%s), or "
			 "recompress it with gzip, zstd or xz", path, m->name, m->hint);
		return -1;
	}
	if (m)
		s->ops = m->ops;
	s->name = s->ops->name;
	if (s->ops->init && s->ops->init(s) < 0) {
		snprintf(err, errlen, "cannot read '%s' as %s: %s", path, s->name, s->msg);
		return -1;
	}
	return 0;
}

size_t src_read(struct src *s, unsigned char *buf, size_t len)
{
	if (s->end != SRC_MORE || len == 0)
		return 0;
	return s->ops->read(s, buf, len);
}

void src_close(struct src *s)
{
	if (s->state && s->ops->fini)
		s->ops->fini(s);
	s->state = NULL;
	free(s->in);
	s->in = NULL;
}
