/*
 * -f json: the whole report for programs, in the schema of docs/report-schema.json
 * (version 1; a new field is no new version, a changed or removed one is). Counts are
 * JSON integers; addresses are "0x..." strings, since a double cannot hold 64 bits.
 * With --base, every stack's bytes and blocks are the signed difference NEW - OLD.
 */
#include <inttypes.h>
#include <stdio.h>

#include "json.h"
#include "report.h"

#define SCHEMA_VERSION 1

static void str(const char *s, FILE *f)
{
	json_str(s, false, f);
}

static void num(const struct report *r, uint64_t v, FILE *f)
{
	if (r->diff)
		fprintf(f, "%" PRId64, (int64_t)v);
	else
		fprintf(f, "%" PRIu64, v);
}

static void frame(const struct report_frame *fr, FILE *f)
{
	fprintf(f, "{\"pc\": \"0x%" PRIx64 "\", \"function\": ", fr->pc);
	str(fr->func, f);
	fputs(", \"file\": ", f);
	str(fr->file, f);
	fprintf(f, ", \"line\": %d, \"module\": ", fr->file ? fr->line : 0);
	str(fr->module, f);
	fprintf(f, ", \"module_offset\": %" PRIu64 ", \"in_program\": %s, \"inlined\": %s%s}",
		fr->module ? fr->module_offset : 0, fr->in_program ? "true" : "false",
		fr->inlined ? "true" : "false", fr->python ? ", \"python\": true" : "");
}

static void summary(const struct report *r, FILE *f)
{
	bool first = true;

	fputs("  \"summary\": {\n    \"metric\": ", f);
	str(report_metric_name(r->metric), f);
	fputs(", \"total\": ", f);
	num(r, r->diff ? r->total - r->base_total : r->total, f);
	fprintf(f, ",\n    \"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64
		", \"stacks\": %zu, \"shown_stacks\": %zu,\n    \"rest_bytes\": ",
		r->live_bytes, r->live_blocks, r->all_stacks, r->nstacks);
	num(r, r->rest_bytes, f);
	fputs(", \"rest_blocks\": ", f);
	num(r, r->rest_blocks, f);
	fprintf(f, ", \"sample_period\": %" PRIu64 ",\n    \"unknown_blocks\": %" PRIu64
		", \"unknown_bytes\": %" PRIu64 ", \"damaged\": %" PRIu64 ", \"saturated\": %s,\n",
		r->sample_period, r->unknown_blocks, r->unknown_bytes, r->damaged,
		r->saturated ? "true" : "false");
	if (r->lean_dumps)	/* only then: the reports of every other dump read as before */
		fprintf(f, "    \"lean_dumps\": %zu, \"lean_headers\": %" PRIu64 ",\n",
			r->lean_dumps, r->lean_headers);
	fprintf(f, "    \"scanned_bytes\": %" PRIu64 ", \"segments\": %zu, \"missing_bytes\": %" PRIu64
		",\n    \"rejected\": {", r->scanned_bytes, r->segments, r->missing_bytes);
	for (int i = 0; i < REJ_NREASONS; i++)
		if (r->rejected[i].n) {
			fputs(first ? "" : ", ", f);
			str(r->rejected[i].reason, f);
			fprintf(f, ": %" PRIu64, r->rejected[i].n);
			first = false;
		}
	fputs("},\n    \"symbols\": ", f);
	str(r->modules, f);
	fputs(", \"view\": ", f);
	str(r->view_note, f);
	fprintf(f, ",\n    \"counts\": %s, \"times\": %s, \"alloc_bytes\": %" PRIu64
		", \"alloc_calls\": %" PRIu64 ",\n    \"frees\": %" PRIu64 ", \"freed_bytes\": %"
		PRIu64 ", \"time_ns\": %" PRIu64 ", \"counts_per_stack\": %s",
		!r->have_counts ? "null" : r->counts_sampled ? "\"sampled\"" : "\"exact\"",
		r->have_time ? "true" : "false", r->alloc_bytes, r->alloc_calls, r->frees,
		r->freed_bytes, r->time_ns, r->have_counts && !r->regrouped ? "true" : "false");
	fputs("\n  },\n", f);
}

/* The dump's named threads, whether or not the stacks were split by them. */
static void threads(const struct report *r, FILE *f)
{
	fputs("  \"threads\": [", f);
	for (size_t i = 0; i < r->nthreads_named; i++) {
		fprintf(f, "%s{\"tid\": %" PRIu32 ", \"name\": ", i ? ", " : "", r->threads[i].tid);
		str(r->threads[i].name, f);
		putc('}', f);
	}
	fputs("],\n", f);
}

/* The stack as every format names it: roots, markers, frames, outermost first. */
static void path(const struct report *r, const struct report_stack *s, struct report_path *p,
		 FILE *f)
{
	report_decorate(r, s, p);
	fputs(",\n     \"path\": [", f);
	for (size_t j = 0; j < p->n; j++) {
		fputs(j ? ", " : "", f);
		str(p->items[j].name, f);
	}
	putc(']', f);
}

/* "peak" (--peak), "timeline" (oldest first, the last sample now) and "timeline_now"
 * (when now is, and whether the snapshot said so), when held. */
static void timeline_json(const struct report *r, FILE *f)
{
	if (r->peak)
		fprintf(f, "  \"peak\": {\"time_s\": %.3f, \"live_bytes\": %" PRIu64
			", \"live_blocks\": %" PRIu64 ", \"now_bytes\": %" PRIu64
			", \"now_blocks\": %" PRIu64 ", \"step\": %" PRIu64 ", \"source\": \"%s\""
			", \"table_time_s\": %.3f, \"table_bytes\": %" PRIu64
			", \"table_blocks\": %" PRIu64 "},\n",
			r->peak->time_s, r->peak->bytes, r->peak->blocks, r->peak->now_bytes,
			r->peak->now_blocks, r->peak->step, r->peak->from_now ? "now" : "table",
			r->peak->table_time_s, r->peak->table_bytes, r->peak->table_blocks);
	if (!r->ntimeline)
		return;
	fputs("  \"timeline\": [", f);
	for (size_t i = 0; i < r->ntimeline; i++) {
		const struct report_sample *s = &r->timeline[i];

		fprintf(f, "%s{\"time_s\": %.3f, \"live_bytes\": %" PRIu64 ", \"live_blocks\": %"
			PRIu64 ", \"alloc_calls\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64 "}",
			i ? ",\n    " : "\n    ", s->time_s, s->live_bytes, s->live_blocks,
			s->alloc_calls, s->alloc_bytes);
	}
	fputs("\n  ],\n", f);
	fprintf(f, "  \"timeline_now\": {\"time_s\": %.3f, \"source\": \"%s\"},\n",
		r->timeline[r->ntimeline - 1].time_s,
		r->timeline_taken ? "snapshot" : "newest record");
}

static int write_json(const struct report *r, FILE *f)
{
	struct report_path p = { 0 };
	const struct report_out out = { f, frame };

	fprintf(f, "{\n  \"schema\": \"heapprof-report\", \"version\": %d,\n  \"tool\": \"heapprof-analyze %s\",\n  \"program\": ",
		SCHEMA_VERSION, HP_VERSION);
	str(r->program, f);
	fputs(", \"source\": ", f);
	str(r->source, f);
	fprintf(f, ",\n  \"word_bits\": %u, \"big_endian\": %s,\n", r->wsize * 8,
		r->big_endian ? "true" : "false");
	summary(r, f);
	threads(r, f);
	for (size_t i = 0; i < r->nsections; i++)
		if (r->sections[i].ops->json)
			r->sections[i].ops->json(r, r->sections[i].data, &out);
	fputs("  \"base\": ", f);
	if (r->diff) {
		fputs("{\"source\": ", f);
		str(r->base_source, f);
		fprintf(f, ", \"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64
			", \"stacks\": %zu},\n", r->base_live_bytes, r->base_live_blocks, r->base_stacks);
	} else {
		fputs("null,\n", f);
	}
	timeline_json(r, f);
	fputs("  \"modules\": [", f);
	for (size_t i = 0; i < r->nmods; i++) {
		fputs(i ? ",\n    {\"path\": " : "\n    {\"path\": ", f);
		str(r->mods[i].path, f);
		fprintf(f, ", \"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\", \"build_id\": ",
			r->mods[i].start, r->mods[i].end);
		str(r->mods[i].build_id[0] ? r->mods[i].build_id : NULL, f);
		putc('}', f);
	}
	fputs(r->nmods ? "\n  ],\n  \"stacks\": [" : "],\n  \"stacks\": [", f);
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct report_stack *s = &r->stacks[i];

		fputs(i ? ",\n    {\"value\": " : "\n    {\"value\": ", f);
		num(r, s->value, f);
		fputs(", \"bytes\": ", f);
		num(r, s->bytes, f);
		fputs(", \"blocks\": ", f);
		num(r, s->blocks, f);
		if (r->have_counts) {
			fputs(", \"alloc_bytes\": ", f);
			num(r, s->alloc_bytes, f);
			fputs(", \"alloc_calls\": ", f);
			num(r, s->alloc_calls, f);
			fputs(", \"frees\": ", f);
			num(r, s->frees, f);
			fputs(", \"freed_bytes\": ", f);
			num(r, s->freed_bytes, f);
			fputs(", \"time_ns\": ", f);
			num(r, s->time_ns, f);
		}
		if (r->by_thread) {
			fprintf(f, ", \"tid\": %" PRIu32 ", \"thread_name\": ", s->tid);
			str(s->thread_name, f);
		}
		fputs(", \"leak_class\": ", f);
		str(report_stack_class(r, s), f);
		fprintf(f, ", \"truncated\": %s, \"unknown\": %s, \"recorded_frames\": %u,\n     \"sizes\": [",
			s->flags & STACK_TRUNCATED ? "true" : "false",
			s->flags & STACK_UNKNOWN ? "true" : "false", s->recorded_frames);
		for (size_t j = 0; j < s->nsizes; j++)
			fprintf(f, "%s{\"size\": %" PRIu64 ", \"count\": %" PRIu64 "}", j ? ", " : "",
				s->sizes[j].size, s->sizes[j].count);
		putc(']', f);
		for (size_t k = 0; k < r->nsections; k++)
			if (r->sections[k].ops->stack_json)
				r->sections[k].ops->stack_json(s, f);
		path(r, s, &p, f);
		fputs(",\n     \"frames\": [", f);
		for (unsigned j = 0; j < s->nframes; j++) {
			fputs(j ? ",\n       " : "\n       ", f);
			frame(&s->frames[j], f);
		}
		fputs(s->nframes ? "]}" : "]}", f);
	}
	fputs(r->nstacks ? "\n  ]\n}\n" : "]\n}\n", f);
	report_path_free(&p);
	return ferror(f) ? -1 : 0;
}

const struct out_format out_json = { "json", write_json,
				     OUT_SIGNED | OUT_SIZES | OUT_SUMMARY, SYNTAX_JSON };
