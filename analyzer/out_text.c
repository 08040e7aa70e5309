/*
 * The report for people: a summary, then each stack with its share, exact bytes,
 * block count, the commonest sizes, and one frame per line with file:line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "image.h"
#include "leaks.h"
#include "report.h"

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

static void summary(const struct report *r, FILE *f)
{
	const struct scan_result *s = r->scan;
	char a[32], b[32], c[32];
	uint64_t rejected = 0;

	fprintf(f, "heapprof-analyze report\n");
	fprintf(f, "  program:    %s\n", r->program);
	fprintf(f, "  memory:     %s (%u-bit %s-endian)\n", r->source, r->wsize * 8,
		r->big_endian ? "big" : "little");
	fprintf(f, "  live:       %s%s in %s blocks (%s bytes), %zu distinct stacks%s\n",
		r->sample_period ? "about " : "", human(r->live_bytes, a, sizeof(a)),
		report_thousands(r->live_blocks, b), report_thousands(r->live_bytes, c),
		r->all_stacks, r->saturated ? " (totals saturated)" : "");
	if (r->sample_period)
		fprintf(f, "  sampled:    one per %s bytes on average; figures are estimates\n",
			report_thousands(r->sample_period, a));
	if (r->unknown_blocks)
		fprintf(f, "  unknown:    %s blocks (%s bytes) have no readable stack record\n",
			report_thousands(r->unknown_blocks, a), report_thousands(r->unknown_bytes, b));
	fprintf(f, "  scanned:    %s in %zu segments", human(r->img->bytes, a, sizeof(a)),
		r->img->nsegs);
	if (r->img->missing_bytes)
		fprintf(f, "; %s not in the file (%u segments)",
			human(r->img->missing_bytes, b, sizeof(b)),
			r->img->missing_segs + r->img->truncated_segs);
	fputc('\n', f);
	for (int i = 0; i < REJ_NREASONS; i++)
		rejected += s->rejected[i];
	fprintf(f, "  rejected:   %llu headers\n", (unsigned long long)(rejected + r->damaged));
	for (int i = 0; i < REJ_NREASONS; i++)
		if (s->rejected[i])
			fprintf(f, "              %llu %s\n", (unsigned long long)s->rejected[i],
				decode_reason((enum decode_reject)i));
	if (r->damaged)
		fprintf(f, "              %llu damaged block headers (bad check value)\n",
			(unsigned long long)r->damaged);
	fprintf(f, "  symbols:    %s\n", r->modules);
	if (r->leaks)
		leaks_write_summary(r->leaks, f);
}

static void sizes(const struct report_stack *s, FILE *f)
{
	char a[32];

	fputs("  sizes:", f);
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
	const char *mod = fr->module ? strrchr(fr->module, '/') : NULL;

	fprintf(f, "    0x%0*" PRIx64 "  ", r->wsize * 2, fr->pc);
	fputs(report_frame_name(fr, buf, sizeof(buf)), f);
	if (fr->inlined)
		fputs(" (inlined)", f);
	if (fr->file)
		fprintf(f, "  %s:%d", fr->file, fr->line);
	if (fr->module && !fr->in_program && fr->func)
		fprintf(f, "  (%s)", mod ? mod + 1 : fr->module);
	fputc('\n', f);
}

static int write_text(const struct report *r, FILE *f)
{
	char a[32], b[32];

	summary(r, f);
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct report_stack *s = &r->stacks[i];
		double pct = r->live_bytes ? 100.0 * (double)s->bytes / (double)r->live_bytes : 0;

		fprintf(f, "\n#%zu  %.1f%%  %s bytes in %s blocks", i + 1, pct,
			report_thousands(s->bytes, a), report_thousands(s->blocks, b));
		sizes(s, f);
		if (leaks_class_name(s->flags))
			fprintf(f, "    are %s\n", leaks_class_name(s->flags));
		if (s->flags & STACK_UNKNOWN)
			fputs("    [unknown stack: no readable stack record]\n", f);
		else if (!s->nframes)
			fputs("    [no stack: allocated before heapprof was ready]\n", f);
		for (unsigned j = 0; j < s->nframes; j++)
			frame(r, &s->frames[j], f);
		if (s->flags & STACK_TRUNCATED)
			fprintf(f, "    (stack cut at %u frames)\n", s->recorded_frames);
	}
	if (r->nstacks < r->all_stacks)
		fprintf(f, "\n%zu more stacks hold %s bytes in %s blocks (--top=0 --min-percent=0 shows all)\n",
			r->all_stacks - r->nstacks, report_thousands(r->rest_bytes, a),
			report_thousands(r->rest_blocks, b));
	return ferror(f) ? -1 : 0;
}

const struct out_format out_text = { "text", write_text };
