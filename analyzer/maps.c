/*
 * The map table (maps.h): its entries read through the image and checked one by one,
 * the program's summed per stack. Knows nothing of the other kinds of memory
 * (memory.c splits the dump with maps_bytes_in).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "heapprof_format.h"
#include "fmt.h"
#include "image.h"
#include "maps.h"
#include "rd.h"
#include "report.h"
#include "scan.h"
#include "util.h"

#define PAGE_ALIGN 4096u	/* every target's pages are multiples of it */

/* The first usable table: whole and not claiming more entries than it has room for. */
static const struct hp_maps_rec *pick(const struct scan_result *scan, struct maps *m)
{
	size_t n;
	const struct decoded *rec = collect_records(&scan->found, DEC_MAPS, &n);

	m->tables = (unsigned)n;
	for (size_t i = 0; i < n; i++)
		if (rec[i].maps.used <= rec[i].maps.n)
			return &rec[i].maps;
	if (n)
		warn("map table at 0x%" PRIx64 " skipped: it claims %" PRIu64 " entries and has "
		     "room for %" PRIu32, rec[0].maps.addr, rec[0].maps.used, rec[0].maps.n);
	return NULL;
}

/* Entry i of t into *e; false when it is not in the dump. */
static bool read_entry(const struct image *img, const struct hp_maps_rec *t, uint64_t i,
		       struct maps_entry *e)
{
	unsigned char raw[HP2_MAP_ENTRY_WORDS * 8];
	struct rd r = { raw, sizeof(raw), img->big_endian };
	uint64_t w[HP2_MAP_ENTRY_WORDS];

	if (!image_read(img, t->addr + HP2_MAPS_WORDS * 8 + i * sizeof(raw), raw, sizeof(raw)))
		return false;
	for (unsigned k = 0; k < HP2_MAP_ENTRY_WORDS; k++)
		rd_u64(&r, &w[k]);
	*e = (struct maps_entry){ .start = w[0], .end = w[1], .stack = (uint32_t)w[2],
				  .origin = (unsigned)(w[2] >> 32) & 0xFF,
				  .flags = (unsigned)(w[2] >> 40) & 0xFF };
	return true;
}

/* Entries that are empty, unaligned, of no known origin or not below the last kept
 * are skipped: the rest stay sorted and apart, whatever the table holds. The table
 * holds them highest first; m->v gets them lowest first. */
static void read_entries(struct maps *m, const struct image *img, const struct hp_maps_rec *t)
{
	uint64_t last_start = UINT64_MAX;
	struct maps_entry e;
	size_t cap = 0;

	for (uint64_t i = 0; i < t->used; i++) {
		if (!read_entry(img, t, i, &e)) {
			m->bad += t->used - i;	/* the rest of the table is not in the dump */
			break;
		}
		if (e.end <= e.start || e.start % PAGE_ALIGN || e.end % PAGE_ALIGN ||
		    e.end > last_start || e.origin < HP2_MAP_PROGRAM || e.origin > HP2_MAP_ALLOCATOR) {
			m->bad++;
			continue;
		}
		if (m->n == cap)	/* grown as read: w3 is not trusted with memory */
			m->v = xrealloc(m->v, (cap = cap ? 2 * cap : 64) * sizeof(*m->v));
		m->v[m->n++] = e;
		last_start = e.start;
		if (e.origin == HP2_MAP_PROGRAM) {
			m->program_bytes += e.end - e.start;
			m->program_n++;
		} else if (e.origin == HP2_MAP_HEAPPROF) {
			m->heapprof_bytes += e.end - e.start;
			/* a kind this reader does not know, or one no heapprof.so writes, is
			 * "not said" */
			m->own[e.stack < HP2_OWN_KINDS && e.stack != HP2_OWN_SNAPSHOT ? e.stack
										  : HP2_OWN_UNKNOWN] +=
				e.end - e.start;
		} else {
			m->allocator_bytes += e.end - e.start;
		}
	}
	for (size_t i = 0; i < m->n / 2; i++) {
		e = m->v[i];
		m->v[i] = m->v[m->n - 1 - i];
		m->v[m->n - 1 - i] = e;
	}
}

static int stack_cmp(const void *a, const void *b)
{
	const struct maps_stack *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

static int id_cmp(const void *a, const void *b)
{
	const struct maps_entry *x = *(const struct maps_entry *const *)a,
				*y = *(const struct maps_entry *const *)b;

	return (x->stack > y->stack) - (x->stack < y->stack);
}

/* The program's entries summed per stack id, largest first. */
static struct maps_stack *per_stack(const struct maps *m, size_t *n)
{
	const struct maps_entry **by = xcalloc(m->n ? m->n : 1, sizeof(*by));
	struct maps_stack *v = xcalloc(m->n ? m->n : 1, sizeof(*v));
	size_t nby = 0, k = 0;

	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].origin == HP2_MAP_PROGRAM)
			by[nby++] = &m->v[i];
	if (nby > 1)
		qsort(by, nby, sizeof(*by), id_cmp);
	for (size_t i = 0; i < nby; i++) {
		if (!k || v[k - 1].id != by[i]->stack)
			v[k++].id = by[i]->stack;
		v[k - 1].bytes += by[i]->end - by[i]->start;
		v[k - 1].mappings++;
	}
	free(by);
	if (k > 1)
		qsort(v, k, sizeof(*v), stack_cmp);
	*n = k;
	return v;
}

void maps_apply(struct maps *m, const struct image *img, const struct scan_result *scan,
		struct sym *sym, size_t top)
{
	const struct hp_maps_rec *t;
	struct maps_stack *v;
	size_t n;

	memset(m, 0, sizeof(*m));
	if (!(t = pick(scan, m)))
		return;
	m->found = true;
	m->addr = t->addr;
	m->lost = t->lost;
	m->changing = t->writes & 1;
	read_entries(m, img, t);
	v = per_stack(m, &n);
	m->all = n;
	m->nstacks = top && top < n ? top : n;
	for (size_t i = 0; i < n; i++) {
		const struct decoded_stack *s;

		if (i >= m->nstacks) {
			m->rest_bytes += v[i].bytes;
			m->rest_mappings += v[i].mappings;
			continue;
		}
		s = v[i].id ? collect_stack(&scan->found, v[i].id) : NULL;
		v[i].unknown = v[i].id && !s;
		if (s && s->nframes && sym) {
			v[i].truncated = s->flags & HP2_STACK_TRUNCATED;
			v[i].frames = report_symbolize(NULL, s->pcs, s->nframes, sym, false,
						       &v[i].nframes);
			v[i].key = report_stack_key(s->pcs, s->nframes);
		}
	}
	m->stacks = v;
}

void maps_free(struct maps *m)
{
	for (size_t i = 0; i < m->nstacks; i++)
		free(m->stacks[i].frames);
	free(m->stacks);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

uint64_t maps_bytes_in(const struct maps *m, uint64_t a, uint64_t b, unsigned origin)
{
	size_t lo = 0, hi;
	uint64_t n = 0;

	if (!m || !m->n)
		return 0;
	hi = m->n;
	while (lo < hi) {	/* the first entry ending after a */
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < m->n && m->v[i].start < b; i++) {
		uint64_t s = m->v[i].start > a ? m->v[i].start : a,
			 e = m->v[i].end < b ? m->v[i].end : b;

		if (m->v[i].origin == origin && e > s)
			n += e - s;
	}
	return n;
}

#define MAPS_FRAMES 4		/* innermost frames shown per stack */

static void write_frames(const struct report *r, const struct maps_stack *s, FILE *f)
{
	if (!s->nframes) {
		fputs(s->unknown ? "[unknown stack]" : "[no stack]", f);
		return;
	}
	report_preview(r, s->frames, s->nframes, s->key, MAPS_FRAMES, f);
}

void maps_write_text(const struct report *r, const struct maps *m, FILE *f)
{
	char a[32], b[32], c[32];

	if (!m->found) {
		fputs("  anonymous mappings by stack: no map table in this dump (a heapprof.so "
		      "before map tables, HEAPPROF_MAPS=0, or not heapprof.so)\n", f);
		return;
	}
	fprintf(f, "  anonymous mappings by stack: %s bytes in %s mappings the program made, "
		"%s of heapprof\n", fmt_thousands(m->program_bytes, a),
		fmt_thousands(m->program_n, b), fmt_thousands(m->heapprof_bytes, c));
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct maps_stack *s = &m->stacks[i];

		fprintf(f, "    %15s bytes in %s mappings: ", fmt_thousands(s->bytes, a),
			fmt_thousands(s->mappings, b));
		write_frames(r, s, f);
		fputc('\n', f);
	}
	if (m->all > m->nstacks)
		fprintf(f, "    %15s bytes in %s mappings of %zu more stacks\n",
			fmt_thousands(m->rest_bytes, a), fmt_thousands(m->rest_mappings, b),
			m->all - m->nstacks);
	if (m->lost)
		fprintf(f, "  map table: %s calls not recorded (the table was full, HEAPPROF_MAPS, or a signal handler mapped while its thread changed it)\n",
			fmt_thousands(m->lost, a));
	if (m->bad)
		fprintf(f, "  map table: %s entries skipped (damaged or not in the dump)\n",
			fmt_thousands(m->bad, a));
	if (m->changing)
		fputs("  map table: a change was under way when the dump was taken: one mapping "
		      "may be off\n", f);
	if (m->tables > 1)
		fprintf(f, "  map table: %u tables found, the one at 0x%" PRIx64 " read\n",
			m->tables, m->addr);
}

void maps_write_json(const struct report *r, const struct maps *m, FILE *f,
		     void (*frame)(const struct report_frame *fr, FILE *f))
{
	fprintf(f, ",\n    \"map_table\": {\"found\": %s, \"program_bytes\": %" PRIu64
		", \"heapprof_bytes\": %" PRIu64 ", \"allocator_bytes\": %" PRIu64
		", \"program_mappings\": %zu, \"lost_calls\": %" PRIu64
		", \"skipped_entries\": %" PRIu64 ", \"changing\": %s, \"stacks\": %zu}",
		m->found ? "true" : "false", m->program_bytes, m->heapprof_bytes, m->allocator_bytes, m->program_n, m->lost,
		m->bad, m->changing ? "true" : "false", m->all);
	fputs(",\n    \"mapped\": [", f);
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct maps_stack *s = &m->stacks[i];

		fprintf(f, "%s{\"mapped_bytes\": %" PRIu64 ", \"mappings\": %" PRIu64
			", \"truncated\": %s, \"unknown\": %s,\n       ",
			i ? ",\n      " : "\n      ", s->bytes, s->mappings,
			s->truncated ? "true" : "false", s->unknown ? "true" : "false");
		report_json_stack(r, s->frames, s->nframes, s->key, MAPS_FRAMES, frame, f);
		fputc('}', f);
	}
	fputs(m->nstacks ? "\n    ]" : "]", f);
}
