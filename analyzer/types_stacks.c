/*
 * --by=type --stacks: each type's heaviest stacks, those that made its blocks (as
 * scan_block_stack finds them; an untagged block has none). The stacks kept are named
 * for types.c, which shows each as a preview under its type's row.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "types_stacks.h"
#include "util.h"

/* One block's share: its row, its stack's key, which block (to find the stack again). */
struct share {
	uint32_t row;
	uint64_t key;
	size_t i;
	double bytes, blocks;
};

static int share_cmp(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* heaviest first within a row; ties by key, for the same bytes every run */
static int heavy_cmp(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

/* Each block's share, one per (row, stack) after merging; *n gets how many. */
static struct share *shares(struct session *s, const uint32_t *row_of, struct decode_buf *buf,
			    size_t *n)
{
	const struct scan_blocks *l = &s->scan.list;
	uint64_t period = s->scan.join.have_proc ? s->scan.join.proc.sample_period : 0;
	struct share *v = xmalloc((l->n ? l->n : 1) * sizeof(*v));
	size_t m = 0, k = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct scan_block *b = &l->v[i];
		double wt = b->sampled && period ? decode_sample_weight(b->size, period) : 1;
		unsigned np;
		const uint64_t *pcs;

		if (row_of[i] == GRAPH_NONE)
			continue;
		pcs = scan_block_stack(&s->img, &s->scan, b, buf, &np);
		v[m++] = (struct share){ row_of[i], report_stack_key(pcs, np), i,
					 wt * (double)b->size, wt };
	}
	qsort(v, m, sizeof(*v), share_cmp);
	for (size_t i = 0; i < m; i++) {
		if (k && v[k - 1].row == v[i].row && v[k - 1].key == v[i].key) {
			v[k - 1].bytes += v[i].bytes;
			v[k - 1].blocks += v[i].blocks;
			continue;
		}
		v[k++] = v[i];
	}
	*n = k;
	return v;
}

void types_stacks_make(struct session *s, const uint32_t *row_of, size_t nrows, unsigned per_row,
		       struct type_stacks *ts)
{
	struct decode_buf *buf = xmalloc(sizeof(*buf));
	struct share *v;
	size_t n;

	*ts = (struct type_stacks){ .start = xcalloc(nrows + 1, sizeof(*ts->start)),
				    .more = xcalloc(nrows ? nrows : 1, sizeof(*ts->more)) };
	v = shares(s, row_of, buf, &n);
	qsort(v, n, sizeof(*v), heavy_cmp);
	ts->v = xcalloc(n ? n : 1, sizeof(*ts->v));
	for (size_t k = 0, seen = 0; k < n; k++) {
		struct type_stack *t;
		const uint64_t *pcs;
		unsigned np;

		seen = k && v[k - 1].row == v[k].row ? seen + 1 : 0;
		if (seen >= per_row) {
			ts->more[v[k].row]++;
			continue;
		}
		t = &ts->v[ts->n++];
		pcs = scan_block_stack(&s->img, &s->scan, &s->scan.list.v[v[k].i], buf, &np);
		*t = (struct type_stack){ .bytes = (uint64_t)(v[k].bytes + 0.5),
					  .blocks = (uint64_t)(v[k].blocks + 0.5), .key = v[k].key };
		t->frames = report_symbolize(&ts->names, pcs, np, s->sym, s->o->report.short_names,
					     &t->nframes);
		ts->start[v[k].row + 1] = ts->n;
	}
	for (size_t r = 1; r <= nrows; r++)	/* a row with no stack starts where the last ended */
		if (ts->start[r] < ts->start[r - 1])
			ts->start[r] = ts->start[r - 1];
	free(v);
	free(buf);
}

void types_stacks_free(struct type_stacks *ts)
{
	for (size_t k = 0; k < ts->n; k++)
		free((void *)ts->v[k].frames);
	free(ts->v);
	free(ts->start);
	free(ts->more);
	report_free(&ts->names);
	*ts = (struct type_stacks){ 0 };
}
