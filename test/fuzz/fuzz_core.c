/*
 * libFuzzer target: any bytes as a core file (plain, or gzip, zstd or xz: decompressed
 * and spooled as for a real CORE), through everything the analyzer does with one:
 * image_open_core, the scan, module reporting, lookups, every report writer, --base
 * against an empty report both ways, and --leaks with suppressions. Inputs of an odd
 * size come as heapprof report hands another user's snapshot over: on standard input,
 * under a --max-size bound. Nothing may crash, hang or leak. Build and run: make fuzz
 * (needs clang).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc.h"
#include "image.h"
#include "graph.h"
#include "leaks.h"
#include "maps.h"
#include "memory.h"
#include "pinned.h"
#include "report.h"
#include "scan.h"
#include "sym.h"
#include "untagged.h"
#include "util.h"
#include "views.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char program[4096];
static struct leak_supp *supp;

static void write_all_formats(const struct report *r, bool svg)
{
	FILE *out = fopen("/dev/null", "w");

	if (!out)
		return;
	out_text.write(r, out);
	out_collapsed.write(r, out);
	out_pprof.write(r, out);
	out_json.write(r, out);
	out_html.write(r, out);
	if (svg)	/* main refuses svg with --base: negative figures */
		out_svg.write(r, out);
	fclose(out);
}

/* --base: NEW against an empty OLD and the other way, so every stack is in the diff */
static void fuzz_diff(const struct report *r)
{
	/* an OLD with no stacks, NEW's summary of what was scanned */
	struct report empty = { .program = program, .source = "empty", .wsize = r->wsize,
				.big_endian = r->big_endian, .scanned_bytes = r->scanned_bytes, .segments = r->segments }, d;

	diff_build(&d, r, &empty);
	write_all_formats(&d, false);
	diff_free(&d);
	diff_build(&d, &empty, r);
	write_all_formats(&d, false);
	diff_free(&d);
}

/* --leaks=all with suppressions, --memory and retained sizes: the scan that lists
 * blocks, the allocator's chunks (glibc's walk on hostile bytes; with no heapprof
 * block, its untagged chunks as the blocks), the heap graph, then the classifier and
 * the dominator tree on it */
static void fuzz_leaks(const struct image *img, struct sym *sym)
{
	struct scan_result scan;
	struct join_opts jo = { 0 };
	struct leak_summary sum;
	struct memory_summary mem;
	struct pinned pinned;
	struct maps maps;
	struct alloc alloc;
	struct graph *g;
	struct graph_keying k = { .flags = leaks_block_flags };
	struct report r = { .program = program, .source = "fuzz" };
	struct report_opts ro = { .top = 5, .sizes = true };

	uint64_t bytes, own;

	scan_image_blocks_with(img, 1, &jo, &scan);
	alloc_open(&alloc, img, sym, &scan.list, NULL);
	if (!scan.blocks)
		untagged_blocks(&alloc, &scan.list, &bytes, &own);
	if (scan.list.n) {
		maps_apply(&maps, img, &scan, sym, 3);
		memory_apply(img, sym, &alloc, &maps, &mem);
		pinned_apply(&pinned, &alloc, img, &scan, sym, 3);
		mem.pinned = &pinned;
		g = graph_build(img, &scan, &alloc, NULL);
		leaks_apply(g, &scan, sym, &alloc, supp, LEAK_MASK_ALL, &sum);
		graph_add_retained(g, &scan, &k);
		report_add_section(&r, &leaks_section, &sum);
		report_add_section(&r, &memory_section, &mem);
		report_build(&r, &scan, img, sym, &ro);
		write_all_formats(&r, true);
		report_free(&r);
		graph_free(g);
		pinned_free(&pinned);
		maps_free(&maps);
	}
	alloc_close(&alloc);
	scan_result_free(&scan);
}

/*
 * Odd sizes: '-' with fd as standard input (as heapprof report runs the analyzer) and
 * --max-size at half, 1.5, 2.5 or 3.5 times the input's size, by its last byte: a
 * plain input over it and a compressed one whose headers promise more are refused.
 * Even sizes: the file by its name, no bound.
 */
static int image_open_fuzzed(struct image *img, int fd, const char *path, const uint8_t *data,
			     size_t size, char *err, size_t errlen)
{
	int saved = size & 1 ? dup(STDIN_FILENO) : -1, rc;
	const char *name = path;

	image_set_max_size(size & 1 ? size / 2 + (uint64_t)size * (data[size - 1] % 4) : 0);
	if (saved >= 0 && dup2(fd, STDIN_FILENO) == STDIN_FILENO)
		name = "-";
	rc = image_open_core(img, name, err, errlen);
	if (saved >= 0) {
		dup2(saved, STDIN_FILENO);
		close(saved);
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("core", 0);
	char path[64], err[1024];
	struct image img;
	struct scan_result scan;
	struct report r = { .program = program, .source = "fuzz" };
	struct report_opts ro = { .top = 5, .sizes = true };
	struct sym *sym;

	util_quiet = true;
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (image_open_fuzzed(&img, fd, path, data, size, err, sizeof(err)) == 0) {
		scan_image(&img, 1, &scan);
		sym = sym_open(&(struct sym_opts){ .program = program, .img = &img, .quiet = true });
		sym_add_unloaded(sym, scan.found.mods, scan.found.nmods);
		report_build(&r, &scan, &img, sym, &ro);
		write_all_formats(&r, true);
		fuzz_diff(&r);
		report_free(&r);
		scan_result_free(&scan);
		fuzz_leaks(&img, sym);
		sym_close(sym);
	}
	image_close(&img);
	close(fd);
	return 0;
}

/*
 * PROGRAM: this very executable, a real ELF file for the module reporting to chew on;
 * suppressions that name frames the seeds hold, so that some leaks are suppressed.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[] = "/tmp/heapprof-fuzz-supp.XXXXXX", err[256];
	int fd = mkstemp(path);

	(void)argc;
	if (readlink("/proc/self/exe", program, sizeof(program) - 1) < 0)
		strcpy(program, (*argv)[0]);
	if (fd >= 0) {
		static const char text[] = "# seeds' frames\nleak:LLVMFuzzer*\nleak:*fuzz_core*\n"
					   "leak:libc.so*\n";

		if (write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1)
			supp = leaks_read_suppressions(path, err, sizeof(err));
		close(fd);
		unlink(path);
	}
	return 0;
}
