/*
 * Unit test of the spooler's seam (spool.h): an input format it has never heard of,
 * told by a sizer of its own, gzip-compressed through a pipe, is copied to exactly the
 * size its header says (junk after it cut off), and bytes no sizer knows are refused
 * in the sizer's words. The ELF core is one such format among others.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "source.h"
#include "spool.h"
#include "util.h"
#include "tap.h"

/* A toy format: "TOYF", a 64-bit little-endian length, then that many bytes. */
static int toy_start(void **state, const unsigned char *b, size_t n, uint64_t *promise,
		     char *why, size_t whylen)
{
	uint64_t len = 0;

	*state = NULL;
	if (n < 12 || memcmp(b, "TOYF", 4)) {
		snprintf(why, whylen, "no TOYF magic");
		return -1;
	}
	for (int i = 0; i < 8; i++)
		len |= (uint64_t)b[4 + i] << (8 * i);
	*promise = 12 + len;
	return 0;
}

static int toy_more(void *state, int fd, uint64_t total, uint64_t *promise, char *why,
		    size_t whylen)
{
	(void)state, (void)fd, (void)total, (void)promise, (void)why, (void)whylen;
	return 0;
}

static const struct spool_sizer toy = { "a toy input", "toy header", toy_start, toy_more };

static const struct spool_sizer *known(const unsigned char *head, size_t len)
{
	(void)head, (void)len;
	return &toy;
}

/* bytes gzip-compressed into out; its length */
static size_t gzip(const unsigned char *in, size_t n, unsigned char *out, size_t cap)
{
	z_stream z = { 0 };

	if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	deflate(&z, Z_FINISH);
	deflateEnd(&z);
	return cap - z.avail_out;
}

/* bytes through a pipe into spool_input: its fd (or -1, err set) */
static int spool_bytes(const unsigned char *b, size_t n, char *err, size_t errlen)
{
	int p[2], fd = -1;
	struct src s;

	if (pipe(p) < 0)
		return -1;
	if (write(p[1], b, n) != (ssize_t)n)	/* a test input fits the pipe's buffer */
		return -1;
	close(p[1]);
	if (src_open(&s, p[0], "toy", err, errlen) == 0) {
		fd = spool_input(&s, "toy", known, err, errlen);
		src_close(&s);
	}
	close(p[0]);
	return fd;
}

int main(void)
{
	unsigned char in[12 + 3000 + 100], z[8192], back[4096];
	char err[300];
	struct stat st;
	size_t n;
	int fd;

	util_quiet = true;
	memcpy(in, "TOYF", 4);
	for (int i = 0; i < 8; i++)
		in[4 + i] = (unsigned char)((uint64_t)3000 >> (8 * i));
	for (size_t i = 12; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 1);	/* no page of zeros: all stored */
	n = gzip(in, sizeof(in), z, sizeof(z));
	fd = spool_bytes(z, n, err, sizeof(err));
	if (fd < 0)
		printf("# %s\n", err);
	if (ok(fd >= 0, "a toy input, gzipped through a pipe, is spooled")) {
		if (fstat(fd, &st) < 0)
			st.st_size = -1;
		ok(st.st_size == 12 + 3000,
		   "its copy holds what its header promises, 3012 bytes, not the junk after: %lld",
		   (long long)st.st_size);
		ok(pread(fd, back, 3012, 0) == 3012 && !memcmp(back, in, 3012),
		   "byte for byte");
		close(fd);
	}
	memcpy(in, "ELF!", 4);
	n = gzip(in, sizeof(in), z, sizeof(z));
	fd = spool_bytes(z, n, err, sizeof(err));
	ok(fd < 0 && !strcmp(err, "'toy' is not a toy input (inside gzip): no TOYF magic"),
	   "other bytes are refused in the sizer's words: %s", err);
	return tap_done();
}
