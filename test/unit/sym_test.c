/*
 * Unit test of sym_dwfl.c. Compiles test/unit/sym_prog.c in several ways (PIE,
 * non-PIE, no -g, stripped with a build-id debug file, a shared object, other
 * architectures when their compilers are installed), runs it for real return
 * addresses, and checks sym_lookup in raw mode and, when gcore works, on real cores.
 * Usage: sym_test [SRCDIR]   (SRCDIR holds sym_prog.c; default: this file's directory)
 * Prints "ok N - name" / "not ok N - name" and "N passed, N failed, N skipped".
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image.h"
#include "sym.h"
#include "tap.h"

static char tmp[PATH_MAX];	/* everything built or written goes here */
static char src[PATH_MAX];	/* sym_prog.c */
static const char *cc;

struct addrs {			/* what sym_prog printed */
	uint64_t base, ra_outer, ra_leaf, fn_outer, fn_cxx, malloc_fn;
};

struct lines {			/* line numbers of the markers in sym_prog.c */
	int outer_decl, outer_probe, leaf_call, leaf_probe;
};
static struct lines L;

static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* tmp/name, kept until exit: a ring of buffers would be reused under a caller */
static char *tnames[64];
static size_t n_tnames;

static const char *tpath(const char *name)
{
	char *p;

	for (size_t i = 0; i < n_tnames; i++)
		if (!strcmp(tnames[i] + strlen(tmp) + 1, name))
			return tnames[i];
	if (n_tnames == sizeof(tnames) / sizeof(tnames[0]) || asprintf(&p, "%s/%s", tmp, name) < 0)
		abort();
	return tnames[n_tnames++] = p;
}

static bool have_tool(const char *t)
{
	return run("command -v %s >/dev/null 2>&1", t) == 0;
}

static bool find_lines(void)
{
	FILE *f = fopen(src, "r");
	char buf[512];
	int n = 0;

	if (!f)
		return false;
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, "@outer_decl"))
			L.outer_decl = n;
		else if (strstr(buf, "@outer_probe"))
			L.outer_probe = n;
		else if (strstr(buf, "@leaf_call"))
			L.leaf_call = n;
		else if (strstr(buf, "@leaf_probe"))
			L.leaf_probe = n;
	}
	fclose(f);
	return L.outer_decl && L.outer_probe && L.leaf_call && L.leaf_probe;
}

static bool parse_addrs(FILE *f, struct addrs *a)
{
	char key[32];
	unsigned long long v;
	char line[256];

	memset(a, 0, sizeof(*a));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "ready", 5))
			return a->ra_outer && a->ra_leaf && a->fn_outer;
		if (sscanf(line, "%31s %llx", key, &v) != 2)
			continue;
		if (!strcmp(key, "base"))
			a->base = v;
		else if (!strcmp(key, "ra_outer"))
			a->ra_outer = v;
		else if (!strcmp(key, "ra_leaf"))
			a->ra_leaf = v;
		else if (!strcmp(key, "fn_outer"))
			a->fn_outer = v;
		else if (!strcmp(key, "fn_cxx"))
			a->fn_cxx = v;
		else if (!strcmp(key, "malloc"))
			a->malloc_fn = v;
	}
	return false;
}

static bool run_prog(const char *prog, struct addrs *a)
{
	char cmd[PATH_MAX + 16];
	FILE *f;
	bool r;

	snprintf(cmd, sizeof(cmd), "'%s' print", prog);
	f = popen(cmd, "r");
	if (!f)
		return false;
	r = parse_addrs(f, a);
	return pclose(f) == 0 && r;
}

/* stderr into a file while sym runs, to check its warnings */
static int saved_err = -1;

static void capture_begin(void)
{
	int fd = open(tpath("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0600);

	fflush(stderr);
	saved_err = dup(2);
	dup2(fd, 2);
	close(fd);
}

static char *capture_end(void)
{
	static char buf[16384];
	int fd;
	ssize_t n;

	fflush(stderr);
	dup2(saved_err, 2);
	close(saved_err);
	fd = open(tpath("stderr.txt"), O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	if (n > 0)
		printf("# stderr: %s", buf);
	return buf;
}

static bool is_src(const char *file)
{
	size_t n = file ? strlen(file) : 0;

	return n >= 10 && !strcmp(file + n - 10, "sym_prog.c") && (n == 10 || file[n - 11] == '/');
}

static bool streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static void show(const struct sym_pc *p)
{
	printf("# pc %#" PRIx64 " module %s+%#" PRIx64 "%s, %u frame(s)\n", p->pc,
	       p->module ? p->module : "(none)", p->module_offset, p->in_program ? " [program]" : "",
	       p->nframes);
	for (unsigned i = 0; i < p->nframes; i++)
		printf("#   [%u] %s at %s:%d\n", i, p->frames[i].func ? p->frames[i].func : "(null)",
		       p->frames[i].file ? p->frames[i].file : "(null)", p->frames[i].line);
}

/* frames[0] is sym_prog_outer at the line of its first probe call */
static bool is_outer(const struct sym_pc *p, bool with_lines)
{
	bool r = p->nframes == 1 && streq(p->frames[0].func, "sym_prog_outer") &&
		 (!with_lines || (is_src(p->frames[0].file) && p->frames[0].line == L.outer_probe));

	if (!r)
		show(p);
	return r;
}

/* sym_prog_leaf inlined into sym_prog_outer: two frames, the outer at the call line */
static bool is_leaf_chain(const struct sym_pc *p, bool exact_inner_line)
{
	bool r = p->nframes == 2 && streq(p->frames[0].func, "sym_prog_leaf") &&
		 is_src(p->frames[0].file) &&
		 (exact_inner_line ? p->frames[0].line == L.leaf_probe
				   : p->frames[0].line > L.leaf_call - 12 &&
				     p->frames[0].line <= L.leaf_probe + 1) &&
		 streq(p->frames[1].func, "sym_prog_outer") && is_src(p->frames[1].file) &&
		 p->frames[1].line == L.leaf_call;

	if (!r)
		show(p);
	return r;
}

static bool elf_symbol(const char *path, const char *name, uint64_t *value)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	bool found = false;

	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			n = elf_strptr(e, sh.sh_link, s.st_name);
			if (n && !strcmp(n, name) && s.st_value) {
				*value = s.st_value;
				found = true;
				break;
			}
		}
	}
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return found;
}

static bool elf_header(const char *path, GElf_Ehdr *eh)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	bool r = e && gelf_getehdr(e, eh);

	elf_end(e);
	if (fd >= 0)
		close(fd);
	return r;
}

static bool build_id_hex(const char *path, char *out, size_t outlen)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	const void *id;
	ssize_t n = e ? dwelf_elf_gnu_build_id(e, &id) : -1;

	out[0] = '\0';
	for (ssize_t i = 0; i < n && (size_t)(2 * i + 3) <= outlen; i++)
		sprintf(out + 2 * i, "%02x", ((const unsigned char *)id)[i]);
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return n > 0;
}

/* DW_AT_low_pc of sym_prog_leaf's inlined instance, found with libdw alone */
static bool walk_inline(Dwarf_Die *die, uint64_t *lowpc)
{
	Dwarf_Die child;

	do {
		Dwarf_Attribute a;
		Dwarf_Addr base, start, end;
		const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));

		/* GCC gives an inlined instance DW_AT_ranges as often as low_pc/high_pc */
		if (dwarf_tag(die) == DW_TAG_inlined_subroutine && name &&
		    !strcmp(name, "sym_prog_leaf") && dwarf_ranges(die, 0, &base, &start, &end) > 0) {
			*lowpc = start;
			return true;
		}
		if (dwarf_child(die, &child) == 0 && walk_inline(&child, lowpc))
			return true;
	} while (dwarf_siblingof(die, die) == 0);
	return false;
}

static bool inline_lowpc(const char *path, uint64_t *lowpc)
{
	int fd = open(path, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	Dwarf_Off off = 0, next;
	size_t hsize;
	bool found = false;

	while (dw && !found && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0)
			found = walk_inline(&child, lowpc);
		off = next;
	}
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
	return found;
}

static struct image raw_image(unsigned wsize, bool big, uint16_t machine)
{
	struct image img;

	memset(&img, 0, sizeof(img));
	img.wsize = wsize;
	img.big_endian = big;
	img.machine = machine;
	img.fd = -1;
	return img;
}

static struct sym *open_raw(const char *program, const struct image *img, bool have_base,
			    uint64_t base, const struct sym_module *mods, size_t nmods,
			    const char *const *dirs, bool quiet)
{
	struct sym_opts o;

	memset(&o, 0, sizeof(o));
	o.program = program;
	o.img = img;
	o.have_load_base = have_base;
	o.load_base = base;
	o.modules = mods;
	o.nmodules = nmods;
	o.debug_dirs = dirs;
	for (o.ndebug_dirs = 0; dirs && dirs[o.ndebug_dirs]; o.ndebug_dirs++)
		;
	o.quiet = quiet;
	return sym_open(&o);
}

static void test_raw_nopie(const struct image *img)
{
	const char *prog = tpath("nopie");
	struct addrs a;
	struct sym *s;
	const struct sym_pc *p, *q;

	if (!run_prog(prog, &a)) {
		ok(false, "raw non-PIE: helper ran and printed its addresses");
		return;
	}
	s = open_raw(prog, img, false, 0, NULL, 0, NULL, false);
	ok(streq(sym_source(s), "PROGRAM only"), "raw non-PIE: source is PROGRAM only (%s)",
	   sym_source(s));

	p = sym_lookup(s, a.ra_outer, true);
	ok(is_outer(p, true) && p->pc == a.ra_outer,
	   "raw non-PIE: return address names sym_prog_outer at sym_prog.c:%d", L.outer_probe);
	ok(streq(p->module, prog) && p->in_program && p->module_offset == a.ra_outer,
	   "raw non-PIE: module is PROGRAM, offset is the address itself");

	p = sym_lookup(s, a.ra_leaf, true);
	ok(is_leaf_chain(p, true),
	   "raw non-PIE: inlined sym_prog_leaf (line %d) is its own frame, caller at line %d",
	   L.leaf_probe, L.leaf_call);

	p = sym_lookup(s, a.fn_outer, false);
	ok(p->nframes == 1 && streq(p->frames[0].func, "sym_prog_outer") &&
	   p->frames[0].line >= L.outer_decl && p->frames[0].line <= L.leaf_call,
	   "raw non-PIE: a function's own address (not a return address) names it");
	if (p->nframes != 1)
		show(p);

	p = sym_lookup(s, a.fn_cxx, false);
	ok(streq(p->frames[p->nframes - 1].func, "hp::widget::grow(int)"),
	   "raw non-PIE: C++ linkage name is demangled (%s)", p->frames[p->nframes - 1].func);

	p = sym_lookup(s, a.fn_outer, true);
	ok(p->pc == a.fn_outer && !streq(p->frames[p->nframes - 1].func, "sym_prog_outer"),
	   "raw non-PIE: a return address is looked up at pc - 1 (the call), pc kept");

	p = sym_lookup(s, a.ra_leaf, true);
	q = sym_lookup(s, a.ra_leaf, true);
	ok(p == q && sym_lookup(s, a.ra_leaf, false) != p && sym_lookup(s, a.ra_leaf, false)->pc == a.ra_leaf,
	   "raw non-PIE: each pc is resolved once and cached (return address kept apart)");

	{
		uint64_t start;

		p = NULL;
		if (elf_symbol(prog, "_start", &start))
			p = sym_lookup(s, start + 4, false);
		ok(p && p->nframes == 1 && streq(p->frames[0].func, "_start") && !p->frames[0].file &&
		   !p->frames[0].line,
		   "raw non-PIE: code without debug info (crt1's _start) gets no other unit's line");
		if (p && p->frames[0].file)
			show(p);
	}

	p = sym_lookup(s, 0x10, true);
	ok(p->module == NULL && p->nframes == 1 && p->frames[0].func == NULL && p->pc == 0x10 &&
	   p->module_offset == 0x10 && !p->in_program,
	   "raw non-PIE: an address outside every module gives a bare address");
	p = sym_lookup(s, 0, true);
	ok(p->module == NULL && p->pc == 0, "raw non-PIE: pc 0 as a return address does not wrap");

	/* many distinct pcs: the cache grows and every answer stays put */
	{
		const struct sym_pc *first = sym_lookup(s, a.ra_outer, true);
		bool same = true;

		for (uint64_t pc = 0x1000; pc < 0x1000 + 5000; pc++)
			same &= sym_lookup(s, pc, pc & 1)->pc == pc;
		ok(same && first == sym_lookup(s, a.ra_outer, true) && is_outer(first, true),
		   "raw non-PIE: 5000 more pcs, earlier results stay valid");
	}
	sym_close(s);
}

static void test_raw_pie(const struct image *img)
{
	const char *prog = tpath("pie");
	struct addrs a;
	struct sym *s;
	const struct sym_pc *p;
	const char *err;

	if (!run_prog(prog, &a) || !a.base) {
		ok(false, "raw PIE: helper ran and printed a non-zero load base");
		return;
	}
	s = open_raw(prog, img, true, a.base, NULL, 0, NULL, false);
	p = sym_lookup(s, a.ra_outer, true);
	ok(is_outer(p, true) && p->in_program && p->module_offset == a.ra_outer - a.base,
	   "raw PIE at --load-base %#" PRIx64 ": sym_prog_outer:%d, offset from the base", a.base,
	   L.outer_probe);
	p = sym_lookup(s, a.ra_leaf, true);
	ok(is_leaf_chain(p, true), "raw PIE: inline chain sym_prog_leaf <- sym_prog_outer");
	p = sym_lookup(s, a.base - 0x1000, true);
	ok(p->module == NULL && p->frames[0].func == NULL,
	   "raw PIE: an address below the load base is outside every module");
	sym_close(s);

	capture_begin();
	s = open_raw(prog, img, false, 0, NULL, 0, NULL, false);
	err = capture_end();
	p = sym_lookup(s, a.ra_outer - a.base, true);
	ok(err[0] == '\0' && is_outer(p, true),
	   "raw PIE without --load-base: placed at 0 (main.c warns), file addresses resolve");
	sym_close(s);
}

static void test_raw_stripped(const struct image *img)
{
	const char *prog = tpath("stripped");
	const char *dirs[] = { "debugdir", NULL };
	char cwd[PATH_MAX];
	struct addrs a;
	struct sym *s;
	const struct sym_pc *p;

	if (!run_prog(prog, &a)) {
		ok(false, "stripped: helper ran");
		return;
	}
	s = open_raw(prog, img, false, 0, NULL, 0, NULL, true);
	p = sym_lookup(s, a.ra_outer, true);
	ok(streq(p->module, prog) && p->nframes == 1 && p->frames[0].func == NULL &&
	   p->module_offset == a.ra_outer,
	   "stripped PROGRAM, no debug file: module+offset, no function");
	if (p->frames[0].func)
		show(p);
	sym_close(s);

	/* a relative --debug-dir, as a user would type it */
	if (!getcwd(cwd, sizeof(cwd)) || chdir(tmp) != 0) {
		ok(false, "stripped: chdir to %s", tmp);
		return;
	}
	s = open_raw(prog, img, false, 0, NULL, 0, dirs, false);
	p = sym_lookup(s, a.ra_leaf, true);
	ok(is_leaf_chain(p, true),
	   "stripped PROGRAM, debug file in DIR/.build-id/xx/rest.debug (relative --debug-dir)");
	p = sym_lookup(s, a.ra_outer, true);
	ok(is_outer(p, true), "stripped PROGRAM with debug file: function and line");
	sym_close(s);
	if (chdir(cwd) != 0)
		ok(false, "chdir back to %s", cwd);
}

static void test_raw_nodebug(const struct image *img)
{
	const char *prog = tpath("nodebug");
	struct addrs a;
	struct sym *s;
	const struct sym_pc *p;
	const char *err;

	if (!run_prog(prog, &a)) {
		ok(false, "no -g: helper ran");
		return;
	}
	capture_begin();
	s = open_raw(prog, img, false, 0, NULL, 0, NULL, false);
	p = sym_lookup(s, a.ra_outer, true);
	err = capture_end();
	ok(is_outer(p, false) && p->frames[0].file == NULL && p->frames[0].line == 0,
	   "PROGRAM without -g: function from the symbol table, no file:line");
	ok(strstr(err, "no debug info for PROGRAM") != NULL, "PROGRAM without -g: warned once");
	p = sym_lookup(s, a.fn_cxx, false);
	ok(streq(p->frames[0].func, "hp::widget::grow(int)"),
	   "PROGRAM without -g: mangled symbol-table name is demangled (%s)", p->frames[0].func);
	sym_close(s);
}

static void test_raw_bad_program(const struct image *img)
{
	struct sym *s;
	const struct sym_pc *p;
	const char *err;

	capture_begin();
	s = open_raw("/nonexistent/dir/prog", img, true, 0x555555554000, NULL, 0, NULL, false);
	p = sym_lookup(s, 0x555555555123, true);
	err = capture_end();
	ok(s && strstr(err, "heapprof-analyze: warning: cannot read PROGRAM '/nonexistent/dir/prog'") &&
	   p->module == NULL && p->frames[0].func == NULL && streq(sym_source(s), "none"),
	   "missing PROGRAM: warning, bare addresses, no crash");
	sym_close(s);

	capture_begin();
	s = open_raw(src, img, false, 0, NULL, 0, NULL, false);
	p = sym_lookup(s, 0x401000, true);
	err = capture_end();
	ok(strstr(err, "not an ELF file") && p->module == NULL,
	   "PROGRAM that is not ELF (a C source): warning, bare addresses");
	sym_close(s);

	capture_begin();
	s = open_raw("/nonexistent/dir/prog", img, false, 0, NULL, 0, NULL, true);
	sym_lookup(s, 0x1234, false);
	err = capture_end();
	ok(err[0] == '\0', "quiet: no warnings at all");
	sym_close(s);

	/* an empty file and a truncated ELF */
	if (run("cp '%s' '%s' && truncate -s 100 '%s' && : > '%s'", tpath("nopie"),
		tpath("truncated"), tpath("truncated"), tpath("empty")) == 0) {
		bool fine = true;
		const char *bad[] = { tpath("truncated"), tpath("empty") };

		for (int i = 0; i < 2; i++) {
			s = open_raw(bad[i], img, false, 0, NULL, 0, NULL, true);
			p = sym_lookup(s, 0x401136, true);
			fine &= s && p && p->nframes == 1 && p->frames[0].func == NULL;
			sym_close(s);
		}
		ok(fine, "truncated and empty PROGRAM: no crash, no function");
	}
	sym_close(NULL);
	ok(sym_lookup(NULL, 42, true)->pc == 42 && streq(sym_source(NULL), "none"),
	   "NULL sym: lookups still answer");
}

static void test_raw_module(const struct image *img)
{
	const char *prog = tpath("nopie"), *lib = tpath("libprog.so");
	const uint64_t base = 0x7f1200000000ULL;
	struct sym_module mods[] = { { lib, base }, { "/nonexistent/libx.so", 0x7f3400000000ULL } };
	uint64_t v;
	struct addrs a;
	struct sym *s;
	const struct sym_pc *p;
	const char *err;

	if (!run_prog(prog, &a) || !elf_symbol(lib, "sym_prog_outer", &v)) {
		ok(false, "--module: helper ran and libprog.so has sym_prog_outer");
		return;
	}
	capture_begin();
	s = open_raw(prog, img, false, 0, mods, 2, NULL, false);
	err = capture_end();
	ok(strstr(err, "cannot use --module '/nonexistent/libx.so'") != NULL,
	   "--module that does not exist: warning");
	ok(streq(sym_source(s), "PROGRAM and --module"), "--module: source is %s", sym_source(s));
	p = sym_lookup(s, base + v + 4, false);
	ok(streq(p->module, lib) && !p->in_program && p->module_offset == v + 4 &&
	   streq(p->frames[p->nframes - 1].func, "sym_prog_outer"),
	   "--module at %#" PRIx64 ": its function, module path and offset", base);
	if (!streq(p->module, lib))
		show(p);
	p = sym_lookup(s, a.ra_leaf, true);
	ok(is_leaf_chain(p, true) && p->in_program, "--module: PROGRAM still resolves beside it");
	sym_close(s);

	/* a target path that exists only under --sysroot */
	if (run("mkdir -p '%s/sysroot2/hp-no-such-dir' && cp '%s' '%s/sysroot2/hp-no-such-dir/'", tmp,
		lib, tmp) == 0) {
		struct sym_module m = { "/hp-no-such-dir/libprog.so", base };
		struct sym_opts o;

		memset(&o, 0, sizeof(o));
		o.program = prog;
		o.img = img;
		o.modules = &m;
		o.nmodules = 1;
		o.sysroot = tpath("sysroot2");
		s = sym_open(&o);
		p = sym_lookup(s, base + v + 4, false);
		ok(streq(p->module, m.path) && streq(p->frames[p->nframes - 1].func, "sym_prog_outer"),
		   "--module under --sysroot: found there, named by its target path");
		sym_close(s);
	}
}

static void test_cross(const char *triplet)
{
	char name[64], prog[PATH_MAX];
	uint64_t v, lowpc;
	GElf_Ehdr eh;
	struct image img;
	struct sym *s;
	const struct sym_pc *p;
	uint64_t base;
	char *err;

	snprintf(name, sizeof(name), "%s-gcc", triplet);
	if (!have_tool(name)) {
		skip(triplet, "no cross compiler");
		return;
	}
	snprintf(prog, sizeof(prog), "%s", tpath(triplet));
	if (run("%s -O2 -g -o '%s' '%s' 2>/dev/null", name, prog, src) != 0 ||
	    !elf_header(prog, &eh) || !elf_symbol(prog, "sym_prog_outer", &v)) {
		skip(triplet, "cross compiler cannot link");
		return;
	}
	v &= ~(uint64_t)1;	/* ARM Thumb marks functions with bit 0 */
	base = eh.e_type == ET_DYN ? 0x10000000 : 0;
	img = raw_image(eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4,
			eh.e_ident[EI_DATA] == ELFDATA2MSB, eh.e_machine);
	capture_begin();
	s = open_raw(prog, &img, true, base, NULL, 0, NULL, false);
	p = sym_lookup(s, base + v, false);
	err = capture_end();
	ok(err[0] == '\0' && p->in_program && p->nframes == 1 &&
	   streq(p->frames[0].func, "sym_prog_outer") && is_src(p->frames[0].file) &&
	   p->frames[0].line >= L.outer_decl && p->frames[0].line <= L.leaf_call,
	   "%s (%u-bit %s, machine %u): function and line at load base %#" PRIx64, triplet,
	   img.wsize * 8, img.big_endian ? "big-endian" : "little-endian", img.machine, base);
	if (p->nframes != 1)
		show(p);
	if (inline_lowpc(prog, &lowpc)) {
		p = sym_lookup(s, base + lowpc, false);
		ok(is_leaf_chain(p, false), "%s: inlined instance gives two frames, caller line %d",
		   triplet, L.leaf_call);
	} else {
		skip(triplet, "no inlined instance found in DWARF");
	}
	sym_close(s);
}

/* ---- core mode ---- */

static pid_t start_waiting(const char *prog, struct addrs *a)
{
	int fds[2];
	pid_t pid;
	FILE *f;

	if (pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(prog, prog, "wait", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (pid < 0 || !f || !parse_addrs(f, a)) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		pid = -1;
	}
	if (f)
		fclose(f);
	else
		close(fds[0]);
	return pid;
}

static unsigned char *slurp(const char *path, size_t *n)
{
	struct stat st;
	unsigned char *b = NULL;
	int fd = open(path, O_RDONLY);

	if (fd >= 0 && fstat(fd, &st) == 0 && (b = malloc((size_t)st.st_size)) &&
	    read(fd, b, (size_t)st.st_size) != st.st_size) {
		free(b);
		b = NULL;
	}
	if (fd >= 0)
		close(fd);
	*n = b ? (size_t)st.st_size : 0;
	return b;
}

static bool spill(const char *path, const unsigned char *b, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	bool r = fd >= 0 && write(fd, b, n) == (ssize_t)n;

	if (fd >= 0)
		close(fd);
	return r;
}

/*
 * Copy of a native x86_64 core without its NT_FILE note; with no_modules, also without
 * anything libdwfl could find modules by: ELF magic in memory and AT_PHDR.
 */
static bool patch_core(const char *from, const char *to, bool no_modules)
{
	size_t n;
	unsigned char *b = slurp(from, &n);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	bool r = false;

	if (!b || n < sizeof(*eh) || memcmp(b, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh->e_phoff + (size_t)i * eh->e_phentsize);

		if (ph->p_type == PT_LOAD && no_modules && ph->p_filesz >= 4 &&
		    ph->p_offset + 4 <= n && !memcmp(b + ph->p_offset, ELFMAG, SELFMAG))
			memset(b + ph->p_offset, 0, SELFMAG);
		if (ph->p_type != PT_NOTE)
			continue;
		for (size_t off = ph->p_offset; off + sizeof(Elf64_Nhdr) <= ph->p_offset + ph->p_filesz;) {
			Elf64_Nhdr *nh = (Elf64_Nhdr *)(b + off);
			size_t name = off + sizeof(*nh);
			size_t desc = name + ((nh->n_namesz + 3) & ~3u);

			if (nh->n_namesz == 5 && !memcmp(b + name, "CORE", 5)) {
				if (nh->n_type == NT_FILE)
					nh->n_type = 0x7fff0001;
				if (nh->n_type == NT_AUXV && no_modules)
					for (size_t k = 0; k + 16 <= nh->n_descsz; k += 16) {
						Elf64_auxv_t *av = (Elf64_auxv_t *)(b + desc + k);

						if (av->a_type == AT_PHDR)
							av->a_type = AT_IGNORE;
					}
			}
			off = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	r = spill(to, b, n);
out:
	free(b);
	return r;
}

struct core {
	struct image img;
};

static bool core_open(struct core *c, const char *path)
{
	char err[1024];

	return image_open_core(&c->img, path, err, sizeof(err)) == 0;
}

static void core_close(struct core *c)
{
	image_close(&c->img);
}

static struct sym *open_core(struct core *c, const char *program, const char *sysroot)
{
	struct sym_opts o;

	memset(&o, 0, sizeof(o));
	o.program = program;
	o.img = &c->img;
	o.sysroot = sysroot;
	return sym_open(&o);
}

/* Run prog until it is ready, gcore it into core_path.PID (named in out); skips if it can't */
static bool take_core(const char *prog, const char *core_path, struct addrs *a, char *out,
		      size_t outlen)
{
	pid_t pid;
	int rc;

	if (!have_tool("gcore")) {
		skip("core mode", "no gcore");
		return false;
	}
	if ((pid = start_waiting(prog, a)) < 0) {
		ok(false, "core: helper %s started", prog);
		return false;
	}
	rc = run("gcore -o '%s' %d >/dev/null 2>&1", core_path, (int)pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snprintf(out, outlen, "%s.%d", core_path, (int)pid);
	if (rc != 0 || access(out, R_OK) != 0) {
		skip("core mode", "gcore failed (ptrace not allowed?)");
		return false;
	}
	return true;
}

static void test_core(void)
{
	const char *prog = tpath("coreprog"), *core_path = tpath("core");
	char real[PATH_MAX], gcored[PATH_MAX + 32], sysroot_prog[2 * PATH_MAX + 16];
	struct addrs a;
	struct core c;
	struct sym *s;
	const struct sym_pc *p;
	const char *err;

	if (run("cp '%s' '%s'", tpath("pie"), prog) != 0 || !realpath(prog, real) ||
	    !take_core(prog, core_path, &a, gcored, sizeof(gcored)))
		return;
	if (!core_open(&c, gcored)) {
		ok(false, "core: elf_begin on %s", gcored);
		return;
	}

	capture_begin();
	s = open_core(&c, prog, NULL);
	p = sym_lookup(s, a.ra_leaf, true);
	err = capture_end();
	ok(streq(sym_source(s), "core file notes") && err[0] == '\0',
	   "core: module list from the core file notes, no warnings (%s)", sym_source(s));
	ok(is_leaf_chain(p, true) && p->in_program && streq(p->module, real) &&
	   p->module_offset == a.ra_leaf - a.base,
	   "core: PIE return address, inline chain, module %s", real);
	p = sym_lookup(s, a.ra_outer, true);
	ok(is_outer(p, true), "core: sym_prog_outer:%d", L.outer_probe);
	p = sym_lookup(s, a.malloc_fn, false);
	ok(p->module && strstr(p->module, "libc.so") && !p->in_program && p->frames[0].func,
	   "core: malloc in libc (%s in %s)", p->frames[0].func, p->module);
	if (!p->module)
		show(p);
	sym_close(s);

	capture_begin();
	s = open_core(&c, tpath("nopie"), NULL);
	p = sym_lookup(s, a.ra_leaf, true);
	err = capture_end();
	ok(strstr(err, "does not match the core (build-id") && is_leaf_chain(p, true) &&
	   p->in_program, "core with the wrong PROGRAM: warning, the core's own file is used");
	sym_close(s);

	capture_begin();
	s = open_core(&c, "/nonexistent/prog", NULL);
	p = sym_lookup(s, a.ra_leaf, true);
	err = capture_end();
	ok(strstr(err, "cannot read PROGRAM") && is_leaf_chain(p, true),
	   "core with a missing PROGRAM: warning, the core's own file is used");
	sym_close(s);

	s = open_core(&c, NULL, NULL);
	p = sym_lookup(s, a.ra_outer, true);
	ok(is_outer(p, true), "core with no PROGRAM at all");
	sym_close(s);
	core_close(&c);

	if (patch_core(gcored, tpath("core-nofile"), false) && core_open(&c, tpath("core-nofile"))) {
		s = open_core(&c, prog, NULL);
		p = sym_lookup(s, a.ra_leaf, true);
		ok(streq(sym_source(s), "link_map in core memory") && is_leaf_chain(p, true) &&
		   p->in_program, "core without NT_FILE: %s, still resolves", sym_source(s));
		p = sym_lookup(s, a.malloc_fn, false);
		ok(p->module && p->frames[0].func, "core without NT_FILE: libc found through link_map");
		if (!p->module || !p->frames[0].func)
			show(p);
		sym_close(s);
		core_close(&c);
	} else {
		ok(false, "core without NT_FILE: patched copy");
	}

	if (patch_core(gcored, tpath("core-nomod"), true) && core_open(&c, tpath("core-nomod"))) {
		/* nor any memory to find a link_map in: only the notes and PROGRAM are left */
		c.img.nsegs = 0;
		capture_begin();
		s = open_core(&c, prog, NULL);
		p = sym_lookup(s, a.ra_leaf, true);
		err = capture_end();
		ok(streq(sym_source(s), "PROGRAM only") && strstr(err, "cannot list modules") &&
		   is_leaf_chain(p, true) && p->in_program && p->module_offset == a.ra_leaf - a.base,
		   "core with no module list: PROGRAM only, placed by AT_ENTRY (%s)", sym_source(s));
		sym_close(s);
		core_close(&c);
	} else {
		ok(false, "core with no module list: patched copy");
	}

	/* the program moves under a sysroot: only --sysroot finds it */
	snprintf(sysroot_prog, sizeof(sysroot_prog), "%s/sysroot%s", tmp, real);
	if (run("mkdir -p \"$(dirname '%s')\" && mv '%s' '%s'", sysroot_prog, prog, sysroot_prog) == 0 &&
	    core_open(&c, gcored)) {
		capture_begin();
		s = open_core(&c, NULL, NULL);
		p = sym_lookup(s, a.ra_leaf, true);
		err = capture_end();
		ok(p->frames[0].func == NULL && streq(p->module, real) && strstr(err, "cannot find") &&
		   p->module_offset == a.ra_leaf - a.base,
		   "core whose executable is gone: module+offset and a warning");
		sym_close(s);
		s = open_core(&c, NULL, tpath("sysroot/"));
		p = sym_lookup(s, a.ra_leaf, true);
		ok(is_leaf_chain(p, true) && streq(p->module, real) && p->in_program,
		   "core with --sysroot: the executable is found under it");
		sym_close(s);
		core_close(&c);
	} else {
		ok(false, "core: moved the program under a sysroot");
	}
}


/*
 * The target ran a stripped copy; its debug info is in PROGRAM (the unstripped build,
 * same build-id) or in a --debug-dir by build-id.
 */
static void test_core_stripped(void)
{
	const char *prog = tpath("strippie"), *dirs[] = { tpath("piedebug"), NULL };
	char id[2 * 64 + 1], gcored[PATH_MAX + 32];
	struct addrs a;
	struct core c;
	struct sym_opts o;
	struct sym *s;
	const struct sym_pc *p;
	const char *err;

	if (!build_id_hex(tpath("pie"), id, sizeof(id)) ||
	    run("mkdir -p '%s/.build-id/%.2s' && objcopy --only-keep-debug '%s' "
		"'%s/.build-id/%.2s/%s.debug' && objcopy --strip-all '%s' '%s'", dirs[0], id,
		tpath("pie"), dirs[0], id, id + 2, tpath("pie"), prog) != 0) {
		ok(false, "stripped core: strip the PIE");
		return;
	}
	if (!take_core(prog, tpath("core-stripped"), &a, gcored, sizeof(gcored)) ||
	    !core_open(&c, gcored))
		return;
	capture_begin();
	s = open_core(&c, NULL, NULL);
	p = sym_lookup(s, a.ra_leaf, true);
	err = capture_end();
	ok(p->in_program && p->frames[0].func == NULL && p->module_offset == a.ra_leaf - a.base &&
	   strstr(err, "no debug info for PROGRAM"),
	   "core of a stripped executable: module+offset and a warning");
	sym_close(s);

	s = open_core(&c, tpath("pie"), NULL);
	p = sym_lookup(s, a.ra_leaf, true);
	ok(is_leaf_chain(p, true) && p->in_program,
	   "core of a stripped executable: debug info from the unstripped PROGRAM");
	sym_close(s);

	memset(&o, 0, sizeof(o));
	o.img = &c.img;
	o.debug_dirs = dirs;
	o.ndebug_dirs = 1;
	s = sym_open(&o);
	p = sym_lookup(s, a.ra_leaf, true);
	ok(is_leaf_chain(p, true), "core of a stripped executable: debug info by build-id in --debug-dir");
	sym_close(s);
	core_close(&c);
}

static bool build_all(void)
{
	char id[2 * 64 + 1];
	const char *w = "-Wall -Wextra -Wno-unused-parameter";

	if (run("%s -O2 -g %s -fno-pie -no-pie -o '%s' '%s' -ldl", cc, w, tpath("nopie"), src) ||
	    run("%s -O2 -g %s -fPIE -pie -o '%s' '%s' -ldl", cc, w, tpath("pie"), src) ||
	    run("%s -O2 %s -fno-pie -no-pie -o '%s' '%s' -ldl", cc, w, tpath("nodebug"), src) ||
	    run("%s -O2 -g %s -fPIC -shared -o '%s' '%s' -ldl", cc, w, tpath("libprog.so"), src))
		return false;
	/* debug info only at debugdir/.build-id/xx/rest.debug; no .gnu_debuglink to it */
	if (!build_id_hex(tpath("nopie"), id, sizeof(id)))
		return false;
	return run("mkdir -p '%s/debugdir/.build-id/%.2s' && objcopy --only-keep-debug '%s' "
		   "'%s/debugdir/.build-id/%.2s/%s.debug' && objcopy --strip-all '%s' '%s'",
		   tmp, id, tpath("nopie"), tmp, id, id + 2, tpath("nopie"), tpath("stripped")) == 0;
}

int main(int argc, char **argv)
{
	struct image img = raw_image(8, false, EM_X86_64);
	const char *tdir = getenv("TMPDIR");
	char here[PATH_MAX];

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* no network lookups of debug info from a unit test */
	unsetenv("DEBUGINFOD_URLS");
	elf_version(EV_CURRENT);
	cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	snprintf(here, sizeof(here), "%s", __FILE__);
	snprintf(src, sizeof(src), "%s/sym_prog.c", argc > 1 ? argv[1] : dirname(here));
	snprintf(tmp, sizeof(tmp), "%s/sym_test.XXXXXX", tdir && *tdir ? tdir : "/tmp");
	if (!mkdtemp(tmp) || !find_lines()) {
		ok(false, "cannot read %s or make a temp dir: %s", src, strerror(errno));
		return tap_done();
	}
	if (!ok(build_all(), "helper programs build with %s", cc))
		goto out;
	test_raw_nopie(&img);
	test_raw_pie(&img);
	test_raw_stripped(&img);
	test_raw_nodebug(&img);
	test_raw_bad_program(&img);
	test_raw_module(&img);
	test_cross("arm-linux-gnueabihf");
	test_cross("s390x-linux-gnu");
	test_cross("mips-linux-gnu");
	test_core();
	test_core_stripped();
out:
	if (!getenv("SYM_TEST_KEEP"))
		run("rm -rf '%s'", tmp);
	else
		diag("kept %s", tmp);
	for (size_t i = 0; i < n_tnames; i++)
		free(tnames[i]);
	return tap_done();
}
