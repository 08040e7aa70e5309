/*
 * The leak classifier (see leaks.h). Memcheck's algorithm (mc_leakcheck.c), on the
 * blocks of a core:
 *
 *  1. Mark from the roots. A word w points to block b when b.user <= w <
 *     b.user + max(size, 1): a start pointer when w == b.user, else an interior one.
 *     A start pointer from a root or from a reachable block makes b reachable;
 *     anything else (an interior pointer, or any pointer from a possibly lost block)
 *     makes an unreached block possibly lost. A block whose state rises is scanned
 *     (again): each block is scanned at most twice.
 *  2. Cliques. For every block still unreached, in address order: it leads a clique;
 *     every unreached block its contents reach (transitively, any pointer) becomes
 *     indirectly lost, including earlier clique leaders. The leaders left are
 *     definitely lost. So a cycle of lost blocks that nothing outside points into has
 *     exactly one definitely lost block, its lowest-addressed one, and the rest are
 *     indirectly lost: what memcheck reports.
 *
 * Finding the block a word points into: blocks sorted by address, then a two-level
 * index: the 1 GiB regions that blocks overlap (sorted), each with an array of cells
 * saying which block is the first to start at or after each granule of the region.
 * The granule grows until the index fits in 32 bytes per block (or 4 MiB), so memory
 * stays linear in the number of blocks whatever the addresses.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "core_notes.h"
#include "decode.h"
#include "image.h"
#include "leaks.h"
#include "rd.h"
#include "scan.h"
#include "stacks.h"
#include "sym.h"
#include "util.h"

#define REGION_SHIFT 30
#define MAX_REGIONS_PER_BLOCK 2	/* a block spanning more is "huge": found by bsearch */
#define X86_64_REDZONE 128		/* bytes below rsp a leaf function may use */

enum { ST_UNREACHED, ST_POSSIBLE, ST_REACHABLE, ST_INDIRECT };

struct lk {
	const struct image *img;
	const struct alloc *alloc;	/* its free chunks and metadata are no roots */
	struct scan_block *b;		/* sorted by user */
	uint64_t *end;			/* pointer range end, clamped below the next block */
	size_t n;
	uint64_t lo, hi;		/* [lowest user, highest end) */
	uint64_t *rkey;			/* sorted region numbers (addr >> REGION_SHIFT) */
	size_t nreg;
	unsigned gshift;		/* log2 of the granule */
	size_t stride;			/* cells per region: granules + 1 */
	uint32_t *cell;			/* nreg * stride */
	bool huge;			/* some block spans more than MAX_REGIONS_PER_BLOCK */
	uint32_t *work;			/* block indices to scan */
	size_t nwork, work_cap;
	bool be;
	unsigned wsize;
	uint8_t *hide;			/* per block: held only from suppressed leaks */
	bool hiding;			/* the scan marks hide, not states */
	uint64_t root_bytes, scanned_bytes, allocator_bytes;
};

static int block_cmp(const void *a, const void *b)
{
	const struct scan_block *x = a, *y = b;

	return (x->user > y->user) - (x->user < y->user);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The last block with user <= w among [lo, hi), or SIZE_MAX. */
static size_t last_at_or_below(const struct lk *k, size_t lo, size_t hi, uint64_t w)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->b[mid].user <= w)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : SIZE_MAX;
}

static size_t region_find(const struct lk *k, uint64_t r)
{
	size_t lo = 0, hi = k->nreg;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->rkey[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->nreg && k->rkey[lo] == r ? lo : SIZE_MAX;
}

/* The block w points into, or SIZE_MAX. */
static inline size_t lookup(const struct lk *k, uint64_t w)
{
	size_t r, i, c;
	const uint32_t *cell;

	if (w < k->lo || w >= k->hi)
		return SIZE_MAX;
	r = region_find(k, w >> REGION_SHIFT);
	if (r == SIZE_MAX) {
		if (!k->huge)
			return SIZE_MAX;
		i = last_at_or_below(k, 0, k->n, w);
	} else {
		c = (size_t)((w & ((1ULL << REGION_SHIFT) - 1)) >> k->gshift);
		cell = k->cell + r * k->stride + c;
		/* blocks starting in this granule are [cell[0], cell[1]); the one before
		 * them may reach into it */
		i = last_at_or_below(k, cell[0], cell[1], w);
		if (i == SIZE_MAX || i < cell[0])
			i = cell[0] ? cell[0] - 1 : SIZE_MAX;
	}
	return i != SIZE_MAX && w < k->end[i] ? i : SIZE_MAX;
}

static void build_index(struct lk *k)
{
	size_t cap = 16, budget;
	uint64_t cells_per_region;

	k->rkey = xmalloc(cap * sizeof(*k->rkey));
	k->lo = k->n ? k->b[0].user : 0;
	for (size_t i = 0; i < k->n; i++) {
		uint64_t r0 = k->b[i].user >> REGION_SHIFT, r1 = (k->end[i] - 1) >> REGION_SHIFT;

		if (k->end[i] > k->hi)
			k->hi = k->end[i];
		if (r1 - r0 >= MAX_REGIONS_PER_BLOCK) {
			k->huge = true;
			r1 = r0;
		}
		for (uint64_t r = r0; r <= r1; r++) {
			if (k->nreg && k->rkey[k->nreg - 1] == r)
				continue;
			if (k->nreg == cap)
				k->rkey = xrealloc(k->rkey, (cap *= 2) * sizeof(*k->rkey));
			k->rkey[k->nreg++] = r;
		}
	}
	qsort(k->rkey, k->nreg, sizeof(*k->rkey), u64_cmp);
	{
		size_t m = 0;

		for (size_t i = 0; i < k->nreg; i++)
			if (!m || k->rkey[m - 1] != k->rkey[i])
				k->rkey[m++] = k->rkey[i];
		k->nreg = m;
	}
	budget = k->n * 32 > ((size_t)4 << 20) ? k->n * 32 : (size_t)4 << 20;
	for (k->gshift = 9; k->gshift < REGION_SHIFT; k->gshift++) {
		cells_per_region = (1ULL << (REGION_SHIFT - k->gshift)) + 1;
		if (k->nreg * cells_per_region * sizeof(uint32_t) <= budget)
			break;
	}
	k->stride = (size_t)(1ULL << (REGION_SHIFT - k->gshift)) + 1;
	k->cell = xmalloc((k->nreg ? k->nreg : 1) * k->stride * sizeof(*k->cell));
	for (size_t r = 0, i = 0; r < k->nreg; r++) {
		uint64_t base = k->rkey[r] << REGION_SHIFT;

		/* blocks are sorted: the first starting at or after the region's start */
		i = last_at_or_below(k, 0, k->n, base ? base - 1 : 0);
		i = i == SIZE_MAX ? 0 : i + (k->b[i].user < base);
		for (size_t c = 0; c < k->stride; c++) {
			uint64_t g = base + ((uint64_t)c << k->gshift);

			while (i < k->n && k->b[i].user < g)
				i++;
			k->cell[r * k->stride + c] = (uint32_t)i;
		}
	}
}

static void push(struct lk *k, size_t i)
{
	if (k->nwork == k->work_cap)
		k->work = xrealloc(k->work, (k->work_cap = k->work_cap ? 2 * k->work_cap : 1024) *
						    sizeof(*k->work));
	k->work[k->nwork++] = (uint32_t)i;
}

/* Pass 1: a word seen in a root (prior_definite) or in a block of that state. */
static inline void mark(struct lk *k, uint64_t w, bool prior_definite)
{
	size_t i = lookup(k, w);
	struct scan_block *b;

	if (i == SIZE_MAX)
		return;
	b = &k->b[i];
	if (w == b->user && prior_definite) {
		if (b->state != ST_REACHABLE) {
			b->state = ST_REACHABLE;
			push(k, i);
		}
	} else if (b->state == ST_UNREACHED) {
		b->state = ST_POSSIBLE;
		push(k, i);
	}
}

/* After the passes: a word in a suppressed leak, or in a block only it holds. */
static inline void mark_hidden(struct lk *k, uint64_t w)
{
	size_t i = lookup(k, w);

	if (i == SIZE_MAX || k->b[i].state == ST_REACHABLE || k->hide[i])
		return;
	k->hide[i] = 1;
	push(k, i);
}

/* Pass 2: a word in a block of the clique led by leader. */
static inline void mark_clique(struct lk *k, uint64_t w, size_t leader)
{
	size_t i = lookup(k, w);

	if (i == SIZE_MAX || i == leader || k->b[i].state != ST_UNREACHED)
		return;
	k->b[i].state = ST_INDIRECT;
	push(k, i);
}

static inline uint64_t load_word(const struct lk *k, const unsigned char *p)
{
	if (k->wsize == 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		return k->be != host_big_endian() ? __builtin_bswap64(v) : v;
	} else {
		uint32_t v;

		memcpy(&v, p, 4);
		return k->be != host_big_endian() ? __builtin_bswap32(v) : v;
	}
}

/* Every aligned word of [a, b) that the image holds; leader SIZE_MAX: pass 1. */
static void scan_span(struct lk *k, uint64_t a, uint64_t b, bool prior_definite, size_t leader)
{
	const struct image *img = k->img;
	size_t lo = 0, hi = img->nsegs;
	uint64_t mask = k->wsize - 1;

	if (a > UINT64_MAX - mask)
		return;
	a = (a + mask) & ~mask;
	if (a < b) {
		/* the first segment that ends after a */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct seg *s = &img->segs[mid];

			if (s->vaddr + s->size <= a && s->vaddr + s->size > s->vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
	} else {
		lo = img->nsegs;
	}
	for (; lo < img->nsegs && a < b; lo++) {
		const struct seg *s = &img->segs[lo];
		uint64_t from = a > s->vaddr ? a : s->vaddr, to = b;
		const unsigned char *p;

		if (s->vaddr >= b)
			break;
		if (s->size < to - s->vaddr)
			to = s->vaddr + s->size;
		from = (from + mask) & ~mask;
		if (to <= from)
			continue;
		p = s->data + (from - s->vaddr);
		for (uint64_t n = (to - from) / k->wsize; n--; p += k->wsize) {
			uint64_t w = load_word(k, p);

			if (w < k->lo || w >= k->hi)
				continue;
			if (k->hiding)
				mark_hidden(k, w);
			else if (leader == SIZE_MAX)
				mark(k, w, prior_definite);
			else
				mark_clique(k, w, leader);
		}
		a = to;
	}
}

/* The bytes of block i the scan reads: its user bytes, clamped below the next block. */
static uint64_t content_end(const struct lk *k, size_t i)
{
	const struct scan_block *b = &k->b[i];
	uint64_t e = b->user + b->size;

	if (e < b->user)
		e = UINT64_MAX;
	if (i + 1 < k->n) {
		uint64_t next = k->b[i + 1].user - k->b[i + 1].below;

		if (next > k->b[i + 1].user)
			next = 0;
		if (e > next)
			e = next > b->user ? next : b->user;
	}
	return e;
}

static void drain(struct lk *k, size_t leader)
{
	while (k->nwork) {
		size_t i = k->work[--k->nwork];

		k->scanned_bytes += content_end(k, i) - k->b[i].user;
		scan_span(k, k->b[i].user, content_end(k, i), k->b[i].state == ST_REACHABLE,
			  leader);
	}
}

/* Where block i's bytes end, header and contents: what the root scan skips. */
static uint64_t extent_end(const struct lk *k, size_t i)
{
	uint64_t c = content_end(k, i);

	return k->end[i] > c ? k->end[i] : c;
}

/* [a, b) outside blocks, less what the allocator says is free or its own */
static void scan_root(struct lk *k, uint64_t a, uint64_t b)
{
	const struct alloc *al = k->alloc;
	size_t i = al ? alloc_nonroot_from(al, a) : 0;

	while (a < b) {
		uint64_t to = b;

		if (al && i < al->nnonroot && al->nonroot[i].start < b) {
			if (al->nonroot[i].start <= a) {
				uint64_t e = al->nonroot[i++].end;

				to = e < b ? e : b;
				k->allocator_bytes += to - a;
				a = to;
				continue;
			}
			to = al->nonroot[i].start;
		}
		k->root_bytes += to - a;
		scan_span(k, a, to, true, SIZE_MAX);
		a = to;
	}
}

static void scan_roots(struct lk *k, const struct core_threads *th, struct leak_summary *sum)
{
	const struct image *img = k->img;

	for (size_t t = 0; t < th->n; t++)
		for (unsigned r = 0; r < th->v[t].nregs; r++)
			mark(k, th->v[t].regs[r], true);
	for (size_t si = 0; si < img->nsegs; si++) {
		const struct seg *s = &img->segs[si];
		uint64_t cur = s->vaddr, send = s->vaddr + s->size;
		size_t i;

		if (send < s->vaddr)
			send = UINT64_MAX;
		for (size_t t = 0; t < th->n; t++) {
			uint64_t sp = th->v[t].sp;

			if (!th->v[t].have_sp || sp < s->vaddr || sp >= send)
				continue;
			if (img->machine == 62 && sp >= s->vaddr + X86_64_REDZONE)
				sp -= X86_64_REDZONE;
			if (sp > cur)
				cur = sp;
			sum->stack_cut = true;
		}
		i = last_at_or_below(k, 0, k->n, cur);
		if (i == SIZE_MAX)
			i = 0;
		while (cur < send) {
			uint64_t bstart, bend;

			if (i >= k->n) {
				scan_root(k, cur, send);
				break;
			}
			bstart = k->b[i].user >= k->b[i].below ? k->b[i].user - k->b[i].below : 0;
			bend = extent_end(k, i);
			i++;
			if (bend <= cur)
				continue;
			if (bstart > cur) {
				uint64_t to = bstart < send ? bstart : send;

				scan_root(k, cur, to);
			}
			if (bend > cur)
				cur = bend;
		}
		drain(k, SIZE_MAX);
	}
}

static void classify(struct lk *k, const struct image *img, struct leak_summary *sum)
{
	struct core_threads th;

	core_threads_read(img, &th);
	sum->threads = (unsigned)th.n;
	scan_roots(k, &th, sum);
	core_threads_free(&th);
	for (size_t i = 0; i < k->n; i++) {
		if (k->b[i].state != ST_UNREACHED)
			continue;
		push(k, i);
		drain(k, i);
	}
}

/* ------------------------------------------------------------------------------ */
/* Suppressions: LeakSanitizer's format and matching. */

struct leak_supp {
	char **pat;
	uint64_t *hits;			/* stacks matched, for the summary */
	size_t n;
};

/*
 * LSan's TemplateMatch: '*' matches any run, '^' at the start anchors there, '$'
 * anchors at the end; otherwise the pattern may match anywhere in str.
 */
static bool template_match(const char *t, const char *str)
{
	bool start = false, star = false;

	if (!str || !*str)
		return false;
	if (*t == '^') {
		start = true;
		t++;
	}
	while (*t) {
		const char *tend, *spos;
		size_t len;
		char piece[512];

		if (*t == '*') {
			t++;
			start = false;
			star = true;
			continue;
		}
		if (*t == '$')
			return !*str || star;
		if (!*str)
			return false;
		tend = t + strcspn(t, "*$");
		len = (size_t)(tend - t);
		if (len >= sizeof(piece))
			len = sizeof(piece) - 1;
		memcpy(piece, t, len);
		piece[len] = 0;
		spos = strstr(str, piece);
		if (!spos || (start && spos != str))
			return false;
		str = spos + len;
		t = tend;
		start = star = false;
	}
	return true;
}

struct leak_supp *leaks_read_suppressions(const char *path, char *err, size_t errlen)
{
	char line[4096];
	struct leak_supp *s;
	unsigned lineno = 0;
	FILE *f;
	int fd = image_open_regular(path, err, errlen);

	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0) {
			snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
			close(fd);
		}
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *e;

		lineno++;
		while (isspace((unsigned char)*p))
			p++;
		e = p + strlen(p);
		while (e > p && isspace((unsigned char)e[-1]))
			*--e = 0;
		if (!*p || *p == '#')
			continue;
		if (strncmp(p, "leak:", 5) || !p[5]) {
			snprintf(err, errlen, "%s:%u: not a suppression (leak:PATTERN)", path, lineno);
			fclose(f);
			leaks_free_suppressions(s);
			return NULL;
		}
		s->pat = xrealloc(s->pat, (s->n + 1) * sizeof(*s->pat));
		s->hits = xrealloc(s->hits, (s->n + 1) * sizeof(*s->hits));
		s->pat[s->n] = xstrdup(p + 5);
		s->hits[s->n++] = 0;
	}
	fclose(f);
	return s;
}

void leaks_free_suppressions(struct leak_supp *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->pat[i]);
	free(s->pat);
	free(s->hits);
	free(s);
}

/* Does some frame of pcs match a pattern: function, file or module name. */
static bool suppressed(struct leak_supp *supp, struct sym *sym, const uint64_t *pcs,
		       unsigned n)
{
	if (!supp || !supp->n)
		return false;
	for (unsigned i = 0; i < n; i++) {
		const struct sym_pc *p;

		if (!pcs[i])
			continue;
		p = sym_lookup(sym, pcs[i], true);
		for (size_t j = 0; j < supp->n; j++) {
			const char *pat = supp->pat[j];
			/* the module as the core records it, or its file name alone */
			const char *slash = p->module ? strrchr(p->module, '/') : NULL;
			bool hit = template_match(pat, p->module) ||
				   (slash && template_match(pat, slash + 1));

			for (unsigned f = 0; f < p->nframes && !hit; f++)
				hit = template_match(pat, p->frames[f].func) ||
				      template_match(pat, p->frames[f].file);
			if (hit) {
				supp->hits[j]++;
				return true;
			}
		}
	}
	return false;
}

/* ------------------------------------------------------------------------------ */

bool leaks_parse_classes(const char *s, unsigned *mask)
{
	static const char *const names[LEAK_NCLASSES] = { "definite", "indirect", "possible",
							  "reachable" };

	*mask = 0;
	while (*s) {
		size_t len = strcspn(s, ",");
		int c;

		for (c = 0; c < LEAK_NCLASSES; c++)
			if (strlen(names[c]) == len && !strncmp(s, names[c], len))
				break;
		if (c == LEAK_NCLASSES) {
			if (len == 3 && !strncmp(s, "all", 3))
				*mask |= LEAK_MASK_ALL;
			else
				return false;
		} else {
			*mask |= 1u << c;
		}
		s += len;
		if (*s)
			s++;
	}
	return *mask != 0;
}

const char *leaks_class_name(unsigned flags)
{
	static const char *const names[LEAK_NCLASSES] = { "definitely lost", "indirectly lost",
							  "possibly lost", "still reachable" };
	unsigned c = (flags & LEAK_FLAG_MASK) >> LEAK_FLAG_SHIFT;

	return c >= 1 && c <= LEAK_NCLASSES ? names[c - 1] : NULL;
}

static enum leak_class state_class(unsigned st)
{
	switch (st) {
	case ST_REACHABLE: return LEAK_REACHABLE;
	case ST_POSSIBLE: return LEAK_POSSIBLE;
	case ST_INDIRECT: return LEAK_INDIRECT;
	default: return LEAK_DEFINITE;
	}
}

static void sat_add(uint64_t *a, uint64_t b)
{
	if (__builtin_add_overflow(*a, b, a))
		*a = UINT64_MAX;
}

/*
 * The stacks of every class's blocks, one collect per class joined with every record,
 * in one pass over the blocks: a v2 block goes in by the site id the scan kept, only a
 * v1 one (its stack lies below it) is decoded again.
 */
static void join_classes(const struct lk *k, const struct scan_result *scan,
			 struct collect cc[2 * LEAK_NCLASSES],
			 struct join_info ji[2 * LEAK_NCLASSES])
{
	struct decode_buf *buf = xmalloc(sizeof(*buf));
	int ncc = k->hide ? 2 * LEAK_NCLASSES : LEAK_NCLASSES;

	for (int c = 0; c < ncc; c++) {
		collect_init(&cc[c]);
		cc[c].opts = scan->found.opts;	/* by thread, one region: as the plain report */
		for (size_t i = 0; i < scan->found.nrecs; i++)
			collect_add(&cc[c], &scan->found.recs[i]);
	}
	for (size_t i = 0; i < k->n; i++) {
		struct decoded d;

		if (scan_block_decoded(k->img, &k->b[i], buf, &d))
			collect_add(&cc[state_class(k->b[i].state) +
					(k->hide && k->hide[i] ? LEAK_NCLASSES : 0)], &d);
	}
	free(buf);
	for (int c = 0; c < ncc; c++)
		collect_join(&cc[c], &ji[c]);
}

/* The stack of block i: a v2 block's through its site (recs joined), a v1 one's below
 * it (in buf). */
static bool block_pcs(const struct lk *k, const struct collect *recs, size_t i,
		      struct decode_buf *buf, const uint64_t **pcs, unsigned *n)
{
	const struct scan_block *b = &k->b[i];
	const struct decoded_stack *st;
	struct decoded d;

	if (b->version == 2) {
		st = b->site ? collect_site_stack(recs, b->site) : NULL;
		if (!st)
			return false;
		*pcs = st->pcs;
		*n = st->nframes;
		return true;
	}
	if (!scan_block_decoded(k->img, b, buf, &d))
		return false;
	*pcs = d.block.pcs;
	*n = d.block.nframes;
	return true;
}

/*
 * As LeakSanitizer: a suppressed leak hides what it alone holds. Every block not
 * reachable whose stack a suppression matches, and every block not reachable that
 * one of those points to (transitively, any pointer), is marked in k->hide, and
 * counts as suppressed in its class.
 */
static void hide_suppressed(struct lk *k, const struct scan_result *scan, struct sym *sym,
			    struct leak_supp *supp)
{
	struct decode_buf *buf;
	struct collect recs;
	struct join_info ji;
	uint64_t scanned = k->scanned_bytes;

	if (!supp || !supp->n || !k->n)
		return;
	k->hide = xcalloc(k->n, 1);
	collect_init(&recs);
	recs.opts = scan->found.opts;
	for (size_t i = 0; i < scan->found.nrecs; i++)
		collect_add(&recs, &scan->found.recs[i]);
	collect_join(&recs, &ji);
	buf = xmalloc(sizeof(*buf));
	for (size_t i = 0; i < k->n; i++) {
		const uint64_t *pcs;
		unsigned n;

		if (k->b[i].state == ST_REACHABLE || k->hide[i] ||
		    !block_pcs(k, &recs, i, buf, &pcs, &n) || !suppressed(supp, sym, pcs, n))
			continue;
		k->hide[i] = 1;
		push(k, i);
		k->hiding = true;
		drain(k, SIZE_MAX);
		k->hiding = false;
	}
	free(buf);
	collect_free(&recs);
	k->scanned_bytes = scanned;
}

void leaks_apply(const struct image *img, struct scan_result *scan, struct sym *sym,
		 const struct alloc *alloc, struct leak_supp *supp, unsigned mask,
		 struct leak_summary *sum)
{
	struct lk k = { .img = img, .alloc = alloc && alloc->known ? alloc : NULL, .be = img->big_endian, .wsize = img->wsize };
	struct collect cc[2 * LEAK_NCLASSES];
	struct join_info ji[2 * LEAK_NCLASSES];
	struct stacks out;
	uint64_t unknown_blocks = 0, unknown_bytes = 0;
	size_t m = 0;

	memset(sum, 0, sizeof(*sum));
	sum->mask = mask;
	sum->supp = supp;
	k.b = scan->list.v;
	k.n = scan->list.n;
	if (k.n > UINT32_MAX - 1)
		die(EXIT_NO_REPORT, "too many blocks to classify (%zu)", k.n);
	qsort(k.b, k.n, sizeof(*k.b), block_cmp);
	for (size_t i = 0; i < k.n; i++) {	/* one block per address */
		if (m && k.b[m - 1].user == k.b[i].user)
			continue;
		k.b[m] = k.b[i];
		k.b[m++].state = ST_UNREACHED;
	}
	k.n = scan->list.n = m;
	k.end = xmalloc((k.n ? k.n : 1) * sizeof(*k.end));
	for (size_t i = 0; i < k.n; i++) {
		uint64_t e = k.b[i].user + (k.b[i].size ? k.b[i].size : 1);

		if (e < k.b[i].user)
			e = UINT64_MAX;
		if (i + 1 < k.n && e > k.b[i + 1].user)
			e = k.b[i + 1].user;
		k.end[i] = e;
	}
	build_index(&k);
	classify(&k, img, sum);
	sum->root_bytes = k.root_bytes;
	sum->scanned_bytes = k.scanned_bytes;
	sum->allocator_bytes = k.allocator_bytes;
	if (alloc) {
		alloc_describe(alloc, sum->allocator, sizeof(sum->allocator));
		sum->allocator_known = alloc->known;
	}

	hide_suppressed(&k, scan, sym, supp);
	stacks_init(&out);
	join_classes(&k, scan, cc, ji);
	for (int cc_i = 0; cc_i < (k.hide ? 2 : 1) * LEAK_NCLASSES; cc_i++) {
		int c = cc_i % LEAK_NCLASSES;
		bool hidden = cc_i >= LEAK_NCLASSES;
		struct stack **all;
		size_t n;

		all = stacks_list(&cc[cc_i].stacks, &n);
		for (size_t i = 0; i < n; i++) {
			const struct stack *s = all[i];
			/* the sites' counters (calls, frees) are not split by class: left out */
			struct stack_add a = { .bytes = s->bytes, .blocks = s->blocks,
					       .est_bytes = s->est_bytes,
					       .est_blocks = s->est_blocks, .sizes = s->sizes,
					       .nsizes = s->nsizes };
			struct stack_key key = { .pcs = s->pcs, .nframes = s->nframes, .tid = s->tid,
				.flags = s->flags | (unsigned)(c + 1) << LEAK_FLAG_SHIFT };

			if (hidden || suppressed(supp, sym, s->pcs, s->nframes)) {
				sat_add(&sum->supp_bytes[c], stack_bytes(s));
				sat_add(&sum->supp_blocks[c], stack_blocks(s));
				continue;
			}
			sat_add(&sum->bytes[c], stack_bytes(s));
			sat_add(&sum->blocks[c], stack_blocks(s));
			if (!(mask & 1u << c))
				continue;
			stacks_add_group(&out, &key, &a);
		}
		if (mask & 1u << c && !hidden) {
			unknown_blocks += ji[cc_i].unknown_blocks;
			unknown_bytes += ji[cc_i].unknown_bytes;
		}
		free(all);
		collect_free(&cc[cc_i]);
	}
	stacks_free(&scan->stacks);
	scan->stacks = out;
	scan->join.unknown_blocks = unknown_blocks;
	scan->join.unknown_bytes = unknown_bytes;
	free(k.hide);
	free(k.end);
	free(k.rkey);
	free(k.cell);
	free(k.work);
}

void leaks_write_summary(const struct leak_summary *sum, FILE *f)
{
	static const char *const label[LEAK_NCLASSES] = { "definitely lost", "indirectly lost",
							  "  possibly lost", "still reachable" };
	uint64_t sb = 0, sn = 0;
	size_t used = 0;

	fprintf(f, "  roots:      registers of %u threads, %llu bytes of memory outside blocks%s\n",
		sum->threads, (unsigned long long)sum->root_bytes,
		sum->stack_cut ? " (stacks from sp up)" : "");
	if (sum->allocator_known)
		fprintf(f, "  allocator:  %s; %llu bytes of free chunks and its metadata are no "
			"roots\n", sum->allocator, (unsigned long long)sum->allocator_bytes);
	else if (sum->allocator[0])
		fprintf(f, "  allocator:  %s\n", sum->allocator);
	fprintf(f, "LEAK SUMMARY:\n");
	for (int c = 0; c < LEAK_NCLASSES; c++) {
		fprintf(f, "  %s: %llu bytes in %llu blocks%s\n", label[c],
			(unsigned long long)sum->bytes[c], (unsigned long long)sum->blocks[c],
			sum->mask & 1u << c ? "" : " (not shown)");
		sb += sum->supp_bytes[c];
		sn += sum->supp_blocks[c];
	}
	for (size_t i = 0; sum->supp && i < sum->supp->n; i++)
		used += sum->supp->hits[i] != 0;
	if (sum->supp)
		fprintf(f, "       suppressed: %llu bytes in %llu blocks (%zu of %zu patterns "
			"matched)\n", (unsigned long long)sb, (unsigned long long)sn, used,
			sum->supp->n);
}
