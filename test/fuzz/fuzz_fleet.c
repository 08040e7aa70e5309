/*
 * libFuzzer target: the many-dumps path, heapprof-analyze PROGRAM CORE CORE... (the
 * fleet merge, analyzer/session_fleet.c). The input is two to four cores cut apart
 * by CUT (one part alone is read twice, as two dumps); they go through options_parse,
 * session_report and every writer, with a few option sets picked by the input's last
 * byte. Build and run: make fuzz (needs clang).
 *
 * The merge ends the process with one line (die) when dumps cannot be merged: not a
 * core of PROGRAM's machine, no heapprof block, two builds of one module, two
 * programs (t6015 walks those). Such inputs are left out before the merge, the way it
 * decides (mergeable, below), so that the fuzzer spends its time in the merge; a die
 * that still comes (a new refusal) returns here through a longjmp (-Wl,--wrap=die),
 * and what the refused input held is let go with the session.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "image.h"
#include "options.h"
#include "report.h"
#include "scan.h"
#include "session.h"
#include "session_int.h"
#include "sym.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
void __wrap_die(int status, const char *fmt, ...);

#define CUT "HPFLEET|"
#define MAX_DUMPS 4

static char program[4096];
static unsigned prog_wsize;
static uint16_t prog_machine;
static jmp_buf refused;
static bool in_session;

/* die() from the analyzer's objects, here: back to the input's end */
void __wrap_die(int status, const char *fmt, ...)
{
	(void)status;
	(void)fmt;
	if (!in_session)
		abort();	/* outside the session a die is the target's own bug */
	longjmp(refused, 1);
}

/* The option sets, by the input's last byte: each one the merge takes. */
static const char *const option_sets[][3] = {
	{ NULL },
	{ "--top=2", NULL },
	{ "--by=function", NULL },
	{ "--focus=main", "--hide=^_start$", NULL },
	{ "--metric=inuse_objects", "--top=0", NULL },
	{ "--max-frames=2", NULL },
};

/* One dump's program module path (as session_fleet.c's dump_program finds it), or "". */
static void program_of(const struct image *img, const struct sym_dump_module *m, size_t n,
		       char *out, size_t len)
{
	const char *base = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;

	*out = 0;
	for (size_t i = 0; i < n; i++)
		if (img->have_auxv && img->at_entry >= m[i].lo && img->at_entry < m[i].hi) {
			snprintf(out, len, "%s", m[i].path);
			return;
		}
	for (size_t i = 0; i < n; i++) {
		const char *b = strrchr(m[i].path, '/') ? strrchr(m[i].path, '/') + 1 : m[i].path;

		if (!strcmp(b, base)) {
			snprintf(out, len, "%s", m[i].path);
			return;
		}
	}
}

/* A module path and build-id seen in an earlier dump of the input. */
struct seen {
	char *path;
	char build_id[129];
};

/*
 * Whether the merge would take these dumps: each opens as a core of PROGRAM's machine
 * and word size and holds heapprof blocks; no module is two builds and no two dumps
 * have two programs.
 */
static bool mergeable(char **paths, size_t n)
{
	struct seen *seen = NULL;
	size_t nseen = 0;
	char prog[4096] = "", this_prog[4096];
	bool ok = true;

	for (size_t d = 0; d < n && ok; d++) {
		struct image img;
		struct scan_result scan;
		struct sym_dump_module *m;
		size_t nm;
		char err[1024];

		if (image_open(&img, &(struct image_spec){ .core = paths[d] }, err, sizeof(err)) < 0) {
			image_close(&img);
			ok = false;
			break;
		}
		if (img.machine != prog_machine || img.wsize != prog_wsize) {
			image_close(&img);
			ok = false;
			break;
		}
		scan_image_with(&img, 1, &(struct join_opts){ 0 }, &scan);
		ok = scan.blocks > 0;
		scan_result_free(&scan);
		m = sym_dump_modules(&img, &nm);
		for (size_t k = 0; k < nm && ok; k++) {
			size_t j = 0;

			while (j < nseen && strcmp(seen[j].path, m[k].path))
				j++;
			if (j == nseen) {
				seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
				seen[nseen].path = xstrdup(m[k].path);
				memcpy(seen[nseen++].build_id, m[k].build_id, sizeof(m[k].build_id));
			} else if (*seen[j].build_id && *m[k].build_id &&
				   strcmp(seen[j].build_id, m[k].build_id)) {
				ok = false;
			} else if (!*seen[j].build_id) {
				memcpy(seen[j].build_id, m[k].build_id, sizeof(m[k].build_id));
			}
		}
		program_of(&img, m, nm, this_prog, sizeof(this_prog));
		if (*this_prog && *prog && strcmp(this_prog, prog))
			ok = false;
		if (*this_prog)
			memcpy(prog, this_prog, sizeof(prog));
		free(m);
		image_close(&img);
	}
	for (size_t j = 0; j < nseen; j++)
		free(seen[j].path);
	free(seen);
	return ok;
}

static void write_all_formats(const struct report *r)
{
	static const struct out_format *const formats[] = {
		&out_text, &out_collapsed, &out_pprof, &out_json, &out_html, &out_svg,
	};
	FILE *out = fopen("/dev/null", "w");

	if (!out)
		return;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		formats[i]->write(r, out);
	fclose(out);
}

/* The merge of the dumps at paths, with option set set. */
static void merge(char **paths, size_t n, unsigned set)
{
	char *argv[16];
	int argc = 0;
	struct options o;
	struct session s;
	const struct report *r;

	argv[argc++] = "heapprof-analyze";
	argv[argc++] = "-j1";
	argv[argc++] = "--python=native";
	for (unsigned k = 0; option_sets[set][k]; k++)
		argv[argc++] = (char *)option_sets[set][k];
	argv[argc++] = program;
	for (size_t i = 0; i < n; i++)
		argv[argc++] = paths[i];
	argv[argc] = NULL;
	memset(&o, 0, sizeof(o));
	memset(&s, 0, sizeof(s));
	optind = 0;	/* getopt_long starts over for each input */
	options_parse(&o, argc, argv);
	in_session = true;
	if (!setjmp(refused)) {
		r = session_report(&s, &o);
		write_all_formats(r);
	}
	in_session = false;
	session_end(&s);
	options_free(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *paths[MAX_DUMPS], names[MAX_DUMPS][64];
	int fds[MAX_DUMPS];
	size_t n = 0, at = 0;

	util_quiet = true;
	if (!size)
		return 0;
	while (n < MAX_DUMPS && at <= size) {
		const uint8_t *cut = memmem(data + at, size - at, CUT, strlen(CUT));
		size_t end = cut && n + 1 < MAX_DUMPS ? (size_t)(cut - data) : size;

		fds[n] = memfd_create("dump", 0);
		if (fds[n] < 0 || write(fds[n], data + at, end - at) != (ssize_t)(end - at)) {
			if (fds[n] >= 0)
				close(fds[n]);
			break;
		}
		snprintf(names[n], sizeof(names[n]), "/proc/self/fd/%d", fds[n]);
		paths[n] = names[n];
		n++;
		at = end + strlen(CUT);
		if (end == size)
			break;
	}
	if (n == 1) {	/* one part: the same dump twice */
		paths[1] = paths[0];
		if (mergeable(paths, 2))
			merge(paths, 2, data[size - 1] % (sizeof(option_sets) / sizeof(option_sets[0])));
	} else if (n > 1 && mergeable(paths, n)) {
		merge(paths, n, data[size - 1] % (sizeof(option_sets) / sizeof(option_sets[0])));
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}

/* PROGRAM: this very executable (linked with no build-id, so that it is no other build
 * than the dumps' program it stands for), a real ELF file of the seeds' machine. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];
	bool be, pie;

	(void)argc;
	if (readlink("/proc/self/exe", program, sizeof(program) - 1) < 0)
		strcpy(program, (*argv)[0]);
	if (image_program_info(program, &prog_wsize, &be, &prog_machine, &pie, err, sizeof(err)) < 0)
		abort();
	return 0;
}
