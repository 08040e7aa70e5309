/*
 * Find, validate and count heapprof headers (see scan.h). Segments are cut into chunks
 * that worker threads take in turn; each thread keeps its own totals, merged at the
 * end, so the result does not depend on the order the threads ran in.
 */
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof_format.h"
#include "image.h"
#include "rd.h"
#include "scan.h"
#include "util.h"

#define CHUNK ((uint64_t)32 << 20)	/* unit of work handed to a thread */
#define WINDOW ((uint64_t)4 << 20)	/* bytes read at once: fits the caches */
#define BACK ((uint64_t)HP_HDR_SIZE + HP_MAX_FRAMES * 8) /* a header's reach below its magic */

const char *scan_reason(enum scan_reject r)
{
	static const char *const why[REJ_NREASONS] = {
		[REJ_TRUNCATED] = "header cut off at an edge of the memory image",
		[REJ_VERSION] = "unknown format version",
		[REJ_LAYOUT] = "impossible frame count, word size or offset",
		[REJ_FLAGS] = "unknown incompatible flags",
		[REJ_CHECK] = "bad check value (stale, copied or overwritten header)",
	};
	return r < REJ_NREASONS ? why[r] : "?";
}

/* len bytes at addr: straight from the segment when they lie in it, else any. */
static bool fetch(const struct image *img, const struct seg *s, uint64_t addr, void *buf,
		  size_t len)
{
	if (s && addr >= s->vaddr && addr - s->vaddr <= s->size &&
	    len <= s->size - (addr - s->vaddr)) {
		memcpy(buf, s->data + (addr - s->vaddr), len);
		return true;
	}
	return image_read(img, addr, buf, len);
}

static bool decode_hdr(const unsigned char *raw, bool big_endian, struct hp_hdr *h)
{
	struct rd r = { raw, HP_HDR_SIZE, big_endian };

	return rd_u64(&r, &h->check) && rd_u64(&r, &h->size) && rd_u64(&r, &h->birth) &&
	       rd_u32(&r, &h->offset) && rd_u32(&r, &h->tid) && rd_u16(&r, &h->version) &&
	       rd_u8(&r, &h->nframes) && rd_u8(&r, &h->wsize) && rd_u32(&r, &h->flags) &&
	       rd_u64(&r, &h->magic);
}

#define VALID REJ_NREASONS

/* Validate the header whose magic is at magic_addr; VALID fills pcs, size, nframes. */
static enum scan_reject validate(const struct image *img, const struct seg *s,
				 uint64_t magic_addr, struct hp_hdr *hp, uint64_t *pcs)
{
	unsigned char raw[HP_HDR_SIZE + HP_MAX_FRAMES * 8];
	uint64_t user = magic_addr + 8, hdr_addr, pcs_addr, x;
	struct hp_hdr h;
	struct rd r;

	if (magic_addr < HP_HDR_SIZE - 8 ||
	    !fetch(img, s, hdr_addr = magic_addr - (HP_HDR_SIZE - 8), raw, HP_HDR_SIZE))
		return REJ_TRUNCATED;
	decode_hdr(raw, img->big_endian, &h);
	*hp = h;
	if (h.version != HP_FORMAT_VERSION)
		return REJ_VERSION;
	/* the block must start at or above 0 and its user pointer end below the top of the
	 * address space (a magic in the last 8 bytes would put it at 2^64 or 2^32) */
	if (h.wsize != img->wsize || h.nframes > HP_MAX_FRAMES ||
	    h.offset < HP_HDR_SIZE + (uint32_t)h.nframes * h.wsize || h.offset % 8 ||
	    user < magic_addr || user < h.offset || (img->wsize == 4 && user > UINT32_MAX))
		return REJ_LAYOUT;
	if (h.flags & HP_FLAGS_INCOMPAT_MASK & ~HP_FLAGS_KNOWN)
		return REJ_FLAGS;
	pcs_addr = hdr_addr - (uint64_t)h.nframes * h.wsize;
	if (pcs_addr > hdr_addr || !fetch(img, s, pcs_addr, raw, (size_t)h.nframes * h.wsize))
		return REJ_TRUNCATED;
	r = (struct rd){ raw, (size_t)h.nframes * h.wsize, img->big_endian };
	x = hp_check_head(user, &h);
	for (unsigned i = 0; i < h.nframes; i++) {
		rd_word(&r, h.wsize, &pcs[i]);
		x = hp_mix(x, pcs[i]);
	}
	return hp_check_final(x) == h.check ? VALID : REJ_CHECK;
}

static void check_at(const struct image *img, const struct seg *s, uint64_t magic_addr,
		     struct scan_result *out)
{
	uint64_t pcs[HP_MAX_FRAMES];
	struct hp_hdr h;
	enum scan_reject why = validate(img, s, magic_addr, &h, pcs);

	out->candidates++;
	if (why != VALID) {
		out->rejected[why]++;
		if (why == REJ_VERSION)
			out->other_version = h.version;
		return;
	}
	out->blocks++;
	if (__builtin_add_overflow(out->bytes, h.size, &out->bytes))
		out->bytes = UINT64_MAX;
	stacks_add(&out->stacks, pcs, h.nframes, h.size);
}

typedef uint64_t u64x2 __attribute__((vector_size(16), aligned(1), may_alias));

/* Offset of the first 8-byte word equal to m in p[i..n), stepping by 8, or n. */
static size_t find_tail(const unsigned char *p, size_t i, size_t n, uint64_t m)
{
	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		if (w == m)
			return i;
	}
	return n;
}

/*
 * Offset of the first 8-byte word equal to m in p[0..n), stepping by 8, or n. Four
 * 16-byte compares per round keep the loop near memory speed on plain SSE2.
 */
static size_t find_magic_sse2(const unsigned char *p, size_t n, uint64_t m)
{
	const u64x2 mv = { m, m };
	size_t i = 0;

	for (; i + 64 <= n; i += 64) {
		const u64x2 *v = (const u64x2 *)(p + i);
		u64x2 hit = (v[0] == mv) | (v[1] == mv) | (v[2] == mv) | (v[3] == mv);

		if (hit[0] | hit[1])
			break;
	}
	return find_tail(p, i, n, m);
}

#if defined(__x86_64__) && defined(__GNUC__)
typedef uint64_t u64x4 __attribute__((vector_size(32), aligned(1), may_alias));

/* The same with 32-byte compares, where the CPU has AVX2 (chosen at run time). */
__attribute__((target("avx2"))) static size_t find_magic_avx2(const unsigned char *p, size_t n,
							      uint64_t m)
{
	const u64x4 mv = { m, m, m, m };
	size_t i = 0;

	for (; i + 128 <= n; i += 128) {
		const u64x4 *v = (const u64x4 *)(p + i);
		u64x4 hit = (v[0] == mv) | (v[1] == mv) | (v[2] == mv) | (v[3] == mv);

		if (hit[0] | hit[1] | hit[2] | hit[3])
			break;
	}
	return find_tail(p, i, n, m);
}
#endif

static size_t (*find_magic)(const unsigned char *p, size_t n, uint64_t m) = find_magic_sse2;

static void pick_find_magic(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2"))
		find_magic = find_magic_avx2;
#endif
}

struct chunk {
	const struct seg *seg;
	uint64_t start;		/* target address, 8-aligned */
	uint64_t len;
};

struct job {
	const struct image *img;
	struct chunk *chunks;
	size_t nchunks, next;	/* next: taken atomically */
	uint64_t magic;		/* HP_MAGIC as the target's bytes read on this host */
};

/* Scan [start, start + len) of a segment whose bytes are all in seg->data. */
static void scan_range(const struct job *job, const struct seg *seg, uint64_t start,
		       uint64_t len, struct scan_result *out)
{
	const unsigned char *base = seg->data + (start - seg->vaddr);
	size_t n = (size_t)len, i = 0;

	while ((i = find_magic(base + i, n - i, job->magic) + i) < n) {
		check_at(job->img, seg, start + i, out);
		i += 8;
	}
}

static bool pread_all(int fd, unsigned char *buf, size_t n, uint64_t off)
{
	while (n) {
		ssize_t got = pread(fd, buf, n, (off_t)off);

		if (got <= 0)
			return false;
		buf += got;
		n -= (size_t)got;
		off += (uint64_t)got;
	}
	return true;
}

/*
 * Chunks of a file are read into buf window by window rather than scanned through
 * the mapping: the copy costs what cat's does, and the analyzer's memory stays at a
 * window per thread whatever the core's size (a mapping's pages would all count).
 * Each window starts BACK bytes early, so that headers below a magic near its start
 * are in it too; the rest come from the mapping.
 */
static void scan_chunk(const struct job *job, const struct chunk *c, unsigned char **bufp,
		       struct scan_result *out)
{
	const struct seg *s = c->seg;
	unsigned char *buf;

	if (!s->in_file) {
		scan_range(job, s, c->start, c->len, out);
		return;
	}
	if (!*bufp)
		*bufp = xmalloc(WINDOW + BACK);
	buf = *bufp;
	for (uint64_t done = 0, step; done < c->len; done += step) {
		uint64_t at = c->start + done;
		uint64_t back = at - s->vaddr < BACK ? at - s->vaddr : BACK;
		struct seg w;

		step = c->len - done < WINDOW ? c->len - done : WINDOW;
		w = (struct seg){ .vaddr = at - back, .size = back + step, .data = buf };
		if (pread_all(s->fd, buf, (size_t)(back + step), s->file_offset + (w.vaddr - s->vaddr)))
			scan_range(job, &w, at, step, out);
		else
			scan_range(job, s, at, step, out);
	}
}

static void *worker(void *arg)
{
	struct job *job = ((void **)arg)[0];
	struct scan_result *out = ((void **)arg)[1];
	unsigned char *buf = NULL;	/* the window, once a chunk is read from a file */
	size_t k;

	while ((k = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED)) < job->nchunks)
		scan_chunk(job, &job->chunks[k], &buf, out);
	free(buf);
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
			v[n++] = (struct chunk){ s, a, len };
			a += len;
			left -= len;
		}
	}
	*out = v;
	return n;
}

static void result_init(struct scan_result *r)
{
	memset(r, 0, sizeof(*r));
	stacks_init(&r->stacks);
}

static void result_merge(struct scan_result *into, struct scan_result *from)
{
	into->candidates += from->candidates;
	into->blocks += from->blocks;
	if (__builtin_add_overflow(into->bytes, from->bytes, &into->bytes))
		into->bytes = UINT64_MAX;
	for (int i = 0; i < REJ_NREASONS; i++)
		into->rejected[i] += from->rejected[i];
	if (from->other_version)
		into->other_version = from->other_version;
	stacks_merge(&into->stacks, &from->stacks);
}

void scan_image(const struct image *img, unsigned nthreads, struct scan_result *out)
{
	struct job job = { .img = img };
	struct scan_result *parts;
	pthread_t *tids;
	void *(*args)[2];
	uint64_t m = HP_MAGIC;

	if (img->big_endian != host_big_endian())
		m = __builtin_bswap64(m);
	job.magic = m;
	pick_find_magic();
	job.nchunks = make_chunks(img, &job.chunks);
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > job.nchunks)
		nthreads = job.nchunks ? (unsigned)job.nchunks : 1;
	parts = xcalloc(nthreads, sizeof(*parts));
	tids = xcalloc(nthreads, sizeof(*tids));
	args = xcalloc(nthreads, sizeof(*args));
	result_init(out);
	for (unsigned t = 0; t < nthreads; t++) {
		result_init(&parts[t]);
		args[t][0] = &job;
		args[t][1] = &parts[t];
		/* thread 0 is this one; a failed create leaves its share to the others */
		if (t > 0 && pthread_create(&tids[t], NULL, worker, args[t]) != 0)
			tids[t] = 0;
	}
	worker(args[0]);
	for (unsigned t = 0; t < nthreads; t++) {
		if (t > 0 && tids[t])
			pthread_join(tids[t], NULL);
		result_merge(out, &parts[t]);
		stacks_free(&parts[t].stacks);
	}
	free(args);
	free(tids);
	free(parts);
	free(job.chunks);
}

void scan_result_free(struct scan_result *r)
{
	stacks_free(&r->stacks);
}
