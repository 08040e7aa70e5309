/*
 * Memory over time (timeline.h): pick the whole timeline and peak table records a
 * scan found, read their samples and entries through the image, check them, and turn
 * them into report values; text --timeline draws the samples as a chart.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "fmt.h"
#include "image.h"
#include "rd.h"
#include "timeline.h"
#include "util.h"

#define CHUNK_WORDS 1024	/* words read at once */

/* n words at addr into w, in the target's byte order; false if any is absent. */
static bool read_words(const struct image *img, uint64_t addr, uint64_t *w, size_t n)
{
	unsigned char raw[CHUNK_WORDS * 8];

	for (size_t done = 0; done < n;) {
		size_t k = n - done < CHUNK_WORDS ? n - done : CHUNK_WORDS;
		uint64_t at = addr + done * 8;
		struct rd r = { raw, k * 8, img->big_endian };

		if (at < addr || !image_read(img, at, raw, k * 8))
			return false;
		for (size_t i = 0; i < k; i++)
			rd_u64(&r, &w[done + i]);
		done += k;
	}
	return true;
}

/* A count in the sites' units to blocks or calls: 1/HP2_COUNT_ONE when sampled. */
static uint64_t units(int64_t v, bool sampled)
{
	if (v <= 0)
		return 0;
	return sampled ? ((uint64_t)v + HP2_COUNT_ONE / 2) / HP2_COUNT_ONE : (uint64_t)v;
}

/* The live bytes and blocks of scan's stacks as they are now. */
static void now_of(const struct scan_result *scan, uint64_t *bytes, uint64_t *blocks)
{
	size_t n;
	struct stack **all = stacks_list(&scan->stacks, &n);

	*bytes = *blocks = 0;
	for (size_t i = 0; i < n; i++) {
		if (__builtin_add_overflow(*bytes, stack_bytes(all[i]), bytes))
			*bytes = UINT64_MAX;
		if (__builtin_add_overflow(*blocks, stack_blocks(all[i]), blocks))
			*blocks = UINT64_MAX;
	}
	free(all);
}

/* The samples of rec, checked: in the dump, times never go back. NULL (with a warning)
 * if not. */
static struct report_sample *read_samples(const struct hp_timeline_rec *rec,
					  const struct image *img, bool sampled)
{
	size_t n = (size_t)rec->held, words = n * HP2_SAMPLE_WORDS;
	uint64_t *w;
	struct report_sample *v;
	const char *why = NULL;

	if (!image_has(img, rec->addr + HP2_TIMELINE_WORDS * 8, words * 8)) {
		warn("timeline at 0x%" PRIx64 " skipped: cut off at an edge of the memory image",
		     rec->addr);
		return NULL;
	}
	w = xmalloc(words * sizeof(*w));
	v = xcalloc(n + 1, sizeof(*v));
	if (!read_words(img, rec->addr + HP2_TIMELINE_WORDS * 8, w, words))
		why = "cut off at an edge of the memory image";
	for (size_t i = 0; !why && i < n; i++) {
		const uint64_t *s = w + i * HP2_SAMPLE_WORDS;

		if (i && s[0] < w[(i - 1) * HP2_SAMPLE_WORDS])
			why = "its sample times go back";
		v[i] = (struct report_sample){ (double)s[0] / 1000, units((int64_t)s[1], false),
					       units((int64_t)s[2], sampled),
					       units((int64_t)s[3], sampled), s[4] };
	}
	free(w);
	if (why) {
		warn("timeline at 0x%" PRIx64 " skipped: %s", rec->addr, why);
		free(v);
		return NULL;
	}
	return v;
}

/*
 * The snapshot's time since the process start into *time_s, if the image has it (a
 * heapprof snapshot's time note) and it is no earlier than *time_s, the newest time
 * the dump's records show: a note that says otherwise is not this process's (a warning).
 * Else false: *time_s stays the newest the dump shows. Not the join's now (join_info's
 * now_ms): that one is whole ms, weighed against the newest block alone; this one keeps
 * the note's ns and is weighed against the timeline's samples too, within 1 ms.
 */
static bool taken_at(const struct scan_result *scan, const struct image *img, double *time_s)
{
	uint64_t start = scan->join.proc.start_mono_ns, at = img->taken_mono_ns;

	if (!at || !scan->join.have_proc)
		return false;
	if (at < start || (double)(at - start) / 1e9 < *time_s - 0.001) {
		warn("snapshot time note left out: it says %.3f s, before the newest time "
		     "its records show (%.3f s)", at < start ? -(double)(start - at) / 1e9 :
		     (double)(at - start) / 1e9, *time_s);
		return false;
	}
	if ((double)(at - start) / 1e9 > *time_s)
		*time_s = (double)(at - start) / 1e9;
	return true;
}

void timeline_read(struct timeline_data *t, const struct report *r,
		   const struct scan_result *scan, const struct image *img)
{
	size_t n;
	const struct decoded *rec = collect_records(&scan->found, DEC_TIMELINE, &n);
	const struct hp_timeline_rec *tl = NULL;
	struct report_sample *last;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n && !tl; i++)
		if (!(rec[i].timeline.writes & 1) && rec[i].timeline.held >= 1 &&
		    rec[i].timeline.held <= rec[i].timeline.n)
			tl = &rec[i].timeline;
	if (!tl) {
		if (n)
			warn("timeline at 0x%" PRIx64 " skipped: it was being written, or holds "
			     "more samples than it has room for", rec[0].timeline.addr);
		return;
	}
	if (!(t->v = read_samples(tl, img, scan->join.sampled_counts)))
		return;
	t->n = (size_t)tl->held + 1;
	/* the state at the snapshot, at its time */
	last = &t->v[t->n - 1];
	last->time_s = t->v[t->n - 2].time_s;
	if ((double)scan->found.newest_ms / 1000 > last->time_s)
		last->time_s = (double)scan->found.newest_ms / 1000;
	t->taken = taken_at(scan, img, &last->time_s);
	now_of(scan, &last->live_bytes, &last->live_blocks);
	last->alloc_calls = r->alloc_calls;
	last->alloc_bytes = r->alloc_bytes;
}

/* The newest whole peak table written before the one of writes below (UINT64_MAX:
 * the newest of all), or NULL. */
static const struct hp_peak_rec *newest_peak(const struct scan_result *scan, uint64_t below)
{
	size_t n;
	const struct decoded *rec = collect_records(&scan->found, DEC_PEAK, &n);
	const struct hp_peak_rec *best = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct hp_peak_rec *p = &rec[i].peak;

		if (p->writes && !(p->writes & 1) && p->used <= p->n && p->writes < below &&
		    (!best || p->writes > best->writes))
			best = p;
	}
	return best;
}

/*
 * What each stack's sites in the dump ever allocated, by stack id: no peak can have
 * held more of a stack than that (its counters only grow; frees only take away).
 * Sorted by id; a site id read twice counts once, with its larger counters.
 */
struct peak_bound {
	uint32_t stack;
	uint64_t calls, bytes;
};

static void add_sat(uint64_t *to, uint64_t v)
{
	if (__builtin_add_overflow(*to, v, to))
		*to = UINT64_MAX;
}

static int bound_cmp(const void *x, const void *y)
{
	const struct peak_bound *a = x, *b = y;

	return (a->stack > b->stack) - (a->stack < b->stack);
}

static struct peak_bound *site_bounds(const struct scan_result *scan, size_t *nb,
				      struct peak_bound *all)
{
	size_t n, m = 0;
	const struct decoded *rec = collect_records(&scan->found, DEC_SITE, &n);
	struct peak_bound *b = xmalloc((n ? n : 1) * sizeof(*b));

	*all = (struct peak_bound){ 0 };
	for (size_t i = 0; i < n; i++) {
		const struct decoded_site *s = &rec[i].site;
		struct peak_bound x = { s->stack, s->counts.calls, s->counts.bytes };

		if (i && s->id == rec[i - 1].site.id) {	/* another copy of the same site */
			struct peak_bound *last = &b[m - 1];

			last->calls = x.calls > last->calls ? x.calls : last->calls;
			last->bytes = x.bytes > last->bytes ? x.bytes : last->bytes;
			continue;
		}
		b[m++] = x;
	}
	qsort(b, m, sizeof(*b), bound_cmp);
	*nb = 0;
	for (size_t i = 0; i < m; i++) {
		add_sat(&all->calls, b[i].calls);
		add_sat(&all->bytes, b[i].bytes);
		if (*nb && b[*nb - 1].stack == b[i].stack) {
			add_sat(&b[*nb - 1].calls, b[i].calls);
			add_sat(&b[*nb - 1].bytes, b[i].bytes);
		} else {
			b[(*nb)++] = b[i];
		}
	}
	return b;
}

/* The bound of stack id (0, the stacks that did not fit: all of them together). */
static const struct peak_bound *bound_of(const struct peak_bound *b, size_t nb,
					 const struct peak_bound *all, uint32_t id)
{
	size_t lo = 0, hi = nb;

	if (!id)
		return all;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b[mid].stack < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nb && b[lo].stack == id ? &b[lo] : NULL;
}

/* Do the entries add up to the table's totals (no sum past 64 bits)? */
static bool peak_adds_up(const struct hp_peak_rec *p, const uint64_t *e, size_t words)
{
	int64_t bytes = 0, blocks = 0;

	for (size_t i = 0; i < words; i += HP2_PEAK_ENTRY_WORDS)
		if (__builtin_add_overflow(bytes, (int64_t)e[i + 1], &bytes) ||
		    __builtin_add_overflow(blocks, (int64_t)e[i + 2], &blocks))
			return false;
	return bytes == (int64_t)p->bytes && blocks == (int64_t)p->blocks;
}

/*
 * The peak's entries into a fresh table of stacks; false if they are not all in the
 * dump or do not add up. An entry that claims more bytes or blocks than its stack's
 * sites ever allocated is left out, with one warning for all of them.
 */
static bool peak_stacks(const struct hp_peak_rec *p, const struct scan_result *scan,
			const struct image *img, const struct join_opts *opts,
			struct stacks *out, struct report_peak *sum)
{
	static const uint64_t no_pcs[1];
	size_t words = (size_t)p->used * HP2_PEAK_ENTRY_WORDS, nb, over = 0;
	uint64_t *e;
	struct peak_bound *b, all;
	bool sampled = scan->join.sampled_counts;

	if (!image_has(img, p->addr + HP2_PEAK_WORDS * 8, (uint64_t)words * 8))
		return false;	/* room only for what the dump holds */
	e = xmalloc((words ? words : 1) * sizeof(*e));
	if (!read_words(img, p->addr + HP2_PEAK_WORDS * 8, e, words) ||
	    !peak_adds_up(p, e, words)) {
		free(e);
		return false;
	}
	b = site_bounds(scan, &nb, &all);
	stacks_init(out);
	for (size_t i = 0; i < words; i += HP2_PEAK_ENTRY_WORDS) {
		uint32_t id = (uint32_t)e[i];
		const struct decoded_stack *k = id ? collect_stack(&scan->found, id) : NULL;
		const struct peak_bound *bd = bound_of(b, nb, &all, id);
		struct stack_key key = { no_pcs, 0, STACK_UNKNOWN, 0 };
		struct stack_add a = { .bytes = units((int64_t)e[i + 1], false),
				       .blocks = units((int64_t)e[i + 2], sampled) };

		if (opts->region && (e[i] >> 48) != scan->join.region_id)
			continue;
		if ((int64_t)e[i + 1] > 0 && (!bd || e[i + 1] > bd->bytes)) {
			over++;
			continue;
		}
		if ((int64_t)e[i + 2] > 0 && (!bd || e[i + 2] > bd->calls)) {
			over++;
			continue;
		}
		if (k)
			key = (struct stack_key){ k->pcs, k->nframes,
						  k->flags & HP2_STACK_TRUNCATED ? STACK_TRUNCATED : 0,
						  0 };
		else if (!id) {	/* the stacks past the table's room, summed */
			key.flags = STACK_OVERFLOW;
			sum->overflow_stacks = p->overflow;
			sum->overflow_bytes = a.bytes;
		}
		stacks_add_group(out, &key, &a);
		add_sat(&sum->bytes, a.bytes);
		add_sat(&sum->blocks, a.blocks);
	}
	if (over)
		warn("peak table at 0x%" PRIx64 ": %zu of its entries left out: each claims more "
		     "bytes or blocks than its stack's sites in the dump ever allocated", p->addr,
		     over);
	free(b);
	free(e);
	return true;
}

/* The counters so far of scan's stacks into fresh, so that the peak's stacks show them
 * beside their bytes at the peak (a stack with none at the peak is not shown). */
static void carry_counts(const struct scan_result *scan, struct stacks *fresh)
{
	size_t n;
	struct stack **all = stacks_list(&scan->stacks, &n);

	for (size_t i = 0; i < n; i++) {
		struct stack_key key = { all[i]->pcs, all[i]->nframes, all[i]->flags, 0 };
		struct stack_add a = { .counts = all[i]->counts };

		stacks_add_group(fresh, &key, &a);
	}
	free(all);
}

bool timeline_peak_apply(struct timeline_data *t, struct scan_result *scan,
			 const struct image *img, const struct join_opts *opts, const char **why)
{
	const struct hp_peak_rec *p = newest_peak(scan, UINT64_MAX);
	struct report_peak sum = { 0 };
	struct stacks fresh;

	if (!p) {
		*why = "holds no peak table (a heapprof.so before peak tables, "
		       "HEAPPROF_PEAK_STEP=0, or live memory never passed the step)";
		return false;
	}
	/* the newest may be damaged: the one before it is a peak too, if a lower one */
	while (!peak_stacks(p, scan, img, opts, &fresh, &sum)) {
		warn("peak table at 0x%" PRIx64 " skipped: cut off, or its entries do not add "
		     "up to its total", p->addr);
		memset(&sum, 0, sizeof(sum));
		if (!(p = newest_peak(scan, p->writes))) {
			*why = "holds no whole peak table";
			return false;
		}
	}
	now_of(scan, &sum.now_bytes, &sum.now_blocks);
	sum.time_s = sum.table_time_s = (double)p->ms / 1000;
	sum.table_bytes = sum.bytes;
	sum.table_blocks = sum.blocks;
	sum.step = p->step;
	if (sum.now_bytes > sum.bytes) {
		/* memory grew past the table by less than the step: now is the highest
		 * point the dump shows, its stacks as they are */
		stacks_free(&fresh);
		sum.from_now = true;
		sum.bytes = sum.now_bytes;
		sum.blocks = sum.now_blocks;
		sum.time_s = (double)scan->found.newest_ms / 1000;
		if (t->n)
			sum.time_s = t->v[t->n - 1].time_s;
		else
			taken_at(scan, img, &sum.time_s);
	} else {
		carry_counts(scan, &fresh);
		stacks_free(&scan->stacks);
		scan->stacks = fresh;
	}
	t->peak = sum;
	t->have_peak = true;
	return true;
}

void timeline_attach(struct report *r, const struct timeline_data *t)
{
	r->timeline = t->v;
	r->ntimeline = t->n;
	r->timeline_peak = 0;
	for (size_t i = 1; i < t->n; i++)
		if (t->v[i].live_bytes > t->v[r->timeline_peak].live_bytes)
			r->timeline_peak = i;
	r->peak = t->have_peak ? &t->peak : NULL;
	r->timeline_taken = t->taken;
}

void timeline_free(struct timeline_data *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* ---- text --timeline ------------------------------------------------------------ */

#define CHART_W 64
#define CHART_H 8
#define TABLE_ROWS 16	/* a longer timeline's table shows about a dozen samples */

/* Each column: the most live bytes of the samples in its slice of time, or the last
 * sample's before it (memory stays until the next sample says otherwise). */
static void columns(const struct report *r, uint64_t *col, unsigned w, int *peak_col)
{
	double end = r->timeline[r->ntimeline - 1].time_s;
	size_t j = 0;
	uint64_t carry = 0;

	for (unsigned c = 0; c < w; c++) {
		double hi = end * (c + 1) / w;
		bool any = false;

		col[c] = carry;
		for (; j < r->ntimeline && (r->timeline[j].time_s <= hi || c == w - 1); j++) {
			if (!any || r->timeline[j].live_bytes > col[c])
				col[c] = r->timeline[j].live_bytes;
			any = true;
			carry = r->timeline[j].live_bytes;
			if (j == r->timeline_peak)
				*peak_col = (int)c;
		}
	}
}

static void table(const struct report *r, bool all, FILE *f)
{
	/* a timeline holds up to 1,024 samples: a dozen evenly spaced, the highest and the
	 * snapshot tell its course; --timeline=all lists them */
	size_t step = all || r->ntimeline <= TABLE_ROWS ? 1 : (r->ntimeline + 9) / 10, shown = 0;

	for (size_t i = 0; i < r->ntimeline; i++)
		shown += i % step == 0 || i == r->timeline_peak || i == r->ntimeline - 1;
	if (shown < r->ntimeline)
		fprintf(f, "%zu of %zu samples (--timeline=all lists every one):\n", shown,
			r->ntimeline);
	fprintf(f, "%10s %16s %12s %12s %16s\n", "time_s", "live_bytes", "live_blocks",
		"alloc_calls", "alloc_bytes");
	for (size_t i = 0; i < r->ntimeline; i++) {
		const struct report_sample *s = &r->timeline[i];

		if (i % step && i != r->timeline_peak && i != r->ntimeline - 1)
			continue;
		fprintf(f, "%10.3f %16" PRIu64 " %12" PRIu64 " %12" PRIu64 " %16" PRIu64 "%s\n",
			s->time_s, s->live_bytes, s->live_blocks, s->alloc_calls, s->alloc_bytes,
			i == r->ntimeline - 1 ? "  now" : i == r->timeline_peak ? "  peak" : "");
	}
}

static void timeline_text(const struct report *r, const void *data, FILE *f)
{
	const struct timeline_data *t = data;
	static const char *const eighth[9] = { " ", "\u2581", "\u2582", "\u2583", "\u2584",
					       "\u2585", "\u2586", "\u2587", "\u2588" };
	uint64_t col[CHART_W], top;
	unsigned w;
	int peak_col = 0;
	char a[32], b[32];

	if (!t->chart)
		return;
	if (!r->ntimeline) {
		fputs("\ntimeline: none in this dump (a heapprof.so before timelines, or "
		      "HEAPPROF_TIMELINE=0)\n", f);
		return;
	}
	/* columns are slices of time: a snapshot at 0 s has one */
	w = r->timeline[r->ntimeline - 1].time_s > 0 ? CHART_W : 1;
	top = r->timeline[r->timeline_peak].live_bytes;
	columns(r, col, w, &peak_col);
	fprintf(f, "\ntimeline: %zu samples over %.3f s; highest %s at %.3f s, now %s\n",
		r->ntimeline, r->timeline[r->ntimeline - 1].time_s, fmt_bytes(top, a),
		r->timeline[r->timeline_peak].time_s,
		fmt_bytes(r->timeline[r->ntimeline - 1].live_bytes, b));
	for (int row = CHART_H - 1; row >= 0; row--) {
		fprintf(f, "%10s |", row == CHART_H - 1 ? fmt_bytes(top, a) :
				      row == 0 ? "0" : "");
		for (unsigned c = 0; c < w; c++) {
			/* eighths of a row filled: the column's height is col / top rows */
			uint64_t e = top ? col[c] * CHART_H * 8 / top : 0;
			int64_t fill = (int64_t)e - row * 8;

			fputs(eighth[fill <= 0 ? 0 : fill >= 8 ? 8 : fill], f);
		}
		fputc('\n', f);
	}
	fprintf(f, "%10s +", "");
	for (unsigned c = 0; c < w; c++)
		fputc('-', f);
	fprintf(f, "\n%10s  ", "");
	for (unsigned c = 0; c < w; c++)
		fputc((int)c == peak_col ? '^' : c == w - 1 ? '|' : ' ', f);
	fprintf(f, "\n%10s  0 s to %.3f s; ^ the highest sample, | %s\n\n", "",
		r->timeline[r->ntimeline - 1].time_s, r->timeline_taken ? "the snapshot" :
		"now, the newest time the dump shows (no snapshot time in it)");
	table(r, t->all, f);
}

/* text: drawn with --timeline, after the other sections; the JSON report and the
 * page hold the timeline always, as part of the report */
const struct section_ops timeline_section = {
	.name = "timeline", .text = timeline_text,
};

/* ---- the row --------------------------------------------------------------------- */

static bool timeline_wanted(const struct options *o)
{
	(void)o;
	return true;	/* every format that holds a timeline shows it */
}

/* The timeline, and with --peak the peak table in place of the blocks found. */
static void *timeline_run(struct session *s)
{
	struct timeline_data *t = xmalloc(sizeof(*t));
	const char *why;

	timeline_read(t, &s->r, &s->scan, &s->img);
	t->chart = s->o->timeline;
	t->all = s->o->timeline_all;
	if (s->o->timeline && !t->n)
		warn("'%s' holds no timeline (a heapprof.so before timelines, or "
		     "HEAPPROF_TIMELINE=0)", s->source);
	if (s->o->peak && !timeline_peak_apply(t, &s->scan, &s->img, &s->o->join, &why))
		die(EXIT_NO_REPORT, "'%s' %s", s->source, why);
	timeline_attach(&s->r, t);
	return t;
}

static void timeline_release(void *state)
{
	timeline_free(state);
	free(state);
}

/* the sums' now is the joined stacks'; with --peak the stacks are the peak's */
const struct analysis timeline_analysis = {
	"timeline", IN_COUNTERS | IN_SUMS, IN_STACKS, IN_COUNTERS, timeline_wanted, timeline_run,
	timeline_release, &timeline_section
};
