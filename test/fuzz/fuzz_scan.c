/*
 * libFuzzer target: any bytes as a raw memory image of any target (the first byte
 * picks word size and byte order, the next eight the address), through the scan, the
 * stack totals and the timeline and peak table readers; the same bytes as Python name
 * records, code objects and location tables (analyzer/python.c). Build and run: make fuzz
 * (needs clang).
 */
#include <stdint.h>
#include <string.h>

#include "image.h"
#include "python.h"
#include "scan.h"
#include "timeline.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
		struct report rep = { 0 };
		struct join_opts jo = { 0 };
		const char *why;

		util_quiet = true;
		timeline_read(&t, &rep, &r, &img);
		timeline_peak_apply(&t, &r, &img, &jo, &why);
		timeline_free(&t);
	}
	scan_result_free(&r);
	m = python_mem_image(&img);
	python_name_record(&m, addr, data[0], &n);
	python_name_code(&m, 0x030B0000u + ((data[0] >> 2) % 3 << 16), addr, data[0], &n);
	python_line(data + 9, size - 9, 1, (uint32_t)data[0] << 4);
	return 0;
}
