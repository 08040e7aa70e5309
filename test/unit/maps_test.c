/*
 * Unit test of the map table reader (analyzer/maps.c): a table written by hand from
 * include/heapprof_format.h for both byte orders and word sizes, read whole; then
 * claiming more entries than it has room for, half-changed, with entries empty,
 * unaligned, overlapping, out of order (the table is highest first) or of no known
 * origin, claiming 2^24 entries
 * in a small dump, and cut at every word: each is skipped and counted or read, never
 * a crash (under the sanitizers in make check).
 */
#include <stdlib.h>
#include <string.h>

#include "heapprof_format.h"
#include "image.h"
#include "maps.h"
#include "scan.h"
#include "util.h"
#include "encode.h"
#include "tap.h"

#define BASE 0x10000
#define STACK_AT (BASE + 0x40)
#define MAPS_AT (BASE + 0x200)
#define ROOM 8
#define SIZE 0x1000

struct fixture {
	struct target t;
	unsigned char buf[SIZE];
};

static void w(struct fixture *f, uint64_t addr, uint64_t v)
{
	put(f->buf + (addr - BASE), v, 8, f->t.big_endian);
}

static void entry(struct fixture *f, unsigned i, uint64_t start, uint64_t end, uint32_t stack,
		  unsigned origin)
{
	uint64_t at = MAPS_AT + HP2_MAPS_WORDS * 8 + i * HP2_MAP_ENTRY_WORDS * 8;

	w(f, at, start);
	w(f, at + 8, end);
	w(f, at + 16, stack | (uint64_t)origin << 32);
}

static void table(struct fixture *f, uint64_t room, uint64_t used, uint64_t writes)
{
	uint64_t w2 = room | (uint64_t)HP2_MAP_ENTRY_WORDS << 32;

	w(f, MAPS_AT, HP2_MAPS_MAGIC);
	w(f, MAPS_AT + 8, encode2_rec_check(MAPS_AT, &w2, 1));
	w(f, MAPS_AT + 16, w2);
	w(f, MAPS_AT + 24, used);
	w(f, MAPS_AT + 32, writes);
	w(f, MAPS_AT + 40, 3);	/* lost calls */
}

/* heapprof's page, stack 1's 16 KiB and 8 KiB, a stackless page */
static void fixture(struct fixture *f, struct target t)
{
	static const uint64_t pcs[2] = { 0x1234, 0x5678 };

	memset(f, 0, sizeof(*f));
	f->t = t;
	encode2_stack(f->buf + (STACK_AT - BASE), STACK_AT, 1, 0, pcs, 2, t, 0);
	table(f, ROOM, 4, 2);
	entry(f, 0, 0x400000, 0x401000, 0, HP2_MAP_PROGRAM);	/* highest first */
	entry(f, 1, 0x300000, 0x302000, 1, HP2_MAP_PROGRAM);
	entry(f, 2, 0x200000, 0x204000, 1, HP2_MAP_PROGRAM);
	entry(f, 3, 0x100000, 0x101000, 0, HP2_MAP_HEAPPROF);
}

/* Scan size bytes of f and read its table into *m (maps_free after). */
static void run(const struct fixture *f, size_t size, struct maps *m)
{
	struct image img;
	struct seg seg = { .vaddr = BASE, .size = size, .data = f->buf };
	struct scan_result scan;

	memset(&img, 0, sizeof(img));
	img.fd = -1;
	img.wsize = f->t.wsize;
	img.big_endian = f->t.big_endian;
	img.segs = &seg;
	img.nsegs = 1;
	scan_image(&img, 1, &scan);
	maps_apply(m, &img, &scan, NULL, 0);
	scan_result_free(&scan);
}

static void order(struct target t, const char *name)
{
	struct fixture *f = malloc(sizeof(*f));
	struct maps m;
	bool all = true;

	fixture(f, t);
	run(f, SIZE, &m);
	ok(m.found && m.n == 4 && m.program_bytes == 0x7000 && m.heapprof_bytes == 0x1000 &&
	   m.program_n == 3 && m.lost == 3 && !m.bad && !m.changing, "%s: the table read whole",
	   name);
	ok(m.all == 2 && m.stacks[0].id == 1 && m.stacks[0].bytes == 0x6000 &&
	   m.stacks[0].mappings == 2 && m.stacks[1].id == 0 && m.stacks[1].bytes == 0x1000,
	   "%s: per stack, the largest first", name);
	ok(maps_bytes_in(&m, 0x201000, 0x301000, HP2_MAP_PROGRAM) == 0x4000 &&
	   maps_bytes_in(&m, 0x201000, 0x301000, HP2_MAP_HEAPPROF) == 0 &&
	   maps_bytes_in(&m, 0, UINT64_MAX, HP2_MAP_HEAPPROF) == 0x1000 &&
	   maps_bytes_in(NULL, 0, UINT64_MAX, HP2_MAP_PROGRAM) == 0,
	   "%s: bytes of a range by origin", name);
	maps_free(&m);

	table(f, ROOM, ROOM + 1, 2);
	run(f, SIZE, &m);
	ok(!m.found && m.tables == 1, "%s: more entries than room: skipped", name);
	maps_free(&m);

	table(f, ROOM, 4, 3);
	run(f, SIZE, &m);
	ok(m.found && m.changing && m.n == 4, "%s: a change under way: read, and said", name);
	maps_free(&m);

	fixture(f, t);
	table(f, ROOM, 8, 2);
	entry(f, 4, 0x0ff800, 0x100800, 1, HP2_MAP_PROGRAM);	/* overlaps and unaligned */
	entry(f, 5, 0x0f0000, 0x0f0000, 1, HP2_MAP_PROGRAM);	/* empty */
	entry(f, 6, 0x0e0000, 0x0e1000, 1, 7);			/* no such origin */
	entry(f, 7, 0x500000, 0x501000, 1, HP2_MAP_PROGRAM);	/* above the last kept */
	run(f, SIZE, &m);
	ok(m.found && m.n == 4 && m.bad == 4 && m.program_bytes == 0x7000,
	   "%s: bad entries skipped and counted (%zu kept, %llu bad)", name, m.n,
	   (unsigned long long)m.bad);
	maps_free(&m);

	fixture(f, t);
	table(f, HP2_MAPS_MAX, HP2_MAPS_MAX, 2);
	run(f, SIZE, &m);
	ok(m.found && m.n == 4 && m.bad == HP2_MAPS_MAX - 4,
	   "%s: 2^24 entries claimed in a 4 KiB dump: the ones there read, the rest counted",
	   name);
	maps_free(&m);

	fixture(f, t);
	for (size_t cut = 8; cut < SIZE; cut += 8) {
		run(f, cut, &m);
		if (cut >= MAPS_AT - BASE + 64 + 4 * 24 && (m.n != 4 || m.bad))
			all = false;
		if (cut < MAPS_AT - BASE + 64 && m.found)
			all = false;
		maps_free(&m);
	}
	ok(all, "%s: cut at every word: nothing, or what is there", name);
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
