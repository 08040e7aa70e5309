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

static void vec_append(struct u64vec *v, const struct u64vec *from)
{
	for (size_t i = 0; i < from->n; i++)
		vec_push(v, from->v[i]);
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

static void add_v2_block(struct collect *c, const struct hp_block *b)
{
	struct site_agg *s = site_get(c, b->site);

	vec_push(&s->sizes, b->size);
	if (b->flags & HP2_F_SAMPLED) {
		vec_push(&s->sampled, b->size);
		return;
	}
	s->blocks++;
	sat_add(&s->bytes, b->size);
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

void collect_add(struct collect *c, const struct decoded *d)
{
	struct decoded *r;

	if (d->kind == DEC_BLOCK) {
		if (d->block.version == 1)
			stacks_add(&c->stacks, d->block.pcs, d->block.nframes, d->block.size);
		else
			add_v2_block(c, &d->block);
		return;
	}
	if (d->kind == DEC_MODULE) {
		add_module(c, &d->module, true);
		return;
	}
	if (d->kind != DEC_STACK && d->kind != DEC_SITE && d->kind != DEC_PROC)
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

void collect_bad_tag(struct collect *c, uint32_t site)
{
	vec_push(&c->bad_tags, site);
}

static void site_free(struct site_agg *s)
{
	free(s->sizes.v);
	free(s->sampled.v);
}

void collect_merge(struct collect *into, struct collect *from)
{
	stacks_merge(&into->stacks, &from->stacks);
	for (size_t i = 0; i < from->sites_cap; i++) {
		struct site_agg *f = &from->sites[i], *s;

		if (!f->used)
			continue;
		s = site_get(into, f->id);
		s->blocks += f->blocks;
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
}

static uint32_t rec_id(const struct decoded *d)
{
	return d->kind == DEC_STACK ? d->stack.id : d->kind == DEC_SITE ? d->site.id : 0;
}

static uint64_t rec_addr(const struct decoded *d)
{
	return d->kind == DEC_STACK ? d->stack.addr : d->kind == DEC_SITE ? d->site.addr
									  : d->proc.addr;
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
		       !memcmp(x->stack.pcs, y->stack.pcs, x->stack.nframes * sizeof(uint64_t));
	if (x->kind == DEC_SITE)
		return x->site.stack == y->site.stack && x->site.tid == y->site.tid &&
		       x->site.entry == y->site.entry && x->site.flags == y->site.flags;
	return x->proc.sample_period == y->proc.sample_period && x->proc.pid == y->proc.pid &&
	       x->proc.start_mono_ns == y->proc.start_mono_ns;
}

/* Sort the records and note where each kind's run lies. */
static void sort_recs(struct collect *c)
{
	if (c->nrecs > 1)	/* recs is NULL while empty, and qsort wants a pointer */
		qsort(c->recs, c->nrecs, sizeof(*c->recs), rec_cmp);
	for (int k = 0; k <= DEC_PROC; k++) {
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

/*
 * The record of kind with this id, or NULL when there is none or two that differ
 * (*ambiguous set then).
 */
static const struct decoded *rec_find(const struct collect *c, enum decode_kind kind,
				      uint32_t id, bool *ambiguous)
{
	size_t lo, hi, end;

	kind_range(c, kind, &lo, &end);
	hi = end;
	*ambiguous = false;
	while (lo < hi) {	/* the first of the id's group */
		size_t mid = lo + (hi - lo) / 2;

		if (rec_id(&c->recs[mid]) < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == end || rec_id(&c->recs[lo]) != id)
		return NULL;
	for (size_t j = lo + 1; j < end && rec_id(&c->recs[j]) == id; j++) {
		if (!rec_same(&c->recs[lo], &c->recs[j])) {
			*ambiguous = true;
			return NULL;
		}
	}
	return &c->recs[lo];
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

/* The stack record a site id leads to, or NULL: missing, damaged or ambiguous. */
static const struct hp_stack_rec *site_stack(const struct collect *c, uint32_t site)
{
	bool ambiguous;
	const struct decoded *s = rec_find(c, DEC_SITE, site, &ambiguous), *k;

	if (!s)
		return NULL;
	k = rec_find(c, DEC_STACK, s->site.stack, &ambiguous);
	return k ? &k->stack : NULL;
}

static const uint64_t no_pcs[1];	/* memcmp and memcpy want a pointer even for 0 bytes */

/* One site's blocks into the stacks; sampled sizes summed in sorted order. */
static void join_site(struct collect *c, struct site_agg *s, struct join_info *out)
{
	const struct hp_stack_rec *k = NULL;
	struct stack_add a = { .bytes = s->bytes, .blocks = s->blocks, .sizes = s->sizes.v,
			       .nsizes = s->sizes.n };
	unsigned flags = 0;

	if (s->sampled.n > 1)
		qsort(s->sampled.v, s->sampled.n, sizeof(uint64_t), u64_cmp);
	out->sampled_blocks += s->sampled.n;
	for (size_t i = 0; i < s->sampled.n; i++) {
		uint64_t size = s->sampled.v[i];
		double w;

		if (!out->have_proc) {
			a.blocks++;
			sat_add(&a.bytes, size);
			continue;
		}
		w = decode_sample_weight(size, out->proc.sample_period);
		a.est_blocks += w;
		a.est_bytes += w * (double)size;
	}
	if (s->id && !(k = site_stack(c, s->id))) {
		flags = STACK_UNKNOWN;
		out->unknown_blocks += s->sizes.n;
		for (size_t i = 0; i < s->sizes.n; i++)
			sat_add(&out->unknown_bytes, s->sizes.v[i]);
	} else if (k && (k->flags & HP2_STACK_TRUNCATED)) {
		flags = STACK_TRUNCATED;
	}
	stacks_add_group(&c->stacks, k ? k->pcs : no_pcs, k ? k->nframes : 0, flags, &a);
}

static int site_cmp(const void *a, const void *b)
{
	const struct site_agg *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

void collect_join(struct collect *c, struct join_info *out)
{
	struct site_agg *v = xmalloc((c->nsites ? c->nsites : 1) * sizeof(*v));
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	sort_recs(c);
	if (c->nmods)
		qsort(c->mods, c->nmods, sizeof(*c->mods), module_cmp);
	find_proc(c, out);
	count_ids(c, DEC_STACK, &out->stack_recs, &out->conflicts);
	count_ids(c, DEC_SITE, &out->site_recs, &out->conflicts);
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
	for (size_t i = 0; i < c->bad_tags.n; i++) {
		bool ambiguous;
		uint32_t id = (uint32_t)c->bad_tags.v[i];

		if (id && (rec_find(c, DEC_SITE, id, &ambiguous) || ambiguous))
			out->damaged++;
		else
			out->noise++;
	}
}

void collect_free(struct collect *c)
{
	stacks_free(&c->stacks);
	for (size_t i = 0; i < c->sites_cap; i++)
		if (c->sites[i].used)
			site_free(&c->sites[i]);
	free(c->sites);
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
