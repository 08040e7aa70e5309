/*
 * Unit test of block format v2 in the analyzer: images written by the hand encoder
 * (test/progs/encode.h, from the format's comments) for every word size and byte order,
 * scanned and joined, with exact bytes per stack; damaged, missing, duplicate and cut
 * records; sampling estimates; and the check values docs/FORMAT.md lists as vectors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "image.h"
#include "scan.h"
#include "encode.h"
#include "tap.h"

#define MAXSEG 4

struct img {
	struct image image;
	struct seg segs[MAXSEG];
	struct target t;
};

/* An image of one or more segments, each a buffer of exactly its size (for ASan). */
static void img_init(struct img *m, struct target t)
{
	memset(m, 0, sizeof(*m));
	m->t = t;
	m->image.wsize = t.wsize;
	m->image.big_endian = t.big_endian;
	m->image.fd = -1;
	m->image.segs = m->segs;
}

static unsigned char *img_seg(struct img *m, uint64_t vaddr, size_t len)
{
	unsigned char *p = calloc(1, len ? len : 1);

	m->segs[m->image.nsegs++] = (struct seg){ .vaddr = vaddr, .size = len, .data = p };
	m->image.bytes += len;
	return p;
}

static void img_free(struct img *m)
{
	for (size_t i = 0; i < m->image.nsegs; i++)
		free((void *)m->segs[i].data);
}

/* The buffer byte of target address a (which must be in some segment). */
static unsigned char *at(struct img *m, uint64_t a)
{
	for (size_t i = 0; i < m->image.nsegs; i++)
		if (a >= m->segs[i].vaddr && a - m->segs[i].vaddr < m->segs[i].size)
			return (unsigned char *)m->segs[i].data + (a - m->segs[i].vaddr);
	abort();
}

static void block(struct img *m, uint64_t user, uint64_t size, uint32_t site, unsigned shift,
		  unsigned flags, uint64_t check_xor)
{
	encode2_block(at(m, user - 24) + 24, user, size, site, shift, flags, 5, m->t, check_xor);
}

static void stack_rec(struct img *m, uint64_t a, uint32_t id, unsigned flags, const uint64_t *pcs,
		      unsigned n, uint64_t check_xor)
{
	encode2_stack(at(m, a), a, id, flags, pcs, n, m->t, check_xor);
}

static void part_rec(struct img *m, uint64_t a, uint32_t id, uint32_t outer, const uint64_t *pcs,
		     unsigned n)
{
	encode2_stack_ref(at(m, a), a, id, HP2_STACK_PART, outer, pcs, n, m->t, 0);
}

static void joined_rec(struct img *m, uint64_t a, uint32_t id, uint32_t native, uint32_t py,
		       unsigned nframes)
{
	encode2_stack_ref(at(m, a), a, id, HP2_STACK_JOINED, native | (uint64_t)py << 32, NULL,
			  nframes, m->t, 0);
}

static void site_rec(struct img *m, uint64_t a, uint32_t id, uint32_t stack, uint64_t check_xor)
{
	encode2_site(at(m, a), a, id, stack, 1000 + id, HP2_ENTRY_MALLOC, 0, m->t, check_xor);
}

static void proc_rec(struct img *m, uint64_t a, uint64_t period)
{
	encode2_proc(at(m, a), a, 2, 4242, period, 1000000, 2000000, 64, m->t, 0);
}

static void slab_rec(struct img *m, uint64_t a, uint64_t start, unsigned stride,
		     const uint64_t *slots, unsigned n, uint64_t check_xor)
{
	encode2_slab(at(m, a), a, start, 48, stride, slots, n, m->t, check_xor);
}

static void scan(struct img *m, unsigned jobs, struct scan_result *r)
{
	scan_image(&m->image, jobs, r);
}

/* The stack with these pcs and flags, or NULL. */
static const struct stack *find_stack(const struct scan_result *r, const uint64_t *pcs,
				      unsigned n, unsigned flags)
{
	for (size_t i = 0; i < r->stacks.cap; i++) {
		const struct stack *s = r->stacks.slots[i];

		if (s && s->nframes == n && s->flags == flags &&
		    (!n || !memcmp(s->pcs, pcs, n * sizeof(*pcs))))
			return s;
	}
	return NULL;
}

static uint64_t bytes_of(const struct scan_result *r, const uint64_t *pcs, unsigned n,
			 unsigned flags)
{
	const struct stack *s = find_stack(r, pcs, n, flags);

	return s ? stack_bytes(s) : 0;
}

static uint64_t rejected(const struct scan_result *r)
{
	uint64_t n = 0;

	for (int i = 0; i < REJ_NREASONS; i++)
		n += r->rejected[i];
	return n;
}

static const uint64_t pa[] = { 0x401234, 0x401500, 0x400010 };
static const uint64_t pb[] = { 0x402000, 0x400010 };

static const struct target targets[] = { { 8, 0 }, { 8, 1 }, { 4, 0 }, { 4, 1 } };

static const char *tname(struct target t)
{
	return t.wsize == 8 ? (t.big_endian ? "64-bit BE" : "64-bit LE")
			    : (t.big_endian ? "32-bit BE" : "32-bit LE");
}

/*
 * Two stacks, three sites (1 and 3 share stack 10: two threads), a process record, and
 * blocks of each at shifts 0..2; exact bytes per stack.
 */
static void every_target(void)
{
	for (size_t i = 0; i < 4; i++) {
		struct img m;
		struct scan_result r;
		uint64_t base = 0x10000;

		img_init(&m, targets[i]);
		img_seg(&m, base, 8192);
		proc_rec(&m, base + 0x40, 0);
		stack_rec(&m, base + 0x100, 10, 0, pa, 3, 0);
		stack_rec(&m, base + 0x180, 11, 0, pb, 2, 0);
		site_rec(&m, base + 0x200, 1, 10, 0);
		site_rec(&m, base + 0x240, 2, 11, 0);
		site_rec(&m, base + 0x280, 3, 10, 0);
		block(&m, base + 0x410, 100, 1, 0, 0, 0);
		block(&m, base + 0x500, 7, 3, 1, 0, 0);
		block(&m, base + 0x600, 3000, 2, 2, 0, 0);
		block(&m, base + 0x800, 1, 2, 0, 0, 0);
		block(&m, base + 0x900, 11, 0, 0, 0, 0);	/* site 0: no stack taken */
		scan(&m, 2, &r);
		ok(r.blocks == 5 && r.v2_blocks == 5 && r.records == 6 && !rejected(&r) &&
		   r.stacks.n == 3 && bytes_of(&r, pa, 3, 0) == 107 && bytes_of(&r, pb, 2, 0) == 3001 &&
		   bytes_of(&r, NULL, 0, 0) == 11 && !r.join.unknown_blocks && !r.join.noise &&
		   !r.join.damaged && r.join.have_proc && r.join.proc.pid == 4242,
		   "%s: v2 blocks join through sites to stacks with exact bytes", tname(targets[i]));
		scan_result_free(&r);
		img_free(&m);
	}
}

static void big_and_aligned(void)
{
	for (size_t i = 0; i < 4; i += 2) {
		struct img m;
		struct scan_result r;
		uint64_t base = 0x40000000, big = (1ULL << 32) + 5;

		img_init(&m, targets[i]);
		img_seg(&m, base, 4096);
		stack_rec(&m, base, 10, 0, pa, 3, 0);
		site_rec(&m, base + 0x100, 1, 10, 0);
		block(&m, base + 0x400, big, 1, 1, 0, 0);
		block(&m, base + 0x800, 0xFFFFFFFE, 1, 4, 0, 0);
		block(&m, base + 0xc00, 64, 1, HP2_MAX_SHIFT, 0, 0);
		scan(&m, 1, &r);
		ok(r.blocks == 3 && !rejected(&r) &&
		   bytes_of(&r, pa, 3, 0) == big + 0xFFFFFFFE + 64,
		   "%s: BIG sizes from user - 24, aligned blocks of any shift", tname(targets[i]));
		scan_result_free(&r);
		/* the check binds the fields, so an impossible shift is a real header's fault */
		block(&m, base + 0xc00, 64, 1, HP2_MAX_SHIFT + 1, 0, 0);
		block(&m, base + 0x800, 5, 1, 0, HP2_F_BIG, 0);	/* BIG without shift */
		block(&m, base + 0x400, 5, 1, 1, 0x4, 0);	/* unknown incompatible flag */
		scan(&m, 1, &r);
		ok(r.blocks == 0 && r.rejected[REJ_LAYOUT] == 2 && r.rejected[REJ_FLAGS] == 1,
		   "%s: shift over the limit, BIG at shift 0 and unknown flags are rejected",
		   tname(targets[i]));
		scan_result_free(&r);
		img_free(&m);
	}
}

/* A damaged stack record, a missing site, a duplicate id: [unknown stack], exact. */
static void bad_records(void)
{
	static const uint64_t pc2[] = { 0x409999, 0x400010 };
	struct img m;
	struct scan_result r;
	uint64_t base = 0x30000;

	img_init(&m, targets[0]);
	img_seg(&m, base, 8192);
	stack_rec(&m, base + 0x000, 10, 0, pa, 3, 0);
	stack_rec(&m, base + 0x080, 11, 0, pb, 2, 1);		/* damaged */
	stack_rec(&m, base + 0x100, 12, 0, pa, 3, 0);		/* 12 twice, differing */
	stack_rec(&m, base + 0x180, 12, 0, pc2, 2, 0);
	stack_rec(&m, base + 0x200, 13, 0, pc2, 2, 0);		/* 13 twice, the same */
	stack_rec(&m, base + 0x280, 13, 0, pc2, 2, 0);
	site_rec(&m, base + 0x400, 1, 10, 0);
	site_rec(&m, base + 0x440, 2, 11, 0);
	site_rec(&m, base + 0x480, 4, 12, 0);
	site_rec(&m, base + 0x4c0, 5, 13, 0);
	block(&m, base + 0x810, 100, 1, 0, 0, 0);
	block(&m, base + 0x910, 20, 2, 0, 0, 0);	/* its stack record is damaged */
	block(&m, base + 0xa10, 3, 3, 0, 0, 0);		/* site 3 has no record */
	block(&m, base + 0xb10, 40, 4, 0, 0, 0);	/* stack 12 is ambiguous */
	block(&m, base + 0xc10, 500, 5, 0, 0, 0);
	scan(&m, 2, &r);
	ok(r.blocks == 5 && bytes_of(&r, pa, 3, 0) == 100 && bytes_of(&r, pc2, 2, 0) == 500 &&
	   bytes_of(&r, NULL, 0, STACK_UNKNOWN) == 63 && r.join.unknown_blocks == 3 &&
	   r.join.unknown_bytes == 63 && r.rejected[REJ_CHECK] == 1 && r.join.conflicts == 1 &&
	   r.stacks.n == 3,
	   "damaged stack record, missing site, differing duplicate: [unknown stack] holds "
	   "exactly their bytes, others unaffected");
	scan_result_free(&r);
	img_free(&m);
}

/*
 * Stacks in parts (HP2_STACK_PART, HP2_STACK_JOINED) on every target: a joined stack's
 * words are its native chain's then its Python chain's, innermost first, bytes exact.
 */
static void stack_parts(void)
{
	static const uint64_t outer[] = { 0x400010, 0x400020 }, inner[] = { 0x401234, 0x401500 };
	static const uint64_t four[] = { 0x401234, 0x401500, 0x400010, 0x400020 };
	static const uint64_t six[] = { 0x401234, 0x401500, 0x400010, 0x400020, 0x400010,
					0x400020 };

	for (size_t i = 0; i < 4; i++) {
		struct img m;
		struct scan_result r;
		uint64_t base = 0x50000;

		img_init(&m, targets[i]);
		img_seg(&m, base, 8192);
		part_rec(&m, base + 0x000, 20, 0, outer, 2);
		part_rec(&m, base + 0x040, 21, 20, inner, 2);
		joined_rec(&m, base + 0x080, 10, 21, 0, 4);
		joined_rec(&m, base + 0x0c0, 11, 21, 20, 6);
		stack_rec(&m, base + 0x100, 12, 0, four, 4, 0);	/* the same words, whole */
		site_rec(&m, base + 0x200, 1, 10, 0);
		site_rec(&m, base + 0x240, 2, 11, 0);
		site_rec(&m, base + 0x280, 3, 12, 0);
		block(&m, base + 0x410, 100, 1, 0, 0, 0);
		block(&m, base + 0x510, 30, 2, 0, 0, 0);
		block(&m, base + 0x610, 5, 3, 0, 0, 0);
		scan(&m, 2, &r);
		ok(r.blocks == 3 && !rejected(&r) && r.stacks.n == 2 &&
		   bytes_of(&r, four, 4, 0) == 105 && bytes_of(&r, six, 6, 0) == 30 &&
		   !r.join.unknown_blocks && !r.join.broken_stacks,
		   "%s: a joined stack's words come from its parts, the same stack as whole",
		   tname(targets[i]));
		scan_result_free(&r);
		img_free(&m);
	}
}

/*
 * Parts as an attacker would write them: a cycle, a missing part, a chain that gives
 * other than nframes words, a joined stack named as a part, a site naming a part, a part
 * of no words. Each costs only its own blocks, under [unknown stack]; no loop, no crash.
 */
static void stack_parts_bad(void)
{
	static const uint64_t w2[] = { 0x401234, 0x401500 }, w1[] = { 0x400010 };
	struct img m;
	struct scan_result r;
	uint64_t base = 0x60000;

	img_init(&m, targets[0]);
	img_seg(&m, base, 8192);
	part_rec(&m, base + 0x000, 20, 0, w1, 1);
	part_rec(&m, base + 0x040, 21, 20, w2, 2);
	part_rec(&m, base + 0x080, 30, 31, w1, 1);		/* 30 -> 31 -> 30 */
	part_rec(&m, base + 0x0c0, 31, 30, w1, 1);
	part_rec(&m, base + 0x100, 32, 32, w2, 2);		/* its own outer */
	encode2_stack_ref(at(&m, base + 0x140), base + 0x140, 33, HP2_STACK_PART, 0, NULL, 0,
			  m.t, 0);			/* no words */
	joined_rec(&m, base + 0x180, 10, 21, 0, 3);		/* good */
	joined_rec(&m, base + 0x1c0, 11, 30, 0, 1000);		/* cycle */
	joined_rec(&m, base + 0x200, 12, 32, 0, 7);		/* cycle on itself */
	joined_rec(&m, base + 0x240, 13, 99, 0, 2);		/* missing */
	joined_rec(&m, base + 0x280, 14, 21, 0, 4);		/* 3 words, says 4 */
	joined_rec(&m, base + 0x2c0, 15, 10, 0, 3);		/* a joined stack as a part */
	joined_rec(&m, base + 0x300, 16, 33, 0, 0);		/* a part rejected */
	for (uint32_t s = 1; s <= 7; s++)
		site_rec(&m, base + 0x400 + 0x40 * (s - 1), s, 9 + s, 0);
	site_rec(&m, base + 0x600, 8, 21, 0);			/* a site naming a part */
	for (uint32_t s = 1; s <= 8; s++)
		block(&m, base + 0x810 + 0x40 * (s - 1), s, s, 0, 0, 0);
	scan(&m, 2, &r);
	ok(r.blocks == 8 && bytes_of(&r, (const uint64_t[]){ 0x401234, 0x401500, 0x400010 }, 3, 0) ==
	   1 && bytes_of(&r, NULL, 0, STACK_UNKNOWN) == 35 && r.join.unknown_blocks == 7 &&
	   r.join.broken_stacks == 6 && r.rejected[REJ_LAYOUT] == 1 && r.stacks.n == 2,
	   "parts in a cycle, missing, short, of the wrong kind or rejected: [unknown stack] "
	   "holds exactly their bytes");
	scan_result_free(&r);
	img_free(&m);
}

/*
 * A joined stack dropped amid the others must not hide the parts the others need (a
 * dropped record once broke the lookup by id of every part below it), and one broken
 * copy of a joined id makes the id unsure, as two differing whole records do.
 */
static void stack_parts_dropped_amid(void)
{
	static const uint32_t parts[] = { 1, 2, 3, 5, 6, 7 };
	struct img m;
	struct scan_result r;
	uint64_t base = 0x60000, w[6];
	bool whole = true;

	img_init(&m, targets[0]);
	img_seg(&m, base, 8192);
	for (int k = 0; k < 6; k++) {
		w[k] = 0x401000 + 0x10 * (uint64_t)k;
		part_rec(&m, base + 0x40 * (uint64_t)k, parts[k], 0, &w[k], 1);
		joined_rec(&m, base + 0x180 + 0x40 * (uint64_t)k, 8 + (uint32_t)k, parts[k], 0, 1);
		site_rec(&m, base + 0x400 + 0x40 * (uint64_t)k, 1 + (uint32_t)k, 8 + (uint32_t)k, 0);
		block(&m, base + 0x810 + 0x40 * (uint64_t)k, 10, 1 + (uint32_t)k, 0, 0, 0);
	}
	joined_rec(&m, base + 0x300, 4, 99, 0, 1);		/* missing part, id amid */
	joined_rec(&m, base + 0x340, 20, 1, 0, 1);		/* whole... */
	joined_rec(&m, base + 0x380, 20, 99, 0, 1);		/* ...and broken, one id */
	site_rec(&m, base + 0x580, 7, 4, 0);
	site_rec(&m, base + 0x5c0, 8, 20, 0);
	block(&m, base + 0xa10, 100, 7, 0, 0, 0);
	block(&m, base + 0xa50, 1000, 8, 0, 0, 0);
	scan(&m, 1, &r);
	for (int k = 0; k < 6; k++)
		whole &= bytes_of(&r, &w[k], 1, 0) == 10;
	ok(whole && bytes_of(&r, NULL, 0, STACK_UNKNOWN) == 1100 && r.join.unknown_blocks == 2 &&
	   r.join.broken_stacks == 3 && r.stacks.n == 7,
	   "a joined stack dropped amid the others hides no part; a broken copy drops its id");
	scan_result_free(&r);
	img_free(&m);
}

static void truncated_stack(void)
{
	struct img m;
	struct scan_result r;
	uint64_t base = 0x40000;

	img_init(&m, targets[1]);
	img_seg(&m, base, 4096);
	stack_rec(&m, base, 10, HP2_STACK_TRUNCATED, pa, 3, 0);
	stack_rec(&m, base + 0x80, 11, 0, pa, 3, 0);
	site_rec(&m, base + 0x100, 1, 10, 0);
	site_rec(&m, base + 0x140, 2, 11, 0);
	block(&m, base + 0x400, 9, 1, 0, 0, 0);
	block(&m, base + 0x500, 4, 2, 0, 0, 0);
	scan(&m, 1, &r);
	ok(bytes_of(&r, pa, 3, STACK_TRUNCATED) == 9 && bytes_of(&r, pa, 3, 0) == 4,
	   "a stack cut at the frame limit stays apart from the same pcs uncut");
	scan_result_free(&r);
	img_free(&m);
}

/* the estimate the report must show: exact part plus the rounded Poisson estimate */
static uint64_t expect_est(uint64_t exact, const uint64_t *sizes, int n, uint64_t period,
			   int bytes)
{
	double e = 0;

	for (int i = 0; i < n; i++) {
		double w = 1 / (1 - exp(-(double)sizes[i] / (double)period));

		e += bytes ? w * (double)sizes[i] : w;
	}
	return exact + (uint64_t)floor(e + 0.5);
}

static void sampled(void)
{
	static const uint64_t sz[] = { 100, 100, 2000, 77777 };
	struct img m;
	struct scan_result r;
	uint64_t base = 0x50000, want_bytes, want_blocks;
	const struct stack *s;

	img_init(&m, targets[2]);
	img_seg(&m, base, 8192);
	stack_rec(&m, base, 10, 0, pa, 3, 0);
	site_rec(&m, base + 0x100, 1, 10, 0);
	site_rec(&m, base + 0x140, 2, 10, 0);
	for (int i = 0; i < 4; i++)
		block(&m, base + 0x400 + 0x100 * i, sz[i], 1 + i % 2, 0, HP2_F_SAMPLED, 0);
	block(&m, base + 0x900, 50, 1, 0, 0, 0);
	scan(&m, 2, &r);
	ok(r.join.unweighted && bytes_of(&r, pa, 3, 0) == 50 + 100 + 100 + 2000 + 77777,
	   "sampled blocks without a process record count one for one, with a warning");
	scan_result_free(&r);
	proc_rec(&m, base + 0x1000, 1000);
	scan(&m, 2, &r);
	want_bytes = expect_est(50, sz, 4, 1000, 1);
	want_blocks = expect_est(1, sz, 4, 1000, 0);
	s = find_stack(&r, pa, 3, 0);
	ok(s && !r.join.unweighted && r.join.sampled_blocks == 4 && stack_bytes(s) == want_bytes &&
	   stack_blocks(s) == want_blocks && s->nsizes == 5,
	   "sampled blocks with period 1000: %llu bytes in %llu blocks, as estimated here",
	   (unsigned long long)want_bytes, (unsigned long long)want_blocks);
	scan_result_free(&r);
	img_free(&m);
}

static void v1_beside_v2(void)
{
	struct img m;
	struct scan_result r;
	uint64_t base = 0x60000;
	struct hp_hdr h = { .size = 33, .offset = HP_HDR_SIZE + 3 * 8, .version = 1,
			    .nframes = 3, .wsize = 8, .magic = HP_MAGIC };

	img_init(&m, targets[0]);
	img_seg(&m, base, 4096);
	stack_rec(&m, base, 10, 0, pa, 3, 0);
	site_rec(&m, base + 0x100, 1, 10, 0);
	block(&m, base + 0x400, 44, 1, 0, 0, 0);
	encode_hdr(at(&m, base + 0x800 - HP_HDR_SIZE), h, base + 0x800, pa, 3, m.t, 0);
	scan(&m, 1, &r);
	ok(r.blocks == 2 && r.v2_blocks == 1 && bytes_of(&r, pa, 3, 0) == 77 && r.stacks.n == 1,
	   "v1 and v2 blocks of the same stack add up in one image");
	scan_result_free(&r);
	img_free(&m);
}

/* Records cut at the image's end at every byte: truncated, never read past. */
static void records_cut(void)
{
	struct target t = targets[3];
	unsigned char whole[512];
	uint64_t base = 0x70000;
	size_t slen = encode2_stack_len(3, t);
	int bad = 0;

	memset(whole, 0, sizeof(whole));
	encode2_block(whole + 0x40, base + 0x40, 12, 1, 0, 0, 0, t, 0);
	encode2_site(whole + 0x80, base + 0x80, 1, 10, 7, 1, 0, t, 0);
	encode2_stack(whole + 0xc0, base + 0xc0, 10, 0, pa, 3, t, 0);
	for (size_t len = 0xc0; len <= 0xc0 + slen; len++) {
		struct img m;
		struct scan_result r;
		/* the padding that rounds the record up to 8 bytes is not part of it */
		int whole_rec = len >= 0xc0 + 32 + 3 * t.wsize;

		img_init(&m, t);
		memcpy(img_seg(&m, base, len), whole, len);
		scan(&m, 1, &r);
		if (r.blocks != 1 || bytes_of(&r, pa, 3, 0) != (whole_rec ? 12u : 0u) ||
		    bytes_of(&r, NULL, 0, STACK_UNKNOWN) != (whole_rec ? 0u : 12u) ||
		    r.rejected[REJ_TRUNCATED] != (len >= 0xc8 && !whole_rec))
			bad++;
		scan_result_free(&r);
		img_free(&m);
	}
	ok(!bad, "a stack record cut at every byte by the image's end: truncated, its blocks "
	   "under [unknown stack]");
}

/* A stack record across a 4 MiB window edge of a file-backed segment is read whole. */
static void window_edge(void)
{
	struct img m;
	struct scan_result r;
	size_t len = 13 << 20;
	uint64_t base = 0x1000000, rec = base + (4 << 20) - 16;
	char path[] = "/tmp/v2_test.XXXXXX";
	int fd = mkstemp(path);
	unsigned char *p;
	uint64_t pcs[40];

	for (int i = 0; i < 40; i++)
		pcs[i] = 0x400000 + 16 * (uint64_t)i;
	img_init(&m, targets[0]);
	p = img_seg(&m, base, len);
	stack_rec(&m, rec, 10, 0, pcs, 40, 0);
	site_rec(&m, base + (8 << 20) - 8, 1, 10, 0);		/* across the next edge */
	block(&m, base + 0x100, 5, 1, 0, 0, 0);
	block(&m, base + (12 << 20) + 8, 6, 1, 0, 0, 0);	/* its info in the window below */
	if (fd < 0 || write(fd, p, len) != (ssize_t)len) {
		skip("window edge", "cannot write a temporary file");
		return;
	}
	unlink(path);
	m.segs[0].in_file = true;
	m.segs[0].fd = fd;
	scan(&m, 2, &r);
	ok(r.records == 2 && bytes_of(&r, pcs, 40, 0) == 11 && !rejected(&r),
	   "records and headers across a window edge are read whole");
	scan_result_free(&r);
	close(fd);
	img_free(&m);
}

/*
 * A record's check word with the tags' top 16 bits is no block tag: one in 65,536
 * records has one, and the site id read below it (the magic's upper half) can name a
 * site, so it was counted as a damaged header (a Python process's dumps, often).
 */
static void record_check_word(void)
{
	struct img m;
	struct scan_result r;
	uint64_t base = 0x80000, a = base + 0x100;
	uint32_t id = (uint32_t)(HP2_SITE_MAGIC >> 32), stack;

	for (stack = 1; stack < (1u << 24); stack++) {
		uint64_t w[2] = { id | (uint64_t)stack << 32,
				  (uint32_t)(1000 + id) | (uint64_t)HP2_ENTRY_MALLOC << 32 };

		if (encode2_rec_check(a, w, 2) >> 48 == HP2_MAGIC16)
			break;
	}
	img_init(&m, targets[0]);
	img_seg(&m, base, 8192);
	site_rec(&m, a, id, stack, 0);
	scan(&m, 2, &r);
	ok(stack < (1u << 24) && r.records == 1 && !r.join.damaged && !r.join.noise &&
	   !rejected(&r),
	   "a site record whose check word looks like a tag: no damaged header, no noise");
	scan_result_free(&r);
	img_free(&m);
}

/* Tags with a bad check: noise unless their site id names a site record. */
static void noise_and_damage(void)
{
	struct img m;
	struct scan_result r;
	uint64_t base = 0x80000;

	img_init(&m, targets[0]);
	img_seg(&m, base, 8192);
	stack_rec(&m, base, 10, 0, pa, 3, 0);
	site_rec(&m, base + 0x100, 1, 10, 0);
	block(&m, base + 0x400, 10, 1, 0, 0, 0);
	block(&m, base + 0x500, 10, 1, 0, 0, 1);		/* damaged: site 1 exists */
	block(&m, base + 0x600, 10, 77, 0, 0, 1);		/* noise: no site 77 */
	put(at(&m, base + 0x700), 0xA3E1000000001234ULL, 8, 0);	/* a word sharing 16 bits */
	put(at(&m, base + 0x800), 0xA3E1FFFFFFFFFFFFULL, 8, 0);
	scan(&m, 2, &r);
	ok(r.blocks == 1 && !rejected(&r) && r.join.damaged == 1 && r.join.noise == 3 &&
	   r.candidates == 7,
	   "v2 tags failing their check: 1 damaged (known site), 3 noise, none rejected");
	scan_result_free(&r);
	img_free(&m);
}

/*
 * A word with the tags' 16 bits right after a pointer (a dict entry's hash after the
 * previous entry's value): the pointer's upper half, read as a site id, names one of a
 * big process's sites (0x7f12 here). Such a word is noise unless its own bits read as
 * a tag's: each below fails one thing a header's tag has (known flags, BIG only with a
 * shift, a shift <= 26, its block's start in its segment, a time no later than the
 * dump's, SAMPLED only when the process samples). A real header of that site whose
 * check bits, or size, were overwritten stays damaged.
 */
#define HASH(flags, shift, time, low) \
	(0xA3E1ULL << 48 | (uint64_t)(flags) << 44 | (uint64_t)(shift) << 39 | \
	 (uint64_t)(time) << 27 | (low))

static void hash_after_pointer(void)
{
	static const uint64_t hashes[] = {
		HASH(4, 0, 3, 0x5a5a5a5),	/* an incompatible flag */
		HASH(1, 0, 3, 0x1234567),	/* SAMPLED: the process does not sample */
		HASH(2, 0, 3, 0x7654321),	/* BIG with shift 0 */
		HASH(0, 29, 3, 0x0abcdef),	/* shift over 26 */
		HASH(0, 12, 3, 0x3141592),	/* its block would start 64 KiB down: before
						 * the segment */
		HASH(0, 0, 0x480, 0x2718281),	/* 32.8 s after the start: after every block */
	};
	const size_t n = sizeof(hashes) / sizeof(hashes[0]);
	uint64_t base = 0x7f1200000000ULL, user = base + 0x1000;
	uint32_t site = (uint32_t)(base >> 32);
	struct img m;
	struct scan_result r;

	img_init(&m, targets[0]);
	img_seg(&m, base, 16384);
	proc_rec(&m, base, 0);
	stack_rec(&m, base + 0x100, 10, 0, pa, 3, 0);
	site_rec(&m, base + 0x200, site, 10, 0);
	block(&m, base + 0x400, 100, site, 0, 0, 0);	/* time code 5: the newest, 5 ms */
	for (size_t i = 0; i < n; i++) {
		put(at(&m, user + 16 * i), base + 0x2345678 + 16 * i, 8, 0);
		put(at(&m, user + 16 * i + 8), hashes[i], 8, 0);
	}
	scan(&m, 2, &r);
	ok(r.blocks == 1 && r.join.damaged == 0 && r.join.noise == n,
	   "a hash after a pointer naming a site, its tag bits no header's: noise (%llu "
	   "damaged, %llu noise)", (unsigned long long)r.join.damaged,
	   (unsigned long long)r.join.noise);
	scan_result_free(&r);

	block(&m, base + 0x2010, 300, site, 0, 0, 1);	/* its check bits overwritten */
	block(&m, base + 0x2310, 400, site, 1, 0, 0);
	put(at(&m, base + 0x2310 - 16), 0x55555555, 4, 0);	/* its size overwritten */
	scan(&m, 2, &r);
	ok(r.blocks == 1 && r.join.damaged == 2 && r.join.noise == n,
	   "a header of that site overwritten (check bits, size): damaged (%llu damaged)",
	   (unsigned long long)r.join.damaged);
	scan_result_free(&r);

	/* the dump's time (a snapshot's note) is its now: a header 32.8 s old reads as one */
	m.image.taken_mono_ns = 1000000 + 40000ULL * 1000000;
	scan(&m, 2, &r);
	ok(r.join.now_from == NOW_TAKEN && r.join.now_ms == 40000 && r.join.damaged == 3 &&
	   r.join.noise == n - 1,
	   "with the snapshot's time 40 s after the start, a tag of 32.8 s is damaged");
	scan_result_free(&r);
	m.image.taken_mono_ns = 0;
	scan(&m, 2, &r);
	ok(r.join.now_from == NOW_NEWEST && r.join.now_ms == 5, "without it, now is the newest block's time");
	scan_result_free(&r);
	img_free(&m);
}

/*
 * The residue of the hashes above: one whose bits all read as a tag's (flags, shift,
 * time) after a pointer naming a site. Held in a whole block's user bytes (a dict's
 * key table in a block of its own), it is that block's data, not a header: a header
 * never lies inside another live block. A header of the same site right above the
 * block, whose check bits an overflow of it overwrote, is reached from outside the
 * block's user bytes and stays damaged. The block may start in the chunk below the
 * tag's (chunks of 32 MiB go to different threads).
 */
static void hash_inside_block(void)
{
	uint64_t base = 0x7f1200000000ULL, user = base + 0x1000, edge = base + (32 << 20);
	uint32_t site = (uint32_t)(base >> 32);
	struct img m;
	struct scan_result r;

	img_init(&m, targets[0]);
	img_seg(&m, base, (32 << 20) + 65536);
	proc_rec(&m, base, 0);
	stack_rec(&m, base + 0x100, 10, 0, pa, 3, 0);
	site_rec(&m, base + 0x200, site, 10, 0);
	block(&m, user, 0x200, site, 0, 0, 0);	/* time code 5: the newest, 5 ms */
	put(at(&m, user + 0x40), base + 0x2345678, 8, 0);
	put(at(&m, user + 0x48), HASH(0, 0, 3, 0x1618033), 8, 0);
	scan(&m, 2, &r);
	ok(r.blocks == 1 && r.join.damaged == 0 && r.join.noise == 1,
	   "a hash reading as a tag of a known site, in a whole block's user bytes: noise "
	   "(%llu damaged, %llu noise)", (unsigned long long)r.join.damaged,
	   (unsigned long long)r.join.noise);
	scan_result_free(&r);

	block(&m, user + 0x210, 64, site, 0, 0, 1);	/* above it, its check bits overwritten */
	scan(&m, 2, &r);
	ok(r.blocks == 1 && r.join.damaged == 1 && r.join.noise == 1,
	   "a header right above that block, its check bits overwritten: damaged (%llu damaged, "
	   "%llu noise)", (unsigned long long)r.join.damaged, (unsigned long long)r.join.noise);
	scan_result_free(&r);

	block(&m, edge - 0x100, 0x1000, site, 0, 0, 0);	/* a block across the chunks' edge */
	put(at(&m, edge + 0x80), base + 0x3456789, 8, 0);
	put(at(&m, edge + 0x88), HASH(0, 0, 3, 0x2718281), 8, 0);
	put(at(&m, edge + 0x1000), base + 0x4567890, 8, 0);	/* and past its end */
	put(at(&m, edge + 0x1008), HASH(0, 0, 3, 0x1414213), 8, 0);
	for (unsigned jobs = 1; jobs <= 2; jobs++) {
		scan(&m, jobs, &r);
		ok(r.blocks == 2 && r.join.damaged == 2 && r.join.noise == 2,
		   "%u job(s): a hash in a block that starts in the chunk below: noise; one past "
		   "its end: damaged (%llu damaged, %llu noise)", jobs,
		   (unsigned long long)r.join.damaged, (unsigned long long)r.join.noise);
		scan_result_free(&r);
	}
	img_free(&m);
}

/*
 * A copy of a header in a thread's stack: heapprof.so read the header of a block since
 * freed into its locals, and the words stayed in the dead frames below (three
 * snapshots of python 3.13 in t3016's run had one, always in the main thread's stack). Every bit
 * but the check reads as that header's; the check is bound to the block's address.
 * A stack (the segment the program's name the kernel wrote tops, or a thread's stack
 * pointer is in) holds no header, unless a block gives its memory (a coroutine's
 * stack): then the stack's segment holds that whole block, and a failed tag beside it
 * is damage again.
 */
static void header_copy_in_stack(void)
{
	uint64_t heap = 0x55aa00000000ULL, stack = 0x7ffe00000000ULL;
	struct image_thread th = { .have_sp = true, .sp = stack + 0x1f00 };
	struct img m;
	struct scan_result r;

	img_init(&m, targets[0]);
	img_seg(&m, heap, 8192);
	img_seg(&m, stack, 8192);
	proc_rec(&m, heap, 0);
	stack_rec(&m, heap + 0x100, 10, 0, pa, 3, 0);
	site_rec(&m, heap + 0x200, 0x901, 10, 0);
	block(&m, heap + 0x1000, 0x50, 0x901, 0, 0, 0);
	memcpy(at(&m, stack + 0x4c0), at(&m, heap + 0x1000 - 16), 16);	/* the copy */
	scan(&m, 2, &r);
	ok(r.blocks == 1 && r.join.damaged == 1, "no stack known: the copy reads as damaged");
	scan_result_free(&r);

	m.image.at_execfn = stack + 0x1ff0;
	scan(&m, 2, &r);
	ok(r.blocks == 1 && r.join.damaged == 0 && r.join.noise == 1,
	   "a header's copy in the main thread's stack (AT_EXECFN): noise (%llu damaged)",
	   (unsigned long long)r.join.damaged);
	scan_result_free(&r);
	m.image.at_execfn = 0;
	m.image.threads = &th;
	m.image.nthreads = 1;
	scan(&m, 2, &r);
	ok(r.blocks == 1 && r.join.damaged == 0 && r.join.noise == 1,
	   "a header's copy in a thread's stack (its stack pointer): noise (%llu damaged)",
	   (unsigned long long)r.join.damaged);
	scan_result_free(&r);

	block(&m, stack + 0x1000, 0x100, 0x901, 0, 0, 0);	/* a block in that segment */
	scan(&m, 2, &r);
	ok(r.blocks == 2 && r.join.damaged == 1,
	   "a stack's segment that holds a whole block: the copy beside it is damaged again");
	scan_result_free(&r);
	img_free(&m);
}

/*
 * Slab tables: each live slot is a v2 block at start + 48 + i * stride, with no header,
 * joined through its site as a header's block is; empty slots are nothing, impossible
 * ones (size 0 or over the stride, bit 63, an unknown flag) counted, not blocks.
 */
static void slabs(void)
{
	for (size_t i = 0; i < 4; i++) {
		uint64_t start = targets[i].wsize == 8 ? 0x7f0000004000ULL : 0x40004000;
		uint64_t slots[] = { encode2_slot(1, 48, 5, 0), 0, encode2_slot(1, 40, 5, 0),
				     encode2_slot(2, 64, 0x23b, 0), encode2_slot(0, 10, 5, 0),
				     encode2_slot(1, 65, 5, 0), encode2_slot(1, 0, 5, 0),
				     encode2_slot(1, 8, 5, 0) | 1ULL << 63,
				     encode2_slot(1, 8, 5, 0) | 2ULL << 60 };
		struct img m;
		struct scan_result r;
		uint64_t base = 0x10000;
		bool where = true;

		img_init(&m, targets[i]);
		img_seg(&m, base, 8192);
		proc_rec(&m, base + 0x40, 0);
		stack_rec(&m, base + 0x100, 10, 0, pa, 3, 0);
		stack_rec(&m, base + 0x180, 11, 0, pb, 2, 0);
		site_rec(&m, base + 0x200, 1, 10, 0);
		site_rec(&m, base + 0x240, 2, 11, 0);
		slab_rec(&m, base + 0x400, start, 64, slots, 9, 0);
		block(&m, base + 0x810, 100, 1, 0, 0, 0);
		scan_image_blocks_with(&m.image, 2, &(struct join_opts){ 0 }, &r);
		for (size_t k = 0; k < r.list.n; k++) {
			const struct scan_block *b = &r.list.v[k];

			if (b->user != base + 0x810 && (b->below || (b->user - start - 48) % 64))
				where = false;
		}
		ok(r.blocks == 5 && r.slabs == 1 && r.slab_blocks == 4 && r.slab_bytes == 162 &&
		   r.slots_bad == 4 && !rejected(&r) && r.list.n == 5 && where &&
		   bytes_of(&r, pa, 3, 0) == 188 && bytes_of(&r, pb, 2, 0) == 64 &&
		   bytes_of(&r, NULL, 0, 0) == 10 && !r.join.noise && !r.join.damaged,
		   "%s: a slab table's live slots are blocks at their slots, joined like headers'; "
		   "impossible slot words counted", tname(targets[i]));
		scan_result_free(&r);
		img_free(&m);
	}
}

/* Sampled slots weigh as sampled headers do, by the process record's period. */
static void slabs_sampled(void)
{
	static const uint64_t sz[] = { 100, 300 };
	uint64_t slots[] = { encode2_slot(1, 100, 5, 1), encode2_slot(1, 300, 5, 1),
			     encode2_slot(1, 50, 5, 0) };
	struct img m;
	struct scan_result r;
	uint64_t base = 0x50000, want_bytes;

	img_init(&m, targets[0]);
	img_seg(&m, base, 8192);
	proc_rec(&m, base + 0x1000, 1000);
	stack_rec(&m, base, 10, 0, pa, 3, 0);
	site_rec(&m, base + 0x100, 1, 10, 0);
	slab_rec(&m, base + 0x400, 0x7f0000004000ULL, 512, slots, 3, 0);
	scan(&m, 2, &r);
	want_bytes = expect_est(50, sz, 2, 1000, 1);
	ok(r.join.sampled_blocks == 2 && bytes_of(&r, pa, 3, 0) == want_bytes,
	   "sampled slots with period 1000: %llu bytes, as estimated here",
	   (unsigned long long)want_bytes);
	scan_result_free(&r);
	img_free(&m);
}

/* A slab table's header whose check or layout is wrong names no block; one cut by the
 * image's end names those of its slots the image holds, and nothing is read past it. */
static void slabs_bad(void)
{
	uint64_t slots[10], base = 0x20000, start = 0x7f0000004000ULL;
	struct img m;
	struct scan_result r;
	int bad = -1;

	for (int i = 0; i < 10; i++)
		slots[i] = encode2_slot(1, 16, 5, 0);
	img_init(&m, targets[0]);
	img_seg(&m, base, 4096);
	stack_rec(&m, base, 10, 0, pa, 3, 0);
	site_rec(&m, base + 0x100, 1, 10, 0);
	slab_rec(&m, base + 0x200, start, 16, slots, 4, 1);			/* bad check */
	slab_rec(&m, base + 0x300, start, 0, slots, 4, 0);			/* stride 0 */
	slab_rec(&m, base + 0x400, start, 16, slots, 0, 0);			/* no slots */
	slab_rec(&m, base + 0x500, UINT64_MAX - 100, 16, slots, 4, 0);	/* past 2^64 */
	slab_rec(&m, base + 0x600, start, 16, slots, 4, 0);
	put(at(&m, base + 0x618), 48 | 16 << 16 | (uint64_t)(HP2_SLAB_MAX + 1) << 32, 8, 0);
	scan(&m, 1, &r);
	ok(r.blocks == 0 && r.slabs == 0 && r.rejected[REJ_CHECK] == 2 &&
	   r.rejected[REJ_LAYOUT] == 3,
	   "slab tables with a bad check (2) or an impossible layout (3) name no block");
	scan_result_free(&r);
	img_free(&m);
	for (unsigned cut = 0; cut <= 32 + 8 * 10 && bad < 0; cut++) {
		unsigned char whole[32 + 8 * 10];
		uint64_t want = cut < 32 ? 0 : (cut - 32) / 8;

		img_init(&m, targets[0]);
		img_seg(&m, base, 512);
		img_seg(&m, base + 0x1000, 32 + cut);	/* the table at 0x1020, cut bytes of it */
		stack_rec(&m, base, 10, 0, pa, 3, 0);
		site_rec(&m, base + 0x100, 1, 10, 0);
		encode2_slab(whole, base + 0x1020, start, 48, 16, slots, 10, m.t, 0);
		if (cut)
			memcpy(at(&m, base + 0x1020), whole, cut);
		scan(&m, 1, &r);
		if (r.slab_blocks != want || bytes_of(&r, pa, 3, 0) != 16 * want ||
		    (cut < 32 && r.slabs))
			bad = (int)cut;
		scan_result_free(&r);
		img_free(&m);
	}
	ok(bad < 0, "a slab table cut at every byte names the slots the image holds, "
	   "reads nothing past it (first wrong cut: %d)", bad);
}

/* Sum of the stacks in a fixed form, to compare two scans. */
static void stacks_text(const struct scan_result *r, char *out, size_t cap)
{
	size_t n, k = 0;
	struct stack **v = stacks_list(&r->stacks, &n);
	uint64_t sum = 0, x = 0;

	for (size_t i = 0; i < n; i++) {
		double eb = v[i]->est_bytes;
		uint64_t bits;

		memcpy(&bits, &eb, 8);
		/* order-free: xor of per-stack hashes, plus a sum */
		x ^= hp_mix(v[i]->hash, v[i]->bytes ^ bits ^ v[i]->blocks << 40);
		sum += stack_bytes(v[i]);
	}
	k = (size_t)snprintf(out, cap, "%zu %llx %llu", n, (unsigned long long)x,
			     (unsigned long long)sum);
	(void)k;
	free(v);
}

static void jobs_agree(void)
{
	struct img m;
	struct scan_result r1, r2;
	uint64_t base = 0x100000, base2 = 0x800000;
	char a[128], b[128];

	img_init(&m, targets[0]);
	img_seg(&m, base, 65536);
	img_seg(&m, base2, 65536);
	proc_rec(&m, base2 + 0x100, 4096);
	for (uint32_t s = 1; s <= 40; s++) {
		uint64_t pcs[2] = { 0x401000 + s % 13, 0x400010 };

		stack_rec(&m, base + 64 * s, 100 + s % 13, 0, pcs, 2, 0);
		site_rec(&m, base2 + 0x400 + 64 * s, s, 100 + s % 13, 0);
	}
	for (uint32_t i = 0; i < 200; i++) {
		uint64_t seg = i % 2 ? base : base2, user = seg + 0x2000 + 256 * i;

		block(&m, user, 1 + i * 37, 1 + i % 45, 0, i % 3 ? HP2_F_SAMPLED : 0, 0);
	}
	scan(&m, 1, &r1);
	scan(&m, 2, &r2);
	stacks_text(&r1, a, sizeof(a));
	stacks_text(&r2, b, sizeof(b));
	ok(!strcmp(a, b) && r1.join.unknown_blocks == r2.join.unknown_blocks &&
	   r1.join.unknown_blocks > 0, "-j1 and -j2 give the same stacks, estimates to the bit (%s)", a);
	scan_result_free(&r1);
	scan_result_free(&r2);
	img_free(&m);
}

/*
 * The vectors docs/FORMAT.md lists, so that a writer on another target can test itself:
 * fixed inputs, their check values as computed here and by the header's functions.
 */

/* The header's time code by its definition (FORMAT.md): e the least with ms >> e < 256. */
static uint32_t time_code_by_definition(uint64_t ms)
{
	unsigned e = 0;

	if (ms < 128)
		return (uint32_t)ms;
	while ((ms >> e) >= 256)
		e++;
	return e >= 31 ? HP2_TIME_MASK : (e + 1) << 7 | (uint32_t)((ms >> e) - 128);
}

static void check_time_codes(void)
{
	bool good = true;

	for (unsigned b = 0; b < 64 && good; b++)
		for (int d = -2; d <= 2 && good; d++) {
			uint64_t ms = ((uint64_t)1 << b) + (uint64_t)(int64_t)d;

			good = hp2_time_encode(ms) == time_code_by_definition(ms);
			if (!good)
				printf("# ms %llu: 0x%x, by definition 0x%x\n", (unsigned long long)ms,
				       hp2_time_encode(ms), time_code_by_definition(ms));
		}
	ok(good, "time codes equal their definition around every power of two");
}

static void vectors(void)
{
	struct target le = { 8, 0 };
	unsigned char buf[64];
	uint64_t user = 0x7f0012345670ULL, info = 100 | (uint64_t)7 << 32;
	uint64_t tag = (uint64_t)5 << 27 | (uint64_t)0xA3E1 << 48;
	uint64_t big_tag = tag | (uint64_t)1 << 39 | (uint64_t)HP2_F_BIG << 44;
	uint64_t big_info = 0xFFFFFFFFu | (uint64_t)7 << 32;
	uint64_t vpcs[3] = { 0x401234, 0x401500, 0x400010 }, check;
	uint32_t c1 = hp2_block_check(user, info, tag, 0);
	uint32_t c2 = hp2_block_check(user, big_info, big_tag, (1ULL << 32) + 5);
	uint64_t t1 = encode2_block(buf + 32, user, 100, 7, 0, 0, 5, le, 0);

	ok(c1 == 0x1e81087u && (t1 & HP2_CHECK_MASK) == c1,
	   "block check vector: user 0x7f0012345670, size 100, site 7, time 5: 0x%x", c1);
	ok(c2 == 0x2c9b305u && (encode2_block(buf + 32, user, (1ULL << 32) + 5, 7, 1, 0, 5, le, 0) &
				HP2_CHECK_MASK) == c2, "BIG block check vector: size 2^32+5, shift 1: 0x%x", c2);
	encode2_stack(buf, 0x7f0000001000ULL, 3, 0, vpcs, 3, le, 0);
	memcpy(&check, buf + 8, 8);
	ok(check == 0xfbe3fb77a8a8ea85ULL,
	   "stack record check vector: at 0x7f0000001000, id 3, pcs 0x401234 0x401500 "
	   "0x400010, 64-bit: 0x%llx", (unsigned long long)check);
	ok(hp2_time_encode(1000) == 0x1fa && hp2_time_decode(0x1fa) == 1000 &&
	   hp2_time_encode(100) == 100, "time codes: 1000 ms is 0x%x", hp2_time_encode(1000));
	check_time_codes();
}

/* The table of docs/FORMAT.md's "Test vectors", value for value. */
static uint64_t doc_tag(uint64_t user, uint64_t info, unsigned flags, unsigned shift,
			uint32_t time, uint64_t big)
{
	uint64_t tag = (uint64_t)HP2_MAGIC16 << 48 | (uint64_t)flags << HP2_FLAGS_SHIFT |
		       (uint64_t)shift << HP2_OFFSET_SHIFT | (uint64_t)time << HP2_TIME_SHIFT;

	return tag | hp2_block_check(user, info, tag, big);
}

static uint64_t doc_rec(uint64_t at, const uint64_t *w, unsigned n)
{
	uint64_t x = hp_mix(HP2_SEED, at);

	for (unsigned i = 0; i < n; i++)
		x = hp_mix(x, w[i]);
	return hp_check_final(x);
}

static void doc_vectors(void)
{
	uint64_t info = 100 | (uint64_t)7 << 32;
	uint64_t s8[3] = { 0x0800000200000003ULL, 0x401000, 0x402000 };
	uint64_t s4[3] = { 0x0400000200000003ULL, 0x401000, 0x402000 };
	uint64_t site[2] = { 0x0000000300000007ULL, 0x000000010000002aULL };
	uint64_t slab[2] = { 0x7f0000004000ULL, 0x000000ff00400030ULL };
	uint64_t maps[1] = { 65536 | (uint64_t)HP2_MAP_ENTRY_WORDS << 32 };
	uint64_t part[4] = { 0x0804000200000004ULL, 3, 0x401000, 0x402000 };
	uint64_t joined[2] = { 0x0808000600000005ULL, 0x0000000900000004ULL };
	unsigned char buf[64];

	ok(hp2_time_encode(1500) == 0x23b && hp2_time_decode(0x23b) == 1496,
	   "FORMAT.md: 1500 ms is time code 0x23b, read back as 1496 ms");
	ok(doc_tag(0x1010, info, 0, 0, 0x23b, 0) == 0xa3e10011d8375c67ULL,
	   "FORMAT.md: block vector 1");
	ok(doc_tag(0x2040, info, HP2_F_SAMPLED, 2, 0, 0) == 0xa3e1110005218a32ULL,
	   "FORMAT.md: block vector 2 (sampled, shift 2)");
	ok(doc_tag(0x3020, 0xFFFFFFFFu | (uint64_t)7 << 32, HP2_F_BIG, 1, 0, 1ULL << 33) ==
		   0xa3e120800421946dULL, "FORMAT.md: block vector 3 (BIG)");
	ok(doc_rec(0x5000, s8, 3) == 0x239157cc8df34869ULL, "FORMAT.md: stack vector, wsize 8");
	ok(doc_rec(0x5000, s4, 3) == 0x8bbb47d70a2f6bbbULL, "FORMAT.md: stack vector, wsize 4");
	ok(doc_rec(0x6000, site, 2) == 0xf31bbfddcf72cc6dULL, "FORMAT.md: site vector");
	ok(doc_rec(0x8000, slab, 2) == 0xbbd1672a1d5b2fa5ULL &&
	   hp2_slab_slot(7, 48, 0x23b, HP2_F_SAMPLED) == 0x123b003000000007ULL &&
	   encode2_slot(7, 48, 0x23b, 1) == 0x123b003000000007ULL,
	   "FORMAT.md: slab table vector and its slot word");
	ok(maps[0] == 0x0000000300010000ULL && doc_rec(0x8000, maps, 1) == 0xdbb46bd40e74cf44ULL,
	   "FORMAT.md: map table vector");
	ok(doc_rec(0x5000, part, 4) == 0x4487930fb5c9a55fULL &&
	   encode2_stack_ref(buf, 0x5000, 4, HP2_STACK_PART, 3, part + 2, 2, targets[0], 0) == 56 &&
	   !memcmp(buf + 8, &(uint64_t){ 0x4487930fb5c9a55fULL }, 8) && !memcmp(buf + 16, &part[0], 8),
	   "FORMAT.md: part vector");
	ok(doc_rec(0x5100, joined, 2) == 0xd78d798d3ce8709fULL &&
	   encode2_stack_ref(buf, 0x5100, 5, HP2_STACK_JOINED, joined[1], NULL, 6, targets[0], 0) ==
		   40 && !memcmp(buf + 8, &(uint64_t){ 0xd78d798d3ce8709fULL }, 8),
	   "FORMAT.md: joined stack vector");
}

int main(void)
{
	every_target();
	big_and_aligned();
	bad_records();
	truncated_stack();
	stack_parts();
	stack_parts_bad();
	stack_parts_dropped_amid();
	sampled();
	v1_beside_v2();
	records_cut();
	window_edge();
	noise_and_damage();
	record_check_word();
	hash_after_pointer();
	hash_inside_block();
	header_copy_in_stack();
	jobs_agree();
	slabs();
	slabs_sampled();
	slabs_bad();
	vectors();
	doc_vectors();
	return tap_done();
}
