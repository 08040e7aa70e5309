/*
 * -f html: the report as one self-contained page (analyzer/html/page.html, built in):
 * a flame graph and icicle, search, a metric switcher, the stacks and bottom-up tables
 * (and the timeline, when the dump holds one) drawn by the page's own script from the
 * report's data, embedded as JSON. The page fetches nothing. The summary is the text
 * report's, word for word.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "util.h"

/* the page, with "@@DATA@@" where the report goes (NUL-terminated by the .incbin) */
extern const char html_page[];
__asm__(".pushsection .rodata\n"
	".globl html_page\n"
	"html_page:\n"
	".incbin \"analyzer/html/page.html\"\n"
	".byte 0\n"
	".popsection\n");

/* Every figure per stack, in this order; the metrics the report holds index it. */
enum { FIG_FREES = METRIC_COUNT, NFIGS };

/* JSON string; '<' escaped so that no name can end the script element. */
static void str(const char *s, FILE *f)
{
	json_str(s, true, f);
}

/* Strings and frames each once: an open-addressed table of indices by hash. */
struct intern {
	char **keys;
	size_t n, cap;			/* cap a power of two, twice n at least */
	size_t *slot;			/* index + 1, 0 = empty */
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static size_t intern(struct intern *t, const char *key)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;

		free(t->slot);
		t->slot = xcalloc(cap, sizeof(*t->slot));
		t->cap = cap;
		for (size_t k = 0; k < t->n; k++) {
			for (i = hash(t->keys[k]) & (cap - 1); t->slot[i]; i = (i + 1) & (cap - 1))
				;
			t->slot[i] = k + 1;
		}
		t->keys = xrealloc(t->keys, cap / 2 * sizeof(*t->keys));
	}
	for (i = hash(key) & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		if (!strcmp(t->keys[t->slot[i] - 1], key))
			return t->slot[i] - 1;
	t->keys[t->n] = xstrdup(key);
	t->slot[i] = ++t->n;
	return t->n - 1;
}

static void intern_free(struct intern *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->slot);
}

struct page {
	struct intern names, frames, nodes;
	FILE *f;
};

/* A frame as [name, file, line, module, kind]: kind 0 the program's, 1 a library's,
 * 2 unknown, 3 a root or marker the report added, 4 a Python function. */
static size_t frame_id(struct page *pg, const struct report_item *it)
{
	const struct report_frame *fr = it->frame;
	const char *mod = fr && fr->module ? strrchr(fr->module, '/') : NULL;
	char key[1200];
	int kind = !fr ? 3 : fr->python ? 4 : !fr->func ? 2 : fr->in_program ? 0 : 1;

	snprintf(key, sizeof(key), "[%zu,%ld,%d,%ld,%d]", intern(&pg->names, it->name),
		 fr && fr->file ? (long)intern(&pg->names, fr->file) : -1L, fr && fr->file ? fr->line : 0,
		 fr && fr->module ? (long)intern(&pg->names, mod ? mod + 1 : fr->module) : -1L, kind);
	return intern(&pg->frames, key);
}

static bool shown(const struct report *r, int m);

static uint64_t figure(const struct report *r, const struct report_stack *s, int i)
{
	const uint64_t v[NFIGS] = { s->bytes, s->blocks, s->alloc_bytes, s->alloc_calls,
				    s->time_ns, s->retained, s->frees };

	return r->diff ? v[i] : v[i] > INT64_MAX ? INT64_MAX : v[i];
}

/* The stacks as a tree of frame paths: "tree" holds each node (the root is node 0,
 * the others from 1, parents before children) as its frame, after minus how far back
 * its parent is unless that is the node before; "ends" each stack's node, as the
 * difference from the stack before; "v" each figure as one array over the stacks,
 * empty for one the page does not show. Paths share their outer frames, so this is a
 * fraction of the stacks' frame lists, and the page builds its tree without lookups. */
static void stacks(struct page *pg, const struct report *r, FILE *f)
{
	struct report_path p = { 0 };
	char key[64];

	size_t last = 0;

	fputs(",\"ends\":[", f);
	for (size_t i = 0; i < r->nstacks; i++) {
		size_t node = 0;

		report_decorate(r, &r->stacks[i], &p);
		for (size_t j = 0; j < p.n; j++) {
			snprintf(key, sizeof(key), "%zu,%zu", node, frame_id(pg, &p.items[j]));
			node = intern(&pg->nodes, key) + 1;
		}
		fprintf(f, i ? ",%" PRId64 : "%" PRId64, (int64_t)node - (int64_t)last);
		last = node;
	}
	fputs("],\n\"v\":[", f);
	for (int k = 0; k < NFIGS; k++) {
		fputs(k ? "],\n[" : "[", f);
		if (k > METRIC_INUSE_OBJECTS && !shown(r, k))
			continue;
		for (size_t i = 0; i < r->nstacks; i++)
			fprintf(f, i ? ",%" PRId64 : "%" PRId64, (int64_t)figure(r, &r->stacks[i], k));
	}
	fputs("]],\n\"tree\":[", f);
	for (size_t i = 0; i < pg->nodes.n; i++) {
		size_t up = 0, fr = 0;

		sscanf(pg->nodes.keys[i], "%zu,%zu", &up, &fr);
		if (up == i)
			fprintf(f, i ? ",%zu" : "%zu", fr);
		else
			fprintf(f, i ? ",-%zu,%zu" : "-%zu,%zu", i + 1 - up, fr);
	}
	fputs("]", f);
	report_path_free(&p);
}

/* The text report's summary: the same words on the page as in a terminal. */
static char *summary_text(const struct report *r)
{
	struct report copy = *r;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return xstrdup("");
	copy.nstacks = copy.all_stacks = 0;
	copy.nsections = 0;	/* a table the text would print alone is the page's own */
	for (size_t i = 0; i < r->nsections; i++)
		if (!r->sections[i].ops->alone)
			copy.sections[copy.nsections++] = r->sections[i];
	out_text.write(&copy, m);
	fclose(m);
	return buf;
}

/* The metrics the switcher offers: those the dump holds (retained bytes only when
 * chosen, as they cost a graph). */
static bool shown(const struct report *r, int m)
{
	bool counters = r->have_counts && !r->regrouped;

	if (m == FIG_FREES)
		return counters;
	return !(((m == METRIC_ALLOC_SPACE || m == METRIC_ALLOC_OBJECTS) && !counters) ||
		 (m == METRIC_ALLOC_TIME && !(counters && r->have_time)) ||
		 (m == METRIC_RETAINED_SPACE && r->metric != m));
}

static void metrics(const struct report *r, FILE *f)
{
	int n = 0, chosen = 0;

	fputs(",\"metrics\":[", f);
	for (int m = 0; m < METRIC_COUNT; m++) {
		if (!shown(r, m))
			continue;
		if (m == (int)r->metric)
			chosen = n;
		fprintf(f, n++ ? ",%d" : "%d", m);
	}
	fprintf(f, "],\"metric\":%d,\"frees\":%s", chosen, shown(r, FIG_FREES) ? "true" : "false");
}

/* The timeline (issue 21) as columns, the page's compact form: seconds, live bytes and
 * blocks, allocation calls and bytes so far; the peak's index, and whether the last
 * sample's time is the snapshot's (else the newest the dump shows). */
static void timeline(const struct report *r, FILE *f)
{
	static const char *const col[] = { "t", "b", "n", "c", "a" };

	if (!r->ntimeline)
		return;
	fputs(",\n\"timeline\":{", f);
	for (int k = 0; k < 5; k++) {
		fprintf(f, "%s\"%s\":[", k ? "," : "", col[k]);
		for (size_t i = 0; i < r->ntimeline; i++) {
			const struct report_sample *s = &r->timeline[i];
			const uint64_t v[] = { 0, s->live_bytes, s->live_blocks, s->alloc_calls,
					       s->alloc_bytes };

			fputs(i ? "," : "", f);
			if (k)
				fprintf(f, "%" PRIu64, v[k]);
			else
				fprintf(f, "%.9g", s->time_s);
		}
		putc(']', f);
	}
	fprintf(f, ",\"peak\":%zu,\"taken\":%s}", r->timeline_peak,
		r->timeline_taken ? "true" : "false");
}

/* A frame of a pinned stack, as the JSON report's but for the page's needs: named as
 * the text names it (module+0xoffset when no function is known). */
static void mem_frame(const struct report_frame *fr, FILE *f)
{
	char buf[300];

	fputs("{\"function\":", f);
	str(report_frame_name(fr, buf, sizeof(buf)), f);
	fputs(",\"file\":", f);
	str(fr->file ? fr->file : "", f);
	fprintf(f, ",\"line\":%d,\"module\":", fr->file ? fr->line : 0);
	str(fr->module ? fr->module : "", f);
	putc('}', f);
}

static void data(const struct report *r, FILE *f)
{
	const struct report_out out = { f, mem_frame };
	struct page pg = { .f = f };
	char title[1024], *sum = summary_text(r);
	size_t n = 0;

	snprintf(title, sizeof(title), "%s%s: %s", r->diff ? "Heap growth of " : "Heap of ",
		 r->program, r->source);
	fputs("{\"title\":", f);
	str(title, f);
	fputs(",\"summary\":", f);
	str(sum, f);
	free(sum);
	fputs(",\"warnings\":[", f);
	if (r->sample_period)
		n++, str("Sampled: the figures are estimates.", f);
	if (r->nstacks < r->all_stacks)
		fprintf(f, "%s\"--top or --min-percent left out %zu stacks.\"", n++ ? "," : "",
			r->all_stacks - r->nstacks);
	if (r->saturated)
		fprintf(f, "%s\"Some totals did not fit 64 bits.\"", n++ ? "," : "");
	fprintf(f, "],\"diff\":%s,\"figures\":[", r->diff ? "true" : "false");
	for (int i = 0; i < METRIC_COUNT; i++)
		fprintf(f, "\"%s\",", report_metric_name((enum report_metric)i));
	fputs("\"frees\"]", f);
	metrics(r, f);
	timeline(r, f);
	for (size_t i = 0; i < r->nsections; i++)
		if (r->sections[i].ops->html)
			r->sections[i].ops->html(r, r->sections[i].data, &out);
	stacks(&pg, r, f);
	fputs(",\n\"names\":[", f);
	for (size_t i = 0; i < pg.names.n; i++) {
		fputs(i ? "," : "", f);
		str(pg.names.keys[i], f);
	}
	fputs("],\n\"frames\":[", f);
	for (size_t i = 0; i < pg.frames.n; i++)
		fprintf(f, i ? ",%s" : "%s", pg.frames.keys[i]);
	fputs("]}", f);
	intern_free(&pg.names);
	intern_free(&pg.frames);
	intern_free(&pg.nodes);
}

static int write_html(const struct report *r, FILE *f)
{
	const char *mark = strstr(html_page, "@@DATA@@");

	fwrite(html_page, 1, (size_t)(mark - html_page), f);
	data(r, f);
	fputs(mark + 8, f);
	return ferror(f) ? -1 : 0;
}

/* every metric per stack for the switcher; signed for --base; the summaries as text */
const struct out_format out_html = { "html", write_html,
				     OUT_SIGNED | OUT_ALL | OUT_SUMMARY, SYNTAX_HTML };
