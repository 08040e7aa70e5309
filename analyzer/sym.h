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

/* --python: how a stack's Python frames (include/heapprof_format.h) show. */
enum sym_python {
	SYM_PY_MERGED,		/* each evaluation loop frame replaced by the Python frames it ran */
	SYM_PY_NATIVE,		/* the native frames alone, Python frames left out */
	SYM_PY_PYTHON,		/* the Python frames and the native frame that allocated */
};

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
	enum sym_python python;		/* --python */
	bool no_names;			/* --symbols=none: modules listed, no symbol table or
					 * debug info read; every frame module+offset */
};

/* Every name the symbolizer hands out (functions, files, modules' display paths, Python's
 * names) is escaped for printing (escape.h): safe in any output as it is. */
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
	bool python;		/* a Python frame (sym_stack): module SYM_PYTHON_MODULE,
				 * pc the name record's (or code object's) address,
				 * module_offset the instruction's offset in the code */
	bool cut;		/* sym_stack: frames[n-1] is inlined into a function left
				 * out (an evaluation loop the Python frames stand for) */
};

#define SYM_PYTHON_MODULE "[python]"


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
/* Look up return addresses pcs[0..n-1] ahead of the report, which then finds them
 * named; those in no module yet (an unloaded one's, before sym_add_unloaded) are left. */
void sym_lookup_ahead(struct sym *s, const uint64_t *pcs, size_t n);

/*
 * A stack's words as the frames a report shows (--python, opts->python): its native
 * pcs (return addresses, innermost first; 0 words skipped) then its Python frame pairs
 * (include/heapprof_format.h, "Python frames"), the pairs named from the image's name
 * records or code objects. Python frames have one sym_frame each (function co_qualname,
 * file and line; "unknown" when the pair or what it points to is bad). *out gets a
 * malloc'd array the caller frees (its sym_frames live until sym_close); returns how
 * many. s may be NULL (bare addresses, Python frames "unknown").
 */
unsigned sym_stack(struct sym *s, const uint64_t *words, unsigned n, struct sym_pc **out);

/*
 * The --python rule alone, on frames already looked up (sym_stack's second half, apart
 * for the tests): native[0..nn) innermost first, py[0..np) the Python frames innermost
 * first with entry[i] true at the outermost frame of each evaluation loop call. Writes
 * at most nn + np entries to out; returns how many.
 */
unsigned sym_python_merge(enum sym_python mode, const struct sym_pc *native, unsigned nn,
			  const struct sym_pc *py, const bool *entry, unsigned np,
			  struct sym_pc *out);

/* Is func the function of CPython's evaluation loop (3.11 to 3.13), which a group of
 * Python frames replaces? */
bool sym_python_is_eval(const char *func);

/*
 * After sym_open, before any lookup: the module records the scan found (decode.h).
 * Each unloaded module whose text no module of the list covers is reported at its old
 * bias, from the file at its path if its build-id matches, else from a file with its
 * build-id under the debug directories; the rest are warned about (once each).
 */
void sym_add_unloaded(struct sym *s, const struct hp_module_rec *mods, size_t n);

/* A module as the symbolizer placed it: [start, end) in the target, build-id in hex. */
struct sym_module_info {
	const char *path;	/* the module's file: the one found for it once its symbols
				 * were read, else as the core names it; lives until
				 * sym_close(); as the file system has it, not escaped:
				 * report_build() escapes the report's copy */
	const char *name;	/* as the core names it, whatever was read */
	uint64_t start, end;
	char build_id[129];	/* "" if none */
};

/* A module as a dump's memory places it, without symbols: what merging dumps needs to
 * tell the same code in two of them (session_fleet.c). */
struct sym_dump_module {
	const char *path;	/* as the dump names it: lives as long as its image */
	uint64_t lo, hi;	/* its address range in the target */
	uint64_t bias;		/* pc - bias: the offset addr2line -e path takes */
	bool exec;		/* ET_EXEC: at its link address in every process */
	char build_id[129];	/* hex, "" if the dump holds none */
};

/*
 * The modules of a dump that lists its mapped files (a core, a snapshot), placed from
 * the ELF headers in its memory, by lo; no file is opened and no libdwfl is made. *n
 * gets how many (0, and maybe NULL, when none). The caller frees the array.
 */
struct sym_dump_module *sym_dump_modules(const struct image *img, size_t *n);

/* Whether path names a libc by its file name (libc.so.6, libc-2.31.so). */
bool sym_libc_named(const char *path);

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
