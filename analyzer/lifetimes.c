/*
 * Lifetimes (see lifetimes.h): the rings' calls merged by time and paired by address
 * inside the window every ring covers, temporary allocations within each thread's
 * ring, and the live blocks' ages; each figure filed under its site's stack.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ages.h"
#include "analysis.h"
#include "collect.h"
#include "fmt.h"
#include "image.h"
#include "lifetimes.h"
#include "util.h"

static const uint64_t no_pcs[1];

/* ---- the figures per stack: an open-addressed map from stack to lt->v ------------- */

struct lt_map {
	size_t *slot;			/* index + 1 into lt->v; 0 empty */
	size_t cap;			/* a power of two */
};

static size_t ptr_hash(const void *p, size_t cap)
{
	return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ULL) & (cap - 1);
}

static size_t *map_find(const struct lifetimes *lt, const size_t *slot, size_t cap,
			const struct stack *s)
{
	size_t i = ptr_hash(s, cap);

	while (slot[i] && lt->v[slot[i] - 1].stack != s)
		i = (i + 1) & (cap - 1);
	return (size_t *)&slot[i];
}

/* The stack's figures, made on first use. */
static struct report_life *life_of(struct lifetimes *lt, struct lt_map *m,
				   const struct stack *s)
{
	size_t *at;

	if ((lt->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64, *slot = xcalloc(cap, sizeof(*slot));

		for (size_t i = 0; i < lt->n; i++)
			*map_find(lt, slot, cap, lt->v[i].stack) = i + 1;
		free(m->slot);
		m->slot = slot;
		m->cap = cap;
	}
	at = map_find(lt, m->slot, m->cap, s);
	if (!*at) {
		if (lt->n == lt->cap) {
			lt->cap = lt->cap ? lt->cap * 2 : 64;
			lt->v = xrealloc(lt->v, lt->cap * sizeof(*lt->v));
		}
		lt->v[lt->n] = (struct life_entry){ .stack = s };
		*at = ++lt->n;
	}
	return &lt->v[*at - 1].life;
}

static void range_add(struct report_range *r, uint64_t v)
{
	if (!r->n || v < r->min)
		r->min = v;
	if (v > r->max)
		r->max = v;
	r->n++;
	if (__builtin_add_overflow(r->sum, v, &r->sum))
		r->sum = UINT64_MAX;	/* times from a ring are not checked */
}

/*
 * The stack the join filed site id's blocks under (collect.c's join_site, keyed the
 * same way), or NULL: no site, or one the join left out (--region).
 */
static const struct stack *site_stack(const struct scan_result *scan, uint32_t id)
{
	const struct decoded_stack *k = NULL;
	const struct decoded_site *site = id ? collect_site(&scan->found, id, &k) : NULL;
	struct stack_key key = { no_pcs, 0, 0, 0 };

	if (scan->found.opts.region &&
	    (!site || site->flags != scan->join.region_id || scan->join.region_unknown))
		return NULL;
	if (id && !k)
		key.flags = STACK_UNKNOWN;
	else if (k)
		key = (struct stack_key){ k->pcs, k->nframes,
					  k->flags & HP2_STACK_TRUNCATED ? STACK_TRUNCATED : 0, 0 };
	if (scan->found.opts.by_thread && site)
		key.tid = site->tid;
	return stacks_lookup(&scan->stacks, &key);
}

/* ---- the rings --------------------------------------------------------------------- */

struct ring {
	struct hp_event *ev;
	size_t n;
};

/* One call, ready to merge: its time since the process start, its ring. */
struct call {
	int64_t t;
	uint32_t ring;
	const struct hp_event *e;
};

/* The block a call frees (0: none): free's argument, and realloc's old block unless it
 * failed (a NULL result with a size left the block alone). */
static uint64_t call_frees(const struct hp_event *e)
{
	if (e->entry == HP2_ENTRY_FREE)
		return e->arg[0];
	if (e->entry == HP2_ENTRY_REALLOC || e->entry == HP2_ENTRY_REALLOCARRAY)
		return e->result || (e->entry == HP2_ENTRY_REALLOC && !e->arg[1]) ? e->arg[0] : 0;
	return 0;
}

/* The block a call made (0: none, or it failed). */
static uint64_t call_makes(const struct hp_event *e)
{
	if (e->entry == HP2_ENTRY_FREE || e->entry == HP2_ENTRY_NONE ||
	    e->entry >= HP2_ENTRY_COUNT)
		return 0;
	/* posix_memalign's slot holds the pointer, or its error number */
	if (e->entry == HP2_ENTRY_POSIX_MEMALIGN && e->result < 4096)
		return 0;
	return e->result;
}

static int call_cmp(const void *a, const void *b)
{
	const struct call *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->ring != y->ring)
		return x->ring < y->ring ? -1 : 1;
	return (x->e->seq > y->e->seq) - (x->e->seq < y->e->seq);
}

static int64_t call_time(const struct scan_result *scan, const struct hp_event *e)
{
	const struct join_info *j = &scan->join;

	return (int64_t)(e->mono_ns - (j->have_proc ? j->proc.start_mono_ns : 0));
}

/*
 * heaptrack's temporary allocation: a block freed by the very next call that frees or
 * makes one (free(NULL) and failed calls are none); here within one thread's ring, and
 * only where the ring's sequence numbers run without a gap.
 */
static void temporaries(struct lifetimes *lt, struct lt_map *m, const struct scan_result *scan,
			const struct ring *g, int64_t window)
{
	const struct hp_event *last = NULL;
	uint64_t prev_seq = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct hp_event *e = &g->ev[i];
		uint64_t freed = call_frees(e), made = call_makes(e);

		if (call_time(scan, e) < window)
			continue;
		if (e->seq != prev_seq + 1)
			last = NULL;
		prev_seq = e->seq;
		if (freed) {
			if (last && last->result == freed) {
				const struct stack *s = site_stack(scan, last->site);

				lt->sum.temporary++;
				if (s)
					life_of(lt, m, s)->temporary++;
				else
					lt->sum.no_site++;
			}
			last = NULL;
		}
		if (made)
			last = e;
	}
}

/* An open-addressed map from block address to the call that made it. */
struct made {
	uint64_t addr;			/* 0: empty */
	const struct call *c;
	bool dead;			/* a tombstone */
};

static struct made *made_find(struct made *v, size_t cap, uint64_t addr, bool insert)
{
	size_t i = (size_t)((addr >> 4) * 0x9E3779B97F4A7C15ULL) & (cap - 1);
	struct made *tomb = NULL;

	for (;; i = (i + 1) & (cap - 1)) {
		if (!v[i].addr)
			return insert && tomb ? tomb : insert ? &v[i] : NULL;
		if (v[i].dead) {
			if (!tomb)
				tomb = &v[i];
		} else if (v[i].addr == addr) {
			return &v[i];
		}
	}
}

/* Every call of the window in time order, each free paired with the call that made
 * its block. */
static void pairs(struct lifetimes *lt, struct lt_map *m, const struct scan_result *scan,
		  struct call *c, size_t n)
{
	size_t cap = 64;
	struct made *made;

	while (cap < 4 * n)
		cap *= 2;
	made = xcalloc(cap, sizeof(*made));
	qsort(c, n, sizeof(*c), call_cmp);
	for (size_t i = 0; i < n; i++) {
		uint64_t freed = call_frees(c[i].e), addr = call_makes(c[i].e);
		struct made *at;

		if (freed) {
			lt->sum.frees++;
			at = made_find(made, cap, freed, false);
			if (at) {
				const struct stack *s = site_stack(scan, at->c->e->site);

				lt->sum.paired++;
				lt->sum.cross_thread += at->c->ring != c[i].ring;
				/* sorted, so t >= the made one's; as int64_t the difference
				 * of two unchecked times may overflow */
				if (s)
					range_add(&life_of(lt, m, s)->freed,
						  (uint64_t)c[i].t - (uint64_t)at->c->t);
				else
					lt->sum.no_site++;
				at->dead = true;
			} else {
				lt->sum.before++;
			}
		}
		if (addr) {
			lt->sum.allocs++;
			/* a tombstone or an empty slot; the map never fills: cap >= 4n */
			at = made_find(made, cap, addr, true);
			*at = (struct made){ addr, &c[i], false };
		}
	}
	free(made);
}

/* The rings' calls: the window, the temporaries, the pairs. */
static void rings(struct lifetimes *lt, struct lt_map *m, const struct image *img,
		  const struct scan_result *scan)
{
	const struct decode_src src = { img, NULL };
	size_t nrec, ncalls = 0, k = 0;
	const struct decoded *rec = collect_records(&scan->found, DEC_RING, &nrec);
	struct ring *g = xcalloc(nrec ? nrec : 1, sizeof(*g));
	int64_t window = INT64_MIN;
	struct call *c;

	lt->sum.rings = nrec;
	for (size_t i = 0; i < nrec; i++) {
		g[i].ev = xmalloc((rec[i].ring.n ? rec[i].ring.n : 1) * sizeof(*g[i].ev));
		g[i].n = decode_ring_events(&src, &rec[i].ring, g[i].ev, rec[i].ring.n);
		if (!g[i].n)
			continue;
		/* a ring that lost its first calls covers only the time since its oldest one */
		if (g[i].ev[0].seq > 1 && call_time(scan, &g[i].ev[0]) > window)
			window = call_time(scan, &g[i].ev[0]);
		if (call_time(scan, &g[i].ev[g[i].n - 1]) > lt->sum.end_ns)
			lt->sum.end_ns = call_time(scan, &g[i].ev[g[i].n - 1]);
		ncalls += g[i].n;
	}
	lt->sum.whole = window == INT64_MIN;
	lt->sum.window_ns = lt->sum.whole ? 0 : window;
	c = xcalloc(ncalls ? ncalls : 1, sizeof(*c));
	for (size_t i = 0; i < nrec; i++) {
		temporaries(lt, m, scan, &g[i], window);
		for (size_t e = 0; e < g[i].n; e++)
			if (call_time(scan, &g[i].ev[e]) >= window)
				c[k++] = (struct call){ call_time(scan, &g[i].ev[e]), (uint32_t)i,
							&g[i].ev[e] };
	}
	lt->sum.calls = k;
	pairs(lt, m, scan, c, k);
	free(c);
	for (size_t i = 0; i < nrec; i++)
		free(g[i].ev);
	free(g);
}

/* ---- the live blocks ----------------------------------------------------------------- */

static const struct stack *block_stack(const struct scan_result *scan, const struct hp_block *b)
{
	const struct join_opts *o = &scan->found.opts;

	if (b->version == 2)
		return site_stack(scan, b->site);
	if (o->region)		/* v1 blocks have no site, so no region */
		return NULL;
	return stacks_lookup(&scan->stacks, &(struct stack_key){ b->pcs ? b->pcs : no_pcs,
			     b->nframes, 0, o->by_thread ? b->tid : 0 });
}

/* Each live block's age, as ages.c measures it: from when the snapshot was taken where
 * the dump says, else from the newest live block of its format. */
static void ages(struct lifetimes *lt, struct lt_map *m, const struct image *img,
		 const struct scan_result *scan)
{
	struct decode_buf *buf = xmalloc(sizeof(*buf));
	uint64_t newest[3] = { 0 };
	struct decoded d;
	uint64_t ms;

	for (size_t i = 0; i < scan->list.n; i++)
		if (scan_block_decoded(img, &scan->list.v[i], buf, &d) &&
		    ages_block_ms(&d.block, &ms) && ms > newest[d.block.version])
			newest[d.block.version] = ms;
	lt->sum.newest_ms = newest[2];
	if (scan->join.now_from == NOW_TAKEN)
		newest[2] = scan->join.now_ms;
	for (size_t i = 0; i < scan->list.n; i++) {
		const struct stack *s;

		if (scan->list.v[i].out || !scan_block_decoded(img, &scan->list.v[i], buf, &d) ||
		    !ages_block_ms(&d.block, &ms))
			continue;
		lt->sum.aged++;
		if ((s = block_stack(scan, &d.block)))
			range_add(&life_of(lt, m, s)->age,
				  newest[d.block.version] > ms ? newest[d.block.version] - ms : 0);
	}
	free(buf);
}

void lifetimes_apply(const struct image *img, const struct scan_result *scan,
		     struct lifetimes *lt)
{
	struct lt_map m = { 0 };

	memset(lt, 0, sizeof(*lt));
	rings(lt, &m, img, scan);
	ages(lt, &m, img, scan);
	/* lookups go through a map of their own: keep the one built here */
	lt->map = m.slot;
	lt->map_cap = m.cap;
}

const struct report_life *lifetimes_of(const struct lifetimes *lt, const struct stack *s)
{
	size_t at;

	if (!lt || !lt->map_cap)
		return NULL;
	at = *map_find(lt, lt->map, lt->map_cap, s);
	return at ? &lt->v[at - 1].life : NULL;
}

void lifetimes_free(struct lifetimes *lt)
{
	free(lt->v);
	free(lt->map);
	memset(lt, 0, sizeof(*lt));
}

/* ---- text ------------------------------------------------------------------------ */

static void summary_text(const struct report *r, const void *data, FILE *f)
{
	const struct report_lifetimes *s = &((const struct lifetimes *)data)->sum;
	char a[32], b[32], c[32];

	(void)r;
	if (!s->rings)
		fputs("  lifetimes:  no event rings (HEAPPROF_EVENTS=N): live blocks' ages only\n",
		      f);
	else if (s->whole)
		fprintf(f, "  lifetimes:  event rings of %zu threads, every call since each "
			"thread's first, up to +%s\n", s->rings, fmt_span((uint64_t)s->end_ns, a));
	else
		fprintf(f, "  lifetimes:  event rings of %zu threads, window +%s to +%s (the span "
			"every ring covers)\n", s->rings, fmt_span((uint64_t)s->window_ns, a),
			fmt_span((uint64_t)s->end_ns, b));
	if (s->rings) {
		fprintf(f, "              %s calls made %s blocks and freed %s: ",
			fmt_thousands(s->calls, a), fmt_thousands(s->allocs, b),
			fmt_thousands(s->frees, c));
		fprintf(f, "%s with their allocation (%s by another thread), %s made before "
			"the window\n", fmt_thousands(s->paired, a),
			fmt_thousands(s->cross_thread, b), fmt_thousands(s->before, c));
		fprintf(f, "              %s temporary (freed by the thread's next call)\n",
			fmt_thousands(s->temporary, a));
	}
	fprintf(f, "              %s live blocks with a time, aged from the newest (+%s)\n",
		fmt_thousands(s->aged, a), fmt_span(s->newest_ms * 1000000, b));
}

static void stack_text(const struct report_stack *st, FILE *f)
{
	const struct report_life *l = &st->life;
	char a[32], b[32], c[32], n[32];

	if (!l->freed.n && !l->temporary && !l->age.n)
		return;
	fputs("  lifetimes:", f);
	if (l->freed.n)
		fprintf(f, " %s freed after %s on average (%s to %s)",
			fmt_thousands(l->freed.n, n), fmt_span(l->freed.sum / l->freed.n, a),
			fmt_span(l->freed.min, b), fmt_span(l->freed.max, c));
	if (l->temporary)
		fprintf(f, "%s %s temporary", l->freed.n ? "," : "",
			fmt_thousands(l->temporary, n));
	if (l->age.n)
		fprintf(f, "%s %s live aged %s on average (%s to %s)",
			l->freed.n || l->temporary ? ";" : "", fmt_thousands(l->age.n, n),
			fmt_span(l->age.sum / l->age.n * 1000000, a),
			fmt_span(l->age.min * 1000000, b), fmt_span(l->age.max * 1000000, c));
	fputc('\n', f);
}

/* ---- JSON ------------------------------------------------------------------------ */

static void summary_json(const struct report *r, const void *data, const struct report_out *o)
{
	const struct report_lifetimes *l = &((const struct lifetimes *)data)->sum;

	(void)r;
	fprintf(o->f, "  \"lifetimes\": {\"rings\": %zu, \"whole\": %s, \"window_ns\": %" PRId64
		", \"end_ns\": %" PRId64 ",\n    \"calls\": %" PRIu64 ", \"allocs\": %" PRIu64
		", \"frees\": %" PRIu64 ", \"paired\": %" PRIu64 ", \"cross_thread\": %" PRIu64
		", \"before\": %" PRIu64 ",\n    \"temporary\": %" PRIu64 ", \"no_site\": %"
		PRIu64 ", \"aged\": %" PRIu64 ", \"newest_ms\": %" PRIu64 "},\n", l->rings,
		l->whole ? "true" : "false", l->window_ns, l->end_ns, l->calls, l->allocs, l->frees,
		l->paired, l->cross_thread, l->before, l->temporary, l->no_site, l->aged,
		l->newest_ms);
}

/* A stack's lifetimes: means are left to the reader, so that every figure stays exact. */
static void stack_json(const struct report_stack *s, FILE *f)
{
	const struct report_life *l = &s->life;

	fprintf(f, ",\n     \"lifetime\": {\"freed\": %" PRIu64 ", \"freed_sum_ns\": %" PRIu64
		", \"freed_min_ns\": %" PRIu64 ", \"freed_max_ns\": %" PRIu64
		", \"temporary\": %" PRIu64 ",\n       \"aged\": %" PRIu64
		", \"age_sum_ms\": %" PRIu64 ", \"age_min_ms\": %" PRIu64
		", \"age_max_ms\": %" PRIu64 "}", l->freed.n, l->freed.sum, l->freed.min,
		l->freed.max, l->temporary, l->age.n, l->age.sum, l->age.min, l->age.max);
}

const struct section_ops lifetimes_section = {
	.name = "lifetimes", .gives = "lifetimes per stack", .text = summary_text,
	.json = summary_json, .stack_text = stack_text, .stack_json = stack_json,
};

/* ---- the row --------------------------------------------------------------------- */

static bool lifetimes_wanted(const struct options *o)
{
	return o->lifetimes;
}

/* report_build's hook: a shown stack's figures */
static void figures(const void *arg, const struct stack *s, struct report_stack *out)
{
	const struct report_life *l = lifetimes_of(arg, s);

	if (l)
		out->life = *l;
}

static void *lifetimes_run(struct session *s)
{
	struct lifetimes *lt = xcalloc(1, sizeof(*lt));

	lifetimes_apply(&s->img, &s->scan, lt);
	s->ro.stack_figures = figures;
	s->ro.stack_arg = lt;
	return lt;
}

static void lifetimes_release(void *state)
{
	lifetimes_free(state);
	free(state);
}

/* keyed by the stacks the report shows, after --older-than marked its blocks out */
const struct analysis lifetimes_analysis = {
	"lifetimes", IN_LIST | IN_MARKS | IN_STACKS, 0, 0, lifetimes_wanted, lifetimes_run,
	lifetimes_release, &lifetimes_section
};
