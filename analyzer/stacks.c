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

static void size_slot_add(struct stack *s, uint64_t size, uint64_t count);

static void sizes_grow(struct stack *s)
{
	struct size_count *old = s->sizes;
	size_t old_cap = s->sizes_cap;

	s->sizes_cap = old_cap ? old_cap * 2 : 8;
	s->sizes = xcalloc(s->sizes_cap, sizeof(*s->sizes));
	s->nsizes = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].count)
			size_slot_add(s, old[i].size, old[i].count);
	free(old);
}

static void size_slot_add(struct stack *s, uint64_t size, uint64_t count)
{
	size_t i;

	if ((s->nsizes + 1) * 4 > s->sizes_cap * 3)
		sizes_grow(s);
	i = (size_t)(hp_mix(0, size) & (s->sizes_cap - 1));
	while (s->sizes[i].count && s->sizes[i].size != size)
		i = (i + 1) & (s->sizes_cap - 1);
	if (!s->sizes[i].count) {
		s->sizes[i].size = size;
		s->nsizes++;
	}
	s->sizes[i].count += count;
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

static void add_bytes(struct stacks *t, struct stack *s, uint64_t bytes, uint64_t blocks)
{
	if (__builtin_add_overflow(s->bytes, bytes, &s->bytes)) {
		s->bytes = UINT64_MAX;
		t->saturated = true;
	}
	s->blocks += blocks;
}

void stacks_add(struct stacks *t, const uint64_t *pcs, unsigned nframes, uint64_t size)
{
	struct stack *s = *find_or_insert(t, pcs, nframes);

	add_bytes(t, s, size, 1);
	size_slot_add(s, size, 1);
}

void stacks_merge(struct stacks *into, struct stacks *from)
{
	into->saturated |= from->saturated;
	for (size_t i = 0; i < from->cap; i++) {
		struct stack *f = from->slots[i], *s;

		struct stack **slot;

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
		add_bytes(into, s, f->bytes, f->blocks);
		for (size_t j = 0; j < f->sizes_cap; j++)
			if (f->sizes[j].count)
				size_slot_add(s, f->sizes[j].size, f->sizes[j].count);
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
