/*
 * Unit test of the issue-9 records in the analyzer: site counters, thread, region and
 * event ring records written by hand from heapprof_format.h's comment, for every word
 * size and byte order, scanned and joined: counts per stack, per thread (--by-thread),
 * per region (--region), a site with counts and no live block, cut and damaged records,
 * and ring slots in order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof_format.h"
#include "image.h"
#include "scan.h"
#include "encode.h"
#include "tap.h"

#define BASE 0x10000u
#define LEN 0x4000u

struct img {
	struct image image;
	struct seg seg;
	unsigned char *p;
	struct target t;
};

static void img_init(struct img *m, struct target t, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->t = t;
	m->image.wsize = t.wsize;
	m->image.big_endian = t.big_endian;
	m->image.fd = -1;
	m->p = calloc(1, len);
	m->seg = (struct seg){ .vaddr = BASE, .size = len, .data = m->p };
	m->image.segs = &m->seg;
	m->image.nsegs = 1;
	m->image.bytes = len;
}

/* A record at addr: magic, check over w[0..nchecked-1] (w2 on), then all nw words. */
static void rec(struct img *m, uint64_t addr, uint64_t magic, const uint64_t *w, unsigned nw,
		unsigned nchecked)
{
	unsigned char *p = m->p + (addr - BASE);

	put(p, magic, 8, m->t.big_endian);
	put(p + 8, encode2_rec_check(addr, w, nchecked), 8, m->t.big_endian);
	for (unsigned i = 0; i < nw; i++)
		put(p + 16 + 8 * i, w[i], 8, m->t.big_endian);
}

/* name bytes as they lie in memory, as the numbers a target of this byte order reads */
static uint64_t name_word(const char *name, unsigned i, struct target t)
{
	unsigned char b[8] = { 0 };
	size_t len = strlen(name), from = len > 8 * i ? 8 * i : len;
	uint64_t v = 0;

	memcpy(b, name + from, len - from < 8 ? len - from : 8);
	for (int k = 0; k < 8; k++)
		v |= (uint64_t)b[k] << (t.big_endian ? 8 * (7 - k) : 8 * k);
	return v;
}

static void site(struct img *m, uint64_t addr, uint32_t id, uint32_t stack, uint32_t tid,
		 unsigned region, uint64_t calls, uint64_t bytes, uint64_t frees, uint64_t freed,
		 uint64_t ns)
{
	uint64_t w[14] = { id | (uint64_t)stack << 32,
			   tid | (uint64_t)HP2_ENTRY_MALLOC << 32 | (uint64_t)region << 48,
			   0x7777, calls, bytes, frees, freed, ns };

	rec(m, addr, HP2_SITE_MAGIC, w, 14, 2);
}

static void thread(struct img *m, uint64_t addr, uint32_t tid, const char *name)
{
	uint64_t w[6] = { tid, name_word(name, 0, m->t), name_word(name, 1, m->t), 0, 0, 0 };

	rec(m, addr, HP2_THREAD_MAGIC, w, 6, 1);
}

/* A thread record of a dump with slots (HP2_P_SLOTS): slot, the tid holding it or that
 * last did, and HP2_THREAD_LIVE or _ENDED in w7. */
static void slot_rec(struct img *m, uint64_t addr, uint32_t slot, uint32_t tid, unsigned state,
		     const char *name)
{
	uint64_t w[6] = { slot, name_word(name, 0, m->t), name_word(name, 1, m->t), 0, 0,
			  tid | (uint64_t)state << 32 };

	rec(m, addr, HP2_THREAD_MAGIC, w, 6, 1);
}

static void region(struct img *m, uint64_t addr, uint32_t id, const char *name)
{
	uint64_t w[6] = { id };

	for (unsigned i = 0; i < 4; i++)
		w[1 + i] = name_word(name, i, m->t);
	rec(m, addr, HP2_REGION_MAGIC, w, 6, 5);
}

static void build(struct img *m, struct target t, uint64_t period)
{
	const uint64_t pa[2] = { 0x1111, 0x2222 }, pb[1] = { 0x3333 };
	uint64_t pw[6] = { 2 | (uint64_t)t.wsize << 16 | (uint64_t)77 << 32, period, 1000, 2000,
			   64 | (uint64_t)HP2_P_TIME << 32, 0 };

	img_init(m, t, LEN);
	rec(m, BASE + 0x100, HP2_PROC_MAGIC, pw, 6, 6);
	encode2_stack(m->p + 0x200, BASE + 0x200, 1, 0, pa, 2, t, 0);
	encode2_stack(m->p + 0x300, BASE + 0x300, 2, 0, pb, 1, t, 0);
	/* stack 1 in thread 10 (region 1) and thread 11 (no region); stack 2 in thread 10,
	 * region 2, counts only */
	site(m, BASE + 0x400, 1, 1, 10, 1, 5, 500, 1, 100, 7000);
	site(m, BASE + 0x480, 2, 1, 11, 0, 3, 30, 2, 20, 3000);
	site(m, BASE + 0x500, 3, 2, 10, 2, 9, 900, 9, 900, 1);
	thread(m, BASE + 0x600, 10, "main");
	thread(m, BASE + 0x640, 11, "worker-1");
	region(m, BASE + 0x700, 1, "parse");
	region(m, BASE + 0x740, 2, "eval");
	/* live blocks: 2 of site 1 (100 + 300 bytes), 1 of site 2 (10 bytes) */
	encode2_block(m->p + 0x1010, BASE + 0x1010, 100, 1, 0, 0, 1, t, 0);
	encode2_block(m->p + 0x1110, BASE + 0x1110, 300, 1, 0, 0, 1, t, 0);
	encode2_block(m->p + 0x1510, BASE + 0x1510, 10, 2, 0, 0, 1, t, 0);
}

static const struct stack *find(const struct scan_result *r, uint64_t pc0, uint32_t tid)
{
	for (size_t i = 0; i < r->stacks.cap; i++) {
		const struct stack *s = r->stacks.slots[i];

		if (s && s->nframes && s->pcs[0] == pc0 && s->tid == tid)
			return s;
	}
	return NULL;
}

static void targets(struct target t)
{
	struct img m;
	struct scan_result r;
	const struct stack *a, *b;
	char what[48];

	snprintf(what, sizeof(what), "%u-bit %s-endian", t.wsize * 8, t.big_endian ? "big" : "little");
	build(&m, t, 0);
	scan_image(&m.image, 1, &r);
	a = find(&r, 0x1111, 0);
	b = find(&r, 0x3333, 0);
	ok(a && a->counts.calls == 8 && a->counts.bytes == 530 && a->counts.frees == 3 &&
	   a->counts.freed == 120 && a->counts.time_ns == 10000 && stack_bytes(a) == 410,
	   "%s: two sites' counters join into their stack, beside its live bytes", what);
	ok(b && b->counts.calls == 9 && b->nsizes == 0 && stack_bytes(b) == 0,
	   "%s: a site with counts and no live block still makes its stack", what);
	ok(r.join.have_time && !r.join.sampled_counts && r.join.thread_recs == 2 &&
	   r.join.region_recs == 2 && r.join.counted_sites == 3,
	   "%s: time flag, thread and region records counted", what);
	ok(collect_thread_name(&r.found, 11) && !strcmp(collect_thread_name(&r.found, 11), "worker-1") &&
	   !collect_thread_name(&r.found, 12), "%s: thread names by tid", what);
	scan_result_free(&r);

	scan_image_with(&m.image, 2, &(struct join_opts){ .by_thread = true }, &r);
	a = find(&r, 0x1111, 10);
	b = find(&r, 0x1111, 11);
	ok(a && b && a->counts.calls == 5 && b->counts.calls == 3 && stack_bytes(a) == 400 &&
	   stack_bytes(b) == 10 && !find(&r, 0x1111, 0),
	   "%s: --by-thread splits live bytes and counts by the sites' tids", what);
	scan_result_free(&r);

	scan_image_with(&m.image, 1, &(struct join_opts){ .region = "parse" }, &r);
	a = find(&r, 0x1111, 0);
	ok(a && a->counts.calls == 5 && stack_bytes(a) == 400 && !find(&r, 0x3333, 0) &&
	   r.join.left_out_blocks == 1 && !r.join.region_unknown,
	   "%s: --region keeps the blocks and counts of its sites only", what);
	scan_result_free(&r);
	scan_image_with(&m.image, 1, &(struct join_opts){ .region = "nope" }, &r);
	ok(r.join.region_unknown, "%s: an unknown region is said", what);
	scan_result_free(&r);
	free(m.p);
}

/* A site whose counters lie past the image's end keeps its identity, without counts;
 * a thread record with a bad check is rejected. */
static void cut_and_damaged(void)
{
	struct target t = { 8, 0 };
	struct img m;
	struct decode_src src;
	struct decode_buf buf;
	struct decoded d;
	uint64_t w[2] = { 4 | (uint64_t)1 << 32, 12 };

	img_init(&m, t, 0x40);
	put(m.p, HP2_SITE_MAGIC, 8, 0);
	put(m.p + 8, encode2_rec_check(BASE, w, 2), 8, 0);
	put(m.p + 16, w[0], 8, 0);
	put(m.p + 24, w[1], 8, 0);
	src = (struct decode_src){ &m.image, NULL };
	ok(decode_at(&src, BASE, HP2_SITE_MAGIC, &buf, &d) == DECODE_OK && d.kind == DEC_SITE &&
	   !d.site.have_counts && d.site.tid == 12, "a site cut after w3: read, without counters");
	thread(&m, BASE, 5, "x");
	m.p[8] ^= 1;
	ok(decode_at(&src, BASE, HP2_THREAD_MAGIC, &buf, &d) == REJ_CHECK,
	   "a thread record with a bad check is rejected");
	free(m.p);
}

/* A ring of 4 slots after 6 events: seq 3..6, oldest first; a slot being rewritten
 * (s5 = 0) is skipped. */
static void ring(void)
{
	struct target t = { 8, 1 };
	struct img m;
	struct decode_src src;
	struct decode_buf buf;
	struct decoded d;
	struct hp_event ev[8];
	uint64_t w[2] = { 9 | (uint64_t)4 << 32, 6 };
	size_t n;

	img_init(&m, t, 0x200);
	rec(&m, BASE, HP2_RING_MAGIC, w, 2, 1);
	for (uint64_t seq = 3; seq <= 6; seq++) {
		unsigned char *s = m.p + 32 + ((seq - 1) % 4) * 48;

		put(s, HP2_ENTRY_MALLOC | (uint64_t)7 << 32, 8, 1);
		put(s + 8, 100 + seq, 8, 1);
		put(s + 24, 0xA000 + seq, 8, 1);
		put(s + 32, 5000 + seq, 8, 1);
		put(s + 40, seq == 4 ? 0 : seq, 8, 1);
	}
	src = (struct decode_src){ &m.image, NULL };
	ok(decode_at(&src, BASE, HP2_RING_MAGIC, &buf, &d) == DECODE_OK && d.kind == DEC_RING &&
	   d.ring.tid == 9 && d.ring.n == 4 && d.ring.written == 6, "a ring record decodes");
	n = decode_ring_events(&src, &d.ring, ev, 8);
	ok(n == 3 && ev[0].seq == 3 && ev[1].seq == 5 && ev[2].seq == 6 && ev[2].arg[0] == 106 &&
	   ev[2].result == 0xA006 && ev[2].site == 7 && ev[2].entry == HP2_ENTRY_MALLOC,
	   "its events oldest first; a slot being rewritten is skipped");
	n = decode_ring_events(&src, &d.ring, ev, 2);
	ok(n == 2 && ev[0].seq == 5 && ev[1].seq == 6, "at most max events: the newest");
	free(m.p);
}

/*
 * Sites that name thread slots: slot 1 held by tid 100 (main), slot 2 last by tid 101,
 * which ended, slot 3 last by an ended thread whose tid 100 is main's now, slot 0 the
 * threads whose slots were taken over. --by-thread: 100, 101 "(ended)", then 0 twice.
 */
static void slots(struct target t)
{
	const uint64_t pa[1] = { 0x1111 };
	uint64_t pw[6] = { 2 | (uint64_t)t.wsize << 16 | (uint64_t)77 << 32, 0, 1000, 2000,
			   64 | (uint64_t)HP2_P_SLOTS << 32, 0 };
	struct img m;
	struct scan_result r;
	const struct stack *s100, *s101, *s0;
	const char *n100, *n101;
	char what[48];

	snprintf(what, sizeof(what), "%u-bit %s-endian", t.wsize * 8,
		 t.big_endian ? "big" : "little");
	img_init(&m, t, LEN);
	rec(&m, BASE + 0x100, HP2_PROC_MAGIC, pw, 6, 6);
	encode2_stack(m.p + 0x200, BASE + 0x200, 1, 0, pa, 1, t, 0);
	site(&m, BASE + 0x400, 1, 1, 1, 0, 1, 10, 0, 0, 0);
	site(&m, BASE + 0x480, 2, 1, 2, 0, 2, 20, 0, 0, 0);
	site(&m, BASE + 0x500, 3, 1, 3, 0, 4, 40, 0, 0, 0);
	site(&m, BASE + 0x580, 4, 1, 0, 0, 8, 80, 0, 0, 0);
	slot_rec(&m, BASE + 0x600, 1, 100, HP2_THREAD_LIVE, "main");
	slot_rec(&m, BASE + 0x640, 2, 101, HP2_THREAD_ENDED, "worker");
	slot_rec(&m, BASE + 0x680, 3, 100, HP2_THREAD_ENDED, "gone");
	encode2_block(m.p + 0x1010, BASE + 0x1010, 100, 3, 0, 0, 1, t, 0);
	scan_image_with(&m.image, 1, &(struct join_opts){ .by_thread = true }, &r);
	s100 = find(&r, 0x1111, 100);
	s101 = find(&r, 0x1111, 101);
	s0 = find(&r, 0x1111, 0);
	n100 = collect_thread_name(&r.found, 100);
	n101 = collect_thread_name(&r.found, 101);
	ok(s100 && s100->counts.calls == 1 && s101 && s101->counts.calls == 2 && s0 &&
	   s0->counts.calls == 12 && stack_bytes(s0) == 100 && r.join.thread_recs == 3,
	   "%s: slots: sites go to the tid holding their slot, or to 0", what);
	ok(n100 && !strcmp(n100, "main") && n101 && !strcmp(n101, "worker (ended)"),
	   "%s: slots: a live thread's name; an ended one's says so (%s, %s)", what,
	   n100 ? n100 : "-", n101 ? n101 : "-");
	scan_result_free(&r);
	free(m.p);
}

int main(void)
{
	const struct target all[] = { { 8, 0 }, { 8, 1 }, { 4, 0 }, { 4, 1 } };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		targets(all[i]);
		slots(all[i]);
	}
	cut_and_damaged();
	ring();
	return tap_done();
}
