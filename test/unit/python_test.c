/*
 * Unit test of analyzer/python.c: the location table against hand-made bytes, the
 * name record vector docs/FORMAT.md lists, and bad input (records cut at every byte,
 * every byte flipped, garbage code objects and tables) giving "unknown", never a crash.
 */
#include <stdlib.h>
#include <string.h>

#include "heapprof_format.h"
#include "python.h"
#include "pyrecord.h"
#include "tap.h"

/* Memory of len bytes at base; reads outside are absent. */
struct buf {
	uint64_t base;
	const unsigned char *p;
	size_t len;
};

static bool buf_read(const void *ctx, uint64_t addr, void *out, size_t len)
{
	const struct buf *b = ctx;

	if (addr < b->base || addr - b->base > b->len || len > b->len - (addr - b->base))
		return false;
	memcpy(out, b->p + (addr - b->base), len);
	return true;
}

/*
 * From line 10: unit 0 NO_COLUMNS +1 (11); units 1-2 ONE_LINE0 (11); unit 3 ONE_LINE1
 * (12); unit 4 NONE (no line); unit 5 LONG -2 (10); unit 6 SHORT (10); unit 7
 * NO_COLUMNS +100 as a two-byte varint (110); then nothing.
 */
static const uint8_t table[] = {
	0xE8, 0x02, 0xD1, 0x00, 0x05, 0xD8, 0x01, 0x02, 0xF8,
	0xF0, 0x05, 0x00, 0x01, 0x03, 0x80, 0x12, 0xE8, 0x48, 0x03,
};

static void lines(void)
{
	static const int want[] = { 11, 11, 11, 12, 0, 10, 10, 110, 0 };

	for (unsigned u = 0; u < sizeof(want) / sizeof(want[0]); u++)
		ok(python_line(table, sizeof(table), 10, 2 * u) == want[u],
		   "location table: code unit %u is line %d (got %d)", u, want[u],
		   python_line(table, sizeof(table), 10, 2 * u));
	ok(python_line(table, 1, 10, 0) == 0, "a table cut inside a varint has no line");
	ok(python_line(table + 1, sizeof(table) - 1, 10, 0) == 0,
	   "a table that does not start at an entry has no line");
	for (size_t n = 0; n <= sizeof(table); n++)
		for (unsigned u = 0; u < 10; u++)
			python_line(table, n, 10, 2 * u);	/* ASan: no read past n */
	ok(1, "every cut of the table read within bounds");
}

/* The FORMAT.md vector: a record at 0x7000 for Cache.fill in a.py, first line 3. */
static void records(void)
{
	uint64_t w[16];
	size_t len = py_make_record(w, 0x7000, "Cache.fill", "a.py");
	struct buf b = { 0x7000, (const unsigned char *)w, len };
	struct py_mem m = { buf_read, &b };
	struct py_name n;
	unsigned bad = 0;

	ok(w[1] == 0x4da20c7af00892ecULL, "FORMAT.md: Python name record vector, check %#llx",
	   (unsigned long long)w[1]);
	ok(python_name_record(&m, 0x7000, 0, &n) && !strcmp(n.func, "Cache.fill") &&
		   !strcmp(n.file, "a.py") && n.line == 4 && n.version == 0x030C01F0u,
	   "the record names Cache.fill a.py:4");
	ok(python_name_frame(&m, 0, hp2_pyframe_word(0, HP2_PYFRAME_ENTRY), 0x7000, &n) &&
		   !strcmp(n.func, "Cache.fill"), "a frame's word pair leads to its record");
	ok(!python_name_record(&m, 0x7008, 0, &n) && !strcmp(n.func, "unknown"),
	   "a record read at the wrong address is unknown");
	for (size_t cut = 0; cut < len; cut++) {
		b.len = cut;
		bad += python_name_record(&m, 0x7000, 0, &n) || strcmp(n.func, "unknown");
	}
	ok(!bad, "a record cut at any of its %zu bytes is unknown", len);
	b.len = len;
	for (size_t i = 0; i < len; i++)
		for (unsigned bit = 0; bit < 8; bit++) {
			((unsigned char *)w)[i] ^= (unsigned char)(1u << bit);
			bad += python_name_record(&m, 0x7000, 0, &n);
			((unsigned char *)w)[i] ^= (unsigned char)(1u << bit);
		}
	ok(!bad, "a record with any one bit flipped fails its magic or check");
	w[4] |= 0xFFFFULL;	/* a name longer than a writer may make */
	ok(!python_name_record(&m, 0x7000, 0, &n), "a record whose name is too long is refused");
}

/* Garbage as code objects, strings and tables of every version: no crash. */
static void garbage(void)
{
	static unsigned char mem[1 << 16];
	struct buf b = { 0x10000, mem, sizeof(mem) };
	struct py_mem m = { buf_read, &b };
	struct py_name n;
	uint32_t versions[] = { 0x030B02F0, 0x030C01F0, 0x030D00F0, 0x030E0000 };
	unsigned seed = 1, named = 0;

	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(mem); i++) {
			seed = seed * 1103515245u + 12345u;
			/* pointers into the buffer often enough to reach strings and tables */
			mem[i] = (unsigned char)(seed >> 16);
			if (i % 8 == 2)
				mem[i] = round % 2 ? 0x01 : 0x00;
			if (i % 8 > 2)
				mem[i] = 0;
		}
		for (unsigned v = 0; v < 4; v++)
			for (uint64_t at = 0x10000; at < 0x10000 + 4096; at += 56)
				named += python_name_code(&m, versions[v], at, (uint32_t)at, &n);
		python_line(mem, sizeof(mem), 1, 4000);
	}
	ok(python_name_code(&m, 0x030E0000, 0x10000, 0, &n) == false && !strcmp(n.func, "unknown"),
	   "a version it does not know is unknown");
	ok(1, "garbage code objects read within bounds (%u happened to parse)", named);
}

int main(void)
{
	lines();
	records();
	garbage();
	return tap_done();
}
