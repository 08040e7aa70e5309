/*
 * Find, validate and count heapprof headers (see scan.h). Segments are cut into chunks
 * that worker threads take in turn; each thread keeps its own totals, merged at the
 * end, so the result does not depend on the order the threads ran in.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "heapprof_format.h"
#include "image.h"
#include "rd.h"
#include "scan.h"
#include "util.h"

#define CHUNK ((uint64_t)32 << 20)	/* unit of work handed to a thread */
#define WINDOW ((uint64_t)256 << 10)	/* bytes read at once: the copy lands in L2 */
/* a header's reach below its magic: v1's pcs (v2 reads 16 bytes); records read forward,
 * past a window's end through image_read */
#define BACK ((uint64_t)HP_HDR_SIZE + HP_MAX_FRAMES * 8)
/* and past its end: the first word of a block whose header ends the window (read
 * through the mapping, it cost a page of the core in memory a window) */
#define AHEAD ((uint64_t)64)

/* scan_block.chunk for block b, whose header is read through window s (scan.h). */
static uint16_t chunk_memo(const struct image *img, const struct seg *s, const struct hp_block *b,
			   unsigned below)
{
	uint64_t at = b->user - below - 8, w, req, fit, more;

	if (img->wsize != 8 || b->size >> 40 || b->user < below + 8)
		return 0;
	if (at >= s->vaddr && at - s->vaddr <= s->size && s->size - (at - s->vaddr) >= 8)
		memcpy(&w, s->data + (at - s->vaddr), 8);
	else if (!image_read(img, at, &w, 8))
		return 0;
	if (img->big_endian != host_big_endian())
		w = __builtin_bswap64(w);
	req = below + b->size + 8 + 15;
	fit = req < 32 ? 32 : req & ~(uint64_t)15;
	more = (w & ~(uint64_t)7) - fit;
	if ((w & ~(uint64_t)7) < fit || more % 16 || more >> 4 > 0xfff)
		return 0;
	return (uint16_t)(SCAN_CHUNK_KNOWN | (more >> 4) << 3 | (w & 7));
}

/* Block b's first word, from window s where it lies in it (the bytes after the header
 * the scan just read): a type's reader then touches no page of the dump again. */
static uint64_t first_memo(const struct image *img, const struct seg *s, const struct hp_block *b)
{
	unsigned char raw[8];
	uint64_t w = 0;

	if (b->size < img->wsize)
		return 0;
	if (s && b->user >= s->vaddr && b->user - s->vaddr <= s->size &&
	    s->size - (b->user - s->vaddr) >= img->wsize)
		memcpy(raw, s->data + (b->user - s->vaddr), img->wsize);
	else if (!image_read(img, b->user, raw, img->wsize))
		return 0;
	if (img->wsize == 8 && img->big_endian == host_big_endian()) {
		memcpy(&w, raw, 8);	/* the usual case, a load */
		return w;
	}
	for (unsigned k = 0; k < img->wsize; k++)
		w |= (uint64_t)raw[k] << 8 * (img->big_endian ? img->wsize - 1 - k : k);
	return w;
}

/*
 * Each thread lists its blocks in pieces of SCAN_PIECE blocks (4 MiB), never moved once
 * written: a list grown by realloc was copied as it grew (in the brk heap, where
 * glibc's raised mmap threshold puts it) and copied again to join the threads' lists,
 * a third of the heap graph's page faults. merge_lists joins the pieces in address
 * order, freeing each as it is used up.
 */
#define SCAN_PIECE ((size_t)131072)

static void keep_block(struct scan_result *out, const struct hp_block *b, unsigned below,
		       uint16_t chunk, uint64_t first)
{
	struct scan_blocks *l = &out->list;

	if (l->n == l->cap) {
		if (out->npieces == out->pieces_cap)
			out->pieces = xrealloc(out->pieces, (out->pieces_cap = out->pieces_cap ?
					       2 * out->pieces_cap : 16) * sizeof(*out->pieces));
		l->v = out->pieces[out->npieces++] = xmalloc(SCAN_PIECE * sizeof(*l->v));
		l->n = 0;
		l->cap = SCAN_PIECE;
	}
	l->v[l->n++] = (struct scan_block){
		.user = b->user, .size = b->size, .version = (uint8_t)b->version,
		.site = b->version == 2 ? b->site : 0,
		.sampled = b->version == 2 && (b->flags & HP2_F_SAMPLED),
		.time = b->version == 2 ? (uint16_t)hp2_time_encode(b->age_ms) : 0,
		.below = below, .chunk = chunk, .first = first };
	out->listed++;
}

/* Block b counted by its first word w, a sampled one kept aside for its weight. */
static void count_first(struct scan_result *out, const struct hp_block *b, uint64_t w)
{
	if (b->version == 2 && (b->flags & HP2_F_SAMPLED))
		firsts_add_sampled(&out->firsts, b->user, b->size, w);
	else
		firsts_add(&out->firsts, w, b->size);
}

bool scan_block_decoded(const struct image *img, const struct scan_block *b,
			struct decode_buf *buf, struct decoded *d)
{
	struct decode_src src = { img, NULL };
	unsigned char raw[8];
	uint64_t w;

	if (b->version == SCAN_UNTAGGED) {
		*d = (struct decoded){ .kind = DEC_BLOCK };
		d->block = (struct hp_block){ .user = b->user, .size = b->size,
					      .version = SCAN_UNTAGGED };
		return true;
	}
	if (b->version == 2) {
		*d = (struct decoded){ .kind = DEC_BLOCK };
		d->block = (struct hp_block){ .user = b->user, .size = b->size, .version = 2,
			.flags = b->sampled ? HP2_F_SAMPLED : 0, .site = b->site,
			.age_ms = hp2_time_decode(b->time), .shift = 0 };
		return true;
	}
	if (!image_read(img, b->user - 8, raw, 8))
		return false;
	memcpy(&w, raw, 8);
	if (img->big_endian != host_big_endian())
		w = __builtin_bswap64(w);
	return decode_at(&src, b->user - 8, w, buf, d) == DECODE_OK && d->kind == DEC_BLOCK;
}

const uint64_t *scan_block_stack(const struct image *img, const struct scan_result *scan,
				 const struct scan_block *b, struct decode_buf *buf, unsigned *n)
{
	const struct decoded_stack *st;
	struct decoded d;

	*n = 0;
	if (b->version == 2) {
		st = b->site ? collect_site_stack(&scan->found, b->site) : NULL;
		*n = st ? st->nframes : 0;
		return st ? st->pcs : NULL;
	}
	if (b->version == SCAN_UNTAGGED || !scan_block_decoded(img, b, buf, &d))
		return NULL;
	*n = d.block.nframes;
	return d.block.pcs;
}

/* A block as found: counted, listed, and handed to the collect. below: its header's
 * bytes below the user pointer (0: a slab table's block, which has none). */
static void found_block(const struct decode_src *src, const struct decoded *d, unsigned below,
			struct scan_result *out)
{
	const struct hp_block *b = &d->block;

	out->blocks++;
	out->v2_blocks += b->version == 2;
	if (__builtin_add_overflow(out->bytes, b->size, &out->bytes))
		out->bytes = UINT64_MAX;
	if (below) {	/* the scan goes up: every block found so far starts below */
		uint64_t end;

		if (__builtin_add_overflow(b->user, b->size, &end))
			end = UINT64_MAX;
		if (end > out->cover)
			out->cover = end;
	}
	if (out->keep_blocks)
		keep_block(out, b, below, below ? chunk_memo(src->img, src->seg, b, below) : 0,
			   first_memo(src->img, src->seg, b));
	else if (out->count_firsts)
		count_first(out, b, first_memo(src->img, src->seg, b));
	collect_add(&out->found, d);
}

/* The blocks a slab table's slots name. */
static void slab_blocks(const struct decode_src *src, const struct hp_slab_rec *slab,
			struct scan_result *out)
{
	struct decoded d = { .kind = DEC_BLOCK };
	struct hp_block v[64];
	uint32_t next = 0;
	uint64_t before = out->slab_blocks;

	out->slabs++;
	while (next < slab->n) {
		size_t k = decode_slab_blocks(src, slab, &next, v, 64, &out->slots_bad);

		for (size_t i = 0; i < k; i++) {
			out->slab_blocks++;
			if (__builtin_add_overflow(out->slab_bytes, v[i].size, &out->slab_bytes))
				out->slab_bytes = UINT64_MAX;
			if (__builtin_add_overflow(out->slab_slot_bytes, slab->stride,
						   &out->slab_slot_bytes))
				out->slab_slot_bytes = UINT64_MAX;
			d.block = v[i];
			found_block(src, &d, 0, out);
		}
	}
	out->slabs_used += out->slab_blocks > before;
}

/* A failed tag the scan of a chunk saw (addr: its address, word: collect_bad_tag_word). */
struct scan_tag {
	uint64_t addr, word;
	size_t chunk;
};

/*
 * A v2 tag that failed its check, at addr. A block's header never lies in the user
 * bytes of another live block, so one that does is data: a dict's hash table held in
 * a block, say, where a hash with the tags' 16 bits follows a pointer whose upper half
 * names a site. A whole block found below it in this chunk tells at once; one of an
 * earlier chunk, only when every thread is done (settle_tags).
 */
static void bad_tag(struct scan_result *out, uint64_t addr, uint64_t word)
{
	if (addr < out->cover) {
		collect_bad_tag(&out->found, word, true);
		return;
	}
	if (out->nunsure == out->unsure_cap) {
		out->unsure_cap = out->unsure_cap ? 2 * out->unsure_cap : 16;
		out->unsure = xrealloc(out->unsure, out->unsure_cap * sizeof(*out->unsure));
	}
	out->unsure[out->nunsure++] = (struct scan_tag){ addr, word, out->chunk };
}

/* Decode the candidate at addr (its word in the target's bytes at raw) and pass it on. */
static void check_at(const struct image *img, const struct seg *s, uint64_t addr,
		     const unsigned char *raw, struct scan_result *out)
{
	struct decode_src src = { img, s };
	struct decode_buf buf;
	struct decoded d;
	enum decode_reject why;
	uint64_t w;

	memcpy(&w, raw, 8);
	if (img->big_endian != host_big_endian())
		w = __builtin_bswap64(w);
	why = decode_at(&src, addr, w, &buf, &d);
	out->candidates++;
	if (why != DECODE_OK) {
		if (d.tag_only && why == REJ_CHECK) {
			if (!d.record_word)	/* else its record is decoded at its magic */
				bad_tag(out, addr, collect_bad_tag_word(&d));
		} else if (d.tag_only)
			out->tags_cut++;
		else
			out->rejected[why]++;
		if (why == REJ_VERSION)
			out->other_version = d.other_version;
		return;
	}
	if (d.kind == DEC_BLOCK) {
		found_block(&src, &d, d.block.version == 2 ? 16u << d.block.shift :
			    HP_HDR_SIZE + d.block.nframes * img->wsize, out);
		return;
	}
	out->records++;
	if (d.kind == DEC_SLAB)
		slab_blocks(&src, &d.slab, out);
	else if (d.kind != DEC_PYCODE)	/* a name record is read where a frame points */
		collect_add(&out->found, &d);
}

typedef uint64_t u64x2 __attribute__((vector_size(16), aligned(1), may_alias));

/* Offset of the first 8-byte word w with (w & k) == m in p[i..n), stepping by 8, or n. */
static size_t find_tail(const unsigned char *p, size_t i, size_t n, uint64_t k, uint64_t m)
{
	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		if ((w & k) == m)
			return i;
	}
	return n;
}

/*
 * Offset of the first 8-byte word w with (w & k) == m in p[0..n), stepping by 8, or n.
 * Four 16-byte compares per round keep the loop near memory speed on plain SSE2.
 */
static size_t find_magic_sse2(const unsigned char *p, size_t n, uint64_t k, uint64_t m)
{
	const u64x2 kv = { k, k }, mv = { m, m };
	size_t i = 0;

	for (; i + 64 <= n; i += 64) {
		const u64x2 *v = (const u64x2 *)(p + i);
		u64x2 hit = ((v[0] & kv) == mv) | ((v[1] & kv) == mv) | ((v[2] & kv) == mv) |
			    ((v[3] & kv) == mv);

		if (hit[0] | hit[1])
			break;
	}
	return find_tail(p, i, n, k, m);
}

#if defined(__x86_64__) && defined(__GNUC__)
typedef uint64_t u64x4 __attribute__((vector_size(32), aligned(1), may_alias));

/* The same with 32-byte compares, where the CPU has AVX2 (chosen at run time). */
__attribute__((target("avx2"))) static size_t find_magic_avx2(const unsigned char *p, size_t n,
							      uint64_t k, uint64_t m)
{
	const u64x4 kv = { k, k, k, k }, mv = { m, m, m, m };
	size_t i = 0;

	for (; i + 128 <= n; i += 128) {
		const u64x4 *v = (const u64x4 *)(p + i);
		u64x4 hit = ((v[0] & kv) == mv) | ((v[1] & kv) == mv) | ((v[2] & kv) == mv) |
			    ((v[3] & kv) == mv);

		if (hit[0] | hit[1] | hit[2] | hit[3])
			break;
	}
	return find_tail(p, i, n, k, m);
}
#endif

/*
 * Offset of the first 8-byte word w of p[0..n) (stepping by 8) with w - lo < span, or
 * n: a first filter for words that may point into a block. Most heap words are no
 * address at all.
 */
static size_t find_in_sse2(const unsigned char *p, size_t n, uint64_t lo, uint64_t span)
{
	const u64x2 lv = { lo, lo }, sv = { span, span };
	size_t i = 0;

	for (; i + 64 <= n; i += 64) {
		const u64x2 *v = (const u64x2 *)(p + i);
		u64x2 hit = ((v[0] - lv) < sv) | ((v[1] - lv) < sv) | ((v[2] - lv) < sv) |
			    ((v[3] - lv) < sv);

		if (hit[0] | hit[1])
			break;
	}
	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		if (w - lo < span)
			return i;
	}
	return n;
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static size_t find_in_avx2(const unsigned char *p, size_t n,
							    uint64_t lo, uint64_t span)
{
	const u64x4 lv = { lo, lo, lo, lo }, sv = { span, span, span, span };
	size_t i = 0;

	for (; i + 128 <= n; i += 128) {
		const u64x4 *v = (const u64x4 *)(p + i);
		u64x4 hit = ((v[0] - lv) < sv) | ((v[1] - lv) < sv) | ((v[2] - lv) < sv) |
			    ((v[3] - lv) < sv);

		if (hit[0] | hit[1] | hit[2] | hit[3])
			break;
	}
	return find_in_sse2(p + i, n - i, lo, span) + i;
}
#endif

static size_t (*find_magic)(const unsigned char *p, size_t n, uint64_t k,
			    uint64_t m) = find_magic_sse2;
static size_t (*find_in)(const unsigned char *p, size_t n, uint64_t lo,
			 uint64_t span) = find_in_sse2;

/* once: dumps are scanned side by side (many dumps, -j) */
static pthread_once_t picked = PTHREAD_ONCE_INIT;

static void pick_find_magic(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2")) {
		find_magic = find_magic_avx2;
		find_in = find_in_avx2;
	}
#endif
}

struct chunk {
	const struct seg *seg;
	uint64_t start;		/* target address, 8-aligned */
	uint64_t len;
	uint64_t cover;		/* after its scan: the end of the user bytes of the whole
				 * blocks found in it (0: none) */
};

struct job {
	const struct image *img;
	struct scan_pages *pages;	/* to mark, or NULL */
	struct chunk *chunks;
	size_t nchunks, next;	/* next: taken atomically */
	uint64_t mask, magic;	/* HP2_MAGIC16's bits as the target's bytes read on this host */
};

/* Scan [start, start + len) of a segment whose bytes are all in seg->data. */
static void scan_range(const struct job *job, const struct seg *seg, uint64_t start,
		       uint64_t len, struct scan_result *out)
{
	const unsigned char *base = seg->data + (start - seg->vaddr);
	size_t n = (size_t)len, i = 0;

	while ((i = find_magic(base + i, n - i, job->mask, job->magic) + i) < n) {
		check_at(job->img, seg, start + i, base + i, out);
		i += 8;
	}
}

static bool in_regions(const struct scan_pages *pg, uint64_t w)
{
	return sorted_find_u64(pg->regions, pg->nregions, w >> SCAN_REGION_SHIFT) != SIZE_MAX;
}

/* Mark the pages of segment s where [at, at + len) (bytes at p) may hold pointers. */
static void mark_pages(const struct job *job, const struct seg *s, const unsigned char *p,
		       uint64_t at, uint64_t len)
{
	struct scan_pages *pg = job->pages;
	size_t si = (size_t)(s - job->img->segs);

	while (len >= 8) {
		uint64_t off = at - s->vaddr;
		uint64_t page_end = ((off >> SCAN_PAGE_SHIFT) + 1) << SCAN_PAGE_SHIFT;
		size_t n = (size_t)(page_end - off < len ? page_end - off : len), i = 0;

		while ((i = find_in(p + i, n - i, pg->lo, pg->hi - pg->lo) + i) < n) {
			uint64_t w;

			memcpy(&w, p + i, 8);
			if (in_regions(pg, w)) {
				size_t bit = pg->first[si] + (size_t)(off >> SCAN_PAGE_SHIFT);

				__atomic_fetch_or(&pg->bits[bit / 64], (uint64_t)1 << (bit % 64),
						  __ATOMIC_RELAXED);
				break;
			}
			i += 8;
		}
		p += n;
		at += n;
		len -= n;
	}
}

/*
 * Chunks of a file are read window by window (image_window_fill) rather than scanned
 * through the mapping: the copy costs what cat's does, and the analyzer's memory stays
 * at a window per thread whatever the core's size. Each window starts BACK bytes
 * early, so that headers below a magic near its start are in it too, and ends AHEAD
 * bytes late; the rest come from the mapping.
 */
static void scan_chunk(const struct job *job, const struct chunk *c, struct image_window *win,
		       struct scan_result *out)
{
	const struct seg *s = c->seg;

	if (!s->in_file) {
		scan_range(job, s, c->start, c->len, out);
		if (job->pages)
			mark_pages(job, s, s->data + (c->start - s->vaddr), c->start, c->len);
		return;
	}
	for (uint64_t done = 0, step; done < c->len; done += step) {
		uint64_t at = c->start + done;
		uint64_t back = at - s->vaddr < BACK ? at - s->vaddr : BACK;

		step = c->len - done < WINDOW ? c->len - done : WINDOW;
		const unsigned char *p = s->data + (at - s->vaddr);

		if (image_window_fill(win, s, at - back, (size_t)(back + step + AHEAD)) &&
		    image_window_has(win, at - back, back + step)) {
			scan_range(job, &(struct seg){ .vaddr = win->start,
				.size = win->end - win->start, .data = win->p }, at, step, out);
			p = win->p + back;
		} else {
			scan_range(job, s, at, step, out);
		}
		if (job->pages)	/* the same window, while it is in the cache */
			mark_pages(job, s, p, at, step);
	}
}

static void *worker(void *arg)
{
	struct job *job = ((void **)arg)[0];
	struct scan_result *out = ((void **)arg)[1];
	struct image_window win = { 0 };	/* this thread's */
	size_t k;

	while ((k = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED)) < job->nchunks) {
		out->chunk = k;
		out->cover = 0;
		scan_chunk(job, &job->chunks[k], &win, out);
		job->chunks[k].cover = out->cover;
	}
	image_window_free(&win);
	collect_count_pending(&out->found);	/* side by side, not in the merge */
	return NULL;
}

static size_t make_chunks(const struct image *img, struct chunk **out)
{
	size_t n = 0, cap = 16;
	struct chunk *v = xmalloc(cap * sizeof(*v));

	for (size_t i = 0; i < img->nsegs; i++) {
		const struct seg *s = &img->segs[i];
		uint64_t skip = (8 - (s->vaddr & 7)) & 7, a = s->vaddr + skip;
		/* by length, not end address: the last segment may end at 2^64 (vsyscall) */
		uint64_t left = s->size > skip ? s->size - skip : 0;

		while (left >= 8) {
			uint64_t len = left > CHUNK ? CHUNK : left;

			if (n == cap)
				v = xrealloc(v, (cap *= 2) * sizeof(*v));
			v[n++] = (struct chunk){ s, a, len, 0 };
			a += len;
			left -= len;
		}
	}
	*out = v;
	return n;
}

static void result_init(struct scan_result *r, const struct image *img,
			const struct join_opts *opts)
{
	memset(r, 0, sizeof(*r));
	collect_init(&r->found);
	r->found.opts = *opts;
	firsts_init(&r->firsts, img->wsize);
}

static void result_merge(struct scan_result *into, struct scan_result *from)
{
	into->candidates += from->candidates;
	into->blocks += from->blocks;
	into->v2_blocks += from->v2_blocks;
	into->records += from->records;
	into->slabs += from->slabs;
	into->slabs_used += from->slabs_used;
	into->slab_blocks += from->slab_blocks;
	into->slots_bad += from->slots_bad;
	if (__builtin_add_overflow(into->slab_bytes, from->slab_bytes, &into->slab_bytes))
		into->slab_bytes = UINT64_MAX;
	if (__builtin_add_overflow(into->slab_slot_bytes, from->slab_slot_bytes,
				   &into->slab_slot_bytes))
		into->slab_slot_bytes = UINT64_MAX;
	into->tags_cut += from->tags_cut;
	if (__builtin_add_overflow(into->bytes, from->bytes, &into->bytes))
		into->bytes = UINT64_MAX;
	for (int i = 0; i < REJ_NREASONS; i++)
		into->rejected[i] += from->rejected[i];
	if (from->other_version)
		into->other_version = from->other_version;
	collect_merge(&into->found, &from->found);
	firsts_merge(&into->firsts, &from->firsts);
}

/* Whether segment s is a thread's stack: a thread's stack pointer is in it, or the
 * program's name the kernel put at the top of the main thread's. */
static bool stack_seg(const struct image *img, const struct seg *s)
{
	for (size_t t = 0; t < img->nthreads; t++)
		if (img->threads[t].have_sp && img->threads[t].sp - s->vaddr < s->size)
			return true;
	return img->at_execfn && img->at_execfn - s->vaddr < s->size;
}

/*
 * The failed tags each thread left unsure: data when a whole block found in an earlier
 * chunk of the same segment reaches past them (a block is one allocation, in one
 * mapping; chunks are in address order, make_chunks), or when they lie in a thread's
 * stack where no whole block lies (a stack whose memory a block gives, a coroutine's,
 * holds that block's header): the hot path's own locals leave copies of the headers
 * it reads and writes in the stacks, bound to other addresses.
 */
static void settle_tags(struct job *job, struct scan_result *parts, unsigned nparts)
{
	size_t n = job->nchunks ? job->nchunks : 1;
	uint64_t *below = xcalloc(n, sizeof(*below));
	bool *blockless_stack = xcalloc(n, sizeof(*blockless_stack));

	for (size_t k = 1; k < job->nchunks; k++) {
		const struct chunk *c = &job->chunks[k - 1];

		if (c->seg == job->chunks[k].seg)
			below[k] = below[k - 1] > c->cover ? below[k - 1] : c->cover;
	}
	for (size_t k = 0, end; k < job->nchunks; k = end) {
		bool blocks = false;

		for (end = k; end < job->nchunks && job->chunks[end].seg == job->chunks[k].seg; end++)
			blocks |= job->chunks[end].cover != 0;
		if (!blocks && stack_seg(job->img, job->chunks[k].seg))
			for (size_t i = k; i < end; i++)
				blockless_stack[i] = true;
	}
	for (unsigned t = 0; t < nparts; t++) {
		struct scan_result *r = &parts[t];

		for (size_t i = 0; i < r->nunsure; i++)
			collect_bad_tag(&r->found, r->unsure[i].word,
					r->unsure[i].addr < below[r->unsure[i].chunk] ||
					blockless_stack[r->unsure[i].chunk]);
		free(r->unsure);
		r->unsure = NULL;
		r->nunsure = r->unsure_cap = 0;
	}
	free(below);
	free(blockless_stack);
}

/* Block i of a thread's pieces. */
static inline const struct scan_block *piece_block(const struct scan_result *r, size_t i)
{
	return &r->pieces[i / SCAN_PIECE][i % SCAN_PIECE];
}

/*
 * The threads' lists joined into out->list: each thread lists its blocks going up (it
 * takes the chunks in order), so a merge by address gives one sorted list, which
 * graph_build and alloc_open then take as it is. Many threads: joined in turn, and
 * sorted later.
 */
#define MERGE_WAYS 8

static void merge_lists(struct scan_result *out, struct scan_result *parts, unsigned nparts)
{
	size_t n = 0, at[MERGE_WAYS] = { 0 }, k = 0;
	struct scan_blocks *l = &out->list;

	for (unsigned t = 0; t < nparts; t++)
		n += parts[t].listed;
	if (!n)
		goto done;
	l->v = xmalloc(n * sizeof(*l->v));
	l->cap = n;
	if (nparts > MERGE_WAYS) {
		for (unsigned t = 0; t < nparts; t++)
			for (size_t i = 0; i < parts[t].listed; i++)
				l->v[k++] = *piece_block(&parts[t], i);
	} else {
		for (;;) {
			const struct scan_block *best = NULL;
			unsigned w = 0;

			for (unsigned t = 0; t < nparts; t++) {
				const struct scan_block *b;

				if (at[t] == parts[t].listed)
					continue;
				b = piece_block(&parts[t], at[t]);
				if (!best || b->user < best->user)
					best = b, w = t;
			}
			if (!best)
				break;
			l->v[k++] = *best;
			if (++at[w] % SCAN_PIECE == 0) {	/* a piece used up */
				free(parts[w].pieces[at[w] / SCAN_PIECE - 1]);
				parts[w].pieces[at[w] / SCAN_PIECE - 1] = NULL;
			}
		}
	}
	l->n = k;
done:
	out->listed = n;
	for (unsigned t = 0; t < nparts; t++) {
		for (size_t i = 0; i < parts[t].npieces; i++)
			free(parts[t].pieces[i]);
		free(parts[t].pieces);
		parts[t].pieces = NULL;
		parts[t].list = (struct scan_blocks){ 0 };
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The pages scan_image_graph_with marks, all clear; none if words are not 8 host bytes. */
static void pages_init(const struct image *img, struct scan_pages *pg)
{
	size_t n = 0, m = 0, cap = 64;

	*pg = (struct scan_pages){ 0 };
	if (img->wsize != 8 || img->big_endian != host_big_endian())
		return;
	pg->regions = xmalloc(cap * sizeof(*pg->regions));
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct seg *s = &img->segs[i];
		uint64_t last = s->vaddr + s->size - 1;

		if (s->vaddr & 7) {	/* pages would cut words: every page may hold them */
			free(pg->regions);
			*pg = (struct scan_pages){ 0 };
			return;
		}
		if (!s->size || s->vaddr >> 63)	/* the upper half (a vsyscall page): blocks
						 * there make the graph read all */
			continue;
		if (last < s->vaddr)
			last = UINT64_MAX;
		for (uint64_t r = s->vaddr >> SCAN_REGION_SHIFT; ; r++) {
			if (!m || pg->regions[m - 1] != r) {
				if (m == SCAN_MAX_REGIONS) {
					free(pg->regions);
					*pg = (struct scan_pages){ 0 };
					return;
				}
				if (m == cap)
					pg->regions = xrealloc(pg->regions, (cap *= 2) * sizeof(*pg->regions));
				pg->regions[m++] = r;
			}
			if (r == last >> SCAN_REGION_SHIFT)
				break;
		}
	}
	qsort(pg->regions, m, sizeof(*pg->regions), u64_cmp);
	pg->nregions = m;
	if (!m) {
		free(pg->regions);
		*pg = (struct scan_pages){ 0 };
		return;
	}
	pg->lo = pg->regions[0] << SCAN_REGION_SHIFT;
	pg->hi = (pg->regions[m - 1] + 1) << SCAN_REGION_SHIFT;
	pg->first = xmalloc(img->nsegs * sizeof(*pg->first));
	for (size_t i = 0; i < img->nsegs; i++) {
		pg->first[i] = n;
		n += (size_t)((img->segs[i].size + (1u << SCAN_PAGE_SHIFT) - 1) >> SCAN_PAGE_SHIFT);
	}
	pg->bits = xcalloc(n / 64 + 1, sizeof(*pg->bits));
}

/* What a scan keeps of each block beside the stacks. */
enum keep { KEEP_NONE, KEEP_LIST, KEEP_FIRSTS };

static void scan_all(const struct image *img, unsigned nthreads, const struct join_opts *opts,
		     enum keep keep, bool pages, struct scan_result *out)
{
	struct job job = { .img = img };
	struct scan_result *parts;
	pthread_t *tids;
	void *(*args)[2];
	decode_magic16(img->big_endian, &job.mask, &job.magic);
	pthread_once(&picked, pick_find_magic);
	job.nchunks = make_chunks(img, &job.chunks);
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > job.nchunks)
		nthreads = job.nchunks ? (unsigned)job.nchunks : 1;
	parts = xcalloc(nthreads, sizeof(*parts));
	tids = xcalloc(nthreads, sizeof(*tids));
	args = xcalloc(nthreads, sizeof(*args));
	result_init(out, img, opts);
	out->found.opts.taken_mono_ns = img->taken_mono_ns;
	out->keep_blocks = keep == KEEP_LIST;
	out->count_firsts = keep == KEEP_FIRSTS;
	if (pages) {
		pages_init(img, &out->pages);
		job.pages = out->pages.bits ? &out->pages : NULL;
	}
	for (unsigned t = 0; t < nthreads; t++) {
		result_init(&parts[t], img, opts);
		parts[t].keep_blocks = out->keep_blocks;
		parts[t].count_firsts = out->count_firsts;
		args[t][0] = &job;
		args[t][1] = &parts[t];
		/* thread 0 is this one; a failed create leaves its share to the others */
		if (t > 0 && pthread_create(&tids[t], NULL, worker, args[t]) != 0)
			tids[t] = 0;
	}
	worker(args[0]);
	for (unsigned t = 1; t < nthreads; t++)
		if (tids[t])
			pthread_join(tids[t], NULL);
	settle_tags(&job, parts, nthreads);
	for (unsigned t = 0; t < nthreads; t++) {
		result_merge(out, &parts[t]);
		collect_free(&parts[t].found);
	}
	merge_lists(out, parts, nthreads);
	if (opts->found)
		opts->found(&out->found, opts->found_arg);
	out->found.opts.found = NULL;	/* once: the caller's, gone after the scan */
	out->found.opts.found_arg = NULL;
	collect_join(&out->found, &out->join);
	/* the stacks become the result's own; found keeps the records */
	out->stacks = out->found.stacks;
	stacks_init(&out->found.stacks);
	free(args);
	free(tids);
	free(parts);
	free(job.chunks);
}

void scan_restack(const struct image *img, struct scan_result *scan)
{
	struct decode_buf *buf = xmalloc(sizeof(*buf));
	struct collect cc;
	struct join_info ji;

	collect_init_records(&cc, &scan->found);
	for (size_t i = 0; i < scan->list.n; i++) {
		struct decoded d;

		if (!scan->list.v[i].out && scan_block_decoded(img, &scan->list.v[i], buf, &d))
			collect_add(&cc, &d);
	}
	free(buf);
	collect_join(&cc, &ji);
	stacks_free(&scan->stacks);
	scan->stacks = cc.stacks;
	stacks_init(&cc.stacks);
	scan->join.unknown_blocks = ji.unknown_blocks;
	scan->join.unknown_bytes = ji.unknown_bytes;
	collect_free(&cc);
}

void scan_image(const struct image *img, unsigned nthreads, struct scan_result *out)
{
	scan_all(img, nthreads, &(struct join_opts){ 0 }, KEEP_NONE, false, out);
}

void scan_image_with(const struct image *img, unsigned nthreads, const struct join_opts *opts,
		     struct scan_result *out)
{
	scan_all(img, nthreads, opts, KEEP_NONE, false, out);
}

void scan_image_blocks_with(const struct image *img, unsigned nthreads,
			    const struct join_opts *opts, struct scan_result *out)
{
	scan_all(img, nthreads, opts, KEEP_LIST, false, out);
}

void scan_image_firsts_with(const struct image *img, unsigned nthreads,
			    const struct join_opts *opts, struct scan_result *out)
{
	scan_all(img, nthreads, opts, KEEP_FIRSTS, false, out);
}

void scan_image_graph_with(const struct image *img, unsigned nthreads,
			   const struct join_opts *opts, struct scan_result *out)
{
	scan_all(img, nthreads, opts, KEEP_LIST, true, out);
}

void scan_result_free(struct scan_result *r)
{
	for (size_t i = 0; i < r->npieces; i++)
		free(r->pieces[i]);
	free(r->pieces);
	free(r->list.v);
	free(r->pages.bits);
	free(r->pages.first);
	free(r->pages.regions);
	stacks_free(&r->stacks);
	collect_free(&r->found);
	firsts_free(&r->firsts);
}
