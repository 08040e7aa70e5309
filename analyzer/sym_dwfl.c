/*
 * Symbolization with elfutils' libdwfl: the target's modules (the core's own list, or
 * PROGRAM and --module in raw mode), then per pc the function, its inline chain and
 * file:line, each pc once. The only file that includes libdwfl; target memory is image_*.c's.
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
#include <unistd.h>

#include "image.h"
#include "rd.h"
#include "sym.h"
#include "util.h"

/* elfutils' own default: the file's directory, its .debug/, then /usr/lib/debug */
#define SYM_DEFAULT_DEBUG_PATH ":.debug:/usr/lib/debug"
#define SYM_DELETED " (deleted)"	/* the kernel's suffix for unlinked files in NT_FILE */
#define SYM_MAX_LIBS 512		/* link_map entries we follow: a loop in a bad core ends */

/* libstdc++'s demangler (extern "C"), declared here so that no C++ header is needed */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct sym_mod {		/* ours, hung on each Dwfl_Module's userdata */
	struct sym *s;
	struct sym_mod *next;
	const char *display;	/* interned; what sym_pc.module says */
	bool is_program;
	bool warned;
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

struct sym {
	Dwfl_Callbacks cb;	/* dwfl keeps a pointer to this and to debuginfo_path */
	char *debuginfo_path;
	Dwfl *dwfl;
	bool quiet;
	char *program;		/* PROGRAM as given, or NULL */
	char *sysroot;
	struct sym_program prog;
	bool prog_mismatch;	/* PROGRAM is not the core's executable: never open it */
	Dwfl_Module *main_mod;	/* the target's executable, if known */
	const char *source;
	struct sym_mod *mods;

	struct sym_entry **tab;	/* pc cache: open addressing, power-of-two size */
	size_t tab_cap, tab_n;
	char **strs;		/* interned strings, same scheme */
	size_t strs_cap, strs_n;

	struct sym_frame oom_frame; /* answers when memory runs out mid-lookup */
	struct sym_pc oom_pc;
};

struct frame_vec {
	struct sym_frame *v;
	unsigned n, cap;
};

__attribute__((format(printf, 2, 3))) static void sym_warn(const struct sym *s, const char *fmt, ...)
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

static uint64_t hash_bytes(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return h;
}

static uint64_t hash_pc(uint64_t pc, bool ret)
{
	uint64_t h = (pc ^ (ret ? 0x5bd1e995ULL : 0)) * 0x9e3779b97f4a7c15ULL;

	return h ^ (h >> 29);
}

static bool strs_grow(struct sym *s)
{
	size_t cap = s->strs_cap ? s->strs_cap * 2 : 256;
	char **t = calloc(cap, sizeof(*t));

	if (!t)
		return false;
	for (size_t i = 0; i < s->strs_cap; i++) {
		size_t j;

		if (!s->strs[i])
			continue;
		for (j = hash_bytes(s->strs[i]) & (cap - 1); t[j]; j = (j + 1) & (cap - 1))
			;
		t[j] = s->strs[i];
	}
	free(s->strs);
	s->strs = t;
	s->strs_cap = cap;
	return true;
}

/*
 * One copy of each string, owned by s: results stay valid whatever libdw later frees,
 * and the thousands of frames of one function share one name. NULL in, NULL out.
 */
static const char *intern(struct sym *s, const char *str)
{
	size_t i;

	if (!str)
		return NULL;
	if (2 * (s->strs_n + 1) > s->strs_cap && !strs_grow(s))
		return NULL;
	for (i = hash_bytes(str) & (s->strs_cap - 1); s->strs[i]; i = (i + 1) & (s->strs_cap - 1))
		if (!strcmp(s->strs[i], str))
			return s->strs[i];
	s->strs[i] = strdup(str);
	if (s->strs[i])
		s->strs_n++;
	return s->strs[i];
}

/* C++ names come demangled; C names, and anything the demangler rejects, as they are. */
static const char *sym_name(struct sym *s, const char *name)
{
	char *d;
	const char *r;
	int status = -1;

	if (!name || name[0] != '_' || name[1] != 'Z')
		return intern(s, name);
	d = __cxa_demangle(name, NULL, NULL, &status);
	r = intern(s, status == 0 && d ? d : name);
	free(d);
	return r;
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

/* Read PROGRAM's header and build-id; a PROGRAM we cannot use is a warning, not an error. */
static void program_inspect(struct sym *s)
{
	struct sym_program *p = &s->prog;
	GElf_Ehdr eh;
	const void *id;
	ssize_t idlen;
	Elf *elf;
	int fd = open(s->program, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		sym_warn(s, "cannot read PROGRAM '%s': %s (its frames show as addresses)", s->program,
			 strerror(errno));
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

static void hex(char *out, size_t outlen, const unsigned char *p, size_t n)
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
static char *target_path(const struct sym *s, const char *name)
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

/*
 * find_elf for core modules. dwfl_build_id_find_elf opens PROGRAM for the executable
 * (dwfl_core_file_report was told of it unless it mismatches) and looks files up by
 * build-id. Failing that, we name the file by its path in the target, under the
 * sysroot if any, and return -1: libdwfl then opens it itself and, because the
 * build-id lookup marked the core's build-id authoritative, rejects a file whose
 * build-id differs instead of symbolizing with the wrong one.
 */
static int sym_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			char **file_name, Elf **elfp)
{
	struct sym_mod *m = *userdata;
	struct sym *s;
	char *path;
	int fd = dwfl_build_id_find_elf(mod, userdata, modname, base, file_name, elfp);

	if (fd >= 0 || *elfp || !m)
		return fd;
	s = m->s;
	if (m->is_program && s->prog.ok && !s->prog_mismatch) {
		/* libdwfl did not take this module for the executable; we know better */
		char *name = strdup(s->program);

		fd = name ? open(s->program, O_RDONLY | O_CLOEXEC) : -1;
		if (fd >= 0) {
			free(*file_name);
			*file_name = name;
			return fd;
		}
		free(name);
	}
	path = target_path(s, modname);
	if (path) {
		free(*file_name);
		*file_name = path;
	}
	return -1;
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
	int n, fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
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
	fd = open(s->program, O_RDONLY | O_CLOEXEC);
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
};

static void core_auxv(Elf *core, GElf_Off off, size_t size, struct core_info *ci)
{
	Elf_Data *d = elf_getdata_rawchunk(core, (int64_t)off, size, ELF_T_AUXV);
	size_t ent = gelf_fsize(core, ELF_T_AUXV, 1, EV_CURRENT);

	if (!d || !ent)
		return;
	for (size_t i = 0; i < d->d_size / ent; i++) {
		GElf_auxv_t av;

		if (!gelf_getauxv(d, (int)i, &av))
			break;
		if (av.a_type == AT_ENTRY)
			ci->at_entry = av.a_un.a_val;
	}
}

/* Whether the core has NT_FILE, and its AT_ENTRY, from every PT_NOTE segment. */
static void core_notes(Elf *core, struct core_info *ci)
{
	size_t phnum;

	if (elf_getphdrnum(core, &phnum) != 0)
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *d;

		if (!gelf_getphdr(core, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(core, (int64_t)ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_namesz != sizeof("CORE") ||
			    memcmp((const char *)d->d_buf + name_off, "CORE", sizeof("CORE")))
				continue;
			if (nh.n_type == NT_FILE)
				ci->has_file_note = true;
			else if (nh.n_type == NT_AUXV)
				core_auxv(core, ph.p_offset + desc_off, nh.n_descsz, ci);
		}
	}
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
		hex(a, sizeof(a), bits, (size_t)n);
		hex(b, sizeof(b), s->prog.build_id, s->prog.build_id_len);
		sym_warn(s, "PROGRAM '%s' does not match the core (build-id %s in the core, %s in "
			 "PROGRAM): using the files the core names instead", s->program, a, b);
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

static int core_report(struct sym *s, Elf *core, const char *exe, uint64_t at_entry)
{
	int n;

	if (!new_dwfl(s))
		return -1;
	n = dwfl_core_file_report(s->dwfl, core, exe);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (n > 0 && at_entry)
		s->main_mod = dwfl_addrmodule(s->dwfl, at_entry);
	return n;
}

/* Report PROGRAM alone at base; base is ignored for a fixed-address executable. */
static bool report_program(struct sym *s, uint64_t base)
{
	Dwfl_Module *m;

	if (!s->prog.ok)
		return false;
	/* add_p_vaddr: base is the bias added to every p_vaddr, as --load-base means */
	m = dwfl_report_elf(s->dwfl, s->program, s->program, -1, base, true);
	if (!m) {
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

/*
 * The file of a library the core's link_map names: SYSROOT/name, else name itself
 * (where qemu-user's -L also falls back), if it is an ELF file for the core's machine.
 */
static char *link_map_file(struct sym *s, const struct image *img, const char *name)
{
	char *paths[2] = { target_path(s, name), s->sysroot ? strdup(name) : NULL }, *r = NULL;
	char err[256];

	for (int i = 0; i < 2; i++) {
		unsigned wsize;
		bool be, pie;
		uint16_t machine;

		if (!r && paths[i] && access(paths[i], R_OK) == 0 &&
		    image_program_info(paths[i], &wsize, &be, &machine, &pie, err, sizeof(err)) == 0 &&
		    machine == img->machine && wsize == img->wsize)
			r = paths[i];
		else
			free(paths[i]);
	}
	if (!r)
		sym_warn(s, "cannot find library '%s' of the core's link_map%s (its frames show as "
			 "addresses)", name, s->sysroot ? " under the sysroot" : "; try --sysroot");
	return r;
}

/*
 * For cores without NT_FILE: report what libdwfl's own walk of the dynamic linker's
 * list left out. It opens each name on this host as it stands (no sysroot), and on MIPS
 * finds no list at all; then the executable is PROGRAM at the bias AT_ENTRY gives.
 * Returns how many libraries were added.
 */
static unsigned link_map_complete(struct sym *s, const struct image *img, uint64_t at_entry)
{
	uint64_t w = img->wsize, r_debug, lm = 0, f[4];
	char name[PATH_MAX];
	unsigned added = 0;

	if (!s->main_mod && s->prog.ok && !s->prog_mismatch) {
		dwfl_report_begin_add(s->dwfl);
		report_program(s, s->prog.e_type == ET_DYN && at_entry ? at_entry - s->prog.e_entry : 0);
		dwfl_report_end(s->dwfl, NULL, NULL);
	}
	if (!s->main_mod || !(r_debug = r_debug_addr(img, s->main_mod)) ||
	    !mem_word(img, r_debug + w, &lm))
		return 0;
	/* struct link_map starts l_addr (the bias), l_name, l_ld, l_next: one word each */
	for (unsigned n = 0; lm && n < SYM_MAX_LIBS; n++, lm = f[3]) {
		char *file;

		if (!mem_word(img, lm, &f[0]) || !mem_word(img, lm + w, &f[1]) ||
		    !mem_word(img, lm + 2 * w, &f[2]) || !mem_word(img, lm + 3 * w, &f[3]))
			break;
		if (!f[2] || (!mem_string(img, f[1], name, sizeof(name)) &&
			      !exe_string(s->main_mod, f[1], name, sizeof(name))) || name[0] != '/' ||
		    dwfl_addrmodule(s->dwfl, f[2]))
			continue;	/* the executable, the vDSO, or known already */
		file = link_map_file(s, img, name);
		if (!file)
			continue;
		dwfl_report_begin_add(s->dwfl);
		if (dwfl_report_elf(s->dwfl, name, file, -1, f[0], true))
			added++;
		else
			sym_warn(s, "cannot use '%s': %s", file, dwfl_errmsg(-1));
		dwfl_report_end(s->dwfl, NULL, NULL);
		free(file);
	}
	return added;
}

static void open_core(struct sym *s, const struct image *img)
{
	struct core_info ci = { 0 };
	const char *what = img->path ? img->path : "the core";
	int n;

	core_notes(img->elf, &ci);
	n = core_report(s, img->elf, s->prog.ok ? s->program : NULL, ci.at_entry);
	if (n > 0 && s->main_mod && s->prog.ok && program_mismatch(s, s->main_mod, ci.at_entry)) {
		/* dwfl_build_id_find_elf would open PROGRAM for the executable: list again
		 * without it so the build-id or NT_FILE path finds the right file */
		s->prog_mismatch = true;
		n = core_report(s, img->elf, NULL, ci.at_entry);
	}
	if (n >= 0 && !ci.has_file_note && link_map_complete(s, img, ci.at_entry) && n == 0)
		n = 1;
	if (n > 0) {
		s->source = ci.has_file_note ? "core file notes" : "link_map in core memory";
		return;
	}
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
		char *alt = NULL;

		if (!path)
			continue;
		/* a target's path that only exists under the sysroot */
		if (s->sysroot && access(path, R_OK) != 0 && (alt = target_path(s, path)) &&
		    access(alt, R_OK) == 0)
			path = alt;
		if (dwfl_report_elf(s->dwfl, o->modules[i].path, path, -1, o->modules[i].base, true))
			any = true;
		else
			sym_warn(s, "cannot use --module '%s': %s", o->modules[i].path,
				 dwfl_errmsg(-1));
		free(alt);
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (any)
		s->source = o->nmodules ? "PROGRAM and --module" : "PROGRAM only";
}

struct sym *sym_open(const struct sym_opts *o)
{
	struct sym *s = o ? calloc(1, sizeof(*s)) : NULL;
	const struct image *img = o ? o->img : NULL;

	if (!s)
		return NULL;
	elf_version(EV_CURRENT);
	s->quiet = o->quiet;
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
	s->debuginfo_path = debug_path(s, o);
	s->cb.find_elf = sym_find_elf;
	s->cb.find_debuginfo = sym_find_debuginfo;
	s->cb.debuginfo_path = s->debuginfo_path ? &s->debuginfo_path : NULL;
	if (s->program)
		program_inspect(s);
	if (img && img->elf)
		open_core(s, img);
	else
		open_raw(s, o);
	attach_mods(s);
	return s;
}

const char *sym_source(const struct sym *s)
{
	return s ? s->source : "none";
}

static bool frame_push(struct frame_vec *fv, const char *func, const char *file, int line)
{
	if (fv->n == fv->cap) {
		unsigned cap = fv->cap ? fv->cap * 2 : 8;
		struct sym_frame *v = realloc(fv->v, cap * sizeof(*v));

		if (!v)
			return false;
		fv->v = v;
		fv->cap = cap;
	}
	fv->v[fv->n++] = (struct sym_frame){ .func = func, .file = file, .line = line };
	return true;
}

/* The name a DWARF function or inlined instance was declared with, demangled. */
static const char *die_name(struct sym *s, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name;

	/* _integrate follows abstract_origin and specification to the declaration */
	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return sym_name(s, name);
}

static int die_udata(Dwarf_Die *die, unsigned attr, Dwarf_Word *v)
{
	Dwarf_Attribute a;

	return dwarf_formudata(dwarf_attr(die, attr, &a), v);
}

static int clamp_line(Dwarf_Word v)
{
	return v > INT_MAX ? 0 : (int)v;
}

/*
 * The inline chain at addr, as eu-addr2line -i walks it: dwarf_getscopes gives the
 * innermost scope (after it come the abstract definition's scopes, which we do not
 * want), and dwarf_getscopes_die that scope's real parents. Each inlined instance is
 * a frame at the file:line the caller left off at; its DW_AT_call_file/_line is where
 * the next frame out was. The walk ends at the concrete function.
 */
static void dwarf_frames(struct sym *s, Dwarf_Die *cudie, Dwarf_Addr cu_pc, const char *file,
			 int line, struct frame_vec *fv)
{
	Dwarf_Die *scopes = NULL, *chain = NULL, inner, cu;
	Dwarf_Files *files = NULL;
	int n = dwarf_getscopes(cudie, cu_pc, &scopes);

	if (n <= 0) {
		free(scopes);
		return;
	}
	inner = scopes[0];
	free(scopes);
	n = dwarf_getscopes_die(&inner, &chain);
	/* call_file indexes the line table of the unit holding the inlined instance */
	if (dwarf_diecu(&inner, &cu, NULL, NULL) == NULL || dwarf_getsrcfiles(&cu, &files, NULL) != 0)
		if (dwarf_getsrcfiles(cudie, &files, NULL) != 0)
			files = NULL;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&chain[i]);
		Dwarf_Word v;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram &&
		    tag != DW_TAG_entry_point)
			continue;
		if (!frame_push(fv, die_name(s, &chain[i]), file, line))
			break;
		if (tag != DW_TAG_inlined_subroutine)
			break;
		file = NULL;
		line = 0;
		if (files && die_udata(&chain[i], DW_AT_call_file, &v) == 0)
			file = intern(s, dwarf_filesrc(files, v, NULL, NULL));
		if (die_udata(&chain[i], DW_AT_call_line, &v) == 0)
			line = clamp_line(v);
	}
	free(chain);
}

/* Warn once per module that gives us nothing to name functions with. */
static void module_elf_missing(struct sym *s, struct sym_mod *m, Dwfl_Module *mod, Dwarf_Addr start)
{
	const char *name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	const char *why = dwfl_errmsg(-1);
	const unsigned char *bits;
	GElf_Addr vaddr;
	char id[2 * 64 + 16] = "";
	int n;

	if (!m || m->warned)
		return;
	m->warned = true;
	/* the build-id is what a user searches a debug server or an archive for */
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0) {
		strcpy(id, ", build-id ");
		hex(id + strlen(id), sizeof(id) - strlen(id), bits, (size_t)n);
	}
	if (!name || name[0] != '/')
		why = "the core names no file and none has its build-id";
	sym_warn(s, "cannot find the ELF file of module '%s' at %#" PRIx64 "%s: %s (its frames "
		 "show as module+offset%s)", name ? name : "?", (uint64_t)start, id, why,
		 s->sysroot ? "" : "; try --sysroot or --debug-dir");
}

static void program_dwarf_missing(struct sym *s, struct sym_mod *m, Dwfl_Module *mod)
{
	Dwarf_Addr b;

	if (!m || !m->is_program || m->warned)
		return;
	m->warned = true;
	if (!dwfl_module_getdwarf(mod, &b))
		sym_warn(s, "no debug info for PROGRAM '%s' (%s): no file:line or inline frames "
			 "(build with -g, or try --debug-dir)", s->program ? s->program :
			 dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
			 dwfl_errmsg(-1));
}

static const char *module_display(struct sym *s, struct sym_mod *m, Dwfl_Module *mod)
{
	const char *mainfile = NULL;
	const char *name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);

	if (m && m->display)
		return m->display;
	/* the target's own path when the core gave one; else the file we read */
	if (!(name && name[0] == '/')) {
		if (m && m->is_program && s->program)
			name = s->program;
		else if (mainfile)
			name = mainfile;
	}
	name = intern(s, name);
	if (m)
		m->display = name;
	return name;
}

/*
 * Whether the unit's code ranges hold pc. libdw hands out the unit just before a gap
 * (code without debug info, like crt1.o's _start) and its last line with it; such a
 * pc gets its name from the symbol table and no file:line. A unit without ranges
 * (old producers) is taken at its word.
 */
static bool cu_covers(Dwarf_Die *cudie, Dwarf_Addr pc)
{
	if (!dwarf_hasattr(cudie, DW_AT_ranges) && !dwarf_hasattr(cudie, DW_AT_high_pc))
		return true;
	return dwarf_haspc(cudie, pc) > 0;
}

/* Fill res and fv for pc (looked up at addr) inside mod. */
static void describe(struct sym *s, Dwfl_Module *mod, uint64_t pc, Dwarf_Addr addr,
		     struct sym_pc *res, struct frame_vec *fv)
{
	void **ud = NULL;
	Dwarf_Addr start = 0, bias = 0, dwbias = 0;
	Dwarf_Die *cudie;
	struct sym_mod *m;
	Elf *elf;
	const char *file = NULL, *fname;
	int line = 0;
	GElf_Off off;
	GElf_Sym esym;
	Dwfl_Line *l;

	dwfl_module_info(mod, &ud, &start, NULL, NULL, NULL, NULL, NULL);
	m = ud ? *ud : NULL;
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf)
		module_elf_missing(s, m, mod, start);
	else
		program_dwarf_missing(s, m, mod);
	res->module = module_display(s, m, mod);
	/* with the file known, the offset is what addr2line -e MODULE takes */
	res->module_offset = pc - (elf ? bias : start);
	res->in_program = m && m->is_program;
	if (!elf)
		return;
	cudie = dwfl_module_addrdie(mod, addr, &dwbias);
	if (cudie && !cu_covers(cudie, addr - dwbias))
		cudie = NULL;
	l = cudie ? dwfl_module_getsrc(mod, addr) : NULL;
	if (l) {
		const char *src = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);

		file = intern(s, src);
		if (!src)
			line = 0;
	}
	if (cudie)
		dwarf_frames(s, cudie, addr - dwbias, file, line, fv);
	if (fv->n && fv->v[fv->n - 1].func)
		return;
	/* no DWARF, or a nameless DIE: the symbol table names the function */
	fname = sym_name(s, dwfl_module_addrinfo(mod, addr, &off, &esym, NULL, NULL, NULL));
	if (fv->n)
		fv->v[fv->n - 1].func = fname;
	else
		frame_push(fv, fname, file, line);
}

static struct sym_entry *resolve(struct sym *s, uint64_t pc, bool is_return_addr)
{
	/* a return address follows the call, which may be its function's last instruction:
	 * pc - 1 is inside the call, so inside the right function and line. On ARM, bit 0
	 * marks Thumb code (__builtin_return_address keeps it), no address bit. */
	uint64_t code = s->prog.e_machine == EM_ARM ? pc & ~(uint64_t)1 : pc;
	uint64_t addr = is_return_addr && code > 0 ? code - 1 : code;
	struct frame_vec fv = { 0 };
	struct sym_pc res = { .pc = pc, .module_offset = pc };
	struct sym_entry *e;
	Dwfl_Module *mod = s->dwfl ? dwfl_addrmodule(s->dwfl, addr) : NULL;

	if (mod)
		describe(s, mod, pc, addr, &res, &fv);
	if (!fv.n && !frame_push(&fv, NULL, NULL, 0)) {
		free(fv.v);
		return NULL;
	}
	e = malloc(sizeof(*e) + fv.n * sizeof(e->frames[0]));
	if (e) {
		memcpy(e->frames, fv.v, fv.n * sizeof(e->frames[0]));
		e->res = res;
		e->res.nframes = fv.n;
		e->res.frames = e->frames;
		e->is_return_addr = is_return_addr;
	}
	free(fv.v);
	return e;
}

static bool tab_grow(struct sym *s)
{
	size_t cap = s->tab_cap ? s->tab_cap * 2 : 1024;
	struct sym_entry **t = calloc(cap, sizeof(*t));

	if (!t)
		return false;
	for (size_t i = 0; i < s->tab_cap; i++) {
		struct sym_entry *e = s->tab[i];
		size_t j;

		if (!e)
			continue;
		for (j = hash_pc(e->res.pc, e->is_return_addr) & (cap - 1); t[j]; j = (j + 1) & (cap - 1))
			;
		t[j] = e;
	}
	free(s->tab);
	s->tab = t;
	s->tab_cap = cap;
	return true;
}

static const struct sym_pc *oom_result(struct sym *s, uint64_t pc)
{
	/* out of memory: a bare address, overwritten by the next such lookup */
	s->oom_frame = (struct sym_frame){ 0 };
	s->oom_pc = (struct sym_pc){ .pc = pc, .module_offset = pc, .nframes = 1,
				     .frames = &s->oom_frame };
	return &s->oom_pc;
}

const struct sym_pc *sym_lookup(struct sym *s, uint64_t pc, bool is_return_addr)
{
	static struct sym_frame none_frame;
	static struct sym_pc none;
	struct sym_entry *e;
	size_t i;

	if (!s) {
		none = (struct sym_pc){ .pc = pc, .module_offset = pc, .nframes = 1,
					.frames = &none_frame };
		return &none;
	}
	if (2 * (s->tab_n + 1) > s->tab_cap && !tab_grow(s))
		return oom_result(s, pc);
	for (i = hash_pc(pc, is_return_addr) & (s->tab_cap - 1); (e = s->tab[i]);
	     i = (i + 1) & (s->tab_cap - 1))
		if (e->res.pc == pc && e->is_return_addr == is_return_addr)
			return &e->res;
	e = resolve(s, pc, is_return_addr);
	if (!e)
		return oom_result(s, pc);
	s->tab[i] = e;
	s->tab_n++;
	return &e->res;
}

void sym_close(struct sym *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->tab_cap; i++)
		free(s->tab[i]);
	free(s->tab);
	for (size_t i = 0; i < s->strs_cap; i++)
		free(s->strs[i]);
	free(s->strs);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	s->dwfl = NULL;
	attach_mods(s);
	free(s->debuginfo_path);
	free(s->program);
	free(s->sysroot);
	free(s->prog.build_id);
	free(s);
}
