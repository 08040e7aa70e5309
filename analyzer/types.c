/*
 * --by=type: the live blocks by what they hold, each named by the first of a table of
 * type sources that knows it. A C++ object of a class with virtual functions starts
 * with its vtable pointer, which points into a "vtable for C" symbol of a module: the
 * block is a C (its dynamic type, a derived class's own). Blocks no source knows are
 * untyped. The first words come from the scan: when no other row needs the block
 * list, its table of distinct first words with their blocks and bytes (firsts.h), and
 * no list is made; else each listed block's (scan_block.first). A word outside every
 * module is not looked up, so a heap of pointers and strings costs a range test a
 * word, and each distinct word inside one a lookup. In a dump of a Python interpreter, a
 * block still untyped that holds a Python object is of its type (pyobj.c), with the
 * buffers sys.getsizeof counts with it: blocks counts objects, bytes their blocks. With
 * the heap graph (--metric=retained_space), what each type's blocks retain too.
 */
#include <inttypes.h>
#include <stdbool.h>
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
#include "types_stacks.h"
#include "util.h"

#define VTABLE_FOR "vtable for "
#define TYPE_STACKS 3		/* --stacks: the heaviest stacks shown a type */
#define PREVIEW_FRAMES 4	/* ... each with so many frames */

struct type_row {
	const char *name;		/* the class; NULL: untyped */
	uint64_t bytes, blocks;		/* estimates when sampled */
	uint64_t retained;		/* with the heap graph: what its blocks dominate */
	uint64_t key;			/* the order: bytes, or retained with the graph */
	double wbytes, wblocks;		/* sampled blocks' weights, added at the end */
	size_t made;			/* its index as count made it: its stacks' row */
};

struct types {
	struct type_row *v;		/* key descending */
	size_t n, shown;		/* shown: the --top first */
	bool have_retained;		/* --metric=retained_space: the graph's figures */
	struct type_names names;	/* each block's */
	struct type_stacks stacks;	/* --stacks: each row's heaviest (rows by made) */
	bool have_stacks;
};

/*
 * A memo by address (a vtable pointer's class, a name's row): open addressing, the
 * value a pointer or an index. The words of a heap repeat: a million Orders share a
 * vtable pointer, so each is looked up once and no block list is sorted.
 */
struct memo {
	uint64_t *key;
	uintptr_t *val;
	bool *used;
	size_t cap, n;
};

static void memo_init(struct memo *m)
{
	*m = (struct memo){ .cap = 64 };
	m->key = xcalloc(m->cap, sizeof(*m->key));
	m->val = xcalloc(m->cap, sizeof(*m->val));
	m->used = xcalloc(m->cap, sizeof(*m->used));
}

static size_t memo_slot(const struct memo *m, uint64_t key)
{
	size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (m->cap - 1);

	while (m->used[i] && m->key[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* The value of key, or NULL when it has none yet. */
static const uintptr_t *memo_get(const struct memo *m, uint64_t key)
{
	size_t i = memo_slot(m, key);

	return m->used[i] ? &m->val[i] : NULL;
}

static void memo_put(struct memo *m, uint64_t key, uintptr_t val)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct memo old = *m;

		m->cap *= 2;
		m->key = xcalloc(m->cap, sizeof(*m->key));
		m->val = xcalloc(m->cap, sizeof(*m->val));
		m->used = xcalloc(m->cap, sizeof(*m->used));
		m->n = 0;
		for (size_t k = 0; k < old.cap; k++)
			if (old.used[k])
				memo_put(m, old.key[k], old.val[k]);
		free(old.key);
		free(old.val);
		free(old.used);
	}
	i = memo_slot(m, key);
	m->n += !m->used[i];
	m->used[i] = true;
	m->key[i] = key;
	m->val[i] = val;
}

static void memo_free(struct memo *m)
{
	free(m->key);
	free(m->val);
	free(m->used);
}

static int row_cmp(const void *a, const void *b)
{
	const struct type_row *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
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

/* The name to show: --short-names' copy kept in tn. */
static const char *shown_name(struct session *s, struct type_names *tn, const char *name)
{
	char buf[1024];

	if (!s->o->report.short_names || !strcmp(short_name(name, buf, sizeof(buf)), name))
		return name;
	tn->owned = xrealloc(tn->owned, (tn->nowned + 1) * sizeof(*tn->owned));
	return tn->owned[tn->nowned++] = xstrdup(buf);
}

/* The class whose vtable holds w, or NULL. */
static const char *class_of(struct session *s, struct type_names *tn, uint64_t w)
{
	const struct sym_pc *p = sym_lookup(s->sym, w, false);
	const char *name = p && p->nframes ? p->frames[0].func : NULL;

	if (!name || strncmp(name, VTABLE_FOR, strlen(VTABLE_FOR)))
		return NULL;
	return shown_name(s, tn, name + strlen(VTABLE_FOR));
}

/* A block's first word in the target's size and byte order (0 when it has none): the
 * scan's, or read now for an untagged chunk, which the scan did not list. */
static uint64_t first_word(const struct image *img, const struct scan_block *b)
{
	unsigned char buf[8];
	struct rd r = { buf, img->wsize, img->big_endian };
	uint64_t w = 0;
	uint32_t w32;

	if (b->version != SCAN_UNTAGGED)
		return b->first;
	if (b->size < img->wsize || !image_read(img, b->user, buf, img->wsize))
		return 0;
	if (img->wsize == 8)
		rd_u64(&r, &w);
	else if (rd_u32(&r, &w32))
		w = w32;
	return w;
}

/*
 * C++: a block starting with a pointer into a "vtable for C" symbol is a C. Each
 * distinct word is looked up once, and words outside every module (text, counters,
 * pointers into the heap) not at all.
 */
struct vtables {
	struct sym_module_info *mods;	/* sorted by start */
	size_t nmods;
	uint64_t lo, hi;		/* their span, a first test */
	struct memo seen;		/* word: its class, or NULL */
};

static void vtables_open(struct session *s, struct vtables *vt)
{
	vt->mods = sym_modules(s->sym, &vt->nmods);
	vt->lo = vt->nmods ? vt->mods[0].start : 0;
	vt->hi = 0;
	for (size_t k = 0; k < vt->nmods; k++)
		vt->hi = vt->mods[k].end > vt->hi ? vt->mods[k].end : vt->hi;
	memo_init(&vt->seen);
}

/* The class of the blocks that start with w, or NULL. */
static const char *vtables_class(struct session *s, struct type_names *tn, struct vtables *vt,
				 uint64_t w)
{
	const uintptr_t *known;

	if (!w || w < vt->lo || w >= vt->hi || w % s->img.wsize ||
	    !in_module(vt->mods, vt->nmods, w))
		return NULL;
	if (!(known = memo_get(&vt->seen, w))) {
		memo_put(&vt->seen, w, (uintptr_t)class_of(s, tn, w));
		known = memo_get(&vt->seen, w);
	}
	return (const char *)*known;
}

static void vtables_close(struct vtables *vt)
{
	memo_free(&vt->seen);
	free(vt->mods);
}

static void vtable_names(struct session *s, const uint8_t *want, struct type_names *tn)
{
	const struct scan_blocks *l = &s->scan.list;
	struct vtables vt;

	vtables_open(s, &vt);
	for (size_t i = 0; i < l->n; i++)
		if ((!want || want[i]) && !tn->of[i])
			tn->of[i] = vtables_class(s, tn, &vt, first_word(&s->img, &l->v[i]));
	vtables_close(&vt);
}

/* --short-names on a tp_name: a static type's is qualified by its module
 * ("collections.OrderedDict", "_io.TextIOWrapper"): the part after the last dot, which
 * lives as long as the whole */
static const char *python_short(const char *name)
{
	const char *dot = name ? strrchr(name, '.') : NULL;

	return dot && dot[1] ? dot + 1 : name;
}

/* Python: a block holding an object is of its ob_type's tp_name (none without Python). */
static void python_names(struct session *s, const uint8_t *want, struct type_names *tn)
{
	const struct scan_blocks *l = &s->scan.list;
	bool short_names = s->o->report.short_names;

	if (!tn->py)
		tn->py = pyobj_open_image(&s->img, s->o->sysroot);
	if (!tn->py)
		return;
	for (size_t i = 0; i < l->n; i++) {
		const char *name;

		if ((want && !want[i]) || tn->of[i])
			continue;
		name = pyobj_type(tn->py, l->v[i].user, l->v[i].size);
		tn->of[i] = short_names ? python_short(name) : name;
	}
}

/* What can tell a block's type, tried in turn on the blocks still untyped. */
static const struct type_source {
	const char *name;
	void (*name_blocks)(struct session *s, const uint8_t *want, struct type_names *tn);
} sources[] = {
	{ "C++ vtable", vtable_names },
	{ "Python object", python_names },
};

void types_name_blocks(struct session *s, const uint8_t *want, struct type_names *tn)
{
	*tn = (struct type_names){ .of = xcalloc(s->scan.list.n ? s->scan.list.n : 1,
						 sizeof(*tn->of)), .n = s->scan.list.n };
	for (size_t k = 0; k < sizeof(sources) / sizeof(sources[0]); k++)
		sources[k].name_blocks(s, want, tn);
}

void types_names_free(struct type_names *tn)
{
	for (size_t i = 0; i < tn->nowned; i++)
		free(tn->owned[i]);
	free(tn->owned);
	free(tn->of);
	pyobj_close(tn->py);
	*tn = (struct type_names){ 0 };
}

/* ---- the table ------------------------------------------------------------------- */

static struct type_row *row(struct types *t, const char *name, size_t *cap)
{
	for (size_t k = 0; k < t->n; k++)
		if (t->v[k].name == name || (name && t->v[k].name && !strcmp(t->v[k].name, name)))
			return &t->v[k];
	if (t->n == *cap)
		t->v = xrealloc(t->v, (*cap = *cap ? 2 * *cap : 16) * sizeof(*t->v));
	t->v[t->n] = (struct type_row){ .name = name, .made = t->n };
	return &t->v[t->n++];
}

/* The row of name, found through the last one and a memo by the name's address. */
struct finder {
	struct memo rows;
	const char *last;
	uint32_t last_row;		/* GRAPH_NONE: none yet */
	size_t cap;			/* of the rows */
};

static uint32_t find_row(struct types *t, struct finder *fr, const char *name)
{
	const uintptr_t *known;

	if (name == fr->last && fr->last_row != GRAPH_NONE)
		return fr->last_row;
	if (!(known = memo_get(&fr->rows, (uintptr_t)name))) {
		struct type_row *made = row(t, name, &fr->cap);	/* t->v may move */

		memo_put(&fr->rows, (uintptr_t)name, (uintptr_t)(made - t->v));
		known = memo_get(&fr->rows, (uintptr_t)name);
	}
	fr->last = name;
	return fr->last_row = (uint32_t)*known;
}

/* A block of size bytes into row tr, a sampled one as the blocks it stands for
 * (period: the sample period, 0 when none is known). */
static void add_block(struct type_row *tr, uint64_t size, bool sampled, uint64_t period)
{
	if (sampled && period) {
		double wt = decode_sample_weight(size, period);

		tr->wblocks += wt;
		tr->wbytes += wt * (double)size;
	} else {
		tr->blocks++;
		tr->bytes += size;
	}
}

/* Each block shown counted in its type's row; row_of[i] gets block i's row
 * (GRAPH_NONE: not shown). */
static void count(struct session *s, struct types *t, const uint8_t *shown, uint32_t *row_of)
{
	const struct scan_blocks *l = &s->scan.list;
	uint64_t period = s->scan.join.have_proc ? s->scan.join.proc.sample_period : 0;
	struct finder fr = { .last_row = GRAPH_NONE };

	memo_init(&fr.rows);
	for (size_t i = 0; i < l->n; i++) {
		row_of[i] = GRAPH_NONE;
		if (!shown[i])
			continue;
		row_of[i] = find_row(t, &fr, t->names.of[i]);
		add_block(&t->v[row_of[i]], l->v[i].size, l->v[i].sampled, period);
	}
	memo_free(&fr.rows);
}

/*
 * The same from the scan's table of first words, when no analysis needed the list
 * (and so none left a block out): each distinct word named once, its blocks counted
 * at once; the blocks the table had no room for one by one; sampled ones in address
 * order, as the list would give them.
 */
static void count_firsts(struct session *s, struct types *t)
{
	const struct firsts *f = &s->scan.firsts;
	uint64_t period = s->scan.join.have_proc ? s->scan.join.proc.sample_period : 0;
	struct finder fr = { .last_row = GRAPH_NONE };
	struct vtables vt;
	uint32_t k_row;

	memo_init(&fr.rows);
	vtables_open(s, &vt);
	for (size_t k = 0; k < f->cap; k++) {
		if (!f->word[k])
			continue;
		k_row = find_row(t, &fr, vtables_class(s, &t->names, &vt, f->word[k]));
		t->v[k_row].blocks += f->count[k].blocks;
		t->v[k_row].bytes += f->count[k].bytes;
	}
	if (f->other_blocks) {
		k_row = find_row(t, &fr, NULL);
		t->v[k_row].blocks += f->other_blocks;
		t->v[k_row].bytes += f->other_bytes;
	}
	for (const struct firsts_piece *p = f->spilled; p; p = p->next)
		for (size_t k = 0; k < p->n; k++) {
			k_row = find_row(t, &fr, vtables_class(s, &t->names, &vt, p->v[k].word));
			add_block(&t->v[k_row], p->v[k].size, false, 0);
		}
	for (size_t k = 0; k < f->nsampled; k++) {
		k_row = find_row(t, &fr, vtables_class(s, &t->names, &vt, f->sampled[k].word));
		add_block(&t->v[k_row], f->sampled[k].size, true, period);
	}
	vtables_close(&vt);
	memo_free(&fr.rows);
}

/* Sampled blocks' weights into the counts (a move may leave -0.0001). */
static void round_weights(struct types *t)
{
	for (size_t k = 0; k < t->n; k++) {
		t->v[k].blocks += (uint64_t)(t->v[k].wblocks > 0 ? t->v[k].wblocks + 0.5 : 0);
		t->v[k].bytes += (uint64_t)(t->v[k].wbytes > 0 ? t->v[k].wbytes + 0.5 : 0);
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * A Python object's own buffers (a dict's keys table, a list's items) count with it,
 * as sys.getsizeof counts them: each untyped block shown at a part's address moves its
 * bytes to the owner's row, once; its block stays counted where it was, so blocks
 * counts objects, bytes their blocks. Before count's weights are rounded.
 */
static void python_parts(struct session *s, struct types *t, const uint32_t *row_of)
{
	const struct scan_blocks *l = &s->scan.list;
	uint64_t period = s->scan.join.have_proc ? s->scan.join.proc.sample_period : 0;
	uint64_t *addr = xmalloc((l->n ? l->n : 1) * 2 * sizeof(*addr));	/* user, i pairs */
	bool *taken = xcalloc(l->n ? l->n : 1, sizeof(*taken));
	size_t m = 0;

	for (size_t i = 0; i < l->n; i++)
		if (row_of[i] != GRAPH_NONE && !t->names.of[i]) {
			addr[2 * m] = l->v[i].user;
			addr[2 * m++ + 1] = i;
		}
	qsort(addr, m, 2 * sizeof(*addr), u64_cmp);
	for (size_t i = 0; i < l->n; i++) {
		struct pyobj_info pi;

		if (row_of[i] == GRAPH_NONE || !t->names.of[i] ||
		    !pyobj_block(t->names.py, l->v[i].user, l->v[i].size, &pi))
			continue;
		for (unsigned j = 0; j < pi.nparts; j++) {
			uint64_t key[2] = { pi.part[j], 0 };
			uint64_t *hit = bsearch(key, addr, m, 2 * sizeof(*addr), u64_cmp);
			struct type_row *from, *to = &t->v[row_of[i]];
			const struct scan_block *x;
			size_t o;

			if (!hit || taken[o = (size_t)hit[1]])
				continue;
			taken[o] = true;
			x = &l->v[o];
			from = &t->v[row_of[o]];
			if (x->sampled && period) {
				double wt = decode_sample_weight(x->size, period);

				from->wbytes -= wt * (double)x->size;
				to->wbytes += wt * (double)x->size;
			} else {
				from->bytes -= x->size;
				to->bytes += x->size;
			}
		}
	}
	free(taken);
	free(addr);
}

/* With the heap graph: what each type's blocks retain (each block once a type). */
static void retained(struct session *s, struct types *t, const uint32_t *row_of)
{
	uint64_t *ret = xcalloc(t->n ? t->n : 1, sizeof(*ret));

	graph_dominators(s->graph);
	graph_retained_by(s->graph, row_of, t->n, ret);
	for (size_t k = 0; k < t->n; k++)
		t->v[k].retained = ret[k];
	t->have_retained = true;
	free(ret);
}

/* The table from the block list: each block named, those left out skipped. */
static void from_list(struct session *s, struct types *t)
{
	const struct scan_blocks *l = &s->scan.list;
	uint8_t *shown = xmalloc(l->n ? l->n : 1);
	uint32_t *row_of = xmalloc((l->n ? l->n : 1) * sizeof(*row_of));

	for (size_t i = 0; i < l->n; i++)	/* not those left out (--older-than, --leaks) */
		shown[i] = !l->v[i].out;
	types_name_blocks(s, shown, &t->names);
	count(s, t, shown, row_of);
	if (t->names.py)
		python_parts(s, t, row_of);
	round_weights(t);
	if (s->graph && s->graph->n == l->n)
		retained(s, t, row_of);
	if ((t->have_stacks = s->o->report.event_stacks))
		types_stacks_make(s, row_of, t->n, TYPE_STACKS, &t->stacks);
	free(row_of);
	free(shown);
}

static void *types_run(struct session *s)
{
	struct types *t = xcalloc(1, sizeof(*t));
	size_t top = s->o->by_top;

	/* the scan counted first words when no row needed the list; an untagged dump's
	 * chunks are listed after it */
	if (s->scan.count_firsts && !s->o->untagged) {
		count_firsts(s, t);
		round_weights(t);
	} else {
		from_list(s, t);
	}
	for (size_t k = 0; k < t->n; k++)
		t->v[k].key = t->have_retained ? t->v[k].retained : t->v[k].bytes;
	if (t->n > 1)
		qsort(t->v, t->n, sizeof(*t->v), row_cmp);
	t->shown = top && top < t->n ? top : t->n;
	return t;
}

static void types_free(void *state)
{
	struct types *t = state;

	types_names_free(&t->names);
	if (t->have_stacks)
		types_stacks_free(&t->stacks);
	free(t->v);
	free(t);
}

/* --base: NEW - OLD by type, each figure an int64_t cast; growth first. The names are
 * the sessions', which outlive the report. */
static void *types_diff(const void *data, const void *base)
{
	const struct types *nt = data, *ot = base;
	struct types *d = xcalloc(1, sizeof(*d));
	size_t cap = 0, top = nt->shown < nt->n ? nt->shown : 0;

	d->have_retained = nt->have_retained && ot->have_retained;
	for (int side = 0; side < 2; side++) {
		const struct types *t = side ? ot : nt;
		int64_t sign = side ? -1 : 1;

		for (size_t k = 0; k < t->n; k++) {
			struct type_row *r = row(d, t->v[k].name, &cap);

			r->bytes += (uint64_t)(sign * (int64_t)t->v[k].bytes);
			r->blocks += (uint64_t)(sign * (int64_t)t->v[k].blocks);
			r->retained += (uint64_t)(sign * (int64_t)t->v[k].retained);
		}
	}
	/* signed order as unsigned: the sign bit flipped */
	for (size_t k = 0; k < d->n; k++)
		d->v[k].key = (d->have_retained ? d->v[k].retained : d->v[k].bytes) ^
			      (uint64_t)1 << 63;
	if (d->n > 1)
		qsort(d->v, d->n, sizeof(*d->v), row_cmp);
	d->shown = top && top < d->n ? top : d->n;
	return d;
}

/* a figure, signed when the report is NEW - OLD */
static const char *figure(const struct report *r, uint64_t v, char *buf)
{
	return r->diff ? fmt_signed_thousands((int64_t)v, buf) : fmt_thousands(v, buf);
}

/* --stacks: under a row, its heaviest stacks as previews */
static void stacks_text(const struct report *r, const struct types *t, const struct type_row *row,
			FILE *f)
{
	const struct type_stacks *ts = &t->stacks;
	char a[32], b[32];

	for (size_t j = ts->start[row->made]; j < ts->start[row->made + 1]; j++) {
		const struct type_stack *st = &ts->v[j];

		fprintf(f, "%16s %12s", fmt_thousands(st->bytes, a), fmt_thousands(st->blocks, b));
		if (t->have_retained)
			fprintf(f, " %16s", "");
		fputs("    ", f);
		if (st->nframes)
			report_preview(r, st->frames, st->nframes, st->key, PREVIEW_FRAMES, f);
		else
			fputs("[no stack]", f);
		fputc('\n', f);
	}
	if (ts->more[row->made])
		fprintf(f, "%*s    %zu more stacks\n", t->have_retained ? 46 : 29, "",
			ts->more[row->made]);
}

static void types_text(const struct report *r, const void *data, FILE *f)
{
	const struct types *t = data;
	char a[32], b[32];
	char c[32];

	fprintf(f, "live blocks by type (a C++ class: the vtable a block starts with; a Python "
		"object's type)%s%s%s%s\n", t->have_stacks ? "; under each, its heaviest stacks" : "",
		r->sample_period ? "; estimates: sampled" : "", r->diff ? "; NEW - OLD, OLD " : "",
		r->diff ? r->base_source : "");
	if (t->have_retained)
		fprintf(f, "%16s %12s %16s  %s\n", "bytes", "blocks", "retained", "type");
	else
		fprintf(f, "%16s %12s  %s\n", "bytes", "blocks", "type");
	for (size_t k = 0; k < t->shown; k++) {
		fprintf(f, "%16s %12s", figure(r, t->v[k].bytes, a), figure(r, t->v[k].blocks, b));
		if (t->have_retained)
			fprintf(f, " %16s", figure(r, t->v[k].retained, c));
		fprintf(f, "  %s\n", t->v[k].name ? t->v[k].name : "[untyped]");
		if (t->have_stacks)
			stacks_text(r, t, &t->v[k], f);
	}
	if (t->shown < t->n)
		fprintf(f, "%zu more types (--top=0 shows all)\n", t->n - t->shown);
}

/* a member's name and figure, signed when the report is NEW - OLD */
static void json_figure(const struct report *r, const char *name, uint64_t v, FILE *f)
{
	if (r->diff)
		fprintf(f, "%s%" PRId64, name, (int64_t)v);
	else
		fprintf(f, "%s%" PRIu64, name, v);
}

/* --stacks: a row's heaviest stacks, each frame by name */
static void stacks_json(const struct types *t, const struct type_row *row, FILE *f)
{
	const struct type_stacks *ts = &t->stacks;
	char buf[512];

	fputs(", \"stacks\": [", f);
	for (size_t j = ts->start[row->made]; j < ts->start[row->made + 1]; j++) {
		const struct type_stack *st = &ts->v[j];

		fprintf(f, "%s{\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"frames\": [",
			j > ts->start[row->made] ? ", " : "", st->bytes, st->blocks);
		for (unsigned k = 0; k < st->nframes; k++) {
			fputs(k ? ", " : "", f);
			json_str(report_frame_name(&st->frames[k], buf, sizeof(buf)), false, f);
		}
		fputs("]}", f);
	}
	fprintf(f, "], \"more_stacks\": %zu", ts->more[row->made]);
}

static void types_json(const struct report *r, const void *data, const struct report_out *o)
{
	const struct types *t = data;

	fputs("  \"types\": [", o->f);
	for (size_t k = 0; k < t->shown; k++) {
		fputs(k ? ",\n    {\"type\": " : "\n    {\"type\": ", o->f);
		json_str(t->v[k].name, false, o->f);
		json_figure(r, ", \"blocks\": ", t->v[k].blocks, o->f);
		json_figure(r, ", \"bytes\": ", t->v[k].bytes, o->f);
		if (t->have_retained)
			json_figure(r, ", \"retained_bytes\": ", t->v[k].retained, o->f);
		if (t->have_stacks)
			stacks_json(t, &t->v[k], o->f);
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
	.json = types_json, .html = types_html, .diff = types_diff,
};

static bool types_wanted(const struct options *o)
{
	return o->by_type && o->report.metric != METRIC_RETAINED_SPACE && !o->report.event_stacks;
}

static bool types_stacks_wanted(const struct options *o)
{
	return o->by_type && o->report.metric != METRIC_RETAINED_SPACE && o->report.event_stacks;
}

static bool types_retained_wanted(const struct options *o)
{
	return o->by_type && o->report.metric == METRIC_RETAINED_SPACE;
}

/* the blocks the report shows: after --older-than and --leaks marked the others; when
 * no row needs the list, the scan's table of first words (IN_FIRSTS) */
const struct analysis types_analysis = {
	"types", IN_LIST | IN_FIRSTS | IN_MARKS | IN_UNTAGGED, 0, 0, types_wanted, types_run,
	types_free, &types_section
};

/* --stacks: each type's heaviest stacks, from its blocks' (the list) */
const struct analysis types_stacks_analysis = {
	"types, stacks", IN_LIST | IN_MARKS | IN_UNTAGGED, 0, 0, types_stacks_wanted, types_run,
	types_free, &types_section
};

/* the same table with what each type retains: the graph's, which the plain table does
 * not build (before the retained row takes its numbering apart) */
const struct analysis types_retained_analysis = {
	"types, retained", IN_LIST | IN_MARKS | IN_UNTAGGED | IN_GRAPH | IN_DOMINATORS, 0, 0,
	types_retained_wanted, types_run, types_free, &types_section
};
