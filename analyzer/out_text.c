/*
 * The report for people: a summary, then each stack with its share of the metric, its
 * live bytes and blocks, the commonest sizes, its other figures (allocations, frees,
 * time) when the dump counted them, and one frame per line with file:line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ages.h"
#include "leaks.h"
#include "lifetimes.h"
#include "memory.h"
#include "report.h"
#include "timeline.h"
#include "views.h"

#define SIZES_SHOWN 4

/* 1536 -> "1.5 KiB"; below 1 KiB the exact count. */
static const char *human(uint64_t v, char *buf, size_t size)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double x = (double)v;
	int u = -1;

	if (v < 1024) {
		snprintf(buf, size, "%llu B", (unsigned long long)v);
		return buf;
	}
	while (x >= 1024 && u < 5) {
		x /= 1024;
		u++;
	}
	snprintf(buf, size, "%.1f %s", x, unit[u]);
	return buf;
}

/* 1234567890 ns -> "1.235 s"; below a second "12.3 ms" */
static const char *duration(uint64_t ns, char *buf, size_t size)
{
	if (ns >= 1000000000u)
		snprintf(buf, size, "%.3f s", (double)ns / 1e9);
	else
		snprintf(buf, size, "%.1f ms", (double)ns / 1e6);
	return buf;
}

/* What the dump holds: live blocks, counts (exact or sampled), times, rings, regions. */
static void data_line(const struct report *r, FILE *f)
{
	char a[32];

	fputs("  data:       live blocks", f);
	if (r->have_counts && r->counts_sampled)
		fprintf(f, ", counts (estimates: sampled one per %s bytes)",
			report_thousands(r->counts_period, a));
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
			human(r->alloc_bytes, a, sizeof(a)), report_thousands(r->alloc_calls, b),
			report_thousands(r->alloc_bytes, c));
		fprintf(f, "  freed:      %s%s in %s frees (%s bytes)\n", about,
			human(r->freed_bytes, a, sizeof(a)), report_thousands(r->frees, b),
			report_thousands(r->freed_bytes, c));
	}
	if (r->have_time)
		fprintf(f, "  time:       %s before allocation calls\n",
			duration(r->time_ns, a, sizeof(a)));
	if (r->metric != METRIC_INUSE_SPACE || r->by_thread || r->region) {
		fprintf(f, "  metric:     %s", report_metric_name(r->metric));
		if (r->by_thread)
			fputs(", per thread", f);
		if (r->region)
			fprintf(f, ", region %s only", r->region);
		fputc('\n', f);
	}
}

static void summary(const struct report *r, FILE *f)
{
	char a[32], b[32], c[32];

	fprintf(f, "heapprof-analyze report\n");
	fprintf(f, "  program:    %s\n", r->program);
	fprintf(f, "  memory:     %s (%u-bit %s-endian)\n", r->source, r->wsize * 8,
		r->big_endian ? "big" : "little");
	fprintf(f, "  live:       %s%s in %s blocks (%s bytes), %zu distinct stacks%s\n",
		r->sample_period ? "about " : "", human(r->live_bytes, a, sizeof(a)),
		report_thousands(r->live_blocks, b), report_thousands(r->live_bytes, c),
		r->live_stacks, r->saturated ? " (totals saturated)" : "");
	if (r->sample_period)
		fprintf(f, "  sampled:    one per %s bytes on average; figures are estimates\n",
			report_thousands(r->sample_period, a));
	counts_summary(r, f);
	if (r->unknown_blocks)
		fprintf(f, "  unknown:    %s blocks (%s bytes) have no readable stack record\n",
			report_thousands(r->unknown_blocks, a), report_thousands(r->unknown_bytes, b));
	fprintf(f, "  scanned:    %s in %zu segments", human(r->scanned_bytes, a, sizeof(a)),
		r->segments);
	if (r->missing_bytes)
		fprintf(f, "; %s not in the file (%u segments)",
			human(r->missing_bytes, b, sizeof(b)), r->missing_segs);
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
	if (r->leaks)
		leaks_write_summary(r->leaks, f);
	if (r->ages)
		ages_write_summary(r->ages, f);
	if (r->memory)
		memory_write_text(r->memory, f);
	if (r->lifetimes)
		lifetimes_write_summary(r->lifetimes, f);
}

static void sizes(const struct report *r, const struct report_stack *s, FILE *f)
{
	char a[32];

	/* sampled: counts are estimated blocks, as the heading's are */
	fputs(r->sample_period ? "  sizes (about):" : "  sizes:", f);
	for (size_t i = 0; i < s->nsizes && i < SIZES_SHOWN; i++)
		fprintf(f, "%s %s x%llu", i ? "," : "", report_thousands(s->sizes[i].size, a),
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
		fprintf(f, "%s blocks (%s bytes) live", report_thousands(s->blocks, a),
			report_thousands(s->bytes, b));
		break;
	case METRIC_ALLOC_SPACE:
		fprintf(f, "%s bytes allocated in %s calls", report_thousands(s->alloc_bytes, a),
			report_thousands(s->alloc_calls, b));
		break;
	case METRIC_ALLOC_OBJECTS:
		fprintf(f, "%s allocation calls (%s bytes)", report_thousands(s->alloc_calls, a),
			report_thousands(s->alloc_bytes, b));
		break;
	case METRIC_RETAINED_SPACE:
		fprintf(f, "%s bytes retained, live %s bytes in %s blocks",
			report_thousands(s->retained, a), report_thousands(s->bytes, b),
			report_thousands(s->blocks, c));
		break;
	case METRIC_ALLOC_TIME:
		fprintf(f, "%s before %s calls", duration(s->time_ns, a, sizeof(a)),
			report_thousands(s->alloc_calls, b));
		break;
	default:
		fprintf(f, "%s bytes in %s blocks", report_thousands(s->bytes, a),
			report_thousands(s->blocks, b));
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
	fprintf(f, "  live %s bytes in %s blocks", report_thousands(s->bytes, a),
		report_thousands(s->blocks, b));
	fprintf(f, "; allocated %s bytes in %s calls", report_thousands(s->alloc_bytes, a),
		report_thousands(s->alloc_calls, b));
	fprintf(f, "; freed %s bytes in %s frees", report_thousands(s->freed_bytes, a),
		report_thousands(s->frees, b));
	if (r->have_time)
		fprintf(f, "; time %s", duration(s->time_ns, a, sizeof(a)));
	fputc('\n', f);
}

static int write_text(const struct report *r, FILE *f)
{
	char a[32], b[32];

	if (r->diff)
		return diff_write_text(r, f);
	summary(r, f);
	if (r->show_timeline && timeline_write_text(r, f) < 0)
		return -1;
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct report_stack *s = &r->stacks[i];
		double pct = r->total ? 100.0 * (double)s->value / (double)r->total : 0;
		char mark[96];

		fprintf(f, "\n#%zu  %.1f%%  ", i + 1, pct);
		heading(r, s, f);
		if (s->nsizes && (r->metric == METRIC_INUSE_SPACE || r->metric == METRIC_INUSE_OBJECTS))
			sizes(r, s, f);
		else
			fputc('\n', f);
		if (report_leak_class(s))
			fprintf(f, "    are %s\n", report_leak_class(s));
		others(r, s, f);
		if (r->lifetimes)
			lifetimes_write_stack(&s->life, f);
		if (s->flags & STACK_OVERFLOW)
			fprintf(f, "    %s\n", report_overflow_mark(r->peak, mark, sizeof(mark)));
		else if (s->flags & STACK_UNKNOWN)
			fputs("    [unknown stack: no readable stack record]\n", f);
		else if (!s->nframes)
			fputs("    [no stack: allocated before heapprof was ready]\n", f);
		for (unsigned j = 0; j < s->nframes; j++)
			frame(r, &s->frames[j], f);
		if (s->flags & STACK_TRUNCATED)
			fprintf(f, "    (stack cut at %u frames)\n", s->recorded_frames);
	}
	if (r->nstacks < r->all_stacks && r->metric == METRIC_INUSE_SPACE)
		fprintf(f, "\n%zu more stacks hold %s bytes in %s blocks (--top=0 --min-percent=0 shows all)\n",
			r->all_stacks - r->nstacks, report_thousands(r->rest_bytes, a),
			report_thousands(r->rest_blocks, b));
	else if (r->nstacks < r->all_stacks)
		fprintf(f, "\n%zu more stacks hold %s of %s (--top=0 --min-percent=0 shows all)\n",
			r->all_stacks - r->nstacks, report_thousands(r->rest_value, a),
			report_metric_name(r->metric));
	return ferror(f) ? -1 : 0;
}

const struct out_format out_text = { "text", write_text,
				     OUT_SIGNED | OUT_SIZES | OUT_BY | OUT_AGES | OUT_SUMMARY |
				     OUT_LIFETIMES };
