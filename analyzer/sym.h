/*
 * Symbolization: target addresses to functions, inline frames and file:line. Only
 * sym_dwfl.c and sym_lookup.c include libdwfl; callers see this header alone.
 */
#ifndef HP_SYM_H
#define HP_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct image;
struct hp_module_rec;

struct sym_module {		/* --module FILE@ADDR in raw mode */
	const char *path;
	uint64_t base;
};

struct sym_opts {
	const char *program;		/* PROGRAM as given on the command line */
	const struct image *img;	/* the target memory; what its reader reported */
	const char *sysroot;		/* --sysroot DIR, or NULL */
	const char *const *debug_dirs;	/* --debug-dir DIRs, NULL-terminated; may be NULL */
	size_t ndebug_dirs;
	bool have_load_base;		/* raw mode: --load-base given */
	uint64_t load_base;		/* raw mode: where a PIE PROGRAM was loaded */
	const struct sym_module *modules; /* raw mode: --module list */
	size_t nmodules;
	bool quiet;			/* no warnings on stderr */
};

struct sym_frame {
	const char *func;	/* demangled name; NULL if unknown */
	const char *file;	/* source file; NULL if unknown */
	int line;		/* 0 if unknown */
};

struct sym_pc {
	uint64_t pc;
	const char *module;	/* path of the module holding pc; NULL if none */
	uint64_t module_offset;	/* pc minus the module's load bias: the address addr2line
				 * -e MODULE takes (pc itself for a non-PIE executable);
				 * pc when there is no module */
	bool in_program;	/* the module is PROGRAM */
	unsigned nframes;	/* >= 1 */
	const struct sym_frame *frames; /* [0] innermost (an inlined callee), [n-1] the
					 * function the code belongs to */
};

struct sym;

/*
 * Report the target's modules (the core's own list, or PROGRAM and --module in raw
 * mode). Never fails: with no usable module every lookup gives module+0xoffset or a
 * bare address. Warnings (PROGRAM does not match the core, no debug info, which
 * module list was used) go to stderr as "heapprof-analyze: ..." unless opts->quiet.
 */
struct sym *sym_open(const struct sym_opts *opts);

/*
 * Symbolize pc; is_return_addr looks up pc - 1 so that a call at the end of a
 * function is not attributed to the next one. The result lives until sym_close(); a
 * pc is resolved once and cached.
 */
const struct sym_pc *sym_lookup(struct sym *s, uint64_t pc, bool is_return_addr);

/*
 * After sym_open, before any lookup: the module records the scan found (decode.h).
 * Each unloaded module whose text no module of the list covers is reported at its old
 * bias, from the file at its path if its build-id matches, else from a file with its
 * build-id under the debug directories; the rest are warned about (once each).
 */
void sym_add_unloaded(struct sym *s, const struct hp_module_rec *mods, size_t n);

/* A module as the symbolizer placed it: [start, end) in the target, build-id in hex. */
struct sym_module_info {
	const char *path;	/* the module's file as the core names it; lives until sym_close() */
	uint64_t start, end;
	char build_id[129];	/* "" if none */
};

/* Every module, by start address; *n gets how many. The caller frees the array. */
struct sym_module_info *sym_modules(struct sym *s, size_t *n);

/*
 * The executable's file for the report's "program" line: PROGRAM as given while it is
 * the core's executable (or the only one known); after PROGRAM proved not to match,
 * the file actually read for the executable, or "PATH (no matching file)" with the
 * core's path when none had its build-id. NULL with no PROGRAM and no fallback. Lives
 * until sym_close().
 */
const char *sym_program(struct sym *s);

/* Which module list was used, for the report summary: "core notes", "link_map", ... */
const char *sym_source(const struct sym *s);

/*
 * The function whose frame holds stack address addr of thread tid: the thread is
 * unwound (once) from regs, its pr_reg words, with the modules' CFI. NULL when not
 * known (not x86-64, or the unwind stops below addr). The name lives until sym_close().
 */
const char *sym_stack_frame(struct sym *s, uint32_t tid, const uint64_t *regs, unsigned nregs,
			    uint64_t addr);

void sym_close(struct sym *s);

#endif
