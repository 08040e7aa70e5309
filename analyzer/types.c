/*
 * --by=type: the live blocks by what they hold. A C++ object of a class with virtual
 * functions starts with its vtable pointer, which points into a "vtable for C" symbol
 * of a module: the block is a C (its dynamic type, a derived class's own). Blocks
 * without one are untyped. Words outside every module are not looked up, so a heap of
 * pointers and strings costs a sort, not a lookup a block. In a dump of a Python
 * interpreter, a block holding a Python object is of its type (pyobj.c), with the
 * buffers sys.getsizeof counts with it: blocks counts objects, bytes their blocks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "fmt.h"
#include "json.h"
#include "names.h"
#include "pyobj.h"
#include "rd.h"
#include "types.h"
#include "util.h"

#define VTABLE_FOR "vtable for "

struct type_row {
	const char *name;		/* the class; NULL: untyped */
	uint64_t bytes, blocks;		/* estimates when sampled */
	double wbytes, wblocks;		/* sampled blocks' weights, added at the end */
	uint64_t retained;		/* with the graph: what its blocks dominate */
};

struct types {
	struct type_row *v;		/* bytes descending */
	size_t n, shown;		/* shown: the --top first */
	bool retained;			/* --metric=retained_space: rows have retained bytes */
	char **owned;			/* --short-names' names */
	size_t nowned;
	struct pyobj *py;		/* Python objects' recognizer, whose names the rows
					 * use; NULL: no Python in the dump */
};

/* A block's first word, and which block. */
struct first_word {
	uint64_t w;
	size_t i;
};

static int word_cmp(const void *a, const void *b)
{
	const struct first_word *x = a, *y = b;

	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

static int row_cmp(const void *a, const void *b)
{
	const struct type_row *x = a, *y = b;

	if (x->retained != y->retained)	/* 0 for all without the graph */
		return x->retained > y->retained ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	if (!x->name || !y->name)
		return !x->name - !y->name;	/* untyped last of equals */
	return strcmp(x->name, y->name);
}

/* Whether w lies in a module (mods sorted by start): only such a word can be a vptr. */
static bool in_module(const struct sym_module_info *mods, size_t n, uint64_t w)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mods[mid].start <= w)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && w < mods[lo - 1].end;
}

/* The class whose vtable holds w, or NULL; --short-names' copy kept in t. */
static const char *class_of(struct session *s, struct types *t, uint64_t w)
{
	const struct sym_pc *p = sym_lookup(s->sym, w, false);
	const char *name = p && p->nframes ? p->frames[0].func : NULL;
	char buf[1024];

	if (!name || strncmp(name, VTABLE_FOR, strlen(VTABLE_FOR)))
		return NULL;
	name += strlen(VTABLE_FOR);
	if (!s->o->report.short_names || !strcmp(short_name(name, buf, sizeof(buf)), name))
		return name;
	t->owned = xrealloc(t->owned, (t->nowned + 1) * sizeof(*t->owned));
	return t->owned[t->nowned++] = xstrdup(buf);
}

static struct type_row *row(struct types *t, const char *name, size_t *cap)
{
	for (size_t k = 0; k < t->n; k++)
		if (t->v[k].name == name || (name && t->v[k].name && !strcmp(t->v[k].name, name)))
			return &t->v[k];
	if (t->n == *cap)
		t->v = xrealloc(t->v, (*cap = *cap ? 2 * *cap : 16) * sizeof(*t->v));
	t->v[t->n] = (struct type_row){ .name = name };
	return &t->v[t->n++];
}

struct named {
	const char *name;
	size_t k;
};

static int named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;

	if (x->name != y->name)
		return (uintptr_t)x->name < (uintptr_t)y->name ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* row_of[k]: the row of name_of[k]; one look-up per distinct name, not per block. */
static void rows(struct types *t, const char **name_of, size_t n, size_t *row_of)
{
	struct named *v = xmalloc((n ? n : 1) * sizeof(*v));
	size_t cap = 0;

	for (size_t k = 0; k < n; k++)
		v[k] = (struct named){ name_of[k], k };
	qsort(v, n, sizeof(*v), named_cmp);
	for (size_t k = 0, r = 0; k < n; k++) {
		if (!k || v[k].name != v[k - 1].name)
			r = (size_t)(row(t, v[k].name, &cap) - t->v);
		row_of[v[k].k] = r;
	}
	free(v);
}

/* A block's weight: the blocks it stands for when sampled, else 1. */
static double weight(const struct scan_block *x, uint64_t period)
{
	return x->sampled && period ? decode_sample_weight(x->size, period) : 1;
}

static void add(struct type_row *r, double wt, uint64_t bytes)
{
	if (wt == 1) {
		r->blocks++;
		r->bytes += bytes;
	} else {
		r->wblocks += wt;
		r->wbytes += wt * (double)bytes;
	}
}

/* A block's bytes from one row to another (its blocks stay counted where they were). */
static void move(struct type_row *from, struct type_row *to, double wt, uint64_t bytes)
{
	if (wt == 1) {
		from->bytes -= bytes;
		to->bytes += bytes;
	} else {
		from->wbytes -= wt * (double)bytes;
		to->wbytes += wt * (double)bytes;
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * A Python object's own buffers (a dict's keys table, a list's items) count with it,
 * as sys.getsizeof counts them: each block found among the untyped ones at a part's
 * address moves to the owner's row, once. blocks counts objects, bytes their blocks.
 */
static void python_parts(struct session *s, struct types *t, const char **name_of,
			 const struct first_word *fw, size_t n, const size_t *row_of)
{
	const struct scan_block *b = s->scan.list.v;
	uint64_t period = s->scan.join.have_proc ? s->scan.join.proc.sample_period : 0;
	uint64_t *addr = xmalloc((n ? n : 1) * 2 * sizeof(*addr));	/* user, k pairs */
	bool *taken = xcalloc(n ? n : 1, sizeof(*taken));
	size_t m = 0;

	for (size_t k = 0; k < n; k++)
		if (!name_of[k]) {
			addr[2 * m] = b[fw[k].i].user;
			addr[2 * m++ + 1] = k;
		}
	qsort(addr, m, 2 * sizeof(*addr), u64_cmp);
	for (size_t k = 0; k < n; k++) {
		struct pyobj_info pi;
		const struct scan_block *x = &b[fw[k].i];

		if (!name_of[k] || !pyobj_block(t->py, x->user, x->size, &pi))
			continue;
		for (unsigned j = 0; j < pi.nparts; j++) {
			uint64_t key[2] = { pi.part[j], 0 };
			uint64_t *hit = bsearch(key, addr, m, 2 * sizeof(*addr), u64_cmp);
			size_t o;

			if (!hit || taken[o = (size_t)hit[1]])
				continue;
			taken[o] = true;
			move(&t->v[row_of[o]], &t->v[row_of[k]], weight(&b[fw[o].i], period),
			     b[fw[o].i].size);
		}
	}
	free(taken);
	free(addr);
}

/* Each row's retained bytes: the graph's blocks are the list's, in its order. */
static void add_retained(struct session *s, struct types *t, const struct first_word *fw, size_t n,
		     const size_t *row_of)
{
	struct graph *g = s->graph;
	uint32_t *key = xmalloc((g->n ? g->n : 1) * sizeof(*key));
	uint64_t *out = xcalloc(t->n ? t->n : 1, sizeof(*out));

	for (size_t i = 0; i < g->n; i++)
		key[i] = GRAPH_NONE;	/* left out of the report */
	for (size_t k = 0; k < n; k++)
		key[fw[k].i] = (uint32_t)row_of[k];
	graph_retained_by(g, key, t->n, out);
	for (size_t k = 0; k < t->n; k++)
		t->v[k].retained = out[k];
	free(out);
	free(key);
}

/* Each block counted in its type's row; a sampled block as the blocks it stands for. */
static void count(struct session *s, struct types *t, const struct first_word *fw, size_t n)
{
	const struct scan_block *b = s->scan.list.v;
	uint64_t period = s->scan.join.have_proc ? s->scan.join.proc.sample_period : 0;
	size_t nmods;
	struct sym_module_info *mods = sym_modules(s->sym, &nmods);
	const char **name_of = xcalloc(n ? n : 1, sizeof(*name_of));
	size_t *row_of = xmalloc((n ? n : 1) * sizeof(*row_of));

	t->py = pyobj_open_image(&s->img, s->o->sysroot);
	for (size_t k = 0; k < n;) {
		size_t e = k;
		const char *name = fw[k].w && !(fw[k].w % s->img.wsize) &&
				   in_module(mods, nmods, fw[k].w) ?
				   class_of(s, t, fw[k].w) : NULL;

		for (; e < n && fw[e].w == fw[k].w; e++) {
			const struct scan_block *x = &b[fw[e].i];

			name_of[e] = name ? name : pyobj_type(t->py, x->user, x->size);
		}
		k = e;
	}
	rows(t, name_of, n, row_of);
	for (size_t k = 0; k < n; k++) {
		const struct scan_block *x = &b[fw[k].i];

		add(&t->v[row_of[k]], weight(x, period), x->size);
	}
	if (t->py)
		python_parts(s, t, name_of, fw, n, row_of);
	for (size_t k = 0; k < t->n; k++) {	/* a move may leave -0.0001 */
		t->v[k].blocks += (uint64_t)(t->v[k].wblocks > 0 ? t->v[k].wblocks + 0.5 : 0);
		t->v[k].bytes += (uint64_t)(t->v[k].wbytes > 0 ? t->v[k].wbytes + 0.5 : 0);
	}
	if (t->retained)
		add_retained(s, t, fw, n, row_of);
	free(row_of);
	free(name_of);
	free(mods);
}

/* A block's first word in the target's size and byte order; 0 when it has none. */
static uint64_t first_word(const struct image *img, const struct scan_block *b)
{
	unsigned char buf[8];
	struct rd r = { buf, img->wsize, img->big_endian };
	uint64_t w = 0;
	uint32_t w32;

	if (b->size < img->wsize || !image_read(img, b->user, buf, img->wsize))
		return 0;
	if (img->wsize == 8)
		rd_u64(&r, &w);
	else if (rd_u32(&r, &w32))
		w = w32;
	return w;
}

static void *run(struct session *s, bool with_graph)
{
	const struct scan_blocks *l = &s->scan.list;
	struct first_word *fw = xmalloc((l->n ? l->n : 1) * sizeof(*fw));
	struct types *t = xcalloc(1, sizeof(*t));
	size_t n = 0, top = s->o->by_top;

	t->retained = with_graph;
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].out)	/* left out of the report (--older-than, --leaks) */
			continue;
		fw[n++] = (struct first_word){ first_word(&s->img, &l->v[i]), i };
	}
	qsort(fw, n, sizeof(*fw), word_cmp);
	count(s, t, fw, n);
	free(fw);
	if (t->n > 1)
		qsort(t->v, t->n, sizeof(*t->v), row_cmp);
	t->shown = top && top < t->n ? top : t->n;
	return t;
}

static void *types_run(struct session *s)
{
	return run(s, false);
}

static void *types_run_retained(struct session *s)
{
	return run(s, true);
}

static void types_free(void *state)
{
	struct types *t = state;

	for (size_t i = 0; i < t->nowned; i++)
		free(t->owned[i]);
	free(t->owned);
	free(t->v);
	pyobj_close(t->py);
	free(t);
}

static void types_text(const struct report *r, const void *data, FILE *f)
{
	const struct types *t = data;
	char a[32], b[32], c[32];

	fprintf(f, "live blocks by type (the C++ class whose vtable a block starts with, the "
		"Python object's type)%s\n", r->sample_period ? "; estimates: sampled" : "");
	if (t->retained)
		fprintf(f, "%16s ", "retained");
	fprintf(f, "%16s %12s  %s\n", "bytes", "blocks", "type");
	for (size_t k = 0; k < t->shown; k++) {
		if (t->retained)
			fprintf(f, "%16s ", fmt_thousands(t->v[k].retained, c));
		fprintf(f, "%16s %12s  %s\n", fmt_thousands(t->v[k].bytes, a),
			fmt_thousands(t->v[k].blocks, b), t->v[k].name ? t->v[k].name : "[untyped]");
	}
	if (t->shown < t->n)
		fprintf(f, "%zu more types (--top=0 shows all)\n", t->n - t->shown);
}

static void types_json(const struct report *r, const void *data, const struct report_out *o)
{
	const struct types *t = data;

	(void)r;
	fputs("  \"types\": [", o->f);
	for (size_t k = 0; k < t->shown; k++) {
		fputs(k ? ",\n    {\"type\": " : "\n    {\"type\": ", o->f);
		json_str(t->v[k].name, false, o->f);
		fprintf(o->f, ", \"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64, t->v[k].blocks,
			t->v[k].bytes);
		if (t->retained)
			fprintf(o->f, ", \"retained\": %" PRIu64, t->v[k].retained);
		fputc('}', o->f);
	}
	fputs(t->shown ? "\n  ],\n" : "],\n", o->f);
}

/* the page's: [type or null, bytes, blocks] */
static void types_html(const struct report *r, const void *data, const struct report_out *o)
{
	const struct types *t = data;

	(void)r;
	fputs(",\"types\":[", o->f);
	for (size_t k = 0; k < t->shown; k++) {
		fputs(k ? ",[" : "[", o->f);
		json_str(t->v[k].name, true, o->f);
		fprintf(o->f, ",%" PRIu64 ",%" PRIu64 "]", t->v[k].bytes, t->v[k].blocks);
	}
	fputc(']', o->f);
}

/* text: the whole report, as --by=function's table is */
const struct section_ops types_section = {
	.name = "types", .gives = "a table of types", .alone = true, .text = types_text,
	.json = types_json, .html = types_html,
};

static bool types_wanted(const struct options *o)
{
	return o->by_type && o->report.metric != METRIC_RETAINED_SPACE;
}

static bool types_retained_wanted(const struct options *o)
{
	return o->by_type && o->report.metric == METRIC_RETAINED_SPACE;
}

/* the blocks the report shows: after --older-than and --leaks marked the others */
const struct analysis types_analysis = {
	"types", IN_LIST | IN_MARKS, 0, 0, types_wanted, types_run, types_free, &types_section
};

/* the same with --metric=retained_space: each type's retained bytes too, before the
 * retained row takes the dominator numbering apart */
const struct analysis types_retained_analysis = {
	"types-retained", IN_LIST | IN_MARKS | IN_GRAPH | IN_DOMINATORS, 0, 0,
	types_retained_wanted, types_run_retained, types_free, &types_section
};
