/*
 * Python objects in a dump (pyobj.h). A candidate's ob_type is checked once per
 * distinct address and remembered, so a heap of a million dicts costs a million hash
 * look-ups and one check. The layouts are CPython's 3.11 to 3.13 (non-free-threaded,
 * 64-bit), where they agree; what differs between them is not read.
 */
#include <stdlib.h>
#include <string.h>

#include "pyobj.h"
#include "util.h"

/* PyObject and PyTypeObject (Include/object.h, Include/cpython/object.h) */
#define OB_TYPE 8
#define TP_NAME 24
#define TP_BASICSIZE 32
#define TP_FLAGS 168
#define STR_COMPACT 41		/* a compact ASCII str, 3.12+'s header and its NUL, is
				 * shorter than str's tp_basicsize (PyUnicodeObject) */
#define GC_HEAD 16		/* PyGC_Head: _gc_next, _gc_prev */
#define PRE_HEADER 16		/* 3.11's managed dict, 3.12+'s dict and weakref words */

#define F_MANAGED_WEAKREF (1ull << 3)	/* 3.12+ (3.11 leaves the bit unused) */
#define F_MANAGED_DICT (1ull << 4)
#define F_HAVE_GC (1ull << 14)
#define F_LIST_SUBCLASS (1ull << 25)
#define F_UNICODE_SUBCLASS (1ull << 28)
#define F_DICT_SUBCLASS (1ull << 29)
#define F_TYPE_SUBCLASS (1ull << 31)

/* the buffers sys.getsizeof adds (dict_sizeof, list___sizeof__, set_sizeof) */
#define DICT_KEYS 32
#define DICT_VALUES 40
#define LIST_ITEMS 24
#define SET_TABLE 40
#define SET_SMALLTABLE 64
#define BYTEARRAY_BYTES 32

#define MAX_NAME 128		/* tp_name read at most this long */
#define MAX_META 8		/* metatypes followed up to `type` */
#define MAX_BAD (1u << 16)	/* bad candidates remembered; past them, checked again */

enum kind { K_OTHER, K_DICT, K_LIST, K_SET, K_BYTEARRAY, K_STR };

struct type_entry {
	uint64_t addr;		/* 0: an empty slot */
	char *name;		/* NULL: not a type */
	uint64_t flags, basicsize;
	enum kind kind;
};

struct pyobj {
	struct py_mem m;
	const struct image *img;	/* pyobj_open_image's reader */
	const char *sysroot;
	struct type_entry *v;	/* open addressing by addr */
	size_t cap, n, nbad;
};

static bool rd_u64(const struct pyobj *p, uint64_t addr, uint64_t *v)
{
	return p->m.read(p->m.ctx, addr, v, sizeof(*v));
}

struct pyobj *pyobj_open(const struct py_mem *m, unsigned wsize, bool big_endian)
{
	struct pyobj *p;
	const uint16_t one = 1;

	/* words are read as the host has them: the target must agree, and be 64-bit */
	if (wsize != 8 || big_endian != (*(const uint8_t *)&one == 0))
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->m = *m;
	p->cap = 1024;
	p->v = xcalloc(p->cap, sizeof(*p->v));
	return p;
}

static bool read_mapped(const void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct pyobj *p = ctx;

	return image_read_mapped(p->img, p->sysroot, addr, buf, len);
}

static bool python_mapped(const struct image *img)
{
	for (size_t i = 0; i < img->nfiles; i++) {
		const char *base = strrchr(img->files[i].name, '/');

		base = base ? base + 1 : img->files[i].name;
		if (!strncmp(base, "python3", 7) || !strncmp(base, "libpython3", 10))
			return true;
	}
	return false;
}

struct pyobj *pyobj_open_image(const struct image *img, const char *sysroot)
{
	struct py_mem m = { read_mapped, NULL };
	struct pyobj *p;

	if (!python_mapped(img) || !(p = pyobj_open(&m, img->wsize, img->big_endian)))
		return NULL;
	p->img = img;
	p->sysroot = sysroot;
	p->m.ctx = p;
	return p;
}

bool pyobj_in_image(const struct image *img)
{
	struct pyobj *p = pyobj_open_image(img, NULL);

	pyobj_close(p);
	return p != NULL;
}

void pyobj_close(struct pyobj *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->cap; i++)
		free(p->v[i].name);
	free(p->v);
	free(p);
}

static size_t slot_of(const struct pyobj *p, uint64_t addr)
{
	size_t i = (size_t)((addr >> 3) * 0x9E3779B97F4A7C15ull) & (p->cap - 1);

	while (p->v[i].addr && p->v[i].addr != addr)
		i = (i + 1) & (p->cap - 1);
	return i;
}

static struct type_entry *remember(struct pyobj *p, const struct type_entry *e)
{
	size_t i;

	if (2 * (p->n + 1) > p->cap) {
		struct type_entry *old = p->v;
		size_t ocap = p->cap;

		p->cap *= 2;
		p->v = xcalloc(p->cap, sizeof(*p->v));
		for (size_t k = 0; k < ocap; k++)
			if (old[k].addr)
				p->v[slot_of(p, old[k].addr)] = old[k];
		free(old);
	}
	i = slot_of(p, e->addr);
	p->v[i] = *e;
	p->n++;
	return &p->v[i];
}

/* tp_name at t as a printable, NUL-terminated string into buf, or false. */
static bool read_name(const struct pyobj *p, uint64_t t, char buf[MAX_NAME])
{
	uint64_t at;
	size_t len = 0;

	unsigned char all[MAX_NAME];
	bool whole;

	if (!rd_u64(p, t + TP_NAME, &at) || !at)
		return false;
	/* at once, or byte by byte up to the NUL when the name is near a mapping's end */
	whole = p->m.read(p->m.ctx, at, all, sizeof(all));
	for (; len < MAX_NAME; len++) {
		unsigned char c = all[len];

		if (!whole && !p->m.read(p->m.ctx, at + len, &c, 1))
			return false;
		if (!c)
			break;
		if (c < 0x21 || c > 0x7e)	/* names are identifiers, dots and <> */
			return false;
		buf[len] = (char)c;
	}
	if (!len || len == MAX_NAME)
		return false;
	buf[len] = 0;
	return true;
}

/* Is t's metatype chain one of types reaching `type`, whose own ob_type is itself? */
static bool meta_reaches_type(const struct pyobj *p, uint64_t t)
{
	uint64_t x = t, y, flags;
	char name[MAX_NAME];

	for (unsigned k = 0; k < MAX_META; k++) {
		if (!rd_u64(p, x + OB_TYPE, &y) || !y || y % 8)
			return false;
		/* y is x's type: a type's type is a type (or a subclass of type) */
		if (!rd_u64(p, y + TP_FLAGS, &flags) || !(flags & F_TYPE_SUBCLASS))
			return false;
		if (y == x)
			return read_name(p, x, name) && !strcmp(name, "type");
		x = y;
	}
	return false;
}

static enum kind kind_of(const char *name, uint64_t flags)
{
	if (flags & F_DICT_SUBCLASS)
		return K_DICT;
	if (flags & F_LIST_SUBCLASS)
		return K_LIST;
	if (!strcmp(name, "set") || !strcmp(name, "frozenset"))
		return K_SET;
	if (!strcmp(name, "bytearray"))
		return K_BYTEARRAY;
	if (flags & F_UNICODE_SUBCLASS)
		return K_STR;
	return K_OTHER;
}

/* The type at t, checked once: its entry, name NULL when it is none. */
static const struct type_entry *type_at(struct pyobj *p, uint64_t t)
{
	struct type_entry e = { .addr = t };
	char name[MAX_NAME];
	size_t i = slot_of(p, t);

	if (p->v[i].addr)
		return &p->v[i];
	if (meta_reaches_type(p, t) && rd_u64(p, t + TP_FLAGS, &e.flags) &&
	    rd_u64(p, t + TP_BASICSIZE, &e.basicsize) && e.basicsize >= 16 &&
	    e.basicsize < (1u << 20) && read_name(p, t, name)) {
		e.name = xstrdup(name);
		e.kind = kind_of(name, e.flags);
	} else if (p->nbad >= MAX_BAD) {
		static const struct type_entry none;

		return &none;
	} else {
		p->nbad++;
	}
	return remember(p, &e);
}

/* The buffers of its own that sys.getsizeof counts with the object at o. */
static void parts(const struct pyobj *p, const struct type_entry *t, uint64_t o,
		  struct pyobj_info *out)
{
	uint64_t a = 0, b = 0, refcnt;

	switch (t->kind) {
	case K_DICT:	/* a keys table shared with other dicts is none's own */
		if (rd_u64(p, o + DICT_KEYS, &a) && rd_u64(p, a, &refcnt) && refcnt != 1)
			a = 0;
		rd_u64(p, o + DICT_VALUES, &b);
		break;
	case K_LIST:
		rd_u64(p, o + LIST_ITEMS, &a);
		break;
	case K_SET:	/* up to 8 entries live in the object */
		if (rd_u64(p, o + SET_TABLE, &a) && a == o + SET_SMALLTABLE)
			a = 0;
		break;
	case K_BYTEARRAY:
		rd_u64(p, o + BYTEARRAY_BYTES, &a);
		break;
	case K_STR:
	case K_OTHER:
		break;
	}
	out->nparts = 0;
	if (a)
		out->part[out->nparts++] = a;
	if (b)
		out->part[out->nparts++] = b;
}

bool pyobj_block(struct pyobj *p, uint64_t addr, uint64_t size, struct pyobj_info *out)
{
	/* where the object starts: after nothing, the collector's head, or that and the
	 * pre-header; the type's flags must say the same */
	static const uint64_t offsets[] = { 0, GC_HEAD, GC_HEAD + PRE_HEADER };

	if (!p)
		return false;
	for (size_t k = 0; k < sizeof(offsets) / sizeof(offsets[0]); k++) {
		uint64_t off = offsets[k], t, want;
		const struct type_entry *e;

		if (size < off + 16 || !rd_u64(p, addr + off + OB_TYPE, &t) || !t || t % 8)
			continue;
		e = type_at(p, t);
		if (!e->name)
			continue;
		want = (e->flags & F_HAVE_GC ? GC_HEAD : 0) +
		       (e->flags & (F_MANAGED_DICT | F_MANAGED_WEAKREF) ? PRE_HEADER : 0);
		if (want != off || size - off < (e->kind == K_STR ? STR_COMPACT : e->basicsize))
			continue;
		out->type = e->name;
		out->object = addr + off;
		out->gc_hi = out->object;
		out->gc_lo = e->flags & F_HAVE_GC ? out->object - GC_HEAD : out->object;
		parts(p, e, out->object, out);
		return true;
	}
	return false;
}

const char *pyobj_type(struct pyobj *p, uint64_t addr, uint64_t size)
{
	struct pyobj_info i;

	return pyobj_block(p, addr, size, &i) ? i.type : NULL;
}
