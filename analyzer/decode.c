/*
 * Decode one candidate (see decode.h): dispatch on the exact magic word, read the
 * fields through the bounds-checked reader, validate, and return a plain value.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "image.h"
#include "python.h"
#include "rd.h"

#define HP2_RING_MAX (1u << 24)	/* HEAPPROF_EVENTS' limit */

const char *decode_reason(enum decode_reject r)
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

void decode_magic16(bool big_endian, uint64_t *mask, uint64_t *value)
{
	uint64_t m = (uint64_t)0xFFFF << 48, v = hp2_tag_magic_bits();

	if (big_endian != host_big_endian()) {
		m = __builtin_bswap64(m);
		v = __builtin_bswap64(v);
	}
	*mask = m;
	*value = v;
}

double decode_sample_weight(uint64_t size, uint64_t period)
{
	double p;

	/* a block of 0 bytes cannot have been picked by a byte-driven sample */
	if (!period || !size)
		return 1;
	p = -expm1(-(double)size / (double)period);
	return p > 0 ? 1 / p : 1;
}

/* len bytes at addr: straight from the window when they lie in it, else from the image. */
static bool fetch(const struct decode_src *src, uint64_t addr, void *buf, size_t len)
{
	const struct seg *s = src->seg;

	if (s && addr >= s->vaddr && addr - s->vaddr <= s->size &&
	    len <= s->size - (addr - s->vaddr)) {
		memcpy(buf, s->data + (addr - s->vaddr), len);
		return true;
	}
	return image_read(src->img, addr, buf, len);
}

/* n target words at addr into pcs (zero-extended), mixing each into *x. */
static bool read_pcs(const struct decode_src *src, uint64_t addr, unsigned n, uint64_t *pcs,
		     uint64_t *x)
{
	unsigned wsize = src->img->wsize;
	unsigned char raw[64 * 8];
	struct rd r;

	for (unsigned done = 0; done < n;) {
		unsigned k = n - done < 64 ? n - done : 64;
		uint64_t at = addr + (uint64_t)done * wsize;

		if (at < addr || !fetch(src, at, raw, (size_t)k * wsize))
			return false;
		r = (struct rd){ raw, (size_t)k * wsize, src->img->big_endian };
		for (unsigned i = 0; i < k; i++, done++) {
			rd_word(&r, wsize, &pcs[done]);
			*x = hp_mix(*x, pcs[done]);
		}
	}
	return true;
}

#define MAX_WORDS 16	/* the longest record read at once (a site's 10 words) */

/* n (<= MAX_WORDS) 64-bit words at addr; false when any byte is absent or addr + 8n wraps. */
static bool read_words(const struct decode_src *src, uint64_t addr, uint64_t *w, unsigned n)
{
	unsigned char raw[MAX_WORDS * 8];
	struct rd r = { raw, (size_t)n * 8, src->img->big_endian };

	if (n > MAX_WORDS || addr + (uint64_t)n * 8 < addr || !fetch(src, addr, raw, (size_t)n * 8))
		return false;
	for (unsigned i = 0; i < n; i++)
		rd_u64(&r, &w[i]);
	return true;
}

static enum decode_reject v1_block(const struct decode_src *src, uint64_t magic_addr,
				   struct decode_buf *buf, struct decoded *out)
{
	unsigned char raw[HP_HDR_SIZE];
	uint64_t user = magic_addr + 8, hdr_addr, pcs_addr, x;
	unsigned wsize = src->img->wsize;
	struct hp_hdr h;
	struct rd r = { raw, HP_HDR_SIZE, src->img->big_endian };

	if (magic_addr < HP_HDR_SIZE - 8 ||
	    !fetch(src, hdr_addr = magic_addr - (HP_HDR_SIZE - 8), raw, HP_HDR_SIZE))
		return REJ_TRUNCATED;
	rd_u64(&r, &h.check), rd_u64(&r, &h.size), rd_u64(&r, &h.birth);
	rd_u32(&r, &h.offset), rd_u32(&r, &h.tid), rd_u16(&r, &h.version);
	rd_u8(&r, &h.nframes), rd_u8(&r, &h.wsize), rd_u32(&r, &h.flags);
	if (h.version != HP_FORMAT_VERSION) {
		out->other_version = h.version;
		return REJ_VERSION;
	}
	/* the block must start at or above 0 and its user pointer end below the top of the
	 * address space (a magic in the last 8 bytes would put it at 2^64 or 2^32) */
	if (h.wsize != wsize || h.nframes > HP_MAX_FRAMES ||
	    h.offset < HP_HDR_SIZE + (uint32_t)h.nframes * h.wsize || h.offset % 8 ||
	    user < magic_addr || user < h.offset || (wsize == 4 && user > UINT32_MAX))
		return REJ_LAYOUT;
	if (h.flags & HP_FLAGS_INCOMPAT_MASK & ~HP_FLAGS_KNOWN)
		return REJ_FLAGS;
	pcs_addr = hdr_addr - (uint64_t)h.nframes * wsize;
	x = hp_check_head(user, &h);
	if (pcs_addr > hdr_addr || !read_pcs(src, pcs_addr, h.nframes, buf->pcs, &x))
		return REJ_TRUNCATED;
	if (hp_check_final(x) != h.check)
		return REJ_CHECK;
	out->kind = DEC_BLOCK;
	out->block = (struct hp_block){ .user = user, .size = h.size, .version = 1,
					.flags = h.flags, .tid = h.tid, .birth_ns = h.birth,
					.nframes = h.nframes, .pcs = buf->pcs };
	return DECODE_OK;
}

/*
 * Whether w is a v2 record's magic (record_kinds below). A record's check word follows
 * its magic and is any 64-bit value: one in 65,536 has the tags' top 16 bits, and a
 * Python process has tens of thousands of records, so most of its dumps held one that,
 * taken for a block's tag, failed its check "on a known site" (the site id read from
 * the magic's upper half). No header's info word is a record's magic: its site id would
 * have HP2_MAGIC16 for top bits and its size the magic's lower half.
 */
static const struct record_kind *record_of(uint64_t w);

/*
 * Whether a tag whose check failed still reads as a block header's, by the bits the
 * format fixes: known flags, BIG only with a shift of 1 or more, a shift of at most
 * HP2_MAX_SHIFT, and a real block start in the tag's own segment (a block is one
 * allocation: the mapping that holds its header holds its start). Damage leaves most
 * of a header as it was; a word of the program's with the tags' 16 bits by chance (a
 * dict entry's hash after a pointer, whose upper half reads as a site id) has the
 * other bits at random and fails one of these most of the time. The info word's size
 * is not asked: an overflow of the block below reaches it before the tag.
 */
static bool tag_whole(const struct decode_src *src, uint64_t tag_addr, unsigned flags,
		      unsigned shift)
{
	const struct seg *s = image_find(src->img, tag_addr);
	uint64_t back = (16ULL << shift) - 8;	/* from the tag to the real start */

	if ((flags & ~HP2_F_KNOWN) || ((flags & HP2_F_BIG) && shift < 1) || shift > HP2_MAX_SHIFT)
		return false;
	return s && tag_addr - s->vaddr >= back;
}

/*
 * A v2 block whose tag (value tag) is at tag_addr. The check comes before the layout:
 * a tag that fails it is most likely any word whose top 16 bits match (noise), and only
 * a header that passes it can tell us its fields are impossible.
 */
static enum decode_reject v2_block(const struct decode_src *src, uint64_t tag_addr,
				   uint64_t tag, struct decoded *out)
{
	uint64_t user = tag_addr + 8, info, big = 0;
	unsigned flags = (tag >> HP2_FLAGS_SHIFT) & HP2_FLAGS_MASK;
	unsigned shift = (tag >> HP2_OFFSET_SHIFT) & HP2_OFFSET_MASK;
	uint64_t size;

	out->tag_only = true;
	if (tag_addr < 16 || !read_words(src, tag_addr - 8, &info, 1))
		return REJ_TRUNCATED;
	out->tag_site = (uint32_t)(info >> 32);
	if ((flags & HP2_F_BIG) && !read_words(src, tag_addr - 16, &big, 1))
		return REJ_TRUNCATED;
	if (hp2_block_check(user, info, tag, big) != (tag & HP2_CHECK_MASK)) {
		out->record_word = record_of(info) != NULL;
		out->tag_whole = tag_whole(src, tag_addr, flags, shift);
		out->tag_time = (tag >> HP2_TIME_SHIFT) & HP2_TIME_MASK;
		out->tag_flags = flags;
		return REJ_CHECK;
	}
	out->tag_only = false;
	if (flags & ~HP2_F_KNOWN)
		return REJ_FLAGS;
	size = info & 0xFFFFFFFFu;
	if (flags & HP2_F_BIG) {
		if (size != HP2_SIZE_BIG || shift < 1)
			return REJ_LAYOUT;
		size = big;
	}
	if (shift > HP2_MAX_SHIFT || user < tag_addr || user < (16ULL << shift) ||
	    (src->img->wsize == 4 && user > UINT32_MAX))
		return REJ_LAYOUT;
	out->kind = DEC_BLOCK;
	out->block = (struct hp_block){ .user = user, .size = size, .version = 2,
					.flags = flags, .site = (uint32_t)(info >> 32),
					.age_ms = hp2_time_decode((tag >> HP2_TIME_SHIFT) & HP2_TIME_MASK),
					.shift = shift };
	return DECODE_OK;
}

/* check of a record at addr: mix(SEED2, addr), then the checked words, final */
static uint64_t rec_check(uint64_t addr, const uint64_t *w, unsigned n)
{
	uint64_t x = hp_mix(HP2_SEED, addr);

	for (unsigned i = 0; i < n; i++)
		x = hp_mix(x, w[i]);
	return hp_check_final(x);
}

static enum decode_reject stack_rec(const struct decode_src *src, uint64_t addr,
				    struct decode_buf *buf, struct decoded *out)
{
	uint64_t w[HP2_STACK_REF_WORDS] = { 0 }, x;
	unsigned nframes, wsize, flags, head = HP2_STACK_WORDS, own;

	if (!read_words(src, addr, w, HP2_STACK_WORDS))
		return REJ_TRUNCATED;
	nframes = (w[2] >> 32) & 0xFFFF;
	wsize = (unsigned)(w[2] >> 56);
	flags = (w[2] >> 48) & 0xFF;
	if (wsize != src->img->wsize || nframes > HP2_MAX_FRAMES)
		return REJ_LAYOUT;
	x = hp_mix(hp_mix(HP2_SEED, addr), w[2]);
	/* a part or a joined stack: w4, checked, before the words */
	if (flags & (HP2_STACK_PART | HP2_STACK_JOINED)) {
		if (!read_words(src, addr + HP2_STACK_WORDS * 8, &w[4], 1))
			return REJ_TRUNCATED;
		x = hp_mix(x, w[4]);
		head = HP2_STACK_REF_WORDS;
	}
	own = flags & HP2_STACK_JOINED ? 0 : nframes;
	if (!read_pcs(src, addr + head * 8, own, buf->pcs, &x))
		return REJ_TRUNCATED;
	if (hp_check_final(x) != w[1])
		return REJ_CHECK;
	/* a part holds words and names one outer part; a joined stack holds none */
	if ((flags & HP2_STACK_PART) &&
	    ((flags & HP2_STACK_JOINED) || !nframes || w[4] >> 32))
		return REJ_LAYOUT;
	out->kind = DEC_STACK;
	out->stack = (struct decoded_stack){ .addr = addr, .id = (uint32_t)w[2],
					    .nframes = own, .flags = flags, .pcs = buf->pcs,
					    .ref = w[4],
					    .want = flags & HP2_STACK_JOINED ? nframes : 0 };
	return DECODE_OK;
}

static enum decode_reject site_rec(const struct decode_src *src, uint64_t addr,
				   struct decode_buf *buf, struct decoded *out)
{
	uint64_t w[10] = { 0 };
	bool counts;

	(void)buf;
	/* w4 on are not checked: a record whose unchecked tail is cut off still counts,
	 * only without its counters */
	if (!(counts = read_words(src, addr, w, 10)) && !read_words(src, addr, w, 4))
		return REJ_TRUNCATED;
	if (rec_check(addr, w + 2, 2) != w[1])
		return REJ_CHECK;
	out->kind = DEC_SITE;
	out->site = (struct decoded_site){ .addr = addr, .id = (uint32_t)w[2],
					  .stack = (uint32_t)(w[2] >> 32), .tid = (uint32_t)w[3],
					  .entry = (w[3] >> 32) & 0xFFFF,
					  .flags = (unsigned)(w[3] >> 48), .have_counts = counts,
					  .counts = { w[5], w[6], w[7], w[8], w[9] } };
	return DECODE_OK;
}

/* n name bytes at addr into out (n + 1 bytes): cut at the first NUL, unprintable as '?' */
static bool read_name(const struct decode_src *src, uint64_t addr, char *out, size_t n)
{
	unsigned char raw[32];

	if (n > sizeof(raw) || !fetch(src, addr, raw, n))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!raw[i]) {
			out[i] = 0;
			return true;
		}
		out[i] = raw[i] < 0x20 || raw[i] >= 0x7F ? '?' : (char)raw[i];
	}
	out[n] = 0;
	return true;
}

static enum decode_reject thread_rec(const struct decode_src *src, uint64_t addr,
				     struct decode_buf *buf, struct decoded *out)
{
	uint64_t w[8];
	unsigned state;

	(void)buf;
	if (!read_words(src, addr, w, 8))
		return REJ_TRUNCATED;
	if (rec_check(addr, w + 2, 1) != w[1])
		return REJ_CHECK;
	state = (unsigned)(w[7] >> 32);
	if (w[2] >> 32 || state > HP2_THREAD_ENDED)
		return REJ_LAYOUT;
	out->kind = DEC_THREAD;
	/* w7 0: a record from before slots, w2 its tid, its thread taken as live */
	out->thread = (struct hp_thread_rec){ .addr = addr, .slot = (uint32_t)w[2],
					      .tid = state ? (uint32_t)w[7] : (uint32_t)w[2],
					      .state = state ? state : HP2_THREAD_LIVE,
					      .live = (int64_t)w[5] };
	read_name(src, addr + 24, out->thread.name, 16);
	if (state == HP2_THREAD_ENDED && out->thread.name[0])
		strcat(out->thread.name, " (ended)");
	return DECODE_OK;
}

static enum decode_reject region_rec(const struct decode_src *src, uint64_t addr,
				     struct decode_buf *buf, struct decoded *out)
{
	uint64_t w[7];

	(void)buf;
	if (!read_words(src, addr, w, 7))
		return REJ_TRUNCATED;
	if (rec_check(addr, w + 2, 5) != w[1])
		return REJ_CHECK;
	if (w[2] < 1 || w[2] > 0xFFFF)
		return REJ_LAYOUT;
	out->kind = DEC_REGION;
	out->region = (struct hp_region_rec){ .addr = addr, .id = (uint32_t)w[2] };
	read_name(src, addr + 24, out->region.name, 31);
	return DECODE_OK;
}

static enum decode_reject ring_rec(const struct decode_src *src, uint64_t addr,
				   struct decode_buf *buf, struct decoded *out)
{
	uint64_t w[HP2_RING_WORDS];
	uint32_t n;

	(void)buf;
	if (!read_words(src, addr, w, HP2_RING_WORDS))
		return REJ_TRUNCATED;
	if (rec_check(addr, w + 2, 1) != w[1])
		return REJ_CHECK;
	n = (uint32_t)(w[2] >> 32);
	if (n < 1 || n > HP2_RING_MAX)
		return REJ_LAYOUT;
	out->kind = DEC_RING;
	out->ring = (struct hp_ring_rec){ .addr = addr, .tid = (uint32_t)w[2], .n = n,
					  .written = w[3] };
	return DECODE_OK;
}

size_t decode_ring_events(const struct decode_src *src, const struct hp_ring_rec *ring,
			  struct hp_event *out, size_t max)
{
	uint64_t first, slots = ring->addr + HP2_RING_WORDS * 8;
	size_t k = 0;

	/* the newest n events are seq written-n+1 .. written; slot of seq is (seq-1) % n */
	first = ring->written > ring->n ? ring->written - ring->n + 1 : 1;
	if (ring->written - first + 1 > max)
		first = ring->written - max + 1;
	for (uint64_t seq = first; seq && seq <= ring->written && k < max; seq++) {
		uint64_t s[HP2_SLOT_WORDS], at = slots + ((seq - 1) % ring->n) * HP2_SLOT_WORDS * 8;

		if (at < slots || !read_words(src, at, s, HP2_SLOT_WORDS) || s[5] != seq)
			continue;
		out[k++] = (struct hp_event){ .entry = s[0] & 0xFF, .site = (uint32_t)(s[0] >> 32),
					      .arg = { s[1], s[2] }, .result = s[3],
					      .mono_ns = s[4], .seq = s[5] };
	}
	return k;
}

const char *decode_entry_name(unsigned entry, char *buf, size_t size)
{
	static const char *const names[HP2_ENTRY_COUNT] = {
		[HP2_ENTRY_NONE] = "none", [HP2_ENTRY_MALLOC] = "malloc",
		[HP2_ENTRY_CALLOC] = "calloc", [HP2_ENTRY_REALLOC] = "realloc",
		[HP2_ENTRY_REALLOCARRAY] = "reallocarray",
		[HP2_ENTRY_POSIX_MEMALIGN] = "posix_memalign",
		[HP2_ENTRY_ALIGNED_ALLOC] = "aligned_alloc", [HP2_ENTRY_MEMALIGN] = "memalign",
		[HP2_ENTRY_VALLOC] = "valloc", [HP2_ENTRY_PVALLOC] = "pvalloc",
		[HP2_ENTRY_FREE] = "free",
	};

	if (entry < HP2_ENTRY_COUNT)
		return names[entry];
	snprintf(buf, size, "entry %u", entry);
	return buf;
}

static enum decode_reject timeline_rec(const struct decode_src *src, uint64_t addr,
				       struct decode_buf *buf, struct decoded *out)
{
	uint64_t w[HP2_TIMELINE_WORDS];
	uint32_t n;

	(void)buf;
	if (!read_words(src, addr, w, HP2_TIMELINE_WORDS))
		return REJ_TRUNCATED;
	if (rec_check(addr, w + 2, 1) != w[1])
		return REJ_CHECK;
	n = (uint32_t)w[2];
	if (n < 1 || n > HP2_TIMELINE_MAX || (w[2] >> 32) != HP2_SAMPLE_WORDS)
		return REJ_LAYOUT;
	out->kind = DEC_TIMELINE;
	out->timeline = (struct hp_timeline_rec){ .addr = addr, .n = n, .held = w[3],
						  .interval_ms = w[4], .writes = w[5] };
	return DECODE_OK;
}

static enum decode_reject peak_rec(const struct decode_src *src, uint64_t addr,
				   struct decode_buf *buf, struct decoded *out)
{
	uint64_t w[11];
	uint32_t n;

	(void)buf;
	if (!read_words(src, addr, w, 11))
		return REJ_TRUNCATED;
	if (rec_check(addr, w + 2, 1) != w[1])
		return REJ_CHECK;
	n = (uint32_t)w[2];
	if (n < 1 || n > HP2_PEAK_MAX || (w[2] >> 32) > 1)
		return REJ_LAYOUT;
	out->kind = DEC_PEAK;
	out->peak = (struct hp_peak_rec){ .addr = addr, .n = n, .which = (unsigned)(w[2] >> 32),
					  .writes = w[3], .ms = w[4], .bytes = w[5],
					  .blocks = w[6], .used = w[7], .counter = w[8],
					  .step = w[9], .overflow = w[10] };
	return DECODE_OK;
}

/* A slab table: check first, then a layout whose last slot's block the address
 * space holds. */
static enum decode_reject slab_rec(const struct decode_src *src, uint64_t addr,
				   struct decode_buf *buf, struct decoded *out)
{
	uint64_t w[HP2_SLAB_WORDS], top = src->img->wsize == 4 ? UINT32_MAX : UINT64_MAX;
	uint32_t offset, stride, n;

	(void)buf;
	if (!read_words(src, addr, w, HP2_SLAB_WORDS))
		return REJ_TRUNCATED;
	if (rec_check(addr, w + 2, 2) != w[1])
		return REJ_CHECK;
	offset = w[3] & 0xFFFF;
	stride = (w[3] >> 16) & 0xFFFF;
	n = (uint32_t)(w[3] >> 32);
	if (!stride || n < 1 || n > HP2_SLAB_MAX || w[2] > top ||
	    top - w[2] < offset + (uint64_t)n * stride)
		return REJ_LAYOUT;
	out->kind = DEC_SLAB;
	out->slab = (struct hp_slab_rec){ .addr = addr, .start = w[2], .offset = offset,
					  .stride = stride, .n = n };
	return DECODE_OK;
}

size_t decode_slab_blocks(const struct decode_src *src, const struct hp_slab_rec *slab,
			  uint32_t *next, struct hp_block *out, size_t max, uint64_t *bad)
{
	uint64_t w[MAX_WORDS];
	size_t k = 0;

	while (*next < slab->n && k < max) {
		size_t m = slab->n - *next;
		uint64_t at = slab->addr + (HP2_SLAB_WORDS + (uint64_t)*next) * 8;

		if (m > MAX_WORDS)
			m = MAX_WORDS;
		if (m > max - k)
			m = max - k;	/* each slot gives a block at most */
		if (!read_words(src, at, w, (unsigned)m)) {
			if (m == 1 || !read_words(src, at, w, 1)) {
				*next = slab->n;	/* cut off here: the table ends */
				break;
			}
			m = 1;	/* the image ends among these: slot by slot */
		}
		for (size_t i = 0; i < m; i++) {
			uint64_t size = (w[i] >> 32) & 0xFFFF;
			unsigned flags = (unsigned)(w[i] >> HP2_SLAB_FLAGS_SHIFT);

			if (!w[i])
				continue;
			if (!size || size > slab->stride || (flags & ~HP2_F_SAMPLED)) {
				(*bad)++;
				continue;
			}
			out[k++] = (struct hp_block){
				.user = slab->start + slab->offset + (uint64_t)(*next + i) * slab->stride,
				.size = size, .version = 2, .flags = flags, .site = (uint32_t)w[i],
				.age_ms = hp2_time_decode((w[i] >> HP2_SLAB_TIME_SHIFT) & HP2_TIME_MASK) };
		}
		*next += (uint32_t)m;
	}
	return k;
}

static enum decode_reject maps_rec(const struct decode_src *src, uint64_t addr,
				   struct decode_buf *buf, struct decoded *out)
{
	uint64_t w[HP2_MAPS_WORDS];
	uint32_t n;

	(void)buf;
	if (!read_words(src, addr, w, HP2_MAPS_WORDS))
		return REJ_TRUNCATED;
	if (rec_check(addr, w + 2, 1) != w[1])
		return REJ_CHECK;
	n = (uint32_t)w[2];
	if (n < 1 || n > HP2_MAPS_MAX || (w[2] >> 32) != HP2_MAP_ENTRY_WORDS)
		return REJ_LAYOUT;
	out->kind = DEC_MAPS;
	out->maps = (struct hp_maps_rec){ .addr = addr, .n = n, .used = w[3], .writes = w[4],
					  .lost = w[5] };
	return DECODE_OK;
}

static enum decode_reject proc_rec(const struct decode_src *src, uint64_t addr,
				   struct decode_buf *buf, struct decoded *out)
{
	uint64_t w[8];
	unsigned version, wsize;

	(void)buf;
	if (!read_words(src, addr, w, 8))
		return REJ_TRUNCATED;
	if (rec_check(addr, w + 2, 6) != w[1])
		return REJ_CHECK;
	version = w[2] & 0xFFFF;
	wsize = (w[2] >> 16) & 0xFF;
	if (version != HP2_FORMAT_VERSION) {
		out->other_version = version;
		return REJ_VERSION;
	}
	if (wsize != src->img->wsize)
		return REJ_LAYOUT;
	out->kind = DEC_PROC;
	out->proc = (struct hp_proc_rec){ .addr = addr, .version = version, .wsize = wsize,
					  .flags = (w[2] >> 24) & 0xFF,
					  .pid = (uint32_t)(w[2] >> 32), .sample_period = w[3],
					  .start_mono_ns = w[4], .start_real_ns = w[5],
					  .frame_limit = w[6] & 0xFFFFFFFFu,
					  .p_flags = (unsigned)(w[6] >> 32) };
	return DECODE_OK;
}

/*
 * A module record: the check first (w2..w47), then what must hold of a real one: a
 * build-id of at most 24 bytes, a text range inside the target's address space that
 * is not empty, and a path that is not empty and ends in a NUL.
 */
static enum decode_reject module_rec(const struct decode_src *src, uint64_t addr,
				     struct decode_buf *buf, struct decoded *out)
{
	uint64_t w[HP2_MODULE_SIZE / 8];
	unsigned char raw[HP2_MODULE_SIZE];
	uint64_t top = src->img->wsize == 4 ? UINT32_MAX : UINT64_MAX;
	unsigned idlen;
	struct rd r = { raw, sizeof(raw), src->img->big_endian };

	if (addr + HP2_MODULE_SIZE < addr || !fetch(src, addr, raw, sizeof(raw)))
		return REJ_TRUNCATED;
	for (unsigned i = 0; i < HP2_MODULE_SIZE / 8; i++)
		rd_u64(&r, &w[i]);
	if (rec_check(addr, w + 2, HP2_MODULE_SIZE / 8 - 2) != w[1])
		return REJ_CHECK;
	idlen = (w[5] >> 8) & 0xFF;
	/* the build-id and path are bytes in memory order, whatever the byte order */
	if (idlen > 24 || w[3] >= w[4] || w[4] > top || w[2] > top ||
	    !memchr(raw + 9 * 8, '\0', HP2_MODULE_SIZE - 9 * 8) || !raw[9 * 8])
		return REJ_LAYOUT;
	memcpy(buf->path, raw + 9 * 8, sizeof(buf->path));
	out->kind = DEC_MODULE;
	out->module = (struct hp_module_rec){ .addr = addr, .bias = w[2], .text_start = w[3],
					      .text_end = w[4], .flags = w[5] & 0xFF,
					      .build_id_len = idlen, .path = buf->path };
	memcpy(out->module.build_id, raw + 6 * 8, idlen);
	return DECODE_OK;
}

/*
 * A Python name record: whole, it is a record the stacks' frames point at (its magic
 * shares the block tags' top 16 bits, so unread it would pass for a damaged tag).
 */
static enum decode_reject pycode_rec(const struct decode_src *src, uint64_t addr,
				     struct decode_buf *buf, struct decoded *out)
{
	struct py_mem m = python_mem_image(src->img);
	struct py_name name;

	(void)buf;
	if (!python_name_record(&m, addr, 0, &name))
		return REJ_CHECK;
	out->kind = DEC_PYCODE;
	return DECODE_OK;
}

/*
 * The v2 records, one row per magic: decode_at() dispatches on them, and a block tag
 * candidate whose info word is one of them is that record's check word (v2_block).
 */
static const struct record_kind {
	uint64_t magic;
	enum decode_reject (*decode)(const struct decode_src *src, uint64_t addr,
				     struct decode_buf *buf, struct decoded *out);
} record_kinds[] = {
	{ HP2_STACK_MAGIC, stack_rec },		{ HP2_SITE_MAGIC, site_rec },
	{ HP2_PROC_MAGIC, proc_rec },		{ HP2_THREAD_MAGIC, thread_rec },
	{ HP2_REGION_MAGIC, region_rec },	{ HP2_RING_MAGIC, ring_rec },
	{ HP2_MODULE_MAGIC, module_rec },	{ HP2_TIMELINE_MAGIC, timeline_rec },
	{ HP2_PEAK_MAGIC, peak_rec },		{ HP2_MAPS_MAGIC, maps_rec },
	{ HP2_PYCODE_MAGIC, pycode_rec },	{ HP2_SLAB_MAGIC, slab_rec },
};

static const struct record_kind *record_of(uint64_t w)
{
	if (w >> 48 != HP2_MAGIC16)
		return NULL;
	for (size_t i = 0; i < sizeof(record_kinds) / sizeof(record_kinds[0]); i++)
		if (w == record_kinds[i].magic)
			return &record_kinds[i];
	return NULL;
}

enum decode_reject decode_at(const struct decode_src *src, uint64_t addr, uint64_t word,
			     struct decode_buf *buf, struct decoded *out)
{
	const struct record_kind *k;
	enum decode_reject why;
	struct decoded alt;

	memset(out, 0, sizeof(*out));
	if (word == HP_MAGIC)
		return v1_block(src, addr, buf, out);
	if (!(k = record_of(word)))
		return v2_block(src, addr, word, out);
	if ((why = k->decode(src, addr, buf, out)) == DECODE_OK)
		return why;
	/* a block tag may equal a record magic by chance (2^-48 of them) */
	memset(&alt, 0, sizeof(alt));
	if (v2_block(src, addr, word, &alt) == DECODE_OK) {
		*out = alt;
		return DECODE_OK;
	}
	out->kind = DEC_NONE;
	return why;
}
