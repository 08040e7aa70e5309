/*
 * An analysis is a file and a row of the session's table (session.c): what it reads of
 * the dump, when the options want it, what it adds to the report and what it leaves.
 * The session scans as the rows' needs say, runs the wanted rows in the order their
 * needs and gifts make, drops each input after its last reader, and puts each row's
 * section into the report in table order. This header is what a row gets: the options
 * (options.c parses them) and the session's inputs.
 */
#ifndef HP_ANALYSIS_H
#define HP_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "collect.h"
#include "graph.h"
#include "image.h"
#include "report.h"
#include "scan.h"
#include "sym.h"
#include "views.h"

#define OPTIONS_MAX_LIST 256

struct leak_supp;

/* The command line, checked: every combination the rules of options.c refuse is gone. */
struct options {
	uint64_t given;			/* options.c's: which options were given or implied */
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
	const char *core;		/* the first CORE */
	const char *const *cores;	/* every CORE, as given: more than one makes one
					 * merged report (session_fleet.c) */
	size_t ncores;
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
	bool by_type;			/* --by=type: live blocks by their C++ class */
	bool untagged;			/* --untagged, or a dump with no heapprof block:
					 * the allocator's untagged chunks are blocks */
	bool peak;			/* --peak: the stacks at the peak */
	bool peak_diff;			/* --peak-diff: the peak minus now, one dump */
	bool timeline;			/* --timeline: text draws the timeline */
	bool timeline_all;		/* --timeline=all: its table lists every sample */
	enum sym_python python;		/* --python */
	const char *labels[OPTIONS_MAX_LIST];	/* --label KEY=VALUE, report.labels */
};

/*
 * The inputs a row reads (needs), makes (gives) or changes under the rows after it
 * (spoils). A row runs after every row that gives what it needs and before every row
 * that spoils it; an input the session holds is dropped once no row left needs it.
 */
enum {
	IN_LIST = 1u << 0,	/* every block the scan found (scan.list) */
	IN_LIST_ORDER = 1u << 1, /* ... in the scan's order, which the chunks' block indices
				 * follow (the heap graph sorts the list) */
	IN_PAGES = 1u << 2,	/* the pages that may hold pointers (scan.pages) */
	IN_CHUNKS = 1u << 3,	/* the allocator's chunks (alloc.chunks) */
	IN_NONROOT = 1u << 4,	/* its free chunks and metadata (alloc.nonroot) */
	IN_GRAPH = 1u << 5,	/* the heap graph (session.graph), whose blocks are the
				 * list's: IN_LIST too */
	IN_DOMINATORS = 1u << 6, /* the graph's dominator tree with its numbering */
	IN_MARKS = 1u << 7,	/* the blocks left out of the report are marked */
	IN_KEYING = 1u << 8,	/* how the graph keys blocks to stacks (session.keying) */
	IN_COUNTERS = 1u << 9,	/* the stacks as joined, with their counters */
	IN_SUMS = 1u << 10,	/* the report's sums of those counters (report_count) */
	IN_STACKS = 1u << 11,	/* the stacks as the report will show them */
	IN_REPORT = 1u << 12,	/* the report, built, viewed and differenced */
	IN_UNTAGGED = 1u << 13,	/* the allocator's untagged chunks are blocks of the list
				 * (when --untagged, or the dump has no heapprof block) */
	IN_TYPED = 1u << 14,	/* the blocks of the types --focus=type: leaves out are
				 * marked: the rows that make the stacks again of the
				 * blocks not marked come after */
	IN_FIRSTS = 1u << 15,	/* with IN_LIST: the row reads the list only when another
				 * row needs it; else the scan counts each block by its
				 * first word (scan.firsts) and keeps no list, unless
				 * the dump holds a Python interpreter, whose objects
				 * are named from their blocks */
};

/* One dump (a core, a snapshot, raw images) being read: what the rows read and add to. */
struct session {
	const struct options *o;	/* OLD's for --base: its core, no --peak */
	struct image img;
	char *source;			/* the core, or the raw images, as named */
	struct scan_result scan;
	struct sym *sym;
	struct alloc alloc;		/* IN_CHUNKS, IN_NONROOT (alloc.h) */
	struct graph *graph;		/* IN_GRAPH */
	struct graph_keying keying;	/* IN_KEYING: by thread, region, leak class */
	struct report r;		/* the core built after the rows before IN_REPORT */
	struct report_opts ro;		/* how it is built; a row may add to it */
	bool python;			/* some stack holds Python frames */
	bool untagged_dump;		/* no heapprof block: the allocator's chunks are the
					 * blocks (options.untagged is set) */
	int status;			/* the exit status a row asks for (0: none) */
	/* session.c's */
	void *state[32];		/* each row's, by its index in the table */
	void *diff_state[32];		/* --base: a section's NEW - OLD (section_ops.diff) */
	bool ran[32];
	unsigned held;			/* IN_* made and not dropped yet */
	struct options *own_o;		/* o as the dump changed it, or NULL */
	struct session *base;		/* --base, --peak-diff: OLD */
	struct options *base_o;		/* ... read with these */
	struct report diff;		/* ... and NEW - OLD */
	struct report *final;		/* what is written */
	struct fleet *fleet;		/* more than one CORE: the merge (session_fleet.c) */
};

struct analysis {
	const char *name;
	unsigned needs, gives, spoils;	/* IN_* */
	/* Whether the options ask for it; NULL: when a row that runs needs what it gives. */
	bool (*wanted)(const struct options *o);
	/* Do it; returns what free releases after the report is written, or NULL. Exits
	 * with a one-line reason (die) when the options ask what the dump cannot give. */
	void *(*apply)(struct session *s);
	void (*free)(void *state);
	/* what it adds to the report, with apply's state as its data (none: NULL) */
	const struct section_ops *section;
};

#endif
