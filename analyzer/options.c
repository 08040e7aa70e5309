/*
 * heapprof-analyze's options (options.h): the table --help, getopt_long and the man
 * page's test are made from, each option's setter, and the rules between options as
 * rows of four small tables. Opens nothing but --suppressions' file.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof_duration.h"
#include "heapprof_format.h"
#include "ages.h"
#include "by.h"
#include "image.h"
#include "leaks.h"
#include "lifetimes.h"
#include "memory.h"
#include "options.h"
#include "spool.h"
#include "types.h"
#include "util.h"
#include "why.h"

/* An option's index in opt_defs; bit OPTION_BIT(i) of options.given says it was given. */
enum {
	OPT_FORMAT, OPT_OUTPUT, OPT_SHORT, OPT_PYTHON, OPT_AGE, OPT_LIFETIMES, OPT_OLDER,
	OPT_TOP, OPT_METRIC, OPT_MINPCT, OPT_BYTHREAD, OPT_REGION, OPT_EVENTS, OPT_STACKS,
	OPT_BASE, OPT_PEAK, OPT_PEAKDIFF, OPT_TIMELINE, OPT_BASEPROG, OPT_FOCUS, OPT_IGNORE,
	OPT_HIDE, OPT_MAXFRAMES, OPT_BY, OPT_DEBUGDIR, OPT_SYSROOT, OPT_RAW, OPT_LOADBASE,
	OPT_MODULE, OPT_LEAKS, OPT_MEMORY, OPT_UNTAGGED, OPT_WHY, OPT_FAILLEAK, OPT_SUPP, OPT_MAXRATIO,
	OPT_MAXSIZE, OPT_SYMBOLS, OPT_LABEL, OPT_JOBS, OPT_QUIET, OPT_HELP, OPT_VERSION, N_OPTS
};
#define OPTION_BIT(i) (1ull << (i))
#define O(name) OPTION_BIT(OPT_##name)
#define GIVEN(o, mask) (((o)->given & (mask)) != 0)

struct opt_def;
typedef void (*opt_setter)(struct options *o, const struct opt_def *d, const char *arg);

static void __attribute__((noreturn)) bad_usage(const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	say("%s", msg);
	fprintf(stderr, "Try 'heapprof-analyze --help' for more information.\n");
	exit(EXIT_USAGE);
}

/* ---- the formats and their defaults -------------------------------------------- */

/* Each format once, with what it makes of the options it is given. */
static const struct format_row {
	const struct out_format *f;
	size_t top;			/* stacks shown without --top (0: all) */
	bool chosen;			/* -f can name it (events comes with --events) */
	const struct out_format *events; /* what lists the calls of --events; NULL: none */
} formats[] = {
	{ &out_text, 20, true, &out_events },
	{ &out_collapsed, 0, true, NULL },
	{ &out_pprof, 0, true, NULL },
	{ &out_svg, 0, true, NULL },
	{ &out_json, 0, true, NULL },
	{ &out_html, 0, true, NULL },
	{ &out_events, 0, false, &out_events },
};
#define N_FORMATS (sizeof(formats) / sizeof(formats[0]))

static const struct format_row *format_row(const struct out_format *f)
{
	size_t i = 0;

	while (i + 1 < N_FORMATS && formats[i].f != f)
		i++;
	return &formats[i];
}

struct format_need;
static bool format_has(const struct out_format *f, const struct format_need *n);

/* "text, json or html": the formats -f can name that have what n needs. */
static const char *formats_with(const struct format_need *n)
{
	static char buf[128];
	size_t all = 0, k = 0;

	for (size_t i = 0; i < N_FORMATS; i++)
		all += formats[i].chosen && format_has(formats[i].f, n);
	buf[0] = 0;
	for (size_t i = 0; i < N_FORMATS; i++)
		if (formats[i].chosen && format_has(formats[i].f, n)) {
			k++;
			strcat(buf, k == 1 ? "" : k == all ? " or " : ", ");
			strcat(buf, formats[i].f->name);
		}
	return buf;
}

/* ---- setters --------------------------------------------------------------------- */

static unsigned long long number(const char *s, const char *opt)
{
	unsigned long long v;

	if (!parse_u64(s, &v))
		bad_usage("%s needs a number", opt);
	return v;
}

/* FILE@ADDR; the address is the part after the last '@'. */
static void split_at(const char *spec, const char *opt, struct sym_module *m)
{
	const char *at = strrchr(spec, '@');
	unsigned long long v;
	char *file;

	if (!at || at == spec || !parse_u64(at + 1, &v))
		bad_usage("%s needs FILE@ADDR (ADDR in hex with 0x, or decimal)", opt);
	file = strndup(spec, (size_t)(at - spec));
	if (!file)
		die(EXIT_NO_REPORT, "out of memory");
	*m = (struct sym_module){ file, v };
}

static void set_flag(struct options *o, const struct opt_def *d, const char *arg);
static void set_string(struct options *o, const struct opt_def *d, const char *arg);
static void set_view_regex(struct options *o, const struct opt_def *d, const char *arg);

static void set_format(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	for (size_t i = 0; i < N_FORMATS; i++)
		if (!strcmp(formats[i].f->name, arg) && formats[i].chosen) {
			o->format = formats[i].f;
			return;
		}
	bad_usage("unknown format '%s' (text, collapsed, pprof, svg, json, html)", arg);
}

static void set_python(struct options *o, const struct opt_def *d, const char *arg)
{
	static const char *const modes[] = { [SYM_PY_MERGED] = "merged",
					     [SYM_PY_NATIVE] = "native", [SYM_PY_PYTHON] = "python" };

	(void)d;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(arg, modes[i])) {
			o->python = (enum sym_python)i;
			return;
		}
	bad_usage("--python takes merged, native or python, not '%s'", arg);
}

static void set_symbols(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	if (!strcmp(arg, "none"))
		o->report.no_symbols = true;
	else if (!strcmp(arg, "full"))
		o->report.no_symbols = false;
	else
		bad_usage("--symbols takes full or none, not '%s'", arg);
}

/* KEY=VALUE, KEY a name a platform's label syntax takes: [A-Za-z_][A-Za-z0-9_]* */
static void set_label(struct options *o, const struct opt_def *d, const char *arg)
{
	size_t k = strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789");

	(void)d;
	if (!k || arg[k] != '=' || (arg[0] >= '0' && arg[0] <= '9'))
		bad_usage("--label needs KEY=VALUE, KEY of letters, digits and '_' (not first a "
			  "digit), not '%s'", arg);
	if (o->report.nlabels == OPTIONS_MAX_LIST)
		bad_usage("too many %s options", "--label");
	o->labels[o->report.nlabels++] = arg;
	o->report.labels = o->labels;
}

static void set_older(struct options *o, const struct opt_def *d, const char *arg)
{
	uint64_t ms;

	(void)d;
	if (!hp_duration_ms(arg, &ms))
		bad_usage("--older-than needs a duration such as 90s, 5m, 2h or 1d, not '%s'", arg);
	o->older_than_ms = (int64_t)ms;	/* at most HP_DURATION_MAX_MS */
}

static void set_top(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	o->report.top = (size_t)number(arg, "--top");
}

static void set_metric(struct options *o, const struct opt_def *d, const char *arg)
{
	int m = report_metric_parse(arg);

	(void)d;
	if (m < 0)
		bad_usage("unknown metric '%s' (inuse_space, inuse_objects, alloc_space, "
			  "alloc_objects, alloc_time, retained_space)", arg);
	o->report.metric = (enum report_metric)m;
}

static void set_minpct(struct options *o, const struct opt_def *d, const char *arg)
{
	char *end;

	(void)d;
	o->report.min_percent = strtod(arg, &end);
	if (end == arg || *end || o->report.min_percent < 0 || o->report.min_percent > 100)
		bad_usage("--min-percent needs a number from 0 to 100, not '%s'", arg);
}

static void set_bythread(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d, (void)arg;
	o->join.by_thread = o->report.by_thread = true;
}

static void set_region(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	if (!*arg)
		bad_usage("%s needs a region name", "--region");
	o->join.region = o->report.region = arg;
}

static void set_maxframes(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	o->view.max_frames = (unsigned)number(arg, "--max-frames");
	if (!o->view.max_frames)
		bad_usage("%s", "--max-frames needs a number above 0");
}

/* --by: a key of the bottom-up table, or type: the types analysis's table */
static void set_by(struct options *o, const struct opt_def *d, const char *arg)
{
	static const char *const by[] = { [BY_FUNCTION] = "function", [BY_FILE] = "file",
					  [BY_MODULE] = "module" };

	(void)d;
	o->view.by = BY_NONE;
	o->by_type = !strcmp(arg, "type");
	for (size_t i = BY_FUNCTION; i < sizeof(by) / sizeof(by[0]); i++)
		if (!strcmp(arg, by[i]))
			o->view.by = (enum view_by)i;
	if (o->view.by == BY_NONE && !o->by_type)
		bad_usage("--by takes function, file, module or type, not '%s'", arg);
}

static void set_debugdir(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	if (o->ndebug_dirs == OPTIONS_MAX_LIST)
		bad_usage("too many %s options", "--debug-dir");
	o->debug_dirs[o->ndebug_dirs++] = arg;
}

static void set_raw(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	if (o->nraw == OPTIONS_MAX_LIST)
		bad_usage("too many %s options", "--raw");
	split_at(arg, "--raw", &o->raw[o->nraw]);
	o->raw_spec[o->nraw++] = arg;
}

static void set_loadbase(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	o->load_base = number(arg, "--load-base");
	o->have_load_base = true;
}

static void set_module(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	if (o->nmodules == OPTIONS_MAX_LIST)
		bad_usage("too many %s options", "--module");
	split_at(arg, "--module", &o->modules[o->nmodules++]);
}

/* --leaks alone (or implied): the lost classes */
static void set_leaks(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	if (!arg)
		o->leak_mask = LEAK_MASK_LOST;
	else if (!leaks_parse_classes(arg, &o->leak_mask))
		bad_usage("--leaks takes definite, indirect, possible, reachable or all, "
			  "comma-separated, not '%s'", arg);
}

static void set_timeline(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	if (arg && strcmp(arg, "all"))
		bad_usage("--timeline takes all (every sample in the table), not '%s'", arg);
	o->timeline = true;
	o->timeline_all = arg != NULL;
}

static void set_maxratio(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)o, (void)d;
	spool_set_max_ratio(number(arg, "--max-ratio"));
}

static void set_maxsize(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)o, (void)d;
	image_set_max_size(number(arg, "--max-size"));
}

static void set_jobs(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)d;
	/* 0 once meant "the online CPUs", which leaving -j out says */
	o->jobs = (unsigned)number(arg, "--jobs");
	if (!o->jobs)
		bad_usage("%s", "--jobs needs a number above 0");
}

static void set_quiet(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)o, (void)d, (void)arg;
	util_quiet = true;
}

static void __attribute__((noreturn)) help(struct options *o, const struct opt_def *d,
					   const char *arg);

static void __attribute__((noreturn)) version(struct options *o, const struct opt_def *d,
					      const char *arg)
{
	(void)o, (void)d, (void)arg;
	printf("heapprof-analyze %s (reads block format versions %d and %d)\n", HP_VERSION,
	       HP_FORMAT_VERSION, HP2_FORMAT_VERSION);
	exit(0);
}

/* ---- the table ------------------------------------------------------------------- */

/*
 * The options, once, in --help's order: --help is printed from this table and
 * getopt_long's is built from it, and test/t0004-options.sh checks that each .name is
 * in the man page. key is the short option's letter, 0 for none; set takes the
 * argument (NULL for none); help lines are separated by '\n'.
 */
static const struct opt_def {
	const char *name;
	int key;
	int has_arg;		/* no_argument, required_argument or optional_argument */
	const char *arg;	/* what --help shows after "=" */
	opt_setter set;
	size_t field;		/* set_flag's bool, set_string's const char * */
	const char *help;
} opt_defs[N_OPTS] = {
	[OPT_FORMAT] = { .name = "format", 'f', required_argument, "FMT", set_format, 0,
	  "text (default), collapsed (flamegraph.pl, speedscope),\n"
	  "pprof (gzip profile.proto: pprof, Pyroscope, Parca),\n"
	  "svg (an interactive flame graph for a browser), json\n"
	  "(the whole report; schema in share/heapprof) or html\n"
	  "(one self-contained page: flame graph, search, tables)" },
	[OPT_OUTPUT] = { .name = "output", 'o', required_argument, "FILE", set_string,
	  offsetof(struct options, output),
	  "write the report to FILE instead of standard output" },
	[OPT_SHORT] = { .name = "short-names", 0, no_argument, NULL, set_flag,
	  offsetof(struct options, report.short_names),
	  "C++ names without template arguments, parameter lists\nand return types" },
	[OPT_PYTHON] = { .name = "python", 0, required_argument, "MODE", set_python, 0,
	  "Python frames (CPython 3.11-3.13, recorded by heapprof.so):\n"
	  "merged (default: each _PyEval_EvalFrameDefault frame\n"
	  "replaced by the Python functions it ran, file:line),\n"
	  "native (the native frames alone) or python (the Python\n"
	  "frames and the native frame that allocated)" },
	[OPT_AGE] = { .name = "age", 0, no_argument, NULL, set_flag, offsetof(struct options, age),
	  "live bytes by age; a block's age counts from when the\n"
	  "snapshot was taken, or where the dump does not say (gcore,\n"
	  "a raw image), from the newest live block's allocation" },
	[OPT_LIFETIMES] = { .name = "lifetimes", 0, no_argument, NULL, set_flag,
	  offsetof(struct options, lifetimes),
	  "how long each stack's blocks live: allocation to free\n"
	  "of the blocks the event rings hold (HEAPPROF_EVENTS=N),\n"
	  "temporary allocations, live blocks' ages" },
	[OPT_OLDER] = { .name = "older-than", 0, required_argument, "D", set_older, 0,
	  "only blocks allocated D (90s, 5m, 2h, 1d) or more before\n"
	  "the dump (its snapshot time, else the newest live block)" },
	[OPT_TOP] = { .name = "top", 0, required_argument, "N", set_top, 0,
	  "show the N largest stacks (text default 20, others all;\n0 = all)" },
	[OPT_METRIC] = { .name = "metric", 0, required_argument, "NAME", set_metric, 0,
	  "what stacks are sorted by and collapsed output counts:\n"
	  "inuse_space (default: live bytes), inuse_objects (live\n"
	  "blocks), alloc_space (bytes allocated since the start),\n"
	  "alloc_objects (allocation calls), alloc_time (ns of wall\n"
	  "time before the calls; needs HEAPPROF_TIME=1),\n"
	  "retained_space (bytes of the blocks the stack's blocks\n"
	  "dominate in the heap graph, themselves included)" },
	[OPT_MINPCT] = { .name = "min-percent", 0, required_argument, "P", set_minpct, 0,
	  "leave out stacks holding less than P% of the metric" },
	[OPT_BYTHREAD] = { .name = "by-thread", 0, no_argument, NULL, set_bythread, 0,
	  "split every figure per thread; collapsed stacks start\n"
	  "with a [thread TID NAME] frame" },
	[OPT_REGION] = { .name = "region", 0, required_argument, "NAME", set_region, 0,
	  "only blocks and counts of sites in region NAME\n(heapprof_region_begin)" },
	[OPT_EVENTS] = { .name = "events", 0, no_argument, NULL, set_flag,
	  offsetof(struct options, report.events),
	  "each thread's last calls (HEAPPROF_EVENTS=N), oldest\nfirst, instead of the stacks" },
	[OPT_STACKS] = { .name = "stacks", 'v', no_argument, NULL, set_flag,
	  offsetof(struct options, report.event_stacks),
	  "with --events: each call's stack too; with --by=type:\n"
	  "under each type, the three stacks that made the most\n"
	  "of its bytes" },
	[OPT_BASE] = { .name = "base", 0, required_argument, "OLD", set_string,
	  offsetof(struct options, base),
	  "report NEW - OLD: CORE minus the core OLD of the same\n"
	  "program (another moment or another run); stacks match\n"
	  "by module file and offset, or by function name where a\n"
	  "module was rebuilt; growth first, shrinkage negative" },
	[OPT_PEAK] = { .name = "peak", 0, no_argument, NULL, set_flag, offsetof(struct options, peak),
	  "live memory per stack at the peak (the dump's peak table)\n"
	  "instead of now; the summary gives both" },
	[OPT_PEAKDIFF] = { .name = "peak-diff", 0, no_argument, NULL, set_flag,
	  offsetof(struct options, peak_diff),
	  "the peak minus now, of one dump: what grew to the peak\n"
	  "and went away since (as --base does for two)" },
	[OPT_TIMELINE] = { .name = "timeline", 0, optional_argument, "all", set_timeline, 0,
	  "text: chart and table of live memory over the process's\n"
	  "life, the table a dozen samples (=all: every one; JSON\n"
	  "holds the timeline always)" },
	[OPT_BASEPROG] = { .name = "base-program", 0, required_argument, "FILE", set_string,
	  offsetof(struct options, base_program),
	  "OLD's executable, when PROGRAM was rebuilt since OLD" },
	[OPT_FOCUS] = { .name = "focus", 0, required_argument, "REGEX", set_view_regex,
	  offsetof(struct options, view.focus),
	  "keep only stacks with a frame whose name matches\n"
	  "(REGEX: POSIX extended, matched against frame names);\n"
	  "type:REGEX keeps only the blocks of a type that matches\n"
	  "(as --by=type names it, [untyped] for the rest): every\n"
	  "report, table and graph is then of those blocks" },
	[OPT_IGNORE] = { .name = "ignore", 0, required_argument, "REGEX", set_view_regex,
	  offsetof(struct options, view.ignore),
	  "leave out stacks with a frame whose name matches;\n"
	  "type:REGEX leaves out the blocks of a type that matches" },
	[OPT_HIDE] = { .name = "hide", 0, required_argument, "REGEX", set_string,
	  offsetof(struct options, view.hide),
	  "remove the frames whose name matches (e.g. '^operator new')" },
	[OPT_MAXFRAMES] = { .name = "max-frames", 0, required_argument, "N", set_maxframes, 0,
	  "keep the N innermost frames of each stack" },
	[OPT_BY] = { .name = "by", 0, required_argument, "WHAT", set_by, 0,
	  "bottom-up table of self and total bytes per function,\n"
	  "file or module (pprof's -top; text or json; --top=N rows);\n"
	  "type: live blocks and bytes per type: a C++ class (the\n"
	  "vtable a block starts with) or a Python object's type\n"
	  "(text, json or html), and what they retain with\n"
	  "--metric=retained_space; with --focus or --ignore by\n"
	  "frame, of the blocks those stacks made" },
	[OPT_DEBUGDIR] = { .name = "debug-dir", 0, required_argument, "DIR", set_debugdir, 0,
	  "look for separate debug info in DIR too (by build-id,\n"
	  "DIR/.build-id/xx/rest.debug); repeatable" },
	[OPT_SYSROOT] = { .name = "sysroot", 0, required_argument, "DIR", set_string,
	  offsetof(struct options, sysroot), "find the target's shared libraries under DIR" },
	[OPT_RAW] = { .name = "raw", 0, required_argument, "IMAGE@ADDR", set_raw, 0,
	  "raw mode: IMAGE holds memory as it was at ADDR; repeatable" },
	[OPT_LOADBASE] = { .name = "load-base", 0, required_argument, "ADDR", set_loadbase, 0,
	  "raw mode: where a PIE PROGRAM was loaded" },
	[OPT_MODULE] = { .name = "module", 0, required_argument, "FILE@ADDR", set_module, 0,
	  "raw mode: a shared object loaded at ADDR; repeatable" },
	[OPT_LEAKS] = { .name = "leaks", 0, optional_argument, "CLASSES", set_leaks, 0,
	  "classify blocks by reachability, as memcheck does, and\n"
	  "show only CLASSES (comma-separated: definite, indirect,\n"
	  "possible, reachable, all; default definite,indirect)" },
	[OPT_MEMORY] = { .name = "memory", 0, no_argument, NULL, set_flag,
	  offsetof(struct options, memory),
	  "where the memory goes: mappings, the allocator's arenas\n"
	  "(and its own figures of them), free and in-use chunks,\n"
	  "and which stacks' blocks pin free memory" },
	[OPT_UNTAGGED] = { .name = "untagged", 0, no_argument, NULL, set_flag,
	  offsetof(struct options, untagged),
	  "count the allocator's in-use chunks that have no heapprof\n"
	  "header (allocated before tagging started) as blocks with\n"
	  "no stack, [untagged]; a core with no heapprof block is\n"
	  "read so always" },
	[OPT_WHY] = { .name = "why", 0, required_argument, "REGEX|0xADDR", set_string,
	  offsetof(struct options, why),
	  "why blocks are alive: for the blocks of stacks with a\n"
	  "frame matching REGEX (else of a type matching it), or\n"
	  "the block holding ADDR, the shortest path of pointers\n"
	  "from a named root (largest blocks first, --top of them;\n"
	  "text or json)" },
	[OPT_FAILLEAK] = { .name = "fail-on-leak", 0, no_argument, NULL, set_flag,
	  offsetof(struct options, fail_on_leak),
	  "exit with status 3 when definitely lost bytes remain\n(implies --leaks)" },
	[OPT_SUPP] = { .name = "suppressions", 0, required_argument, "FILE", set_string,
	  offsetof(struct options, suppressions),
	  "leave out leaks whose stack matches a LeakSanitizer\n"
	  "'leak:PATTERN' line of FILE (implies --leaks)" },
	[OPT_MAXRATIO] = { .name = "max-ratio", 0, required_argument, "N", set_maxratio, 0,
	  "a compressed CORE may inflate to N times its size in data\n"
	  "(zero pages aside) past its first 64 MiB (default 1000; 0: no\n"
	  "limit): a decompression bomb stops there" },
	[OPT_MAXSIZE] = { .name = "max-size", 0, required_argument, "N", set_maxsize, 0,
	  "refuse a CORE (or OLD) of more than N bytes, or whose\n"
	  "headers promise more once inflated, before reading it\n"
	  "(heapprof report passes what the process can hold)" },
	[OPT_SYMBOLS] = { .name = "symbols", 0, required_argument, "MODE", set_symbols, 0,
	  "full (default: function names, files, lines) or none:\n"
	  "-f pprof with build-ids and file offsets only, no\n"
	  "debug info read, for a platform that symbolizes itself\n"
	  "(native frames alone, as --python=native)" },
	[OPT_LABEL] = { .name = "label", 0, required_argument, "KEY=VALUE", set_label, 0,
	  "-f pprof: a label KEY=VALUE on every sample, what a\n"
	  "profiling platform groups by; in VALUE %p is the dump's\n"
	  "pid, %e PROGRAM, %b its build-id; repeatable" },
	[OPT_JOBS] = { .name = "jobs", 'j', required_argument, "N", set_jobs, 0,
	  "scan with N threads (default: online CPUs); with more\n"
	  "than one CORE, read N dumps at a time" },
	[OPT_QUIET] = { .name = "quiet", 'q', no_argument, NULL, set_quiet, 0, "no warnings" },
	[OPT_HELP] = { .name = "help", 'h', no_argument, NULL, help, 0, "this text" },
	[OPT_VERSION] = { .name = "version", 'V', no_argument, NULL, version, 0,
	  "version and block format version" },
};

static void set_flag(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)arg;
	*(bool *)((char *)o + d->field) = true;
}

static void set_string(struct options *o, const struct opt_def *d, const char *arg)
{
	*(const char **)((char *)o + d->field) = arg;
}

/* --focus, --ignore: REGEX is the frames'; type:REGEX the blocks' types', apart, so that
 * one of each can be given */
static void set_view_regex(struct options *o, const struct opt_def *d, const char *arg)
{
	bool focus = d->field == offsetof(struct options, view.focus);

	if (strncmp(arg, "type:", 5)) {
		set_string(o, d, arg);
		return;
	}
	*(focus ? &o->view.focus_type : &o->view.ignore_type) = arg + 5;
}

/* ---- the rules ------------------------------------------------------------------- */

/* Giving any of when gives option then too (with arg), unless it was given. */
static const struct implication {
	uint64_t when;
	int then;
	const char *arg;
} implications[] = {
	{ O(FAILLEAK) | O(SUPP), OPT_LEAKS, NULL },
	{ O(PEAKDIFF), OPT_PEAK, NULL },
};

/* A combination refused: any option of when with any of with (or, with
 * needs_with, without any of them; or when test says so). */
static bool peak_metric(const struct options *o)
{
	return o->report.metric != METRIC_INUSE_SPACE && o->report.metric != METRIC_INUSE_OBJECTS;
}

/* the rings are listed as text, by their own writer */
static bool events_format(const struct options *o)
{
	return !format_row(o->format)->events;
}

static bool retained_metric(const struct options *o)
{
	return o->report.metric == METRIC_RETAINED_SPACE;
}

/* more than one CORE: one report merged from every dump's stacks (session_fleet.c) */
static bool many_dumps(const struct options *o)
{
	return o->ncores > 1;
}

static bool many_dumps_metric(const struct options *o)
{
	return many_dumps(o) && (retained_metric(o) || o->by_type);
}

static bool stacks_alone(const struct options *o)
{
	return !GIVEN(o, O(EVENTS)) && !o->by_type;
}

static bool type_view(const struct options *o)
{
	return o->view.focus_type || o->view.ignore_type;
}

static bool many_dumps_types(const struct options *o)
{
	return many_dumps(o) && type_view(o);
}

/* build-ids and offsets are pprof's: the other formats show names */
static bool not_pprof(const struct options *o)
{
	return o->format != &out_pprof;
}

/* Python frames are named from the dump, the native ones not at all: one kind only */
static bool python_named(const struct options *o)
{
	return o->report.no_symbols && o->python != SYM_PY_NATIVE;
}

static const struct refusal {
	uint64_t when, with;
	bool needs_with;
	bool (*test)(const struct options *o);
	const char *why;
} refusals[] = {
	{ O(OLDER), O(LEAKS), false, NULL, "--older-than and --leaks cannot be combined yet" },
	{ O(LIFETIMES), O(LEAKS) | O(BASE) | O(EVENTS) | O(WHY), false, NULL,
	  "--lifetimes goes with one report of stacks: not with --leaks, --base, --events or --why" },
	/* a path of pointers lives in one heap: NEW - OLD has none */
	{ O(WHY), O(BASE) | O(EVENTS), false, NULL,
	  "--why cannot be combined with --base or --events: it follows the pointers of one heap" },
	/* the graph keys its blocks one way at a time */
	{ O(WHY), 0, false, retained_metric,
	  "--why tells what its blocks retain: no --metric=retained_space with it" },
	{ O(STACKS), 0, false, stacks_alone, "--stacks (-v) goes with --events or --by=type" },
	/* the peak table holds live bytes and blocks per stack and region, nothing else */
	{ O(PEAK), O(BASE), false, NULL,
	  "--peak with --base: for the peak against now use --peak-diff" },
	{ O(PEAK), O(LEAKS) | O(AGE) | O(OLDER) | O(MEMORY) | O(WHY) | O(EVENTS) | O(BYTHREAD),
	  false, NULL, "--peak reports live bytes and blocks per stack: no --leaks, --age, "
	  "--older-than, --memory, --why, --events or --by-thread with it" },
	{ O(PEAK) | O(EVENTS), O(UNTAGGED), false, NULL,
	  "--untagged counts the chunks live now: no --peak or --events with it" },
	{ O(PEAK), 0, false, peak_metric, "--peak takes --metric=inuse_space or inuse_objects" },
	/* the peak table has figures per stack, no blocks to read a type from */
	{ O(PEAK) | O(PEAKDIFF), 0, false, type_view,
	  "--focus=type: and --ignore=type: pick blocks: no --peak or --peak-diff with them" },
	{ O(EVENTS), O(BASE) | O(FOCUS) | O(IGNORE) | O(HIDE) | O(MAXFRAMES) | O(BY), false, NULL,
	  "--events lists calls, not stacks: no --base or views with it" },
	{ O(EVENTS), 0, false, events_format,
	  "--events lists the calls as text: -f text, or no -f, with it" },
	{ O(BASEPROG), O(BASE), true, NULL,
	  "--base-program names the executable of --base's core: give --base" },
	{ O(LOADBASE) | O(MODULE), O(RAW), true, NULL,
	  "--load-base and --module are for raw mode (--raw)" },
	/* what reads one heap's blocks, pointers or rings has no meaning summed */
	{ O(BASE) | O(PEAK) | O(PEAKDIFF) | O(WHY) | O(LEAKS) | O(MEMORY) | O(AGE) | O(OLDER) |
	  O(LIFETIMES) | O(EVENTS) | O(TIMELINE) | O(UNTAGGED) | O(BYTHREAD), 0, false,
	  many_dumps, "more than one CORE makes one report of the stacks summed: no --base, "
	  "--peak, --peak-diff, --why, --leaks, --memory, --age, --older-than, --lifetimes, "
	  "--events, --timeline, --untagged or --by-thread with it (give one CORE)" },
	{ O(METRIC) | O(BY), 0, false, many_dumps_metric,
	  "more than one CORE: no --metric=retained_space or --by=type, which read one heap's "
	  "pointers and blocks (give one CORE)" },
	{ O(FOCUS) | O(IGNORE), 0, false, many_dumps_types,
	  "more than one CORE: no --focus=type: or --ignore=type:, which read one heap's "
	  "blocks (give one CORE)" },
	{ O(SYMBOLS) | O(LABEL), 0, false, not_pprof,
	  "--symbols and --label are for -f pprof" },
	{ O(PYTHON), 0, false, python_named,
	  "--symbols=none gives native frames alone: no --python but native with it" },
};

/* What an option needs of the format: core figures (OUT_* bits), or that it shows
 * the option's section. Refused, never ignored, where the format lacks it (--events'
 * format lists calls and ignores the rest). */
static bool by_type(const struct options *o)
{
	return o->by_type;
}

static bool by_view(const struct options *o)
{
	return !o->by_type;
}

static const struct format_need {
	int option;
	bool (*when)(const struct options *o);	/* NULL: always */
	unsigned need;
	const char *gives;
	const struct section_ops *section;
} format_needs[] = {
	{ OPT_BASE, NULL, OUT_SIGNED, "negative figures", NULL },
	{ OPT_BY, by_view, 0, NULL, &by_section },
	{ OPT_BY, by_type, 0, NULL, &types_section },
	{ OPT_AGE, NULL, 0, NULL, &ages_section },
	{ OPT_MEMORY, NULL, 0, NULL, &memory_section },
	{ OPT_PEAKDIFF, NULL, OUT_SIGNED, "negative figures", NULL },
	{ OPT_LIFETIMES, NULL, 0, NULL, &lifetimes_section },
	{ OPT_WHY, NULL, 0, NULL, &why_section },
};

static bool format_has(const struct out_format *f, const struct format_need *n)
{
	return (f->can & n->need) == n->need && (!n->section || report_section_can(n->section, f));
}

static bool timeline_format(const struct options *o)
{
	return o->format != &out_text && o->format != &out_json;
}

static void apply_implications(struct options *o)
{
	for (size_t i = 0; i < sizeof(implications) / sizeof(implications[0]); i++) {
		const struct implication *m = &implications[i];

		if (!GIVEN(o, m->when) || GIVEN(o, OPTION_BIT(m->then)))
			continue;
		opt_defs[m->then].set(o, &opt_defs[m->then], m->arg);
		o->given |= OPTION_BIT(m->then);
	}
}

static void check_rules(const struct options *o)
{
	char msg[300];

	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];

		if (GIVEN(o, r->when) && (r->test ? r->test(o) : GIVEN(o, r->with) != r->needs_with))
			bad_usage("%s", r->why);
	}
	if (format_row(o->format)->chosen)
		for (size_t i = 0; i < sizeof(format_needs) / sizeof(format_needs[0]); i++) {
			const struct format_need *n = &format_needs[i];

			if (!GIVEN(o, OPTION_BIT(n->option)) || (n->when && !n->when(o)) ||
			    format_has(o->format, n))
				continue;
			snprintf(msg, sizeof(msg), "--%s gives %s, which -f %s cannot show: use -f %s",
				 opt_defs[n->option].name, n->section ? n->section->gives : n->gives,
				 o->format->name, formats_with(n));
			bad_usage("%s", msg);
		}
	if (GIVEN(o, O(TIMELINE)) && timeline_format(o))
		bad_usage("--timeline draws a chart in -f text (-f json holds the timeline "
			  "always), not in -f %s", o->format->name);
}

/* The format's defaults for what the command line left open. */
static void format_defaults(struct options *o)
{
	bool top_set = GIVEN(o, O(TOP));

	if (GIVEN(o, O(EVENTS)) && format_row(o->format)->events)
		o->format = format_row(o->format)->events;	/* the rings replace the report */

	if (!top_set)
		o->report.top = format_row(o->format)->top;
	o->report.sizes = o->format->can & OUT_SIZES;
	o->report.all_stacks = o->format->can & OUT_ALL;
	o->view.top = o->report.top;
	o->by_top = top_set ? o->report.top : 0;	/* text's default 20 is for stacks */
	o->view.min_percent = o->report.min_percent;
}

/* ---- --help and getopt ----------------------------------------------------------- */

#define HELP_COLUMN 25

/* "  -f, --format=FMT", "      --leaks[=CLASSES]", then the help from HELP_COLUMN. */
static void usage_option(const struct opt_def *d, FILE *f)
{
	const char *h = d->help;
	int n;

	if (d->key)
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

static void help(struct options *o, const struct opt_def *d, const char *arg)
{
	(void)o, (void)d, (void)arg;
	fputs("usage: heapprof-analyze [OPTIONS] PROGRAM CORE [CORE...]\n"
	      "       heapprof-analyze [OPTIONS] --raw IMAGE@ADDR [--raw ...] PROGRAM\n"
	      "Report which call stacks hold the live heap memory of a process that ran with\n"
	      "LD_PRELOAD=heapprof.so, from its core or from raw memory images.\n"
	      "CORE is a file, a FIFO or '-' (standard input), plain or compressed with gzip,\n"
	      "zstd or xz (told by content); what is not a plain file is copied to $TMPDIR\n"
	      "first, e.g.  coredumpctl dump PID | heapprof-analyze PROGRAM -\n"
	      "More than one CORE (of one build of PROGRAM: runs, hosts, moments) gives one\n"
	      "report of every dump's stacks summed, with in how many dumps each stack is and\n"
	      "the median and 95th percentile of its live bytes per dump; -j N reads N dumps\n"
	      "at a time.\n"
	      "\n", stdout);
	for (size_t i = 0; i < N_OPTS; i++)
		usage_option(&opt_defs[i], stdout);
	fputs("\n"
	      "Exit status: 0 a report was written (what was skipped is counted in it and on\n"
	      "stderr); 2 no report could be made (unreadable or unusable input, no heapprof\n"
	      "blocks); 3 --fail-on-leak found definitely lost bytes; 64 bad usage.\n",
	      stdout);
	exit(0);
}

/* getopt_long's tables: a long option's value is 256 + its index, a short one's letter. */
static void getopt_tables(struct option *longs, char *shorts)
{
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt_def *d = &opt_defs[i];

		longs[i] = (struct option){ d->name, d->has_arg, NULL, d->key ? d->key : 256 + (int)i };
		if (!d->key)
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

static int option_index(int c)
{
	if (c >= 256)
		return c - 256;
	for (int i = 0; i < N_OPTS; i++)
		if (opt_defs[i].key == c)
			return i;
	bad_usage("%s", "unknown option");
}

/* PROGRAM and one CORE or more, or PROGRAM alone in raw mode. */
static void positional(struct options *o, int argc, char **argv)
{
	if (o->nraw) {
		if (argc - optind != 1)
			bad_usage("%s", "raw mode takes PROGRAM and no CORE");
	} else {
		if (argc - optind < 2)
			bad_usage("%s", "PROGRAM and CORE are required");
		o->cores = (const char *const *)argv + optind + 1;
		o->ncores = (size_t)(argc - optind - 1);
		o->core = o->cores[0];
	}
	o->program = argv[optind];
}

void options_parse(struct options *o, int argc, char **argv)
{
	struct option longs[N_OPTS + 1];
	char shorts[3 * N_OPTS + 1];
	int c;

	memset(o, 0, sizeof(*o));
	o->older_than_ms = -1;
	o->format = &out_text;
	getopt_tables(longs, shorts);
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		int i = option_index(c);

		opt_defs[i].set(o, &opt_defs[i], optarg);
		o->given |= OPTION_BIT(i);
	}
	apply_implications(o);
	format_defaults(o);
	positional(o, argc, argv);
	check_rules(o);
	if (o->report.no_symbols)
		o->python = SYM_PY_NATIVE;
	if (!o->jobs) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		o->jobs = n > 0 ? (unsigned)(n > 64 ? 64 : n) : 1;
	}
	if (o->suppressions) {
		char err[1024];

		if (!(o->supp = leaks_read_suppressions(o->suppressions, err, sizeof(err))))
			die(EXIT_NO_REPORT, "%s", err);
	}
	views_compile(&o->view);
}

void options_free(struct options *o)
{
	views_free(&o->view);
	for (size_t i = 0; i < o->nmodules; i++)
		free((void *)o->modules[i].path);
	for (size_t i = 0; i < o->nraw; i++)
		free((void *)o->raw[i].path);
	leaks_free_suppressions(o->supp);
}
