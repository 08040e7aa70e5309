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
struct stack;
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
	bool python;		/* a Python frame: module "[python]", pc its name record's
				 * address, module_offset its instruction's offset; the
				 * same function, file and line are the same frame */
};

/* What a report sorts and cuts by, and what the collapsed output counts. */
enum report_metric {
	METRIC_INUSE_SPACE,	/* live bytes (the default) */
	METRIC_INUSE_OBJECTS,	/* live blocks */
	METRIC_ALLOC_SPACE,	/* bytes allocated, since the start */
	METRIC_ALLOC_OBJECTS,	/* allocation calls, since the start */
	METRIC_ALLOC_TIME,	/* ns of wall time before the calls (HEAPPROF_TIME=1) */
	METRIC_RETAINED_SPACE,	/* bytes the stack's blocks dominate (graph.h) */
	METRIC_COUNT
};

/* "inuse_space", ...; report_metric_parse() gives -1 for an unknown name. */
const char *report_metric_name(enum report_metric m);
int report_metric_parse(const char *name);
/* What a metric counts: "bytes", "blocks", "calls", "ns". */
const char *report_metric_unit(enum report_metric m);

/*
 * --lifetimes: how long a stack's blocks live (lifetimes.h). Sums, minima and maxima,
 * so that stacks a view merges add up; 0 blocks: nothing known.
 */
/* n values, their sum and their range (min and max are 0 while n is 0) */
struct report_range {
	uint64_t n, sum, min, max;
};

struct report_life {
	struct report_range freed;	/* blocks allocated and freed in the rings' window:
					 * ns from allocation to free */
	uint64_t temporary;		/* freed by the thread's next call (heaptrack's) */
	struct report_range age;	/* live blocks with a time, as found: ms from
					 * the newest live block */
};

struct report_stack {
	uint64_t value;			/* the report's metric */
	uint64_t bytes, blocks;		/* live; estimates when the report is sampled */
	uint64_t alloc_bytes, alloc_calls; /* from the sites' counters (0 without) */
	uint64_t frees, freed_bytes;
	uint64_t time_ns;
	uint64_t retained;		/* --metric=retained_space (0 otherwise) */
	uint32_t tid;			/* --by-thread: the thread, 0 = unknown */
	const char *thread_name;	/* --by-thread: its name, NULL = none */
	unsigned flags;			/* STACK_TRUNCATED, STACK_UNKNOWN (stacks.h) */
	unsigned recorded_frames;	/* frames the stack record held (pcs, and Python
					 * frames of two words each) */
	const struct size_count *sizes; /* by count descending, then size; counts are
					 * estimated blocks when sampled (sample_period) */
	size_t nsizes;
	const struct report_frame *frames; /* [0] innermost */
	unsigned nframes;
	struct report_life life;	/* --lifetimes; else all 0 */
	uint64_t key;			/* report_stack_key() of its pcs: previews find it */
	/* a report of many dumps (report.ndumps): in how many the stack is, and its live
	 * bytes per dump, absent ones as 0, at the median and the 95th percentile
	 * (nearest rank); dumps 0: not known (a view merged stacks) */
	uint64_t dumps;
	uint64_t median_bytes, p95_bytes;
};

/* --lifetimes: what the event rings held, for the summary. */
struct report_lifetimes {
	size_t rings;			/* event rings read */
	bool whole;			/* no ring lost a call: the window is the whole run */
	int64_t window_ns;		/* else its start, ns since the process start: the
					 * latest oldest call of the rings that wrapped */
	int64_t end_ns;			/* the newest call of any ring */
	uint64_t calls;			/* calls in the window, every thread */
	uint64_t allocs, frees;		/* blocks made, blocks freed (realloc both) */
	uint64_t paired;		/* frees whose allocation is in the window */
	uint64_t cross_thread;		/* ... made by another thread */
	uint64_t before;		/* frees of blocks made before the window */
	uint64_t temporary;
	uint64_t no_site;		/* paired or temporary blocks with no site (sampled out,
					 * untagged): in the totals, under no stack */
	uint64_t aged;			/* live blocks with a time */
	uint64_t newest_ms;		/* the newest live block's time: ages count from it */
};

/* One allocator call from an event ring (--events). */
struct report_event {
	char entry[24];			/* "malloc", ..., "free" */
	uint64_t arg[2];
	unsigned nargs;			/* 1 or 2 */
	bool arg0_is_pointer;		/* realloc, reallocarray, free; else sizes */
	bool has_result;		/* all but free */
	uint64_t result;
	bool result_is_pointer;		/* else an error number (posix_memalign), or none */
	int64_t time_ns;		/* since the process record's start */
	uint64_t seq;
	uint32_t site;
	const char *func;		/* the site's innermost frame, NULL = no site or stack */
	const struct report_frame *frames; /* --stacks: the site's stack, [0] innermost */
	unsigned nframes;
};

/* One thread's ring, oldest call first. */
struct report_ring {
	uint32_t tid;
	const char *thread_name;	/* NULL = none */
	uint32_t slots;			/* HEAPPROF_EVENTS */
	uint64_t written;		/* calls the thread made in all */
	const struct report_event *events;
	size_t nevents;
};

/* A reason the scan rejected candidates, and how many. */
struct report_reject {
	const char *reason;
	uint64_t n;
};

/* One sample of the process's timeline (issue 21), oldest first; the last one is the
 * state at the snapshot. */
struct report_sample {
	double time_s;			/* since the process start */
	uint64_t live_bytes, live_blocks;
	uint64_t alloc_calls, alloc_bytes; /* so far */
};

/*
 * --peak: the highest point the dump shows, beside the state now. The peak table is
 * taken each time live memory passes the last one by the step, so the true peak lies
 * from the larger of the table and now up to the table plus the step: when the state
 * now holds more than the table, it is the peak shown.
 */
struct report_peak {
	double time_s;			/* when: the table's time, or the snapshot's */
	uint64_t bytes, blocks;		/* at the peak: the table's entries summed, or now */
	uint64_t now_bytes, now_blocks;	/* at the snapshot */
	uint64_t step;			/* the step in force: the true peak is below the
					 * table's bytes + step */
	bool from_now;			/* now holds more than the table: its stacks shown */
	double table_time_s;		/* the table itself, read either way */
	uint64_t table_bytes, table_blocks;
	uint64_t overflow_stacks;	/* stacks past the table's room (0: none, or not
					 * counted by the heapprof.so that wrote it) */
	uint64_t overflow_bytes;	/* and their bytes, summed in one entry */
};

/* A module of the process, as the symbols found it: what frames point into. */
struct report_module {
	const char *path;		/* its file (lives as long as the symbols) */
	uint64_t start, end;
	char build_id[129];		/* hex, "" if none */
};

/* --symbols=none: one mapping of a module's file, as /proc/PID/maps lists it (the
 * dump's file list): what a platform turns an address into a file offset with. */
struct report_mapping {
	uint64_t start, end;
	uint64_t offset;		/* the file offset mapped at start */
	size_t module;			/* its module, an index into mods */
};

/*
 * What an analysis adds to the report: a section, printed by each writer after the
 * report's summary in the order of the analyses table, and a stack's lines where it
 * has figures per stack. A writer calls the printer of its syntax; one a section
 * lacks is left out, and options.c refuses an option whose section the format cannot
 * show (can()).
 */
struct out_format;
struct report;

/* What a writer hands a section's JSON or HTML printer. */
struct report_out {
	FILE *f;
	/* one frame as this writer's stacks print it */
	void (*frame)(const struct report_frame *fr, FILE *f);
};

struct section_ops {
	const char *name;		/* the JSON member it writes */
	const char *gives;		/* "an age summary": for "--age gives an age summary,
					 * which -f svg cannot show" */
	/* Whether format f shows it; NULL: the formats with a printer for it. */
	bool (*can)(const struct out_format *f);
	bool alone;			/* text: it is the whole report (--why, --by) */
	/* text: its lines after the summary's (or, alone, all there is) */
	void (*text)(const struct report *r, const void *data, FILE *f);
	/* JSON: its member, "  \"name\": ...,\n"; HTML: ",\"name\":..." in the page's data */
	void (*json)(const struct report *r, const void *data, const struct report_out *o);
	void (*html)(const struct report *r, const void *data, const struct report_out *o);
	/* a stack's text lines, and its JSON members (",\n     \"x\": ...") */
	void (*stack_text)(const struct report_stack *s, FILE *f);
	void (*stack_json)(const struct report_stack *s, FILE *f);
	/* --base: the data of NEW - OLD from each's (its row's free releases it); NULL:
	 * NEW's section is shown as it is */
	void *(*diff)(const void *data, const void *base);
};

struct report_section {
	const struct section_ops *ops;
	const void *data;		/* the analysis's, alive until the report is written */
};

#define REPORT_MAX_SECTIONS 16

/* The mark of the peak table's entry for the stacks past its room (STACK_OVERFLOW),
 * into buf: "[peak table overflow: N stacks, B bytes]". p: r->peak (NULL: no figures). */
const char *report_overflow_mark(const struct report_peak *p, char *buf, size_t size);

/* The summary line of r->peak (text and stderr): "B bytes in N blocks at T s, step S
 * bytes (now: ...)", or "... now, step S bytes (the peak table: B bytes at T s)". */
void report_peak_line(const struct report_peak *p, char *buf, size_t size);

/* A thread the dump names (its thread records), by tid. */
struct report_thread {
	uint32_t tid;
	const char *name;
};

/* Every name in a report (functions, files, modules, program, source) is escaped for
 * printing (escape.h): writers add only their format's own escapes. */
struct report {
	const char *program;
	const char *source;		/* the core, or the raw images, as named */
	size_t ndumps;			/* more than one CORE: the dumps merged; else 0 */
	unsigned wsize;
	bool big_endian;
	enum report_metric metric;
	uint64_t total;			/* the metric summed over all stacks, or what their
					 * shares are of (report_opts.whole) */
	uint64_t live_bytes, live_blocks; /* the stacks' sums: estimates when sampled */
	size_t live_stacks;		/* stacks holding live blocks */
	bool have_counts;		/* site counters were read */
	bool counts_sampled;		/* ... and are estimates */
	bool have_time;			/* alloc_time was recorded (HEAPPROF_TIME=1) */
	uint64_t counts_period;		/* the process's sample period, bytes (0: exact) */
	uint64_t alloc_bytes, alloc_calls, frees, freed_bytes, time_ns; /* sums over every
					 * stack of the dump, whatever was shown */
	bool counted;			/* the sums were taken by report_count() */
	bool regrouped;			/* --leaks, --older-than regrouped the stacks: their
					 * counters are in the sums only, not per stack */
	const struct report_thread *threads; /* every named thread, by tid */
	size_t nthreads_named;
	bool by_thread;
	const char *region;		/* --region, NULL = all */
	size_t nthreads, nrings;	/* thread records, event rings read */
	const char *const *regions;	/* the region names read, sorted */
	size_t nregions;
	const struct report_ring *rings; /* --events: by tid */
	uint64_t sample_period;		/* bytes; 0 unless some block was sampled */
	uint64_t unknown_blocks, unknown_bytes; /* under [unknown stack], as found */
	uint64_t untagged_blocks, untagged_bytes; /* the allocator's chunks with no heapprof
					 * header, under [untagged] (untagged.c) */
	bool untagged_only;		/* ... and the dump has no heapprof block */
	const char *allocator;		/* whose chunks they are: "glibc 2.36" */
	uint64_t damaged;		/* v2 headers with a bad check naming a real site */
	size_t all_stacks;		/* distinct stacks with a metric above 0 */
	const struct report_stack *stacks; /* the ones shown, metric descending */
	size_t nstacks;
	uint64_t rest_value;		/* what --top / --min-percent left out */
	uint64_t rest_bytes, rest_blocks;
	size_t lean_dumps;		/* dumps that are lean snapshots (HP_NOTE_LEAN): no heap
					 * contents, the records and sampled headers alone */
	uint64_t lean_headers;		/* ... the sampled headers they say they hold */
	uint64_t scanned_bytes;		/* the memory read, and what the file lacked */
	size_t segments;
	uint64_t missing_bytes;
	unsigned missing_segs;
	struct report_reject rejected[REJ_NREASONS]; /* .n == 0: none for that reason */
	uint64_t rejected_total;	/* with the damaged ones */
	const char *modules;		/* which module list symbolized the stacks */
	const struct report_module *mods; /* the module table, by start address */
	size_t nmods;
	bool no_symbols;		/* --symbols=none: frames are module and offset */
	const struct report_mapping *maps; /* ... and the modules' mappings, by start */
	size_t nmaps;
	const char *const *labels;	/* --label KEY=VALUE, for every sample */
	size_t nlabels;
	bool saturated;			/* a total did not fit 64 bits */
	const char *const *class_names;	/* a stack's class (STACK_CLASS_MASK) as index + 1
					 * into these (--leaks: "definitely lost", ...) */
	struct report_section sections[REPORT_MAX_SECTIONS];
	size_t nsections;
	char **owned;			/* names the report made (--short-names) */
	size_t nowned;
	/* views.c, diff.c (issue 12) */
	const char *view_note;		/* what --focus etc. kept, for the summary; NULL */
	bool diff;			/* --base: each stack's bytes and blocks hold the
					 * int64_t difference NEW - OLD, cast */
	const char *base_source;	/* --base: OLD as named */
	uint64_t base_live_bytes, base_live_blocks, base_total;
	size_t base_stacks;
	/* issue 21: the timeline the dump holds (ntimeline 0: none), and its peak */
	const struct report_sample *timeline;
	size_t ntimeline;
	size_t timeline_peak;		/* index of the sample with the most live bytes */
	bool timeline_taken;		/* the last sample's time is the snapshot's, as its
					 * writer recorded it (HP_NOTE_TIME); else the newest
					 * time the dump shows (a core from gcore or the kernel,
					 * a raw image, an older snapshot) */
	const struct report_peak *peak;	/* --peak: the stacks are those of the peak table */
	/* what previews honour (report_preview) */
	bool short_names;		/* --short-names */
	const void *hide;		/* --hide's compiled regex_t (views.c), NULL: none */
};

struct report_opts {
	size_t top;		/* 0: all */
	double min_percent;	/* stacks below this share of the metric are left out */
	bool sizes;		/* count the shown stacks' blocks by size (text does) */
	enum report_metric metric;
	bool by_thread;		/* the scan was joined per thread: name the threads */
	const char *region;	/* the scan kept only this region: say so */
	bool all_stacks;	/* every stack with any figure, whatever the metric (the
				 * formats that show every metric: pprof, html) */
	bool events;		/* build the event rings too */
	bool event_stacks;	/* ... each call with its site's stack */
	bool short_names;	/* C++ templates and parameter lists left out */
	bool no_symbols;	/* --symbols=none: frames are module and offset, and the
				 * report lists the mappings of the dump's files */
	const char *const *labels;	/* --label: "KEY=VALUE" for every sample */
	size_t nlabels;
	uint64_t whole;		/* a metric whose stacks overlap (retained_space): what
				 * a stack's share is of, the live heap's bytes, as the
				 * total; 0: the stacks' sum */
	/* an analysis's figures for a stack shown (--lifetimes'), or NULL */
	void (*stack_figures)(const void *arg, const struct stack *s, struct report_stack *out);
	const void *stack_arg;
};

/* Build r from a scan; symbolizes only the stacks shown (and, with o->events, the
 * events' sites). */
void report_build(struct report *r, const struct scan_result *scan, const struct image *img,
		  struct sym *sym, const struct report_opts *o);
void report_free(struct report *r);
/* pcs[0..n-1] as frames, inlined functions expanded (short_names: names shortened, the
 * copies owned by r, which may then not be NULL); *nout gets how many. Caller frees the
 * array. For stacks outside the report's (--memory's pinning stacks). */
struct report_frame *report_symbolize(struct report *r, const uint64_t *pcs, unsigned n,
				      struct sym *sym, bool short_names, unsigned *nout);
/* The sites' counters summed over every stack of scan into r: called before --leaks or
 * --older-than regroup the stacks (their new stacks carry no counters). */
void report_count(struct report *r, const struct scan_result *scan);

/*
 * A stack as every writer prints it, outermost first: the roots the report split by
 * (the leak class "[definitely lost]", the thread "[thread TID NAME]"), then a marker
 * when the stack has no true outermost frame ("[unknown stack]", "[no stack]",
 * "[truncated]"), then the frames (inlined ones as their own). Names are as printed;
 * writers only escape them for their syntax.
 */
enum report_item_kind { ITEM_CLASS, ITEM_THREAD, ITEM_MARK, ITEM_FRAME };

struct report_item {
	enum report_item_kind kind;
	const char *name;		/* into buf or the report; valid until the next call */
	const struct report_frame *frame; /* ITEM_FRAME; else NULL */
	char buf[288];
};

struct report_path {
	struct report_item *items;
	size_t n, cap;
};

/* Fill p (reused from call to call; zero it first, free with report_path_free). */
void report_decorate(const struct report *r, const struct report_stack *s,
		     struct report_path *p);
void report_path_free(struct report_path *p);

/*
 * A frame's name for printing: the function, else "module+0xoffset" (module's base
 * name), else "0xpc". Returns buf or a string owned by the report.
 */
const char *report_frame_name(const struct report_frame *f, char *buf, size_t size);
/* What the text reports print after a frame's name: " (inlined)", "  file:line" and,
 * for a named function outside the program, "  (module's base name)". */
void report_write_frame_place(const struct report_frame *f, FILE *out);

/* A stack's key from its recorded pcs, to find a report's stack by them. */
uint64_t report_stack_key(const uint64_t *pcs, unsigned n);
/* 1 + the index of the stack shown with that key ("#N" of the text), 0: not shown. */
size_t report_stack_number(const struct report *r, uint64_t key);
/*
 * One line's preview of a stack (frames fr, innermost first, inlined ones as their
 * own; key its report_stack_key): up to max names, "f < g < h < ...", from the first
 * frame that is not the allocator's (heapprof's own module, operator new, the
 * malloc family, the C++ standard library's allocation), honouring --hide and
 * --short-names, then "  #N" when the report shows the stack. The one preview of
 * --why, --memory's tables and the page.
 */
void report_preview(const struct report *r, const struct report_frame *fr, unsigned n,
		    uint64_t key, unsigned max, FILE *f);
/* The same as a string (the caller frees it), for JSON and the page. */
char *report_preview_string(const struct report *r, const struct report_frame *fr, unsigned n,
			    uint64_t key, unsigned max);
/*
 * The JSON members of a stack in --memory's tables, where the caller's object is
 * open: "preview" (report_preview's, max names) and "stack" (its "#N", 0: not shown)
 * when it has frames, then "frames", each written by frame (the -f json writer's).
 */
void report_json_stack(const struct report *r, const struct report_frame *fr, unsigned n,
		       uint64_t key, unsigned max,
		       void (*frame)(const struct report_frame *fr, FILE *f), FILE *f);
/* The first frame report_preview names: past the allocator's (n if all are). */
unsigned report_preview_start(const struct report_frame *fr, unsigned n);

/* The stack's class (--leaks: "definitely lost", ...); else NULL. */
const char *report_stack_class(const struct report *r, const struct report_stack *s);

/* Add a section (the report keeps the pointers); in the order added. */
void report_add_section(struct report *r, const struct section_ops *ops, const void *data);
/* Whether format f shows sections of ops (ops->can, or a printer of f's syntax). */
bool report_section_can(const struct section_ops *ops, const struct out_format *f);
/* The section that is the whole text report (alone), or NULL. */
const struct report_section *report_alone(const struct report *r);

/* into += from: a stack's lifetimes, for stacks a view or a difference merges. */
void report_life_merge(struct report_life *into, const struct report_life *from);

/* What a format can show of the core: options.c refuses an option that needs what the
 * format lacks (what it can show of sections, report_section_can() says). */
#define OUT_SIGNED	(1u << 0)	/* negative figures (--base) */
#define OUT_SIZES	(1u << 1)	/* each stack's blocks by size */
#define OUT_ALL		(1u << 2)	/* every metric per stack: wants every stack with any
					 * figure (report_opts.all_stacks) */
#define OUT_SUMMARY	(1u << 3)	/* the summary (the peak's line among it) */

/* Which printer of a section a format calls. */
enum out_syntax { SYNTAX_NONE, SYNTAX_TEXT, SYNTAX_JSON, SYNTAX_HTML };

struct out_format {
	const char *name;
	/* 0, or -1 with errno when writing failed */
	int (*write)(const struct report *r, FILE *f);
	unsigned can;			/* OUT_* */
	enum out_syntax syntax;
};

extern const struct out_format out_text, out_collapsed, out_pprof, out_svg, out_events;
extern const struct out_format out_json, out_html;

#endif
