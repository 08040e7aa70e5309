/*
 * Views on a report: --focus/--ignore keep or drop stacks with a frame whose name
 * matches, --hide removes matching frames, --max-frames keeps the innermost N; the
 * stacks that became equal are merged (their sizes too), sorted again and cut by
 * --top / --min-percent (none while --by's table, by.c, is made of every stack).
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "views.h"

#define USAGE_EXIT 64

static void compile(const char *what, const char *re, regex_t *out)
{
	char msg[256];
	int rc;

	if (!re)
		return;
	rc = regcomp(out, re, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, out, msg, sizeof(msg));
		say("%s: bad regular expression '%s': %s", what, re, msg);
		fprintf(stderr, "Try 'heapprof-analyze --help' for more information.\n");
		exit(USAGE_EXIT);
	}
}

void views_compile(struct view_opts *v)
{
	compile("--focus", v->focus, &v->focus_re);
	compile("--ignore", v->ignore, &v->ignore_re);
	compile("--hide", v->hide, &v->hide_re);
	compile("--focus=type", v->focus_type, &v->focus_type_re);
	compile("--ignore=type", v->ignore_type, &v->ignore_type_re);
}

void views_free(struct view_opts *v)
{
	if (v->focus)
		regfree(&v->focus_re);
	if (v->ignore)
		regfree(&v->ignore_re);
	if (v->hide)
		regfree(&v->hide_re);
	if (v->focus_type)
		regfree(&v->focus_type_re);
	if (v->ignore_type)
		regfree(&v->ignore_type_re);
}

bool views_active(const struct view_opts *v)
{
	return v->focus || v->ignore || v->hide || v->max_frames || v->by != BY_NONE;
}

static bool frame_matches(const struct report_frame *f, const regex_t *re)
{
	char buf[512];

	return regexec(re, report_frame_name(f, buf, sizeof(buf)), 0, NULL, 0) == 0;
}

static bool any_frame(const struct report_stack *s, const regex_t *re)
{
	for (unsigned j = 0; j < s->nframes; j++)
		if (frame_matches(&s->frames[j], re))
			return true;
	return false;
}

bool views_stack_kept(const struct view_opts *v, const struct report_frame *f, unsigned n)
{
	const struct report_stack st = { .frames = f, .nframes = n };

	return !(v->focus && !any_frame(&st, &v->focus_re)) &&
	       !(v->ignore && any_frame(&st, &v->ignore_re));
}

bool views_type_kept(const struct view_opts *v, const char *type)
{
	const char *name = type ? type : "[untyped]";

	return !(v->focus_type && regexec(&v->focus_type_re, name, 0, NULL, 0)) &&
	       !(v->ignore_type && !regexec(&v->ignore_type_re, name, 0, NULL, 0));
}

static int str_cmp(const char *a, const char *b)
{
	return a == b ? 0 : !a ? -1 : !b ? 1 : strcmp(a, b);
}

static int frame_cmp(const struct report_frame *a, const struct report_frame *b)
{
	if (a->python != b->python)
		return a->python ? 1 : -1;
	if (a->python) {	/* by name, file and line: records of one code may differ */
		int c = str_cmp(a->func, b->func);

		if (!c)
			c = str_cmp(a->file, b->file);
		return c ? c : (a->line > b->line) - (a->line < b->line);
	}
	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	if (a->inlined != b->inlined)
		return a->inlined ? -1 : 1;
	if (a->func != b->func)
		return !a->func ? -1 : !b->func ? 1 : strcmp(a->func, b->func);
	return 0;
}

/* the frames, then the flags: what makes two stacks one after a view */
static int same_cmp(const void *pa, const void *pb)
{
	const struct report_stack *a = pa, *b = pb;

	if (a->flags != b->flags)
		return a->flags < b->flags ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	for (unsigned i = 0; i < a->nframes && i < b->nframes; i++) {
		int c = frame_cmp(&a->frames[i], &b->frames[i]);

		if (c)
			return c;
	}
	return (a->nframes > b->nframes) - (a->nframes < b->nframes);
}

static int64_t sval(const struct report *r, uint64_t v)
{
	return r->diff ? (int64_t)v : (int64_t)(v > INT64_MAX ? INT64_MAX : v);
}

static const struct report *sort_r;

/* the metric descending (signed with --base), then bytes, blocks, frames: stable ties */
static int order_cmp(const void *pa, const void *pb)
{
	const struct report_stack *a = pa, *b = pb;

	if (sort_r->diff) {
		int64_t x = (int64_t)a->value, y = (int64_t)b->value;

		if (x != y)
			return x > y ? -1 : 1;
		x = (int64_t)a->bytes, y = (int64_t)b->bytes;
		if (x != y)
			return x > y ? -1 : 1;
		x = (int64_t)a->blocks, y = (int64_t)b->blocks;
		if (x != y)
			return x > y ? -1 : 1;
	} else {
		if (a->value != b->value)
			return a->value > b->value ? -1 : 1;
		if (a->bytes != b->bytes)
			return a->bytes > b->bytes ? -1 : 1;
		if (a->blocks != b->blocks)
			return a->blocks > b->blocks ? -1 : 1;
	}
	return same_cmp(a, b);
}

static int size_cmp(const void *pa, const void *pb)
{
	const struct size_count *a = pa, *b = pb;

	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return 0;
}

/* into's sizes and from's, as one list by count descending then size */
static void merge_sizes(struct report_stack *into, const struct report_stack *from)
{
	size_t n = into->nsizes + from->nsizes, k = 0;
	struct size_count *v;

	if (!from->nsizes)
		return;
	v = xcalloc(n, sizeof(*v));
	memcpy(v, into->sizes, into->nsizes * sizeof(*v));
	memcpy(v + into->nsizes, from->sizes, from->nsizes * sizeof(*v));
	qsort(v, n, sizeof(*v), size_cmp);
	for (size_t i = 0; i < n; i++) {
		if (k && v[k - 1].size == v[i].size)
			v[k - 1].count += v[i].count;
		else
			v[k++] = v[i];
	}
	qsort(v, k, sizeof(*v), stacks_size_count_cmp);
	free((void *)into->sizes);
	into->sizes = v;
	into->nsizes = k;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static void fig(uint64_t *into, uint64_t v, int sign, bool diff)
{
	if (diff)
		*into = sign < 0 ? *into - v : *into + v;
	else
		*into = add_sat(*into, v);
}

void views_add_figures(struct report_stack *into, const struct report_stack *from, int sign,
		       bool diff)
{
	fig(&into->value, from->value, sign, diff);
	fig(&into->bytes, from->bytes, sign, diff);
	fig(&into->blocks, from->blocks, sign, diff);
	fig(&into->alloc_bytes, from->alloc_bytes, sign, diff);
	fig(&into->alloc_calls, from->alloc_calls, sign, diff);
	fig(&into->frees, from->frees, sign, diff);
	fig(&into->freed_bytes, from->freed_bytes, sign, diff);
	fig(&into->time_ns, from->time_ns, sign, diff);
	/* a percentile of two stacks is neither's, nor their sum */
	into->dumps = into->median_bytes = into->p95_bytes = 0;
}

void views_cut(struct report *r, size_t top, double min_percent)
{
	struct report_stack *v = (struct report_stack *)r->stacks;
	size_t keep = 0;

	sort_r = r;
	qsort(v, r->nstacks, sizeof(*v), order_cmp);
	r->rest_bytes = r->rest_blocks = r->rest_value = 0;
	for (size_t i = 0; i < r->nstacks; i++) {
		double base = (double)(r->diff ? r->base_total : r->total);
		double pct = base ? 100.0 * (double)sval(r, v[i].value) / base : 0;

		if (pct < 0)
			pct = -pct;
		if ((top && keep >= top) || (!r->diff && pct < min_percent)) {
			r->rest_value += v[i].value;	/* wraps to the signed sum with --base */
			r->rest_bytes += v[i].bytes;
			r->rest_blocks += v[i].blocks;
			free((void *)v[i].sizes);
			free((void *)v[i].frames);
			continue;
		}
		v[keep++] = v[i];
	}
	r->nstacks = keep;
}

void views_apply(struct report *r, const struct view_opts *v, bool cut)
{
	struct report_stack *s = (struct report_stack *)r->stacks;
	size_t n = 0, dropped = 0;
	uint64_t dropped_value = 0;
	char note[256];

	if (v->hide)
		r->hide = &v->hide_re;	/* previews hide as the stacks do */
	for (size_t i = 0; i < r->nstacks; i++) {
		struct report_stack st = s[i];
		struct report_frame *fr;
		unsigned k = 0;

		if (!views_stack_kept(v, st.frames, st.nframes)) {
			dropped++;
			dropped_value = add_sat(dropped_value, st.value);
			free((void *)st.sizes);
			free((void *)st.frames);
			continue;
		}
		fr = (struct report_frame *)st.frames;
		for (unsigned j = 0; j < st.nframes; j++)
			if (!v->hide || !frame_matches(&fr[j], &v->hide_re))
				fr[k++] = fr[j];
		if (v->max_frames && k > v->max_frames) {
			k = v->max_frames;
			st.flags |= STACK_TRUNCATED;
			st.recorded_frames = k;
		}
		st.nframes = k;
		s[n++] = st;
	}
	/* merge the stacks that became one */
	qsort(s, n, sizeof(*s), same_cmp);
	{
		size_t k = 0;

		for (size_t i = 0; i < n; i++) {
			if (k && !same_cmp(&s[k - 1], &s[i])) {
				views_add_figures(&s[k - 1], &s[i], 1, r->diff);
				report_life_merge(&s[k - 1].life, &s[i].life);
				merge_sizes(&s[k - 1], &s[i]);
				free((void *)s[i].sizes);
				free((void *)s[i].frames);
				continue;
			}
			s[k++] = s[i];
		}
		n = k;
	}
	r->nstacks = n;
	r->all_stacks = n;
	if (v->focus || v->ignore) {
		snprintf(note, sizeof(note), "%zu stacks (%llu %s) left out by --focus/--ignore",
			 dropped, (unsigned long long)dropped_value, report_metric_unit(r->metric));
		r->owned = xrealloc(r->owned, (r->nowned + 1) * sizeof(*r->owned));
		r->view_note = r->owned[r->nowned++] = xstrdup(note);
	}
	if (cut)
		views_cut(r, v->by != BY_NONE ? 0 : v->top, v->by != BY_NONE ? 0 : v->min_percent);
	else {
		sort_r = r;
		qsort(s, n, sizeof(*s), order_cmp);
	}
}
