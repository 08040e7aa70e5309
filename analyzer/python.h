/*
 * Names of Python frames (CPython 3.11 to 3.13): function (co_qualname), file and line,
 * from heapprof's name records or from a code object still in the target's memory.
 * Every byte is read through a reader the caller gives (an image, or a live process in
 * the tests) and is untrusted: bad data gives false and "unknown", never a crash.
 */
#ifndef HP_AN_PYTHON_H
#define HP_AN_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image.h"

/* Where the bytes come from: read len bytes at target address addr, false if absent. */
struct py_mem {
	bool (*read)(const void *ctx, uint64_t addr, void *buf, size_t len);
	const void *ctx;
};

struct py_name {
	char func[256];		/* co_qualname in UTF-8, or "unknown" */
	char file[1024];	/* co_filename, or "unknown" */
	int line;		/* 1-based; 0 when the line table does not say */
	uint32_t version;	/* the interpreter's PY_VERSION_HEX when known, else 0 */
};

/*
 * The name record (HP2_PYCODE_MAGIC) at rec, and the line of the instruction at byte
 * offset in it. true if the record is whole (magic and check value right, lengths
 * within bounds); false leaves out "unknown" with line 0.
 */
bool python_name_record(const struct py_mem *m, uint64_t rec, uint32_t offset,
			struct py_name *out);

/*
 * The code object at code, as interpreter version (PY_VERSION_HEX) lays it out, and
 * the line at offset. false (out "unknown") for a version it does not know or bytes
 * that are absent or do not make a code object's names.
 */
bool python_name_code(const struct py_mem *m, uint32_t version, uint64_t code, uint32_t offset,
		      struct py_name *out);

/*
 * A Python frame as a stack record stores it (words A and B, include/heapprof_format.h):
 * from its name record, or with HP2_PYFRAME_RAW from the code object (version needed).
 */
bool python_name_frame(const struct py_mem *m, uint32_t version, uint64_t a, uint64_t b,
		       struct py_name *out);

/*
 * The line of the instruction at byte offset, from a location table in the format of
 * 3.11 and later (PEP 626/657, CPython's Objects/locations.md) starting at firstlineno:
 * 0 when the table has no line for it, or ends (or goes bad) before it.
 */
int python_line(const uint8_t *table, size_t len, int firstlineno, uint32_t offset);

/* The reader for an image: image_read(). */
static inline bool python_read_image(const void *img, uint64_t addr, void *buf, size_t len)
{
	return image_read(img, addr, buf, len);
}

static inline struct py_mem python_mem_image(const struct image *img)
{
	struct py_mem m = { python_read_image, img };

	return m;
}

#endif
