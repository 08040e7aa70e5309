/*
 * From scan totals to a report: each stack's figures, sorted by the chosen metric (then
 * bytes, blocks, thread and frames, so that ties are stable), cut by --top and
 * --min-percent, and the stacks kept symbolized, inlined functions as frames of their own.
 */
#include <assert.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape_name.h"
#include "image.h"
#include "json.h"
#include "names.h"
#include "report.h"
#include "report_int.h"
#include "sym.h"
#include "util.h"

static const char *const metric_names[METRIC_COUNT] = {
	[METRIC_INUSE_SPACE] = "inuse_space", [METRIC_INUSE_OBJECTS] = "inuse_objects",
	[METRIC_ALLOC_SPACE] = "alloc_space", [METRIC_ALLOC_OBJECTS] = "alloc_objects",
	[METRIC_ALLOC_TIME] = "alloc_time", [METRIC_RETAINED_SPACE] = "retained_space",
};

const char *report_metric_name(enum report_metric m)
{
	return m < METRIC_COUNT ? metric_names[m] : "?";
}

const char *report_metric_unit(enum report_metric m)
{
	switch (m) {
	case METRIC_INUSE_OBJECTS: return "blocks";
	case METRIC_ALLOC_OBJECTS: return "calls";
	case METRIC_ALLOC_TIME: return "ns";
	default: return "bytes";
	}
}

int report_metric_parse(const char *name)
{
	for (int m = 0; m < METRIC_COUNT; m++)
		if (!strcmp(metric_names[m], name))
			return m;
	return -1;
}

/* A sampled count (units of 1/HP2_COUNT_ONE) in calls, rounded half up. */
static uint64_t count_units(uint64_t v, bool sampled)
{
	return sampled ? v / HP2_COUNT_ONE + (v % HP2_COUNT_ONE >= HP2_COUNT_ONE / 2) : v;
}

/* A stack's figures, its metric in value; the rest of *out zeroed. */
static void figures(const struct stack *s, const struct report *r, struct report_stack *out)
{
	memset(out, 0, sizeof(*out));
	out->bytes = stack_bytes(s);
	out->blocks = stack_blocks(s);
	out->alloc_bytes = s->counts.bytes;
	out->alloc_calls = count_units(s->counts.calls, r->counts_sampled);
	out->frees = count_units(s->counts.frees, r->counts_sampled);
	out->freed_bytes = s->counts.freed;
	out->time_ns = s->counts.time_ns;
	out->retained = s->counts.retained;
	switch (r->metric) {
	case METRIC_INUSE_OBJECTS: out->value = out->blocks; break;
	case METRIC_ALLOC_SPACE: out->value = out->alloc_bytes; break;
	case METRIC_ALLOC_OBJECTS: out->value = out->alloc_calls; break;
	case METRIC_ALLOC_TIME: out->value = out->time_ns; break;
	case METRIC_RETAINED_SPACE: out->value = out->retained; break;
	default: out->value = out->bytes; break;
	}
}

/* Whether a stack belongs in a report by this metric: a live block, a call or free, time;
 * with all, any of them. */
static bool present(const struct stack *s, enum report_metric m, bool all)
{
	if (all)
		return s->nsizes > 0 || s->counts.calls > 0 || s->counts.frees > 0 ||
		       s->counts.time_ns > 0;
	switch (m) {
	case METRIC_INUSE_SPACE:
	case METRIC_INUSE_OBJECTS:
	case METRIC_RETAINED_SPACE: return s->nsizes > 0 || s->blocks > 0; /* --peak: no sizes */
	case METRIC_ALLOC_TIME: return s->counts.time_ns > 0;
	/* frees alone too: another thread's blocks freed here (counted on this thread) */
	default: return s->counts.calls > 0 || s->counts.frees > 0;
	}
}

struct ranked {
	const struct stack *s;
	struct report_stack f;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *p = a, *q = b;
	const struct stack *x = p->s, *y = q->s;

	if (p->f.value != q->f.value)
		return p->f.value > q->f.value ? -1 : 1;
	if (p->f.bytes != q->f.bytes)
		return p->f.bytes > q->f.bytes ? -1 : 1;
	if (p->f.blocks != q->f.blocks)
		return p->f.blocks > q->f.blocks ? -1 : 1;
	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	for (unsigned i = 0; i < x->nframes && i < y->nframes; i++)
		if (x->pcs[i] != y->pcs[i])
			return x->pcs[i] < y->pcs[i] ? -1 : 1;
	return (x->nframes > y->nframes) - (x->nframes < y->nframes);
}

/* A copy the report keeps (freed by report_free). */
static const char *keep(struct report *r, char *copy)
{
	r->owned = xrealloc(r->owned, (r->nowned + 1) * sizeof(*r->owned));
	r->owned[r->nowned++] = copy;
	return copy;
}

/*
 * The names a report takes from outside the symbolizer, which escapes its own
 * (sym_intern): the program and the dump as named (a core's name may come from the
 * target's HEAPPROF_OUTPUT) and the modules' files, made safe to print (escape.h).
 */
static void escape_names(struct report *r, struct sym_module_info *mods, size_t nmods)
{
	char *e;

	if ((e = escape_name(r->program)))
		r->program = keep(r, e);
	if ((e = escape_name(r->source)))
		r->source = keep(r, e);
	for (size_t i = 0; i < nmods; i++) {
		if ((e = escape_name(mods[i].path)))
			mods[i].path = keep(r, e);
		if ((e = escape_name(mods[i].name)))
			mods[i].name = keep(r, e);
	}
}

/* --short-names: the report keeps the shortened copy. */
static const char *shorten(struct report *r, const char *name)
{
	char buf[1024];

	if (!name)
		return NULL;
	short_name(name, buf, sizeof(buf));
	if (!strcmp(buf, name))
		return name;
	return keep(r, xstrdup(buf));
}

struct report_frame *report_symbolize(struct report *r, const uint64_t *pcs, unsigned n,
				      struct sym *sym, bool short_names, unsigned *nout)
{
	struct report_frame *v = NULL;
	size_t cap = 0, k = 0;
	struct sym_pc *ps;
	unsigned np = sym_stack(sym, pcs, n, &ps);	/* pcs as return addresses, and
							 * the Python frames per --python */

	for (unsigned i = 0; i < np; i++) {
		const struct sym_pc *p = &ps[i];

		for (unsigned j = 0; j < p->nframes; j++) {
			if (k == cap)
				v = xrealloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
			v[k++] = (struct report_frame){
				.pc = p->pc,
				.func = short_names && !p->python ? shorten(r, p->frames[j].func)
								  : p->frames[j].func,
				.file = p->frames[j].file,
				.line = p->frames[j].line,
				.module = p->module,
				.module_offset = p->module_offset,
				.in_program = p->in_program,
				.inlined = j + 1 < p->nframes || p->cut,
				.python = p->python,
			};
		}
	}
	free(ps);
	*nout = (unsigned)k;
	return v;
}

/* The frames a stack record held: a Python frame's two words are one frame. */
static unsigned recorded_frames(const struct stack *s)
{
	unsigned native = 0;

	while (native < s->nframes && !hp2_is_pyframe_word(s->pcs[native]))
		native++;
	return native + (s->nframes - native + 1) / 2;
}

/* Sampled: each size's blocks as the estimate they stand for, the unit of the stack's
 * blocks (a raw count would be samples), reordered by it. */
static void weigh_sizes(struct size_count *v, size_t n, uint64_t period)
{
	for (size_t i = 0; i < n; i++)
		v[i].count = (uint64_t)((double)v[i].count * decode_sample_weight(v[i].size, period) +
					0.5);
	qsort(v, n, sizeof(*v), stacks_size_count_cmp);
}

static void sum(uint64_t *total, uint64_t v)
{
	if (__builtin_add_overflow(*total, v, total))
		*total = UINT64_MAX;
}

/* What the dump holds, beside the stacks: counts, times, threads, regions, rings. */
static void describe_data(struct report *r, const struct scan_result *scan,
			  const struct report_opts *o)
{
	const struct join_info *j = &scan->join;
	const struct decoded *rec;
	size_t n;
	const char **names;

	r->metric = o->metric;
	r->by_thread = o->by_thread;
	r->short_names = o->short_names;
	r->region = o->region;
	r->have_counts = j->counted_sites > 0 || (j->have_proc && j->site_recs > 0);
	r->counts_sampled = j->sampled_counts;
	r->counts_period = j->sampled_counts ? j->proc.sample_period : 0;
	r->have_time = j->have_time;
	r->nthreads = (size_t)j->thread_recs;
	r->nrings = (size_t)j->rings;
	rec = collect_records(&scan->found, DEC_REGION, &n);
	names = xcalloc(n ? n : 1, sizeof(*names));
	for (size_t i = 0; i < n; i++)	/* sorted by id; ids are unique per name */
		if (!r->nregions || strcmp(names[r->nregions - 1], rec[i].region.name))
			names[r->nregions++] = rec[i].region.name;
	r->regions = names;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct report_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* The threads the dump names, by tid, for every format (not only --by-thread's); one
 * that ended says so. */
static void name_threads(struct report *r, const struct scan_result *scan)
{
	size_t n, k = 0, j;
	const struct decoded *rec = collect_records(&scan->found, DEC_THREAD, &n);
	struct report_thread *t = xcalloc(n ? n : 1, sizeof(*t));

	for (size_t i = 0; i < n; i++) {
		const char *name = collect_thread_name(&scan->found, rec[i].thread.tid);

		if (name)
			t[k++] = (struct report_thread){ rec[i].thread.tid, name };
	}
	if (k > 1)
		qsort(t, k, sizeof(*t), thread_cmp);
	for (size_t i = j = (k > 0); i < k; i++)	/* one per tid */
		if (t[i].tid != t[j - 1].tid)
			t[j++] = t[i];
	r->threads = t;
	r->nthreads_named = j;
}

/* What the scan read and rejected, so that writers need not ask it. */
static void describe_scan(struct report *r, const struct scan_result *scan,
			  const struct image *img)
{
	r->lean_dumps = img->lean;
	r->lean_headers = img->lean_headers;
	r->scanned_bytes = img->bytes;
	r->segments = img->nsegs;
	r->missing_bytes = img->missing_bytes;
	r->missing_segs = img->missing_segs + img->truncated_segs;
	r->rejected_total = scan->join.damaged;
	for (int i = 0; i < REJ_NREASONS; i++) {
		r->rejected[i] = (struct report_reject){ decode_reason((enum decode_reject)i),
							 scan->rejected[i] };
		sum(&r->rejected_total, scan->rejected[i]);
	}
}

void report_count(struct report *r, const struct scan_result *scan)
{
	size_t n;
	struct stack **all = stacks_list(&scan->stacks, &n);
	bool sampled = scan->join.sampled_counts;

	r->alloc_bytes = r->alloc_calls = r->frees = r->freed_bytes = r->time_ns = 0;
	for (size_t i = 0; i < n; i++) {
		const struct stack_counts *c = &all[i]->counts;

		sum(&r->alloc_bytes, c->bytes);
		sum(&r->alloc_calls, count_units(c->calls, sampled));
		sum(&r->frees, count_units(c->frees, sampled));
		sum(&r->freed_bytes, c->freed);
		sum(&r->time_ns, c->time_ns);
	}
	r->counted = true;
	free(all);
}

/* The symbols' module table, as the report's, its names escaped. */
static struct report_module *modules(struct report *r, struct sym *sym, size_t *n)
{
	struct sym_module_info *m = sym_modules(sym, n);
	struct report_module *v = xcalloc(*n ? *n : 1, sizeof(*v));

	escape_names(r, m, *n);
	for (size_t i = 0; i < *n; i++) {
		v[i] = (struct report_module){ m[i].path, m[i].start, m[i].end, "" };
		memcpy(v[i].build_id, m[i].build_id, sizeof(v[i].build_id));
	}
	free(m);
	return v;
}

/* The dump's file mappings that lie in a module of the table, with their offsets. */
static struct report_mapping *mappings(const struct report *r, const struct image *img,
				       size_t *n)
{
	struct report_mapping *v = xcalloc(img->nfiles ? img->nfiles : 1, sizeof(*v));
	size_t k = 0;

	for (size_t i = 0; i < img->nfiles; i++) {
		const struct image_file *f = &img->files[i];

		for (size_t m = 0; m < r->nmods; m++)
			if (f->start >= r->mods[m].start && f->start < r->mods[m].end) {
				v[k++] = (struct report_mapping){ f->start, f->end, f->offset, m };
				break;
			}
	}
	*n = k;
	return v;
}

/* --label's values with the dump's facts put in: %p its pid, %e PROGRAM (the file the
 * report names), %b the build-id of the module holding the entry point, %% a '%'. What
 * the dump does not say is "unknown". */
static const char *const *labels(struct report *r, const struct image *img,
				 const struct report_opts *o)
{
	const char **v = xcalloc(o->nlabels ? o->nlabels : 1, sizeof(*v));
	const char *build_id = "unknown";

	for (size_t m = 0; m < r->nmods; m++)
		if (img->at_entry >= r->mods[m].start && img->at_entry < r->mods[m].end &&
		    r->mods[m].build_id[0])
			build_id = r->mods[m].build_id;
	for (size_t i = 0; i < o->nlabels; i++) {
		char pid[16] = "unknown", *out = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&out, &n);

		if (!f)
			die(EXIT_NO_REPORT, "out of memory");
		if (img->pid)
			snprintf(pid, sizeof(pid), "%u", img->pid);
		for (const char *p = o->labels[i]; *p; p++) {
			if (*p != '%' || !strchr("pbe%", p[1])) {
				fputc(*p, f);
				continue;
			}
			p++;
			fputs(*p == 'p' ? pid : *p == 'b' ? build_id : *p == 'e' ? r->program : "%", f);
		}
		fclose(f);
		v[i] = keep(r, out);
	}
	return v;
}

void report_build(struct report *r, const struct scan_result *scan, const struct image *img,
		  struct sym *sym, const struct report_opts *o)
{
	size_t n, keep = 0, k = 0;
	struct stack **all = stacks_list(&scan->stacks, &n);
	struct ranked *rk = xcalloc(n ? n : 1, sizeof(*rk));
	struct report_stack *v;

	describe_data(r, scan, o);
	describe_scan(r, scan, img);
	name_threads(r, scan);
	if (!r->counted)
		report_count(r, scan);
	r->live_bytes = r->live_blocks = r->total = 0;
	for (size_t i = 0; i < n; i++) {
		struct report_stack f;

		figures(all[i], r, &f);
		sum(&r->live_bytes, f.bytes);
		sum(&r->live_blocks, f.blocks);
		r->live_stacks += all[i]->nsizes > 0 || all[i]->blocks > 0;
		if (!present(all[i], o->metric, o->all_stacks))
			continue;
		sum(&r->total, f.value);
		rk[k++] = (struct ranked){ all[i], f };
	}
	if (o->whole)
		r->total = o->whole;
	if (k > 1)
		qsort(rk, k, sizeof(*rk), ranked_cmp);
	if (scan->join.sampled_blocks && scan->join.have_proc)
		r->sample_period = scan->join.proc.sample_period;
	r->unknown_blocks = scan->join.unknown_blocks;
	r->unknown_bytes = scan->join.unknown_bytes;
	r->damaged = scan->join.damaged;
	r->all_stacks = k;
	r->wsize = img->wsize;
	r->big_endian = img->big_endian;
	r->modules = sym_source(sym);
	r->mods = modules(r, sym, &r->nmods);
	r->no_symbols = o->no_symbols;
	if (o->no_symbols)
		r->maps = mappings(r, img, &r->nmaps);
	r->labels = labels(r, img, o);
	r->nlabels = o->nlabels;
	r->saturated = scan->stacks.saturated || r->live_bytes == UINT64_MAX ||
		       r->total == UINT64_MAX;
	v = xcalloc(k ? k : 1, sizeof(*v));
	for (size_t i = 0; i < k; i++) {
		const struct stack *s = rk[i].s;
		double pct = r->total ? 100.0 * (double)rk[i].f.value / (double)r->total : 0;

		if ((o->top && keep >= o->top) || pct < o->min_percent) {
			sum(&r->rest_value, rk[i].f.value);
			sum(&r->rest_bytes, rk[i].f.bytes);
			sum(&r->rest_blocks, rk[i].f.blocks);
			continue;
		}
		v[keep] = rk[i].f;
		if (o->stack_figures)
			o->stack_figures(o->stack_arg, s, &v[keep]);
		v[keep].flags = s->flags;
		v[keep].recorded_frames = recorded_frames(s);
		if (o->by_thread) {
			v[keep].tid = s->tid;
			v[keep].thread_name = collect_thread_name(&scan->found, s->tid);
		}
		if (o->sizes) {
			struct size_count *sz = stacks_sizes(s, &v[keep].nsizes);

			if (r->sample_period)
				weigh_sizes(sz, v[keep].nsizes, r->sample_period);
			v[keep].sizes = sz;
		}
		v[keep].frames = report_symbolize(r, s->pcs, s->nframes, sym, o->short_names,
						  &v[keep].nframes);
		v[keep].key = report_stack_key(s->pcs, s->nframes);
		keep++;
	}
	r->stacks = v;
	r->nstacks = keep;
	if (o->events)
		report_build_events(r, scan, img, sym, o);
	free(rk);
	free(all);
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nstacks; i++) {
		free((void *)r->stacks[i].sizes);
		free((void *)r->stacks[i].frames);
	}
	free((void *)r->stacks);
	free((void *)r->regions);
	free((void *)r->threads);
	report_free_events(r);
	for (size_t i = 0; i < r->nowned; i++)
		free(r->owned[i]);
	free(r->owned);
	free((void *)r->mods);
	free((void *)r->maps);
	free((void *)r->labels);
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

uint64_t report_stack_key(const uint64_t *pcs, unsigned n)
{
	uint64_t h = 14695981039346656037ull;	/* FNV-1a over the pcs' bytes */

	for (unsigned i = 0; i < n; i++)
		for (unsigned b = 0; b < 64; b += 8)
			h = (h ^ ((pcs[i] >> b) & 0xff)) * 1099511628211ull;
	return h ^ n;
}

size_t report_stack_number(const struct report *r, uint64_t key)
{
	for (size_t i = 0; i < r->nstacks; i++)
		if (r->stacks[i].key == key)
			return i + 1;
	return 0;
}

/* The allocator's frames a preview passes over, as massif's --alloc-fn: heapprof's own
 * (its operator new has a name), the malloc family's names, operator new and new[],
 * and the C++ library's allocation (allocate, _M_allocate, _M_realloc_insert, ...). */
static bool allocator_frame(const struct report_frame *f)
{
	static const char *const family[] = { "malloc", "calloc", "realloc", "reallocarray",
		"memalign", "aligned_alloc", "posix_memalign", "valloc", "pvalloc", "strdup",
		"strndup", NULL };
	const char *base = f->module ? strrchr(f->module, '/') : NULL;
	char q[300];

	if (f->python)
		return false;
	base = base ? base + 1 : f->module;
	if (base && !strncmp(base, "heapprof", 8))
		return true;
	if (!f->func)
		return false;
	for (unsigned i = 0; family[i]; i++)
		if (!strcmp(f->func, family[i]))
			return true;
	if (!strncmp(f->func, "operator new", 12))
		return true;
	short_name(f->func, q, sizeof(q));	/* the qualified name, no return type */
	return (!strncmp(q, "std::", 5) || !strncmp(q, "__gnu_cxx::", 11)) && strstr(q, "alloc");
}

unsigned report_preview_start(const struct report_frame *fr, unsigned n)
{
	unsigned k = 0;

	while (k < n && allocator_frame(&fr[k]))
		k++;
	return k;
}

void report_preview(const struct report *r, const struct report_frame *fr, unsigned n,
		    uint64_t key, unsigned max, FILE *f)
{
	unsigned k = report_preview_start(fr, n), shown = 0;
	char buf[300], sbuf[300];
	size_t num = report_stack_number(r, key);

	if (k == n)	/* all the allocator's: show them rather than nothing */
		k = 0;
	for (; k < n; k++) {
		const char *name = report_frame_name(&fr[k], buf, sizeof(buf));

		if (r->short_names && fr[k].func && !fr[k].python)
			name = short_name(name, sbuf, sizeof(sbuf));
		if (r->hide && !regexec(r->hide, name, 0, NULL, 0))
			continue;
		if (shown == max) {
			fputs(" < ...", f);
			break;
		}
		fprintf(f, "%s%s", shown++ ? " < " : "", name);
	}
	if (!shown)
		fputs("[hidden]", f);
	if (num)
		fprintf(f, "  #%zu", num);
}

char *report_preview_string(const struct report *r, const struct report_frame *fr, unsigned n,
			    uint64_t key, unsigned max)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		die(EXIT_NO_REPORT, "out of memory");
	report_preview(r, fr, n, key, max, f);
	fclose(f);
	return buf;
}

void report_json_stack(const struct report *r, const struct report_frame *fr, unsigned n,
		       uint64_t key, unsigned max,
		       void (*frame)(const struct report_frame *fr, FILE *f), FILE *f)
{
	if (n) {	/* the text's preview, for the page's tables */
		char *pv = report_preview_string(r, fr, n, key, max);

		fputs("\"preview\": ", f);
		json_str(pv, false, f);
		fprintf(f, ", \"stack\": %zu,\n       ", report_stack_number(r, key));
		free(pv);
	}
	fputs("\"frames\": [", f);
	for (unsigned j = 0; j < n; j++) {
		fputs(j ? ",\n         " : "\n         ", f);
		frame(&fr[j], f);
	}
	fputc(']', f);
}

void report_write_frame_place(const struct report_frame *f, FILE *out)
{
	const char *mod = f->module ? strrchr(f->module, '/') : NULL;

	if (f->inlined)
		fputs(" (inlined)", out);
	if (f->file)
		fprintf(out, "  %s:%d", f->file, f->line);
	if (f->python)
		fputs("  " SYM_PYTHON_MODULE, out);	/* no file to name: the interpreter's */
	else if (f->module && !f->in_program && f->func)
		fprintf(out, "  (%s)", mod ? mod + 1 : f->module);
}

const char *report_stack_class(const struct report *r, const struct report_stack *s)
{
	unsigned c = (s->flags & STACK_CLASS_MASK) >> STACK_CLASS_SHIFT;

	return c && r->class_names ? r->class_names[c - 1] : NULL;
}

void report_add_section(struct report *r, const struct section_ops *ops, const void *data)
{
	assert(r->nsections < REPORT_MAX_SECTIONS);	/* the table has fewer rows */
	r->sections[r->nsections++] = (struct report_section){ ops, data };
}

bool report_section_can(const struct section_ops *ops, const struct out_format *f)
{
	if (ops->can)
		return ops->can(f);
	switch (f->syntax) {
	case SYNTAX_TEXT: return ops->text != NULL;
	case SYNTAX_JSON: return ops->json != NULL;
	case SYNTAX_HTML: return ops->html != NULL;
	default: return false;
	}
}

const struct report_section *report_alone(const struct report *r)
{
	for (size_t i = 0; i < r->nsections; i++)
		if (r->sections[i].ops->alone)
			return &r->sections[i];
	return NULL;
}

static void range_merge(struct report_range *into, const struct report_range *from)
{
	if (!from->n)
		return;
	if (!into->n || from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
	into->n += from->n;
	if (__builtin_add_overflow(into->sum, from->sum, &into->sum))
		into->sum = UINT64_MAX;	/* as lifetimes.c's range_add */
}

void report_life_merge(struct report_life *into, const struct report_life *from)
{
	range_merge(&into->freed, &from->freed);
	range_merge(&into->age, &from->age);
	into->temporary += from->temporary;
}

static struct report_item *next_item(struct report_path *p, enum report_item_kind kind)
{
	struct report_item *it;

	if (p->n == p->cap)
		p->items = xrealloc(p->items, (p->cap = p->cap ? p->cap * 2 : 32) * sizeof(*it));
	it = &p->items[p->n++];
	it->kind = kind;
	it->frame = NULL;
	it->name = NULL;
	it->buf[0] = 0;
	return it;
}

void report_decorate(const struct report *r, const struct report_stack *s,
		     struct report_path *p)
{
	const char *mark = NULL;

	p->n = 0;
	if (report_stack_class(r, s))	/* --leaks: the class is the root */
		snprintf(next_item(p, ITEM_CLASS)->buf, sizeof(p->items->buf), "[%s]",
			 report_stack_class(r, s));
	if (r->by_thread) {
		struct report_item *it = next_item(p, ITEM_THREAD);

		snprintf(it->buf, sizeof(it->buf), "[thread %lu%s%s]", (unsigned long)s->tid,
			 s->thread_name ? " " : "", s->thread_name ? s->thread_name : "");
	}
	/* a cut stack's outermost frame is not the root: say so rather than invent one */
	if (s->flags & STACK_OVERFLOW)
		report_overflow_mark(r->peak, next_item(p, ITEM_MARK)->buf, sizeof(p->items->buf));
	else if (stack_mark(s->flags, s->nframes))
		mark = stack_mark(s->flags, s->nframes);
	else if (s->flags & STACK_TRUNCATED)
		mark = "[truncated]";
	if (mark)
		next_item(p, ITEM_MARK)->name = mark;
	for (unsigned j = s->nframes; j-- > 0;) {
		struct report_item *it = next_item(p, ITEM_FRAME);

		it->frame = &s->frames[j];
		it->name = report_frame_name(it->frame, it->buf, sizeof(it->buf));
		if (it->name == it->buf)
			it->name = NULL;	/* points into buf: set below, when items stop moving */
	}
	for (size_t i = 0; i < p->n; i++)
		if (!p->items[i].name)
			p->items[i].name = p->items[i].buf;
}

const char *report_overflow_mark(const struct report_peak *p, char *buf, size_t size)
{
	if (!p)
		snprintf(buf, size, "[peak table overflow]");
	else if (p->overflow_stacks)
		snprintf(buf, size, "[peak table overflow: %" PRIu64 " stacks, %" PRIu64 " bytes]",
			 p->overflow_stacks, p->overflow_bytes);
	else	/* a heapprof.so that did not count them */
		snprintf(buf, size, "[peak table overflow: %" PRIu64 " bytes]", p->overflow_bytes);
	return buf;
}

void report_peak_line(const struct report_peak *p, char *buf, size_t size)
{
	if (p->from_now)
		snprintf(buf, size, "%" PRIu64 " bytes in %" PRIu64 " blocks now, step %" PRIu64
			 " bytes (the peak table: %" PRIu64 " bytes at %.3f s)", p->bytes,
			 p->blocks, p->step, p->table_bytes, p->table_time_s);
	else
		snprintf(buf, size, "%" PRIu64 " bytes in %" PRIu64 " blocks at %.3f s, step %"
			 PRIu64 " bytes (now: %" PRIu64 " bytes in %" PRIu64 " blocks)", p->bytes,
			 p->blocks, p->time_s, p->step, p->now_bytes, p->now_blocks);
}

void report_path_free(struct report_path *p)
{
	free(p->items);
	p->items = NULL;
	p->n = p->cap = 0;
}
