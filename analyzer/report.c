/*
 * From scan totals to a report: sort stacks (bytes descending, then blocks, then
 * frames, so that ties are stable), cut by --top and --min-percent, and symbolize
 * the stacks kept, expanding inlined functions into frames of their own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "names.h"
#include "report.h"
#include "sym.h"
#include "util.h"

static int stack_cmp(const void *a, const void *b)
{
	const struct stack *x = *(const struct stack *const *)a, *y = *(const struct stack *const *)b;

	uint64_t xb = stack_bytes(x), yb = stack_bytes(y), xn = stack_blocks(x), yn = stack_blocks(y);

	if (xb != yb)
		return xb > yb ? -1 : 1;
	if (xn != yn)
		return xn > yn ? -1 : 1;
	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	for (unsigned i = 0; i < x->nframes && i < y->nframes; i++)
		if (x->pcs[i] != y->pcs[i])
			return x->pcs[i] < y->pcs[i] ? -1 : 1;
	return (x->nframes > y->nframes) - (x->nframes < y->nframes);
}

/* --short-names: the report keeps the shortened copy. */
static const char *shorten(struct report *r, const char *name)
{
	char buf[1024];
	char *copy;

	if (!name)
		return NULL;
	short_name(name, buf, sizeof(buf));
	if (!strcmp(buf, name))
		return name;
	copy = xstrdup(buf);
	r->owned = xrealloc(r->owned, (r->nowned + 1) * sizeof(*r->owned));
	r->owned[r->nowned++] = copy;
	return copy;
}

static struct report_frame *symbolize(struct report *r, const struct stack *s, struct sym *sym,
				      bool short_names, unsigned *n)
{
	struct report_frame *v = NULL;
	size_t cap = 0, k = 0;

	for (unsigned i = 0; i < s->nframes; i++) {
		/* every recorded pc is a return address: look up the call before it */
		const struct sym_pc *p;

		if (!s->pcs[i])
			continue;	/* a null return address ends the stack on some ABIs */
		p = sym_lookup(sym, s->pcs[i], true);

		for (unsigned j = 0; j < p->nframes; j++) {
			if (k == cap)
				v = xrealloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
			v[k++] = (struct report_frame){
				.pc = s->pcs[i],
				.func = short_names ? shorten(r, p->frames[j].func)
						    : p->frames[j].func,
				.file = p->frames[j].file,
				.line = p->frames[j].line,
				.module = p->module,
				.module_offset = p->module_offset,
				.in_program = p->in_program,
				.inlined = j + 1 < p->nframes,
			};
		}
	}
	*n = (unsigned)k;
	return v;
}

void report_build(struct report *r, const struct scan_result *scan, const struct image *img,
		  struct sym *sym, const struct report_opts *o)
{
	size_t n, keep = 0;
	struct stack **all = stacks_list(&scan->stacks, &n);
	struct report_stack *v;

	qsort(all, n, sizeof(*all), stack_cmp);
	r->live_bytes = r->live_blocks = 0;
	for (size_t i = 0; i < n; i++) {
		if (__builtin_add_overflow(r->live_bytes, stack_bytes(all[i]), &r->live_bytes))
			r->live_bytes = UINT64_MAX;
		if (__builtin_add_overflow(r->live_blocks, stack_blocks(all[i]), &r->live_blocks))
			r->live_blocks = UINT64_MAX;
	}
	if (scan->join.sampled_blocks && scan->join.have_proc)
		r->sample_period = scan->join.proc.sample_period;
	r->unknown_blocks = scan->join.unknown_blocks;
	r->unknown_bytes = scan->join.unknown_bytes;
	r->damaged = scan->join.damaged;
	r->all_stacks = n;
	r->scan = scan;
	r->img = img;
	r->wsize = img->wsize;
	r->big_endian = img->big_endian;
	r->modules = sym_source(sym);
	r->mods = sym_modules(sym, &r->nmods);
	r->saturated = scan->stacks.saturated || r->live_bytes == UINT64_MAX;
	v = xcalloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		const struct stack *s = all[i];
		uint64_t bytes = stack_bytes(s), blocks = stack_blocks(s);
		double pct = r->live_bytes ? 100.0 * (double)bytes / (double)r->live_bytes : 0;

		if ((o->top && keep >= o->top) || pct < o->min_percent) {
			r->rest_bytes += bytes;
			r->rest_blocks += blocks;
			continue;
		}
		v[keep].bytes = bytes;
		v[keep].blocks = blocks;
		v[keep].flags = s->flags;
		v[keep].recorded_frames = s->nframes;
		if (o->sizes)
			v[keep].sizes = stacks_sizes(s, &v[keep].nsizes);
		v[keep].frames = symbolize(r, s, sym, o->short_names, &v[keep].nframes);
		keep++;
	}
	r->stacks = v;
	r->nstacks = keep;
	free(all);
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nstacks; i++) {
		free((void *)r->stacks[i].sizes);
		free((void *)r->stacks[i].frames);
	}
	free((void *)r->stacks);
	for (size_t i = 0; i < r->nowned; i++)
		free(r->owned[i]);
	free(r->owned);
	free((void *)r->mods);
}

const char *report_frame_name(const struct report_frame *f, char *buf, size_t size)
{
	const char *base;

	if (f->func)
		return f->func;
	if (f->module) {
		base = strrchr(f->module, '/');
		snprintf(buf, size, "%s+0x%llx", base ? base + 1 : f->module,
			 (unsigned long long)f->module_offset);
	} else {
		snprintf(buf, size, "0x%llx", (unsigned long long)f->pc);
	}
	return buf;
}

const char *report_thousands(uint64_t v, char *buf)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), k = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = tmp[i];
	}
	buf[k] = 0;
	return buf;
}
