/*
 * Unit test of the scan: synthetic images with headers for every word size and byte
 * order, written by an encoder of our own (checked against hp_tag_write, the preload's
 * writer) and then cut, copied, overwritten and overflowed. Each segment lives in a
 * buffer of exactly its size, so the sanitizers see any read past it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof_format.h"
#include "hp_tag.h"
#include "image.h"
#include "scan.h"
#include "encode.h"
#include "tap.h"
#include "util.h"

/*
 * Encode a live block as the format says, into buf (which sits at target address
 * buf_addr): the header ends at user, the pcs lie below it.
 */
static void encode(unsigned char *buf, uint64_t buf_addr, uint64_t user, struct target t,
		   uint64_t size, unsigned nframes, const uint64_t *pcs, uint32_t flags,
		   uint16_t version)
{
	struct hp_hdr h = { .size = size, .birth = 12345, .offset = HP_HDR_SIZE + nframes * t.wsize,
			    .tid = 77, .version = version, .nframes = (uint8_t)nframes,
			    .wsize = (uint8_t)t.wsize, .flags = flags, .magic = HP_MAGIC };
	unsigned char *hp = buf + (user - buf_addr) - HP_HDR_SIZE;

	h.offset = (uint32_t)((h.offset + 7) & ~7u);
	encode_hdr(hp, h, user, pcs, nframes, t, 0);
}

static struct image one_seg(struct target t, uint64_t vaddr, const unsigned char *data,
			    uint64_t size)
{
	static struct seg seg;
	struct image img;

	memset(&img, 0, sizeof(img));
	img.wsize = t.wsize;
	img.big_endian = t.big_endian;
	img.fd = -1;
	seg = (struct seg){ .vaddr = vaddr, .size = size, .data = data };
	img.segs = &seg;
	img.nsegs = 1;
	img.bytes = size;
	return img;
}

static void scan(struct image *img, struct scan_result *r)
{
	scan_image(img, 2, r);
}

static uint64_t rejected(const struct scan_result *r)
{
	uint64_t n = 0;

	for (int i = 0; i < REJ_NREASONS; i++)
		n += r->rejected[i];
	return n;
}

static const uint64_t pcs[] = { 0x401234, 0x401500, 0x7f0000001000, 0x400010, 5, 6, 7, 8 };

static void every_target(void)
{
	static const struct target ts[] = { { 8, 0 }, { 8, 1 }, { 4, 0 }, { 4, 1 } };

	for (size_t i = 0; i < 4; i++) {
		struct target t = ts[i];
		uint64_t base = t.wsize == 4 ? 0x10000 : 0x7f0012340000ull;
		size_t len = 4096;
		unsigned char *buf = calloc(1, len);
		uint64_t want = 0;
		struct scan_result r;
		struct image img;
		uint64_t p32[8];

		for (int k = 0; k < 8; k++)
			p32[k] = t.wsize == 4 ? pcs[k] & 0xffffffff : pcs[k];
		for (int b = 0; b < 5; b++) {
			encode(buf, base, base + 200 + 704 * b, t, 100 + b, 1 + b, p32, 0, 1);
			want += 100 + b;
		}
		img = one_seg(t, base, buf, len);
		scan(&img, &r);
		ok(r.blocks == 5 && r.bytes == want && r.stacks.n == 5 && !rejected(&r),
		   "%u-bit %s-endian: 5 blocks, %llu bytes", t.wsize * 8,
		   t.big_endian ? "big" : "little", (unsigned long long)r.bytes);
		scan_result_free(&r);
		free(buf);
	}
}

/* The preload's writer and this encoder agree to the byte. */
static void same_as_writer(void)
{
	_Alignas(16) unsigned char a[512] = { 0 }, b[512] = { 0 };
	uintptr_t p[3] = { 0x1111, 0x2222, 0x3333 };
	uint64_t p64[3] = { 0x1111, 0x2222, 0x3333 };
	struct hp_tag_info info = { .size = 99, .birth = 12345, .tid = 77, .pcs = p, .nframes = 3 };
	size_t off = HP_HDR_SIZE + 3 * sizeof(uintptr_t);
	struct target t = { sizeof(uintptr_t), __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ };
	unsigned char *ua = hp_tag_write(a + 64, off, &info);

	/* the check binds the address: encode b as if it sat where a does */
	encode(b, (uintptr_t)a, (uintptr_t)ua, t, 99, 3, p64, 0, 1);
	ok(!memcmp(a, b, sizeof(a)), "hp_tag_write and the spec encoder write the same bytes");
	ok(hp_tag_real(ua) == a + 64 && hp_tag_size(ua) == 99, "hp_tag_real finds the block start");
	hp_tag_erase(ua);
	ok(hp_tag_real(ua) == NULL, "an erased tag is no longer live");
}

/* Cut the segment at every byte of the header and pcs, from either end. */
static void cut_everywhere(void)
{
	struct target t = { 8, 0 };
	unsigned char whole[256] = { 0 };
	uint64_t base = 0x1000, user = base + 200;
	size_t hdr_start = 200 - HP_HDR_SIZE - 4 * 8;
	int bad = 0;

	encode(whole, base, user, t, 1000, 4, pcs, 0, 1);
	for (size_t k = 0; k <= 200; k++) {
		size_t len = 200 - k;
		unsigned char *seg = malloc(len ? len : 1);
		struct scan_result r;
		struct image img;

		memcpy(seg, whole + k, len);
		img = one_seg(t, base + k, seg, len);
		scan(&img, &r);
		if (k <= hdr_start ? r.blocks != 1 : r.blocks != 0 || (k <= 192 && !r.rejected[REJ_TRUNCATED]))
			bad++;
		scan_result_free(&r);
		free(seg);
	}
	ok(!bad, "a header cut at every byte from the front: rejected as truncated, never read past");
	bad = 0;
	for (size_t len = 0; len <= 200; len++) {
		unsigned char *seg = malloc(len ? len : 1);
		struct scan_result r;
		struct image img;

		memcpy(seg, whole, len);
		img = one_seg(t, base, seg, len);
		scan(&img, &r);
		if (r.blocks != (len == 200))
			bad++;
		scan_result_free(&r);
		free(seg);
	}
	ok(!bad, "a segment ending at every byte of the header");
}

static struct scan_result scan_one(struct target t, unsigned char *buf, size_t len, uint64_t base)
{
	struct scan_result r;
	struct image img = one_seg(t, base, buf, len);

	scan(&img, &r);
	return r;
}

static void bad_headers(void)
{
	struct target t = { 8, 0 };
	uint64_t base = 0x2000;
	unsigned char buf[1024];
	struct scan_result r;

	memset(buf, 0, sizeof(buf));
	encode(buf, base, base + 512, t, 10, 2, pcs, 0, 1);
	buf[512 - 48 + 34] = 200;	/* nframes over the limit, as if 10^9 were claimed */
	r = scan_one(t, buf, sizeof(buf), base);
	ok(r.blocks == 0 && r.rejected[REJ_LAYOUT] == 1, "nframes over 64 is rejected");
	scan_result_free(&r);

	encode(buf, base, base + 512, t, 10, 2, pcs, 0, 2);
	r = scan_one(t, buf, sizeof(buf), base);
	ok(r.rejected[REJ_VERSION] == 1 && r.other_version == 2, "an unknown version is named");
	scan_result_free(&r);

	encode(buf, base, base + 512, t, 10, 2, pcs, 0x00010000, 1);
	r = scan_one(t, buf, sizeof(buf), base);
	ok(r.rejected[REJ_FLAGS] == 1, "an unknown incompatible flag is rejected");
	scan_result_free(&r);

	encode(buf, base, base + 512, t, 10, 2, pcs, 0x00000001, 1);
	r = scan_one(t, buf, sizeof(buf), base);
	ok(r.blocks == 1, "an unknown compatible flag is ignored");
	scan_result_free(&r);

	encode(buf, base, base + 512, t, 10, 2, pcs, 0, 1);
	buf[512 - 48 + 24] = 8;	/* offset smaller than the header */
	r = scan_one(t, buf, sizeof(buf), base);
	ok(r.rejected[REJ_LAYOUT] == 1, "an offset inside the header is rejected");
	scan_result_free(&r);

	encode(buf, base, base + 512, t, 10, 2, pcs, 0, 1);
	buf[512 - 48 + 35] = 4;	/* word size of another target */
	r = scan_one(t, buf, sizeof(buf), base);
	ok(r.rejected[REJ_LAYOUT] == 1, "a foreign word size is rejected");
	scan_result_free(&r);
}

/* A block copied elsewhere (memcpy, realloc's copy, user data) fails its check. */
static void copies(void)
{
	struct target t = { 8, 0 };
	uint64_t base = 0x3000;
	unsigned char buf[2048] = { 0 };
	struct scan_result r;

	encode(buf, base, base + 512, t, 10, 3, pcs, 0, 1);
	memcpy(buf + 1024, buf + 512 - 48 - 24, 48 + 24);
	r = scan_one(t, buf, sizeof(buf), base);
	ok(r.blocks == 1 && r.rejected[REJ_CHECK] == 1, "a copied header fails its check value");
	scan_result_free(&r);

	buf[512 - 48 + 8] ^= 1;	/* one bit of the size */
	r = scan_one(t, buf, sizeof(buf), base);
	ok(r.blocks == 0 && r.rejected[REJ_CHECK] == 2, "one flipped bit fails the check value");
	scan_result_free(&r);
}

static void huge_sizes(void)
{
	struct target t = { 8, 0 };
	uint64_t base = 0x4000;
	unsigned char buf[2048] = { 0 };
	struct scan_result r;

	encode(buf, base, base + 512, t, UINT64_MAX - 1, 1, pcs, 0, 1);
	encode(buf, base, base + 1024, t, UINT64_MAX - 1, 1, pcs, 0, 1);
	r = scan_one(t, buf, sizeof(buf), base);
	ok(r.blocks == 2 && r.bytes == UINT64_MAX && r.stacks.saturated,
	   "sizes near UINT64_MAX saturate instead of wrapping");
	scan_result_free(&r);
}

static void odd_places(void)
{
	struct target t = { 8, 1 };
	unsigned char *buf = calloc(1, 1025), *data = buf + 1;	/* host-misaligned data */
	uint64_t base = UINT64_MAX - 1023;	/* the last KiB of the address space */
	struct scan_result r;

	encode(data, base, base + 512, t, 33, 2, pcs, 0, 1);
	r = scan_one(t, data, 1024, base);
	ok(r.blocks == 1 && r.bytes == 33, "misaligned data at the top of the address space");
	scan_result_free(&r);
	free(buf);
}

static void random_bytes(void)
{
	struct target t = { 8, 0 };
	size_t len = 1 << 20;
	unsigned char *buf = malloc(len);
	uint64_t s = 42, base = 0x10000000;
	struct scan_result r;

	for (size_t i = 0; i < len; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		buf[i] = (unsigned char)s;
	}
	/* random words that happen to be the magic, and three real blocks */
	for (size_t i = 64; i < len; i += 4096)
		put(buf + i, HP_MAGIC, 8, 0);
	encode(buf, base, base + 8192, t, 7, 3, pcs, 0, 1);
	encode(buf, base, base + 65536, t, 8, 3, pcs, 0, 1);
	encode(buf, base, base + len, t, 9, 3, pcs, 0, 1);	/* header at the very end */
	r = scan_one(t, buf, len, base);
	ok(r.blocks == 3 && r.bytes == 24 && r.stacks.n == 1 && r.candidates == 3 + len / 4096,
	   "random bytes with planted magics: exactly the 3 real blocks");
	scan_result_free(&r);
	free(buf);
}

/* sort_runs: elements of 3 words, key and original position, in runs of every shape */
struct elem3 {
	uint64_t key, pos, pad;
};

static int elem3_cmp(const void *a, const void *b)
{
	const struct elem3 *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* runs of the given lengths, keys drawn from [0, range) and sorted within each run */
static bool sorts_runs(const size_t *lens, size_t nruns, uint64_t range, unsigned seed)
{
	size_t n = 0, at = 0;
	struct elem3 *v, *want;
	bool same;

	for (size_t r = 0; r < nruns; r++)
		n += lens[r];
	v = calloc(n ? n : 1, sizeof(*v));
	want = calloc(n ? n : 1, sizeof(*want));
	srand(seed);
	for (size_t r = 0; r < nruns; r++) {
		uint64_t k = 0;

		for (size_t i = 0; i < lens[r]; i++) {
			k += (uint64_t)rand() % (range / (lens[r] + 1) + 1);
			v[at + i] = (struct elem3){ k % range, at + i, ~(at + i) };
			if (i && v[at + i].key < v[at + i - 1].key)
				v[at + i].key = v[at + i - 1].key;
		}
		at += lens[r];
	}
	memcpy(want, v, n * sizeof(*v));
	qsort(want, n, sizeof(*want), elem3_cmp);	/* by key, then position: stable */
	same = sort_runs(v, n, sizeof(*v)) && !memcmp(v, want, n * sizeof(*v));
	free(v);
	free(want);
	return same;
}

static void sort_runs_cases(void)
{
	static const size_t one[] = { 1000 }, two[] = { 500, 500 }, head[] = { 1, 999 },
		tail[] = { 999, 1 }, skew[] = { 3, 1000, 7, 2, 400 }, empty[] = { 0, 5, 0 };
	size_t many[64], too_many = 65;
	struct elem3 *v = calloc(too_many, sizeof(*v));
	bool untouched = true;

	ok(sorts_runs(one, 1, 1u << 20, 1), "sort_runs: one run stays as it is");
	ok(sorts_runs(two, 2, 1u << 20, 2), "sort_runs: two interleaved runs");
	ok(sorts_runs(two, 2, 8, 3), "sort_runs: two runs of repeated keys, stably");
	ok(sorts_runs(head, 2, 1u << 20, 4) && sorts_runs(tail, 2, 1u << 20, 5),
	   "sort_runs: one element out of place at either end");
	ok(sorts_runs(skew, 5, 1u << 16, 6) && sorts_runs(skew, 5, 4, 7),
	   "sort_runs: runs of uneven lengths, keys repeated across them");
	ok(sorts_runs(empty, 3, 100, 8), "sort_runs: empty runs");
	for (size_t r = 0; r < 64; r++)
		many[r] = 1 + r * 37 % 101;
	ok(sorts_runs(many, 64, 1u << 24, 9) && sorts_runs(many, 64, 16, 10),
	   "sort_runs: 64 runs");
	for (size_t i = 0; i < too_many; i++)
		v[i].key = too_many - i;
	untouched = !sort_runs(v, too_many, sizeof(*v));
	for (size_t i = 0; i < too_many; i++)
		untouched = untouched && v[i].key == too_many - i;
	ok(untouched, "sort_runs: 65 runs refused, the array untouched");
	free(v);
}

int main(void)
{
	every_target();
	same_as_writer();
	cut_everywhere();
	bad_headers();
	copies();
	huge_sizes();
	odd_places();
	random_bytes();
	sort_runs_cases();
	return tap_done();
}
