/*
 * Blocks counted by their first word (firsts.h): a table of at most FIRSTS_MAX_WORDS
 * words a scan thread, small enough to stay in its cache; a heap whose blocks start
 * with more distinct words (pointers, counters) spills the rest block by block.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "firsts.h"
#include "util.h"

void firsts_init(struct firsts *f, unsigned wsize)
{
	*f = (struct firsts){ .wsize = wsize };
}

static size_t slot(const struct firsts *f, uint64_t word)
{
	size_t i = (size_t)((word * 0x9E3779B97F4A7C15ull) >> 20) & (f->cap - 1);

	while (f->word[i] && f->word[i] != word)
		i = (i + 1) & (f->cap - 1);
	return i;
}

static void grow(struct firsts *f)
{
	uint64_t *old = f->word;
	struct firsts_count *old_count = f->count;
	size_t old_cap = f->cap;

	f->cap = f->cap ? 2 * f->cap : 256;
	f->word = xcalloc(f->cap, sizeof(*f->word));
	f->count = xcalloc(f->cap, sizeof(*f->count));
	for (size_t k = 0; k < old_cap; k++)
		if (old[k]) {
			size_t i = slot(f, old[k]);

			f->word[i] = old[k];
			f->count[i] = old_count[k];
		}
	free(old);
	free(old_count);
}

/* The word's counts, made if the table may take one more (bounded: or else NULL). */
static struct firsts_count *row(struct firsts *f, uint64_t word, bool bounded)
{
	size_t i;

	if (f->cap) {
		i = slot(f, word);
		if (f->word[i])
			return &f->count[i];
	}
	if (bounded && f->n >= FIRSTS_MAX_WORDS)
		return NULL;
	if (2 * (f->n + 1) > f->cap)
		grow(f);
	i = slot(f, word);
	f->word[i] = word;
	f->n++;
	return &f->count[i];
}

static void spill(struct firsts *f, uint64_t word, uint64_t size)
{
	struct firsts_piece *p = f->spilled;

	if (!p || p->n == FIRSTS_PIECE) {
		p = xmalloc(sizeof(*p));
		p->next = f->spilled;
		p->n = 0;
		f->spilled = p;
	}
	p->v[p->n++] = (struct firsts_block){ word, size };
}

void firsts_add(struct firsts *f, uint64_t word, uint64_t size)
{
	struct firsts_count *r;

	if (!word || word % f->wsize) {
		f->other_blocks++;
		f->other_bytes += size;
	} else if ((r = row(f, word, true))) {
		r->blocks++;
		r->bytes += size;
	} else {
		spill(f, word, size);
	}
}

void firsts_add_sampled(struct firsts *f, uint64_t user, uint64_t size, uint64_t word)
{
	if (f->nsampled == f->sampled_cap)
		f->sampled = xrealloc(f->sampled, (f->sampled_cap = f->sampled_cap ?
				      2 * f->sampled_cap : 256) * sizeof(*f->sampled));
	f->sampled[f->nsampled++] = (struct firsts_sampled){ user, size, word };
}

static int sampled_cmp(const void *a, const void *b)
{
	const struct firsts_sampled *x = a, *y = b;

	if (x->user != y->user)
		return x->user < y->user ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return (x->word > y->word) - (x->word < y->word);
}

void firsts_merge(struct firsts *into, struct firsts *from)
{
	struct firsts_piece **tail = &into->spilled;

	for (size_t k = 0; k < from->cap; k++) {
		struct firsts_count *r;

		if (!from->word[k])
			continue;
		r = row(into, from->word[k], false);
		r->blocks += from->count[k].blocks;
		r->bytes += from->count[k].bytes;
	}
	into->other_blocks += from->other_blocks;
	into->other_bytes += from->other_bytes;
	while (*tail)
		tail = &(*tail)->next;
	*tail = from->spilled;
	from->spilled = NULL;
	if (from->nsampled) {
		into->sampled = xrealloc(into->sampled, (into->nsampled + from->nsampled) *
					 sizeof(*into->sampled));
		memcpy(into->sampled + into->nsampled, from->sampled,
		       from->nsampled * sizeof(*from->sampled));
		into->nsampled += from->nsampled;
		into->sampled_cap = into->nsampled;
		qsort(into->sampled, into->nsampled, sizeof(*into->sampled), sampled_cmp);
	}
	firsts_free(from);
}

void firsts_free(struct firsts *f)
{
	while (f->spilled) {
		struct firsts_piece *p = f->spilled;

		f->spilled = p->next;
		free(p);
	}
	free(f->word);
	free(f->count);
	free(f->sampled);
	firsts_init(f, f->wsize);
}
