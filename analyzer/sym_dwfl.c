/*
 * Symbolization with elfutils' libdwfl, part one: the target's modules (the core's
 * own list, placed by sym_core.c; the dynamic linker's list in its memory; or PROGRAM
 * alone; PROGRAM and --module in raw mode), the file of each, checked against the
 * core's build-id (sym_files.c opens them), separate debug info by build-id, --sysroot.
 * sym_lookup.c answers the lookups; target memory is image_*.c's.
 */
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"
#include "image.h"
#include "rd.h"
#include "sym.h"
#include "sym_dwfl.h"
#include "util.h"

#define SYM_DELETED " (deleted)"	/* the kernel's suffix for unlinked files in NT_FILE */
#define SYM_MAX_LIBS 512		/* link_map entries we follow: a loop in a bad core ends */

void sym_warn(const struct sym *s, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (s->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	warn("%s", line);
}

static char *path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, a);
	p[a] = '/';
	memcpy(p + a + 1, name, b + 1);
	return p;
}

/*
 * The debuginfo search path for dwfl_standard_find_debuginfo: each --debug-dir, then
 * SYSROOT/usr/lib/debug, then elfutils' default. Build-id lookups (DIR/.build-id/xx/
 * rest.debug) only use absolute entries, and a relative entry means a subdirectory of
 * the module's own directory, so relative --debug-dirs are made absolute here.
 */
static char *debug_path(struct sym *s, const struct sym_opts *o)
{
	size_t ndirs = o->debug_dirs ? o->ndebug_dirs : 0, n = 0;
	size_t len = sizeof(SYM_DEFAULT_DEBUG_PATH);
	char **dirs = calloc(ndirs + 1, sizeof(*dirs));
	char *path = NULL, *p, cwd[PATH_MAX];

	if (!dirs)
		return NULL;
	for (size_t i = 0; i < ndirs; i++) {
		const char *d = o->debug_dirs[i];

		if (!d || !*d)
			continue;
		if (strchr(d, ':')) {
			/* the path is ':'-separated and has no escape for it */
			sym_warn(s, "cannot use --debug-dir '%s': ':' in a directory name (use a symlink)", d);
			continue;
		}
		if (d[0] == '/')
			dirs[n] = strdup(d);
		else
			dirs[n] = getcwd(cwd, sizeof(cwd)) ? path_join(cwd, d) : NULL;
		if (dirs[n])
			len += strlen(dirs[n++]) + 1;
	}
	if (s->sysroot && !strchr(s->sysroot, ':') && (dirs[n] = path_join(s->sysroot, "usr/lib/debug")))
		len += strlen(dirs[n++]) + 1;
	path = malloc(len);
	if (path) {
		p = path;
		for (size_t i = 0; i < n; i++)
			p += sprintf(p, "%s:", dirs[i]);
		/* starts with ':' or '/', never '+' or '-', which would set CRC checking */
		strcpy(p, SYM_DEFAULT_DEBUG_PATH);
	}
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	return path;
}

static bool elf_has_dwarf(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			return true;
	}
	return false;
}

/*
 * Whether libdwfl may open path: a FIFO or a device named by a core (or left where a
 * library used to be) would block open() or read forever. A missing file is fine:
 * opening it just fails. Says which kind of file it is in *kind otherwise.
 */
static bool sym_openable(const char *path, const char **kind)
{
	struct stat st;

	if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
		return true;
	*kind = image_file_kind(st.st_mode);
	return false;
}

/* Read PROGRAM's header and build-id; a PROGRAM we cannot use is a warning, not an error. */
static void program_inspect(struct sym *s)
{
	struct sym_program *p = &s->prog;
	GElf_Ehdr eh;
	const void *id;
	ssize_t idlen;
	Elf *elf;
	char err[PATH_MAX + 64];
	const char *kind;
	int fd = image_open_regular(s->program, err, sizeof(err)), e = errno;

	if (fd < 0) {
		sym_warn(s, "cannot read PROGRAM '%s': %s (its frames show as addresses)", s->program,
			 sym_openable(s->program, &kind) ? strerror(e) : kind);
		return;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		sym_warn(s, "cannot read PROGRAM '%s': %s (its frames show as addresses)", s->program,
			 elf && elf_kind(elf) != ELF_K_ELF ? "not an ELF file" : elf_errmsg(-1));
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		sym_warn(s, "cannot use PROGRAM '%s': ELF type %u is not an executable", s->program,
			 (unsigned)eh.e_type);
		goto out;
	}
	p->ok = true;
	p->e_type = eh.e_type;
	p->e_machine = eh.e_machine;
	p->ei_class = eh.e_ident[EI_CLASS];
	p->e_entry = eh.e_entry;
	p->has_dwarf = elf_has_dwarf(elf);
	idlen = dwelf_elf_gnu_build_id(elf, &id);
	if (idlen > 0 && (p->build_id = malloc((size_t)idlen))) {
		memcpy(p->build_id, id, (size_t)idlen);
		p->build_id_len = (size_t)idlen;
	}
out:
	elf_end(elf);
	close(fd);
}

void sym_hex(char *out, size_t outlen, const unsigned char *p, size_t n)
{
	size_t k = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && k + 3 <= outlen; i++)
		k += (size_t)snprintf(out + k, outlen - k, "%02x", p[i]);
}

/*
 * Where a file the target used lives here: SYSROOT/path, or path itself; without the
 * kernel's " (deleted)" tag. NULL for names that are no path (a soname, "[vdso]").
 */
char *sym_target_path(const struct sym *s, const char *name)
{
	size_t n, dl = sizeof(SYM_DELETED) - 1;
	char *p;

	if (!name || name[0] != '/')
		return NULL;
	n = strlen(name);
	if (n > dl && !strcmp(name + n - dl, SYM_DELETED))
		n -= dl;
	p = malloc((s->sysroot ? strlen(s->sysroot) : 0) + n + 1);
	if (!p)
		return NULL;
	sprintf(p, "%s%.*s", s->sysroot ? s->sysroot : "", (int)n, name);
	return p;
}

/* Warn that no file has mod's build-id, naming the first that had another. */
static void warn_no_match(struct sym *s, Dwfl_Module *mod, const char *modname,
			  const unsigned char *want, size_t n, const struct sym_mismatch *mm)
{
	char id[2 * SYM_MAX_BUILD_ID + 1];
	Dwarf_Addr start = 0;

	dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	sym_hex(id, sizeof(id), want, n);
	sym_warn(s, "module '%s' at %#" PRIx64 " has build-id %s in the core, but '%s' has %s "
		 "(rebuilt or replaced since?): not naming its frames (they show as module+offset); "
		 "give the matching file as DIR/.build-id/%.2s/%s.debug with --debug-dir DIR",
		 modname, (uint64_t)start, id, mm->path, mm->id, id, id + 2);
}

/*
 * find_elf for core modules. dwfl_build_id_find_elf looks the module's build-id up
 * under the debuginfo path (and asks debuginfod where one is configured). Failing that:
 * PROGRAM for the executable, the file at the module's path in the target (under the
 * sysroot if any), then a debug file with its build-id, which an unstripped old build
 * is. Each is opened once and its build-id checked on that descriptor, which libdwfl
 * then reads: a file libdwfl opened by name itself would be taken whatever its build-id
 * (find_file trusts a file the callback names), and could be swapped for a FIFO after
 * our check. With no matching file the module keeps no ELF: its frames show as
 * module+offset rather than as the wrong functions of a rebuilt file.
 */
static int sym_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			char **file_name, Elf **elfp)
{
	struct sym_mod *m = *userdata;
	struct sym_mismatch mm = { 0 };
	const unsigned char *want = NULL;
	char what[PATH_MAX + 16], *path = NULL;
	GElf_Addr vaddr;
	struct sym *s;
	int fd = dwfl_build_id_find_elf(mod, userdata, modname, base, file_name, elfp), n;

	if (fd >= 0 || *elfp || !m)
		return fd;
	s = m->s;
	if (!strcmp(modname, SYM_VDSO)) {
		*elfp = sym_vdso_elf(s, base);
		return -1;
	}
	n = dwfl_module_build_id(mod, &want, &vaddr);
	if (n < 0 || n > SYM_MAX_BUILD_ID)
		n = 0;
	snprintf(what, sizeof(what), "module '%s'", modname);
	/* without build-ids, only the entry point check says whether PROGRAM fits */
	if (m->is_program && s->prog.ok && (n || !s->prog_mismatch) &&
	    (fd = sym_file_matching(s, s->program, what, want, (size_t)n, NULL)) >= 0)
		path = strdup(s->program);
	if (fd < 0 && (path = sym_target_path(s, modname)) &&
	    (fd = sym_file_matching(s, path, what, want, (size_t)n, &mm)) < 0) {
		free(path);
		path = NULL;
	}
	if (fd < 0 && n && (fd = sym_file_by_build_id(s, want, (size_t)n, &path)) >= 0)
		m->by_build_id = true;
	free(*file_name);
	*file_name = fd >= 0 ? path : NULL;
	if (fd < 0 && mm.path) {
		warn_no_match(s, mod, modname, want, (size_t)n, &mm);
		m->warned = true;	/* no second warning from the lookup */
	}
	free(mm.path);
	return fd;
}

/*
 * The standard search (build-id under each debuginfo_path entry, then .gnu_debuglink
 * by name). Failing that, when the executable came from a stripped copy (the path in
 * the core) and PROGRAM is the unstripped build of the same build-id, PROGRAM is the
 * debug file.
 */
static int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct sym_mod *m = *userdata;
	const unsigned char *bits;
	GElf_Addr vaddr;
	struct sym *s;
	int n, fd;

	if (m && m->s->no_names)
		return -1;	/* (nor a debuginfod server asked) */
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						 debuglink_file, debuglink_crc, debuginfo_file_name);

	if (fd >= 0 || !m || !m->is_program)
		return fd;
	s = m->s;
	if (!s->prog.ok || !s->prog.has_dwarf || s->prog_mismatch || !s->prog.build_id_len ||
	    (file_name && !strcmp(file_name, s->program)))
		return fd;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0 || (size_t)n != s->prog.build_id_len || memcmp(bits, s->prog.build_id, (size_t)n))
		return fd;
	char err[64];

	fd = image_open_regular(s->program, err, sizeof(err));
	if (fd >= 0) {
		free(*debuginfo_file_name);
		*debuginfo_file_name = strdup(s->program);
	}
	return fd;
}

static bool new_dwfl(struct sym *s)
{
	if (s->dwfl)
		dwfl_end(s->dwfl);
	s->main_mod = NULL;
	s->dwfl = dwfl_begin(&s->cb);
	if (!s->dwfl) {
		sym_warn(s, "cannot start libdwfl: %s (frames show as addresses)", dwfl_errmsg(-1));
		return false;
	}
	dwfl_report_begin(s->dwfl);
	return true;
}

static int attach_mod(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		      void *arg)
{
	struct sym *s = arg;
	struct sym_mod *m = calloc(1, sizeof(*m));

	(void)name;
	(void)start;
	if (!m)
		return DWARF_CB_ABORT;
	m->s = s;
	m->is_program = mod == s->main_mod;
	m->next = s->mods;
	s->mods = m;
	*userdata = m;
	return DWARF_CB_OK;
}

/* Give every module our record; libdwfl asks for ELF files only later, in lookups. */
static void attach_mods(struct sym *s)
{
	while (s->mods) {
		struct sym_mod *next = s->mods->next;

		free(s->mods);
		s->mods = next;
	}
	if (s->dwfl)
		dwfl_getmodules(s->dwfl, attach_mod, s, 0);
}

struct core_info {
	bool has_file_note;	/* NT_FILE: the kernel's (or gdb's) list of mapped files */
	uint64_t at_entry;	/* from NT_AUXV; 0 if none */
	uint64_t at_vdso;	/* AT_SYSINFO_EHDR: where the vDSO is; 0 if none */
	char *unsafe_name;	/* a file the core names that is a FIFO or device; malloc'd */
	const char *unsafe_kind; /* what it is: "a FIFO", ... */
};

/* Note a name libdwfl would open() that is not a regular file; false once one is found. */
static bool note_unsafe(struct core_info *ci, const char *name)
{
	const char *kind;

	if (ci->unsafe_name || sym_openable(name, &kind))
		return !ci->unsafe_name;
	ci->unsafe_name = strdup(name);
	ci->unsafe_kind = kind;
	return false;
}

/*
 * Whether the dump lists mapped files and names a FIFO or device among them (libdwfl
 * opens each name as it stands while listing modules: check them first), and its
 * AT_ENTRY and vDSO, as the image's reader reported them.
 */
static void core_notes(const struct image *img, struct core_info *ci)
{
	ci->has_file_note = img->have_files;
	ci->at_entry = img->at_entry;
	ci->at_vdso = img->at_vdso;
	for (size_t i = 0; i < img->nfile_names && note_unsafe(ci, img->file_names[i]); i++)
		;
}

/*
 * True when PROGRAM cannot be the core's executable: different build-ids, or an entry
 * point it could not have had. Warns once.
 */
static bool program_mismatch(struct sym *s, Dwfl_Module *main, uint64_t at_entry)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	char a[2 * 64 + 1], b[2 * 64 + 1];
	int n = dwfl_module_build_id(main, &bits, &vaddr);

	if (n > 0 && s->prog.build_id_len) {
		if ((size_t)n == s->prog.build_id_len && !memcmp(bits, s->prog.build_id, (size_t)n))
			return false;
		sym_hex(a, sizeof(a), bits, (size_t)n);
		sym_hex(b, sizeof(b), s->prog.build_id, s->prog.build_id_len);
		sym_warn(s, "PROGRAM '%s' does not match the core (build-id %s in the core, %s in "
			 "PROGRAM): looking for the executable by its build-id and by the path "
			 "the core names", s->program, a, b);
		return true;
	}
	/* no build-ids to compare: a fixed-address executable must enter where the core did,
	 * a PIE at a page-aligned distance from it */
	if (at_entry && ((s->prog.e_type == ET_EXEC && at_entry != s->prog.e_entry) ||
			 (s->prog.e_type == ET_DYN && ((at_entry - s->prog.e_entry) & 0xfff)))) {
		sym_warn(s, "PROGRAM '%s' does not match the core (entry point %#" PRIx64
			 " in the core, %#" PRIx64 " in PROGRAM): using the files the core names "
			 "instead", s->program, at_entry, s->prog.e_entry);
		return true;
	}
	return false;
}

/* libdwfl's own listing, for an input that is an ELF core; none for other inputs. */
static int core_report(struct sym *s, Elf *core, const char *exe, uint64_t at_entry)
{
	int n;

	if (!new_dwfl(s))
		return -1;
	n = core ? dwfl_core_file_report(s->dwfl, core, exe) : 0;
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (n > 0 && at_entry)
		s->main_mod = dwfl_addrmodule(s->dwfl, at_entry);
	return n;
}

/* Report PROGRAM alone at base; base is ignored for a fixed-address executable. */
static bool report_program(struct sym *s, uint64_t base)
{
	unsigned char id[SYM_MAX_BUILD_ID];
	Dwfl_Module *m;
	int fd, n;

	if (!s->prog.ok || (fd = sym_file_open(s, s->program, "PROGRAM", id, sizeof(id), &n)) < 0)
		return false;
	/* add_p_vaddr: base is the bias added to every p_vaddr, as --load-base means */
	m = dwfl_report_elf(s->dwfl, s->program, s->program, fd, base, true);
	if (!m) {
		close(fd);	/* libdwfl keeps the descriptor only on success */
		sym_warn(s, "cannot use PROGRAM '%s': %s", s->program, dwfl_errmsg(-1));
		return false;
	}
	s->main_mod = m;
	return true;
}

/* A target word at addr in the core's memory. */
static bool mem_word(const struct image *img, uint64_t addr, uint64_t *v)
{
	unsigned char b[8];
	struct rd r = { b, img->wsize, img->big_endian };

	return image_read(img, addr, b, img->wsize) && rd_word(&r, img->wsize, v);
}

/* The string at addr in the core's memory; false if absent or longer than len - 1. */
static bool mem_string(const struct image *img, uint64_t addr, char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (!image_read(img, addr + i, &buf[i], 1))
			return false;
		if (!buf[i])
			return true;
	}
	return false;
}

/*
 * The string at addr read from the executable's file instead, for memory a core left
 * out: qemu-user dumps no code segments, and ld.so's l_name points into PT_INTERP.
 */
static bool exe_string(Dwfl_Module *exe, uint64_t addr, char *buf, size_t len)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(exe, &bias);
	size_t phnum;

	if (!elf || elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		uint64_t off = addr - bias;
		Elf_Data *d;
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || off < ph.p_vaddr ||
		    off - ph.p_vaddr >= ph.p_filesz)
			continue;
		off -= ph.p_vaddr;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + off),
					 ph.p_filesz - off < len ? ph.p_filesz - off : len, ELF_T_BYTE);
		if (d && memchr(d->d_buf, '\0', d->d_size)) {
			strcpy(buf, d->d_buf);
			return true;
		}
	}
	return false;
}

/*
 * Where the dynamic linker left &r_debug: in DT_DEBUG's value, or on MIPS, whose
 * .dynamic is read-only, in the word that DT_MIPS_RLD_MAP_REL (relative to its own
 * entry) or DT_MIPS_RLD_MAP points to. libdwfl knows only DT_DEBUG. 0 if none.
 */
static uint64_t r_debug_addr(const struct image *img, Dwfl_Module *exe)
{
	uint64_t mask = img->wsize == 4 ? UINT32_MAX : UINT64_MAX;
	GElf_Addr bias;
	GElf_Ehdr eh;
	Elf *elf = dwfl_module_getelf(exe, &bias);
	size_t phnum;

	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &phnum) != 0)
		return 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		size_t ent = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_DYNAMIC || !ent)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_DYN);
		for (size_t j = 0; d && j < d->d_size / ent; j++) {
			uint64_t at = bias + ph.p_vaddr + j * ent, v = 0;
			bool mips = eh.e_machine == EM_MIPS;
			GElf_Dyn dyn;

			if (!gelf_getdyn(d, (int)j, &dyn))
				break;
			if ((dyn.d_tag == DT_DEBUG && mem_word(img, (at + ent / 2) & mask, &v)) ||
			    (mips && dyn.d_tag == DT_MIPS_RLD_MAP_REL &&
			     mem_word(img, (at + dyn.d_un.d_val) & mask, &v)) ||
			    (mips && dyn.d_tag == DT_MIPS_RLD_MAP &&
			     mem_word(img, (bias + dyn.d_un.d_ptr) & mask, &v)))
				if (v)
					return v;
		}
	}
	return 0;
}

/* Whether the ELF file open on fd is for the core's machine and word size. */
static bool fd_fits(int fd, const struct image *img)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	bool ok = elf && gelf_getehdr(elf, &eh) && eh.e_machine == img->machine &&
		  (eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8u : 4u) == img->wsize;

	elf_end(elf);
	return ok;
}

/*
 * The file of a library the core's link_map names: SYSROOT/name, else name itself
 * (where qemu-user's -L also falls back), if it is an ELF file for the core's machine.
 * Its fd (opened once, see sym_file_open), with the path in *file (malloc'd); or -1.
 */
static int link_map_file(struct sym *s, const struct image *img, const char *name, char **file)
{
	char *paths[2] = { sym_target_path(s, name), s->sysroot ? strdup(name) : NULL };
	char what[PATH_MAX + 32];
	unsigned char id[SYM_MAX_BUILD_ID];
	int fd = -1, n;

	snprintf(what, sizeof(what), "library '%s'", name);
	*file = NULL;
	for (int i = 0; i < 2; i++) {
		if (fd < 0 && paths[i] && (fd = sym_file_open(s, paths[i], what, id, sizeof(id), &n)) >= 0 &&
		    !fd_fits(fd, img)) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0 && !*file)
			*file = paths[i];
		else
			free(paths[i]);
	}
	if (fd < 0)
		sym_warn(s, "cannot find library '%s' of the core's link_map%s (its frames show as "
			 "addresses)", name, s->sysroot ? " under the sysroot" : "; try --sysroot");
	return fd;
}

typedef bool (*link_map_fn)(struct sym *s, const struct image *img, uint64_t l_addr,
			    uint64_t l_ld, const char *name, void *arg);

/*
 * Call fn for each library with a path name in the dynamic linker's list in the core's
 * memory (found through s->main_mod's DT_DEBUG), until fn returns false.
 */
static void link_map_each(struct sym *s, const struct image *img, link_map_fn fn, void *arg)
{
	uint64_t w = img->wsize, r_debug, lm = 0, f[4];
	char name[PATH_MAX];

	if (!s->main_mod || !(r_debug = r_debug_addr(img, s->main_mod)) ||
	    !mem_word(img, r_debug + w, &lm))
		return;
	/* struct link_map starts l_addr (the bias), l_name, l_ld, l_next: one word each */
	for (unsigned n = 0; lm && n < SYM_MAX_LIBS; n++, lm = f[3]) {
		if (!mem_word(img, lm, &f[0]) || !mem_word(img, lm + w, &f[1]) ||
		    !mem_word(img, lm + 2 * w, &f[2]) || !mem_word(img, lm + 3 * w, &f[3]))
			break;
		if (!f[2] || (!mem_string(img, f[1], name, sizeof(name)) &&
			      !exe_string(s->main_mod, f[1], name, sizeof(name))) || name[0] != '/')
			continue;	/* the executable or the vDSO */
		if (!fn(s, img, f[0], f[2], name, arg))
			return;
	}
}

/* Report PROGRAM alone where AT_ENTRY says it was loaded, unless it is not the core's. */
static void report_program_at_entry(struct sym *s, uint64_t at_entry)
{
	if (s->main_mod || !s->prog.ok || s->prog_mismatch)
		return;
	dwfl_report_begin_add(s->dwfl);
	report_program(s, s->prog.e_type == ET_DYN && at_entry ? at_entry - s->prog.e_entry : 0);
	dwfl_report_end(s->dwfl, NULL, NULL);
}

static bool add_library(struct sym *s, const struct image *img, uint64_t l_addr, uint64_t l_ld,
			const char *name, void *arg)
{
	unsigned *added = arg;
	char *file;
	int fd;

	if (dwfl_addrmodule(s->dwfl, l_ld))
		return true;	/* known already */
	fd = link_map_file(s, img, name, &file);
	if (fd < 0)
		return true;
	dwfl_report_begin_add(s->dwfl);
	if (dwfl_report_elf(s->dwfl, name, file, fd, l_addr, true)) {
		(*added)++;
	} else {
		close(fd);
		sym_warn(s, "cannot use '%s': %s", file, dwfl_errmsg(-1));
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	free(file);
	return true;
}

/*
 * For cores without NT_FILE: report what libdwfl's own walk of the dynamic linker's
 * list left out. It opens each name on this host as it stands (no sysroot), and on MIPS
 * finds no list at all; then the executable is PROGRAM at the bias AT_ENTRY gives.
 * Returns how many libraries were added.
 */
static unsigned link_map_complete(struct sym *s, const struct image *img, uint64_t at_entry)
{
	unsigned added = 0;

	report_program_at_entry(s, at_entry);
	link_map_each(s, img, add_library, &added);
	return added;
}

static bool find_unsafe(struct sym *s, const struct image *img, uint64_t l_addr, uint64_t l_ld,
			const char *name, void *arg)
{
	(void)s;
	(void)img;
	(void)l_addr;
	(void)l_ld;
	return note_unsafe(arg, name);
}

/*
 * libdwfl's dwfl_core_file_report, used for cores without NT_FILE, opens every name in
 * the link_map as it stands, with a plain open(): a FIFO there would block it forever.
 * Check them first, through PROGRAM's DT_DEBUG (libdwfl goes through AT_PHDR; with the
 * right PROGRAM both lead to the same list). elfutils 0.188 takes no descriptor there,
 * so a swap after this check still reaches libdwfl's open().
 */
static void check_link_map_names(struct sym *s, const struct image *img, struct core_info *ci)
{
	if (ci->unsafe_name || !s->prog.ok || (s->prog.e_type == ET_DYN && !ci->at_entry) ||
	    !new_dwfl(s))
		return;
	dwfl_report_end(s->dwfl, NULL, NULL);
	report_program_at_entry(s, ci->at_entry);
	link_map_each(s, img, find_unsafe, ci);
	s->main_mod = NULL;
}

static bool collect_name(struct sym *s, const struct image *img, uint64_t l_addr, uint64_t l_ld,
			 const char *name, void *arg)
{
	struct sym_lm_names *lm = arg;
	void *v = realloc(lm->v, (lm->n + 1) * sizeof(*lm->v));
	char *dup = strdup(name);

	(void)s;
	(void)img;
	(void)l_addr;
	if (!v || !dup) {
		free(dup);
		if (v)
			lm->v = v;
		return false;
	}
	lm->v = v;
	lm->v[lm->n].l_ld = l_ld;
	lm->v[lm->n++].name = dup;
	return true;
}

/* One listing of the NT_FILE modules; the number placed. */
static int report_files(struct sym *s, const struct image *img, const struct core_info *ci,
			const struct sym_lm_names *lm)
{
	int n;

	if (!new_dwfl(s))
		return -1;
	n = sym_report_core_files(s, img, ci->at_vdso, lm);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (n > 0 && ci->at_entry)
		s->main_mod = dwfl_addrmodule(s->dwfl, ci->at_entry);
	attach_mods(s);		/* sym_find_elf needs them to open the executable */
	return n;
}

/*
 * A core with NT_FILE: the modules it lists, placed from their headers in the core
 * (sym_core.c), so that libdwfl opens no file the core names (dwfl_core_file_report
 * would, by name, more than once). A first listing reads the link_map, through the
 * executable's file, for the libraries' names as the program knew them (a quiet one:
 * its warnings come with the second); the second uses them, and libraries whose
 * headers the core left out come from the link_map. False when none could be placed.
 */
static bool report_file_note(struct sym *s, const struct image *img, const struct core_info *ci,
			     const char *what)
{
	struct sym_lm_names lm = { 0 };
	bool quiet = s->quiet;
	unsigned added = 0;
	int n;

	if (ci->unsafe_name)
		sym_warn(s, "'%s', named in '%s', is not a regular file (%s): not opening it",
			 ci->unsafe_name, what, ci->unsafe_kind);
	s->quiet = true;
	n = report_files(s, img, ci, NULL);
	if (n > 0) {
		/* again even without names: the quiet listing may have looked for files */
		link_map_each(s, img, collect_name, &lm);
		n = report_files(s, img, ci, &lm);
	}
	s->quiet = quiet;
	for (size_t i = 0; i < lm.n; i++)
		free(lm.v[i].name);
	free(lm.v);
	if (n <= 0)
		return false;
	if (s->main_mod && s->prog.ok && program_mismatch(s, s->main_mod, ci->at_entry))
		s->prog_mismatch = true;
	report_program_at_entry(s, ci->at_entry);	/* an executable NT_FILE left out */
	link_map_each(s, img, add_library, &added);
	s->source = "core file notes";
	return true;
}

static void open_core(struct sym *s, const struct image *img)
{
	struct core_info ci = { 0 };
	const char *what = img->path ? img->path : "the core";
	int n;

	core_notes(img, &ci);
	if (ci.has_file_note && report_file_note(s, img, &ci, what)) {
		free(ci.unsafe_name);
		return;
	}
	check_link_map_names(s, img, &ci);
	if (ci.unsafe_name) {
		sym_warn(s, "'%s', named in '%s', is not a regular file (%s): not opening it, "
			 "nor the other files the core names; listing modules from its link_map",
			 ci.unsafe_name, what, ci.unsafe_kind);
		n = new_dwfl(s) ? 0 : -1;
		if (n == 0)
			dwfl_report_end(s->dwfl, NULL, NULL);
	} else {
		n = core_report(s, img->dwfl_core, s->prog.ok ? s->program : NULL, ci.at_entry);
	}
	if (n > 0 && s->main_mod && s->prog.ok && program_mismatch(s, s->main_mod, ci.at_entry)) {
		/* dwfl_build_id_find_elf would open PROGRAM for the executable: list again
		 * without it so the build-id or NT_FILE path finds the right file */
		s->prog_mismatch = true;
		n = core_report(s, img->dwfl_core, NULL, ci.at_entry);
	}
	if (n >= 0 && (!ci.has_file_note || ci.unsafe_name) &&
	    link_map_complete(s, img, ci.at_entry) && n == 0)
		n = 1;
	if (n > 0 || (ci.unsafe_name && s->main_mod)) {
		s->source = ci.has_file_note && !ci.unsafe_name ? "core file notes"
								: "link_map in core memory";
		free(ci.unsafe_name);
		return;
	}
	free(ci.unsafe_name);
	sym_warn(s, "cannot list modules in '%s': %s (symbolizing PROGRAM only)", what,
		 n < 0 ? dwfl_errmsg(-1) : "no ELF headers or link_map found");
	if (!new_dwfl(s))
		return;
	if (s->prog.ok) {
		uint64_t base = 0;

		if (s->prog.e_type == ET_DYN) {
			/* a PIE's bias is where the core entered minus where the file enters */
			if (ci.at_entry)
				base = ci.at_entry - s->prog.e_entry;
			else
				sym_warn(s, "no entry point (AT_ENTRY) in '%s': assuming PROGRAM '%s' "
					 "was loaded at 0", what, s->program);
		}
		if (report_program(s, base))
			s->source = "PROGRAM only";
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
}

static void check_raw_program(struct sym *s, const struct sym_opts *o)
{
	const struct image *img = o->img;

	if (!s->prog.ok)
		return;
	if (img && img->machine && s->prog.e_machine != img->machine)
		sym_warn(s, "PROGRAM '%s' is for machine %u but the memory image for machine %u",
			 s->program, (unsigned)s->prog.e_machine, (unsigned)img->machine);
	if (img && img->wsize && (s->prog.ei_class == ELFCLASS64 ? 8u : 4u) != img->wsize)
		sym_warn(s, "PROGRAM '%s' is a %u-bit ELF but the memory image has %u-byte words",
			 s->program, s->prog.ei_class == ELFCLASS64 ? 64u : 32u, img->wsize);
	/* a PIE without --load-base sits at 0; main.c already says its frames won't resolve */
	if (s->prog.e_type == ET_EXEC && o->have_load_base && o->load_base)
		sym_warn(s, "ignoring --load-base for PROGRAM '%s': it is not position-independent",
			 s->program);
}

/* Raw mode: PROGRAM at --load-base and each --module at its base, nothing else. */
static void open_raw(struct sym *s, const struct sym_opts *o)
{
	bool any;

	if (!new_dwfl(s))
		return;
	check_raw_program(s, o);
	any = report_program(s, o->have_load_base ? o->load_base : 0);
	for (size_t i = 0; o->modules && i < o->nmodules; i++) {
		const char *path = o->modules[i].path;
		unsigned char id[SYM_MAX_BUILD_ID];
		char *alt = NULL;
		int fd, n, e;

		if (!path)
			continue;
		/* a target's path that only exists under the sysroot */
		fd = sym_file_open(s, path, "--module", id, sizeof(id), &n);
		if (fd < 0 && s->sysroot && (alt = sym_target_path(s, path)) &&
		    (fd = sym_file_open(s, alt, "--module", id, sizeof(id), &n)) >= 0)
			path = alt;
		e = errno;
		if (fd >= 0 && dwfl_report_elf(s->dwfl, o->modules[i].path, path, fd,
					       o->modules[i].base, true)) {
			any = true;
		} else if (fd >= 0) {
			close(fd);
			sym_warn(s, "cannot use --module '%s': %s", o->modules[i].path,
				 dwfl_errmsg(-1));
		} else if (e == ENOENT || e == ENOEXEC) {
			sym_warn(s, "cannot use --module '%s': %s", o->modules[i].path,
				 e == ENOENT ? strerror(e) : "not an ELF file");
		}
		free(alt);
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (any)
		s->source = o->nmodules ? "PROGRAM and --module" : "PROGRAM only";
}

/*
 * Nearly every native stack ends in the same start-up frames, in the program and in
 * libc (_start, main, __libc_start_main): their debug info is read here, while the
 * scan runs beside this thread, not after it when the report names the first frame.
 * Reading it means inflating compressed sections (libc's separate debug file: a fifth
 * of the plain report's time on a 4 GiB core).
 */
static int warm_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		       void *arg)
{
	const struct sym_mod *m = *userdata;
	Dwarf_Addr bias;

	(void)start;
	(void)arg;
	if ((m && m->is_program) || sym_libc_named(name))
		dwfl_module_getdwarf(mod, &bias);
	return DWARF_CB_OK;
}

struct sym *sym_open(const struct sym_opts *o)
{
	struct sym *s = o ? calloc(1, sizeof(*s)) : NULL;
	const struct image *img = o ? o->img : NULL;

	if (!s)
		return NULL;
	elf_version(EV_CURRENT);
	s->quiet = o->quiet;
	s->no_names = o->no_names;
	s->python = o->python;
	s->source = "none";
	if (o->sysroot) {
		/* SYSROOT is prefixed to absolute paths: no trailing '/', and "/" is none */
		size_t n = strlen(o->sysroot);

		while (n > 0 && o->sysroot[n - 1] == '/')
			n--;
		if (n)
			s->sysroot = strndup(o->sysroot, n);
	}
	s->program = o->program ? strdup(o->program) : NULL;
	s->img = img;
	s->debuginfo_path = debug_path(s, o);
	s->cb.find_elf = sym_find_elf;
	s->cb.find_debuginfo = sym_find_debuginfo;
	s->cb.debuginfo_path = s->debuginfo_path ? &s->debuginfo_path : NULL;
	if (s->program)
		program_inspect(s);
	/* a dump that says what the process was (its files, auxv, threads) lists its
	 * modules itself; raw images have only PROGRAM and --module */
	if (img && (img->dwfl_core || img->have_files || img->have_auxv || img->nthreads))
		open_core(s, img);
	else
		open_raw(s, o);
	attach_mods(s);
	if (s->dwfl && !s->no_names)
		dwfl_getmodules(s->dwfl, warm_module, NULL, 0);
	return s;
}

/*
 * Unloaded modules: shared objects dlclose() unmapped before the dump, known only by
 * their module records (decode.h). Their frames still point into the old text range.
 */

struct overlap {
	uint64_t start, end;
	Dwfl_Module *mod;
};

static int find_overlap(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			void *arg)
{
	struct overlap *o = arg;
	Dwarf_Addr lo, hi;

	(void)userdata;
	(void)name;
	(void)start;
	if (!dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL) || lo >= o->end ||
	    hi <= o->start)
		return DWARF_CB_OK;
	o->mod = mod;
	return DWARF_CB_ABORT;
}

static bool module_same(const struct hp_module_rec *a, const struct hp_module_rec *b)
{
	return a->bias == b->bias && a->text_start == b->text_start && a->text_end == b->text_end &&
	       a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len) && !strcmp(a->path, b->path);
}

/* Report one unloaded module; true when its frames can be named. */
static bool add_unloaded(struct sym *s, const struct hp_module_rec *m)
{
	struct overlap o = { m->text_start, m->text_end, NULL };
	char id[2 * 24 + 16] = "none", *file = NULL, *name;
	unsigned char now[SYM_MAX_BUILD_ID];
	Dwfl_Module *mod;
	void **ud = NULL;
	int nnow = -1, fd;

	if (m->build_id_len)
		sym_hex(id, sizeof(id), m->build_id, m->build_id_len);
	/* what a lookup there would find first (libdwfl may stretch a core's module over a
	 * gap), then any module whose range meets the text */
	o.mod = dwfl_addrmodule(s->dwfl, m->text_start);
	if (!o.mod)
		o.mod = dwfl_addrmodule(s->dwfl, m->text_end - 1);
	if (!o.mod)
		dwfl_getmodules(s->dwfl, find_overlap, &o, 0);
	if (o.mod) {
		const char *cur = dwfl_module_info(o.mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

		sym_warn(s, "unloaded '%s' (build-id %s) had its code at [%#" PRIx64 ", %#" PRIx64
			 "), where '%s' is now: frames there are named from '%s' but may belong "
			 "to the unloaded one", m->path, id, m->text_start, m->text_end,
			 cur ? cur : "?", cur ? cur : "?");
		return false;
	}
	name = sym_target_path(s, m->path);
	fd = name ? sym_file_open(s, name, NULL, now, sizeof(now), &nnow) : -1;
	if (fd >= 0 && ((size_t)nnow != m->build_id_len || memcmp(now, m->build_id, (size_t)nnow))) {
		close(fd);
		fd = -1;
	} else if (fd >= 0) {
		file = name;
		name = NULL;
	}
	if (fd < 0 && (fd = sym_file_by_build_id(s, m->build_id, m->build_id_len, &file)) < 0) {
		char also[2 * 64 + 128] = "";

		if (name && nnow >= 0) {
			strcpy(also, " ('");
			strcat(also, m->path);
			strcat(also, "' now has build-id ");
			if (nnow)
				sym_hex(also + strlen(also), sizeof(also) - strlen(also) - 2, now,
					(size_t)nnow);
			else
				strcat(also, "none");
			strcat(also, ")");
		}
		free(name);
		sym_warn(s, "frames in unloaded %s (build-id %s) not symbolized: file not found%s%s",
			 m->path, id, also, m->build_id_len && !s->sysroot ? "; try --debug-dir" : "");
		return false;
	}
	free(name);
	dwfl_report_begin_add(s->dwfl);
	mod = dwfl_report_elf(s->dwfl, m->path, file, fd, m->bias, true);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (!mod) {
		close(fd);	/* libdwfl keeps the descriptor only on success */
		sym_warn(s, "frames in unloaded %s (build-id %s) not symbolized: cannot use '%s': %s",
			 m->path, id, file, dwfl_errmsg(-1));
		free(file);
		return false;
	}
	free(file);
	/* our record on it, as attach_mods gives the others, named as the report shows it */
	if (dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL) && ud && !*ud) {
		struct sym_mod *sm = calloc(1, sizeof(*sm));
		char *disp = malloc(strlen(m->path) + sizeof(" (unloaded)"));

		if (sm) {
			sm->s = s;
			sm->next = s->mods;
			s->mods = sm;
			*ud = sm;
			if (disp)
				sprintf(disp, "%s (unloaded)", m->path);
			sm->display = disp ? sym_intern(s, disp) : NULL;
		}
		free(disp);
	}
	return true;
}

void sym_add_unloaded(struct sym *s, const struct hp_module_rec *mods, size_t n)
{
	size_t added = 0, len;
	const char *first = NULL;

	if (!s || !s->dwfl)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct hp_module_rec *m = &mods[i];
		bool dup = false;

		if (!(m->flags & HP2_MOD_UNLOADED))
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = (mods[j].flags & HP2_MOD_UNLOADED) && module_same(&mods[j], m);
		if (!dup && add_unloaded(s, m) && !added++)
			first = m->path;
	}
	if (!added)
		return;
	len = strlen(s->source) + strlen(first) + 96;
	free(s->source_buf);
	if (!(s->source_buf = malloc(len)))
		return;
	if (added == 1)
		snprintf(s->source_buf, len, "%s; module records: %s (unloaded)", s->source, first);
	else
		snprintf(s->source_buf, len, "%s; module records: %zu modules (unloaded)", s->source,
			 added);
	s->source = s->source_buf;
}

const char *sym_source(const struct sym *s)
{
	return s ? s->source : "none";
}

void sym_close(struct sym *s)
{
	if (!s)
		return;
	sym_python_free(s);
	sym_lookup_free(s);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	s->dwfl = NULL;
	sym_unwind_free(s);
	attach_mods(s);
	free(s->debuginfo_path);
	free(s->program);
	free(s->sysroot);
	free(s->prog.build_id);
	free(s->source_buf);
	free(s->vdso_buf);
	free(s);
}
