/*
 * Totals from decoded values (see collect.h): per-site aggregation during the scan,
 * then the join site -> stack record -> pcs, with the sampling weights of the process
 * record. Everything order-dependent is sorted first, so -j1 and -jN agree.
 */
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "util.h"

static void vec_push(struct u64vec *v, uint64_t x)
{
	if (v->n == v->cap)
		v->v = xrealloc(v->v, (v->cap = v->cap ? 2 * v->cap : 4) * sizeof(*v->v));
	v->v[v->n++] = x;
}

static void vec_reserve(struct u64vec *v, size_t n)
{
	if (v->cap - v->n < n) {
		v->cap = v->n + n > 2 * v->cap ? v->n + n : 2 * v->cap;
		v->v = xrealloc(v->v, v->cap * sizeof(*v->v));
	}
}

static void vec_append(struct u64vec *v, const struct u64vec *from)
{
	if (!from->n)
		return;
	vec_reserve(v, from->n);
	memcpy(v->v + v->n, from->v, from->n * sizeof(*v->v));
	v->n += from->n;
}

static void sat_add(uint64_t *a, uint64_t b)
{
	if (__builtin_add_overflow(*a, b, a))
		*a = UINT64_MAX;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void collect_init(struct collect *c)
{
	memset(c, 0, sizeof(*c));
	stacks_init(&c->stacks);
	c->sites_cap = 64;
	c->sites = xcalloc(c->sites_cap, sizeof(*c->sites));
}

void collect_init_records(struct collect *c, const struct collect *from)
{
	collect_init(c);
	c->opts = from->opts;
	c->site_tids = from->site_tids;	/* joined records are not mapped twice */
	for (size_t i = 0; i < from->nrecs; i++)
		collect_add(c, &from->recs[i]);
}

static size_t site_slot(const struct site_agg *v, size_t cap, uint32_t id)
{
	size_t i = (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> 32) & (cap - 1);

	while (v[i].used && v[i].id != id)
		i = (i + 1) & (cap - 1);
	return i;
}

static void sites_grow(struct collect *c)
{
	struct site_agg *old = c->sites;
	size_t old_cap = c->sites_cap;

	c->sites_cap *= 2;
	c->sites = xcalloc(c->sites_cap, sizeof(*c->sites));
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].used)
			c->sites[site_slot(c->sites, c->sites_cap, old[i].id)] = old[i];
	free(old);
}

static struct site_agg *site_get(struct collect *c, uint32_t id)
{
	size_t i;

	if ((c->nsites + 1) * 4 > c->sites_cap * 3)
		sites_grow(c);
	i = site_slot(c->sites, c->sites_cap, id);
	if (!c->sites[i].used) {
		c->sites[i].used = true;
		c->sites[i].id = id;
		c->nsites++;
	}
	return &c->sites[i];
}

/*
 * A v2 block is only noted here, as one word (its size and site, as its header holds
 * them) in pieces that never move: filing it under its site at once cost a table
 * lookup and a push onto one of thousands of growing vectors per block, and their
 * growth (copies, the allocator's bins, each thread's arena faulting in a page at a
 * time) was a quarter of the plain report's CPU on a heap of millions of blocks. The
 * scan's threads count their own blocks per site (collect_count_pending), and
 * file_pending() gives each site its stretch of one array and files them. Sampled
 * blocks and blocks of 4 GiB or more (rare) are filed at once.
 */
#define PIECE_FIRST ((size_t)8192)		/* words: a small dump stays small, */
#define PIECE_MAX (((size_t)4 << 20) / sizeof(uint64_t))	/* a big one is in huge pages */
#define PIECE_ALIGN ((uintptr_t)2 << 20)	/* whole huge pages: one fault for 2 MiB */

static void pend_push(struct collect *c, uint64_t w)
{
	struct pend_piece *p = c->pend.n ? &c->pend.v[c->pend.n - 1] : NULL;

	if (!p || p->n == p->cap) {
		size_t cap = !p ? PIECE_FIRST : PIECE_MAX;
		uintptr_t align = cap == PIECE_MAX ? PIECE_ALIGN : 1;

		if (c->pend.n == c->pend.cap)
			c->pend.v = xrealloc(c->pend.v, (c->pend.cap = c->pend.cap ? 2 * c->pend.cap
									 : 16) * sizeof(*c->pend.v));
		p = &c->pend.v[c->pend.n++];
		p->mem = xmalloc(cap * sizeof(uint64_t) + align - 1);
		p->v = (uint64_t *)(((uintptr_t)p->mem + align - 1) & ~(align - 1));
		p->n = 0;
		p->cap = cap;
	}
	p->v[p->n++] = w;
}

static void add_v2_block(struct collect *c, const struct hp_block *b)
{
	struct site_agg *s;

	if (b->age_ms > c->newest_ms)
		c->newest_ms = b->age_ms;
	c->timed = true;
	if (!(b->flags & HP2_F_SAMPLED) && b->size <= UINT32_MAX) {
		pend_push(c, b->size | (uint64_t)b->site << 32);
		return;
	}
	s = site_get(c, b->site);
	vec_push(&s->sizes, b->size);
	if (b->flags & HP2_F_SAMPLED) {
		vec_push(&s->sampled, b->size);
	} else {
		s->blocks++;
		sat_add(&s->bytes, b->size);
	}
}

void collect_count_pending(struct collect *c)
{
	if (c->pend.counted)
		return;
	for (size_t k = 0; k < c->pend.n; k++)
		for (size_t i = 0; i < c->pend.v[k].n; i++)	/* the table may grow: no slots kept */
			site_get(c, (uint32_t)(c->pend.v[k].v[i] >> 32))->pending++;
	c->pend.counted = true;
}

/*
 * The pending blocks under their sites. A site with no sizes yet gets its stretch of
 * one pool (sizes.cap 0: not its own; the join gives the pool to the stacks): one
 * allocation, in huge pages, not thousands of arrays faulted in a page at a time.
 * (Filing by two threads, each the sites of half the pool, was slower: both fault in
 * the same pool.)
 */
static void file_pending(struct collect *c)
{
	uint64_t *pool, *at;
	size_t total = 0;

	if (!c->pend.n)
		return;
	collect_count_pending(c);
	for (size_t i = 0; i < c->sites_cap; i++)
		if (c->sites[i].used && !c->sites[i].sizes.v)
			total += c->sites[i].pending;
	at = pool = total ? xmalloc(total * sizeof(*pool)) : NULL;
	if (pool)
		stacks_adopt(&c->stacks, pool);
	for (size_t i = 0; i < c->sites_cap; i++) {
		struct site_agg *s = &c->sites[i];

		if (!s->used || !s->pending)
			continue;
		if (!s->sizes.v) {
			s->sizes.v = at;
			at += s->pending;
		} else {
			vec_reserve(&s->sizes, s->pending);
		}
		s->pending = 0;
	}
	for (size_t k = 0; k < c->pend.n; k++) {
		const struct pend_piece *p = &c->pend.v[k];

		for (size_t i = 0; i < p->n; i++) {
			uint64_t w = p->v[i];
			struct site_agg *s = &c->sites[site_slot(c->sites, c->sites_cap,
								 (uint32_t)(w >> 32))];

			s->sizes.v[s->sizes.n++] = (uint32_t)w;
			s->blocks++;
			sat_add(&s->bytes, (uint32_t)w);
		}
		free(p->mem);
	}
	free(c->pend.v);
	c->pend.v = NULL;
	c->pend.n = c->pend.cap = 0;
	c->pend.counted = false;
}

/* from's pending pieces to into's, as they are (counted: collect_merge adds the counts). */
static void pend_move(struct collect *into, struct collect *from)
{
	collect_count_pending(into);
	collect_count_pending(from);
	for (size_t k = 0; k < from->pend.n; k++) {
		if (into->pend.n == into->pend.cap)
			into->pend.v = xrealloc(into->pend.v, (into->pend.cap = into->pend.cap ?
						2 * into->pend.cap : 8) * sizeof(*into->pend.v));
		into->pend.v[into->pend.n++] = from->pend.v[k];
	}
	free(from->pend.v);
	from->pend.v = NULL;
	from->pend.n = from->pend.cap = 0;
	from->pend.counted = false;
}

/* A module record, its path copied (copy) or taken over. */
static void add_module(struct collect *c, const struct hp_module_rec *m, bool copy)
{
	if (c->nmods == c->mods_cap)
		c->mods = xrealloc(c->mods, (c->mods_cap = c->mods_cap ? 2 * c->mods_cap : 4) *
						    sizeof(*c->mods));
	c->mods[c->nmods] = *m;
	if (copy)
		c->mods[c->nmods].path = xstrdup(m->path);
	c->nmods++;
}

static int module_cmp(const void *a, const void *b)
{
	const struct hp_module_rec *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* A v1 block holds its stack and thread, but names no site and so no region. */
static void add_v1_block(struct collect *c, const struct hp_block *b)
{
	struct stack_key k = { b->pcs, b->nframes, 0, c->opts.by_thread ? b->tid : 0 };
	struct stack_add a = { .bytes = b->size, .blocks = 1, .sizes = &b->size, .nsizes = 1 };

	if (c->opts.region) {
		c->v1_left_out++;
		return;
	}
	stacks_add_group(&c->stacks, &k, &a);
}

/* A chunk with no heapprof header (version 0): no stack, no region, no thread. */
static void add_untagged_block(struct collect *c, const struct hp_block *b)
{
	static const uint64_t none[1];
	struct stack_key k = { none, 0, STACK_UNTAGGED, 0 };
	struct stack_add a = { .bytes = b->size, .blocks = 1, .sizes = &b->size, .nsizes = 1 };

	if (!c->opts.region)
		stacks_add_group(&c->stacks, &k, &a);
}

void collect_add(struct collect *c, const struct decoded *d)
{
	struct decoded *r;

	if (d->kind == DEC_BLOCK) {
		if (d->block.version == 0)
			add_untagged_block(c, &d->block);
		else if (d->block.version == 1)
			add_v1_block(c, &d->block);
		else
			add_v2_block(c, &d->block);
		return;
	}
	if (d->kind == DEC_MODULE) {
		add_module(c, &d->module, true);
		return;
	}
	if (d->kind <= DEC_BLOCK || d->kind >= DEC_NKINDS)
		return;
	if (c->nrecs == c->recs_cap)
		c->recs = xrealloc(c->recs, (c->recs_cap = c->recs_cap ? 2 * c->recs_cap : 16) *
						    sizeof(*c->recs));
	r = &c->recs[c->nrecs++];
	*r = *d;
	if (d->kind == DEC_STACK) {
		uint64_t *pcs = xmalloc((d->stack.nframes ? d->stack.nframes : 1) * sizeof(*pcs));

		memcpy(pcs, d->stack.pcs, d->stack.nframes * sizeof(*pcs));
		r->stack.pcs = pcs;
	}
}

#define BAD_TAG_WHOLE (1ULL << 48)
#define BAD_TAG_DATA (1ULL << 49)

uint64_t collect_bad_tag_word(const struct decoded *d)
{
	return d->tag_site | (uint64_t)(d->tag_time & HP2_TIME_MASK) << 32 |
	       (uint64_t)(d->tag_flags & HP2_FLAGS_MASK) << 44 | (d->tag_whole ? BAD_TAG_WHOLE : 0);
}

void collect_bad_tag(struct collect *c, uint64_t word, bool data)
{
	vec_push(&c->bad_tags, word | (data ? BAD_TAG_DATA : 0));
}

static void site_free(struct site_agg *s)
{
	if (s->sizes.cap)	/* else in the stacks' pool */
		free(s->sizes.v);
	free(s->sampled.v);
}

void collect_merge(struct collect *into, struct collect *from)
{
	pend_move(into, from);
	stacks_merge(&into->stacks, &from->stacks);
	for (size_t i = 0; i < from->sites_cap; i++) {
		struct site_agg *f = &from->sites[i], *s;

		if (!f->used)
			continue;
		s = site_get(into, f->id);
		s->blocks += f->blocks;
		s->pending += f->pending;
		sat_add(&s->bytes, f->bytes);
		vec_append(&s->sizes, &f->sizes);
		vec_append(&s->sampled, &f->sampled);
		site_free(f);
	}
	memset(from->sites, 0, from->sites_cap * sizeof(*from->sites));
	from->nsites = 0;
	for (size_t i = 0; i < from->nrecs; i++) {
		if (into->nrecs == into->recs_cap)
			into->recs = xrealloc(into->recs, (into->recs_cap = into->recs_cap ?
							   2 * into->recs_cap : 16) * sizeof(*into->recs));
		into->recs[into->nrecs++] = from->recs[i];
	}
	from->nrecs = 0;
	vec_append(&into->bad_tags, &from->bad_tags);
	from->bad_tags.n = 0;
	for (size_t i = 0; i < from->nmods; i++)
		add_module(into, &from->mods[i], false);
	from->nmods = 0;
	into->v1_left_out += from->v1_left_out;
	from->v1_left_out = 0;
	if (from->newest_ms > into->newest_ms)
		into->newest_ms = from->newest_ms;
	into->timed |= from->timed;
}

/* A record's id: stacks, sites and regions their own; threads their slot (the tid in a
 * dump from before slots), rings the tid. */
static uint32_t rec_id(const struct decoded *d)
{
	switch (d->kind) {
	case DEC_STACK: return d->stack.id;
	case DEC_SITE: return d->site.id;
	case DEC_THREAD: return d->thread.slot;
	case DEC_REGION: return d->region.id;
	case DEC_RING: return d->ring.tid;
	default: return 0;
	}
}

static uint64_t rec_addr(const struct decoded *d)
{
	switch (d->kind) {
	case DEC_STACK: return d->stack.addr;
	case DEC_SITE: return d->site.addr;
	case DEC_THREAD: return d->thread.addr;
	case DEC_REGION: return d->region.addr;
	case DEC_RING: return d->ring.addr;
	case DEC_TIMELINE: return d->timeline.addr;
	case DEC_PEAK: return d->peak.addr;
	case DEC_MAPS: return d->maps.addr;
	default: return d->proc.addr;
	}
}

/* by kind, id, then address: groups of one id, the lowest address first */
static int rec_cmp(const void *a, const void *b)
{
	const struct decoded *x = a, *y = b;
	uint64_t ax = rec_addr(x), ay = rec_addr(y);

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (rec_id(x) != rec_id(y))
		return rec_id(x) < rec_id(y) ? -1 : 1;
	return (ax > ay) - (ax < ay);
}

/* Two records of one kind say the same (their addresses aside). */
static bool rec_same(const struct decoded *x, const struct decoded *y)
{
	if (x->kind == DEC_STACK)
		return x->stack.nframes == y->stack.nframes && x->stack.flags == y->stack.flags &&
		       x->stack.ref == y->stack.ref && x->stack.want == y->stack.want &&
		       !memcmp(x->stack.pcs, y->stack.pcs, x->stack.nframes * sizeof(uint64_t));
	if (x->kind == DEC_SITE)
		return x->site.stack == y->site.stack && x->site.tid == y->site.tid &&
		       x->site.entry == y->site.entry && x->site.flags == y->site.flags;
	if (x->kind == DEC_REGION)
		return !strcmp(x->region.name, y->region.name);
	if (x->kind == DEC_THREAD || x->kind == DEC_RING || x->kind == DEC_TIMELINE ||
	    x->kind == DEC_PEAK || x->kind == DEC_MAPS)
		return true;	/* one tid, several records: a reused tid, or a fork */
	return x->proc.sample_period == y->proc.sample_period && x->proc.pid == y->proc.pid &&
	       x->proc.start_mono_ns == y->proc.start_mono_ns;
}

/* Sort the records and note where each kind's run lies. */
static void sort_recs(struct collect *c)
{
	if (c->nrecs > 1)	/* recs is NULL while empty, and qsort wants a pointer */
		qsort(c->recs, c->nrecs, sizeof(*c->recs), rec_cmp);
	for (int k = 0; k < DEC_NKINDS; k++) {
		size_t i = 0;

		while (i < c->nrecs && c->recs[i].kind != (enum decode_kind)k)
			i++;
		c->kind_lo[k] = i;
		while (i < c->nrecs && c->recs[i].kind == (enum decode_kind)k)
			i++;
		c->kind_hi[k] = i;
	}
}

/* The sorted records of kind: [*first, *end). */
static void kind_range(const struct collect *c, enum decode_kind kind, size_t *first,
		       size_t *end)
{
	*first = c->kind_lo[kind];
	*end = c->kind_hi[kind];
}

/* The first of the sorted records [lo, end) (one kind's) with id, or end. */
static size_t id_first(const struct collect *c, size_t lo, size_t end, uint32_t id)
{
	size_t hi = end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rec_id(&c->recs[mid]) < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < end && rec_id(&c->recs[lo]) == id ? lo : end;
}

/* The record at first, the first of its id's group in [first, end), or NULL when
 * another of the group differs (*ambiguous set then). */
static const struct decoded *group_one(const struct collect *c, size_t first, size_t end,
				       bool *ambiguous)
{
	uint32_t id = rec_id(&c->recs[first]);

	*ambiguous = false;
	for (size_t j = first + 1; j < end && rec_id(&c->recs[j]) == id; j++) {
		if (!rec_same(&c->recs[first], &c->recs[j])) {
			*ambiguous = true;
			return NULL;
		}
	}
	return &c->recs[first];
}

/*
 * The record of kind with this id, or NULL when there is none or two that differ
 * (*ambiguous set then).
 */
static const struct decoded *rec_find(const struct collect *c, enum decode_kind kind,
				      uint32_t id, bool *ambiguous)
{
	size_t lo, end, first;

	kind_range(c, kind, &lo, &end);
	first = id_first(c, lo, end, id);
	if (first == end) {
		*ambiguous = false;
		return NULL;
	}
	return group_one(c, first, end, ambiguous);
}

/* What join_parts knows of a part's id: unknown, being walked, bad, or its words. */
enum { PART_BAD = -1, PART_UNKNOWN = -2, PART_BUSY = -3 };

/*
 * The words part id and its outer parts hold, or PART_BAD when one is missing, claimed
 * by records that differ, not a part, in a cycle, or they hold more than a stack may.
 * Each id is looked up once per join (memo[group - lo] keeps the answer), so a dump
 * cannot make the join walk one chain once per stack that names it; chain is scratch
 * for as many entries as there are stack records.
 */
static int32_t part_len(const struct collect *c, size_t lo, size_t end, int32_t *memo,
			size_t *chain, uint32_t id)
{
	size_t depth = 0;
	int32_t total;

	for (;;) {
		const struct decoded *p;
		bool ambiguous;
		size_t g;

		if (!id) {
			total = 0;
			break;
		}
		g = id_first(c, lo, end, id);
		if (g == end) {
			total = PART_BAD;
			break;
		}
		if (memo[g - lo] != PART_UNKNOWN) {	/* known, or busy: a cycle */
			total = memo[g - lo] == PART_BUSY ? PART_BAD : memo[g - lo];
			break;
		}
		p = group_one(c, g, end, &ambiguous);
		if (!p || !(p->stack.flags & HP2_STACK_PART)) {
			memo[g - lo] = total = PART_BAD;
			break;
		}
		memo[g - lo] = PART_BUSY;
		chain[depth++] = g;
		id = (uint32_t)p->stack.ref;
	}
	while (depth--) {
		size_t g = chain[depth];
		unsigned nf = c->recs[g].stack.nframes;

		if (total >= 0 && nf <= HP2_MAX_FRAMES - (unsigned)total)
			total += (int32_t)nf;
		else
			total = PART_BAD;
		memo[g - lo] = total;
	}
	return total;
}

/* Part id's words and its outer parts' after pcs[*n]: part_len said they are whole. */
static void part_copy(const struct collect *c, size_t lo, size_t end, uint32_t id,
		      uint64_t *pcs, unsigned *n)
{
	while (id) {
		const struct decoded_stack *p = &c->recs[id_first(c, lo, end, id)].stack;

		memcpy(pcs + *n, p->pcs, p->nframes * sizeof(*pcs));
		*n += p->nframes;
		id = (uint32_t)p->ref;
	}
}

/* Drop the stack records with record i's id: one broken copy makes the id unsure. */
static void drop_id(struct collect *c, size_t lo, size_t end, size_t i, struct join_info *out)
{
	uint32_t id = c->recs[i].stack.id;

	while (i > lo && c->recs[i - 1].kind == DEC_STACK && c->recs[i - 1].stack.id == id)
		i--;
	for (; i < end && c->recs[i].kind == DEC_STACK && c->recs[i].stack.id == id; i++) {
		free((void *)c->recs[i].stack.pcs);
		c->recs[i].kind = DEC_NONE;
		out->broken_stacks++;
	}
}

/*
 * Joined stacks (HP2_STACK_JOINED) get their words from their parts, and are then
 * stacks like the others. One whose parts do not give exactly its words is dropped,
 * with any record that shares its id: their sites' blocks go under [unknown stack],
 * counted. Records are dropped only after every stack is joined, since a dropped one
 * would break the lookups by id of the others.
 */
static void join_parts(struct collect *c, struct join_info *out)
{
	size_t lo, end, ndrop = 0, *drop = NULL, *chain = NULL;
	int32_t *memo = NULL;

	kind_range(c, DEC_STACK, &lo, &end);
	for (size_t i = lo; i < end; i++) {
		struct decoded_stack *s = &c->recs[i].stack;
		uint32_t native = (uint32_t)s->ref, python = (uint32_t)(s->ref >> 32);
		int32_t nn, np;
		uint64_t *pcs;
		unsigned n = 0;

		if (!(s->flags & HP2_STACK_JOINED))
			continue;
		if (!memo) {
			memo = xmalloc((end - lo) * sizeof(*memo));
			chain = xmalloc((end - lo) * sizeof(*chain));
			drop = xmalloc((end - lo) * sizeof(*drop));
			for (size_t j = 0; j < end - lo; j++)
				memo[j] = PART_UNKNOWN;
		}
		nn = part_len(c, lo, end, memo, chain, native);
		np = part_len(c, lo, end, memo, chain, python);
		if (nn < 0 || np < 0 || (unsigned)nn + (unsigned)np != s->want) {
			drop[ndrop++] = i;
			continue;
		}
		pcs = xmalloc((s->want ? s->want : 1) * sizeof(*pcs));
		part_copy(c, lo, end, native, pcs, &n);
		part_copy(c, lo, end, python, pcs, &n);
		free((void *)s->pcs);
		*s = (struct decoded_stack){ .addr = s->addr, .id = s->id, .nframes = n,
					     .flags = s->flags & ~HP2_STACK_JOINED, .pcs = pcs };
	}
	for (size_t k = 0; k < ndrop; k++)
		if (c->recs[drop[k]].kind == DEC_STACK)
			drop_id(c, lo, end, drop[k], out);
	free(memo);
	free(chain);
	free(drop);
	if (ndrop)
		sort_recs(c);
}

/* Count distinct ids and ids with differing records of kind. */
static void count_ids(const struct collect *c, enum decode_kind kind, uint64_t *ids,
		      uint64_t *conflicts)
{
	size_t i, end;

	kind_range(c, kind, &i, &end);
	for (; i < end; i++) {
		bool ambiguous;

		if (i > 0 && c->recs[i - 1].kind == kind && rec_id(&c->recs[i - 1]) == rec_id(&c->recs[i]))
			continue;
		(*ids)++;
		rec_find(c, kind, rec_id(&c->recs[i]), &ambiguous);
		*conflicts += ambiguous;
	}
}

/* Whether a thread alive at the dump has tid. */
static bool tid_live(const struct collect *c, uint32_t tid)
{
	size_t i, end;

	kind_range(c, DEC_THREAD, &i, &end);
	for (; i < end; i++)
		if (c->recs[i].thread.tid == tid && c->recs[i].thread.state == HP2_THREAD_LIVE)
			return true;
	return false;
}

/*
 * A dump whose sites name thread slots (process flag HP2_P_SLOTS): each site takes the
 * tid of the thread holding its slot, or of the thread that ended last in it while it
 * is free (its name then says "(ended)"); 0 for slot 0, the threads that ended before
 * their slot was taken over, and for an ended thread whose tid a live one has now, so
 * that nothing of a thread that ended reads as a live one's. The slot's blocks made by
 * an earlier thread count under the thread that holds it now.
 */
static void sites_to_tids(struct collect *c)
{
	size_t i, end;

	c->site_tids = true;
	kind_range(c, DEC_SITE, &i, &end);
	for (; i < end; i++) {
		struct decoded_site *s = &c->recs[i].site;
		bool ambiguous;
		const struct decoded *t = NULL;

		if (s->tid)
			t = rec_find(c, DEC_THREAD, s->tid, &ambiguous);

		if (!t)
			s->tid = 0;
		else if (t->thread.state == HP2_THREAD_LIVE)
			s->tid = t->thread.tid;
		else
			s->tid = tid_live(c, t->thread.tid) ? 0 : t->thread.tid;
	}
}

static void find_proc(const struct collect *c, struct join_info *out)
{
	size_t i, end;

	kind_range(c, DEC_PROC, &i, &end);
	if (i == end)
		return;
	out->have_proc = true;
	out->proc = c->recs[i].proc;
	out->nprocs = (unsigned)(end - i);
	for (size_t j = i + 1; j < end; j++)
		if (!rec_same(&c->recs[i], &c->recs[j]))
			out->procs_differ = true;
}

/* The site record of id and the stack record it leads to; either NULL when missing,
 * damaged or ambiguous. */
static const struct decoded_site *site_of(const struct collect *c, uint32_t id,
					 const struct decoded_stack **stack)
{
	bool ambiguous;
	const struct decoded *s = rec_find(c, DEC_SITE, id, &ambiguous), *k = NULL;

	if (s)
		k = rec_find(c, DEC_STACK, s->site.stack, &ambiguous);
	*stack = k && !(k->stack.flags & HP2_STACK_PART) ? &k->stack : NULL;
	return s ? &s->site : NULL;
}

static const uint64_t no_pcs[1];	/* memcmp and memcpy want a pointer even for 0 bytes */

/* Sampled sizes (sorted first: the sum must not depend on the scan's order) into a. */
static void add_sampled(struct site_agg *s, struct stack_add *a, struct join_info *out)
{
	if (s->sampled.n > 1)
		qsort(s->sampled.v, s->sampled.n, sizeof(uint64_t), u64_cmp);
	out->sampled_blocks += s->sampled.n;
	for (size_t i = 0; i < s->sampled.n; i++) {
		uint64_t size = s->sampled.v[i];
		double w;

		if (!out->have_proc) {
			a->blocks++;
			sat_add(&a->bytes, size);
			continue;
		}
		w = decode_sample_weight(size, out->proc.sample_period);
		a->est_blocks += w;
		a->est_bytes += w * (double)size;
	}
}

/* One site's blocks and counters into the stacks. */
static void join_site(struct collect *c, struct site_agg *s, struct join_info *out)
{
	const struct decoded_stack *k = NULL;
	const struct decoded_site *site = s->id ? site_of(c, s->id, &k) : NULL;
	struct stack_add a = { .bytes = s->bytes, .blocks = s->blocks, .sizes = s->sizes.v,
			       .nsizes = s->sizes.n, .give = &s->sizes.v,
			       .give_cap = s->sizes.cap };
	struct stack_key key = { no_pcs, 0, 0, 0 };

	if (c->opts.region && (!site || site->flags != out->region_id || out->region_unknown)) {
		out->left_out_blocks += s->sizes.n;
		return;
	}
	add_sampled(s, &a, out);
	if (s->id && !k) {
		key.flags = STACK_UNKNOWN;
		out->unknown_blocks += s->sizes.n;
		for (size_t i = 0; i < s->sizes.n; i++)
			sat_add(&out->unknown_bytes, s->sizes.v[i]);
	} else if (k) {
		key = (struct stack_key){ k->pcs, k->nframes,
					  k->flags & HP2_STACK_TRUNCATED ? STACK_TRUNCATED : 0, 0 };
	}
	if (site && site->have_counts) {
		a.counts = (struct stack_counts){ site->counts.calls, site->counts.bytes,
						  site->counts.frees, site->counts.freed,
						  site->counts.time_ns, 0 };
		out->counted_sites++;
	}
	if (c->opts.by_thread && site)
		key.tid = site->tid;
	stacks_add_group(&c->stacks, &key, &a);
}

/* Sites with counters but no live block get an (empty) aggregate, so the join sees them. */
static void add_counted_sites(struct collect *c)
{
	size_t i, end;

	kind_range(c, DEC_SITE, &i, &end);
	for (; i < end; i++) {
		const struct decoded_site *s = &c->recs[i].site;

		if (s->have_counts && (s->counts.calls || s->counts.frees) && s->id)
			site_get(c, s->id);
	}
}

/* opts.region to its id, from the region records. */
static void find_region(const struct collect *c, struct join_info *out)
{
	size_t i, end;

	if (!c->opts.region)
		return;
	kind_range(c, DEC_REGION, &i, &end);
	for (; i < end; i++) {
		if (!strcmp(c->recs[i].region.name, c->opts.region)) {
			out->region_id = c->recs[i].region.id;
			return;
		}
	}
	out->region_unknown = true;
}

/*
 * The dump's now: when it was taken, if the scan knows (a snapshot's time note) and a
 * process record gives the start it counts from, unless that is before the newest
 * block (then the note is not this process's); else the newest v2 block's time.
 */
static void find_now(const struct collect *c, struct join_info *out)
{
	uint64_t at = c->opts.taken_mono_ns, start = out->proc.start_mono_ns;

	out->now_from = c->timed ? NOW_NEWEST : NOW_NONE;
	out->now_ms = c->timed ? c->newest_ms : 0;
	if (at && out->have_proc && at >= start && (at - start) / 1000000 >= out->now_ms) {
		out->now_from = NOW_TAKEN;
		out->now_ms = (at - start) / 1000000;
	}
}

/*
 * Whether a v2 tag that failed its check (bad_tags' word w) is a damaged header, not
 * a word with the tags' 16 bits by chance: it lies where a header can (in no whole
 * block's user bytes, in no thread's stack: scan.c; an overflow of the block below
 * reaches the header above from outside them), its site id names a site record, its
 * own bits read as a tag's (decode.c's tag_whole), its time is no later than the
 * dump's, and it is one of a sample only if the process samples.
 */
static bool damaged_tag(const struct collect *c, uint64_t w, const struct join_info *out)
{
	uint32_t id = (uint32_t)w;
	unsigned flags = (w >> 44) & HP2_FLAGS_MASK;
	bool ambiguous;

	if (!id || !(w & BAD_TAG_WHOLE) || (w & BAD_TAG_DATA))
		return false;
	if (out->now_from != NOW_NONE && hp2_time_decode((w >> 32) & HP2_TIME_MASK) > out->now_ms)
		return false;
	if ((flags & HP2_F_SAMPLED) && out->have_proc && !out->proc.sample_period)
		return false;
	return rec_find(c, DEC_SITE, id, &ambiguous) || ambiguous;
}

static int site_cmp(const void *a, const void *b)
{
	const struct site_agg *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

void collect_join(struct collect *c, struct join_info *out)
{
	struct site_agg *v;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	file_pending(c);
	sort_recs(c);
	join_parts(c, out);
	if (c->nmods)
		qsort(c->mods, c->nmods, sizeof(*c->mods), module_cmp);
	find_proc(c, out);
	count_ids(c, DEC_STACK, &out->stack_recs, &out->conflicts);
	count_ids(c, DEC_SITE, &out->site_recs, &out->conflicts);
	count_ids(c, DEC_REGION, &out->region_recs, &out->conflicts);
	count_ids(c, DEC_THREAD, &out->thread_recs, &out->conflicts);
	count_ids(c, DEC_RING, &out->rings, &out->conflicts);
	if (out->have_proc) {
		out->sampled_counts = out->proc.sample_period > 0;
		out->have_time = (out->proc.p_flags & HP2_P_TIME) != 0;
		if ((out->proc.p_flags & HP2_P_SLOTS) && !c->site_tids)
			sites_to_tids(c);
	}
	find_region(c, out);
	out->left_out_blocks = c->v1_left_out;
	add_counted_sites(c);
	v = xmalloc((c->nsites ? c->nsites : 1) * sizeof(*v));
	for (size_t i = 0; i < c->sites_cap; i++)
		if (c->sites[i].used)
			v[n++] = c->sites[i];
	qsort(v, n, sizeof(*v), site_cmp);
	for (size_t i = 0; i < n; i++) {
		join_site(c, &v[i], out);
		site_free(&v[i]);
	}
	free(v);
	memset(c->sites, 0, c->sites_cap * sizeof(*c->sites));
	c->nsites = 0;
	out->unweighted = out->sampled_blocks && !out->have_proc;
	find_now(c, out);
	for (size_t i = 0; i < c->bad_tags.n; i++) {
		if (damaged_tag(c, c->bad_tags.v[i], out))
			out->damaged++;
		else
			out->noise++;
	}
}

const struct decoded *collect_records(const struct collect *c, enum decode_kind kind, size_t *n)
{
	size_t i, end;

	kind_range(c, kind, &i, &end);
	*n = end - i;
	return c->recs ? c->recs + i : NULL;	/* no records: no array either */
}

const char *collect_thread_name(const struct collect *c, uint32_t tid)
{
	size_t i, end;

	kind_range(c, DEC_THREAD, &i, &end);
	for (size_t k = i; k < end; k++)	/* few threads: a walk is enough */
		if (c->recs[k].thread.tid == tid && c->recs[k].thread.state == HP2_THREAD_LIVE)
			return c->recs[k].thread.name[0] ? c->recs[k].thread.name : NULL;
	for (; i < end; i++)	/* no live one: the thread that ended last with it */
		if (c->recs[i].thread.tid == tid && c->recs[i].thread.name[0])
			return c->recs[i].thread.name;
	return NULL;
}

const struct decoded_stack *collect_site_stack(const struct collect *c, uint32_t site)
{
	const struct decoded_stack *k;

	site_of(c, site, &k);
	return k;
}

const struct decoded_site *collect_site(const struct collect *c, uint32_t id,
				       const struct decoded_stack **stack)
{
	return site_of(c, id, stack);
}

const struct decoded_stack *collect_stack(const struct collect *c, uint32_t id)
{
	bool ambiguous;
	const struct decoded *k = rec_find(c, DEC_STACK, id, &ambiguous);

	return k && !(k->stack.flags & HP2_STACK_PART) ? &k->stack : NULL;
}

void collect_free(struct collect *c)
{
	stacks_free(&c->stacks);
	for (size_t i = 0; i < c->sites_cap; i++)
		if (c->sites[i].used)
			site_free(&c->sites[i]);
	free(c->sites);
	for (size_t k = 0; k < c->pend.n; k++)
		free(c->pend.v[k].mem);
	free(c->pend.v);
	for (size_t i = 0; i < c->nrecs; i++)
		if (c->recs[i].kind == DEC_STACK)
			free((void *)c->recs[i].stack.pcs);
	free(c->recs);
	free(c->bad_tags.v);
	for (size_t i = 0; i < c->nmods; i++)
		free((void *)c->mods[i].path);
	free(c->mods);
	memset(c, 0, sizeof(*c));
}
