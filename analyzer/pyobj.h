/*
 * Python objects in a dump (CPython 3.11 to 3.13, 64-bit): whether a block holds one,
 * its type's name (ob_type->tp_name), the words in front of it that are the garbage
 * collector's list links, and the buffers it owns that sys.getsizeof counts with it.
 * Every byte is read through a struct py_mem and is untrusted: a type counts only when
 * its own ob_type chain reaches `type` and its name is a readable, printable string.
 * Callers: --by=type (types.c), the heap graph (graph.c), untagged chunks.
 */
#ifndef HP_PYOBJ_H
#define HP_PYOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "python.h"

#define PYOBJ_MAX_PARTS 2

/* What a block holds, as pyobj_block finds it. */
struct pyobj_info {
	const char *type;	/* tp_name; lives until pyobj_close() */
	uint64_t object;	/* the PyObject's address in the block */
	uint64_t gc_lo, gc_hi;	/* the PyGC_Head's words [gc_lo, gc_hi): the collector's
				 * list, not the object's references (gc_lo == gc_hi:
				 * none) */
	uint64_t part[PYOBJ_MAX_PARTS];	/* buffers of its own sys.getsizeof counts (a
					 * dict's keys table, a list's items), start
					 * addresses as read; 0: none */
	unsigned nparts;
};

struct pyobj;

/* A recognizer reading through m (which must outlive it); NULL for word sizes other
 * than 8 (CPython's layouts here are 64-bit ones). Types seen are remembered. */
struct pyobj *pyobj_open(const struct py_mem *m, unsigned wsize, bool big_endian);
void pyobj_close(struct pyobj *p);

/*
 * Does the block of size bytes at addr (its user data) hold a Python object, at its
 * start or after the collector's head and the 3.11+ pre-header? true with *out filled;
 * false when no candidate's type checks out (random words, text, other runtimes'
 * data). Never reads outside what m gives.
 */
bool pyobj_block(struct pyobj *p, uint64_t addr, uint64_t size, struct pyobj_info *out);

/*
 * A recognizer for a dump: it reads img, and a module's read-only pages the dump left
 * out from the file the target mapped (image_read_mapped, under sysroot); NULL when no
 * mapped file is a Python interpreter (python3*, libpython3*), or the word size is not
 * 8. img must outlive it.
 */
struct pyobj *pyobj_open_image(const struct image *img, const char *sysroot);
/* Whether pyobj_open_image would give a recognizer for img. */
bool pyobj_in_image(const struct image *img);

/* Just the type's name, or NULL (p may be NULL: then NULL). */
const char *pyobj_type(struct pyobj *p, uint64_t addr, uint64_t size);

#endif
