/*
 * Unit test of the timeline and peak table readers (analyzer/timeline.c): records
 * written by hand from include/heapprof_format.h for both byte orders, read whole;
 * then half-written, out of order, over-full, not adding up, claiming more than the
 * sites allocated or the dump holds, and cut at every word: each is skipped or read,
 * never a crash (under the sanitizers in make check).
 */
#include <stdlib.h>
#include <string.h>

#include "heapprof_format.h"
#include "image.h"
#include "scan.h"
#include "timeline.h"
#include "util.h"
#include "encode.h"
#include "tap.h"

#define BASE 0x10000
#define TL_AT (BASE + 0x100)
#define PEAK0_AT (BASE + 0x800)
#define PEAK1_AT (BASE + 0xC00)
#define STACK_AT (BASE + 0x40)
#define SITE_AT (BASE + 0x400)
#define SIZE 0x1000

struct fixture {
	struct target t;
	unsigned char buf[SIZE];
};

static void w(struct fixture *f, uint64_t addr, uint64_t v)
{
	put(f->buf + (addr - BASE), v, 8, f->t.big_endian);
}

static void seal(struct fixture *f, uint64_t addr, uint64_t magic, uint64_t w2)
{
	w(f, addr, magic);
	w(f, addr + 8, encode2_rec_check(addr, &w2, 1));
	w(f, addr + 16, w2);
}

/* Samples (ms, live bytes): 0/0, 10/100, 20/5000, 30/200. */
static void timeline(struct fixture *f, uint64_t held, uint64_t writes)
{
	static const uint64_t s[4][5] = { { 0, 0, 0, 0, 0 }, { 10, 100, 1, 1, 100 },
					  { 20, 5000, 3, 3, 5000 }, { 30, 200, 2, 4, 5100 } };

	seal(f, TL_AT, HP2_TIMELINE_MAGIC, 8 | (uint64_t)HP2_SAMPLE_WORDS << 32);
	w(f, TL_AT + 24, held);
	w(f, TL_AT + 32, 4);
	w(f, TL_AT + 40, writes);
	for (unsigned i = 0; i < 4; i++)
		for (unsigned k = 0; k < 5; k++)
			w(f, TL_AT + 64 + (i * 5 + k) * 8, s[i][k]);
}

/* A peak table of two entries (stack 1: bytes, 2 blocks; the 7 stacks past its room:
 * 100, 1). */
static void peak(struct fixture *f, uint64_t at, unsigned which, uint64_t writes, uint64_t bytes,
		 uint64_t total_xor)
{
	seal(f, at, HP2_PEAK_MAGIC, 4 | (uint64_t)which << 32);
	w(f, at + 24, writes);
	w(f, at + 32, 20);
	w(f, at + 40, (bytes + 100) ^ total_xor);
	w(f, at + 48, 3);
	w(f, at + 56, 2);
	w(f, at + 72, 4096);
	w(f, at + 80, 7);
	w(f, at + 128, 1);
	w(f, at + 136, bytes);
	w(f, at + 144, 2);
	w(f, at + 152, 0);
	w(f, at + 160, 100);
	w(f, at + 168, 1);
}

static void fixture(struct fixture *f, struct target t)
{
	static const uint64_t pcs[2] = { 0x1234, 0x5678 };

	memset(f, 0, sizeof(*f));
	f->t = t;
	encode2_stack(f->buf + (STACK_AT - BASE), STACK_AT, 1, 0, pcs, 2, t, 0);
	/* stack 1's site: 5 calls of 4,000 bytes so far, more than any peak held */
	encode2_site(f->buf + (SITE_AT - BASE), SITE_AT, 7, 1, 1, 0, 0, t, 0);
	w(f, SITE_AT + 40, 5);
	w(f, SITE_AT + 48, 4000);
	timeline(f, 4, 2);
	peak(f, PEAK0_AT, 0, 2, 1000, 0);
	peak(f, PEAK1_AT, 1, 4, 3000, 0);
}

struct got {
	size_t n;			/* samples, with now */
	double last_time, peak_time;
	uint64_t max_live, peak_bytes, peak_blocks;
	uint64_t overflow_stacks, overflow_bytes;
	bool have_peak, overflow_marked;	/* a stack of the peak is STACK_OVERFLOW */
};

/* Scan size bytes of f, read the timeline, apply the peak. */
static void run(const struct fixture *f, size_t size, struct got *g)
{
	struct image img;
	struct seg seg = { .vaddr = BASE, .size = size, .data = f->buf };
	struct scan_result scan;
	struct timeline_data t;
	struct report r = { 0 };
	struct join_opts jo = { 0 };
	struct stack **stacks;
	const char *why;
	size_t n;

	memset(&img, 0, sizeof(img));
	img.fd = -1;
	img.wsize = f->t.wsize;
	img.big_endian = f->t.big_endian;
	img.segs = &seg;
	img.nsegs = 1;
	memset(g, 0, sizeof(*g));
	scan_image(&img, 1, &scan);
	timeline_read(&t, &r, &scan, &img);
	g->n = t.n;
	for (size_t i = 0; i < t.n; i++)
		if (t.v[i].live_bytes > g->max_live)
			g->max_live = t.v[i].live_bytes;
	g->last_time = t.n ? t.v[t.n - 1].time_s : -1;
	if ((g->have_peak = timeline_peak_apply(&t, &scan, &img, &jo, &why))) {
		g->peak_bytes = t.peak.bytes;
		g->peak_blocks = t.peak.blocks;
		g->peak_time = t.peak.time_s;
		g->overflow_stacks = t.peak.overflow_stacks;
		g->overflow_bytes = t.peak.overflow_bytes;
		stacks = stacks_list(&scan.stacks, &n);
		for (size_t i = 0; i < n; i++)
			if (stacks[i]->flags & STACK_OVERFLOW && stack_bytes(stacks[i]) == 100)
				g->overflow_marked = true;
		free(stacks);
	}
	timeline_free(&t);
	scan_result_free(&scan);
}

static void order(struct target t, const char *name)
{
	struct fixture *f = malloc(sizeof(*f));
	struct got g;
	bool all = true;

	fixture(f, t);
	run(f, SIZE, &g);
	ok(g.n == 5 && g.max_live == 5000 && g.last_time == 0.030, "%s: 4 samples and now, "
	   "the highest kept (n %zu, max %llu)", name, g.n, (unsigned long long)g.max_live);
	ok(g.have_peak && g.peak_bytes == 3100 && g.peak_blocks == 3 && g.peak_time == 0.020,
	   "%s: the newer peak table, its entries summed", name);
	ok(g.overflow_stacks == 7 && g.overflow_bytes == 100 && g.overflow_marked,
	   "%s: its stacks past the room, marked as such (%llu stacks, %llu bytes)", name,
	   (unsigned long long)g.overflow_stacks, (unsigned long long)g.overflow_bytes);

	peak(f, PEAK1_AT, 1, 4, 3000, 1);
	run(f, SIZE, &g);
	ok(g.have_peak && g.peak_bytes == 1100, "%s: a table whose entries do not add up: the "
	   "one before it", name);
	peak(f, PEAK0_AT, 0, 5, 1000, 0);
	run(f, SIZE, &g);
	ok(!g.have_peak, "%s: one half-written, one not adding up: none", name);

	fixture(f, t);
	timeline(f, 4, 3);
	run(f, SIZE, &g);
	ok(g.n == 0 && g.have_peak, "%s: a timeline being written is skipped", name);
	timeline(f, 9, 2);
	run(f, SIZE, &g);
	ok(g.n == 0, "%s: more samples than room: skipped", name);
	timeline(f, 4, 2);
	w(f, TL_AT + 64 + 15 * 8, 5);	/* sample 3 at 5 ms, after 20 */
	run(f, SIZE, &g);
	ok(g.n == 0, "%s: times that go back: skipped", name);

	/* forged: stack 1 claims 9.2e18 blocks, the total says so too */
	fixture(f, t);
	w(f, PEAK1_AT + 144, (uint64_t)INT64_MAX - 7);
	w(f, PEAK1_AT + 48, (uint64_t)INT64_MAX - 7 + 1);
	run(f, SIZE, &g);
	ok(g.have_peak && g.peak_bytes == 100 && g.peak_blocks == 1, "%s: an entry claiming "
	   "more blocks than its stack's sites allocated: left out (%llu bytes, %llu blocks)",
	   name, (unsigned long long)g.peak_bytes, (unsigned long long)g.peak_blocks);
	fixture(f, t);
	w(f, PEAK1_AT + 136, 4001);
	w(f, PEAK1_AT + 40, 4101);
	run(f, SIZE, &g);
	ok(g.have_peak && g.peak_bytes == 100 && g.peak_blocks == 1, "%s: more bytes than its "
	   "stack's sites asked for: left out", name);
	fixture(f, t);
	w(f, PEAK1_AT + 144, (uint64_t)INT64_MAX);
	w(f, PEAK1_AT + 168, (uint64_t)INT64_MAX);
	w(f, PEAK1_AT + 48, (uint64_t)-2);
	run(f, SIZE, &g);
	ok(g.have_peak && g.peak_bytes == 1100, "%s: entries whose sum passes 64 bits: the "
	   "table before it", name);
	fixture(f, t);
	w(f, PEAK1_AT + 56, HP2_PEAK_MAX);
	seal(f, PEAK1_AT, HP2_PEAK_MAGIC, HP2_PEAK_MAX | (uint64_t)1 << 32);
	run(f, SIZE, &g);
	ok(g.have_peak && g.peak_bytes == 1100, "%s: a table claiming more entries than the "
	   "dump holds: the table before it", name);

	fixture(f, t);
	for (size_t cut = 8; cut < SIZE; cut += 8) {
		run(f, cut, &g);
		if (cut >= TL_AT - BASE + 64 + 20 * 8 && g.n != 5)
			all = false;
		if (cut > TL_AT - BASE && cut < TL_AT - BASE + 64 + 20 * 8 && g.n)
			all = false;
		if (cut >= PEAK1_AT - BASE + 176 && !(g.have_peak && g.peak_bytes == 3100))
			all = false;
	}
	ok(all, "%s: cut at every word: read whole or skipped", name);
	free(f);
}

int main(void)
{
	util_quiet = true;
	order((struct target){ 8, 0 }, "64-bit little-endian");
	order((struct target){ 8, 1 }, "64-bit big-endian");
	order((struct target){ 4, 0 }, "32-bit little-endian");
	return tap_done();
}
