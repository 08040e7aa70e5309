/*
 * heapprof-analyze: options and wiring. Opens the memory (a core or raw images),
 * scans it for heapprof headers, symbolizes the stacks and writes the report.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>		/* malloc_trim */
#endif
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "ages.h"
#include "alloc.h"
#include "graph.h"
#include "image.h"
#include "leaks.h"
#include "lifetimes.h"
#include "memory.h"
#include "pinned.h"
#include "report.h"
#include "scan.h"
#include "sym.h"
#include "spool.h"
#include "timeline.h"
#include "util.h"
#include "views.h"

#define MAX_LIST 256

struct opts {
	const struct out_format *format;
	const char *output;
	struct report_opts report;
	struct join_opts join;
	const char *debug_dirs[MAX_LIST + 1];
	size_t ndebug_dirs;
	const char *sysroot;
	const char *raw_spec[MAX_LIST];	/* as given, for the report */
	struct sym_module raw[MAX_LIST];	/* file and address of each */
	size_t nraw;
	struct sym_module modules[MAX_LIST];
	size_t nmodules;
	bool have_load_base;
	uint64_t load_base;
	unsigned jobs;
	const char *program;
	const char *core;
	const char *base;		/* --base=OLD */
	const char *base_program;	/* --base-program=FILE: OLD's executable */
	struct view_opts view;
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

enum { OPT_TOP = 256, OPT_MINPCT, OPT_DEBUGDIR, OPT_SYSROOT, OPT_RAW, OPT_LOADBASE, OPT_MODULE,
       OPT_METRIC, OPT_BYTHREAD, OPT_REGION, OPT_EVENTS, OPT_SHORT, OPT_BASE, OPT_FOCUS,
       OPT_IGNORE, OPT_HIDE, OPT_MAXFRAMES, OPT_BY, OPT_LEAKS, OPT_FAILLEAK, OPT_SUPP,
       OPT_AGE, OPT_OLDER, OPT_BASEPROG, OPT_MEMORY, OPT_MAXRATIO, OPT_WHY, OPT_PEAK,
       OPT_PEAKDIFF, OPT_TIMELINE, OPT_LIFETIMES, OPT_PYTHON, OPT_MAXSIZE };

/*
 * The options, once: --help is printed from this table and getopt_long's is built
 * from it, and test/t0004-options.sh checks that each .name is in the man page and
 * the README. key is the short option's letter, or an OPT_ value; help lines are
 * separated by '\n'.
 */
static const struct opt_def {
	const char *name;
	int key;
	int has_arg;		/* no_argument, required_argument or optional_argument */
	const char *arg;	/* what --help shows after "=" */
	const char *help;
} opt_defs[] = {
	{ .name = "format", 'f', required_argument, "FMT",
	  "text (default), collapsed (flamegraph.pl, speedscope),\n"
	  "pprof (gzip profile.proto: pprof, Pyroscope, Parca),\n"
	  "svg (an interactive flame graph for a browser), json\n"
	  "(the whole report; schema in share/heapprof) or html\n"
	  "(one self-contained page: flame graph, search, tables)" },
	{ .name = "output", 'o', required_argument, "FILE",
	  "write the report to FILE instead of standard output" },
	{ .name = "short-names", OPT_SHORT, no_argument, NULL,
	  "C++ names without template arguments, parameter lists\nand return types" },
	{ .name = "python", OPT_PYTHON, required_argument, "MODE",
	  "Python frames (CPython 3.11-3.13, recorded by heapprof.so):\n"
	  "merged (default: each _PyEval_EvalFrameDefault frame\n"
	  "replaced by the Python functions it ran, file:line),\n"
	  "native (the native frames alone) or python (the Python\n"
	  "frames and the native frame that allocated)" },
	{ .name = "age", OPT_AGE, no_argument, NULL,
	  "live bytes by age; a block's age counts from the newest\n"
	  "live block's allocation (a core has no time of its own)" },
	{ .name = "lifetimes", OPT_LIFETIMES, no_argument, NULL,
	  "how long each stack's blocks live: allocation to free\n"
	  "of the blocks the event rings hold (HEAPPROF_EVENTS=N),\n"
	  "temporary allocations, live blocks' ages" },
	{ .name = "older-than", OPT_OLDER, required_argument, "D",
	  "only blocks allocated D (90s, 5m, 2h, 1d) before the newest" },
	{ .name = "top", OPT_TOP, required_argument, "N",
	  "show the N largest stacks (text default 20, others all;\n0 = all)" },
	{ .name = "metric", OPT_METRIC, required_argument, "NAME",
	  "what stacks are sorted by and collapsed output counts:\n"
	  "inuse_space (default: live bytes), inuse_objects (live\n"
	  "blocks), alloc_space (bytes allocated since the start),\n"
	  "alloc_objects (allocation calls), alloc_time (ns of wall\n"
	  "time before the calls; needs HEAPPROF_TIME=1),\n"
	  "retained_space (bytes of the blocks the stack's blocks\n"
	  "dominate in the heap graph, themselves included)" },
	{ .name = "min-percent", OPT_MINPCT, required_argument, "P",
	  "leave out stacks holding less than P% of the metric" },
	{ .name = "by-thread", OPT_BYTHREAD, no_argument, NULL,
	  "split every figure per thread; collapsed stacks start\n"
	  "with a [thread TID NAME] frame" },
	{ .name = "region", OPT_REGION, required_argument, "NAME",
	  "only blocks and counts of sites in region NAME\n(heapprof_region_begin)" },
	{ .name = "events", OPT_EVENTS, no_argument, NULL,
	  "each thread's last calls (HEAPPROF_EVENTS=N), oldest\nfirst, instead of the stacks" },
	{ .name = "stacks", 'v', no_argument, NULL, "with --events: each call's stack too" },
	{ .name = "base", OPT_BASE, required_argument, "OLD",
	  "report NEW - OLD: CORE minus the core OLD of the same\n"
	  "program (another moment or another run); stacks match\n"
	  "by module file and offset, or by function name where a\n"
	  "module was rebuilt; growth first, shrinkage negative" },
	{ .name = "peak", OPT_PEAK, no_argument, NULL,
	  "live memory per stack at the peak (the dump's peak table)\n"
	  "instead of now; the summary gives both" },
	{ .name = "peak-diff", OPT_PEAKDIFF, no_argument, NULL,
	  "the peak minus now, of one dump: what grew to the peak\n"
	  "and went away since (as --base does for two)" },
	{ .name = "timeline", OPT_TIMELINE, no_argument, NULL,
	  "text: chart and table of live memory over the process's\n"
	  "life (JSON holds the timeline always)" },
	{ .name = "base-program", OPT_BASEPROG, required_argument, "FILE",
	  "OLD's executable, when PROGRAM was rebuilt since OLD" },
	{ .name = "focus", OPT_FOCUS, required_argument, "REGEX",
	  "keep only stacks with a frame whose name matches\n"
	  "(REGEX: POSIX extended, matched against frame names)" },
	{ .name = "ignore", OPT_IGNORE, required_argument, "REGEX",
	  "leave out stacks with a frame whose name matches" },
	{ .name = "hide", OPT_HIDE, required_argument, "REGEX",
	  "remove the frames whose name matches (e.g. '^operator new')" },
	{ .name = "max-frames", OPT_MAXFRAMES, required_argument, "N",
	  "keep the N innermost frames of each stack" },
	{ .name = "by", OPT_BY, required_argument, "WHAT",
	  "bottom-up table of self and total bytes per function,\n"
	  "file or module (pprof's -top; text only; --top=N rows)" },
	{ .name = "debug-dir", OPT_DEBUGDIR, required_argument, "DIR",
	  "look for separate debug info in DIR too (by build-id,\n"
	  "DIR/.build-id/xx/rest.debug); repeatable" },
	{ .name = "sysroot", OPT_SYSROOT, required_argument, "DIR",
	  "find the target's shared libraries under DIR" },
	{ .name = "raw", OPT_RAW, required_argument, "IMAGE@ADDR",
	  "raw mode: IMAGE holds memory as it was at ADDR; repeatable" },
	{ .name = "load-base", OPT_LOADBASE, required_argument, "ADDR",
	  "raw mode: where a PIE PROGRAM was loaded" },
	{ .name = "module", OPT_MODULE, required_argument, "FILE@ADDR",
	  "raw mode: a shared object loaded at ADDR; repeatable" },
	{ .name = "leaks", OPT_LEAKS, optional_argument, "CLASSES",
	  "classify blocks by reachability, as memcheck does, and\n"
	  "show only CLASSES (comma-separated: definite, indirect,\n"
	  "possible, reachable, all; default definite,indirect)" },
	{ .name = "memory", OPT_MEMORY, no_argument, NULL,
	  "where the memory goes: mappings, the allocator's arenas\n"
	  "(glibc: mallinfo2's figures), free and in-use chunks,\n"
	  "and which stacks' blocks pin free memory" },
	{ .name = "why", OPT_WHY, required_argument, "REGEX|0xADDR",
	  "why blocks are alive: for the blocks of stacks with a\n"
	  "frame matching REGEX, or the block holding ADDR, the\n"
	  "shortest path of pointers from a named root (largest\n"
	  "blocks first, --top of them; text only)" },
	{ .name = "fail-on-leak", OPT_FAILLEAK, no_argument, NULL,
	  "exit with status 3 when definitely lost bytes remain\n(implies --leaks)" },
	{ .name = "suppressions", OPT_SUPP, required_argument, "FILE",
	  "leave out leaks whose stack matches a LeakSanitizer\n"
	  "'leak:PATTERN' line of FILE (implies --leaks)" },
	{ .name = "max-ratio", OPT_MAXRATIO, required_argument, "N",
	  "a compressed CORE may inflate to N times its size in data\n"
	  "(zero pages aside) past its first 64 MiB (default 1000; 0: no\n"
	  "limit): a decompression bomb stops there" },
	{ .name = "max-size", OPT_MAXSIZE, required_argument, "N",
	  "refuse a CORE (or OLD) of more than N bytes, or whose\n"
	  "headers promise more once inflated, before reading it\n"
	  "(heapprof report passes what the process can hold)" },
	{ .name = "jobs", 'j', required_argument, "N", "scan with N threads (default: online CPUs)" },
	{ .name = "quiet", 'q', no_argument, NULL, "no warnings" },
	{ .name = "help", 'h', no_argument, NULL, "this text" },
	{ .name = "version", 'V', no_argument, NULL, "version and block format version" },
};

#define N_OPTS (sizeof(opt_defs) / sizeof(opt_defs[0]))
#define HELP_COLUMN 25

/* "  -f, --format=FMT", "      --leaks[=CLASSES]", then the help from HELP_COLUMN. */
static void usage_option(const struct opt_def *d, FILE *f)
{
	const char *h = d->help;
	int n;

	if (d->key < 256)
		n = fprintf(f, "  -%c, --%s", d->key, d->name);
	else
		n = fprintf(f, "      --%s", d->name);
	if (d->has_arg == required_argument)
		n += fprintf(f, "=%s", d->arg);
	else if (d->has_arg == optional_argument)
		n += fprintf(f, "[=%s]", d->arg);
	while (*h) {
		size_t len = strcspn(h, "\n");

		fprintf(f, "%*s%.*s\n", n < HELP_COLUMN - 1 ? HELP_COLUMN - n : 2, "", (int)len, h);
		h += len + (h[len] == '\n');
		n = 0;
	}
}

static void usage(FILE *f)
{
	fputs("usage: heapprof-analyze [OPTIONS] PROGRAM CORE\n"
	      "       heapprof-analyze [OPTIONS] --raw IMAGE@ADDR [--raw ...] PROGRAM\n"
	      "Report which call stacks hold the live heap memory of a process that ran with\n"
	      "LD_PRELOAD=heapprof.so, from its core or from raw memory images.\n"
	      "CORE is a file, a FIFO or '-' (standard input), plain or compressed with gzip,\n"
	      "zstd or xz (told by content); what is not a plain file is copied to $TMPDIR\n"
	      "first, e.g.  coredumpctl dump PID | heapprof-analyze PROGRAM -\n"
	      "\n", f);
	for (size_t i = 0; i < N_OPTS; i++)
		usage_option(&opt_defs[i], f);
	fputs("\n"
	      "Exit status: 0 a report was written (what was skipped is counted in it and on\n"
	      "stderr); 2 no report could be made (unreadable or unusable input, no heapprof\n"
	      "blocks); 3 --fail-on-leak found definitely lost bytes; 64 bad usage.\n",
	      f);
}

static void __attribute__((noreturn)) bad_usage(const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	say("%s", msg);
	fprintf(stderr, "Try 'heapprof-analyze --help' for more information.\n");
	exit(EXIT_USAGE);
}

/* FILE@ADDR; the address is the part after the last '@'. */
static void split_at(const char *spec, const char *opt, char **file, uint64_t *addr)
{
	const char *at = strrchr(spec, '@');
	unsigned long long v;

	if (!at || at == spec || !parse_u64(at + 1, &v))
		bad_usage("%s needs FILE@ADDR (ADDR in hex with 0x, or decimal)", opt);
	*file = strndup(spec, (size_t)(at - spec));
	if (!*file)
		die(EXIT_NO_REPORT, "out of memory");
	*addr = v;
}

static unsigned long long number(const char *s, const char *opt)
{
	unsigned long long v;

	if (!parse_u64(s, &v))
		bad_usage("%s needs a number", opt);
	return v;
}

static const struct out_format *const all_formats[] = { &out_text, &out_collapsed, &out_pprof,
							 &out_svg, &out_json, &out_html };
#define N_FORMATS (sizeof(all_formats) / sizeof(all_formats[0]))

/* "text, json or html": the formats that can show what need says. */
static const char *formats_with(unsigned need)
{
	static char buf[128];
	size_t n = 0, k = 0;

	for (size_t i = 0; i < N_FORMATS; i++)
		n += (all_formats[i]->can & need) == need;
	buf[0] = 0;
	for (size_t i = 0; i < N_FORMATS; i++)
		if ((all_formats[i]->can & need) == need) {
			k++;
			strcat(buf, k == 1 ? "" : k == n ? " or " : ", ");
			strcat(buf, all_formats[i]->name);
		}
	return buf;
}

static const struct out_format *find_format(const char *name)
{
	for (size_t i = 0; i < N_FORMATS; i++)
		if (!strcmp(all_formats[i]->name, name))
			return all_formats[i];
	bad_usage("unknown format '%s' (text, collapsed, pprof, svg, json, html)", name);
}

static void parse_option(struct opts *o, int c, bool *top_set)
{
	char *end;
	int m;

	switch (c) {
	case OPT_METRIC:
		if ((m = report_metric_parse(optarg)) < 0)
			bad_usage("unknown metric '%s' (inuse_space, inuse_objects, alloc_space, "
				  "alloc_objects, alloc_time, retained_space)", optarg);
		o->report.metric = (enum report_metric)m;
		break;
	case OPT_BYTHREAD: o->join.by_thread = o->report.by_thread = true; break;
	case OPT_REGION:
		if (!*optarg)
			bad_usage("%s needs a region name", "--region");
		o->join.region = o->report.region = optarg;
		break;
	case OPT_EVENTS: o->report.events = true; break;
	case 'v': o->report.event_stacks = true; break;
	case 'f': o->format = find_format(optarg); break;
	case 'o': o->output = optarg; break;
	case OPT_TOP: o->report.top = (size_t)number(optarg, "--top"); *top_set = true; break;
	case OPT_MINPCT:
		o->report.min_percent = strtod(optarg, &end);
		if (end == optarg || *end || o->report.min_percent < 0 || o->report.min_percent > 100)
			bad_usage("--min-percent needs a number from 0 to 100, not '%s'", optarg);
		break;
	case OPT_DEBUGDIR:
		if (o->ndebug_dirs == MAX_LIST)
			bad_usage("too many %s options", "--debug-dir");
		o->debug_dirs[o->ndebug_dirs++] = optarg;
		break;
	case OPT_SYSROOT: o->sysroot = optarg; break;
	case OPT_RAW:
		if (o->nraw == MAX_LIST)
			bad_usage("too many %s options", "--raw");
		split_at(optarg, "--raw", (char **)&o->raw[o->nraw].path, &o->raw[o->nraw].base);
		o->raw_spec[o->nraw++] = optarg;
		break;
	case OPT_LOADBASE: o->load_base = number(optarg, "--load-base"); o->have_load_base = true; break;
	case OPT_MODULE:
		if (o->nmodules == MAX_LIST)
			bad_usage("too many %s options", "--module");
		split_at(optarg, "--module", (char **)&o->modules[o->nmodules].path,
			 &o->modules[o->nmodules].base);
		o->nmodules++;
		break;
	case OPT_LEAKS:
		if (!optarg)
			o->leak_mask = LEAK_MASK_LOST;
		else if (!leaks_parse_classes(optarg, &o->leak_mask))
			bad_usage("--leaks takes definite, indirect, possible, reachable or all, "
				  "comma-separated, not '%s'", optarg);
		break;
	case OPT_FAILLEAK: o->fail_on_leak = true; break;
	case OPT_MEMORY: o->memory = true; break;
	case OPT_WHY: o->why = optarg; break;
	case OPT_PEAK: o->peak = true; break;
	case OPT_PEAKDIFF: o->peak = o->peak_diff = true; break;
	case OPT_TIMELINE: o->timeline = true; break;
	case OPT_SUPP: o->suppressions = optarg; break;
	case OPT_SHORT: o->report.short_names = true; break;
	case OPT_PYTHON:
		if (!strcmp(optarg, "merged"))
			o->python = SYM_PY_MERGED;
		else if (!strcmp(optarg, "native"))
			o->python = SYM_PY_NATIVE;
		else if (!strcmp(optarg, "python"))
			o->python = SYM_PY_PYTHON;
		else
			bad_usage("--python takes merged, native or python, not '%s'", optarg);
		break;
	case OPT_AGE: o->age = true; break;
	case OPT_LIFETIMES: o->lifetimes = true; break;
	case OPT_OLDER:
		if ((o->older_than_ms = ages_parse_duration(optarg)) < 0)
			bad_usage("--older-than needs a duration such as 90s, 5m, 2h or 1d, not '%s'",
				  optarg);
		break;
	case OPT_BASE: o->base = optarg; break;
	case OPT_BASEPROG: o->base_program = optarg; break;
	case OPT_MAXRATIO: spool_set_max_ratio(number(optarg, "--max-ratio")); break;
	case OPT_MAXSIZE: image_set_max_size(number(optarg, "--max-size")); break;
	case OPT_FOCUS: o->view.focus = optarg; break;
	case OPT_IGNORE: o->view.ignore = optarg; break;
	case OPT_HIDE: o->view.hide = optarg; break;
	case OPT_MAXFRAMES:
		o->view.max_frames = (unsigned)number(optarg, "--max-frames");
		if (!o->view.max_frames)
			bad_usage("%s", "--max-frames needs a number above 0");
		break;
	case OPT_BY:
		if (!strcmp(optarg, "function"))
			o->view.by = BY_FUNCTION;
		else if (!strcmp(optarg, "file"))
			o->view.by = BY_FILE;
		else if (!strcmp(optarg, "module"))
			o->view.by = BY_MODULE;
		else
			bad_usage("--by takes function, file or module, not '%s'", optarg);
		break;
	case 'j':
		/* 0 once meant "the online CPUs", which leaving -j out says */
		o->jobs = (unsigned)number(optarg, "--jobs");
		if (!o->jobs)
			bad_usage("%s", "--jobs needs a number above 0");
		break;
	case 'q': util_quiet = true; break;
	case 'h': usage(stdout); exit(0);
	case 'V':
		printf("heapprof-analyze %s (reads block format versions %d and %d)\n", HP_VERSION,
		       HP_FORMAT_VERSION, HP2_FORMAT_VERSION);
		exit(0);
	default: bad_usage("%s", "unknown option");
	}
}

/* getopt_long's tables, from opt_defs */
static void getopt_tables(struct option *longs, char *shorts)
{
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt_def *d = &opt_defs[i];

		longs[i] = (struct option){ d->name, d->has_arg, NULL, d->key };
		if (d->key >= 256)
			continue;
		*shorts++ = (char)d->key;
		if (d->has_arg != no_argument)
			*shorts++ = ':';
		if (d->has_arg == optional_argument)
			*shorts++ = ':';
	}
	longs[N_OPTS] = (struct option){ NULL, 0, NULL, 0 };
	*shorts = '\0';
}

/* An option whose output the format cannot show is refused, never ignored. */
static void check_format(const struct opts *o)
{
	static const struct {
		unsigned need;
		const char *option, *why;
	} needs[] = {
		{ OUT_SIGNED, "--base", "negative figures" },
		{ OUT_BY, "--by", "a bottom-up table" },
		{ OUT_AGES, "--age", "an age summary" },
		{ OUT_SUMMARY, "--memory", "a memory summary" },
		{ OUT_SIGNED, "--peak-diff", "negative figures" },
		{ OUT_LIFETIMES, "--lifetimes", "lifetimes per stack" },
	};
	const bool given[] = { o->base != NULL, o->view.by != BY_NONE, o->age, o->memory,
			       o->peak_diff, o->lifetimes };
	char msg[300];

	if (o->report.events)
		return;
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		if (!given[i] || o->format->can & needs[i].need)
			continue;
		snprintf(msg, sizeof(msg), "%s gives %s, which -f %s cannot show: use -f %s",
			 needs[i].option, needs[i].why, o->format->name,
			 formats_with(needs[i].need));
		bad_usage("%s", msg);
	}
}

/* The peak table holds live bytes and blocks per stack and region, nothing else. */
static void check_peak(const struct opts *o)
{
	enum report_metric m = o->report.metric;

	if (o->timeline && o->format != &out_text && o->format != &out_json)
		bad_usage("--timeline draws a chart in -f text (-f json holds the timeline "
			  "always), not in -f %s", o->format->name);
	if (!o->peak)
		return;
	if (o->base)
		bad_usage("%s", "--peak with --base: for the peak against now use --peak-diff");
	if (o->leak_mask || o->age || o->older_than_ms >= 0 || o->memory || o->why ||
	    o->report.events || o->join.by_thread)
		bad_usage("%s", "--peak reports live bytes and blocks per stack: no --leaks, "
			  "--age, --older-than, --memory, --why, --events or --by-thread with it");
	if (m != METRIC_INUSE_SPACE && m != METRIC_INUSE_OBJECTS)
		bad_usage("%s", "--peak takes --metric=inuse_space or inuse_objects");
}

static void parse(struct opts *o, int argc, char **argv)
{
	struct option longs[N_OPTS + 1];
	char shorts[3 * N_OPTS + 1];
	bool top_set = false;
	int c;

	memset(o, 0, sizeof(*o));
	o->older_than_ms = -1;
	o->format = &out_text;
	getopt_tables(longs, shorts);
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1)
		parse_option(o, c, &top_set);
	if (o->older_than_ms >= 0 && o->leak_mask)
		bad_usage("%s", "--older-than and --leaks cannot be combined yet");
	if (o->lifetimes && (o->leak_mask || o->base || o->report.events || o->why))
		bad_usage("%s", "--lifetimes goes with one report of stacks: not with --leaks, "
			  "--base, --events or --why");
	/* a path of pointers lives in one heap: NEW - OLD has none */
	if (o->why && (o->base || o->report.events))
		bad_usage("%s", "--why cannot be combined with --base or --events: it follows the "
			  "pointers of one heap");
	if (!o->leak_mask && (o->fail_on_leak || o->suppressions))
		o->leak_mask = LEAK_MASK_LOST;
	if (o->report.events)
		o->format = &out_events;
	else if (o->report.event_stacks)
		bad_usage("%s", "--stacks (-v) goes with --events");
	if (!top_set && o->format == &out_text)
		o->report.top = 20;
	o->report.sizes = o->format->can & OUT_SIZES;
	o->report.all_stacks = o->format->can & OUT_ALL;
	o->view.top = o->report.top;
	o->by_top = top_set ? o->report.top : 0;	/* text's default 20 is for stacks */
	o->view.min_percent = o->report.min_percent;
	check_format(o);
	check_peak(o);
	if ((o->base || views_active(&o->view)) && o->report.events)
		bad_usage("%s", "--events lists calls, not stacks: no --base or views with it");
	if (o->base_program && !o->base)
		bad_usage("%s", "--base-program names the executable of --base's core: give --base");
	if (o->nraw) {
		if (argc - optind != 1)
			bad_usage("%s", "raw mode takes PROGRAM and no CORE");
	} else {
		if (argc - optind != 2)
			bad_usage("%s", argc - optind < 2 ? "PROGRAM and CORE are required"
							  : "too many arguments");
		if (o->have_load_base || o->nmodules)
			bad_usage("%s", "--load-base and --module are for raw mode (--raw)");
		o->core = argv[optind + 1];
	}
	o->program = argv[optind];
	if (!o->jobs) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		o->jobs = n > 0 ? (unsigned)(n > 64 ? 64 : n) : 1;
	}
}

static const char *machine_name(uint16_t m)
{
	static char buf[32];

	switch (m) {
	case EM_386: return "i386";
	case EM_MIPS: return "mips";
	case EM_PPC: return "powerpc";
	case EM_PPC64: return "ppc64";
	case EM_S390: return "s390";
	case EM_ARM: return "arm";
	case EM_X86_64: return "x86_64";
	case EM_AARCH64: return "aarch64";
	case EM_RISCV: return "riscv";
	}
	snprintf(buf, sizeof(buf), "machine %u", m);
	return buf;
}

/* Open the memory the user named; exits with a one-line reason when it cannot. */
static void open_memory(const struct opts *o, struct image *img, char **source)
{
	char err[1024];
	unsigned wsize;
	bool be, pie;
	uint16_t machine;

	/* inflating a gzip core may warn; a run that fails still says one line */
	warn_hold();
	if (image_program_info(o->program, &wsize, &be, &machine, &pie, err, sizeof(err)) < 0)
		die(EXIT_NO_REPORT, "%s", err);
	if (o->nraw) {
		struct image_raw_file files[MAX_LIST];
		struct image_spec spec = { .raw = files, .nraw = o->nraw, .wsize = wsize,
					   .big_endian = be, .machine = machine };
		size_t len = 1;

		for (size_t i = 0; i < o->nraw; i++) {
			files[i] = (struct image_raw_file){ o->raw[i].path, o->raw[i].base };
			len += strlen(o->raw_spec[i]) + 2;
		}
		if (image_open(img, &spec, err, sizeof(err)) < 0)
			die(EXIT_NO_REPORT, "%s", err);
		*source = xcalloc(1, len);
		for (size_t i = 0; i < o->nraw; i++)
			strcat(strcat(*source, i ? ", " : ""), o->raw_spec[i]);
		if (pie && !o->have_load_base)
			warn("'%s' is position-independent: without --load-base its frames are "
			     "not symbolized", o->program);
		return;
	}
	if (image_open(img, &(struct image_spec){ .core = o->core }, err, sizeof(err)) < 0)
		die(EXIT_NO_REPORT, "%s", err);
	*source = xstrdup(o->core);
	if (img->machine != machine || img->wsize != wsize)
		die(EXIT_NO_REPORT, "'%s' is a %s core but '%s' is a %s program (wrong PROGRAM?)",
		    o->core, machine_name(img->machine), o->program, machine_name(machine));
}

/* Which segment was left out for which, and whether a block could hide in it. */
static void warn_overlap(const struct seg_overlap *o)
{
	char left[4200], kept[4200];	/* a path of up to PATH_MAX, and words */

	if (o->file)
		snprintf(left, sizeof(left), "raw image '%s'", o->file);
	else
		snprintf(left, sizeof(left), "core segment at file offset %#llx",
			 (unsigned long long)o->offset);
	if (o->kept_file)
		snprintf(kept, sizeof(kept), "'%s'", o->kept_file);
	else
		snprintf(kept, sizeof(kept), "the one at file offset %#llx",
			 (unsigned long long)o->kept_offset);
	if (o->hidden)
		warn("%s [%#llx, %#llx) overlaps %s [%#llx, %#llx) and was left out: %llu of its "
		     "bytes differ from or lie outside it, and blocks there are not counted",
		     left, (unsigned long long)o->vaddr, (unsigned long long)o->end, kept,
		     (unsigned long long)o->kept_vaddr, (unsigned long long)o->kept_end,
		     (unsigned long long)o->hidden);
	else
		warn("%s [%#llx, %#llx) overlaps %s [%#llx, %#llx) and was left out: it holds the "
		     "same bytes, so no block is hidden", left, (unsigned long long)o->vaddr,
		     (unsigned long long)o->end, kept, (unsigned long long)o->kept_vaddr,
		     (unsigned long long)o->kept_end);
}

/* Said once a report is certain: a failing run gets one line, not these first. */
static void warn_missing(const struct image *img, const char *source)
{
	if (img->truncated_segs)
		warn("'%s' is truncated: %u segments cut short; blocks there are not counted",
		     source, img->truncated_segs);
	if (img->missing_bytes)
		warn("%llu bytes of memory are not in '%s' (not dumped or cut off); blocks there "
		     "are not counted", (unsigned long long)img->missing_bytes, source);
	if (img->overlap_segs)
		warn("%u %s overlap others and were left out", img->overlap_segs, img->segs_name);
	for (unsigned i = 0; i < img->overlap_segs && i < IMAGE_MAX_OVERLAPS; i++)
		warn_overlap(&img->overlaps[i]);
	if (img->overlap_segs > IMAGE_MAX_OVERLAPS)
		warn("... and %u more overlapping %ss", img->overlap_segs - IMAGE_MAX_OVERLAPS,
		     img->seg_name);
}

static void no_blocks(const struct opts *o, const struct image *img,
		      const struct scan_result *s, const char *source)
{
	uint64_t rejected = s->join.damaged;
	enum decode_reject most = REJ_CHECK;

	for (int i = 0; i < REJ_NREASONS; i++) {
		rejected += s->rejected[i];
		if (s->rejected[i] > s->rejected[most])
			most = (enum decode_reject)i;
	}
	if (s->other_version && s->rejected[REJ_VERSION] == rejected)
		die(EXIT_NO_REPORT, "'%s' holds heapprof blocks of format version %u; this "
		    "analyzer reads versions %d and %d", source, s->other_version,
		    HP_FORMAT_VERSION, HP2_FORMAT_VERSION);
	if (rejected)
		die(EXIT_NO_REPORT, "no valid heapprof block in '%s' (%llu candidates rejected, "
		    "most for: %s)", source, (unsigned long long)rejected,
		    decode_reason(most));
	/* the process record says heapprof.so ran: nothing was live, or nothing sampled */
	if (s->join.have_proc && s->join.proc.sample_period)
		die(EXIT_NO_REPORT, "heapprof.so was loaded in '%s' (pid %u) but no sampled block "
		    "was live (one block per about %llu bytes has a header)", source,
		    s->join.proc.pid, (unsigned long long)s->join.proc.sample_period);
	/* every call heapprof's malloc tags leaves a site record, freed or not */
	if (s->join.have_proc && !s->join.site_recs)
		die(EXIT_NO_REPORT, "heapprof.so was loaded in '%s' (pid %u) but recorded no "
		    "allocation: its malloc was never called (another allocator before it in "
		    "LD_PRELOAD?) or tagging was off", source, s->join.proc.pid);
	if (s->join.have_proc)
		die(EXIT_NO_REPORT, "heapprof.so was loaded in '%s' (pid %u) but no block was "
		    "live: everything allocated had been freed", source, s->join.proc.pid);
	if (img->truncated_segs)
		die(EXIT_NO_REPORT, "no heapprof blocks in '%s', which is truncated (%u segments "
		    "cut short)", source, img->truncated_segs);
	die(EXIT_NO_REPORT, "no heapprof blocks in '%s' (was %s run with "
	    "LD_PRELOAD=heapprof.so?)", source, o->program);
}

/* The region's known names, for the message when --region names none of them. */
static void __attribute__((noreturn)) unknown_region(const struct scan_result *s,
						     const char *name, const char *source)
{
	size_t n, len = 1;
	const struct decoded *rec = collect_records(&s->found, DEC_REGION, &n);
	char *list;

	if (!n)
		die(EXIT_NO_REPORT, "no region '%s' in '%s': it records no regions", name, source);
	for (size_t i = 0; i < n; i++)
		len += strlen(rec[i].region.name) + 2;
	list = xcalloc(1, len);
	for (size_t i = 0; i < n; i++)
		if (!i || strcmp(rec[i].region.name, rec[i - 1].region.name))
			strcat(strcat(list, i ? ", " : ""), rec[i].region.name);
	die(EXIT_NO_REPORT, "no region '%s' in '%s' (known regions: %s)", name, source, list);
}

/* Whether the dump holds what the options ask for; exits with one line when not. */
static void check_data(const struct opts *o, const struct image *img,
		       const struct scan_result *s, const char *source)
{
	enum report_metric m = o->report.metric;

	if (s->join.region_unknown)
		unknown_region(s, o->join.region, source);
	if (o->report.events) {
		if (!s->join.rings)
			die(EXIT_NO_REPORT, "no event rings in '%s' (run with HEAPPROF_EVENTS=N)",
			    source);
		return;
	}
	if (m == METRIC_ALLOC_TIME && !s->join.have_time)
		die(EXIT_NO_REPORT, "alloc_time was not recorded (run with HEAPPROF_TIME=1)");
	if (m == METRIC_INUSE_SPACE || m == METRIC_INUSE_OBJECTS || !s->join.counted_sites) {
		if (!s->blocks)
			no_blocks(o, img, s, source);
	}
	if (m != METRIC_INUSE_SPACE && m != METRIC_INUSE_OBJECTS && m != METRIC_RETAINED_SPACE &&
	    !s->join.counted_sites)
		die(EXIT_NO_REPORT, "'%s' holds no allocation counts (blocks of format version 1, "
		    "or a heapprof.so before counters)", source);
}

static void warn_rejected(const struct scan_result *s)
{
	const struct join_info *j = &s->join;

	for (int i = 0; i < REJ_NREASONS; i++)
		if (s->rejected[i])
			warn("skipped %llu candidates: %s", (unsigned long long)s->rejected[i],
			     decode_reason((enum decode_reject)i));
	/* v2 tags that fail their check are mostly words that share 16 bits with the
	 * magic; only those naming a site that exists are worth a word */
	if (j->damaged)
		warn("skipped %llu damaged headers: bad check value on a block of a known site",
		     (unsigned long long)j->damaged);
	if (j->unknown_blocks)
		warn("%llu blocks (%llu bytes) have no readable stack record: shown as "
		     "[unknown stack]", (unsigned long long)j->unknown_blocks,
		     (unsigned long long)j->unknown_bytes);
	if (j->conflicts)
		warn("%llu stack or site ids are claimed by records that differ; their blocks are "
		     "under [unknown stack]", (unsigned long long)j->conflicts);
	if (j->unweighted)
		warn("%llu blocks are marked sampled but no process record gives the sample "
		     "period: counted one for one", (unsigned long long)j->sampled_blocks);
	if (j->procs_differ)
		warn("%u process records differ; using the one at 0x%llx", j->nprocs,
		     (unsigned long long)j->proc.addr);
}

static void write_report(const struct opts *o, const struct report *r)
{
	FILE *f = stdout;

	if (o->output && !(f = fopen(o->output, "w")))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output, strerror(errno));
	if (o->format->write(r, f) < 0 || fflush(f) != 0 || (f != stdout && fclose(f) != 0))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output ? o->output : "stdout",
		    strerror(errno));
}

static void write_by(const struct opts *o, const struct report *r)
{
	FILE *f = stdout;

	if (o->output && !(f = fopen(o->output, "w")))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output, strerror(errno));
	if (views_write_by(r, o->view.by, o->by_top, f) < 0 || fflush(f) != 0 ||
	    (f != stdout && fclose(f) != 0))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output ? o->output : "stdout",
		    strerror(errno));
}

static bool needs_graph(const struct opts *o)
{
	return o->why || o->leak_mask || o->report.metric == METRIC_RETAINED_SPACE;
}

struct session;
static void write_why(const struct opts *o, struct session *s);

struct sym_job {
	struct sym_opts opts;
	struct sym *sym;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t *pcs;		/* the stack records' native frames */
	size_t npcs;
	bool given;		/* pcs are given, or the scan is over without */
};

static void *sym_thread(void *arg)
{
	struct sym_job *job = arg;

	job->sym = sym_open(&job->opts);
	pthread_mutex_lock(&job->lock);
	while (!job->given)
		pthread_cond_wait(&job->cond, &job->lock);
	pthread_mutex_unlock(&job->lock);
	sym_lookup_ahead(job->sym, job->pcs, job->npcs);	/* as sym_stack will */
	free(job->pcs);
	job->pcs = NULL;
	return NULL;
}

static void give_pcs(struct sym_job *job, uint64_t *pcs, size_t n)
{
	pthread_mutex_lock(&job->lock);
	if (!job->given) {
		job->pcs = pcs;
		job->npcs = n;
		job->given = true;
		pcs = NULL;
	}
	pthread_cond_signal(&job->cond);
	pthread_mutex_unlock(&job->lock);
	free(pcs);
}

/* The scan's found hook: every stack record's native frames to the symbol thread, to
 * name while the scan joins the blocks to their stacks. */
static void found_stacks(const struct collect *c, void *arg)
{
	size_t n = 0, k = 0;
	uint64_t *pcs;

	for (size_t i = 0; i < c->nrecs; i++)
		if (c->recs[i].kind == DEC_STACK)
			n += c->recs[i].stack.nframes;
	pcs = xmalloc((n ? n : 1) * sizeof(*pcs));
	for (size_t i = 0; i < c->nrecs; i++) {
		const struct decoded_stack *s = &c->recs[i].stack;

		if (c->recs[i].kind != DEC_STACK)
			continue;
		for (unsigned j = 0; j < s->nframes && !hp2_is_pyframe_word(s->pcs[j]); j++)
			if (s->pcs[j])
				pcs[k++] = s->pcs[j];
	}
	give_pcs(arg, pcs, k);
}

/*
 * Reading the modules and their debug info takes tens of milliseconds whatever the
 * core's size; it runs beside the scan, which never touches libelf, and names the
 * stacks' frames beside the join. Its warnings wait until a report is certain.
 */
static struct sym *scan_and_open_symbols(const struct opts *o, const struct image *img,
					 struct scan_result *scan)
{
	struct sym_job job = { .opts = {
		.program = o->program, .img = img, .sysroot = o->sysroot,
		.debug_dirs = o->debug_dirs, .ndebug_dirs = o->ndebug_dirs,
		.have_load_base = o->have_load_base, .load_base = o->load_base,
		.modules = o->modules, .nmodules = o->nmodules, .quiet = util_quiet,
		.python = o->python } };
	struct join_opts join = o->join;
	pthread_t t;
	bool threaded;

	pthread_mutex_init(&job.lock, NULL);
	pthread_cond_init(&job.cond, NULL);
	warn_hold();
	threaded = pthread_create(&t, NULL, sym_thread, &job) == 0;
	if (threaded) {
		join.found = found_stacks;
		join.found_arg = &job;
	}
	(needs_graph(o) ? scan_image_graph_with :
	 o->memory || o->age || o->lifetimes || o->older_than_ms >= 0 ? scan_image_blocks_with :
	 scan_image_with)(img, o->jobs, &join, scan);
	give_pcs(&job, NULL, 0);	/* over: none, if the scan gave none */
	if (threaded)
		pthread_join(t, NULL);
	else
		sym_thread(&job);
	pthread_cond_destroy(&job.cond);
	pthread_mutex_destroy(&job.lock);
	return job.sym;
}

/*
 * Give the free pages inside the heap back: the leak classes' tables (sizes of every
 * block, four times over) leave holes that the dominator tree's arrays, which come
 * next, do not fit, and a heap of a million blocks kept 20 MiB of them resident.
 */
static void release_free_pages(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/* One core (or raw image set) from memory to a symbolized report. */
struct session {
	struct image img;
	struct scan_result scan;
	struct sym *sym;
	char *source;
	struct leak_summary leaks;	/* --leaks */
	struct age_summary ages;	/* --age, --older-than */
	struct lifetimes lifetimes;	/* --lifetimes */
	struct alloc alloc;		/* --leaks, --memory */
	struct memory_summary memory;
	struct pinned pinned;		/* --memory */
	struct graph *graph;		/* --leaks, --metric=retained_space, --why */
	struct graph_keying keying;	/* how retained bytes and --why pick blocks */
	struct timeline_data tl;	/* the timeline and, with --peak, the peak */
	struct report r;
	bool python;			/* some stack holds Python frames */
};

/*
 * Does a stack hold Python frames? Then stacks of different words can show the same
 * frames (--python=native or python leave some out; two records may name one line),
 * so the report is built whole and its equal stacks merged, as a view's are.
 */
static bool has_python(const struct scan_result *scan)
{
	size_t n;
	struct stack **all = stacks_list(&scan->stacks, &n);
	bool found = false;

	for (size_t i = 0; i < n && !found; i++)
		for (unsigned k = 0; k < all[i]->nframes && !found; k++)
			found = hp2_is_pyframe_word(all[i]->pcs[k]);
	free(all);
	return found;
}

/* The timeline, and with --peak the peak table in place of the blocks found. */
static void read_timeline(const struct opts *o, struct session *s)
{
	const char *why;

	timeline_read(&s->tl, &s->r, &s->scan, &s->img);
	if (o->timeline && !s->tl.n)
		warn("'%s' holds no timeline (a heapprof.so before timelines, or "
		     "HEAPPROF_TIMELINE=0)", s->source);
	if (o->peak && !timeline_peak_apply(&s->tl, &s->scan, &s->img, &o->join, &why))
		die(EXIT_NO_REPORT, "'%s' %s", s->source, why);
}

static void make_report(const struct opts *o, const struct report_opts *ro, struct session *s)
{
	struct report_opts with;

	memset(s, 0, sizeof(*s));
	open_memory(o, &s->img, &s->source);
	s->sym = scan_and_open_symbols(o, &s->img, &s->scan);
	sym_add_unloaded(s->sym, s->scan.found.mods, s->scan.found.nmods);
	check_data(o, &s->img, &s->scan, s->source);
	warn_release();
	warn_missing(&s->img, s->source);
	warn_rejected(&s->scan);
	s->r.program = sym_program(s->sym) ? sym_program(s->sym) : o->program;
	s->r.source = s->source;
	/* --leaks and --older-than regroup the stacks without their counters */
	report_count(&s->r, &s->scan);
	read_timeline(o, s);
	s->r.regrouped = o->leak_mask || o->older_than_ms >= 0;
	if (o->age || o->older_than_ms >= 0) {
		ages_apply(&s->img, &s->scan, o->older_than_ms, &s->ages);
		s->r.ages = &s->ages;
	}
	if (o->memory || needs_graph(o))
		alloc_open(&s->alloc, &s->img, s->sym, &s->scan.list, o->sysroot);
	if (o->memory) {
		memory_apply(&s->img, s->sym, &s->alloc, &s->memory);
		/* before graph_build and leaks_apply sort the blocks alloc's chunks name */
		pinned_apply(&s->pinned, &s->alloc, &s->img, &s->scan, s->sym, o->report.top);
		s->memory.pinned = &s->pinned;
		s->r.memory = &s->memory;
	}
	if (!o->why)	/* read by --why, after the report */
		alloc_drop_chunks(&s->alloc);
	if (needs_graph(o))	/* once: every consumer below shares it */
		s->graph = graph_build(&s->img, &s->scan, &s->alloc);
	if (!o->why)	/* the roots are marked */
		alloc_drop_nonroot(&s->alloc);
	s->keying = (struct graph_keying){ .by_thread = o->join.by_thread,
					   .region = o->join.region != NULL,
					   .region_id = s->scan.join.region_id };
	if (o->leak_mask) {
		leaks_apply(s->graph, &s->scan, s->sym, &s->alloc, o->supp, o->leak_mask,
			    &s->leaks);
		s->r.leaks = &s->leaks;
		s->keying.flags = leaks_block_flags;
		release_free_pages();
	}
	if (o->report.metric == METRIC_RETAINED_SPACE && !o->why)
		graph_add_retained(s->graph, &s->scan, &s->keying);
	with = *ro;
	if (o->lifetimes) {	/* after --older-than marked the blocks it leaves out */
		lifetimes_apply(&s->img, &s->scan, &s->lifetimes);
		s->r.lifetimes = &s->lifetimes.sum;
		with.lifetimes = &s->lifetimes;
	}
	if ((s->python = has_python(&s->scan))) {
		with.top = 0;	/* main merges and cuts */
		with.min_percent = 0;
	}
	if (!o->why) {	/* the report reads the stacks alone: the graph and the block
			 * list (60 bytes a block and more) go before symbolization's
			 * memory comes */
		graph_free(s->graph);
		s->graph = NULL;
		free(s->scan.list.v);
		s->scan.list = (struct scan_blocks){ 0 };
	}
	report_build(&s->r, &s->scan, &s->img, s->sym, &with);
	timeline_attach(&s->r, &s->tl);
	s->r.show_timeline = o->timeline;
}

static void write_why(const struct opts *o, struct session *s)
{
	FILE *f = stdout;
	char err[300];
	int rc;

	if (o->output && !(f = fopen(o->output, "w")))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output, strerror(errno));
	rc = graph_why(s->graph, &s->scan, s->sym, &s->keying, o->why, o->report.top, f, err,
		       sizeof(err));
	if (rc < 0)
		die(EXIT_USAGE, "%s", err);
	if (rc > 0)
		die(EXIT_NO_REPORT, "no live block matches '%s'", o->why);
	if (fflush(f) != 0 || (f != stdout && fclose(f) != 0))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output ? o->output : "stdout",
		    strerror(errno));
}

static void end_session(struct session *s)
{
	report_free(&s->r);
	timeline_free(&s->tl);
	lifetimes_free(&s->lifetimes);
	graph_free(s->graph);
	pinned_free(&s->pinned);
	alloc_close(&s->alloc);
	sym_close(s->sym);
	scan_result_free(&s->scan);
	image_close(&s->img);
	free(s->source);
}

/* --base: the same program's other core, with NEW's symbol options */
static void make_base(const struct opts *o, const struct report_opts *ro, struct session *s)
{
	struct opts *b = xcalloc(1, sizeof(*b));

	*b = *o;
	b->core = o->peak_diff ? o->core : o->base;
	b->peak = b->peak_diff = false;	/* --peak-diff: the same dump, now */
	if (o->base_program)
		b->program = o->base_program;
	b->nraw = 0;
	b->nmodules = 0;
	b->have_load_base = false;
	make_report(b, ro, s);
	free(b);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct session news, olds;
	struct report d, *r = &news.r;
	struct report_opts ro;

	int status = 0;

	parse(&o, argc, argv);
	if (o.suppressions) {
		char err[1024];

		if (!(o.supp = leaks_read_suppressions(o.suppressions, err, sizeof(err))))
			die(EXIT_NO_REPORT, "%s", err);
	}
	views_compile(&o.view);
	ro = o.report;
	if (o.base || o.peak_diff || views_active(&o.view)) {
		ro.top = 0;	/* the view or the difference cuts, later */
		ro.min_percent = 0;
	}
	make_report(&o, &ro, &news);
	if (o.fail_on_leak && news.leaks.blocks[LEAK_DEFINITE])
		status = EXIT_LEAKS;
	if (o.base || o.peak_diff) {
		make_base(&o, &ro, &olds);
		views_apply(&news.r, &o.view, false);
		views_apply(&olds.r, &o.view, false);
		diff_build(&d, &news.r, &olds.r);
		d.peak = news.r.peak;
		views_cut(&d, o.view.by != BY_NONE ? 0 : o.view.top, 0);
		r = &d;
	} else if (views_active(&o.view) || (news.python && !o.report.events)) {
		views_apply(&news.r, &o.view, true);
	}
	if (o.why) {
		write_why(&o, &news);
	} else if (o.view.by != BY_NONE && o.format == &out_text) {
		write_by(&o, r);
	} else {
		write_report(&o, r);
	}
	if (r->peak && !(o.format->can & OUT_SUMMARY) && !util_quiet) {
		char line[256];

		report_peak_line(r->peak, line, sizeof(line));
		fprintf(stderr, "heapprof-analyze: peak: %s\n", line);
	}
	if (o.base || o.peak_diff) {
		diff_free(&d);
		end_session(&olds);
	}
	end_session(&news);
	views_free(&o.view);
	for (size_t i = 0; i < o.nmodules; i++)
		free((void *)o.modules[i].path);
	for (size_t i = 0; i < o.nraw; i++)
		free((void *)o.raw[i].path);
	leaks_free_suppressions(o.supp);
	return status;
}
