/*
 * The module table of a report (sym.h): every module the symbolizer reported, with its
 * address range and build-id, for writers that name mappings (pprof) and for stable
 * frame identities (module + offset); and the executable's file for the report header.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_dwfl.h"
#include "util.h"

struct mods_acc {
	struct sym_module_info *v;
	size_t n, cap;
};

static int one_module(Dwfl_Module *m, void **userdata, const char *name, Dwarf_Addr start,
		      void *arg)
{
	struct mods_acc *a = arg;
	struct sym_mod *sm = *userdata;
	const unsigned char *id;
	GElf_Addr vaddr;
	Dwarf_Addr end;
	const char *file = NULL;
	int len;
	struct sym_module_info *i;

	if (a->n == a->cap)
		a->v = xrealloc(a->v, (a->cap = a->cap ? a->cap * 2 : 16) * sizeof(*a->v));
	i = &a->v[a->n++];
	memset(i, 0, sizeof(*i));
	dwfl_module_info(m, NULL, NULL, &end, NULL, NULL, &file, NULL);
	/* the file, as pprof wants it, unless only a copy by build-id was found */
	i->path = file && !(sm && sm->by_build_id) ? file : name;
	i->name = name;
	i->start = start;
	i->end = end;
	len = dwfl_module_build_id(m, &id, &vaddr);
	for (int k = 0; k < len && k < (int)sizeof(i->build_id) / 2; k++)
		snprintf(i->build_id + 2 * k, 3, "%02x", id[k]);
	return DWARF_CB_OK;
}

bool sym_libc_named(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	b = b ? b + 1 : path;
	return b && (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-2.", 7));
}

static int by_start(const void *a, const void *b)
{
	const struct sym_module_info *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

struct sym_module_info *sym_modules(struct sym *s, size_t *n)
{
	struct mods_acc a = { 0 };

	if (s && s->dwfl)
		dwfl_getmodules(s->dwfl, one_module, &a, 0);
	if (a.n)
		qsort(a.v, a.n, sizeof(*a.v), by_start);
	*n = a.n;
	return a.v;
}

const char *sym_program(struct sym *s)
{
	const char *name, *file = NULL;
	char *both;
	GElf_Addr bias;

	if (!s || !s->prog_mismatch || !s->dwfl || !s->main_mod)
		return s ? s->program : NULL;
	/* the file is looked for on first use; this may be it */
	bool have = dwfl_module_getelf(s->main_mod, &bias);

	name = dwfl_module_info(s->main_mod, NULL, NULL, NULL, NULL, NULL, &file, NULL);
	/* a file libdwfl took while listing the core's modules keeps no name: the core's */
	if (have)
		return sym_intern(s, file ? file : name);
	if (!name || !(both = malloc(strlen(name) + sizeof(" (no matching file)"))))
		return s->program;
	sprintf(both, "%s (no matching file)", name);
	name = sym_intern(s, both);
	free(both);
	return name ? name : s->program;
}
