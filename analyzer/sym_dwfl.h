/*
 * Inside the symbolizer (sym_dwfl.c reports modules, sym_lookup.c answers lookups,
 * sym_unwind.c unwinds threads): the state they share. Only sym_*.c include libdwfl;
 * everyone else sees sym.h.
 */
#ifndef HP_SYM_DWFL_H
#define HP_SYM_DWFL_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym.h"

/* elfutils' own default: the file's directory, its .debug/, then /usr/lib/debug */
#define SYM_DEFAULT_DEBUG_PATH ":.debug:/usr/lib/debug"
#define SYM_VDSO "[vdso]"	/* the kernel's name for it in /proc/PID/maps */
#define SYM_VDSO_MAX (1u << 20)	/* bytes of vDSO image read; today's are 2-3 pages */
#define SYM_MAX_BUILD_ID 64	/* bytes; GNU ld makes 20 (sha1), 16 (md5) or a given --build-id */

struct sym_mod {		/* ours, hung on each Dwfl_Module's userdata */
	struct sym *s;
	struct sym_mod *next;
	const char *display;	/* interned; what sym_pc.module says */
	bool is_program;
	bool warned;
	bool by_build_id;	/* its ELF is a file found by build-id (often its debug
				 * file): the module keeps the core's name */
};

struct sym_entry {
	struct sym_pc res;
	bool is_return_addr;
	struct sym_frame frames[];
};

struct sym_program {		/* what PROGRAM itself says, read before any reporting */
	bool ok;
	uint16_t e_type;
	uint16_t e_machine;
	unsigned char ei_class;
	uint64_t e_entry;
	unsigned char *build_id;
	size_t build_id_len;
	bool has_dwarf;
};

/* An open-addressed table of pointers: linear probing, power-of-two size (sym_lookup.c). */
struct ptab {
	void **v;
	size_t cap, n;
};

struct sym {
	Dwfl_Callbacks cb;	/* dwfl keeps a pointer to this and to debuginfo_path */
	char *debuginfo_path;
	Dwfl *dwfl;
	bool quiet;
	bool no_names;		/* --symbols=none (sym_opts) */
	char *program;		/* PROGRAM as given, or NULL */
	char *sysroot;
	struct sym_program prog;
	bool prog_mismatch;	/* PROGRAM is not the core's executable: never open it */
	Dwfl_Module *main_mod;	/* the target's executable, if known */
	const char *source;
	char *source_buf;	/* source when sym_add_unloaded() extended it */
	struct sym_mod *mods;
	const struct image *img;	/* the target's memory; outlives s */
	uint64_t vdso_lo, vdso_size;	/* the vDSO's image in it, if reported */
	void *vdso_buf;			/* its copy under the Elf libdwfl holds */

	struct ptab pcs;	/* struct sym_entry *: each pc looked up once */
	struct ptab strs;	/* char *: interned strings */
	struct ptab cus;	/* struct cu_index *: per compile unit, its functions by address */

	struct sym_unwind *unwind;	/* sym_unwind.c's threads, once asked */

	enum sym_python python;		/* --python (sym_python.c) */
	struct sym_py *py;		/* sym_python.c's named pairs, once asked */

	struct sym_frame oom_frame; /* answers when memory runs out mid-lookup */
	struct sym_pc oom_pc;
};

struct frame_vec {
	struct sym_frame *v;
	unsigned n, cap;
};

__attribute__((format(printf, 2, 3))) void sym_warn(const struct sym *s, const char *fmt, ...);

/* str kept once for the life of s; NULL when memory ran out */
const char *sym_intern(struct sym *s, const char *str);
/* name demangled when it is a C++ name, interned */
const char *sym_name(struct sym *s, const char *name);
/* the file the target names, under --sysroot when given; malloc'd */
char *sym_target_path(const struct sym *s, const char *name);
/* n bytes at p as lowercase hex into out (outlen bytes, NUL-terminated) */
void sym_hex(char *out, size_t outlen, const unsigned char *p, size_t n);
/*
 * Open path once, as an ELF file, through image_open_regular (sym_files.c), and read its
 * build-id from that descriptor: the fd (the caller closes it or hands it to libdwfl),
 * with the build-id in id (*idlen bytes, 0 if none); or -1. Unless what is NULL, a file
 * that is there but cannot be opened safely (a FIFO, a device) is warned about as "for
 * WHAT"; a missing file (errno ENOENT) or one that is no ELF file (errno ENOEXEC)
 * never is.
 */
int sym_file_open(const struct sym *s, const char *path, const char *what,
		  unsigned char *id, size_t idsize, int *idlen);
/* path's build-id: its length (0 if none), or -1 if it cannot be read; silent. */
int sym_file_build_id(const char *path, unsigned char *id, size_t idsize);

struct sym_mismatch {		/* the first file found with the wrong build-id */
	char *path;		/* malloc'd; NULL if none */
	char id[2 * SYM_MAX_BUILD_ID + 8];	/* its build-id in hex, or "none" */
};

/*
 * sym_file_open, kept only when the file's build-id is want (any file when wantlen is
 * 0): the fd, or -1. A file with another build-id is noted in mm (if not NULL, and only
 * the first).
 */
int sym_file_matching(const struct sym *s, const char *path, const char *what,
		      const unsigned char *want, size_t wantlen, struct sym_mismatch *mm);
/*
 * A file with build-id id under the debuginfo path's absolute entries (each --debug-dir,
 * SYSROOT/usr/lib/debug, /usr/lib/debug): DIR/.build-id/xx/rest.debug, the debug file,
 * which an unstripped old build also is, then DIR/.build-id/xx/rest. Its fd, with its
 * malloc'd name in *found; or -1.
 */
int sym_file_by_build_id(const struct sym *s, const unsigned char *id, size_t len, char **found);

struct sym_lm_names {		/* the dynamic linker's names, by each library's l_ld */
	struct { uint64_t l_ld; char *name; } *v;
	size_t n;
};

/*
 * Report the modules of the image's list of mapped files (sym_core.c) whose ELF headers
 * the dump holds, named as lm says where it knows them (the kernel's names resolve symlinks),
 * and the vDSO at vdso (AT_SYSINFO_EHDR, 0 if none), between dwfl_report_begin and
 * _end: how many, or -1 when memory ran out.
 */
int sym_report_core_files(struct sym *s, const struct image *img, uint64_t vdso,
			  const struct sym_lm_names *lm);
/* The ELF image of the vDSO reported at lo, read from the core; NULL if that is not it. */
Elf *sym_vdso_elf(struct sym *s, Dwarf_Addr lo);

/* free sym_unwind.c's state, after dwfl_end (sym_close) */
void sym_unwind_free(struct sym *s);

/* free sym_python.c's named pairs (sym_close) */
void sym_python_free(struct sym *s);

/* free the pc cache and the interned strings (sym_close) */
void sym_lookup_free(struct sym *s);

#endif
