/*
 * Free memory pinned by in-use chunks (see pinned.h): runs of free chunks found on the
 * allocator's sorted chunk list, each charged to the chunk right above it, summed per
 * stack of those chunks. The chunk layout and what the allocator gives back stay in its
 * reader (alloc.h).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "collect.h"
#include "pinned.h"
#include "report.h"
#include "scan.h"
#include "stacks.h"
#include "util.h"

/* One pinning chunk's charge, then (after the merge) one holder's sum. */
struct item {
	enum pinned_holder holder;
	unsigned flags, nframes;
	const uint64_t *pcs;		/* v2: the scan's records; v1: owned copy */
	bool owned;
	uint64_t bytes, trim_bytes, blocks;
};

static bool frees(const struct alloc_chunk *c)
{
	return !c->mmapped && (c->kind == ALLOC_FREE || c->kind == ALLOC_FREE_UNJOINED);
}

static const uint64_t no_pcs[1];

/* The stack of a tagged chunk's block, as graph.c and the plain join key it. */
static void block_stack(const struct image *img, const struct scan_result *scan, uint32_t bi,
			struct decode_buf *buf, struct item *it)
{
	const struct scan_block *b = bi < scan->list.n ? &scan->list.v[bi] : NULL;
	struct decoded d;

	it->pcs = no_pcs;
	if (!b)
		it->flags = STACK_UNKNOWN;
	else if (b->version == 2) {
		const struct decoded_stack *s = b->site ? collect_site_stack(&scan->found, b->site)
							: NULL;

		if (s) {
			it->pcs = s->pcs;
			it->nframes = s->nframes;
			it->flags = s->flags & HP2_STACK_TRUNCATED ? STACK_TRUNCATED : 0;
		} else if (b->site) {
			it->flags = STACK_UNKNOWN;
		}
	} else if (scan_block_decoded(img, b, buf, &d) && d.kind == DEC_BLOCK && d.block.nframes) {
		uint64_t *pcs = xmalloc(d.block.nframes * sizeof(*pcs));

		memcpy(pcs, d.block.pcs, d.block.nframes * sizeof(*pcs));
		it->pcs = pcs;
		it->nframes = d.block.nframes;
		it->owned = true;
	}
}

static int key_cmp(const struct item *x, const struct item *y)
{
	if (x->holder != y->holder)
		return x->holder < y->holder ? -1 : 1;
	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	if (x->nframes != y->nframes)
		return x->nframes < y->nframes ? -1 : 1;
	for (unsigned i = 0; i < x->nframes; i++)
		if (x->pcs[i] != y->pcs[i])
			return x->pcs[i] < y->pcs[i] ? -1 : 1;
	return 0;
}

static int item_cmp(const void *a, const void *b)
{
	return key_cmp(a, b);
}

static int bytes_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return key_cmp(x, y);
}

/* Who pins the run ending at chunk i (the first chunk past it, if any). */
static enum pinned_holder holder_of(const struct alloc *al, size_t i, uint64_t end)
{
	const struct alloc_chunk *c = i < al->nchunks ? &al->chunks[i] : NULL;

	if (!c || c->addr != end || c->mmapped)
		return PIN_HEAP_END;	/* a walk cut short past the run */
	switch (c->kind) {
	case ALLOC_TAGGED:
		return PIN_BLOCK;
	case ALLOC_UNTAGGED:
		return PIN_UNTAGGED;
	case ALLOC_CACHED:
		return PIN_CACHED;
	default:
		return PIN_HEAP_END;	/* a fencepost */
	}
}

/* Every run below an in-use chunk, one item each, in address order. */
static struct item *find_runs(struct pinned *p, const struct alloc *al, const struct image *img,
			      const struct scan_result *scan, size_t *nitems)
{
	struct decode_buf *buf = xmalloc(sizeof(*buf));
	struct item *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < al->nchunks;) {
		uint64_t start = al->chunks[i].addr, end = start;
		bool top = false;
		struct item it = { 0 };

		if (!frees(&al->chunks[i])) {
			i++;
			continue;
		}
		/* as the allocator's consolidation joins them; a run that reaches the top is
		 * the top's */
		for (; i < al->nchunks && al->chunks[i].addr == end &&
		       (frees(&al->chunks[i]) || (!al->chunks[i].mmapped &&
						  al->chunks[i].kind == ALLOC_TOP)); i++) {
			top |= al->chunks[i].kind == ALLOC_TOP;
			end += al->chunks[i].size;
		}
		if (top)
			continue;
		it.holder = holder_of(al, i, end);
		it.bytes = end - start;
		it.trim_bytes = alloc_run_release(al, start, end);
		it.blocks = 1;
		if (it.holder == PIN_BLOCK)
			block_stack(img, scan, al->chunks[i].block, buf, &it);
		else
			it.pcs = no_pcs;
		p->bytes += it.bytes;
		p->trim_bytes += it.trim_bytes;
		p->runs++;
		if (n == cap)
			v = xrealloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));
		v[n++] = it;
	}
	free(buf);
	*nitems = n;
	return v;
}

/* Items of one holder joined into the first; the others' owned copies freed. */
static size_t merge(struct item *v, size_t n)
{
	size_t m = 0;

	if (n > 1)	/* v is NULL when there is nothing pinned */
		qsort(v, n, sizeof(*v), item_cmp);
	for (size_t i = 0; i < n; i++) {
		if (m && !key_cmp(&v[m - 1], &v[i])) {
			v[m - 1].bytes += v[i].bytes;
			v[m - 1].trim_bytes += v[i].trim_bytes;
			v[m - 1].blocks += v[i].blocks;
			if (v[i].owned)
				free((void *)v[i].pcs);
			continue;
		}
		v[m++] = v[i];
	}
	return m;
}

void pinned_apply(struct pinned *p, const struct alloc *al, const struct image *img,
		  const struct scan_result *scan, struct sym *sym, size_t top)
{
	struct item *v;
	size_t n;

	memset(p, 0, sizeof(*p));
	if (!al->known)
		return;
	v = find_runs(p, al, img, scan, &n);
	n = merge(v, n);
	if (n > 1)
		qsort(v, n, sizeof(*v), bytes_cmp);
	p->all = n;
	p->n = top && top < n ? top : n;
	p->v = xcalloc(p->n ? p->n : 1, sizeof(*p->v));
	for (size_t i = 0; i < n; i++) {
		if (i < p->n) {
			struct pinned_stack *s = &p->v[i];

			*s = (struct pinned_stack){ v[i].holder, v[i].bytes, v[i].trim_bytes,
						    v[i].blocks, v[i].flags, NULL, 0, 0 };
			if (v[i].nframes)
				s->frames = report_symbolize(NULL, v[i].pcs, v[i].nframes, sym,
							     false, &s->nframes);
			s->key = report_stack_key(v[i].pcs, v[i].nframes);
		} else {
			p->rest_bytes += v[i].bytes;
			p->rest_trim_bytes += v[i].trim_bytes;
			p->rest_blocks += v[i].blocks;
		}
		if (v[i].owned)
			free((void *)v[i].pcs);
	}
	free(v);
}

void pinned_free(struct pinned *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].frames);
	free(p->v);
	memset(p, 0, sizeof(*p));
}
