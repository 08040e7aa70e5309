/*
 * --base=OLD: the report NEW - OLD. Stacks are matched by what stays the same from
 * one run to the next: each frame is its module's file name and the offset in it
 * (never the address, which ASLR moves), or, when the module's build-id differs
 * between the two (the program was rebuilt), the function's name. Stacks that match
 * are one stack of the difference, shown with NEW's frames (OLD's if only OLD has it);
 * stacks whose difference is zero are left out.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "sym.h"
#include "util.h"
#include "views.h"

struct entry {
	char *key;
	int side;		/* 0 NEW, 1 OLD */
	const struct report_stack *s;
};

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static const char *build_id(const struct report *r, const char *path)
{
	for (size_t i = 0; i < r->nmods; i++)
		if (r->mods[i].path == path || !strcmp(r->mods[i].path, path))
			return r->mods[i].build_id;
	return "";
}

/* same file name and build-id in both reports: offsets in it mean the same code */
static bool same_module(const struct report *a, const struct report *b, const char *path)
{
	const char *name = base_name(path), *ida = build_id(a, path);

	for (size_t i = 0; i < b->nmods; i++)
		if (!strcmp(base_name(b->mods[i].path), name))
			return !strcmp(ida, b->mods[i].build_id);
	return false;
}

struct buf {
	char *s;
	size_t n, cap;
};

static void put(struct buf *b, const char *s)
{
	size_t len = strlen(s);

	if (b->n + len + 1 > b->cap)
		b->s = xrealloc(b->s, b->cap = (b->n + len + 1) * 2);
	memcpy(b->s + b->n, s, len + 1);
	b->n += len;
}

static char *stack_key(const struct report *r, const struct report *other,
		       const struct report_stack *s)
{
	struct buf b = { 0 };
	char tmp[600];

	snprintf(tmp, sizeof(tmp), "%x:%" PRIu32, s->flags, s->tid);
	put(&b, tmp);
	for (unsigned j = 0; j < s->nframes; j++) {
		const struct report_frame *f = &s->frames[j];

		if (f->python)	/* the record's address differs from dump to dump */
			snprintf(tmp, sizeof(tmp), "|py:%s:%s:%d", f->func ? f->func : "",
				 f->file ? f->file : "", f->line);
		else if (f->module && same_module(r, other, f->module))
			snprintf(tmp, sizeof(tmp), "|%s+%" PRIx64 ":%s", base_name(f->module),
				 f->module_offset, f->func ? f->func : "");
		else if (f->module && f->func)
			snprintf(tmp, sizeof(tmp), "|%s:%s", base_name(f->module), f->func);
		else if (f->func)
			snprintf(tmp, sizeof(tmp), "|:%s", f->func);
		else
			snprintf(tmp, sizeof(tmp), "|%s+%" PRIx64, f->module ? base_name(f->module) : "",
				 f->module ? f->module_offset : f->pc);
		put(&b, tmp);
	}
	return b.s;
}

static int entry_cmp(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);

	return c ? c : a->side - b->side;
}

void diff_build(struct report *out, const struct report *nr, const struct report *o)
{
	size_t n = nr->nstacks + o->nstacks, k = 0;
	struct entry *e = xcalloc(n ? n : 1, sizeof(*e));
	struct report_stack *v = xcalloc(n ? n : 1, sizeof(*v));

	for (size_t i = 0; i < nr->nstacks; i++)
		e[k++] = (struct entry){ stack_key(nr, o, &nr->stacks[i]), 0, &nr->stacks[i] };
	for (size_t i = 0; i < o->nstacks; i++)
		e[k++] = (struct entry){ stack_key(o, nr, &o->stacks[i]), 1, &o->stacks[i] };
	qsort(e, n, sizeof(*e), entry_cmp);
	*out = *nr;
	out->diff = true;
	out->base_source = o->source;
	out->base_live_bytes = o->live_bytes;
	out->base_live_blocks = o->live_blocks;
	out->base_total = o->total;
	out->base_stacks = o->all_stacks;
	out->regions = NULL;	/* NEW's, as are the rings: not the difference's to free */
	out->nregions = 0;
	out->rings = NULL;
	out->nrings = 0;
	out->owned = NULL;
	out->nowned = 0;
	out->mods = NULL;	/* borrowed from NEW: see diff_free() */
	out->nmods = nr->nmods;
	k = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		const struct report_stack *rep = e[i].s;
		struct report_stack st = { .flags = rep->flags, .tid = rep->tid,
					   .thread_name = rep->thread_name,
					   .recorded_frames = rep->recorded_frames,
					   .nframes = rep->nframes };

		for (; j < n && !strcmp(e[j].key, e[i].key); j++)
			views_add_figures(&st, e[j].s, e[j].side ? -1 : 1, true);
		if (st.value || st.bytes || st.blocks) {
			struct report_frame *fr = xcalloc(rep->nframes ? rep->nframes : 1, sizeof(*fr));

			/* [unknown stack] and [no stack] have no frames, and frames may be NULL */
			if (rep->nframes)
				memcpy(fr, rep->frames, rep->nframes * sizeof(*fr));
			st.frames = fr;
			v[k++] = st;
		}
		i = j;
	}
	for (size_t i = 0; i < n; i++)
		free(e[i].key);
	free(e);
	out->stacks = v;
	out->nstacks = out->all_stacks = k;
	out->rest_bytes = out->rest_blocks = out->rest_value = 0;
	out->mods = nr->mods;
}

void diff_free(struct report *r)
{
	r->mods = NULL;		/* NEW's, as are the mappings and labels */
	r->maps = NULL;
	r->labels = NULL;
	r->threads = NULL;
	report_free(r);
}
