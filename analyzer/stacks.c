/* Figures per distinct stack (see stacks.h): open addressing, linear probing. */
#include <math.h>
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

void stacks_adopt(struct stacks *t, void *pool)
{
	t->pools = xrealloc(t->pools, (t->npools + 1) * sizeof(*t->pools));
	t->pools[t->npools++] = pool;
}

void stacks_take_pools(struct stacks *into, struct stacks *from)
{
	for (size_t i = 0; i < from->npools; i++)
		stacks_adopt(into, from->pools[i]);
	free(from->pools);
	from->pools = NULL;
	from->npools = 0;
}

/* s's sizes, unless they lie in a pool */
static void sizes_free(struct stack *s)
{
	if (s->sizes_cap)
		free(s->sizes);
}

static uint64_t hash_key(const struct stack_key *k)
{
	uint64_t h = hp_mix(HP_CHECK_SEED ^ k->nframes ^ (uint64_t)k->flags << 32, k->tid);

	for (unsigned i = 0; i < k->nframes; i++)
		h = hp_mix(h, k->pcs[i]);
	return hp_check_final(h);
}

static void sat_add(uint64_t *a, uint64_t b, bool *saturated)
{
	if (__builtin_add_overflow(*a, b, a)) {
		*a = UINT64_MAX;
		*saturated = true;
	}
}

static void counts_add(struct stack_counts *c, const struct stack_counts *a, bool *saturated)
{
	sat_add(&c->calls, a->calls, saturated);
	sat_add(&c->bytes, a->bytes, saturated);
	sat_add(&c->frees, a->frees, saturated);
	sat_add(&c->freed, a->freed, saturated);
	sat_add(&c->time_ns, a->time_ns, saturated);
	sat_add(&c->retained, a->retained, saturated);
}

static void sizes_append(struct stack *s, const uint64_t *sizes, uint64_t n)
{
	if (s->nsizes + n > s->sizes_cap) {
		size_t cap = s->nsizes + n > 2 * s->sizes_cap ? s->nsizes + n : 2 * s->sizes_cap;

		if (!s->sizes_cap && s->sizes) {	/* in a pool: copied out */
			uint64_t *v = xmalloc(cap * sizeof(*v));

			memcpy(v, s->sizes, s->nsizes * sizeof(*v));
			s->sizes = v;
		} else {
			s->sizes = xrealloc(s->sizes, cap * sizeof(*s->sizes));
		}
		s->sizes_cap = cap;
	}
	if (n)
		memcpy(s->sizes + s->nsizes, sizes, n * sizeof(*sizes));
	s->nsizes += n;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int stacks_size_count_cmp(const void *a, const void *b)
{
	const struct size_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return (x->size > y->size) - (x->size < y->size);
}

struct size_count *stacks_sizes(const struct stack *s, size_t *n)
{
	uint64_t *v = xmalloc((s->nsizes ? s->nsizes : 1) * sizeof(*v));
	struct size_count *out = xmalloc((s->nsizes ? s->nsizes : 1) * sizeof(*out));
	size_t k = 0;

	if (s->nsizes)
		memcpy(v, s->sizes, s->nsizes * sizeof(*v));
	qsort(v, s->nsizes, sizeof(*v), u64_cmp);
	for (size_t i = 0; i < s->nsizes; i++) {
		if (k && out[k - 1].size == v[i])
			out[k - 1].count++;
		else
			out[k++] = (struct size_count){ v[i], 1 };
	}
	free(v);
	qsort(out, k, sizeof(*out), stacks_size_count_cmp);
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
static struct stack **find(struct stacks *t, uint64_t hash, const struct stack_key *k)
{
	size_t i = (size_t)hash & (t->cap - 1);

	for (;; i = (i + 1) & (t->cap - 1)) {
		struct stack *s = t->slots[i];

		if (!s || (s->hash == hash && s->nframes == k->nframes && s->flags == k->flags &&
			   s->tid == k->tid && !memcmp(s->pcs, k->pcs, k->nframes * sizeof(*k->pcs))))
			return &t->slots[i];
	}
}

const struct stack *stacks_lookup(const struct stacks *t, const struct stack_key *k)
{
	return t->cap ? *find((struct stacks *)t, hash_key(k), k) : NULL;
}

static struct stack **find_or_insert(struct stacks *t, const struct stack_key *k)
{
	uint64_t hash = hash_key(k);
	struct stack **slot;

	if ((t->n + 1) * 4 > t->cap * 3)
		table_grow(t);
	slot = find(t, hash, k);
	if (!*slot) {
		struct stack *s = xcalloc(1, sizeof(*s) + k->nframes * sizeof(*k->pcs));

		s->hash = hash;
		s->flags = k->flags;
		s->tid = k->tid;
		s->nframes = k->nframes;
		memcpy(s->pcs, k->pcs, k->nframes * sizeof(*k->pcs));
		*slot = s;
		t->n++;
	}
	return slot;
}

static void add_blocks(struct stacks *t, struct stack *s, const struct stack_add *a)
{
	if (__builtin_add_overflow(s->bytes, a->bytes, &s->bytes)) {
		s->bytes = UINT64_MAX;
		t->saturated = true;
	}
	s->blocks += a->blocks;
	s->est_bytes += a->est_bytes;
	s->est_blocks += a->est_blocks;
	if (a->give && *a->give == a->sizes && a->nsizes && !s->sizes) {
		/* taken, not copied: the join and --leaks hand over a million sizes */
		s->sizes = *a->give;
		s->sizes_cap = a->give_cap;
		s->nsizes = a->nsizes;
		*a->give = NULL;
	} else {
		sizes_append(s, a->sizes, a->nsizes);
	}
	counts_add(&s->counts, &a->counts, &t->saturated);
}

void stacks_add_group(struct stacks *t, const struct stack_key *k, const struct stack_add *a)
{
	add_blocks(t, *find_or_insert(t, k), a);
}

/* exact plus an estimate rounded half up, saturating */
static uint64_t add_estimate(uint64_t exact, double est)
{
	double x = floor(est + 0.5);
	uint64_t r, sum;

	if (!(x > 0))
		return exact;
	r = x >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)x;
	return __builtin_add_overflow(exact, r, &sum) ? UINT64_MAX : sum;
}

uint64_t stack_bytes(const struct stack *s)
{
	return add_estimate(s->bytes, s->est_bytes);
}

uint64_t stack_blocks(const struct stack *s)
{
	return add_estimate(s->blocks, s->est_blocks);
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
		slot = find(into, f->hash, &(struct stack_key){ f->pcs, f->nframes, f->flags, f->tid });
		if (!*slot) {	/* new to into: move it over whole */
			*slot = f;
			into->n++;
			continue;
		}
		s = *slot;
		add_blocks(into, s, &(struct stack_add){ f->bytes, f->blocks, f->est_bytes,
							 f->est_blocks, f->sizes, f->nsizes,
							 f->counts, &f->sizes, f->sizes_cap });
		sizes_free(f);
		free(f);
	}
	from->n = 0;
	stacks_take_pools(into, from);
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
			sizes_free(t->slots[i]);
			free(t->slots[i]);
		}
	}
	free(t->slots);
	for (size_t i = 0; i < t->npools; i++)
		free(t->pools[i]);
	free(t->pools);
	memset(t, 0, sizeof(*t));
}
