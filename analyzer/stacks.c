/* Live bytes per distinct stack (see stacks.h): open addressing, linear probing. */
#include <stdlib.h>
#include <string.h>

#include "heapprof_format.h"
#include "stacks.h"
#include "util.h"

void stacks_init(struct stacks *t)
{
	memset(t, 0, sizeof(*t));
	t->cap = 1024;
	t->slots = xcalloc(t->cap, sizeof(*t->slots));
}

static uint64_t hash_pcs(const uint64_t *pcs, unsigned n)
{
	uint64_t h = HP_CHECK_SEED ^ n;

	for (unsigned i = 0; i < n; i++)
		h = hp_mix(h, pcs[i]);
	return hp_check_final(h);
}

static void sizes_append(struct stack *s, const uint64_t *sizes, uint64_t n)
{
	if (s->blocks + n > s->sizes_cap) {
		s->sizes_cap = s->blocks + n > 2 * s->sizes_cap ? s->blocks + n : 2 * s->sizes_cap;
		s->sizes = xrealloc(s->sizes, s->sizes_cap * sizeof(*s->sizes));
	}
	memcpy(s->sizes + s->blocks, sizes, n * sizeof(*sizes));
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int count_cmp(const void *a, const void *b)
{
	const struct size_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return (x->size > y->size) - (x->size < y->size);
}

struct size_count *stacks_sizes(const struct stack *s, size_t *n)
{
	uint64_t *v = xmalloc((s->blocks ? s->blocks : 1) * sizeof(*v));
	struct size_count *out = xmalloc((s->blocks ? s->blocks : 1) * sizeof(*out));
	size_t k = 0;

	memcpy(v, s->sizes, s->blocks * sizeof(*v));
	qsort(v, s->blocks, sizeof(*v), u64_cmp);
	for (size_t i = 0; i < s->blocks; i++) {
		if (k && out[k - 1].size == v[i])
			out[k - 1].count++;
		else
			out[k++] = (struct size_count){ v[i], 1 };
	}
	free(v);
	qsort(out, k, sizeof(*out), count_cmp);
	*n = k;
	return out;
}

static void table_grow(struct stacks *t)
{
	struct stack **old = t->slots;
	size_t old_cap = t->cap;

	t->cap *= 2;
	t->slots = xcalloc(t->cap, sizeof(*t->slots));
	for (size_t i = 0; i < old_cap; i++) {
		size_t j;

		if (!old[i])
			continue;
		j = (size_t)old[i]->hash & (t->cap - 1);
		while (t->slots[j])
			j = (j + 1) & (t->cap - 1);
		t->slots[j] = old[i];
	}
	free(old);
}

/* The slot for this stack: the one holding it, or the empty one where it belongs. */
static struct stack **find(struct stacks *t, uint64_t hash, const uint64_t *pcs, unsigned n)
{
	size_t i = (size_t)hash & (t->cap - 1);

	for (;; i = (i + 1) & (t->cap - 1)) {
		struct stack *s = t->slots[i];

		if (!s || (s->hash == hash && s->nframes == n &&
			   !memcmp(s->pcs, pcs, n * sizeof(*pcs))))
			return &t->slots[i];
	}
}

static struct stack **find_or_insert(struct stacks *t, const uint64_t *pcs, unsigned n)
{
	uint64_t hash = hash_pcs(pcs, n);
	struct stack **slot;

	if ((t->n + 1) * 4 > t->cap * 3)
		table_grow(t);
	slot = find(t, hash, pcs, n);
	if (!*slot) {
		struct stack *s = xcalloc(1, sizeof(*s) + n * sizeof(*pcs));

		s->hash = hash;
		s->nframes = n;
		memcpy(s->pcs, pcs, n * sizeof(*pcs));
		*slot = s;
		t->n++;
	}
	return slot;
}

/* Count blocks more blocks of these sizes, holding bytes in all. */
static void add_blocks(struct stacks *t, struct stack *s, uint64_t bytes, const uint64_t *sizes,
		       uint64_t blocks)
{
	if (__builtin_add_overflow(s->bytes, bytes, &s->bytes)) {
		s->bytes = UINT64_MAX;
		t->saturated = true;
	}
	sizes_append(s, sizes, blocks);
	s->blocks += blocks;
}

void stacks_add(struct stacks *t, const uint64_t *pcs, unsigned nframes, uint64_t size)
{
	add_blocks(t, *find_or_insert(t, pcs, nframes), size, &size, 1);
}

void stacks_merge(struct stacks *into, struct stacks *from)
{
	into->saturated |= from->saturated;
	for (size_t i = 0; i < from->cap; i++) {
		struct stack *f = from->slots[i], *s, **slot;

		if (!f)
			continue;
		from->slots[i] = NULL;
		if ((into->n + 1) * 4 > into->cap * 3)
			table_grow(into);
		slot = find(into, f->hash, f->pcs, f->nframes);
		if (!*slot) {	/* new to into: move it over whole */
			*slot = f;
			into->n++;
			continue;
		}
		s = *slot;
		add_blocks(into, s, f->bytes, f->sizes, f->blocks);
		free(f->sizes);
		free(f);
	}
	from->n = 0;
}

struct stack **stacks_list(const struct stacks *t, size_t *n)
{
	struct stack **v = xmalloc((t->n ? t->n : 1) * sizeof(*v));
	size_t k = 0;

	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i])
			v[k++] = t->slots[i];
	*n = k;
	return v;
}

void stacks_free(struct stacks *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		if (t->slots[i]) {
			free(t->slots[i]->sizes);
			free(t->slots[i]);
		}
	}
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
