/*
 * The report for people: a summary, then each stack with its share of the metric, its
 * live bytes and blocks, the commonest sizes, its other figures (allocations, frees,
 * time) when the dump counted them, and one frame per line with file:line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "report.h"

#define SIZES_SHOWN 4

/* What the dump holds: live blocks, counts (exact or sampled), times, rings, regions. */
static void data_line(const struct report *r, FILE *f)
{
	char a[32];

	fputs("  data:       live blocks", f);
	if (r->have_counts && r->counts_sampled)
		fprintf(f, ", counts (estimates: sampled one per %s bytes)",
			fmt_thousands(r->counts_period, a));
	else if (r->have_counts)
		fputs(", counts (exact)", f);
	if (r->have_time)
		fputs(", times", f);
	if (r->nthreads)
		fprintf(f, ", %zu thread name%s", r->nthreads, r->nthreads == 1 ? "" : "s");
	if (r->nrings)
		fprintf(f, ", event rings of %zu threads", r->nrings);
	if (r->nregions) {
		fputs(", regions:", f);
		for (size_t i = 0; i < r->nregions; i++)
			fprintf(f, "%s %s", i ? "," : "", r->regions[i]);
	}
	fputc('\n', f);
}

static void counts_summary(const struct report *r, FILE *f)
{
	char a[32], b[32], c[32];
	const char *about = r->counts_sampled ? "about " : "";

	if (r->have_counts) {
		fprintf(f, "  allocated:  %s%s in %s calls (%s bytes)\n", about,
			fmt_bytes(r->alloc_bytes, a), fmt_thousands(r->alloc_calls, b),
			fmt_thousands(r->alloc_bytes, c));
		fprintf(f, "  freed:      %s%s in %s frees (%s bytes)\n", about,
			fmt_bytes(r->freed_bytes, a), fmt_thousands(r->frees, b),
			fmt_thousands(r->freed_bytes, c));
	}
	if (r->have_time)
		fprintf(f, "  time:       %s before allocation calls\n",
			fmt_seconds(r->time_ns, a));
	if (r->metric != METRIC_INUSE_SPACE || r->by_thread || r->region) {
		fprintf(f, "  metric:     %s", report_metric_name(r->metric));
		if (r->by_thread)
			fputs(", per thread", f);
		if (r->region)
			fprintf(f, ", region %s only", r->region);
		fputc('\n', f);
	}
}

/* The allocator's chunks with no heapprof header that are blocks here: said before
 * anything else is read into the figures. */
static void untagged_line(const struct report *r, FILE *f)
{
	char a[32], b[32];

	if (r->untagged_only)
		fprintf(f, "  untagged:   no heapprof blocks in %s: its %s in-use chunks of %s (%s "
			"bytes, usable sizes) are the blocks, with no stacks\n", r->source,
			fmt_thousands(r->untagged_blocks, a), r->allocator,
			fmt_thousands(r->untagged_bytes, b));
	else if (r->allocator)
		fprintf(f, "  untagged:   %s in-use chunks of %s (%s bytes, usable sizes) have no "
			"heapprof header: blocks under [untagged]\n",
			fmt_thousands(r->untagged_blocks, a), r->allocator,
			fmt_thousands(r->untagged_bytes, b));
}

/* A lean snapshot holds no heap: what it gives and what it cannot. */
static void lean_line(const struct report *r, FILE *f)
{
	char a[32];

	if (!r->lean_dumps)
		return;
	if (r->ndumps)
		fprintf(f, "  lean:       %zu of the %zu dumps are lean snapshots: heapprof's records "
			"and %s sampled blocks' headers, no heap contents\n", r->lean_dumps,
			r->ndumps, fmt_thousands(r->lean_headers, a));
	else
		fprintf(f, "  lean:       a lean snapshot: heapprof's records and %s sampled blocks' "
			"headers, no heap contents (no --leaks, --why, --memory, --by=type)\n",
			fmt_thousands(r->lean_headers, a));
}

static void summary(const struct report *r, FILE *f)
{
	char a[32], b[32], c[32];

	fprintf(f, "heapprof-analyze report\n");
	fprintf(f, "  program:    %s\n", r->program);
	fprintf(f, "  memory:     %s (%u-bit %s-endian)\n", r->source, r->wsize * 8,
		r->big_endian ? "big" : "little");
	lean_line(r, f);
	untagged_line(r, f);
	fprintf(f, "  live:       %s%s in %s blocks (%s bytes), %zu distinct stacks%s\n",
		r->sample_period ? "about " : "", fmt_bytes(r->live_bytes, a),
		fmt_thousands(r->live_blocks, b), fmt_thousands(r->live_bytes, c),
		r->live_stacks, r->saturated ? " (totals saturated)" : "");
	if (r->sample_period)
		fprintf(f, "  sampled:    one per %s bytes on average; figures are estimates\n",
			fmt_thousands(r->sample_period, a));
	counts_summary(r, f);
	if (r->unknown_blocks)
		fprintf(f, "  unknown:    %s blocks (%s bytes) have no readable stack record\n",
			fmt_thousands(r->unknown_blocks, a), fmt_thousands(r->unknown_bytes, b));
	fprintf(f, "  scanned:    %s in %zu segments", fmt_bytes(r->scanned_bytes, a),
		r->segments);
	if (r->missing_bytes)
		fprintf(f, "; %s not in the file (%u segments)",
			fmt_bytes(r->missing_bytes, b), r->missing_segs);
	fputc('\n', f);
	fprintf(f, "  rejected:   %llu headers\n", (unsigned long long)r->rejected_total);
	for (int i = 0; i < REJ_NREASONS; i++)
		if (r->rejected[i].n)
			fprintf(f, "              %llu %s\n", (unsigned long long)r->rejected[i].n,
				r->rejected[i].reason);
	if (r->damaged)
		fprintf(f, "              %llu damaged block headers (bad check value)\n",
			(unsigned long long)r->damaged);
	fprintf(f, "  symbols:    %s\n", r->modules);
	data_line(r, f);
	if (r->peak) {
		char line[256];

		report_peak_line(r->peak, line, sizeof(line));
		fprintf(f, "  peak:       %s\n", line);
	}
	if (r->view_note)
		fprintf(f, "  view:       %s\n", r->view_note);
	for (size_t i = 0; i < r->nsections; i++)
		if (r->sections[i].ops->text)
			r->sections[i].ops->text(r, r->sections[i].data, f);
}

static void sizes(const struct report *r, const struct report_stack *s, FILE *f)
{
	char a[32];

	/* sampled: counts are estimated blocks, as the heading's are */
	fputs(r->sample_period ? "  sizes (about):" : "  sizes:", f);
	for (size_t i = 0; i < s->nsizes && i < SIZES_SHOWN; i++)
		fprintf(f, "%s %s x%llu", i ? "," : "", fmt_thousands(s->sizes[i].size, a),
			(unsigned long long)s->sizes[i].count);
	if (s->nsizes > SIZES_SHOWN)
		fprintf(f, " (+%zu more sizes)", s->nsizes - SIZES_SHOWN);
	fputc('\n', f);
}

static void frame(const struct report *r, const struct report_frame *fr, FILE *f)
{
	char buf[512];

	fprintf(f, "    0x%0*" PRIx64 "  ", r->wsize * 2, fr->pc);
	fputs(report_frame_name(fr, buf, sizeof(buf)), f);
	report_write_frame_place(fr, f);
	fputc('\n', f);
}

/* A stack's heading after "#N  P%  ": its metric first. */
static void heading(const struct report *r, const struct report_stack *s, FILE *f)
{
	char a[32], b[32], c[32];

	switch (r->metric) {
	case METRIC_INUSE_OBJECTS:
		fprintf(f, "%s blocks (%s bytes) live", fmt_thousands(s->blocks, a),
			fmt_thousands(s->bytes, b));
		break;
	case METRIC_ALLOC_SPACE:
		fprintf(f, "%s bytes allocated in %s calls", fmt_thousands(s->alloc_bytes, a),
			fmt_thousands(s->alloc_calls, b));
		break;
	case METRIC_ALLOC_OBJECTS:
		fprintf(f, "%s allocation calls (%s bytes)", fmt_thousands(s->alloc_calls, a),
			fmt_thousands(s->alloc_bytes, b));
		break;
	case METRIC_RETAINED_SPACE:
		fprintf(f, "%s bytes retained, live %s bytes in %s blocks",
			fmt_thousands(s->retained, a), fmt_thousands(s->bytes, b),
			fmt_thousands(s->blocks, c));
		break;
	case METRIC_ALLOC_TIME:
		fprintf(f, "%s before %s calls", fmt_seconds(s->time_ns, a),
			fmt_thousands(s->alloc_calls, b));
		break;
	default:
		fprintf(f, "%s bytes in %s blocks", fmt_thousands(s->bytes, a),
			fmt_thousands(s->blocks, b));
		break;
	}
}

/* The figures beside the metric: live, allocated, freed, time. */
static void others(const struct report *r, const struct report_stack *s, FILE *f)
{
	char a[32], b[32];

	if (s->tid || s->thread_name)
		fprintf(f, "  thread:   %lu%s%s\n", (unsigned long)s->tid, s->thread_name ? " " : "",
			s->thread_name ? s->thread_name : "");
	/* regrouped stacks (--leaks) carry no counters: the summary has the dump's */
	if (!r->have_counts || r->regrouped)
		return;
	fprintf(f, "  live %s bytes in %s blocks", fmt_thousands(s->bytes, a),
		fmt_thousands(s->blocks, b));
	fprintf(f, "; allocated %s bytes in %s calls", fmt_thousands(s->alloc_bytes, a),
		fmt_thousands(s->alloc_calls, b));
	fprintf(f, "; freed %s bytes in %s frees", fmt_thousands(s->freed_bytes, a),
		fmt_thousands(s->frees, b));
	if (r->have_time)
		fprintf(f, "; time %s", fmt_seconds(s->time_ns, a));
	fputc('\n', f);
}

/* The line a stack with no frames to show, or the peak table's overflow, stands under. */
static void mark_line(const struct report *r, const struct report_stack *s, FILE *f)
{
	char buf[96];

	if (s->flags & STACK_OVERFLOW)
		fprintf(f, "    %s\n", report_overflow_mark(r->peak, buf, sizeof(buf)));
	else if (s->flags & STACK_UNKNOWN)
		fputs("    [unknown stack: no readable stack record]\n", f);
	else if (s->flags & STACK_UNTAGGED)
		fputs("    [untagged: an allocator's chunk with no heapprof header]\n", f);
	else if (!s->nframes)
		fputs("    [no stack: allocated before heapprof was ready]\n", f);
}

/* --base: NEW - OLD, growth first */
static int write_diff(const struct report *r, FILE *f)
{
	char a[32], b[32], c[32], d[32];
	int64_t db = (int64_t)(r->live_bytes - r->base_live_bytes);
	int64_t dn = (int64_t)(r->live_blocks - r->base_live_blocks);

	/* --peak-diff compares one dump with itself: its sides are the peak and now */
	const char *nw = r->peak ? "peak:  " : "new:   ", *od = r->peak ? "now:   " : "old:   ";

	fprintf(f, "heapprof-analyze difference report (%s)\n", r->peak ? "PEAK - NOW" : "NEW - OLD");
	fprintf(f, "  program:    %s\n", r->program);
	fprintf(f, "  %s     %s: %s bytes in %s blocks\n", nw, r->source,
		fmt_thousands(r->live_bytes, a), fmt_thousands(r->live_blocks, b));
	fprintf(f, "  %s     %s: %s bytes in %s blocks\n", od, r->base_source,
		fmt_thousands(r->base_live_bytes, c), fmt_thousands(r->base_live_blocks, d));
	fprintf(f, "  change:     %s bytes, %s blocks; %zu stacks changed\n",
		fmt_signed_thousands(db, a), fmt_signed_thousands(dn, b), r->all_stacks);
	if (r->sample_period)
		fprintf(f, "  sampled:    figures are estimates\n");
	if (r->view_note)
		fprintf(f, "  view:       %s\n", r->view_note);
	fprintf(f, "  matched by: module file name and offset (function name where a "
		"module's build-id differs)\n");
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct report_stack *s = &r->stacks[i];
		char buf[512];

		fprintf(f, "\n#%zu  %s bytes  %s blocks\n", i + 1,
			fmt_signed_thousands((int64_t)s->bytes, a), fmt_signed_thousands((int64_t)s->blocks, b));
		mark_line(r, s, f);
		for (unsigned j = 0; j < s->nframes; j++) {
			const struct report_frame *fr = &s->frames[j];

			fprintf(f, "    %s", report_frame_name(fr, buf, sizeof(buf)));
			report_write_frame_place(fr, f);
			fputc('\n', f);
		}
		if (s->flags & STACK_TRUNCATED)
			fprintf(f, "    (stack cut at %u frames)\n", s->recorded_frames);
	}
	if (r->nstacks < r->all_stacks)
		fprintf(f, "\n%zu more stacks changed by %s bytes, %s blocks (--top=0 shows all)\n",
			r->all_stacks - r->nstacks, fmt_signed_thousands((int64_t)r->rest_bytes, a),
			fmt_signed_thousands((int64_t)r->rest_blocks, b));
	return ferror(f) ? -1 : 0;
}

static int write_text(const struct report *r, FILE *f)
{
	const struct report_section *alone = report_alone(r);
	char a[32], b[32];

	if (alone) {
		untagged_line(r, f);
		alone->ops->text(r, alone->data, f);
		return ferror(f) ? -1 : 0;
	}
	if (r->diff)
		return write_diff(r, f);
	summary(r, f);
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct report_stack *s = &r->stacks[i];
		double pct = r->total ? 100.0 * (double)s->value / (double)r->total : 0;

		fprintf(f, "\n#%zu  %.1f%%  ", i + 1, pct);
		heading(r, s, f);
		if (s->nsizes && (r->metric == METRIC_INUSE_SPACE || r->metric == METRIC_INUSE_OBJECTS))
			sizes(r, s, f);
		else
			fputc('\n', f);
		if (report_stack_class(r, s))
			fprintf(f, "    are %s\n", report_stack_class(r, s));
		others(r, s, f);
		for (size_t k = 0; k < r->nsections; k++)
			if (r->sections[k].ops->stack_text)
				r->sections[k].ops->stack_text(s, f);
		mark_line(r, s, f);
		for (unsigned j = 0; j < s->nframes; j++)
			frame(r, &s->frames[j], f);
		if (s->flags & STACK_TRUNCATED)
			fprintf(f, "    (stack cut at %u frames)\n", s->recorded_frames);
	}
	if (r->nstacks < r->all_stacks && r->metric == METRIC_INUSE_SPACE)
		fprintf(f, "\n%zu more stacks hold %s bytes in %s blocks (--top=0 --min-percent=0 shows all)\n",
			r->all_stacks - r->nstacks, fmt_thousands(r->rest_bytes, a),
			fmt_thousands(r->rest_blocks, b));
	else if (r->nstacks < r->all_stacks)
		fprintf(f, "\n%zu more stacks hold %s of %s (--top=0 --min-percent=0 shows all)\n",
			r->all_stacks - r->nstacks, fmt_thousands(r->rest_value, a),
			report_metric_name(r->metric));
	return ferror(f) ? -1 : 0;
}

const struct out_format out_text = { "text", write_text,
				     OUT_SIGNED | OUT_SIZES | OUT_SUMMARY, SYNTAX_TEXT };
