/*
 * -f json: the whole report for programs, in the schema of docs/report-schema.json
 * (version 1; a new field is no new version, a changed or removed one is). Counts are
 * JSON integers; addresses are "0x..." strings, since a double cannot hold 64 bits.
 * With --base, every stack's bytes and blocks are the signed difference NEW - OLD.
 */
#include <inttypes.h>
#include <stdio.h>

#include "ages.h"
#include "json.h"
#include "leaks.h"
#include "memory.h"
#include "report.h"
#include "sym.h"

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

static void ages(const struct age_summary *a, FILE *f)
{
	fputs("  \"ages\": {\"buckets\": [", f);
	for (unsigned k = 0; k < AGE_BUCKETS; k++) {
		fputs(k ? ", " : "", f);
		fputs("{\"age\": ", f);
		str(ages_bucket_name(k), f);
		fprintf(f, ", \"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 "}", a->bytes[k],
			a->blocks[k]);
	}
	fprintf(f, "],\n    \"untimed_bytes\": %" PRIu64 ", \"untimed_blocks\": %" PRIu64
		", \"newest_ms\": %" PRIu64 ", \"older_than_ms\": ", a->untimed_bytes,
		a->untimed_blocks, a->newest_ms);
	if (a->older_than_ms >= 0)
		fprintf(f, "%" PRId64 ", \"kept_bytes\": %" PRIu64 ", \"kept_blocks\": %" PRIu64,
			a->older_than_ms, a->kept_bytes, a->kept_blocks);
	else
		fputs("null", f);
	fputs("},\n", f);
}

static void lifetimes(const struct report_lifetimes *l, FILE *f)
{
	fprintf(f, "  \"lifetimes\": {\"rings\": %zu, \"whole\": %s, \"window_ns\": %" PRId64
		", \"end_ns\": %" PRId64 ",\n    \"calls\": %" PRIu64 ", \"allocs\": %" PRIu64
		", \"frees\": %" PRIu64 ", \"paired\": %" PRIu64 ", \"cross_thread\": %" PRIu64
		", \"before\": %" PRIu64 ",\n    \"temporary\": %" PRIu64 ", \"no_site\": %"
		PRIu64 ", \"aged\": %" PRIu64 ", \"newest_ms\": %" PRIu64 "},\n", l->rings,
		l->whole ? "true" : "false", l->window_ns, l->end_ns, l->calls, l->allocs, l->frees,
		l->paired, l->cross_thread, l->before, l->temporary, l->no_site, l->aged,
		l->newest_ms);
}

/* A stack's lifetimes: means are left to the reader, so that every figure stays exact. */
static void life(const struct report_life *l, FILE *f)
{
	fprintf(f, ",\n     \"lifetime\": {\"freed\": %" PRIu64 ", \"freed_sum_ns\": %" PRIu64
		", \"freed_min_ns\": %" PRIu64 ", \"freed_max_ns\": %" PRIu64
		", \"temporary\": %" PRIu64 ",\n       \"aged\": %" PRIu64
		", \"age_sum_ms\": %" PRIu64 ", \"age_min_ms\": %" PRIu64
		", \"age_max_ms\": %" PRIu64 "}", l->freed.n, l->freed.sum, l->freed.min,
		l->freed.max, l->temporary, l->age.n, l->age.sum, l->age.min, l->age.max);
}

static void leaks(const struct leak_summary *l, FILE *f)
{
	fputs("  \"leaks\": {\"classes\": [", f);
	for (int c = 0; c < LEAK_NCLASSES; c++) {
		fputs(c ? ", " : "", f);
		fputs("{\"class\": ", f);
		str(leaks_class_name((unsigned)(c + 1) << LEAK_FLAG_SHIFT), f);
		fprintf(f, ", \"shown\": %s, \"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64
			", \"suppressed_bytes\": %" PRIu64 ", \"suppressed_blocks\": %" PRIu64 "}",
			l->mask & 1u << c ? "true" : "false", l->bytes[c], l->blocks[c],
			l->supp_bytes[c], l->supp_blocks[c]);
	}
	fprintf(f, "],\n    \"root_threads\": %u, \"root_bytes\": %" PRIu64
		", \"scanned_bytes\": %" PRIu64 ", \"allocator_bytes\": %" PRIu64 "},\n",
		l->threads, l->root_bytes, l->scanned_bytes, l->allocator_bytes);
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

/* "peak" (--peak) and "timeline" (oldest first, the last sample now), when held. */
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
}

static int write_json(const struct report *r, FILE *f)
{
	struct report_path p = { 0 };

	fprintf(f, "{\n  \"schema\": \"heapprof-report\", \"version\": %d,\n  \"tool\": \"heapprof-analyze %s\",\n  \"program\": ",
		SCHEMA_VERSION, HP_VERSION);
	str(r->program, f);
	fputs(", \"source\": ", f);
	str(r->source, f);
	fprintf(f, ",\n  \"word_bits\": %u, \"big_endian\": %s,\n", r->wsize * 8,
		r->big_endian ? "true" : "false");
	summary(r, f);
	threads(r, f);
	if (r->memory)
		memory_write_json(r->memory, f, frame);
	if (r->ages)
		ages(r->ages, f);
	if (r->leaks)
		leaks(r->leaks, f);
	if (r->lifetimes)
		lifetimes(r->lifetimes, f);
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
		str(report_leak_class(s), f);
		fprintf(f, ", \"truncated\": %s, \"unknown\": %s, \"recorded_frames\": %u,\n     \"sizes\": [",
			s->flags & STACK_TRUNCATED ? "true" : "false",
			s->flags & STACK_UNKNOWN ? "true" : "false", s->recorded_frames);
		for (size_t j = 0; j < s->nsizes; j++)
			fprintf(f, "%s{\"size\": %" PRIu64 ", \"count\": %" PRIu64 "}", j ? ", " : "",
				s->sizes[j].size, s->sizes[j].count);
		putc(']', f);
		if (r->lifetimes)
			life(&s->life, f);
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
				     OUT_SIGNED | OUT_SIZES | OUT_AGES | OUT_SUMMARY |
				     OUT_LIFETIMES };
