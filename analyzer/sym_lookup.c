/*
 * Symbolization, part two: per pc the module, the function, its chain of inlined
 * callers with file:line, each pc resolved once and cached, names demangled and kept
 * once. sym_dwfl.c has reported the modules.
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

#include "escape_name.h"
#include "image.h"
#include "rd.h"
#include "sym.h"
#include "sym_dwfl.h"
#include "util.h"

/* libiberty's (binutils) demangler, for Rust; the header is C and self-contained */
#include <demangle.h>

/* libstdc++'s demangler (extern "C"), declared here so that no C++ header is needed */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

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

/*
 * The slot for key in t: the one whose entry is the same as key, or the empty one
 * where it belongs. Grows t first when it would be over half full (rehashing each
 * entry with rehash). NULL when memory runs out.
 */
static void **ptab_slot(struct ptab *t, uint64_t hash, const void *key, size_t first_cap,
			bool (*same)(const void *entry, const void *key),
			uint64_t (*rehash)(const void *entry))
{
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : first_cap;
		void **v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t k = 0; k < t->cap; k++) {
			if (!t->v[k])
				continue;
			for (i = rehash(t->v[k]) & (cap - 1); v[i]; i = (i + 1) & (cap - 1))
				;
			v[i] = t->v[k];
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
	}
	for (i = hash & (t->cap - 1); t->v[i] && !same(t->v[i], key); i = (i + 1) & (t->cap - 1))
		;
	return &t->v[i];
}

/* Free every entry of t with release, then t itself. */
static void ptab_free(struct ptab *t, void (*release)(void *entry))
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->v[i])
			release(t->v[i]);
	free(t->v);
	*t = (struct ptab){ 0 };
}

static bool str_same(const void *entry, const void *key)
{
	return !strcmp(entry, key);
}

static uint64_t str_hash(const void *entry)
{
	return hash_bytes(entry);
}

/*
 * One copy of each string, owned by s: results stay valid whatever libdw later frees,
 * and the thousands of frames of one function share one name. Every name the
 * symbolizer hands out comes through here, so here it is made safe to print: the
 * target's symbols, paths and Python strings may hold any bytes (escape.h). NULL in,
 * NULL out.
 */
const char *sym_intern(struct sym *s, const char *str)
{
	char *esc = escape_name(str);
	void **slot;

	if (esc)
		str = esc;
	if (!str || !(slot = ptab_slot(&s->strs, hash_bytes(str), str, 256, str_same, str_hash))) {
		free(esc);
		return NULL;
	}
	if (!*slot && (*slot = esc ? esc : strdup(str))) {
		s->strs.n++;
		esc = NULL;	/* kept */
	}
	free(esc);
	return *slot;
}

/*
 * C++ and Rust names come demangled; C names, and anything the demanglers reject, as
 * they are. Rust's legacy names (_ZN...17h<hash>E) are also valid C++ manglings, so
 * libiberty's Rust demangler goes first: it takes only names with the hash suffix
 * (and drops the hash) or v0 names (_R...), and gives NULL for all others.
 */
const char *sym_name(struct sym *s, const char *name)
{
	char *d = NULL;
	const char *r;
	int status = -1;

	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return sym_intern(s, name);
	d = rust_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	if (d)
		status = 0;
	else if (name[1] == 'Z')
		d = __cxa_demangle(name, NULL, NULL, &status);
	r = sym_intern(s, status == 0 && d ? d : name);
	free(d);
	return r;
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
 * dwarf_getscopes walks a unit's DIEs from the top for every address, which is
 * quadratic on a unit with thousands of functions. Each unit's functions are listed
 * once instead, sorted by address, and a lookup walks down the one function holding
 * the pc. Anything the index does not cover takes the dwarf_getscopes way.
 */
#define SCOPE_DEPTH 64		/* nested lexical blocks and inlined instances followed */

struct fn_range {
	Dwarf_Addr lo, hi;	/* [lo, hi) in the unit's addresses */
	Dwarf_Die die;		/* the DW_TAG_subprogram */
};

struct cu_index {
	const void *key;	/* the unit DIE's bytes: one per unit of every module */
	struct fn_range *v;
	size_t n, cap;
};

static bool fn_push(struct cu_index *ci, Dwarf_Addr lo, Dwarf_Addr hi, Dwarf_Die *die)
{
	if (ci->n == ci->cap) {
		size_t cap = ci->cap ? ci->cap * 2 : 64;
		struct fn_range *v = realloc(ci->v, cap * sizeof(*v));

		if (!v)
			return false;
		ci->v = v;
		ci->cap = cap;
	}
	ci->v[ci->n++] = (struct fn_range){ lo, hi, *die };
	return true;
}

/* Functions with code among parent's children, and inside namespaces and classes. */
static void collect_functions(struct cu_index *ci, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;

	if (depth > 16 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (tag == DW_TAG_subprogram) {
			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
				if (lo < hi && !fn_push(ci, lo, hi, &child))
					return;
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			   tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
			   tag == DW_TAG_module) {
			collect_functions(ci, &child, depth + 1);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int fn_cmp(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static struct cu_index *cu_index_build(Dwarf_Die *cudie)
{
	struct cu_index *ci = calloc(1, sizeof(*ci));

	if (!ci)
		return NULL;
	ci->key = cudie->addr;
	collect_functions(ci, cudie, 0);
	if (ci->n > 1)	/* v is NULL for a unit of no function (assembly) */
		qsort(ci->v, ci->n, sizeof(*ci->v), fn_cmp);
	return ci;
}

static bool cu_same(const void *entry, const void *key)
{
	return ((const struct cu_index *)entry)->key == key;
}

static uint64_t cu_hash(const void *entry)
{
	return hash_pc((uintptr_t)((const struct cu_index *)entry)->key, false);
}

static void cu_free(void *entry)
{
	free(((struct cu_index *)entry)->v);
	free(entry);
}

/* The function of cudie's unit whose code holds pc (unit addresses), or NULL. */
static const struct fn_range *cu_function(struct sym *s, Dwarf_Die *cudie, Dwarf_Addr pc)
{
	void **slot = ptab_slot(&s->cus, hash_pc((uintptr_t)cudie->addr, false), cudie->addr, 64,
				cu_same, cu_hash);
	struct cu_index *ci;
	size_t lo = 0, hi;

	if (!slot)
		return NULL;
	if (!*slot) {
		if (!(*slot = cu_index_build(cudie)))
			return NULL;
		s->cus.n++;
	}
	ci = *slot;
	/* the last range starting at or below pc; ranges of one unit do not overlap */
	for (hi = ci->n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (ci->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < ci->v[lo - 1].hi ? &ci->v[lo - 1] : NULL;
}

/*
 * A DW_TAG_lexical_block without addresses of its own groups DIEs and holds no code:
 * the walk looks through it.
 */
static bool transparent(Dwarf_Die *die)
{
	return dwarf_tag(die) == DW_TAG_lexical_block && !dwarf_hasattr(die, DW_AT_low_pc) &&
	       !dwarf_hasattr(die, DW_AT_ranges);
}

/* The child of parent (looking through transparent blocks) whose code holds pc. */
static bool scope_child(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
	Dwarf_Die child;

	if (depth > SCOPE_DEPTH || dwarf_child(parent, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
			continue;
		if (transparent(&child) ? scope_child(&child, pc, out, depth + 1) :
					  dwarf_haspc(&child, pc) > 0) {
			if (!transparent(&child))
				*out = child;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* Scopes holding pc inside function fn, innermost first, fn last; their count. */
static int scope_path(Dwarf_Die *fn, Dwarf_Addr pc, Dwarf_Die *path)
{
	Dwarf_Die down[SCOPE_DEPTH];
	int n = 0;

	down[n++] = *fn;
	while (n < SCOPE_DEPTH && scope_child(&down[n - 1], pc, &down[n], 0))
		n++;
	for (int i = 0; i < n; i++)
		path[i] = down[n - 1 - i];
	return n;
}

static int inline_frames(struct sym *s, Dwarf_Die *chain, int n, Dwarf_Files *files,
			 const char *file, int line, struct frame_vec *fv);

/*
 * The inline chain at addr. Through the unit's function index where it can; else as
 * eu-addr2line -i walks it: dwarf_getscopes gives the innermost scope (after it come
 * the abstract definition's scopes, which we do not want), and dwarf_getscopes_die
 * that scope's real parents.
 */
static void dwarf_frames(struct sym *s, Dwarf_Die *cudie, Dwarf_Addr cu_pc, const char *file,
			 int line, struct frame_vec *fv)
{
	Dwarf_Die *scopes = NULL, *chain = NULL, inner, cu, path[SCOPE_DEPTH], fdie;
	Dwarf_Files *files = NULL;
	const struct fn_range *fn = cu_function(s, cudie, cu_pc);
	int n;

	/* the fast way: the function from the unit's index, then down its own scopes */
	if (fn && (fdie = fn->die, n = scope_path(&fdie, cu_pc, path)) > 0) {
		if (dwarf_getsrcfiles(cudie, &files, NULL) != 0)
			files = NULL;
		inline_frames(s, path, n, files, file, line, fv);
		return;
	}
	n = dwarf_getscopes(cudie, cu_pc, &scopes);
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
	inline_frames(s, chain, n, files, file, line, fv);
	free(chain);
}

/*
 * chain[0..n): scopes from the innermost outwards. Each inlined instance is a frame at
 * the file:line the pc is at (or its callee left off at); its DW_AT_call_file/_line is
 * where the next frame out was. Ends at the concrete function.
 */
static int inline_frames(struct sym *s, Dwarf_Die *chain, int n, Dwarf_Files *files,
			 const char *file, int line, struct frame_vec *fv)
{
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
			file = sym_intern(s, dwarf_filesrc(files, v, NULL, NULL));
		if (die_udata(&chain[i], DW_AT_call_line, &v) == 0)
			line = clamp_line(v);
	}
	return 0;
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
		sym_hex(id + strlen(id), sizeof(id) - strlen(id), bits, (size_t)n);
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
	name = sym_intern(s, name);
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
	if (s->no_names) {	/* the module and the offset in it, as the dump says */
		res->module = module_display(s, m, mod);
		res->module_offset = pc - start;
		res->in_program = m && m->is_program;
		return;
	}
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

		file = sym_intern(s, src);
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

/* The address pc is looked up at. A return address follows the call, which may be its
 * function's last instruction: pc - 1 is inside the call, so inside the right function
 * and line. On ARM, bit 0 marks Thumb code (__builtin_return_address keeps it), no
 * address bit. */
static uint64_t lookup_addr(const struct sym *s, uint64_t pc, bool is_return_addr)
{
	uint64_t code = s->prog.e_machine == EM_ARM ? pc & ~(uint64_t)1 : pc;

	return is_return_addr && code > 0 ? code - 1 : code;
}

static struct sym_entry *resolve(struct sym *s, uint64_t pc, bool is_return_addr)
{
	uint64_t addr = lookup_addr(s, pc, is_return_addr);
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

struct pc_key {
	uint64_t pc;
	bool is_return_addr;
};

static bool entry_same(const void *entry, const void *key)
{
	const struct sym_entry *e = entry;
	const struct pc_key *k = key;

	return e->res.pc == k->pc && e->is_return_addr == k->is_return_addr;
}

static uint64_t entry_hash(const void *entry)
{
	const struct sym_entry *e = entry;

	return hash_pc(e->res.pc, e->is_return_addr);
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
	struct pc_key key = { pc, is_return_addr };
	struct sym_entry *e;
	void **slot;

	if (!s) {
		none = (struct sym_pc){ .pc = pc, .module_offset = pc, .nframes = 1,
					.frames = &none_frame };
		return &none;
	}
	slot = ptab_slot(&s->pcs, hash_pc(pc, is_return_addr), &key, 1024, entry_same, entry_hash);
	if (!slot)
		return oom_result(s, pc);
	if (*slot)
		return &((struct sym_entry *)*slot)->res;
	e = resolve(s, pc, is_return_addr);
	if (!e)
		return oom_result(s, pc);
	*slot = e;
	s->pcs.n++;
	return &e->res;
}

void sym_lookup_ahead(struct sym *s, const uint64_t *pcs, size_t n)
{
	/* one outside every module now is left: sym_add_unloaded may give it one later */
	for (size_t i = 0; s && s->dwfl && i < n; i++)
		if (dwfl_addrmodule(s->dwfl, lookup_addr(s, pcs[i], true)))
			sym_lookup(s, pcs[i], true);
}

void sym_lookup_free(struct sym *s)
{
	ptab_free(&s->pcs, free);
	ptab_free(&s->strs, free);
	ptab_free(&s->cus, cu_free);
}
