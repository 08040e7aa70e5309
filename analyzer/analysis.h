/*
 * What every analysis reads: the command line as options.c parsed it. (The session
 * and the analyses table come in the next step.)
 */
#ifndef HP_ANALYSIS_H
#define HP_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "report.h"
#include "sym.h"
#include "views.h"

#define OPTIONS_MAX_LIST 256

struct leak_supp;

/* The command line, checked: every combination the rules of options.c refuse is gone. */
struct options {
	uint64_t given;			/* OPTION_BIT(OPT_*) of each option given or implied */
	const struct out_format *format;
	const char *output;		/* -o, NULL: stdout */
	struct report_opts report;
	struct join_opts join;
	const char *debug_dirs[OPTIONS_MAX_LIST + 1];
	size_t ndebug_dirs;
	const char *sysroot;
	const char *raw_spec[OPTIONS_MAX_LIST];	/* as given, for the report */
	struct sym_module raw[OPTIONS_MAX_LIST];	/* file and address of each */
	size_t nraw;
	struct sym_module modules[OPTIONS_MAX_LIST];
	size_t nmodules;
	bool have_load_base;
	uint64_t load_base;
	unsigned jobs;
	const char *program;
	const char *core;
	const char *base;		/* --base=OLD */
	const char *base_program;	/* --base-program=FILE: OLD's executable */
	struct view_opts view;		/* compiled */
	unsigned leak_mask;		/* --leaks: classes shown; 0 = no classification */
	bool fail_on_leak;
	const char *suppressions;
	struct leak_supp *supp;		/* read from --suppressions */
	bool age;			/* --age */
	int64_t older_than_ms;		/* --older-than, -1 if not given */
	bool memory;			/* --memory */
	bool lifetimes;			/* --lifetimes */
	const char *why;		/* --why=REGEX or 0xADDR */
	size_t by_top;			/* --by: rows shown, the --top given (0: all) */
	bool peak;			/* --peak: the stacks at the peak */
	bool peak_diff;			/* --peak-diff: the peak minus now, one dump */
	bool timeline;			/* --timeline: text draws the timeline */
	enum sym_python python;		/* --python */
};

#endif
