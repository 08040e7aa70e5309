/*
 * --focus=type:REGEX and --ignore=type:REGEX: only the blocks of the types kept stay in
 * the report. Every other block is marked out and the stacks are made again from the
 * blocks kept, so that each view, table and graph after it (the stacks, --by, the
 * flame graph, --leaks, --by=type, retained sizes) is of those types. With --by=type,
 * --focus and --ignore by frame pick blocks the same way: the types table is then of
 * what those stacks made. Names come from types.c; the frames are matched as views.c
 * matches them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "fmt.h"
#include "json.h"
#include "types.h"
#include "util.h"

struct type_view {
	const char *focus, *ignore;	/* the types' REGEXes, NULL: none */
	bool by_frame;			/* --by=type with a frame's --focus/--ignore */
	uint64_t kept_bytes, kept_blocks, out_bytes, out_blocks;	/* as found */
};

/* A memo of answers by key (a name's address, a site id), open addressing. */
struct memo {
	uint64_t *key;
	int8_t *val;			/* -1: empty */
	size_t cap, n;
};

static void memo_init(struct memo *m)
{
	m->cap = 256;
	m->n = 0;
	m->key = xcalloc(m->cap, sizeof(*m->key));
	m->val = xmalloc(m->cap);
	memset(m->val, -1, m->cap);
}

static size_t memo_slot(const struct memo *m, uint64_t key)
{
	size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (m->cap - 1);

	while (m->val[i] >= 0 && m->key[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void memo_put(struct memo *m, uint64_t key, bool v)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct memo old = *m;

		m->cap *= 2;
		m->key = xcalloc(m->cap, sizeof(*m->key));
		m->val = xmalloc(m->cap);
		memset(m->val, -1, m->cap);
		for (size_t k = 0; k < old.cap; k++)
			if (old.val[k] >= 0) {
				size_t j = memo_slot(m, old.key[k]);

				m->key[j] = old.key[k];
				m->val[j] = old.val[k];
			}
		free(old.key);
		free(old.val);
	}
	i = memo_slot(m, key);
	m->n += m->val[i] < 0;
	m->key[i] = key;
	m->val[i] = v;
}

static void memo_free(struct memo *m)
{
	free(m->key);
	free(m->val);
}

/* The stacks' matcher: the frames of each site (or v1 block) named once. */
struct frames_match {
	struct session *s;
	struct report names;		/* owns --short-names' copies */
	struct decode_buf *buf;
	struct memo by_site;
};

static bool pcs_kept(struct frames_match *fm, const uint64_t *pcs, unsigned n)
{
	unsigned nf;
	struct report_frame *f = report_symbolize(&fm->names, pcs, n, fm->s->sym,
						  fm->s->o->report.short_names, &nf);
	bool kept = views_stack_kept(&fm->s->o->view, f, nf);

	free(f);
	return kept;
}

/* Does block b's stack pass the frames' --focus and --ignore? No stack: none to match.
 * A v2 block's answer is its site's, found once. */
static bool stack_kept(struct frames_match *fm, const struct scan_block *b)
{
	const uint64_t *pcs;
	unsigned n;
	bool kept;

	if (b->version == 2) {
		size_t i = memo_slot(&fm->by_site, b->site);

		if (fm->by_site.val[i] >= 0)
			return fm->by_site.val[i];
	}
	pcs = scan_block_stack(&fm->s->img, &fm->s->scan, b, fm->buf, &n);
	kept = pcs_kept(fm, pcs, n);
	if (b->version == 2)
		memo_put(&fm->by_site, b->site, kept);
	return kept;
}

static bool type_kept(struct memo *m, const struct view_opts *v, const char *name)
{
	size_t i = memo_slot(m, (uintptr_t)name);
	bool kept;

	if (m->val[i] >= 0)
		return m->val[i];
	kept = views_type_kept(v, name);
	memo_put(m, (uintptr_t)name, kept);
	return kept;
}

/* Mark out the blocks not kept; true when one was. */
static bool mark(struct session *s, struct type_view *tv)
{
	struct scan_blocks *l = &s->scan.list;
	const struct view_opts *v = &s->o->view;
	struct type_names tn = { 0 };
	struct frames_match fm = { .s = s };
	struct memo types;
	bool any = false;

	if (tv->focus || tv->ignore)
		types_name_blocks(s, NULL, &tn);
	memo_init(&types);
	if (tv->by_frame) {
		fm.buf = xmalloc(sizeof(*fm.buf));
		memo_init(&fm.by_site);
	}
	for (size_t i = 0; i < l->n; i++) {
		struct scan_block *b = &l->v[i];

		if (!b->out && (((tv->focus || tv->ignore) && !type_kept(&types, v, tn.of[i])) ||
				(tv->by_frame && !stack_kept(&fm, b))))
			b->out = 1;
		if (b->out) {
			tv->out_blocks++;
			tv->out_bytes += b->size;
			any = true;
		} else {
			tv->kept_blocks++;
			tv->kept_bytes += b->size;
		}
	}
	if (tv->by_frame) {
		memo_free(&fm.by_site);
		free(fm.buf);
		report_free(&fm.names);
	}
	memo_free(&types);
	types_names_free(&tn);
	return any;
}

static bool by_frame(const struct options *o)
{
	return o->by_type && (o->view.focus || o->view.ignore);
}

static bool types_focus_wanted(const struct options *o)
{
	return o->view.focus_type || o->view.ignore_type || by_frame(o);
}

static void *types_focus_run(struct session *s)
{
	struct type_view *tv = xcalloc(1, sizeof(*tv));

	tv->focus = s->o->view.focus_type;
	tv->ignore = s->o->view.ignore_type;
	tv->by_frame = by_frame(s->o);
	/* the frames' views leave the same stacks out of the report, later: only the
	 * types are made again here */
	if (mark(s, tv) && (tv->focus || tv->ignore))
		scan_restack(&s->img, &s->scan);
	return tv;
}

static void types_focus_text(const struct report *r, const void *data, FILE *f)
{
	const struct type_view *tv = data;
	char a[32], b[32], c[32], d[32];

	(void)r;
	if (!tv->focus && !tv->ignore)
		return;
	fputs("  types:      ", f);
	if (tv->focus)
		fprintf(f, "--focus=type:%s%s", tv->focus, tv->ignore ? " " : "");
	if (tv->ignore)
		fprintf(f, "--ignore=type:%s", tv->ignore);
	fprintf(f, " kept %s bytes in %s blocks, left out %s bytes in %s blocks (as found)\n",
		fmt_thousands(tv->kept_bytes, a), fmt_thousands(tv->kept_blocks, b),
		fmt_thousands(tv->out_bytes, c), fmt_thousands(tv->out_blocks, d));
}

static void types_focus_json(const struct report *r, const void *data, const struct report_out *o)
{
	const struct type_view *tv = data;

	(void)r;
	if (!tv->focus && !tv->ignore)
		return;
	fputs("  \"type_view\": {\"focus\": ", o->f);
	json_str(tv->focus, false, o->f);
	fputs(", \"ignore\": ", o->f);
	json_str(tv->ignore, false, o->f);
	fprintf(o->f, ", \"kept_bytes\": %" PRIu64 ", \"kept_blocks\": %" PRIu64
		", \"left_out_bytes\": %" PRIu64 ", \"left_out_blocks\": %" PRIu64 "},\n",
		tv->kept_bytes, tv->kept_blocks, tv->out_bytes, tv->out_blocks);
}

static const struct section_ops types_focus_section = {
	.name = "type view", .gives = "what --focus=type: kept", .text = types_focus_text,
	.json = types_focus_json,
};

/* before the rows that make the stacks again from the blocks not marked out (--leaks,
 * --older-than: IN_TYPED) and those that read the marks */
const struct analysis types_focus_analysis = {
	"types focus", IN_LIST | IN_UNTAGGED, IN_TYPED | IN_MARKS | IN_STACKS, IN_COUNTERS,
	types_focus_wanted, types_focus_run, free, &types_focus_section
};
