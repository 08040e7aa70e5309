/*
 * Unit test of analyzer/pyobj.c on hand-made memory: a type chain up to `type`, objects
 * at their three offsets with their flags, and what must not make a type: a word to
 * something whose ob_type chain never reaches `type`, an unprintable or unterminated
 * name, a collector's object at offset 0, a block shorter than the type, memory cut.
 */
#include <stdlib.h>
#include <string.h>

#include "pyobj.h"
#include "tap.h"

#define BASE 0x10000ull
#define LEN 0x2000u

static unsigned char mem[LEN];
static size_t cut = LEN;	/* bytes readable from BASE */

static bool mem_read(const void *ctx, uint64_t addr, void *out, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr - BASE > cut || len > cut - (addr - BASE))
		return false;
	memcpy(out, mem + (addr - BASE), len);
	return true;
}

static void put(uint64_t addr, uint64_t v)
{
	memcpy(mem + (addr - BASE), &v, 8);
}

/* a type object at t: its type, name (a string at name), basicsize and flags */
static void type_at(uint64_t t, uint64_t meta, uint64_t name, const char *s, uint64_t basic,
		    uint64_t flags)
{
	put(t + 8, meta);
	put(t + 24, name);
	put(t + 32, basic);
	put(t + 168, flags);
	strcpy((char *)mem + (name - BASE), s);
}

#define TYPE 0x10000ull		/* `type`: its own type */
#define DICT 0x10200ull		/* a collector's type */
#define STR 0x10400ull		/* no collector */
#define REC 0x10600ull		/* a class with a managed dict */
#define FAKE 0x10800ull		/* a "type" whose type is no type */
#define UGLY 0x10a00ull		/* a type with an unprintable name */
#define OBJ 0x11000ull

static struct pyobj *fresh(void)
{
	static struct py_mem m = { mem_read, NULL };

	return pyobj_open(&m, 8, false);
}

int main(void)
{
	struct pyobj *p;
	struct pyobj_info in;

	type_at(TYPE, TYPE, 0x10f00, "type", 400, (1ull << 31) | (1ull << 14));
	type_at(DICT, TYPE, 0x10f10, "dict", 48, (1ull << 29) | (1ull << 14));
	type_at(STR, TYPE, 0x10f20, "str", 80, 1ull << 28);
	type_at(REC, TYPE, 0x10f30, "Record", 24, (1ull << 14) | (1ull << 4));
	type_at(FAKE, OBJ, 0x10f40, "Fake", 16, 0);
	type_at(UGLY, TYPE, 0x10f50, "bad\001name", 16, 0);

	p = fresh();
	put(OBJ + 8, STR);
	ok(pyobj_type(p, OBJ, 60) && !strcmp(pyobj_type(p, OBJ, 60), "str"),
	   "a str at the block's start, shorter than str's basicsize (compact)");
	put(OBJ + 0x100 + 16 + 8, DICT);
	put(OBJ + 0x100 + 16 + 32, OBJ + 0x400);	/* ma_keys, refcnt 1 */
	put(OBJ + 0x400, 1);
	ok(pyobj_block(p, OBJ + 0x100, 64, &in) && !strcmp(in.type, "dict") &&
		   in.object == OBJ + 0x110 && in.gc_lo == OBJ + 0x100 && in.gc_hi == OBJ + 0x110 &&
		   in.nparts == 1 && in.part[0] == OBJ + 0x400,
	   "a dict after its collector's head, its keys table its own");
	put(OBJ + 0x400, 2);
	ok(pyobj_block(p, OBJ + 0x100, 64, &in) && in.nparts == 0,
	   "a keys table shared (refcount 2) is not the dict's");
	put(OBJ + 0x200 + 32 + 8, REC);
	ok(pyobj_block(p, OBJ + 0x200, 56, &in) && !strcmp(in.type, "Record") &&
		   in.object == OBJ + 0x220 && in.gc_lo == OBJ + 0x210,
	   "an instance after the pre-header and the collector's head");
	ok(!pyobj_type(p, OBJ + 0x200, 40), "a block shorter than its type's basicsize: none");
	put(OBJ + 0x300 + 8, DICT);
	ok(!pyobj_type(p, OBJ + 0x300, 64), "a collector's type at offset 0: none");
	put(OBJ + 0x500 + 8, FAKE);
	ok(!pyobj_type(p, OBJ + 0x500, 64), "a type whose ob_type chain never reaches type: none");
	put(OBJ + 0x600 + 8, UGLY);
	ok(!pyobj_type(p, OBJ + 0x600, 64), "an unprintable name: none");
	put(OBJ + 0x700 + 8, OBJ + 0x500);
	ok(!pyobj_type(p, OBJ + 0x700, 64), "a word to an ordinary block: none");
	put(OBJ + 0x800 + 8, 0x7777777777777778ull);
	ok(!pyobj_type(p, OBJ + 0x800, 64), "a word to nowhere: none");
	pyobj_close(p);

	p = fresh();
	memset(mem + (0x10f10 - BASE), 'x', 0x10f20 - 0x10f10);	/* "dict" unterminated... */
	memset(mem + (0x10f20 - BASE), 'x', 0x10f30 - 0x10f20);
	memset(mem + (0x10f30 - BASE), 'x', 0x10fff - 0x10f30);
	cut = 0x10fff - BASE;					/* ...up to the end */
	ok(!pyobj_type(p, OBJ + 0x100, 64), "a name running off the memory: none, no crash");
	for (cut = 0; cut < 0x1200; cut++)
		pyobj_type(p, OBJ, 60);
	ok(true, "memory cut at every byte: no crash");
	pyobj_close(p);
	ok(!pyobj_open(&(struct py_mem){ mem_read, NULL }, 4, false), "32-bit: no recognizer");
	return tap_done();
}
