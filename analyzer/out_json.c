/*
 * -f json: the whole report for programs, in the schema of docs/report-schema.json
 * (version 1; a new field is no new version, a changed or removed one is). Counts are
 * JSON integers; addresses are "0x..." strings, since a double cannot hold 64 bits.
 * With --base, every stack's bytes and blocks are the signed difference NEW - OLD.
 */
#include <inttypes.h>
#include <stdio.h>

#include "image.h"
#include "memory.h"
#include "report.h"
#include "sym.h"

#define SCHEMA_VERSION 1

static void str(const char *s, FILE *f)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	putc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			putc(*p, f);
	}
	putc('"', f);
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
	fprintf(f, ", \"module_offset\": %" PRIu64 ", \"in_program\": %s, \"inlined\": %s}",
		fr->module ? fr->module_offset : 0, fr->in_program ? "true" : "false",
		fr->inlined ? "true" : "false");
}

static void summary(const struct report *r, FILE *f)
{
	const struct scan_result *s = r->scan;
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
	fprintf(f, "    \"scanned_bytes\": %" PRIu64 ", \"segments\": %zu, \"missing_bytes\": %" PRIu64
		",\n    \"rejected\": {", (uint64_t)r->img->bytes, r->img->nsegs,
		(uint64_t)r->img->missing_bytes);
	for (int i = 0; i < REJ_NREASONS; i++)
		if (s->rejected[i]) {
			fputs(first ? "" : ", ", f);
			str(decode_reason((enum decode_reject)i), f);
			fprintf(f, ": %" PRIu64, s->rejected[i]);
			first = false;
		}
	fputs("},\n    \"symbols\": ", f);
	str(r->modules, f);
	fputs(", \"view\": ", f);
	str(r->view_note, f);
	fputs("\n  },\n", f);
}

static int write_json(const struct report *r, FILE *f)
{
	fprintf(f, "{\n  \"schema\": \"heapprof-report\", \"version\": %d,\n  \"tool\": \"heapprof-analyze %s\",\n  \"program\": ",
		SCHEMA_VERSION, HP_VERSION);
	str(r->program, f);
	fputs(", \"source\": ", f);
	str(r->source, f);
	fprintf(f, ",\n  \"word_bits\": %u, \"big_endian\": %s,\n", r->wsize * 8,
		r->big_endian ? "true" : "false");
	summary(r, f);
	if (r->memory)
		memory_write_json(r->memory, f, frame);
	fputs("  \"base\": ", f);
	if (r->diff) {
		fputs("{\"source\": ", f);
		str(r->base_source, f);
		fprintf(f, ", \"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64
			", \"stacks\": %zu},\n", r->base_live_bytes, r->base_live_blocks, r->base_stacks);
	} else {
		fputs("null,\n", f);
	}
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
		fprintf(f, ", \"truncated\": %s, \"unknown\": %s, \"recorded_frames\": %u,\n     \"sizes\": [",
			s->flags & STACK_TRUNCATED ? "true" : "false",
			s->flags & STACK_UNKNOWN ? "true" : "false", s->recorded_frames);
		for (size_t j = 0; j < s->nsizes; j++)
			fprintf(f, "%s{\"size\": %" PRIu64 ", \"count\": %" PRIu64 "}", j ? ", " : "",
				s->sizes[j].size, s->sizes[j].count);
		fputs("],\n     \"frames\": [", f);
		for (unsigned j = 0; j < s->nframes; j++) {
			fputs(j ? ",\n       " : "\n       ", f);
			frame(&s->frames[j], f);
		}
		fputs(s->nframes ? "]}" : "]}", f);
	}
	fputs(r->nstacks ? "\n  ]\n}\n" : "]\n}\n", f);
	return ferror(f) ? -1 : 0;
}

const struct out_format out_json = { "json", write_json };
