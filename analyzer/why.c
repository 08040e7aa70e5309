/*
 * --why: why the blocks of stacks matching a regex (or the block holding an address)
 * are alive: graph_why.c's paths of pointers from named roots, and what the blocks
 * retain together, as a report section: alone in text, "why" in JSON.
 */
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "fmt.h"
#include "json.h"
#include "types.h"
#include "util.h"
#include "why.h"

#define WHY_FRAMES 3		/* frames the text shows per block, past the allocator's */

/* The row's state: the answer, and its stacks' frames for the text's previews. */
struct why {
	struct graph_why *w;
	struct why_stack {
		struct report_frame *frames;	/* innermost first, inlined ones too; owned */
		unsigned nframes;
		uint64_t key;			/* report_stack_key() */
	} *stacks;
};

/* ---- text ------------------------------------------------------------------------ */

/* "f < g < h < ...  #N" (report_preview), or the stack's mark */
static void text_stack(const struct report *r, const struct why *y, size_t i, FILE *f)
{
	const struct graph_why_stack *s = &y->w->stacks[i];
	const struct why_stack *t = &y->stacks[i];

	if (s->marked || !t->nframes)
		fputs(s->n ? s->names[0] : "[no stack]", f);
	else
		report_preview(r, t->frames, t->nframes, t->key, WHY_FRAMES, f);
}

static void text_root(const struct graph_why_root *r, FILE *f)
{
	switch (r->kind) {
	case WHY_ROOT_REGISTER:
		if (r->reg)
			fprintf(f, "thread %lu register %s\n", (unsigned long)r->tid, r->reg);
		else
			fprintf(f, "thread %lu register #%u\n", (unsigned long)r->tid, r->regno);
		break;
	case WHY_ROOT_TLS:
		fprintf(f, "thread %lu TLS (0x%llx)\n", (unsigned long)r->tid,
			(unsigned long long)r->addr);
		break;
	case WHY_ROOT_STACK:
		fprintf(f, "thread %lu stack, ", (unsigned long)r->tid);
		if (r->name)
			fprintf(f, "frame %s ", r->name);
		fprintf(f, "(0x%llx, sp+0x%llx)\n", (unsigned long long)r->addr,
			(unsigned long long)r->offset);
		break;
	case WHY_ROOT_GLOBAL:
		fprintf(f, "global %s (%s+0x%llx)\n", r->name, r->module,
			(unsigned long long)r->offset);
		break;
	case WHY_ROOT_MODULE_DATA:
		fprintf(f, "module data (%s+0x%llx)\n", r->module, (unsigned long long)r->offset);
		break;
	case WHY_ROOT_UNTAGGED:
		fprintf(f, "untagged block (0x%llx)\n", (unsigned long long)r->addr);
		break;
	case WHY_ROOT_ANONYMOUS:
		fprintf(f, "anonymous mapping (0x%llx)\n", (unsigned long long)r->addr);
		break;
	default:
		fputs("?\n", f);
		break;
	}
}

static void text_shown(const struct report *r, const struct why *y,
		       const struct graph_why_shown *p, FILE *f)
{
	char a[32], b[32];

	fprintf(f, "\n0x%llx: %s bytes, retains %s bytes, allocated at ",
		(unsigned long long)p->addr, fmt_thousands(p->size, a), fmt_thousands(p->retains, b));
	text_stack(r, y, p->stack, f);
	fputc('\n', f);
	if (!p->reached) {
		fputs("  no root reaches it (lost)\n", f);
		return;
	}
	fputs("  root: ", f);
	text_root(&p->root, f);
	for (unsigned k = 0; k < p->nhops; k++) {
		const struct graph_why_hop *h = &p->hops[k];

		if (h->gap) {
			fprintf(f, "  ... %s more hops%s ...\n", fmt_thousands(h->hops, a),
				h->same_stack ? " of the same stack" : "");
			continue;
		}
		fprintf(f, "  0x%llx  %s bytes", (unsigned long long)h->addr, fmt_thousands(h->size, a));
		if (!h->last)
			fprintf(f, "  +%llu ->", (unsigned long long)h->offset);
		fputs("  ", f);
		text_stack(r, y, h->stack, f);
		fputc('\n', f);
	}
}

static void why_text(const struct report *r, const void *data, FILE *f)
{
	const struct why *y = data;
	const struct graph_why *w = y->w;
	char a[32], b[32];

	fprintf(f, "why alive: %zu blocks match '%s'%s\n", w->matched, w->what,
		w->nshown < w->matched ? "; the largest shown (--top)" : "");
	for (size_t i = 0; i < w->nshown; i++)
		text_shown(r, y, &w->shown[i], f);
	fprintf(f, "\nretained by the %zu blocks: %s bytes in %s blocks, by stack:\n", w->matched,
		fmt_thousands(w->retained_bytes, a), fmt_thousands(w->retained_blocks, b));
	for (size_t i = 0; i < w->nrows; i++) {
		fprintf(f, "  %s bytes in %s blocks  ", fmt_thousands(w->rows[i].bytes, a),
			fmt_thousands(w->rows[i].blocks, b));
		text_stack(r, y, w->rows[i].stack, f);
		fputc('\n', f);
	}
	if (w->more_rows)
		fputs("  ...\n", f);
}

/* ---- JSON ------------------------------------------------------------------------ */

static void json_stack(const struct graph_why *w, size_t i, FILE *f)
{
	const struct graph_why_stack *s = &w->stacks[i];

	fputs("\"stack\": [", f);
	for (unsigned k = 0; k < s->n; k++) {
		fputs(k ? ", " : "", f);
		json_str(s->names[k], false, f);
	}
	fputc(']', f);
}

static void json_root(const struct graph_why_root *r, FILE *f)
{
	static const char *const kind[] = {
		[WHY_ROOT_REGISTER] = "register", [WHY_ROOT_TLS] = "tls", [WHY_ROOT_STACK] = "stack",
		[WHY_ROOT_GLOBAL] = "global", [WHY_ROOT_MODULE_DATA] = "module_data",
		[WHY_ROOT_UNTAGGED] = "untagged_block", [WHY_ROOT_ANONYMOUS] = "anonymous" };

	if (r->kind == WHY_ROOT_NONE) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"kind\": \"%s\"", kind[r->kind]);
	switch (r->kind) {
	case WHY_ROOT_REGISTER:
		fprintf(f, ", \"thread\": %" PRIu32 ", \"register\": ", r->tid);
		json_str(r->reg, false, f);
		fprintf(f, ", \"regno\": %u}", r->regno);
		return;
	case WHY_ROOT_GLOBAL:
	case WHY_ROOT_MODULE_DATA:
		fputs(", \"symbol\": ", f);
		json_str(r->name, false, f);
		fputs(", \"module\": ", f);
		json_str(r->module, false, f);
		fprintf(f, ", \"offset\": %" PRIu64 "}", r->offset);
		return;
	case WHY_ROOT_TLS:
	case WHY_ROOT_STACK:
		fprintf(f, ", \"thread\": %" PRIu32, r->tid);
		break;
	default:
		break;
	}
	fprintf(f, ", \"address\": \"0x%" PRIx64 "\"", r->addr);
	if (r->kind == WHY_ROOT_STACK) {
		fputs(", \"frame\": ", f);
		json_str(r->name, false, f);
		fprintf(f, ", \"sp_offset\": %" PRIu64, r->offset);
	}
	fputc('}', f);
}

static void json_shown(const struct graph_why *w, const struct graph_why_shown *p, FILE *f)
{
	fprintf(f, "{\"address\": \"0x%" PRIx64 "\", \"bytes\": %" PRIu64 ", \"retains\": %" PRIu64
		", ", p->addr, p->size, p->retains);
	json_stack(w, p->stack, f);
	fprintf(f, ",\n       \"reached\": %s, \"length\": %" PRIu64 ", \"root\": ",
		p->reached ? "true" : "false", p->length);
	json_root(&p->root, f);
	fputs(", \"hops\": [", f);
	for (unsigned k = 0; k < p->nhops; k++) {
		const struct graph_why_hop *h = &p->hops[k];

		fputs(k ? ",\n         " : "\n         ", f);
		if (h->gap) {
			fprintf(f, "{\"left_out\": %" PRIu64 ", \"same_stack\": %s}", h->hops,
				h->same_stack ? "true" : "false");
			continue;
		}
		fprintf(f, "{\"address\": \"0x%" PRIx64 "\", \"bytes\": %" PRIu64 ", \"offset\": ",
			h->addr, h->size);
		if (h->last)
			fputs("null", f);
		else
			fprintf(f, "%" PRIu64, h->offset);
		fputs(", ", f);
		json_stack(w, h->stack, f);
		fputc('}', f);
	}
	fputs("]}", f);
}

/* "why": each block shown with its path, then what the blocks retain together */
static void why_json(const struct report *r, const void *data, const struct report_out *o)
{
	const struct graph_why *w = ((const struct why *)data)->w;
	FILE *f = o->f;

	(void)r;
	fputs("  \"why\": {\"match\": ", f);
	json_str(w->what, false, f);
	fprintf(f, ", \"blocks\": %zu, \"shown\": [", w->matched);
	for (size_t i = 0; i < w->nshown; i++) {
		fputs(i ? ",\n      " : "\n      ", f);
		json_shown(w, &w->shown[i], f);
	}
	fprintf(f, "%s],\n    \"retained\": {\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64
		", \"more_stacks\": %s, \"stacks\": [", w->nshown ? "\n    " : "", w->retained_bytes,
		w->retained_blocks, w->more_rows ? "true" : "false");
	for (size_t i = 0; i < w->nrows; i++) {
		fprintf(f, "%s{\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 ", ",
			i ? ",\n      " : "\n      ", w->rows[i].bytes, w->rows[i].blocks);
		json_stack(w, w->rows[i].stack, f);
		fputc('}', f);
	}
	fputs(w->nrows ? "\n    ]}},\n" : "]}},\n", f);
}

/* text: the whole report */
const struct section_ops why_section = {
	.name = "why", .gives = "paths of pointers", .alone = true, .text = why_text,
	.json = why_json,
};

/* ---- the row --------------------------------------------------------------------- */

static bool why_wanted(const struct options *o)
{
	return o->why != NULL;
}

/* No stack matched REGEX: the blocks whose type (--by=type's) does; 1 if none. */
static int why_types(struct session *s, struct graph_why **w)
{
	struct type_names tn;
	regex_t re;
	uint8_t *picked;
	int rc;

	if (regcomp(&re, s->o->why, REG_EXTENDED | REG_NOSUB))
		return 1;	/* graph_why said why already */
	types_name_blocks(s, NULL, &tn);
	picked = xcalloc(tn.n ? tn.n : 1, 1);
	for (size_t i = 0; i < tn.n; i++)
		picked[i] = tn.of[i] && !regexec(&re, tn.of[i], 0, NULL, 0);
	rc = graph_why_picked(s->graph, &s->scan, s->sym, &s->keying, s->o->why, picked,
			      s->o->report.top, w);
	free(picked);
	types_names_free(&tn);
	regfree(&re);
	return rc;
}

/* The stacks' frames, while the graph (which holds their pcs) lives. */
static struct why *why_frames(struct session *s, struct graph_why *w)
{
	struct why *y = xmalloc(sizeof(*y));

	y->w = w;
	y->stacks = xcalloc(w->nstacks ? w->nstacks : 1, sizeof(*y->stacks));
	for (size_t i = 0; i < w->nstacks; i++) {
		const struct graph_why_stack *g = &w->stacks[i];
		struct why_stack *t = &y->stacks[i];

		if (g->marked || !g->npcs)
			continue;
		t->frames = report_symbolize(NULL, g->pcs, g->npcs, s->sym, false, &t->nframes);
		t->key = report_stack_key(g->pcs, g->npcs);
	}
	return y;
}

static void *why_run(struct session *s)
{
	struct graph_why *w = NULL;
	char err[300];
	int rc = graph_why(s->graph, &s->scan, s->sym, &s->keying, s->o->why, s->o->report.top,
			   &w, err, sizeof(err));

	if (rc < 0)
		die(EXIT_USAGE, "%s", err);
	if (rc > 0 && strncmp(s->o->why, "0x", 2))
		rc = why_types(s, &w);
	if (rc > 0)
		die(EXIT_NO_REPORT, "no live block matches '%s'", s->o->why);
	return why_frames(s, w);
}

static void why_free(void *state)
{
	struct why *y = state;

	for (size_t i = 0; i < y->w->nstacks; i++)
		free(y->stacks[i].frames);
	free(y->stacks);
	graph_why_free(y->w);
	free(y);
}

/* the blocks marked out are not picked; the roots are found again, past the allocator's
 * free chunks, and named: an untagged chunk is one */
const struct analysis why_analysis = {
	"why", IN_GRAPH | IN_DOMINATORS | IN_LIST | IN_MARKS | IN_KEYING | IN_CHUNKS | IN_NONROOT,
	0, 0, why_wanted, why_run, why_free, &why_section
};
