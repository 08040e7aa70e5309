/*
 * --by: the bottom-up table of the report as it is written (viewed, and NEW - OLD with
 * --base), pprof's -top: per function, file or module, the metric of the stacks it is
 * the innermost frame of (self) and of the stacks it is in at all (total).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "by.h"
#include "json.h"
#include "util.h"

struct by_row {
	const char *key;		/* into the report, or owned (by.names) */
	int64_t self, total;
	uint64_t self_blocks, total_blocks;
	size_t seen;			/* the last stack counted into total, + 1 */
};

struct by {
	enum view_by by;
	struct by_row *rows;		/* self descending */
	size_t nrows, shown;		/* shown: the --top first */
	int64_t all;			/* the metric over every stack */
	char **names;
	size_t nnames;
};

static const char *const what[] = { "", "function", "file", "module" };

static int64_t sval(const struct report *r, uint64_t v)
{
	return r->diff ? (int64_t)v : (int64_t)(v > INT64_MAX ? INT64_MAX : v);
}

static const char *by_key(const struct report_frame *f, enum view_by by, char *buf, size_t size)
{
	const char *base;

	switch (by) {
	case BY_FILE:
		return f->file ? f->file : "[unknown file]";
	case BY_MODULE:
		if (!f->module)
			return "[no module]";
		base = strrchr(f->module, '/');
		return base ? base + 1 : f->module;
	default:
		return report_frame_name(f, buf, size);
	}
}

static int row_self_cmp(const void *pa, const void *pb)
{
	const struct by_row *a = pa, *b = pb;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->key, b->key);
}

static struct by_row *row(struct by *t, const char *key, char *buf, size_t *cap)
{
	size_t k;

	for (k = 0; k < t->nrows && strcmp(t->rows[k].key, key); k++)
		;
	if (k < t->nrows)
		return &t->rows[k];
	if (t->nrows == *cap)
		t->rows = xrealloc(t->rows, (*cap = *cap ? *cap * 2 : 64) * sizeof(*t->rows));
	if (key == buf) {
		t->names = xrealloc(t->names, (t->nnames + 1) * sizeof(*t->names));
		key = t->names[t->nnames++] = xstrdup(buf);
	}
	t->rows[t->nrows] = (struct by_row){ .key = key };
	return &t->rows[t->nrows++];
}

/* The table of r, its top rows by self shown (0: all). */
static void by_build(struct by *t, const struct report *r, enum view_by by, size_t top)
{
	size_t cap = 0;

	t->by = by;
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct report_stack *s = &r->stacks[i];
		int64_t b = sval(r, s->value);
		/* self is the program's: the first frame past the allocator's, which would
		 * else take every stack's self (heapprof's operator new) */
		unsigned own = report_preview_start(s->frames, s->nframes);

		if (own == s->nframes)
			own = 0;
		t->all += b;
		for (unsigned j = 0; j < s->nframes || (j == 0 && !s->nframes); j++) {
			char buf[512];
			const char *key = s->nframes ? by_key(&s->frames[j], by, buf, sizeof(buf))
				: s->flags & STACK_OVERFLOW ?
					report_overflow_mark(r->peak, buf, sizeof(buf))
				: stack_mark(s->flags, 0);
			struct by_row *x = row(t, key, buf, &cap);

			if (j == own) {
				x->self += b;
				x->self_blocks += s->blocks;
			}
			if (x->seen != i + 1) {
				x->seen = i + 1;
				x->total += b;
				x->total_blocks += s->blocks;
			}
		}
	}
	if (r->metric == METRIC_RETAINED_SPACE && !r->diff)
		t->all = sval(r, r->total);	/* stacks overlap: shares of the live heap */
	if (t->nrows > 1)
		qsort(t->rows, t->nrows, sizeof(*t->rows), row_self_cmp);
	t->shown = top && top < t->nrows ? top : t->nrows;
}

static void by_text(const struct report *r, const void *data, FILE *f)
{
	const struct by *t = data;

	fprintf(f, "%s%s (%s) by %s (self: as the innermost frame past the allocator's; "
		"total: anywhere in the "
		"stack)\n", r->diff ? "difference of " : "", report_metric_name(r->metric),
		report_metric_unit(r->metric), what[t->by]);
	fprintf(f, "%14s %6s %14s %6s %10s  %s\n", "self", "self%", "total", "total%", "blocks",
		what[t->by]);
	for (size_t k = 0; k < t->shown; k++) {
		const struct by_row *x = &t->rows[k];
		double sp = t->all ? 100.0 * (double)x->self / (double)t->all : 0;
		double tp = t->all ? 100.0 * (double)x->total / (double)t->all : 0;

		if (r->diff)
			fprintf(f, "%+14lld %5.1f%% %+14lld %5.1f%% %+10lld  %s\n",
				(long long)x->self, sp, (long long)x->total, tp,
				(long long)(int64_t)x->total_blocks, x->key);
		else
			fprintf(f, "%14lld %5.1f%% %14lld %5.1f%% %10llu  %s\n",
				(long long)x->self, sp, (long long)x->total, tp,
				(unsigned long long)x->total_blocks, x->key);
	}
	if (t->shown < t->nrows)
		fprintf(f, "%zu more %ss (--top=0 shows all)\n", t->nrows - t->shown, what[t->by]);
}

/* "by": the rows shown, self first; blocks as the stacks count them (signed with --base) */
static void by_json(const struct report *r, const void *data, const struct report_out *o)
{
	const struct by *t = data;
	FILE *f = o->f;

	fprintf(f, "  \"by\": {\"key\": \"%s\", \"metric\": ", what[t->by]);
	json_str(report_metric_name(r->metric), false, f);
	fprintf(f, ", \"all\": %" PRId64 ", \"more_rows\": %zu, \"rows\": [", t->all,
		t->nrows - t->shown);
	for (size_t k = 0; k < t->shown; k++) {
		const struct by_row *x = &t->rows[k];

		fputs(k ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
		json_str(x->key, false, f);
		fprintf(f, ", \"self\": %" PRId64 ", \"total\": %" PRId64, x->self, x->total);
		if (r->diff)
			fprintf(f, ", \"self_blocks\": %" PRId64 ", \"total_blocks\": %" PRId64 "}",
				(int64_t)x->self_blocks, (int64_t)x->total_blocks);
		else
			fprintf(f, ", \"self_blocks\": %" PRIu64 ", \"total_blocks\": %" PRIu64 "}",
				x->self_blocks, x->total_blocks);
	}
	fputs(t->shown ? "\n  ]},\n" : "]},\n", f);
}

/* text: the whole report */
const struct section_ops by_section = {
	.name = "by", .gives = "a bottom-up table", .alone = true, .text = by_text,
	.json = by_json,
};

static bool by_wanted(const struct options *o)
{
	return o->view.by != BY_NONE;
}

static void *by_run(struct session *s)
{
	struct by *t = xcalloc(1, sizeof(*t));

	by_build(t, s->final, s->o->view.by, s->o->by_top);
	return t;
}

static void by_free(void *state)
{
	struct by *t = state;

	for (size_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	free(t->rows);
	free(t);
}

/* of the report as it is written: viewed, and NEW - OLD with --base */
const struct analysis by_analysis = {
	"by", IN_REPORT, 0, 0, by_wanted, by_run, by_free, &by_section
};
