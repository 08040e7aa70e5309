/*
 * libFuzzer target: any bytes as a core file, through everything the analyzer does
 * with one (image_open_core, the scan, module reporting, lookups, the text report).
 * Nothing may crash, hang or leak. Build and run: make fuzz (needs clang).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "image.h"
#include "report.h"
#include "scan.h"
#include "sym.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char program[4096];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("core", 0);
	char path[64], err[1024];
	struct image img;
	struct scan_result scan;
	struct report r = { .program = program, .source = "fuzz" };
	struct report_opts ro = { .top = 5, .sizes = true };
	struct sym *sym;
	FILE *out;

	util_quiet = true;
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (image_open_core(&img, path, err, sizeof(err)) == 0) {
		scan_image(&img, 1, &scan);
		sym = sym_open(&(struct sym_opts){ .program = program, .img = &img, .quiet = true });
		sym_add_unloaded(sym, scan.found.mods, scan.found.nmods);
		report_build(&r, &scan, &img, sym, &ro);
		out = fopen("/dev/null", "w");
		if (out) {
			out_text.write(&r, out);
			out_collapsed.write(&r, out);
			fclose(out);
		}
		report_free(&r);
		sym_close(sym);
		scan_result_free(&scan);
	}
	image_close(&img);
	close(fd);
	return 0;
}

/* PROGRAM: this very executable, a real ELF file for the module reporting to chew on */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	if (readlink("/proc/self/exe", program, sizeof(program) - 1) < 0)
		strcpy(program, (*argv)[0]);
	return 0;
}
