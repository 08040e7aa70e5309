/*
 * libFuzzer target: any bytes as a raw memory image of any target (the first byte
 * picks word size and byte order, the next eight the address), through the scan, the
 * stack totals, the timeline and peak table readers and the map table's; the same bytes as Python name
 * records, code objects and location tables (analyzer/python.c), and as a stack's words
 * with Python pairs (sym_stack in each --python mode). Build and run: make fuzz (needs
 * clang).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "maps.h"
#include "python.h"
#include "scan.h"
#include "sym.h"
#include "timeline.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes as a stack: data[0] >> 3 native words, then pairs whose word A is tagged
 * (its flags and offset as found) and whose word B points into the image, so that
 * the names are read from records and code objects there, whole or not. */
static void stack_words(const struct image *img, const struct seg *seg, const uint8_t *data,
			size_t size)
{
	uint64_t w[HP2_MAX_FRAMES];
	unsigned n = (unsigned)((size - 9) / 8), native = data[0] >> 3;

	if (n > HP2_MAX_FRAMES)
		n = HP2_MAX_FRAMES;
	memcpy(w, data + 9, n * 8);
	for (unsigned i = native; i < n; i++) {
		if ((i - native) % 2 == 0)
			w[i] = (uint64_t)HP2_PYFRAME_TAG << 48 | (w[i] & 0xFFFFFFFFFFFFULL);
		else if (data[0] & 4 && seg->size)
			w[i] = seg->vaddr + (w[i] % seg->size & ~(uint64_t)7);
	}
	for (int mode = SYM_PY_MERGED; mode <= SYM_PY_PYTHON; mode++) {
		struct sym_opts so = { .img = img, .quiet = true, .python = (enum sym_python)mode };
		struct sym *s = sym_open(&so);
		struct sym_pc *v;

		sym_stack(s, w, n, &v);
		free(v);
		sym_close(s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image img;
	struct seg seg;
	struct scan_result r;
	struct py_mem m;
	struct py_name n;
	uint64_t addr;

	if (size < 9)
		return 0;
	memset(&img, 0, sizeof(img));
	img.fd = -1;
	img.wsize = data[0] & 1 ? 4 : 8;
	img.big_endian = data[0] & 2;
	memcpy(&addr, data + 1, 8);
	if (img.wsize == 4)
		addr &= 0xffffffff;
	seg = (struct seg){ .vaddr = addr, .size = size - 9, .data = data + 9 };
	if (addr + seg.size < addr)	/* image_add_raw refuses images past 2^64 */
		seg.size = -addr;
	img.segs = &seg;
	img.nsegs = 1;
	scan_image(&img, 1, &r);
	{
		struct timeline_data t;
		struct maps mp;
		struct report rep = { 0 };
		struct join_opts jo = { 0 };
		const char *why;

		util_quiet = true;
		timeline_read(&t, &rep, &r, &img);
		timeline_peak_apply(&t, &r, &img, &jo, &why);
		timeline_free(&t);
		maps_apply(&mp, &img, &r, NULL, 0);
		maps_free(&mp);
	}
	scan_result_free(&r);
	m = python_mem_image(&img);
	python_name_record(&m, addr, data[0], &n);
	python_name_code(&m, 0x030B0000u + ((data[0] >> 2) % 3 << 16), addr, data[0], &n);
	python_line(data + 9, size - 9, 1, (uint32_t)data[0] << 4);
	stack_words(&img, &seg, data, size);
	return 0;
}
