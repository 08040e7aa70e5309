/*
 * --memory (see memory.h): the dump's segments split by what they hold, and the
 * allocator's chunks summed. Knows no chunk layout: alloc.h gives the chunks.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "analysis.h"
#include "fmt.h"
#include "heapprof_format.h"
#include "image.h"
#include "json.h"
#include "maps.h"
#include "memory.h"
#include "memory_own.h"
#include "pinned.h"
#include "rd.h"
#include "report.h"
#include "sym.h"
#include "util.h"

static uint64_t overlap(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t lo = a > c ? a : c, hi = b < d ? b : d;

	return hi > lo ? hi - lo : 0;
}

/* Bytes of [a, b) in mmapped chunks; *j walks the sorted chunks once over sorted segments. */
static uint64_t mmapped_in(const struct alloc *al, uint64_t a, uint64_t b, size_t *j)
{
	uint64_t n = 0;

	while (*j < al->nchunks && al->chunks[*j].addr + al->chunks[*j].size <= a)
		(*j)++;
	for (size_t i = *j; i < al->nchunks && al->chunks[i].addr < b; i++)
		if (al->chunks[i].mmapped)
			n += overlap(a, b, al->chunks[i].addr, al->chunks[i].addr + al->chunks[i].size);
	return n;
}

#define TCB_WINDOW 65536u	/* where a thread's control block sits: its stack's top */
#define GUARD_MAX 65536u	/* the largest guard area taken for one below a stack */
#define STACK_MIN 16384u	/* PTHREAD_STACK_MIN: below a TCB, a stack has at least this */
#define PAGE_MIN 4096u		/* every target's pages are multiples of it */
#define VSYSCALL 0xffffffffff600000ull	/* x86_64's legacy vsyscall page */

enum tcb_kind { TCB_NONE, TCB_STACK, TCB_LOADER };

/*
 * A glibc x86_64 thread control block near the top of [a, b): a word that holds its
 * own address, with the same at +16 (tcbhead_t's tcb and self). At least STACK_MIN
 * above a: a thread stack (an exited thread's, kept by glibc for the next); a listed
 * thread's thread pointer with no stack under it: the main thread's, which the loader
 * mapped. Other machines: not recognized (TCB_NONE).
 */
static enum tcb_kind tcb_in(const struct image *img, uint64_t a, uint64_t b)
{
	static unsigned char buf[TCB_WINDOW];	/* memory_apply runs in one thread */
	uint64_t from = b - a > TCB_WINDOW ? b - TCB_WINDOW : a, w, self;

	if (b - from < 24 || img->machine != EM_X86_64 || img->wsize != 8 || !image_read(img, from, buf, b - from))
		return TCB_NONE;
	for (uint64_t off = (b - from - 24) & ~(uint64_t)7; off + 24 <= b - from; off -= 8) {
		uint64_t x = from + off;

		memcpy(&w, buf + off, 8);
		memcpy(&self, buf + off + 16, 8);
		if (img->big_endian != host_big_endian()) {
			w = __builtin_bswap64(w);
			self = __builtin_bswap64(self);
		}
		if (w == x && self == x) {
			for (size_t t = 0; t < img->nthreads; t++)
				if (img->threads[t].have_tls && img->threads[t].tls == x)
					return TCB_LOADER;
			return x - a >= STACK_MIN ? TCB_STACK : TCB_NONE;
		}
		if (!off)
			break;
	}
	return TCB_NONE;
}

/* A thread's stack pointer inside [a, b), or an exited thread's kept stack. */
static bool stack_in(const struct image *img, uint64_t a, uint64_t b)
{
	for (size_t t = 0; t < img->nthreads; t++)
		if (img->threads[t].have_sp && img->threads[t].sp >= a && img->threads[t].sp < b)
			return true;
	return false;
}

/* [a, b) is the guard area of a stack right above it (glibc maps a stack and its guard
 * as one mapping, then protects the guard: two mappings). */
static bool guard_below_stack(const struct image *img, uint64_t a, uint64_t b)
{
	const struct seg *s = image_find(img, b);

	return b - a <= GUARD_MAX && s && s->vaddr == b &&
	       (stack_in(img, b, b + s->size) || tcb_in(img, b, b + s->size) == TCB_STACK);
}

/*
 * Bytes of [a, b) per kind, for a dumped segment and a resident mapping alike: all of
 * it a stack when a thread's stack pointer is inside, else the arenas' heaps, mmapped
 * chunks, the map table's mappings and modules in that order, each given no more than
 * is left; *j as mmapped_in. The allocator's memory never passes through the calls the
 * table records: taken first, it cannot be counted twice even so. What is left of a
 * mapping nothing claimed may still be a kept thread stack, its guard, or the loader's.
 */
static void split(const struct image *img, const struct alloc *al, const struct maps *maps,
		  const struct sym_module_info *mods, size_t nmods, uint64_t a, uint64_t b,
		  size_t *j, uint64_t out[MEM_NKINDS])
{
	uint64_t left = b - a, n;
	enum tcb_kind tk;

	memset(out, 0, MEM_NKINDS * sizeof(*out));
	if (stack_in(img, a, b)) {
		out[MEM_STACKS] = left;
		return;
	}
	for (size_t h = 0; h < al->nspans; h++) {
		n = overlap(a, b, al->spans[h].start, al->spans[h].end);
		n = n < left ? n : left;
		out[MEM_ARENAS] += n;
		left -= n;
	}
	n = mmapped_in(al, a, b, j);
	n = n < left ? n : left;
	out[MEM_MMAPPED] += n;
	left -= n;
	n = maps_bytes_in(maps, a, b, HP2_MAP_ALLOCATOR);	/* jemalloc's, say */
	n = n < left ? n : left;
	out[MEM_ARENAS] += n;
	left -= n;
	n = maps_bytes_in(maps, a, b, HP2_MAP_PROGRAM);
	n = n < left ? n : left;
	out[MEM_MAPPED] += n;
	left -= n;
	n = maps_bytes_in(maps, a, b, HP2_MAP_HEAPPROF);
	n = n < left ? n : left;
	out[MEM_HEAPPROF] += n;
	left -= n;
	for (size_t mi = 0; mi < nmods && left; mi++) {
		/* a module's bss runs on to the end of its last page */
		n = overlap(a, b, mods[mi].start & ~(uint64_t)(PAGE_MIN - 1),
			    (mods[mi].end + PAGE_MIN - 1) & ~(uint64_t)(PAGE_MIN - 1));
		n = n < left ? n : left;
		out[MEM_MODULES] += n;
		left -= n;
	}
	if (img->machine == EM_X86_64 && a >= VSYSCALL) {	/* the kernel's page */
		out[MEM_MODULES] += left;
		return;
	}
	for (size_t fi = 0; fi < img->nfiles && left; fi++) {
		n = overlap(a, b, img->files[fi].start, img->files[fi].end);
		n = n < left ? n : left;
		out[MEM_FILES] += n;
		left -= n;
	}
	for (size_t mi = 0; mi < nmods && left == b - a; mi++)
		if (a == ((mods[mi].end + PAGE_MIN - 1) & ~(uint64_t)(PAGE_MIN - 1))) {
			out[MEM_MODULES] += left;	/* the rest of its bss, mapped apart */
			return;
		}
	if (left && (tk = tcb_in(img, a, b)) != TCB_NONE) {
		out[tk == TCB_STACK ? MEM_STACKS : MEM_LOADER] += left;
		return;
	}
	if (left == b - a && guard_below_stack(img, a, b)) {
		out[MEM_STACKS] = left;
		return;
	}
	out[MEM_OTHER] += left;
}

/* Each mapping's resident bytes shared out over the kinds its bytes fall in. */
static void resident_apply(const struct image *img, const struct alloc *al, const struct maps *maps,
			   const struct sym_module_info *mods, size_t nmods,
			   struct memory_summary *m)
{
	uint64_t part[MEM_NKINDS];
	size_t j = 0;

	m->resident_why = img->resident ? NULL : img->resident_why ? img->resident_why : "unknown";
	for (size_t i = 0; i < img->nresident; i++) {
		const struct image_resident *r = &img->resident[i];
		uint64_t size = r->end - r->start, given = 0;

		split(img, al, maps, mods, nmods, r->start, r->end, &j, part);
		for (int k = 0; k < MEM_NKINDS; k++) {
			uint64_t share = (uint64_t)((unsigned __int128)r->rss * part[k] / size);

			m->resident[k] += share;
			given += share;
		}
		m->resident[MEM_OTHER] += r->rss - given;	/* rounding */
		m->resident_total += r->rss;
		m->swapped_total += r->swap;
	}
	m->resident_maps = img->nresident;
}

void memory_apply(const struct image *img, struct sym *sym, const struct alloc *al,
		  const struct maps *maps, struct memory_summary *m)
{
	struct sym_module_info *mods;
	uint64_t part[MEM_NKINDS];
	size_t nmods, j = 0;

	memset(m, 0, sizeof(*m));
	m->alloc = al;
	m->maps = maps;
	mods = sym_modules(sym, &nmods);
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct seg *s = &img->segs[i];

		m->dumped += s->size;
		split(img, al, maps, mods, nmods, s->vaddr, s->vaddr + s->size, &j, part);
		for (int k = 0; k < MEM_NKINDS; k++)
			m->bytes[k] += part[k];
	}
	resident_apply(img, al, maps, mods, nmods, m);
	free(mods);
}

static void line(FILE *f, const char *what, uint64_t v, uint64_t chunks)
{
	char a[32], b[32];

	if (chunks)
		fprintf(f, "    %-30s %15s bytes in %s chunks\n", what, fmt_thousands(v, a),
			fmt_thousands(chunks, b));
	else
		fprintf(f, "    %-30s %15s bytes\n", what, fmt_thousands(v, a));
}

static void write_resident_text(const struct memory_summary *m, const char *const *kind, FILE *f)
{
	char a[32], b[32], c[32];

	if (m->resident_why) {
		fprintf(f, "  resident:   not recorded (%s)\n", m->resident_why);
		return;
	}
	fprintf(f, "  resident:   %s bytes, %s swapped, in %s mappings (smaps when the snapshot "
		"was taken)\n", fmt_thousands(m->resident_total, a),
		fmt_thousands(m->swapped_total, b), fmt_thousands(m->resident_maps, c));
	for (int k = 0; k < MEM_NKINDS; k++)
		line(f, kind[k], m->resident[k], 0);
}

#define PINNED_FRAMES 4		/* innermost frames shown per stack */

/* "keep < fill < main < ..." */
/* A holder other than PIN_BLOCK, for the text: "untagged chunks", ... */
static const char *holder_name(const struct alloc *al, enum pinned_holder h, char *buf,
			       size_t size)
{
	switch (h) {
	case PIN_UNTAGGED: return "untagged chunks";
	case PIN_CACHED:
		snprintf(buf, size, "chunks %s", alloc_kind_name(al, ALLOC_CACHED));
		return buf;
	case PIN_HEAP_END: return "the end of a heap or of a walk cut short";
	default: return "heapprof blocks";
	}
}

static void write_frames(const struct report *r, const struct alloc *al,
			 const struct pinned_stack *s, FILE *f)
{
	char buf[300];

	if (s->holder != PIN_BLOCK) {
		fprintf(f, "[%s]", holder_name(al, s->holder, buf, sizeof(buf)));
		return;
	}
	if (!s->nframes) {
		fputs(stack_mark(s->flags, 0), f);
		return;
	}
	report_preview(r, s->frames, s->nframes, s->key, PINNED_FRAMES, f);
}

static void write_pinned(const struct report *r, const struct alloc *al, const struct pinned *p, FILE *f)
{
	char a[32], b[32], c[32];

	fprintf(f, "  free memory pinned, by stack: %s bytes in %s free chunks below in-use ones, "
		"%s of them in whole pages\n", fmt_thousands(p->bytes, a),
		fmt_thousands(p->runs, b), fmt_thousands(p->trim_bytes, c));
	for (size_t i = 0; i < p->n; i++) {
		const struct pinned_stack *s = &p->v[i];

		fprintf(f, "    %15s bytes by %s %s (%s in whole pages): ",
			fmt_thousands(s->bytes, a), fmt_thousands(s->blocks, b),
			s->holder == PIN_BLOCK ? "blocks" : "chunks", fmt_thousands(s->trim_bytes, c));
		write_frames(r, al, s, f);
		fputc('\n', f);
	}
	if (p->all > p->n)
		fprintf(f, "    %15s bytes by %s chunks of %zu more stacks\n",
			fmt_thousands(p->rest_bytes, a), fmt_thousands(p->rest_blocks, b),
			p->all - p->n);
}

/* the mappings' kinds in words, for the text and the page */
static const char *const mapping_words[MEM_NKINDS] = { "heap arenas", "mmapped chunks",
	"thread stacks", "mapped by the program", "heapprof's own", "modules' data",
	"other mapped files", "the loader's", "other anonymous" };

static void memory_text(const struct report *r, const void *data, FILE *f)
{
	const struct memory_summary *m = data;
	const char *const *kind = mapping_words;
	const struct alloc *al = m->alloc;
	const struct alloc_stats *st = &al->st;
	char buf[400], a[32], b[32], c[32], d[32];
	uint64_t overhead;

	fprintf(f, "MEMORY (%s bytes in the dump):\n", fmt_thousands(m->dumped, a));
	for (int k = 0; k < MEM_NKINDS; k++)
		line(f, kind[k], m->bytes[k], 0);
	write_resident_text(m, kind, f);
	if (m->maps)
		maps_write_text(r, m->maps, f);
	if (m->slabs.blocks)
		fprintf(f, "  in slabs:   %s blocks of python's object allocator, %s bytes in their "
			"size classes (%s asked for), in %s pools\n",
			fmt_thousands(m->slabs.blocks, a), fmt_thousands(m->slabs.slot_bytes, b),
			fmt_thousands(m->slabs.user_bytes, c), fmt_thousands(m->slabs.tables, d));
	memory_own_text(m->maps, m->header_bytes, m->header_blocks, f);
	fprintf(f, "  allocator:  %s", alloc_describe(al, buf, sizeof(buf)));
	if (!al->known) {
		fputc('\n', f);
		return;
	}
	fprintf(f, ", %u arenas in %u heaps, %s mmapped chunks\n", st->arenas, st->heaps,
		fmt_thousands(st->mmapped_chunks, a));
	snprintf(buf, sizeof(buf), "%s:", al->reader->own_name);
	fprintf(f, "  %-11s", buf);
	for (unsigned i = 0; i < al->nown; i++)
		fprintf(f, "%s%s %" PRIu64, i ? ", " : " ", al->own[i].name, al->own[i].value);
	fputc('\n', f);
	fprintf(f, "  %s would release %s bytes: %s in whole free pages, %s of the main arena's "
		"top\n", al->reader->release_call,
		fmt_thousands(st->trim_pages_bytes + st->trim_top_bytes, a),
		fmt_thousands(st->trim_pages_bytes, b), fmt_thousands(st->trim_top_bytes, c));
	fprintf(f, "  in the arenas:\n");
	overhead = st->kind_bytes[ALLOC_TAGGED] - st->tagged_user - st->tagged_header;
	line(f, "live bytes (heapprof blocks)", st->tagged_user, st->kind_chunks[ALLOC_TAGGED]);
	line(f, "heapprof headers", st->tagged_header, 0);
	line(f, "allocator overhead", overhead, 0);
	for (int k = ALLOC_UNTAGGED; k < ALLOC_NKINDS; k++)
		line(f, alloc_kind_name(al, (enum alloc_kind)k), st->kind_bytes[k], st->kind_chunks[k]);
	fprintf(f, "  in mmapped chunks:\n");
	line(f, "live bytes (heapprof blocks)", st->mmapped_user, 0);
	line(f, "heapprof headers", st->mmapped_header, 0);
	line(f, "the rest (overhead, untagged)", st->mmapped_bytes - st->mmapped_user -
	     st->mmapped_header, 0);
	if (m->pinned)
		write_pinned(r, al, m->pinned, f);
	for (unsigned i = 0; i < al->nproblems && i < ALLOC_MAX_PROBLEMS; i++)
		fprintf(f, "  not walked: %s\n", al->problems[i]);
	if (al->nproblems > ALLOC_MAX_PROBLEMS)
		fprintf(f, "  not walked: ... and %u more\n", al->nproblems - ALLOC_MAX_PROBLEMS);
	if (al->unwalked_bytes)
		fprintf(f, "  not walked: %s bytes of the heaps\n",
			fmt_thousands(al->unwalked_bytes, a));
}

static void json_pinned(const struct report *r, const struct alloc *al, const struct pinned *p,
			FILE *f, void (*frame)(const struct report_frame *fr, FILE *f))
{
	const char *const holder[PIN_NHOLDERS] = { "block", "untagged",
						   alloc_kind_key(al, ALLOC_CACHED), "heap_end" };

	fprintf(f, ",\n      \"pinned_bytes\": %" PRIu64 ", \"pinned_trim_bytes\": %" PRIu64
		", \"pinned_runs\": %" PRIu64 ", \"pinned_stacks\": %zu},\n    \"pinned\": [",
		p->bytes, p->trim_bytes, p->runs, p->all);
	for (size_t i = 0; i < p->n; i++) {
		const struct pinned_stack *s = &p->v[i];

		fprintf(f, "%s{\"pinned_bytes\": %" PRIu64 ", \"trim_bytes\": %" PRIu64
			", \"blocks\": %" PRIu64 ", \"holder\": \"%s\", \"truncated\": %s"
			", \"unknown\": %s,\n       ", i ? ",\n      " : "\n      ",
			s->bytes, s->trim_bytes, s->blocks, holder[s->holder],
			s->flags & STACK_TRUNCATED ? "true" : "false",
			s->flags & STACK_UNKNOWN ? "true" : "false");
		report_json_stack(r, s->frames, s->nframes, s->key, PINNED_FRAMES, frame, f);
		fputc('}', f);
	}
	fputs(p->n ? "\n    ]}" : "]}", f);
}

static const char *const mapping_keys[MEM_NKINDS] = { "arenas", "mmapped", "stacks", "mapped",
						     "heapprof", "modules", "files", "loader",
						     "other" };

static void memory_json(const struct report *r, const void *data, const struct report_out *o)
{
	const struct memory_summary *m = data;
	FILE *f = o->f;
	const char *const *kind = mapping_keys;
	const struct alloc *al = m->alloc;
	const struct alloc_stats *st = &al->st;
	char buf[400];

	fprintf(f, "  \"memory\": {\"dumped_bytes\": %" PRIu64 ", \"mappings\": {", m->dumped);
	for (int k = 0; k < MEM_NKINDS; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", kind[k], m->bytes[k]);
	fputs("},\n    \"resident\": {\"known\": ", f);
	if (m->resident_why) {
		fputs("false, \"reason\": ", f);
		json_str(m->resident_why, false, f);
	} else {
		fprintf(f, "true, \"resident_bytes\": %" PRIu64 ", \"swap_bytes\": %" PRIu64
			", \"mappings\": %zu, \"by_kind\": {", m->resident_total, m->swapped_total,
			m->resident_maps);
		for (int k = 0; k < MEM_NKINDS; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", kind[k], m->resident[k]);
		fputc('}', f);
	}
	fputc('}', f);
	if (m->maps)
		maps_write_json(r, m->maps, f, o->frame);
	fprintf(f, ",\n    \"slabs\": {\"pools\": %" PRIu64 ", \"blocks\": %" PRIu64
		", \"class_bytes\": %" PRIu64 ", \"user_bytes\": %" PRIu64 "}", m->slabs.tables,
		m->slabs.blocks, m->slabs.slot_bytes, m->slabs.user_bytes);
	memory_own_json(m->maps, m->header_bytes, m->header_blocks, f);
	fputs(",\n    \"allocator\": {\"known\": ", f);
	fputs(al->known ? "true, \"name\": " : "false, \"reason\": ", f);
	json_str(al->known ? al->name : alloc_describe(al, buf, sizeof(buf)), false, f);
	if (al->known) {
		fprintf(f, ", \"arenas\": %u, \"heaps\": %u,\n      \"arena_bytes\": %" PRIu64
			", \"in_use_bytes\": %" PRIu64 ", \"free_bytes\": %" PRIu64
			", \"mmapped_bytes\": %" PRIu64 ", \"mmapped_chunks\": %" PRIu64
			",\n      \"live_user_bytes\": %" PRIu64 ", \"heapprof_header_bytes\": %" PRIu64
			", \"mmapped_user_bytes\": %" PRIu64 ", \"unwalked_bytes\": %" PRIu64
			",\n      \"trim_pages_bytes\": %" PRIu64 ", \"trim_top_bytes\": %" PRIu64
			",\n      \"chunks\": {", st->arenas, st->heaps, st->arena_bytes,
			st->in_use_bytes, st->free_bytes, st->mmapped_bytes, st->mmapped_chunks,
			st->tagged_user, st->tagged_header, st->mmapped_user, al->unwalked_bytes,
			st->trim_pages_bytes, st->trim_top_bytes);
		for (int k = 0; k < ALLOC_NKINDS; k++)
			fprintf(f, "%s\"%s\": {\"bytes\": %" PRIu64 ", \"count\": %" PRIu64 "}",
				k ? ", " : "", alloc_kind_key(al, (enum alloc_kind)k), st->kind_bytes[k],
				st->kind_chunks[k]);
		fputs("},\n      \"problems\": [", f);
		for (unsigned i = 0; i < al->nproblems && i < ALLOC_MAX_PROBLEMS; i++) {
			fputs(i ? ", " : "", f);
			json_str(al->problems[i], false, f);
		}
		fputc(']', f);
		if (m->pinned) {
			json_pinned(r, al, m->pinned, f, o->frame);
			fputs(",\n", f);
			return;
		}
	}
	fputs("}},\n", f);
}

/* The words the text says for the JSON object's keys of kinds, and the allocator's
 * call that gives memory back: the page labels its rows with them. */
static void memory_words(const struct memory_summary *m, FILE *f)
{
	const struct alloc *al = m->alloc;

	fputs(",\n\"memory_words\":{\"mappings\":{", f);
	for (int k = 0; k < MEM_NKINDS; k++) {
		fprintf(f, "%s\"%s\":", k ? "," : "", mapping_keys[k]);
		json_str(mapping_words[k], true, f);
	}
	fputs("},\"chunks\":{", f);
	for (int k = 0; k < ALLOC_NKINDS; k++) {
		fprintf(f, "%s\"%s\":", k ? "," : "", alloc_kind_key(al, (enum alloc_kind)k));
		json_str(alloc_kind_name(al, (enum alloc_kind)k), true, f);
	}
	fputs("},\"release_call\":", f);
	json_str(al->reader ? al->reader->release_call : "", true, f);
	putc('}', f);
}

/* The page's: the JSON object, word for word but for '<', which only its strings hold,
 * and which must not end the script element; then the words for its keys. */
static void memory_html(const struct report *r, const void *data, const struct report_out *o)
{
	struct report_out mem = *o;
	char *buf = NULL;
	size_t len = 0;

	if (!(mem.f = open_memstream(&buf, &len)))
		return;
	memory_json(r, data, &mem);
	fclose(mem.f);
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ','))
		len--;
	putc(',', o->f);
	for (size_t i = 0; i < len; i++)
		buf[i] == '<' ? fputs("\\u003c", o->f) : putc(buf[i], o->f);
	free(buf);
	memory_words(data, o->f);
}

const struct section_ops memory_section = {
	.name = "memory", .gives = "a memory summary", .text = memory_text,
	.json = memory_json, .html = memory_html,
};

/* ---- the row --------------------------------------------------------------------- */

struct memory_state {
	struct memory_summary m;
	struct pinned pinned;
	struct maps maps;
};

static bool memory_wanted(const struct options *o)
{
	return o->memory;
}

static void *memory_run(struct session *s)
{
	struct memory_state *st = xmalloc(sizeof(*st));

	maps_apply(&st->maps, &s->img, &s->scan, s->sym, s->o->report.top);
	memory_apply(&s->img, s->sym, &s->alloc, &st->maps, &st->m);
	st->m.slabs = (struct memory_slabs){ s->scan.slabs_used, s->scan.slab_blocks,
					     s->scan.slab_slot_bytes, s->scan.slab_bytes };
	memory_own_headers(&s->scan.list, &st->m.header_bytes, &st->m.header_blocks);
	pinned_apply(&st->pinned, &s->alloc, &s->img, &s->scan, s->sym, s->o->report.top);
	st->m.pinned = &st->pinned;
	return st;
}

static void memory_release(void *state)
{
	struct memory_state *st = state;

	pinned_free(&st->pinned);
	maps_free(&st->maps);
	free(st);
}

/* the chunks' block indices follow the list's order, which the heap graph sorts */
const struct analysis memory_analysis = {
	"memory", IN_CHUNKS | IN_LIST | IN_LIST_ORDER, 0, 0, memory_wanted, memory_run,
	memory_release, &memory_section
};
