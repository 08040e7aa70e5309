/*
 * A report: sorted, cut and symbolized stacks plus the summary of the scan. Built
 * once by report_build(); the writers (out_*.c) only print it, so the same core
 * always gives the same bytes whatever the format.
 */
#ifndef HP_REPORT_H
#define HP_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "scan.h"

struct image;
struct sym;

struct report_frame {
	uint64_t pc;
	const char *func;	/* NULL when unknown */
	const char *file;	/* NULL when unknown */
	int line;
	const char *module;	/* path, NULL when no module holds pc */
	uint64_t module_offset;
	bool in_program;
	bool inlined;		/* inlined into the next (outer) frame */
};

struct report_stack {
	uint64_t bytes, blocks;		/* estimates when the report is sampled */
	unsigned flags;			/* STACK_TRUNCATED, STACK_UNKNOWN (stacks.h) */
	unsigned recorded_frames;	/* pcs the stack record held */
	const struct size_count *sizes; /* by count descending, then size */
	size_t nsizes;
	const struct report_frame *frames; /* [0] innermost */
	unsigned nframes;
};

struct report {
	const char *program;
	const char *source;		/* the core, or the raw images, as named */
	unsigned wsize;
	bool big_endian;
	uint64_t live_bytes, live_blocks; /* the stacks' sums: estimates when sampled */
	uint64_t sample_period;		/* bytes; 0 unless some block was sampled */
	uint64_t unknown_blocks, unknown_bytes; /* under [unknown stack], as found */
	uint64_t damaged;		/* v2 headers with a bad check naming a real site */
	size_t all_stacks;		/* distinct stacks found */
	const struct report_stack *stacks; /* the ones shown, bytes descending */
	size_t nstacks;
	uint64_t rest_bytes, rest_blocks; /* what --top / --min-percent left out */
	const struct scan_result *scan;
	const struct image *img;
	const char *modules;		/* which module list symbolized the stacks */
	const struct sym_module_info *mods; /* the module table, by start address */
	size_t nmods;
	bool saturated;			/* a total did not fit 64 bits */
	char **owned;			/* names the report made (--short-names) */
	size_t nowned;
};

struct report_opts {
	size_t top;		/* 0: all */
	double min_percent;	/* stacks below this share are left out */
	bool sizes;		/* count the shown stacks' blocks by size (text does) */
	bool short_names;	/* C++ templates and parameter lists left out */
};

/* Build r from a scan; symbolizes only the stacks shown. */
void report_build(struct report *r, const struct scan_result *scan, const struct image *img,
		  struct sym *sym, const struct report_opts *o);
void report_free(struct report *r);

/*
 * A frame's name for printing: the function, else "module+0xoffset" (module's base
 * name), else "0xpc". Returns buf or a string owned by the report.
 */
const char *report_frame_name(const struct report_frame *f, char *buf, size_t size);

/* 1234567 -> "1,234,567" into buf (at least 27 bytes). */
const char *report_thousands(uint64_t v, char *buf);

struct out_format {
	const char *name;
	/* 0, or -1 with errno when writing failed */
	int (*write)(const struct report *r, FILE *f);
};

extern const struct out_format out_text, out_collapsed, out_pprof, out_svg;

#endif
