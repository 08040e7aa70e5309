/*
 * The event rings of a report (--events): each thread's last calls, oldest first, with
 * their time since the process start and the site's innermost function (or its whole
 * stack). Decoding the slots is decode.c's; this file only arranges them.
 */
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "image.h"
#include "report_int.h"
#include "sym.h"
#include "util.h"

/* How many arguments a call of entry has, and whether its result is a pointer. */
static void shape(struct report_event *e, unsigned entry)
{
	switch (entry) {
	case HP2_ENTRY_CALLOC:
	case HP2_ENTRY_REALLOC:
	case HP2_ENTRY_REALLOCARRAY:
	case HP2_ENTRY_POSIX_MEMALIGN:
	case HP2_ENTRY_ALIGNED_ALLOC:
	case HP2_ENTRY_MEMALIGN: e->nargs = 2; break;
	default: e->nargs = 1; break;
	}
	e->arg0_is_pointer = entry == HP2_ENTRY_REALLOC || entry == HP2_ENTRY_REALLOCARRAY ||
			     entry == HP2_ENTRY_FREE;
	e->has_result = entry != HP2_ENTRY_FREE;
	/* posix_memalign stores the pointer on success and returns an errno: a small number */
	e->result_is_pointer = entry != HP2_ENTRY_FREE &&
			       !(entry == HP2_ENTRY_POSIX_MEMALIGN && e->result < 4096);
}

static void one_event(struct report_event *e, const struct hp_event *h, struct report *r,
		      const struct scan_result *scan, struct sym *sym, const struct report_opts *o)
{
	const struct join_info *j = &scan->join;
	bool is_free = h->entry == HP2_ENTRY_FREE;
	/* a free shows its own stack (s2), not that of the block's site, which made it */
	uint32_t stack = is_free ? (uint32_t)h->arg[1] : 0;
	const struct decoded_stack *k = is_free ? (stack ? collect_stack(&scan->found, stack) : NULL) :
				       h->site ? collect_site_stack(&scan->found, h->site) : NULL;
	char buf[24];

	snprintf(e->entry, sizeof(e->entry), "%s", decode_entry_name(h->entry, buf, sizeof(buf)));
	e->arg[0] = h->arg[0];
	e->arg[1] = h->arg[1];
	e->result = h->result;
	e->seq = h->seq;
	e->site = is_free ? 0 : h->site;
	e->time_ns = j->have_proc ? (int64_t)(h->mono_ns - j->proc.start_mono_ns) : 0;
	shape(e, h->entry);
	if (!k || !k->nframes)
		return;
	if (o->event_stacks) {
		e->frames = report_symbolize(r, k->pcs, k->nframes, sym, o->short_names, &e->nframes);
		e->func = e->nframes ? e->frames[0].func : NULL;
	} else {
		unsigned n;
		struct report_frame *f = report_symbolize(r, k->pcs, 1, sym, o->short_names, &n);

		/* names live as long as sym: the frame array itself can go */
		e->func = n ? f[0].func : NULL;
		free(f);
	}
}

void report_build_events(struct report *r, const struct scan_result *scan,
			 const struct image *img, struct sym *sym, const struct report_opts *o)
{
	const struct decode_src src = { img, NULL };
	size_t n;
	const struct decoded *rec = collect_records(&scan->found, DEC_RING, &n);
	struct report_ring *rings = xcalloc(n ? n : 1, sizeof(*rings));
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct hp_ring_rec *g = &rec[i].ring;
		size_t max = g->n, got;
		struct hp_event *h = xmalloc(max * sizeof(*h));
		struct report_event *e;

		got = decode_ring_events(&src, g, h, max);
		e = xcalloc(got ? got : 1, sizeof(*e));
		for (size_t m = 0; m < got; m++)
			one_event(&e[m], &h[m], r, scan, sym, o);
		free(h);
		rings[k++] = (struct report_ring){ .tid = g->tid,
			.thread_name = collect_thread_name(&scan->found, g->tid),
			.slots = g->n, .written = g->written, .events = e, .nevents = got };
	}
	r->rings = rings;
	r->nrings = k;
}

void report_free_events(struct report *r)
{
	for (size_t i = 0; r->rings && i < r->nrings; i++) {
		for (size_t m = 0; m < r->rings[i].nevents; m++)
			free((void *)r->rings[i].events[m].frames);
		free((void *)r->rings[i].events);
	}
	free((void *)r->rings);
	r->rings = NULL;
}
