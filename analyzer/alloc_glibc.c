/*
 * glibc malloc's chunks in a dump, without debug symbols: the version from libc's
 * banner, main_arena from the shape of its bins in libc's data, the other arenas by
 * its next links and their heap_info heaps, mmapped chunks from heapprof's blocks and
 * from mapping starts; then every heap walked chunk by chunk. Knows 2.27 to 2.41 on
 * 64-bit targets; every byte is read with image_read. One row of alloc.c's readers,
 * the one file that says glibc's words (tcache, fastbins, mallinfo2) for alloc.h's.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "alloc_int.h"
#include "image.h"
#include "rd.h"
#include "scan.h"
#include "sym.h"
#include "util.h"

#define W 8				/* SIZE_SZ: 64-bit targets only */
#define ALIGN 16			/* MALLOC_ALIGNMENT */
#define MINSIZE 32
#define HDR (2 * W)			/* CHUNK_HDR_SZ */
#define PREV_INUSE 1u
#define IS_MMAPPED 2u
#define SIZE_BITS 7u
#define NFASTBINS 10
#define NBINS 128
#define HEAP_MAX ((uint64_t)64 << 20)	/* 2 * DEFAULT_MMAP_THRESHOLD_MAX */
#define PAGE 4096

/* struct malloc_state since 2.27: mutex, flags, have_fastchunks, fastbinsY[10], top,
 * last_remainder, bins[254], binmap[4], next, next_free, attached_threads,
 * system_mem, max_system_mem */
#define MS_FAST 16
#define MS_TOP 96
#define MS_BINS 112
#define MS_NEXT 2160
#define MS_SYSMEM 2184
#define MS_MAXSYSMEM 2192
#define MS_SIZE 2200

#define TCACHE_BINS 64

/* glibc's words for alloc.h's kinds */
#define ALLOC_TCACHE ALLOC_CACHED		/* a thread's tcache */
#define ALLOC_FASTBIN ALLOC_FREE_UNJOINED	/* a fastbin, till malloc_consolidate */

struct tagged {
	uint64_t chunk;
	uint32_t idx;		/* in the blocks given to alloc_open */
};

/*
 * A heap's walk reads a word or two per chunk, going up: through an image_window, as
 * the scan and the graph read. The window starts at a page and doubles while the walk
 * stays in it or just past it.
 */
#define WIN_MIN 4096
#define WIN_MAX ((size_t)1 << 20)

struct gl {
	const struct image *img;
	struct alloc *a;
	int minor;			/* glibc 2.minor */
	const struct scan_blocks *blocks; /* as given to alloc_open */
	uint32_t *tag;			/* heapprof blocks (indices in blocks) by chunk
					 * address: 4 bytes a block, not 16 */
	size_t ntag;
	struct image_window win;
	size_t win_len;			/* the last read's length */
	size_t chunk_cap, nr_cap;
	uint64_t main_top;		/* main_arena.top, 0 if its heap was not walked */
	uint64_t heap_info;		/* sizeof(heap_info): 2.35 added pagesize */
	uint64_t arenas[1024];		/* malloc_state addresses; [0] main_arena */
	unsigned narenas;
	struct seen {			/* the heap_infos walked: each once, however a
					 * dump's prev links loop (open-addressed) */
		uint64_t *v;
		size_t n, cap;
	} heaps_seen;
	struct alloc_range main_heap;	/* the brk heap walked, or empty */
};

static bool word(const struct gl *g, uint64_t addr, uint64_t *v)
{
	if (!image_read(g->img, addr, v, W))
		return false;
	if (g->img->big_endian != host_big_endian())
		*v = __builtin_bswap64(*v);
	return true;
}

static bool refill(struct gl *g, uint64_t addr)
{
	const struct seg *s = image_find(g->img, addr);
	struct image_window *w = &g->win;

	if (!s)
		return false;
	/* going on from the last window: read more at once; after a jump, a page */
	g->win_len = g->win_len && w->seg && addr >= w->end && addr - w->end < g->win_len ?
		(2 * g->win_len < WIN_MAX ? 2 * g->win_len : WIN_MAX) : WIN_MIN;
	return image_window_fill(w, s, addr, g->win_len);
}

/* word() for a heap's walk: through g->win, else as word() does */
static inline bool heap_word(struct gl *g, uint64_t addr, uint64_t *v)
{
	if (!image_window_has(&g->win, addr, W) &&
	    (!refill(g, addr) || !image_window_has(&g->win, addr, W)))
		return word(g, addr, v);
	memcpy(v, g->win.p + (addr - g->win.start), W);
	if (g->img->big_endian != host_big_endian())
		*v = __builtin_bswap64(*v);
	return true;
}

static __attribute__((format(printf, 2, 3))) void problem(struct gl *g, const char *fmt, ...)
{
	struct alloc *a = g->a;
	va_list ap;

	if (a->nproblems < ALLOC_MAX_PROBLEMS) {
		va_start(ap, fmt);
		vsnprintf(a->problems[a->nproblems], sizeof(a->problems[0]), fmt, ap);
		va_end(ap);
	}
	a->nproblems++;
}

static void nonroot(struct gl *g, uint64_t start, uint64_t end)
{
	struct alloc *a = g->a;

	if (end <= start)
		return;
	if (a->nnonroot && a->nonroot[a->nnonroot - 1].end == start) {
		a->nonroot[a->nnonroot - 1].end = end;	/* a walk goes up: most merge here */
		return;
	}
	if (a->nnonroot == g->nr_cap)
		a->nonroot = xrealloc(a->nonroot, (g->nr_cap = g->nr_cap ? 2 * g->nr_cap : 256) *
						  sizeof(*a->nonroot));
	a->nonroot[a->nnonroot++] = (struct alloc_range){ start, end };
}

/* Remember x (not 0); false if it was seen before. */
static bool seen_add(struct seen *s, uint64_t x)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		struct seen old = *s;

		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = xcalloc(s->cap, sizeof(*s->v));
		s->n = 0;
		for (size_t k = 0; k < old.cap; k++)
			if (old.v[k])
				seen_add(s, old.v[k]);
		free(old.v);
	}
	for (i = (x >> 12 ^ x >> 26) & (s->cap - 1); s->v[i]; i = (i + 1) & (s->cap - 1))
		if (s->v[i] == x)
			return false;
	s->v[i] = x;
	s->n++;
	return true;
}

static void add_chunk(struct gl *g, uint64_t addr, uint64_t size, enum alloc_kind k, bool mm,
		      uint32_t block)
{
	struct alloc *a = g->a;

	if (a->nchunks == g->chunk_cap)
		a->chunks = xrealloc(a->chunks, (g->chunk_cap = g->chunk_cap ? 2 * g->chunk_cap : 1024) *
						sizeof(*a->chunks));
	a->chunks[a->nchunks++] = (struct alloc_chunk){ addr, size, (uint8_t)k, mm, block };
}

static uint64_t tag_chunk(const struct scan_block *b);

/* The chunk address of tag i */
static inline uint64_t tag_at(const struct gl *g, size_t i)
{
	return tag_chunk(&g->blocks->v[g->tag[i]]);
}

/* The first tag at or above chunk */
static size_t tag_from(const struct gl *g, uint64_t chunk)
{
	size_t lo = 0, hi = g->ntag;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tag_at(g, mid) < chunk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool is_tagged(const struct gl *g, uint64_t chunk)
{
	size_t i = tag_from(g, chunk);

	return i < g->ntag && tag_at(g, i) == chunk;
}

/* ------------------------------------------------------------------------------ */
/* The version, from the banner in libc's image or in its file */

static bool parse_banner(const unsigned char *p, size_t n, int *minor)
{
	static const char key[] = "GNU C Library";
	const unsigned char *b = memmem(p, n, key, sizeof(key) - 1);
	const char *v;
	char line[256];
	size_t len;
	int maj;

	if (!b)
		return false;
	len = (size_t)(p + n - b) < sizeof(line) - 1 ? (size_t)(p + n - b) : sizeof(line) - 1;
	memcpy(line, b, len);
	line[len] = 0;
	v = strstr(line, "release version ");
	return v && sscanf(v + 16, "%d.%d", &maj, minor) == 2 && maj == 2;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Does path lie under the directory dir? */
static bool under_dir(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n && !strncmp(path, dir, n) && path[n] == '/';
}

/*
 * The libc file: its banner, and whether its build-id is the module's. SYSROOT/path,
 * unless the core names a path already under SYSROOT: a qemu-user guest's link_map
 * names the host's path of the target's libc (/usr/s390x-linux-gnu/lib/libc.so.6).
 */
static bool version_from_file(struct gl *g, const struct sym_module_info *m, const char *sysroot)
{
	char path[4096], err[512];
	unsigned char id[64], *buf = NULL;
	size_t idlen = 0, len = 0, cap = 0;
	const char *file = sym_libc_named(m->path) ? m->path : m->name;	/* not a debug file */
	ssize_t r;
	int fd;

	if (sysroot && under_dir(file, sysroot))
		sysroot = NULL;
	snprintf(path, sizeof(path), "%s%s", sysroot ? sysroot : "", file);
	fd = image_open_regular(path, err, sizeof(err));
	if (fd < 0) {
		snprintf(g->a->reason, sizeof(g->a->reason), "no version: %.200s", err);
		return false;
	}
	for (;;) {
		if (len == cap)
			buf = xrealloc(buf, cap = cap ? 2 * cap : (size_t)4 << 20);
		r = read(fd, buf + len, cap - len);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	for (const char *h = m->build_id; h[0] && h[1] && idlen < sizeof(id); h += 2)
		id[idlen++] = (unsigned char)(hexval(h[0]) << 4 | hexval(h[1]));
	if (idlen && !memmem(buf, len, id, idlen)) {
		snprintf(g->a->reason, sizeof(g->a->reason), "'%.160s' is not the libc the dump ran: "
			 "its build-id differs", path);
		free(buf);
		return false;
	}
	if (!parse_banner(buf, len, &g->minor)) {
		snprintf(g->a->reason, sizeof(g->a->reason), "no glibc version in '%.200s'", path);
		free(buf);
		return false;
	}
	free(buf);
	return true;
}

/* libc's module, or NULL: by the name the core gives it (the file found for it may be
 * its debug file, by build-id, when the library itself is not at hand) */
static const struct sym_module_info *find_libc(const struct sym_module_info *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (sym_libc_named(m[i].name))
			return &m[i];
	return NULL;
}

static bool version_in_image(struct gl *g, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < g->img->nsegs; i++) {
		const struct seg *s = &g->img->segs[i];
		uint64_t from = s->vaddr > start ? s->vaddr : start;
		uint64_t to = s->vaddr + s->size < end ? s->vaddr + s->size : end;

		if (from < to && parse_banner(s->data + (from - s->vaddr), to - from, &g->minor))
			return true;
	}
	return false;
}

/* ------------------------------------------------------------------------------ */
/* Arenas */

/* Does a malloc_state sit at s: bins empty (pointing at themselves) or both linked,
 * a top chunk, system_mem in pages? */
static bool arena_at(const struct gl *g, uint64_t s)
{
	uint64_t top, sys, maxsys, next;
	unsigned empty = 0;

	for (unsigned i = 1; i < NBINS; i++) {
		uint64_t at = s + MS_BINS + (uint64_t)(i - 1) * 2 * W, fd, bk;

		if (!word(g, at, &fd) || !word(g, at + W, &bk))
			return false;
		if (fd == at - HDR && bk == at - HDR)
			empty++;
		else if (!fd || !bk || fd == at - HDR || bk == at - HDR || (fd | bk) & (ALIGN - 1))
			return false;
	}
	return empty >= 16 && word(g, s + MS_TOP, &top) && top && !(top & (ALIGN - 1)) &&
	       word(g, s + MS_SYSMEM, &sys) && word(g, s + MS_MAXSYSMEM, &maxsys) &&
	       word(g, s + MS_NEXT, &next) && next && sys && !(sys % PAGE) && maxsys >= sys;
}

/* main_arena: the one malloc_state in libc's data */
static uint64_t find_main_arena(const struct gl *g, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < g->img->nsegs; i++) {
		const struct seg *sg = &g->img->segs[i];
		uint64_t from = sg->vaddr > start ? sg->vaddr : start;
		uint64_t to = sg->vaddr + sg->size < end ? sg->vaddr + sg->size : end;

		for (uint64_t a = (from + W - 1) & ~(uint64_t)(W - 1); a + 2 * W <= to; a += W) {
			uint64_t fd, bk;

			if (!word(g, a, &fd) || fd != a - HDR || !word(g, a + W, &bk) || bk != fd)
				continue;
			/* an empty bin: bin i of a state at a - MS_BINS - 16 (i - 1) */
			for (unsigned b = 1; b < NBINS; b++) {
				uint64_t s = a - MS_BINS - (uint64_t)(b - 1) * 2 * W;

				if (s >= start && arena_at(g, s))
					return s;
			}
			a += W;	/* no state around this empty bin: on past its pair */
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------------ */
/* Walking a heap */

/*
 * The size field of the chunk at c as the scan saw it (scan_chunk_word), when a
 * tagged block at or above tag i starts there: a tagged chunk's walk reads nothing.
 */
static bool memo_word(const struct gl *g, size_t i, uint64_t c, uint64_t *sw)
{
	while (i < g->ntag && tag_at(g, i) < c)
		i++;
	if (i == g->ntag || tag_at(g, i) != c)
		return false;
	return scan_chunk_word(&g->blocks->v[g->tag[i]], sw);
}

static void add_span(struct gl *g, uint64_t start, uint64_t end)
{
	if (g->a->nspans % 16 == 0)
		g->a->spans = xrealloc(g->a->spans, (g->a->nspans + 16) * sizeof(*g->a->spans));
	g->a->spans[g->a->nspans++] = (struct alloc_range){ start, end };
}

static void walk_heap(struct gl *g, const char *what, uint64_t start, uint64_t end, uint64_t top)
{
	uint64_t p = start;
	size_t ti = tag_from(g, start);	/* the walk goes up: so do the tags it meets */

	g->a->st.heaps++;
	if (g->a->nheaps % 16 == 0)
		g->a->heaps = xrealloc(g->a->heaps, (g->a->nheaps + 16) * sizeof(*g->a->heaps));
	g->a->heaps[g->a->nheaps++] = (struct alloc_range){ start, end };
	while (p < end) {
		uint64_t sw, sz, nsw = PREV_INUSE;
		uint32_t t = ALLOC_NO_BLOCK;
		enum alloc_kind k;

		while (ti < g->ntag && tag_at(g, ti) < p)
			ti++;
		if (!memo_word(g, ti, p, &sw) && !heap_word(g, p + W, &sw)) {
			problem(g, "%s: the chunk at %#llx is not in the dump", what,
				(unsigned long long)p);
			goto unwalked;
		}
		sz = sw & ~(uint64_t)SIZE_BITS;
		if (p == top) {
			if (sz != end - p)
				problem(g, "%s: the top chunk at %#llx has size %#llx, the heap ends "
					"%#llx after it", what, (unsigned long long)p,
					(unsigned long long)sz, (unsigned long long)(end - p));
			add_chunk(g, p, end - p, ALLOC_TOP, false, ALLOC_NO_BLOCK);
			nonroot(g, p + W, end);
			return;
		}
		if (!sz && end - p <= MINSIZE) {	/* a non-main heap's closing fencepost */
			add_chunk(g, p, end - p, ALLOC_FENCE, false, ALLOC_NO_BLOCK);
			nonroot(g, p + W, end);
			return;
		}
		if (sz < HDR || sz % ALIGN || sz > end - p || (sw & IS_MMAPPED)) {
			problem(g, "%s: the chunk at %#llx has a bad size field %#llx", what,
				(unsigned long long)p, (unsigned long long)sw);
			goto unwalked;
		}
		if (p + sz < end && !memo_word(g, ti, p + sz, &nsw) &&
		    !heap_word(g, p + sz + W, &nsw)) {
			problem(g, "%s: the chunk at %#llx is not in the dump", what,
				(unsigned long long)(p + sz));
			goto unwalked;
		}
		if (sz == HDR)
			k = ALLOC_FENCE;
		else if (!(nsw & PREV_INUSE))
			k = ALLOC_FREE;
		else {
			while (ti < g->ntag && tag_at(g, ti) < p)
				ti++;
			t = ti < g->ntag && tag_at(g, ti) == p ? g->tag[ti] : ALLOC_NO_BLOCK;
			k = t != ALLOC_NO_BLOCK ? ALLOC_TAGGED : ALLOC_UNTAGGED;
		}
		add_chunk(g, p, sz, k, false, t);
		/* a free chunk's bytes and the next one's prev_size are malloc's; an
		 * in-use chunk's size field is, its prev_size the previous chunk's data */
		nonroot(g, p + W, k == ALLOC_FREE || k == ALLOC_FENCE ? p + sz + W : p + HDR);
		/* past a block's end, up to the next chunk's size field, is slack the
		 * program never wrote since: what an earlier, larger block left there
		 * is no root (memcheck scans a block's own bytes only) */
		if (k == ALLOC_TAGGED) {
			const struct scan_block *b = &g->blocks->v[t];

			if (b->size < sz && b->below < sz && HDR + b->below + b->size < sz + W)
				nonroot(g, p + HDR + b->below + b->size, p + sz + W);
		}
		if (p < top && p + sz > top) {
			problem(g, "%s: the chunk at %#llx overlaps the top chunk", what,
				(unsigned long long)p);
			goto unwalked;
		}
		p += sz;
	}
	if (top >= start && top < end && p != top)
		problem(g, "%s: the walk did not reach the top chunk at %#llx", what,
			(unsigned long long)top);
	return;
unwalked:
	g->a->unwalked_bytes += end - p;
}

/* The main arena's brk heap: it ends with the top chunk, system_mem bytes long. */
static void walk_main(struct gl *g, uint64_t s)
{
	uint64_t top, tsz, sys, start, end;

	if (!word(g, s + MS_TOP, &top) || !word(g, top + W, &tsz) ||
	    !word(g, s + MS_SYSMEM, &sys)) {
		problem(g, "main arena: its top chunk is not in the dump");
		return;
	}
	g->a->st.arena_bytes += sys;
	end = top + (tsz & ~(uint64_t)SIZE_BITS);
	if (end < top || end - (top & ~(uint64_t)(PAGE - 1)) > sys + PAGE || sys > end) {
		problem(g, "main arena: top chunk %#llx, size %#llx, system_mem %#llx disagree",
			(unsigned long long)top, (unsigned long long)tsz, (unsigned long long)sys);
		return;
	}
	start = (end - sys + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
	g->main_top = top;
	g->main_heap = (struct alloc_range){ start, end };
	add_span(g, start, end);
	walk_heap(g, "main arena", start, end, top);
}

/*
 * Another arena: its heaps from the top's back to the first, which holds the state.
 * glibc maps each heap at a multiple of HEAP_MAX and no larger, so heaps at distinct
 * aligned addresses never overlap: with each heap_info walked once, and none inside
 * the brk heap, every chunk is read from bytes of the dump no other walk reads, and
 * the chunks are bounded by the dump's size whatever its links say.
 */
static bool walk_one_heap(struct gl *g, const char *what, uint64_t s, uint64_t h, uint64_t top,
			  uint64_t *prev)
{
	uint64_t ar, size, start, first = s - g->heap_info;

	if (!word(g, h, &ar) || ar != s || !word(g, h + W, prev) ||
	    !word(g, h + 2 * W, &size) || size > HEAP_MAX ||
	    (h != first && (*prev & (HEAP_MAX - 1))) ||
	    (h < g->main_heap.end && h + size > g->main_heap.start)) {
		problem(g, "%s: the heap_info at %#llx is damaged", what, (unsigned long long)h);
		return false;
	}
	if (!seen_add(&g->heaps_seen, h)) {
		problem(g, "%s: the heap chain loops back to the heap_info at %#llx: each heap "
			"walked once", what, (unsigned long long)h);
		return false;
	}
	if (h == first) {
		start = (s + MS_SIZE + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
		nonroot(g, s + MS_SIZE, start);
	} else {
		start = h + g->heap_info;
		nonroot(g, h, start);
	}
	add_span(g, h, h + HEAP_MAX);
	walk_heap(g, what, start, h + size, top);
	return true;
}

static void walk_other(struct gl *g, uint64_t s, unsigned n)
{
	uint64_t top, sys, h, ar, prev, first = s - g->heap_info;
	char what[64];

	snprintf(what, sizeof(what), "arena %u at %#llx", n, (unsigned long long)s);
	if ((first & (HEAP_MAX - 1)) || !word(g, first, &ar) || ar != s ||
	    !word(g, s + MS_TOP, &top) || !word(g, s + MS_SYSMEM, &sys)) {
		problem(g, "%s: no heap_info before it", what);
		return;
	}
	g->a->st.arena_bytes += sys;
	nonroot(g, first, s + MS_SIZE);
	for (h = top & ~(HEAP_MAX - 1); h != first; h = prev) {
		if (!h) {
			problem(g, "%s: the heap chain ends before its first heap", what);
			break;
		}
		if (!walk_one_heap(g, what, s, h, top, &prev))
			break;
	}
	/* the first heap is the state's: walked even when the chain to it broke */
	walk_one_heap(g, what, s, first, top, &prev);
}

/* The arena of each next link after main_arena's, each walked once: a link back to one
 * walked already ends the list as main_arena's address does. */
static void walk_arenas(struct gl *g)
{
	const unsigned max = sizeof(g->arenas) / sizeof(g->arenas[0]);
	uint64_t next;

	for (uint64_t s = g->arenas[0]; word(g, s + MS_NEXT, &next) && next != g->arenas[0];
	     s = next) {
		for (unsigned i = 1; i < g->narenas; i++)
			if (g->arenas[i] == next) {
				problem(g, "the arena list loops back from %#llx to arena %u at "
					"%#llx: each arena walked once", (unsigned long long)s, i,
					(unsigned long long)next);
				return;
			}
		if (g->narenas == max) {
			problem(g, "more than %u arenas: the list is not walked past %#llx", max,
				(unsigned long long)s);
			return;
		}
		if (!arena_at(g, next)) {
			problem(g, "arena %u: the link to %#llx leads to no arena", g->narenas,
				(unsigned long long)next);
			return;
		}
		g->arenas[g->narenas] = next;
		walk_other(g, next, g->narenas);
		g->narenas++;
	}
}

/* ------------------------------------------------------------------------------ */
/* tcache and fastbins: chunks free to the program that malloc counts in use */

static uint64_t reveal(const struct gl *g, uint64_t pos, uint64_t v)
{
	return g->minor >= 32 ? (pos >> 12) ^ v : v;	/* safe-linking */
}

static struct alloc_chunk *chunk_at(const struct gl *g, uint64_t addr)
{
	const struct alloc_chunk *c = alloc_find(g->a, addr);

	return c && c->addr == addr ? (struct alloc_chunk *)c : NULL;
}

/*
 * Follow a list of n at most; mark its chunks. false if its head is no chunk of size.
 * A chunk marked already ends it: a list that loops, or two lists that join, count
 * each chunk once, and all the lists together take one step per chunk.
 */
static bool follow(struct gl *g, uint64_t chunk, uint64_t size, uint64_t n, enum alloc_kind k,
		   const char *what)
{
	for (uint64_t i = 0; chunk && i < n; i++) {
		struct alloc_chunk *c = chunk_at(g, chunk);
		uint64_t v;

		if (!c || c->size != size || (c->kind != ALLOC_UNTAGGED && c->kind != k)) {
			if (i)
				problem(g, "%s: a link to %#llx, no free chunk of size %llu",
					what, (unsigned long long)chunk, (unsigned long long)size);
			return i > 0;
		}
		if (c->kind == k) {
			problem(g, "%s: a link back to %#llx, a chunk in a list already: each "
				"chunk counted once", what, (unsigned long long)chunk);
			return true;
		}
		c->kind = (uint8_t)k;
		if (!word(g, chunk + HDR, &v))
			return true;
		chunk = reveal(g, chunk + HDR, v);
		if (chunk)
			chunk -= (k == ALLOC_TCACHE ? HDR : 0);	/* tcache links point at memory */
	}
	return true;
}

/* A tcache_perthread_struct: counts[64] (char before 2.30), entries[64]. */
static bool tcache_at(struct gl *g, struct alloc_chunk *c)
{
	unsigned cw = g->minor >= 30 ? 2 : 1;
	uint64_t mem = c->addr + HDR, ent = mem + TCACHE_BINS * cw;
	uint16_t counts[TCACHE_BINS];
	uint64_t e[TCACHE_BINS];

	/* request2size(sizeof(tcache_perthread_struct)): 0x290, or 0x250 before 2.30 */
	if (c->kind != ALLOC_UNTAGGED ||
	    c->size != ((ent + TCACHE_BINS * W - mem + W + ALIGN - 1) & ~(uint64_t)(ALIGN - 1)))
		return false;
	for (unsigned i = 0; i < TCACHE_BINS; i++) {
		uint8_t b[2];

		if (!image_read(g->img, mem + i * cw, b, cw) || !word(g, ent + i * W, &e[i]))
			return false;
		counts[i] = cw == 2 ? (uint16_t)(g->img->big_endian ? b[0] << 8 | b[1]
								    : b[1] << 8 | b[0]) : b[0];
		if (!e[i] != !counts[i] || (e[i] & (ALIGN - 1)))
			return false;
	}
	for (unsigned i = 0; i < TCACHE_BINS; i++) {
		struct alloc_chunk *h = e[i] ? chunk_at(g, e[i] - HDR) : NULL;

		if (e[i] && (!h || h->size != MINSIZE + i * ALIGN || h->kind != ALLOC_UNTAGGED))
			return false;
	}
	for (unsigned i = 0; i < TCACHE_BINS; i++)
		if (e[i])
			follow(g, e[i] - HDR, MINSIZE + i * ALIGN, counts[i], ALLOC_TCACHE, "tcache");
	return true;
}

static int chunk_cmp(const void *x, const void *y)
{
	const struct alloc_chunk *a = x, *b = y;

	return (a->addr > b->addr) - (a->addr < b->addr);
}

static int range_cmp(const void *x, const void *y)
{
	const struct alloc_range *a = x, *b = y;

	return (a->start > b->start) - (a->start < b->start);
}

static void mark_cached(struct gl *g)
{
	size_t n = g->a->nchunks;

	for (size_t i = 0; i < n; i++)
		if (g->a->chunks[i].kind == ALLOC_UNTAGGED && tcache_at(g, &g->a->chunks[i])) {
			struct alloc_chunk *c = &g->a->chunks[i];

			nonroot(g, c->addr + W, c->addr + c->size + W);
		}
	for (unsigned a = 0; a < g->narenas; a++)
		for (unsigned i = 0; i < NFASTBINS; i++) {
			uint64_t p;
			char what[64];

			snprintf(what, sizeof(what), "fastbin %u of arena %#llx", i,
				 (unsigned long long)g->arenas[a]);
			if (word(g, g->arenas[a] + MS_FAST + i * W, &p) && p &&
			    !follow(g, p, MINSIZE + i * ALIGN, g->a->nchunks, ALLOC_FASTBIN, what))
				problem(g, "%s: %#llx is no chunk", what, (unsigned long long)p);
		}
	for (size_t i = 0; i < n; i++) {
		const struct alloc_chunk *c = &g->a->chunks[i];

		if (c->kind == ALLOC_TCACHE || c->kind == ALLOC_FASTBIN)
			nonroot(g, c->addr + W, c->addr + c->size + W);
	}
}

/* ------------------------------------------------------------------------------ */
/* mmapped chunks */

static void mmapped(struct gl *g, uint64_t c, uint64_t size, uint64_t front,
		    uint32_t t)
{
	add_chunk(g, c, size, t != ALLOC_NO_BLOCK ? ALLOC_TAGGED : ALLOC_UNTAGGED, true, t);
	nonroot(g, c - front, c + HDR);
	g->a->st.mmapped_bytes += size + front;
	g->a->st.mmapped_chunks++;
}

static bool in_heaps(const struct alloc *a, uint64_t p)
{
	for (size_t i = 0; i < a->nheaps; i++)
		if (p >= a->heaps[i].start && p < a->heaps[i].end)
			return true;
	return false;
}

static void find_mmapped(struct gl *g)
{
	size_t nh = g->a->nheaps, j = 0;
	struct alloc_range *h = xmalloc((nh ? nh : 1) * sizeof(*h));

	/* the blocks in the heaps are skipped a heap at a time: no read for them */
	if (nh) {
		memcpy(h, g->a->heaps, nh * sizeof(*h));
		qsort(h, nh, sizeof(*h), range_cmp);
	}
	for (size_t i = 0; i < g->ntag; i++) {
		uint64_t c = tag_at(g, i), ps, sw;

		while (j < nh && h[j].end <= c)
			j++;
		if (j < nh && c >= h[j].start) {
			i = tag_from(g, h[j].end) - 1;
			continue;
		}
		if (word(g, c, &ps) && word(g, c + W, &sw) && (sw & IS_MMAPPED) &&
		    !(((sw & ~(uint64_t)SIZE_BITS) + ps) % PAGE))
			mmapped(g, c, sw & ~(uint64_t)SIZE_BITS, ps, g->tag[i]);
	}
	free(h);
	/* untagged ones start their mapping: prev_size 0, size | IS_MMAPPED in pages */
	for (size_t i = 0; i < g->img->nsegs; i++) {
		const struct seg *s = &g->img->segs[i];
		uint64_t p = s->vaddr, end = s->vaddr + s->size;

		while (p + HDR <= end) {
			uint64_t ps, sw, sz;

			if (!word(g, p, &ps) || !word(g, p + W, &sw) || ps || (sw & SIZE_BITS) != IS_MMAPPED)
				break;
			sz = sw & ~(uint64_t)SIZE_BITS;
			if (!sz || sz % PAGE || sz > end - p || in_heaps(g->a, p))
				break;
			if (!is_tagged(g, p))
				mmapped(g, p, sz, 0, ALLOC_NO_BLOCK);
			p += sz;
		}
	}
}

/* ------------------------------------------------------------------------------ */

/*
 * By chunk address, stable (the first of a list's duplicates stays first): a radix
 * sort a byte at a time, skipping the bytes every address shares, since a qsort of
 * a million blocks took a tenth of --memory's time.
 */
static void sort_tags(struct tagged *v, size_t n)
{
	size_t (*count)[256] = xcalloc(8, sizeof(*count));
	struct tagged *tmp = xmalloc((n ? n : 1) * sizeof(*tmp)), *src = v, *dst = tmp, *x;

	for (size_t i = 0; i < n; i++)
		for (unsigned b = 0; b < 8; b++)
			count[b][(v[i].chunk >> (8 * b)) & 255]++;
	for (unsigned b = 0; b < 8 && n; b++) {
		size_t at = 0;

		if (count[b][(v[0].chunk >> (8 * b)) & 255] == n)
			continue;
		for (unsigned k = 0; k < 256; k++) {
			size_t c = count[b][k];

			count[b][k] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[b][(src[i].chunk >> (8 * b)) & 255]++] = src[i];
		x = src;
		src = dst;
		dst = x;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	free(count);
}

/* The chunk a tagged block is in: none for a slab table's block (below 0), which lies
 * in an allocator's pool of its own, not in a chunk of malloc's. */
static uint64_t tag_chunk(const struct scan_block *b)
{
	return b->below && b->user >= b->below + HDR ? b->user - b->below - HDR : 0;
}

/*
 * The scan lists blocks in one ascending run per thread: merged straight into g->tag
 * when they are few (a look at each run's head per block), else copied and sorted.
 */
#define MERGE_WAYS 8

static size_t merge_tags(struct gl *g, const struct scan_blocks *b)
{
	size_t head[MERGE_WAYS], end[MERGE_WAYS], k = 0, m = 0, n = b->n;
	uint64_t prev = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t c = tag_chunk(&b->v[i]);

		if (!c)
			continue;
		if (k && c >= prev) {
			end[k - 1] = i + 1;
		} else {
			if (k == MERGE_WAYS)
				return SIZE_MAX;
			head[k] = i;
			end[k++] = i + 1;
		}
		prev = c;
	}
	for (;;) {
		uint64_t best = UINT64_MAX;
		size_t w = k;

		for (size_t r = 0; r < k; r++) {
			uint64_t c;

			while (head[r] < end[r] && !(c = tag_chunk(&b->v[head[r]])))
				head[r]++;	/* a block below its header's reach: no chunk */
			if (head[r] < end[r] && c < best)
				best = c, w = r;
		}
		if (w == k)
			return m;
		g->tag[m++] = (uint32_t)head[w]++;
	}
}

static void tag_blocks(struct gl *g, const struct scan_blocks *b)
{
	size_t m;

	g->tag = xmalloc((b->n ? b->n : 1) * sizeof(*g->tag));
	m = b->n < ALLOC_NO_BLOCK ? merge_tags(g, b) : SIZE_MAX;
	if (m == SIZE_MAX) {	/* out of order: sorted with their addresses beside them */
		struct tagged *v = xmalloc((b->n ? b->n : 1) * sizeof(*v));

		m = 0;
		for (size_t i = 0; i < b->n && i < ALLOC_NO_BLOCK; i++)
			if (tag_chunk(&b->v[i]))
				v[m++] = (struct tagged){ tag_chunk(&b->v[i]), (uint32_t)i };
		sort_tags(v, m);
		for (size_t i = 0; i < m; i++)
			g->tag[i] = v[i].idx;
		free(v);
	}
	g->ntag = 0;
	for (size_t i = 0; i < m; i++)
		if (!g->ntag || tag_at(g, g->ntag - 1) != tag_at(g, i))
			g->tag[g->ntag++] = g->tag[i];
	/* most chunks hold a block: room for them all and some free ones, grown once */
	g->chunk_cap = g->ntag + g->ntag / 4 + 1024;
	g->a->chunks = xmalloc(g->chunk_cap * sizeof(*g->a->chunks));
}

/* mtrim: a chunk longer than a page past its struct malloc_chunk (6 words) gives its
 * page-aligned rest, in whole pages, to madvise(MADV_DONTNEED) */
static uint64_t run_trim(uint64_t start, uint64_t end)
{
	uint64_t pal = (start + 6 * W + PAGE - 1) & ~(uint64_t)(PAGE - 1);

	if (end - start > PAGE - 1 + 6 * W && end > pal)
		return (end - pal) & ~(uint64_t)(PAGE - 1);
	return 0;
}

static bool consolidates(const struct alloc_chunk *c)
{
	return !c->mmapped && (c->kind == ALLOC_FREE || c->kind == ALLOC_FASTBIN ||
			       c->kind == ALLOC_TOP);
}

/*
 * What malloc_trim(0) would give back: malloc_consolidate first (fastbin chunks join
 * their free neighbours, or the top), then mtrim madvises the whole pages of each
 * free chunk past its struct malloc_chunk (48 bytes), then systrim shrinks the main
 * arena's top to MINSIZE + 1 in whole pages. Other arenas' tops stay.
 */
static void trim_estimate(struct gl *g)
{
	const struct alloc *a = g->a;
	struct alloc_stats *st = &g->a->st;

	for (size_t i = 0; i < a->nchunks;) {
		uint64_t start = a->chunks[i].addr, end = start, top = 0;

		if (!consolidates(&a->chunks[i])) {
			i++;
			continue;
		}
		for (; i < a->nchunks && a->chunks[i].addr == end && consolidates(&a->chunks[i]); i++) {
			if (a->chunks[i].kind == ALLOC_TOP)
				top = a->chunks[i].addr;
			end += a->chunks[i].size;
		}
		if (top) {
			if (top == g->main_top && end - start > MINSIZE + 1)
				st->trim_top_bytes += (end - start - MINSIZE - 1) & ~(uint64_t)(PAGE - 1);
			continue;
		}
		st->trim_pages_bytes += run_trim(start, end);
	}
}
static void sum_up(struct gl *g)
{
	struct alloc *a = g->a;
	struct alloc_stats *st = &a->st;
	uint64_t free_bytes = 0;

	for (size_t i = 0; i < a->nchunks; i++) {
		const struct alloc_chunk *c = &a->chunks[i];
		const struct scan_block *t = c->kind == ALLOC_TAGGED && c->block != ALLOC_NO_BLOCK ?
					     &g->blocks->v[c->block] : NULL;

		if (t && c->mmapped) {
			st->mmapped_user += t->size;
			st->mmapped_header += t->below;
		}
		if (c->mmapped)
			continue;
		st->kind_bytes[c->kind] += c->size;
		st->kind_chunks[c->kind]++;
		if (t) {
			st->tagged_user += t->size;
			st->tagged_header += t->below;
		}
		if (c->kind == ALLOC_FREE || c->kind == ALLOC_TOP || c->kind == ALLOC_FASTBIN)
			free_bytes += c->size;
	}
	st->free_bytes = free_bytes;
	st->in_use_bytes = st->arena_bytes > free_bytes ? st->arena_bytes - free_bytes : 0;
	st->arenas = g->narenas;
	trim_estimate(g);
	/* what mallinfo2() would have said in the process */
	a->own[0] = (struct alloc_figure){ "arena", st->arena_bytes };
	a->own[1] = (struct alloc_figure){ "uordblks", st->in_use_bytes };
	a->own[2] = (struct alloc_figure){ "fordblks", st->free_bytes };
	a->own[3] = (struct alloc_figure){ "hblks", st->mmapped_chunks };
	a->own[4] = (struct alloc_figure){ "hblkhd", st->mmapped_bytes };
	a->nown = 5;
}

/* Sorted, and overlapping or touching ranges joined: alloc_nonroot_from bisects ends. */
static void merge_nonroot(struct alloc *a)
{
	size_t m = 0;

	if (!sort_runs(a->nonroot, a->nnonroot, sizeof(*a->nonroot)))
		qsort(a->nonroot, a->nnonroot, sizeof(*a->nonroot), range_cmp);
	for (size_t i = 0; i < a->nnonroot; i++) {
		if (m && a->nonroot[i].start <= a->nonroot[m - 1].end) {
			if (a->nonroot[i].end > a->nonroot[m - 1].end)
				a->nonroot[m - 1].end = a->nonroot[i].end;
		} else {
			a->nonroot[m++] = a->nonroot[i];
		}
	}
	a->nnonroot = m;
}

/* libc's version and main_arena: this allocator, in a version of the layout known */
static bool glibc_probe(struct alloc *a, const struct image *img, struct sym *sym,
			const char *sysroot, void **state)
{
	struct gl *g = xcalloc(1, sizeof(*g));
	struct sym_module_info *mods;
	const struct sym_module_info *libc;
	size_t nmods;

	g->img = img;
	g->a = a;
	mods = sym_modules(sym, &nmods);
	libc = find_libc(mods, nmods);
	if (!libc)
		snprintf(a->reason, sizeof(a->reason), "no libc module in the dump");
	else if (img->wsize != 8)
		snprintf(a->reason, sizeof(a->reason), "glibc on 32-bit targets is not known yet");
	else if (version_in_image(g, libc->start, libc->end) ||
		 version_from_file(g, libc, sysroot)) {
		snprintf(a->name, sizeof(a->name), "glibc 2.%d", g->minor);
		g->heap_info = g->minor >= 35 ? 48 : 32;	/* ar_ptr, prev, size, mprotect_size */
		if (g->minor < 27 || g->minor > 41)
			snprintf(a->reason, sizeof(a->reason),
				 "glibc 2.%d: this analyzer knows 2.27 to 2.41", g->minor);
		else if (!(g->arenas[0] = find_main_arena(g, libc->start, libc->end)))
			snprintf(a->reason, sizeof(a->reason), "%s: no main_arena in libc's data",
				 a->name);
	}
	free(mods);
	if (!g->arenas[0]) {
		free(g);
		return false;
	}
	*state = g;
	return true;
}

void alloc_glibc_walk(struct alloc *a, const struct image *img, uint64_t main_arena, int minor,
		      const struct scan_blocks *blocks)
{
	struct gl g = { .img = img, .a = a, .minor = minor, .blocks = blocks, .narenas = 1 };

	g.heap_info = minor >= 35 ? 48 : 32;	/* ar_ptr, prev, size, mprotect_size */
	g.arenas[0] = main_arena;
	a->known = true;
	tag_blocks(&g, blocks);
	nonroot(&g, g.arenas[0], g.arenas[0] + MS_SIZE);
	walk_main(&g, g.arenas[0]);
	walk_arenas(&g);
	find_mmapped(&g);
	free(g.tag);	/* the last reader: gone before the sorts' buffers come */
	g.tag = NULL;
	g.ntag = 0;
	if (!sort_runs(a->chunks, a->nchunks, sizeof(*a->chunks)))
		qsort(a->chunks, a->nchunks, sizeof(*a->chunks), chunk_cmp);
	mark_cached(&g);
	sum_up(&g);
	merge_nonroot(a);
	free(g.heaps_seen.v);
	image_window_free(&g.win);
}

/* The walk of what the probe found: every arena from main_arena's links, then the
 * mmapped chunks, the caches and lists. */
static void glibc_walk(struct alloc *a, const struct image *img, const struct scan_blocks *blocks,
		       void *state)
{
	struct gl *g = state;

	alloc_glibc_walk(a, img, g->arenas[0], g->minor, blocks);
	free(g);
}

/* malloc_usable_size: an arena chunk's bytes up to the next one's size field (its
 * prev_size is this chunk's while it is in use); a mapping's, up to its end */
static void usable(const struct alloc_chunk *c, uint64_t *mem, uint64_t *size)
{
	*mem = c->addr + HDR;
	*size = c->size - (c->mmapped ? HDR : W);
}

const struct alloc_reader alloc_glibc_reader = {
	.name = "glibc",
	.probe = glibc_probe,
	.walk = glibc_walk,
	.run_release = run_trim,
	.usable = usable,
	.own_name = "mallinfo2",
	.release_call = "malloc_trim(0)",
	.kind_names = { "in use, heapprof blocks", "in use, untagged", "free in tcache",
			"free in fastbins", "free in bins", "top", "fenceposts" },
	.kind_keys = { "tagged", "untagged", "tcache", "fastbins", "bins", "top", "fenceposts" },
};
