/*
 * The hot loop: find every word that may be a heapprof header or record (one masked
 * compare), have decode.c decode it, and hand the values to collect.c; then join. The
 * scan knows search, windows and threads; candidates that do not decode are counted.
 */
#ifndef HP_SCAN_H
#define HP_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "decode.h"
#include "firsts.h"
#include "stacks.h"

struct image;

/* One live block as found, for the leak classifier (leaks.c); 32 bytes. */
struct scan_block {
	uint64_t user, size;	/* size as the header says */
	uint32_t site;		/* v2: the header's site id (joins it without decoding
				 * it again); v1: 0, its stack is below it */
	uint32_t below;		/* header bytes below user: v2 16 << shift, v1 48 + pcs;
				 * 0: a slab table's block, with no header (and no chunk
				 * of malloc's of its own) */
	uint8_t version;	/* 1, 2, or SCAN_UNTAGGED */
	uint8_t state;		/* leaks.c's */
	uint8_t sampled;	/* v2: HP2_F_SAMPLED was set */
	uint8_t out;		/* left out of the report (--older-than, a leak class not
				 * shown, a suppressed leak): the graph's consumers skip it */
	uint16_t time;		/* v2: the header's time code (hp2_time_decode) */
	uint16_t chunk;		/* SCAN_CHUNK_KNOWN: the word below its header, which
				 * is glibc's chunk size field when the block is in a
				 * chunk of its own (scan_chunk_word); else 0 */
	uint64_t first;		/* tagged: the first word of its user data, in the
				 * target's word size and byte order, read while the
				 * scan had it (--by=type's vtable pointer); 0 when the
				 * block is shorter. Untagged: 0, not read */
};

/* A block with no heapprof header: an allocator's chunk in use, its memory and usable
 * size as the allocator gives them (untagged.c adds these to the list); no stack. */
#define SCAN_UNTAGGED 0

/*
 * The allocator's walk reads a size field per chunk; the scan, which has the bytes in
 * its window already, keeps the word at user - below - 8 of each 64-bit block in two
 * bytes (scan_block.chunk): as a difference from the chunk size glibc gives a request
 * of below + size bytes, in 16-byte units, and the word's three low bits.
 */
#define SCAN_CHUNK_KNOWN 0x8000u

/* The word the block's chunk memo stands for, if it has one. */
static inline bool scan_chunk_word(const struct scan_block *b, uint64_t *w)
{
	uint64_t req = b->below + b->size + 8 + 15;
	uint64_t fit = req < 32 ? 32 : req & ~(uint64_t)15;

	if (!(b->chunk & SCAN_CHUNK_KNOWN))
		return false;
	*w = (fit + ((uint64_t)(b->chunk >> 3 & 0xfff) << 4)) | (b->chunk & 7);
	return true;
}

struct scan_blocks {
	struct scan_block *v;
	size_t n, cap;
};

/*
 * Which pages of the image (1 << SCAN_PAGE_SHIFT bytes of a segment, from its start) hold
 * an aligned word pointing into one of the 1 GiB regions (addr >> SCAN_REGION_SHIFT)
 * the segments overlap: a page whose bit is clear holds no pointer into a block in
 * those regions, and the heap graph skips it unread. Made by scan_image_graph_with, in
 * the same pass over each window that finds the headers, for 8-byte words in the
 * host's byte order.
 */
#define SCAN_PAGE_SHIFT 12
#define SCAN_REGION_SHIFT 30
#define SCAN_MAX_REGIONS 65536
struct scan_pages {
	uint64_t *bits;		/* NULL: not made (any page may hold pointers) */
	size_t *first;		/* by segment: the bit of its first page */
	uint64_t *regions;	/* the regions, sorted */
	size_t nregions;
	uint64_t lo, hi;	/* [lo, hi): the regions' span, a first filter */
};

struct scan_tag;

struct scan_result {
	struct stacks stacks;	/* v1 and v2 blocks per stack, after the join */
	struct collect found;	/* the v2 records, sorted (stacks moved out) */
	struct join_info join;
	uint64_t candidates;	/* 8-aligned words whose top 16 bits are HP2_MAGIC16 */
	uint64_t blocks;	/* valid block headers, v1 and v2, as found */
	uint64_t v2_blocks;
	uint64_t bytes;		/* their sizes as found, saturated at UINT64_MAX */
	uint64_t records;	/* valid v2 records */
	uint64_t slabs;		/* valid slab tables (records too) */
	uint64_t slabs_used;	/* those naming a block: an emptied pool keeps its
				 * table until it takes another class */
	uint64_t slab_blocks;	/* blocks their slots named (v2 blocks too, in blocks) */
	uint64_t slab_bytes;	/* their sizes, saturated */
	uint64_t slab_slot_bytes; /* their slots' bytes (a stride each), saturated */
	uint64_t slots_bad;	/* slot words no block can have (decode_slab_blocks) */
	uint64_t rejected[REJ_NREASONS]; /* v1 headers, records and v2 headers whose
				 * check passed; v2 tags failing it are join.damaged
				 * or join.noise */
	uint64_t tags_cut;	/* v2 tags whose header is cut off: noise too */
	unsigned other_version;	/* last unknown version seen, for the message */
	bool keep_blocks;	/* fill list (scan_image_blocks_with) */
	bool count_firsts;	/* fill firsts (scan_image_firsts_with) */
	struct firsts firsts;	/* every valid block counted by its first word */
	struct scan_blocks list; /* every valid block header, by address (unless more
				 * than a few threads listed them) */
	struct scan_block **pieces; /* a scan thread's list as it grows (scan.c) */
	size_t npieces, pieces_cap, listed;
	struct scan_pages pages; /* scan_image_graph_with */
	/* while a thread scans: the chunk it scans, the end of the user bytes of the
	 * whole blocks found in it so far, and the failed tags beyond that end, which a
	 * block of an earlier chunk may still hold (scan.c) */
	size_t chunk;
	uint64_t cover;
	struct scan_tag *unsure;
	size_t nunsure, unsure_cap;
};

/* Scan every segment of img with nthreads threads (>= 1) into *out (initialized here). */
void scan_image(const struct image *img, unsigned nthreads, struct scan_result *out);
/* The same, joined as opts says (per thread, one region); scan_image() joins with none. */
void scan_image_with(const struct image *img, unsigned nthreads, const struct join_opts *opts,
		     struct scan_result *out);
/* The same, and list every block found in out->list (for leaks.c). */
void scan_image_blocks_with(const struct image *img, unsigned nthreads,
			    const struct join_opts *opts, struct scan_result *out);

/* The same, and no list: every block counted by its first word in out->firsts
 * (--by=type's table when no analysis needs the list). */
void scan_image_firsts_with(const struct image *img, unsigned nthreads,
			    const struct join_opts *opts, struct scan_result *out);

/* The same as scan_image_blocks_with, and the pages that may hold pointers (for graph.c). */
void scan_image_graph_with(const struct image *img, unsigned nthreads,
			   const struct join_opts *opts, struct scan_result *out);

/* Whether the page of segment si holding addr may hold a word in [pages.lo, pages.hi). */
static inline bool scan_page_maybe(const struct scan_pages *pg, size_t si, uint64_t seg_vaddr,
				   uint64_t addr)
{
	size_t bit;

	if (!pg->bits)
		return true;
	bit = pg->first[si] + (size_t)((addr - seg_vaddr) >> SCAN_PAGE_SHIFT);
	return pg->bits[bit / 64] >> (bit % 64) & 1;
}

/*
 * A listed block as decode.c gives it: v2 from what the list kept (no read), v1 decoded
 * again (its stack lies below it, in buf), an untagged one as version SCAN_UNTAGGED with
 * no frames. False if it cannot be read any more.
 */
bool scan_block_decoded(const struct image *img, const struct scan_block *b,
			struct decode_buf *buf, struct decoded *d);

/*
 * A listed block's allocation stack, *n frames: a v2 block's through its site in the
 * records scan joined (scan->found), a v1 block's decoded again (the frames in buf).
 * NULL and 0 when it has none (untagged, no stack taken) or none can be read (its
 * site's records missing or ambiguous, its header gone).
 */
const uint64_t *scan_block_stack(const struct image *img, const struct scan_result *scan,
				 const struct scan_block *b, struct decode_buf *buf, unsigned *n);

/*
 * Make scan->stacks again from the listed blocks not marked out (scan_block.out), joined
 * with the scan's records as the first join was: what --older-than and --focus=type:
 * leave of the report. The unknown-stack counts follow; the rest of scan->join (the
 * records, the damaged tags) is the whole dump's and stays.
 */
void scan_restack(const struct image *img, struct scan_result *scan);

void scan_result_free(struct scan_result *r);

#endif
